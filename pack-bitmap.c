/*
 * pack-bitmap.c: reading reachability bitmaps and querying with them
 * (pack-bitmap.h).
 */
#include "pack-bitmap.h"
#include "commit.h"
#include "error.h"
#include "ewah/ewah.h"
#include "hash.h"
#include "midx.h"
#include "odb.h"
#include "packfile.h"
#include "progress.h"
#include "pseudo-merge.h"
#include "revision.h"
#include "strbuf.h"
#include "trace2.h"
#include "tree.h"

#include <pthread.h>
#include <sys/mman.h>

uint32_t bitmap_name_hash(const char *path)
{
	uint32_t hash = 0;
	/* git skips isspace() characters: in the C locale, these six */
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (*c != ' ' && (*c < '\t' || *c > '\r'))
			hash = (hash >> 2) + ((uint32_t)*c << 24);
	return hash;
}

/* ------------------------------------------------------------------ */
/* Object orders                                                       */
/* ------------------------------------------------------------------ */

enum order_kind { ORDER_PACK, ORDER_MIDX, ORDER_IDENTITY };

struct bitmap_order {
	enum order_kind kind;
	int algo;
	uint32_t nr;
	struct packed_git *pack;  /* ORDER_PACK */
	uint32_t *idx_to_pack_pos;
	struct odb *odb;          /* ORDER_MIDX */
	struct midx *midx;
	struct packed_git **midx_packs; /* by pack_int_id */
	unsigned char checksum[GP_MAX_RAWSZ];
};

int bitmap_order_for_pack(struct bitmap_order **out, struct packed_git *p,
			  struct gp_error *err)
{
	struct bitmap_order *o;
	int ret = pack_load_revindex(p, err);
	if (ret)
		return ret;
	o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_PACK;
	o->algo = p->algo;
	o->nr = p->nr_objects;
	o->pack = p;
	o->idx_to_pack_pos = xmalloc(sizeof(uint32_t) * (o->nr ? o->nr : 1));
	for (uint32_t pack_pos = 0; pack_pos < o->nr; pack_pos++)
		o->idx_to_pack_pos[pack_pos_to_idx(p, pack_pos)] = pack_pos;
	memcpy(o->checksum, p->pack_hash, gp_hash_algos[p->algo].rawsz);
	*out = o;
	return 0;
}

/*
 * search_ridx: for a reader (bitmap_index_open() on a server's odb,
 * odb_verify_bitmaps() false) that maps a few positions: the RIDX is
 * searched rather than inverted (MIDX_ORDER_NO_INVERSE).
 */
static int order_for_midx(struct bitmap_order **out, struct odb *odb, struct midx *m,
			  bool by_name, bool compute_missing, bool search_ridx,
			  struct gp_error *err)
{
	struct bitmap_order *o;
	int ret = midx_load_pseudo_order_flags(m, compute_missing,
					       search_ridx ? MIDX_ORDER_NO_INVERSE : 0, err);
	if (ret)
		return ret;
	o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_MIDX;
	o->algo = odb_algo(odb);
	o->nr = midx_nr_objects(m);
	o->odb = odb;
	o->midx = m;
	o->midx_packs = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1,
				sizeof(*o->midx_packs));
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		if (!by_name) {
			o->midx_packs[id] = odb_midx_pack(odb, id);
		} else {
			for (size_t i = 0; i < odb_nr_packs(odb) && !o->midx_packs[id]; i++)
				if (odb_pack_is_local(odb, i) &&
				    !strcmp(base_name(odb_pack(odb, i)->idx_path), midx_pack_name(m, id)))
					o->midx_packs[id] = odb_pack(odb, i);
		}
		if (!o->midx_packs[id]) {
			ret = gp_error_set(err, GP_ENOTFOUND, "%s: pack %s is missing",
					   midx_path(m), midx_pack_name(m, id));
			bitmap_order_free(o);
			return ret;
		}
	}
	memcpy(o->checksum, midx_checksum(m), gp_hash_algos[o->algo].rawsz);
	*out = o;
	return 0;
}

int bitmap_order_for_midx(struct bitmap_order **out, struct odb *odb,
			  struct gp_error *err)
{
	struct midx *m = odb_midx(odb);
	if (!m)
		return gp_error_set(err, GP_ENOTFOUND, "%s: no usable multi-pack-index",
				    odb_objdir(odb));
	return order_for_midx(out, odb, m, false, false, false, err);
}

int bitmap_order_for_midx_file(struct bitmap_order **out, struct odb *odb,
			       struct midx *m, struct gp_error *err)
{
	return order_for_midx(out, odb, m, true, false, false, err);
}

static struct bitmap_order *order_identity(int algo, uint32_t nr)
{
	struct bitmap_order *o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_IDENTITY;
	o->algo = algo;
	o->nr = nr;
	return o;
}

void bitmap_order_free(struct bitmap_order *o)
{
	if (!o)
		return;
	free(o->idx_to_pack_pos);
	free(o->midx_packs);
	free(o);
}

uint32_t bitmap_order_nr(const struct bitmap_order *o)
{
	return o->nr;
}

const unsigned char *bitmap_order_checksum(const struct bitmap_order *o)
{
	return o->checksum;
}

bool bitmap_order_extends(const struct bitmap_order *o, const struct bitmap_order *base)
{
	uint32_t nr_layers;
	size_t rawsz = gp_hash_algos[o->algo].rawsz;
	if (o->kind != ORDER_MIDX || base->kind != ORDER_MIDX || o->algo != base->algo)
		return false;
	nr_layers = midx_nr_layers(o->midx);
	if (nr_layers < 2 || midx_nr_layers(base->midx) < nr_layers - 1 ||
	    midx_nr_objects_in_base(o->midx) > base->nr)
		return false;
	/*
	 * A layer's checksum covers its names, offsets, packs and order:
	 * the same files, layer by layer, give the same bit positions.
	 */
	for (uint32_t layer = 0; layer + 1 < nr_layers; layer++)
		if (memcmp(midx_checksum(midx_layer(o->midx, layer)),
			   midx_checksum(midx_layer(base->midx, layer)), rawsz))
			return false;
	return true;
}

/* pack-<hash>.bitmap beside pack-<hash>.pack */
static char *pack_bitmap_path(const struct packed_git *p)
{
	size_t len = strlen(p->pack_path);
	if (ends_with(p->pack_path, ".pack"))
		len -= 5;
	return xstrfmt("%.*s.bitmap", (int)len, p->pack_path);
}

