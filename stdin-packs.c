/*
 * stdin-packs.c: see stdin-packs.h.
 *
 * Three steps: the names are matched with the odb's packs; the objects
 * of the included (and excluded-open) packs are enumerated, newest
 * pack first, then the loose ones; then a walk from the commits met
 * names what was added and, in follow mode, adds what lies beyond.
 *
 * The walk is its own, not revision.c's: it differs in every rule that
 * matters here. Missing or unreadable commits and trees end a branch
 * instead of the walk; commits of ^-packs are passed through unshown
 * (or end the walk, with !-packs); objects of promisor packs are seen
 * from the start. Its order is git's streaming order (commits by
 * committer date, newest first, ties first come first; then the trees
 * of the shown commits, in that order, depth first), so that each
 * object gets the path git's walk would give it.
 */
#include "stdin-packs.h"
#include "commit.h"
#include "error.h"
#include "loose.h"
#include "odb.h"
#include "oidset.h"
#include "pack-objects.h"
#include "packfile.h"
#include "strbuf.h"
#include "tree.h"
#include <sys/stat.h>

struct sp_name {
	char *name;
	unsigned kinds;             /* enum stdin_pack_kind */
	uint32_t hash;              /* FNV-1 of name, as git's strhash() */
	struct packed_git *pack;    /* the last of the odb's packs so named */
	uint64_t mtime;             /* of pack's .pack file */
	size_t rank;                /* its place in git's map order */
};

struct stdin_packs {
	struct sp_name *items;
	size_t nr, alloc;
	uint32_t *slots;            /* index + 1 of items by hash; 0: free */
	size_t nr_slots;            /* a power of two */
};

/* git's strhash(): 32-bit FNV-1. */
static uint32_t fnv1(const char *s)
{
	uint32_t h = 0x811c9dc5u;
	for (; *s; s++)
		h = (h * 0x01000193u) ^ (unsigned char)*s;
	return h;
}

void stdin_packs_new(struct stdin_packs **out)
{
	struct stdin_packs *sp = xcalloc(1, sizeof(*sp));
	sp->nr_slots = 64;
	sp->slots = xcalloc(sp->nr_slots, sizeof(*sp->slots));
	*out = sp;
}

void stdin_packs_free(struct stdin_packs *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->nr; i++)
		free(sp->items[i].name);
	free(sp->items);
	free(sp->slots);
	free(sp);
}

static void rehash_names(struct stdin_packs *sp)
{
	free(sp->slots);
	sp->nr_slots *= 2;
	sp->slots = xcalloc(sp->nr_slots, sizeof(*sp->slots));
	for (size_t i = 0; i < sp->nr; i++) {
		size_t s = sp->items[i].hash & (sp->nr_slots - 1);
		while (sp->slots[s])
			s = (s + 1) & (sp->nr_slots - 1);
		sp->slots[s] = (uint32_t)i + 1;
	}
}

static struct sp_name *find_name(const struct stdin_packs *sp, const char *name, uint32_t hash)
{
	for (size_t s = hash & (sp->nr_slots - 1); sp->slots[s]; s = (s + 1) & (sp->nr_slots - 1)) {
		struct sp_name *n = &sp->items[sp->slots[s] - 1];
		if (n->hash == hash && !strcmp(n->name, name))
			return n;
	}
	return NULL;
}

void stdin_packs_add(struct stdin_packs *sp, const char *name, enum stdin_pack_kind kind)
{
	uint32_t hash = fnv1(name);
	struct sp_name *n = find_name(sp, name, hash);
	size_t s;
	if (n) {
		n->kinds |= kind;
		return;
	}
	if ((sp->nr + 1) * 2 > sp->nr_slots)
		rehash_names(sp);
	ALLOC_GROW(sp->items, sp->nr + 1, sp->alloc);
	n = &sp->items[sp->nr];
	memset(n, 0, sizeof(*n));
	n->name = xstrdup(name);
	n->kinds = kind;
	n->hash = hash;
	for (s = hash & (sp->nr_slots - 1); sp->slots[s]; s = (s + 1) & (sp->nr_slots - 1))
		;
	sp->slots[s] = (uint32_t)++sp->nr;
}

