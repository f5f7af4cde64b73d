/*
 * refs.h: reading a repository's references, in either of git's ref
 * storage formats (extensions.refStorage, repo->ref_storage): the
 * "files" backend described here (gitrepository-layout(5),
 * git-check-ref-format(1), git-pack-refs(1)), or reftable (reftable.h;
 * see "Reftable" below). Every function works on both.
 *
 * A reference is a name ("HEAD", "refs/heads/main") that holds an
 * object id, either directly or, for a symbolic ref, through another
 * reference ("ref: refs/heads/main"). It is stored in one of two places:
 *
 *  - a loose ref: the file <dir>/<refname>, holding "<hex>" or
 *    "ref: <refname>", then optional whitespace (and, in FETCH_HEAD,
 *    more text after the first whitespace). <dir> is the git directory
 *    for per-worktree refs (HEAD and other one-level names, refs/bisect/,
 *    refs/worktree/, refs/rewritten/) and the common directory for all
 *    others (see repository.h);
 *  - the common directory's packed-refs file: an optional header
 *    "# pack-refs with: <traits>", then "<hex> SP <refname> LF" lines,
 *    each optionally followed by a "^<hex> LF" line giving what an
 *    annotated tag peels to.
 *
 * A loose ref overrides a packed ref of the same name. Symbolic refs
 * are followed, REFS_MAX_SYMREF_DEPTH refs deep at most.
 *
 * Nothing read is trusted: loose ref files are read with a size bound,
 * packed-refs is parsed strictly (a malformed line is GP_ECORRUPT with
 * the line number), and names read from disk are checked against
 * git-check-ref-format's rules. A loose ref whose content cannot be
 * parsed, whose name is invalid, which holds the null id or which is a
 * dangling or looping symref is "broken": lookups report it, iteration
 * skips it (as git skips it with "ignoring broken ref").
 *
 * The parsed packed-refs file is cached in the repository (repo->refs)
 * and re-read only when its size, mtime or inode change, so repeated
 * lookups and iterations cost one stat() of it each. Loose refs are read
 * from disk every time. Not thread-safe: one repository per thread.
 *
 * Reftable: refs and reflogs are in the stack <commondir>/reftable/,
 * except a linked worktree's per-worktree refs (the names above that
 * live in its git directory), which are in <gitdir>/reftable/; the
 * common stack's own per-worktree refs are the main worktree's.
 * FETCH_HEAD and MERGE_HEAD are loose files in either format. A record
 * holding the null id, a symref to an invalid name, or a record whose
 * name is invalid is broken as a loose file is; refs are never
 * REF_ISPACKED, and REF_KNOWS_PEELED comes with every record that
 * stores a peeled id. The stacks are cached in repo->refs and re-read
 * when their tables.list changes (one stat() per lookup). A corrupt table
 * is GP_ECORRUPT naming the table and the offset.
 */
#ifndef GP_REFS_H
#define GP_REFS_H

#include "object.h"

struct gp_error;
struct repository;
struct ref_store;

/*
 * One resolution reads at most this many refs (git's limit): a chain of
 * more than 4 symbolic refs is broken, and so is a loop.
 */
#define REFS_MAX_SYMREF_DEPTH 5

enum refname_flags {
	/* Accept names without a '/' ("HEAD", "FETCH_HEAD", "main"). */
	REFNAME_ALLOW_ONELEVEL = 1 << 0,
};

/*
 * Whether name is a well-formed refname per git-check-ref-format(1):
 * no empty component, none starting with '.' or ending in ".lock", no
 * "..", "@{", control characters, space, '~', '^', ':', '?', '*', '[' or
 * '\\', not ending in '.', not "@", and (unless REFNAME_ALLOW_ONELEVEL)
 * at least one '/'. O(length).
 */
bool refname_is_valid(const char *name, unsigned flags);
/* The same for the len bytes at name (no NUL needed). */
bool refname_is_valid_len(const char *name, size_t len, unsigned flags);

