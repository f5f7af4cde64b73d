/*
 * builtin/repack.c: gitpack repack, git repack's modes (repack.h), done
 * in-process: no pack-objects child, no fork.
 */
#include "../builtin.h"
#include "../config.h"
#include "../date.h"
#include "../error.h"
#include "../object-filter.h"
#include "../revision.h"
#include "../parse-options.h"
#include "../repack.h"
#include "../repository.h"
#include "../server-info.h"
#include "../walk-filter.h"
#include <time.h>
#include <unistd.h>

static const char *const repack_usage[] = {
	"git repack [-a] [-A] [-d] [-f] [-F] [-l] [-n] [-q] [-b] [-m]\n"
	"           [--window=<n>] [--depth=<n>] [--threads=<n>] [--keep-pack=<pack-name>]\n"
	"           [--write-midx[=<mode>]] [--name-hash-version=<n>] [--path-walk] [--cruft]\n"
	"           [--cruft-expiration=<approxidate>] [--geometric=<factor>]",
	NULL,
};

struct repack_expiry {
	bool set;
	int64_t when;
};

static int parse_when(const struct option *opt, const char *arg, int unset)
{
	struct repack_expiry *x = opt->value;
	x->set = !unset;
	x->when = 0;
	if (!unset && arg && !parse_expiry_date(arg, (int64_t)time(NULL), &x->when))
		return error("malformed expiration date '%s'", arg);
	/*
	 * These options read dates as git's approxidate does: "now" is
	 * this second, so an object dated in the future is still young.
	 */
	if (x->when == EXPIRY_EVERYTHING)
		x->when = (int64_t)time(NULL);
	return 0;
}

/* A size with git's k/m/g suffixes. */
static int parse_size(const struct option *opt, const char *arg, int unset)
{
	uint64_t *out = opt->value;
	int64_t v;
	char *end;
	if (unset) {
		*out = 0;
		return 0;
	}
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || v < 0)
		return error("invalid size '%s'", arg);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return error("invalid size '%s'", arg);
	*out = (uint64_t)v;
	return 0;
}

static int parse_filter(const struct option *opt, const char *arg, int unset)
{
	struct object_filter *f = opt->value;
	struct gp_error err = GP_ERROR_INIT;
	if (unset) {
		object_filter_release(f);
		return 0;
	}
	if (object_filter_add(f, arg, &err))
		die_error(&err);
	return 0;
}

static int parse_write_midx(const struct option *opt, const char *arg, int unset)
{
	int *mode = opt->value;
	if (unset)
		*mode = 0;
	else if (!arg || !strcmp(arg, "default"))
		*mode = 1;
	else if (!strcmp(arg, "incremental"))
		*mode = 2;
	else
		return error("unknown value for --write-midx: %s", arg);
	return 0;
}

/* An integer config key into *out, unless the command line set it (*out != unset). */
static void config_int(struct repository *repo, const char *key, int *out, int unset)
{
	struct gp_error err = GP_ERROR_INIT;
	int v, ret;
	if (*out != unset)
		return;
	ret = config_get_int(&repo->config, key, &v, &err);
	if (!ret)
		*out = v;
	else if (ret != GP_ENOTFOUND)
		die_error(&err);
	gp_error_clear(&err);
}


