/*
 * oid-array.c: a sorted table of object ids (see oid-array.h).
 *
 * The sort scatters the ids into 65536 buckets by their first two
 * bytes, which for hashes leaves about n / 65536 ids a bucket, and
 * insertion-sorts each bucket in place; a bucket that comes out big
 * (ids that are not hashes, or many duplicates) is finished by qsort()
 * so the worst case stays O(n log n).
 */
#include "oid-array.h"

/* Below this many ids the 65536 counters cost more than they save. */
#define RADIX_MIN 4096
/* A bucket with more ids than this is sorted with qsort(). */
#define INSERTION_MAX 32

void oid_array_init(struct oid_array *ids, int algo)
{
	memset(ids, 0, sizeof(*ids));
	ids->algo = algo;
	ids->rawsz = gp_hash_algos[algo].rawsz;
}

void oid_array_release(struct oid_array *ids)
{
	int algo = ids->algo;
	free(ids->raw);
	free(ids->fanout);
	oid_array_init(ids, algo);
}

void oid_array_grow(struct oid_array *ids, size_t nr_more)
{
	size_t want, bytes;
	if (!st_add(ids->nr, nr_more, &want) || !st_mult(want, ids->rawsz, &bytes))
		BUG("oid_array of %zu + %zu ids overflows", ids->nr, nr_more);
	if (want <= ids->alloc)
		return;
	ids->raw = xrealloc(ids->raw, bytes ? bytes : 1);
	ids->alloc = want;
}

void oid_array_append_raw(struct oid_array *ids, const unsigned char *raw)
{
	if (ids->nr == ids->alloc)
		oid_array_grow(ids, ids->alloc / 2 + 16);
	memcpy(ids->raw + ids->nr * ids->rawsz, raw, ids->rawsz);
	ids->nr++;
	ids->sorted = false;
}

void oid_array_append(struct oid_array *ids, const struct object_id *oid)
{
	if (oid->algo != ids->algo)
		BUG("oid_array of algorithm %d given an id of %d", ids->algo, oid->algo);
	oid_array_append_raw(ids, oid->hash);
}

static int cmp_raw(const void *a, const void *b, void *rawsz)
{
	return memcmp(a, b, *(size_t *)rawsz);
}

static void insertion_sort(unsigned char *base, size_t nr, size_t rawsz,
			   unsigned char *tmp)
{
	for (size_t i = 1; i < nr; i++) {
		size_t j = i;
		if (memcmp(base + (j - 1) * rawsz, base + j * rawsz, rawsz) <= 0)
			continue;
		memcpy(tmp, base + j * rawsz, rawsz);
		while (j && memcmp(base + (j - 1) * rawsz, tmp, rawsz) > 0) {
			memcpy(base + j * rawsz, base + (j - 1) * rawsz, rawsz);
			j--;
		}
		memcpy(base + j * rawsz, tmp, rawsz);
	}
}

/* Sort by scattering into buckets of the first two bytes; returns the new buffer. */
static unsigned char *bucket_sort(const unsigned char *raw, size_t nr, size_t rawsz)
{
	size_t *end = xcalloc(65536, sizeof(*end));
	unsigned char *sorted = xmalloc(nr * rawsz);
	unsigned char tmp[GP_MAX_RAWSZ];
	size_t sum = 0;

	for (size_t i = 0; i < nr; i++)
		end[get_be16(raw + i * rawsz)]++;
	/* end[b] becomes where bucket b starts, and after the scatter, where it ends */
	for (size_t b = 0; b < 65536; b++) {
		size_t count = end[b];
		end[b] = sum;
		sum += count;
	}
	for (size_t i = 0; i < nr; i++)
		memcpy(sorted + end[get_be16(raw + i * rawsz)]++ * rawsz, raw + i * rawsz, rawsz);
	for (size_t b = 0, lo = 0; b < 65536; lo = end[b++]) {
		size_t n = end[b] - lo;
		if (n > INSERTION_MAX)
			qsort_r(sorted + lo * rawsz, n, rawsz, cmp_raw, &rawsz);
		else if (n > 1)
			insertion_sort(sorted + lo * rawsz, n, rawsz, tmp);
	}
	free(end);
	return sorted;
}

void oid_array_sort_unique(struct oid_array *ids)
{
	size_t rawsz = ids->rawsz, out = 0;
	if (ids->sorted)
		return;
	if (ids->nr >= RADIX_MIN) {
		unsigned char *sorted = bucket_sort(ids->raw, ids->nr, rawsz);
		free(ids->raw);
		ids->raw = sorted;
		ids->alloc = ids->nr;
	} else if (ids->nr > 1) {
		qsort_r(ids->raw, ids->nr, rawsz, cmp_raw, &rawsz);
	}
	for (size_t i = 0; i < ids->nr; i++) {
		const unsigned char *id = ids->raw + i * rawsz;
		if (out && !memcmp(ids->raw + (out - 1) * rawsz, id, rawsz))
			continue;
		if (out != i)
			memcpy(ids->raw + out * rawsz, id, rawsz);
		out++;
	}
	ids->nr = out;

	if (!ids->fanout)
		ids->fanout = xmalloc(256 * sizeof(*ids->fanout));
	memset(ids->fanout, 0, 256 * sizeof(*ids->fanout));
	for (size_t i = 0; i < ids->nr; i++)
		ids->fanout[ids->raw[i * rawsz]]++;
	for (size_t b = 1; b < 256; b++)
		ids->fanout[b] += ids->fanout[b - 1];
	ids->sorted = true;
}

bool oid_array_find(const struct oid_array *ids, const unsigned char *raw, size_t *pos)
{
	size_t lo, hi;
	if (!ids->sorted)
		BUG("oid_array_find() on an unsorted array");
	lo = raw[0] ? ids->fanout[raw[0] - 1] : 0;
	hi = ids->fanout[raw[0]];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(ids->raw + mid * ids->rawsz, raw, ids->rawsz);
		if (!cmp) {
			*pos = mid;
			return true;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void oid_array_get(const struct oid_array *ids, size_t pos, struct object_id *oid)
{
	oid_from_raw(oid, oid_array_raw(ids, pos), ids->algo);
}
