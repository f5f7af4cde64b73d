/*
 * fuzz-auth.c: the credentials file and the Authorization header of
 * server/auth.h.
 *
 * Input: a credentials file, then a NUL, then an Authorization value.
 * The file goes through serve_auth_open() (from a memfd), the value
 * through serve_auth_check(). Seeds: t/fuzz/corpus/auth/.
 *
 * Checks beyond "no crash": a file that opens gives a check that
 * answers true only with a user name that is a name of the file's, no
 * longer than SERVE_AUTH_USER_MAX; a header that is not "Basic " never
 * authenticates.
 */
#include "fuzz.h"
#include "server/auth.h"
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	size_t file_len = nul ? (size_t)(nul - (const char *)data) : size;
	char path[64], user[SERVE_AUTH_USER_MAX + 1], *header;
	struct gp_error err = GP_ERROR_INIT;
	struct serve_auth *auth;
	int fd = memfd_create("fuzz-auth", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (file_len && write(fd, data, file_len) != (ssize_t)file_len) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (serve_auth_open(&auth, path, &err)) {
		if (err.code != GP_EIO && err.code != GP_ECORRUPT)
			fuzz_fail("open failed with %d", err.code);
		gp_error_clear(&err);
		close(fd);
		return 0;
	}
	/* the header: what follows the NUL, up to the next one */
	{
		const char *h = nul ? nul + 1 : "";
		size_t hn = nul ? size - file_len - 1 : 0;
		const char *e = memchr(h, '\0', hn);
		if (e)
			hn = (size_t)(e - h);
		header = malloc(hn + 1);
		memcpy(header, h, hn);
		header[hn] = '\0';
	}
	if (serve_auth_check(auth, header, user)) {
		if (strncasecmp(header, "Basic ", 6))
			fuzz_fail("'%s' authenticated", header);
		if (strlen(user) > SERVE_AUTH_USER_MAX || !strlen(user))
			fuzz_fail("user '%s'", user);
		if (!memmem(data, file_len, user, strlen(user)))
			fuzz_fail("user '%s' is no name of the file", user);
	}
	free(header);
	serve_auth_free(auth);
	close(fd);
	return 0;
}
