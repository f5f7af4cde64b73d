/*
 * spawn: how long a process holding a large memory takes to start a
 * child, with posix_spawn() against fork()+exec() (and vfork()+exec()).
 *
 *   bench/spawn [--size-mb N] [--runs N] [--thp] [--program PATH]
 *
 * Why: a server that maps gigabytes (pack files, indexes, caches) and
 * forks copies its page tables on every fork() (about 2 MiB of them per
 * GiB of 4 KiB pages, each entry also write-protected for copy-on-write,
 * which the parent then pays for again in faults), and the child's
 * exec() tears them down. posix_spawn() (glibc: clone(CLONE_VM |
 * CLONE_VFORK)) shares the parent's memory until the exec and copies
 * nothing, so its cost does not grow with the parent's size. gitpack's
 * rule: children, where there are any, only through posix_spawn().
 *
 * The program first times each method with nothing mapped (the
 * baseline), then maps --size-mb MiB (default 2048) of anonymous private
 * memory, touches every page so that the page tables exist (with
 * MADV_NOHUGEPAGE unless --thp: a server's heap and its private copies
 * are mostly small pages, and huge pages would hide the cost), and times
 * them again. Each of --runs rounds (default 50) starts --program
 * (default /bin/true) once with each method, the order rotating round by
 * round, and waits for it. Two figures per start:
 *
 *   call   the time the parent is inside the call that starts the child
 *          (posix_spawn() and vfork() return after the child's exec;
 *          fork() as soon as the copy is made)
 *   total  from before that call until waitpid() has reaped the child:
 *          what a server waiting for its child pays, the child's exec
 *          (and, after fork(), its teardown of the copied tables) and the
 *          program's run included
 *
 * Prints the median and 90th percentile of each, per method and memory
 * size, and the ratio fork+exec / posix_spawn of the median totals.
 * Between rounds the parent writes one byte per page of the mapping
 * again, as a server touches its memory; after fork() that costs a
 * copy-on-write fault per page until the child has exec'd (timed
 * separately, as "rewrite").
 *
 * Standalone: no gitpack headers. Exit status 0, or 1 when a start
 * failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum method { M_POSIX_SPAWN, M_FORK, M_VFORK, M_NR };
static const char *method_name[M_NR] = { "posix_spawn", "fork+exec", "vfork+exec" };

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[0..n), sorting v. */
static double quantile(double *v, int n, double q)
{
	int at;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	at = (int)(q * (n - 1) + 0.5);
	return v[at];
}

/* Start program with method m, wait for it. Returns 0 or -1. */
static int start_one(enum method m, const char *program, double *call_us, double *total_us)
{
	char *argv[] = { (char *)program, NULL };
	double t0, t1;
	pid_t pid;
	int status, err;

	t0 = now_us();
	switch (m) {
	case M_POSIX_SPAWN:
		err = posix_spawn(&pid, program, NULL, NULL, argv, environ);
		if (err) {
			errno = err;
			return -1;
		}
		break;
	case M_FORK:
		pid = fork();
		if (!pid) {
			execve(program, argv, environ);
			_exit(127);
		}
		break;
	case M_VFORK:
		pid = vfork();
		if (!pid) {
			execve(program, argv, environ);
			_exit(127);
		}
		break;
	default:
		return -1;
	}
	t1 = now_us();
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*total_us = now_us() - t0;
	*call_us = t1 - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "spawn: %s: %s exited with status %d\n", method_name[m], program, status);
		return -1;
	}
	return 0;
}

/* Write a byte in each page: the parent using its memory. */
static void touch(unsigned char *mem, size_t size, size_t page, unsigned char v)
{
	for (size_t ofs = 0; ofs < size; ofs += page)
		mem[ofs] = v;
}

