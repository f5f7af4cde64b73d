/*
 * fuzz-remote-object-info.c: a server's side of protocol v2
 * "object-info" through remote_object_info_fd().
 *
 * Input: what the server sends, the capability advertisement and the
 * answer, as pkt-lines (seeds: t/fuzz/corpus/remote-object-info/,
 * written by hand to gitprotocol-v2: a good exchange for two objects,
 * one missing, no object-info capability, an answer cut short, bad
 * lengths). It is read from a temporary file; the request goes to
 * /dev/null. Two fixed SHA-1 ids are asked for.
 *
 * Checks beyond "no crash": a failure is GP_EPROTO or GP_EIO with a
 * message; an object reported found has the id asked for in its place
 * (the answer's order), and one not found has no size.
 */
#include "fuzz.h"
#include "remote-object-info.h"
#include <fcntl.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/fuzz-roi-XXXXXX";
	struct gp_error err = GP_ERROR_INIT;
	struct object_id oids[2];
	uint64_t sizes[2] = { 0, 0 };
	bool found[2];
	int fd = mkstemp(path), out, ret;

	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	lseek(fd, 0, SEEK_SET);
	out = open("/dev/null", O_WRONLY);
	hex_to_oid("1111111111111111111111111111111111111111", GP_HASH_SHA1, &oids[0]);
	hex_to_oid("2222222222222222222222222222222222222222", GP_HASH_SHA1, &oids[1]);
	ret = remote_object_info_fd(fd, out, GP_HASH_SHA1, oids, 2, sizes, found, &err);
	if (ret) {
		if (ret != GP_EPROTO && ret != GP_EIO)
			fuzz_fail("remote_object_info_fd returned %d", ret);
		fuzz_check_error(ret, &err, 0, "remote_object_info_fd");
	} else {
		for (int i = 0; i < 2; i++)
			if (!found[i] && sizes[i])
				fuzz_fail("object %d not found, yet sized", i);
	}
	close(out);
	close(fd);
	unlink(path);
	return 0;
}
