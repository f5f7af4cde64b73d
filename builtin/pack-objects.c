/*
 * builtin/pack-objects.c: gitpack pack-objects, a pack of the objects
 * named on stdin (object ids, revisions with --revs, or packs with
 * --stdin-packs), streamed to stdout or written as BASE-<hash>.pack,
 * .idx and .rev.
 */
#include "../builtin.h"
#include "../config.h"
#include "../date.h"
#include "../delta-islands.h"
#include "../error.h"
#include "../object-filter.h"
#include "../object-name.h"
#include "../odb.h"
#include "../pack-bitmap.h"
#include "../pack-bitmap-write.h"
#include "../repack-bitmap.h"
#include "../progress.h"
#include "../pseudo-merge.h"
#include "../pack-objects.h"
#include "../pack-write.h"
#include "../parse-options.h"
#include "../reachable.h"
#include "../refs.h"
#include "../repository.h"
#include "../revision.h"
#include "../oidset.h"
#include "../shallow.h"
#include "../stdin-packs.h"
#include "../strbuf.h"
#include "../trace2.h"
#include "../walk-filter.h"
#include <time.h>
#include <unistd.h>

static const char *const pack_objects_usage[] = {
	"git pack-objects [<options>] <base-name> < <object-list>",
	"git pack-objects [<options>] --stdout < <object-list> > <pack>",
	NULL,
};

/* The revisions of --revs and --all, before they go to a walk or a bitmap query. */
struct tip_list {
	struct bitmap_tip *items;
	size_t nr, alloc;
	struct odb *odb;    /* for GIT_REF_PARANOIA=0's check, when set */
};

static void tip_list_add(struct tip_list *tl, const struct object_id *oid, bool uninteresting)
{
	ALLOC_GROW(tl->items, tl->nr + 1, tl->alloc);
	tl->items[tl->nr].oid = *oid;
	tl->items[tl->nr].uninteresting = uninteresting;
	tl->nr++;
}

static int add_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	struct tip_list *tl = data;
	if (flags & REF_ISBROKEN)
		die("bad object %s", refname);
	/* GIT_REF_PARANOIA=0: a ref to a missing object is passed by, as in git */
	if (tl->odb && !refs_paranoia() && !odb_has_object(tl->odb, oid))
		return 0;
	tip_list_add(tl, oid, false);
	return 0;
}

static void add_all_refs(struct repository *repo, struct tip_list *tl)
{
	struct gp_error odb_err = GP_ERROR_INIT;
	if (!tl->odb && repo_odb(repo, &tl->odb, &odb_err))
		gp_error_clear(&odb_err);
	struct gp_error err = GP_ERROR_INIT;
	struct object_id head;
	if (!refs_resolve(repo, "HEAD", &head, NULL, &err))
		tip_list_add(tl, &head, false);
	gp_error_clear(&err);
	if (refs_for_each_ext(repo, "", REFS_EACH_PARANOID, add_ref, tl, &err))
		die_error(&err);
}

static void add_rev(struct repository *repo, struct odb *odb, struct tip_list *tl,
		    const char *arg, bool uninteresting)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_id oid;
	if (get_oid(repo, odb, arg, &oid, &err)) {
		if (err.code == GP_ENOTFOUND)
			die("bad revision '%s'", arg);
		die_error(&err);
	}
	tip_list_add(tl, &oid, uninteresting);
}

/*
 * --revs: a revision per line, "^rev" and "--not" as rev-list has them,
 * and "--shallow <oid>": a commit of the receiver's shallow boundary,
 * whose parents the walk does not follow.
 */
static void read_revs(struct repository *repo, struct odb *odb, struct tip_list *tl,
		      struct oidset *shallow)
{
	struct strbuf line = STRBUF_INIT;
	bool negate = false;
	const char *arg;
	while (strbuf_getline(&line, stdin)) {
		struct object_id oid;
		bool uninteresting = negate;
		arg = line.buf;
		/* As in git, an empty line ends the revisions. */
		if (!*arg)
			break;
		if (!strcmp(arg, "--not")) {
			negate = !negate;
			continue;
		}
		if (skip_prefix(arg, "--shallow ", &arg)) {
			if (parse_oid_hex_exact(arg, repo->hash_algo, &oid))
				die("not an object name '%s'", arg);
			oidset_insert(shallow, &oid);
			continue;
		}
		if (*arg == '-')
			die("not a rev '%s'", arg);
		if (*arg == '^') {
			uninteresting = !uninteresting;
			arg++;
		}
		{
			/* "A..B" is "^A B"; either side may be empty (HEAD). */
			const char *dots = strstr(arg, "..");
			if (dots && dots[2] != '.') {
				char *left = dots == arg ? xstrdup("HEAD") : xstrndup(arg, dots - arg);
				const char *right = dots[2] ? dots + 2 : "HEAD";
				add_rev(repo, odb, tl, left, !uninteresting);
				add_rev(repo, odb, tl, right, uninteresting);
				free(left);
				continue;
			}
		}
		add_rev(repo, odb, tl, arg, uninteresting);
	}
	strbuf_release(&line);
}

