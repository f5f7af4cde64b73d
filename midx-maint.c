/*
 * midx-maint.c: multi-pack-index expire and repack (see midx-maint.h).
 */
#include "midx-maint.h"
#include "error.h"
#include "hash.h"
#include "midx.h"
#include "midx-write.h"
#include "pack-remove.h"
#include "pack-write.h"
#include "packfile.h"
#include "progress.h"
#include <sys/stat.h>

static int open_lone(struct midx **m, const char *pack_dir, int algo, const char *what,
		     struct gp_error *err)
{
	int ret = midx_open(m, pack_dir, algo, err);
	if (ret)
		return ret;
	if (midx_is_chain(*m)) {
		midx_free(*m);
		*m = NULL;
		return gp_error_set(err, GP_EINVAL, "cannot %s an incremental multi-pack-index", what);
	}
	return 0;
}

static void note_warnings(struct midx_maint_result *result, const struct midx_write_result *w)
{
	result->preferred_unknown |= w->preferred_unknown;
	result->old_corrupt |= w->old_corrupt;
}

int midx_expire(const char *pack_dir, int algo, const struct midx_maint_opts *opts,
		struct midx_maint_result *result, struct gp_error *err)
{
	struct midx *m = NULL;
	uint32_t *counts = NULL;
	const char **drop = NULL;
	size_t nr_drop = 0;
	struct progress *progress;
	int ret = open_lone(&m, pack_dir, algo, "expire packs from", err);

	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		return 0;
	}
	if (ret)
		return ret;
	counts = xcalloc(midx_nr_packs(m) + 1, sizeof(*counts));
	progress = progress_start("Counting referenced objects", midx_nr_objects(m), opts->progress);
	for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++) {
		counts[midx_nth_pack(m, pos)]++;
		progress_update(progress, pos + 1);
	}
	progress_stop(&progress);
	drop = xcalloc(midx_nr_packs(m) + 1, sizeof(*drop));
	progress = progress_start("Finding and deleting unreferenced packfiles", midx_nr_packs(m),
				  opts->progress);
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		progress_update(progress, id + 1);
		if (!counts[id] && pack_may_remove(pack_dir, midx_pack_name(m, id), 0))
			drop[nr_drop++] = midx_pack_name(m, id);
	}
	if (nr_drop) {
		struct midx_write_opts wopts = MIDX_WRITE_OPTS_INIT;
		struct midx_write_result wres;
		wopts.drop_packs = drop;
		wopts.nr_drop = nr_drop;
		wopts.version = opts->version;
		/* The new MIDX is durable before any pack it no longer lists goes. */
		ret = midx_write(pack_dir, algo, &wopts, &wres, err);
		note_warnings(result, &wres);
		midx_write_result_release(&wres);
		for (size_t i = 0; !ret && i < nr_drop; i++) {
			struct gp_error rerr = GP_ERROR_INIT;
			if (pack_remove(pack_dir, drop[i], &rerr) && !ret)
				ret = gp_error_set(err, GP_EIO, "%s", gp_error_msg(&rerr));
			gp_error_clear(&rerr);
			result->nr_expired++;
		}
	}
	progress_stop(&progress);
	free(drop);
	free(counts);
	midx_free(m);
	return ret;
}

struct batch_pack {
	uint32_t id;
	struct packed_git *p;
	uint64_t mtime;
	uint32_t selected;      /* objects the MIDX takes from this pack */
	bool cruft;
	bool chosen;
};

static int cmp_oldest(const void *a, const void *b)
{
	const struct batch_pack *pa = a, *pb = b;
	if (pa->mtime != pb->mtime)
		return pa->mtime < pb->mtime ? -1 : 1;
	return pa->id < pb->id ? -1 : pa->id > pb->id;
}

static bool batch_wanted(const struct batch_pack *bp, const struct midx_maint_opts *opts)
{
	if (!bp->p || (bp->p->is_keep && !opts->pack_kept_objects) || bp->cruft)
		return false;
	return bp->p->nr_objects != 0;
}

static int cmp_copy_offset(const void *a, const void *b)
{
	const struct pack_copy_entry *ea = a, *eb = b;
	return ea->ofs < eb->ofs ? -1 : ea->ofs > eb->ofs;
}

/* Sort each pack's run of entries (runs are contiguous) by offset. */
static void sort_copy_entries(struct pack_copy_entry *entries, uint32_t nr)
{
	uint32_t start = 0;
	while (start < nr) {
		uint32_t end = start + 1;
		while (end < nr && entries[end].pack == entries[start].pack)
			end++;
		qsort(entries + start, end - start, sizeof(*entries), cmp_copy_offset);
		start = end;
	}
}

/* git's expected size: to four significant digits, rounded. */
static uint64_t expected_size(const struct batch_pack *bp)
{
	uint64_t scaled = ((uint64_t)bp->selected << 14) / bp->p->nr_objects;
	unsigned __int128 size = (unsigned __int128)scaled * bp->p->pack_size + (1u << 13);
	size >>= 14;
	return size > UINT64_MAX ? UINT64_MAX : (uint64_t)size;
}

