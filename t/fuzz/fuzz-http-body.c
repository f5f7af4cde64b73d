/*
 * fuzz-http-body.c: the request body reader of server/body.h, on bytes
 * from a client.
 *
 * Input: a selector byte, a split byte, then the bytes of the connection.
 * The selector's low two bits say where the head comes from:
 *   0  parsed from the input by http_parse_head() (an input whose head is
 *      not done is skipped);
 *   1  none: the input is the body of a chunked request;
 *   2  none: the input is the body of a request whose Content-Length is
 *      the input's length less (selector >> 4), so that the bytes past the
 *      body stand for a pipelined request;
 *   3  none: a request without a body.
 * Bit 2 adds Content-Encoding: gzip to the heads of 1 to 3; bit 3 makes
 * max_decoded 1000 (else 1 MiB). The split byte is the size of the feeds
 * of the second pass (1 to 256). Seeds: t/fuzz/corpus/http-body/, requests
 * as git's HTTP client sends them (gzip with a length, chunked), and
 * malformed ones.
 *
 * Checks beyond "no crash":
 * - the answer is done, more or refused; a refusal has one of the
 *   statuses body.h lists, and a reason;
 * - on done and more, the bytes used are within the input, and all of it
 *   on more; the decoded length is within the bound (one byte past it at
 *   most, and only on a 413);
 * - feeding one byte at a time, and feeding the split byte's worth at a
 *   time, answer the same as feeding everything at once: the same result,
 *   status and reason, and on done or more the same bytes used and the
 *   same decoded body;
 * - a body without gzip decodes to its own bytes, less the framing: for a
 *   Content-Length, exactly the input's bytes;
 * - once done or refused, another feed uses nothing and answers the same.
 */
#include "fuzz.h"
#include "server/body.h"
#include "server/http.h"
#include <string.h>

struct outcome {
	enum http_body_result res;
	int status;
	const char *reason;
	size_t used;
	struct http_body body;
};

static void feed(const struct http_request *req, size_t max, const char *buf, size_t len,
		 size_t split, struct outcome *out)
{
	size_t at = 0;

	memset(out, 0, sizeof(*out));
	http_body_init(&out->body, req, max);
	do {
		size_t n = len - at, used = ~(size_t)0;
		if (split && n > split)
			n = split;
		out->res = http_body_feed(&out->body, buf + at, n, &used, &out->status, &out->reason);
		if (used > n)
			fuzz_fail("fed %zu bytes, %zu used", n, used);
		if (out->res == HTTP_BODY_MORE && used != n)
			fuzz_fail("more wanted, but %zu of %zu bytes used", used, n);
		at += used;
	} while (out->res == HTTP_BODY_MORE && at < len);
	out->used = at;
}

static void check_one(const struct outcome *o, size_t len, size_t max)
{
	switch (o->res) {
	case HTTP_BODY_DONE:
	case HTTP_BODY_MORE:
		if (o->used > len)
			fuzz_fail("used %zu of %zu", o->used, len);
		if (o->res == HTTP_BODY_MORE && o->used != len)
			fuzz_fail("more wanted after %zu of %zu bytes", o->used, len);
		if (o->body.len > max)
			fuzz_fail("decoded %zu bytes, the bound is %zu", o->body.len, max);
		break;
	case HTTP_BODY_REFUSED:
		if ((o->status != 400 && o->status != 413 && o->status != 431 && o->status != 500) ||
		    !o->reason)
			fuzz_fail("refused with status %d", o->status);
		if (o->body.len > max + (o->status == 413))
			fuzz_fail("decoded %zu bytes, the bound is %zu", o->body.len, max);
		break;
	default:
		fuzz_fail("answer %d", (int)o->res);
	}
	if (o->body.alloc > max + 1 || o->body.len > o->body.alloc)
		fuzz_fail("%zu bytes allocated for %zu, the bound is %zu", o->body.alloc, o->body.len,
			  max);
}

static void check_same(const struct outcome *a, const struct outcome *b, const char *how)
{
	if (a->res != b->res)
		fuzz_fail("%s: answer %d, all at once %d", how, (int)b->res, (int)a->res);
	if (a->res == HTTP_BODY_REFUSED) {
		if (a->status != b->status || strcmp(a->reason, b->reason))
			fuzz_fail("%s: refused %d (%s), all at once %d (%s)", how, b->status, b->reason,
				  a->status, a->reason);
		return;
	}
	if (a->used != b->used)
		fuzz_fail("%s: used %zu, all at once %zu", how, b->used, a->used);
	if (a->body.len != b->body.len ||
	    (a->body.len && memcmp(a->body.data, b->body.data, a->body.len)))
		fuzz_fail("%s: decoded %zu bytes, all at once %zu, or other bytes", how, b->body.len,
			  a->body.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_request req;
	struct outcome whole, bytes, parts;
	const char *buf, *reason = NULL;
	size_t len, max, split, head_len = 0, used = 1;
	unsigned sel;
	int status = 0;

	if (size < 2)
		return 0;
	sel = data[0];
	split = (size_t)data[1] + 1;
	buf = (const char *)data + 2;
	len = size - 2;
	max = sel & 8 ? 1000 : (size_t)1 << 20;

	memset(&req, 0, sizeof(req));
	switch (sel & 3) {
	case 0:
		if (http_parse_head(buf, len, &req, &head_len, &status, &reason) != HTTP_PARSE_DONE)
			return 0;
		buf += head_len;
		len -= head_len;
		break;
	case 1:
		req.chunked = true;
		break;
	case 2:
		req.has_length = true;
		req.content_length = len > (sel >> 4) ? len - (sel >> 4) : 0;
		break;
	default:
		break;
	}
	if (sel & 3)
		req.gzip = sel & 4;

	feed(&req, max, buf, len, 0, &whole);
	check_one(&whole, len, max);
	feed(&req, max, buf, len, 1, &bytes);
	check_one(&bytes, len, max);
	check_same(&whole, &bytes, "one byte at a time");
	feed(&req, max, buf, len, split, &parts);
	check_one(&parts, len, max);
	check_same(&whole, &parts, "in parts");

	if (!req.gzip && req.has_length && whole.res == HTTP_BODY_DONE &&
	    (whole.body.len != req.content_length ||
	     (whole.body.len && memcmp(whole.body.data, buf, whole.body.len))))
		fuzz_fail("a Content-Length body decoded to other bytes");
	if (!req.gzip && whole.res != HTTP_BODY_REFUSED && whole.body.len > whole.used)
		fuzz_fail("%zu bytes decoded from %zu without gzip", whole.body.len, whole.used);
	if (!req.has_length && !req.chunked && (whole.res != HTTP_BODY_DONE || whole.used))
		fuzz_fail("a request without a body answered %d, used %zu", (int)whole.res, whole.used);

	if (whole.res != HTTP_BODY_MORE) {
		int again_status = 0;
		const char *again_reason = NULL;
		enum http_body_result again = http_body_feed(&whole.body, buf, len, &used,
							     &again_status, &again_reason);
		if (again != whole.res || used ||
		    (again == HTTP_BODY_REFUSED && again_status != whole.status))
			fuzz_fail("fed again after %d: answer %d, used %zu", (int)whole.res, (int)again,
				  used);
	}
	http_body_release(&whole.body);
	http_body_release(&bytes.body);
	http_body_release(&parts.body);
	return 0;
}
