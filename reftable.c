/*
 * reftable.c: reading reftable files and stacks (see reftable.h for the
 * layout and the contract; git's Documentation/technical/reftable.adoc
 * is the source).
 *
 * Three layers:
 *
 *  - a block (struct block) is a view of one block in its own
 *    coordinates: data[0] is the block's first byte, except that the
 *    block at file offset 0 starts at the file header, whose bytes its
 *    block_len and restart offsets count. A log block is inflated into
 *    memory of its own, with its 4-byte header (and the file header, for
 *    the block at 0) copied in front so that its offsets mean the same.
 *    load_block() checks the bounds and the restart table once.
 *
 *  - a cursor decodes the records of one block after another through a
 *    section (the ref blocks, or the log blocks), checking each length
 *    against the block's record area, that prefix compression only
 *    refers to the previous key, that keys increase strictly across the
 *    whole scan, and that every restart offset lands on a record. A
 *    table iterator is a cursor plus where to start: index blocks are
 *    followed down to the leaf block that can hold the wanted key, then
 *    the leaf's restart points are binary searched.
 *
 *  - a merged iterator walks one table iterator per table of a stack and
 *    returns the smallest key, from the newest table holding it; the
 *    other tables' records of that key are shadowed, and a deletion
 *    (when merging) hides the key altogether. A one-table iterator is the
 *    same thing with one table and deletions shown.
 *
 * Offsets inside a table are size_t: the whole file is mapped, so every
 * position read from it is first checked to be below the footer.
 */
#include "reftable.h"
#include "error.h"
#include "strbuf.h"
#include "zstream.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define REFTABLE_MAGIC "REFT"          /* REFT */
#define REFTABLE_V1_HEADER_SIZE 24
#define REFTABLE_V2_HEADER_SIZE 28
#define REFTABLE_FOOTER_TAIL 44        /* five positions and the CRC-32 */

#define BLOCK_REF 'r'
#define BLOCK_INDEX 'i'
#define BLOCK_OBJ 'o'
#define BLOCK_LOG 'g'
#define BLOCK_HEADER_SIZE 4            /* type and uint24 block_len */

/* Index levels followed at most: git writes one, or two for huge tables. */
#define MAX_INDEX_DEPTH 16
/* tables.list is a few names; a bigger one is not git's. */
#define TABLES_LIST_MAX (4 << 20)
/* Times tables.list is read again when a table it names has gone. */
#define STACK_OPEN_TRIES 8

struct reftable_table {
	unsigned refcount;
	char *name;               /* for messages: the path, or the caller's name */
	char *file_name;          /* the name in tables.list; NULL for a buffer */
	const unsigned char *buf;
	size_t len;
	void *map;                /* when we mapped buf */
	int algo;
	size_t rawsz;
	unsigned version;
	size_t header_size;
	uint32_t block_size;
	uint64_t min_update_index, max_update_index;
	size_t footer_start;
	/* sections, as file offsets; an absent one has has_* false */
	bool has_refs, has_logs;
	size_t ref_end;           /* the ref blocks lie in [0, ref_end) */
	size_t ref_index_pos;     /* 0: none */
	size_t obj_pos, obj_index_pos;
	unsigned obj_id_len;
	size_t log_start, log_end;
	size_t log_index_pos;     /* 0: none */
};

/* ---- reading helpers ----------------------------------------------------- */

static uint32_t get_be24(const unsigned char *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/*
 * A varint at data[*pos], within data[0..end): ofs-delta's encoding,
 * each continuation adding one before shifting. False when truncated or
 * when it does not fit in 64 bits.
 */
static bool get_varint(const unsigned char *data, size_t end, size_t *pos, uint64_t *out)
{
	size_t p = *pos;
	uint64_t val;

	if (p >= end)
		return false;
	val = data[p] & 0x7f;
	while (data[p++] & 0x80) {
		if (p >= end || val > (UINT64_MAX >> 7) - 1)
			return false;
		val = ((val + 1) << 7) | (data[p] & 0x7f);
	}
	*pos = p;
	*out = val;
	return true;
}

static int key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, MIN(alen, blen));
	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* ---- tables ---------------------------------------------------------------- */

static void table_put(struct reftable_table *t)
{
	if (!t || --t->refcount)
		return;
	if (t->map)
		munmap(t->map, t->len);
	free(t->name);
	free(t->file_name);
	free(t);
}

void reftable_table_free(struct reftable_table *t)
{
	table_put(t);
}

uint64_t reftable_table_min_update_index(const struct reftable_table *t)
{
	return t->min_update_index;
}

uint64_t reftable_table_max_update_index(const struct reftable_table *t)
{
	return t->max_update_index;
}

void reftable_table_info(const struct reftable_table *t, struct reftable_table_info *info)
{
	info->version = t->version;
	info->block_size = t->block_size;
	info->has_refs = t->has_refs;
	info->has_logs = t->has_logs;
	info->ref_index_pos = t->ref_index_pos;
	info->obj_pos = t->obj_pos;
	info->obj_index_pos = t->obj_index_pos;
	info->log_pos = t->log_start;
	info->log_index_pos = t->log_index_pos;
	info->obj_id_len = t->obj_id_len;
}

