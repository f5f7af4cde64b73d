/*
 * midx.c: reading and verifying the multi-pack-index.
 *
 * Layout (gitformat-pack; all integers big-endian):
 *
 *   offset   size              contents
 *   0        4                 "MIDX" (MIDX_SIGNATURE)
 *   4        1                 version (1; 2 also read)
 *   5        1                 hash id: 1 = SHA-1, 2 = SHA-256
 *   6        1                 number of chunks C
 *   7        1                 number of base MIDX files (0)
 *   8        4                 number of packs P
 *   12       (C + 1) * 12      chunk table (chunk-format.h)
 *   ...                        chunks:
 *     PNAM   P NUL-terminated idx names, sorted, padded to 4 bytes
 *     OIDF   256 * 4           fanout
 *     OIDL   N * rawsz         object names, sorted
 *     OOFF   N * 8             pack id, offset (MSB: LOFF index when
 *                              LOFF exists)
 *     LOFF   L * 8             64-bit offsets (optional)
 *     RIDX   N * 4             midx positions in pseudo-pack order
 *                              (optional)
 *   end - rawsz  rawsz         checksum of all the above
 */
#include "midx.h"
#include "chunk-format.h"
#include "error.h"
#include "hash.h"
#include "packfile.h"
#include "pack-revindex.h"
#include "progress.h"
#include "strbuf.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

struct midx {
	char *path;
	int algo;
	size_t rawsz;
	const unsigned char *map;
	size_t map_size;
	bool mapped;            /* munmap at free (not for borrowed buffers) */
	uint32_t version;
	uint32_t nr_packs;
	uint32_t nr_objects;
	struct chunk_table chunks;

	char **pack_names;      /* nr_packs, pointing into PNAM */
	const unsigned char *fanout;
	const unsigned char *oids;
	const unsigned char *ooff;
	const unsigned char *loff;
	uint32_t nr_loff;
	const unsigned char *ridx;

	pthread_mutex_t lock;
	uint32_t *pseudo_to_pos;  /* computed when there is no RIDX */
	uint32_t *pos_to_pseudo;
};

static int parse_pack_names(struct midx *m, const unsigned char *pnam,
			    uint64_t size, const char *name, struct gp_error *err)
{
	uint64_t pos = 0;
	/* Each name takes at least two bytes: bound the count before allocating. */
	if (m->nr_packs > size / 2)
		return CORRUPT(err, "%s: %" PRIu32 " pack names cannot fit in a PNAM chunk of %" PRIu64
			       " bytes", name, m->nr_packs, size);
	m->pack_names = xcalloc(m->nr_packs ? m->nr_packs : 1, sizeof(char *));
	for (uint32_t id = 0; id < m->nr_packs; id++) {
		const unsigned char *nul;
		if (pos >= size)
			return CORRUPT(err, "%s: PNAM chunk ends after %" PRIu32 " of %" PRIu32 " pack names",
				       name, id, m->nr_packs);
		nul = memchr(pnam + pos, '\0', (size_t)(size - pos));
		if (!nul)
			return CORRUPT(err, "%s: PNAM chunk: pack name %" PRIu32 " is not terminated", name, id);
		m->pack_names[id] = (char *)(pnam + pos);
		if (!ends_with(m->pack_names[id], ".idx") || strchr(m->pack_names[id], '/'))
			return CORRUPT(err, "%s: PNAM chunk: pack name %" PRIu32 " ('%.64s') is not an .idx file name",
				       name, id, m->pack_names[id]);
		if (id && m->version == 1 && strcmp(m->pack_names[id - 1], m->pack_names[id]) >= 0)
			return CORRUPT(err, "%s: PNAM chunk: pack names out of order ('%s' before '%s')",
				       name, m->pack_names[id - 1], m->pack_names[id]);
		pos = (uint64_t)(nul - pnam) + 1;
	}
	/* Only NUL padding may follow. */
	for (; pos < size; pos++)
		if (pnam[pos])
			return CORRUPT(err, "%s: PNAM chunk has junk after the pack names", name);
	return 0;
}

