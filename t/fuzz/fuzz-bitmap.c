/*
 * fuzz-bitmap.c: reachability bitmap (.bitmap) images through
 * bitmap_index_parse_buf(), then every query that trusts what it
 * validated.
 *
 * Input: a 5-byte prefix, then the image.
 *
 *	byte 0		flags: bit 0 SHA-256 (else SHA-1); bit 1 the image
 *			is the body only, and the harness appends its
 *			trailing checksum (hash_buf_checksum() of it), so that
 *			mutations get past the check of the trailer; the
 *			other bits are ignored
 *	bytes 1..4	the object count, big-endian, taken modulo
 *			FUZZ_BITMAP_MAX_OBJECTS + 1 (a .bitmap does not
 *			record it: a real caller gets it from the pack or
 *			the MIDX)
 *
 * Built with -DGP_FUZZ_FIX_TRAILER, an image without bit 1 gets its
 * last rawsz bytes replaced by the checksum of the bytes before them.
 *
 * The parser reads the image over the identity order of that many
 * objects (bit_pos == index_pos), with no expected pack checksum. When
 * it parses:
 *
 *  - the counts and flags are the header's; the type bitmaps give each
 *    object exactly one type, bitmap_index_type_at() agrees with them,
 *    and nothing is typed at or past the object count;
 *  - with a name-hash cache, bitmap_index_name_hash() returns, for each
 *    object, the 4 bytes where the cache keeps it, and nothing past the
 *    last object; without one, nothing;
 *  - every entry is composed (bitmap_index_entry(), XORs undone) or
 *    refused with GP_ECORRUPT and a message; rows are strictly ordered
 *    by index_pos and name commits; a composed EWAH has no bit at or
 *    past the object count (the invariant everything downstream relies
 *    on: bits are object positions), a bit size of at most the object
 *    count rounded up to a word, a popcount equal to the bits iterated,
 *    and the checksum `rev-list --test-bitmap` prints
 *    (bitmap_ewah_checksum(), recomputed here from the serialized
 *    words);
 *  - asking again gives the same answer, the same EWAH with the same
 *    bits; bitmap_index_for_commit() finds each composed entry at its
 *    position, and GP_ENOTFOUND elsewhere (probed around every entry,
 *    the first positions, the last, the count, UINT32_MAX);
 *  - a plain second reading of the entries (check_against_reference():
 *    file order and XOR offsets, or lookup rows and XOR rows, each
 *    chain composed from its end) refuses exactly the entries the
 *    library refuses and composes the others to the same bits;
 *  - pseudo-merges (check_pseudo_merges()) read back, each with commits
 *    and no bit past the object count;
 *  - the same image is refused (GP_ECORRUPT) when another pack checksum
 *    is expected, and accepted when the header's own is.
 *
 * Seeds (t/fuzz/corpus/bitmap/, made by make-corpus.sh): bitmaps git
 * 2.39 wrote for small SHA-1 and SHA-256 repositories with merges and
 * tags, for a single pack ("repack -adb") and for a MIDX
 * ("multi-pack-index write --bitmap"), each with and without
 * pack.writeBitmapLookupTable, and one without the name-hash cache.
 * git's entries and lookup table name commits by index_pos in the .idx
 * or MIDX while the bits and types follow the pack or pseudo-pack
 * order; the seeds are converted to the identity order (index_pos
 * rewritten to the bit position, lookup rows re-sorted, the name-hash
 * cache permuted, the checksum recomputed), the only order
 * bitmap_index_parse_buf() knows. Each is kept as a body with bit 1
 * set; the plain pack and MIDX ones also as <name>-whole, bit 1 clear,
 * with the trailer.
 * hand-* are made up: an empty bitmap of no objects, and a pseudo-merge
 * section (git 2.39 cannot write one) added to a git bitmap; pm-* are
 * bitmaps gitpack wrote with pseudo-merges, overlapping ones included.
 */
#include "fuzz.h"
#include "pack-bitmap.h"
#include "pseudo-merge.h"
#include "ewah/ewah.h"

#define FUZZ_BITMAP_PREFIX 5
#define FUZZ_BITMAP_SHA256 0x01
#define FUZZ_BITMAP_APPEND_HASH 0x02
/*
 * Enough for every word-boundary case; more only makes each input
 * slower (type bitmaps are decompressed, bits are iterated).
 */
