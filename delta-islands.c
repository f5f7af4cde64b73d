/*
 * delta-islands.c: see delta-islands.h.
 *
 * Sets of islands are interned: each distinct set is stored once, as a
 * row of 64-bit words, and named by its number (0 is the empty set).
 * An object holds a set number; marking an object is a union of two
 * numbers, looked up again in the table (with a small memo, since the
 * same pair recurs along a whole history).
 *
 * Marks must reach an object only after every object pointing at it
 * has all of its own: an island's objects are those reachable from its
 * refs. Three passes give that order:
 *
 *   tips     each ref's island goes to its object, and down a chain of
 *            annotated tags to what they finally point at;
 *   commits  the commits reachable from marked ones are read once,
 *            then processed children first (Kahn's order over the
 *            parent links kept in memory), each passing its set to
 *            its parents and its root tree;
 *   trees    a first-in first-out queue of trees whose set grew: each
 *            is read and passes its set to its entries. Root trees go
 *            in first and a tree usually sits at the same depth under
 *            every root, so it mostly has all its marks when its turn
 *            comes; when a later path does bring it more, it is queued
 *            again, which keeps the result exact.
 */
#include "delta-islands.h"
#include "commit.h"
#include "config.h"
#include "error.h"
#include "odb.h"
#include "progress.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include "tree.h"
#include <regex.h>

/* git names an island by at most 14 capture groups. */
#define MAX_GROUPS 14
/* Tags pointing at tags: a chain this long is not followed further. */
#define MAX_TAG_HOPS 64
#define NO_ISLAND UINT32_MAX
#define FREE_SLOT UINT32_MAX
#define MEMO_SIZE 4096

struct island_tip {
	struct object_id oid;
	uint32_t island;
};

struct delta_islands {
	regex_t *regexes;
	size_t nr_regexes;

	/* Island names by island number, and a hash table of them. */
	char **names;
	size_t nr_names, alloc_names;
	uint32_t *name_slots;
	size_t name_mask;

	struct island_tip *tips;
	size_t nr_tips, alloc_tips;
	char *core_name;
	uint32_t core;           /* island number of pack.islandCore, or NO_ISLAND */

	/* After delta_islands_resolve(): by object number, its set number. */
	uint32_t *set_of;
	uint32_t nr_objects;

	/* The distinct sets: nr_sets rows of words 64-bit words. */
	size_t words;
	uint64_t *bits;
	uint32_t *weight;        /* by set number: how many islands it holds */
	uint32_t nr_sets, alloc_sets;
	uint32_t *set_slots;     /* hash table of set numbers, by their bits */
	size_t set_mask;
	uint64_t *scratch;       /* one row, where a new set is built */
	struct union_memo { uint32_t a, b, sum; } *memo;
};

/* ------------------------------------------------------------------ */
/* Names                                                               */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;   /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3u;
	}
	return h;
}

static void grow_names(struct delta_islands *di)
{
	size_t size = (di->name_mask + 1) * 2;
	free(di->name_slots);
	di->name_slots = xmalloc(size * sizeof(*di->name_slots));
	memset(di->name_slots, 0xff, size * sizeof(*di->name_slots));
	di->name_mask = size - 1;
	for (uint32_t island = 0; island < di->nr_names; island++) {
		size_t at = hash_str(di->names[island]) & di->name_mask;
		while (di->name_slots[at] != FREE_SLOT)
			at = (at + 1) & di->name_mask;
		di->name_slots[at] = island;
	}
}

/* The island called name; with add, made when there is none yet. */
static uint32_t island_named(struct delta_islands *di, const char *name, bool add)
{
	size_t at;
	if (add && (di->nr_names + 1) * 2 > di->name_mask + 1)
		grow_names(di);
	for (at = hash_str(name) & di->name_mask; di->name_slots[at] != FREE_SLOT;
	     at = (at + 1) & di->name_mask)
		if (!strcmp(di->names[di->name_slots[at]], name))
			return di->name_slots[at];
	if (!add)
		return NO_ISLAND;
	ALLOC_GROW(di->names, di->nr_names + 1, di->alloc_names);
	di->names[di->nr_names] = xstrdup(name);
	di->name_slots[at] = (uint32_t)di->nr_names;
	return (uint32_t)di->nr_names++;
}

int delta_islands_new(struct delta_islands **out, const char *const *regexes, size_t nr,
		      struct gp_error *err)
{
	struct delta_islands *di = xcalloc(1, sizeof(*di));
	int ret = 0;

