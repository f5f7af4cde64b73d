/*
 * pack-bitmap.h: reachability bitmaps (Git's technical/bitmap-format,
 * version 1): reading the .bitmap of one pack or of the MIDX, and
 * answering "which objects are reachable from these tips and not from
 * those" with it. One file per section below: bitmap-order.c,
 * pack-bitmap.c and bitmap-query.c (pack-bitmap-internal.h).
 *
 * Two object orders meet here, each with its own name:
 *  - bit_pos: an object's bit, in the order the bitmap was built for:
 *    pack order (the .rev) for a pack bitmap, the MIDX pseudo-pack order
 *    (midx.h) for a MIDX bitmap. struct bitmap_order is that order.
 *  - index_pos: an object's rank by name (idx_pos in the .idx, midx_pos
 *    in the MIDX). Bitmap entries, the lookup table and the name-hash
 *    cache count in index_pos.
 *
 * File layout (big-endian):
 *   0          4     "BITM"
 *   4          2     version (1)
 *   6          2     flags (BITMAP_OPT_*; FULL_DAG required)
 *   8          4     number of entries (bitmapped commits)
 *   12         rawsz checksum of the pack or MIDX the bitmap is for
 *   ...        4 EWAHs: the commits, trees, blobs and tags, by type
 *   ...        entries: 4-byte index_pos, 1-byte XOR offset (the entry
 *              is XORed with the one that many entries before it, at
 *              most 160 back), 1-byte flags, an EWAH
 *   [pseudo-merges: pseudo-merge.h; checked at open; bitmap_reachable()
 *              ORs in a merge once its commits are all named or reached]
 *   [lookup table: per entry, by index_pos: 4-byte index_pos, 8-byte
 *              file offset of the entry, 4-byte row it is XORed with]
 *   [name-hash cache: 4 bytes per object, in index order]
 *   rawsz      checksum of everything before it
 */
#ifndef GP_PACK_BITMAP_H
#define GP_PACK_BITMAP_H

#include "object.h"

struct gp_error;
struct odb;
struct midx;
struct packed_git;
struct progress;
struct ewah;
struct bitmap;

#define BITMAP_SIGNATURE 0x4249544du /* "BITM" */
#define BITMAP_VERSION 1
#define BITMAP_OPT_FULL_DAG 0x1
#define BITMAP_OPT_HASH_CACHE 0x4
#define BITMAP_OPT_LOOKUP_TABLE 0x10
#define BITMAP_OPT_PSEUDO_MERGES 0x20
#define BITMAP_MAX_XOR_OFFSET 160
#define BITMAP_ENTRY_HEADER_SIZE 6
#define BITMAP_LOOKUP_ROW_SIZE 16
#define BITMAP_NO_XOR_ROW 0xffffffffu

/*
 * The name hash git keeps per object (bitmap-format, "Name-hash cache"):
 * it groups objects by the end of their path for delta search.
 */
uint32_t bitmap_name_hash(const char *path);

/* ------------------------------------------------------------------ */
/* Object orders                                                       */
/* ------------------------------------------------------------------ */

struct bitmap_order;

/*
 * The pack order of p (loads its .rev or computes it), or the
 * pseudo-pack order of odb's MIDX (whose packs must all be present).
 * The order borrows p, the odb and its MIDX. Errors: GP_ENOTFOUND (no
 * MIDX), GP_ECORRUPT.
 */
int bitmap_order_for_pack(struct bitmap_order **out, struct packed_git *p,
			  struct gp_error *err);
int bitmap_order_for_midx(struct bitmap_order **out, struct odb *odb,
			  struct gp_error *err);
/*
 * The same for a MIDX m of odb's pack directory that the odb did not
 * load (a new one, not yet in place): its packs are found among the
 * odb's by name. Borrows m.
 */
int bitmap_order_for_midx_file(struct bitmap_order **out, struct odb *odb,
			       struct midx *m, struct gp_error *err);
void bitmap_order_free(struct bitmap_order *o);

uint32_t bitmap_order_nr(const struct bitmap_order *o);
/* The pack or MIDX checksum a bitmap over this order records. */
const unsigned char *bitmap_order_checksum(const struct bitmap_order *o);
/*
 * Whether o is a MIDX chain whose layers below its top are the lowest
 * layers of base, a chain too (the same files, by checksum; base may
 * have more, which o's top replaced): the bits below o's base objects
 * then name the same objects in both orders. O(layers).
 */
bool bitmap_order_extends(const struct bitmap_order *o, const struct bitmap_order *base);
/* Where the bitmap of this order lives (caller frees). */
char *bitmap_order_bitmap_path(const struct bitmap_order *o);
bool bitmap_order_find(const struct bitmap_order *o, const struct object_id *oid,
		       uint32_t *bit_pos);
