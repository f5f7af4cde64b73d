/*
 * reftable-compact.c: compacting a reftable stack (reftable-compact.h).
 */
#include "reftable-compact.h"
#include "reftable-write.h"
#include "reftable.h"
#include "error.h"
#include "hash.h"
#include "strbuf.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TABLES_LIST "tables.list"
#define LOCK_SUFFIX ".lock"
/* a table's bytes that are not records: header and footer, v1 and v2 */
#define TABLE_OVERHEAD_V1 (24 + 68)
#define TABLE_OVERHEAD_V2 (28 + 72)

struct names {
	char **items;
	size_t nr, alloc;
};

static void names_release(struct names *n)
{
	for (size_t i = 0; i < n->nr; i++)
		free(n->items[i]);
	free(n->items);
	n->items = NULL;
	n->nr = n->alloc = 0;
}

static int read_names(const char *path, struct names *out, struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	char *p, *nl;

	if (strbuf_read_file(&sb, path, 256) < 0) {
		strbuf_release(&sb);
		if (errno == ENOENT)
			return 0;
		return gp_error_errno(err, "cannot read '%s'", path);
	}
	for (p = sb.buf; p < sb.buf + sb.len; p = nl + 1) {
		nl = memchr(p, '\n', sb.buf + sb.len - p);
		if (!nl)
			nl = sb.buf + sb.len;
		if (nl > p) {
			ALLOC_GROW(out->items, out->nr + 1, out->alloc);
			out->items[out->nr++] = xstrfmt("%.*s", (int)(nl - p), p);
		}
	}
	strbuf_release(&sb);
	return 0;
}

/* Create path exclusively; GP_EIO "data is locked" when it exists. */
static int lock_file(const char *path, int *fd, struct gp_error *err)
{
	*fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (*fd >= 0)
		return 0;
	if (errno == EEXIST) {
		gp_error_set(err, GP_EIO, "data is locked");
		errno = EEXIST; /* lock_file_wait() tells a held lock by it */
		return GP_EIO;
	}
	return gp_error_errno(err, "cannot create '%s'", path);
}

/* lock_file(), retried for up to timeout_ms (-1: forever) while the lock is held */
static int lock_file_wait(const char *path, int *fd, long timeout_ms, struct gp_error *err)
{
	long waited_ms = 0, step_ms = 1;
	for (;;) {
		int ret = lock_file(path, fd, err);
		if (!ret || errno != EEXIST || (timeout_ms >= 0 && waited_ms >= timeout_ms))
			return ret;
		gp_error_clear(err);
		usleep((useconds_t)step_ms * 1000);
		waited_ms += step_ms;
		if (step_ms < 64)
			step_ms *= 2;
	}
}

static int write_file_at(int fd, const char *path, const void *buf, size_t len, mode_t mode,
			 unsigned *nr_fsyncs, struct gp_error *err)
{
	if (write_in_full(fd, buf, len) < 0 || fsync(fd) < 0)
		return gp_error_errno(err, "cannot write '%s'", path);
	(*nr_fsyncs)++;
	if (mode && fchmod(fd, mode) < 0)
		return gp_error_errno(err, "cannot chmod '%s'", path);
	return 0;
}

/*
 * The segment [*start, *end) that auto compaction merges (empty when
 * the sizes already form the geometric sequence). Its end: from the
 * newest table down, the first table whose older neighbour is less
 * than factor times its size (the tables above it are in sequence, and
 * together smaller than it). Its start: walking on down to the oldest,
 * with the bytes of the segment so far accumulated (the merge gathers
 * them all), the oldest table smaller than factor times the bytes
 * newer than it; the walk goes on past the first such table, as an
 * older one may break the sequence too.
 */
static void geometric_segment(const uint64_t *sizes, size_t nr, unsigned factor,
			      size_t *start, size_t *end)
{
	uint64_t bytes = 0;
	size_t pos;

	*start = *end = 0;
	for (pos = nr ? nr - 1 : 0; pos > 0; pos--) {
		if (sizes[pos - 1] < sizes[pos] * factor) {
			*end = pos + 1;
			*start = pos;
			bytes = sizes[pos];
			break;
		}
	}
	if (!*end)
		return;
	for (; pos > 0; pos--) {
		uint64_t newer = bytes;
		bytes += sizes[pos - 1];
		if (sizes[pos - 1] < newer * factor)
			*start = pos - 1;
	}
}

