/*
 * fuzz-object-filter.c: --filter=<filter-spec> parsing, object_filter_add()
 * and the walkless predicate.
 *
 * Input: filter specs separated by NUL bytes, added one after another
 * as repeated --filter options add them (seeds: t/fuzz/corpus/object-filter/,
 * written by hand to git-rev-list(1)'s "--filter" and the edge cases
 * git's own parser was probed with).
 *
 * Checks beyond "no crash":
 *  - a refused spec fails with GP_EINVAL and a message, and leaves the
 *    filter as it was;
 *  - the spec the filter reports parses back to the very same filter
 *    (kinds, numbers, names, sub-filters and their specs): the
 *    combine: spec of several added specs, with its %-encoding, loses
 *    nothing;
 *  - a walkless filter answers object_filter_omits() for every type,
 *    and a blob:limit omits exactly the blobs at or over its limit.
 */
#include "fuzz.h"
#include "object-filter.h"

static bool same_filter(const struct object_filter *a, const struct object_filter *b,
			bool compare_spec)
{
	if (a->kind != b->kind || a->nr_subs != b->nr_subs)
		return false;
	if (compare_spec && strcmp(a->spec ? a->spec : "", b->spec ? b->spec : ""))
		return false;
	switch (a->kind) {
	case OBJECT_FILTER_BLOB_LIMIT:
		return a->blob_limit == b->blob_limit;
	case OBJECT_FILTER_TREE_DEPTH:
		return a->tree_depth == b->tree_depth;
	case OBJECT_FILTER_SPARSE_OID:
		return !strcmp(a->sparse_oid, b->sparse_oid);
	case OBJECT_FILTER_OBJECT_TYPE:
		return a->type == b->type;
	case OBJECT_FILTER_COMBINE:
		for (size_t i = 0; i < a->nr_subs; i++)
			if (!same_filter(&a->subs[i], &b->subs[i], true))
				return false;
		return true;
	default:
		return true;
	}
}

/* f must be what its own spec parses to. */
static void check_round_trip(const struct object_filter *f)
{
	struct object_filter again = OBJECT_FILTER_INIT;
	struct gp_error err = GP_ERROR_INIT;
	if (f->kind == OBJECT_FILTER_NONE) {
		if (object_filter_spec(f))
			fuzz_fail("an empty filter has a spec");
		return;
	}
	if (!object_filter_spec(f))
		fuzz_fail("a %s filter has no spec", object_filter_kind_name(f->kind));
	if (object_filter_parse(&again, object_filter_spec(f), &err))
		fuzz_fail("the filter's own spec '%s' does not parse: %s",
			  object_filter_spec(f), gp_error_msg(&err));
	if (!same_filter(f, &again, false))
		fuzz_fail("'%s' parses to another filter", object_filter_spec(f));
	object_filter_release(&again);
}

static void check_predicate(const struct object_filter *f)
{
	static const uint64_t sizes[] = { 0, 1, 1023, 1024, UINT64_MAX };
	if (!object_filter_is_walkless(f))
		return;
	for (int type = OBJ_COMMIT; type <= OBJ_TAG; type++)
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			bool omits = object_filter_omits(f, (enum object_type)type, sizes[i]);
			if (f->kind == OBJECT_FILTER_BLOB_LIMIT &&
			    omits != (type == OBJ_BLOB && sizes[i] >= f->blob_limit))
				fuzz_fail("blob:limit=%" PRIu64 " %s a %s of %" PRIu64,
					  f->blob_limit, omits ? "omits" : "keeps",
					  type_name((enum object_type)type), sizes[i]);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct object_filter f = OBJECT_FILTER_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char *text = xmalloc(size + 1);
	size_t pos = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	while (pos <= size) {
		const char *spec = text + pos;
		int ret;
		char *before = f.spec ? xstrdup(f.spec) : NULL;
		ret = object_filter_add(&f, spec, &err);
		if (ret) {
			fuzz_check_error(ret, &err, GP_EINVAL, "object_filter_add");
			if (strcmp(before ? before : "", f.spec ? f.spec : ""))
				fuzz_fail("a refused spec changed the filter");
		}
		free(before);
		check_round_trip(&f);
		check_predicate(&f);
		pos += strlen(spec) + 1;
	}
	object_filter_release(&f);
	if (object_filter_spec(&f) || f.kind != OBJECT_FILTER_NONE)
		fuzz_fail("a released filter is not empty");
	free(text);
	return 0;
}
