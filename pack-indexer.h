/*
 * pack-indexer.h: what index-pack does: read a .pack, find every entry,
 * resolve every delta, name every object, and produce the data for its
 * .idx and .rev (written through pack-write.h and pack-revindex.h).
 *
 * Two passes over the mapped pack:
 *  1. in pack order, parse each entry header, inflate its data to find
 *     where it ends (and to check it), CRC-32 the raw entry, and hash
 *     every whole (non-delta) object. The pack checksum is computed in
 *     parallel by a second thread.
 *  2. resolve deltas in threads: each thread takes a whole object and
 *     walks the tree of deltas based on it (OFS_DELTA children by offset,
 *     REF_DELTA children by name), depth first, keeping the bases on its
 *     stack within a memory budget (bases beyond it are dropped and
 *     rebuilt from the pack when needed).
 *
 * Every byte of the pack is untrusted: all errors name the pack file and
 * the offset of the entry, and nothing is written on failure.
 */
#ifndef GP_PACK_INDEXER_H
#define GP_PACK_INDEXER_H

#include "pack-write.h"
#include "hash.h"

struct gp_error;
struct strbuf;

/*
 * Called for every object of the pack once it is named (whole objects
 * in pass 1, deltas as they resolve), with its real type and content.
 * Calls are serialised (never two at once) but may come from any
 * thread. A non-zero return stops indexing and is returned by
 * pack_index(), with the message the callback put in err.
 */
typedef int pack_object_fn(void *cb_data, const struct object_id *oid,
			   enum object_type type, const unsigned char *data,
			   size_t size, struct gp_error *err);
/*
 * For --fix-thin: the content of a delta base the pack lacks, read
 * from the repository (*data malloc'd, caller of the callback frees).
 * Returns 0, GP_ENOTFOUND when the repository lacks it too, or another
 * error, which stops indexing.
 */
typedef int pack_base_fn(void *cb_data, const struct object_id *oid,
			 enum object_type *type, unsigned char **data,
			 size_t *size, struct gp_error *err);

struct pack_indexer_opts {
	int algo;
	int threads;          /* 0: one per online CPU */
	bool keep_stats;      /* fill sizes/depths/bases for verify-pack -v */
	bool progress;        /* meters on stderr */
	/* the title of pass 1's meter (NULL: "Indexing objects"; "": none) */
	const char *progress_title;
	size_t base_budget;   /* bytes of delta bases per thread; 0 = default */
	pack_object_fn *each_object;   /* optional */
	/*
	 * Optional: a thin pack is completed (git's --fix-thin) by
	 * appending the bases read_base finds, stored whole and deflated
	 * at compression (a zlib level, -1 the default), to the pack file,
	 * which is then rewritten in place (its object count and its
	 * checksum). Without it, a thin pack is GP_ENOTFOUND.
	 */
	pack_base_fn *read_base;
	int compression;
	void *cb_data;
};

#define PACK_INDEXER_OPTS_INIT { .algo = GP_HASH_SHA1, .compression = -1 }

/* The result, in pack order (pack_pos = order of entries in the pack). */
struct indexed_pack {
	int algo;
	uint32_t nr;
	uint32_t version;            /* pack version, 2 or 3 */
	unsigned char pack_hash[GP_MAX_RAWSZ];
	uint64_t *offsets;           /* nr + 1: entry starts, then the trailer */
	uint32_t *crcs;
	unsigned char *oids;         /* nr * rawsz */
	uint8_t *types;              /* as stored (may be a delta type) */
	uint8_t *real_types;         /* the resolved object type */
	uint32_t *by_name;           /* by_name[idx_pos] = pack_pos */
	uint32_t nr_deltas;
	uint32_t nr_appended;        /* bases appended by read_base (the last ones) */
	/* only with keep_stats: */
	uint64_t *sizes;             /* size in the entry header */
	uint32_t *depths;            /* delta chain length, 0 for whole objects */
	uint32_t *bases;             /* pack_pos of the delta base */
};

/*
 * Index the pack at pack_path. Errors: GP_ECORRUPT (message names the
 * file and offset), GP_ENOTFOUND (unresolved deltas: a thin pack),
 * GP_EIO, GP_ENOMEM, or what a callback returned.
 */
int pack_index(const char *pack_path, const struct pack_indexer_opts *opts,
	       struct indexed_pack **out, struct gp_error *err);
void indexed_pack_free(struct indexed_pack *ip);

/*
 * Copy one pack from in_fd to out_fd, reading exactly the pack and no
 * more than PACK_SPOOL_BUFSZ beyond it: its header (or, when header is
 * not NULL, the PACK_HEADER_SIZE bytes given, which the caller already
 * read: git's --pack_header), every entry (each zlib stream inflated to
 * find its end) and the trailing checksum. What was read past the
 * trailer is left in *rest (caller frees; *rest_len may be 0). Errors:
 * GP_ECORRUPT ("early EOF", a bad entry: offset given), GP_EINVAL
 * (more than max_size bytes, unless max_size is 0: "pack exceeds
 * maximum allowed size"), GP_EIO. The pack's checksum is not checked
 * here: pack_index() does that.
 */
#define PACK_SPOOL_BUFSZ ((size_t)64 << 10)
struct pack_spool_opts {
	int algo;
	const unsigned char *header;
	uint64_t max_size;
	const char *progress_title;   /* NULL: no meter */
};
int pack_spool(int in_fd, int out_fd, const struct pack_spool_opts *opts,
	       unsigned char **rest, size_t *rest_len, uint64_t *pack_len,
	       struct gp_error *err);

/* Write the .idx (to path, or into mem when mem is not NULL). */
int indexed_pack_write_idx(const struct indexed_pack *ip, const char *path,
			   struct strbuf *mem, const struct pack_idx_opts *opts,
			   struct gp_error *err);
/* Write the .rev beside it. */
int indexed_pack_write_rev(const struct indexed_pack *ip, const char *path,
			   struct gp_error *err);

#endif
