/*
 * body.c: see body.h. RFC 9112 section 6 (message body length) and 7.1
 * (chunked transfer coding), RFC 9110 section 8.4 (content codings) and
 * RFC 1952 (gzip, through zlib) are the reference.
 *
 * The framing is a byte-at-a-time state machine, except a chunk's data
 * and a Content-Length body, which pass through in runs. Each check is
 * made when the byte that decides it is consumed, and the decoded bytes
 * go through zlib in stream order, so how the input is split into feeds
 * cannot change an answer. zlib keeps its own state between feeds, so
 * no input is held back here: every byte fed is consumed, or left to the
 * caller as the next request's.
 */
#include "body.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A step hands zlib at most this many bytes: its avail_in is an unsigned int. */
#define STEP_MAX ((size_t)1 << 30)
#define FIRST_ALLOC 8192

void http_body_init(struct http_body *b, const struct http_request *req, size_t max_decoded)
{
	memset(b, 0, sizeof(*b));
	/* room for the one byte past the bound that proves it crossed, and for doubling */
	if (max_decoded > SIZE_MAX / 2)
		max_decoded = SIZE_MAX / 2;
	b->max_decoded = max_decoded;
	b->max_wire = HTTP_BODY_WIRE_MAX(max_decoded);
	b->gzip = req->gzip;
	if (req->chunked) {
		b->chunked = true;
		b->state = HTTP_BODY_S_SIZE;
	} else if (req->has_length) {
		b->remaining = req->content_length;
		b->state = HTTP_BODY_S_LENGTH;
	} else {
		/* RFC 9112 6.3: a request with neither has no body */
		b->state = HTTP_BODY_S_DONE;
	}
}

void http_body_release(struct http_body *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
	if (b->z_live)
		inflateEnd(&b->z);
	b->z_live = false;
}

static bool refuse(struct http_body *b, int status, const char *reason)
{
	b->state = HTTP_BODY_S_REFUSED;
	b->status = status;
	b->reason = reason;
	return false;
}

/* Make room for want bytes at data, want <= max_decoded + 1. */
static bool grow(struct http_body *b, size_t want)
{
	size_t alloc = b->alloc ? b->alloc : FIRST_ALLOC;
	char *data;
	if (want <= b->alloc)
		return true;
	while (alloc < want)
		alloc *= 2;	/* no overflow: want <= SIZE_MAX / 2 + 1 */
	if (alloc > b->max_decoded + 1)
		alloc = b->max_decoded + 1;
	data = realloc(b->data, alloc);
	if (!data)
		return refuse(b, 500, "out of memory for the body");
	b->data = data;
	b->alloc = alloc;
	return true;
}

/*
 * Inflate p[0..n) into data. The output room handed to zlib never
 * reaches past max_decoded + 1 bytes, so a bomb is stopped one byte
 * past the bound however much it would inflate to.
 */
static bool inflate_content(struct http_body *b, const char *p, size_t n)
{
	if (b->z_end)
		return refuse(b, 400, "data after the end of the gzip stream");
	if (!b->z_live) {
		memset(&b->z, 0, sizeof(b->z));
		/* 16 + MAX_WBITS: a gzip header and trailer, not zlib's */
		if (inflateInit2(&b->z, 16 + MAX_WBITS) != Z_OK)
			return refuse(b, 500, "out of memory for zlib");
		b->z_live = true;
	}
	b->z.next_in = (Bytef *)p;
	b->z.avail_in = (uInt)n;
	for (;;) {
		size_t room;
		int ret;

		if (!grow(b, b->len + 1))
			return false;
		room = b->alloc - b->len;
		if (room > b->max_decoded + 1 - b->len)
			room = b->max_decoded + 1 - b->len;
		if (room > STEP_MAX)
			room = STEP_MAX;
		b->z.next_out = (Bytef *)b->data + b->len;
		b->z.avail_out = (uInt)room;
		ret = inflate(&b->z, Z_NO_FLUSH);
		b->len += room - b->z.avail_out;
		/* before the return code: output past the bound came first in the stream */
		if (b->len > b->max_decoded)
			return refuse(b, 413, "the decoded body is over the bound");
		if (ret == Z_STREAM_END) {
			b->z_end = true;
			if (b->z.avail_in)
				return refuse(b, 400, "data after the end of the gzip stream");
			return true;
		}
		if (ret == Z_MEM_ERROR)
			return refuse(b, 500, "out of memory in zlib");
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return refuse(b, 400, "bad gzip data");
		if (b->z.avail_out) {
			/* zlib stops only when it runs out of input or of room */
			if (b->z.avail_in)
				return refuse(b, 500, "zlib stopped with input and room left");
			return true;
		}
	}
}

