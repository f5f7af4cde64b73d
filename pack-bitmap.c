/*
 * pack-bitmap.c: reading reachability bitmaps (pack-bitmap.h,
 * "Reading"): opening and checking a .bitmap file, its entries and
 * lookup table, and the layers of an incremental MIDX chain. The
 * reader's other files are listed in pack-bitmap-internal.h.
 */
#include "pack-bitmap-internal.h"
#include "midx.h"
#include "odb.h"
#include "packfile.h"

#include <pthread.h>
#include <sys/mman.h>

struct bitmap_entry {
	uint32_t index_pos;
	uint32_t xor_row;      /* BITMAP_NO_XOR_ROW when none */
	uint64_t ofs;          /* of the entry's header in the file */
	bool composed_ready;
	struct ewah composed;  /* the commit's bitmap, XORs undone */
};

void bitmap_index_free(struct bitmap_index *bi)
{
	if (!bi)
		return;
	for (uint32_t row = 0; bi->entries && row < bi->nr_entries; row++)
		ewah_release(&bi->entries[row].composed);
	free(bi->entries);
	for (int i = 0; i < 4; i++)
		bitmap_release(&bi->types[i]);
	if (bi->mapped && bi->map)
		munmap((void *)bi->map, bi->len);
	bitmap_order_free(bi->order);
	free(bi->path);
	bitmap_index_free(bi->base);
	free(bi);
}


/* An EWAH at ofs, ending at or before end. */
static int view_ewah(const struct bitmap_index *bi, uint64_t ofs, uint64_t end,
		     const char *what, struct ewah *out, size_t *consumed,
		     struct gp_error *err)
{
	const char *why = NULL;
	uint64_t limit = (uint64_t)bi->nr_objects + 63;
	int ret;
	if (ofs > end)
		return CORRUPT(err, "%s: %s at offset %llu is past the end of its section",
			       short_name(bi), what, (unsigned long long)ofs);
	ret = ewah_view(out, bi->map + ofs, (size_t)(end - ofs), consumed, &why);
	if (ret)
		return CORRUPT(err, "%s: bad %s at offset %llu: %s", short_name(bi),
			       what, (unsigned long long)ofs, why ? why : "unreadable");
	/* git rounds entry bitmaps up to whole words; never further. */
	if (ewah_bit_size(out) > limit - limit % 64)
		return CORRUPT(err, "%s: %s at offset %llu has %llu bits for %u objects",
			       short_name(bi), what, (unsigned long long)ofs,
			       (unsigned long long)ewah_bit_size(out), bi->nr_objects);
	return 0;
}

/* Set bits below n: a layer's type bitmaps leave its base's bits clear. */
static uint64_t bitmap_popcount_below(const struct bitmap *b, size_t n)
{
	uint64_t count = 0;
	for (size_t w = 0; w < b->word_nr && w * 64 < n; w++) {
		uint64_t word = b->words[w];
		if (n - w * 64 < 64)
			word &= (UINT64_C(1) << (n - w * 64)) - 1;
		count += (uint64_t)__builtin_popcountll(word);
	}
	return count;
}

