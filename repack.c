/*
 * repack.c: see repack.h. The order of the steps is the crash-safety
 * argument: write everything new (pack, .rev, .idx, bitmap, MIDX), each
 * durable before the next; only then remove what it replaces.
 */
#include "repack.h"
#include "pack-remove.h"
#include "commit.h"
#include "error.h"
#include "loose.h"
#include "midx.h"
#include "midx-write.h"
#include "odb.h"
#include "delta-islands.h"
#include "pack-bitmap.h"
#include "pack-bitmap-write.h"
#include "repack-bitmap.h"
#include "pack-objects.h"
#include "packfile.h"
#include "reachable.h"
#include "shallow.h"
#include "stdin-packs.h"
#include "oidset.h"
#include "hashfile.h"
#include "refs.h"
#include "repository.h"
#include "revision.h"
#include "strbuf.h"
#include "trace2.h"
#include "tree.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct old_pack {
	struct packed_git *pack;
	bool kept;      /* .keep, --keep-pack, or .promisor: untouchable */
	bool replaced;  /* its objects go into the new pack; -d removes it */
	bool cruft;     /* a cruft pack (it has a .mtimes) */
	/*
	 * -a -d --write-midx=incremental: replaced, but a layer that stays
	 * lists it, so it is not removed (git's rule).
	 */
	bool retained;
};

struct repack {
	struct repository *repo;
	const struct repack_opts *opts;
	struct odb *odb;
	char *pack_dir;
	struct old_pack *packs;
	size_t nr_packs;
	struct pack_objects *po;   /* freed once the new packs are written */
	struct delta_islands *islands; /* -i: those of po, freed with it */
	struct pack_objects *po_promisor; /* geometric: promisor packs rolled up */
	struct oidset shallow;     /* the shallow file's commits */
	struct pack_objects_opts po_opts;
	struct packed_git **new_packs; /* their indexes, for what they hold */
	size_t nr_new_packs;
	/* gc.recentObjectsHook's names, asked before anything is written */
	struct object_id *recent;
	size_t nr_recent;
	/*
	 * Geometric: the progression's packs by object count (borrowed
	 * from odb) and how many of the smallest rolled up; the packs
	 * whose objects stay out of the new pack.
	 */
	struct packed_git **geo;
	size_t nr_geo, geo_split;
	struct packed_git **geo_exclude;
	size_t nr_geo_exclude;
	struct midx *midx;         /* the MIDX (or chain) before the repack, or NULL */
};

static int cmp_by_count(const void *va, const void *vb)
{
	const struct old_pack *a = va, *b = vb;
	if (a->pack->nr_objects != b->pack->nr_objects)
		return a->pack->nr_objects < b->pack->nr_objects ? -1 : 1;
	return strcmp(a->pack->pack_path, b->pack->pack_path);
}

static bool named_keep(const struct repack_opts *opts, const struct packed_git *p)
{
	const char *name = base_name(p->pack_path);
	for (size_t i = 0; i < opts->nr_keep_packs; i++)
		if (!strcmp(name, opts->keep_packs[i]))
			return true;
	return false;
}

static bool has_mtimes(const struct packed_git *p)
{
	size_t len = strlen(p->pack_path) - strlen(".pack");
	char *path = xstrfmt("%.*s.mtimes", (int)len, p->pack_path);
	bool ret = !access(path, F_OK);
	free(path);
	return ret;
}

static uint64_t pack_file_size(const struct packed_git *p)
{
	struct stat st;
	return stat(p->pack_path, &st) ? 0 : (uint64_t)st.st_size;
}

static void collect_packs(struct repack *r)
{
	r->packs = xcalloc(odb_nr_packs(r->odb) + 1, sizeof(*r->packs));
	for (size_t i = 0; i < odb_nr_packs(r->odb); i++) {
		struct packed_git *p = odb_pack(r->odb, i);
		struct old_pack *op;
		if (!odb_pack_is_local(r->odb, i))
			continue;
		op = &r->packs[r->nr_packs++];
		op->pack = p;
		op->kept = p->is_keep || p->is_promisor || named_keep(r->opts, p);
		op->cruft = has_mtimes(p);
		/* --combine-cruft-below-size: big cruft packs stay as they are. */
		/* (not when expiring: then every cruft pack is written again, as git) */
		if (op->cruft && r->opts->cruft && r->opts->combine_cruft_below_size &&
		    !r->opts->has_cruft_expiration &&
		    pack_file_size(p) >= r->opts->combine_cruft_below_size)
			op->kept = true;
	}
	qsort(r->packs, r->nr_packs, sizeof(*r->packs), cmp_by_count);
}

/*
 * How many of the smallest packs (sorted by object count, kept ones
 * left out) to roll up so that the packs stay a progression with
 * factor between neighbours. First the largest packs that already form
 * one stay; the pack at the break and all below it roll up; then, while
 * the rolled-up total would not be at most 1/factor of the next pack up,
 * that pack joins the roll-up too.
 */
static size_t geometric_split(const uint64_t *weights, size_t nr, uint64_t factor)
{
	size_t split = 0, i;
	uint64_t rolled = 0;
	for (i = nr; i > 1; i--)
		if (weights[i - 1] < factor * weights[i - 2])
			break;
	split = i > 1 ? i : 0;
	for (i = 0; i < split; i++)
		rolled += weights[i];
	while (split < nr && weights[split] < factor * rolled)
		rolled += weights[split++];
	return split;
}

/* How many of cands (sorted by object count) roll up, by geometric_split(). */
static size_t split_of(struct packed_git *const *cands, size_t nr, uint64_t factor)
{
	uint64_t *weights = xcalloc(nr + 1, sizeof(*weights));
	size_t split;
	for (size_t i = 0; i < nr; i++)
		weights[i] = cands[i]->nr_objects;
	split = geometric_split(weights, nr, factor);
	free(weights);
	return split;
}

/*
 * One geometric group: the first split packs of cands are added to po
 * (but the objects of the packs in exclude), and those that are local
 * are marked replaced.
 */
static int roll_up(struct odb *odb, struct pack_objects *po, struct packed_git **cands,
		   struct old_pack **owners,
		   size_t split, struct packed_git **exclude, size_t nr_exclude,
		   struct gp_error *err)
{
	/* As git's pack-objects --stdin-packs: a walk names the objects for the delta search. */
	struct stdin_packs_opts sp_opts = { .unpacked = false };
	struct stdin_packs *sp;
	int ret;
	for (size_t k = 0; k < split; k++)
		if (owners[k])
			owners[k]->replaced = true;
	stdin_packs_new(&sp);
	for (size_t k = 0; k < split; k++)
		stdin_packs_add(sp, base_name(cands[k]->pack_path), STDIN_PACK_INCLUDE);
	for (size_t k = 0; k < nr_exclude; k++)
		stdin_packs_add(sp, base_name(exclude[k]->pack_path), STDIN_PACK_EXCLUDE_CLOSED);
	ret = stdin_packs_add_objects(sp, odb, po, &sp_opts, NULL, err);
	stdin_packs_free(sp);
	return ret;
}

static bool in_old_midx(const struct repack *r, const struct packed_git *p);

/*
 * Whether p takes part in the geometric progression at all. With
 * --write-midx=incremental, of the packs a MIDX lists only those of
 * its top layer do, and only when that layer has at least
 * repack.midxNewLayerThreshold packs: the layers below stay as they
 * are, and a young top layer grows by layers on top of it first.
 */
static bool geometric_candidate(const struct repack *r, const struct packed_git *p)
{
	struct midx *top;
	uint32_t id, first;
	if (!r->opts->midx_incremental || !in_old_midx(r, p))
		return true;
	top = midx_layer(r->midx, midx_nr_layers(r->midx) - 1);
	first = midx_nr_packs_in_base(top);
	if (midx_nr_packs(top) - first < (uint32_t)r->opts->midx_new_layer_threshold)
		return false;
	return midx_find_pack(top, base_name(p->idx_path), &id) && id >= first;
}

/* Every pack of the odb but the first split of cands (and, with skip_cruft, cruft packs). */
static size_t packs_but(struct repack *r, struct packed_git **cands, size_t split,
			bool skip_cruft, struct packed_git **out)
{
	size_t nr = 0;
	for (size_t i = 0; i < odb_nr_packs(r->odb); i++) {
		struct packed_git *p = odb_pack(r->odb, i);
		bool rolled = false;
		for (size_t k = 0; k < split && !rolled; k++)
			rolled = cands[k] == p;
		if (!rolled && !(skip_cruft && has_mtimes(p)))
			out[nr++] = p;
	}
	return nr;
}

struct loose_rollup {
	struct repack *r;
	struct pack_objects *po;
};

