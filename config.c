/*
 * config.c: reading git's configuration files (see config.h, and the
 * "CONFIGURATION FILE" section of git-config(1) for the syntax).
 *
 * The parser makes one pass over a byte buffer through a bounded reader
 * (buf, len, pos): next_char() is the only place that touches the bytes,
 * and it reports the end of the buffer rather than reading past it.
 * Config text is not trusted: it may come from any repository a server
 * opens, and the fuzz target feeds it arbitrary bytes, NULs included.
 *
 * Behaviour follows git 2.39 where git documents it or where testing
 * git shows it, including its corners: a header may be followed by an
 * entry on the same line ("[core] bare"), CR before LF is dropped,
 * whitespace between words of a value is kept (one space per
 * whitespace byte), and trailing whitespace is dropped unless quoted.
 * Where git's behaviour is an accident (a NUL byte silently truncating
 * a value or a subsection), we refuse the line instead.
 *
 * Includes. A read (one file, one text, the standard files) is a list
 * of sources, each parsed in turn with its includes followed in place.
 * The list is kept for the read (struct load) because the first
 * hasconfig:remote.*.url condition reads every source again, in a mode
 * that stores nothing and collects the remote URLs, before it can be
 * answered. git-config(1) documents the conditions; where it is silent
 * (which path spelling gitdir: tries, "./" matched as plain text, which
 * files may not set a URL during that pass) we follow what git 2.39
 * and 2.55 do, found by running them.
 */
#include "config.h"
#include "error.h"
#include "path-patterns.h"
#include "strbuf.h"
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <unistd.h>

/* git allows this many nested includes; one more is an error. */
#define MAX_INCLUDE_DEPTH 10

#define CH_EOF (-1)

/*
 * Our own character classes: <ctype.h> depends on the locale and takes
 * int arguments that must be unsigned-char values, both traps for a
 * parser of untrusted bytes.
 */
static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_key_char(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

/* git's whitespace inside a line: SP, HT and a CR not before LF. */
static bool is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int to_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

struct reader {
	const unsigned char *buf;
	size_t len, pos;
	size_t linenr;    /* 1-based line of the byte at pos */
	size_t char_line; /* line of the character next_char() last returned */
	/*
	 * Read as git 2.55 reads a blob: NUL bytes kept in values and
	 * subsections (its callers see the string cut at the NUL), blanks
	 * inside a value kept as they are rather than made spaces.
	 */
	bool blob;
};

/*
 * The next character, with CRLF read as LF, or CH_EOF at the end. An LF
 * counts as part of the line it ends, so errors found at a line's end
 * name that line.
 */
static int next_char(struct reader *rd)
{
	int c;

	rd->char_line = rd->linenr;
	if (rd->pos >= rd->len)
		return CH_EOF;
	c = rd->buf[rd->pos++];
	if (c == '\r' && rd->pos < rd->len && rd->buf[rd->pos] == '\n') {
		c = '\n';
		rd->pos++;
	}
	if (c == '\n')
		rd->linenr++;
	return c;
}

/* Where a read takes its entries from, in order. */
enum source_kind {
	SOURCE_FILE,     /* the file name (skipped when missing) */
	SOURCE_WORKTREE, /* the file name, when the file enabler, read
			  * without includes, sets extensions.worktreeConfig */
	SOURCE_BUF,      /* the text buf[0..len), called name */
	SOURCE_ENTRY,    /* one entry: key name, value buf (config_set_add) */
	SOURCE_COMMAND,  /* GIT_CONFIG_COUNT..., then GIT_CONFIG_PARAMETERS */
};

struct source {
	enum source_kind kind;
	enum config_scope scope;
	const char *name;
	const char *buf;
	size_t len;
	const char *enabler;
};

/*
 * One read: its sources, and what their parses share, includes and the
 * hasconfig pass included.
 */
struct load {
	struct config_set *cs;
	const struct config_repo_info *repo; /* NULL: no repository */
	bool no_includes;
	const struct source *sources;
	size_t sources_nr;
	int worktree_enabled; /* SOURCE_WORKTREE: -1 until asked */
	/*
	 * While the file that enables it is read as a source of its own:
	 * its own (not included) extensions.worktreeConfig, so that the
	 * file is not read a second time to ask.
	 */
	bool wt_tracking, wt_seen;
	char *wt_value;
	/* hasconfig:remote.*.url: every remote URL the sources set. */
	bool urls_read;
	char **urls;
	size_t urls_nr, urls_alloc;
	/* onbranch: the repository's answer, asked once. */
	bool branch_asked;
	char *branch;
};

struct parse_ctx {
	struct config_set *cs;
	/* When set, entries go to fn (include.path is not followed). */
	config_entry_fn *fn;
	void *fn_data;
	struct load *ld;    /* NULL when fn is set */
	/*
	 * The hasconfig pass: nothing is stored, remote URLs are
	 * collected, hasconfig conditions hold.
	 */
	bool scan;
	/*
	 * Inside a file that an includeIf brought in during that pass (or
	 * a hasconfig one at any time): remote.<name>.url is refused.
	 */
	bool urls_forbidden;
	/* Read as git reads a blob: NULs kept, no byte order mark. */
	bool blob;
	enum config_scope scope;
	const char *path;   /* the file being read; NULL for memory or -c */
	const char *origin; /* names the source in messages */
	int depth;          /* include nesting; 0 for the outermost source */
	int bad_code;       /* GP_ECORRUPT for text, GP_EINVAL for -c */
	size_t linenr;      /* line of the entry being added; 0 for -c */
	struct gp_error *err;
};

/* What a parse step can return besides 0 and a negative GP_E* code. */
#define PARSE_SYNTAX 1

static int parse_text(struct parse_ctx *ctx, const char *buf, size_t len);

void config_set_init(struct config_set *cs)
{
	cs->items = NULL;
	cs->nr = cs->alloc = 0;
}

/* Drop the entries from nr on: undoes a failed parse. */
static void config_set_truncate(struct config_set *cs, size_t nr)
{
	while (cs->nr > nr) {
		struct config_entry *e = &cs->items[--cs->nr];
		free(e->key);
		free(e->value);
		free(e->file);
	}
}

void config_set_release(struct config_set *cs)
{
	config_set_truncate(cs, 0);
	free(cs->items);
	config_set_init(cs);
}

/*
 * Config files are small; the bound keeps an include of /dev/zero (or
 * a runaway generated file) from eating the server's memory.
 */
#define CONFIG_FILE_MAX (32u << 20)

/* Reads a config file into text; 1 when it does not exist. */
static int read_config_text(const char *path, struct strbuf *text,
			    struct gp_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		return gp_error_errno(err, "could not read config file '%s'", path);
	}
	/* Not fstat's size: /dev/null and pipes are valid config files. */
	for (;;) {
		ssize_t got;

		strbuf_grow(text, 8192);
		got = read(fd, text->buf + text->len, text->alloc - text->len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = gp_error_errno(err, "could not read config file '%s'", path);
			break;
		}
		if (!got)
			break;
		strbuf_setlen(text, text->len + (size_t)got);
		if (text->len > CONFIG_FILE_MAX) {
			ret = gp_error_set(err, GP_EIO,
					   "config file '%s' is larger than %u bytes",
					   path, CONFIG_FILE_MAX);
			break;
		}
	}
	close(fd);
	return ret;
}

