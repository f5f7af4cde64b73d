/*
 * builtin/multi-pack-index.c: gitpack multi-pack-index write, verify,
 * expire and repack. Options and messages are git 2.55's; the work is
 * in midx-write.c, midx-maint.c and midx.c.
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../midx.h"
#include "../midx-maint.h"
#include "../midx-write.h"
#include "../pack-bitmap-write.h"
#include "../repack-bitmap.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../strbuf.h"

static const char *const midx_usage[] = {
	"git multi-pack-index [<options>] write [--preferred-pack=<pack>]\n"
	"  [--[no-]bitmap] [--[no-]incremental] [--[no-]stdin-packs]\n"
	"  [--refs-snapshot=<path>] [--[no-]write-chain-file]\n"
	"  [--base=<checksum>]",
	"git multi-pack-index [<options>] compact [--[no-]incremental]\n"
	"  [--[no-]bitmap] [--base=<checksum>] [--[no-]write-chain-file]\n"
	"  <from> <to>",
	"git multi-pack-index [<options>] verify",
	"git multi-pack-index [<options>] expire",
	"git multi-pack-index [<options>] repack [--batch-size=<size>]",
	NULL,
};

struct midx_cmd {
	struct repository *repo;
	const char *object_dir;  /* --object-dir, or NULL */
	int progress;            /* -1: when stderr is a terminal */
	int algo;
	char *objdir;
	char *pack_dir;
};

#define COMMON_OPTIONS(c) \
	OPT_STRING(0, "object-dir", &(c)->object_dir, "directory", \
		   "object directory containing set of packfile and pack-index pairs"), \
	OPT_BOOL(0, "progress", &(c)->progress, "force progress reporting")

/* After the subcommand's options: where the packs are, and progress. */
static void setup(struct midx_cmd *c)
{
	if (c->object_dir)
		c->objdir = xstrdup(c->object_dir);
	else if (c->repo)
		c->objdir = xstrdup(c->repo->objdir);
	else
		die("not a git repository (or any of the parent directories): .git");
	c->pack_dir = xstrfmt("%s/pack", c->objdir);
	if (c->progress < 0)
		c->progress = isatty(2);
}

/* midx.version, or 0 when unset (the writer's default); dies on a bad value, as git does. */
static unsigned midx_version_config(struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	int v = 0;
	int ret = c->repo ? config_get_int(&c->repo->config, "midx.version", &v, &err) : GP_ENOTFOUND;
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(&err);
		return 0;
	}
	if (ret)
		die_error(&err);
	if (v != MIDX_VERSION && v != MIDX_VERSION_2)
		die("unknown MIDX version: %d", v);
	return (unsigned)v;
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") &&
	       strcasecmp(v, "off");
}

static void write_warnings(const struct midx_write_result *result, const char *preferred)
{
	if (result->old_corrupt)
		warning("ignoring existing multi-pack-index; checksum mismatch");
	if (result->preferred_unknown)
		warning("unknown preferred pack: '%s'", preferred);
	if (result->no_objects)
		warning("refusing to write multi-pack .bitmap without any objects");
}

