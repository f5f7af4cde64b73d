/*
 * hash.c: SHA-1 and SHA-256 through OpenSSL's low-level digest calls.
 *
 * The low-level calls are deprecated in OpenSSL 3 but remain, and avoid
 * EVP's per-object context allocation, which matters when hashing
 * millions of small objects in index-pack.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "hash.h"
#include <openssl/sha.h>

_Static_assert(sizeof(SHA_CTX) <= 128, "SHA_CTX does not fit gp_hash_ctx");
_Static_assert(sizeof(SHA256_CTX) <= 128, "SHA256_CTX does not fit gp_hash_ctx");

const struct gp_hash_algo gp_hash_algos[GP_HASH_NALGOS] = {
	{ "unknown", 0, 0, 0 },
	{ "sha1", GP_HASH_SHA1, 20, 40 },
	{ "sha256", GP_HASH_SHA256, 32, 64 },
};

int hash_algo_by_name(const char *name)
{
	for (int algo = 1; algo < GP_HASH_NALGOS; algo++)
		if (!strcmp(name, gp_hash_algos[algo].name))
			return algo;
	return 0;
}

void hash_init(struct gp_hash_ctx *ctx, int algo)
{
	ctx->algo = algo;
	if (algo == GP_HASH_SHA1)
		SHA1_Init((SHA_CTX *)ctx->state);
	else if (algo == GP_HASH_SHA256)
		SHA256_Init((SHA256_CTX *)ctx->state);
	else
		BUG("hash_init: unknown algorithm %d", algo);
}

void hash_update(struct gp_hash_ctx *ctx, const void *data, size_t len)
{
	if (ctx->algo == GP_HASH_SHA1)
		SHA1_Update((SHA_CTX *)ctx->state, data, len);
	else
		SHA256_Update((SHA256_CTX *)ctx->state, data, len);
}

void hash_final(struct gp_hash_ctx *ctx, unsigned char *out)
{
	if (ctx->algo == GP_HASH_SHA1)
		SHA1_Final(out, (SHA_CTX *)ctx->state);
	else
		SHA256_Final(out, (SHA256_CTX *)ctx->state);
}

void hash_buf(int algo, const void *data, size_t len, unsigned char *out)
{
	struct gp_hash_ctx ctx;
	hash_init(&ctx, algo);
	hash_update(&ctx, data, len);
	hash_final(&ctx, out);
}
