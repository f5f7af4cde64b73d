/*
 * object-name.c: gitrevisions(7) name resolution (see object-name.h).
 *
 * A name is read as git reads it: first split at the first ':' outside
 * braces into "<rev>" and "<path>"; then <rev> is taken apart from the
 * right, one suffix at a time ("^{...}", then "^<n>" / "~<n>"), until
 * what is left is the base: a full hex id, a ref, describe output or an
 * abbreviated id. The suffixes are kept in a bounded array and applied
 * innermost first, so "v1^{}~2^{tree}" peels v1, walks two first
 * parents, then takes the tree. Nothing here recurses.
 *
 * The innermost suffix also tells an ambiguous abbreviated id what it
 * should be: "~" and "^" want a commit-ish, "^{commit}" too, "^{tree}"
 * and "<rev>:<path>" a tree-ish.
 */
#include "object-name.h"
#include "commit.h"
#include "error.h"
#include "odb.h"
#include "packfile.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include "repo-index.h"
#include "tree.h"
#include <dirent.h>
#include <regex.h>

/* More suffixes than this in one name are refused. */
#define MAX_SUFFIXES 65536
/* Tags of tags nested deeper than this are taken for a loop. */
#define MAX_PEEL_DEPTH 1000

enum hint {
	HINT_NONE = 0,
	HINT_COMMITTISH,
	HINT_TREEISH,
	HINT_COMMIT,    /* describe output: a commit itself */
};

struct resolver {
	struct repository *repo;
	struct odb *odb;
	int algo;
	struct object_id empty_tree;
	struct oid_context *ctx;
};

/* ---- abbreviated ids ------------------------------------------------- */

struct hex_prefix {
	unsigned char raw[GP_MAX_RAWSZ]; /* zero-padded */
	size_t nibbles;
};

static bool all_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (hex_digit_value((unsigned char)s[i]) < 0)
			return false;
	return true;
}

static bool parse_prefix(const char *hex, size_t len, int algo, struct hex_prefix *p)
{
	memset(p, 0, sizeof(*p));
	if (!len || len > gp_hash_algos[algo].hexsz)
		return false;
	for (size_t i = 0; i < len; i++) {
		int v = hex_digit_value((unsigned char)hex[i]);
		if (v < 0)
			return false;
		p->raw[i / 2] |= (unsigned char)(i % 2 ? v : v << 4);
	}
	p->nibbles = len;
	return true;
}

static bool prefix_matches(const unsigned char *raw, const struct hex_prefix *p)
{
	size_t full = p->nibbles / 2;
	if (memcmp(raw, p->raw, full))
		return false;
	return !(p->nibbles % 2) || (raw[full] & 0xf0) == p->raw[full];
}

static int prefix_in_pack(struct packed_git *pack, const struct hex_prefix *p, int algo,
			  oid_prefix_fn *fn, void *data)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	unsigned first_lo = p->raw[0], first_hi = p->raw[0];
	uint32_t lo, hi;

	if (p->nibbles < 2)
		first_hi = first_lo | 0x0f;
	lo = first_lo ? get_be32(pack->fanout + 4 * (first_lo - 1)) : 0;
	hi = get_be32(pack->fanout + 4 * first_hi);
	/* the first id >= the zero-padded prefix */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (memcmp(pack_nth_oid_raw(pack, mid), p->raw, rawsz) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t idx_pos = lo; idx_pos < pack->nr_objects; idx_pos++) {
		const unsigned char *raw = pack_nth_oid_raw(pack, idx_pos);
		struct object_id oid;
		int ret;
		if (!prefix_matches(raw, p))
			break;
		oid_from_raw(&oid, raw, algo);
		ret = fn(&oid, data);
		if (ret)
			return ret;
	}
	return 0;
}

static int prefix_in_loose(const char *objdir, const struct hex_prefix *p, int algo,
			   oid_prefix_fn *fn, void *data)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;
	unsigned first_lo = p->raw[0], first_hi = p->raw[0];
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;

	if (p->nibbles < 2)
		first_hi = first_lo | 0x0f;
	for (unsigned first = first_lo; first <= first_hi && !ret; first++) {
		char *dirpath = xstrfmt("%s/%02x", objdir, first);
		DIR *dir = opendir(dirpath);
		struct dirent *de;

		free(dirpath);
		if (!dir)
			continue;
		while (!ret && (de = readdir(dir))) {
			struct object_id oid;
			size_t len = strlen(de->d_name);
			bool lower_hex = len == hexsz - 2;
			for (size_t i = 0; lower_hex && i < len; i++)
				lower_hex = (de->d_name[i] >= '0' && de->d_name[i] <= '9') ||
					    (de->d_name[i] >= 'a' && de->d_name[i] <= 'f');
			if (!lower_hex)
				continue;
			snprintf(hex, 3, "%02x", first);
			memcpy(hex + 2, de->d_name, len);
			hex[hexsz] = '\0';
			if (hex_to_oid(hex, algo, &oid) || !prefix_matches(oid.hash, p))
				continue;
			ret = fn(&oid, data);
		}
		closedir(dir);
	}
	return ret;
}

int oid_prefix_for_each(struct odb *odb, const char *hex, size_t len,
			oid_prefix_fn *fn, void *data)
{
	int algo = odb_algo(odb);
	struct hex_prefix p;
	int ret;

	if (!parse_prefix(hex, len, algo, &p))
		return GP_EINVAL;
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		ret = prefix_in_pack(odb_pack(odb, i), &p, algo, fn, data);
		if (ret)
			return ret;
	}
	return prefix_in_loose(odb_objdir(odb), &p, algo, fn, data);
}

