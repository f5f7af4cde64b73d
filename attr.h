/*
 * attr.h: path attributes (gitattributes(5)), read from the work tree.
 *
 * The files, from the lowest precedence to the highest: the user's
 * (core.attributesFile, else $XDG_CONFIG_HOME/git/attributes or
 * ~/.config/git/attributes), the work tree's .gitattributes from the
 * top down to the path's directory, then $GIT_DIR/info/attributes. A
 * later line overrides an earlier one. Each line is a pattern and
 * assignments: "name" (set), "-name" (unset), "!name" (unspecified),
 * "name=value"; "binary" stands for "-diff -merge -text", and
 * "[attr]<macro> <assignments>" lines of the top-level files define
 * macros. A pattern without '/' matches the file name at any depth
 * below its file's directory; one with '/' matches the path relative to
 * that directory ("*" not crossing '/'). Negated patterns are ignored,
 * as in git.
 *
 * NEEDSWORK: a bare repository's attributes (attr.tree, HEAD's
 * .gitattributes) are not read: attr_supported() says so.
 */
#ifndef GP_ATTR_H
#define GP_ATTR_H

#include "util.h"

struct gp_error;
struct repository;

enum attr_state {
	ATTR_UNSPECIFIED = 0,
	ATTR_SET,
	ATTR_UNSET,
	ATTR_VALUE,
};

struct attr_result {
	enum attr_state state;
	char *value; /* ATTR_VALUE: owned */
};

/* Whether attributes can be read for repo (false: a bare repository). */
bool attr_supported(const struct repository *repo);

/*
 * The attributes names[0..nr) of path (relative to the top of the work
 * tree) into out[0..nr). Errors: GP_EIO for a file that exists but
 * cannot be read. Release out with attr_results_release().
 */
int attr_get(struct repository *repo, const char *path, const char *const *names,
	     size_t nr, struct attr_result *out, struct gp_error *err);
void attr_results_release(struct attr_result *out, size_t nr);

#endif
