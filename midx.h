/*
 * midx.h: reading the multi-pack-index (gitformat-pack, "multi-pack-index
 * (MIDX) files"; technical/multi-pack-index): one sorted index over the
 * objects of many packs, each object selected from one pack.
 *
 * A repository has either a lone MIDX, <pack_dir>/multi-pack-index, or
 * an incremental chain: <pack_dir>/multi-pack-index.d/ holds
 * multi-pack-index-chain (one layer checksum a line, the base first) and
 * each layer as multi-pack-index-<checksum>.midx. A layer has the layout
 * of a lone MIDX; it lists only packs and objects that no layer below
 * it has. When both exist, the lone MIDX is read (as git does).
 *
 * A struct midx is a lone MIDX or the top layer of a chain, which holds
 * the layers below it. Every query below takes and returns positions
 * over the whole chain, layer after layer (base first):
 *  - midx_pos: an object's place in the concatenation of the layers'
 *    sorted name lists (within a layer, its rank by name);
 *  - pack_int_id: a pack's place in the concatenation of the layers'
 *    pack lists;
 *  - pseudo_pos: its place in the pseudo-pack order that MIDX bitmaps
 *    use: the layers' orders one after the other; in the base layer (or
 *    a lone MIDX) the preferred pack's objects first, then the other
 *    packs in pack order, each pack's selected objects by offset; in a
 *    layer above, simply pack order.
 *
 * midx_open() validates the whole shape of every layer (header, chunk
 * table, required chunks sized as the counts imply, pack names
 * terminated (and sorted in version 1), fanout non-decreasing, names
 * strictly sorted, pack ids and large-offset references in range, RIDX
 * entries in range, BTMP ranges inside the object count). After that,
 * lookups trust the tables. The checksums and the cross-check against
 * every pack's .idx are midx_verify()'s work.
 *
 * midx_open_flags() with MIDX_OPEN_LAZY (a server's object store, which
 * cannot read the whole MIDX for each request) checks only the shape at
 * open (header, chunk table, chunk sizes, pack names, fanout, BTMP). A
 * midx_find_oid() that finds its name checks the names beside it (a name
 * moved or swapped there would have another's entry); one that misses
 * checks its whole fanout bucket (names, pack ids, large offsets), once,
 * to be sure of the absence. An entry's pack id and large offset are
 * checked where it is used, by midx_nth_entry(), and RIDX entries by
 * midx_load_pseudo_order(). Damage found so makes every later lookup
 * fail, and midx_damage() says what it was. midx_verify() checks all.
 *
 * Messages carry the phrases git's own reader uses ("oid fanout out of
 * order", "bad pack-int-id", ...), then the file and the offset.
 */
#ifndef GP_MIDX_H
#define GP_MIDX_H

#include "object.h"

struct gp_error;
struct progress;
struct midx;

/* "MIDX"; version 1 is what git writes by default, 2 lets PNAM be unsorted. */
#define MIDX_SIGNATURE 0x4d494458u
#define MIDX_VERSION 1
#define MIDX_VERSION_2 2
#define MIDX_HEADER_SIZE 12
#define MIDX_CHUNK_PNAM 0x504e414du /* packfile names */
#define MIDX_CHUNK_BTMP 0x42544d50u /* bitmapped packs */
#define MIDX_CHUNK_OIDF 0x4f494446u /* OID fanout */
#define MIDX_CHUNK_OIDL 0x4f49444cu /* OID lookup */
#define MIDX_CHUNK_OOFF 0x4f4f4646u /* object offsets */
#define MIDX_CHUNK_LOFF 0x4c4f4646u /* large offsets */
#define MIDX_CHUNK_RIDX 0x52494458u /* pseudo-pack order */
#define MIDX_LARGE_OFFSET_FLAG 0x80000000u

/* Names inside the pack directory. */
#define MIDX_FILE "multi-pack-index"
#define MIDX_CHAIN_DIR "multi-pack-index.d"
#define MIDX_CHAIN_FILE "multi-pack-index.d/multi-pack-index-chain"