/* Decoded bytes of the body: appended, or inflated first. */
static bool content(struct http_body *b, const char *p, size_t n)
{
	if (!n)
		return true;
	if (b->gzip)
		return inflate_content(b, p, n);
	if (n > b->max_decoded - b->len)
		return refuse(b, 413, "the body is over the bound");
	if (!grow(b, b->len + n))
		return false;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return true;
}

/* The content has ended: a gzip stream begun must have ended too. */
static bool content_end(struct http_body *b)
{
	if (b->z_live && !b->z_end)
		return refuse(b, 400, "the gzip stream is truncated");
	return true;
}

/* Content-Length against the bounds, before any byte of it is read. */
static bool check_length(struct http_body *b)
{
	if (!b->gzip && b->remaining > b->max_decoded)
		return refuse(b, 413, "Content-Length over the bound");
	if (b->remaining > b->max_wire)
		return refuse(b, 413, "Content-Length over the wire bound");
	return true;
}

/* RFC 9110's tchar: the characters of a field name. */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

/* A byte of a field value or a chunk extension: visible, space, tab or obs-text. */
static bool is_field_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* The size line has ended: the next chunk's data, or the trailer section. */
static bool size_line_end(struct http_body *b)
{
	b->digits = 0;
	b->ext_len = 0;
	if (!b->remaining) {
		b->state = HTTP_BODY_S_TRAILER_START;
		return content_end(b);
	}
	/* refused now rather than once the data has been read */
	if (!b->gzip && b->remaining > b->max_decoded - b->len)
		return refuse(b, 413, "a chunk over the bound");
	if (b->remaining > b->max_wire - b->wire)
		return refuse(b, 413, "a chunk over the wire bound");
	b->state = HTTP_BODY_S_DATA;
	return true;
}

/* One byte of the trailer section (the last chunk's line is behind). */
static bool trailer_byte(struct http_body *b, unsigned char c)
{
	if (++b->trailer_bytes > HTTP_BODY_TRAILER_MAX)
		return refuse(b, 431, "the trailer section is over the bound");
	switch (b->state) {
	case HTTP_BODY_S_TRAILER_START:
		if (c == '\n') {
			b->state = HTTP_BODY_S_DONE;
		} else if (c == '\r') {
			b->state = HTTP_BODY_S_END_LF;
		} else if (is_tchar(c)) {
			if (++b->trailers > HTTP_BODY_TRAILERS_MAX)
				return refuse(b, 431, "too many trailer fields");
			b->state = HTTP_BODY_S_TRAILER_NAME;
		} else {
			/* whitespace here would be obs-fold, refused as in the head */
			return refuse(b, 400, "bad trailer field");
		}
		return true;
	case HTTP_BODY_S_TRAILER_NAME:
		if (c == ':')
			b->state = HTTP_BODY_S_TRAILER_VALUE;
		else if (!is_tchar(c))
			return refuse(b, 400, "bad trailer field name");
		return true;
	case HTTP_BODY_S_TRAILER_VALUE:
		if (c == '\n')
			b->state = HTTP_BODY_S_TRAILER_START;
		else if (c == '\r')
			b->state = HTTP_BODY_S_TRAILER_LF;
		else if (!is_field_byte(c))
			return refuse(b, 400, "bad trailer field value");
		return true;
	case HTTP_BODY_S_TRAILER_LF:
		if (c != '\n')
			return refuse(b, 400, "CR without LF in the trailer section");
		b->state = HTTP_BODY_S_TRAILER_START;
		return true;
	case HTTP_BODY_S_END_LF:
		if (c != '\n')
			return refuse(b, 400, "CR without LF at the end of the body");
		b->state = HTTP_BODY_S_DONE;
		return true;
	default:
		return refuse(b, 500, "trailer state");
	}
}

