/*
 * builtin/for-each-repo.c: gitpack for-each-repo (git-for-each-repo(1)),
 * what the jobs of "maintenance start" run: "git -C <repo> <arguments>"
 * for each path of a multi-valued config variable (maintenance.repo),
 * in the order the config lists them.
 *
 * A command gitpack has (maintenance, repack, ...) runs in this very
 * binary, started again with git's argv (argv[0] "git"), so that the
 * scheduled maintenance is gitpack's whatever git PATH finds; any other
 * command runs the "git" of PATH. Each child inherits our standard
 * descriptors and none of the environment variables that name a
 * repository (GIT_DIR and the others "git rev-parse --local-env-vars"
 * lists), except the command-line config (-c, GIT_CONFIG_PARAMETERS,
 * GIT_CONFIG_COUNT), which applies to every repository alike.
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../run-command.h"
#include "../strbuf.h"
#include "../trace2.h"
#include <ctype.h>
#include <pwd.h>
#include <unistd.h>

static const char *const for_each_repo_usage[] = {
	"git for-each-repo --config=<config> [--] <arguments>",
	NULL,
};

/* What names a repository to a git process; the children find their own. */
static const char *const repo_env[] = {
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_OBJECT_DIRECTORY",
	"GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
	"GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
	"GIT_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
};

static bool is_key_char(int c)
{
	return isalnum(c) || c == '-';
}

/*
 * key in canonical form (section and variable lower-cased, subsection
 * kept) into out, or false with the problem printed, as git checks a
 * key: "section[.subsection].variable", the section and variable of
 * letters, digits and '-', the variable starting with a letter.
 */
static bool canonical_key(const char *key, struct strbuf *out)
{
	const char *first = strchr(key, '.'), *last = strrchr(key, '.');
	if (!first || first == key) {
		error("key does not contain a section: %s", key);
		return false;
	}
	if (!last[1]) {
		error("key does not contain variable name: %s", key);
		return false;
	}
	for (const char *p = key; p < first; p++)
		if (!is_key_char((unsigned char)*p)) {
			error("invalid key: %s", key);
			return false;
		}
	if (strchr(first, '\n') || !isalpha((unsigned char)last[1])) {
		error("invalid key: %s", key);
		return false;
	}
	for (const char *p = last + 1; *p; p++)
		if (!is_key_char((unsigned char)*p)) {
			error("invalid key: %s", key);
			return false;
		}
	for (const char *p = key; *p; p++)
		strbuf_addch(out, (p < first || p > last) ? tolower((unsigned char)*p) : *p);
	return true;
}

/* "~/x" and "~user/x" as git expands a path value; others as they are. */
static char *expand_path(const char *path)
{
	const char *rest, *home = NULL;
	char *user;
	struct passwd *pw;
	if (path[0] != '~')
		return xstrdup(path);
	rest = strchrnul(path, '/');
	if (rest == path + 1) {
		home = getenv("HOME");
		if (!home || !*home)
			return xstrdup(path);
		return xstrfmt("%s%s", home, rest);
	}
	user = xstrfmt("%.*s", (int)(rest - path - 1), path + 1);
	pw = getpwnam(user);
	free(user);
	if (!pw || !pw->pw_dir)
		return xstrdup(path);
	return xstrfmt("%s%s", pw->pw_dir, rest);
}

/* "git -C <path> <args>": the child's exit status (128 + signal). */
static int run_on_repo(const char *self, const char *path, int argc, const char **args)
{
	struct gp_error err = GP_ERROR_INIT;
	const char **argv = xcalloc((size_t)argc + 4, sizeof(*argv));
	char *dir = expand_path(path);
	int code = 0, id, ret;

	argv[0] = "git";
	argv[1] = "-C";
	argv[2] = dir;
	for (int i = 0; i < argc; i++)
		argv[3 + i] = args[i];
	id = trace2_child_start("git", argv);
	if (self && argc && is_gitpack_command(args[0]))
		ret = run_program(self, argv, 0, &code, &err);
	else
		ret = run_command(argv, NULL, 0, 0, &code, &err);
	trace2_child_exit(id, ret ? -1 : code);
	if (ret) {
		error("%s", gp_error_msg(&err));
		gp_error_clear(&err);
		code = 1;
	}
	free(dir);
	free(argv);
	return code;
}

int cmd_for_each_repo(int argc, const char **argv, struct repository *repo)
{
	const char *key = NULL;
	int keep_going = 0, pos, result = 0;
	struct config_set own = CONFIG_SET_INIT;
	const struct config_set *cs;
	struct strbuf canon = STRBUF_INIT;
	const char **paths = NULL;
	size_t nr_paths = 0, alloc_paths = 0;
	char *self = NULL;
	struct option options[] = {
		OPT_STRING(0, "config", &key, "config", "config key storing a list of repository paths"),
		OPT_BOOL(0, "keep-going", &keep_going, "keep going even if command fails in a repository"),
		OPT_END(),
	};

	/*
	 * Our options come first and the first other argument starts the
	 * command's (git's parse-options "stop at non-option"), so the
	 * arguments are split here before parse_options() sees ours.
	 */
	for (pos = 1; pos < argc; pos++) {
		const char *arg = argv[pos];
		if (!strcmp(arg, "--")) {
			pos++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		if (!strcmp(arg, "--config") && pos + 1 < argc)
			pos++;
	}
	{
		/* ours: argv[0 .. pos), a closing "--" included (parse_options() drops it). */
		const char **ours = xcalloc((size_t)pos + 1, sizeof(*ours));
		memcpy(ours, argv, (size_t)pos * sizeof(*ours));
		if (parse_options(pos, ours, options, for_each_repo_usage))
			usage_with_options(for_each_repo_usage, options);
		free(ours);
	}
	argv += pos;
	argc -= pos;

	if (!key)
		die("missing --config=<config>");
	if (!canonical_key(key, &canon)) {
		fflush(stdout);
		fprintf(stderr, "fatal: got bad config --config=%s\n\n", key);
		usage_with_options(for_each_repo_usage, options);
	}
	if (repo) {
		cs = &repo->config;
	} else {
		struct gp_error err = GP_ERROR_INIT;
		if (config_set_load_standard(&own, NULL, &err))
			die_error(&err);
		cs = &own;
	}
	for (size_t i = 0; i < cs->nr; i++) {
		if (strcmp(cs->items[i].key, canon.buf))
			continue;
		if (!cs->items[i].value) {
			error("missing value for '%s'", canon.buf);
			fflush(stdout);
			fprintf(stderr, "fatal: got bad config --config=%s\n\n", key);
			usage_with_options(for_each_repo_usage, options);
		}
		ALLOC_GROW(paths, nr_paths + 1, alloc_paths);
		paths[nr_paths++] = cs->items[i].value;
	}
	if (!nr_paths)
		goto out;

	for (size_t i = 0; i < ARRAY_SIZE(repo_env); i++)
		unsetenv(repo_env[i]);
	self = run_self_path();
	for (size_t i = 0; i < nr_paths; i++) {
		int code = run_on_repo(self, paths[i], argc, argv);
		if (!code)
			continue;
		if (!keep_going) {
			result = code;
			break;
		}
		result = 1;
	}
out:
	free(self);
	free(paths);
	strbuf_release(&canon);
	config_set_release(&own);
	return result;
}