#define FUZZ_BITMAP_MAX_OBJECTS (1u << 16)
/* bitmap_index_for_commit() is probed at every position below this. */
#define FUZZ_BITMAP_PROBE_ALL 1024

/* Keeps the reads from being optimised away. */
static volatile uint64_t sink;

/* git's ewah_checksum(), from the serialized form rather than buf. */
static uint32_t checksum_of_serialized(const struct ewah *e)
{
	size_t size = ewah_serialized_size(e), written = 0;
	unsigned char *buf = xmalloc(size);
	uint32_t crc, nr_words;
	int ret;

	if ((ret = ewah_serialize(e, buf, size, &written)) || written != size)
		fuzz_fail("a composed EWAH does not serialize (%d)", ret);
	crc = get_be32(buf);
	nr_words = get_be32(buf + 4);
	for (uint32_t w = 0; w < nr_words; w++) {
		uint64_t word = get_be64(buf + 8 + 8 * (size_t)w);
		for (int b = 0; b < 8; b++)
			crc = (crc << 5) - crc + (uint32_t)((word >> (8 * b)) & 0xff);
	}
	free(buf);
	return crc;
}

static void check_composed(const struct ewah *e, uint32_t nr_objects, uint32_t row)
{
	uint64_t limit = (uint64_t)nr_objects + 63;
	uint64_t pos, prev = 0, seen = 0;
	struct ewah_iter it;

	if (!e)
		fuzz_fail("entry %u composed to NULL", row);
	if (ewah_bit_size(e) > limit - limit % 64)
		fuzz_fail("entry %u has %" PRIu64 " bits for %u objects", row,
			  ewah_bit_size(e), nr_objects);
	ewah_iter_init(&it, e);
	while (ewah_iter_next(&it, &pos)) {
		if (pos >= nr_objects)
			fuzz_fail("entry %u sets bit %" PRIu64 ", past the %u objects",
				  row, pos, nr_objects);
		if (seen && pos <= prev)
			fuzz_fail("entry %u: bit %" PRIu64 " after %" PRIu64, row, pos, prev);
		prev = pos;
		seen++;
	}
	if (seen != ewah_popcount(e))
		fuzz_fail("entry %u: iterated %" PRIu64 " bits, popcount %" PRIu64, row,
			  seen, ewah_popcount(e));
	if (bitmap_ewah_checksum(e) != checksum_of_serialized(e))
		fuzz_fail("entry %u: bitmap_ewah_checksum %08x, its words give %08x",
			  row, bitmap_ewah_checksum(e), checksum_of_serialized(e));
	sink += seen;
}

static void check_types(const struct bitmap_index *bi, uint32_t nr_objects)
{
	const struct bitmap *bits[5] = { NULL };
	uint64_t sum = 0;

	for (int type = OBJ_COMMIT; type <= OBJ_TAG; type++) {
		struct bitmap_iter it;
		size_t pos;

		bits[type] = bitmap_index_type_bits(bi, (enum object_type)type);
		if (!bits[type])
			fuzz_fail("no type bitmap for type %d", type);
		bitmap_iter_init(&it, bits[type]);
		while (bitmap_iter_next(&it, &pos))
			if (pos >= nr_objects)
				fuzz_fail("type %d bitmap sets bit %zu of %u objects", type,
					  pos, nr_objects);
		sum += bitmap_popcount(bits[type]);
	}
	if (sum != nr_objects)
		fuzz_fail("the type bitmaps hold %" PRIu64 " bits for %u objects", sum,
			  nr_objects);
	if (bitmap_index_type_bits(bi, OBJ_NONE) || bitmap_index_type_bits(bi, OBJ_BAD) ||
	    bitmap_index_type_bits(bi, OBJ_OFS_DELTA))
		fuzz_fail("a type bitmap for a type that is none of the four");

	for (uint32_t bit_pos = 0; bit_pos < nr_objects; bit_pos++) {
		enum object_type type = bitmap_index_type_at(bi, bit_pos);
		int nr_types = 0;
		if (type < OBJ_COMMIT || type > OBJ_TAG)
			fuzz_fail("object %u has type %d", bit_pos, (int)type);
		for (int t = OBJ_COMMIT; t <= OBJ_TAG; t++)
			nr_types += bitmap_get(bits[t], bit_pos);
		if (nr_types != 1 || !bitmap_get(bits[type], bit_pos))
			fuzz_fail("object %u: type %d, in %d type bitmaps", bit_pos,
				  (int)type, nr_types);
	}
	if (bitmap_index_type_at(bi, nr_objects) != OBJ_BAD ||
	    bitmap_index_type_at(bi, UINT32_MAX) != OBJ_BAD)
		fuzz_fail("a type past the %u objects", nr_objects);
}

