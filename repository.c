/*
 * repository.c: finding a repository and reading its format, as git
 * does it (gitrepository-layout(5), git-rev-parse(1), the GIT_DIR
 * family in git(1), and extensions.* in git-config(1)).
 *
 * A directory is a git directory when it has a plausible HEAD, and its
 * common directory (itself, or the one its "commondir" file names) has
 * objects/ and refs/. Discovery tries, from the start directory up to
 * the root, the first GIT_CEILING_DIRECTORIES entry or a filesystem
 * boundary: "<dir>/.git" (a directory, or a file "gitdir: <path>"),
 * then <dir> itself (a bare repository, or the inside of a .git).
 *
 * Nothing read from disk here is trusted: .git files and HEAD are read
 * with a size bound, and every failure is an error code, never a crash.
 *
 * NEEDSWORK: git 2.36+ also refuses repositories owned by another user
 * unless safe.directory allows them; we do not check ownership yet.
 */
#include "repository.h"
#include "commit-graph.h"
#include "error.h"
#include "hash.h"
#include "lockfile.h"
#include "odb.h"
#include "refs.h"
#include "strbuf.h"
#include "oidset.h"
#include "run-command.h"
#include <fcntl.h>
#include <sys/stat.h>

/* A .git file or HEAD bigger than this is not one git wrote. */
#define SMALL_FILE_MAX (64 * 1024)

enum found_how {
	FOUND_EXPLICIT, /* GIT_DIR named it */
	FOUND_DOTGIT,   /* "<dir>/.git", directory or gitfile */
	FOUND_GITDIR,   /* the start directory is in the git directory */
	FOUND_OPEN,     /* repo_open_gitdir(): no environment */
};

/* The environment settings discovery honours; all NULL when opening. */
struct repo_env {
	const char *git_dir;     /* GIT_DIR */
	const char *work_tree;   /* GIT_WORK_TREE */
	const char *object_dir;  /* GIT_OBJECT_DIRECTORY */
	const char *common_dir;  /* GIT_COMMON_DIR */
};

static const char *env_nonempty(const char *name)
{
	const char *value = getenv(name);
	return value && *value ? value : NULL;
}

/* "dir/rel", or rel alone when it is absolute. Caller frees. */
static char *join_path(const char *dir, const char *rel)
{
	size_t len = strlen(dir);
	if (rel[0] == '/')
		return xstrdup(rel);
	if (len && dir[len - 1] == '/')
		return xstrfmt("%s%s", dir, rel);
	return xstrfmt("%s/%s", dir, rel);
}

/* The directory part of path ("." when there is none). Caller frees. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, slash - path);
}

/*
 * Read a file of at most max bytes into sb. Returns 0, -1 with errno
 * set, or 1 when the file is larger than max.
 */
static int read_small_file(const char *path, size_t max, struct strbuf *sb)
{
	struct stat st;
	ssize_t got;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		goto fail;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return 1;
	}
	strbuf_grow(sb, (size_t)st.st_size);
	got = read_in_full(fd, sb->buf + sb->len, (size_t)st.st_size);
	if (got < 0)
		goto fail;
	strbuf_setlen(sb, sb->len + (size_t)got);
	close(fd);
	return 0;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static void strip_newlines(struct strbuf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == '\n' || sb->buf[sb->len - 1] == '\r'))
		strbuf_setlen(sb, sb->len - 1);
}

/*
 * The common directory of the git directory dir: GIT_COMMON_DIR, else
 * what dir/commondir names (relative to dir), else dir. Not resolved.
 */
static char *common_dir_of(const char *dir, const struct repo_env *env)
{
	struct strbuf content = STRBUF_INIT;
	char *path, *common;

	if (env->common_dir)
		return xstrdup(env->common_dir);
	path = join_path(dir, "commondir");
	if (!read_small_file(path, SMALL_FILE_MAX, &content)) {
		strip_newlines(&content);
		if (content.len && !memchr(content.buf, '\0', content.len)) {
			common = join_path(dir, content.buf);
			goto out;
		}
	}
	common = xstrdup(dir);
out:
	free(path);
	strbuf_release(&content);
	return common;
}

static bool is_hex_id_prefix(const char *s, size_t len)
{
	if (len < 40)
		return false;
	for (size_t pos = 0; pos < 40; pos++)
		if (!strchr("0123456789abcdef", s[pos]) || !s[pos])
			return false;
	return true;
}

/* HEAD is a symref into refs/ (file or symlink) or an object id. */
static bool is_valid_head(const char *dir)
{
	struct strbuf content = STRBUF_INIT;
	char *path = join_path(dir, "HEAD");
	bool valid = false;
	const char *rest;
	struct stat st;

	if (lstat(path, &st) < 0)
		goto out;
	if (S_ISLNK(st.st_mode)) {
		char target[256];
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			valid = starts_with(target, "refs/");
		}
		goto out;
	}
	if (read_small_file(path, SMALL_FILE_MAX, &content))
		goto out;
	if (skip_prefix(content.buf, "ref:", &rest)) {
		while (*rest == ' ' || *rest == '\t')
			rest++;
		valid = starts_with(rest, "refs/");
	} else {
		valid = is_hex_id_prefix(content.buf, content.len);
	}
out:
	free(path);
	strbuf_release(&content);
	return valid;
}

static bool is_dir_usable(const char *path)
{
	return !access(path, X_OK);
}