void stdin_packs_add_line(struct stdin_packs *sp, const char *line, bool follow)
{
	if (!*line)
		return;
	if (*line == '^')
		stdin_packs_add(sp, line + 1, STDIN_PACK_EXCLUDE_CLOSED);
	else if (*line == '!' && follow)
		stdin_packs_add(sp, line + 1, STDIN_PACK_EXCLUDE_OPEN);
	else
		stdin_packs_add(sp, line, STDIN_PACK_INCLUDE);
}

/*
 * The names in the order git's string map gives them back, which
 * decides which missing pack git names and, among packs of the same
 * mtime, which comes first: a chained hash table of 64 buckets (a
 * name's bucket is its hash modulo the size), each new name at the
 * head of its chain, grown four times when it holds more than 80% of
 * its size (each old bucket's chain moved head first); read bucket by
 * bucket, each chain from its head.
 */
static size_t *git_map_order(const struct stdin_packs *sp)
{
	size_t size = 64, *head = xmalloc(sizeof(*head) * size);
	size_t *next = xmalloc(sizeof(*next) * (sp->nr ? sp->nr : 1));
	size_t *order = xmalloc(sizeof(*order) * (sp->nr ? sp->nr : 1)), k = 0;

	for (size_t b = 0; b < size; b++)
		head[b] = SIZE_MAX;
	for (size_t i = 0; i < sp->nr; i++) {
		size_t b = sp->items[i].hash & (size - 1);
		next[i] = head[b];
		head[b] = i;
		if (i + 1 > size * 80 / 100) {
			size_t new_size = size << 2, *new_head = xmalloc(sizeof(*new_head) * new_size);
			for (size_t nb = 0; nb < new_size; nb++)
				new_head[nb] = SIZE_MAX;
			for (size_t ob = 0; ob < size; ob++) {
				for (size_t e = head[ob]; e != SIZE_MAX;) {
					size_t after = next[e], nb = sp->items[e].hash & (new_size - 1);
					next[e] = new_head[nb];
					new_head[nb] = e;
					e = after;
				}
			}
			free(head);
			head = new_head;
			size = new_size;
		}
	}
	for (size_t b = 0; b < size; b++)
		for (size_t e = head[b]; e != SIZE_MAX; e = next[e])
			order[k++] = e;
	free(head);
	free(next);
	return order;
}

/* ------------------------------------------------------------------ */
/* Which objects stay out                                              */

struct pack_set {
	struct packed_git **items;
	size_t nr, alloc;
};

static void pack_set_add(struct pack_set *s, struct packed_git *p)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->items[i] == p)
			return;
	ALLOC_GROW(s->items, s->nr + 1, s->alloc);
	s->items[s->nr++] = p;
}

static bool pack_set_has_oid(const struct pack_set *s, const struct object_id *oid)
{
	for (size_t i = 0; i < s->nr; i++) {
		uint32_t idx_pos;
		if (pack_find_oid(s->items[i], oid, &idx_pos))
			return true;
	}
	return false;
}

/* A commit of the walk; parents are indexes into sp_walk.commits. */
struct walk_commit {
	struct object_id oid;
	struct object_id tree;
	uint64_t date;
	uint32_t *parents;
	uint32_t nr_parents;
	uint8_t flags;
};

enum walk_commit_flags {
	C_PARSED = 1 << 0,
	C_UNREADABLE = 1 << 1,    /* missing or malformed: a broken link */
	C_SEEN = 1 << 2,          /* queued, or never to be (git's SEEN) */
	C_ADDED = 1 << 3,         /* its parents were looked at */
	C_UNINTERESTING = 1 << 4,
	C_TIP = 1 << 5,
};

struct queued {
	uint64_t date;
	uint64_t seq;   /* ties: first queued, first popped */
	uint32_t commit;
};

struct sp_walk {
	struct odb *odb;
	struct pack_objects *po;
	const struct stdin_packs_opts *opts;
	struct stdin_packs_stats *stats;
	int algo;
	/* the walk's view of the packs */
	struct pack_set reject;   /* an object in one of these is not wanted */
	struct pack_set closed;   /* ^-packs and --keep-pack packs */
	struct pack_set promisor; /* with exclude_promisor */
	bool stop_at_closed;      /* some !-pack was named */
	/*
	 * Every commit the walk could show is a tip: every pack is named
	 * (a commit not in a ^-pack is then in an included or !-pack),
	 * the loose commits are tips (--unpacked) and there are no
	 * alternates to hold other loose ones. Once the last tip is
	 * popped, what is left is history nothing more comes of.
	 */
	bool only_tips_shown;
	/* commits, by name */
	struct walk_commit *commits;
	uint32_t nr_commits, alloc_commits;
	uint32_t *slots;          /* index + 1 into commits; 0: free */
	size_t nr_slots;
	struct queued *heap;
	size_t heap_nr, heap_alloc;
	uint64_t seq;
	uint32_t *tips;
	size_t nr_tips, alloc_tips;
	uint32_t *shown;          /* commits whose trees are walked, in order */
	size_t nr_shown, alloc_shown;
	struct oidset trees_blobs_seen;
	struct strbuf path;
};