static int parse_types(struct bitmap_index *bi, uint64_t *ofs, uint64_t end,
		       struct gp_error *err)
{
	static const char *const names[4] = {
		"commit type bitmap", "tree type bitmap", "blob type bitmap",
		"tag type bitmap"
	};
	struct bitmap all = BITMAP_INIT;
	uint64_t sum = 0;
	int ret = 0;
	for (int i = 0; i < 4; i++) {
		struct ewah e = EWAH_INIT;
		size_t used;
		ret = view_ewah(bi, *ofs, end, names[i], &e, &used, err);
		if (ret)
			goto out;
		if (ewah_bit_size(&e) > bi->nr_objects) {
			ret = CORRUPT(err, "%s: %s at offset %llu is longer than the %u objects",
				      short_name(bi), names[i], (unsigned long long)*ofs,
				      bi->nr_objects);
			goto out;
		}
		ret = ewah_to_bitmap(&bi->types[i], &e);
		if (!ret)
			ret = bitmap_or(&all, &bi->types[i]);
		if (ret) {
			ret = ewah_err(err, ret, short_name(bi));
			goto out;
		}
		sum += bitmap_popcount(&bi->types[i]);
		*ofs += used;
	}
	if (sum != bi->nr_objects - bi->base_objects ||
	    bitmap_popcount(&all) != bi->nr_objects - bi->base_objects ||
	    (bi->base_objects && bitmap_popcount_below(&all, bi->base_objects))) {
		/* name the first object with no type or with two (or, in a layer, one below it) */
		uint64_t bad = 0;
		for (uint32_t pos = 0; pos < bi->nr_objects; pos++) {
			int types = 0;
			for (int i = 0; i < 4; i++)
				types += bitmap_get(&bi->types[i], pos);
			if (types != (pos >= bi->base_objects)) {
				bad = pos;
				break;
			}
		}
		ret = CORRUPT(err, "%s: the type bitmaps (from offset %zu) give object %llu of %u %s",
			      short_name(bi), 12 + bi->rawsz, (unsigned long long)bad,
			      bi->nr_objects, bad < bi->base_objects ? "a type, but a layer below has it"
			      : bitmap_index_type_at(bi, (uint32_t)bad) == OBJ_BAD
			      ? "no type" : "more than one type");
	}
	/* A layer answers for the whole chain: its base's types join its own. */
	for (int i = 0; !ret && bi->base && i < 4; i++) {
		ret = bitmap_or(&bi->types[i], &bi->base->types[i]);
		if (ret)
			ret = ewah_err(err, ret, short_name(bi));
	}
out:
	bitmap_release(&all);
	return ret;
}

static int check_entry_commit(struct bitmap_index *bi, uint32_t index_pos,
			      const char *where, uint64_t ofs, struct gp_error *err)
{
	if (index_pos >= bi->nr_objects)
		return CORRUPT(err, "%s: %s at offset %llu names object %u of %u",
			       short_name(bi), where, (unsigned long long)ofs, index_pos,
			       bi->nr_objects);
	if (!bitmap_get(&bi->types[OBJ_COMMIT - 1],
			bitmap_order_index_to_bit(bi->order, index_pos)))
		return CORRUPT(err, "%s: %s at offset %llu names object %u, not a commit",
			       short_name(bi), where, (unsigned long long)ofs, index_pos);
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct bitmap_entry *x = a, *y = b;
	return x->index_pos < y->index_pos ? -1 : x->index_pos > y->index_pos;
}

