/*
 * repack-bitmap.c: what repack and multi-pack-index write tell the
 * bitmap writer, read from the repository (config, refs, the
 * commit-graph), and the MIDX installed once its bitmap is durable
 * (repack-bitmap.h). pack-bitmap-write.c itself knows no repository.
 */
#include "repack-bitmap.h"
#include "commit-graph.h"
#include "config.h"
#include "error.h"
#include "midx.h"
#include "midx-write.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "pack-bitmap-write.h"
#include "packfile.h"
#include "pseudo-merge.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"

#include <time.h>

/* ---- tips ---------------------------------------------------------- */

struct tip_list {
	struct bitmap_write_tip *tips;
	size_t nr, alloc;
	const struct config_set *config;
};

static void add_write_tip(struct tip_list *tl, const struct object_id *oid, bool preferred)
{
	ALLOC_GROW(tl->tips, tl->nr + 1, tl->alloc);
	tl->tips[tl->nr].oid = *oid;
	tl->tips[tl->nr++].preferred = preferred;
}

/*
 * git reads a pack.preferBitmapTips value as a hierarchy: "refs/tags"
 * and "refs/tags/" both mean the refs below refs/tags/, and a full ref
 * name matches only the refs below it, not itself.
 */
static bool ref_in_hierarchy(const char *refname, const char *prefix)
{
	size_t len = strlen(prefix);
	if (strncmp(refname, prefix, len))
		return false;
	return (len && prefix[len - 1] == '/') || refname[len] == '/';
}

static int add_ref_tip(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct tip_list *tl = data;
	bool preferred = false;
	for (size_t i = 0; i < tl->config->nr && !preferred; i++) {
		const struct config_entry *e = &tl->config->items[i];
		if (!strcasecmp(e->key, "pack.preferbitmaptips") && e->value)
			preferred = ref_in_hierarchy(refname, e->value);
	}
	add_write_tip(tl, oid, preferred);
	return 0;
}

int bitmap_tips_from_refs(struct repository *repo, struct bitmap_write_tip **tips,
			  size_t *nr, struct gp_error *err)
{
	struct tip_list tl = { NULL, 0, 0, &repo->config };
	struct gp_error no_head = GP_ERROR_INIT;
	struct object_id head;
	int ret = refs_for_each(repo, "", add_ref_tip, &tl, err);
	if (ret) {
		free(tl.tips);
		return ret;
	}
	/*
	 * HEAD's commit always gets a bitmap: it is what most fetches ask
	 * for, and what "git rev-list --test-bitmap HEAD" checks. (Among
	 * many tips, the date windows could pass it over.)
	 */
	if (!refs_resolve(repo, "HEAD", &head, NULL, &no_head))
		add_write_tip(&tl, &head, true);
	gp_error_clear(&no_head);
	*tips = tl.tips;
	*nr = tl.nr;
	return 0;
}

int bitmap_tips_from_snapshot(const char *path, int algo, struct bitmap_write_tip **tips,
			      size_t *nr, struct gp_error *err)
{
	struct tip_list tl = { NULL, 0, 0, NULL };
	struct strbuf line = STRBUF_INIT;
	size_t line_nr = 0;
	int ret = 0;
	FILE *fp = fopen(path, "r");
	if (!fp)
		return gp_error_errno(err, "could not open refs snapshot '%s'", path);
	while (strbuf_getline(&line, fp)) {
		const char *hex = line.buf;
		struct object_id oid;
		bool preferred = *hex == '+';
		line_nr++;
		if (preferred)
			hex++;
		if (parse_oid_hex_exact(hex, algo, &oid)) {
			ret = CORRUPT(err, "%s: line %zu is not an object id: %s", path, line_nr,
				      line.buf);
			break;
		}
		add_write_tip(&tl, &oid, preferred);
	}
	strbuf_release(&line);
	fclose(fp);
	if (ret) {
		free(tl.tips);
		return ret;
	}
	*tips = tl.tips;
	*nr = tl.nr;
	return 0;
}

/* A boolean from the config, dflt when unset; a bad value is an error. */
static int config_bool_or(struct repository *repo, const char *key, bool dflt,
			  bool *out, struct gp_error *err)
{
	int ret = config_get_bool(&repo->config, key, out, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		*out = dflt;
		return 0;
	}
	return ret;
}

int bitmap_pseudo_merges_from_repo(struct repository *repo, struct pseudo_merge_config *cfg,
				   struct pseudo_merge_ref **refs, size_t *nr_refs,
				   struct gp_error *err)
{
	int ret = pseudo_merge_config_read(cfg, &repo->config, (int64_t)time(NULL), err);
	*refs = NULL;
	*nr_refs = 0;
	if (!ret)
		ret = pseudo_merge_collect_refs(repo, cfg, refs, nr_refs, err);
	return ret;
}

/*
 * The commit-graph of objdir for the commit walk, or NULL: none, a
 * damaged one (the commits are read instead), or one that may not be
 * used (repo_open_commit_graph()).
 */
static struct commit_graph *open_graph(struct repository *repo, struct odb *odb)
{
	struct gp_error ignored = GP_ERROR_INIT;
	struct commit_graph *g = NULL;
	if (repo_open_commit_graph(repo, odb, &g, &ignored))
		g = NULL;
	gp_error_clear(&ignored);
	return g;
}

