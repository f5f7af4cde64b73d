/*
 * fuzz-reftable.c: the reftable parser of reftable.c, one table at a time
 * and two merged as a stack.
 *
 * Input: one flag byte, then the image(s). Flag bit 0: SHA-256 (else
 * SHA-1). Bit 1 clear: the rest is one table. Bit 1 set: a 4-byte
 * big-endian length L, then an older table of L bytes and a newer one
 * (the rest), read as a stack. Seeds: t/fuzz/corpus/reftable/, tables git
 * wrote (see make-corpus.sh).
 *
 * Checks beyond "no crash": every failure is GP_ECORRUPT with a message;
 * a table's ref names increase strictly, values have a known type and
 * ids of the right algorithm, symref targets are NUL-free; log keys
 * increase (refname, then update index decreasing); when the whole table
 * read cleanly and has no index (an index is not cross-checked against
 * the blocks), looking each name up finds its own record; and a stack's
 * merged view has increasing names and no deletion, and each of its
 * names reads back as a live ref.
 */
#include "fuzz.h"
#include "reftable.h"
#include "strbuf.h"

#define MAX_LOOKUPS 64

struct seen_refs {
	char **names;
	size_t nr, alloc;
};

static void check_ref(const struct reftable_ref *ref, const char *prev, int algo, bool merged)
{
	if (prev && strcmp(prev, ref->name) >= 0)
		fuzz_fail("refs out of order: '%s' after '%s'", ref->name, prev);
	switch (ref->type) {
	case REFTABLE_REF_DELETION:
		if (merged)
			fuzz_fail("'%s': a deletion in the merged view", ref->name);
		break;
	case REFTABLE_REF_VAL2:
		if (ref->peeled.algo != algo)
			fuzz_fail("'%s': peeled id of the wrong algorithm", ref->name);
		/* fall through */
	case REFTABLE_REF_VAL1:
		if (ref->oid.algo != algo)
			fuzz_fail("'%s': id of the wrong algorithm", ref->name);
		break;
	case REFTABLE_REF_SYMREF:
		if (!ref->target || !*ref->target)
			fuzz_fail("'%s': a symref without a target", ref->name);
		break;
	default:
		fuzz_fail("'%s': value type %d", ref->name, (int)ref->type);
	}
	if (ref->type != REFTABLE_REF_SYMREF && ref->target)
		fuzz_fail("'%s': a target on a non-symref", ref->name);
}

/* All ref records of it into seen (when not NULL); false when reading failed. */
static bool walk_refs(struct reftable_iter *it, int algo, bool merged, struct seen_refs *seen)
{
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_ref ref;
	char *prev = NULL;
	int ret;

	while ((ret = reftable_iter_next_ref(it, &ref, &err)) > 0) {
		check_ref(&ref, prev, algo, merged);
		free(prev);
		prev = xstrdup(ref.name);
		if (seen) {
			ALLOC_GROW(seen->names, seen->nr + 1, seen->alloc);
			seen->names[seen->nr++] = xstrdup(ref.name);
		}
	}
	free(prev);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_iter_next_ref");
	return !ret;
}

static bool walk_logs(struct reftable_iter *it, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_log log;
	char *prev = NULL;
	uint64_t prev_index = 0;
	int ret;

	while ((ret = reftable_iter_next_log(it, &log, &err)) > 0) {
		int cmp = prev ? strcmp(prev, log.refname) : -1;
		if (cmp > 0 || (!cmp && prev_index <= log.update_index))
			fuzz_fail("logs out of order: '%s' %" PRIu64 " after '%s' %" PRIu64,
				  log.refname, log.update_index, prev, prev_index);
		if (log.type == REFTABLE_LOG_UPDATE &&
		    (log.old_oid.algo != algo || log.new_oid.algo != algo))
			fuzz_fail("'%s': log ids of the wrong algorithm", log.refname);
		free(prev);
		prev = xstrdup(log.refname);
		prev_index = log.update_index;
	}
	free(prev);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_iter_next_log");
	return !ret;
}

