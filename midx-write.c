/*
 * midx-write.c: writing the multi-pack-index, lone or as a layer of an
 * incremental chain; the rules are in midx-write.h and the layout in
 * midx.c.
 *
 * Objects are gathered one fanout bucket at a time: each pack's .idx
 * (and the existing MIDX) is already sorted, so a bucket is a set of
 * sorted runs, one per source, merged by (name, rank) and deduplicated.
 * Memory is the output tables plus one bucket.
 */
#include "midx-write.h"
#include "chunk-format.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "midx.h"
#include "pack-revindex.h"
#include "packfile.h"
#include "progress.h"
#include "strbuf.h"
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>

/*
 * Packs are kept in git's "add order": the existing MIDX's packs first,
 * then new packs in directory order. Pack ids in the file go by name.
 */
struct midx_pack {
	char *idx_name;          /* "pack-<hash>.idx" */
	struct packed_git *p;
	uint64_t mtime;          /* of the .pack, in seconds */
	uint32_t orig_id;        /* git's tie-breaker: id in the old MIDX, else add order */
	bool in_old;             /* listed by the existing MIDX whose objects we take */
	uint32_t rank_old;       /* duplicate preference of copies taken from the old MIDX */
	uint32_t rank_idx;       /* ... and of copies read from its .idx */
	uint32_t final_id;       /* pack id in the file (name order) */
	uint32_t bitmap_pos;     /* BTMP: first pseudo position (over the chain) */
	uint32_t bitmap_nr;
};

struct bucket_entry {
	uint64_t key;            /* the name's first 8 bytes, big-endian */
	const unsigned char *oid;
	uint32_t pack_id;        /* index in packs */
	uint32_t rank;
	uint64_t offset;
};

struct midx_writer {
	int algo;
	size_t rawsz;
	struct midx_pack *packs;  /* in add order */
	size_t nr_packs, alloc_packs;
	struct midx *existing;   /* the repository's MIDX or chain, when valid */
	struct midx *old;        /* existing, when its objects are reused */
	struct midx *base;       /* a layer's base (within existing), or NULL */
	struct midx *from, *to;  /* compact: the range of layers (within existing) */
	int64_t *old_to_pack;    /* old MIDX pack id -> index in packs, or -1 */
	int64_t preferred;       /* index in packs, or -1 */
	bool preferred_unknown;
	/* the selected objects, by name */
	uint32_t nr;
	unsigned char *oids;
	uint32_t *pack_ids;      /* final ids */
	uint64_t *offsets;
	bool large_needed;       /* some offset needs 64 bits */
	uint32_t nr_large;
	uint32_t nr_base;        /* objects of the layers below (RIDX, BTMP) */
	uint32_t *pseudo_order;  /* local midx positions in pseudo-pack order */
	struct midx_pack **by_final; /* packs by final id */
	struct strbuf pnam;
};

/* What midx_write_install() does; see midx-write.h. */
struct midx_install {
	char *pack_dir;
	int algo;
	struct hashfile *file;    /* finalized, not in place */
	bool layer;
	struct hashfile *chain_lock; /* the chain file, when written */
	unsigned char *chain;     /* checksums of the base layers, base first */
	uint32_t nr_chain;
	unsigned char *above;     /* compact: the layers kept above the new one */
	uint32_t nr_above;
	bool link_lone;           /* move the lone MIDX into the chain as its base */
	unsigned char lone_checksum[GP_MAX_RAWSZ];
	unsigned char checksum[GP_MAX_RAWSZ];
	struct midx *base;        /* kept open for midx_open_layer() */
};

