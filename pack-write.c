/*
 * pack-write.c: .idx writing (layout in packfile.c's opening comment).
 */
#include "pack-write.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "pack-mtimes.h"
#include "pack-revindex.h"
#include "packfile.h"
#include "progress.h"
#include "strbuf.h"
#include "zstream.h"

uint32_t *pack_sort_by_name(const unsigned char *oids, uint32_t nr, int algo)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	uint64_t *keys = xmalloc(sizeof(*keys) * (nr ? nr : 1));
	uint32_t *order;
	for (uint32_t n = 0; n < nr; n++)
		keys[n] = get_be64(oids + (size_t)n * rawsz);
	order = sort_positions_by_u64(keys, nr);
	/* Runs sharing the 8-byte prefix (rare): insertion sort by full name. */
	for (uint32_t start = 0; start < nr;) {
		uint32_t end = start + 1;
		while (end < nr && keys[order[end]] == keys[order[start]])
			end++;
		for (uint32_t i = start + 1; i < end; i++) {
			uint32_t v = order[i], j = i;
			while (j > start && memcmp(oids + (size_t)order[j - 1] * rawsz,
						   oids + (size_t)v * rawsz, rawsz) > 0) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		start = end;
	}
	free(keys);
	return order;
}

int pack_write_idx(const char *path, struct strbuf *mem,
		   const struct pack_idx_input *in,
		   const struct pack_idx_opts *opts, struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[in->algo].rawsz;
	uint32_t fanout[256] = { 0 };
	struct hashfile *f;
	unsigned char *buf = NULL;
	uint32_t nr_large = 0;
	int ret = 0;

	if (opts->version != 1 && opts->version != 2)
		return gp_error_set(err, GP_EINVAL, "unsupported index version %" PRIu32, opts->version);
	if (opts->version == 1) {
		for (uint32_t n = 0; n < in->nr; n++)
			if (in->offsets[n] > 0xffffffffu)
				return gp_error_set(err, GP_EINVAL,
						    "pack too large for index version 1 (offset %" PRIu64 ")",
						    in->offsets[n]);
	}
	if (mem) {
		f = hashfile_new_memory(in->algo);
	} else {
		ret = hashfile_create(&f, path, in->algo, err);
		if (ret)
			return ret;
	}

	for (uint32_t n = 0; n < in->nr; n++)
		fanout[in->oids[(size_t)n * rawsz]]++;
	for (unsigned b = 1; b < 256; b++)
		fanout[b] += fanout[b - 1];

	if (opts->version == 2) {
		hashfile_write_be32(f, PACK_IDX_SIGNATURE);
		hashfile_write_be32(f, 2);
	}
	for (unsigned b = 0; b < 256; b++)
		hashfile_write_be32(f, fanout[b]);

	if (opts->version == 1) {
		for (uint32_t idx_pos = 0; idx_pos < in->nr; idx_pos++) {
			uint32_t n = in->by_name[idx_pos];
			hashfile_write_be32(f, (uint32_t)in->offsets[n]);
			hashfile_write(f, in->oids + (size_t)n * rawsz, rawsz);
		}
	} else {
		/* One staging buffer for the largest table. */
		buf = xmalloc(MAX(rawsz, 8) * (size_t)(in->nr ? in->nr : 1));
		for (uint32_t idx_pos = 0; idx_pos < in->nr; idx_pos++)
			memcpy(buf + (size_t)idx_pos * rawsz,
			       in->oids + (size_t)in->by_name[idx_pos] * rawsz, rawsz);
		hashfile_write(f, buf, (size_t)in->nr * rawsz);
		for (uint32_t idx_pos = 0; idx_pos < in->nr; idx_pos++)
			put_be32(buf + 4 * (size_t)idx_pos, in->crcs[in->by_name[idx_pos]]);
		hashfile_write(f, buf, (size_t)in->nr * 4);
		for (uint32_t idx_pos = 0; idx_pos < in->nr; idx_pos++) {
			uint64_t ofs = in->offsets[in->by_name[idx_pos]];
			uint32_t v = (uint32_t)ofs;
			if (ofs > opts->off32_limit || (ofs >> 31))
				v = 0x80000000u | nr_large++;
			put_be32(buf + 4 * (size_t)idx_pos, v);
		}
		hashfile_write(f, buf, (size_t)in->nr * 4);
		nr_large = 0;
		for (uint32_t idx_pos = 0; idx_pos < in->nr; idx_pos++) {
			uint64_t ofs = in->offsets[in->by_name[idx_pos]];
			if (ofs > opts->off32_limit || (ofs >> 31))
				put_be64(buf + 8 * (size_t)nr_large++, ofs);
		}
		hashfile_write(f, buf, (size_t)nr_large * 8);
		free(buf);
	}
	hashfile_write(f, in->pack_hash, rawsz);
	if (mem) {
		hashfile_finish_memory(f, mem, NULL, 0);
		return 0;
	}
	return hashfile_commit(f, NULL, 0, err);
}