/* Says where in the including text a failed include.path was. */
static int include_error(struct parse_ctx *ctx, int code)
{
	if (ctx->linenr)
		gp_error_prefix(ctx->err, "bad config line %zu in %s%s",
				ctx->linenr, ctx->path ? "file " : "",
				ctx->origin);
	return code;
}

/*
 * include.path: "~/x" and "~user/x" are expanded, a relative path is
 * taken from the directory of the including file, and the named file
 * is read in place (a missing file is ignored, as in git).
 * Errors in the included text name their own file and line; the rest
 * are reported at the include.path line. forbid_urls: the file may not
 * set a remote URL, nor may any file it includes.
 */
static int handle_include(struct parse_ctx *ctx, const char *value,
			  bool forbid_urls)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	struct parse_ctx sub;
	char *user = NULL;
	int ret = 0;

	if (!value) {
		ret = include_error(ctx, gp_error_set(ctx->err, ctx->bad_code,
				    "missing value for 'include.path'"));
		goto out;
	}
	if (value[0] == '~') {
		size_t user_len = strcspn(value + 1, "/");
		const char *home;

		if (!user_len) {
			home = getenv("HOME");
		} else {
			struct passwd *pw;
			user = xstrndup(value + 1, user_len);
			pw = getpwnam(user);
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home) {
			ret = include_error(ctx, gp_error_set(ctx->err, ctx->bad_code,
					    "could not expand include path '%s'", value));
			goto out;
		}
		strbuf_addstr(&path, home);
		strbuf_addstr(&path, value + 1 + user_len);
	} else if (value[0] != '/') {
		const char *slash;
		if (!ctx->path) {
			ret = include_error(ctx, gp_error_set(ctx->err, ctx->bad_code,
					    "relative config includes must come from files"));
			goto out;
		}
		slash = strrchr(ctx->path, '/');
		if (slash)
			strbuf_add(&path, ctx->path, slash - ctx->path + 1);
		strbuf_addstr(&path, value);
	} else {
		strbuf_addstr(&path, value);
	}

	ret = read_config_text(path.buf, &text, ctx->err);
	if (ret) {
		if (ret < 0)
			include_error(ctx, ret);
		else
			ret = 0;
		goto out;
	}
	/* Checked once the file exists: a missing deep include is ignored. */
	if (ctx->depth + 1 > MAX_INCLUDE_DEPTH) {
		ret = include_error(ctx, CORRUPT(ctx->err,
				    "exceeded maximum include depth (%d) while including '%s'; circular includes?",
				    MAX_INCLUDE_DEPTH, path.buf));
		goto out;
	}
	sub = *ctx;
	sub.path = path.buf;
	sub.origin = path.buf;
	sub.depth = ctx->depth + 1;
	sub.bad_code = GP_ECORRUPT;
	sub.urls_forbidden = ctx->urls_forbidden || forbid_urls;
	ret = parse_text(&sub, text.buf, text.len);
out:
	free(user);
	strbuf_release(&text);
	strbuf_release(&path);
	return ret;
}

/* ---- conditional includes ---------------------------------------------- */

/*
 * The absolute path with symbolic links resolved, as git resolves the
 * $HOME of a "~/" pattern: the last component may be missing (it is
 * kept as written), anything else missing is an error, and so is "".
 * Caller frees *out.
 */
static int real_path_last_may_miss(const char *path, char **out,
				   struct gp_error *err)
{
	char *dir = NULL, *dir_real = NULL;
	const char *base;
	size_t len = strlen(path);
	int saved;

	*out = NULL;
	if (!len)
		return gp_error_set(err, GP_EINVAL, "The empty string is not a valid path");
	*out = realpath(path, NULL);
	if (*out)
		return 0;
	saved = errno;
	if (saved != ENOENT)
		goto fail;
	while (len > 1 && path[len - 1] == '/')
		len--;
	for (base = path + len; base > path && base[-1] != '/'; base--)
		;
	if (base == path)
		dir = xstrdup(".");
	else if (base - 1 == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, base - 1 - path);
	dir_real = realpath(dir, NULL);
	if (!dir_real) {
		saved = errno;
		goto fail;
	}
	*out = xstrfmt("%s%s%.*s", dir_real,
		       ends_with(dir_real, "/") ? "" : "/",
		       (int)(path + len - base), base);
	free(dir_real);
	free(dir);
	return 0;
fail:
	free(dir);
	return gp_error_set(err, GP_EINVAL, "Invalid path '%s': %s", path,
			    strerror(saved));
}

/*
 * A pattern's leading "~/" or "~user/" expanded into pat: 1, 0 when
 * there is nothing to expand it to ($HOME unset, an unknown user: git
 * then keeps the pattern as written), or a GP_E* error.
 */
static int expand_tilde(const char *data, struct strbuf *pat,
			struct gp_error *err)
{
	size_t user_len = strcspn(data + 1, "/");

	if (!user_len) {
		const char *home = getenv("HOME");
		char *real;
		int ret;

		if (!home)
			return 0;
		ret = real_path_last_may_miss(home, &real, err);
		if (ret < 0)
			return ret;
		strbuf_addstr(pat, real);
		free(real);
	} else {
		char *user = xstrndup(data + 1, user_len);
		struct passwd *pw = getpwnam(user);

		free(user);
		if (!pw)
			return 0;
		strbuf_addstr(pat, pw->pw_dir);
	}
	strbuf_addstr(pat, data + 1 + user_len);
	return 1;
}

/*
 * The glob of a gitdir: or worktree: pattern into pat (config.h says
 * how it is built), and in *literal the length of its start that must
 * match as plain text (a "./" directory: its own '*' or '[' are not
 * wildcards; an expanded $HOME's are, as in git). Returns 1, 0 when the
 * pattern can match nothing here ("./" outside a file), or a GP_E*
 * error.
 */
