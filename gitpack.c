/*
 * gitpack.c: main. Global options (-C, --git-dir, --version), the
 * command table, repository setup, and the die()/error() helpers that
 * only commands may use.
 */
#include "builtin.h"
#include "config.h"
#include "error.h"
#include "parse-options.h"
#include "path-patterns.h"
#include "repository.h"
#include "strbuf.h"
#include "trace2.h"

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
	{ "commit-graph", cmd_commit_graph, RUN_SETUP_GENTLY, "Write and verify Git commit-graph files" },
	{ "count-objects", cmd_count_objects, RUN_SETUP, "Count unpacked objects and their disk usage" },
	{ "for-each-repo", cmd_for_each_repo, RUN_SETUP_GENTLY, "Run a Git command on a list of repositories" },
	{ "gc", cmd_gc, RUN_SETUP, "Cleanup unnecessary files and optimize the local repository" },
	{ "index-pack", cmd_index_pack, RUN_SETUP_GENTLY, "Build the .idx and .rev for a pack" },
	{ "maintenance", cmd_maintenance, RUN_SETUP, "Run tasks to optimize repository data (a server's maintenance)" },
	{ "multi-pack-index", cmd_multi_pack_index, RUN_SETUP_GENTLY, "Write and verify multi-pack-indexes" },
	{ "pack-objects", cmd_pack_objects, RUN_SETUP, "Create a packed archive of objects" },
	{ "pack-objects-hook", cmd_pack_objects_hook, RUN_SETUP, "Cache packs for git upload-pack (uploadpack.packObjectsHook)" },
	{ "pack-refs", cmd_pack_refs, RUN_SETUP, "Pack heads and tags for efficient repository access" },
	{ "prune-packed", cmd_prune_packed, RUN_SETUP, "Remove extra objects that are already in pack files" },
	{ "repack", cmd_repack, RUN_SETUP, "Pack unpacked objects in a repository" },
	{ "rev-list", cmd_rev_list, RUN_SETUP, "List commits (and objects) in reverse chronological order" },
	{ "serve", cmd_serve, 0, "Serve repositories over smart HTTP and git://" },
	{ "show-index", cmd_show_index, RUN_SETUP_GENTLY, "Show a pack index read from standard input" },
	{ "upload-pack", cmd_upload_pack, 0, "Send objects packed back to git-fetch-pack" },
	{ "verify-pack", cmd_verify_pack, RUN_SETUP_GENTLY, "Validate packed Git archive files" },
};

bool is_gitpack_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].name))
			return true;
	return false;
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* As git: control characters (tabs and newlines aside) print as '?'. */
	for (char *p = msg; *p; p++)
		if (((unsigned char)*p < 0x20 || *p == 0x7f) && *p != '\t' && *p != '\n')
			*p = '?';
	fflush(stdout);
	fprintf(stderr, "%s%s\n", prefix, msg);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	trace2_exit(128);
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

/*
 * -h is a question (stdout, exit 0, as Git 2.55 answers it); a usage
 * error is not (stderr, exit 129).
 */
static GP_NORETURN void print_usage_and_exit(FILE *out, const char *const *usage,
						const struct option *opts)
{
	struct strbuf text = STRBUF_INIT;
	parse_options_usage(usage, opts, &text);
	fflush(stdout);
	fwrite(text.buf, 1, text.len, out);
	strbuf_release(&text);
	exit(out == stdout ? 0 : 129);
}

/* A set key's value, or die on a bad one; GP_ENOTFOUND when it is not set. */
static int config_or_die(int ret, struct gp_error *err)
{
	if (ret && ret != GP_ENOTFOUND)
		die_error(err);
	gp_error_clear(err);
	return ret;
}

void die_bad_config(struct repository *repo, const char *key)
{
	const char *file, *base;
	size_t linenr, len;
	char *cwd = NULL;

	if (!config_origin(&repo->config, key, &file, &linenr))
		die("bad config variable '%s'", key);
	if (!file)
		die("unable to parse '%s' from command-line config", key);
	/*
	 * The path as git opens it: from the top of the work tree, where git
	 * has moved, or from the current directory (a bare repository).
	 */
	base = repo->work_dir && repo->worktree ? repo->worktree : (cwd = getcwd(NULL, 0));
	len = base ? strlen(base) : 0;
	if (base && !strncmp(file, base, len) && file[len] == '/')
		file += len + 1;
	free(cwd);
	die("bad config variable '%s' in file '%s' at line %zu", key, file, linenr);
}