struct candidates {
	struct object_id *items;
	size_t nr, alloc;
	size_t max; /* stop after this many distinct ones; 0: all */
};

static int add_candidate(const struct object_id *oid, void *data)
{
	struct candidates *c = data;
	for (size_t i = 0; i < c->nr; i++)
		if (oideq(&c->items[i], oid))
			return 0;
	ALLOC_GROW(c->items, c->nr + 1, c->alloc);
	c->items[c->nr++] = *oid;
	return c->max && c->nr >= c->max;
}

/* ---- reading objects ------------------------------------------------- */

/* GP_ENOTFOUND from the odb also means "a delta base is missing". */
static int fix_notfound(struct resolver *r, const struct object_id *oid, int ret,
			struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	if (ret != GP_ENOTFOUND)
		return ret;
	if (odb_has_object(r->odb, oid))
		return gp_error_set(err, GP_ECORRUPT, "%s", gp_error_msg(err));
	return gp_error_set(err, GP_ENOTFOUND, "object %s not found", oid_to_hex_r(hex, oid));
}

/*
 * The type of oid. Git knows the empty tree without storing it.
 * NEEDSWORK: the empty tree belongs in odb.c, for every reader.
 */
static int type_of(struct resolver *r, const struct object_id *oid,
		   enum object_type *type, struct gp_error *err)
{
	struct object_info info;
	int ret;
	if (oideq(oid, &r->empty_tree)) {
		*type = OBJ_TREE;
		return 0;
	}
	ret = odb_read_object_info(r->odb, oid, &info, 0, err);
	if (ret)
		return fix_notfound(r, oid, ret, err);
	*type = info.type;
	return 0;
}

/* Read oid, which must have type want. */
static int read_typed(struct resolver *r, const struct object_id *oid,
		      enum object_type want, unsigned char **data, size_t *size,
		      struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	enum object_type type;
	int ret;

	*data = NULL;
	*size = 0;
	if (oideq(oid, &r->empty_tree)) {
		type = OBJ_TREE;
		*data = xcalloc(1, 1);
	} else {
		ret = odb_read_object(r->odb, oid, &type, data, size, err);
		if (ret)
			return fix_notfound(r, oid, ret, err);
	}
	if (type != want) {
		FREE_AND_NULL(*data);
		return CORRUPT(err, "object %s is a %s, not a %s", oid_to_hex_r(hex, oid),
			       type_name(type) ? type_name(type) : "?", type_name(want));
	}
	return 0;
}

static int read_commit(struct resolver *r, const struct object_id *oid,
		       struct commit_info *ci, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	unsigned char *data;
	size_t size;
	int ret = read_typed(r, oid, OBJ_COMMIT, &data, &size, err);
	if (ret)
		return ret;
	ret = commit_parse(data, size, r->algo, ci, err);
	if (ret)
		gp_error_prefix(err, "commit %s", oid_to_hex_r(hex, oid));
	free(data);
	return ret;
}

static int read_tag(struct resolver *r, const struct object_id *oid,
		    struct tag_info *tag, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	unsigned char *data;
	size_t size;
	int ret = read_typed(r, oid, OBJ_TAG, &data, &size, err);
	if (ret)
		return ret;
	ret = tag_parse(data, size, r->algo, tag, err);
	if (ret)
		gp_error_prefix(err, "tag %s", oid_to_hex_r(hex, oid));
	/* tag->name points into data: not used past here */
	tag->name = NULL;
	tag->name_len = 0;
	free(data);
	return ret;
}

/* ---- peeling --------------------------------------------------------- */

/* What peel() is asked for, besides a real type. */
#define PEEL_NONTAG OBJ_NONE  /* "^{}": follow tags to the first non-tag */
#define PEEL_EXISTS OBJ_BAD   /* "^{object}": just check it exists */

/*
 * Dereference *oid until it has type want (or see above): tags are
 * followed to what they tag, a commit stands for its tree. what is the
 * name so far, for messages. GP_ENOTFOUND when the chain leads
 * elsewhere, with git's message.
 */
static int peel(struct resolver *r, struct object_id *oid, enum object_type want,
		const char *what, size_t what_len, struct gp_error *err)
{
	enum object_type type;
	int ret;

	for (unsigned depth = 0;; depth++) {
		struct tag_info tag;

		if (depth > MAX_PEEL_DEPTH) {
			char hex[GP_MAX_HEXSZ + 1];
			return CORRUPT(err, "tag %s: tags nested more than %d deep",
				       oid_to_hex_r(hex, oid), MAX_PEEL_DEPTH);
		}
		ret = type_of(r, oid, &type, err);
		if (ret)
			return ret;
		if (want == PEEL_EXISTS || type == want ||
		    (want == PEEL_NONTAG && type != OBJ_TAG))
			return 0;
		if (type != OBJ_TAG)
			break;
		ret = read_tag(r, oid, &tag, err);
		if (ret)
			return ret;
		*oid = tag.object;
	}
	if (type == OBJ_COMMIT && want != OBJ_COMMIT) {
		struct commit_info ci = COMMIT_INFO_INIT;
		ret = read_commit(r, oid, &ci, err);
		if (ret)
			return ret;
		*oid = ci.tree;
		commit_info_release(&ci);
		/* like git, the tree is taken on trust: it is not read */
		type = OBJ_TREE;
		if (want == OBJ_TREE)
			return 0;
	}
	return gp_error_set(err, GP_ENOTFOUND,
			    "%.*s: expected %s type, but the object dereferences to %s type",
			    (int)what_len, what, type_name(want), type_name(type));
}

