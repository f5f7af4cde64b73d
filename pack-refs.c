/*
 * pack-refs.c: the packed-refs writer (pack-refs.h). The loose refs
 * and the old packed-refs are read apart (refs.h, REFS_EACH_LOOSE_ONLY
 * and REFS_EACH_PACKED_ONLY), both in strcmp() order: the selected
 * loose refs are collected first, then merged into the stream of old
 * entries as it is written, so the file is written in one pass and
 * only the loose refs are held in memory. Peeled values come from the
 * old packed-refs when it knows them, else from reading the tags.
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
#include "lockfile.h"
#include "object.h"
#include "odb.h"
#include "path-patterns.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PACKED_REFS_HEADER "# pack-refs with: peeled fully-peeled sorted \n"

/*
 * Tags deeper than this are not peeled. A chain cannot loop (each tag
 * names the one below by its hash); the bound only keeps a damaged or
 * hostile object store from holding the writer forever.
 */
#define PEEL_MAX_DEPTH 1024

/* git's lockfile.c follows this many symbolic links to the file it locks. */
#define LOCK_SYMLINK_DEPTH 5

/* PACK_REFS_AUTO: 5 x floor(log2(size / 100)), at least this many. */
#define AUTO_MIN_LOOSE 16
#define AUTO_BYTES_PER_REF 100
#define AUTO_LOOSE_PER_DOUBLING 5

struct loose_ref {
	char *name;
	struct object_id oid;
	struct object_id peeled;
	bool has_peeled;
};

struct selection {
	struct repository *repo;
	struct odb *odb;
	const struct pack_refs_opts *opts;
	bool packing;              /* not only counting: peel, check branches */
	struct pack_refs_result *result; /* for messages; may be NULL */
	struct loose_ref *items;   /* selected, in strcmp() order */
	size_t nr, alloc;
	struct gp_error *err;
};

void pack_refs_result_release(struct pack_refs_result *result)
{
	for (size_t i = 0; i < result->nr_messages; i++)
		free(result->messages[i]);
	free(result->messages);
	memset(result, 0, sizeof(*result));
}

static void selection_release(struct selection *sel)
{
	for (size_t i = 0; i < sel->nr; i++)
		free(sel->items[i].name);
	free(sel->items);
	sel->items = NULL;
	sel->nr = sel->alloc = 0;
}

static bool per_worktree(const char *name)
{
	return starts_with(name, "refs/bisect/") || starts_with(name, "refs/worktree/") ||
	       starts_with(name, "refs/rewritten/");
}

static bool matches_any(const char *const *patterns, size_t nr, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < nr; i++)
		if (glob_match(patterns[i], strlen(patterns[i]), name, len, 0))
			return true;
	return false;
}

/* The include/exclude part of the selection (pack-refs.h). */
static bool pattern_selects(const struct pack_refs_opts *opts, const char *name)
{
	if (matches_any(opts->excludes, opts->nr_excludes, name))
		return false;
	if (opts->flags & PACK_REFS_ALL)
		return true;
	if (opts->nr_includes)
		return matches_any(opts->includes, opts->nr_includes, name);
	return starts_with(name, "refs/tags/");
}

GP_PRINTF(2, 3) static void add_message(struct pack_refs_result *result, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;
	if (!result)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	ALLOC_GROW(result->messages, result->nr_messages + 1, result->alloc_messages);
	result->messages[result->nr_messages++] = strbuf_detach(&msg, NULL);
}

/*
 * Peel the tag oid as pack-refs.h says: 1 and *out when every object
 * on the way exists and has the type its tag names; 0 otherwise (then
 * no "^" line; a wrong type is reported to result), and for an object
 * that is not a tag.
 */
static int peel(struct odb *odb, const struct object_id *oid, int algo, struct object_id *out,
		struct pack_refs_result *result)
{
	struct object_id cur = *oid;
	struct gp_error err = GP_ERROR_INIT;
	struct object_info info;
	int depth, ret = 0;

