/*
 * fuzz-ewah.c: serialized EWAH bitmaps through ewah_deserialize() and
 * ewah_view(), then everything ewah/ does with what they accept.
 *
 * Input: one serialized EWAH, optionally followed by a second. Seeds in
 * t/fuzz/corpus/ewah/: git-* are EWAHs cut out of .bitmap files that git
 * repack -adb wrote (a 90-commit repository, and git.git itself for the
 * git-large-* ones), by "test-tool ewah bitmap-file --extract=DIR FILE
 * summary"; *-pair are two of them back to back; hand-* are small edge
 * cases (empty, single and top bits, runs, splits, the largest bit size,
 * trailing bytes, and a few corrupt ones).
 *
 * A refused input must be refused the same way by both readers, with
 * EWAH_ECORRUPT and a message. An accepted one must: read the same
 * both ways; serialize back to exactly the bytes read; iterate, count
 * and decompress consistently; and give, for AND, OR, XOR, AND NOT (with
 * itself, with a fixed EWAH and with the second input) and NOT, results
 * that match the same operations on plain bitmaps and that themselves
 * read back after serialization (they keep the invariants). Bitmaps of
 * more than PLAIN_MAX_BITS bits (up to 2^32 from a few bytes) are only
 * combined compressed and checked through popcount identities, so that
 * no input costs more than a few megabytes or milliseconds.
 */
#include "fuzz.h"
#include "ewah/ewah.h"

#define PLAIN_MAX_BITS ((uint64_t)1 << 20)

static void check_refused(int ret, const char *why, const char *what)
{
	if (ret != EWAH_ECORRUPT || !why || !*why)
		fuzz_fail("%s returned %d with message '%s'", what, ret, why ? why : "(null)");
}

/* e serializes, and what it serializes to reads back equal. */
static void check_reads_back(const struct ewah *e, const char *what)
{
	size_t size = ewah_serialized_size(e), written = 0, consumed = 0;
	unsigned char *buf = xmalloc(size);
	struct ewah back = EWAH_INIT;
	const char *why = NULL;
	int ret;

	if ((ret = ewah_serialize(e, buf, size, &written)) || written != size)
		fuzz_fail("%s: ewah_serialize returned %d", what, ret);
	if ((ret = ewah_view(&back, buf, size, &consumed, &why)))
		fuzz_fail("%s: result does not read back: %s", what, why);
	if (consumed != size || !ewah_equals(&back, e) ||
	    ewah_bit_size(&back) != ewah_bit_size(e))
		fuzz_fail("%s: result reads back different", what);
	ewah_release(&back);
	free(buf);
}

static bool is_small(const struct ewah *e)
{
	return ewah_bit_size(e) <= PLAIN_MAX_BITS;
}

/* Iteration, popcount and decompression agree. */
static void check_bits(const struct ewah *e, const char *what)
{
	struct bitmap plain = BITMAP_INIT;
	struct bitmap_iter plain_it;
	struct ewah_iter it;
	uint64_t pos, prev = 0, count = ewah_popcount(e), seen = 0;
	size_t plain_pos;
	int ret;

	ewah_iter_init(&it, e);
	while (ewah_iter_next(&it, &pos)) {
		if ((seen && pos <= prev) || pos >= ewah_bit_size(e))
			fuzz_fail("%s: iteration gave %" PRIu64 " after %" PRIu64
				  " (bit size %" PRIu64 ")", what, pos, prev, ewah_bit_size(e));
		prev = pos;
		/* Past a million, the rest is checked by popcount only. */
		if (++seen > PLAIN_MAX_BITS && !is_small(e))
			break;
	}
	if (seen <= PLAIN_MAX_BITS && seen != count)
		fuzz_fail("%s: iterated %" PRIu64 " bits, popcount %" PRIu64, what, seen, count);
	if (!is_small(e))
		return;

	if ((ret = ewah_to_bitmap(&plain, e)))
		fuzz_fail("%s: ewah_to_bitmap returned %d", what, ret);
	if (bitmap_popcount(&plain) != count)
		fuzz_fail("%s: decompressed popcount differs", what);
	ewah_iter_init(&it, e);
	bitmap_iter_init(&plain_it, &plain);
	while (ewah_iter_next(&it, &pos))
		if (!bitmap_iter_next(&plain_it, &plain_pos) || plain_pos != pos)
			fuzz_fail("%s: decompressed bits differ at %" PRIu64, what, pos);
	if (bitmap_iter_next(&plain_it, &plain_pos))
		fuzz_fail("%s: decompressed has an extra bit %zu", what, plain_pos);
	bitmap_release(&plain);
}

