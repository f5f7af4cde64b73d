/*
 * upload-pack.c: see upload-pack.h.
 *
 * A session holds the refs it advertised (their ids are the tips a
 * client may want), a small table of the commits the negotiation has
 * looked at (with the flags of the "ready" test), and the request being
 * served. The pack is made in this process by pack-for-fetch.c and goes
 * out through an output that frames it on side-band 1 when the client
 * asked for side-band, with progress on band 2 and a fatal error on
 * band 3.
 */
#include "upload-pack.h"
#include "commit.h"
#include "commit-graph.h"
#include "config.h"
#include "error.h"
#include "object-filter.h"
#include "odb.h"
#include "oid-array.h"
#include "oidset.h"
#include "pack-bitmap.h"
#include "pack-for-fetch.h"
#include "pkt-line.h"
#include "progress.h"
#include "refs.h"
#include "repository.h"
#include "run-command.h"
#include "revision.h"
#include "shallow.h"
#include "strbuf.h"
#include "trace.h"
#include "trace2.h"
#include <pthread.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* ---- configuration ---------------------------------------------------- */

enum allow_uor {
	ALLOW_TIP = 1 << 0,       /* uploadpack.allowTipSHA1InWant */
	ALLOW_REACHABLE = 1 << 1, /* uploadpack.allowReachableSHA1InWant */
	ALLOW_ANY = 1 << 2,       /* uploadpack.allowAnySHA1InWant */
};

enum unborn_mode { UNBORN_IGNORE, UNBORN_ALLOW, UNBORN_ADVERTISE };

struct up_config {
	unsigned allow_uor;
	bool allow_filter, allow_ref_in_want, allow_sideband_all;
	bool advertise_sid, advertise_object_info;
	bool advertise_bundle_uris;    /* uploadpack.advertiseBundleURIs */
	enum unborn_mode unborn;
	int keepalive;                 /* seconds; -1: off */
	const char *pack_objects_hook; /* NULL unless set in protected config */
	bool packfile_uris;            /* uploadpack.blobPackfileUri is set */
	const char *bad_key;           /* a key that needs a value and has none */
	const char *bad_number;        /* a key whose value must be a number */
	const char *bad_unborn;        /* lsrefs.unborn that is none of git's words */
	/* uploadpackfilter.* */
	bool filter_allow_default;
	struct filter_kind_rule { const char *kind; bool allow; } *filter_kinds;
	size_t nr_filter_kinds, alloc_filter_kinds;
	bool tree_max_depth_set;
	uint64_t tree_max_depth;       /* UINT64_MAX: none */
	/* transfer.hideRefs and uploadpack.hideRefs, in config order */
	const char **hide;
	size_t nr_hide, alloc_hide;
};

static bool cfg_bool(struct repository *repo, const char *key, bool dflt)
{
	return config_get_bool_or(&repo->config, key, dflt);
}

static void read_config(struct repository *repo, struct up_config *c, bool hook_allowed)
{
	const char *v;
	int n;
	struct gp_error err = GP_ERROR_INIT;

	memset(c, 0, sizeof(*c));
	if (cfg_bool(repo, "uploadpack.allowtipsha1inwant", false))
		c->allow_uor |= ALLOW_TIP;
	if (cfg_bool(repo, "uploadpack.allowreachablesha1inwant", false))
		c->allow_uor |= ALLOW_REACHABLE;
	if (cfg_bool(repo, "uploadpack.allowanysha1inwant", false))
		c->allow_uor |= ALLOW_ANY | ALLOW_TIP | ALLOW_REACHABLE;
	c->allow_filter = cfg_bool(repo, "uploadpack.allowfilter", false);
	c->allow_ref_in_want = cfg_bool(repo, "uploadpack.allowrefinwant", false);
	c->allow_sideband_all = cfg_bool(repo, "uploadpack.allowsidebandall", false);
	v = getenv("GIT_TEST_SIDEBAND_ALL");
	if (v) {
		bool b;
		if (config_parse_bool(v, &b))
			c->allow_sideband_all = b;
	}
	c->advertise_sid = cfg_bool(repo, "transfer.advertisesid", false);
	c->advertise_object_info = cfg_bool(repo, "transfer.advertiseobjectinfo", false);
	c->advertise_bundle_uris = cfg_bool(repo, "uploadpack.advertisebundleuris", false);
	c->unborn = UNBORN_ADVERTISE;
	if (!config_get_value(&repo->config, "lsrefs.unborn", &v) && v) {
		if (!strcmp(v, "allow"))
			c->unborn = UNBORN_ALLOW;
		else if (!strcmp(v, "ignore"))
			c->unborn = UNBORN_IGNORE;
		else if (strcmp(v, "advertise"))
			c->bad_unborn = v;
	}
	c->keepalive = 5;
	if (!config_get_int(&repo->config, "uploadpack.keepalive", &n, &err))
		c->keepalive = n > 0 ? n : -1;
	gp_error_clear(&err);
	c->filter_allow_default = cfg_bool(repo, "uploadpackfilter.allow", true);
	c->tree_max_depth = UINT64_MAX;
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		if (!strcmp(e->key, "uploadpack.hiderefs") || !strcmp(e->key, "transfer.hiderefs")) {
			if (!e->value)
				continue;
			ALLOC_GROW(c->hide, c->nr_hide + 1, c->alloc_hide);
			c->hide[c->nr_hide++] = e->value;
		} else if (!strcmp(e->key, "uploadpack.blobpackfileuri")) {
			if (!e->value)
				c->bad_key = e->key;
			else
				c->packfile_uris = true;
		} else if (!strcmp(e->key, "uploadpack.packobjectshook")) {
			/* git trusts it only from where the repository's owner cannot write */
			if (hook_allowed && e->scope != CONFIG_SCOPE_LOCAL)
				c->pack_objects_hook = e->value;
		} else if (!strncmp(e->key, "uploadpackfilter.", 17)) {
			const char *rest = e->key + 17;
			const char *dot = strrchr(rest, '.');
			bool b;
			if (!dot || dot == rest)
				continue;
			if (!strcmp(dot, ".allow") && e->value && config_parse_bool(e->value, &b)) {
				ALLOC_GROW(c->filter_kinds, c->nr_filter_kinds + 1,
					   c->alloc_filter_kinds);
				c->filter_kinds[c->nr_filter_kinds].kind = rest;
				c->filter_kinds[c->nr_filter_kinds++].allow = b;
			} else if (!strcmp(e->key, "uploadpackfilter.tree.maxdepth")) {
				int64_t d;
				if (e->value && config_parse_int64(e->value, &d) && d >= 0) {
					c->tree_max_depth = (uint64_t)d;
					c->tree_max_depth_set = true;
				} else
					c->bad_number = e->key;
			}
		}
	}
}

/* ---- refs --------------------------------------------------------------- */

struct up_ref {
	char *name;            /* as advertised: the namespace taken off */
	struct object_id oid;
	struct object_id peeled;
	bool has_peeled;       /* an annotated tag: peeled is what it points at */
	bool peel_known;       /* has_peeled is known (packed-refs said, or we looked) */
	char *symref;          /* for symbolic refs: the target, namespace taken off */
	bool hidden;
};

/* The names of the refs, packed into a few large blocks rather than one malloc each. */
#define NAME_BLOCK_SIZE ((size_t)64 << 10)
struct name_arena {
	char **blocks;
	size_t nr, alloc;
	char *next;            /* free space of the last block */
	size_t left;
};

struct up_refs {
	struct up_ref *items;  /* names in arena */
	size_t nr, alloc;
	struct name_arena arena;
	struct up_ref head;    /* HEAD (name NULL when it does not resolve) */
	char *unborn_head;     /* HEAD's target when that branch does not exist */
	/*
	 * Built on first need (ref_sets()): a fetch asks whether a want is
	 * a tip; ls-refs and the v0 advertisement never do.
	 */
	bool sets_built;
	struct oidset ours;    /* advertised ids (OUR_REF) */
	struct oidset hidden;  /* ids of hidden refs (HIDDEN_REF) */
};

static char *arena_strdup(struct name_arena *a, const char *str)
{
	size_t len = strlen(str) + 1;
	char *out;
	if (len > a->left) {
		size_t size = len > NAME_BLOCK_SIZE ? len : NAME_BLOCK_SIZE;
		ALLOC_GROW(a->blocks, a->nr + 1, a->alloc);
		a->blocks[a->nr++] = a->next = xmalloc(size);
		a->left = size;
	}
	out = a->next;
	memcpy(out, str, len);
	a->next += len;
	a->left -= len;
	return out;
}

static void arena_release(struct name_arena *a)
{
	for (size_t i = 0; i < a->nr; i++)
		free(a->blocks[i]);
	free(a->blocks);
	memset(a, 0, sizeof(*a));
}

/*
 * hideRefs: the last pattern that matches decides. "!" negates; "^"
 * matches the full name rather than the one seen inside the namespace.
 * A pattern matches the name itself and every name below it.
 */
static bool ref_is_hidden(const struct up_config *c, const char *name, const char *full)
{
	for (size_t i = c->nr_hide; i-- > 0;) {
		const char *pat = c->hide[i], *subject = name, *rest;
		bool neg = false;
		size_t len;
		if (*pat == '!') {
			neg = true;
			pat++;
		}
		if (*pat == '^') {
			subject = full;
			pat++;
		}
		len = strlen(pat);
		while (len && pat[len - 1] == '/')
			len--;
		if (!subject || strncmp(subject, pat, len))
			continue;
		rest = subject + len;
		if (!*rest || *rest == '/')
			return !neg;
	}
	return false;
}

struct session;
static int open_odb(struct session *s, struct gp_error *err);
static int peel_oid(struct session *s, const struct object_id *oid, struct object_id *out,
		    enum object_type *type_out);

struct collect_ctx {
	struct session *s;
	const char *ns;      /* "refs/namespaces/x/" or "" */
	size_t ns_len;
};

/* ---- the session --------------------------------------------------------- */

enum neg_flags {
	THEY_HAVE = 1 << 0,
	COMMON_KNOWN = 1 << 1,
	CLIENT_SHALLOW = 1 << 2,
};

/* A commit's generation when the commit-graph does not know it. */
#define NEG_GEN_INFINITY UINT64_MAX

struct neg_commit {
	struct object_id oid;
	uint64_t date;
	/*
	 * The commit-graph's generation (technical/commit-graph): a
	 * commit reaches only commits of lower generation.
	 * NEG_GEN_INFINITY for a commit the graph lacks (none of the
	 * graph's commits reach it); 0 when the graph has none to give.
	 */
	uint64_t generation;
	uint32_t *parents;       /* indexes into the table */
	uint32_t nr_parents;
	uint32_t visit;          /* the walk that last saw it */
	uint8_t flags;
	bool parsed, not_commit;
};

struct neg_table {
	struct neg_commit *items;
	size_t nr, alloc;
	uint32_t *slots;         /* index + 1; 0: free */
	size_t nr_slots;
	uint32_t visit;
	/*
	 * The lowest generation of the THEY_HAVE commits (reaches_have()
	 * cuts below it) when have_gen_known; once a THEY_HAVE commit's
	 * generation is unknown (no graph, or a zero generation), no cut.
	 */
	uint64_t min_have_gen;
	bool have_gen_known, have_gen_unknown;
};

enum multi_ack { MULTI_ACK_NONE, MULTI_ACK, MULTI_ACK_DETAILED };

/* What one fetch asks for (one v0 session, one v2 fetch command). */
struct fetch_req {
	struct object_id *wants;
	size_t nr_wants, alloc_wants;
	struct oidset wanted;
	struct object_id *haves;   /* the client's, that we have */
	size_t nr_haves, alloc_haves;
	struct oidset have_set;    /* non-commit haves seen */
	struct object_id *common;  /* v2: every have we have, to acknowledge */
	struct oidset acked;
	size_t nr_common, alloc_common;
	bool seen_haves;
	struct oidset client_shallow;
	struct object_id *shallow_order; /* client_shallow in the order given */
	size_t nr_shallow_order, alloc_shallow_order;
	int depth;
	bool deepen_relative;
	int64_t deepen_since;
	bool has_since;
	struct object_id *deepen_not;
	size_t nr_deepen_not, alloc_deepen_not;
	bool deepen_rev_list;
	struct object_filter filter;
	bool filter_requested;     /* v0: the "filter" capability */
	enum multi_ack multi_ack;
	bool no_done, thin, ofs_delta, no_progress, include_tag, done, wait_for_done;
	bool sideband_all;
	size_t sideband_max;       /* 0: no side-band */
	uint64_t oldest_have;
	size_t haves_seen;
	/* want-ref: "<oid> <refname>" answers of the wanted-refs section */
	char **wanted_refs;
	size_t nr_wanted_refs, alloc_wanted_refs;
	/* computed for the pack */
	struct oidset walk_shallow;
	bool shallow_info;         /* a shallow-info section / update is due */
};

struct session {
	struct repository *repo;
	struct odb *odb;
	const struct commit_graph *graph; /* repo_commit_graph(): NULL, none */
	const struct upload_pack_options *opts;
	struct up_config cfg;
	struct up_refs refs;
	bool refs_read;
	struct pkt_reader *in;
	struct pkt_sink *out;
	struct neg_table neg;
	const char *agent;
	char session_id[96];
	struct oidset repo_shallow;
	bool repo_is_shallow;
	size_t rounds;
	bool promisor_accepted;    /* the client uses our promisor remotes */
	/* the output of the pack phase */
	pthread_mutex_t out_lock;
	struct gp_error out_err;
	bool out_failed;
	size_t out_band_max;
	uint64_t last_write_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the commit table of the negotiation ---------------------------------- */

static uint32_t neg_hash(const struct object_id *oid)
{
	uint32_t h;
	memcpy(&h, oid->hash, sizeof(h));
	return h;
}

static void neg_rehash(struct neg_table *t)
{
	size_t n = t->nr_slots ? t->nr_slots * 2 : 1024;
	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->nr_slots = n;
	for (size_t i = 0; i < t->nr; i++) {
		size_t pos = neg_hash(&t->items[i].oid) & (n - 1);
		while (t->slots[pos])
			pos = (pos + 1) & (n - 1);
		t->slots[pos] = (uint32_t)i + 1;
	}
}

static uint32_t neg_lookup(struct neg_table *t, const struct object_id *oid, bool create)
{
	size_t pos;
	if (!t->nr_slots)
		neg_rehash(t);
	pos = neg_hash(oid) & (t->nr_slots - 1);
	while (t->slots[pos]) {
		uint32_t i = t->slots[pos] - 1;
		if (oideq(&t->items[i].oid, oid))
			return i;
		pos = (pos + 1) & (t->nr_slots - 1);
	}
	if (!create)
		return UINT32_MAX;
	ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	memset(&t->items[t->nr], 0, sizeof(t->items[0]));
	t->items[t->nr].oid = *oid;
	t->slots[pos] = (uint32_t)t->nr + 1;
	t->nr++;
	if (t->nr * 2 > t->nr_slots)
		neg_rehash(t);
	return (uint32_t)t->nr - 1;
}

static void neg_free(struct neg_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->items[i].parents);
	free(t->items);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * The graph's entry stands for the commit at index i (graph position
 * pos): its parents, date and generation, nothing inflated.
 */