/*
 * Whether oid may go into the pack (git's want_object_in_pack() for
 * these options); packed says the caller found it in a pack.
 */
static bool wanted(struct sp_walk *w, const struct object_id *oid, bool packed)
{
	if (w->opts->incremental) {
		if (packed)
			return false;
		for (size_t i = 0; i < odb_nr_packs(w->odb); i++) {
			uint32_t idx_pos;
			if (pack_find_oid(odb_pack(w->odb, i), oid, &idx_pos))
				return false;
		}
	}
	if (w->opts->local)
		for (size_t i = 0; i < odb_nr_alternates(w->odb); i++)
			if (loose_has(odb_alternate(w->odb, i), oid))
				return false;
	return !pack_set_has_oid(&w->reject, oid);
}

/* ------------------------------------------------------------------ */
/* The packs named                                                     */

static int cmp_newest_first(const void *va, const void *vb)
{
	const struct sp_name *a = *(const struct sp_name *const *)va;
	const struct sp_name *b = *(const struct sp_name *const *)vb;
	if (a->mtime != b->mtime)
		return a->mtime < b->mtime ? 1 : -1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static bool name_listed(const char *name, const char *const *list, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/*
 * Match the names with the odb's packs and fill the sets; *out gets
 * the packs to enumerate (included and excluded-open), newest first.
 */
static int resolve_packs(struct stdin_packs *sp, struct sp_walk *w, struct sp_name ***out,
			 size_t *nr_out, struct gp_error *err)
{
	const struct stdin_packs_opts *o = w->opts;
	bool any_local_keep = false, all_named = true;
	struct sp_name **list;
	size_t *order, nr = 0;
	int ret = 0;

	for (size_t i = 0; i < odb_nr_packs(w->odb); i++) {
		struct packed_git *p = odb_pack(w->odb, i);
		const char *name = base_name(p->pack_path);
		struct sp_name *n = find_name(sp, name, fnv1(name));
		bool local = odb_pack_is_local(w->odb, i);

		if (local && p->is_keep)
			any_local_keep = true;
		if (o->local && !local)
			pack_set_add(&w->reject, p);
		if (local && name_listed(name, o->keep_packs, o->nr_keep_packs)) {
			pack_set_add(&w->reject, p);
			pack_set_add(&w->closed, p);
		}
		if (o->exclude_promisor && p->is_promisor)
			pack_set_add(&w->promisor, p);
		if (!n) {
			all_named = false;
			continue;
		}
		if ((n->kinds & STDIN_PACK_INCLUDE) && o->exclude_promisor && p->is_promisor)
			return gp_error_set(err, GP_EINVAL,
					    "packfile %s is a promisor but --exclude-promisor-objects was given",
					    p->pack_path);
		/* What is enumerated is read from the pack itself. */
		if ((n->kinds & (STDIN_PACK_INCLUDE | STDIN_PACK_EXCLUDE_OPEN)) &&
		    pack_open_pack(p, err)) {
			gp_error_clear(err);
			return gp_error_set(err, GP_EIO, "packfile %s cannot be accessed", p->pack_path);
		}
		if (n->kinds & STDIN_PACK_EXCLUDE_CLOSED) {
			pack_set_add(&w->reject, p);
			pack_set_add(&w->closed, p);
		}
		if ((n->kinds & STDIN_PACK_EXCLUDE_OPEN) && o->follow)
			pack_set_add(&w->reject, p);
		n->pack = p;
	}
	w->only_tips_shown = all_named && o->unpacked && !odb_nr_alternates(w->odb);
	/* git leaves .keep packs alone only when the repository has one of its own. */
	if (o->honor_pack_keep && any_local_keep)
		for (size_t i = 0; i < odb_nr_packs(w->odb); i++)
			if (odb_pack(w->odb, i)->is_keep)
				pack_set_add(&w->reject, odb_pack(w->odb, i));

	order = git_map_order(sp);
	list = xmalloc(sizeof(*list) * (sp->nr ? sp->nr : 1));
	for (size_t k = 0; k < sp->nr && !ret; k++) {
		struct sp_name *n = &sp->items[order[k]];
		struct stat st;
		if (!n->pack) {
			ret = gp_error_set(err, GP_ENOTFOUND, "could not find pack '%s'", n->name);
			break;
		}
		if (n->kinds & STDIN_PACK_EXCLUDE_OPEN)
			w->stop_at_closed = true;
		if (!(n->kinds & (STDIN_PACK_INCLUDE | STDIN_PACK_EXCLUDE_OPEN)))
			continue;
		/* git orders by the .pack's modification time */
		n->mtime = !stat(n->pack->pack_path, &st) ? (uint64_t)st.st_mtime : n->pack->mtime;
		n->rank = k;
		list[nr++] = n;
	}
	free(order);
	if (ret) {
		free(list);
		return ret;
	}
	/* Ties keep the map order, as git's (stable) sort of it does. */
	qsort(list, nr, sizeof(*list), cmp_newest_first);
	*out = list;
	*nr_out = nr;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The commits                                                         */

static uint32_t commit_node(struct sp_walk *w, const struct object_id *oid)
{
	struct walk_commit *c;
	size_t s;
	uint64_t key;
	memcpy(&key, oid->hash, sizeof(key));
	for (s = (size_t)key & (w->nr_slots - 1); w->slots[s]; s = (s + 1) & (w->nr_slots - 1))
		if (oideq(&w->commits[w->slots[s] - 1].oid, oid))
			return w->slots[s] - 1;
	if (((size_t)w->nr_commits + 1) * 2 > w->nr_slots) {
		free(w->slots);
		w->nr_slots *= 2;
		w->slots = xcalloc(w->nr_slots, sizeof(*w->slots));
		for (uint32_t i = 0; i < w->nr_commits; i++) {
			memcpy(&key, w->commits[i].oid.hash, sizeof(key));
			for (s = (size_t)key & (w->nr_slots - 1); w->slots[s];
			     s = (s + 1) & (w->nr_slots - 1))
				;
			w->slots[s] = i + 1;
		}
		memcpy(&key, oid->hash, sizeof(key));
		for (s = (size_t)key & (w->nr_slots - 1); w->slots[s]; s = (s + 1) & (w->nr_slots - 1))
			;
	}
	ALLOC_GROW(w->commits, w->nr_commits + 1, w->alloc_commits);
	c = &w->commits[w->nr_commits];
	memset(c, 0, sizeof(*c));
	c->oid = *oid;
	/* git marks every object of a promisor pack seen and uninteresting up front. */
	if (w->promisor.nr && pack_set_has_oid(&w->promisor, oid))
		c->flags |= C_SEEN | C_UNINTERESTING;
	w->slots[s] = ++w->nr_commits;
	return w->nr_commits - 1;
}

/*
 * Read a commit's parents, tree and date once. 0 when it is readable;
 * 1 when it is not (missing, not a commit, malformed): a broken link,
 * which the walk steps over. The odb's fetch hook is never reached: a
 * missing object is found missing before anything reads it.
 */
static int parse_commit(struct sp_walk *w, uint32_t at)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	struct gp_error err = GP_ERROR_INIT;
	enum object_type type;
	unsigned char *data = NULL;
	size_t size;
	struct object_id oid = w->commits[at].oid;
	uint32_t *parents;

	if (w->commits[at].flags & C_PARSED)
		return 0;
	if (w->commits[at].flags & C_UNREADABLE)
		return 1;
	if (!odb_has_object(w->odb, &oid) ||
	    odb_read_object(w->odb, &oid, &type, &data, &size, &err) || type != OBJ_COMMIT ||
	    commit_parse(data, size, w->algo, &ci, &err)) {
		gp_error_clear(&err);
		free(data);
		w->commits[at].flags |= C_UNREADABLE;
		return 1;
	}
	free(data);
	parents = xcalloc(ci.nr_parents ? ci.nr_parents : 1, sizeof(*parents));
	for (size_t i = 0; i < ci.nr_parents; i++)
		parents[i] = commit_node(w, &ci.parents[i]);  /* may move commits */
	w->commits[at].parents = parents;
	w->commits[at].nr_parents = (uint32_t)ci.nr_parents;
	w->commits[at].tree = ci.tree;
	w->commits[at].date = ci.date;
	w->commits[at].flags |= C_PARSED;
	commit_info_release(&ci);
	return 0;
}

static bool heap_before(const struct queued *a, const struct queued *b)
{
	return a->date != b->date ? a->date > b->date : a->seq < b->seq;
}

static void heap_push(struct sp_walk *w, uint32_t at)
{
	size_t pos = w->heap_nr++;
	ALLOC_GROW(w->heap, w->heap_nr, w->heap_alloc);
	w->heap[pos].date = w->commits[at].date;
	w->heap[pos].seq = w->seq++;
	w->heap[pos].commit = at;
	while (pos && heap_before(&w->heap[pos], &w->heap[(pos - 1) / 2])) {
		struct queued t = w->heap[pos];
		w->heap[pos] = w->heap[(pos - 1) / 2];
		w->heap[(pos - 1) / 2] = t;
		pos = (pos - 1) / 2;
	}
}

static uint32_t heap_pop(struct sp_walk *w)
{
	uint32_t top = w->heap[0].commit;
	size_t pos = 0;
	w->heap[0] = w->heap[--w->heap_nr];
	for (;;) {
		size_t l = 2 * pos + 1, r = l + 1, best = pos;
		struct queued t;
		if (l < w->heap_nr && heap_before(&w->heap[l], &w->heap[best]))
			best = l;
		if (r < w->heap_nr && heap_before(&w->heap[r], &w->heap[best]))
			best = r;
		if (best == pos)
			break;
		t = w->heap[pos];
		w->heap[pos] = w->heap[best];
		w->heap[best] = t;
		pos = best;
	}
	return top;
}

/* The ancestors of at read so far become uninteresting too. */
static void mark_ancestors_uninteresting(struct sp_walk *w, uint32_t at)
{
	uint32_t *stack = NULL;
	size_t nr = 0, alloc = 0;
	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr++] = at;
	while (nr) {
		struct walk_commit *c = &w->commits[stack[--nr]];
		if (!(c->flags & C_PARSED))
			continue;
		for (uint32_t i = 0; i < c->nr_parents; i++) {
			struct walk_commit *p = &w->commits[c->parents[i]];
			if (p->flags & C_UNINTERESTING)
				continue;
			p->flags |= C_UNINTERESTING;
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr++] = c->parents[i];
		}
	}
	free(stack);
}