/* Whether oid is of the kind hint asks for; errors count as "no". */
static bool fits_hint(struct resolver *r, const struct object_id *oid, enum hint hint)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_id peeled = *oid;
	enum object_type type;
	bool fits = false;

	switch (hint) {
	case HINT_NONE:
		fits = true;
		break;
	case HINT_COMMIT:
		fits = !type_of(r, oid, &type, &err) && type == OBJ_COMMIT;
		break;
	case HINT_COMMITTISH:
		fits = !peel(r, &peeled, OBJ_COMMIT, "", 0, &err);
		break;
	case HINT_TREEISH:
		fits = !peel(r, &peeled, OBJ_TREE, "", 0, &err);
		break;
	}
	gp_error_clear(&err);
	return fits;
}

/*
 * The object whose id starts with hex[0..len). GP_ENOTFOUND when there
 * is none, GP_EINVAL (ctx->ambiguous) when several fit (and the hint
 * does not pick one).
 */
static int find_short(struct resolver *r, const char *hex, size_t len, enum hint hint,
		      struct object_id *oid, struct gp_error *err)
{
	struct candidates c = { NULL, 0, 0, hint == HINT_NONE ? 2 : 0 };
	size_t fitting = 0;
	int ret;

	ret = oid_prefix_for_each(r->odb, hex, len, add_candidate, &c);
	if (ret < 0) {
		ret = gp_error_set(err, ret, "'%.*s' is not an abbreviated object id", (int)len, hex);
		goto out;
	}
	ret = 0;
	if (!c.nr) {
		ret = gp_error_set(err, GP_ENOTFOUND, "no object id starts with %.*s", (int)len, hex);
		goto out;
	}
	if (c.nr == 1) {
		*oid = c.items[0];
		goto out;
	}
	for (size_t i = 0; hint != HINT_NONE && i < c.nr; i++) {
		if (fits_hint(r, &c.items[i], hint)) {
			*oid = c.items[i];
			fitting++;
		}
	}
	if (fitting != 1) {
		r->ctx->ambiguous = true;
		ret = gp_error_set(err, GP_EINVAL, "short object ID %.*s is ambiguous", (int)len, hex);
	}
out:
	free(c.items);
	return ret;
}

/* ---- the base: hex, refs, describe output ---------------------------- */

static const char *const dwim_rules[] = {
	"%s",
	"refs/%s",
	"refs/tags/%s",
	"refs/heads/%s",
	"refs/remotes/%s",
	"refs/remotes/%s/HEAD",
};

/*
 * The ref name resolves to, in gitrevisions' order. 1 when found, 0
 * when not (*broken then holds the message of a broken ref met on the
 * way, if any), or an error.
 */
static int dwim_ref(struct resolver *r, const char *name, struct object_id *oid,
		    struct strbuf *broken, struct gp_error *err)
{
	struct gp_error sub = GP_ERROR_INIT;
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(dwim_rules); i++) {
		char *full = xstrfmt(dwim_rules[i], name);
		unsigned flags = 0;
		int got = 0;

		if (refname_is_valid(full, REFNAME_ALLOW_ONELEVEL))
			got = refs_resolve_ext(r->repo, full, oid, NULL, &flags, &sub);
		else
			got = GP_ENOTFOUND;
		free(full);
		if (!got) {
			ret = 1;
			break;
		}
		if (got == GP_ECORRUPT && (flags & REF_ISBROKEN)) {
			/* git skips a broken ref, and warns */
			if (!broken->len)
				strbuf_addstr(broken, gp_error_msg(&sub));
		} else if (got != GP_ENOTFOUND && got != GP_EINVAL) {
			ret = gp_error_set(err, got, "%s", gp_error_msg(&sub));
			break;
		}
		gp_error_clear(&sub);
	}
	gp_error_clear(&sub);
	return ret;
}

/* ---- reflogs ---------------------------------------------------------- */

/*
 * "<ref>@{<n>}": the value ref had n changes ago, from its reflog. The
 * ref is found as a name is (refs/heads/<ref> and so on), taking the
 * first that has a reflog; an empty ref is the branch HEAD is on.
 * Other "@{...}" forms (dates, @{-n}, @{upstream}) are not supported.
 */
static int resolve_reflog(struct resolver *r, const char *name, struct object_id *oid,
			  struct gp_error *err)
{
	const char *at = strstr(name, "@{"), *spec;
	char *ref = NULL, *full = NULL;
	unsigned long n = 0;
	size_t spec_len, nr = 0;
	int ret = 0;