static bool is_git_directory(const char *dir, const struct repo_env *env)
{
	char *common = common_dir_of(dir, env);
	char *objects = env->object_dir ? xstrdup(env->object_dir)
					: join_path(common, "objects");
	char *refs = join_path(common, "refs");
	bool is_repo;

	is_repo = is_dir_usable(objects) && is_dir_usable(refs) &&
		  is_valid_head(dir);
	free(refs);
	free(objects);
	free(common);
	return is_repo;
}

/*
 * A ".git" file: "gitdir: <path>" and a newline, the path relative to
 * the file's directory. Sets *out to the path it names (unchecked).
 */
static int read_gitfile(const char *file, char **out, struct gp_error *err)
{
	struct strbuf content = STRBUF_INIT;
	const char *target;
	char *dir = NULL;
	int ret = 0;

	ret = read_small_file(file, SMALL_FILE_MAX, &content);
	if (ret < 0) {
		ret = gp_error_errno(err, "cannot read '%s'", file);
		goto out;
	}
	strip_newlines(&content);
	if (ret > 0 || memchr(content.buf, '\0', content.len) ||
	    !skip_prefix(content.buf, "gitdir: ", &target)) {
		ret = CORRUPT(err, "invalid gitfile format: %s", file);
		goto out;
	}
	if (!*target) {
		ret = CORRUPT(err, "no path in gitfile: %s", file);
		goto out;
	}
	dir = dir_of(file);
	*out = join_path(dir, target);
out:
	free(dir);
	strbuf_release(&content);
	return ret;
}

static int resolve(const char *path, char **out, struct gp_error *err)
{
	*out = realpath(path, NULL);
	if (!*out)
		return gp_error_errno(err, "cannot resolve '%s'", path);
	return 0;
}

/*
 * The length of the longest GIT_CEILING_DIRECTORIES entry that is a
 * proper ancestor of dir (an absolute, resolved path); 0 when none.
 * Discovery must not look at that directory or any above it.
 */
static size_t ceiling_len(const char *dir)
{
	const char *env = getenv("GIT_CEILING_DIRECTORIES");
	size_t best = 0;

	while (env && *env) {
		size_t entry_len = strcspn(env, ":");
		char *entry = xstrndup(env, entry_len);
		char *real = entry[0] == '/' ? realpath(entry, NULL) : NULL;
		const char *ceil = real ? real : entry;
		size_t len = strlen(ceil);

		/* A relative or empty entry means nothing to git either. */
		if (ceil[0] == '/') {
			while (len > 1 && ceil[len - 1] == '/')
				len--;
			if (len == 1 ? dir[1] != '\0'
				     : !strncmp(dir, ceil, len) && dir[len] == '/')
				best = MAX(best, len);
		}
		free(real);
		free(entry);
		env += entry_len;
		if (*env == ':')
			env++;
	}
	return best;
}

static bool across_filesystems(void)
{
	const char *env = getenv("GIT_DISCOVERY_ACROSS_FILESYSTEM");
	bool across = false;
	return env && config_parse_bool(env, &across) && across;
}

/*
 * Walk up from start (absolute, resolved) to find the repository. On
 * success *gitdir is its (unresolved) git directory and *top the
 * directory holding ".git" (FOUND_DOTGIT only).
 */
static int walk_up(const char *start, const struct repo_env *env,
		   enum found_how *how, char **gitdir, bool *via_gitfile,
		   char **top, struct gp_error *err)
{
	struct strbuf dir = STRBUF_INIT;
	size_t ceil = ceiling_len(start);
	bool across = across_filesystems();
	char *dotgit = NULL;
	struct stat st;
	dev_t dev;
	int ret;

	if (stat(start, &st) < 0) {
		ret = gp_error_errno(err, "cannot stat '%s'", start);
		goto out;
	}
	dev = st.st_dev;
	strbuf_addstr(&dir, start);
	for (;;) {
		char *slash;

		free(dotgit);
		dotgit = join_path(dir.buf, ".git");
		if (!stat(dotgit, &st) && S_ISREG(st.st_mode)) {
			char *target = NULL;
			ret = read_gitfile(dotgit, &target, err);
			if (ret < 0)
				goto out;
			if (!is_git_directory(target, env)) {
				ret = gp_error_set(err, GP_ECORRUPT,
						   "not a git repository: %s", target);
				free(target);
				goto out;
			}
			*how = FOUND_DOTGIT;
			*gitdir = target;
			*via_gitfile = true;
			*top = strbuf_detach(&dir, NULL);
			goto out;
		}
		if (!stat(dotgit, &st) && S_ISDIR(st.st_mode) &&
		    is_git_directory(dotgit, env)) {
			*how = FOUND_DOTGIT;
			*gitdir = dotgit;
			dotgit = NULL;
			*top = strbuf_detach(&dir, NULL);
			ret = 0;
			goto out;
		}
		if (is_git_directory(dir.buf, env)) {
			*how = FOUND_GITDIR;
			*gitdir = strbuf_detach(&dir, NULL);
			*top = NULL;
			ret = 0;
			goto out;
		}

		if (!strcmp(dir.buf, "/"))
			break;
		slash = strrchr(dir.buf, '/');
		strbuf_setlen(&dir, slash == dir.buf ? 1 : (size_t)(slash - dir.buf));
		if (ceil && dir.len <= ceil)
			break;
		if (!across && (stat(dir.buf, &st) < 0 || st.st_dev != dev)) {
			ret = gp_error_set(err, GP_ENOTFOUND,
					   "not a git repository (or any parent up to mount point %s)\n"
					   "Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).",
					   dir.buf);
			goto out;
		}
	}
	ret = gp_error_set(err, GP_ENOTFOUND,
			   "not a git repository (or any of the parent directories): .git");
out:
	free(dotgit);
	strbuf_release(&dir);
	return ret;
}

