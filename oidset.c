/*
 * oidset.c: see oidset.h. Linear probing; the table doubles when it is
 * two-thirds full.
 */
#include "oidset.h"

static size_t slot_of(const struct object_id *oid, size_t mask)
{
	uint64_t key;
	memcpy(&key, oid->hash, sizeof(key));
	return (size_t)key & mask;
}

static void grow(struct oidset *set)
{
	size_t old_size = set->table_size;
	struct object_id *old = set->slots;
	set->table_size = old_size ? old_size * 2 : 64;
	set->slots = xcalloc(set->table_size, sizeof(*set->slots));
	for (size_t i = 0; i < old_size; i++) {
		size_t mask = set->table_size - 1, at;
		if (!old[i].algo)
			continue;
		for (at = slot_of(&old[i], mask); set->slots[at].algo; at = (at + 1) & mask)
			;
		set->slots[at] = old[i];
	}
	free(old);
}

bool oidset_insert(struct oidset *set, const struct object_id *oid)
{
	size_t mask, at;
	if ((set->nr + 1) * 3 >= set->table_size * 2)
		grow(set);
	mask = set->table_size - 1;
	for (at = slot_of(oid, mask); set->slots[at].algo; at = (at + 1) & mask)
		if (oideq(&set->slots[at], oid))
			return false;
	set->slots[at] = *oid;
	set->nr++;
	return true;
}

bool oidset_contains(const struct oidset *set, const struct object_id *oid)
{
	size_t mask, at;
	if (!set->table_size)
		return false;
	mask = set->table_size - 1;
	for (at = slot_of(oid, mask); set->slots[at].algo; at = (at + 1) & mask)
		if (oideq(&set->slots[at], oid))
			return true;
	return false;
}

const struct object_id *oidset_next(const struct oidset *set, size_t *pos)
{
	while (*pos < set->table_size) {
		const struct object_id *oid = &set->slots[(*pos)++];
		if (oid->algo)
			return oid;
	}
	return NULL;
}

void oidset_release(struct oidset *set)
{
	free(set->slots);
	set->slots = NULL;
	set->table_size = set->nr = 0;
}