/* Header, footer and section positions; see reftable.h. */
static int parse_table(struct reftable_table *t, struct gp_error *err)
{
	const unsigned char *buf = t->buf, *footer;
	size_t footer_size, header_size;
	uint64_t pos[5], obj_field;
	uint32_t hash_id = REFTABLE_HASH_SHA1;
	int table_algo;
	unsigned char first_type;

	if (t->len < REFTABLE_V1_HEADER_SIZE)
		return CORRUPT(err, "%s: %zu bytes, too short for a reftable header",
			       t->name, t->len);
	if (memcmp(buf, REFTABLE_MAGIC, 4))
		return CORRUPT(err, "%s: not a reftable (bad signature at offset 0)", t->name);
	t->version = buf[4];
	if (t->version != 1 && t->version != 2)
		return CORRUPT(err, "%s: unsupported reftable version %u at offset 4",
			       t->name, t->version);
	header_size = t->version == 1 ? REFTABLE_V1_HEADER_SIZE : REFTABLE_V2_HEADER_SIZE;
	footer_size = header_size + REFTABLE_FOOTER_TAIL;
	if (t->len < header_size + footer_size)
		return CORRUPT(err, "%s: %zu bytes, too short for a version %u header and footer",
			       t->name, t->len, t->version);
	t->header_size = header_size;
	t->block_size = get_be24(buf + 5);
	t->min_update_index = get_be64(buf + 8);
	t->max_update_index = get_be64(buf + 16);
	if (t->version == 2) {
		hash_id = get_be32(buf + 24);
		if (hash_id != REFTABLE_HASH_SHA1 && hash_id != REFTABLE_HASH_SHA256)
			return CORRUPT(err, "%s: unknown hash id 0x%08x at offset 24",
				       t->name, hash_id);
	}
	table_algo = hash_id == REFTABLE_HASH_SHA256 ? GP_HASH_SHA256 : GP_HASH_SHA1;
	if (table_algo != t->algo)
		return CORRUPT(err, "%s: table holds %s ids, the repository uses %s",
			       t->name, gp_hash_algos[table_algo].name,
			       gp_hash_algos[t->algo].name);

	t->footer_start = t->len - footer_size;
	footer = buf + t->footer_start;
	if (memcmp(footer, buf, header_size))
		return CORRUPT(err, "%s: footer at offset %zu does not repeat the header",
			       t->name, t->footer_start);
	if (gp_crc32(0, footer, footer_size - 4) != get_be32(footer + footer_size - 4))
		return CORRUPT(err, "%s: footer CRC-32 mismatch at offset %zu", t->name,
			       t->footer_start + footer_size - 4);

	pos[0] = get_be64(footer + header_size);        /* ref_index_position */
	obj_field = get_be64(footer + header_size + 8);
	pos[1] = obj_field >> 5;                         /* obj_position */
	pos[2] = get_be64(footer + header_size + 16);   /* obj_index_position */
	pos[3] = get_be64(footer + header_size + 24);   /* log_position */
	pos[4] = get_be64(footer + header_size + 32);   /* log_index_position */
	for (size_t i = 0, prev = 0; i < ARRAY_SIZE(pos); i++) {
		static const char *const what[] = {
			"ref index", "obj blocks", "obj index", "log blocks", "log index",
		};
		if (!pos[i])
			continue;
		if (pos[i] < header_size || pos[i] >= t->footer_start || pos[i] <= prev)
			return CORRUPT(err, "%s: footer: %s position %" PRIu64 " out of place",
				       t->name, what[i], pos[i]);
		prev = (size_t)pos[i];
	}
	t->ref_index_pos = (size_t)pos[0];
	t->obj_pos = (size_t)pos[1];
	t->obj_id_len = (unsigned)(obj_field & 31);
	t->obj_index_pos = (size_t)pos[2];
	t->log_index_pos = (size_t)pos[4];

	/*
	 * The first block follows the header; its type says whether there
	 * are refs, and a log-only file starts with its logs (log_position
	 * is then 0, and the log section starts at offset 0 too).
	 */
	first_type = header_size < t->footer_start ? buf[header_size] : 0;
	if (header_size < t->footer_start && first_type != BLOCK_REF && first_type != BLOCK_LOG)
		return CORRUPT(err, "%s: first block at offset %zu has type 0x%02x, expected 'r' or 'g'",
			       t->name, header_size, first_type);
	t->has_refs = first_type == BLOCK_REF;
	t->has_logs = pos[3] || first_type == BLOCK_LOG;
	if (!t->has_refs && (pos[0] || pos[1] || pos[2]))
		return CORRUPT(err, "%s: footer names a ref index or obj blocks, but the table has no refs",
			       t->name);
	if (pos[1] && (!t->obj_id_len || t->obj_id_len > t->rawsz))
		return CORRUPT(err, "%s: footer: object id length %u out of range",
			       t->name, t->obj_id_len);
	if (!pos[1] && pos[2])
		return CORRUPT(err, "%s: footer: an obj index without obj blocks", t->name);
	if (!t->has_logs && pos[4])
		return CORRUPT(err, "%s: footer: a log index without log blocks", t->name);
	if (pos[3] && first_type == BLOCK_LOG)
		return CORRUPT(err, "%s: footer: log position %" PRIu64 " in a log-only table",
			       t->name, pos[3]);

	t->ref_end = t->footer_start;
	for (size_t i = 0; i < ARRAY_SIZE(pos); i++) {
		if (pos[i]) {
			t->ref_end = (size_t)pos[i];
			break;
		}
	}
	t->log_start = (size_t)pos[3];
	t->log_end = pos[4] ? (size_t)pos[4] : t->footer_start;
	return 0;
}

static struct reftable_table *table_new(const char *name, int algo)
{
	struct reftable_table *t = xcalloc(1, sizeof(*t));
	t->refcount = 1;
	t->name = xstrdup(name);
	t->algo = algo;
	t->rawsz = gp_hash_algos[algo].rawsz;
	return t;
}

int reftable_table_open_buf(struct reftable_table **out, const unsigned char *buf,
			    size_t len, const char *name, int algo, struct gp_error *err)
{
	struct reftable_table *t = table_new(name, algo);
	int ret;

	t->buf = buf;
	t->len = len;
	ret = parse_table(t, err);
	if (ret) {
		table_put(t);
		t = NULL;
	}
	*out = t;
	return ret;
}

