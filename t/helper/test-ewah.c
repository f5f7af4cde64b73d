/*
 * test-ewah.c: test-tool ewah, the self-checks of ewah/ (EWAH and plain
 * bitmaps) and a reader for the EWAHs in .bitmap files that git wrote.
 *
 *   test-tool ewah selftest
 *	hand-computed cases: encodings, edge cases, runs longer than an
 *	RLW holds, corrupt inputs. Prints "ok N checks".
 *   test-tool ewah random [SEED [ROUNDS]]
 *	random bitmaps (seeded, default 1 and 2000): every EWAH operation
 *	checked against the same operation on plain bitmaps, round trips
 *	through serialization, damaged serializations. Prints "ok N checks".
 *   test-tool ewah encode [--limits=RUN,LIT] BIT...
 *	ewah_set() each BIT in turn and print the serialized form in hex:
 *	"<bit size> <word count> <word>... <last RLW position>".
 *   test-tool ewah read FILE | read-hex HEX...
 *	read one serialized EWAH (in place and by copy; hex digits may be
 *	split by spaces) and print "bit-size N", "words W", "popcount P",
 *	"consumed C", then the set bits one a line; or "error: <why>" on
 *	stderr and exit 1.
 *   test-tool ewah bitmap-file [--object-format=ALGO] [--extract=DIR] FILE MODE
 *	read the EWAHs of a .bitmap file (header, the four type bitmaps,
 *	every entry). MODE:
 *	  summary    "entries E", then "commit|tree|blob|tag N" (set bits
 *	             of each type bitmap), "objects N" (their union); fails
 *	             unless the type bitmaps are disjoint and their union
 *	             is exactly the positions 0..N-1
 *	  types      "<pos> <type>" for every position
 *	  entries    per entry, its XOR chain resolved: "<idx pos> <pos>..."
 *	  reencode   whether rebuilding each EWAH with this library gives
 *	             the same bytes: "<type> identical|differs", then
 *	             "entries identical K/N"
 *	--extract=DIR writes each EWAH's bytes to DIR/<type> and
 *	DIR/entry-<n> (fuzz seeds).
 */
#include "../../util.h"
#include "../../strbuf.h"
#include "../../ewah/ewah.h"
#include "test-tool.h"
#include <inttypes.h>

static unsigned long nr_checks, nr_failures;

#define CHECK(cond) check_at(__LINE__, !!(cond), #cond)
#define CHECK_U64(got, want) check_u64_at(__LINE__, (got), (want), #got)

static bool check_at(int line, bool ok, const char *what)
{
	nr_checks++;
	if (!ok) {
		nr_failures++;
		fprintf(stderr, "test-ewah.c:%d: check failed: %s\n", line, what);
	}
	return ok;
}

static bool check_u64_at(int line, uint64_t got, uint64_t want, const char *what)
{
	nr_checks++;
	if (got != want) {
		nr_failures++;
		fprintf(stderr, "test-ewah.c:%d: %s is %" PRIu64 ", want %" PRIu64 "\n",
			line, what, got, want);
		return false;
	}
	return true;
}

static int report(void)
{
	if (nr_failures) {
		fprintf(stderr, "%lu of %lu checks failed\n", nr_failures, nr_checks);
		return 1;
	}
	printf("ok %lu checks\n", nr_checks);
	return 0;
}

/* The current builder limits (ewah_test_set_limits()), 0 for the format's. */
static uint64_t cur_max_run, cur_max_lit;

static void set_limits(uint64_t run, uint64_t lit)
{
	cur_max_run = run;
	cur_max_lit = lit;
	ewah_test_set_limits(run, lit);
}

/* ---- helpers ---------------------------------------------------------- */

/* The serialized form in hex, as "encode" prints it. Caller frees. */
static char *ewah_hex(const struct ewah *e)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = ewah_serialized_size(e), written = 0;
	unsigned char *buf = xmalloc(len);

	if (ewah_serialize(e, buf, len, &written) || written != len) {
		free(buf);
		return xstrdup("(cannot serialize)");
	}
	strbuf_addf(&sb, "%08" PRIx32 " %08" PRIx32, get_be32(buf), get_be32(buf + 4));
	for (size_t word_pos = 0; word_pos < get_be32(buf + 4); word_pos++)
		strbuf_addf(&sb, " %016" PRIx64, get_be64(buf + 8 + 8 * word_pos));
	strbuf_addf(&sb, " %08" PRIx32, get_be32(buf + len - 4));
	free(buf);
	return strbuf_detach(&sb, NULL);
}

/* Hex digits (spaces ignored) to bytes; -1 on a bad digit or odd count. */
static int unhex(const char *hex, struct strbuf *out)
{
	int hi = -1;

	for (; *hex; hex++) {
		int v;
		if (*hex == ' ' || *hex == '\n' || *hex == '\t')
			continue;
		if (*hex >= '0' && *hex <= '9')
			v = *hex - '0';
		else if (*hex >= 'a' && *hex <= 'f')
			v = *hex - 'a' + 10;
		else if (*hex >= 'A' && *hex <= 'F')
			v = *hex - 'A' + 10;
		else
			return -1;
		if (hi < 0) {
			hi = v;
		} else {
			strbuf_addch(out, (char)(hi << 4 | v));
			hi = -1;
		}
	}
	return hi < 0 ? 0 : -1;
}

/*
 * Walk e's chunks independently of the library and check the documented
 * invariants; with canonical, also that the form is what the builders
 * make (no all-zero or all-one literals, runs merged up to the limits).
 */
static bool check_shape_at(int line, const struct ewah *e, bool canonical)
{
	uint64_t cover = 0, last_word = 0, max_run = cur_max_run ? cur_max_run : 0xffffffff;
	size_t word_pos = 0, last_rlw = 0;
	bool prev_open_run = false, prev_bit = false;
	uint64_t prev_run = 0;
	bool ok = true;

#define SHAPE(cond) do { if (!check_at(line, (cond), "shape: " #cond)) ok = false; } while (0)
	if (!e->nr) {
		SHAPE(!e->cover);
		return ok;
	}
	while (word_pos < e->nr) {
		uint64_t rlw = get_be64(e->buf + 8 * word_pos);
		uint64_t run = (rlw >> 1) & 0xffffffff, lit = rlw >> 33;
		bool bit = rlw & 1;

		if (lit > e->nr - word_pos - 1) {
			SHAPE(!"literal count past the end");
			return false;
		}
		if (canonical) {
			/* A run that could have extended the previous chunk's. */
			SHAPE(!(prev_open_run && run && bit == prev_bit && prev_run < max_run));
			SHAPE(run || lit || word_pos == 0);
		}
		for (uint64_t k = 1; k <= lit; k++) {
			uint64_t word = get_be64(e->buf + 8 * (word_pos + k));
			if (canonical)
				SHAPE(word && word != UINT64_MAX);
		}
		cover += run + lit;
		if (lit)
			last_word = get_be64(e->buf + 8 * (word_pos + lit));
		else if (run)
			last_word = bit ? UINT64_MAX : 0;
		prev_open_run = !lit && run;
		prev_bit = bit;
		prev_run = run;
		last_rlw = word_pos;
		word_pos += 1 + lit;
	}
	SHAPE(word_pos == e->nr);
	SHAPE(last_rlw == e->rlw);
	SHAPE(cover == e->cover);
	SHAPE(cover <= e->bit_size / 64 + (e->bit_size % 64 != 0));
	if (cover && cover == e->bit_size / 64 + 1 && e->bit_size % 64)
		SHAPE(!(last_word >> (e->bit_size % 64)));
#undef SHAPE
	return ok;
}

#define check_shape(e, canonical) check_shape_at(__LINE__, (e), (canonical))

/* Every set bit of e, in order; *nr set. Caller frees. */
static uint64_t *ewah_bits(const struct ewah *e, size_t *nr)
{
	struct ewah_iter it;
	uint64_t pos, *bits = NULL;
	size_t alloc = 0;

	*nr = 0;
	ewah_iter_init(&it, e);
	while (ewah_iter_next(&it, &pos)) {
		ALLOC_GROW(bits, *nr + 1, alloc);
		bits[(*nr)++] = pos;
	}
	return bits;
}