	for (const char *next; (next = strstr(at + 2, "@{"));)
		at = next;
	spec = at + 2;
	spec_len = strlen(spec) - 1; /* without the '}' */
	if (!spec_len || spec_len > 9 || strspn(spec, "0123456789") != spec_len) {
		ret = gp_error_set(err, GP_EINVAL,
				   "'%s': '@{...}' other than '@{<n>}' is not supported", name);
		goto out;
	}
	for (size_t i = 0; i < spec_len; i++)
		n = n * 10 + (unsigned long)(spec[i] - '0');
	ref = xstrndup(name, (size_t)(at - name));
	if (!*ref || !strcmp(ref, "@")) {
		free(ref);
		ref = NULL;
		ret = refs_read_symref(r->repo, "HEAD", &ref, err);
		if (ret) {
			ret = gp_error_set(err, GP_ENOTFOUND, "unknown revision '%s'", name);
			goto out;
		}
		full = xstrdup(ref);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(dwim_rules) && !full; i++) {
			char *candidate = xstrfmt(dwim_rules[i], ref);
			if (refs_reflog_exists(r->repo, candidate))
				full = candidate;
			else
				free(candidate);
		}
	}
	if (!full) {
		ret = gp_error_set(err, GP_ENOTFOUND, "unknown revision '%s'", name);
		goto out;
	}
	ret = refs_reflog_nth(r->repo, full, n, oid, &nr, err);
	if (ret == GP_ENOTFOUND)
		ret = gp_error_set(err, GP_ENOTFOUND, "unknown revision '%s'", name);
	else if (ret == GP_EINVAL)
		/* not a name that names nothing: git stops there, even in batch mode */
		ret = gp_error_set(err, GP_EINVAL, "log for '%s' only has %zu entries", ref, nr);
out:
	free(full);
	free(ref);
	return ret;
}

/* "...-g<hex>": where the hex starts, if name[0..len) ends so. */
static bool describe_hex(const char *name, size_t len, size_t *hex_pos)
{
	for (size_t pos = len; pos >= 3; pos--) {
		if (name[pos - 1] == 'g' && name[pos - 2] == '-') {
			*hex_pos = pos;
			return len - pos >= OBJECT_NAME_MIN_ABBREV && all_hex(name + pos, len - pos);
		}
	}
	return false;
}

static int resolve_base(struct resolver *r, const char *base, size_t len, enum hint hint,
			struct object_id *oid, struct gp_error *err)
{
	size_t hexsz = gp_hash_algos[r->algo].hexsz, hex_pos;
	struct strbuf broken = STRBUF_INIT;
	char *name = xstrndup(base, len);
	int ret;

	if (len == hexsz && all_hex(base, len)) {
		ret = hex_to_oid(base, r->algo, oid) ? GP_ENOTFOUND : 0;
		goto out;
	}
	if (len && base[len - 1] == '}' && strstr(name, "@{")) {
		ret = resolve_reflog(r, name, oid, err);
		goto out;
	}
	ret = dwim_ref(r, strcmp(name, "@") ? name : "HEAD", oid, &broken, err);
	if (ret) {
		ret = ret > 0 ? 0 : ret;
		goto out;
	}
	if (describe_hex(name, len, &hex_pos)) {
		struct gp_error sub = GP_ERROR_INIT;
		bool ambiguous = r->ctx->ambiguous;
		ret = find_short(r, name + hex_pos, len - hex_pos, HINT_COMMIT, oid, &sub);
		/* describe output that does not resolve is just not a name */
		r->ctx->ambiguous = ambiguous;
		gp_error_clear(&sub);
		if (!ret)
			goto out;
		if (ret != GP_ENOTFOUND && ret != GP_EINVAL) {
			ret = gp_error_set(err, ret, "%s", gp_error_msg(&sub));
			goto out;
		}
	}
	if (len >= OBJECT_NAME_MIN_ABBREV && len < hexsz && all_hex(base, len)) {
		ret = find_short(r, base, len, hint, oid, err);
		if (ret != GP_ENOTFOUND)
			goto out;
	}
	if (broken.len) {
		r->ctx->broken_ref = true;
		ret = gp_error_set(err, GP_ENOTFOUND, "ignoring %s", broken.buf);
	} else
		ret = gp_error_set(err, GP_ENOTFOUND, "unknown revision '%s'", name);
out:
	strbuf_release(&broken);
	free(name);
	return ret;
}

/* ---- ^{/<text>} ------------------------------------------------------ */

/* A set of ids, open addressing on their first bytes (hashes already). */
struct seen_set {
	struct object_id *slots;
	size_t size, nr; /* size: a power of two */
};

static bool seen_insert(struct seen_set *set, const struct object_id *oid)
{
	size_t i;
	if (2 * (set->nr + 1) > set->size) {
		struct seen_set bigger = { NULL, set->size ? 2 * set->size : 64, 0 };
		bigger.slots = xcalloc(bigger.size, sizeof(*bigger.slots));
		for (i = 0; i < set->size; i++)
			if (set->slots[i].algo)
				seen_insert(&bigger, &set->slots[i]);
		free(set->slots);
		*set = bigger;
	}
	for (i = get_be32(oid->hash) & (set->size - 1); set->slots[i].algo;
	     i = (i + 1) & (set->size - 1))
		if (oideq(&set->slots[i], oid))
			return false;
	set->slots[i] = *oid;
	set->nr++;
	return true;
}

/*
 * "<rev>^{/<text>}": the youngest commit reachable from *oid whose
 * message matches the extended regular expression text; "!-" before it
 * asks for one that does not match, "!!" stands for a literal '!'.
 * Commits are visited newest committer date first, as git does.
 */
static int search_message(struct resolver *r, struct object_id *oid, const char *text,
			  size_t text_len, const char *name, size_t name_len,
			  struct gp_error *err)
{
	struct seen_set seen = { NULL, 0, 0 };
	struct queued { struct object_id oid; uint64_t date; } *queue = NULL;
	size_t nr = 0, alloc = 0;
	char *pattern = xstrndup(text, text_len);
	const char *re = pattern;
	bool negate = false, found = false;
	regex_t regex;
	int ret;

