/*
 * builtin/commit-graph.c: gitpack commit-graph write and verify, with
 * git 2.55's options, messages and exit codes. The work is in
 * commit-graph.c; this file gathers the starting commits (refs, packs,
 * standard input) and prints.
 */
#include "../builtin.h"
#include "../commit-graph.h"
#include "../config.h"
#include "../date.h"
#include "../error.h"
#include "../odb.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../oidset.h"
#include "../progress.h"
#include "../refs.h"
#include "../replace-object.h"
#include "../repository.h"
#include "../shallow.h"
#include "../strbuf.h"

#include <time.h>

static const char *const verify_usage[] = {
	"git commit-graph verify [--object-dir <dir>] [--shallow] [--[no-]progress]",
	NULL,
};

static const char *const write_usage[] = {
	"git commit-graph write [--object-dir <dir>] [--append]\n"
	"                       [--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits]\n"
	"                       [--[no-]progress] <split-options>",
	NULL,
};

static const char *const cg_usage[] = {
	"git commit-graph verify [--object-dir <dir>] [--shallow] [--[no-]progress]",
	"git commit-graph write [--object-dir <dir>] [--append]\n"
	"                       [--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits]\n"
	"                       [--[no-]progress] <split-options>",
	NULL,
};

struct tips {
	struct object_id *items;
	size_t nr, alloc;
};

static void add_tip(struct tips *t, const struct object_id *oid)
{
	ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	t->items[t->nr++] = *oid;
}

static int add_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	(void)refname;
	(void)flags;
	add_tip(data, peeled ? peeled : oid);
	return 0;
}

/*
 * The meter git shows while it reads the refs of --reachable: how many
 * distinct commits they name (peeled). The walk starts from every tip
 * anyway; this only reports.
 */
static void count_referenced_commits(struct odb *odb, const struct tips *tips, bool show)
{
	struct progress *meter = progress_start("Collecting referenced commits", 0, show);
	struct oidset commits = OIDSET_INIT;
	if (!meter)
		return;
	for (size_t i = 0; i < tips->nr; i++) {
		struct object_info info;
		struct gp_error err = GP_ERROR_INIT;
		if (!odb_read_object_info(odb, &tips->items[i], &info, 0, &err) &&
		    info.type == OBJ_COMMIT)
			oidset_insert(&commits, &tips->items[i]);
		gp_error_clear(&err);
		progress_update(meter, oidset_size(&commits));
	}
	progress_stop(&meter);
	oidset_release(&commits);
}

static const char *objdir_of(struct repository *repo, const char *object_dir)
{
	if (object_dir)
		return object_dir;
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	return repo->objdir;
}

static struct odb *open_odb(struct repository *repo, const char *objdir, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct odb *odb = NULL;
	if (repo && !strcmp(objdir, repo->objdir)) {
		if (repo_odb(repo, &odb, &err))
			die_error(&err);
		return odb;
	}
	if (odb_open(&odb, objdir, algo, &err))
		die_error(&err);
	return odb;
}

/* Commits in a pack: what git's write takes without --reachable or --stdin-*. */
static void add_pack_commits(struct tips *t, struct odb *odb, struct packed_git *p)
{
	struct gp_error err = GP_ERROR_INIT;
	for (uint32_t i = 0; i < p->nr_objects; i++) {
		struct object_id oid;
		struct object_info info;
		pack_nth_oid(p, i, &oid);
		if (odb_read_object_info(odb, &oid, &info, 0, &err))
			die("unable to get type of object %s", oid_to_hex_r((char[GP_MAX_HEXSZ + 1]){ 0 }, &oid));
		if (info.type == OBJ_COMMIT)
			add_tip(t, &oid);
	}
}

/*
 * As git: no graph is written or read in a shallow repository, nor
 * where grafts change what a commit's parents are; replace refs keep
 * walks off the graph (when replace_refs), but "commit-graph write"
 * itself reads no replacements, so they do not stop it.
 */
