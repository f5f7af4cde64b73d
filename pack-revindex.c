/*
 * pack-revindex.c: .rev reading and writing, and the in-memory reverse
 * index (see pack-revindex.h for the layout).
 */
#include "pack-revindex.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "packfile.h"

int revindex_parse(const unsigned char *map, size_t size, const char *name,
		   int algo, uint32_t nr, const unsigned char *pack_hash,
		   struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	size_t want = RIDX_HEADER_SIZE + (size_t)nr * 4 + 2 * rawsz;
	uint32_t v;

	if (size < RIDX_HEADER_SIZE)
		return CORRUPT(err, "%s: reverse index is too small (%zu bytes)", name, size);
	if (get_be32(map) != RIDX_SIGNATURE)
		return CORRUPT(err, "%s: at offset 0: bad reverse index signature", name);
	v = get_be32(map + 4);
	if (v != RIDX_VERSION)
		return CORRUPT(err, "%s: at offset 4: unsupported reverse index version %" PRIu32, name, v);
	v = get_be32(map + 8);
	if (v != (uint32_t)algo)
		return CORRUPT(err, "%s: at offset 8: hash id %" PRIu32 " does not match the repository's %s",
			       name, v, gp_hash_algos[algo].name);
	if (size != want)
		return CORRUPT(err, "%s: reverse index has %zu bytes, %" PRIu32 " objects need %zu",
			       name, size, nr, want);
	if (pack_hash && memcmp(map + size - 2 * rawsz, pack_hash, rawsz))
		return CORRUPT(err, "%s: at offset %zu: pack checksum does not match the pack",
			       name, size - 2 * rawsz);
	return 0;
}

uint32_t *sort_positions_by_u64(const uint64_t *keys, uint32_t nr)
{
	uint32_t *pos = xmalloc(sizeof(*pos) * (nr ? nr : 1));
	uint32_t *tmp = xmalloc(sizeof(*tmp) * (nr ? nr : 1));
	uint64_t max = 0;
	size_t *counts = xmalloc(sizeof(size_t) * 65536);

	for (uint32_t i = 0; i < nr; i++) {
		pos[i] = i;
		if (keys[i] > max)
			max = keys[i];
	}
	/* LSD radix sort, 16 bits a pass, only as many passes as max needs. */
	for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 16) {
		size_t sum = 0;
		memset(counts, 0, sizeof(size_t) * 65536);
		for (uint32_t i = 0; i < nr; i++)
			counts[(keys[pos[i]] >> shift) & 0xffff]++;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = counts[d];
			counts[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < nr; i++)
			tmp[counts[(keys[pos[i]] >> shift) & 0xffff]++] = pos[i];
		uint32_t *swap = pos;
		pos = tmp;
		tmp = swap;
	}
	free(counts);
	free(tmp);
	return pos;
}

uint32_t *revindex_compute(const struct packed_git *p)
{
	uint64_t *offsets = xmalloc(sizeof(*offsets) * (p->nr_objects ? p->nr_objects : 1));
	uint32_t *order;
	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++)
		offsets[idx_pos] = pack_nth_offset(p, idx_pos);
	order = sort_positions_by_u64(offsets, p->nr_objects);
	free(offsets);
	return order;
}

int revindex_write(const char *path, int algo, const uint32_t *pack_order,
		   uint32_t nr, const unsigned char *pack_hash,
		   struct gp_error *err)
{
	struct hashfile *f;
	unsigned char *buf;
	int ret = hashfile_create(&f, path, algo, err);
	if (ret)
		return ret;
	hashfile_write_be32(f, RIDX_SIGNATURE);
	hashfile_write_be32(f, RIDX_VERSION);
	hashfile_write_be32(f, (uint32_t)algo);
	buf = xmalloc(4 * (size_t)(nr ? nr : 1));
	for (uint32_t pack_pos = 0; pack_pos < nr; pack_pos++)
		put_be32(buf + 4 * (size_t)pack_pos, pack_order[pack_pos]);
	hashfile_write(f, buf, 4 * (size_t)nr);
	free(buf);
	hashfile_write(f, pack_hash, gp_hash_algos[algo].rawsz);
	return hashfile_commit(f, NULL, 0, err);
}
