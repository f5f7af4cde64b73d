/*
 * midx-write.h: writing the multi-pack-index (layout in midx.c),
 * byte-identical to what git 2.39 writes for the same packs.
 *
 * Rules (git's, found by experiment and technical/multi-pack-index):
 *  - the packs are every pack-*.idx in the directory whose .pack exists
 *    (or only those named, for --stdin-packs), minus those dropped,
 *    listed by name in strcmp order;
 *  - git "adds" packs in an order of its own: the existing MIDX's packs
 *    first, then new ones in directory (readdir) order; the objects of
 *    packs the existing MIDX covers are taken from that MIDX (only the
 *    copies it selected), plus the whole preferred pack;
 *  - an object in several packs is taken from the preferred pack, else
 *    from the pack with the newest .pack mtime (seconds), else from the
 *    pack added first;
 *  - with RIDX and no preferred pack named, the preferred pack is the
 *    oldest (mtime) pack that has objects (ties: the one added first);
 *    a preferred pack named but unknown makes the pack added first the
 *    preferred one (git 2.39's behaviour, kept for byte identity);
 *  - offsets above 2^31 - 1 go to the LOFF chunk only when some offset
 *    needs 64 bits; otherwise every offset is stored in 32 bits;
 *  - the RIDX chunk lists objects by (preferred pack first, pack id,
 *    offset).
 *
 * The file is written under "multi-pack-index.lock" (created
 * exclusively, so two writers cannot interleave), fsynced and renamed
 * into place. Stale multi-pack-index-*.bitmap and .rev files (named for
 * another checksum) are removed afterwards.
 */
#ifndef GP_MIDX_WRITE_H
#define GP_MIDX_WRITE_H

#include "hash.h"

struct gp_error;

struct midx_write_opts {
	const char *preferred_pack;      /* basename, .pack or .idx; or NULL */
	const char *const *only_packs;   /* --stdin-packs: idx basenames */
	size_t nr_only;
	bool only_given;                 /* only_packs applies (may be empty) */
	const char *const *drop_packs;   /* expire: idx basenames left out */
	size_t nr_drop;
	bool write_ridx;
	/*
	 * Leave the new file finalized but not in place (result->pending),
	 * for midx_write_install() once its bitmap is written, or
	 * midx_write_abort(): a failed bitmap then leaves the old MIDX and
	 * its bitmap as they were. Also keep an existing MIDX of the same
	 * packs that has a RIDX chunk and a bitmap (as git: nothing to do).
	 */
	bool defer_install;
	bool progress;
};

#define MIDX_WRITE_OPTS_INIT { .preferred_pack = NULL }

struct hashfile;

struct midx_write_result {
	bool written;            /* false: the existing MIDX was kept */
	bool preferred_unknown;  /* the preferred pack named is not among the packs */
	/* defer_install: the written file, at pending_path, not yet in place */
	struct hashfile *pending;
	char *pending_path;      /* owned */
	unsigned char checksum[GP_MAX_RAWSZ]; /* of the file written */
};

/*
 * Write <pack_dir>/multi-pack-index. When an existing, valid MIDX
 * covers the same packs (none came, none went) and no RIDX is asked for,
 * it is left alone, as git does, and its bitmap (not asked for) is
 * removed. An unknown preferred pack is not an error (git warns, and so
 * should the caller: result->preferred_unknown) and then no pack is
 * preferred. result may be NULL.
 * Errors: GP_EINVAL (a preferred pack without objects, no packs),
 * GP_ECORRUPT (a pack's .idx is bad: the message names it), GP_EIO
 * (including a held lock, and a pack the existing MIDX names that is
 * missing).
 */
int midx_write(const char *pack_dir, int algo, const struct midx_write_opts *opts,
	       struct midx_write_result *result, struct gp_error *err);
/*
 * Put a deferred MIDX in place (rename, fsync of the directory), then
 * remove the bitmaps and .rev files of other MIDXs. Errors: GP_EIO.
 * midx_write_abort() removes it instead. Both release result's pending
 * state (and accept a result with none).
 */
int midx_write_install(const char *pack_dir, int algo, struct midx_write_result *result,
		       struct gp_error *err);
void midx_write_abort(struct midx_write_result *result);

#endif