/* Count with the repository's bitmaps: true when they answered. */
static bool count_with_bitmap(struct pack_objects *po, struct odb *odb,
			      const struct tip_list *tl, enum pack_reuse reuse, bool thin,
			      struct bitmap_index **bi_out, struct bitmap_result **res_out,
			      bool progress)
{
	struct gp_error err = GP_ERROR_INIT;
	int ret = pack_objects_count_bitmapped(po, odb, tl->items, tl->nr, reuse, thin, progress,
					       bi_out, res_out, &err);
	if (ret < 0)
		die_error(&err);
	return ret == 0;
}

struct tag_add {
	struct pack_objects *po;
};

static int include_tag_ref(const char *refname, const struct object_id *oid,
			   const struct object_id *peeled, unsigned flags, void *data)
{
	struct tag_add *ta = data;
	struct gp_error err = GP_ERROR_INIT;
	if (pack_objects_include_tag(ta->po, oid, &err))
		die_error(&err);
	return 0;
}

/*
 * Without --revs: "<oid> [<name>]" per line, and "-<oid>": an object the
 * receiver has (a preferred base).
 */
static void read_object_list(struct pack_objects *po, int algo,
			     const struct pack_objects_filter *filter)
{
	struct strbuf line = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	size_t hexsz = gp_hash_algos[algo].hexsz;
	struct object_id *bases = NULL;
	size_t nr_bases = 0, alloc_bases = 0;
	while (strbuf_getline(&line, stdin)) {
		struct object_id oid;
		const char *name = NULL;
		if (line.buf[0] == '-') {
			if (line.len != hexsz + 1 || hex_to_oid(line.buf + 1, algo, &oid))
				die("expected edge object ID, got garbage:\n %s\n", line.buf);
			ALLOC_GROW(bases, nr_bases + 1, alloc_bases);
			bases[nr_bases++] = oid;
			continue;
		}
		if (line.len < hexsz || hex_to_oid(line.buf, algo, &oid) ||
		    (line.len > hexsz && line.buf[hexsz] != ' '))
			die("expected object ID, got garbage:\n %s\n", line.buf);
		if (line.len > hexsz)
			name = line.buf + hexsz + 1;
		if (pack_objects_filtered(po, filter, &oid))
			continue;
		pack_objects_add(po, &oid, OBJ_NONE, name);
	}
	if (nr_bases && pack_objects_add_preferred_bases(po, bases, nr_bases, &err))
		die_error(&err);
	free(bases);
	strbuf_release(&line);
}

struct oid_list {
	struct object_id *items;
	size_t nr, alloc;
};

static void note_missing(const struct object_id *oid, void *data)
{
	struct oid_list *l = data;
	ALLOC_GROW(l->items, l->nr + 1, l->alloc);
	l->items[l->nr++] = *oid;
}

static bool config_bool_default(struct repository *repo, const char *key, bool dflt)
{
	return config_get_bool_or(&repo->config, key, dflt);
}

/* *out = key's value unless *out was set already (!= INT_MIN); dflt when absent. */
static void config_int_default(struct repository *repo, const char *key, int *out, int dflt)
{
	struct gp_error err = GP_ERROR_INIT;
	int v, ret;
	if (*out != INT_MIN)
		return;
	ret = config_get_int(&repo->config, key, &v, &err);
	if (!ret)
		*out = v;
	else if (ret != GP_ENOTFOUND)
		die_error(&err);
	else
		*out = dflt;
	gp_error_clear(&err);
}

static enum pack_reuse pack_reuse_or_die(struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	enum pack_reuse reuse;
	if (pack_reuse_config(&repo->config, &reuse, &err))
		die_error(&err);
	return reuse;
}

static void warn_loose(const char *msg, void *data)
{
	warning("%s", msg);
}

/*
 * --stdin-packs[=follow]: "pack-X.pack" to include, "^pack-Y.pack" to
 * exclude, with follow "!pack-Z.pack" to exclude but walk through
 * (stdin-packs.h).
 */