static int merge_tables(struct reftable_table **tables, size_t nr, bool drop_deletions,
			const struct reftable_compact_opts *opts, struct strbuf *image,
			bool *empty, struct gp_error *err)
{
	struct reftable_stack *st = reftable_stack_of_tables(tables, nr);
	struct reftable_writer *w;
	struct reftable_iter *it = NULL;
	struct reftable_ref ref;
	struct reftable_log log;
	size_t records = 0;
	int ret;

	w = reftable_writer_new(opts->algo, opts->write,
				reftable_table_min_update_index(tables[0]),
				reftable_table_max_update_index(tables[nr - 1]));
	ret = reftable_stack_refs(st, NULL, &it, err);
	if (ret)
		goto out;
	if (!drop_deletions)
		reftable_iter_show_deletions(it);
	while ((ret = reftable_iter_next_ref(it, &ref, err)) == 1) {
		records++;
		ret = reftable_writer_add_ref(w, &ref, err);
		if (ret)
			goto out;
	}
	if (ret)
		goto out;
	reftable_iter_free(it);
	it = NULL;
	ret = reftable_stack_logs(st, NULL, &it, err);
	if (ret)
		goto out;
	if (!drop_deletions)
		reftable_iter_show_deletions(it);
	while ((ret = reftable_iter_next_log(it, &log, err)) == 1) {
		records++;
		ret = reftable_writer_add_log(w, &log, err);
		if (ret)
			goto out;
	}
	if (ret)
		goto out;
	*empty = !records;
	ret = reftable_writer_finish(w, image, err);
out:
	reftable_iter_free(it);
	reftable_writer_free(w);
	reftable_stack_free(st);
	return ret;
}

/* Remove the *.ref files of dir that keep does not name and no one locked. */
static void remove_stale(const char *dir, const struct names *keep)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		bool listed = false;
		char *path, *lock;
		struct stat sb;

		if (len < 4 || strcmp(de->d_name + len - 4, ".ref"))
			continue;
		for (size_t i = 0; i < keep->nr && !listed; i++)
			listed = !strcmp(keep->items[i], de->d_name);
		if (listed)
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		lock = xstrfmt("%s%s", path, LOCK_SUFFIX);
		if (lstat(lock, &sb) < 0)
			unlink(path);
		free(path);
		free(lock);
	}
	closedir(d);
}

/* Release the table locks taken (lock_fds[i] >= 0 for each). */
static void unlock_tables(const char *dir, const struct names *names, int *lock_fds)
{
	for (size_t i = 0; i < names->nr; i++) {
		char *lock;
		if (lock_fds[i] < 0)
			continue;
		lock = xstrfmt("%s/%s%s", dir, names->items[i], LOCK_SUFFIX);
		close(lock_fds[i]);
		unlink(lock);
		free(lock);
		lock_fds[i] = -1;
	}
}

int reftable_compact(const char *dir, struct reftable_compact_opts *opts,
		     struct gp_error *err)
{
	char *list_path = xstrfmt("%s/" TABLES_LIST, dir);
	char *list_lock = xstrfmt("%s%s", list_path, LOCK_SUFFIX);
	char *tmp_path = NULL, *new_name = NULL;
	struct names names = { 0 }, result = { 0 };
	struct reftable_table **tables = NULL;
	int *lock_fds = NULL;
	uint64_t *sizes = NULL;
	struct strbuf image = STRBUF_INIT, list = STRBUF_INIT;
	size_t start = 0, end = 0;
	unsigned factor = opts->geometric_factor ? opts->geometric_factor : 2;
	int list_fd = -1, tmp_fd = -1, ret;
	bool empty = false, listed_new = false;
	mode_t mode = 0;
	off_t overhead;
	struct stat sb;

	ret = lock_file_wait(list_lock, &list_fd, opts->lock_timeout_ms, err);
	if (ret) {
		list_fd = -1;
		goto out;
	}
	if (!stat(list_path, &sb))
		mode = sb.st_mode & 07777;
	ret = read_names(list_path, &names, err);
	if (ret)
		goto out;
	overhead = opts->algo == GP_HASH_SHA1 ? TABLE_OVERHEAD_V1 : TABLE_OVERHEAD_V2;
	tables = xcalloc(names.nr + 1, sizeof(*tables));
	sizes = xcalloc(names.nr + 1, sizeof(*sizes));
	for (size_t i = 0; i < names.nr; i++) {
		char *path = xstrfmt("%s/%s", dir, names.items[i]);
		ret = reftable_table_open(&tables[i], path, opts->algo, err);
		if (!ret && !stat(path, &sb))
			sizes[i] = sb.st_size > overhead ? (uint64_t)sb.st_size - overhead : 0;
		free(path);
		if (ret)
			goto out;
	}
	if (opts->autocompact)
		geometric_segment(sizes, names.nr, factor, &start, &end);
	else
		end = names.nr;
	if (end - start < 2) {
		/* nothing to merge; the stale tables still go */
		remove_stale(dir, &names);
		goto out;
	}

