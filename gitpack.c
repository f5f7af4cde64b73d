/*
 * gitpack.c: main. Global options (-C, --git-dir, --version), the
 * command table, repository setup, and the die()/error() helpers that
 * only commands may use.
 */
#include "builtin.h"
#include "error.h"
#include "parse-options.h"
#include "repository.h"
#include "strbuf.h"

#ifndef GITPACK_VERSION
#define GITPACK_VERSION "0.1"
#endif

enum cmd_flags {
	RUN_SETUP = 1 << 0,        /* needs a repository; die without one */
	RUN_SETUP_GENTLY = 1 << 1, /* use a repository if there is one */
};

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, const char **argv, struct repository *repo);
	int flags;
	const char *summary;
};

static const struct cmd_entry commands[] = {
	{ "cat-file", cmd_cat_file, RUN_SETUP, "Show content, type or size of repository objects" },
	{ "count-objects", cmd_count_objects, RUN_SETUP, "Count unpacked objects and their disk usage" },
	{ "index-pack", cmd_index_pack, RUN_SETUP_GENTLY, "Build the .idx and .rev for a pack" },
	{ "multi-pack-index", cmd_multi_pack_index, RUN_SETUP_GENTLY, "Write and verify multi-pack-indexes" },
	{ "pack-objects", cmd_pack_objects, RUN_SETUP, "Create a packed archive of objects" },
	{ "repack", cmd_repack, RUN_SETUP, "Pack unpacked objects in a repository" },
	{ "rev-list", cmd_rev_list, RUN_SETUP, "List commits (and objects) in reverse chronological order" },
	{ "show-index", cmd_show_index, RUN_SETUP_GENTLY, "Show a pack index read from standard input" },
	{ "verify-pack", cmd_verify_pack, RUN_SETUP_GENTLY, "Validate packed Git archive files" },
};

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	fprintf(stderr, "%s%s\n", prefix, msg);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

void die_error(const struct gp_error *err)
{
	die("%s", gp_error_msg(err));
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

static GP_NORETURN void print_usage_and_exit(FILE *out, const char *const *usage,
						const struct option *opts)
{
	struct strbuf text = STRBUF_INIT;
	parse_options_usage(usage, opts, &text);
	fflush(stdout);
	fwrite(text.buf, 1, text.len, out);
	strbuf_release(&text);
	exit(129);
}

void usage_with_options(const char *const *usage, const struct option *opts)
{
	print_usage_and_exit(stderr, usage, opts);
}

int parse_options(int argc, const char **argv, const struct option *opts,
		  const char *const *usage)
{
	struct gp_error err = GP_ERROR_INIT;
	int ret = parse_options_run(argc, argv, opts, &err);
	if (ret == PARSE_OPT_HELP)
		print_usage_and_exit(stdout, usage, opts);
	if (ret < 0) {
		if (err.msg && *err.msg)
			error("%s", err.msg);
		gp_error_clear(&err);
		usage_with_options(usage, opts);
	}
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gitpack [-C <path>] [--git-dir=<path>] [--version] <command> [<args>]\n\n");
	fprintf(out, "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "   %-16s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, const char **argv)
{
	struct repository *repo = NULL;
	struct gp_error err = GP_ERROR_INIT;
	const struct cmd_entry *cmd = NULL;
	int ret;

	argv++, argc--;
	while (argc > 0 && argv[0][0] == '-') {
		const char *arg = argv[0], *val;
		if (!strcmp(arg, "-C")) {
			if (argc < 2)
				die("no directory given for -C");
			if (*argv[1] && chdir(argv[1]) < 0)
				die("cannot change to '%s': %s", argv[1], strerror(errno));
			argv++, argc--;
		} else if (skip_prefix(arg, "--git-dir=", &val)) {
			setenv("GIT_DIR", val, 1);
		} else if (!strcmp(arg, "--git-dir")) {
			if (argc < 2)
				die("no directory given for --git-dir");
			setenv("GIT_DIR", argv[1], 1);
			argv++, argc--;
		} else if (!strcmp(arg, "--version")) {
			printf("gitpack version %s\n", GITPACK_VERSION);
			return 0;
		} else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "unknown option: %s\n", arg);
			usage(stderr);
			return 129;
		}
		argv++, argc--;
	}
	if (!argc) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[0], "version")) {
		printf("gitpack version %s\n", GITPACK_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[0], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "gitpack: '%s' is not a gitpack command. See 'gitpack --help'.\n", argv[0]);
		return 1;
	}

	/* "-h" must work anywhere, even outside a repository. */
	if (!(argc == 2 && !strcmp(argv[1], "-h")) &&
	    (cmd->flags & (RUN_SETUP | RUN_SETUP_GENTLY))) {
		ret = repo_discover(&repo, NULL, &err);
		if (ret == GP_ENOTFOUND && (cmd->flags & RUN_SETUP_GENTLY)) {
			gp_error_clear(&err);
			repo = NULL;
		} else if (ret < 0) {
			die_error(&err);
		}
	}
	ret = cmd->fn(argc, argv, repo);
	repo_free(repo);
	gp_error_clear(&err);
	if (fflush(stdout) || ferror(stdout))
		die("write failure on standard output: %s", strerror(errno));
	return ret;
}
