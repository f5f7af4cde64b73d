/*
 * fuzz-midx.c: multi-pack-index images through midx_parse_buf(), then
 * every lookup that trusts what it validated.
 *
 * Input: a whole multi-pack-index (seeds: t/fuzz/corpus/midx/, written by
 * git 2.39 "multi-pack-index write", with and without --bitmap (RIDX),
 * SHA-1 and SHA-256, plus one with a LOFF chunk made the way t5319
 * makes it; and by git 2.55: version 2, RIDX with BTMP, a layer of an
 * incremental chain and its chain file), parsed as SHA-1 and as SHA-256,
 * both as a MIDX and as a multi-pack-index-chain file (fuzz_chain()).
 * When it parses as a MIDX:
 *
 *  - every pack name ends in ".idx" and is found again by
 *    midx_find_pack(), as "pack-X.idx" and as "pack-X.pack", at its own
 *    id, and the names are strictly sorted (in version 1; distinct in
 *    version 2);
 *  - every object name is found by midx_find_oid() at its own position
 *    (names are strictly sorted, so positions are unique), the name just
 *    past it is not found unless it is the next one, and its pack id is
 *    in range (the offset is read; any value is legal);
 *  - midx_load_pseudo_order() succeeds (or, for a RIDX chunk that is
 *    not a permutation, fails with a message), and then both mappings
 *    stay in range and are inverses of each other; without RIDX the
 *    order is by (pack id, offset), for offsets below 1 TiB;
 *  - midx_preferred_pack() succeeds exactly when there is a RIDX chunk
 *    and at least one object, and names the pack of pseudo position 0.
 *
 * midx_parse_buf() does not verify the trailing checksum, but with
 * fuzz_want_fixed_trailer() a copy with a recomputed one is parsed too,
 * and then midx_checksum() must return those bytes.
 *
 * Seeds (the files are small: 2 to 4 packs, a few dozen objects): in a
 * repository made by git with a few commits, each repacked with
 * "git repack -d" (one pack per commit), and "git repack -a" for
 * duplicates,
 *	git multi-pack-index write			-> <algo>-plain
 *	git multi-pack-index write --bitmap		-> <algo>-ridx
 *	git multi-pack-index write --preferred-pack=P	-> <algo>-preferred
 *	t/lib-midx.sh midx_add_loff <algo>-ridx		-> <algo>-loff
 * and a MIDX of one empty pack (sha1-empty). Crashes found so far are in
 * t/fuzz/regressions/midx/ (see fuzz_midx_lax() for the open ones).
 */
#include "fuzz.h"
#include "midx.h"
#include "object.h"

/*
 * GP_FUZZ_MIDX_LAX=1 tolerates the bugs already recorded as
 * regressions/midx/open-*, so that a fuzzing run can go on past them:
 * PNAM names not ending in .idx (open-pnam-name-not-idx) and a RIDX
 * chunk that is not a permutation, whose inverse then has holes
 * (open-ridx-not-permutation). (It also skips headers claiming more
 * packs than the file has bytes, which once made the parser allocate
 * gigabytes before checking: regressions/midx/pack-count-alloc.)
 */
static bool fuzz_midx_lax(void)
{
	static int lax = -1;
	if (lax < 0)
		lax = !!getenv("GP_FUZZ_MIDX_LAX");
	return lax;
}

static void check_packs(struct midx *m)
{
	static int lax_names = -1;
	uint32_t nr = midx_nr_packs(m);
	const char *prev = NULL;

	if (lax_names < 0)
		lax_names = fuzz_midx_lax();
	for (uint32_t pack_int_id = 0; pack_int_id < nr; pack_int_id++) {
		const char *name = midx_pack_name(m, pack_int_id);
		uint32_t found = UINT32_MAX;
		size_t len;
		char *pack;

		if (!name)
			fuzz_fail("pack %u of %u has no name", pack_int_id, nr);
		/*
		 * PNAM lists .idx names; midx_find_pack() finds a pack by its
		 * idx or pack name, so any other name would be unreachable
		 * (regressions/midx/open-pnam-name-not-idx).
		 */
		len = strlen(name);
		if ((len < 4 || strcmp(name + len - 4, ".idx")) && !lax_names) {
			fuzz_fail("pack %u: name '%s' does not end in .idx", pack_int_id,
				  name);
		}
		/* Version 2 may list its packs in any order, but each once. */
		if (prev && strcmp(prev, name) >= 0 && midx_version(m) == 1)
			fuzz_fail("pack names %u and %u out of order", pack_int_id - 1,
				  pack_int_id);
		prev = name;
		if ((!midx_find_pack(m, name, &found) || found != pack_int_id) &&
		    !lax_names)
			fuzz_fail("pack %u ('%s') not found at its id (got %u)",
				  pack_int_id, name, found);

		/* The same pack by its .pack name, when it has an .idx one. */
		if (len > 4 && !strcmp(name + len - 4, ".idx")) {
			pack = xmalloc(len + 2);
			memcpy(pack, name, len - 4);
			strcpy(pack + len - 4, ".pack");
			found = UINT32_MAX;
			if (!midx_find_pack(m, pack, &found) || found != pack_int_id)
				fuzz_fail("pack %u not found as '%s' (got %u)",
					  pack_int_id, pack, found);
			free(pack);
		}
	}
	{
		uint32_t found;
		if (nr == 0 && midx_find_pack(m, "pack-0.idx", &found))
			fuzz_fail("midx_find_pack found a pack in a MIDX of none");
	}
}