/* Check e iterates exactly the bits of b, and agrees on counts. */
static void check_same_bits(int line, const struct ewah *e, const struct bitmap *b)
{
	struct ewah_iter it;
	struct bitmap_iter bit_it;
	uint64_t pos = 0;
	size_t bpos = 0;
	bool ok = true;
	struct bitmap got = BITMAP_INIT;

	ewah_iter_init(&it, e);
	bitmap_iter_init(&bit_it, b);
	for (;;) {
		bool has_e = ewah_iter_next(&it, &pos), has_b = bitmap_iter_next(&bit_it, &bpos);
		if (has_e != has_b || (has_e && pos != bpos)) {
			ok = false;
			break;
		}
		if (!has_e)
			break;
	}
	check_at(line, ok, "ewah iteration matches the plain bitmap");
	check_at(line, ewah_popcount(e) == bitmap_popcount(b), "ewah_popcount matches");
	{
		uint64_t used = 0;
		for (size_t w = b->word_nr; w-- > 0;)
			if (b->words[w]) {
				used = 64 * (uint64_t)w + 64 - (uint64_t)__builtin_clzll(b->words[w]);
				break;
			}
		check_at(line, ewah_bits_used(e) == used, "ewah_bits_used is one past the last set bit");
	}
	check_at(line, !ewah_to_bitmap(&got, e), "ewah_to_bitmap succeeds");
	check_at(line, bitmap_equals(&got, b), "ewah_to_bitmap matches");
	bitmap_release(&got);
}

/*
 * Serialize, read back by copy and in place, and check both equal e and
 * serialize to the same bytes; and that a short buffer is refused.
 */
static void check_round_trip(int line, const struct ewah *e)
{
	size_t len = ewah_serialized_size(e), written = 0, consumed = 0;
	unsigned char *buf = xmalloc(len + 3), *again = xmalloc(len);
	struct ewah copy = EWAH_INIT, view = EWAH_INIT;
	const char *why = NULL;

	memset(buf, 0xa5, len + 3);
	check_at(line, !ewah_serialize(e, buf, len, &written) && written == len,
		 "ewah_serialize");
	check_at(line, ewah_serialize(e, buf, len - 1, &written) == EWAH_EINVAL,
		 "ewah_serialize refuses a short buffer");
	/* Trailing bytes are left alone. */
	check_at(line, !ewah_deserialize(&copy, buf, len + 3, &consumed, &why) &&
		 consumed == len, "ewah_deserialize");
	check_at(line, !ewah_view(&view, buf, len, &consumed, &why) && consumed == len,
		 "ewah_view");
	check_at(line, ewah_equals(&copy, e) && ewah_equals(&view, e), "round trip equals");
	check_at(line, copy.bit_size == e->bit_size && view.bit_size == e->bit_size,
		 "round trip keeps the bit size");
	check_at(line, !ewah_serialize(&view, again, len, &written) &&
		 !memcmp(again, buf, len), "view serializes to the same bytes");
	check_at(line, ewah_deserialize(&copy, buf, len - 1, NULL, &why) == EWAH_ECORRUPT,
		 "a truncated EWAH is refused");
	check_at(line, !copy.nr && !copy.bit_size, "a refused EWAH is left empty");
	ewah_release(&copy);
	ewah_release(&view);
	free(buf);
	free(again);
}

/* An EWAH from a list of bits, with ewah_set(). */
static void ewah_from_bits(struct ewah *e, const uint64_t *bits, size_t nr)
{
	ewah_reset(e);
	for (size_t k = 0; k < nr; k++)
		CHECK(!ewah_set(e, bits[k]));
}

static void check_encoding_at(int line, const uint64_t *bits, size_t nr, const char *want)
{
	struct ewah e = EWAH_INIT;
	char *hex;

	ewah_from_bits(&e, bits, nr);
	hex = ewah_hex(&e);
	if (!check_at(line, !strcmp(hex, want), "encoding"))
		fprintf(stderr, "  got:  %s\n  want: %s\n", hex, want);
	check_shape_at(line, &e, true);
	check_round_trip(line, &e);
	free(hex);
	ewah_release(&e);
}

#define check_encoding(want, ...) do { \
	uint64_t bits_[] = { __VA_ARGS__ }; \
	check_encoding_at(__LINE__, bits_ + 1, ARRAY_SIZE(bits_) - 1, (want)); \
} while (0)

static void bitmap_from_range(struct bitmap *b, size_t from, size_t to)
{
	for (size_t pos = from; pos < to; pos++)
		CHECK(!bitmap_set(b, pos));
}

/* ---- selftest ------------------------------------------------------------ */

static void test_encodings(void)
{
	/* The first value is a placeholder so that the list is never empty. */
	check_encoding("00000000 00000001 0000000000000000 00000000", 0);
	check_encoding("00000001 00000002 0000000200000000 0000000000000001 00000000", 0, 0);
	check_encoding("00000003 00000002 0000000200000000 0000000000000007 00000000",
		       0, 0, 1, 2);
	/* A leading run of one zero word, then a literal. */
	check_encoding("00000041 00000002 0000000200000002 0000000000000001 00000000", 0, 64);
	/* Bit 63 completes word 0: the literal becomes a run of ones. */
	check_encoding("00000040 00000001 0000000000000003 00000000", 0,
		       0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
		       18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
		       33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
		       48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63);
	/* Bit 63 alone: a literal, and the top bit of a word. */
	check_encoding("00000040 00000002 0000000200000000 8000000000000000 00000000", 0, 63);
	/* Literal, run of zeros in a new chunk, literal. */
	check_encoding("000000c2 00000004 0000000200000000 0000000000000001 0000000200000004 0000000000000002 00000002",
		       0, 0, 193);
}

static void test_ones_and_alternating(void)
{
	struct ewah e = EWAH_INIT;
	struct bitmap b = BITMAP_INIT;
	char *hex;

	/* Words 0 and 1 full (one run of two), word 3 with bit 8 (201 bits). */
	for (uint64_t pos = 0; pos < 128; pos++)
		CHECK(!ewah_set(&e, pos));
	CHECK(!ewah_set(&e, 200));
	hex = ewah_hex(&e);
	CHECK(!strcmp(hex, "000000c9 00000003 0000000000000005 0000000200000002 0000000000000100 00000001"));
	free(hex);
	CHECK_U64(ewah_popcount(&e), 129);
	check_shape(&e, true);

	/* Alternating bits over three words: one chunk of three literals. */
	ewah_reset(&e);
	for (uint64_t pos = 0; pos < 192; pos += 2)
		CHECK(!ewah_set(&e, pos));
	hex = ewah_hex(&e);
	CHECK(!strcmp(hex, "000000bf 00000004 0000000600000000 5555555555555555 5555555555555555 5555555555555555 00000000"));
	free(hex);
	CHECK_U64(ewah_popcount(&e), 96);
	for (size_t pos = 0; pos < 192; pos += 2)
		CHECK(!bitmap_set(&b, pos));
	check_same_bits(__LINE__, &e, &b);

	/* The same words compressed from a plain bitmap: bit size 192. */
	CHECK(!bitmap_to_ewah(&e, &b));
	CHECK_U64(ewah_bit_size(&e), 192);
	hex = ewah_hex(&e);
	CHECK(!strcmp(hex, "000000c0 00000004 0000000600000000 5555555555555555 5555555555555555 5555555555555555 00000000"));
	free(hex);

	/* All ones, 1000 bits; NOT within the bit size is empty. */
	ewah_reset(&e);
	bitmap_reset(&b);
	for (uint64_t pos = 0; pos < 1000; pos++)
		CHECK(!ewah_set(&e, pos));
	bitmap_from_range(&b, 0, 1000);
	hex = ewah_hex(&e);
	/* 15 words of ones, then bits 0..39 of word 15. */
	CHECK(!strcmp(hex, "000003e8 00000002 000000020000001f 000000ffffffffff 00000000"));
	free(hex);
	check_same_bits(__LINE__, &e, &b);
	{
		struct ewah not = EWAH_INIT;
		CHECK(!ewah_not(&not, &e));
		CHECK_U64(ewah_popcount(&not), 0);
		CHECK_U64(ewah_bit_size(&not), 1000);
		check_shape(&not, true);
		check_round_trip(__LINE__, &not);
		ewah_release(&not);
	}
	bitmap_release(&b);
	ewah_release(&e);
}

