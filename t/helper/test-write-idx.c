/*
 * test-write-idx.c: test-tool write-idx, to fabricate pack indexes with
 * offsets no test can afford to make real (packs over 4 GiB), so that
 * 64-bit offset handling (idx large offsets, MIDX LOFF) can be compared
 * with git on the same files.
 *
 *   test-tool write-idx [--object-format=ALGO] [--pack-hash=HEX] OUT.idx
 *
 * reads "<object name> <offset>" lines on stdin (any order) and writes a
 * version 2 .idx with CRCs of 0. The pack checksum defaults to zeros.
 */
#include "../../error.h"
#include "../../hash.h"
#include "../../object.h"
#include "../../pack-write.h"
#include "../../strbuf.h"
#include "test-tool.h"

int cmd__write_idx(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf line = STRBUF_INIT;
	struct pack_idx_opts opts = PACK_IDX_OPTS_INIT;
	unsigned char pack_hash[GP_MAX_RAWSZ] = { 0 };
	unsigned char *oids = NULL;
	uint64_t *offsets = NULL;
	uint32_t *crcs = NULL, *by_name;
	size_t nr = 0, alloc = 0, alloc_ofs = 0, alloc_crc = 0;
	int algo = GP_HASH_SHA1, ret = 0;
	const char *out = NULL, *val;
	struct pack_idx_input in;

	for (int i = 1; i < argc; i++) {
		if (skip_prefix(argv[i], "--object-format=", &val))
			algo = hash_algo_by_name(val);
		else if (skip_prefix(argv[i], "--pack-hash=", &val)) {
			struct object_id h;
			if (!algo || parse_oid_hex_exact(val, algo, &h)) {
				fprintf(stderr, "bad --pack-hash\n");
				return 129;
			}
			memcpy(pack_hash, h.hash, gp_hash_algos[algo].rawsz);
		} else
			out = argv[i];
	}
	if (!algo || !out) {
		fprintf(stderr, "usage: test-tool write-idx [--object-format=ALGO] [--pack-hash=HEX] OUT.idx\n");
		return 129;
	}
	while (strbuf_getline(&line, stdin)) {
		size_t rawsz = gp_hash_algos[algo].rawsz, hexsz = gp_hash_algos[algo].hexsz;
		struct object_id oid;
		char *end;
		if (line.len < hexsz + 2 || line.buf[hexsz] != ' ' || hex_to_oid(line.buf, algo, &oid)) {
			fprintf(stderr, "bad line: %s\n", line.buf);
			return 128;
		}
		ALLOC_GROW(offsets, nr + 1, alloc_ofs);
		ALLOC_GROW(crcs, nr + 1, alloc_crc);
		if (nr + 1 > alloc) {
			alloc = (nr + 16) * 2;
			oids = xrealloc(oids, alloc * rawsz);
		}
		memcpy(oids + nr * rawsz, oid.hash, rawsz);
		offsets[nr] = strtoull(line.buf + hexsz + 1, &end, 10);
		crcs[nr] = 0;
		nr++;
	}
	by_name = pack_sort_by_name(oids, (uint32_t)nr, algo);
	in.algo = algo;
	in.nr = (uint32_t)nr;
	in.by_name = by_name;
	in.oids = oids;
	in.offsets = offsets;
	in.crcs = crcs;
	in.pack_hash = pack_hash;
	if (pack_write_idx(out, NULL, &in, &opts, &err)) {
		fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
		ret = 128;
	}
	gp_error_clear(&err);
	strbuf_release(&line);
	free(by_name);
	free(oids);
	free(offsets);
	free(crcs);
	return ret;
}
