/*
 * run-command.c: see run-command.h. The input is written by this
 * process while the child runs; SIGPIPE is ignored for the time so a
 * child that stops reading early is not fatal to us.
 */
#include "run-command.h"
#include "error.h"
#include "strbuf.h"
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int run_command(const char *const *argv, const void *input, size_t len, unsigned flags,
		int *exit_code, struct gp_error *err)
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
	fflush(NULL);
	rc = posix_spawnp(&pid, argv[0], &actions, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(in_pipe[0]);
	if (rc) {
		close(in_pipe[1]);
		errno = rc;
		return gp_error_errno(err, "cannot run '%s'", argv[0]);
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

int run_shell_capture(const char *dir, const char *command, const char *const *args,
		      const void *in, size_t in_len, struct strbuf *out,
		      struct gp_error *err)
{
	struct strbuf input = STRBUF_INIT;
	char *script = xstrfmt("cd \"$1\" || exit 127; exec <\"$2\"; shift 2; %s \"$@\"",
			       command);
	const char **argv = NULL;
	size_t nr_args = 0, argc = 0;
	posix_spawn_file_actions_t fa;
	int pipefd[2] = { -1, -1 }, status = 0, ret;
	pid_t pid;

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
	if (pipe(pipefd)) {
		ret = gp_error_errno(err, "unable to run '%s': pipe", command);
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	ret = posix_spawn(&pid, "/bin/sh", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (ret) {
		errno = ret;
		close(pipefd[0]);
		ret = gp_error_errno(err, "unable to run '%s'", command);
		goto out;
	}
	if (strbuf_read_fd(out, pipefd[0], 0) < 0)
		ret = gp_error_errno(err, "unable to read the output of '%s'", command);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ret && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = gp_error_set(err, GP_EIO, "'%s' failed", command);
out:
	if (input.len)
		unlink(input.buf);
	strbuf_release(&input);
	free(argv);
	free(script);
	return ret;
}
