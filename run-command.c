/*
 * run-command.c: see run-command.h. The input is written by this
 * process while the child runs; SIGPIPE is ignored for the time so a
 * child that stops reading early is not fatal to us.
 */
#include "run-command.h"
#include <poll.h>
#include "error.h"
#include "strbuf.h"
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

/* program NULL: argv[0], searched in PATH. */
static int spawn_and_wait(const char *program, const char *const *argv, const void *input,
			  size_t len, unsigned flags, int *exit_code, struct gp_error *err)
{
	posix_spawn_file_actions_t actions;
	int in_pipe[2] = { -1, -1 };
	struct sigaction ignore = { .sa_handler = SIG_IGN }, old;
	pid_t pid;
	int status, ret = 0, rc;

	if (pipe(in_pipe) < 0)
		return gp_error_errno(err, "cannot create a pipe for '%s'", argv[0]);
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
	posix_spawn_file_actions_addclose(&actions, in_pipe[0]);
	posix_spawn_file_actions_addclose(&actions, in_pipe[1]);
	if (flags & RUN_STDOUT_TO_STDERR)
		posix_spawn_file_actions_adddup2(&actions, 2, 1);
	else if (flags & RUN_STDOUT_TO_NULL)
		posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
	if (flags & RUN_STDERR_TO_NULL)
		posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
	fflush(NULL);
	if (program)
		rc = posix_spawn(&pid, program, &actions, NULL, (char *const *)argv, environ);
	else
		rc = posix_spawnp(&pid, argv[0], &actions, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(in_pipe[0]);
	if (rc) {
		close(in_pipe[1]);
		errno = rc;
		return gp_error_errno(err, "cannot run '%s'", program ? program : argv[0]);
	}
	sigaction(SIGPIPE, &ignore, &old);
	if (input && len)
		write_in_full(in_pipe[1], input, len);
	close(in_pipe[1]);
	sigaction(SIGPIPE, &old, NULL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = gp_error_errno(err, "cannot wait for '%s'", argv[0]);
			break;
		}
	}
	if (!ret)
		*exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
			   : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return ret;
}

int run_command(const char *const *argv, const void *input, size_t len, unsigned flags,
		int *exit_code, struct gp_error *err)
{
	return spawn_and_wait(NULL, argv, input, len, flags, exit_code, err);
}

int run_program(const char *program, const char *const *argv, unsigned flags, int *exit_code,
		struct gp_error *err)
{
	return spawn_and_wait(program, argv, NULL, 0, flags, exit_code, err);
}

