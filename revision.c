/*
 * revision.c: the history walk of revision.h.
 *
 * Every object reached gets a node in one open-addressing hash table
 * keyed by name; commits also get their parents, tree and date once
 * parsed. Nodes come from blocks of NODE_BLOCK and live as long as the
 * walk.
 */
#include "revision.h"
#include "commit.h"
#include "commit-graph.h"
#include "error.h"
#include "odb.h"
#include "oidset.h"
#include "strbuf.h"
#include "trace.h"
#include "tree.h"
#include "walk-filter.h"

/* After only uninteresting commits remain queued, pop this many more. */
#define LIMIT_SLOP 5

enum node_flags {
	N_SEEN = 1 << 0,          /* shown, or marked not to be */
	N_UNINTERESTING = 1 << 1,
	N_QUEUED = 1 << 2,        /* ever put in the commit queue */
	N_LISTED = 1 << 3,        /* on the list of commits to show */
	N_TIP = 1 << 4,           /* named as an interesting tip (or a tag peeled for it) */
	N_NOT_USER_GIVEN = 1 << 5, /* met in a tree or as a commit's root tree: filtered even as a tip */
};

struct node {
	struct object_id oid;
	uint8_t type;
	uint8_t flags;
	/*
	 * Position in the commit-graph plus one (0: not known), when the
	 * node was met as a graph commit's parent: parsing it then needs
	 * no search of the graph's names.
	 */
	uint32_t graph_pos1;
	struct commit_data *commit; /* commits, once parsed */
};

struct commit_data {
	struct object_id tree;
	struct node **parents;  /* points into this allocation (new_commit_data) */
	size_t nr_parents;
	uint64_t date;
};

/* One allocation for a commit and its parent pointers: walks make many. */
static struct commit_data *new_commit_data(size_t nr_parents)
{
	struct commit_data *c = xcalloc(1, sizeof(*c) + nr_parents * sizeof(struct node *));
	c->parents = (struct node **)(c + 1);
	c->nr_parents = nr_parents;
	return c;
}

struct queued {
	uint64_t date;
	uint64_t seq;   /* ties: first queued, first popped */
	struct node *node;
};

struct tip {
	struct node *node;   /* the object named (a tag stays a tag here) */
	struct node *peeled; /* what it points at, tags peeled */
	char *name;          /* path shown for a tree or blob tip */
	bool uninteresting;
};

/*
 * What interesting tips contribute besides commits, in git's order: for
 * each tip, the annotated tags met while peeling it (by their own name),
 * then what it peels to when that is a tree or a blob.
 */
struct pending {
	struct node *node;
	char *name;
};

/* A table slot: the name's first 8 bytes beside the node, so that
 * probing past other objects touches no node memory. */
struct slot {
	uint64_t key;
	struct node *node;
};

/* Nodes come from big blocks, freed together with the walk. */
#define NODE_BLOCK 4096
struct node_block {
	struct node_block *next;
	size_t used;
	struct node nodes[NODE_BLOCK];
};

struct rev_walk {
	struct odb *odb;
	int algo;
	size_t rawsz;
	struct node_block *blocks;
	struct slot *table;
	size_t table_size, nr_nodes; /* size is a power of two */
	struct queued *heap;
	size_t heap_nr, heap_alloc;
	uint64_t seq;
	struct tip *tips;
	size_t nr_tips, alloc_tips;
	struct pending *pending;
	size_t nr_pending, alloc_pending;
	struct node **list; /* commits to show, in order */
	size_t list_nr, list_alloc;
	struct strbuf path;
	const struct oidset *shallow;
	uint64_t max_age;     /* --max-age: older commits are not shown */
	bool has_max_age;
	const struct walk_filter *filter;      /* borrowed; NULL: none */
	struct walk_filter_state *filter_state; /* from the run on */
	bool filter_provided, filter_omits;
	enum rev_missing missing;
	rev_missing_fn *missing_fn;
	void *missing_data;
	struct node **edges;  /* uninteresting parents of shown commits */
	size_t nr_edges, alloc_edges;
	bool edge_aggressive;
	bool sparse;
	bool blobs_unchecked;
	const struct commit_graph *graph; /* borrowed; NULL: none */
};

int rev_walk_new(struct rev_walk **out, struct odb *odb, int algo)
{
	struct rev_walk *w = xcalloc(1, sizeof(*w));
	w->odb = odb;
	w->algo = algo;
	w->rawsz = gp_hash_algos[algo].rawsz;
	w->table_size = 1024;
	w->table = xcalloc(w->table_size, sizeof(*w->table));
	strbuf_init(&w->path, 0);
	*out = w;
	return 0;
}

void rev_walk_free(struct rev_walk *w)
{
	if (!w)
		return;
	while (w->blocks) {
		struct node_block *b = w->blocks;
		for (size_t i = 0; i < b->used; i++)
			free(b->nodes[i].commit);
		w->blocks = b->next;
		free(b);
	}
	for (size_t i = 0; i < w->nr_tips; i++)
		free(w->tips[i].name);
	free(w->tips);
	for (size_t i = 0; i < w->nr_pending; i++)
		free(w->pending[i].name);
	free(w->pending);
	free(w->table);
	free(w->heap);
	free(w->list);
	free(w->edges);
	walk_filter_state_free(w->filter_state);
	strbuf_release(&w->path);
	free(w);
}

void rev_walk_set_edge_aggressive(struct rev_walk *w)
{
	w->edge_aggressive = true;
}

