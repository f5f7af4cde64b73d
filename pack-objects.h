/*
 * pack-objects.h: writing a pack of chosen objects (gitformat-pack), as
 * git pack-objects does: the object list, the choice of each object's
 * representation, the delta search, the write order, and the files.
 *
 * Representation, per object:
 *   - a delta stored in a pack is copied verbatim (no inflate, no
 *     deflate) when its base goes into the new pack too, unless
 *     reuse_delta is off; cycles among such deltas (an object stored in
 *     two packs as a delta of each other) and chains deeper than depth
 *     are cut;
 *   - every other object larger than a few bytes takes part in the delta
 *     search: objects are grouped by type, name hash and size (largest
 *     first), and each tries the window of objects before it as bases,
 *     on several threads, keeping the smallest delta whose chain stays
 *     within depth;
 *   - the rest are stored whole, copied compressed from their pack when
 *     reuse_object is on, else deflated at the chosen level.
 *
 * Write order: the order objects were added (callers add them in
 * recency order, as rev-list lists them; see pack_objects_follow() for
 * the exception), except that a delta's base is always written before
 * it, and that with a core island (pack_objects_set_islands()) its
 * objects go first.
 *
 * Files: the pack is streamed to a file descriptor, or written as
 * <base>-<hash>.pack with its .idx and .rev, each atomic and durable,
 * the .idx last (hashfile.h).
 */
#ifndef GP_PACK_OBJECTS_H
#define GP_PACK_OBJECTS_H

#include "hashfile.h"
#include "object.h"

struct gp_error;
struct odb;
struct packed_git;
struct pack_objects;

struct pack_objects_opts {
	int window;              /* --window (default 10); 0: no delta search */
	int depth;               /* --depth (default 50) */
	int compression;         /* zlib level, -1 for the default */
	int threads;             /* 0: one per CPU */
	bool delta_base_offset;  /* OFS_DELTA rather than REF_DELTA */
	bool reuse_delta;        /* off: --no-reuse-delta (-f) */
	bool reuse_object;       /* off: --no-reuse-object (-F) */
	bool progress;           /* meters on stderr */
	bool no_write_progress;  /* but not "Writing objects" (git's --stdout) */
	/*
	 * --max-pack-size: pack_objects_write_files() cuts the output into
	 * packs of at most this many bytes (one object larger than that
	 * gets a pack of its own); 0: one pack. A delta whose base landed
	 * in an earlier pack is stored whole.
	 */
	uint64_t max_pack_size;
	/*
	 * How a path is hashed to group likely delta pairs: 1 (git's
	 * default, bitmap_name_hash(): the last 16 characters weigh
	 * most) or 2 (each directory level salts the hash too, so that
	 * same-named files of different directories part).
	 */
	int name_hash_version;
	bool by_path;            /* --path-walk: the meter says so */
	/*
	 * core.bigFileThreshold: a larger object is neither a delta nor a
	 * base (readers with a small allocation limit, as git's, can read
	 * it whole); 0 means git's default, 512 MiB.
	 */
	uint64_t big_file_threshold;
	/* --index-version: the .idx version (0: the default) and offset limit */
	uint32_t idx_version;
	uint64_t idx_off32_limit;
};

#define PACK_OBJECTS_OPTS_INIT { \
	.window = 10, .depth = 50, .compression = -1, \
	.reuse_delta = true, .reuse_object = true, .name_hash_version = 1, \
}
/* Git's floor for --max-pack-size (smaller values are raised to it). */
#define PACK_OBJECTS_MIN_PACK_SIZE ((uint64_t)1 << 20)

/*
 * Lowers odb's delta base cache to PACK_OBJECTS_CACHE_LIMIT: the walks
 * that feed a pack read each tree once, and measured on 524k objects they
 * run as fast with 16 MiB of cached bases as with 96, while the other 80
 * would count in the peak memory of the whole job.
 */
#define PACK_OBJECTS_CACHE_LIMIT ((size_t)16 << 20)
int pack_objects_new(struct pack_objects **out, struct odb *odb,
		     const struct pack_objects_opts *opts);