static int cmd_write(int argc, const char **argv, struct midx_cmd *c)
{
	struct midx_write_opts opts = MIDX_WRITE_OPTS_INIT;
	struct midx_write_result result;
	struct gp_error err = GP_ERROR_INIT;
	const char *preferred = NULL, *refs_snapshot = NULL, *base = NULL;
	int stdin_packs = 0, bitmap = 0, incremental = 0, chain_file = 1;
	char **names = NULL;
	size_t nr_names = 0, alloc_names = 0;
	struct option options[] = {
		OPT_STRING(0, "preferred-pack", &preferred, "preferred-pack",
			   "pack for reuse when computing a multi-pack bitmap"),
		OPT_BOOL(0, "bitmap", &bitmap, "write multi-pack bitmap"),
		OPT_STRING(0, "base", &base, "checksum", "base MIDX for incremental writes"),
		OPT_BOOL(0, "incremental", &incremental, "write a new incremental MIDX"),
		OPT_BOOL(0, "write-chain-file", &chain_file, "write the multi-pack-index chain file"),
		OPT_BOOL(0, "stdin-packs", &stdin_packs,
			 "write multi-pack index containing only given indexes"),
		OPT_STRING(0, "refs-snapshot", &refs_snapshot, "file",
			   "refs snapshot for selecting bitmap commits"),
		COMMON_OPTIONS(c),
		OPT_END(),
	};
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	if (!chain_file && !incremental) {
		error("cannot use %s without %s", "--no-write-chain-file", "--incremental");
		usage_with_options(midx_usage, options);
	}
	if (base && chain_file) {
		error("cannot use --base without --no-write-chain-file");
		usage_with_options(midx_usage, options);
	}
	setup(c);
	if (bitmap && !c->repo)
		die("--bitmap needs a repository (its refs choose the commits)");
	if (bitmap)
		check_pseudo_merge_config(c->repo);
	if (stdin_packs) {
		struct strbuf line = STRBUF_INIT;
		while (strbuf_getline(&line, stdin)) {
			ALLOC_GROW(names, nr_names + 1, alloc_names);
			names[nr_names++] = strbuf_detach(&line, NULL);
		}
		strbuf_release(&line);
		opts.only_packs = (const char *const *)names;
		opts.nr_only = nr_names;
		opts.only_given = true;
	}
	opts.preferred_pack = preferred;
	opts.progress = c->progress;
	opts.version = midx_version_config(c);
	opts.incremental = incremental;
	opts.no_chain_file = !chain_file;
	opts.base = base;
	/* A MIDX bitmap counts in the pseudo-pack order: RIDX holds it. */
	opts.write_ridx = bitmap;
	opts.write_rev_file = bitmap && env_true("GIT_TEST_MIDX_WRITE_REV");
	opts.defer_install = bitmap;
	ret = midx_write(c->pack_dir, c->algo, &opts, &result, &err);
	for (size_t i = 0; i < nr_names; i++)
		free(names[i]);
	free(names);
	write_warnings(&result, preferred);
	if (ret == GP_EINVAL) {
		error("%s", gp_error_msg(&err));
		midx_write_result_release(&result);
		return 1;
	}
	if (ret)
		die_error(&err);
	/*
	 * A layer on a base of the caller's choosing may not cover what
	 * its commits reach: then it goes without a bitmap.
	 */
	result.bitmap_optional = base != NULL;
	/* A layer with no new pack is not written: nothing to bitmap. */
	if (bitmap && !(opts.incremental && !result.written) &&
	    midx_write_bitmap(c->repo, c->objdir, &result, refs_snapshot, c->progress, &err))
		die_error(&err);
	if (result.bitmap_skipped)
		warning("no multi-pack bitmap for this layer: its objects and those of its base"
			" do not cover everything its commits reach");
	/* --no-write-chain-file: the caller assembles the chain from this. */
	if (result.written && opts.incremental && opts.no_chain_file) {
		char hex[GP_MAX_HEXSZ + 1];
		printf("%s\n", hash_to_hex_r(hex, result.checksum, gp_hash_algos[c->algo].rawsz));
	}
	midx_write_result_release(&result);
	return 0;
}

static int cmd_compact(int argc, const char **argv, struct midx_cmd *c)
{
	struct midx_write_opts opts = MIDX_WRITE_OPTS_INIT;
	struct midx_write_result result;
	struct gp_error err = GP_ERROR_INIT;
	const char *base = NULL;
	int bitmap = 0, incremental = 0, chain_file = 1;
	struct option options[] = {
		OPT_STRING(0, "base", &base, "checksum", "base MIDX for incremental writes"),
		OPT_BOOL(0, "bitmap", &bitmap, "write multi-pack bitmap"),
		OPT_BOOL(0, "incremental", &incremental, "write a new incremental MIDX"),
		OPT_BOOL(0, "write-chain-file", &chain_file, "write the multi-pack-index chain file"),
		COMMON_OPTIONS(c),
		OPT_END(),
	};
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc != 2)
		usage_with_options(midx_usage, options);
	if (!chain_file && !incremental) {
		error("cannot use %s without %s", "--no-write-chain-file", "--incremental");
		usage_with_options(midx_usage, options);
	}
	setup(c);
	if (bitmap && !c->repo)
		die("--bitmap needs a repository (its refs choose the commits)");
	opts.compact_from = argv[0];
	opts.compact_to = argv[1];
	opts.progress = c->progress;
	opts.version = midx_version_config(c);
	opts.incremental = incremental;
	opts.no_chain_file = !chain_file;
	opts.base = base;
	opts.write_ridx = bitmap;
	opts.write_rev_file = bitmap && env_true("GIT_TEST_MIDX_WRITE_REV");
	opts.defer_install = bitmap;
	ret = midx_write(c->pack_dir, c->algo, &opts, &result, &err);
	write_warnings(&result, "");
	if (ret)
		die_error(&err);
	result.bitmap_optional = base != NULL;
	if (bitmap && result.written &&
	    midx_write_bitmap(c->repo, c->objdir, &result, NULL, c->progress, &err))
		die_error(&err);
	if (result.written && opts.incremental && opts.no_chain_file) {
		char hex[GP_MAX_HEXSZ + 1];
		printf("%s\n", hash_to_hex_r(hex, result.checksum, gp_hash_algos[c->algo].rawsz));
	}
	midx_write_result_release(&result);
	return 0;
}

