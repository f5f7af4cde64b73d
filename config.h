/*
 * config.h: a git-compatible configuration reader.
 *
 * Syntax as git-config(1) documents it: [section], [section "subsection"],
 * the legacy [section.subsection], "key = value" and bare "key" (boolean
 * true), quoting with "...", the escapes \" \\ \n \t \b, line
 * continuation with a trailing backslash, comments starting with # or ;,
 * and includes (git-config(1), "Includes" and "Conditional includes").
 *
 * Includes. An include.path entry is kept in the set, followed by the
 * entries of the file it names, as "git config --list" shows them: "~/"
 * and "~user/" expanded, a relative path taken from the directory of
 * the including file (an error when the entry does not come from a
 * file), a missing file ignored, at most 10 levels deep. An
 * includeIf.<condition>.path entry is kept too, and its file follows
 * it when the condition holds:
 *
 *  - gitdir:<pattern>, gitdir/i:<pattern> (ASCII case folded): the git
 *    directory matches the glob (path-patterns.h, with GLOB_PATHNAME).
 *    A leading "~/" or "~user/" is expanded ($HOME with its symbolic
 *    links resolved; kept as written when $HOME is unset or the user
 *    unknown), a leading "./" becomes the directory of the including
 *    file (with symbolic links resolved; never a match when the entry
 *    does not come from a file), a pattern that then does not start
 *    with '/' gets "**" "/" in front, and one ending in '/' gets "**"
 *    added. The resolved git directory is tried, then the one git
 *    spells (config_repo_info). A prefix from "./" is compared as
 *    plain text, not as a glob, and must start the resolved path (or
 *    nothing matches), as in git.
 *  - worktree:<pattern>, worktree/i:<pattern>: the same patterns,
 *    against the top of the work tree (symbolic links resolved); never
 *    in a bare repository.
 *  - onbranch:<pattern>: the branch HEAD names ("main" for
 *    refs/heads/main; an unborn branch counts, a detached HEAD never
 *    matches) matches the glob; a pattern ending in '/' gets "**".
 *  - hasconfig:remote.*.url:<pattern>: some remote.<name>.url anywhere
 *    in the config being read (one with a value: git 2.39 and 2.55
 *    crash on a bare one) matches the glob, as written. The first such
 *    condition makes the reader go once over every source of the
 *    load (config_set_load_repo(): all the standard ones) for the
 *    URLs, without storing anything. In that pass, a file included by
 *    an includeIf whose condition holds (any hasconfig one counts as
 *    holding), or by one of those, may not set remote.<name>.url: git
 *    refuses it with "remote URLs cannot be configured in file
 *    directly or indirectly included by includeIf.hasconfig:remote.*.url",
 *    and so do we (GP_ECORRUPT), also when a hasconfig include is
 *    followed afterwards.
 *
 * Any other condition never holds, as in git (worktree: and
 * worktree/i: are new in git 2.56, which the Git 2.55.0.618 of the
 * git-t harness previews; older gits ignore them). The gitdir,
 * worktree and onbranch conditions need a repository: without a
 * config_repo_info they never hold. Entries from the command line
 * (-c, GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT) take part like the
 * files (their "./" patterns never match, their relative paths are
 * errors). A condition is tested before its path: a false one with a
 * bad path is no error. A "~/" pattern when $HOME is empty, or names a
 * path whose parent does not exist, is an error (GP_EINVAL), as it is
 * fatal in git.
 *
 * The parser accepts arbitrary bytes: it never reads past the buffer
 * and reports the first problem as an error, never a crash. Values may
 * not contain NUL bytes (git would silently truncate them; we refuse).
 *
 * Keys are canonicalised as git does: section and variable name
 * lower-cased, subsection kept verbatim: "Core.Bare" -> "core.bare",
 * [remote "Origin"] url -> "remote.Origin.url".
 *
 * A config_set holds every (key, value) in the order read; lookups return
 * the last value for a key ("last one wins"), as git does.
 */
#ifndef GP_CONFIG_H
#define GP_CONFIG_H

#include "util.h"

struct gp_error;

enum config_scope {
	CONFIG_SCOPE_SYSTEM = 1,
	CONFIG_SCOPE_GLOBAL,
	CONFIG_SCOPE_LOCAL,
	CONFIG_SCOPE_COMMAND, /* GIT_CONFIG_PARAMETERS / GIT_CONFIG_COUNT */
};

struct strbuf;

struct config_entry {
	char *key;   /* canonical "section[.subsection].name" */
	char *value; /* NULL for a bare "key" (boolean true) */
	enum config_scope scope;
	char *file;    /* the file it was read from; NULL for -c, the environment, a blob */
	size_t linenr; /* its line in file */
};