void rev_walk_set_sparse(struct rev_walk *w, bool sparse)
{
	w->sparse = sparse;
}

void rev_walk_set_blobs_unchecked(struct rev_walk *w)
{
	w->blobs_unchecked = true;
}

static void resize_table(struct rev_walk *w, size_t new_size);

void rev_walk_set_commit_graph(struct rev_walk *w, const struct commit_graph *graph)
{
	w->graph = graph;
	/*
	 * A walk over the graph meets most of its commits: size the table
	 * for them at once rather than doubling it (and moving every slot)
	 * a dozen times on the way.
	 */
	size_t want = w->table_size;
	while (graph && want < 2 * (size_t)commit_graph_nr_commits(graph) && want < ((size_t)1 << 26))
		want *= 2;
	if (want > w->table_size)
		resize_table(w, want);
}

void rev_walk_set_shallow(struct rev_walk *w, const struct oidset *shallow)
{
	w->shallow = shallow;
}

void rev_walk_set_max_age(struct rev_walk *w, uint64_t date)
{
	w->max_age = date;
	w->has_max_age = true;
}

void rev_walk_set_filter(struct rev_walk *w, const struct walk_filter *filter, unsigned flags)
{
	w->filter = filter;
	w->filter_provided = flags & REV_FILTER_PROVIDED;
	w->filter_omits = flags & REV_FILTER_OMITS;
}

void rev_walk_set_missing(struct rev_walk *w, enum rev_missing how,
			  rev_missing_fn *fn, void *data)
{
	w->missing = how;
	w->missing_fn = fn;
	w->missing_data = data;
}

static size_t slot_of(const struct rev_walk *w, uint64_t key)
{
	/* Object names are uniformly random: their bits are the hash. */
	return (size_t)key & (w->table_size - 1);
}

static void resize_table(struct rev_walk *w, size_t new_size)
{
	struct slot *old = w->table;
	size_t old_size = w->table_size;
	w->table_size = new_size;
	w->table = xcalloc(w->table_size, sizeof(*w->table));
	for (size_t i = 0; i < old_size; i++) {
		size_t s;
		if (!old[i].node)
			continue;
		for (s = slot_of(w, old[i].key); w->table[s].node; s = (s + 1) & (w->table_size - 1))
			;
		w->table[s] = old[i];
	}
	free(old);
}

static void grow_table(struct rev_walk *w)
{
	resize_table(w, w->table_size * 2);
}

static struct node *lookup(struct rev_walk *w, const struct object_id *oid)
{
	uint64_t key = get_be64(oid->hash);
	size_t s;
	struct node *n;
	for (s = slot_of(w, key); w->table[s].node; s = (s + 1) & (w->table_size - 1))
		if (w->table[s].key == key &&
		    !memcmp(w->table[s].node->oid.hash + 8, oid->hash + 8, w->rawsz - 8))
			return w->table[s].node;
	if (2 * (w->nr_nodes + 1) > w->table_size) {
		grow_table(w);
		for (s = slot_of(w, key); w->table[s].node; s = (s + 1) & (w->table_size - 1))
			;
	}
	if (!w->blocks || w->blocks->used == NODE_BLOCK) {
		struct node_block *b = xmalloc(sizeof(*b));
		b->next = w->blocks;
		b->used = 0;
		w->blocks = b;
	}
	n = &w->blocks->nodes[w->blocks->used++];
	memset(n, 0, sizeof(*n));
	n->oid = *oid;
	w->table[s].key = key;
	w->table[s].node = n;
	w->nr_nodes++;
	return n;
}
void rev_walk_mark_uninteresting(struct rev_walk *w, const struct object_id *oid)
{
	struct node *n = lookup(w, oid);
	n->flags |= N_UNINTERESTING | N_SEEN;
}

/*
 * The walks look up every entry of every tree they read (133 million
 * lookups for git.git's 837k objects), and nearly every lookup misses
 * the cache twice: the table slot, then the node (to compare the
 * name). One after the other, each lookup would wait for its misses;
 * so a cursor runs ahead of the tree iterator, prefetching the slot of
 * the entry PREFETCH_AHEAD entries on and the node of the one half as
 * far, whose slot has arrived by then. Only a hint: a malformed tree
 * is left to tree_iter_next() to report.
 */
#define PREFETCH_AHEAD 16
#define PREFETCH_RING (PREFETCH_AHEAD / 2)

struct prefetch {
	const unsigned char *p, *end;
	size_t slots[PREFETCH_RING];   /* of the entries half way ahead */
	unsigned step;
};

static void prefetch_step(const struct rev_walk *w, struct prefetch *pf)
{
	size_t *ring = &pf->slots[pf->step++ % PREFETCH_RING];
	const unsigned char *nul = pf->p < pf->end
		? memchr(pf->p, '\0', (size_t)(pf->end - pf->p)) : NULL;
	if (*ring != SIZE_MAX && w->table[*ring].node)
		__builtin_prefetch(w->table[*ring].node);
	if (!nul || (size_t)(pf->end - nul) <= w->rawsz) {
		pf->p = pf->end;
		*ring = SIZE_MAX;
		return;
	}
	*ring = slot_of(w, get_be64(nul + 1));
	__builtin_prefetch(&w->table[*ring]);
	pf->p = nul + 1 + w->rawsz;
}