int reftable_table_open(struct reftable_table **out, const char *path, int algo,
			struct gp_error *err)
{
	struct reftable_table *t = NULL;
	struct stat st;
	int fd, ret = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT
			? gp_error_set(err, GP_ENOTFOUND, "%s: no such file", path)
			: gp_error_errno(err, "%s: cannot open", path);
	if (fstat(fd, &st) < 0) {
		ret = gp_error_errno(err, "%s: cannot stat", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = CORRUPT(err, "%s: not a regular file", path);
		goto out;
	}
	t = table_new(path, algo);
	if (st.st_size > 0) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			ret = gp_error_set(err, GP_ENOMEM, "%s: too large to map", path);
			goto out;
		}
		t->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (t->map == MAP_FAILED) {
			t->map = NULL;
			ret = gp_error_errno(err, "%s: cannot mmap", path);
			goto out;
		}
		t->buf = t->map;
		t->len = (size_t)st.st_size;
	}
	ret = parse_table(t, err);
out:
	close(fd);
	if (ret) {
		table_put(t);
		t = NULL;
	}
	*out = t;
	return ret;
}

/* ---- blocks ------------------------------------------------------------------ */

struct block {
	const unsigned char *data; /* data[0] is the block's byte at file offset start */
	size_t start;
	size_t hdr;                /* offset of the type byte in data */
	size_t len;                /* block_len: bytes of data that are the block */
	size_t records_end;        /* offset of the restart table */
	unsigned restart_nr;
	size_t next;               /* file offset just after the block (before padding) */
	unsigned char type;
	unsigned char *inflated;   /* a log block's inflated image, owned */
};

static void block_release(struct block *b)
{
	free(b->inflated);
	memset(b, 0, sizeof(*b));
}

static size_t restart_at(const struct block *b, unsigned idx)
{
	return get_be24(b->data + b->records_end + 3 * (size_t)idx);
}

/*
 * Load the block at file offset pos, which must end by limit (for a log
 * block: whose zlib stream lies before limit).
 */
static int load_block(struct reftable_table *t, struct inflater **inf, size_t pos,
		      size_t limit, struct block *b, struct gp_error *err)
{
	size_t hdr = pos ? 0 : t->header_size, len, prev = 0;
	const unsigned char *p;
	unsigned nr;
	int ret;

	block_release(b);
	if (NEVER(limit > t->footer_start))
		limit = t->footer_start;
	if (pos > limit || limit - pos < hdr + BLOCK_HEADER_SIZE)
		return CORRUPT(err, "%s: block at offset %zu: truncated block header", t->name, pos);
	p = t->buf + pos;
	b->start = pos;
	b->hdr = hdr;
	b->type = p[hdr];
	len = get_be24(p + hdr + 1);
	if (len < hdr + BLOCK_HEADER_SIZE + 2)
		return CORRUPT(err, "%s: block at offset %zu: block_len %zu too small",
			       t->name, pos, len);
	if (b->type == BLOCK_LOG) {
		size_t consumed = 0;
		b->inflated = malloc(len);
		if (!b->inflated)
			return gp_error_set(err, GP_ENOMEM, "%s: cannot allocate %zu bytes for the log block at offset %zu",
					    t->name, len, pos);
		memcpy(b->inflated, p, hdr + BLOCK_HEADER_SIZE);
		if (!*inf)
			*inf = inflater_new();
		ret = inflate_exact(*inf, p + hdr + BLOCK_HEADER_SIZE,
				    limit - pos - hdr - BLOCK_HEADER_SIZE,
				    b->inflated + hdr + BLOCK_HEADER_SIZE,
				    len - hdr - BLOCK_HEADER_SIZE, &consumed, err);
		if (ret) {
			gp_error_prefix(err, "%s: log block at offset %zu", t->name, pos);
			block_release(b);
			return ret;
		}
		b->data = b->inflated;
		b->next = pos + hdr + BLOCK_HEADER_SIZE + consumed;
	} else {
		if (len > limit - pos)
			return CORRUPT(err, "%s: block at offset %zu: block_len %zu runs past offset %zu",
				       t->name, pos, len, limit);
		b->data = p;
		b->next = pos + len;
	}
	b->len = len;
	nr = get_be16(b->data + len - 2);
	if (!nr || (len - hdr - BLOCK_HEADER_SIZE - 2) / 3 < nr) {
		ret = CORRUPT(err, "%s: block at offset %zu: restart count %u does not fit in %zu bytes",
			      t->name, pos, nr, len);
		goto fail;
	}
	b->restart_nr = nr;
	b->records_end = len - 2 - 3 * (size_t)nr;
	for (unsigned i = 0; i < nr; i++) {
		size_t r = restart_at(b, i);
		if (r < hdr + BLOCK_HEADER_SIZE || r >= b->records_end || (i && r <= prev)) {
			ret = CORRUPT(err, "%s: block at offset %zu: restart offset %u (%zu) out of place",
				      t->name, pos, i, r);
			goto fail;
		}
		prev = r;
	}
	return 0;
fail:
	block_release(b);
	return ret;
}

/* Where a record is, for messages: a file offset, or a place in a log block. */
static const char *rec_where(const struct block *b, size_t pos, char *buf, size_t size)
{
	if (b->type == BLOCK_LOG)
		snprintf(buf, size, "log block at offset %zu, record at byte %zu", b->start, pos);
	else
		snprintf(buf, size, "record at offset %zu", b->start + pos);
	return buf;
}

