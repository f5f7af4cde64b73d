/*
 * hashfile.h: checksummed, atomic, durable file writing.
 *
 * Every Git format gitpack writes ends with a hash of everything before
 * it. A hashfile hashes bytes as they are written into a temporary file
 * created in the destination's directory; hashfile_commit() appends the
 * hash, fsyncs the file, renames it into place and fsyncs the directory,
 * so a reader sees either no file or the whole, durable file.
 * hashfile_abort() (or a failed commit) unlinks the temporary file:
 * nothing partial is ever left in place.
 *
 * A hashfile can instead collect into memory (hashfile_new_memory()),
 * for callers that compare with an existing file (index-pack --verify).
 *
 * Write errors are latched: hashfile_write() never fails by itself; the
 * first error is reported by hashfile_commit().
 */
#ifndef GP_HASHFILE_H
#define GP_HASHFILE_H

#include "util.h"

struct gp_error;
struct strbuf;
struct hashfile;

/*
 * Create a temporary file beside final_path (named
 * "<dir>/tmp_<what>_XXXXXX"), hashing with algo.
 * Errors: GP_EIO.
 */
int hashfile_create(struct hashfile **out, const char *final_path, int algo,
		    struct gp_error *err);
/*
 * Like hashfile_create, but the temporary file is "<final_path>.lock",
 * created exclusively: a second writer gets GP_EIO ("... .lock: File
 * exists; is another process writing it?").
 */
int hashfile_create_locked(struct hashfile **out, const char *final_path,
			   int algo, struct gp_error *err);
/*
 * Write to fd (a pipe or stdout, which stays open and is never synced),
 * for packs streamed to another process. hashfile_finish_stream()
 * appends the hash, returns it in hash_out (may be NULL) and frees f.
 * Errors: GP_EIO (a write failed; the reader sees a truncated stream).
 */
struct hashfile *hashfile_new_stream(int fd, int algo);
int hashfile_finish_stream(struct hashfile *f, unsigned char *hash_out,
			   struct gp_error *err);
/*
 * A stream whose bytes go to out() (a side-band framer, a socket, a cache
 * tee) instead of a descriptor. out() returns 0, or non-zero when the
 * bytes could not be sent; the hashfile then stops calling it and
 * hashfile_finish_stream() fails with GP_EIO (the callback keeps its
 * own message for the caller).
 */
typedef int hashfile_out_fn(void *data, const void *buf, size_t len);
struct hashfile *hashfile_new_stream_fn(hashfile_out_fn *out, void *data, int algo);
/* Collect into memory instead of a file. */
struct hashfile *hashfile_new_memory(int algo);

void hashfile_write(struct hashfile *f, const void *data, size_t len);
void hashfile_write_be32(struct hashfile *f, uint32_t v);
void hashfile_write_be64(struct hashfile *f, uint64_t v);
/* The temporary file being written (NULL for memory and stream hashfiles). */
const char *hashfile_tmp_path(const struct hashfile *f);
/* Bytes written so far (excluding the trailing hash). */
uint64_t hashfile_total(const struct hashfile *f);
/*
 * Overwrite the first len bytes written to a file hashfile with head,
 * then hash the whole file again: for a header that is only known at
 * the end (the object count of a pack cut at --max-pack-size). Reads
 * back everything written so far. Errors: GP_EIO.
 */
int hashfile_rewrite_head(struct hashfile *f, const void *head, size_t len,
			  struct gp_error *err);

enum hashfile_flags {
	HASHFILE_NO_TRAILER = 1 << 0, /* do not append the hash */
	HASHFILE_NO_FSYNC = 1 << 1,   /* tests and scratch files only */
	HASHFILE_KEEP_EXISTING = 1 << 2, /* an existing final file wins (same name = same content) */
};

/*
 * Append the hash (unless HASHFILE_NO_TRAILER), returning it in
 * hash_out (may be NULL), then fsync, rename to the final path and fsync
 * the directory. Frees f, on success and on failure.
 * Errors: GP_EIO (the temporary file is removed).
 */
int hashfile_commit(struct hashfile *f, unsigned char *hash_out, int flags,
		    struct gp_error *err);
/*
 * The two halves of hashfile_commit(), for files named after their own
 * checksum (packs): hashfile_finalize() appends the hash, fsyncs and
 * closes the temporary file; hashfile_install() then renames it to
 * final_path (an existing file of that name is kept: same name, same
 * content) and fsyncs the directory. Both free f on failure, and remove
 * the temporary file; hashfile_install() frees it on success too.
 */
int hashfile_finalize(struct hashfile *f, unsigned char *hash_out, int flags,
		      struct gp_error *err);
int hashfile_install(struct hashfile *f, const char *final_path, int flags,
		     struct gp_error *err);

/*
 * For memory hashfiles: append the hash and move the bytes to out.
 * Frees f.
 */
void hashfile_finish_memory(struct hashfile *f, struct strbuf *out,
			    unsigned char *hash_out, int flags);
/* Discard: unlink the temporary file. Accepts NULL. Frees f. */
void hashfile_abort(struct hashfile *f);

/* fsync the directory containing path; 0 or GP_EIO. */
int fsync_parent_dir(const char *path, struct gp_error *err);

#endif
