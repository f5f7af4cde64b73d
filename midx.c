/*
 * midx.c: reading and verifying the multi-pack-index, lone or as an
 * incremental chain of layers.
 *
 * Layout of a MIDX file, lone or one layer (gitformat-pack; all integers
 * big-endian):
 *
 *   offset   size              contents
 *   0        4                 "MIDX" (MIDX_SIGNATURE)
 *   4        1                 version (1, or 2: PNAM in any order)
 *   5        1                 hash id: 1 = SHA-1, 2 = SHA-256
 *   6        1                 number of chunks C
 *   7        1                 number of base MIDX files (0; a layer
 *                              learns its base from the chain file)
 *   8        4                 number of packs P
 *   12       (C + 1) * 12      chunk table (chunk-format.h)
 *   ...                        chunks:
 *     PNAM   P NUL-terminated idx names, padded to 4 bytes
 *     BTMP   P * 8             first pseudo position, object count
 *                              (optional)
 *     OIDF   256 * 4           fanout
 *     OIDL   N * rawsz         object names, sorted
 *     OOFF   N * 8             pack id, offset (MSB: LOFF index when
 *                              LOFF exists)
 *     LOFF   L * 8             64-bit offsets (optional)
 *     RIDX   N * 4             midx positions in pseudo-pack order
 *                              (optional)
 *   end - rawsz  rawsz         checksum of all the above
 *
 * Chain (technical/multi-pack-index, "Incremental multi-pack indexes"):
 * multi-pack-index.d/multi-pack-index-chain lists the layers' checksums
 * in hex, base first, one a line; layer H is
 * multi-pack-index.d/multi-pack-index-H.midx. Pack ids and positions
 * in a layer are offset by the packs and objects of the layers below.
 *
 * A MIDX's pseudo-pack order may also sit in a .rev file beside it
 * (multi-pack-index-<checksum>.rev, the .rev layout of pack-revindex.h
 * with the MIDX checksum where a pack's would be), as git writes it
 * under GIT_TEST_MIDX_WRITE_REV and older gits did always.
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
	uint32_t nr_packs;      /* of this layer */
	uint32_t nr_objects;    /* of this layer */
	struct chunk_table chunks;

	/* the chain below this layer (NULL for a lone MIDX and the base) */
	struct midx *base;
	uint32_t nr_packs_in_base;
	uint32_t nr_objects_in_base;
	uint32_t layer;         /* 0 for the base or a lone MIDX */
	bool in_chain;
	bool base_borrowed;     /* midx_open_layer(): base is the caller's */

	char **pack_names;      /* nr_packs, pointing into PNAM */
	const unsigned char *fanout;
	const unsigned char *oids;
	const unsigned char *ooff;
	const unsigned char *loff;
	uint32_t nr_loff;
	const unsigned char *ridx;  /* NULL when absent or hidden */
	const unsigned char *btmp;  /* NULL when absent or hidden */
	const unsigned char *btmp_chunk; /* even when hidden */

	/*
	 * MIDX_OPEN_LAZY: the names of a fanout bucket, with their pack ids
	 * and large offsets, are checked at the bucket's first lookup; the
	 * first damage found (under lock) makes every later lookup fail.
	 */
	bool lazy;
	uint64_t bucket_checked[4];
	bool damaged;
	char *damage;

	pthread_mutex_t lock;
	/* the pseudo-pack order when not from RIDX: the .rev or computed */
	const unsigned char *rev_map;  /* .rev file image, entries at RIDX_HEADER_SIZE */
	size_t rev_size;
	uint32_t *pseudo_to_pos;       /* computed (local positions) */
	uint32_t *pos_to_pseudo;       /* local inverse */
	/*
	 * MIDX_ORDER_NO_INVERSE: the RIDX (entries checked in range) is
	 * searched for each position instead; the preferred pack (local id)
	 * ranks first in the base layer.
	 */
	bool ridx_searchable;
	bool has_preferred;
	uint32_t preferred;
};