/*
 * Open the repository's MIDX in pack_dir: multi-pack-index when it
 * exists, else the chain. Errors: GP_ENOTFOUND (neither; an empty
 * chain file counts as none), GP_ECORRUPT (message names the file and
 * what is wrong), GP_EIO.
 */
enum midx_open_flags {
	MIDX_OPEN_LAZY = 1 << 0,   /* check entries when used (see above) */
};
int midx_open_flags(struct midx **out, const char *pack_dir, int algo, unsigned flags,
		    struct gp_error *err);
int midx_open(struct midx **out, const char *pack_dir, int algo,
	      struct gp_error *err);
/* Only the chain in <pack_dir>/multi-pack-index.d. Errors as midx_open(). */
int midx_open_chain(struct midx **out, const char *pack_dir, int algo,
		    struct gp_error *err);
/* A lone MIDX file at path (say, one not yet renamed into place). */
int midx_open_path(struct midx **out, const char *path, int algo,
		   struct gp_error *err);
/*
 * A layer file at path put on top of base (NULL: none), which stays
 * the caller's and must outlive it: midx_free() of the layer leaves
 * base alone. Errors as midx_open_path().
 */
int midx_open_layer(struct midx **out, const char *path, struct midx *base, int algo,
		    struct gp_error *err);
/* Parse an image in memory (the fuzzer); buf is borrowed. */
int midx_parse_buf(struct midx **out, const unsigned char *buf, size_t len,
		   const char *name, int algo, struct gp_error *err);
/*
 * Put layer on top of base (a lone MIDX or a chain), which it takes
 * over: midx_free(layer) frees base too. Errors: GP_ECORRUPT (the
 * counts overflow).
 */
int midx_stack(struct midx *layer, struct midx *base, struct gp_error *err);
/* Frees every layer. Accepts NULL. */
void midx_free(struct midx *m);

/*
 * Parse the text of a multi-pack-index-chain file: one hex checksum a
 * line, each followed by '\n'. *hashes (nr * rawsz bytes, base first)
 * is allocated; caller frees. Errors: GP_ECORRUPT naming the line.
 */
int midx_chain_parse(const char *buf, size_t len, int algo, const char *name,
		     unsigned char **hashes, uint32_t *nr, struct gp_error *err);

const char *midx_path(const struct midx *m);
/* 1 or 2. */
unsigned midx_version(const struct midx *m);
/* Objects and packs of every layer. */
uint32_t midx_nr_objects(const struct midx *m);
uint32_t midx_nr_packs(const struct midx *m);
/* The idx name ("pack-<hash>.idx") of pack_int_id. */
const char *midx_pack_name(const struct midx *m, uint32_t pack_int_id);
/* The pack_int_id of an idx or pack name (basename); false if absent. */
bool midx_find_pack(const struct midx *m, const char *name, uint32_t *pack_int_id);
/* The top layer's trailing checksum (names its bitmap). */
const unsigned char *midx_checksum(const struct midx *m);

/*
 * Layers: a lone MIDX has one. midx_layer(m, 0) is the base; each layer
 * is a struct midx whose queries cover it and the layers below.
 * Borrowed: valid until midx_free(m).
 */
bool midx_is_chain(const struct midx *m);
uint32_t midx_nr_layers(const struct midx *m);
struct midx *midx_layer(struct midx *m, uint32_t layer);
/* Objects and packs of the layers below m's top layer. */
uint32_t midx_nr_objects_in_base(const struct midx *m);
uint32_t midx_nr_packs_in_base(const struct midx *m);

/* Of the top layer alone: objects whose name's first byte is at most
 * first_byte (add midx_nr_objects_in_base() for a midx_pos). O(1). */
uint32_t midx_fanout(const struct midx *m, unsigned first_byte);
/*
 * O(layers * log n); MIDX_OPEN_LAZY: checks as described above, and
 * damage found answers false.
 */
bool midx_find_oid(const struct midx *m, const struct object_id *oid,
		   uint32_t *midx_pos);
void midx_nth_oid(const struct midx *m, uint32_t midx_pos, struct object_id *oid);
const unsigned char *midx_nth_oid_raw(const struct midx *m, uint32_t midx_pos);
/*
 * Of an entry that midx_find_oid() answered, or of any entry in a MIDX
 * opened without MIDX_OPEN_LAZY. An unchecked pack id out of range is
 * UINT32_MAX, and a large offset reference out of range UINT64_MAX.
 */
