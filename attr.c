/*
 * attr.c: path attributes (see attr.h and gitattributes(5)).
 *
 * Every file that may apply is read on each lookup: the commands that
 * ask (cat-file --textconv and --filters) ask about one path.
 */
#include "attr.h"
#include "config.h"
#include "error.h"
#include "object-name.h"
#include "odb.h"
#include "path-patterns.h"
#include "repository.h"
#include "strbuf.h"
#include <ctype.h>

/* A macro lines may name in place of their assignments. */
struct attr_macro {
	char *name;
	char *assignments; /* the rest of its "[attr]" line */
};

struct attr_lookup {
	const char *path;     /* relative to the work tree's top */
	const char *const *names;
	size_t nr;
	struct attr_result *out;
	struct attr_macro *macros;
	size_t nr_macros, alloc_macros;
};

/*
 * The tree-ish whose .gitattributes files apply instead of the work
 * tree's: $GIT_ATTR_SOURCE, else attr.tree; NULL: the work tree's.
 */
static const char *attr_source(const struct repository *repo)
{
	const char *source = getenv("GIT_ATTR_SOURCE"), *tree = NULL;
	if (source && *source)
		return source;
	if (!config_get_value(&repo->config, "attr.tree", &tree) && tree && *tree)
		return tree;
	return NULL;
}


static void assign(struct attr_lookup *lk, const char *name, size_t len,
		   enum attr_state state, const char *value, size_t value_len,
		   int depth);

/* Apply a list of assignments ("a -b !c d=e"). */
static void apply_assignments(struct attr_lookup *lk, const char *p, int depth)
{
	while (*p) {
		const char *start, *eq;
		size_t len;
		enum attr_state state = ATTR_SET;
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (*p == '-' || *p == '!') {
			state = *p == '-' ? ATTR_UNSET : ATTR_UNSPECIFIED;
			p++;
		}
		start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		len = (size_t)(p - start);
		eq = memchr(start, '=', len);
		if (eq && state == ATTR_SET)
			assign(lk, start, (size_t)(eq - start), ATTR_VALUE, eq + 1,
			       (size_t)(p - eq - 1), depth);
		else if (!eq)
			assign(lk, start, len, state, NULL, 0, depth);
	}
}

static void assign(struct attr_lookup *lk, const char *name, size_t len,
		   enum attr_state state, const char *value, size_t value_len,
		   int depth)
{
	/* a macro set expands to its assignments (not too deep: macros may loop) */
	if (state == ATTR_SET && depth < 8) {
		if (len == 6 && !memcmp(name, "binary", 6))
			apply_assignments(lk, "-diff -merge -text", depth + 1);
		for (size_t i = 0; i < lk->nr_macros; i++)
			if (strlen(lk->macros[i].name) == len &&
			    !memcmp(lk->macros[i].name, name, len))
				apply_assignments(lk, lk->macros[i].assignments, depth + 1);
	}
	for (size_t i = 0; i < lk->nr; i++) {
		struct attr_result *r = &lk->out[i];
		if (strlen(lk->names[i]) != len || memcmp(lk->names[i], name, len))
			continue;
		FREE_AND_NULL(r->value);
		r->state = state;
		if (state == ATTR_VALUE)
			r->value = xstrndup(value, value_len);
	}
}

/* Whether pattern (from a file in directory base, "" for the top) matches the path. */
static bool pattern_matches(const char *pattern, const char *base, const char *path)
{
	size_t base_len = strlen(base);
	const char *rel = path, *slash;
	if (base_len) {
		if (strncmp(path, base, base_len) || path[base_len] != '/')
			return false;
		rel = path + base_len + 1;
	}
	if (!strchr(pattern, '/')) {
		slash = strrchr(rel, '/');
		rel = slash ? slash + 1 : rel;
		return glob_match(pattern, strlen(pattern), rel, strlen(rel), 0);
	}
	if (pattern[0] == '/')
		pattern++;
	return glob_match(pattern, strlen(pattern), rel, strlen(rel), GLOB_PATHNAME);
}

/* The lines of one attributes file (consumed), whose patterns are relative to base. */
static void read_lines(struct attr_lookup *lk, struct strbuf *sb, const char *base,
		       bool macros_allowed);

/* One attributes file, whose patterns are relative to base. */
static int read_file(struct attr_lookup *lk, const char *file, const char *base,
		     bool macros_allowed, struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, file, 0) < 0) {
		strbuf_release(&sb);
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return gp_error_errno(err, "%s: cannot read", file);
	}
	read_lines(lk, &sb, base, macros_allowed);
	strbuf_release(&sb);
	return 0;
}

/*
 * The .gitattributes blob at "<source>:<base>/.gitattributes"; one that
 * is not there (or a source that does not resolve) is no attributes.
 */