static void check_name_hashes(const struct bitmap_index *bi,
			      const unsigned char *image, size_t len, size_t rawsz,
			      uint32_t nr_objects)
{
	uint32_t hash;

	if (!(bitmap_index_flags(bi) & BITMAP_OPT_HASH_CACHE)) {
		if (bitmap_index_name_hash(bi, 0, &hash))
			fuzz_fail("a name hash without a name-hash cache");
		return;
	}
	/* The cache ends where the trailer starts, as the format says. */
	for (uint32_t index_pos = 0; index_pos < nr_objects; index_pos++) {
		size_t at = len - rawsz - 4 * ((size_t)nr_objects - index_pos);
		if (!bitmap_index_name_hash(bi, index_pos, &hash))
			fuzz_fail("no name hash for object %u of %u", index_pos, nr_objects);
		if (hash != get_be32(image + at))
			fuzz_fail("name hash of object %u is %08x, the cache holds %08x",
				  index_pos, hash, get_be32(image + at));
	}
	if (bitmap_index_name_hash(bi, nr_objects, &hash) ||
	    bitmap_index_name_hash(bi, UINT32_MAX, &hash))
		fuzz_fail("a name hash past the %u objects", nr_objects);
}

struct row_result {
	int ret;
	uint32_t index_pos;
	const struct ewah *bitmap;
	uint64_t popcount;
	uint32_t checksum;
};

/*
 * The row whose entry was composed for bit_pos, or -1. Composed rows
 * are strictly ordered (check_entries() makes sure); refused rows have
 * no known position and are stepped over.
 */
static int64_t find_composed(const struct row_result *rows, uint32_t nr,
			     uint32_t bit_pos)
{
	uint32_t lo = 0, hi = nr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2, probe = mid;
		while (probe < hi && rows[probe].ret)
			probe++;
		if (probe == hi)
			hi = mid; /* nothing composed in [mid, hi) */
		else if (rows[probe].index_pos == bit_pos)
			return probe;
		else if (rows[probe].index_pos < bit_pos)
			lo = probe + 1;
		else
			hi = mid;
	}
	return -1;
}

/* bitmap_index_for_commit() at bit_pos, against what the rows gave. */
static void probe_commit(struct bitmap_index *bi, const struct row_result *rows,
			 uint32_t nr, bool some_refused, uint32_t bit_pos)
{
	struct gp_error err = GP_ERROR_INIT;
	const struct ewah *bitmap = NULL;
	int64_t row = find_composed(rows, nr, bit_pos);
	int ret = bitmap_index_for_commit(bi, bit_pos, &bitmap, &err);

	if (row >= 0) {
		if (ret)
			fuzz_fail("bitmap_index_for_commit(%u) returned %d for row %" PRId64
				  ": %s", bit_pos, ret, row, gp_error_msg(&err));
		if (bitmap != rows[row].bitmap)
			fuzz_fail("bitmap_index_for_commit(%u) gave another EWAH than row %"
				  PRId64, bit_pos, row);
		return;
	}
	if (!ret)
		fuzz_fail("bitmap_index_for_commit(%u) found an entry no row has", bit_pos);
	if (ret == GP_ENOTFOUND) {
		/* A miss is the walk's common case: it may come without a message. */
		if (err.msg && err.code != GP_ENOTFOUND)
			fuzz_fail("GP_ENOTFOUND recorded as code %d", err.code);
		gp_error_clear(&err);
		return;
	}
	/* Only a position of a refused row may fail otherwise. */
	if (!some_refused)
		fuzz_fail("bitmap_index_for_commit(%u) returned %d with every entry composed",
			  bit_pos, ret);
	fuzz_check_error(ret, &err, GP_ECORRUPT, "bitmap_index_for_commit");
}

/*
 * A second reading of the entries, written for clarity rather than
 * speed, to hold the library's answers against: the entries as the
 * file lists them (in file order with XOR offsets, or the lookup
 * table's rows with XOR rows), each composed after the one it is XORed
 * with. An entry is bad when its own bytes are (an EWAH that does not
 * read or is too long, a lookup row whose entry is for another object,
 * bits at or past the object count once composed), when it is XORed
 * with a bad one, or when its XOR references never end. The library
 * must refuse exactly the bad ones and compose the others to the same
 * bits.
 */
