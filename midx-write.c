/*
 * midx-write.c: writing the multi-pack-index; the rules are in
 * midx-write.h and the layout in midx.c.
 *
 * Objects are gathered one fanout bucket at a time: each pack's .idx is
 * already sorted, so a bucket is a set of sorted runs, one per pack,
 * merged by (name, pack rank) and deduplicated. Memory is the output
 * tables plus one bucket.
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
 * Packs are kept in git's "add order": the existing MIDX's packs first
 * (in its order), then new packs in directory order. Ties between packs
 * of equal mtime go by add order; pack ids in the file go by name.
 */
struct midx_pack {
	char *idx_name;          /* "pack-<hash>.idx" */
	struct packed_git *p;
	uint64_t mtime;          /* of the .pack, in seconds */
	uint32_t rank;           /* position in the duplicate preference order */
	uint32_t final_id;       /* pack id in the file (name order) */
	int64_t old_id;          /* its id in the existing MIDX, or -1 */
};

struct bucket_entry {
	uint64_t key;            /* the name's first 8 bytes, big-endian */
	const unsigned char *oid;
	uint32_t pack_id;
	uint32_t rank;
	uint64_t offset;
};

struct midx_writer {
	int algo;
	size_t rawsz;
	struct midx_pack *packs;  /* in add order */
	size_t nr_packs, alloc_packs;
	struct midx *old;        /* the existing MIDX, when valid */
	int64_t *old_to_pack;    /* existing MIDX pack id -> index in packs, or -1 */
	int64_t preferred;       /* index in packs, or -1 */
	bool preferred_unknown;
	/* the selected objects, by name */
	uint32_t nr;
	unsigned char *oids;
	uint32_t *pack_ids;
	uint64_t *offsets;
	bool large_needed;       /* some offset needs 64 bits */
	uint32_t nr_large;
	uint32_t *pseudo_order;  /* midx positions in pseudo-pack order */
	struct strbuf pnam;
};