static bool name_listed(const char *name, const char *const *list, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static bool pack_dropped(const struct midx_write_opts *opts, const char *idx_name)
{
	return name_listed(idx_name, opts->drop_packs, opts->nr_drop);
}

static bool have_pack(const struct midx_writer *w, const char *idx_name)
{
	for (size_t i = 0; i < w->nr_packs; i++)
		if (!strcmp(w->packs[i].idx_name, idx_name))
			return true;
	return false;
}

/* The .pack of an .idx name; false when it does not exist. */
static bool stat_pack(const char *pack_dir, const char *idx_name, struct stat *st)
{
	char *pack = xstrfmt("%s/%.*s.pack", pack_dir, (int)(strlen(idx_name) - 4), idx_name);
	int missing = stat(pack, st);
	free(pack);
	return !missing;
}

static struct midx_pack *add_pack(struct midx_writer *w, const char *idx_name,
				  uint64_t mtime)
{
	struct midx_pack *mp;
	ALLOC_GROW(w->packs, w->nr_packs + 1, w->alloc_packs);
	mp = &w->packs[w->nr_packs];
	memset(mp, 0, sizeof(*mp));
	mp->idx_name = xstrdup(idx_name);
	mp->mtime = mtime;
	mp->orig_id = (uint32_t)w->nr_packs;
	w->nr_packs++;
	return mp;
}

static int cmp_names_by_index(const void *a, const void *b, void *data)
{
	const struct midx_writer *w = data;
	return strcmp(w->packs[*(const uint32_t *)a].idx_name,
		      w->packs[*(const uint32_t *)b].idx_name);
}

/*
 * The packs, in git's add order. With an existing MIDX whose objects are
 * reused (not for a list of packs, nor a layer), its packs come first,
 * a chain's top layer first; then every other .idx in the directory.
 */
/*
 * compact: the packs of layers from..to, base first; in each layer its
 * preferred pack first when the order is kept for a bitmap (bitmap_order),
 * then the others by id. Pack ids in the file are this order (version 2).
 */
static int collect_compact_packs(struct midx_writer *w, const char *pack_dir,
				 bool bitmap_order, struct gp_error *err)
{
	w->old_to_pack = xmalloc(sizeof(int64_t) * (midx_nr_packs(w->existing) + 1));
	for (uint32_t id = 0; id < midx_nr_packs(w->existing); id++)
		w->old_to_pack[id] = -1;
	for (uint32_t l = midx_nr_layers(w->from) - 1; l < midx_nr_layers(w->to); l++) {
		struct midx *layer = midx_layer(w->to, l);
		uint32_t first = midx_nr_packs_in_base(layer), preferred = first;
		struct gp_error ignored = GP_ERROR_INIT;
		if (bitmap_order && midx_preferred_pack(layer, &preferred, &ignored)) {
			gp_error_clear(&ignored);
			return gp_error_set(err, GP_EINVAL, "could not determine preferred pack"
					    " (%s has no reverse index)", midx_path(layer));
		}
		for (uint32_t k = 0; k <= midx_nr_packs(layer) - first; k++) {
			/* k = 0: the preferred pack; then every other, by id */
			uint32_t id = k ? first + k - 1 : preferred;
			const char *name;
			struct midx_pack *mp;
			struct stat st;
			if (k && id == preferred)
				continue;
			if (id >= midx_nr_packs(layer))
				break;
			name = midx_pack_name(layer, id);
			if (!stat_pack(pack_dir, name, &st))
				return gp_error_set(err, GP_EIO, "could not load pack %.*s.pack (%s lists it)",
						    (int)(strlen(name) - 4), name, midx_path(layer));
			mp = add_pack(w, name, (uint64_t)st.st_mtime);
			mp->orig_id = id;
			mp->in_old = true;
			w->old_to_pack[id] = (int64_t)w->nr_packs - 1;
		}
	}
	w->by_final = xmalloc(sizeof(*w->by_final) * (w->nr_packs + 1));
	for (uint32_t i = 0; i < w->nr_packs; i++) {
		char *idx = xstrfmt("%s/%s", pack_dir, w->packs[i].idx_name);
		int ret = pack_open_idx(&w->packs[i].p, idx, w->algo, err);
		free(idx);
		if (ret)
			return ret;
		w->packs[i].final_id = i;
		w->by_final[i] = &w->packs[i];
	}
	return 0;
}

static int collect_packs(struct midx_writer *w, const char *pack_dir,
			 const struct midx_write_opts *opts, struct gp_error *err)
{
	DIR *d;
	struct dirent *de;
	uint32_t *by_name;

	if (w->old) {
		uint32_t nr_layers = midx_nr_layers(w->old);
		w->old_to_pack = xmalloc(sizeof(int64_t) * (midx_nr_packs(w->old) + 1));
		for (uint32_t l = nr_layers; l-- > 0;) {
			struct midx *layer = midx_layer(w->old, l);
			uint32_t first = midx_nr_packs_in_base(layer);
			for (uint32_t id = first; id < midx_nr_packs(layer); id++) {
				const char *name = midx_pack_name(w->old, id);
				struct midx_pack *mp;
				struct stat st;
				w->old_to_pack[id] = -1;
				if (pack_dropped(opts, name))
					continue;
				if (!stat_pack(pack_dir, name, &st))
					return gp_error_set(err, GP_EIO, "could not load pack %.*s.pack"
							    " (%s lists it)", (int)(strlen(name) - 4),
							    name, midx_path(layer));
				mp = add_pack(w, name, (uint64_t)st.st_mtime);
				mp->orig_id = id;
				mp->in_old = true;
				w->old_to_pack[id] = (int64_t)w->nr_packs - 1;
			}
		}
	}
	d = opendir(pack_dir);
	if (!d)
		return gp_error_errno(err, "cannot open pack directory '%s'", pack_dir);
	while ((de = readdir(d))) {
		struct stat st;
		uint32_t id;
		if (!ends_with(de->d_name, ".idx") || strlen(de->d_name) <= 4)
			continue;
		if (have_pack(w, de->d_name) || pack_dropped(opts, de->d_name))
			continue;
		/*
		 * A layer takes only packs its base does not list; without a
		 * list of packs, only those no layer (nor a lone MIDX) lists
		 * yet. (With one, as repack gives it, packs of the layers
		 * above the base are taken again: repack merges them.)
		 */
		if (opts->incremental && w->base && midx_find_pack(w->base, de->d_name, &id))
			continue;
		if (opts->incremental && !opts->only_given && w->existing &&
		    midx_find_pack(w->existing, de->d_name, &id))
			continue;
		if (opts->only_given && !name_listed(de->d_name, opts->only_packs, opts->nr_only))
			continue;
		if (!stat_pack(pack_dir, de->d_name, &st))
			continue;
		add_pack(w, de->d_name, (uint64_t)st.st_mtime);
	}
	closedir(d);

	by_name = xmalloc(sizeof(*by_name) * (w->nr_packs + 1));
	for (uint32_t i = 0; i < w->nr_packs; i++)
		by_name[i] = i;
	qsort_r(by_name, w->nr_packs, sizeof(*by_name), cmp_names_by_index, w);
	w->by_final = xmalloc(sizeof(*w->by_final) * (w->nr_packs + 1));
	for (uint32_t id = 0; id < w->nr_packs; id++) {
		w->packs[by_name[id]].final_id = id;
		w->by_final[id] = &w->packs[by_name[id]];
	}
	free(by_name);

	for (size_t i = 0; i < w->nr_packs; i++) {
		char *idx = xstrfmt("%s/%s", pack_dir, w->packs[i].idx_name);
		int ret = pack_open_idx(&w->packs[i].p, idx, w->algo, err);
		free(idx);
		if (ret)
			return ret;
	}
	return 0;
}

static int choose_preferred(struct midx_writer *w, const struct midx_write_opts *opts,
			    struct gp_error *err)
{
	w->preferred = -1;
	if (opts->preferred_pack) {
		size_t len = strlen(opts->preferred_pack);
		if (ends_with(opts->preferred_pack, ".pack"))
			len -= 5;
		else if (ends_with(opts->preferred_pack, ".idx"))
			len -= 4;
		for (size_t i = 0; i < w->nr_packs && w->preferred < 0; i++)
			if (!strncmp(w->packs[i].idx_name, opts->preferred_pack, len) &&
			    !strcmp(w->packs[i].idx_name + len, ".idx"))
				w->preferred = (int64_t)i;
		/* As git 2.55: an unknown name is a warning, and no pack is preferred. */
		if (w->preferred < 0)
			w->preferred_unknown = true;
	} else if (opts->write_ridx && w->nr_packs) {
		size_t oldest = 0;
		for (size_t i = 1; i < w->nr_packs; i++)
			if (!w->packs[oldest].p->nr_objects ||
			    w->packs[i].mtime < w->packs[oldest].mtime)
				oldest = i;
		if (w->packs[oldest].p->nr_objects)
			w->preferred = (int64_t)oldest;
	}
	if (w->preferred >= 0 && !w->packs[w->preferred].p->nr_objects)
		return gp_error_set(err, GP_EINVAL, "cannot select preferred pack %s with no objects",
				    w->packs[w->preferred].idx_name);
	return 0;
}

/*
 * Duplicate preference, git's: the preferred pack's copy, then the copy
 * in the newest pack (a copy taken from the old MIDX counts as mtime
 * 0), then the lowest original id. Each pack has two sources (old MIDX
 * copies, .idx copies), ranked together.
 */
struct rank_key {
	bool preferred;
	uint64_t mtime;
	uint32_t orig_id;
	uint32_t *rank;
};

static int cmp_rank_key(const void *a, const void *b)
{
	const struct rank_key *ka = a, *kb = b;
	if (ka->preferred != kb->preferred)
		return ka->preferred ? -1 : 1;
	if (ka->mtime != kb->mtime)
		return ka->mtime > kb->mtime ? -1 : 1;
	if (ka->orig_id != kb->orig_id)
		return ka->orig_id < kb->orig_id ? -1 : 1;
	/* Same pack: its .idx copy (mtime > 0) sorted above already. */
	return 0;
}

static void rank_packs(struct midx_writer *w)
{
	struct rank_key *keys = xmalloc(sizeof(*keys) * (2 * w->nr_packs + 1));
	size_t nr = 0;
	for (size_t i = 0; i < w->nr_packs; i++) {
		struct midx_pack *mp = &w->packs[i];
		keys[nr++] = (struct rank_key){ false, 0, mp->orig_id, &mp->rank_old };
		keys[nr++] = (struct rank_key){ (int64_t)i == w->preferred, mp->mtime, mp->orig_id,
						&mp->rank_idx };
	}
	qsort(keys, nr, sizeof(*keys), cmp_rank_key);
	for (size_t r = 0; r < nr; r++)
		*keys[r].rank = (uint32_t)r;
	free(keys);
}
static inline int cmp_entry(const struct bucket_entry *a, const struct bucket_entry *b,
			    size_t rawsz)
{
	int cmp;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	cmp = memcmp(a->oid + 8, b->oid + 8, rawsz - 8);
	if (cmp)
		return cmp;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/*
 * Each pack contributes an already sorted run to a bucket: merge runs
 * pairwise (bottom-up) instead of sorting from scratch. O(n log k) for
 * k packs, on integer keys with sequential access.
 */
static struct bucket_entry *merge_runs(struct bucket_entry *a, struct bucket_entry *tmp,
				       size_t *run_start, size_t nr_runs, size_t rawsz)
{
	while (nr_runs > 1) {
		size_t out = 0, r;
		for (r = 0; r + 1 < nr_runs; r += 2) {
			size_t i = run_start[r], mid = run_start[r + 1], j = mid;
			size_t end = run_start[r + 2];
			run_start[r / 2] = out;
			while (i < mid && j < end)
				tmp[out++] = cmp_entry(&a[j], &a[i], rawsz) < 0 ? a[j++] : a[i++];
			while (i < mid)
				tmp[out++] = a[i++];
			while (j < end)
				tmp[out++] = a[j++];
		}
		if (r < nr_runs) {
			size_t i = run_start[r], end = run_start[r + 1];
			run_start[r / 2] = out;
			while (i < end)
				tmp[out++] = a[i++];
			r += 2;
		}
		nr_runs = (nr_runs + 1) / 2;
		run_start[nr_runs] = out;
		struct bucket_entry *swap = a;
		a = tmp;
		tmp = swap;
	}
	return a;
}

/* Append bucket b of pack i's .idx to the bucket array as one run. */
static void add_idx_run(struct midx_writer *w, size_t i, unsigned b,
			struct bucket_entry **bucket, struct bucket_entry **tmp,
			size_t *nr, size_t *alloc, size_t *run_start, size_t *nr_runs)
{
	const struct packed_git *p = w->packs[i].p;
	uint32_t lo = b ? get_be32(p->fanout + 4 * (b - 1)) : 0;
	uint32_t hi = get_be32(p->fanout + 4 * b);
	if (lo == hi)
		return;
	if (*nr + (hi - lo) > *alloc) {
		*alloc = (*nr + (hi - lo)) * 2;
		*bucket = xrealloc(*bucket, *alloc * sizeof(**bucket));
		*tmp = xrealloc(*tmp, *alloc * sizeof(**tmp));
	}
	run_start[(*nr_runs)++] = *nr;
	for (uint32_t idx_pos = lo; idx_pos < hi; idx_pos++) {
		struct bucket_entry *e = &(*bucket)[(*nr)++];
		e->oid = pack_nth_oid_raw(p, idx_pos);
		e->key = get_be64(e->oid);
		e->pack_id = (uint32_t)i;
		e->rank = w->packs[i].rank_idx;
		e->offset = pack_nth_offset(p, idx_pos);
	}
}

/* Append bucket b of one layer of the old MIDX as one run. */
static void add_old_run(struct midx_writer *w, struct midx *layer, unsigned b,
			struct bucket_entry **bucket, struct bucket_entry **tmp,
			size_t *nr, size_t *alloc, size_t *run_start, size_t *nr_runs)
{
	uint32_t base = midx_nr_objects_in_base(layer);
	uint32_t lo = base + (b ? midx_fanout(layer, b - 1) : 0);
	uint32_t hi = base + midx_fanout(layer, b);
	size_t start = *nr;
	if (lo == hi)
		return;
	if (*nr + (hi - lo) > *alloc) {
		*alloc = (*nr + (hi - lo)) * 2;
		*bucket = xrealloc(*bucket, *alloc * sizeof(**bucket));
		*tmp = xrealloc(*tmp, *alloc * sizeof(**tmp));
	}
	for (uint32_t pos = lo; pos < hi; pos++) {
		int64_t i = w->old_to_pack[midx_nth_pack(layer, pos)];
		struct bucket_entry *e;
		/* Dropped packs' copies go; the preferred pack's come from its .idx. */
		if (i < 0 || i == w->preferred)
			continue;
		e = &(*bucket)[(*nr)++];
		e->oid = midx_nth_oid_raw(layer, pos);
		e->key = get_be64(e->oid);
		e->pack_id = (uint32_t)i;
		e->rank = w->packs[i].rank_old;
		e->offset = midx_nth_offset(layer, pos);
	}
	if (*nr > start)
		run_start[(*nr_runs)++] = start;
}

/*
 * One thread's share of the buckets, [first, last): its selected objects
 * go to the output arrays from index out_start on.
 */
struct gather_job {
	struct midx_writer *w;
	struct progress *progress;
	unsigned first, last;
	uint32_t out_start;
	uint32_t nr_out;          /* objects this job selected */
	bool large_needed;
};

static void *gather_buckets(void *arg)
{
	struct gather_job *job = arg;
	struct midx_writer *w = job->w;
	struct bucket_entry *bucket = NULL, *tmp = NULL;
	size_t bucket_alloc = 0;
	uint32_t nr_layers = w->old ? midx_nr_layers(w->old) : 0;
	uint32_t first_layer = w->from ? midx_nr_layers(w->from) - 1 : 0;
	size_t *run_start = xmalloc(sizeof(*run_start) * (w->nr_packs + nr_layers + 3));
	uint32_t out = job->out_start;

	for (unsigned b = job->first; b < job->last; b++) {
		size_t nr = 0, nr_runs = 0;
		struct bucket_entry *sorted;
		for (uint32_t l = first_layer; l < nr_layers; l++)
			add_old_run(w, midx_layer(w->old, l), b, &bucket, &tmp, &nr, &bucket_alloc,
				    run_start, &nr_runs);
		for (size_t i = 0; i < w->nr_packs; i++)
			if (!w->packs[i].in_old || (int64_t)i == w->preferred)
				add_idx_run(w, i, b, &bucket, &tmp, &nr, &bucket_alloc, run_start, &nr_runs);
		run_start[nr_runs] = nr;
		sorted = nr_runs > 1 ? merge_runs(bucket, tmp, run_start, nr_runs, w->rawsz) : bucket;
		for (size_t i = 0; i < nr; i++) {
			struct object_id oid;
			uint32_t ignored;
			if (i && sorted[i].key == sorted[i - 1].key &&
			    !memcmp(sorted[i].oid, sorted[i - 1].oid, w->rawsz))
				continue;
			/* A layer leaves out what its base has. */
			if (w->base) {
				oid_from_raw(&oid, sorted[i].oid, w->algo);
				if (midx_find_oid(w->base, &oid, &ignored))
					continue;
			}
			memcpy(w->oids + (size_t)out * w->rawsz, sorted[i].oid, w->rawsz);
			w->pack_ids[out] = w->packs[sorted[i].pack_id].final_id;
			w->offsets[out] = sorted[i].offset;
			if (sorted[i].offset > 0xffffffffu)
				job->large_needed = true;
			out++;
		}
		progress_add(job->progress, 1);
	}
	job->nr_out = out - job->out_start;
	free(run_start);
	free(tmp);
	free(bucket);
	return NULL;
}

/*
 * The buckets split in two halves gathered by two threads: the second
 * writes its objects after room for every object the sources hold in
 * the first half (more than the first can select), and is moved down
 * after.
 */
static int gather_objects(struct midx_writer *w, struct progress *progress,
			  struct gp_error *err)
{
	struct gather_job jobs[2];
	pthread_t tid;
	uint64_t total = 0, first_half = 0;
	bool threaded;

	rank_packs(w);
	for (uint32_t i = 0; i < w->nr_packs; i++) {
		total += w->packs[i].p->nr_objects;
		first_half += get_be32(w->packs[i].p->fanout + 4 * 127);
	}
	if (w->old)
		for (uint32_t l = w->from ? midx_nr_layers(w->from) - 1 : 0;
		     l < midx_nr_layers(w->old); l++) {
			struct midx *layer = midx_layer(w->old, l);
			total += midx_fanout(layer, 255);
			first_half += midx_fanout(layer, 127);
		}
	if (total > UINT32_MAX)
		return gp_error_set(err, GP_EINVAL, "too many objects for a multi-pack-index");

	w->oids = xmalloc(w->rawsz * (size_t)(total ? total : 1));
	w->pack_ids = xmalloc(sizeof(uint32_t) * (size_t)(total ? total : 1));
	w->offsets = xmalloc(sizeof(uint64_t) * (size_t)(total ? total : 1));

	memset(jobs, 0, sizeof(jobs));
	jobs[0].w = jobs[1].w = w;
	jobs[0].progress = jobs[1].progress = progress;
	/* Small inputs are not worth a thread. */
	threaded = total >= 65536 && sysconf(_SC_NPROCESSORS_ONLN) > 1;
	jobs[0].first = 0;
	jobs[0].last = threaded ? 128 : 256;
	jobs[1].first = 128;
	jobs[1].last = 256;
	jobs[1].out_start = (uint32_t)first_half;
	if (threaded && pthread_create(&tid, NULL, gather_buckets, &jobs[1]))
		threaded = false, jobs[0].last = 256;
	gather_buckets(&jobs[0]);
	w->nr = jobs[0].nr_out;
	w->large_needed = jobs[0].large_needed;
	if (threaded) {
		pthread_join(tid, NULL);
		memmove(w->oids + (size_t)w->nr * w->rawsz,
			w->oids + (size_t)jobs[1].out_start * w->rawsz,
			(size_t)jobs[1].nr_out * w->rawsz);
		memmove(w->pack_ids + w->nr, w->pack_ids + jobs[1].out_start,
			(size_t)jobs[1].nr_out * sizeof(*w->pack_ids));
		memmove(w->offsets + w->nr, w->offsets + jobs[1].out_start,
			(size_t)jobs[1].nr_out * sizeof(*w->offsets));
		w->nr += jobs[1].nr_out;
		w->large_needed |= jobs[1].large_needed;
	}
	if (w->large_needed)
		for (uint32_t pos = 0; pos < w->nr; pos++)
			if (w->offsets[pos] > 0x7fffffffu)
				w->nr_large++;
	return 0;
}

/* RIDX order, and each pack's BTMP range. */
static void compute_pseudo_order(struct midx_writer *w)
{
	uint64_t *keys = xmalloc(sizeof(*keys) * (w->nr ? w->nr : 1));
	int64_t preferred = w->preferred >= 0 ? (int64_t)w->packs[w->preferred].final_id : -1;
	for (uint32_t pos = 0; pos < w->nr; pos++) {
		uint32_t id = w->pack_ids[pos];
		uint64_t pack_key = (int64_t)id == preferred ? 0 : (uint64_t)id + 1;
		keys[pos] = pack_key << 40 | (w->offsets[pos] & ((1ull << 40) - 1));
	}
	w->pseudo_order = sort_positions_by_u64(keys, w->nr);
	free(keys);
	for (uint32_t pseudo = w->nr; pseudo-- > 0;) {
		struct midx_pack *mp = w->by_final[w->pack_ids[w->pseudo_order[pseudo]]];
		mp->bitmap_pos = w->nr_base + pseudo;
		mp->bitmap_nr++;
	}
}
/* ---- chunk writers ------------------------------------------------------ */

static void write_pnam(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	hashfile_write(f, w->pnam.buf, w->pnam.len);
}

static void write_btmp(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	for (size_t id = 0; id < w->nr_packs; id++) {
		hashfile_write_be32(f, w->by_final[id]->bitmap_nr ? w->by_final[id]->bitmap_pos : 0);
		hashfile_write_be32(f, w->by_final[id]->bitmap_nr);
	}
}

static void write_oidf(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	uint32_t count = 0;
	uint32_t pos = 0;
	for (unsigned b = 0; b < 256; b++) {
		while (pos < w->nr && w->oids[(size_t)pos * w->rawsz] == b)
			pos++, count++;
		hashfile_write_be32(f, count);
	}
}

static void write_oidl(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	hashfile_write(f, w->oids, (size_t)w->nr * w->rawsz);
}

static void write_ooff(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	unsigned char *buf = xmalloc(8 * (size_t)(w->nr ? w->nr : 1));
	uint32_t large = 0;
	for (uint32_t pos = 0; pos < w->nr; pos++) {
		uint64_t ofs = w->offsets[pos];
		put_be32(buf + 8 * (size_t)pos, w->pack_ids[pos]);
		if (w->large_needed && ofs > 0x7fffffffu)
			put_be32(buf + 8 * (size_t)pos + 4, MIDX_LARGE_OFFSET_FLAG | large++);
		else
			put_be32(buf + 8 * (size_t)pos + 4, (uint32_t)ofs);
	}
	hashfile_write(f, buf, 8 * (size_t)w->nr);
	free(buf);
}

static void write_loff(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	for (uint32_t pos = 0; pos < w->nr; pos++)
		if (w->offsets[pos] > 0x7fffffffu)
			hashfile_write_be64(f, w->offsets[pos]);
}

/* Positions over the chain, as git writes them in a layer. */
static void write_ridx_chunk(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	unsigned char *buf = xmalloc(4 * (size_t)(w->nr ? w->nr : 1));
	for (uint32_t pseudo = 0; pseudo < w->nr; pseudo++)
		put_be32(buf + 4 * (size_t)pseudo, w->nr_base + w->pseudo_order[pseudo]);
	hashfile_write(f, buf, 4 * (size_t)w->nr);
	free(buf);
}

/* ---- files around the MIDX ------------------------------------------------ */

static bool hex_listed(const char *hex, const unsigned char *hashes, uint32_t nr, size_t rawsz)
{
	char have[GP_MAX_HEXSZ + 1];
	for (uint32_t i = 0; i < nr; i++)
		if (!strcmp(hex, hash_to_hex_r(have, hashes + (size_t)i * rawsz, rawsz)))
			return true;
	return false;
}

/*
 * Remove dir/<prefix><hex><ext> for each ext in exts whose hex is not
 * one of keep (NULL: remove all).
 */
static void remove_midx_files(const char *dir, const char *const *exts, size_t nr_exts,
			      const unsigned char *keep, uint32_t nr_keep, size_t rawsz)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *rest;
		char hex[GP_MAX_HEXSZ + 1];
		size_t hexlen;
		if (!skip_prefix(de->d_name, "multi-pack-index-", &rest))
			continue;
		hexlen = strcspn(rest, ".");
		for (size_t i = 0; i < nr_exts; i++) {
			char *path;
			if (strcmp(rest + hexlen, exts[i]))
				continue;
			if (hexlen < sizeof(hex)) {
				memcpy(hex, rest, hexlen);
				hex[hexlen] = '\0';
				if (keep && hex_listed(hex, keep, nr_keep, rawsz))
					break;
			}
			path = xstrfmt("%s/%s", dir, de->d_name);
			unlink(path);
			free(path);
			break;
		}
	}
	closedir(d);
}