int repo_config_int(struct repository *repo, const char *key, int dflt)
{
	struct gp_error err = GP_ERROR_INIT;
	int v;
	return config_or_die(config_get_int(&repo->config, key, &v, &err), &err) ? dflt : v;
}

unsigned long repo_config_ulong(struct repository *repo, const char *key, unsigned long dflt)
{
	struct gp_error err = GP_ERROR_INIT;
	unsigned long v;
	return config_or_die(config_get_ulong(&repo->config, key, &v, &err), &err) ? dflt : v;
}

bool repo_config_bool(struct repository *repo, const char *key, bool dflt)
{
	struct gp_error err = GP_ERROR_INIT;
	bool v;
	return config_or_die(config_get_bool(&repo->config, key, &v, &err), &err) ? dflt : v;
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
	if (ret == PARSE_OPT_FATAL)
		die_error(&err);
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
	fprintf(out, "usage: gitpack [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]\n"
		"               [--exec-path[=<path>]] [--git-dir=<path>] [--work-tree=<path>]\n"
		"               [--namespace=<name>] [--bare] [--no-replace-objects]\n"
		"               [--config-env=<name>=<envvar>] <command> [<args>]\n\n");
	fprintf(out, "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "   %-16s %s\n", commands[i].name, commands[i].summary);
}

/*
 * Git hands "-c" settings to the commands it runs through
 * GIT_CONFIG_PARAMETERS, each item shell-quoted as 'key'='value' (or
 * 'key' alone for a bare boolean). Doing the same here means that config
 * reading (config.h) has one source for command-line settings, and that
 * any child process sees them too.
 */
static void sq_append(struct strbuf *sb, const char *s, size_t len)
{
	strbuf_addch(sb, '\'');
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\'' || s[i] == '!') {
			strbuf_addstr(sb, "'\\");
			strbuf_addch(sb, s[i]);
			strbuf_addch(sb, '\'');
		} else {
			strbuf_addch(sb, s[i]);
		}
	}
	strbuf_addch(sb, '\'');
}

static void push_config_parameter(const char *key, size_t key_len, const char *value)
{
	const char *old = getenv("GIT_CONFIG_PARAMETERS");
	struct strbuf sb = STRBUF_INIT;
	if (old && *old) {
		strbuf_addstr(&sb, old);
		strbuf_addch(&sb, ' ');
	}
	sq_append(&sb, key, key_len);
	if (value) {
		strbuf_addch(&sb, '=');
		sq_append(&sb, value, strlen(value));
	}
	setenv("GIT_CONFIG_PARAMETERS", sb.buf, 1);
	strbuf_release(&sb);
}

static void config_option(const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (!*spec || eq == spec)
		die("bogus config parameter: %s", spec);
	push_config_parameter(spec, eq ? (size_t)(eq - spec) : strlen(spec), eq ? eq + 1 : NULL);
}

/* --config-env=<name>=<envvar>: the value comes from the environment. */
static void config_env_option(const char *spec)
{
	const char *eq = strrchr(spec, '=');
	const char *value;
	if (!eq)
		die("invalid config format: %s", spec);
	if (eq == spec)
		die("missing config key %s", spec);
	if (!eq[1])
		die("missing environment variable name for configuration '%.*s'",
		    (int)(eq - spec), spec);
	value = getenv(eq + 1);
	if (!value)
		die("missing environment variable '%s' for configuration '%.*s'",
		    eq + 1, (int)(eq - spec), spec);
	push_config_parameter(spec, (size_t)(eq - spec), value);
}

/* The directory gitpack's helper programs would live in: its own. */
static char *exec_path(void)
{
	const char *env = getenv("GIT_EXEC_PATH");
	char buf[4096];
	ssize_t len;
	char *slash;
	if (env && *env)
		return xstrdup(env);
	len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (len <= 0)
		return xstrdup(".");
	buf[len] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
	return xstrdup(buf);
}

/*
 * Options that take a value as "--opt=<v>" or "--opt <v>": returns the
 * value and advances *argv past a separate one, or NULL when arg is not
 * this option.
 */
