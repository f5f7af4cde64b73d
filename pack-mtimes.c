/*
 * pack-mtimes.c: see pack-mtimes.h. The whole file is checked at open;
 * entries are plain timestamps, any value is valid.
 */
#include "pack-mtimes.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "strbuf.h"

int mtimes_parse(const unsigned char *map, size_t size, const char *name, int algo,
		 uint32_t nr, const unsigned char *pack_hash, bool verify_checksum,
		 struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	uint64_t want = MTIMES_HEADER_SIZE + 4 * (uint64_t)nr + 2 * (uint64_t)rawsz;
	uint32_t version, hash_id;

	if (size != want)
		return CORRUPT(err, "%s: mtimes file is %zu bytes, expected %" PRIu64
			       " for %" PRIu32 " objects", name, size, want, nr);
	if (get_be32(map) != MTIMES_SIGNATURE)
		return CORRUPT(err, "%s: at offset 0: mtimes file has unknown signature %08" PRIx32,
			       name, get_be32(map));
	version = get_be32(map + 4);
	if (version != MTIMES_VERSION)
		return CORRUPT(err, "%s: at offset 4: mtimes file has unsupported version %" PRIu32,
			       name, version);
	hash_id = get_be32(map + 8);
	if (hash_id != (uint32_t)algo)
		return CORRUPT(err, "%s: at offset 8: mtimes file has unsupported hash id %" PRIu32,
			       name, hash_id);
	if (pack_hash && memcmp(map + size - 2 * rawsz, pack_hash, rawsz))
		return CORRUPT(err, "%s: at offset %zu: mtimes file is for another pack",
			       name, size - 2 * rawsz);
	if (verify_checksum) {
		unsigned char sum[GP_MAX_RAWSZ];
		hash_buf_checksum(algo, map, size - rawsz, sum);
		if (memcmp(sum, map + size - rawsz, rawsz))
			return CORRUPT(err, "%s: at offset %zu: mtimes checksum mismatch",
				       name, size - rawsz);
	}
	return 0;
}

int mtimes_write(const char *path, int algo, const uint32_t *mtimes, uint32_t nr,
		 const unsigned char *pack_hash, struct gp_error *err)
{
	struct hashfile *f;
	unsigned char *buf;
	int ret = hashfile_create(&f, path, algo, err);
	if (ret)
		return ret;
	hashfile_write_be32(f, MTIMES_SIGNATURE);
	hashfile_write_be32(f, MTIMES_VERSION);
	hashfile_write_be32(f, (uint32_t)algo);
	buf = xmalloc(4 * (size_t)(nr ? nr : 1));
	for (uint32_t idx_pos = 0; idx_pos < nr; idx_pos++)
		put_be32(buf + 4 * (size_t)idx_pos, mtimes[idx_pos]);
	hashfile_write(f, buf, 4 * (size_t)nr);
	free(buf);
	hashfile_write(f, pack_hash, gp_hash_algos[algo].rawsz);
	return hashfile_commit(f, NULL, 0, err);
}

int mtimes_read(const char *path, int algo, uint32_t nr, const unsigned char *pack_hash,
		uint32_t **out, struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t *mtimes;
	int ret;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		ret = errno == ENOENT ? gp_error_set(err, GP_ENOTFOUND, "%s: no such file", path)
				      : gp_error_errno(err, "cannot read '%s'", path);
		strbuf_release(&sb);
		return ret;
	}
	ret = mtimes_parse((const unsigned char *)sb.buf, sb.len, path, algo, nr, pack_hash,
			   true, err);
	if (!ret) {
		mtimes = xmalloc(sizeof(*mtimes) * (nr ? nr : 1));
		for (uint32_t idx_pos = 0; idx_pos < nr; idx_pos++)
			mtimes[idx_pos] = mtimes_entry((const unsigned char *)sb.buf, idx_pos);
		*out = mtimes;
	}
	strbuf_release(&sb);
	return ret;
}