/* ---- writing a pack by copying entries ---------------------------------- */

/* Where each source entry went: (pack, offset) -> new offset. */
struct copy_slot {
	const struct packed_git *pack;
	uint64_t src_ofs;
	uint64_t new_ofs;
};

struct copy_map {
	struct copy_slot *slots;
	size_t mask;
};

static size_t copy_hash(const struct copy_map *m, const struct packed_git *pack, uint64_t ofs)
{
	uint64_t h = (ofs ^ ((uint64_t)(uintptr_t)pack << 9)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 29) & m->mask;
}

static void copy_map_put(struct copy_map *m, const struct packed_git *pack,
			 uint64_t src_ofs, uint64_t new_ofs)
{
	size_t i = copy_hash(m, pack, src_ofs);
	while (m->slots[i].pack)
		i = (i + 1) & m->mask;
	m->slots[i].pack = pack;
	m->slots[i].src_ofs = src_ofs;
	m->slots[i].new_ofs = new_ofs;
}

static bool copy_map_get(const struct copy_map *m, const struct packed_git *pack,
			 uint64_t src_ofs, uint64_t *new_ofs)
{
	size_t i = copy_hash(m, pack, src_ofs);
	for (; m->slots[i].pack; i = (i + 1) & m->mask)
		if (m->slots[i].pack == pack && m->slots[i].src_ofs == src_ofs) {
			*new_ofs = m->slots[i].new_ofs;
			return true;
		}
	return false;
}

void pack_encode_header(unsigned char *out, uint32_t nr)
{
	put_be32(out, PACK_SIGNATURE);
	put_be32(out + 4, 2);
	put_be32(out + 8, nr);
}

size_t pack_encode_entry_header(unsigned char *out, enum object_type type, uint64_t size)
{
	size_t n = 0;
	unsigned char c = (unsigned char)((unsigned)type << 4 | (size & 15));
	size >>= 4;
	while (size) {
		out[n++] = c | 0x80;
		c = size & 0x7f;
		size >>= 7;
	}
	out[n++] = c;
	return n;
}

size_t pack_encode_ofs_distance(unsigned char *out, uint64_t dist)
{
	unsigned char tmp[16];
	size_t pos = sizeof(tmp) - 1;
	tmp[pos] = dist & 0x7f;
	while (dist >>= 7)
		tmp[--pos] = 0x80 | (--dist & 0x7f);
	memcpy(out, tmp + pos, sizeof(tmp) - pos);
	return sizeof(tmp) - pos;
}

