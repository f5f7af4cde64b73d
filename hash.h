/*
 * hash.h: the two object hash algorithms, SHA-1 and SHA-256, behind one
 * interface (OpenSSL libcrypto underneath, which uses the CPU's SHA
 * instructions where present).
 *
 * The repository's extensions.objectFormat picks the algorithm; every
 * object id carries its algorithm (see object.h). The numeric ids are the
 * ones Git writes into .rev, MIDX and commit-graph headers:
 * 1 = SHA-1, 2 = SHA-256.
 */
#ifndef GP_HASH_H
#define GP_HASH_H

#include "util.h"

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

void hash_init(struct gp_hash_ctx *ctx, int algo);
void hash_update(struct gp_hash_ctx *ctx, const void *data, size_t len);
/* Writes rawsz bytes to out; ctx must be re-initialised before reuse. */
void hash_final(struct gp_hash_ctx *ctx, unsigned char *out);
/* One-shot convenience. */
void hash_buf(int algo, const void *data, size_t len, unsigned char *out);

#endif
