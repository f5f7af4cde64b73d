/*
 * hashfile.c: see hashfile.h. Temporary file in the same directory (so
 * rename is atomic), hash while writing, fsync, rename, fsync the
 * directory.
 */
#include "hashfile.h"
#include "error.h"
#include "hash.h"
#include "lockfile.h"
#include "strbuf.h"
#include <fcntl.h>
#include <sys/stat.h>

#define HASHFILE_BUFSZ (128 * 1024)

struct hashfile {
	int fd;                 /* -1 for memory hashfiles */
	char *tmp_path;
	char *final_path;
	struct gp_hash_ctx ctx;
	int algo;
	size_t rawsz;
	unsigned char *buf;
	size_t buf_len;
	uint64_t total;
	int saved_errno;        /* first write error, latched */
	bool stream;            /* writing to a caller's fd (hashfile_new_stream) */
	hashfile_out_fn *out;   /* or to a caller's function (hashfile_new_stream_fn) */
	void *out_data;
	struct strbuf mem;
	char *pid_path;          /* the lock's ~pid companion (lockfile.h), if written */
};

/* A hashfile writing to fd, an open temporary file (it takes tmp_path). */
static struct hashfile *hashfile_wrap_fd(int fd, char *tmp_path, const char *final_path,
					 int algo)
{
	struct hashfile *f = xcalloc(1, sizeof(*f));
	f->fd = fd;
	f->tmp_path = tmp_path;
	f->final_path = xstrdup(final_path);
	hash_init_checksum(&f->ctx, algo);
	f->algo = algo;
	f->rawsz = gp_hash_algos[algo].rawsz;
	f->buf = xmalloc(HASHFILE_BUFSZ);
	strbuf_init(&f->mem, 0);
	return f;
}

int hashfile_create(struct hashfile **out, const char *final_path, int algo,
		    struct gp_error *err)
{
	const char *slash = strrchr(final_path, '/');
	char *tmpl;
	int fd;

	if (slash)
		tmpl = xstrfmt("%.*s/tmp_gitpack_XXXXXX", (int)(slash - final_path), final_path);
	else
		tmpl = xstrdup("tmp_gitpack_XXXXXX");
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		int ret = gp_error_errno(err, "unable to create temporary file '%s'", tmpl);
		free(tmpl);
		return ret;
	}
	/* Git's object files are read-only. */
	fchmod(fd, 0444);
	*out = hashfile_wrap_fd(fd, tmpl, final_path, algo);
	return 0;
}

int hashfile_create_locked(struct hashfile **out, const char *final_path,
			   int algo, struct gp_error *err)
{
	char *lock = xstrfmt("%s.lock", final_path);
	int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		int ret;
		if (errno == EEXIST) {
			struct strbuf holder = STRBUF_INIT;
			if (lockfile_describe_holder(lock, &holder))
				ret = gp_error_set(err, GP_EIO, "unable to create '%s': File exists%s",
						   lock, holder.buf);
			else
				ret = gp_error_set(err, GP_EIO, "unable to create '%s': File exists; "
						   "is another process writing it? If not, remove the "
						   "stale lock", lock);
			strbuf_release(&holder);
		} else {
			ret = gp_error_errno(err, "unable to create '%s'", lock);
		}
		free(lock);
		return ret;
	}
	*out = hashfile_wrap_fd(fd, lock, final_path, algo);
	(*out)->pid_path = lockfile_pid_write(lock);
	return 0;
}

struct hashfile *hashfile_new_memory(int algo)
{
	struct hashfile *f = xcalloc(1, sizeof(*f));
	f->fd = -1;
	hash_init_checksum(&f->ctx, algo);
	f->rawsz = gp_hash_algos[algo].rawsz;
	strbuf_init(&f->mem, 0);
	return f;
}

static void flush_buf(struct hashfile *f);
static void hashfile_destroy(struct hashfile *f);

struct hashfile *hashfile_new_stream(int fd, int algo)
{
	struct hashfile *f = hashfile_wrap_fd(fd, NULL, "<stream>", algo);
	f->stream = true;
	return f;
}

