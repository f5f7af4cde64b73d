/*
 * shallow.c: see shallow.h.
 *
 * The depth computations walk a private commit graph: a node per commit
 * reached, in an open-addressing table keyed by the name, with its
 * parents once read (none for a commit of the repository's shallow
 * file, as git grafts them away). The walk is git's depth-first one,
 * with an explicit stack: every commit carries the depth at which it was
 * last reached, and is walked again only when reached at a smaller one,
 * so that the final depths are the shortest distances from the wants;
 * the order in which boundary commits are met (which upload-pack sends
 * reversed) is the order of that walk, so it must be git's exactly.
 *
 * deepen-since and deepen-not are git's rev-list, which revision.h
 * already walks as git does; the boundary is then read off the listed
 * commits' parents.
 */
#include "shallow.h"
#include "commit.h"
#include "error.h"
#include "odb.h"
#include "oid-array.h"
#include "oidset.h"
#include "repository.h"
#include "revision.h"
#include "strbuf.h"

int shallow_read(struct repository *repo, struct oidset *out, struct gp_error *err)
{
	char *path = repo_shallow_path(repo);
	struct strbuf sb = STRBUF_INIT;
	size_t hexsz = gp_hash_algos[repo->hash_algo].hexsz;
	const char *p, *end;
	int ret = 0;

	if (!path)
		return 0;
	if (strbuf_read_file(&sb, path, 0) < 0) {
		if (errno != ENOENT)
			ret = gp_error_errno(err, "cannot read '%s'", path);
		goto out;
	}
	for (p = sb.buf, end = sb.buf + sb.len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
		struct object_id oid;
		if (len != hexsz || hex_to_oid(p, repo->hash_algo, &oid)) {
			ret = CORRUPT(err, "bad shallow line: %.*s", (int)MIN(len, (size_t)80), p);
			goto out;
		}
		oidset_insert(out, &oid);
		p += len + (eol ? 1 : 0);
	}
out:
	strbuf_release(&sb);
	free(path);
	return ret;
}

/* ---- the commit graph ------------------------------------------------ */

enum sc_flags {
	SC_PARSED = 1 << 0,
	SC_REPO_SHALLOW = 1 << 1, /* in the repository's shallow file: no parents */
	SC_CLIENT = 1 << 2,       /* the client has it shallow */
	SC_HAS_DEPTH = 1 << 3,    /* depth is set (in the current walk) */
	SC_NOT_SHALLOW = 1 << 4,  /* walked through: its parents are sent */
	SC_LISTED = 1 << 5,       /* listed by the deepen-since/not rev-list */
};

struct sc_node {
	struct object_id oid;
	struct sc_node **parents; /* nr_parents of them, once SC_PARSED */
	uint32_t nr_parents;
	/* With SC_HAS_DEPTH: edges from the nearest want so far (wants: 0). */
	uint32_t depth;
	uint8_t flags;
};

#define SC_BLOCK 1024
struct sc_block {
	struct sc_block *next;
	size_t used;
	struct sc_node nodes[SC_BLOCK];
};

struct sc_slot {
	uint64_t key;  /* the name's first 8 bytes */
	struct sc_node *node;
};

struct sc_graph {
	struct odb *odb;
	int algo;
	size_t rawsz;
	const struct oidset *repo_shallow;
	struct sc_slot *table;
	size_t table_size, nr_nodes; /* size: a power of two */
	struct sc_block *blocks;
};

static void graph_init(struct sc_graph *g, struct odb *odb, int algo,
		       const struct oidset *repo_shallow)
{
	memset(g, 0, sizeof(*g));
	g->odb = odb;
	g->algo = algo;
	g->rawsz = gp_hash_algos[algo].rawsz;
	g->repo_shallow = repo_shallow;
	g->table_size = 256;
	g->table = xcalloc(g->table_size, sizeof(*g->table));
}

static void graph_release(struct sc_graph *g)
{
	while (g->blocks) {
		struct sc_block *b = g->blocks;
		for (size_t i = 0; i < b->used; i++)
			free(b->nodes[i].parents);
		g->blocks = b->next;
		free(b);
	}
	free(g->table);
}

