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
 * A tree the index implies: its name and content (tree format), for the
 * caller to store when it is missing. Called before fn sees the name.
 */
typedef int index_tree_fn(const struct object_id *oid, const unsigned char *content,
			  size_t len, void *data);

struct index_visitor {
	index_object_fn *object;
	/*
	 * May be NULL. A sparse index (the "sdir" extension) names whole
	 * directories by tree, and its cache-tree is usually invalid: git
	 * expands such an index before walking it, which computes the tree
	 * of every directory from the entries and stores those trees, so
	 * they stay alive (t7700's "pending objects"). With store_tree set,
	 * a sparse index gets the same: store_tree, then object, for each
	 * computed tree. An index with unmerged entries has none, as in git.
	 */
	index_tree_fn *store_tree;
	void *data;
};

/*
 * Call visitor->object for each object the index at path names (possibly
 * more than once). A missing file is no index: 0, and no call. Returns a
 * callback's non-zero value, or GP_ECORRUPT, GP_EINVAL, GP_EIO.
 */
int index_file_for_each_object(const char *path, int algo, const struct index_visitor *visitor,
			       struct gp_error *err);

/* The same on an image in memory (the fuzz target's way in). */
int index_buf_for_each_object(const unsigned char *buf, size_t len, const char *name,
			      int algo, const struct index_visitor *visitor,
			      struct gp_error *err);

#endif
