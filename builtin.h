/*
 * builtin.h: the commands. Each builtin/<name>.c defines cmd_<name>(),
 * which parses its options (parse-options.h), calls the library and
 * prints. Only builtins (and gitpack.c) may exit or die.
 *
 * repo is the discovered repository, or NULL for commands that run
 * outside one (RUN_SETUP_GENTLY in gitpack.c's table).
 */
#ifndef GP_BUILTIN_H
#define GP_BUILTIN_H

#include "util.h"

struct repository;
struct gp_error;

#ifndef GITPACK_VERSION
#define GITPACK_VERSION "0.1"
#endif

int cmd_cat_file(int argc, const char **argv, struct repository *repo);
int cmd_commit_graph(int argc, const char **argv, struct repository *repo);
int cmd_count_objects(int argc, const char **argv, struct repository *repo);
int cmd_for_each_repo(int argc, const char **argv, struct repository *repo);
int cmd_gc(int argc, const char **argv, struct repository *repo);
int cmd_index_pack(int argc, const char **argv, struct repository *repo);
int cmd_maintenance(int argc, const char **argv, struct repository *repo);
int cmd_multi_pack_index(int argc, const char **argv, struct repository *repo);
int cmd_pack_objects(int argc, const char **argv, struct repository *repo);
int cmd_pack_refs(int argc, const char **argv, struct repository *repo);
int cmd_prune_packed(int argc, const char **argv, struct repository *repo);
int cmd_repack(int argc, const char **argv, struct repository *repo);
int cmd_rev_list(int argc, const char **argv, struct repository *repo);
int cmd_show_index(int argc, const char **argv, struct repository *repo);
int cmd_pack_objects_hook(int argc, const char **argv, struct repository *repo);
int cmd_serve(int argc, const char **argv, struct repository *repo);
int cmd_upload_pack(int argc, const char **argv, struct repository *repo);
int cmd_verify_pack(int argc, const char **argv, struct repository *repo);

/* Whether name is one of gitpack's commands (gitpack.c's table). */
bool is_gitpack_command(const char *name);

struct option;
struct commit_graph;

/*
 * The repository's commit-graph for a commit walk (repo_commit_graph():
 * borrowed, valid until repo_free()), or NULL: none, off
 * (core.commitGraph=false), a shallow repository (shallow), replace
 * refs, or one that does not open (with a warning).
 */
const struct commit_graph *walk_commit_graph(struct repository *repo, bool shallow);

/*
 * Parse a command's options (parse-options.h) as git does: returns the
 * number of arguments left; "-h" prints the usage on stdout and exits
 * 0 (as Git 2.55); an error prints "error: ..." and the usage on
 * stderr, exit 129.
 */
int parse_options(int argc, const char **argv, const struct option *opts,
		  const char *const *usage);
/* The usage on stderr, exit 129: for bad arguments found by the caller. */
GP_NORETURN void usage_with_options(const char *const *usage,
				    const struct option *opts);

/* Print "fatal: <msg>\n" to stderr and exit 128, as git does. */
GP_NORETURN GP_PRINTF(1, 2) void die(const char *fmt, ...);
/* die() with the message carried by err. */
GP_NORETURN void die_error(const struct gp_error *err);
/* Print "error: <msg>\n"; returns -1. */
GP_PRINTF(1, 2) int error(const char *fmt, ...);
/* Print "warning: <msg>\n". */
GP_PRINTF(1, 2) void warning(const char *fmt, ...);

/*
 * A config key of repo read as the type, or dflt when it is not set; a
 * value that does not parse dies with the config's message, as git does.
 */
int repo_config_int(struct repository *repo, const char *key, int dflt);
unsigned long repo_config_ulong(struct repository *repo, const char *key, unsigned long dflt);
bool repo_config_bool(struct repository *repo, const char *key, bool dflt);

/* "fatal: bad config variable '<key>' in file '<path>' at line <n>", as git dies. */
GP_NORETURN void die_bad_config(struct repository *repo, const char *key);

/*
 * The pack size limit of pack-objects and repack: given (--max-pack-size)
 * unless 0, else pack.packSizeLimit, else 0 (none); a limit under 1 MiB
 * is raised to 1 MiB with a warning, as git does. Dies on a bad config
 * value.
 */
uint64_t max_pack_size_option(struct repository *repo, unsigned long given);

struct object_filter;
struct odb;
struct walk_filter;
/*
 * The filter f prepared for walks in repo (walk-filter.h), or die in
 * git's words (with git's warning first for a sparse:oid blob that is
 * too large). NULL for no filter.
 */
struct walk_filter *walk_filter_or_die(struct repository *repo, struct odb *odb,
				       const struct object_filter *f);

/* core.bigFileThreshold, or 0 when unset (dies on a bad value). */
uint64_t big_file_threshold_config(struct repository *repo);

/*
 * Report what the bitmap writer skips in the configuration, as git
 * does: a pack.preferBitmapTips without a value ("error: missing value
 * for 'pack.preferbitmaptips'").
 */
void warn_bitmap_config(struct repository *repo);
/*
 * Read the bitmapPseudoMerge.* config before any work is done, printing
 * git's warnings and dying in git's words on a bad value.
 */
void check_pseudo_merge_config(struct repository *repo);

/*
 * verify-pack -v's report of a pack indexed with keep_stats: one line
 * per object, then the histogram of delta chain lengths; index-pack
 * --verify-stat prints the same.
 */
struct indexed_pack;
void verify_pack_print_objects(const struct indexed_pack *ip);
void verify_pack_print_histogram(const struct indexed_pack *ip);

#endif