void bitmap_order_oid(const struct bitmap_order *o, uint32_t bit_pos,
		      struct object_id *oid);
uint32_t bitmap_order_bit_to_index(const struct bitmap_order *o, uint32_t bit_pos);
/* The raw name (rawsz bytes) at index_pos, borrowed from the .idx or MIDX. */
const unsigned char *bitmap_order_index_oid_raw(const struct bitmap_order *o,
						uint32_t index_pos);
uint32_t bitmap_order_index_to_bit(const struct bitmap_order *o, uint32_t index_pos);
/*
 * The pack and offset that hold the object at bit_pos; *pack is NULL
 * when its pack is gone, or its MIDX entry is damaged (midx_nth_entry()).
 */
void bitmap_order_locate(const struct bitmap_order *o, uint32_t bit_pos,
			 struct packed_git **pack, uint64_t *ofs);

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

struct bitmap_index;

/*
 * Open the repository's bitmap, as git chooses it: the MIDX's
 * (multi-pack-index-<checksum>.bitmap) when there is one, otherwise the
 * first pack's with a .bitmap beside it. For an incremental MIDX chain,
 * the bitmaps of every layer (each in multi-pack-index.d, covering its
 * own objects' types and name hashes and its own commits; none at all
 * when one layer has none), opened as one: the queries below answer
 * for the whole chain.
 *
 * At open the whole file is checked: its trailing checksum, the header,
 * that it belongs to the pack or MIDX as it is now (a stale bitmap is
 * refused), the type bitmaps (disjoint, covering every object), every
 * size and offset, and (without a lookup table, where every entry must
 * be read to find the next one) every entry. With a lookup table,
 * entries are checked when first used.
 *
 * Errors: GP_ENOTFOUND (no bitmap), GP_ECORRUPT (the message names the
 * file and the offset), GP_EIO.
 */
int bitmap_index_open(struct bitmap_index **out, struct odb *odb,
		      struct gp_error *err);
/*
 * Parse an image in memory over the identity order of nr_objects
 * objects (the fuzzer). buf is borrowed. checksum, when not NULL, is
 * the checksum the header must carry.
 */
int bitmap_index_parse_buf(struct bitmap_index **out, const unsigned char *buf,
			   size_t len, const char *name, int algo,
			   uint32_t nr_objects, const unsigned char *checksum,
			   struct gp_error *err);
void bitmap_index_free(struct bitmap_index *bi);

const char *bitmap_index_path(const struct bitmap_index *bi);
/*
 * In an incremental MIDX chain, the bitmaps of the layers below bi's
 * (opened with it, owned by it; their bit positions are the chain's),
 * or NULL. The entry functions below read one layer's entries only.
 */
struct bitmap_index *bitmap_index_base(const struct bitmap_index *bi);
uint32_t bitmap_index_nr_entries(const struct bitmap_index *bi);
uint32_t bitmap_index_nr_objects(const struct bitmap_index *bi);
unsigned bitmap_index_flags(const struct bitmap_index *bi);
/*
 * The pseudo-merges of the file (of the top layer of a chain), or NULL
 * when it has none; borrowed from bi.
 */
struct pseudo_merge_section;
const struct pseudo_merge_section *bitmap_index_pseudo_merges(const struct bitmap_index *bi);
/* The order it is over; NULL for bitmap_index_parse_buf(). */
const struct bitmap_order *bitmap_index_order(const struct bitmap_index *bi);

/*
 * The reachability bitmap of entry row (rows in index_pos order),
 * XORs undone, and the commit's index_pos. The EWAH is borrowed from
 * bi. Errors: GP_ECORRUPT, GP_ENOMEM, GP_EINVAL (no such row).
 */
int bitmap_index_entry(struct bitmap_index *bi, uint32_t row,
		       uint32_t *index_pos, const struct ewah **bitmap,
		       struct gp_error *err);
/* The index_pos of entry row's commit, without reading its bitmap. */
uint32_t bitmap_index_entry_commit(const struct bitmap_index *bi, uint32_t row);
/*
 * The bitmap of the commit at bit_pos. Errors: GP_ENOTFOUND (no entry
 * for it; no message is recorded, as walks ask for every commit they
 * meet), GP_ECORRUPT, GP_ENOMEM.
 */
int bitmap_index_for_commit(struct bitmap_index *bi, uint32_t bit_pos,
			    const struct ewah **bitmap, struct gp_error *err);
/* The objects of one type (OBJ_COMMIT .. OBJ_TAG), as a plain bitmap. */
const struct bitmap *bitmap_index_type_bits(const struct bitmap_index *bi,
					    enum object_type type);
