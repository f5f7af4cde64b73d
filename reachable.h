/*
 * reachable.h: what keeps objects alive besides refs, as git counts it
 * for repack and gc: the reflogs (git's --reflog), the objects the
 * index files name (--indexed-objects: staged blobs, the cache-tree's
 * trees, resolve-undo blobs), and the HEADs of linked worktrees. A
 * repack that deleted them would lose work nobody has committed yet.
 */
#ifndef GP_REACHABLE_H
#define GP_REACHABLE_H

#include "util.h"

struct gp_error;
struct repository;
struct rev_walk;

enum reachable_flags {
	REACH_REFLOGS = 1 << 0,
	REACH_INDEXES = 1 << 1,        /* every worktree's index */
	REACH_WORKTREE_HEADS = 1 << 2, /* linked worktrees' detached HEADs */
};

/*
 * Add those tips to walk (as interesting). Objects they name that the
 * repository lacks are skipped, as git skips them. Errors: GP_ECORRUPT
 * (a damaged index), GP_EIO.
 */
int reachable_add_tips(struct repository *repo, struct rev_walk *walk, unsigned flags,
		       struct gp_error *err);

/*
 * gc.recentObjectsHook: run each command configured (through the shell,
 * from where git would work) and append the object names they print,
 * one full hex name per line, into *out (*nr_out of them; caller
 * frees): objects a cruft pack or a repack must treat as recent
 * whatever their age. Errors (*out NULL): GP_EIO "unable to enumerate
 * additional recent objects" when a command fails or prints a line
 * that is not a name.
 */
struct object_id;
int reachable_recent_hook_tips(struct repository *repo, struct object_id **out,
			       size_t *nr_out, struct gp_error *err);

#endif
