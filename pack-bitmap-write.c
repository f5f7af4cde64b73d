/*
 * pack-bitmap-write.c: building and writing reachability bitmaps
 * (pack-bitmap-write.h).
 */
#include "pack-bitmap-write.h"
#include "commit.h"
#include "error.h"
#include "ewah/ewah.h"
#include "hashfile.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "packfile.h"
#include "progress.h"
#include "strbuf.h"
#include "tree.h"

#include <pthread.h>
#include <unistd.h>

/* Selection windows (see the header). */
#define MUST_REGION 100
#define MIN_REGION 20000
#define MIN_STEP 100
#define MAX_STEP 5000
/* How many earlier entries a bitmap may be XORed against. */
#define XOR_WINDOW 10

#define NO_POS UINT32_MAX

/* oid -> bit_pos, keyed by the first 8 bytes; the full name is checked. */
struct pos_table {
	uint64_t *keys;
	uint32_t *vals;
	size_t mask;
};

struct wcommit {
	uint32_t bit_pos;
	uint32_t tree_pos;
	uint64_t date;
	uint32_t parents_start, nr_parents; /* in writer.parents */
	uint32_t topo;     /* parents before children */
	uint32_t selected; /* index in writer.selected, or NO_POS */
	uint32_t epoch;    /* last build that queued it */
	bool is_tip, preferred;
};

struct writer {
	struct bitmap_order *order;
	struct odb *odb;
	const struct bitmap_write_opts *opts;
	struct gp_error *err;
	int algo;
	uint32_t nr;
	uint8_t *types;            /* by bit_pos */
	struct pos_table table;
	uint32_t *commit_of_bit;   /* bit_pos -> commit index, NO_POS */
	struct wcommit *commits;
	size_t nr_commits, alloc_commits;
	uint32_t *parents;         /* bit_pos while reading, then commit index */
	size_t nr_parents, alloc_parents;
	uint32_t *selected;        /* commit indices, in file order */
	size_t nr_selected, alloc_selected;
	struct ewah *bitmaps;      /* by index in selected */
	uint32_t *hashes;          /* by bit_pos */
	struct bitmap named;
	struct pack_reader *reader;
	int threads;
};

static uint64_t oid_key(const unsigned char *hash)
{
	uint64_t key;
	memcpy(&key, hash, sizeof(key));
	return key;
}

static void table_build(struct writer *w)
{
	size_t size = 64;
	struct object_id oid;
	while (size < 2 * (size_t)w->nr)
		size *= 2;
	w->table.keys = xmalloc(size * sizeof(*w->table.keys));
	w->table.vals = xmalloc(size * sizeof(*w->table.vals));
	memset(w->table.vals, 0xff, size * sizeof(*w->table.vals));
	w->table.mask = size - 1;
	for (uint32_t bit_pos = 0; bit_pos < w->nr; bit_pos++) {
		uint64_t key;
		size_t slot;
		bitmap_order_oid(w->order, bit_pos, &oid);
		key = oid_key(oid.hash);
		slot = (size_t)(key ^ (key >> 29)) & w->table.mask;
		while (w->table.vals[slot] != NO_POS)
			slot = (slot + 1) & w->table.mask;
		w->table.keys[slot] = key;
		w->table.vals[slot] = bit_pos;
	}
}

static bool table_find(const struct writer *w, const struct object_id *oid, uint32_t *bit_pos)
{
	uint64_t key = oid_key(oid->hash);
	size_t slot = (size_t)(key ^ (key >> 29)) & w->table.mask;
	for (; w->table.vals[slot] != NO_POS; slot = (slot + 1) & w->table.mask) {
		struct object_id found;
		if (w->table.keys[slot] != key)
			continue;
		bitmap_order_oid(w->order, w->table.vals[slot], &found);
		if (oideq(&found, oid)) {
			*bit_pos = w->table.vals[slot];
			return true;
		}
	}
	return false;
}

