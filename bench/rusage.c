/*
 * rusage: run a command; report its wall time, peak RSS and CPU times.
 *
 *   bench/rusage [-o FILE] [--] COMMAND [ARG...]
 *
 * The command inherits stdin, stdout and stderr. Afterwards one line goes
 * to FILE (or, without -o, to stderr):
 *
 *   <wall seconds> <peak RSS KiB> <user seconds> <system seconds> <status>
 *
 * Wall time comes from CLOCK_MONOTONIC around posix_spawnp() and wait4();
 * peak RSS and CPU times from wait4()'s rusage, which covers the command
 * and any descendants it waited for (ru_maxrss is the largest of them, not
 * a sum). status is the exit code, or 128+N if killed by signal N, and is
 * also rusage's own exit code. /usr/bin/time -f '%e %M' reports the same
 * figures but rounds wall time to 10 ms, too coarse for small packs.
 * CPU times are printed to the microsecond: their sum is the kernel's
 * exact run time (only the split between user and system is sampled),
 * and a server answering ls-refs may use a millisecond or two.
 *
 * Standalone: no gitpack headers.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: rusage [-o FILE] [--] COMMAND [ARG...]\n");
	exit(125);
}

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	struct timespec t0, t1;
	struct rusage ru;
	FILE *out = stderr;
	pid_t pid;
	int i = 1, status, code, err;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out_path = argv[i + 1];
			i += 2;
		} else {
			usage();
		}
	}
	if (i >= argc)
		usage();
	if (out_path && !(out = fopen(out_path, "w"))) {
		fprintf(stderr, "rusage: cannot open '%s': %s\n", out_path, strerror(errno));
		return 125;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = posix_spawnp(&pid, argv[i], NULL, NULL, argv + i, environ);
	if (err) {
		fprintf(stderr, "rusage: cannot run '%s': %s\n", argv[i], strerror(err));
		return 127;
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "rusage: wait4: %s\n", strerror(errno));
			return 125;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(out, "%.6f %ld %.6f %.6f %d\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		ru.ru_maxrss, tv_seconds(ru.ru_utime), tv_seconds(ru.ru_stime), code);
	if (out != stderr && fclose(out)) {
		fprintf(stderr, "rusage: cannot write '%s'\n", out_path);
		return 125;
	}
	return code;
}