static bool env_false(const char *name)
{
	const char *v = getenv(name);
	return v && (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
		     !strcasecmp(v, "off"));
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_pack_names(struct midx *m, const unsigned char *pnam,
			    uint64_t size, uint64_t chunk_ofs, const char *name,
			    struct gp_error *err)
{
	uint64_t pos = 0;
	/* Each name takes at least two bytes: bound the count before allocating. */
	if (m->nr_packs > size / 2)
		return CORRUPT(err, "multi-pack-index pack-name chunk is too short (%s: %" PRIu32
			       " pack names cannot fit in the PNAM chunk of %" PRIu64 " bytes at offset %" PRIu64 ")",
			       name, m->nr_packs, size, chunk_ofs);
	m->pack_names = xcalloc(m->nr_packs ? m->nr_packs : 1, sizeof(char *));
	for (uint32_t id = 0; id < m->nr_packs; id++) {
		const unsigned char *nul;
		if (pos >= size)
			return CORRUPT(err, "multi-pack-index pack-name chunk is too short (%s: the PNAM chunk ends after %"
				       PRIu32 " of %" PRIu32 " pack names, offset %" PRIu64 ")",
				       name, id, m->nr_packs, chunk_ofs + pos);
		nul = memchr(pnam + pos, '\0', (size_t)(size - pos));
		if (!nul)
			return CORRUPT(err, "multi-pack-index pack-name chunk is too short (%s: PNAM chunk: pack name %"
				       PRIu32 " at offset %" PRIu64 " is not terminated)",
				       name, id, chunk_ofs + pos);
		m->pack_names[id] = (char *)(pnam + pos);
		if (!ends_with(m->pack_names[id], ".idx") || strchr(m->pack_names[id], '/'))
			return CORRUPT(err, "%s: PNAM chunk: pack name %" PRIu32 " ('%.64s', offset %"
				       PRIu64 ") is not an .idx file name",
				       name, id, m->pack_names[id], chunk_ofs + pos);
		if (id && m->version == 1 && strcmp(m->pack_names[id - 1], m->pack_names[id]) >= 0)
			return CORRUPT(err, "multi-pack-index pack names out of order: '%s' before '%s' (%s: PNAM chunk, offset %"
				       PRIu64 ")", m->pack_names[id - 1], m->pack_names[id], name,
				       chunk_ofs + pos);
		pos = (uint64_t)(nul - pnam) + 1;
	}
	/* Version 2 may list packs in any order, but each only once. */
	if (m->version != 1 && m->nr_packs > 1) {
		char **sorted = xmalloc(sizeof(*sorted) * m->nr_packs);
		memcpy(sorted, m->pack_names, sizeof(*sorted) * m->nr_packs);
		qsort(sorted, m->nr_packs, sizeof(*sorted), cmp_names);
		for (uint32_t i = 1; i < m->nr_packs; i++)
			if (!strcmp(sorted[i - 1], sorted[i])) {
				int ret = CORRUPT(err, "%s: PNAM chunk lists pack '%s' twice", name,
						  sorted[i]);
				free(sorted);
				return ret;
			}
		free(sorted);
	}
	/* Only NUL padding may follow. */
	for (; pos < size; pos++)
		if (pnam[pos])
			return CORRUPT(err, "%s: PNAM chunk has junk after the pack names at offset %" PRIu64,
				       name, chunk_ofs + pos);
	return 0;
}

static uint64_t chunk_offset(const struct midx *m, const unsigned char *ptr)
{
	return (uint64_t)(ptr - m->map);
}

/* git's words for the required chunks, so that its tests find them. */
static const char *chunk_long_name(uint32_t id)
{
	switch (id) {
	case MIDX_CHUNK_PNAM: return "pack-name";
	case MIDX_CHUNK_OIDF: return "OID fanout";
	case MIDX_CHUNK_OIDL: return "OID lookup";
	case MIDX_CHUNK_OOFF: return "object offsets";
	default: return "unknown";
	}
}

static int need_chunk(struct midx *m, uint32_t id, uint64_t want_size,
		      const unsigned char **ptr, const char *name, struct gp_error *err)
{
	uint64_t size;
	char idbuf[5];
	if (!chunk_find(&m->chunks, id, ptr, &size))
		return CORRUPT(err, "multi-pack-index required %s chunk missing or corrupted (%s: no %s chunk)",
			       chunk_long_name(id), name, chunk_id_name(id, idbuf));
	if (size != want_size)
		return CORRUPT(err, "multi-pack-index required %s chunk missing or corrupted (%s: %s chunk at offset %"
			       PRIu64 " has %" PRIu64 " bytes, expected %" PRIu64 ")",
			       chunk_long_name(id), name, chunk_id_name(id, idbuf),
			       chunk_offset(m, *ptr), size, want_size);
	return 0;
}

/*
 * The entries [first, end) of one layer: names sorted and each in its
 * fanout bucket, pack ids and large-offset references in range.
 */
static int check_entries(const struct midx *m, uint32_t first, uint32_t end, const char *name,
			 struct gp_error *err)
{
	for (uint32_t pos = first; pos < end; pos++) {
		const unsigned char *cur = m->oids + (size_t)pos * m->rawsz;
		uint32_t lo = cur[0] ? get_be32(m->fanout + 4 * (cur[0] - 1)) : 0;
		uint32_t hi = get_be32(m->fanout + 4 * cur[0]);
		uint32_t pack = get_be32(m->ooff + 8 * (size_t)pos);
		uint32_t ofs = get_be32(m->ooff + 8 * (size_t)pos + 4);
		if (pos > first && memcmp(cur - m->rawsz, cur, m->rawsz) >= 0)
			return CORRUPT(err, "oid lookup out of order: oid[%" PRIu32 "] >= oid[%" PRIu32
				       "] (%s, offset %" PRIu64 ")", pos - 1, pos, name,
				       chunk_offset(m, cur));
		if (pos < lo || pos >= hi)
			return CORRUPT(err, "oid fanout out of order: oid[%" PRIu32 "] is outside its fanout"
				       " bucket %u (%s, offset %" PRIu64 ")", pos, cur[0], name,
				       chunk_offset(m, cur));
		if (pack >= m->nr_packs)
			return CORRUPT(err, "bad pack-int-id: %" PRIu32 " (%" PRIu32 " total packs) for oid[%"
				       PRIu32 "] (%s, offset %" PRIu64 ")", pack, m->nr_packs, pos, name,
				       chunk_offset(m, m->ooff) + 8 * (uint64_t)pos);
		if (m->loff && (ofs & MIDX_LARGE_OFFSET_FLAG) &&
		    (ofs & ~MIDX_LARGE_OFFSET_FLAG) >= m->nr_loff)
			return CORRUPT(err, "multi-pack-index large offset out of bounds: oid[%" PRIu32
				       "] refers to large offset %" PRIu32 " of %" PRIu32 " (%s, offset %" PRIu64 ")",
				       pos, ofs & ~MIDX_LARGE_OFFSET_FLAG, m->nr_loff, name,
				       chunk_offset(m, m->ooff) + 8 * (uint64_t)pos + 4);
	}
	return 0;
}

static int parse_midx(struct midx *m, const char *name, bool lazy, struct gp_error *err)
{
	const unsigned char *map = m->map, *pnam, *chunk;
	size_t len = m->map_size;
	uint64_t size;
	unsigned nr_chunks;
	uint32_t prev = 0;
	int ret;

	if (len < MIDX_HEADER_SIZE + m->rawsz)
		return CORRUPT(err, "multi-pack-index file %s is too small (%zu bytes)", name, len);
	if (get_be32(map) != MIDX_SIGNATURE)
		return CORRUPT(err, "multi-pack-index signature 0x%08" PRIx32 " does not match signature 0x%08x"
			       " (%s, offset 0)", get_be32(map), MIDX_SIGNATURE, name);
	m->version = map[4];
	if (m->version != MIDX_VERSION && m->version != MIDX_VERSION_2)
		return CORRUPT(err, "multi-pack-index version %u not recognized (%s, offset 4)", map[4], name);
	if (map[5] != (unsigned)m->algo)
		return CORRUPT(err, "multi-pack-index hash version %u does not match version %u (%s, offset 5)",
			       map[5], (unsigned)m->algo, name);
	nr_chunks = map[6];
	if (map[7])
		return CORRUPT(err, "%s: at offset 7: %u base files in the header (git writes 0)",
			       name, map[7]);
	m->nr_packs = get_be32(map + 8);
	ret = chunk_table_parse(&m->chunks, map, len - m->rawsz, MIDX_HEADER_SIZE,
				nr_chunks, name, err);
	if (ret)
		return ret;

	if (!chunk_find(&m->chunks, MIDX_CHUNK_PNAM, &pnam, &size))
		return CORRUPT(err, "multi-pack-index required pack-name chunk missing or corrupted (%s: no PNAM chunk)",
			       name);
	ret = parse_pack_names(m, pnam, size, chunk_offset(m, pnam), name, err);
	if (ret)
		return ret;

	ret = need_chunk(m, MIDX_CHUNK_OIDF, 256 * 4, &m->fanout, name, err);
	if (ret)
		return ret;
	for (unsigned bucket = 0; bucket < 256; bucket++) {
		uint32_t n = get_be32(m->fanout + 4 * bucket);
		if (n < prev)
			return CORRUPT(err, "oid fanout out of order: fanout[%u] = %" PRIx32 " > %" PRIx32
				       " = fanout[%u] (%s, offset %" PRIu64 ")",
				       bucket - 1, prev, n, bucket, name,
				       chunk_offset(m, m->fanout) + 4 * bucket);
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
			return CORRUPT(err, "%s: LOFF chunk at offset %" PRIu64 ": size %" PRIu64
				       " is not a multiple of 8", name, chunk_offset(m, chunk), size);
		if (size / 8 > UINT32_MAX)
			return CORRUPT(err, "%s: LOFF chunk is too large", name);
		m->loff = chunk;
		m->nr_loff = (uint32_t)(size / 8);
	}
	if (chunk_find(&m->chunks, MIDX_CHUNK_RIDX, &chunk, &size)) {
		if (size != (uint64_t)m->nr_objects * 4)
			return CORRUPT(err, "multi-pack-index reverse-index chunk is the wrong size (%s: %"
				       PRIu64 " bytes at offset %" PRIu64 ", expected %" PRIu64 ")",
				       name, size, chunk_offset(m, chunk), (uint64_t)m->nr_objects * 4);
		if (!env_false("GIT_TEST_MIDX_READ_RIDX"))
			m->ridx = chunk;
	}
	if (chunk_find(&m->chunks, MIDX_CHUNK_BTMP, &chunk, &size)) {
		if (size != (uint64_t)m->nr_packs * 8)
			return CORRUPT(err, "%s: BTMP chunk at offset %" PRIu64 " has %" PRIu64
				       " bytes, expected %" PRIu64, name, chunk_offset(m, chunk), size,
				       (uint64_t)m->nr_packs * 8);
		/* Its ranges are checked with the RIDX, once the base is known. */
		m->btmp_chunk = chunk;
		if (!env_false("GIT_TEST_MIDX_READ_BTMP"))
			m->btmp = chunk;
	}

	return lazy ? 0 : check_entries(m, 0, m->nr_objects, name, err);
}

/*
 * RIDX entries are midx positions over the chain (git adds the objects
 * of the layers below), so they are checked once the layer's base is
 * known.
 */
static int check_ridx(struct midx *m, struct gp_error *err)
{
	const unsigned char *ridx = m->ridx;
	uint64_t lo = m->nr_objects_in_base, hi = lo + m->nr_objects;
	/* BTMP: bit positions over the chain too; an empty pack's range is 0+0. */
	for (uint32_t id = 0; m->btmp_chunk && id < m->nr_packs; id++) {
		uint64_t first = get_be32(m->btmp_chunk + 8 * (size_t)id);
		uint64_t nr = get_be32(m->btmp_chunk + 8 * (size_t)id + 4);
		if (nr && (first < lo || first + nr > hi))
			return CORRUPT(err, "%s: BTMP chunk: pack %" PRIu32 " (offset %" PRIu64
				       ") covers bits %" PRIu64 "..%" PRIu64 ", outside [%" PRIu64
				       ", %" PRIu64 ")", base_name(m->path), id,
				       chunk_offset(m, m->btmp_chunk) + 8 * (uint64_t)id, first,
				       first + nr, lo, hi);
	}
	/* absent, or hidden and never read; or checked where used (MIDX_OPEN_LAZY) */
	if (!ridx || m->lazy)
		return 0;
	for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
		uint32_t pos = get_be32(ridx + 4 * (size_t)pseudo);
		if (pos < lo || pos >= hi)
			return CORRUPT(err, "invalid MIDX object position: RIDX entry %" PRIu32 " is %"
				       PRIu32 ", outside [%" PRIu64 ", %" PRIu64 ") (%s, offset %" PRIu64 ")",
				       pseudo, pos, lo, hi, base_name(m->path),
				       chunk_offset(m, ridx) + 4 * (uint64_t)pseudo);
	}
	return 0;
}

