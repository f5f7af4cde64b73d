/*
 * pack-bitmap-write.c: building and writing reachability bitmaps
 * (pack-bitmap-write.h): the writer's state and its steps in order.
 * The commit graph and selection live in bitmap-select.c, tree
 * resolution in bitmap-trees.c, reusing the repository's bitmap in
 * bitmap-reuse.c (pack-bitmap-write-internal.h lists them).
 */
#include "pack-bitmap-write.h"
#include "pack-bitmap-write-internal.h"
#include "bitmap-reuse.h"
#include "bitmap-select.h"
#include "bitmap-trees.h"
#include "commit.h"
#include "error.h"
#include "ewah/ewah.h"
#include "hashfile.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "packfile.h"
#include "progress.h"
#include "pseudo-merge.h"
#include "strbuf.h"
#include "trace2.h"

#include <pthread.h>
#include <unistd.h>

/* How many earlier entries a bitmap may be XORed against. */
#define XOR_WINDOW 10

/* ---- the oid -> bit_pos table -------------------------------------- */

void writer_table_build(struct bitmap_writer *w, uint32_t from)
{
	struct pos_table *t = &w->table;
	size_t size = 64;
	if (t->slots)
		return;
	if (from > w->nr)
		from = w->nr;
	while (size < 2 * (size_t)(w->nr - from))
		size *= 2;
	t->slots = xmalloc(size * sizeof(*t->slots));
	for (size_t i = 0; i < size; i++)
		t->slots[i].index_pos = NO_POS;
	t->mask = size - 1;
	t->salt = (uint64_t)getpid() * 0xda942042e4dd58b5ull ^ (uint64_t)(uintptr_t)t;
	t->rawsz = gp_hash_algos[w->algo].rawsz;
	t->from = from;
	for (uint32_t index_pos = from; index_pos < w->nr; index_pos++) {
		uint64_t key = writer_oid_key(bitmap_order_index_oid_raw(w->order, index_pos));
		size_t slot = writer_slot_of(t, key);
		while (t->slots[slot].index_pos != NO_POS)
			slot = (slot + 1) & t->mask;
		t->slots[slot].key = key;
		t->slots[slot].index_pos = index_pos;
		t->slots[slot].bit_pos = bitmap_order_index_to_bit(w->order, index_pos);
	}
}

void writer_prefetch(const struct bitmap_writer *w, const unsigned char *hash)
{
	__builtin_prefetch(&w->table.slots[writer_slot_of(&w->table, writer_oid_key(hash))]);
}

bool writer_find_raw(const struct bitmap_writer *w, const unsigned char *hash,
			   uint32_t *bit_pos)
{
	const struct pos_table *t = &w->table;
	uint64_t key = writer_oid_key(hash);
	for (size_t slot = writer_slot_of(t, key); t->slots[slot].index_pos != NO_POS;
	     slot = (slot + 1) & t->mask) {
		if (t->slots[slot].key != key ||
		    memcmp(bitmap_order_index_oid_raw(w->order, t->slots[slot].index_pos),
			   hash, t->rawsz))
			continue;
		*bit_pos = t->slots[slot].bit_pos;
		return true;
	}
	if (t->from) {
		/* below from: the layers under the new one know their names */
		struct object_id oid;
		uint32_t found;
		oid_from_raw(&oid, hash, w->algo);
		if (bitmap_order_find(w->order, &oid, &found) && found < t->from) {
			*bit_pos = found;
			return true;
		}
	}
	return false;
}

bool writer_find(const struct bitmap_writer *w, const struct object_id *oid, uint32_t *bit_pos)
{
	return writer_find_raw(w, oid->hash, bit_pos);
}

/* ---- types, in threads ------------------------------------------- */

struct type_job {
	struct bitmap_writer *w;
	uint32_t start, end;
	struct pack_range *ranges;   /* this job's runs of one pack, offsets rising */
	size_t nr_ranges, alloc_ranges;
	int ret;
	struct gp_error err;
};

/*
 * Objects come in bit order, which is offset order within each pack, so
 * an OFS_DELTA's base (always earlier in its pack) has usually been
 * typed already: its type is looked up among this pack's typed entries
 * instead of walking the delta chain. Anything else asks the pack.
 */
struct typed {
	uint64_t ofs;
	uint8_t type;
};

#define DROP_TYPES_EVERY ((uint64_t)32 << 20)