/* Without a lookup table: every entry, in file order. */
static int scan_entries(struct bitmap_index *bi, struct gp_error *err)
{
	uint64_t ofs = bi->entries_start;
	uint32_t *row_of_file = NULL;
	int ret = 0;
	bi->entries = xcalloc(bi->nr_entries ? bi->nr_entries : 1, sizeof(*bi->entries));
	for (uint32_t i = 0; i < bi->nr_entries; i++) {
		struct bitmap_entry *e = &bi->entries[i];
		struct ewah view = EWAH_INIT;
		unsigned xor_offset;
		size_t used;
		if (bi->entries_end - ofs < BITMAP_ENTRY_HEADER_SIZE)
			return CORRUPT(err, "%s: entry %u at offset %llu is truncated",
				       short_name(bi), i, (unsigned long long)ofs);
		e->index_pos = get_be32(bi->map + ofs);
		xor_offset = bi->map[ofs + 4];
		e->ofs = ofs;
		char what[64];
		snprintf(what, sizeof(what), "entry %u", i);
		ret = check_entry_commit(bi, e->index_pos, what, ofs, err);
		if (ret)
			return ret;
		if (xor_offset > BITMAP_MAX_XOR_OFFSET || xor_offset > i)
			return CORRUPT(err, "%s: entry %u at offset %llu has XOR offset %u",
				       short_name(bi), i, (unsigned long long)ofs, xor_offset);
		/* file order for now; rows after the sort below */
		e->xor_row = xor_offset ? i - xor_offset : BITMAP_NO_XOR_ROW;
		ret = view_ewah(bi, ofs + BITMAP_ENTRY_HEADER_SIZE, bi->entries_end,
				"entry bitmap", &view, &used, err);
		if (ret)
			return ret;
		ofs += BITMAP_ENTRY_HEADER_SIZE + used;
	}
	if (ofs != bi->entries_end)
		return CORRUPT(err, "%s: %llu unexpected bytes after the last entry, at offset %llu",
			       short_name(bi), (unsigned long long)(bi->entries_end - ofs),
			       (unsigned long long)ofs);
	/* Sort by index_pos, then turn file-order XOR references into rows. */
	/*
	 * Nothing is composed yet, so each entry's (still empty) EWAH
	 * lends its rlw field to hold the entry's file position across
	 * the sort; it is zeroed again right after.
	 */
	for (uint32_t i = 0; i < bi->nr_entries; i++)
		bi->entries[i].composed.rlw = i;
	qsort(bi->entries, bi->nr_entries, sizeof(*bi->entries), cmp_entry);
	row_of_file = xmalloc(sizeof(uint32_t) * (bi->nr_entries ? bi->nr_entries : 1));
	for (uint32_t row = 0; row < bi->nr_entries; row++) {
		row_of_file[bi->entries[row].composed.rlw] = row;
		bi->entries[row].composed.rlw = 0;
		if (row && bi->entries[row].index_pos == bi->entries[row - 1].index_pos) {
			uint64_t later = bi->entries[row].ofs > bi->entries[row - 1].ofs
				? bi->entries[row].ofs : bi->entries[row - 1].ofs;
			ret = CORRUPT(err, "%s: the entry at offset %llu is a second one for object %u",
				      short_name(bi), (unsigned long long)later,
				      bi->entries[row].index_pos);
			goto out;
		}
	}
	for (uint32_t row = 0; row < bi->nr_entries; row++)
		if (bi->entries[row].xor_row != BITMAP_NO_XOR_ROW)
			bi->entries[row].xor_row = row_of_file[bi->entries[row].xor_row];
out:
	free(row_of_file);
	return ret;
}

/* With a lookup table: the table is the list; entries are read on use. */
static int read_lookup_table(struct bitmap_index *bi, uint64_t table_ofs,
			     struct gp_error *err)
{
	bi->entries = xcalloc(bi->nr_entries ? bi->nr_entries : 1, sizeof(*bi->entries));
	for (uint32_t row = 0; row < bi->nr_entries; row++) {
		const unsigned char *p = bi->map + table_ofs + (size_t)row * BITMAP_LOOKUP_ROW_SIZE;
		struct bitmap_entry *e = &bi->entries[row];
		uint64_t where = table_ofs + (uint64_t)row * BITMAP_LOOKUP_ROW_SIZE;
		int ret;
		e->index_pos = get_be32(p);
		e->ofs = get_be64(p + 4);
		e->xor_row = get_be32(p + 12);
		char what[64];
		snprintf(what, sizeof(what), "lookup table row %u", row);
		ret = check_entry_commit(bi, e->index_pos, what, where, err);
		if (ret)
			return ret;
		if (row && e->index_pos <= bi->entries[row - 1].index_pos)
			return CORRUPT(err, "%s: lookup table row %u at offset %llu is out of order",
				       short_name(bi), row, (unsigned long long)where);
		if (e->ofs < bi->entries_start ||
		    e->ofs >= bi->entries_end ||
		    bi->entries_end - e->ofs < BITMAP_ENTRY_HEADER_SIZE)
			return CORRUPT(err, "%s: lookup table row %u at offset %llu points at %llu, outside the entries",
				       short_name(bi), row, (unsigned long long)where,
				       (unsigned long long)e->ofs);
		if (e->xor_row != BITMAP_NO_XOR_ROW &&
		    (e->xor_row >= bi->nr_entries || e->xor_row == row))
			return CORRUPT(err, "%s: lookup table row %u at offset %llu has XOR row %u",
				       short_name(bi), row, (unsigned long long)where, e->xor_row);
	}
	return 0;
}

