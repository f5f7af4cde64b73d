/*
 * pack-indexer.c: the two passes described in pack-indexer.h.
 *
 * Memory per object (pack order arrays): offset 8, crc 4, name rawsz,
 * two type bytes, plus 4 bytes per OFS_DELTA child link and rawsz + 4
 * per REF_DELTA. Pass 1 reads the pack through a mapping and drops the
 * pages behind it from the resident set; pass 2 reads with pread(). So
 * peak RSS stays near the tables' size rather than the pack's.
 */
#include "pack-indexer.h"
#include "delta.h"
#include "error.h"
#include "hashfile.h"
#include "object.h"
#include "pack-revindex.h"
#include "packfile.h"
#include "progress.h"
#include "strbuf.h"
#include "zstream.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* deflate cannot expand data by more than about 1032:1. */
#define MAX_INFLATE_RATIO 1100
/* Pass 1 drops the pages it has read from RSS this often. */
#define DROP_PAGES_EVERY ((size_t)1 << 20)

struct indexer {
	const struct pack_indexer_opts *opts;
	struct indexed_pack *ip;
	const char *name;            /* the pack's file name, for messages */
	int fd;
	const unsigned char *map;
	size_t map_size;
	size_t data_end;             /* offset of the trailing checksum */
	size_t rawsz;

	/* OFS_DELTA children of each entry, as a CSR list */
	uint32_t *ofs_child_start;   /* nr + 1 */
	uint32_t *ofs_children;
	/* REF_DELTA entries sorted by base name */
	unsigned char *ref_base_oids; /* nr_ref * rawsz, in ref order */
	uint32_t *ref_sorted;        /* ref order -> index into ref arrays */
	uint32_t *ref_child;         /* index -> pack_pos */
	uint32_t nr_ref;
	size_t ref_alloc;

	uint32_t *base_pos;          /* per entry: OFS_DELTA base, else NO_BASE */
	uint8_t *resolved;           /* per entry: 1 once named */
	uint32_t next_root;          /* atomic work counter */
	uint32_t nr_resolved;        /* atomic */
	int failed;                  /* atomic: stop all threads */
	pthread_mutex_t err_lock;
	pthread_mutex_t cb_lock;     /* serialises opts->each_object */
	struct gp_error *err;
	struct progress *progress;
};

