/*
 * object.h: object ids and object types.
 *
 * An object id carries its hash algorithm so that SHA-1 and SHA-256
 * repositories can be handled by one process. Hex conversion writes into
 * caller-supplied buffers; there are no static result buffers.
 */
#ifndef GP_OBJECT_H
#define GP_OBJECT_H

#include "hash.h"

struct gp_error;

struct strbuf;

struct object_id {
	unsigned char hash[GP_MAX_RAWSZ];
	int algo;
};

/* Types as encoded in pack entry headers (gitformat-pack). */
enum object_type {
	OBJ_BAD = -1,
	OBJ_NONE = 0,
	OBJ_COMMIT = 1,
	OBJ_TREE = 2,
	OBJ_BLOB = 3,
	OBJ_TAG = 4,
	/* 5 is reserved */
	OBJ_OFS_DELTA = 6,
	OBJ_REF_DELTA = 7,
};

/* "commit", "tree", "blob", "tag"; NULL for anything else. */
const char *type_name(enum object_type type);
/* OBJ_BAD when name is not one of the four object type names. */
enum object_type type_from_name(const char *name, size_t len);

static inline size_t oid_rawsz(const struct object_id *oid)
{
	return gp_hash_algos[oid->algo].rawsz;
}

static inline int oidcmp(const struct object_id *a, const struct object_id *b)
{
	return memcmp(a->hash, b->hash, gp_hash_algos[a->algo].rawsz);
}
static inline bool oideq(const struct object_id *a, const struct object_id *b)
{
	return !oidcmp(a, b);
}
void oid_from_raw(struct object_id *oid, const unsigned char *raw, int algo);
void oid_clear(struct object_id *oid, int algo);
bool oid_is_null(const struct object_id *oid);

/* out must hold GP_MAX_HEXSZ + 1 bytes; returns out. */
char *oid_to_hex_r(char *out, const struct object_id *oid);
char *hash_to_hex_r(char *out, const unsigned char *raw, size_t rawsz);
/*
 * Parse exactly hexsz hex digits for algo (no trailing check); 0 on
 * success, -1 on a non-hex character.
 */
int hex_to_oid(const char *hex, int algo, struct object_id *oid);
/* Like hex_to_oid but the whole string must be the id. */
int parse_oid_hex_exact(const char *hex, int algo, struct object_id *oid);

/*
 * Find the name hash (rawsz bytes) in a sorted table of names whose
 * i-th entry starts at table + i * stride, searching only the bucket of
 * its first byte given by fanout (256 big-endian cumulative counts, as
 * in .idx and MIDX files). The caller has validated fanout and table.
 * O(log n).
 */
bool oid_table_find(const unsigned char *fanout, const unsigned char *table,
		    size_t stride, size_t rawsz, const unsigned char *hash,
		    uint32_t *pos);

/*
 * The object header Git hashes before the content: "<type> <size>\0".
 * Writes into hdr (at least 32 bytes) and returns its length with NUL.
 */
size_t format_object_header(char *hdr, size_t hdrsz, enum object_type type,
			    size_t size);
/*
 * The id of an object with the given type and content. Fails with
 * GP_ECORRUPT when the content is part of a SHA-1 collision attack
 * (see hash_final()); oid is set either way.
 *
 * Test knob: GP_TEST_OBJECT_HASH_NO_HEADER=1 leaves the header out of
 * the hash, so that a test can hand index-pack a blob whose hashing
 * contains a published collision (no colliding Git object is public).
 */
int hash_object(int algo, enum object_type type, const void *data,
		size_t len, struct object_id *oid, struct gp_error *err);

/*
 * The id of the empty tree: hash_object() of nothing, without hashing
 * (opening a store must not pay to set up a hash context).
 */
void empty_tree_oid(int algo, struct object_id *oid);

#endif