static int add_loose_rollup(const struct object_id *oid, const char *path, void *data)
{
	struct loose_rollup *lr = data;
	for (size_t i = 0; i < lr->r->nr_geo_exclude; i++) {
		uint32_t idx_pos;
		if (pack_find_oid(lr->r->geo_exclude[i], oid, &idx_pos))
			return 0;
	}
	pack_objects_add_hashed(lr->po, oid, OBJ_NONE, 0);
	return 0;
}

static int cmp_pack_count(const void *va, const void *vb)
{
	const struct packed_git *a = *(struct packed_git *const *)va;
	const struct packed_git *b = *(struct packed_git *const *)vb;
	if (a->nr_objects != b->nr_objects)
		return a->nr_objects < b->nr_objects ? -1 : 1;
	return strcmp(a->pack_path, b->pack_path);
}

/* Whether the existing MIDX (any layer) lists p. */
static bool in_old_midx(const struct repack *r, const struct packed_git *p)
{
	uint32_t id;
	return r->midx && midx_find_pack(r->midx, base_name(p->idx_path), &id);
}

static bool in_any(struct packed_git *const *packs, size_t nr, const struct object_id *oid)
{
	for (size_t i = 0; i < nr; i++) {
		uint32_t idx_pos;
		if (pack_find_oid(packs[i], oid, &idx_pos))
			return true;
	}
	return false;
}

struct follow {
	struct repack *r;
	struct packed_git **closed;  /* packs that stay and the old MIDX lists */
	size_t nr_closed;
	struct oidset seen;
	struct object_id *stack;
	size_t nr, alloc;
};

static void follow_push(struct follow *f, const struct object_id *oid)
{
	if (!oidset_insert(&f->seen, oid))
		return;
	ALLOC_GROW(f->stack, f->nr + 1, f->alloc);
	f->stack[f->nr++] = *oid;
}

/* The commits of p, as tips. */
static int follow_pack_commits(struct follow *f, struct packed_git *p, struct gp_error *err)
{
	int ret = pack_open_pack(p, err);
	for (uint32_t idx_pos = 0; !ret && idx_pos < p->nr_objects; idx_pos++) {
		struct pack_object_info info;
		ret = pack_object_info(p, pack_nth_offset(p, idx_pos), &info, false, err);
		if (!ret && info.type == OBJ_COMMIT) {
			struct object_id oid;
			pack_nth_oid(p, idx_pos, &oid);
			follow_push(f, &oid);
		}
	}
	return ret;
}

static int follow_loose_commit(const struct object_id *oid, const char *path, void *data)
{
	struct follow *f = data;
	struct object_info info;
	struct gp_error err = GP_ERROR_INIT;
	if (!odb_read_object_info(f->r->odb, oid, &info, 0, &err) && info.type == OBJ_COMMIT)
		follow_push(f, oid);
	gp_error_clear(&err);
	return 0;
}

/*
 * repack.midxMustContainCruft=false (git's pack-objects
 * --stdin-packs=follow): the new pack must not lean on cruft packs the
 * MIDX will leave out. From the commits of the packs rolled up, of the
 * packs that stay but the old MIDX does not list (nothing says they
 * are closed under reachability) and the loose ones, everything they
 * reach is walked, and what is in none of the packs that stay out
 * (cruft packs are not among them) goes into the new pack too. The
 * walk stops at objects of the packs the old MIDX lists that stay:
 * what they reach is in the MIDX already. Missing objects are passed
 * over, as git's walk does.
 */