static void read_packs(struct pack_objects *po, struct odb *odb, struct stdin_packs_opts *opts)
{
	struct strbuf line = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct stdin_packs_stats stats;
	struct stdin_packs *sp;

	stdin_packs_new(&sp);
	while (strbuf_getline(&line, stdin))
		stdin_packs_add_line(sp, line.buf, opts->follow);
	opts->warn = warn_loose;
	if (stdin_packs_add_objects(sp, odb, po, opts, &stats, &err))
		die_error(&err);
	trace2_data_intmax("pack-objects", "stdin_packs_found", (intmax_t)stats.found);
	trace2_data_intmax("pack-objects", "stdin_packs_hints", (intmax_t)stats.hints);
	stdin_packs_free(sp);
	strbuf_release(&line);
}

enum stdin_packs_mode {
	STDIN_PACKS_NONE = 0,
	STDIN_PACKS_STANDARD,
	STDIN_PACKS_FOLLOW,
};

static int parse_stdin_packs(const struct option *opt, const char *arg, int unset)
{
	enum stdin_packs_mode *mode = opt->value;
	if (unset)
		*mode = STDIN_PACKS_NONE;
	else if (!arg || !*arg)
		*mode = STDIN_PACKS_STANDARD;
	else if (!strcmp(arg, "follow"))
		*mode = STDIN_PACKS_FOLLOW;
	else
		die("invalid value for '%s': '%s'", opt->long_name, arg);
	return 0;
}

/* --unpacked, and --unpacked=<pack>: objects of that pack count as unpacked. */
struct unpacked_opt {
	bool set;
	struct opt_string_list packs;
};

/* As git: -q silences; --no-quiet shows progress unless it was already chosen. */
static int parse_quiet(const struct option *opt, const char *arg, int unset)
{
	int *progress = opt->value;
	if (!unset)
		*progress = 0;
	else if (!*progress)
		*progress = 1;
	return 0;
}

static int parse_unpacked(const struct option *opt, const char *arg, int unset)
{
	struct unpacked_opt *u = opt->value;
	u->set = !unset;
	if (arg) {
		ALLOC_GROW(u->packs.items, u->packs.nr + 1, u->packs.alloc);
		u->packs.items[u->packs.nr++] = arg;
	}
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

static int parse_missing(const struct option *opt, const char *arg, int unset)
{
	enum rev_missing *how = opt->value;
	if (unset || !strcmp(arg, "error"))
		*how = REV_MISSING_ERROR;
	else if (!strcmp(arg, "allow-any") || !strcmp(arg, "allow-promisor"))
		*how = REV_MISSING_ALLOW;
	else
		return error("invalid value for '--missing'");
	return 0;
}

struct expiry_opt {
	bool set;
	int64_t when;
};

static int parse_expiry(const struct option *opt, const char *arg, int unset)
{
	struct expiry_opt *x = opt->value;
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
	if (!unset && !arg)
		x->when = 0;
	return 0;
}

/* --cruft: "pack-X.pack" stays, "-pack-X.pack" is about to go. */
static void read_cruft_packs(struct repository *repo, struct pack_objects *po,
			     int64_t expiration)
{
	struct object_id *recent = NULL;
	size_t nr_recent = 0;
	struct strbuf line = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char **discard = NULL, **stay = NULL;
	size_t nr = 0, alloc = 0, nr_stay = 0, alloc_stay = 0;
	while (strbuf_getline(&line, stdin)) {
		if (!line.len)
			continue;
		if (line.buf[0] == '-') {
			ALLOC_GROW(discard, nr + 1, alloc);
			discard[nr++] = xstrdup(line.buf + 1);
		} else {
			ALLOC_GROW(stay, nr_stay + 1, alloc_stay);
			stay[nr_stay++] = xstrdup(line.buf);
		}
	}
	if (expiration && reachable_recent_hook_tips(repo, &recent, &nr_recent, &err))
		die_error(&err);
	pack_objects_set_recent(po, recent, nr_recent);
	if (pack_objects_add_cruft(po, (const char *const *)stay, nr_stay,
				   (const char *const *)discard, nr, expiration, &err))
		die_error(&err);
	free(recent);
	for (size_t i = 0; i < nr; i++)
		free(discard[i]);
	for (size_t i = 0; i < nr_stay; i++)
		free(stay[i]);
	free(discard);
	free(stay);
	strbuf_release(&line);
}

void warn_bitmap_config(struct repository *repo)
{
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		if (!strcmp(e->key, "pack.preferbitmaptips") && !e->value)
			error("missing value for '%s'", e->key);
	}
}