static void *type_worker(void *data)
{
	struct type_job *job = data;
	struct typed *seen = NULL;
	size_t nr_seen = 0, alloc_seen = 0;
	struct packed_git *last = NULL;
	uint64_t drop_from = 0;
	for (uint32_t bit_pos = job->start; bit_pos < job->end; bit_pos++) {
		struct pack_entry_header hdr;
		struct packed_git *p;
		enum object_type type = OBJ_BAD;
		uint64_t ofs;
		bitmap_order_locate(job->w->order, bit_pos, &p, &ofs);
		if (p != last || (nr_seen && seen[nr_seen - 1].ofs >= ofs)) {
			if (last)
				pack_drop_range(last, drop_from, last->pack_size);
			drop_from = ofs;
			nr_seen = 0;
			last = p;
			ALLOC_GROW(job->ranges, job->nr_ranges + 1, job->alloc_ranges);
			job->ranges[job->nr_ranges].pack = p;
			job->ranges[job->nr_ranges++].start = bit_pos;
		}
		job->ranges[job->nr_ranges - 1].end = bit_pos + 1;
		if (!p) {
			job->ret = CORRUPT(&job->err, "object %" PRIu32 " of the bitmap order is in no"
					   " pack (a damaged MIDX entry?)", bit_pos);
			break;
		}
		job->ret = pack_open_pack(p, &job->err);
		if (!job->ret && ofs < p->pack_size)
			job->ret = pack_parse_entry_header(p->pack_map + ofs, p->pack_size - ofs, ofs,
							   p->algo, &hdr, &job->err);
		else if (!job->ret)
			job->ret = CORRUPT(&job->err, "%s: offset %llu is past the end",
					   p->pack_path, (unsigned long long)ofs);
		if (job->ret)
			break;
		if (hdr.type >= OBJ_COMMIT && hdr.type <= OBJ_TAG) {
			type = hdr.type;
		} else if (hdr.type == OBJ_OFS_DELTA) {
			size_t lo = 0, hi = nr_seen;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (seen[mid].ofs == hdr.base_ofs) {
					type = (enum object_type)seen[mid].type;
					break;
				}
				if (seen[mid].ofs < hdr.base_ofs)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
		if (type == OBJ_BAD) {
			struct pack_object_info info;
			job->ret = pack_object_info(p, ofs, &info, false, &job->err);
			if (job->ret)
				break;
			type = info.type;
		}
		if (type < OBJ_COMMIT || type > OBJ_TAG) {
			job->ret = CORRUPT(&job->err, "%s: object at offset %llu has type %d",
					   p->pack_path, (unsigned long long)ofs, (int)type);
			break;
		}
		job->w->types[bit_pos] = (uint8_t)type;
		job->w->ofs[bit_pos] = ofs;
		/* The sweep would touch every page of the packs: give them back as it goes. */
		if (ofs - drop_from >= DROP_TYPES_EVERY) {
			pack_drop_range(p, drop_from, ofs);
			drop_from = ofs;
		}
		ALLOC_GROW(seen, nr_seen + 1, alloc_seen);
		seen[nr_seen].ofs = ofs;
		seen[nr_seen++].type = (uint8_t)type;
	}
	free(seen);
	return NULL;
}

/* Give back the pages of the packs touched so far (see pack_drop_pages()). */
void writer_drop_pages(struct bitmap_writer *w)
{
	for (size_t i = 0; i < w->nr_ranges; i++)
		pack_drop_pages(w->ranges[i].pack);
}

/*
 * The types of every object, and where each lies. A layer on top of the
 * old chain takes the old positions' types from the old bitmaps
 * (bitmap_reuse_base_types()) and reads the pack entries of its own
 * objects only; the old objects are located when one must be read.
 */
static int read_types(struct bitmap_writer *w)
{
	struct type_job jobs[MAX_THREADS];
	int nr_jobs = w->threads;
	uint32_t from = 0, nr;
	int ret = 0;
	w->types = xmalloc(w->nr ? w->nr : 1);
	w->ofs = xmalloc(sizeof(*w->ofs) * (w->nr ? w->nr : 1));
	if (bitmap_reuse_base_types(w))
		from = w->opts->base_objects;
	/* t7705 checks that a layer took the cheap path */
	trace2_data_intmax("pack-bitmap-write", "layer_types_from_bitmaps", (int64_t)from);
	w->located_from = from;
	nr = w->nr - from;
	if (nr < 65536)
		nr_jobs = 1;
	for (int i = 0; i < nr_jobs; i++) {
		jobs[i].w = w;
		jobs[i].start = from + (uint32_t)((uint64_t)nr * (uint64_t)i / (uint64_t)nr_jobs);
		jobs[i].end = from + (uint32_t)((uint64_t)nr * (uint64_t)(i + 1) / (uint64_t)nr_jobs);
		jobs[i].ranges = NULL;
		jobs[i].nr_ranges = jobs[i].alloc_ranges = 0;
		jobs[i].ret = 0;
		jobs[i].err = (struct gp_error)GP_ERROR_INIT;
	}
	run_parallel(type_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
	for (int i = 0; i < nr_jobs; i++) {
		if (jobs[i].ret && !ret) {
			ret = jobs[i].ret;
			gp_error_set(w->err, ret, "%s", gp_error_msg(&jobs[i].err));
		}
		gp_error_clear(&jobs[i].err);
	}
	/* each pack's run of bits, for finding delta bases by offset */
	for (int i = 0; i < nr_jobs; i++) {
		for (size_t k = 0; k < jobs[i].nr_ranges; k++) {
			struct pack_range *range = &jobs[i].ranges[k];
			struct pack_range *last = w->nr_ranges ? &w->ranges[w->nr_ranges - 1] : NULL;
			if (last && last->pack == range->pack && last->end == range->start &&
			    w->ofs[last->end - 1] < w->ofs[range->start]) {
				last->end = range->end;
				continue;
			}
			ALLOC_GROW(w->ranges, w->nr_ranges + 1, w->alloc_ranges);
			w->ranges[w->nr_ranges++] = *range;
		}
		free(jobs[i].ranges);
	}
	/* the sweep touched every page of the packs */
	writer_drop_pages(w);
	return ret;
}

/* Where the object at bit_pos lies, from the runs found while typing. */
void writer_locate(const struct bitmap_writer *w, uint32_t bit_pos, struct packed_git **pack,
		   uint64_t *ofs)
{
	size_t lo = 0, hi = w->nr_ranges;
	if (bit_pos < w->located_from) {
		bitmap_order_locate(w->order, bit_pos, pack, ofs);
		return;
	}
	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->ranges[mid].start <= bit_pos)
			lo = mid;
		else
			hi = mid;
	}
	*pack = w->ranges[lo].pack;
	*ofs = w->ofs[bit_pos];
}

