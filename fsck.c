/*
 * fsck.c: git's object checks (see fsck.h and
 * Documentation/technical/fsck.adoc).
 *
 * The rules, their order and their messages are git's, learned from
 * git-fsck(1), fsck-msgids, git's tests (t1450, t1451, t5302, t5504,
 * t7415-t7417, t7450, t0060) and from what Git 2.55 prints for crafted
 * objects. Where a rule looks odd (a mode read into 16 bits, a date
 * allowed to start with blanks, a URL check that stops at the first
 * colon), it is because git behaves so, and a receiving server must
 * accept and refuse exactly what git does.
 *
 * Bytes are untrusted and never assumed NUL-terminated: commit and tag
 * headers are scanned through line_at(), which treats the end of the
 * buffer as a line end, and trees through tree_decode(), which checks
 * every length first. A tree name is NUL-terminated inside the buffer
 * (tree_decode() finds the NUL before handing it out), so the name
 * matchers may read it as a C string.
 */
#include "fsck.h"
#include "config.h"
#include "error.h"
#include "refs.h"
#include "strbuf.h"
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/* ---- message ids -------------------------------------------------- */

static const struct {
	const char *name;
	enum fsck_msg_type severity;
} msg_info[FSCK_MSG_NR] = {
#define FSCK_MSG_INFO_(id, name, severity) [FSCK_MSG_##id] = { #name, FSCK_##severity },
	FSCK_MSG_IDS(FSCK_MSG_INFO_)
#undef FSCK_MSG_INFO_
};

const char *fsck_msg_id_name(enum fsck_msg_id id)
{
	return (unsigned)id < FSCK_MSG_NR ? msg_info[id].name : "unknown";
}

enum fsck_msg_type fsck_msg_id_default(enum fsck_msg_id id)
{
	return (unsigned)id < FSCK_MSG_NR ? msg_info[id].severity : FSCK_ERROR;
}

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

bool fsck_msg_id_parse(const char *name, size_t len, enum fsck_msg_id *out)
{
	for (int id = 0; id < FSCK_MSG_NR; id++) {
		const char *known = msg_info[id].name;
		size_t pos = 0;
		while (pos < len && known[pos] && lower((unsigned char)name[pos]) == lower(known[pos]))
			pos++;
		if (pos == len && !known[pos]) {
			*out = (enum fsck_msg_id)id;
			return true;
		}
	}
	return false;
}

/* ---- a set of object ids ------------------------------------------ */

/*
 * Open addressing on a keyed hash of the id: tree entries may name any
 * id at all, so an attacker could choose ids that collide in a table
 * indexed by their leading bytes alone.
 */
struct oid_set {
	struct object_id *items;
	bool *used;
	size_t nr, cap; /* cap is 0 or a power of two */
	uint64_t seed;
};

