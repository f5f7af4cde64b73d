/*
 * chunk-format.c: the chunk table (gitformat-chunk). See chunk-format.h.
 */
#include "chunk-format.h"
#include "error.h"
#include "hashfile.h"

const char *chunk_id_name(uint32_t id, char *out)
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(id >> (24 - 8 * i));
		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[4] = '\0';
	return out;
}

int chunk_table_parse(struct chunk_table *t, const unsigned char *map,
		      size_t data_end, size_t toc_ofs, unsigned nr_chunks,
		      const char *name, struct gp_error *err)
{
	size_t toc_len = ((size_t)nr_chunks + 1) * CHUNK_TOC_ENTRY_SIZE;
	char idbuf[5];

	t->base = map;
	t->entries = NULL;
	t->nr = 0;
	if (toc_ofs > data_end || toc_len > data_end - toc_ofs)
		return CORRUPT(err, "%s: chunk table of %u entries does not fit in the file",
			       name, nr_chunks);
	/*
	 * The ids first, as git checks them before the offsets they are
	 * paired with: a chunk count that is off then reads as git says.
	 */
	for (unsigned i = 0; i <= nr_chunks; i++) {
		uint32_t id = get_be32(map + toc_ofs + (size_t)i * CHUNK_TOC_ENTRY_SIZE);
		if (!id && i < nr_chunks)
			return CORRUPT(err, "terminating chunk id appears earlier than expected (%s: chunk table"
				       " entry %u of %u, offset %zu)", name, i, nr_chunks,
				       toc_ofs + (size_t)i * CHUNK_TOC_ENTRY_SIZE);
		if (id && i == nr_chunks)
			return CORRUPT(err, "final chunk has non-zero id %" PRIx32 " (%s: chunk table entry %u,"
				       " offset %zu)", id, name, i,
				       toc_ofs + (size_t)i * CHUNK_TOC_ENTRY_SIZE);
	}
	t->entries = xcalloc(nr_chunks ? nr_chunks : 1, sizeof(*t->entries));
	for (unsigned i = 0; i <= nr_chunks; i++) {
		const unsigned char *e = map + toc_ofs + (size_t)i * CHUNK_TOC_ENTRY_SIZE;
		uint32_t id = get_be32(e);
		uint64_t ofs = get_be64(e + 4);
		if (ofs < toc_ofs + toc_len || ofs > data_end) {
			chunk_table_release(t);
			return CORRUPT(err, "improper chunk offset(s) %" PRIx64 " (%s: chunk table entry %u (%s),"
				       " offset %zu, points outside the chunk data [%zu, %zu])", ofs,
				       name, i, chunk_id_name(id, idbuf),
				       toc_ofs + (size_t)i * CHUNK_TOC_ENTRY_SIZE + 4,
				       toc_ofs + toc_len, data_end);
		}
		if (i && ofs < t->entries[i - 1].offset) {
			uint64_t prev = t->entries[i - 1].offset;
			chunk_table_release(t);
			return CORRUPT(err, "improper chunk offset(s) %" PRIx64 " and %" PRIx64
				       " (%s: chunk %s, table entry %u, starts before the previous one)",
				       prev, ofs, name, chunk_id_name(id, idbuf), i);
		}
		if (i == nr_chunks) {
			/* The chunks fill the file up to its trailer: nothing unaccounted. */
			if (ofs != data_end) {
				uint32_t last = i ? t->entries[i - 1].id : 0;
				chunk_table_release(t);
				return CORRUPT(err, "%s: the last chunk (%s) ends at %" PRIu64
					       " but the trailer starts at %zu", name,
					       i ? chunk_id_name(last, idbuf) : "none", ofs, data_end);
			}
			if (i)
				t->entries[i - 1].size = ofs - t->entries[i - 1].offset;
			break;
		}
		for (unsigned j = 0; j < i; j++)
			if (t->entries[j].id == id) {
				chunk_table_release(t);
				return CORRUPT(err, "%s: chunk %s appears twice", name,
					       chunk_id_name(id, idbuf));
			}
		if (i)
			t->entries[i - 1].size = ofs - t->entries[i - 1].offset;
		t->entries[i].id = id;
		t->entries[i].offset = ofs;
		t->nr = i + 1;
	}
	return 0;
}

void chunk_table_release(struct chunk_table *t)
{
	FREE_AND_NULL(t->entries);
	t->nr = 0;
}

bool chunk_find(const struct chunk_table *t, uint32_t id,
		const unsigned char **ptr, uint64_t *size)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->entries[i].id == id) {
			*ptr = t->base + t->entries[i].offset;
			*size = t->entries[i].size;
			return true;
		}
	return false;
}

void chunk_writer_add(struct chunk_writer *w, uint32_t id, uint64_t size,
		      chunk_write_fn *write)
{
	ALLOC_GROW(w->items, w->nr + 1, w->alloc);
	w->items[w->nr].id = id;
	w->items[w->nr].size = size;
	w->items[w->nr].write = write;
	w->nr++;
}

void chunk_writer_write(struct chunk_writer *w, struct hashfile *f, void *data)
{
	uint64_t ofs = hashfile_total(f) + ((uint64_t)w->nr + 1) * CHUNK_TOC_ENTRY_SIZE;
	for (size_t i = 0; i < w->nr; i++) {
		hashfile_write_be32(f, w->items[i].id);
		hashfile_write_be64(f, ofs);
		ofs += w->items[i].size;
	}
	hashfile_write_be32(f, 0);
	hashfile_write_be64(f, ofs);
	for (size_t i = 0; i < w->nr; i++) {
		uint64_t start = hashfile_total(f);
		char idbuf[5];
		w->items[i].write(f, data);
		if (hashfile_total(f) - start != w->items[i].size)
			BUG("chunk %s declared %" PRIu64 " bytes but wrote %" PRIu64,
			    chunk_id_name(w->items[i].id, idbuf), w->items[i].size,
			    hashfile_total(f) - start);
	}
}

void chunk_writer_release(struct chunk_writer *w)
{
	FREE_AND_NULL(w->items);
	w->nr = w->alloc = 0;
}
