/*
 * pack-bitmap-write.c: building and writing reachability bitmaps
 * (pack-bitmap-write.h).
 */
#include "pack-bitmap-write.h"
#include "commit.h"
#include "commit-graph.h"
#include "config.h"
#include "delta.h"
#include "error.h"
#include "ewah/ewah.h"
#include "hashfile.h"
#include "midx.h"
#include "midx-write.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "packfile.h"
#include "progress.h"
#include "pseudo-merge.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include "trace2.h"
#include "tree.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Selection windows (see the header). */
#define MUST_REGION 100
#define MIN_REGION 20000
#define MIN_STEP 100
#define MAX_STEP 5000
/* How many earlier entries a bitmap may be XORed against. */
#define XOR_WINDOW 10

#define NO_POS UINT32_MAX
#define MAX_THREADS 16
#define OUTSIDE_POS (UINT32_MAX - 1) /* peel_tip(): not in the order */

/*
 * oid -> bit_pos. A slot holds the name's first 8 bytes, so a probe
 * touches one cache line; the whole name is then compared with the
 * .idx or MIDX. The hash is salted per process, so names chosen to
 * collide cannot make probing quadratic.
 */
struct pos_slot {
	uint64_t key;
	uint32_t index_pos; /* NO_POS: empty */
	uint32_t bit_pos;
};

struct pos_table {
	struct pos_slot *slots;
	size_t mask;
	uint64_t salt;
	size_t rawsz;
};

/* Consecutive bits held by one pack, by rising offset. */
struct pack_range {
	struct packed_git *pack;
	uint32_t start, end;
};

struct wcommit {
	uint32_t bit_pos;
	uint32_t tree_pos;
	uint64_t date;
	uint32_t parents_start, nr_parents; /* in writer.parents */
	uint32_t topo;     /* parents before children */
	uint32_t selected; /* index in writer.selected, or NO_POS */
	uint32_t epoch;    /* last build that queued it */
	uint32_t old_row;  /* its entry in the reused bitmap, or NO_POS */
	bool is_tip, preferred;
};

struct reuse;

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
	struct pack_reader *reader;  /* for the main thread */
	int threads;
	/*
	 * Each tree's entries, resolved once: kids[bit_pos][0] is their
	 * number, then each entry's bit_pos, KID_TREE set for subtrees.
	 */
	uint32_t **kids;
	/* pack order within each pack of the order (offsets by bit_pos) */
	uint64_t *ofs;
	struct pack_range *ranges;
	size_t nr_ranges, alloc_ranges;
	/* the trees, and the delta chains between them */
	uint32_t *tree_bits;
	size_t nr_trees, alloc_trees;
	uint32_t *child_start;       /* children of tree t: [child_start[t], child_start[t + 1]) */
	uint32_t *children;
	struct reuse *reuse;         /* the repository's bitmap, when worth reusing */
	uint32_t next_epoch;         /* for struct wcommit's epoch */
	struct pseudo_merge_bitmaps *pseudo;
	size_t nr_pseudo;
	uint32_t nr_pseudo_reused;
};

#define KID_TREE 0x80000000u

static uint64_t oid_key(const unsigned char *hash)
{
	uint64_t key;
	memcpy(&key, hash, sizeof(key));
	return key;
}

static size_t slot_of(const struct pos_table *t, uint64_t key)
{
	return (size_t)(((key ^ t->salt) * 0x9e3779b97f4a7c15ull) >> 20) & t->mask;
}

static void table_build(struct writer *w)
{
	struct pos_table *t = &w->table;
	size_t size = 64;
	while (size < 2 * (size_t)w->nr)
		size *= 2;
	t->slots = xmalloc(size * sizeof(*t->slots));
	for (size_t i = 0; i < size; i++)
		t->slots[i].index_pos = NO_POS;
	t->mask = size - 1;
	t->salt = (uint64_t)getpid() * 0xda942042e4dd58b5ull ^ (uint64_t)(uintptr_t)t;
	t->rawsz = gp_hash_algos[w->algo].rawsz;
	for (uint32_t index_pos = 0; index_pos < w->nr; index_pos++) {
		uint64_t key = oid_key(bitmap_order_index_oid_raw(w->order, index_pos));
		size_t slot = slot_of(t, key);
		while (t->slots[slot].index_pos != NO_POS)
			slot = (slot + 1) & t->mask;
		t->slots[slot].key = key;
		t->slots[slot].index_pos = index_pos;
		t->slots[slot].bit_pos = bitmap_order_index_to_bit(w->order, index_pos);
	}
}

static void table_prefetch(const struct writer *w, const unsigned char *hash)
{
	__builtin_prefetch(&w->table.slots[slot_of(&w->table, oid_key(hash))]);
}

static bool table_find_raw(const struct writer *w, const unsigned char *hash,
			   uint32_t *bit_pos)
{
	const struct pos_table *t = &w->table;
	uint64_t key = oid_key(hash);
	for (size_t slot = slot_of(t, key); t->slots[slot].index_pos != NO_POS;
	     slot = (slot + 1) & t->mask) {
		if (t->slots[slot].key != key ||
		    memcmp(bitmap_order_index_oid_raw(w->order, t->slots[slot].index_pos),
			   hash, t->rawsz))
			continue;
		*bit_pos = t->slots[slot].bit_pos;
		return true;
	}
	return false;
}

static bool table_find(const struct writer *w, const struct object_id *oid, uint32_t *bit_pos)
{
	return table_find_raw(w, oid->hash, bit_pos);
}

/* ---- types, in threads ------------------------------------------- */