static void prefetch_start(const struct rev_walk *w, struct prefetch *pf,
			   const unsigned char *buf, size_t size)
{
	pf->p = buf;
	pf->end = buf + size;
	pf->step = 0;
	for (unsigned i = 0; i < PREFETCH_RING; i++)
		pf->slots[i] = SIZE_MAX;
	for (unsigned i = 0; i < PREFETCH_AHEAD; i++)
		prefetch_step(w, pf);
}

/* ---- the commit queue: a binary heap, newest first ----------------------- */

static bool heap_before(const struct queued *a, const struct queued *b)
{
	return a->date != b->date ? a->date > b->date : a->seq < b->seq;
}

static void heap_push(struct rev_walk *w, struct node *n)
{
	size_t pos = w->heap_nr++;
	ALLOC_GROW(w->heap, w->heap_nr, w->heap_alloc);
	w->heap[pos].date = n->commit->date;
	w->heap[pos].seq = w->seq++;
	w->heap[pos].node = n;
	while (pos && heap_before(&w->heap[pos], &w->heap[(pos - 1) / 2])) {
		struct queued t = w->heap[pos];
		w->heap[pos] = w->heap[(pos - 1) / 2];
		w->heap[(pos - 1) / 2] = t;
		pos = (pos - 1) / 2;
	}
	n->flags |= N_QUEUED;
}

static struct node *heap_pop(struct rev_walk *w)
{
	struct node *top = w->heap[0].node;
	size_t pos = 0;
	w->heap[0] = w->heap[--w->heap_nr];
	for (;;) {
		size_t l = 2 * pos + 1, r = l + 1, best = pos;
		if (l < w->heap_nr && heap_before(&w->heap[l], &w->heap[best]))
			best = l;
		if (r < w->heap_nr && heap_before(&w->heap[r], &w->heap[best]))
			best = r;
		if (best == pos)
			break;
		struct queued t = w->heap[pos];
		w->heap[pos] = w->heap[best];
		w->heap[best] = t;
		pos = best;
	}
	return top;
}

/* ---- reading objects ------------------------------------------------------ */

static int read_typed(struct rev_walk *w, struct node *n, enum object_type want,
		      unsigned char **data, size_t *size, struct gp_error *err)
{
	enum object_type type;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = odb_read_object(w->odb, &n->oid, &type, data, size, err);
	if (ret == GP_ENOTFOUND && want == OBJ_TREE)   /* git's words for it */
		return gp_error_set(err, GP_ENOTFOUND, "bad tree object %s", oid_to_hex_r(hex, &n->oid));
	if (ret == GP_ENOTFOUND)
		return gp_error_set(err, GP_ENOTFOUND, "missing %s %s",
				    type_name(want) ? type_name(want) : "object",
				    oid_to_hex_r(hex, &n->oid));
	if (ret)
		return ret;
	if (want != OBJ_NONE && type != want) {
		free(*data);
		return gp_error_set(err, GP_ECORRUPT, "object %s is a %s, not a %s",
				    oid_to_hex_r(hex, &n->oid), type_name(type), type_name(want));
	}
	n->type = (uint8_t)type;
	return 0;
}

/* The commit-graph's entry stands for the commit: nothing is inflated. */
static int parse_commit_from_graph(struct rev_walk *w, struct node *n, uint32_t pos,
				   struct gp_error *err)
{
	struct commit_graph_entry e;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = commit_graph_entry_at(w->graph, pos, &e, err);
	if (ret)
		return gp_error_prefix(err, "commit %s", oid_to_hex_r(hex, &n->oid));
	if (w->shallow && oidset_contains(w->shallow, &n->oid))
		e.nr_parents = 0;
	n->type = OBJ_COMMIT;
	n->commit = new_commit_data(e.nr_parents);
	n->commit->tree = e.tree;
	n->commit->date = e.date;
	for (uint32_t i = 0; i < e.nr_parents; i++) {
		struct object_id oid;
		uint32_t parent_pos = commit_graph_parent(&e, i);
		struct node *parent;
		commit_graph_oid(w->graph, parent_pos, &oid);
		parent = lookup(w, &oid);
		parent->type = OBJ_COMMIT;
		if (!parent->commit) {
			parent->graph_pos1 = parent_pos + 1;
			commit_graph_prefetch(w->graph, parent_pos);
		}
		n->commit->parents[i] = parent;
	}
	return 0;
}

static int parse_commit(struct rev_walk *w, struct node *n, struct gp_error *err)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	uint32_t pos;
	unsigned char *data;
	size_t size;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;
	if (n->commit)
		return 0;
	if (w->graph && n->graph_pos1)
		return parse_commit_from_graph(w, n, n->graph_pos1 - 1, err);
	if (w->graph && commit_graph_find(w->graph, &n->oid, &pos))
		return parse_commit_from_graph(w, n, pos, err);
	ret = read_typed(w, n, OBJ_COMMIT, &data, &size, err);
	if (ret)
		return ret;
	ret = commit_parse(data, size, w->algo, &ci, err);
	free(data);
	if (ret)
		return gp_error_prefix(err, "commit %s", oid_to_hex_r(hex, &n->oid));
	/* A shallow commit's parents are not there to walk: a graft of none. */
	if (w->shallow && oidset_contains(w->shallow, &n->oid))
		ci.nr_parents = 0;
	n->commit = new_commit_data(ci.nr_parents);
	n->commit->tree = ci.tree;
	n->commit->date = ci.date;
	for (size_t i = 0; i < ci.nr_parents; i++) {
		n->commit->parents[i] = lookup(w, &ci.parents[i]);
		n->commit->parents[i]->type = OBJ_COMMIT;
	}
	commit_info_release(&ci);
	return 0;
}