/* ---- types, in threads ------------------------------------------- */

struct type_job {
	struct writer *w;
	uint32_t start, end;
	int ret;
	struct gp_error err;
};

static void *type_worker(void *data)
{
	struct type_job *job = data;
	for (uint32_t bit_pos = job->start; bit_pos < job->end; bit_pos++) {
		struct pack_object_info info;
		struct packed_git *p;
		uint64_t ofs;
		bitmap_order_locate(job->w->order, bit_pos, &p, &ofs);
		job->ret = pack_object_info(p, ofs, &info, false, &job->err);
		if (job->ret)
			break;
		if (info.type < OBJ_COMMIT || info.type > OBJ_TAG) {
			job->ret = CORRUPT(&job->err, "%s: object at offset %llu has type %d",
					   p->pack_path, (unsigned long long)ofs, (int)info.type);
			break;
		}
		job->w->types[bit_pos] = (uint8_t)info.type;
	}
	return NULL;
}

static int read_types(struct writer *w)
{
	struct type_job jobs[16];
	pthread_t tids[16];
	bool started[16] = { false };
	int nr_jobs = w->threads > 16 ? 16 : w->threads;
	int ret = 0;
	if (w->nr < 65536)
		nr_jobs = 1;
	w->types = xmalloc(w->nr ? w->nr : 1);
	for (int i = 0; i < nr_jobs; i++) {
		jobs[i].w = w;
		jobs[i].start = (uint32_t)((uint64_t)w->nr * (uint64_t)i / (uint64_t)nr_jobs);
		jobs[i].end = (uint32_t)((uint64_t)w->nr * (uint64_t)(i + 1) / (uint64_t)nr_jobs);
		jobs[i].ret = 0;
		jobs[i].err = (struct gp_error)GP_ERROR_INIT;
	}
	for (int i = 1; i < nr_jobs; i++)
		started[i] = !pthread_create(&tids[i], NULL, type_worker, &jobs[i]);
	type_worker(&jobs[0]);
	for (int i = 1; i < nr_jobs; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			type_worker(&jobs[i]);
	}
	for (int i = 0; i < nr_jobs; i++) {
		if (jobs[i].ret && !ret) {
			ret = jobs[i].ret;
			gp_error_set(w->err, ret, "%s", gp_error_msg(&jobs[i].err));
		}
		gp_error_clear(&jobs[i].err);
	}
	return ret;
}

/* ---- the commit graph --------------------------------------------- */

static int read_at(struct writer *w, uint32_t bit_pos, enum object_type want,
		   unsigned char **data, size_t *size)
{
	struct packed_git *p;
	enum object_type type;
	struct object_id oid;
	char hex[GP_MAX_HEXSZ + 1];
	uint64_t ofs;
	int ret;
	bitmap_order_locate(w->order, bit_pos, &p, &ofs);
	ret = pack_read_object(w->reader, p, ofs, &type, data, size, w->err);
	if (ret)
		return ret;
	if (type != want) {
		free(*data);
		*data = NULL;
		bitmap_order_oid(w->order, bit_pos, &oid);
		return CORRUPT(w->err, "object %s is a %s, not a %s", oid_to_hex_r(hex, &oid),
			       type_name(type), type_name(want));
	}
	return 0;
}

static int not_in_order(struct writer *w, const struct object_id *oid, const char *what)
{
	char hex[GP_MAX_HEXSZ + 1];
	return gp_error_set(w->err, GP_ENOTFOUND,
			    "%s %s is reachable but not in the bitmapped pack or MIDX "
			    "(a bitmap must cover everything reachable)",
			    what, oid_to_hex_r(hex, oid));
}

