/*
 * test-loose.c: test-tool loose, for the loose-object writer and reader,
 * which no command exposes yet.
 *
 *   test-tool loose write <type>     content on stdin; prints the name
 *   test-tool loose read <name>      prints "<type> <size>" then content
 *   test-tool loose info <name>      prints "<type> <size> <disk-size>"
 *
 * Run inside a repository; objects go to (or come from) its object
 * directory. Errors print the library's message and exit 128.
 */
#include "../../error.h"
#include "../../loose.h"
#include "../../repository.h"
#include "../../strbuf.h"
#include "test-tool.h"

static int fail(struct gp_error *err)
{
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	return 128;
}

int cmd__loose(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo = NULL;
	struct object_id oid;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: test-tool loose (write <type> | read <name> | info <name>)\n");
		return 129;
	}
	if (repo_discover(&repo, NULL, &err))
		return fail(&err);
	if (!strcmp(argv[1], "write")) {
		struct strbuf in = STRBUF_INIT;
		enum object_type type = type_from_name(argv[2], strlen(argv[2]));
		if (type == OBJ_BAD) {
			fprintf(stderr, "fatal: bad type '%s'\n", argv[2]);
			ret = 128;
		} else if (strbuf_read_fd(&in, 0, 0) < 0) {
			fprintf(stderr, "fatal: cannot read stdin\n");
			ret = 128;
		} else if (loose_write(repo->objdir, repo->hash_algo, type, in.buf, in.len, &oid, &err)) {
			ret = fail(&err);
		} else {
			printf("%s\n", oid_to_hex_r(hex, &oid));
		}
		strbuf_release(&in);
	} else if (parse_oid_hex_exact(argv[2], repo->hash_algo, &oid)) {
		fprintf(stderr, "fatal: not an object name: %s\n", argv[2]);
		ret = 128;
	} else if (!strcmp(argv[1], "read")) {
		enum object_type type;
		unsigned char *data;
		size_t size;
		if (loose_read(repo->objdir, &oid, &type, &data, &size, &err)) {
			ret = fail(&err);
		} else {
			printf("%s %zu\n", type_name(type), size);
			fwrite(data, 1, size, stdout);
			free(data);
		}
	} else if (!strcmp(argv[1], "info")) {
		enum object_type type;
		uint64_t size, disk_size;
		if (loose_read_info(repo->objdir, &oid, &type, &size, &disk_size, &err))
			ret = fail(&err);
		else
			printf("%s %" PRIu64 " %" PRIu64 "\n", type_name(type), size, disk_size);
	} else {
		fprintf(stderr, "test-tool loose: unknown subcommand '%s'\n", argv[1]);
		ret = 129;
	}
	gp_error_clear(&err);
	repo_free(repo);
	return ret;
}