static const char *option_value(const char ***argv, int *argc, const char *name)
{
	const char *arg = (*argv)[0], *val;
	if (skip_prefix(arg, name, &val)) {
		if (*val == '=')
			return val + 1;
		if (*val)
			return NULL;
		if (*argc < 2) {
			fprintf(stderr, "no directory given for '%s' option\n\n", name);
			usage(stderr);
			exit(129);
		}
		(*argv)++, (*argc)--;
		return (*argv)[0];
	}
	return NULL;
}

/*
 * Git's global options (git(1) OPTIONS), as git applies them: most are
 * passed on through the environment, so that the library and any child
 * process see them. Returns -1 to go on with the command, or an exit code.
 */
static int handle_global_options(int *argc_p, const char ***argv_p, char **shallow_file)
{
	int argc = *argc_p;
	const char **argv = *argv_p;
	int ret = -1;

	while (argc > 0 && argv[0][0] == '-') {
		const char *arg = argv[0], *val;
		if (!strcmp(arg, "-C")) {
			if (argc < 2) {
				fprintf(stderr, "no directory given for '-C' option\n\n");
				usage(stderr);
				return 129;
			}
			if (*argv[1] && chdir(argv[1]) < 0)
				die("cannot change to '%s': %s", argv[1], strerror(errno));
			argv++, argc--;
		} else if (!strcmp(arg, "-c")) {
			if (argc < 2) {
				fprintf(stderr, "-c expects a configuration string\n\n");
				usage(stderr);
				return 129;
			}
			config_option(argv[1]);
			argv++, argc--;
		} else if (skip_prefix(arg, "--config-env=", &val)) {
			config_env_option(val);
		} else if (!strcmp(arg, "--config-env")) {
			if (argc < 2)
				die("no config key given for --config-env");
			config_env_option(argv[1]);
			argv++, argc--;
		} else if ((val = option_value(&argv, &argc, "--git-dir"))) {
			setenv("GIT_DIR", val, 1);
		} else if ((val = option_value(&argv, &argc, "--work-tree"))) {
			setenv("GIT_WORK_TREE", val, 1);
		} else if ((val = option_value(&argv, &argc, "--namespace"))) {
			setenv("GIT_NAMESPACE", val, 1);
		} else if (!strcmp(arg, "--shallow-file")) {
			if (argc < 2)
				die("no file given for '--shallow-file' option");
			free(*shallow_file);
			*shallow_file = xstrdup(argv[1]);
			argv++, argc--;
		} else if (skip_prefix(arg, "--shallow-file=", &val)) {
			free(*shallow_file);
			*shallow_file = xstrdup(val);
		} else if (!strcmp(arg, "--bare")) {
			char *cwd = getcwd(NULL, 0);
			if (!cwd)
				die("unable to get current working directory: %s", strerror(errno));
			setenv("GIT_DIR", cwd, 0);
			free(cwd);
		} else if (!strcmp(arg, "--exec-path")) {
			char *path = exec_path();
			printf("%s\n", path);
			free(path);
			ret = 0;
			break;
		} else if (skip_prefix(arg, "--exec-path=", &val)) {
			setenv("GIT_EXEC_PATH", val, 1);
		} else if (!strcmp(arg, "--html-path") || !strcmp(arg, "--man-path") ||
			   !strcmp(arg, "--info-path")) {
			/* gitpack installs no documentation tree of its own. */
			char *path = exec_path();
			printf("%s\n", path);
			free(path);
			ret = 0;
			break;
		} else if (!strcmp(arg, "--no-replace-objects")) {
			setenv("GIT_NO_REPLACE_OBJECTS", "1", 1);
		} else if (!strcmp(arg, "--no-lazy-fetch")) {
			setenv("GIT_NO_LAZY_FETCH", "1", 1);
		} else if (!strcmp(arg, "--no-optional-locks")) {
			setenv("GIT_OPTIONAL_LOCKS", "0", 1);
		} else if (!strcmp(arg, "--no-advice")) {
			setenv("GIT_ADVICE", "0", 1);
		} else if (!strcmp(arg, "--literal-pathspecs")) {
			setenv("GIT_LITERAL_PATHSPECS", "1", 1);
		} else if (!strcmp(arg, "--no-literal-pathspecs")) {
			setenv("GIT_LITERAL_PATHSPECS", "0", 1);
		} else if (!strcmp(arg, "--glob-pathspecs")) {
			setenv("GIT_GLOB_PATHSPECS", "1", 1);
		} else if (!strcmp(arg, "--noglob-pathspecs")) {
			setenv("GIT_NOGLOB_PATHSPECS", "1", 1);
		} else if (!strcmp(arg, "--icase-pathspecs")) {
			setenv("GIT_ICASE_PATHSPECS", "1", 1);
		} else if ((val = option_value(&argv, &argc, "--attr-source"))) {
			setenv("GIT_ATTR_SOURCE", val, 1);
		} else if (!strcmp(arg, "-p") || !strcmp(arg, "--paginate") ||
			   !strcmp(arg, "-P") || !strcmp(arg, "--no-pager")) {
			/* Nothing gitpack prints is paged. */
		} else if (skip_prefix(arg, "--list-cmds=", &val)) {
			for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
				printf("%s\n", commands[i].name);
			ret = 0;
			break;
		} else if (!strcmp(arg, "-v") || !strcmp(arg, "--version")) {
			printf("gitpack version %s\n", GITPACK_VERSION);
			ret = 0;
			break;
		} else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			usage(stdout);
			ret = 0;
			break;
		} else {
			fprintf(stderr, "unknown option: %s\n", arg);
			usage(stderr);
			ret = 129;
			break;
		}
		argv++, argc--;
	}
	*argc_p = argc;
	*argv_p = argv;
	return ret;
}

