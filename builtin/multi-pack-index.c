/*
 * builtin/multi-pack-index.c: gitpack multi-pack-index write, verify,
 * expire and repack.
 */
#include "../builtin.h"
#include "../error.h"
#include "../midx.h"
#include "../midx-write.h"
#include "../object.h"
#include "../odb.h"
#include "../pack-bitmap.h"
#include "../pack-bitmap-write.h"
#include "../refs.h"
#include "../config.h"
#include "../pack-write.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../progress.h"
#include "../repository.h"
#include "../strbuf.h"
#include <sys/stat.h>

static const char *const midx_usage[] = {
	"gitpack multi-pack-index [<options>] write [--preferred-pack=<pack>] [--[no-]bitmap] [--stdin-packs] [--refs-snapshot=<file>]",
	"gitpack multi-pack-index [<options>] verify",
	"gitpack multi-pack-index [<options>] expire",
	"gitpack multi-pack-index [<options>] repack [--batch-size=<size>]",
	NULL,
};

struct midx_cmd {
	struct repository *repo;
	char *objdir;
	char *pack_dir;
	int algo;
	bool progress;
};

static int cmp_copy_offset(const void *a, const void *b)
{
	const struct pack_copy_entry *ea = a, *eb = b;
	return ea->ofs < eb->ofs ? -1 : ea->ofs > eb->ofs;
}

/* Sort each pack's run of entries (runs are contiguous) by offset. */
static void sort_copy_entries(struct pack_copy_entry *entries, uint32_t nr)
{
	uint32_t start = 0;
	while (start < nr) {
		uint32_t end = start + 1;
		while (end < nr && entries[end].pack == entries[start].pack)
			end++;
		qsort(entries + start, end - start, sizeof(*entries), cmp_copy_offset);
		start = end;
	}
}

static int cmd_write(int argc, const char **argv, struct midx_cmd *c)
{
	struct midx_write_opts opts = MIDX_WRITE_OPTS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	const char *preferred = NULL, *refs_snapshot = NULL;
	int stdin_packs = 0, bitmap = 0, progress = -1;
	struct midx_write_result result;
	char **names = NULL;
	size_t nr_names = 0, alloc_names = 0;
	struct option options[] = {
		OPT_STRING(0, "preferred-pack", &preferred, "preferred-pack",
			   "pack for reuse when computing a multi-pack bitmap"),
		OPT_BOOL(0, "stdin-packs", &stdin_packs, "write a multi-pack index of the pack names given on stdin"),
		OPT_STRING(0, "refs-snapshot", &refs_snapshot, "file", "refs snapshot for selecting bitmap commits"),
		OPT_BOOL(0, "bitmap", &bitmap, "write a multi-pack bitmap"),
		OPT_BOOL(0, "progress", &progress, "show progress (default: when stderr is a terminal)"),
		OPT_END(),
	};
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	if (bitmap && !c->repo)
		die("--bitmap needs a repository (its refs choose the commits)");
	if (stdin_packs) {
		struct strbuf line = STRBUF_INIT;
		while (strbuf_getline(&line, stdin)) {
			if (!line.len)
				continue;
			ALLOC_GROW(names, nr_names + 1, alloc_names);
			names[nr_names++] = strbuf_detach(&line, NULL);
		}
		strbuf_release(&line);
		opts.only_packs = (const char *const *)names;
		opts.nr_only = nr_names;
		opts.only_given = true;
	}
	opts.preferred_pack = preferred;
	opts.progress = progress < 0 ? c->progress : progress;
	/* A MIDX bitmap counts in the pseudo-pack order: RIDX holds it. */
	opts.write_ridx = bitmap;
	opts.defer_install = bitmap;
	ret = midx_write(c->pack_dir, c->algo, &opts, &result, &err);
	for (size_t i = 0; i < nr_names; i++)
		free(names[i]);
	free(names);
	if (ret)
		die_error(&err);
	if (result.preferred_unknown)
		warning("unknown preferred pack: '%s'", preferred);
	if (bitmap && midx_write_bitmap(c->repo, c->objdir, &result, refs_snapshot,
					opts.progress, &err))
		die_error(&err);
	return 0;
}

static int cmd_verify(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	struct midx *m;
	struct progress *progress;
	size_t nr_problems;
	struct option options[] = { OPT_END() };
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	ret = midx_open(&m, c->pack_dir, c->algo, &err);
	if (ret == GP_ENOTFOUND)
		return 0; /* as git: nothing to verify */
	if (ret) {
		error("%s", gp_error_msg(&err));
		die("multi-pack-index is corrupt");
	}
	progress = progress_start("Verifying OID order in multi-pack-index",
				  midx_nr_objects(m), c->progress);
	ret = midx_verify(m, c->pack_dir, progress, &nr_problems, &err);
	progress_stop(&progress);
	midx_free(m);
	if (ret) {
		error("%s", gp_error_msg(&err));
		if (nr_problems > 1)
			error("... and %zu more problem%s", nr_problems - 1, nr_problems == 2 ? "" : "s");
		return 1;
	}
	return 0;
}