enum ref_flags {
	REF_ISSYMREF = 1 << 0,     /* the name given was a symbolic ref */
	REF_ISPACKED = 1 << 1,     /* the final value came from packed-refs */
	REF_ISBROKEN = 1 << 2,     /* see above; the id is null */
	/*
	 * packed-refs says what this ref peels to: peeled is the object
	 * an annotated tag finally points at, or NULL when the ref does
	 * not point at a tag. Without this flag nothing is known.
	 */
	REF_KNOWS_PEELED = 1 << 3,
};

/*
 * Resolve name (a full refname such as "HEAD" or "refs/heads/main",
 * checked with REFNAME_ALLOW_ONELEVEL) to an object id, following
 * symbolic refs. *resolved_name_out, when not NULL, receives the name
 * of the ref that held the id (caller frees; NULL on error).
 *
 * Errors: GP_ENOTFOUND when the ref does not exist, or is a symbolic
 * ref to one that does not (an unborn branch); GP_EINVAL when name is
 * not a valid refname; GP_ECORRUPT when a loose ref on the way is
 * broken (the message names the file) or packed-refs is malformed;
 * GP_EIO. Cost: one open() per level, plus an O(log n) search of the
 * cached packed-refs when the loose file is absent.
 */
int refs_resolve(struct repository *repo, const char *name, struct object_id *oid,
		 char **resolved_name_out, struct gp_error *err);
/*
 * Like refs_resolve(), and *flags_out (when not NULL) receives
 * enum ref_flags: REF_ISBROKEN along with GP_ECORRUPT tells a broken
 * loose ref from a malformed packed-refs file.
 */
int refs_resolve_ext(struct repository *repo, const char *name,
		     struct object_id *oid, char **resolved_name_out,
		     unsigned *flags_out, struct gp_error *err);

/*
 * Read one level of name: when it is a symbolic ref, 0 and *target_out
 * is the refname it points at (caller frees), whether or not that
 * exists. GP_ENOTFOUND when name does not exist or is not symbolic
 * (*target_out is NULL then); other errors as refs_resolve().
 */
int refs_read_symref(struct repository *repo, const char *name,
		     char **target_out, struct gp_error *err);

/*
 * Called by refs_for_each() for each ref: refname is borrowed for the
 * call only. peeled is as REF_KNOWS_PEELED describes (NULL otherwise).
 * Return 0 to go on; anything else stops the iteration and is returned
 * by refs_for_each() (return a negative GP_E* code, with err filled in
 * by the callback, to report a failure).
 */
typedef int refs_each_fn(const char *refname, const struct object_id *oid,
			 const struct object_id *peeled, unsigned flags,
			 void *data);

enum refs_each_flags {
	/* Also call fn for broken refs (with REF_ISBROKEN and a null id). */
	REFS_EACH_BROKEN = 1 << 0,
	/*
	 * For walks that must not lose what a ref holds (repack, --all):
	 * under GIT_REF_PARANOIA (on unless set false, as in git) broken
	 * refs are passed too, dangling symrefs aside, so that the caller
	 * can refuse to go on; without it they are skipped.
	 */
	REFS_EACH_PARANOID = 1 << 1,
	/*
	 * One side of the files backend only, for pack-refs, which merges
	 * them itself: the loose refs (packed-refs is not read), or the
	 * entries of packed-refs (no loose file is read, none hides an
	 * entry). A broken packed entry (an invalid name) comes with the
	 * null id, as for every broken ref. With an empty prefix,
	 * REFS_EACH_PACKED_ONLY passes every entry, names outside refs/
	 * too: what a rewrite of the file must carry over. GP_EINVAL in a
	 * reftable repository, which has neither.
	 */
	REFS_EACH_LOOSE_ONLY = 1 << 2,
	REFS_EACH_PACKED_ONLY = 1 << 3,
};

/* Whether GIT_REF_PARANOIA is in force (the default). */
bool refs_paranoia(void);

/*
 * Call fn for every ref under refs/ whose name starts with prefix
 * ("refs/tags/"; "" or NULL for all), in strcmp() order of refname,
 * each once: loose and packed refs merged, a loose ref hiding the packed
 * one. HEAD and other names outside refs/ are not included; in a linked
 * worktree, its own refs/bisect/, refs/worktree/ and refs/rewritten/
 * refs are included in place of the common directory's. Broken refs are
 * skipped. Symbolic refs are reported with the id they resolve to and
 * REF_ISSYMREF.
 *
 * Returns 0, fn's non-zero return, or GP_ECORRUPT (packed-refs is
 * malformed) / GP_EIO (a directory cannot be read) before any call to
 * fn. Cost: reading the loose refs under prefix's directory and sorting
 * them, plus an O(log n) seek into the cached packed-refs and a walk
 * over its part under prefix.
 */