static void test_empty(void)
{
	struct ewah e = EWAH_INIT, f = EWAH_INIT, out = EWAH_INIT;
	struct bitmap b = BITMAP_INIT;
	struct ewah_iter it;
	uint64_t pos;

	CHECK_U64(ewah_popcount(&e), 0);
	ewah_iter_init(&it, &e);
	CHECK(!ewah_iter_next(&it, &pos));
	CHECK(ewah_equals(&e, &f));
	CHECK(!ewah_to_bitmap(&b, &e));
	CHECK(bitmap_is_empty(&b));
	CHECK_U64(b.word_nr, 0);
	CHECK(!ewah_or(&out, &e, &f));
	CHECK_U64(ewah_popcount(&out), 0);
	CHECK(!ewah_and(&out, &e, &f));
	CHECK(!ewah_xor(&out, &e, &f));
	CHECK(!ewah_and_not(&out, &e, &f));
	CHECK_U64(ewah_popcount(&out), 0);
	CHECK(!ewah_not(&out, &e));
	CHECK_U64(ewah_popcount(&out), 0);
	CHECK_U64(ewah_bit_size(&out), 0);
	check_round_trip(__LINE__, &e);
	/* An empty plain bitmap compresses to the empty EWAH. */
	CHECK(!bitmap_to_ewah(&out, &b));
	CHECK(!out.nr && !out.bit_size);
	/* Empty with a bit size: NOT is all ones. */
	CHECK(!ewah_append_run(&f, false, 3));
	CHECK_U64(ewah_bit_size(&f), 192);
	CHECK_U64(ewah_popcount(&f), 0);
	CHECK(ewah_equals(&e, &f));
	CHECK(!ewah_not(&out, &f));
	CHECK_U64(ewah_popcount(&out), 192);
	check_round_trip(__LINE__, &f);
	check_round_trip(__LINE__, &out);
	/* AND with an empty EWAH ends early; OR copies. */
	CHECK(!ewah_and(&e, &out, &f));
	CHECK_U64(ewah_popcount(&e), 0);
	CHECK(!ewah_or(&e, &out, &f));
	CHECK_U64(ewah_popcount(&e), 192);
	/* The output may not be an input. */
	CHECK(ewah_or(&e, &e, &f) == EWAH_EINVAL);
	CHECK(ewah_not(&e, &e) == EWAH_EINVAL);
	bitmap_release(&b);
	ewah_release(&e);
	ewah_release(&f);
	ewah_release(&out);
}

static void test_set_errors(void)
{
	struct ewah e = EWAH_INIT;
	char *hex;

	CHECK(!ewah_set(&e, 10));
	CHECK(ewah_set(&e, 10) == EWAH_EINVAL);
	CHECK(ewah_set(&e, 3) == EWAH_EINVAL);
	CHECK(ewah_set(&e, EWAH_MAX_BITS) == EWAH_ETOOBIG);
	CHECK(!ewah_set(&e, 11));
	hex = ewah_hex(&e);
	CHECK(!strcmp(hex, "0000000c 00000002 0000000200000000 0000000000000c00 00000000"));
	free(hex);
	/* Appending words rounds the bit size up first. */
	CHECK(!ewah_append_word(&e, 0xf0));
	CHECK_U64(ewah_bit_size(&e), 128);
	CHECK(!ewah_append_run(&e, true, 2));
	CHECK_U64(ewah_bit_size(&e), 256);
	CHECK_U64(ewah_popcount(&e), 2 + 4 + 128);
	check_shape(&e, true);
	/* A bit in a word past a run of ones. */
	CHECK(!ewah_set(&e, 300));
	CHECK_U64(ewah_popcount(&e), 135);
	check_shape(&e, true);
	check_round_trip(__LINE__, &e);
	ewah_release(&e);
}

static void test_hand_ops(void)
{
	struct ewah a = EWAH_INIT, b = EWAH_INIT, out = EWAH_INIT;
	struct bitmap pa = BITMAP_INIT, pb = BITMAP_INIT, tmp = BITMAP_INIT;

	/* a = {0..9, 100, 200..300}, b = {5..150} */
	for (uint64_t pos = 0; pos < 10; pos++)
		CHECK(!ewah_set(&a, pos));
	CHECK(!ewah_set(&a, 100));
	for (uint64_t pos = 200; pos <= 300; pos++)
		CHECK(!ewah_set(&a, pos));
	for (uint64_t pos = 5; pos <= 150; pos++)
		CHECK(!ewah_set(&b, pos));
	CHECK(!ewah_to_bitmap(&pa, &a));
	CHECK(!ewah_to_bitmap(&pb, &b));

	CHECK(!ewah_and(&out, &a, &b));
	CHECK_U64(ewah_popcount(&out), 6);
	CHECK_U64(ewah_bit_size(&out), 301);
	CHECK(!ewah_or(&out, &a, &b));
	CHECK_U64(ewah_popcount(&out), 252);
	CHECK(!ewah_xor(&out, &a, &b));
	CHECK_U64(ewah_popcount(&out), 246);
	CHECK(!ewah_and_not(&out, &a, &b));
	CHECK_U64(ewah_popcount(&out), 106);
	CHECK(!ewah_and_not(&out, &b, &a));
	CHECK_U64(ewah_popcount(&out), 140);
	check_shape(&out, true);
	CHECK(!ewah_not(&out, &b));
	CHECK_U64(ewah_popcount(&out), 5);
	CHECK_U64(ewah_bit_size(&out), 151);

	/* The same with plain bitmaps, and mixed. */
	CHECK(!bitmap_copy(&tmp, &pa));
	bitmap_and(&tmp, &pb);
	CHECK_U64(bitmap_popcount(&tmp), 6);
	CHECK(!bitmap_copy(&tmp, &pa));
	CHECK(!bitmap_or(&tmp, &pb));
	CHECK_U64(bitmap_popcount(&tmp), 252);
	CHECK(!bitmap_copy(&tmp, &pa));
	CHECK(!bitmap_xor(&tmp, &pb));
	CHECK_U64(bitmap_popcount(&tmp), 246);
	CHECK(!bitmap_copy(&tmp, &pa));
	bitmap_and_not(&tmp, &pb);
	CHECK_U64(bitmap_popcount(&tmp), 106);
	CHECK(!bitmap_copy(&tmp, &pb));
	bitmap_and_not_ewah(&tmp, &a);
	CHECK_U64(bitmap_popcount(&tmp), 140);
	CHECK(!bitmap_copy(&tmp, &pb));
	bitmap_and_ewah(&tmp, &a);
	CHECK_U64(bitmap_popcount(&tmp), 6);
	CHECK(!bitmap_copy(&tmp, &pb));
	CHECK(!bitmap_or_ewah(&tmp, &a));
	CHECK_U64(bitmap_popcount(&tmp), 252);
	CHECK(!bitmap_copy(&tmp, &pb));
	CHECK(!bitmap_xor_ewah(&tmp, &a));
	CHECK_U64(bitmap_popcount(&tmp), 246);

	/* Plain bitmap basics. */
	bitmap_reset(&tmp);
	CHECK(!bitmap_get(&tmp, 5));
	CHECK(!bitmap_set(&tmp, 5));
	CHECK(!bitmap_set(&tmp, 1000));
	CHECK(bitmap_get(&tmp, 5) && bitmap_get(&tmp, 1000) && !bitmap_get(&tmp, 999));
	CHECK(!bitmap_get(&tmp, 100000));
	bitmap_unset(&tmp, 1000);
	bitmap_unset(&tmp, 100000);
	CHECK(!bitmap_get(&tmp, 1000));
	CHECK_U64(bitmap_popcount(&tmp), 1);
	CHECK_U64(tmp.word_nr, 16);
	bitmap_reset(&pa);
	CHECK(!bitmap_set(&pa, 5));
	CHECK(bitmap_equals(&tmp, &pa) && bitmap_equals(&pa, &tmp));
	CHECK(!bitmap_set(&pa, 6));
	CHECK(!bitmap_equals(&tmp, &pa));
	CHECK(!bitmap_xor(&tmp, &tmp));
	CHECK(bitmap_is_empty(&tmp));

	bitmap_release(&pa);
	bitmap_release(&pb);
	bitmap_release(&tmp);
	ewah_release(&a);
	ewah_release(&b);
	ewah_release(&out);
}

