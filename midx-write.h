/*
 * midx-write.h: writing the multi-pack-index (layout in midx.c), lone or
 * as a layer of an incremental chain, byte-identical to what git 2.55
 * writes for the same packs.
 *
 * Rules (git's, from technical/multi-pack-index and experiment):
 *  - the packs are every *.idx in the directory whose .pack exists (or
 *    only those named, for --stdin-packs), minus those dropped; a layer
 *    takes only the packs no existing layer (or lone MIDX) lists, or
 *    with --stdin-packs those its base does not list;
 *  - git "adds" packs in an order of its own: the existing MIDX's packs
 *    first (a chain's top layer first), then new ones in directory
 *    (readdir) order; the objects of packs the existing MIDX covers are
 *    taken from that MIDX (only the copies it selected; not with a list
 *    of packs, nor for a layer); the preferred pack's come from its .idx;
 *  - an object in several packs is taken from the preferred pack, else
 *    from the pack with the newest .pack mtime (seconds; a copy taken
 *    from the existing MIDX counts as mtime 0), else from the pack
 *    added first;
 *  - a layer leaves out every object a layer below it has;
 *  - with RIDX (bitmaps) and no preferred pack named, the preferred pack
 *    is the oldest (mtime) pack that has objects (ties: the one added
 *    first); a preferred pack named but unknown is a warning, and then
 *    no pack is preferred;
 *  - offsets above 2^31 - 1 go to the LOFF chunk only when some offset
 *    needs 64 bits; otherwise every offset is stored in 32 bits;
 *  - the RIDX chunk lists objects by (preferred pack first, pack id,
 *    offset), as positions over the chain; BTMP gives each pack's first
 *    bit and bit count in that order;
 *  - version 1, or midx.version (2 for compact, which lists packs in
 *    layer order, unsorted);
 *
 * A lone MIDX is written under "multi-pack-index.lock" (created
 * exclusively, so two writers cannot interleave), fsynced and renamed
 * into place; then the files of other MIDXs (bitmaps and .rev files
 * named for another checksum, and any chain) are removed. A layer is
 * written to a temporary file in multi-pack-index.d, renamed to
 * multi-pack-index-<checksum>.midx, and the chain file (under its own
 * lock) then lists it on top of its base; a lone MIDX it replaces is
 * moved into the chain first (with its bitmap and .rev), and files of
 * layers no longer in the chain are removed.
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
	bool write_ridx;                 /* RIDX and BTMP (for a bitmap) */
	bool write_rev_file;             /* a .rev beside it too (GIT_TEST_MIDX_WRITE_REV) */
	unsigned version;                /* 0: 1 (git's midx.version) */
	/* --incremental: a new layer on top of the existing MIDX or chain */
	bool incremental;
	/* --no-write-chain-file: the layer only; result->checksum names it */
	bool no_chain_file;
	/* --base: the layer's base, by checksum in hex, or "none"; NULL: the top */
	const char *base;
	/*
	 * compact <from> <to>: one layer (or, without incremental, a lone
	 * MIDX) of the packs and objects of the layers from..to (checksums
	 * in hex, from below to), version 2: the packs in layer order,
	 * each layer's preferred pack first when a bitmap is asked for,
	 * so the pseudo-pack order (and the bitmaps of the layers above)
	 * stays as it was. The layer sits on from's base (or --base), and
	 * the layers above to stay on top of it.
	 */
	const char *compact_from, *compact_to;
	/*
	 * Leave the new file finalized but not in place (result->pending),
	 * for midx_write_install() once its bitmap is written, or
	 * midx_write_abort(): a failed bitmap then leaves the old MIDX and
	 * its bitmap as they were. Also keep an existing MIDX of the same
	 * packs that has a bitmap (as git: nothing to do).
	 */
	bool defer_install;
	bool progress;
};

#define MIDX_WRITE_OPTS_INIT { .preferred_pack = NULL }

struct midx;
struct midx_install;

