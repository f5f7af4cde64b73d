/*
 * walk-filter.c: see walk-filter.h.
 *
 * Each filter is a small state machine fed the walk's events. What
 * they answer, and when they remember something, was learned from git's
 * documentation (git-rev-list(1) "--filter", technical/partial-clone)
 * and by comparing rev-list --objects --filter output on repositories
 * built for it: blobs shared between paths in and out of a sparse
 * cone, trees met at several depths, combine: of filters that disagree,
 * --filter-print-omitted. Some answers are odd, and kept because they
 * are git's: tree:<n> counts depth only through trees it was asked
 * about; in a combine: a sub-filter that has marked an object seen
 * answers nothing for it again, which hides it from the other
 * sub-filters' point of view too; the "shown once" mark of sparse:oid
 * trees is shared by all sparse:oid filters of a walk.
 */
#include "walk-filter.h"
#include "config.h"
#include "error.h"
#include "object-filter.h"
#include "object-name.h"
#include "odb.h"
#include "path-patterns.h"
#include "repository.h"
#include "strbuf.h"

struct walk_filter {
	enum object_filter_kind kind;
	uint64_t blob_limit;          /* BLOB_LIMIT: bytes */
	uint64_t tree_depth;          /* TREE_DEPTH */
	enum object_type type;        /* OBJECT_TYPE */
	struct path_patterns *patterns; /* SPARSE_OID */
	struct walk_filter *subs;     /* COMBINE */
	size_t nr_subs;
};

/* ---- a map from object ids to small numbers ------------------------------ */

/*
 * Open addressing, linear probing, keyed by the id's leading bytes
 * (uniform already). Entries are never removed: a value of 0 is "not
 * there" for the users below, which is how they remove.
 */
struct oid_map {
	struct oid_map_slot {
		struct object_id oid;   /* algo 0: a free slot */
		uint32_t value;
	} *slots;
	size_t size, nr;            /* size: a power of two, or 0 */
};

static size_t map_home(const struct object_id *oid, size_t mask)
{
	uint64_t key;
	memcpy(&key, oid->hash, sizeof(key));
	return (size_t)key & mask;
}

static struct oid_map_slot *map_find(const struct oid_map *m, const struct object_id *oid)
{
	size_t mask, at;
	if (!m->size)
		return NULL;
	mask = m->size - 1;
	for (at = map_home(oid, mask); m->slots[at].oid.algo; at = (at + 1) & mask)
		if (oideq(&m->slots[at].oid, oid))
			return &m->slots[at];
	return NULL;
}

static uint32_t map_get(const struct oid_map *m, const struct object_id *oid)
{
	struct oid_map_slot *s = map_find(m, oid);
	return s ? s->value : 0;
}

/* The slot of oid, added with value 0 when it was not there. */
static struct oid_map_slot *map_slot(struct oid_map *m, const struct object_id *oid)
{
	struct oid_map_slot *s = map_find(m, oid);
	size_t mask, at;
	if (s)
		return s;
	if ((m->nr + 1) * 3 >= m->size * 2) {
		struct oid_map_slot *old = m->slots;
		size_t old_size = m->size;
		m->size = old_size ? old_size * 2 : 64;
		m->slots = xcalloc(m->size, sizeof(*m->slots));
		for (size_t i = 0; i < old_size; i++) {
			if (!old[i].oid.algo)
				continue;
			mask = m->size - 1;
			for (at = map_home(&old[i].oid, mask); m->slots[at].oid.algo;
			     at = (at + 1) & mask)
				;
			m->slots[at] = old[i];
		}
		free(old);
	}
	mask = m->size - 1;
	for (at = map_home(oid, mask); m->slots[at].oid.algo; at = (at + 1) & mask)
		;
	m->slots[at].oid = *oid;
	m->slots[at].value = 0;
	m->nr++;
	return &m->slots[at];
}

/* Set oid's value; returns the value it had (0: none). */
static uint32_t map_put(struct oid_map *m, const struct object_id *oid, uint32_t value)
{
	struct oid_map_slot *s;
	uint32_t old;
	if (!value) {
		s = map_find(m, oid);
		if (!s)
			return 0;
	} else {
		s = map_slot(m, oid);
	}
	old = s->value;
	s->value = value;
	return old;
}

