/*
 * fuzz-delta-create.c: the delta encoder of delta.h,
 * delta_index_create() and delta_create(), checked by applying what it
 * makes with delta_apply().
 *
 * Input: 2 bytes big-endian, the base's length (clamped to what the
 * input holds), the base, then the target. Seeds in
 * t/fuzz/corpus/delta-create/ were made by hand: a C function and an
 * edited copy (edit-c, and the other way round), two git trees a few
 * entries apart (tree-sha1, tree-sha256), runs of zeros and of a short
 * period with a few bytes changed (zeros, period), random bytes with
 * some replaced one for one and a block moved (binary-edits),
 * unrelated bytes (unrelated), and the edges: an empty base, an empty
 * target, a base shorter than a block (empty-base, empty-target,
 * short-base).
 *
 * Every input must give a delta that:
 *  - declares the base's and the target's sizes, and applies to the
 *    base (delta_apply(), which checks every instruction) giving back
 *    the target byte for byte;
 *  - is no longer than storing the target literally (the header, the
 *    bytes, an insert opcode per 127 of them);
 *  - comes out the same from a second call on the same index, and
 *    from a call limited to the target's length or more; a call
 *    limited to exactly its length gives the same delta or (the
 *    sample of the target said it was unlike the base) GP_ENOTFOUND;
 *    a limit one byte shorter gives GP_ENOTFOUND and no delta; so
 *    does half the target's length unless the delta fits it (then the
 *    same delta or GP_ENOTFOUND).
 */
#include "fuzz.h"
#include "delta.h"

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	struct delta_index *idx = NULL;
	unsigned char *base, *target, *delta = NULL, *again = NULL, *result;
	size_t base_len = 0, target_len, delta_len = 0, again_len = 0, hdr_len;
	size_t literal_len;
	uint64_t base_size, result_size;
	int ret;

	if (size >= 2) {
		base_len = get_be16(data);
		data += 2;
		size -= 2;
		if (base_len > size)
			base_len = size;
	}
	target_len = size - base_len;
	/* Separate exact-size heap copies, so ASan catches overruns of either. */
	base = xmalloc(base_len ? base_len : 1);
	memcpy(base, data, base_len);
	target = xmalloc(target_len ? target_len : 1);
	memcpy(target, data + base_len, target_len);
	result = xmalloc(target_len ? target_len : 1);

	ret = delta_index_create(&idx, base, base_len);
	if (ret)
		fuzz_fail("delta_index_create returned %d for %zu bytes", ret, base_len);
	if (!delta_index_memory(idx))
		fuzz_fail("the index says it holds nothing");
	ret = delta_create(idx, target, target_len, 0, &delta, &delta_len);
	if (ret || !delta)
		fuzz_fail("delta_create returned %d", ret);

	literal_len = varint_len(base_len) + varint_len(target_len) +
		      target_len + (target_len + 126) / 127;
	if (delta_len > literal_len)
		fuzz_fail("delta of %zu bytes, storing literally takes %zu", delta_len,
			  literal_len);
	if (delta_sizes(delta, delta_len, &base_size, &result_size, &hdr_len, &err))
		fuzz_fail("our delta header does not parse: %s", gp_error_msg(&err));
	if (base_size != base_len || result_size != target_len)
		fuzz_fail("delta header says %" PRIu64 " -> %" PRIu64 ", not %zu -> %zu",
			  base_size, result_size, base_len, target_len);
	if (delta_apply(base, base_len, delta, delta_len, result, target_len, &err))
		fuzz_fail("our delta does not apply: %s", gp_error_msg(&err));
	if (memcmp(result, target, target_len))
		fuzz_fail("our delta applies to something else than the target");

	ret = delta_create(idx, target, target_len, 0, &again, &again_len);
	if (ret || again_len != delta_len || memcmp(again, delta, delta_len))
		fuzz_fail("a second delta_create on the same index differs");
	free(again);
	again = NULL;

	ret = delta_create(idx, target, target_len, MAX(delta_len, target_len), &again,
			   &again_len);
	if (ret || again_len != delta_len || memcmp(again, delta, delta_len))
		fuzz_fail("a limit of the target's length or more changed it (%d)", ret);
	free(again);
	again = NULL;

	ret = delta_create(idx, target, target_len, delta_len, &again, &again_len);
	if (ret == GP_ENOTFOUND ? again != NULL
				: ret || again_len != delta_len || memcmp(again, delta, delta_len))
		fuzz_fail("a limit of exactly the delta's length changed it (%d)", ret);
	free(again);
	again = NULL;

	/*
	 * Half the target: what pack-objects asks for, so the sample
	 * decides (a limit of 0 is none).
	 */
	if (target_len >= 2) {
		ret = delta_create(idx, target, target_len, target_len / 2, &again,
				   &again_len);
		if (ret == GP_ENOTFOUND ? again != NULL
					: ret || delta_len > target_len / 2 ||
					  again_len != delta_len || memcmp(again, delta, delta_len))
			fuzz_fail("a limit of half the target gave %d", ret);
		free(again);
		again = NULL;
	}

	if (delta_len > 1) {
		ret = delta_create(idx, target, target_len, delta_len - 1, &again,
				   &again_len);
		if (ret != GP_ENOTFOUND || again)
			fuzz_fail("a limit one byte short returned %d", ret);
	}

	free(delta);
	delta_index_free(idx);
	free(result);
	free(target);
	free(base);
	return 0;
}
