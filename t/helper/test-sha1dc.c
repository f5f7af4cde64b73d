/*
 * test-sha1dc.c: the SHA-1 collision detection, seen from inside.
 *
 *   test-tool sha1 [--full] [<ignored>]
 *	hash standard input with the object hash (hash.c, SHA-1 with
 *	detection) and print the hex; on a detected collision print
 *	"fatal: SHA-1 appears to be part of a collision attack: <hex>" and
 *	exit 128, as Git's test-tool sha1 does. --full recompresses every
 *	block for every DV (GP_TEST_SHA1DC_FULL=1).
 *   test-tool sha1dc dvs
 *	print each DV with its recompression step, after checking that its
 *	message difference obeys the message expansion and that no local
 *	collision is in flight at that step.
 *   test-tool sha1dc xor-dm <DV> <block>...
 *	copy standard input to standard output with the message difference
 *	of DV (e.g. "II(52,0)") XORed into the given 64-byte blocks: the
 *	other half of a collision attack on that DV.
 *   test-tool sha1dc blocks [--full] [--offset K]
 *	hash standard input block by block (padding included) and print,
 *	for each block that passes some DV's filter, "block N: filter
 *	<DVs>" and, when it collides, "block N: collision <DVs>"; then the
 *	hash. Fails when the vectorised filter (run on chunks of 16 blocks,
 *	as the hash runs it, the first one K blocks short so that block b
 *	takes lane b + K) and a scalar one disagree on some block.
 *   test-tool sha1dc sample [--samples N] [--seed S]
 *	draw N message pairs per DV that follow the DV's differential path
 *	over the steps the filter's relations come from, and check that the
 *	filter lets every one through (a relation an attack can break would
 *	make the filter miss that attack).
 *   test-tool sha1dc derive [--samples N] [--confirm N] [--seed S]
 *			     [--per-dv N] [--from T] [--to T]
 *	derive the filter's relations and print sha1dc-ubc.h.
 *
 * How the relations are derived. For one DV, a message pair follows the
 * DV's path over steps [from, to) when, at every one of those steps, the
 * new state word differs between the two computations by exactly the
 * DV's word (the local collisions, no carries). Start from a random
 * state pair that differs as the DV says at step `from` and draw W_t for
 * each step in turn among the words that keep the pair on the path (an
 * exact count over the carries of the two additions, so the draw is
 * uniform and a dead end, where the state left no such W_t, is seen at
 * once and undone by redrawing the step before). The W_t are drawn
 * independently, not by the message expansion: a relation that holds for
 * all such pairs holds a fortiori for real messages. Then every pair of
 * message bits where the DV's message difference has a bit is tested:
 * bits whose XOR is the same in all samples are related. The samples fix
 * classes of related bits; each class of n bits gives n - 1 independent
 * relations. A second, larger set of samples must confirm each chosen
 * relation. The steps [25, 75) leave out the first round, where attacks
 * use non-linear paths, and the last steps, where an attack's second
 * block may let local collisions end differently (SHAttered's does at
 * step 78).
 */
#include "../../util.h"
#include "../../hash.h"
#include "../../error.h"
#include "../../sha1dc.h"
#include "../../strbuf.h"
#include "test-tool.h"

/* ---- test-tool sha1 ---------------------------------------------------- */