static int path_condition_glob(struct parse_ctx *ctx, const char *data,
			       struct strbuf *pat, size_t *literal)
{
	int ret;

	*literal = 0;
	if (data[0] == '~') {
		ret = expand_tilde(data, pat, ctx->err);
		if (ret < 0)
			return ret;
		if (!ret)
			strbuf_addstr(pat, data);
	} else if (data[0] == '.' && data[1] == '/') {
		char *real;

		/*
		 * git says "relative config include conditionals must come
		 * from files" here, and goes on.
		 */
		if (!ctx->path)
			return 0;
		real = realpath(ctx->path, NULL);
		if (!real)
			return 0;
		strbuf_add(pat, real, strrchr(real, '/') - real + 1);
		*literal = pat->len;
		strbuf_addstr(pat, data + 2);
		free(real);
	} else {
		strbuf_addstr(pat, data);
	}
	if (pat->buf[0] != '/')
		strbuf_insert(pat, 0, "**/", 3);
	if (pat->buf[pat->len - 1] == '/')
		strbuf_addstr(pat, "**");
	return 1;
}

enum cond_match { COND_NO_MATCH, COND_MATCH, COND_PREFIX_DIFFERS };

static enum cond_match path_matches(const struct strbuf *pat, size_t literal,
				    const char *text, bool icase)
{
	size_t len = strlen(text);

	if (len < literal)
		return COND_PREFIX_DIFFERS;
	for (size_t pos = 0; pos < literal; pos++) {
		int a = (unsigned char)pat->buf[pos], b = (unsigned char)text[pos];
		if (icase ? to_lower(a) != to_lower(b) : a != b)
			return COND_PREFIX_DIFFERS;
	}
	if (glob_match(pat->buf + literal, pat->len - literal, text + literal,
		       len - literal, GLOB_PATHNAME | (icase ? GLOB_ICASE : 0)))
		return COND_MATCH;
	return COND_NO_MATCH;
}

/*
 * gitdir: tries the resolved git directory, then git's spelling of it;
 * worktree: only the resolved top of the work tree (spelled is NULL).
 * As in git, a literal "./" prefix that the resolved path does not
 * start with ends the matching: the spelled path is not tried then.
 */
static int path_condition_holds(struct parse_ctx *ctx, const char *data,
				const char *resolved, const char *spelled,
				bool icase)
{
	struct strbuf pat = STRBUF_INIT;
	enum cond_match m = COND_NO_MATCH;
	size_t literal;
	int ret;

	if (!resolved)
		return 0;
	ret = path_condition_glob(ctx, data, &pat, &literal);
	if (ret > 0) {
		m = path_matches(&pat, literal, resolved, icase);
		if (m == COND_NO_MATCH && spelled)
			m = path_matches(&pat, literal, spelled, icase);
		ret = m == COND_MATCH;
	}
	strbuf_release(&pat);
	return ret;
}

static bool onbranch_holds(struct load *ld, const char *data)
{
	const struct config_repo_info *repo = ld->repo;
	struct strbuf pat = STRBUF_INIT;
	bool holds;

	if (!repo || !repo->current_branch)
		return false;
	if (!ld->branch_asked) {
		ld->branch = repo->current_branch(repo->data);
		ld->branch_asked = true;
	}
	if (!ld->branch)
		return false;
	strbuf_addstr(&pat, data);
	if (ends_with(pat.buf, "/"))
		strbuf_addstr(&pat, "**");
	holds = glob_match(pat.buf, pat.len, ld->branch, strlen(ld->branch),
			   GLOB_PATHNAME);
	strbuf_release(&pat);
	return holds;
}

/* remote.<name>.url, <name> any subsection, even "" or dotted. */
static bool is_remote_url_key(const char *key)
{
	return starts_with(key, "remote.") && ends_with(key, ".url") &&
	       strlen(key) >= strlen("remote..url");
}

static int read_sources(struct load *ld, bool scan, struct gp_error *err);

static int hasconfig_holds(struct parse_ctx *ctx, const char *data)
{
	struct load *ld = ctx->ld;

	/* In the pass that collects the URLs, every such file is read. */
	if (ctx->scan)
		return 1;
	if (!ld->urls_read) {
		int ret;

		ld->urls_read = true;
		ret = read_sources(ld, true, ctx->err);
		if (ret < 0)
			return ret;
	}
	for (size_t idx = 0; idx < ld->urls_nr; idx++)
		if (glob_match(data, strlen(data), ld->urls[idx],
			       strlen(ld->urls[idx]), GLOB_PATHNAME))
			return 1;
	return 0;
}

/*
 * Whether the includeIf condition cond holds: 1, 0, or a GP_E* error.
 * *hasconfig is set for a hasconfig one. Unknown conditions never hold.
 */
static int condition_holds(struct parse_ctx *ctx, const char *cond,
			   bool *hasconfig)
{
	const struct config_repo_info *repo = ctx->ld->repo;
	const char *data;

	*hasconfig = false;
	if (skip_prefix(cond, "gitdir:", &data))
		return path_condition_holds(ctx, data, repo ? repo->gitdir : NULL,
					    repo ? repo->gitdir_spelled : NULL, false);
	if (skip_prefix(cond, "gitdir/i:", &data))
		return path_condition_holds(ctx, data, repo ? repo->gitdir : NULL,
					    repo ? repo->gitdir_spelled : NULL, true);
	if (skip_prefix(cond, "worktree:", &data))
		return path_condition_holds(ctx, data, repo ? repo->worktree : NULL,
					    NULL, false);
	if (skip_prefix(cond, "worktree/i:", &data))
		return path_condition_holds(ctx, data, repo ? repo->worktree : NULL,
					    NULL, true);
	if (skip_prefix(cond, "onbranch:", &data))
		return onbranch_holds(ctx->ld, data);
	if (skip_prefix(cond, "hasconfig:remote.*.url:", &data)) {
		*hasconfig = true;
		return hasconfig_holds(ctx, data);
	}
	return 0;
}

/*
 * include.path and includeIf.<condition>.path, after the entry itself
 * was added (or, in the hasconfig pass, looked at).
 */