int writer_read_with(struct bitmap_writer *w, struct pack_reader *reader, uint32_t bit_pos,
		     enum object_type want, unsigned char **data, size_t *size,
		     struct gp_error *err)
{
	struct packed_git *p;
	enum object_type type;
	struct object_id oid;
	char hex[GP_MAX_HEXSZ + 1];
	uint64_t ofs;
	int ret;
	writer_locate(w, bit_pos, &p, &ofs);
	if (!p)
		return CORRUPT(err, "object %" PRIu32 " of the bitmap order is in no"
			       " pack (a damaged MIDX entry?)", bit_pos);
	ret = pack_read_object(reader, p, ofs, &type, data, size, err);
	if (ret)
		return ret;
	if (type != want) {
		free(*data);
		*data = NULL;
		bitmap_order_oid(w->order, bit_pos, &oid);
		return CORRUPT(err, "object %s is a %s, not a %s", oid_to_hex_r(hex, &oid),
			       type_name(type), type_name(want));
	}
	return 0;
}

int writer_read(struct bitmap_writer *w, uint32_t bit_pos, enum object_type want,
		   unsigned char **data, size_t *size)
{
	return writer_read_with(w, w->reader, bit_pos, want, data, size, w->err);
}

int writer_not_in_order(struct bitmap_writer *w, const struct object_id *oid, const char *what)
{
	char hex[GP_MAX_HEXSZ + 1];
	return gp_error_set(w->err, GP_ENOTFOUND,
			    "%s %s is reachable but not in the bitmapped pack or MIDX "
			    "(a bitmap must cover everything reachable; as git says, it"
			    " doesn't have full closure)",
			    what, oid_to_hex_r(hex, oid));
}

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

void writer_sort_keyed(uint32_t *items, struct keyed *keys, size_t nr)
{
	qsort(keys, nr, sizeof(*keys), cmp_keyed);
	for (size_t i = 0; i < nr; i++)
		items[i] = keys[i].item;
	free(keys);
}

