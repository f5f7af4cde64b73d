/*
 * fuzz-rev.c: reverse index (.rev) images through revindex_parse() and
 * revindex_entry().
 *
 * Input: a whole .rev image (seeds: t/fuzz/corpus/rev/, written by git
 * index-pack --rev-index), checked as SHA-1 and as SHA-256 with the
 * object count its size implies. The pack checksum a real caller
 * passes comes from the .idx; here it is the bytes where the .rev keeps
 * it, so that comparison never walls the fuzzer off, and the target
 * checks that the same image is refused with any other pack checksum
 * and with any other object count. When it parses, every entry is read.
 *
 * With fuzz_want_fixed_trailer() a copy whose own trailing checksum is
 * recomputed is checked too (revindex_parse() does not verify it today;
 * this keeps the fuzzer past it if it ever does).
 */
#include "fuzz.h"
#include "pack-revindex.h"

static void fuzz_rev(const unsigned char *map, size_t size, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t rawsz = gp_hash_algos[algo].rawsz;
	size_t fixed = RIDX_HEADER_SIZE + 2 * rawsz;
	unsigned char pack_hash[GP_MAX_RAWSZ], other[GP_MAX_RAWSZ];
	uint32_t nr = 0, sink = 0;
	int ret;

	/* The count the size implies (rounded down: a ragged size must fail). */
	if (size >= fixed && (size - fixed) / 4 <= UINT32_MAX)
		nr = (uint32_t)((size - fixed) / 4);
	if (size >= 2 * rawsz)
		memcpy(pack_hash, map + size - 2 * rawsz, rawsz);
	else
		memset(pack_hash, 0, rawsz);

	ret = revindex_parse(map, size, "fuzz.rev", algo, nr, NULL, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "revindex_parse");
		/* The pack checksum is checked last: no rescue from it. */
		ret = revindex_parse(map, size, "fuzz.rev", algo, nr, pack_hash, &err);
		if (!ret)
			fuzz_fail("revindex_parse accepts only with a pack checksum");
		fuzz_check_error(ret, &err, GP_ECORRUPT, "revindex_parse");
		return;
	}
	if (err.msg)
		fuzz_fail("revindex_parse succeeded with a message: %s", err.msg);
	if (size != fixed + 4 * (size_t)nr)
		fuzz_fail("revindex_parse accepted %zu bytes for %u objects", size, nr);

	ret = revindex_parse(map, size, "fuzz.rev", algo, nr, pack_hash, &err);
	if (ret)
		fuzz_fail("revindex_parse refused its own pack checksum: %s",
			  gp_error_msg(&err));

	memcpy(other, pack_hash, rawsz);
	other[rawsz - 1] ^= 1;
	ret = revindex_parse(map, size, "fuzz.rev", algo, nr, other, &err);
	if (!ret)
		fuzz_fail("revindex_parse accepted a different pack checksum");
	fuzz_check_error(ret, &err, GP_ECORRUPT, "revindex_parse");

	if (nr < UINT32_MAX) {
		ret = revindex_parse(map, size, "fuzz.rev", algo, nr + 1, NULL, &err);
		if (!ret)
			fuzz_fail("revindex_parse accepted %u objects as %u", nr, nr + 1);
		fuzz_check_error(ret, &err, GP_ECORRUPT, "revindex_parse");
	}
	if (nr) {
		ret = revindex_parse(map, size, "fuzz.rev", algo, nr - 1, NULL, &err);
		if (!ret)
			fuzz_fail("revindex_parse accepted %u objects as %u", nr, nr - 1);
		fuzz_check_error(ret, &err, GP_ECORRUPT, "revindex_parse");
	}

	for (uint32_t pack_pos = 0; pack_pos < nr; pack_pos++)
		sink ^= revindex_entry(map, pack_pos);
	if (sink == 0xdeadbeef)
		fputc(0, stderr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int algo = GP_HASH_SHA1; algo <= GP_HASH_SHA256; algo++) {
		/* An exact-size heap copy, so ASan catches reads past the end. */
		unsigned char *copy = xmalloc(size ? size : 1);
		memcpy(copy, data, size);
		fuzz_rev(copy, size, algo);
		free(copy);

		if (fuzz_want_fixed_trailer(data, size)) {
			copy = fuzz_fix_trailer(data, size, algo);
			if (copy) {
				fuzz_rev(copy, size, algo);
				free(copy);
			}
		}
	}
	return 0;
}
