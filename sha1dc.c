/*
 * sha1dc.c: SHA-1 with collision detection (the method and its sources
 * are in sha1dc.h).
 *
 * Notation. Step t (0..79) of the compression turns the state
 * (a, b, c, d, e) into (rotl5(a) + f_t(b, c, d) + e + K_t + W_t, a,
 * rotl30(b), c, d). W_0..W_15 are the block's big-endian words and
 * W_t = rotl1(W_{t-3} ^ W_{t-8} ^ W_{t-14} ^ W_{t-16}) the rest.
 *
 * Disturbance vectors. A DV is itself a sequence that obeys the message
 * expansion: DV_t for t = -5..79, fixed by any sixteen consecutive
 * words. Manuel's classes (S. Manuel, "Classification and generation of
 * disturbance vectors for collision attacks against SHA-1", 2011), in
 * terms of the sixteen words DV_K..DV_{K+15}:
 *
 *   I(K,b):  all zero but DV_{K+15} = 2^b;
 *   II(K,b): all zero but DV_{K+1} = DV_{K+3} = 2^(b-1 mod 32) and
 *            DV_{K+15} = 2^b.
 *
 * A bit j of DV_t starts a local collision at step t: the disturbance
 * 2^j in W_t, then the corrections 2^(j+5) in W_{t+1} (through
 * rotl5(a)), 2^j in W_{t+2}, W_{t+3}, W_{t+4} (through f) and
 * 2^(j+30) in W_{t+3}, W_{t+4}, W_{t+5} (f, f and e). So the message
 * difference is
 *
 *   dm_t = DV_t ^ rotl5(DV_{t-1}) ^ DV_{t-2} ^ rotl30(DV_{t-3} ^ DV_{t-4} ^ DV_{t-5})
 *
 * (W_{t+2} corrects f's b input, W_{t+3} and W_{t+4} its c and d inputs,
 * which are rotated by 30, W_{t+5} the e term), which obeys the message
 * expansion because the DV does and the expansion is linear and
 * commutes with rotations. The
 * state difference is DV_t in the a computed by step t, i.e. the state
 * before step t differs by (DV_{t-1}, DV_{t-2}, rotl30(DV_{t-3}),
 * rotl30(DV_{t-4}), rotl30(DV_{t-5})): zero when DV_{t-5..t-1} are zero.
 * Each DV's recompression step testt is such a step (58 or 65), inside
 * the run of zero words that both classes have.
 *
 * t/helper/test-sha1dc.c checks that every dm obeys the expansion and
 * that the SHAttered blocks XORed with II(52,0)'s dm give the second
 * SHAttered file's blocks (the same SHA-1).
 *
 * Detection of a block B with chaining value IHV (Stevens 2013): take
 * the state before step testt of B's compression, compute steps
 * testt-1..0 backwards and testt..79 forwards with W ^ dm. The backward
 * part yields the chaining value IHV' the other message would need, the
 * forward part its output; if IHV' + output' equals B's own output, B and
 * B ^ dm collide from IHV and IHV': the second block of a two-block
 * attack, whose first block made IHV' - IHV. (The first block of such an
 * attack is not flagged, as in Git: alone it is a near-collision.)
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "sha1dc.h"
#include "util.h"
#include <openssl/sha.h>
#include <pthread.h>

#include "sha1dc-ubc.h"

static const struct { char type; int k, b; } dv_list[SHA1DC_NR_DVS] = {
	{ 1, 43, 0 }, { 1, 44, 0 }, { 1, 45, 0 }, { 1, 46, 0 },
	{ 1, 46, 2 }, { 1, 47, 0 }, { 1, 47, 2 }, { 1, 48, 0 },
	{ 1, 48, 2 }, { 1, 49, 0 }, { 1, 49, 2 }, { 1, 50, 0 },
	{ 1, 50, 2 }, { 1, 51, 0 }, { 1, 51, 2 }, { 1, 52, 0 },
	{ 2, 45, 0 }, { 2, 46, 0 }, { 2, 46, 2 }, { 2, 47, 0 },
	{ 2, 48, 0 }, { 2, 49, 0 }, { 2, 49, 2 }, { 2, 50, 0 },
	{ 2, 50, 2 }, { 2, 51, 0 }, { 2, 51, 2 }, { 2, 52, 0 },
	{ 2, 53, 0 }, { 2, 54, 0 }, { 2, 55, 0 }, { 2, 56, 0 },
};

static struct sha1dc_dv dvs[SHA1DC_NR_DVS];
static bool force_full;
static pthread_once_t dvs_once = PTHREAD_ONCE_INIT;

static inline uint32_t rotl(uint32_t x, unsigned int n)
{
	n &= 31;
	return n ? (x << n) | (x >> (32 - n)) : x;
}

static inline uint32_t rotr(uint32_t x, unsigned int n)
{
	return rotl(x, 32 - (n & 31));
}

static void pick_filter(void);

static void make_dvs(void)
{
	const char *env = getenv("GP_TEST_SHA1DC_FULL");

	pick_filter();
	force_full = env && *env && strcmp(env, "0");

	for (int i = 0; i < SHA1DC_NR_DVS; i++) {
		struct sha1dc_dv *d = &dvs[i];
		uint32_t *v = d->dv + 5; /* v[t] for t = -5..79 */
		int k = dv_list[i].k;

		memset(d, 0, sizeof(*d));
		d->type = dv_list[i].type;
		d->k = k;
		d->b = dv_list[i].b;
		v[k + 15] = 1u << d->b;
		if (d->type == 2)
			v[k + 1] = v[k + 3] = rotl(1u << d->b, 31);
		for (int t = k + 16; t < 80; t++)
			v[t] = rotl(v[t - 3] ^ v[t - 8] ^ v[t - 14] ^ v[t - 16], 1);
		/* The expansion run backwards: W_t from W_{t+2,+8,+13,+16}. */
		for (int t = k - 1; t >= -5; t--)
			v[t] = rotr(v[t + 16], 1) ^ v[t + 13] ^ v[t + 8] ^ v[t + 2];
		for (int t = 0; t < 80; t++)
			d->dm[t] = v[t] ^ rotl(v[t - 1], 5) ^ v[t - 2] ^
				   rotl(v[t - 3] ^ v[t - 4] ^ v[t - 5], 30);
		/*
		 * The latest step before 66 with no local collision in flight:
		 * 58 inside type I's zero run K..K+14 for K <= 53 (type II's
		 * K+4..K+14 for K <= 49), else 65.
		 */
		d->testt = (k + (d->type == 2 ? 9 : 5) <= 58) ? 58 : 65;
	}
}