	if (odb_read_object_info(odb, &cur, &info, 0, &err) || info.type != OBJ_TAG)
		goto out;
	for (depth = 0; depth < PEEL_MAX_DEPTH && info.type == OBJ_TAG; depth++) {
		unsigned char *data = NULL;
		enum object_type type;
		struct tag_info tag;
		size_t size;
		bool ok = !odb_read_object(odb, &cur, &type, &data, &size, &err) &&
			  type == OBJ_TAG && !tag_parse(data, size, algo, &tag, &err);
		free(data);
		if (!ok)
			goto out;
		cur = tag.object;
		if (odb_read_object_info(odb, &cur, &info, 0, &err))
			goto out;
		if (info.type != tag.type) {
			char hex[GP_MAX_HEXSZ + 1];
			add_message(result, "object %s is a %s, not a %s", oid_to_hex_r(hex, &cur),
				    type_name(tag.type), type_name(info.type));
			goto out;
		}
	}
	if (info.type == OBJ_TAG)
		goto out;
	*out = cur;
	ret = 1;
out:
	gp_error_clear(&err);
	return ret;
}

/* refs_each_fn over the loose refs: keep the selected ones. */
static int select_loose(const char *refname, const struct object_id *oid,
			const struct object_id *peeled, unsigned flags, void *data)
{
	struct selection *sel = data;
	struct gp_error sub = GP_ERROR_INIT;
	struct object_info info;
	struct loose_ref *ref;
	int ret;

	if (flags & (REF_ISSYMREF | REF_ISBROKEN) || per_worktree(refname))
		return 0;
	/* As git: every candidate is checked, selected or not. */
	ret = odb_read_object_info(sel->odb, oid, &info, 0, &sub);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(&sub);
		add_message(sel->result, "%s does not point to a valid object!", refname);
		return 0;
	}
	if (ret) {
		gp_error_move(sel->err, &sub);
		return gp_error_prefix(sel->err, "cannot read the object of '%s'", refname);
	}
	if (!pattern_selects(sel->opts, refname))
		return 0;
	if (sel->packing && starts_with(refname, "refs/heads/") && info.type != OBJ_COMMIT) {
		char hex[GP_MAX_HEXSZ + 1];
		return gp_error_set(sel->err, GP_EINVAL,
				    "failure preparing to create packed reference %s: trying to "
				    "write non-commit object %s to branch '%s'",
				    refname, oid_to_hex_r(hex, oid), refname);
	}
	ALLOC_GROW(sel->items, sel->nr + 1, sel->alloc);
	ref = &sel->items[sel->nr++];
	ref->name = xstrdup(refname);
	ref->oid = *oid;
	ref->has_peeled = sel->packing && info.type == OBJ_TAG &&
			  peel(sel->odb, oid, sel->repo->hash_algo, &ref->peeled, sel->result) == 1;
	return 0;
}

static int collect(struct selection *sel)
{
	return refs_for_each_ext(sel->repo, "refs/", REFS_EACH_LOOSE_ONLY, select_loose, sel,
				 sel->err);
}

static int check_and_open(struct repository *repo, const struct pack_refs_opts *opts,
			  struct odb **odb, struct gp_error *err)
{
	if (repo->ref_storage != REF_STORAGE_FILES)
		return gp_error_set(err, GP_EINVAL, "pack-refs: the refs are in reftable tables");
	return repo_odb(repo, odb, err);
}

/* floor(log2(n)); 0 for 0 and 1. */
static unsigned log2_floor(uint64_t n)
{
	unsigned l = 0;
	while (n >>= 1)
		l++;
	return l;
}

