/*
 * oid-array.h: a table of object ids of one hash algorithm, filled in
 * any order, then sorted and deduplicated once and searched by binary
 * search.
 *
 * The ids are kept raw (rawsz bytes each, no padding), so a table of a
 * million SHA-1 ids is 20 MB. Sorting is a counting sort on the first
 * two bytes, whose buckets then hold a handful of ids each when the ids
 * are hashes, finished by insertion sort: O(n) for hash-distributed
 * input. Small tables, where the 65536 counters would cost more than
 * they save, are sorted with qsort().
 *
 *   struct oid_array ids = OID_ARRAY_INIT;
 *   oid_array_init(&ids, algo);
 *   oid_array_append(&ids, &oid);       ... as often as needed
 *   oid_array_sort_unique(&ids);
 *   if (oid_array_find(&ids, oid.hash, &pos)) ...
 *   oid_array_release(&ids);
 */
#ifndef GP_OID_ARRAY_H
#define GP_OID_ARRAY_H

#include "object.h"

struct oid_array {
	unsigned char *raw; /* nr ids of rawsz bytes each */
	size_t nr, alloc;   /* in ids */
	size_t rawsz;
	int algo;
	bool sorted;        /* sorted and unique since the last append */
	size_t *fanout;     /* when sorted, [b]: the ids whose first byte is <= b */
};

#define OID_ARRAY_INIT { .raw = NULL }

void oid_array_init(struct oid_array *ids, int algo);
/* Free the ids; the array is empty (and reusable) afterwards. */
void oid_array_release(struct oid_array *ids);

/* Make room for nr_more more ids without reallocating. */
void oid_array_grow(struct oid_array *ids, size_t nr_more);
/* Add an id (of the array's algorithm); clears the sorted state. O(1). */
void oid_array_append(struct oid_array *ids, const struct object_id *oid);
void oid_array_append_raw(struct oid_array *ids, const unsigned char *raw);

/*
 * Sort the ids and drop duplicates. O(n) for hashes (O(n log n) at
 * worst); positions change.
 */
void oid_array_sort_unique(struct oid_array *ids);

/*
 * Where raw (rawsz bytes) sits in a sorted array. BUG() when the array
 * was appended to since its last sort. O(log n).
 */
bool oid_array_find(const struct oid_array *ids, const unsigned char *raw,
		    size_t *pos);

/* Id pos (< nr): borrowed, valid until the next append or release. */
static inline const unsigned char *oid_array_raw(const struct oid_array *ids,
						 size_t pos)
{
	return ids->raw + pos * ids->rawsz;
}
void oid_array_get(const struct oid_array *ids, size_t pos, struct object_id *oid);

#endif