static int neg_parse_from_graph(struct session *s, uint32_t i, uint32_t pos, bool real_parents,
				struct gp_error *err)
{
	struct commit_graph_entry e;
	struct neg_commit *c;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = commit_graph_entry_at(s->graph, pos, &e, err);
	if (ret)
		return gp_error_prefix(err, "commit %s", oid_to_hex_r(hex, &s->neg.items[i].oid));
	c = &s->neg.items[i];
	c->parsed = true;
	c->date = e.date;
	c->generation = e.generation;
	if (real_parents || !s->repo_is_shallow || !oidset_contains(&s->repo_shallow, &c->oid)) {
		uint32_t *parents = e.nr_parents ? xcalloc(e.nr_parents, sizeof(*parents)) : NULL;
		for (uint32_t p = 0; p < e.nr_parents; p++) {
			struct object_id poid;
			commit_graph_oid(s->graph, commit_graph_parent(&e, p), &poid);
			parents[p] = neg_lookup(&s->neg, &poid, true);
		}
		c = &s->neg.items[i];
		c->parents = parents;
		c->nr_parents = e.nr_parents;
	}
	return 0;
}

/*
 * Read the commit at index i (once). A shallow commit of this
 * repository gets no parents, unless real_parents. Errors: those of
 * reading it.
 */
static int neg_parse_parents(struct session *s, uint32_t i, bool real_parents,
			     struct gp_error *err)
{
	struct neg_commit *c = &s->neg.items[i];
	struct commit_info ci = COMMIT_INFO_INIT;
	enum object_type type;
	unsigned char *data;
	size_t size;
	struct object_id oid = c->oid;
	uint32_t pos;
	int ret;

	if (c->parsed)
		return 0;
	if (s->graph && commit_graph_find(s->graph, &oid, &pos))
		return neg_parse_from_graph(s, i, pos, real_parents, err);
	ret = odb_read_object(s->odb, &oid, &type, &data, &size, err);
	if (ret)
		return ret;
	c = &s->neg.items[i];
	c->parsed = true;
	c->generation = NEG_GEN_INFINITY;
	if (type != OBJ_COMMIT) {
		c->not_commit = true;
		free(data);
		return 0;
	}
	ret = commit_parse(data, size, s->repo->hash_algo, &ci, err);
	free(data);
	if (ret)
		return ret;
	/* a shallow commit of this repository has no parents to follow */
	if (real_parents || !s->repo_is_shallow || !oidset_contains(&s->repo_shallow, &oid)) {
		uint32_t *parents = ci.nr_parents ? xcalloc(ci.nr_parents, sizeof(*parents)) : NULL;
		for (size_t p = 0; p < ci.nr_parents; p++)
			parents[p] = neg_lookup(&s->neg, &ci.parents[p], true);
		c = &s->neg.items[i];
		c->parents = parents;
		c->nr_parents = (uint32_t)ci.nr_parents;
	}
	s->neg.items[i].date = ci.date;
	commit_info_release(&ci);
	return 0;
}

static int neg_parse(struct session *s, uint32_t i, struct gp_error *err)
{
	return neg_parse_parents(s, i, false, err);
}

static int neg_parse_full(struct session *s, uint32_t i, struct gp_error *err)
{
	return neg_parse_parents(s, i, true, err);
}

/* ---- output ------------------------------------------------------------ */

/* A line of the response: wrapped on band 1 in sideband-all mode. */
static int send_line(struct session *s, const struct fetch_req *r, struct gp_error *err,
		     const char *fmt, ...) GP_PRINTF(4, 5);
static int send_line(struct session *s, const struct fetch_req *r, struct gp_error *err,
		     const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int ret;
	if (r && r->sideband_all)
		strbuf_addch(&sb, PKT_BAND_DATA);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ret = pkt_write(s->out, sb.buf, sb.len, err);
	strbuf_release(&sb);
	return ret;
}

/*
 * Tell the client why we stop: an ERR packet (git's "remote error: ..."
 * on the other side), then return code with the message git dies with.
 */
static int fail_with_err_packet(struct session *s, struct gp_error *err, int code,
				const char *client_msg, const char *local_msg)
{
	struct gp_error ignored = GP_ERROR_INIT;
	pkt_write_error(s->out, &ignored, "%s", client_msg);
	gp_error_clear(&ignored);
	return gp_error_set(err, code, "%s", local_msg);
}

static int not_our_ref(struct session *s, const struct object_id *oid, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1], client[160], local[160];
	oid_to_hex_r(hex, oid);
	snprintf(client, sizeof(client), "upload-pack: not our ref %s", hex);
	snprintf(local, sizeof(local), "git upload-pack: not our ref %s", hex);
	return fail_with_err_packet(s, err, GP_ENOTFOUND, client, local);
}

/* ---- refs ----------------------------------------------------------------- */

/*
 * What the advertisement says of one ref (r->name borrowed from refname):
 * hidden or not, its peeled id (with want_peel; known from packed-refs,
 * else read), its symref target (malloc'd).
 */
static void fill_ref(struct collect_ctx *cc, const char *refname, const struct object_id *oid,
		     const struct object_id *peeled, unsigned flags, bool want_peel,
		     struct up_ref *r)
{
	struct session *s = cc->s;
	const char *name = refname + cc->ns_len;
	struct gp_error err = GP_ERROR_INIT;
	enum object_type type;

	memset(r, 0, sizeof(*r));
	r->name = (char *)name;
	r->oid = *oid;
	r->hidden = ref_is_hidden(&s->cfg, name, refname);
	/* a broken ref is advertised with the null id, as git does */
	if (flags & REF_ISBROKEN) {
		oid_clear(&r->oid, s->repo->hash_algo);
		r->peel_known = true;
		return;
	}
	if (flags & REF_KNOWS_PEELED) {
		r->peel_known = true;
		if (peeled) {
			r->peeled = *peeled;
			r->has_peeled = true;
		}
	} else if (want_peel && !open_odb(s, &err) && !peel_oid(s, oid, &r->peeled, &type)) {
		r->peel_known = true;
		r->has_peeled = !oideq(&r->peeled, oid);
	}
	gp_error_clear(&err);
	if (flags & REF_ISSYMREF) {
		char *target = NULL;
		struct object_id ignored;
		/* the end of a chain of symrefs, as git names it */
		if (!refs_resolve(s->repo, refname, &ignored, &target, &err) && target) {
			const char *t = target;
			if (cc->ns_len && !strncmp(t, cc->ns, cc->ns_len))
				t += cc->ns_len;
			r->symref = xstrdup(t);
		}
		free(target);
		gp_error_clear(&err);
	}
}

static int collect_ref(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct collect_ctx *cc = data;
	struct up_refs *refs = &cc->s->refs;
	struct up_ref *r;

	ALLOC_GROW(refs->items, refs->nr + 1, refs->alloc);
	r = &refs->items[refs->nr++];
	fill_ref(cc, refname, oid, peeled, flags, true, r);
	r->name = arena_strdup(&refs->arena, r->name);
	return 0;
}

/* The ids of the refs (HEAD's too), ours and hidden: see struct up_refs. */
static void ref_sets(struct session *s)
{
	struct up_refs *refs = &s->refs;
	if (refs->sets_built)
		return;
	for (size_t i = 0; i < refs->nr; i++)
		oidset_insert(refs->items[i].hidden ? &refs->hidden : &refs->ours,
			      &refs->items[i].oid);
	if (refs->head.name)
		oidset_insert(refs->head.hidden ? &refs->hidden : &refs->ours, &refs->head.oid);
	refs->sets_built = true;
}

/* The ref named name (as advertised), by binary search: refs come sorted. */
static const struct up_ref *find_ref(const struct up_refs *refs, const char *name)
{
	size_t lo = 0, hi = refs->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(refs->items[mid].name, name);
		if (!c)
			return &refs->items[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const char *namespace_prefix(struct strbuf *sb)
{
	const char *ns = getenv("GIT_NAMESPACE");
	strbuf_reset(sb);
	if (!ns || !*ns)
		return "";
	/* "a/b" is refs/namespaces/a/refs/namespaces/b/ (gitnamespaces(7)) */
	while (*ns) {
		const char *slash = strchr(ns, '/');
		size_t len = slash ? (size_t)(slash - ns) : strlen(ns);
		if (len)
			strbuf_addf(sb, "refs/namespaces/%.*s/", (int)len, ns);
		ns += len + (slash ? 1 : 0);
	}
	return sb->buf;
}

/* Whether packed-refs knows what target peels to: a lookup of that one ref. */
struct peel_lookup {
	const char *name;
	const struct object_id *oid;
	bool found, has_peeled;
	struct object_id peeled;
};

static int peel_lookup_one(const char *refname, const struct object_id *oid,
			   const struct object_id *peeled, unsigned flags, void *data)
{
	struct peel_lookup *pl = data;
	if (strcmp(refname, pl->name))
		return 0;
	if ((flags & REF_KNOWS_PEELED) && oideq(oid, pl->oid)) {
		pl->found = true;
		pl->has_peeled = peeled != NULL;
		if (peeled)
			pl->peeled = *peeled;
	}
	return 1;
}

/*
 * HEAD (cc->ns's), into s->refs.head or s->refs.unborn_head. Its peeled
 * id comes, usually without reading an object, from its branch: among
 * the refs collected when there are some, else by looking that one up.
 */
static void read_head(struct session *s, struct collect_ctx *cc, bool collected)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf head = STRBUF_INIT;
	struct object_id oid;
	char *resolved = NULL;

	strbuf_addf(&head, "%sHEAD", cc->ns);
	if (!refs_resolve(s->repo, head.buf, &oid, &resolved, &err)) {
		struct up_ref *h = &s->refs.head;
		const struct up_ref *target = NULL;
		struct peel_lookup pl = { .name = resolved, .oid = &oid };
		enum object_type type;
		h->name = xstrdup("HEAD");
		h->oid = oid;
		h->hidden = ref_is_hidden(&s->cfg, "HEAD", head.buf);
		if (collected && resolved && !strncmp(resolved, cc->ns, cc->ns_len))
			target = find_ref(&s->refs, resolved + cc->ns_len);
		else if (!collected && resolved && strcmp(resolved, head.buf) &&
			 refs_for_each_ext(s->repo, resolved, 0, peel_lookup_one, &pl, &err) < 0)
			gp_error_clear(&err);
		if (target && target->peel_known && oideq(&target->oid, &oid)) {
			h->has_peeled = target->has_peeled;
			h->peeled = target->peeled;
		} else if (pl.found) {
			h->has_peeled = pl.has_peeled;
			h->peeled = pl.peeled;
		} else if (!open_odb(s, &err) && !peel_oid(s, &oid, &h->peeled, &type) &&
			   !oideq(&h->peeled, &oid)) {
			h->has_peeled = true;
		}
		gp_error_clear(&err);
		if (resolved && strcmp(resolved, head.buf)) {
			const char *t = resolved;
			if (cc->ns_len && !strncmp(t, cc->ns, cc->ns_len))
				t += cc->ns_len;
			h->symref = xstrdup(t);
		}
	} else {
		char *target = NULL;
		gp_error_clear(&err);
		if (!refs_read_symref(s->repo, head.buf, &target, &err) && target) {
			const char *t = target;
			if (cc->ns_len && !strncmp(t, cc->ns, cc->ns_len))
				t += cc->ns_len;
			s->refs.unborn_head = xstrdup(t);
		}
		free(target);
		gp_error_clear(&err);
	}
	free(resolved);
	strbuf_release(&head);
}

static int read_refs(struct session *s, struct gp_error *err)
{
	struct strbuf ns_buf = STRBUF_INIT;
	struct collect_ctx cc = { .s = s };
	int ret;

	if (s->refs_read)
		return 0;
	cc.ns = namespace_prefix(&ns_buf);
	cc.ns_len = strlen(cc.ns);
	ret = refs_for_each_ext(s->repo, cc.ns_len ? cc.ns : "", REFS_EACH_BROKEN, collect_ref, &cc,
				err);
	if (ret)
		goto out;
	/* the refs of a namespace live under it; only those under refs/ are refs */
	if (cc.ns_len) {
		size_t keep = 0;
		for (size_t i = 0; i < s->refs.nr; i++) {
			struct up_ref *r = &s->refs.items[i];
			if (strncmp(r->name, "refs/", 5)) {
				free(r->symref);
				continue;
			}
			s->refs.items[keep++] = *r;
		}
		s->refs.nr = keep;
	}
	read_head(s, &cc, true);
	s->refs_read = true;
	ret = 0;
out:
	strbuf_release(&ns_buf);
	return ret;
}

static void refs_release(struct up_refs *refs)
{
	for (size_t i = 0; i < refs->nr; i++)
		free(refs->items[i].symref);
	free(refs->items);
	arena_release(&refs->arena);
	free(refs->head.name);
	free(refs->head.symref);
	free(refs->unborn_head);
	oidset_release(&refs->ours);
	oidset_release(&refs->hidden);
	memset(refs, 0, sizeof(*refs));
}

/*
 * The object store, opened on first need: advertising packed refs whose
 * peeled values packed-refs records (ls-refs, a no-op fetch) reads no
 * object at all.
 */
static int open_odb(struct session *s, struct gp_error *err)
{
	int ret;
	if (s->odb)
		return 0;
	ret = repo_odb(s->repo, &s->odb, err);
	/* a request cannot pay for hashing whole bitmaps: see odb_set_verify_bitmaps() */
	if (!ret)
		odb_set_verify_bitmaps(s->odb, false);
	/* a graph that does not open is no reason to fail: the commits are read */
	if (!ret && repo_commit_graph(s->repo, &s->graph, err)) {
		gp_error_clear(err);
		s->graph = NULL;
	}
	return ret;
}

/* What oid finally points at, through annotated tags (at most 64 deep). */
static int peel_oid(struct session *s, const struct object_id *oid, struct object_id *out,
		    enum object_type *type_out)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_id cur = *oid;
	for (int depth = 0; depth < 64; depth++) {
		struct object_info oi;
		enum object_type type;
		unsigned char *data;
		size_t size;
		struct tag_info ti;
		int ret;
		if (odb_read_object_info(s->odb, &cur, &oi, 0, &err))
			goto fail;
		if (oi.type != OBJ_TAG) {
			*out = cur;
			*type_out = oi.type;
			return 0;
		}
		if (odb_read_object(s->odb, &cur, &type, &data, &size, &err))
			goto fail;
		ret = tag_parse(data, size, s->repo->hash_algo, &ti, &err);
		free(data);
		if (ret)
			goto fail;
		cur = ti.object;
	}
fail:
	gp_error_clear(&err);
	*out = *oid;
	*type_out = OBJ_NONE;
	return -1;
}