struct midx_write_result {
	bool written;            /* false: the existing MIDX was kept, or nothing new */
	bool preferred_unknown;  /* the preferred pack named is not among the packs (warn) */
	bool old_corrupt;        /* the existing MIDX's checksum is wrong: ignored (warn) */
	bool no_objects;         /* a bitmap was asked for, but there are no objects (warn) */
	bool incremental;        /* the file written is a layer */
	/*
	 * Set by the caller before midx_write_bitmap(): a bitmap that
	 * cannot cover everything reachable (a layer written with --base)
	 * is left out, and bitmap_skipped says so, instead of failing.
	 */
	bool bitmap_optional;
	bool bitmap_skipped;
	/* defer_install: the file written, not yet in place; else NULL */
	char *pending_path;
	/* a layer's base (borrowed; valid until release), for midx_open_layer() */
	struct midx *pending_base;
	unsigned char checksum[GP_MAX_RAWSZ]; /* of the file written */
	struct midx_install *install;         /* private: what install does */
};

#define MIDX_WRITE_RESULT_INIT { .written = false }

/*
 * Write the MIDX of pack_dir, as above. When an existing, valid MIDX of
 * the same version covers the same packs (none came, none went) and no
 * bitmap is asked for (or there is one), it is left alone, as git does
 * (and without a bitmap asked for, its bitmap is removed). result is
 * required; release it with midx_write_result_release().
 * Errors: GP_EINVAL ("no pack files to index.", a preferred pack without
 * objects, a --base that is not in the chain), GP_ECORRUPT (a pack's
 * .idx is bad: the message names it), GP_EIO (including a held lock,
 * and a pack the existing MIDX names that is missing: "could not load
 * pack").
 */
int midx_write(const char *pack_dir, int algo, const struct midx_write_opts *opts,
	       struct midx_write_result *result, struct gp_error *err);
/*
 * Put a deferred MIDX or layer in place (rename, chain file, fsync of
 * the directory), then remove the files of MIDXs it replaces.
 * Errors: GP_EIO. midx_write_abort() removes it instead.
 */
int midx_write_install(struct midx_write_result *result, struct gp_error *err);
void midx_write_abort(struct midx_write_result *result);
void midx_write_result_release(struct midx_write_result *result);

/*
 * Make the chain of pack_dir the layers given (nr checksums, rawsz
 * bytes each, base first), each written before (say with
 * no_chain_file) or already in the chain; a layer that is the lone
 * MIDX is moved into the chain directory first. The chain file is
 * written under its lock, durably; then the lone MIDX and the files of
 * layers not named go (as after midx_write_install()). nr may be 0: an
 * empty chain, which readers take as none. For repack's
 * --write-midx=incremental, which assembles the chain from layers it
 * writes, compacts and keeps. Errors: GP_EINVAL (a layer that is not
 * there), GP_EIO (including a held lock).
 */
int midx_write_chain(const char *pack_dir, int algo, const unsigned char *layers, uint32_t nr,
		     struct gp_error *err);

/*
 * Remove the repository's MIDX: the chain file first (then the lone
 * file), so that readers stop finding it, then the files that only
 * describe it (layers, bitmaps, .rev files). Only the names git
 * removes (multi-pack-index, multi-pack-index-*.{bitmap,rev} and in
 * the chain directory also *.midx, multi-pack-index-chain; not, say,
 * a ".bitmap.bak"): nothing else in the directory. For repack
 * -d without --write-midx, once the new packs are durable and before
 * any old pack goes (pack-remove.h).
 */
void midx_remove(const char *pack_dir, int algo);
/*
 * The same, but only when the MIDX (lone or chain) lists one of the
 * packs named (idx or pack basenames or paths) that are about to go:
 * a MIDX of other packs stays, as git keeps it. True when removed.
 */
bool midx_remove_if_listed(const char *pack_dir, int algo, const char *const *names,
			   size_t nr);

#endif