/*
 * git's "interesting" config in the trace: each entry (every scope, in
 * the order read) whose key matches a pattern of GIT_TRACE2_CONFIG_PARAMS,
 * else of trace2.configParams (comma-separated globs, any case).
 */
static void trace2_list_config(const struct config_set *cs)
{
	static const char *const scopes[] = {
		[CONFIG_SCOPE_SYSTEM] = "system", [CONFIG_SCOPE_GLOBAL] = "global",
		[CONFIG_SCOPE_LOCAL] = "local", [CONFIG_SCOPE_COMMAND] = "command",
	};
	const char *list = getenv("GIT_TRACE2_CONFIG_PARAMS");
	char *patterns, *pat, *save = NULL, **pats = NULL;
	size_t nr = 0, alloc = 0;

	if (!trace2_enabled())
		return;
	if (!list || !*list)
		if (config_get_string(cs, "trace2.configparams", &list))
			return;
	patterns = xstrdup(list);
	for (pat = strtok_r(patterns, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
		ALLOC_GROW(pats, nr + 1, alloc);
		pats[nr++] = pat;
	}
	/* each entry once, in the order read, as git lists them */
	for (size_t i = 0; i < cs->nr; i++) {
		const struct config_entry *e = &cs->items[i];
		for (size_t k = 0; k < nr; k++) {
			if (!glob_match(pats[k], strlen(pats[k]), e->key, strlen(e->key), GLOB_ICASE))
				continue;
			trace2_def_param(e->scope < ARRAY_SIZE(scopes) && scopes[e->scope]
					 ? scopes[e->scope] : "unknown",
					 e->key, e->value ? e->value : "");
			break;
		}
	}
	free(pats);
	free(patterns);
}

int main(int argc, const char **argv)
{
	struct repository *repo = NULL;
	struct gp_error err = GP_ERROR_INIT;
	const struct cmd_entry *cmd = NULL;
	char *shallow_file = NULL;
	int ret;

	trace2_start(argc - 1, argv + 1);
	argv++, argc--;
	ret = handle_global_options(&argc, &argv, &shallow_file);
	if (ret >= 0)
		goto out;
	if (!argc) {
		usage(stderr);
		ret = 1;
		goto out;
	}
	if (!strcmp(argv[0], "version")) {
		printf("gitpack version %s\n", GITPACK_VERSION);
		ret = 0;
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[0], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "gitpack: '%s' is not a gitpack command. See 'gitpack --help'.\n", argv[0]);
		ret = 1;
		goto out;
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
	if (repo)
		trace2_list_config(&repo->config);
	if (repo && shallow_file) {
		repo->shallow_file = shallow_file;
		shallow_file = NULL;
	}
	ret = cmd->fn(argc, argv, repo);
	repo_free(repo);
	gp_error_clear(&err);
	if (fflush(stdout) || ferror(stdout))
		die("write failure on standard output: %s", strerror(errno));
out:
	free(shallow_file);
	trace2_exit(ret);
	return ret;
}