static int parse_bitmap(struct bitmap_index *bi, const unsigned char *checksum,
			struct gp_error *err)
{
	size_t header = 12 + bi->rawsz;
	uint64_t end, ofs, size, table_ofs;
	unsigned char actual[GP_MAX_RAWSZ];
	int ret;

	if (bi->len < header + bi->rawsz)
		return CORRUPT(err, "%s: too short for a bitmap (%zu bytes)",
			       short_name(bi), bi->len);
	if (get_be32(bi->map) != BITMAP_SIGNATURE)
		return CORRUPT(err, "%s: bad signature at offset 0", short_name(bi));
	if (get_be16(bi->map + 4) != BITMAP_VERSION)
		return CORRUPT(err, "%s: unsupported version %u at offset 4",
			       short_name(bi), get_be16(bi->map + 4));
	bi->flags = get_be16(bi->map + 6);
	if (!(bi->flags & BITMAP_OPT_FULL_DAG))
		return CORRUPT(err, "%s: flags at offset 6 lack FULL_DAG", short_name(bi));
	if (bi->flags & ~(unsigned)(BITMAP_OPT_FULL_DAG | BITMAP_OPT_HASH_CACHE |
				   BITMAP_OPT_LOOKUP_TABLE | BITMAP_OPT_PSEUDO_MERGES))
		return CORRUPT(err, "%s: unknown flags 0x%x at offset 6", short_name(bi),
			       bi->flags);
	bi->nr_entries = get_be32(bi->map + 8);
	if (checksum && memcmp(bi->map + 12, checksum, bi->rawsz))
		return CORRUPT(err, "%s: stale: it was written for another %s",
			       short_name(bi),
			       bi->order && bi->order->kind == ORDER_MIDX
			       ? "multi-pack-index" : "pack");
	if (bi->trust_trailer)
		; /* as git's readers: the structure below is checked, the hash left to fsck */
	else if (bi->digest)
		memcpy(actual, bi->digest, bi->rawsz);
	else
		hash_buf_checksum(bi->algo, bi->map, bi->len - bi->rawsz, actual);
	if (!bi->trust_trailer && memcmp(actual, bi->map + bi->len - bi->rawsz, bi->rawsz))
		return CORRUPT(err, "%s: checksum mismatch at offset %zu", short_name(bi),
			       bi->len - bi->rawsz);

	end = bi->len - bi->rawsz;
	if (bi->flags & BITMAP_OPT_HASH_CACHE) {
		/* a layer's cache has its own objects only */
		size = (uint64_t)(bi->nr_objects - bi->base_objects) * 4;
		if (end - header < size)
			return CORRUPT(err, "%s: too short for a name-hash cache of %u objects",
				       short_name(bi), bi->nr_objects - bi->base_objects);
		end -= size;
		bi->hash_cache = bi->map + end;
	}
	if (bi->flags & BITMAP_OPT_LOOKUP_TABLE) {
		size = (uint64_t)bi->nr_entries * BITMAP_LOOKUP_ROW_SIZE;
		if (end - header < size)
			return CORRUPT(err, "%s: too short for a lookup table of %u entries (the count at offset 8)",
				       short_name(bi), bi->nr_entries);
		end -= size;
	}
	table_ofs = end;
	if (bi->flags & BITMAP_OPT_PSEUDO_MERGES) {
		ret = pseudo_merge_section_parse(&bi->pseudo_merges, bi->map, header, end,
						 bi->nr_objects, short_name(bi), err);
		if (ret)
			return ret;
		bi->has_pseudo_merges = true;
		end = bi->pseudo_merges.start;
	}
	bi->entries_end = end;
	ofs = header;
	ret = parse_types(bi, &ofs, end, err);
	if (ret)
		return ret;
	bi->entries_start = ofs;
	if (bi->nr_entries > (end - ofs) / (BITMAP_ENTRY_HEADER_SIZE + 12))
		return CORRUPT(err, "%s: the entry count at offset 8 (%u) cannot fit in %llu bytes",
			       short_name(bi), bi->nr_entries, (unsigned long long)(end - ofs));
	if (bi->flags & BITMAP_OPT_LOOKUP_TABLE)
		return read_lookup_table(bi, table_ofs, err);
	return scan_entries(bi, err);
}

