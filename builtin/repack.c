/*
 * builtin/repack.c: gitpack repack, git repack's modes (repack.h), done
 * in-process: no pack-objects child, no fork.
 */
#include "../builtin.h"
#include "../error.h"
#include "../parse-options.h"
#include "../repack.h"
#include "../repository.h"
#include <unistd.h>

static const char *const repack_usage[] = {
	"gitpack repack [-a] [-A] [-d] [-f] [-F] [-l] [-q] [-b] [--write-midx] [--geometric=<factor>] [--keep-pack=<pack>] [--pack-kept-objects] [--window=<n>] [--depth=<n>] [--threads=<n>] [--max-pack-size=<n>]",
	NULL,
};

int cmd_repack(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repack_opts opts = REPACK_OPTS_INIT;
	struct repack_result result;
	struct opt_string_list keep = { 0 };
	int all = 0, all_loosen = 0, delete_old = 0, no_reuse_delta = 0, no_reuse_object = 0;
	int local = 0, quiet = 0, write_bitmap = -1, write_midx = 0, geometric = 0;
	int progress = -1, ignored = 0, pack_kept_objects = -1;
	unsigned long max_pack_size = 0;
	struct option options[] = {
		OPT_BOOL('a', NULL, &all, "pack everything in a single pack"),
		OPT_BOOL('A', NULL, &all_loosen, "same as -a, and turn unreachable objects loose"),
		OPT_BOOL('d', NULL, &delete_old, "remove redundant packs and loose objects"),
		OPT_BOOL('f', NULL, &no_reuse_delta, "search deltas anew (pack-objects --no-reuse-delta)"),
		OPT_BOOL('F', NULL, &no_reuse_object, "recompress everything (pack-objects --no-reuse-object)"),
		OPT_BOOL('l', "local", &local, "leave out objects of alternates"),
		OPT__QUIET(&quiet, "no progress meters"),
		OPT_BOOL(0, "progress", &progress, "progress meters on stderr"),
		OPT_BOOL('b', "write-bitmap-index", &write_bitmap, "write a bitmap index"),
		OPT_BOOL('m', "write-midx", &write_midx, "write a multi-pack index of the resulting packs"),
		OPT_INTEGER('g', "geometric", &geometric, "roll up packs to keep a geometric progression with this factor"),
		OPT_STRING_LIST(0, "keep-pack", &keep, "name", "leave this pack alone"),
		OPT_BOOL(0, "pack-kept-objects", &pack_kept_objects, "copy the objects of .keep packs into the new pack too"),
		OPT_INTEGER(0, "window", &opts.window, "objects a delta search compares with"),
		OPT_INTEGER(0, "depth", &opts.depth, "longest delta chain"),
		OPT_INTEGER(0, "threads", &opts.threads, "threads for the delta search"),
		OPT_ULONG(0, "max-pack-size", &max_pack_size, "largest pack to write"),
		OPT_BOOL('n', NULL, &ignored, "(accepted: there is no update-server-info here)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, repack_usage);
	if (argc)
		usage_with_options(repack_usage, options);
	if (geometric && (all || all_loosen))
		die("options '--geometric' and '-A/-a' cannot be used together");
	if (write_bitmap < 0)
		write_bitmap = 0;
	if (write_bitmap && !(all || all_loosen) && !write_midx) {
		fprintf(stderr, "warning: --write-bitmap-index without -a or --write-midx is ignored: "
			"a bitmap needs every reachable object in one pack or MIDX\n");
		write_bitmap = 0;
	}
	opts.all = all || all_loosen;
	opts.loosen_unreachable = all_loosen;
	opts.delete_old = delete_old;
	opts.local = local;
	opts.write_bitmap = write_bitmap;
	opts.write_midx = write_midx;
	opts.geometric = geometric;
	opts.reuse_delta = !no_reuse_delta;
	opts.reuse_object = !no_reuse_object;
	if (pack_kept_objects < 0) {
		bool v;
		int ret = config_get_bool(&repo->config, "repack.packkeptobjects", &v, &err);
		if (!ret)
			pack_kept_objects = v;
		else if (ret != GP_ENOTFOUND)
			die_error(&err);
		gp_error_clear(&err);
	}
	opts.pack_kept_objects = pack_kept_objects;
	opts.max_pack_size = max_pack_size_option(repo, max_pack_size);
	opts.keep_packs = keep.items;
	opts.nr_keep_packs = keep.nr;
	opts.progress = progress < 0 ? (!quiet && isatty(2)) : progress && !quiet;

	if (repack_run(repo, &opts, &result, &err))
		die_error(&err);
	if (result.bitmap_skipped)
		warning("disabling bitmap writing, packs are split due to "
			"--max-pack-size or pack.packSizeLimit");
	if (!quiet && !result.new_packs.nr && !write_midx)
		printf("Nothing new to pack.\n");
	repack_result_release(&result);
	free(keep.items);
	return 0;
}
