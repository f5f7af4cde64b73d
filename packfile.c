/*
 * packfile.c: reading .pack and .idx files (gitformat-pack).
 *
 * .idx v2 layout (all integers big-endian):
 *
 *   offset                 size          contents
 *   0                      4             "\377tOc" (PACK_IDX_SIGNATURE)
 *   4                      4             version = 2
 *   8                      256 * 4       fanout: objects with first byte <= i
 *   1032                   N * rawsz     object names, sorted
 *   ...                    N * 4         CRC-32 of each packed entry
 *   ...                    N * 4         offsets; MSB set = index into the
 *                                        64-bit table
 *   ...                    L * 8         64-bit offsets
 *   end - 2 * rawsz        rawsz         checksum of the .pack
 *   end - rawsz            rawsz         checksum of all the above
 *
 * .idx v1: fanout (256 * 4), then N entries of (4-byte offset, name),
 * then the same two checksums.
 *
 * Pack entries: a type-and-size varint header (type in bits 4-6 of the
 * first byte, size in its low 4 bits and 7 bits per continuation byte),
 * then for OFS_DELTA a base distance in git's "offset encoding" (each
 * continuation adds one before shifting), for REF_DELTA the base's name,
 * then the zlib stream.
 *
 * The .rev (reverse index) format is read here too: see pack-revindex.h.
 */
#include "packfile.h"
#include "delta.h"
#include "error.h"
#include "pack-revindex.h"
#include "strbuf.h"
#include "zstream.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* deflate cannot expand data by more than about 1032:1. */
#define MAX_INFLATE_RATIO 1100

