/*
 * attr.h: path attributes (gitattributes(5)), read from the work tree.
 *
 * The files, from the lowest precedence to the highest: the user's
 * (core.attributesFile, else $XDG_CONFIG_HOME/git/attributes or
 * ~/.config/git/attributes), the .gitattributes from the top down to
 * the path's directory, then $GIT_DIR/info/attributes. A
 * later line overrides an earlier one. Each line is a pattern and
 * assignments: "name" (set), "-name" (unset), "!name" (unspecified),
 * "name=value"; "binary" stands for "-diff -merge -text", and
 * "[attr]<macro> <assignments>" lines of the top-level files define
 * macros. A pattern without '/' matches the file name at any depth
 * below its file's directory; one with '/' matches the path relative to
 * that directory ("*" not crossing '/'). Negated patterns are ignored,
 * as in git.
 *
 * Instead of the work tree's files, the .gitattributes blobs of a tree
 * are read when $GIT_ATTR_SOURCE or attr.tree names one (a name that
 * does not resolve is an empty tree); a bare repository without either
 * has only info/attributes and the user's file, as in git.
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

/*
 * The attributes names[0..nr) of path (relative to the top of the work
 * tree) into out[0..nr). Errors: GP_EIO for a file that exists but
 * cannot be read. Release out with attr_results_release().
 */
int attr_get(struct repository *repo, const char *path, const char *const *names,
	     size_t nr, struct attr_result *out, struct gp_error *err);
void attr_results_release(struct attr_result *out, size_t nr);

/*
 * The same over one attributes text alone, its patterns relative to
 * the top (macros allowed), for tests and the fuzz target.
 */
void attr_get_from_buf(const char *text, size_t len, const char *path,
		       const char *const *names, size_t nr, struct attr_result *out);

#endif