static uint64_t check_objects(struct midx *m, int algo)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	uint32_t nr = midx_nr_objects(m);
	uint64_t sink = 0;

	for (uint32_t midx_pos = 0; midx_pos < nr; midx_pos++) {
		struct object_id oid, probe;
		uint32_t found = UINT32_MAX;
		bool wrapped = true;

		midx_nth_oid(m, midx_pos, &oid);
		if (memcmp(oid.hash, midx_nth_oid_raw(m, midx_pos), rawsz))
			fuzz_fail("midx_nth_oid and midx_nth_oid_raw differ at %u",
				  midx_pos);
		if (!midx_find_oid(m, &oid, &found) || found != midx_pos)
			fuzz_fail("object %u not found at its own position (got %u)",
				  midx_pos, found);
		if (midx_nth_pack(m, midx_pos) >= midx_nr_packs(m))
			fuzz_fail("object %u in pack %u of %u", midx_pos,
				  midx_nth_pack(m, midx_pos), midx_nr_packs(m));
		sink += midx_nth_offset(m, midx_pos);

		/* A name just past this one is absent unless it is the next. */
		probe = oid;
		for (size_t i = rawsz; i-- > 0;)
			if (++probe.hash[i]) {
				wrapped = false;
				break;
			}
		if (!wrapped && midx_find_oid(m, &probe, &found) &&
		    (found != midx_pos + 1 ||
		     memcmp(midx_nth_oid_raw(m, found), probe.hash, rawsz)))
			fuzz_fail("midx_find_oid found a name that is not there");
	}
	return sink;
}

static void check_pseudo_order(struct midx *m)
{
	struct gp_error err = GP_ERROR_INIT;
	uint32_t nr = midx_nr_objects(m);
	bool lax = fuzz_midx_lax();
	uint32_t pack_int_id;
	int ret;

	ret = midx_load_pseudo_order(m, true, &err);
	if (ret) {
		/*
		 * An allocation may fail; a RIDX chunk that is no permutation
		 * may be refused here rather than at open.
		 */
		fuzz_check_error(ret, &err, 0, "midx_load_pseudo_order");
		return;
	}
	/* A second call is a no-op. */
	if (midx_load_pseudo_order(m, true, &err))
		fuzz_fail("midx_load_pseudo_order failed the second time: %s",
			  gp_error_msg(&err));

	/*
	 * Once loaded, the two mappings are inverse bijections: a RIDX
	 * chunk that is not a permutation must have been refused (by
	 * midx_parse_buf() or by midx_load_pseudo_order()). Checked both
	 * ways, so that an inverse with holes is caught whatever the
	 * holes hold (regressions/midx/open-ridx-not-permutation).
	 */
	for (uint32_t pseudo_pos = 0; pseudo_pos < nr; pseudo_pos++) {
		uint32_t midx_pos = midx_pseudo_to_pos(m, pseudo_pos);
		if (midx_pos >= nr)
			fuzz_fail("pseudo position %u maps to object %u of %u",
				  pseudo_pos, midx_pos, nr);
		if (midx_pos_to_pseudo(m, midx_pos) != pseudo_pos && !lax)
			fuzz_fail("pseudo position %u -> object %u -> %u",
				  pseudo_pos, midx_pos, midx_pos_to_pseudo(m, midx_pos));
	}
	for (uint32_t midx_pos = 0; midx_pos < nr; midx_pos++) {
		uint32_t pseudo_pos = midx_pos_to_pseudo(m, midx_pos);
		if (lax && midx_has_ridx(m))
			break;
		if (pseudo_pos >= nr)
			fuzz_fail("object %u maps to pseudo position %u of %u",
				  midx_pos, pseudo_pos, nr);
		if (midx_pseudo_to_pos(m, pseudo_pos) != midx_pos)
			fuzz_fail("object %u -> pseudo position %u -> %u", midx_pos,
				  pseudo_pos, midx_pseudo_to_pos(m, pseudo_pos));
	}

	if (!midx_has_ridx(m))
		for (uint32_t pseudo_pos = 1; pseudo_pos < nr; pseudo_pos++) {
			uint32_t a = midx_pseudo_to_pos(m, pseudo_pos - 1);
			uint32_t b = midx_pseudo_to_pos(m, pseudo_pos);
			uint32_t pa = midx_nth_pack(m, a), pb = midx_nth_pack(m, b);
			uint64_t oa = midx_nth_offset(m, a), ob = midx_nth_offset(m, b);
			/*
			 * midx.c sorts by 40 bits of offset (packs up to 1 TiB):
			 * larger LOFF values, which only a damaged file holds,
			 * may come in any order.
			 */
			if (oa >> 40 || ob >> 40)
				continue;
			if (pa > pb || (pa == pb && oa > ob))
				fuzz_fail("computed order not by (pack, offset) at %u",
					  pseudo_pos);
		}

	ret = midx_preferred_pack(m, &pack_int_id, &err);
	if (midx_has_ridx(m) && nr) {
		if (ret)
			fuzz_fail("no preferred pack with a RIDX chunk: %s",
				  gp_error_msg(&err));
		if (pack_int_id != midx_nth_pack(m, midx_pseudo_to_pos(m, 0)))
			fuzz_fail("preferred pack %u is not the pack of pseudo position 0",
				  pack_int_id);
	} else {
		if (!ret)
			fuzz_fail("a preferred pack (%u) without RIDX or objects",
				  pack_int_id);
		fuzz_check_error(ret, &err, GP_ENOTFOUND, "midx_preferred_pack");
	}
}