/* The commit at bit_pos: its index, adding (and reading) it when new. */
static int add_commit(struct writer *w, uint32_t bit_pos, uint32_t *index)
{
	struct commit_info info = COMMIT_INFO_INIT;
	struct wcommit *c;
	unsigned char *data = NULL;
	size_t size;
	uint32_t tree_pos;
	int ret;

	if (w->commit_of_bit[bit_pos] != NO_POS) {
		*index = w->commit_of_bit[bit_pos];
		return 0;
	}
	ret = read_at(w, bit_pos, OBJ_COMMIT, &data, &size);
	if (ret)
		return ret;
	ret = commit_parse(data, size, w->algo, &info, w->err);
	free(data);
	if (ret) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, bit_pos, &oid);
		return gp_error_prefix(w->err, "commit %s", oid_to_hex_r(hex, &oid));
	}
	if (!table_find(w, &info.tree, &tree_pos)) {
		ret = not_in_order(w, &info.tree, "tree");
		goto out;
	}
	ALLOC_GROW(w->commits, w->nr_commits + 1, w->alloc_commits);
	c = &w->commits[w->nr_commits];
	memset(c, 0, sizeof(*c));
	c->bit_pos = bit_pos;
	c->tree_pos = tree_pos;
	c->date = info.date;
	c->selected = NO_POS;
	c->topo = NO_POS;
	c->parents_start = (uint32_t)w->nr_parents;
	c->nr_parents = (uint32_t)info.nr_parents;
	for (size_t i = 0; i < info.nr_parents; i++) {
		uint32_t parent_pos;
		if (!table_find(w, &info.parents[i], &parent_pos)) {
			ret = not_in_order(w, &info.parents[i], "commit");
			goto out;
		}
		ALLOC_GROW(w->parents, w->nr_parents + 1, w->alloc_parents);
		w->parents[w->nr_parents++] = parent_pos;
	}
	*index = (uint32_t)w->nr_commits;
	w->commit_of_bit[bit_pos] = (uint32_t)w->nr_commits++;
out:
	commit_info_release(&info);
	return ret;
}

/* Peel a tip to a commit; NO_POS when it is not one. */
static int peel_tip(struct writer *w, const struct object_id *tip, uint32_t *bit_pos)
{
	struct object_id oid = *tip;
	for (int depth = 0; depth < 100; depth++) {
		struct tag_info tag;
		unsigned char *data;
		size_t size;
		int ret;
		if (!table_find(w, &oid, bit_pos))
			return not_in_order(w, &oid, "ref tip");
		if (w->types[*bit_pos] == OBJ_COMMIT)
			return 0;
		if (w->types[*bit_pos] != OBJ_TAG) {
			*bit_pos = NO_POS;
			return 0;
		}
		ret = read_at(w, *bit_pos, OBJ_TAG, &data, &size);
		if (ret)
			return ret;
		ret = tag_parse(data, size, w->algo, &tag, w->err);
		if (!ret)
			oid = tag.object;
		free(data);
		if (ret)
			return ret;
	}
	*bit_pos = NO_POS;
	return 0;
}

static int read_commits(struct writer *w)
{
	uint32_t *stack = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	w->commit_of_bit = xmalloc(sizeof(uint32_t) * (w->nr ? w->nr : 1));
	memset(w->commit_of_bit, 0xff, sizeof(uint32_t) * (w->nr ? w->nr : 1));
	for (size_t i = 0; i < w->opts->nr_tips && !ret; i++) {
		uint32_t bit_pos, index;
		ret = peel_tip(w, &w->opts->tips[i].oid, &bit_pos);
		if (ret || bit_pos == NO_POS)
			continue;
		ret = add_commit(w, bit_pos, &index);
		if (ret)
			break;
		w->commits[index].is_tip = true;
		if (w->opts->tips[i].preferred)
			w->commits[index].preferred = true;
		ALLOC_GROW(stack, nr + 1, alloc);
		stack[nr++] = index;
	}
	while (nr && !ret) {
		uint32_t index = stack[--nr];
		uint32_t start = w->commits[index].parents_start;
		uint32_t count = w->commits[index].nr_parents;
		for (uint32_t i = 0; i < count && !ret; i++) {
			uint32_t parent_pos = w->parents[start + i];
			uint32_t parent;
			if (w->commit_of_bit[parent_pos] != NO_POS)
				continue;
			ret = add_commit(w, parent_pos, &parent);
			if (ret)
				break;
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr++] = parent;
		}
	}
	free(stack);
	if (ret)
		return ret;
	/* parents: bit_pos -> commit index */
	for (size_t i = 0; i < w->nr_parents; i++)
		w->parents[i] = w->commit_of_bit[w->parents[i]];
	return 0;
}

