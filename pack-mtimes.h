/*
 * pack-mtimes.h: the modification times of a cruft pack's objects
 * (gitformat-pack "pack-*.mtimes files", and its "cruft packs"
 * section). A cruft pack holds unreachable objects together; each
 * object keeps the mtime it had loose (or of the pack it came from),
 * so that it expires when it would have expired loose.
 *
 * .mtimes layout (big-endian):
 *   0        4        "MTME" (MTIMES_SIGNATURE)
 *   4        4        version = 1
 *   8        4        hash id: 1 = SHA-1, 2 = SHA-256
 *   12       N * 4    mtime of each object, in idx order (by name), in
 *                     seconds since the epoch
 *   ...      rawsz    checksum of the .pack
 *   ...      rawsz    checksum of all the above
 */
#ifndef GP_PACK_MTIMES_H
#define GP_PACK_MTIMES_H

#include "util.h"

struct gp_error;

#define MTIMES_SIGNATURE 0x4d544d45u /* "MTME" */
#define MTIMES_VERSION 1
#define MTIMES_HEADER_SIZE 12

/*
 * Check an .mtimes image for a pack of nr objects: exact size,
 * signature, version, hash id, that its pack checksum equals pack_hash
 * (unless NULL) and, when verify_checksum, its own checksum. Errors:
 * GP_ECORRUPT naming name and the offset.
 */
int mtimes_parse(const unsigned char *map, size_t size, const char *name, int algo,
		 uint32_t nr, const unsigned char *pack_hash, bool verify_checksum,
		 struct gp_error *err);
/* The mtime of the object at idx_pos of a checked image. O(1). */
static inline uint32_t mtimes_entry(const unsigned char *map, uint32_t idx_pos)
{
	return get_be32(map + MTIMES_HEADER_SIZE + 4 * (size_t)idx_pos);
}

/*
 * Write path: mtimes[idx_pos] for the pack with checksum pack_hash,
 * atomic and durable (hashfile.h). Errors: GP_EIO.
 */
int mtimes_write(const char *path, int algo, const uint32_t *mtimes, uint32_t nr,
		 const unsigned char *pack_hash, struct gp_error *err);

/*
 * Read the .mtimes file at path into a malloc'd array of nr entries in
 * idx order. Errors: GP_ENOTFOUND (no file), GP_ECORRUPT, GP_EIO.
 */
int mtimes_read(const char *path, int algo, uint32_t nr, const unsigned char *pack_hash,
		uint32_t **out, struct gp_error *err);

#endif
