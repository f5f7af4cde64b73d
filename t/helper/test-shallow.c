/*
 * test-shallow.c: test-tool shallow-compute, for shallow_compute()
 * (shallow.h), which upload-pack will call.
 *
 *   test-tool shallow-compute [--depth <n>] [--relative] [--since <date>]
 *		[--not <rev>]... [--shallow <rev>]... <want>...
 *	Print the lines upload-pack would send in the "shallow-info"
 *	section for a fetch of the wants with these "deepen <n>",
 *	"deepen-relative", "deepen-since <date>", "deepen-not" and client
 *	"shallow" lines: "shallow <oid>" lines, then "unshallow <oid>"
 *	lines, in order. The repository's own shallow file, when it has
 *	one, is applied. <rev> and <want> are full object names (which
 *	need not exist, for --shallow) or any name get_oid() takes.
 *
 * Run inside a repository. Errors print the library's message as
 * "fatal: <message>" and exit 128.
 */
#include "../../error.h"
#include "../../hash.h"
#include "../../object-name.h"
#include "../../odb.h"
#include "../../oid-array.h"
#include "../../oidset.h"
#include "../../repository.h"
#include "../../shallow.h"
#include "test-tool.h"

struct ids {
	struct object_id *oids;
	size_t nr, alloc;
};

static int fail(struct gp_error *err)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	return 128;
}

static int add_rev(struct repository *repo, struct odb *odb, struct ids *ids,
		   const char *name, struct gp_error *err)
{
	struct object_id oid;
	if (strlen(name) != gp_hash_algos[repo->hash_algo].hexsz ||
	    hex_to_oid(name, repo->hash_algo, &oid)) {
		int ret = get_oid(repo, odb, name, &oid, err);
		if (ret)
			return ret;
	}
	ALLOC_GROW(ids->oids, ids->nr + 1, ids->alloc);
	ids->oids[ids->nr++] = oid;
	return 0;
}

static void print_ids(const char *what, const struct oid_array *ids)
{
	for (size_t i = 0; i < ids->nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		struct object_id oid;
		oid_array_get(ids, i, &oid);
		printf("%s %s\n", what, oid_to_hex_r(hex, &oid));
	}
}

int cmd__shallow_compute(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct shallow_request req = SHALLOW_REQUEST_INIT;
	struct repository *repo = NULL;
	struct odb *odb;
	struct ids wants = { 0 }, nots = { 0 }, clients = { 0 };
	struct oidset repo_shallow = OIDSET_INIT;
	struct oid_array shallow = OID_ARRAY_INIT, unshallow = OID_ARRAY_INIT;
	char *path;
	int ret = 0;

	if (repo_discover(&repo, NULL, &err) || repo_odb(repo, &odb, &err)) {
		ret = fail(&err);
		goto out;
	}
	for (int i = 1; i < argc && !ret; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--depth") && i + 1 < argc) {
			req.depth = atoi(argv[++i]);
		} else if (!strcmp(arg, "--relative")) {
			req.relative = true;
		} else if (!strcmp(arg, "--since") && i + 1 < argc) {
			req.has_since = true;
			req.since = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(arg, "--not") && i + 1 < argc) {
			ret = add_rev(repo, odb, &nots, argv[++i], &err);
		} else if (!strcmp(arg, "--shallow") && i + 1 < argc) {
			ret = add_rev(repo, odb, &clients, argv[++i], &err);
		} else if (arg[0] == '-') {
			fprintf(stderr, "usage: test-tool shallow-compute [--depth <n>] [--relative] "
				"[--since <date>] [--not <rev>]... [--shallow <rev>]... <want>...\n");
			ret = 129;
			goto out;
		} else {
			ret = add_rev(repo, odb, &wants, arg, &err);
		}
	}
	if (ret) {
		ret = fail(&err);
		goto out;
	}
	/* Like git, a shallow file that exists makes the repository shallow, even empty. */
	path = repo_shallow_path(repo);
	if (path && !access(path, F_OK))
		req.repo_shallow = &repo_shallow;
	free(path);
	if (req.repo_shallow && shallow_read(repo, &repo_shallow, &err)) {
		ret = fail(&err);
		goto out;
	}
	req.wants = wants.oids;
	req.nr_wants = wants.nr;
	req.not_tips = nots.oids;
	req.nr_not = nots.nr;
	req.client_shallow = clients.oids;
	req.nr_client_shallow = clients.nr;
	oid_array_init(&shallow, repo->hash_algo);
	oid_array_init(&unshallow, repo->hash_algo);
	if (shallow_compute(odb, repo->hash_algo, &req, &shallow, &unshallow, &err)) {
		ret = fail(&err);
		goto out;
	}
	print_ids("shallow", &shallow);
	print_ids("unshallow", &unshallow);
out:
	oid_array_release(&shallow);
	oid_array_release(&unshallow);
	oidset_release(&repo_shallow);
	free(wants.oids);
	free(nots.oids);
	free(clients.oids);
	gp_error_clear(&err);
	repo_free(repo);
	return ret;
}