static void init_once(void)
{
	pthread_once(&dvs_once, make_dvs);
}

const struct sha1dc_dv *sha1dc_dv(int i)
{
	init_once();
	return &dvs[i];
}

const char *sha1dc_dv_name(int i, char *buf)
{
	snprintf(buf, 16, "%s(%d,%d)", dv_list[i].type == 1 ? "I" : "II",
		 dv_list[i].k, dv_list[i].b);
	return buf;
}

/* ---- the filter ------------------------------------------------------ */

/*
 * The filter works on a chunk of blocks at once, one block per vector
 * lane: the relations are the same operations for every block, and the
 * chunk (up to 1 KiB) is still in L1 when OpenSSL compresses it next.
 * The lane count follows the CPU, chosen once: 16 with AVX-512, 8 with
 * AVX2, 4 otherwise (SSE2, or whatever 128-bit vectors the compiler
 * has); wider vectors than the registers would only spill.
 *
 * The relations are compiled in (sha1dc-ubc.h is an X-macro list), so
 * each is a handful of vector instructions with its constants folded.
 */
#define FILTER_WORDS (UBC_MAX_T + 1)
#define MAX_LANES 16

typedef uint32_t v16 __attribute__((vector_size(64)));
typedef uint32_t v8 __attribute__((vector_size(32)));
typedef uint32_t v4 __attribute__((vector_size(16)));

#define ROTR(x, n) (((x) >> (n)) | ((x) << ((32 - (n)) & 31)))

/* acc: the broken relations of the current DV; out: the DVs that pass. */
#define REL(dv, t1, t2, rot, mask, expect) \
	acc |= (w[t1] ^ ROTR(w[t2], rot) ^ (expect)) & (mask);
#define END(dv) \
	out |= (__typeof__(out))(acc == 0) & (1u << (dv)); \
	acc = (__typeof__(acc)){ 0 };

#define FILTER_EXPAND_AND_CHECK(lanes) \
	for (int t = 16; t < FILTER_WORDS; t++) { \
		__typeof__(out) x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]; \
		w[t] = (x << 1) | (x >> 31); \
	} \
	UBC_RELATIONS(REL, END) \
	for (size_t j = 0; j < nr; j++) \
		masks[j] = out[j];

/* Words 0..15 of blocks 0..lanes-1 into w[t][j], big-endian. */
#define FILTER_LOAD_SCALAR(lanes) { \
	uint32_t rows_[16][lanes] __attribute__((aligned(64))); \
	for (size_t j = 0; j < (lanes); j++) \
		for (int t = 0; t < 16; t++) \
			rows_[t][j] = get_be32(p + 64 * j + 4 * t); \
	memcpy(w, rows_, sizeof(rows_)); \
}