int bitmap_index_parse_buf(struct bitmap_index **out, const unsigned char *buf,
			   size_t len, const char *name, int algo,
			   uint32_t nr_objects, const unsigned char *checksum,
			   struct gp_error *err)
{
	struct bitmap_index *bi = xcalloc(1, sizeof(*bi));
	int ret;
	bi->path = xstrdup(name);
	bi->map = buf;
	bi->len = len;
	bi->algo = algo;
	bi->rawsz = gp_hash_algos[algo].rawsz;
	bi->nr_objects = nr_objects;
	bi->order = bitmap_order_identity(algo, nr_objects);
	ret = parse_bitmap(bi, checksum, err);
	if (ret) {
		bitmap_index_free(bi);
		return ret;
	}
	*out = bi;
	return 0;
}

/*
 * Hash the file on another thread while the order is prepared (a pack's
 * reverse index may have to be sorted): the check then costs nothing.
 */
struct hash_job {
	const unsigned char *buf;
	size_t len;
	int algo;
	unsigned char digest[GP_MAX_RAWSZ];
};

static void *hash_worker(void *data)
{
	struct hash_job *job = data;
	hash_buf_checksum(job->algo, job->buf, job->len, job->digest);
	return NULL;
}

/*
 * Takes path, order and the mapping (map may be NULL: mapped here), and
 * base (a chain layer's lower layers' bitmap, or NULL), on failure too.
 */
static int open_layer_with_order(struct bitmap_index **out, char *path,
				 struct bitmap_order *order, int algo,
				 const unsigned char *map, size_t len,
				 const unsigned char *digest, struct bitmap_index *base,
				 bool verify, struct gp_error *err)
{
	struct bitmap_index *bi = xcalloc(1, sizeof(*bi));
	int ret = 0;
	bi->trust_trailer = !verify;
	bi->base = base;
	bi->base_objects = base ? base->nr_objects : 0;
	bi->path = path;
	bi->order = order;
	bi->algo = algo;
	bi->rawsz = gp_hash_algos[algo].rawsz;
	bi->nr_objects = order->nr;
	bi->map = map;
	bi->len = len;
	bi->digest = digest;
	if (!map)
		ret = map_file_readonly(path, &bi->map, &bi->len, NULL, err);
	if (ret)
		goto fail;
	bi->mapped = true;
	ret = parse_bitmap(bi, order->checksum, err);
	bi->digest = NULL;
	if (ret)
		goto fail;
	*out = bi;
	return 0;
fail:
	bitmap_index_free(bi);
	return ret;
}

static int open_with_order(struct bitmap_index **out, char *path,
			   struct bitmap_order *order, int algo,
			   const unsigned char *map, size_t len,
			   const unsigned char *digest, bool verify, struct gp_error *err)
{
	return open_layer_with_order(out, path, order, algo, map, len, digest, NULL, verify, err);
}

