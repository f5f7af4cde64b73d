/*
 * replay.c: run a fuzz target's LLVMFuzzerTestOneInput() on files,
 * without libFuzzer, so that the seed corpus and the crash regressions
 * replay in the normal test suite (t/t0090-fuzz-corpus.sh builds one
 * binary per target with plain cc against libgitpack.a).
 *
 *	replay FILE...
 *
 * Each file is read into a heap buffer of exactly its size (as libFuzzer
 * does, so an ASan build catches reads past the input) and handed to the
 * target, after its name goes to stderr. A target reports a broken
 * invariant by aborting; a clean run exits 0. Exit 2 when a file cannot be read.
 */
#include "fuzz.h"
#include <fcntl.h>
#include <sys/stat.h>

static unsigned char *read_input(const char *path, size_t *size)
{
	struct stat st;
	unsigned char *buf;
	size_t done = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = xmalloc(st.st_size ? (size_t)st.st_size : 1);
	while (done < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + done, (size_t)st.st_size - done);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		done += (size_t)got;
	}
	close(fd);
	*size = done;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		size_t size = 0;
		unsigned char *buf = read_input(argv[i], &size);
		if (!buf) {
			fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[i],
				strerror(errno));
			return 2;
		}
		/* Named first, so that the log shows which input aborted. */
		fprintf(stderr, "replay: %s\n", argv[i]);
		LLVMFuzzerTestOneInput(buf, size);
		free(buf);
	}
	return 0;
}
