/*
 * pack-refs.c: the packed-refs writer (pack-refs.h). The refs are read
 * through refs.h, which already merges loose and packed refs in
 * strcmp() order, so the file is written in one pass; peeled values
 * come from the old packed-refs when it knows them, else from reading
 * the tag objects.
 *
 * The order of the steps is what keeps a concurrent reader right: the
 * new packed-refs holds every value before any loose file goes, and a
 * loose file goes only while its own lock is held and it still holds
 * what was packed, so no ref ever reads as missing or older.
 */
#include "pack-refs.h"
#include "commit.h"
#include "config.h"
#include "error.h"
#include "hashfile.h"
#include "object.h"
#include "odb.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PACKED_REFS_HEADER "# pack-refs with: peeled fully-peeled sorted \n"

/* Tags deeper than this are not peeled (a loop of tags is corrupt anyway). */
#define PEEL_MAX_DEPTH 64

struct loose_ref {
	char *name;
	struct object_id oid;
};

struct pack_state {
	struct repository *repo;
	struct odb *odb;
	struct strbuf out;
	struct loose_ref *loose;   /* the loose refs written, to prune */
	size_t nr_loose, alloc_loose;
	size_t nr_packed;
};

static bool per_worktree(const char *name)
{
	return starts_with(name, "refs/bisect/") || starts_with(name, "refs/worktree/") ||
	       starts_with(name, "refs/rewritten/");
}

/*
 * What oid finally points at when it is an annotated tag: 1 and *out;
 * 0 when it is no tag, or cannot be read (then no "^" line, as git).
 */
static int peel(struct odb *odb, const struct object_id *oid, int algo, struct object_id *out)
{
	struct object_id cur = *oid;
	int depth;
	for (depth = 0; depth < PEEL_MAX_DEPTH; depth++) {
		struct gp_error err = GP_ERROR_INIT;
		struct object_info info;
		unsigned char *data = NULL;
		enum object_type type;
		struct tag_info tag;
		size_t size;
		if (odb_read_object_info(odb, &cur, &info, 0, &err) || info.type != OBJ_TAG) {
			gp_error_clear(&err);
			break;
		}
		if (odb_read_object(odb, &cur, &type, &data, &size, &err) ||
		    tag_parse(data, size, algo, &tag, &err)) {
			gp_error_clear(&err);
			free(data);
			return 0;
		}
		cur = tag.object;
		free(data);
	}
	if (!depth || depth == PEEL_MAX_DEPTH)
		return 0;
	*out = cur;
	return 1;
}

static int add_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	struct pack_state *st = data;
	char hex[GP_MAX_HEXSZ + 1];
	struct object_id peeled_oid;
	bool has_peeled = false;

	if (flags & (REF_ISSYMREF | REF_ISBROKEN) || per_worktree(refname))
		return 0;
	if (flags & REF_KNOWS_PEELED) {
		if (peeled) {
			peeled_oid = *peeled;
			has_peeled = true;
		}
	} else {
		has_peeled = peel(st->odb, oid, st->repo->hash_algo, &peeled_oid) == 1;
	}
	strbuf_addstr(&st->out, oid_to_hex_r(hex, oid));
	strbuf_addch(&st->out, ' ');
	strbuf_addstr(&st->out, refname);
	strbuf_addch(&st->out, '\n');
	if (has_peeled) {
		strbuf_addch(&st->out, '^');
		strbuf_addstr(&st->out, oid_to_hex_r(hex, &peeled_oid));
		strbuf_addch(&st->out, '\n');
	}
	st->nr_packed++;
	if (!(flags & REF_ISPACKED)) {
		if (st->nr_loose == st->alloc_loose) {
			st->alloc_loose = st->alloc_loose ? 2 * st->alloc_loose : 64;
			st->loose = xrealloc(st->loose, st->alloc_loose * sizeof(*st->loose));
		}
		st->loose[st->nr_loose].name = xstrdup(refname);
		st->loose[st->nr_loose].oid = *oid;
		st->nr_loose++;
	}
	return 0;
}