/*
 * The last entry for key in the repository's own config as git reads
 * its format: the files themselves, not what they include
 * (config_set_load_format()).
 */
static const struct config_entry *local_entry(const struct config_set *format,
					      const char *key)
{
	for (size_t pos = format->nr; pos > 0; pos--) {
		const struct config_entry *e = &format->items[pos - 1];
		if (!strcmp(e->key, key))
			return e;
	}
	return NULL;
}

static void add_name(struct strbuf *list, size_t *nr, const char *name)
{
	strbuf_addf(list, "\n\t%s", name);
	(*nr)++;
}

/*
 * core.repositoryformatversion and extensions.*: refuse what we cannot
 * read correctly, and pick the hash algorithm.
 */
static int check_format(struct repository *repo, const struct config_set *format,
			struct gp_error *err)
{
	static const char *const any_version[] = {
		"noop", "preciousobjects", "partialclone", "worktreeconfig",
	};
	struct strbuf unknown = STRBUF_INIT, v1_only = STRBUF_INIT;
	size_t unknown_nr = 0, v1_only_nr = 0;
	const struct config_entry *e;
	int algo = GP_HASH_SHA1;
	enum ref_storage storage = REF_STORAGE_FILES;
	int64_t version = 0;
	int ret = 0;

	e = local_entry(format, "core.repositoryformatversion");
	if (e && !config_parse_int64(e->value, &version)) {
		ret = CORRUPT(err, "bad numeric config value '%s' for 'core.repositoryformatversion' in %s/config",
			      e->value ? e->value : "", repo->commondir);
		goto out;
	}
	if (version < 0 || version > 1) {
		ret = CORRUPT(err, "Expected git repo version <= 1, found %" PRId64,
			      version);
		goto out;
	}

	for (size_t pos = 0; pos < format->nr; pos++) {
		const char *name;
		bool known = false;

		e = &format->items[pos];
		if (!skip_prefix(e->key, "extensions.", &name))
			continue;
		for (size_t idx = 0; idx < ARRAY_SIZE(any_version); idx++)
			if (!strcmp(name, any_version[idx]))
				known = true;
		if (!strcmp(name, "preciousobjects")) {
			/* The last entry wins; a value that is no boolean keeps objects too. */
			bool precious;
			repo->precious_objects = !config_parse_bool(e->value, &precious) || precious;
		}
		if (known)
			continue;
		if (!strcmp(name, "objectformat")) {
			/* Checked under any version: git does the same. */
			if (!e->value || !hash_algo_by_name(e->value)) {
				ret = CORRUPT(err, "invalid value for 'extensions.objectformat': '%s'",
					      e->value ? e->value : "");
				goto out;
			}
			algo = hash_algo_by_name(e->value);
			add_name(&v1_only, &v1_only_nr, name);
		} else if (!strcmp(name, "refstorage")) {
			/* Checked under any version, as objectformat is. */
			const char *v = e->value;
			if (!v) {
				ret = CORRUPT(err, "missing value for 'extensions.refstorage'");
				goto out;
			} else if (!strcmp(v, "files")) {
				storage = REF_STORAGE_FILES;
			} else if (!strcmp(v, "reftable")) {
				storage = REF_STORAGE_REFTABLE;
			} else if (strstr(v, "://") &&
				   (starts_with(v, "files://") || starts_with(v, "reftable://"))) {
				/*
				 * NEEDSWORK: git 2.5x can keep the refs in
				 * another directory ("<format>://<path>"); we
				 * read them only from the repository.
				 */
				ret = CORRUPT(err, "unsupported value for 'extensions.refstorage': '%s' "
					      "(refs stored outside the repository)", v);
				goto out;
			} else {
				ret = CORRUPT(err, "invalid value for 'extensions.refstorage': '%s'", v);
				goto out;
			}
			add_name(&v1_only, &v1_only_nr, name);
		} else if (!strcmp(name, "noop-v1")) {
			add_name(&v1_only, &v1_only_nr, name);
		} else {
			add_name(&unknown, &unknown_nr, name);
		}
	}
	if (version >= 1 && unknown_nr) {
		ret = CORRUPT(err, "unknown repository extension%s found:%s",
			      unknown_nr > 1 ? "s" : "", unknown.buf);
		goto out;
	}
	if (version == 0 && v1_only_nr) {
		ret = CORRUPT(err, "repo version is 0, but v1-only extension%s found:%s",
			      v1_only_nr > 1 ? "s" : "", v1_only.buf);
		goto out;
	}
	repo->hash_algo = version >= 1 ? algo : GP_HASH_SHA1;
	repo->ref_storage = version >= 1 ? storage : REF_STORAGE_FILES;
out:
	strbuf_release(&unknown);
	strbuf_release(&v1_only);
	return ret;
}

/*
 * The worktree git would use, per git-rev-parse --show-toplevel: an
 * explicit GIT_WORK_TREE, else none when core.bare is true, else
 * core.worktree (relative to the git directory), else the directory
 * holding .git (or, for GIT_DIR, the start directory). Inside a git
 * directory there is none.
 */