/*
 * The bitmaps of an incremental chain, one file a layer, base first
 * (technical/multi-pack-index, "Reachability bitmaps and incremental
 * MIDXs"): each layer's answers for its own commits; the top one
 * answers for the chain. GP_ENOTFOUND when a layer has none.
 */
static int open_chain_bitmaps(struct bitmap_index **out, struct odb *odb, struct midx *m,
			      struct gp_error *err)
{
	struct bitmap_index *below = NULL;
	int ret = 0;
	for (uint32_t l = 0; l < midx_nr_layers(m) && !ret; l++) {
		struct bitmap_order *order = NULL;
		struct bitmap_index *bi = NULL;
		char *path;
		ret = bitmap_order_for_midx_with(&order, odb, midx_layer(m, l), false, false,
						 !odb_verify_bitmaps(odb), err);
		if (ret)
			break;
		path = bitmap_order_bitmap_path(order);
		if (access(path, F_OK)) {
			ret = gp_error_set(err, GP_ENOTFOUND, "%s: no bitmap for this layer", path);
			free(path);
			bitmap_order_free(order);
			break;
		}
		ret = open_layer_with_order(&bi, path, order, odb_algo(odb), NULL, 0, NULL, below,
					    odb_verify_bitmaps(odb), err);
		below = ret ? NULL : bi;
	}
	if (ret) {
		bitmap_index_free(below);
		return ret;
	}
	*out = below;
	return 0;
}

static int open_pack_bitmap(struct bitmap_index **out, struct packed_git *p, char *path,
			    int algo, bool verify, struct gp_error *err)
{
	struct bitmap_order *order = NULL;
	struct hash_job job = { NULL, 0, algo, { 0 } };
	size_t rawsz = gp_hash_algos[algo].rawsz;
	const unsigned char *map;
	size_t len;
	pthread_t tid;
	bool started = false;
	int ret = map_file_readonly(path, &map, &len, NULL, err);
	if (ret) {
		free(path);
		return ret;
	}
	if (verify && len >= rawsz) {
		job.buf = map;
		job.len = len - rawsz;
		started = !pthread_create(&tid, NULL, hash_worker, &job);
	}
	ret = bitmap_order_for_pack(&order, p, err);
	if (started)
		pthread_join(tid, NULL);
	else if (verify && len >= rawsz)
		hash_worker(&job);
	if (ret) {
		if (map)
			munmap((void *)map, len);
		free(path);
		return ret;
	}
	return open_with_order(out, path, order, algo, map, len,
			       verify && len >= rawsz ? job.digest : NULL, verify, err);
}

int bitmap_index_open(struct bitmap_index **out, struct odb *odb,
		      struct gp_error *err)
{
	struct bitmap_order *order = NULL;
	char *path;
	int ret;

