/*
 * bloom.h: changed-path Bloom filters, as gitformat-commit-graph(5)
 * describes them for the BIDX and BDAT chunks.
 *
 * A commit's filter holds every path that differs between its root tree
 * and its first parent's (or the empty tree for a root commit), leaves
 * and the directories leading to them, without rename detection. Each
 * path is hashed with 32-bit murmur3 under two seeds, and
 * BLOOM_NUM_HASHES positions h0 + i * h1 are set in a filter of
 * ceil(paths * BLOOM_BITS_PER_ENTRY / 8) bytes, bit (pos % 8) of byte
 * (pos / 8). A commit with no changed path gets one zero byte; one
 * with more than BLOOM_MAX_CHANGED_PATHS (leaves, or leaves and their
 * directories) gets one 0xff byte.
 *
 * Hash version 1 reads path bytes as signed chars, as git does where
 * char is signed (x86): it differs from version 2 only for bytes >=
 * 0x80. Version 2 is murmur3 as published.
 */
#ifndef GP_BLOOM_H
#define GP_BLOOM_H

#include "object.h"

struct gp_error;
struct odb;
struct oidset;

#define BLOOM_NUM_HASHES 7
#define BLOOM_BITS_PER_ENTRY 10
#define BLOOM_MAX_CHANGED_PATHS 512

/* What a filter is made with (BDAT's header, and the change limit). */
struct bloom_settings {
	uint32_t hash_version;      /* 1 or 2 */
	uint32_t num_hashes;
	uint32_t bits_per_entry;
	uint32_t max_changed_paths; /* more paths: one 0xff byte */
};

#define BLOOM_SETTINGS_INIT { 1, BLOOM_NUM_HASHES, BLOOM_BITS_PER_ENTRY, BLOOM_MAX_CHANGED_PATHS }

/* 32-bit murmur3 of data[0..len) with seed, as hash version (1 or 2). */
uint32_t bloom_murmur3(uint32_t seed, const unsigned char *data, size_t len, int version);

enum bloom_trunc {
	BLOOM_TRUNC_EMPTY = 1 << 0, /* no changed path: one zero byte */
	BLOOM_TRUNC_LARGE = 1 << 1, /* too many: one 0xff byte */
};

struct bloom_filter {
	unsigned char *data; /* owned; bloom_filter_release() frees it */
	size_t len;          /* bytes */
};

#define BLOOM_FILTER_INIT { NULL, 0 }

/*
 * Compute into *out (initialised, replaced) the filter of a commit whose
 * root tree is tree and whose first parent's is parent_tree (NULL for a
 * root commit), reading trees from odb, made with settings. *trunc gets the enum
 * bloom_trunc bits that apply (0 for an ordinary filter). Errors:
 * GP_ENOTFOUND (a tree missing), GP_ECORRUPT (a malformed tree, or an
 * object that is not a tree), GP_EIO.
 */
int bloom_filter_compute(struct bloom_filter *out, struct odb *odb, int algo,
			 const struct object_id *parent_tree, const struct object_id *tree,
			 const struct bloom_settings *settings, unsigned *trunc,
			 struct gp_error *err);
void bloom_filter_release(struct bloom_filter *f);

/*
 * Whether any path in a tree, at any depth, has a byte >= 0x80: where
 * none has, the filters of hash versions 1 and 2 are the same bytes,
 * and git takes a filter of the other version as it is ("upgrades"
 * it). The answer for each tree is remembered across calls.
 */
struct bloom_high_bits {
	struct odb *odb;
	int algo;
	struct oidset *visited, *high; /* owned; bloom_high_bits_release() */
};

/*
 * *out: whether tree has such a path. Errors as bloom_filter_compute().
 * O(size of the trees not seen before).
 */
int bloom_tree_has_high_bit(struct bloom_high_bits *hb, const struct object_id *tree,
			    bool *out, struct gp_error *err);
void bloom_high_bits_release(struct bloom_high_bits *hb);

#endif