enum ref_state { REF_TODO, REF_ON_PATH, REF_DONE };

struct ref_entry {
	uint32_t index_pos;
	uint64_t ofs;     /* of the entry's 6-byte header */
	uint32_t xor_ref; /* index in the ref array, or BITMAP_NO_XOR_ROW */
	enum ref_state state;
	bool bad;
	struct ewah bits;
};

struct ref_layout {
	const unsigned char *image;
	uint64_t entries_start, entries_end, table_ofs;
	uint32_t nr_objects;
};

/* The layout as bitmap-format gives it, for an image that parsed. */
static void ref_layout(struct ref_layout *l, const struct bitmap_index *bi,
		       const unsigned char *image, size_t len, size_t rawsz)
{
	unsigned flags = bitmap_index_flags(bi);
	uint64_t end = len - rawsz, ofs = 12 + rawsz;

	l->image = image;
	l->nr_objects = bitmap_index_nr_objects(bi);
	if (flags & BITMAP_OPT_HASH_CACHE)
		end -= 4 * (uint64_t)l->nr_objects;
	if (flags & BITMAP_OPT_LOOKUP_TABLE)
		end -= (uint64_t)BITMAP_LOOKUP_ROW_SIZE * bitmap_index_nr_entries(bi);
	l->table_ofs = end;
	if (flags & BITMAP_OPT_PSEUDO_MERGES)
		end -= get_be64(image + end - 8);
	l->entries_end = end;
	for (int type = 0; type < 4; type++) {
		struct ewah e = EWAH_INIT;
		size_t used = 0;
		if (ewah_view(&e, image + ofs, end - ofs, &used, NULL))
			fuzz_fail("type bitmap %d at offset %" PRIu64 " does not read again",
				  type, ofs);
		ofs += used;
	}
	l->entries_start = ofs;
}

static void ref_compose_one(const struct ref_layout *l, struct ref_entry *refs,
			    struct ref_entry *e)
{
	uint64_t limit = (uint64_t)l->nr_objects + 63, pos, last = 0;
	struct ewah view = EWAH_INIT;
	struct ewah_iter it;

	if (e->xor_ref != BITMAP_NO_XOR_ROW && refs[e->xor_ref].bad)
		goto bad;
	if (l->entries_end - e->ofs < BITMAP_ENTRY_HEADER_SIZE ||
	    get_be32(l->image + e->ofs) != e->index_pos)
		goto bad;
	if (ewah_view(&view, l->image + e->ofs + BITMAP_ENTRY_HEADER_SIZE,
		      l->entries_end - e->ofs - BITMAP_ENTRY_HEADER_SIZE, NULL, NULL) ||
	    ewah_bit_size(&view) > limit - limit % 64)
		goto bad;
	if (e->xor_ref == BITMAP_NO_XOR_ROW)
		e->bits = view;
	else if (ewah_xor(&e->bits, &view, &refs[e->xor_ref].bits))
		fuzz_fail("ewah_xor failed on small bitmaps");
	ewah_iter_init(&it, &e->bits);
	while (ewah_iter_next(&it, &pos))
		last = pos + 1;
	if (last > l->nr_objects)
		goto bad;
	return;
bad:
	e->bad = true;
}

/* Compose every entry, each chain from its end (no recursion). */
static void ref_compose(const struct ref_layout *l, struct ref_entry *refs, uint32_t nr)
{
	uint32_t *path = xmalloc(sizeof(*path) * (nr ? nr : 1));

	for (uint32_t k = 0; k < nr; k++) {
		uint32_t r = k, n = 0;
		bool ended = false, cycle;

		while (refs[r].state == REF_TODO) {
			refs[r].state = REF_ON_PATH;
			path[n++] = r;
			if (refs[r].xor_ref == BITMAP_NO_XOR_ROW) {
				ended = true;
				break;
			}
			r = refs[r].xor_ref;
		}
		/* Stopped on an entry of this very path: a cycle. */
		cycle = !ended && refs[r].state == REF_ON_PATH;
		while (n--) {
			struct ref_entry *e = &refs[path[n]];
			if (cycle)
				e->bad = true;
			else
				ref_compose_one(l, refs, e);
			e->state = REF_DONE;
		}
	}
	free(path);
}

