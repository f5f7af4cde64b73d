/*
 * fuzz-sha1dc.c: the collision-detecting SHA-1 against OpenSSL's, and
 * its filter against the full check.
 *
 * Input: any bytes, hashed three ways: OpenSSL's SHA1(); sha1dc with the
 * filter, fed in pieces whose sizes come from the input itself (so every
 * buffering path runs); sha1dc with SHA1DC_FULL (every block recompressed
 * for every DV). Invariants:
 *  - all three give the same SHA-1 (detection never changes the hash);
 *  - the filtered and the full check agree on whether a collision was
 *    found (the full check finding one the filter let pass would be an
 *    attack the filter misses);
 *  - the vectorised filter and the scalar one agree on every block.
 * Seeds (t/fuzz/corpus/sha1dc/): the first 320 bytes of the two
 * SHAttered PDFs (a real collision: both must be detected), random bytes,
 * the empty input.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "fuzz.h"
#include "sha1dc.h"
#include <openssl/sha.h>
#include <string.h>

static inline uint32_t rotl1(uint32_t x)
{
	return (x << 1) | (x >> 31);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char want[20], got[20], full[20];
	struct sha1dc_ctx ctx;
	bool found, found_full;
	size_t done = 0;
	unsigned int step = size ? data[0] : 0;

	SHA1(data, size, want);

	sha1dc_init(&ctx, 0);
	while (done < size) {
		/* pieces of 1..256 bytes, or the rest when the step byte is 0 */
		size_t piece = step ? MIN(size - done, (size_t)step) : size - done;
		sha1dc_update(&ctx, data + done, piece);
		done += piece;
		step = (step * 7 + 13) & 0xff;
	}
	found = sha1dc_final(&ctx, got);

	sha1dc_init(&ctx, SHA1DC_FULL);
	sha1dc_update(&ctx, data, size);
	found_full = sha1dc_final(&ctx, full);

	if (memcmp(want, got, 20))
		fuzz_fail("sha1dc (filtered) and OpenSSL disagree on %zu bytes", size);
	if (memcmp(want, full, 20))
		fuzz_fail("sha1dc (full) and OpenSSL disagree on %zu bytes", size);
	if (found != found_full)
		fuzz_fail("the filtered check says %d, the full one %d", found, found_full);

	for (size_t ofs = 0; ofs + 64 <= size; ofs += 64) {
		uint32_t w[80], vmask;
		for (int t = 0; t < 16; t++)
			w[t] = get_be32(data + ofs + 4 * t);
		for (int t = 16; t < 80; t++)
			w[t] = rotl1(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]);
		sha1dc_filter_blocks(data + ofs, 1, &vmask);
		if (vmask != sha1dc_filter_expanded(w))
			fuzz_fail("vector and scalar filters disagree at offset %zu", ofs);
	}
	return 0;
}
