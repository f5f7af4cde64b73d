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

struct pack_indexer_opts {
	int algo;
	int threads;          /* 0: one per online CPU */
	bool keep_stats;      /* fill sizes/depths/bases for verify-pack -v */
	bool progress;        /* meters on stderr */
	size_t base_budget;   /* bytes of delta bases per thread; 0 = default */
};

#define PACK_INDEXER_OPTS_INIT { .algo = GP_HASH_SHA1 }

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
	/* only with keep_stats: */
	uint64_t *sizes;             /* size in the entry header */
	uint32_t *depths;            /* delta chain length, 0 for whole objects */
	uint32_t *bases;             /* pack_pos of the delta base */
};

/*
 * Index the pack at pack_path. Errors: GP_ECORRUPT (message names the
 * file and offset), GP_ENOTFOUND (unresolved deltas: a thin pack),
 * GP_EIO, GP_ENOMEM.
 */
int pack_index(const char *pack_path, const struct pack_indexer_opts *opts,
	       struct indexed_pack **out, struct gp_error *err);
void indexed_pack_free(struct indexed_pack *ip);

/* Write the .idx (to path, or into mem when mem is not NULL). */
int indexed_pack_write_idx(const struct indexed_pack *ip, const char *path,
			   struct strbuf *mem, const struct pack_idx_opts *opts,
			   struct gp_error *err);
/* Write the .rev beside it. */
int indexed_pack_write_rev(const struct indexed_pack *ip, const char *path,
			   struct gp_error *err);

#endif