static void queue_parents(struct sp_walk *w, uint32_t at)
{
	bool uninteresting = w->commits[at].flags & C_UNINTERESTING;
	for (uint32_t i = 0; i < w->commits[at].nr_parents; i++) {
		uint32_t p = w->commits[at].parents[i];
		if (uninteresting)
			w->commits[p].flags |= C_UNINTERESTING;
		if (parse_commit(w, p)) {
			/*
			 * A broken link. git steps over it under an
			 * uninteresting commit or where a promisor may have
			 * it; elsewhere it gives up the commit's later
			 * parents as well.
			 */
			if (uninteresting || w->opts->exclude_promisor)
				continue;
			return;
		}
		if (uninteresting && w->commits[p].nr_parents)
			mark_ancestors_uninteresting(w, p);
		if (w->commits[p].flags & C_SEEN)
			continue;
		w->commits[p].flags |= C_SEEN;
		heap_push(w, p);
	}
}

static void add_tip(struct sp_walk *w, const struct object_id *oid)
{
	uint32_t at = commit_node(w, oid);
	if (w->commits[at].flags & C_TIP)
		return;
	w->commits[at].flags |= C_TIP;
	ALLOC_GROW(w->tips, w->nr_tips + 1, w->alloc_tips);
	w->tips[w->nr_tips++] = at;
}