/* Number the commits so that parents come before children. */
static void topo_sort(struct writer *w)
{
	struct frame { uint32_t index, next_parent; } *stack = NULL;
	size_t nr = 0, alloc = 0;
	uint32_t counter = 0;
	for (size_t root = 0; root < w->nr_commits; root++) {
		if (w->commits[root].topo != NO_POS)
			continue;
		w->commits[root].topo = NO_POS - 1; /* on the stack */
		ALLOC_GROW(stack, nr + 1, alloc);
		stack[nr].index = (uint32_t)root;
		stack[nr++].next_parent = 0;
		while (nr) {
			struct frame *f = &stack[nr - 1];
			struct wcommit *c = &w->commits[f->index];
			if (f->next_parent < c->nr_parents) {
				uint32_t parent = w->parents[c->parents_start + f->next_parent++];
				if (w->commits[parent].topo != NO_POS)
					continue;
				w->commits[parent].topo = NO_POS - 1;
				ALLOC_GROW(stack, nr + 1, alloc);
				stack[nr].index = parent;
				stack[nr++].next_parent = 0;
				continue;
			}
			c->topo = counter++;
			nr--;
		}
	}
	free(stack);
}

/* ---- selection ----------------------------------------------------- */

static const struct writer *sort_writer;

static int cmp_newest(const void *a, const void *b)
{
	const struct wcommit *x = &sort_writer->commits[*(const uint32_t *)a];
	const struct wcommit *y = &sort_writer->commits[*(const uint32_t *)b];
	if (x->date != y->date)
		return x->date > y->date ? -1 : 1;
	return x->bit_pos < y->bit_pos ? -1 : x->bit_pos > y->bit_pos;
}

static void sort_newest_first(const struct writer *w, uint32_t *list, size_t nr)
{
	sort_writer = w;
	qsort(list, nr, sizeof(*list), cmp_newest);
	sort_writer = NULL;
}

static size_t window_after(size_t seen)
{
	size_t step;
	if (seen <= MUST_REGION)
		return 0;
	if (seen <= MIN_REGION) {
		step = seen - MUST_REGION;
		return step < MIN_STEP ? step : MIN_STEP;
	}
	step = seen - MIN_REGION;
	if (step > MAX_STEP)
		step = MAX_STEP;
	return step > MIN_STEP ? step : MIN_STEP;
}

static void select_commit(struct writer *w, uint32_t index)
{
	if (w->commits[index].selected != NO_POS)
		return;
	ALLOC_GROW(w->selected, w->nr_selected + 1, w->alloc_selected);
	w->commits[index].selected = (uint32_t)w->nr_selected;
	w->selected[w->nr_selected++] = index;
}