static int cmd_verify(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	struct midx *m;
	size_t nr_problems;
	struct option options[] = { COMMON_OPTIONS(c), OPT_END() };
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	setup(c);
	ret = midx_open(&m, c->pack_dir, c->algo, &err);
	if (ret == GP_ENOTFOUND)
		return 0; /* as git: nothing to verify */
	if (ret) {
		error("%s", gp_error_msg(&err));
		error("multi-pack-index file exists, but failed to parse");
		return 1;
	}
	ret = midx_verify(m, c->pack_dir, c->progress, &nr_problems, &err);
	midx_free(m);
	if (ret) {
		const char *msg = gp_error_msg(&err), *nl;
		/* One "error:" line a problem, as git prints them. */
		while ((nl = strchr(msg, '\n'))) {
			error("%.*s", (int)(nl - msg), msg);
			msg = nl + 1;
		}
		error("%s", msg);
		gp_error_clear(&err);
		return 1;
	}
	return 0;
}

static void maint_warnings(const struct midx_maint_result *result)
{
	if (result->old_corrupt)
		warning("ignoring existing multi-pack-index; checksum mismatch");
}

static int cmd_expire(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	struct midx_maint_opts opts = MIDX_MAINT_OPTS_INIT;
	struct midx_maint_result result = { 0 };
	struct option options[] = { COMMON_OPTIONS(c), OPT_END() };

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	setup(c);
	opts.progress = c->progress;
	opts.version = midx_version_config(c);
	if (midx_expire(c->pack_dir, c->algo, &opts, &result, &err))
		die_error(&err);
	maint_warnings(&result);
	return 0;
}

static int cmd_midx_repack(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	struct midx_maint_opts opts = MIDX_MAINT_OPTS_INIT;
	struct midx_maint_result result = { 0 };
	unsigned long batch_size = 0;
	struct option options[] = {
		OPT_ULONG(0, "batch-size", &batch_size,
			  "during repack, collect pack-files of smaller size into a batch that is larger than this size"),
		COMMON_OPTIONS(c),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	setup(c);
	opts.progress = c->progress;
	opts.version = midx_version_config(c);
	opts.batch_size = batch_size;
	if (c->repo) {
		bool keep = false;
		int ret = config_get_bool(&c->repo->config, "repack.packkeptobjects", &keep, &err);
		if (ret && ret != GP_ENOTFOUND)
			die_error(&err);
		gp_error_clear(&err);
		opts.pack_kept_objects = keep;
	}
	if (midx_repack(c->pack_dir, c->algo, &opts, &result, &err))
		die_error(&err);
	maint_warnings(&result);
	return 0;
}

int cmd_multi_pack_index(int argc, const char **argv, struct repository *repo)
{
	struct midx_cmd c = { .repo = repo, .progress = -1 };
	struct option options[] = { COMMON_OPTIONS(&c), OPT_END() };
	int nr_opts = 0;
	int ret;

	/* Options before the subcommand are the common ones ("--object-dir DIR" too). */
	while (1 + nr_opts < argc && argv[1 + nr_opts][0] == '-') {
		if (!strcmp(argv[1 + nr_opts], "--object-dir") && 2 + nr_opts < argc)
			nr_opts++;
		nr_opts++;
	}
	{
		const char **mine = xcalloc((size_t)nr_opts + 2, sizeof(*mine));
		mine[0] = argv[0];
		for (int i = 0; i < nr_opts; i++)
			mine[1 + i] = argv[1 + i];
		if (parse_options(nr_opts + 1, mine, options, midx_usage))
			usage_with_options(midx_usage, options);
		free(mine);
	}
	argc -= nr_opts + 1;
	argv += nr_opts + 1;
	if (argc < 1) {
		error("need a subcommand");
		usage_with_options(midx_usage, options);
	}
	c.algo = repo ? repo->hash_algo : GP_HASH_SHA1;

	if (!strcmp(argv[0], "write"))
		ret = cmd_write(argc, argv, &c);
	else if (!strcmp(argv[0], "compact"))
		ret = cmd_compact(argc, argv, &c);
	else if (!strcmp(argv[0], "verify"))
		ret = cmd_verify(argc, argv, &c);
	else if (!strcmp(argv[0], "expire"))
		ret = cmd_expire(argc, argv, &c);
	else if (!strcmp(argv[0], "repack"))
		ret = cmd_midx_repack(argc, argv, &c);
	else {
		error("unknown subcommand: `%s'", argv[0]);
		usage_with_options(midx_usage, options);
	}
	free(c.objdir);
	free(c.pack_dir);
	return ret;
}