#define FREE_AND_NULL_MIDX(m) do { midx_free(m); (m) = NULL; } while (0)

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
	ret = parse_midx(m, name, false, err);
	if (!ret)
		ret = check_ridx(m, err);
	if (ret) {
		midx_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

/* mmap a whole file; GP_ENOTFOUND when it does not exist. */
static int map_file(const char *path, const unsigned char **map, size_t *size,
		    struct gp_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*map = NULL;
	*size = 0;
	if (fd < 0)
		return errno == ENOENT
			? gp_error_set(err, GP_ENOTFOUND, "%s: no such file", path)
			: gp_error_errno(err, "%s: cannot open", path);
	if (fstat(fd, &st) < 0) {
		int ret = gp_error_errno(err, "%s: cannot stat", path);
		close(fd);
		return ret;
	}
	*size = (size_t)st.st_size;
	if (*size) {
		void *p = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int ret = gp_error_errno(err, "%s: cannot mmap", path);
			close(fd);
			*size = 0;
			return ret;
		}
		*map = p;
	}
	close(fd);
	return 0;
}

/* Open and parse one file; its RIDX is checked by the caller. */
static int open_one(struct midx **out, const char *path, int algo, unsigned flags,
		    struct gp_error *err)
{
	struct midx *m = midx_alloc(algo);
	int ret;

	m->lazy = flags & MIDX_OPEN_LAZY;
	m->path = xstrdup(path);
	ret = map_file(m->path, &m->map, &m->map_size, err);
	if (ret)
		goto fail;
	m->mapped = m->map_size != 0;
	ret = parse_midx(m, base_name(m->path), m->lazy, err);
	if (ret)
		goto fail;
	*out = m;
	return 0;
fail:
	midx_free(m);
	return ret;
}

static int open_path(struct midx **out, const char *path, int algo, unsigned flags,
		     struct gp_error *err)
{
	int ret = open_one(out, path, algo, flags, err);
	if (!ret && (ret = check_ridx(*out, err)))
		FREE_AND_NULL_MIDX(*out);
	return ret;
}

int midx_open_path(struct midx **out, const char *path, int algo,
		   struct gp_error *err)
{
	int ret = open_one(out, path, algo, 0, err);
	if (!ret && (ret = check_ridx(*out, err)))
		FREE_AND_NULL_MIDX(*out);
	return ret;
}