static uint64_t oid_set_hash(const struct oid_set *set, const struct object_id *oid)
{
	uint64_t h;
	memcpy(&h, oid->hash, sizeof(h));
	h ^= set->seed;
	/* splitmix64's finaliser */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static size_t oid_set_slot(const struct oid_set *set, const struct object_id *oid)
{
	size_t mask = set->cap - 1;
	size_t slot = (size_t)oid_set_hash(set, oid) & mask;
	while (set->used[slot] && !oideq(&set->items[slot], oid))
		slot = (slot + 1) & mask;
	return slot;
}

static bool oid_set_contains(const struct oid_set *set, const struct object_id *oid)
{
	return set->cap && set->used[oid_set_slot(set, oid)];
}

static void oid_set_insert(struct oid_set *set, const struct object_id *oid)
{
	size_t slot;

	if ((set->nr + 1) * 4 > set->cap * 3) {
		struct oid_set bigger = { .seed = set->seed };
		bigger.cap = set->cap ? set->cap * 2 : 16;
		bigger.items = xcalloc(bigger.cap, sizeof(*bigger.items));
		bigger.used = xcalloc(bigger.cap, sizeof(*bigger.used));
		for (size_t pos = 0; pos < set->cap; pos++) {
			if (!set->used[pos])
				continue;
			slot = oid_set_slot(&bigger, &set->items[pos]);
			bigger.items[slot] = set->items[pos];
			bigger.used[slot] = true;
			bigger.nr++;
		}
		free(set->items);
		free(set->used);
		*set = bigger;
	}
	slot = oid_set_slot(set, oid);
	if (!set->used[slot]) {
		set->items[slot] = *oid;
		set->used[slot] = true;
		set->nr++;
	}
}

static void oid_set_clear(struct oid_set *set)
{
	free(set->items);
	free(set->used);
	set->items = NULL;
	set->used = NULL;
	set->nr = set->cap = 0;
}

/* ---- options ------------------------------------------------------ */

/* git's default for largePathname, a name's length in bytes. */
#define DEFAULT_MAX_NAME_LEN 4096

/* git refuses to parse larger .gitattributes files, and longer lines. */
#define ATTR_MAX_FILE_SIZE (100u * 1024 * 1024)
#define ATTR_MAX_LINE_LENGTH 2048

struct fsck_options {
	int algo;
	bool strict;
	/*
	 * As configured. Like git, the first setting fixes every id's
	 * severity, strictness included: a configured "warn" stays a
	 * warning in strict mode, and strictness set later changes
	 * nothing.
	 */
	enum fsck_msg_type severity[FSCK_MSG_NR];
	bool configured;
	int64_t max_name_len;                      /* largePathname */
	struct oid_set skip;
	fsck_report_fn *report;
	void *report_data;
	fsck_tree_error_fn *tree_error;
	void *tree_error_data;

	/*
	 * The two-phase blob checks: ids that trees name .gitmodules or
	 * .gitattributes, and those already checked. Guarded by lock,
	 * which also serialises the callbacks.
	 */
	pthread_mutex_t lock;
	struct oid_set gitmodules_found, gitmodules_done;
	struct oid_set gitattributes_found, gitattributes_done;
};

struct fsck_options *fsck_options_new(int algo)
{
	struct fsck_options *o = xcalloc(1, sizeof(*o));
	uint64_t seed = (uint64_t)(uintptr_t)o ^ ((uint64_t)getpid() << 32);
	FILE *urandom = fopen("/dev/urandom", "rb");

	if (urandom) {
		if (fread(&seed, sizeof(seed), 1, urandom) != 1)
			seed ^= (uint64_t)time(NULL);
		fclose(urandom);
	}
	o->algo = algo;
	for (int id = 0; id < FSCK_MSG_NR; id++)
		o->severity[id] = msg_info[id].severity;
	o->max_name_len = DEFAULT_MAX_NAME_LEN;
	pthread_mutex_init(&o->lock, NULL);
	o->skip.seed = seed;
	o->gitmodules_found.seed = o->gitmodules_done.seed = seed * 3 + 1;
	o->gitattributes_found.seed = o->gitattributes_done.seed = seed * 5 + 2;
	return o;
}

void fsck_options_free(struct fsck_options *o)
{
	if (!o)
		return;
	oid_set_clear(&o->skip);
	oid_set_clear(&o->gitmodules_found);
	oid_set_clear(&o->gitmodules_done);
	oid_set_clear(&o->gitattributes_found);
	oid_set_clear(&o->gitattributes_done);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

void fsck_set_strict(struct fsck_options *o, bool strict)
{
	o->strict = strict;
}

void fsck_set_report(struct fsck_options *o, fsck_report_fn *fn, void *data)
{
	o->report = fn;
	o->report_data = data;
}

void fsck_set_tree_error(struct fsck_options *o, fsck_tree_error_fn *fn,
			 void *data)
{
	o->tree_error = fn;
	o->tree_error_data = data;
}

/* ---- configuration ------------------------------------------------ */

static enum fsck_msg_type effective_severity(const struct fsck_options *o,
					     enum fsck_msg_id id)
{
	if (o->configured)
		return o->severity[id];
	if (o->strict && o->severity[id] == FSCK_WARN)
		return FSCK_ERROR;
	return o->severity[id];
}

/* Only these three words, in lower case, as git takes them. */
static bool parse_severity(const char *s, enum fsck_msg_type *out)
{
	if (!strcmp(s, "error"))
		*out = FSCK_ERROR;
	else if (!strcmp(s, "warn"))
		*out = FSCK_WARN;
	else if (!strcmp(s, "ignore"))
		*out = FSCK_IGNORE;
	else
		return false;
	return true;
}

int fsck_set_msg_type(struct fsck_options *o, const char *id_str,
		      const char *severity_str, struct gp_error *err)
{
	enum fsck_msg_id id;
	enum fsck_msg_type severity;
	char *type_only = NULL;
	int ret = 0;

	if (!fsck_msg_id_parse(id_str, strlen(id_str), &id))
		return gp_error_set(err, GP_EINVAL, "Unhandled message id: %s", id_str);
	/* "warn:10" sets largePathname's limit too. */
	if (id == FSCK_MSG_LARGE_PATHNAME) {
		const char *colon = strchr(severity_str, ':');
		if (colon) {
			int64_t max;
			if (!config_parse_int64(colon + 1, &max))
				return gp_error_set(err, GP_EINVAL,
						    "unable to parse max tree entry len: %s",
						    colon + 1);
			o->max_name_len = max;
			type_only = xstrndup(severity_str, (size_t)(colon - severity_str));
			severity_str = type_only;
		}
	}
	if (!parse_severity(severity_str, &severity)) {
		ret = gp_error_set(err, GP_EINVAL, "Unknown fsck message type: '%s'",
				   severity_str);
		goto out;
	}
	if (severity != FSCK_ERROR && msg_info[id].severity == FSCK_FATAL) {
		ret = gp_error_set(err, GP_EINVAL, "Cannot demote %s to %s", id_str,
				   severity_str);
		goto out;
	}
	if (!o->configured) {
		for (int other = 0; other < FSCK_MSG_NR; other++)
			o->severity[other] = effective_severity(o, (enum fsck_msg_id)other);
		o->configured = true;
	}
	o->severity[id] = severity;
out:
	free(type_only);
	return ret;
}

int fsck_set_msg_types(struct fsck_options *o, const char *list,
		       struct gp_error *err)
{
	struct strbuf item = STRBUF_INIT;
	const char *p = list;
	int ret = 0;

	while (*p) {
		size_t len = strcspn(p, " ,|");
		size_t eq;

		if (!len) {
			p++;
			continue;
		}
		/* The id is taken in lower case; the rest as given. */
		strbuf_reset(&item);
		strbuf_add(&item, p, len);
		eq = strcspn(item.buf, "=:");
		for (size_t pos = 0; pos < eq; pos++)
			item.buf[pos] = (char)lower((unsigned char)item.buf[pos]);
		p += len;
		if (eq == strlen("skiplist") && !memcmp(item.buf, "skiplist", eq)) {
			if (eq == item.len) {
				ret = gp_error_set(err, GP_EINVAL, "skiplist requires a path");
				break;
			}
			ret = fsck_add_skiplist(o, item.buf + eq + 1, err);
			if (ret < 0)
				break;
			continue;
		}
		if (eq == item.len) {
			ret = gp_error_set(err, GP_EINVAL, "Missing '=': '%s'", item.buf);
			break;
		}
		item.buf[eq] = '\0';
		ret = fsck_set_msg_type(o, item.buf, item.buf + eq + 1, err);
		if (ret < 0)
			break;
	}
	strbuf_release(&item);
	return ret;
}

/* git's whitespace for trimming: SP, HT, LF, CR. */
static bool is_trim_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int fsck_add_skiplist(struct fsck_options *o, const char *path,
		      struct gp_error *err)
{
	struct strbuf line = STRBUF_INIT;
	struct stat st;
	FILE *fp = fopen(path, "r");
	int ret = 0;

	if (!fp || fstat(fileno(fp), &st) < 0 || S_ISDIR(st.st_mode)) {
		ret = gp_error_set(err, GP_EIO, "could not open object name list: %s", path);
		goto out;
	}
	while (strbuf_getline(&line, fp)) {
		struct object_id oid;
		size_t start = 0, end;
		char *hash = memchr(line.buf, '#', line.len);

		if (hash)
			strbuf_setlen(&line, (size_t)(hash - line.buf));
		end = line.len;
		while (start < end && is_trim_space((unsigned char)line.buf[start]))
			start++;
		while (end > start && is_trim_space((unsigned char)line.buf[end - 1]))
			end--;
		if (start == end)
			continue;
		line.buf[end] = '\0';
		if (end - start != gp_hash_algos[o->algo].hexsz ||
		    memchr(line.buf + start, '\0', end - start) ||
		    parse_oid_hex_exact(line.buf + start, o->algo, &oid)) {
			ret = gp_error_set(err, GP_EINVAL, "invalid object name: %s",
					   line.buf + start);
			goto out;
		}
		oid_set_insert(&o->skip, &oid);
	}
	if (ferror(fp))
		ret = gp_error_errno(err, "could not read '%s'", path);
out:
	if (fp)
		fclose(fp);
	strbuf_release(&line);
	return ret;
}

int fsck_config_enabled(const struct config_set *cs,
			enum fsck_config_scope scope, bool *out,
			struct gp_error *err)
{
	const char *key = scope == FSCK_CONFIG_RECEIVE ? "receive.fsckobjects"
						       : "fetch.fsckobjects";
	int ret;

	*out = true;
	if (scope == FSCK_CONFIG_FSCK)
		return 0;
	*out = false;
	ret = config_get_bool(cs, key, out, err);
	if (ret == GP_ENOTFOUND)
		ret = config_get_bool(cs, "transfer.fsckobjects", out, err);
	return ret == GP_ENOTFOUND ? 0 : ret;
}

static const char *scope_prefix(enum fsck_config_scope scope)
{
	switch (scope) {
	case FSCK_CONFIG_RECEIVE:
		return "receive.fsck.";
	case FSCK_CONFIG_FETCH:
		return "fetch.fsck.";
	case FSCK_CONFIG_FSCK:
		break;
	}
	return "fsck.";
}

/* A path as git_config_pathname() gives it: "~/" from $HOME. */
static char *expand_path(const char *path)
{
	const char *home = getenv("HOME");
	if (path[0] == '~' && path[1] == '/' && home)
		return xstrfmt("%s%s", home, path + 1);
	return xstrdup(path);
}

int fsck_config_list(const struct config_set *cs, enum fsck_config_scope scope,
		     struct strbuf *spec, struct strbuf *warnings,
		     struct gp_error *err)
{
	const char *prefix = scope_prefix(scope);
	size_t start = spec->len;

	if (scope == FSCK_CONFIG_FSCK)
		return gp_error_set(err, GP_EINVAL, "git fsck reads fsck.* itself");
	for (size_t pos = 0; pos < cs->nr; pos++) {
		const struct config_entry *e = &cs->items[pos];
		const char *id_str;
		enum fsck_msg_id id;
		enum fsck_msg_type severity;

		if (!skip_prefix(e->key, prefix, &id_str))
			continue;
		if (!e->value)
			return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
		if (!strcmp(id_str, "skiplist")) {
			char *path = expand_path(e->value);
			strbuf_addf(spec, "%sskiplist=%s", spec->len > start ? "," : "", path);
			free(path);
			continue;
		}
		if (!fsck_msg_id_parse(id_str, strlen(id_str), &id)) {
			if (warnings)
				strbuf_addf(warnings, "%s unknown msg id '%s'\n",
					    scope == FSCK_CONFIG_RECEIVE ? "skipping" : "Skipping",
					    id_str);
			continue;
		}
		/* receive-pack and fetch-pack die on a bad value right away. */
		if (!parse_severity(e->value, &severity))
			return gp_error_set(err, GP_EINVAL, "Unknown fsck message type: '%s'",
					    e->value);
		strbuf_addf(spec, "%s%s=%s", spec->len > start ? "," : "", id_str, e->value);
	}
	return 0;
}

int fsck_options_read_config(struct fsck_options *o,
			     const struct config_set *cs,
			     enum fsck_config_scope scope,
			     struct strbuf *warnings, struct gp_error *err)
{
	int ret = 0;

	if (scope != FSCK_CONFIG_FSCK) {
		struct strbuf spec = STRBUF_INIT;
		ret = fsck_config_list(cs, scope, &spec, warnings, err);
		if (!ret)
			ret = fsck_set_msg_types(o, spec.buf, err);
		strbuf_release(&spec);
		return ret;
	}
	for (size_t pos = 0; pos < cs->nr && !ret; pos++) {
		const struct config_entry *e = &cs->items[pos];
		const char *id_str;

		if (!skip_prefix(e->key, "fsck.", &id_str))
			continue;
		if (!e->value) {
			ret = gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
		} else if (!strcmp(id_str, "skiplist")) {
			char *path = expand_path(e->value);
			ret = fsck_add_skiplist(o, path, err);
			free(path);
		} else {
			ret = fsck_set_msg_type(o, id_str, e->value, err);
		}
	}
	return ret;
}

/* ---- reporting ---------------------------------------------------- */

/* One object being checked. */
struct check {
	struct fsck_options *o;
	const struct object_id *oid;
	enum object_type type;
};

/*
 * Report id about oid (of type) with a printf-style text. Returns 1
 * when the report counts as an error, 0 when it is ignored, skipped
 * or a warning, which is what lets a check go on past it.
 */
GP_PRINTF(5, 6)
static int report(struct fsck_options *o, const struct object_id *oid,
		  enum object_type type, enum fsck_msg_id id, const char *fmt, ...)
{
	enum fsck_msg_type severity = effective_severity(o, id);
	struct strbuf message = STRBUF_INIT;
	struct fsck_report r;
	size_t text_at;
	va_list ap;
	int counted;

	/* The skip list is fixed before any check starts: no lock needed. */
	if (severity == FSCK_IGNORE || oid_set_contains(&o->skip, oid))
		return 0;
	if (severity == FSCK_FATAL)
		severity = FSCK_ERROR;
	else if (severity == FSCK_INFO)
		severity = FSCK_WARN;

	strbuf_addf(&message, "%s: ", msg_info[id].name);
	text_at = message.len;
	va_start(ap, fmt);
	strbuf_vaddf(&message, fmt, ap);
	va_end(ap);
	r.oid = oid;
	r.type = type;
	r.id = id;
	r.severity = severity;
	r.message = message.buf;
	r.text = message.buf + text_at;

	pthread_mutex_lock(&o->lock);
	if (o->report)
		counted = o->report(&r, o->report_data) ? 1 : 0;
	else
		counted = severity == FSCK_ERROR;
	pthread_mutex_unlock(&o->lock);
	strbuf_release(&message);
	return counted;
}

/* ---- commit and tag headers --------------------------------------- */

/*
 * Commit and tag headers end at the first empty line; git refuses to
 * read them unless that line exists or the object ends with LF, and
 * unless there is no NUL byte before it. Everything after this check
 * still stays inside [buf, end): a "line" at the end of the buffer
 * simply ends there.
 */
static int verify_headers(struct check *c, const char *buf, size_t len)
{
	for (size_t pos = 0; pos < len; pos++) {
		if (buf[pos] == '\0')
			return report(c->o, c->oid, c->type, FSCK_MSG_NUL_IN_HEADER,
				      "unterminated header: NUL at offset %zu", pos) | 2;
		if (buf[pos] == '\n' && pos + 1 < len && buf[pos + 1] == '\n')
			return 0;
	}
	if (len && buf[len - 1] == '\n')
		return 0;
	return report(c->o, c->oid, c->type, FSCK_MSG_UNTERMINATED_HEADER,
		      "unterminated header") | 2;
}

/* Where the line starting at p ends: its LF, or end. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

/* If [*p, end) starts with prefix, step over it. */
static bool skip_str(const char **p, const char *end, const char *prefix)
{
	size_t len = strlen(prefix);
	if ((size_t)(end - *p) < len || memcmp(*p, prefix, len))
		return false;
	*p += len;
	return true;
}

/* A full hex id followed by LF at p (any case, as git reads them). */
static bool hex_line(const char *p, const char *end, int algo, struct object_id *oid)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;
	return (size_t)(end - p) > hexsz && p[hexsz] == '\n' &&
	       !hex_to_oid(p, algo, oid);
}

/*
 * "Name <email> date tz" (after "author " and the like), up to its LF;
 * *p moves to the next line. At most one report, the first problem.
 */
static int check_ident(struct check *c, const char **p, const char *end)
{
	const char *s = *p, *eol = line_end(s, end), *q;
	uint64_t date = 0;
	bool overflow = false;

	*p = eol < end ? eol + 1 : end;
	/* Within [s, eol); reading eol itself means "the line ended". */
#define AT(ptr) ((ptr) < eol ? *(ptr) : '\n')
	if (AT(s) == '<')
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_NAME_BEFORE_EMAIL,
			      "invalid author/committer line - missing space before email");
	q = s;
	while (q < eol && *q != '<' && *q != '>')
		q++;
	if (AT(q) == '>')
		return report(c->o, c->oid, c->type, FSCK_MSG_BAD_NAME,
			      "invalid author/committer line - bad name");
	if (AT(q) != '<')
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_EMAIL,
			      "invalid author/committer line - missing email");
	if (q[-1] != ' ')
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_SPACE_BEFORE_EMAIL,
			      "invalid author/committer line - missing space before email");
	q++;
	while (q < eol && *q != '<' && *q != '>')
		q++;
	if (AT(q) != '>')
		return report(c->o, c->oid, c->type, FSCK_MSG_BAD_EMAIL,
			      "invalid author/committer line - bad email");
	q++;
	if (AT(q) != ' ')
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_SPACE_BEFORE_DATE,
			      "invalid author/committer line - missing space before date");
	q++;
	/* git lets blanks stand before the date, and nothing else. */
	while (AT(q) == ' ' || AT(q) == '\t')
		q++;
	if (AT(q) == '0' && AT(q + 1) != ' ')
		return report(c->o, c->oid, c->type, FSCK_MSG_ZERO_PADDED_DATE,
			      "invalid author/committer line - zero-padded date");
	s = q;
	while (is_digit(AT(q))) {
		unsigned digit = (unsigned)(AT(q) - '0');
		/* A date must fit a signed 64-bit time_t. */
		if (date > ((uint64_t)INT64_MAX - digit) / 10)
			overflow = true;
		else
			date = date * 10 + digit;
		q++;
	}
	if (overflow)
		return report(c->o, c->oid, c->type, FSCK_MSG_BAD_DATE_OVERFLOW,
			      "invalid author/committer line - date causes integer overflow");
	if (q == s || AT(q) != ' ')
		return report(c->o, c->oid, c->type, FSCK_MSG_BAD_DATE,
			      "invalid author/committer line - bad date");
	q++;
	if ((AT(q) != '+' && AT(q) != '-') || !is_digit(AT(q + 1)) ||
	    !is_digit(AT(q + 2)) || !is_digit(AT(q + 3)) || !is_digit(AT(q + 4)) ||
	    q + 5 != eol || eol == end)
		return report(c->o, c->oid, c->type, FSCK_MSG_BAD_TIMEZONE,
			      "invalid author/committer line - bad time zone");