static void unlink_pack_files(const char *pack_dir, const char *idx_name)
{
	static const char *const exts[] = { ".bitmap", ".rev", ".promisor", ".mtimes", ".pack", ".idx" };
	size_t base = strlen(idx_name) - 4;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		char *path = xstrfmt("%s/%.*s%s", pack_dir, (int)base, idx_name, exts[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			warning("could not remove '%s': %s", path, strerror(errno));
		free(path);
	}
}

static int cmd_expire(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	struct midx_write_opts opts = MIDX_WRITE_OPTS_INIT;
	struct option options[] = { OPT_END() };
	const char **drop = NULL;
	size_t nr_drop = 0;
	uint32_t *counts;
	struct midx *m;
	int ret;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	ret = midx_open(&m, c->pack_dir, c->algo, &err);
	if (ret == GP_ENOTFOUND)
		return 0;
	if (ret)
		die_error(&err);
	counts = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1, sizeof(*counts));
	for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++)
		counts[midx_nth_pack(m, pos)]++;
	drop = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1, sizeof(*drop));
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		char *keep;
		const char *name = midx_pack_name(m, id);
		if (counts[id])
			continue;
		keep = xstrfmt("%s/%.*s.keep", c->pack_dir, (int)(strlen(name) - 4), name);
		if (access(keep, F_OK))
			drop[nr_drop++] = name;
		free(keep);
	}
	if (nr_drop) {
		/* As git: the new MIDX has no RIDX and no preferred pack. */
		opts.drop_packs = drop;
		opts.nr_drop = nr_drop;
		opts.progress = c->progress;
		/* The new MIDX is durable before any pack it no longer lists goes. */
		if (midx_write(c->pack_dir, c->algo, &opts, NULL, &err))
			die_error(&err);
		for (size_t i = 0; i < nr_drop; i++)
			unlink_pack_files(c->pack_dir, drop[i]);
	}
	free(drop);
	free(counts);
	midx_free(m);
	return 0;
}

struct repack_pack {
	uint32_t id;
	struct packed_git *p;
	uint64_t mtime;
	uint32_t selected;      /* objects the MIDX takes from this pack */
	bool chosen;
};

static int cmp_oldest(const void *a, const void *b)
{
	const struct repack_pack *pa = a, *pb = b;
	if (pa->mtime != pb->mtime)
		return pa->mtime < pb->mtime ? -1 : 1;
	return pa->id < pb->id ? -1 : pa->id > pb->id;
}

/*
 * git's rule: from oldest to newest, take packs whose expected size
 * (pack size scaled by the share of its objects the MIDX selects) is
 * below the batch size, until they add up to the batch size or every
 * pack was considered. Nothing happens unless at least two packs are
 * taken. A batch size of 0 takes every pack. .keep packs never are.
 */
static size_t choose_batch(struct repack_pack *packs, uint32_t nr, unsigned long batch_size)
{
	uint64_t total = 0;
	size_t nr_chosen = 0;
	qsort(packs, nr, sizeof(*packs), cmp_oldest);
	for (uint32_t i = 0; i < nr; i++) {
		struct repack_pack *rp = &packs[i];
		uint64_t expected;
		if (rp->p->is_keep || !rp->selected)
			continue;
		if (!batch_size) {
			rp->chosen = true;
			nr_chosen++;
			continue;
		}
		expected = rp->p->nr_objects ? (uint64_t)rp->p->pack_size * rp->selected / rp->p->nr_objects : 0;
		if (expected >= batch_size)
			continue;
		rp->chosen = true;
		nr_chosen++;
		total += expected;
		if (total >= batch_size)
			break;
	}
	if (nr_chosen < 2)
		return 0;
	return nr_chosen;
}

