/*
 * reftable-write.c: one reftable file, laid out as reftable-write.h says
 * (from git's Documentation/technical/reftable.adoc).
 */
#include "reftable-write.h"
#include "reftable.h"
#include "error.h"
#include "hash.h"
#include "object.h"
#include "strbuf.h"
#include "util.h"
#include "zstream.h"
#include <stdlib.h>
#include <string.h>

#define RT_MAGIC "REFT"              /* REFT */
#define RT_V1_HEADER 24
#define RT_V2_HEADER 28
#define RT_BLOCK_REF 'r'
#define RT_BLOCK_INDEX 'i'
#define RT_BLOCK_OBJ 'o'
#define RT_BLOCK_LOG 'g'
#define RT_BLOCK_HEADER 4
/* a section of more blocks than this gets an index level */
#define RT_INDEX_THRESHOLD 3
/* git keys the obj section by at least this many bytes of the id */
#define RT_MIN_OBJ_ID_LEN 2

struct index_rec {
	struct strbuf key;
	uint64_t ofs;
};

struct obj_rec {
	unsigned char id[GP_MAX_RAWSZ];
	uint64_t ofs;
};

struct block_builder {
	unsigned char type;
	size_t header_off;  /* the file header's bytes at the front of block 0 */
	struct strbuf buf;  /* the block image from the file's first byte for block 0 */
	uint32_t *restarts;
	size_t restarts_nr, restarts_alloc;
	size_t entries;
	struct strbuf last_key;
	bool active;
};

struct reftable_writer {
	int algo;
	size_t rawsz;
	unsigned version;
	size_t header_size;
	uint32_t block_size;
	uint16_t restart_interval;
	bool skip_index_objects;
	uint64_t min_ui, max_ui;

	struct strbuf out;
	size_t pending_padding;
	bool wrote_block;

	struct block_builder b;
	struct index_rec *index;
	size_t index_nr, index_alloc;

	/* object ids of the refs in the current ref block, then all of them */
	struct obj_rec *objs;
	size_t objs_nr, objs_alloc, objs_block_start;

	bool in_logs, finished;
	struct strbuf key;     /* scratch: the key being added */
	struct strbuf rec;     /* scratch: its value */
	uint64_t ref_index_pos, obj_pos, obj_index_pos, log_pos, log_index_pos;
	unsigned obj_id_len;
};

static void put_be24(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 16);
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)v;
}

/* the varint of reftable.adoc (ofs-delta's): big-endian 7-bit groups, each but the last +1 */
static void add_varint(struct strbuf *sb, uint64_t v)
{
	unsigned char tmp[16];
	size_t pos = sizeof(tmp) - 1;
	tmp[pos] = v & 0x7f;
	while (v >>= 7) {
		v--;
		tmp[--pos] = 0x80 | (v & 0x7f);
	}
	strbuf_add(sb, tmp + pos, sizeof(tmp) - pos);
}