static int follow_rollup(struct repack *r, struct gp_error *err)
{
	struct follow f = { .r = r, .seen = OIDSET_INIT };
	int ret = 0;

	f.closed = xcalloc(r->nr_geo + 1, sizeof(*f.closed));
	for (size_t i = r->geo_split; i < r->nr_geo; i++)
		if (in_old_midx(r, r->geo[i]))
			f.closed[f.nr_closed++] = r->geo[i];
	for (size_t i = 0; i < r->nr_geo && !ret; i++)
		if (i < r->geo_split || !in_old_midx(r, r->geo[i]))
			ret = follow_pack_commits(&f, r->geo[i], err);
	if (!ret)
		ret = loose_for_each(odb_objdir(r->odb), r->repo->hash_algo, follow_loose_commit, &f);
	while (!ret && f.nr) {
		struct object_id oid = f.stack[--f.nr];
		struct gp_error ignored = GP_ERROR_INIT;
		enum object_type type;
		unsigned char *data;
		size_t size;

		if (in_any(f.closed, f.nr_closed, &oid))
			continue;
		if (odb_read_object(r->odb, &oid, &type, &data, &size, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		if (!in_any(r->geo_exclude, r->nr_geo_exclude, &oid))
			pack_objects_add(r->po, &oid, type, NULL);
		if (type == OBJ_COMMIT) {
			struct commit_info ci = COMMIT_INFO_INIT;
			if (!commit_parse(data, size, r->repo->hash_algo, &ci, &ignored)) {
				follow_push(&f, &ci.tree);
				for (size_t k = 0; k < ci.nr_parents; k++)
					follow_push(&f, &ci.parents[k]);
			}
			commit_info_release(&ci);
		} else if (type == OBJ_TREE) {
			struct tree_iter it;
			struct tree_entry e;
			tree_iter_init(&it, data, size, r->repo->hash_algo);
			while (tree_iter_next(&it, &e, &ignored) > 0)
				if (tree_mode_type(e.mode) != OBJ_COMMIT)
					follow_push(&f, &e.oid);
		} else if (type == OBJ_TAG) {
			struct tag_info ti;
			if (!tag_parse(data, size, r->repo->hash_algo, &ti, &ignored))
				follow_push(&f, &ti.object);
		}
		gp_error_clear(&ignored);
		free(data);
	}
	oidset_release(&f.seen);
	free(f.stack);
	free(f.closed);
	return ret;
}

/*
 * Geometric: the repository's packs (and, without -l, its alternates'
 * packs, whose objects are then copied in) form one progression, its
 * promisor packs another, rolled up into a promisor pack of their own;
 * kept packs and cruft packs stay out of both. The new pack takes the
 * objects of the packs rolled up and every loose object, but those of
 * packs that stay in the progression, of kept and promisor packs, and
 * (-l) of alternates: an object a cruft pack holds as well is packed
 * again, as git does, so that the progression does not lean on cruft.
 */
static int choose_geometric(struct repack *r, struct gp_error *err)
{
	size_t max = odb_nr_packs(r->odb) + 1;
	struct packed_git **normal = xcalloc(max, sizeof(*normal));
	struct packed_git **promisor = xcalloc(max, sizeof(*promisor));
	struct packed_git **promisor_exclude = NULL;
	struct old_pack **normal_own = xcalloc(max, sizeof(*normal_own));
	struct old_pack **promisor_own = xcalloc(max, sizeof(*promisor_own));
	size_t nr_normal = 0, nr_promisor = 0, promisor_split = 0;
	struct loose_rollup lr = { r, r->po };
	int ret;

	for (size_t i = 0; i < r->nr_packs; i++) {
		struct old_pack *op = &r->packs[i];
		struct packed_git *p = op->pack;
		if (p->is_keep || named_keep(r->opts, p) || op->cruft)
			continue;
		if (!geometric_candidate(r, p))
			continue;
		if (p->is_promisor) {
			promisor[nr_promisor++] = p;
		} else if (!op->kept) {
			normal[nr_normal++] = p;
		}
	}
	if (!r->opts->local)
		for (size_t i = 0; i < odb_nr_packs(r->odb); i++)
			if (!odb_pack_is_local(r->odb, i) && !has_mtimes(odb_pack(r->odb, i)))
				normal[nr_normal++] = odb_pack(r->odb, i);
	qsort(normal, nr_normal, sizeof(*normal), cmp_pack_count);
	qsort(promisor, nr_promisor, sizeof(*promisor), cmp_pack_count);
	/* Who owns each candidate, for marking it replaced (alternates own none). */
	for (size_t k = 0; k < nr_normal; k++)
		for (size_t i = 0; i < r->nr_packs; i++)
			if (r->packs[i].pack == normal[k])
				normal_own[k] = &r->packs[i];
	for (size_t k = 0; k < nr_promisor; k++)
		for (size_t i = 0; i < r->nr_packs; i++)
			if (r->packs[i].pack == promisor[k])
				promisor_own[k] = &r->packs[i];
	r->geo = normal;
	r->nr_geo = nr_normal;
	r->geo_split = split_of(normal, nr_normal, (uint64_t)r->opts->geometric);
	r->geo_exclude = xcalloc(max, sizeof(*r->geo_exclude));
	r->nr_geo_exclude = packs_but(r, normal, r->geo_split, true, r->geo_exclude);
	ret = roll_up(r->odb, r->po, normal, normal_own, r->geo_split, r->geo_exclude,
		      r->nr_geo_exclude, err);
	/* Loose objects roll up too, but those of the packs that stay out. */
	if (!ret)
		ret = loose_for_each(odb_objdir(r->odb), r->repo->hash_algo, add_loose_rollup, &lr);
	if (!ret && !r->opts->midx_must_contain_cruft)
		ret = follow_rollup(r, err);
	if (!ret && nr_promisor > 1) {
		size_t nr_exclude;
		promisor_split = split_of(promisor, nr_promisor, (uint64_t)r->opts->geometric);
		promisor_exclude = xcalloc(max, sizeof(*promisor_exclude));
		nr_exclude = packs_but(r, promisor, promisor_split, false, promisor_exclude);
		pack_objects_new(&r->po_promisor, r->odb, &r->po_opts);
		ret = roll_up(r->odb, r->po_promisor, promisor, promisor_own, promisor_split,
			      promisor_exclude, nr_exclude, err);
	}
	free(promisor);
	free(promisor_exclude);
	free(normal_own);
	free(promisor_own);
	return ret;
}

/*
 * -a, -A, --cruft in a partial clone: the objects of every promisor pack
 * go into one new promisor pack, and the old ones go with -d, as in git
 * (the main pack leaves them out). .keep and --keep-pack packs stay.
 */
static int choose_promisor_all(struct repack *r, struct gp_error *err)
{
	struct packed_git **promisor = xcalloc(r->nr_packs + 1, sizeof(*promisor));
	size_t nr = 0;
	int ret = 0;

	for (size_t i = 0; i < r->nr_packs; i++) {
		struct old_pack *op = &r->packs[i];
		if (!op->pack->is_promisor || op->pack->is_keep || named_keep(r->opts, op->pack))
			continue;
		promisor[nr++] = op->pack;
		op->replaced = true;
	}
	if (nr) {
		pack_objects_new(&r->po_promisor, r->odb, &r->po_opts);
		ret = pack_objects_add_pack_list(r->po_promisor, promisor, nr, NULL, 0, err);
	}
	free(promisor);
	return ret;
}

struct ref_tips {
	struct rev_walk *walk;
	struct gp_error *err;
};

static int add_ref_tip(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct ref_tips *rt = data;
	int ret;
	/* A broken ref may hold anything: losing it is worse than stopping. */
	if (flags & REF_ISBROKEN)
		return gp_error_set(rt->err, GP_ENOTFOUND, "bad object %s", refname);
	/* A ref to a missing object stops the repack, as in git. */
	ret = rev_walk_add_tip(rt->walk, oid, false, "", rt->err);
	if (ret == GP_ENOTFOUND && !refs_paranoia()) {
		/* GIT_REF_PARANOIA=0: a ref to a missing object is passed by, as in git */
		gp_error_clear(rt->err);
		ret = 0;
	} else if (ret == GP_ENOTFOUND) {
		char hex[GP_MAX_HEXSZ + 1];
		gp_error_set(rt->err, GP_ENOTFOUND, "bad object %s (from %s)",
			     oid_to_hex_r(hex, oid), refname);
	} else if (ret) {
		gp_error_prefix(rt->err, "%s", refname);
	}
	return ret;
}

/*
 * Whether objects of .keep packs go into the new pack too (git's
 * repack.packKeptObjects): by default only when it gets a bitmap of its
 * own, which must cover everything reachable.
 */
static bool pack_kept_objects(const struct repack_opts *opts)
{
	if (opts->pack_kept_objects >= 0)
		return opts->pack_kept_objects;
	return opts->write_bitmap && !opts->bitmap_quiet && !opts->write_midx;
}

static int add_recent_hook_tips(struct repack *r, struct rev_walk *walk, struct gp_error *err)
{
	int ret = 0;
	for (size_t i = 0; !ret && i < r->nr_recent; i++) {
		ret = rev_walk_add_tip(walk, &r->recent[i], false, "", err);
		if (ret == GP_ENOTFOUND) {   /* names we lack are ignored */
			gp_error_clear(err);
			ret = 0;
		}
	}
	return ret;
}

static int choose_reachable(struct repack *r, bool only_loose, struct gp_error *err)
{
	struct pack_objects_filter filter = { 0 };
	struct ref_tips rt = { NULL, err };
	struct object_id head;
	const char **keep;
	size_t nr_keep = 0;
	int ret = 0;

	/* --keep-pack names and .promisor packs stay out; .keep ones unless packed too. */
	keep = xcalloc(r->opts->nr_keep_packs + r->nr_packs + 1, sizeof(*keep));
	for (size_t i = 0; i < r->opts->nr_keep_packs; i++)
		keep[nr_keep++] = r->opts->keep_packs[i];
	for (size_t i = 0; i < r->nr_packs; i++)
		if (r->packs[i].pack->is_promisor)
			keep[nr_keep++] = base_name(r->packs[i].pack->pack_path);
	/* -i: islands from the refs, as git's pack-objects --delta-islands finds them. */
	if (r->opts->delta_islands) {
		ret = delta_islands_load(&r->islands, r->repo, err);
		if (ret)
			return ret;
		if (r->islands)
			pack_objects_set_islands(r->po, r->islands);
	}
	filter.unpacked = only_loose;
	filter.local = r->opts->local;
	filter.honor_pack_keep = !pack_kept_objects(r->opts);
	filter.keep_packs = keep;
	filter.nr_keep_packs = nr_keep;
	rev_walk_new(&rt.walk, r->odb, r->repo->hash_algo);
	/* A shallow repository's boundary commits have no parents to walk. */
	if (shallow_read(r->repo, &r->shallow, err)) {
		rev_walk_free(rt.walk);
		free(keep);
		return GP_ECORRUPT;
	}
	if (oidset_size(&r->shallow))
		rev_walk_set_shallow(rt.walk, &r->shallow);
	if (r->opts->filter && !only_loose)
		rev_walk_set_filter(rt.walk, r->opts->filter, 0);
	/*
	 * A partial clone lacks what its promisor packs point at: the walk
	 * goes around it, as git's repack does (--missing=allow-promisor).
	 */
	/*
	 * A partial clone: the objects of its promisor packs stay out of the
	 * walk, which stops there as git's --exclude-promisor-objects does,
	 * and nothing is fetched on the way.
	 */
	for (size_t i = 0; i < r->nr_packs; i++) {
		struct packed_git *p = r->packs[i].pack;
		if (!p->is_promisor)
			continue;
		rev_walk_set_missing(rt.walk, REV_MISSING_ALLOW, NULL, NULL);
		/*
		 * Without a promisor remote nothing can be fetched again: the
		 * walk goes through, and what it reaches stays (git passes
		 * --exclude-promisor-objects only with a promisor remote).
		 */
		if (!r->repo->promisor)
			continue;
		odb_set_missing_hook(r->odb, NULL, NULL);
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
			struct object_id oid;
			pack_nth_oid(p, idx_pos, &oid);
			rev_walk_mark_uninteresting(rt.walk, &oid);
		}
	}
	/* An unborn HEAD names nothing. */
	if (!refs_resolve(r->repo, "HEAD", &head, NULL, err))
		ret = rev_walk_add_tip(rt.walk, &head, false, "", err);
	else
		gp_error_clear(err);
	if (!ret)
		ret = refs_for_each_ext(r->repo, "", REFS_EACH_PARANOID, add_ref_tip, &rt, err);
	/* What reflogs, indexes and other worktrees hold stays too, as in git. */
	if (!ret)
		ret = reachable_add_tips(r->repo, rt.walk,
					 REACH_REFLOGS | REACH_INDEXES | REACH_WORKTREE_HEADS, err);
	/*
	 * -A with an expiry: what gc.recentObjectsHook names is recent, so
	 * it and what it reaches go into the new pack, as in git.
	 */
	if (!ret && r->opts->loosen_unreachable && r->opts->unpack_unreachable)
		ret = add_recent_hook_tips(r, rt.walk, err);
	if (!ret && r->opts->path_walk)
		trace2_region_enter("pack-objects", "path-walk");
	if (!ret)
		ret = pack_objects_add_walk(r->po, rt.walk, &filter, err);
	if (!ret && r->opts->path_walk)
		trace2_region_leave("pack-objects", "path-walk");
	rev_walk_free(rt.walk);
	/* -k: what the walk did not reach stays too, in the new pack. */
	if (!ret && r->opts->keep_unreachable && !only_loose)
		ret = pack_objects_add_unreachable(r->po, &filter, err);
	if (!ret && r->opts->keep_unreachable && !only_loose)
		ret = pack_objects_add_loose(r->po, err);
	free(keep);
	if (!ret && !only_loose)
		for (size_t i = 0; i < r->nr_packs; i++)
			r->packs[i].replaced = !r->packs[i].kept;
	return ret;
}

static bool in_new_pack(const struct repack *r, const struct object_id *oid)
{
	for (size_t i = 0; i < r->nr_new_packs; i++) {
		uint32_t idx_pos;
		if (pack_find_oid(r->new_packs[i], oid, &idx_pos))
			return true;
	}
	return false;
}

/* Whether a pack that stays (kept, or not replaced) holds oid. */
static bool in_staying_pack(const struct repack *r, const struct object_id *oid)
{
	for (size_t i = 0; i < r->nr_packs; i++) {
		uint32_t idx_pos;
		if ((!r->packs[i].replaced || r->packs[i].retained) &&
		    pack_find_oid(r->packs[i].pack, oid, &idx_pos))
			return true;
	}
	return false;
}

/* -A: what the replaced packs hold and the new pack does not, loose. */
static int loosen_unreachable(struct repack *r, struct repack_result *result,
			      struct gp_error *err)
{
	int ret = 0;
	for (size_t i = 0; i < r->nr_packs && !ret; i++) {
		struct packed_git *p = r->packs[i].pack;
		struct stat st;
		if (!r->packs[i].replaced)
			continue;
		/* --unpack-unreachable=<when>: older packs' leftovers expire. */
		if (r->opts->unpack_unreachable == INT64_MAX ||
		    (r->opts->unpack_unreachable && !stat(p->pack_path, &st) &&
		     (int64_t)st.st_mtime <= r->opts->unpack_unreachable))
			continue;
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects && !ret; idx_pos++) {
			struct object_id oid, written;
			enum object_type type;
			unsigned char *data;
			size_t size;
			pack_nth_oid(p, idx_pos, &oid);
			if (in_new_pack(r, &oid) || in_staying_pack(r, &oid) ||
			    loose_has(odb_objdir(r->odb), &oid))
				continue;
			ret = odb_read_object(r->odb, &oid, &type, &data, &size, err);
			if (!ret)
				ret = odb_write_object(r->odb, type, data, size, &written, err);
			if (!ret)
				result->nr_loosened++;
			free(data);
		}
	}
	return ret;
}

