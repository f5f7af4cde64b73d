/*
 * fuzz-fsck.c: git's object checks, fsck.c: fsck_object(),
 * fsck_finish(), fsck_parse_check(), fsck_links() and the --strict
 * list parser, on arbitrary object contents.
 *
 * Input: one flag byte, then the object's content. Flag bits 0: SHA-256
 * (else SHA-1); 1-2: the type (0 commit, 1 tree, 2 tag, 3 a blob that
 * a tree names .gitmodules and .gitattributes); 3: not strict; 4: the
 * content up to its first NUL is also a --strict=<list> (lists naming
 * a skip list, which would read a file, are left out). Seeds:
 * t/fuzz/corpus/fsck/, objects git wrote (see make-corpus.sh).
 *
 * Checks beyond "no crash": every report has a known id, a printable
 * severity (error or warning), a message "<msgId>: <text>"; the links
 * of a tree are no more than its bytes allow; a commit that git's
 * parser takes has a tree link; an error is GP_ECORRUPT with a
 * message; fsck_finish() leaves nothing pending.
 */
#include "fuzz.h"
#include "fsck.h"
#include "strbuf.h"

static int check_report(const struct fsck_report *r, void *data)
{
	const char *name;
	size_t len;

	if ((unsigned)r->id >= FSCK_MSG_NR)
		fuzz_fail("report with id %d", (int)r->id);
	if (r->severity != FSCK_ERROR && r->severity != FSCK_WARN)
		fuzz_fail("report with severity %d", (int)r->severity);
	name = fsck_msg_id_name(r->id);
	len = strlen(name);
	if (strncmp(r->message, name, len) || strncmp(r->message + len, ": ", 2) ||
	    r->text != r->message + len + 2)
		fuzz_fail("message '%s' for %s", r->message, name);
	(*(unsigned *)data)++;
	return r->severity == FSCK_ERROR;
}

struct links {
	size_t nr;
	bool saw_tree;
};

static int count_link(const struct object_id *oid, enum object_type type, void *data)
{
	struct links *l = data;
	if (type < OBJ_COMMIT || type > OBJ_TAG)
		fuzz_fail("link of type %d", (int)type);
	l->saw_tree |= type == OBJ_TREE && !l->nr;
	l->nr++;
	return 0;
}

struct input {
	const unsigned char *buf;
	size_t len;
};

/* Some queued blobs are missing, some trees; the rest are the input. */
static int read_input(const struct object_id *oid, enum object_type *type,
		      void **buf, size_t *len, void *data)
{
	const struct input *in = data;
	if (oid->hash[0] & 1)
		return GP_ENOTFOUND;
	*type = (oid->hash[0] & 2) ? OBJ_TREE : OBJ_BLOB;
	*buf = xmemdup(in->len ? in->buf : (const unsigned char *)"", in->len);
	*len = in->len;
	return 0;
}

static bool names_skiplist(const char *list)
{
	for (const char *p = list; *p; p++)
		if (!strncasecmp(p, "skiplist", 8))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum object_type types[] = { OBJ_COMMIT, OBJ_TREE, OBJ_TAG, OBJ_BLOB };
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf message = STRBUF_INIT;
	struct input in;
	struct fsck_options *o;
	struct object_id oid;
	struct links links = { 0 };
	enum object_type type;
	unsigned reports = 0;
	int algo, ret;

	if (!size)
		return 0;
	algo = (data[0] & 1) ? GP_HASH_SHA256 : GP_HASH_SHA1;
	type = types[(data[0] >> 1) & 3];
	/* The input's own bytes, so that ASan sees any over-read. */
	in.buf = data + 1;
	in.len = size - 1;
	hash_object(algo, type, in.buf, in.len, &oid, NULL);

	o = fsck_options_new(algo);
	fsck_set_strict(o, !(data[0] & 8));
	fsck_set_report(o, check_report, &reports);
	if (data[0] & 16) {
		char *list = xstrndup((const char *)in.buf, in.len);
		if (!names_skiplist(list)) {
			ret = fsck_set_msg_types(o, list, &err);
			if (ret)
				fuzz_check_error(ret, &err, GP_EINVAL, "fsck_set_msg_types");
		}
		free(list);
	}

	ret = fsck_parse_check(type, in.buf, in.len, &oid, &message);
	if (ret && ret != GP_ECORRUPT)
		fuzz_fail("fsck_parse_check returned %d", ret);

	ret = fsck_links(type, in.buf, in.len, algo, count_link, &links, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "fsck_links");
	else if (type == OBJ_TREE &&
		 links.nr > in.len / (gp_hash_algos[algo].rawsz + 3))
		fuzz_fail("%zu links in %zu bytes", links.nr, in.len);
	else if (type == OBJ_COMMIT && !links.saw_tree)
		fuzz_fail("a commit that parses has no tree link");

	if (type == OBJ_BLOB) {
		/* Queue the input under both names, then check it. */
		struct strbuf tree = STRBUF_INIT;
		struct object_id tree_oid;
		size_t rawsz = gp_hash_algos[algo].rawsz;

		strbuf_addstr(&tree, "100644 .gitattributes");
		strbuf_add(&tree, "", 1);
		strbuf_add(&tree, oid.hash, rawsz);
		strbuf_addstr(&tree, "100644 .gitmodules");
		strbuf_add(&tree, "", 1);
		strbuf_add(&tree, oid.hash, rawsz);
		hash_object(algo, OBJ_TREE, tree.buf, tree.len, &tree_oid, NULL);
		fsck_object(o, &tree_oid, OBJ_TREE, tree.buf, tree.len);
		if (fsck_pending_nr(o) != 1)
			fuzz_fail("%zu blobs pending, not 1", fsck_pending_nr(o));
		strbuf_release(&tree);
	}
	ret = fsck_object(o, &oid, type, in.buf, in.len);
	if (ret < 0 || (unsigned)ret > reports)
		fuzz_fail("fsck_object returned %d after %u reports", ret, reports);
	ret = fsck_finish(o, read_input, &in);
	if (ret < 0)
		fuzz_fail("fsck_finish returned %d", ret);
	if (fsck_pending_nr(o))
		fuzz_fail("blobs still pending after fsck_finish");

	fsck_options_free(o);
	strbuf_release(&message);
	gp_error_clear(&err);
	return 0;
}
