/*
 * oidset.h: a set of object ids (an open-addressing hash table keyed by
 * the name's leading bytes, which are uniformly distributed already).
 *
 *	struct oidset set = OIDSET_INIT;
 *	oidset_insert(&set, &oid);
 *	if (oidset_contains(&set, &oid)) ...
 *	oidset_release(&set);
 *
 * Every id in one set must have the same algorithm. Insert and lookup
 * are O(1) expected; memory is about 1.5x the ids' size.
 */
#ifndef GP_OIDSET_H
#define GP_OIDSET_H

#include "object.h"

struct oidset {
	struct object_id *slots;   /* table_size entries; algo 0 marks a free one */
	size_t table_size;         /* a power of two, or 0 */
	size_t nr;
};

#define OIDSET_INIT { .slots = NULL }

/* True when oid was not in the set before. */
bool oidset_insert(struct oidset *set, const struct object_id *oid);
bool oidset_contains(const struct oidset *set, const struct object_id *oid);
static inline size_t oidset_size(const struct oidset *set)
{
	return set->nr;
}
void oidset_release(struct oidset *set);

/*
 * Iterate: *pos starts at 0; returns the next member, or NULL at the end.
 * The set must not change meanwhile.
 */
const struct object_id *oidset_next(const struct oidset *set, size_t *pos);

#endif
