/*
 * midx-write.h: writing the multi-pack-index (layout in midx.c),
 * byte-identical to what git 2.39 writes for the same packs.
 *
 * Rules (git's, found by experiment and technical/multi-pack-index):
 *  - the packs are every pack-*.idx in the directory whose .pack exists
 *    (or only those named, for --stdin-packs), minus those dropped,
 *    listed by name in strcmp order;
 *  - an object in several packs is taken from the preferred pack, else
 *    from the pack with the newest .pack mtime (seconds), else from the
 *    lowest pack id;
 *  - with RIDX and no preferred pack named, the preferred pack is the
 *    oldest (mtime) pack that has objects;
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

#include "util.h"

struct gp_error;

struct midx_write_opts {
	const char *preferred_pack;      /* basename, .pack or .idx; or NULL */
	const char *const *only_packs;   /* --stdin-packs: idx basenames */
	size_t nr_only;
	bool only_given;                 /* only_packs applies (may be empty) */
	const char *const *drop_packs;   /* expire: idx basenames left out */
	size_t nr_drop;
	bool write_ridx;
	bool progress;
};

#define MIDX_WRITE_OPTS_INIT { 0 }

/*
 * Write <pack_dir>/multi-pack-index. When an existing, valid MIDX
 * already lists exactly the packs to write and nothing asks for a
 * different result (no RIDX, no preferred pack, nothing dropped), it is
 * left alone, as git does; *written says which happened (may be NULL).
 * Errors: GP_EINVAL (unknown preferred pack, no packs), GP_ECORRUPT (a
 * pack's .idx is bad: the message names it), GP_EIO (including a held
 * lock).
 */
int midx_write(const char *pack_dir, int algo, const struct midx_write_opts *opts,
	       bool *written, struct gp_error *err);

#endif
