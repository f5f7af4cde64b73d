/*
 * repack.h: the maintenance job (git repack's modes), done in-process.
 *
 * Modes:
 *   - incremental (neither all nor geometric): the reachable loose
 *     objects go into a new pack;
 *   - all-into-one (-a): every reachable object not in a kept pack goes
 *     into one new pack (-A: the unreachable objects of the packs it
 *     replaces are written loose first, so -d loses none of them);
 *   - cruft (--cruft): all-into-one, and what nothing reaches goes into
 *     a cruft pack (with or without -d, as git);
 *   - geometric (--geometric=N): packs are ordered by object count; the
 *     largest ones that already form a progression, each at least N
 *     times the next smaller, stay; the others and the loose objects are
 *     rolled into one new pack, and the rolled set grows (taking the
 *     smallest staying packs) until the new pack keeps the progression.
 *     Cruft packs take no part.
 * Kept packs (.keep files, .promisor files, keep_packs) are never rolled
 * up or deleted; with pack_kept_objects the objects of .keep packs are
 * copied into an all-into-one pack as well.
 *
 * Then, with write_midx, a MIDX over the packs that remain (cruft packs
 * as midx_must_contain_cruft says; the preferred pack chosen as git
 * does), with its bitmap when write_bitmap; else with write_bitmap a
 * pack bitmap for an all-into-one pack.
 *
 * Crash safety (delete_old): the new pack, .rev, .idx, bitmap and MIDX
 * are each written to a temporary file, fsynced and renamed into place
 * before any old file is removed; what is removed then is only packs
 * whose every object is in the new pack or stays elsewhere (and loose
 * objects that are in a pack, as git prune-packed), so a reader at any
 * moment, and a repository after a crash at any moment, has every
 * object it had.
 */
#ifndef GP_REPACK_H
#define GP_REPACK_H

#include "hash.h"
#include "pack-objects.h"

struct gp_error;
struct repository;
struct walk_filter;

struct repack_opts {
	bool all;               /* -a */
	bool loosen_unreachable;/* -A */
	bool delete_old;        /* -d */
	bool local;             /* -l */
	bool write_bitmap;      /* -b */
	bool bitmap_quiet;      /* the bitmap was not asked for (repack.writeBitmaps' default): no warnings */
	bool write_midx;        /* --write-midx */
	/*
	 * --write-midx=incremental: a new layer of the new packs on the
	 * chain; with --geometric the top layer is merged and layers
	 * compacted so that each is less than 1/midx_split_factor of the
	 * one below (git's plan); of the packs a MIDX lists, only those of
	 * the top layer roll up, and only when it has at least
	 * midx_new_layer_threshold packs. With all (-a -d), packs the old
	 * chain lists are not removed.
	 */
	bool midx_incremental;
	int midx_split_factor;        /* repack.midxSplitFactor: 2 or more */
	int midx_new_layer_threshold; /* repack.midxNewLayerThreshold: 1 or more */
	int geometric;          /* --geometric=N; 0: off */
	bool reuse_delta;       /* off: -f */
	bool reuse_object;      /* off: -F */
	int pack_kept_objects;  /* --pack-kept-objects; -1: when -b without --write-midx */
	int window, depth, threads;
	int name_hash_version;  /* the name hash the packs are written with: 1 or 2 */
	int name_hash_version_arg; /* --name-hash-version as given, for the trace; 0: none */
	uint64_t big_file_threshold;   /* core.bigFileThreshold (0: the default) */
	uint64_t max_pack_size;  /* --max-pack-size: several new packs; 0: one */
	const char *const *keep_packs;  /* --keep-pack names */
	size_t nr_keep_packs;
	bool progress;
	bool no_rev_index;      /* pack.writeReverseIndex=false: no .rev files */
	/*
	 * --cruft with delete_old: the unreachable objects of the packs
	 * replaced (and loose ones) go into a cruft pack (pack-mtimes.h)
	 * instead of being lost; those older than cruft_expiration (when
	 * set) are left out unless a newer one reaches them. Existing
	 * cruft packs of at least combine_cruft_below_size bytes (when not
	 * 0) stay as they are.
	 */
	bool cruft;
	bool has_cruft_expiration;
	int64_t cruft_expiration;
	uint64_t combine_cruft_below_size;
	uint64_t max_cruft_size;        /* --max-cruft-size; 0: max_pack_size */
	/*
	 * --expire-to (with cruft and delete_old): what the expiration
	 * leaves out goes into a cruft pack written with this prefix
	 * (say "../backup.git/objects/pack/pack") before -d prunes it.
	 */
	const char *expire_to;
	/* -k: unreachable objects of replaced packs, and loose ones, go into the new pack */
	bool keep_unreachable;
	/* -A: only objects of packs not older than this are loosened (0: all) */
	int64_t unpack_unreachable;
	/*
	 * --filter: what the filter leaves out of the new pack goes into
	 * a pack of its own, written with the prefix filter_to (a path
	 * such as "../other.git/objects/pack/pack") or beside the new one.
	 */
	const struct walk_filter *filter; /* walk-filter.h */
	const char *filter_to;
	/*
	 * -i (repack.useDeltaIslands): the new pack of reachable objects
	 * keeps deltas within the islands of pack.island (delta-islands.h);
	 * geometric roll-ups and cruft packs do not, as in git.
	 */
	bool delta_islands;
	bool path_walk;         /* --path-walk: the walk is traced as git's */
	/* repack.cruftWindow and friends: the cruft pack's delta search */
	int cruft_window, cruft_depth, cruft_threads;
	/*
	 * repack.midxMustContainCruft (default true): --write-midx lists
	 * the cruft packs. When false they are left out where git leaves
	 * them out, and a geometric roll-up then packs again what it
	 * reaches that only cruft packs hold (see choose_geometric()).
	 */
	bool midx_must_contain_cruft;
};