	if (re[0] == '!') {
		if (re[1] == '-') {
			negate = true;
			re += 2;
		} else if (re[1] == '!') {
			re++;
		} else {
			ret = gp_error_set(err, GP_ENOTFOUND, "'%.*s': unknown '!' form",
					   (int)name_len, name);
			free(pattern);
			return ret;
		}
	}
	if (regcomp(&regex, re, REG_EXTENDED)) {
		ret = gp_error_set(err, GP_ENOTFOUND, "'%.*s': bad regular expression",
				   (int)name_len, name);
		free(pattern);
		return ret;
	}
	ret = peel(r, oid, OBJ_COMMIT, name, name_len, err);
	if (!ret) {
		ALLOC_GROW(queue, 1, alloc);
		queue[nr].oid = *oid;
		queue[nr++].date = UINT64_MAX;
		seen_insert(&seen, oid);
	}
	/* queue: sorted oldest first, so the newest is at the end */
	while (!ret && nr && !found) {
		struct object_id cur = queue[--nr].oid;
		struct commit_info ci = COMMIT_INFO_INIT;
		unsigned char *data;
		size_t size;
		const char *msg;

		ret = read_typed(r, &cur, OBJ_COMMIT, &data, &size, err);
		if (ret)
			break;
		ret = commit_parse(data, size, r->algo, &ci, err);
		if (ret) {
			free(data);
			break;
		}
		msg = strstr((const char *)data, "\n\n");
		if (negate != (msg && !regexec(&regex, msg + 2, 0, NULL, 0))) {
			*oid = cur;
			found = true;
		}
		for (size_t i = 0; !found && i < ci.nr_parents; i++) {
			struct commit_info pci = COMMIT_INFO_INIT;
			unsigned char *pdata;
			size_t psize, pos;
			if (!seen_insert(&seen, &ci.parents[i]))
				continue;
			/* a parent that cannot be read ends that line of history */
			if (read_typed(r, &ci.parents[i], OBJ_COMMIT, &pdata, &psize, err)) {
				gp_error_clear(err);
				continue;
			}
			if (commit_parse(pdata, psize, r->algo, &pci, err)) {
				free(pdata);
				gp_error_clear(err);
				continue;
			}
			free(pdata);
			pos = nr;
			while (pos && queue[pos - 1].date > pci.date)
				pos--;
			ALLOC_GROW(queue, nr + 1, alloc);
			memmove(queue + pos + 1, queue + pos, (nr - pos) * sizeof(*queue));
			queue[pos].oid = ci.parents[i];
			queue[pos].date = pci.date;
			nr++;
			commit_info_release(&pci);
		}
		commit_info_release(&ci);
		free(data);
	}
	if (!ret && !found)
		ret = gp_error_set(err, GP_ENOTFOUND, "'%.*s': no commit message matches",
				   (int)name_len, name);
	regfree(&regex);
	free(queue);
	free(seen.slots);
	free(pattern);
	return ret;
}

/* ---- suffixes -------------------------------------------------------- */

struct suffix {
	char kind;          /* '~', '^' or '{' */
	unsigned long n;    /* '~' and '^' */
	const char *spec;   /* '{': what is between the braces */
	size_t spec_len;
	size_t end;         /* the name up to and including this suffix */
};

static int apply_suffix(struct resolver *r, const struct suffix *s, const char *name,
			struct object_id *oid, struct gp_error *err)
{
	struct commit_info ci = COMMIT_INFO_INIT;
	enum object_type want;
	int ret = 0;

	if (s->kind == '{') {
		if (!s->spec_len)
			want = PEEL_NONTAG;
		else if (s->spec_len == 6 && !memcmp(s->spec, "object", 6))
			want = PEEL_EXISTS;
		else if (s->spec[0] == '/')
			return search_message(r, oid, s->spec + 1, s->spec_len - 1, name, s->end, err);
		else if ((want = type_from_name(s->spec, s->spec_len)) == OBJ_BAD)
			return gp_error_set(err, GP_ENOTFOUND, "'%.*s': unknown object type '%.*s'",
					    (int)s->end, name, (int)s->spec_len, s->spec);
		return peel(r, oid, want, name, s->end, err);
	}

	ret = peel(r, oid, OBJ_COMMIT, name, s->end, err);
	if (ret || (s->kind == '^' && !s->n))
		return ret;
	for (unsigned long gen = 0; gen < (s->kind == '~' ? s->n : 1); gen++) {
		ret = read_commit(r, oid, &ci, err);
		if (ret)
			goto out;
		if (s->kind == '^' ? s->n > ci.nr_parents : !ci.nr_parents) {
			ret = gp_error_set(err, GP_ENOTFOUND, "'%.*s': no such %s",
					   (int)s->end, name, s->kind == '^' ? "parent" : "ancestor");
			goto out;
		}
		*oid = ci.parents[s->kind == '^' ? s->n - 1 : 0];
	}
out:
	commit_info_release(&ci);
	return ret;
}

/* Resolve name[0..len), which has no ":<path>". */
static int resolve_rev(struct resolver *r, const char *name, size_t len, enum hint hint,
		       struct object_id *oid, struct gp_error *err)
{
	struct suffix *sfx = NULL;
	size_t nr = 0, alloc = 0, end = len;
	int ret;