/*
 * Runs longer than one RLW holds (2^32-1 words): these bitmaps cannot be
 * serialized (the bit size field is 32 bits) but live in memory.
 */
static void test_long_runs(void)
{
	struct ewah e = EWAH_INIT, f = EWAH_INIT, out = EWAH_INIT;
	uint64_t max_run = 0xffffffff;
	uint64_t far = 64 * (((uint64_t)1 << 32) + 10) + 5;
	uint64_t f_words = ((uint64_t)1 << 33) + 7;
	unsigned char buf[64];
	size_t written, nr;
	uint64_t *bits;
	struct ewah_iter it;
	uint64_t pos;

	CHECK(!ewah_set(&e, 3));
	CHECK(!ewah_set(&e, far));
	/* rlw(lit 1) 8, rlw(zeros 2^32-1), rlw(zeros 10, lit 1) 1<<5 */
	CHECK_U64(e.nr, 5);
	CHECK_U64(e.rlw, 3);
	if (e.nr == 5) {
		CHECK_U64(get_be64(e.buf), (uint64_t)1 << 33);
		CHECK_U64(get_be64(e.buf + 8), 8);
		CHECK_U64(get_be64(e.buf + 16), max_run << 1);
		CHECK_U64(get_be64(e.buf + 24), (uint64_t)1 << 33 | 10 << 1);
		CHECK_U64(get_be64(e.buf + 32), 1 << 5);
	}
	CHECK_U64(ewah_bit_size(&e), far + 1);
	CHECK_U64(ewah_popcount(&e), 2);
	bits = ewah_bits(&e, &nr);
	CHECK(nr == 2 && bits[0] == 3 && bits[1] == far);
	free(bits);
	check_shape(&e, true);
	CHECK(ewah_serialize(&e, buf, sizeof(buf), &written) == EWAH_ETOOBIG);

	/* A run of ones of 2^33+7 words: three RLWs. */
	CHECK(!ewah_append_run(&f, true, f_words));
	CHECK_U64(f.nr, 3);
	if (f.nr == 3) {
		CHECK_U64(get_be64(f.buf), max_run << 1 | 1);
		CHECK_U64(get_be64(f.buf + 8), max_run << 1 | 1);
		CHECK_U64(get_be64(f.buf + 16), 9 << 1 | 1);
	}
	CHECK_U64(ewah_popcount(&f), 64 * f_words);
	check_shape(&f, true);

	/* e is inside f. */
	CHECK(!ewah_or(&out, &e, &f));
	CHECK(ewah_equals(&out, &f));
	CHECK_U64(ewah_popcount(&out), 64 * f_words);
	check_shape(&out, true);
	CHECK(!ewah_and(&out, &e, &f));
	CHECK(ewah_equals(&out, &e));
	check_shape(&out, true);
	CHECK(!ewah_xor(&out, &f, &e));
	CHECK_U64(ewah_popcount(&out), 64 * f_words - 2);
	check_shape(&out, true);
	CHECK(!ewah_and_not(&out, &f, &e));
	CHECK_U64(ewah_popcount(&out), 64 * f_words - 2);
	CHECK(!ewah_and_not(&out, &e, &f));
	CHECK_U64(ewah_popcount(&out), 0);
	CHECK(!ewah_equals(&e, &f));

	/* NOT of e: every bit below far + 1 but two. */
	CHECK(!ewah_not(&out, &e));
	CHECK_U64(ewah_popcount(&out), far + 1 - 2);
	CHECK(out.nr < 16);
	check_shape(&out, true);
	ewah_iter_init(&it, &out);
	for (uint64_t want = 0; want < 6; want++) {
		if (want == 3)
			continue;
		CHECK(ewah_iter_next(&it, &pos) && pos == want);
	}
	/* NOT of the ones: nothing, however long. */
	CHECK(!ewah_not(&out, &f));
	CHECK_U64(ewah_popcount(&out), 0);
	CHECK(ewah_equals(&out, &e) == false);

	/* Iterating skips the long run of zeros at once. */
	ewah_reset(&out);
	CHECK(!ewah_set(&out, ((uint64_t)1 << 61) + 17));
	ewah_iter_init(&it, &out);
	CHECK(ewah_iter_next(&it, &pos) && pos == ((uint64_t)1 << 61) + 17);
	CHECK(!ewah_iter_next(&it, &pos));

	/* A plain bitmap takes e's zero run as a skip. */
	{
		struct bitmap b = BITMAP_INIT;
		CHECK(!bitmap_set(&b, 3));
		CHECK(!bitmap_set(&b, 70));
		bitmap_and_ewah(&b, &e);
		CHECK_U64(bitmap_popcount(&b), 1);
		bitmap_and_not_ewah(&b, &f);
		CHECK(bitmap_is_empty(&b));
		bitmap_release(&b);
	}
	ewah_release(&e);
	ewah_release(&f);
	ewah_release(&out);
}

/* Small builder limits: the splitting paths, with exact encodings. */
static void test_split_limits(void)
{
	struct ewah e = EWAH_INIT, f = EWAH_INIT, out = EWAH_INIT;
	char *hex;

	set_limits(3, 2);
	/* Literals in words 0..4, zeros in 5..14, a literal in 15. */
	for (uint64_t word_pos = 0; word_pos < 5; word_pos++)
		CHECK(!ewah_set(&e, 64 * word_pos + word_pos));
	CHECK(!ewah_set(&e, 64 * 15 + 1));
	hex = ewah_hex(&e);
	CHECK(!strcmp(hex, "000003c2 0000000d"
		      " 0000000400000000 0000000000000001 0000000000000002"
		      " 0000000400000000 0000000000000004 0000000000000008"
		      " 0000000200000000 0000000000000010"
		      " 0000000000000006 0000000000000006 0000000000000006"
		      " 0000000200000002 0000000000000002 0000000b"));
	free(hex);
	check_shape(&e, true);
	check_round_trip(__LINE__, &e);

	/* Runs of ones split too, and merge back through operations. */
	CHECK(!ewah_append_run(&f, true, 7));
	hex = ewah_hex(&f);
	CHECK(!strcmp(hex, "000001c0 00000003 0000000000000007 0000000000000007 0000000000000003 00000002"));
	free(hex);
	CHECK(!ewah_xor(&out, &e, &f));
	CHECK_U64(ewah_popcount(&out), 7 * 64 - 5 + 1);
	check_shape(&out, true);
	check_round_trip(__LINE__, &out);

	set_limits(0, 0);
	/* Read with the format's limits, the split form means the same. */
	CHECK(!ewah_copy(&out, &e));
	CHECK(ewah_equals(&out, &e));
	ewah_release(&e);
	ewah_release(&f);
	ewah_release(&out);
}

struct corrupt_case {
	const char *hex;
	const char *why; /* NULL: valid */
	int consumed;
};