/* ---- the advertisement (v0, v1) -------------------------------------------- */

static void session_id(struct session *s)
{
	struct timeval tv;
	struct tm tm;
	char host[256] = "";
	uint32_t h = 2166136261u;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	gethostname(host, sizeof(host) - 1);
	for (const char *p = host; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(s->session_id, sizeof(s->session_id),
		 "%04d%02d%02dT%02d%02d%02d.%06ldZ-H%08" PRIx32 "-P%08x",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (long)tv.tv_usec, h, (unsigned)getpid());
}

static void v0_capabilities(struct session *s, struct strbuf *caps)
{
	strbuf_addstr(caps, "multi_ack thin-pack side-band side-band-64k ofs-delta shallow "
		      "deepen-since deepen-not deepen-relative no-progress include-tag "
		      "multi_ack_detailed");
	if (s->cfg.allow_uor & ALLOW_TIP)
		strbuf_addstr(caps, " allow-tip-sha1-in-want");
	if (s->cfg.allow_uor & ALLOW_REACHABLE)
		strbuf_addstr(caps, " allow-reachable-sha1-in-want");
	/* as git: no-done only matters to a stateless client, which gets the refs so */
	if (s->opts->advertise_refs)
		strbuf_addstr(caps, " no-done");
	/* a hidden HEAD still names its branch, as in git */
	if (s->refs.head.name && s->refs.head.symref)
		strbuf_addf(caps, " symref=HEAD:%s", s->refs.head.symref);
	if (s->cfg.allow_filter)
		strbuf_addstr(caps, " filter");
	if (s->cfg.advertise_sid)
		strbuf_addf(caps, " session-id=%s", s->session_id);
	strbuf_addf(caps, " object-format=%s", gp_hash_algos[s->repo->hash_algo].name);
	strbuf_addf(caps, " agent=%s", s->agent);
}

/*
 * "<hex> <name><suffix>" and LF as one pkt-line, built in place: a v0
 * advertisement writes one per ref (11,501 of them on the benchmark's
 * repository), so no format string and no copy.
 */
static int write_ref_line(struct session *s, const struct object_id *oid, const char *name,
			  const char *suffix, struct gp_error *err)
{
	char small[PKT_HEADER_SIZE + GP_MAX_HEXSZ + 256];
	size_t hexsz = gp_hash_algos[s->repo->hash_algo].hexsz;
	size_t name_len = strlen(name), suffix_len = strlen(suffix);
	size_t len = PKT_HEADER_SIZE + hexsz + 1 + name_len + suffix_len + 1;
	char *buf = len <= sizeof(small) ? small : xmalloc(len + 1);
	char *p = buf + PKT_HEADER_SIZE;
	int ret;

	oid_to_hex_r(p, oid);
	p += hexsz;
	*p++ = ' ';
	memcpy(p, name, name_len);
	p += name_len;
	memcpy(p, suffix, suffix_len);
	p += suffix_len;
	*p = '\n';
	ret = pkt_write_framed(s->out, buf, len, err);
	if (buf != small)
		free(buf);
	return ret;
}

static int advertise_one(struct session *s, const struct up_ref *r, struct strbuf *caps,
			 struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	int ret;
	oid_to_hex_r(hex, &r->oid);
	if (caps->len) {
		struct strbuf line = STRBUF_INIT;
		strbuf_addf(&line, "%s %s", hex, r->name);
		strbuf_addch(&line, '\0');
		strbuf_addbuf(&line, caps);
		strbuf_addch(&line, '\n');
		ret = pkt_write(s->out, line.buf, line.len, err);
		strbuf_release(&line);
		strbuf_reset(caps);
	} else {
		ret = write_ref_line(s, &r->oid, r->name, "", err);
	}
	if (!ret && r->has_peeled)
		ret = write_ref_line(s, &r->peeled, r->name, "^{}", err);
	return ret;
}

struct v0_adv_ctx {
	struct collect_ctx cc;
	struct strbuf *caps;	/* for the first line; empty after it */
	struct strbuf line;
	struct gp_error *err;
};

/* The id a want is checked against: as advertised, hidden or not. */
static void note_advertised(struct session *s, const struct object_id *oid, bool hidden)
{
	oidset_insert(hidden ? &s->refs.hidden : &s->refs.ours, oid);
}

/*
 * One ref of the streamed v0 advertisement. A packed ref whose peeled
 * id packed-refs records goes out from the view's hex, written in
 * place; a symref, a ref to peel by reading objects, and the first line
 * (which carries the capabilities) go through fill_ref() and
 * advertise_one(). Either way its id joins the sets that wants are
 * checked against, so a ref that moves after the advertisement is
 * judged by what the client was told, as git judges it.
 */
static int v0_adv_each(const struct ref_view *ref, void *data)
{
	struct v0_adv_ctx *vc = data;
	struct session *s = vc->cc.s;
	const char *name = ref->name + vc->cc.ns_len;
	size_t name_len = ref->name_len - vc->cc.ns_len;
	size_t hexsz = gp_hash_algos[s->repo->hash_algo].hexsz;
	struct strbuf *line = &vc->line;
	struct object_id oid, peeled;
	bool hidden;
	int ret;

	/* the refs of a namespace live under it; only those under refs/ are refs */
	if (vc->cc.ns_len && strncmp(name, "refs/", 5))
		return 0;
	hex_to_oid(ref->hex, s->repo->hash_algo, &oid);
	if (vc->caps->len || (ref->flags & REF_ISSYMREF) ||
	    !(ref->flags & (REF_KNOWS_PEELED | REF_ISBROKEN))) {
		struct up_ref r;
		if (ref->peeled_hex)
			hex_to_oid(ref->peeled_hex, s->repo->hash_algo, &peeled);
		fill_ref(&vc->cc, ref->name, &oid, ref->peeled_hex ? &peeled : NULL, ref->flags,
			 true, &r);
		note_advertised(s, &r.oid, r.hidden);
		ret = r.hidden ? 0 : advertise_one(s, &r, vc->caps, vc->err);
		free(r.symref);
		return ret;
	}
	hidden = ref_is_hidden(&s->cfg, name, ref->name);
	note_advertised(s, &oid, hidden);
	if (hidden)
		return 0;
	strbuf_reset(line);
	strbuf_grow(line, PKT_HEADER_SIZE + hexsz + name_len + 8);
	/* the packet length, filled in by pkt_write_framed() */
	strbuf_setlen(line, PKT_HEADER_SIZE);
	strbuf_add(line, ref->hex, hexsz);
	strbuf_addch(line, ' ');
	strbuf_add(line, name, name_len);
	strbuf_addch(line, '\n');
	ret = pkt_write_framed(s->out, line->buf, line->len, vc->err);
	if (ret || !ref->peeled_hex || (ref->flags & REF_ISBROKEN))
		return ret;
	strbuf_setlen(line, PKT_HEADER_SIZE);
	strbuf_add(line, ref->peeled_hex, hexsz);
	strbuf_addch(line, ' ');
	strbuf_add(line, name, name_len);
	strbuf_add(line, "^{}\n", 4);
	return pkt_write_framed(s->out, line->buf, line->len, vc->err);
}

/*
 * The v0/v1 advertisement, streamed as refs are read (v2's ls-refs does
 * the same): HEAD first, then every ref. What a fetch needs of the refs
 * afterwards is only the sets of advertised and hidden ids, noted as
 * the lines go out.
 */
static int advertise_refs_v0(struct session *s, struct gp_error *err)
{
	struct strbuf caps = STRBUF_INIT, ns_buf = STRBUF_INIT;
	struct v0_adv_ctx vc = { .cc = { .s = s }, .caps = &caps, .line = STRBUF_INIT,
				 .err = err };
	int ret = 0;

	vc.cc.ns = namespace_prefix(&ns_buf);
	vc.cc.ns_len = strlen(vc.cc.ns);
	read_head(s, &vc.cc, false);
	s->refs.sets_built = true;
	if (s->opts->version == 1)
		ret = pkt_writef(s->out, err, "version 1\n");
	v0_capabilities(s, &caps);
	if (s->refs.head.name)
		note_advertised(s, &s->refs.head.oid, s->refs.head.hidden);
	if (!ret && s->refs.head.name && !s->refs.head.hidden)
		ret = advertise_one(s, &s->refs.head, &caps, err);
	if (!ret)
		ret = refs_for_each_view(s->repo, vc.cc.ns, REFS_EACH_BROKEN, v0_adv_each, &vc, err);
	if (!ret && caps.len) {
		/* no refs: the capabilities ride on a placeholder */
		struct up_ref none = { .name = (char *)"capabilities^{}" };
		oid_clear(&none.oid, s->repo->hash_algo);
		ret = advertise_one(s, &none, &caps, err);
	}
	/* a shallow server says where its history ends, as git does (in id order) */
	if (!ret && s->repo_is_shallow) {
		struct oid_array ids = OID_ARRAY_INIT;
		size_t pos = 0;
		const struct object_id *oid;
		char hex[GP_MAX_HEXSZ + 1];
		oid_array_init(&ids, s->repo->hash_algo);
		while ((oid = oidset_next(&s->repo_shallow, &pos)))
			oid_array_append(&ids, oid);
		oid_array_sort_unique(&ids);
		for (size_t i = 0; !ret && i < ids.nr; i++)
			ret = pkt_writef(s->out, err, "shallow %s\n",
					 hash_to_hex_r(hex, oid_array_raw(&ids, i), ids.rawsz));
		oid_array_release(&ids);
	}
	if (!ret)
		ret = pkt_flush(s->out, err);
	strbuf_release(&caps);
	strbuf_release(&ns_buf);
	strbuf_release(&vc.line);
	return ret;
}

/* ---- reading requests ------------------------------------------------------- */

static int read_line(struct session *s, struct gp_error *err)
{
	/* the peer answers what we said: it must have it all before we wait */
	int ret = pkt_sink_flush(s->out, err);
	if (ret)
		return ret;
	ret = pkt_read(s->in, err);
	if (ret == GP_EPROTO && s->in->max_bytes && s->in->offset >= s->in->max_bytes)
		return fail_with_err_packet(s, err, GP_EPROTO, "upload-pack: request too large",
					    "git upload-pack: request too large");
	return ret;
}

static int parse_hex_arg(struct session *s, const char *arg, struct object_id *oid)
{
	return parse_oid_hex_exact(arg, s->repo->hash_algo, oid);
}

/* An id at the start of arg, whatever follows it (git reads "have" and "want" so). */
static int parse_hex_prefix(struct session *s, const char *arg, struct object_id *oid)
{
	size_t hexsz = gp_hash_algos[s->repo->hash_algo].hexsz;
	if (strnlen(arg, hexsz) < hexsz)
		return -1;
	return hex_to_oid(arg, s->repo->hash_algo, oid);
}

static void add_want(struct fetch_req *r, const struct object_id *oid)
{
	if (!oidset_insert(&r->wanted, oid))
		return;
	ALLOC_GROW(r->wants, r->nr_wants + 1, r->alloc_wants);
	r->wants[r->nr_wants++] = *oid;
}

static int add_client_shallow(struct session *s, struct fetch_req *r, const char *arg,
			      struct gp_error *err)
{
	struct object_id oid;
	struct object_info oi;
	if (parse_hex_arg(s, arg, &oid))
		return gp_error_set(err, GP_EPROTO, "invalid shallow line: shallow %s", arg);
	if (oidset_size(&r->client_shallow) >= UPLOAD_PACK_MAX_SHALLOWS)
		return fail_with_err_packet(s, err, GP_EPROTO, "upload-pack: too many shallow lines",
					    "git upload-pack: too many shallow lines");
	/* a shallow commit we do not have cannot matter to us */
	if (odb_read_object_info(s->odb, &oid, &oi, 0, err)) {
		gp_error_clear(err);
		return 0;
	}
	if (oi.type != OBJ_COMMIT)
		return gp_error_set(err, GP_EPROTO, "invalid shallow object %s", arg);
	if (oidset_insert(&r->client_shallow, &oid)) {
		ALLOC_GROW(r->shallow_order, r->nr_shallow_order + 1, r->alloc_shallow_order);
		r->shallow_order[r->nr_shallow_order++] = oid;
	}
	return 0;
}

/* deepen-not <ref>: git's ref DWIM rules; exactly one must match. */
static int add_deepen_not(struct session *s, struct fetch_req *r, const char *arg,
			  const char *line, struct gp_error *err)
{
	static const char *const rules[] = {
		"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s",
		"refs/remotes/%s/HEAD",
	};
	struct object_id found, oid;
	int matches = 0;
	if (r->nr_deepen_not >= UPLOAD_PACK_MAX_DEEPEN_NOT)
		return gp_error_set(err, GP_EPROTO, "git upload-pack: too many deepen-not lines");
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		char *name = xstrfmt(rules[i], arg);
		if (refname_is_valid(name, REFNAME_ALLOW_ONELEVEL) &&
		    !refs_resolve(s->repo, name, &oid, NULL, err)) {
			if (!matches++)
				found = oid;
		}
		gp_error_clear(err);
		free(name);
	}
	if (!matches)
		return gp_error_set(err, GP_EPROTO, "git upload-pack: deepen-not is not a ref: %s", arg);
	if (matches != 1)
		return gp_error_set(err, GP_EPROTO, "git upload-pack: ambiguous deepen-not: %s", line);
	ALLOC_GROW(r->deepen_not, r->nr_deepen_not + 1, r->alloc_deepen_not);
	r->deepen_not[r->nr_deepen_not++] = found;
	r->deepen_rev_list = true;
	return 0;
}

/* The depth lines shared by v0 and v2: 1 when line was one, 0 when not. */
static int parse_deepen_line(struct session *s, struct fetch_req *r, const char *line,
			     struct gp_error *err)
{
	const char *arg;
	char *end;
	if (skip_prefix(line, "shallow ", &arg)) {
		int ret = add_client_shallow(s, r, arg, err);
		return ret ? ret : 1;
	}
	if (skip_prefix(line, "deepen ", &arg)) {
		long d;
		errno = 0;
		d = strtol(arg, &end, 0);
		if (end == arg || *end || d <= 0 || errno || d > INT_MAX)
			return gp_error_set(err, GP_EPROTO, "Invalid deepen: %s", line);
		r->depth = (int)d;
		return 1;
	}
	if (skip_prefix(line, "deepen-since ", &arg)) {
		long long t;
		errno = 0;
		t = strtoll(arg, &end, 0);
		/* 0 is a date (git takes it); -1 is not */
		if (end == arg || *end || t < 0 || errno || t == LLONG_MAX)
			return gp_error_set(err, GP_EPROTO, "Invalid deepen-since: %s", line);
		r->deepen_since = t;
		r->has_since = true;
		r->deepen_rev_list = true;
		return 1;
	}
	if (skip_prefix(line, "deepen-not ", &arg)) {
		int ret = add_deepen_not(s, r, arg, line, err);
		return ret ? ret : 1;
	}
	return 0;
}