void pack_objects_free(struct pack_objects *po);

/*
 * Add an object; adding one twice keeps the first. name is the path it
 * was reached by (NULL or "" when none), which groups it with its
 * likely delta bases. type may be OBJ_NONE when unknown (it is then
 * looked up). Cheap: the object is located later.
 */
void pack_objects_add(struct pack_objects *po, const struct object_id *oid,
		      enum object_type type, const char *name);
/* The name hash of path for opts' name_hash_version. */
uint32_t pack_objects_name_hash(const struct pack_objects *po, const char *path);
/* The same, with a name hash computed earlier (bitmap_name_hash()). */
void pack_objects_add_hashed(struct pack_objects *po, const struct object_id *oid,
			     enum object_type type, uint32_t name_hash);
/*
 * A thin pack's preferred base (git's --thin): an object the receiver
 * has, which new and reused deltas may use as their base (then always
 * stored as REF_DELTA) but which is not itself written. Ignored when
 * oid was added already.
 */
void pack_objects_add_base(struct pack_objects *po, const struct object_id *oid,
			   enum object_type type, uint32_t name_hash);
/*
 * Add an object with the stored copy to read it from: the entry at ofs
 * of pack p (one of the odb's packs), as --stdin-packs takes each object
 * from the pack it was named by. Otherwise as pack_objects_add_hashed().
 */
void pack_objects_add_packed(struct pack_objects *po, const struct object_id *oid,
			     enum object_type type, uint32_t name_hash,
			     struct packed_git *p, uint64_t ofs);
/*
 * Give an object added earlier (without a name) the name hash of the
 * path a later walk reached it by; false when oid was not added.
 */
bool pack_objects_set_name_hash(struct pack_objects *po, const struct object_id *oid,
				uint32_t name_hash);
bool pack_objects_has(const struct pack_objects *po, const struct object_id *oid);
/* The number of objects to write (preferred bases aside). */
uint32_t pack_objects_nr(const struct pack_objects *po);

struct bitmap_order;
/*
 * Write the objects that order (the repository's current bitmap order,
 * pack-bitmap.h) lists after the others, in its order; the others keep
 * theirs. For an all-into-one pack with a bitmap: its bitmap can then
 * take the old one's bits over in long runs instead of reading every
 * tree again (pack-bitmap-write.c), and the old order was recency
 * order already. order must stay valid until the pack is written.
 */
void pack_objects_follow(struct pack_objects *po, const struct bitmap_order *order);

struct delta_islands;
/*
 * Keep deltas within islands (delta-islands.h): a stored delta is
 * reused, and the search takes a base, only when the base is in every
 * island of the object; the search sorts objects in more islands
 * first; the core island's objects are written first. The islands are
 * computed over the objects added, when writing begins. islands is
 * borrowed and must outlive the writing; set it before adding objects
 * from a bitmap, which then copies nothing verbatim (a stored delta
 * still reused goes through the same check).
 */
void pack_objects_set_islands(struct pack_objects *po, struct delta_islands *islands);

/*
 * Which objects the enumerations below leave out, as git pack-objects'
 * options of the same names.
 */
struct pack_objects_filter {
	bool unpacked;          /* --unpacked, --incremental: packed objects */
	bool local;             /* --local: objects of alternates */
	bool honor_pack_keep;   /* objects in a pack with a .keep file */
	const char *const *keep_packs; /* --keep-pack: pack names ("pack-X.pack") */
	size_t nr_keep_packs;
	bool exclude_promisor;  /* --exclude-promisor-objects: objects of .promisor packs */
	/* --unpacked=<pack>: packs whose objects count as unpacked ("pack-X.pack") */
	const char *const *unpacked_packs;
	size_t nr_unpacked_packs;
};

bool pack_objects_filtered(struct pack_objects *po, const struct pack_objects_filter *f,
			   const struct object_id *oid);

struct rev_walk;
/*
 * Run walk (its tips added) with REV_OBJECTS and add what it lists that
 * f keeps, in its order (recency), with the paths as names. Errors:
 * those of rev_walk_run().
 */