int midx_open_layer(struct midx **out, const char *path, struct midx *base, int algo,
		    struct gp_error *err)
{
	struct midx *m;
	int ret = open_one(&m, path, algo, 0, err);
	if (ret)
		return ret;
	if (base && (ret = midx_stack(m, base, err))) {
		midx_free(m);
		return ret;
	}
	m->base_borrowed = true;
	if ((ret = check_ridx(m, err))) {
		midx_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

int midx_stack(struct midx *layer, struct midx *base, struct gp_error *err)
{
	uint64_t packs = (uint64_t)base->nr_packs_in_base + base->nr_packs;
	uint64_t objects = (uint64_t)base->nr_objects_in_base + base->nr_objects;
	if (packs + layer->nr_packs > UINT32_MAX)
		return CORRUPT(err, "pack count in base MIDX too high: %" PRIu64 " (%s)", packs,
			       layer->path);
	if (objects + layer->nr_objects > UINT32_MAX)
		return CORRUPT(err, "object count in base MIDX too high: %" PRIu64 " (%s)", objects,
			       layer->path);
	layer->base = base;
	layer->nr_packs_in_base = (uint32_t)packs;
	layer->nr_objects_in_base = (uint32_t)objects;
	layer->layer = base->layer + 1;
	layer->in_chain = base->in_chain = true;
	return 0;
}

int midx_chain_parse(const char *buf, size_t len, int algo, const char *name,
		     unsigned char **hashes, uint32_t *nr, struct gp_error *err)
{
	size_t hexsz = gp_hash_algos[algo].hexsz, rawsz = gp_hash_algos[algo].rawsz;
	size_t pos = 0, alloc = 0;
	uint32_t n = 0;
	unsigned char *out = NULL;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		if (line_len != hexsz) {
			free(out);
			return CORRUPT(err, "invalid multi-pack-index chain: line %" PRIu32
				       " (offset %zu) is %zu characters, not a %zu-digit hash (%s)",
				       n + 1, pos, line_len, hexsz, name);
		}
		memcpy(hex, buf + pos, hexsz);
		hex[hexsz] = '\0';
		if (parse_oid_hex_exact(hex, algo, &oid)) {
			free(out);
			return CORRUPT(err, "invalid multi-pack-index chain: line %" PRIu32 " (offset %zu)"
				       " '%s' not a hash (%s)", n + 1, pos, hex, name);
		}
		if (!nl) {
			free(out);
			return CORRUPT(err, "invalid multi-pack-index chain: line %" PRIu32 " (offset %zu)"
				       " is not terminated (%s)", n + 1, pos, name);
		}
		if (n == UINT32_MAX / 2) {
			free(out);
			return CORRUPT(err, "invalid multi-pack-index chain: too many layers (%s)", name);
		}
		ALLOC_GROW(out, ((size_t)n + 1) * rawsz, alloc);
		memcpy(out + (size_t)n * rawsz, oid.hash, rawsz);
		n++;
		pos += line_len + 1;
	}
	*hashes = out;
	*nr = n;
	return 0;
}

static int open_chain(struct midx **out, const char *pack_dir, int algo, unsigned flags,
		      struct gp_error *err);

int midx_open_chain(struct midx **out, const char *pack_dir, int algo,
		    struct gp_error *err)
{
	return open_chain(out, pack_dir, algo, 0, err);
}

static int open_chain(struct midx **out, const char *pack_dir, int algo, unsigned flags,
		      struct gp_error *err)
{
	char *chain_path = xstrfmt("%s/" MIDX_CHAIN_FILE, pack_dir);
	const unsigned char *map;
	size_t size, rawsz = gp_hash_algos[algo].rawsz;
	unsigned char *hashes = NULL;
	uint32_t nr = 0;
	struct midx *top = NULL;
	int ret = map_file(chain_path, &map, &size, err);

	if (ret)
		goto out;
	ret = midx_chain_parse((const char *)map, size, algo, chain_path, &hashes, &nr, err);
	if (map)
		munmap((void *)map, size);
	if (ret)
		goto out;
	if (!nr) {
		/* As git: an empty chain file is no chain. */
		ret = gp_error_set(err, GP_ENOTFOUND, "%s is empty", chain_path);
		goto out;
	}
	for (uint32_t i = 0; i < nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		char *path = xstrfmt("%s/" MIDX_CHAIN_DIR "/multi-pack-index-%s.midx", pack_dir,
				     hash_to_hex_r(hex, hashes + (size_t)i * rawsz, rawsz));
		struct midx *layer;
		ret = open_one(&layer, path, algo, flags, err);
		free(path);
		if (ret) {
			if (ret == GP_ENOTFOUND)
				ret = CORRUPT(err, "unable to find all multi-pack index files: %s names"
					      " layer %" PRIu32 " (%s), which is missing", chain_path,
					      i + 1, hex);
			goto out;
		}
		if (memcmp(midx_checksum(layer), hashes + (size_t)i * rawsz, rawsz)) {
			ret = CORRUPT(err, "%s: layer %" PRIu32 " is named for checksum %s but its"
				      " trailer differs", layer->path, i + 1, hex);
			midx_free(layer);
			goto out;
		}
		layer->in_chain = true;
		if (top && (ret = midx_stack(layer, top, err))) {
			midx_free(layer);
			goto out;
		}
		if ((ret = check_ridx(layer, err))) {
			layer->base = NULL;
			midx_free(layer);
			goto out;
		}
		top = layer;
	}
	*out = top;
	top = NULL;
out:
	midx_free(top);
	free(hashes);
	free(chain_path);
	return ret;
}

int midx_open(struct midx **out, const char *pack_dir, int algo,
	      struct gp_error *err)
{
	return midx_open_flags(out, pack_dir, algo, 0, err);
}

int midx_open_flags(struct midx **out, const char *pack_dir, int algo, unsigned flags,
		    struct gp_error *err)
{
	char *path = xstrfmt("%s/" MIDX_FILE, pack_dir);
	int ret = open_path(out, path, algo, flags, err);
	free(path);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		ret = open_chain(out, pack_dir, algo, flags, err);
	}
	return ret;
}

void midx_free(struct midx *m)
{
	while (m) {
		struct midx *base = m->base_borrowed ? NULL : m->base;
		if (m->mapped)
			munmap((void *)m->map, m->map_size);
		if (m->rev_map)
			munmap((void *)m->rev_map, m->rev_size);
		chunk_table_release(&m->chunks);
		free(m->damage);
		free(m->pack_names);
		free(m->pseudo_to_pos);
		free(m->pos_to_pseudo);
		pthread_mutex_destroy(&m->lock);
		free(m->path);
		free(m);
		m = base;
	}
}

/* The layer holding midx_pos (over the whole chain). */
static inline const struct midx *layer_of_pos(const struct midx *m, uint32_t midx_pos)
{
	while (midx_pos < m->nr_objects_in_base)
		m = m->base;
	return m;
}

static inline const struct midx *layer_of_pack(const struct midx *m, uint32_t pack_int_id)
{
	while (pack_int_id < m->nr_packs_in_base)
		m = m->base;
	return m;
}

const char *midx_path(const struct midx *m)
{
	return m->path;
}

unsigned midx_version(const struct midx *m)
{
	return m->version;
}

uint32_t midx_nr_objects(const struct midx *m)
{
	return m->nr_objects_in_base + m->nr_objects;
}

uint32_t midx_nr_packs(const struct midx *m)
{
	return m->nr_packs_in_base + m->nr_packs;
}

bool midx_is_chain(const struct midx *m)
{
	return m->in_chain;
}

uint32_t midx_nr_layers(const struct midx *m)
{
	return m->layer + 1;
}

struct midx *midx_layer(struct midx *m, uint32_t layer)
{
	while (m && m->layer > layer)
		m = m->base;
	return m;
}

uint32_t midx_nr_objects_in_base(const struct midx *m)
{
	return m->nr_objects_in_base;
}

uint32_t midx_nr_packs_in_base(const struct midx *m)
{
	return m->nr_packs_in_base;
}

