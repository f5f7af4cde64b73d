/*
 * fuzz-http.c: the HTTP request head parser and router of server/http.h,
 * on bytes from a client.
 *
 * Input: the bytes a connection delivered. Seeds: t/fuzz/corpus/http/,
 * requests as git's smart HTTP client sends them, and malformed ones.
 *
 * Checks beyond "no crash" (the input is the fuzzer's exact-size buffer,
 * so ASan sees any read past it):
 * - the answer is done, more or refused; a refusal has one of the
 *   statuses http.h lists, and a reason;
 * - a done head ends within the input and the head bound, and its path
 *   and query fit their bounds;
 * - parsing a prefix agrees with parsing the whole: a prefix that is
 *   done is done at the same place for the whole, a refused prefix is
 *   refused with the same status, and the whole of an input longer than
 *   the bound is never "more";
 * - a route's repository is relative, its segments neither empty nor
 *   "." nor "..", and it names a service exactly when it is a Git route.
 */
#include "fuzz.h"
#include "server/http.h"
#include <string.h>

static bool allowed_status(int status)
{
	static const int statuses[] = { 400, 414, 415, 417, 431, 501, 505 };
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i] == status)
			return true;
	return false;
}

static void check_route(const struct http_request *req)
{
	struct http_route route;
	const char *seg;

	http_route(req, &route);
	if ((route.kind == HTTP_ROUTE_INFO_REFS || route.kind == HTTP_ROUTE_SERVICE) !=
	    (route.service != HTTP_SERVICE_NONE))
		fuzz_fail("route kind %d with service %d", route.kind, route.service);
	if (route.kind == HTTP_ROUTE_NONE || route.kind == HTTP_ROUTE_METRICS) {
		if (route.repo[0])
			fuzz_fail("a repository for route kind %d", route.kind);
		return;
	}
	if (!route.repo[0] || route.repo[0] == '/')
		fuzz_fail("repository '%s' is empty or absolute", route.repo);
	for (seg = route.repo; *seg;) {
		size_t n = strcspn(seg, "/");
		if (!n || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			fuzz_fail("repository '%s' has an unsafe segment", route.repo);
		seg += n;
		if (*seg == '/')
			seg++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_request req, part;
	const char *buf = (const char *)data, *reason, *part_reason;
	size_t head_len = 0, part_len = 0;
	int status = 0, part_status = 0;
	enum http_parse_result res, part_res;

	res = http_parse_head(buf, size, &req, &head_len, &status, &reason);
	switch (res) {
	case HTTP_PARSE_DONE:
		if (head_len > size || head_len > HTTP_HEAD_MAX)
			fuzz_fail("head length %zu past the input (%zu) or the bound", head_len, size);
		if (strlen(req.path) > HTTP_TARGET_MAX || strlen(req.query) > HTTP_TARGET_MAX)
			fuzz_fail("path or query past the bound");
		check_route(&req);
		break;
	case HTTP_PARSE_MORE:
		if (size >= HTTP_HEAD_MAX)
			fuzz_fail("more wanted after %zu bytes", size);
		break;
	case HTTP_PARSE_REFUSED:
		if (!allowed_status(status) || !reason)
			fuzz_fail("refused with status %d", status);
		break;
	default:
		fuzz_fail("answer %d", (int)res);
	}

	/* the first half, as if the rest had not arrived yet */
	part_res = http_parse_head(buf, size / 2, &part, &part_len, &part_status, &part_reason);
	if (part_res == HTTP_PARSE_DONE && (res != HTTP_PARSE_DONE || part_len != head_len))
		fuzz_fail("a prefix is done at %zu, the whole gives %d at %zu", part_len, (int)res,
			  head_len);
	if (part_res == HTTP_PARSE_REFUSED && (res != HTTP_PARSE_REFUSED || part_status != status))
		fuzz_fail("a prefix is refused with %d, the whole gives %d (%d)", part_status,
			  (int)res, status);
	return 0;
}