/* The batch, in place in packs (sorted oldest first); the number taken. */
static uint32_t choose_batch(struct batch_pack *packs, uint32_t nr,
			     const struct midx_maint_opts *opts)
{
	uint64_t total = 0;
	uint32_t nr_chosen = 0;
	qsort(packs, nr, sizeof(*packs), cmp_oldest);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t size;
		if (!batch_wanted(&packs[i], opts))
			continue;
		if (opts->batch_size) {
			if (total >= opts->batch_size)
				break;
			size = expected_size(&packs[i]);
			if (size >= opts->batch_size)
				continue;
			total = total + size < total ? UINT64_MAX : total + size;
		}
		packs[i].chosen = true;
		nr_chosen++;
	}
	return nr_chosen;
}

int midx_repack(const char *pack_dir, int algo, const struct midx_maint_opts *opts,
		struct midx_maint_result *result, struct gp_error *err)
{
	struct midx *m = NULL;
	struct batch_pack *packs = NULL, **by_id = NULL;
	struct pack_copy_entry *entries = NULL;
	uint32_t nr_packs, nr_entries = 0;
	int ret = open_lone(&m, pack_dir, algo, "repack", err);

	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		return 0;
	}
	if (ret)
		return ret;
	nr_packs = midx_nr_packs(m);
	packs = xcalloc(nr_packs + 1, sizeof(*packs));
	by_id = xcalloc(nr_packs + 1, sizeof(*by_id));
	for (uint32_t id = 0; id < nr_packs; id++) {
		const char *name = midx_pack_name(m, id);
		char *idx = xstrfmt("%s/%s", pack_dir, name);
		char *mtimes = xstrfmt("%s/%.*s.mtimes", pack_dir, (int)(strlen(name) - 4), name);
		struct gp_error ignored = GP_ERROR_INIT;
		packs[id].id = id;
		/* As git: a pack that does not load is left out of the batch. */
		if (pack_open_idx(&packs[id].p, idx, algo, &ignored) ||
		    pack_open_pack(packs[id].p, &ignored)) {
			pack_free(packs[id].p);
			packs[id].p = NULL;
		} else {
			/* git orders by the .pack's mtime */
			struct stat st;
			char *pack = xstrfmt("%.*s.pack", (int)(strlen(idx) - 4), idx);
			packs[id].mtime = stat(pack, &st) ? 0 : (uint64_t)st.st_mtime;
			free(pack);
		}
		packs[id].cruft = !access(mtimes, F_OK);
		gp_error_clear(&ignored);
		free(idx);
		free(mtimes);
	}
	for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++)
		packs[midx_nth_pack(m, pos)].selected++;

	result->nr_repacked = choose_batch(packs, nr_packs, opts);
	if (result->nr_repacked > 1) {
		struct midx_write_opts wopts = MIDX_WRITE_OPTS_INIT;
		struct midx_write_result wres;
		struct pack_reader *reader = pack_reader_new(0);
		struct progress *progress;
		uint32_t *start = xcalloc((size_t)nr_packs + 1, sizeof(*start));

		for (uint32_t i = 0; i < nr_packs; i++)
			by_id[packs[i].id] = &packs[i];
		/* By pack id, then offset: each source pack's locality is kept. */
		for (uint32_t id = 0; id < nr_packs; id++)
			start[id + 1] = start[id] + (by_id[id]->chosen ? by_id[id]->selected : 0);
		nr_entries = start[nr_packs];
		entries = xmalloc(sizeof(*entries) * (nr_entries ? nr_entries : 1));
		for (uint32_t pos = 0; pos < midx_nr_objects(m); pos++) {
			uint32_t id = midx_nth_pack(m, pos);
			if (!by_id[id]->chosen)
				continue;
			entries[start[id]].pack = by_id[id]->p;
			entries[start[id]].ofs = midx_nth_offset(m, pos);
			start[id]++;
		}
		free(start);
		sort_copy_entries(entries, nr_entries);
		progress = progress_start("Writing objects", nr_entries, opts->progress);
		ret = pack_write_by_copy(pack_dir, algo, entries, nr_entries, reader, progress,
					 result->new_pack, err);
		progress_stop(&progress);
		pack_reader_free(reader);
		/* The new pack joins the MIDX; expire removes the old ones later. */
		wopts.progress = opts->progress;
		wopts.version = opts->version;
		if (!ret) {
			ret = midx_write(pack_dir, algo, &wopts, &wres, err);
			note_warnings(result, &wres);
			midx_write_result_release(&wres);
		}
	} else {
		result->nr_repacked = 0;
	}
	for (uint32_t id = 0; id < nr_packs; id++)
		pack_free(packs[id].p);
	free(packs);
	free(by_id);
	free(entries);
	midx_free(m);
	return ret;
}
