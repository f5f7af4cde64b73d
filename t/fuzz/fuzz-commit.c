/*
 * fuzz-commit.c: the commit and tag header parsers, commit_parse() and
 * tag_parse().
 *
 * Input: one flag byte, then the object's content. Flag bit 0: SHA-256
 * (else SHA-1); bit 1: a tag (else a commit). Seeds:
 * t/fuzz/corpus/commit/, objects git wrote (cat-file commit / tag).
 *
 * Checks beyond "no crash": a failure is GP_ECORRUPT with a message and
 * leaves the commit_info empty; a parsed commit has no more parents than
 * "parent" lines could fit in the input; a parsed tag has a real type
 * and a name, if any, inside the input.
 */
#include "fuzz.h"
#include "commit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	const unsigned char *buf = data + 1;
	size_t len;
	int algo, ret;

	if (!size)
		return 0;
	len = size - 1;
	algo = (data[0] & 1) ? GP_HASH_SHA256 : GP_HASH_SHA1;
	if (data[0] & 2) {
		struct tag_info tag;
		ret = tag_parse(buf, len, algo, &tag, &err);
		if (ret) {
			fuzz_check_error(ret, &err, GP_ECORRUPT, "tag_parse");
		} else {
			if (tag.type < OBJ_COMMIT || tag.type > OBJ_TAG)
				fuzz_fail("tag of type %d", (int)tag.type);
			if (tag.name && ((const unsigned char *)tag.name < buf ||
					 (const unsigned char *)tag.name + tag.name_len > buf + len))
				fuzz_fail("tag name outside the input");
		}
	} else {
		struct commit_info ci = COMMIT_INFO_INIT;
		size_t line = 7 + gp_hash_algos[algo].hexsz + 1;
		ret = commit_parse(buf, len, algo, &ci, &err);
		if (ret) {
			fuzz_check_error(ret, &err, GP_ECORRUPT, "commit_parse");
			if (ci.nr_parents || ci.parents)
				fuzz_fail("a failed parse left %zu parents", ci.nr_parents);
		} else if (ci.nr_parents > len / line) {
			fuzz_fail("%zu parents in %zu bytes", ci.nr_parents, len);
		}
		commit_info_release(&ci);
	}
	return 0;
}
