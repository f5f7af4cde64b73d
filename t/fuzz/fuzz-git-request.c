/*
 * fuzz-git-request.c: the git:// request line of server/git-request.h,
 * on bytes from a client (the payload of the first pkt-line).
 *
 * Seeds: t/fuzz/corpus/git-request/, lines as git sends them (v0, v2,
 * with and without host=) and malformed ones.
 *
 * Checks beyond "no crash" (the input is the fuzzer's exact-size buffer,
 * so ASan sees any read past it):
 * - the answer is one of the three, a refusal has a reason;
 * - a parsed request's path starts with '/', its repository is relative
 *   with no empty, "." or ".." segment, and every field fits its bound;
 * - the service is named exactly when the service word is one of Git's.
 */
#include "fuzz.h"
#include "server/git-request.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct git_request req;
	const char *reason, *seg;
	enum git_request_result r = git_request_parse((const char *)data, size, &req, &reason);

	if (r != GIT_REQUEST_OK && r != GIT_REQUEST_BAD && r != GIT_REQUEST_NO_REPO)
		fuzz_fail("answer %d", (int)r);
	if (r != GIT_REQUEST_OK) {
		if (!reason)
			fuzz_fail("refused without a reason");
		return 0;
	}
	if (req.path[0] != '/' || strlen(req.path) > HTTP_TARGET_MAX ||
	    strlen(req.params) > GIT_REQUEST_PARAMS_MAX || strlen(req.host) >= sizeof(req.host))
		fuzz_fail("a field past its bound or a relative path '%s'", req.path);
	if ((req.service != HTTP_SERVICE_NONE) !=
	    (!strcmp(req.service_name, "git-upload-pack") ||
	     !strcmp(req.service_name, "git-receive-pack") ||
	     !strcmp(req.service_name, "git-upload-archive")))
		fuzz_fail("service %d for '%s'", (int)req.service, req.service_name);
	if (!req.repo[0] || req.repo[0] == '/')
		fuzz_fail("repository '%s' is empty or absolute", req.repo);
	for (seg = req.repo; *seg;) {
		size_t n = strcspn(seg, "/");
		if (!n || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			fuzz_fail("repository '%s' has an unsafe segment", req.repo);
		seg += n;
		if (*seg == '/')
			seg++;
	}
	return 0;
}
