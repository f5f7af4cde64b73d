/*
 * builtin/pack-refs.c: gitpack pack-refs --all, as git pack-refs
 * (git-pack-refs(1)) for the "files" ref backend: the refs go into
 * packed-refs (pack-refs.h writes the bytes git writes) and the loose
 * files that went in are removed, unless --no-prune. Without --all git
 * packs only the tags and the refs packed already; gitpack writes only
 * the --all file, so it asks for --all rather than pack other refs than
 * git would. --auto packs only when enough refs are loose (git's
 * rule, below), as git gc --auto and maintenance ask.
 */
#include "../builtin.h"
#include "../error.h"
#include "../pack-refs.h"
#include "../parse-options.h"
#include "../refs.h"
#include "../repository.h"
#include <dirent.h>
#include <sys/stat.h>

static const char *const pack_refs_usage[] = {
	"git pack-refs --all [--[no-]prune] [--auto]",
	NULL,
};

/* Loose ref files under dir, counting up to limit. */
static size_t nr_loose_refs(const char *dir, size_t limit)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t nr = 0;
	while (d && nr < limit && (de = readdir(d))) {
		struct stat st;
		char *path;
		if (de->d_name[0] == '.' || ends_with(de->d_name, ".lock"))
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (!lstat(path, &st)) {
			if (S_ISDIR(st.st_mode))
				nr += nr_loose_refs(path, limit - nr);
			else if (S_ISREG(st.st_mode))
				nr++;
		}
		free(path);
	}
	if (d)
		closedir(d);
	return nr;
}

/*
 * --auto, git's rule: rewriting packed-refs costs its size, so the
 * more refs it holds (about one per 100 bytes), the more loose ones it
 * takes to be worth it: 5 per doubling of that count, at least 16.
 */
static bool pack_refs_worth_it(struct repository *repo)
{
	char *packed = xstrfmt("%s/packed-refs", repo->commondir);
	char *refs = xstrfmt("%s/refs", repo->commondir);
	struct stat st;
	size_t limit = 0;
	bool worth;
	if (!stat(packed, &st))
		for (uint64_t n = (uint64_t)st.st_size / 100; n > 1; n >>= 1)
			limit += 5;
	if (limit < 16)
		limit = 16;
	worth = nr_loose_refs(refs, limit) >= limit;
	free(packed);
	free(refs);
	return worth;
}

int cmd_pack_refs(int argc, const char **argv, struct repository *repo)
{
	struct pack_refs_result res;
	struct gp_error err = GP_ERROR_INIT;
	int all = 0, prune = 1, auto_flag = 0;
	struct option options[] = {
		OPT_BOOL(0, "auto", &auto_flag, "pack only when there are enough loose refs"),
		OPT_BOOL(0, "all", &all, "pack everything"),
		OPT_BOOL(0, "prune", &prune, "prune loose refs (default)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, pack_refs_usage);
	if (argc)
		usage_with_options(pack_refs_usage, options);
	if (!all)
		die("gitpack pack-refs packs every ref: give --all");
	if (repo->ref_storage != REF_STORAGE_FILES)
		die("gitpack pack-refs: a reftable repository is not supported");
	if (auto_flag && !pack_refs_worth_it(repo))
		return 0;
	if (pack_refs_run(repo, prune, &res, &err))
		die_error(&err);
	return 0;
}
