/*
 * repack-bitmap.h: the repository's side of writing bitmaps, for repack,
 * pack-objects and multi-pack-index write: what the bitmap writer
 * (pack-bitmap-write.h, which knows no repository) is told, read from
 * the repository, and the MIDX installed once its bitmap is durable.
 *
 * Read here, and nowhere in the writer:
 *  - refs: every ref under refs/ and HEAD are the tips;
 *  - pack.preferBitmapTips: tips that must get a bitmap;
 *  - pack.writeBitmapHashCache, pack.writeBitmapLookupTable (both
 *    default on): bitmap_write_opts.hash_cache and .lookup_table;
 *  - bitmapPseudoMerge.*: the pseudo-merge groups and their refs;
 *  - core.commitGraph (default on) and the commit-graph of the object
 *    directory: bitmap_write_opts.graph (a damaged one is left out).
 */
#ifndef GP_REPACK_BITMAP_H
#define GP_REPACK_BITMAP_H

#include "util.h"

struct bitmap_write_tip;
struct gp_error;
struct midx_write_result;
struct pseudo_merge_config;
struct pseudo_merge_ref;
struct repository;

/*
 * The tips git chooses bitmapped commits from: every ref under refs/,
 * marked preferred when it is below a pack.preferBitmapTips hierarchy
 * (as git: "refs/tags" and "refs/tags/" mean the refs under refs/tags/),
 * and HEAD's value, always preferred. *tips is allocated (caller frees)
 * and *nr set. Errors: those of refs_for_each().
 */
int bitmap_tips_from_refs(struct repository *repo, struct bitmap_write_tip **tips,
			  size_t *nr, struct gp_error *err);
/*
 * A refs snapshot (git's --refs-snapshot): one object id per line, a
 * "+" in front marking a preferred tip. Errors: GP_EIO (unreadable),
 * GP_ECORRUPT (a malformed line, named with its number).
 */
int bitmap_tips_from_snapshot(const char *path, int algo, struct bitmap_write_tip **tips,
			      size_t *nr, struct gp_error *err);

/*
 * Read repo's bitmapPseudoMerge.* config and the refs it matches, for
 * bitmap_write_opts (the config's warnings are left in cfg for the
 * caller to print). Errors: those of pseudo_merge_config_read() and
 * pseudo_merge_collect_refs().
 */
int bitmap_pseudo_merges_from_repo(struct repository *repo, struct pseudo_merge_config *cfg,
				   struct pseudo_merge_ref **refs, size_t *nr_refs,
				   struct gp_error *err);

/*
 * The .bitmap of one pack of repo's, named by its .idx (opened here,
 * apart from the repository's odb, so that a pack just written can be
 * bitmapped), with everything listed above. Errors as bitmap_write(),
 * and GP_EINVAL for a bad config value.
 */
int bitmap_write_for_pack_file(struct repository *repo, const char *idx_path,
			       int threads, bool progress, struct gp_error *err);

/*
 * The bitmap of a MIDX midx_write() just wrote with defer_install
 * (result->pending: then put in place once the bitmap is durable, by
 * midx_write_install()) or kept (nothing pending: an existing bitmap of
 * that MIDX is kept, else one is written). Tips come from refs_snapshot
 * when given, else from the refs. A layer of an incremental chain gets
 * a bitmap of its own objects (bitmap_write_opts.base_objects). On
 * failure the pending MIDX is dropped, and the old MIDX and its bitmap
 * stay as they were. Errors: those of bitmap_write() and
 * midx_write_install().
 */
int midx_write_bitmap(struct repository *repo, const char *objdir,
		      struct midx_write_result *result, const char *refs_snapshot,
		      bool progress, struct gp_error *err);

#endif
