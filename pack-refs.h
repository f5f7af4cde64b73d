/*
 * pack-refs.h: writing the packed-refs file of the "files" ref backend
 * from the loose refs, as git pack-refs does (git-pack-refs(1); the
 * file's layout is in refs.h):
 *
 *   "# pack-refs with: peeled fully-peeled sorted " LF
 *   <hex> SP <refname> LF          one per ref, in strcmp() order
 *   ^<hex> LF                      after a ref to an annotated tag:
 *                                  the object it finally points at
 *
 * Which loose refs go in ("selected"): those under refs/ that are not
 * per-worktree (refs/bisect/, refs/worktree/, refs/rewritten/), not
 * symbolic, not broken, whose object exists, which match no exclude
 * pattern and match an include pattern. The include patterns are "*"
 * with PACK_REFS_ALL, else the ones given, else git's default: every
 * name under refs/tags/. Patterns are glob(7) patterns matched against
 * the whole refname, '*' crossing '/' (git's wildmatch without
 * WM_PATHNAME).
 *
 * The new file holds every entry of the old packed-refs, as it was,
 * each selected loose ref taking the place of a packed entry of the
 * same name. So a ref packed once stays packed (its loose file, when
 * not selected, hides the stale entry, as before), and nothing in
 * packed-refs is ever dropped: an entry whose object is missing stays,
 * and one whose name is invalid stays with the null id, as git keeps
 * it. What an entry peels to is what the old file said, or, when it
 * said nothing (a file from an old git), what the object peels to.
 *
 * Peeling, checked as Git 2.55 checks it: a tag is peeled through each tag
 * it leads to, and each object on the way must exist and be of the
 * type its tag names; when one is not (a tag that says "type commit"
 * for a blob, a missing object), no "^" line is written rather than a
 * bogus one (Git 2.39 wrote one), so that readers of the peeled value
 * notice the damage.
 *
 * Locking and durability, git's lockfile convention: the lock is
 * "<packed-refs>.lock", packed-refs being first followed through up to
 * five symbolic links (so a packed-refs that is a symlink is written
 * through and stays a symlink), created exclusively (a second writer
 * waits up to core.packedRefsTimeout milliseconds, 1000 by default,
 * then fails), written, fsynced and renamed over the file. Only then
 * is each selected loose ref removed (with PACK_REFS_PRUNE), under its
 * own "<ref>.lock", and only when it still holds the value that was
 * packed (a ref updated in the meantime stays loose and wins); its
 * empty parent directories go too, up to refs/<first level>/.
 *
 * PACK_REFS_AUTO (git's files heuristic): nothing is done unless the
 * selected loose refs number at least 5 x floor(log2(S / 100)), S being
 * packed-refs' size in bytes (0 when absent), and at least 16. S / 100
 * estimates the packed refs, so a repository with many pays for a
 * rewrite only when many loose refs have gathered: 16 loose refs below
 * 1.6 kB of packed-refs, 30 at 10 kB, 45 at 100 kB, 65 at 1 MB.
 */
#ifndef GP_PACK_REFS_H
#define GP_PACK_REFS_H

#include "util.h"

struct gp_error;
struct repository;

enum pack_refs_flags {
	PACK_REFS_ALL = 1 << 0,    /* include every ref: "*" */
	PACK_REFS_PRUNE = 1 << 1,  /* remove the loose refs packed */
	PACK_REFS_AUTO = 1 << 2,   /* only when the heuristic above says so */
};

/* What to pack; the patterns are borrowed for the call. */
struct pack_refs_opts {
	unsigned flags;            /* enum pack_refs_flags */
	const char *const *includes;
	size_t nr_includes;
	const char *const *excludes;
	size_t nr_excludes;
};

struct pack_refs_result {
	bool skipped;              /* PACK_REFS_AUTO found too few loose refs */
	size_t nr_packed;          /* entries in the new packed-refs */
	size_t nr_loose_packed;    /* selected loose refs written into it */
	size_t nr_pruned;          /* loose ref files removed */
	/*
	 * What git reports with "error: " as it goes, in the order met:
	 * "<ref> does not point to a valid object!" for a loose ref (not
	 * per-worktree, not symbolic) whose object is missing, which is
	 * then neither packed nor pruned; "object <oid> is a <type>, not a
	 * <type>" for a tag that names an object by the wrong type, which
	 * is packed without a peeled value. Owned: pack_refs_result_release().
	 */
	char **messages;
	size_t nr_messages, alloc_messages;
};
#define PACK_REFS_RESULT_INIT { .skipped = false }

void pack_refs_result_release(struct pack_refs_result *result);

/*
 * Whether the loose refs opts selects are enough for PACK_REFS_AUTO
 * (whatever opts->flags says of it): 0 and *needed. Dangling loose
 * refs met go into result->messages when result is not NULL. Errors
 * as pack_refs_run(). Cost: reading every loose ref and one object
 * lookup for each.
 */
int pack_refs_check_auto(struct repository *repo, const struct pack_refs_opts *opts,
			 bool *needed, struct pack_refs_result *result, struct gp_error *err);

/*
 * Pack the refs of repo as described above; result (initialized with
 * PACK_REFS_RESULT_INIT) says what was done. Errors, with nothing
 * changed on disk: GP_EINVAL (a reftable repository; a selected ref under refs/heads/ whose object is
 * not a commit, which Git 2.55 refuses to write to a branch),
 * GP_EIO (the lock is held past the timeout, a write failed),
 * GP_ECORRUPT (packed-refs is malformed: its path and line; an object
 * that cannot be read). A loose ref that cannot be removed is not an
 * error: it stays, holding the value packed-refs holds too.
 */
int pack_refs_run(struct repository *repo, const struct pack_refs_opts *opts,
		  struct pack_refs_result *result, struct gp_error *err);

#endif
