/*
 * test-object-filter.c: test-tool object-filter, for object-filter.h.
 *
 *   test-tool object-filter <spec>...
 *
 * Adds each spec in turn (as repeated --filter options do) and prints
 * the parsed filter: "spec <spec>", then one line per filter, sub-filters
 * indented by two spaces:
 *
 *   blob:none | blob:limit <bytes> | tree <depth> | sparse:oid <name> |
 *   object:type <type> | combine <nr>
 *
 * then "walkless" or "walk". For a walkless filter, each stdin line
 * "<type> <size>" is answered "<type> <size> omitted" or "... kept".
 * A bad spec prints "fatal: <message>" and exits 128.
 */
#include "../../error.h"
#include "../../object-filter.h"
#include "../../strbuf.h"
#include "test-tool.h"

static void dump(const struct object_filter *f, int indent)
{
	printf("%*s%s", indent, "", object_filter_kind_name(f->kind));
	switch (f->kind) {
	case OBJECT_FILTER_BLOB_LIMIT:
		printf(" %" PRIu64, f->blob_limit);
		break;
	case OBJECT_FILTER_TREE_DEPTH:
		printf(" %" PRIu64, f->tree_depth);
		break;
	case OBJECT_FILTER_SPARSE_OID:
		printf(" %s", f->sparse_oid);
		break;
	case OBJECT_FILTER_OBJECT_TYPE:
		printf(" %s", type_name(f->type));
		break;
	case OBJECT_FILTER_COMBINE:
		printf(" %zu", f->nr_subs);
		break;
	default:
		break;
	}
	putchar('\n');
	for (size_t i = 0; i < f->nr_subs; i++)
		dump(&f->subs[i], indent + 2);
}

int cmd__object_filter(int argc, const char **argv)
{
	struct object_filter f = OBJECT_FILTER_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf line = STRBUF_INIT;

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool object-filter <spec>...\n");
		return 129;
	}
	for (int i = 1; i < argc; i++)
		if (object_filter_add(&f, argv[i], &err)) {
			fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
			gp_error_clear(&err);
			object_filter_release(&f);
			return 128;
		}
	printf("spec %s\n", object_filter_spec(&f));
	dump(&f, 0);
	if (!object_filter_is_walkless(&f)) {
		printf("walk\n");
		goto out;
	}
	printf("walkless\n");
	while (strbuf_getline(&line, stdin)) {
		char *sp = strchr(line.buf, ' ');
		enum object_type type;
		uint64_t size;
		if (!sp) {
			fprintf(stderr, "fatal: expected '<type> <size>': '%s'\n", line.buf);
			return 128;
		}
		type = type_from_name(line.buf, (size_t)(sp - line.buf));
		size = strtoull(sp + 1, NULL, 10);
		printf("%s %s\n", line.buf,
		       object_filter_omits(&f, type, size) ? "omitted" : "kept");
	}
out:
	strbuf_release(&line);
	object_filter_release(&f);
	return 0;
}
