/*
 * builtin/rev-list.c: gitpack rev-list, the commits (and with --objects
 * every object) reachable from the given revisions and not from the
 * excluded ones, in git's order and format.
 */
#include "../builtin.h"
#include "../commit-graph.h"
#include "../error.h"
#include "../object-name.h"
#include "../odb.h"
#include "../oidset.h"
#include "../pack-bitmap.h"
#include "../progress.h"
#include "../parse-options.h"
#include "../refs.h"
#include "../repository.h"
#include "../revision.h"
#include "../shallow.h"
#include "../strbuf.h"
#include "../walk-filter.h"
#include "../object-filter.h"

static const char *const rev_list_usage[] = {
	"git rev-list [--objects [--filter=<spec>] [--filter-print-omitted] [--filter-provided-objects] [--missing=<action>] [--no-object-names]] [--quiet] [--count] [--use-bitmap-index] [--test-bitmap] [--all] [--branches] [--tags] [--not] <commit>... [^<commit>...] [<a>..<b>]",
	NULL,
};

struct list_state {
	bool count_only;
	bool quiet;          /* --quiet: list nothing (omitted and missing ones still) */
	int object_names;    /* the path after a tree's or a blob's name (an OPT_BOOL) */
	uint64_t count;
	struct object_id *missing; /* --missing=print, in the order met */
	size_t nr_missing, alloc_missing;
	struct oidset missing_seen;
};

static int show_one(const struct object_id *oid, enum object_type type,
		    const char *path, void *data)
{
	struct list_state *st = data;
	char hex[GP_MAX_HEXSZ + 1];
	if (st->quiet)
		return 0;
	st->count++;
	if (st->count_only)
		return 0;
	oid_to_hex_r(hex, oid);
	if (path && st->object_names) {
		/* git stops a name at a newline, keeping the line format */
		const char *nl = strchr(path, '\n');
		printf("%s %.*s\n", hex, nl ? (int)(nl - path) : (int)strlen(path), path);
	} else {
		printf("%s\n", hex);
	}
	return 0;
}

static void note_missing(const struct object_id *oid, void *data)
{
	struct list_state *st = data;
	if (!oidset_insert(&st->missing_seen, oid))
		return;
	ALLOC_GROW(st->missing, st->nr_missing + 1, st->alloc_missing);
	st->missing[st->nr_missing++] = *oid;
}

static int show_omitted(const struct object_id *oid, void *data)
{
	char hex[GP_MAX_HEXSZ + 1];
	printf("~%s\n", oid_to_hex_r(hex, oid));
	return 0;
}

/* The revisions named, kept so that bitmaps or the walk can answer. */
struct tip_list {
	struct bitmap_tip *tips;
	char **paths;
	size_t nr, alloc;
};

static void add_tip(struct tip_list *tl, const struct object_id *oid,
		    bool uninteresting, const char *path)
{
	ALLOC_GROW(tl->tips, tl->nr + 1, tl->alloc);
	tl->paths = xrealloc(tl->paths, tl->alloc * sizeof(*tl->paths));
	tl->tips[tl->nr].oid = *oid;
	tl->tips[tl->nr].uninteresting = uninteresting;
	tl->paths[tl->nr++] = xstrdup(path);
}

struct ref_tips {
	struct tip_list *tl;
	bool uninteresting;
};

static int add_ref_tip(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct ref_tips *rt = data;
	add_tip(rt->tl, oid, rt->uninteresting, "");
	return 0;
}

static void add_refs(struct repository *repo, struct tip_list *tl, const char *prefix,
		     bool with_head, bool uninteresting)
{
	struct gp_error err = GP_ERROR_INIT;
	struct ref_tips rt = { tl, uninteresting };
	struct object_id head;
	if (with_head && !refs_resolve(repo, "HEAD", &head, NULL, &err))
		add_tip(tl, &head, uninteresting, "");
	gp_error_clear(&err);
	if (refs_for_each(repo, prefix, add_ref_tip, &rt, &err))
		die_error(&err);
}

