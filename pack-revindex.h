/*
 * pack-revindex.h: the reverse index of a pack, on disk (.rev, as in
 * gitformat-pack "pack-*.rev files") and in memory.
 *
 * The reverse index lists a pack's objects in pack order (by offset):
 * entry pack_pos holds the idx position (the object's rank by name) of
 * the pack_pos-th object in the pack. The order is written down once
 * here, and bitmaps over a single pack use it.
 *
 * .rev layout (big-endian):
 *   0        4        "RIDX" (RIDX_SIGNATURE)
 *   4        4        version = 1
 *   8        4        hash id: 1 = SHA-1, 2 = SHA-256
 *   12       N * 4    idx positions, in pack order
 *   ...      rawsz    checksum of the .pack
 *   ...      rawsz    checksum of all the above
 */
#ifndef GP_PACK_REVINDEX_H
#define GP_PACK_REVINDEX_H

#include "util.h"

struct gp_error;
struct packed_git;

#define RIDX_SIGNATURE 0x52494458u /* "RIDX" */
#define RIDX_VERSION 1
#define RIDX_HEADER_SIZE 12

/*
 * Check the shape of a .rev image: size for nr objects, signature,
 * version, hash id, and (when pack_hash is not NULL) that its pack
 * checksum equals pack_hash. Entries are not checked here (the caller
 * knows the offsets). Errors: GP_ECORRUPT naming name.
 */
int revindex_parse(const unsigned char *map, size_t size, const char *name,
		   int algo, uint32_t nr, const unsigned char *pack_hash,
		   struct gp_error *err);
/* Entry pack_pos of a validated .rev image. O(1). */
static inline uint32_t revindex_entry(const unsigned char *map, uint32_t pack_pos)
{
	return get_be32(map + RIDX_HEADER_SIZE + 4 * (size_t)pack_pos);
}

/*
 * Compute the pack order of p's objects in memory (a radix sort of
 * their offsets, on two threads for big packs). Caller frees. O(n).
 */
uint32_t *revindex_compute(const struct packed_git *p);

/*
 * Sort positions 0..nr-1 by key (keys distinct), returning the
 * positions in key order. Radix sort; caller frees. O(n).
 */
uint32_t *sort_positions_by_u64(const uint64_t *keys, uint32_t nr);

/*
 * Write a .rev for a pack: pack_order[pack_pos] = idx_pos. Atomic and
 * durable (hashfile.h). Errors: GP_EIO.
 */
int revindex_write(const char *path, int algo, const uint32_t *pack_order,
		   uint32_t nr, const unsigned char *pack_hash,
		   struct gp_error *err);

#endif
