/*
 * fuzz-idx.c: pack index (.idx v1 and v2) parsing, pack_parse_idx_buf(),
 * and the lookups that trust what it validated.
 *
 * Input: a whole .idx image (seeds: t/fuzz/corpus/idx/, written by git
 * index-pack). Each input is parsed as SHA-1 and as SHA-256. When it
 * parses, every entry is read back (name, offset, CRC), every name must
 * be found by pack_find_oid() at its own position (names are strictly
 * sorted, so positions are unique), the in-memory reverse index must be
 * a permutation in offset order, and every offset must map back to a
 * pack position with that offset.
 *
 * Our parser does not verify the idx checksum at open, but a copy with
 * a recomputed trailer is parsed too when fuzz_want_fixed_trailer()
 * says so, so that a later checksum check cannot wall the fuzzer off.
 */
#include "fuzz.h"
#include "object.h"
#include "pack-revindex.h"
#include "packfile.h"

static void check_revindex(struct packed_git *p)
{
	uint32_t nr = p->nr_objects;
	uint64_t prev = 0;

	p->revindex = revindex_compute(p);
	for (uint32_t pack_pos = 0; pack_pos < nr; pack_pos++) {
		uint32_t idx_pos = pack_pos_to_idx(p, pack_pos);
		uint64_t ofs, found_ofs;
		uint32_t found;

		if (idx_pos >= nr)
			fuzz_fail("revindex entry %u names object %u of %u",
				  pack_pos, idx_pos, nr);
		ofs = pack_pos_to_offset(p, pack_pos);
		if (ofs != pack_nth_offset(p, idx_pos))
			fuzz_fail("pack_pos_to_offset disagrees with pack_nth_offset");
		if (pack_pos && ofs < prev)
			fuzz_fail("revindex not in offset order at %u", pack_pos);
		prev = ofs;
		/* Offsets of a fuzzed idx may repeat: any match will do. */
		if (!pack_offset_to_pos(p, ofs, &found))
			fuzz_fail("offset %" PRIu64 " of pack position %u not found",
				  ofs, pack_pos);
		found_ofs = pack_pos_to_offset(p, found);
		if (found_ofs != ofs)
			fuzz_fail("pack_offset_to_pos found the wrong entry");
	}
	/* A permutation: each idx position exactly once. */
	if (nr) {
		unsigned char *seen = xcalloc(nr, 1);
		for (uint32_t pack_pos = 0; pack_pos < nr; pack_pos++) {
			uint32_t idx_pos = pack_pos_to_idx(p, pack_pos);
			if (seen[idx_pos]++)
				fuzz_fail("idx position %u appears twice in the revindex",
					  idx_pos);
		}
		free(seen);
	}
}

static void fuzz_idx(const unsigned char *buf, size_t len, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct packed_git *p = NULL;
	size_t rawsz = gp_hash_algos[algo].rawsz;
	uint64_t sink = 0;
	int ret;

	ret = pack_parse_idx_buf(&p, buf, len, "fuzz.idx", algo, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "pack_parse_idx_buf");
		return;
	}
	if (err.msg)
		fuzz_fail("pack_parse_idx_buf succeeded with a message: %s", err.msg);
	if (p->idx_version != 1 && p->idx_version != 2)
		fuzz_fail("idx version %u", p->idx_version);

	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		struct object_id oid, probe;
		uint32_t found = UINT32_MAX;
		bool wrapped;

		pack_nth_oid(p, idx_pos, &oid);
		if (memcmp(oid.hash, pack_nth_oid_raw(p, idx_pos), rawsz))
			fuzz_fail("pack_nth_oid and pack_nth_oid_raw differ");
		sink += pack_nth_offset(p, idx_pos);
		sink += pack_nth_crc(p, idx_pos);
		/* An object may be listed twice (git accepts that): any copy will do. */
		if (!pack_find_oid(p, &oid, &found) ||
		    memcmp(pack_nth_oid_raw(p, found), oid.hash, rawsz))
			fuzz_fail("object %u not found (got %u)", idx_pos, found);

		/* A name just past this one is found only where it is, after this one. */
		probe = oid;
		wrapped = true;
		for (size_t i = rawsz; i-- > 0;)
			if (++probe.hash[i]) {
				wrapped = false;
				break;
			}
		if (!wrapped && pack_find_oid(p, &probe, &found) &&
		    (found <= idx_pos ||
		     memcmp(pack_nth_oid_raw(p, found), probe.hash, rawsz)))
			fuzz_fail("pack_find_oid found a name that is not there");
	}
	check_revindex(p);
	/* Keep the reads from being optimised away. */
	if (sink == 1)
		fputc(0, stderr);
	pack_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int algo = GP_HASH_SHA1; algo <= GP_HASH_SHA256; algo++) {
		/*
		 * Parse a private copy: the parser borrows the buffer, and a
		 * heap copy of the exact size lets ASan catch reads past it.
		 */
		unsigned char *copy = xmalloc(size ? size : 1);
		memcpy(copy, data, size);
		fuzz_idx(copy, size, algo);
		free(copy);

		if (fuzz_want_fixed_trailer(data, size)) {
			copy = fuzz_fix_trailer(data, size, algo);
			if (copy) {
				fuzz_idx(copy, size, algo);
				free(copy);
			}
		}
	}
	return 0;
}
