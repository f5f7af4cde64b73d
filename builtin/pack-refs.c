/*
 * builtin/pack-refs.c: gitpack pack-refs, git pack-refs
 * (git-pack-refs(1)) for the "files" ref backend: the loose refs the
 * options select go into packed-refs (pack-refs.h writes the bytes git
 * writes) and their files are removed, unless --no-prune. Without
 * --all or --include only the tags are selected; what is packed
 * already stays packed. A reftable repository's stack is compacted
 * instead (builtin/pack-refs-reftable.h).
 */
#include "../builtin.h"
#include "../error.h"
#include "../pack-refs.h"
#include "../parse-options.h"
#include "../path-patterns.h"
#include "../refs.h"
#include "../repository.h"
#include "pack-refs-reftable.h"
#include <stdio.h>

static const char *const pack_refs_usage[] = {
	"git pack-refs [--all] [--no-prune] [--auto] [--include <pattern>] [--exclude <pattern>]",
	NULL,
};

/*
 * git takes a malformed pattern and matches nothing with it; so does
 * gitpack, but it says so, as the operator most likely meant a ref.
 */
static void warn_malformed(const struct opt_string_list *patterns, const char *option)
{
	for (size_t i = 0; i < patterns->nr; i++)
		if (!glob_is_wellformed(patterns->items[i], strlen(patterns->items[i])))
			warning("%s '%s' is a malformed pattern (an unterminated '[', an "
				"unknown character class or a trailing '\\'): it matches no ref",
				option, patterns->items[i]);
}

int cmd_pack_refs(int argc, const char **argv, struct repository *repo)
{
	struct pack_refs_result res = PACK_REFS_RESULT_INIT;
	struct pack_refs_opts opts = { 0 };
	struct gp_error err = GP_ERROR_INIT;
	struct opt_string_list includes = { NULL, 0, 0 }, excludes = { NULL, 0, 0 };
	int all = 0, prune = 1, auto_flag = 0, ret;
	struct option options[] = {
		OPT_BOOL(0, "all", &all, "pack everything"),
		OPT_BOOL(0, "prune", &prune, "prune loose refs (default)"),
		OPT_BOOL(0, "auto", &auto_flag, "auto-pack refs as needed"),
		OPT_STRING_LIST(0, "include", &includes, "pattern", "references to include"),
		OPT_STRING_LIST(0, "exclude", &excludes, "pattern", "references to exclude"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, pack_refs_usage);
	if (argc)
		usage_with_options(pack_refs_usage, options);
	if (repo->ref_storage == REF_STORAGE_REFTABLE)
		return pack_refs_reftable(repo, auto_flag);
	warn_malformed(&includes, "--include");
	warn_malformed(&excludes, "--exclude");
	opts.flags = (all ? PACK_REFS_ALL : 0) | (prune ? PACK_REFS_PRUNE : 0) |
		     (auto_flag ? PACK_REFS_AUTO : 0);
	opts.includes = includes.items;
	opts.nr_includes = includes.nr;
	opts.excludes = excludes.items;
	opts.nr_excludes = excludes.nr;
	ret = pack_refs_run(repo, &opts, &res, &err);
	/* git reports these as it meets them, before any failure */
	for (size_t i = 0; i < res.nr_messages; i++)
		error("%s", res.messages[i]);
	pack_refs_result_release(&res);
	free(includes.items);
	free(excludes.items);
	if (ret)
		die_error(&err);
	return 0;
}