#undef AT
	return 0;
}

static int check_commit(struct check *c, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	struct object_id oid;
	unsigned authors = 0;
	int err;

	err = verify_headers(c, buf, len);
	if (err)
		return err & 1;
	if (!skip_str(&p, end, "tree "))
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TREE,
			      "invalid format - expected 'tree' line");
	if (!hex_line(p, end, c->o->algo, &oid)) {
		err = report(c->o, c->oid, c->type, FSCK_MSG_BAD_TREE_SHA1,
			     "invalid 'tree' line format - bad sha1");
		if (err)
			return err;
	}
	/* Past a bad line too, when its report is only a warning. */
	p = line_end(p, end);
	p += p < end;
	while (skip_str(&p, end, "parent ")) {
		if (!hex_line(p, end, c->o->algo, &oid)) {
			err = report(c->o, c->oid, c->type, FSCK_MSG_BAD_PARENT_SHA1,
				     "invalid 'parent' line format - bad sha1");
			if (err)
				return err;
		}
		p = line_end(p, end);
		p += p < end;
	}
	while (skip_str(&p, end, "author ")) {
		authors++;
		err = check_ident(c, &p, end);
		if (err)
			return err;
	}
	if (!authors)
		err = report(c->o, c->oid, c->type, FSCK_MSG_MISSING_AUTHOR,
			     "invalid format - expected 'author' line");
	else if (authors > 1)
		err = report(c->o, c->oid, c->type, FSCK_MSG_MULTIPLE_AUTHORS,
			     "invalid format - multiple 'author' lines");
	if (err)
		return err;
	if (!skip_str(&p, end, "committer "))
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_COMMITTER,
			      "invalid format - expected 'committer' line");
	err = check_ident(c, &p, end);
	if (err)
		return err;
	if (memchr(buf, '\0', len))
		return report(c->o, c->oid, c->type, FSCK_MSG_NUL_IN_COMMIT,
			      "NUL byte in the commit object body");
	return 0;
}

