/*
 * builtin/prune-packed.c: gitpack prune-packed, as git prune-packed
 * (git-prune-packed(1)): the loose objects that a pack holds too are
 * removed, with each fan-out directory left empty. -n only prints
 * "rm -f <path>" for each, as git does; -q silences the progress
 * meter that is otherwise shown on a terminal.
 */
#include "../builtin.h"
#include "../error.h"
#include "../loose.h"
#include "../odb.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../progress.h"
#include "../repository.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

static const char *const prune_packed_usage[] = {
	"git prune-packed [-n | --dry-run] [-q | --quiet]",
	NULL,
};

struct prune_packed {
	struct odb *odb;
	const char *objdir;   /* what loose_for_each() gives paths under */
	const char *shown;    /* the same, as git names it (-n) */
	int dry_run;
	struct progress *progress;
	int last_dir;
};

/*
 * Only a pack whose .pack opens counts: an .idx whose pack is gone or
 * damaged holds nothing, and the loose copy may then be the only one.
 */
static bool in_a_pack(struct odb *odb, const struct object_id *oid)
{
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct packed_git *p = odb_pack(odb, i);
		struct gp_error err = GP_ERROR_INIT;
		uint32_t idx_pos;
		bool usable;
		if (!pack_find_oid(p, oid, &idx_pos))
			continue;
		usable = !pack_open_pack(p, &err);
		gp_error_clear(&err);
		if (usable)
			return true;
	}
	return false;
}

/* The meter counts the fan-out directories done. */
static void leave_dir(struct prune_packed *pp, int dir)
{
	if (pp->last_dir >= 0 && pp->last_dir != dir)
		progress_update(pp->progress, (uint64_t)pp->last_dir + 1);
}

static int prune_one(const struct object_id *oid, const char *path, void *data)
{
	struct prune_packed *pp = data;
	leave_dir(pp, oid->hash[0]);
	pp->last_dir = oid->hash[0];
	if (!in_a_pack(pp->odb, oid))
		return 0;
	if (pp->dry_run) {
		const char *rel = path + strlen(pp->objdir);
		printf("rm -f %s%s\n", pp->shown, rel);
	} else if (unlink(path)) {
		error("unable to unlink %s: %s", path, strerror(errno));
	}
	return 0;
}

int cmd_prune_packed(int argc, const char **argv, struct repository *repo)
{
	struct prune_packed pp = { .last_dir = -1 };
	struct gp_error err = GP_ERROR_INIT;
	int quiet = 0;
	char *shown;
	struct option options[] = {
		OPT_BOOL('n', "dry-run", &pp.dry_run, "dry run"),
		OPT__QUIET(&quiet, "be quiet"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, prune_packed_usage);
	if (argc)
		usage_with_options(prune_packed_usage, options);
	pp.objdir = repo->objdir; /* only now: "-h" runs without a repository */
	if (repo_odb(repo, &pp.odb, &err))
		die_error(&err);
	shown = repo_objdir_shown(repo);
	pp.shown = shown;
	pp.progress = progress_start("Removing duplicate objects", 256, !quiet && isatty(2));
	loose_for_each(repo->objdir, repo->hash_algo, prune_one, &pp);
	leave_dir(&pp, 256);
	/* As git's: every fan-out directory left empty goes (rmdir fails on the others). */
	for (int i = 0; i < 256 && !pp.dry_run; i++) {
		char *dir = xstrfmt("%s/%02x", repo->objdir, i);
		rmdir(dir);
		free(dir);
	}
	progress_stop(&pp.progress);
	free(shown);
	return 0;
}