struct config_set {
	struct config_entry *items;
	size_t nr, alloc;
};

#define CONFIG_SET_INIT { .items = NULL }

void config_set_init(struct config_set *cs);
void config_set_release(struct config_set *cs);

/*
 * The repository that includeIf conditions are tested against. Strings
 * are borrowed for the duration of the read; any field may be NULL
 * (that condition never holds then).
 */
struct config_repo_info {
	/* gitdir: the git directory, absolute, symbolic links resolved... */
	const char *gitdir;
	/*
	 * ... and spelled as git spells it, which gitdir: tries next:
	 * absolute, with the symbolic links of $PWD kept where git took
	 * its path from $PWD (repository.c). NULL: only gitdir is tried.
	 */
	const char *gitdir_spelled;
	/* worktree: the top of the work tree, symbolic links resolved. */
	const char *worktree;
	/*
	 * onbranch: returns the checked-out branch ("main" for
	 * refs/heads/main), which the reader frees, or NULL (detached,
	 * unreadable HEAD). Called at most once per read, and only when an
	 * onbranch condition is met, so that HEAD is read only then. It
	 * must not touch the set being read.
	 */
	char *(*current_branch)(void *data);
	void *data;
};

/* How to read a file or a buffer; a NULL pointer means all defaults. */
struct config_read_opts {
	/* NULL: outside any repository (gitdir, worktree, onbranch: false). */
	const struct config_repo_info *repo;
	/*
	 * include.path and includeIf.*.path are plain entries, never
	 * followed: git config --no-includes, and how git reads a
	 * repository's format (repository.h).
	 */
	bool no_includes;
};

/*
 * Parse the file at path and append its entries. A missing file is not
 * an error (returns 0). Errors: GP_ECORRUPT for a syntax error, with
 * "bad config line N in file PATH" in err (git's wording), or a bad
 * include (its reason after that prefix); GP_EIO when the file (or one
 * it includes) cannot be read; GP_EINVAL for a "~/" pattern that
 * cannot be expanded. On error nothing is appended: the set is left as
 * it was. A hasconfig condition reads the file (alone) again.
 */
int config_set_add_file(struct config_set *cs, const char *path,
			enum config_scope scope, const struct config_read_opts *opts,
			struct gp_error *err);
/*
 * Parse a config text from memory; name is used in error messages
 * ("bad config line N in NAME"). buf may hold any bytes, NULs included,
 * and need not be NUL-terminated. Relative include paths are refused
 * (there is no file to be relative to). Same errors as above.
 */
int config_set_add_buf(struct config_set *cs, const char *name,
		       const char *buf, size_t len, enum config_scope scope,
		       const struct config_read_opts *opts, struct gp_error *err);
/*
 * Add one entry (key is canonicalised as git canonicalises "-c" keys:
 * section and name lower-cased, subsection verbatim); GP_EINVAL for a
 * bad key ("invalid key: ...", "key does not contain a section: ...").
 * An absolute include.path is followed, and so is an includeIf whose
 * condition holds without a repository (hasconfig, against this entry).
 */
int config_set_add(struct config_set *cs, const char *key, const char *value,
		   enum config_scope scope, struct gp_error *err);

/*
 * Called for each entry of a streamed text, in order: key canonical as
 * above, value NULL for a bare "key". Returns 0 to go on, or a
 * negative GP_E* code, which stops the parse and is returned.
 */
typedef int config_entry_fn(const char *key, const char *value, void *data);

/*
 * Parse buf[0..len) the way git reads a config text held in a blob
 * (git config --blob, and fsck's check of .gitmodules files), handing
 * each entry to fn as it is read rather than storing it:
 *  - include.path and includeIf.*.path are ordinary entries: nothing
 *    is ever read from disk;
 *  - a byte order mark is not skipped (it is a syntax error);
 *  - blanks between the words of a value are kept as they are (git
 *    2.55; files are read as git 2.39 reads them, one space each);
 *  - a NUL byte inside a value or a quoted subsection does not end the
 *    line: the string fn sees is cut at the NUL, as git's are;
 *  - entries before a syntax error have been passed to fn when the
 *    error (GP_ECORRUPT, "bad config line N in NAME") is returned.
 * Any bytes are accepted; nothing is read outside buf. name only
 * appears in messages ("blob" when NULL). O(len).
 */
int config_parse_blob(const char *name, const char *buf, size_t len,
		      config_entry_fn *fn, void *data, struct gp_error *err);