int writer_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int writer_set_bit(struct bitmap_writer *w, struct bitmap *bits, uint32_t bit_pos)
{
	if (bitmap_set(bits, bit_pos) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

/* The commits, their order and the selection: no tree needed. */
static int commit_graph(struct bitmap_writer *w)
{
	int ret = bitmap_select_read_commits(w);
	if (ret)
		return ret;
	bitmap_reuse_mark_commits(w);
	bitmap_select_topo_sort(w);
	bitmap_select_commits(w);
	return 0;
}

/* ---- building ------------------------------------------------------ */

struct build {
	struct bitmap bits;
	uint32_t *heap;            /* commit indices, max topo on top */
	size_t heap_nr, heap_alloc;
	uint32_t *fresh;           /* commits whose trees must be walked */
	size_t fresh_nr, fresh_alloc;
	uint32_t *stack;           /* trees to walk */
	size_t stack_nr, stack_alloc;
};

static void heap_push(struct bitmap_writer *w, struct build *b, uint32_t index)
{
	size_t i;
	ALLOC_GROW(b->heap, b->heap_nr + 1, b->heap_alloc);
	i = b->heap_nr++;
	while (i) {
		size_t parent = (i - 1) / 2;
		if (w->commits[b->heap[parent]].topo >= w->commits[index].topo)
			break;
		b->heap[i] = b->heap[parent];
		i = parent;
	}
	b->heap[i] = index;
}

static uint32_t heap_pop(struct bitmap_writer *w, struct build *b)
{
	uint32_t top = b->heap[0], last = b->heap[--b->heap_nr];
	size_t i = 0;
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= b->heap_nr)
			break;
		if (child + 1 < b->heap_nr &&
		    w->commits[b->heap[child + 1]].topo > w->commits[b->heap[child]].topo)
			child++;
		if (w->commits[b->heap[child]].topo <= w->commits[last].topo)
			break;
		b->heap[i] = b->heap[child];
		i = child;
	}
	if (b->heap_nr)
		b->heap[i] = last;
	return top;
}
/* Everything below root_pos not yet in b->bits, from the resolved trees. */
static int walk_trees(struct bitmap_writer *w, struct build *b, uint32_t root_pos)
{
	if (bitmap_get(&b->bits, root_pos))
		return 0;
	ALLOC_GROW(b->stack, b->stack_nr + 1, b->stack_alloc);
	b->stack[b->stack_nr++] = root_pos;
	while (b->stack_nr) {
		uint32_t tree_pos = b->stack[--b->stack_nr];
		const uint32_t *kids = w->kids[tree_pos];
		if (bitmap_get(&b->bits, tree_pos))
			continue;
		if (!kids && w->reuse) {
			int ret = bitmap_reuse_load_tree(w, tree_pos);
			if (ret)
				return ret;
			kids = w->kids[tree_pos];
		}
		if (!kids)
			return bitmap_trees_diagnose(w, tree_pos);
		if (writer_set_bit(w, &b->bits, tree_pos))
			return GP_ENOMEM;
		for (uint32_t i = 1; i <= kids[0]; i++) {
			uint32_t kid = kids[i] & ~KID_TREE;
			if (bitmap_get(&b->bits, kid))
				continue;
			if (kids[i] & KID_TREE) {
				ALLOC_GROW(b->stack, b->stack_nr + 1, b->stack_alloc);
				b->stack[b->stack_nr++] = kid;
			} else if (writer_set_bit(w, &b->bits, kid)) {
				return GP_ENOMEM;
			}
		}
	}
	return 0;
}

/*
 * Into b->bits (reset first), everything the commits roots[0 .. nr]
 * reach. own: the commit whose bitmap is being built (it has none yet),
 * or NO_POS.
 */
static int fill_closure(struct bitmap_writer *w, struct build *b, const uint32_t *roots, size_t nr,
			uint32_t own)
{
	uint32_t epoch = ++w->next_epoch;
	int ret = 0;

	bitmap_reset(&b->bits);
	b->fresh_nr = 0;
	for (size_t i = 0; i < nr; i++) {
		if (w->commits[roots[i]].epoch == epoch)
			continue;
		w->commits[roots[i]].epoch = epoch;
		heap_push(w, b, roots[i]);
	}
	while (b->heap_nr) {
		uint32_t index = heap_pop(w, b);
		struct wcommit *c = &w->commits[index];
		if (bitmap_get(&b->bits, c->bit_pos))
			continue;
		if (index != own && c->selected != NO_POS) {
			/* built before (topological order): reuse it whole */
			if (bitmap_or_ewah(&b->bits, &w->bitmaps[c->selected]) < 0)
				return gp_error_set(w->err, GP_ENOMEM, "out of memory");
			continue;
		}
		if (c->old_row != NO_POS) {
			bool complete;
			ret = bitmap_reuse_or(w, &b->bits, c->old_row, &complete);
			if (ret)
				return ret;
			if (complete)
				continue;
			/* bitmap_reuse_covered() found it whole: the file changed under us */
			if (c->stub)
				return gp_error_set(w->err, GP_ECORRUPT, "the old bitmap of a commit"
						    " no longer reads as it did");
			c->old_row = NO_POS;  /* not again */
		}
		ret = writer_set_bit(w, &b->bits, c->bit_pos);
		if (ret)
			return ret;
		ALLOC_GROW(b->fresh, b->fresh_nr + 1, b->fresh_alloc);
		b->fresh[b->fresh_nr++] = index;
		for (uint32_t i = 0; i < c->nr_parents; i++) {
			uint32_t parent = w->parents[c->parents_start + i];
			if (w->commits[parent].epoch == epoch)
				continue;
			w->commits[parent].epoch = epoch;
			heap_push(w, b, parent);
		}
	}
	/* oldest first: each tree then mostly finds its subtrees present */
	for (size_t i = b->fresh_nr; i-- > 0 && !ret;)
		ret = walk_trees(w, b, w->commits[b->fresh[i]].tree_pos);
	return ret;
}