int pack_refs_check_auto(struct repository *repo, const struct pack_refs_opts *opts,
			 bool *needed, struct pack_refs_result *result, struct gp_error *err)
{
	struct selection sel = { .repo = repo, .opts = opts, .result = result, .err = err };
	char *path = NULL;
	struct stat st;
	uint64_t size = 0, limit;
	int ret;

	*needed = false;
	ret = check_and_open(repo, opts, &sel.odb, err);
	if (ret)
		return ret;
	path = xstrfmt("%s/packed-refs", repo->commondir);
	if (!stat(path, &st)) {
		size = (uint64_t)st.st_size;
	} else if (errno != ENOENT && errno != ENOTDIR) {
		ret = gp_error_errno(err, "cannot stat '%s'", path);
		goto out;
	}
	limit = (uint64_t)log2_floor(size / AUTO_BYTES_PER_REF) * AUTO_LOOSE_PER_DOUBLING;
	if (limit < AUTO_MIN_LOOSE)
		limit = AUTO_MIN_LOOSE;
	ret = collect(&sel);
	if (!ret)
		*needed = sel.nr >= limit;
out:
	selection_release(&sel);
	free(path);
	return ret;
}

/* The target of the symbolic link path into link; false when it is none. */
static bool read_link(const char *path, struct strbuf *link)
{
	size_t size = 256;
	strbuf_reset(link);
	for (;;) {
		ssize_t got;
		strbuf_grow(link, size);
		got = readlink(path, link->buf, size);
		if (got < 0)
			return false;
		if ((size_t)got < size) {
			strbuf_setlen(link, (size_t)got);
			return got > 0;
		}
		if (size >= 65536)
			return false;   /* no path is this long */
		size *= 2;
	}
}

/*
 * The file a lock on path stands for: path followed through up to
 * LOCK_SYMLINK_DEPTH symbolic links, a relative target taken from the
 * link's directory (git's lockfiles do the same). Caller frees.
 */
static char *resolve_lock_target(const char *path)
{
	struct strbuf cur = STRBUF_INIT, link = STRBUF_INIT;
	strbuf_addstr(&cur, path);
	for (int depth = 0; depth < LOCK_SYMLINK_DEPTH; depth++) {
		char *slash;
		if (!read_link(cur.buf, &link))
			break;
		if (link.buf[0] == '/') {
			strbuf_reset(&cur);
		} else {
			slash = strrchr(cur.buf, '/');
			strbuf_setlen(&cur, slash ? (size_t)(slash - cur.buf) + 1 : 0);
		}
		strbuf_addbuf(&cur, &link);
	}
	strbuf_release(&link);
	return strbuf_detach(&cur, NULL);
}

/* Create <path>.lock, waiting up to timeout_ms for another writer. */
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

struct writer {
	struct hashfile *f;
	struct odb *odb;
	int algo;
	const struct selection *sel;
	size_t loose_pos;          /* the next selected loose ref to write */
	size_t nr_written;
};

static void write_entry(struct writer *w, const char *name, const struct object_id *oid,
			const struct object_id *peeled)
{
	char hex[GP_MAX_HEXSZ + 1];
	hashfile_write(w->f, oid_to_hex_r(hex, oid), gp_hash_algos[w->algo].hexsz);
	hashfile_write(w->f, " ", 1);
	hashfile_write(w->f, name, strlen(name));
	hashfile_write(w->f, "\n", 1);
	if (peeled) {
		hashfile_write(w->f, "^", 1);
		hashfile_write(w->f, oid_to_hex_r(hex, peeled), gp_hash_algos[w->algo].hexsz);
		hashfile_write(w->f, "\n", 1);
	}
	w->nr_written++;
}

/* Write the selected loose refs that sort before name (all: NULL). */
static void write_loose_before(struct writer *w, const char *name)
{
	while (w->loose_pos < w->sel->nr) {
		const struct loose_ref *ref = &w->sel->items[w->loose_pos];
		if (name && strcmp(ref->name, name) >= 0)
			break;
		write_entry(w, ref->name, &ref->oid, ref->has_peeled ? &ref->peeled : NULL);
		w->loose_pos++;
	}
}