	while (end) {
		struct suffix s = { 0, 0, NULL, 0, end };
		size_t digits = end;

		if (name[end - 1] == '}') {
			size_t sp;
			for (sp = end - 1; sp >= 2; sp--)
				if (name[sp - 1] == '{' && name[sp - 2] == '^')
					break;
			if (sp < 2)
				break;
			s.kind = '{';
			s.spec = name + sp;
			s.spec_len = end - 1 - sp;
			end = sp - 2;
		} else {
			while (digits && name[digits - 1] >= '0' && name[digits - 1] <= '9')
				digits--;
			if (!digits || (name[digits - 1] != '~' && name[digits - 1] != '^'))
				break;
			s.kind = name[digits - 1];
			s.n = 1;
			if (digits < end) {
				s.n = 0;
				for (size_t i = digits; i < end; i++) {
					if (s.n > (INT_MAX - 9) / 10) {
						ret = gp_error_set(err, GP_ENOTFOUND,
								   "unknown revision '%.*s'", (int)len, name);
						goto out;
					}
					s.n = s.n * 10 + (unsigned long)(name[i] - '0');
				}
			}
			end = digits - 1;
		}
		if (nr >= MAX_SUFFIXES) {
			ret = gp_error_set(err, GP_EINVAL, "'%.*s...': more than %d suffixes",
					   (int)MIN(len, 64), name, MAX_SUFFIXES);
			goto out;
		}
		ALLOC_GROW(sfx, nr + 1, alloc);
		sfx[nr++] = s;
	}

	/* the innermost suffix says what an ambiguous abbreviation should be */
	if (nr) {
		const struct suffix *in = &sfx[nr - 1];
		if (in->kind != '{' ||
		    (in->spec_len == 6 && !memcmp(in->spec, "commit", 6)))
			hint = HINT_COMMITTISH;
		else if (in->spec_len == 4 && !memcmp(in->spec, "tree", 4))
			hint = HINT_TREEISH;
	}
	ret = resolve_base(r, name, end, hint, oid, err);
	if (ret == GP_EINVAL && r->ctx->ambiguous && nr) {
		/* only a bare abbreviation is "ambiguous"; with suffixes, git finds nothing */
		r->ctx->ambiguous = false;
		ret = gp_error_set(err, GP_ENOTFOUND, "%s", gp_error_msg(err));
	}
	for (size_t i = nr; !ret && i > 0; i--)
		ret = apply_suffix(r, &sfx[i - 1], name, oid, err);
out:
	free(sfx);
	return ret;
}

/* ---- <rev>:<path> ---------------------------------------------------- */

/*
 * A path starting with "./" or "../" is relative to where we are in
 * the work tree: make it a path from the top, in out. EINVAL outside a
 * work tree, or when ".." climbs above the top.
 */
static int relative_path(struct resolver *r, const char *path, struct strbuf *out,
			 struct gp_error *err)
{
	struct strbuf full = STRBUF_INIT;
	const char *wt = r->repo->worktree, *rest;
	char *cwd = getcwd(NULL, 0);
	size_t wt_len = wt ? strlen(wt) : 0;
	int ret = 0;

	if (!wt || !cwd || strncmp(cwd, wt, wt_len) ||
	    (cwd[wt_len] && cwd[wt_len] != '/' && strcmp(wt, "/"))) {
		ret = gp_error_set(err, GP_EINVAL,
				   "relative path syntax can't be used outside working tree");
		goto out;
	}
	rest = cwd + wt_len;
	while (*rest == '/')
		rest++;
	if (*rest)
		strbuf_addf(&full, "%s/", rest);
	strbuf_addstr(&full, path);

	strbuf_reset(out);
	for (const char *p = full.buf; *p;) {
		const char *slash = strchr(p, '/');
		size_t clen = slash ? (size_t)(slash - p) : strlen(p);
		if (clen == 2 && !memcmp(p, "..", 2)) {
			char *last;
			if (!out->len) {
				ret = gp_error_set(err, GP_EINVAL, "'%s' is outside repository at '%s'",
						   path, wt);
				goto out;
			}
			strbuf_setlen(out, out->len - 1); /* its '/' */
			last = strrchr(out->buf, '/');
			strbuf_setlen(out, last ? (size_t)(last - out->buf) + 1 : 0);
		} else if (clen && !(clen == 1 && p[0] == '.')) {
			strbuf_add(out, p, clen);
			strbuf_addch(out, '/');
		}
		p += clen;
		while (*p == '/')
			p++;
	}
	/* keep a trailing slash only when the path had one */
	if (out->len && full.buf[full.len - 1] != '/')
		strbuf_setlen(out, out->len - 1);
out:
	strbuf_release(&full);
	free(cwd);
	return ret;
}

static bool mode_is_dir(unsigned mode)
{
	return (mode & TREE_MODE_TYPE_MASK) == TREE_MODE_DIR;
}

/*
 * Walk path from the tree *oid. On success *oid and *mode are the
 * entry's. GP_ENOTFOUND with git's "path ... does not exist" message.
 */
static int walk_path(struct resolver *r, const char *path, const char *rev,
		     struct object_id *oid, unsigned *mode, struct gp_error *err)
{
	const char *p = path;
	int ret = 0;

	*mode = TREE_MODE_DIR;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t clen = slash ? (size_t)(slash - p) : strlen(p);
		struct tree_iter it;
		struct tree_entry e;
		unsigned char *data;
		size_t size;
		bool found = false;