static int check_tag(struct check *c, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *eol;
	struct object_id oid;
	int err;

	err = verify_headers(c, buf, len);
	if (err)
		return err & 1;
	if (!skip_str(&p, end, "object "))
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_OBJECT,
			      "invalid format - expected 'object' line");
	if (!hex_line(p, end, c->o->algo, &oid)) {
		err = report(c->o, c->oid, c->type, FSCK_MSG_BAD_OBJECT_SHA1,
			     "invalid 'object' line format - bad sha1");
		if (err)
			return err;
	}
	p = line_end(p, end);
	p += p < end;

	if (!skip_str(&p, end, "type "))
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TYPE_ENTRY,
			      "invalid format - expected 'type' line");
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TYPE,
			      "invalid format - unexpected end after 'type' line");
	if (type_from_name(p, (size_t)(eol - p)) == OBJ_BAD) {
		err = report(c->o, c->oid, c->type, FSCK_MSG_BAD_TYPE,
			     "invalid 'type' value");
		if (err)
			return err;
	}
	p = eol + 1;

	if (!skip_str(&p, end, "tag "))
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TAG_ENTRY,
			      "invalid format - expected 'tag' line");
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		return report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TAG,
			      "invalid format - unexpected end after 'type' line");
	{
		/* The header cannot hold a NUL: verify_headers() saw to it. */
		char *ref = xstrfmt("refs/tags/%.*s", (int)(eol - p), p);
		bool ok = refname_is_valid(ref, 0);
		free(ref);
		if (!ok) {
			err = report(c->o, c->oid, c->type, FSCK_MSG_BAD_TAG_NAME,
				     "invalid 'tag' name: %.*s", (int)(eol - p), p);
			if (err)
				return err;
		}
	}
	p = eol + 1;

	if (!skip_str(&p, end, "tagger ")) {
		/* Early tags had no tagger: a warning at most. */
		err = report(c->o, c->oid, c->type, FSCK_MSG_MISSING_TAGGER_ENTRY,
			     "invalid format - expected 'tagger' line");
		if (err)
			return err;
	} else {
		/*
		 * Unlike everywhere else, git goes on after a bad tagger,
		 * and the verdict on an extra header below replaces this
		 * one: a bad tagger followed by an (ignored) extra header
		 * passes. We do the same, to accept what git accepts.
		 */
		err = check_ident(c, &p, end);
	}

	if (p == end || *p == '\n')
		return err;
	/* One signature header, with its continuation lines, may follow. */
	if (skip_str(&p, end, "gpgsig ") || skip_str(&p, end, "gpgsig-sha256 ")) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			return report(c->o, c->oid, c->type, FSCK_MSG_BAD_GPGSIG,
				      "invalid format - unexpected end after 'gpgsig' or 'gpgsig-sha256' line");
		p = eol + 1;
		while (p < end && *p == ' ') {
			eol = memchr(p, '\n', (size_t)(end - p));
			if (!eol)
				return report(c->o, c->oid, c->type, FSCK_MSG_BAD_HEADER_CONTINUATION,
					      "invalid format - unexpected end in 'gpgsig' or 'gpgsig-sha256' continuation line");
			p = eol + 1;
		}
	}
	if (p < end && *p != '\n')
		err = report(c->o, c->oid, c->type, FSCK_MSG_EXTRA_HEADER_ENTRY,
			     "invalid format - extra header(s) after 'tagger'");
	return err;
}

/* ---- names that some file systems open as another ----------------- */

/*
 * The next character of a UTF-8 name for the HFS+ checks, skipping the
 * code points HFS+ ignores in names. Returns 0 at the end of the name,
 * and also at a malformed sequence (git stops there too: whatever
 * follows cannot make the name more like ".git"). Rejects overlong
 * forms, surrogates, U+FFFE/U+FFFF and anything past U+10FFFF, as
 * git's UTF-8 reader does.
 */
static uint32_t next_hfs_char(const unsigned char **pp)
{
	for (;;) {
		const unsigned char *s = *pp;
		uint32_t ch;
		size_t n;

		if (!s)
			return 0;
		if (s[0] < 0x80) {
			ch = s[0];
			n = 1;
		} else if ((s[0] & 0xe0) == 0xc0) {
			if ((s[1] & 0xc0) != 0x80 || !(s[0] & 0x1e))
				goto bad;
			ch = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
			n = 2;
		} else if ((s[0] & 0xf0) == 0xe0) {
			if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
			    (s[0] == 0xe0 && (s[1] & 0xe0) == 0x80) ||
			    (s[0] == 0xed && (s[1] & 0xe0) == 0xa0) ||
			    (s[0] == 0xef && s[1] == 0xbf && (s[2] & 0xfe) == 0xbe))
				goto bad;
			ch = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 |
			     (s[2] & 0x3f);
			n = 3;
		} else if ((s[0] & 0xf8) == 0xf0) {
			if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
			    (s[3] & 0xc0) != 0x80 ||
			    (s[0] == 0xf0 && (s[1] & 0xf0) == 0x80) ||
			    (s[0] == 0xf4 && s[1] > 0x8f) || s[0] > 0xf4)
				goto bad;
			ch = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
			     (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
			n = 4;
		} else {
			goto bad;
		}
		/*
		 * The continuation tests above stop at the NUL that ends
		 * every name, so s + n never passes it.
		 */
		*pp = s + n;
		if ((ch >= 0x200c && ch <= 0x200f) || (ch >= 0x202a && ch <= 0x202e) ||
		    (ch >= 0x206a && ch <= 0x206f) || ch == 0xfeff)
			continue;
		return ch;
bad:
		*pp = NULL;
		return 0;
	}
}

/* Whether HFS+ opens name as "." + needle (lower-case ASCII). */
static bool is_hfs_dot(const char *name, const char *needle)
{
	const unsigned char *p = (const unsigned char *)name;
	uint32_t ch = next_hfs_char(&p);

	if (ch != '.')
		return false;
	for (; *needle; needle++) {
		ch = next_hfs_char(&p);
		if (ch > 127 || lower((int)ch) != *needle)
			return false;
	}
	ch = next_hfs_char(&p);
	return !ch || ch == '/';
}

/* NTFS drops trailing spaces and periods, and ":stream" suffixes. */
static bool only_spaces_and_periods_from(const char *p)
{
	for (;; p++) {
		if (!*p || *p == ':')
			return true;
		if (*p != ' ' && *p != '.')
			return false;
	}
}

static bool strncase_eq(const char *s, const char *lower_needle, size_t n)
{
	for (size_t pos = 0; pos < n; pos++)
		if (!s[pos] || lower((unsigned char)s[pos]) != lower_needle[pos])
			return false;
	return true;
}

/*
 * Whether NTFS opens name as "." + needle: that name with trailing
 * spaces, periods or a stream name; its 8.3 short name (the first six
 * characters, '~', 1 to 4); or the fallback short name NTFS makes from
 * a hash (short_prefix, as git's tests give it for each needle, then
 * '~' and digits, eight characters in all).
 */
static bool is_ntfs_dot(const char *name, const char *needle, const char *short_prefix)
{
	size_t len = strlen(needle);
	bool saw_tilde = false;
	size_t pos;

	if (name[0] == '.' && strncase_eq(name + 1, needle, len))
		return only_spaces_and_periods_from(name + 1 + len);
	if (strncase_eq(name, needle, 6) && name[6] == '~' && name[7] >= '1' &&
	    name[7] <= '4')
		return only_spaces_and_periods_from(name + 8);
	for (pos = 0; pos < 8; pos++) {
		unsigned char ch = (unsigned char)name[pos];
		if (!ch)
			return false;
		if (saw_tilde) {
			if (!is_digit(ch))
				return false;
		} else if (ch == '~') {
			pos++;
			if (name[pos] < '1' || name[pos] > '9')
				return false;
			saw_tilde = true;
		} else if (pos >= 6 || ch >= 0x80 || lower(ch) != short_prefix[pos]) {
			return false;
		}
	}
	return only_spaces_and_periods_from(name + pos);
}

static bool is_hfs_dotgit(const char *name)
{
	return is_hfs_dot(name, "git");
}

/*
 * NTFS and ".git": ".git" or its short name "git~1", in any case, then
 * spaces and periods up to the end, a separator or a stream name.
 */
static bool is_ntfs_dotgit(const char *name)
{
	const char *p;

	if (strncase_eq(name, "git~1", 5))
		p = name + 5;
	else if (strncase_eq(name, ".git", 4))
		p = name + 4;
	else
		return false;
	for (;; p++) {
		if (!*p || *p == '\\' || *p == '/' || *p == ':')
			return true;
		if (*p != '.' && *p != ' ')
			return false;
	}
}

static bool is_ntfs_dotgitmodules(const char *name)
{
	return is_ntfs_dot(name, "gitmodules", "gi7eba");
}

bool fsck_is_dotgit(const char *name)
{
	return is_hfs_dotgit(name) || is_ntfs_dotgit(name);
}

bool fsck_is_dotgitmodules(const char *name)
{
	return is_hfs_dot(name, "gitmodules") || is_ntfs_dotgitmodules(name);
}

bool fsck_is_dotgitattributes(const char *name)
{
	return is_hfs_dot(name, "gitattributes") ||
	       is_ntfs_dot(name, "gitattributes", "gi7d29");
}

bool fsck_is_dotgitignore(const char *name)
{
	return is_hfs_dot(name, "gitignore") || is_ntfs_dot(name, "gitignore", "gi250a");
}

bool fsck_is_dotmailmap(const char *name)
{
	return is_hfs_dot(name, "mailmap") || is_ntfs_dot(name, "mailmap", "maba30");
}