void check_pseudo_merge_config(struct repository *repo)
{
	struct pseudo_merge_config cfg = PSEUDO_MERGE_CONFIG_INIT;
	struct gp_error err = GP_ERROR_INIT;
	if (pseudo_merge_config_read(&cfg, &repo->config, (int64_t)time(NULL), &err))
		die_error(&err);
	for (size_t i = 0; i < cfg.nr_warnings; i++)
		warning("%s", cfg.warnings[i]);
	pseudo_merge_config_release(&cfg);
}

uint64_t max_pack_size_option(struct repository *repo, unsigned long given)
{
	struct gp_error err = GP_ERROR_INIT;
	unsigned long limit = given;
	if (!limit) {
		int ret = config_get_ulong(&repo->config, "pack.packsizelimit", &limit, &err);
		if (ret && ret != GP_ENOTFOUND)
			die_error(&err);
		gp_error_clear(&err);
	}
	if (limit && limit < PACK_OBJECTS_MIN_PACK_SIZE) {
		warning("minimum pack size limit is 1 MiB");
		return PACK_OBJECTS_MIN_PACK_SIZE;
	}
	return limit;
}

uint64_t big_file_threshold_config(struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	unsigned long v = 0;
	int ret = config_get_ulong(&repo->config, "core.bigfilethreshold", &v, &err);
	if (ret && ret != GP_ENOTFOUND)
		die_error(&err);
	gp_error_clear(&err);
	return ret ? 0 : v;
}