static const char *const lone_exts[] = { ".bitmap", ".rev" };
static const char *const layer_exts[] = { ".midx", ".bitmap", ".rev" };

/*
 * The chain directory, created if need be. A new one is made durable in
 * the pack directory before anything goes into it: the chain file and
 * layers are synced with their own directory only, and a chain whose
 * directory a crash forgets would be lost with the lone MIDX that
 * clear_after_chain() removes once the chain names it.
 */
static int make_chain_dir(const char *dir, struct gp_error *err)
{
	if (mkdir(dir, 0777) < 0) {
		if (errno == EEXIST)
			return 0;
		return gp_error_errno(err, "unable to create '%s'", dir);
	}
	return fsync_parent_dir(dir, err);
}

/* After a lone MIDX is in place: the bitmaps, .rev files and chain of others go. */
static void clear_after_lone(const char *pack_dir, const unsigned char *checksum, size_t rawsz)
{
	char *chain_dir = xstrfmt("%s/" MIDX_CHAIN_DIR, pack_dir);
	char *chain = xstrfmt("%s/" MIDX_CHAIN_FILE, pack_dir);
	remove_midx_files(pack_dir, lone_exts, ARRAY_SIZE(lone_exts), checksum, 1, rawsz);
	/* The chain file first: readers then stop looking at the layers. */
	unlink(chain);
	remove_midx_files(chain_dir, layer_exts, ARRAY_SIZE(layer_exts), NULL, 0, rawsz);
	free(chain);
	free(chain_dir);
}

