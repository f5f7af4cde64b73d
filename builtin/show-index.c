/*
 * builtin/show-index.c: gitpack show-index, dumping a pack index read
 * from standard input in git's format.
 */
#include "../builtin.h"
#include "../error.h"
#include "../object.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../strbuf.h"

static const char *const show_index_usage[] = {
	"git show-index [--object-format=<hash-algorithm>] < <pack-idx-file>",
	NULL,
};

int cmd_show_index(int argc, const char **argv, struct repository *repo)
{
	const char *object_format = NULL;
	struct strbuf in = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct packed_git *p;
	int algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	struct option options[] = {
		OPT_STRING(0, "object-format", &object_format, "hash-algorithm",
			   "specify the hash algorithm to use"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, show_index_usage);
	if (argc)
		usage_with_options(show_index_usage, options);
	if (object_format) {
		algo = hash_algo_by_name(object_format);
		if (!algo)
			die("Unknown hash algorithm '%s'", object_format);
	}
	if (strbuf_read_fd(&in, 0, 0) < 0)
		die("unable to read index from standard input: %s", strerror(errno));
	if (pack_parse_idx_buf(&p, (const unsigned char *)in.buf, in.len, "<stdin>", algo, &err))
		die_error(&err);

	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		char hex[GP_MAX_HEXSZ + 1];
		struct object_id oid;
		pack_nth_oid(p, idx_pos, &oid);
		oid_to_hex_r(hex, &oid);
		if (p->idx_version == 1)
			printf("%" PRIu64 " %s\n", pack_nth_offset(p, idx_pos), hex);
		else
			printf("%" PRIu64 " %s (%08" PRIx32 ")\n", pack_nth_offset(p, idx_pos),
			       hex, pack_nth_crc(p, idx_pos));
	}
	pack_free(p);
	strbuf_release(&in);
	return 0;
}