int cmd_pack_objects(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pack_objects_opts opts = PACK_OBJECTS_OPTS_INIT;
	struct pack_objects_filter filter = { 0 };
	struct pack_objects_stats stats;
	struct pack_objects *po;
	struct opt_string_list keep = { 0 };
	struct odb *odb;
	int to_stdout = 0, revs = 0, all = 0, unpacked = 0, incremental = 0, local = 0;
	int honor_pack_keep = 0, write_bitmap = 0;
	enum stdin_packs_mode stdin_packs = STDIN_PACKS_NONE;
	int progress = -1, reuse_delta = 1, reuse_object = 1, delta_base_offset = 0;
	int non_empty = 0, write_rev = 1, ignored = 0, thin = 0, include_tag = 0;
	int shallow_opt = 0, use_bitmap_index = -1, reflog = 0, indexed_objects = 0;
	int all_progress_implied = 0;
	bool internal_revs;
	int cruft = 0, keep_unreachable = 0, pack_loose_unreachable = 0;
	int exclude_promisor = 0, name_hash_version = -2, path_walk = -1, delta_islands = 0;
	int sparse = -1;
	struct delta_islands *islands = NULL;
	struct unpacked_opt unpacked_packs = { 0 };
	struct expiry_opt cruft_expiration = { 0 }, unpack_unreachable = { 0 };
	enum rev_missing missing = REV_MISSING_ERROR;
	struct object_filter object_filter = OBJECT_FILTER_INIT;
	struct walk_filter *walk_filter = NULL;
	unsigned long window_memory = 0;
	struct oidset shallow = OIDSET_INIT;
	const struct commit_graph *graph = NULL;
	struct bitmap_index *bitmap = NULL;
	struct bitmap_result *bitmap_res = NULL;
	struct oid_list lacking = { 0 };
	bool v;
	const char *index_version = NULL;
	unsigned long max_pack_size = 0;
	struct pack_objects_names names = { 0 };
	struct option options[] = {
		OPT_BOOL(0, "stdout", &to_stdout, "output the pack to stdout"),
		OPT_BOOL(0, "revs", &revs, "read revisions from stdin (rev-list --objects)"),
		OPT_BOOL(0, "all", &all, "with --revs: every ref, as rev-list --all"),
		OPT_CALLBACK_F(0, "unpacked", &unpacked_packs, "pack",
			       "leave out objects already in a pack (but those of <pack>)",
			       PARSE_OPT_OPTARG, parse_unpacked),
		OPT_BOOL(0, "incremental", &incremental, "leave out objects already in a pack"),
		OPT_BOOL(0, "local", &local, "leave out objects of alternates"),
		OPT_BOOL(0, "honor-pack-keep", &honor_pack_keep, "leave out objects in packs with a .keep file"),
		OPT_STRING_LIST(0, "keep-pack", &keep, "name", "leave out the objects of this pack"),
		OPT_CALLBACK_F(0, "stdin-packs", &stdin_packs, "mode",
			       "read packs to include (and ^packs to exclude) from stdin",
			       PARSE_OPT_OPTARG, parse_stdin_packs),
		OPT_BOOL(0, "write-bitmap-index", &write_bitmap, "write a bitmap index with the pack"),
		OPT_BOOL(0, "delta-base-offset", &delta_base_offset, "use OFS_DELTA entries"),
		OPT_BOOL(0, "reuse-delta", &reuse_delta, "reuse stored deltas"),
		OPT_BOOL(0, "reuse-object", &reuse_object, "reuse stored objects"),
		OPT_INTEGER(0, "threads", &opts.threads, "threads for the delta search"),
		OPT_INTEGER(0, "window", &opts.window, "objects a delta search compares with"),
		OPT_INTEGER(0, "depth", &opts.depth, "longest delta chain"),
		OPT_INTEGER(0, "compression", &opts.compression, "zlib level of new data"),
		OPT_ULONG(0, "max-pack-size", &max_pack_size, "cut the output into packs of at most this size"),
		OPT_BOOL(0, "non-empty", &non_empty, "write nothing when there are no objects"),
		OPT_CALLBACK_F('q', "quiet", &progress, NULL, "no progress meters",
			       PARSE_OPT_NOARG, parse_quiet),
		OPT_SET_INT(0, "progress", &progress, "progress meters on stderr", 1),
		OPT_SET_INT(0, "all-progress", &progress, "show the writing meter with --stdout too", 2),
		OPT_BOOL(0, "all-progress-implied", &all_progress_implied,
			 "--all-progress whenever progress is shown"),
		OPT_BOOL(0, "thin", &thin, "make a thin pack: deltas against objects the receiver has"),
		OPT_BOOL(0, "include-tag", &include_tag, "include annotated tags of packed objects"),
		OPT_BOOL(0, "shallow", &shallow_opt, "the receiver is a shallow repository"),
		OPT_BOOL(0, "use-bitmap-index", &use_bitmap_index, "count objects with bitmaps"),
		OPT_BOOL(0, "cruft", &cruft, "a cruft pack of the unreachable objects"),
		OPT_CALLBACK(0, "cruft-expiration", &cruft_expiration, "time",
			     "leave out unreachable objects older than <time>", parse_expiry),
		OPT_BOOL(0, "keep-unreachable", &keep_unreachable, "pack unreachable objects of packs too"),
		OPT_BOOL(0, "pack-loose-unreachable", &pack_loose_unreachable, "pack unreachable loose objects"),
		OPT_CALLBACK_F(0, "unpack-unreachable", &unpack_unreachable, "time",
			       "write unreachable objects newer than <time> loose",
			       PARSE_OPT_OPTARG, parse_expiry),
		OPT_BOOL(0, "exclude-promisor-objects", &exclude_promisor, "leave out objects of promisor packs"),
		OPT_CALLBACK(0, "missing", &missing, "action", "error, allow-any or allow-promisor",
			     parse_missing),
		OPT_CALLBACK(0, "filter", &object_filter, "args", "object filtering", parse_filter),
		OPT_INTEGER(0, "name-hash-version", &name_hash_version, "the name hash function (1 or 2)"),
		OPT_BOOL(0, "path-walk", &path_walk, "(accepted: objects are grouped by path anyway)"),
		OPT_BOOL(0, "sparse", &sparse, "use the sparse reachability algorithm"),
		OPT_BOOL(0, "delta-islands", &delta_islands, "keep deltas within the islands of pack.island"),
		OPT_ULONG(0, "window-memory", &window_memory, "(accepted)"),
		/* Accepted for git's callers; they change nothing here. */
		OPT_BOOL(0, "keep-true-parents", &ignored, "(accepted; no grafts here)"),
		OPT_BOOL(0, "reflog", &reflog, "with --revs: what the reflogs name too"),
		OPT_BOOL(0, "indexed-objects", &indexed_objects, "with --revs: what the index names too"),
		OPT_STRING(0, "index-version", &index_version, "<version>[,<offset>]",
			   "write the pack index file in the specified idx format version"),
		OPT_END(),
	};

	/* What the command line does not set comes from pack.* (core.compression), as in git. */
	opts.window = opts.depth = opts.threads = opts.compression = INT_MIN;
	progress = isatty(2);
	argc = parse_options(argc, argv, options, pack_objects_usage);
	config_int_default(repo, "pack.window", &opts.window, 10);
	config_int_default(repo, "pack.depth", &opts.depth, 50);
	config_int_default(repo, "pack.threads", &opts.threads, 0);
	config_int_default(repo, "pack.compression", &opts.compression, INT_MIN);
	config_int_default(repo, "core.compression", &opts.compression, -1);
	opts.big_file_threshold = big_file_threshold_config(repo);
	if (to_stdout ? argc != 0 : argc != 1)
		usage_with_options(pack_objects_usage, options);
	unpacked = unpacked_packs.set || incremental;
	if (name_hash_version == -2) {
		/* Git's test suite picks the default through the environment. */
		const char *env = getenv("GIT_TEST_NAME_HASH_VERSION");
		name_hash_version = env ? atoi(env) : 1;
	}
	if (name_hash_version < 0)
		name_hash_version = 1;
	if (name_hash_version < 1 || name_hash_version > 2)
		die("invalid --name-hash-version option: %d", name_hash_version);
	/*
	 * As git: a bitmap only for a pack of everything (--all), never for
	 * a streamed one; otherwise it is dropped without a word.
	 */
	if (to_stdout || !all)
		write_bitmap = 0;
	if (write_bitmap && name_hash_version != 1) {
		warning("currently, --write-bitmap-index requires --name-hash-version=1");
		name_hash_version = 1;
	}
	if (write_bitmap)
		check_pseudo_merge_config(repo);
	opts.name_hash_version = name_hash_version;
	if (path_walk < 0) {
		const char *env = getenv("GIT_TEST_PACK_PATH_WALK");
		bool b;
		/* as git: not for bitmap counting nor for a list of objects */
		if (use_bitmap_index > 0 || !revs)
			path_walk = 0;
		else
			path_walk = env && config_parse_bool(env, &b) ? b
				: config_bool_default(repo, "pack.usepathwalk", false);
	}
	opts.by_path = path_walk;
	if (sparse < 0) {
		/* git's test suite sets the default through the environment */
		const char *env = getenv("GIT_TEST_PACK_SPARSE");
		bool b;
		if (env && config_parse_bool(env, &b))
			sparse = b;
		else
			sparse = config_bool_default(repo, "pack.usesparse", true);
	}
	if (index_version) {
		struct pack_idx_opts idx = PACK_IDX_OPTS_INIT;
		if (!pack_idx_opts_parse(index_version, &idx))
			die("unsupported index version %s", index_version);
		opts.idx_version = idx.version;
		opts.idx_off32_limit = idx.off32_limit;
	} else {
		int n;
		if (!config_get_int(&repo->config, "pack.indexversion", &n, &err) && (n == 1 || n == 2)) {
			opts.idx_version = (uint32_t)n;
			opts.idx_off32_limit = 0x7fffffff;
		}
		gp_error_clear(&err);
	}
	/*
	 * As git: these read revisions from stdin as --revs does (a thin
	 * pack comes from a walk, so --thin too, but with --path-walk).
	 */
	internal_revs = revs || (thin && !path_walk) || all || reflog || indexed_objects ||
			(unpacked && !stdin_packs) || (exclude_promisor && !stdin_packs) ||
			keep_unreachable || pack_loose_unreachable || unpack_unreachable.set;
	/* The checks in git's order, so that the first complaint is git's. */
	if (opts.depth > 4095) {
		fprintf(stderr, "warning: delta chain depth %d is too deep, forcing 4095\n", opts.depth);
		opts.depth = 4095;
	}
	if (opts.compression < -1 || opts.compression > 9)
		die("bad pack compression level %d", opts.compression);
	if (to_stdout && max_pack_size)
		die("--max-pack-size cannot be used to build a pack for transfer");
	if (!to_stdout && thin)
		die("--thin cannot be used to build an indexable pack");
	if (keep_unreachable && unpack_unreachable.set)
		die("options '--keep-unreachable' and '--unpack-unreachable' cannot be used together");
	if (stdin_packs && object_filter.kind != OBJECT_FILTER_NONE)
		die("options '--stdin-packs' and '--filter' cannot be used together");
	if (stdin_packs && internal_revs)
		die("cannot use internal rev list with --stdin-packs");
	if (cruft) {
		if (revs || all || reflog || indexed_objects || (thin && !path_walk) ||
		    (unpacked && !stdin_packs))
			die("cannot use internal rev list with --cruft");
		if (stdin_packs)
			die("options '--stdin-packs' and '--cruft' cannot be used together");
		if (keep_unreachable || pack_loose_unreachable || unpack_unreachable.set)
			die("options '--cruft' and '--keep-unreachable' cannot be used together");
	}
	if (internal_revs)
		revs = 1;
	/* pack.packSizeLimit is for packs written to files only, as git. */
	if (!to_stdout)
		opts.max_pack_size = max_pack_size_option(repo, max_pack_size);
	opts.reuse_delta = reuse_delta && reuse_object;
	opts.reuse_object = reuse_object;
	opts.delta_base_offset = delta_base_offset;
	opts.progress = progress != 0;
	opts.no_write_progress = to_stdout && progress != 2 && !all_progress_implied;
	filter.unpacked = unpacked;
	filter.unpacked_packs = unpacked_packs.packs.items;
	filter.nr_unpacked_packs = unpacked_packs.packs.nr;
	filter.local = local;
	filter.honor_pack_keep = honor_pack_keep;
	filter.keep_packs = keep.items;
	filter.nr_keep_packs = keep.nr;

	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	if (!config_get_bool(&repo->config, "pack.writereverseindex", &v, &err))
		write_rev = write_rev && v;
	gp_error_clear(&err);
	filter.exclude_promisor = exclude_promisor;
	pack_objects_new(&po, odb, &opts);
	if (revs) {
		struct rev_walk *walk;
		struct tip_list tips = { 0 };
		if (shallow_read(repo, &shallow, &err))
			die_error(&err);
		if (all)
			add_all_refs(repo, &tips);
		read_revs(repo, odb, &tips, &shallow);
		if (use_bitmap_index < 0)
			use_bitmap_index = to_stdout &&
				config_bool_default(repo, "pack.usebitmaps", true);
		/*
		 * Islands come from the refs and the walk. Counting with
		 * bitmaps would also copy stored deltas verbatim, unchecked
		 * (git does so and lets them cross islands): walk instead.
		 */
		if (delta_islands && delta_islands_load(&islands, repo, &err))
			die_error(&err);
		if (islands) {
			pack_objects_set_islands(po, islands);
			use_bitmap_index = 0;
		}
		/*
		 * What bitmaps cannot answer as git answers it goes to the
		 * walk: shallow boundaries, filters, what is left out of
		 * the pack, and reflogs and indexes.
		 */
		if (use_bitmap_index && !oidset_size(&shallow) && !shallow_opt &&
		    object_filter.kind == OBJECT_FILTER_NONE && !unpacked && !local && !honor_pack_keep && !keep.nr &&
		    !reflog && !indexed_objects && !exclude_promisor && !keep_unreachable &&
		    !pack_loose_unreachable && !unpack_unreachable.set &&
		    count_with_bitmap(po, odb, &tips, to_stdout ? pack_reuse_or_die(repo)
							       : PACK_REUSE_NONE,
				      thin, &bitmap, &bitmap_res, opts.progress)) {
			free(tips.items);
			goto counted;
		}
		rev_walk_new(&walk, odb, repo->hash_algo);
		/* parents, trees and dates from the commit-graph when there is one */
		if (repo_commit_graph(repo, &graph, &err) == 0 && graph)
			rev_walk_set_commit_graph(walk, graph);
		gp_error_clear(&err);
		for (size_t i = 0; i < tips.nr; i++)
			if (rev_walk_add_tip(walk, &tips.items[i].oid, tips.items[i].uninteresting,
					     "", &err))
				die_error(&err);
		free(tips.items);
		/* An expiry: what gc.recentObjectsHook names is recent and packed, as in git. */
		if (unpack_unreachable.set && unpack_unreachable.when) {
			struct object_id *recent;
			size_t nr_recent;
			if (reachable_recent_hook_tips(repo, &recent, &nr_recent, &err))
				die_error(&err);
			for (size_t i = 0; i < nr_recent; i++) {
				int r = rev_walk_add_tip(walk, &recent[i], false, "", &err);
				if (r && r != GP_ENOTFOUND)
					die_error(&err);
				gp_error_clear(&err);
			}
			free(recent);
		}
		if ((reflog || indexed_objects) &&
		    reachable_add_tips(repo, walk, (reflog ? REACH_REFLOGS : 0) |
				       (indexed_objects ? REACH_INDEXES : 0), &err))
			die_error(&err);
		if (oidset_size(&shallow))
			rev_walk_set_shallow(walk, &shallow);
		if (shallow_opt)
			rev_walk_set_edge_aggressive(walk);
		rev_walk_set_sparse(walk, sparse > 0);
		rev_walk_set_blobs_unchecked(walk);
		if (repo->promisor && missing == REV_MISSING_ERROR && !getenv("GIT_NO_LAZY_FETCH"))
			/* What a partial clone lacks is fetched in one go after the walk, as git does. */
			rev_walk_set_missing(walk, REV_MISSING_PRINT, note_missing, &lacking);
		else
			rev_walk_set_missing(walk, missing, NULL, NULL);
		/* as git: a sparse:oid blob is looked up once the revisions are read */
		walk_filter = walk_filter_or_die(repo, odb, &object_filter);
		if (walk_filter)
			rev_walk_set_filter(walk, walk_filter, 0);
		if (path_walk)
			trace2_region_enter("pack-objects", "path-walk");
		if (pack_objects_add_walk(po, walk, &filter, &err))
			die_error(&err);
		if (path_walk)
			trace2_region_leave("pack-objects", "path-walk");
		if (thin && pack_objects_add_thin_bases(po, walk, &err))
			die_error(&err);
		if (lacking.nr) {
			if (repo_promisor_fetch(repo, lacking.items, lacking.nr, &err))
				die_error(&err);
			for (size_t i = 0; i < lacking.nr; i++)
				pack_objects_add(po, &lacking.items[i], OBJ_BLOB, NULL);
		}
		rev_walk_free(walk);
		walk_filter_free(walk_filter);
		if (keep_unreachable && pack_objects_add_unreachable(po, &filter, &err))
			die_error(&err);
		if (pack_loose_unreachable && pack_objects_add_loose(po, &err))
			die_error(&err);
	} else if (cruft) {
		read_cruft_packs(repo, po, cruft_expiration.set ? cruft_expiration.when : 0);
	} else if (stdin_packs) {
		struct stdin_packs_opts sp_opts = {
			.follow = stdin_packs == STDIN_PACKS_FOLLOW,
			.unpacked = unpacked_packs.set, .incremental = incremental,
			.local = local, .honor_pack_keep = honor_pack_keep,
			.keep_packs = keep.items, .nr_keep_packs = keep.nr,
			.exclude_promisor = exclude_promisor,
		};
		read_packs(po, odb, &sp_opts);
	} else {
		read_object_list(po, repo->hash_algo, &filter);
	}

counted:
	if (include_tag) {
		struct tag_add ta = { po };
		if (refs_for_each(repo, "refs/tags/", include_tag_ref, &ta, &err))
			die_error(&err);
	}
	if (non_empty && !pack_objects_nr(po))
		goto out;
	if (to_stdout) {
		if (pack_objects_write_fd(po, 1, &err))
			die_error(&err);
	} else {
		if (pack_objects_write_files(po, argv[0], write_rev, &names, &err))
			die_error(&err);
		if (write_bitmap && names.nr > 1)
			warning("disabling bitmap writing, packs are split due to "
				"--max-pack-size or pack.packSizeLimit");
		else if (write_bitmap) {
			char *idx;
			warn_bitmap_config(repo);
			idx = xstrfmt("%s-%s.idx", argv[0], names.hex[0]);
			if (bitmap_write_for_pack_file(repo, idx, opts.threads, opts.progress, &err)) {
				fprintf(stderr, "warning: failed to write bitmap index: %s\n", gp_error_msg(&err));
				gp_error_clear(&err);
			}
			free(idx);
		}
		for (size_t i = 0; i < names.nr; i++)
			printf("%s\n", names.hex[i]);
	}
	if (unpack_unreachable.set &&
	    pack_objects_loosen_unreachable(po, &filter, unpack_unreachable.when, &err))
		die_error(&err);
	pack_objects_stats(po, &stats);
	trace2_data_intmax("pack-objects", "write_pack_file/wrote", stats.total);
	trace2_data_intmax("pack-objects", "pack-reused", stats.pack_reused);
	trace2_data_intmax("pack-objects", "packs-reused", stats.pack_reused_packs);
	if (progress)
		fprintf(stderr, "Total %" PRIu32 " (delta %" PRIu32 "), reused %" PRIu32
			" (delta %" PRIu32 "), pack-reused %" PRIu32 " (from %" PRIu32 ")\n",
			stats.total, stats.deltas, stats.reused, stats.reused_deltas,
			stats.pack_reused, stats.pack_reused_packs);
out:
	oidset_release(&shallow);
	bitmap_result_free(bitmap_res);
	bitmap_index_free(bitmap);
	free(lacking.items);
	free(unpacked_packs.packs.items);
	object_filter_release(&object_filter);
	pack_objects_free(po);
	delta_islands_free(islands);
	pack_objects_names_release(&names);
	free(keep.items);
	return 0;
}