static int choose_worktree(struct repository *repo, const struct config_set *format,
			   enum found_how how, const char *top,
			   const struct repo_env *env, struct gp_error *err)
{
	const struct config_entry *bare_e = local_entry(format, "core.bare");
	const struct config_entry *wt_e = local_entry(format, "core.worktree");
	char *candidate = NULL, *linked = NULL;
	int core_bare = -1; /* unset */
	bool from_env = false;
	int ret = 0;

	if (bare_e) {
		bool b;
		if (!config_parse_bool(bare_e->value, &b)) {
			ret = CORRUPT(err, "bad boolean config value '%s' for 'core.bare'",
				      bare_e->value);
			goto out;
		}
		core_bare = b;
	}
	if (wt_e && !wt_e->value) {
		ret = CORRUPT(err, "missing value for 'core.worktree'");
		goto out;
	}

	if (env->work_tree) {
		candidate = xstrdup(env->work_tree);
		from_env = true;
	} else if (how == FOUND_GITDIR || core_bare == 1) {
		candidate = NULL;
	} else if (wt_e) {
		candidate = join_path(repo->gitdir, wt_e->value);
	} else if (how != FOUND_OPEN) {
		candidate = xstrdup(top);
	} else if (strcmp(repo->gitdir, repo->commondir)) {
		/* A linked worktree's gitdir file names its ".git" file. */
		struct strbuf content = STRBUF_INIT;
		linked = join_path(repo->gitdir, "gitdir");
		if (!read_small_file(linked, SMALL_FILE_MAX, &content)) {
			strip_newlines(&content);
			if (content.len && !memchr(content.buf, '\0', content.len))
				candidate = dir_of(content.buf);
		}
		strbuf_release(&content);
	} else if (ends_with(repo->gitdir, "/.git")) {
		candidate = dir_of(repo->gitdir);
	}

	if (candidate) {
		repo->worktree = realpath(candidate, NULL);
		if (!repo->worktree) {
			ret = gp_error_set(err, from_env ? GP_EINVAL : GP_ECORRUPT,
					   "invalid worktree path '%s': %s",
					   candidate, strerror(errno));
			goto out;
		}
	}
	repo->bare = !repo->worktree && core_bare != 0;
out:
	free(linked);
	free(candidate);
	return ret;
}

/*
 * $PWD when it names dir (the same inode), so that a path reached
 * through a symbolic link keeps its spelling, else dir. Caller frees.
 */
static char *logical_dir(const char *dir)
{
	const char *pwd = getenv("PWD");
	struct stat pwd_st, dir_st;

	if (pwd && pwd[0] == '/' && !stat(pwd, &pwd_st) && !stat(dir, &dir_st) &&
	    pwd_st.st_dev == dir_st.st_dev && pwd_st.st_ino == dir_st.st_ino)
		return xstrdup(pwd);
	return xstrdup(dir);
}

/*
 * The git directory as git spells it when it tests includeIf "gitdir:"
 * patterns after the resolved path (config.h), or NULL when that is the
 * resolved path. git makes the path it holds absolute against the
 * directory it works from, taking $PWD for that directory when $PWD
 * names it, and does not normalise it. What it holds depends on how it
 * found the repository (learnt by running git 2.39 and 2.55):
 *  - GIT_DIR: the value as given, relative to the start directory;
 *    but resolved when a work tree is set and the start directory is
 *    inside it, below its top;
 *  - a ".git" directory in top: "<top>/.git" (git moves to top);
 *  - the start directory is the git directory: "<start>/.";
 *  - a .git file, a git directory found above the start: resolved.
 */
static char *spelled_gitdir(const struct repository *repo, enum found_how how,
			    const char *raw, bool via_gitfile, const char *top,
			    const char *start)
{
	char *dir, *spelled = NULL;

	if (via_gitfile)
		return NULL;
	switch (how) {
	case FOUND_EXPLICIT:
		if (repo->worktree) {
			size_t len = strlen(repo->worktree);
			bool root = len == 1; /* "/": every other path is below */
			if (!strncmp(start, repo->worktree, len) &&
			    (root ? start[1] != '\0' : start[len] == '/'))
				return NULL;
		}
		dir = logical_dir(start);
		spelled = join_path(dir, raw);
		break;
	case FOUND_DOTGIT:
		dir = logical_dir(top);
		spelled = join_path(dir, ".git");
		break;
	case FOUND_GITDIR:
		if (strcmp(raw, start))
			return NULL;
		dir = logical_dir(start);
		spelled = join_path(dir, ".");
		break;
	case FOUND_OPEN:
	default:
		return NULL;
	}
	free(dir);
	return spelled;
}

/*
 * onbranch: the branch HEAD names, through symbolic refs (an unborn
 * branch counts); NULL when HEAD is detached, names something outside
 * refs/heads/, or cannot be read (git does not complain either).
 */
static char *current_branch(void *data)
{
	struct repository *repo = data;
	char *name = xstrdup("HEAD"), *target = NULL, *branch = NULL;
	const char *rest;
	bool symbolic = false;

	for (int depth = 0; depth < REFS_MAX_SYMREF_DEPTH; depth++) {
		if (refs_read_symref(repo, name, &target, NULL) < 0)
			break;
		free(name);
		name = target;
		symbolic = true;
	}
	if (symbolic && skip_prefix(name, "refs/heads/", &rest))
		branch = xstrdup(rest);
	free(name);
	return branch;
}

