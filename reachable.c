/*
 * reachable.c: see reachable.h.
 */
#include "reachable.h"
#include "error.h"
#include "index-file.h"
#include "object.h"
#include "refs.h"
#include "repository.h"
#include "revision.h"
#include "strbuf.h"
#include <dirent.h>

struct tip_ctx {
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

/* A linked worktree's HEAD, when it is detached (a branch is a ref already). */
static int worktree_head(struct tip_ctx *tc, const char *path, int algo)
{
	struct strbuf sb = STRBUF_INIT;
	struct object_id oid;
	int ret = 0;
	if (strbuf_read_file(&sb, path, 0) >= 0) {
		strbuf_trim(&sb);
		if (!parse_oid_hex_exact(sb.buf, algo, &oid))
			ret = add_tip(tc, &oid, "");
	}
	strbuf_release(&sb);
	return ret;
}

int reachable_add_tips(struct repository *repo, struct rev_walk *walk, unsigned flags,
		       struct gp_error *err)
{
	struct tip_ctx tc = { walk, err };
	char *path, *dir;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (flags & REACH_REFLOGS)
		ret = refs_for_each_reflog_oid(repo, reflog_tip, &tc, err);
	if (!ret && (flags & REACH_INDEXES)) {
		path = xstrfmt("%s/index", repo->commondir);
		ret = index_file_for_each_object(path, repo->hash_algo, index_tip, &tc, err);
		free(path);
	}
	dir = xstrfmt("%s/worktrees", repo->commondir);
	d = opendir(dir);
	while (!ret && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (flags & REACH_INDEXES) {
			path = xstrfmt("%s/%s/index", dir, de->d_name);
			ret = index_file_for_each_object(path, repo->hash_algo, index_tip, &tc, err);
			free(path);
		}
		if (!ret && (flags & REACH_WORKTREE_HEADS)) {
			path = xstrfmt("%s/%s/HEAD", dir, de->d_name);
			ret = worktree_head(&tc, path, repo->hash_algo);
			free(path);
		}
	}
	if (d)
		closedir(d);
	free(dir);
	return ret;
}
