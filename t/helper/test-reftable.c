/*
 * test-reftable.c: test-tool reftable, the records of reftable.h.
 *
 *   test-tool reftable table [--sha256] <file> (refs | logs) [<key>]
 *	the records of one table, deletions included
 *   test-tool reftable table [--sha256] <file> info
 *	"version", "block_size", "refs" and "logs" (0 or 1), then the
 *	footer's positions ("ref_index", "obj", "obj_index", "log",
 *	"log_index"), one "<name> <value>" a line
 *   test-tool reftable stack [--sha256] <dir> (refs | logs) [<key>]
 *	the merged view of the stack in <dir> (".git/reftable")
 *   test-tool reftable read [--sha256] <dir> <refname>...
 *	each name as the stack has it, or "<refname> missing"
 *
 * <key> is a name prefix for refs, a refname for logs. A ref prints as
 * "<refname> <update_index> " then "delete", "<hex>", "<hex> ^<peeled
 * hex>" or "ref: <target>"; a log record as "<refname> <update_index> "
 * then "delete" or "<old> <new> <name> <<email>> <time> <tz minutes>
 * <message>" (message bytes up to the first LF). Errors print the
 * library's message and exit 128.
 */
#include "../../error.h"
#include "../../reftable.h"
#include "../../strbuf.h"
#include "test-tool.h"

static int fail(struct gp_error *err)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	return 128;
}

static void print_ref(const struct reftable_ref *ref)
{
	char hex[GP_MAX_HEXSZ + 1];
	printf("%s %" PRIu64 " ", ref->name, ref->update_index);
	switch (ref->type) {
	case REFTABLE_REF_DELETION:
		printf("delete\n");
		break;
	case REFTABLE_REF_VAL1:
		printf("%s\n", oid_to_hex_r(hex, &ref->oid));
		break;
	case REFTABLE_REF_VAL2:
		printf("%s", oid_to_hex_r(hex, &ref->oid));
		printf(" ^%s\n", oid_to_hex_r(hex, &ref->peeled));
		break;
	case REFTABLE_REF_SYMREF:
		printf("ref: %s\n", ref->target);
		break;
	}
}

static void print_log(const struct reftable_log *log)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *nl;
	size_t msg_len;

	printf("%s %" PRIu64 " ", log->refname, log->update_index);
	if (log->type == REFTABLE_LOG_DELETION) {
		printf("delete\n");
		return;
	}
	printf("%s ", oid_to_hex_r(hex, &log->old_oid));
	printf("%s ", oid_to_hex_r(hex, &log->new_oid));
	nl = memchr(log->message, '\n', log->message_len);
	msg_len = nl ? (size_t)(nl - log->message) : log->message_len;
	printf("%.*s <%.*s> %" PRIu64 " %d %.*s\n", (int)log->name_len, log->name,
	       (int)log->email_len, log->email, log->time, log->tz_offset,
	       (int)msg_len, log->message);
}

static int dump(struct reftable_iter *it, bool logs, struct gp_error *err)
{
	int ret;
	for (;;) {
		if (logs) {
			struct reftable_log log;
			ret = reftable_iter_next_log(it, &log, err);
			if (ret > 0)
				print_log(&log);
		} else {
			struct reftable_ref ref;
			ret = reftable_iter_next_ref(it, &ref, err);
			if (ret > 0)
				print_ref(&ref);
		}
		if (ret <= 0)
			return ret;
	}
}

int cmd__reftable(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_table *t = NULL;
	struct reftable_stack *st = NULL;
	struct reftable_iter *it = NULL;
	int algo = GP_HASH_SHA1, ret = 0, arg = 2;
	bool logs;

	if (argc > arg && !strcmp(argv[arg], "--sha256")) {
		algo = GP_HASH_SHA256;
		arg++;
	}
	if (argc < arg + 2)
		goto usage;
	if (!strcmp(argv[1], "read")) {
		struct strbuf target = STRBUF_INIT;
		if (reftable_stack_open(&st, argv[arg], algo, NULL, &err)) {
			ret = fail(&err);
			goto out;
		}
		for (int i = arg + 1; i < argc && !ret; i++) {
			struct reftable_ref ref;
			int got = reftable_stack_read_ref(st, argv[i], &ref, &target, &err);
			if (!got)
				print_ref(&ref);
			else if (got == GP_ENOTFOUND)
				printf("%s missing\n", argv[i]);
			else
				ret = fail(&err);
			gp_error_clear(&err);
		}
		strbuf_release(&target);
		goto out;
	}
	if (argc < arg + 2 || argc > arg + 3)
		goto usage;
	if (!strcmp(argv[1], "table") && !strcmp(argv[arg + 1], "info")) {
		struct reftable_table_info info;
		if (reftable_table_open(&t, argv[arg], algo, &err)) {
			ret = fail(&err);
			goto out;
		}
		reftable_table_info(t, &info);
		printf("version %u\nblock_size %" PRIu32 "\nrefs %d\nlogs %d\n", info.version,
		       info.block_size, info.has_refs, info.has_logs);
		printf("ref_index %" PRIu64 "\nobj %" PRIu64 "\nobj_index %" PRIu64 "\n",
		       info.ref_index_pos, info.obj_pos, info.obj_index_pos);
		printf("log %" PRIu64 "\nlog_index %" PRIu64 "\n", info.log_pos, info.log_index_pos);
		goto out;
	}
	logs = !strcmp(argv[arg + 1], "logs");
	if (!logs && strcmp(argv[arg + 1], "refs"))
		goto usage;
	if (!strcmp(argv[1], "table")) {
		ret = reftable_table_open(&t, argv[arg], algo, &err);
		if (!ret)
			ret = logs ? reftable_table_logs(t, argv[arg + 2], &it, &err)
				   : reftable_table_refs(t, argv[arg + 2], &it, &err);
	} else if (!strcmp(argv[1], "stack")) {
		ret = reftable_stack_open(&st, argv[arg], algo, NULL, &err);
		if (!ret)
			ret = logs ? reftable_stack_logs(st, argv[arg + 2], &it, &err)
				   : reftable_stack_refs(st, argv[arg + 2], &it, &err);
	} else {
		goto usage;
	}
	if (!ret)
		ret = dump(it, logs, &err);
	if (ret)
		ret = fail(&err);
	goto out;
usage:
	fprintf(stderr, "usage: test-tool reftable (table <file> | stack <dir>) [--sha256] (refs | logs) [<key>]\n"
			"       test-tool reftable read [--sha256] <dir> <refname>...\n");
	ret = 129;
out:
	reftable_iter_free(it);
	reftable_table_free(t);
	reftable_stack_free(st);
	gp_error_clear(&err);
	return ret;
}