int refs_for_each(struct repository *repo, const char *prefix,
		  refs_each_fn *fn, void *data, struct gp_error *err);
/* With enum refs_each_flags. */
int refs_for_each_ext(struct repository *repo, const char *prefix, unsigned flags,
		      refs_each_fn *fn, void *data, struct gp_error *err);

/*
 * One ref as refs_for_each_view() passes it, all borrowed for the call:
 * the id as hex (hexsz lowercase digits, not NUL-terminated), copied
 * from packed-refs rather than decoded and encoded again; the null id's
 * for a broken ref.
 */
struct ref_view {
	const char *name;       /* NUL-terminated */
	size_t name_len;
	const char *hex;
	const char *peeled_hex; /* as refs_each_fn's peeled: NULL unless known to peel */
	unsigned flags;         /* enum ref_flags */
};
typedef int refs_view_fn(const struct ref_view *ref, void *data);

/*
 * refs_for_each_ext(), the ids given as hex: for callers that print
 * them (ls-refs). Same order, flags, errors and cost.
 */
int refs_for_each_view(struct repository *repo, const char *prefix, unsigned flags,
		       refs_view_fn *fn, void *data, struct gp_error *err);

/*
 * Every object name the reflogs hold (old and new values, null ones
 * aside), those of linked worktrees' HEADs included: what git's
 * "--reflog" keeps alive. fn may see a name several times. Returns fn's
 * non-zero value, or GP_EIO.
 */
typedef int reflog_oid_fn(const struct object_id *oid, void *data);
int refs_for_each_reflog_oid(struct repository *repo, reflog_oid_fn *fn, void *data,
			     struct gp_error *err);

/*
 * The HEAD of the linked worktree whose git directory is wt_gitdir
 * (<commondir>/worktrees/<name>), when it is detached: 0 and *oid.
 * GP_ENOTFOUND when it is a symbolic ref, missing, or (files backend)
 * unreadable; GP_ECORRUPT when the worktree's reftable stack is corrupt;
 * GP_EIO.
 */
int refs_read_worktree_head(struct repository *repo, const char *wt_gitdir,
			    struct object_id *oid, struct gp_error *err);

/*
 * Whether the full refname has a reflog (possibly empty): a file under
 * logs/ in the files backend, any log record in a reftable one.
 */
bool refs_reflog_exists(struct repository *repo, const char *refname);
/*
 * The new id of the entry of refname's reflog n changes back from the
 * newest (0: the newest), as "<ref>@{<n>}" names it. Errors:
 * GP_ENOTFOUND when refname has no reflog; GP_EINVAL when it has n
 * entries or fewer (*nr_out then holds how many; the message says so);
 * GP_ECORRUPT when that entry is malformed (files) or a table is
 * corrupt; GP_EIO. Cost: reading the whole reflog.
 */
int refs_reflog_nth(struct repository *repo, const char *refname, size_t n,
		    struct object_id *oid, size_t *nr_out, struct gp_error *err);

/*
 * The parsers on their own, for the fuzzer and tests: a packed-refs
 * image held in memory, whose entries are passed to fn in refname order
 * (broken ones too, flagged; each name once), and the content of one
 * loose ref file (*target_out, when symbolic, is the refname it names,
 * caller frees; NULL otherwise). Errors: GP_ECORRUPT, GP_ENOMEM; or fn's
 * non-zero return.
 */
int refs_parse_packed_buf(const char *buf, size_t len, int algo,
			  refs_each_fn *fn, void *data, struct gp_error *err);
int refs_parse_loose_buf(const char *buf, size_t len, int algo,
			 struct object_id *oid, char **target_out,
			 struct gp_error *err);

/* For repo_free(): release the cached state in repo->refs. Accepts NULL. */
void ref_store_free(struct ref_store *refs);

#endif