static void add_be(struct strbuf *sb, uint64_t v, unsigned bytes)
{
	unsigned char tmp[8];
	for (unsigned i = 0; i < bytes; i++)
		tmp[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	strbuf_add(sb, tmp, bytes);
}

struct reftable_writer *reftable_writer_new(int algo, const struct reftable_write_opts *opts,
					    uint64_t min_update_index, uint64_t max_update_index)
{
	struct reftable_writer *w = xcalloc(1, sizeof(*w));
	w->algo = algo;
	w->rawsz = gp_hash_algos[algo].rawsz;
	w->version = algo == GP_HASH_SHA1 ? 1 : 2;
	w->header_size = w->version == 1 ? RT_V1_HEADER : RT_V2_HEADER;
	w->block_size = opts && opts->block_size ? opts->block_size : REFTABLE_DEFAULT_BLOCK_SIZE;
	w->restart_interval = opts && opts->restart_interval ? opts->restart_interval
							      : REFTABLE_DEFAULT_RESTART_INTERVAL;
	w->skip_index_objects = opts && opts->skip_index_objects;
	w->min_ui = min_update_index;
	w->max_ui = max_update_index;
	strbuf_init(&w->out, 0);
	/* room for the header, filled in at the end */
	strbuf_grow(&w->out, w->header_size);
	memset(w->out.buf, 0, w->header_size);
	strbuf_setlen(&w->out, w->header_size);
	strbuf_init(&w->b.buf, 0);
	strbuf_init(&w->b.last_key, 0);
	strbuf_init(&w->key, 0);
	strbuf_init(&w->rec, 0);
	return w;
}

static void add_header(const struct reftable_writer *w, struct strbuf *sb)
{
	strbuf_add(sb, RT_MAGIC, 4);
	add_be(sb, w->version, 1);
	add_be(sb, w->block_size, 3);
	add_be(sb, w->min_ui, 8);
	add_be(sb, w->max_ui, 8);
	if (w->version == 2)
		add_be(sb, w->algo == GP_HASH_SHA1 ? REFTABLE_HASH_SHA1 : REFTABLE_HASH_SHA256, 4);
}

static void block_start(struct reftable_writer *w, unsigned char type)
{
	struct block_builder *b = &w->b;
	strbuf_reset(&b->buf);
	/* the first block of the file shares its first bytes with the header */
	b->header_off = w->wrote_block ? 0 : w->header_size;
	strbuf_grow(&b->buf, b->header_off);
	memset(b->buf.buf, 0, b->header_off);
	strbuf_setlen(&b->buf, b->header_off);
	strbuf_addch(&b->buf, type);
	add_be(&b->buf, 0, 3);
	b->type = type;
	b->restarts_nr = 0;
	b->entries = 0;
	strbuf_reset(&b->last_key);
	b->active = true;
}

/*
 * Try to add the record key + value (value: the bytes after the key's
 * suffix) to the current block; false when it does not fit.
 */
static bool block_add(struct reftable_writer *w, const struct strbuf *key,
		      unsigned type_bits, const struct strbuf *val)
{
	struct block_builder *b = &w->b;
	size_t prefix = 0, need, restarts_after;
	bool restart;
	size_t before = b->buf.len;

	if (b->entries % w->restart_interval) {
		size_t max = key->len < b->last_key.len ? key->len : b->last_key.len;
		while (prefix < max && key->buf[prefix] == b->last_key.buf[prefix])
			prefix++;
	}
	restart = prefix == 0;
	add_varint(&b->buf, prefix);
	add_varint(&b->buf, (uint64_t)(key->len - prefix) << 3 | type_bits);
	strbuf_add(&b->buf, key->buf + prefix, key->len - prefix);
	strbuf_addbuf(&b->buf, val);
	need = b->buf.len;
	restarts_after = b->restarts_nr + (restart ? 1 : 0);
	if (need + 3 * restarts_after + 2 > w->block_size) {
		strbuf_setlen(&b->buf, before);
		return false;
	}
	if (restart) {
		ALLOC_GROW(b->restarts, b->restarts_nr + 1, b->restarts_alloc);
		b->restarts[b->restarts_nr++] = (uint32_t)before;
	}
	b->entries++;
	strbuf_reset(&b->last_key);
	strbuf_addbuf(&b->last_key, key);
	return true;
}

/* Write out the current block (if any record) and index its last key. */
static void block_flush(struct reftable_writer *w)
{
	struct block_builder *b = &w->b;
	uint64_t ofs;
	size_t body = b->header_off + RT_BLOCK_HEADER;

	if (!b->active)
		return;
	b->active = false;
	if (!b->entries)
		return;
	for (size_t i = 0; i < b->restarts_nr; i++)
		add_be(&b->buf, b->restarts[i], 3);
	add_be(&b->buf, b->restarts_nr, 2);
	put_be24((unsigned char *)b->buf.buf + b->header_off + 1, (uint32_t)b->buf.len);

	if (w->pending_padding) {
		strbuf_grow(&w->out, w->pending_padding);
		memset(w->out.buf + w->out.len, 0, w->pending_padding);
		strbuf_setlen(&w->out, w->out.len + w->pending_padding);
		w->pending_padding = 0;
	}
	ofs = w->out.len - b->header_off;
	if (b->type == RT_BLOCK_LOG) {
		strbuf_add(&w->out, b->buf.buf + b->header_off, RT_BLOCK_HEADER);
		deflate_to_strbuf(b->buf.buf + body, b->buf.len - body, 9, &w->out);
	} else {
		strbuf_add(&w->out, b->buf.buf + b->header_off, b->buf.len - b->header_off);
		w->pending_padding = w->block_size - b->buf.len;
	}
	w->wrote_block = true;

	ALLOC_GROW(w->index, w->index_nr + 1, w->index_alloc);
	strbuf_init(&w->index[w->index_nr].key, 0);
	strbuf_addbuf(&w->index[w->index_nr].key, &b->last_key);
	w->index[w->index_nr].ofs = ofs;
	w->index_nr++;

	if (b->type == RT_BLOCK_REF) {
		for (size_t i = w->objs_block_start; i < w->objs_nr; i++)
			w->objs[i].ofs = ofs;
		w->objs_block_start = w->objs_nr;
	}
}

static void index_clear(struct reftable_writer *w)
{
	for (size_t i = 0; i < w->index_nr; i++)
		strbuf_release(&w->index[i].key);
	w->index_nr = 0;
}

/* Add a record to a block of type, starting a new block when it is full. */
static int add_record(struct reftable_writer *w, unsigned char type, const struct strbuf *key,
		      unsigned type_bits, const struct strbuf *val, struct gp_error *err)
{
	if (!w->b.active || w->b.type != type)
		block_start(w, type);
	if (block_add(w, key, type_bits, val))
		return 0;
	block_flush(w);
	block_start(w, type);
	if (block_add(w, key, type_bits, val))
		return 0;
	return gp_error_set(err, GP_EINVAL, "entry too large");
}

/*
 * Close a section: flush its last block, then while it has more blocks
 * than the threshold write a level of index blocks over them. Returns the
 * position of the top index level in *index_pos (0: none).
 */
static int finish_section(struct reftable_writer *w, uint64_t *index_pos, struct gp_error *err)
{
	struct index_rec *level = NULL;
	size_t level_nr;
	int ret = 0;

	block_flush(w);
	*index_pos = 0;
	while (w->index_nr > RT_INDEX_THRESHOLD) {
		level = w->index;
		level_nr = w->index_nr;
		w->index = NULL;
		w->index_nr = w->index_alloc = 0;
		*index_pos = w->out.len + w->pending_padding;
		for (size_t i = 0; i < level_nr && !ret; i++) {
			strbuf_reset(&w->rec);
			add_varint(&w->rec, level[i].ofs);
			ret = add_record(w, RT_BLOCK_INDEX, &level[i].key, 0, &w->rec, err);
		}
		block_flush(w);
		for (size_t i = 0; i < level_nr; i++)
			strbuf_release(&level[i].key);
		free(level);
		level = NULL;
		if (ret)
			break;
	}
	index_clear(w);
	return ret;
}

/* ids are zero-padded to GP_MAX_RAWSZ, so comparing all of it is exact */
static int obj_cmp(const void *a, const void *b)
{
	const struct obj_rec *x = a, *y = b;
	int c = memcmp(x->id, y->id, GP_MAX_RAWSZ);
	if (c)
		return c;
	return x->ofs < y->ofs ? -1 : x->ofs > y->ofs;
}

static int write_obj_section(struct reftable_writer *w, struct gp_error *err)
{
	size_t common_max = 1;
	int ret = 0;

	if (!w->objs_nr)
		return 0;
	qsort(w->objs, w->objs_nr, sizeof(*w->objs), obj_cmp);
	for (size_t i = 1; i < w->objs_nr; i++) {
		size_t c = 0;
		while (c < w->rawsz && w->objs[i].id[c] == w->objs[i - 1].id[c])
			c++;
		if (c < w->rawsz && c > common_max)
			common_max = c;
	}
	w->obj_id_len = (unsigned)(common_max + 1);
	if (w->obj_id_len < RT_MIN_OBJ_ID_LEN)
		w->obj_id_len = RT_MIN_OBJ_ID_LEN;
	w->obj_pos = w->out.len + w->pending_padding;
	for (size_t i = 0; i < w->objs_nr && !ret;) {
		size_t end = i, nr = 0;
		uint64_t last = 0;
		struct strbuf key = STRBUF_INIT;

		while (end < w->objs_nr && !memcmp(w->objs[end].id, w->objs[i].id, w->rawsz))
			end++;
		strbuf_add(&key, w->objs[i].id, w->obj_id_len);
		strbuf_reset(&w->rec);
		for (size_t j = i; j < end; j++)
			if (j == i || w->objs[j].ofs != w->objs[j - 1].ofs)
				nr++;
		if (nr >= 8)
			add_varint(&w->rec, nr);
		for (size_t j = i; j < end; j++) {
			if (j != i && w->objs[j].ofs == w->objs[j - 1].ofs)
				continue;
			add_varint(&w->rec, j == i ? w->objs[j].ofs : w->objs[j].ofs - last);
			last = w->objs[j].ofs;
		}
		if (!w->b.active || w->b.type != RT_BLOCK_OBJ)
			block_start(w, RT_BLOCK_OBJ);
		if (!block_add(w, &key, nr < 8 ? (unsigned)nr : 0, &w->rec)) {
			block_flush(w);
			block_start(w, RT_BLOCK_OBJ);
			if (!block_add(w, &key, nr < 8 ? (unsigned)nr : 0, &w->rec)) {
				/* too many blocks to list: readers then scan the refs */
				strbuf_reset(&w->rec);
				add_varint(&w->rec, 0);
				if (!block_add(w, &key, 0, &w->rec))
					ret = gp_error_set(err, GP_EINVAL, "entry too large");
			}
		}
		strbuf_release(&key);
		i = end;
	}
	if (!ret)
		ret = finish_section(w, &w->obj_index_pos, err);
	return ret;
}

/* Close the ref section (and write the obj section it calls for). */
static int finish_refs(struct reftable_writer *w, struct gp_error *err)
{
	int ret;
	if (!w->b.active || w->b.type != RT_BLOCK_REF)
		return 0;
	ret = finish_section(w, &w->ref_index_pos, err);
	if (!ret && w->ref_index_pos && !w->skip_index_objects)
		ret = write_obj_section(w, err);
	return ret;
}

int reftable_writer_add_ref(struct reftable_writer *w, const struct reftable_ref *ref,
			    struct gp_error *err)
{
	if (w->in_logs || w->finished)
		return gp_error_set(err, GP_EINVAL, "reftable writer: ref '%s' after the logs", ref->name);
	if (ref->update_index < w->min_ui || ref->update_index > w->max_ui)
		return gp_error_set(err, GP_EINVAL, "reftable writer: ref '%s' update index out of range",
				    ref->name);
	strbuf_reset(&w->key);
	strbuf_addstr(&w->key, ref->name);
	if (!w->key.len)
		return gp_error_set(err, GP_EINVAL, "reftable writer: empty ref name");
	if (w->b.active && w->b.entries) {
		size_t n = w->key.len < w->b.last_key.len ? w->key.len : w->b.last_key.len;
		int c = memcmp(w->key.buf, w->b.last_key.buf, n);
		if (c < 0 || (!c && w->key.len <= w->b.last_key.len))
			return gp_error_set(err, GP_EINVAL, "reftable writer: ref '%s' out of order",
					    ref->name);
	}
	strbuf_reset(&w->rec);
	add_varint(&w->rec, ref->update_index - w->min_ui);
	switch (ref->type) {
	case REFTABLE_REF_DELETION:
		break;
	case REFTABLE_REF_VAL2:
		strbuf_add(&w->rec, ref->oid.hash, w->rawsz);
		strbuf_add(&w->rec, ref->peeled.hash, w->rawsz);
		break;
	case REFTABLE_REF_VAL1:
		strbuf_add(&w->rec, ref->oid.hash, w->rawsz);
		break;
	case REFTABLE_REF_SYMREF:
		add_varint(&w->rec, strlen(ref->target));
		strbuf_addstr(&w->rec, ref->target);
		break;
	}
	if (add_record(w, RT_BLOCK_REF, &w->key, ref->type, &w->rec, err))
		return GP_EINVAL;
	if (ref->type == REFTABLE_REF_VAL1 || ref->type == REFTABLE_REF_VAL2) {
		ALLOC_GROW(w->objs, w->objs_nr + 2, w->objs_alloc);
		memset(w->objs + w->objs_nr, 0, 2 * sizeof(*w->objs));
		memcpy(w->objs[w->objs_nr++].id, ref->oid.hash, w->rawsz);
		if (ref->type == REFTABLE_REF_VAL2)
			memcpy(w->objs[w->objs_nr++].id, ref->peeled.hash, w->rawsz);
	}
	return 0;
}

int reftable_writer_add_log(struct reftable_writer *w, const struct reftable_log *log,
			    struct gp_error *err)
{
	int ret;

	if (w->finished)
		return gp_error_set(err, GP_EINVAL, "reftable writer: finished");
	/*
	 * No range check for logs: deleting a ref writes deletion records
	 * under the update indexes of its older log entries.
	 */
	if (!w->in_logs) {
		ret = finish_refs(w, err);
		if (ret)
			return ret;
		/* the log section follows the last ref block unpadded */
		w->pending_padding = 0;
		w->in_logs = true;
		w->log_pos = w->wrote_block ? w->out.len : 0;
	}
	strbuf_reset(&w->key);
	strbuf_addstr(&w->key, log->refname);
	strbuf_addch(&w->key, 0);
	add_be(&w->key, UINT64_MAX - log->update_index, 8);
	if (w->b.active && w->b.entries) {
		size_t n = w->key.len < w->b.last_key.len ? w->key.len : w->b.last_key.len;
		int c = memcmp(w->key.buf, w->b.last_key.buf, n);
		if (c < 0 || (!c && w->key.len <= w->b.last_key.len))
			return gp_error_set(err, GP_EINVAL, "reftable writer: log of '%s' out of order",
					    log->refname);
	}
	strbuf_reset(&w->rec);
	if (log->type == REFTABLE_LOG_UPDATE) {
		strbuf_add(&w->rec, log->old_oid.hash, w->rawsz);
		strbuf_add(&w->rec, log->new_oid.hash, w->rawsz);
		add_varint(&w->rec, log->name_len);
		strbuf_add(&w->rec, log->name, log->name_len);
		add_varint(&w->rec, log->email_len);
		strbuf_add(&w->rec, log->email, log->email_len);
		add_varint(&w->rec, log->time);
		add_be(&w->rec, (uint16_t)(int16_t)log->tz_offset, 2);
		add_varint(&w->rec, log->message_len);
		strbuf_add(&w->rec, log->message, log->message_len);
	}
	return add_record(w, RT_BLOCK_LOG, &w->key, log->type, &w->rec, err);
}

int reftable_writer_finish(struct reftable_writer *w, struct strbuf *out, struct gp_error *err)
{
	struct strbuf footer = STRBUF_INIT;
	int ret = 0;

	if (w->finished)
		return gp_error_set(err, GP_EINVAL, "reftable writer: finished twice");
	w->finished = true;
	if (!w->in_logs)
		ret = finish_refs(w, err);
	else
		ret = finish_section(w, &w->log_index_pos, err);
	if (ret)
		goto out;
	/* the header, in front of block 0; the footer repeats it */
	add_header(w, &footer);
	memcpy(w->out.buf, footer.buf, footer.len);
	add_be(&footer, w->ref_index_pos, 8);
	add_be(&footer, w->obj_pos << 5 | w->obj_id_len, 8);
	add_be(&footer, w->obj_index_pos, 8);
	add_be(&footer, w->log_pos, 8);
	add_be(&footer, w->log_index_pos, 8);
	add_be(&footer, gp_crc32(0, footer.buf, footer.len), 4);
	strbuf_addbuf(&w->out, &footer);
	strbuf_addbuf(out, &w->out);
out:
	strbuf_release(&footer);
	return ret;
}

void reftable_writer_free(struct reftable_writer *w)
{
	if (!w)
		return;
	strbuf_release(&w->out);
	strbuf_release(&w->b.buf);
	strbuf_release(&w->b.last_key);
	free(w->b.restarts);
	index_clear(w);
	free(w->index);
	free(w->objs);
	strbuf_release(&w->key);
	strbuf_release(&w->rec);
	free(w);
}