static void add_rev(struct repository *repo, struct odb *odb, struct tip_list *tl,
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
	add_tip(tl, &oid, uninteresting, path);
}

struct walk_filter *walk_filter_or_die(struct repository *repo, struct odb *odb,
				       const struct object_filter *f)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf warn = STRBUF_INIT;
	struct walk_filter *wf;

	if (f->kind == OBJECT_FILTER_NONE)
		return NULL;
	if (walk_filter_new(&wf, f, repo, odb, &warn, &err)) {
		if (warn.len)
			warning("%s", warn.buf);
		die_error(&err);
	}
	strbuf_release(&warn);
	return wf;
}

static int show_bitmapped(const struct object_id *oid, enum object_type type, void *data)
{
	char hex[GP_MAX_HEXSZ + 1];
	printf("%s\n", oid_to_hex_r(hex, oid));
	return 0;
}

static struct bitmap_index *open_bitmap(struct odb *odb)
{
	struct gp_error err = GP_ERROR_INIT;
	struct bitmap_index *bi = NULL;
	int ret = bitmap_index_open(&bi, odb, &err);
	if (ret && ret != GP_ENOTFOUND)
		warning("ignoring bitmap: %s", gp_error_msg(&err));
	gp_error_clear(&err);
	return ret ? NULL : bi;
}

/*
 * Answer from the bitmap as git does: objects by type, each in bit
 * order, without paths. 1 when the bitmap cannot answer.
 */
static int list_with_bitmap(struct odb *odb, const struct tip_list *tl, bool objects,
			    bool count)
{
	struct gp_error err = GP_ERROR_INIT;
	struct bitmap_index *bi = open_bitmap(odb);
	struct bitmap_result *res = NULL;
	unsigned mask = objects ? BITMAP_SHOW_COMMITS | BITMAP_SHOW_TREES |
		BITMAP_SHOW_BLOBS | BITMAP_SHOW_TAGS : BITMAP_SHOW_COMMITS;
	int ret;
	if (!bi)
		return 1;
	ret = bitmap_reachable(bi, odb, tl->tips, tl->nr, &res, &err);
	if (ret == GP_ECORRUPT) {
		warning("ignoring bitmap: %s", gp_error_msg(&err));
		ret = 1;
	} else if (ret < 0) {
		die_error(&err);
	}
	if (!ret && count) {
		uint64_t counts[5];
		bitmap_result_count(res, counts);
		printf("%" PRIu64 "\n", counts[OBJ_COMMIT] +
		       (objects ? counts[OBJ_TREE] + counts[OBJ_BLOB] + counts[OBJ_TAG] : 0));
	} else if (!ret) {
		bitmap_result_for_each(res, mask, show_bitmapped, NULL);
	}
	gp_error_clear(&err);
	bitmap_result_free(res);
	bitmap_index_free(bi);
	return ret;
}

static void test_bitmap(struct odb *odb, const struct tip_list *tl, bool show_progress)
{
	struct gp_error err = GP_ERROR_INIT;
	struct bitmap_index *bi;
	struct progress *progress = NULL;
	char hex[GP_MAX_HEXSZ + 1];
	uint64_t bits = 0;
	uint32_t checksum = 0;
	int ret;

	if (tl->nr != 1)
		die("you must specify exactly one commit to test");
	ret = bitmap_index_open(&bi, odb, &err);
	if (ret)
		die("failed to load bitmap indexes: %s", gp_error_msg(&err));
	fprintf(stderr, "Bitmap v1 test (%u entries%s)\n", bitmap_index_nr_entries(bi),
		bitmap_index_flags(bi) & BITMAP_OPT_LOOKUP_TABLE ? "" : " loaded");
	oid_to_hex_r(hex, &tl->tips[0].oid);
	progress = progress_start("Verifying bitmap entries", 0, show_progress);
	ret = bitmap_test_commit(bi, odb, &tl->tips[0].oid, progress, &bits, &checksum, &err);
	if (bits)
		fprintf(stderr, "Found bitmap for '%s'. %" PRIu64 " bits / %08x checksum\n",
			hex, bits, checksum);
	progress_stop(&progress);
	if (ret)
		die_error(&err);
	fprintf(stderr, "OK!\n");
	bitmap_index_free(bi);
}

