/*
 * bitmap-select.c: the commit graph the bitmap writer reads from the
 * tips, and the commits it chooses to bitmap (bitmap-select.h).
 */
#include "bitmap-select.h"
#include "pack-bitmap-write-internal.h"
#include "bitmap-reuse.h"
#include "commit.h"
#include "commit-graph.h"
#include "error.h"
#include "ewah/ewah.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "pack-bitmap-write.h"
#include "trace2.h"

/* Selection windows (see pack-bitmap-write.h). */
#define MUST_REGION 100
#define MIN_REGION 20000
#define MIN_STEP 100
#define MAX_STEP 5000

/* ---- the commit graph --------------------------------------------- */

/*
 * The commit at bit_pos from the commit-graph, into info: false when the
 * graph lacks it (or its entry is damaged: the object then decides).
 */
static bool commit_from_graph(struct bitmap_writer *w, uint32_t bit_pos, struct commit_info *info)
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
/* The commit at bit_pos, from the commit-graph or the object; errors name it. */
static int read_commit_info(struct bitmap_writer *w, uint32_t bit_pos, struct commit_info *info)
{
	unsigned char *data = NULL;
	size_t size;
	int ret = 0;
	if (!commit_from_graph(w, bit_pos, info)) {
		info->nr_parents = 0;
		ret = writer_read(w, bit_pos, OBJ_COMMIT, &data, &size);
		if (!ret)
			ret = commit_parse(data, size, w->algo, info, w->err);
		free(data);
	}
	if (ret) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, bit_pos, &oid);
		return gp_error_prefix(w->err, "commit %s", oid_to_hex_r(hex, &oid));
	}
	return 0;
}

