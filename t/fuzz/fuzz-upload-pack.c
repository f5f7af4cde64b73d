/*
 * fuzz-upload-pack.c: the request parsers of upload-pack (v0/v1 wants,
 * shallow and filter lines, haves and "done"; v2 capabilities and the
 * arguments of ls-refs, fetch and object-info) through upload_pack(),
 * the whole session, pack included, against a tiny repository.
 *
 * Input: one selector byte, then what the client sends. Selector bits:
 * 0-1 the protocol version (0, 1, 2, 2); 2 --stateless-rpc; 3-4 both
 * set: --advertise-refs (the request is not read); 5 the SHA-256
 * repository; 6 GIT_NAMESPACE=ns; 7 the repository whose config allows
 * everything (tip and reachable wants, filters with a tree depth limit
 * and blob:limit refused, want-ref, sideband-all, session-id,
 * object-info, lsrefs.unborn=allow) rather than git's defaults. Seeds:
 * t/fuzz/corpus/upload-pack/ (make-corpus.sh writes them with stock git
 * for the same objects): advertisements, ls-refs, v0 and v2 fetches
 * with haves, filters, want-ref, object-info, a whole v2 session.
 * Regressions (t/fuzz/regressions/upload-pack/, by hand): a v2 session
 * whose later fetches send again the haves an earlier one marked (the
 * negotiation table is freed between fetches), object-format names
 * that are no hash or the other hash.
 *
 * The repositories are made once, with the library (loose objects,
 * loose refs, a config file), in a directory under $TMPDIR removed at
 * exit; every object has fixed content, so the ids are known:
 *   blob "hello\n", blob "world\n"; tree1 {file}; tree2 {file, other};
 *   c1 (tree1, "one"), c2 (tree2, parent c1, "two"), c3 (tree1, parent
 *   c2, "three", only under refs/hidden/secret, which is hidden);
 *   tag v1 (annotated, of c1); refs/heads/main = c2, refs/heads/side =
 *   c1, HEAD -> main; refs/namespaces/ns/refs/heads/main = c1 and
 *   refs/namespaces/ns/HEAD -> it.
 * The request is read from a memfd (a pipe could fill up), the answer
 * goes to a strbuf. uploadpack.keepAlive is off, so no thread is left
 * running; the pack hook is never allowed.
 *
 * Checks beyond "no crash, no leak, no hang": a failure is GP_EPROTO,
 * GP_ENOTFOUND or GP_EINVAL with a message (the repository is sound and
 * the sink never fails, so never GP_EIO or GP_ECORRUPT); an
 * advertisement ends with a flush; in protocol v2 the whole answer is
 * pkt-lines, each command's ending with a flush when the session ended
 * well.
 */
#include "fuzz.h"
#include "loose.h"
#include "pkt-line.h"
#include "repository.h"
#include "strbuf.h"
#include "upload-pack.h"
#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum { REPO_PLAIN, REPO_PERMISSIVE, NR_CONFIGS };