/* Options that take no part in naming revisions; what --missing= said. */
struct list_opts {
	int objects, count, use_bitmap, test_bitmap, quiet;
	int print_omitted, filter_provided;
	enum rev_missing missing;
};

/* --missing=<action>, which git reads before anything else; others are ignored, as git does. */
static void parse_missing(struct list_opts *o, const char *action)
{
	if (!strcmp(action, "error"))
		o->missing = REV_MISSING_ERROR;
	else if (!strcmp(action, "allow-any") || !strcmp(action, "allow-promisor"))
		o->missing = REV_MISSING_ALLOW;
	else if (!strcmp(action, "print"))
		o->missing = REV_MISSING_PRINT;
	else if (!strcmp(action, "print-info"))
		die("--missing=print-info is not supported");
}

/* Whether arg is one of the options of struct list_opts. */
static bool is_list_opt(const char *arg)
{
	static const char *const names[] = {
		"--objects", "--count", "--use-bitmap-index", "--test-bitmap", "--quiet",
		"--filter-print-omitted", "--filter-provided-objects", "--no-object-names",
		"--object-names", "-h",
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i]))
			return true;
	return !strncmp(arg, "--missing=", 10);
}

int cmd_rev_list(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct list_state st = { .object_names = true, .missing_seen = OIDSET_INIT };
	struct list_opts o = { .missing = REV_MISSING_ERROR };
	struct object_filter filter = OBJECT_FILTER_INIT;
	struct walk_filter *wf = NULL;
	struct rev_walk *walk;
	struct odb *odb;
	struct tip_list tl = { 0 };
	struct oidset shallow = OIDSET_INIT;
	const struct commit_graph *graph = NULL;
	bool negate = false, has_max_age = false;
	uint64_t max_age = 0;
	int ret;
	struct option options[] = {
		OPT_BOOL(0, "objects", &o.objects, "list trees and blobs too, with their paths"),
		OPT_BOOL(0, "count", &o.count, "print only the number of objects"),
		OPT_BOOL(0, "use-bitmap-index", &o.use_bitmap, "use reachability bitmaps when present"),
		OPT_BOOL(0, "test-bitmap", &o.test_bitmap, "check the bitmap of the one commit named against a walk"),
		OPT_BOOL(0, "quiet", &o.quiet, "list nothing (but what --filter-print-omitted and --missing=print print)"),
		OPT_BOOL(0, "filter-print-omitted", &o.print_omitted, "print the objects the filter left out, as ~<oid>"),
		OPT_BOOL(0, "filter-provided-objects", &o.filter_provided, "filter the objects named too"),
		OPT_BOOL(0, "object-names", &st.object_names, "print paths after the names of trees and blobs"),
		OPT_END(),
	};

	/*
	 * Revision options are positional (--not flips what follows, a
	 * later --filter adds to an earlier one), so parse_options() sees
	 * only the others; the loop below takes the rest in order.
	 */
	{
		const char **opts_only = xcalloc((size_t)argc + 1, sizeof(*opts_only));
		int nr_opts = 0;
		opts_only[nr_opts++] = argv[0];
		for (int i = 1; i < argc; i++) {
			if (!strncmp(argv[i], "--missing=", 10))
				parse_missing(&o, argv[i] + 10);
			else if (!strcmp(argv[i], "--no-object-names"))
				st.object_names = false;
			else if (is_list_opt(argv[i]))
				opts_only[nr_opts++] = argv[i];
		}
		parse_options(nr_opts, opts_only, options, rev_list_usage);
		free(opts_only);
	}
	/* Only now: "-h" runs without a repository (gitpack.c). */
	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	rev_walk_new(&walk, odb, repo->hash_algo);
	/* The shallow file (or --shallow-file) grafts its commits to none. */
	if (shallow_read(repo, &shallow, &err))
		die_error(&err);
	if (oidset_size(&shallow)) {
		rev_walk_set_shallow(walk, &shallow);
		o.use_bitmap = 0;
	}
	graph = walk_commit_graph(repo, oidset_size(&shallow) != 0);
	if (graph)
		rev_walk_set_commit_graph(walk, graph);
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *dots;
		if (is_list_opt(arg))
			continue;
		if (!strcmp(arg, "--not")) {
			negate = !negate;
		} else if (!strcmp(arg, "--all")) {
			add_refs(repo, &tl, "", true, negate);
		} else if (!strcmp(arg, "--branches")) {
			add_refs(repo, &tl, "refs/heads/", false, negate);
		} else if (!strcmp(arg, "--tags")) {
			add_refs(repo, &tl, "refs/tags/", false, negate);
		} else if (!strncmp(arg, "--filter=", 9)) {
			if (object_filter_add(&filter, arg + 9, &err))
				die_error(&err);
		} else if (!strcmp(arg, "--no-filter")) {
			object_filter_release(&filter);
		} else if (!strncmp(arg, "--max-age=", 10)) {
			char *end;
			errno = 0;
			max_age = strtoull(arg + 10, &end, 10);
			if (errno || end == arg + 10 || *end)
				die("'%s' is not a valid timestamp", arg + 10);
			has_max_age = true;
		} else if (arg[0] == '-') {
			error("unsupported option '%s'", arg);
			usage_with_options(rev_list_usage, options);
		} else if (arg[0] == '^') {
			add_rev(repo, odb, &tl, arg + 1, !negate);
		} else if ((dots = strstr(arg, "..")) && !strchr(arg, ':')) {
			char *left;
			if (dots[2] == '.')
				die("symmetric differences ('%s') are not supported", arg);
			left = xstrndup(arg, (size_t)(dots - arg));
			add_rev(repo, odb, &tl, *left ? left : "HEAD", !negate);
			add_rev(repo, odb, &tl, dots[2] ? dots + 2 : "HEAD", negate);
			free(left);
		} else {
			add_rev(repo, odb, &tl, arg, negate);
		}
	}
	if (filter.kind != OBJECT_FILTER_NONE && !o.objects)
		die("object filtering requires --objects");
	if (o.test_bitmap) {
		test_bitmap(odb, &tl, isatty(2));
		goto out;
	}
	/* Bitmaps know no paths (nor dates): a filter is answered by the walk. */
	if (o.use_bitmap && filter.kind == OBJECT_FILTER_NONE && !o.quiet && !has_max_age &&
	    o.missing == REV_MISSING_ERROR && !list_with_bitmap(odb, &tl, o.objects, o.count))
		goto out;
	for (size_t i = 0; i < tl.nr; i++)
		if (rev_walk_add_tip(walk, &tl.tips[i].oid, tl.tips[i].uninteresting,
				     tl.paths[i], &err))
			die_error(&err);
	wf = walk_filter_or_die(repo, odb, &filter);
	if (wf)
		rev_walk_set_filter(walk, wf, (o.filter_provided ? REV_FILTER_PROVIDED : 0) |
				    (o.print_omitted ? REV_FILTER_OMITS : 0));
	rev_walk_set_missing(walk, o.missing, note_missing, &st);
	if (has_max_age)
		rev_walk_set_max_age(walk, max_age);
	st.count_only = o.count;
	st.quiet = o.quiet;
	ret = rev_walk_run(walk, o.objects ? REV_OBJECTS : 0, show_one, &st, &err);
	if (ret)
		die_error(&err);
	if (o.print_omitted)
		rev_walk_for_each_omitted(walk, show_omitted, NULL);
	for (size_t i = 0; i < st.nr_missing; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		printf("?%s\n", oid_to_hex_r(hex, &st.missing[i]));
	}
	if (o.count)
		printf("%" PRIu64 "\n", st.count);
out:
	for (size_t i = 0; i < tl.nr; i++)
		free(tl.paths[i]);
	free(tl.paths);
	free(tl.tips);
	rev_walk_free(walk);
	walk_filter_free(wf);
	object_filter_release(&filter);
	free(st.missing);
	oidset_release(&st.missing_seen);
	oidset_release(&shallow);
	return 0;
}