static void release_seen(struct seen_refs *seen)
{
	for (size_t i = 0; i < seen->nr; i++)
		free(seen->names[i]);
	free(seen->names);
}

/* Read one table all through; returns it (or NULL when it does not open). */
static struct reftable_table *fuzz_table(const uint8_t *data, size_t size, int algo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_table *t = NULL;
	struct reftable_iter *it = NULL;
	struct reftable_table_info info;
	struct seen_refs seen = { NULL, 0, 0 };
	bool clean;
	int ret;

	ret = reftable_table_open_buf(&t, data, size, "fuzz.ref", algo, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_table_open_buf");
		return NULL;
	}
	reftable_table_info(t, &info);
	ret = reftable_table_refs(t, NULL, &it, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_table_refs");
		clean = false;
	} else {
		clean = walk_refs(it, algo, false, &seen);
	}
	reftable_iter_free(it);
	it = NULL;

	/* A name looked up finds its record, when nothing else can mislead the seek. */
	for (size_t i = 0; clean && !info.ref_index_pos && i < seen.nr && i < MAX_LOOKUPS; i++) {
		struct reftable_ref ref;
		const char *name = seen.names[i * (seen.nr / MAX_LOOKUPS + 1) % seen.nr];
		ret = reftable_table_refs(t, name, &it, &err);
		if (!ret)
			ret = reftable_iter_next_ref(it, &ref, &err);
		if (ret != 1 || strcmp(ref.name, name))
			fuzz_fail("'%s' listed, but not found by a lookup (%d: %s)", name, ret,
				  gp_error_msg(&err));
		reftable_iter_free(it);
		it = NULL;
	}
	release_seen(&seen);

	ret = reftable_table_logs(t, NULL, &it, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_table_logs");
	else
		walk_logs(it, algo);
	reftable_iter_free(it);
	it = NULL;
	ret = reftable_table_logs(t, "HEAD", &it, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_table_logs");
	else
		walk_logs(it, algo);
	reftable_iter_free(it);
	return t;
}

static void fuzz_stack(struct reftable_table *old, struct reftable_table *new, int algo)
{
	struct reftable_table *tables[2] = { old, new };
	struct reftable_stack *st = reftable_stack_of_tables(tables, 2);
	struct seen_refs seen = { NULL, 0, 0 };
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_iter *it = NULL;
	struct strbuf target = STRBUF_INIT;
	int ret;

	ret = reftable_stack_refs(st, NULL, &it, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_stack_refs");
	else if (walk_refs(it, algo, true, &seen)) {
		/* each merged name reads back, as the stack says */
		for (size_t i = 0; i < seen.nr && i < MAX_LOOKUPS; i++) {
			struct reftable_ref ref;
			ret = reftable_stack_read_ref(st, seen.names[i], &ref, &target, &err);
			if (ret)
				fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_stack_read_ref");
			else if (ref.type == REFTABLE_REF_DELETION)
				fuzz_fail("'%s': read as a deletion", seen.names[i]);
		}
	}
	reftable_iter_free(it);
	it = NULL;
	ret = reftable_stack_logs(st, NULL, &it, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "reftable_stack_logs");
	else
		walk_logs(it, algo);
	reftable_iter_free(it);
	release_seen(&seen);
	strbuf_release(&target);
	reftable_stack_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int algo;

	if (!size)
		return 0;
	algo = (data[0] & 1) ? GP_HASH_SHA256 : GP_HASH_SHA1;
	if (data[0] & 2) {
		struct reftable_table *old, *new;
		size_t len;
		if (size < 5)
			return 0;
		len = get_be32(data + 1);
		if (len > size - 5)
			return 0;
		old = fuzz_table(data + 5, len, algo);
		new = fuzz_table(data + 5 + len, size - 5 - len, algo);
		if (old && new)
			fuzz_stack(old, new, algo);
		reftable_table_free(old);
		reftable_table_free(new);
	} else {
		reftable_table_free(fuzz_table(data + 1, size - 1, algo));
	}
	return 0;
}
