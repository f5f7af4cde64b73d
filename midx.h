/*
 * midx.h: reading the multi-pack-index (gitformat-pack, "multi-pack-index
 * (MIDX) files"; technical/multi-pack-index): one sorted index over the
 * objects of many packs, each object selected from one pack.
 *
 * midx_open() validates the whole shape (header, chunk table, required
 * chunks sized as the counts imply, pack names sorted and terminated,
 * fanout non-decreasing, names strictly sorted, pack ids and large-offset
 * references in range, RIDX entries in range). After that, lookups trust
 * the tables. The checksum and the cross-check against every pack's .idx
 * are midx_verify()'s work.
 *
 * Positions: midx_pos is an object's rank by name in the MIDX;
 * pseudo_pos is its place in the pseudo-pack order that MIDX bitmaps
 * use: the preferred pack's objects first, then the other packs in MIDX
 * pack order, each pack's selected objects by offset.
 */
#ifndef GP_MIDX_H
#define GP_MIDX_H

#include "object.h"

struct gp_error;
struct progress;
struct midx;

/* "MIDX" and the version Debian's git (2.39) writes. */
#define MIDX_SIGNATURE 0x4d494458u
#define MIDX_VERSION 1
#define MIDX_HEADER_SIZE 12
#define MIDX_CHUNK_PNAM 0x504e414du /* packfile names */
#define MIDX_CHUNK_OIDF 0x4f494446u /* OID fanout */
#define MIDX_CHUNK_OIDL 0x4f49444cu /* OID lookup */
#define MIDX_CHUNK_OOFF 0x4f4f4646u /* object offsets */
#define MIDX_CHUNK_LOFF 0x4c4f4646u /* large offsets */
#define MIDX_CHUNK_RIDX 0x52494458u /* pseudo-pack order */
#define MIDX_LARGE_OFFSET_FLAG 0x80000000u

/*
 * Open <pack_dir>/multi-pack-index. Errors: GP_ENOTFOUND (no MIDX),
 * GP_ECORRUPT (message names the file and what is wrong), GP_EIO.
 */
int midx_open(struct midx **out, const char *pack_dir, int algo,
	      struct gp_error *err);
/* The same for a MIDX file at path (say, one not yet renamed into place). */
int midx_open_path(struct midx **out, const char *path, int algo,
		   struct gp_error *err);
/* Parse an image in memory (the fuzzer); buf is borrowed. */
int midx_parse_buf(struct midx **out, const unsigned char *buf, size_t len,
		   const char *name, int algo, struct gp_error *err);
void midx_free(struct midx *m);

const char *midx_path(const struct midx *m);
uint32_t midx_nr_objects(const struct midx *m);
uint32_t midx_nr_packs(const struct midx *m);
/* The idx name ("pack-<hash>.idx") of pack_int_id. */
const char *midx_pack_name(const struct midx *m, uint32_t pack_int_id);
/* The pack_int_id of an idx or pack name (basename); false if absent. */
bool midx_find_pack(const struct midx *m, const char *name, uint32_t *pack_int_id);
/* The trailing checksum (names the MIDX's bitmap). */
const unsigned char *midx_checksum(const struct midx *m);

/* Objects whose name's first byte is at most first_byte. O(1). */
uint32_t midx_fanout(const struct midx *m, unsigned first_byte);
/* O(log n) within the fanout bucket. */
bool midx_find_oid(const struct midx *m, const struct object_id *oid,
		   uint32_t *midx_pos);
void midx_nth_oid(const struct midx *m, uint32_t midx_pos, struct object_id *oid);
const unsigned char *midx_nth_oid_raw(const struct midx *m, uint32_t midx_pos);
uint32_t midx_nth_pack(const struct midx *m, uint32_t midx_pos);
uint64_t midx_nth_offset(const struct midx *m, uint32_t midx_pos);

/*
 * The pseudo-pack order: from the RIDX chunk when present, otherwise
 * computed (which needs the preferred pack: without RIDX there is none,
 * and the order is plain MIDX pack order). Thread-safe after the first
 * successful call. Errors: GP_ECORRUPT (a RIDX that is not a
 * permutation).
 */
int midx_load_pseudo_order(struct midx *m, struct gp_error *err);
bool midx_has_ridx(const struct midx *m);
/* After midx_load_pseudo_order(). O(1). */
uint32_t midx_pseudo_to_pos(const struct midx *m, uint32_t pseudo_pos);
uint32_t midx_pos_to_pseudo(const struct midx *m, uint32_t midx_pos);
/*
 * The preferred pack: the pack of the object at pseudo position 0, when
 * the MIDX has a RIDX chunk. GP_ENOTFOUND otherwise.
 */
int midx_preferred_pack(struct midx *m, uint32_t *pack_int_id,
			struct gp_error *err);

/*
 * Deep check: the trailing checksum; that every pack opens and matches
 * its .idx (in pack_dir); that each object's pack holds it at the
 * recorded offset; the RIDX order. Reports the first problem in err (GP_ECORRUPT); nr_problems
 * counts them all.
 */
int midx_verify(struct midx *m, const char *pack_dir, struct progress *progress,
		size_t *nr_problems, struct gp_error *err);

#endif