static bool filter_allowed(const struct up_config *c, const struct object_filter *f,
			   struct strbuf *why)
{
	/* the combination is judged before its parts, as git judges it */
	{
		const char *kind = object_filter_kind_name(f->kind);
		bool allow = c->filter_allow_default, explicit = false;
		size_t klen = strlen(kind);
		for (size_t i = 0; i < c->nr_filter_kinds; i++) {
			const char *k = c->filter_kinds[i].kind;
			if (!strncmp(k, kind, klen) && k[klen] == '.') {
				allow = c->filter_kinds[i].allow;
				explicit = true;
			}
		}
		/* as git: uploadpackfilter.tree.maxDepth allows tree: filters */
		if (!explicit && f->kind == OBJECT_FILTER_TREE_DEPTH && c->tree_max_depth_set)
			allow = true;
		if (!allow) {
			strbuf_addf(why, "filter '%s' not supported", kind);
			return false;
		}
		if (f->kind == OBJECT_FILTER_TREE_DEPTH && f->tree_depth > c->tree_max_depth) {
			strbuf_addf(why, "tree filter allows max depth %" PRIu64 ", but got %" PRIu64,
				    c->tree_max_depth, f->tree_depth);
			return false;
		}
	}
	if (f->kind == OBJECT_FILTER_COMBINE) {
		for (size_t i = 0; i < f->nr_subs; i++)
			if (!filter_allowed(c, &f->subs[i], why))
				return false;
	}
	return true;
}

static int parse_filter_line(struct session *s, struct fetch_req *r, const char *arg,
			     struct gp_error *err)
{
	struct strbuf why = STRBUF_INIT;
	int ret;
	if (r->filter.kind != OBJECT_FILTER_NONE)
		return gp_error_set(err, GP_EPROTO, "multiple filter-specs cannot be combined");
	ret = object_filter_parse(&r->filter, arg, err);
	if (ret)
		return ret;
	if (!filter_allowed(&s->cfg, &r->filter, &why)) {
		char *client = xstrfmt("%s", why.buf);
		ret = fail_with_err_packet(s, err, GP_EPROTO, client, why.buf);
		free(client);
	}
	strbuf_release(&why);
	return ret;
}

/* ---- wants: ours, tips, reachable ---------------------------------------- */

static bool is_our_ref(struct session *s, const struct object_id *oid)
{
	ref_sets(s);
	if (oidset_contains(&s->refs.ours, oid))
		return true;
	return (s->cfg.allow_uor & (ALLOW_TIP | ALLOW_REACHABLE)) &&
	       oidset_contains(&s->refs.hidden, oid);
}

struct reach_ctx {
	const struct oidset *pending;
	size_t found;
};

static int reach_show(const struct object_id *oid, enum object_type type, const char *path,
		      void *data)
{
	struct reach_ctx *rc = data;
	if (oidset_contains(rc->pending, oid))
		rc->found++;
	/* every want found: the rest of the walk cannot change the answer */
	return rc->found == oidset_size(rc->pending) ? 1 : 0;
}

/*
 * Whether every one of wants is reachable from the refs a client may
 * fetch from: with bitmaps when they answer, else a walk.
 */
static int all_reachable(struct session *s, const struct object_id *wants, size_t nr,
			 bool *result, struct gp_error *err)
{
	struct bitmap_index *bi = NULL;
	struct bitmap_tip *tips = NULL;
	size_t nr_tips = 0, alloc = 0;
	bool allow_hidden = s->cfg.allow_uor & (ALLOW_TIP | ALLOW_REACHABLE);
	struct oidset *sets[2] = { &s->refs.ours, allow_hidden ? &s->refs.hidden : NULL };
	struct oidset pending = OIDSET_INIT;
	struct reach_ctx rc = { .pending = &pending };
	bool commits_only = true;
	struct rev_walk *w;
	int ret = 0;

	ref_sets(s);
	for (int k = 0; k < 2; k++) {
		size_t pos = 0;
		const struct object_id *oid;
		if (!sets[k])
			continue;
		while ((oid = oidset_next(sets[k], &pos))) {
			ALLOC_GROW(tips, nr_tips + 1, alloc);
			tips[nr_tips].oid = *oid;
			tips[nr_tips++].uninteresting = false;
		}
	}
	*result = true;
	if (!bitmap_index_open(&bi, s->odb, err)) {
		struct bitmap_result *res = NULL;
		bool all = true;
		if (!bitmap_reachable(bi, s->odb, tips, nr_tips, &res, err)) {
			const struct bitmap_order *order = bitmap_index_order(bi);
			for (size_t i = 0; all && i < nr; i++) {
				uint32_t pos;
				if (!bitmap_order_find(order, &wants[i], &pos) ||
				    !bitmap_result_has_bit(res, pos))
					all = false;
			}
			bitmap_result_free(res);
		} else {
			all = false;
		}
		bitmap_index_free(bi);
		if (all) {
			free(tips);
			return 0;
		}
		/* what the bitmaps miss may be newer than them: walk */
	}
	gp_error_clear(err);
	for (size_t i = 0; i < nr; i++) {
		struct object_info oi;
		oidset_insert(&pending, &wants[i]);
		if (odb_read_object_info(s->odb, &wants[i], &oi, 0, err) || oi.type != OBJ_COMMIT)
			commits_only = false;
		gp_error_clear(err);
	}
	rev_walk_new(&w, s->odb, s->repo->hash_algo);
	if (s->graph)
		rev_walk_set_commit_graph(w, s->graph);
	for (size_t i = 0; !ret && i < nr_tips; i++) {
		ret = rev_walk_add_tip(w, &tips[i].oid, false, "", err);
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			ret = 0;
		}
	}
	if (!ret) {
		rev_walk_set_missing(w, REV_MISSING_ALLOW, NULL, NULL);
		ret = rev_walk_run(w, commits_only ? 0 : REV_OBJECTS, reach_show, &rc, err);
		if (ret == 1)
			ret = 0;
	}
	rev_walk_free(w);
	*result = rc.found == oidset_size(&pending);
	oidset_release(&pending);
	free(tips);
	return ret;
}

/* v0: a want that is no advertised tip must be allowed, and reachable when asked. */
static int check_wants_v0(struct session *s, struct fetch_req *r, struct gp_error *err)
{
	struct object_id *non_tips = NULL;
	size_t nr = 0;
	bool reachable = false;
	int ret = 0;

	if ((s->cfg.allow_uor & ALLOW_ANY))
		return 0;
	non_tips = xcalloc(r->nr_wants ? r->nr_wants : 1, sizeof(*non_tips));
	for (size_t i = 0; i < r->nr_wants; i++)
		if (!is_our_ref(s, &r->wants[i]))
			non_tips[nr++] = r->wants[i];
	/*
	 * As git: a stateless client may want what its advertisement named
	 * (the refs may have moved on since), so reachability counts there
	 * even without allowReachableSHA1InWant.
	 */
	if (nr && (s->opts->stateless_rpc || (s->cfg.allow_uor & ALLOW_REACHABLE)))
		ret = all_reachable(s, non_tips, nr, &reachable, err);
	if (!ret && nr && !reachable)
		ret = not_our_ref(s, &non_tips[0], err);
	free(non_tips);
	return ret;
}

/* ---- negotiation ------------------------------------------------------------ */

/*
 * The generation of the commit at index i without inflating it: the
 * graph's, NEG_GEN_INFINITY when the graph lacks it, 0 (unknown) with
 * no graph or a damaged entry.
 */
static uint64_t neg_generation(struct session *s, uint32_t i)
{
	struct gp_error ignored = GP_ERROR_INIT;
	struct commit_graph_entry e;
	uint32_t pos;
	if (s->neg.items[i].parsed)
		return s->neg.items[i].generation;
	if (!s->graph)
		return 0;
	if (!commit_graph_find(s->graph, &s->neg.items[i].oid, &pos))
		return NEG_GEN_INFINITY;
	if (commit_graph_entry_at(s->graph, pos, &e, &ignored)) {
		gp_error_clear(&ignored);
		return 0;
	}
	return e.generation;
}

/* A commit of generation gen is now THEY_HAVE: lower the cut, or drop it. */
static void note_have_generation(struct session *s, uint64_t gen)
{
	struct neg_table *t = &s->neg;
	if (!s->graph || !gen) {
		t->have_gen_unknown = true;
		return;
	}
	if (!t->have_gen_known || gen < t->min_have_gen)
		t->min_have_gen = gen;
	t->have_gen_known = true;
}

/*
 * A "have": -1 when we lack it; 1 when it is news (it joins the haves
 * of the pack), 0 when an earlier have implied it.
 */
static int got_have(struct session *s, struct fetch_req *r, const struct object_id *oid,
		    struct gp_error *err)
{
	struct object_info oi;
	bool knew = false;
	if (odb_read_object_info(s->odb, oid, &oi, 0, err)) {
		gp_error_clear(err);
		return -1;
	}
	if (oi.type == OBJ_COMMIT) {
		uint32_t i = neg_lookup(&s->neg, oid, true);
		struct neg_commit *c;
		if (neg_parse(s, i, err))
			return -2;
		c = &s->neg.items[i];
		if (c->flags & THEY_HAVE)
			knew = true;
		c->flags |= THEY_HAVE;
		if (!r->oldest_have || c->date < r->oldest_have)
			r->oldest_have = c->date;
		note_have_generation(s, c->generation);
		for (uint32_t p = 0; p < c->nr_parents; p++) {
			uint32_t pi = s->neg.items[i].parents[p];
			s->neg.items[pi].flags |= THEY_HAVE;
			note_have_generation(s, neg_generation(s, pi));
		}
	} else {
		knew = !oidset_insert(&r->have_set, oid);
	}
	if (knew)
		return 0;
	ALLOC_GROW(r->haves, r->nr_haves + 1, r->alloc_haves);
	r->haves[r->nr_haves++] = *oid;
	return 1;
}

/*
 * Whether want (a commit's index) reaches a commit the client has,
 * looking no further back than the oldest have. Iterative; a want
 * found so is marked COMMON_KNOWN.
 */
static int reaches_have(struct session *s, struct fetch_req *r, uint32_t want, bool *found,
			struct gp_error *err)
{
	uint32_t *stack = NULL;
	size_t nr = 0, alloc = 0;
	uint32_t visit = ++s->neg.visit;
	int ret = 0;

	*found = false;
	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr++] = want;
	s->neg.items[want].visit = visit;
	while (nr && !*found) {
		uint32_t i = stack[--nr];
		struct neg_commit *c;
		if ((ret = neg_parse(s, i, err)))
			break;
		c = &s->neg.items[i];
		if (c->flags & (THEY_HAVE | COMMON_KNOWN)) {
			*found = true;
			break;
		}
		if (c->not_commit || c->date < r->oldest_have)
			continue;
		/*
		 * A commit reaches only commits of lower generation: below
		 * the lowest have it reaches none (the cut git's
		 * can_all_from_reach() makes). Same answer, fewer commits.
		 */
		if (s->neg.have_gen_known && !s->neg.have_gen_unknown && c->generation &&
		    c->generation < s->neg.min_have_gen)
			continue;
		for (uint32_t p = 0; p < c->nr_parents; p++) {
			uint32_t pi = s->neg.items[i].parents[p];
			if (s->neg.items[pi].visit == visit)
				continue;
			s->neg.items[pi].visit = visit;
			ALLOC_GROW(stack, nr + 1, alloc);
			stack[nr++] = pi;
		}
	}
	if (*found)
		s->neg.items[want].flags |= COMMON_KNOWN;
	free(stack);
	return ret;
}

/* git's ok_to_give_up(): every wanted commit reaches something the client has. */
static int ok_to_give_up(struct session *s, struct fetch_req *r, bool *ok, struct gp_error *err)
{
	*ok = false;
	if (!r->nr_wants)
		return 0;
	for (size_t i = 0; i < r->nr_wants; i++) {
		struct object_id target;
		enum object_type type;
		uint32_t ci;
		bool found;
		int ret;
		if (peel_oid(s, &r->wants[i], &target, &type) || type != OBJ_COMMIT)
			continue;
		ci = neg_lookup(&s->neg, &target, true);
		if (s->neg.items[ci].flags & COMMON_KNOWN)
			continue;
		if ((ret = reaches_have(s, r, ci, &found, err)))
			return ret;
		if (!found)
			return 0;
	}
	*ok = true;
	return 0;
}

/*
 * v0/v1: "have" lines in rounds ended by flushes, until "done" (or
 * no-done and ready). Returns 1 when a stateless client ended its round
 * (it comes back with a new request), 0 when the pack is due.
 */
static int negotiate_v0(struct session *s, struct fetch_req *r, struct gp_error *err)
{
	char last_hex[GP_MAX_HEXSZ + 1] = "";
	bool got_common = false, got_other = false, sent_ready = false, ok;
	bool first = true;
	int ret;

	for (;;) {
		const char *arg;
		struct object_id oid;
		ret = read_line(s, err);
		if (ret < 0)
			return ret;
		/*
		 * A stateless client may stop right after its wants (it
		 * comes back with its haves): nothing more to say. Later,
		 * as in git, an end of input is the client hanging up.
		 */
		if (ret == PKT_EOF && s->opts->stateless_rpc && first)
			return 1;
		first = false;
		if (ret == PKT_EOF)
			return gp_error_set(err, GP_EPROTO,
					    "the remote end hung up unexpectedly");
		if (ret != PKT_DATA) {
			if (++s->rounds > UPLOAD_PACK_MAX_ROUNDS)
				return fail_with_err_packet(s, err, GP_EPROTO,
							    "upload-pack: too many negotiation rounds",
							    "git upload-pack: too many negotiation rounds");
			if (r->multi_ack == MULTI_ACK_DETAILED && got_common && !got_other) {
				if ((ret = ok_to_give_up(s, r, &ok, err)))
					return ret;
				if (ok) {
					sent_ready = true;
					if ((ret = pkt_writef(s->out, err, "ACK %s ready\n", last_hex)))
						return ret;
				}
			}
			if (!r->nr_haves || r->multi_ack)
				if ((ret = pkt_writef(s->out, err, "NAK\n")))
					return ret;
			if (r->no_done && sent_ready)
				return pkt_writef(s->out, err, "ACK %s\n", last_hex);
			if (s->opts->stateless_rpc)
				return 1;
			got_common = got_other = false;
			continue;
		}
		if (skip_prefix(s->in->line, "have ", &arg)) {
			if (parse_hex_prefix(s, arg, &oid))
				return gp_error_set(err, GP_EPROTO,
						    "git upload-pack: expected SHA1 object, got '%s'", arg);
			if (++r->haves_seen > UPLOAD_PACK_MAX_HAVES)
				return fail_with_err_packet(s, err, GP_EPROTO,
							    "upload-pack: too many haves",
							    "git upload-pack: too many haves");
			ret = got_have(s, r, &oid, err);
			if (ret == -2)
				return GP_ECORRUPT;
			if (ret < 0) {
				got_other = true;
				if (r->multi_ack) {
					if ((ret = ok_to_give_up(s, r, &ok, err)))
						return ret;
					if (ok) {
						const char *kind = "continue";
						if (r->multi_ack == MULTI_ACK_DETAILED) {
							sent_ready = true;
							kind = "ready";
						}
						if ((ret = pkt_writef(s->out, err, "ACK %s %s\n", arg, kind)))
							return ret;
					}
				}
				continue;
			}
			got_common = true;
			oid_to_hex_r(last_hex, &oid);
			if (r->multi_ack == MULTI_ACK_DETAILED)
				ret = pkt_writef(s->out, err, "ACK %s common\n", last_hex);
			else if (r->multi_ack)
				ret = pkt_writef(s->out, err, "ACK %s continue\n", last_hex);
			else if (r->nr_haves == 1)
				ret = pkt_writef(s->out, err, "ACK %s\n", last_hex);
			else
				ret = 0;
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(s->in->line, "done")) {
			if (r->nr_haves) {
				if (r->multi_ack)
					return pkt_writef(s->out, err, "ACK %s\n", last_hex);
				return 0;
			}
			return pkt_writef(s->out, err, "NAK\n");
		}
		return gp_error_set(err, GP_EPROTO, "git upload-pack: expected SHA1 list, got '%s'",
				    s->in->line);
	}
}