static bool name_listed(const char *name, const char *const *list, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

static bool pack_wanted(const struct midx_write_opts *opts, const char *idx_name)
{
	if (opts->only_given && !name_listed(idx_name, opts->only_packs, opts->nr_only))
		return false;
	return !name_listed(idx_name, opts->drop_packs, opts->nr_drop);
}

static bool have_pack(const struct midx_writer *w, const char *idx_name)
{
	for (size_t i = 0; i < w->nr_packs; i++)
		if (!strcmp(w->packs[i].idx_name, idx_name))
			return true;
	return false;
}

/* Add a pack whose .pack exists; false when it does not. */
static bool add_pack(struct midx_writer *w, const char *pack_dir, const char *idx_name,
		     int64_t old_id)
{
	struct stat st;
	char *pack = xstrfmt("%s/%.*s.pack", pack_dir, (int)(strlen(idx_name) - 4), idx_name);
	int missing = stat(pack, &st);
	free(pack);
	if (missing)
		return false;
	ALLOC_GROW(w->packs, w->nr_packs + 1, w->alloc_packs);
	memset(&w->packs[w->nr_packs], 0, sizeof(w->packs[0]));
	w->packs[w->nr_packs].idx_name = xstrdup(idx_name);
	w->packs[w->nr_packs].mtime = (uint64_t)st.st_mtime;
	w->packs[w->nr_packs].old_id = old_id;
	w->nr_packs++;
	return true;
}

static int cmp_names_by_index(const void *a, const void *b, void *data)
{
	const struct midx_writer *w = data;
	return strcmp(w->packs[*(const uint32_t *)a].idx_name,
		      w->packs[*(const uint32_t *)b].idx_name);
}

static int collect_packs(struct midx_writer *w, const char *pack_dir,
			 const struct midx_write_opts *opts, struct gp_error *err)
{
	DIR *d;
	struct dirent *de;
	uint32_t *by_name;

	/*
	 * git builds on the existing MIDX: its packs come first. Not with
	 * a list of packs (--stdin-packs, as repack gives): the old MIDX
	 * holds one copy of each object, in a pack that may be left out
	 * now, while a pack that stays has another copy the old MIDX never
	 * listed. Then every pack's .idx is read (as git does too).
	 */
	if (opts->only_given || midx_open(&w->old, pack_dir, w->algo, NULL))
		w->old = NULL;
	if (w->old) {
		w->old_to_pack = xmalloc(sizeof(int64_t) * (midx_nr_packs(w->old) + 1));
		for (uint32_t id = 0; id < midx_nr_packs(w->old); id++) {
			const char *name = midx_pack_name(w->old, id);
			w->old_to_pack[id] = -1;
			if (!pack_wanted(opts, name))
				continue;
			if (!add_pack(w, pack_dir, name, id))
				return gp_error_set(err, GP_EIO, "%s names %s, which is missing",
						    midx_path(w->old), name);
			w->old_to_pack[id] = (int64_t)w->nr_packs - 1;
		}
	}
	d = opendir(pack_dir);
	if (!d)
		return gp_error_errno(err, "cannot open pack directory '%s'", pack_dir);
	while ((de = readdir(d))) {
		if (!starts_with(de->d_name, "pack-") || !ends_with(de->d_name, ".idx"))
			continue;
		if (!pack_wanted(opts, de->d_name) || have_pack(w, de->d_name))
			continue;
		add_pack(w, pack_dir, de->d_name, -1);
	}
	closedir(d);

	by_name = xmalloc(sizeof(*by_name) * (w->nr_packs + 1));
	for (uint32_t i = 0; i < w->nr_packs; i++)
		by_name[i] = i;
	qsort_r(by_name, w->nr_packs, sizeof(*by_name), cmp_names_by_index, w);
	for (uint32_t id = 0; id < w->nr_packs; id++)
		w->packs[by_name[id]].final_id = id;
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
		for (size_t i = 0; i < w->nr_packs; i++)
			if (!strncmp(w->packs[i].idx_name, opts->preferred_pack, len) &&
			    !strcmp(w->packs[i].idx_name + len, ".idx"))
				w->preferred = (int64_t)i;
		/*
		 * As git 2.39: an unknown name is a warning, and the pack
		 * added first is then preferred (with or without RIDX).
		 */
		if (w->preferred < 0) {
			w->preferred_unknown = true;
			if (w->nr_packs)
				w->preferred = 0;
		} else if (!w->packs[w->preferred].p->nr_objects) {
			return gp_error_set(err, GP_EINVAL,
					    "cannot select preferred pack %s with no objects",
					    opts->preferred_pack);
		}
	} else if (opts->write_ridx && w->nr_packs) {
		size_t oldest = 0;
		for (size_t i = 1; i < w->nr_packs; i++)
			if (!w->packs[oldest].p->nr_objects ||
			    w->packs[i].mtime < w->packs[oldest].mtime)
				oldest = i;
		if (w->packs[oldest].p->nr_objects)
			w->preferred = (int64_t)oldest;
	}
	return 0;
}

/* Rank packs: preferred first, then newest mtime, then lowest id. */
static int cmp_rank(const void *a, const void *b, void *data)
{
	const struct midx_writer *w = data;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	bool pa = (int64_t)ia == w->preferred, pb = (int64_t)ib == w->preferred;
	if (pa != pb)
		return pa ? -1 : 1;
	if (w->packs[ia].mtime != w->packs[ib].mtime)
		return w->packs[ia].mtime > w->packs[ib].mtime ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
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
		e->rank = w->packs[i].rank;
		e->offset = pack_nth_offset(p, idx_pos);
	}
}

