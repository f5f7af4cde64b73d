/*
 * builtin/index-pack.c: gitpack index-pack, git's options and output.
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../hashfile.h"
#include "../object.h"
#include "../pack-indexer.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../strbuf.h"
#include <fcntl.h>
#include <sys/stat.h>

static const char *const index_pack_usage[] = {
	"gitpack index-pack [-v] [-o <index-file>] [--[no-]rev-index] [--keep | --keep=<msg>]\n"
	"                   [--threads=<n>] [--object-format=<hash>] [--index-version=<v>[,<offset>]]\n"
	"                   [--verify] (<pack-file> | --stdin [<pack-file>])",
	NULL,
};

static int parse_index_version(const struct option *opt, const char *arg, int unset)
{
	struct pack_idx_opts *idx = opt->value;
	char *end;
	unsigned long v;
	if (unset || !arg)
		return error("--index-version needs a value");
	v = strtoul(arg, &end, 10);
	if (end == arg || (v != 1 && v != 2))
		return error("bad index version '%s'", arg);
	idx->version = (uint32_t)v;
	if (*end == ',') {
		const char *limit = end + 1;
		unsigned long long lim = strtoull(limit, &end, 0);
		if (end == limit || *end || lim > 0x7fffffff)
			return error("bad index version offset '%s'", limit);
		idx->off32_limit = lim;
	} else if (*end) {
		return error("bad index version '%s'", arg);
	}
	return 0;
}

/* Copy standard input into a new temporary pack in dir. */
static char *spool_stdin(const char *dir, struct gp_error *err)
{
	char *tmp = xstrfmt("%s/tmp_pack_XXXXXX", dir);
	char *buf = xmalloc(1 << 20);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		gp_error_errno(err, "unable to create '%s'", tmp);
		goto fail;
	}
	fchmod(fd, 0444);
	for (;;) {
		ssize_t n = read(0, buf, 1 << 20);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			gp_error_errno(err, "read error on input");
			goto fail_unlink;
		}
		if (!n)
			break;
		if (write_in_full(fd, buf, (size_t)n) < 0) {
			gp_error_errno(err, "unable to write '%s'", tmp);
			goto fail_unlink;
		}
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		gp_error_errno(err, "unable to write '%s'", tmp);
		goto fail_unlink;
	}
	free(buf);
	return tmp;
fail_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
fail:
	free(buf);
	free(tmp);
	return NULL;
}

static char *replace_ext(const char *path, const char *old_ext, const char *new_ext)
{
	size_t len = strlen(path);
	if (!ends_with(path, old_ext))
		return NULL;
	return xstrfmt("%.*s%s", (int)(len - strlen(old_ext)), path, new_ext);
}

static int write_keep_file(const char *path, const char *msg, struct gp_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		return gp_error_errno(err, "cannot write keep file '%s'", path);
	}
	if (msg && *msg) {
		if (write_in_full(fd, msg, strlen(msg)) < 0 || write_in_full(fd, "\n", 1) < 0) {
			close(fd);
			return gp_error_errno(err, "cannot write keep file '%s'", path);
		}
	}
	if (fsync(fd) < 0 || close(fd) < 0)
		return gp_error_errno(err, "cannot close keep file '%s'", path);
	return 0;
}

/* Compare a freshly computed file image with the one on disk. */
static int verify_against(const char *path, const struct strbuf *want, struct gp_error *err)
{
	struct strbuf have = STRBUF_INIT;
	int ret = 0;
	if (strbuf_read_file(&have, path, want->len) < 0)
		ret = gp_error_errno(err, "cannot read '%s'", path);
	else if (have.len != want->len || memcmp(have.buf, want->buf, want->len))
		ret = gp_error_set(err, GP_ECORRUPT, "%s does not match its pack", path);
	strbuf_release(&have);
	return ret;
}

