/*
 * builtin/rev-list.c: gitpack rev-list, the commits (and with --objects
 * every object) reachable from the given revisions and not from the
 * excluded ones, in git's order and format.
 */
#include "../builtin.h"
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
	"gitpack rev-list [--objects] [--count] [--use-bitmap-index] [--test-bitmap] [--all] [--branches] [--tags] [--not] <commit>... [^<commit>...] [<a>..<b>]",
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

int cmd_rev_list(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct list_state st = { false, 0 };
	struct rev_walk *walk;
	struct odb *odb;
	int objects = 0, count = 0, use_bitmap = 0, test_bitmap_flag = 0;
	struct tip_list tl = { 0 };
	struct oidset shallow = OIDSET_INIT;
	bool negate = false;
	int ret;
	struct option options[] = {
		OPT_BOOL(0, "objects", &objects, "list trees and blobs too, with their paths"),
		OPT_BOOL(0, "count", &count, "print only the number of objects"),
		OPT_BOOL(0, "use-bitmap-index", &use_bitmap, "use reachability bitmaps when present"),
		OPT_BOOL(0, "test-bitmap", &test_bitmap_flag, "check the bitmap of the one commit named against a walk"),
		OPT_END(),
	};
	const char **args = xcalloc((size_t)argc + 1, sizeof(*args));
	int nr_args = 0;

	/* Revision options are positional (--not flips what follows), so
	 * pull them out before parse_options() sees the rest. */
	args[nr_args++] = argv[0];
	for (int i = 1; i < argc; i++)
		args[nr_args++] = argv[i];
	{
		const char **opts_only = xcalloc((size_t)argc + 1, sizeof(*opts_only));
		int nr_opts = 0;
		opts_only[nr_opts++] = argv[0];
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--objects") || !strcmp(argv[i], "--count") ||
			    !strcmp(argv[i], "--use-bitmap-index") || !strcmp(argv[i], "--test-bitmap") ||
			    !strcmp(argv[i], "-h"))
				opts_only[nr_opts++] = argv[i];
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
		use_bitmap = 0;
	}
	for (int i = 1; i < nr_args; i++) {
		const char *arg = args[i], *dots;
		if (!strcmp(arg, "--objects") || !strcmp(arg, "--count") ||
		    !strcmp(arg, "--use-bitmap-index") || !strcmp(arg, "--test-bitmap"))
			continue;
		if (!strcmp(arg, "--not")) {
			negate = !negate;
		} else if (!strcmp(arg, "--all")) {
			add_refs(repo, &tl, "", true, negate);
		} else if (!strcmp(arg, "--branches")) {
			add_refs(repo, &tl, "refs/heads/", false, negate);
		} else if (!strcmp(arg, "--tags")) {
			add_refs(repo, &tl, "refs/tags/", false, negate);
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
	free(args);
	if (test_bitmap_flag) {
		test_bitmap(odb, &tl, isatty(2));
		goto out;
	}
	if (use_bitmap && !list_with_bitmap(odb, &tl, objects, count))
		goto out;
	for (size_t i = 0; i < tl.nr; i++)
		if (rev_walk_add_tip(walk, &tl.tips[i].oid, tl.tips[i].uninteresting,
				     tl.paths[i], &err))
			die_error(&err);
	st.count_only = count;
	ret = rev_walk_run(walk, objects ? REV_OBJECTS : 0, show_one, &st, &err);
	if (ret)
		die_error(&err);
	if (count)
		printf("%" PRIu64 "\n", st.count);
out:
	for (size_t i = 0; i < tl.nr; i++)
		free(tl.paths[i]);
	free(tl.paths);
	free(tl.tips);
	rev_walk_free(walk);
	oidset_release(&shallow);
	return 0;
}