/* One byte of a chunk's size line or of the line end after its data. */
static bool frame_byte(struct http_body *b, unsigned char c)
{
	int nibble;

	switch (b->state) {
	case HTTP_BODY_S_SIZE:
		nibble = http_hex_value(c);
		if (nibble >= 0) {
			if (++b->digits > HTTP_BODY_CHUNK_DIGITS)
				return refuse(b, 400, "chunk size has too many digits");
			b->remaining = b->remaining << 4 | (unsigned)nibble;
			return true;
		}
		if (!b->digits)
			return refuse(b, 400, "chunk size is not hex");
		if (c == ' ' || c == '\t')
			b->state = HTTP_BODY_S_SIZE_WS;
		else if (c == ';')
			b->state = HTTP_BODY_S_EXT;
		else if (c == '\r')
			b->state = HTTP_BODY_S_SIZE_LF;
		else if (c == '\n')
			return size_line_end(b);
		else
			return refuse(b, 400, "bad chunk size line");
		return true;
	case HTTP_BODY_S_SIZE_WS:
		/* RFC 9112's BWS: whitespace only before an extension */
		if (c == ';')
			b->state = HTTP_BODY_S_EXT;
		else if (c != ' ' && c != '\t')
			return refuse(b, 400, "bad chunk size line");
		return true;
	case HTTP_BODY_S_EXT:
		/* skipped, not parsed: nothing here is for gitpack */
		if (c == '\n')
			return size_line_end(b);
		if (c == '\r')
			b->state = HTTP_BODY_S_SIZE_LF;
		else if (++b->ext_len > HTTP_BODY_EXT_MAX)
			return refuse(b, 400, "chunk extension over the bound");
		else if (!is_field_byte(c))
			return refuse(b, 400, "bad chunk extension");
		return true;
	case HTTP_BODY_S_SIZE_LF:
		if (c != '\n')
			return refuse(b, 400, "CR without LF after a chunk size");
		return size_line_end(b);
	case HTTP_BODY_S_DATA_END:
		if (c == '\r') {
			b->state = HTTP_BODY_S_DATA_LF;
			return true;
		}
		if (c != '\n')
			return refuse(b, 400, "chunk data not followed by a line end");
		b->state = HTTP_BODY_S_SIZE;
		return true;
	case HTTP_BODY_S_DATA_LF:
		if (c != '\n')
			return refuse(b, 400, "CR without LF after chunk data");
		b->state = HTTP_BODY_S_SIZE;
		return true;
	default:
		return trailer_byte(b, c);
	}
}

/*
 * Consume some of p[0..n), n > 0: a run of data, or one framing byte.
 * Returns the bytes consumed; on a refusal b->state says so.
 */
static size_t step(struct http_body *b, const char *p, size_t n)
{
	switch (b->state) {
	case HTTP_BODY_S_LENGTH:
	case HTTP_BODY_S_DATA:
		if (n > b->remaining)
			n = (size_t)b->remaining;
		if (!content(b, p, n))
			return n;
		b->remaining -= n;
		if (!b->remaining) {
			if (b->state == HTTP_BODY_S_DATA) {
				b->state = HTTP_BODY_S_DATA_END;
			} else {
				b->state = HTTP_BODY_S_DONE;
				content_end(b);
			}
		}
		return n;
	default:
		frame_byte(b, (unsigned char)*p);
		return 1;
	}
}

enum http_body_result http_body_feed(struct http_body *b, const char *buf, size_t len,
				     size_t *used, int *status, const char **reason)
{
	size_t at = 0;

	if (b->state == HTTP_BODY_S_LENGTH && !b->wire && check_length(b) && !b->remaining)
		b->state = HTTP_BODY_S_DONE;
	while (at < len && b->state != HTTP_BODY_S_DONE && b->state != HTTP_BODY_S_REFUSED) {
		size_t n = len - at;
		if (b->wire >= b->max_wire) {
			refuse(b, 413, "the body is over the wire bound");
			break;
		}
		/* already so by the Content-Length and chunk size checks; kept as a guard */
		if (n > b->max_wire - b->wire)
			n = (size_t)(b->max_wire - b->wire);
		if (n > STEP_MAX)
			n = STEP_MAX;
		n = step(b, buf + at, n);
		at += n;
		b->wire += n;
	}
	*used = at;
	if (b->state == HTTP_BODY_S_DONE)
		return HTTP_BODY_DONE;
	if (b->state == HTTP_BODY_S_REFUSED) {
		*status = b->status;
		*reason = b->reason;
		return HTTP_BODY_REFUSED;
	}
	return HTTP_BODY_MORE;
}