#define REC_CORRUPT(err, t, b, pos, fmt, ...) \
	CORRUPT((err), "%s: %s: " fmt, (t)->name, \
		rec_where((b), (pos), (char[96]){ 0 }, 96), ##__VA_ARGS__)

/*
 * The key of the record at restart point idx, which is not prefix
 * compressed: a pointer into the block and its length.
 */
static int restart_key(struct reftable_table *t, const struct block *b, unsigned idx,
		       const char **key, size_t *len, struct gp_error *err)
{
	size_t pos = restart_at(b, idx), start = pos;
	uint64_t prefix, suffix_type;

	if (!get_varint(b->data, b->records_end, &pos, &prefix) ||
	    !get_varint(b->data, b->records_end, &pos, &suffix_type))
		return REC_CORRUPT(err, t, b, start, "truncated record");
	if (prefix)
		return REC_CORRUPT(err, t, b, start, "prefix_length %" PRIu64 " at a restart point",
				   prefix);
	if ((suffix_type >> 3) > b->records_end - pos)
		return REC_CORRUPT(err, t, b, start, "key runs past the records");
	*key = (const char *)b->data + pos;
	*len = (size_t)(suffix_type >> 3);
	return 0;
}

/* ---- cursors: decoding records ------------------------------------------ */

struct cursor {
	struct reftable_table *t;
	struct inflater **inf;
	struct block blk;
	bool loaded;
	size_t pos;              /* the next record, in blk's coordinates */
	unsigned restart_idx;    /* the first restart offset that may be >= pos */
	bool have_prev;          /* key holds the previous key of this scan */
	struct strbuf key;
	struct strbuf target;
	/* the record last decoded */
	struct reftable_ref ref;
	struct reftable_log log;
	uint64_t child_pos;      /* index records */
};

static void cursor_init(struct cursor *c, struct reftable_table *t, struct inflater **inf)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->inf = inf;
	strbuf_init(&c->key, 0);
	strbuf_init(&c->target, 0);
}

static void cursor_release(struct cursor *c)
{
	block_release(&c->blk);
	strbuf_release(&c->key);
	strbuf_release(&c->target);
}

static int cursor_load(struct cursor *c, size_t pos, size_t limit, struct gp_error *err)
{
	int ret = load_block(c->t, c->inf, pos, limit, &c->blk, err);
	c->loaded = !ret;
	c->pos = c->blk.hdr + BLOCK_HEADER_SIZE;
	c->restart_idx = 0;
	return ret;
}

/*
 * Start c's scan at the restart point of its block that comes last
 * before want (or at the first record), so that the records from there
 * on lead up to the first key >= want. The key of the previous record
 * is then unknown: order checks resume from the first one decoded.
 */
static int cursor_seek_in_block(struct cursor *c, const char *want, size_t want_len,
				struct gp_error *err)
{
	unsigned lo = 0, hi = c->blk.restart_nr;

	while (want_len && lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const char *key;
		size_t len;
		int ret = restart_key(c->t, &c->blk, mid, &key, &len, err);
		if (ret)
			return ret;
		if (key_cmp(key, len, want, want_len) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo) {
		c->pos = restart_at(&c->blk, lo - 1);
		c->restart_idx = lo - 1;
	} else {
		c->pos = c->blk.hdr + BLOCK_HEADER_SIZE;
		c->restart_idx = 0;
	}
	c->have_prev = false;
	return 0;
}

static int decode_ref_value(struct cursor *c, size_t start, size_t *posp, unsigned type,
			    struct gp_error *err)
{
	struct reftable_table *t = c->t;
	const struct block *b = &c->blk;
	const unsigned char *d = b->data;
	size_t end = b->records_end, pos = *posp;
	struct reftable_ref *ref = &c->ref;
	uint64_t delta, len;

	if (memchr(c->key.buf, '\0', c->key.len))
		return REC_CORRUPT(err, t, b, start, "ref name holds a NUL byte");
	if (!get_varint(d, end, &pos, &delta) ||
	    !u64_add(t->min_update_index, delta, &ref->update_index))
		return REC_CORRUPT(err, t, b, start, "bad update_index delta");
	ref->name = c->key.buf;
	ref->type = (enum reftable_ref_type)type;
	ref->target = NULL;
	oid_clear(&ref->oid, t->algo);
	oid_clear(&ref->peeled, t->algo);
	switch (type) {
	case REFTABLE_REF_DELETION:
		break;
	case REFTABLE_REF_VAL1:
	case REFTABLE_REF_VAL2:
		if (end - pos < (type == REFTABLE_REF_VAL2 ? 2 : 1) * t->rawsz)
			return REC_CORRUPT(err, t, b, start, "object id runs past the records");
		oid_from_raw(&ref->oid, d + pos, t->algo);
		pos += t->rawsz;
		if (type == REFTABLE_REF_VAL2) {
			oid_from_raw(&ref->peeled, d + pos, t->algo);
			pos += t->rawsz;
		}
		break;
	case REFTABLE_REF_SYMREF:
		if (!get_varint(d, end, &pos, &len) || len > end - pos)
			return REC_CORRUPT(err, t, b, start, "symref target runs past the records");
		if (!len || memchr(d + pos, '\0', (size_t)len))
			return REC_CORRUPT(err, t, b, start, "empty symref target, or one holding a NUL byte");
		strbuf_reset(&c->target);
		strbuf_add(&c->target, d + pos, (size_t)len);
		pos += (size_t)len;
		ref->target = c->target.buf;
		break;
	default:
		return REC_CORRUPT(err, t, b, start, "unknown ref value type %u", type);
	}
	*posp = pos;
	return 0;
}

static bool get_string(const unsigned char *d, size_t end, size_t *pos,
		       const char **str, size_t *len)
{
	uint64_t n;
	if (!get_varint(d, end, pos, &n) || n > end - *pos)
		return false;
	*str = (const char *)d + *pos;
	*len = (size_t)n;
	*pos += (size_t)n;
	return true;
}

static int decode_log_value(struct cursor *c, size_t start, size_t *posp, unsigned type,
			    struct gp_error *err)
{
	struct reftable_table *t = c->t;
	const struct block *b = &c->blk;
	const unsigned char *d = b->data;
	size_t end = b->records_end, pos = *posp, name_len;
	struct reftable_log *log = &c->log;
	uint64_t time;