static char fuzz_root[64];
static struct repository *repos[2][NR_CONFIGS]; /* [sha256][config] */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_root(void)
{
	for (int a = 0; a < 2; a++)
		for (int c = 0; c < NR_CONFIGS; c++)
			repo_free(repos[a][c]);
	if (fuzz_root[0])
		nftw(fuzz_root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char *path = xstrfmt("%s/%s", dir, name);
	FILE *f;
	/* the directories on the way */
	for (char *p = strchr(path + strlen(dir) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(path, 0777);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fuzz_fail("cannot write %s", path);
	free(path);
}

static void write_object(const char *objdir, int algo, enum object_type type,
			 const struct strbuf *content, struct object_id *oid)
{
	struct gp_error err = GP_ERROR_INIT;
	if (loose_write(objdir, algo, type, content->buf, content->len, oid, &err))
		fuzz_fail("loose_write: %s", gp_error_msg(&err));
}

static void add_tree_entry(struct strbuf *tree, const char *name, const struct object_id *oid,
			   int algo)
{
	strbuf_addf(tree, "100644 %s", name);
	strbuf_addch(tree, '\0');
	strbuf_add(tree, oid->hash, gp_hash_algos[algo].rawsz);
}

static void add_commit(const char *objdir, int algo, const struct object_id *tree,
		       const struct object_id *parent, long date, const char *msg,
		       struct object_id *oid)
{
	struct strbuf sb = STRBUF_INIT;
	char hex[GP_MAX_HEXSZ + 1];
	strbuf_addf(&sb, "tree %s\n", oid_to_hex_r(hex, tree));
	if (parent)
		strbuf_addf(&sb, "parent %s\n", oid_to_hex_r(hex, parent));
	strbuf_addf(&sb, "author A U Thor <author@example.com> %ld -0700\n"
		    "committer C O Mitter <committer@example.com> %ld -0700\n\n%s\n",
		    date, date, msg);
	write_object(objdir, algo, OBJ_COMMIT, &sb, oid);
	strbuf_release(&sb);
}

static void write_ref(const char *gitdir, const char *name, const struct object_id *oid)
{
	char hex[GP_MAX_HEXSZ + 2];
	oid_to_hex_r(hex, oid);
	strcat(hex, "\n");
	write_file(gitdir, name, hex);
}

static struct repository *make_repo(int algo, int config)
{
	static const char *const configs[NR_CONFIGS] = {
		[REPO_PLAIN] =
			"[uploadpack]\n\thideRefs = refs/hidden\n\tkeepAlive = 0\n",
		[REPO_PERMISSIVE] =
			"[uploadpack]\n\thideRefs = refs/hidden\n\tkeepAlive = 0\n"
			"\tallowTipSHA1InWant = true\n\tallowReachableSHA1InWant = true\n"
			"\tallowFilter = true\n\tallowRefInWant = true\n"
			"\tallowSidebandAll = true\n"
			"[uploadpackfilter \"tree\"]\n\tmaxDepth = 2\n"
			"[uploadpackfilter \"blob:limit\"]\n\tallow = false\n"
			"[transfer]\n\tadvertiseSID = true\n\tadvertiseObjectInfo = true\n"
			"[lsrefs]\n\tunborn = allow\n",
	};
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct object_id blob1, blob2, tree1, tree2, c1, c2, c3, tag;
	struct repository *repo;
	char hex[GP_MAX_HEXSZ + 1];
	char *gitdir = xstrfmt("%s/%s-%d", fuzz_root, gp_hash_algos[algo].name, config);
	char *objdir = xstrfmt("%s/objects", gitdir);

	if (mkdir(gitdir, 0777) || mkdir(objdir, 0777))
		fuzz_fail("cannot make %s", gitdir);
	strbuf_addstr(&sb, "[core]\n\tbare = true\n");
	if (algo == GP_HASH_SHA256)
		strbuf_addstr(&sb, "\trepositoryformatversion = 1\n"
			      "[extensions]\n\tobjectFormat = sha256\n");
	else
		strbuf_addstr(&sb, "\trepositoryformatversion = 0\n");
	strbuf_addstr(&sb, configs[config]);
	write_file(gitdir, "config", sb.buf);
	write_file(gitdir, "HEAD", "ref: refs/heads/main\n");

	strbuf_reset(&sb);
	strbuf_addstr(&sb, "hello\n");
	write_object(objdir, algo, OBJ_BLOB, &sb, &blob1);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "world\n");
	write_object(objdir, algo, OBJ_BLOB, &sb, &blob2);
	strbuf_reset(&sb);
	add_tree_entry(&sb, "file", &blob1, algo);
	write_object(objdir, algo, OBJ_TREE, &sb, &tree1);
	strbuf_reset(&sb);
	add_tree_entry(&sb, "file", &blob1, algo);
	add_tree_entry(&sb, "other", &blob2, algo);
	write_object(objdir, algo, OBJ_TREE, &sb, &tree2);
	add_commit(objdir, algo, &tree1, NULL, 1112911993, "one", &c1);
	add_commit(objdir, algo, &tree2, &c1, 1112912053, "two", &c2);
	add_commit(objdir, algo, &tree1, &c2, 1112912113, "three", &c3);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "object %s\ntype commit\ntag v1\n"
		    "tagger C O Mitter <committer@example.com> 1112911993 -0700\n\n"
		    "version one\n", oid_to_hex_r(hex, &c1));
	write_object(objdir, algo, OBJ_TAG, &sb, &tag);

	write_ref(gitdir, "refs/heads/main", &c2);
	write_ref(gitdir, "refs/heads/side", &c1);
	write_ref(gitdir, "refs/tags/v1", &tag);
	write_ref(gitdir, "refs/hidden/secret", &c3);
	write_ref(gitdir, "refs/namespaces/ns/refs/heads/main", &c1);
	write_file(gitdir, "refs/namespaces/ns/HEAD",
		   "ref: refs/namespaces/ns/refs/heads/main\n");

	if (repo_open_gitdir(&repo, gitdir, &err))
		fuzz_fail("repo_open_gitdir %s: %s", gitdir, gp_error_msg(&err));
	strbuf_release(&sb);
	free(objdir);
	free(gitdir);
	return repo;
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	if (fuzz_root[0])
		return;
	if (!tmp || strlen(tmp) > 40)
		tmp = "/tmp";
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/gp-fuzz-up.XXXXXX", tmp);
	if (!mkdtemp(fuzz_root))
		fuzz_fail("mkdtemp %s failed", fuzz_root);
	atexit(remove_root);
	/* a config or environment of the caller's must not change the answers */
	unsetenv("GIT_USER_AGENT");
	unsetenv("GIT_TEST_SIDEBAND_ALL");
	for (int a = 0; a < 2; a++)
		for (int c = 0; c < NR_CONFIGS; c++)
			repos[a][c] = make_repo(a ? GP_HASH_SHA256 : GP_HASH_SHA1, c);
}

/* The whole answer is pkt-lines; when the session ended well, it ends with a flush. */
static void check_v2_answer(const struct strbuf *out, bool ended_well)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_reader *r = xmalloc(sizeof(*r));
	int ret, last = PKT_EOF;