/* Create packed-refs.lock, waiting up to timeout_ms for another writer. */
static int lock_packed(const char *path, int timeout_ms, struct hashfile **out,
		       struct gp_error *err)
{
	int waited_ms = 0;
	for (;;) {
		int ret = hashfile_create_locked(out, path, GP_HASH_SHA1, err);
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		char *lock;
		bool held;
		if (!ret) {
			/* As git's lockfiles: 0666 less the umask (the lock is made 0444). */
			mode_t mask = umask(0);
			umask(mask);
			chmod(hashfile_tmp_path(*out), 0666 & ~mask);
			return 0;
		}
		lock = xstrfmt("%s.lock", path);
		held = !access(lock, F_OK);
		free(lock);
		if (!held || waited_ms >= timeout_ms)
			return ret;
		gp_error_clear(err);
		nanosleep(&ts, NULL);
		waited_ms += 10;
	}
}

/* The value of the loose file refname, read again under its lock. */
static bool loose_still(struct repository *repo, const char *path, const struct object_id *oid)
{
	struct strbuf buf = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct object_id now;
	char *target = NULL;
	bool same = false;
	if (strbuf_read_file(&buf, path, 256) >= 0 &&
	    !refs_parse_loose_buf(buf.buf, buf.len, repo->hash_algo, &now, &target, &err))
		same = !target && oideq(&now, oid);
	gp_error_clear(&err);
	free(target);
	strbuf_release(&buf);
	return same;
}

/* Remove the empty directories above refs/<x>/.../name, up to refs/<x>. */
static void remove_empty_parents(const char *commondir, const char *refname)
{
	char *path = xstrfmt("%s/%s", commondir, refname);
	size_t floor = strlen(commondir) + 1 + strlen("refs/");
	const char *second = strchr(refname + strlen("refs/"), '/');
	char *slash;
	if (second)
		floor = strlen(commondir) + 1 + (size_t)(second - refname);
	while ((slash = strrchr(path, '/')) && (size_t)(slash - path) > floor) {
		*slash = '\0';
		if (rmdir(path))
			break;
	}
	free(path);
}

static size_t prune_loose(struct pack_state *st)
{
	size_t nr = 0;
	for (size_t i = 0; i < st->nr_loose; i++) {
		const struct loose_ref *ref = &st->loose[i];
		char *path = xstrfmt("%s/%s", st->repo->commondir, ref->name);
		char *lock = xstrfmt("%s.lock", path);
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0) {
			close(fd);
			if (loose_still(st->repo, path, &ref->oid) && !unlink(path)) {
				nr++;
				unlink(lock);
				remove_empty_parents(st->repo->commondir, ref->name);
			} else {
				unlink(lock);
			}
		}
		free(lock);
		free(path);
	}
	return nr;
}

int pack_refs_run(struct repository *repo, bool prune, struct pack_refs_result *result,
		  struct gp_error *err)
{
	struct pack_state st = { .repo = repo, .out = STRBUF_INIT };
	struct hashfile *f = NULL;
	char *path = NULL;
	int timeout_ms = 1000, ret;

	memset(result, 0, sizeof(*result));
	if (repo->ref_storage != REF_STORAGE_FILES)
		return gp_error_set(err, GP_EINVAL, "pack-refs: the refs are in reftable tables");
	ret = repo_odb(repo, &st.odb, err);
	if (ret)
		return ret;
	if (config_get_int(&repo->config, "core.packedrefstimeout", &timeout_ms, err)) {
		gp_error_clear(err);
		timeout_ms = 1000;
	}
	if (timeout_ms < 0)
		timeout_ms = INT32_MAX;
	path = xstrfmt("%s/packed-refs", repo->commondir);
	/* Under the lock, so that the refs read are those no other packer moves. */
	ret = lock_packed(path, timeout_ms, &f, err);
	if (ret)
		goto out;
	strbuf_addstr(&st.out, PACKED_REFS_HEADER);
	ret = refs_for_each(repo, NULL, add_ref, &st, err);
	if (ret) {
		hashfile_abort(f);
		goto out;
	}
	hashfile_write(f, st.out.buf, st.out.len);
	ret = hashfile_commit(f, NULL, HASHFILE_NO_TRAILER, err);
	if (ret)
		goto out;
	result->nr_packed = st.nr_packed;
	if (prune)
		result->nr_pruned = prune_loose(&st);
out:
	for (size_t i = 0; i < st.nr_loose; i++)
		free(st.loose[i].name);
	free(st.loose);
	strbuf_release(&st.out);
	free(path);
	return ret;
}
