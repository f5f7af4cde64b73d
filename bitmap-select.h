/*
 * bitmap-select.h: the bitmap writer's commit graph and its choice of
 * commits (a part of pack-bitmap-write.c; pack-bitmap-write-internal.h).
 *
 * The commits reachable from the tips (bitmap_write_opts) are read once
 * into struct bitmap_writer's compact graph: from the commit-graph when
 * opts.graph has them, else from the objects. Selection follows git's
 * (the windows are described in pack-bitmap-write.h).
 */
#ifndef GP_BITMAP_SELECT_H
#define GP_BITMAP_SELECT_H

#include "object.h"

struct bitmap_writer;

/*
 * Read every commit the tips reach into w->commits and w->parents
 * (parents as commit indices once done). A tip outside the order is
 * walked through the odb into the commits the order holds. Needs the
 * types (w->types). Errors: GP_ENOTFOUND (a reachable commit or tree
 * outside the order, named), GP_ECORRUPT, those of reading objects.
 */
int bitmap_select_read_commits(struct bitmap_writer *w);

/* Number the commits (wcommit.topo) so that parents come before children. */
void bitmap_select_topo_sort(struct bitmap_writer *w);

/*
 * Choose the commits that get a bitmap, into w->selected, in file
 * order (newest first). Needs the topological order, and takes the
 * reused bitmap's commits (wcommit.old_row) where a window allows.
 */
void bitmap_select_commits(struct bitmap_writer *w);

/*
 * Peel a tip through its tags to a commit: its bit_pos, NO_POS when it
 * is not one, OUTSIDE_POS when the tip is not in the order. Errors:
 * those of reading and parsing a tag.
 */
int bitmap_select_peel_tip(struct bitmap_writer *w, const struct object_id *tip,
			   uint32_t *bit_pos);

#endif