static void check_against_reference(struct bitmap_index *bi, const unsigned char *image,
				    size_t len, size_t rawsz,
				    const struct row_result *rows)
{
	struct gp_error err = GP_ERROR_INIT;
	uint32_t nr = bitmap_index_nr_entries(bi), nr_good = 0, nr_composed = 0;
	struct ref_entry *refs = xcalloc(nr ? nr : 1, sizeof(*refs));
	struct ref_layout l;

	ref_layout(&l, bi, image, len, rawsz);
	if (bitmap_index_flags(bi) & BITMAP_OPT_LOOKUP_TABLE) {
		for (uint32_t row = 0; row < nr; row++) {
			const unsigned char *p = image + l.table_ofs +
				(size_t)row * BITMAP_LOOKUP_ROW_SIZE;
			refs[row].index_pos = get_be32(p);
			refs[row].ofs = get_be64(p + 4);
			refs[row].xor_ref = get_be32(p + 12);
			if (refs[row].xor_ref != BITMAP_NO_XOR_ROW && refs[row].xor_ref >= nr)
				fuzz_fail("lookup row %u has XOR row %u of %u, and parsed", row,
					  refs[row].xor_ref, nr);
		}
	} else {
		uint64_t ofs = l.entries_start;
		for (uint32_t i = 0; i < nr; i++) {
			struct ewah e = EWAH_INIT;
			unsigned xor_offset;
			size_t used = 0;
			if (l.entries_end - ofs < BITMAP_ENTRY_HEADER_SIZE ||
			    ewah_view(&e, image + ofs + BITMAP_ENTRY_HEADER_SIZE,
				      l.entries_end - ofs - BITMAP_ENTRY_HEADER_SIZE, &used, NULL))
				fuzz_fail("entry %u at offset %" PRIu64 " does not read again",
					  i, ofs);
			xor_offset = image[ofs + 4];
			if (xor_offset > i)
				fuzz_fail("entry %u has XOR offset %u, and parsed", i, xor_offset);
			refs[i].index_pos = get_be32(image + ofs);
			refs[i].ofs = ofs;
			refs[i].xor_ref = xor_offset ? i - xor_offset : BITMAP_NO_XOR_ROW;
			ofs += BITMAP_ENTRY_HEADER_SIZE + used;
		}
	}
	ref_compose(&l, refs, nr);

	for (uint32_t k = 0; k < nr; k++) {
		struct ref_entry *e = &refs[k];
		int64_t row = find_composed(rows, nr, e->index_pos);
		if (e->bad) {
			const struct ewah *bitmap;
			int ret;
			if (row >= 0)
				fuzz_fail("entry for object %u (file entry %u) composed, but is bad",
					  e->index_pos, k);
			ret = bitmap_index_for_commit(bi, e->index_pos, &bitmap, &err);
			if (ret != GP_ECORRUPT)
				fuzz_fail("bad entry for object %u: bitmap_index_for_commit returned %d",
					  e->index_pos, ret);
			fuzz_check_error(ret, &err, GP_ECORRUPT, "bitmap_index_for_commit");
			continue;
		}
		nr_good++;
		if (row < 0)
			fuzz_fail("entry for object %u (file entry %u) refused, but is good",
				  e->index_pos, k);
		if (!ewah_equals(rows[row].bitmap, &e->bits) ||
		    ewah_bit_size(rows[row].bitmap) != ewah_bit_size(&e->bits))
			fuzz_fail("entry for object %u (file entry %u) composed to other bits",
				  e->index_pos, k);
	}
	for (uint32_t row = 0; row < nr; row++)
		nr_composed += !rows[row].ret;
	if (nr_good != nr_composed)
		fuzz_fail("%u entries composed, %u good", nr_composed, nr_good);
	for (uint32_t k = 0; k < nr; k++)
		ewah_release(&refs[k].bits);
	free(refs);
}

