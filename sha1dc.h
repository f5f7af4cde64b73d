/*
 * sha1dc.h: SHA-1 that detects the known collision attacks.
 *
 * A SHA-1 collision attack (SHAttered, 2017; the chosen-prefix attacks
 * after it) is a differential attack: the two colliding messages differ
 * by a fixed message difference, built from a "disturbance vector" (DV)
 * of interleaved six-step local collisions, and the state difference
 * cancels again by the end of the block. Counter-cryptanalysis (Marc
 * Stevens, "Counter-cryptanalysis", CRYPTO 2013) detects such a block
 * from one of the two messages alone: for each DV an attack could use,
 * take the block's intermediate state at a step where that DV has no
 * local collision in flight, apply the DV's message difference, and
 * recompute the block backwards and forwards from there ("recompression").
 * If the result is a second block that collides with the first, whatever
 * chaining value it came from, the message is half of a collision
 * attack. The DVs are the 32 of Manuel's classes I(K,b) and II(K,b) that
 * Stevens and Shumow list ("Speeding up detection of SHA-1 collision
 * attacks using unavoidable attack conditions", USENIX Security 2017);
 * every practical attack so far (SHAttered used II(52,0)) is among them.
 *
 * Recompressing 32 times per block would cost 32 compressions. The
 * 2017 paper's filter makes it cheap: an attack on a DV forces relations
 * between bits of the expanded message (signs of the message differences
 * inside a local collision must agree with the state difference the
 * local collision carries), so a block whose expanded message breaks any
 * of a DV's relations cannot be an attack on that DV. This module checks
 * each block's expanded message against its own table of such relations
 * (sha1dc-ubc.h, derived here by sampling the DVs' differential paths;
 * see `test-tool sha1dc derive`), and recompresses only for the DVs whose
 * relations all hold, about one block in a few hundred for random data.
 *
 * The hash itself stays OpenSSL's SHA-1 (the CPU's SHA instructions where
 * present): the filter runs on chunks of up to 16 blocks just before
 * OpenSSL compresses the same, cache-hot, bytes; only a block that passes
 * some DV's filter is compressed in software, keeping the intermediate
 * states the recompressions start from.
 *
 * Cost: the filter is a vectorised message expansion and relation check
 * per block, about half the cost of a SHA-NI compression; see
 * Documentation/technical/sha1dc.adoc for figures.
 */
#ifndef GP_SHA1DC_H
#define GP_SHA1DC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sha1dc_flags {
	/* Skip the filter: recompress every block for every DV (tests). */
	SHA1DC_FULL = 1 << 0,
};

struct sha1dc_ctx {
	uint32_t ihv[5];       /* chaining value after the blocks so far */
	uint64_t total;        /* bytes hashed */
	unsigned int buf_len;  /* bytes waiting in buf, < 64 */
	unsigned int flags;    /* enum sha1dc_flags */
	bool collision;        /* some block was detected */
	unsigned char buf[64];
};

/*
 * flags: enum sha1dc_flags. Test knobs, read once per process:
 * GP_TEST_SHA1DC_FULL=1 adds SHA1DC_FULL to every context;
 * GP_TEST_SHA1DC_LANES=4 or 8 runs the filter on 4 or 8 blocks at once
 * even where the CPU could do more (16 with AVX-512, 8 with AVX2).
 */
void sha1dc_init(struct sha1dc_ctx *ctx, unsigned int flags);
void sha1dc_update(struct sha1dc_ctx *ctx, const void *data, size_t len);
/*
 * Writes the 20-byte SHA-1 (the ordinary one, also when a collision was
 * detected) and returns true when some block of the message is half of
 * a collision attack. ctx must be re-initialised before reuse.
 */
bool sha1dc_final(struct sha1dc_ctx *ctx, unsigned char *out);

/* ---- introspection, for t/helper and t/fuzz ------------------------- */

#define SHA1DC_NR_DVS 32

struct sha1dc_dv {
	char type;          /* 1 or 2: Manuel's type I or II */
	int k, b;           /* I(K,b) / II(K,b) */
	int testt;          /* recompression step: no local collision in flight */
	uint32_t dv[85];    /* the disturbance vector, steps -5..79 at [t + 5] */
	uint32_t dm[80];    /* the message XOR difference it implies */
};

/* The DVs, 0 <= i < SHA1DC_NR_DVS, computed on first use. */
const struct sha1dc_dv *sha1dc_dv(int i);
/* "I(43,0)"-style name into buf (at least 16 bytes). */
const char *sha1dc_dv_name(int i, char *buf);

/*
 * The filter on one expanded message W[0..79] (which need not satisfy
 * the message expansion): bit i set when DV i's relations all hold.
 */
uint32_t sha1dc_filter_expanded(const uint32_t *w);

/*
 * The filter as the hash runs it (vectorised): masks[j] for the block
 * at p + 64 * j, for j < nr <= 16. Must agree with
 * sha1dc_filter_expanded() on each block's expanded message.
 */
void sha1dc_filter_blocks(const unsigned char *p, size_t nr, uint32_t *masks);

/*
 * One block, the slow way: compress block (64 bytes) from ihv in
 * software and recompress it for every DV in dv_mask. Writes the
 * chaining value after the block to ihv_out; returns the mask of DVs on
 * which the block collides.
 */
uint32_t sha1dc_check_block(const uint32_t *ihv, const unsigned char *block,
			    uint32_t dv_mask, uint32_t *ihv_out);

#endif