/* ---- trees -------------------------------------------------------- */

#define S_IFMT_ 0170000
#define S_IFDIR_ 0040000
#define S_IFREG_ 0100000
#define S_IFLNK_ 0120000
#define S_IFGITLINK_ 0160000

struct fsck_entry {
	size_t start;      /* offset of the entry in the tree */
	size_t next;       /* offset just past it */
	const char *name;  /* NUL-terminated inside the tree buffer */
	size_t name_len;
	unsigned mode;     /* 16 bits, as git keeps it */
	struct object_id oid;
};

/*
 * Decode the entry at pos, as git's tree reader does: it wants the
 * byte just before the last id to be a NUL (the end of the last name)
 * and at least rawsz + 3 bytes left, then octal mode digits up to a
 * space, a non-empty name, its NUL and an id. The mode is accumulated
 * in 16 bits. On failure *msg is git's complaint.
 */
static bool tree_decode(const unsigned char *buf, size_t len, size_t pos, int algo,
			struct fsck_entry *e, const char **msg)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	size_t p = pos;
	const unsigned char *nul;
	unsigned mode = 0;

	if (len - pos < rawsz + 3 || buf[len - rawsz - 1]) {
		*msg = "too-short tree object";
		return false;
	}
	/*
	 * The NUL at len - rawsz - 1 ends every scan below before the
	 * buffer does.
	 */
	if (buf[p] == ' ') {
		*msg = "malformed mode in tree entry";
		return false;
	}
	for (; buf[p] != ' '; p++) {
		if (buf[p] < '0' || buf[p] > '7') {
			*msg = "malformed mode in tree entry";
			return false;
		}
		mode = ((mode << 3) + (unsigned)(buf[p] - '0')) & 0xffff;
	}
	p++;
	if (!buf[p]) {
		*msg = "empty filename in tree entry";
		return false;
	}
	nul = memchr(buf + p, '\0', len - p);
	e->start = pos;
	e->name = (const char *)buf + p;
	e->name_len = (size_t)(nul - (buf + p));
	e->mode = mode;
	oid_from_raw(&e->oid, nul + 1, algo);
	e->next = (size_t)(nul + 1 - buf) + rawsz;
	return true;
}

/*
 * Files that a later directory of the same name may duplicate, in a
 * sorted tree: "x", then "x.1", "x.1.2", then "x/". Each entry here is
 * a prefix of the entries that followed it, up to a character below
 * '/', so a directory only needs to look at the top ones.
 */
struct name_stack {
	const char **names;
	size_t *lens;
	size_t nr, alloc, lens_alloc;
};

static void name_stack_push(struct name_stack *st, const char *name, size_t len)
{
	ALLOC_GROW(st->names, st->nr + 1, st->alloc);
	ALLOC_GROW(st->lens, st->nr + 1, st->lens_alloc);
	st->names[st->nr] = name;
	st->lens[st->nr] = len;
	st->nr++;
}

static bool below_slash(unsigned char ch)
{
	return ch && ch < '/';
}

enum order { ORDER_OK, ORDER_UNSORTED, ORDER_DUP };

/*
 * Compare neighbours a (before) and b as git sorts tree entries: by
 * name, a directory's name read with a '/' after it. Equal names are
 * duplicates whatever their modes; so is a directory whose name a
 * file before it carries (see struct name_stack).
 */
static enum order check_order(const struct fsck_entry *a, const struct fsck_entry *b,
			      struct name_stack *st)
{
	size_t common = MIN(a->name_len, b->name_len);
	int cmp = memcmp(a->name, b->name, common);
	unsigned char ca, cb;

	if (cmp < 0)
		return ORDER_OK;
	if (cmp > 0)
		return ORDER_UNSORTED;
	ca = common < a->name_len ? (unsigned char)a->name[common] : 0;
	cb = common < b->name_len ? (unsigned char)b->name[common] : 0;
	if (!ca && !cb)
		return ORDER_DUP;
	if (!ca && (a->mode & S_IFMT_) == S_IFDIR_)
		ca = '/';
	if (!cb && (b->mode & S_IFMT_) == S_IFDIR_)
		cb = '/';

	if (!ca && below_slash(cb)) {
		name_stack_push(st, a->name, a->name_len);
	} else if (cb == '/' && below_slash(ca)) {
		while (st->nr) {
			const char *file = st->names[st->nr - 1];
			size_t file_len = st->lens[st->nr - 1];

			if (file_len > b->name_len || memcmp(b->name, file, file_len))
				break;
			if (file_len == b->name_len)
				return ORDER_DUP;
			if (below_slash((unsigned char)b->name[file_len]))
				break;
			st->nr--;
		}
	}
	return ca < cb ? ORDER_OK : ORDER_UNSORTED;
}

static void queue_blob(struct fsck_options *o, struct oid_set *set,
		       const struct object_id *oid)
{
	pthread_mutex_lock(&o->lock);
	oid_set_insert(set, oid);
	pthread_mutex_unlock(&o->lock);
}

/*
 * A .gitmodules entry: queue its blob, or complain about a symbolic
 * link (git would follow it when reading the file).
 */
static int gitmodules_entry(struct check *c, const struct fsck_entry *e)
{
	if ((e->mode & S_IFMT_) != S_IFLNK_) {
		queue_blob(c->o, &c->o->gitmodules_found, &e->oid);
		return 0;
	}
	return report(c->o, c->oid, c->type, FSCK_MSG_GITMODULES_SYMLINK,
		      ".gitmodules is a symbolic link");
}

static int check_tree(struct check *c, const unsigned char *buf, size_t len)
{
	struct fsck_options *o = c->o;
	struct name_stack stack = { NULL };
	struct fsck_entry prev = { 0 }, cur = { 0 }, next = { 0 };
	bool have_prev = false, have_cur;
	bool null_oid = false, full_path = false, empty_name = false, dot = false,
	     dotdot = false, dotgit = false, zero_pad = false, bad_mode = false,
	     dup = false, unsorted = false, large_name = false;
	const char *msg;
	int errors = 0;

	have_cur = len > 0;
	if (have_cur && !tree_decode(buf, len, 0, o->algo, &cur, &msg)) {
		if (o->tree_error) {
			pthread_mutex_lock(&o->lock);
			o->tree_error(c->oid, msg, o->tree_error_data);
			pthread_mutex_unlock(&o->lock);
		}
		return report(o, c->oid, c->type, FSCK_MSG_BAD_TREE,
			      "cannot be parsed as a tree");
	}
	while (have_cur) {
		const char *name = cur.name;
		bool is_link = (cur.mode & S_IFMT_) == S_IFLNK_;
		const char *backslash;

		null_oid |= oid_is_null(&cur.oid);
		full_path |= memchr(name, '/', cur.name_len) != NULL;
		empty_name |= !cur.name_len;
		dot |= !strcmp(name, ".");
		dotdot |= !strcmp(name, "..");
		dotgit |= is_hfs_dotgit(name) || is_ntfs_dotgit(name);
		zero_pad |= buf[cur.start] == '0';
		large_name |= (int64_t)cur.name_len > o->max_name_len;

		if (fsck_is_dotgitmodules(name))
			errors += gitmodules_entry(c, &cur);
		if (fsck_is_dotgitattributes(name)) {
			if (!is_link)
				queue_blob(o, &o->gitattributes_found, &cur.oid);
			else
				errors += report(o, c->oid, c->type, FSCK_MSG_GITATTRIBUTES_SYMLINK,
						 ".gitattributes is a symlink");
		}
		if (is_link) {
			if (fsck_is_dotgitignore(name))
				errors += report(o, c->oid, c->type, FSCK_MSG_GITIGNORE_SYMLINK,
						 ".gitignore is a symlink");
			if (fsck_is_dotmailmap(name))
				errors += report(o, c->oid, c->type, FSCK_MSG_MAILMAP_SYMLINK,
						 ".mailmap is a symlink");
		}
		/* Windows also reads a backslash as a directory separator. */
		for (backslash = strchr(name, '\\'); backslash;
		     backslash = strchr(backslash, '\\')) {
			backslash++;
			dotgit |= is_ntfs_dotgit(backslash);
			if (is_ntfs_dotgitmodules(backslash))
				errors += gitmodules_entry(c, &cur);
		}

		/*
		 * Git reads the next entry before it looks at this one's
		 * mode and order: when that fails, neither is looked at.
		 */
		have_cur = cur.next < len;
		if (have_cur && !tree_decode(buf, len, cur.next, o->algo, &next, &msg)) {
			if (o->tree_error) {
				pthread_mutex_lock(&o->lock);
				o->tree_error(c->oid, msg, o->tree_error_data);
				pthread_mutex_unlock(&o->lock);
			}
			errors += report(o, c->oid, c->type, FSCK_MSG_BAD_TREE,
					 "cannot be parsed as a tree");
			break;
		}

		switch (cur.mode) {
		case S_IFREG_ | 0755:
		case S_IFREG_ | 0644:
		case S_IFLNK_:
		case S_IFDIR_:
		case S_IFGITLINK_:
			break;
		case S_IFREG_ | 0664:
			/* Early git wrote these; only strict checks refuse them. */
			if (!o->strict)
				break;
			/* fallthrough */
		default:
			bad_mode = true;
		}
		if (have_prev) {
			switch (check_order(&prev, &cur, &stack)) {
			case ORDER_UNSORTED:
				unsorted = true;
				break;
			case ORDER_DUP:
				dup = true;
				break;
			case ORDER_OK:
				break;
			}
		}
		prev = cur;
		have_prev = true;
		if (have_cur)
			cur = next;
	}
	free(stack.names);
	free(stack.lens);

	if (null_oid)
		errors += report(o, c->oid, c->type, FSCK_MSG_NULL_SHA1,
				 "contains entries pointing to null sha1");
	if (full_path)
		errors += report(o, c->oid, c->type, FSCK_MSG_FULL_PATHNAME,
				 "contains full pathnames");
	if (empty_name)
		errors += report(o, c->oid, c->type, FSCK_MSG_EMPTY_NAME,
				 "contains empty pathname");
	if (dot)
		errors += report(o, c->oid, c->type, FSCK_MSG_HAS_DOT, "contains '.'");
	if (dotdot)
		errors += report(o, c->oid, c->type, FSCK_MSG_HAS_DOTDOT, "contains '..'");
	if (dotgit)
		errors += report(o, c->oid, c->type, FSCK_MSG_HAS_DOTGIT, "contains '.git'");
	if (zero_pad)
		errors += report(o, c->oid, c->type, FSCK_MSG_ZERO_PADDED_FILEMODE,
				 "contains zero-padded file modes");
	if (bad_mode)
		errors += report(o, c->oid, c->type, FSCK_MSG_BAD_FILEMODE,
				 "contains bad file modes");
	if (dup)
		errors += report(o, c->oid, c->type, FSCK_MSG_DUPLICATE_ENTRIES,
				 "contains duplicate file entries");
	if (unsorted)
		errors += report(o, c->oid, c->type, FSCK_MSG_TREE_NOT_SORTED,
				 "not properly sorted");
	if (large_name)
		errors += report(o, c->oid, c->type, FSCK_MSG_LARGE_PATHNAME,
				 "contains excessively large pathname");
	return errors;
}

