/* test-tool.c: dispatch to the subcommands listed in test-tool.h. */
#include "../../util.h"
#include "test-tool.h"

struct test_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
};

static const struct test_cmd cmds[] = {
	{ "bitmap-write", cmd__bitmap_write },
	{ "config", cmd__config },
	{ "date", cmd__date },
	{ "delta", cmd__delta },
	{ "ewah", cmd__ewah },
	{ "fsck", cmd__fsck },
	{ "hex", cmd__hex },
	{ "http", cmd__http },
	{ "loose", cmd__loose },
	{ "refs", cmd__refs },
	{ "reftable", cmd__reftable },
	{ "sha1", cmd__sha1 },
	{ "shallow-compute", cmd__shallow_compute },
	{ "sha1dc", cmd__sha1dc },
	{ "write-idx", cmd__write_idx },
	{ "midx-dump", cmd__midx_dump },
	{ "object-filter", cmd__object_filter },
	{ "oid-array", cmd__oid_array },
	{ "pack-mtimes", cmd__pack_mtimes },
	{ "pkt-line", cmd__pkt_line },
	{ "pseudo-merges", cmd__pseudo_merge },
};

int main(int argc, const char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-tool <command> [<args>]\n");
		return 129;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "test-tool: unknown command '%s'\n", argv[1]);
	return 129;
}