/* Open the .idx of a pack just written and count it among the new ones. */
static int add_new_pack(struct repack *r, const char *base, const char *hex, struct gp_error *err)
{
	char *idx = xstrfmt("%s-%s.idx", base, hex);
	int ret;
	r->new_packs = xrealloc(r->new_packs, sizeof(*r->new_packs) * (r->nr_new_packs + 1));
	ret = pack_open_idx(&r->new_packs[r->nr_new_packs], idx, r->repo->hash_algo, err);
	free(idx);
	if (ret)
		return ret;
	r->nr_new_packs++;
	/* A new pack may replace itself (the same objects, the same name). */
	for (size_t i = 0; i < r->nr_packs; i++)
		if (strstr(r->packs[i].pack->pack_path, hex))
			r->packs[i].replaced = false;
	return 0;
}

/*
 * Where git's repack starts a pack-objects child, the trace2 event
 * stream shows its argv; gitpack writes the pack in-process. So that
 * what reads the trace (Git's own tests, an operator's tooling) still
 * sees the step and its options, it is recorded as a child of class
 * "in-process" with the argv git's child would have had for these
 * options (pack-objects' spelling), from the start of the write to its
 * end (trace_pack_done()). Returns the child id, -1 when not tracing.
 */
static int trace_pack_options(const struct repack_opts *opts,
			      const struct pack_objects_opts *po_opts, const char *kind)
{
	struct strbuf sb = STRBUF_INIT;
	const char *argv[24];
	char *owned[8], *words, *word, *save = NULL;
	size_t argc = 0, nr_owned = 0, first_opt;
	int id;

	if (!trace2_enabled())
		return -1;
	argv[argc++] = "git";
	argv[argc++] = "pack-objects";
	/* kind is one or two words ("--unpacked --incremental") */
	words = owned[nr_owned++] = xstrdup(kind);
	for (word = strtok_r(words, " ", &save); word && argc < 4;
	     word = strtok_r(NULL, " ", &save))
		argv[argc++] = word;
	first_opt = argc;
	argv[argc++] = owned[nr_owned++] = xstrfmt("--window=%d", po_opts->window);
	argv[argc++] = owned[nr_owned++] = xstrfmt("--depth=%d", po_opts->depth);
	argv[argc++] = owned[nr_owned++] = xstrfmt("--threads=%d", po_opts->threads);
	if (po_opts->max_pack_size)
		argv[argc++] = owned[nr_owned++] =
			xstrfmt("--max-pack-size=%" PRIu64, po_opts->max_pack_size);
	if (!po_opts->reuse_delta)
		argv[argc++] = "--no-reuse-delta";
	if (!po_opts->reuse_object)
		argv[argc++] = "--no-reuse-object";
	if (opts->name_hash_version_arg)
		argv[argc++] = owned[nr_owned++] =
			xstrfmt("--name-hash-version=%d", opts->name_hash_version_arg);
	if (po_opts->by_path)
		argv[argc++] = "--path-walk";
	if (po_opts->delta_base_offset)
		argv[argc++] = "--delta-base-offset";
	argv[argc] = NULL;
	id = trace2_child_start("in-process", argv);
	/* the same, as the data event earlier gitpacks wrote */
	for (size_t i = first_opt; i < argc; i++)
		strbuf_addf(&sb, "%s ", argv[i]);
	strbuf_addstr(&sb, kind);
	trace2_data_string("repack", "pack-objects", sb.buf);
	strbuf_release(&sb);
	for (size_t i = 0; i < nr_owned; i++)
		free(owned[i]);
	return id;
}

static void trace_pack_done(int id, int ret)
{
	if (id >= 0)
		trace2_child_exit(id, ret ? 128 : 0);
}

/*
 * --cruft: what the replaced packs and the loose objects hold beyond
 * the new packs goes into a cruft pack, written before anything is
 * deleted like every other new file (without -d the old packs stay,
 * as in git). Those older than expiration (when has_expiration) are
 * left out. With into_repo the pack is one of the repository's new
 * packs; else (--expire-to) it is written at base and forgotten.
 */
static int write_cruft_pack(struct repack *r, const char *base, bool has_expiration,
			    int64_t expiration, bool into_repo, struct repack_result *result,
			    struct gp_error *err)
{
	struct pack_objects_opts po_opts = PACK_OBJECTS_OPTS_INIT;
	struct pack_objects *po;
	struct pack_objects_names names = { 0 };
	const char **discard = xcalloc(r->nr_packs + 1, sizeof(*discard));
	size_t nr_discard = 0;
	int ret, child_id;

	for (size_t i = 0; i < r->nr_packs; i++)
		if (r->packs[i].replaced)
			discard[nr_discard++] = base_name(r->packs[i].pack->pack_path);
	odb_reprepare(r->odb);
	po_opts.window = r->opts->cruft_window >= 0 ? r->opts->cruft_window : r->opts->window;
	po_opts.depth = r->opts->cruft_depth >= 0 ? r->opts->cruft_depth : r->opts->depth;
	po_opts.threads = r->opts->cruft_threads >= 0 ? r->opts->cruft_threads : r->opts->threads;
	po_opts.big_file_threshold = r->opts->big_file_threshold;
	po_opts.delta_base_offset = true;
	po_opts.reuse_delta = r->opts->reuse_delta && r->opts->reuse_object;
	po_opts.reuse_object = r->opts->reuse_object;
	po_opts.progress = r->opts->progress;
	po_opts.max_pack_size = r->opts->max_cruft_size ? r->opts->max_cruft_size
							: r->opts->max_pack_size;
	po_opts.name_hash_version = r->opts->name_hash_version;
	child_id = trace_pack_options(r->opts, &po_opts, "--cruft");
	pack_objects_new(&po, r->odb, &po_opts);
	pack_objects_set_recent(po, r->recent, r->nr_recent);
	ret = pack_objects_add_cruft(po, NULL, 0, discard, nr_discard,
				     has_expiration ? expiration : 0, err);
	if (!ret && pack_objects_nr(po))
		ret = pack_objects_write_files(po, base, !r->opts->no_rev_index, &names, err);
	trace_pack_done(child_id, ret);
	pack_objects_free(po);
	for (size_t k = 0; !ret && into_repo && k < names.nr; k++) {
		ret = add_new_pack(r, base, names.hex[k], err);
		if (!ret) {
			ALLOC_GROW(result->new_packs.hex, result->new_packs.nr + 1,
				   result->new_packs.alloc);
			memcpy(result->new_packs.hex[result->new_packs.nr++], names.hex[k],
			       sizeof(names.hex[k]));
			result->wrote_cruft = true;
		}
	}
	pack_objects_names_release(&names);
	free(discard);
	return ret;
}

