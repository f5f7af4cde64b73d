/*
 * pack-write.h: writing pack indexes (.idx v1 and v2) and their
 * reverse indexes, shared by index-pack and (later) pack-objects.
 *
 * The objects are described by parallel arrays indexed by "entry
 * number" (any stable numbering; index-pack uses pack order) and a
 * permutation giving the entries in name order.
 */
#ifndef GP_PACK_WRITE_H
#define GP_PACK_WRITE_H

#include "object.h"

struct gp_error;
struct strbuf;

struct pack_idx_input {
	int algo;
	uint32_t nr;
	const uint32_t *by_name;    /* by_name[idx_pos] = entry number */
	const unsigned char *oids;  /* entry number * rawsz */
	const uint64_t *offsets;    /* by entry number */
	const uint32_t *crcs;       /* by entry number */
	const unsigned char *pack_hash;
};

struct pack_idx_opts {
	uint32_t version;     /* 1 or 2 (the default) */
	/*
	 * v2: offsets above this go to the 64-bit table (git's
	 * --index-version=2,<offset>); offsets of 2^31 and above always do.
	 */
	uint64_t off32_limit;
};

#define PACK_IDX_OPTS_INIT { .version = 2, .off32_limit = 0x7fffffff }

/* "<version>[,<offset>]" as --index-version takes it; false when malformed. */
bool pack_idx_opts_parse(const char *arg, struct pack_idx_opts *out);

/*
 * Write the .idx to path atomically (hashfile.h), or into mem when mem
 * is not NULL (path unused). Errors: GP_EINVAL (v1 cannot hold an offset
 * of 2^32 or more), GP_EIO.
 */
int pack_write_idx(const char *path, struct strbuf *mem,
		   const struct pack_idx_input *in,
		   const struct pack_idx_opts *opts, struct gp_error *err);

/*
 * Writing a pack by copying objects out of existing packs: each object
 * keeps its stored representation where it can (whole objects, and
 * deltas whose base entry is written earlier into the same new pack,
 * as OFS_DELTA with the distance recomputed; REF_DELTAs whose base is
 * in the new pack). Every copied entry's CRC-32 is checked against its
 * source .idx first. A delta whose base does not come along is rebuilt
 * and stored whole. Then the .pack, the .rev and the .idx are written
 * (in that order, each atomically and durably) as pack-<hash>.* in
 * pack_dir, and hex_out receives the pack's name.
 */
struct packed_git;
struct pack_reader;
struct progress;

struct pack_copy_entry {
	struct packed_git *pack;   /* opened (pack_open_pack) */
	uint64_t ofs;
};

/*
 * entries are in the order to write them. Errors: GP_ECORRUPT (a source
 * entry is damaged: names the pack and offset), GP_EIO, GP_ENOMEM.
 */
int pack_write_by_copy(const char *pack_dir, int algo,
		       const struct pack_copy_entry *entries, uint32_t nr,
		       struct pack_reader *reader, struct progress *progress,
		       char *hex_out, struct gp_error *err);

/*
 * Finish a pack written into f (hashfile_create() beside the final
 * name): append its checksum, install <dir>/<prefix>-<hash>.pack, then
 * write the .rev (when write_rev), the .mtimes (when mtimes is not NULL:
 * a cruft pack) and the .idx, each atomic and durable, the .idx last
 * since it is what makes the pack visible to readers. The objects are
 * given by entry number (oids, offsets in the pack, CRC-32s of the
 * entries, mtimes). idx_opts (NULL: the default) says which .idx
 * version to write. hex_out receives the hash. Frees f. Errors: GP_EIO.
 */
struct hashfile;
int pack_write_finish(struct hashfile *f, const char *dir, const char *prefix,
		      int algo, const unsigned char *oids, const uint64_t *offsets,
		      const uint32_t *crcs, const uint32_t *mtimes, uint32_t nr,
		      bool write_rev, const struct pack_idx_opts *idx_opts,
		      char *hex_out, struct gp_error *err);

/* The pack header (signature, version 2, nr objects): PACK_HEADER_SIZE bytes. */
#define PACK_HEADER_SIZE 12
void pack_encode_header(unsigned char *out, uint32_t nr);

/* The type-and-size header of a pack entry; returns its length (<= 16). */
size_t pack_encode_entry_header(unsigned char *out, enum object_type type, uint64_t size);
/* An OFS_DELTA's distance to its base, as gitformat-pack encodes it (<= 16). */
size_t pack_encode_ofs_distance(unsigned char *out, uint64_t dist);

/*
 * Sort entry numbers by object name (radix sort on the leading bytes,
 * ties settled by the whole name; equal names keep entry order).
 * Returns by_name; caller frees. O(n).
 */
uint32_t *pack_sort_by_name(const unsigned char *oids, uint32_t nr, int algo);

#endif