static void fuzz_midx(const unsigned char *buf, size_t len, int algo, bool fixed)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t rawsz = gp_hash_algos[algo].rawsz;
	struct midx *m = NULL;
	uint64_t sink;
	int ret;

	ret = midx_parse_buf(&m, buf, len, "fuzz/multi-pack-index", algo, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "midx_parse_buf");
		return;
	}
	if (err.msg)
		fuzz_fail("midx_parse_buf succeeded with a message: %s", err.msg);
	if (!m)
		fuzz_fail("midx_parse_buf succeeded without a MIDX");
	if (!midx_path(m) || !*midx_path(m))
		fuzz_fail("a MIDX without a path");
	if (len < rawsz || !midx_checksum(m))
		fuzz_fail("a MIDX without a checksum");
	if (fixed && memcmp(midx_checksum(m), buf + len - rawsz, rawsz))
		fuzz_fail("midx_checksum is not the trailing hash");

	check_packs(m);
	sink = check_objects(m, algo);
	check_pseudo_order(m);
	/* Keep the reads from being optimised away. */
	if (sink == 1)
		fputc(0, stderr);
	midx_free(m);
}

/*
 * The same bytes as a multi-pack-index-chain file: when it parses, it is
 * exactly lines of hexsz hex digits, each '\n'-terminated, and the
 * hashes are those lines.
 */
static void fuzz_chain(const unsigned char *buf, size_t len, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t hexsz = gp_hash_algos[algo].hexsz, rawsz = gp_hash_algos[algo].rawsz;
	unsigned char *hashes = NULL;
	uint32_t nr = 0;
	int ret = midx_chain_parse((const char *)buf, len, algo, "fuzz/chain", &hashes, &nr, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "midx_chain_parse");
		return;
	}
	if ((uint64_t)nr * (hexsz + 1) != len)
		fuzz_fail("chain of %u layers parsed from %zu bytes", nr, len);
	for (uint32_t i = 0; i < nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		const char *line = (const char *)buf + (size_t)i * (hexsz + 1);
		hash_to_hex_r(hex, hashes + (size_t)i * rawsz, rawsz);
		if (strncasecmp(hex, line, hexsz) || line[hexsz] != '\n')
			fuzz_fail("chain line %u is not the hash parsed", i);
	}
	free(hashes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_midx_lax() && size >= 12 &&
	    ((uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 |
	     (uint32_t)data[10] << 8 | data[11]) > size)
		return 0;
	for (int algo = GP_HASH_SHA1; algo <= GP_HASH_SHA256; algo++) {
		/*
		 * Parse a private copy: the parser borrows the buffer, and a
		 * heap copy of the exact size lets ASan catch reads past it.
		 */
		unsigned char *copy = xmalloc(size ? size : 1);
		memcpy(copy, data, size);
		fuzz_midx(copy, size, algo, false);
		fuzz_chain(copy, size, algo);
		free(copy);

		if (fuzz_want_fixed_trailer(data, size)) {
			copy = fuzz_fix_trailer(data, size, algo);
			if (copy) {
				fuzz_midx(copy, size, algo, true);
				free(copy);
			}
		}
	}
	return 0;
}