	pkt_reader_init_mem(r, out->buf, out->len, 0);
	while ((ret = pkt_read(r, &err)) > 0)
		last = ret;
	if (ret < 0)
		fuzz_fail("the v2 answer is no pkt-line stream: %s", gp_error_msg(&err));
	if (ended_well && out->len && last != PKT_FLUSH)
		fuzz_fail("the v2 answer ends with packet kind %d, not a flush", last);
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int versions[] = { 0, 1, 2, 2 };
	struct upload_pack_options opts = UPLOAD_PACK_OPTIONS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf out = STRBUF_INIT;
	struct pkt_sink sink = pkt_sink_strbuf(&out);
	uint8_t sel;
	int fd, ret;

	if (!size)
		return 0;
	setup();
	sel = data[0];
	data++;
	size--;
	opts.version = versions[sel & 3];
	opts.stateless_rpc = sel & 4;
	opts.advertise_refs = (sel & 0x18) == 0x18;
	opts.agent = "fuzz";
	opts.hook_allowed = false;
	if (sel & 0x40)
		setenv("GIT_NAMESPACE", "ns", 1);
	else
		unsetenv("GIT_NAMESPACE");

	fd = memfd_create("fuzz-upload-pack", 0);
	if (fd < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	if (size && write_in_full(fd, data, size) < 0)
		fuzz_fail("write to the memfd: %s", strerror(errno));
	if (lseek(fd, 0, SEEK_SET))
		fuzz_fail("lseek: %s", strerror(errno));

	ret = upload_pack(repos[!!(sel & 0x20)][(sel >> 7) & 1], fd, &sink, &opts, &err);
	if (ret) {
		if (ret != GP_EPROTO && ret != GP_ENOTFOUND && ret != GP_EINVAL)
			fuzz_fail("upload_pack returned %d: %s", ret, gp_error_msg(&err));
		fuzz_check_error(ret, &err, 0, "upload_pack");
	} else if (err.msg) {
		fuzz_fail("upload_pack succeeded with a message: %s", err.msg);
	}
	if (opts.advertise_refs && !ret &&
	    (out.len < 4 || memcmp(out.buf + out.len - 4, "0000", 4)))
		fuzz_fail("an advertisement that does not end with a flush");
	if (opts.version == 2)
		check_v2_answer(&out, !ret);

	close(fd);
	strbuf_release(&out);
	return 0;
}