struct hashfile *hashfile_new_stream_fn(hashfile_out_fn *out, void *data, int algo)
{
	struct hashfile *f = hashfile_new_stream(-1, algo);
	f->out = out;
	f->out_data = data;
	return f;
}

/* Send a stream's bytes on; the first failure is latched in saved_errno. */
static void stream_out(struct hashfile *f, const void *buf, size_t len)
{
	if (f->saved_errno)
		return;
	if (f->out) {
		if (f->out(f->out_data, buf, len))
			f->saved_errno = EPIPE;
	} else if (write_in_full(f->fd, buf, len) < 0) {
		f->saved_errno = errno ? errno : EIO;
	}
}

int hashfile_finish_stream(struct hashfile *f, unsigned char *hash_out,
			   struct gp_error *err)
{
	unsigned char hash[GP_MAX_RAWSZ];
	int ret = 0;
	if (!f->stream)
		BUG("hashfile_finish_stream on a file hashfile");
	flush_buf(f);
	hash_final_checksum(&f->ctx, hash);
	stream_out(f, hash, f->rawsz);
	if (f->saved_errno) {
		errno = f->saved_errno;
		ret = gp_error_errno(err, "unable to write the pack to the output");
	} else if (hash_out) {
		memcpy(hash_out, hash, f->rawsz);
	}
	hashfile_destroy(f);
	return ret;
}

static void flush_buf(struct hashfile *f)
{
	if (!f->buf_len)
		return;
	hash_update(&f->ctx, f->buf, f->buf_len);
	stream_out(f, f->buf, f->buf_len);
	f->buf_len = 0;
}

void hashfile_write(struct hashfile *f, const void *data, size_t len)
{
	const unsigned char *p = data;
	f->total += len;
	if (f->fd < 0 && !f->out) {
		hash_update(&f->ctx, data, len);
		strbuf_add(&f->mem, data, len);
		return;
	}
	while (len) {
		size_t room = HASHFILE_BUFSZ - f->buf_len;
		if (!f->buf_len && len >= HASHFILE_BUFSZ) {
			/* Large writes skip the buffer. */
			hash_update(&f->ctx, p, len);
			stream_out(f, p, len);
			return;
		}
		if (room > len)
			room = len;
		memcpy(f->buf + f->buf_len, p, room);
		f->buf_len += room;
		p += room;
		len -= room;
		if (f->buf_len == HASHFILE_BUFSZ)
			flush_buf(f);
	}
}

void hashfile_write_be32(struct hashfile *f, uint32_t v)
{
	unsigned char b[4];
	put_be32(b, v);
	hashfile_write(f, b, 4);
}

void hashfile_write_be64(struct hashfile *f, uint64_t v)
{
	unsigned char b[8];
	put_be64(b, v);
	hashfile_write(f, b, 8);
}

const char *hashfile_tmp_path(const struct hashfile *f)
{
	return f->tmp_path;
}

uint64_t hashfile_total(const struct hashfile *f)
{
	return f->total;
}

int hashfile_rewrite_head(struct hashfile *f, const void *head, size_t len,
			  struct gp_error *err)
{
	uint64_t done = 0;
	if (f->fd < 0 || f->stream)
		BUG("hashfile_rewrite_head needs an open file hashfile");
	if (len > f->total)
		BUG("hashfile_rewrite_head past what was written");
	flush_buf(f);
	if (!f->saved_errno && pwrite(f->fd, head, len, 0) != (ssize_t)len)
		f->saved_errno = errno ? errno : EIO;
	hash_init_checksum(&f->ctx, f->algo);
	/* The buffer is empty after the flush: read back through it. */
	while (!f->saved_errno && done < f->total) {
		size_t want = f->total - done < HASHFILE_BUFSZ
			? (size_t)(f->total - done) : HASHFILE_BUFSZ;
		ssize_t got = pread(f->fd, f->buf, want, (off_t)done);
		if (got <= 0) {
			f->saved_errno = got < 0 ? errno : EIO;
			break;
		}
		hash_update(&f->ctx, f->buf, (size_t)got);
		done += (uint64_t)got;
	}
	if (f->saved_errno) {
		errno = f->saved_errno;
		return gp_error_errno(err, "unable to rewrite the header of '%s'", f->tmp_path);
	}
	return 0;
}