int bitmap_write_for_pack_file(struct repository *repo, const char *idx_path,
			       int threads, bool progress, struct gp_error *err)
{
	struct bitmap_write_opts opts = { 0 };
	struct bitmap_write_stats stats = { 0 };
	struct bitmap_write_tip *tips = NULL;
	struct bitmap_order *order = NULL;
	struct commit_graph *graph = NULL;
	struct packed_git *p = NULL;
	struct pseudo_merge_config pseudo = PSEUDO_MERGE_CONFIG_INIT;
	struct pseudo_merge_ref *pseudo_refs = NULL;
	size_t nr_pseudo_refs = 0;
	struct odb *odb;
	size_t nr_tips = 0;
	int ret = repo_odb(repo, &odb, err);

	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaphashcache", true, &opts.hash_cache, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaplookuptable", true, &opts.lookup_table, err);
	if (!ret)
		ret = pack_open_idx(&p, idx_path, repo->hash_algo, err);
	if (!ret)
		ret = pack_open_pack(p, err);
	if (!ret)
		ret = bitmap_order_for_pack(&order, p, err);
	if (!ret)
		ret = bitmap_tips_from_refs(repo, &tips, &nr_tips, err);
	if (!ret)
		ret = bitmap_pseudo_merges_from_repo(repo, &pseudo, &pseudo_refs, &nr_pseudo_refs, err);
	if (!ret) {
		opts.tips = tips;
		opts.nr_tips = nr_tips;
		opts.threads = threads;
		opts.progress = progress;
		opts.pseudo_merges = &pseudo;
		opts.pseudo_refs = pseudo_refs;
		opts.nr_pseudo_refs = nr_pseudo_refs;
		opts.graph = graph = open_graph(repo, odb);
		ret = bitmap_write(order, odb, &opts, &stats, err);
	}
	commit_graph_free(graph);
	bitmap_order_free(order);
	pack_free(p);
	free(tips);
	pseudo_merge_refs_free(pseudo_refs, nr_pseudo_refs);
	pseudo_merge_config_release(&pseudo);
	return ret;
}

int midx_write_bitmap(struct repository *repo, const char *objdir,
		      struct midx_write_result *result, const char *refs_snapshot,
		      bool progress, struct gp_error *err)
{
	struct bitmap_write_opts opts = { 0 };
	struct bitmap_write_stats stats;
	struct bitmap_write_tip *tips = NULL;
	size_t nr_tips = 0;
	struct bitmap_order *order = NULL;
	struct bitmap_index *existing = NULL;
	struct pseudo_merge_config pseudo = PSEUDO_MERGE_CONFIG_INIT;
	struct pseudo_merge_ref *pseudo_refs = NULL;
	size_t nr_pseudo_refs = 0;
	struct midx *m = NULL;
	struct odb *odb = NULL;
	struct commit_graph *graph = NULL;
	char *path = NULL;
	int algo = repo->hash_algo;
	int ret = 0;

	if (result->no_objects)
		goto out; /* git: "refusing to write multi-pack .bitmap without any objects" */
	ret = odb_open(&odb, objdir, algo, err);
	if (!ret && result->pending_path) {
		ret = midx_open_layer(&m, result->pending_path, result->pending_base, algo, err);
		if (!ret)
			ret = bitmap_order_for_midx_file(&order, odb, m, err);
	} else if (!ret) {
		ret = bitmap_order_for_midx(&order, odb, err);
		/* Same MIDX, valid bitmap: nothing to do (as git). */
		if (!ret) {
			struct gp_error ignored = GP_ERROR_INIT;
			path = bitmap_order_bitmap_path(order);
			if (!bitmap_index_open(&existing, odb, &ignored) &&
			    !strcmp(bitmap_index_path(existing), path))
				goto out;
			gp_error_clear(&ignored);
		}
	}
	if (!ret)
		ret = refs_snapshot
			? bitmap_tips_from_snapshot(refs_snapshot, algo, &tips, &nr_tips, err)
			: bitmap_tips_from_refs(repo, &tips, &nr_tips, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaphashcache", true, &opts.hash_cache, err);
	if (!ret)
		ret = config_bool_or(repo, "pack.writebitmaplookuptable", true, &opts.lookup_table, err);
	if (!ret)
		ret = bitmap_pseudo_merges_from_repo(repo, &pseudo, &pseudo_refs, &nr_pseudo_refs, err);
	if (!ret) {
		opts.tips = tips;
		opts.nr_tips = nr_tips;
		opts.progress = progress;
		opts.pseudo_merges = &pseudo;
		opts.pseudo_refs = pseudo_refs;
		opts.nr_pseudo_refs = nr_pseudo_refs;
		if (m && midx_is_chain(m)) {
			/* A layer: the bitmaps of the layers below stay as they are. */
			opts.base_objects = midx_nr_objects_in_base(m);
		}
		opts.graph = graph = open_graph(repo, odb);
		ret = bitmap_write(order, odb, &opts, &stats, err);
		if (ret == GP_ENOTFOUND && result->bitmap_optional) {
			gp_error_clear(err);
			result->bitmap_skipped = true;
			ret = 0;
		} else if (ret) {
			gp_error_prefix(err, "could not write multi-pack bitmap");
		}
	}
	if (!ret)
		ret = midx_write_install(result, err);
	if (ret)
		midx_write_abort(result);
out:
	commit_graph_free(graph);
	free(path);
	bitmap_index_free(existing);
	bitmap_order_free(order);
	midx_free(m);
	odb_free(odb);
	free(tips);
	pseudo_merge_refs_free(pseudo_refs, nr_pseudo_refs);
	pseudo_merge_config_release(&pseudo);
	return ret;
}