/* ---- tips ------------------------------------------------------------------ */

static void add_pending(struct rev_walk *w, struct node *n, char *name)
{
	ALLOC_GROW(w->pending, w->nr_pending + 1, w->alloc_pending);
	w->pending[w->nr_pending].node = n;
	w->pending[w->nr_pending].name = name;
	w->nr_pending++;
}

int rev_walk_add_tip(struct rev_walk *w, const struct object_id *oid,
		     bool uninteresting, const char *name, struct gp_error *err)
{
	struct node *n = lookup(w, oid), *cur = n;
	struct object_info info;
	int depth = 0, ret;

	for (;;) {
		unsigned char *data;
		size_t size;
		struct tag_info tag;
		char hex[GP_MAX_HEXSZ + 1];
		if (!cur->type) {
			ret = odb_read_object_info(w->odb, &cur->oid, &info, 0, err);
			if (ret)
				return ret;
			cur->type = (uint8_t)info.type;
		}
		if (cur->type != OBJ_TAG)
			break;
		if (uninteresting)
			cur->flags |= N_UNINTERESTING | N_SEEN;
		if (++depth > 64)
			return gp_error_set(err, GP_ECORRUPT, "tag chain from %s is too long",
					    oid_to_hex_r(hex, oid));
		ret = read_typed(w, cur, OBJ_TAG, &data, &size, err);
		if (ret)
			return ret;
		ret = tag_parse(data, size, w->algo, &tag, err);
		if (!ret && !uninteresting) {
			add_pending(w, cur, tag.name ? xstrndup(tag.name, tag.name_len) : xstrdup(""));
			cur->flags |= N_TIP;
		}
		free(data);
		if (ret)
			return gp_error_prefix(err, "tag %s", oid_to_hex_r(hex, &cur->oid));
		cur = lookup(w, &tag.object);
	}
	if (!uninteresting && (cur->type == OBJ_TREE || cur->type == OBJ_BLOB))
		add_pending(w, cur, xstrdup(name ? name : ""));
	if (!uninteresting)
		cur->flags |= N_TIP;
	ALLOC_GROW(w->tips, w->nr_tips + 1, w->alloc_tips);
	w->tips[w->nr_tips].node = n;
	w->tips[w->nr_tips].peeled = cur;
	w->tips[w->nr_tips].name = xstrdup(name ? name : "");
	w->tips[w->nr_tips].uninteresting = uninteresting;
	w->nr_tips++;
	return 0;
}

/* ---- the commit walk ---------------------------------------------------- */

/* Mark the already-parsed ancestry of n uninteresting (iteratively). */
static void mark_parents_uninteresting(struct rev_walk *w, struct node *n)
{
	struct node **stack = NULL;
	size_t nr = 0, alloc = 0;
	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr++] = n;
	while (nr) {
		struct node *c = stack[--nr];
		if (!c->commit)
			continue;
		for (size_t i = 0; i < c->commit->nr_parents; i++) {
			struct node *p = c->commit->parents[i];
			if (p->flags & N_UNINTERESTING)
				continue;
			p->flags |= N_UNINTERESTING;
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr++] = p;
		}
	}
	free(stack);
}

static bool everybody_uninteresting(const struct rev_walk *w)
{
	for (size_t i = 0; i < w->heap_nr; i++)
		if (!(w->heap[i].node->flags & N_UNINTERESTING))
			return false;
	return true;
}

static int walk_commits(struct rev_walk *w, struct gp_error *err)
{
	bool limited = false;
	int slop = LIMIT_SLOP;
	int ret;

	for (size_t i = 0; i < w->nr_tips; i++) {
		struct node *c = w->tips[i].peeled;
		if (c->type != OBJ_COMMIT)
			continue;
		if (w->tips[i].uninteresting) {
			c->flags |= N_UNINTERESTING;
			limited = true;
		}
	}
	for (size_t i = 0; i < w->nr_tips; i++) {
		struct node *c = w->tips[i].peeled;
		if (c->type != OBJ_COMMIT || (c->flags & N_QUEUED))
			continue;
		ret = parse_commit(w, c, err);
		if (ret)
			return ret;
		heap_push(w, c);
	}
	while (w->heap_nr) {
		struct node *c;
		if (limited && everybody_uninteresting(w) && --slop < 0)
			break;
		c = heap_pop(w);
		/*
		 * Too old for --max-age: git's unlimited walk drops the
		 * commit and does not follow its parents; a limited one
		 * makes it uninteresting, and so its ancestry.
		 */
		if (w->has_max_age && c->commit->date < w->max_age) {
			if (!limited)
				continue;
			c->flags |= N_UNINTERESTING;
		}
		if (c->flags & N_UNINTERESTING)
			mark_parents_uninteresting(w, c);
		else if (!(c->flags & N_LISTED)) {
			ALLOC_GROW(w->list, w->list_nr + 1, w->list_alloc);
			w->list[w->list_nr++] = c;
			c->flags |= N_LISTED;
		}
		for (size_t i = 0; i < c->commit->nr_parents; i++) {
			struct node *p = c->commit->parents[i];
			if (c->flags & N_UNINTERESTING)
				p->flags |= N_UNINTERESTING;
			if (p->flags & N_QUEUED)
				continue;
			ret = parse_commit(w, p, err);
			/*
			 * An uninteresting history may end early: a repository
			 * made from a patch, or a shallow one, holds a commit
			 * without its parents. git walks on, and so do we.
			 */
			if (ret == GP_ENOTFOUND && (p->flags & N_UNINTERESTING)) {
				gp_error_clear(err);
				p->flags |= N_QUEUED;
				continue;
			}
			if (ret)
				return ret;
			if (p->flags & N_UNINTERESTING)
				mark_parents_uninteresting(w, p);
			heap_push(w, p);
		}
	}
	return 0;
}