static int cmd_midx_repack(int argc, const char **argv, struct midx_cmd *c)
{
	struct gp_error err = GP_ERROR_INIT;
	unsigned long batch_size = 0;
	struct option options[] = {
		OPT_ULONG(0, "batch-size", &batch_size, "during repack, collect pack-files of smaller size into a batch that is larger than this size"),
		OPT_END(),
	};
	struct repack_pack *packs, **by_id;
	struct pack_copy_entry *entries = NULL;
	struct pack_reader *reader = NULL;
	struct progress *progress = NULL;
	uint32_t nr_entries = 0;
	char hex[GP_MAX_HEXSZ + 1];
	struct midx *m;
	struct stat st;

	argc = parse_options(argc, argv, options, midx_usage);
	if (argc)
		usage_with_options(midx_usage, options);
	if (midx_open(&m, c->pack_dir, c->algo, &err)) {
		if (err.code == GP_ENOTFOUND)
			return 0;
		die_error(&err);
	}
	packs = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1, sizeof(*packs));
	by_id = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1, sizeof(*by_id));
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		char *idx = xstrfmt("%s/%s", c->pack_dir, midx_pack_name(m, id));
		char *pack = xstrfmt("%.*s.pack", (int)(strlen(idx) - 4), idx);
		packs[id].id = id;
		if (pack_open_idx(&packs[id].p, idx, c->algo, &err) ||
		    pack_open_pack(packs[id].p, &err) || stat(pack, &st) < 0)
			die("%s", gp_error_msg(&err));
		packs[id].mtime = (uint64_t)st.st_mtime;
		free(idx);
		free(pack);
	}
	for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++)
		packs[midx_nth_pack(m, pos)].selected++;

	if (choose_batch(packs, midx_nr_packs(m), batch_size)) {
		struct midx_write_opts opts = MIDX_WRITE_OPTS_INIT;
		for (uint32_t i = 0; i < midx_nr_packs(m); i++)
			by_id[packs[i].id] = &packs[i];
		/* By pack id, then offset: each source pack's locality is kept. */
		{
			uint32_t *start = xcalloc((size_t)midx_nr_packs(m) + 1, sizeof(*start));
			for (uint32_t id = 0; id < midx_nr_packs(m); id++)
				start[id + 1] = start[id] + (by_id[id]->chosen ? by_id[id]->selected : 0);
			nr_entries = start[midx_nr_packs(m)];
			entries = xmalloc(sizeof(*entries) * (nr_entries ? nr_entries : 1));
			for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++) {
				uint32_t id = midx_nth_pack(m, pos);
				if (!by_id[id]->chosen)
					continue;
				entries[start[id]].pack = by_id[id]->p;
				entries[start[id]].ofs = midx_nth_offset(m, pos);
				start[id]++;
			}
			free(start);
		}
		sort_copy_entries(entries, nr_entries);
		reader = pack_reader_new(0);
		progress = progress_start("Writing objects", nr_entries, c->progress);
		if (pack_write_by_copy(c->pack_dir, c->algo, entries, nr_entries, reader,
				       progress, hex, &err))
			die_error(&err);
		progress_stop(&progress);
		pack_reader_free(reader);
		/*
		 * The new pack joins the MIDX (as git: no RIDX, no preferred
		 * pack); expire removes the old packs later.
		 */
		opts.progress = c->progress;
		if (midx_write(c->pack_dir, c->algo, &opts, NULL, &err))
			die_error(&err);
	}
	for (uint32_t id = 0; id < midx_nr_packs(m); id++)
		pack_free(packs[id].p);
	free(packs);
	free(by_id);
	free(entries);
	midx_free(m);
	return 0;
}

int cmd_multi_pack_index(int argc, const char **argv, struct repository *repo)
{
	struct midx_cmd c = { 0 };
	const char *object_dir = NULL;
	int progress = -1;
	struct option options[] = {
		OPT_STRING(0, "object-dir", &object_dir, "file", "object directory containing set of packfile and pack-index pairs"),
		OPT_BOOL(0, "progress", &progress, "show progress (default: when stderr is a terminal)"),
		OPT_END(),
	};
	int nr_sub = 0;
	int ret;

	/* Options before the subcommand are ours; the rest belong to it. */
	while (1 + nr_sub < argc && argv[1 + nr_sub][0] == '-')
		nr_sub++;
	{
		const char **mine = xcalloc((size_t)nr_sub + 2, sizeof(*mine));
		mine[0] = argv[0];
		for (int i = 0; i < nr_sub; i++)
			mine[1 + i] = argv[1 + i];
		if (parse_options(nr_sub + 1, mine, options, midx_usage))
			usage_with_options(midx_usage, options);
		free(mine);
	}
	argc -= nr_sub + 1;
	argv += nr_sub + 1;
	if (argc < 1)
		usage_with_options(midx_usage, options);
	/*
	 * git takes the common options after the subcommand too (git fsck
	 * runs "multi-pack-index verify --object-dir=<dir>"): take them out
	 * of the subcommand's arguments.
	 */
	{
		int kept = 1;
		for (int i = 1; i < argc; i++) {
			const char *arg = argv[i];
			if (!strcmp(arg, "--")) {
				while (i < argc)
					argv[kept++] = argv[i++];
				break;
			}
			if (starts_with(arg, "--object-dir="))
				object_dir = arg + strlen("--object-dir=");
			else if (!strcmp(arg, "--object-dir") && i + 1 < argc)
				object_dir = argv[++i];
			else if (!strcmp(arg, "--progress"))
				progress = 1;
			else if (!strcmp(arg, "--no-progress"))
				progress = 0;
			else
				argv[kept++] = arg;
		}
		argc = kept;
		argv[argc] = NULL;
	}
	c.algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	c.repo = repo;
	if (object_dir)
		c.objdir = xstrdup(object_dir);
	else if (repo)
		c.objdir = xstrdup(repo->objdir);
	else
		die("not a git repository, and no --object-dir given");
	c.pack_dir = xstrfmt("%s/pack", c.objdir);
	c.progress = progress < 0 ? isatty(2) : progress;

	if (!strcmp(argv[0], "write"))
		ret = cmd_write(argc, argv, &c);
	else if (!strcmp(argv[0], "verify"))
		ret = cmd_verify(argc, argv, &c);
	else if (!strcmp(argv[0], "expire"))
		ret = cmd_expire(argc, argv, &c);
	else if (!strcmp(argv[0], "repack"))
		ret = cmd_midx_repack(argc, argv, &c);
	else
		die("unrecognized subcommand: %s", argv[0]);
	free(c.pack_dir);
	return ret;
}