static void check_entries(struct bitmap_index *bi, uint32_t nr_objects,
			  const unsigned char *image, size_t len, size_t rawsz)
{
	struct gp_error err = GP_ERROR_INIT;
	uint32_t nr = bitmap_index_nr_entries(bi);
	struct row_result *rows = xcalloc(nr ? nr : 1, sizeof(*rows));
	bool some_refused = false, have_prev = false;
	uint32_t prev = 0, index_pos;
	const struct ewah *bitmap;
	int ret;

	for (uint32_t row = 0; row < nr; row++) {
		struct row_result *r = &rows[row];
		r->ret = bitmap_index_entry(bi, row, &r->index_pos, &r->bitmap, &err);
		if (r->ret) {
			fuzz_check_error(r->ret, &err, GP_ECORRUPT, "bitmap_index_entry");
			some_refused = true;
			continue;
		}
		if (err.msg)
			fuzz_fail("entry %u composed with a message: %s", row, err.msg);
		if (r->index_pos >= nr_objects)
			fuzz_fail("entry %u is for object %u of %u", row, r->index_pos,
				  nr_objects);
		if (bitmap_index_type_at(bi, r->index_pos) != OBJ_COMMIT)
			fuzz_fail("entry %u is for object %u, of type %d", row, r->index_pos,
				  (int)bitmap_index_type_at(bi, r->index_pos));
		if (have_prev && r->index_pos <= prev)
			fuzz_fail("entry %u is for object %u, after %u", row, r->index_pos,
				  prev);
		prev = r->index_pos;
		have_prev = true;
		check_composed(r->bitmap, nr_objects, row);
		r->popcount = ewah_popcount(r->bitmap);
		r->checksum = bitmap_ewah_checksum(r->bitmap);
	}

	/*
	 * Composing the later rows (which may XOR with these) must have
	 * left every answer as it was.
	 */
	for (uint32_t row = 0; row < nr; row++) {
		struct row_result *r = &rows[row];
		bitmap = NULL;
		ret = bitmap_index_entry(bi, row, &index_pos, &bitmap, &err);
		if (ret != r->ret)
			fuzz_fail("entry %u returned %d, then %d", row, r->ret, ret);
		if (ret) {
			fuzz_check_error(ret, &err, GP_ECORRUPT, "bitmap_index_entry");
			continue;
		}
		if (index_pos != r->index_pos || bitmap != r->bitmap ||
		    ewah_popcount(bitmap) != r->popcount ||
		    bitmap_ewah_checksum(bitmap) != r->checksum)
			fuzz_fail("entry %u changed when asked again", row);
	}

	ret = bitmap_index_entry(bi, nr, &index_pos, &bitmap, &err);
	fuzz_check_error(ret, &err, GP_EINVAL, "bitmap_index_entry past the last row");

	for (uint32_t bit_pos = 0; bit_pos < nr_objects && bit_pos < FUZZ_BITMAP_PROBE_ALL;
	     bit_pos++)
		probe_commit(bi, rows, nr, some_refused, bit_pos);
	for (uint32_t row = 0; row < nr; row++) {
		if (rows[row].ret)
			continue;
		probe_commit(bi, rows, nr, some_refused, rows[row].index_pos);
		if (rows[row].index_pos)
			probe_commit(bi, rows, nr, some_refused, rows[row].index_pos - 1);
		probe_commit(bi, rows, nr, some_refused, rows[row].index_pos + 1);
	}
	if (nr_objects)
		probe_commit(bi, rows, nr, some_refused, nr_objects - 1);
	probe_commit(bi, rows, nr, some_refused, nr_objects);
	probe_commit(bi, rows, nr, some_refused, UINT32_MAX);
	check_against_reference(bi, image, len, rawsz, rows);
	free(rows);
}

/*
 * A parsed pseudo-merge section: only with its flag; each merge's two
 * EWAHs read back, its commits non-empty, no bit at or past the object
 * count; past the last merge, GP_EINVAL.
 */
static void check_pseudo_merges(const struct bitmap_index *bi, uint32_t nr_objects)
{
	const struct pseudo_merge_section *s = bitmap_index_pseudo_merges(bi);
	struct gp_error err = GP_ERROR_INIT;
	struct ewah commits, objects;
	if (!s) {
		if (bitmap_index_flags(bi) & BITMAP_OPT_PSEUDO_MERGES)
			fuzz_fail("pseudo-merge flag without a section");
		return;
	}
	if (!(bitmap_index_flags(bi) & BITMAP_OPT_PSEUDO_MERGES))
		fuzz_fail("a pseudo-merge section without its flag");
	for (uint32_t i = 0; i < s->nr_merges; i++) {
		if (pseudo_merge_section_merge(s, i, &commits, &objects, &err))
			fuzz_fail("pseudo-merge %u refused after the parse: %s", i,
				  gp_error_msg(&err));
		if (!ewah_popcount(&commits))
			fuzz_fail("pseudo-merge %u has no commits", i);
		if (ewah_bits_used(&commits) > nr_objects || ewah_bits_used(&objects) > nr_objects)
			fuzz_fail("pseudo-merge %u has a bit past the object count", i);
		sink += ewah_popcount(&objects);
	}
	if (pseudo_merge_section_merge(s, s->nr_merges, &commits, &objects, &err) != GP_EINVAL)
		fuzz_fail("a pseudo-merge past the last one");
	gp_error_clear(&err);
}