/* ---- .gitmodules -------------------------------------------------- */

static bool is_dir_sep_any(int ch)
{
	return ch == '/' || ch == '\\';
}

/*
 * A submodule name becomes a directory under .git/modules: it must not
 * be empty nor climb out with a ".." component (on any platform's
 * separators).
 */
bool fsck_submodule_name_ok(const char *name)
{
	const char *p = name;

	if (!*name)
		return false;
	for (;;) {
		/* p is at the start of a component */
		if (p[0] == '.' && p[1] == '.' && (!p[2] || is_dir_sep_any(p[2])))
			return false;
		while (*p && !is_dir_sep_any(*p))
			p++;
		if (!*p)
			return true;
		p++;
	}
}

/* The byte that "%XY" at p encodes, or -1. */
static int hex_pair(const char *p)
{
	int hi = hex_digit_value((unsigned char)p[0]);
	int lo = hi < 0 ? -1 : hex_digit_value((unsigned char)p[1]);
	return lo < 0 ? -1 : hi << 4 | lo;
}

/*
 * %-decode url as git's url_decode() does: the part before the first
 * ':' is kept as it is (a scheme), "%XY" becomes its byte except for
 * "%00". Then whether the result, read as a C string, holds a newline.
 */
static bool decoded_has_newline(const char *url)
{
	const char *p = strchr(url, ':');

	p = (p && p > url) ? p : url;
	for (; *p; p++) {
		int ch = (unsigned char)*p;
		if (ch == '%' && p[1] && p[2]) {
			int val = hex_pair(p + 1);
			if (val > 0) {
				ch = val;
				p += 2;
			}
		}
		if (ch == '\n')
			return true;
	}
	return false;
}

#define URL_ALPHA "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define URL_DIGIT "0123456789"
#define URL_ALPHADIGIT URL_ALPHA URL_DIGIT
#define URL_SCHEME_CHARS URL_ALPHADIGIT "+.-"
#define URL_HOST_CHARS URL_ALPHADIGIT ".-_[:]"
#define URL_UNSAFE_CHARS " <>\"%{}|\\^`"
#define URL_RESERVED ":/?#[]@!$&'()*+,;="

/*
 * Append from[0..len) to out, decoding %-escapes of characters that
 * need none and escaping those that do (controls, bytes above 0x7e,
 * URL_UNSAFE_CHARS, and escaped delimiters from keep_escaped stay
 * escaped), as git normalises URLs. False on a '%' not followed by two
 * hex digits.
 */
static bool append_normalized(struct strbuf *out, const char *from, size_t len,
			      const char *keep_escaped)
{
	while (len) {
		int ch = (unsigned char)*from++;
		bool was_escaped = false;

		len--;
		if (ch == '%') {
			if (len < 2 || (ch = hex_pair(from)) < 0)
				return false;
			from += 2;
			len -= 2;
			was_escaped = true;
		}
		if (ch <= 0x1f || ch >= 0x7f || strchr(URL_UNSAFE_CHARS, ch) ||
		    (was_escaped && strchr(keep_escaped, ch)))
			strbuf_addf(out, "%%%02X", (unsigned)ch);
		else
			strbuf_addch(out, (char)ch);
	}
	return true;
}

/*
 * Normalise a scheme://[user[:pass]@]host[:port][/path][?query][#frag]
 * URL into out as git's url_normalize() does, or return false where
 * git finds it invalid: no scheme or "://", a bad %-escape, no host
 * (except for file:), a bad character in the host, a port that is not
 * 1-65535, a ".." above the root of the path.
 */
static bool url_normalize(const char *url, struct strbuf *out)
{
	size_t spanned = strspn(url, URL_SCHEME_CHARS);
	const char *slash, *at, *colon;
	size_t path_off;
	bool found_host = false;

	if (!spanned || !strchr(URL_ALPHA, url[0]) || url[0] == '\0' ||
	    url[spanned] != ':' || url[spanned + 1] != '/' || url[spanned + 2] != '/')
		return false;
	for (size_t pos = 0; pos < spanned; pos++)
		strbuf_addch(out, (char)lower((unsigned char)url[pos]));
	strbuf_addstr(out, "://");
	url += spanned + 3;

	slash = url + strcspn(url, "/?#");
	at = strchr(url, '@');
	if (at && at < slash) {
		if (!append_normalized(out, url, (size_t)(at - url), URL_RESERVED))
			return false;
		strbuf_addch(out, '@');
		url = at + 1;
	}

	if (!*url || strchr(":/?#", *url)) {
		if (!starts_with(out->buf, "file:"))
			return false;
	} else {
		found_host = true;
	}
	colon = slash - 1;
	while (colon > url && *colon != ':' && *colon != ']')
		colon--;
	if (colon < url || *colon != ':')
		colon = slash;
	else if (!found_host && colon + 1 != slash)
		return false; /* a file: URL may not have a port */
	if ((size_t)(colon - url) > strspn(url, URL_HOST_CHARS))
		return false;
	for (; url < colon; url++)
		strbuf_addch(out, (char)lower((unsigned char)*url));

	if (colon < slash) {
		url++;
		url += strspn(url, "0");
		if (url == slash && url[-1] == '0')
			url--;
		if (url == slash) {
			/* an empty port is the default one */
		} else if (slash - url == 2 && starts_with(out->buf, "http:") &&
			   !strncmp(url, "80", 2)) {
			/* the default port of http */
		} else if (slash - url == 3 && starts_with(out->buf, "https:") &&
			   !strncmp(url, "443", 3)) {
			/* the default port of https */
		} else {
			unsigned long port = 0;
			if ((size_t)(slash - url) > strspn(url, URL_DIGIT))
				return false;
			if (slash - url <= 5)
				port = strtoul(url, NULL, 10);
			if (!port || port > 65535)
				return false;
			strbuf_addch(out, ':');
			strbuf_add(out, url, (size_t)(slash - url));
		}
		url = slash;
	}

	/* The path, with "." and ".." segments resolved. */
	path_off = out->len;
	strbuf_addch(out, '/');
	if (*url == '/')
		url++;
	for (;;) {
		size_t seg_off = out->len;
		const char *next = url + strcspn(url, "/?#");
		bool skip_slash = false;

		if (!append_normalized(out, url, (size_t)(next - url), URL_RESERVED))
			return false;
		if (!strcmp(out->buf + seg_off, ".")) {
			if (seg_off == path_off + 1) {
				strbuf_setlen(out, out->len - 1);
				skip_slash = true;
			} else {
				strbuf_setlen(out, out->len - 2);
			}
		} else if (!strcmp(out->buf + seg_off, "..")) {
			size_t prev = out->len - 3;
			if (prev == path_off)
				return false;
			while (out->buf[--prev] != '/')
				;
			if (prev == path_off) {
				strbuf_setlen(out, path_off + 1);
				skip_slash = true;
			} else {
				strbuf_setlen(out, prev);
			}
		}
		url = next;
		if (*url != '/')
			break;
		url++;
		if (!skip_slash)
			strbuf_addch(out, '/');
	}

	if (*url == '?') {
		const char *hash = url + strcspn(url, "#");
		strbuf_addch(out, '?');
		url++;
		if (!append_normalized(out, url, (size_t)(hash - url), URL_RESERVED))
			return false;
		url = hash;
	}
	if (*url == '#') {
		strbuf_addch(out, '#');
		url++;
		if (!append_normalized(out, url, strlen(url), URL_RESERVED))
			return false;
	}
	return true;
}