static void map_release(struct oid_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->size = m->nr = 0;
}

/* ---- preparing a filter ------------------------------------------------- */

static int load_patterns(struct walk_filter *wf, const char *name, struct repository *repo,
			 struct odb *odb, struct strbuf *warning, struct gp_error *err)
{
	struct object_id oid;
	enum object_type type;
	unsigned char *data = NULL;
	size_t size;
	char hex[GP_MAX_HEXSZ + 1];
	bool icase = false;
	int ret;

	if (get_oid(repo, odb, name, &oid, err)) {
		gp_error_clear(err);
		return gp_error_set(err, GP_ENOTFOUND, "unable to access sparse blob in '%s'", name);
	}
	oid_to_hex_r(hex, &oid);
	ret = odb_read_object(odb, &oid, &type, &data, &size, err);
	gp_error_clear(err);
	if (ret || type != OBJ_BLOB) {
		free(data);
		return gp_error_set(err, GP_EINVAL, "unable to parse sparse filter data in %s", hex);
	}
	/* git matches paths as core.ignoreCase says, sparse filters included */
	if (config_get_bool(&repo->config, "core.ignorecase", &icase, err))
		icase = false;
	gp_error_clear(err);
	ret = path_patterns_parse(&wf->patterns, (const char *)data, size,
				  icase ? PATH_PATTERNS_ICASE : 0, err);
	free(data);
	if (ret) {
		gp_error_clear(err);
		if (warning)
			strbuf_addf(warning, "ignoring excessively large pattern blob: %s", hex);
		return gp_error_set(err, GP_ENOMEM, "unable to parse sparse filter data in %s", hex);
	}
	return 0;
}

static void release_filter(struct walk_filter *wf)
{
	for (size_t i = 0; i < wf->nr_subs; i++)
		release_filter(&wf->subs[i]);
	free(wf->subs);
	path_patterns_free(wf->patterns);
}

static int prepare(struct walk_filter *wf, const struct object_filter *spec,
		   struct repository *repo, struct odb *odb, struct strbuf *warning,
		   struct gp_error *err)
{
	wf->kind = spec->kind;
	switch (spec->kind) {
	case OBJECT_FILTER_NONE:
		BUG("walk_filter_new() of no filter");
	case OBJECT_FILTER_BLOB_NONE:
		return 0;
	case OBJECT_FILTER_BLOB_LIMIT:
		wf->blob_limit = spec->blob_limit;
		return 0;
	case OBJECT_FILTER_TREE_DEPTH:
		wf->tree_depth = spec->tree_depth;
		return 0;
	case OBJECT_FILTER_OBJECT_TYPE:
		wf->type = spec->type;
		return 0;
	case OBJECT_FILTER_SPARSE_OID:
		return load_patterns(wf, spec->sparse_oid, repo, odb, warning, err);
	case OBJECT_FILTER_COMBINE:
		wf->subs = xcalloc(spec->nr_subs, sizeof(*wf->subs));
		for (size_t i = 0; i < spec->nr_subs; i++) {
			int ret = prepare(&wf->subs[wf->nr_subs++], &spec->subs[i], repo, odb,
					  warning, err);
			if (ret)
				return ret;
		}
		return 0;
	}
	BUG("unknown filter kind %d", (int)spec->kind);
}

int walk_filter_new(struct walk_filter **out, const struct object_filter *spec,
		    struct repository *repo, struct odb *odb, struct strbuf *warning,
		    struct gp_error *err)
{
	struct walk_filter *wf = xcalloc(1, sizeof(*wf));
	int ret = prepare(wf, spec, repo, odb, warning, err);
	if (ret) {
		walk_filter_free(wf);
		wf = NULL;
	}
	*out = wf;
	return ret;
}

void walk_filter_free(struct walk_filter *wf)
{
	if (!wf)
		return;
	release_filter(wf);
	free(wf);
}

/* ---- applying it --------------------------------------------------------- */

/* sparse:oid: what a directory passes down to what it holds. */
struct sparse_frame {
	enum path_match default_match; /* for paths the patterns leave undecided */
	bool child_omitted;            /* a blob below was left out */
};

