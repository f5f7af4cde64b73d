/*
 * body.h: the body of an HTTP/1.x request, de-framed and decoded as it
 * arrives, for gitpack serve.
 *
 * Self-contained (libc, zlib and http.h only), like http.h: the bytes
 * come from the network, so every bound is fixed before anything is
 * copied or inflated.
 *
 * The head (http_parse_head()) says how the body is framed: a
 * Content-Length, Transfer-Encoding: chunked (RFC 9112 section 7.1), or
 * neither, which is an empty body. Content-Encoding: gzip (which Git's
 * client uses for POST bodies over 1 KiB that fit its post buffer) is
 * inflated after the framing is removed. The caller feeds the bytes
 * that follow the head as they arrive; the decoded body is appended to
 * b->data. Feeding the bytes one at a time gives the same answer, at the
 * same byte, as feeding them all at once: every check is made at a
 * fixed place in the stream, never at the end of a read.
 *
 * Bounds, each refused as soon as the byte that crosses it arrives:
 *  - the decoded body: at most max_decoded bytes (413). A gzip body is
 *    checked as it inflates, so a small body that inflates to gigabytes
 *    costs max_decoded + 1 bytes of memory, not more. A Content-Length
 *    or chunk size that alone exceeds the bound is refused when it is
 *    read, before its data arrives.
 *  - the bytes on the wire, framing included: at most b->max_wire (413).
 *    http_body_init() sets it to HTTP_BODY_WIRE_MAX(max_decoded), which
 *    leaves room for gzip's overhead on incompressible data (under 0.1%)
 *    and for chunk framing as clients send it (chunks of KiBs); a body of
 *    tiny chunks, or a gzip stream of empty deflate blocks that inflates
 *    to nothing, meets it. The caller may set b->max_wire after init.
 *  - a chunk size: at most HTTP_BODY_CHUNK_DIGITS hex digits (400);
 *    a chunk extension: at most HTTP_BODY_EXT_MAX bytes (400), skipped;
 *  - the trailer section: at most HTTP_BODY_TRAILERS_MAX fields and
 *    HTTP_BODY_TRAILER_MAX bytes (431), skipped.
 */
#ifndef GP_SERVER_BODY_H
#define GP_SERVER_BODY_H

#include "http.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#define HTTP_BODY_CHUNK_DIGITS 16	/* a chunk size fits uint64_t */
#define HTTP_BODY_EXT_MAX 1024		/* bytes of chunk extensions after a size, from the first ';' on, line end excluded */
#define HTTP_BODY_TRAILERS_MAX 32
#define HTTP_BODY_TRAILER_MAX 8192	/* bytes of the trailer section, line ends included */
/* The default wire bound: max_decoded + 1/8 + 64 KiB, saturating. */
#define HTTP_BODY_WIRE_MAX(max_decoded) \
	((uint64_t)(max_decoded) + (uint64_t)(max_decoded) / 8 + 65536)

enum http_body_result {
	HTTP_BODY_DONE = 1,	/* the body is complete; b->data holds it */
	HTTP_BODY_MORE = 0,	/* every byte fed was the body's; feed more */
	HTTP_BODY_REFUSED = -1,	/* *status is 400, 413, 431 or 500; see http_body_feed() */
};

/* Where a chunked body's parser is: internal to body.c. */
enum http_body_state {
	HTTP_BODY_S_SIZE,
	HTTP_BODY_S_SIZE_WS,
	HTTP_BODY_S_EXT,
	HTTP_BODY_S_SIZE_LF,
	HTTP_BODY_S_DATA,
	HTTP_BODY_S_DATA_END,
	HTTP_BODY_S_DATA_LF,
	HTTP_BODY_S_TRAILER_START,
	HTTP_BODY_S_TRAILER_NAME,
	HTTP_BODY_S_TRAILER_VALUE,
	HTTP_BODY_S_TRAILER_LF,
	HTTP_BODY_S_END_LF,
	HTTP_BODY_S_LENGTH,
	HTTP_BODY_S_DONE,
	HTTP_BODY_S_REFUSED,
};

/*
 * The decoder's state: caller-allocated (it is large only by zlib's
 * z_stream, whose window zlib allocates when the first gzip byte comes).
 * Only data, len and max_wire are the caller's to read; max_wire also to
 * set, between init and the first feed.
 */
struct http_body {
	char *data;		/* the decoded body so far; malloc'd, NULL while empty */
	size_t len;		/* bytes of data */
	size_t alloc;		/* bytes allocated at data */
	size_t max_decoded;
	uint64_t max_wire;
	uint64_t wire;		/* body bytes consumed from the wire so far */

	enum http_body_state state;
	bool chunked, gzip;
	uint64_t remaining;	/* bytes left of the Content-Length or of the chunk */
	unsigned digits;	/* hex digits of the chunk size so far */
	size_t ext_len;		/* bytes of chunk extension on this size line */
	size_t trailer_bytes;
	unsigned trailers;

	z_stream z;
	bool z_live;		/* inflateInit2() done; inflateEnd() owed */
	bool z_end;		/* the gzip stream has ended */

	int status;		/* once refused: the answer, kept for later calls */
	const char *reason;
};

/*
 * Start reading the body of req, whose head http_parse_head() accepted.
 * max_decoded bounds the decoded body (see above; it is clamped to
 * SIZE_MAX / 2). Allocates nothing.
 */
void http_body_init(struct http_body *b, const struct http_request *req, size_t max_decoded);

/*
 * Feed buf[0..len), the bytes that arrived after the head (or after the
 * bytes fed before). buf may hold more than the body, the start of a
 * pipelined request: *used says how many were the body's (always all of
 * them on HTTP_BODY_MORE), and the rest belongs to the next request.
 * Decoded bytes (de-chunked, then inflated if req->gzip) are appended to
 * b->data.
 *
 * Returns HTTP_BODY_DONE when the body is complete, HTTP_BODY_MORE when
 * it is not yet, or HTTP_BODY_REFUSED with *status and *reason (a short
 * static text for the log):
 *   400  bad chunk framing (a size that is not hex, more than 16 digits,
 *        a chunk's data not followed by CRLF or LF, a bad extension or
 *        trailer line, an extension over its bound), bad gzip data, bytes
 *        after the end of the gzip stream, or a gzip stream that ends
 *        before the body does;
 *   413  the decoded body or the wire bytes over their bounds (at once for
 *        a Content-Length or a chunk size that exceeds them);
 *   431  the trailer section over its bounds;
 *   500  out of memory (malloc or zlib).
 * On a refusal *used only says how far the reader went (inside a gzip
 * run zlib may have read ahead): where the next request would start is
 * unknown, so the server answers and closes. Once DONE or REFUSED, later
 * calls consume nothing and answer the same.
 *
 * Calling it with len 0 is allowed: right after init it tells whether the
 * body is empty (DONE: no body, Content-Length: 0) or its Content-Length
 * is already over a bound (413), which a server answers instead of
 * "100 Continue". A body of no bytes is empty even when gzip is named.
 * A connection that ends while the answer is MORE ended mid-body: the
 * request is incomplete, and the server answers nothing or 400.
 */
enum http_body_result http_body_feed(struct http_body *b, const char *buf, size_t len,
				     size_t *used, int *status, const char **reason);

/* Free b->data and zlib's state; b may be fed again only after init. */
void http_body_release(struct http_body *b);

#endif