char *bitmap_order_bitmap_path(const struct bitmap_order *o)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *path;
	size_t len;
	switch (o->kind) {
	case ORDER_PACK:
		return pack_bitmap_path(o->pack);
	case ORDER_MIDX:
		hash_to_hex_r(hex, o->checksum, gp_hash_algos[o->algo].rawsz);
		path = midx_path(o->midx);
		len = strrchr(path, '/') ? (size_t)(strrchr(path, '/') - path) : 0;
		return xstrfmt("%.*s%smulti-pack-index-%s.bitmap", (int)len, path,
			       len ? "/" : "", hex);
	case ORDER_IDENTITY:
		break;
	}
	return xstrdup("(memory)");
}

bool bitmap_order_find(const struct bitmap_order *o, const struct object_id *oid,
		       uint32_t *bit_pos)
{
	uint32_t index_pos;
	switch (o->kind) {
	case ORDER_PACK:
		if (!pack_find_oid(o->pack, oid, &index_pos))
			return false;
		*bit_pos = o->idx_to_pack_pos[index_pos];
		return true;
	case ORDER_MIDX:
		if (!midx_find_oid(o->midx, oid, &index_pos))
			return false;
		*bit_pos = midx_pos_to_pseudo(o->midx, index_pos);
		/* a position a damaged RIDX does not list is in no bitmap */
		return *bit_pos != UINT32_MAX;
	case ORDER_IDENTITY:
		break;
	}
	return false;
}

uint32_t bitmap_order_bit_to_index(const struct bitmap_order *o, uint32_t bit_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return pack_pos_to_idx(o->pack, bit_pos);
	case ORDER_MIDX:
		return midx_pseudo_to_pos(o->midx, bit_pos);
	case ORDER_IDENTITY:
		break;
	}
	return bit_pos;
}

uint32_t bitmap_order_index_to_bit(const struct bitmap_order *o, uint32_t index_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return o->idx_to_pack_pos[index_pos];
	case ORDER_MIDX:
		return midx_pos_to_pseudo(o->midx, index_pos);
	case ORDER_IDENTITY:
		break;
	}
	return index_pos;
}

const unsigned char *bitmap_order_index_oid_raw(const struct bitmap_order *o,
						uint32_t index_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return pack_nth_oid_raw(o->pack, index_pos);
	case ORDER_MIDX:
		return midx_nth_oid_raw(o->midx, index_pos);
	case ORDER_IDENTITY:
		break;
	}
	return NULL;
}

void bitmap_order_oid(const struct bitmap_order *o, uint32_t bit_pos,
		      struct object_id *oid)
{
	uint32_t index_pos = bitmap_order_bit_to_index(o, bit_pos);
	switch (o->kind) {
	case ORDER_PACK:
		pack_nth_oid(o->pack, index_pos, oid);
		return;
	case ORDER_MIDX:
		midx_nth_oid(o->midx, index_pos, oid);
		return;
	case ORDER_IDENTITY:
		break;
	}
	oid_clear(oid, o->algo);
	put_be32(oid->hash, index_pos);
}