void repo_config_info(struct repository *repo, struct config_repo_info *out)
{
	*out = (struct config_repo_info){
		.gitdir = repo->gitdir,
		.gitdir_spelled = repo->gitdir_spelled,
		.worktree = repo->worktree,
		.current_branch = current_branch,
		.data = repo,
	};
}

/*
 * Build the repository from its git directory. top is where discovery
 * found ".git" (or the start directory for GIT_DIR), start the
 * directory discovery started from (NULL when opening); env holds the
 * overrides that apply. As git does, the format (version, extensions,
 * core.bare, core.worktree) comes from the repository's config files
 * alone, read before the whole config, whose conditional includes can
 * then be tested against the git directory, work tree and HEAD.
 */
static int finish_open(struct repository **out, enum found_how how,
		       const char *gitdir, bool via_gitfile, const char *top,
		       const char *start, const struct repo_env *env,
		       struct gp_error *err)
{
	struct repository *repo = xcalloc(1, sizeof(*repo));
	struct config_set format = CONFIG_SET_INIT;
	struct config_repo_info info;
	char *common = NULL, *objects = NULL;
	int ret;

	config_set_init(&repo->config);
	repo->hash_algo = GP_HASH_SHA1;
	ret = resolve(gitdir, &repo->gitdir, err);
	if (ret < 0)
		goto out;
	common = common_dir_of(repo->gitdir, env);
	/* the usual case, the git directory itself: resolved just now */
	if (!strcmp(common, repo->gitdir))
		repo->commondir = xstrdup(common);
	else if ((ret = resolve(common, &repo->commondir, err)) < 0)
		goto out;

	ret = config_set_load_format(&format, repo->commondir, repo->gitdir, err);
	if (ret < 0)
		goto out;
	ret = check_format(repo, &format, err);
	if (ret < 0)
		goto out;
	ret = choose_worktree(repo, &format, how, top, env, err);
	if (ret < 0)
		goto out;
	repo->gitdir_spelled = spelled_gitdir(repo, how, gitdir, via_gitfile, top, start);
	repo_config_info(repo, &info);
	ret = config_set_load_repo(&repo->config, repo->commondir, repo->gitdir,
				   &info, err);
	if (ret < 0)
		goto out;
	lockfile_pid_configure(config_get_bool_or(&repo->config, "core.lockfilepid", false));
	if (how == FOUND_GITDIR)
		repo->work_dir = xstrdup(repo->gitdir);
	else if (how == FOUND_DOTGIT && repo->worktree)
		repo->work_dir = xstrdup(repo->worktree);
	else if (how == FOUND_EXPLICIT && repo->worktree) {
		char *cwd = getcwd(NULL, 0);
		size_t len = strlen(repo->worktree);
		if (cwd && !strncmp(cwd, repo->worktree, len) && (!cwd[len] || cwd[len] == '/'))
			repo->work_dir = xstrdup(repo->worktree);
		free(cwd);
	}

	objects = env->object_dir ? xstrdup(env->object_dir)
				  : join_path(repo->commondir, "objects");
	{
		/*
		 * Below the resolved common directory, "objects" is its own
		 * real path unless it is a symbolic link: one lstat() rather
		 * than a readlink() per component.
		 */
		struct stat st;
		if (!env->object_dir && !lstat(objects, &st) && S_ISDIR(st.st_mode))
			repo->objdir = xstrdup(objects);
		else
			repo->objdir = realpath(objects, NULL);
	}
	/* A GIT_OBJECT_DIRECTORY that does not exist yet stays as given. */
	if (!repo->objdir) {
		char *cwd = getcwd(NULL, 0);
		if (!cwd) {
			ret = gp_error_errno(err, "cannot get the current directory");
			goto out;
		}
		repo->objdir = join_path(cwd, objects);
		free(cwd);
	}
out:
	config_set_release(&format);
	free(objects);
	free(common);
	if (ret < 0) {
		repo_free(repo);
		repo = NULL;
	}
	*out = repo;
	return ret;
}

int repo_discover(struct repository **out, const char *start_dir,
		  struct gp_error *err)
{
	struct repo_env env = {
		getenv("GIT_DIR"),
		env_nonempty("GIT_WORK_TREE"),
		env_nonempty("GIT_OBJECT_DIRECTORY"),
		env_nonempty("GIT_COMMON_DIR"),
	};
	enum found_how how = FOUND_EXPLICIT;
	char *start = NULL, *gitdir = NULL, *top = NULL;
	bool via_gitfile = false;
	struct stat st;
	int ret;

	*out = NULL;
	ret = resolve(start_dir ? start_dir : ".", &start, err);
	if (ret < 0)
		goto out;
	if (env.git_dir) {
		/* GIT_DIR may name a ".git" file as well as a directory. */
		if (!stat(env.git_dir, &st) && S_ISREG(st.st_mode)) {
			ret = read_gitfile(env.git_dir, &gitdir, err);
			if (ret < 0)
				goto out;
			via_gitfile = true;
		} else {
			gitdir = xstrdup(env.git_dir);
		}
		if (!is_git_directory(gitdir, &env)) {
			ret = gp_error_set(err, GP_ENOTFOUND,
					   "not a git repository: '%s'", env.git_dir);
			goto out;
		}
		top = xstrdup(start);
	} else {
		ret = walk_up(start, &env, &how, &gitdir, &via_gitfile, &top, err);
		if (ret < 0)
			goto out;
	}
	ret = finish_open(out, how, gitdir, via_gitfile, top, start, &env, err);
out:
	free(top);
	free(gitdir);
	free(start);
	return ret;
}