static int build_one(struct bitmap_writer *w, struct build *b, uint32_t sel_index)
{
	uint32_t root = w->selected[sel_index];
	int ret = fill_closure(w, b, &root, 1, root);
	if (ret)
		return ret;
	if (bitmap_to_ewah(&w->bitmaps[sel_index], &b->bits) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

static int build_bitmaps(struct bitmap_writer *w)
{
	struct build b = { 0 };
	struct progress *progress;
	uint32_t *order = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
	int ret = 0;

	struct keyed *keys = xmalloc(sizeof(*keys) * (w->nr_selected ? w->nr_selected : 1));

	/* parents first */
	for (uint32_t i = 0; i < w->nr_selected; i++) {
		keys[i].major = w->commits[w->selected[i]].topo;
		keys[i].minor = 0;
		keys[i].item = i;
	}
	writer_sort_keyed(order, keys, w->nr_selected);
	w->bitmaps = xcalloc(w->nr_selected ? w->nr_selected : 1, sizeof(*w->bitmaps));
	bitmap_init(&b.bits);
	if (bitmap_grow(&b.bits, ((size_t)w->nr + 63) / 64) < 0) {
		ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		goto out;
	}
	progress = progress_start("Building bitmaps", w->nr_selected, w->opts->progress);
	for (uint32_t i = 0; i < w->nr_selected && !ret; i++) {
		ret = build_one(w, &b, order[i]);
		progress_update(progress, i + 1);
	}
	progress_stop(&progress);
out:
	free(order);
	bitmap_release(&b.bits);
	free(b.heap);
	free(b.fresh);
	free(b.stack);
	return ret;
}

/* ---- pseudo-merges ------------------------------------------------- */

/* The candidates of each (group, captures), as the refs list them. */
static int plan_pseudo_merges(struct bitmap_writer *w, struct pseudo_merge_plan *plan)
{
	const struct bitmap_write_opts *o = w->opts;
	struct pseudo_merge_candidate *cands = NULL;
	size_t nr_cands, alloc_cands = 0;
	uint32_t *bucket_of = xcalloc(w->nr_commits ? w->nr_commits : 1, sizeof(uint32_t));
	uint32_t bucket = 0;
	int ret = 0;

	for (size_t i = 0, j; i < o->nr_pseudo_refs && !ret; i = j) {
		const struct pseudo_merge_ref *first = &o->pseudo_refs[i];
		bucket++;
		nr_cands = 0;
		for (j = i; j < o->nr_pseudo_refs; j++) {
			const struct pseudo_merge_ref *r = &o->pseudo_refs[j];
			uint32_t bit_pos, index;
			if (r->group != first->group || strcmp(r->captures, first->captures))
				break;
			ret = bitmap_select_peel_tip(w, &r->oid, &bit_pos);
			if (ret)
				break;
			/* not a commit, or one the bitmap cannot cover: left out */
			if (bit_pos == NO_POS || bit_pos == OUTSIDE_POS ||
			    (index = w->commit_of_bit[bit_pos]) == NO_POS || bucket_of[index] == bucket)
				continue;
			bucket_of[index] = bucket;
			ALLOC_GROW(cands, nr_cands + 1, alloc_cands);
			cands[nr_cands].item = index;
			cands[nr_cands].tiebreak = bit_pos;
			cands[nr_cands].date = w->commits[index].date > (uint64_t)INT64_MAX
				? INT64_MAX : (int64_t)w->commits[index].date;
			cands[nr_cands++].bitmapped = w->commits[index].selected != NO_POS;
		}
		if (!ret)
			pseudo_merge_plan_add(plan, &o->pseudo_merges->groups[first->group],
					      cands, nr_cands);
	}
	free(cands);
	free(bucket_of);
	return ret;
}

static int build_pseudo_merges(struct bitmap_writer *w)
{
	const struct bitmap_write_opts *o = w->opts;
	struct pseudo_merge_plan plan = PSEUDO_MERGE_PLAN_INIT;
	struct build b = { 0 };
	uint32_t *bit_pos = NULL;
	size_t alloc_bit_pos = 0;
	uint32_t walks_reused = bitmap_reuse_nr_reused(w);
	int ret;

	if (!o->pseudo_merges || !o->pseudo_merges->nr || o->base_objects)
		return 0;
	trace2_region_enter("pack-bitmap-write", "building_pseudo_merge_bitmaps");
	ret = plan_pseudo_merges(w, &plan);
	if (ret || !plan.nr_merges)
		goto out;
	bitmap_init(&b.bits);
	if (bitmap_grow(&b.bits, ((size_t)w->nr + 63) / 64) < 0) {
		ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		goto out;
	}
	w->pseudo = xcalloc(plan.nr_merges, sizeof(*w->pseudo));
	for (size_t m = 0; m < plan.nr_merges && !ret; m++) {
		size_t start = m ? plan.ends[m - 1] : 0, nr = plan.ends[m] - start;
		const uint32_t *items = plan.items + start;
		struct pseudo_merge_bitmaps *pm = &w->pseudo[w->nr_pseudo++];
		bool reused = false;
		ALLOC_GROW(bit_pos, nr, alloc_bit_pos);
		for (size_t i = 0; i < nr; i++)
			bit_pos[i] = w->commits[items[i]].bit_pos;
		qsort(bit_pos, nr, sizeof(uint32_t), writer_cmp_u32);
		for (size_t i = 0; i < nr && !ret; i++)
			if (ewah_set(&pm->commits, bit_pos[i]) < 0)
				ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		if (!ret)
			ret = bitmap_reuse_pseudo(w, &b.bits, bit_pos, nr, &reused);
		if (!ret && !reused)
			ret = fill_closure(w, &b, items, nr, NO_POS);
		if (!ret && bitmap_to_ewah(&pm->objects, &b.bits) < 0)
			ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		w->nr_pseudo_reused += reused;
	}
	trace2_data_intmax("pack-bitmap-write", "building_bitmaps_pseudo_merge_reused",
			   (int64_t)w->nr_pseudo_reused);
out:
	trace2_region_leave("pack-bitmap-write", "building_pseudo_merge_bitmaps");
	/* "Bitmaps reused" counts the commits' bitmaps, not what this borrowed */
	bitmap_reuse_set_nr_reused(w, walks_reused);
	free(bit_pos);
	bitmap_release(&b.bits);
	free(b.heap);
	free(b.fresh);
	free(b.stack);
	pseudo_merge_plan_release(&plan);
	return ret;
}

/* ---- XOR compression, in threads ---------------------------------- */

struct xor_job {
	struct bitmap_writer *w;
	struct ewah *out;        /* by selected index */
	uint8_t *offsets;
	uint32_t first, step;
	int ret;
};

static void *xor_worker(void *data)
{
	struct xor_job *job = data;
	struct bitmap_writer *w = job->w;
	struct ewah tmp = EWAH_INIT;
	for (uint32_t i = job->first; i < w->nr_selected; i += job->step) {
		size_t best = ewah_serialized_size(&w->bitmaps[i]);
		uint8_t best_offset = 0;
		for (uint32_t offset = 1; offset <= XOR_WINDOW && offset <= i; offset++) {
			if (ewah_xor(&tmp, &w->bitmaps[i], &w->bitmaps[i - offset]) < 0) {
				job->ret = GP_ENOMEM;
				goto out;
			}
			if (ewah_serialized_size(&tmp) < best) {
				best = ewah_serialized_size(&tmp);
				best_offset = (uint8_t)offset;
				ewah_release(&job->out[i]);
				job->out[i] = tmp;
				ewah_init(&tmp);
			}
		}
		job->offsets[i] = best_offset;
	}
out:
	ewah_release(&tmp);
	return NULL;
}

static int compress_xor(struct bitmap_writer *w, struct ewah *out, uint8_t *offsets)
{
	struct xor_job jobs[MAX_THREADS];
	int nr_jobs = w->threads;
	int ret = 0;
	if (w->nr_selected < 64)
		nr_jobs = 1;
	for (int i = 0; i < nr_jobs; i++) {
		jobs[i].w = w;
		jobs[i].out = out;
		jobs[i].offsets = offsets;
		jobs[i].first = (uint32_t)i;
		jobs[i].step = (uint32_t)nr_jobs;
		jobs[i].ret = 0;
	}
	run_parallel(xor_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
	for (int i = 0; i < nr_jobs; i++)
		if (jobs[i].ret)
			ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return ret;
}

/* ---- the file ------------------------------------------------------ */

static int write_to_hashfile(void *data, const void *buf, size_t len)
{
	hashfile_write(data, buf, len);
	return 0;
}

static int write_ewah(struct bitmap_writer *w, struct hashfile *f, const struct ewah *e)
{
	int ret = ewah_serialize_to(e, write_to_hashfile, f);
	if (ret)
		return gp_error_set(w->err, GP_EIO, "bitmap too large to serialize: %s",
				    ewah_strerror(ret));
	return 0;
}

static int write_file(struct bitmap_writer *w, struct bitmap_write_stats *stats)
{
	struct hashfile *f = NULL;
	struct ewah *xored = xcalloc(w->nr_selected ? w->nr_selected : 1, sizeof(*xored));
	uint8_t *offsets = xcalloc(w->nr_selected ? w->nr_selected : 1, 1);
	uint64_t *entry_ofs = xcalloc(w->nr_selected ? w->nr_selected : 1, sizeof(*entry_ofs));
	uint32_t *rows = NULL, *row_of = NULL;
	char *path = bitmap_order_bitmap_path(w->order);
	unsigned flags = BITMAP_OPT_FULL_DAG;
	unsigned char header[12];
	size_t rawsz = gp_hash_algos[w->algo].rawsz;
	int ret;

	ret = compress_xor(w, xored, offsets);
	if (ret)
		goto out;
	if (w->hashes)
		flags |= BITMAP_OPT_HASH_CACHE;
	if (w->opts->lookup_table)
		flags |= BITMAP_OPT_LOOKUP_TABLE;
	if (w->nr_pseudo)
		flags |= BITMAP_OPT_PSEUDO_MERGES;
	ret = hashfile_create(&f, path, w->algo, w->err);
	if (ret)
		goto out;
	put_be32(header, BITMAP_SIGNATURE);
	header[4] = 0;
	header[5] = BITMAP_VERSION;
	header[6] = (unsigned char)(flags >> 8);
	header[7] = (unsigned char)flags;
	put_be32(header + 8, (uint32_t)w->nr_selected);
	hashfile_write(f, header, sizeof(header));
	hashfile_write(f, bitmap_order_checksum(w->order), rawsz);

	for (enum object_type type = OBJ_COMMIT; type <= OBJ_TAG && !ret; type++) {
		struct ewah e = EWAH_INIT;
		for (uint32_t bit_pos = w->opts->base_objects; bit_pos < w->nr && !ret; bit_pos++)
			if (w->types[bit_pos] == type && ewah_set(&e, bit_pos) < 0)
				ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		if (!ret)
			ret = write_ewah(w, f, &e);
		ewah_release(&e);
	}
	for (uint32_t i = 0; i < w->nr_selected && !ret; i++) {
		unsigned char entry[BITMAP_ENTRY_HEADER_SIZE];
		const struct wcommit *c = &w->commits[w->selected[i]];
		entry_ofs[i] = hashfile_total(f);
		put_be32(entry, bitmap_order_bit_to_index(w->order, c->bit_pos));
		entry[4] = offsets[i];
		entry[5] = 0;
		hashfile_write(f, entry, sizeof(entry));
		ret = write_ewah(w, f, offsets[i] ? &xored[i] : &w->bitmaps[i]);
	}
	if (!ret && w->nr_pseudo)
		ret = pseudo_merge_write(f, w->pseudo, w->nr_pseudo, w->err);
	if (!ret && w->opts->lookup_table) {
		trace2_region_enter("pack-bitmap-write", "writing_lookup_table");
		rows = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
		row_of = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
		struct keyed *keys = xmalloc(sizeof(*keys) * (w->nr_selected ? w->nr_selected : 1));
		/* the lookup table lists entries by index_pos */
		for (uint32_t i = 0; i < w->nr_selected; i++) {
			keys[i].major = bitmap_order_bit_to_index(w->order,
								 w->commits[w->selected[i]].bit_pos);
			keys[i].minor = 0;
			keys[i].item = i;
		}
		writer_sort_keyed(rows, keys, w->nr_selected);
		for (uint32_t row = 0; row < w->nr_selected; row++)
			row_of[rows[row]] = row;
		for (uint32_t row = 0; row < w->nr_selected; row++) {
			uint32_t i = rows[row];
			hashfile_write_be32(f, bitmap_order_bit_to_index(w->order,
									 w->commits[w->selected[i]].bit_pos));
			hashfile_write_be64(f, entry_ofs[i]);
			hashfile_write_be32(f, offsets[i] ? row_of[i - offsets[i]] : BITMAP_NO_XOR_ROW);
		}
		trace2_region_leave("pack-bitmap-write", "writing_lookup_table");
	}
	if (!ret && w->hashes)
		for (uint32_t index_pos = w->opts->base_objects; index_pos < w->nr; index_pos++)
			hashfile_write_be32(f, w->hashes[bitmap_order_index_to_bit(w->order, index_pos)]);
	if (ret) {
		hashfile_abort(f);
		goto out;
	}
	if (stats)
		stats->file_size = hashfile_total(f) + rawsz;
	ret = hashfile_commit(f, NULL, 0, w->err);
out:
	for (uint32_t i = 0; i < w->nr_selected; i++)
		ewah_release(&xored[i]);
	free(xored);
	free(offsets);
	free(entry_ofs);
	free(rows);
	free(row_of);
	free(path);
	return ret;
}

int bitmap_write(struct bitmap_order *order, struct odb *odb,
		 const struct bitmap_write_opts *opts,
		 struct bitmap_write_stats *stats, struct gp_error *err)
{
	struct bitmap_writer w = { 0 };
	int ret;

	w.order = order;
	w.odb = odb;
	w.opts = opts;
	w.err = err;
	w.algo = odb_algo(odb);
	w.nr = bitmap_order_nr(order);
	w.threads = opts->threads > 0 ? opts->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (w.threads < 1)
		w.threads = 1;
	if (w.threads > MAX_THREADS)
		w.threads = MAX_THREADS;
	w.reader = pack_reader_new(64 << 20);
	if (opts->hash_cache)
		w.hashes = xcalloc(w.nr ? w.nr : 1, sizeof(*w.hashes));

	if (!opts->fresh)
		bitmap_reuse_open(&w);
	writer_table_build(&w, bitmap_reuse_layer_walk(&w) ? opts->base_objects : 0);
	ret = read_types(&w);
	if (ret)
		goto out;
	if (w.reuse) {
		w.kids = xcalloc(w.nr ? w.nr : 1, sizeof(*w.kids));
		ret = commit_graph(&w);
		if (!ret)
			ret = build_bitmaps(&w);
		if (!ret)
			bitmap_trees_finish_hashes(&w);
	} else {
		ret = bitmap_trees_resolve(&w, commit_graph);
		if (!ret)
			ret = build_bitmaps(&w);
	}
	if (!ret)
		ret = build_pseudo_merges(&w);
	if (!ret)
		ret = write_file(&w, stats);
	/* Says whether the cheap path was taken: t7700 and operators look. */
	if (!ret && w.reuse && opts->progress)
		fprintf(stderr, "Bitmaps reused: %" PRIu32 " of %" PRIu32 "\n",
			bitmap_reuse_nr_reused(&w), (uint32_t)w.nr_selected);
	if (stats) {
		stats->nr_commits = (uint32_t)w.nr_commits;
		stats->nr_selected = (uint32_t)w.nr_selected;
		stats->nr_reused = bitmap_reuse_nr_reused(&w);
		stats->nr_pseudo_merges = (uint32_t)w.nr_pseudo;
		stats->nr_pseudo_merges_reused = w.nr_pseudo_reused;
	}
out:
	for (size_t i = 0; w.bitmaps && i < w.nr_selected; i++)
		ewah_release(&w.bitmaps[i]);
	free(w.bitmaps);
	for (size_t i = 0; i < w.nr_pseudo; i++) {
		ewah_release(&w.pseudo[i].commits);
		ewah_release(&w.pseudo[i].objects);
	}
	free(w.pseudo);
	free(w.types);
	free(w.table.slots);
	free(w.kids);
	free(w.ofs);
	free(w.ranges);
	free(w.tree_bits);
	free(w.child_start);
	free(w.children);
	bitmap_trees_release(&w);
	free(w.commit_of_bit);
	free(w.commits);
	free(w.parents);
	free(w.selected);
	free(w.hashes);
	bitmap_reuse_free(&w);
	pack_reader_free(w.reader);
	return ret;
}

