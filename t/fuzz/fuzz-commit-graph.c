/*
 * fuzz-commit-graph.c: commit-graph images through
 * commit_graph_parse_buf(), then every lookup that trusts what it
 * validated.
 *
 * Input: a whole commit-graph file, parsed as SHA-1 and as SHA-256
 * (seeds: t/fuzz/corpus/commit-graph/, written by git 2.39 "commit-graph
 * write --reachable" in a repository with merges, an octopus (EDGE), a
 * commit dated past 2^32 and one dated long before its parent (GDO2),
 * SHA-1 and SHA-256; the same with --changed-paths (BIDX, BDAT, which
 * the reader ignores); and the top layer of a --split chain (BASE),
 * which parses alone only as a layer, so it exercises the refusals).
 * When it parses:
 *
 *  - every id is found again by commit_graph_find() at its own position
 *    when the ids are strictly sorted (the reader leaves the order to
 *    verify; unsorted ids may be missed, never read out of bounds);
 *  - commit_graph_entry_at() succeeds or fails with GP_ECORRUPT and a
 *    message, and on success every parent position is inside the graph
 *    and the date fits in 34 bits.
 *
 * commit_graph_parse_buf() does not check the trailing checksum; with
 * fuzz_want_fixed_trailer() a copy with a recomputed one is parsed too.
 */
#include "fuzz.h"
#include "commit-graph.h"
#include "object.h"

static void check_graph(const struct commit_graph *g, const uint8_t *data, size_t size, int algo)
{
	uint32_t nr = commit_graph_nr_commits(g);
	size_t rawsz = gp_hash_algos[algo].rawsz;
	bool sorted = true;
	struct object_id prev;

	(void)data;
	(void)size;
	for (uint32_t pos = 0; pos < nr; pos++) {
		struct commit_graph_entry e;
		struct gp_error err = GP_ERROR_INIT;
		struct object_id oid;
		int ret;

		commit_graph_oid(g, pos, &oid);
		if (pos && memcmp(prev.hash, oid.hash, rawsz) >= 0)
			sorted = false;
		prev = oid;
		ret = commit_graph_entry_at(g, pos, &e, &err);
		if (ret) {
			fuzz_check_error(ret, &err, GP_ECORRUPT, "commit_graph_entry_at");
			continue;
		}
		if (e.date >> 34)
			fuzz_fail("commit %u: date %" PRIu64 " wider than 34 bits", pos, e.date);
		for (uint32_t n = 0; n < e.nr_parents; n++)
			if (commit_graph_parent(&e, n) >= nr)
				fuzz_fail("commit %u: parent %u at %u of %u", pos, n,
					  commit_graph_parent(&e, n), nr);
	}
	if (!sorted)
		return;
	for (uint32_t pos = 0; pos < nr; pos++) {
		struct object_id oid;
		uint32_t found = UINT32_MAX;
		commit_graph_oid(g, pos, &oid);
		/* The fanout is not checked against the ids at open. */
		if (commit_graph_find(g, &oid, &found) && found != pos)
			fuzz_fail("commit %u found at %u", pos, found);
	}
}

static void parse_one(const uint8_t *data, size_t size, int algo)
{
	struct commit_graph *g = NULL;
	struct gp_error err = GP_ERROR_INIT;
	int ret = commit_graph_parse_buf(&g, data, size, algo, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "commit_graph_parse_buf");
		return;
	}
	check_graph(g, data, size, algo);
	commit_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int algo = GP_HASH_SHA1; algo <= GP_HASH_SHA256; algo++) {
		parse_one(data, size, algo);
		if (fuzz_want_fixed_trailer(data, size)) {
			unsigned char *fixed = fuzz_fix_trailer(data, size, algo);
			if (fixed) {
				parse_one(fixed, size, algo);
				free(fixed);
			}
		}
	}
	return 0;
}