typedef int (*ewah_op_fn)(struct ewah *, const struct ewah *, const struct ewah *);

/* a OP b for every OP, against plain bitmaps or popcount identities. */
static void check_ops(const struct ewah *a, const struct ewah *b)
{
	static const struct { const char *name; ewah_op_fn fn; } ops[] = {
		{ "and", ewah_and }, { "or", ewah_or },
		{ "xor", ewah_xor }, { "and-not", ewah_and_not },
	};
	struct ewah out[4] = { EWAH_INIT, EWAH_INIT, EWAH_INIT, EWAH_INIT };
	struct ewah not = EWAH_INIT;
	uint64_t na = ewah_popcount(a), nb = ewah_popcount(b), count[4];
	bool small = is_small(a) && is_small(b);
	int ret;

	for (int k = 0; k < 4; k++) {
		if ((ret = ops[k].fn(&out[k], a, b)))
			fuzz_fail("ewah %s returned %d", ops[k].name, ret);
		count[k] = ewah_popcount(&out[k]);
		check_reads_back(&out[k], ops[k].name);
	}
	/* |a&b| + |a|b| = |a| + |b|, |a^b| = |a|b| - |a&b|, |a&~b| = |a| - |a&b| */
	if (count[0] + count[1] != na + nb || count[2] != count[1] - count[0] ||
	    count[3] != na - count[0])
		fuzz_fail("popcounts inconsistent: |a| %" PRIu64 " |b| %" PRIu64
			  " and %" PRIu64 " or %" PRIu64 " xor %" PRIu64 " and-not %" PRIu64,
			  na, nb, count[0], count[1], count[2], count[3]);
	if (ewah_equals(a, b) != (count[2] == 0))
		fuzz_fail("ewah_equals disagrees with XOR");

	if ((ret = ewah_not(&not, a)))
		fuzz_fail("ewah_not returned %d", ret);
	if (ewah_popcount(&not) != ewah_bit_size(a) - na)
		fuzz_fail("NOT has %" PRIu64 " bits of %" PRIu64 ", a has %" PRIu64,
			  ewah_popcount(&not), ewah_bit_size(a), na);
	check_reads_back(&not, "not");

	if (small) {
		struct bitmap pa = BITMAP_INIT, pb = BITMAP_INIT, want = BITMAP_INIT,
			      got = BITMAP_INIT, mixed = BITMAP_INIT;

		if (ewah_to_bitmap(&pa, a) || ewah_to_bitmap(&pb, b))
			fuzz_fail("ewah_to_bitmap failed on a small bitmap");
		for (int k = 0; k < 4; k++) {
			if (bitmap_copy(&want, &pa) || bitmap_copy(&mixed, &pa))
				fuzz_fail("bitmap_copy failed");
			switch (k) {
			case 0:
				bitmap_and(&want, &pb);
				bitmap_and_ewah(&mixed, b);
				break;
			case 1:
				ret = bitmap_or(&want, &pb) | bitmap_or_ewah(&mixed, b);
				break;
			case 2:
				ret = bitmap_xor(&want, &pb) | bitmap_xor_ewah(&mixed, b);
				break;
			case 3:
				bitmap_and_not(&want, &pb);
				bitmap_and_not_ewah(&mixed, b);
				break;
			}
			if (ret)
				fuzz_fail("plain %s failed", ops[k].name);
			if (ewah_to_bitmap(&got, &out[k]) || !bitmap_equals(&got, &want))
				fuzz_fail("ewah %s differs from the plain bitmaps", ops[k].name);
			if (!bitmap_equals(&mixed, &want))
				fuzz_fail("plain-with-ewah %s differs", ops[k].name);
		}
		bitmap_release(&pa);
		bitmap_release(&pb);
		bitmap_release(&want);
		bitmap_release(&got);
		bitmap_release(&mixed);
	}
	for (int k = 0; k < 4; k++)
		ewah_release(&out[k]);
	ewah_release(&not);
}

