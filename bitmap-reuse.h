/*
 * bitmap-reuse.h: the bitmap writer's use of the repository's current
 * bitmap (a part of pack-bitmap-write.c; pack-bitmap-write-internal.h).
 * Why and when it pays is told in bitmap-reuse.c. Every function here
 * does nothing (or finds nothing) when bitmap_reuse_open() declined.
 */
#ifndef GP_BITMAP_REUSE_H
#define GP_BITMAP_REUSE_H

#include "util.h"

struct bitmap;
struct bitmap_writer;

/*
 * Open the repository's bitmap into w->reuse when enough of the new
 * order keeps its runs of positions; take its name hashes. Any trouble
 * with it (none, stale, damaged) leaves w->reuse NULL: build afresh.
 * Builds w's table (writer_table_build()) when the old positions must
 * be looked up; needs no types.
 */
void bitmap_reuse_open(struct bitmap_writer *w);

/*
 * When bitmap_reuse_layer_walk(), the types of the positions below
 * base_objects into w->types[0 .. base_objects) from the old file's
 * type bitmaps, and true; false otherwise (or when they do not give
 * each such position exactly one type): read them from the packs.
 * O(base_objects) memory writes, no pack read.
 */
bool bitmap_reuse_base_types(struct bitmap_writer *w);
void bitmap_reuse_free(struct bitmap_writer *w);

/*
 * Whether the commit walk may stop at the old chain's bitmaps: the new
 * order's layers below its top are the old chain's lowest layers
 * (bitmap_order_extends(); GP_TEST_BITMAP_LAYER_SLOW unset). Positions
 * below base_objects are then the same in both, and the bitmaps of
 * those layers' commits map whole.
 */
bool bitmap_reuse_layer_walk(const struct bitmap_writer *w);

/*
 * When the old chain has a bitmap for the (old) commit at bit_pos that
 * maps whole (bitmap_reuse_or() will then say *complete), OR it into
 * closure and set *covered: what the commit reaches is known, and none
 * of it is new. *covered false otherwise (no entry, a damaged one, or
 * not bitmap_reuse_layer_walk()). Errors: GP_ENOMEM.
 */
int bitmap_reuse_covered(struct bitmap_writer *w, uint32_t bit_pos, struct bitmap *closure,
			 bool *covered);

/* Set wcommit.old_row for each commit of ours the old file has a bitmap for. */
void bitmap_reuse_mark_commits(struct bitmap_writer *w);

/*
 * OR into bits the old bitmap of entry row, moved to the new positions.
 * *complete is false when it holds an object the new order lacks (or
 * the entry is damaged): the commit must then be walked. Errors:
 * GP_ENOMEM.
 */
int bitmap_reuse_or(struct bitmap_writer *w, struct bitmap *bits, uint32_t row, bool *complete);

/* Read and resolve one tree a walk needs (trees are not read ahead). */
int bitmap_reuse_load_tree(struct bitmap_writer *w, uint32_t tree_pos);

/* How many bitmaps were taken over whole ("Bitmaps reused"); 0 without reuse. */
uint32_t bitmap_reuse_nr_reused(const struct bitmap_writer *w);
void bitmap_reuse_set_nr_reused(struct bitmap_writer *w, uint32_t nr);

/*
 * Into bits (reset first), the objects of the old pseudo-merge whose
 * commits are exactly bit_pos[0 .. nr] (sorted, new positions); *found
 * false when there is none, or it holds an object we lack. Errors:
 * GP_ENOMEM.
 */
int bitmap_reuse_pseudo(struct bitmap_writer *w, struct bitmap *bits, const uint32_t *bit_pos,
			size_t nr, bool *found);

#endif
