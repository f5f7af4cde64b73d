/*
 * reachable.c: see reachable.h.
 */
#include "reachable.h"
#include "error.h"
#include "index-file.h"
#include "loose.h"
#include "odb.h"
#include "object.h"
#include "refs.h"
#include "run-command.h"
#include "repository.h"
#include "revision.h"
#include "strbuf.h"
#include <dirent.h>

struct tip_ctx {
	struct repository *repo;
	struct rev_walk *walk;
	struct gp_error *err;
};

static int add_tip(struct tip_ctx *tc, const struct object_id *oid, const char *path)
{
	int ret = rev_walk_add_tip(tc->walk, oid, false, path, tc->err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(tc->err);
		ret = 0;
	}
	return ret;
}

static int reflog_tip(const struct object_id *oid, void *data)
{
	return add_tip(data, oid, "");
}

static int index_tip(const struct object_id *oid, enum object_type type, const char *path,
		     void *data)
{
	return add_tip(data, oid, path);
}

/* A tree a sparse index implies is stored, as git's expansion of the index stores it. */
static int index_tree(const struct object_id *oid, const unsigned char *content, size_t len,
		      void *data)
{
	struct tip_ctx *tc = data;
	struct object_id written;
	struct odb *odb;
	int ret = repo_odb(tc->repo, &odb, tc->err);
	if (ret || odb_has_object(odb, oid))
		return ret;
	return loose_write(tc->repo->objdir, tc->repo->hash_algo, OBJ_TREE, content, len,
			   &written, tc->err);
}

/*
 * A linked worktree's HEAD, when it is detached (a branch is a ref
 * already). One that cannot be read holds nothing; a corrupt reftable
 * stack stops the walk rather than lose what it may hold.
 */
static int worktree_head(struct tip_ctx *tc, const char *wt_gitdir)
{
	struct gp_error sub = GP_ERROR_INIT;
	struct object_id oid;
	int ret = refs_read_worktree_head(tc->repo, wt_gitdir, &oid, &sub);
	if (!ret)
		ret = add_tip(tc, &oid, "");
	else if (ret == GP_ENOTFOUND)
		ret = 0;
	else
		gp_error_move(tc->err, &sub);
	gp_error_clear(&sub);
	return ret;
}

int reachable_add_tips(struct repository *repo, struct rev_walk *walk, unsigned flags,
		       struct gp_error *err)
{
	struct tip_ctx tc = { .repo = repo, .walk = walk, .err = err };
	const struct index_visitor visitor = { .object = index_tip, .store_tree = index_tree,
					       .data = &tc };
	char *path, *dir;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (flags & REACH_REFLOGS)
		ret = refs_for_each_reflog_oid(repo, reflog_tip, &tc, err);
	if (!ret && (flags & REACH_INDEXES)) {
		path = xstrfmt("%s/index", repo->commondir);
		ret = index_file_for_each_object(path, repo->hash_algo, &visitor, err);
		free(path);
	}
	dir = xstrfmt("%s/worktrees", repo->commondir);
	d = opendir(dir);
	while (!ret && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (flags & REACH_INDEXES) {
			path = xstrfmt("%s/%s/index", dir, de->d_name);
			ret = index_file_for_each_object(path, repo->hash_algo, &visitor, err);
			free(path);
		}
		if (!ret && (flags & REACH_WORKTREE_HEADS)) {
			path = xstrfmt("%s/%s", dir, de->d_name);
			ret = worktree_head(&tc, path);
			free(path);
		}
	}
	if (d)
		closedir(d);
	free(dir);
	return ret;
}

int reachable_recent_hook_tips(struct repository *repo, struct object_id **out,
			       size_t *nr_out, struct gp_error *err)
{
	struct strbuf output = STRBUF_INIT;
	size_t alloc = 0;
	int ret = 0;

	*out = NULL;
	*nr_out = 0;
	for (size_t i = 0; i < repo->config.nr && !ret; i++) {
		const struct config_entry *e = &repo->config.items[i];
		char *line, *next;
		if (strcmp(e->key, "gc.recentobjectshook") || !e->value || !*e->value)
			continue;
		strbuf_reset(&output);
		ret = run_shell_capture(repo->work_dir, e->value, NULL, NULL, 0, &output, err);
		if (ret)
			break;
		for (line = output.buf; !ret && *line; line = next) {
			struct object_id oid;
			next = strchrnul(line, '\n');
			if (*next)
				*next++ = '\0';
			if (parse_oid_hex_exact(line, repo->hash_algo, &oid)) {
				ret = gp_error_set(err, GP_EINVAL, "invalid extra cruft tip: '%s'", line);
				break;
			}
			ALLOC_GROW(*out, *nr_out + 1, alloc);
			(*out)[(*nr_out)++] = oid;
		}
	}
	strbuf_release(&output);
	if (ret) {
		free(*out);
		*out = NULL;
		*nr_out = 0;
		gp_error_prefix(err, "unable to enumerate additional recent objects");
		err->code = GP_EIO;
		return GP_EIO;
	}
	return 0;
}