/* Appending past the bit size, to an owned copy. */
static void check_append(const struct ewah *e)
{
	struct ewah copy = EWAH_INIT;
	uint64_t pos = ewah_bit_size(e) + 7, count = ewah_popcount(e);
	int ret;

	if (ewah_copy(&copy, e))
		fuzz_fail("ewah_copy failed");
	ret = ewah_set(&copy, pos);
	/* EINVAL only for a last chunk that is empty, which git never writes. */
	if (ret && ret != EWAH_EINVAL)
		fuzz_fail("ewah_set returned %d", ret);
	if (ewah_popcount(&copy) != count + !ret)
		fuzz_fail("ewah_set left %" PRIu64 " bits", ewah_popcount(&copy));
	if (!ret && pos < EWAH_MAX_DISK_BITS)
		check_reads_back(&copy, "set");
	ewah_release(&copy);
}

/* Read one EWAH from data both ways; NULL-safe *consumed. */
static bool read_both(struct ewah *view, const unsigned char *data, size_t size,
		      size_t *consumed)
{
	struct ewah copy = EWAH_INIT;
	const char *why = NULL, *why_copy = NULL;
	size_t consumed_copy = 0;
	int ret = ewah_view(view, data, size, consumed, &why);
	int ret_copy = ewah_deserialize(&copy, data, size, &consumed_copy, &why_copy);

	if (ret != ret_copy)
		fuzz_fail("ewah_view returned %d, ewah_deserialize %d", ret, ret_copy);
	if (ret) {
		check_refused(ret, why, "ewah_view");
		check_refused(ret_copy, why_copy, "ewah_deserialize");
		if (why != why_copy)
			fuzz_fail("readers disagree: '%s' and '%s'", why, why_copy);
		if (view->nr || copy.nr)
			fuzz_fail("a refused EWAH is not left empty");
		ewah_release(&copy);
		return false;
	}
	if (*consumed != consumed_copy || *consumed > size ||
	    !ewah_equals(view, &copy) || ewah_bit_size(view) != ewah_bit_size(&copy))
		fuzz_fail("ewah_view and ewah_deserialize disagree");
	ewah_release(&copy);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t fixed_bits[] = { 0, 1, 2, 63, 64, 200, 201, 1000, 4096, 70000 };
	struct ewah a = EWAH_INIT, b = EWAH_INIT, fixed = EWAH_INIT;
	unsigned char *copy = xmalloc(size ? size : 1), *again;
	size_t consumed = 0, second = 0, written = 0;

	/* An exact-size heap copy, so ASan catches reads past the end. */
	memcpy(copy, data, size);
	for (size_t k = 0; k < ARRAY_SIZE(fixed_bits); k++)
		if (ewah_set(&fixed, fixed_bits[k]))
			fuzz_fail("building the fixed EWAH failed");
	/* Then five whole words of ones. */
	for (uint64_t pos = 64 * 1200; pos < 64 * 1205; pos++)
		if (ewah_set(&fixed, pos))
			fuzz_fail("building the fixed EWAH failed");

	if (!read_both(&a, copy, size, &consumed))
		goto out;

	/* Serializing gives back exactly the bytes read. */
	if (ewah_serialized_size(&a) != consumed)
		fuzz_fail("serialized size %zu, read %zu", ewah_serialized_size(&a), consumed);
	again = xmalloc(consumed);
	if (ewah_serialize(&a, again, consumed, &written) || written != consumed ||
	    memcmp(again, copy, consumed))
		fuzz_fail("serializing does not give back the input");
	free(again);

	check_bits(&a, "input");
	check_append(&a);
	check_ops(&a, &a);
	check_ops(&a, &fixed);
	check_ops(&fixed, &a);
	if (read_both(&b, copy + consumed, size - consumed, &second)) {
		check_bits(&b, "second input");
		check_ops(&a, &b);
		check_ops(&b, &a);
	}
out:
	ewah_release(&a);
	ewah_release(&b);
	ewah_release(&fixed);
	free(copy);
	return 0;
}
