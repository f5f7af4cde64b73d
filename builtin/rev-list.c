/*
 * builtin/rev-list.c: gitpack rev-list, the commits (and with --objects
 * every object) reachable from the given revisions and not from the
 * excluded ones, in git's order and format.
 */
#include "../builtin.h"
#include "../error.h"
#include "../object-name.h"
#include "../odb.h"
#include "../parse-options.h"
#include "../refs.h"
#include "../repository.h"
#include "../revision.h"

static const char *const rev_list_usage[] = {
	"gitpack rev-list [--objects] [--count] [--all] [--branches] [--tags] [--not] <commit>... [^<commit>...] [<a>..<b>]",
	NULL,
};

struct list_state {
	bool count_only;
	uint64_t count;
};

static int show_one(const struct object_id *oid, enum object_type type,
		    const char *path, void *data)
{
	struct list_state *st = data;
	char hex[GP_MAX_HEXSZ + 1];
	st->count++;
	if (st->count_only)
		return 0;
	oid_to_hex_r(hex, oid);
	if (path)
		printf("%s %s\n", hex, path);
	else
		printf("%s\n", hex);
	return 0;
}

struct ref_tips {
	struct rev_walk *walk;
	bool uninteresting;
	struct gp_error *err;
};

static int add_ref_tip(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct ref_tips *rt = data;
	return rev_walk_add_tip(rt->walk, oid, rt->uninteresting, "", rt->err);
}

static void add_refs(struct repository *repo, struct rev_walk *walk, const char *prefix,
		     bool with_head, bool uninteresting)
{
	struct gp_error err = GP_ERROR_INIT;
	struct ref_tips rt = { walk, uninteresting, &err };
	struct object_id head;
	if (with_head && !refs_resolve(repo, "HEAD", &head, NULL, &err) &&
	    rev_walk_add_tip(walk, &head, uninteresting, "", &err))
		die_error(&err);
	gp_error_clear(&err);
	if (refs_for_each(repo, prefix, add_ref_tip, &rt, &err))
		die_error(&err);
}

static void add_rev(struct repository *repo, struct odb *odb, struct rev_walk *walk,
		    const char *arg, bool uninteresting)
{
	struct gp_error err = GP_ERROR_INIT;
	struct oid_context ctx = { 0 };
	struct object_id oid;
	const char *path = "";
	if (get_oid_ctx(repo, odb, arg, &oid, &ctx, &err)) {
		if (err.code == GP_ENOTFOUND && !ctx.has_path)
			die("bad revision '%s'", arg);
		die_error(&err);
	}
	if (ctx.has_path && strchr(arg, ':'))
		path = strchr(arg, ':') + 1;
	if (rev_walk_add_tip(walk, &oid, uninteresting, path, &err))
		die_error(&err);
}

int cmd_rev_list(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct list_state st = { false, 0 };
	struct rev_walk *walk;
	struct odb *odb;
	int objects = 0, count = 0, use_bitmap = 0;
	bool negate = false;
	int ret;
	struct option options[] = {
		OPT_BOOL(0, "objects", &objects, "list trees and blobs too, with their paths"),
		OPT_BOOL(0, "count", &count, "print only the number of objects"),
		OPT_BOOL(0, "use-bitmap-index", &use_bitmap, "use reachability bitmaps when present"),
		OPT_END(),
	};
	const char **args = xcalloc((size_t)argc + 1, sizeof(*args));
	int nr_args = 0;

	/* Revision options are positional (--not flips what follows), so
	 * pull them out before parse_options() sees the rest. */
	args[nr_args++] = argv[0];
	for (int i = 1; i < argc; i++)
		args[nr_args++] = argv[i];
	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	rev_walk_new(&walk, odb, repo->hash_algo);

	{
		const char **opts_only = xcalloc((size_t)argc + 1, sizeof(*opts_only));
		int nr_opts = 0;
		opts_only[nr_opts++] = argv[0];
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--objects") || !strcmp(argv[i], "--count") ||
			    !strcmp(argv[i], "--use-bitmap-index") || !strcmp(argv[i], "-h"))
				opts_only[nr_opts++] = argv[i];
		parse_options(nr_opts, opts_only, options, rev_list_usage);
		free(opts_only);
	}
	for (int i = 1; i < nr_args; i++) {
		const char *arg = args[i], *dots;
		if (!strcmp(arg, "--objects") || !strcmp(arg, "--count") ||
		    !strcmp(arg, "--use-bitmap-index"))
			continue;
		if (!strcmp(arg, "--not")) {
			negate = !negate;
		} else if (!strcmp(arg, "--all")) {
			add_refs(repo, walk, "", true, negate);
		} else if (!strcmp(arg, "--branches")) {
			add_refs(repo, walk, "refs/heads/", false, negate);
		} else if (!strcmp(arg, "--tags")) {
			add_refs(repo, walk, "refs/tags/", false, negate);
		} else if (arg[0] == '-') {
			error("unsupported option '%s'", arg);
			usage_with_options(rev_list_usage, options);
		} else if (arg[0] == '^') {
			add_rev(repo, odb, walk, arg + 1, !negate);
		} else if ((dots = strstr(arg, "..")) && !strchr(arg, ':')) {
			char *left;
			if (dots[2] == '.')
				die("symmetric differences ('%s') are not supported", arg);
			left = xstrndup(arg, (size_t)(dots - arg));
			add_rev(repo, odb, walk, *left ? left : "HEAD", !negate);
			add_rev(repo, odb, walk, dots[2] ? dots + 2 : "HEAD", negate);
			free(left);
		} else {
			add_rev(repo, odb, walk, arg, negate);
		}
	}
	free(args);
	/*
	 * NEEDSWORK: --use-bitmap-index answers from the walk until bitmap
	 * reading lands; the answers are the same, only slower.
	 */
	st.count_only = count;
	ret = rev_walk_run(walk, objects ? REV_OBJECTS : 0, show_one, &st, &err);
	if (ret)
		die_error(&err);
	if (count)
		printf("%" PRIu64 "\n", st.count);
	rev_walk_free(walk);
	return 0;
}
