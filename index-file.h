/*
 * index-file.h: the objects an index file (the staging area,
 * gitformat-index(5)) keeps alive, which a repack must keep too: every
 * entry's object (blobs; the trees of a sparse index's directory
 * entries), the trees of the cache-tree extension ("TREE") and the blobs
 * of the resolve-undo extension ("REUC").
 *
 * Versions 2, 3 and 4 (prefix-compressed paths) are read. Every field is
 * checked against the file's length: a damaged index is GP_ECORRUPT
 * naming the file and the offset, never an over-read. The trailing
 * checksum is not verified (git itself skips it by default).
 * Gitlinks and intent-to-add entries name no object of this repository
 * and are skipped. A split index ("link" extension) is GP_EINVAL: its
 * shared part would have to be read too.
 */
#ifndef GP_INDEX_FILE_H
#define GP_INDEX_FILE_H

#include "object.h"

struct gp_error;

/* path is the entry's path (a directory's for trees); borrowed for the call. */
typedef int index_object_fn(const struct object_id *oid, enum object_type type,
			    const char *path, void *data);

/*
 * Call fn for each object the index at path names (possibly more than
 * once). A missing file is no index: 0, and no call. Returns fn's
 * non-zero value, or GP_ECORRUPT, GP_EINVAL, GP_EIO.
 */
int index_file_for_each_object(const char *path, int algo, index_object_fn *fn,
			       void *data, struct gp_error *err);

/* The same on an image in memory (the fuzz target's way in). */
int index_buf_for_each_object(const unsigned char *buf, size_t len, const char *name,
			      int algo, index_object_fn *fn, void *data,
			      struct gp_error *err);

#endif
