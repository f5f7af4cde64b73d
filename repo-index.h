/*
 * repo-index.h: looking paths up in a repository's index (the staging
 * area, $GIT_DIR/index or $GIT_INDEX_FILE), as gitformat-index
 * describes it: versions 2, 3 and 4, SHA-1 and SHA-256.
 *
 * Layout (big-endian):
 *   0      4     "DIRC"
 *   4      4     version: 2, 3 or 4
 *   8      4     number of entries
 *   12     ...   entries, sorted by path then stage:
 *                  40 bytes of stat data (the mode at offset 24),
 *                  rawsz bytes of object id,
 *                  2 bytes of flags (0x4000: extended flags follow
 *                  (v3+); bits 12-13: stage; low 12 bits: path length,
 *                  0xfff for 4095 or more),
 *                  [2 bytes of extended flags],
 *                  v2/v3: the path, NUL-padded to a multiple of 8 bytes
 *                  counted from the entry's start (at least one NUL);
 *                  v4: a varint of bytes to drop from the end of the
 *                  previous entry's path, then the rest of this one's,
 *                  NUL-terminated, no padding
 *   ...    ...   extensions, then a checksum (rawsz) of all before it
 *
 * Only the entries are read (the checksum is not verified: git does
 * not either when reading). A split index (the "link" extension, whose
 * entries live in a shared file) is refused as unsupported.
 */
#ifndef GP_REPO_INDEX_H
#define GP_REPO_INDEX_H

#include "object.h"

struct gp_error;
struct repository;

/* Where path sits in an index image (index_find_in_buf()). */
struct index_hit {
	struct object_id oid;
	unsigned mode;
	bool found;         /* path is there at the stage asked for */
	bool other_stage;   /* path is there at another stage (before the hit) */
};

/*
 * Look path (no leading or trailing '/') up at stage (0..3) in the
 * index image buf[0..len) of algo. Every offset and length is checked
 * against len. Errors: GP_ECORRUPT naming what is wrong; GP_EINVAL for
 * a split index. O(entries).
 */
int index_find_in_buf(const unsigned char *buf, size_t len, int algo,
		      const char *path, int stage, struct index_hit *hit,
		      struct gp_error *err);

/*
 * The same in repo's index file. No index file is no entry (hit->found
 * false). Errors: those above, GP_EIO.
 */
int index_find(struct repository *repo, const char *path, int stage,
	       struct index_hit *hit, struct gp_error *err);

#endif