/*
 * A 16x16 transpose of 32-bit words in four stages: stage d swaps bit d
 * of the row and column numbers, exchanging r[i][c + d] and
 * r[i + d][c] for the rows i and columns c where that bit is clear.
 */
#define LO_8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define HI_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define LO_4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define HI_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define LO_2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define HI_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define LO_1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define HI_1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define SWAP(i, d) { \
	v16 lo_ = __builtin_shufflevector(w[i], w[(i) + (d)], LO_##d); \
	v16 hi_ = __builtin_shufflevector(w[i], w[(i) + (d)], HI_##d); \
	w[i] = lo_; \
	w[(i) + (d)] = hi_; \
}

#if defined(__x86_64__) && defined(__GNUC__)
#define TARGET(t) __attribute__((target(t)))
#define HAVE_WIDE_FILTERS 1
#else
#define TARGET(t)
#endif

#ifdef HAVE_WIDE_FILTERS
TARGET("avx512f")
static void filter16(const unsigned char *p, uint32_t *masks, size_t nr)
{
	v16 w[FILTER_WORDS], out = { 0 }, acc = { 0 };

	/* Row j: block j's words, byte-swapped; transposed, row t: word t of each. */
	for (size_t j = 0; j < 16; j++) {
		v16 x;
		memcpy(&x, p + 64 * j, 64);
		w[j] = (ROTR(x, 8) & 0xff00ff00) | (ROTR(x, 24) & 0x00ff00ff);
	}
	SWAP(0, 8) SWAP(1, 8) SWAP(2, 8) SWAP(3, 8)
	SWAP(4, 8) SWAP(5, 8) SWAP(6, 8) SWAP(7, 8)
	SWAP(0, 4) SWAP(1, 4) SWAP(2, 4) SWAP(3, 4)
	SWAP(8, 4) SWAP(9, 4) SWAP(10, 4) SWAP(11, 4)
	SWAP(0, 2) SWAP(1, 2) SWAP(4, 2) SWAP(5, 2)
	SWAP(8, 2) SWAP(9, 2) SWAP(12, 2) SWAP(13, 2)
	SWAP(0, 1) SWAP(2, 1) SWAP(4, 1) SWAP(6, 1)
	SWAP(8, 1) SWAP(10, 1) SWAP(12, 1) SWAP(14, 1)
	FILTER_EXPAND_AND_CHECK(16)
}

TARGET("avx2")
static void filter8(const unsigned char *p, uint32_t *masks, size_t nr)
{
	v8 w[FILTER_WORDS], out = { 0 }, acc = { 0 };

	FILTER_LOAD_SCALAR(8)
	FILTER_EXPAND_AND_CHECK(8)
}
#endif

static void filter4(const unsigned char *p, uint32_t *masks, size_t nr)
{
	v4 w[FILTER_WORDS], out = { 0 }, acc = { 0 };

	FILTER_LOAD_SCALAR(4)
	FILTER_EXPAND_AND_CHECK(4)
}

#undef REL
#undef END

/* Chosen by make_dvs(): the widest filter the CPU runs, and its lanes. */
static void (*filter_fn)(const unsigned char *p, uint32_t *masks, size_t nr) = filter4;
static size_t filter_lanes = 4;

#ifdef HAVE_WIDE_FILTERS
#include <cpuid.h>
/*
 * AVX2 (or with avx512, AVX-512F) in the CPU and its registers saved by
 * the OS. Asked of cpuid here, when the first hash needs it, rather than
 * with __builtin_cpu_supports(), whose libgcc probe runs cpuid (slow in
 * a virtual machine) at the start of every process.
 */
static bool cpu_has_avx(bool avx512)
{
	unsigned int a, b, c, d, xcr0_lo, xcr0_hi;
	unsigned int os_mask = avx512 ? 0xe6 : 0x06; /* SSE, AVX (and opmask, ZMM) state */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return false;
	__asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
	if ((xcr0_lo & os_mask) != os_mask || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return avx512 ? (b & bit_AVX512F) != 0 : (b & bit_AVX2) != 0;
}
#endif

/* GP_TEST_SHA1DC_LANES=4 or 8: a narrower filter than the CPU allows. */
static void pick_filter(void)
{
#ifdef HAVE_WIDE_FILTERS
	const char *env = getenv("GP_TEST_SHA1DC_LANES");
	size_t most = env ? strtoul(env, NULL, 10) : MAX_LANES;

	if (most >= 16 && cpu_has_avx(true)) {
		filter_fn = filter16;
		filter_lanes = 16;
	} else if (most >= 8 && cpu_has_avx(false)) {
		filter_fn = filter8;
		filter_lanes = 8;
	}
#endif
}

void sha1dc_filter_blocks(const unsigned char *p, size_t nr, uint32_t *masks)
{
	unsigned char padded[MAX_LANES * 64];

	init_once();
	if (nr > MAX_LANES)
		BUG("sha1dc_filter_blocks: %zu blocks", nr);
	while (nr) {
		size_t n = MIN(nr, filter_lanes);
		const unsigned char *in = p;
		if (n < filter_lanes) {
			/* the lanes past n are computed and ignored */
			memcpy(padded, p, 64 * n);
			memset(padded + 64 * n, 0, 64 * (filter_lanes - n));
			in = padded;
		}
		filter_fn(in, masks, n);
		p += 64 * n;
		masks += n;
		nr -= n;
	}
}

uint32_t sha1dc_filter_expanded(const uint32_t *w)
{
	uint32_t out = 0, acc = 0;

#define REL(dv, t1, t2, rot, mask, expect) \
	acc |= (w[t1] ^ rotr(w[t2], rot) ^ (expect)) & (mask);
#define END(dv) \
	if (!acc) \
		out |= 1u << (dv); \
	acc = 0;
	UBC_RELATIONS(REL, END)
#undef REL
#undef END
	return out;
}

/* ---- compression in software, and recompression ----------------------- */

static const uint32_t sha1_k[4] = { 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6 };

static inline uint32_t sha1_f(int t, uint32_t b, uint32_t c, uint32_t d)
{
	if (t < 20)
		return (b & c) | (~b & d);
	if (t < 40 || t >= 60)
		return b ^ c ^ d;
	return (b & c) | (b & d) | (c & d);
}

static void expand(const unsigned char *block, uint32_t *w)
{
	for (int t = 0; t < 16; t++)
		w[t] = get_be32(block + 4 * t);
	for (int t = 16; t < 80; t++)
		w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
}

/* states[t] = (a, b, c, d, e) before step t; out = the compression's output. */
static void compress_keep(const uint32_t *ihv, const uint32_t *w,
			  uint32_t (*states)[5], uint32_t *out)
{
	uint32_t a = ihv[0], b = ihv[1], c = ihv[2], d = ihv[3], e = ihv[4];

	for (int t = 0; t < 80; t++) {
		uint32_t tmp;
		states[t][0] = a;
		states[t][1] = b;
		states[t][2] = c;
		states[t][3] = d;
		states[t][4] = e;
		tmp = rotl(a, 5) + sha1_f(t, b, c, d) + e + sha1_k[t / 20] + w[t];
		e = d;
		d = c;
		c = rotl(b, 30);
		b = a;
		a = tmp;
	}
	out[0] = ihv[0] + a;
	out[1] = ihv[1] + b;
	out[2] = ihv[2] + c;
	out[3] = ihv[3] + d;
	out[4] = ihv[4] + e;
}

/* Does the block collide on DV i? (see the top of this file) */
static bool recompress(const struct sha1dc_dv *dv, const uint32_t *w,
		       uint32_t (*states)[5], const uint32_t *ihv_out)
{
	uint32_t w2[80], in2[5];
	const uint32_t *s = states[dv->testt];
	uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4];

	for (int t = 0; t < 80; t++)
		w2[t] = w[t] ^ dv->dm[t];
	for (int t = dv->testt - 1; t >= 0; t--) {
		uint32_t pa = b, pb = rotr(c, 30), pc = d, pd = e;
		uint32_t pe = a - rotl(pa, 5) - sha1_f(t, pb, pc, pd) - sha1_k[t / 20] - w2[t];
		a = pa;
		b = pb;
		c = pc;
		d = pd;
		e = pe;
	}
	in2[0] = a;
	in2[1] = b;
	in2[2] = c;
	in2[3] = d;
	in2[4] = e;
	a = s[0];
	b = s[1];
	c = s[2];
	d = s[3];
	e = s[4];
	for (int t = dv->testt; t < 80; t++) {
		uint32_t tmp = rotl(a, 5) + sha1_f(t, b, c, d) + e + sha1_k[t / 20] + w2[t];
		e = d;
		d = c;
		c = rotl(b, 30);
		b = a;
		a = tmp;
	}
	return in2[0] + a == ihv_out[0] && in2[1] + b == ihv_out[1] &&
	       in2[2] + c == ihv_out[2] && in2[3] + d == ihv_out[3] &&
	       in2[4] + e == ihv_out[4];
}

uint32_t sha1dc_check_block(const uint32_t *ihv, const unsigned char *block,
			    uint32_t dv_mask, uint32_t *ihv_out)
{
	uint32_t w[80], states[80][5], found = 0;

	init_once();
	expand(block, w);
	compress_keep(ihv, w, states, ihv_out);
	for (int i = 0; i < SHA1DC_NR_DVS; i++)
		if ((dv_mask >> i & 1) && recompress(&dvs[i], w, states, ihv_out))
			found |= 1u << i;
	return found;
}

/* ---- the hash --------------------------------------------------------- */

static const uint32_t sha1_iv[5] = {
	0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0
};

/* nr whole blocks through OpenSSL's block function, from ihv. */
static void openssl_blocks(uint32_t *ihv, const unsigned char *p, size_t nr)
{
	SHA_CTX c;

	memset(&c, 0, sizeof(c));
	c.h0 = ihv[0];
	c.h1 = ihv[1];
	c.h2 = ihv[2];
	c.h3 = ihv[3];
	c.h4 = ihv[4];
	/* With nothing buffered, whole blocks go straight to the block function. */
	SHA1_Update(&c, p, nr * 64);
	ihv[0] = c.h0;
	ihv[1] = c.h1;
	ihv[2] = c.h2;
	ihv[3] = c.h3;
	ihv[4] = c.h4;
}

#define CHUNK_BLOCKS 16

static void process_blocks(struct sha1dc_ctx *ctx, const unsigned char *p,
			   size_t nr)
{
	while (nr) {
		size_t n = MIN(nr, (size_t)CHUNK_BLOCKS), j = 0;
		uint32_t masks[CHUNK_BLOCKS];

		if (ctx->flags & SHA1DC_FULL) {
			for (size_t i = 0; i < n; i++)
				masks[i] = UINT32_MAX;
		} else {
			sha1dc_filter_blocks(p, n, masks);
		}
		while (j < n) {
			size_t run = j;
			while (run < n && !masks[run])
				run++;
			if (run > j) {
				openssl_blocks(ctx->ihv, p + 64 * j, run - j);
				j = run;
			}
			if (j < n) {
				uint32_t out[5];
				if (sha1dc_check_block(ctx->ihv, p + 64 * j, masks[j], out))
					ctx->collision = true;
				memcpy(ctx->ihv, out, sizeof(out));
				j++;
			}
		}
		p += 64 * n;
		nr -= n;
	}
}

void sha1dc_init(struct sha1dc_ctx *ctx, unsigned int flags)
{
	init_once();
	memcpy(ctx->ihv, sha1_iv, sizeof(sha1_iv));
	ctx->total = 0;
	ctx->buf_len = 0;
	ctx->flags = flags | (force_full ? SHA1DC_FULL : 0);
	ctx->collision = false;
}

/*
 * NEEDSWORK: a small object pays up to three filter passes (the block
 * completing the header, the rest of its data, the padding), each the
 * price of a whole chunk; buffering up to a chunk before filtering
 * would save about 1% of index-pack's CPU.
 */
void sha1dc_update(struct sha1dc_ctx *ctx, const void *data, size_t len)
{
	const unsigned char *p = data;

	ctx->total += len;
	if (ctx->buf_len) {
		size_t take = MIN(len, 64 - (size_t)ctx->buf_len);
		memcpy(ctx->buf + ctx->buf_len, p, take);
		ctx->buf_len += (unsigned int)take;
		p += take;
		len -= take;
		if (ctx->buf_len < 64)
			return;
		process_blocks(ctx, ctx->buf, 1);
		ctx->buf_len = 0;
	}
	if (len >= 64) {
		process_blocks(ctx, p, len / 64);
		p += len & ~(size_t)63;
		len &= 63;
	}
	memcpy(ctx->buf, p, len);
	ctx->buf_len = (unsigned int)len;
}

bool sha1dc_final(struct sha1dc_ctx *ctx, unsigned char *out)
{
	unsigned char pad[128];
	size_t n = ctx->buf_len, padded;

	memcpy(pad, ctx->buf, n);
	pad[n++] = 0x80;
	padded = n <= 56 ? 64 : 128;
	memset(pad + n, 0, padded - 8 - n);
	put_be64(pad + padded - 8, ctx->total << 3);
	process_blocks(ctx, pad, padded / 64);
	for (int i = 0; i < 5; i++)
		put_be32(out + 4 * i, ctx->ihv[i]);
	return ctx->collision;
}
