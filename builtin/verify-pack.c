/*
 * builtin/verify-pack.c: gitpack verify-pack. Re-indexes each pack from
 * scratch (every object inflated, every delta applied, every name and
 * CRC recomputed, the pack checksum checked) and compares the result
 * with the .idx on disk entry by entry, then prints git's report.
 */
#include "../builtin.h"
#include "../error.h"
#include "../object.h"
#include "../pack-indexer.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../repository.h"

static const char *const verify_pack_usage[] = {
	"git verify-pack [-v | --verbose] [-s | --stat-only] [--] <pack>.idx...",
	NULL,
};

/* The freshly computed index must match the stored one exactly. */
static int compare_with_idx(const struct indexed_pack *ip, const char *idx_path,
			    struct gp_error *err)
{
	struct packed_git *p;
	size_t rawsz = gp_hash_algos[ip->algo].rawsz;
	int ret = pack_open_idx(&p, idx_path, ip->algo, err);
	if (ret)
		return ret;
	if (p->nr_objects != ip->nr) {
		ret = gp_error_set(err, GP_ECORRUPT, "%s: index lists %" PRIu32
				   " objects, the pack has %" PRIu32, idx_path, p->nr_objects, ip->nr);
		goto out;
	}
	{
		/* The index's own checksum, over everything before it. */
		unsigned char sum[GP_MAX_RAWSZ];
		hash_buf_checksum(ip->algo, p->idx_map, p->idx_size - rawsz, sum);
		if (memcmp(sum, p->idx_map + p->idx_size - rawsz, rawsz)) {
			ret = gp_error_set(err, GP_ECORRUPT, "%s: at offset %zu: index checksum mismatch",
					   idx_path, p->idx_size - rawsz);
			goto out;
		}
	}
	if (memcmp(p->pack_hash, ip->pack_hash, rawsz)) {
		ret = gp_error_set(err, GP_ECORRUPT, "%s: pack checksum in the index does not match the pack",
				   idx_path);
		goto out;
	}
	for (uint32_t idx_pos = 0; idx_pos < ip->nr; idx_pos++) {
		uint32_t pack_pos = ip->by_name[idx_pos];
		if (memcmp(pack_nth_oid_raw(p, idx_pos), ip->oids + (size_t)pack_pos * rawsz, rawsz) ||
		    pack_nth_offset(p, idx_pos) != ip->offsets[pack_pos] ||
		    (p->idx_version >= 2 && pack_nth_crc(p, idx_pos) != ip->crcs[pack_pos])) {
			ret = gp_error_set(err, GP_ECORRUPT, "%s: entry %" PRIu32
					   " does not match the pack", idx_path, idx_pos);
			goto out;
		}
	}
out:
	pack_free(p);
	return ret;
}

void verify_pack_print_objects(const struct indexed_pack *ip)
{
	size_t rawsz = gp_hash_algos[ip->algo].rawsz;
	for (uint32_t pack_pos = 0; pack_pos < ip->nr; pack_pos++) {
		char hex[GP_MAX_HEXSZ + 1];
		hash_to_hex_r(hex, ip->oids + (size_t)pack_pos * rawsz, rawsz);
		printf("%s %-6s %" PRIu64 " %" PRIu64 " %" PRIu64, hex,
		       type_name((enum object_type)ip->real_types[pack_pos]),
		       ip->sizes[pack_pos], ip->offsets[pack_pos + 1] - ip->offsets[pack_pos],
		       ip->offsets[pack_pos]);
		if (ip->depths[pack_pos]) {
			char base[GP_MAX_HEXSZ + 1];
			hash_to_hex_r(base, ip->oids + (size_t)ip->bases[pack_pos] * rawsz, rawsz);
			printf(" %" PRIu32 " %s", ip->depths[pack_pos], base);
		}
		putchar('\n');
	}
}

void verify_pack_print_histogram(const struct indexed_pack *ip)
{
	uint32_t max_depth = 0;
	uint64_t *counts;
	for (uint32_t pack_pos = 0; pack_pos < ip->nr; pack_pos++)
		max_depth = MAX(max_depth, ip->depths[pack_pos]);
	counts = xcalloc((size_t)max_depth + 1, sizeof(*counts));
	for (uint32_t pack_pos = 0; pack_pos < ip->nr; pack_pos++)
		counts[ip->depths[pack_pos]]++;
	if (counts[0])
		printf("non delta: %" PRIu64 " object%s\n", counts[0], counts[0] == 1 ? "" : "s");
	for (uint32_t depth = 1; depth <= max_depth; depth++)
		if (counts[depth])
			printf("chain length = %" PRIu32 ": %" PRIu64 " object%s\n", depth,
			       counts[depth], counts[depth] == 1 ? "" : "s");
	free(counts);
}

static int verify_one(const char *arg, int algo, int verbose, int stat_only,
		      bool progress)
{
	struct pack_indexer_opts opts = PACK_INDEXER_OPTS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct indexed_pack *ip = NULL;
	size_t base_len = strlen(arg);
	char *pack_path, *idx_path;
	int ret;

	if (ends_with(arg, ".idx"))
		base_len -= 4;
	else if (ends_with(arg, ".pack"))
		base_len -= 5;
	pack_path = xstrfmt("%.*s.pack", (int)base_len, arg);
	idx_path = xstrfmt("%.*s.idx", (int)base_len, arg);
	opts.algo = algo;
	opts.keep_stats = true;
	opts.progress = progress;
	ret = pack_index(pack_path, &opts, &ip, &err);
	if (!ret)
		ret = compare_with_idx(ip, idx_path, &err);
	if (ret) {
		error("%s", gp_error_msg(&err));
	} else {
		if (verbose && !stat_only)
			verify_pack_print_objects(ip);
		if (verbose || stat_only)
			verify_pack_print_histogram(ip);
	}
	if (!stat_only || ret)
		if (verbose || ret)
			printf("%s: %s\n", pack_path, ret ? "bad" : "ok");
	fflush(stdout);
	indexed_pack_free(ip);
	gp_error_clear(&err);
	free(pack_path);
	free(idx_path);
	return ret ? -1 : 0;
}

int cmd_verify_pack(int argc, const char **argv, struct repository *repo)
{
	int verbose = 0, stat_only = 0, failed = 0, progress = -1;
	const char *object_format = NULL;
	int algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	struct option options[] = {
		OPT_BOOL('v', "verbose", &verbose, "verbose"),
		OPT_BOOL('s', "stat-only", &stat_only, "show statistics only"),
		OPT_STRING(0, "object-format", &object_format, "hash", "the object format of the packs"),
		OPT_BOOL(0, "progress", &progress, "show progress (default: when stderr is a terminal)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, verify_pack_usage);
	if (argc < 1)
		usage_with_options(verify_pack_usage, options);
	if (object_format) {
		algo = hash_algo_by_name(object_format);
		if (!algo)
			die("unknown hash algorithm '%s'", object_format);
	}
	for (int i = 0; i < argc; i++)
		if (verify_one(argv[i], algo, verbose, stat_only,
			       progress < 0 ? isatty(2) : progress))
			failed = 1;
	return failed;
}
