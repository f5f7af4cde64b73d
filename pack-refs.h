/*
 * pack-refs.h: writing the packed-refs file of the "files" ref backend
 * from the loose refs, as git pack-refs --all --prune does
 * (git-pack-refs(1); the file's layout is in refs.h):
 *
 *   "# pack-refs with: peeled fully-peeled sorted " LF
 *   <hex> SP <refname> LF          one per ref, in strcmp() order
 *   ^<hex> LF                      after a ref to an annotated tag:
 *                                  the object it finally points at
 *
 * What goes in: every ref under refs/ that resolves (the packed ones
 * and the loose ones, a loose ref taking the place of a packed ref of
 * the same name), but symbolic refs, broken refs and the per-worktree
 * refs (refs/bisect/, refs/worktree/, refs/rewritten/), which stay
 * loose. The same bytes as git writes for the same refs.
 *
 * Locking and durability, git's lockfile convention: packed-refs.lock
 * is created exclusively (a second writer waits up to
 * core.packedRefsTimeout milliseconds, 1000 by default, then fails),
 * written, fsynced and renamed over packed-refs. Only then is each
 * loose ref that went in removed, under its own "<ref>.lock", and only
 * when it still holds the value that was packed (a ref updated in the
 * meantime stays loose and wins); its empty parent directories go too,
 * up to refs/<first level>/.
 */
#ifndef GP_PACK_REFS_H
#define GP_PACK_REFS_H

#include "util.h"

struct gp_error;
struct repository;

struct pack_refs_result {
	size_t nr_packed;  /* refs in the new packed-refs */
	size_t nr_pruned;  /* loose ref files removed */
};

/*
 * Pack the refs of repo as described above. With prune false the loose
 * files stay (git's --no-prune). Errors: GP_EINVAL (a reftable
 * repository: nothing to do in this format), GP_EIO (the lock is held,
 * a write failed), GP_ECORRUPT (packed-refs is malformed). A loose ref
 * that cannot be removed is not an error: it stays, holding the value
 * packed-refs holds too.
 */
int pack_refs_run(struct repository *repo, bool prune, struct pack_refs_result *result,
		  struct gp_error *err);

#endif