int repo_open_gitdir(struct repository **out, const char *gitdir,
		     struct gp_error *err)
{
	struct repo_env env = { NULL, NULL, NULL, NULL };
	char *target = NULL;
	struct stat st;
	int ret;

	*out = NULL;
	if (!stat(gitdir, &st) && S_ISREG(st.st_mode)) {
		ret = read_gitfile(gitdir, &target, err);
		if (ret < 0)
			goto out;
		gitdir = target;
	}
	if (!is_git_directory(gitdir, &env)) {
		ret = gp_error_set(err, GP_ENOTFOUND,
				   "not a git repository: '%s'", gitdir);
		goto out;
	}
	ret = finish_open(out, FOUND_OPEN, gitdir, target != NULL, NULL, NULL, &env, err);
out:
	free(target);
	return ret;
}

/*
 * One C-quoted string at *pp (just past its opening '"'), as git quotes
 * a path: the usual backslash escapes and three-digit octal. False when
 * it does not end or holds an escape git would not write; *pp then
 * points past the closing quote.
 */
static bool unquote_c(const char **pp, struct strbuf *out)
{
	const char *p = *pp;
	while (*p && *p != '"') {
		if (*p != '\\') {
			strbuf_addch(out, *p++);
			continue;
		}
		p++;
		switch (*p) {
		case 'a': strbuf_addch(out, '\a'); break;
		case 'b': strbuf_addch(out, '\b'); break;
		case 'f': strbuf_addch(out, '\f'); break;
		case 'n': strbuf_addch(out, '\n'); break;
		case 'r': strbuf_addch(out, '\r'); break;
		case 't': strbuf_addch(out, '\t'); break;
		case 'v': strbuf_addch(out, '\v'); break;
		case '\\': case '"': strbuf_addch(out, *p); break;
		case '0': case '1': case '2': case '3': {
			unsigned v = 0;
			for (int i = 0; i < 3; i++, p++) {
				if (*p < '0' || *p > '7')
					return false;
				v = v * 8 + (unsigned)(*p - '0');
			}
			strbuf_addch(out, (char)v);
			continue;
		}
		default:
			return false;
		}
		p++;
	}
	if (*p != '"')
		return false;
	*pp = p + 1;
	return true;
}

/*
 * GIT_ALTERNATE_OBJECT_DIRECTORIES: paths separated by ':'; one that
 * starts with '"' is a C-quoted string, as git writes a path holding
 * a colon, unless it does not unquote: then it is taken as it stands.
 * A relative path is taken from where git would work (repo->work_dir).
 * A directory that does not exist is skipped, as git skips it.
 */
static void add_env_alternates(struct repository *repo, struct odb *odb, const char *env)
{
	struct strbuf path = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	const char *p = env;

	while (*p) {
		const char *q = p + 1;
		strbuf_reset(&path);
		if (*p == '"' && unquote_c(&q, &path)) {
			p = q;
			while (*p && *p != ':')
				p++;
		} else {
			strbuf_reset(&path);
			while (*p && *p != ':')
				strbuf_addch(&path, *p++);
		}
		if (*p == ':')
			p++;
		if (!path.len)
			continue;
		if (path.buf[0] != '/' && repo->work_dir) {
			char *full = xstrfmt("%s/%s", repo->work_dir, path.buf);
			strbuf_reset(&path);
			strbuf_addstr(&path, full);
			free(full);
		}
		if (odb_add_alternate(odb, path.buf, &err))
			gp_error_clear(&err);
	}
	strbuf_release(&path);
}

/*
 * The promisor remote of a partial clone: extensions.partialClone, else
 * the first remote.<name>.promisor that is true. NULL when none.
 */
static char *promisor_remote(const struct repository *repo)
{
	const char *name;
	if (!config_get_string(&repo->config, "extensions.partialclone", &name) && *name)
		return xstrdup(name);
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		const char *rest;
		bool v;
		if (skip_prefix(e->key, "remote.", &rest) && ends_with(rest, ".promisor") &&
		    strlen(rest) > strlen(".promisor") &&
		    (!e->value || (config_parse_bool(e->value, &v) && v)))
			return xstrndup(rest, strlen(rest) - strlen(".promisor"));
	}
	return NULL;
}

/*
 * Every promisor remote, in the order git asks them: extensions.partialClone
 * first, then each remote with a remote.<name>.promisor that is true,
 * in the order the configuration names them. *nr_out names (caller frees
 * each and the array).
 */
static char **promisor_remotes(const struct repository *repo, size_t *nr_out)
{
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	const char *first;
	if (!config_get_string(&repo->config, "extensions.partialclone", &first) && *first) {
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrdup(first);
	}
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		const char *rest;
		char *name;
		bool seen = false;
		if (!skip_prefix(e->key, "remote.", &rest) || !ends_with(rest, ".promisor") ||
		    strlen(rest) <= strlen(".promisor"))
			continue;
		/* as git: a true value makes it one, a later false does not undo it */
		bool v = true;
		if (e->value && !config_parse_bool(e->value, &v))
			v = false;
		if (!v)
			continue;
		name = xstrndup(rest, strlen(rest) - strlen(".promisor"));
		for (size_t k = 0; k < nr && !seen; k++)
			seen = !strcmp(names[k], name);
		if (!seen) {
			ALLOC_GROW(names, nr + 1, alloc);
			names[nr++] = name;
			name = NULL;
		}
		free(name);
	}
	*nr_out = nr;
	return names;
}