/*
 * Read system, global, then the repository's config (gitdir/config,
 * when gitdir is not NULL), then command-line settings, the precedence
 * git uses:
 *  - system: $GIT_CONFIG_SYSTEM or /etc/gitconfig, skipped when
 *    GIT_CONFIG_NOSYSTEM is true;
 *  - global: $GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config (or
 *    $HOME/.config/git/config) then $HOME/.gitconfig;
 *  - local: gitdir/config, then gitdir/config.worktree when that
 *    config (itself, not what it includes, as git reads it) sets
 *    extensions.worktreeConfig (both CONFIG_SCOPE_LOCAL);
 *  - command: GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n>,
 *    then GIT_CONFIG_PARAMETERS as git quotes it ('key'='value'), so -c
 *    wins over GIT_CONFIG_COUNT.
 * Missing files are skipped. includeIf conditions are tested against
 * the repository gitdir (a NULL gitdir: none; otherwise gitdir itself
 * for gitdir:). Errors: those of config_set_add_file, and GP_EINVAL for
 * malformed environment settings ("bogus format in
 * GIT_CONFIG_PARAMETERS"). On error nothing is appended.
 */
int config_set_load_standard(struct config_set *cs, const char *gitdir,
			     struct gp_error *err);
/*
 * The same, for a linked worktree whose shared config lives in the
 * common directory: commondir/config, then gitdir/config.worktree when
 * enabled, with includeIf conditions tested against repo (NULL: no
 * repository). config_set_load_standard(cs, d) is
 * config_set_load_repo(cs, d, d, <d as gitdir>). Either directory may
 * be NULL.
 */
int config_set_load_repo(struct config_set *cs, const char *commondir,
			 const char *gitdir, const struct config_repo_info *repo,
			 struct gp_error *err);
/*
 * The repository's own config as git reads its format (core.bare,
 * core.worktree, core.repositoryformatversion, extensions.*):
 * commondir/config, then gitdir/config.worktree when the first sets
 * extensions.worktreeConfig, includes not followed. commondir must
 * not be NULL. Errors as config_set_add_file(); GP_ECORRUPT for a bad
 * worktreeConfig boolean.
 */
int config_set_load_format(struct config_set *cs, const char *commondir,
			   const char *gitdir, struct gp_error *err);

/*
 * Lookups. Return 0 when found, GP_ENOTFOUND when the key is absent,
 * GP_EINVAL with a message naming key and value when the value does not
 * parse. key is given in canonical form (section and name are matched
 * case-insensitively anyway). Each lookup scans the set from the end:
 * O(number of entries).
 */
/* The raw value: *out is NULL for a bare "key" (no '='). */
int config_get_value(const struct config_set *cs, const char *key,
		     const char **out);
/*
 * Where the value of key that wins was set: *file (NULL when it came
 * from -c, the environment or a blob) and *linenr. false when key is
 * not set.
 */
bool config_origin(const struct config_set *cs, const char *key, const char **file,
		   size_t *linenr);
/* A string value; GP_EINVAL (no message) for a bare "key". */
int config_get_string(const struct config_set *cs, const char *key,
		      const char **out);
/*
 * true/yes/on and false/no/off/"" in any case, a bare key is true, and
 * any integer (as for config_get_int) is true unless it is zero.
 */
int config_get_bool(const struct config_set *cs, const char *key, bool *out,
		    struct gp_error *err);
/* The same, dflt when the key is absent or its value is no boolean. */
bool config_get_bool_or(const struct config_set *cs, const char *key, bool dflt);
/*
 * An integer as strtoimax() reads it with base 0 (so 0x10 and 010 are
 * hex and octal, as in git) with an optional k/m/g suffix (powers of
 * 1024, any case), range-checked against the result type. Messages:
 * "bad numeric config value 'V' for 'KEY': invalid unit|out of range",
 * "missing value for 'KEY'" for a bare key. ulong refuses any '-'.
 */
int config_get_int(const struct config_set *cs, const char *key, int *out,
		   struct gp_error *err);
int config_get_ulong(const struct config_set *cs, const char *key,
		     unsigned long *out, struct gp_error *err);

/*
 * One entry's value, for callers that read every entry in turn (a key
 * given twice takes effect twice): config_entry_int() as config_get_int();
 * config_entry_double() reads a decimal number (strtod()) with the same
 * k/m/g suffixes and messages.
 */
int config_entry_int(const struct config_entry *e, int *out, struct gp_error *err);
int config_entry_double(const struct config_entry *e, double *out, struct gp_error *err);

/* Value parsers shared with option handling; false when invalid. */
bool config_parse_bool(const char *value, bool *out);
bool config_parse_int64(const char *value, int64_t *out);
/* A size: digits (base 0, as strtoumax) and an optional k/m/g suffix, no sign. */
bool config_parse_uint64(const char *value, uint64_t *out);

#endif