static const struct corrupt_case corrupt_cases[] = {
	{ "", "truncated EWAH header", 0 },
	{ "00000000 00000001 0000000000000000 000000", "EWAH word count exceeds the buffer", 0 },
	{ "00000000 00000001 00000000", "EWAH word count exceeds the buffer", 0 },
	{ "00000040 00000002 0000000200000000 0000000000000001 000000",
	  "EWAH word count exceeds the buffer", 0 },
	{ "00000000 ffffffff 00000000", "EWAH word count exceeds the buffer", 0 },
	{ "00000000 00000000 00000000", "EWAH has no run-length word", 0 },
	{ "00000000 00000001 0000000000000000 00000001",
	  "EWAH last run-length word position out of range", 0 },
	{ "00000040 00000001 0000000200000000 00000000",
	  "EWAH literal word count exceeds the words left", 0 },
	{ "00000040 00000002 fffffffe00000000 0000000000000001 00000000",
	  "EWAH literal word count exceeds the words left", 0 },
	{ "00000040 00000001 0000000000000004 00000000",
	  "EWAH words describe more bits than its bit size", 0 },
	{ "00000000 00000002 0000000200000000 0000000000000001 00000000",
	  "EWAH words describe more bits than its bit size", 0 },
	{ "00000040 00000001 00000001fffffffe 00000000",
	  "EWAH words describe more bits than its bit size", 0 },
	{ "00000040 00000002 0000000000000000 0000000200000000 00000000",
	  "EWAH literal word count exceeds the words left", 0 },
	{ "00000040 00000003 0000000000000000 0000000200000000 0000000000000001 00000000",
	  "EWAH last run-length word position is not the last run-length word", 0 },
	{ "00000003 00000002 0000000200000000 0000000000000008 00000000",
	  "EWAH has bits set past its bit size", 0 },
	{ "00000003 00000001 0000000000000003 00000000",
	  "EWAH has bits set past its bit size", 0 },
	/* Valid: git's empty bitmap; trailing bytes; fewer words than the bit size. */
	{ "00000000 00000001 0000000000000000 00000000 ffff", NULL, 20 },
	{ "00000100 00000002 0000000200000000 0000000000000005 00000000", NULL, 28 },
	/* A trailing run of zero words, as git's compressed bitmaps can end. */
	{ "00000100 00000003 0000000200000000 0000000000000005 0000000000000006 00000002", NULL, 36 },
	/* Zero bits past the bit size in the last literal, an empty RLW. */
	{ "00000045 00000003 0000000400000000 0000000000000001 000000000000001f 00000000", NULL, 36 },
	{ "00000040 00000002 0000000000000003 0000000000000000 00000001", NULL, 28 },
};

static void test_corrupt(void)
{
	for (size_t k = 0; k < ARRAY_SIZE(corrupt_cases); k++) {
		const struct corrupt_case *c = &corrupt_cases[k];
		struct strbuf bytes = STRBUF_INIT;
		struct ewah copy = EWAH_INIT, view = EWAH_INIT;
		const char *why = NULL, *why_view = NULL;
		size_t consumed = 0, consumed_view = 0;
		unsigned char *exact;
		int ret, ret_view;

		CHECK(!unhex(c->hex, &bytes));
		/* An exact-size copy, so that ASan sees any over-read. */
		exact = xmalloc(bytes.len ? bytes.len : 1);
		memcpy(exact, bytes.buf, bytes.len);
		ret = ewah_deserialize(&copy, exact, bytes.len, &consumed, &why);
		ret_view = ewah_view(&view, exact, bytes.len, &consumed_view, &why_view);
		if (c->why) {
			if (!CHECK(ret == EWAH_ECORRUPT && ret_view == EWAH_ECORRUPT) ||
			    !CHECK(why && !strcmp(why, c->why) && why_view == why))
				fprintf(stderr, "  case %zu: %d %s\n", k, ret, why ? why : "(no message)");
			CHECK(!copy.nr && !view.nr);
		} else {
			if (!CHECK(!ret && !ret_view))
				fprintf(stderr, "  case %zu: %s\n", k, why ? why : "(no message)");
			CHECK(consumed == (size_t)c->consumed && consumed_view == consumed);
			check_shape(&copy, false);
			CHECK(ewah_equals(&copy, &view));
			check_round_trip(__LINE__, &view);
		}
		ewah_release(&copy);
		ewah_release(&view);
		free(exact);
		strbuf_release(&bytes);
	}
}

static int write_all(void *data, const void *buf, size_t len)
{
	strbuf_add(data, buf, len);
	return 0;
}

/* Fails once something was written. */
static int write_fail(void *data, const void *buf, size_t len)
{
	struct strbuf *sb = data;
	if (sb->len)
		return -77;
	strbuf_add(sb, buf, len);
	return 0;
}

static void test_views_and_io(void)
{
	static const char *hex = "000000c9 00000003 0000000000000005 0000000200000002 0000000000000100 00000001";
	struct strbuf bytes = STRBUF_INIT, sb = STRBUF_INIT;
	struct ewah view = EWAH_INIT, copy = EWAH_INIT, out = EWAH_INIT;
	unsigned char *saved;

	CHECK(!unhex(hex, &bytes));
	saved = xmemdup(bytes.buf, bytes.len);
	CHECK(!ewah_view(&view, bytes.buf, bytes.len, NULL, NULL));
	CHECK(view.borrowed);
	CHECK_U64(ewah_popcount(&view), 129);
	/* Operations read views; appending copies first. */
	CHECK(!ewah_or(&out, &view, &view));
	CHECK(ewah_equals(&out, &view));
	CHECK(!ewah_set(&view, 201));
	CHECK(!view.borrowed);
	CHECK(!memcmp(saved, bytes.buf, bytes.len));
	CHECK_U64(ewah_popcount(&view), 130);
	check_shape(&view, true);
	CHECK(!ewah_view(&view, bytes.buf, bytes.len, NULL, NULL));
	CHECK(!ewah_copy(&copy, &view));
	CHECK(!copy.borrowed && ewah_equals(&copy, &view));
	CHECK(!ewah_append_word(&view, 0x10));
	CHECK(!memcmp(saved, bytes.buf, bytes.len));
	CHECK_U64(ewah_bit_size(&view), 320);

	/* Through a callback: the same bytes; a failure comes back as is. */
	CHECK(!ewah_serialize_to(&copy, write_all, &sb));
	CHECK(sb.len == bytes.len && !memcmp(sb.buf, bytes.buf, bytes.len));
	strbuf_reset(&sb);
	CHECK(ewah_serialize_to(&copy, write_fail, &sb) == -77);
	CHECK_U64(sb.len, 8);

	CHECK(!strcmp(ewah_strerror(EWAH_ECORRUPT), "corrupt EWAH bitmap"));
	free(saved);
	strbuf_release(&bytes);
	strbuf_release(&sb);
	ewah_release(&view);
	ewah_release(&copy);
	ewah_release(&out);
}

static int cmd_selftest(void)
{
	test_encodings();
	test_ones_and_alternating();
	test_empty();
	test_set_errors();
	test_hand_ops();
	test_long_runs();
	test_split_limits();
	test_corrupt();
	test_views_and_io();
	return report();
}

/* ---- random cross-checks --------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* A plain bitmap of runs, literals, sparse and dense words. */
static void random_bitmap(struct bitmap *b, size_t max_words)
{
	size_t words = (size_t)rnd_below(max_words + 1), word_pos = 0;

	bitmap_reset(b);
	if (!words)
		return;
	CHECK(!bitmap_grow(b, words));
	while (word_pos < words) {
		size_t len = 1 + (size_t)rnd_below(rnd_below(4) ? 4 : 40);
		unsigned kind = (unsigned)rnd_below(7);

		for (size_t k = 0; k < len && word_pos < words; k++, word_pos++) {
			uint64_t word = 0;
			switch (kind) {
			case 0: word = 0; break;
			case 1: word = UINT64_MAX; break;
			case 2: word = rnd(); break;
			case 3: word = (uint64_t)1 << rnd_below(64); break;
			case 4: word = ~((uint64_t)1 << rnd_below(64)); break;
			case 5: word = rnd_below(2) ? 0x5555555555555555ULL : 0xaaaaaaaaaaaaaaaaULL; break;
			case 6: word = rnd() & rnd() & rnd(); break;
			}
			b->words[word_pos] = word;
		}
	}
	/* Sometimes a partial last word. */
	if (rnd_below(2)) {
		unsigned keep = (unsigned)rnd_below(64);
		if (keep)
			b->words[words - 1] &= ((uint64_t)1 << keep) - 1;
	}
}

/* e from b's bits with ewah_set(). */
static void ewah_from_bitmap_bits(struct ewah *e, const struct bitmap *b)
{
	struct bitmap_iter it;
	size_t pos;

	ewah_reset(e);
	bitmap_iter_init(&it, b);
	while (bitmap_iter_next(&it, &pos))
		if (!CHECK(!ewah_set(e, pos)))
			break;
}