/* ---- shallow ---------------------------------------------------------------- */

static bool wants_shallow_info(const struct session *s, const struct fetch_req *r, bool v2)
{
	if (r->depth || r->deepen_rev_list || oidset_size(&r->client_shallow))
		return true;
	return v2 && s->repo_is_shallow;
}

/*
 * What the pack's walk must not cross: every shallow commit the client
 * keeps and the serving repository's own boundary. Idempotent.
 */
static void walk_shallow_base(struct session *s, struct fetch_req *r)
{
	size_t pos = 0;
	const struct object_id *oid;
	for (size_t i = 0; i < r->nr_shallow_order; i++)
		oidset_insert(&r->walk_shallow, &r->shallow_order[i]);
	while (s->repo_is_shallow && (oid = oidset_next(&s->repo_shallow, &pos)))
		oidset_insert(&r->walk_shallow, oid);
}

/*
 * Work out the new shallow boundary (when a depth was asked, or for v2
 * from a shallow server) and send it as "shallow"/"unshallow" lines;
 * the new boundary joins what the walk does not cross, and the parents
 * of unshallowed commits become wanted (the commits themselves the
 * client has).
 */
static int update_shallow(struct session *s, struct fetch_req *r, bool v2, struct gp_error *err)
{
	struct oid_array shallow = OID_ARRAY_INIT, unshallow = OID_ARRAY_INIT;
	bool compute = r->depth || r->deepen_rev_list || (v2 && s->repo_is_shallow);
	int ret = 0;

	walk_shallow_base(s, r);
	if (!compute)
		return 0;
	oid_array_init(&shallow, s->repo->hash_algo);
	oid_array_init(&unshallow, s->repo->hash_algo);
	{
		struct shallow_request req = {
			.wants = r->wants, .nr_wants = r->nr_wants,
			.client_shallow = r->shallow_order, .nr_client_shallow = r->nr_shallow_order,
			.repo_shallow = s->repo_is_shallow ? &s->repo_shallow : NULL,
			.depth = r->depth,
			.relative = r->deepen_relative,
			.has_since = r->has_since, .since = (uint64_t)r->deepen_since,
			.not_tips = r->deepen_not, .nr_not = r->nr_deepen_not,
		};
		ret = shallow_compute(s->odb, s->repo->hash_algo, &req, &shallow, &unshallow, err);
	}
	if (ret) {
		struct gp_error ignored = GP_ERROR_INIT;
		pkt_write_error(s->out, &ignored, "upload-pack: %s", gp_error_msg(err));
		gp_error_clear(&ignored);
		goto out;
	}
	for (size_t i = 0; !ret && i < shallow.nr; i++) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		oid_array_get(&shallow, i, &oid);
		oidset_insert(&r->walk_shallow, &oid);
		ret = send_line(s, r, err, "shallow %s\n", oid_to_hex_r(hex, &oid));
	}
	for (size_t i = 0; !ret && i < unshallow.nr; i++) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		uint32_t ci;
		oid_array_get(&unshallow, i, &oid);
		ret = send_line(s, r, err, "unshallow %s\n", oid_to_hex_r(hex, &oid));
		if (ret)
			break;
		/* its parents are sent now; it stays the client's, parentless in the walk */
		ci = neg_lookup(&s->neg, &oid, true);
		s->neg.items[ci].parsed = false;
		free(s->neg.items[ci].parents);
		s->neg.items[ci].parents = NULL;
		s->neg.items[ci].nr_parents = 0;
		if ((ret = neg_parse_full(s, ci, err)))
			break;
		for (uint32_t p = 0; p < s->neg.items[ci].nr_parents; p++) {
			struct object_id parent = s->neg.items[s->neg.items[ci].parents[p]].oid;
			add_want(r, &parent);
		}
		ALLOC_GROW(r->haves, r->nr_haves + 1, r->alloc_haves);
		r->haves[r->nr_haves++] = oid;
	}
out:
	oid_array_release(&shallow);
	oid_array_release(&unshallow);
	return ret;
}

/* ---- the pack ----------------------------------------------------------------- */

static int out_write_locked(struct session *s, int band, const void *buf, size_t len)
{
	int ret;
	if (s->out_failed)
		return -1;
	if (s->out_band_max)
		ret = pkt_write_band(s->out, s->out_band_max, band, buf, len, &s->out_err);
	else if (band == PKT_BAND_DATA)
		ret = s->out->write(s->out, buf, len, &s->out_err);
	else
		ret = write_in_full(2, buf, len) < 0 ? -1 : 0;
	if (ret)
		s->out_failed = true;
	s->last_write_ns = now_ns();
	return ret;
}

static int pack_out(void *data, const void *buf, size_t len)
{
	struct session *s = data;
	int ret;
	pthread_mutex_lock(&s->out_lock);
	ret = out_write_locked(s, PKT_BAND_DATA, buf, len);
	pthread_mutex_unlock(&s->out_lock);
	return ret;
}

static void progress_out(void *data, const char *buf, size_t len)
{
	struct session *s = data;
	pthread_mutex_lock(&s->out_lock);
	/* a meter is for now: it does not wait in the buffer */
	if (!out_write_locked(s, PKT_BAND_PROGRESS, buf, len) &&
	    pkt_sink_flush(s->out, &s->out_err))
		s->out_failed = true;
	pthread_mutex_unlock(&s->out_lock);
}

/* Keep an idle side-band connection alive while the pack is counted. */
struct keepalive {
	struct session *s;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, started;
	int band;
};

static void *keepalive_main(void *data)
{
	struct keepalive *ka = data;
	struct session *s = ka->s;
	uint64_t period = (uint64_t)s->cfg.keepalive * 1000000000ull;
	pthread_mutex_lock(&ka->lock);
	while (!ka->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&ka->cond, &ka->lock, &until);
		if (ka->stop)
			break;
		pthread_mutex_lock(&s->out_lock);
		if (now_ns() - s->last_write_ns >= period && !s->out_failed) {
			/* an empty packet on a band: the client ignores it, the proxies see traffic */
			char pkt[5] = { '0', '0', '0', '5', (char)ka->band };
			if (s->out->write(s->out, pkt, sizeof(pkt), &s->out_err) ||
			    pkt_sink_flush(s->out, &s->out_err))
				s->out_failed = true;
			s->last_write_ns = now_ns();
		}
		pthread_mutex_unlock(&s->out_lock);
	}
	pthread_mutex_unlock(&ka->lock);
	return NULL;
}

static void keepalive_start(struct keepalive *ka, struct session *s, int band)
{
	memset(ka, 0, sizeof(*ka));
	ka->s = s;
	ka->band = band;
	if (s->cfg.keepalive <= 0 || !s->out_band_max)
		return;
	pthread_mutex_init(&ka->lock, NULL);
	pthread_cond_init(&ka->cond, NULL);
	ka->started = !pthread_create(&ka->thread, NULL, keepalive_main, ka);
	if (!ka->started) {
		pthread_mutex_destroy(&ka->lock);
		pthread_cond_destroy(&ka->cond);
	}
}

static void keepalive_stop(struct keepalive *ka)
{
	if (!ka->started)
		return;
	pthread_mutex_lock(&ka->lock);
	ka->stop = true;
	pthread_cond_signal(&ka->cond);
	pthread_mutex_unlock(&ka->lock);
	pthread_join(ka->thread, NULL);
	pthread_mutex_destroy(&ka->lock);
	pthread_cond_destroy(&ka->cond);
}

/* What git's trace2 says of each fetch (category upload-pack, key fetch-info). */
static void trace_fetch_info(const struct fetch_req *r)
{
	struct strbuf sb = STRBUF_INIT;
	if (!trace2_enabled())
		return;
	strbuf_addf(&sb, "{\"haves\":%zu,\"wants\":%zu,\"want-refs\":%zu,\"depth\":%d,"
		    "\"shallows\":%zu,\"deepen-since\":%s,\"deepen-not\":%zu,"
		    "\"deepen-relative\":%s",
		    r->nr_haves, r->nr_wants - r->nr_wanted_refs, r->nr_wanted_refs, r->depth,
		    oidset_size(&r->client_shallow), r->deepen_since ? "true" : "false",
		    r->nr_deepen_not, r->deepen_relative ? "true" : "false");
	if (r->filter.kind != OBJECT_FILTER_NONE)
		strbuf_addf(&sb, ",\"filter\":\"%s\"", object_filter_kind_name(r->filter.kind));
	strbuf_addch(&sb, '}');
	trace2_data_json("upload-pack", "fetch-info", sb.buf);
	strbuf_release(&sb);
}

static int hook_output(void *data, int stream, const void *buf, size_t len)
{
	struct session *s = data;
	int ret;
	pthread_mutex_lock(&s->out_lock);
	ret = out_write_locked(s, stream == 1 ? PKT_BAND_DATA : PKT_BAND_PROGRESS, buf, len);
	pthread_mutex_unlock(&s->out_lock);
	return ret;
}

/*
 * uploadpack.packObjectsHook: the operator's command makes the pack,
 * run as git runs it ("<hook> git pack-objects <args>", in the git
 * directory, the request on its standard input), started with
 * posix_spawn.
 */
/*
 * The pack-objects command line git would run for r: the hook gets it,
 * and GIT_TRACE shows it for the in-process pack ("trace: in-process:
 * git pack-objects ..."), so that what the pack was made with stays
 * visible. args holds 16; filter keeps the --filter= string.
 */
static void pack_objects_args(const struct fetch_req *r, bool progress, const char **args,
			      struct strbuf *filter)
{
	size_t n = 0;
	args[n++] = "git";
	args[n++] = "pack-objects";
	args[n++] = "--revs";
	if (r->thin)
		args[n++] = "--thin";
	args[n++] = "--stdout";
	if (oidset_size(&r->walk_shallow))
		args[n++] = "--shallow";
	if (progress)
		args[n++] = "--progress";
	if (r->ofs_delta)
		args[n++] = "--delta-base-offset";
	if (r->include_tag)
		args[n++] = "--include-tag";
	if (r->filter.kind != OBJECT_FILTER_NONE) {
		strbuf_addf(filter, "--filter=%s", object_filter_spec(&r->filter));
		args[n++] = filter->buf;
	}
	args[n] = NULL;
}

static void trace_pack_objects(const struct fetch_req *r, bool progress)
{
	const char *args[16];
	struct strbuf filter = STRBUF_INIT, line = STRBUF_INIT;
	if (!trace_enabled())
		return;
	pack_objects_args(r, progress, args, &filter);
	strbuf_addstr(&line, "trace: in-process:");
	for (size_t i = 0; args[i]; i++)
		strbuf_addf(&line, " %s", args[i]);
	trace_printf("%s", line.buf);
	strbuf_release(&line);
	strbuf_release(&filter);
}

static int pack_with_hook(struct session *s, struct fetch_req *r, bool progress,
			  struct gp_error *err)
{
	const char *args[16];
	struct strbuf in = STRBUF_INIT, filter = STRBUF_INIT;
	char hex[GP_MAX_HEXSZ + 1];
	const struct object_id *oid;
	size_t pos = 0;
	int code, ret;

	pack_objects_args(r, progress, args, &filter);
	while ((oid = oidset_next(&r->walk_shallow, &pos)))
		strbuf_addf(&in, "--shallow %s\n", oid_to_hex_r(hex, oid));
	for (size_t i = 0; i < r->nr_wants; i++)
		strbuf_addf(&in, "%s\n", oid_to_hex_r(hex, &r->wants[i]));
	strbuf_addstr(&in, "--not\n");
	for (size_t i = 0; i < r->nr_haves; i++)
		strbuf_addf(&in, "%s\n", oid_to_hex_r(hex, &r->haves[i]));
	strbuf_addch(&in, '\n');
	ret = run_shell_stream(s->repo->gitdir, s->cfg.pack_objects_hook, args, in.buf, in.len,
			       RUN_STREAM_STDERR, hook_output, s, &code, err);
	if (!ret && code)
		ret = gp_error_set(err, GP_EIO, "git upload-pack: git-pack-objects died with error.");
	strbuf_release(&in);
	strbuf_release(&filter);
	return ret;
}

/* What one pack stream is made of: the request, resolved for pack_for_fetch_write(). */
struct pack_job {
	struct session *s;
	struct fetch_req *r;
	struct pack_for_fetch req;
	bool v2, progress;
};

/*
 * Make the pack stream into out (the session's, or the pack hook's tee):
 * pack data and progress on their bands, then the closing flush.
 */