static void hashfile_destroy(struct hashfile *f)
{
	/* The lock is renamed or gone by now; its companion goes with it. */
	lockfile_pid_remove(f->pid_path);
	free(f->tmp_path);
	free(f->final_path);
	free(f->buf);
	strbuf_release(&f->mem);
	free(f);
}

int fsync_parent_dir(const char *path, struct gp_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	int fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;
	if (fd < 0 || fsync(fd) < 0)
		ret = gp_error_errno(err, "unable to sync directory '%s'", dir);
	if (fd >= 0)
		close(fd);
	free(dir);
	return ret;
}

int hashfile_finalize(struct hashfile *f, unsigned char *hash_out, int flags,
		      struct gp_error *err)
{
	unsigned char hash[GP_MAX_RAWSZ];
	if (f->fd < 0)
		BUG("hashfile_finalize on a memory or finalized hashfile");
	flush_buf(f);
	hash_final_checksum(&f->ctx, hash);
	if (!(flags & HASHFILE_NO_TRAILER) && !f->saved_errno &&
	    write_in_full(f->fd, hash, f->rawsz) < 0)
		f->saved_errno = errno ? errno : EIO;
	if (!f->saved_errno && !(flags & HASHFILE_NO_FSYNC) && fsync(f->fd) < 0)
		f->saved_errno = errno;
	if (close(f->fd) < 0 && !f->saved_errno)
		f->saved_errno = errno;
	f->fd = -2; /* finalized: only hashfile_install() or _abort() now */
	if (f->saved_errno) {
		int ret;
		errno = f->saved_errno;
		ret = gp_error_errno(err, "unable to write '%s'",
				     f->final_path ? f->final_path : f->tmp_path);
		unlink(f->tmp_path);
		hashfile_destroy(f);
		return ret;
	}
	if (hash_out)
		memcpy(hash_out, hash, f->rawsz);
	return 0;
}

int hashfile_install(struct hashfile *f, const char *final_path, int flags,
		     struct gp_error *err)
{
	int ret = 0;
	if (f->fd != -2)
		BUG("hashfile_install before hashfile_finalize");
	if ((flags & HASHFILE_KEEP_EXISTING) && !access(final_path, F_OK)) {
		unlink(f->tmp_path);
	} else if (rename(f->tmp_path, final_path) < 0) {
		ret = gp_error_errno(err, "unable to rename '%s' to '%s'", f->tmp_path, final_path);
		unlink(f->tmp_path);
		goto out;
	}
	if (!(flags & HASHFILE_NO_FSYNC))
		ret = fsync_parent_dir(final_path, err);
out:
	hashfile_destroy(f);
	return ret;
}

int hashfile_commit(struct hashfile *f, unsigned char *hash_out, int flags,
		    struct gp_error *err)
{
	char *final_path = xstrdup(f->final_path);
	int ret = hashfile_finalize(f, hash_out, flags, err);
	if (!ret)
		ret = hashfile_install(f, final_path, flags, err);
	free(final_path);
	return ret;
}

void hashfile_finish_memory(struct hashfile *f, struct strbuf *out,
			    unsigned char *hash_out, int flags)
{
	unsigned char hash[GP_MAX_RAWSZ];
	hash_final_checksum(&f->ctx, hash);
	if (!(flags & HASHFILE_NO_TRAILER))
		strbuf_add(&f->mem, hash, f->rawsz);
	if (hash_out)
		memcpy(hash_out, hash, f->rawsz);
	strbuf_addbuf(out, &f->mem);
	hashfile_destroy(f);
}

void hashfile_abort(struct hashfile *f)
{
	if (!f)
		return;
	if (f->stream) {
		hashfile_destroy(f);
		return;
	}
	if (f->fd >= 0)
		close(f->fd);
	if (f->fd != -1)
		unlink(f->tmp_path);
	hashfile_destroy(f);
}