/* The bits below bit_size, as a plain bitmap. */
static void ones_below(struct bitmap *b, uint64_t bit_size)
{
	bitmap_reset(b);
	if (!bit_size)
		return;
	CHECK(!bitmap_grow(b, (size_t)((bit_size + 63) / 64)));
	for (size_t word_pos = 0; word_pos < bit_size / 64; word_pos++)
		b->words[word_pos] = UINT64_MAX;
	if (bit_size % 64)
		b->words[bit_size / 64] = ((uint64_t)1 << (bit_size % 64)) - 1;
}

typedef int (*ewah_op_fn)(struct ewah *, const struct ewah *, const struct ewah *);

static void check_ops(int line, const struct ewah *ea, const struct ewah *eb,
		      const struct bitmap *pa, const struct bitmap *pb)
{
	static const struct { const char *name; ewah_op_fn fn; } ops[] = {
		{ "or", ewah_or }, { "and", ewah_and },
		{ "and-not", ewah_and_not }, { "xor", ewah_xor },
	};
	struct ewah out = EWAH_INIT;
	struct bitmap want = BITMAP_INIT, mixed = BITMAP_INIT;
	uint64_t bit_size = ea->bit_size > eb->bit_size ? ea->bit_size : eb->bit_size;

	for (size_t k = 0; k < ARRAY_SIZE(ops); k++) {
		CHECK(!bitmap_copy(&want, pa));
		CHECK(!bitmap_copy(&mixed, pa));
		switch (k) {
		case 0:
			CHECK(!bitmap_or(&want, pb));
			CHECK(!bitmap_or_ewah(&mixed, eb));
			break;
		case 1:
			bitmap_and(&want, pb);
			bitmap_and_ewah(&mixed, eb);
			break;
		case 2:
			bitmap_and_not(&want, pb);
			bitmap_and_not_ewah(&mixed, eb);
			break;
		case 3:
			CHECK(!bitmap_xor(&want, pb));
			CHECK(!bitmap_xor_ewah(&mixed, eb));
			break;
		}
		if (!check_at(line, !ops[k].fn(&out, ea, eb), ops[k].name))
			continue;
		check_same_bits(line, &out, &want);
		check_at(line, bitmap_equals(&mixed, &want), "plain-with-ewah op matches");
		check_at(line, out.bit_size == bit_size, "op bit size");
		check_shape_at(line, &out, true);
		if (bit_size <= EWAH_MAX_DISK_BITS)
			check_round_trip(line, &out);
	}
	/* NOT within a's bit size. */
	ones_below(&want, ea->bit_size);
	CHECK(!bitmap_xor(&want, pa));
	if (check_at(line, !ewah_not(&out, ea), "not")) {
		check_same_bits(line, &out, &want);
		check_at(line, out.bit_size == ea->bit_size, "not bit size");
		check_shape_at(line, &out, true);
	}
	check_at(line, ewah_equals(ea, eb) == bitmap_equals(pa, pb), "ewah_equals");
	bitmap_release(&want);
	bitmap_release(&mixed);
	ewah_release(&out);
}

/*
 * Damage the serialized form of e (flip a byte, cut the end, or grow a
 * count) and read it back: refused as corrupt, or accepted and then
 * consistent in every way the library can be asked.
 */
static void check_damaged(const struct ewah *e, const struct bitmap *pe)
{
	size_t len = ewah_serialized_size(e), cut = len;
	unsigned char *buf = xmalloc(len);
	struct ewah got = EWAH_INIT, out = EWAH_INIT;
	const char *why = NULL;
	int ret;

	CHECK(!ewah_serialize(e, buf, len, NULL));
	switch (rnd_below(3)) {
	case 0:
		buf[rnd_below(len)] ^= (unsigned char)(1 + rnd_below(255));
		break;
	case 1:
		cut = (size_t)rnd_below(len);
		break;
	case 2: {
		/* A word's byte at the RLW fields' boundary. */
		size_t word_pos = (size_t)rnd_below(len > 12 ? (len - 12) / 8 : 1);
		buf[8 + 8 * word_pos + rnd_below(8)] ^= (unsigned char)(1 << rnd_below(8));
		break;
	}
	}
	ret = ewah_deserialize(&got, buf, cut, NULL, &why);
	if (ret) {
		CHECK(ret == EWAH_ECORRUPT && why && *why);
	} else if (got.bit_size <= 64 * 4096) {
		struct bitmap plain = BITMAP_INIT;
		check_shape(&got, false);
		CHECK(!ewah_to_bitmap(&plain, &got));
		check_same_bits(__LINE__, &got, &plain);
		check_ops(__LINE__, &got, e, &plain, pe);
		check_ops(__LINE__, e, &got, pe, &plain);
		CHECK(!ewah_xor(&out, &got, &got));
		CHECK_U64(ewah_popcount(&out), 0);
		bitmap_release(&plain);
	}
	ewah_release(&got);
	ewah_release(&out);
	free(buf);
}

static int cmd_random(int argc, const char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 0) : 2000;
	struct bitmap pa = BITMAP_INIT, pb = BITMAP_INIT, back = BITMAP_INIT;
	struct ewah a1 = EWAH_INIT, a2 = EWAH_INIT, b1 = EWAH_INIT, b2 = EWAH_INIT;

	rng_state = seed;
	for (unsigned long round = 0; round < rounds && !nr_failures; round++) {
		size_t max_words = rnd_below(4) ? 8 : 200;

		if (rnd_below(2))
			set_limits(1 + rnd_below(4), 1 + rnd_below(3));
		else
			set_limits(0, 0);
		random_bitmap(&pa, max_words);
		random_bitmap(&pb, rnd_below(3) ? max_words : 2);

		/* Two ways in: bit by bit, and from the plain words. */
		ewah_from_bitmap_bits(&a1, &pa);
		ewah_from_bitmap_bits(&b1, &pb);
		CHECK(!bitmap_to_ewah(&a2, &pa));
		CHECK(!bitmap_to_ewah(&b2, &pb));
		CHECK_U64(a2.bit_size, 64 * (uint64_t)pa.word_nr);
		check_shape(&a1, true);
		check_shape(&a2, true);
		check_same_bits(__LINE__, &a1, &pa);
		check_same_bits(__LINE__, &a2, &pa);
		check_same_bits(__LINE__, &b1, &pb);
		CHECK(ewah_equals(&a1, &a2));
		CHECK(!ewah_to_bitmap(&back, &a2));
		CHECK(bitmap_equals(&back, &pa));
		check_round_trip(__LINE__, &a1);
		check_round_trip(__LINE__, &a2);

		check_ops(__LINE__, &a1, &b1, &pa, &pb);
		check_ops(__LINE__, &a2, &b1, &pa, &pb);
		check_ops(__LINE__, &b2, &a1, &pb, &pa);
		check_ops(__LINE__, &a1, &a2, &pa, &pa);
		if (rnd_below(2))
			check_damaged(&a1, &pa);
		else
			check_damaged(&b2, &pb);
	}
	set_limits(0, 0);
	bitmap_release(&pa);
	bitmap_release(&pb);
	bitmap_release(&back);
	ewah_release(&a1);
	ewah_release(&a2);
	ewah_release(&b1);
	ewah_release(&b2);
	return report();
}

/* ---- encode, read ---------------------------------------------------- */

static int cmd_encode(int argc, const char **argv)
{
	struct ewah e = EWAH_INIT;
	const char *val;
	char *hex;
	int ret = 0;

	for (int k = 1; k < argc; k++) {
		uint64_t run, lit;
		char *end;
		if (skip_prefix(argv[k], "--limits=", &val)) {
			run = strtoull(val, &end, 0);
			lit = *end == ',' ? strtoull(end + 1, NULL, 0) : 0;
			set_limits(run, lit);
			continue;
		}
		ret = ewah_set(&e, strtoull(argv[k], NULL, 0));
		if (ret) {
			fprintf(stderr, "error: ewah_set(%s): %s\n", argv[k], ewah_strerror(ret));
			ewah_release(&e);
			return 1;
		}
	}
	hex = ewah_hex(&e);
	printf("%s\n", hex);
	free(hex);
	ewah_release(&e);
	return 0;
}