static int generate_stream(void *data, struct pkt_sink *out, struct gp_error *err)
{
	struct pack_job *job = data;
	struct session *s = job->s;
	struct fetch_req *r = job->r;
	struct pkt_sink *session_out = s->out;
	struct pack_objects_stats stats;
	struct keepalive ka;
	int ret;

	s->out = out;
	s->out_band_max = job->v2 ? LARGE_PACKET_MAX : r->sideband_max;
	s->out_failed = false;
	s->last_write_ns = now_ns();
	if (job->progress)
		progress_set_output(progress_out, s);
	/* v0 keeps alive with empty pack data, v2 with empty progress */
	keepalive_start(&ka, s, job->v2 ? PKT_BAND_PROGRESS : PKT_BAND_DATA);
	trace2_region_enter("upload-pack", "pack-objects");
	if (s->cfg.pack_objects_hook) {
		ret = pack_with_hook(s, r, job->progress, err);
	} else {
		trace_pack_objects(r, job->progress);
		ret = pack_for_fetch_write(s->repo, s->odb, &job->req, pack_out, s, &stats, err);
	}
	trace2_region_leave("upload-pack", "pack-objects");
	keepalive_stop(&ka);
	if (!ret && job->progress && !s->cfg.pack_objects_hook) {
		char line[200];
		int n = snprintf(line, sizeof(line),
				 "Total %" PRIu32 " (delta %" PRIu32 "), reused %" PRIu32
				 " (delta %" PRIu32 "), pack-reused %" PRIu32 " (from %" PRIu32 ")\n",
				 stats.total, stats.deltas, stats.reused, stats.reused_deltas,
				 stats.pack_reused, stats.pack_reused_packs);
		progress_output(line, (size_t)n);
	}
	progress_set_output(NULL, NULL);
	if (ret && s->out_failed) {
		/* the connection is gone: the out error says more than the pack's */
		gp_error_clear(err);
		ret = gp_error_set(err, GP_EIO, "%s", gp_error_msg(&s->out_err));
	} else if (ret) {
		/*
		 * Git's words, so that what a client and the server's log
		 * show is what they know: the cause, then that the pack was
		 * not made and why the session stops.
		 */
		static const char abort_msg[] =
			"aborting due to possible repository corruption on the remote side.";
		char *cause = xstrdup(gp_error_msg(err));
		if (s->out_band_max) {
			pthread_mutex_lock(&s->out_lock);
			out_write_locked(s, PKT_BAND_ERROR, abort_msg, sizeof(abort_msg) - 1);
			pkt_sink_flush(s->out, NULL);
			pthread_mutex_unlock(&s->out_lock);
		}
		gp_error_clear(err);
		gp_error_set(err, ret, "%s\nerror: git upload-pack: git-pack-objects died with error.\n"
			     "fatal: git upload-pack: %s", cause, abort_msg);
		free(cause);
	} else if (job->v2 || s->out_band_max) {
		ret = pkt_flush(s->out, err);
	}
	s->out = session_out;
	return ret;
}

static int cmp_oid_qsort(const void *a, const void *b)
{
	return memcmp(((const struct object_id *)a)->hash, ((const struct object_id *)b)->hash,
		      GP_MAX_RAWSZ);
}

static void key_add_oids(struct strbuf *key, const char *what, struct object_id *oids, size_t nr)
{
	char hex[GP_MAX_HEXSZ + 1];
	qsort(oids, nr, sizeof(*oids), cmp_oid_qsort);
	for (size_t i = 0; i < nr; i++)
		if (!i || !oideq(&oids[i], &oids[i - 1]))
			strbuf_addf(key, "%s %s\n", what, oid_to_hex_r(hex, &oids[i]));
}

/* The pack hook's key: what decides the stream's bytes (upload-pack.h). */
static void pack_stream_key(const struct pack_job *job, struct strbuf *key)
{
	const struct fetch_req *r = job->r;
	const struct pack_objects_opts *po = &job->req.opts;
	struct object_id *oids;
	const struct object_id *oid;
	size_t pos = 0, n = 0;

	strbuf_addf(key, "gitpack pack stream 1\nprotocol %d\nband %zu\nprogress %d\n",
		    job->v2 ? 2 : 0, job->v2 ? (size_t)LARGE_PACKET_MAX : r->sideband_max,
		    job->progress);
	strbuf_addf(key, "thin %d\nofs-delta %d\ninclude-tag %d\nallow-missing %d\n",
		    r->thin, r->ofs_delta, r->include_tag, job->req.allow_missing);
	if (job->req.filter)
		strbuf_addf(key, "filter %s\n", object_filter_spec(job->req.filter));
	strbuf_addf(key, "pack window=%d depth=%d compression=%d reuse=%d/%d/%d "
		    "bitmaps=%d sparse=%d big=%" PRIu64 "\n",
		    po->window, po->depth, po->compression, (int)job->req.reuse, po->reuse_delta,
		    po->reuse_object, job->req.use_bitmaps, job->req.sparse,
		    po->big_file_threshold);
	/* bounded by UPLOAD_PACK_MAX_*: no overflow */
	oids = xcalloc(r->nr_wants + r->nr_haves + oidset_size(&r->walk_shallow) + 1,
		       sizeof(*oids));
	/* a clone has no haves: r->haves is NULL, which memcpy may not be given */
	if (r->nr_wants)
		memcpy(oids, r->wants, r->nr_wants * sizeof(*oids));
	key_add_oids(key, "want", oids, r->nr_wants);
	if (r->nr_haves)
		memcpy(oids, r->haves, r->nr_haves * sizeof(*oids));
	key_add_oids(key, "have", oids, r->nr_haves);
	while ((oid = oidset_next(&r->walk_shallow, &pos)))
		oids[n++] = *oid;
	key_add_oids(key, "shallow", oids, n);
	free(oids);
}

static int send_pack(struct session *s, struct fetch_req *r, bool v2, struct gp_error *err)
{
	struct pack_job job = { .s = s, .r = r, .v2 = v2 };
	int ret;

	job.progress = !r->no_progress && (r->sideband_max || v2);
	trace_fetch_info(r);
	if ((ret = pack_for_fetch_config(s->repo, &job.req, err)))
		return ret;
	job.req.wants = r->wants;
	job.req.nr_wants = r->nr_wants;
	job.req.haves = r->haves;
	job.req.nr_haves = r->nr_haves;
	job.req.shallow = &r->walk_shallow;
	job.req.graph = s->graph;
	job.req.thin = r->thin;
	job.req.include_tag = r->include_tag;
	job.req.ofs_delta = r->ofs_delta;
	job.req.progress = job.progress;
	job.req.filter = r->filter.kind != OBJECT_FILTER_NONE ? &r->filter : NULL;
	job.req.allow_missing = s->promisor_accepted;

	if (s->opts->pack_fn && !s->cfg.pack_objects_hook) {
		struct strbuf key = STRBUF_INIT;
		pack_stream_key(&job, &key);
		ret = s->opts->pack_fn(s->opts->pack_data, key.buf, key.len, generate_stream, &job,
				       s->out, err);
		strbuf_release(&key);
		if (ret == GP_EBUSY) {
			/* where the pack would start, the client reads why there is none */
			size_t band = v2 ? LARGE_PACKET_MAX : r->sideband_max;
			const char *msg = gp_error_msg(err);
			if (band)
				pkt_write_band(s->out, band, PKT_BAND_ERROR, msg, strlen(msg), NULL);
			else
				pkt_write_error(s->out, NULL, "%s", msg);
			pkt_sink_flush(s->out, NULL);
		}
		return ret;
	}
	return generate_stream(&job, s->out, err);
}

static void fetch_req_release(struct fetch_req *r)
{
	free(r->wants);
	oidset_release(&r->wanted);
	free(r->haves);
	free(r->common);
	oidset_release(&r->acked);
	oidset_release(&r->have_set);
	oidset_release(&r->client_shallow);
	free(r->shallow_order);
	free(r->deepen_not);
	object_filter_release(&r->filter);
	for (size_t i = 0; i < r->nr_wanted_refs; i++)
		free(r->wanted_refs[i]);
	free(r->wanted_refs);
	oidset_release(&r->walk_shallow);
	memset(r, 0, sizeof(*r));
}

/* ---- protocol v0 / v1 ------------------------------------------------------------ */

static void parse_v0_features(struct fetch_req *r, const char *features)
{
	const char *p = features;
	while (*p) {
		const char *end = strchrnul(p, ' ');
		size_t len = (size_t)(end - p);
#define FEATURE(name) (len == strlen(name) && !strncmp(p, name, len))
		if (FEATURE("multi_ack_detailed"))
			r->multi_ack = MULTI_ACK_DETAILED;
		else if (FEATURE("multi_ack") && r->multi_ack != MULTI_ACK_DETAILED)
			r->multi_ack = MULTI_ACK;
		else if (FEATURE("no-done"))
			r->no_done = true;
		else if (FEATURE("thin-pack"))
			r->thin = true;
		else if (FEATURE("ofs-delta"))
			r->ofs_delta = true;
		else if (FEATURE("side-band-64k"))
			r->sideband_max = SIDEBAND_64K_MAX;
		else if (FEATURE("side-band") && r->sideband_max != SIDEBAND_64K_MAX)
			r->sideband_max = SIDEBAND_MAX;
		else if (FEATURE("no-progress"))
			r->no_progress = true;
		else if (FEATURE("include-tag"))
			r->include_tag = true;
		else if (FEATURE("deepen-relative"))
			r->deepen_relative = true;
		else if (FEATURE("filter"))
			r->filter_requested = true;
		else if (len > 11 && !strncmp(p, "session-id=", 11)) {
			char *sid = xstrndup(p + 11, len - 11);
			trace2_data_string("transfer", "client-sid", sid);
			free(sid);
		}
#undef FEATURE
		p = *end ? end + 1 : end;
	}
}

/* The wants and shallow lines up to the first flush. 1: nothing wanted. */
static int receive_needs(struct session *s, struct fetch_req *r, struct gp_error *err)
{
	for (;;) {
		const char *arg;
		struct object_id oid;
		int ret = read_line(s, err);
		if (ret < 0)
			return ret;
		if (ret == PKT_EOF)
			return gp_error_set(err, GP_EPROTO, "the remote end hung up unexpectedly");
		if (ret != PKT_DATA)
			break;
		if (skip_prefix(s->in->line, "ERR ", &arg))
			return gp_error_set(err, GP_EPROTO, "remote error: %s", arg);
		/* a client that wants nothing (a no-op fetch) costs no store */
		if ((ret = open_odb(s, err)))
			return ret;
		ret = parse_deepen_line(s, r, s->in->line, err);
		if (ret < 0)
			return ret;
		if (ret)
			continue;
		if (skip_prefix(s->in->line, "filter ", &arg)) {
			if (!r->filter_requested || !s->cfg.allow_filter)
				return gp_error_set(err, GP_EPROTO,
						    "git upload-pack: filtering capability not negotiated");
			if ((ret = parse_filter_line(s, r, arg, err)))
				return ret;
			continue;
		}
		if (!skip_prefix(s->in->line, "want ", &arg) || parse_hex_prefix(s, arg, &oid))
			return gp_error_set(err, GP_EPROTO,
					    "git upload-pack: protocol error, expected to get object ID, not '%s'",
					    s->in->line);
		/* as git: what follows the id on any want line is capabilities */
		parse_v0_features(r, arg + gp_hash_algos[s->repo->hash_algo].hexsz);
		if (r->nr_wants >= UPLOAD_PACK_MAX_WANTS)
			return fail_with_err_packet(s, err, GP_EPROTO, "upload-pack: too many wants",
						    "git upload-pack: too many wants");
		if (!odb_has_object(s->odb, &oid))
			return not_our_ref(s, &oid, err);
		add_want(r, &oid);
	}
	if (!r->nr_wants)
		return 1;
	return check_wants_v0(s, r, err);
}

static int serve_v0(struct session *s, struct gp_error *err)
{
	struct fetch_req r = { 0 };
	int ret;

	if (!s->opts->stateless_rpc || s->opts->advertise_refs) {
		ret = advertise_refs_v0(s, err);
		if (ret || s->opts->advertise_refs)
			return ret;
	} else if ((ret = read_refs(s, err))) {
		/* stateless: the wants are checked against the refs as they are now */
		return ret;
	}
	ret = receive_needs(s, &r, err);
	if (ret == 1) {
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	/* v0 sends a shallow update (ended by a flush) only for a depth request */
	if ((ret = update_shallow(s, &r, false, err)))
		goto out;
	if ((r.depth || r.deepen_rev_list) && (ret = pkt_flush(s->out, err)))
		goto out;
	ret = negotiate_v0(s, &r, err);
	if (ret == 1) {
		ret = 0;
		goto out;
	}
	if (!ret)
		ret = send_pack(s, &r, false, err);
out:
	fetch_req_release(&r);
	return ret;
}

/* ---- protocol v2 ------------------------------------------------------------------- */

/* gitprotocol-v2 "promisor-remote": ';' ',' '%', spaces and non-ASCII %-encoded. */
static void add_pr_encoded(struct strbuf *sb, const char *value)
{
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p > 32 && *p < 127 && *p != ',' && *p != ';' && *p != '%')
			strbuf_addch(sb, (char)*p);
		else
			strbuf_addf(sb, "%%%02x", *p);
	}
}

static const char *remote_config(struct session *s, const char *name, size_t len,
				 const char *key)
{
	char *full = xstrfmt("remote.%.*s.%s", (int)len, name, key);
	const char *v = NULL;
	if (config_get_value(&s->repo->config, full, &v))
		v = NULL;
	free(full);
	return v;
}

/*
 * promisor.advertise: the promisor remotes this repository borrows
 * objects from (remote.<name>.promisor with a url), for a client that
 * may fetch from them directly; promisor.sendFields adds
 * partialCloneFilter and token.
 */
static void promisor_remote_info(struct session *s, struct strbuf *out)
{
	const char *fields = NULL;
	bool send_filter = false, send_token = false;
	if (!cfg_bool(s->repo, "promisor.advertise", false))
		return;
	if (!config_get_value(&s->repo->config, "promisor.sendfields", &fields) && fields) {
		const char *p = fields;
		while (*p) {
			size_t len = strcspn(p, ", ");
			if (len == 18 && !strncasecmp(p, "partialCloneFilter", len))
				send_filter = true;
			else if (len == 5 && !strncasecmp(p, "token", len))
				send_token = true;
			p += len;
			p += strspn(p, ", ");
		}
	}
	/* remotes in the order the configuration first names them */
	for (size_t i = 0; i < s->repo->config.nr; i++) {
		const struct config_entry *e = &s->repo->config.items[i];
		const char *name, *dot, *url, *v;
		char *n;
		size_t len;
		bool b, seen = false;
		if (strncmp(e->key, "remote.", 7))
			continue;
		name = e->key + 7;
		dot = strrchr(name, '.');
		if (!dot || dot == name)
			continue;
		len = (size_t)(dot - name);
		for (size_t j = 0; j < i && !seen; j++) {
			const char *k = s->repo->config.items[j].key;
			seen = !strncmp(k, "remote.", 7) && !strncmp(k + 7, name, len) &&
			       k[7 + len] == '.' && !strchr(k + 8 + len, '.');
		}
		if (seen)
			continue;
		/* a promisor remote: remote.<name>.promisor, or a partial clone filter */
		v = remote_config(s, name, len, "promisor");
		if (!(v && config_parse_bool(v, &b) && b) &&
		    !remote_config(s, name, len, "partialclonefilter"))
			continue;
		url = remote_config(s, name, len, "url");
		if (!url)
			continue;
		if (out->len)
			strbuf_addch(out, ';');
		strbuf_addstr(out, "name=");
		n = xstrndup(name, len);
		add_pr_encoded(out, n);
		free(n);
		strbuf_addstr(out, ",url=");
		add_pr_encoded(out, url);
		if (send_filter && (v = remote_config(s, name, len, "partialclonefilter"))) {
			strbuf_addstr(out, ",partialCloneFilter=");
			add_pr_encoded(out, v);
		}
		if (send_token && (v = remote_config(s, name, len, "token"))) {
			strbuf_addstr(out, ",token=");
			add_pr_encoded(out, v);
		}
	}
}