		if (!clen || !mode_is_dir(*mode))
			goto missing;
		ret = read_typed(r, oid, OBJ_TREE, &data, &size, err);
		if (ret)
			return ret;
		tree_iter_init(&it, data, size, r->algo);
		while ((ret = tree_iter_next(&it, &e, err)) > 0) {
			if (e.name_len == clen && !memcmp(e.name, p, clen)) {
				*oid = e.oid;
				*mode = e.mode;
				found = true;
				break;
			}
		}
		free(data);
		if (ret < 0) {
			char hex[GP_MAX_HEXSZ + 1];
			return gp_error_prefix(err, "tree %s", oid_to_hex_r(hex, oid));
		}
		if (!found)
			goto missing;
		p += clen;
		if (*p == '/') {
			p++;
			/* "dir/" names the directory; "file/" nothing */
			if (!*p && !mode_is_dir(*mode))
				goto missing;
		}
	}
	return 0;
missing:
	return gp_error_set(err, GP_ENOTFOUND, "path '%s' does not exist in '%s'", path, rev);
}

/*
 * walk_path() for GET_OID_FOLLOW_SYMLINKS. The path still to walk is
 * kept as text, since a link replaces the component that names it with
 * its target; the directories walked are kept as a stack of trees, so
 * that ".." goes back to where the walk came from rather than to the
 * link's lexical parent. Bounded: at most GET_OID_MAX_SYMLINKS links,
 * each adding at most a blob's worth of text.
 */
static int walk_path_follow(struct resolver *r, const char *path, const char *rev,
			    struct object_id *oid, unsigned *mode, struct gp_error *err)
{
	struct oid_context *ctx = r->ctx;
	struct strbuf rest = STRBUF_INIT, next = STRBUF_INIT;
	struct object_id *dirs = NULL;
	size_t nr_dirs = 0, alloc_dirs = 0, pos = 0;
	unsigned links = 0;
	int ret = 0;

	strbuf_addstr(&rest, path);
	ALLOC_GROW(dirs, 1, alloc_dirs);
	dirs[nr_dirs++] = *oid;
	*mode = TREE_MODE_DIR;
	while (1) {
		const char *comp;
		size_t clen;
		bool more, found = false;
		struct tree_iter it;
		struct tree_entry e;
		unsigned char *data;
		size_t size;

		while (pos < rest.len && rest.buf[pos] == '/')
			pos++;
		if (pos >= rest.len) {
			/* a path ending in a directory: that directory */
			*oid = dirs[nr_dirs - 1];
			*mode = TREE_MODE_DIR;
			break;
		}
		comp = rest.buf + pos;
		clen = strcspn(comp, "/");
		more = pos + clen < rest.len; /* a '/' follows, maybe nothing else */
		if (clen == 1 && comp[0] == '.') {
			pos += clen;
			continue;
		}
		if (clen == 2 && !memcmp(comp, "..", 2)) {
			if (nr_dirs == 1) {
				ctx->symlink = SYMLINK_OUTSIDE;
				ctx->symlink_path = xstrdup(comp);
				goto out;
			}
			nr_dirs--;
			pos += clen;
			continue;
		}
		ret = read_typed(r, &dirs[nr_dirs - 1], OBJ_TREE, &data, &size, err);
		if (ret)
			goto out;
		tree_iter_init(&it, data, size, r->algo);
		while ((ret = tree_iter_next(&it, &e, err)) > 0)
			if (e.name_len == clen && !memcmp(e.name, comp, clen)) {
				*oid = e.oid;
				*mode = e.mode;
				found = true;
				break;
			}
		free(data);
		if (ret < 0) {
			char hex[GP_MAX_HEXSZ + 1];
			ret = gp_error_prefix(err, "tree %s", oid_to_hex_r(hex, &dirs[nr_dirs - 1]));
			goto out;
		}
		ret = 0;
		if (!found) {
			if (links)
				ctx->symlink = SYMLINK_DANGLING;
			else
				ret = gp_error_set(err, GP_ENOTFOUND, "path '%s' does not exist in '%s'",
						   path, rev);
			goto out;
		}
		pos += clen;
		if ((*mode & TREE_MODE_TYPE_MASK) == TREE_MODE_SYMLINK) {
			unsigned char *target;
			size_t target_len;
			if (++links > GET_OID_MAX_SYMLINKS) {
				ctx->symlink = SYMLINK_LOOP;
				goto out;
			}
			ret = read_typed(r, oid, OBJ_BLOB, &target, &target_len, err);
			if (ret)
				goto out;
			/* the link's text takes the place of its name */
			strbuf_reset(&next);
			strbuf_add(&next, target, target_len);
			strbuf_add(&next, rest.buf + pos, rest.len - pos);
			free(target);
			strbuf_reset(&rest);
			strbuf_addbuf(&rest, &next);
			pos = 0;
			if (rest.len && rest.buf[0] == '/') {
				ctx->symlink = SYMLINK_OUTSIDE;
				ctx->symlink_path = xstrdup(rest.buf);
				goto out;
			}
			continue;
		}
		if (mode_is_dir(*mode)) {
			ALLOC_GROW(dirs, nr_dirs + 1, alloc_dirs);
			dirs[nr_dirs++] = *oid;
			continue;
		}
		if (more) {
			ctx->symlink = SYMLINK_NOTDIR;
			goto out;
		}
		break;
	}
out:
	if (!ret && ctx->symlink != SYMLINK_FOUND) {
		oid_clear(oid, r->algo);
		*mode = 0;
	}
	free(dirs);
	strbuf_release(&rest);
	strbuf_release(&next);
	return ret;
}