const char *midx_pack_name(const struct midx *m, uint32_t pack_int_id)
{
	m = layer_of_pack(m, pack_int_id);
	return m->pack_names[pack_int_id - m->nr_packs_in_base];
}

bool midx_find_pack(const struct midx *m, const char *name, uint32_t *pack_int_id)
{
	size_t len = strlen(name);
	/* Callers may name the pack by its .pack or its .idx. */
	if (ends_with(name, ".pack"))
		len -= 5;
	else if (ends_with(name, ".idx"))
		len -= 4;
	for (; m; m = m->base)
		for (uint32_t id = 0; id < m->nr_packs; id++) {
			const char *have = m->pack_names[id];
			if (!strncmp(have, name, len) && !strcmp(have + len, ".idx")) {
				*pack_int_id = m->nr_packs_in_base + id;
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
	m = layer_of_pos(m, midx_pos);
	return m->oids + (size_t)(midx_pos - m->nr_objects_in_base) * m->rawsz;
}

void midx_nth_oid(const struct midx *m, uint32_t midx_pos, struct object_id *oid)
{
	oid_from_raw(oid, midx_nth_oid_raw(m, midx_pos), m->algo);
}

uint32_t midx_nth_pack(const struct midx *m, uint32_t midx_pos)
{
	uint32_t id;
	m = layer_of_pos(m, midx_pos);
	id = get_be32(m->ooff + 8 * (size_t)(midx_pos - m->nr_objects_in_base));
	/* Unchecked in a lazily opened MIDX: no pack has that id. */
	if (id >= m->nr_packs)
		return UINT32_MAX;
	return m->nr_packs_in_base + id;
}

uint64_t midx_nth_offset(const struct midx *m, uint32_t midx_pos)
{
	uint32_t ofs;
	m = layer_of_pos(m, midx_pos);
	ofs = get_be32(m->ooff + 8 * (size_t)(midx_pos - m->nr_objects_in_base) + 4);
	if (m->loff && (ofs & MIDX_LARGE_OFFSET_FLAG)) {
		if ((ofs & ~MIDX_LARGE_OFFSET_FLAG) >= m->nr_loff)
			return UINT64_MAX;
		return get_be64(m->loff + 8 * (size_t)(ofs & ~MIDX_LARGE_OFFSET_FLAG));
	}
	return ofs;
}

/* Record the first damage a lazy check found in layer m. */
static void note_damage(struct midx *m, struct gp_error *err)
{
	pthread_mutex_lock(&m->lock);
	if (!m->damage)
		m->damage = xstrdup(gp_error_msg(err));
	__atomic_store_n(&m->damaged, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->lock);
	gp_error_clear(err);
}

bool midx_nth_entry(const struct midx *m, uint32_t midx_pos, uint32_t *pack_int_id,
		    uint64_t *ofs)
{
	struct midx *layer = (struct midx *)layer_of_pos(m, midx_pos);
	struct gp_error err = GP_ERROR_INIT;
	uint32_t local = midx_pos - layer->nr_objects_in_base;
	*pack_int_id = midx_nth_pack(m, midx_pos);
	*ofs = midx_nth_offset(m, midx_pos);
	if (*pack_int_id != UINT32_MAX && *ofs != UINT64_MAX)
		return true;
	if (*pack_int_id == UINT32_MAX)
		CORRUPT(&err, "bad pack-int-id: %" PRIu32 " (%" PRIu32 " total packs) for oid[%"
			PRIu32 "] (%s, offset %" PRIu64 ")",
			get_be32(layer->ooff + 8 * (size_t)local), layer->nr_packs, local,
			base_name(layer->path), chunk_offset(layer, layer->ooff) + 8 * (uint64_t)local);
	else
		CORRUPT(&err, "multi-pack-index large offset out of bounds: oid[%" PRIu32
			"] refers to a large offset past the %" PRIu32 " stored (%s, offset %" PRIu64 ")",
			local, layer->nr_loff, base_name(layer->path),
			chunk_offset(layer, layer->ooff) + 8 * (uint64_t)local + 4);
	note_damage(layer, &err);
	return false;
}

const char *midx_damage(struct midx *m)
{
	const char *msg = NULL;
	for (; m && !msg; m = m->base) {
		if (!__atomic_load_n(&m->damaged, __ATOMIC_ACQUIRE))
			continue;
		pthread_mutex_lock(&m->lock);
		msg = m->damage;
		pthread_mutex_unlock(&m->lock);
	}
	return msg;
}

/* MIDX_OPEN_LAZY: whether the layer's bucket is sound, checking it the first time. */
static bool bucket_usable(struct midx *m, unsigned bucket)
{
	uint64_t bit = (uint64_t)1 << (bucket % 64);
	struct gp_error err = GP_ERROR_INIT;
	if (__atomic_load_n(&m->damaged, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&m->bucket_checked[bucket / 64], __ATOMIC_RELAXED) & bit)
		return true;
	if (check_entries(m, bucket ? get_be32(m->fanout + 4 * (bucket - 1)) : 0,
			  get_be32(m->fanout + 4 * bucket), base_name(m->path), &err)) {
		note_damage(m, &err);
		return false;
	}
	__atomic_fetch_or(&m->bucket_checked[bucket / 64], bit, __ATOMIC_RELAXED);
	return true;
}

/*
 * MIDX_OPEN_LAZY, a lookup that found its name at local pos: the names
 * beside it in its bucket are in order. A hit needs no more (the name
 * matched exactly), and this catches names moved or swapped there, whose
 * entries would not be theirs.
 */
static bool hit_sound(struct midx *m, uint32_t pos)
{
	struct gp_error err = GP_ERROR_INIT;
	const unsigned char *cur = m->oids + (size_t)pos * m->rawsz;
	uint32_t lo = cur[0] ? get_be32(m->fanout + 4 * (cur[0] - 1)) : 0;
	uint32_t hi = get_be32(m->fanout + 4 * cur[0]);
	uint32_t bad;
	if (__atomic_load_n(&m->damaged, __ATOMIC_ACQUIRE))
		return false;
	if (pos > lo && memcmp(cur - m->rawsz, cur, m->rawsz) >= 0)
		bad = pos;
	else if (pos + 1 < hi && memcmp(cur, cur + m->rawsz, m->rawsz) >= 0)
		bad = pos + 1;
	else
		return true;
	CORRUPT(&err, "oid lookup out of order: oid[%" PRIu32 "] >= oid[%" PRIu32 "] (%s, offset %"
		PRIu64 ")", bad - 1, bad, base_name(m->path),
		chunk_offset(m, m->oids + (size_t)bad * m->rawsz));
	note_damage(m, &err);
	return false;
}

bool midx_find_oid(const struct midx *m, const struct object_id *oid,
		   uint32_t *midx_pos)
{
	for (; m; m = m->base) {
		uint32_t pos;
		bool found = oid_table_find(m->fanout, m->oids, m->rawsz, m->rawsz, oid->hash, &pos);
		/*
		 * Lazily checked: a hit by its neighbours; a miss, which must
		 * be sure the name is absent, by its whole bucket.
		 */
		if (m->lazy && (found ? !hit_sound((struct midx *)m, pos)
				      : !bucket_usable((struct midx *)m, oid->hash[0])))
			return false;
		if (found) {
			*midx_pos = m->nr_objects_in_base + pos;
			return true;
		}
	}
	return false;
}

bool midx_bitmapped_pack(const struct midx *m, uint32_t pack_int_id,
			 uint32_t *bitmap_pos, uint32_t *bitmap_nr)
{
	uint32_t id;
	m = layer_of_pack(m, pack_int_id);
	if (!m->btmp)
		return false;
	id = pack_int_id - m->nr_packs_in_base;
	*bitmap_pos = get_be32(m->btmp + 8 * (size_t)id); /* over the chain already */
	*bitmap_nr = get_be32(m->btmp + 8 * (size_t)id + 4);
	return true;
}

bool midx_has_btmp(const struct midx *m)
{
	for (; m; m = m->base)
		if (!m->btmp)
			return false;
	return true;
}

bool midx_has_ridx(const struct midx *m)
{
	for (; m; m = m->base)
		if (!m->ridx)
			return false;
	return true;
}

/*
 * Without a stored order: sort by (pack id, offset). The key packs the
 * pack id above a 40-bit offset, which covers every pack a MIDX can name.
 */
static void compute_pseudo_order(struct midx *m)
{
	uint64_t *keys = xmalloc(sizeof(*keys) * (m->nr_objects ? m->nr_objects : 1));
	for (uint32_t pos = 0; pos < m->nr_objects; pos++) {
		uint32_t global = m->nr_objects_in_base + pos;
		keys[pos] = (uint64_t)(midx_nth_pack(m, global) - m->nr_packs_in_base) << 40 |
			    (midx_nth_offset(m, global) & ((1ull << 40) - 1));
	}
	m->pseudo_to_pos = sort_positions_by_u64(keys, m->nr_objects);
	free(keys);
}

/* The layer's .rev file, when there is one that fits it. */
static int load_rev_file(struct midx *m, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *slash = strrchr(m->path, '/');
	int dir_len = slash ? (int)(slash - m->path) : 0;
	char *path = xstrfmt("%.*s%smulti-pack-index-%s.rev", dir_len, m->path, slash ? "/" : "",
			     hash_to_hex_r(hex, midx_checksum(m), m->rawsz));
	int ret = map_file(path, &m->rev_map, &m->rev_size, err);
	if (!ret)
		ret = revindex_parse(m->rev_map, m->rev_size, base_name(path), m->algo,
				     m->nr_objects, midx_checksum(m), err);
	if (!ret)
		for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++)
			if (revindex_entry(m->rev_map, pseudo) < m->nr_objects_in_base ||
			    revindex_entry(m->rev_map, pseudo) - m->nr_objects_in_base >= m->nr_objects) {
				ret = CORRUPT(err, "%s: entry %" PRIu32 " (offset %" PRIu64
					      ") is out of range", base_name(path), pseudo,
					      RIDX_HEADER_SIZE + 4 * (uint64_t)pseudo);
				break;
			}
	if (ret && m->rev_map) {
		munmap((void *)m->rev_map, m->rev_size);
		m->rev_map = NULL;
	}
	free(path);
	return ret;
}

/* Local pseudo position -> local midx position. */
static inline uint32_t layer_pseudo_to_pos(const struct midx *m, uint32_t pseudo)
{
	/* Stored orders hold positions over the chain (checked in range). */
	if (m->ridx)
		return get_be32(m->ridx + 4 * (size_t)pseudo) - m->nr_objects_in_base;
	if (m->rev_map)
		return revindex_entry(m->rev_map, pseudo) - m->nr_objects_in_base;
	return m->pseudo_to_pos[pseudo];
}

static int load_layer_order(struct midx *m, bool compute_missing, struct gp_error *err)
{
	uint32_t *inverse;
	if (m->pos_to_pseudo)
		return 0;
	if (!m->ridx) {
		struct gp_error rev_err = GP_ERROR_INIT;
		int ret = load_rev_file(m, &rev_err);
		if (ret == GP_ENOTFOUND && compute_missing) {
			/* The order comes from every entry: check them all first. */
			if (m->lazy && (ret = check_entries(m, 0, m->nr_objects, base_name(m->path),
							    err))) {
				gp_error_clear(&rev_err);
				return ret;
			}
			compute_pseudo_order(m);
		} else if (ret == GP_ENOTFOUND) {
			gp_error_clear(&rev_err);
			return gp_error_set(err, GP_ENOTFOUND, "%s has no reverse index (no RIDX chunk,"
					    " no .rev file)", m->path);
		} else if (ret) {
			gp_error_move(err, &rev_err);
			return ret;
		}
		gp_error_clear(&rev_err);
	}
	inverse = xmalloc(sizeof(*inverse) * (m->nr_objects ? m->nr_objects : 1));
	memset(inverse, 0xff, sizeof(*inverse) * m->nr_objects);
	for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
		uint32_t pos = layer_pseudo_to_pos(m, pseudo);
		/* Entries are in range (checked at open, or here when lazy); each must appear once. */
		if (pos >= m->nr_objects) {
			free(inverse);
			return CORRUPT(err, "invalid MIDX object position: RIDX entry %" PRIu32
				       " is out of range (%s, offset %" PRIu64 ")", pseudo,
				       base_name(m->path), chunk_offset(m, m->ridx) + 4 * (uint64_t)pseudo);
		}
		if (inverse[pos] != UINT32_MAX) {
			free(inverse);
			return CORRUPT(err, "%s: the reverse index lists object %" PRIu32
				       " twice (second time at %" PRIu32 ")", m->path, pos, pseudo);
		}
		inverse[pos] = pseudo;
	}
	m->pos_to_pseudo = inverse;
	return 0;
}

