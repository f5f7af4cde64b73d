/*
 * pack-for-fetch.c: see pack-for-fetch.h.
 */
#include "pack-for-fetch.h"
#include "config.h"
#include "error.h"
#include "object-filter.h"
#include "oidset.h"
#include "pack-bitmap.h"
#include "progress.h"
#include "refs.h"
#include "repository.h"
#include "revision.h"
#include "trace2.h"
#include "walk-filter.h"

/* key's integer into *out when set; GP_EINVAL for a malformed one. */
static int config_int(struct repository *repo, const char *key, int *out, struct gp_error *err)
{
	int ret = config_get_int(&repo->config, key, out, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		return 0;
	}
	return ret;
}

int pack_for_fetch_config(struct repository *repo, struct pack_for_fetch *req,
			  struct gp_error *err)
{
	struct pack_objects_opts dflt = PACK_OBJECTS_OPTS_INIT;
	unsigned long big = 0;
	int level = INT_MIN, ret;

	req->opts = dflt;
	if ((ret = config_int(repo, "pack.window", &req->opts.window, err)) ||
	    (ret = config_int(repo, "pack.depth", &req->opts.depth, err)) ||
	    (ret = config_int(repo, "pack.threads", &req->opts.threads, err)) ||
	    (ret = config_int(repo, "pack.compression", &level, err)))
		return ret;
	if (level == INT_MIN && (ret = config_int(repo, "core.compression", &level, err)))
		return ret;
	if (level != INT_MIN) {
		if (level < -1 || level > 9)
			return gp_error_set(err, GP_EINVAL, "bad pack compression level %d", level);
		req->opts.compression = level;
	}
	if (req->opts.depth > 4095)
		req->opts.depth = 4095;
	ret = config_get_ulong(&repo->config, "core.bigfilethreshold", &big, err);
	if (ret && ret != GP_ENOTFOUND)
		return ret;
	gp_error_clear(err);
	req->opts.big_file_threshold = ret ? 0 : big;
	req->use_bitmaps = config_get_bool_or(&repo->config, "pack.usebitmaps", true);
	if ((ret = pack_reuse_config(&repo->config, &req->reuse, err)))
		return ret;
	req->sparse = config_get_bool_or(&repo->config, "pack.usesparse", true);
	return 0;
}

static size_t nr_shallow(const struct pack_for_fetch *req)
{
	return req->shallow ? oidset_size(req->shallow) : 0;
}

/* Count with bitmaps when the request allows it: 0 done, 1 the walk must. */
static int count_with_bitmaps(struct pack_objects *po, struct odb *odb,
			      const struct pack_for_fetch *req, struct bitmap_index **bi_out,
			      struct bitmap_result **res_out, struct gp_error *err)
{
	struct bitmap_tip *tips;
	size_t nr = 0;
	int ret;

	if (!req->use_bitmaps || nr_shallow(req) || req->allow_missing ||
	    (req->filter && req->filter->kind != OBJECT_FILTER_NONE))
		return 1;
	tips = xcalloc(req->nr_wants + req->nr_haves + 1, sizeof(*tips));
	for (size_t i = 0; i < req->nr_wants; i++)
		tips[nr++].oid = req->wants[i];
	for (size_t i = 0; i < req->nr_haves; i++) {
		tips[nr].oid = req->haves[i];
		tips[nr++].uninteresting = true;
	}
	ret = pack_objects_count_bitmapped(po, odb, tips, nr, req->reuse, req->thin, req->progress,
					   bi_out, res_out, err);
	free(tips);
	return ret;
}

static int count_with_walk(struct repository *repo, struct pack_objects *po, struct odb *odb,
			   const struct pack_for_fetch *req, struct gp_error *err)
{
	struct pack_objects_filter keep_all = { 0 };
	struct walk_filter *wf = NULL;
	struct rev_walk *walk;
	int ret = 0;

	if (req->filter && req->filter->kind != OBJECT_FILTER_NONE &&
	    (ret = walk_filter_new(&wf, req->filter, repo, odb, NULL, err)))
		return ret;
	rev_walk_new(&walk, odb, repo->hash_algo);
	if (req->graph)
		rev_walk_set_commit_graph(walk, req->graph);
	for (size_t i = 0; !ret && i < req->nr_wants; i++)
		ret = rev_walk_add_tip(walk, &req->wants[i], false, "", err);
	for (size_t i = 0; !ret && i < req->nr_haves; i++) {
		ret = rev_walk_add_tip(walk, &req->haves[i], true, "", err);
		/* a have we lack was never acknowledged; nothing to mark */
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			ret = 0;
		}
	}
	if (!ret) {
		if (nr_shallow(req)) {
			rev_walk_set_shallow(walk, req->shallow);
			rev_walk_set_edge_aggressive(walk);
		}
		rev_walk_set_sparse(walk, req->sparse);
		if (req->allow_missing)
			rev_walk_set_missing(walk, REV_MISSING_ALLOW, NULL, NULL);
		else
			rev_walk_set_blobs_unchecked(walk);
		if (wf)
			rev_walk_set_filter(walk, wf, 0);
		ret = pack_objects_add_walk(po, walk, &keep_all, err);
	}
	if (!ret && req->thin)
		ret = pack_objects_add_thin_bases(po, walk, err);
	rev_walk_free(walk);
	walk_filter_free(wf);
	return ret;
}

static int include_tag_ref(const char *refname, const struct object_id *oid,
			   const struct object_id *peeled, unsigned flags, void *data)
{
	struct pack_objects *po = data;
	struct gp_error err = GP_ERROR_INIT;
	/* a damaged tag is not worth failing the fetch for: it is just not included */
	pack_objects_include_tag(po, oid, &err);
	gp_error_clear(&err);
	return 0;
}

int pack_for_fetch_write(struct repository *repo, struct odb *odb,
			 const struct pack_for_fetch *req, hashfile_out_fn *out, void *data,
			 struct pack_objects_stats *stats, struct gp_error *err)
{
	struct pack_objects_opts opts = req->opts;
	struct bitmap_index *bi = NULL;
	struct bitmap_result *res = NULL;
	struct pack_objects *po;
	int ret;

	opts.delta_base_offset = req->ofs_delta;
	opts.progress = req->progress;
	opts.no_write_progress = true;
	opts.max_pack_size = 0;
	if ((ret = pack_objects_new(&po, odb, &opts)))
		return gp_error_set(err, ret, "cannot start a pack");
	ret = count_with_bitmaps(po, odb, req, &bi, &res, err);
	if (ret == 1)
		ret = count_with_walk(repo, po, odb, req, err);
	if (!ret && req->include_tag)
		ret = refs_for_each(repo, "refs/tags/", include_tag_ref, po, err);
	if (!ret)
		ret = pack_objects_write_fn(po, out, data, err);
	if (!ret && stats)
		pack_objects_stats(po, stats);
	pack_objects_free(po);
	bitmap_result_free(res);
	bitmap_index_free(bi);
	return ret;
}