void bitmap_order_locate(const struct bitmap_order *o, uint32_t bit_pos,
			 struct packed_git **pack, uint64_t *ofs)
{
	uint32_t index_pos = bitmap_order_bit_to_index(o, bit_pos);
	*pack = NULL;
	*ofs = 0;
	switch (o->kind) {
	case ORDER_PACK:
		*pack = o->pack;
		*ofs = pack_nth_offset(o->pack, index_pos);
		return;
	case ORDER_MIDX: {
		uint32_t pack_int_id;
		/* a damaged entry (of a MIDX checked lazily) is in no pack */
		if (midx_nth_entry(o->midx, index_pos, &pack_int_id, ofs))
			*pack = o->midx_packs[pack_int_id];
		else
			*ofs = 0;
		return;
	}
	case ORDER_IDENTITY:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

struct entry {
	uint32_t index_pos;
	uint32_t xor_row;      /* BITMAP_NO_XOR_ROW when none */
	uint64_t ofs;          /* of the entry's header in the file */
	bool composed_ready;
	struct ewah composed;  /* the commit's bitmap, XORs undone */
};

struct bitmap_index {
	char *path;
	const unsigned char *map;
	size_t len;
	bool mapped;
	int algo;
	size_t rawsz;
	unsigned flags;
	uint32_t nr_entries;
	uint32_t nr_objects;
	struct bitmap_order *order;
	const unsigned char *digest; /* the trailer's hash, computed already; or NULL */
	bool trust_trailer;     /* leave the trailing checksum to verifiers (odb_verify_bitmaps()) */
	struct bitmap types[4]; /* OBJ_COMMIT - 1 .. OBJ_TAG - 1 */
	uint64_t entries_start, entries_end;
	struct entry *entries;  /* by index_pos */
	const unsigned char *hash_cache;
	/*
	 * A layer of an incremental MIDX chain: bits below base_objects
	 * are the layers below, whose bitmap (base, owned) holds their
	 * commits, types and name hashes. This file's own type bitmaps
	 * and name hashes cover [base_objects, nr_objects); types[] holds
	 * the whole chain's once open.
	 */
	uint32_t base_objects;
	struct bitmap_index *base;
	bool has_pseudo_merges;
	struct pseudo_merge_section pseudo_merges;
};

static const char *short_name(const struct bitmap_index *bi)
{
	return base_name(bi->path);
}

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

static int ewah_err(struct gp_error *err, int code, const char *what)
{
	if (code == EWAH_ENOMEM || code == EWAH_ETOOBIG)
		return gp_error_set(err, GP_ENOMEM, "%s: out of memory", what);
	return CORRUPT(err, "%s: %s", what, ewah_strerror(code));
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
	const struct entry *x = a, *y = b;
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
		struct entry *e = &bi->entries[i];
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
		struct entry *e = &bi->entries[row];
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
	bi->order = order_identity(algo, nr_objects);
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
		ret = order_for_midx(&order, odb, midx_layer(m, l), false, false,
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
		ret = order_for_midx(&order, odb, odb_midx(odb), false, false,
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
			if (!order_for_midx(&order, odb, odb_midx(odb), false, true, false, err)) {
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
		struct entry *e = &bi->entries[chain[nr]];
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

/* ------------------------------------------------------------------ */
/* Querying                                                            */
/* ------------------------------------------------------------------ */

/*
 * Every object the walks looked up, with its position: a bit_pos, or
 * for an object outside the bitmap nr_objects + its rank among those.
 * Looking a name up here (one probe) is much cheaper than searching the
 * .idx or MIDX, and walks meet the same tree entries again and again.
 */
struct ext_object {
	struct object_id oid;
	enum object_type type; /* for objects outside the bitmap */
	size_t pos;
};

struct bitmap_result {
	struct bitmap_index *bi;
	/* bit_pos below nr_objects; ext[i] at nr_objects + i */
	struct bitmap bits;
	struct bitmap haves;      /* what the uninteresting tips reach */
	struct ext_object *ext;   /* all looked up, in the order met */
	size_t ext_nr, ext_alloc;
	size_t nr_outside;        /* those outside the bitmap */
	/* open addressing over ext: the name's first 8 bytes, index + 1 (0: empty) */
	struct ext_slot {
		uint64_t key;
		uint32_t index;
	} *ext_table;
	size_t ext_table_size;  /* a power of two */
	/* trace2 "bitmap" counters, as git's */
	uint64_t hits, pseudo_satisfied, pseudo_cascades;
};

void bitmap_result_free(struct bitmap_result *res)
{
	if (!res)
		return;
	bitmap_release(&res->bits);
	bitmap_release(&res->haves);
	free(res->ext);
	free(res->ext_table);
	free(res);
}

static uint64_t ext_key(const struct object_id *oid)
{
	uint64_t key;
	memcpy(&key, oid->hash, sizeof(key));
	return key;
}

static size_t ext_slot(const struct bitmap_result *res, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (res->ext_table_size - 1);
}

static void ext_rehash(struct bitmap_result *res)
{
	size_t size = res->ext_table_size ? res->ext_table_size * 2 : 64;
	free(res->ext_table);
	res->ext_table = xcalloc(size, sizeof(*res->ext_table));
	res->ext_table_size = size;
	for (size_t i = 0; i < res->ext_nr; i++) {
		uint64_t key = ext_key(&res->ext[i].oid);
		size_t slot = ext_slot(res, key);
		while (res->ext_table[slot].index)
			slot = (slot + 1) & (size - 1);
		res->ext_table[slot].key = key;
		res->ext_table[slot].index = (uint32_t)i + 1;
	}
}

/*
 * The position of oid: its bit_pos, or one past the bitmap's objects
 * (added when create is set, with the type given). False when unknown.
 */
static bool object_pos(struct bitmap_result *res, const struct object_id *oid,
		       enum object_type type, bool create, size_t *pos)
{
	uint64_t key = ext_key(oid);
	uint32_t bit_pos;
	size_t slot;
	if (res->ext_table_size) {
		for (slot = ext_slot(res, key); res->ext_table[slot].index;
		     slot = (slot + 1) & (res->ext_table_size - 1)) {
			size_t i = res->ext_table[slot].index - 1;
			if (res->ext_table[slot].key == key && oideq(&res->ext[i].oid, oid)) {
				*pos = res->ext[i].pos;
				return true;
			}
		}
	}
	if (bitmap_order_find(res->bi->order, oid, &bit_pos)) {
		*pos = bit_pos;
		type = OBJ_NONE;
	} else if (!create) {
		return false;
	} else {
		*pos = res->bi->nr_objects + res->nr_outside++;
	}
	if (2 * (res->ext_nr + 1) > res->ext_table_size)
		ext_rehash(res);
	ALLOC_GROW(res->ext, res->ext_nr + 1, res->ext_alloc);
	res->ext[res->ext_nr].oid = *oid;
	res->ext[res->ext_nr].type = type;
	res->ext[res->ext_nr].pos = *pos;
	slot = ext_slot(res, key);
	while (res->ext_table[slot].index)
		slot = (slot + 1) & (res->ext_table_size - 1);
	res->ext_table[slot].key = key;
	res->ext_table[slot].index = (uint32_t)res->ext_nr++ + 1;
	return true;
}

/*
 * OR a stored bitmap into dst. A corrupt entry could set bits in the
 * padding after the last object, where objects outside the bitmap
 * live; compose_entry() refuses those, so this only grows dst.
 */
static int or_stored(struct bitmap_index *bi, struct bitmap *dst, const struct ewah *e,
		     struct gp_error *err)
{
	int ret = bitmap_or_ewah(dst, e);
	return ret ? ewah_err(err, ret, short_name(bi)) : 0;
}

struct queued_commit {
	uint64_t date;
	uint64_t seq;
	size_t pos;
	struct commit_info info;
};

struct finder {
	struct bitmap_result *res;
	struct odb *odb;
	struct bitmap *base;
	const struct bitmap *seen; /* NULL, or objects not to go into */
	struct bitmap queued;
	bool ignore_missing;
	struct queued_commit *heap;
	size_t heap_nr, heap_alloc;
	uint64_t seq;
	/*
	 * The trees to walk once the commits are: a walked commit's, with
	 * its first parent (whose tree it is compared with), or a root's.
	 */
	struct tree_root {
		struct object_id tree;
		struct object_id parent;
		size_t pos, parent_pos;	/* the commit's and its first parent's */
		bool has_parent, is_commit;
		bool done;		/* walked: all it reaches is marked */
	} *trees;
	size_t trees_nr, trees_alloc;
	size_t *trees_by_pos;      /* the walked commits' entries of trees, by pos */
	size_t nr_by_pos;
	struct tree_kid {
		struct object_id oid;
		struct object_id old;  /* with has_old: the same path's tree in the parent */
		bool is_tree, has_old;
	} *entries;                /* the tree being walked */
	size_t entries_nr, entries_alloc;
	struct gp_error *err;
	/*
	 * Pseudo-merges (when the file has them): one whose commits are
	 * all reached (in base, or roots of this walk) has its objects
	 * ORed into base, at the start and whenever the walk reaches one
	 * of its commits.
	 */
	const struct pseudo_merge_section *pm;
	bool *pm_applied;
	struct bitmap roots;
	uint32_t *pm_of_commit;
	size_t pm_of_commit_alloc;
};

static bool known(const struct finder *f, size_t pos)
{
	return bitmap_get(f->base, pos) || (f->seen && bitmap_get(f->seen, pos));
}

static bool newer(const struct queued_commit *a, const struct queued_commit *b)
{
	return a->date != b->date ? a->date > b->date : a->seq < b->seq;
}

static void heap_push(struct finder *f, struct queued_commit *qc)
{
	size_t i;
	ALLOC_GROW(f->heap, f->heap_nr + 1, f->heap_alloc);
	i = f->heap_nr++;
	while (i) {
		size_t parent = (i - 1) / 2;
		if (!newer(qc, &f->heap[parent]))
			break;
		f->heap[i] = f->heap[parent];
		i = parent;
	}
	f->heap[i] = *qc;
}

static void heap_pop(struct finder *f, struct queued_commit *out)
{
	struct queued_commit last;
	size_t i = 0;
	*out = f->heap[0];
	last = f->heap[--f->heap_nr];
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= f->heap_nr)
			break;
		if (child + 1 < f->heap_nr && newer(&f->heap[child + 1], &f->heap[child]))
			child++;
		if (!newer(&f->heap[child], &last))
			break;
		f->heap[i] = f->heap[child];
		i = child;
	}
	if (f->heap_nr)
		f->heap[i] = last;
}

static int read_missing(struct finder *f, const struct object_id *oid, int ret)
{
	char hex[GP_MAX_HEXSZ + 1];
	if (ret == GP_ENOTFOUND && f->ignore_missing) {
		gp_error_clear(f->err);
		return 1;
	}
	if (ret == GP_ENOTFOUND)
		return gp_error_set(f->err, GP_ENOTFOUND, "missing object %s",
				    oid_to_hex_r(hex, oid));
	return ret;
}

/* Read and queue a commit; 1 when it is missing and that is allowed. */
static int queue_commit(struct finder *f, const struct object_id *oid, size_t pos)
{
	struct queued_commit qc = { 0 };
	enum object_type type;
	unsigned char *data = NULL;
	size_t size;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = odb_read_object(f->odb, oid, &type, &data, &size, f->err);
	if (ret)
		return read_missing(f, oid, ret);
	if (type != OBJ_COMMIT) {
		free(data);
		return CORRUPT(f->err, "object %s is a %s, not a commit",
			       oid_to_hex_r(hex, oid), type_name(type));
	}
	ret = commit_parse(data, size, odb_algo(f->odb), &qc.info, f->err);
	free(data);
	if (ret)
		return gp_error_prefix(f->err, "commit %s", oid_to_hex_r(hex, oid));
	qc.date = qc.info.date;
	qc.seq = f->seq++;
	qc.pos = pos;
	if (bitmap_set(&f->queued, pos) < 0) {
		commit_info_release(&qc.info);
		return gp_error_set(f->err, GP_ENOMEM, "out of memory");
	}
	heap_push(f, &qc);
	return 0;
}

static int set_bit(struct finder *f, size_t pos)
{
	if (bitmap_set(f->base, pos) < 0)
		return gp_error_set(f->err, GP_ENOMEM, "out of memory");
	return 0;
}

/* Whether every commit of pseudo-merge i is reached. */
static bool pm_satisfied(const struct finder *f, const struct ewah *commits)
{
	struct ewah_iter it;
	uint64_t bit_pos;
	ewah_iter_init(&it, commits);
	while (ewah_iter_next(&it, &bit_pos))
		if (!bitmap_get(f->base, bit_pos) && !bitmap_get(&f->roots, bit_pos))
			return false;
	return true;
}

static int pm_try(struct finder *f, uint32_t i, bool *applied)
{
	struct ewah commits, objects;
	int ret;
	*applied = false;
	if (f->pm_applied[i])
		return 0;
	ret = pseudo_merge_section_merge(f->pm, i, &commits, &objects, f->err);
	if (ret || !pm_satisfied(f, &commits))
		return ret;
	ret = or_stored(f->res->bi, f->base, &objects, f->err);
	if (ret)
		return ret;
	f->pm_applied[i] = true;
	f->res->pseudo_satisfied++;
	*applied = true;
	return 0;
}

/* Every merge now satisfied, again until none is (each round a cascade). */
static int pm_apply_all(struct finder *f)
{
	bool again = true;
	int ret = 0;
	if (!f->pm)
		return 0;
	while (again && !ret) {
		again = false;
		for (uint32_t i = 0; i < f->pm->nr_merges && !ret; i++) {
			bool applied;
			ret = pm_try(f, i, &applied);
			again |= applied;
		}
		f->res->pseudo_cascades += again;
	}
	return ret;
}

/* The walk reached the commit at bit_pos: the merges it completes. */
static int pm_after_commit(struct finder *f, size_t bit_pos)
{
	size_t nr;
	bool any = false;
	int ret = 0;
	if (!f->pm || bit_pos >= f->res->bi->nr_objects)
		return 0;
	pseudo_merge_section_for_commit(f->pm, (uint32_t)bit_pos, NULL, 0, &nr);
	if (!nr)
		return 0;
	ALLOC_GROW(f->pm_of_commit, nr, f->pm_of_commit_alloc);
	pseudo_merge_section_for_commit(f->pm, (uint32_t)bit_pos, f->pm_of_commit, nr, &nr);
	for (size_t k = 0; k < nr && !ret; k++) {
		bool applied;
		ret = pm_try(f, f->pm_of_commit[k], &applied);
		any |= applied;
	}
	/* what was ORed in may complete other merges */
	if (any && !ret) {
		f->res->pseudo_cascades++;
		ret = pm_apply_all(f);
	}
	return ret;
}

static int walk_commits(struct finder *f)
{
	struct queued_commit qc;
	int ret = 0;
	while (f->heap_nr) {
		const struct ewah *stored;
		heap_pop(f, &qc);
		if (known(f, qc.pos))
			goto next;
		if (qc.pos < f->res->bi->nr_objects) {
			ret = bitmap_index_for_commit(f->res->bi, (uint32_t)qc.pos, &stored, f->err);
			if (!ret) {
				f->res->hits++;
				ret = or_stored(f->res->bi, f->base, stored, f->err);
				goto next;
			}
			if (ret != GP_ENOTFOUND)
				goto next;
			ret = 0;
		}
		ret = set_bit(f, qc.pos);
		if (!ret)
			ret = pm_after_commit(f, qc.pos);
		if (ret)
			goto next;
		ALLOC_GROW(f->trees, f->trees_nr + 1, f->trees_alloc);
		f->trees[f->trees_nr].tree = qc.info.tree;
		f->trees[f->trees_nr].pos = qc.pos;
		f->trees[f->trees_nr].is_commit = true;
		f->trees[f->trees_nr].done = false;
		f->trees[f->trees_nr].has_parent = qc.info.nr_parents > 0;
		if (qc.info.nr_parents)
			f->trees[f->trees_nr].parent = qc.info.parents[0];
		f->trees_nr++;
		for (size_t i = 0; i < qc.info.nr_parents && !ret; i++) {
			size_t pos;
			object_pos(f->res, &qc.info.parents[i], OBJ_COMMIT, true, &pos);
			if (!i)
				f->trees[f->trees_nr - 1].parent_pos = pos;
			if (known(f, pos) || bitmap_get(&f->queued, pos))
				continue;
			ret = queue_commit(f, &qc.info.parents[i], pos);
			if (ret > 0)
				ret = 0;
		}
next:
		commit_info_release(&qc.info);
		if (ret)
			break;
	}
	return ret;
}

/* Git's tree order: a directory's name sorts as if it ended in '/'. */
static int tree_order_cmp(const struct tree_entry *a, bool a_dir, const struct tree_entry *b,
			  bool b_dir)
{
	size_t len = a->name_len < b->name_len ? a->name_len : b->name_len;
	int cmp = memcmp(a->name, b->name, len);
	unsigned char ca, cb;
	if (cmp)
		return cmp;
	ca = len < a->name_len ? (unsigned char)a->name[len] : a_dir ? '/' : '\0';
	cb = len < b->name_len ? (unsigned char)b->name[len] : b_dir ? '/' : '\0';
	return (int)ca - (int)cb;
}

static bool is_dir_entry(const struct tree_entry *e)
{
	return (e->mode & TREE_MODE_TYPE_MASK) == TREE_MODE_DIR;
}

/*
 * Walk the tree root, with old (when given) the tree at the same path in
 * the commit's first parent, whose objects are all marked already (see
 * walk_root()): an entry that parent's tree holds the same (the same
 * bytes: mode, name and id) is skipped. A commit's tree mostly holds
 * its parent's entries, in the same places: git.git's root tree has
 * some 500, and a fetch's walk over a few hundred commits looked each
 * one up, where a memcmp against the parent's tree at a cursor now
 * does. Where the bytes differ, the parent's entries are read up to the
 * new one's name (git's tree order), so that a changed subtree is
 * compared with its old version in turn.
 */
static int walk_tree(struct finder *f, const struct object_id *root, const struct object_id *old_root)
{
	struct tree_kid *stack = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;
	ALLOC_GROW(stack, 1, alloc);
	stack[nr].oid = *root;
	stack[nr].has_old = old_root != NULL;
	if (old_root)
		stack[nr].old = *old_root;
	nr++;
	while (nr && !ret) {
		struct tree_kid top = stack[--nr];
		struct tree_iter it, old_it;
		struct tree_entry e, oe;
		enum object_type type;
		unsigned char *data = NULL, *old_data = NULL;
		size_t size, old_size = 0, pos;
		char hex[GP_MAX_HEXSZ + 1];
		struct gp_error old_err = GP_ERROR_INIT;
		bool old_dir = false, old_pending = false;

		object_pos(f->res, &top.oid, OBJ_TREE, true, &pos);
		if (known(f, pos))
			continue;
		ret = odb_read_object(f->odb, &top.oid, &type, &data, &size, f->err);
		if (ret) {
			ret = read_missing(f, &top.oid, ret);
			if (ret > 0)
				ret = 0;
			continue;
		}
		if (type != OBJ_TREE) {
			free(data);
			ret = CORRUPT(f->err, "object %s is a %s, not a tree",
				      oid_to_hex_r(hex, &top.oid), type_name(type));
			break;
		}
		ret = set_bit(f, pos);
		/* an old tree that does not read is no help: everything is looked up */
		if (top.has_old) {
			if (odb_read_object(f->odb, &top.old, &type, &old_data, &old_size, &old_err) ||
			    type != OBJ_TREE)
				FREE_AND_NULL(old_data);
			gp_error_clear(&old_err);
			if (old_data)
				tree_iter_init(&old_it, old_data, old_size, odb_algo(f->odb));
		}
		/*
		 * Parse the whole tree first and prefetch each entry's slot,
		 * so that the cache misses of the lookups overlap.
		 */
		f->entries_nr = 0;
		tree_iter_init(&it, data, size, odb_algo(f->odb));
		for (;;) {
			size_t start = it.pos, len;
			unsigned kind;
			bool dir;
			struct tree_kid *kid;
			int cmp = 1;

			if ((ret = tree_iter_next(&it, &e, f->err)) <= 0)
				break;
			ret = 0;
			len = it.pos - start;
			/* the same bytes at the parent's cursor: the same entry */
			if (old_data && !old_pending && len <= old_size - old_it.pos &&
			    !memcmp(data + start, old_data + old_it.pos, len)) {
				old_it.pos += len;
				old_it.entry_nr++;
				continue;
			}
			kind = e.mode & TREE_MODE_TYPE_MASK;
			dir = kind == TREE_MODE_DIR;
			/* else the parent's entries up to this name */
			while (old_data) {
				if (!old_pending) {
					if (tree_iter_next(&old_it, &oe, &old_err) <= 0) {
						gp_error_clear(&old_err);
						FREE_AND_NULL(old_data);
						break;
					}
					old_dir = is_dir_entry(&oe);
					old_pending = true;
				}
				cmp = tree_order_cmp(&oe, old_dir, &e, dir);
				if (cmp >= 0)
					break;
				old_pending = false;
			}
			if (!old_data)
				cmp = 1;
			if (!cmp)
				old_pending = false;  /* this name's: consumed */
			if (kind == TREE_MODE_GITLINK ||
			    (!cmp && (oe.mode & TREE_MODE_TYPE_MASK) == kind && oideq(&oe.oid, &e.oid)))
				continue;
			ALLOC_GROW(f->entries, f->entries_nr + 1, f->entries_alloc);
			kid = &f->entries[f->entries_nr++];
			kid->oid = e.oid;
			kid->is_tree = dir;
			kid->has_old = !cmp && dir && old_dir;
			if (kid->has_old)
				kid->old = oe.oid;
			if (f->res->ext_table_size)
				__builtin_prefetch(&f->res->ext_table[ext_slot(f->res, ext_key(&e.oid))]);
		}
		for (size_t i = 0; !ret && i < f->entries_nr; i++) {
			const struct tree_kid *kid = &f->entries[i];
			size_t entry_pos;
			object_pos(f->res, &kid->oid, kid->is_tree ? OBJ_TREE : OBJ_BLOB,
				   true, &entry_pos);
			if (known(f, entry_pos))
				continue;
			if (kid->is_tree) {
				ALLOC_GROW(stack, nr + 1, alloc);
				stack[nr++] = *kid;
			} else {
				ret = set_bit(f, entry_pos);
			}
		}
		if (ret < 0)
			gp_error_prefix(f->err, "tree %s", oid_to_hex_r(hex, &top.oid));
		free(data);
		free(old_data);
	}
	free(stack);
	return ret;
}

static int cmp_tree_pos(const void *a, const void *b, void *data)
{
	const struct tree_root *trees = data;
	size_t pa = trees[*(const size_t *)a].pos, pb = trees[*(const size_t *)b].pos;
	return pa < pb ? -1 : pa > pb;
}

/* So that a parent the walk went through gives its tree without a read. */
static void index_walked_trees(struct finder *f)
{
	f->trees_by_pos = xmalloc(sizeof(*f->trees_by_pos) * (f->trees_nr ? f->trees_nr : 1));
	f->nr_by_pos = 0;
	for (size_t i = 0; i < f->trees_nr; i++)
		if (f->trees[i].is_commit)
			f->trees_by_pos[f->nr_by_pos++] = i;
	qsort_r(f->trees_by_pos, f->nr_by_pos, sizeof(*f->trees_by_pos), cmp_tree_pos, f->trees);
}

static const struct tree_root *walked_tree(const struct finder *f, size_t pos)
{
	size_t lo = 0, hi = f->nr_by_pos;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tree_root *t = &f->trees[f->trees_by_pos[mid]];
		if (t->pos == pos)
			return t;
		if (t->pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * A root's tree, compared with its first parent's only when all the
 * parent reaches is marked already: the parent came from a bitmap (or
 * is seen), or it is a commit of this walk whose tree was walked
 * before. Deferring to a parent walked later is not safe: trees come
 * back (a revert, an empty commit), and two walks could each leave an
 * entry to the other. Hence the oldest trees first (walk_trees()).
 */
static int walk_root(struct finder *f, struct tree_root *root)
{
	struct object_id parent_tree;
	bool paired = false;
	int ret;
	if (root->has_parent) {
		size_t ppos = root->parent_pos;
		const struct tree_root *walked = walked_tree(f, ppos);
		if (walked) {
			if (walked->done) {
				parent_tree = walked->tree;
				paired = true;
			}
		} else if (known(f, ppos)) {
			struct gp_error ignored = GP_ERROR_INIT;
			struct commit_info info = { 0 };
			enum object_type type;
			unsigned char *data;
			size_t size;
			if (!odb_read_object(f->odb, &root->parent, &type, &data, &size, &ignored)) {
				if (type == OBJ_COMMIT &&
				    !commit_parse(data, size, odb_algo(f->odb), &info, &ignored)) {
					parent_tree = info.tree;
					paired = true;
				}
				commit_info_release(&info);
				free(data);
			}
			gp_error_clear(&ignored);
		}
	}
	ret = walk_tree(f, &root->tree, paired ? &parent_tree : NULL);
	root->done = true;
	return ret;
}

/* The trees of the walk, oldest commit first: see walk_root(). */
static int walk_trees(struct finder *f)
{
	int ret = 0;
	index_walked_trees(f);
	for (size_t i = f->trees_nr; i-- > 0 && !ret;)
		ret = walk_root(f, &f->trees[i]);
	return ret;
}

struct root {
	struct object_id oid;
	enum object_type type;
};

/* All that roots reach, not going into what seen holds, into base. */
static int find_objects(struct bitmap_result *res, struct odb *odb,
			const struct root *roots, size_t nr_roots,
			struct bitmap *base, const struct bitmap *seen,
			bool ignore_missing, struct gp_error *err)
{
	struct finder f = { 0 };
	int ret = 0;
	f.res = res;
	f.odb = odb;
	f.base = base;
	f.seen = seen;
	f.ignore_missing = ignore_missing;
	f.err = err;
	bitmap_init(&f.queued);
	bitmap_init(&f.roots);
	f.pm = bitmap_index_pseudo_merges(res->bi);
	if (f.pm && f.pm->nr_merges)
		f.pm_applied = xcalloc(f.pm->nr_merges, sizeof(*f.pm_applied));
	else
		f.pm = NULL;

	/*
	 * Bitmapped commits first: the walk below stops at what they reach.
	 * One already reached (named twice, or below another) costs nothing.
	 */
	for (size_t i = 0; i < nr_roots && !ret; i++) {
		const struct ewah *stored;
		uint32_t bit_pos;
		if (roots[i].type != OBJ_COMMIT ||
		    !bitmap_order_find(res->bi->order, &roots[i].oid, &bit_pos))
			continue;
		if (f.pm && bitmap_set(&f.roots, bit_pos) < 0)
			ret = gp_error_set(err, GP_ENOMEM, "out of memory");
		if (ret || bitmap_get(base, bit_pos))
			continue;
		ret = bitmap_index_for_commit(res->bi, bit_pos, &stored, err);
		if (!ret) {
			res->hits++;
			ret = or_stored(res->bi, base, stored, err);
		} else if (ret == GP_ENOTFOUND) {
			ret = 0;
		}
	}
	if (!ret)
		ret = pm_apply_all(&f);
	for (size_t i = 0; i < nr_roots && !ret; i++) {
		size_t pos;
		object_pos(res, &roots[i].oid, roots[i].type, true, &pos);
		if (known(&f, pos) || bitmap_get(&f.queued, pos))
			continue;
		switch (roots[i].type) {
		case OBJ_COMMIT:
			ret = queue_commit(&f, &roots[i].oid, pos);
			if (ret > 0)
				ret = 0;
			break;
		case OBJ_TREE:
			ALLOC_GROW(f.trees, f.trees_nr + 1, f.trees_alloc);
			f.trees[f.trees_nr].tree = roots[i].oid;
			f.trees[f.trees_nr].is_commit = false;
			f.trees[f.trees_nr].done = false;
			f.trees[f.trees_nr++].has_parent = false;
			break;
		default:
			ret = set_bit(&f, pos);
			break;
		}
	}
	if (!ret)
		ret = walk_commits(&f);
	if (!ret)
		ret = walk_trees(&f);

	while (f.heap_nr) {
		struct queued_commit qc;
		heap_pop(&f, &qc);
		commit_info_release(&qc.info);
	}
	free(f.heap);
	free(f.trees);
	free(f.trees_by_pos);
	free(f.entries);
	bitmap_release(&f.queued);
	bitmap_release(&f.roots);
	free(f.pm_applied);
	free(f.pm_of_commit);
	return ret;
}

/* Peel tips into roots: a tag is a root, and so is what it points at. */
static int add_roots(struct odb *odb, const struct object_id *tip,
		     struct root **roots, size_t *nr, size_t *alloc, bool ignore_missing,
		     struct gp_error *err)
{
	struct object_id oid = *tip;
	char hex[GP_MAX_HEXSZ + 1];
	for (int depth = 0;; depth++) {
		struct object_info info;
		struct tag_info tag;
		enum object_type type;
		unsigned char *data;
		size_t size;
		int ret = odb_read_object_info(odb, &oid, &info, 0, err);
		if (ret == GP_ENOTFOUND && ignore_missing) {
			gp_error_clear(err);
			return 0;
		}
		if (ret)
			return ret;
		ALLOC_GROW(*roots, *nr + 1, *alloc);
		(*roots)[*nr].oid = oid;
		(*roots)[(*nr)++].type = info.type;
		if (info.type != OBJ_TAG)
			return 0;
		if (depth > 1000)
			return CORRUPT(err, "tag %s: too deeply nested", oid_to_hex_r(hex, tip));
		ret = odb_read_object(odb, &oid, &type, &data, &size, err);
		if (ret)
			return ret;
		ret = tag_parse(data, size, odb_algo(odb), &tag, err);
		if (!ret)
			oid = tag.object;
		free(data);
		if (ret)
			return gp_error_prefix(err, "tag %s", oid_to_hex_r(hex, &oid));
	}
}

int bitmap_reachable(struct bitmap_index *bi, struct odb *odb,
		     const struct bitmap_tip *tips, size_t nr_tips,
		     struct bitmap_result **out, struct gp_error *err)
{
	struct root *wants = NULL, *haves = NULL;
	size_t nr_wants = 0, alloc_wants = 0, nr_haves = 0, alloc_haves = 0;
	struct bitmap_result *res = NULL;
	struct bitmap haves_bits = BITMAP_INIT;
	bool haves_in_bitmap = false;
	int ret = 0;

	for (size_t i = 0; i < nr_tips && !ret; i++) {
		if (tips[i].uninteresting)
			ret = add_roots(odb, &tips[i].oid, &haves, &nr_haves, &alloc_haves,
					true, err);
		else
			ret = add_roots(odb, &tips[i].oid, &wants, &nr_wants, &alloc_wants,
					false, err);
	}
	if (ret)
		goto out;
	for (size_t i = 0; i < nr_haves; i++) {
		uint32_t bit_pos;
		if (bitmap_order_find(bi->order, &haves[i].oid, &bit_pos))
			haves_in_bitmap = true;
	}
	if (!nr_wants || (nr_haves && !haves_in_bitmap)) {
		ret = 1;
		goto out;
	}
	res = xcalloc(1, sizeof(*res));
	res->bi = bi;
	bitmap_init(&res->bits);
	if (nr_haves) {
		ret = find_objects(res, odb, haves, nr_haves, &haves_bits, NULL, true, err);
		if (ret)
			goto out;
	}
	ret = find_objects(res, odb, wants, nr_wants, &res->bits,
			   nr_haves ? &haves_bits : NULL, false, err);
	if (ret)
		goto out;
	bitmap_and_not(&res->bits, &haves_bits);
	res->haves = haves_bits;
	bitmap_init(&haves_bits);
	trace2_data_intmax("bitmap", "pseudo_merges_satisfied", (int64_t)res->pseudo_satisfied);
	trace2_data_intmax("bitmap", "pseudo_merges_cascades", (int64_t)res->pseudo_cascades);
	trace2_data_intmax("bitmap", "bitmap/hits", (int64_t)res->hits);
	*out = res;
	res = NULL;
out:
	bitmap_result_free(res);
	bitmap_release(&haves_bits);
	free(wants);
	free(haves);
	return ret;
}

static bool type_in_mask(enum object_type type, unsigned mask)
{
	return type >= OBJ_COMMIT && type <= OBJ_TAG && (mask & (1u << (type - 1)));
}

int bitmap_result_for_each(const struct bitmap_result *res, unsigned mask,
			   bitmap_show_fn *show, void *data)
{
	const struct bitmap_index *bi = res->bi;
	size_t words = (bi->nr_objects + 63) / 64;
	struct object_id oid;
	int ret;
	for (enum object_type type = OBJ_COMMIT; type <= OBJ_TAG; type++) {
		const struct bitmap *of_type = &bi->types[type - 1];
		if (!type_in_mask(type, mask))
			continue;
		for (size_t w = 0; w < words && w < res->bits.word_nr && w < of_type->word_nr; w++) {
			uint64_t word = res->bits.words[w] & of_type->words[w];
			while (word) {
				uint32_t bit_pos = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
				word &= word - 1;
				bitmap_order_oid(bi->order, bit_pos, &oid);
				ret = show(&oid, type, data);
				if (ret)
					return ret;
			}
		}
	}
	for (size_t i = 0; i < res->ext_nr; i++) {
		if (res->ext[i].pos < bi->nr_objects ||
		    !bitmap_get(&res->bits, res->ext[i].pos) ||
		    !type_in_mask(res->ext[i].type, mask))
			continue;
		ret = show(&res->ext[i].oid, res->ext[i].type, data);
		if (ret)
			return ret;
	}
	return 0;
}

void bitmap_result_count(const struct bitmap_result *res, uint64_t counts[5])
{
	const struct bitmap_index *bi = res->bi;
	size_t words = (bi->nr_objects + 63) / 64;
	memset(counts, 0, 5 * sizeof(*counts));
	for (enum object_type type = OBJ_COMMIT; type <= OBJ_TAG; type++) {
		const struct bitmap *of_type = &bi->types[type - 1];
		for (size_t w = 0; w < words && w < res->bits.word_nr && w < of_type->word_nr; w++)
			counts[type] += (uint64_t)__builtin_popcountll(res->bits.words[w] &
								       of_type->words[w]);
	}
	for (size_t i = 0; i < res->ext_nr; i++)
		if (res->ext[i].pos >= bi->nr_objects &&
		    bitmap_get(&res->bits, res->ext[i].pos) &&
		    res->ext[i].type >= OBJ_COMMIT && res->ext[i].type <= OBJ_TAG)
			counts[res->ext[i].type]++;
}

struct test_walk {
	struct bitmap_index *bi;
	struct bitmap walked;
	struct progress *progress;
	struct gp_error *err;
};

static int test_show(const struct object_id *oid, enum object_type type,
		     const char *path, void *data)
{
	struct test_walk *t = data;
	char hex[GP_MAX_HEXSZ + 1];
	uint32_t bit_pos;
	enum object_type expected;
	if (!bitmap_order_find(t->bi->order, oid, &bit_pos))
		return CORRUPT(t->err, "object %s is not in the bitmapped %s",
			       oid_to_hex_r(hex, oid),
			       t->bi->order->kind == ORDER_MIDX ? "multi-pack-index" : "pack");
	expected = bitmap_index_type_at(t->bi, bit_pos);
	if (expected != type)
		return CORRUPT(t->err, "object %s: real type %s, the type bitmaps say %s",
			       oid_to_hex_r(hex, oid), type_name(type),
			       expected == OBJ_BAD ? "none" : type_name(expected));
	if (bitmap_set(&t->walked, bit_pos) < 0)
		return gp_error_set(t->err, GP_ENOMEM, "out of memory");
	progress_add(t->progress, 1);
	return 0;
}

int bitmap_test_commit(struct bitmap_index *bi, struct odb *odb,
		       const struct object_id *oid, struct progress *progress,
		       uint64_t *bits, uint32_t *checksum, struct gp_error *err)
{
	struct test_walk t = { 0 };
	struct rev_walk *walk = NULL;
	struct bitmap stored = BITMAP_INIT;
	const struct ewah *e;
	char hex[GP_MAX_HEXSZ + 1];
	uint32_t bit_pos;
	int ret;

	if (!bitmap_order_find(bi->order, oid, &bit_pos))
		return gp_error_set(err, GP_ENOTFOUND, "commit '%s' doesn't have an indexed bitmap",
				    oid_to_hex_r(hex, oid));
	ret = bitmap_index_for_commit(bi, bit_pos, &e, err);
	if (ret == GP_ENOTFOUND)
		return gp_error_set(err, GP_ENOTFOUND, "commit '%s' doesn't have an indexed bitmap",
				    oid_to_hex_r(hex, oid));
	if (ret)
		return ret;
	*bits = ewah_bit_size(e);
	*checksum = bitmap_ewah_checksum(e);
	ret = ewah_to_bitmap(&stored, e);
	if (ret) {
		ret = ewah_err(err, ret, short_name(bi));
		goto out;
	}
	t.bi = bi;
	t.progress = progress;
	t.err = err;
	bitmap_init(&t.walked);
	rev_walk_new(&walk, odb, odb_algo(odb));
	ret = rev_walk_add_tip(walk, oid, false, "", err);
	if (!ret)
		ret = rev_walk_run(walk, REV_OBJECTS, test_show, &t, err);
	if (ret)
		goto out;
	if (!bitmap_equals(&stored, &t.walked)) {
		size_t words = stored.word_nr > t.walked.word_nr ? stored.word_nr : t.walked.word_nr;
		for (size_t w = 0; w < words; w++) {
			uint64_t a = w < stored.word_nr ? stored.words[w] : 0;
			uint64_t b = w < t.walked.word_nr ? t.walked.words[w] : 0;
			if (a != b) {
				uint32_t pos = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(a ^ b));
				struct object_id other;
				bitmap_order_oid(bi->order, pos, &other);
				ret = CORRUPT(err, "mismatch in bitmap results: object %s is %s",
					      oid_to_hex_r(hex, &other),
					      (a >> (pos % 64)) & 1
					      ? "in the bitmap but not reachable"
					      : "reachable but not in the bitmap");
				break;
			}
		}
	}
out:
	rev_walk_free(walk);
	bitmap_release(&t.walked);
	bitmap_release(&stored);
	return ret;
}

int bitmap_result_for_each_pos(const struct bitmap_result *res, const struct bitmap *except,
			       bitmap_pos_fn *fn, void *data)
{
	const struct bitmap_index *bi = res->bi;
	size_t words = MIN((bi->nr_objects + 63) / 64, res->bits.word_nr);
	struct object_id oid;
	int ret;
	for (size_t w = 0; w < words; w++) {
		uint64_t word = res->bits.words[w];
		if (except && w < except->word_nr)
			word &= ~except->words[w];
		while (word) {
			uint32_t bit_pos = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
			word &= word - 1;
			if (bit_pos >= bi->nr_objects)
				break;
			bitmap_order_oid(bi->order, bit_pos, &oid);
			ret = fn(bit_pos, &oid, bitmap_index_type_at(bi, bit_pos), data);
			if (ret)
				return ret;
		}
	}
	for (size_t i = 0; i < res->ext_nr; i++) {
		if (res->ext[i].pos < bi->nr_objects || !bitmap_get(&res->bits, res->ext[i].pos) ||
		    (except && bitmap_get(except, res->ext[i].pos)))
			continue;
		ret = fn(res->ext[i].pos, &res->ext[i].oid, res->ext[i].type, data);
		if (ret)
			return ret;
	}
	return 0;
}

bool bitmap_result_has_bit(const struct bitmap_result *res, uint32_t bit_pos)
{
	return bitmap_get(&res->bits, bit_pos);
}

uint64_t bitmap_result_count_range(const struct bitmap_result *res, uint32_t start, uint32_t nr)
{
	uint64_t end = (uint64_t)start + nr, count = 0;
	for (uint64_t pos = start; pos < end && pos / 64 < res->bits.word_nr;) {
		uint64_t word = res->bits.words[pos / 64] >> (pos % 64);
		uint64_t take = MIN(64 - pos % 64, end - pos);
		if (take < 64)
			word &= ((uint64_t)1 << take) - 1;
		count += (uint64_t)__builtin_popcountll(word);
		pos += take;
	}
	return count;
}

bool bitmap_result_in_haves(const struct bitmap_result *res, const struct object_id *oid)
{
	uint32_t bit_pos;
	if (!res->haves.word_nr)
		return false;
	if (bitmap_order_find(res->bi->order, oid, &bit_pos))
		return bitmap_get(&res->haves, bit_pos);
	for (size_t i = 0; i < res->ext_nr; i++)
		if (oideq(&res->ext[i].oid, oid))
			return bitmap_get(&res->haves, res->ext[i].pos);
	return false;
}