static bool graph_compatible(struct repository *repo, bool shallow, bool replace_refs)
{
	struct gp_error err = GP_ERROR_INIT;
	struct replace_map *map = NULL;
	bool ok = !shallow;
	char *grafts;
	if (ok) {
		struct oidset set = OIDSET_INIT;
		if (!shallow_read(repo, &set, &err) && oidset_size(&set))
			ok = false;
		oidset_release(&set);
		gp_error_clear(&err);
	}
	grafts = xstrfmt("%s/info/grafts", repo->commondir);
	if (ok && !access(grafts, F_OK))
		ok = false;
	free(grafts);
	if (ok && replace_refs && !replace_map_load(&map, repo, &err) &&
	    !replace_map_is_empty(map))
		ok = false;
	replace_map_free(map);
	gp_error_clear(&err);
	return ok;
}

/* core.sharedRepository as commit_graph_write_opts.shared_perm wants it. */
static int shared_perm(const char *v)
{
	char *end;
	long mode;
	if (!strcasecmp(v, "group") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		return -0660;
	if (!strcasecmp(v, "all") || !strcasecmp(v, "world") || !strcasecmp(v, "everybody") ||
	    !strcmp(v, "2"))
		return -0664;
	if (!strcasecmp(v, "umask") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		return 0;
	mode = strtol(v, &end, 8);
	if (*end || mode <= 0 || mode > 0777)
		die("bad core.sharedRepository value '%s'", v);
	return (int)mode;
}

static int split_cb(const struct option *opt, const char *arg, int unset)
{
	enum commit_graph_split *split = opt->value;
	if (unset) {
		*split = COMMIT_GRAPH_NO_SPLIT;
		return 0;
	}
	if (!arg)
		*split = COMMIT_GRAPH_SPLIT;
	else if (!strcmp(arg, "no-merge"))
		*split = COMMIT_GRAPH_SPLIT_NO_MERGE;
	else if (!strcmp(arg, "replace"))
		*split = COMMIT_GRAPH_SPLIT_REPLACE;
	else
		die("unrecognized --split argument, %s", arg);
	return 0;
}

static int expiry_cb(const struct option *opt, const char *arg, int unset)
{
	uint64_t *out = opt->value;
	int64_t when;
	if (unset || !arg) {
		*out = 0;
		return 0;
	}
	if (!parse_expiry_date(arg, (int64_t)time(NULL), &when))
		die("malformed expiration date '%s'", arg);
	*out = when > 0 ? (uint64_t)when : 1;
	return 0;
}

static int cmd_write(int argc, const char **argv, struct repository *repo)
{
	struct commit_graph_write_opts opts = COMMIT_GRAPH_WRITE_OPTS_INIT;
	struct commit_graph_write_result result;
	struct gp_error err = GP_ERROR_INIT;
	const char *object_dir = NULL;
	int reachable = 0, stdin_packs = 0, stdin_commits = 0, append = 0, progress = -1;
	int changed_paths = -1, max_commits = 0, size_multiple = 2, max_new_filters = -1;
	struct tips tips = { NULL };
	struct strbuf line = STRBUF_INIT;
	struct odb *odb;
	const char *objdir;
	int algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	struct option options[] = {
		OPT_STRING(0, "object-dir", &object_dir, "dir", "the object directory to store the graph"),
		OPT_BOOL(0, "reachable", &reachable, "start walk at all refs"),
		OPT_BOOL(0, "stdin-packs", &stdin_packs, "scan pack-indexes listed by stdin for commits"),
		OPT_BOOL(0, "stdin-commits", &stdin_commits, "start walk at commits listed by stdin"),
		OPT_BOOL(0, "append", &append, "include all commits already in the commit-graph file"),
		OPT_BOOL(0, "changed-paths", &changed_paths, "enable computation for changed paths"),
		OPT_CALLBACK_F(0, "split", &opts.split, "strategy",
			       "allow writing an incremental commit-graph file", PARSE_OPT_OPTARG, split_cb),
		OPT_INTEGER(0, "max-commits", &max_commits,
			    "maximum number of commits in a non-base split commit-graph"),
		OPT_INTEGER(0, "size-multiple", &size_multiple,
			    "maximum ratio between two levels of a split commit-graph"),
		OPT_CALLBACK(0, "expire-time", &opts.expire_time, "expiry-date",
			     "only expire files older than a given date-time", expiry_cb),
		OPT_INTEGER(0, "max-new-filters", &max_new_filters,
			    "maximum number of changed-path Bloom filters to compute"),
		OPT_BOOL(0, "progress", &progress, "force progress reporting"),
		OPT_END(),
	};
	int ret = 0;

	argc = parse_options(argc, argv, options, write_usage);
	if (argc)
		usage_with_options(write_usage, options);
	if (reachable + stdin_packs + stdin_commits > 1)
		die("use at most one of --reachable, --stdin-commits, or --stdin-packs");
	if (changed_paths < 0 && repo &&
	    config_get_bool_or(&repo->config, "commitgraph.changedpaths", false))
		changed_paths = 1;
	opts.changed_paths = changed_paths < 0 ? COMMIT_GRAPH_BLOOM_KEEP
			     : changed_paths ? COMMIT_GRAPH_BLOOM_WRITE : COMMIT_GRAPH_BLOOM_NO;
	if (repo) {
		int v = -1;
		struct gp_error cerr = GP_ERROR_INIT;
		config_get_int(&repo->config, "commitgraph.changedpathsversion", &v, &cerr);
		gp_error_clear(&cerr);
		if (v < -1 || v > 2) {
			warning("attempting to write a commit-graph, but "
				"'commitGraph.changedPathsVersion' (%d) is not supported", v);
			return 0;
		}
		opts.changed_paths_version = v;
	}
	/* The option wins over commitGraph.maxNewFilters; below 0 means no limit. */
	if (max_new_filters == -1 && repo) {
		struct gp_error cerr = GP_ERROR_INIT;
		config_get_int(&repo->config, "commitgraph.maxnewfilters", &max_new_filters, &cerr);
		gp_error_clear(&cerr);
	}
	opts.max_new_filters = max_new_filters < 0 ? -1 : max_new_filters;
	/* Git's test knobs for other filter shapes (t4216 uses them). */
	{
		const char *e;
		if ((e = getenv("GIT_TEST_BLOOM_SETTINGS_NUM_HASHES")))
			opts.bloom.num_hashes = (uint32_t)strtoul(e, NULL, 10);
		if ((e = getenv("GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY")))
			opts.bloom.bits_per_entry = (uint32_t)strtoul(e, NULL, 10);
		if ((e = getenv("GIT_TEST_BLOOM_SETTINGS_MAX_CHANGED_PATHS")))
			opts.bloom.max_changed_paths = (uint32_t)strtoul(e, NULL, 10);
	}
	if (repo && !config_get_bool_or(&repo->config, "core.commitgraph", true)) {
		warning("attempting to write a commit-graph, but 'core.commitGraph' is disabled");
		return 0;
	}
	if (repo && !graph_compatible(repo, false, false))
		return 0;
	objdir = objdir_of(repo, object_dir);
	odb = open_odb(repo, objdir, algo);
	opts.append = append;
	opts.max_commits = max_commits > 0 ? (uint32_t)max_commits : 0;
	opts.size_multiple = size_multiple > 0 ? (uint32_t)size_multiple : 2;
	opts.progress = progress < 0 ? isatty(2) : progress;
	if (repo) {
		const char *shared = NULL;
		if (!config_get_string(&repo->config, "core.sharedrepository", &shared) && shared)
			opts.shared_perm = shared_perm(shared);
	}
	if (repo) {
		int v = 2;
		struct gp_error cerr = GP_ERROR_INIT;
		if (!config_get_int(&repo->config, "commitgraph.generationversion", &v, &cerr) && v == 1)
			opts.no_generation_data = true;
		gp_error_clear(&cerr);
	}

	if (reachable) {
		if (!repo)
			die("--reachable needs a repository");
		if (refs_for_each(repo, "", add_ref, &tips, &err))
			die_error(&err);
		count_referenced_commits(odb, &tips, opts.progress);
	} else if (stdin_commits) {
		struct progress *meter = progress_start("Collecting commits from input", 0,
							opts.progress);
		while (!ret && strbuf_getline(&line, stdin)) {
			struct object_id oid;
			progress_update(meter, tips.nr + 1);
			if (line.len < gp_hash_algos[algo].hexsz || hex_to_oid(line.buf, algo, &oid))
				ret = error("unexpected non-hex object ID: %s", line.buf);
			else if (!odb_has_object(odb, &oid))
				ret = error("invalid object: %s", line.buf);
			else
				add_tip(&tips, &oid);
		}
		progress_stop(&meter);
		if (ret)
			goto out;
	} else if (stdin_packs) {
		while (strbuf_getline(&line, stdin)) {
			struct packed_git *p = NULL;
			char *path = xstrfmt("%s/pack/%s", objdir, line.buf);
			if (pack_open_idx(&p, path, algo, &err)) {
				gp_error_clear(&err);
				ret = error("error adding pack %s", path);
				free(path);
				goto out;
			}
			add_pack_commits(&tips, odb, p);
			pack_free(p);
			free(path);
		}
	} else {
		for (size_t i = 0; i < odb_nr_packs(odb); i++)
			add_pack_commits(&tips, odb, odb_pack(odb, i));
	}

	ret = commit_graph_write(objdir, odb, algo, tips.items, tips.nr, &opts, &result, &err);
	for (size_t i = 0; i < result.nr_bloom_disabled; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		warning("disabling Bloom filters for commit-graph layer '%s' due to incompatible settings",
			oid_to_hex_r(hex, &result.bloom_disabled[i]));
	}
	free(result.bloom_disabled);
	if (ret) {
		ret = error("%s", gp_error_msg(&err));
		gp_error_clear(&err);
		goto out;
	}
out:
	strbuf_release(&line);
	free(tips.items);
	if (!repo || strcmp(objdir, repo->objdir))
		odb_free(odb);
	return ret ? 1 : 0;
}

static void report_line(const char *msg, void *data)
{
	(void)data;
	error("%s", msg);
}

static int cmd_verify(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	const char *object_dir = NULL;
	int shallow = 0, progress = -1;
	struct commit_graph *g = NULL;
	struct odb *odb;
	const char *objdir;
	int algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	struct option options[] = {
		OPT_STRING(0, "object-dir", &object_dir, "dir", "the object directory to store the graph"),
		OPT_BOOL(0, "shallow", &shallow, "if the commit-graph is split, only verify the tip file"),
		OPT_BOOL(0, "progress", &progress, "force progress reporting"),
		OPT_END(),
	};
	int ret;

	argc = parse_options(argc, argv, options, verify_usage);
	if (argc)
		usage_with_options(verify_usage, options);
	objdir = objdir_of(repo, object_dir);
	odb = open_odb(repo, objdir, algo);
	/* As git: the directory's own graph, whose layers may be an alternate's. */
	ret = commit_graph_open_odb(&g, odb, COMMIT_GRAPH_OPEN_LOCAL, &err);
	if (ret == GP_ENOTFOUND) {
		ret = 0;
		goto out;
	}
	if (ret) {
		error("%s", gp_error_msg(&err));
		gp_error_clear(&err);
		commit_graph_verify_checksums(odb, report_line, NULL);
		ret = 1;
		goto out;
	}
	ret = commit_graph_verify(g, odb, shallow, progress < 0 ? isatty(2) : progress, report_line,
				  NULL);
	commit_graph_free(g);
out:
	if (!repo || strcmp(objdir, repo->objdir))
		odb_free(odb);
	return ret ? 1 : 0;
}

const struct commit_graph *walk_commit_graph(struct repository *repo, bool shallow)
{
	struct gp_error err = GP_ERROR_INIT;
	const struct commit_graph *g = NULL;
	/* As git: no graph under replace refs, nor with a --shallow-file. */
	if (!graph_compatible(repo, shallow, true))
		return NULL;
	if (repo_commit_graph(repo, &g, &err))
		warning("%s", gp_error_msg(&err));
	gp_error_clear(&err);
	return g;
}

int cmd_commit_graph(int argc, const char **argv, struct repository *repo)
{
	if (argc < 2)
		usage_with_options(cg_usage, (struct option[]){ OPT_END() });
	if (!strcmp(argv[1], "-h")) /* answered on stdout, with success */
		parse_options(argc, argv, (struct option[]){ OPT_END() }, cg_usage);
	if (!strcmp(argv[1], "write"))
		return cmd_write(argc - 1, argv + 1, repo);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1, repo);
	error("unknown subcommand: `%s'", argv[1]);
	usage_with_options(cg_usage, (struct option[]){ OPT_END() });
}
