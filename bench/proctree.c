/*
 * proctree: sample the memory of a process and all its descendants.
 *
 *   bench/proctree [-i MS] [-o FILE] PID
 *
 * Every MS milliseconds (default 20) it lists the processes (one read of
 * /proc/N/stat each, for the parent links; /proc/N/task/T/children is
 * not in every kernel), finds PID's descendants and sums the resident
 * set (/proc/N/statm, file-backed and shared pages included, so a page
 * mapped by two processes counts twice) of PID and all of them. It stops
 * at SIGTERM or SIGINT, or when PID is gone, and writes to FILE (or
 * standard output):
 *
 *   peak_rss_kib N samples N mean_interval_ms X max_procs N root_hwm_kib N
 *   proc PID STARTTIME PPID CMDLINE      (one line per descendant seen)
 *
 * peak_rss_kib is the largest sum seen; max_procs the most processes in
 * the tree at once (PID included); root_hwm_kib PID's own VmHWM at the
 * end (0 when it is gone). The proc lines name every descendant any
 * sample saw, by pid and start time (pids are reused), with the last
 * command line read: a caller can count, say, the pack-objects that ran.
 * A process that lived less than one interval may be missed, and so may
 * a peak between two samples.
 *
 * Written in C so that sampling costs little CPU beside the server it
 * watches (about 1 ms a sample, mostly the kernel's, with a hundred
 * processes on the machine). Standalone: no gitpack headers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct proc {
	int pid, ppid;
	unsigned long long start;
	int in_tree;
};

struct seen {
	int pid, ppid;
	unsigned long long start;
	char cmd[256];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Read a small /proc file into buf (NUL-terminated); length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;
	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1) {
		n = read(fd, buf + got, size - 1 - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

/* ppid and start time from /proc/PID/stat; 0 or -1 (gone). */
static int read_stat(int pid, int *ppid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	int field;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* the command may hold spaces and parentheses: start after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	/* fields from 3 (state); ppid is 4, starttime 22 */
	for (field = 3; field <= 22 && p; field++) {
		while (*p == ' ')
			p++;
		if (field == 4)
			*ppid = atoi(p);
		if (field == 22)
			*start = strtoull(p, NULL, 10);
		p = strchr(p, ' ');
	}
	return field > 22 ? 0 : -1;
}

static long resident_kib(int pid, long page_kib)
{
	char path[64], buf[256];
	long size, resident;
	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%ld %ld", &size, &resident) != 2)
		return 0;
	return resident * page_kib;
}

static void read_cmdline(int pid, char *out, size_t size)
{
	char path[64];
	ssize_t n;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = read_small(path, out, size);
	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		if (out[i] == '\0' || out[i] == '\n')
			out[i] = ' ';
	while (n > 0 && out[n - 1] == ' ')
		out[--n] = '\0';
}