/*
 * --filter: the objects of the packs being replaced (and of .keep packs,
 * when their objects were packed too) and the loose ones that the new
 * pack does not hold: what the filter left out, and anything
 * unreachable, as git's repack gathers them.
 */
static int write_filtered_pack(struct repack *r, struct repack_result *result,
			       struct gp_error *err)
{
	struct pack_objects *po;
	struct pack_objects_names names = { 0 };
	struct packed_git **include = xcalloc(r->nr_packs + 1, sizeof(*include));
	size_t nr_include = 0;
	char *base = r->opts->filter_to ? xstrdup(r->opts->filter_to)
					: xstrfmt("%s/pack", r->pack_dir);
	bool here = !r->opts->filter_to;
	int ret;

	for (size_t i = 0; i < r->nr_packs; i++)
		if (r->packs[i].replaced ||
		    (r->packs[i].pack->is_keep && pack_kept_objects(r->opts)))
			include[nr_include++] = r->packs[i].pack;
	odb_reprepare(r->odb);
	pack_objects_new(&po, r->odb, &r->po_opts);
	ret = pack_objects_add_pack_list(po, include, nr_include, r->new_packs,
					 r->nr_new_packs, err);
	if (!ret)
		ret = pack_objects_add_loose_unpacked(po, err);
	if (!ret && pack_objects_nr(po))
		ret = pack_objects_write_files(po, base, !r->opts->no_rev_index, &names, err);
	pack_objects_free(po);
	for (size_t k = 0; !ret && here && k < names.nr; k++) {
		ret = add_new_pack(r, base, names.hex[k], err);
		if (!ret) {
			ALLOC_GROW(result->new_packs.hex, result->new_packs.nr + 1,
				   result->new_packs.alloc);
			memcpy(result->new_packs.hex[result->new_packs.nr++], names.hex[k],
			       sizeof(names.hex[k]));
		}
	}
	pack_objects_names_release(&names);
	free(include);
	free(base);
	return ret;
}

/*
 * The empty .promisor file git writes for a promisor pack it makes
 * itself (an existing one is kept: the same pack written again).
 */
static int write_empty_promisor(const char *base, const char *hex, struct gp_error *err)
{
	char *path = xstrfmt("%s-%s.promisor", base, hex);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	int ret = 0;
	if (fd < 0 || fsync(fd) < 0)
		ret = gp_error_errno(err, "cannot write '%s'", path);
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}

/* The geometric roll-up of promisor packs: a promisor pack again. */
static int write_promisor_pack(struct repack *r, struct repack_result *result,
			       struct gp_error *err)
{
	struct pack_objects_names names = { 0 };
	char *base = xstrfmt("%s/pack", r->pack_dir);
	int ret = pack_objects_write_files(r->po_promisor, base, !r->opts->no_rev_index,
					   &names, err);
	for (size_t k = 0; !ret && k < names.nr; k++) {
		ret = write_empty_promisor(base, names.hex[k], err);
		if (!ret)
			ret = add_new_pack(r, base, names.hex[k], err);
		if (!ret) {
			ALLOC_GROW(result->new_packs.hex, result->new_packs.nr + 1,
				   result->new_packs.alloc);
			memcpy(result->new_packs.hex[result->new_packs.nr++], names.hex[k],
			       sizeof(names.hex[k]));
		}
	}
	pack_objects_names_release(&names);
	free(base);
	return ret;
}