	if (c->key.len < 10 || c->key.buf[c->key.len - 9])
		return REC_CORRUPT(err, t, b, start, "log key without a refname and update index");
	name_len = c->key.len - 9;
	if (memchr(c->key.buf, '\0', name_len))
		return REC_CORRUPT(err, t, b, start, "refname holds a NUL byte");
	memset(log, 0, sizeof(*log));
	oid_clear(&log->old_oid, t->algo);
	oid_clear(&log->new_oid, t->algo);
	log->refname = c->key.buf;
	log->update_index = ~get_be64(c->key.buf + name_len + 1);
	log->type = (enum reftable_log_type)type;
	switch (type) {
	case REFTABLE_LOG_DELETION:
		break;
	case REFTABLE_LOG_UPDATE:
		if (end - pos < 2 * t->rawsz)
			return REC_CORRUPT(err, t, b, start, "object id runs past the records");
		oid_from_raw(&log->old_oid, d + pos, t->algo);
		oid_from_raw(&log->new_oid, d + pos + t->rawsz, t->algo);
		pos += 2 * t->rawsz;
		if (!get_string(d, end, &pos, &log->name, &log->name_len) ||
		    !get_string(d, end, &pos, &log->email, &log->email_len) ||
		    !get_varint(d, end, &pos, &time) || end - pos < 2)
			return REC_CORRUPT(err, t, b, start, "log entry runs past the records");
		log->time = time;
		log->tz_offset = (int16_t)get_be16(d + pos);
		pos += 2;
		if (!get_string(d, end, &pos, &log->message, &log->message_len))
			return REC_CORRUPT(err, t, b, start, "log message runs past the records");
		break;
	default:
		return REC_CORRUPT(err, t, b, start, "unknown log value type %u", type);
	}
	*posp = pos;
	return 0;
}

/* Decode the record at c->pos (which must be before records_end). */
static int decode_record(struct cursor *c, struct gp_error *err)
{
	struct reftable_table *t = c->t;
	const struct block *b = &c->blk;
	const unsigned char *d = b->data;
	size_t end = b->records_end, pos = c->pos, start = pos, suffix, old_len;
	uint64_t prefix, suffix_type;
	bool at_restart = start == b->hdr + BLOCK_HEADER_SIZE;
	unsigned type;
	int ret;

	if (c->restart_idx < b->restart_nr) {
		size_t r = restart_at(b, c->restart_idx);
		if (r < start)
			return CORRUPT(err, "%s: block at offset %zu: restart offset %zu is not at a record",
				       t->name, b->start, r);
		if (r == start) {
			at_restart = true;
			c->restart_idx++;
		}
	}
	if (!get_varint(d, end, &pos, &prefix) || !get_varint(d, end, &pos, &suffix_type))
		return REC_CORRUPT(err, t, b, start, "truncated record");
	if (at_restart && prefix)
		return REC_CORRUPT(err, t, b, start, "prefix_length %" PRIu64 " at a restart point",
				   prefix);
	old_len = c->have_prev ? c->key.len : 0;
	if (prefix > old_len)
		return REC_CORRUPT(err, t, b, start,
				   "prefix_length %" PRIu64 " longer than the previous key (%zu)",
				   prefix, old_len);
	if ((suffix_type >> 3) > end - pos)
		return REC_CORRUPT(err, t, b, start, "key runs past the records");
	suffix = (size_t)(suffix_type >> 3);
	type = (unsigned)(suffix_type & 7);
	if (c->have_prev) {
		size_t rest = old_len - (size_t)prefix;
		int cmp = memcmp(d + pos, c->key.buf + prefix, MIN(suffix, rest));
		if (cmp < 0 || (!cmp && suffix <= rest))
			return REC_CORRUPT(err, t, b, start, "key does not sort after the previous one");
	}
	strbuf_setlen(&c->key, (size_t)prefix);
	strbuf_add(&c->key, d + pos, suffix);
	pos += suffix;
	if (!c->key.len)
		return REC_CORRUPT(err, t, b, start, "empty key");
	c->have_prev = true;

	switch (b->type) {
	case BLOCK_REF:
		ret = decode_ref_value(c, start, &pos, type, err);
		break;
	case BLOCK_LOG:
		ret = decode_log_value(c, start, &pos, type, err);
		break;
	case BLOCK_INDEX:
		if (type)
			return REC_CORRUPT(err, t, b, start, "index record of type %u", type);
		if (!get_varint(d, end, &pos, &c->child_pos) || c->child_pos >= t->footer_start)
			return REC_CORRUPT(err, t, b, start, "index block position out of range");
		ret = 0;
		break;
	default:
		return REC_CORRUPT(err, t, b, start, "records of a block of type 0x%02x", b->type);
	}
	if (!ret)
		c->pos = pos;
	return ret;
}

/* ---- table iterators ------------------------------------------------------ */

struct table_iter {
	struct cursor c;
	unsigned char section;   /* BLOCK_REF or BLOCK_LOG */
	size_t section_start, section_end;
	bool has_rec;            /* c holds the current record */
	bool done;
	bool advance;            /* merged iteration: move on before the next pick */
};

static void table_iter_init(struct table_iter *ti, struct reftable_table *t,
			    struct inflater **inf, unsigned char section)
{
	memset(ti, 0, sizeof(*ti));
	cursor_init(&ti->c, t, inf);
	ti->section = section;
	if (section == BLOCK_REF) {
		ti->section_start = 0;
		ti->section_end = t->ref_end;
		ti->done = !t->has_refs;
	} else {
		ti->section_start = t->log_start;
		ti->section_end = t->log_end;
		ti->done = !t->has_logs;
	}
}

static void table_iter_release(struct table_iter *ti)
{
	cursor_release(&ti->c);
}

/* Decode the next record of the section into ti->c, or reach the end. */
static int table_iter_next(struct table_iter *ti, struct gp_error *err)
{
	struct cursor *c = &ti->c;
	struct reftable_table *t = c->t;
	int ret;

	ti->has_rec = false;
	while (!ti->done) {
		size_t next;
		if (c->pos < c->blk.records_end) {
			ret = decode_record(c, err);
			if (ret) {
				ti->done = true;
				return ret;
			}
			ti->has_rec = true;
			return 0;
		}
		if (c->restart_idx < c->blk.restart_nr) {
			ti->done = true;
			return CORRUPT(err, "%s: block at offset %zu: restart offset %zu is not at a record",
				       t->name, c->blk.start, restart_at(&c->blk, c->restart_idx));
		}
		/* Ref blocks are padded with NULs; no block starts with one. */
		next = c->blk.next;
		if (c->blk.type != BLOCK_LOG)
			while (next < ti->section_end && !t->buf[next])
				next++;
		/* an index block ends the section (the lower levels of a multi-level index) */
		if (next >= ti->section_end || t->buf[next] == BLOCK_INDEX) {
			ti->done = true;
			break;
		}
		ret = cursor_load(c, next, ti->section_end, err);
		if (!ret && c->blk.type != ti->section)
			ret = CORRUPT(err, "%s: block at offset %zu has type 0x%02x, expected '%c'",
				      t->name, next, c->blk.type, ti->section);
		if (ret) {
			ti->done = true;
			return ret;
		}
	}
	return 0;
}

/*
 * Find the leaf block that can hold want through the index at
 * index_pos: 0 with *leaf set, 1 when want is past every key.
 */
static int index_find_leaf(struct table_iter *ti, size_t index_pos, const char *want,
			   size_t want_len, size_t *leaf, struct gp_error *err)
{
	struct reftable_table *t = ti->c.t;
	struct cursor ic;
	size_t pos = index_pos;
	int ret = 0;

	cursor_init(&ic, t, ti->c.inf);
	for (unsigned depth = 0;; depth++) {
		size_t hdr;
		unsigned char child_type;
		bool found = false;

		if (depth >= MAX_INDEX_DEPTH) {
			ret = CORRUPT(err, "%s: index at offset %zu deeper than %d levels",
				      t->name, index_pos, MAX_INDEX_DEPTH);
			goto out;
		}
		ret = cursor_load(&ic, pos, t->footer_start, err);
		if (!ret && ic.blk.type != BLOCK_INDEX)
			ret = CORRUPT(err, "%s: block at offset %zu has type 0x%02x, expected an index",
				      t->name, pos, ic.blk.type);
		if (!ret)
			ret = cursor_seek_in_block(&ic, want, want_len, err);
		while (!ret && ic.pos < ic.blk.records_end) {
			ret = decode_record(&ic, err);
			if (!ret && key_cmp(ic.key.buf, ic.key.len, want, want_len) >= 0) {
				found = true;
				break;
			}
		}
		if (ret)
			goto out;
		if (!found) {
			if (depth) {
				ret = CORRUPT(err, "%s: index block at offset %zu ends before the key its parent gives",
					      t->name, pos);
				goto out;
			}
			ret = 1;
			goto out;
		}
		pos = (size_t)ic.child_pos;
		hdr = pos ? 0 : t->header_size;
		if (t->footer_start - pos <= hdr) {
			ret = CORRUPT(err, "%s: index record points at offset %zu, past the blocks",
				      t->name, pos);
			goto out;
		}
		child_type = t->buf[pos + hdr];
		if (child_type == BLOCK_INDEX)
			continue;
		if (child_type != ti->section || pos < ti->section_start || pos >= ti->section_end) {
			ret = CORRUPT(err, "%s: index record points at offset %zu, not a '%c' block",
				      t->name, pos, ti->section);
			goto out;
		}
		*leaf = pos;
		goto out;
	}
out:
	cursor_release(&ic);
	return ret;
}

/*
 * Position ti at the first record whose key is >= want (has_rec then),
 * or at the end.
 */
static int table_iter_seek(struct table_iter *ti, const char *want, size_t want_len,
			   struct gp_error *err)
{
	struct reftable_table *t = ti->c.t;
	size_t index_pos = ti->section == BLOCK_REF ? t->ref_index_pos : t->log_index_pos;
	size_t leaf = ti->section_start;
	int ret;

