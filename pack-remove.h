/*
 * pack-remove.h: the one policy for removing packs, shared by repack -d
 * and multi-pack-index expire (and by its repack, whose packs expire
 * removes later).
 *
 * What may go: only a pack whose objects are all somewhere durable
 * already, which is the caller's to know (a new pack, a MIDX that no
 * longer lists it), and never one with a .keep file; a cruft pack (one
 * with .mtimes) only when the caller says its objects were handled
 * (repack's cruft modes rewrite them; expire never removes one).
 *
 * When: after everything that replaces it (pack, .idx, .rev, bitmap,
 * MIDX) was fsynced and renamed into place. A crash at any point then
 * leaves every object reachable through some pack.
 *
 * In which order, for one pack: the .idx first (readers find packs by
 * their .idx, so from then on no new reader takes the pack up), then
 * the files that only describe it (.rev, .bitmap, .mtimes, .promisor),
 * and the .pack last (a reader that opened the .idx a moment earlier
 * can still open it). A .keep is never removed.
 */
#ifndef GP_PACK_REMOVE_H
#define GP_PACK_REMOVE_H

#include "util.h"

struct gp_error;

enum pack_remove_flags {
	PACK_REMOVE_CRUFT = 1 << 0, /* a cruft pack may go too */
};

/*
 * May the pack <pack_dir>/<idx_name> be removed under the policy? False
 * for a .keep pack, and for a cruft pack without PACK_REMOVE_CRUFT.
 */
bool pack_may_remove(const char *pack_dir, const char *idx_name, unsigned flags);

/*
 * Remove the files of one pack (named by its .idx or .pack basename,
 * or by a path ending in either: pack_dir may then be NULL) in the
 * order above; a missing file is no error. Errors: GP_EIO (the first
 * file that could not be removed; the others are still tried).
 */
int pack_remove(const char *pack_dir, const char *name, struct gp_error *err);

#endif
