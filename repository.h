/*
 * repository.h: finding and describing a repository.
 *
 * Discovery follows git: GIT_DIR (or --git-dir) names the git directory
 * directly; otherwise walk up from the start directory looking for
 * ".git" (a directory, or a "gitdir: <path>" file) or for a bare
 * repository (a directory with HEAD, objects/ and refs/). GIT_OBJECT_DIRECTORY
 * overrides the object directory.
 *
 * The repository's config (system, global, local, command line) is read
 * once at open, its conditional includes (config.h) tested against
 * this repository; core.repositoryformatversion and
 * extensions.objectFormat choose the hash algorithm (sha1 when unset).
 * Unknown extensions under repositoryformatversion 1 are refused, as
 * git refuses them.
 *
 * The format keys (core.repositoryformatversion, extensions.*,
 * core.bare, core.worktree) are taken from the repository's own config
 * files only, not the files they include, as git takes them. Version 0
 * or 1 is accepted; under version 1 the extensions noop, noop-v1,
 * objectFormat, refStorage, preciousObjects, partialClone and
 * worktreeConfig are accepted and any other is refused; under version
 * 0 unknown extensions are ignored but the version-1-only ones
 * (objectFormat, refStorage, noop-v1) are refused. extensions.refStorage
 * is "files" (the default) or "reftable" (refs.h reads both); any other
 * value is refused as git refuses it, and so is a ref store elsewhere
 * ("reftable://<path>").
 *
 * Discovery also honours GIT_WORK_TREE, GIT_COMMON_DIR,
 * GIT_CEILING_DIRECTORIES and GIT_DISCOVERY_ACROSS_FILESYSTEM, and a
 * linked worktree's "commondir" file. Every path is absolute, with
 * symbolic links resolved. bare and worktree follow git's
 * "rev-parse --is-bare-repository" and "--show-toplevel": started inside
 * the git directory of a non-bare repository, worktree is NULL although
 * bare is false.
 */
#ifndef GP_REPOSITORY_H
#define GP_REPOSITORY_H

#include "config.h"
#include "oidset.h"

struct commit_graph;
struct gp_error;
struct odb;
struct ref_store;

/* Where the refs live: extensions.refStorage. */
enum ref_storage {
	REF_STORAGE_FILES = 0,   /* loose refs and packed-refs */
	REF_STORAGE_REFTABLE,    /* reftable stacks (reftable.h) */
};

struct repository {
	char *gitdir;   /* absolute path of the git directory */
	/*
	 * The git directory as git spells it for includeIf "gitdir:"
	 * (config_repo_info): symbolic links of $PWD kept; NULL when git
	 * uses the resolved path.
	 */
	char *gitdir_spelled;
	char *objdir;   /* absolute path of the object directory */
	char *worktree; /* absolute top of the work tree; NULL when bare */
	bool bare;
	int hash_algo;  /* GP_HASH_SHA1 or GP_HASH_SHA256 */
	struct config_set config;
	struct odb *odb; /* opened lazily by repo_odb() */
	/*
	 * Absolute path of the directory shared by all worktrees: config,
	 * refs, packed-refs and (unless overridden) objects live here. The
	 * same as gitdir except in a linked worktree, whose gitdir is
	 * <commondir>/worktrees/<name>.
	 */
	char *commondir;
	enum ref_storage ref_storage;
	/* extensions.preciousObjects (any version, as git): no object or pack may be deleted */
	bool precious_objects;
	struct ref_store *refs; /* refs.h's cache (packed-refs, reftable stacks); lazily made */
	/*
	 * The file listing the shallow commits (technical/shallow): NULL
	 * for <gitdir>/shallow, "" for none. Git's --shallow-file sets it.
	 */
	char *shallow_file;
	char *promisor;          /* a partial clone's promisor remote, or NULL */
	/*
	 * The directory git would work from (it moves to the top of the
	 * work tree it found, or into the git directory it found itself
	 * in): relative $GIT_ALTERNATE_OBJECT_DIRECTORIES entries resolve
	 * against it. NULL: the current directory.
	 */
	char *work_dir;
	struct oidset lazy_fetched; /* names fetched on demand (or tried) */
	/* repo_commit_graph()'s: the graph (owned), and whether it was looked at */
	struct commit_graph *graph;
	bool graph_checked, graph_allowed;
};

/*
 * Find the repository containing start_dir (NULL: the current
 * directory), honouring GIT_DIR. Errors: GP_ENOTFOUND when no repository
 * is found ("not a git repository (or any of the parent directories)"),
 * or GIT_DIR does not name one; GP_ECORRUPT for a bad ".git" file, a
 * bad config or an unsupported format version or extension; GP_EIO
 * when a directory or config file cannot be read; GP_EINVAL for a bad
 * GIT_WORK_TREE or command-line config.
 */
