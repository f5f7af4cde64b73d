/*
 * test-refs.c: test-tool refs, for refs.h, which no command exposes in
 * full yet.
 *
 *   test-tool refs for-each [--broken] [<prefix>]
 *	one line per ref: "<hex> <refname> <peeled>", <peeled> being the
 *	hex packed-refs gives, "-" when it says the ref does not peel, or
 *	"?" when nothing is known; flags follow as " symref", " packed",
 *	" broken"
 *   test-tool refs resolve <refname>
 *	"<hex> <resolved refname>" and the same flags
 *   test-tool refs symref <refname>
 *	what the symbolic ref points at
 *   test-tool refs check-format [--allow-onelevel] <refname>...
 *	"ok <name>" or "bad <name>" per name
 *
 * Run inside a repository. Errors print the library's message and exit
 * 128.
 */
#include "../../error.h"
#include "../../refs.h"
#include "../../repository.h"
#include "test-tool.h"

static int fail(struct gp_error *err)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	return 128;
}

static void print_flags(unsigned flags)
{
	if (flags & REF_ISSYMREF)
		printf(" symref");
	if (flags & REF_ISPACKED)
		printf(" packed");
	if (flags & REF_ISBROKEN)
		printf(" broken");
	printf("\n");
}

static int show_ref(const char *refname, const struct object_id *oid,
		    const struct object_id *peeled, unsigned flags, void *data)
{
	char hex[GP_MAX_HEXSZ + 1], peeled_hex[GP_MAX_HEXSZ + 1];
	const char *p = "?";
	if (peeled)
		p = oid_to_hex_r(peeled_hex, peeled);
	else if (flags & REF_KNOWS_PEELED)
		p = "-";
	printf("%s %s %s", oid_to_hex_r(hex, oid), refname, p);
	print_flags(flags);
	return 0;
}

int cmd__refs(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo = NULL;
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool refs (for-each | resolve | symref | check-format) ...\n");
		return 129;
	}
	if (!strcmp(argv[1], "check-format")) {
		unsigned flags = 0;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--allow-onelevel"))
				flags |= REFNAME_ALLOW_ONELEVEL;
			else
				printf("%s %s\n", refname_is_valid(argv[i], flags) ? "ok" : "bad", argv[i]);
		}
		return 0;
	}
	if (repo_discover(&repo, NULL, &err))
		return fail(&err);
	if (!strcmp(argv[1], "for-each")) {
		unsigned flags = 0;
		const char *prefix = NULL;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--broken"))
				flags |= REFS_EACH_BROKEN;
			else
				prefix = argv[i];
		}
		/* twice: the second pass runs on the cached packed-refs */
		for (int pass = 0; pass < 2 && !ret; pass++) {
			if (pass)
				printf("--\n");
			if (refs_for_each_ext(repo, prefix, flags, show_ref, NULL, &err))
				ret = fail(&err);
		}
	} else if (!strcmp(argv[1], "resolve") && argc == 3) {
		char hex[GP_MAX_HEXSZ + 1];
		struct object_id oid;
		char *resolved = NULL;
		unsigned flags = 0;
		if (refs_resolve_ext(repo, argv[2], &oid, &resolved, &flags, &err)) {
			ret = fail(&err);
		} else {
			printf("%s %s", oid_to_hex_r(hex, &oid), resolved);
			print_flags(flags);
		}
		free(resolved);
	} else if (!strcmp(argv[1], "symref") && argc == 3) {
		char *target = NULL;
		if (refs_read_symref(repo, argv[2], &target, &err))
			ret = fail(&err);
		else
			printf("%s\n", target);
		free(target);
	} else {
		fprintf(stderr, "usage: test-tool refs (for-each | resolve | symref | check-format) ...\n");
		ret = 129;
	}
	gp_error_clear(&err);
	repo_free(repo);
	return ret;
}