/* ---- objects ------------------------------------------------------------- */

/*
 * Trees are walked with an explicit stack, never by recursion: a tree
 * nested 100,000 deep (a few MB of objects anyone can push) must not
 * overflow the C stack of a server.
 */
struct tree_frame {
	struct node *tree;
	unsigned char *buf;
	struct tree_iter it;
	struct prefetch pf;
	size_t path_len;      /* the tree's own path, in w->path */
	size_t basename_ofs;  /* where its last component starts */
	bool filtered;        /* the filter decides it: it hears of its end too */
};

struct tree_stack {
	struct tree_frame *frames;
	size_t nr, alloc;
};

static void tree_stack_pop(struct tree_stack *st)
{
	free(st->frames[--st->nr].buf);
}

static void tree_stack_clear(struct tree_stack *st)
{
	while (st->nr)
		tree_stack_pop(st);
	free(st->frames);
}

static void tree_stack_push(struct rev_walk *w, struct tree_stack *st, struct node *tree,
			    unsigned char *buf, size_t size, size_t basename_ofs, bool filtered)
{
	struct tree_frame *f;
	ALLOC_GROW(st->frames, st->nr + 1, st->alloc);
	f = &st->frames[st->nr++];
	f->tree = tree;
	f->buf = buf;
	f->path_len = w->path.len;
	f->basename_ofs = basename_ofs;
	f->filtered = filtered;
	prefetch_start(w, &f->pf, buf, size);
	tree_iter_init(&f->it, buf, size, w->algo);
}

static void report_missing(struct rev_walk *w, const struct object_id *oid)
{
	if (w->missing == REV_MISSING_PRINT && w->missing_fn)
		w->missing_fn(oid, w->missing_data);
}

/* A missing object under a permissive --missing: true when it is skipped. */
static bool skip_missing(struct rev_walk *w, const struct object_id *oid, int ret,
			 struct gp_error *err)
{
	if (ret != GP_ENOTFOUND || w->missing == REV_MISSING_ERROR)
		return false;
	gp_error_clear(err);
	report_missing(w, oid);
	return true;
}

static int mark_tree_uninteresting(struct rev_walk *w, struct node *root,
				   struct gp_error *err)
{
	struct tree_stack st = { NULL, 0, 0 };
	unsigned char *buf;
	size_t size;
	int ret = 0;

	if (root->flags & N_UNINTERESTING)
		return 0;
	root->flags |= N_UNINTERESTING | N_SEEN;
	ret = read_typed(w, root, OBJ_TREE, &buf, &size, err);
	if (ret)
		return skip_missing(w, &root->oid, ret, err) ? 0 : ret;
	tree_stack_push(w, &st, root, buf, size, 0, false);
	while (!ret && st.nr) {
		struct tree_frame *f = &st.frames[st.nr - 1];
		struct tree_entry e;
		enum object_type type;
		struct node *child;

		ret = tree_iter_next(&f->it, &e, err);
		if (ret <= 0) {
			tree_stack_pop(&st);
			continue;
		}
		ret = 0;
		prefetch_step(w, &f->pf);
		type = tree_mode_type(e.mode);
		if (type == OBJ_COMMIT)
			continue;
		child = lookup(w, &e.oid);
		child->type = (uint8_t)type;
		if (type != OBJ_TREE) {
			child->flags |= N_UNINTERESTING | N_SEEN;
		} else if (!(child->flags & N_UNINTERESTING)) {
			child->flags |= N_UNINTERESTING | N_SEEN;
			ret = read_typed(w, child, OBJ_TREE, &buf, &size, err);
			if (ret)
				ret = skip_missing(w, &child->oid, ret, err) ? 0 : ret;
			else
				tree_stack_push(w, &st, child, buf, size, 0, false);
		}
	}
	tree_stack_clear(&st);
	return ret < 0 ? ret : 0;
}

/*
 * Whether the filter decides about n: it does unless the user named n
 * (git's NOT_USER_GIVEN: a tip that has not been met in a tree, nor as
 * a commit's root tree, is always shown), or there is no filter.
 */
static bool filtered(const struct rev_walk *w, const struct node *n)
{
	if (!w->filter_state)
		return false;
	return w->filter_provided || !(n->flags & N_TIP) || (n->flags & N_NOT_USER_GIVEN);
}

/* The filter's decision about n, met at w->path; or no filter's. */
static unsigned decide(struct rev_walk *w, struct node *n, bool is_filtered,
		       enum walk_filter_situation situation, size_t basename_ofs)
{
	if (!is_filtered)
		return situation == WF_END_TREE ? 0 : WF_SHOW | WF_MARK_SEEN;
	return walk_filter_decide(w->filter_state, situation, &n->oid, w->path.buf,
				  w->path.len, basename_ofs);
}