	if (odb_midx(odb) && midx_is_chain(odb_midx(odb))) {
		/* As git: without every layer's bitmap, no MIDX bitmap. */
		ret = open_chain_bitmaps(out, odb, odb_midx(odb), err);
		if (ret != GP_ENOTFOUND)
			return ret;
		gp_error_clear(err);
	} else if (odb_midx(odb)) {
		ret = bitmap_order_for_midx_with(&order, odb, odb_midx(odb), false, false,
						 !odb_verify_bitmaps(odb), err);
		if (ret == GP_ENOTFOUND) {
			struct bitmap_index *stale = NULL;
			gp_error_clear(err);
			/*
			 * A bitmap over a MIDX that has no reverse index (no
			 * RIDX chunk, no .rev) counts in an order we cannot
			 * know: git refuses it. Opened over the computed
			 * order first, so that a stale one is named so.
			 */
			if (!bitmap_order_for_midx_with(&order, odb, odb_midx(odb), false, true, false,
							err)) {
				path = bitmap_order_bitmap_path(order);
				if (access(path, F_OK)) {
					free(path);
					bitmap_order_free(order);
				} else {
					ret = open_with_order(&stale, path, order, odb_algo(odb), NULL, 0,
							      NULL, odb_verify_bitmaps(odb), err);
					if (ret)
						return ret;
					bitmap_index_free(stale);
					return CORRUPT(err, "multi-pack bitmap is missing required reverse index"
						       " (%s has no RIDX chunk and no .rev file)",
						       midx_path(odb_midx(odb)));
				}
			}
			gp_error_clear(err);
			order = NULL;
		} else if (ret) {
			return ret;
		}
		if (order) {
			path = bitmap_order_bitmap_path(order);
			if (!access(path, F_OK))
				return open_with_order(out, path, order, odb_algo(odb), NULL, 0,
						       NULL, odb_verify_bitmaps(odb), err);
			free(path);
			bitmap_order_free(order);
		}
	}
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct packed_git *p = odb_pack(odb, i);
		if (!odb_pack_is_local(odb, i))
			continue;
		path = pack_bitmap_path(p);
		if (access(path, F_OK)) {
			free(path);
			continue;
		}
		return open_pack_bitmap(out, p, path, odb_algo(odb), odb_verify_bitmaps(odb), err);
	}
	return gp_error_set(err, GP_ENOTFOUND, "no bitmap in %s", odb_objdir(odb));
}

const char *bitmap_index_path(const struct bitmap_index *bi)
{
	return bi->path;
}

struct bitmap_index *bitmap_index_base(const struct bitmap_index *bi)
{
	return bi->base;
}

uint32_t bitmap_index_nr_entries(const struct bitmap_index *bi)
{
	return bi->nr_entries;
}

uint32_t bitmap_index_nr_objects(const struct bitmap_index *bi)
{
	return bi->nr_objects;
}

unsigned bitmap_index_flags(const struct bitmap_index *bi)
{
	return bi->flags;
}

const struct pseudo_merge_section *bitmap_index_pseudo_merges(const struct bitmap_index *bi)
{
	return bi->has_pseudo_merges ? &bi->pseudo_merges : NULL;
}

const struct bitmap_order *bitmap_index_order(const struct bitmap_index *bi)
{
	return bi->order->kind == ORDER_IDENTITY ? NULL : bi->order;
}

const struct bitmap *bitmap_index_type_bits(const struct bitmap_index *bi,
					    enum object_type type)
{
	if (type < OBJ_COMMIT || type > OBJ_TAG)
		return NULL;
	return &bi->types[type - 1];
}

enum object_type bitmap_index_type_at(const struct bitmap_index *bi, uint32_t bit_pos)
{
	for (int i = 0; i < 4; i++)
		if (bitmap_get(&bi->types[i], bit_pos))
			return (enum object_type)(i + 1);
	return OBJ_BAD;
}

bool bitmap_index_name_hash(const struct bitmap_index *bi, uint32_t index_pos,
			    uint32_t *hash)
{
	while (bi->base && index_pos < bi->base_objects)
		bi = bi->base;
	if (!bi->hash_cache || index_pos >= bi->nr_objects)
		return false;
	*hash = get_be32(bi->hash_cache + 4 * (size_t)(index_pos - bi->base_objects));
	return true;
}

/*
 * Undo the XORs of row: follow its chain down to an entry without one
 * (or one already composed), then compose back up, keeping each.
 */