/* refs_each_fn over the old packed entries: merge the loose refs in. */
static int write_packed(const char *refname, const struct object_id *oid,
			const struct object_id *peeled, unsigned flags, void *data)
{
	struct writer *w = data;
	struct object_id peeled_oid;
	bool has_peeled = false;

	write_loose_before(w, refname);
	if (w->loose_pos < w->sel->nr && !strcmp(w->sel->items[w->loose_pos].name, refname))
		return 0;   /* the selected loose ref, written next, replaces it */
	if (flags & REF_ISBROKEN) {
		/* an invalid name: kept, with the null id it reads as (git writes the same) */
	} else if (flags & REF_KNOWS_PEELED) {
		if (peeled) {
			peeled_oid = *peeled;
			has_peeled = true;
		}
	} else {
		has_peeled = peel(w->odb, oid, w->algo, &peeled_oid, w->sel->result) == 1;
	}
	write_entry(w, refname, oid, has_peeled ? &peeled_oid : NULL);
	return 0;
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

static size_t prune_loose(const struct selection *sel)
{
	size_t nr = 0;
	for (size_t i = 0; i < sel->nr; i++) {
		const struct loose_ref *ref = &sel->items[i];
		char *path = xstrfmt("%s/%s", sel->repo->commondir, ref->name);
		char *lock = xstrfmt("%s.lock", path);
		int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0) {
			char *pid_path;
			close(fd);
			pid_path = lockfile_pid_write(lock);
			if (loose_still(sel->repo, path, &ref->oid) && !unlink(path)) {
				nr++;
				lockfile_pid_remove(pid_path);
				unlink(lock);
				remove_empty_parents(sel->repo->commondir, ref->name);
			} else {
				lockfile_pid_remove(pid_path);
				unlink(lock);
			}
		}
		free(lock);
		free(path);
	}
	return nr;
}

int pack_refs_run(struct repository *repo, const struct pack_refs_opts *opts,
		  struct pack_refs_result *result, struct gp_error *err)
{
	struct selection sel = { .repo = repo, .opts = opts, .packing = true,
				 .result = result, .err = err };
	struct writer w = { .algo = repo->hash_algo, .sel = &sel };
	struct hashfile *f = NULL;
	char *path = NULL, *target = NULL;
	int timeout_ms = 1000, ret;

	if (opts->flags & PACK_REFS_AUTO) {
		bool needed;
		ret = pack_refs_check_auto(repo, opts, &needed, result, err);
		if (ret || !needed) {
			result->skipped = !ret;
			return ret;
		}
		/* the pass below, under the lock, reports the same again */
		for (size_t i = 0; i < result->nr_messages; i++)
			free(result->messages[i]);
		result->nr_messages = 0;
	}
	ret = check_and_open(repo, opts, &sel.odb, err);
	if (ret)
		return ret;
	w.odb = sel.odb;
	if (config_get_int(&repo->config, "core.packedrefstimeout", &timeout_ms, err)) {
		gp_error_clear(err);
		timeout_ms = 1000;
	}
	if (timeout_ms < 0)
		timeout_ms = INT32_MAX;
	path = xstrfmt("%s/packed-refs", repo->commondir);
	target = resolve_lock_target(path);
	/* Under the lock, so that the refs read are those no other packer moves. */
	ret = lock_packed(target, timeout_ms, &f, err);
	if (ret)
		goto out;
	w.f = f;
	ret = collect(&sel);
	if (!ret) {
		hashfile_write(f, PACKED_REFS_HEADER, strlen(PACKED_REFS_HEADER));
		ret = refs_for_each_ext(repo, "", REFS_EACH_PACKED_ONLY | REFS_EACH_BROKEN,
					write_packed, &w, err);
	}
	if (ret) {
		hashfile_abort(f);
		goto out;
	}
	write_loose_before(&w, NULL);
	ret = hashfile_commit(f, NULL, HASHFILE_NO_TRAILER, err);
	if (ret)
		goto out;
	result->nr_packed = w.nr_written;
	result->nr_loose_packed = sel.nr;
	if (opts->flags & PACK_REFS_PRUNE)
		result->nr_pruned = prune_loose(&sel);
out:
	selection_release(&sel);
	free(target);
	free(path);
	return ret;
}
