/*
 * fuzz-refs.c: the packed-refs parser and the loose ref parser of
 * refs.c, through refs_parse_packed_buf() and refs_parse_loose_buf().
 *
 * Input: one flag byte, then the file. Flag bit 0: SHA-256 (else
 * SHA-1); bit 1: a loose ref file (else packed-refs). Seeds:
 * t/fuzz/corpus/refs/, written by git (pack-refs, HEAD, a branch).
 *
 * Checks beyond "no crash": a failure is GP_ECORRUPT with a message;
 * packed entries come in strictly increasing refname order, with
 * REF_ISBROKEN exactly when the name is not well formed, and a peeled
 * id only with REF_KNOWS_PEELED; a loose ref is either an id that is
 * not null or a symbolic ref to a well-formed name.
 */
#include "fuzz.h"
#include "refs.h"

struct seen {
	char *last;
	int algo;
};

static int check_entry(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct seen *s = data;
	bool valid = refname_is_valid(refname, REFNAME_ALLOW_ONELEVEL);

	if (s->last && strcmp(s->last, refname) >= 0)
		fuzz_fail("packed refs out of order: '%s' after '%s'", refname, s->last);
	if (valid == !!(flags & REF_ISBROKEN))
		fuzz_fail("'%s': broken flag %u, but the name is %svalid", refname,
			  flags & REF_ISBROKEN, valid ? "" : "not ");
	if (peeled && !(flags & REF_KNOWS_PEELED))
		fuzz_fail("'%s': a peeled id without REF_KNOWS_PEELED", refname);
	if (oid->algo != s->algo || (peeled && peeled->algo != s->algo))
		fuzz_fail("'%s': id of the wrong algorithm", refname);
	free(s->last);
	s->last = xstrdup(refname);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	int algo, ret;

	if (!size)
		return 0;
	algo = (data[0] & 1) ? GP_HASH_SHA256 : GP_HASH_SHA1;
	if (data[0] & 2) {
		struct object_id oid;
		char *target = NULL;
		ret = refs_parse_loose_buf((const char *)data + 1, size - 1, algo, &oid,
					   &target, &err);
		if (ret) {
			fuzz_check_error(ret, &err, GP_ECORRUPT, "refs_parse_loose_buf");
		} else if (target) {
			if (!refname_is_valid(target, REFNAME_ALLOW_ONELEVEL))
				fuzz_fail("symbolic ref to invalid name '%s'", target);
		} else if (oid_is_null(&oid) || oid.algo != algo) {
			fuzz_fail("loose ref parsed to a null or foreign id");
		}
		free(target);
	} else {
		struct seen s = { NULL, algo };
		ret = refs_parse_packed_buf((const char *)data + 1, size - 1, algo,
					    check_entry, &s, &err);
		if (ret)
			fuzz_check_error(ret, &err, GP_ECORRUPT, "refs_parse_packed_buf");
		free(s.last);
	}
	return 0;
}
