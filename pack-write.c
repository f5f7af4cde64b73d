/*
 * pack-write.c: .idx writing (layout in packfile.c's opening comment).
 */
#include "pack-write.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "pack-revindex.h"
#include "packfile.h"
#include "strbuf.h"

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