/*
 * Blob, met at w->path: shown unless the filter leaves it out. git lists
 * only blobs it has: a missing one stops the walk, unless --missing
 * says otherwise.
 */
static int visit_blob(struct rev_walk *w, struct node *blob, size_t basename_ofs,
		      rev_show_fn *show, void *data, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	unsigned res;

	if (blob->flags & (N_SEEN | N_UNINTERESTING))
		return 0;
	res = decide(w, blob, filtered(w, blob), WF_BLOB, basename_ofs);
	if (res & WF_MARK_SEEN)
		blob->flags |= N_SEEN;
	/* Left out by the filter: whether we have it does not matter. */
	if (!(res & WF_SHOW))
		return 0;
	if (!(w->blobs_unchecked && w->missing == REV_MISSING_ERROR) &&
	    !odb_has_object(w->odb, &blob->oid)) {
		/*
		 * Reading may still fetch it (a partial clone), unless the
		 * caller takes missing objects itself (to fetch them in one go).
		 */
		struct object_info info;
		int ret = w->missing == REV_MISSING_ERROR
			? odb_read_object_info(w->odb, &blob->oid, &info, 0, err) : GP_ENOTFOUND;
		if (!ret)
			goto present;
		gp_error_clear(err);
		ret = gp_error_set(err, GP_ENOTFOUND, "missing blob object '%s'",
				   oid_to_hex_r(hex, &blob->oid));
		return skip_missing(w, &blob->oid, ret, err) ? 0 : ret;
	}
present:
	return show(&blob->oid, OBJ_BLOB, w->path.buf, data);
}

/* Tell the filter tree is left; shown, if it says so (no filter does). */
static int leave_tree(struct rev_walk *w, struct node *tree, bool is_filtered,
		      size_t basename_ofs, rev_show_fn *show, void *data)
{
	unsigned res = decide(w, tree, is_filtered, WF_END_TREE, basename_ofs);
	if (res & WF_MARK_SEEN)
		tree->flags |= N_SEEN;
	if (res & WF_SHOW)
		return show(&tree->oid, OBJ_TREE, w->path.buf, data);
	return 0;
}

/*
 * Enter tree, met at w->path (which it leaves as it was), as git does:
 * read it, ask the filter, show it, and push it for its entries to be
 * walked unless the filter skips them; one not pushed is left at once.
 * A missing tree, under a permissive --missing, is reported if it is to
 * be shown, and has no entries.
 */
static int enter_tree(struct rev_walk *w, struct tree_stack *st, struct node *tree,
		      size_t basename_ofs, rev_show_fn *show, void *data, struct gp_error *err)
{
	bool is_filtered = filtered(w, tree), missing = false;
	unsigned char *buf = NULL;
	size_t size = 0;
	unsigned res;
	int ret = read_typed(w, tree, OBJ_TREE, &buf, &size, err);

	if (ret) {
		if (ret != GP_ENOTFOUND || w->missing == REV_MISSING_ERROR)
			return ret;
		gp_error_clear(err);
		missing = true;
		ret = 0;
	}
	res = decide(w, tree, is_filtered, WF_BEGIN_TREE, basename_ofs);
	if (res & WF_MARK_SEEN)
		tree->flags |= N_SEEN;
	if ((res & WF_SHOW) && missing)
		report_missing(w, &tree->oid);
	else if (res & WF_SHOW)
		ret = show(&tree->oid, OBJ_TREE, w->path.buf, data);
	if (ret) {
		free(buf);
		return ret;
	}
	if (res & WF_SKIP_TREE) {
		trace_printf("Skipping contents of tree %s%s...", w->path.buf,
			     w->path.len ? "/" : "");
	} else if (!missing) {
		tree_stack_push(w, st, tree, buf, size, basename_ofs, is_filtered);
		return 0;
	}
	free(buf);
	return leave_tree(w, tree, is_filtered, basename_ofs, show, data);
}

/*
 * Walk the tree root, met at w->path (a commit's root tree at "", a
 * tree tip at its name, whose last component git takes to be all of it).
 */
static int walk_tree(struct rev_walk *w, struct node *root, rev_show_fn *show, void *data,
		     struct gp_error *err)
{
	struct tree_stack st = { NULL, 0, 0 };
	int ret;

	if (root->flags & (N_SEEN | N_UNINTERESTING))
		return 0;
	ret = enter_tree(w, &st, root, 0, show, data, err);
	while (!ret && st.nr) {
		struct tree_frame *f = &st.frames[st.nr - 1];
		struct tree_entry e;
		enum object_type type;
		struct node *child;
		size_t basename_ofs;

		ret = tree_iter_next(&f->it, &e, err);
		if (ret < 0)
			break;
		if (!ret) {
			struct node *tree = f->tree;
			bool is_filtered = f->filtered;
			basename_ofs = f->basename_ofs;
			strbuf_setlen(&w->path, f->path_len);
			tree_stack_pop(&st);
			ret = leave_tree(w, tree, is_filtered, basename_ofs, show, data);
			continue;
		}
		ret = 0;
		prefetch_step(w, &f->pf);
		type = tree_mode_type(e.mode);
		if (type == OBJ_COMMIT)
			continue;
		child = lookup(w, &e.oid);
		child->type = (uint8_t)type;
		child->flags |= N_NOT_USER_GIVEN;
		if (child->flags & (N_SEEN | N_UNINTERESTING))
			continue;
		strbuf_setlen(&w->path, f->path_len);
		if (f->path_len)
			strbuf_addch(&w->path, '/');
		basename_ofs = w->path.len;
		strbuf_add(&w->path, e.name, e.name_len);
		if (type == OBJ_TREE)
			ret = enter_tree(w, &st, child, basename_ofs, show, data, err);
		else
			ret = visit_blob(w, child, basename_ofs, show, data, err);
	}
	tree_stack_clear(&st);
	return ret;
}

