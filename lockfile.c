/*
 * lockfile.c: the ~pid companion of lock files (lockfile.h).
 */
#include "lockfile.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool pid_enabled;

void lockfile_pid_configure(bool enabled)
{
	pid_enabled = enabled;
}

char *lockfile_pid_path(const char *lock_path)
{
	size_t len = strlen(lock_path);
	if (len >= 5 && !strcmp(lock_path + len - 5, ".lock"))
		return xstrfmt("%.*s~pid.lock", (int)(len - 5), lock_path);
	return xstrfmt("%s~pid.lock", lock_path);
}

char *lockfile_pid_write(const char *lock_path)
{
	char *path, *line;
	int fd;
	bool ok;

	if (!pid_enabled)
		return NULL;
	path = lockfile_pid_path(lock_path);
	/* A leftover companion of a lock that is ours now is replaced. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	line = xstrfmt("pid %ld\n", (long)getpid());
	ok = write(fd, line, strlen(line)) == (ssize_t)strlen(line);
	free(line);
	if (close(fd) < 0 || !ok) {
		unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

void lockfile_pid_remove(char *pid_path)
{
	if (!pid_path)
		return;
	unlink(pid_path);
	free(pid_path);
}

/* The pid of a companion's "pid <n>" line; 0 when there is none or it is not one. */
static long read_holder(const char *pid_path)
{
	char buf[64];
	ssize_t n;
	char *end;
	long pid;
	int fd = open(pid_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 4)
		return 0;
	buf[n] = '\0';
	if (strncmp(buf, "pid ", 4))
		return 0;
	errno = 0;
	pid = strtol(buf + 4, &end, 10);
	if (errno || pid <= 0 || (*end && *end != '\n'))
		return 0;
	return pid;
}

bool lockfile_describe_holder(const char *lock_path, struct strbuf *msg)
{
	char *pid_path = lockfile_pid_path(lock_path);
	long pid = read_holder(pid_path);

	free(pid_path);
	if (!pid)
		return false;
	/* kill(pid, 0): EPERM still means the process exists (another user's). */
	if (!kill((pid_t)pid, 0) || errno == EPERM)
		strbuf_addf(msg, "; it is held by process %ld, still running", pid);
	else
		strbuf_addf(msg, "; it was taken by process %ld, which is no longer running: "
			    "the lock appears to be stale, remove it if no git process is "
			    "running", pid);
	return true;
}
