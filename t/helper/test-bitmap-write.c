/*
 * test-bitmap-write.c: test-tool bitmap-write, the single-pack bitmap
 * writer of pack-bitmap-write.h, which no command drives yet (git drives
 * it from pack-objects and repack -b).
 *
 *   test-tool bitmap-write [--no-hash-cache] [--no-lookup-table]
 *			    [--threads=N] [--stats] <pack.idx>
 *
 * writes pack-<hash>.bitmap beside the pack whose .idx is given (one of
 * the repository's own packs), over its pack order, with every ref as a
 * tip (those under a pack.preferBitmapTips prefix preferred). The hash
 * cache and the lookup table are on unless turned off. With --stats,
 * prints "commits N", "selected N" and "size N" (bitmap_write_stats).
 *
 * Run inside a repository. Errors print the library's message and exit
 * 128.
 */
#include "../../error.h"
#include "../../odb.h"
#include "../../pack-bitmap.h"
#include "../../pack-bitmap-write.h"
#include "../../repack-bitmap.h"
#include "../../packfile.h"
#include "../../repository.h"
#include "test-tool.h"

static const char usage_str[] =
	"usage: test-tool bitmap-write [--no-hash-cache] [--no-lookup-table] "
	"[--threads=N] [--stats] <pack.idx>\n";

/* The pack of odb whose .idx is idx_path (compared once resolved). */
static struct packed_git *find_pack(struct odb *odb, const char *idx_path)
{
	struct packed_git *found = NULL;
	char *want = realpath(idx_path, NULL);

	if (!want)
		return NULL;
	for (size_t i = 0; i < odb_nr_packs(odb) && !found; i++) {
		struct packed_git *p = odb_pack(odb, i);
		char *have = realpath(p->idx_path, NULL);
		if (have && !strcmp(have, want))
			found = p;
		free(have);
	}
	free(want);
	return found;
}

int cmd__bitmap_write(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct bitmap_write_opts opts = { 0 };
	struct bitmap_write_stats stats = { 0 };
	struct repository *repo = NULL;
	struct bitmap_order *order = NULL;
	struct bitmap_write_tip *tips = NULL;
	size_t nr_tips = 0;
	struct packed_git *p;
	struct odb *odb;
	const char *idx_path = NULL, *val;
	bool show_stats = false;
	int ret = 0;

	opts.hash_cache = true;
	opts.lookup_table = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-hash-cache"))
			opts.hash_cache = false;
		else if (!strcmp(argv[i], "--no-lookup-table"))
			opts.lookup_table = false;
		else if (!strcmp(argv[i], "--stats"))
			show_stats = true;
		else if (skip_prefix(argv[i], "--threads=", &val))
			opts.threads = atoi(val);
		else if (!idx_path && argv[i][0] != '-')
			idx_path = argv[i];
		else {
			fputs(usage_str, stderr);
			return 129;
		}
	}
	if (!idx_path) {
		fputs(usage_str, stderr);
		return 129;
	}

	if (repo_discover(&repo, NULL, &err) || repo_odb(repo, &odb, &err))
		goto fail;
	p = find_pack(odb, idx_path);
	if (!p) {
		fprintf(stderr, "fatal: %s is not one of the repository's packs\n", idx_path);
		ret = 128;
		goto out;
	}
	if (bitmap_order_for_pack(&order, p, &err))
		goto fail;
	if (bitmap_tips_from_refs(repo, &tips, &nr_tips, &err))
		goto fail;
	opts.tips = tips;
	opts.nr_tips = nr_tips;
	if (bitmap_write(order, odb, &opts, &stats, &err))
		goto fail;
	if (show_stats)
		printf("commits %" PRIu32 "\nselected %" PRIu32 "\nsize %" PRIu64 "\n",
		       stats.nr_commits, stats.nr_selected, stats.file_size);
	goto out;
fail:
	fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
	ret = 128;
out:
	gp_error_clear(&err);
	bitmap_order_free(order);
	free(tips);
	repo_free(repo);
	return ret;
}