/*
 * Something the walk reached: name an object added before; in follow
 * mode add what is wanted and not added yet.
 */
static void reached(struct sp_walk *w, const struct object_id *oid, enum object_type type,
		    const char *path)
{
	uint32_t hash = type == OBJ_COMMIT ? 0 : pack_objects_name_hash(w->po, path);
	if (pack_objects_has(w->po, oid)) {
		/*
		 * git's follow mode leaves these unnamed (it adds nothing
		 * twice); naming them can only help the delta search.
		 */
		if (type != OBJ_COMMIT && pack_objects_set_name_hash(w->po, oid, hash))
			w->stats->hints++;
		return;
	}
	if (!w->opts->follow)
		return;
	if (type == OBJ_BLOB && !odb_has_object(w->odb, oid))
		return;
	if (wanted(w, oid, false))
		pack_objects_add_hashed(w->po, oid, type, hash);
}

static void walk_commits(struct sp_walk *w)
{
	size_t tips_queued = 0;
	for (size_t i = 0; i < w->nr_tips; i++) {
		uint32_t at = w->tips[i];
		if (parse_commit(w, at))
			continue;
		w->commits[at].flags |= C_SEEN;
		heap_push(w, at);
		tips_queued++;
	}
	while (w->heap_nr) {
		uint32_t at;
		bool closed;
		if (w->only_tips_shown && !tips_queued)
			break;
		at = heap_pop(w);
		if (w->commits[at].flags & C_TIP)
			tips_queued--;
		closed = pack_set_has_oid(&w->closed, &w->commits[at].oid);
		if (!(w->commits[at].flags & C_ADDED)) {
			w->commits[at].flags |= C_ADDED;
			if (!(closed && w->stop_at_closed))
				queue_parents(w, at);
		}
		if (closed || (w->commits[at].flags & C_UNINTERESTING))
			continue;
		reached(w, &w->commits[at].oid, OBJ_COMMIT, NULL);
		ALLOC_GROW(w->shown, w->nr_shown + 1, w->alloc_shown);
		w->shown[w->nr_shown++] = at;
	}
}