/* One filter (or sub-filter) applied to one walk. */
struct run {
	const struct walk_filter *wf;
	struct walk_filter_state *st;
	bool collect_omits;
	struct oid_map omits;         /* value 1: left out, not shown since */

	/* tree:<depth>: the least depth each tree was entered at, plus 1 */
	struct oid_map tree_depth;
	uint64_t depth;               /* of what is met next */

	/* sparse:oid */
	struct sparse_frame *frames;
	size_t nr_frames, alloc_frames;

	/* combine: */
	struct run *subs;
	struct oid_map *sub_seen;     /* per sub-filter: what it marked seen */
	bool *sub_skipping;           /* per sub-filter: inside a tree it skips */
	struct object_id *sub_skip_tree;
};

struct walk_filter_state {
	struct odb *odb;
	/* sparse:oid trees shown already, by any sparse:oid filter (git's flag) */
	struct oid_map sparse_shown;
	struct run top;
};

static void run_init(struct run *r, const struct walk_filter *wf, struct walk_filter_state *st,
		     bool collect_omits)
{
	memset(r, 0, sizeof(*r));
	r->wf = wf;
	r->st = st;
	r->collect_omits = collect_omits;
	if (wf->kind == OBJECT_FILTER_SPARSE_OID) {
		/* the top: not matched, unless the patterns say otherwise */
		ALLOC_GROW(r->frames, 1, r->alloc_frames);
		r->frames[0].default_match = PATH_NOT_MATCHED;
		r->frames[0].child_omitted = false;
		r->nr_frames = 1;
	}
	if (wf->kind == OBJECT_FILTER_COMBINE) {
		r->subs = xcalloc(wf->nr_subs, sizeof(*r->subs));
		r->sub_seen = xcalloc(wf->nr_subs, sizeof(*r->sub_seen));
		r->sub_skipping = xcalloc(wf->nr_subs, sizeof(*r->sub_skipping));
		r->sub_skip_tree = xcalloc(wf->nr_subs, sizeof(*r->sub_skip_tree));
		for (size_t i = 0; i < wf->nr_subs; i++)
			run_init(&r->subs[i], &wf->subs[i], st, collect_omits);
	}
}

static void run_release(struct run *r)
{
	if (r->subs) {
		for (size_t i = 0; i < r->wf->nr_subs; i++) {
			run_release(&r->subs[i]);
			map_release(&r->sub_seen[i]);
		}
	}
	free(r->subs);
	free(r->sub_seen);
	free(r->sub_skipping);
	free(r->sub_skip_tree);
	free(r->frames);
	map_release(&r->omits);
	map_release(&r->tree_depth);
}

struct walk_filter_state *walk_filter_start(const struct walk_filter *wf, struct odb *odb,
					    bool collect_omits)
{
	struct walk_filter_state *st = xcalloc(1, sizeof(*st));
	st->odb = odb;
	run_init(&st->top, wf, st, collect_omits);
	return st;
}

void walk_filter_state_free(struct walk_filter_state *st)
{
	if (!st)
		return;
	run_release(&st->top);
	map_release(&st->sparse_shown);
	free(st);
}

/* Note oid left out (returns whether it was already), or shown after all. */
static bool omit(struct run *r, const struct object_id *oid)
{
	return r->collect_omits && map_put(&r->omits, oid, 1);
}

static void unomit(struct run *r, const struct object_id *oid)
{
	if (r->collect_omits)
		map_put(&r->omits, oid, 0);
}

static unsigned decide(struct run *r, enum walk_filter_situation situation,
		       const struct object_id *oid, const char *path, size_t path_len,
		       size_t basename_ofs);

static unsigned decide_blob_limit(struct run *r, const struct object_id *oid)
{
	struct object_info info;
	struct gp_error err = GP_ERROR_INIT;
	bool keep = true;

	/* a blob we do not have is shown, for the walk to report it missing */
	if (odb_has_object(r->st->odb, oid) &&
	    !odb_read_object_info(r->st->odb, oid, &info, 0, &err) &&
	    info.type == OBJ_BLOB)
		keep = info.size < r->wf->blob_limit;
	gp_error_clear(&err);
	if (!keep) {
		omit(r, oid);
		return WF_MARK_SEEN;
	}
	unomit(r, oid);
	return WF_MARK_SEEN | WF_SHOW;
}

