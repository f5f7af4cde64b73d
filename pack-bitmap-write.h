/*
 * pack-bitmap-write.h: building the reachability bitmaps of one pack or
 * of the MIDX and writing them as a .bitmap (technical/bitmap-format;
 * layout in pack-bitmap.h).
 *
 * How:
 *  - Every object's type goes into the type bitmaps (read from the pack
 *    entry headers, in threads).
 *  - The commits reachable from the tips are read once into a compact
 *    graph; a bitmap over a pack or MIDX must be closed (FULL_DAG), so a
 *    reachable object outside it is an error.
 *  - Commit selection, as git's (t5326 compares): every tip commit when
 *    there are at most BITMAP_ALL_TIPS_LIMIT of them (beyond that, each
 *    costs about a kilobyte and the file grows past git's); by commit
 *    date, each of the newest 101 commits; then, going back in time,
 *    one commit per window, the windows growing from 2 to 101 commits
 *    and, past 20,000 commits, up to 5,001; in a window, newest first,
 *    the first commit the reused bitmap (below) has or that is selected
 *    already, else the oldest merge, else the window's end. Tips marked
 *    preferred (pack.preferBitmapTips) and HEAD's commit are always
 *    selected. A layer of a chain (base_objects) ranks its own commits
 *    only, as git does, so the dates of the commits below need not be
 *    known (the tips' count still covers every tip commit).
 *  - A layer whose base is the old chain, or its lower layers (the new
 *    layer took the old top's place), layer for layer: the positions
 *    below base_objects keep their bits and types (from the old type
 *    bitmaps), only the names above them go into the oid table (the
 *    MIDX answers for the others), and the commit walk stops at the
 *    commits below base_objects whose old bitmap maps whole; old tips
 *    are followed only until an old bitmap covers them. The cost then
 *    follows the layer's objects, the old commits between them and
 *    the nearest old bitmaps, and the old tips no old bitmap covers.
 *    GP_TEST_BITMAP_LAYER_SLOW=1 takes the general path (every type
 *    read, every name in the table, every commit walked), which writes
 *    the same bytes (t7705).
 *  - Reuse: when the repository already has a bitmap (the MIDX's or a
 *    pack's) and at least 3/4 of the new order keeps the positions it
 *    had there (the geometric steady state: the largest pack leads both
 *    MIDXs), the old bitmaps of our commits are taken over, moved to the
 *    new positions, wherever all their objects are still present; trees
 *    are then read only below the commits no old bitmap covers, and name
 *    hashes come from the old file's cache and from those trees.
 *    Otherwise (and with opts.fresh) everything is built afresh, as
 *    below.
 *  - Every tree of the pack or MIDX is decoded once, along its delta
 *    chain (base first, each delta applied once), in threads, and its
 *    entries are looked up then (those unchanged from the tree's delta
 *    base take the base's positions); a tree that cannot be (an entry
 *    outside the pack or MIDX, say) is an error only if a commit
 *    reaches it.
 *  - Building reuses work: selected commits are built parents first; one
 *    starts from the bitmaps of the selected commits it reaches (the
 *    commit walk runs in topological order, so each such commit is met
 *    before anything it covers), then walks, in memory, only the trees
 *    not already in the bitmap.
 *  - The name-hash cache: an object's hash is that of its name in the
 *    tree listing it (git hashes the whole path, whose last 16
 *    characters count, so they differ only for short names below the
 *    root); the smallest wins when it has several names, so that the
 *    file does not depend on thread timing.
 *  - Each bitmap is XORed with the one of the previous ten entries that
 *    makes it smallest, in threads.
 *  - Refs whose tip is outside the pack or MIDX get no bitmap (as git).
 *  - Pseudo-merges (bitmapPseudoMerge.*; pseudo-merge.h) are built
 *    last, each from the bitmaps of the selected commits it reaches;
 *    one whose commits are those of a pseudo-merge of the reused bitmap
 *    takes that one's objects. Commits outside the pack or MIDX, or not
 *    reachable from the tips, are left out of them.
 *
 * The file is written to a temporary file, fsynced and renamed into
 * place (hashfile.h).
 */
#ifndef GP_PACK_BITMAP_WRITE_H
#define GP_PACK_BITMAP_WRITE_H

#include "object.h"

struct gp_error;
struct odb;
struct bitmap_order;
struct pseudo_merge_config;
struct pseudo_merge_ref;

#define BITMAP_ALL_TIPS_LIMIT 32

struct bitmap_write_tip {
	struct object_id oid; /* a ref's value: tags are peeled here */
	bool preferred;       /* pack.preferBitmapTips matched, or '+' in a refs snapshot */
};

struct bitmap_write_opts {
	const struct bitmap_write_tip *tips;
	size_t nr_tips;
	bool hash_cache;    /* pack.writeBitmapHashCache (default on) */
	bool lookup_table;  /* pack.writeBitmapLookupTable (default on) */
	int threads;        /* 0: one per CPU */
	bool progress;
	bool fresh;         /* build every bitmap anew, not from the repository's */
	/*
	 * The bitmap of one layer of an incremental MIDX chain
	 * (technical/multi-pack-index): bits below base_objects belong to
	 * the layers below, which have their own bitmaps. Their objects
	 * get no type bits and no name hashes here, and none of their
	 * commits is selected; reachability bitmaps still span every bit.
	 */
	uint32_t base_objects;
	/*
	 * Pseudo-merges (pseudo-merge.h): the groups, and the refs they
	 * matched; none when pseudo_merges is NULL or has no group, or
	 * for a layer of a chain.
	 */
	const struct pseudo_merge_config *pseudo_merges;
	const struct pseudo_merge_ref *pseudo_refs;
	size_t nr_pseudo_refs;
	/*
	 * The repository's commit-graph, or NULL: the commit walk takes a
	 * commit's tree, parents and date from it instead of inflating the
	 * commit (the commits it lacks are read), as git trusts its graph.
	 */
	const struct commit_graph *graph;
};

struct commit_graph;

struct bitmap_write_stats {
	uint32_t nr_commits;   /* reachable from the tips (for a layer, those walked) */
	uint32_t nr_selected;  /* bitmaps written */
	uint32_t nr_reused;    /* of those and the others walks met, taken from the old bitmap */
	uint32_t nr_pseudo_merges;        /* written */
	uint32_t nr_pseudo_merges_reused; /* of those, taken from the old bitmap */
	uint64_t file_size;
};

/*
 * Build and write the bitmap of order (a pack, or odb's MIDX) to
 * bitmap_order_bitmap_path(order). stats may be NULL.
 * Errors: GP_ENOTFOUND (a reachable object is missing, or not in the
 * pack or MIDX: named), GP_ECORRUPT, GP_EIO.
 */
int bitmap_write(struct bitmap_order *order, struct odb *odb,
		 const struct bitmap_write_opts *opts,
		 struct bitmap_write_stats *stats, struct gp_error *err);

#endif