static size_t slot_of(const struct sc_graph *g, uint64_t key)
{
	/* Object names are uniformly random: their bits are the hash. */
	return (size_t)key & (g->table_size - 1);
}

static void grow_table(struct sc_graph *g)
{
	struct sc_slot *old = g->table;
	size_t old_size = g->table_size;
	g->table_size *= 2;
	g->table = xcalloc(g->table_size, sizeof(*g->table));
	for (size_t i = 0; i < old_size; i++) {
		size_t s;
		if (!old[i].node)
			continue;
		for (s = slot_of(g, old[i].key); g->table[s].node; s = (s + 1) & (g->table_size - 1))
			;
		g->table[s] = old[i];
	}
	free(old);
}

static struct sc_node *lookup(struct sc_graph *g, const struct object_id *oid)
{
	uint64_t key = get_be64(oid->hash);
	struct sc_node *n;
	size_t s;

	for (s = slot_of(g, key); g->table[s].node; s = (s + 1) & (g->table_size - 1))
		if (g->table[s].key == key &&
		    !memcmp(g->table[s].node->oid.hash + 8, oid->hash + 8, g->rawsz - 8))
			return g->table[s].node;
	if (2 * (g->nr_nodes + 1) > g->table_size) {
		grow_table(g);
		for (s = slot_of(g, key); g->table[s].node; s = (s + 1) & (g->table_size - 1))
			;
	}
	if (!g->blocks || g->blocks->used == SC_BLOCK) {
		struct sc_block *b = xmalloc(sizeof(*b));
		b->next = g->blocks;
		b->used = 0;
		g->blocks = b;
	}
	n = &g->blocks->nodes[g->blocks->used++];
	memset(n, 0, sizeof(*n));
	n->oid = *oid;
	if (g->repo_shallow && oidset_contains(g->repo_shallow, oid))
		n->flags |= SC_REPO_SHALLOW;
	g->table[s].key = key;
	g->table[s].node = n;
	g->nr_nodes++;
	return n;
}

/* Read n's parents (none for a commit of the repository's shallow file). */
static int parse_node(struct sc_graph *g, struct sc_node *n, struct gp_error *err)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	enum object_type type;
	unsigned char *data;
	size_t size;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;

	if (n->flags & SC_PARSED)
		return 0;
	ret = odb_read_object(g->odb, &n->oid, &type, &data, &size, err);
	if (ret == GP_ENOTFOUND)
		return gp_error_set(err, GP_ENOTFOUND, "unable to parse commit %s",
				    oid_to_hex_r(hex, &n->oid));
	if (ret)
		return ret;
	if (type != OBJ_COMMIT) {
		free(data);
		return gp_error_set(err, GP_ECORRUPT, "object %s is a %s, not a commit",
				    oid_to_hex_r(hex, &n->oid), type_name(type));
	}
	ret = commit_parse(data, size, g->algo, &ci, err);
	free(data);
	if (ret)
		return gp_error_prefix(err, "commit %s", oid_to_hex_r(hex, &n->oid));
	if (n->flags & SC_REPO_SHALLOW)
		ci.nr_parents = 0;
	if (ci.nr_parents > UINT32_MAX) {
		commit_info_release(&ci);
		return gp_error_set(err, GP_ECORRUPT, "commit %s: too many parents",
				    oid_to_hex_r(hex, &n->oid));
	}
	n->nr_parents = (uint32_t)ci.nr_parents;
	if (ci.nr_parents) {
		n->parents = xcalloc(ci.nr_parents, sizeof(*n->parents));
		/* lookup() may add nodes, never move them: n stays valid. */
		for (size_t i = 0; i < ci.nr_parents; i++)
			n->parents[i] = lookup(g, &ci.parents[i]);
	}
	n->flags |= SC_PARSED;
	commit_info_release(&ci);
	return 0;
}

