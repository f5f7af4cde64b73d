/*
 * midx-maint.h: the maintenance git multi-pack-index does on a lone MIDX
 * (technical/multi-pack-index; git-multi-pack-index "expire" and
 * "repack"): expire drops the packs from which the MIDX selects no
 * object, repack rolls small packs into one new pack that the MIDX then
 * covers (the next expire removes the old ones). Neither works on an
 * incremental chain (as in git: GP_EINVAL).
 *
 * Removal follows pack-remove.h: expire writes the new MIDX, durably,
 * before it removes a pack it no longer lists (git removes them first),
 * and never removes a .keep or a cruft pack.
 */
#ifndef GP_MIDX_MAINT_H
#define GP_MIDX_MAINT_H

#include "util.h"

struct gp_error;

struct midx_maint_opts {
	bool progress;
	unsigned version;          /* midx.version (0: 1) */
	/* repack */
	uint64_t batch_size;       /* 0: every pack */
	bool pack_kept_objects;    /* repack.packKeptObjects: .keep packs may be taken */
};

#define MIDX_MAINT_OPTS_INIT { .progress = false }

struct midx_maint_result {
	uint32_t nr_expired;       /* packs removed */
	uint32_t nr_repacked;      /* packs rolled into the new pack */
	char new_pack[128];        /* its name's hash in hex, or "" */
	bool preferred_unknown;    /* MIDX write warnings, for the caller to print */
	bool old_corrupt;
};

/*
 * expire: drop from the MIDX of pack_dir every pack it selects no
 * object from (but .keep and cruft packs), then remove them. Nothing to
 * do without a MIDX. Errors: GP_EINVAL (an incremental chain), those of
 * midx_open() and midx_write(); a pack that cannot be removed is
 * GP_EIO, after the MIDX no longer lists it.
 */
int midx_expire(const char *pack_dir, int algo, const struct midx_maint_opts *opts,
		struct midx_maint_result *result, struct gp_error *err);

/*
 * repack: git's batch (below), copied into one new pack in pack order
 * (each object from the pack the MIDX selects it from), then a new
 * MIDX. The batch: packs by .pack mtime, oldest first, skipping .keep
 * packs (unless pack_kept_objects), cruft packs and empty ones, each
 * taken when its expected size (its size scaled by the share of its
 * objects the MIDX selects, to four significant digits as git rounds
 * it) is below batch_size, until the sizes taken reach batch_size;
 * with batch_size 0 every such pack. Fewer than two packs: nothing.
 * Errors: GP_EINVAL (an incremental chain), those of reading the packs,
 * pack writing and midx_write().
 */
int midx_repack(const char *pack_dir, int algo, const struct midx_maint_opts *opts,
		struct midx_maint_result *result, struct gp_error *err);

#endif