static int need_chunk(struct midx *m, uint32_t id, uint64_t want_size,
		      const unsigned char **ptr, const char *name, struct gp_error *err)
{
	uint64_t size;
	char idbuf[5];
	if (!chunk_find(&m->chunks, id, ptr, &size))
		return CORRUPT(err, "%s: required %s chunk is missing", name, chunk_id_name(id, idbuf));
	if (size != want_size)
		return CORRUPT(err, "%s: %s chunk has %" PRIu64 " bytes, expected %" PRIu64,
			       name, chunk_id_name(id, idbuf), size, want_size);
	return 0;
}

static int parse_midx(struct midx *m, const char *name, struct gp_error *err)
{
	const unsigned char *map = m->map, *pnam, *chunk;
	size_t len = m->map_size;
	uint64_t size;
	unsigned nr_chunks;
	uint32_t prev = 0;
	int ret;

	if (len < MIDX_HEADER_SIZE + m->rawsz)
		return CORRUPT(err, "%s: file is too small (%zu bytes)", name, len);
	if (get_be32(map) != MIDX_SIGNATURE)
		return CORRUPT(err, "%s: at offset 0: bad signature", name);
	m->version = map[4];
	if (m->version != 1 && m->version != 2)
		return CORRUPT(err, "%s: at offset 4: unsupported version %u", name, map[4]);
	if (map[5] != (unsigned)m->algo)
		return CORRUPT(err, "%s: at offset 5: hash id %u does not match the repository's %s",
			       name, map[5], gp_hash_algos[m->algo].name);
	nr_chunks = map[6];
	if (map[7])
		return CORRUPT(err, "%s: at offset 7: %u base files (incremental MIDX) not supported",
			       name, map[7]);
	m->nr_packs = get_be32(map + 8);
	ret = chunk_table_parse(&m->chunks, map, len - m->rawsz, MIDX_HEADER_SIZE,
				nr_chunks, name, err);
	if (ret)
		return ret;

	if (!chunk_find(&m->chunks, MIDX_CHUNK_PNAM, &pnam, &size))
		return CORRUPT(err, "%s: required PNAM chunk is missing", name);
	ret = parse_pack_names(m, pnam, size, name, err);
	if (ret)
		return ret;

	ret = need_chunk(m, MIDX_CHUNK_OIDF, 256 * 4, &m->fanout, name, err);
	if (ret)
		return ret;
	for (unsigned bucket = 0; bucket < 256; bucket++) {
		uint32_t n = get_be32(m->fanout + 4 * bucket);
		if (n < prev)
			return CORRUPT(err, "%s: OIDF chunk: fanout entry %u (%" PRIu32
				       ") is smaller than entry %u (%" PRIu32 ")",
				       name, bucket, n, bucket - 1, prev);
		prev = n;
	}
	m->nr_objects = prev;
	ret = need_chunk(m, MIDX_CHUNK_OIDL, (uint64_t)m->nr_objects * m->rawsz, &m->oids, name, err);
	if (!ret)
		ret = need_chunk(m, MIDX_CHUNK_OOFF, (uint64_t)m->nr_objects * 8, &m->ooff, name, err);
	if (ret)
		return ret;
	if (chunk_find(&m->chunks, MIDX_CHUNK_LOFF, &chunk, &size)) {
		if (size % 8)
			return CORRUPT(err, "%s: LOFF chunk size %" PRIu64 " is not a multiple of 8", name, size);
		if (size / 8 > UINT32_MAX)
			return CORRUPT(err, "%s: LOFF chunk is too large", name);
		m->loff = chunk;
		m->nr_loff = (uint32_t)(size / 8);
	}
	if (chunk_find(&m->chunks, MIDX_CHUNK_RIDX, &chunk, &size)) {
		if (size != (uint64_t)m->nr_objects * 4)
			return CORRUPT(err, "%s: RIDX chunk has %" PRIu64 " bytes, expected %" PRIu64,
				       name, size, (uint64_t)m->nr_objects * 4);
		m->ridx = chunk;
	}

	for (uint32_t pos = 0; pos < m->nr_objects; pos++) {
		const unsigned char *cur = m->oids + (size_t)pos * m->rawsz;
		uint32_t lo = cur[0] ? get_be32(m->fanout + 4 * (cur[0] - 1)) : 0;
		uint32_t hi = get_be32(m->fanout + 4 * cur[0]);
		uint32_t pack = get_be32(m->ooff + 8 * (size_t)pos);
		uint32_t ofs = get_be32(m->ooff + 8 * (size_t)pos + 4);
		if (pos < lo || pos >= hi)
			return CORRUPT(err, "%s: OIDL chunk: object %" PRIu32 " is outside its fanout bucket",
				       name, pos);
		if (pos && memcmp(cur - m->rawsz, cur, m->rawsz) >= 0)
			return CORRUPT(err, "%s: OIDL chunk: object names out of order at %" PRIu32, name, pos);
		if (pack >= m->nr_packs)
			return CORRUPT(err, "%s: OOFF chunk: object %" PRIu32 " names pack %" PRIu32
				       " of %" PRIu32, name, pos, pack, m->nr_packs);
		if (m->loff && (ofs & MIDX_LARGE_OFFSET_FLAG) &&
		    (ofs & ~MIDX_LARGE_OFFSET_FLAG) >= m->nr_loff)
			return CORRUPT(err, "%s: OOFF chunk: object %" PRIu32 " refers to large offset %" PRIu32
				       " of %" PRIu32, name, pos, ofs & ~MIDX_LARGE_OFFSET_FLAG, m->nr_loff);
		if (m->ridx && get_be32(m->ridx + 4 * (size_t)pos) >= m->nr_objects)
			return CORRUPT(err, "%s: RIDX chunk: entry %" PRIu32 " is out of range", name, pos);
	}
	return 0;
}