static void fuzz_bitmap(const unsigned char *image, size_t len, int algo,
			uint32_t nr_objects)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t rawsz = gp_hash_algos[algo].rawsz;
	struct bitmap_index *bi = NULL, *again = NULL;
	unsigned char other[GP_MAX_RAWSZ];
	int ret;

	ret = bitmap_index_parse_buf(&bi, image, len, "fuzz.bitmap", algo, nr_objects,
				     NULL, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "bitmap_index_parse_buf");
		return;
	}
	if (err.msg)
		fuzz_fail("bitmap_index_parse_buf succeeded with a message: %s", err.msg);
	if (!bi)
		fuzz_fail("bitmap_index_parse_buf succeeded without a bitmap");
	if (len < 12 + 2 * rawsz)
		fuzz_fail("a bitmap of %zu bytes parsed", len);
	if (bitmap_index_nr_objects(bi) != nr_objects ||
	    bitmap_index_nr_entries(bi) != get_be32(image + 8) ||
	    bitmap_index_flags(bi) != get_be16(image + 6))
		fuzz_fail("the counts or flags are not the header's");
	if (!(bitmap_index_flags(bi) & BITMAP_OPT_FULL_DAG))
		fuzz_fail("a bitmap without FULL_DAG parsed");
	if (bitmap_index_order(bi))
		fuzz_fail("a parsed image has an order");
	if (!bitmap_index_path(bi) || strcmp(bitmap_index_path(bi), "fuzz.bitmap"))
		fuzz_fail("the bitmap lost its name");

	check_types(bi, nr_objects);
	check_name_hashes(bi, image, len, rawsz, nr_objects);
	check_entries(bi, nr_objects, image, len, rawsz);
	check_pseudo_merges(bi, nr_objects);
	bitmap_index_free(bi);

	/* The pack checksum a real caller passes. */
	memcpy(other, image + 12, rawsz);
	ret = bitmap_index_parse_buf(&again, image, len, "fuzz.bitmap", algo, nr_objects,
				     other, &err);
	if (ret)
		fuzz_fail("refused with the header's own pack checksum: %s",
			  gp_error_msg(&err));
	bitmap_index_free(again);
	again = NULL;
	other[rawsz - 1] ^= 1;
	ret = bitmap_index_parse_buf(&again, image, len, "fuzz.bitmap", algo, nr_objects,
				     other, &err);
	if (!ret)
		fuzz_fail("accepted for another pack checksum");
	fuzz_check_error(ret, &err, GP_ECORRUPT, "bitmap_index_parse_buf (stale)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *body = data + FUZZ_BITMAP_PREFIX;
	size_t body_len, len, rawsz;
	unsigned char *image;
	uint32_t nr_objects;
	int algo;

	if (size < FUZZ_BITMAP_PREFIX)
		return 0;
	body_len = size - FUZZ_BITMAP_PREFIX;
	algo = (data[0] & FUZZ_BITMAP_SHA256) ? GP_HASH_SHA256 : GP_HASH_SHA1;
	rawsz = gp_hash_algos[algo].rawsz;
	nr_objects = get_be32(data + 1) % (FUZZ_BITMAP_MAX_OBJECTS + 1);

	/*
	 * A heap copy of the exact size (the parser borrows it), so that
	 * ASan catches reads past the image.
	 */
	if (data[0] & FUZZ_BITMAP_APPEND_HASH) {
		len = body_len + rawsz;
		image = xmalloc(len);
		memcpy(image, body, body_len);
		hash_buf_checksum(algo, image, body_len, image + body_len);
	} else {
		len = body_len;
		image = xmalloc(len ? len : 1);
		memcpy(image, body, body_len);
#ifdef GP_FUZZ_FIX_TRAILER
		if (len >= rawsz)
			hash_buf_checksum(algo, image, len - rawsz, image + len - rawsz);
#endif
	}
	fuzz_bitmap(image, len, algo, nr_objects);
	free(image);
	return 0;
}