	ti->has_rec = false;
	if (ti->done)
		return 0;
	if (index_pos && want_len) {
		ret = index_find_leaf(ti, index_pos, want, want_len, &leaf, err);
		if (ret == 1) {
			ti->done = true;
			return 0;
		}
		if (ret)
			goto fail;
	}
	ret = cursor_load(&ti->c, leaf, ti->section_end, err);
	if (!ret && ti->c.blk.type != ti->section)
		ret = CORRUPT(err, "%s: block at offset %zu has type 0x%02x, expected '%c'",
			      t->name, leaf, ti->c.blk.type, ti->section);
	if (!ret)
		ret = cursor_seek_in_block(&ti->c, want, want_len, err);
	if (ret)
		goto fail;
	for (;;) {
		ret = table_iter_next(ti, err);
		if (ret || !ti->has_rec ||
		    key_cmp(ti->c.key.buf, ti->c.key.len, want, want_len) >= 0)
			return ret;
	}
fail:
	ti->done = true;
	return ret;
}

/* ---- merged iterators ------------------------------------------------------- */

struct reftable_iter {
	struct reftable_stack *st;   /* held; NULL for a one-table iterator */
	struct reftable_table *table; /* held, for a one-table iterator */
	struct inflater *inf;
	struct table_iter *subs;     /* one per table, oldest first */
	size_t nr;
	unsigned char section;
	bool merged;                 /* hide deletions */
	struct strbuf prefix;        /* keys returned start with it */
	bool done;
};

struct reftable_stack {
	unsigned refcount;
	char *dir, *list_path;
	int algo;
	struct reftable_table **tables; /* oldest first */
	size_t nr;
	/* what tables.list was when read */
	bool list_exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

void reftable_iter_free(struct reftable_iter *it)
{
	if (!it)
		return;
	for (size_t i = 0; i < it->nr; i++)
		table_iter_release(&it->subs[i]);
	free(it->subs);
	inflater_free(it->inf);
	strbuf_release(&it->prefix);
	reftable_stack_free(it->st);
	table_put(it->table);
	free(it);
}

static int iter_start(struct reftable_iter *it, struct reftable_table **tables, size_t nr,
		      struct gp_error *err)
{
	it->subs = xcalloc(nr ? nr : 1, sizeof(*it->subs));
	for (size_t i = 0; i < nr; i++) {
		int ret;
		table_iter_init(&it->subs[i], tables[i], &it->inf, it->section);
		it->nr = i + 1;
		ret = table_iter_seek(&it->subs[i], it->prefix.buf, it->prefix.len, err);
		if (ret)
			return ret;
	}
	return 0;
}

static struct reftable_iter *iter_new(unsigned char section, const char *key, bool is_log)
{
	struct reftable_iter *it = xcalloc(1, sizeof(*it));
	it->section = section;
	strbuf_init(&it->prefix, 0);
	if (key)
		strbuf_add(&it->prefix, key, strlen(key) + (is_log ? 1 : 0));
	return it;
}

int reftable_table_refs(struct reftable_table *t, const char *prefix,
			struct reftable_iter **out, struct gp_error *err)
{
	struct reftable_iter *it = iter_new(BLOCK_REF, prefix, false);
	int ret;