static int follow_include(struct parse_ctx *ctx, const char *key,
			  const char *value)
{
	const char *rest;
	bool hasconfig;
	char *cond;
	int ret;

	if (ctx->ld->no_includes)
		return 0;
	if (!strcmp(key, "include.path"))
		return handle_include(ctx, value, false);
	/* "includeif.<condition>.path": the condition is the subsection. */
	if (!skip_prefix(key, "includeif.", &rest) || !ends_with(rest, ".path"))
		return 0;
	cond = xstrndup(rest, strlen(rest) - strlen(".path"));
	ret = condition_holds(ctx, cond, &hasconfig);
	free(cond);
	if (ret <= 0)
		return ret;
	return handle_include(ctx, value, ctx->scan || hasconfig);
}

/* Takes ownership of key; copies value (which may be NULL). */
static int append_entry(struct parse_ctx *ctx, char *key, const char *value)
{
	struct config_set *cs = ctx->cs;
	struct config_entry *e;
	int ret;

	if (ctx->fn) {
		ret = ctx->fn(key, value, ctx->fn_data);
		free(key);
		return ret;
	}
	if (ctx->urls_forbidden && is_remote_url_key(key)) {
		free(key);
		return include_error(ctx, CORRUPT(ctx->err,
				     "remote URLs cannot be configured in file directly or indirectly included by includeIf.hasconfig:remote.*.url"));
	}
	if (ctx->scan) {
		struct load *ld = ctx->ld;

		if (value && is_remote_url_key(key)) {
			ALLOC_GROW(ld->urls, ld->urls_nr + 1, ld->urls_alloc);
			ld->urls[ld->urls_nr++] = xstrdup(value);
		}
		ret = follow_include(ctx, key, value);
		free(key);
		return ret;
	}
	if (ctx->ld && ctx->ld->wt_tracking && !ctx->depth &&
	    !strcmp(key, "extensions.worktreeconfig")) {
		free(ctx->ld->wt_value);
		ctx->ld->wt_value = value ? xstrdup(value) : NULL;
		ctx->ld->wt_seen = true;
	}
	ALLOC_GROW(cs->items, cs->nr + 1, cs->alloc);
	e = &cs->items[cs->nr++];
	e->key = key;
	e->value = value ? xstrdup(value) : NULL;
	e->scope = ctx->scope;
	e->file = ctx->path ? xstrdup(ctx->path) : NULL;
	e->linenr = ctx->linenr;
	/* The included entries follow their include.path, as in git. */
	return follow_include(ctx, key, value);
}

/*
 * After "[" and the section name, a blank: the quoted subsection of
 * [section "subsection"]. Inside the quotes a backslash keeps the next
 * character (so \" and \\ work and \t reads as t); a newline or the
 * end of input ends the header in error. Appends ".subsection".
 */
static int parse_subsection(struct reader *rd, struct strbuf *section)
{
	int c;

	do
		c = next_char(rd);
	while (is_blank(c));
	if (c != '"')
		return PARSE_SYNTAX;
	strbuf_addch(section, '.');
	for (;;) {
		c = next_char(rd);
		if (c == '\\')
			c = next_char(rd);
		else if (c == '"')
			break;
		/* git would silently cut the key at a NUL byte. */
		if (c == CH_EOF || c == '\n' || (c == '\0' && !rd->blob))
			return PARSE_SYNTAX;
		strbuf_addch(section, c);
	}
	/* Nothing, not even a blank, between the closing quote and "]". */
	return next_char(rd) == ']' ? 0 : PARSE_SYNTAX;
}

/*
 * After "[": reads the header into section as the key prefix, the
 * section name lower-cased (with the legacy [section.sub] form wholly
 * lower-cased), plus ".subsection" verbatim when quoted.
 */
static int parse_section(struct reader *rd, struct strbuf *section)
{
	strbuf_reset(section);
	for (;;) {
		int c = next_char(rd);
		if (c == ']')
			return section->len ? 0 : PARSE_SYNTAX;
		/* [ "sub"] (an empty section name) is accepted by git too. */
		if (is_blank(c))
			return parse_subsection(rd, section);
		if (!is_key_char(c) && c != '.')
			return PARSE_SYNTAX;
		strbuf_addch(section, to_lower(c));
	}
}

/*
 * After "name =": the value up to the end of the line, or of the last
 * continued line. Outside quotes, blanks between words are kept as one
 * space each, leading and trailing ones dropped, and # or ; start a
 * comment.
 */
static int parse_value(struct reader *rd, struct strbuf *value)
{
	bool quoted = false, in_comment = false;
	size_t pending_spaces = 0;
	/* Blob mode: the length without the trailing blanks kept so far. */
	size_t kept_len = 0;

	strbuf_reset(value);
	for (;;) {
		int c = next_char(rd);

		if (c == '\n' || c == CH_EOF) {
			if (rd->blob)
				strbuf_setlen(value, kept_len);
			return quoted ? PARSE_SYNTAX : 0;
		}
		if (in_comment)
			continue;
		if (is_blank(c) && !quoted) {
			/* git 2.55 keeps blanks between words as they are. */
			if (value->len && rd->blob)
				strbuf_addch(value, (char)c);
			else if (value->len)
				pending_spaces++;
			continue;
		}
		if (!quoted && (c == '#' || c == ';')) {
			in_comment = true;
			continue;
		}
		for (; pending_spaces; pending_spaces--)
			strbuf_addch(value, ' ');
		if (c == '\\') {
			c = next_char(rd);
			switch (c) {
			case '\n':
			case CH_EOF: /* a final backslash continues onto nothing */
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return PARSE_SYNTAX;
			}
			strbuf_addch(value, c);
			kept_len = value->len;
			continue;
		}
		if (c == '"') {
			quoted = !quoted;
			kept_len = value->len;
			continue;
		}
		/* Values are C strings for every caller; refuse to truncate. */
		if (c == '\0' && !rd->blob)
			return PARSE_SYNTAX;
		strbuf_addch(value, c);
		kept_len = value->len;
	}
}

/*
 * An entry starting with the letter c: "name", "name = value". Names
 * are letters, digits and '-', lower-cased. Returns 0, PARSE_SYNTAX, or
 * an include's GP_E* error.
 */
static int parse_entry(struct parse_ctx *ctx, struct reader *rd, int c,
		       const struct strbuf *section, struct strbuf *value)
{
	struct strbuf key = STRBUF_INIT;
	bool has_value = false;
	int ret;

	/* A key before any section header is what git does too. */
	if (section->len) {
		strbuf_addbuf(&key, section);
		strbuf_addch(&key, '.');
	}
	do {
		strbuf_addch(&key, to_lower(c));
		c = next_char(rd);
	} while (is_key_char(c));
	while (c == ' ' || c == '\t')
		c = next_char(rd);
	if (c == '=') {
		ret = parse_value(rd, value);
		if (ret)
			goto out;
		has_value = true;
	} else if (c != '\n' && c != CH_EOF) {
		ret = PARSE_SYNTAX;
		goto out;
	}
	/* The line that ended the entry, which include errors report. */
	ctx->linenr = rd->char_line;
	ret = append_entry(ctx, strbuf_detach(&key, NULL),
			   has_value ? value->buf : NULL);
out:
	strbuf_release(&key);
	return ret;
}