static int measure(const char *label, int runs, const char *program,
		   unsigned char *mem, size_t size, size_t page)
{
	double *call[M_NR], *total[M_NR], *rewrite[M_NR];
	double med_total[M_NR];
	int ret = 0;

	for (int m = 0; m < M_NR; m++) {
		call[m] = calloc((size_t)runs, sizeof(double));
		total[m] = calloc((size_t)runs, sizeof(double));
		rewrite[m] = calloc((size_t)runs, sizeof(double));
		if (!call[m] || !total[m] || !rewrite[m]) {
			fprintf(stderr, "spawn: out of memory\n");
			exit(1);
		}
	}
	for (int r = 0; r < runs && !ret; r++) {
		for (int j = 0; j < M_NR; j++) {
			enum method m = (enum method)((r + j) % M_NR);
			double t;
			if (start_one(m, program, &call[m][r], &total[m][r])) {
				fprintf(stderr, "spawn: %s of %s failed: %s\n", method_name[m], program,
					strerror(errno));
				ret = -1;
				break;
			}
			/*
			 * The child is gone, but after fork() the pages are
			 * still write-protected: the first write to each
			 * faults (and finds the page no longer shared).
			 */
			t = now_us();
			if (mem)
				touch(mem, size, page, (unsigned char)(r + j));
			rewrite[m][r] = now_us() - t;
		}
	}
	if (!ret) {
		printf("%-14s %-12s %10s %10s %10s %10s %12s\n", label, "method", "call_med", "call_p90",
		       "total_med", "total_p90", "rewrite_med");
		for (int m = 0; m < M_NR; m++) {
			double cm = quantile(call[m], runs, 0.5), c9 = quantile(call[m], runs, 0.9);
			double tm = quantile(total[m], runs, 0.5), t9 = quantile(total[m], runs, 0.9);
			double wm = quantile(rewrite[m], runs, 0.5);
			med_total[m] = tm;
			printf("%-14s %-12s %8.1f us %7.1f us %7.1f us %7.1f us %9.1f us\n", label,
			       method_name[m], cm, c9, tm, t9, wm);
		}
		printf("%-14s fork+exec / posix_spawn (median total): %.1f\n", label,
		       med_total[M_FORK] / med_total[M_POSIX_SPAWN]);
	}
	for (int m = 0; m < M_NR; m++) {
		free(call[m]);
		free(total[m]);
		free(rewrite[m]);
	}
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: spawn [--size-mb N] [--runs N] [--thp] [--program PATH]\n");
	exit(2);
}

static long parse_long(const char *s, long min)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	long size_mb = 2048, runs = 50;
	const char *program = "/bin/true";
	int thp = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size;
	unsigned char *mem;
	char label[64];
	double t;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--size-mb") && i + 1 < argc)
			size_mb = parse_long(argv[++i], 1);
		else if (!strncmp(a, "--size-mb=", 10))
			size_mb = parse_long(a + 10, 1);
		else if (!strcmp(a, "--runs") && i + 1 < argc)
			runs = parse_long(argv[++i], 1);
		else if (!strncmp(a, "--runs=", 7))
			runs = parse_long(a + 7, 1);
		else if (!strcmp(a, "--program") && i + 1 < argc)
			program = argv[++i];
		else if (!strncmp(a, "--program=", 10))
			program = a + 10;
		else if (!strcmp(a, "--thp"))
			thp = 1;
		else
			usage();
	}
	if (access(program, X_OK)) {
		fprintf(stderr, "spawn: cannot run '%s': %s\n", program, strerror(errno));
		return 1;
	}
	if ((unsigned long)size_mb > SIZE_MAX / (1024 * 1024))
		usage();
	size = (size_t)size_mb * 1024 * 1024;

	printf("spawn: %ld starts of %s per method and size, the order rotating; page %zu B\n",
	       runs, program, page);
	if (measure("nothing-mapped", (int)runs, program, NULL, 0, page))
		return 1;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "spawn: cannot map %ld MiB: %s\n", size_mb, strerror(errno));
		return 1;
	}
	if (!thp && madvise(mem, size, MADV_NOHUGEPAGE))
		fprintf(stderr, "spawn: madvise(MADV_NOHUGEPAGE): %s (going on)\n", strerror(errno));
	t = now_us();
	touch(mem, size, page, 1);
	printf("spawn: mapped and touched %ld MiB (%s) in %.0f ms\n", size_mb,
	       thp ? "huge pages allowed" : "4 KiB pages, MADV_NOHUGEPAGE", (now_us() - t) / 1e3);
	snprintf(label, sizeof(label), "%ld-MiB", size_mb);
	if (measure(label, (int)runs, program, mem, size, page))
		return 1;
	munmap(mem, size);
	return 0;
}
