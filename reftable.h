/*
 * reftable.h: reading git's reftable ref storage, read-only (git's
 * Documentation/technical/reftable.adoc).
 *
 * A repository with extensions.refStorage = reftable keeps its refs and
 * reflogs in a stack of immutable table files in <dir>/reftable/,
 * listed oldest first, one name a line, in <dir>/reftable/tables.list.
 * Newer tables shadow older ones: for each key the record of the newest
 * table that has one counts, and a deletion record hides the key. This
 * module parses one table from a buffer (so that the parser can be
 * fuzzed), opens stacks, and iterates over one table or over the merged
 * view of a stack. refs.c puts git's ref semantics on top (symbolic refs,
 * worktrees, broken refs, special refs); nothing here knows them.
 *
 * Table layout (integers big-endian; varints as ofs-delta's):
 *
 *   0       4   "REFT"
 *   4       1   version: 1 (SHA-1 only) or 2
 *   5       3   block_size: blocks are padded to it (0: unaligned)
 *   8       8   min_update_index
 *   16      8   max_update_index
 *   24      4   version 2 only: hash id, "sha1" or "s256"
 *   ...         ref blocks 'r', ref index 'i', obj blocks 'o', obj
 *               index 'i', log blocks 'g', log index 'i' (each optional)
 *   len-F   F   footer (F = 68 for version 1, 72 for 2): the header
 *               again, then ref_index_position, obj_position << 5 |
 *               obj_id_len, obj_index_position, log_position,
 *               log_index_position (8 bytes each, 0 when absent), and
 *               the CRC-32 of the footer's other bytes
 *
 * A block: type (1), block_len (3), records, restart offsets (3 each,
 * ascending, each the offset of a record whose key is not prefix
 * compressed), restart_count (2), then NUL padding up to block_size.
 * The block at offset 0 also holds the file header: its block_len and
 * restart offsets count from the start of the file. A log block is not
 * padded, its contents after the 4-byte header are one zlib stream, and
 * its block_len is the inflated size.
 *
 * A record: varint prefix_length, varint (suffix_length << 3 | type),
 * suffix (key = previous key's first prefix_length bytes + suffix), then
 *  - in a ref block: varint update_index_delta (from min_update_index),
 *    and by type: 0 deletion, 1 an id, 2 an id and its peeled id,
 *    3 a symbolic ref (varint length, target);
 *  - in an index block: type 0, varint block_position (of the block
 *    whose last key this is; another index block or a leaf);
 *  - in a log block, whose keys are "refname NUL reverse_int64
 *    (update_index)": type 0 deletion, or 1: old id, new id, name and
 *    email (varint length first), varint time, int16 tz offset
 *    (minutes), message (varint length first).
 * Keys increase strictly through each section.
 *
 * What is checked: at open, the whole header and footer (magic, version,
 * block size, hash id, CRC, that the footer repeats the header) and the
 * positions of the sections (inside the file, in order); then each block
 * as it is read (its bounds, its restart table) and each record as it is
 * decoded (every length against the block, prefix lengths, key order,
 * value types, index positions). A failure is GP_ECORRUPT whose message
 * names the table file and the offset. Obj blocks (object id to ref
 * block) are never read: nothing here looks refs up by object id.
 *
 * Costs: opening a table reads its header and footer only. A lookup by
 * name in a table follows its index (a few blocks) or, in a table
 * without one (git writes none below four blocks), reads its ref blocks
 * from the start; in a stack it asks each table from the newest down
 * until one has the name. Merged iteration costs O(tables) per record.
 *
 * Not thread-safe: one iterator per thread; tables and stacks are
 * refcounted but the counts are not atomic.
 */
#ifndef GP_REFTABLE_H
#define GP_REFTABLE_H

#include "object.h"

struct gp_error;
struct strbuf;
struct reftable_table;
struct reftable_stack;
struct reftable_iter;

/* The 4-byte hash ids of a version 2 table ("sha1", "s256"). */
#define REFTABLE_HASH_SHA1 0x73686131u
#define REFTABLE_HASH_SHA256 0x73323536u

enum reftable_ref_type {
	REFTABLE_REF_DELETION = 0,
	REFTABLE_REF_VAL1 = 1,   /* an object id */
	REFTABLE_REF_VAL2 = 2,   /* an object id and what it peels to */
	REFTABLE_REF_SYMREF = 3, /* a symbolic ref */
};

/*
 * A ref record. The strings are borrowed from the iterator (valid until
 * its next call) and NUL-terminated; neither holds a NUL byte (a record
 * whose name or target does is corrupt).
 */
struct reftable_ref {
	const char *name;
	uint64_t update_index;
	enum reftable_ref_type type;
	struct object_id oid;    /* VAL1, VAL2 */
	struct object_id peeled; /* VAL2 */
	const char *target;      /* SYMREF; NULL otherwise */
};

enum reftable_log_type {
	REFTABLE_LOG_DELETION = 0,
	REFTABLE_LOG_UPDATE = 1,
};

/*
 * A log record, borrowed as a ref record is. refname is NUL-terminated
 * (and holds no NUL); name, email and message are given with their
 * lengths, not terminated, and may hold any byte.
 */