static struct midx *midx_alloc(int algo)
{
	struct midx *m = xcalloc(1, sizeof(*m));
	m->algo = algo;
	m->rawsz = gp_hash_algos[algo].rawsz;
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

int midx_parse_buf(struct midx **out, const unsigned char *buf, size_t len,
		   const char *name, int algo, struct gp_error *err)
{
	struct midx *m = midx_alloc(algo);
	int ret;
	m->map = buf;
	m->map_size = len;
	m->path = xstrdup(name);
	ret = parse_midx(m, name, err);
	if (ret) {
		midx_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

int midx_open(struct midx **out, const char *pack_dir, int algo,
	      struct gp_error *err)
{
	char *path = xstrfmt("%s/multi-pack-index", pack_dir);
	int ret = midx_open_path(out, path, algo, err);
	free(path);
	return ret;
}

int midx_open_path(struct midx **out, const char *path, int algo,
		   struct gp_error *err)
{
	struct midx *m = midx_alloc(algo);
	struct stat st;
	int fd, ret;

	m->path = xstrdup(path);
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ENOENT
			? gp_error_set(err, GP_ENOTFOUND, "%s: no such file", m->path)
			: gp_error_errno(err, "%s: cannot open", m->path);
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		ret = gp_error_errno(err, "%s: cannot stat", m->path);
		close(fd);
		goto fail;
	}
	m->map_size = (size_t)st.st_size;
	if (m->map_size) {
		void *map = mmap(NULL, m->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			ret = gp_error_errno(err, "%s: cannot mmap", m->path);
			close(fd);
			goto fail;
		}
		m->map = map;
		m->mapped = true;
	}
	close(fd);
	ret = parse_midx(m, base_name(m->path), err);
	if (ret)
		goto fail;
	*out = m;
	return 0;
fail:
	midx_free(m);
	return ret;
}

void midx_free(struct midx *m)
{
	if (!m)
		return;
	if (m->mapped)
		munmap((void *)m->map, m->map_size);
	chunk_table_release(&m->chunks);
	free(m->pack_names);
	free(m->pseudo_to_pos);
	free(m->pos_to_pseudo);
	pthread_mutex_destroy(&m->lock);
	free(m->path);
	free(m);
}

const char *midx_path(const struct midx *m)
{
	return m->path;
}

uint32_t midx_nr_objects(const struct midx *m)
{
	return m->nr_objects;
}

uint32_t midx_nr_packs(const struct midx *m)
{
	return m->nr_packs;
}

const char *midx_pack_name(const struct midx *m, uint32_t pack_int_id)
{
	return m->pack_names[pack_int_id];
}

bool midx_find_pack(const struct midx *m, const char *name, uint32_t *pack_int_id)
{
	size_t len = strlen(name);
	/* Callers may name the pack by its .pack or its .idx. */
	if (ends_with(name, ".pack"))
		len -= 5;
	else if (ends_with(name, ".idx"))
		len -= 4;
	for (uint32_t id = 0; id < m->nr_packs; id++) {
		const char *have = m->pack_names[id];
		if (!strncmp(have, name, len) && !strcmp(have + len, ".idx")) {
			*pack_int_id = id;
			return true;
		}
	}
	return false;
}

const unsigned char *midx_checksum(const struct midx *m)
{
	return m->map + m->map_size - m->rawsz;
}

uint32_t midx_fanout(const struct midx *m, unsigned first_byte)
{
	return get_be32(m->fanout + 4 * (size_t)(first_byte & 0xff));
}

const unsigned char *midx_nth_oid_raw(const struct midx *m, uint32_t midx_pos)
{
	return m->oids + (size_t)midx_pos * m->rawsz;
}

void midx_nth_oid(const struct midx *m, uint32_t midx_pos, struct object_id *oid)
{
	oid_from_raw(oid, midx_nth_oid_raw(m, midx_pos), m->algo);
}

uint32_t midx_nth_pack(const struct midx *m, uint32_t midx_pos)
{
	return get_be32(m->ooff + 8 * (size_t)midx_pos);
}

uint64_t midx_nth_offset(const struct midx *m, uint32_t midx_pos)
{
	uint32_t ofs = get_be32(m->ooff + 8 * (size_t)midx_pos + 4);
	if (m->loff && (ofs & MIDX_LARGE_OFFSET_FLAG))
		return get_be64(m->loff + 8 * (size_t)(ofs & ~MIDX_LARGE_OFFSET_FLAG));
	return ofs;
}

bool midx_find_oid(const struct midx *m, const struct object_id *oid,
		   uint32_t *midx_pos)
{
	return oid_table_find(m->fanout, m->oids, m->rawsz, m->rawsz, oid->hash, midx_pos);
}

bool midx_has_ridx(const struct midx *m)
{
	return m->ridx != NULL;
}

/*
 * Without RIDX: sort by (pack id, offset). The key packs the pack id
 * above a 40-bit offset, which covers every pack a MIDX can name.
 */
static void compute_pseudo_order(struct midx *m)
{
	uint64_t *keys = xmalloc(sizeof(*keys) * (m->nr_objects ? m->nr_objects : 1));
	for (uint32_t pos = 0; pos < m->nr_objects; pos++)
		keys[pos] = (uint64_t)midx_nth_pack(m, pos) << 40 |
			    (midx_nth_offset(m, pos) & ((1ull << 40) - 1));
	m->pseudo_to_pos = sort_positions_by_u64(keys, m->nr_objects);
	free(keys);
}

int midx_load_pseudo_order(struct midx *m, struct gp_error *err)
{
	int ret = 0;
	pthread_mutex_lock(&m->lock);
	if (!m->pos_to_pseudo) {
		uint32_t *inverse = xmalloc(sizeof(*inverse) * (m->nr_objects ? m->nr_objects : 1));
		if (!m->ridx)
			compute_pseudo_order(m);
		memset(inverse, 0xff, sizeof(*inverse) * m->nr_objects);
		for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
			uint32_t pos = midx_pseudo_to_pos(m, pseudo);
			/* Entries are in range (checked at open); each must appear once. */
			if (inverse[pos] != UINT32_MAX) {
				ret = CORRUPT(err, "%s: RIDX chunk lists object %" PRIu32 " twice",
					      m->path, pos);
				free(inverse);
				goto out;
			}
			inverse[pos] = pseudo;
		}
		m->pos_to_pseudo = inverse;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return ret;
}

uint32_t midx_pseudo_to_pos(const struct midx *m, uint32_t pseudo_pos)
{
	if (m->ridx)
		return get_be32(m->ridx + 4 * (size_t)pseudo_pos);
	return m->pseudo_to_pos[pseudo_pos];
}

uint32_t midx_pos_to_pseudo(const struct midx *m, uint32_t midx_pos)
{
	return m->pos_to_pseudo[midx_pos];
}

int midx_preferred_pack(struct midx *m, uint32_t *pack_int_id, struct gp_error *err)
{
	if (!m->ridx || !m->nr_objects)
		return gp_error_set(err, GP_ENOTFOUND, "%s has no preferred pack", m->path);
	*pack_int_id = midx_nth_pack(m, get_be32(m->ridx));
	return 0;
}

GP_PRINTF(3, 4) static void problem(size_t *nr_problems, struct gp_error *err,
				    const char *fmt, ...)
{
	if (!(*nr_problems)++) {
		struct strbuf sb = STRBUF_INIT;
		va_list ap;
		va_start(ap, fmt);
		strbuf_vaddf(&sb, fmt, ap);
		va_end(ap);
		gp_error_set(err, GP_ECORRUPT, "%s", sb.buf);
		strbuf_release(&sb);
	}
}

int midx_verify(struct midx *m, const char *pack_dir, struct progress *progress,
		size_t *nr_problems, struct gp_error *err)
{
	unsigned char hash[GP_MAX_RAWSZ];
	struct packed_git **packs = xcalloc(m->nr_packs ? m->nr_packs : 1, sizeof(*packs));
	const char *name = base_name(m->path);
	uint32_t preferred = UINT32_MAX;

	*nr_problems = 0;
	hash_buf_checksum(m->algo, m->map, m->map_size - m->rawsz, hash);
	if (memcmp(hash, midx_checksum(m), m->rawsz))
		problem(nr_problems, err, "%s: incorrect checksum", name);

	for (uint32_t id = 0; id < m->nr_packs; id++) {
		struct gp_error perr = GP_ERROR_INIT;
		char *idx = xstrfmt("%s/%s", pack_dir, m->pack_names[id]);
		if (pack_open_idx(&packs[id], idx, m->algo, &perr) ||
		    pack_open_pack(packs[id], &perr))
			problem(nr_problems, err, "%s: pack %" PRIu32 " (%s): %s", name, id,
				m->pack_names[id], gp_error_msg(&perr));
		gp_error_clear(&perr);
		free(idx);
	}
	for (uint32_t pos = 0; pos < m->nr_objects; pos++) {
		struct packed_git *p = packs[midx_nth_pack(m, pos)];
		struct object_id oid;
		uint32_t idx_pos;
		char hex[GP_MAX_HEXSZ + 1];
		progress_update(progress, pos + 1);
		if (!p)
			continue;
		midx_nth_oid(m, pos, &oid);
		if (!pack_find_oid(p, &oid, &idx_pos))
			problem(nr_problems, err, "%s: object %s is not in its pack %s", name,
				oid_to_hex_r(hex, &oid), m->pack_names[midx_nth_pack(m, pos)]);
		else if (pack_nth_offset(p, idx_pos) != midx_nth_offset(m, pos))
			problem(nr_problems, err, "%s: object %s: offset %" PRIu64
				" does not match its pack's %" PRIu64, name, oid_to_hex_r(hex, &oid),
				midx_nth_offset(m, pos), pack_nth_offset(p, idx_pos));
	}
	/* RIDX: preferred pack first, then ascending pack id, then offset. */
	if (m->ridx && m->nr_objects) {
		uint8_t *seen = xcalloc(m->nr_objects, 1);
		preferred = midx_nth_pack(m, get_be32(m->ridx));
		for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
			uint32_t pos = get_be32(m->ridx + 4 * (size_t)pseudo);
			if (seen[pos]++) {
				problem(nr_problems, err, "%s: RIDX chunk lists object %" PRIu32 " twice", name, pos);
				continue;
			}
			if (pseudo) {
				uint32_t prev = get_be32(m->ridx + 4 * (size_t)(pseudo - 1));
				uint32_t pa = midx_nth_pack(m, prev), pb = midx_nth_pack(m, pos);
				uint64_t ka = pa == preferred ? 0 : (uint64_t)pa + 1;
				uint64_t kb = pb == preferred ? 0 : (uint64_t)pb + 1;
				if (ka > kb || (ka == kb && midx_nth_offset(m, prev) >= midx_nth_offset(m, pos)))
					problem(nr_problems, err, "%s: RIDX chunk: entry %" PRIu32
						" is out of pseudo-pack order", name, pseudo);
			}
		}
		free(seen);
	}
	for (uint32_t id = 0; id < m->nr_packs; id++)
		pack_free(packs[id]);
	free(packs);
	return *nr_problems ? GP_ECORRUPT : 0;
}