static int advertise_v2(struct session *s, struct gp_error *err)
{
	struct strbuf fetch = STRBUF_INIT;
	int ret;
	strbuf_addstr(&fetch, "fetch=shallow wait-for-done");
	if (s->cfg.allow_filter)
		strbuf_addstr(&fetch, " filter");
	if (s->cfg.allow_ref_in_want)
		strbuf_addstr(&fetch, " ref-in-want");
	if (s->cfg.allow_sideband_all)
		strbuf_addstr(&fetch, " sideband-all");
	ret = pkt_writef(s->out, err, "version 2\n");
	if (!ret)
		ret = pkt_writef(s->out, err, "agent=%s\n", s->agent);
	if (!ret)
		ret = pkt_writef(s->out, err, "%s\n",
				 s->cfg.unborn == UNBORN_ADVERTISE ? "ls-refs=unborn" : "ls-refs");
	if (!ret)
		ret = pkt_writef(s->out, err, "%s\n", fetch.buf);
	if (!ret)
		ret = pkt_writef(s->out, err, "server-option\n");
	if (!ret)
		ret = pkt_writef(s->out, err, "object-format=%s\n",
				 gp_hash_algos[s->repo->hash_algo].name);
	if (!ret && s->cfg.advertise_sid)
		ret = pkt_writef(s->out, err, "session-id=%s\n", s->session_id);
	if (!ret && s->cfg.advertise_object_info)
		ret = pkt_writef(s->out, err, "object-info=size\n");
	if (!ret && s->cfg.advertise_bundle_uris)
		ret = pkt_writef(s->out, err, "bundle-uri\n");
	if (!ret) {
		struct strbuf pr = STRBUF_INIT;
		promisor_remote_info(s, &pr);
		if (pr.len)
			ret = pkt_writef(s->out, err, "promisor-remote=%s\n", pr.buf);
		strbuf_release(&pr);
	}
	if (!ret)
		ret = pkt_flush(s->out, err);
	strbuf_release(&fetch);
	return ret;
}