static int parse_text(struct parse_ctx *ctx, const char *buf, size_t len)
{
	struct reader rd = { (const unsigned char *)buf, len, 0, 1, 1, ctx->blob };
	struct strbuf section = STRBUF_INIT, value = STRBUF_INIT;
	const char *in_file = ctx->path ? "file " : "";
	int ret = 0;

	/* Some editors start UTF-8 files with a byte order mark. */
	if (!ctx->blob && len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		rd.pos = 3;
	for (;;) {
		int c = next_char(&rd);

		if (c == CH_EOF)
			break;
		if (c == '\n' || is_blank(c))
			continue;
		if (c == '#' || c == ';') {
			do
				c = next_char(&rd);
			while (c != '\n' && c != CH_EOF);
			continue;
		}
		if (c == '[')
			ret = parse_section(&rd, &section);
		else if (is_alpha(c))
			ret = parse_entry(ctx, &rd, c, &section, &value);
		else
			ret = PARSE_SYNTAX;
		if (ret == PARSE_SYNTAX) {
			ret = CORRUPT(ctx->err, "bad config line %zu in %s%s",
				      rd.char_line, in_file, ctx->origin);
			goto out;
		}
		if (ret < 0)
			goto out;
	}
out:
	strbuf_release(&section);
	strbuf_release(&value);
	return ret;
}

/* Reads the file of a SOURCE_FILE or SOURCE_WORKTREE. */
static int read_file_source(struct parse_ctx *ctx, const char *path)
{
	struct strbuf text = STRBUF_INIT;
	int ret = read_config_text(path, &text, ctx->err);

	if (ret > 0)
		ret = 0;
	else if (!ret) {
		ctx->path = path;
		ctx->origin = path;
		ret = parse_text(ctx, text.buf, text.len);
	}
	strbuf_release(&text);
	return ret;
}

static const struct config_entry *find_last(const struct config_set *cs,
					    size_t from, const char *key);

/*
 * SOURCE_WORKTREE: does enabler, read without includes (as git reads
 * a repository's format), set extensions.worktreeConfig? Asked once.
 */
static int worktree_config_enabled(struct load *ld, const char *enabler,
				   struct gp_error *err)
{
	const struct config_read_opts plain = { .no_includes = true };
	struct config_set tmp = CONFIG_SET_INIT;
	const struct config_entry *wt;
	bool enabled = false;
	int ret;

	if (ld->worktree_enabled >= 0)
		return ld->worktree_enabled;
	ret = config_set_add_file(&tmp, enabler, CONFIG_SCOPE_LOCAL, &plain, err);
	if (ret < 0)
		goto out;
	wt = find_last(&tmp, 0, "extensions.worktreeconfig");
	if (wt && !config_parse_bool(wt->value, &enabled)) {
		ret = CORRUPT(err, "bad boolean config value '%s' for '%s'",
			      wt->value, wt->key);
		goto out;
	}
	ld->worktree_enabled = enabled;
	ret = enabled;
out:
	config_set_release(&tmp);
	return ret;
}

static int add_command_config(struct parse_ctx *ctx);
static int add_entry(struct parse_ctx *ctx, const char *key, const char *value);

/* Whether a later source is the worktree config that the file at path enables. */
static bool enables_worktree(const struct load *ld, const char *path)
{
	for (size_t idx = 0; idx < ld->sources_nr; idx++)
		if (ld->sources[idx].kind == SOURCE_WORKTREE &&
		    !strcmp(ld->sources[idx].enabler, path))
			return true;
	return false;
}

static int read_source(struct load *ld, const struct source *src, bool scan,
		       struct gp_error *err)
{
	struct parse_ctx ctx = { .cs = ld->cs, .ld = ld, .scan = scan,
				 .scope = src->scope, .bad_code = GP_ECORRUPT,
				 .err = err };
	bool enabled = false;
	int ret;

	switch (src->kind) {
	case SOURCE_WORKTREE:
		ret = worktree_config_enabled(ld, src->enabler, err);
		if (ret <= 0)
			return ret;
		return read_file_source(&ctx, src->name);
	case SOURCE_FILE:
		ld->wt_tracking = !scan && ld->worktree_enabled < 0 && enables_worktree(ld, src->name);
		ld->wt_seen = false;
		ret = read_file_source(&ctx, src->name);
		if (ld->wt_tracking && ret >= 0) {
			/* as worktree_config_enabled() would have found it */
			if (ld->wt_seen && config_parse_bool(ld->wt_value, &enabled))
				ld->worktree_enabled = enabled;
			else if (!ld->wt_seen)
				ld->worktree_enabled = 0;
		}
		ld->wt_tracking = false;
		FREE_AND_NULL(ld->wt_value);
		return ret;
	case SOURCE_BUF:
		ctx.origin = src->name;
		return parse_text(&ctx, src->buf, src->len);
	case SOURCE_ENTRY:
		return add_entry(&ctx, src->name, src->buf);
	case SOURCE_COMMAND:
		return add_command_config(&ctx);
	}
	BUG("unknown config source %d", (int)src->kind);
}

static int read_sources(struct load *ld, bool scan, struct gp_error *err)
{
	for (size_t idx = 0; idx < ld->sources_nr; idx++) {
		int ret = read_source(ld, &ld->sources[idx], scan, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Reads the sources into cs; on error, cs is left as it was. */
static int load_sources(struct config_set *cs, const struct source *sources,
			size_t nr, const struct config_repo_info *repo,
			bool no_includes, struct gp_error *err)
{
	struct load ld = { .cs = cs, .repo = repo, .no_includes = no_includes,
			   .sources = sources, .sources_nr = nr,
			   .worktree_enabled = -1 };
	size_t nr_before = cs->nr;
	int ret = read_sources(&ld, false, err);

	if (ret < 0)
		config_set_truncate(cs, nr_before);
	for (size_t idx = 0; idx < ld.urls_nr; idx++)
		free(ld.urls[idx]);
	free(ld.urls);
	free(ld.branch);
	return ret;
}

int config_set_add_file(struct config_set *cs, const char *path,
			enum config_scope scope, const struct config_read_opts *opts,
			struct gp_error *err)
{
	struct source src = { .kind = SOURCE_FILE, .scope = scope, .name = path };

	return load_sources(cs, &src, 1, opts ? opts->repo : NULL,
			    opts && opts->no_includes, err);
}

int config_set_add_buf(struct config_set *cs, const char *name,
		       const char *buf, size_t len, enum config_scope scope,
		       const struct config_read_opts *opts, struct gp_error *err)
{
	struct source src = { .kind = SOURCE_BUF, .scope = scope,
			      .name = name ? name : "config text",
			      .buf = buf, .len = len };

	return load_sources(cs, &src, 1, opts ? opts->repo : NULL,
			    opts && opts->no_includes, err);
}

int config_parse_blob(const char *name, const char *buf, size_t len,
		      config_entry_fn *fn, void *data, struct gp_error *err)
{
	struct parse_ctx ctx = { .fn = fn, .fn_data = data, .blob = true,
				 .origin = name ? name : "blob",
				 .bad_code = GP_ECORRUPT, .err = err };
	return parse_text(&ctx, buf, len);
}

/*
 * "Section.sub.Name" -> "section.sub.name" into out, checking it the
 * way git checks keys given with -c: a section, a name that starts
 * with a letter, [A-Za-z0-9-] outside the subsection, no newline.
 */
static int canonical_key(const char *key, struct strbuf *out,
			 struct gp_error *err)
{
	const char *first_dot = strchr(key, '.');
	const char *last_dot = strrchr(key, '.');
	const char *p;

	if (!first_dot || first_dot == key)
		return gp_error_set(err, GP_EINVAL,
				    "key does not contain a section: %s", key);
	if (!last_dot[1])
		return gp_error_set(err, GP_EINVAL,
				    "key does not contain variable name: %s", key);
	for (p = key; p < first_dot; p++) {
		if (!is_key_char((unsigned char)*p))
			goto invalid;
		strbuf_addch(out, to_lower((unsigned char)*p));
	}
	for (; p < last_dot; p++) {
		if (*p == '\n')
			goto invalid;
		strbuf_addch(out, *p);
	}
	strbuf_addch(out, '.');
	if (!is_alpha((unsigned char)last_dot[1]))
		goto invalid;
	for (p = last_dot + 1; *p; p++) {
		if (!is_key_char((unsigned char)*p))
			goto invalid;
		strbuf_addch(out, to_lower((unsigned char)*p));
	}
	return 0;
invalid:
	return gp_error_set(err, GP_EINVAL, "invalid key: %s", key);
}

/* One command-line entry: key as -c gives it, canonicalised here. */
static int add_entry(struct parse_ctx *ctx, const char *key, const char *value)
{
	struct strbuf canon = STRBUF_INIT;
	int ret;

	ret = canonical_key(key, &canon, ctx->err);
	if (ret < 0)
		goto out;
	ctx->path = NULL;
	ctx->origin = "command line";
	ctx->bad_code = GP_EINVAL;
	ctx->linenr = 0;
	ret = append_entry(ctx, strbuf_detach(&canon, NULL), value);
out:
	strbuf_release(&canon);
	return ret;
}

int config_set_add(struct config_set *cs, const char *key, const char *value,
		   enum config_scope scope, struct gp_error *err)
{
	struct source src = { .kind = SOURCE_ENTRY, .scope = scope,
			      .name = key, .buf = value };

	return load_sources(cs, &src, 1, NULL, false, err);
}

/*
 * One word of GIT_CONFIG_PARAMETERS as git's shell quoting writes it:
 * '...' runs, joined by \' and \! for the characters that cannot sit
 * inside them. Leaves *pos after the word.
 */
static bool sq_dequote_word(const char *s, size_t *pos, struct strbuf *out)
{
	size_t i = *pos;

	if (s[i] != '\'')
		return false;
	i++;
	for (;;) {
		if (!s[i])
			return false;
		if (s[i] != '\'') {
			strbuf_addch(out, s[i++]);
			continue;
		}
		i++;
		if (s[i] == '\\' && (s[i + 1] == '\'' || s[i + 1] == '!') &&
		    s[i + 2] == '\'') {
			strbuf_addch(out, s[i + 1]);
			i += 3;
			continue;
		}
		break;
	}
	*pos = i;
	return true;
}

/*
 * GIT_CONFIG_PARAMETERS: space-separated items, each 'key'='value',
 * 'key'= (a bare key, which is how git passes "-c key"), or the older
 * 'key=value' and 'key' forms.
 */
static int add_config_parameters(struct parse_ctx *ctx, const char *env)
{
	struct strbuf key = STRBUF_INIT, value = STRBUF_INIT;
	size_t pos = 0;
	int ret = 0;

	while (env[pos]) {
		const char *val = NULL;

		strbuf_reset(&key);
		strbuf_reset(&value);
		if (!sq_dequote_word(env, &pos, &key))
			goto bogus;
		if (env[pos] == '=') {
			pos++;
			if (env[pos] == '\'') {
				if (!sq_dequote_word(env, &pos, &value))
					goto bogus;
				val = value.buf;
			}
		} else {
			char *eq = strchr(key.buf, '=');
			if (eq) {
				strbuf_addstr(&value, eq + 1);
				strbuf_setlen(&key, eq - key.buf);
				val = value.buf;
			}
		}
		if (env[pos] && !is_blank(env[pos]) && env[pos] != '\n')
			goto bogus;
		while (is_blank(env[pos]) || env[pos] == '\n')
			pos++;
		ret = add_entry(ctx, key.buf, val);
		if (ret < 0)
			goto out;
	}
	goto out;
bogus:
	ret = gp_error_set(ctx->err, GP_EINVAL, "bogus format in GIT_CONFIG_PARAMETERS");
out:
	strbuf_release(&key);
	strbuf_release(&value);
	return ret;
}

/* GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>. */
static int add_config_count(struct parse_ctx *ctx, const char *env)
{
	struct gp_error *err = ctx->err;
	unsigned long count;
	char *end;
	int ret = 0;

	errno = 0;
	count = strtoul(env, &end, 10);
	if (errno || *end)
		return gp_error_set(err, GP_EINVAL, "bogus count in GIT_CONFIG_COUNT");
	if (count > INT_MAX)
		return gp_error_set(err, GP_EINVAL, "too many entries in GIT_CONFIG_COUNT");
	for (unsigned long idx = 0; idx < count; idx++) {
		char name[64];
		const char *key, *value;

		snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%lu", idx);
		key = getenv(name);
		if (!key)
			return gp_error_set(err, GP_EINVAL, "missing config key %s", name);
		snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%lu", idx);
		value = getenv(name);
		if (!value)
			return gp_error_set(err, GP_EINVAL, "missing config value %s", name);
		ret = add_entry(ctx, key, value);
		if (ret < 0)
			return ret;
	}
	return ret;
}

static int add_command_config(struct parse_ctx *ctx)
{
	const char *env;
	int ret;

	env = getenv("GIT_CONFIG_COUNT");
	if (env && *env) {
		ret = add_config_count(ctx, env);
		if (ret < 0)
			return ret;
	}
	env = getenv("GIT_CONFIG_PARAMETERS");
	if (env && *env)
		return add_config_parameters(ctx, env);
	return 0;
}

/* The most sources a standard read has: see config_set_load_repo(). */
#define MAX_STANDARD_SOURCES 6

/* Room for the paths the sources name; freed by release_paths(). */
struct source_paths {
	char *items[MAX_STANDARD_SOURCES];
	size_t nr;
};

static const char *keep_path(struct source_paths *paths, char *path)
{
	if (paths->nr == MAX_STANDARD_SOURCES)
		BUG("too many config source paths");
	paths->items[paths->nr++] = path;
	return path;
}

static void add_source(struct source *sources, size_t *nr,
		       enum source_kind kind, enum config_scope scope,
		       const char *name, const char *enabler)
{
	if (*nr == MAX_STANDARD_SOURCES)
		BUG("too many config sources");
	sources[(*nr)++] = (struct source){ .kind = kind, .scope = scope,
					    .name = name, .enabler = enabler };
}

int config_set_load_repo(struct config_set *cs, const char *commondir,
			 const char *gitdir, const struct config_repo_info *repo,
			 struct gp_error *err)
{
	struct source sources[MAX_STANDARD_SOURCES];
	struct source_paths paths = { .nr = 0 };
	const char *env = getenv("GIT_CONFIG_NOSYSTEM");
	const char *global = getenv("GIT_CONFIG_GLOBAL");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	const char *local = NULL;
	bool nosystem = false;
	size_t nr = 0;
	int ret;

	if (env && !config_parse_bool(env, &nosystem))
		return gp_error_set(err, GP_EINVAL,
				    "bad boolean value '%s' for GIT_CONFIG_NOSYSTEM", env);
	if (!nosystem) {
		env = getenv("GIT_CONFIG_SYSTEM");
		add_source(sources, &nr, SOURCE_FILE, CONFIG_SCOPE_SYSTEM,
			   env ? env : "/etc/gitconfig", NULL);
	}
	if (global) {
		add_source(sources, &nr, SOURCE_FILE, CONFIG_SCOPE_GLOBAL, global, NULL);
	} else {
		/* The XDG file first, so that ~/.gitconfig overrides it. */
		char *path = NULL;

		if (xdg && *xdg)
			path = xstrfmt("%s/git/config", xdg);
		else if (home)
			path = xstrfmt("%s/.config/git/config", home);
		if (path)
			add_source(sources, &nr, SOURCE_FILE, CONFIG_SCOPE_GLOBAL,
				   keep_path(&paths, path), NULL);
		if (path && home)
			add_source(sources, &nr, SOURCE_FILE, CONFIG_SCOPE_GLOBAL,
				   keep_path(&paths, xstrfmt("%s/.gitconfig", home)),
				   NULL);
	}
	if (commondir) {
		local = keep_path(&paths, xstrfmt("%s/config", commondir));
		add_source(sources, &nr, SOURCE_FILE, CONFIG_SCOPE_LOCAL, local, NULL);
	}
	/* Like git, only the shared config can turn config.worktree on. */
	if (local && gitdir)
		add_source(sources, &nr, SOURCE_WORKTREE, CONFIG_SCOPE_LOCAL,
			   keep_path(&paths, xstrfmt("%s/config.worktree", gitdir)),
			   local);
	add_source(sources, &nr, SOURCE_COMMAND, CONFIG_SCOPE_COMMAND, NULL, NULL);

	ret = load_sources(cs, sources, nr, repo, false, err);
	for (size_t idx = 0; idx < paths.nr; idx++)
		free(paths.items[idx]);
	return ret;
}

int config_set_load_standard(struct config_set *cs, const char *gitdir,
			     struct gp_error *err)
{
	struct config_repo_info repo = { .gitdir = gitdir };

	return config_set_load_repo(cs, gitdir, gitdir, gitdir ? &repo : NULL, err);
}

int config_set_load_format(struct config_set *cs, const char *commondir,
			   const char *gitdir, struct gp_error *err)
{
	struct source sources[2];
	char *local = xstrfmt("%s/config", commondir);
	char *worktree = gitdir ? xstrfmt("%s/config.worktree", gitdir) : NULL;
	size_t nr = 0;
	int ret;

	sources[nr++] = (struct source){ .kind = SOURCE_FILE,
					 .scope = CONFIG_SCOPE_LOCAL, .name = local };
	if (worktree)
		sources[nr++] = (struct source){ .kind = SOURCE_WORKTREE,
						 .scope = CONFIG_SCOPE_LOCAL,
						 .name = worktree, .enabler = local };
	ret = load_sources(cs, sources, nr, NULL, true, err);
	free(worktree);
	free(local);
	return ret;
}

/*
 * Does the canonical stored key match the query? The section and the
 * name (before the first and after the last dot) compare without case,
 * the subsection exactly, so "core.repositoryFormatVersion" finds
 * "core.repositoryformatversion".
 */
static bool key_matches(const char *stored, const char *query)
{
	const char *first_dot = strchr(query, '.');
	const char *last_dot = strrchr(query, '.');
	size_t len = strlen(query);

	if (strlen(stored) != len)
		return false;
	for (size_t pos = 0; pos < len; pos++) {
		int c = (unsigned char)query[pos];
		bool in_sub = first_dot && query + pos > first_dot &&
			      query + pos < last_dot;
		if ((in_sub ? c : to_lower(c)) != (unsigned char)stored[pos])
			return false;
	}
	return true;
}

/* The last entry for key among those from index from on; NULL if none. */
static const struct config_entry *find_last(const struct config_set *cs,
					    size_t from, const char *key)
{
	for (size_t pos = cs->nr; pos > from; pos--)
		if (key_matches(cs->items[pos - 1].key, key))
			return &cs->items[pos - 1];
	return NULL;
}

int config_get_value(const struct config_set *cs, const char *key,
		     const char **out)
{
	const struct config_entry *e = find_last(cs, 0, key);
	if (!e)
		return GP_ENOTFOUND;
	*out = e->value;
	return 0;
}

int config_get_string(const struct config_set *cs, const char *key,
		      const char **out)
{
	const struct config_entry *e = find_last(cs, 0, key);
	if (!e)
		return GP_ENOTFOUND;
	if (!e->value)
		return GP_EINVAL;
	*out = e->value;
	return 0;
}

enum num_status { NUM_OK, NUM_BAD_UNIT, NUM_RANGE };

/* strto[iu]max() results are narrowed to 64 bits below. */
_Static_assert(sizeof(intmax_t) == sizeof(int64_t), "intmax_t is 64 bits");

/* The k/m/g suffix (or none) that follows the digits. */
static bool unit_factor(const char *unit, uint64_t *factor)
{
	if (!*unit) {
		*factor = 1;
		return true;
	}
	if (unit[1])
		return false;
	switch (to_lower((unsigned char)*unit)) {
	case 'k':
		*factor = UINT64_C(1) << 10;
		return true;
	case 'm':
		*factor = UINT64_C(1) << 20;
		return true;
	case 'g':
		*factor = UINT64_C(1) << 30;
		return true;
	}
	return false;
}

/*
 * Like git, the range is symmetric, -max..max: "-2147483648" is out of
 * range for an int.
 */
static enum num_status parse_signed(const char *value, int64_t max,
				    int64_t *out)
{
	uint64_t factor;
	int64_t result;
	intmax_t num;
	char *end;

	if (!value || !*value)
		return NUM_BAD_UNIT;
	errno = 0;
	num = strtoimax(value, &end, 0);
	if (errno == ERANGE)
		return NUM_RANGE;
	if (end == value || !unit_factor(end, &factor))
		return NUM_BAD_UNIT;
	if (__builtin_mul_overflow((int64_t)num, (int64_t)factor, &result))
		return NUM_RANGE;
	if (result < -max || result > max)
		return NUM_RANGE;
	*out = result;
	return NUM_OK;
}

static enum num_status parse_unsigned(const char *value, uint64_t max,
				      uint64_t *out)
{
	uint64_t factor, result;
	uintmax_t num;
	char *end;

	/* strtoumax() would quietly negate "-1" into a huge number. */
	if (!value || !*value || strchr(value, '-'))
		return NUM_BAD_UNIT;
	errno = 0;
	num = strtoumax(value, &end, 0);
	if (errno == ERANGE)
		return NUM_RANGE;
	if (end == value || !unit_factor(end, &factor))
		return NUM_BAD_UNIT;
	if (__builtin_mul_overflow((uint64_t)num, factor, &result))
		return NUM_RANGE;
	if (result > max)
		return NUM_RANGE;
	*out = result;
	return NUM_OK;
}

bool config_parse_int64(const char *value, int64_t *out)
{
	return parse_signed(value, INT64_MAX, out) == NUM_OK;
}

bool config_parse_uint64(const char *value, uint64_t *out)
{
	return parse_unsigned(value, UINT64_MAX, out) == NUM_OK;
}

bool config_parse_bool(const char *value, bool *out)
{
	int64_t num;

	if (!value) {
		*out = true;
		return true;
	}
	if (!*value || !strcasecmp(value, "false") || !strcasecmp(value, "no") ||
	    !strcasecmp(value, "off")) {
		*out = false;
		return true;
	}
	if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") ||
	    !strcasecmp(value, "on")) {
		*out = true;
		return true;
	}
	if (parse_signed(value, INT_MAX, &num) != NUM_OK)
		return false;
	*out = num != 0;
	return true;
}

int config_get_bool(const struct config_set *cs, const char *key, bool *out,
		    struct gp_error *err)
{
	const struct config_entry *e = find_last(cs, 0, key);

	if (!e)
		return GP_ENOTFOUND;
	if (!config_parse_bool(e->value, out))
		return gp_error_set(err, GP_EINVAL,
				    "bad boolean config value '%s' for '%s'",
				    e->value, e->key);
	return 0;
}

bool config_origin(const struct config_set *cs, const char *key, const char **file,
		   size_t *linenr)
{
	const struct config_entry *e = find_last(cs, 0, key);
	if (!e)
		return false;
	*file = e->file;
	*linenr = e->linenr;
	return true;
}

bool config_get_bool_or(const struct config_set *cs, const char *key, bool dflt)
{
	bool v;
	return config_get_bool(cs, key, &v, NULL) ? dflt : v;
}

static int numeric_error(const struct config_entry *e, enum num_status status,
			 struct gp_error *err)
{
	return gp_error_set(err, GP_EINVAL,
			    "bad numeric config value '%s' for '%s': %s",
			    e->value, e->key,
			    status == NUM_RANGE ? "out of range" : "invalid unit");
}

int config_get_int(const struct config_set *cs, const char *key, int *out,
		   struct gp_error *err)
{
	const struct config_entry *e = find_last(cs, 0, key);

	if (!e)
		return GP_ENOTFOUND;
	return config_entry_int(e, out, err);
}

int config_entry_int(const struct config_entry *e, int *out, struct gp_error *err)
{
	enum num_status status;
	int64_t num;

	if (!e->value)
		return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
	status = parse_signed(e->value, INT_MAX, &num);
	if (status != NUM_OK)
		return numeric_error(e, status, err);
	*out = (int)num;
	return 0;
}

int config_entry_double(const struct config_entry *e, double *out, struct gp_error *err)
{
	uint64_t factor;
	char *end;
	double num;

	if (!e->value)
		return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
	errno = 0;
	num = strtod(e->value, &end);
	if (end == e->value || !unit_factor(end, &factor) || !isfinite(num))
		return numeric_error(e, NUM_BAD_UNIT, err);
	if (errno == ERANGE || !isfinite(num * (double)factor))
		return numeric_error(e, NUM_RANGE, err);
	*out = num * (double)factor;
	return 0;
}

int config_get_ulong(const struct config_set *cs, const char *key,
		     unsigned long *out, struct gp_error *err)
{
	const struct config_entry *e = find_last(cs, 0, key);
	enum num_status status;
	uint64_t num;

	if (!e)
		return GP_ENOTFOUND;
	if (!e->value)
		return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
	status = parse_unsigned(e->value, ULONG_MAX, &num);
	if (status != NUM_OK)
		return numeric_error(e, status, err);
	*out = (unsigned long)num;
	return 0;
}