static int read_ewah(const unsigned char *buf, size_t len)
{
	struct ewah view = EWAH_INIT, copy = EWAH_INIT;
	const char *why = NULL;
	size_t consumed = 0, copy_consumed = 0;
	struct ewah_iter it;
	uint64_t pos;
	int ret;

	ret = ewah_view(&view, buf, len, &consumed, &why);
	if (ret) {
		fprintf(stderr, "error: %s\n", why ? why : ewah_strerror(ret));
		return 1;
	}
	ret = ewah_deserialize(&copy, buf, len, &copy_consumed, &why);
	if (ret || copy_consumed != consumed || !ewah_equals(&copy, &view)) {
		fprintf(stderr, "BUG: ewah_deserialize disagrees with ewah_view\n");
		ewah_release(&copy);
		return 2;
	}
	printf("bit-size %" PRIu64 "\nwords %zu\npopcount %" PRIu64 "\nconsumed %zu\n",
	       ewah_bit_size(&view), ewah_word_nr(&view), ewah_popcount(&view), consumed);
	ewah_iter_init(&it, &view);
	while (ewah_iter_next(&it, &pos))
		printf("%" PRIu64 "\n", pos);
	ewah_release(&view);
	ewah_release(&copy);
	return 0;
}

static int cmd_read(int argc, const char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char *exact;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool ewah read FILE | read-hex HEX...\n");
		return 129;
	}
	if (!strcmp(argv[0], "read-hex")) {
		for (int k = 1; k < argc; k++)
			if (unhex(argv[k], &sb)) {
				fprintf(stderr, "error: bad hex '%s'\n", argv[k]);
				return 129;
			}
	} else if (strbuf_read_file(&sb, argv[1], 0) < 0) {
		fprintf(stderr, "error: cannot read %s\n", argv[1]);
		return 1;
	}
	/* An exact-size copy, so that a sanitizer sees any over-read. */
	exact = xmalloc(sb.len ? sb.len : 1);
	memcpy(exact, sb.buf, sb.len);
	ret = read_ewah(exact, sb.len);
	free(exact);
	strbuf_release(&sb);
	return ret;
}

/* ---- .bitmap files ------------------------------------------------------- */

/*
 * Just enough of Documentation/technical/bitmap-format to reach every
 * EWAH. NEEDSWORK: read through pack-bitmap.h once that module exists,
 * which will own these constants.
 */

#define BITMAP_SIGNATURE "BITM"
#define BITMAP_HEADER_SIZE 12 /* "BITM", version, flags, entry count */
#define BITMAP_MAX_XOR_OFFSET 160

static const char *type_names[4] = { "commit", "tree", "blob", "tag" };

struct bitmap_entry {
	uint32_t idx_pos;
	unsigned xor_offset, flags;
	struct ewah ewah; /* borrowed from the file */
	size_t ofs, len;
};

struct bitmap_file {
	struct strbuf data;
	struct ewah types[4];
	size_t type_ofs[4], type_len[4];
	struct bitmap_entry *entries;
	uint32_t nr_entries;
};

static int bad_file(const char *path, size_t ofs, const char *what)
{
	fprintf(stderr, "error: %s: offset %zu: %s\n", path, ofs, what);
	return -1;
}

static int read_one(const char *path, const struct strbuf *data, size_t *ofs,
		    struct ewah *e, size_t *len)
{
	const char *why = NULL;

	if (ewah_view(e, data->buf + *ofs, data->len - *ofs, len, &why))
		return bad_file(path, *ofs, why);
	*ofs += *len;
	return 0;
}

static int bitmap_file_read(struct bitmap_file *f, const char *path, size_t rawsz)
{
	size_t ofs = BITMAP_HEADER_SIZE + rawsz;
	const unsigned char *p;

	if (strbuf_read_file(&f->data, path, 0) < 0)
		return bad_file(path, 0, "cannot read");
	p = (const unsigned char *)f->data.buf;
	if (f->data.len < ofs || memcmp(p, BITMAP_SIGNATURE, 4))
		return bad_file(path, 0, "not a bitmap file");
	if (get_be16(p + 4) != 1)
		return bad_file(path, 4, "unsupported version");
	f->nr_entries = get_be32(p + 8);
	for (int type = 0; type < 4; type++) {
		f->type_ofs[type] = ofs;
		if (read_one(path, &f->data, &ofs, &f->types[type], &f->type_len[type]))
			return -1;
	}
	/* Each entry takes at least 6 + 16 bytes: bound the count first. */
	if (f->nr_entries > (f->data.len - ofs) / 22)
		return bad_file(path, 8, "entry count exceeds the file");
	f->entries = xcalloc(f->nr_entries ? f->nr_entries : 1, sizeof(*f->entries));
	for (uint32_t k = 0; k < f->nr_entries; k++) {
		struct bitmap_entry *e = &f->entries[k];
		if (f->data.len - ofs < 6)
			return bad_file(path, ofs, "truncated entry");
		e->idx_pos = get_be32(p + ofs);
		e->xor_offset = p[ofs + 4];
		e->flags = p[ofs + 5];
		ofs += 6;
		if (e->xor_offset > k || e->xor_offset > BITMAP_MAX_XOR_OFFSET)
			return bad_file(path, ofs - 2, "XOR offset out of range");
		e->ofs = ofs;
		if (read_one(path, &f->data, &ofs, &e->ewah, &e->len))
			return -1;
	}
	return 0;
}

static void bitmap_file_release(struct bitmap_file *f)
{
	for (int type = 0; type < 4; type++)
		ewah_release(&f->types[type]);
	for (uint32_t k = 0; f->entries && k < f->nr_entries; k++)
		ewah_release(&f->entries[k].ewah);
	free(f->entries);
	strbuf_release(&f->data);
}

/* The union of the type bitmaps; fails unless disjoint and 0..N-1. */
static int check_types(const struct bitmap_file *f, const char *path, uint64_t *nr_objects)
{
	struct ewah all = EWAH_INIT, tmp = EWAH_INIT, both = EWAH_INIT;
	struct bitmap plain = BITMAP_INIT, plain_all = BITMAP_INIT;
	uint64_t sum = 0, count;
	int ret = 0;

	for (int type = 0; type < 4 && !ret; type++) {
		sum += ewah_popcount(&f->types[type]);
		for (int other = type + 1; other < 4; other++) {
			if (ewah_and(&both, &f->types[type], &f->types[other]) ||
			    ewah_popcount(&both)) {
				fprintf(stderr, "error: %s: %s and %s bitmaps overlap\n",
					path, type_names[type], type_names[other]);
				ret = -1;
			}
		}
		if (ewah_or(&tmp, &all, &f->types[type]) || ewah_copy(&all, &tmp))
			ret = -1;
		/* The same union with plain bitmaps. */
		if (bitmap_or_ewah(&plain_all, &f->types[type]))
			ret = -1;
	}
	count = ewah_popcount(&all);
	if (!ret && (count != sum || bitmap_popcount(&plain_all) != count)) {
		fprintf(stderr, "error: %s: union has %" PRIu64 " bits, types %" PRIu64 "\n",
			path, count, sum);
		ret = -1;
	}
	/* Every position below the count has a type. */
	ones_below(&plain, count);
	if (!ret && !bitmap_equals(&plain, &plain_all)) {
		fprintf(stderr, "error: %s: object positions have gaps\n", path);
		ret = -1;
	}
	if (!ret && (ewah_not(&tmp, &all) ||
		     ewah_popcount(&tmp) != ewah_bit_size(&all) - count)) {
		fprintf(stderr, "error: %s: NOT of the union is wrong\n", path);
		ret = -1;
	}
	*nr_objects = count;
	ewah_release(&all);
	ewah_release(&tmp);
	ewah_release(&both);
	bitmap_release(&plain);
	bitmap_release(&plain_all);
	return ret;
}