int cmd_index_pack(int argc, const char **argv, struct repository *repo)
{
	struct pack_indexer_opts opts = PACK_INDEXER_OPTS_INIT;
	struct pack_idx_opts idx_opts = PACK_IDX_OPTS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct indexed_pack *ip = NULL;
	const char *index_name = NULL, *object_format = NULL, *keep_msg = NULL;
	int from_stdin = 0, verify = 0, verbose = 0, progress = -1, rev_index = -1, threads = -1;
	int keep = 0, fix_thin = 0, strict = 0;
	char *pack_path = NULL, *idx_path = NULL, *rev_path = NULL, *tmp_pack = NULL;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;
	bool v;
	struct option options[] = {
		OPT_STRING('o', NULL, &index_name, "index-file", "write the pack index to <index-file>"),
		OPT_BOOL(0, "rev-index", &rev_index, "write a reverse index (.rev) beside the index"),
		OPT_BOOL(0, "stdin", &from_stdin, "read the pack from standard input"),
		OPT_BOOL(0, "verify", &verify, "check the existing index against the pack"),
		OPT_COUNTUP('v', NULL, &verbose, "show progress"),
		OPT_BOOL(0, "progress", &progress, "show progress (default: when stderr is a terminal)"),
		OPT_INTEGER(0, "threads", &threads, "threads for delta resolution (0: one per CPU)"),
		OPT_STRING(0, "object-format", &object_format, "hash", "the object format of the pack (sha1, sha256)"),
		OPT_CALLBACK(0, "index-version", &idx_opts, "version[,offset]",
			     "index version to write, and the largest 32-bit offset", parse_index_version),
		OPT_STRING(0, "keep", &keep_msg, "msg", "write a .keep file (with --stdin)"),
		OPT_BOOL(0, "fix-thin", &fix_thin, "(not supported: thin packs are refused)"),
		OPT_BOOL(0, "strict", &strict, "(accepted for compatibility)"),
		OPT_END(),
	};

	/* git accepts a bare --keep; parse-options wants a value, so map it. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--keep")) {
			argv[i] = "--keep=";
		}
	idx_opts.version = 0; /* unset: pack.indexVersion, then 2 */
	argc = parse_options(argc, argv, options, index_pack_usage);
	keep = keep_msg != NULL;

	opts.algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	if (object_format) {
		opts.algo = hash_algo_by_name(object_format);
		if (!opts.algo)
			die("unknown hash algorithm '%s'", object_format);
	}
	if (repo) {
		int n;
		if (rev_index < 0 && !config_get_bool(&repo->config, "pack.writereverseindex", &v, &err))
			rev_index = v;
		if (threads < 0 && !config_get_int(&repo->config, "pack.threads", &n, &err))
			threads = n;
		if (!idx_opts.version && !config_get_int(&repo->config, "pack.indexversion", &n, &err))
			idx_opts.version = (uint32_t)n;
		gp_error_clear(&err);
	}
	if (rev_index < 0)
		rev_index = 1;
	if (!idx_opts.version)
		idx_opts.version = 2;
	opts.threads = threads < 0 ? 0 : threads;
	if (progress < 0)
		progress = verbose > 0 || isatty(2);
	opts.progress = progress;
	if (fix_thin)
		die("--fix-thin is not supported: gitpack refuses thin packs");

	if (argc > 1 || (!from_stdin && argc != 1))
		usage_with_options(index_pack_usage, options);
	if (keep && !from_stdin)
		die("--keep only makes sense with --stdin");
	if (from_stdin && verify)
		die("--verify with --stdin does not make sense");

	if (from_stdin) {
		char *dir;
		if (argc == 1) {
			dir = xstrdup(argv[0]);
			char *slash = strrchr(dir, '/');
			if (slash)
				*slash = '\0';
			else
				strcpy(dir, ".");
		} else {
			if (!repo)
				die("--stdin requires a git repository");
			dir = repo_obj_path(repo, "pack");
		}
		tmp_pack = spool_stdin(dir, &err);
		free(dir);
		if (!tmp_pack)
			die_error(&err);
		pack_path = xstrdup(tmp_pack);
	} else {
		pack_path = xstrdup(argv[0]);
		if (!index_name && !ends_with(pack_path, ".pack"))
			die("packfile name '%s' does not end with '.pack'", pack_path);
	}

	ret = pack_index(pack_path, &opts, &ip, &err);
	if (ret) {
		if (tmp_pack)
			unlink(tmp_pack);
		die_error(&err);
	}
	hash_to_hex_r(hex, ip->pack_hash, gp_hash_algos[opts.algo].rawsz);

	if (from_stdin) {
		char *final_pack, *keep_path;
		if (argc == 1) {
			final_pack = xstrdup(argv[0]);
		} else {
			char *rel = xstrfmt("pack/pack-%s.pack", hex);
			final_pack = repo_obj_path(repo, rel);
			free(rel);
		}
		idx_path = index_name ? xstrdup(index_name) : replace_ext(final_pack, ".pack", ".idx");
		if (!idx_path)
			die("packfile name '%s' does not end with '.pack'", final_pack);
		keep_path = replace_ext(final_pack, ".pack", ".keep");
		if (keep && keep_path && write_keep_file(keep_path, keep_msg, &err))
			goto fail_tmp;
		/* The pack first, the .rev next, the .idx last: readers look for the .idx. */
		if (!access(final_pack, F_OK)) {
			unlink(tmp_pack);
		} else if (rename(tmp_pack, final_pack) < 0) {
			gp_error_errno(&err, "unable to rename '%s' to '%s'", tmp_pack, final_pack);
			goto fail_tmp;
		}
		free(keep_path);
		free(pack_path);
		pack_path = final_pack;
		FREE_AND_NULL(tmp_pack);
	} else {
		idx_path = index_name ? xstrdup(index_name) : replace_ext(pack_path, ".pack", ".idx");
	}
	rev_path = ends_with(idx_path, ".idx") ? replace_ext(idx_path, ".idx", ".rev")
					       : xstrfmt("%s.rev", idx_path);

	if (verify) {
		struct strbuf want = STRBUF_INIT;
		ret = indexed_pack_write_idx(ip, NULL, &want, &idx_opts, &err);
		if (!ret)
			ret = verify_against(idx_path, &want, &err);
		strbuf_release(&want);
		if (ret)
			die_error(&err);
	} else {
		if (rev_index && indexed_pack_write_rev(ip, rev_path, &err))
			die_error(&err);
		if (indexed_pack_write_idx(ip, idx_path, NULL, &idx_opts, &err)) {
			if (rev_index)
				unlink(rev_path);
			die_error(&err);
		}
	}

	if (from_stdin)
		printf("%s\t%s\n", keep ? "keep" : "pack", hex);
	else if (!verify)
		printf("%s\n", hex);
	goto out;
fail_tmp:
	unlink(tmp_pack);
	die_error(&err);
out:
	indexed_pack_free(ip);
	free(pack_path);
	free(idx_path);
	free(rev_path);
	free(tmp_pack);
	gp_error_clear(&err);
	return 0;
}
