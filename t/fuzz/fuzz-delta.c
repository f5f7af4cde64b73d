/*
 * fuzz-delta.c: Git's delta format (delta.h): delta_sizes(), then
 * delta_apply() into a buffer of exactly the declared result size.
 *
 * Input: 2 bytes big-endian, the base's length (clamped to what the
 * input holds), the base, then the delta. Seeds in
 * t/fuzz/corpus/delta/ are deltas cut from packs git wrote (with their
 * bases) and a few written by hand to gitformat-pack's description.
 *
 * The outcome is compared with ref_apply() below, a deliberately plain
 * second reading of gitformat-pack ("Deltified representation"): both
 * must accept the same deltas and produce the same bytes. Results over
 * 16 MiB are not applied (the allocation would dominate the run).
 */
#include "fuzz.h"
#include "delta.h"

#define MAX_RESULT (16u << 20)

/* A size varint: 7 bits a byte, least significant first. */
static bool ref_varint(const unsigned char *d, size_t len, size_t *pos,
		       uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint64_t bits;
		if (*pos >= len || shift >= 64)
			return false;
		bits = d[*pos] & 0x7f;
		if (shift && bits > (UINT64_MAX >> shift))
			return false; /* would lose bits */
		v |= bits << shift;
		if (!(d[(*pos)++] & 0x80))
			break;
	}
	*out = v;
	return true;
}

static bool ref_apply(const unsigned char *base, size_t base_len,
		      const unsigned char *d, size_t len,
		      unsigned char *out, size_t out_len)
{
	size_t pos = 0, done = 0;
	uint64_t base_size, result_size;

	if (!ref_varint(d, len, &pos, &base_size) ||
	    !ref_varint(d, len, &pos, &result_size))
		return false;
	if (base_size != base_len || result_size != out_len)
		return false;
	while (pos < len) {
		unsigned op = d[pos++];
		if (op & 0x80) {
			/* copy: bits 0-3 select offset bytes, 4-6 size bytes */
			uint64_t ofs = 0, n = 0;
			for (int i = 0; i < 7; i++) {
				if (!(op & (1u << i)))
					continue;
				if (pos >= len)
					return false;
				if (i < 4)
					ofs |= (uint64_t)d[pos++] << (8 * i);
				else
					n |= (uint64_t)d[pos++] << (8 * (i - 4));
			}
			if (!n)
				n = 0x10000;
			if (ofs + n > base_len || n > out_len - done)
				return false;
			memcpy(out + done, base + ofs, n);
			done += n;
		} else if (op) {
			/* insert op literal bytes */
			if (len - pos < op || out_len - done < op)
				return false;
			memcpy(out + done, d + pos, op);
			done += op;
			pos += op;
		} else {
			return false; /* reserved */
		}
	}
	return done == out_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t base_len = 0, delta_len, hdr_len = 0;
	unsigned char *base, *delta, *out, *ref_out;
	uint64_t base_size = 0, result_size = 0;
	bool ref_ok;
	int ret;

	if (size >= 2) {
		base_len = get_be16(data);
		data += 2;
		size -= 2;
		if (base_len > size)
			base_len = size;
	}
	delta_len = size - base_len;
	/* Separate exact-size heap copies, so ASan catches overruns of either. */
	base = xmalloc(base_len ? base_len : 1);
	memcpy(base, data, base_len);
	delta = xmalloc(delta_len ? delta_len : 1);
	memcpy(delta, data + base_len, delta_len);

	ret = delta_sizes(delta, delta_len, &base_size, &result_size, &hdr_len, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "delta_sizes");
		/* Then no delta applies, whatever result size is claimed. */
		out = xmalloc(1);
		ret = delta_apply(base, base_len, delta, delta_len, out, 0, &err);
		if (!ret)
			fuzz_fail("delta_apply accepted a delta whose header does not parse");
		fuzz_check_error(ret, &err, GP_ECORRUPT, "delta_apply");
		if (ref_apply(base, base_len, delta, delta_len, out, 0))
			fuzz_fail("reference accepted a delta whose header does not parse");
		free(out);
		goto out;
	}
	if (err.msg)
		fuzz_fail("delta_sizes succeeded with a message: %s", err.msg);
	if (!hdr_len || hdr_len > delta_len)
		fuzz_fail("delta header of %zu bytes in %zu", hdr_len, delta_len);
	if (result_size > MAX_RESULT)
		goto out;

	out = xmalloc(result_size ? (size_t)result_size : 1);
	ref_out = xmalloc(result_size ? (size_t)result_size : 1);
	ret = delta_apply(base, base_len, delta, delta_len, out,
			  (size_t)result_size, &err);
	ref_ok = ref_apply(base, base_len, delta, delta_len, ref_out,
			   (size_t)result_size);
	if (ret) {
		if (ref_ok)
			fuzz_fail("delta_apply refused a delta the reference applies: %s",
				  gp_error_msg(&err));
		fuzz_check_error(ret, &err, GP_ECORRUPT, "delta_apply");
	} else {
		if (!ref_ok)
			fuzz_fail("delta_apply accepted a delta the reference refuses");
		if (err.msg)
			fuzz_fail("delta_apply succeeded with a message: %s", err.msg);
		if (memcmp(out, ref_out, (size_t)result_size))
			fuzz_fail("delta_apply and the reference produce different bytes");
	}
	free(ref_out);
	free(out);
out:
	free(base);
	free(delta);
	return 0;
}