/* MIDX_ORDER_NO_INVERSE: check the RIDX entries in range, and find the preferred pack. */
static int prepare_ridx_search(struct midx *m, struct gp_error *err)
{
	uint32_t first;
	if (m->ridx_searchable || m->pos_to_pseudo)
		return 0;
	for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
		uint32_t pos = get_be32(m->ridx + 4 * (size_t)pseudo);
		if (pos < m->nr_objects_in_base || pos - m->nr_objects_in_base >= m->nr_objects)
			return CORRUPT(err, "invalid MIDX object position: RIDX entry %" PRIu32
				       " is %" PRIu32 ", out of range (%s, offset %" PRIu64 ")", pseudo,
				       pos, base_name(m->path),
				       chunk_offset(m, m->ridx) + 4 * (uint64_t)pseudo);
	}
	if (!m->layer && m->nr_objects) {
		first = layer_pseudo_to_pos(m, 0);
		m->preferred = get_be32(m->ooff + 8 * (size_t)first);
		m->has_preferred = true;
	}
	m->ridx_searchable = true;
	return 0;
}

int midx_load_pseudo_order(struct midx *m, bool compute_missing, struct gp_error *err)
{
	return midx_load_pseudo_order_flags(m, compute_missing, 0, err);
}

int midx_load_pseudo_order_flags(struct midx *m, bool compute_missing, unsigned flags,
				 struct gp_error *err)
{
	int ret = 0;
	for (struct midx *layer = m; layer && !ret; layer = layer->base) {
		pthread_mutex_lock(&layer->lock);
		if ((flags & MIDX_ORDER_NO_INVERSE) && layer->ridx)
			ret = prepare_ridx_search(layer, err);
		else
			ret = load_layer_order(layer, compute_missing, err);
		pthread_mutex_unlock(&layer->lock);
	}
	return ret;
}