	di->regexes = xcalloc(nr ? nr : 1, sizeof(*di->regexes));
	for (size_t i = 0; i < nr; i++) {
		/* Anchored the way git anchors it (its error shows the "^"). */
		char *anchored = xstrfmt("^%s", regexes[i]);
		if (regcomp(&di->regexes[i], anchored, REG_EXTENDED))
			ret = gp_error_set(err, GP_EINVAL,
					   "failed to load island regex for 'pack.island': %s",
					   anchored);
		free(anchored);
		if (ret)
			break;
		di->nr_regexes++;
	}
	di->name_mask = 15;
	di->name_slots = xmalloc((di->name_mask + 1) * sizeof(*di->name_slots));
	memset(di->name_slots, 0xff, (di->name_mask + 1) * sizeof(*di->name_slots));
	di->core = NO_ISLAND;
	if (ret) {
		delta_islands_free(di);
		di = NULL;
	}
	*out = di;
	return ret;
}

void delta_islands_free(struct delta_islands *di)
{
	if (!di)
		return;
	for (size_t i = 0; i < di->nr_regexes; i++)
		regfree(&di->regexes[i]);
	free(di->regexes);
	for (size_t i = 0; i < di->nr_names; i++)
		free(di->names[i]);
	free(di->names);
	free(di->name_slots);
	free(di->tips);
	free(di->core_name);
	free(di->set_of);
	free(di->bits);
	free(di->weight);
	free(di->set_slots);
	free(di->scratch);
	free(di->memo);
	free(di);
}

bool delta_islands_add_ref(struct delta_islands *di, const char *refname,
			   const struct object_id *oid)
{
	regmatch_t match[MAX_GROUPS + 1];
	struct strbuf name = STRBUF_INIT;
	size_t i;
	int groups = 0;

	/* The last expression that matches wins (later config overrides earlier). */
	for (i = di->nr_regexes; i > 0; i--)
		if (!regexec(&di->regexes[i - 1], refname, ARRAY_SIZE(match), match, 0))
			break;
	if (!i)
		return false;
	/* Groups that took no part in the match add nothing to the name, as in git. */
	for (size_t g = 1; g <= MAX_GROUPS; g++) {
		if (match[g].rm_so < 0)
			continue;
		if (groups++)
			strbuf_addch(&name, '-');
		strbuf_add(&name, refname + match[g].rm_so,
			   (size_t)(match[g].rm_eo - match[g].rm_so));
	}
	ALLOC_GROW(di->tips, di->nr_tips + 1, di->alloc_tips);
	di->tips[di->nr_tips].oid = *oid;
	di->tips[di->nr_tips].island = island_named(di, name.buf, true);
	di->nr_tips++;
	strbuf_release(&name);
	return true;
}

size_t delta_islands_nr(const struct delta_islands *di)
{
	return di->nr_names;
}

void delta_islands_set_core(struct delta_islands *di, const char *name)
{
	free(di->core_name);
	di->core_name = name ? xstrdup(name) : NULL;
}

struct load_ctx {
	struct delta_islands *di;
};

static int load_ref(const char *refname, const struct object_id *oid,
		    const struct object_id *peeled, unsigned flags, void *data)
{
	struct load_ctx *lc = data;
	delta_islands_add_ref(lc->di, refname, oid);
	return 0;
}

int delta_islands_load(struct delta_islands **out, struct repository *repo,
		       struct gp_error *err)
{
	const char **regexes = NULL;
	size_t nr = 0, alloc = 0;
	struct load_ctx lc = { NULL };
	const char *core;
	int ret = 0;

	*out = NULL;
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		if (strcmp(e->key, "pack.island"))
			continue;
		if (!e->value) {
			ret = gp_error_set(err, GP_EINVAL, "missing value for 'pack.island'");
			goto out;
		}
		ALLOC_GROW(regexes, nr + 1, alloc);
		regexes[nr++] = e->value;
	}
	if (!config_get_value(&repo->config, "pack.islandcore", &core) && !core) {
		ret = gp_error_set(err, GP_EINVAL, "missing value for 'pack.islandcore'");
		goto out;
	}
	if (!nr)
		goto out;
	ret = delta_islands_new(&lc.di, regexes, nr, err);
	if (!ret)
		ret = refs_for_each(repo, "", load_ref, &lc, err);
	if (ret || !delta_islands_nr(lc.di)) {
		delta_islands_free(lc.di);
		goto out;
	}
	if (!config_get_value(&repo->config, "pack.islandcore", &core))
		delta_islands_set_core(lc.di, core);
	*out = lc.di;