int cmd_repack(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repack_opts opts = REPACK_OPTS_INIT;
	struct repack_result result;
	struct opt_string_list keep = { 0 };
	int all = 0, all_loosen = 0, delete_old = 0, no_reuse_delta = 0, no_reuse_object = 0;
	int local = 0, quiet = 0, write_bitmap = -1, write_midx = 0, geometric = 0;
	int progress = -1, pack_kept_objects = -1, no_update_server_info = 0;
	int cruft = 0, keep_unreachable = 0, name_hash_version = 0, path_walk = 0;
	int delta_islands = -1;
	struct repack_expiry cruft_expiration = { 0 }, unpack_unreachable = { 0 };
	uint64_t max_cruft_size = 0, combine_cruft_below_size = 0, window_memory = 0;
	const char *expire_to = NULL, *filter_to = NULL;
	struct object_filter filter = OBJECT_FILTER_INIT;
	struct walk_filter *walk_filter = NULL;
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
		OPT_BOOL('m', NULL, &write_midx, "write a multi-pack index of the resulting packs"),
		OPT_CALLBACK_F(0, "write-midx", &write_midx, "mode",
			       "write a multi-pack index of the resulting packs",
			       PARSE_OPT_OPTARG, parse_write_midx),
		OPT_INTEGER('g', "geometric", &geometric, "roll up packs to keep a geometric progression with this factor"),
		OPT_STRING_LIST(0, "keep-pack", &keep, "name", "leave this pack alone"),
		OPT_BOOL(0, "pack-kept-objects", &pack_kept_objects, "copy the objects of .keep packs into the new pack too"),
		OPT_INTEGER(0, "window", &opts.window, "objects a delta search compares with"),
		OPT_INTEGER(0, "depth", &opts.depth, "longest delta chain"),
		OPT_INTEGER(0, "threads", &opts.threads, "threads for the delta search"),
		OPT_ULONG(0, "max-pack-size", &max_pack_size, "largest pack to write"),
		OPT_BOOL('n', NULL, &no_update_server_info, "do not run git-update-server-info"),
		OPT_BOOL(0, "cruft", &cruft, "same as -a, and pack unreachable objects into a cruft pack"),
		OPT_CALLBACK(0, "cruft-expiration", &cruft_expiration, "approxidate",
			     "with --cruft, expire objects older than this", parse_when),
		OPT_CALLBACK(0, "max-cruft-size", &max_cruft_size, "n",
			     "with --cruft, limit the size of new cruft packs", parse_size),
		OPT_CALLBACK(0, "combine-cruft-below-size", &combine_cruft_below_size, "n",
			     "with --cruft, only repack cruft packs smaller than this", parse_size),
		OPT_STRING(0, "expire-to", &expire_to, "dir", "pack prefix to store a pack containing pruned objects"),
		OPT_BOOL('k', "keep-unreachable", &keep_unreachable, "with -a, repack unreachable objects"),
		OPT_CALLBACK_F(0, "unpack-unreachable", &unpack_unreachable, "approxidate",
			       "with -A, do not loosen objects older than this",
			       PARSE_OPT_OPTARG, parse_when),
		OPT_BOOL('i', "delta-islands", &delta_islands, "keep deltas within the islands of pack.island"),
		OPT_INTEGER(0, "name-hash-version", &name_hash_version, "the name hash function (1 or 2)"),
		OPT_BOOL(0, "path-walk", &path_walk, "(accepted: objects are grouped by path anyway)"),
		OPT_CALLBACK(0, "window-memory", &window_memory, "bytes", "(accepted)", parse_size),
		OPT_CALLBACK(0, "filter", &filter, "args", "object filtering", parse_filter),
		OPT_STRING(0, "filter-to", &filter_to, "dir", "pack prefix to store a pack containing filtered out objects"),
		OPT_END(),
	};

	opts.window = opts.depth = opts.threads = -2;
	argc = parse_options(argc, argv, options, repack_usage);
	if (argc)
		usage_with_options(repack_usage, options);
	if (keep_unreachable && (unpack_unreachable.set || all_loosen))
		die("options '%s' and '%s' cannot be used together", "-k", "-A");
	if (keep_unreachable && cruft)
		die("options '%s' and '%s' cannot be used together", "--cruft", "-k");
	if (cruft && all_loosen)
		die("options '%s' and '%s' cannot be used together", "--cruft", "-A");
	if (unpack_unreachable.set && !all_loosen && !all)
		all_loosen = 1;
	if (geometric && (all || all_loosen))
		die("options '--geometric' and '-A/-a' cannot be used together");
	if (filter_to && filter.kind == OBJECT_FILTER_NONE)
		die("option '%s' can only be used along with '%s'", "--filter-to", "--filter");
	if (filter.kind != OBJECT_FILTER_NONE) {
		struct odb *odb;
		if (repo_odb(repo, &odb, &err))
			die_error(&err);
		walk_filter = walk_filter_or_die(repo, odb, &filter);
		opts.filter = walk_filter;
		opts.filter_to = filter_to;
	}
	if (cruft_expiration.set && !cruft)
		warning("--cruft-expiration is only useful with --cruft");
	/* 0 is "not given", as git's repack does not pass it on then */
	if (name_hash_version < 0 || name_hash_version > 2)
		die("invalid --name-hash-version option: %d", name_hash_version);
	opts.name_hash_version_arg = name_hash_version;
	/* pack-objects' own defaults and config, as git's child would read them. */
	config_int(repo, "pack.window", &opts.window, -2);
	config_int(repo, "pack.depth", &opts.depth, -2);
	config_int(repo, "pack.threads", &opts.threads, -2);
	if (opts.window == -2)
		opts.window = 10;
	if (opts.depth == -2)
		opts.depth = 50;
	if (opts.threads == -2)
		opts.threads = 0;
	opts.big_file_threshold = big_file_threshold_config(repo);
	config_int(repo, "repack.cruftwindow", &opts.cruft_window, -1);
	config_int(repo, "repack.cruftdepth", &opts.cruft_depth, -1);
	config_int(repo, "repack.cruftthreads", &opts.cruft_threads, -1);
	opts.midx_must_contain_cruft = repo_config_bool(repo, "repack.midxmustcontaincruft", 1);
	opts.midx_split_factor = repo_config_int(repo, "repack.midxsplitfactor", 2);
	opts.midx_new_layer_threshold = repo_config_int(repo, "repack.midxnewlayerthreshold", 8);
	/* As git, whether or not an incremental MIDX is asked for. */
	if (opts.midx_split_factor < 2)
		die("invalid value for %s: %d", "--midx-split-factor", opts.midx_split_factor);
	if (opts.midx_new_layer_threshold < 1)
		die("invalid value for %s: %d", "--midx-new-layer-threshold",
		    opts.midx_new_layer_threshold);
	if (delete_old && repo->precious_objects)
		die("cannot delete packs in a precious-objects repo");
	if (cruft && !delete_old)
		all = 1;
	/* repack.writeBitmaps set either way decides; unset leaves the default below. */
	if (write_bitmap < 0 && repo_config_bool(repo, "repack.writebitmaps", false))
		write_bitmap = 1;
	else if (write_bitmap < 0 && !repo_config_bool(repo, "repack.writebitmaps", true))
		write_bitmap = 0;
	if (write_bitmap < 0) {
		/* By default, bare repositories get a bitmap with every full repack. */
		opts.bitmap_quiet = true;
		write_bitmap = repo->bare && (all || all_loosen || cruft) && !write_midx;
	}
	if (write_bitmap > 0 && !(all || all_loosen || cruft) && !write_midx)
		die("Incremental repacks are incompatible with bitmap indexes.  Use\n"
		    "--no-write-bitmap-index or disable the pack.writeBitmaps configuration.");
	opts.no_rev_index = !repo_config_bool(repo, "pack.writereverseindex", 1);
	opts.all = all || all_loosen || cruft;
	opts.cruft = cruft;
	opts.has_cruft_expiration = cruft_expiration.set;
	opts.cruft_expiration = cruft_expiration.when;
	opts.max_cruft_size = max_cruft_size;
	opts.expire_to = expire_to;
	opts.combine_cruft_below_size = combine_cruft_below_size;
	opts.keep_unreachable = keep_unreachable;
	opts.unpack_unreachable = unpack_unreachable.set ? unpack_unreachable.when : 0;
	opts.loosen_unreachable = all_loosen;
	opts.delete_old = delete_old;
	opts.local = local;
	opts.write_bitmap = write_bitmap;
	opts.write_midx = write_midx;
	opts.midx_incremental = write_midx == 2;
	opts.geometric = geometric;
	if (delta_islands < 0)
		delta_islands = repo_config_bool(repo, "repack.usedeltaislands", 0);
	opts.delta_islands = delta_islands;
	opts.path_walk = path_walk;
	/* what git's pack-objects child would use: the option, else its test knob, else 1 */
	opts.name_hash_version = name_hash_version;
	if (!opts.name_hash_version) {
		const char *env = getenv("GIT_TEST_NAME_HASH_VERSION");
		opts.name_hash_version = env && atoi(env) == 2 ? 2 : 1;
	}
	if (opts.write_bitmap && !write_midx && opts.name_hash_version != 1) {
		warning("currently, --write-bitmap-index requires --name-hash-version=1");
		opts.name_hash_version = 1;
	}
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

	if (opts.write_bitmap && opts.filter && opts.bitmap_quiet)
		opts.write_bitmap = false;
	if (opts.write_bitmap && opts.filter)
		die("options '%s' and '%s' cannot be used together", "--filter", "--write-bitmap-index");
	if (opts.write_bitmap) {
		warn_bitmap_config(repo);
		check_pseudo_merge_config(repo);
	}
	if (repack_run(repo, &opts, &result, &err))
		die_error(&err);
	if (result.bitmap_skipped && !opts.bitmap_quiet)
		warning("disabling bitmap writing, packs are split due to "
			"--max-pack-size or pack.packSizeLimit");
	if (result.bitmap_incomplete && !opts.bitmap_quiet)
		warning("disabling bitmap writing, as some objects are not being packed");
	if (!no_update_server_info && repo_config_bool(repo, "repack.updateserverinfo", 1) &&
	    update_server_info(repo, &err))
		die_error(&err);
	if (!quiet && !result.new_packs.nr)
		printf("Nothing new to pack.\n");
	repack_result_release(&result);
	walk_filter_free(walk_filter);
	object_filter_release(&filter);
	free(keep.items);
	return 0;
}
