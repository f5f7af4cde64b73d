/*
 * path-patterns.h: gitignore(5)-style path patterns, as git reads them
 * for .gitignore, non-cone sparse-checkout (git-sparse-checkout(1)) and
 * the sparse:oid object filter (git-rev-list(1) "--filter"), and the
 * glob matcher beneath them, which .gitattributes uses too.
 *
 * The glob language (gitignore(5) "PATTERN FORMAT"):
 *
 *   c          the byte c; "\c" is c whatever it is (a trailing lone
 *              '\' matches nothing)
 *   ?          any one byte
 *   [...]      one byte of a set: "a-z" ranges, "[:alpha:]" classes
 *              (ASCII only: alnum alpha blank cntrl digit graph lower
 *              print punct space upper xdigit), "\c" for c, a leading
 *              '!' or '^' negating it, a ']' first in it taken as
 *              itself. An unterminated set or an unknown class makes
 *              the whole pattern match nothing.
 *   *          any run of bytes
 *   **         as *; but a "**" that is a whole path component (at the
 *              start or after '/', and at the end or before '/') also
 *              crosses '/' under GLOB_PATHNAME, and when a '/' follows
 *              it, that '/' is optional: "a/", "**", "/b" written
 *              together match a/b, a/x/b and a/x/y/b; a final "/" "**"
 *              matches everything below
 *
 * With GLOB_PATHNAME, '*', '?' and sets never match '/' (except the
 * whole-component "**"). GLOB_ICASE folds ASCII letters as git does
 * under core.ignoreCase (sets are folded only as git folds them: a
 * letter given in a set matches itself, a range also the other case).
 *
 * A pattern list is a text of one pattern per line, read as git reads
 * a pattern file: an optional UTF-8 BOM first; lines end at LF (a CR
 * before it is dropped); empty lines and lines starting with '#' are
 * skipped; a line stops at a NUL; unescaped trailing spaces are
 * trimmed. Each pattern may start with '!' (negation) and end with '/'
 * (directories only); one without any other '/' matches the last path
 * component at any depth, one with a '/' (leading, inside) the whole
 * path from the top, a leading '/' removed. The last pattern that
 * matches a path decides for it; if none does, the path is undecided.
 *
 * Costs: a list is kept as its text plus 20 bytes a pattern. Matching
 * a path tries the patterns last to first; one pattern costs about
 * the path's length after its literal prefix and length checks, at
 * most (pattern length x path length) steps, with no recursion and no
 * backtracking (the glob runs as a set of positions in the pattern).
 */
#ifndef GP_PATH_PATTERNS_H
#define GP_PATH_PATTERNS_H

#include "util.h"

struct gp_error;

enum glob_flags {
	GLOB_PATHNAME = 1 << 0,   /* '*', '?' and sets do not match '/' */
	GLOB_ICASE = 1 << 1,      /* ASCII letters match either case */
};

/*
 * Whether the glob pattern[0..pattern_len) matches all of
 * text[0..text_len). Either stops at a NUL byte, as git's C strings do.
 */
bool glob_match(const char *pattern, size_t pattern_len, const char *text,
		size_t text_len, unsigned flags);

/*
 * Whether the glob pattern[0..pattern_len) is well formed: false when
 * it holds an unterminated set or an unknown "[:class:]", or ends in a
 * lone '\', for which glob_match() (like git's wildmatch) quietly
 * matches nothing at all. For commands that take a pattern on the
 * command line and would rather say it is wrong.
 * O(pattern length).
 */
bool glob_is_wellformed(const char *pattern, size_t pattern_len);

/* git's limit on a pattern file or blob (dir.c PATTERN_MAX_FILE_SIZE). */
#define PATH_PATTERNS_MAX_SIZE (100 * 1024 * 1024)

struct path_patterns;

enum path_patterns_flags {
	PATH_PATTERNS_ICASE = 1 << 0,   /* match as GLOB_ICASE (core.ignoreCase) */
};

/*
 * Parse the pattern text buf[0..len) into *out (which may end up with
 * no patterns: an empty text, only comments). Errors: GP_ENOMEM when
 * the text, with the newline git adds to a last line that lacks one,
 * is over PATH_PATTERNS_MAX_SIZE bytes ("excessively large"), *out
 * NULL then. Free with path_patterns_free().
 */
int path_patterns_parse(struct path_patterns **out, const char *buf, size_t len,
			unsigned flags, struct gp_error *err);
void path_patterns_free(struct path_patterns *pl);
size_t path_patterns_nr(const struct path_patterns *pl);

enum path_match {
	PATH_UNDECIDED = -1,      /* no pattern matches */
	PATH_NOT_MATCHED = 0,     /* the last match is a negated pattern */
	PATH_MATCHED = 1,
};

/*
 * How the list decides for path[0..len) (from the top, no leading or
 * trailing '/'; "" is the top directory itself), whose last component
 * starts at path + basename_ofs; is_dir says whether it names a
 * directory (for patterns ending in '/').
 */
enum path_match path_patterns_match(const struct path_patterns *pl, const char *path,
				    size_t len, size_t basename_ofs, bool is_dir);

#endif