/* After the chain file names its layers: the lone MIDX and other layers go. */
static void clear_after_chain(const char *pack_dir, const unsigned char *keep, uint32_t nr_keep,
			      size_t rawsz)
{
	char *chain_dir = xstrfmt("%s/" MIDX_CHAIN_DIR, pack_dir);
	char *lone = xstrfmt("%s/" MIDX_FILE, pack_dir);
	unlink(lone);
	remove_midx_files(pack_dir, lone_exts, ARRAY_SIZE(lone_exts), NULL, 0, rawsz);
	remove_midx_files(chain_dir, layer_exts, ARRAY_SIZE(layer_exts), keep, nr_keep, rawsz);
	free(lone);
	free(chain_dir);
}

static bool has_bitmap(const struct midx *m, size_t rawsz)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *path = midx_path(m);
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) : 0;
	char *bitmap = xstrfmt("%.*s%smulti-pack-index-%s.bitmap", dir_len, path, slash ? "/" : "",
			       hash_to_hex_r(hex, midx_checksum(m), rawsz));
	bool found = !access(bitmap, F_OK);
	free(bitmap);
	return found;
}

/*
 * git leaves an existing MIDX alone when it is valid, of the version
 * asked for, and no pack came or went (the same packs, not only as
 * many: a pack replaced by another needs a new MIDX). Never for a layer.
 */