out:
	free(regexes);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sets                                                                */

static inline const uint64_t *set_row(const struct delta_islands *di, uint32_t set)
{
	return di->bits + (size_t)set * di->words;
}

static uint64_t hash_row(const uint64_t *row, size_t words)
{
	uint64_t h = 0x9e3779b97f4a7c15u;
	for (size_t w = 0; w < words; w++) {
		h ^= row[w];
		h *= 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	return h;
}

static void grow_sets(struct delta_islands *di)
{
	size_t size = (di->set_mask + 1) * 2;
	free(di->set_slots);
	di->set_slots = xmalloc(size * sizeof(*di->set_slots));
	memset(di->set_slots, 0xff, size * sizeof(*di->set_slots));
	di->set_mask = size - 1;
	for (uint32_t set = 0; set < di->nr_sets; set++) {
		size_t at = hash_row(set_row(di, set), di->words) & di->set_mask;
		while (di->set_slots[at] != FREE_SLOT)
			at = (at + 1) & di->set_mask;
		di->set_slots[at] = set;
	}
}

/*
 * The number of the set in di->scratch, added when new. Rows are at
 * most 2^26 words (2^32 islands) and sets at most one per object, so
 * the sizes below cannot overflow a 64-bit size_t.
 */
static uint32_t intern_scratch(struct delta_islands *di)
{
	size_t at, row_size = di->words * sizeof(uint64_t);
	uint32_t weight = 0;

	if (((size_t)di->nr_sets + 1) * 2 > di->set_mask + 1)
		grow_sets(di);
	for (at = hash_row(di->scratch, di->words) & di->set_mask; di->set_slots[at] != FREE_SLOT;
	     at = (at + 1) & di->set_mask)
		if (!memcmp(set_row(di, di->set_slots[at]), di->scratch, row_size))
			return di->set_slots[at];
	if (di->nr_sets == di->alloc_sets) {
		di->alloc_sets = di->alloc_sets ? di->alloc_sets * 2 : 64;
		di->bits = xrealloc(di->bits, (size_t)di->alloc_sets * row_size);
		di->weight = xrealloc(di->weight, (size_t)di->alloc_sets * sizeof(*di->weight));
	}
	memcpy(di->bits + (size_t)di->nr_sets * di->words, di->scratch, row_size);
	for (size_t w = 0; w < di->words; w++)
		weight += (uint32_t)__builtin_popcountll(di->scratch[w]);
	di->weight[di->nr_sets] = weight;
	di->set_slots[at] = di->nr_sets;
	return di->nr_sets++;
}

static uint32_t set_union(struct delta_islands *di, uint32_t a, uint32_t b)
{
	struct union_memo *m;
	const uint64_t *ra, *rb;
	uint32_t sum;

	if (a == b || !b)
		return a;
	if (!a)
		return b;
	if (a > b) {
		uint32_t t = a;
		a = b;
		b = t;
	}
	m = &di->memo[(a * 0x9e3779b1u ^ b) & (MEMO_SIZE - 1)];
	if (m->a == a && m->b == b)
		return m->sum;
	ra = set_row(di, a);
	rb = set_row(di, b);
	for (size_t w = 0; w < di->words; w++)
		di->scratch[w] = ra[w] | rb[w];
	sum = intern_scratch(di);
	m->a = a;
	m->b = b;
	m->sum = sum;
	return sum;
}

static uint32_t set_with(struct delta_islands *di, uint32_t set, uint32_t island)
{
	memcpy(di->scratch, set_row(di, set), di->words * sizeof(uint64_t));
	di->scratch[island / 64] |= (uint64_t)1 << (island % 64);
	return intern_scratch(di);
}

static bool set_subset(const struct delta_islands *di, uint32_t a, uint32_t b)
{
	const uint64_t *ra, *rb;
	if (a == b || !a)
		return true;
	if (!b || di->weight[a] >= di->weight[b])
		return false;   /* equal weight and different sets: not a subset */
	ra = set_row(di, a);
	rb = set_row(di, b);
	for (size_t w = 0; w < di->words; w++)
		if (ra[w] & ~rb[w])
			return false;
	return true;
}

static inline uint32_t set_of(const struct delta_islands *di, uint32_t n)
{
	return n < di->nr_objects ? di->set_of[n] : 0;
}

bool delta_islands_may_base(const struct delta_islands *di, uint32_t target, uint32_t base)
{
	return set_subset(di, set_of(di, target), set_of(di, base));
}

int delta_islands_cmp(const struct delta_islands *di, uint32_t a, uint32_t b)
{
	uint32_t sa = set_of(di, a), sb = set_of(di, b);
	if (sa == sb)
		return 0;
	if (di->weight[sa] != di->weight[sb])
		return di->weight[sa] > di->weight[sb] ? -1 : 1;
	return sa < sb ? -1 : 1;
}

bool delta_islands_has_core(const struct delta_islands *di)
{
	return di->core != NO_ISLAND;
}

bool delta_islands_in_core(const struct delta_islands *di, uint32_t n)
{
	if (di->core == NO_ISLAND)
		return false;
	return set_row(di, set_of(di, n))[di->core / 64] >> (di->core % 64) & 1;
}

/* ------------------------------------------------------------------ */
/* Resolving                                                           */

struct resolver {
	struct delta_islands *di;
	struct odb *odb;
	const struct delta_islands_objects *objs;
	int algo;
	struct progress *progress;
	uint64_t done;
	/* Commits reached, by their index k: object number, root tree, parents. */
	uint32_t *commits, *trees;
	size_t *parents_at;
	uint32_t nr_commits, alloc_commits;
	uint32_t *parents;       /* object numbers; commit k's from parents_at[k] */
	size_t nr_parents, alloc_parents;
	/* Trees that refs (through tags) point at. */
	uint32_t *tip_trees;
	size_t nr_tip_trees, alloc_tip_trees;
	/*
	 * By object number: its commit index k (or NO_ISLAND) while
	 * commits are read; then the ring of the tree queue.
	 */
	uint32_t *work;
	uint32_t head, count;
	uint8_t *queued;         /* by object number, one bit each: in the tree queue */
};

static void mark(struct resolver *r, uint32_t n, uint32_t island)
{
	r->di->set_of[n] = set_with(r->di, r->di->set_of[n], island);
}

/* Grow each per-commit array by the same rule, so one check covers them. */
static void reach_commit(struct resolver *r, uint32_t n)
{
	if (r->work[n] != NO_ISLAND)
		return;
	if (r->nr_commits == r->alloc_commits) {
		r->alloc_commits = r->alloc_commits ? r->alloc_commits * 2 : 64;
		r->commits = xrealloc(r->commits, (size_t)r->alloc_commits * sizeof(*r->commits));
		r->trees = xrealloc(r->trees, (size_t)r->alloc_commits * sizeof(*r->trees));
		r->parents_at = xrealloc(r->parents_at, ((size_t)r->alloc_commits + 1) *
					 sizeof(*r->parents_at));
	}
	r->work[n] = r->nr_commits;
	r->commits[r->nr_commits++] = n;
}

static void queue_tree(struct resolver *r, uint32_t n)
{
	if (r->queued[n / 8] & (1u << (n % 8)))
		return;
	r->queued[n / 8] |= (uint8_t)(1u << (n % 8));
	/* Each tree is in the ring at most once: nr_objects slots suffice. */
	r->work[((uint64_t)r->head + r->count) % r->objs->nr] = n;
	r->count++;
}

/* The object numbered n, which must be a want. */
static int read_numbered(struct resolver *r, uint32_t n, enum object_type want,
			 unsigned char **buf, size_t *size, struct gp_error *err)
{
	const struct object_id *oid = r->objs->oid(n, r->objs->data);
	char hex[GP_MAX_HEXSZ + 1];
	enum object_type type;
	int ret = odb_read_object(r->odb, oid, &type, buf, size, err);
	if (ret)
		return ret;
	if (type == want)
		return 0;
	free(*buf);
	*buf = NULL;
	return CORRUPT(err, "object %s is a %s, not a %s", oid_to_hex_r(hex, oid),
		       type_name(type) ? type_name(type) : "bad object", type_name(want));
}

/*
 * A ref's island goes to its object and, through annotated tags, to
 * what they point at; the commit or tree reached goes on to the next
 * passes. Objects without a number are passed through (a tag not being
 * packed still leads to its commit) but keep no mark.
 */
static int mark_tip(struct resolver *r, const struct island_tip *tip, struct gp_error *err)
{
	struct object_id cur = tip->oid;
	int ret = 0;

	for (int hops = 0; hops < MAX_TAG_HOPS; hops++) {
		uint32_t n = r->objs->find(&cur, r->objs->data);
		struct object_info info;
		unsigned char *buf;
		size_t size;
		struct tag_info tag;
		enum object_type type;

		ret = odb_read_object_info(r->odb, &cur, &info, 0, err);
		if (ret && n == DELTA_ISLANDS_NONE) {
			/* A ref to an object we lack marks nothing; one we pack must read. */
			gp_error_clear(err);
			return 0;
		}
		if (ret)
			break;
		if (n != DELTA_ISLANDS_NONE) {
			mark(r, n, tip->island);
			if (info.type == OBJ_COMMIT)
				reach_commit(r, n);
			else if (info.type == OBJ_TREE) {
				ALLOC_GROW(r->tip_trees, r->nr_tip_trees + 1, r->alloc_tip_trees);
				r->tip_trees[r->nr_tip_trees++] = n;
			}
		}
		if (info.type != OBJ_TAG)
			break;
		ret = odb_read_object(r->odb, &cur, &type, &buf, &size, err);
		if (ret)
			break;
		ret = tag_parse(buf, size, r->algo, &tag, err);
		free(buf);
		if (ret)
			break;
		cur = tag.object;
	}
	if (ret) {
		char hex[GP_MAX_HEXSZ + 1];
		gp_error_prefix(err, "island tip %s", oid_to_hex_r(hex, &tip->oid));
	}
	return ret;
}

/* Read the commits reached, and those of their ancestors that have numbers. */
static int read_commits(struct resolver *r, struct gp_error *err)
{
	int ret = 0;
	/* r->nr_commits grows as parents are reached. */
	for (uint32_t k = 0; k < r->nr_commits && !ret; k++) {
		struct commit_info ci = COMMIT_INFO_INIT;
		unsigned char *buf;
		size_t size;

		ret = read_numbered(r, r->commits[k], OBJ_COMMIT, &buf, &size, err);
		if (ret)
			break;
		ret = commit_parse(buf, size, r->algo, &ci, err);
		free(buf);
		if (ret) {
			char hex[GP_MAX_HEXSZ + 1];
			gp_error_prefix(err, "commit %s",
					oid_to_hex_r(hex, r->objs->oid(r->commits[k], r->objs->data)));
			break;
		}
		r->trees[k] = r->objs->find(&ci.tree, r->objs->data);
		r->parents_at[k] = r->nr_parents;
		for (size_t i = 0; i < ci.nr_parents; i++) {
			uint32_t p = r->objs->find(&ci.parents[i], r->objs->data);
			if (p == DELTA_ISLANDS_NONE)
				continue;
			ALLOC_GROW(r->parents, r->nr_parents + 1, r->alloc_parents);
			r->parents[r->nr_parents++] = p;
			reach_commit(r, p);
		}
		commit_info_release(&ci);
		progress_update(r->progress, ++r->done);
	}
	if (r->nr_commits)
		r->parents_at[r->nr_commits] = r->nr_parents;
	return ret;
}

/*
 * Children before parents (Kahn's order): a commit's set is complete
 * when its turn comes, and goes to its parents. Returns the commit
 * indexes in the order taken (caller frees).
 */
static uint32_t *pass_to_parents(struct resolver *r)
{
	struct delta_islands *di = r->di;
	uint32_t *indegree = xcalloc(r->nr_commits ? r->nr_commits : 1, sizeof(*indegree));
	uint32_t *order = xmalloc((r->nr_commits ? r->nr_commits : 1) * sizeof(*order));
	uint32_t tail = 0;

	for (size_t e = 0; e < r->nr_parents; e++)
		indegree[r->work[r->parents[e]]]++;
	for (uint32_t k = 0; k < r->nr_commits; k++)
		if (!indegree[k])
			order[tail++] = k;
	for (uint32_t at = 0; at < tail; at++) {
		uint32_t k = order[at], set = di->set_of[r->commits[k]];
		for (size_t e = r->parents_at[k]; e < r->parents_at[k + 1]; e++) {
			uint32_t p = r->parents[e];
			di->set_of[p] = set_union(di, di->set_of[p], set);
			if (!--indegree[r->work[p]])
				order[tail++] = r->work[p];
		}
	}
	/*
	 * Commits on a cycle (which real object names cannot make) never
	 * come free: give them their turn once, in any order.
	 */
	for (uint32_t k = 0; k < r->nr_commits && tail < r->nr_commits; k++) {
		if (!indegree[k])
			continue;
		indegree[k] = 0;
		order[tail++] = k;
		for (size_t e = r->parents_at[k]; e < r->parents_at[k + 1]; e++)
			di->set_of[r->parents[e]] = set_union(di, di->set_of[r->parents[e]],
							      di->set_of[r->commits[k]]);
	}
	free(indegree);
	return order;
}

static int pass_to_entries(struct resolver *r, struct gp_error *err)
{
	struct delta_islands *di = r->di;
	int ret = 0;

	while (r->count && !ret) {
		uint32_t n = r->work[r->head], set;
		struct tree_iter it;
		struct tree_entry e;
		unsigned char *buf;
		size_t size;

		r->head = (r->head + 1) % r->objs->nr;
		r->count--;
		r->queued[n / 8] &= (uint8_t)~(1u << (n % 8));
		ret = read_numbered(r, n, OBJ_TREE, &buf, &size, err);
		if (ret)
			break;
		set = di->set_of[n];
		tree_iter_init(&it, buf, size, r->algo);
		while ((ret = tree_iter_next(&it, &e, err)) > 0) {
			enum object_type type = tree_mode_type(e.mode);
			uint32_t c, sum;
			if (type == OBJ_COMMIT)
				continue;   /* a gitlink: another repository's commit */
			c = r->objs->find(&e.oid, r->objs->data);
			if (c == DELTA_ISLANDS_NONE)
				continue;
			sum = set_union(di, di->set_of[c], set);
			if (sum == di->set_of[c])
				continue;
			di->set_of[c] = sum;
			if (type == OBJ_TREE)
				queue_tree(r, c);
		}
		free(buf);
		if (ret) {
			char hex[GP_MAX_HEXSZ + 1];
			gp_error_prefix(err, "tree %s", oid_to_hex_r(hex, r->objs->oid(n, r->objs->data)));
		}
		progress_update(r->progress, ++r->done);
	}
	return ret;
}

int delta_islands_resolve(struct delta_islands *di, struct odb *odb,
			  const struct delta_islands_objects *objs, bool progress,
			  struct gp_error *err)
{
	struct resolver r = { .di = di, .odb = odb, .objs = objs, .algo = odb_algo(odb) };
	uint32_t nr = objs->nr, *order = NULL;
	int ret = 0;

	if (di->set_of)
		BUG("delta islands resolved twice");
	di->words = di->nr_names ? (di->nr_names + 63) / 64 : 1;
	di->scratch = xcalloc(di->words, sizeof(*di->scratch));
	di->memo = xcalloc(MEMO_SIZE, sizeof(*di->memo));
	di->set_mask = 63;
	di->set_slots = xmalloc((di->set_mask + 1) * sizeof(*di->set_slots));
	memset(di->set_slots, 0xff, (di->set_mask + 1) * sizeof(*di->set_slots));
	intern_scratch(di);   /* set 0: the empty set */
	di->set_of = xcalloc(nr ? nr : 1, sizeof(*di->set_of));
	di->nr_objects = nr;
	di->core = di->core_name ? island_named(di, di->core_name, false) : NO_ISLAND;
	if (!nr)
		return 0;

	r.work = xmalloc((size_t)nr * sizeof(*r.work));
	memset(r.work, 0xff, (size_t)nr * sizeof(*r.work));
	r.queued = xcalloc(((size_t)nr + 7) / 8, 1);
	r.progress = progress_start("Propagating island marks", 0, progress);
	for (size_t i = 0; i < di->nr_tips && !ret; i++)
		ret = mark_tip(&r, &di->tips[i], err);
	if (!ret)
		ret = read_commits(&r, err);
	if (ret)
		goto out;
	order = pass_to_parents(&r);
	/*
	 * The commit indexes are no longer needed: r.work becomes the tree
	 * queue, root trees first, newest commits' first.
	 */
	r.head = r.count = 0;
	for (uint32_t i = 0; i < r.nr_commits; i++) {
		uint32_t k = order[i], t = r.trees[k], sum;
		if (t == DELTA_ISLANDS_NONE)
			continue;
		sum = set_union(di, di->set_of[t], di->set_of[r.commits[k]]);
		if (sum == di->set_of[t])
			continue;
		di->set_of[t] = sum;
		queue_tree(&r, t);
	}
	for (size_t i = 0; i < r.nr_tip_trees; i++)
		queue_tree(&r, r.tip_trees[i]);
	ret = pass_to_entries(&r, err);
out:
	progress_stop(&r.progress);
	free(order);
	free(r.commits);
	free(r.trees);
	free(r.parents_at);
	free(r.parents);
	free(r.tip_trees);
	free(r.work);
	free(r.queued);
	return ret;
}