/* Fetch oids from one promisor remote, as git's lazy fetch runs it. */
static int fetch_from_promisor(struct repository *repo, const char *remote,
			       const struct object_id *oids, size_t nr, struct gp_error *err)
{
	struct strbuf input = STRBUF_INIT;
	bool quiet = false;
	const char *argv[16];
	size_t n = 0;
	int code = -1, ret;

	for (size_t i = 0; i < nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		strbuf_addf(&input, "%s\n", oid_to_hex_r(hex, &oids[i]));
	}
	argv[n++] = "git";
	argv[n++] = "-c";
	argv[n++] = "fetch.negotiationAlgorithm=noop";
	argv[n++] = "fetch";
	argv[n++] = remote;
	argv[n++] = "--no-tags";
	argv[n++] = "--no-write-fetch-head";
	argv[n++] = "--recurse-submodules=no";
	argv[n++] = "--filter=blob:none";
	argv[n++] = "--stdin";
	if (!config_get_bool(&repo->config, "promisor.quiet", &quiet, err) && quiet)
		argv[n++] = "--quiet";
	argv[n] = NULL;
	gp_error_clear(err);
	ret = run_command(argv, input.buf, input.len, RUN_STDOUT_TO_STDERR, &code, err);
	strbuf_release(&input);
	if (!ret && code)
		ret = gp_error_set(err, GP_ENOTFOUND, "could not fetch %zu object%s from promisor "
				   "remote '%s'", nr, nr == 1 ? "" : "s", remote);
	return ret;
}

int repo_promisor_fetch(struct repository *repo, const struct object_id *oids, size_t nr,
			struct gp_error *err)
{
	size_t nr_remotes, nr_left = nr;
	char **remotes = promisor_remotes(repo, &nr_remotes);
	struct object_id *left = xmalloc(sizeof(*left) * (nr ? nr : 1));
	int ret = gp_error_set(err, GP_ENOTFOUND, "no promisor remote");

	memcpy(left, oids, sizeof(*left) * nr);
	for (size_t i = 0; i < nr; i++)
		oidset_insert(&repo->lazy_fetched, &oids[i]);
	/* Each remote in turn, for what the ones before could not give. */
	for (size_t r = 0; r < nr_remotes && nr_left; r++) {
		size_t kept = 0;
		gp_error_clear(err);
		ret = fetch_from_promisor(repo, remotes[r], left, nr_left, err);
		if (repo->odb)
			odb_reprepare(repo->odb);
		if (!repo->odb)
			break;
		for (size_t i = 0; i < nr_left; i++)
			if (!odb_has_object(repo->odb, &left[i]))
				left[kept++] = left[i];
		nr_left = kept;
		if (!nr_left) {
			gp_error_clear(err);
			ret = 0;
		} else if (!ret) {
			ret = gp_error_set(err, GP_ENOTFOUND, "could not fetch %zu object%s from promisor "
					   "remote '%s'", nr_left, nr_left == 1 ? "" : "s", remotes[r]);
		}
	}
	for (size_t r = 0; r < nr_remotes; r++)
		free(remotes[r]);
	free(remotes);
	free(left);
	return ret;
}

/*
 * A missing object, fetched as git does in a partial clone; each name
 * is tried once per process.
 */
static int lazy_fetch(void *data, const struct object_id *oid)
{
	struct repository *repo = data;
	struct gp_error err = GP_ERROR_INIT;
	int ret;
	if (oidset_contains(&repo->lazy_fetched, oid))
		return -1;
	ret = repo_promisor_fetch(repo, oid, 1, &err);
	gp_error_clear(&err);
	return ret ? -1 : 0;
}

/* What follows the opening of repo->odb, however it was opened. */
static void odb_opened(struct repository *repo)
{
	/* A partial clone fetches what it lacks, unless told not to (--no-lazy-fetch). */
	const char *env = getenv("GIT_NO_LAZY_FETCH");
	repo->promisor = promisor_remote(repo);
	if (repo->promisor && !(env && *env && strcmp(env, "0")))
		odb_set_missing_hook(repo->odb, lazy_fetch, repo);
}

int repo_odb(struct repository *repo, struct odb **out, struct gp_error *err)
{
	if (!repo->odb) {
		const char *env = getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
		bool use_midx = true;
		int ret;
		/* core.multiPackIndex=false: git reads no MIDX (bad values read as true). */
		if (config_get_bool(&repo->config, "core.multipackindex", &use_midx, NULL))
			use_midx = true;
		ret = odb_open_flags(&repo->odb, repo->objdir, repo->hash_algo,
				     use_midx ? 0 : ODB_NO_MIDX, err);
		if (ret)
			return ret;
		if (env && *env)
			add_env_alternates(repo, repo->odb, env);
		odb_opened(repo);
	}
	*out = repo->odb;
	return 0;
}

void repo_attach_odb(struct repository *repo, struct odb *odb)
{
	odb_free(repo->odb);
	free(repo->promisor);
	repo->promisor = NULL;
	repo->odb = odb;
	odb_opened(repo);
}

struct odb *repo_detach_odb(struct repository *repo)
{
	struct odb *odb = repo->odb;
	repo->odb = NULL;
	/* the hook points at this repository, which the odb outlives */
	if (odb)
		odb_set_missing_hook(odb, NULL, NULL);
	return odb;
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") &&
	       strcasecmp(v, "off");
}

