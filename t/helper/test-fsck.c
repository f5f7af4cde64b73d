/*
 * test-fsck.c: "test-tool fsck", which runs fsck.c on objects given as
 * files and prints what git would, so tests can compare with stock
 * git on crafted objects.
 *
 *   test-tool fsck [<options>] <type>:<file>...
 *	Check the objects in the order given, as "git index-pack
 *	--fsck-objects" checks a pack holding them in that order: git's
 *	parse first ("error: ..." then "fatal: invalid <type>", exit
 *	128), then fsck; the first object with an error ends the run
 *	with "fatal: fsck error in packed object" (exit 128). Then the
 *	queued .gitmodules / .gitattributes blobs are read from the
 *	objects given (others are missing): a missing .gitmodules is
 *	printed on stdout, and errors end with "fatal: fsck error in
 *	pack objects". Reports go to stderr as index-pack prints them.
 *	Options:
 *	  --sha256		objects of a SHA-256 repository
 *	  --not-strict		as git fsck without --strict
 *	  --msg-types=<list>	as index-pack --strict=<list>
 *	  --config=<scope>	apply fsck, receive or fetch configuration
 *				of the repository found from the cwd (or
 *				the standard files), as that command does;
 *				warnings go to stderr
 *	  --format=fsck		print as git fsck does ("error in <type>
 *				<oid>: ..."), check every object, no
 *				parse step, exit 1 on errors
 *
 *   test-tool fsck links [--sha256] <type> <file>
 *	"<type> <oid>" for each object it links to (fsck_links()).
 *
 *   test-tool fsck name <kind> <name>...
 *	The names for which the check holds, one a line; kind is one of
 *	dotgit, dotgitmodules, dotgitattributes, dotgitignore,
 *	dotmailmap, submodule-name, submodule-url.
 *
 *   test-tool fsck config-list <scope>
 *	The --strict=<list> receive-pack or fetch-pack would pass
 *	(fsck_config_list()), then its warnings.
 */
#include "../../config.h"
#include "../../error.h"
#include "../../fsck.h"
#include "../../hash.h"
#include "../../object.h"
#include "../../repository.h"
#include "../../strbuf.h"
#include "test-tool.h"

struct object_file {
	enum object_type type;
	struct strbuf content;
	struct object_id oid;
};

struct run {
	bool fsck_format;
	bool errors_seen;
	struct object_file *objects;
	size_t nr;
};

/*
 * git prints its error, warning and fatal lines with control
 * characters other than tab and newline replaced by '?'.
 */
GP_PRINTF(1, 2)
static void say(const char *fmt, ...)
{
	struct strbuf line = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	for (size_t pos = 0; pos < line.len; pos++) {
		unsigned char ch = (unsigned char)line.buf[pos];
		if ((ch < 0x20 || ch == 0x7f) && ch != '\t' && ch != '\n')
			line.buf[pos] = '?';
	}
	fwrite(line.buf, 1, line.len, stderr);
	strbuf_release(&line);
}

static int usage(void)
{
	fprintf(stderr, "usage: test-tool fsck [--sha256] [--not-strict] [--msg-types=<list>]\n"
			"                      [--config=<scope>] [--format=fsck] <type>:<file>...\n"
			"       test-tool fsck links [--sha256] <type> <file>\n"
			"       test-tool fsck name <kind> <name>...\n"
			"       test-tool fsck config-list (receive|fetch)\n");
	return 129;
}

static int fatal(const char *msg)
{
	fflush(stdout);
	say("fatal: %s\n", msg);
	return 128;
}

static int print_report(const struct fsck_report *r, void *data)
{
	struct run *run = data;
	char hex[GP_MAX_HEXSZ + 1];
	const char *word = r->severity == FSCK_ERROR ? "error" : "warning";

	oid_to_hex_r(hex, r->oid);
	if (run->fsck_format) {
		say("%s in %s %s: %s\n", word, type_name(r->type) ? type_name(r->type) : "unknown",
		    hex, r->message);
		if (r->severity == FSCK_ERROR)
			run->errors_seen = true;
		return r->severity == FSCK_ERROR;
	}
	/* index-pack --fsck-objects leaves these to its caller. */
	if (r->id == FSCK_MSG_GITMODULES_MISSING) {
		printf("%s\n", hex);
		return 0;
	}
	say("%s: object %s: %s\n", word, hex, r->message);
	return r->severity == FSCK_ERROR;
}