	/*
	 * Newest first: with --auto a table locked by another process ends
	 * the segment there, and the newer tables are merged without it,
	 * as git does; otherwise a held lock is an error.
	 */
	lock_fds = xcalloc(names.nr, sizeof(*lock_fds));
	for (size_t i = 0; i < names.nr; i++)
		lock_fds[i] = -1;
	for (size_t i = end; i-- > start;) {
		char *lock = xstrfmt("%s/%s%s", dir, names.items[i], LOCK_SUFFIX);
		ret = lock_file(lock, &lock_fds[i], err);
		free(lock);
		if (!ret)
			continue;
		lock_fds[i] = -1;
		if (!opts->autocompact)
			goto out;
		gp_error_clear(err);
		ret = 0;
		start = i + 1;
		break;
	}
	if (end - start < 2)
		goto out;

	ret = merge_tables(tables + start, end - start, start == 0, opts, &image, &empty, err);
	if (ret)
		goto out;
	if (!empty) {
		uint32_t rnd;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		rnd = (uint32_t)(ts.tv_nsec ^ (getpid() << 16) ^ ts.tv_sec);
		new_name = xstrfmt("0x%012" PRIx64 "-0x%012" PRIx64 "-%08x.ref",
				   reftable_table_min_update_index(tables[start]),
				   reftable_table_max_update_index(tables[end - 1]), rnd);
		tmp_path = xstrfmt("%s/%s.temp", dir, new_name);
		tmp_fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (tmp_fd < 0) {
			ret = gp_error_errno(err, "cannot create '%s'", tmp_path);
			free(tmp_path);
			tmp_path = NULL;
			goto out;
		}
		ret = write_file_at(tmp_fd, tmp_path, image.buf, image.len, mode, &opts->nr_fsyncs, err);
		close(tmp_fd);
		tmp_fd = -1;
		if (!ret) {
			char *final = xstrfmt("%s/%s", dir, new_name);
			if (rename(tmp_path, final) < 0)
				ret = gp_error_errno(err, "cannot rename '%s'", tmp_path);
			free(final);
		}
		if (ret)
			goto out;
		free(tmp_path);
		tmp_path = NULL;
	}

	for (size_t i = 0; i < names.nr; i++) {
		if (i >= start && i < end) {
			if (i == start && new_name) {
				strbuf_addf(&list, "%s\n", new_name);
				ALLOC_GROW(result.items, result.nr + 1, result.alloc);
				result.items[result.nr++] = xstrdup(new_name);
			}
			continue;
		}
		strbuf_addf(&list, "%s\n", names.items[i]);
		ALLOC_GROW(result.items, result.nr + 1, result.alloc);
		result.items[result.nr++] = xstrdup(names.items[i]);
	}
	ret = write_file_at(list_fd, list_lock, list.buf, list.len, mode, &opts->nr_fsyncs, err);
	if (!ret && rename(list_lock, list_path) < 0)
		ret = gp_error_errno(err, "cannot rename '%s'", list_lock);
	if (ret)
		goto out;
	listed_new = true;
	close(list_fd);
	list_fd = -1;
	/* the list no longer names the compacted tables; readers retry */
	for (size_t i = start; i < end; i++) {
		char *path = xstrfmt("%s/%s", dir, names.items[i]);
		unlink(path);
		free(path);
	}
	unlock_tables(dir, &names, lock_fds);
	remove_stale(dir, &result);
out:
	if (tmp_path) {
		unlink(tmp_path);
		free(tmp_path);
	}
	if (ret && new_name && !listed_new) {
		char *path = xstrfmt("%s/%s", dir, new_name);
		unlink(path);
		free(path);
	}
	if (lock_fds)
		unlock_tables(dir, &names, lock_fds);
	if (list_fd >= 0) {
		close(list_fd);
		unlink(list_lock);
	}
	for (size_t i = 0; tables && i < names.nr; i++)
		reftable_table_free(tables[i]);
	free(tables);
	free(sizes);
	free(lock_fds);
	free(new_name);
	names_release(&names);
	names_release(&result);
	strbuf_release(&image);
	strbuf_release(&list);
	free(list_path);
	free(list_lock);
	return ret;
}
