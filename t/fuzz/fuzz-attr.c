/*
 * fuzz-attr.c: gitattributes texts through attr_get_from_buf().
 *
 * Input: a path on the first line, then an attributes text (seeds:
 * t/fuzz/corpus/attr/, written by hand to gitattributes(5): patterns
 * with and without '/', set, unset, unspecified and valued attributes,
 * "binary", "[attr]" macros including ones that name each other).
 *
 * Checks beyond "no crash": every answer is one of the four states, a
 * value exactly when the state is ATTR_VALUE; the same question gives
 * the same answers twice.
 */
#include "fuzz.h"
#include "attr.h"

static const char *const names[] = {
	"diff", "text", "eol", "merge", "filter", "ident", "crlf", "loop",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct attr_result a[ARRAY_SIZE(names)], b[ARRAY_SIZE(names)];
	const char *nl = memchr(data, '\n', size);
	size_t path_len = nl ? (size_t)(nl - (const char *)data) : size;
	char *path = xstrndup((const char *)data, path_len);
	const char *text = nl ? nl + 1 : "";
	size_t text_len = nl ? size - path_len - 1 : 0;

	attr_get_from_buf(text, text_len, path, names, ARRAY_SIZE(names), a);
	attr_get_from_buf(text, text_len, path, names, ARRAY_SIZE(names), b);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (a[i].state > ATTR_VALUE || (a[i].state == ATTR_VALUE) != !!a[i].value)
			fuzz_fail("'%s': state %d with value %p", names[i], (int)a[i].state,
				  (void *)a[i].value);
		if (a[i].state != b[i].state ||
		    (a[i].value && strcmp(a[i].value, b[i].value)))
			fuzz_fail("'%s' answered twice differently", names[i]);
	}
	attr_results_release(a, ARRAY_SIZE(names));
	attr_results_release(b, ARRAY_SIZE(names));
	free(path);
	return 0;
}