int map_file_readonly(const char *path, const unsigned char **map, size_t *size,
		      uint64_t *mtime, struct gp_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;
	if (fd < 0) {
		if (errno == ENOENT)
			return gp_error_set(err, GP_ENOTFOUND, "%s: no such file", path);
		return gp_error_errno(err, "%s: cannot open", path);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return gp_error_errno(err, "%s: cannot stat", path);
	}
	if (mtime)
		*mtime = (uint64_t)st.st_mtime;
	if (!st.st_size) {
		close(fd);
		*map = NULL;
		*size = 0;
		return 0;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return gp_error_errno(err, "%s: cannot mmap", path);
	*map = m;
	*size = (size_t)st.st_size;
	return 0;
}

int pack_parse_entry_header(const unsigned char *buf, size_t avail,
			    uint64_t entry_ofs, int algo,
			    struct pack_entry_header *out, struct gp_error *err)
{
	size_t pos = 0, rawsz = gp_hash_algos[algo].rawsz;
	unsigned shift = 4;
	unsigned char c;
	uint64_t size;

	if (!avail)
		return CORRUPT(err, "at offset %" PRIu64 ": entry header is truncated", entry_ofs);
	c = buf[pos++];
	out->type = (enum object_type)((c >> 4) & 7);
	size = c & 15;
	while (c & 0x80) {
		if (pos >= avail)
			return CORRUPT(err, "at offset %" PRIu64 ": entry header is truncated", entry_ofs);
		c = buf[pos++];
		if (shift > 63 || (shift > 57 && ((uint64_t)(c & 0x7f) >> (64 - shift))))
			return CORRUPT(err, "at offset %" PRIu64 ": object size overflows 64 bits", entry_ofs);
		size |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	out->size = size;

	switch (out->type) {
	case OBJ_COMMIT:
	case OBJ_TREE:
	case OBJ_BLOB:
	case OBJ_TAG:
		break;
	case OBJ_OFS_DELTA: {
		uint64_t dist;
		if (pos >= avail)
			return CORRUPT(err, "at offset %" PRIu64 ": delta base offset is truncated", entry_ofs);
		c = buf[pos++];
		dist = c & 0x7f;
		while (c & 0x80) {
			if (pos >= avail)
				return CORRUPT(err, "at offset %" PRIu64 ": delta base offset is truncated", entry_ofs);
			if (dist >> 56)
				return CORRUPT(err, "at offset %" PRIu64 ": delta base offset overflows", entry_ofs);
			c = buf[pos++];
			dist = ((dist + 1) << 7) | (c & 0x7f);
		}
		if (!dist || dist > entry_ofs || entry_ofs - dist < PACK_HEADER_SIZE)
			return CORRUPT(err, "at offset %" PRIu64 ": delta base offset %" PRIu64
				       " is out of bounds", entry_ofs, dist);
		out->base_ofs = entry_ofs - dist;
		break;
	}
	case OBJ_REF_DELTA:
		if (rawsz > avail - pos)
			return CORRUPT(err, "at offset %" PRIu64 ": delta base name is truncated", entry_ofs);
		oid_from_raw(&out->base_oid, buf + pos, algo);
		pos += rawsz;
		break;
	default:
		return CORRUPT(err, "at offset %" PRIu64 ": unknown object type %d",
			       entry_ofs, (int)out->type);
	}
	out->hdr_len = pos;
	return 0;
}

/*
 * Names in order within one fanout bucket (old packs may hold an object
 * twice, which git accepts), each starting with the bucket's byte. The
 * order check compares the first eight bytes as one big-endian word and
 * only falls back to memcmp on a tie.
 */
static int check_bucket(const struct packed_git *p, unsigned bucket, const char *name,
			struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[p->algo].rawsz;
	uint32_t idx_pos = bucket ? get_be32(p->fanout + 4 * (bucket - 1)) : 0;
	uint32_t end = get_be32(p->fanout + 4 * bucket);
	const unsigned char *prev_oid = NULL;
	for (; idx_pos < end; idx_pos++) {
		const unsigned char *cur = pack_nth_oid_raw(p, idx_pos);
		uint64_t a, b;
		if (cur[0] != bucket)
			return CORRUPT(err, "%s: object %" PRIu32 " is outside its fanout bucket", name, idx_pos);
		if (prev_oid) {
			a = get_be64(prev_oid);
			b = get_be64(cur);
			if (a > b || (a == b && memcmp(prev_oid + 8, cur + 8, rawsz - 8) > 0))
				return CORRUPT(err, "%s: object names out of order at entry %" PRIu32, name, idx_pos);
		}
		prev_oid = cur;
	}
	return 0;
}

/* v2: every large-offset reference inside the 64-bit table, which has no spare entry. */
static int check_large_refs(const struct packed_git *p, const char *name, struct gp_error *err)
{
	uint32_t nr_referenced = 0;
	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		uint32_t o = get_be32(p->off32 + 4 * (size_t)idx_pos);
		if (!(o & 0x80000000u))
			continue;
		if ((o & 0x7fffffffu) >= p->nr_large)
			return CORRUPT(err, "%s: large-offset entry %" PRIu32 " of object %" PRIu32
				       " is out of range (%" PRIu32 " entries)",
				       name, o & 0x7fffffffu, idx_pos, p->nr_large);
		nr_referenced++;
	}
	/* Writers store exactly one 64-bit entry per large offset. */
	if (nr_referenced != p->nr_large)
		return CORRUPT(err, "%s: index has %" PRIu32 " 64-bit offsets but %" PRIu32
			       " entries refer to them (trailing junk?)",
			       name, p->nr_large, nr_referenced);
	return 0;
}

/*
 * Validate the idx image and fill the table pointers of p: its shape
 * always; with lazy, the names and large-offset references are left to
 * pack_find_oid() (a bucket at a time) and pack_open_pack().
 */
static int parse_idx(struct packed_git *p, const char *name, bool lazy, struct gp_error *err)
{
	const unsigned char *map = p->idx_map;
	size_t len = p->idx_size, rawsz = gp_hash_algos[p->algo].rawsz;
	size_t min_size, table_ofs;
	uint32_t nr, prev = 0;

	if (len >= 8 && get_be32(map) == PACK_IDX_SIGNATURE) {
		p->idx_version = get_be32(map + 4);
		if (p->idx_version != 2)
			return CORRUPT(err, "%s: unsupported index version %" PRIu32,
				       name, p->idx_version);
		table_ofs = 8;
	} else {
		p->idx_version = 1;
		table_ofs = 0;
	}
	if (len < table_ofs + 256 * 4 + 2 * rawsz)
		return CORRUPT(err, "index file %s is too small (%zu bytes)", name, len);
	p->fanout = map + table_ofs;
	for (unsigned bucket = 0; bucket < 256; bucket++) {
		uint32_t n = get_be32(p->fanout + 4 * bucket);
		if (n < prev)
			return CORRUPT(err, "%s: fanout entry %u (%" PRIu32 ") is smaller than entry %u (%" PRIu32 ")",
				       name, bucket, n, bucket - 1, prev);
		prev = n;
	}
	nr = prev;
	p->nr_objects = nr;
	table_ofs += 256 * 4;

	if (p->idx_version == 1) {
		min_size = table_ofs + (size_t)nr * (4 + rawsz) + 2 * rawsz;
		if (len != min_size)
			return CORRUPT(err, "%s: index file has %zu bytes, %" PRIu32 " objects need %zu",
				       name, len, nr, min_size);
		p->oids = map + table_ofs;
	} else {
		size_t extra;
		min_size = table_ofs + (size_t)nr * (rawsz + 8) + 2 * rawsz;
		if (len < min_size)
			return CORRUPT(err, "%s: index file has %zu bytes, %" PRIu32 " objects need at least %zu",
				       name, len, nr, min_size);
		extra = len - min_size;
		if (extra % 8 || extra / 8 > nr)
			return CORRUPT(err, "%s: index file has %zu unexpected trailing bytes before its checksums",
				       name, extra);
		p->nr_large = (uint32_t)(extra / 8);
		p->oids = map + table_ofs;
		p->crcs = p->oids + (size_t)nr * rawsz;
		p->off32 = p->crcs + (size_t)nr * 4;
		p->off64 = p->off32 + (size_t)nr * 4;
	}
	memcpy(p->pack_hash, map + len - 2 * rawsz, rawsz);
	if (lazy)
		return 0;
	for (unsigned bucket = 0; bucket < 256; bucket++) {
		int ret = check_bucket(p, bucket, name, err);
		if (ret)
			return ret;
	}
	if (p->idx_version == 2)
		return check_large_refs(p, name, err);
	return 0;
}

static struct packed_git *packed_git_alloc(int algo)
{
	struct packed_git *p = xcalloc(1, sizeof(*p));
	pthread_mutex_t *lock = xmalloc(sizeof(*lock));
	pthread_mutex_init(lock, NULL);
	p->pack_lock = lock;
	p->algo = algo;
	return p;
}

int pack_parse_idx_buf(struct packed_git **out, const unsigned char *buf,
		       size_t len, const char *name, int algo,
		       struct gp_error *err)
{
	struct packed_git *p = packed_git_alloc(algo);
	int ret;
	p->idx_map = buf;
	p->idx_size = len;
	ret = parse_idx(p, name, false, err);
	if (ret) {
		p->idx_map = NULL;
		pack_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

static char *path_with_ext(const char *path, const char *old_ext, const char *new_ext)
{
	size_t base = strlen(path);
	if (ends_with(path, old_ext))
		base -= strlen(old_ext);
	return xstrfmt("%.*s%s", (int)base, path, new_ext);
}

int pack_open_idx(struct packed_git **out, const char *idx_path, int algo,
		  struct gp_error *err)
{
	return pack_open_idx_flags(out, idx_path, algo, 0, err);
}

int pack_open_idx_flags(struct packed_git **out, const char *idx_path, int algo,
			unsigned flags, struct gp_error *err)
{
	struct packed_git *p = packed_git_alloc(algo);
	char *other;
	int ret;

	p->idx_path = xstrdup(idx_path);
	p->pack_path = path_with_ext(idx_path, ".idx", ".pack");
	ret = map_file_readonly(idx_path, &p->idx_map, &p->idx_size, &p->mtime, err);
	if (ret)
		goto fail;
	p->idx_lazy = flags & PACK_IDX_LAZY;
	ret = parse_idx(p, idx_path, p->idx_lazy, err);
	if (ret)
		goto fail;
	other = path_with_ext(idx_path, ".idx", ".keep");
	p->is_keep = !access(other, F_OK);
	free(other);
	other = path_with_ext(idx_path, ".idx", ".promisor");
	p->is_promisor = !access(other, F_OK);
	free(other);
	*out = p;
	return 0;
fail:
	pack_free(p);
	return ret;
}

static int open_pack_locked(struct packed_git *p, struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[p->algo].rawsz;
	const char *name = base_name(p->pack_path);
	uint32_t version, nr;
	int ret = map_file_readonly(p->pack_path, &p->pack_map, &p->pack_size, NULL, err);
	if (ret)
		return ret;
	if (p->pack_size < PACK_HEADER_SIZE + rawsz)
		return CORRUPT(err, "%s: pack file is too small (%zu bytes)", name, p->pack_size);
	if (get_be32(p->pack_map) != PACK_SIGNATURE)
		return CORRUPT(err, "%s: at offset 0: not a pack file (bad signature)", name);
	version = get_be32(p->pack_map + 4);
	if (version != 2 && version != 3)
		return CORRUPT(err, "%s: at offset 4: unsupported pack version %" PRIu32, name, version);
	nr = get_be32(p->pack_map + 8);
	if (nr != p->nr_objects)
		return CORRUPT(err, "%s: at offset 8: pack has %" PRIu32 " objects, its index has %" PRIu32,
			       name, nr, p->nr_objects);
	if (memcmp(p->pack_map + p->pack_size - rawsz, p->pack_hash, rawsz))
		return CORRUPT(err, "%s: pack checksum does not match its index %s",
			       name, base_name(p->idx_path ? p->idx_path : "(idx)"));
	/* A lazily opened idx has its large-offset references checked here. */
	if (p->idx_lazy && p->idx_version == 2) {
		ret = check_large_refs(p, base_name(p->idx_path), err);
		if (ret)
			return ret;
	}
	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		uint64_t ofs = pack_nth_offset(p, idx_pos);
		if (ofs < PACK_HEADER_SIZE || ofs >= p->pack_size - rawsz)
			return CORRUPT(err, "%s: offset %" PRIu64 " of object %" PRIu32 " in %s is outside the pack",
				       name, ofs, idx_pos, base_name(p->idx_path ? p->idx_path : "(idx)"));
	}
	return 0;
}

int pack_open_pack(struct packed_git *p, struct gp_error *err)
{
	int ret = 0;
	pthread_mutex_t *lock = p->pack_lock;
	pthread_mutex_lock(lock);
	if (p->pack_open)
		goto out;
	if (p->pack_failed || !p->pack_path) {
		ret = gp_error_set(err, GP_ECORRUPT, "%s: pack is unusable",
				   p->pack_path ? base_name(p->pack_path) : "(pack)");
		goto out;
	}
	ret = open_pack_locked(p, err);
	if (ret) {
		if (p->pack_map)
			munmap((void *)p->pack_map, p->pack_size);
		p->pack_map = NULL;
		p->pack_failed = true;
		goto out;
	}
	p->pack_open = true;
out:
	pthread_mutex_unlock(lock);
	return ret;
}

void pack_free(struct packed_git *p)
{
	if (!p)
		return;
	if (p->idx_path && p->idx_map)
		munmap((void *)p->idx_map, p->idx_size);
	if (p->pack_map)
		munmap((void *)p->pack_map, p->pack_size);
	if (p->rev_map)
		munmap((void *)p->rev_map, p->rev_size);
	else
		free(p->revindex);
	if (p->pack_lock) {
		pthread_mutex_destroy(p->pack_lock);
		free(p->pack_lock);
	}
	free(p->idx_damage);
	free(p->pack_path);
	free(p->idx_path);
	free(p);
}

const unsigned char *pack_nth_oid_raw(const struct packed_git *p, uint32_t idx_pos)
{
	size_t rawsz = gp_hash_algos[p->algo].rawsz;
	if (p->idx_version == 1)
		return p->oids + (size_t)idx_pos * (4 + rawsz) + 4;
	return p->oids + (size_t)idx_pos * rawsz;
}

void pack_nth_oid(const struct packed_git *p, uint32_t idx_pos, struct object_id *oid)
{
	oid_from_raw(oid, pack_nth_oid_raw(p, idx_pos), p->algo);
}

uint64_t pack_nth_offset(const struct packed_git *p, uint32_t idx_pos)
{
	uint32_t o;
	if (p->idx_version == 1) {
		size_t rawsz = gp_hash_algos[p->algo].rawsz;
		return get_be32(p->oids + (size_t)idx_pos * (4 + rawsz));
	}
	o = get_be32(p->off32 + 4 * (size_t)idx_pos);
	if (!(o & 0x80000000u))
		return o;
	/* Unchecked before pack_open_pack() when opened lazily: no pack is that long. */
	if ((o & 0x7fffffffu) >= p->nr_large)
		return UINT64_MAX;
	return get_be64(p->off64 + 8 * (size_t)(o & 0x7fffffffu));
}

uint32_t pack_nth_crc(const struct packed_git *p, uint32_t idx_pos)
{
	if (p->idx_version == 1)
		return 0;
	return get_be32(p->crcs + 4 * (size_t)idx_pos);
}

/* Remember the first damage found in p's idx (err is cleared): the idx answers nothing more. */
static void note_idx_damage(struct packed_git *p, struct gp_error *err)
{
	pthread_mutex_lock(p->pack_lock);
	if (!p->idx_damage)
		p->idx_damage = xstrdup(gp_error_msg(err));
	__atomic_store_n(&p->idx_damaged, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(p->pack_lock);
	gp_error_clear(err);
}

/*
 * A lazily opened idx: the first lookup that misses in a fanout bucket
 * checks that bucket. Threads may race to check one; both find the same
 * answer.
 */
static bool bucket_usable(struct packed_git *p, unsigned bucket)
{
	uint64_t bit = (uint64_t)1 << (bucket % 64);
	struct gp_error err = GP_ERROR_INIT;
	if (__atomic_load_n(&p->idx_damaged, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&p->bucket_checked[bucket / 64], __ATOMIC_RELAXED) & bit)
		return true;
	if (check_bucket(p, bucket, base_name(p->idx_path), &err)) {
		note_idx_damage(p, &err);
		return false;
	}
	__atomic_fetch_or(&p->bucket_checked[bucket / 64], bit, __ATOMIC_RELAXED);
	return true;
}

const char *pack_idx_damage(struct packed_git *p)
{
	const char *msg;
	if (!__atomic_load_n(&p->idx_damaged, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(p->pack_lock);
	msg = p->idx_damage;
	pthread_mutex_unlock(p->pack_lock);
	return msg;
}

/*
 * PACK_IDX_LAZY, a lookup that found its name at idx_pos: the names
 * beside it are in order (a hit needs no more; this catches names moved
 * or swapped there, whose offsets would not be theirs).
 */
static bool hit_sound(struct packed_git *p, uint32_t idx_pos)
{
	size_t rawsz = gp_hash_algos[p->algo].rawsz;
	const unsigned char *cur = pack_nth_oid_raw(p, idx_pos);
	uint32_t lo = cur[0] ? get_be32(p->fanout + 4 * (cur[0] - 1)) : 0;
	uint32_t hi = get_be32(p->fanout + 4 * cur[0]);
	struct gp_error err = GP_ERROR_INIT;
	if (__atomic_load_n(&p->idx_damaged, __ATOMIC_ACQUIRE))
		return false;
	if ((idx_pos <= lo || memcmp(pack_nth_oid_raw(p, idx_pos - 1), cur, rawsz) <= 0) &&
	    (idx_pos + 1 >= hi || memcmp(cur, pack_nth_oid_raw(p, idx_pos + 1), rawsz) <= 0))
		return true;
	CORRUPT(&err, "%s: object names out of order at entry %" PRIu32, base_name(p->idx_path),
		idx_pos);
	note_idx_damage(p, &err);
	return false;
}

bool pack_find_oid(const struct packed_git *p, const struct object_id *oid,
		   uint32_t *idx_pos)
{
	size_t rawsz = gp_hash_algos[p->algo].rawsz;
	bool found;
	/* v1 entries are (4-byte offset, name); v2 names are contiguous. */
	if (p->idx_version == 1)
		found = oid_table_find(p->fanout, p->oids + 4, 4 + rawsz, rawsz, oid->hash, idx_pos);
	else
		found = oid_table_find(p->fanout, p->oids, rawsz, rawsz, oid->hash, idx_pos);
	/* lazily checked: a hit by its neighbours, a miss (sure of absence) by its bucket */
	if (p->idx_lazy && (found ? !hit_sound((struct packed_git *)p, *idx_pos)
				  : !bucket_usable((struct packed_git *)p, oid->hash[0])))
		return false;
	return found;
}

/* ---- reverse index ---------------------------------------------------- */

static int load_rev_file(struct packed_git *p, struct gp_error *err)
{
	char *path = path_with_ext(p->pack_path, ".pack", ".rev");
	const unsigned char *map = NULL;
	size_t size = 0;
	int ret = map_file_readonly(path, &map, &size, NULL, err);
	if (ret)
		goto out;
	ret = revindex_parse(map, size, base_name(path), p->algo, p->nr_objects,
			     p->pack_hash, err);
	if (ret)
		goto out;
	/* Each entry in range and offsets strictly increasing: a permutation. */
	for (uint32_t pack_pos = 0; pack_pos < p->nr_objects; pack_pos++) {
		uint32_t idx_pos = revindex_entry(map, pack_pos);
		if (idx_pos >= p->nr_objects) {
			ret = CORRUPT(err, "%s: entry %" PRIu32 " names object %" PRIu32 " of %" PRIu32,
				      base_name(path), pack_pos, idx_pos, p->nr_objects);
			goto out;
		}
		if (pack_pos && pack_nth_offset(p, revindex_entry(map, pack_pos - 1)) >=
				pack_nth_offset(p, idx_pos)) {
			ret = CORRUPT(err, "%s: entry %" PRIu32 " is out of pack order",
				      base_name(path), pack_pos);
			goto out;
		}
	}
	p->rev_map = map;
	p->rev_size = size;
	p->revindex_from_file = true;
	map = NULL;
out:
	if (map)
		munmap((void *)map, size);
	free(path);
	return ret;
}

int pack_load_revindex(struct packed_git *p, struct gp_error *err)
{
	int ret = 0;
	pthread_mutex_t *lock = p->pack_lock;
	pthread_mutex_lock(lock);
	if (p->revindex || p->rev_map)
		goto out;
	if (p->pack_path && !getenv("GP_TEST_NO_REV_FILE")) {
		ret = load_rev_file(p, err);
		if (!ret)
			goto out;
		if (ret != GP_ENOTFOUND)
			goto out;
		gp_error_clear(err);
		ret = 0;
	}
	p->revindex = revindex_compute(p);
out:
	pthread_mutex_unlock(lock);
	return ret;
}

uint32_t pack_pos_to_idx(const struct packed_git *p, uint32_t pack_pos)
{
	if (p->rev_map)
		return revindex_entry(p->rev_map, pack_pos);
	return p->revindex[pack_pos];
}

uint64_t pack_pos_to_offset(const struct packed_git *p, uint32_t pack_pos)
{
	return pack_nth_offset(p, pack_pos_to_idx(p, pack_pos));
}

void pack_prefetch_pos(const struct packed_git *p, uint32_t pack_pos)
{
	uint32_t idx_pos;
	if (pack_pos >= p->nr_objects || p->idx_version < 2)
		return;
	idx_pos = pack_pos_to_idx(p, pack_pos);
	__builtin_prefetch(p->off32 + 4 * (size_t)idx_pos);
	__builtin_prefetch(p->crcs + 4 * (size_t)idx_pos);
}

uint64_t pack_pos_to_end(const struct packed_git *p, uint32_t pack_pos)
{
	if (pack_pos + 1 < p->nr_objects)
		return pack_pos_to_offset(p, pack_pos + 1);
	return p->pack_size - gp_hash_algos[p->algo].rawsz;
}

static bool offset_to_pos_between(const struct packed_git *p, uint64_t ofs, uint32_t lo,
				   uint32_t hi, uint32_t *pack_pos)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t here = pack_pos_to_offset(p, mid);
		if (here == ofs) {
			*pack_pos = mid;
			return true;
		}
		if (here < ofs)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool pack_offset_to_pos(const struct packed_git *p, uint64_t ofs, uint32_t *pack_pos)
{
	return offset_to_pos_between(p, ofs, 0, p->nr_objects, pack_pos);
}

bool pack_offset_to_pos_before(const struct packed_git *p, uint64_t ofs, uint32_t before,
			       uint32_t *pack_pos)
{
	uint32_t hi = MIN(before, p->nr_objects), step = 1;
	/* gallop back to a position at or below ofs, then bisect */
	while (hi) {
		uint32_t lo = hi > step ? hi - step : 0;
		uint64_t here = pack_pos_to_offset(p, lo);
		if (here <= ofs)
			return offset_to_pos_between(p, ofs, lo, hi, pack_pos);
		hi = lo;
		step *= 2;
	}
	return false;
}

/* ---- reading objects --------------------------------------------------- */

struct cached_base {
	const struct packed_git *pack;
	uint64_t ofs;
	enum object_type type;
	unsigned char *data;
	size_t size;
	struct cached_base *lru_prev, *lru_next; /* most recent at head */
	struct cached_base *hash_next;
};

#define RECENT_TREES 8
#define RECENT_TREE_MAX ((size_t)256 << 10)

struct pack_reader {
	struct inflater *inf;
	/* Chained hash table, doubled whenever it holds more than one entry a bucket. */
	struct cached_base **buckets;
	size_t nr_buckets;      /* a power of two */
	size_t nr_cached;
	struct cached_base *lru_head, *lru_tail;
	size_t cached_bytes, cache_limit;
	/*
	 * The last trees read, copies: a walk reads the versions of a tree
	 * one after another (newest first), each older one stored as a
	 * delta against the newer, which was the last read's result, not
	 * a base the cache had kept; every read inflated the whole newer
	 * version again. A ring, so that a walk that reads each tree once
	 * (a shallow clone's) holds no more than RECENT_TREES of them.
	 */
	struct recent_tree {
		const struct packed_git *pack;
		uint64_t ofs;
		unsigned char *data;
		size_t size;
	} recent[RECENT_TREES];
	unsigned recent_next;
};

#define DEFAULT_CACHE_LIMIT ((size_t)96 << 20)

struct pack_reader *pack_reader_new(size_t cache_limit)
{
	struct pack_reader *r = xcalloc(1, sizeof(*r));
	r->inf = inflater_new();
	r->cache_limit = cache_limit ? cache_limit : DEFAULT_CACHE_LIMIT;
	r->nr_buckets = 1024;
	r->buckets = xcalloc(r->nr_buckets, sizeof(*r->buckets));
	return r;
}

static size_t cache_bucket(const struct pack_reader *r, const struct packed_git *pack,
			   uint64_t ofs)
{
	uint64_t h = (ofs ^ ((uint64_t)(uintptr_t)pack << 7)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (r->nr_buckets - 1);
}

static void cache_grow(struct pack_reader *r)
{
	size_t old_nr = r->nr_buckets;
	struct cached_base **old = r->buckets;
	r->nr_buckets *= 2;
	r->buckets = xcalloc(r->nr_buckets, sizeof(*r->buckets));
	for (size_t b = 0; b < old_nr; b++) {
		struct cached_base *e = old[b], *next;
		for (; e; e = next) {
			size_t nb = cache_bucket(r, e->pack, e->ofs);
			next = e->hash_next;
			e->hash_next = r->buckets[nb];
			r->buckets[nb] = e;
		}
	}
	free(old);
}

static void cache_unlink(struct pack_reader *r, struct cached_base *e)
{
	struct cached_base **pp = &r->buckets[cache_bucket(r, e->pack, e->ofs)];
	while (*pp != e)
		pp = &(*pp)->hash_next;
	*pp = e->hash_next;
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		r->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		r->lru_tail = e->lru_prev;
	r->cached_bytes -= e->size;
	r->nr_cached--;
}

/* Take an entry out of the cache; the caller owns its data. */
static struct cached_base *cache_take(struct pack_reader *r,
				      const struct packed_git *pack, uint64_t ofs)
{
	struct cached_base *e = r->buckets[cache_bucket(r, pack, ofs)];
	for (; e; e = e->hash_next)
		if (e->pack == pack && e->ofs == ofs) {
			cache_unlink(r, e);
			return e;
		}
	return NULL;
}

static void cache_evict_to(struct pack_reader *r, size_t bytes)
{
	while (r->lru_tail && r->cached_bytes > bytes) {
		struct cached_base *old = r->lru_tail;
		cache_unlink(r, old);
		free(old->data);
		free(old);
	}
}

void pack_reader_set_cache_limit(struct pack_reader *r, size_t cache_limit)
{
	r->cache_limit = cache_limit ? cache_limit : DEFAULT_CACHE_LIMIT;
	cache_evict_to(r, r->cache_limit);
}

/* Give data to the cache (which frees it on eviction). */
static void cache_put(struct pack_reader *r, const struct packed_git *pack,
		      uint64_t ofs, enum object_type type, unsigned char *data,
		      size_t size)
{
	struct cached_base *e;
	size_t b;
	if (size > r->cache_limit / 4) {
		free(data);
		return;
	}
	cache_evict_to(r, r->cache_limit - size);
	e = xmalloc(sizeof(*e));
	e->pack = pack;
	e->ofs = ofs;
	e->type = type;
	e->data = data;
	e->size = size;
	if (r->nr_cached >= r->nr_buckets)
		cache_grow(r);
	b = cache_bucket(r, pack, ofs);
	e->hash_next = r->buckets[b];
	r->buckets[b] = e;
	e->lru_prev = NULL;
	e->lru_next = r->lru_head;
	if (r->lru_head)
		r->lru_head->lru_prev = e;
	r->lru_head = e;
	if (!r->lru_tail)
		r->lru_tail = e;
	r->cached_bytes += size;
	r->nr_cached++;
}

void pack_reader_free(struct pack_reader *r)
{
	if (!r)
		return;
	while (r->lru_head) {
		struct cached_base *e = r->lru_head;
		r->lru_head = e->lru_next;
		free(e->data);
		free(e);
	}
	for (unsigned i = 0; i < RECENT_TREES; i++)
		free(r->recent[i].data);
	inflater_free(r->inf);
	free(r->buckets);
	free(r);
}

/* A recent tree at (p, ofs), taken out of the ring (the caller owns its data). */
static bool recent_take(struct pack_reader *r, const struct packed_git *p, uint64_t ofs,
			unsigned char **data, size_t *size)
{
	for (unsigned i = 0; i < RECENT_TREES; i++) {
		struct recent_tree *t = &r->recent[i];
		if (t->data && t->pack == p && t->ofs == ofs) {
			*data = t->data;
			*size = t->size;
			t->data = NULL;
			return true;
		}
	}
	return false;
}

static void recent_put(struct pack_reader *r, const struct packed_git *p, uint64_t ofs,
		       const unsigned char *data, size_t size)
{
	struct recent_tree *t = &r->recent[r->recent_next];
	unsigned char *copy;
	if (size > RECENT_TREE_MAX || !(copy = malloc(size + 1)))
		return;
	memcpy(copy, data, size + 1);
	free(t->data);
	t->pack = p;
	t->ofs = ofs;
	t->data = copy;
	t->size = size;
	r->recent_next = (r->recent_next + 1) % RECENT_TREES;
}

/* Bytes of pack data available from ofs up to the trailing checksum. */
static size_t pack_avail(const struct packed_git *p, uint64_t ofs)
{
	size_t end = p->pack_size - gp_hash_algos[p->algo].rawsz;
	return ofs < end ? end - (size_t)ofs : 0;
}

static int inflate_entry(struct pack_reader *r, const struct packed_git *p,
			 uint64_t ofs, const struct pack_entry_header *hdr,
			 unsigned char **data, struct gp_error *err)
{
	const char *name = base_name(p->pack_path);
	uint64_t data_ofs = ofs + hdr->hdr_len;
	size_t avail = pack_avail(p, data_ofs), consumed;
	unsigned char *buf;
	int ret;

	if (hdr->size > SIZE_MAX - 1 ||
	    hdr->size / MAX_INFLATE_RATIO > (uint64_t)avail + 64)
		return CORRUPT(err, "%s: at offset %" PRIu64 ": size %" PRIu64
			       " is impossible for %zu bytes of compressed data",
			       name, ofs, hdr->size, avail);
	buf = malloc((size_t)hdr->size + 1);
	if (!buf)
		return gp_error_set(err, GP_ENOMEM, "%s: at offset %" PRIu64
				    ": cannot allocate %" PRIu64 " bytes", name, ofs, hdr->size);
	ret = inflate_exact(r->inf, p->pack_map + data_ofs, avail, buf,
			    (size_t)hdr->size, &consumed, err);
	if (ret) {
		free(buf);
		return gp_error_prefix(err, "%s: at offset %" PRIu64, name, ofs);
	}
	buf[hdr->size] = '\0';
	*data = buf;
	return 0;
}

static int entry_header_at(const struct packed_git *p, uint64_t ofs,
			   struct pack_entry_header *hdr, struct gp_error *err)
{
	int ret = pack_parse_entry_header(p->pack_map + ofs, pack_avail(p, ofs),
					  ofs, p->algo, hdr, err);
	if (ret)
		return gp_error_prefix(err, "%s", base_name(p->pack_path));
	return 0;
}

static int delta_base_offset(const struct packed_git *p, uint64_t ofs,
			     const struct pack_entry_header *hdr, uint64_t *base_ofs,
			     struct gp_error *err)
{
	uint32_t idx_pos;
	if (hdr->type == OBJ_OFS_DELTA) {
		*base_ofs = hdr->base_ofs;
		return 0;
	}
	if (!pack_find_oid(p, &hdr->base_oid, &idx_pos)) {
		char hex[GP_MAX_HEXSZ + 1];
		return gp_error_set(err, GP_ENOTFOUND,
				    "%s: at offset %" PRIu64 ": delta base %s is not in the pack",
				    base_name(p->pack_path), ofs, oid_to_hex_r(hex, &hdr->base_oid));
	}
	*base_ofs = pack_nth_offset(p, idx_pos);
	return 0;
}

int pack_read_object(struct pack_reader *r, struct packed_git *p, uint64_t ofs,
		     enum object_type *type_out, unsigned char **data_out,
		     size_t *size_out, struct gp_error *err)
{
	uint64_t *chain = NULL;
	size_t chain_nr = 0, chain_alloc = 0;
	uint64_t cur = ofs;
	unsigned char *base = NULL;
	size_t base_size = 0;
	enum object_type base_type = OBJ_NONE;
	struct pack_entry_header hdr;
	int ret;

	ret = pack_open_pack(p, err);
	if (ret)
		return ret;

	/* Walk down to a cached base or a whole object. */
	for (;;) {
		struct cached_base *hit = cache_take(r, p, cur);
		if (hit) {
			base = hit->data;
			base_size = hit->size;
			base_type = hit->type;
			free(hit);
			break;
		}
		if (recent_take(r, p, cur, &base, &base_size)) {
			base_type = OBJ_TREE;
			break;
		}
		ret = entry_header_at(p, cur, &hdr, err);
		if (ret)
			goto out;
		if (hdr.type != OBJ_OFS_DELTA && hdr.type != OBJ_REF_DELTA) {
			ret = inflate_entry(r, p, cur, &hdr, &base, err);
			if (ret)
				goto out;
			base_size = (size_t)hdr.size;
			base_type = hdr.type;
			break;
		}
		if (chain_nr >= PACK_MAX_DELTA_DEPTH) {
			ret = CORRUPT(err, "%s: at offset %" PRIu64 ": delta chain longer than %d (a loop?)",
				      base_name(p->pack_path), ofs, PACK_MAX_DELTA_DEPTH);
			goto out;
		}
		ALLOC_GROW(chain, chain_nr + 1, chain_alloc);
		chain[chain_nr++] = cur;
		ret = delta_base_offset(p, cur, &hdr, &cur, err);
		if (ret)
			goto out;
	}

	/* Apply the deltas back up the chain, caching each base. */
	while (chain_nr) {
		uint64_t delta_ofs = chain[--chain_nr];
		uint64_t base_sz, result_sz;
		size_t delta_hdr;
		unsigned char *delta = NULL, *result;

		/* These two name the pack and offset themselves. */
		ret = entry_header_at(p, delta_ofs, &hdr, err);
		if (!ret)
			ret = inflate_entry(r, p, delta_ofs, &hdr, &delta, err);
		if (!ret) {
			ret = delta_sizes(delta, (size_t)hdr.size, &base_sz, &result_sz, &delta_hdr, err);
			if (!ret && result_sz > SIZE_MAX - 1)
				ret = gp_error_set(err, GP_ENOMEM, "delta result too large");
			if (ret)
				gp_error_prefix(err, "%s: at offset %" PRIu64, base_name(p->pack_path), delta_ofs);
		}
		if (ret) {
			free(delta);
			goto out;
		}
		result = malloc((size_t)result_sz + 1);
		if (!result) {
			free(delta);
			ret = gp_error_set(err, GP_ENOMEM, "%s: at offset %" PRIu64 ": cannot allocate %" PRIu64 " bytes",
					   base_name(p->pack_path), delta_ofs, result_sz);
			goto out;
		}
		ret = delta_apply(base, base_size, delta, (size_t)hdr.size, result,
				  (size_t)result_sz, err);
		free(delta);
		if (ret) {
			free(result);
			gp_error_prefix(err, "%s: at offset %" PRIu64, base_name(p->pack_path), delta_ofs);
			goto out;
		}
		result[result_sz] = '\0';
		cache_put(r, p, cur, base_type, base, base_size);
		base = result;
		base_size = (size_t)result_sz;
		cur = delta_ofs;
	}
	if (base_type == OBJ_TREE)
		recent_put(r, p, ofs, base, base_size);
	*type_out = base_type;
	*data_out = base;
	*size_out = base_size;
	base = NULL;
out:
	free(base);
	free(chain);
	return ret;
}

void pack_drop_range(struct packed_git *p, uint64_t from, uint64_t to)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (from + page - 1) / page * page, end = to / page * page;
	if (!p->pack_open || !p->pack_map || to > p->pack_size || start >= end)
		return;
	madvise((void *)(p->pack_map + start), (size_t)(end - start), MADV_DONTNEED);
}

void pack_drop_pages(struct packed_git *p)
{
	if (p->pack_open && p->pack_map && p->pack_size)
		madvise((void *)p->pack_map, p->pack_size, MADV_DONTNEED);
}

int pack_read_entry(struct pack_reader *r, struct packed_git *p, uint64_t ofs,
		    struct pack_entry_header *hdr, unsigned char **data,
		    struct gp_error *err)
{
	int ret = pack_open_pack(p, err);
	if (!ret)
		ret = entry_header_at(p, ofs, hdr, err);
	if (!ret)
		ret = inflate_entry(r, p, ofs, hdr, data, err);
	return ret;
}

int pack_object_info(struct packed_git *p, uint64_t ofs,
		     struct pack_object_info *info, bool want_delta_base,
		     struct gp_error *err)
{
	struct pack_entry_header hdr;
	uint64_t cur = ofs;
	unsigned depth = 0;
	int ret = pack_open_pack(p, err);
	if (ret)
		return ret;
	ret = entry_header_at(p, ofs, &hdr, err);
	if (ret)
		return ret;
	info->size = hdr.size;
	oid_clear(&info->delta_base, p->algo);
	info->disk_size = 0;

	if (hdr.type == OBJ_OFS_DELTA || hdr.type == OBJ_REF_DELTA) {
		unsigned char prefix[32];
		size_t produced, hdr_len;
		uint64_t base_sz;
		size_t data_ofs = (size_t)ofs + hdr.hdr_len;
		ret = inflate_prefix(p->pack_map + data_ofs, pack_avail(p, data_ofs),
				     prefix, (size_t)MIN(hdr.size, (uint64_t)sizeof(prefix)),
				     &produced, err);
		if (!ret)
			ret = delta_sizes(prefix, produced, &base_sz, &info->size, &hdr_len, err);
		if (ret)
			return gp_error_prefix(err, "%s: at offset %" PRIu64, base_name(p->pack_path), ofs);
		if (!want_delta_base) {
			;
		} else if (hdr.type == OBJ_REF_DELTA) {
			info->delta_base = hdr.base_oid;
		} else {
			uint32_t pack_pos;
			ret = pack_load_revindex(p, err);
			if (ret)
				return ret;
			if (!pack_offset_to_pos(p, hdr.base_ofs, &pack_pos))
				return CORRUPT(err, "%s: at offset %" PRIu64 ": delta base offset %" PRIu64
					       " is not an object", base_name(p->pack_path), ofs, hdr.base_ofs);
			pack_nth_oid(p, pack_pos_to_idx(p, pack_pos), &info->delta_base);
		}
	}
	while (hdr.type == OBJ_OFS_DELTA || hdr.type == OBJ_REF_DELTA) {
		if (++depth > PACK_MAX_DELTA_DEPTH)
			return CORRUPT(err, "%s: at offset %" PRIu64 ": delta chain longer than %d (a loop?)",
				       base_name(p->pack_path), ofs, PACK_MAX_DELTA_DEPTH);
		ret = delta_base_offset(p, cur, &hdr, &cur, err);
		if (!ret)
			ret = entry_header_at(p, cur, &hdr, err);
		if (ret)
			return ret;
	}
	info->type = hdr.type;
	return 0;
}