/*
 * As git does: the objects of packs the existing MIDX already covers
 * come from that MIDX (only the copies it selected), those of new packs
 * from their .idx, and the preferred pack, when the old MIDX covers it,
 * contributes its whole .idx as well.
 */
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
	size_t *run_start = xmalloc(sizeof(*run_start) * (w->nr_packs + 3));
	bool preferred_in_old = w->preferred >= 0 && w->packs[w->preferred].old_id >= 0;
	uint32_t out = job->out_start;

	for (unsigned b = job->first; b < job->last; b++) {
		size_t nr = 0, nr_runs = 0;
		struct bucket_entry *sorted;
		if (w->old) {
			uint32_t lo = b ? midx_fanout(w->old, b - 1) : 0;
			uint32_t hi = midx_fanout(w->old, b);
			if (nr + (hi - lo) > bucket_alloc) {
				bucket_alloc = (nr + (hi - lo)) * 2;
				bucket = xrealloc(bucket, bucket_alloc * sizeof(*bucket));
				tmp = xrealloc(tmp, bucket_alloc * sizeof(*tmp));
			}
			run_start[nr_runs++] = nr;
			for (uint32_t pos = lo; pos < hi; pos++) {
				int64_t i = w->old_to_pack[midx_nth_pack(w->old, pos)];
				if (i < 0)
					continue;
				bucket[nr].oid = midx_nth_oid_raw(w->old, pos);
				bucket[nr].key = get_be64(bucket[nr].oid);
				bucket[nr].pack_id = (uint32_t)i;
				bucket[nr].rank = w->packs[i].rank;
				bucket[nr].offset = midx_nth_offset(w->old, pos);
				nr++;
			}
			if (run_start[nr_runs - 1] == nr)
				nr_runs--;
		}
		for (size_t i = 0; i < w->nr_packs; i++)
			if (w->packs[i].old_id < 0)
				add_idx_run(w, i, b, &bucket, &tmp, &nr, &bucket_alloc, run_start, &nr_runs);
		if (preferred_in_old)
			add_idx_run(w, (size_t)w->preferred, b, &bucket, &tmp, &nr, &bucket_alloc,
				    run_start, &nr_runs);
		run_start[nr_runs] = nr;
		sorted = nr_runs > 1 ? merge_runs(bucket, tmp, run_start, nr_runs, w->rawsz) : bucket;
		for (size_t i = 0; i < nr; i++) {
			if (i && sorted[i].key == sorted[i - 1].key &&
			    !memcmp(sorted[i].oid, sorted[i - 1].oid, w->rawsz))
				continue;
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
 * As git does: the objects of packs the existing MIDX already covers
 * come from that MIDX (only the copies it selected), those of new packs
 * from their .idx, and the preferred pack, when the old MIDX covers it,
 * contributes its whole .idx as well.
 *
 * The buckets split in two halves gathered by two threads: the second
 * writes its objects after room for every object the packs hold in the
 * first half (more than the first can select), and is moved down after.
 */
static int gather_objects(struct midx_writer *w, struct progress *progress,
			  struct gp_error *err)
{
	uint32_t *order = xmalloc(sizeof(*order) * (w->nr_packs ? w->nr_packs : 1));
	struct gather_job jobs[2];
	pthread_t tid;
	uint64_t total = 0, first_half = 0;
	bool threaded;

	for (uint32_t i = 0; i < w->nr_packs; i++) {
		order[i] = i;
		total += w->packs[i].p->nr_objects;
		first_half += get_be32(w->packs[i].p->fanout + 4 * 127);
	}
	qsort_r(order, w->nr_packs, sizeof(*order), cmp_rank, w);
	for (uint32_t rank = 0; rank < w->nr_packs; rank++)
		w->packs[order[rank]].rank = rank;
	free(order);
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
}

/* ---- chunk writers ------------------------------------------------------ */

static void write_pnam(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	hashfile_write(f, w->pnam.buf, w->pnam.len);
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

static void write_ridx(struct hashfile *f, void *data)
{
	struct midx_writer *w = data;
	unsigned char *buf = xmalloc(4 * (size_t)(w->nr ? w->nr : 1));
	for (uint32_t pseudo = 0; pseudo < w->nr; pseudo++)
		put_be32(buf + 4 * (size_t)pseudo, w->pseudo_order[pseudo]);
	hashfile_write(f, buf, 4 * (size_t)w->nr);
	free(buf);
}

/* ---- driver ------------------------------------------------------------- */

/*
 * git leaves an existing MIDX alone when no pack came or went: the same
 * packs, not only as many (a pack replaced by another must get a new
 * MIDX, or the old one would name a pack that is gone).
 */
static bool existing_matches(const struct midx_writer *w)
{
	if (!w->old || midx_nr_packs(w->old) != w->nr_packs)
		return false;
	for (uint32_t id = 0; id < midx_nr_packs(w->old); id++)
		if (w->old_to_pack[id] < 0)
			return false;
	return true;
}

static void remove_stale_files(const char *pack_dir, const unsigned char *checksum,
			       size_t rawsz)
{
	char hex[GP_MAX_HEXSZ + 1];
	DIR *d = opendir(pack_dir);
	struct dirent *de;
	if (!d)
		return;
	hash_to_hex_r(hex, checksum, rawsz);
	while ((de = readdir(d))) {
		const char *rest;
		if (!skip_prefix(de->d_name, "multi-pack-index-", &rest))
			continue;
		if (!ends_with(rest, ".bitmap") && !ends_with(rest, ".rev"))
			continue;
		if (!strncmp(rest, hex, strlen(hex)) && rest[strlen(hex)] == '.')
			continue;
		char *path = xstrfmt("%s/%s", pack_dir, de->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
}

static bool has_bitmap(const char *pack_dir, const unsigned char *checksum, size_t rawsz)
{
	char hex[GP_MAX_HEXSZ + 1];
	char *path = xstrfmt("%s/multi-pack-index-%s.bitmap", pack_dir,
			     hash_to_hex_r(hex, checksum, rawsz));
	bool found = !access(path, F_OK);
	free(path);
	return found;
}

static void remove_bitmaps(const char *pack_dir)
{
	DIR *d = opendir(pack_dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *path;
		if (!starts_with(de->d_name, "multi-pack-index-") ||
		    !ends_with(de->d_name, ".bitmap"))
			continue;
		path = xstrfmt("%s/%s", pack_dir, de->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
}

int midx_write(const char *pack_dir, int algo, const struct midx_write_opts *opts,
	       struct midx_write_result *result, struct gp_error *err)
{
	struct midx_writer w;
	struct chunk_writer chunks = CHUNK_WRITER_INIT;
	struct hashfile *f = NULL;
	struct progress *progress = NULL;
	unsigned char checksum[GP_MAX_RAWSZ];
	char *path = xstrfmt("%s/multi-pack-index", pack_dir);
	int ret;

	memset(&w, 0, sizeof(w));
	w.algo = algo;
	w.rawsz = gp_hash_algos[algo].rawsz;
	strbuf_init(&w.pnam, 0);
	if (result)
		memset(result, 0, sizeof(*result));

	ret = collect_packs(&w, pack_dir, opts, err);
	if (ret)
		goto out;
	if (!w.nr_packs) {
		ret = gp_error_set(err, GP_EINVAL, "no pack files to index");
		goto out;
	}
	ret = choose_preferred(&w, opts, err);
	if (ret)
		goto out;
	if (result)
		result->preferred_unknown = w.preferred_unknown;
	if (!opts->write_ridx && !opts->nr_drop && existing_matches(&w)) {
		/* As git: the MIDX stays, and no bitmap was asked for. */
		remove_bitmaps(pack_dir);
		goto out;
	}
	if (opts->write_ridx && opts->defer_install && !opts->nr_drop &&
	    existing_matches(&w) && midx_has_ridx(w.old) &&
	    has_bitmap(pack_dir, midx_checksum(w.old), w.rawsz))
		goto out; /* as git: this MIDX and its bitmap are already there */

	progress = progress_start("Adding packfiles to multi-pack-index", 256, opts->progress);
	ret = gather_objects(&w, progress, err);
	progress_stop(&progress);
	if (ret)
		goto out;
	if (opts->write_ridx)
		compute_pseudo_order(&w);

	{
		const char **names = xcalloc(w.nr_packs + 1, sizeof(*names));
		for (size_t i = 0; i < w.nr_packs; i++)
			names[w.packs[i].final_id] = w.packs[i].idx_name;
		for (size_t id = 0; id < w.nr_packs; id++)
			strbuf_add(&w.pnam, names[id], strlen(names[id]) + 1);
		free(names);
	}
	while (w.pnam.len % 4)
		strbuf_addch(&w.pnam, '\0');

	chunk_writer_add(&chunks, MIDX_CHUNK_PNAM, w.pnam.len, write_pnam);
	chunk_writer_add(&chunks, MIDX_CHUNK_OIDF, 256 * 4, write_oidf);
	chunk_writer_add(&chunks, MIDX_CHUNK_OIDL, (uint64_t)w.nr * w.rawsz, write_oidl);
	chunk_writer_add(&chunks, MIDX_CHUNK_OOFF, (uint64_t)w.nr * 8, write_ooff);
	if (w.large_needed)
		chunk_writer_add(&chunks, MIDX_CHUNK_LOFF, (uint64_t)w.nr_large * 8, write_loff);
	if (opts->write_ridx)
		chunk_writer_add(&chunks, MIDX_CHUNK_RIDX, (uint64_t)w.nr * 4, write_ridx);

	ret = hashfile_create_locked(&f, path, algo, err);
	if (ret)
		goto out;
	{
		unsigned char hdr[MIDX_HEADER_SIZE];
		put_be32(hdr, MIDX_SIGNATURE);
		hdr[4] = MIDX_VERSION;
		hdr[5] = (unsigned char)algo;
		hdr[6] = (unsigned char)chunks.nr;
		hdr[7] = 0;
		put_be32(hdr + 8, (uint32_t)w.nr_packs);
		hashfile_write(f, hdr, sizeof(hdr));
	}
	chunk_writer_write(&chunks, f, &w);
	if (opts->defer_install && result) {
		ret = hashfile_finalize(f, result->checksum, 0, err);
		if (ret)
			goto out;
		result->pending = f;
		result->pending_path = xstrfmt("%s.lock", path);
		result->written = true;
		goto out;
	}
	ret = hashfile_commit(f, checksum, 0, err);
	if (ret)
		goto out;
	remove_stale_files(pack_dir, checksum, w.rawsz);
	if (result) {
		memcpy(result->checksum, checksum, w.rawsz);
		result->written = true;
	}
out:
	chunk_writer_release(&chunks);
	for (size_t id = 0; id < w.nr_packs; id++) {
		pack_free(w.packs[id].p);
		free(w.packs[id].idx_name);
	}
	free(w.packs);
	midx_free(w.old);
	free(w.old_to_pack);
	free(w.oids);
	free(w.pack_ids);
	free(w.offsets);
	free(w.pseudo_order);
	strbuf_release(&w.pnam);
	free(path);
	return ret;
}

int midx_write_install(const char *pack_dir, int algo, struct midx_write_result *result,
		       struct gp_error *err)
{
	char *path;
	int ret;
	if (!result->pending)
		return 0;
	path = xstrfmt("%s/multi-pack-index", pack_dir);
	ret = hashfile_install(result->pending, path, 0, err);
	result->pending = NULL;
	FREE_AND_NULL(result->pending_path);
	if (!ret)
		remove_stale_files(pack_dir, result->checksum, gp_hash_algos[algo].rawsz);
	free(path);
	return ret;
}

void midx_write_abort(struct midx_write_result *result)
{
	hashfile_abort(result->pending);
	result->pending = NULL;
	FREE_AND_NULL(result->pending_path);
}
