/*
 * delta.c: applying Git deltas. The instruction stream comes straight
 * from a pack, so every copy is checked against the base and every
 * write against the declared result size before it happens.
 */
#include "delta.h"
#include "error.h"

static int read_varint(const unsigned char *p, size_t len, size_t *pos,
		       uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		unsigned char c;
		if (*pos >= len)
			return -1;
		c = p[(*pos)++];
		if (shift > 63 || (shift && (uint64_t)(c & 0x7f) >> (64 - shift)))
			return -1;
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	*out = v;
	return 0;
}

int delta_sizes(const unsigned char *delta, size_t delta_len,
		uint64_t *base_size, uint64_t *result_size, size_t *hdr_len,
		struct gp_error *err)
{
	size_t pos = 0;
	if (read_varint(delta, delta_len, &pos, base_size) ||
	    read_varint(delta, delta_len, &pos, result_size))
		return CORRUPT(err, "delta header is truncated or overflows");
	*hdr_len = pos;
	return 0;
}

int delta_apply(const unsigned char *base, size_t base_len,
		const unsigned char *delta, size_t delta_len,
		unsigned char *out, size_t result_size, struct gp_error *err)
{
	uint64_t want_base, want_result;
	size_t pos, out_pos = 0;
	int ret = delta_sizes(delta, delta_len, &want_base, &want_result, &pos, err);
	if (ret)
		return ret;
	if (want_base != base_len)
		return CORRUPT(err, "delta expects a base of %" PRIu64 " bytes, base has %zu",
			       want_base, base_len);
	if (want_result != result_size)
		return CORRUPT(err, "delta result size %" PRIu64 " does not match %zu",
			       want_result, result_size);

	while (pos < delta_len) {
		unsigned char op = delta[pos++];
		if (op & 0x80) {
			size_t copy_ofs = 0, copy_len = 0;
			for (unsigned bit = 0; bit < 4; bit++) {
				if (!(op & (1u << bit)))
					continue;
				if (pos >= delta_len)
					return CORRUPT(err, "delta copy instruction truncated at byte %zu", pos);
				copy_ofs |= (size_t)delta[pos++] << (8 * bit);
			}
			for (unsigned bit = 0; bit < 3; bit++) {
				if (!(op & (0x10u << bit)))
					continue;
				if (pos >= delta_len)
					return CORRUPT(err, "delta copy instruction truncated at byte %zu", pos);
				copy_len |= (size_t)delta[pos++] << (8 * bit);
			}
			if (!copy_len)
				copy_len = 0x10000;
			if (copy_ofs > base_len || copy_len > base_len - copy_ofs)
				return CORRUPT(err, "delta copies %zu bytes at %zu, outside its base of %zu bytes",
					       copy_len, copy_ofs, base_len);
			if (copy_len > result_size - out_pos)
				return CORRUPT(err, "delta copy overruns the result (%zu bytes)", result_size);
			memcpy(out + out_pos, base + copy_ofs, copy_len);
			out_pos += copy_len;
		} else if (op) {
			if (op > delta_len - pos)
				return CORRUPT(err, "delta insert of %u bytes overruns the delta at byte %zu",
					       op, pos);
			if (op > result_size - out_pos)
				return CORRUPT(err, "delta insert overruns the result (%zu bytes)", result_size);
			memcpy(out + out_pos, delta + pos, op);
			out_pos += op;
			pos += op;
		} else {
			return CORRUPT(err, "delta uses reserved opcode 0 at byte %zu", pos - 1);
		}
	}
	if (out_pos != result_size)
		return CORRUPT(err, "delta produced %zu bytes, expected %zu", out_pos, result_size);
	return 0;
}