static void record_error(struct indexer *ix, struct gp_error *local)
{
	pthread_mutex_lock(&ix->err_lock);
	if (!__atomic_load_n(&ix->failed, __ATOMIC_RELAXED)) {
		gp_error_set(ix->err, local->code, "%s", gp_error_msg(local));
		__atomic_store_n(&ix->failed, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ix->err_lock);
}

static int report_object(struct indexer *ix, const struct object_id *oid,
			 enum object_type type, const unsigned char *data,
			 size_t size, struct gp_error *err)
{
	int ret;
	if (!ix->opts->each_object)
		return 0;
	pthread_mutex_lock(&ix->cb_lock);
	ret = ix->opts->each_object(ix->opts->cb_data, oid, type, data, size, err);
	pthread_mutex_unlock(&ix->cb_lock);
	return ret;
}

/* ---- pass 0: the pack checksum, in its own thread ---------------------- */

struct checksum_job {
	int fd;
	size_t len;
	int algo;
	unsigned char hash[GP_MAX_RAWSZ];
	int ret;
};

static void *checksum_thread(void *arg)
{
	struct checksum_job *job = arg;
	struct gp_hash_ctx ctx;
	size_t bufsz = 1 << 20, done = 0;
	unsigned char *buf = xmalloc(bufsz);
	hash_init_checksum(&ctx, job->algo);
	/* pread, not the mapping: these pages need not count toward our RSS. */
	while (done < job->len) {
		size_t want = MIN(bufsz, job->len - done);
		ssize_t got = pread_in_full(job->fd, buf, want, (off_t)done);
		if (got != (ssize_t)want) {
			job->ret = -1;
			break;
		}
		hash_update(&ctx, buf, want);
		done += want;
	}
	hash_final_checksum(&ctx, job->hash);
	free(buf);
	return NULL;
}

/* ---- pass 1 ------------------------------------------------------------ */

#define NO_BASE UINT32_MAX

/* Binary search for the entry starting at ofs among the first nr. */
static bool find_entry(const uint64_t *offsets, uint32_t nr, uint64_t ofs,
		       uint32_t *pack_pos)
{
	uint32_t lo = 0, hi = nr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (offsets[mid] == ofs) {
			*pack_pos = mid;
			return true;
		}
		if (offsets[mid] < ofs)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int check_size(struct indexer *ix, uint64_t ofs, uint64_t size,
		      size_t avail, struct gp_error *err)
{
	if (size > SIZE_MAX - 1 || size / MAX_INFLATE_RATIO > (uint64_t)avail + 64)
		return CORRUPT(err, "%s: at offset %" PRIu64 ": size %" PRIu64
			       " is impossible for %zu bytes of compressed data",
			       ix->name, ofs, size, avail);
	return 0;
}

static int scan_entries(struct indexer *ix, struct gp_error *err)
{
	struct indexed_pack *ip = ix->ip;
	struct inflater *inf = inflater_new();
	unsigned char *scratch = NULL;
	size_t scratch_alloc = 0, dropped_to = 0;
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	size_t ofs = PACK_HEADER_SIZE;
	const char *title = ix->opts->progress_title ? ix->opts->progress_title : "Indexing objects";
	struct progress *progress = progress_start(title, ip->nr, ix->opts->progress && *title);
	int ret = 0;

	for (uint32_t pack_pos = 0; pack_pos < ip->nr; pack_pos++) {
		struct pack_entry_header hdr;
		size_t avail = ofs < ix->data_end ? ix->data_end - ofs : 0;
		size_t consumed;

		if (!avail) {
			ret = CORRUPT(err, "%s: at offset %zu: pack is truncated: %" PRIu32
				      " of %" PRIu32 " objects present", ix->name, ofs, pack_pos, ip->nr);
			goto out;
		}
		ret = pack_parse_entry_header(ix->map + ofs, avail, ofs, ix->opts->algo, &hdr, err);
		if (ret) {
			gp_error_prefix(err, "%s", ix->name);
			goto out;
		}
		ret = check_size(ix, ofs, hdr.size, avail - hdr.hdr_len, err);
		if (ret)
			goto out;
		if (hdr.size + 1 > scratch_alloc) {
			size_t want = MAX((size_t)hdr.size + 1, scratch_alloc * 2);
			unsigned char *grown = realloc(scratch, want);
			if (!grown) {
				ret = gp_error_set(err, GP_ENOMEM, "%s: at offset %zu: cannot allocate %"
						   PRIu64 " bytes", ix->name, ofs, hdr.size);
				goto out;
			}
			scratch = grown;
			scratch_alloc = want;
		}
		ret = inflate_exact(inf, ix->map + ofs + hdr.hdr_len, avail - hdr.hdr_len,
				    scratch, (size_t)hdr.size, &consumed, err);
		if (ret) {
			gp_error_prefix(err, "%s: at offset %zu", ix->name, ofs);
			goto out;
		}
		ip->offsets[pack_pos] = ofs;
		ip->types[pack_pos] = (uint8_t)hdr.type;
		ip->crcs[pack_pos] = gp_crc32(0, ix->map + ofs, hdr.hdr_len + consumed);
		if (ip->sizes)
			ip->sizes[pack_pos] = hdr.size;
		if (hdr.type == OBJ_OFS_DELTA || hdr.type == OBJ_REF_DELTA) {
			ip->nr_deltas++;
			if (hdr.type == OBJ_REF_DELTA) {
				if (ix->nr_ref == ix->ref_alloc) {
					ix->ref_alloc = ix->ref_alloc ? ix->ref_alloc * 2 : 64;
					ix->ref_base_oids = xrealloc(ix->ref_base_oids, ix->ref_alloc * ix->rawsz);
					ix->ref_child = xrealloc(ix->ref_child, ix->ref_alloc * sizeof(uint32_t));
				}
				memcpy(ix->ref_base_oids + (size_t)ix->nr_ref * ix->rawsz,
				       hdr.base_oid.hash, ix->rawsz);
				ix->ref_child[ix->nr_ref++] = pack_pos;
			} else {
				uint32_t base_pos;
				if (!find_entry(ip->offsets, pack_pos, hdr.base_ofs, &base_pos)) {
					ret = CORRUPT(err, "%s: at offset %zu: delta base offset %" PRIu64
						      " is not the start of an object", ix->name, ofs, hdr.base_ofs);
					goto out;
				}
				ix->base_pos[pack_pos] = base_pos;
			}
		} else {
			struct object_id oid;
			ret = hash_object(ix->opts->algo, hdr.type, scratch, (size_t)hdr.size, &oid, err);
			if (ret)
				goto out;
			memcpy(ip->oids + (size_t)pack_pos * ix->rawsz, oid.hash, ix->rawsz);
			ip->real_types[pack_pos] = (uint8_t)hdr.type;
			ix->resolved[pack_pos] = 1;
			ret = report_object(ix, &oid, hdr.type, scratch, (size_t)hdr.size, err);
			if (ret)
				goto out;
		}
		ofs += hdr.hdr_len + consumed;
		if (ofs - dropped_to >= DROP_PAGES_EVERY) {
			size_t upto = ofs & ~(page_size - 1);
			madvise((void *)(ix->map + dropped_to), upto - dropped_to, MADV_DONTNEED);
			dropped_to = upto;
		}
		progress_update(progress, pack_pos + 1);
	}
	if (ofs != ix->data_end) {
		size_t junk = ix->data_end - ofs;
		/* A SHA-256 pack read as SHA-1 ends 12 bytes early. */
		bool other_algo = ix->opts->algo == GP_HASH_SHA1 &&
			junk == gp_hash_algos[GP_HASH_SHA256].rawsz - ix->rawsz;
		ret = CORRUPT(err, "%s: at offset %zu: %zu bytes of junk after the last object%s",
			      ix->name, ofs, junk,
			      other_algo ? " (is this a SHA-256 pack? try --object-format=sha256)" : "");
		goto out;
	}
	ip->offsets[ip->nr] = ofs;
out:
	progress_stop(&progress);
	free(scratch);
	inflater_free(inf);
	return ret;
}

/* ---- pass 2 ------------------------------------------------------------ */

struct frame {
	uint32_t pos;
	uint32_t depth;
	unsigned char *data;   /* NULL when dropped for the memory budget */
	size_t size;
	uint32_t next_ofs, ofs_end;   /* range in ofs_children */
	uint32_t next_ref, ref_end;   /* range in ref_sorted */
};

struct worker {
	struct indexer *ix;
	struct inflater *inf;
	struct frame *stack;
	size_t nr, alloc;
	size_t held;          /* bytes of base data on the stack */
	size_t budget;
	unsigned char *inbuf;  /* compressed entry, read with pread() */
	size_t inbuf_alloc;
	struct gp_error err;
};

/* The range of REF_DELTA entries whose base is named raw. */
static void ref_range(const struct indexer *ix, const unsigned char *raw,
		      uint32_t *begin, uint32_t *end)
{
	uint32_t lo = 0, hi = ix->nr_ref;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (memcmp(ix->ref_base_oids + (size_t)ix->ref_sorted[mid] * ix->rawsz,
			   raw, ix->rawsz) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*begin = lo;
	while (lo < ix->nr_ref &&
	       !memcmp(ix->ref_base_oids + (size_t)ix->ref_sorted[lo] * ix->rawsz,
		       raw, ix->rawsz))
		lo++;
	*end = lo;
}

static void frame_init(const struct indexer *ix, struct frame *f, uint32_t pos,
		       uint32_t depth)
{
	memset(f, 0, sizeof(*f));
	f->pos = pos;
	f->depth = depth;
	f->next_ofs = ix->ofs_child_start[pos];
	f->ofs_end = ix->ofs_child_start[pos + 1];
	if (ix->nr_ref)
		ref_range(ix, ix->ip->oids + (size_t)pos * ix->rawsz, &f->next_ref, &f->ref_end);
}

static bool frame_has_children(const struct frame *f)
{
	return f->next_ofs < f->ofs_end || f->next_ref < f->ref_end;
}

/*
 * Inflate the data of entry pos (a whole object or a delta). Pass 2
 * reads entries in no particular order, so it reads them with pread()
 * into a per-thread buffer rather than through the mapping: faulting in
 * random pages of the mapping would make the whole pack resident.
 */
static int inflate_at(struct worker *w, uint32_t pos, unsigned char **data,
		      size_t *size)
{
	struct indexer *ix = w->ix;
	uint64_t ofs = ix->ip->offsets[pos];
	size_t entry_len = (size_t)(ix->ip->offsets[pos + 1] - ofs);
	struct pack_entry_header hdr;
	size_t consumed;
	unsigned char *buf;
	int ret;

	if (entry_len > w->inbuf_alloc) {
		free(w->inbuf);
		w->inbuf_alloc = MAX(entry_len, (size_t)64 << 10);
		w->inbuf = malloc(w->inbuf_alloc);
		if (!w->inbuf) {
			w->inbuf_alloc = 0;
			return gp_error_set(&w->err, GP_ENOMEM, "%s: at offset %" PRIu64
					    ": cannot allocate %zu bytes", ix->name, ofs, entry_len);
		}
	}
	if (pread_in_full(ix->fd, w->inbuf, entry_len, (off_t)ofs) != (ssize_t)entry_len)
		return gp_error_errno(&w->err, "%s: at offset %" PRIu64 ": read error", ix->name, ofs);
	ret = pack_parse_entry_header(w->inbuf, entry_len, ofs, ix->opts->algo, &hdr, &w->err);
	if (ret)
		return gp_error_prefix(&w->err, "%s", ix->name);
	buf = malloc((size_t)hdr.size + 1);
	if (!buf)
		return gp_error_set(&w->err, GP_ENOMEM, "%s: at offset %" PRIu64
				    ": cannot allocate %" PRIu64 " bytes", ix->name, ofs, hdr.size);
	ret = inflate_exact(w->inf, w->inbuf + hdr.hdr_len, entry_len - hdr.hdr_len,
			    buf, (size_t)hdr.size, &consumed, &w->err);
	if (ret) {
		free(buf);
		return gp_error_prefix(&w->err, "%s: at offset %" PRIu64, ix->name, ofs);
	}
	*data = buf;
	*size = (size_t)hdr.size;
	return 0;
}

/* Apply the delta at entry pos to base. */
static int apply_at(struct worker *w, uint32_t pos, const unsigned char *base,
		    size_t base_size, unsigned char **out, size_t *out_size)
{
	struct indexer *ix = w->ix;
	unsigned char *delta, *result;
	size_t delta_size, hdr_len;
	uint64_t want_base, want_result;
	int ret = inflate_at(w, pos, &delta, &delta_size);
	if (ret)
		return ret;
	ret = delta_sizes(delta, delta_size, &want_base, &want_result, &hdr_len, &w->err);
	if (!ret && want_result > SIZE_MAX - 1)
		ret = gp_error_set(&w->err, GP_ENOMEM, "delta result too large");
	if (ret) {
		free(delta);
		return gp_error_prefix(&w->err, "%s: at offset %" PRIu64, ix->name, ix->ip->offsets[pos]);
	}
	result = malloc((size_t)want_result + 1);
	if (!result) {
		free(delta);
		return gp_error_set(&w->err, GP_ENOMEM, "%s: at offset %" PRIu64
				    ": cannot allocate %" PRIu64 " bytes", ix->name,
				    ix->ip->offsets[pos], want_result);
	}
	ret = delta_apply(base, base_size, delta, delta_size, result, (size_t)want_result, &w->err);
	free(delta);
	if (ret) {
		free(result);
		return gp_error_prefix(&w->err, "%s: at offset %" PRIu64, ix->name, ix->ip->offsets[pos]);
	}
	result[want_result] = '\0';
	*out = result;
	*out_size = (size_t)want_result;
	return 0;
}

/* Make sure stack[level] holds its data, rebuilding dropped bases. */
static int ensure_data(struct worker *w, size_t level)
{
	size_t from = level;
	int ret;
	if (w->stack[level].data)
		return 0;
	while (from > 0 && !w->stack[from].data)
		from--;
	if (!w->stack[from].data) {
		ret = inflate_at(w, w->stack[from].pos, &w->stack[from].data, &w->stack[from].size);
		if (ret)
			return ret;
		w->held += w->stack[from].size;
	}
	for (size_t lvl = from + 1; lvl <= level; lvl++) {
		struct frame *f = &w->stack[lvl];
		ret = apply_at(w, f->pos, w->stack[lvl - 1].data, w->stack[lvl - 1].size,
			       &f->data, &f->size);
		if (ret)
			return ret;
		w->held += f->size;
	}
	return 0;
}

/* Drop the oldest bases (never the top one) while over budget. */
static void enforce_budget(struct worker *w)
{
	for (size_t lvl = 0; w->held > w->budget && lvl + 1 < w->nr; lvl++) {
		struct frame *f = &w->stack[lvl];
		if (!f->data)
			continue;
		w->held -= f->size;
		FREE_AND_NULL(f->data);
	}
}

static void pop_frame(struct worker *w)
{
	struct frame *f = &w->stack[--w->nr];
	if (f->data) {
		w->held -= f->size;
		FREE_AND_NULL(f->data);
	}
}

static int resolve_tree(struct worker *w, uint32_t root)
{
	struct indexer *ix = w->ix;
	struct indexed_pack *ip = ix->ip;
	uint8_t real_type = ip->real_types[root];
	int ret = 0;

	ALLOC_GROW(w->stack, 1, w->alloc);
	frame_init(ix, &w->stack[0], root, 0);
	if (!frame_has_children(&w->stack[0]))
		return 0;
	w->nr = 1;
	while (w->nr) {
		struct frame *top = &w->stack[w->nr - 1];
		uint32_t child;
		unsigned char *data;
		size_t size;
		struct object_id oid;

		if (__atomic_load_n(&ix->failed, __ATOMIC_RELAXED))
			break;
		if (top->next_ofs < top->ofs_end)
			child = ix->ofs_children[top->next_ofs++];
		else if (top->next_ref < top->ref_end)
			child = ix->ref_child[ix->ref_sorted[top->next_ref++]];
		else {
			pop_frame(w);
			continue;
		}
		/* A name present twice in the pack must not resolve a child twice. */
		if (__atomic_exchange_n(&ix->resolved[child], 1, __ATOMIC_ACQ_REL))
			continue;
		ret = ensure_data(w, w->nr - 1);
		if (ret)
			break;
		top = &w->stack[w->nr - 1];
		ret = apply_at(w, child, top->data, top->size, &data, &size);
		if (ret)
			break;
		ret = hash_object(ix->opts->algo, (enum object_type)real_type, data, size, &oid, &w->err);
		if (ret) {
			free(data);
			break;
		}
		memcpy(ip->oids + (size_t)child * ix->rawsz, oid.hash, ix->rawsz);
		ip->real_types[child] = real_type;
		ret = report_object(ix, &oid, (enum object_type)real_type, data, size, &w->err);
		if (ret) {
			free(data);
			break;
		}
		if (ip->depths) {
			ip->depths[child] = top->depth + 1;
			ip->bases[child] = top->pos;
		}
		__atomic_add_fetch(&ix->nr_resolved, 1, __ATOMIC_RELAXED);
		progress_add(ix->progress, 1);

		ALLOC_GROW(w->stack, w->nr + 1, w->alloc);
		top = &w->stack[w->nr - 1];
		frame_init(ix, &w->stack[w->nr], child, top->depth + 1);
		if (!frame_has_children(&w->stack[w->nr])) {
			free(data);
			continue;
		}
		w->stack[w->nr].data = data;
		w->stack[w->nr].size = size;
		w->held += size;
		w->nr++;
		enforce_budget(w);
	}
	while (w->nr)
		pop_frame(w);
	return ret;
}

static void *resolve_thread(void *arg)
{
	struct worker *w = arg;
	struct indexer *ix = w->ix;
	for (;;) {
		uint32_t root;
		if (__atomic_load_n(&ix->failed, __ATOMIC_RELAXED))
			break;
		root = __atomic_fetch_add(&ix->next_root, 1, __ATOMIC_RELAXED);
		if (root >= ix->ip->nr)
			break;
		if (ix->ip->types[root] == OBJ_OFS_DELTA || ix->ip->types[root] == OBJ_REF_DELTA)
			continue;
		if (resolve_tree(w, root)) {
			record_error(ix, &w->err);
			break;
		}
	}
	return NULL;
}

static void build_child_lists(struct indexer *ix)
{
	uint32_t nr = ix->ip->nr, total = 0;
	uint32_t *start = xcalloc((size_t)nr + 1, sizeof(*start));
	for (uint32_t pos = 0; pos < nr; pos++)
		if (ix->base_pos[pos] != NO_BASE)
			start[ix->base_pos[pos]]++;
	for (uint32_t pos = 0; pos < nr; pos++) {
		total += start[pos];
		start[pos] = total;
	}
	start[nr] = total;
	ix->ofs_children = xmalloc(sizeof(uint32_t) * (total ? total : 1));
	for (uint32_t pos = nr; pos-- > 0;)
		if (ix->base_pos[pos] != NO_BASE)
			ix->ofs_children[--start[ix->base_pos[pos]]] = pos;
	ix->ofs_child_start = start;
	if (ix->nr_ref)
		ix->ref_sorted = pack_sort_by_name(ix->ref_base_oids, ix->nr_ref, ix->opts->algo);
}

/* Resolve the delta trees of the whole objects from ix->next_root on. */
static void run_workers(struct indexer *ix, int nr_threads)
{
	struct worker *workers = xcalloc((size_t)nr_threads, sizeof(*workers));
	pthread_t *tids = xcalloc((size_t)nr_threads, sizeof(*tids));

	for (int t = 0; t < nr_threads; t++) {
		workers[t].ix = ix;
		workers[t].inf = inflater_new();
		workers[t].budget = ix->opts->base_budget ? ix->opts->base_budget
					: ((size_t)96 << 20) / (size_t)nr_threads;
		if (nr_threads > 1 && pthread_create(&tids[t], NULL, resolve_thread, &workers[t]))
			BUG("pthread_create failed");
	}
	if (nr_threads == 1)
		resolve_thread(&workers[0]);
	else
		for (int t = 0; t < nr_threads; t++)
			pthread_join(tids[t], NULL);
	for (int t = 0; t < nr_threads; t++) {
		inflater_free(workers[t].inf);
		free(workers[t].stack);
		free(workers[t].inbuf);
		gp_error_clear(&workers[t].err);
	}
	free(workers);
	free(tids);
}

/* ---- fixing a thin pack -------------------------------------------------- */

/* Make room for k more entries in every per-entry array. */
static void grow_entries(struct indexer *ix, uint32_t k)
{
	struct indexed_pack *ip = ix->ip;
	size_t nr = (size_t)ip->nr + k;
	uint32_t total = ix->ofs_child_start[ip->nr];

	ip->offsets = xrealloc(ip->offsets, sizeof(uint64_t) * (nr + 1));
	ip->crcs = xrealloc(ip->crcs, sizeof(uint32_t) * (nr + 1));
	ip->oids = xrealloc(ip->oids, (nr + 1) * ix->rawsz);
	ip->types = xrealloc(ip->types, nr + 1);
	ip->real_types = xrealloc(ip->real_types, nr + 1);
	ix->resolved = xrealloc(ix->resolved, nr + 1);
	ix->base_pos = xrealloc(ix->base_pos, sizeof(uint32_t) * (nr + 1));
	ix->ofs_child_start = xrealloc(ix->ofs_child_start, sizeof(uint32_t) * (nr + 1));
	for (size_t pos = ip->nr; pos <= nr; pos++)
		ix->ofs_child_start[pos] = total;
	if (ip->sizes) {
		ip->sizes = xrealloc(ip->sizes, sizeof(uint64_t) * (nr + 1));
		ip->depths = xrealloc(ip->depths, sizeof(uint32_t) * (nr + 1));
		ip->bases = xrealloc(ip->bases, sizeof(uint32_t) * (nr + 1));
	}
}

/*
 * Append, stored whole, each base that unresolved REF_DELTAs name and
 * that read_base finds, in the order of their names. Returns the number
 * appended in *nr_out; ix->data_end moves past them (the old trailer is
 * overwritten).
 */
static int append_bases(struct indexer *ix, int wfd, uint32_t *nr_out, struct gp_error *err)
{
	struct indexed_pack *ip = ix->ip;
	const unsigned char *prev = NULL;
	struct strbuf z = STRBUF_INIT;
	uint32_t nr_appended = 0;
	int ret = 0;

	for (uint32_t r = 0; r < ix->nr_ref; r++) {
		uint32_t idx = ix->ref_sorted[r];
		const unsigned char *raw = ix->ref_base_oids + (size_t)idx * ix->rawsz;
		struct object_id oid;
		enum object_type type;
		unsigned char *data = NULL, head[16];
		size_t size, head_len;
		uint32_t pos;

		if (ix->resolved[ix->ref_child[idx]] || (prev && !memcmp(prev, raw, ix->rawsz)))
			continue;
		prev = raw;
		oid_from_raw(&oid, raw, ix->opts->algo);
		ret = ix->opts->read_base(ix->opts->cb_data, &oid, &type, &data, &size, err);
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (ip->nr == UINT32_MAX) {
			free(data);
			ret = CORRUPT(err, "%s: too many objects", ix->name);
			break;
		}
		head_len = pack_encode_entry_header(head, type, size);
		strbuf_reset(&z);
		deflate_to_strbuf(data, size, ix->opts->compression, &z);
		free(data);
		if (pwrite_in_full(wfd, head, head_len, (off_t)ix->data_end) != (ssize_t)head_len ||
		    pwrite_in_full(wfd, z.buf, z.len, (off_t)(ix->data_end + head_len)) != (ssize_t)z.len) {
			ret = gp_error_errno(err, "%s: cannot append a base object", ix->name);
			break;
		}
		grow_entries(ix, 1);
		pos = ip->nr++;
		ip->offsets[pos] = ix->data_end;
		ip->crcs[pos] = gp_crc32(gp_crc32(0, head, head_len), z.buf, z.len);
		memcpy(ip->oids + (size_t)pos * ix->rawsz, raw, ix->rawsz);
		ip->types[pos] = ip->real_types[pos] = (uint8_t)type;
		ix->resolved[pos] = 1;
		ix->base_pos[pos] = NO_BASE;
		if (ip->sizes) {
			ip->sizes[pos] = size;
			ip->depths[pos] = 0;
			ip->bases[pos] = NO_BASE;
		}
		ix->data_end += head_len + z.len;
		ip->offsets[ip->nr] = ix->data_end;
		nr_appended++;
	}
	strbuf_release(&z);
	*nr_out = nr_appended;
	return ret;
}

/* New object count in the header, new checksum after the data: git's fixup. */
static int rewrite_head_and_trailer(struct indexer *ix, int wfd, struct gp_error *err)
{
	unsigned char count[4], *buf = xmalloc((size_t)1 << 20);
	struct gp_hash_ctx ctx;
	uint64_t done = 0;
	int ret = 0;

	put_be32(count, ix->ip->nr);
	if (pwrite_in_full(wfd, count, 4, 8) != 4) {
		ret = gp_error_errno(err, "%s: cannot rewrite the pack header", ix->name);
		goto out;
	}
	hash_init_checksum(&ctx, ix->opts->algo);
	while (done < ix->data_end) {
		size_t want = (size_t)MIN((uint64_t)1 << 20, ix->data_end - done);
		if (pread_in_full(wfd, buf, want, (off_t)done) != (ssize_t)want) {
			ret = gp_error_errno(err, "%s: cannot read back the pack", ix->name);
			goto out;
		}
		hash_update(&ctx, buf, want);
		done += want;
	}
	hash_final_checksum(&ctx, ix->ip->pack_hash);
	if (pwrite_in_full(wfd, ix->ip->pack_hash, ix->rawsz, (off_t)ix->data_end) != (ssize_t)ix->rawsz ||
	    ftruncate(wfd, (off_t)(ix->data_end + ix->rawsz)) < 0 || fsync(wfd) < 0)
		ret = gp_error_errno(err, "%s: cannot write the pack checksum", ix->name);
out:
	free(buf);
	return ret;
}

static int fix_thin(struct indexer *ix, const char *pack_path, int nr_threads,
		    struct gp_error *err)
{
	uint32_t old_nr = ix->ip->nr, nr_appended = 0;
	int wfd = open(pack_path, O_RDWR | O_CLOEXEC);
	int ret;

	if (wfd < 0)
		return gp_error_errno(err, "cannot open '%s' for writing", pack_path);
	ret = append_bases(ix, wfd, &nr_appended, err);
	if (ret || !nr_appended)
		goto out;
	ix->ip->nr_appended = nr_appended;
	ix->next_root = old_nr;
	run_workers(ix, nr_threads);
	if (ix->failed) {
		ret = ix->err->code;
		goto out;
	}
	ret = rewrite_head_and_trailer(ix, wfd, err);
out:
	close(wfd);
	return ret;
}

static int resolve_deltas(struct indexer *ix, const char *pack_path, struct gp_error *err)
{
	int nr_threads = ix->opts->threads;
	int ret = 0;

	if (nr_threads <= 0)
		nr_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nr_threads <= 0)
		nr_threads = 1;
	if ((uint32_t)nr_threads > ix->ip->nr_deltas + 1)
		nr_threads = (int)ix->ip->nr_deltas + 1;
	build_child_lists(ix);
	ix->progress = progress_start("Resolving deltas", ix->ip->nr_deltas,
				      ix->opts->progress && ix->ip->nr_deltas);
	run_workers(ix, nr_threads);
	if (ix->failed) {
		progress_stop(&ix->progress);
		return ix->err->code;
	}
	if (ix->nr_resolved != ix->ip->nr_deltas && ix->opts->read_base) {
		ret = fix_thin(ix, pack_path, nr_threads, err);
		if (ret) {
			progress_stop(&ix->progress);
			return ret;
		}
	}
	if (ix->ip->nr_appended) {
		char msg[64];
		snprintf(msg, sizeof(msg), ", completed with %" PRIu32 " local object%s.\n",
			 ix->ip->nr_appended, ix->ip->nr_appended == 1 ? "" : "s");
		progress_stop_msg(&ix->progress, msg);
	} else {
		progress_stop(&ix->progress);
	}
	if (ix->nr_resolved != ix->ip->nr_deltas) {
		uint32_t missing = ix->ip->nr_deltas - ix->nr_resolved;
		/* A pack read from a pipe has only a temporary name, which says nothing. */
		bool named = !starts_with(ix->name, "tmp_pack_");
		ret = gp_error_set(err, GP_ENOTFOUND, "%s%spack has %" PRIu32 " unresolved delta%s",
				   named ? ix->name : "", named ? ": " : "",
				   missing, missing == 1 ? "" : "s");
	}
	return ret;
}

/* ---- driver ------------------------------------------------------------ */

void indexed_pack_free(struct indexed_pack *ip)
{
	if (!ip)
		return;
	free(ip->offsets);
	free(ip->crcs);
	free(ip->oids);
	free(ip->types);
	free(ip->real_types);
	free(ip->by_name);
	free(ip->sizes);
	free(ip->depths);
	free(ip->bases);
	free(ip);
}

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int pack_index(const char *pack_path, const struct pack_indexer_opts *opts,
	       struct indexed_pack **out, struct gp_error *err)
{
	struct indexer ix;
	struct indexed_pack *ip = xcalloc(1, sizeof(*ip));
	struct checksum_job job = { 0 };
	pthread_t checksum_tid;
	bool checksum_started = false;
	struct stat st;
	uint32_t nr;
	int ret = 0;

	memset(&ix, 0, sizeof(ix));
	ix.opts = opts;
	ix.ip = ip;
	ix.name = file_name(pack_path);
	ix.rawsz = gp_hash_algos[opts->algo].rawsz;
	ix.err = err;
	pthread_mutex_init(&ix.err_lock, NULL);
	pthread_mutex_init(&ix.cb_lock, NULL);
	ip->algo = opts->algo;

	ix.fd = open(pack_path, O_RDONLY | O_CLOEXEC);
	if (ix.fd < 0) {
		ret = errno == ENOENT
			? gp_error_set(err, GP_ENOTFOUND, "cannot open packfile '%s': no such file", pack_path)
			: gp_error_errno(err, "cannot open packfile '%s'", pack_path);
		goto out;
	}
	if (fstat(ix.fd, &st) < 0) {
		ret = gp_error_errno(err, "cannot stat '%s'", pack_path);
		goto out;
	}
	ix.map_size = (size_t)st.st_size;
	if (ix.map_size < PACK_HEADER_SIZE + ix.rawsz) {
		ret = CORRUPT(err, "%s: pack is truncated (%zu bytes)", ix.name, ix.map_size);
		goto out;
	}
	ix.map = mmap(NULL, ix.map_size, PROT_READ, MAP_PRIVATE, ix.fd, 0);
	if (ix.map == MAP_FAILED) {
		ix.map = NULL;
		ret = gp_error_errno(err, "cannot mmap '%s'", pack_path);
		goto out;
	}
	ix.data_end = ix.map_size - ix.rawsz;
	if (get_be32(ix.map) != PACK_SIGNATURE) {
		ret = CORRUPT(err, "%s: at offset 0: not a pack file (bad signature)", ix.name);
		goto out;
	}
	ip->version = get_be32(ix.map + 4);
	if (ip->version != 2 && ip->version != 3) {
		ret = CORRUPT(err, "%s: at offset 4: unsupported pack version %" PRIu32,
			      ix.name, ip->version);
		goto out;
	}
	nr = get_be32(ix.map + 8);
	/* The smallest entry is a 1-byte header and an 8-byte zlib stream. */
	if (nr > (ix.data_end - PACK_HEADER_SIZE) / 9) {
		ret = CORRUPT(err, "%s: at offset 8: %" PRIu32 " objects cannot fit in %zu bytes",
			      ix.name, nr, ix.map_size);
		goto out;
	}
	ip->nr = nr;
	ip->offsets = xmalloc(sizeof(uint64_t) * ((size_t)nr + 1));
	ip->crcs = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
	ip->oids = xcalloc((size_t)nr + 1, ix.rawsz);
	ip->types = xcalloc((size_t)nr + 1, 1);
	ip->real_types = xcalloc((size_t)nr + 1, 1);
	ix.base_pos = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
	for (uint32_t pos = 0; pos < nr; pos++)
		ix.base_pos[pos] = NO_BASE;
	ix.resolved = xcalloc((size_t)nr + 1, 1);
	if (opts->keep_stats) {
		ip->sizes = xcalloc((size_t)nr + 1, sizeof(uint64_t));
		ip->depths = xcalloc((size_t)nr + 1, sizeof(uint32_t));
		ip->bases = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
		for (uint32_t pos = 0; pos < nr; pos++)
			ip->bases[pos] = NO_BASE;
	}

	job.fd = ix.fd;
	job.len = ix.data_end;
	job.algo = opts->algo;
	if (pthread_create(&checksum_tid, NULL, checksum_thread, &job))
		BUG("pthread_create failed");
	checksum_started = true;

	ret = scan_entries(&ix, err);
	pthread_join(checksum_tid, NULL);
	checksum_started = false;
	if (ret)
		goto out;
	if (job.ret) {
		ret = gp_error_errno(err, "cannot read '%s'", pack_path);
		goto out;
	}
	if (memcmp(job.hash, ix.map + ix.data_end, ix.rawsz)) {
		ret = CORRUPT(err, "%s: at offset %zu: pack checksum mismatch (pack is corrupted)",
			      ix.name, ix.data_end);
		goto out;
	}
	memcpy(ip->pack_hash, job.hash, ix.rawsz);

	ret = resolve_deltas(&ix, pack_path, err);
	if (ret)
		goto out;
	ip->by_name = pack_sort_by_name(ip->oids, ip->nr, opts->algo);
out:
	if (checksum_started)
		pthread_join(checksum_tid, NULL);
	if (ix.map)
		munmap((void *)ix.map, ix.map_size);
	if (ix.fd >= 0)
		close(ix.fd);
	free(ix.base_pos);
	free(ix.resolved);
	free(ix.ref_base_oids);
	free(ix.ref_child);
	free(ix.ref_sorted);
	free(ix.ofs_children);
	free(ix.ofs_child_start);
	pthread_mutex_destroy(&ix.err_lock);
	pthread_mutex_destroy(&ix.cb_lock);
	if (ret) {
		indexed_pack_free(ip);
		return ret;
	}
	*out = ip;
	return 0;
}

int indexed_pack_write_idx(const struct indexed_pack *ip, const char *path,
			   struct strbuf *mem, const struct pack_idx_opts *opts,
			   struct gp_error *err)
{
	struct pack_idx_input in = {
		.algo = ip->algo,
		.nr = ip->nr,
		.by_name = ip->by_name,
		.oids = ip->oids,
		.offsets = ip->offsets,
		.crcs = ip->crcs,
		.pack_hash = ip->pack_hash,
	};
	return pack_write_idx(path, mem, &in, opts, err);
}

int indexed_pack_write_rev(const struct indexed_pack *ip, const char *path,
			   struct gp_error *err)
{
	uint32_t *pack_order = xmalloc(sizeof(uint32_t) * ((size_t)ip->nr + 1));
	int ret;
	/* by_name maps idx_pos -> pack_pos; the .rev lists the inverse. */
	for (uint32_t idx_pos = 0; idx_pos < ip->nr; idx_pos++)
		pack_order[ip->by_name[idx_pos]] = idx_pos;
	ret = revindex_write(path, ip->algo, pack_order, ip->nr, ip->pack_hash, err);
	free(pack_order);
	return ret;
}

/* ---- reading a pack from a stream ---------------------------------------- */

/*
 * The input is read into buf; buf[0..flushed) was already copied to
 * out_fd, buf[flushed..pos) is consumed and waits to be copied,
 * buf[pos..len) is read but not yet consumed.
 */
struct spool {
	int in_fd, out_fd;
	const struct pack_spool_opts *opts;
	unsigned char *buf;
	size_t flushed, pos, len;
	uint64_t consumed;      /* pack bytes consumed, the given header included */
	bool eof;
	struct progress *progress;
};

static int spool_flush(struct spool *sp, struct gp_error *err)
{
	if (sp->pos > sp->flushed &&
	    write_in_full(sp->out_fd, sp->buf + sp->flushed, sp->pos - sp->flushed) < 0)
		return gp_error_errno(err, "cannot write the received pack");
	sp->flushed = sp->pos;
	return 0;
}

/* Have at least want unconsumed bytes buffered, unless the input ends first. */
static int spool_fill(struct spool *sp, size_t want, struct gp_error *err)
{
	int ret;
	if (sp->len - sp->pos >= want || sp->eof)
		return 0;
	ret = spool_flush(sp, err);
	if (ret)
		return ret;
	memmove(sp->buf, sp->buf + sp->pos, sp->len - sp->pos);
	sp->len -= sp->pos;
	sp->pos = sp->flushed = 0;
	while (sp->len < want) {
		ssize_t n = read(sp->in_fd, sp->buf + sp->len, PACK_SPOOL_BUFSZ - sp->len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return gp_error_errno(err, "read error on input");
		if (!n) {
			sp->eof = true;
			break;
		}
		sp->len += (size_t)n;
	}
	return 0;
}

static int spool_consume(struct spool *sp, size_t n, struct gp_error *err)
{
	sp->pos += n;
	sp->consumed += n;
	if (sp->opts->max_size && sp->consumed > sp->opts->max_size) {
		char limit[32];
		humanize_size(limit, sizeof(limit), sp->opts->max_size);
		return gp_error_set(err, GP_EINVAL, "pack exceeds maximum allowed size (%s)", limit);
	}
	return 0;
}

static int early_eof(struct gp_error *err)
{
	return gp_error_set(err, GP_ECORRUPT, "early EOF");
}

int pack_spool(int in_fd, int out_fd, const struct pack_spool_opts *opts,
	       unsigned char **rest, size_t *rest_len, uint64_t *pack_len,
	       struct gp_error *err)
{
	struct spool sp = { .in_fd = in_fd, .out_fd = out_fd, .opts = opts };
	struct inflate_skip *skip = inflate_skip_new();
	size_t rawsz = gp_hash_algos[opts->algo].rawsz;
	uint32_t nr;
	int ret;

	*rest = NULL;
	*rest_len = 0;
	sp.buf = xmalloc(PACK_SPOOL_BUFSZ);
	if (opts->header) {
		memcpy(sp.buf, opts->header, PACK_HEADER_SIZE);
		sp.len = PACK_HEADER_SIZE;
	}
	ret = spool_fill(&sp, PACK_HEADER_SIZE, err);
	if (ret)
		goto out;
	if (sp.len - sp.pos < PACK_HEADER_SIZE) {
		ret = early_eof(err);
		goto out;
	}
	if (get_be32(sp.buf) != PACK_SIGNATURE) {
		ret = CORRUPT(err, "pack signature mismatch");
		goto out;
	}
	if (get_be32(sp.buf + 4) != 2 && get_be32(sp.buf + 4) != 3) {
		ret = CORRUPT(err, "pack version %" PRIu32 " unsupported", get_be32(sp.buf + 4));
		goto out;
	}
	nr = get_be32(sp.buf + 8);
	ret = spool_consume(&sp, PACK_HEADER_SIZE, err);
	if (ret)
		goto out;
	if (opts->progress_title)
		sp.progress = progress_start(opts->progress_title, nr, true);
	for (uint32_t n = 0; n < nr; n++) {
		struct pack_entry_header hdr;
		uint64_t ofs = sp.consumed;

		/* The longest header: a 10-byte size and a base name. */
		ret = spool_fill(&sp, 16 + GP_MAX_RAWSZ, err);
		if (ret)
			goto out;
		if (sp.pos == sp.len) {
			ret = early_eof(err);
			goto out;
		}
		ret = pack_parse_entry_header(sp.buf + sp.pos, sp.len - sp.pos, ofs, opts->algo,
					      &hdr, err);
		if (ret) {
			if (sp.eof)
				gp_error_set(err, GP_ECORRUPT, "early EOF");
			goto out;
		}
		ret = spool_consume(&sp, hdr.hdr_len, err);
		if (!ret)
			ret = inflate_skip_reset(skip, hdr.size, err);
		if (ret)
			goto out;
		for (;;) {
			size_t used;
			int done;
			ret = spool_fill(&sp, 1, err);
			if (ret)
				goto out;
			if (sp.pos == sp.len) {
				ret = early_eof(err);
				goto out;
			}
			done = inflate_skip_feed(skip, sp.buf + sp.pos, sp.len - sp.pos, &used, err);
			if (done < 0) {
				ret = gp_error_prefix(err, "at offset %" PRIu64, ofs);
				goto out;
			}
			ret = spool_consume(&sp, used, err);
			if (ret)
				goto out;
			if (done)
				break;
		}
		progress_set_bytes(sp.progress, sp.consumed);
		progress_update(sp.progress, (uint64_t)n + 1);
	}
	ret = spool_fill(&sp, rawsz, err);
	if (ret)
		goto out;
	if (sp.len - sp.pos < rawsz) {
		ret = early_eof(err);
		goto out;
	}
	ret = spool_consume(&sp, rawsz, err);
	if (!ret)
		ret = spool_flush(&sp, err);
	if (ret)
		goto out;
	*pack_len = sp.consumed;
	if (sp.len > sp.pos) {
		*rest_len = sp.len - sp.pos;
		*rest = xmalloc(*rest_len);
		memcpy(*rest, sp.buf + sp.pos, *rest_len);
	}
out:
	progress_stop(&sp.progress);
	inflate_skip_free(skip);
	free(sp.buf);
	return ret;
}