static bool starts_with_dot_slash(const char *p)
{
	return p[0] == '.' && is_dir_sep_any(p[1]);
}

static bool starts_with_dot_dot_slash(const char *p)
{
	return p[0] == '.' && p[1] == '.' && is_dir_sep_any(p[2]);
}

/*
 * A submodule url is refused when it could be taken for an option, or
 * when it would smuggle a newline into a credential request (git's
 * credential protocol is line-based), or when a relative url climbs
 * out of its base into the scheme or the host ("../../:evil.com"),
 * or when a curl url (http, https, ftp, ftps; also "http::<url>") does
 * not normalise. Other urls (ssh, file, scp-like) are accepted.
 */
bool fsck_submodule_url_ok(const char *url)
{
	const char *curl_url = NULL;

	if (url[0] == '-')
		return false;
	if (starts_with_dot_slash(url) || starts_with_dot_dot_slash(url) ||
	    starts_with(url, "git://")) {
		const char *p = url;
		unsigned dotdots = 0;

		if (decoded_has_newline(url))
			return false;
		for (;;) {
			if (starts_with_dot_dot_slash(p)) {
				dotdots++;
				p += 3;
			} else if (starts_with_dot_slash(p)) {
				p += 2;
			} else {
				break;
			}
		}
		return !(dotdots && (*p == ':' || *p == '/'));
	}
	if (!skip_prefix(url, "http::", &curl_url) && !skip_prefix(url, "https::", &curl_url) &&
	    !skip_prefix(url, "ftp::", &curl_url) && !skip_prefix(url, "ftps::", &curl_url)) {
		if (starts_with(url, "http://") || starts_with(url, "https://") ||
		    starts_with(url, "ftp://") || starts_with(url, "ftps://"))
			curl_url = url;
	}
	if (curl_url) {
		struct strbuf normalized = STRBUF_INIT;
		bool ok = url_normalize(curl_url, &normalized) &&
			  !decoded_has_newline(normalized.buf);
		strbuf_release(&normalized);
		return ok;
	}
	return true;
}

struct gitmodules_ctx {
	struct check *c;
	int errors;
};

static int gitmodules_entry_fn(const char *key, const char *value, void *data)
{
	struct gitmodules_ctx *gc = data;
	struct check *c = gc->c;
	const char *rest, *dot;
	char *name;

	/* submodule.<name>.<key>: the name may hold dots, the key none. */
	if (!skip_prefix(key, "submodule.", &rest))
		return 0;
	dot = strrchr(rest, '.');
	if (!dot)
		return 0;
	name = xstrndup(rest, (size_t)(dot - rest));
	key = dot + 1;
	if (!fsck_submodule_name_ok(name))
		gc->errors += report(c->o, c->oid, c->type, FSCK_MSG_GITMODULES_NAME,
				     "disallowed submodule name: %s", name);
	if (!strcmp(key, "url") && value && !fsck_submodule_url_ok(value))
		gc->errors += report(c->o, c->oid, c->type, FSCK_MSG_GITMODULES_URL,
				     "disallowed submodule url: %s", value);
	if (!strcmp(key, "path") && value && value[0] == '-')
		gc->errors += report(c->o, c->oid, c->type, FSCK_MSG_GITMODULES_PATH,
				     "disallowed submodule path: %s", value);
	/* "!command" runs a shell command on "git submodule update". */
	if (!strcmp(key, "update") && value && value[0] == '!')
		gc->errors += report(c->o, c->oid, c->type, FSCK_MSG_GITMODULES_UPDATE,
				     "disallowed submodule update setting: %s", value);
	free(name);
	return 0;
}

/*
 * Whether oid is queued in found, marking it done; the queues are
 * shared between threads.
 */
static bool take_queued(struct fsck_options *o, struct oid_set *found,
			struct oid_set *done, const struct object_id *oid)
{
	bool queued;

	pthread_mutex_lock(&o->lock);
	queued = oid_set_contains(found, oid);
	if (queued)
		oid_set_insert(done, oid);
	pthread_mutex_unlock(&o->lock);
	return queued;
}

static int check_blob(struct check *c, const char *buf, size_t len)
{
	struct fsck_options *o = c->o;
	int errors = 0;

	if (take_queued(o, &o->gitmodules_found, &o->gitmodules_done, c->oid)) {
		struct gitmodules_ctx gc = { .c = c };
		struct gp_error err = GP_ERROR_INIT;

		/* No content: the caller found it too big to load. */
		if (!buf)
			return report(o, c->oid, c->type, FSCK_MSG_GITMODULES_LARGE,
				      ".gitmodules too large to parse");
		if (config_parse_blob(".gitmodules", buf, len, gitmodules_entry_fn, &gc, &err) < 0)
			gc.errors += report(o, c->oid, c->type, FSCK_MSG_GITMODULES_PARSE,
					    "could not parse gitmodules blob");
		gp_error_clear(&err);
		errors += gc.errors;
	}
	if (take_queued(o, &o->gitattributes_found, &o->gitattributes_done, c->oid)) {
		if (!buf || len > ATTR_MAX_FILE_SIZE)
			return errors + report(o, c->oid, c->type, FSCK_MSG_GITATTRIBUTES_LARGE,
					       ".gitattributes too large to parse");
		/* Lines as git's attribute reader sees them: up to a NUL. */
		for (size_t pos = 0; pos < len && buf[pos];) {
			size_t line = pos;
			while (pos < len && buf[pos] && buf[pos] != '\n')
				pos++;
			if (pos - line >= ATTR_MAX_LINE_LENGTH) {
				errors += report(o, c->oid, c->type, FSCK_MSG_GITATTRIBUTES_LINE_LENGTH,
						 ".gitattributes has too long lines to parse");
				break;
			}
			if (pos < len && buf[pos] == '\n')
				pos++;
		}
	}
	return errors;
}

/* ---- the entry points --------------------------------------------- */

int fsck_object(struct fsck_options *o, const struct object_id *oid,
		enum object_type type, const void *buf, size_t len)
{
	struct check c = { .o = o, .oid = oid, .type = type };

	switch (type) {
	case OBJ_COMMIT:
		return check_commit(&c, buf, len);
	case OBJ_TREE:
		return check_tree(&c, buf, len);
	case OBJ_TAG:
		return check_tag(&c, buf, len);
	case OBJ_BLOB:
		return check_blob(&c, buf, len);
	default:
		return report(o, oid, type, FSCK_MSG_UNKNOWN_TYPE,
			      "unknown type '%d' (internal fsck error)", (int)type);
	}
}

static bool is_pending(const struct oid_set *found, const struct oid_set *done,
		       const struct object_id *oid)
{
	return oid_set_contains(found, oid) && !oid_set_contains(done, oid);
}

size_t fsck_pending_nr(struct fsck_options *o)
{
	size_t nr = 0;

	pthread_mutex_lock(&o->lock);
	for (size_t pos = 0; pos < o->gitmodules_found.cap; pos++)
		nr += o->gitmodules_found.used[pos] &&
		      !oid_set_contains(&o->gitmodules_done, &o->gitmodules_found.items[pos]);
	/* A blob pending under both names is read once. */
	for (size_t pos = 0; pos < o->gitattributes_found.cap; pos++) {
		const struct object_id *oid = &o->gitattributes_found.items[pos];
		nr += o->gitattributes_found.used[pos] &&
		      !oid_set_contains(&o->gitattributes_done, oid) &&
		      !is_pending(&o->gitmodules_found, &o->gitmodules_done, oid);
	}
	pthread_mutex_unlock(&o->lock);
	return nr;
}