int pack_objects_add_walk(struct pack_objects *po, struct rev_walk *walk,
			  const struct pack_objects_filter *f, struct gp_error *err);

/*
 * --thin: after pack_objects_add_walk(), add as preferred bases the
 * objects that the walk's edges (the receiver's commits next to the
 * ones sent; at most window of them) hold at the paths of the trees and
 * blobs being packed. Errors: GP_ECORRUPT.
 */
int pack_objects_add_thin_bases(struct pack_objects *po, struct rev_walk *walk,
				struct gp_error *err);

/*
 * The "-<oid>" lines of an object list: objects the receiver has, as
 * preferred bases; a tree (or a commit or tag, for the tree it leads to,
 * as git takes them) brings what it holds at the paths of the objects
 * added so far. Objects the repository lacks are skipped.
 */
int pack_objects_add_preferred_bases(struct pack_objects *po, const struct object_id *oids,
				     size_t nr, struct gp_error *err);

/*
 * --include-tag: add the annotated tag oid (and the tags it points at on
 * the way) when what it finally points at is packed. Nothing happens
 * for a ref that is no annotated tag. Errors: GP_ECORRUPT.
 */
int pack_objects_include_tag(struct pack_objects *po, const struct object_id *oid,
			     struct gp_error *err);

/*
 * git's --cruft: the unreachable objects, for a cruft pack (with a
 * .mtimes file, pack-mtimes.h). The caller has put every reachable
 * object into packs that stay; discard names the packs that will go
 * ("pack-X.pack"), stay some that stay (every pack named must exist:
 * GP_ENOTFOUND "could not find pack"). The candidates are the objects of the discarded
 * packs and the loose ones that no other pack holds, each with its
 * mtime (from a cruft pack's .mtimes, else its pack's or loose file's,
 * the newest when it is in several places). With expiration (seconds
 * since the epoch; 0: never), candidates older than it are left out
 * unless a candidate that is kept reaches them. Errors: GP_ECORRUPT,
 * GP_EIO.
 */
int pack_objects_add_cruft(struct pack_objects *po, const char *const *stay, size_t nr_stay,
			   const char *const *discard, size_t nr_discard, int64_t expiration,
			   struct gp_error *err);
/*
 * Before pack_objects_add_cruft(): objects to treat as recent whatever
 * their age (gc.recentObjectsHook, reachable_recent_hook_tips()): with
 * an expiration, they and what they reach among the candidates stay.
 * tips is borrowed until then; names that are not in the repository
 * are ignored.
 */
void pack_objects_set_recent(struct pack_objects *po, const struct object_id *tips, size_t nr);

/*
 * --keep-unreachable: every object of the repository's own packs that f
 * does not leave out (kept packs, promisor packs), reachable or not.
 */
int pack_objects_add_unreachable(struct pack_objects *po, const struct pack_objects_filter *f,
				 struct gp_error *err);

/*
 * --unpack-unreachable: after the pack is written, write loose every
 * object of the repository's own packs (kept ones aside) that was not
 * packed and is not loose already, when its pack is not older than
 * since (0: whatever its age), so that deleting those packs loses
 * nothing that has not expired. Errors: those of reading and writing
 * objects.
 */
int pack_objects_loosen_unreachable(struct pack_objects *po, const struct pack_objects_filter *f,
				    int64_t since, struct gp_error *err);

/*
 * Every object of the packs include that none of the packs exclude
 * holds (alternates' packs too), pack by pack, each in pack order,
 * without names (stdin_packs_add_objects() of stdin-packs.h gives them
 * the names of a walk). Errors: GP_ECORRUPT.
 */
int pack_objects_add_pack_list(struct pack_objects *po, struct packed_git *const *include,
			       size_t nr_include, struct packed_git *const *exclude,
			       size_t nr_exclude, struct gp_error *err);

struct bitmap_index;
struct bitmap_result;
/* git's pack.allowPackReuse */
enum pack_reuse {
	PACK_REUSE_NONE = 0,
	PACK_REUSE_SINGLE,   /* the bitmapped pack, or the MIDX's preferred one */
	PACK_REUSE_MULTI,    /* every pack of the MIDX's BTMP chunk */
};
struct config_set;
/*
 * git's pack.allowPackReuse (true or "single", "multi", false; unset:
 * multi under feature.experimental, else single) into *out. Errors:
 * GP_EINVAL "invalid value for pack.allowPackReuse: '<v>'".
 */