int cmd__sha1(int argc, const char **argv)
{
	struct gp_hash_ctx ctx;
	struct gp_error err = GP_ERROR_INIT;
	unsigned char buf[65536], out[GP_MAX_RAWSZ];
	ssize_t got;

	if (argc > 1 && !strcmp(argv[1], "--full"))
		setenv("GP_TEST_SHA1DC_FULL", "1", 1);
	hash_init(&ctx, GP_HASH_SHA1);
	while ((got = read_in_full(0, buf, sizeof(buf))) > 0)
		hash_update(&ctx, buf, (size_t)got);
	if (got < 0) {
		fprintf(stderr, "fatal: read error\n");
		return 128;
	}
	if (hash_final(&ctx, out, &err)) {
		fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
		gp_error_clear(&err);
		return 128;
	}
	for (int i = 0; i < 20; i++)
		printf("%02x", out[i]);
	printf("\n");
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static inline uint32_t rotl(uint32_t x, unsigned int n)
{
	n &= 31;
	return n ? (x << n) | (x >> (32 - n)) : x;
}

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	/* xorshift64*: reproducible across platforms for a given seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd32(void)
{
	return (uint32_t)(rnd64() >> 32);
}

static void print_mask(uint32_t mask)
{
	char name[16];
	for (int i = 0; i < SHA1DC_NR_DVS; i++)
		if (mask >> i & 1)
			printf(" %s", sha1dc_dv_name(i, name));
}

/* ---- dvs -------------------------------------------------------------- */

static int cmd_dvs(void)
{
	int bad = 0;
	char name[16];

	for (int i = 0; i < SHA1DC_NR_DVS; i++) {
		const struct sha1dc_dv *d = sha1dc_dv(i);
		int weight = 0;
		for (int t = 16; t < 80; t++)
			if (d->dm[t] != rotl(d->dm[t - 3] ^ d->dm[t - 8] ^ d->dm[t - 14] ^ d->dm[t - 16], 1)) {
				printf("%s: dm_%d breaks the message expansion\n", sha1dc_dv_name(i, name), t);
				bad = 1;
			}
		for (int t = 16; t < 85; t++)
			if (d->dv[t] != rotl(d->dv[t - 3] ^ d->dv[t - 8] ^ d->dv[t - 14] ^ d->dv[t - 16], 1)) {
				printf("%s: DV_%d breaks the message expansion\n", sha1dc_dv_name(i, name), t - 5);
				bad = 1;
			}
		for (int t = d->testt - 5; t < d->testt; t++)
			if (d->dv[t + 5]) {
				printf("%s: local collision in flight at step %d\n", sha1dc_dv_name(i, name), d->testt);
				bad = 1;
			}
		for (int t = 20; t < 80; t++)
			weight += __builtin_popcount(d->dv[t + 5]);
		printf("%s testt %d weight(20..79) %d\n", sha1dc_dv_name(i, name), d->testt, weight);
	}
	return bad;
}

/* ---- xor-dm -------------------------------------------------------------- */

static int cmd_xor_dm(int argc, const char **argv)
{
	struct strbuf in = STRBUF_INIT;
	const struct sha1dc_dv *d = NULL;
	char name[16];

	for (int i = 0; i < SHA1DC_NR_DVS; i++)
		if (argc > 1 && !strcmp(argv[1], sha1dc_dv_name(i, name)))
			d = sha1dc_dv(i);
	if (!d) {
		fprintf(stderr, "usage: test-tool sha1dc xor-dm <DV> <block>...\n");
		return 129;
	}
	if (strbuf_read_fd(&in, 0, 0) < 0) {
		fprintf(stderr, "fatal: read error\n");
		return 128;
	}
	for (int i = 2; i < argc; i++) {
		size_t block = strtoul(argv[i], NULL, 10);
		if (block >= in.len / 64) {
			fprintf(stderr, "fatal: no block %zu\n", block);
			return 128;
		}
		for (int t = 0; t < 16; t++) {
			unsigned char *p = (unsigned char *)in.buf + 64 * block + 4 * t;
			put_be32(p, get_be32(p) ^ d->dm[t]);
		}
	}
	fwrite(in.buf, 1, in.len, stdout);
	strbuf_release(&in);
	return 0;
}

/* ---- blocks ----------------------------------------------------------- */

static int cmd_blocks(int full, int offset)
{
	struct strbuf in = STRBUF_INIT;
	uint32_t ihv[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
	uint32_t *vmasks;
	size_t len, nblocks;
	unsigned char *msg;

	if (strbuf_read_fd(&in, 0, 0) < 0) {
		fprintf(stderr, "fatal: read error\n");
		return 128;
	}
	len = in.len;
	nblocks = (len + 9 + 63) / 64;
	msg = xcalloc(nblocks, 64);
	memcpy(msg, in.buf, len);
	msg[len] = 0x80;
	put_be64(msg + nblocks * 64 - 8, (uint64_t)len << 3);
	vmasks = xcalloc(nblocks, sizeof(*vmasks));
	/* the first chunk is 16 - offset blocks, so block b sits in lane (b + offset) % 16 */
	for (size_t n = 0, next = 16 - (size_t)offset; n < nblocks; n = next, next += 16) {
		next = MIN(next, nblocks);
		sha1dc_filter_blocks(msg + 64 * n, next - n, vmasks + n);
	}
	for (size_t n = 0; n < nblocks; n++) {
		const unsigned char *block = msg + 64 * n;
		uint32_t w[80], mask, found, out[5];
		for (int t = 0; t < 16; t++)
			w[t] = get_be32(block + 4 * t);
		for (int t = 16; t < 80; t++)
			w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
		mask = sha1dc_filter_expanded(w);
		if (mask != vmasks[n]) {
			fprintf(stderr, "fatal: block %zu: the vector filter says %08" PRIx32
				", the scalar one %08" PRIx32 "\n", n, vmasks[n], mask);
			return 128;
		}
		if (full)
			mask = UINT32_MAX;
		found = sha1dc_check_block(ihv, block, mask, out);
		if (mask && !full) {
			printf("block %zu: filter", n);
			print_mask(mask);
			printf("\n");
		}
		if (found) {
			printf("block %zu: collision", n);
			print_mask(found);
			printf("\n");
		}
		memcpy(ihv, out, sizeof(out));
	}
	for (int i = 0; i < 5; i++)
		printf("%08x", ihv[i]);
	printf("\n");
	free(vmasks);
	free(msg);
	strbuf_release(&in);
	return 0;
}

/* ---- the path sampler --------------------------------------------------- */

static const uint32_t sha1_k[4] = { 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6 };

static inline uint32_t sha1_f(int t, uint32_t b, uint32_t c, uint32_t d)
{
	if (t < 20)
		return (b & c) | (~b & d);
	if (t < 40 || t >= 60)
		return b ^ c ^ d;
	return (b & c) | (b & d) | (c & d);
}

/* Q[t + 4] is the a word computed by step t - 1 (Q_t), t = from-4 .. to. */
struct path {
	uint32_t q[85], q2[85];
};

/* Everything of step t's new word but W_t. */
static uint32_t step_sum(int t, const uint32_t *q)
{
	return rotl(q[t + 4], 5) + sha1_f(t, q[t + 3], rotl(q[t + 2], 30), rotl(q[t + 1], 30)) +
	       rotl(q[t], 30) + sha1_k[t / 20];
}

/*
 * Draw w uniformly among the words with ((x + w) ^ (x2 + (w ^ dm))) == want,
 * or return false when there is none: count the completions from each
 * bit position and pair of carries, from the top bit down, then choose
 * bit by bit from the bottom.
 */
static bool draw_w(uint32_t x, uint32_t x2, uint32_t dm, uint32_t want, uint32_t *w)
{
	uint64_t n[33][2][2];
	int c = 0, c2 = 0;

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			n[32][i][j] = 1;
	for (int bit = 31; bit >= 0; bit--) {
		int xb = x >> bit & 1, x2b = x2 >> bit & 1, db = dm >> bit & 1, wb = want >> bit & 1;
		for (int ci = 0; ci < 2; ci++)
			for (int cj = 0; cj < 2; cj++) {
				uint64_t total = 0;
				for (int v = 0; v < 2; v++) {
					int s = xb + v + ci, s2 = x2b + (v ^ db) + cj;
					if (((s ^ s2) & 1) != wb)
						continue;
					total += n[bit + 1][s >> 1][s2 >> 1];
				}
				n[bit][ci][cj] = total;
			}
	}
	if (!n[0][0][0])
		return false;
	*w = 0;
	for (int bit = 0; bit < 32; bit++) {
		int xb = x >> bit & 1, x2b = x2 >> bit & 1, db = dm >> bit & 1, wb = want >> bit & 1;
		uint64_t ways[2] = { 0, 0 };
		int v;
		for (v = 0; v < 2; v++) {
			int s = xb + v + c, s2 = x2b + (v ^ db) + c2;
			if (((s ^ s2) & 1) == wb)
				ways[v] = n[bit + 1][s >> 1][s2 >> 1];
		}
		v = (rnd64() % (ways[0] + ways[1])) >= ways[0];
		*w |= (uint32_t)v << bit;
		{
			int s = xb + v + c, s2 = x2b + (v ^ db) + c2;
			c = s >> 1;
			c2 = s2 >> 1;
		}
	}
	return true;
}

/* One message pair following DV d over steps [from, to): W_t into w. */
static void sample_path(const struct sha1dc_dv *d, int from, int to, uint32_t *w)
{
	struct path p;
	int tries[80];

	for (;;) {
		int t = from;
		for (int s = from - 4; s <= from; s++) {
			p.q[s + 4] = rnd32();
			p.q2[s + 4] = p.q[s + 4] ^ d->dv[s - 1 + 5];
		}
		tries[t] = 0;
		while (t >= from && t < to) {
			uint32_t x, x2;
			if (tries[t]++ >= 16) {
				t--; /* this state leads nowhere often: redraw the step before */
				continue;
			}
			x = step_sum(t, p.q);
			x2 = step_sum(t, p.q2);
			if (!draw_w(x, x2, d->dm[t], d->dv[t + 5], &w[t])) {
				t--;
				continue;
			}
			p.q[t + 5] = x + w[t];
			p.q2[t + 5] = x2 + (w[t] ^ d->dm[t]);
			t++;
			if (t < to)
				tries[t] = 0;
		}
		if (t == to)
			return;
	}
}

/* ---- derive ------------------------------------------------------------- */

struct rel {
	int t1, k1, t2, k2, c;
	int margin;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	if (x->margin != y->margin)
		return y->margin - x->margin;
	if (x->t1 != y->t1)
		return x->t1 - y->t1;
	if (x->k1 != y->k1)
		return x->k1 - y->k1;
	if (x->t2 != y->t2)
		return x->t2 - y->t2;
	return x->k2 - y->k2;
}

static int cmp_group(const void *a, const void *b)
{
	const struct rel *x = a, *y = b;
	int rx = (x->k2 - x->k1) & 31, ry = (y->k2 - y->k1) & 31;
	if (x->t1 != y->t1)
		return x->t1 - y->t1;
	if (x->t2 != y->t2)
		return x->t2 - y->t2;
	return rx - ry;
}

static bool bit_of(const uint32_t *w, int t, int k)
{
	return w[t] >> k & 1;
}

static int cmd_derive(int nsamples, int nconfirm, int per_dv, int from, int to, uint64_t seed)
{
	uint32_t (*w)[80] = xcalloc((size_t)MAX(nsamples, nconfirm), sizeof(*w));
	int max_t = 16;
	char name[16];

	rng_state = seed;
	printf("/*\n"
	       " * sha1dc-ubc.h: the filter's relations, one table for all DVs.\n"
	       " * Generated by `test-tool sha1dc derive --samples %d --confirm %d\n"
	       " * --per-dv %d --from %d --to %d --seed %" PRIu64 "`; do not edit.\n"
	       " *\n"
	       " * UBC_RELATIONS(REL, END) lists, DV by DV, REL(dv, t1, t2, rot, mask,\n"
	       " * expect) and then END(dv). DV dv's relations hold when\n"
	       " * (W_t1 ^ rotr(W_t2, rot) ^ expect) & mask == 0 for all of its\n"
	       " * RELs; a bit k of mask is the relation W_t1[k] ^ W_t2[k + rot] =\n"
	       " * expect[k]. UBC_MAX_T is the last message word they use.\n"
	       " */\n", nsamples, nconfirm, per_dv, from, to, seed);
	printf("#define UBC_RELATIONS(REL, END) \\\n");
	for (int i = 0; i < SHA1DC_NR_DVS; i++) {
		const struct sha1dc_dv *d = sha1dc_dv(i);
		int cand_t[80 * 32], cand_k[80 * 32], nc = 0, nrel = 0, nkept = 0;
		int *cls = xcalloc(80 * 32, sizeof(int));
		bool *flip = xcalloc(80 * 32, sizeof(bool));
		struct rel *rels;

		for (int t = from; t < to; t++)
			for (int k = 0; k < 32; k++)
				if (d->dm[t] >> k & 1) {
					cand_t[nc] = t;
					cand_k[nc++] = k;
				}
		for (int n = 0; n < nsamples; n++)
			sample_path(d, from, to, w[n]);
		/* class representative: the first candidate with the same pattern */
		for (int c = 0; c < nc; c++) {
			cls[c] = c;
			for (int r = 0; r < c && cls[c] == c; r++) {
				bool x0;
				int n;
				if (cls[r] != r)
					continue;
				x0 = bit_of(w[0], cand_t[c], cand_k[c]) ^ bit_of(w[0], cand_t[r], cand_k[r]);
				for (n = 1; n < nsamples; n++)
					if ((bit_of(w[n], cand_t[c], cand_k[c]) ^ bit_of(w[n], cand_t[r], cand_k[r])) != x0)
						break;
				if (n == nsamples) {
					cls[c] = r;
					flip[c] = x0;
				}
			}
		}
		rels = xcalloc((size_t)nc + 1, sizeof(*rels));
		for (int c = 0; c < nc; c++) {
			struct rel *r;
			if (cls[c] == c)
				continue;
			r = &rels[nrel++];
			r->t1 = cand_t[cls[c]];
			r->k1 = cand_k[cls[c]];
			r->t2 = cand_t[c];
			r->k2 = cand_k[c];
			r->c = flip[c];
			r->margin = MIN(r->t1 - from, to - 1 - r->t2);
		}
		/* confirm on fresh samples */
		for (int n = 0; n < nconfirm; n++)
			sample_path(d, from, to, w[n]);
		for (int r = 0; r < nrel; r++) {
			for (int n = 0; n < nconfirm; n++)
				if ((bit_of(w[n], rels[r].t1, rels[r].k1) ^ bit_of(w[n], rels[r].t2, rels[r].k2)) != rels[r].c) {
					rels[r].margin = -1000; /* refuted */
					break;
				}
		}
		qsort(rels, (size_t)nrel, sizeof(*rels), cmp_rel);
		while (nkept < nrel && nkept < per_dv && rels[nkept].margin >= 0)
			nkept++;
		qsort(rels, (size_t)nkept, sizeof(*rels), cmp_group);
		printf("\t/* %s: %d of %d relations */ \\\n", sha1dc_dv_name(i, name), nkept, nrel);
		for (int r = 0; r < nkept;) {
			int rot = (rels[r].k2 - rels[r].k1) & 31;
			uint32_t mask = 0, expect = 0;
			int g = r;
			while (g < nkept && !cmp_group(&rels[g], &rels[r])) {
				mask |= 1u << rels[g].k1;
				expect |= (uint32_t)rels[g].c << rels[g].k1;
				g++;
			}
			printf("\tREL(%d, %d, %d, %d, 0x%08" PRIx32 ", 0x%08" PRIx32 ") \\\n",
			       i, rels[r].t1, rels[r].t2, rot, mask, expect);
			max_t = MAX(max_t, rels[r].t2);
			max_t = MAX(max_t, rels[r].t1);
			r = g;
		}
		printf("\tEND(%d)%s\n", i, i + 1 < SHA1DC_NR_DVS ? " \\" : "");
		free(rels);
		free(cls);
		free(flip);
	}
	printf("\n#define UBC_MAX_T %d\n", max_t);
	free(w);
	return 0;
}

/* ---- sample ------------------------------------------------------------- */

static int cmd_sample(int nsamples, int from, int to, uint64_t seed)
{
	uint32_t w[80];
	int bad = 0;
	char name[16];

	rng_state = seed;
	for (int i = 0; i < SHA1DC_NR_DVS; i++) {
		const struct sha1dc_dv *d = sha1dc_dv(i);
		int missed = 0;
		for (int n = 0; n < nsamples; n++) {
			memset(w, 0, sizeof(w));
			sample_path(d, from, to, w);
			if (!(sha1dc_filter_expanded(w) >> i & 1))
				missed++;
		}
		printf("%s: %d of %d path samples pass\n", sha1dc_dv_name(i, name),
		       nsamples - missed, nsamples);
		if (missed)
			bad = 1;
	}
	return bad;
}

int cmd__sha1dc(int argc, const char **argv)
{
	int nsamples = 256, nconfirm = 1024, per_dv = 12, from = 25, to = 75, full = 0, offset = 0;
	uint64_t seed = 1;
	const char *cmd;

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool sha1dc (dvs | xor-dm | blocks | sample | derive) [options]\n");
		return 129;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "xor-dm"))
		return cmd_xor_dm(argc - 1, argv + 1);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--offset"))
			offset = atoi(argv[++i]) & 15;
		else if (i + 1 < argc && !strcmp(argv[i], "--samples"))
			nsamples = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--confirm"))
			nconfirm = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--per-dv"))
			per_dv = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--from"))
			from = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--to"))
			to = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
			seed = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "test-tool sha1dc: unknown option '%s'\n", argv[i]);
			return 129;
		}
	}
	if (from < 5 || to > 80 || from >= to || nsamples < 2 || nconfirm < 1 || !seed) {
		fprintf(stderr, "test-tool sha1dc: bad options\n");
		return 129;
	}
	if (!strcmp(cmd, "dvs"))
		return cmd_dvs();
	if (!strcmp(cmd, "blocks"))
		return cmd_blocks(full, offset);
	if (!strcmp(cmd, "sample"))
		return cmd_sample(nsamples, from, to, seed);
	if (!strcmp(cmd, "derive"))
		return cmd_derive(nsamples, nconfirm, per_dv, from, to, seed);
	fprintf(stderr, "test-tool sha1dc: unknown command '%s'\n", cmd);
	return 129;
}