static void read_blob(struct attr_lookup *lk, struct repository *repo, const char *source,
		      const char *base, bool macros_allowed)
{
	struct gp_error err = GP_ERROR_INIT;
	char *name = xstrfmt("%s:%s%s.gitattributes", source, base, *base ? "/" : "");
	struct object_id oid;
	struct odb *odb;
	enum object_type type;
	unsigned char *data;
	size_t size;
	if (!repo_odb(repo, &odb, &err) && !get_oid(repo, odb, name, &oid, &err) &&
	    !odb_read_object(odb, &oid, &type, &data, &size, &err)) {
		if (type == OBJ_BLOB) {
			struct strbuf sb = STRBUF_INIT;
			strbuf_add(&sb, data, size);
			read_lines(lk, &sb, base, macros_allowed);
			strbuf_release(&sb);
		}
		free(data);
	}
	gp_error_clear(&err);
	free(name);
}

static void read_lines(struct attr_lookup *lk, struct strbuf *sb, const char *base,
		       bool macros_allowed)
{
	char *line, *save = NULL;
	for (line = strtok_r(sb->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *pattern;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		pattern = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		if (!strncmp(pattern, "[attr]", 6)) {
			if (macros_allowed && pattern[6]) {
				ALLOC_GROW(lk->macros, lk->nr_macros + 1, lk->alloc_macros);
				lk->macros[lk->nr_macros].name = xstrdup(pattern + 6);
				lk->macros[lk->nr_macros].assignments = xstrdup(p);
				lk->nr_macros++;
			}
			continue;
		}
		if (pattern[0] == '!' || pattern[strlen(pattern) - 1] == '/')
			continue; /* negated and directory patterns match no file */
		if (pattern_matches(pattern, base, lk->path))
			apply_assignments(lk, p, 0);
	}
}

int attr_get(struct repository *repo, const char *path, const char *const *names,
	     size_t nr, struct attr_result *out, struct gp_error *err)
{
	struct attr_lookup lk = { .path = path, .names = names, .nr = nr, .out = out };
	const char *global = NULL, *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	const char *source;
	struct strbuf file = STRBUF_INIT, base = STRBUF_INIT;
	int ret = 0;

	memset(out, 0, nr * sizeof(*out));
	source = attr_source(repo);
	if (!config_get_value(&repo->config, "core.attributesfile", &global) && global) {
		if (global[0] == '~' && global[1] == '/' && home)
			strbuf_addf(&file, "%s%s", home, global + 1);
		else
			strbuf_addstr(&file, global);
	} else if (xdg && *xdg) {
		strbuf_addf(&file, "%s/git/attributes", xdg);
	} else if (home) {
		strbuf_addf(&file, "%s/.config/git/attributes", home);
	}
	if (file.len && (ret = read_file(&lk, file.buf, "", true, err)))
		goto out;
	/* the work tree's files, top first: deeper ones override */
	for (const char *p = path;; ) {
		strbuf_reset(&file);
		strbuf_reset(&base);
		strbuf_add(&base, path, (size_t)(p - path));
		if (base.len)
			strbuf_setlen(&base, base.len - 1); /* its '/' */
		if (source) {
			read_blob(&lk, repo, source, base.buf, !base.len);
		} else if (repo->worktree) {
			strbuf_addf(&file, "%s/%s%s.gitattributes", repo->worktree, base.buf,
				    base.len ? "/" : "");
			ret = read_file(&lk, file.buf, base.buf, !base.len, err);
			if (ret)
				goto out;
		}
		p = strchr(p, '/');
		if (!p)
			break;
		p++;
	}
	strbuf_reset(&file);
	strbuf_addf(&file, "%s/info/attributes", repo->commondir ? repo->commondir : repo->gitdir);
	ret = read_file(&lk, file.buf, "", true, err);
out:
	for (size_t i = 0; i < lk.nr_macros; i++) {
		free(lk.macros[i].name);
		free(lk.macros[i].assignments);
	}
	free(lk.macros);
	strbuf_release(&file);
	strbuf_release(&base);
	return ret;
}

void attr_results_release(struct attr_result *out, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		FREE_AND_NULL(out[i].value);
}

void attr_get_from_buf(const char *text, size_t len, const char *path,
		       const char *const *names, size_t nr, struct attr_result *out)
{
	struct attr_lookup lk = { .path = path, .names = names, .nr = nr, .out = out };
	struct strbuf sb = STRBUF_INIT;
	memset(out, 0, nr * sizeof(*out));
	strbuf_add(&sb, text, len);
	read_lines(&lk, &sb, "", true);
	strbuf_release(&sb);
	for (size_t i = 0; i < lk.nr_macros; i++) {
		free(lk.macros[i].name);
		free(lk.macros[i].assignments);
	}
	free(lk.macros);
}