void oid_context_release(struct oid_context *ctx)
{
	FREE_AND_NULL(ctx->symlink_path);
}

/*
 * ":<path>" and ":<n>:<path>": the blob the index holds at path, at
 * stage n (0 when not given). rel is scratch space.
 */
static int index_path(struct resolver *r, const char *name, struct object_id *oid,
		      struct strbuf *rel, struct gp_error *err)
{
	struct index_hit hit;
	const char *path = name + 1;
	int stage = 0, ret;

	if (path[0] == '/')
		return gp_error_set(err, GP_EINVAL,
				    "'%s': ':/<text>' (a commit message search) is not supported",
				    name);
	if (path[0] >= '0' && path[0] <= '3' && path[1] == ':') {
		stage = path[0] - '0';
		path += 2;
	}
	if (starts_with(path, "./") || starts_with(path, "../")) {
		ret = relative_path(r, path, rel, err);
		if (ret)
			return ret;
		path = rel->buf;
	}
	r->ctx->has_path = true;
	ret = index_find(r->repo, path, stage, &hit, err);
	if (ret)
		return ret;
	if (hit.found) {
		*oid = hit.oid;
		r->ctx->mode = hit.mode;
		return 0;
	}
	if (hit.other_stage)
		return gp_error_set(err, GP_ENOTFOUND, "path '%s' is in the index, but not at stage %d",
				    path, stage);
	if (r->repo->worktree) {
		char *file = xstrfmt("%s/%s", r->repo->worktree, path);
		bool on_disk = !access(file, F_OK);
		free(file);
		if (on_disk)
			return gp_error_set(err, GP_ENOTFOUND,
					    "path '%s' exists on disk, but not in the index", path);
	}
	return gp_error_set(err, GP_ENOTFOUND,
			    "path '%s' does not exist (neither on disk nor in the index)", path);
}

/* ---- entry points ---------------------------------------------------- */

int get_oid_with_flags(struct repository *repo, struct odb *odb, const char *name,
		       unsigned flags, struct object_id *oid, struct oid_context *ctx,
		       struct gp_error *err)
{
	struct oid_context scratch;
	struct resolver r;
	struct strbuf rel = STRBUF_INIT;
	const char *colon = NULL, *path;
	char *rev = NULL;
	int depth = 0, ret;

	if (!ctx)
		ctx = &scratch;
	memset(ctx, 0, sizeof(*ctx));
	r.repo = repo;
	r.odb = odb;
	r.algo = repo->hash_algo;
	r.ctx = ctx;
	empty_tree_oid(r.algo, &r.empty_tree);
	oid_clear(oid, r.algo);

	if (!strcmp(name, ":")) {
		/* the empty path in the index: never there */
		ret = gp_error_set(err, GP_ENOTFOUND, "unknown revision ':'");
		goto out;
	}
	if (name[0] == ':') {
		ret = index_path(&r, name, oid, &rel, err);
		goto out;
	}
	for (const char *p = name; *p; p++) {
		/* only "^{...}" and "@{...}" hide a ':'; a ref may hold a '{' */
		if (*p == '{' && p > name && (p[-1] == '^' || p[-1] == '@'))
			depth++;
		else if (depth && *p == '}')
			depth--;
		else if (!depth && *p == ':') {
			colon = p;
			break;
		}
	}
	if (!colon) {
		ret = resolve_rev(&r, name, strlen(name), HINT_NONE, oid, err);
		goto out;
	}

	ctx->has_path = true;
	rev = xstrndup(name, (size_t)(colon - name));
	ret = resolve_rev(&r, rev, strlen(rev), HINT_TREEISH, oid, err);
	if (ret == GP_EINVAL && ctx->ambiguous) {
		ctx->ambiguous = false;
		ret = GP_ENOTFOUND;
	}
	if (!ret)
		ret = peel(&r, oid, OBJ_TREE, rev, strlen(rev), err);
	if (ret == GP_ENOTFOUND) {
		ctx->broken_ref = false;
		gp_error_set(err, ret, "invalid object name '%s'.", rev);
	}
	if (ret)
		goto out;
	path = colon + 1;
	if (starts_with(path, "./") || starts_with(path, "../")) {
		ret = relative_path(&r, path, &rel, err);
		if (ret)
			goto out;
		path = rel.buf;
	}
	if (flags & GET_OID_FOLLOW_SYMLINKS)
		ret = walk_path_follow(&r, path, rev, oid, &ctx->mode, err);
	else
		ret = walk_path(&r, path, rev, oid, &ctx->mode, err);
	if (!ret && !*path)
		ctx->mode = 0; /* "<rev>:" is the tree itself, which has no mode */
out:
	if (ret)
		oid_clear(oid, r.algo);
	strbuf_release(&rel);
	free(rev);
	return ret;
}

int get_oid_ctx(struct repository *repo, struct odb *odb, const char *name,
		struct object_id *oid, struct oid_context *ctx,
		struct gp_error *err)
{
	return get_oid_with_flags(repo, odb, name, 0, oid, ctx, err);
}

int get_oid(struct repository *repo, struct odb *odb, const char *name,
	    struct object_id *oid, struct gp_error *err)
{
	return get_oid_ctx(repo, odb, name, oid, NULL, err);
}