static void select_commits(struct writer *w)
{
	uint32_t *by_date = xmalloc(sizeof(uint32_t) * (w->nr_commits ? w->nr_commits : 1));
	size_t nr_tips = 0;
	for (uint32_t i = 0; i < w->nr_commits; i++)
		by_date[i] = i;
	sort_newest_first(w, by_date, w->nr_commits);

	for (size_t i = 0; i < w->nr_commits; i++)
		nr_tips += w->commits[i].is_tip;
	for (size_t i = 0; i < w->nr_commits; i++) {
		struct wcommit *c = &w->commits[by_date[i]];
		if (c->preferred || (c->is_tip && nr_tips <= BITMAP_ALL_TIPS_LIMIT))
			select_commit(w, by_date[i]);
	}
	if (w->nr_commits <= MUST_REGION) {
		for (size_t i = 0; i < w->nr_commits; i++)
			select_commit(w, by_date[i]);
	} else {
		size_t i = 0;
		for (;;) {
			size_t next = window_after(i), chosen;
			if (i + next >= w->nr_commits)
				break;
			chosen = i + next;
			for (size_t j = i; j < i + next; j++)
				if (w->commits[by_date[j]].is_tip) {
					chosen = j;
					break;
				}
			select_commit(w, by_date[chosen]);
			i += next + 1;
		}
	}
	free(by_date);

	/* File order: newest first, so neighbours are alike for XOR. */
	sort_newest_first(w, w->selected, w->nr_selected);
	for (size_t i = 0; i < w->nr_selected; i++)
		w->commits[w->selected[i]].selected = (uint32_t)i;
}

/* ---- building ------------------------------------------------------ */

struct build {
	struct bitmap bits;
	uint32_t *heap;            /* commit indices, max topo on top */
	size_t heap_nr, heap_alloc;
	uint32_t *fresh;           /* commits whose trees must be walked */
	size_t fresh_nr, fresh_alloc;
	struct tree_frame {
		uint32_t bit_pos;
		char *path;
	} *stack;
	size_t stack_nr, stack_alloc;
	struct strbuf path;
};

static void heap_push(struct writer *w, struct build *b, uint32_t index)
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

static uint32_t heap_pop(struct writer *w, struct build *b)
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

static void name_object(struct writer *w, uint32_t bit_pos, const char *path)
{
	if (!w->hashes || bitmap_get(&w->named, bit_pos))
		return;
	bitmap_set(&w->named, bit_pos);
	w->hashes[bit_pos] = bitmap_name_hash(path);
}

