/*
 * packfile.h: reading packs (.pack) and their indexes (.idx v1 and v2),
 * as gitformat-pack describes them.
 *
 * A struct packed_git is opened from its .idx, whose whole shape is
 * validated at open (size implied by the object count, fanout
 * non-decreasing, names sorted, large-offset references in range). The
 * .pack is mapped on first use, and its header, object count and
 * trailing checksum are checked against the .idx then, along with every
 * stored offset. After that, lookups trust the validated tables.
 *
 * Opened with PACK_IDX_LAZY (a server's object store, which cannot read
 * every name of every .idx for each request), only the size and the
 * fanout are checked at open. A lookup that finds its name checks the
 * names beside it (in order: a name moved or swapped there would have
 * another's offset); one that misses checks its whole fanout bucket,
 * once, to be sure of the absence. The large-offset references are
 * checked by pack_open_pack(), before any offset is used. Damage found
 * so makes every later lookup fail (pack_idx_damage() says why);
 * pack_nth_offset() of an unchecked reference out of range is
 * UINT64_MAX, beyond any pack. verify-pack checks everything.
 *
 * Reading objects resolves OFS_DELTA and REF_DELTA chains (depth bounded
 * by PACK_MAX_DELTA_DEPTH) through a struct pack_reader, which holds a
 * per-thread inflater and a bounded cache of delta bases. A packed_git
 * may be shared between threads once pack_open_pack() has succeeded;
 * pack_reader may not.
 */
#ifndef GP_PACKFILE_H
#define GP_PACKFILE_H

#include "object.h"

struct gp_error;
struct inflater;

/* The pack header: "PACK" (PACK_SIGNATURE), version, object count. */
#define PACK_SIGNATURE 0x5041434bu
#define PACK_HEADER_SIZE 12
/* "\377tOc": the .idx v2 magic (idx v1 has none). */
#define PACK_IDX_SIGNATURE 0xff744f63u
/* Longer chains than this are treated as corrupt (or as a loop). */
#define PACK_MAX_DELTA_DEPTH 10000

/* One entry's header, as parsed from the pack. */
struct pack_entry_header {
	enum object_type type; /* as stored: may be OBJ_OFS/REF_DELTA */
	uint64_t size;         /* inflated size: object, or delta data */
	size_t hdr_len;        /* header bytes, including the base reference */
	uint64_t base_ofs;     /* OBJ_OFS_DELTA: pack offset of the base */
	struct object_id base_oid; /* OBJ_REF_DELTA: id of the base */
};

/*
 * Parse the entry header at buf[0..avail), which sits at pack offset
 * entry_ofs. Checks: a known type, the size varint fits 64 bits, the
 * header fits in avail, an OFS_DELTA base lies at or after the pack
 * header and before entry_ofs. Errors: GP_ECORRUPT ("at offset N: ...").
 * Cost: O(1), no allocation. Safe on arbitrary bytes.
 */
int pack_parse_entry_header(const unsigned char *buf, size_t avail,
			    uint64_t entry_ofs, int algo,
			    struct pack_entry_header *out, struct gp_error *err);

struct packed_git {
	char *pack_path;
	char *idx_path;
	int algo;
	uint32_t nr_objects;
	uint32_t idx_version;       /* 1 or 2 */

	/* the mapped .idx; the pointers below point into it */
	const unsigned char *idx_map;
	size_t idx_size;
	const unsigned char *fanout;    /* 256 big-endian counts */
	const unsigned char *oids;      /* v2: nr * rawsz; v1: entries */
	const unsigned char *crcs;      /* v2 only */
	const unsigned char *off32;     /* v2 only */
	const unsigned char *off64;     /* v2 only */
	uint32_t nr_large;

	/* the mapped .pack, after pack_open_pack() */
	const unsigned char *pack_map;
	size_t pack_size;
	bool pack_open;
	bool pack_failed;       /* opening failed once; do not retry */
	void *pack_lock;        /* guards lazy opening */

	/* pack order <-> idx order, after pack_load_revindex() */
	uint32_t *revindex;     /* pack_pos -> idx_pos */
	bool revindex_from_file;
	const unsigned char *rev_map; /* the mapped .rev, when used */
	size_t rev_size;

	/* PACK_IDX_LAZY: fanout buckets checked so far, and damage found */
	bool idx_lazy;
	uint64_t bucket_checked[4];
	bool idx_damaged;
	char *idx_damage;

	unsigned char pack_hash[GP_MAX_RAWSZ]; /* the pack checksum, from the .idx */
	bool is_keep;           /* a .keep file exists beside it */
	bool is_promisor;       /* a .promisor file exists beside it */
	uint64_t mtime;
};

/*
 * Open and validate the .idx at idx_path (whose pack is the same name
 * with .pack). Errors: GP_ENOTFOUND (no such file), GP_ECORRUPT, GP_EIO.
 * Cost: O(n) for validation.
 */
int pack_open_idx(struct packed_git **out, const char *idx_path, int algo,
		  struct gp_error *err);
enum pack_idx_flags {
	PACK_IDX_LAZY = 1 << 0,  /* check names and large offsets when used (see above) */
};
int pack_open_idx_flags(struct packed_git **out, const char *idx_path, int algo,
			unsigned flags, struct gp_error *err);
/*
 * What a lookup in a PACK_IDX_LAZY index found damaged (borrowed, valid
 * until pack_free()), or NULL.
 */
const char *pack_idx_damage(struct packed_git *p);
/*
 * Validate an idx image held in memory (no file); used by the fuzzer and
 * by show-index. The packed_git borrows buf until pack_free().
 */
