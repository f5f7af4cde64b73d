/*
 * builtin/pack-refs-reftable.h: git pack-refs for a repository whose
 * refs are in reftable stacks: the stack is compacted
 * (reftable-compact.h) with the reftable.* settings of git-config(1).
 */
#ifndef GP_BUILTIN_PACK_REFS_REFTABLE_H
#define GP_BUILTIN_PACK_REFS_REFTABLE_H

#include <stdbool.h>

struct repository;

/*
 * Compact the stack of the current worktree (its own stack in a linked
 * worktree): all of it, or with autocompact the geometric segment.
 * Dies on bad reftable.* settings as git does; returns the exit code.
 */
int pack_refs_reftable(struct repository *repo, bool autocompact);

#endif