static int set_bit(struct writer *w, struct bitmap *bits, uint32_t bit_pos)
{
	if (bitmap_set(bits, bit_pos) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

static int push_tree(struct build *b, uint32_t bit_pos, const char *path)
{
	ALLOC_GROW(b->stack, b->stack_nr + 1, b->stack_alloc);
	b->stack[b->stack_nr].bit_pos = bit_pos;
	b->stack[b->stack_nr++].path = xstrdup(path);
	return 0;
}

static int walk_trees(struct writer *w, struct build *b, uint32_t root_pos)
{
	int ret = 0;
	if (bitmap_get(&b->bits, root_pos))
		return 0;
	push_tree(b, root_pos, "");
	while (b->stack_nr && !ret) {
		struct tree_frame frame = b->stack[--b->stack_nr];
		struct tree_iter it;
		struct tree_entry e;
		unsigned char *data = NULL;
		size_t size, dir_len;

		if (bitmap_get(&b->bits, frame.bit_pos)) {
			free(frame.path);
			continue;
		}
		ret = set_bit(w, &b->bits, frame.bit_pos);
		name_object(w, frame.bit_pos, frame.path);
		if (!ret)
			ret = read_at(w, frame.bit_pos, OBJ_TREE, &data, &size);
		if (ret) {
			free(frame.path);
			break;
		}
		strbuf_reset(&b->path);
		strbuf_addstr(&b->path, frame.path);
		if (b->path.len)
			strbuf_addch(&b->path, '/');
		dir_len = b->path.len;
		tree_iter_init(&it, data, size, w->algo);
		while ((ret = tree_iter_next(&it, &e, w->err)) > 0) {
			unsigned kind = e.mode & TREE_MODE_TYPE_MASK;
			enum object_type want = kind == TREE_MODE_DIR ? OBJ_TREE : OBJ_BLOB;
			uint32_t entry_pos;
			ret = 0;
			if (kind == TREE_MODE_GITLINK)
				continue;
			if (!table_find(w, &e.oid, &entry_pos)) {
				ret = not_in_order(w, &e.oid, type_name(want));
				break;
			}
			if (bitmap_get(&b->bits, entry_pos))
				continue;
			if (w->types[entry_pos] != want) {
				char hex[GP_MAX_HEXSZ + 1];
				ret = CORRUPT(w->err, "tree entry %s names %s, a %s, not a %s",
					      e.name, oid_to_hex_r(hex, &e.oid),
					      type_name((enum object_type)w->types[entry_pos]),
					      type_name(want));
				break;
			}
			strbuf_setlen(&b->path, dir_len);
			strbuf_add(&b->path, e.name, e.name_len);
			if (want == OBJ_TREE) {
				push_tree(b, entry_pos, b->path.buf);
			} else {
				ret = set_bit(w, &b->bits, entry_pos);
				name_object(w, entry_pos, b->path.buf);
				if (ret)
					break;
			}
		}
		free(data);
		free(frame.path);
	}
	while (b->stack_nr)
		free(b->stack[--b->stack_nr].path);
	return ret < 0 ? ret : 0;
}

static int build_one(struct writer *w, struct build *b, uint32_t sel_index, uint32_t epoch)
{
	uint32_t root = w->selected[sel_index];
	int ret = 0;

	bitmap_reset(&b->bits);
	b->fresh_nr = 0;
	w->commits[root].epoch = epoch;
	heap_push(w, b, root);
	while (b->heap_nr) {
		uint32_t index = heap_pop(w, b);
		struct wcommit *c = &w->commits[index];
		if (bitmap_get(&b->bits, c->bit_pos))
			continue;
		if (index != root && c->selected != NO_POS) {
			/* built before (topological order): reuse it whole */
			if (bitmap_or_ewah(&b->bits, &w->bitmaps[c->selected]) < 0)
				return gp_error_set(w->err, GP_ENOMEM, "out of memory");
			continue;
		}
		ret = set_bit(w, &b->bits, c->bit_pos);
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
	if (ret)
		return ret;
	if (bitmap_to_ewah(&w->bitmaps[sel_index], &b->bits) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

static int cmp_topo(const void *a, const void *b)
{
	const struct wcommit *x = &sort_writer->commits[sort_writer->selected[*(const uint32_t *)a]];
	const struct wcommit *y = &sort_writer->commits[sort_writer->selected[*(const uint32_t *)b]];
	return x->topo < y->topo ? -1 : x->topo > y->topo;
}

static int build_bitmaps(struct writer *w)
{
	struct build b = { 0 };
	struct progress *progress;
	uint32_t *order = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
	int ret = 0;

	for (uint32_t i = 0; i < w->nr_selected; i++)
		order[i] = i;
	sort_writer = w;
	qsort(order, w->nr_selected, sizeof(*order), cmp_topo);
	sort_writer = NULL;
	w->bitmaps = xcalloc(w->nr_selected ? w->nr_selected : 1, sizeof(*w->bitmaps));
	bitmap_init(&b.bits);
	strbuf_init(&b.path, 0);
	if (bitmap_grow(&b.bits, ((size_t)w->nr + 63) / 64) < 0) {
		ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		goto out;
	}
	progress = progress_start("Building bitmaps", w->nr_selected, w->opts->progress);
	for (uint32_t i = 0; i < w->nr_selected && !ret; i++) {
		ret = build_one(w, &b, order[i], i + 1);
		progress_update(progress, i + 1);
	}
	progress_stop(&progress);
out:
	free(order);
	bitmap_release(&b.bits);
	free(b.heap);
	free(b.fresh);
	free(b.stack);
	strbuf_release(&b.path);
	return ret;
}

/* ---- XOR compression, in threads ---------------------------------- */

struct xor_job {
	struct writer *w;
	struct ewah *out;        /* by selected index */
	uint8_t *offsets;
	uint32_t first, step;
	int ret;
};

static void *xor_worker(void *data)
{
	struct xor_job *job = data;
	struct writer *w = job->w;
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

static int compress_xor(struct writer *w, struct ewah *out, uint8_t *offsets)
{
	struct xor_job jobs[16];
	pthread_t tids[16];
	bool started[16] = { false };
	int nr_jobs = w->threads > 16 ? 16 : w->threads;
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
	for (int i = 1; i < nr_jobs; i++)
		started[i] = !pthread_create(&tids[i], NULL, xor_worker, &jobs[i]);
	xor_worker(&jobs[0]);
	for (int i = 1; i < nr_jobs; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			xor_worker(&jobs[i]);
	}
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

static int write_ewah(struct writer *w, struct hashfile *f, const struct ewah *e)
{
	int ret = ewah_serialize_to(e, write_to_hashfile, f);
	if (ret)
		return gp_error_set(w->err, GP_EIO, "bitmap too large to serialize: %s",
				    ewah_strerror(ret));
	return 0;
}

static const struct writer *row_writer;

static int cmp_row(const void *a, const void *b)
{
	uint32_t x = bitmap_order_bit_to_index(row_writer->order,
		row_writer->commits[row_writer->selected[*(const uint32_t *)a]].bit_pos);
	uint32_t y = bitmap_order_bit_to_index(row_writer->order,
		row_writer->commits[row_writer->selected[*(const uint32_t *)b]].bit_pos);
	return x < y ? -1 : x > y;
}

static int write_file(struct writer *w, struct bitmap_write_stats *stats)
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
		for (uint32_t bit_pos = 0; bit_pos < w->nr && !ret; bit_pos++)
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
	if (!ret && w->opts->lookup_table) {
		rows = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
		row_of = xmalloc(sizeof(uint32_t) * (w->nr_selected ? w->nr_selected : 1));
		for (uint32_t i = 0; i < w->nr_selected; i++)
			rows[i] = i;
		row_writer = w;
		qsort(rows, w->nr_selected, sizeof(*rows), cmp_row);
		row_writer = NULL;
		for (uint32_t row = 0; row < w->nr_selected; row++)
			row_of[rows[row]] = row;
		for (uint32_t row = 0; row < w->nr_selected; row++) {
			uint32_t i = rows[row];
			hashfile_write_be32(f, bitmap_order_bit_to_index(w->order,
									 w->commits[w->selected[i]].bit_pos));
			hashfile_write_be64(f, entry_ofs[i]);
			hashfile_write_be32(f, offsets[i] ? row_of[i - offsets[i]] : BITMAP_NO_XOR_ROW);
		}
	}
	if (!ret && w->hashes)
		for (uint32_t index_pos = 0; index_pos < w->nr; index_pos++)
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
	struct writer w = { 0 };
	struct progress *progress;
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
	w.reader = pack_reader_new(64 << 20);
	bitmap_init(&w.named);
	if (opts->hash_cache)
		w.hashes = xcalloc(w.nr ? w.nr : 1, sizeof(*w.hashes));

	table_build(&w);
	ret = read_types(&w);
	if (ret)
		goto out;
	progress = progress_start("Selecting bitmap commits", 0, opts->progress);
	ret = read_commits(&w);
	progress_update(progress, w.nr_commits);
	progress_stop(&progress);
	if (ret)
		goto out;
	topo_sort(&w);
	select_commits(&w);
	ret = build_bitmaps(&w);
	if (!ret)
		ret = write_file(&w, stats);
	if (stats) {
		stats->nr_commits = (uint32_t)w.nr_commits;
		stats->nr_selected = (uint32_t)w.nr_selected;
	}
out:
	for (size_t i = 0; w.bitmaps && i < w.nr_selected; i++)
		ewah_release(&w.bitmaps[i]);
	free(w.bitmaps);
	free(w.types);
	free(w.table.keys);
	free(w.table.vals);
	free(w.commit_of_bit);
	free(w.commits);
	free(w.parents);
	free(w.selected);
	free(w.hashes);
	bitmap_release(&w.named);
	pack_reader_free(w.reader);
	return ret;
}