uint32_t midx_nth_pack(const struct midx *m, uint32_t midx_pos);
uint64_t midx_nth_offset(const struct midx *m, uint32_t midx_pos);
/*
 * Both, checked: false (and the damage noted for midx_damage()) when the
 * entry's pack id or large-offset reference is out of range. O(layers).
 */
bool midx_nth_entry(const struct midx *m, uint32_t midx_pos, uint32_t *pack_int_id,
		    uint64_t *ofs);
/* The first damage lazy checks found in any layer (borrowed), or NULL. */
const char *midx_damage(struct midx *m);

/*
 * BTMP: the first pseudo position of pack_int_id's objects and how many
 * there are. False when its layer has no BTMP chunk (or the knob
 * GIT_TEST_MIDX_READ_BTMP=0 hides it).
 */
bool midx_bitmapped_pack(const struct midx *m, uint32_t pack_int_id,
			 uint32_t *bitmap_pos, uint32_t *bitmap_nr);
bool midx_has_btmp(const struct midx *m);

/*
 * The pseudo-pack order of each layer: from its RIDX chunk (which
 * GIT_TEST_MIDX_READ_RIDX=0 hides, as in git), else from the
 * multi-pack-index[-<checksum>].rev file beside it, else, with
 * compute_missing, computed (which knows no preferred pack: right for
 * a layer above the base and for a MIDX written without one; bitmaps
 * must not rely on it). Thread-safe after the first successful call.
 * Errors: GP_ENOTFOUND (a layer has neither RIDX nor .rev, and
 * !compute_missing), GP_ECORRUPT (an order that is not a permutation, a
 * bad .rev).
 */
int midx_load_pseudo_order(struct midx *m, bool compute_missing,
			   struct gp_error *err);
enum midx_order_flags {
	/*
	 * For a reader that maps few positions: a layer with a RIDX chunk
	 * has its entries checked in range only (O(n) reads, no
	 * allocation), and midx_pos_to_pseudo() binary-searches it
	 * (O(log n)) instead of building the inverse (that it is a
	 * permutation is midx_verify()'s to check).
	 */
	MIDX_ORDER_NO_INVERSE = 1 << 0,
};
int midx_load_pseudo_order_flags(struct midx *m, bool compute_missing, unsigned flags,
				 struct gp_error *err);
/* Every layer has a RIDX chunk (not hidden by the knob). */
bool midx_has_ridx(const struct midx *m);
/* After midx_load_pseudo_order(). O(layers). */
uint32_t midx_pseudo_to_pos(const struct midx *m, uint32_t pseudo_pos);
/*
 * With MIDX_ORDER_NO_INVERSE, UINT32_MAX when the RIDX does not list
 * midx_pos where its order says it is (a damaged RIDX).
 */
uint32_t midx_pos_to_pseudo(const struct midx *m, uint32_t midx_pos);
/*
 * The preferred pack of m's top layer: the pack of that layer's first
 * object in pseudo-pack order (for a lone MIDX, pseudo position 0),
 * when its order is stored (RIDX or .rev). GP_ENOTFOUND otherwise.
 */
int midx_preferred_pack(struct midx *m, uint32_t *pack_int_id,
			struct gp_error *err);

/* Every layer's trailing checksum matches its contents. O(size). */
bool midx_checksum_valid(const struct midx *m);

/*
 * Deep check of every layer: the trailing checksum; that every pack
 * opens and matches its .idx (in pack_dir); that each object's pack
 * holds it at the recorded offset; the RIDX order; BTMP against RIDX.
 * Reports every problem in err (GP_ECORRUPT), one a line (git's
 * phrases, as its tests look for them; the first 100, then a count);
 * nr_problems counts them all. With show_progress, git's meters on stderr ("Looking for
 * referenced packfiles", "Verifying OID order in multi-pack-index",
 * "Verifying object offsets").
 */
int midx_verify(struct midx *m, const char *pack_dir, bool show_progress,
		size_t *nr_problems, struct gp_error *err);

#endif