static void print_tree_error(const struct object_id *oid, const char *message, void *data)
{
	struct run *run = data;
	char hex[GP_MAX_HEXSZ + 1];

	if (run->fsck_format)
		say("error: %s: %s\n", oid_to_hex_r(hex, oid), message);
	else
		say("error: %s\n", message);
}

static int read_given(const struct object_id *oid, enum object_type *type,
		      void **buf, size_t *len, void *data)
{
	struct run *run = data;

	for (size_t pos = 0; pos < run->nr; pos++) {
		const struct object_file *f = &run->objects[pos];
		if (!oideq(&f->oid, oid))
			continue;
		*type = f->type;
		*buf = xmemdup(f->content.buf, f->content.len);
		*len = f->content.len;
		return 0;
	}
	return GP_ENOTFOUND;
}

static int load_config(struct config_set *cs, struct gp_error *err)
{
	struct repository *repo = NULL;
	int ret = repo_discover(&repo, NULL, err);

	if (!ret) {
		/* A copy, so that the repository can go. */
		for (size_t pos = 0; pos < repo->config.nr; pos++) {
			const struct config_entry *e = &repo->config.items[pos];
			config_set_add(cs, e->key, e->value, e->scope, NULL);
		}
		repo_free(repo);
		return 0;
	}
	if (ret != GP_ENOTFOUND)
		return ret;
	gp_error_clear(err);
	return config_set_load_standard(cs, NULL, err);
}

static bool parse_scope(const char *name, enum fsck_config_scope *scope)
{
	if (!strcmp(name, "fsck"))
		*scope = FSCK_CONFIG_FSCK;
	else if (!strcmp(name, "receive"))
		*scope = FSCK_CONFIG_RECEIVE;
	else if (!strcmp(name, "fetch"))
		*scope = FSCK_CONFIG_FETCH;
	else
		return false;
	return true;
}

static int cmd_check(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct run run = { 0 };
	struct fsck_options *o;
	const char *msg_types = NULL, *scope_name = NULL;
	int algo = GP_HASH_SHA1, ret = 0, argi;
	bool strict = true;

	for (argi = 1; argi < argc && starts_with(argv[argi], "--"); argi++) {
		const char *arg = argv[argi];
		if (!strcmp(arg, "--sha256"))
			algo = GP_HASH_SHA256;
		else if (!strcmp(arg, "--not-strict"))
			strict = false;
		else if (skip_prefix(arg, "--msg-types=", &msg_types))
			;
		else if (skip_prefix(arg, "--config=", &scope_name))
			;
		else if (!strcmp(arg, "--format=fsck"))
			run.fsck_format = true;
		else
			return usage();
	}
	if (argi == argc)
		return usage();

	run.nr = (size_t)(argc - argi);
	run.objects = xcalloc(run.nr, sizeof(*run.objects));
	for (size_t pos = 0; pos < run.nr; pos++) {
		struct object_file *f = &run.objects[pos];
		const char *arg = argv[argi + (int)pos];
		const char *colon = strchr(arg, ':');

		strbuf_init(&f->content, 0);
		f->type = colon ? type_from_name(arg, (size_t)(colon - arg)) : OBJ_BAD;
		if (f->type == OBJ_BAD) {
			ret = usage();
			goto out;
		}
		if (strbuf_read_file(&f->content, colon + 1, 0) < 0) {
			fprintf(stderr, "fatal: cannot read %s: %s\n", colon + 1, strerror(errno));
			ret = 128;
			goto out;
		}
		hash_object(algo, f->type, f->content.buf, f->content.len, &f->oid, NULL);
	}

	o = fsck_options_new(algo);
	fsck_set_strict(o, strict);
	fsck_set_report(o, print_report, &run);
	fsck_set_tree_error(o, print_tree_error, &run);
	if (scope_name) {
		struct config_set cs = CONFIG_SET_INIT;
		struct strbuf warnings = STRBUF_INIT;
		enum fsck_config_scope scope;

		if (!parse_scope(scope_name, &scope)) {
			ret = usage();
			goto free_o;
		}
		ret = load_config(&cs, &err);
		if (!ret)
			ret = fsck_options_read_config(o, &cs, scope, &warnings, &err);
		for (const char *line = warnings.buf; *line;) {
			const char *nl = strchrnul(line, '\n');
			fprintf(stderr, "warning: %.*s\n", (int)(nl - line), line);
			line = *nl ? nl + 1 : nl;
		}
		strbuf_release(&warnings);
		config_set_release(&cs);
		if (ret < 0) {
			ret = fatal(gp_error_msg(&err));
			goto free_o;
		}
	}
	if (msg_types && fsck_set_msg_types(o, msg_types, &err) < 0) {
		ret = fatal(gp_error_msg(&err));
		goto free_o;
	}

	for (size_t pos = 0; pos < run.nr; pos++) {
		struct object_file *f = &run.objects[pos];

		if (!run.fsck_format) {
			struct strbuf message = STRBUF_INIT;
			if (fsck_parse_check(f->type, f->content.buf, f->content.len,
					     &f->oid, &message) < 0) {
				if (message.len)
					say("error: %s\n", message.buf);
				strbuf_release(&message);
				ret = fatal(f->type == OBJ_COMMIT ? "invalid commit" : "invalid tag");
				goto free_o;
			}
			strbuf_release(&message);
		}
		if (fsck_object(o, &f->oid, f->type, f->content.buf, f->content.len) &&
		    !run.fsck_format) {
			ret = fatal("fsck error in packed object");
			goto free_o;
		}
	}
	ret = fsck_finish(o, read_given, &run);
	if (ret < 0) {
		ret = fatal("reading a queued blob failed");
	} else if (ret && !run.fsck_format) {
		ret = fatal("fsck error in pack objects");
	} else {
		ret = run.errors_seen ? 1 : 0;
	}
free_o:
	fsck_options_free(o);
out:
	for (size_t pos = 0; pos < run.nr; pos++)
		strbuf_release(&run.objects[pos].content);
	free(run.objects);
	gp_error_clear(&err);
	return ret;
}