/* Resolve each entry's XOR chain; print "<idx pos> <pos>..." for each. */
static int print_entries(const struct bitmap_file *f, const char *path, uint64_t nr_objects)
{
	struct ewah *resolved = xcalloc(f->nr_entries ? f->nr_entries : 1, sizeof(*resolved));
	struct bitmap plain = BITMAP_INIT, check = BITMAP_INIT;
	int ret = 0;

	for (uint32_t k = 0; k < f->nr_entries && !ret; k++) {
		const struct bitmap_entry *e = &f->entries[k];
		struct ewah_iter it;
		uint64_t pos;

		ewah_init(&resolved[k]);
		if (e->xor_offset) {
			const struct ewah *base = &resolved[k - e->xor_offset];
			ret = ewah_xor(&resolved[k], &e->ewah, base);
			/* Cross-check with a plain bitmap. */
			if (!ret)
				ret = ewah_to_bitmap(&plain, base);
			if (!ret)
				ret = bitmap_xor_ewah(&plain, &e->ewah);
			if (!ret)
				ret = ewah_to_bitmap(&check, &resolved[k]);
			if (!ret && !bitmap_equals(&plain, &check)) {
				fprintf(stderr, "error: %s: entry %u: XOR disagrees\n", path, k);
				ret = -1;
			}
		} else {
			ret = ewah_copy(&resolved[k], &e->ewah);
		}
		if (ret)
			break;
		printf("%" PRIu32, e->idx_pos);
		ewah_iter_init(&it, &resolved[k]);
		while (ewah_iter_next(&it, &pos)) {
			if (pos >= nr_objects) {
				fprintf(stderr, "error: %s: entry %u: bit %" PRIu64 " past the objects\n",
					path, k, pos);
				ret = -1;
				break;
			}
			printf(" %" PRIu64, pos);
		}
		printf("\n");
	}
	for (uint32_t k = 0; k < f->nr_entries; k++)
		ewah_release(&resolved[k]);
	free(resolved);
	bitmap_release(&plain);
	bitmap_release(&check);
	return ret;
}

/* Whether rebuilding e gives back its bytes: bit by bit, or from words. */
static bool reencodes(const struct ewah *e, const unsigned char *bytes, size_t len,
		      bool bit_by_bit)
{
	struct ewah again = EWAH_INIT;
	struct bitmap plain = BITMAP_INIT;
	unsigned char *buf = NULL;
	size_t size;
	bool same = false;

	if (bit_by_bit) {
		struct ewah_iter it;
		uint64_t pos;
		ewah_iter_init(&it, e);
		while (ewah_iter_next(&it, &pos))
			if (ewah_set(&again, pos))
				goto out;
	} else {
		if (ewah_to_bitmap(&plain, e) ||
		    bitmap_grow(&plain, (size_t)((ewah_bit_size(e) + 63) / 64)) ||
		    bitmap_to_ewah(&again, &plain))
			goto out;
	}
	size = ewah_serialized_size(&again);
	buf = xmalloc(size);
	same = !ewah_serialize(&again, buf, size, NULL) && size == len &&
	       !memcmp(buf, bytes, len);
out:
	free(buf);
	ewah_release(&again);
	bitmap_release(&plain);
	return same;
}

static int extract(const struct bitmap_file *f, const char *dir)
{
	struct strbuf path = STRBUF_INIT;
	int ret = 0;

	for (uint32_t k = 0; k < 4 + f->nr_entries && !ret; k++) {
		size_t ofs = k < 4 ? f->type_ofs[k] : f->entries[k - 4].ofs;
		size_t len = k < 4 ? f->type_len[k] : f->entries[k - 4].len;
		FILE *fp;

		strbuf_reset(&path);
		if (k < 4)
			strbuf_addf(&path, "%s/%s", dir, type_names[k]);
		else
			strbuf_addf(&path, "%s/entry-%u", dir, k - 4);
		fp = fopen(path.buf, "wb");
		if (!fp || fwrite(f->data.buf + ofs, 1, len, fp) != len)
			ret = -1;
		if (fp && fclose(fp))
			ret = -1;
		if (ret)
			fprintf(stderr, "error: cannot write %s\n", path.buf);
	}
	strbuf_release(&path);
	return ret;
}

static int cmd_bitmap_file(int argc, const char **argv)
{
	struct bitmap_file f = { .data = STRBUF_INIT };
	const char *path = NULL, *mode = NULL, *dir = NULL, *val;
	size_t rawsz = 20;
	uint64_t nr_objects = 0;
	bool bad = false;
	int ret = 0;

	for (int k = 1; k < argc; k++) {
		if (skip_prefix(argv[k], "--object-format=", &val)) {
			if (!strcmp(val, "sha256"))
				rawsz = 32;
			else if (strcmp(val, "sha1"))
				bad = true;
		} else if (skip_prefix(argv[k], "--extract=", &val)) {
			dir = val;
		} else if (!path) {
			path = argv[k];
		} else {
			mode = argv[k];
		}
	}
	if (bad || !path || !mode) {
		fprintf(stderr, "usage: test-tool ewah bitmap-file [--object-format=ALGO] [--extract=DIR] FILE summary|types|entries|reencode\n");
		return 129;
	}
	for (int type = 0; type < 4; type++)
		ewah_init(&f.types[type]);
	if (bitmap_file_read(&f, path, rawsz) || check_types(&f, path, &nr_objects)) {
		ret = 1;
		goto out;
	}
	if (dir && extract(&f, dir)) {
		ret = 1;
		goto out;
	}
	if (!strcmp(mode, "summary")) {
		printf("entries %" PRIu32 "\n", f.nr_entries);
		for (int type = 0; type < 4; type++)
			printf("%s %" PRIu64 "\n", type_names[type], ewah_popcount(&f.types[type]));
		printf("objects %" PRIu64 "\n", nr_objects);
	} else if (!strcmp(mode, "types")) {
		const char **names = xcalloc(nr_objects ? nr_objects : 1, sizeof(*names));
		for (int type = 0; type < 4; type++) {
			struct ewah_iter it;
			uint64_t pos;
			ewah_iter_init(&it, &f.types[type]);
			while (ewah_iter_next(&it, &pos))
				names[pos] = type_names[type];
		}
		for (uint64_t pos = 0; pos < nr_objects; pos++)
			printf("%" PRIu64 " %s\n", pos, names[pos]);
		free(names);
	} else if (!strcmp(mode, "entries")) {
		if (print_entries(&f, path, nr_objects))
			ret = 1;
	} else if (!strcmp(mode, "reencode")) {
		uint32_t same = 0;
		for (int type = 0; type < 4; type++)
			printf("%s %s\n", type_names[type],
			       reencodes(&f.types[type], (unsigned char *)f.data.buf + f.type_ofs[type],
					 f.type_len[type], true) ? "identical" : "differs");
		for (uint32_t k = 0; k < f.nr_entries; k++)
			same += reencodes(&f.entries[k].ewah,
					  (unsigned char *)f.data.buf + f.entries[k].ofs,
					  f.entries[k].len, false);
		printf("entries identical %" PRIu32 "/%" PRIu32 "\n", same, f.nr_entries);
	} else {
		fprintf(stderr, "error: unknown mode '%s'\n", mode);
		ret = 129;
	}
out:
	bitmap_file_release(&f);
	return ret;
}

int cmd__ewah(int argc, const char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-tool ewah selftest | random [SEED [ROUNDS]] | encode BIT... | read FILE | read-hex HEX... | bitmap-file ...\n");
		return 129;
	}
	if (!strcmp(argv[1], "selftest"))
		return cmd_selftest();
	if (!strcmp(argv[1], "random"))
		return cmd_random(argc - 1, argv + 1);
	if (!strcmp(argv[1], "encode"))
		return cmd_encode(argc - 1, argv + 1);
	if (!strcmp(argv[1], "read") || !strcmp(argv[1], "read-hex"))
		return cmd_read(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bitmap-file"))
		return cmd_bitmap_file(argc - 1, argv + 1);
	fprintf(stderr, "test-tool ewah: unknown subcommand '%s'\n", argv[1]);
	return 129;
}