struct type_job {
	struct writer *w;
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
static void drop_pages(struct writer *w)
{
	for (size_t i = 0; i < w->nr_ranges; i++)
		pack_drop_pages(w->ranges[i].pack);
}

static int read_types(struct writer *w)
{
	struct type_job jobs[MAX_THREADS];
	int nr_jobs = w->threads;
	int ret = 0;
	if (w->nr < 65536)
		nr_jobs = 1;
	w->types = xmalloc(w->nr ? w->nr : 1);
	w->ofs = xmalloc(sizeof(*w->ofs) * (w->nr ? w->nr : 1));
	for (int i = 0; i < nr_jobs; i++) {
		jobs[i].w = w;
		jobs[i].start = (uint32_t)((uint64_t)w->nr * (uint64_t)i / (uint64_t)nr_jobs);
		jobs[i].end = (uint32_t)((uint64_t)w->nr * (uint64_t)(i + 1) / (uint64_t)nr_jobs);
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
	drop_pages(w);
	return ret;
}

/* Where the object at bit_pos lies, from the runs found while typing. */
static void locate(const struct writer *w, uint32_t bit_pos, struct packed_git **pack,
		   uint64_t *ofs)
{
	size_t lo = 0, hi = w->nr_ranges;
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

/* ---- the commit graph --------------------------------------------- */

static int read_with(struct writer *w, struct pack_reader *reader, uint32_t bit_pos,
		     enum object_type want, unsigned char **data, size_t *size,
		     struct gp_error *err)
{
	struct packed_git *p;
	enum object_type type;
	struct object_id oid;
	char hex[GP_MAX_HEXSZ + 1];
	uint64_t ofs;
	int ret;
	locate(w, bit_pos, &p, &ofs);
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

static int read_at(struct writer *w, uint32_t bit_pos, enum object_type want,
		   unsigned char **data, size_t *size)
{
	return read_with(w, w->reader, bit_pos, want, data, size, w->err);
}

static int not_in_order(struct writer *w, const struct object_id *oid, const char *what)
{
	char hex[GP_MAX_HEXSZ + 1];
	return gp_error_set(w->err, GP_ENOTFOUND,
			    "%s %s is reachable but not in the bitmapped pack or MIDX "
			    "(a bitmap must cover everything reachable; as git says, it"
			    " doesn't have full closure)",
			    what, oid_to_hex_r(hex, oid));
}

/* The commit at bit_pos: its index, adding (and reading) it when new. */
/*
 * The commit at bit_pos from the commit-graph, into info: false when the
 * graph lacks it (or its entry is damaged: the object then decides).
 */
static bool commit_from_graph(struct writer *w, uint32_t bit_pos, struct commit_info *info)
{
	const struct commit_graph *g = w->opts->graph;
	struct gp_error ignored = GP_ERROR_INIT;
	struct commit_graph_entry e;
	struct object_id oid;
	uint32_t pos;

	if (!g)
		return false;
	bitmap_order_oid(w->order, bit_pos, &oid);
	if (!commit_graph_find(g, &oid, &pos))
		return false;
	if (commit_graph_entry_at(g, pos, &e, &ignored)) {
		gp_error_clear(&ignored);
		return false;
	}
	info->tree = e.tree;
	info->date = e.date;
	info->nr_parents = 0;
	for (uint32_t i = 0; i < e.nr_parents; i++) {
		uint32_t parent = commit_graph_parent(&e, i);
		if (parent >= commit_graph_nr_commits(g))
			return false;
		ALLOC_GROW(info->parents, info->nr_parents + 1, info->alloc_parents);
		commit_graph_oid(g, parent, &info->parents[info->nr_parents++]);
	}
	return true;
}

static int add_commit(struct writer *w, uint32_t bit_pos, uint32_t *index)
{
	struct commit_info info = COMMIT_INFO_INIT;
	struct wcommit *c;
	unsigned char *data = NULL;
	size_t size;
	uint32_t tree_pos;
	int ret = 0;

	if (w->commit_of_bit[bit_pos] != NO_POS) {
		*index = w->commit_of_bit[bit_pos];
		return 0;
	}
	if (!commit_from_graph(w, bit_pos, &info)) {
		info.nr_parents = 0;
		ret = read_at(w, bit_pos, OBJ_COMMIT, &data, &size);
		if (ret)
			return ret;
		ret = commit_parse(data, size, w->algo, &info, w->err);
		free(data);
	}
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
	c->old_row = NO_POS;
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
		if (!table_find(w, &oid, bit_pos)) {
			/* as git: no bitmap for it, but what it reaches counts */
			*bit_pos = OUTSIDE_POS;
			return 0;
		}
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

/*
 * A tip outside the pack or MIDX (say, a commit pushed since, still
 * loose): as git, walk on from it through the odb into the commits the
 * order holds, which are queued (unless known). Bounded: a tip leading
 * through more than OUTSIDE_LIMIT outside objects is left at that.
 */
#define OUTSIDE_LIMIT 100000

static int enter_from_outside(struct writer *w, const struct object_id *tip,
			      uint32_t **stack, size_t *nr, size_t *alloc)
{
	struct object_id *todo = NULL;
	size_t todo_nr = 0, todo_alloc = 0, steps = 0;
	int ret = 0;
	ALLOC_GROW(todo, 1, todo_alloc);
	todo[todo_nr++] = *tip;
	while (todo_nr && !ret && steps++ < OUTSIDE_LIMIT) {
		struct object_id oid = todo[--todo_nr];
		struct commit_info info = COMMIT_INFO_INIT;
		struct tag_info tag;
		enum object_type type;
		unsigned char *data;
		size_t size;
		uint32_t pos, index;
		if (table_find(w, &oid, &pos) && w->types[pos] == OBJ_COMMIT) {
			if (w->commit_of_bit[pos] != NO_POS)
				continue;
			ret = add_commit(w, pos, &index);
			if (!ret) {
				ALLOC_GROW(*stack, *nr + 1, *alloc);
				(*stack)[(*nr)++] = index;
			}
			continue;
		}
		if (odb_read_object(w->odb, &oid, &type, &data, &size, w->err)) {
			gp_error_clear(w->err); /* missing: nothing to walk on to */
			continue;
		}
		if (type == OBJ_TAG && !tag_parse(data, size, w->algo, &tag, w->err)) {
			ALLOC_GROW(todo, todo_nr + 1, todo_alloc);
			todo[todo_nr++] = tag.object;
		} else if (type == OBJ_COMMIT && !commit_parse(data, size, w->algo, &info, w->err)) {
			for (size_t i = 0; i < info.nr_parents; i++) {
				ALLOC_GROW(todo, todo_nr + 1, todo_alloc);
				todo[todo_nr++] = info.parents[i];
			}
			commit_info_release(&info);
		}
		gp_error_clear(w->err);
		free(data);
	}
	free(todo);
	return ret;
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
		if (!ret && bit_pos == OUTSIDE_POS)
			ret = enter_from_outside(w, &w->opts->tips[i].oid, &stack, &nr, &alloc);
		if (ret || bit_pos == NO_POS || bit_pos == OUTSIDE_POS)
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

/*
 * Sorting lists of indices by keys computed up front: the comparator
 * needs no state, so two writers may run at once (no static writer).
 */
struct keyed {
	uint64_t major, minor;
	uint32_t item;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

static void sort_keyed(uint32_t *items, struct keyed *keys, size_t nr)
{
	qsort(keys, nr, sizeof(*keys), cmp_keyed);
	for (size_t i = 0; i < nr; i++)
		items[i] = keys[i].item;
	free(keys);
}

/* Commit indices, newest committer date first (ties: bit order). */
static void sort_newest_first(const struct writer *w, uint32_t *list, size_t nr)
{
	struct keyed *keys = xmalloc(sizeof(*keys) * (nr ? nr : 1));
	for (size_t i = 0; i < nr; i++) {
		keys[i].major = UINT64_MAX - w->commits[list[i]].date;
		keys[i].minor = w->commits[list[i]].bit_pos;
		keys[i].item = list[i];
	}
	sort_keyed(list, keys, nr);
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
	/* A layer's bitmap has only its own commits (the base layers have theirs). */
	if (w->commits[index].bit_pos < w->opts->base_objects)
		return;
	ALLOC_GROW(w->selected, w->nr_selected + 1, w->alloc_selected);
	w->commits[index].selected = (uint32_t)w->nr_selected;
	w->selected[w->nr_selected++] = index;
}

/*
 * git's num_maximal_commits (trace2), which its bitmap builder counts
 * (git commits 089f751360 and 45f4eeb291 describe it): walking children
 * before parents along first parents, each commit carries the set of
 * "maximal" commits that reach it, the selected ones to begin with; a
 * commit that a child gives bits it lacked, while it holds bits that
 * child lacks, is maximal (for now: a later child may take that back)
 * and, once visited, adds a bit of its own. gitpack builds its bitmaps another way and only counts these,
 * and only when trace2 is on, so that traces read as git's do.
 */
struct maximal_mask {
	uint64_t *words;
	size_t nr;
};

static void mask_set(struct maximal_mask *m, uint64_t bit)
{
	size_t word = (size_t)(bit / 64);
	if (word >= m->nr) {
		size_t nr = word + 1;
		m->words = xrealloc(m->words, nr * sizeof(uint64_t));
		memset(m->words + m->nr, 0, (nr - m->nr) * sizeof(uint64_t));
		m->nr = nr;
	}
	m->words[word] |= (uint64_t)1 << (bit % 64);
}

/* Whether a has a bit b lacks. */
static bool mask_has_more(const struct maximal_mask *a, const struct maximal_mask *b)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->words[i] & ~(i < b->nr ? b->words[i] : 0))
			return true;
	return false;
}

static void mask_or(struct maximal_mask *dst, const struct maximal_mask *src)
{
	if (src->nr > dst->nr) {
		dst->words = xrealloc(dst->words, src->nr * sizeof(uint64_t));
		memset(dst->words + dst->nr, 0, (src->nr - dst->nr) * sizeof(uint64_t));
		dst->nr = src->nr;
	}
	for (size_t i = 0; i < src->nr; i++)
		dst->words[i] |= src->words[i];
}

static void trace_maximal_commits(struct writer *w)
{
	struct maximal_mask *masks;
	bool *maximal;
	uint32_t *children_first;
	uint64_t nr_bits = w->nr_selected, nr_maximal = w->nr_selected;
	struct keyed *keys;

	if (!trace2_enabled())
		return;
	masks = xcalloc(w->nr_commits ? w->nr_commits : 1, sizeof(*masks));
	maximal = xcalloc(w->nr_commits ? w->nr_commits : 1, sizeof(*maximal));
	children_first = xmalloc(sizeof(uint32_t) * (w->nr_commits ? w->nr_commits : 1));
	keys = xmalloc(sizeof(*keys) * (w->nr_commits ? w->nr_commits : 1));
	for (uint32_t i = 0; i < w->nr_commits; i++) {
		keys[i].major = UINT64_MAX - w->commits[i].topo;
		keys[i].minor = 0;
		keys[i].item = i;
	}
	sort_keyed(children_first, keys, w->nr_commits);
	for (uint32_t i = 0; i < w->nr_selected; i++) {
		mask_set(&masks[w->selected[i]], i);
		maximal[w->selected[i]] = true;
	}
	for (size_t k = 0; k < w->nr_commits; k++) {
		uint32_t index = children_first[k];
		const struct wcommit *c = &w->commits[index];
		if (maximal[index] && c->selected == NO_POS) {
			mask_set(&masks[index], nr_bits++);
			nr_maximal++;
		}
		/* first parents only, as git walks since 45f4eeb291 */
		if (c->nr_parents) {
			uint32_t parent = w->parents[c->parents_start];
			if (mask_has_more(&masks[index], &masks[parent])) {
				bool parent_has_more = mask_has_more(&masks[parent], &masks[index]);
				mask_or(&masks[parent], &masks[index]);
				if (w->commits[parent].selected == NO_POS)
					maximal[parent] = parent_has_more;
			}
		}
		free(masks[index].words);
		masks[index].words = NULL;
		masks[index].nr = 0;
	}
	trace2_data_intmax("pack-bitmap-write", "num_maximal_commits", (int64_t)nr_maximal);
	free(masks);
	free(maximal);
	free(children_first);
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
			/*
			 * As git picks in a window, newest first: the first
			 * commit the reused bitmap has (it costs no walk, and
			 * selections then stay put from run to run) or that
			 * is selected already (a tip, when all tips are);
			 * else the oldest merge; else the window's end.
			 */
			chosen = i + next;
			for (size_t j = i; j <= i + next; j++) {
				const struct wcommit *c = &w->commits[by_date[j]];
				if (c->old_row != NO_POS || c->selected != NO_POS) {
					chosen = j;
					break;
				}
				if (c->nr_parents > 1)
					chosen = j;
			}
			select_commit(w, by_date[chosen]);
			i += next + 1;
		}
	}
	free(by_date);

	trace2_data_intmax("pack-bitmap-write", "num_selected_commits", (int64_t)w->nr_selected);
	/* File order: newest first, so neighbours are alike for XOR. */
	sort_newest_first(w, w->selected, w->nr_selected);
	for (size_t i = 0; i < w->nr_selected; i++)
		w->commits[w->selected[i]].selected = (uint32_t)i;
	trace_maximal_commits(w);
}

/* ---- resolving trees, in threads ---------------------------------- */

/*
 * Every tree is read and parsed once, and its entries looked up, before
 * any bitmap is built; building then walks these lists in memory. Trees
 * are decoded along their delta chains, base first (as index-pack
 * resolves deltas): each delta is applied once, to its base still in
 * hand, whatever the cache would have held. Threads share the chains.
 *
 * Name hashes: an object's is the hash of its name in the tree that
 * lists it (git hashes the whole path; only the last 16 characters
 * count, so the two differ only for short names in subdirectories).
 * When an object has several names the smallest hash wins, so that the
 * file does not depend on thread timing.
 */

#define ARENA_WORDS (1u << 18)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	uint32_t words[ARENA_WORDS];
};

struct resolver {
	struct writer *w;
	struct pack_reader *reader;
	struct arena_chunk *chunks;
	/* per chain depth: the entries of the tree decoded at that depth */
	struct parsed {
		struct entry {
			struct object_id oid;
			const char *name;   /* borrowed from the frame's data */
			size_t name_len;
			bool is_tree;
			bool reused;        /* position taken from the base */
			uint32_t bit_pos;   /* NO_POS until found */
			uint32_t slot_hint; /* the lookup's candidate slot */
		} *entries;
		size_t nr, alloc;
	} *parsed;
	size_t parsed_alloc;
	struct chain_frame {
		uint32_t tree;      /* index in w->tree_bits */
		unsigned char *data;
		size_t size;
		uint32_t next_child;
	} *stack;
	size_t stack_nr, stack_alloc;
	struct gp_error err;
	int ret;
	uint64_t bytes;       /* tree bytes decoded since the last report */
};

/* Every this many bytes of trees decoded, the packs' pages are dropped. */
#define DROP_EVERY ((uint64_t)64 << 20)

struct resolve_shared {
	struct writer *w;
	uint64_t since_drop;  /* atomic */
	uint32_t *roots;
	size_t nr_roots;
	size_t next_root;     /* atomic */
	int failed;           /* atomic */
	struct progress *progress;
};

/* Hashes are stored plus one while they are gathered, so that 0 means "none yet". */
static uint32_t stored_hash(uint32_t hash)
{
	return hash + 1 ? hash + 1 : UINT32_MAX;
}

/* Once gathered: back to plain hashes. */
static void finish_hashes(struct writer *w)
{
	for (uint32_t pos = 0; w->hashes && pos < w->nr; pos++)
		if (w->hashes[pos])
			w->hashes[pos]--;
}

static void set_name(struct writer *w, uint32_t pos, const char *name)
{
	uint32_t hash, old;
	if (!w->hashes)
		return;
	hash = stored_hash(bitmap_name_hash(name));
	old = __atomic_load_n(&w->hashes[pos], __ATOMIC_RELAXED);
	while ((!old || hash < old) &&
	       !__atomic_compare_exchange_n(&w->hashes[pos], &old, hash, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static uint32_t *arena_alloc(struct resolver *r, size_t words)
{
	struct arena_chunk *c = r->chunks;
	if (words > ARENA_WORDS)
		return NULL;
	if (!c || ARENA_WORDS - c->used < words) {
		c = xmalloc(sizeof(*c));
		c->next = r->chunks;
		c->used = 0;
		r->chunks = c;
	}
	c->used += words;
	return c->words + c->used - words;
}

/* git's tree order: names compared as if directories ended in '/'. */
static int cmp_entry_names(const char *a, size_t a_len, bool a_dir,
			   const char *b, size_t b_len, bool b_dir)
{
	size_t common = a_len < b_len ? a_len : b_len;
	int cmp = memcmp(a, b, common);
	unsigned char ca, cb;
	if (cmp)
		return cmp;
	ca = common < a_len ? (unsigned char)a[common] : a_dir ? '/' : '\0';
	cb = common < b_len ? (unsigned char)b[common] : b_dir ? '/' : '\0';
	return ca < cb ? -1 : ca > cb;
}

/*
 * A tree decoded from a delta is mostly its base: walk both in tree
 * order and take the position of every entry the base has unchanged
 * (same name, kind and id) from the base's kids, instead of looking it
 * up. Anything else is left for the lookup. Unsorted trees only cost
 * lookups, never a wrong position: a position is reused only for the
 * same id.
 */
static void reuse_base_kids(struct parsed *cur, const struct parsed *base,
			    const uint32_t *base_kids)
{
	size_t j = 0, base_nr = base->nr < base_kids[0] ? base->nr : base_kids[0];
	for (size_t i = 0; i < cur->nr; i++) {
		struct entry *en = &cur->entries[i];
		int cmp = 1;
		while (j < base_nr) {
			const struct entry *be = &base->entries[j];
			cmp = cmp_entry_names(be->name, be->name_len, be->is_tree,
					      en->name, en->name_len, en->is_tree);
			if (cmp >= 0)
				break;
			j++;
		}
		if (j >= base_nr)
			break;
		if (!cmp && en->is_tree == base->entries[j].is_tree &&
		    oideq(&base->entries[j].oid, &en->oid)) {
			en->bit_pos = base_kids[j + 1] & ~KID_TREE;
			en->reused = true;
		}
	}
}

static struct parsed *parsed_at(struct resolver *r, size_t depth)
{
	if (depth >= r->parsed_alloc) {
		size_t old = r->parsed_alloc;
		r->parsed_alloc = depth + 16;
		r->parsed = xrealloc(r->parsed, r->parsed_alloc * sizeof(*r->parsed));
		memset(r->parsed + old, 0, (r->parsed_alloc - old) * sizeof(*r->parsed));
	}
	return &r->parsed[depth];
}

/*
 * Parse one tree, decoded at chain depth depth, and record its entries'
 * positions. base_kids (may be NULL) are the positions of the tree it
 * was decoded from, parsed at depth - 1.
 */
static int resolve_tree(struct resolver *r, uint32_t tree_pos,
			const unsigned char *data, size_t size, size_t depth,
			const uint32_t *base_kids)
{
	struct writer *w = r->w;
	struct parsed *cur = parsed_at(r, depth);
	struct tree_iter it;
	struct tree_entry e;
	size_t nr = 0;
	uint32_t *kids;
	int ret;

	r->bytes += size;
	tree_iter_init(&it, data, size, w->algo);
	while ((ret = tree_iter_next(&it, &e, &r->err)) > 0) {
		unsigned kind = e.mode & TREE_MODE_TYPE_MASK;
		struct entry *en;
		if (kind == TREE_MODE_GITLINK)
			continue;
		ALLOC_GROW(cur->entries, nr + 1, cur->alloc);
		en = &cur->entries[nr++];
		en->oid = e.oid;
		en->name = e.name;
		en->name_len = e.name_len;
		en->bit_pos = NO_POS;
		en->reused = false;
		en->is_tree = kind == TREE_MODE_DIR;
	}
	cur->nr = nr;
	if (ret < 0) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, tree_pos, &oid);
		return gp_error_prefix(&r->err, "tree %s", oid_to_hex_r(hex, &oid));
	}
	if (ret >= 0 && depth && base_kids)
		reuse_base_kids(cur, &r->parsed[depth - 1], base_kids);
	for (size_t i = 0; i < nr; i++)
		if (cur->entries[i].bit_pos == NO_POS)
			table_prefetch(w, cur->entries[i].oid.hash);
	/*
	 * Look the other names up in two sweeps, so that the cache misses
	 * of a whole tree overlap: find each slot whose key matches and
	 * prefetch the name it points at (the slot index is kept in
	 * slot_hint meanwhile); then compare the names.
	 */
	for (size_t i = 0; i < nr; i++) {
		struct entry *en = &cur->entries[i];
		const struct pos_table *t = &w->table;
		uint64_t key = oid_key(en->oid.hash);
		en->slot_hint = NO_POS;
		if (en->bit_pos != NO_POS)
			continue;
		for (size_t slot = slot_of(t, key); t->slots[slot].index_pos != NO_POS;
		     slot = (slot + 1) & t->mask)
			if (t->slots[slot].key == key) {
				en->slot_hint = (uint32_t)slot;
				__builtin_prefetch(bitmap_order_index_oid_raw(w->order,
									      t->slots[slot].index_pos));
				break;
			}
	}
	for (size_t i = 0; i < nr; i++) {
		struct entry *en = &cur->entries[i];
		const struct pos_slot *slot = en->slot_hint == NO_POS ? NULL : &w->table.slots[en->slot_hint];
		if (en->bit_pos != NO_POS)
			continue;
		if (slot && !memcmp(bitmap_order_index_oid_raw(w->order, slot->index_pos),
				    en->oid.hash, w->table.rawsz))
			en->bit_pos = slot->bit_pos;
		else if (!table_find(w, &en->oid, &en->bit_pos))
			en->bit_pos = NO_POS;
	}
	kids = arena_alloc(r, nr + 1);
	if (!kids)
		return CORRUPT(&r->err, "a tree with %zu entries is too large", nr);
	kids[0] = (uint32_t)nr;
	for (size_t i = 0; i < nr; i++) {
		const struct entry *en = &cur->entries[i];
		enum object_type want = en->is_tree ? OBJ_TREE : OBJ_BLOB;
		char hex[GP_MAX_HEXSZ + 1];
		if (en->bit_pos == NO_POS)
			return gp_error_set(&r->err, GP_ENOTFOUND,
					    "%s %s is not in the bitmapped pack or MIDX "
					    "(a bitmap must cover everything reachable)",
					    type_name(want), oid_to_hex_r(hex, &en->oid));
		if (w->types[en->bit_pos] != want)
			return CORRUPT(&r->err, "tree entry %s names %s, a %s, not a %s",
				       en->name, oid_to_hex_r(hex, &en->oid),
				       type_name((enum object_type)w->types[en->bit_pos]),
				       type_name(want));
		kids[i + 1] = en->bit_pos | (en->is_tree ? KID_TREE : 0);
		/* a reused entry has the same name in the base: same hash */
		if (!en->reused)
			set_name(w, en->bit_pos, en->name);
	}
	w->kids[tree_pos] = kids;
	return 0;
}

/* Decode a chain root: a whole tree, or a delta whose base is elsewhere. */
static int decode_root(struct resolver *r, uint32_t tree_pos, unsigned char **data,
		       size_t *size)
{
	return read_with(r->w, r->reader, tree_pos, OBJ_TREE, data, size, &r->err);
}

static int decode_child(struct resolver *r, const struct chain_frame *parent,
			uint32_t tree_pos, unsigned char **data, size_t *size)
{
	struct pack_entry_header hdr;
	struct packed_git *p;
	unsigned char *delta = NULL, *result;
	uint64_t ofs, base_size, result_size;
	size_t hdr_len;
	int ret;

	locate(r->w, tree_pos, &p, &ofs);
	ret = pack_read_entry(r->reader, p, ofs, &hdr, &delta, &r->err);
	if (!ret)
		ret = delta_sizes(delta, (size_t)hdr.size, &base_size, &result_size,
				  &hdr_len, &r->err);
	if (!ret && base_size != parent->size)
		ret = CORRUPT(&r->err, "%s: delta at offset %llu expects a base of %llu bytes, not %zu",
			      p->pack_path, (unsigned long long)ofs,
			      (unsigned long long)base_size, parent->size);
	if (!ret && result_size > SIZE_MAX - 1)
		ret = gp_error_set(&r->err, GP_ENOMEM, "delta result too large");
	if (ret) {
		free(delta);
		return ret;
	}
	result = malloc((size_t)result_size + 1);
	if (!result) {
		free(delta);
		return gp_error_set(&r->err, GP_ENOMEM, "cannot allocate %llu bytes",
				    (unsigned long long)result_size);
	}
	ret = delta_apply(parent->data, parent->size, delta, (size_t)hdr.size, result,
			  (size_t)result_size, &r->err);
	free(delta);
	if (ret) {
		free(result);
		return gp_error_prefix(&r->err, "%s: at offset %llu", p->pack_path,
				       (unsigned long long)ofs);
	}
	result[result_size] = '\0';
	*data = result;
	*size = (size_t)result_size;
	return 0;
}

/*
 * A tree that cannot be decoded or resolved (a corrupt entry, an entry
 * outside the pack or MIDX) is left without kids and the work goes on:
 * it may be unreachable. walk_trees() reports it if a commit needs it.
 * Only running out of memory stops everything.
 */
static int tolerate(struct resolver *r, int ret)
{
	if (ret == GP_ENOMEM)
		return ret;
	gp_error_clear(&r->err);
	r->err = (struct gp_error)GP_ERROR_INIT;
	return 0;
}

static int resolve_chain(struct resolver *r, uint32_t root)
{
	struct writer *w = r->w;
	unsigned char *data = NULL;
	size_t size;
	int ret = decode_root(r, w->tree_bits[root], &data, &size);
	if (ret)
		return tolerate(r, ret);
	ret = tolerate(r, resolve_tree(r, w->tree_bits[root], data, size, 0, NULL));
	if (ret) {
		free(data);
		return ret;
	}
	ALLOC_GROW(r->stack, r->stack_nr + 1, r->stack_alloc);
	r->stack[r->stack_nr++] = (struct chain_frame){ root, data, size, 0 };
	while (r->stack_nr && !ret) {
		struct chain_frame *top = &r->stack[r->stack_nr - 1];
		uint32_t first = w->child_start[top->tree];
		uint32_t count = w->child_start[top->tree + 1] - first;
		uint32_t child;
		if (top->next_child >= count) {
			free(top->data);
			r->stack_nr--;
			continue;
		}
		child = w->children[first + top->next_child++];
		ret = decode_child(r, top, w->tree_bits[child], &data, &size);
		if (ret) {
			ret = tolerate(r, ret);
			continue;
		}
		top = &r->stack[r->stack_nr - 1];
		ret = tolerate(r, resolve_tree(r, w->tree_bits[child], data, size, r->stack_nr,
					       w->kids[w->tree_bits[top->tree]]));
		if (ret) {
			free(data);
			break;
		}
		ALLOC_GROW(r->stack, r->stack_nr + 1, r->stack_alloc);
		r->stack[r->stack_nr++] = (struct chain_frame){ child, data, size, 0 };
	}
	while (r->stack_nr)
		free(r->stack[--r->stack_nr].data);
	return ret;
}

/* Why a tree needed by a commit has no kids: decode it again, alone. */
static int diagnose_tree(struct writer *w, uint32_t tree_pos)
{
	struct resolver r = { 0 };
	unsigned char *data = NULL;
	size_t size;
	int ret;
	r.w = w;
	r.reader = w->reader;
	r.err = (struct gp_error)GP_ERROR_INIT;
	ret = decode_root(&r, tree_pos, &data, &size);
	if (!ret)
		ret = resolve_tree(&r, tree_pos, data, size, 0, NULL);
	free(data);
	if (ret) {
		gp_error_set(w->err, ret, "%s", gp_error_msg(&r.err));
	} else {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, tree_pos, &oid);
		ret = CORRUPT(w->err, "tree %s could not be decoded: its delta chain never reaches a base",
			      oid_to_hex_r(hex, &oid));
	}
	gp_error_clear(&r.err);
	for (size_t i = 0; i < r.parsed_alloc; i++)
		free(r.parsed[i].entries);
	free(r.parsed);
	while (r.chunks) {
		struct arena_chunk *c = r.chunks;
		r.chunks = c->next;
		free(c);
	}
	return ret;
}

struct resolve_arg {
	struct resolve_shared *sh;
	struct resolver *result; /* its arena stays: w->kids points into it */
};

static void *resolve_worker(void *data)
{
	struct resolve_arg *arg = data;
	struct resolve_shared *sh = arg->sh;
	struct resolver *r = xcalloc(1, sizeof(*r));
	r->w = sh->w;
	r->reader = pack_reader_new(4 << 20);
	r->err = (struct gp_error)GP_ERROR_INIT;
	for (;;) {
		size_t index = __atomic_fetch_add(&sh->next_root, 1, __ATOMIC_RELAXED);
		if (index >= sh->nr_roots || __atomic_load_n(&sh->failed, __ATOMIC_RELAXED))
			break;
		r->ret = resolve_chain(r, sh->roots[index]);
		progress_add(sh->progress, 1);
		/*
		 * Decoding touches pages all over the packs; give them back
		 * now and then, or they would all count as this process's.
		 */
		if (__atomic_add_fetch(&sh->since_drop, r->bytes, __ATOMIC_RELAXED) > DROP_EVERY) {
			__atomic_store_n(&sh->since_drop, 0, __ATOMIC_RELAXED);
			drop_pages(sh->w);
		}
		r->bytes = 0;
		if (r->ret) {
			__atomic_store_n(&sh->failed, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	free(r->stack);
	for (size_t i = 0; i < r->parsed_alloc; i++)
		free(r->parsed[i].entries);
	free(r->parsed);
	pack_reader_free(r->reader);
	arg->result = r;
	return NULL;
}

/* The bit of the object at ofs in pack p, when the order holds that copy. */
static bool bit_at_offset(const struct writer *w, struct packed_git *p, uint64_t ofs,
			  uint32_t *bit_pos)
{
	for (size_t i = 0; i < w->nr_ranges; i++) {
		const struct pack_range *range = &w->ranges[i];
		size_t lo = range->start, hi = range->end;
		if (range->pack != p)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (w->ofs[mid] == ofs) {
				*bit_pos = (uint32_t)mid;
				return true;
			}
			if (w->ofs[mid] < ofs)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

/* Which tree each tree delta applies to: the forest of delta chains. */
static int find_chains(struct writer *w, uint32_t **roots, size_t *nr_roots)
{
	uint32_t *tree_of_bit = xmalloc(sizeof(uint32_t) * (w->nr ? w->nr : 1));
	uint32_t *base_of;
	size_t nr = 0;
	int ret = 0;

	for (uint32_t bit_pos = 0; bit_pos < w->nr; bit_pos++) {
		tree_of_bit[bit_pos] = NO_POS;
		if (w->types[bit_pos] != OBJ_TREE)
			continue;
		ALLOC_GROW(w->tree_bits, w->nr_trees + 1, w->alloc_trees);
		tree_of_bit[bit_pos] = (uint32_t)w->nr_trees;
		w->tree_bits[w->nr_trees++] = bit_pos;
	}
	base_of = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
	w->child_start = xcalloc(w->nr_trees + 2, sizeof(uint32_t));
	for (size_t t = 0; t < w->nr_trees && !ret; t++) {
		struct pack_entry_header hdr;
		struct packed_git *p;
		uint32_t base_bit;
		uint64_t ofs;
		bool found = false;
		locate(w, w->tree_bits[t], &p, &ofs);
		base_of[t] = NO_POS;
		ret = pack_parse_entry_header(p->pack_map + ofs, p->pack_size - ofs, ofs,
					      p->algo, &hdr, w->err);
		if (ret)
			break;
		if (hdr.type == OBJ_OFS_DELTA)
			found = bit_at_offset(w, p, hdr.base_ofs, &base_bit);
		else if (hdr.type == OBJ_REF_DELTA)
			found = table_find(w, &hdr.base_oid, &base_bit);
		if (found && tree_of_bit[base_bit] != NO_POS) {
			base_of[t] = tree_of_bit[base_bit];
			w->child_start[base_of[t] + 2]++;
		}
	}
	if (!ret) {
		/* counts at [t + 2]; prefix sums make [t + 1] each run's end */
		for (size_t t = 2; t < w->nr_trees + 2; t++)
			w->child_start[t] += w->child_start[t - 1];
		w->children = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
		*roots = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
		for (size_t t = 0; t < w->nr_trees; t++) {
			if (base_of[t] == NO_POS)
				(*roots)[nr++] = (uint32_t)t;
			else
				w->children[w->child_start[base_of[t] + 1]++] = (uint32_t)t;
		}
		*nr_roots = nr;
	}
	free(base_of);
	free(tree_of_bit);
	return ret;
}

static void reuse_mark_commits(struct writer *w);

/* The commits, their order and the selection: no tree needed. */
static int commit_graph(struct writer *w)
{
	int ret = read_commits(w);
	if (ret)
		return ret;
	reuse_mark_commits(w);
	topo_sort(w);
	select_commits(w);
	return 0;
}

/*
 * Resolve the trees in threads; meanwhile the calling thread runs
 * meanwhile(w) (the commit graph, which needs no tree), then resolves
 * too.
 */
struct meanwhile_ctx {
	struct writer *w;
	struct resolve_shared *sh;
	int (*fn)(struct writer *);
	int ret;
};

static void run_meanwhile(void *data)
{
	struct meanwhile_ctx *ctx = data;
	ctx->ret = ctx->fn(ctx->w);
	if (ctx->ret)
		__atomic_store_n(&ctx->sh->failed, 1, __ATOMIC_RELAXED);
}

static int resolve_trees(struct writer *w, struct arena_chunk ***all_chunks, size_t *nr_chunks,
			 int (*meanwhile)(struct writer *))
{
	struct resolve_shared sh = { 0 };
	struct resolve_arg args[MAX_THREADS];
	struct meanwhile_ctx ctx = { w, &sh, meanwhile, 0 };
	int nr_jobs = w->threads;
	int ret;

	w->kids = xcalloc(w->nr ? w->nr : 1, sizeof(*w->kids));
	ret = find_chains(w, &sh.roots, &sh.nr_roots);
	if (ret)
		return ret;
	sh.w = w;
	sh.progress = progress_start("Reading trees", sh.nr_roots, w->opts->progress);
	for (int i = 0; i < nr_jobs; i++)
		args[i] = (struct resolve_arg){ &sh, NULL };
	run_parallel(resolve_worker, args, sizeof(*args), nr_jobs, run_meanwhile, &ctx);
	progress_stop(&sh.progress);
	free(sh.roots);
	ret = ctx.ret;
	for (int i = 0; i < nr_jobs; i++) {
		struct resolver *r = args[i].result;
		while (r->chunks) {
			struct arena_chunk *c = r->chunks;
			r->chunks = c->next;
			*all_chunks = xrealloc(*all_chunks, (*nr_chunks + 1) * sizeof(**all_chunks));
			(*all_chunks)[(*nr_chunks)++] = c;
		}
		if (r->ret && !ret) {
			ret = r->ret;
			gp_error_set(w->err, ret, "%s", gp_error_msg(&r->err));
		}
		gp_error_clear(&r->err);
		free(r);
	}
	finish_hashes(w);
	return ret;
}

static int set_bit(struct writer *w, struct bitmap *bits, uint32_t bit_pos)
{
	if (bitmap_set(bits, bit_pos) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

/* ---- reusing the repository's bitmap ------------------------------ */

/*
 * The repository's current bitmap (the MIDX's, or a pack's) already
 * says what its commits reach. When the new order keeps nearly every
 * object in long runs that the old order had too, a commit with an old
 * bitmap needs no walk: its bits, moved to their new positions, are
 * exactly what it reaches, provided every one of them is still in the
 * new order. Two orders do that: the geometric steady state, whose
 * largest pack leads both the old MIDX and the new (runs that did not
 * move), and an all-into-one pack that repack writes in the old
 * bitmap's order after the new objects (pack_objects_follow(): runs
 * moved by the number of new objects). A run is moved a word at a time;
 * the few bits outside runs one by one. Then trees are read only when a
 * walk needs them (below the commits no old bitmap covers), the name
 * hashes come from the old file's cache and from those trees, and
 * selection prefers commits with an old bitmap.
 *
 * When the orders differ (a pack written in another order, say),
 * moving every bit costs more than building afresh from trees read in
 * threads: then the old bitmap is not used.
 */
struct reuse_run {
	uint32_t old_start, new_start, len;
};

struct reuse {
	struct bitmap_index *bi;
	uint32_t *new_of_old;   /* old bit_pos -> new bit_pos; NO_POS when gone */
	uint32_t nr_old;
	struct reuse_run *runs; /* by old_start; none shorter than REUSE_MIN_RUN */
	size_t nr_runs;
	size_t words;           /* bitmap words the runs' new positions need */
	struct bitmap scratch;
	struct resolver lazy;   /* reads trees when a walk needs them */
	uint32_t nr_reused;     /* bitmaps taken over */
	uint32_t nr_rows;       /* entries over every layer of the old chain */
};

/* Reuse pays when runs hold at least this share of the new order. */
#define REUSE_MIN_SAME_NUM 3
#define REUSE_MIN_SAME_DEN 4
/* Shorter stretches are moved bit by bit. */
#define REUSE_MIN_RUN 64

static void reuse_free(struct writer *w)
{
	struct reuse *ru = w->reuse;
	if (!ru)
		return;
	bitmap_index_free(ru->bi);
	free(ru->new_of_old);
	free(ru->runs);
	bitmap_release(&ru->scratch);
	for (size_t i = 0; i < ru->lazy.parsed_alloc; i++)
		free(ru->lazy.parsed[i].entries);
	free(ru->lazy.parsed);
	free(ru->lazy.stack);
	while (ru->lazy.chunks) {
		struct arena_chunk *c = ru->lazy.chunks;
		ru->lazy.chunks = c->next;
		free(c);
	}
	gp_error_clear(&ru->lazy.err);
	free(ru);
	w->reuse = NULL;
}

/* The stretches of old bits that keep their order in the new one. */
static uint64_t find_runs(struct reuse *ru)
{
	uint64_t covered = 0;
	size_t alloc = 0;
	uint32_t bit = 0;
	while (bit < ru->nr_old) {
		uint32_t start = bit++;
		if (ru->new_of_old[start] == NO_POS)
			continue;
		while (bit < ru->nr_old && ru->new_of_old[bit] != NO_POS &&
		       ru->new_of_old[bit] == ru->new_of_old[bit - 1] + 1)
			bit++;
		if (bit - start < REUSE_MIN_RUN)
			continue;
		ALLOC_GROW(ru->runs, ru->nr_runs + 1, alloc);
		ru->runs[ru->nr_runs++] = (struct reuse_run){ start, ru->new_of_old[start], bit - start };
		covered += bit - start;
		if (((uint64_t)ru->new_of_old[start] + (bit - start) + 63) / 64 > ru->words)
			ru->words = ((size_t)ru->new_of_old[start] + (bit - start) + 63) / 64;
	}
	return covered;
}

/*
 * Open the repository's bitmap and map its positions to ours. Any
 * trouble with it (none, stale, damaged) only means building afresh.
 */
static void reuse_open(struct writer *w)
{
	struct gp_error ignored = GP_ERROR_INIT;
	const struct bitmap_order *old;
	struct bitmap_index *bi;
	struct reuse *ru;

	if (bitmap_index_open(&bi, w->odb, &ignored)) {
		gp_error_clear(&ignored);
		return;
	}
	old = bitmap_index_order(bi);
	ru = xcalloc(1, sizeof(*ru));
	ru->bi = bi;
	ru->nr_old = bitmap_order_nr(old);
	ru->new_of_old = xmalloc(sizeof(uint32_t) * (ru->nr_old ? ru->nr_old : 1));
	for (uint32_t bit = 0; bit < ru->nr_old; bit++) {
		const unsigned char *raw =
			bitmap_order_index_oid_raw(old, bitmap_order_bit_to_index(old, bit));
		if (!table_find_raw(w, raw, &ru->new_of_old[bit]))
			ru->new_of_old[bit] = NO_POS;
	}
	w->reuse = ru;
	if (find_runs(ru) * REUSE_MIN_SAME_DEN < (uint64_t)w->nr * REUSE_MIN_SAME_NUM) {
		reuse_free(w);
		return;
	}
	bitmap_init(&ru->scratch);
	ru->lazy.w = w;
	ru->lazy.reader = w->reader;
	ru->lazy.err = (struct gp_error)GP_ERROR_INIT;
	/* Names the old file knew, stored plus one as set_name() does. */
	for (uint32_t index_pos = 0; w->hashes && index_pos < ru->nr_old; index_pos++) {
		uint32_t hash, new_pos = ru->new_of_old[bitmap_order_index_to_bit(old, index_pos)];
		if (new_pos == NO_POS || !bitmap_index_name_hash(bi, index_pos, &hash) || !hash)
			continue;
		w->hashes[new_pos] = stored_hash(hash);
	}
}

/* Which of our commits the old file has a bitmap for. */
static void reuse_mark_commits(struct writer *w)
{
	struct reuse *ru = w->reuse;
	const struct bitmap_order *old;
	if (!ru)
		return;
	/*
	 * Every layer of an old chain: a new top layer's commits mostly
	 * descend from commits whose bitmaps the layers below hold. Rows
	 * are numbered across the layers, the top layer's first.
	 */
	for (struct bitmap_index *layer = ru->bi; layer; layer = bitmap_index_base(layer)) {
		uint32_t first = ru->nr_rows, nr = bitmap_index_nr_entries(layer);
		old = bitmap_index_order(layer);
		ru->nr_rows += nr;
		for (uint32_t row = 0; old && row < nr; row++) {
			uint32_t old_bit = bitmap_order_index_to_bit(old, bitmap_index_entry_commit(layer, row));
			uint32_t new_bit = old_bit < ru->nr_old ? ru->new_of_old[old_bit] : NO_POS;
			if (new_bit != NO_POS && w->commit_of_bit[new_bit] != NO_POS &&
			    w->commits[w->commit_of_bit[new_bit]].old_row == NO_POS)
				w->commits[w->commit_of_bit[new_bit]].old_row = first + row;
		}
	}
}

/*
 * OR into dst the bits of src in [run->old_start, + len), moved to start
 * at run->new_start, a word at a time; clear them in src. dst has words
 * for the whole new stretch.
 */
static void move_run(uint64_t *dst, struct bitmap *src, const struct reuse_run *run)
{
	uint64_t start = run->old_start, end = start + run->len;
	uint64_t last_word = (end + 63) / 64;
	if (last_word > src->word_nr)
		last_word = src->word_nr;
	for (uint64_t i = start / 64; i < last_word; i++) {
		uint64_t mask = ~(uint64_t)0, word;
		uint64_t dst_bit, dst_word;
		unsigned off;
		if (i * 64 < start)
			mask &= ~(uint64_t)0 << (start - i * 64);
		if (i * 64 + 64 > end)
			mask &= ~(uint64_t)0 >> (i * 64 + 64 - end);
		word = src->words[i] & mask;
		if (!word)
			continue;
		src->words[i] &= ~mask;
		/*
		 * The new position of this word's lowest set bit tells where
		 * the word lands; its bit 0 may lie before new_start (and
		 * before 0), so count from the lowest bit in the run.
		 */
		dst_bit = (uint64_t)run->new_start + (i * 64 + (uint64_t)__builtin_ctzll(word) - start);
		word >>= __builtin_ctzll(word);
		dst_word = dst_bit / 64;
		off = (unsigned)(dst_bit % 64);
		dst[dst_word] |= word << off;
		if (off && (word >> (64 - off)))
			dst[dst_word + 1] |= word >> (64 - off);
	}
}

/*
 * OR the old bitmap of entry row, moved to the new positions, into bits.
 * *complete is false when it holds an object the new order lacks: the
 * commit must then be walked (what was ORed is reachable all the same).
 */
static int reuse_or_ewah(struct writer *w, struct bitmap *bits, const struct ewah *old,
			 bool *complete)
{
	struct reuse *ru = w->reuse;

	*complete = false;
	bitmap_reset(&ru->scratch);
	if (bitmap_or_ewah(&ru->scratch, old) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	/*
	 * bits must count every word the runs write into: past its word_nr
	 * they would be unseen (bitmap_get, the EWAH made of it: a commit
	 * whose old bits all lie there got an empty bitmap) and, bitmap_reset()
	 * clearing only up to word_nr, left behind for the next build.
	 */
	if (bitmap_grow(bits, ru->words) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	for (size_t i = 0; i < ru->nr_runs; i++)
		move_run(bits->words, &ru->scratch, &ru->runs[i]);
	/* What is left lies outside the runs. */
	for (size_t i = 0; i < ru->scratch.word_nr; i++) {
		uint64_t word = ru->scratch.words[i];
		while (word) {
			uint64_t old_bit = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(word);
			uint32_t new_bit = old_bit < ru->nr_old ? ru->new_of_old[old_bit] : NO_POS;
			word &= word - 1;
			if (new_bit == NO_POS)
				return 0;
			if (set_bit(w, bits, new_bit))
				return GP_ENOMEM;
		}
	}
	*complete = true;
	return 0;
}

static int reuse_or(struct writer *w, struct bitmap *bits, uint32_t row, bool *complete)
{
	struct bitmap_index *layer = w->reuse->bi;
	const struct ewah *old;
	uint32_t index_pos;
	struct gp_error bad = GP_ERROR_INIT;
	int ret;

	*complete = false;
	/* the layer the row is in (reuse_mark_commits() numbered them) */
	while (layer && row >= bitmap_index_nr_entries(layer)) {
		row -= bitmap_index_nr_entries(layer);
		layer = bitmap_index_base(layer);
	}
	if (!layer)
		return 0;
	if (bitmap_index_entry(layer, row, &index_pos, &old, &bad)) {
		ret = bad.code == GP_ENOMEM ? gp_error_set(w->err, GP_ENOMEM, "out of memory") : 0;
		gp_error_clear(&bad);
		return ret;   /* a damaged entry: walk instead */
	}
	ret = reuse_or_ewah(w, bits, old, complete);
	if (!ret && *complete)
		w->reuse->nr_reused++;
	return ret;
}

/* Read and resolve one tree a walk needs (reuse: trees are not read ahead). */
static int reuse_load_tree(struct writer *w, uint32_t tree_pos)
{
	struct resolver *r = &w->reuse->lazy;
	unsigned char *data = NULL;
	size_t size;
	int ret = decode_root(r, tree_pos, &data, &size);
	if (!ret)
		ret = resolve_tree(r, tree_pos, data, size, 0, NULL);
	free(data);
	if (ret) {
		gp_error_set(w->err, ret, "%s", gp_error_msg(&r->err));
		gp_error_clear(&r->err);
	}
	return ret;
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

static int diagnose_tree(struct writer *w, uint32_t tree_pos);

/* Everything below root_pos not yet in b->bits, from the resolved trees. */
static int walk_trees(struct writer *w, struct build *b, uint32_t root_pos)
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
			int ret = reuse_load_tree(w, tree_pos);
			if (ret)
				return ret;
			kids = w->kids[tree_pos];
		}
		if (!kids)
			return diagnose_tree(w, tree_pos);
		if (set_bit(w, &b->bits, tree_pos))
			return GP_ENOMEM;
		for (uint32_t i = 1; i <= kids[0]; i++) {
			uint32_t kid = kids[i] & ~KID_TREE;
			if (bitmap_get(&b->bits, kid))
				continue;
			if (kids[i] & KID_TREE) {
				ALLOC_GROW(b->stack, b->stack_nr + 1, b->stack_alloc);
				b->stack[b->stack_nr++] = kid;
			} else if (set_bit(w, &b->bits, kid)) {
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
static int fill_closure(struct writer *w, struct build *b, const uint32_t *roots, size_t nr,
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
			ret = reuse_or(w, &b->bits, c->old_row, &complete);
			if (ret)
				return ret;
			if (complete)
				continue;
			c->old_row = NO_POS;  /* not again */
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
	return ret;
}

static int build_one(struct writer *w, struct build *b, uint32_t sel_index)
{
	uint32_t root = w->selected[sel_index];
	int ret = fill_closure(w, b, &root, 1, root);
	if (ret)
		return ret;
	if (bitmap_to_ewah(&w->bitmaps[sel_index], &b->bits) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	return 0;
}

static int build_bitmaps(struct writer *w)
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
	sort_keyed(order, keys, w->nr_selected);
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

/* A pseudo-merge of the reused bitmap, its commits at our positions. */
struct old_pseudo {
	uint32_t *bit_pos;  /* sorted */
	size_t nr;
	bool usable;        /* every commit is still here */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void load_old_pseudo(struct writer *w, struct old_pseudo **out, size_t *nr)
{
	const struct pseudo_merge_section *s;
	*out = NULL;
	*nr = 0;
	if (!w->reuse || !(s = bitmap_index_pseudo_merges(w->reuse->bi)) || !s->nr_merges)
		return;
	*out = xcalloc(s->nr_merges, sizeof(**out));
	*nr = s->nr_merges;
	for (uint32_t i = 0; i < s->nr_merges; i++) {
		struct old_pseudo *op = &(*out)[i];
		struct gp_error ignored = GP_ERROR_INIT;
		struct ewah commits, objects;
		struct ewah_iter it;
		uint64_t old_bit;
		size_t alloc = 0;
		if (pseudo_merge_section_merge(s, i, &commits, &objects, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		op->usable = true;
		ewah_iter_init(&it, &commits);
		while (ewah_iter_next(&it, &old_bit)) {
			uint32_t new_bit = old_bit < w->reuse->nr_old ? w->reuse->new_of_old[old_bit] : NO_POS;
			if (new_bit == NO_POS) {
				op->usable = false;
				break;
			}
			ALLOC_GROW(op->bit_pos, op->nr + 1, alloc);
			op->bit_pos[op->nr++] = new_bit;
		}
		if (op->nr > 1)
			qsort(op->bit_pos, op->nr, sizeof(uint32_t), cmp_u32);
	}
}

/*
 * The objects of the old pseudo-merge with exactly these commits, moved
 * to our positions, into b->bits; *found false when there is none (or
 * it holds an object we lack).
 */
static int reuse_pseudo(struct writer *w, struct build *b, const struct old_pseudo *old,
			size_t nr_old, const uint32_t *bit_pos, size_t nr, bool *found)
{
	*found = false;
	for (size_t i = 0; i < nr_old; i++) {
		const struct pseudo_merge_section *s = bitmap_index_pseudo_merges(w->reuse->bi);
		struct gp_error ignored = GP_ERROR_INIT;
		struct ewah commits, objects;
		if (!old[i].usable || old[i].nr != nr ||
		    memcmp(old[i].bit_pos, bit_pos, nr * sizeof(uint32_t)))
			continue;
		if (pseudo_merge_section_merge(s, (uint32_t)i, &commits, &objects, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		bitmap_reset(&b->bits);
		return reuse_or_ewah(w, &b->bits, &objects, found);
	}
	return 0;
}

/* The candidates of each (group, captures), as the refs list them. */
static int plan_pseudo_merges(struct writer *w, struct pseudo_merge_plan *plan)
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
			ret = peel_tip(w, &r->oid, &bit_pos);
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

static int build_pseudo_merges(struct writer *w)
{
	const struct bitmap_write_opts *o = w->opts;
	struct pseudo_merge_plan plan = PSEUDO_MERGE_PLAN_INIT;
	struct old_pseudo *old = NULL;
	size_t nr_old = 0;
	struct build b = { 0 };
	uint32_t *bit_pos = NULL;
	size_t alloc_bit_pos = 0;
	uint32_t walks_reused = w->reuse ? w->reuse->nr_reused : 0;
	int ret;

	if (!o->pseudo_merges || !o->pseudo_merges->nr || o->base_objects)
		return 0;
	trace2_region_enter("pack-bitmap-write", "building_pseudo_merge_bitmaps");
	ret = plan_pseudo_merges(w, &plan);
	if (ret || !plan.nr_merges)
		goto out;
	load_old_pseudo(w, &old, &nr_old);
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
		qsort(bit_pos, nr, sizeof(uint32_t), cmp_u32);
		for (size_t i = 0; i < nr && !ret; i++)
			if (ewah_set(&pm->commits, bit_pos[i]) < 0)
				ret = gp_error_set(w->err, GP_ENOMEM, "out of memory");
		if (!ret && nr_old)
			ret = reuse_pseudo(w, &b, old, nr_old, bit_pos, nr, &reused);
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
	if (w->reuse)
		w->reuse->nr_reused = walks_reused;
	for (size_t i = 0; i < nr_old; i++)
		free(old[i].bit_pos);
	free(old);
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

static int write_ewah(struct writer *w, struct hashfile *f, const struct ewah *e)
{
	int ret = ewah_serialize_to(e, write_to_hashfile, f);
	if (ret)
		return gp_error_set(w->err, GP_EIO, "bitmap too large to serialize: %s",
				    ewah_strerror(ret));
	return 0;
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
		sort_keyed(rows, keys, w->nr_selected);
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
	struct writer w = { 0 };
	struct arena_chunk **chunks = NULL;
	size_t nr_chunks = 0;
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

	table_build(&w);
	ret = read_types(&w);
	if (ret)
		goto out;
	if (!opts->fresh)
		reuse_open(&w);
	if (w.reuse) {
		w.kids = xcalloc(w.nr ? w.nr : 1, sizeof(*w.kids));
		ret = commit_graph(&w);
		if (!ret)
			ret = build_bitmaps(&w);
		if (!ret)
			finish_hashes(&w);
	} else {
		ret = resolve_trees(&w, &chunks, &nr_chunks, commit_graph);
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
			w.reuse->nr_reused, (uint32_t)w.nr_selected);
	if (stats) {
		stats->nr_commits = (uint32_t)w.nr_commits;
		stats->nr_selected = (uint32_t)w.nr_selected;
		stats->nr_reused = w.reuse ? w.reuse->nr_reused : 0;
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
	for (size_t i = 0; i < nr_chunks; i++)
		free(chunks[i]);
	free(chunks);
	free(w.commit_of_bit);
	free(w.commits);
	free(w.parents);
	free(w.selected);
	free(w.hashes);
	reuse_free(&w);
	pack_reader_free(w.reader);
	return ret;
}

/* ---- tips ---------------------------------------------------------- */

struct tip_list {
	struct bitmap_write_tip *tips;
	size_t nr, alloc;
	const struct config_set *config;
};

static void add_write_tip(struct tip_list *tl, const struct object_id *oid, bool preferred)
{
	ALLOC_GROW(tl->tips, tl->nr + 1, tl->alloc);
	tl->tips[tl->nr].oid = *oid;
	tl->tips[tl->nr++].preferred = preferred;
}

/*
 * git reads a pack.preferBitmapTips value as a hierarchy: "refs/tags"
 * and "refs/tags/" both mean the refs below refs/tags/, and a full ref
 * name matches only the refs below it, not itself.
 */
static bool ref_in_hierarchy(const char *refname, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(refname, prefix, len))
		return false;
	return (len && prefix[len - 1] == '/') || refname[len] == '/';
}

static int add_ref_tip(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct tip_list *tl = data;
	bool preferred = false;
	for (size_t i = 0; i < tl->config->nr && !preferred; i++) {
		const struct config_entry *e = &tl->config->items[i];
		if (!strcasecmp(e->key, "pack.preferbitmaptips") && e->value)
			preferred = ref_in_hierarchy(refname, e->value);
	}
	add_write_tip(tl, oid, preferred);
	return 0;
}

int bitmap_tips_from_refs(struct repository *repo, struct bitmap_write_tip **tips,
			  size_t *nr, struct gp_error *err)
{
	struct tip_list tl = { NULL, 0, 0, &repo->config };
	struct gp_error no_head = GP_ERROR_INIT;
	struct object_id head;
	int ret = refs_for_each(repo, "", add_ref_tip, &tl, err);
	if (ret) {
		free(tl.tips);
		return ret;
	}
	/*
	 * HEAD's commit always gets a bitmap: it is what most fetches ask
	 * for, and what "git rev-list --test-bitmap HEAD" checks. (Among
	 * many tips, the date windows could pass it over.)
	 */
	if (!refs_resolve(repo, "HEAD", &head, NULL, &no_head))
		add_write_tip(&tl, &head, true);
	gp_error_clear(&no_head);
	*tips = tl.tips;
	*nr = tl.nr;
	return 0;
}

int bitmap_tips_from_snapshot(const char *path, int algo, struct bitmap_write_tip **tips,
			      size_t *nr, struct gp_error *err)
{
	struct tip_list tl = { NULL, 0, 0, NULL };
	struct strbuf line = STRBUF_INIT;
	size_t line_nr = 0;
	int ret = 0;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return gp_error_errno(err, "could not open refs snapshot '%s'", path);
	while (strbuf_getline(&line, fp)) {
		const char *hex = line.buf;
		struct object_id oid;
		bool preferred = *hex == '+';
		line_nr++;
		if (preferred)
			hex++;
		if (parse_oid_hex_exact(hex, algo, &oid)) {
			ret = CORRUPT(err, "%s: line %zu is not an object id: %s", path, line_nr,
				      line.buf);
			break;
		}
		add_write_tip(&tl, &oid, preferred);
	}
	strbuf_release(&line);
	fclose(fp);
	if (ret) {
		free(tl.tips);
		return ret;
	}
	*tips = tl.tips;
	*nr = tl.nr;
	return 0;
}

/* A boolean from the config, dflt when unset; a bad value is an error. */
static int config_bool_or(struct repository *repo, const char *key, bool dflt,
			  bool *out, struct gp_error *err)
{
	int ret = config_get_bool(&repo->config, key, out, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		*out = dflt;
		return 0;
	}
	return ret;
}

int bitmap_pseudo_merges_from_repo(struct repository *repo, struct pseudo_merge_config *cfg,
				   struct pseudo_merge_ref **refs, size_t *nr_refs,
				   struct gp_error *err)
{
	int ret = pseudo_merge_config_read(cfg, &repo->config, (int64_t)time(NULL), err);
	*refs = NULL;
	*nr_refs = 0;
	if (!ret)
		ret = pseudo_merge_collect_refs(repo, cfg, refs, nr_refs, err);
	return ret;
}

/*
 * The commit-graph of objdir for the commit walk, or NULL: none, a
 * damaged one (the commits are read instead), or core.commitGraph=false.
 */
static struct commit_graph *open_graph(struct repository *repo, const char *objdir)
{
	struct gp_error ignored = GP_ERROR_INIT;
	struct commit_graph *g = NULL;
	bool use = true;
	if (config_bool_or(repo, "core.commitgraph", true, &use, &ignored) || !use ||
	    commit_graph_open(&g, objdir, repo->hash_algo, &ignored))
		g = NULL;
	gp_error_clear(&ignored);
	return g;
}

int bitmap_write_for_pack_file(struct repository *repo, const char *idx_path,
			       int threads, bool progress, struct gp_error *err)
{
	struct bitmap_write_opts opts = { 0 };
	struct bitmap_write_stats stats = { 0 };
	struct bitmap_write_tip *tips = NULL;
	struct bitmap_order *order = NULL;
	struct commit_graph *graph = NULL;
	struct packed_git *p = NULL;
	struct pseudo_merge_config pseudo = PSEUDO_MERGE_CONFIG_INIT;
	struct pseudo_merge_ref *pseudo_refs = NULL;
	size_t nr_pseudo_refs = 0;
	struct odb *odb;
	size_t nr_tips = 0;
	int ret = repo_odb(repo, &odb, err);

	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaphashcache", true, &opts.hash_cache, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaplookuptable", true, &opts.lookup_table, err);
	if (!ret)
		ret = pack_open_idx(&p, idx_path, repo->hash_algo, err);
	if (!ret)
		ret = pack_open_pack(p, err);
	if (!ret)
		ret = bitmap_order_for_pack(&order, p, err);
	if (!ret)
		ret = bitmap_tips_from_refs(repo, &tips, &nr_tips, err);
	if (!ret)
		ret = bitmap_pseudo_merges_from_repo(repo, &pseudo, &pseudo_refs, &nr_pseudo_refs, err);
	if (!ret) {
		opts.tips = tips;
		opts.nr_tips = nr_tips;
		opts.threads = threads;
		opts.progress = progress;
		opts.pseudo_merges = &pseudo;
		opts.pseudo_refs = pseudo_refs;
		opts.nr_pseudo_refs = nr_pseudo_refs;
		opts.graph = graph = open_graph(repo, repo->objdir);
		ret = bitmap_write(order, odb, &opts, &stats, err);
	}
	commit_graph_free(graph);
	bitmap_order_free(order);
	pack_free(p);
	free(tips);
	pseudo_merge_refs_free(pseudo_refs, nr_pseudo_refs);
	pseudo_merge_config_release(&pseudo);
	return ret;
}

int midx_write_bitmap(struct repository *repo, const char *objdir,
		      struct midx_write_result *result, const char *refs_snapshot,
		      bool progress, struct gp_error *err)
{
	struct bitmap_write_opts opts = { 0 };
	struct bitmap_write_stats stats;
	struct bitmap_write_tip *tips = NULL;
	size_t nr_tips = 0;
	struct bitmap_order *order = NULL;
	struct bitmap_index *existing = NULL;
	struct pseudo_merge_config pseudo = PSEUDO_MERGE_CONFIG_INIT;
	struct pseudo_merge_ref *pseudo_refs = NULL;
	size_t nr_pseudo_refs = 0;
	struct midx *m = NULL;
	struct odb *odb = NULL;
	struct commit_graph *graph = NULL;
	char *path = NULL;
	int algo = repo->hash_algo;
	int ret = 0;

	if (result->no_objects)
		goto out; /* git: "refusing to write multi-pack .bitmap without any objects" */
	ret = odb_open(&odb, objdir, algo, err);
	if (!ret && result->pending_path) {
		ret = midx_open_layer(&m, result->pending_path, result->pending_base, algo, err);
		if (!ret)
			ret = bitmap_order_for_midx_file(&order, odb, m, err);
	} else if (!ret) {
		ret = bitmap_order_for_midx(&order, odb, err);
		/* Same MIDX, valid bitmap: nothing to do (as git). */
		if (!ret) {
			struct gp_error ignored = GP_ERROR_INIT;
			path = bitmap_order_bitmap_path(order);
			if (!bitmap_index_open(&existing, odb, &ignored) &&
			    !strcmp(bitmap_index_path(existing), path))
				goto out;
			gp_error_clear(&ignored);
		}
	}
	if (!ret)
		ret = refs_snapshot
			? bitmap_tips_from_snapshot(refs_snapshot, algo, &tips, &nr_tips, err)
			: bitmap_tips_from_refs(repo, &tips, &nr_tips, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaphashcache", true, &opts.hash_cache, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaplookuptable", true, &opts.lookup_table, err);
	if (!ret)
		ret = bitmap_pseudo_merges_from_repo(repo, &pseudo, &pseudo_refs, &nr_pseudo_refs, err);
	if (!ret) {
		opts.tips = tips;
		opts.nr_tips = nr_tips;
		opts.progress = progress;
		opts.pseudo_merges = &pseudo;
		opts.pseudo_refs = pseudo_refs;
		opts.nr_pseudo_refs = nr_pseudo_refs;
		if (m && midx_is_chain(m)) {
			/* A layer: the bitmaps of the layers below stay as they are. */
			opts.base_objects = midx_nr_objects_in_base(m);
		}
		opts.graph = graph = open_graph(repo, objdir);
		ret = bitmap_write(order, odb, &opts, &stats, err);
		if (ret == GP_ENOTFOUND && result->bitmap_optional) {
			gp_error_clear(err);
			result->bitmap_skipped = true;
			ret = 0;
		} else if (ret) {
			gp_error_prefix(err, "could not write multi-pack bitmap");
		}
	}
	if (!ret)
		ret = midx_write_install(result, err);
	if (ret)
		midx_write_abort(result);
out:
	commit_graph_free(graph);
	free(path);
	bitmap_index_free(existing);
	bitmap_order_free(order);
	midx_free(m);
	odb_free(odb);
	free(tips);
	pseudo_merge_refs_free(pseudo_refs, nr_pseudo_refs);
	pseudo_merge_config_release(&pseudo);
	return ret;
}
