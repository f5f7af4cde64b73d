/*
 * hash.c: SHA-1 and SHA-256 through OpenSSL's low-level digest calls;
 * SHA-1 object hashes through sha1dc (collision detection beside
 * OpenSSL's compression).
 *
 * The low-level calls are deprecated in OpenSSL 3 but remain, and avoid
 * EVP's per-object context allocation, which matters when hashing
 * millions of small objects in index-pack.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "hash.h"
#include "error.h"
#include "sha1dc.h"
#include <openssl/sha.h>

_Static_assert(sizeof(SHA_CTX) <= 128, "SHA_CTX does not fit gp_hash_ctx");
_Static_assert(sizeof(SHA256_CTX) <= 128, "SHA256_CTX does not fit gp_hash_ctx");
_Static_assert(sizeof(struct sha1dc_ctx) <= 128, "sha1dc_ctx does not fit gp_hash_ctx");

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

static void init_ctx(struct gp_hash_ctx *ctx, int algo, bool checksum)
{
	ctx->algo = algo;
	ctx->checksum = checksum;
	if (algo == GP_HASH_SHA1 && checksum)
		SHA1_Init((SHA_CTX *)ctx->state);
	else if (algo == GP_HASH_SHA1)
		sha1dc_init((struct sha1dc_ctx *)ctx->state, 0);
	else if (algo == GP_HASH_SHA256)
		SHA256_Init((SHA256_CTX *)ctx->state);
	else
		BUG("hash_init: unknown algorithm %d", algo);
}

void hash_init(struct gp_hash_ctx *ctx, int algo)
{
	init_ctx(ctx, algo, false);
}

void hash_init_checksum(struct gp_hash_ctx *ctx, int algo)
{
	init_ctx(ctx, algo, true);
}

void hash_update(struct gp_hash_ctx *ctx, const void *data, size_t len)
{
	if (ctx->algo == GP_HASH_SHA256)
		SHA256_Update((SHA256_CTX *)ctx->state, data, len);
	else if (ctx->checksum)
		SHA1_Update((SHA_CTX *)ctx->state, data, len);
	else
		sha1dc_update((struct sha1dc_ctx *)ctx->state, data, len);
}

int hash_final(struct gp_hash_ctx *ctx, unsigned char *out, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];

	if (ctx->algo == GP_HASH_SHA256) {
		SHA256_Final(out, (SHA256_CTX *)ctx->state);
		return 0;
	}
	if (ctx->checksum) {
		SHA1_Final(out, (SHA_CTX *)ctx->state);
		return 0;
	}
	if (!sha1dc_final((struct sha1dc_ctx *)ctx->state, out))
		return 0;
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
	return gp_error_set(err, GP_ECORRUPT,
			    "SHA-1 appears to be part of a collision attack: %s", hex);
}

void hash_final_checksum(struct gp_hash_ctx *ctx, unsigned char *out)
{
	if (!ctx->checksum)
		BUG("hash_final_checksum on an object hash context");
	if (hash_final(ctx, out, NULL))
		BUG("a checksum context cannot fail");
}

int hash_buf(int algo, const void *data, size_t len, unsigned char *out,
	     struct gp_error *err)
{
	struct gp_hash_ctx ctx;
	hash_init(&ctx, algo);
	hash_update(&ctx, data, len);
	return hash_final(&ctx, out, err);
}

void hash_buf_checksum(int algo, const void *data, size_t len, unsigned char *out)
{
	struct gp_hash_ctx ctx;
	hash_init_checksum(&ctx, algo);
	hash_update(&ctx, data, len);
	hash_final_checksum(&ctx, out);
}