	t->refcount++;
	it->table = t;
	ret = iter_start(it, &t, 1, err);
	if (ret) {
		reftable_iter_free(it);
		it = NULL;
	}
	*out = it;
	return ret;
}

int reftable_table_logs(struct reftable_table *t, const char *refname,
			struct reftable_iter **out, struct gp_error *err)
{
	struct reftable_iter *it = iter_new(BLOCK_LOG, refname, true);
	int ret;

	t->refcount++;
	it->table = t;
	ret = iter_start(it, &t, 1, err);
	if (ret) {
		reftable_iter_free(it);
		it = NULL;
	}
	*out = it;
	return ret;
}

static int stack_iter(struct reftable_stack *st, unsigned char section, const char *key,
		      struct reftable_iter **out, struct gp_error *err)
{
	struct reftable_iter *it = iter_new(section, key, section == BLOCK_LOG);
	int ret;

	it->st = reftable_stack_get(st);
	it->merged = true;
	ret = iter_start(it, st->tables, st->nr, err);
	if (ret) {
		reftable_iter_free(it);
		it = NULL;
	}
	*out = it;
	return ret;
}

int reftable_stack_refs(struct reftable_stack *st, const char *prefix,
			struct reftable_iter **out, struct gp_error *err)
{
	return stack_iter(st, BLOCK_REF, prefix, out, err);
}

int reftable_stack_logs(struct reftable_stack *st, const char *refname,
			struct reftable_iter **out, struct gp_error *err)
{
	return stack_iter(st, BLOCK_LOG, refname, out, err);
}

/*
 * The table iterator holding the next record to return, or NULL at the
 * end: the smallest key, from the newest table that has it; the same key
 * in older tables is shadowed.
 */
static int iter_pick(struct reftable_iter *it, struct table_iter **pick, struct gp_error *err)
{
	*pick = NULL;
	while (!it->done) {
		struct table_iter *best = NULL;
		bool deleted;
		int ret;

		for (size_t i = 0; i < it->nr; i++) {
			struct table_iter *ti = &it->subs[i];
			if (!ti->advance)
				continue;
			ti->advance = false;
			ret = table_iter_next(ti, err);
			if (ret) {
				it->done = true;
				return ret;
			}
		}
		for (size_t i = it->nr; i-- > 0;) {
			struct table_iter *ti = &it->subs[i];
			if (ti->has_rec && (!best || key_cmp(ti->c.key.buf, ti->c.key.len,
							     best->c.key.buf, best->c.key.len) < 0))
				best = ti;
		}
		if (!best || best->c.key.len < it->prefix.len ||
		    memcmp(best->c.key.buf, it->prefix.buf, it->prefix.len)) {
			it->done = true;
			break;
		}
		for (size_t i = 0; i < it->nr; i++) {
			struct table_iter *ti = &it->subs[i];
			if (ti->has_rec && !key_cmp(ti->c.key.buf, ti->c.key.len,
						    best->c.key.buf, best->c.key.len))
				ti->advance = true;
		}
		deleted = it->section == BLOCK_REF ? best->c.ref.type == REFTABLE_REF_DELETION
						   : best->c.log.type == REFTABLE_LOG_DELETION;
		if (it->merged && deleted)
			continue;
		*pick = best;
		break;
	}
	return 0;
}

void reftable_iter_show_deletions(struct reftable_iter *it)
{
	it->merged = false;
}

int reftable_iter_next_ref(struct reftable_iter *it, struct reftable_ref *ref,
			   struct gp_error *err)
{
	struct table_iter *ti;
	int ret;

	if (NEVER(it->section != BLOCK_REF))
		return gp_error_set(err, GP_EINVAL, "not a ref iterator");
	ret = iter_pick(it, &ti, err);
	if (ret || !ti)
		return ret;
	*ref = ti->c.ref;
	return 1;
}

int reftable_iter_next_log(struct reftable_iter *it, struct reftable_log *log,
			   struct gp_error *err)
{
	struct table_iter *ti;
	int ret;

