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

/*
 * Keys below 2^32 (packs under 4 GiB, the usual case): sort (key, pos)
 * pairs packed into one 64-bit word, at most 10 bits a pass (three passes
 * for packs under 1 GiB), so that each pass reads sequentially and
 * scatters into few enough buckets to stay in cache; the counts of all
 * passes come from one sweep.
 */
static uint32_t *sort_pairs(uint64_t *a, uint32_t nr, uint64_t max)
{
	enum { MAX_BITS = 10 };
	uint64_t *b = xmalloc(sizeof(*b) * (nr ? nr : 1));
	unsigned need = 0, passes, bits;
	size_t buckets;
	uint32_t *pos;
	size_t *counts;

	while (need < 32 && (max >> need))
		need++;
	passes = (need + MAX_BITS - 1) / MAX_BITS;
	bits = passes ? (need + passes - 1) / passes : 1;
	buckets = (size_t)1 << bits;
	counts = xcalloc((passes ? passes : 1) * buckets, sizeof(*counts));
	for (uint32_t i = 0; i < nr; i++)
		for (unsigned p = 0; p < passes; p++)
			counts[p * buckets + ((a[i] >> (32 + p * bits)) & (buckets - 1))]++;
	for (unsigned p = 0; p < passes; p++) {
		size_t sum = 0, *count = counts + p * buckets;
		unsigned shift = 32 + p * bits;
		uint64_t *swap;
		for (size_t d = 0; d < buckets; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < nr; i++)
			b[count[(a[i] >> shift) & (buckets - 1)]++] = a[i];
		swap = a;
		a = b;
		b = swap;
	}
	pos = (uint32_t *)b; /* reuse: nr 32-bit slots fit in nr 64-bit ones */
	for (uint32_t i = 0; i < nr; i++)
		pos[i] = (uint32_t)a[i];
	free(counts);
	free(a);
	return pos;
}

static uint32_t *sort_small_keys(const uint64_t *keys, uint32_t nr, uint64_t max)
{
	uint64_t *a = xmalloc(sizeof(*a) * (nr ? nr : 1));
	for (uint32_t i = 0; i < nr; i++)
		a[i] = keys[i] << 32 | i;
	return sort_pairs(a, nr, max);
}