/*
 * As git decides it: core.commitGraph (GIT_TEST_COMMIT_GRAPH forces it
 * on), and never in a shallow repository or one with grafts, whose
 * commits have other parents than the graph records.
 */
static bool commit_graph_allowed(struct repository *repo)
{
	struct stat st;
	char *path;
	bool ok;
	if (!env_true("GIT_TEST_COMMIT_GRAPH") &&
	    !config_get_bool_or(&repo->config, "core.commitgraph", true))
		return false;
	path = repo_shallow_path(repo);
	ok = !path || stat(path, &st) || !st.st_size;
	free(path);
	path = xstrfmt("%s/info/grafts", repo->commondir);
	if (ok && !access(path, F_OK))
		ok = false;
	free(path);
	return ok;
}

int repo_open_commit_graph(struct repository *repo, struct odb *odb,
			   struct commit_graph **out, struct gp_error *err)
{
	int ret;
	*out = NULL;
	if (!commit_graph_allowed(repo))
		return 0;
	ret = commit_graph_open_odb(out, odb, 0, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		ret = 0;
	}
	return ret;
}

int repo_commit_graph(struct repository *repo, const struct commit_graph **out,
		      struct gp_error *err)
{
	int ret = 0;
	if (!repo->graph_checked) {
		repo->graph_checked = true;
		repo->graph_allowed = commit_graph_allowed(repo);
		if (repo->graph_allowed && repo->graph &&
		    !commit_graph_is_current(repo->graph, repo->objdir)) {
			commit_graph_free(repo->graph);
			repo->graph = NULL;
		}
		if (repo->graph_allowed && !repo->graph) {
			struct odb *odb;
			/* the alternates say where else the graph may be */
			ret = repo_odb(repo, &odb, err);
			if (!ret)
				ret = commit_graph_open_odb(&repo->graph, odb, 0, err);
			if (ret == GP_ENOTFOUND) {
				gp_error_clear(err);
				ret = 0;
			}
		}
	}
	*out = repo->graph_allowed ? repo->graph : NULL;
	return ret;
}

void repo_attach_commit_graph(struct repository *repo, struct commit_graph *graph)
{
	commit_graph_free(repo->graph);
	repo->graph = graph;
	repo->graph_checked = false;
}

struct commit_graph *repo_detach_commit_graph(struct repository *repo)
{
	struct commit_graph *g = repo->graph;
	repo->graph = NULL;
	repo->graph_checked = false;
	return g;
}

char *repo_shallow_path(const struct repository *repo)
{
	if (repo->shallow_file)
		return *repo->shallow_file ? xstrdup(repo->shallow_file) : NULL;
	return repo_git_path(repo, "shallow");
}

void repo_free(struct repository *repo)
{
	if (!repo)
		return;
	odb_free(repo->odb);
	commit_graph_free(repo->graph);
	ref_store_free(repo->refs);
	config_set_release(&repo->config);
	free(repo->gitdir);
	free(repo->gitdir_spelled);
	free(repo->commondir);
	free(repo->objdir);
	free(repo->worktree);
	free(repo->shallow_file);
	free(repo->promisor);
	free(repo->work_dir);
	oidset_release(&repo->lazy_fetched);
	free(repo);
}

char *repo_git_path(const struct repository *repo, const char *rel)
{
	return xstrfmt("%s/%s", repo->gitdir, rel);
}

char *repo_obj_path(const struct repository *repo, const char *rel)
{
	return xstrfmt("%s/%s", repo->objdir, rel);
}

/* Whether cwd is strictly inside dir (not dir itself). */
static bool is_below(const char *cwd, const char *dir)
{
	size_t len = strlen(dir);
	if (len == 1 && dir[0] == '/')
		return cwd[1] != '\0';
	return !strncmp(cwd, dir, len) && cwd[len] == '/';
}

/*
 * The local object directory as git names it in messages: git works
 * from the top of the work tree with ".git" as its directory, or from
 * inside the git directory as ".", and otherwise uses what it was given
 * ($GIT_DIR, $GIT_OBJECT_DIRECTORY) or found (an absolute path). A
 * relative $GIT_DIR becomes absolute when git moves to the top of a
 * $GIT_WORK_TREE from below it.
 */
char *repo_objdir_shown(const struct repository *repo)
{
	const char *env = getenv("GIT_OBJECT_DIRECTORY");
	char *cwd = NULL, *own = xstrfmt("%s/objects", repo->gitdir), *shown = NULL;
	if (env && *env) {
		shown = xstrdup(env);
		goto out;
	}
	if (strcmp(repo->objdir, own))
		goto out;
	cwd = realpath(".", NULL);
	if (!cwd)
		goto out;
	env = getenv("GIT_DIR");
	if (env && *env) {
		if (env[0] == '/' || !getenv("GIT_WORK_TREE") || !repo->worktree ||
		    !is_below(cwd, repo->worktree))
			shown = xstrfmt("%s/objects", env);
		goto out;
	}
	if (repo->worktree) {
		char *dotgit = xstrfmt("%s/.git", repo->worktree);
		if (!strcmp(repo->gitdir, dotgit) &&
		    (!strcmp(cwd, repo->worktree) || is_below(cwd, repo->worktree)))
			shown = xstrdup(".git/objects");
		free(dotgit);
	}
	if (!shown && !strcmp(cwd, repo->gitdir))
		shown = xstrdup("./objects");
out:
	free(cwd);
	free(own);
	return shown ? shown : xstrdup(repo->objdir);
}