/*
 * The commit oid peels to, or NULL when it peels to something else or
 * to nothing the repository has (git's deref_tag() quietly gives up
 * there too).
 */
static int peel_to_commit(struct sc_graph *g, const struct object_id *oid,
			  struct sc_node **out, struct gp_error *err)
{
	struct object_id cur = *oid;
	char hex[GP_MAX_HEXSZ + 1];

	*out = NULL;
	for (;;) {
		struct object_info info;
		struct tag_info tag;
		enum object_type type;
		unsigned char *data;
		size_t size;
		int ret = odb_read_object_info(g->odb, &cur, &info, 0, err);
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			return 0;
		}
		if (ret)
			return ret;
		if (info.type == OBJ_COMMIT) {
			*out = lookup(g, &cur);
			return 0;
		}
		if (info.type != OBJ_TAG)
			return 0;
		ret = odb_read_object(g->odb, &cur, &type, &data, &size, err);
		if (ret)
			return ret;
		ret = tag_parse(data, size, g->algo, &tag, err);
		free(data);
		if (ret)
			return gp_error_prefix(err, "tag %s", oid_to_hex_r(hex, &cur));
		cur = tag.object;
	}
}

/* ---- git's depth walk -------------------------------------------------- */

struct depth_walk {
	/* Edges from the wants at which the boundary lies; INFINITE_DEPTH: none. */
	int64_t depth;
	/*
	 * The first walk of deepen-relative: no boundary, only the least
	 * depth + 1 at which a client shallow commit is met (0: none).
	 */
	bool measure;
	uint64_t nearest;
	/* The client's shallow commits are parentless too. */
	bool client_grafts;
	/* Boundary commits as met (upload-pack sends them reversed). */
	struct sc_node **met;
	size_t nr_met, alloc_met;
};

static bool is_graft(const struct depth_walk *dw, const struct sc_node *n)
{
	return (n->flags & SC_REPO_SHALLOW) || (dw->client_grafts && (n->flags & SC_CLIENT));
}

/*
 * From each head in turn (a head's depth is 0 even when met before),
 * depth first: of a commit's parents the last is followed at once, the
 * others are stacked. A parent is taken again only at a smaller depth
 * than it had.
 */
static int depth_walk(struct sc_graph *g, struct sc_node **heads, size_t nr_heads,
		      struct depth_walk *dw, struct gp_error *err)
{
	struct sc_node **stack = NULL;
	size_t nr_stack = 0, alloc_stack = 0, next_head = 0;
	struct sc_node *cur = NULL;
	uint64_t cur_depth = 0;
	int ret = 0;

	for (;;) {
		struct sc_node *next = NULL;

		if (!cur) {
			if (next_head < nr_heads) {
				cur = heads[next_head++];
				if (!cur)
					continue;
				cur->depth = 0;
				cur->flags |= SC_HAS_DEPTH;
			} else if (nr_stack) {
				cur = stack[--nr_stack];
			} else {
				break;
			}
			cur_depth = cur->depth;
		}
		ret = parse_node(g, cur, err);
		if (ret)
			goto out;
		cur_depth++;   /* now counts cur itself: 1 for a want */
		if (dw->measure) {
			if ((cur->flags & SC_CLIENT) && (!dw->nearest || cur_depth < dw->nearest))
				dw->nearest = cur_depth;
			if (is_graft(dw, cur)) {
				cur = NULL;
				continue;
			}
		} else {
			if ((dw->depth != INFINITE_DEPTH && cur_depth >= (uint64_t)dw->depth) ||
			    is_graft(dw, cur)) {
				ALLOC_GROW(dw->met, dw->nr_met + 1, dw->alloc_met);
				dw->met[dw->nr_met++] = cur;
				cur = NULL;
				continue;
			}
			cur->flags |= SC_NOT_SHALLOW;
		}
		for (uint32_t i = 0; i < cur->nr_parents; i++) {
			struct sc_node *p = cur->parents[i];
			if ((p->flags & SC_HAS_DEPTH) && cur_depth >= p->depth)
				continue;
			/* a path is no longer than the commits in memory: fits */
			p->depth = (uint32_t)cur_depth;
			p->flags |= SC_HAS_DEPTH;
			if (i + 1 < cur->nr_parents) {
				ALLOC_GROW(stack, nr_stack + 1, alloc_stack);
				stack[nr_stack++] = p;
			} else {
				next = p;  /* its depth is cur_depth: no reload */
			}
		}
		cur = next;
	}
out:
	free(stack);
	return ret;
}