int repo_discover(struct repository **out, const char *start_dir,
		  struct gp_error *err);
/*
 * Open the repository whose git directory is gitdir (no walking up); a
 * ".git" file naming the directory is followed too. The environment's
 * GIT_DIR, GIT_WORK_TREE and GIT_OBJECT_DIRECTORY are not consulted
 * (config still is). The worktree is core.worktree, else the parent of
 * a gitdir named ".git" unless core.bare is true; otherwise the
 * repository is bare. Errors as for repo_discover().
 */
int repo_open_gitdir(struct repository **out, const char *gitdir,
		     struct gp_error *err);
/*
 * The path of the shallow file (repo->shallow_file, else
 * <gitdir>/shallow), or NULL when there is none to read. Caller frees.
 */
char *repo_shallow_path(const struct repository *repo);

/*
 * A partial clone: fetch these objects from the promisor remote in one
 * go (git fetch, started with posix_spawn), as git does before it packs
 * what it lacks. Errors: GP_ENOTFOUND (no promisor remote, or the fetch
 * failed), GP_EIO.
 */
int repo_promisor_fetch(struct repository *repo, const struct object_id *oids, size_t nr,
			struct gp_error *err);

/*
 * What includeIf conditions are tested against (config.h), as the
 * repository's own config was read: valid while repo is.
 */
void repo_config_info(struct repository *repo, struct config_repo_info *out);

/* Accepts NULL. Closes the object database and the ref cache too. */
void repo_free(struct repository *repo);

/*
 * The repository's object database (odb.h), opened on first use and
 * freed by repo_free(), with the alternates GIT_ALTERNATE_OBJECT_DIRECTORIES
 * names (colon-separated; double-quoted entries as git quotes them)
 * after those of objects/info/alternates. Errors as odb_open().
 */
int repo_odb(struct repository *repo, struct odb **out, struct gp_error *err);

/*
 * For a server that keeps object stores open between requests (one
 * store, many requests): repo_attach_odb() gives repo an odb opened
 * before for the same object directory (and the same alternates), which
 * repo_odb() returns from then on, set up as if repo had opened it;
 * repo_detach_odb() takes the odb back (NULL if none was opened), so
 * that it outlives repo_free(). An odb serves one thread at a time.
 */
void repo_attach_odb(struct repository *repo, struct odb *odb);
struct odb *repo_detach_odb(struct repository *repo);

/*
 * The repository's commit-graph (commit-graph.h) for commit walks, as
 * git reads it: not when core.commitGraph is false (unless
 * GIT_TEST_COMMIT_GRAPH is true), and not in a shallow repository or
 * one with info/grafts. Replace refs are no reason to refuse it here:
 * gitpack's walks do not replace objects (rev-list, which follows git's
 * output, checks them itself).
 *
 * repo_commit_graph() opens it on first call and keeps it until
 * repo_free(): *out is borrowed, NULL when there is none or it may not
 * be used. Only the first call can fail (GP_ECORRUPT, GP_EIO: a graph
 * that does not open, which callers usually ignore, reading the
 * commits instead); later calls give NULL then.
 *
 * Both read the graph as commit_graph_open_odb() does: the object
 * directory's, else that of the first alternate that has one.
 * repo_open_commit_graph() opens the graph of odb (the repository's or
 * another object directory's) under the same rules, for the caller to
 * free: *out NULL and 0 when there is none or it may not be used.
 *
 * For a server that keeps graphs between requests (as it keeps odbs,
 * above): repo_attach_commit_graph() hands repo a graph opened before
 * for its object directory; repo_commit_graph() uses it if it is still
 * the one on disk (commit_graph_is_current()) and opens the new one
 * otherwise. repo_detach_commit_graph() takes back whatever graph repo
 * holds (NULL if none), to outlive repo_free(). A graph is read-only
 * once open.
 */
int repo_commit_graph(struct repository *repo, const struct commit_graph **out,
		      struct gp_error *err);
int repo_open_commit_graph(struct repository *repo, struct odb *odb,
			   struct commit_graph **out, struct gp_error *err);
void repo_attach_commit_graph(struct repository *repo, struct commit_graph *graph);
struct commit_graph *repo_detach_commit_graph(struct repository *repo);

/* "<gitdir>/<rel>" and "<objdir>/<rel>"; caller frees. */
char *repo_git_path(const struct repository *repo, const char *rel);
char *repo_obj_path(const struct repository *repo, const char *rel);

/*
 * The local object directory as git names it in its messages
 * (count-objects -v, prune-packed -n): ".git/objects" from a work
 * tree, "./objects" from inside the git directory, else what it was
 * given or found. Caller frees.
 */
char *repo_objdir_shown(const struct repository *repo);

#endif
