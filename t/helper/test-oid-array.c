/*
 * test-oid-array.c: test-tool oid-array, for oid-array.h.
 *
 *   test-tool oid-array (sha1 | sha256) [<hex>...]
 *
 * Reads hex ids from stdin, one a line, appends them in that order,
 * sorts and deduplicates, and prints the result, one id a line. Then
 * prints "<hex> <pos>" or "<hex> missing" for each id named on the
 * command line, looked up with oid_array_find().
 */
#include "../../oid-array.h"
#include "../../strbuf.h"
#include "test-tool.h"

int cmd__oid_array(int argc, const char **argv)
{
	struct oid_array ids = OID_ARRAY_INIT;
	struct strbuf line = STRBUF_INIT;
	char hex[GP_MAX_HEXSZ + 1];
	int algo;

	if (argc < 2 || (strcmp(argv[1], "sha1") && strcmp(argv[1], "sha256"))) {
		fprintf(stderr, "usage: test-tool oid-array (sha1 | sha256) [<hex>...]\n");
		return 129;
	}
	algo = strcmp(argv[1], "sha1") ? GP_HASH_SHA256 : GP_HASH_SHA1;
	oid_array_init(&ids, algo);
	while (strbuf_getline(&line, stdin)) {
		struct object_id oid;
		if (parse_oid_hex_exact(line.buf, algo, &oid)) {
			fprintf(stderr, "fatal: not an object id: '%s'\n", line.buf);
			return 128;
		}
		oid_array_append(&ids, &oid);
	}
	oid_array_sort_unique(&ids);
	for (size_t pos = 0; pos < ids.nr; pos++)
		printf("%s\n", hash_to_hex_r(hex, oid_array_raw(&ids, pos), ids.rawsz));
	for (int i = 2; i < argc; i++) {
		struct object_id oid;
		size_t pos;
		if (parse_oid_hex_exact(argv[i], algo, &oid)) {
			fprintf(stderr, "fatal: not an object id: '%s'\n", argv[i]);
			return 128;
		}
		if (oid_array_find(&ids, oid.hash, &pos))
			printf("%s %zu\n", argv[i], pos);
		else
			printf("%s missing\n", argv[i]);
	}
	oid_array_release(&ids);
	strbuf_release(&line);
	return 0;
}