static unsigned decide_tree_depth(struct run *r, enum walk_filter_situation situation,
				  const struct object_id *oid)
{
	bool include = r->depth < r->wf->tree_depth;
	struct oid_map_slot *seen;
	uint32_t mark;
	unsigned res;

	switch (situation) {
	case WF_COMMIT:
	case WF_TAG:
		return WF_MARK_SEEN | WF_SHOW;
	case WF_END_TREE:
		r->depth--;
		return 0;
	case WF_BLOB:
		/* never marked seen: it may turn up again higher up */
		if (include) {
			unomit(r, oid);
			return WF_MARK_SEEN | WF_SHOW;
		}
		omit(r, oid);
		return 0;
	case WF_BEGIN_TREE:
		break;
	}
	/* depths beyond 32 bits are all "deep": the same to compare */
	mark = r->depth >= UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)(r->depth + 1);
	seen = map_slot(&r->tree_depth, oid);
	if (seen->value && seen->value <= mark) {
		res = WF_SKIP_TREE;   /* entered before, at this depth or higher */
	} else {
		seen->value = mark;
		if (include) {
			unomit(r, oid);
			res = WF_SHOW;
		} else if (r->collect_omits && !omit(r, oid)) {
			/* newly left out: what it holds must be recorded too */
			res = 0;
		} else {
			res = WF_SKIP_TREE;
		}
	}
	r->depth++;
	return res;
}

static unsigned decide_sparse(struct run *r, enum walk_filter_situation situation,
			      const struct object_id *oid, const char *path, size_t path_len,
			      size_t basename_ofs)
{
	struct sparse_frame *frame = &r->frames[r->nr_frames - 1];
	enum path_match match;

	switch (situation) {
	case WF_COMMIT:
	case WF_TAG:
		return WF_MARK_SEEN | WF_SHOW;
	case WF_BEGIN_TREE:
		match = path_patterns_match(r->wf->patterns, path, path_len, basename_ofs, true);
		if (match == PATH_UNDECIDED)
			match = frame->default_match;
		ALLOC_GROW(r->frames, r->nr_frames + 1, r->alloc_frames);
		r->frames[r->nr_frames].default_match = match;
		r->frames[r->nr_frames].child_omitted = false;
		r->nr_frames++;
		/*
		 * Not marked seen: the same tree elsewhere holds the same
		 * blobs at other paths. Shown the first time only.
		 */
		if (map_put(&r->st->sparse_shown, oid, 1))
			return 0;
		return WF_SHOW;
	case WF_END_TREE:
		if (r->nr_frames < 2)
			BUG("sparse filter: a tree left that was not entered");
		r->nr_frames--;
		frame = &r->frames[r->nr_frames];
		r->frames[r->nr_frames - 1].child_omitted |= frame->child_omitted;
		/* everything below was shown: no need to come back */
		return frame->child_omitted ? 0 : WF_MARK_SEEN;
	case WF_BLOB:
		match = path_patterns_match(r->wf->patterns, path, path_len, basename_ofs, false);
		if (match == PATH_UNDECIDED)
			match = frame->default_match;
		if (match == PATH_MATCHED) {
			unomit(r, oid);
			return WF_MARK_SEEN | WF_SHOW;
		}
		/* left out here, but it may be wanted at another path */
		omit(r, oid);
		frame->child_omitted = true;
		return 0;
	}
	return 0;
}

static unsigned decide_object_type(struct run *r, enum walk_filter_situation situation)
{
	enum object_type want = r->wf->type;
	switch (situation) {
	case WF_COMMIT:
		return WF_MARK_SEEN | (want == OBJ_COMMIT ? WF_SHOW : 0);
	case WF_TAG:
		return WF_MARK_SEEN | (want == OBJ_TAG ? WF_SHOW : 0);
	case WF_BEGIN_TREE:
		if (want == OBJ_COMMIT || want == OBJ_TAG)
			return WF_SKIP_TREE;
		return WF_MARK_SEEN | (want == OBJ_TREE ? WF_SHOW : 0);
	case WF_BLOB:
		return WF_MARK_SEEN | (want == OBJ_BLOB ? WF_SHOW : 0);
	case WF_END_TREE:
		return 0;
	}
	return 0;
}