static bool existing_matches(const struct midx_writer *w, const struct midx *m,
			     unsigned version, bool incremental)
{
	uint32_t id;
	if (!m || incremental || midx_version(m) != version ||
	    midx_nr_packs(m) != w->nr_packs || !midx_checksum_valid(m))
		return false;
	for (size_t i = 0; i < w->nr_packs; i++)
		if (!midx_find_pack(m, w->packs[i].idx_name, &id))
			return false;
	return true;
}

/* The layer named by --base, within the existing chain; NULL for "none". */
static int find_base(struct midx *existing, const char *base, size_t rawsz,
		     struct midx **out, struct gp_error *err)
{
	*out = NULL;
	/* As git: an empty --base is no base, like "none". */
	if (!*base || !strcmp(base, "none"))
		return 0;
	for (uint32_t l = existing ? midx_nr_layers(existing) : 0; l-- > 0;) {
		struct midx *layer = midx_layer(existing, l);
		char hex[GP_MAX_HEXSZ + 1];
		if (!strcmp(base, hash_to_hex_r(hex, midx_checksum(layer), rawsz))) {
			*out = layer;
			return 0;
		}
	}
	return gp_error_set(err, GP_EINVAL, "could not find base MIDX '%s'", base);
}

/* The layer of the chain whose checksum is hex, or NULL. */
static struct midx *layer_by_hex(struct midx *chain, const char *hex, size_t rawsz)
{
	for (uint32_t l = chain ? midx_nr_layers(chain) : 0; l-- > 0;) {
		struct midx *layer = midx_layer(chain, l);
		char have[GP_MAX_HEXSZ + 1];
		if (!strcmp(hex, hash_to_hex_r(have, midx_checksum(layer), rawsz)))
			return layer;
	}
	return NULL;
}

