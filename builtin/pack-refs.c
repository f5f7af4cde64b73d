/*
 * builtin/pack-refs.c: gitpack pack-refs --all, as git pack-refs
 * (git-pack-refs(1)) for the "files" ref backend: the refs go into
 * packed-refs (pack-refs.h writes the bytes git writes) and the loose
 * files that went in are removed, unless --no-prune. Without --all git
 * packs only the tags and the refs packed already; gitpack writes only
 * the --all file, so it asks for --all rather than pack other refs than
 * git would.
 */
#include "../builtin.h"
#include "../error.h"
#include "../pack-refs.h"
#include "../parse-options.h"
#include "../refs.h"
#include "../repository.h"

static const char *const pack_refs_usage[] = {
	"git pack-refs --all [--[no-]prune]",
	NULL,
};

int cmd_pack_refs(int argc, const char **argv, struct repository *repo)
{
	struct pack_refs_result res;
	struct gp_error err = GP_ERROR_INIT;
	int all = 0, prune = 1;
	struct option options[] = {
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
	if (pack_refs_run(repo, prune, &res, &err))
		die_error(&err);
	return 0;
}