/* The commit at bit_pos: its index, adding (and reading) it when new. */
static int add_commit(struct bitmap_writer *w, uint32_t bit_pos, uint32_t *index)
{
	struct commit_info info = COMMIT_INFO_INIT;
	struct wcommit *c;
	uint32_t tree_pos;
	int ret = 0;

	if (w->commit_of_bit[bit_pos] != NO_POS) {
		*index = w->commit_of_bit[bit_pos];
		return 0;
	}
	ret = read_commit_info(w, bit_pos, &info);
	if (ret)
		return ret;
	if (!writer_find(w, &info.tree, &tree_pos)) {
		ret = writer_not_in_order(w, &info.tree, "tree");
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
		if (!writer_find(w, &info.parents[i], &parent_pos)) {
			ret = writer_not_in_order(w, &info.parents[i], "commit");
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
int bitmap_select_peel_tip(struct bitmap_writer *w, const struct object_id *tip, uint32_t *bit_pos)
{
	struct object_id oid = *tip;
	for (int depth = 0; depth < 100; depth++) {
		struct tag_info tag;
		unsigned char *data;
		size_t size;
		int ret;
		if (!writer_find(w, &oid, bit_pos)) {
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
		ret = writer_read(w, *bit_pos, OBJ_TAG, &data, &size);
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

static int enter_from_outside(struct bitmap_writer *w, const struct object_id *tip,
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
		if (writer_find(w, &oid, &pos) && w->types[pos] == OBJ_COMMIT) {
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

/*
 * The walk of a layer's bitmap over the unchanged old chain
 * (bitmap_reuse_layer_walk()) stops where the old bitmaps know the
 * rest: an old commit with an old bitmap that maps whole is kept
 * without its parents (wcommit.stub; the build takes its bitmap, and
 * no commit is selected below base_objects), and what it reaches goes
 * into closure. Old tips wait in deferred until the new commits are
 * walked: one the old bitmaps cover reaches nothing new and is not
 * read at all. So the walk reads the new commits, the old ones between
 * them and the nearest old bitmaps, and no more.
 */
struct commit_walk {
	uint32_t *stack;        /* commit indices whose parents are to be added */
	size_t nr, alloc;
	bool layer;             /* bitmap_reuse_layer_walk() */
	struct bitmap closure;  /* what the stubs reach (old positions) */
};

static int walk_parents(struct bitmap_writer *w, struct commit_walk *cw)
{
	int ret = 0;
	while (cw->nr && !ret) {
		uint32_t index = cw->stack[--cw->nr];
		uint32_t start = w->commits[index].parents_start;
		uint32_t count = w->commits[index].nr_parents;
		if (cw->layer && w->commits[index].bit_pos < w->opts->base_objects) {
			bool covered;
			ret = bitmap_reuse_covered(w, w->commits[index].bit_pos, &cw->closure, &covered);
			if (ret)
				break;
			if (covered) {
				/* its parents stay out of the graph; w->parents keeps dead slots */
				w->commits[index].stub = true;
				w->commits[index].nr_parents = 0;
				continue;
			}
		}
		for (uint32_t i = 0; i < count && !ret; i++) {
			uint32_t parent_pos = w->parents[start + i];
			uint32_t parent;
			if (w->commit_of_bit[parent_pos] != NO_POS)
				continue;
			ret = add_commit(w, parent_pos, &parent);
			if (ret)
				break;
			ALLOC_GROW(cw->stack, cw->nr + 1, cw->alloc);
			cw->stack[cw->nr++] = parent;
		}
	}
	return ret;
}

/*
 * The old tips, after the new commits: each is followed down until what
 * it reaches is known to be old (below a stub, or under an old bitmap
 * of its own), only to find new commits that nothing new reaches (an
 * old commit whose parent came in late, loose). Those are walked as
 * the new commits are; the old commits passed on the way are not added:
 * no bitmap of the layer needs them.
 */
static int walk_old_tips(struct bitmap_writer *w, struct commit_walk *cw,
			 const uint32_t *tips, size_t nr_tips)
{
	struct bitmap seen;
	uint32_t *todo = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	bitmap_init(&seen);
	if (bitmap_grow(&seen, ((size_t)w->opts->base_objects + 63) / 64) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	for (size_t t = 0; t < nr_tips && !ret; t++) {
		ALLOC_GROW(todo, nr + 1, alloc);
		todo[nr++] = tips[t];
		while (nr && !ret) {
			struct commit_info info = COMMIT_INFO_INIT;
			uint32_t bit_pos = todo[--nr];
			bool covered;
			if (bitmap_get(&seen, bit_pos) || w->commit_of_bit[bit_pos] != NO_POS ||
			    (cw->closure.word_nr > bit_pos / 64 && bitmap_get(&cw->closure, bit_pos)))
				continue;
			bitmap_set(&seen, bit_pos);
			ret = bitmap_reuse_covered(w, bit_pos, &cw->closure, &covered);
			if (ret || covered)
				continue;
			ret = read_commit_info(w, bit_pos, &info);
			/* as add_commit() checks, so that both walks fail alike */
			if (!ret && !writer_find(w, &info.tree, &(uint32_t){ 0 }))
				ret = writer_not_in_order(w, &info.tree, "tree");
			for (size_t i = 0; !ret && i < info.nr_parents; i++) {
				uint32_t parent_pos, index;
				if (!writer_find(w, &info.parents[i], &parent_pos)) {
					ret = writer_not_in_order(w, &info.parents[i], "commit");
					break;
				}
				if (parent_pos < w->opts->base_objects) {
					ALLOC_GROW(todo, nr + 1, alloc);
					todo[nr++] = parent_pos;
					continue;
				}
				/* new, below old commits only: walked as the new ones are */
				ret = add_commit(w, parent_pos, &index);
				if (!ret) {
					ALLOC_GROW(cw->stack, cw->nr + 1, cw->alloc);
					cw->stack[cw->nr++] = index;
					ret = walk_parents(w, cw);
				}
			}
			commit_info_release(&info);
		}
	}
	free(todo);
	bitmap_release(&seen);
	return ret;
}

int bitmap_select_read_commits(struct bitmap_writer *w)
{
	struct commit_walk cw = { .layer = bitmap_reuse_layer_walk(w) };
	uint32_t *tips = NULL, *deferred = NULL;
	size_t nr_tips = 0, nr_deferred = 0;
	int ret = 0;

	bitmap_init(&cw.closure);
	w->commit_of_bit = xmalloc(sizeof(uint32_t) * (w->nr ? w->nr : 1));
	memset(w->commit_of_bit, 0xff, sizeof(uint32_t) * (w->nr ? w->nr : 1));
	tips = xmalloc(sizeof(uint32_t) * (w->opts->nr_tips ? w->opts->nr_tips : 1));
	deferred = xmalloc(sizeof(uint32_t) * (w->opts->nr_tips ? w->opts->nr_tips : 1));
	for (size_t i = 0; i < w->opts->nr_tips && !ret; i++) {
		uint32_t bit_pos, index;
		ret = bitmap_select_peel_tip(w, &w->opts->tips[i].oid, &bit_pos);
		if (!ret && bit_pos == OUTSIDE_POS)
			ret = enter_from_outside(w, &w->opts->tips[i].oid, &cw.stack, &cw.nr, &cw.alloc);
		if (ret || bit_pos == NO_POS || bit_pos == OUTSIDE_POS)
			continue;
		tips[nr_tips++] = bit_pos;
		if (cw.layer && bit_pos < w->opts->base_objects) {
			/* no bitmap of ours for it: being a tip changes nothing */
			deferred[nr_deferred++] = bit_pos;
			continue;
		}
		ret = add_commit(w, bit_pos, &index);
		if (ret)
			break;
		w->commits[index].is_tip = true;
		if (w->opts->tips[i].preferred)
			w->commits[index].preferred = true;
		ALLOC_GROW(cw.stack, cw.nr + 1, cw.alloc);
		cw.stack[cw.nr++] = index;
	}
	if (!ret)
		ret = walk_parents(w, &cw);
	if (!ret && nr_deferred)
		ret = walk_old_tips(w, &cw, deferred, nr_deferred);
	/* git's count of tips: the distinct commits the tips name */
	qsort(tips, nr_tips, sizeof(*tips), writer_cmp_u32);
	w->nr_tip_commits = 0;
	for (size_t i = 0; i < nr_tips; i++)
		w->nr_tip_commits += !i || tips[i] != tips[i - 1];
	free(tips);
	free(deferred);
	free(cw.stack);
	bitmap_release(&cw.closure);
	if (ret)
		return ret;
	/* parents: bit_pos -> commit index (a stub has none) */
	for (size_t i = 0; i < w->nr_commits; i++) {
		struct wcommit *c = &w->commits[i];
		for (uint32_t k = 0; k < c->nr_parents; k++)
			w->parents[c->parents_start + k] = w->commit_of_bit[w->parents[c->parents_start + k]];
	}
	return 0;
}

/* Number the commits so that parents come before children. */
void bitmap_select_topo_sort(struct bitmap_writer *w)
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

/* Commit indices, newest committer date first (ties: bit order). */
static void sort_newest_first(const struct bitmap_writer *w, uint32_t *list, size_t nr)
{
	struct keyed *keys = xmalloc(sizeof(*keys) * (nr ? nr : 1));
	for (size_t i = 0; i < nr; i++) {
		keys[i].major = UINT64_MAX - w->commits[list[i]].date;
		keys[i].minor = w->commits[list[i]].bit_pos;
		keys[i].item = list[i];
	}
	writer_sort_keyed(list, keys, nr);
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

static void select_commit(struct bitmap_writer *w, uint32_t index)
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

static void trace_maximal_commits(struct bitmap_writer *w)
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
	writer_sort_keyed(children_first, keys, w->nr_commits);
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

void bitmap_select_commits(struct bitmap_writer *w)
{
	uint32_t *by_date = xmalloc(sizeof(uint32_t) * (w->nr_commits ? w->nr_commits : 1));
	size_t nr_tips = w->nr_tip_commits, nr = 0;
	/*
	 * A layer ranks its own commits only, as git does (midx-write.c
	 * keeps the reachable commits that the layer holds): the commits
	 * below base_objects get no bitmap here, and their dates need not
	 * be known.
	 */
	for (uint32_t i = 0; i < w->nr_commits; i++)
		if (w->commits[i].bit_pos >= w->opts->base_objects)
			by_date[nr++] = i;
	sort_newest_first(w, by_date, nr);

	for (size_t i = 0; i < nr; i++) {
		struct wcommit *c = &w->commits[by_date[i]];
		if (c->preferred || (c->is_tip && nr_tips <= BITMAP_ALL_TIPS_LIMIT))
			select_commit(w, by_date[i]);
	}
	if (nr <= MUST_REGION) {
		for (size_t i = 0; i < nr; i++)
			select_commit(w, by_date[i]);
	} else {
		size_t i = 0;
		for (;;) {
			size_t next = window_after(i), chosen;
			if (i + next >= nr)
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

