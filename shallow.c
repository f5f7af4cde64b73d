/*
 * shallow.c: see shallow.h.
 */
#include "shallow.h"
#include "error.h"
#include "oidset.h"
#include "repository.h"
#include "strbuf.h"

int shallow_read(struct repository *repo, struct oidset *out, struct gp_error *err)
{
	char *path = repo_shallow_path(repo);
	struct strbuf sb = STRBUF_INIT;
	size_t hexsz = gp_hash_algos[repo->hash_algo].hexsz;
	const char *p, *end;
	int ret = 0;

	if (!path)
		return 0;
	if (strbuf_read_file(&sb, path, 0) < 0) {
		if (errno != ENOENT)
			ret = gp_error_errno(err, "cannot read '%s'", path);
		goto out;
	}
	for (p = sb.buf, end = sb.buf + sb.len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
		struct object_id oid;
		if (len != hexsz || hex_to_oid(p, repo->hash_algo, &oid)) {
			ret = CORRUPT(err, "bad shallow line: %.*s", (int)MIN(len, (size_t)80), p);
			goto out;
		}
		oidset_insert(out, &oid);
		p += len + (eol ? 1 : 0);
	}
out:
	strbuf_release(&sb);
	free(path);
	return ret;
}