/* compact's endpoints, as git checks them. */
static int find_compact_range(struct midx_writer *w, const struct midx_write_opts *opts,
			      struct gp_error *err)
{
	w->from = layer_by_hex(w->existing, opts->compact_from, w->rawsz);
	if (!w->from)
		return gp_error_set(err, GP_EINVAL, "could not find MIDX: %s", opts->compact_from);
	w->to = layer_by_hex(w->existing, opts->compact_to, w->rawsz);
	if (!w->to)
		return gp_error_set(err, GP_EINVAL, "could not find MIDX: %s", opts->compact_to);
	if (w->from == w->to)
		return gp_error_set(err, GP_EINVAL, "MIDX compaction endpoints must be unique");
	if (midx_nr_layers(w->from) > midx_nr_layers(w->to))
		return gp_error_set(err, GP_EINVAL, "MIDX %s must be an ancestor of %s",
				    opts->compact_from, opts->compact_to);
	return 0;
}

/*
 * The install state for a layer: the layers below it, and whether a
 * lone MIDX becomes the chain's base.
 */
static void plan_layer(struct midx_install *in, struct midx *existing, struct midx *base,
		       size_t rawsz)
{
	uint32_t nr = base ? midx_nr_layers(base) : 0;
	in->layer = true;
	in->chain = xmalloc(rawsz * (nr + 1));
	in->nr_chain = nr;
	for (uint32_t l = 0; l < nr; l++)
		memcpy(in->chain + (size_t)l * rawsz, midx_checksum(midx_layer(base, l)), rawsz);
	if (base && !midx_is_chain(existing)) {
		in->link_lone = true;
		memcpy(in->lone_checksum, midx_checksum(existing), rawsz);
	}
}

static void release_writer(struct midx_writer *w)
{
	for (size_t id = 0; id < w->nr_packs; id++) {
		pack_free(w->packs[id].p);
		free(w->packs[id].idx_name);
	}
	free(w->packs);
	free(w->by_final);
	free(w->old_to_pack);
	free(w->oids);
	free(w->pack_ids);
	free(w->offsets);
	free(w->pseudo_order);
	strbuf_release(&w->pnam);
}

static int write_rev_file(struct midx_writer *w, const char *midx_path_written,
			  const unsigned char *checksum, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *slash = strrchr(midx_path_written, '/');
	int dir_len = slash ? (int)(slash - midx_path_written) : 0;
	char *path = xstrfmt("%.*s%smulti-pack-index-%s.rev", dir_len, midx_path_written,
			     slash ? "/" : "", hash_to_hex_r(hex, checksum, w->rawsz));
	/* git's .rev holds the layer's own positions. */
	int ret = revindex_write(path, w->algo, w->pseudo_order, w->nr, checksum, err);
	free(path);
	return ret;
}

int midx_write(const char *pack_dir, int algo, const struct midx_write_opts *opts,
	       struct midx_write_result *result, struct gp_error *err)
{
	struct midx_writer w;
	struct chunk_writer chunks = CHUNK_WRITER_INIT;
	struct midx_install *in = xcalloc(1, sizeof(*in));
	struct hashfile *f = NULL;
	struct progress *progress = NULL;
	struct gp_error ignored = GP_ERROR_INIT;
	/* git's default: version 1, but 2 for compact (its packs are unsorted) */
	unsigned version = opts->version ? opts->version
			   : opts->compact_from ? MIDX_VERSION_2 : MIDX_VERSION;
	bool write_ridx = opts->write_ridx;
	char *path = NULL;
	int ret;

	memset(&w, 0, sizeof(w));
	w.algo = algo;
	w.rawsz = gp_hash_algos[algo].rawsz;
	strbuf_init(&w.pnam, 0);
	memset(result, 0, sizeof(*result));
	in->pack_dir = xstrdup(pack_dir);
	in->algo = algo;
	result->install = in;
	result->incremental = opts->incremental;

	if (version != MIDX_VERSION && version != MIDX_VERSION_2) {
		ret = gp_error_set(err, GP_EINVAL, "unknown MIDX version: %u", version);
		goto out;
	}
	if (opts->no_chain_file && !opts->incremental) {
		ret = gp_error_set(err, GP_EINVAL, "cannot use --no-write-chain-file without --incremental");
		goto out;
	}
	/* (write wants --no-write-chain-file with --base; compact does not) */
	if (opts->base && !opts->no_chain_file && !opts->compact_from) {
		ret = gp_error_set(err, GP_EINVAL, "cannot use --base without --no-write-chain-file");
		goto out;
	}

	/* The existing MIDX, unless its checksum is wrong (git warns and ignores it). */
	if (!midx_open(&w.existing, pack_dir, algo, &ignored) && !midx_checksum_valid(w.existing)) {
		result->old_corrupt = true;
		midx_free(w.existing);
		w.existing = NULL;
	}
	gp_error_clear(&ignored);
	if (opts->compact_from) {
		if (version != MIDX_VERSION_2) {
			ret = gp_error_set(err, GP_EINVAL, "cannot perform MIDX compaction with v1 format");
			goto out;
		}
		if ((ret = find_compact_range(&w, opts, err)))
			goto out;
		/* The new layer sits where from sat, unless --base says otherwise. */
		w.base = midx_nr_layers(w.from) > 1 ? midx_layer(w.existing, midx_nr_layers(w.from) - 2) : NULL;
		if (opts->base && (ret = find_base(w.base, opts->base, w.rawsz, &w.base, err)))
			goto out;
		if (!opts->incremental)
			w.base = NULL;
		for (uint32_t l = 0; write_ridx && w.base && l < midx_nr_layers(w.base); l++) {
			struct midx *layer = midx_layer(w.base, l);
			char hex[GP_MAX_HEXSZ + 1];
			if (midx_load_pseudo_order(layer, false, &ignored)) {
				gp_error_clear(&ignored);
				ret = gp_error_set(err, GP_EINVAL, "could not load reverse index for MIDX %s",
						   hash_to_hex_r(hex, midx_checksum(layer), w.rawsz));
				goto out;
			}
		}
		w.old = w.to;
		w.preferred = -1; /* as git: no pack is preferred in a compacted layer */
		progress = progress_start("Adding packfiles to multi-pack-index", 0, opts->progress);
		ret = collect_compact_packs(&w, pack_dir, write_ridx || opts->preferred_pack, err);
		progress_stop(&progress);
		if (ret)
			goto out;
		goto gather;
	}
	if (opts->incremental) {
		w.base = w.existing;
		if (opts->base && (ret = find_base(w.existing, opts->base, w.rawsz, &w.base, err)))
			goto out;
		/* A layer's bitmap counts on the pseudo-pack order of those below. */
		for (uint32_t l = 0; write_ridx && w.base && l < midx_nr_layers(w.base); l++) {
			struct midx *layer = midx_layer(w.base, l);
			char hex[GP_MAX_HEXSZ + 1];
			if (midx_load_pseudo_order(layer, false, &ignored)) {
				gp_error_clear(&ignored);
				ret = gp_error_set(err, GP_EINVAL, "could not load reverse index for MIDX %s",
						   hash_to_hex_r(hex, midx_checksum(layer), w.rawsz));
				goto out;
			}
		}
	} else if (!opts->only_given) {
		/*
		 * Not with a list of packs (--stdin-packs, as repack gives):
		 * the old MIDX holds one copy of each object, in a pack that
		 * may be left out now, while a pack that stays has another
		 * copy the old MIDX never listed.
		 */
		w.old = w.existing;
	}