#define REPACK_OPTS_INIT { \
	.reuse_delta = true, .reuse_object = true, .pack_kept_objects = -1, \
	.window = 10, .depth = 50, .cruft_window = -1, .cruft_depth = -1, \
	.cruft_threads = -1, .midx_must_contain_cruft = true, \
	.midx_split_factor = 2, .midx_new_layer_threshold = 8, .name_hash_version = 1, \
}

struct repack_result {
	struct pack_objects_names new_packs; /* the packs written (several with max_pack_size) */
	bool bitmap_skipped;      /* -b -a: no bitmap, the new pack was cut in several */
	bool bitmap_incomplete;   /* -b -a: no bitmap, some objects stayed out of the pack */
	uint32_t nr_rolled;       /* packs rolled up into it (or replaced) */
	uint32_t nr_deleted;      /* packs deleted */
	uint32_t nr_loose_pruned; /* loose objects removed */
	uint32_t nr_loosened;     /* -A: objects written loose */
	bool wrote_cruft;         /* the last of new_packs is a cruft pack */
};

/*
 * Errors: GP_EINVAL (contradictory options), and those of pack writing,
 * MIDX and bitmap writing; on any error nothing old has been deleted.
 * Release result afterwards, on success and on failure.
 */
int repack_run(struct repository *repo, const struct repack_opts *opts,
	       struct repack_result *result, struct gp_error *err);
void repack_result_release(struct repack_result *result);

/*
 * index-pack --promisor, as git's: objects a received promisor pack
 * refers to (links: a commit's tree and parents, a tree's subtrees, a
 * tag's object) that the repository holds outside promisor packs would
 * otherwise be reached only through promisor objects, and a repack
 * would leave them out. They, and what they reach outside promisor
 * packs, are copied into a new promisor pack (with an empty .promisor
 * file). Nothing is fetched. Errors: those of walking and writing.
 */
int repack_promisor_links(struct repository *repo, const struct object_id *links,
			  size_t nr, struct gp_error *err);

#endif