int pack_reuse_config(const struct config_set *cs, enum pack_reuse *out, struct gp_error *err);

struct bitmap_tip;
/*
 * Count with the repository's bitmaps, as git does for a pack to send:
 * the objects tips reach (less what the uninteresting ones reach) are
 * added as pack_objects_add_from_bitmap() adds them, with an
 * "Enumerating objects" meter when progress. 0: done, *bi_out and
 * *res_out must outlive the writing (free them after); 1: the bitmaps
 * cannot answer (none, or a tip they do not cover that the walk must
 * reach), nothing was added; or an error of adding.
 */
int pack_objects_count_bitmapped(struct pack_objects *po, struct odb *odb,
				 const struct bitmap_tip *tips, size_t nr_tips,
				 enum pack_reuse reuse, bool thin, bool progress,
				 struct bitmap_index **bi_out, struct bitmap_result **res_out,
				 struct gp_error *err);

/*
 * Add the objects of a bitmap query (pack-bitmap.h), with the name
 * hashes the bitmap caches. With reuse, objects of the reusable packs
 * that are sent are copied as stored (git's verbatim pack reuse: a
 * delta only with its base; offset deltas' distances rewritten), first
 * in the new pack; only for one pack written whole (no max_pack_size).
 * With thin, a stored delta whose base the receiver has (res's
 * uninteresting side) is kept as a delta against it. bi and res must
 * outlive the writing.
 */
int pack_objects_add_from_bitmap(struct pack_objects *po, struct bitmap_index *bi,
				 const struct bitmap_result *res, enum pack_reuse reuse, bool thin,
				 struct gp_error *err);

/* Every loose object of the repository's own objects directory that no pack holds. */
int pack_objects_add_loose_unpacked(struct pack_objects *po, struct gp_error *err);

/* Every loose object of the repository's own objects directory. */
int pack_objects_add_loose(struct pack_objects *po, struct gp_error *err);

/*
 * Write the pack to fd (a stream: nothing is synced; max_pack_size must
 * be 0, else GP_EINVAL). Errors: GP_ENOTFOUND
 * (an added object is missing: the message names it), GP_ECORRUPT (a
 * source pack or loose object is damaged: file and offset), GP_EIO.
 */
int pack_objects_write_fd(struct pack_objects *po, int fd, struct gp_error *err);

/*
 * The same, with the bytes going to out() (hashfile.h): a side-band
 * framer, a socket, a cache tee. A failure of out() is GP_EIO; its own
 * message is the callback's to keep.
 */
int pack_objects_write_fn(struct pack_objects *po, hashfile_out_fn *out, void *data,
			  struct gp_error *err);

/* The hashes of the packs one write produced, in the order written. */
struct pack_objects_names {
	char (*hex)[GP_MAX_HEXSZ + 1];
	size_t nr, alloc;
};
void pack_objects_names_release(struct pack_objects_names *names);

/*
 * Write <base>-<hash>.pack, .rev (unless !write_rev) and .idx (several
 * such packs with max_pack_size), each installed as soon as it is
 * complete, and append their hashes to names. When every file already
 * exists (the same objects, written the same way) they are kept.
 * Errors as pack_objects_write_fd(); the packs completed before the
 * error stay, as whole packs.
 */
int pack_objects_write_files(struct pack_objects *po, const char *base, bool write_rev,
			     struct pack_objects_names *names, struct gp_error *err);

/* What the last write did, for "Total N (delta D), reused R (delta RD)". */
struct pack_objects_stats {
	uint32_t total, deltas, reused, reused_deltas;
	uint32_t pack_reused;        /* sent verbatim from stored packs */
	uint32_t pack_reused_packs;  /* from how many packs */
};
void pack_objects_stats(const struct pack_objects *po, struct pack_objects_stats *out);

#endif