static int print_link(const struct object_id *oid, enum object_type type, void *data)
{
	char hex[GP_MAX_HEXSZ + 1];
	printf("%s %s\n", type_name(type), oid_to_hex_r(hex, oid));
	return 0;
}

static int cmd_links(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf content = STRBUF_INIT;
	int algo = GP_HASH_SHA1, argi = 1, ret;
	enum object_type type;

	if (argi < argc && !strcmp(argv[argi], "--sha256")) {
		algo = GP_HASH_SHA256;
		argi++;
	}
	if (argc - argi != 2)
		return usage();
	type = type_from_name(argv[argi], strlen(argv[argi]));
	if (type == OBJ_BAD || strbuf_read_file(&content, argv[argi + 1], 0) < 0) {
		strbuf_release(&content);
		return usage();
	}
	ret = fsck_links(type, content.buf, content.len, algo, print_link, NULL, &err);
	if (ret < 0)
		ret = fatal(gp_error_msg(&err));
	strbuf_release(&content);
	gp_error_clear(&err);
	return ret;
}

static int cmd_name(int argc, const char **argv)
{
	static const struct {
		const char *kind;
		bool (*fn)(const char *name);
	} kinds[] = {
		{ "dotgit", fsck_is_dotgit },
		{ "dotgitmodules", fsck_is_dotgitmodules },
		{ "dotgitattributes", fsck_is_dotgitattributes },
		{ "dotgitignore", fsck_is_dotgitignore },
		{ "dotmailmap", fsck_is_dotmailmap },
		{ "submodule-name", fsck_submodule_name_ok },
		{ "submodule-url", fsck_submodule_url_ok },
	};

	if (argc < 2)
		return usage();
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		if (strcmp(argv[1], kinds[k].kind))
			continue;
		for (int argi = 2; argi < argc; argi++)
			if (kinds[k].fn(argv[argi]))
				printf("%s\n", argv[argi]);
		return 0;
	}
	return usage();
}

static int cmd_config_list(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct config_set cs = CONFIG_SET_INIT;
	struct strbuf spec = STRBUF_INIT, warnings = STRBUF_INIT;
	enum fsck_config_scope scope;
	int ret;

	if (argc != 2 || !parse_scope(argv[1], &scope))
		return usage();
	ret = load_config(&cs, &err);
	if (!ret)
		ret = fsck_config_list(&cs, scope, &spec, &warnings, &err);
	if (ret < 0) {
		ret = fatal(gp_error_msg(&err));
	} else {
		printf("%s\n", spec.buf);
		fputs(warnings.buf, stdout);
	}
	strbuf_release(&spec);
	strbuf_release(&warnings);
	config_set_release(&cs);
	gp_error_clear(&err);
	return ret;
}

int cmd__fsck(int argc, const char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "links"))
		return cmd_links(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "name"))
		return cmd_name(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "config-list"))
		return cmd_config_list(argc - 1, argv + 1);
	return cmd_check(argc, argv);
}