	if (NEVER(it->section != BLOCK_LOG))
		return gp_error_set(err, GP_EINVAL, "not a log iterator");
	ret = iter_pick(it, &ti, err);
	if (ret || !ti)
		return ret;
	*log = ti->c.log;
	return 1;
}

/* ---- stacks ----------------------------------------------------------------- */

struct reftable_stack *reftable_stack_get(struct reftable_stack *st)
{
	st->refcount++;
	return st;
}

void reftable_stack_free(struct reftable_stack *st)
{
	if (!st || --st->refcount)
		return;
	for (size_t i = 0; i < st->nr; i++)
		table_put(st->tables[i]);
	free(st->tables);
	free(st->dir);
	free(st->list_path);
	free(st);
}

size_t reftable_stack_nr_tables(const struct reftable_stack *st)
{
	return st->nr;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

bool reftable_stack_is_current(const struct reftable_stack *st)
{
	struct stat s;
	if (!*st->list_path)
		return false;
	if (stat(st->list_path, &s) < 0)
		return !st->list_exists && (errno == ENOENT || errno == ENOTDIR);
	return st->list_exists && s.st_dev == st->dev && s.st_ino == st->ino &&
	       s.st_size == st->size && same_time(&s.st_mtim, &st->mtime) &&
	       same_time(&s.st_ctim, &st->ctime);
}

/* Read tables.list into content (empty when it does not exist). */
static int read_list(struct reftable_stack *st, struct strbuf *content, struct gp_error *err)
{
	struct stat s;
	ssize_t got;
	int fd, ret = 0;

	strbuf_reset(content);
	st->list_exists = false;
	fd = open(st->list_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR
			? 0 : gp_error_errno(err, "cannot open '%s'", st->list_path);
	if (fstat(fd, &s) < 0) {
		ret = gp_error_errno(err, "cannot stat '%s'", st->list_path);
		goto out;
	}
	if (!S_ISREG(s.st_mode) || s.st_size > TABLES_LIST_MAX) {
		ret = CORRUPT(err, "%s: not a regular file of at most %d bytes",
			      st->list_path, TABLES_LIST_MAX);
		goto out;
	}
	strbuf_grow(content, (size_t)s.st_size);
	got = read_in_full(fd, content->buf, (size_t)s.st_size);
	if (got < 0) {
		ret = gp_error_errno(err, "cannot read '%s'", st->list_path);
		goto out;
	}
	strbuf_setlen(content, (size_t)got);
	st->list_exists = true;
	st->dev = s.st_dev;
	st->ino = s.st_ino;
	st->size = s.st_size;
	st->mtime = s.st_mtim;
	st->ctime = s.st_ctim;
out:
	close(fd);
	return ret;
}

static void stack_drop_tables(struct reftable_stack *st)
{
	for (size_t i = 0; i < st->nr; i++)
		table_put(st->tables[i]);
	free(st->tables);
	st->tables = NULL;
	st->nr = 0;
}

/*
 * Open the tables content names. 1 when one of them does not exist (the
 * list is stale), with *missing naming it.
 */
static int open_tables(struct reftable_stack *st, struct strbuf *content,
		       struct reftable_stack *reuse, struct strbuf *missing,
		       struct gp_error *err)
{
	size_t alloc = 0, line_nr = 0;
	char *p = content->buf, *end = content->buf + content->len;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct reftable_table *t = NULL;
		char *path;
		int ret;

		line_nr++;
		if (!len || len > 255 || memchr(p, '/', len) || memchr(p, '\0', len) ||
		    (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return CORRUPT(err, "%s: line %zu: not a table name", st->list_path, line_nr);
		p[len] = '\0';
		for (size_t i = 0; reuse && i < reuse->nr && !t; i++)
			if (reuse->tables[i]->file_name && !strcmp(reuse->tables[i]->file_name, p)) {
				t = reuse->tables[i];
				t->refcount++;
			}
		if (!t) {
			path = xstrfmt("%s/%s", st->dir, p);
			ret = reftable_table_open(&t, path, st->algo, err);
			free(path);
			if (ret == GP_ENOTFOUND) {
				strbuf_reset(missing);
				strbuf_addstr(missing, p);
				gp_error_clear(err);
				return 1;
			}
			if (ret)
				return ret;
			t->file_name = xstrdup(p);
		}
		ALLOC_GROW(st->tables, st->nr + 1, alloc);
		st->tables[st->nr++] = t;
		p += len + 1;
	}
	return 0;
}

int reftable_stack_open(struct reftable_stack **out, const char *dir, int algo,
			struct reftable_stack *reuse, struct gp_error *err)
{
	struct reftable_stack *st = xcalloc(1, sizeof(*st));
	struct strbuf content = STRBUF_INIT, missing = STRBUF_INIT;
	int ret = 1;

	st->refcount = 1;
	st->dir = xstrdup(dir);
	st->list_path = xstrfmt("%s/tables.list", dir);
	st->algo = algo;
	for (int tries = 0; ret == 1 && tries < STACK_OPEN_TRIES; tries++) {
		stack_drop_tables(st);
		ret = read_list(st, &content, err);
		if (!ret)
			ret = open_tables(st, &content, reuse, &missing, err);
	}
	if (ret == 1)
		ret = CORRUPT(err, "%s names '%s', which does not exist", st->list_path,
			      missing.buf);
	strbuf_release(&content);
	strbuf_release(&missing);
	if (ret) {
		reftable_stack_free(st);
		st = NULL;
	}
	*out = st;
	return ret;
}

struct reftable_stack *reftable_stack_of_tables(struct reftable_table **tables, size_t nr)
{
	struct reftable_stack *st = xcalloc(1, sizeof(*st));

	st->refcount = 1;
	st->dir = xstrdup("");
	st->list_path = xstrdup("");
	st->algo = nr ? tables[0]->algo : GP_HASH_SHA1;
	st->tables = xcalloc(nr ? nr : 1, sizeof(*st->tables));
	for (size_t i = 0; i < nr; i++) {
		tables[i]->refcount++;
		st->tables[st->nr++] = tables[i];
	}
	return st;
}

int reftable_stack_read_ref(struct reftable_stack *st, const char *name,
			    struct reftable_ref *ref, struct strbuf *target,
			    struct gp_error *err)
{
	struct inflater *inf = NULL;
	size_t name_len = strlen(name);
	bool found = false, decided = false;
	int ret = 0;

	/* the newest table that has a record of name decides */
	for (size_t i = st->nr; !ret && !decided && i-- > 0;) {
		struct table_iter ti;
		table_iter_init(&ti, st->tables[i], &inf, BLOCK_REF);
		ret = table_iter_seek(&ti, name, name_len, err);
		if (!ret && ti.has_rec && ti.c.key.len == name_len &&
		    !memcmp(ti.c.key.buf, name, name_len)) {
			decided = true;
			found = ti.c.ref.type != REFTABLE_REF_DELETION;
			*ref = ti.c.ref;
			ref->name = name;
			if (ref->type == REFTABLE_REF_SYMREF) {
				strbuf_reset(target);
				strbuf_addstr(target, ti.c.ref.target);
				ref->target = target->buf;
			}
		}
		table_iter_release(&ti);
	}
	inflater_free(inf);
	if (!ret && !found)
		ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
	return ret;
}