	progress = progress_start("Adding packfiles to multi-pack-index", 0, opts->progress);
	ret = collect_packs(&w, pack_dir, opts, err);
	progress_update(progress, w.nr_packs);
	progress_stop(&progress);
	if (ret)
		goto out;
	if (opts->incremental && !w.nr_packs)
		goto out; /* as git: no new pack, nothing to do */
	ret = choose_preferred(&w, opts, err);
	result->preferred_unknown = w.preferred_unknown;
	if (ret)
		goto out;
	if (!w.nr_packs) {
		ret = gp_error_set(err, GP_EINVAL, "no pack files to index.");
		goto out;
	}
	if (!opts->nr_drop && existing_matches(&w, w.existing, version, opts->incremental) &&
	    (!write_ridx || has_bitmap(w.existing, w.rawsz))) {
		/* As git: this MIDX (and its bitmap, when one is asked for) stays. */
		if (!write_ridx)
			remove_midx_files(pack_dir, lone_exts, 1, NULL, 0, w.rawsz);
		goto out;
	}

gather:
	if (w.base)
		w.nr_base = midx_nr_objects(w.base);
	progress = progress_start("Adding objects to multi-pack-index", 256, opts->progress);
	ret = gather_objects(&w, progress, err);
	progress_stop(&progress);
	if (ret)
		goto out;
	if (!w.nr && write_ridx) {
		result->no_objects = true; /* git: "refusing to write multi-pack .bitmap without any objects" */
		write_ridx = false;
	}
	if (write_ridx)
		compute_pseudo_order(&w);

	for (size_t id = 0; id < w.nr_packs; id++)
		strbuf_add(&w.pnam, w.by_final[id]->idx_name, strlen(w.by_final[id]->idx_name) + 1);
	while (w.pnam.len % 4)
		strbuf_addch(&w.pnam, '\0');

	chunk_writer_add(&chunks, MIDX_CHUNK_PNAM, w.pnam.len, write_pnam);
	chunk_writer_add(&chunks, MIDX_CHUNK_OIDF, 256 * 4, write_oidf);
	chunk_writer_add(&chunks, MIDX_CHUNK_OIDL, (uint64_t)w.nr * w.rawsz, write_oidl);
	chunk_writer_add(&chunks, MIDX_CHUNK_OOFF, (uint64_t)w.nr * 8, write_ooff);
	if (w.large_needed)
		chunk_writer_add(&chunks, MIDX_CHUNK_LOFF, (uint64_t)w.nr_large * 8, write_loff);
	if (write_ridx) {
		chunk_writer_add(&chunks, MIDX_CHUNK_RIDX, (uint64_t)w.nr * 4, write_ridx_chunk);
		chunk_writer_add(&chunks, MIDX_CHUNK_BTMP, (uint64_t)w.nr_packs * 8, write_btmp);
	}

	if (opts->incremental) {
		char *dir = xstrfmt("%s/" MIDX_CHAIN_DIR, pack_dir);
		/* compact: the layers above the range stay on top. */
		if (w.to) {
			uint32_t top = midx_nr_layers(w.existing), first = midx_nr_layers(w.to);
			in->above = xmalloc(w.rawsz * (top - first + 1));
			for (uint32_t l = first; l < top; l++)
				memcpy(in->above + (size_t)(l - first) * w.rawsz,
				       midx_checksum(midx_layer(w.existing, l)), w.rawsz);
			in->nr_above = top - first;
		}
		ret = make_chain_dir(dir, err);
		free(dir);
		if (ret)
			goto out;
		plan_layer(in, w.existing, w.base, w.rawsz);
		if (!opts->no_chain_file) {
			char *chain = xstrfmt("%s/" MIDX_CHAIN_FILE, pack_dir);
			ret = hashfile_create_locked(&in->chain_lock, chain, algo, err);
			free(chain);
			if (ret)
				goto out;
		}
		path = xstrfmt("%s/" MIDX_CHAIN_DIR "/multi-pack-index.midx", pack_dir);
		ret = hashfile_create(&f, path, algo, err);
	} else {
		path = xstrfmt("%s/" MIDX_FILE, pack_dir);
		ret = hashfile_create_locked(&f, path, algo, err);
	}
	if (ret)
		goto out;
	{
		unsigned char hdr[MIDX_HEADER_SIZE];
		put_be32(hdr, MIDX_SIGNATURE);
		hdr[4] = (unsigned char)version;
		hdr[5] = (unsigned char)algo;
		hdr[6] = (unsigned char)chunks.nr;
		hdr[7] = 0;
		put_be32(hdr + 8, (uint32_t)w.nr_packs);
		hashfile_write(f, hdr, sizeof(hdr));
	}
	chunk_writer_write(&chunks, f, &w);
	ret = hashfile_finalize(f, in->checksum, 0, err);
	if (ret)
		goto out;
	in->file = f;
	memcpy(result->checksum, in->checksum, w.rawsz);
	result->written = true;
	if (write_ridx && opts->write_rev_file &&
	    (ret = write_rev_file(&w, path, in->checksum, err)))
		goto out;
	if (opts->defer_install && write_ridx) {
		result->pending_path = xstrdup(hashfile_tmp_path(f));
		/* The base stays open for midx_open_layer(); it is in existing. */
		if (w.base && opts->incremental) {
			in->base = w.existing;
			w.existing = NULL;
			result->pending_base = w.base;
		}
		goto out;
	}
	ret = midx_write_install(result, err);
out:
	if (ret)
		midx_write_abort(result);
	chunk_writer_release(&chunks);
	release_writer(&w);
	midx_free(w.existing);
	free(path);
	return ret;
}

/* Link the lone MIDX (and its bitmap and .rev) into the chain directory as a layer. */
static int link_lone(const char *pack_dir, const unsigned char *checksum, size_t rawsz,
		     struct gp_error *err)
{
	char lone_hex[GP_MAX_HEXSZ + 1];
	int ret = 0;
	hash_to_hex_r(lone_hex, checksum, rawsz);
	for (size_t i = 0; i < ARRAY_SIZE(layer_exts) && !ret; i++) {
		char *from = !strcmp(layer_exts[i], ".midx")
			? xstrfmt("%s/" MIDX_FILE, pack_dir)
			: xstrfmt("%s/multi-pack-index-%s%s", pack_dir, lone_hex, layer_exts[i]);
		char *to = xstrfmt("%s/" MIDX_CHAIN_DIR "/multi-pack-index-%s%s", pack_dir,
				   lone_hex, layer_exts[i]);
		if (link(from, to) < 0 && errno != EEXIST && errno != ENOENT)
			ret = gp_error_errno(err, "unable to link '%s' to '%s'", from, to);
		free(from);
		free(to);
	}
	return ret;
}