int pack_parse_idx_buf(struct packed_git **out, const unsigned char *buf,
		       size_t len, const char *name, int algo,
		       struct gp_error *err);
/*
 * Map the .pack and check it against the idx (signature, version,
 * object count, trailing checksum equal to the idx's, every offset
 * inside the pack). Idempotent and thread-safe.
 */
int pack_open_pack(struct packed_git *p, struct gp_error *err);
void pack_free(struct packed_git *p);

/* idx_pos < nr_objects; O(1). */
void pack_nth_oid(const struct packed_git *p, uint32_t idx_pos,
		  struct object_id *oid);
const unsigned char *pack_nth_oid_raw(const struct packed_git *p,
				      uint32_t idx_pos);
uint64_t pack_nth_offset(const struct packed_git *p, uint32_t idx_pos);
/* v2 only; 0 for v1. */
uint32_t pack_nth_crc(const struct packed_git *p, uint32_t idx_pos);
/*
 * Binary search within the fanout bucket; O(log n). PACK_IDX_LAZY: a hit
 * also checks its neighbours, and the first miss in a bucket checks the
 * bucket, O(bucket); false when damaged.
 */
bool pack_find_oid(const struct packed_git *p, const struct object_id *oid,
		   uint32_t *idx_pos);

/*
 * Load the reverse index: the .rev beside the pack when present and
 * valid (version, hash id, size, trailing pack checksum; a bad .rev is
 * reported in err as a GP_ECORRUPT error), otherwise computed in memory
 * by sorting offsets. Thread-safe after the first successful call.
 */
int pack_load_revindex(struct packed_git *p, struct gp_error *err);
/* After pack_load_revindex(); pack_pos < nr_objects. */
uint32_t pack_pos_to_idx(const struct packed_git *p, uint32_t pack_pos);
uint64_t pack_pos_to_offset(const struct packed_git *p, uint32_t pack_pos);
/*
 * Ask the CPU for the .idx offset and CRC of pack_pos ahead of need: a
 * walk in pack order reads them scattered (the .idx is in name order).
 */
void pack_prefetch_pos(const struct packed_git *p, uint32_t pack_pos);
/* The end of the entry at pack_pos: the next entry, or the trailer. */
uint64_t pack_pos_to_end(const struct packed_git *p, uint32_t pack_pos);
/* The pack position of the entry starting at ofs; false if none. */
bool pack_offset_to_pos(const struct packed_git *p, uint64_t ofs,
			uint32_t *pack_pos);
/*
 * The same for an entry known to lie before pack position before (a
 * delta's base): searched backward from there, so a near base costs a
 * few lookups rather than log2(nr_objects) scattered ones.
 */
bool pack_offset_to_pos_before(const struct packed_git *p, uint64_t ofs, uint32_t before,
			       uint32_t *pack_pos);

/* Per-thread state for reading objects. */
struct pack_reader;
/* cache_limit: bytes of delta bases kept (0 = the default, 96 MiB). */
struct pack_reader *pack_reader_new(size_t cache_limit);
void pack_reader_free(struct pack_reader *r);
/* Change the limit (0 = the default), dropping the oldest bases beyond it. */
void pack_reader_set_cache_limit(struct pack_reader *r, size_t cache_limit);

/*
 * Read the object at pack offset ofs, resolving deltas. On success
 * *data is a malloc'd buffer of *size bytes plus a NUL (caller frees).
 * Errors: GP_ECORRUPT (with "PACK: at offset N: ..."), GP_ENOTFOUND for
 * a REF_DELTA base that is not in this pack, GP_ENOMEM for an object too
 * large to allocate.
 */
int pack_read_object(struct pack_reader *r, struct packed_git *p, uint64_t ofs,
		     enum object_type *type, unsigned char **data, size_t *size,
		     struct gp_error *err);

/*
 * The entry at ofs as stored: its header, and its inflated data (for a
 * delta, the delta itself; *data is malloc'd, NUL-terminated, hdr->size
 * bytes). Errors as pack_read_object().
 */
int pack_read_entry(struct pack_reader *r, struct packed_git *p, uint64_t ofs,
		    struct pack_entry_header *hdr, unsigned char **data,
		    struct gp_error *err);

/*
 * Type and inflated size without inflating whole objects: for a delta,
 * only the delta's size header is inflated, and the type comes from the
 * end of the chain. delta_base is the base of a delta (else a null id)
 * and is looked up only when want_delta_base (an OFS_DELTA's base name
 * needs the reverse index). disk_size is left 0: see odb.h.
 */
struct pack_object_info {
	enum object_type type;
	uint64_t size;
	uint64_t disk_size;
	struct object_id delta_base;
};
int pack_object_info(struct packed_git *p, uint64_t ofs,
		     struct pack_object_info *info, bool want_delta_base,
		     struct gp_error *err);

/*
 * Let the kernel take back the pages of the mapped .pack that this
 * process has touched (they stay in the page cache; touching them again
 * maps them again). For long sweeps over big packs, whose touched pages
 * would otherwise all count as this process's memory. Safe while other
 * threads read the pack.
 */
/* The same for the pages of bytes [from, to) only. */
void pack_drop_range(struct packed_git *p, uint64_t from, uint64_t to);
void pack_drop_pages(struct packed_git *p);

/*
 * Map a whole file read-only, as packs, indexes and bitmaps are read
 * (*map is NULL for an empty file; *mtime, when not NULL, gets its
 * mtime). Errors: GP_ENOTFOUND (no such file), GP_EIO.
 */
int map_file_readonly(const char *path, const unsigned char **map, size_t *size,
		      uint64_t *mtime, struct gp_error *err);

#endif