/* ------------------------------------------------------------------ */
/* The trees                                                           */

struct tree_frame {
	unsigned char *buf;
	struct tree_iter it;
	size_t path_len;      /* w->path's length for this tree's entries */
};

/*
 * Enter the tree oid found at w->path: 1 when it was pushed onto the
 * stack, 0 when it is passed by (seen, beyond a boundary, unreadable).
 */
static int enter_tree(struct sp_walk *w, const struct object_id *oid,
		      struct tree_frame **frames, size_t *nr, size_t *alloc)
{
	struct gp_error err = GP_ERROR_INIT;
	enum object_type type;
	unsigned char *buf = NULL;
	size_t size;
	struct tree_frame *f;

	if (oidset_contains(&w->trees_blobs_seen, oid))
		return 0;
	if (w->promisor.nr && pack_set_has_oid(&w->promisor, oid)) {
		oidset_insert(&w->trees_blobs_seen, oid);
		return 0;
	}
	/* Not marked seen: reached again, it is beyond the boundary again. */
	if (w->stop_at_closed && pack_set_has_oid(&w->closed, oid))
		return 0;
	oidset_insert(&w->trees_blobs_seen, oid);
	if (!odb_has_object(w->odb, oid) ||
	    odb_read_object(w->odb, oid, &type, &buf, &size, &err) || type != OBJ_TREE) {
		gp_error_clear(&err);
		free(buf);
		return 0;
	}
	reached(w, oid, OBJ_TREE, w->path.buf);
	ALLOC_GROW(*frames, *nr + 1, *alloc);
	f = &(*frames)[(*nr)++];
	f->buf = buf;
	f->path_len = w->path.len;
	tree_iter_init(&f->it, buf, size, w->algo);
	return 1;
}