int run_command_capture(const char *const *argv, unsigned flags, struct strbuf *out,
			int *exit_code, struct gp_error *err)
{
	posix_spawn_file_actions_t actions;
	int out_pipe[2] = { -1, -1 }, status, rc, ret = 0;
	pid_t pid;

	if (pipe(out_pipe) < 0)
		return gp_error_errno(err, "cannot create a pipe for '%s'", argv[0]);
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
	posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
	posix_spawn_file_actions_addclose(&actions, out_pipe[1]);
	if (flags & RUN_STDERR_TO_NULL)
		posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
	fflush(NULL);
	rc = posix_spawnp(&pid, argv[0], &actions, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(out_pipe[1]);
	if (rc) {
		close(out_pipe[0]);
		errno = rc;
		return gp_error_errno(err, "cannot run '%s'", argv[0]);
	}
	for (;;) {
		char buf[8192];
		ssize_t got = read(out_pipe[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && !ret)
			ret = gp_error_errno(err, "cannot read the output of '%s'", argv[0]);
		if (got <= 0)
			break;
		strbuf_add(out, buf, (size_t)got);
	}
	close(out_pipe[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			if (!ret)
				ret = gp_error_errno(err, "cannot wait for '%s'", argv[0]);
			return ret;
		}
	}
	*exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
		   : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return ret;
}

int run_command_detached(const char *const *argv, struct gp_error *err)
{
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	pid_t pid;
	int rc;

	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&attr);
	/* Its own session: the terminal's hangup and signals are not its. */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
	fflush(NULL);
	rc = posix_spawnp(&pid, argv[0], &actions, &attr, (char *const *)argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	if (rc) {
		errno = rc;
		return gp_error_errno(err, "cannot run '%s'", argv[0]);
	}
	return 0;
}

int write_temp_file(const void *buf, size_t len, struct strbuf *path, struct gp_error *err)
{
	const char *tmpdir = getenv("TMPDIR");
	int fd;
	strbuf_reset(path);
	strbuf_addf(path, "%s/gitpack-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(path->buf);
	if (fd < 0)
		return gp_error_errno(err, "unable to create a temporary file in '%s'",
				      tmpdir && *tmpdir ? tmpdir : "/tmp");
	if ((len && write(fd, buf, len) != (ssize_t)len) | close(fd)) {
		unlink(path->buf);
		return gp_error_errno(err, "unable to write '%s'", path->buf);
	}
	return 0;
}

/* Read what the child writes on its pipes until both close; 0 or GP_EIO. */
static int pump(int out_fd, int err_fd, run_stream_fn *fn, void *data, const char *command,
		struct gp_error *err)
{
	struct pollfd pfd[2] = { { .fd = out_fd, .events = POLLIN },
				 { .fd = err_fd, .events = POLLIN } };
	char buf[65536];
	int open_fds = (out_fd >= 0) + (err_fd >= 0), ret = 0;
	if (err_fd < 0)
		pfd[1].fd = -1;
	while (open_fds) {
		int n = poll(pfd, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gp_error_errno(err, "unable to read the output of '%s'", command);
		for (int i = 0; i < 2; i++) {
			ssize_t got;
			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(pfd[i].fd, buf, sizeof(buf));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			/* a failing consumer stops consuming; the child still gets drained */
			if (!ret && fn(data, i + 1, buf, (size_t)got))
				ret = gp_error_set(err, GP_EIO, "the output of '%s' could not be sent",
						   command);
		}
	}
	return ret;
}

int run_shell_stream(const char *dir, const char *command, const char *const *args,
		     const void *in, size_t in_len, unsigned flags, run_stream_fn *fn,
		     void *data, int *exit_code, struct gp_error *err)
{
	struct strbuf input = STRBUF_INIT;
	char *script = xstrfmt("cd \"$1\" || exit 127; exec <\"$2\"; shift 2; %s \"$@\"",
			       command);
	const char **argv = NULL;
	size_t nr_args = 0, argc = 0;
	posix_spawn_file_actions_t fa;
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, status = 0, ret;
	bool want_stderr = flags & RUN_STREAM_STDERR;
	pid_t pid;

	*exit_code = -1;
	ret = write_temp_file(in, in_len, &input, err);
	if (ret)
		goto out;
	while (args && args[nr_args])
		nr_args++;
	argv = xcalloc(nr_args + 7, sizeof(*argv));
	argv[argc++] = "sh";
	argv[argc++] = "-c";
	argv[argc++] = script;
	argv[argc++] = command;
	argv[argc++] = dir;
	argv[argc++] = input.buf;
	for (size_t i = 0; i < nr_args; i++)
		argv[argc++] = args[i];
	if (pipe(out_pipe) || (want_stderr && pipe(err_pipe))) {
		ret = gp_error_errno(err, "unable to run '%s': pipe", command);
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_addclose(&fa, out_pipe[0]);
	posix_spawn_file_actions_addclose(&fa, out_pipe[1]);
	if (want_stderr) {
		posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
		posix_spawn_file_actions_addclose(&fa, err_pipe[0]);
		posix_spawn_file_actions_addclose(&fa, err_pipe[1]);
	}
	ret = posix_spawn(&pid, "/bin/sh", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out_pipe[1]);
	out_pipe[1] = -1;
	if (want_stderr) {
		close(err_pipe[1]);
		err_pipe[1] = -1;
	}
	if (ret) {
		errno = ret;
		ret = gp_error_errno(err, "unable to run '%s'", command);
		goto out;
	}
	ret = pump(out_pipe[0], err_pipe[0], fn, data, command, err);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
		   : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
out:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	if (input.len)
		unlink(input.buf);
	strbuf_release(&input);
	free(argv);
	free(script);
	return ret;
}

static int capture_stdout(void *data, int stream, const void *buf, size_t len)
{
	strbuf_add(data, buf, len);
	return 0;
}

int run_shell_capture(const char *dir, const char *command, const char *const *args,
		      const void *in, size_t in_len, struct strbuf *out,
		      struct gp_error *err)
{
	int code, ret = run_shell_stream(dir, command, args, in, in_len, 0, capture_stdout, out,
					 &code, err);
	if (!ret && code)
		ret = gp_error_set(err, GP_EIO, "'%s' failed", command);
	return ret;
}

char *run_self_path(void)
{
	char buf[4096];
	ssize_t len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (len <= 0 || (size_t)len >= sizeof(buf) - 1)
		return NULL;
	buf[len] = '\0';
	return xstrdup(buf);
}
