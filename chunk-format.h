/*
 * chunk-format.h: the chunk table shared by Git's chunked files (the
 * multi-pack-index, the commit-graph), as gitformat-chunk describes it:
 * (C + 1) entries of a 4-byte id and an 8-byte offset, the last with id
 * 0 and the offset where the last chunk ends.
 *
 * The reader validates the whole table at parse time: the table fits
 * before the trailer, offsets are non-decreasing and inside the file,
 * ids are non-zero and unique, and the terminating entry ends the last
 * chunk exactly where the trailer begins. Lookups then return (pointer, size) pairs that are known to be
 * inside the mapping.
 *
 * The writer takes chunks with a declared size and a callback; a BUG()
 * fires if a callback writes a different number of bytes.
 */
#ifndef GP_CHUNK_FORMAT_H
#define GP_CHUNK_FORMAT_H

#include "util.h"

struct gp_error;
struct hashfile;

#define CHUNK_TOC_ENTRY_SIZE 12

struct chunk_entry {
	uint32_t id;
	uint64_t offset;
	uint64_t size;
};

struct chunk_table {
	struct chunk_entry *entries;
	size_t nr;
	const unsigned char *base; /* start of the file */
};

#define CHUNK_TABLE_INIT { .entries = NULL }

/*
 * Parse nr_chunks table entries at map + toc_ofs; chunks must end by
 * data_end (the start of the trailing checksum). name is for messages.
 * Errors: GP_ECORRUPT ("<name>: chunk table ...").
 */
int chunk_table_parse(struct chunk_table *t, const unsigned char *map,
		      size_t data_end, size_t toc_ofs, unsigned nr_chunks,
		      const char *name, struct gp_error *err);
void chunk_table_release(struct chunk_table *t);
/* The chunk with this id: true and (ptr, size), or false. */
bool chunk_find(const struct chunk_table *t, uint32_t id,
		const unsigned char **ptr, uint64_t *size);
/* "OIDF" for messages; out must hold 5 bytes. */
const char *chunk_id_name(uint32_t id, char *out);

/* Writing: declare the chunks, then write table and data. */
typedef void chunk_write_fn(struct hashfile *f, void *data);
struct chunk_writer_entry {
	uint32_t id;
	uint64_t size;
	chunk_write_fn *write;
};
struct chunk_writer {
	struct chunk_writer_entry *items;
	size_t nr, alloc;
};
#define CHUNK_WRITER_INIT { .items = NULL }

void chunk_writer_add(struct chunk_writer *w, uint32_t id, uint64_t size,
		      chunk_write_fn *write);
/* Write the table (its first chunk follows it) and then every chunk. */
void chunk_writer_write(struct chunk_writer *w, struct hashfile *f,
			void *data);
void chunk_writer_release(struct chunk_writer *w);

#endif
