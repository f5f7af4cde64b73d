/*
 * hash.h: the two object hash algorithms, SHA-1 and SHA-256, behind one
 * interface (OpenSSL libcrypto underneath, which uses the CPU's SHA
 * instructions where present).
 *
 * The repository's extensions.objectFormat picks the algorithm; every
 * object id carries its algorithm (see object.h). The numeric ids are the
 * ones Git writes into .rev, MIDX and commit-graph headers:
 * 1 = SHA-1, 2 = SHA-256.
 *
 * Two kinds of context. hash_init() is for anything that names an
 * object by hashing its content: with SHA-1 it detects the known
 * collision attacks (sha1dc.h), and hash_final() fails with GP_ECORRUPT
 * when the content is half of one, as Git refuses such objects.
 * hash_init_checksum() is for the trailing checksums of files (.pack,
 * .idx, .rev, MIDX, .bitmap): plain SHA-1, as Git has used a separate
 * "unsafe" SHA-1 for them since 2.47. A checksum only detects accidental
 * corruption of a file whose objects are each named (and so checked)
 * by the object hash; a colliding trailer gains an attacker nothing an
 * ordinary corrupt file would not. A pack's name is its trailer: two
 * packs built to collide could share a name, but their objects are
 * still named and checked one by one when they are indexed.
 */
#ifndef GP_HASH_H
#define GP_HASH_H

#include "util.h"

struct gp_error;

#define GP_HASH_SHA1 1
#define GP_HASH_SHA256 2
#define GP_HASH_NALGOS 3 /* index 0 is "unknown" */

#define GP_MAX_RAWSZ 32
#define GP_MAX_HEXSZ 64

/*
 * Opaque state big enough for either algorithm. Aligned and sized so
 * it can live on the stack without allocation.
 */
struct gp_hash_ctx {
	int algo;
	bool checksum;  /* from hash_init_checksum(): no collision detection */
	_Alignas(16) unsigned char state[128];
};

struct gp_hash_algo {
	const char *name;   /* "sha1", "sha256": extensions.objectFormat */
	int id;             /* GP_HASH_SHA1 / GP_HASH_SHA256 */
	size_t rawsz;       /* bytes in a binary id */
	size_t hexsz;       /* characters in a hex id */
};

extern const struct gp_hash_algo gp_hash_algos[GP_HASH_NALGOS];

/* Algorithm by name ("sha1", "sha256"); 0 when unknown. */
int hash_algo_by_name(const char *name);
static inline const struct gp_hash_algo *hash_algo(int algo)
{
	return &gp_hash_algos[algo];
}

/* An object hash: SHA-1 detects collision attacks. */
void hash_init(struct gp_hash_ctx *ctx, int algo);
/* A file checksum: plain SHA-1 (see above). */
void hash_init_checksum(struct gp_hash_ctx *ctx, int algo);
void hash_update(struct gp_hash_ctx *ctx, const void *data, size_t len);
/*
 * Writes rawsz bytes to out; ctx must be re-initialised before reuse.
 * Returns GP_ECORRUPT, "SHA-1 appears to be part of a collision attack:
 * <hex>" (Git's words; out holds that SHA-1), when an object hash saw a
 * collision attack; 0 otherwise.
 */
int hash_final(struct gp_hash_ctx *ctx, unsigned char *out, struct gp_error *err);
/* hash_final() for a checksum context, which cannot fail. */
void hash_final_checksum(struct gp_hash_ctx *ctx, unsigned char *out);
/* One-shot conveniences. */
int hash_buf(int algo, const void *data, size_t len, unsigned char *out,
	     struct gp_error *err);
void hash_buf_checksum(int algo, const void *data, size_t len, unsigned char *out);

#endif
