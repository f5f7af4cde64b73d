/*
 * test-config.c: "test-tool config", which prints what config.c and
 * repository.c understood, in the shapes "git config" and
 * "git rev-parse" print, so tests can compare them with stock git.
 *
 *   test-tool config get KEY        value (empty line for a bare key);
 *                                   exit 1 when missing
 *   test-tool config get-bool KEY   true / false
 *   test-tool config get-int KEY    decimal (int range)
 *   test-tool config get-ulong KEY  decimal (unsigned long range)
 *   test-tool config list [--show-scope]
 *                                   key=value per entry, in read order
 *                                   ("key" alone for a bare key), with
 *                                   "scope<TAB>" first if asked
 *   test-tool config read-file PATH parse PATH alone (with includes)
 *                                   and list it
 *   test-tool config read-stdin     parse standard input as a buffer
 *                                   (any bytes) and list it
 *                                   (read-*: includeIf conditions are
 *                                   tested against the repository found
 *                                   from the cwd, as "git config
 *                                   --includes -f" tests them)
 *   test-tool config parse-bool VALUE / parse-int64 VALUE
 *   test-tool config repo-info [FIELD]
 *                                   gitdir, commondir, objdir, bare,
 *                                   object-format, worktree, ref-format
 *                                   of the repository found from the cwd
 *
 * get*, list: the repository's config when one is found from the
 * current directory, else system, global and command-line config.
 * Errors print "fatal: <message>" and exit 128.
 */
#include "../../config.h"
#include "../../error.h"
#include "../../hash.h"
#include "../../repository.h"
#include "../../strbuf.h"
#include "test-tool.h"

static int fatal(const struct gp_error *err)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	return 128;
}

static int usage(void)
{
	fprintf(stderr, "usage: test-tool config (get|get-bool|get-int|get-ulong) <key>\n"
			"       test-tool config list [--show-scope]\n"
			"       test-tool config read-file <path>\n"
			"       test-tool config read-stdin\n"
			"       test-tool config (parse-bool|parse-int64) <value>\n"
			"       test-tool config repo-info [<field>]\n");
	return 129;
}

static const char *scope_name(enum config_scope scope)
{
	switch (scope) {
	case CONFIG_SCOPE_SYSTEM: return "system";
	case CONFIG_SCOPE_GLOBAL: return "global";
	case CONFIG_SCOPE_LOCAL: return "local";
	case CONFIG_SCOPE_COMMAND: return "command";
	}
	return "unknown";
}

static void list_set(const struct config_set *cs, bool show_scope)
{
	for (size_t pos = 0; pos < cs->nr; pos++) {
		const struct config_entry *e = &cs->items[pos];
		if (show_scope)
			printf("%s\t", scope_name(e->scope));
		if (e->value)
			printf("%s=%s\n", e->key, e->value);
		else
			printf("%s\n", e->key);
	}
}

/*
 * The config a command would see: the repository's when there is one,
 * else the standard files without a local one. *repo is set when found.
 */
static int load_config(struct repository **repo, struct config_set *cs,
		       const struct config_set **out, struct gp_error *err)
{
	int ret = repo_discover(repo, NULL, err);

	if (!ret) {
		*out = &(*repo)->config;
		return 0;
	}
	if (ret != GP_ENOTFOUND)
		return ret;
	gp_error_clear(err);
	ret = config_set_load_standard(cs, NULL, err);
	*out = cs;
	return ret;
}

static int cmd_get(const char *mode, const char *key)
{
	struct gp_error err = GP_ERROR_INIT;
	struct config_set cs = CONFIG_SET_INIT;
	const struct config_set *set = NULL;
	struct repository *repo = NULL;
	int ret;

	ret = load_config(&repo, &cs, &set, &err);
	if (ret < 0) {
		ret = fatal(&err);
		goto out;
	}
	if (!strcmp(mode, "get")) {
		const char *value;
		ret = config_get_value(set, key, &value);
		if (!ret)
			printf("%s\n", value ? value : "");
	} else if (!strcmp(mode, "get-bool")) {
		bool value;
		ret = config_get_bool(set, key, &value, &err);
		if (!ret)
			printf("%s\n", value ? "true" : "false");
	} else if (!strcmp(mode, "get-int")) {
		int value;
		ret = config_get_int(set, key, &value, &err);
		if (!ret)
			printf("%d\n", value);
	} else {
		unsigned long value;
		ret = config_get_ulong(set, key, &value, &err);
		if (!ret)
			printf("%lu\n", value);
	}
	if (ret == GP_ENOTFOUND)
		ret = 1;
	else if (ret < 0)
		ret = fatal(&err);
out:
	repo_free(repo);
	config_set_release(&cs);
	gp_error_clear(&err);
	return ret;
}

