/*
 * test-pack-mtimes.c: test-tool pack-mtimes, printing what pack-mtimes.c
 * reads from a cruft pack's .mtimes, so that tests assert the time each
 * object was given rather than bytes.
 *
 *   test-tool pack-mtimes [--object-format=ALGO] <pack>.mtimes
 *
 * prints "<oid> <mtime>" a line, in the order of the pack's .idx (by
 * name), as git's own test-tool does. The .idx beside it gives the
 * names and the pack checksum the .mtimes must carry.
 */
#include "../../error.h"
#include "../../pack-mtimes.h"
#include "../../packfile.h"
#include "test-tool.h"

int cmd__pack_mtimes(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	const char *path = NULL, *val;
	int algo = GP_HASH_SHA1;
	bool algo_given = false;
	struct packed_git *p = NULL;
	uint32_t *mtimes = NULL;
	char *idx_path;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		if (skip_prefix(argv[i], "--object-format=", &val)) {
			algo = hash_algo_by_name(val);
			algo_given = true;
		} else if (!path) {
			path = argv[i];
		} else {
			path = NULL;
			break;
		}
	}
	if (!algo || !path || !ends_with(path, ".mtimes")) {
		fprintf(stderr, "usage: test-tool pack-mtimes [--object-format=ALGO] <pack>.mtimes\n");
		return 129;
	}
	idx_path = xstrfmt("%.*s.idx", (int)(strlen(path) - strlen(".mtimes")), path);
	if (pack_open_idx(&p, idx_path, algo, &err)) {
		/* Without --object-format, a SHA-256 index read as SHA-1 fails: retry. */
		if (!algo_given && !pack_open_idx(&p, idx_path, GP_HASH_SHA256, NULL)) {
			gp_error_clear(&err);
			algo = GP_HASH_SHA256;
		} else {
			fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
			ret = 128;
			goto out;
		}
	}
	if (mtimes_read(path, algo, p->nr_objects, p->pack_hash, &mtimes, &err)) {
		fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
		ret = 128;
		goto out;
	}
	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		struct object_id oid;
		pack_nth_oid(p, idx_pos, &oid);
		printf("%s %" PRIu32 "\n", oid_to_hex_r(hex, &oid), mtimes[idx_pos]);
	}
out:
	free(mtimes);
	pack_free(p);
	free(idx_path);
	gp_error_clear(&err);
	return ret;
}