static int cmp_raw_oid(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

/* Whether raw is among the nr sorted names. */
static bool bsearch_r_oid(const unsigned char *sorted, uint32_t nr,
			  const unsigned char *raw, size_t rawsz)
{
	uint32_t lo = 0, hi = nr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(sorted + (size_t)mid * rawsz, raw, rawsz);
		if (!cmp)
			return true;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool pack_idx_opts_parse(const char *arg, struct pack_idx_opts *out)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (end == arg || (v != 1 && v != 2))
		return false;
	out->version = (uint32_t)v;
	if (*end == ',') {
		const char *limit = end + 1;
		unsigned long long lim = strtoull(limit, &end, 0);
		if (end == limit || *end || lim > 0x7fffffff)
			return false;
		out->off32_limit = lim;
	} else if (*end) {
		return false;
	}
	return true;
}

int pack_write_finish(struct hashfile *f, const char *dir, const char *prefix,
		      int algo, const unsigned char *oids, const uint64_t *offsets,
		      const uint32_t *crcs, const uint32_t *mtimes, uint32_t nr,
		      bool write_rev, const struct pack_idx_opts *idx_opts,
		      char *hex_out, struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	unsigned char pack_hash[GP_MAX_RAWSZ];
	uint32_t *by_name = NULL, *pack_order = NULL;
	char *final = NULL;
	int ret = hashfile_finalize(f, pack_hash, 0, err);
	if (ret)
		return ret;
	hash_to_hex_r(hex_out, pack_hash, rawsz);
	final = xstrfmt("%s/%s-%s.pack", dir, prefix, hex_out);
	ret = hashfile_install(f, final, HASHFILE_KEEP_EXISTING, err);
	if (ret)
		goto out;

	by_name = pack_sort_by_name(oids, nr, algo);
	if (write_rev) {
		pack_order = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
		for (uint32_t idx_pos = 0; idx_pos < nr; idx_pos++)
			pack_order[by_name[idx_pos]] = idx_pos;
		free(final);
		final = xstrfmt("%s/%s-%s.rev", dir, prefix, hex_out);
		ret = revindex_write(final, algo, pack_order, nr, pack_hash, err);
	}
	if (!ret && mtimes) {
		uint32_t *by_idx = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
		for (uint32_t idx_pos = 0; idx_pos < nr; idx_pos++)
			by_idx[idx_pos] = mtimes[by_name[idx_pos]];
		free(final);
		final = xstrfmt("%s/%s-%s.mtimes", dir, prefix, hex_out);
		ret = mtimes_write(final, algo, by_idx, nr, pack_hash, err);
		free(by_idx);
	}
	if (!ret) {
		struct pack_idx_input in = { algo, nr, by_name, oids, offsets, crcs, pack_hash };
		struct pack_idx_opts opts = PACK_IDX_OPTS_INIT;
		free(final);
		final = xstrfmt("%s/%s-%s.idx", dir, prefix, hex_out);
		ret = pack_write_idx(final, NULL, &in, idx_opts ? idx_opts : &opts, err);
	}
out:
	free(final);
	free(by_name);
	free(pack_order);
	return ret;
}

int pack_write_by_copy(const char *pack_dir, int algo,
		       const struct pack_copy_entry *entries, uint32_t nr,
		       struct pack_reader *reader, struct progress *progress,
		       char *hex_out, struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	struct copy_map map = { NULL, 0 };
	unsigned char *oids = xmalloc(rawsz * ((size_t)nr + 1));
	unsigned char *sorted_oids = NULL;
	uint64_t *offsets = xmalloc(sizeof(uint64_t) * ((size_t)nr + 1));
	uint32_t *crcs = xmalloc(sizeof(uint32_t) * ((size_t)nr + 1));
	struct hashfile *f = NULL;
	struct strbuf tmp = STRBUF_INIT;
	unsigned char pack_head[PACK_HEADER_SIZE];
	size_t slots = 16;
	int ret = 0;

	while (slots < (size_t)nr * 2)
		slots *= 2;
	map.slots = xcalloc(slots, sizeof(*map.slots));
	map.mask = slots - 1;

	/* The names, for REF_DELTA bases and the .idx. */
	for (uint32_t n = 0; n < nr; n++) {
		uint32_t pack_pos;
		ret = pack_load_revindex(entries[n].pack, err);
		if (ret)
			goto out;
		if (!pack_offset_to_pos(entries[n].pack, entries[n].ofs, &pack_pos)) {
			ret = CORRUPT(err, "%s: no object at offset %" PRIu64,
				      entries[n].pack->pack_path, entries[n].ofs);
			goto out;
		}
		memcpy(oids + (size_t)n * rawsz,
		       pack_nth_oid_raw(entries[n].pack, pack_pos_to_idx(entries[n].pack, pack_pos)),
		       rawsz);
	}
	sorted_oids = xmemdup(oids, rawsz * ((size_t)nr + 1));
	qsort_r(sorted_oids, nr, rawsz, cmp_raw_oid, &rawsz);

	{
		char *tmpl = xstrfmt("%s/pack-tmp.pack", pack_dir);
		ret = hashfile_create(&f, tmpl, algo, err);
		free(tmpl);
		if (ret)
			goto out;
	}
	pack_encode_header(pack_head, nr);
	hashfile_write(f, pack_head, sizeof(pack_head));

	for (uint32_t n = 0; n < nr; n++) {
		struct packed_git *p = entries[n].pack;
		uint64_t ofs = entries[n].ofs, end, base_new;
		struct pack_entry_header hdr;
		uint32_t pack_pos, idx_pos;
		unsigned char head[32];
		size_t head_len;
		bool whole = false;

		pack_offset_to_pos(p, ofs, &pack_pos);
		idx_pos = pack_pos_to_idx(p, pack_pos);
		end = pack_pos_to_end(p, pack_pos);
		ret = pack_parse_entry_header(p->pack_map + ofs, (size_t)(end - ofs), ofs, algo, &hdr, err);
		if (ret) {
			gp_error_prefix(err, "%s", p->pack_path);
			goto fail;
		}
		if (p->idx_version >= 2 &&
		    gp_crc32(0, p->pack_map + ofs, (size_t)(end - ofs)) != pack_nth_crc(p, idx_pos)) {
			ret = CORRUPT(err, "%s: at offset %" PRIu64 ": CRC does not match the index",
				      p->pack_path, ofs);
			goto fail;
		}
		offsets[n] = hashfile_total(f);
		strbuf_reset(&tmp);
		if (hdr.type == OBJ_OFS_DELTA) {
			if (copy_map_get(&map, p, hdr.base_ofs, &base_new)) {
				head_len = pack_encode_entry_header(head, OBJ_OFS_DELTA, hdr.size);
				head_len += pack_encode_ofs_distance(head + head_len, offsets[n] - base_new);
				strbuf_add(&tmp, head, head_len);
			} else {
				whole = true;
			}
		} else if (hdr.type == OBJ_REF_DELTA) {
			if (bsearch_r_oid(sorted_oids, nr, hdr.base_oid.hash, rawsz)) {
				head_len = pack_encode_entry_header(head, OBJ_REF_DELTA, hdr.size);
				strbuf_add(&tmp, head, head_len);
				strbuf_add(&tmp, hdr.base_oid.hash, rawsz);
			} else {
				whole = true;
			}
		} else {
			head_len = pack_encode_entry_header(head, hdr.type, hdr.size);
			strbuf_add(&tmp, head, head_len);
		}
		if (whole) {
			enum object_type type;
			unsigned char *data;
			size_t size;
			ret = pack_read_object(reader, p, ofs, &type, &data, &size, err);
			if (ret)
				goto fail;
			head_len = pack_encode_entry_header(head, type, size);
			strbuf_add(&tmp, head, head_len);
			deflate_to_strbuf(data, size, -1, &tmp);
			free(data);
		} else {
			strbuf_add(&tmp, p->pack_map + ofs + hdr.hdr_len, (size_t)(end - ofs - hdr.hdr_len));
		}
		crcs[n] = gp_crc32(0, tmp.buf, tmp.len);
		hashfile_write(f, tmp.buf, tmp.len);
		copy_map_put(&map, p, ofs, offsets[n]);
		progress_update(progress, n + 1);
	}

	ret = pack_write_finish(f, pack_dir, "pack", algo, oids, offsets, crcs, NULL, nr,
				true, NULL, hex_out, err);
	f = NULL;
	goto out;
fail:
	hashfile_abort(f);
out:
	strbuf_release(&tmp);
	free(map.slots);
	free(oids);
	free(sorted_oids);
	free(offsets);
	free(crcs);
	return ret;
}