static void forget_depths(struct sc_graph *g)
{
	for (struct sc_block *b = g->blocks; b; b = b->next)
		for (size_t i = 0; i < b->used; i++)
			b->nodes[i].flags &= (uint8_t)~SC_HAS_DEPTH;
}

/* ---- deepen-since, deepen-not ---------------------------------------- */

struct listing {
	struct sc_graph *g;
	struct sc_node **list;
	size_t nr, alloc;
};

static int list_commit(const struct object_id *oid, enum object_type type,
		       const char *path, void *data)
{
	struct listing *l = data;
	struct sc_node *n;
	if (type != OBJ_COMMIT)
		return 0;
	n = lookup(l->g, oid);
	n->flags |= SC_LISTED;
	ALLOC_GROW(l->list, l->nr + 1, l->alloc);
	l->list[l->nr++] = n;
	return 0;
}

static int rev_list_boundary(struct sc_graph *g, const struct shallow_request *req,
			     const struct object_id **wants, size_t nr_wants,
			     struct oid_array *shallow_out, struct gp_error *err)
{
	struct listing l = { .g = g };
	struct rev_walk *w;
	int ret;

	rev_walk_new(&w, g->odb, g->algo);
	if (req->repo_shallow)
		rev_walk_set_shallow(w, req->repo_shallow);
	/* git passes --max-age only for a non-zero date; 0 would not cut anyway */
	if (req->has_since && req->since)
		rev_walk_set_max_age(w, req->since);
	/* "rev-list [--max-age=<since>] --not <not>... --not <want>...": that tip order */
	for (size_t i = 0; i < req->nr_not; i++) {
		ret = rev_walk_add_tip(w, &req->not_tips[i], true, NULL, err);
		if (ret)
			goto out;
	}
	for (size_t i = 0; i < nr_wants; i++) {
		ret = rev_walk_add_tip(w, wants[i], false, NULL, err);
		if (ret)
			goto out;
	}
	ret = rev_walk_run(w, 0, list_commit, &l, err);
	if (ret)
		goto out;
	if (!l.nr) {
		ret = gp_error_set(err, GP_EPROTO, "no commits selected for shallow requests");
		goto out;
	}
	/*
	 * A listed commit with a parent left out is on the boundary; the
	 * others are walked through. A commit of the repository's shallow
	 * file has no parents, so it is neither (git's quirk, kept).
	 */
	for (size_t i = 0; i < l.nr; i++) {
		struct sc_node *n = l.list[i];
		bool border = false;
		ret = parse_node(g, n, err);
		if (ret)
			goto out;
		for (uint32_t p = 0; p < n->nr_parents && !border; p++)
			border = !(n->parents[p]->flags & SC_LISTED);
		if (!border)
			n->flags |= SC_NOT_SHALLOW;
		else if (!(n->flags & SC_CLIENT))
			oid_array_append(shallow_out, &n->oid);
	}
out:
	free(l.list);
	rev_walk_free(w);
	return ret;
}

/* ---- the request --------------------------------------------------------- */

int shallow_compute(struct odb *odb, int algo, const struct shallow_request *req,
		    struct oid_array *shallow_out, struct oid_array *unshallow_out,
		    struct gp_error *err)
{
	struct sc_graph g;
	struct oidset seen = OIDSET_INIT;
	struct sc_node **clients = NULL, **heads = NULL;
	const struct object_id **wants = NULL;
	size_t nr_clients = 0, nr_heads = 0, nr_wants = 0;
	bool rev_list = req->has_since || req->nr_not;
	struct depth_walk dw = { .depth = req->depth };
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;