static int cmp_oid(const void *a, const void *b)
{
	return oidcmp(a, b);
}

/* The ids of found not in done, sorted, into a malloc'd array. */
static struct object_id *pending_ids(struct fsck_options *o, struct oid_set *found,
				     struct oid_set *done, size_t *nr)
{
	struct object_id *ids;

	pthread_mutex_lock(&o->lock);
	ids = xcalloc(found->nr ? found->nr : 1, sizeof(*ids));
	*nr = 0;
	for (size_t pos = 0; pos < found->cap; pos++)
		if (found->used[pos] && !oid_set_contains(done, &found->items[pos]))
			ids[(*nr)++] = found->items[pos];
	pthread_mutex_unlock(&o->lock);
	qsort(ids, *nr, sizeof(*ids), cmp_oid);
	return ids;
}

static int finish_queue(struct fsck_options *o, struct oid_set *found,
			struct oid_set *done, enum fsck_msg_id missing,
			enum fsck_msg_id not_blob, const char *what,
			fsck_read_fn *read, void *data)
{
	size_t nr;
	struct object_id *ids = pending_ids(o, found, done, &nr);
	int errors = 0;

	for (size_t pos = 0; pos < nr; pos++) {
		enum object_type type = OBJ_NONE;
		void *buf = NULL;
		size_t len = 0;
		int ret;

		/* Checked meanwhile, as a blob queued under both names. */
		pthread_mutex_lock(&o->lock);
		ret = oid_set_contains(done, &ids[pos]);
		pthread_mutex_unlock(&o->lock);
		if (ret)
			continue;
		ret = read(&ids[pos], &type, &buf, &len, data);
		if (ret == GP_ENOTFOUND) {
			errors += report(o, &ids[pos], OBJ_BLOB, missing,
					 "unable to read %s blob", what);
			continue;
		}
		if (ret > 0)
			continue;
		if (ret < 0) {
			free(buf);
			free(ids);
			return ret;
		}
		if (type == OBJ_BLOB) {
			struct check c = { .o = o, .oid = &ids[pos], .type = OBJ_BLOB };
			errors += check_blob(&c, buf, len);
		} else {
			errors += report(o, &ids[pos], type, not_blob,
					 "non-blob found at %s", what);
		}
		free(buf);
	}
	free(ids);
	return errors;
}

int fsck_finish(struct fsck_options *o, fsck_read_fn *read, void *data)
{
	int errors, more;

	errors = finish_queue(o, &o->gitmodules_found, &o->gitmodules_done,
			      FSCK_MSG_GITMODULES_MISSING, FSCK_MSG_GITMODULES_BLOB,
			      ".gitmodules", read, data);
	if (errors < 0)
		goto out;
	more = finish_queue(o, &o->gitattributes_found, &o->gitattributes_done,
			    FSCK_MSG_GITATTRIBUTES_MISSING, FSCK_MSG_GITATTRIBUTES_BLOB,
			    ".gitattributes", read, data);
	errors = more < 0 ? more : errors + more;
out:
	oid_set_clear(&o->gitmodules_found);
	oid_set_clear(&o->gitmodules_done);
	oid_set_clear(&o->gitattributes_found);
	oid_set_clear(&o->gitattributes_done);
	return errors;
}

/* ---- git's parser, and links -------------------------------------- */

/*
 * The commit header as git's parser reads it: "tree <hex>" LF with at
 * least one byte after it, then "parent <hex>" LF lines, each with at
 * least one byte after it. fn gets the tree and the parents.
 */
static int parse_commit_links(const char *buf, size_t len, const struct object_id *oid,
			      int algo, fsck_link_fn *fn, void *data,
			      struct strbuf *message)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;
	size_t tree_len = hexsz + 5, parent_len = hexsz + 7;
	char hex[GP_MAX_HEXSZ + 1];
	struct object_id link;
	size_t pos;
	int ret;

	if (len <= tree_len + 1 || memcmp(buf, "tree ", 5) || buf[tree_len] != '\n') {
		strbuf_addf(message, "bogus commit object %s", oid_to_hex_r(hex, oid));
		return GP_ECORRUPT;
	}
	if (hex_to_oid(buf + 5, algo, &link)) {
		strbuf_addf(message, "bad tree pointer in commit %s", oid_to_hex_r(hex, oid));
		return GP_ECORRUPT;
	}
	if (fn && (ret = fn(&link, OBJ_TREE, data)))
		return ret;
	pos = tree_len + 1;
	while (len - pos > parent_len && !memcmp(buf + pos, "parent ", 7)) {
		if (len - pos <= parent_len + 1 || hex_to_oid(buf + pos + 7, algo, &link) ||
		    buf[pos + parent_len] != '\n') {
			strbuf_addf(message, "bad parents in commit %s", oid_to_hex_r(hex, oid));
			return GP_ECORRUPT;
		}
		pos += parent_len + 1;
		if (fn && (ret = fn(&link, OBJ_COMMIT, data)))
			return ret;
	}
	return 0;
}

/*
 * The tag header as git's parser reads it: "object <hex>" LF, "type
 * <type>" LF (a known type, under 20 bytes), "tag " and a line end.
 * git says nothing for most failures.
 */
static int parse_tag_links(const char *buf, size_t len, const struct object_id *oid,
			   int algo, fsck_link_fn *fn, void *data,
			   struct strbuf *message)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;
	const char *p = buf, *end = buf + len, *nl;
	char hex[GP_MAX_HEXSZ + 1];
	enum object_type type;
	struct object_id link;

	if (len < hexsz + 24 || memcmp(p, "object ", 7) ||
	    hex_to_oid(p + 7, algo, &link) || p[7 + hexsz] != '\n')
		return GP_ECORRUPT;
	p += 7 + hexsz + 1;
	if (!skip_str(&p, end, "type "))
		return GP_ECORRUPT;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || nl - p >= 20)
		return GP_ECORRUPT;
	/* git reads the type as a C string: it stops at a NUL. */
	type = type_from_name(p, strnlen(p, (size_t)(nl - p)));
	if (type == OBJ_BAD) {
		strbuf_addf(message, "unknown tag type '%.*s' in %s",
			    (int)strnlen(p, (size_t)(nl - p)), p, oid_to_hex_r(hex, oid));
		return GP_ECORRUPT;
	}
	p = nl + 1;
	if (end - p <= 4 || memcmp(p, "tag ", 4))
		return GP_ECORRUPT;
	p += 4;
	if (!memchr(p, '\n', (size_t)(end - p)))
		return GP_ECORRUPT;
	return fn ? fn(&link, type, data) : 0;
}

int fsck_parse_check(enum object_type type, const void *buf, size_t len,
		     const struct object_id *oid, struct strbuf *message)
{
	switch (type) {
	case OBJ_COMMIT:
		return parse_commit_links(buf, len, oid, oid->algo, NULL, NULL, message);
	case OBJ_TAG:
		return parse_tag_links(buf, len, oid, oid->algo, NULL, NULL, message);
	default:
		return 0;
	}
}

int fsck_links(enum object_type type, const void *buf, size_t len, int algo,
	       fsck_link_fn *fn, void *data, struct gp_error *err)
{
	struct object_id self;
	struct strbuf message = STRBUF_INIT;
	int ret = 0;

	/* The messages name the object; the caller says which it is. */
	oid_clear(&self, algo);
	switch (type) {
	case OBJ_COMMIT:
		ret = parse_commit_links(buf, len, &self, algo, fn, data, &message);
		break;
	case OBJ_TAG:
		ret = parse_tag_links(buf, len, &self, algo, fn, data, &message);
		break;
	case OBJ_TREE: {
		struct fsck_entry e;
		const char *msg;
		for (size_t pos = 0; pos < len && !ret; pos = e.next) {
			if (!tree_decode(buf, len, pos, algo, &e, &msg)) {
				strbuf_addstr(&message, msg);
				ret = GP_ECORRUPT;
				break;
			}
			/* Modes as git reads them when it walks. */
			switch (e.mode & S_IFMT_) {
			case S_IFDIR_:
				ret = fn(&e.oid, OBJ_TREE, data);
				break;
			case S_IFREG_:
			case S_IFLNK_:
				ret = fn(&e.oid, OBJ_BLOB, data);
				break;
			default:
				break; /* gitlinks, and what git reads as one */
			}
		}
		break;
	}
	default:
		break;
	}
	if (ret == GP_ECORRUPT)
		gp_error_set(err, GP_ECORRUPT, "%s",
			     message.len ? message.buf : "cannot parse the object");
	strbuf_release(&message);
	return ret;
}
