/*
 * pack-bitmap-internal.h: what the files of the bitmap reader share and
 * nobody else needs. The reader (pack-bitmap.h is its API) is split
 * along the sections of that header:
 *
 *   bitmap-order.c   the object orders: a pack's, a MIDX's pseudo-pack
 *                    order, the identity; name hashes
 *   pack-bitmap.c    opening and checking the .bitmap file: header,
 *                    type bitmaps, entries and their XORs, the lookup
 *                    table, the layers of an incremental MIDX chain
 *   bitmap-query.c   the reachability walk and its results (the
 *                    objects outside the bitmap among them), counts,
 *                    --test-bitmap
 *
 * Positions are named by space as in pack-bitmap.h: bit_pos in the
 * bitmap's order, index_pos by name.
 */
#ifndef GP_PACK_BITMAP_INTERNAL_H
#define GP_PACK_BITMAP_INTERNAL_H

#include "pack-bitmap.h"
#include "error.h"
#include "ewah/ewah.h"
#include "hash.h"
#include "pseudo-merge.h"
#include "util.h"

struct midx;
struct odb;
struct packed_git;

/* ------------------------------------------------------------------ */
/* Object orders (bitmap-order.c)                                      */
/* ------------------------------------------------------------------ */

enum order_kind { ORDER_PACK, ORDER_MIDX, ORDER_IDENTITY };

struct bitmap_order {
	enum order_kind kind;
	int algo;
	uint32_t nr;
	struct packed_git *pack;  /* ORDER_PACK */
	uint32_t *idx_to_pack_pos;
	struct odb *odb;          /* ORDER_MIDX */
	struct midx *midx;
	struct packed_git **midx_packs; /* by pack_int_id */
	unsigned char checksum[GP_MAX_RAWSZ];
};

/*
 * The order of m, a MIDX (or a layer of a chain) of odb: its packs are
 * odb's (by_name: found among odb's packs by name, for a MIDX the odb
 * did not load). compute_missing and search_ridx are passed on to
 * midx_load_pseudo_order_flags(). Borrows odb and m.
 * Errors: GP_ENOTFOUND (no reverse index, a pack missing), GP_ECORRUPT.
 */
int bitmap_order_for_midx_with(struct bitmap_order **out, struct odb *odb, struct midx *m,
			       bool by_name, bool compute_missing, bool search_ridx,
			       struct gp_error *err);
/* nr objects whose bit_pos is their index_pos (bitmap_index_parse_buf()). */
struct bitmap_order *bitmap_order_identity(int algo, uint32_t nr);
/* pack-<hash>.bitmap beside pack-<hash>.pack (caller frees) */
char *pack_bitmap_path(const struct packed_git *p);

/* ------------------------------------------------------------------ */
/* The open file (pack-bitmap.c)                                       */
/* ------------------------------------------------------------------ */

struct bitmap_entry;

/* The state of an open bitmap; pack-bitmap.c fills it at open. */
struct bitmap_index {
	char *path;
	const unsigned char *map;
	size_t len;
	bool mapped;
	int algo;
	size_t rawsz;
	unsigned flags;
	uint32_t nr_entries;
	uint32_t nr_objects;
	struct bitmap_order *order;
	const unsigned char *digest; /* the trailer's hash, computed already; or NULL */
	bool trust_trailer;     /* leave the trailing checksum to verifiers (odb_verify_bitmaps()) */
	struct bitmap types[4]; /* OBJ_COMMIT - 1 .. OBJ_TAG - 1 */
	uint64_t entries_start, entries_end;
	struct bitmap_entry *entries;  /* by index_pos */
	const unsigned char *hash_cache;
	/*
	 * A layer of an incremental MIDX chain: bits below base_objects
	 * are the layers below, whose bitmap (base, owned) holds their
	 * commits, types and name hashes. This file's own type bitmaps
	 * and name hashes cover [base_objects, nr_objects); types[] holds
	 * the whole chain's once open.
	 */
	uint32_t base_objects;
	struct bitmap_index *base;
	bool has_pseudo_merges;
	struct pseudo_merge_section pseudo_merges;
};

/* The file's name without its directory, for messages. */
static inline const char *short_name(const struct bitmap_index *bi)
{
	return base_name(bi->path);
}

/* An ewah/ error code as ours: GP_ENOMEM or GP_ECORRUPT, naming what. */
static inline int ewah_err(struct gp_error *err, int code, const char *what)
{
	if (code == EWAH_ENOMEM || code == EWAH_ETOOBIG)
		return gp_error_set(err, GP_ENOMEM, "%s: out of memory", what);
	return CORRUPT(err, "%s: %s", what, ewah_strerror(code));
}

#endif