static unsigned decide_combine(struct run *r, enum walk_filter_situation situation,
			       const struct object_id *oid, const char *path, size_t path_len,
			       size_t basename_ofs)
{
	unsigned all = WF_SHOW | WF_MARK_SEEN | WF_SKIP_TREE;

	for (size_t i = 0; i < r->wf->nr_subs; i++) {
		unsigned res = 0;
		bool hears = true;
		/*
		 * A sub-filter skipping a tree hears nothing until it is
		 * left, which it hears; nor of what it has marked seen.
		 */
		if (r->sub_skipping[i]) {
			if (situation == WF_END_TREE && oideq(oid, &r->sub_skip_tree[i]))
				r->sub_skipping[i] = false;
			else
				hears = false;
		}
		if (hears && !map_get(&r->sub_seen[i], oid)) {
			res = decide(&r->subs[i], situation, oid, path, path_len, basename_ofs);
			if (res & WF_MARK_SEEN)
				map_put(&r->sub_seen[i], oid, 1);
			if (res & WF_SKIP_TREE) {
				r->sub_skipping[i] = true;
				r->sub_skip_tree[i] = *oid;
			}
		}
		if (!(res & WF_SHOW))
			all &= ~WF_SHOW;
		if (!(res & WF_MARK_SEEN))
			all &= ~WF_MARK_SEEN;
		if (!r->sub_skipping[i])
			all &= ~WF_SKIP_TREE;
	}
	return all;
}

static unsigned decide(struct run *r, enum walk_filter_situation situation,
		       const struct object_id *oid, const char *path, size_t path_len,
		       size_t basename_ofs)
{
	switch (r->wf->kind) {
	case OBJECT_FILTER_BLOB_NONE:
		if (situation == WF_BLOB) {
			omit(r, oid);
			return WF_MARK_SEEN;
		}
		return situation == WF_END_TREE ? 0 : WF_MARK_SEEN | WF_SHOW;
	case OBJECT_FILTER_BLOB_LIMIT:
		if (situation == WF_BLOB)
			return decide_blob_limit(r, oid);
		return situation == WF_END_TREE ? 0 : WF_MARK_SEEN | WF_SHOW;
	case OBJECT_FILTER_TREE_DEPTH:
		return decide_tree_depth(r, situation, oid);
	case OBJECT_FILTER_SPARSE_OID:
		return decide_sparse(r, situation, oid, path, path_len, basename_ofs);
	case OBJECT_FILTER_OBJECT_TYPE:
		return decide_object_type(r, situation);
	case OBJECT_FILTER_COMBINE:
		return decide_combine(r, situation, oid, path, path_len, basename_ofs);
	case OBJECT_FILTER_NONE:
		break;
	}
	BUG("no filter to decide with");
}

unsigned walk_filter_decide(struct walk_filter_state *st, enum walk_filter_situation situation,
			    const struct object_id *oid, const char *path, size_t path_len,
			    size_t basename_ofs)
{
	return decide(&st->top, situation, oid, path, path_len, basename_ofs);
}

/* A combine:'s omits are those of its sub-filters, gathered at the end. */
static void gather_omits(struct run *r, struct oid_map *into)
{
	if (r->wf->kind == OBJECT_FILTER_COMBINE) {
		for (size_t i = 0; i < r->wf->nr_subs; i++)
			gather_omits(&r->subs[i], into);
		return;
	}
	for (size_t i = 0; i < r->omits.size; i++)
		if (r->omits.slots[i].oid.algo && r->omits.slots[i].value)
			map_put(into, &r->omits.slots[i].oid, 1);
}

int walk_filter_for_each_omitted(struct walk_filter_state *st, walk_filter_omit_fn *fn,
				 void *data)
{
	struct oid_map all = { 0 };
	int ret = 0;

	gather_omits(&st->top, &all);
	for (size_t i = 0; i < all.size && !ret; i++)
		if (all.slots[i].oid.algo && all.slots[i].value)
			ret = fn(&all.slots[i].oid, data);
	map_release(&all);
	return ret;
}
