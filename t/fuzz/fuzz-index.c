/*
 * fuzz-index.c: index file images through index_find_in_buf().
 *
 * Input: a whole index file (seeds: t/fuzz/corpus/index/, written by
 * git update-index with --index-version 2, 3 and 4, SHA-1 and SHA-256,
 * with a path that has an extended flag (--intent-to-add) and a
 * conflicted path at stages 1-3). Each image is searched as SHA-1 and
 * as SHA-256 for a few paths at every stage.
 *
 * Checks beyond "no crash": a failure is GP_ECORRUPT or GP_EINVAL (a
 * split index) with a message; a hit is reported only at the stage
 * asked for, with an entry only then; the same lookup gives the same
 * answer twice.
 */
#include "fuzz.h"
#include "repo-index.h"

static const char *const paths[] = {
	"a", "b", "conflict", "dir/file", "dir/sub/deep", "intent", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy, so ASan catches reads past the end. */
	unsigned char *copy = xmalloc(size ? size : 1);
	memcpy(copy, data, size);
	for (int algo = GP_HASH_SHA1; algo <= GP_HASH_SHA256; algo++)
		for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
			for (int stage = 0; stage < 4; stage++) {
				struct gp_error err = GP_ERROR_INIT;
				struct index_hit hit, again;
				int ret = index_find_in_buf(copy, size, algo, paths[i], stage,
							    &hit, &err);
				if (ret) {
					if (ret != GP_ECORRUPT && ret != GP_EINVAL)
						fuzz_fail("index_find_in_buf returned %d", ret);
					fuzz_check_error(ret, &err, 0, "index_find_in_buf");
					continue;
				}
				if (!hit.found && (hit.mode || !oid_is_null(&hit.oid)))
					fuzz_fail("'%s' not found at stage %d, yet has an entry",
						  paths[i], stage);
				if (index_find_in_buf(copy, size, algo, paths[i], stage, &again, &err) ||
				    again.found != hit.found || again.mode != hit.mode ||
				    (hit.found && !oideq(&again.oid, &hit.oid)))
					fuzz_fail("two lookups of '%s' differ", paths[i]);
			}
	free(copy);
	return 0;
}