static void add_edge(struct rev_walk *w, struct node *parent)
{
	for (size_t i = 0; i < w->nr_edges; i++)
		if (w->edges[i] == parent)
			return;
	ALLOC_GROW(w->edges, w->nr_edges + 1, w->alloc_edges);
	w->edges[w->nr_edges++] = parent;
}

int rev_walk_for_each_edge(struct rev_walk *w, size_t max, rev_edge_fn *fn, void *data)
{
	for (size_t i = 0; i < w->nr_edges && (!max || i < max); i++) {
		int ret;
		if (!w->edges[i]->commit)
			continue;
		ret = fn(&w->edges[i]->commit->tree, data);
		if (ret)
			return ret;
	}
	return 0;
}

int rev_walk_for_each_omitted(struct rev_walk *w, rev_omit_fn *fn, void *data)
{
	if (!w->filter_state)
		return 0;
	return walk_filter_for_each_omitted(w->filter_state, fn, data);
}

/*
 * The uninteresting parent of a shown commit is an edge; 1 when its
 * history ends before it (a commit without its parents), 0 when parsed.
 */
static int parse_edge(struct rev_walk *w, struct node *parent, struct gp_error *err)
{
	int ret = parse_commit(w, parent, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		return 1;
	}
	if (ret)
		return ret;
	add_edge(w, parent);
	return 0;
}