static long root_hwm_kib(int pid)
{
	char path[64], buf[4096], *p;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strstr(buf, "VmHWM:")))
		return 0;
	return strtol(p + 6, NULL, 10);
}

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	long interval_ms = 20, page_kib = sysconf(_SC_PAGESIZE) / 1024, peak = 0, hwm;
	int root = 0, opt, max_procs = 0;
	struct proc *procs = NULL;
	size_t procs_alloc = 0;
	struct seen *seen = NULL;
	size_t seen_nr = 0, seen_alloc = 0;
	unsigned long samples = 0;
	double t_first = 0, t_last = 0;
	struct timespec next;
	FILE *out = stdout;
	struct sigaction sa;

	while ((opt = getopt(argc, argv, "i:o:")) != -1) {
		switch (opt) {
		case 'i': interval_ms = atol(optarg); break;
		case 'o': out_path = optarg; break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || interval_ms < 1 || (root = atoi(argv[optind])) <= 0)
		goto usage;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		DIR *dir = opendir("/proc");
		struct dirent *de;
		size_t nr = 0;
		long sum = 0;
		int in_tree = 0, changed, root_alive = 0;

		if (!dir) {
			perror("proctree: /proc");
			return 1;
		}
		while ((de = readdir(dir))) {
			int pid = atoi(de->d_name), ppid = 0;
			unsigned long long start = 0;
			if (pid <= 0 || read_stat(pid, &ppid, &start))
				continue;
			if (nr == procs_alloc) {
				procs_alloc = procs_alloc ? 2 * procs_alloc : 1024;
				procs = realloc(procs, procs_alloc * sizeof(*procs));
				if (!procs) {
					perror("proctree");
					return 1;
				}
			}
			procs[nr].pid = pid;
			procs[nr].ppid = ppid;
			procs[nr].start = start;
			procs[nr].in_tree = pid == root;
			root_alive |= pid == root;
			nr++;
		}
		closedir(dir);
		if (!root_alive)
			break;
		/* the descendants: mark children of marked ones until nothing changes */
		do {
			changed = 0;
			for (size_t i = 0; i < nr; i++) {
				if (procs[i].in_tree)
					continue;
				for (size_t j = 0; j < nr; j++)
					if (procs[j].in_tree && procs[j].pid == procs[i].ppid) {
						procs[i].in_tree = changed = 1;
						break;
					}
			}
		} while (changed);
		for (size_t i = 0; i < nr; i++) {
			size_t k;
			if (!procs[i].in_tree)
				continue;
			in_tree++;
			sum += resident_kib(procs[i].pid, page_kib);
			if (procs[i].pid == root)
				continue;
			for (k = 0; k < seen_nr; k++)
				if (seen[k].pid == procs[i].pid && seen[k].start == procs[i].start)
					break;
			if (k == seen_nr) {
				if (seen_nr == seen_alloc) {
					seen_alloc = seen_alloc ? 2 * seen_alloc : 256;
					seen = realloc(seen, seen_alloc * sizeof(*seen));
					if (!seen) {
						perror("proctree");
						return 1;
					}
				}
				seen[k].pid = procs[i].pid;
				seen[k].ppid = procs[i].ppid;
				seen[k].start = procs[i].start;
				seen[k].cmd[0] = '\0';
				seen_nr++;
			}
			/*
			 * Read every time: a child seen between fork and exec
			 * changes. A zombie's is empty: keep the last one.
			 */
			{
				char cmd[sizeof(seen[k].cmd)];
				read_cmdline(procs[i].pid, cmd, sizeof(cmd));
				if (cmd[0])
					memcpy(seen[k].cmd, cmd, sizeof(cmd));
			}
		}
		if (sum > peak)
			peak = sum;
		if (in_tree > max_procs)
			max_procs = in_tree;
		t_last = now_ms();
		if (!samples)
			t_first = t_last;
		samples++;
		/* the next sample at a fixed pace, however long this one took */
		next.tv_sec += interval_ms / 1000;
		next.tv_nsec += (interval_ms % 1000) * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}

	hwm = root_hwm_kib(root);
	if (out_path && !(out = fopen(out_path, "w"))) {
		perror(out_path);
		return 1;
	}
	fprintf(out, "peak_rss_kib %ld samples %lu mean_interval_ms %.2f max_procs %d root_hwm_kib %ld\n",
		peak, samples, samples > 1 ? (t_last - t_first) / (double)(samples - 1) : 0.0,
		max_procs, hwm);
	for (size_t k = 0; k < seen_nr; k++)
		fprintf(out, "proc %d %llu %d %s\n", seen[k].pid, seen[k].start, seen[k].ppid, seen[k].cmd);
	if (out != stdout && fclose(out)) {
		perror(out_path);
		return 1;
	}
	free(procs);
	free(seen);
	return 0;
usage:
	fprintf(stderr, "usage: proctree [-i MS] [-o FILE] PID\n");
	return 2;
}