static bool prefix_matches(char **prefixes, size_t nr, const char *name)
{
	if (!nr)
		return true;
	for (size_t i = 0; i < nr; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* line: scratch space the caller keeps across refs (one allocation for them all). */
static int ls_refs_one(struct session *s, const struct up_ref *r, bool symrefs, bool peel,
		       struct strbuf *line, struct gp_error *err)
{
	size_t hexsz = gp_hash_algos[s->repo->hash_algo].hexsz;
	strbuf_reset(line);
	strbuf_grow(line, 2 * hexsz + 32 + strlen(r->name));
	hash_to_hex_r(line->buf, r->oid.hash, gp_hash_algos[s->repo->hash_algo].rawsz);
	strbuf_setlen(line, hexsz);
	strbuf_addch(line, ' ');
	strbuf_addstr(line, r->name);
	if (symrefs && r->symref) {
		strbuf_addstr(line, " symref-target:");
		strbuf_addstr(line, r->symref);
	}
	if (peel && r->has_peeled) {
		strbuf_addstr(line, " peeled:");
		strbuf_grow(line, hexsz + 1);
		hash_to_hex_r(line->buf + line->len, r->peeled.hash,
			      gp_hash_algos[s->repo->hash_algo].rawsz);
		strbuf_setlen(line, line->len + hexsz);
	}
	strbuf_addch(line, '\n');
	return pkt_write(s->out, line->buf, line->len, err);
}

struct ls_refs_ctx {
	struct collect_ctx cc;
	bool symrefs, peel;
	struct strbuf *line;
	char **prefixes;
	size_t nr;
	struct gp_error *err;
};

/*
 * One ref of the walk (the id as hex, copied from packed-refs when it
 * came from there): the usual line is written straight from the view,
 * into a packet whose length goes in front; a symref, or a ref whose
 * peeled value must be read, goes through fill_ref().
 */
static int ls_refs_each(const struct ref_view *ref, void *data)
{
	struct ls_refs_ctx *lc = data;
	struct session *s = lc->cc.s;
	const char *name = ref->name + lc->cc.ns_len;
	size_t name_len = ref->name_len - lc->cc.ns_len;
	size_t hexsz = gp_hash_algos[s->repo->hash_algo].hexsz;
	struct strbuf *line = lc->line;
	const char *hex = ref->hex, *peeled_hex = ref->peeled_hex;
	char null_hex[GP_MAX_HEXSZ];
	int ret = 0;

	/* the refs of a namespace live under it; only those under refs/ are refs */
	if (lc->cc.ns_len && strncmp(name, "refs/", 5))
		return 0;
	if (!prefix_matches(lc->prefixes, lc->nr, name))
		return 0;
	if ((ref->flags & REF_ISSYMREF) ||
	    (lc->peel && !(ref->flags & (REF_KNOWS_PEELED | REF_ISBROKEN)))) {
		struct object_id oid, peeled;
		struct up_ref r;
		hex_to_oid(ref->hex, s->repo->hash_algo, &oid);
		if (peeled_hex)
			hex_to_oid(peeled_hex, s->repo->hash_algo, &peeled);
		fill_ref(&lc->cc, ref->name, &oid, peeled_hex ? &peeled : NULL, ref->flags,
			 lc->peel, &r);
		if (!r.hidden)
			ret = ls_refs_one(s, &r, lc->symrefs, lc->peel, line, lc->err);
		free(r.symref);
		return ret;
	}
	if (ref_is_hidden(&s->cfg, name, ref->name))
		return 0;
	/* a broken ref is advertised with the null id, as git does */
	if (ref->flags & REF_ISBROKEN) {
		memset(null_hex, '0', hexsz);
		hex = null_hex;
		peeled_hex = NULL;
	}
	strbuf_reset(line);
	strbuf_grow(line, PKT_HEADER_SIZE + 2 * hexsz + 16 + name_len);
	/* the packet length, filled in by pkt_write_framed() */
	strbuf_setlen(line, PKT_HEADER_SIZE);
	strbuf_add(line, hex, hexsz);
	strbuf_addch(line, ' ');
	strbuf_add(line, name, name_len);
	if (lc->peel && peeled_hex) {
		strbuf_add(line, " peeled:", 8);
		strbuf_add(line, peeled_hex, hexsz);
	}
	strbuf_addch(line, '\n');
	return pkt_write_framed(s->out, line->buf, line->len, lc->err);
}

static int cmp_prefix(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_ls_refs(struct session *s, bool no_args, struct gp_error *err)
{
	char **prefixes = NULL;
	size_t nr = 0, alloc = 0;
	struct strbuf line = STRBUF_INIT, ns_buf = STRBUF_INIT, full = STRBUF_INIT;
	struct ls_refs_ctx lc = { .cc = { .s = s } };
	bool symrefs = false, peel = false, unborn = false, too_many = false;
	int ret = PKT_FLUSH;

	/* no_args: the flush after the capabilities ended the request (git takes that) */
	while (!no_args) {
		const char *arg;
		ret = read_line(s, err);
		if (ret < 0)
			goto out;
		if (ret == PKT_EOF) {
			ret = gp_error_set(err, GP_EPROTO, "the remote end hung up unexpectedly");
			goto out;
		}
		if (ret != PKT_DATA)
			break;
		if (!strcmp(s->in->line, "symrefs"))
			symrefs = true;
		else if (!strcmp(s->in->line, "peel"))
			peel = true;
		else if (!strcmp(s->in->line, "unborn"))
			/* with lsrefs.unborn=ignore, taken and ignored as in git */
			unborn = s->cfg.unborn != UNBORN_IGNORE;
		else if (skip_prefix(s->in->line, "ref-prefix ", &arg)) {
			/* as git: at the limit, prefixes stop narrowing anything */
			if (too_many || nr + 1 >= UPLOAD_PACK_MAX_PREFIXES) {
				too_many = true;
				continue;
			}
			ALLOC_GROW(prefixes, nr + 1, alloc);
			prefixes[nr++] = xstrdup(arg);
		} else {
			ret = gp_error_set(err, GP_EPROTO, "unexpected line: '%s'", s->in->line);
			goto out;
		}
	}
	if (ret != PKT_FLUSH) {
		ret = gp_error_set(err, GP_EPROTO, "expected flush after ls-refs arguments");
		goto out;
	}
	if (too_many) {
		for (size_t i = 0; i < nr; i++)
			free(prefixes[i]);
		nr = 0;
	}
	/*
	 * Streamed: each ref goes out as it is read, and only the refs under
	 * the prefixes are read. HEAD first, as git sends it.
	 */
	lc.cc.ns = namespace_prefix(&ns_buf);
	lc.cc.ns_len = strlen(lc.cc.ns);
	read_head(s, &lc.cc, false);
	if (prefix_matches(prefixes, nr, "HEAD")) {
		if (s->refs.head.name && !s->refs.head.hidden) {
			if ((ret = ls_refs_one(s, &s->refs.head, symrefs, peel, &line, err)))
				goto out;
		} else if (unborn && s->refs.unborn_head && symrefs) {
			/* without symrefs git says nothing of an unborn HEAD */
			if ((ret = pkt_writef(s->out, err, "unborn HEAD symref-target:%s\n",
					      s->refs.unborn_head)))
				goto out;
		}
	}
	lc.symrefs = symrefs;
	lc.peel = peel;
	lc.line = &line;
	lc.prefixes = prefixes;
	lc.nr = nr;
	lc.err = err;
	/*
	 * Each prefix that no other covers, in order: the refs come out in
	 * the order of one walk over all of them (strings that start with a
	 * prefix sort together).
	 */
	if (nr > 1)
		qsort(prefixes, nr, sizeof(*prefixes), cmp_prefix);
	for (size_t i = 0, last = SIZE_MAX; i < (nr ? nr : 1); i++) {
		if (nr && last != SIZE_MAX && starts_with(prefixes[i], prefixes[last]))
			continue;
		last = i;
		strbuf_reset(&full);
		strbuf_addf(&full, "%s%s", lc.cc.ns, nr ? prefixes[i] : "");
		ret = refs_for_each_view(s->repo, full.buf, REFS_EACH_BROKEN, ls_refs_each, &lc, err);
		if (ret)
			goto out;
	}
	ret = pkt_flush(s->out, err);
out:
	strbuf_release(&ns_buf);
	strbuf_release(&full);
	strbuf_release(&line);
	for (size_t i = 0; i < nr; i++)
		free(prefixes[i]);
	free(prefixes);
	return ret;
}

static int want_ref(struct session *s, struct fetch_req *r, const char *refname,
		    struct gp_error *err)
{
	struct strbuf ns = STRBUF_INIT, full = STRBUF_INIT;
	struct object_id oid;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;

	/* as git 2.55: naming a ref twice is a mistake worth saying */
	for (size_t i = 0; i < r->nr_wanted_refs; i++) {
		const char *name = strchr(r->wanted_refs[i], ' ');
		if (name && !strcmp(name + 1, refname)) {
			char *msg = xstrfmt("duplicate want-ref %s", refname);
			ret = fail_with_err_packet(s, err, GP_EPROTO, msg, msg);
			free(msg);
			goto out;
		}
	}
	strbuf_addf(&full, "%s%s", namespace_prefix(&ns), refname);
	if (ref_is_hidden(&s->cfg, refname, full.buf) ||
	    !refname_is_valid(full.buf, REFNAME_ALLOW_ONELEVEL) ||
	    refs_resolve(s->repo, full.buf, &oid, NULL, err)) {
		char *msg = xstrfmt("unknown ref %s", refname);
		gp_error_clear(err);
		ret = fail_with_err_packet(s, err, GP_ENOTFOUND, msg, msg);
		free(msg);
		goto out;
	}
	ALLOC_GROW(r->wanted_refs, r->nr_wanted_refs + 1, r->alloc_wanted_refs);
	r->wanted_refs[r->nr_wanted_refs++] = xstrfmt("%s %s", oid_to_hex_r(hex, &oid), refname);
	add_want(r, &oid);
	ret = 0;
out:
	strbuf_release(&ns);
	strbuf_release(&full);
	return ret;
}

static int fetch_args_v2(struct session *s, struct fetch_req *r, struct gp_error *err)
{
	for (;;) {
		const char *arg;
		struct object_id oid;
		int ret = read_line(s, err);
		if (ret < 0)
			return ret;
		if (ret == PKT_FLUSH)
			return 0;
		if (ret == PKT_EOF)
			return gp_error_set(err, GP_EPROTO, "the remote end hung up unexpectedly");
		if (ret != PKT_DATA)
			return gp_error_set(err, GP_EPROTO, "expected flush after fetch arguments");
		const char *line = s->in->line;
		if (skip_prefix(line, "want ", &arg)) {
			if (parse_hex_prefix(s, arg, &oid))
				return gp_error_set(err, GP_EPROTO,
						    "git upload-pack: protocol error, expected to get oid, not '%s'",
						    line);
			if (r->nr_wants >= UPLOAD_PACK_MAX_WANTS)
				return fail_with_err_packet(s, err, GP_EPROTO,
							    "upload-pack: too many wants",
							    "git upload-pack: too many wants");
			if (!odb_has_object(s->odb, &oid))
				return not_our_ref(s, &oid, err);
			add_want(r, &oid);
		} else if (s->cfg.allow_ref_in_want && skip_prefix(line, "want-ref ", &arg)) {
			if (r->nr_wants >= UPLOAD_PACK_MAX_WANTS)
				return fail_with_err_packet(s, err, GP_EPROTO,
							    "upload-pack: too many wants",
							    "git upload-pack: too many wants");
			if ((ret = want_ref(s, r, arg, err)))
				return ret;
		} else if (skip_prefix(line, "have ", &arg)) {
			if (parse_hex_prefix(s, arg, &oid))
				return gp_error_set(err, GP_EPROTO,
						    "git upload-pack: expected SHA1 object, got '%s'", arg);
			if (++r->haves_seen > UPLOAD_PACK_MAX_HAVES)
				return fail_with_err_packet(s, err, GP_EPROTO,
							    "upload-pack: too many haves",
							    "git upload-pack: too many haves");
			/* acknowledged below, in the order given, when we have it */
			r->seen_haves = true;
			ret = got_have(s, r, &oid, err);
			if (ret == -2)
				return GP_ECORRUPT;
			/* each object acknowledged once, however often named */
			if (ret >= 0 && oidset_insert(&r->acked, &oid)) {
				ALLOC_GROW(r->common, r->nr_common + 1, r->alloc_common);
				r->common[r->nr_common++] = oid;
			}
		} else if (!strcmp(line, "thin-pack")) {
			r->thin = true;
		} else if (!strcmp(line, "ofs-delta")) {
			r->ofs_delta = true;
		} else if (!strcmp(line, "no-progress")) {
			r->no_progress = true;
		} else if (!strcmp(line, "include-tag")) {
			r->include_tag = true;
		} else if (!strcmp(line, "done")) {
			r->done = true;
		} else if (!strcmp(line, "deepen-relative")) {
			r->deepen_relative = true;
		} else if (s->cfg.allow_filter && skip_prefix(line, "filter ", &arg)) {
			if ((ret = parse_filter_line(s, r, arg, err)))
				return ret;
		} else if (s->cfg.allow_sideband_all && !strcmp(line, "sideband-all")) {
			r->sideband_all = true;
		} else if (s->cfg.packfile_uris && skip_prefix(line, "packfile-uris ", &arg)) {
			/*
			 * Accepted where git would offer URIs; none is ever
			 * sent (the section is optional), so everything comes
			 * in the pack.
			 */
		} else if (!strcmp(line, "wait-for-done")) {
			r->wait_for_done = true;
		} else if ((ret = parse_deepen_line(s, r, line, err)) != 0) {
			if (ret < 0)
				return ret;
		} else {
			return gp_error_set(err, GP_EPROTO, "unexpected line: '%s'", line);
		}
	}
}

static int cmd_fetch(struct session *s, bool no_args, struct gp_error *err)
{
	struct fetch_req r = { 0 };
	char hex[GP_MAX_HEXSZ + 1];
	bool ready = false;
	int ret;

	if ((ret = read_refs(s, err)) || (ret = open_odb(s, err)))
		return ret;
	/*
	 * Each fetch stands alone (the client sends again the haves it
	 * knows we share): what an earlier fetch of the session marked
	 * would keep those haves out of this one's pack.
	 */
	neg_free(&s->neg);
	if (!no_args && (ret = fetch_args_v2(s, &r, err)))
		goto out;
	r.sideband_max = LARGE_PACKET_MAX;
	/* no wants (and no wait-for-done): nothing was asked for, nothing is said (git) */
	if (!r.nr_wants && !r.wait_for_done)
		goto out;
	if (!r.done && r.seen_haves) {
		/* acknowledgments: what we have in common, and whether we are ready */
		if (!r.wait_for_done && (ret = ok_to_give_up(s, &r, &ready, err)))
			goto out;
		if ((ret = send_line(s, &r, err, "acknowledgments\n")))
			goto out;
		if (!r.nr_common && (ret = send_line(s, &r, err, "NAK\n")))
			goto out;
		for (size_t i = 0; i < r.nr_common; i++)
			if ((ret = send_line(s, &r, err, "ACK %s\n", oid_to_hex_r(hex, &r.common[i]))))
				goto out;
		if (ready && (ret = send_line(s, &r, err, "ready\n")))
			goto out;
		if (!ready)
			goto out_flush;
		if ((ret = pkt_delim(s->out, err)))
			goto out;
	}
	if (!r.nr_wants)
		goto out_flush;
	/* git's order: wanted-refs, then shallow-info */
	if (r.nr_wanted_refs) {
		if ((ret = send_line(s, &r, err, "wanted-refs\n")))
			goto out;
		for (size_t i = 0; i < r.nr_wanted_refs; i++)
			if ((ret = send_line(s, &r, err, "%s\n", r.wanted_refs[i])))
				goto out;
		if ((ret = pkt_delim(s->out, err)))
			goto out;
	}
	if (wants_shallow_info(s, &r, true)) {
		if ((ret = send_line(s, &r, err, "shallow-info\n")) ||
		    (ret = update_shallow(s, &r, true, err)) || (ret = pkt_delim(s->out, err)))
			goto out;
	} else {
		walk_shallow_base(s, &r);
	}
	if ((ret = send_line(s, &r, err, "packfile\n")))
		goto out;
	ret = send_pack(s, &r, true, err);
	goto out;
out_flush:
	ret = pkt_flush(s->out, err);
out:
	fetch_req_release(&r);
	return ret;
}

static int cmd_object_info(struct session *s, bool no_args, struct gp_error *err)
{
	struct object_id *oids = NULL;
	size_t nr = 0, alloc = 0;
	bool size = false;
	int ret = open_odb(s, err);
	if (ret)
		return ret;
	ret = PKT_FLUSH;
	while (!no_args) {
		const char *arg;
		struct object_id oid;
		ret = read_line(s, err);
		if (ret < 0)
			goto out;
		if (ret != PKT_DATA)
			break;
		if (!strcmp(s->in->line, "size")) {
			size = true;
		} else if (skip_prefix(s->in->line, "oid ", &arg) && !parse_hex_arg(s, arg, &oid)) {
			if (nr >= UPLOAD_PACK_MAX_WANTS) {
				ret = gp_error_set(err, GP_EPROTO, "object-info: too many oids");
				goto out;
			}
			ALLOC_GROW(oids, nr + 1, alloc);
			oids[nr++] = oid;
		} else {
			ret = gp_error_set(err, GP_EPROTO, "object-info: unexpected line: '%s'",
					   s->in->line);
			goto out;
		}
	}
	if (ret != PKT_FLUSH) {
		ret = gp_error_set(err, GP_EPROTO, "object-info: expected flush after arguments");
		goto out;
	}
	/* git's lines: no LF, no attribute line when no object is asked for */
	ret = 0;
	if (size && nr)
		ret = pkt_writef(s->out, err, "size");
	for (size_t i = 0; !ret && i < nr; i++) {
		struct object_info oi;
		char hex[GP_MAX_HEXSZ + 1];
		oid_to_hex_r(hex, &oids[i]);
		if (!size)
			ret = pkt_writef(s->out, err, "%s", hex);
		else if (odb_read_object_info(s->odb, &oids[i], &oi, 0, err)) {
			gp_error_clear(err);
			ret = pkt_writef(s->out, err, "%s ", hex);
		} else {
			ret = pkt_writef(s->out, err, "%s %" PRIu64, hex, oi.size);
		}
	}
	if (!ret)
		ret = pkt_flush(s->out, err);
out:
	free(oids);
	return ret;
}

/*
 * bundle-uri: the bundle.* configuration, one "<key>=<value>" a line (no
 * LF, as git sends them), for the client to fetch bundles from before it
 * fetches the rest. gitpack serves the list; the bundles are the
 * operator's.
 */
static int cmd_bundle_uri(struct session *s, struct gp_error *err)
{
	int ret;
	for (;;) {
		ret = read_line(s, err);
		if (ret < 0)
			return ret;
		if (ret != PKT_DATA)
			break;
		return gp_error_set(err, GP_EPROTO, "bundle-uri: unexpected argument: '%s'",
				    s->in->line);
	}
	if (ret != PKT_FLUSH)
		return gp_error_set(err, GP_EPROTO, "bundle-uri: expected flush after arguments");
	for (size_t i = 0; i < s->repo->config.nr; i++) {
		const struct config_entry *e = &s->repo->config.items[i];
		/* an empty value is no bundle setting: git does not send it */
		if (strncmp(e->key, "bundle.", 7) || !e->value || !*e->value)
			continue;
		if ((ret = pkt_writef(s->out, err, "%s=%s", e->key, e->value)))
			return ret;
	}
	return pkt_flush(s->out, err);
}

/* One v2 request: 1 when the client ended the session. */
static int process_request_v2(struct session *s, struct gp_error *err)
{
	char *command = NULL;
	bool seen = false, no_args = false, saw_format = false;
	int ret;

	for (;;) {
		const char *arg;
		ret = read_line(s, err);
		if (ret < 0)
			goto out;
		if (ret == PKT_EOF) {
			if (seen)
				ret = gp_error_set(err, GP_EPROTO, "the remote end hung up unexpectedly");
			else
				ret = 1;
			goto out;
		}
		if (ret == PKT_FLUSH) {
			if (!seen) {
				/* an empty request ends the session, as in git */
				ret = 1;
				goto out;
			}
			no_args = true;
			break;
		}
		if (ret == PKT_DELIM)
			break;
		if (ret == PKT_RESPONSE_END) {
			ret = gp_error_set(err, GP_EPROTO, "expected command or capability");
			goto out;
		}
		seen = true;
		if (skip_prefix(s->in->line, "command=", &arg)) {
			if (command) {
				ret = gp_error_set(err, GP_EPROTO,
						   "command '%s' requested after already requesting command '%s'",
						   arg, command);
				goto out;
			}
			if (strcmp(arg, "ls-refs") && strcmp(arg, "fetch") &&
			    (strcmp(arg, "object-info") || !s->cfg.advertise_object_info) &&
			    (strcmp(arg, "bundle-uri") || !s->cfg.advertise_bundle_uris)) {
				ret = gp_error_set(err, GP_EPROTO, "invalid command '%s'", arg);
				goto out;
			}
			command = xstrdup(arg);
		} else if (skip_prefix(s->in->line, "object-format=", &arg)) {
			saw_format = true;
			if (!hash_algo_by_name(arg)) {
				ret = gp_error_set(err, GP_EPROTO, "unknown object format '%s'", arg);
				goto out;
			}
			if (strcmp(arg, gp_hash_algos[s->repo->hash_algo].name)) {
				ret = gp_error_set(err, GP_EPROTO,
						   "mismatched object format: server %s; client %s",
						   gp_hash_algos[s->repo->hash_algo].name, arg);
				goto out;
			}
		} else if (skip_prefix(s->in->line, "promisor-remote=", &arg)) {
			/*
			 * The client takes objects we lack from our promisor
			 * remotes itself: a pack may then leave them out.
			 */
			s->promisor_accepted = true;
			trace2_data_string("transfer", "promisor-remote", arg);
		} else if (s->cfg.advertise_sid && skip_prefix(s->in->line, "session-id=", &arg)) {
			trace2_data_string("transfer", "client-sid", arg);
		} else if (skip_prefix(s->in->line, "agent=", &arg) ||
			   skip_prefix(s->in->line, "server-option=", &arg) ||
			   !strcmp(s->in->line, "agent") || !strcmp(s->in->line, "server-option")) {
			trace2_data_string("transfer", "client-capability", s->in->line);
		} else {
			ret = gp_error_set(err, GP_EPROTO, "unknown capability '%s'", s->in->line);
			goto out;
		}
	}
	if (!command) {
		ret = gp_error_set(err, GP_EPROTO, "no command requested");
		goto out;
	}
	/* a client that names no object format speaks SHA-1, as git assumes */
	if (!saw_format && s->repo->hash_algo != GP_HASH_SHA1) {
		ret = gp_error_set(err, GP_EPROTO, "mismatched object format: server %s; client %s",
				   gp_hash_algos[s->repo->hash_algo].name,
				   gp_hash_algos[GP_HASH_SHA1].name);
		goto out;
	}
	if (!strcmp(command, "ls-refs"))
		ret = cmd_ls_refs(s, no_args, err);
	else if (!strcmp(command, "fetch"))
		ret = cmd_fetch(s, no_args, err);
	else if (!strcmp(command, "bundle-uri"))
		ret = no_args ? pkt_flush(s->out, err) : cmd_bundle_uri(s, err);
	else
		ret = cmd_object_info(s, no_args, err);
out:
	free(command);
	return ret;
}

static int serve_v2(struct session *s, struct gp_error *err)
{
	int ret;
	if (!s->opts->stateless_rpc || s->opts->advertise_refs) {
		ret = advertise_v2(s, err);
		if (ret || s->opts->advertise_refs)
			return ret;
	}
	for (size_t n = 0;; n++) {
		if (n >= UPLOAD_PACK_MAX_COMMANDS)
			return gp_error_set(err, GP_EPROTO, "too many commands in one session");
		ret = process_request_v2(s, err);
		if (ret == 1)
			return 0;
		if (ret)
			return ret;
		if (s->opts->stateless_rpc)
			return 0;
		/* a fetch answered may have changed nothing, but the refs may move between commands */
		refs_release(&s->refs);
		s->refs_read = false;
	}
}

/* ---- entry points ---------------------------------------------------------------- */

int upload_pack_protocol_version(const char *git_protocol)
{
	int best = 0;
	const char *p = git_protocol;
	if (!p)
		return 0;
	while (*p) {
		const char *end = strchrnul(p, ':');
		if (end - p == 9 && !strncmp(p, "version=", 8) && p[8] >= '0' && p[8] <= '2' &&
		    p[8] - '0' > best)
			best = p[8] - '0';
		p = *end ? end + 1 : end;
	}
	return best;
}

int upload_pack(struct repository *repo, int in_fd, struct pkt_sink *out,
		const struct upload_pack_options *opts, struct gp_error *err)
{
	struct session *s = xcalloc(1, sizeof(*s));
	int ret;

	s->repo = repo;
	s->opts = opts;
	s->out = out;
	s->agent = getenv("GIT_USER_AGENT");
	if (!s->agent || !*s->agent)
		s->agent = opts->agent ? opts->agent : "gitpack";
	pthread_mutex_init(&s->out_lock, NULL);
	read_config(repo, &s->cfg, opts->hook_allowed);
	if (s->cfg.bad_key) {
		ret = gp_error_set(err, GP_EINVAL, "missing value for '%s'", s->cfg.bad_key);
		goto out;
	}
	if (s->cfg.bad_unborn) {
		ret = gp_error_set(err, GP_EINVAL, "invalid value for 'lsrefs.unborn': '%s'",
				   s->cfg.bad_unborn);
		goto out;
	}
	if (s->cfg.bad_number) {
		ret = gp_error_set(err, GP_EINVAL, "unable to parse '%s'", s->cfg.bad_number);
		goto out;
	}
	/* only advertised on request: the clock's calendar reads the time zone file */
	if (s->cfg.advertise_sid)
		session_id(s);
	ret = shallow_read(repo, &s->repo_shallow, err);
	if (ret)
		goto out;
	s->repo_is_shallow = oidset_size(&s->repo_shallow) > 0;
	s->in = xmalloc(sizeof(*s->in));
	if (opts->request)
		pkt_reader_init_mem(s->in, opts->request, opts->request_len, PKT_READ_CHOMP_LF);
	else
		pkt_reader_init_fd(s->in, in_fd, PKT_READ_CHOMP_LF);
	s->in->max_bytes = UPLOAD_PACK_MAX_REQUEST;
	s->in->timeout_ms = opts->timeout > 0 ? opts->timeout * 1000 : 0;
	trace2_data_intmax("transfer", "negotiated-version", opts->version);
	if (opts->version == 2) {
		ret = serve_v2(s, err);
	} else {
		ret = serve_v0(s, err);
	}
	if (!ret)
		ret = pkt_sink_flush(out, err);
out:
	refs_release(&s->refs);
	neg_free(&s->neg);
	oidset_release(&s->repo_shallow);
	free(s->cfg.hide);
	free(s->cfg.filter_kinds);
	gp_error_clear(&s->out_err);
	pthread_mutex_destroy(&s->out_lock);
	free(s->in);
	free(s);
	return ret;
}