/* Every object the edges' trees hold is uninteresting. */
static int mark_edges(struct rev_walk *w, struct gp_error *err)
{
	for (size_t i = 0; i < w->list_nr; i++) {
		struct node *c = w->list[i];
		if (c->flags & N_UNINTERESTING)
			continue;
		for (size_t p = 0; p < c->commit->nr_parents; p++) {
			struct node *parent = c->commit->parents[p];
			int ret;
			if (!(parent->flags & N_UNINTERESTING))
				continue;
			ret = parse_edge(w, parent, err);
			if (ret > 0)
				continue;
			if (!ret)
				ret = mark_tree_uninteresting(w, lookup(w, &parent->commit->tree), err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct named_tree {
	const char *name;    /* borrowed from a tree buffer of the pass */
	struct node *tree;
};

static int cmp_named_tree(const void *va, const void *vb)
{
	const struct named_tree *a = va, *b = vb;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->tree < b->tree ? -1 : a->tree > b->tree;
}

/*
 * git's sparse algorithm (pack.useSparse): the shown commits' trees and
 * the edges' trees form a set; a set holding both interesting and
 * uninteresting trees is opened, an uninteresting tree passes that on
 * to its entries, and the subtrees found under one name form the next
 * set. Only paths where something changed are read, so a push of a few
 * files costs a few trees, whatever the size of the repository; an
 * object that also sits at an unchanged path is sent again. Sets wait
 * on an explicit stack, never the C stack.
 */
static int mark_edges_sparse(struct rev_walk *w, struct gp_error *err)
{
	struct set { struct node **trees; size_t nr; } *stack = NULL;
	size_t stack_nr = 0, stack_alloc = 0;
	struct node **roots = NULL;
	size_t roots_nr = 0, roots_alloc = 0;
	int ret = 0;

	for (size_t i = 0; i < w->list_nr; i++) {
		struct node *c = w->list[i];
		if (c->flags & N_UNINTERESTING)
			continue;
		ALLOC_GROW(roots, roots_nr + 1, roots_alloc);
		roots[roots_nr++] = lookup(w, &c->commit->tree);
		for (size_t p = 0; p < c->commit->nr_parents; p++) {
			struct node *parent = c->commit->parents[p], *tree;
			if (!(parent->flags & N_UNINTERESTING))
				continue;
			ret = parse_edge(w, parent, err);
			if (ret > 0)
				continue;
			if (ret)
				goto out;
			tree = lookup(w, &parent->commit->tree);
			tree->type = OBJ_TREE;
			tree->flags |= N_UNINTERESTING;
			ALLOC_GROW(roots, roots_nr + 1, roots_alloc);
			roots[roots_nr++] = tree;
		}
	}
	ALLOC_GROW(stack, stack_nr + 1, stack_alloc);
	stack[stack_nr].trees = roots;
	stack[stack_nr++].nr = roots_nr;
	roots = NULL;

	while (stack_nr) {
		struct set set = stack[--stack_nr];
		bool has_interesting = false, has_uninteresting = false;
		struct named_tree *children = NULL;
		size_t nr_children = 0, alloc_children = 0;
		unsigned char **bufs = xcalloc(set.nr ? set.nr : 1, sizeof(*bufs));

		for (size_t i = 0; i < set.nr; i++) {
			if (set.trees[i]->flags & N_UNINTERESTING)
				has_uninteresting = true;
			else
				has_interesting = true;
		}
		for (size_t i = 0; has_interesting && has_uninteresting && i < set.nr; i++) {
			struct node *tree = set.trees[i];
			bool unint = tree->flags & N_UNINTERESTING;
			struct tree_iter it;
			struct tree_entry e;
			size_t size;
			if (i && set.trees[i - 1] == tree)
				continue;
			ret = read_typed(w, tree, OBJ_TREE, &bufs[i], &size, err);
			if (ret) {
				/* a tree nobody wants may be missing; the walk goes on */
				if (unint && ret == GP_ENOTFOUND) {
					gp_error_clear(err);
					ret = 0;
					continue;
				}
				if (skip_missing(w, &tree->oid, ret, err)) {
					ret = 0;
					continue;
				}
				break;
			}
			tree_iter_init(&it, bufs[i], size, w->algo);
			while ((ret = tree_iter_next(&it, &e, err)) > 0) {
				enum object_type type = tree_mode_type(e.mode);
				struct node *child;
				if (type == OBJ_COMMIT)
					continue;
				child = lookup(w, &e.oid);
				child->type = (uint8_t)type;
				if (unint)
					child->flags |= N_UNINTERESTING | (type == OBJ_TREE ? 0 : N_SEEN);
				if (type != OBJ_TREE)
					continue;
				ALLOC_GROW(children, nr_children + 1, alloc_children);
				children[nr_children].name = e.name;
				children[nr_children++].tree = child;
			}
			if (ret < 0)
				break;
			ret = 0;
		}
		if (!ret && nr_children) {
			qsort(children, nr_children, sizeof(*children), cmp_named_tree);
			for (size_t i = 0; i < nr_children;) {
				size_t j = i;
				struct node **trees;
				while (j < nr_children && !strcmp(children[j].name, children[i].name))
					j++;
				trees = xmalloc(sizeof(*trees) * (j - i));
				for (size_t k = i; k < j; k++)
					trees[k - i] = children[k].tree;
				ALLOC_GROW(stack, stack_nr + 1, stack_alloc);
				stack[stack_nr].trees = trees;
				stack[stack_nr++].nr = j - i;
				i = j;
			}
		}
		for (size_t i = 0; i < set.nr; i++)
			free(bufs[i]);
		free(bufs);
		free(children);
		free(set.trees);
		if (ret)
			goto out;
	}
out:
	while (stack_nr)
		free(stack[--stack_nr].trees);
	free(stack);
	free(roots);
	return ret;
}

int rev_walk_run(struct rev_walk *w, unsigned flags, rev_show_fn *show,
		 void *data, struct gp_error *err)
{
	int ret = walk_commits(w, err);
	if (ret)
		return ret;

	if (w->filter && !w->filter_state)
		w->filter_state = walk_filter_start(w->filter, w->odb, w->filter_omits);

	/* Commits found uninteresting after they were listed drop out. */
	for (size_t i = 0; i < w->list_nr; i++) {
		struct node *c = w->list[i];
		unsigned res;
		if (c->flags & N_UNINTERESTING)
			continue;
		/* git has walked its root tree from here on: no tip's any more */
		if (flags & REV_OBJECTS)
			lookup(w, &c->commit->tree)->flags |= N_NOT_USER_GIVEN;
		res = decide(w, c, filtered(w, c), WF_COMMIT, 0);
		if (!(res & WF_SHOW))
			continue;
		ret = show(&c->oid, OBJ_COMMIT, NULL, data);
		if (ret)
			return ret;
	}
	if (!(flags & REV_OBJECTS))
		return 0;

	/* git's edges: the trees of shown commits' uninteresting parents. */
	ret = w->sparse ? mark_edges_sparse(w, err) : mark_edges(w, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < w->nr_tips; i++) {
		struct tip *t = &w->tips[i];
		if (!t->uninteresting)
			continue;
		if (w->edge_aggressive && t->peeled->type == OBJ_COMMIT) {
			ret = parse_commit(w, t->peeled, err);
			if (!ret)
				ret = mark_tree_uninteresting(w, lookup(w, &t->peeled->commit->tree), err);
			if (!ret)
				add_edge(w, t->peeled);
			if (ret)
				return ret;
			continue;
		}
		if (t->peeled->type == OBJ_TREE)
			ret = mark_tree_uninteresting(w, t->peeled, err);
		else if (t->peeled->type == OBJ_BLOB)
			t->peeled->flags |= N_UNINTERESTING | N_SEEN;
		if (ret)
			return ret;
	}

	/* The tips' tags, trees and blobs first, then the shown commits' trees. */
	for (size_t i = 0; i < w->nr_pending; i++) {
		struct pending *pe = &w->pending[i];
		struct node *n = pe->node;
		if (n->flags & (N_SEEN | N_UNINTERESTING))
			continue;
		strbuf_reset(&w->path);
		strbuf_addstr(&w->path, pe->name);
		if (n->type == OBJ_TREE) {
			ret = walk_tree(w, n, show, data, err);
		} else if (n->type == OBJ_BLOB) {
			ret = visit_blob(w, n, 0, show, data, err);
		} else {
			unsigned res = decide(w, n, filtered(w, n), WF_TAG, 0);
			if (res & WF_MARK_SEEN)
				n->flags |= N_SEEN;
			if (res & WF_SHOW)
				ret = show(&n->oid, (enum object_type)n->type, pe->name, data);
		}
		strbuf_reset(&w->path);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < w->list_nr; i++) {
		struct node *c = w->list[i];
		if (c->flags & N_UNINTERESTING)
			continue;
		strbuf_reset(&w->path);
		ret = walk_tree(w, lookup(w, &c->commit->tree), show, data, err);
		if (ret)
			return ret;
	}
	return 0;
}