static int cmd_list(bool show_scope)
{
	struct gp_error err = GP_ERROR_INIT;
	struct config_set cs = CONFIG_SET_INIT;
	const struct config_set *set = NULL;
	struct repository *repo = NULL;
	int ret;

	ret = load_config(&repo, &cs, &set, &err);
	if (ret < 0)
		ret = fatal(&err);
	else
		list_set(set, show_scope);
	repo_free(repo);
	config_set_release(&cs);
	gp_error_clear(&err);
	return ret;
}

static int cmd_read(const char *path)
{
	struct gp_error err = GP_ERROR_INIT;
	struct config_set cs = CONFIG_SET_INIT;
	struct config_repo_info info;
	struct config_read_opts opts = { .repo = NULL };
	struct repository *repo = NULL;
	struct strbuf in = STRBUF_INIT;
	int ret;

	/* Outside a repository (or in a broken one), conditions have none. */
	if (!repo_discover(&repo, NULL, &err)) {
		repo_config_info(repo, &info);
		opts.repo = &info;
	}
	gp_error_clear(&err);
	if (path) {
		ret = config_set_add_file(&cs, path, CONFIG_SCOPE_LOCAL, &opts, &err);
	} else if (strbuf_read_fd(&in, 0, 0) < 0) {
		ret = gp_error_errno(&err, "cannot read standard input");
	} else {
		ret = config_set_add_buf(&cs, "standard input", in.buf, in.len,
					 CONFIG_SCOPE_LOCAL, &opts, &err);
	}
	if (ret < 0)
		ret = fatal(&err);
	else
		list_set(&cs, false);
	repo_free(repo);
	strbuf_release(&in);
	config_set_release(&cs);
	gp_error_clear(&err);
	return ret;
}

static int cmd_repo_info(const char *field)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo = NULL;
	const char *values[7][2];
	int ret = 0;

	if (repo_discover(&repo, NULL, &err) < 0) {
		ret = fatal(&err);
		goto out;
	}
	values[0][0] = "gitdir";
	values[0][1] = repo->gitdir;
	values[1][0] = "commondir";
	values[1][1] = repo->commondir;
	values[2][0] = "objdir";
	values[2][1] = repo->objdir;
	values[3][0] = "bare";
	values[3][1] = repo->bare ? "true" : "false";
	values[4][0] = "object-format";
	values[4][1] = hash_algo(repo->hash_algo)->name;
	values[5][0] = "worktree";
	values[5][1] = repo->worktree ? repo->worktree : "";
	values[6][0] = "ref-format";
	values[6][1] = repo->ref_storage == REF_STORAGE_REFTABLE ? "reftable" : "files";
	for (size_t idx = 0; idx < ARRAY_SIZE(values); idx++) {
		if (!field)
			printf("%s=%s\n", values[idx][0], values[idx][1]);
		else if (!strcmp(field, values[idx][0]))
			printf("%s\n", values[idx][1]);
		else
			continue;
		if (field)
			goto out;
	}
	if (field) {
		fprintf(stderr, "unknown field '%s'\n", field);
		ret = 129;
	}
out:
	repo_free(repo);
	gp_error_clear(&err);
	return ret;
}

int cmd__config(int argc, const char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if ((!strcmp(cmd, "get") || !strcmp(cmd, "get-bool") ||
	     !strcmp(cmd, "get-int") || !strcmp(cmd, "get-ulong")) && argc == 3)
		return cmd_get(cmd, argv[2]);
	if (!strcmp(cmd, "list") && argc == 2)
		return cmd_list(false);
	if (!strcmp(cmd, "list") && argc == 3 && !strcmp(argv[2], "--show-scope"))
		return cmd_list(true);
	if (!strcmp(cmd, "read-file") && argc == 3)
		return cmd_read(argv[2]);
	if (!strcmp(cmd, "read-stdin") && argc == 2)
		return cmd_read(NULL);
	if (!strcmp(cmd, "parse-bool") && argc == 3) {
		bool value;
		if (!config_parse_bool(argv[2], &value))
			return 1;
		printf("%s\n", value ? "true" : "false");
		return 0;
	}
	if (!strcmp(cmd, "parse-int64") && argc == 3) {
		int64_t value;
		if (!config_parse_int64(argv[2], &value))
			return 1;
		printf("%" PRId64 "\n", value);
		return 0;
	}
	if (!strcmp(cmd, "repo-info") && (argc == 2 || argc == 3))
		return cmd_repo_info(argc == 3 ? argv[2] : NULL);
	return usage();
}