/* The type of the object at bit_pos (OBJ_BAD past the end). */
enum object_type bitmap_index_type_at(const struct bitmap_index *bi, uint32_t bit_pos);
/* The cached name hash of the object at index_pos; false without a cache. */
bool bitmap_index_name_hash(const struct bitmap_index *bi, uint32_t index_pos,
			    uint32_t *hash);

/*
 * git's checksum of an EWAH, which `rev-list --test-bitmap` prints: the
 * bit size, then 31 * crc + byte over the words' bytes as they lie in
 * memory on a little-endian machine.
 */
uint32_t bitmap_ewah_checksum(const struct ewah *e);

/* ------------------------------------------------------------------ */
/* Querying                                                            */
/* ------------------------------------------------------------------ */

struct bitmap_tip {
	struct object_id oid;
	bool uninteresting; /* ^rev, --not */
};

struct bitmap_result;

/*
 * The objects reachable from the interesting tips and not from the
 * uninteresting ones, as git computes them with bitmaps: the bitmaps of
 * bitmapped tips ORed together, with the pseudo-merges whose commits
 * are all tips or reached (also as the walk reaches them), a walk from
 * the others that stops at what is already known, then the
 * uninteresting set removed. trace2 (category "bitmap", as git):
 * pseudo_merges_satisfied, pseudo_merges_cascades, bitmap/hits. Objects
 * outside the bitmapped pack or MIDX get positions past its end, in the
 * order reached. Missing objects below uninteresting tips are ignored.
 *
 * Returns 0 and *out; 1 when bitmaps cannot answer (no interesting tip,
 * or uninteresting tips none of which is in the bitmap: git walks
 * then); GP_ENOTFOUND (a missing object, named), GP_ECORRUPT.
 */
int bitmap_reachable(struct bitmap_index *bi, struct odb *odb,
		     const struct bitmap_tip *tips, size_t nr_tips,
		     struct bitmap_result **out, struct gp_error *err);
void bitmap_result_free(struct bitmap_result *res);

typedef int bitmap_show_fn(const struct object_id *oid, enum object_type type,
			   void *data);
enum bitmap_type_mask {
	BITMAP_SHOW_COMMITS = 1 << 0,
	BITMAP_SHOW_TREES = 1 << 1,
	BITMAP_SHOW_BLOBS = 1 << 2,
	BITMAP_SHOW_TAGS = 1 << 3,
};
/*
 * Call show for every object of the result whose type is in mask, in
 * git's order: the commits, trees, blobs and tags of the bitmap, each
 * type by bit_pos, then the objects outside it in the order reached.
 * Returns 0 or the first non-zero value show returned.
 */
int bitmap_result_for_each(const struct bitmap_result *res, unsigned mask,
			   bitmap_show_fn *show, void *data);
/*
 * Every object of the result in bit_pos order (those outside the bitmap
 * last, at positions past its end), with its type; but not those whose
 * bit is set in except (when not NULL), which cost nothing.
 */
typedef int bitmap_pos_fn(uint32_t bit_pos, const struct object_id *oid,
			  enum object_type type, void *data);
int bitmap_result_for_each_pos(const struct bitmap_result *res, const struct bitmap *except,
			       bitmap_pos_fn *fn, void *data);
bool bitmap_result_has_bit(const struct bitmap_result *res, uint32_t bit_pos);
/* How many of bit positions [start, start + nr) the result has. */
uint64_t bitmap_result_count_range(const struct bitmap_result *res, uint32_t start, uint32_t nr);
/* Whether oid is among what the uninteresting tips reach (a thin pack's bases). */
bool bitmap_result_in_haves(const struct bitmap_result *res, const struct object_id *oid);

/* Objects of the result per type: counts[OBJ_COMMIT] .. counts[OBJ_TAG]. */
void bitmap_result_count(const struct bitmap_result *res, uint64_t counts[5]);

/*
 * --test-bitmap: walk everything reachable from the commit at oid and
 * compare with its stored bitmap, checking each object's type against
 * the type bitmaps. Fills *bits (the stored bitmap's bit size) and
 * *checksum (bitmap_ewah_checksum of it) as soon as it is found.
 * Errors: GP_ENOTFOUND (no bitmap for that commit), GP_ECORRUPT (a
 * mismatch, named: an object missing from or wrongly in the bitmap, or
 * of another type), GP_ENOTFOUND for a missing object.
 */
int bitmap_test_commit(struct bitmap_index *bi, struct odb *odb,
		       const struct object_id *oid, struct progress *progress,
		       uint64_t *bits, uint32_t *checksum, struct gp_error *err);

#endif