static int compose_entry(struct bitmap_index *bi, uint32_t row, struct gp_error *err)
{
	uint32_t *chain = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	for (uint32_t r = row;; r = bi->entries[r].xor_row) {
		if (bi->entries[r].composed_ready)
			break;
		if (nr > bi->nr_entries) {
			ret = CORRUPT(err, "%s: the XOR references of the entry at offset %llu form a cycle",
				      short_name(bi), (unsigned long long)bi->entries[row].ofs);
			goto out;
		}
		ALLOC_GROW(chain, nr + 1, alloc);
		chain[nr++] = r;
		if (bi->entries[r].xor_row == BITMAP_NO_XOR_ROW)
			break;
	}
	while (nr--) {
		struct bitmap_entry *e = &bi->entries[chain[nr]];
		struct ewah view = EWAH_INIT;
		uint32_t index_pos;
		if (bi->entries_end - e->ofs < BITMAP_ENTRY_HEADER_SIZE) {
			ret = CORRUPT(err, "%s: entry at offset %llu is truncated",
				      short_name(bi), (unsigned long long)e->ofs);
			goto out;
		}
		index_pos = get_be32(bi->map + e->ofs);
		if (index_pos != e->index_pos) {
			ret = CORRUPT(err, "%s: entry at offset %llu is for object %u, the lookup table says %u",
				      short_name(bi), (unsigned long long)e->ofs, index_pos,
				      e->index_pos);
			goto out;
		}
		ret = view_ewah(bi, e->ofs + BITMAP_ENTRY_HEADER_SIZE, bi->entries_end,
				"entry bitmap", &view, NULL, err);
		if (ret)
			goto out;
		if (e->xor_row == BITMAP_NO_XOR_ROW)
			e->composed = view; /* borrowed from the map */
		else
			ret = ewah_xor(&e->composed, &view, &bi->entries[e->xor_row].composed);
		if (ret) {
			ret = ewah_err(err, ret, short_name(bi));
			goto out;
		}
		if (ewah_bit_size(&e->composed) > bi->nr_objects) {
			/* bits in the padding past the last object are corruption */
			uint64_t last = ewah_bits_used(&e->composed);
			if (last > bi->nr_objects) {
				ret = CORRUPT(err, "%s: entry at offset %llu sets bit %llu past the %u objects",
					      short_name(bi), (unsigned long long)e->ofs,
					      (unsigned long long)(last - 1), bi->nr_objects);
				goto out;
			}
		}
		e->composed_ready = true;
	}
out:
	free(chain);
	return ret;
}

int bitmap_index_entry(struct bitmap_index *bi, uint32_t row,
		       uint32_t *index_pos, const struct ewah **bitmap,
		       struct gp_error *err)
{
	int ret;
	if (row >= bi->nr_entries)
		return gp_error_set(err, GP_EINVAL, "no entry %u", row);
	if (!bi->entries[row].composed_ready) {
		ret = compose_entry(bi, row, err);
		if (ret)
			return ret;
	}
	*index_pos = bi->entries[row].index_pos;
	*bitmap = &bi->entries[row].composed;
	return 0;
}

uint32_t bitmap_index_entry_commit(const struct bitmap_index *bi, uint32_t row)
{
	return bi->entries[row].index_pos;
}

int bitmap_index_for_commit(struct bitmap_index *bi, uint32_t bit_pos,
			    const struct ewah **bitmap, struct gp_error *err)
{
	uint32_t index_pos = bitmap_order_bit_to_index(bi->order, bit_pos);
	size_t lo = 0, hi = bi->nr_entries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t here = bi->entries[mid].index_pos;
		if (here == index_pos) {
			uint32_t unused;
			return bitmap_index_entry(bi, (uint32_t)mid, &unused, bitmap, err);
		}
		if (here < index_pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A chain: the commit's bitmap may be in a layer below. */
	if (bi->base && bit_pos < bi->base_objects)
		return bitmap_index_for_commit(bi->base, bit_pos, bitmap, err);
	return GP_ENOTFOUND;
}

uint32_t bitmap_ewah_checksum(const struct ewah *e)
{
	uint32_t crc = (uint32_t)ewah_bit_size(e);
	for (size_t w = 0; w < ewah_word_nr(e); w++) {
		uint64_t word = e->nr ? get_be64(e->buf + 8 * w) : 0;
		for (int b = 0; b < 8; b++)
			crc = (crc << 5) - crc + (uint32_t)((word >> (8 * b)) & 0xff);
	}
	return crc;
}