struct reftable_log {
	const char *refname;
	uint64_t update_index;
	enum reftable_log_type type;
	/* UPDATE only: */
	struct object_id old_oid, new_oid;
	const char *name, *email, *message;
	size_t name_len, email_len, message_len;
	uint64_t time;   /* seconds since the epoch */
	int tz_offset;   /* minutes east of UTC */
};

/* ---- one table ---------------------------------------------------------- */

/*
 * Parse the table image buf[0..len) (borrowed: it must outlive the
 * table). name is used in messages. algo is the repository's hash: a
 * table of another is corrupt. Errors: GP_ECORRUPT.
 */
int reftable_table_open_buf(struct reftable_table **out, const unsigned char *buf,
			    size_t len, const char *name, int algo, struct gp_error *err);
/*
 * Map the file at path and parse it as above (messages name the path).
 * Errors: GP_ENOTFOUND when it does not exist, GP_EIO, GP_ECORRUPT.
 */
int reftable_table_open(struct reftable_table **out, const char *path, int algo,
			struct gp_error *err);
/* Drop a reference (the last one unmaps). Accepts NULL. */
void reftable_table_free(struct reftable_table *t);

uint64_t reftable_table_min_update_index(const struct reftable_table *t);
uint64_t reftable_table_max_update_index(const struct reftable_table *t);

/* The shape of a table as its header and footer give it (for tests). */
struct reftable_table_info {
	unsigned version;
	uint32_t block_size;
	bool has_refs, has_logs;
	uint64_t ref_index_pos, obj_pos, obj_index_pos, log_pos, log_index_pos;
	unsigned obj_id_len;
};
void reftable_table_info(const struct reftable_table *t, struct reftable_table_info *info);

/*
 * Iterate over the table's ref records whose names start with prefix
 * (NULL or "" for all), deletions included, in name order; or over its
 * log records of refname (NULL: all), newest first within each ref.
 * The iterator holds a reference to the table. Errors: GP_ECORRUPT
 * (from the blocks read to find the start).
 */
int reftable_table_refs(struct reftable_table *t, const char *prefix,
			struct reftable_iter **out, struct gp_error *err);
int reftable_table_logs(struct reftable_table *t, const char *refname,
			struct reftable_iter **out, struct gp_error *err);

/* ---- a stack -------------------------------------------------------------- */

/*
 * Open the stack in dir (".../reftable"): read tables.list and open each
 * table it names. A missing tables.list (or dir) is an empty stack.
 * Tables of reuse (may be NULL), a stack of the same dir opened before,
 * are shared rather than opened again (tables never change once
 * written). When a listed table has gone, compaction replaced it while
 * we read: the list is read again, a few times at most. Errors:
 * GP_ECORRUPT (a malformed list, a bad table, or a table still missing),
 * GP_EIO.
 */
int reftable_stack_open(struct reftable_stack **out, const char *dir, int algo,
			struct reftable_stack *reuse, struct gp_error *err);
/*
 * A stack of the tables given, oldest first, not backed by a directory
 * (for tests and the fuzzer): it takes a reference to each, and is
 * never current.
 */
struct reftable_stack *reftable_stack_of_tables(struct reftable_table **tables, size_t nr);
/* Whether tables.list is still the file the stack was read from (one stat()). */
bool reftable_stack_is_current(const struct reftable_stack *st);
/* Take another reference; reftable_stack_free() drops one. */
struct reftable_stack *reftable_stack_get(struct reftable_stack *st);
/* Accepts NULL. */
void reftable_stack_free(struct reftable_stack *st);
size_t reftable_stack_nr_tables(const struct reftable_stack *st);

/*
 * The merged view: the ref name as the newest table that has it says.
 * 0 with *ref filled (its name is name, its target, for a symref, is in
 * target, which the caller provides and releases); GP_ENOTFOUND when no
 * table has it or the newest record is a deletion; GP_ECORRUPT.
 */
int reftable_stack_read_ref(struct reftable_stack *st, const char *name,
			    struct reftable_ref *ref, struct strbuf *target,
			    struct gp_error *err);
/*
 * As reftable_table_refs() and reftable_table_logs(), over the merged
 * view of the stack: one record per key, the newest; deletions are not
 * returned, and hide the key in older tables. The iterator holds a
 * reference to the stack.
 */
int reftable_stack_refs(struct reftable_stack *st, const char *prefix,
			struct reftable_iter **out, struct gp_error *err);
int reftable_stack_logs(struct reftable_stack *st, const char *refname,
			struct reftable_iter **out, struct gp_error *err);

/* ---- iterating ------------------------------------------------------------ */

/*
 * The next record: 1 with *ref or *log filled (borrowed until the next
 * call), 0 at the end, or GP_ECORRUPT (the iterator then stays at the
 * end). Use the one that matches how the iterator was made.
 */
int reftable_iter_next_ref(struct reftable_iter *it, struct reftable_ref *ref,
			   struct gp_error *err);
int reftable_iter_next_log(struct reftable_iter *it, struct reftable_log *log,
			   struct gp_error *err);
/*
 * Make a stack iterator return deletions too (still one record per key,
 * the newest): compacting tables above the oldest must keep them, as
 * they hide older records.
 */
void reftable_iter_show_deletions(struct reftable_iter *it);
/* Accepts NULL. */
void reftable_iter_free(struct reftable_iter *it);

#endif