/* Where local position pos ranks in the pseudo-pack order: its pack, then its offset. */
static bool pseudo_key_less(const struct midx *m, uint32_t a, uint32_t b)
{
	uint32_t pack_a = get_be32(m->ooff + 8 * (size_t)a);
	uint32_t pack_b = get_be32(m->ooff + 8 * (size_t)b);
	uint64_t rank_a = m->has_preferred && pack_a == m->preferred ? 0 : (uint64_t)pack_a + 1;
	uint64_t rank_b = m->has_preferred && pack_b == m->preferred ? 0 : (uint64_t)pack_b + 1;
	if (rank_a != rank_b)
		return rank_a < rank_b;
	return midx_nth_offset(m, m->nr_objects_in_base + a) <
	       midx_nth_offset(m, m->nr_objects_in_base + b);
}

/* Local pos -> local pseudo position by binary search; UINT32_MAX when the RIDX lacks it. */
static uint32_t ridx_search(const struct midx *m, uint32_t pos)
{
	uint32_t lo = 0, hi = m->nr_objects;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t at = layer_pseudo_to_pos(m, mid);
		if (at == pos)
			return mid;
		if (pseudo_key_less(m, at, pos))
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

uint32_t midx_pseudo_to_pos(const struct midx *m, uint32_t pseudo_pos)
{
	m = layer_of_pos(m, pseudo_pos);
	return m->nr_objects_in_base + layer_pseudo_to_pos(m, pseudo_pos - m->nr_objects_in_base);
}

uint32_t midx_pos_to_pseudo(const struct midx *m, uint32_t midx_pos)
{
	uint32_t pseudo;
	m = layer_of_pos(m, midx_pos);
	if (m->pos_to_pseudo)
		return m->nr_objects_in_base + m->pos_to_pseudo[midx_pos - m->nr_objects_in_base];
	pseudo = ridx_search(m, midx_pos - m->nr_objects_in_base);
	return pseudo == UINT32_MAX ? UINT32_MAX : m->nr_objects_in_base + pseudo;
}

int midx_preferred_pack(struct midx *m, uint32_t *pack_int_id, struct gp_error *err)
{
	struct midx *base = m; /* the top layer's own, as git has it */
	struct gp_error ignored = GP_ERROR_INIT;
	uint32_t first;
	if (!base->nr_objects)
		return gp_error_set(err, GP_ENOTFOUND, "could not determine MIDX preferred pack"
				    " (%s has no objects)", base->path);
	if (base->ridx) {
		first = layer_pseudo_to_pos(base, 0);
	} else {
		int ret;
		pthread_mutex_lock(&base->lock);
		ret = base->rev_map || base->pos_to_pseudo ? 0 : load_rev_file(base, &ignored);
		pthread_mutex_unlock(&base->lock);
		gp_error_clear(&ignored);
		if (ret || !base->rev_map)
			return gp_error_set(err, GP_ENOTFOUND, "could not determine MIDX preferred pack"
					    " (%s has no reverse index)", base->path);
		first = layer_pseudo_to_pos(base, 0);
	}
	if (first >= base->nr_objects || get_be32(base->ooff + 8 * (size_t)first) >= base->nr_packs)
		return CORRUPT(err, "could not determine MIDX preferred pack (%s: its first object"
			       " in pseudo-pack order is out of range)", base->path);
	*pack_int_id = base->nr_packs_in_base + get_be32(base->ooff + 8 * (size_t)first);
	return 0;
}

bool midx_checksum_valid(const struct midx *m)
{
	for (; m; m = m->base) {
		unsigned char hash[GP_MAX_RAWSZ];
		hash_buf_checksum(m->algo, m->map, m->map_size - m->rawsz, hash);
		if (memcmp(hash, midx_checksum(m), m->rawsz))
			return false;
	}
	return true;
}

/*
 * verify reports every problem, as git does, one a line in err's
 * message (up to a bound, then a count).
 */
#define MAX_PROBLEM_LINES 100

GP_PRINTF(3, 4) static void problem(size_t *nr_problems, struct gp_error *err,
				    const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	if (++*nr_problems > MAX_PROBLEM_LINES)
		return;
	if (*nr_problems > 1 && err && err->msg)
		strbuf_addf(&sb, "%s\n", err->msg);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	gp_error_set(err, GP_ECORRUPT, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Phase one: the layer's checksum and packs (opened into packs[]). */
static void verify_layer_packs(struct midx *m, const char *pack_dir, struct packed_git **packs,
			       struct progress *progress, uint64_t *done, size_t *nr_problems,
			       struct gp_error *err)
{
	unsigned char hash[GP_MAX_RAWSZ];
	const char *name = base_name(m->path);

	hash_buf_checksum(m->algo, m->map, m->map_size - m->rawsz, hash);
	if (memcmp(hash, midx_checksum(m), m->rawsz))
		problem(nr_problems, err, "incorrect checksum (%s, offset %zu)", name,
			m->map_size - m->rawsz);
	for (uint32_t id = 0; id < m->nr_packs; id++) {
		struct gp_error perr = GP_ERROR_INIT;
		char *idx = xstrfmt("%s/%s", pack_dir, m->pack_names[id]);
		/*
		 * The objects are checked against the .idx: the .pack need
		 * only be there (git's verify does not read it either).
		 */
		if (pack_open_idx(&packs[id], idx, m->algo, &perr) ||
		    (access(packs[id]->pack_path, F_OK) &&
		     gp_error_errno(&perr, "cannot open '%s'", packs[id]->pack_path))) {
			problem(nr_problems, err, "failed to load pack in position %" PRIu32
				" (%s): %s (%s)", m->nr_packs_in_base + id, m->pack_names[id],
				gp_error_msg(&perr), name);
			pack_free(packs[id]);
			packs[id] = NULL;
		}
		gp_error_clear(&perr);
		free(idx);
		progress_update(progress, ++*done);
	}
}

/* Phase three: every object at its recorded offset; then RIDX and BTMP. */
static void verify_layer_objects(struct midx *m, struct packed_git **packs,
				 struct progress *progress, uint64_t *done, size_t *nr_problems,
				 struct gp_error *err)
{
	const char *name = base_name(m->path);
	uint32_t *pseudo_start = NULL;

	for (uint32_t pos = 0; pos < m->nr_objects; pos++) {
		uint32_t pack = get_be32(m->ooff + 8 * (size_t)pos);
		struct packed_git *p = packs[pack];
		uint64_t ofs = midx_nth_offset(m, m->nr_objects_in_base + pos);
		struct object_id oid;
		uint32_t idx_pos;
		char hex[GP_MAX_HEXSZ + 1];
		progress_update(progress, ++*done);
		if (!p)
			continue;
		oid_from_raw(&oid, m->oids + (size_t)pos * m->rawsz, m->algo);
		if (!pack_find_oid(p, &oid, &idx_pos))
			problem(nr_problems, err, "failed to load pack entry for oid[%" PRIu32 "] = %s:"
				" not in its pack %s (%s)", m->nr_objects_in_base + pos,
				oid_to_hex_r(hex, &oid), m->pack_names[pack], name);
		else if (pack_nth_offset(p, idx_pos) != ofs)
			problem(nr_problems, err, "incorrect object offset for oid[%" PRIu32 "] = %s: %"
				PRIx64 " != %" PRIx64 " (%s, offset %" PRIu64 ")",
				m->nr_objects_in_base + pos, oid_to_hex_r(hex, &oid), ofs,
				pack_nth_offset(p, idx_pos), name,
				chunk_offset(m, m->ooff) + 8 * (uint64_t)pos + 4);
	}
	/*
	 * RIDX: the preferred pack first (git picks one in every layer it
	 * writes with --bitmap), then ascending pack id, then offset.
	 */
	if (m->ridx && m->nr_objects) {
		uint8_t *seen = xcalloc(m->nr_objects, 1);
		uint32_t preferred = get_be32(m->ooff + 8 * (size_t)layer_pseudo_to_pos(m, 0));
		if (m->btmp) {
			pseudo_start = xcalloc((size_t)m->nr_packs + 1, sizeof(*pseudo_start));
			memset(pseudo_start, 0xff, sizeof(*pseudo_start) * m->nr_packs);
		}
		for (uint32_t pseudo = 0; pseudo < m->nr_objects; pseudo++) {
			uint32_t pos = layer_pseudo_to_pos(m, pseudo);
			uint32_t pack = get_be32(m->ooff + 8 * (size_t)pos);
			if (seen[pos]++) {
				problem(nr_problems, err, "%s: RIDX chunk lists object %" PRIu32 " twice", name, pos);
				continue;
			}
			if (pseudo_start && pseudo_start[pack] == UINT32_MAX)
				pseudo_start[pack] = pseudo;
			if (pseudo) {
				uint32_t prev = layer_pseudo_to_pos(m, pseudo - 1);
				uint32_t pa = get_be32(m->ooff + 8 * (size_t)prev);
				uint64_t ka = pa == preferred ? 0 : (uint64_t)pa + 1;
				uint64_t kb = pack == preferred ? 0 : (uint64_t)pack + 1;
				uint64_t oa = midx_nth_offset(m, m->nr_objects_in_base + prev);
				uint64_t ob = midx_nth_offset(m, m->nr_objects_in_base + pos);
				if (ka > kb || (ka == kb && oa >= ob))
					problem(nr_problems, err, "%s: RIDX chunk: entry %" PRIu32
						" (offset %" PRIu64 ") is out of pseudo-pack order", name,
						pseudo, chunk_offset(m, m->ridx) + 4 * (uint64_t)pseudo);
			}
		}
		free(seen);
	}
	if (pseudo_start) {
		uint32_t *count = xcalloc((size_t)m->nr_packs + 1, sizeof(*count));
		for (uint32_t pos = 0; pos < m->nr_objects; pos++)
			count[get_be32(m->ooff + 8 * (size_t)pos)]++;
		for (uint32_t id = 0; id < m->nr_packs; id++) {
			uint32_t first = get_be32(m->btmp + 8 * (size_t)id);
			uint32_t nr = get_be32(m->btmp + 8 * (size_t)id + 4);
			uint32_t want = count[id] ? m->nr_objects_in_base + pseudo_start[id] : 0;
			if (nr != count[id] || first != want)
				problem(nr_problems, err, "%s: BTMP chunk: pack %" PRIu32 " (offset %"
					PRIu64 ") says bits %" PRIu32 "+%" PRIu32 ", the RIDX order has %"
					PRIu32 "+%" PRIu32, name, id,
					chunk_offset(m, m->btmp) + 8 * (uint64_t)id, first, nr,
					want, count[id]);
		}
		free(count);
		free(pseudo_start);
	}
}

int midx_verify(struct midx *m, const char *pack_dir, bool show_progress,
		size_t *nr_problems, struct gp_error *err)
{
	uint32_t nr_layers = midx_nr_layers(m);
	struct packed_git ***packs = xcalloc(nr_layers, sizeof(*packs));
	struct progress *progress;
	uint64_t done = 0;

	*nr_problems = 0;
	progress = progress_start("Looking for referenced packfiles", midx_nr_packs(m), show_progress);
	for (uint32_t l = 0; l < nr_layers; l++) {
		struct midx *layer = midx_layer(m, l);
		packs[l] = xcalloc(layer->nr_packs + 1, sizeof(**packs));
		verify_layer_packs(layer, pack_dir, packs[l], progress, &done, nr_problems, err);
	}
	progress_stop(&progress);
	if (!m->nr_objects) {
		/* As git: the rest assumes objects. */
		problem(nr_problems, err, "the midx contains no oid (%s)", base_name(m->path));
		goto out;
	}
	/* Names are checked sorted at open; the meter is git's. */
	progress = progress_start("Verifying OID order in multi-pack-index",
				  midx_nr_objects(m) - 1, show_progress);
	progress_update(progress, midx_nr_objects(m) - 1);
	progress_stop(&progress);
	done = 0;
	progress = progress_start("Verifying object offsets", midx_nr_objects(m), show_progress);
	for (uint32_t l = 0; l < nr_layers; l++)
		verify_layer_objects(midx_layer(m, l), packs[l], progress, &done, nr_problems, err);
	progress_stop(&progress);
out:
	for (uint32_t l = 0; l < nr_layers; l++) {
		struct midx *layer = midx_layer(m, l);
		for (uint32_t id = 0; id < layer->nr_packs; id++)
			pack_free(packs[l][id]);
		free(packs[l]);
	}
	free(packs);
	if (*nr_problems > MAX_PROBLEM_LINES && err && err->msg) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%s\n... and %zu more problems", err->msg,
			    *nr_problems - MAX_PROBLEM_LINES);
		gp_error_set(err, GP_ECORRUPT, "%s", sb.buf);
		strbuf_release(&sb);
	}
	return *nr_problems ? GP_ECORRUPT : 0;
}