	if (req->depth < 0)
		return gp_error_set(err, GP_EINVAL, "invalid depth %d", req->depth);
	if (req->depth > 0 && rev_list)
		return gp_error_set(err, GP_EPROTO, "git upload-pack: deepen and deepen-since "
				    "(or deepen-not) cannot be used together");
	graph_init(&g, odb, algo, req->repo_shallow);

	/* The client's shallow commits: unknown ones ignored, each once, in order. */
	clients = xcalloc(req->nr_client_shallow + 1, sizeof(*clients));
	for (size_t i = 0; i < req->nr_client_shallow; i++) {
		const struct object_id *oid = &req->client_shallow[i];
		struct object_info info;
		struct sc_node *n;
		ret = odb_read_object_info(odb, oid, &info, 0, err);
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			ret = 0;
			continue;
		}
		if (ret)
			goto out;
		if (info.type != OBJ_COMMIT) {
			ret = gp_error_set(err, GP_EPROTO, "invalid shallow object %s",
					   oid_to_hex_r(hex, oid));
			goto out;
		}
		n = lookup(&g, oid);
		if (n->flags & SC_CLIENT)
			continue;
		n->flags |= SC_CLIENT;
		clients[nr_clients++] = n;
	}
	/* The wants, each once (git keeps the first of a repeat). */
	wants = xcalloc(req->nr_wants + 1, sizeof(*wants));
	for (size_t i = 0; i < req->nr_wants; i++)
		if (oidset_insert(&seen, &req->wants[i]))
			wants[nr_wants++] = &req->wants[i];

	if (rev_list) {
		ret = rev_list_boundary(&g, req, wants, nr_wants, shallow_out, err);
		if (ret)
			goto out;
		goto unshallow;
	}
	if (!req->depth) {
		/* Nothing asked: protocol v2 still tells of a shallow repository's boundary. */
		if (!req->repo_shallow)
			goto out;
		dw.depth = INFINITE_DEPTH;
		dw.client_grafts = true;
	}
	if (dw.depth == INFINITE_DEPTH && !req->repo_shallow) {
		for (size_t i = 0; i < nr_clients; i++)
			clients[i]->flags |= SC_NOT_SHALLOW;
		goto unshallow;
	}

	heads = xcalloc(nr_wants + 1, sizeof(*heads));
	for (size_t i = 0; i < nr_wants; i++) {
		ret = peel_to_commit(&g, wants[i], &heads[i], err);
		if (ret)
			goto out;
	}
	nr_heads = nr_wants;
	if (req->relative) {
		struct depth_walk measure = { .measure = true, .client_grafts = dw.client_grafts };
		ret = depth_walk(&g, heads, nr_heads, &measure, err);
		if (ret)
			goto out;
		if (!measure.nearest)
			goto out;   /* no shallow commit of the client's to count from */
		forget_depths(&g);
		if (dw.depth == INFINITE_DEPTH ||
		    (uint64_t)dw.depth + measure.nearest >= INFINITE_DEPTH)
			dw.depth = INFINITE_DEPTH;
		else
			dw.depth += (int64_t)measure.nearest;
	}
	ret = depth_walk(&g, heads, nr_heads, &dw, err);
	if (ret)
		goto out;
	/* Last met, first sent; what the client has shallow or what was walked through, not at all. */
	for (size_t i = dw.nr_met; i--;) {
		struct sc_node *n = dw.met[i];
		if (!(n->flags & (SC_CLIENT | SC_NOT_SHALLOW)))
			oid_array_append(shallow_out, &n->oid);
	}

unshallow:
	for (size_t i = 0; i < nr_clients; i++)
		if (clients[i]->flags & SC_NOT_SHALLOW)
			oid_array_append(unshallow_out, &clients[i]->oid);
out:
	free(dw.met);
	free(heads);
	free(wants);
	free(clients);
	oidset_release(&seen);
	graph_release(&g);
	return ret;
}