int midx_write_chain(const char *pack_dir, int algo, const unsigned char *layers, uint32_t nr,
		     struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	char *dir = xstrfmt("%s/" MIDX_CHAIN_DIR, pack_dir);
	char *chain = xstrfmt("%s/" MIDX_CHAIN_FILE, pack_dir);
	char *lone_path = xstrfmt("%s/" MIDX_FILE, pack_dir);
	struct midx *lone = NULL;
	struct hashfile *f = NULL;
	int ret = 0;

	if ((ret = make_chain_dir(dir, err)))
		goto out;
	if (midx_open_path(&lone, lone_path, algo, NULL))
		lone = NULL;
	/* Every layer named must be there before the chain names it. */
	for (uint32_t l = 0; l < nr && !ret; l++) {
		const unsigned char *hash = layers + (size_t)l * rawsz;
		char hex[GP_MAX_HEXSZ + 1];
		char *path = xstrfmt("%s/multi-pack-index-%s.midx", dir, hash_to_hex_r(hex, hash, rawsz));
		if (access(path, F_OK)) {
			if (lone && !memcmp(midx_checksum(lone), hash, rawsz))
				ret = link_lone(pack_dir, hash, rawsz, err);
			else
				ret = gp_error_set(err, GP_EINVAL, "could not find MIDX layer %s", hex);
		}
		free(path);
	}
	if (!ret)
		ret = hashfile_create_locked(&f, chain, algo, err);
	for (uint32_t l = 0; !ret && l < nr; l++) {
		char hex[GP_MAX_HEXSZ + 1];
		hash_to_hex_r(hex, layers + (size_t)l * rawsz, rawsz);
		hashfile_write(f, hex, strlen(hex));
		hashfile_write(f, "\n", 1);
	}
	if (!ret)
		ret = hashfile_commit(f, NULL, HASHFILE_NO_TRAILER, err);
	if (!ret)
		clear_after_chain(pack_dir, layers, nr, rawsz);
out:
	midx_free(lone);
	free(lone_path);
	free(chain);
	free(dir);
	return ret;
}

int midx_write_install(struct midx_write_result *result, struct gp_error *err)
{
	struct midx_install *in = result->install;
	size_t rawsz;
	char hex[GP_MAX_HEXSZ + 1];
	char *path = NULL;
	int ret = 0;

	if (!in || !in->file)
		return 0;
	rawsz = gp_hash_algos[in->algo].rawsz;
	hash_to_hex_r(hex, in->checksum, rawsz);
	if (!in->layer) {
		path = xstrfmt("%s/" MIDX_FILE, in->pack_dir);
		ret = hashfile_install(in->file, path, 0, err);
		in->file = NULL;
		if (!ret)
			clear_after_lone(in->pack_dir, in->checksum, rawsz);
		goto out;
	}
	/* A lone MIDX that becomes the base moves into the chain, files and all. */
	if (in->link_lone && (ret = link_lone(in->pack_dir, in->lone_checksum, rawsz, err)))
		goto out;
	path = xstrfmt("%s/" MIDX_CHAIN_DIR "/multi-pack-index-%s.midx", in->pack_dir, hex);
	ret = hashfile_install(in->file, path, HASHFILE_KEEP_EXISTING, err);
	in->file = NULL;
	if (ret || !in->chain_lock)
		goto out;
	for (uint32_t l = 0; l < in->nr_chain; l++) {
		char layer_hex[GP_MAX_HEXSZ + 1];
		hash_to_hex_r(layer_hex, in->chain + (size_t)l * rawsz, rawsz);
		hashfile_write(in->chain_lock, layer_hex, strlen(layer_hex));
		hashfile_write(in->chain_lock, "\n", 1);
	}
	hashfile_write(in->chain_lock, hex, strlen(hex));
	hashfile_write(in->chain_lock, "\n", 1);
	in->chain = xrealloc(in->chain, rawsz * ((size_t)in->nr_chain + 1 + in->nr_above));
	memcpy(in->chain + (size_t)in->nr_chain * rawsz, in->checksum, rawsz);
	for (uint32_t l = 0; l < in->nr_above; l++) {
		char layer_hex[GP_MAX_HEXSZ + 1];
		hash_to_hex_r(layer_hex, in->above + (size_t)l * rawsz, rawsz);
		hashfile_write(in->chain_lock, layer_hex, strlen(layer_hex));
		hashfile_write(in->chain_lock, "\n", 1);
		memcpy(in->chain + (size_t)(in->nr_chain + 1 + l) * rawsz, in->above + (size_t)l * rawsz,
		       rawsz);
	}
	ret = hashfile_commit(in->chain_lock, NULL, HASHFILE_NO_TRAILER, err);
	in->chain_lock = NULL;
	if (!ret)
		clear_after_chain(in->pack_dir, in->chain, in->nr_chain + 1 + in->nr_above, rawsz);
out:
	free(path);
	return ret;
}

void midx_write_abort(struct midx_write_result *result)
{
	struct midx_install *in = result->install;
	if (!in)
		return;
	hashfile_abort(in->file);
	in->file = NULL;
	hashfile_abort(in->chain_lock);
	in->chain_lock = NULL;
	FREE_AND_NULL(result->pending_path);
}

void midx_write_result_release(struct midx_write_result *result)
{
	struct midx_install *in = result->install;
	midx_write_abort(result);
	if (in) {
		free(in->pack_dir);
		free(in->chain);
		free(in->above);
		midx_free(in->base);
		free(in);
	}
	result->install = NULL;
	result->pending_base = NULL;
	FREE_AND_NULL(result->pending_path);
}

void midx_remove(const char *pack_dir, int algo)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	char *chain_dir = xstrfmt("%s/" MIDX_CHAIN_DIR, pack_dir);
	char *chain = xstrfmt("%s/" MIDX_CHAIN_FILE, pack_dir);
	char *lone = xstrfmt("%s/" MIDX_FILE, pack_dir);
	unlink(chain);
	unlink(lone);
	remove_midx_files(pack_dir, lone_exts, ARRAY_SIZE(lone_exts), NULL, 0, rawsz);
	remove_midx_files(chain_dir, layer_exts, ARRAY_SIZE(layer_exts), NULL, 0, rawsz);
	free(lone);
	free(chain);
	free(chain_dir);
}

bool midx_remove_if_listed(const char *pack_dir, int algo, const char *const *names,
			   size_t nr)
{
	struct midx *m = NULL;
	bool listed = false;
	uint32_t id;
	/* A MIDX that does not open lists nothing a reader could follow. */
	if (midx_open(&m, pack_dir, algo, NULL))
		return false;
	for (size_t i = 0; i < nr && !listed; i++)
		listed = midx_find_pack(m, base_name(names[i]), &id);
	midx_free(m);
	if (listed)
		midx_remove(pack_dir, algo);
	return listed;
}
