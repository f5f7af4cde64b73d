/*
 * reftable-write.h: writing one reftable file (git's
 * Documentation/technical/reftable.adoc; reftable.h has the layout and
 * reads it back).
 *
 * Records are added in key order (refs by name, then logs by name and
 * newest update index first); the writer lays them out as git's writer
 * does, so that a compaction by gitpack and one by git give the same
 * bytes:
 *
 *  - a block is filled until the next record (plus its restart entry and
 *    the restart count) would not fit in block_size; a record that does
 *    not fit in an empty block is GP_EINVAL "entry too large";
 *  - a record is a restart point (its key stored whole) when it is the
 *    first of each restart_interval records of its block, or when it
 *    shares no prefix with the previous key;
 *  - ref, obj and index blocks are padded with NULs to block_size when
 *    another block follows, except that the last ref block is not padded
 *    before the log section, nor the last block before the footer;
 *  - log blocks hold up to block_size bytes before deflating (zlib level
 *    9), and are never padded;
 *  - a section of more than three blocks gets an index: a level of index
 *    blocks over its blocks, then levels over those while a level has
 *    more than three blocks; the footer points at the top level;
 *  - the obj section (object id prefix to ref blocks) is written only
 *    when the ref section got an index, unless skip_index_objects.
 *
 * The whole table is built in memory: tables are a few megabytes at most.
 */
#ifndef GP_REFTABLE_WRITE_H
#define GP_REFTABLE_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct gp_error;
struct strbuf;
struct reftable_ref;
struct reftable_log;
struct reftable_writer;

/* git's limits for reftable.blockSize */
#define REFTABLE_MAX_BLOCK_SIZE ((1u << 24) - 1)
#define REFTABLE_DEFAULT_BLOCK_SIZE 4096
#define REFTABLE_DEFAULT_RESTART_INTERVAL 16

struct reftable_write_opts {
	uint32_t block_size;       /* 0: 4096; at most REFTABLE_MAX_BLOCK_SIZE */
	uint16_t restart_interval; /* 0: 16 */
	bool skip_index_objects;   /* reftable.indexObjects = false */
};

/*
 * A writer of a table for the hash algo (GP_HASH_SHA1 writes a version
 * 1 table, SHA-256 version 2) whose update indexes are min..max.
 */
struct reftable_writer *reftable_writer_new(int algo, const struct reftable_write_opts *opts,
					    uint64_t min_update_index, uint64_t max_update_index);

/*
 * Add a record; refs first, each key greater than the last, a ref's
 * update index inside min..max (a log's may be older: deleting a ref
 * writes deletions under its old entries' indexes). Errors: GP_EINVAL
 * (out of order, entry too large, a ref after a log).
 */
int reftable_writer_add_ref(struct reftable_writer *w, const struct reftable_ref *ref,
			    struct gp_error *err);
int reftable_writer_add_log(struct reftable_writer *w, const struct reftable_log *log,
			    struct gp_error *err);

/* Finish the table and append its bytes to out. Errors: GP_EINVAL. */
int reftable_writer_finish(struct reftable_writer *w, struct strbuf *out, struct gp_error *err);

/* Accepts NULL. */
void reftable_writer_free(struct reftable_writer *w);

#endif