uint32_t *sort_positions_by_u64(const uint64_t *keys, uint32_t nr)
{
	uint32_t *pos, *tmp;
	uint64_t max = 0;
	size_t *counts;

	for (uint32_t i = 0; i < nr; i++)
		if (keys[i] > max)
			max = keys[i];
	if (max <= UINT32_MAX)
		return sort_small_keys(keys, nr, max);

	pos = xmalloc(sizeof(*pos) * (nr ? nr : 1));
	tmp = xmalloc(sizeof(*tmp) * (nr ? nr : 1));
	counts = xmalloc(sizeof(size_t) * 65536);
	for (uint32_t i = 0; i < nr; i++)
		pos[i] = i;
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

/*
 * The pack order of a pack under 4 GiB, by radix sort of (offset, idx_pos)
 * pairs: digits of 10, 10 and 12 bits, few enough buckets for each pass
 * to scatter within the cache. A pass whose digits are all equal (the
 * high digit of a small pack) is skipped. Opening a pack bitmap without
 * a .rev waits on this, so big packs are sorted by two threads, each
 * owning half of the input of every pass and scattering it to positions
 * computed from both halves' counts, which keeps the sort stable.
 */
enum {
	DIGIT_BITS = 10,
	PASSES = 3,
	BUCKETS = 1 << DIGIT_BITS,
	TOP_BUCKETS = 1 << (32 - 2 * DIGIT_BITS),
	SORT_JOBS = 2,
	PARALLEL_MIN = 1 << 17,
};
static const size_t digit_first[PASSES + 1] = {
	0, BUCKETS, 2 * BUCKETS, 2 * BUCKETS + TOP_BUCKETS
};

struct sort_job {
	const struct packed_git *pack;
	uint32_t lo, hi;        /* this job's slice of every pass's input */
	uint64_t *src, *dst;
	unsigned pass;
	bool gather, too_big;
	size_t counts[2 * BUCKETS + TOP_BUCKETS];
};

static inline size_t digit_of(uint64_t pair, unsigned pass)
{
	return (pair >> (32 + pass * DIGIT_BITS)) &
		(digit_first[pass + 1] - digit_first[pass] - 1);
}

static void *sort_worker(void *arg)
{
	struct sort_job *job = arg;
	size_t *count = job->counts + digit_first[job->pass];
	if (job->gather) {
		/* First sweep: gather the pairs and count the first digit. */
		memset(job->counts, 0, sizeof(job->counts));
		for (uint32_t idx_pos = job->lo; idx_pos < job->hi; idx_pos++) {
			uint64_t ofs = pack_nth_offset(job->pack, idx_pos);
			if (ofs > UINT32_MAX) {
				job->too_big = true;
				break;
			}
			job->dst[idx_pos] = ofs << 32 | idx_pos;
			count[digit_of(job->dst[idx_pos], 0)]++;
		}
	} else if (job->dst) {
		for (uint32_t i = job->lo; i < job->hi; i++)
			job->dst[count[digit_of(job->src[i], job->pass)]++] = job->src[i];
	} else {
		memset(count, 0, sizeof(*count) * (digit_first[job->pass + 1] - digit_first[job->pass]));
		for (uint32_t i = job->lo; i < job->hi; i++)
			count[digit_of(job->src[i], job->pass)]++;
	}
	return NULL;
}

static uint32_t *revindex_compute_small(const struct packed_git *p, bool *too_big)
{
	uint32_t nr = p->nr_objects;
	int nr_jobs = nr >= PARALLEL_MIN ? SORT_JOBS : 1;
	struct sort_job *jobs = xcalloc(nr_jobs, sizeof(*jobs));
	uint64_t *a = xmalloc(sizeof(*a) * (nr ? nr : 1));
	uint64_t *b = xmalloc(sizeof(*b) * (nr ? nr : 1));
	uint32_t *pos = NULL;

	for (int t = 0; t < nr_jobs; t++) {
		jobs[t].pack = p;
		jobs[t].lo = (uint32_t)((uint64_t)nr * t / nr_jobs);
		jobs[t].hi = (uint32_t)((uint64_t)nr * (t + 1) / nr_jobs);
		jobs[t].dst = a;
		jobs[t].gather = true;
	}
	run_parallel(sort_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
	for (int t = 0; t < nr_jobs; t++)
		if (jobs[t].too_big)
			*too_big = true;
	if (*too_big)
		goto out;

	for (unsigned pass = 0; pass < PASSES; pass++) {
		size_t buckets = digit_first[pass + 1] - digit_first[pass];
		size_t sum = 0;
		bool one_bucket = false;
		uint64_t *swap;
		for (int t = 0; t < nr_jobs; t++) {
			jobs[t].gather = false;
			jobs[t].pass = pass;
			jobs[t].src = a;
			jobs[t].dst = NULL;
		}
		if (pass)
			run_parallel(sort_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
		/* Each job's start in each bucket: all earlier buckets, then
		 * this bucket's entries from earlier jobs. */
		for (size_t digit = 0; digit < buckets; digit++) {
			size_t in_bucket = 0;
			for (int t = 0; t < nr_jobs; t++) {
				size_t *c = &jobs[t].counts[digit_first[pass] + digit];
				size_t here = *c;
				*c = sum;
				sum += here;
				in_bucket += here;
			}
			if (in_bucket == nr)
				one_bucket = true;
		}
		if (one_bucket)
			continue;
		for (int t = 0; t < nr_jobs; t++)
			jobs[t].dst = b;
		run_parallel(sort_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
		swap = a;
		a = b;
		b = swap;
	}
	pos = (uint32_t *)b; /* reuse: nr 32-bit slots fit in nr 64-bit ones */
	b = NULL;
	for (uint32_t pack_pos = 0; pack_pos < nr; pack_pos++)
		pos[pack_pos] = (uint32_t)a[pack_pos];
out:
	free(jobs);
	free(a);
	free(b);
	return pos;
}

uint32_t *revindex_compute(const struct packed_git *p)
{
	uint64_t *offsets;
	uint32_t *order;
	bool too_big = false;

	order = revindex_compute_small(p, &too_big);
	if (!too_big)
		return order;
	offsets = xmalloc(sizeof(*offsets) * (p->nr_objects ? p->nr_objects : 1));
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