/* Trees are walked with a stack of their own: nesting is input. */
static int walk_tree(struct sp_walk *w, const struct object_id *root, struct gp_error *err)
{
	struct tree_frame *frames = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	strbuf_reset(&w->path);
	enter_tree(w, root, &frames, &nr, &alloc);
	while (nr && !ret) {
		struct tree_frame *f = &frames[nr - 1];
		struct tree_entry e;
		enum object_type type;

		ret = tree_iter_next(&f->it, &e, err);
		if (ret <= 0) {
			free(f->buf);
			nr--;
			continue;
		}
		ret = 0;
		/* As git reads a tree: what is neither a tree nor a submodule is a blob. */
		if ((e.mode & TREE_MODE_TYPE_MASK) == TREE_MODE_GITLINK)
			continue;
		type = (e.mode & TREE_MODE_TYPE_MASK) == TREE_MODE_DIR ? OBJ_TREE : OBJ_BLOB;
		strbuf_setlen(&w->path, f->path_len);
		if (f->path_len)
			strbuf_addch(&w->path, '/');
		strbuf_add(&w->path, e.name, e.name_len);
		if (type == OBJ_TREE) {
			enter_tree(w, &e.oid, &frames, &nr, &alloc);
			continue;
		}
		if (oidset_contains(&w->trees_blobs_seen, &e.oid))
			continue;
		oidset_insert(&w->trees_blobs_seen, &e.oid);
		if (w->promisor.nr && pack_set_has_oid(&w->promisor, &e.oid))
			continue;
		reached(w, &e.oid, OBJ_BLOB, w->path.buf);
	}
	while (nr)
		free(frames[--nr].buf);
	free(frames);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Enumerating                                                         */

static int add_pack(struct sp_walk *w, struct packed_git *p, struct gp_error *err)
{
	int ret = pack_load_revindex(p, err);
	for (uint32_t pack_pos = 0; !ret && pack_pos < p->nr_objects; pack_pos++) {
		struct pack_object_info info;
		struct object_id oid;
		uint64_t ofs = pack_pos_to_offset(p, pack_pos);
		pack_nth_oid(p, pack_pos_to_idx(p, pack_pos), &oid);
		if (pack_objects_has(w->po, &oid))
			continue;
		w->stats->found++;
		if (pack_object_info(p, ofs, &info, false, err)) {
			char hex[GP_MAX_HEXSZ + 1];
			gp_error_clear(err);
			ret = gp_error_set(err, GP_ECORRUPT, "could not get type of object %s in pack %s",
					   oid_to_hex_r(hex, &oid), p->pack_path);
			break;
		}
		/* Commits of excluded-open packs, or of excluded ones too, start the walk. */
		if (info.type == OBJ_COMMIT)
			add_tip(w, &oid);
		if (wanted(w, &oid, true))
			pack_objects_add_packed(w->po, &oid, info.type, 0, p, ofs);
	}
	return ret;
}

static int add_loose(const struct object_id *oid, const char *path, void *data)
{
	struct sp_walk *w = data;
	struct gp_error err = GP_ERROR_INIT;
	struct object_info info;

	if (odb_read_object_info(w->odb, oid, &info, 0, &err)) {
		gp_error_clear(&err);
		if (w->opts->warn) {
			char *msg = xstrfmt("loose object at %s could not be examined", path);
			w->opts->warn(msg, w->opts->warn_data);
			free(msg);
		}
		return 0;
	}
	if (!pack_objects_has(w->po, oid) && wanted(w, oid, false))
		pack_objects_add_hashed(w->po, oid, info.type, 0);
	if (info.type == OBJ_COMMIT)
		add_tip(w, oid);
	return 0;
}

int stdin_packs_add_objects(struct stdin_packs *sp, struct odb *odb, struct pack_objects *po,
			    const struct stdin_packs_opts *opts,
			    struct stdin_packs_stats *stats, struct gp_error *err)
{
	struct stdin_packs_stats ignored;
	struct sp_walk w = {
		.odb = odb, .po = po, .opts = opts, .stats = stats ? stats : &ignored,
		.algo = odb_algo(odb), .nr_slots = 1024,
		.trees_blobs_seen = OIDSET_INIT, .path = STRBUF_INIT,
	};
	struct sp_name **packs = NULL;
	size_t nr_packs = 0;
	int ret;

	memset(w.stats, 0, sizeof(*w.stats));
	w.slots = xcalloc(w.nr_slots, sizeof(*w.slots));
	ret = resolve_packs(sp, &w, &packs, &nr_packs, err);
	for (size_t i = 0; !ret && i < nr_packs; i++)
		ret = add_pack(&w, packs[i]->pack, err);
	if (!ret && opts->unpacked)
		ret = loose_for_each(odb_objdir(odb), w.algo, add_loose, &w);
	if (!ret)
		walk_commits(&w);
	for (size_t i = 0; !ret && i < w.nr_shown; i++)
		ret = walk_tree(&w, &w.commits[w.shown[i]].tree, err);

	free(packs);
	for (uint32_t i = 0; i < w.nr_commits; i++)
		free(w.commits[i].parents);
	free(w.commits);
	free(w.slots);
	free(w.heap);
	free(w.tips);
	free(w.shown);
	free(w.reject.items);
	free(w.closed.items);
	free(w.promisor.items);
	oidset_release(&w.trees_blobs_seen);
	strbuf_release(&w.path);
	return ret;
}