static bool listed(char *const *names, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* Whether a pack of the old repository goes into the new (lone) MIDX, cruft aside. */
static bool midx_takes(const struct repack *r, const struct old_pack *op)
{
	/* Geometric: the packs rolled up are gone from the MIDX, -d or not (git's). */
	return !op->cruft && !(op->replaced && (r->opts->delete_old || r->opts->geometric));
}

/*
 * Whether the old MIDX lists a pack that the new one will not and
 * whose objects did not move into the new pack: some of its objects
 * may be what keeps the MIDX closed under reachability (a once-cruft
 * object reachable again), so the cruft packs must stay in.
 */
static bool old_midx_lists_unknown(const struct repack *r, char *const *names, size_t nr_names)
{
	for (uint32_t id = 0; r->midx && id < midx_nr_packs(r->midx); id++) {
		const char *name = midx_pack_name(r->midx, id);
		bool rolled = false;
		if (listed(names, nr_names, name))
			continue;
		for (size_t i = 0; r->opts->geometric && i < r->geo_split && !rolled; i++)
			rolled = !strcmp(base_name(r->geo[i]->idx_path), name);
		if (!rolled)
			return true;
	}
	return false;
}

/*
 * The MIDX's preferred pack, as git chooses it: geometric, the
 * largest local pack that stays in the progression; else (or when all
 * of it rolled up) the first new pack by name that is not a cruft pack,
 * so that reuse favours reachable objects; else none, and midx_write()
 * picks.
 */
static char *midx_preferred(const struct repack *r)
{
	const char *best = NULL;
	for (size_t i = r->nr_geo; r->opts->geometric && i > r->geo_split && !best; i--)
		for (size_t k = 0; k < r->nr_packs && !best; k++)
			if (r->packs[k].pack == r->geo[i - 1])
				best = base_name(r->geo[i - 1]->idx_path);
	for (size_t i = 0; i < r->nr_new_packs && !best; i++) {
		const char *name = base_name(r->new_packs[i]->idx_path);
		if (has_mtimes(r->new_packs[i]))
			continue;
		for (size_t k = 0; k < r->nr_new_packs && name; k++)
			if (strcmp(base_name(r->new_packs[k]->idx_path), name) < 0 &&
			    !has_mtimes(r->new_packs[k]))
				name = NULL;
		if (name)
			best = name;
	}
	return best ? xstrdup(best) : NULL;
}

/*
 * --write-midx: a lone MIDX of the packs that stay: kept ones, the new
 * ones, and those not replaced; the cruft packs too when
 * repack.midxMustContainCruft says so (the default), when nothing was
 * written and there is no MIDX yet, or when the old MIDX lists a pack
 * that neither stays nor rolled up (git's rules).
 */
static int write_midx(struct repack *r, bool want_bitmap, struct gp_error *err)
{
	struct midx_write_opts mopts = MIDX_WRITE_OPTS_INIT;
	struct midx_write_result mres = MIDX_WRITE_RESULT_INIT;
	char **names = xcalloc(r->nr_packs + r->nr_new_packs + 1, sizeof(*names));
	size_t nr_names = 0;
	char *preferred = midx_preferred(r);
	bool cruft;
	int ret;

	for (size_t i = 0; i < r->nr_new_packs; i++)
		names[nr_names++] = xstrdup(base_name(r->new_packs[i]->idx_path));
	for (size_t i = 0; i < r->nr_packs; i++) {
		const char *name = base_name(r->packs[i].pack->idx_path);
		if (midx_takes(r, &r->packs[i]) && !listed(names, nr_names, name))
			names[nr_names++] = xstrdup(name);
	}
	cruft = r->opts->midx_must_contain_cruft || old_midx_lists_unknown(r, names, nr_names);
	/* Nothing new and no MIDX yet: what is packed may lean on cruft. */
	if (!r->midx) {
		bool wrote = false;
		for (size_t i = 0; i < r->nr_new_packs; i++)
			wrote |= !has_mtimes(r->new_packs[i]);
		cruft |= !wrote;
	}

	for (size_t i = 0; cruft && i < r->nr_packs; i++) {
		const char *name = base_name(r->packs[i].pack->idx_path);
		if (r->packs[i].cruft && !(r->packs[i].replaced && r->opts->delete_old) &&
		    !listed(names, nr_names, name))
			names[nr_names++] = xstrdup(name);
	}
	mopts.only_packs = (const char *const *)names;
	mopts.nr_only = nr_names;
	mopts.only_given = true;
	mopts.preferred_pack = preferred;
	mopts.write_ridx = want_bitmap;
	mopts.defer_install = want_bitmap;
	mopts.progress = r->opts->progress;
	ret = nr_names ? midx_write(r->pack_dir, r->repo->hash_algo, &mopts, &mres, err) : 0;
	if (!ret && nr_names && want_bitmap)
		ret = midx_write_bitmap(r->repo, r->repo->objdir, &mres, NULL, r->opts->progress, err);
	/*
	 * Readers take the MIDX bitmap over a pack's own, so those of the
	 * packs it covers are dead weight now (git removes them too).
	 */
	for (size_t i = 0; !ret && want_bitmap && i < nr_names; i++) {
		char *bitmap = xstrfmt("%s/%.*s.bitmap", r->pack_dir,
				       (int)(strlen(names[i]) - strlen(".idx")), names[i]);
		unlink(bitmap);
		free(bitmap);
	}
	midx_write_result_release(&mres);
	for (size_t i = 0; i < nr_names; i++)
		free(names[i]);
	free(names);
	free(preferred);
	return ret;
}

/*
 * --write-midx=incremental: the new chain, as a plan of steps from the
 * top layer down (git's), each giving one layer of the new chain:
 *   - write: a new layer of the packs listed (the new packs, and those
 *     of old layers merged into it), on the layer the next step gives;
 *   - compact: one layer of the objects of old layers from..to;
 *   - copy: an old layer kept as it is.
 * Layers are written on the old chain (the chain file still names it),
 * then the chain file is replaced in one go (midx_write_chain()).
 */
enum midx_step_kind { STEP_WRITE, STEP_COMPACT, STEP_COPY };

struct midx_step {
	enum midx_step_kind kind;
	char **packs;              /* write: idx names */
	size_t nr_packs, alloc_packs;
	const char *preferred;     /* write: borrowed from packs, or NULL */
	struct midx *from, *to;    /* compact: old layers, base-most first; copy: to */
	unsigned char checksum[GP_MAX_RAWSZ]; /* of the layer, once done */
};

struct midx_plan {
	struct midx_step *steps;
	size_t nr, alloc;
};

static struct midx_step *plan_add(struct midx_plan *plan, enum midx_step_kind kind)
{
	struct midx_step *step;
	ALLOC_GROW(plan->steps, plan->nr + 1, plan->alloc);
	step = &plan->steps[plan->nr++];
	memset(step, 0, sizeof(*step));
	step->kind = kind;
	return step;
}

static const char *step_add_pack(struct midx_step *step, const char *idx_name)
{
	ALLOC_GROW(step->packs, step->nr_packs + 1, step->alloc_packs);
	step->packs[step->nr_packs] = xstrdup(idx_name);
	return step->packs[step->nr_packs++];
}

static void plan_release(struct midx_plan *plan)
{
	for (size_t i = 0; i < plan->nr; i++) {
		for (size_t k = 0; k < plan->steps[i].nr_packs; k++)
			free(plan->steps[i].packs[k]);
		free(plan->steps[i].packs);
	}
	free(plan->steps);
}

/* The objects of a layer alone. */
static uint64_t layer_objects(const struct midx *layer)
{
	return midx_nr_objects(layer) - midx_nr_objects_in_base(layer);
}

/* The layer below layer, or NULL. */
static struct midx *layer_below(struct midx *chain, const struct midx *layer)
{
	uint32_t nr = midx_nr_layers((struct midx *)layer);
	return nr > 1 ? midx_layer(chain, nr - 2) : NULL;
}

static bool is_local_pack(const struct repack *r, const struct packed_git *p)
{
	for (size_t i = 0; i < r->nr_packs; i++)
		if (r->packs[i].pack == p)
			return true;
	return false;
}

/* Without --geometric: the new packs, as a layer on top of the old chain. */
static void plan_append(struct repack *r, struct midx_plan *plan)
{
	if (r->nr_new_packs) {
		struct midx_step *step = plan_add(plan, STEP_WRITE);
		for (size_t i = 0; i < r->nr_new_packs; i++)
			step_add_pack(step, base_name(r->new_packs[i]->idx_path));
	}
	for (uint32_t l = r->midx ? midx_nr_layers(r->midx) : 0; l-- > 0;) {
		struct midx_step *step = plan_add(plan, STEP_COPY);
		step->to = midx_layer(r->midx, l);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * With --geometric (git's compaction plan): the new top layer takes
 * the new packs; when a pack of the old top layer rolled up, that
 * layer is gone, and the packs of the progression that stay come into
 * the new one too, as do those no MIDX listed. Its weight is that of
 * the packs rolled up and of the packs it takes. Then, going down the
 * old chain, it takes each layer whole as long as its weight is at
 * least 1/repack.midxSplitFactor of that layer's objects. Below, runs
 * of layers are compacted by the same rule (a run grows while its
 * objects are at least 1/factor of the next layer's), and a layer
 * alone is kept as it is. The preferred pack of the new layer: the
 * largest pack of the progression it takes, then the preferred pack
 * of each layer it takes, the deepest winning.
 */
static int plan_compaction(struct repack *r, struct midx_plan *plan, struct gp_error *err)
{
	uint64_t factor = (uint64_t)r->opts->midx_split_factor, weight = 0;
	struct midx *m = r->midx ? midx_layer(r->midx, midx_nr_layers(r->midx) - 1) : NULL;
	bool tip_rewritten = false;
	struct midx_step *step;
	char **fresh = xcalloc(r->nr_new_packs + 1, sizeof(*fresh));

	step = plan_add(plan, STEP_WRITE);
	/* The new packs by name, as git lists them. */
	for (size_t i = 0; i < r->nr_new_packs; i++)
		fresh[i] = (char *)base_name(r->new_packs[i]->idx_path);
	qsort(fresh, r->nr_new_packs, sizeof(*fresh), cmp_str);
	for (size_t i = 0; i < r->nr_new_packs; i++)
		step_add_pack(step, fresh[i]);
	free(fresh);
	for (size_t i = 0; i < r->geo_split; i++) {
		weight += r->geo[i]->nr_objects;
		tip_rewritten |= in_old_midx(r, r->geo[i]);
	}
	for (size_t i = r->geo_split; i < r->nr_geo; i++) {
		struct packed_git *p = r->geo[i];
		const char *name;
		bool listed = in_old_midx(r, p);
		if (!is_local_pack(r, p) || (listed && !tip_rewritten))
			continue;
		name = step_add_pack(step, base_name(p->idx_path));
		if (listed || i == r->nr_geo - 1)
			step->preferred = name;
		weight += p->nr_objects;
	}
	if (tip_rewritten)
		m = layer_below(r->midx, m);
	for (; m && weight >= layer_objects(m) / factor; m = layer_below(r->midx, m)) {
		uint32_t first = midx_nr_packs_in_base(m), preferred;
		struct gp_error ignored = GP_ERROR_INIT;
		char hex[GP_MAX_HEXSZ + 1];
		if (midx_preferred_pack(m, &preferred, &ignored)) {
			gp_error_clear(&ignored);
			return gp_error_set(err, GP_EINVAL, "could not find preferred pack for MIDX %s",
					    hash_to_hex_r(hex, midx_checksum(m),
								  gp_hash_algos[r->repo->hash_algo].rawsz));
		}
		for (uint32_t id = first; id < midx_nr_packs(m); id++) {
			const char *name = step_add_pack(step, midx_pack_name(m, id));
			if (id == preferred)
				step->preferred = name;
		}
		weight += layer_objects(m);
	}
	if (!step->nr_packs)
		plan->nr--;
	/* The rest of the chain: runs compacted, single layers kept. */
	while (m) {
		struct midx *next = m, *below;
		uint64_t run = 0;
		for (;;) {
			uint64_t proposed = run + layer_objects(next);
			below = layer_below(r->midx, next);
			if (!below) {
				run = proposed;
				break;
			}
			if (proposed < layer_objects(below) / factor)
				break;
			run = proposed;
			next = below;
		}
		step = plan_add(plan, next == m ? STEP_COPY : STEP_COMPACT);
		step->from = next;
		step->to = m;
		m = layer_below(r->midx, next);
	}
	return 0;
}
/* The old layer the layers above a step's sit on: the top of what it gives. */
static const struct midx *step_top(const struct midx_step *step)
{
	return step->to;
}

/* Write or compact one layer (on the old chain) and learn its checksum. */
static int run_step(struct repack *r, struct midx_step *step, const char *base_hex,
		    bool want_bitmap, struct gp_error *err)
{
	struct midx_write_opts mopts = MIDX_WRITE_OPTS_INIT;
	struct midx_write_result mres = MIDX_WRITE_RESULT_INIT;
	size_t rawsz = gp_hash_algos[r->repo->hash_algo].rawsz;
	char from_hex[GP_MAX_HEXSZ + 1], to_hex[GP_MAX_HEXSZ + 1];
	int ret;

	if (step->kind == STEP_COPY) {
		memcpy(step->checksum, midx_checksum(step->to), rawsz);
		return 0;
	}
	mopts.incremental = true;
	mopts.no_chain_file = true;
	mopts.write_ridx = want_bitmap;
	mopts.defer_install = want_bitmap;
	mopts.progress = r->opts->progress;
	if (step->kind == STEP_WRITE) {
		mopts.base = base_hex ? base_hex : "none";
		mopts.only_packs = (const char *const *)step->packs;
		mopts.nr_only = step->nr_packs;
		mopts.only_given = true;
		mopts.preferred_pack = step->preferred;
	} else {
		mopts.compact_from = hash_to_hex_r(from_hex, midx_checksum(step->from), rawsz);
		mopts.compact_to = hash_to_hex_r(to_hex, midx_checksum(step->to), rawsz);
	}
	ret = midx_write(r->pack_dir, r->repo->hash_algo, &mopts, &mres, err);
	/* A layer whose commits reach below what it and its base hold goes without a bitmap. */
	mres.bitmap_optional = true;
	if (!ret && mres.written && want_bitmap)
		ret = midx_write_bitmap(r->repo, r->repo->objdir, &mres, NULL, r->opts->progress, err);
	if (!ret && !mres.written)
		ret = gp_error_set(err, GP_EINVAL, "no MIDX layer written for %zu pack(s)",
				   step->nr_packs);
	if (!ret)
		memcpy(step->checksum, mres.checksum, rawsz);
	midx_write_result_release(&mres);
	return ret;
}

/*
 * --write-midx=incremental: plan (plan_append() or plan_compaction()),
 * write each layer from the top down, each on the old layer the next
 * step gives, then the chain file, base first.
 */
static int write_midx_incremental(struct repack *r, bool want_bitmap, struct gp_error *err)
{
	struct midx_plan plan = { 0 };
	size_t rawsz = gp_hash_algos[r->repo->hash_algo].rawsz;
	unsigned char *chain = NULL;
	int ret = 0;

	if (r->opts->geometric)
		ret = plan_compaction(r, &plan, err);
	else
		plan_append(r, &plan);
	for (size_t i = 0; !ret && i < plan.nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		const char *base = NULL;
		if (i + 1 < plan.nr)
			base = hash_to_hex_r(hex, midx_checksum(step_top(&plan.steps[i + 1])), rawsz);
		ret = run_step(r, &plan.steps[i], base, want_bitmap, err);
	}
	if (!ret) {
		chain = xmalloc(rawsz * (plan.nr + 1));
		for (size_t i = 0; i < plan.nr; i++)
			memcpy(chain + rawsz * i, plan.steps[plan.nr - 1 - i].checksum, rawsz);
		ret = midx_write_chain(r->pack_dir, r->repo->hash_algo, chain, (uint32_t)plan.nr, err);
	}
	free(chain);
	plan_release(&plan);
	return ret;
}

/*
 * Files a repack that died left behind: git names its unfinished packs
 * ".tmp-*", gitpack "tmp_*" and "*-tmp.pack". No repack runs beside us
 * (the caller holds the repository), so they belong to nobody.
 */
static void remove_stale_temporaries(struct repack *r)
{
	DIR *dir = opendir(r->pack_dir);
	struct dirent *de;
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *path;
		if (!starts_with(de->d_name, ".tmp-"))
			continue;
		path = xstrfmt("%s/%s", r->pack_dir, de->d_name);
		unlink(path);
		free(path);
	}
	closedir(dir);
}

/* Whether some reachable objects stay out of an all-into-one pack. */
static bool objects_left_out(const struct repack *r)
{
	if (r->opts->local && odb_has_alternates(r->odb))
		return true;
	if (r->opts->nr_keep_packs)
		return true;
	if (!pack_kept_objects(r->opts))
		for (size_t i = 0; i < r->nr_packs; i++)
			if (r->packs[i].pack->is_keep)
				return true;
	return false;
}

struct prune_loose {
	struct repack *r;
	uint32_t pruned;
};

static int prune_one(const struct object_id *oid, const char *path, void *data)
{
	struct prune_loose *pl = data;
	if ((in_new_pack(pl->r, oid) || in_staying_pack(pl->r, oid)) && !unlink(path))
		pl->pruned++;
	return 0;
}

static void prune_packed(struct repack *r, struct repack_result *result)
{
	struct prune_loose pl = { r, 0 };
	loose_for_each(odb_objdir(r->odb), r->repo->hash_algo, prune_one, &pl);
	for (unsigned fan = 0; fan < 256; fan++) {
		char *d = xstrfmt("%s/%02x", odb_objdir(r->odb), fan);
		rmdir(d);   /* only succeeds when empty, as git */
		free(d);
	}
	result->nr_loose_pruned = pl.pruned;
}

/*
 * After -d, the shallow file names only commits still here, as git's
 * repack leaves it: a boundary commit that went away with its branch
 * would otherwise stay listed forever.
 */
static int cmp_oid(const void *a, const void *b)
{
	return oidcmp(a, b);
}

static void prune_shallow(struct repack *r)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf kept = STRBUF_INIT;
	char *path = repo_shallow_path(r->repo);
	const struct object_id *oid;
	size_t pos = 0, nr_kept = 0;

	if (!path)
		return;
	odb_reprepare(r->odb);
	struct object_id *list = xcalloc(oidset_size(&r->shallow) + 1, sizeof(*list));
	/* The odb still holds the packs just deleted: ask what stays. */
	while ((oid = oidset_next(&r->shallow, &pos)))
		if (in_new_pack(r, oid) || in_staying_pack(r, oid) ||
		    loose_has(odb_objdir(r->odb), oid))
			list[nr_kept++] = *oid;
	/* In name order, as git writes it. */
	qsort(list, nr_kept, sizeof(*list), cmp_oid);
	for (size_t i = 0; i < nr_kept; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		strbuf_addf(&kept, "%s\n", oid_to_hex_r(hex, &list[i]));
	}
	free(list);
	if (nr_kept == oidset_size(&r->shallow)) {
		/* unchanged */
	} else if (!nr_kept) {
		unlink(path);
	} else {
		struct hashfile *f;
		if (!hashfile_create(&f, path, r->repo->hash_algo, &err)) {
			hashfile_write(f, kept.buf, kept.len);
			hashfile_commit(f, NULL, HASHFILE_NO_TRAILER, &err);
		}
	}
	gp_error_clear(&err);
	strbuf_release(&kept);
	free(path);
}

int repack_run(struct repository *repo, const struct repack_opts *opts,
	       struct repack_result *result, struct gp_error *err)
{
	struct pack_objects_opts po_opts = PACK_OBJECTS_OPTS_INIT;
	struct repack r = { .repo = repo, .opts = opts, .shallow = OIDSET_INIT };
	struct pack_objects_names *written = &result->new_packs;
	char *base = NULL;
	int ret;

	memset(result, 0, sizeof(*result));
	if (opts->geometric && opts->all)
		return gp_error_set(err, GP_EINVAL, "options '--geometric' and '-A/-a' cannot be used together");
	if (opts->geometric < 0 || opts->geometric == 1)
		return gp_error_set(err, GP_EINVAL, "--geometric needs a factor of at least 2");
	ret = repo_odb(repo, &r.odb, err);
	if (ret)
		return ret;
	/*
	 * gc.recentObjectsHook counts only with an expiry; a hook that
	 * fails stops the repack before it has written anything.
	 */
	if ((opts->cruft && opts->has_cruft_expiration && opts->cruft_expiration) ||
	    (opts->loosen_unreachable && opts->unpack_unreachable)) {
		ret = reachable_recent_hook_tips(repo, &r.recent, &r.nr_recent, err);
		if (ret)
			return ret;
	}
	r.pack_dir = xstrfmt("%s/pack", odb_objdir(r.odb));
	/* What the old MIDX lists, as readers see it (not with core.multiPackIndex=false). */
	if (odb_midx(r.odb) && midx_open(&r.midx, r.pack_dir, repo->hash_algo, NULL))
		r.midx = NULL;
	collect_packs(&r);
	remove_stale_temporaries(&r);
	po_opts.window = opts->window;
	po_opts.depth = opts->depth;
	po_opts.threads = opts->threads;
	po_opts.big_file_threshold = opts->big_file_threshold;
	po_opts.delta_base_offset = true;
	po_opts.reuse_delta = opts->reuse_delta && opts->reuse_object;
	po_opts.reuse_object = opts->reuse_object;
	po_opts.progress = opts->progress;
	po_opts.max_pack_size = opts->max_pack_size;
	po_opts.by_path = opts->path_walk;
	po_opts.name_hash_version = opts->name_hash_version;
	r.po_opts = po_opts;
	pack_objects_new(&r.po, r.odb, &po_opts);

	if (opts->geometric)
		ret = choose_geometric(&r, err);
	else
		ret = choose_reachable(&r, !opts->all, err);
	if (!ret && opts->all && repo->promisor)
		ret = choose_promisor_all(&r, err);
	if (ret)
		goto out;
	/* The layers of the old chain stay as they are, and so do their packs. */
	for (size_t i = 0; opts->midx_incremental && opts->all && i < r.nr_packs; i++)
		r.packs[i].retained = r.packs[i].replaced && in_old_midx(&r, r.packs[i].pack);

	if (pack_objects_nr(r.po)) {
		struct bitmap_index *old_bitmap = NULL;
		struct gp_error ignored = GP_ERROR_INIT;
		int child_id;
		/*
		 * An all-into-one pack with a bitmap follows the current
		 * bitmap's order, so that its bitmap can be built from it
		 * (pack-objects.h); without one, or with a damaged one,
		 * the walk's order stands.
		 */
		if (opts->all && opts->write_bitmap &&
		    !bitmap_index_open(&old_bitmap, r.odb, &ignored))
			pack_objects_follow(r.po, bitmap_index_order(old_bitmap));
		gp_error_clear(&ignored);
		base = xstrfmt("%s/pack", r.pack_dir);
		child_id = trace_pack_options(opts, &po_opts, opts->geometric ? "--stdin-packs"
					      : opts->all ? "--all" : "--unpacked --incremental");
		ret = pack_objects_write_files(r.po, base, !opts->no_rev_index, written, err);
		trace_pack_done(child_id, ret);
		bitmap_index_free(old_bitmap);
		if (ret)
			goto out;
		/* The rest of the job needs only the new packs' indexes: give the memory back. */
		pack_objects_free(r.po);
		r.po = NULL;
		delta_islands_free(r.islands);
		r.islands = NULL;
		for (size_t k = 0; k < written->nr; k++) {
			ret = add_new_pack(&r, base, written->hex[k], err);
			if (ret)
				goto out;
		}
		if (opts->write_bitmap && !opts->write_midx && opts->all) {
			/* A pack bitmap must cover everything reachable: one pack. */
			if (objects_left_out(&r))
				result->bitmap_incomplete = true;
			else if (r.nr_new_packs == 1)
				ret = bitmap_write_for_pack_file(repo, r.new_packs[0]->idx_path,
								 opts->threads, opts->progress, err);
			else
				result->bitmap_skipped = true;
			if (ret)
				goto out;
		}
		/* A pack written again without a bitmap (or .rev) must not keep its old one. */
		for (size_t k = 0; k < r.nr_new_packs; k++) {
			char *bitmap;
			size_t len = strlen(r.new_packs[k]->idx_path) - strlen(".idx");
			if (opts->no_rev_index) {
				char *rev = xstrfmt("%.*s.rev", (int)len, r.new_packs[k]->idx_path);
				unlink(rev);
				free(rev);
			}
			if (opts->write_bitmap && !opts->write_midx && opts->all && r.nr_new_packs == 1 &&
			    !result->bitmap_incomplete)
				break;
			bitmap = xstrfmt("%.*s.bitmap", (int)len, r.new_packs[k]->idx_path);
			unlink(bitmap);
			free(bitmap);
		}
	}
	if (opts->filter && opts->all && !opts->geometric) {
		ret = write_filtered_pack(&r, result, err);
		if (ret)
			goto out;
	}
	if (r.po_promisor && pack_objects_nr(r.po_promisor)) {
		ret = write_promisor_pack(&r, result, err);
		if (ret)
			goto out;
	}
	for (size_t i = 0; i < r.nr_packs; i++)
		if (r.packs[i].replaced)
			result->nr_rolled++;
	if (opts->cruft && !opts->geometric) {
		if (!base)
			base = xstrfmt("%s/pack", r.pack_dir);
		ret = write_cruft_pack(&r, base, opts->has_cruft_expiration, opts->cruft_expiration,
				       true, result, err);
		/*
		 * --expire-to: what -d is about to prune (what the cruft
		 * pack just written left out) goes into a cruft pack
		 * there first, mtimes and all.
		 */
		if (!ret && opts->expire_to && opts->delete_old)
			ret = write_cruft_pack(&r, opts->expire_to, false, 0, false, result, err);
		if (ret)
			goto out;
	}
	if (opts->loosen_unreachable && opts->delete_old) {
		ret = loosen_unreachable(&r, result, err);
		if (ret)
			goto out;
		trace2_data_intmax("pack-objects", "loosen_unused_packed_objects/loosened",
				   result->nr_loosened);
	}
	if (opts->write_midx) {
		bool want_bitmap = opts->write_bitmap;
		/* -l beside an alternate: the MIDX cannot cover what is reachable. */
		if (want_bitmap && opts->local && odb_has_alternates(r.odb))
			want_bitmap = false;
		if (opts->write_bitmap && !want_bitmap)
			result->bitmap_incomplete = true;
		ret = opts->midx_incremental ? write_midx_incremental(&r, want_bitmap, err)
					     : write_midx(&r, want_bitmap, err);
		if (ret)
			goto out;
	}
	if (!opts->delete_old)
		goto out;
	/* Everything new is durable: now, and only now, remove what it replaces. */
	/* A MIDX that lists a pack about to go goes first (as git); others stay. */
	if (!opts->write_midx && result->nr_rolled) {
		const char **gone = xcalloc(r.nr_packs + 1, sizeof(*gone));
		size_t nr_gone = 0;
		for (size_t i = 0; i < r.nr_packs; i++)
			if (r.packs[i].replaced)
				gone[nr_gone++] = r.packs[i].pack->idx_path;
		midx_remove_if_listed(r.pack_dir, r.repo->hash_algo, gone, nr_gone);
		free(gone);
	}
	for (size_t i = 0; i < r.nr_packs; i++) {
		struct gp_error rm_err = GP_ERROR_INIT;
		if (!r.packs[i].replaced || r.packs[i].retained)
			continue;
		/* pack-remove.h: the .idx first, the .pack last */
		if (pack_remove(NULL, r.packs[i].pack->pack_path, &rm_err))
			gp_error_clear(&rm_err);
		result->nr_deleted++;
	}
	prune_packed(&r, result);
	if (oidset_size(&r.shallow))
		prune_shallow(&r);
out:
	oidset_release(&r.shallow);
	pack_objects_free(r.po);
	delta_islands_free(r.islands);
	pack_objects_free(r.po_promisor);
	for (size_t k = 0; k < r.nr_new_packs; k++)
		pack_free(r.new_packs[k]);
	free(r.new_packs);
	free(r.geo);
	free(r.geo_exclude);
	midx_free(r.midx);
	free(r.packs);
	free(r.pack_dir);
	free(r.recent);
	free(base);
	return ret;
}

void repack_result_release(struct repack_result *result)
{
	pack_objects_names_release(&result->new_packs);
}

static bool in_promisor_pack(struct odb *odb, const struct object_id *oid)
{
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct packed_git *p = odb_pack(odb, i);
		uint32_t idx_pos;
		if (p->is_promisor && pack_find_oid(p, oid, &idx_pos))
			return true;
	}
	return false;
}

int repack_promisor_links(struct repository *repo, const struct object_id *links,
			  size_t nr, struct gp_error *err)
{
	struct pack_objects_opts po_opts = PACK_OBJECTS_OPTS_INIT;
	struct pack_objects_filter filter = { .exclude_promisor = true };
	struct pack_objects_names names = { 0 };
	struct pack_objects *po = NULL;
	struct rev_walk *walk = NULL;
	struct odb *odb;
	char *base = NULL;
	size_t nr_tips = 0;
	int ret = repo_odb(repo, &odb, err);

	if (ret)
		return ret;
	odb_reprepare(odb);
	odb_set_missing_hook(odb, NULL, NULL);
	rev_walk_new(&walk, odb, repo->hash_algo);
	rev_walk_set_missing(walk, REV_MISSING_ALLOW, NULL, NULL);
	for (size_t i = 0; i < nr && !ret; i++) {
		if (!odb_has_object(odb, &links[i]) || in_promisor_pack(odb, &links[i]))
			continue;
		ret = rev_walk_add_tip(walk, &links[i], false, "", err);
		if (ret == GP_ENOTFOUND) {
			gp_error_clear(err);
			ret = 0;
			continue;
		}
		nr_tips++;
	}
	if (ret || !nr_tips)
		goto out;
	/* The walk stops at promisor objects: what lies beyond is the remote's. */
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct packed_git *p = odb_pack(odb, i);
		if (!p->is_promisor)
			continue;
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
			struct object_id oid;
			pack_nth_oid(p, idx_pos, &oid);
			rev_walk_mark_uninteresting(walk, &oid);
		}
	}
	po_opts.delta_base_offset = true;
	pack_objects_new(&po, odb, &po_opts);
	ret = pack_objects_add_walk(po, walk, &filter, err);
	if (ret || !pack_objects_nr(po))
		goto out;
	base = xstrfmt("%s/pack/pack", odb_objdir(odb));
	ret = pack_objects_write_files(po, base, true, &names, err);
	for (size_t k = 0; !ret && k < names.nr; k++)
		ret = write_empty_promisor(base, names.hex[k], err);
	odb_reprepare(odb);
out:
	pack_objects_names_release(&names);
	pack_objects_free(po);
	rev_walk_free(walk);
	free(base);
	return ret;
}
