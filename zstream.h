/*
 * zstream.h: zlib-format inflate and deflate of whole buffers.
 *
 * Git stores every object (loose and packed) as a zlib stream. Pack entry
 * headers give the exact inflated size, so whole-buffer inflate into a
 * buffer of that size is possible; libdeflate does that about twice as
 * fast as zlib, and is used when gitpack is built with it. zlib is the
 * fallback and is always used for streaming.
 *
 * Both paths report the same errors (the zlib path words them). One
 * difference is accepted: libdeflate decodes a few malformed streams
 * that zlib refuses (no real compressor writes them); the adler-32
 * check still vouches for every byte produced.
 *
 * A struct inflater is not thread-safe: use one per thread.
 */
#ifndef GP_ZSTREAM_H
#define GP_ZSTREAM_H

#include "util.h"

struct gp_error;
struct strbuf;
struct inflater;

struct inflater *inflater_new(void);
void inflater_free(struct inflater *inf);

/*
 * Inflate the zlib stream at the start of in[0..in_len) into exactly
 * out_len bytes at out. The stream may be followed by unrelated bytes.
 * On success *consumed is the length of the zlib stream.
 * Errors: GP_ECORRUPT ("zlib stream is corrupt", "inflated to N bytes,
 * expected M", "truncated zlib stream"); the message has no file name:
 * callers prefix it.
 */
int inflate_exact(struct inflater *inf, const void *in, size_t in_len,
		  void *out, size_t out_len, size_t *consumed,
		  struct gp_error *err);

/*
 * Inflate a zlib stream of unknown size, appending to out, at most
 * max_out bytes (GP_ECORRUPT beyond that). Used for loose objects.
 */
int inflate_to_strbuf(const void *in, size_t in_len, struct strbuf *out,
		      size_t max_out, size_t *consumed, struct gp_error *err);

/*
 * Follow a zlib stream fed in pieces without keeping its output, to
 * find where it ends (a pack read from a pipe): the output is counted
 * and must come to exactly expected_size bytes. Not thread-safe.
 */
struct inflate_skip;
struct inflate_skip *inflate_skip_new(void);
void inflate_skip_free(struct inflate_skip *s);
/* Start a new stream. */
int inflate_skip_reset(struct inflate_skip *s, uint64_t expected_size, struct gp_error *err);
/*
 * Feed in[0..len); *used is how much of it the stream took. Returns 1
 * when the stream ended (exactly at in + *used), 0 when it wants more
 * input, or GP_ECORRUPT (corrupt, or more or less output than
 * expected_size).
 */
int inflate_skip_feed(struct inflate_skip *s, const void *in, size_t len,
		      size_t *used, struct gp_error *err);

/* Compress in[0..len) as one zlib stream at level (-1 default). */
void deflate_to_strbuf(const void *in, size_t len, int level,
		       struct strbuf *out);

/* CRC-32 (zlib's polynomial) continuing from crc (start with 0). */
uint32_t gp_crc32(uint32_t crc, const void *data, size_t len);

/*
 * Inflate only the first out_len bytes (or fewer, when the stream ends
 * first) of the zlib stream in in[0..in_len); *produced is the number of
 * bytes written. Used to read a delta's size header without inflating
 * the whole delta.
 */
int inflate_prefix(const void *in, size_t in_len, void *out, size_t out_len,
		   size_t *produced, struct gp_error *err);

/*
 * Like inflate_prefix(), but a failure is worded as git words a failed
 * inflate of an object header: "inflate: <what zlib says> (<its message,
 * or "no message">)", e.g. "inflate: needs dictionary (no message)".
 */
int inflate_prefix_git(const void *in, size_t in_len, void *out, size_t out_len,
		       size_t *produced, struct gp_error *err);

#endif
