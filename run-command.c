/*
 * run-command.c: see run-command.h. The input is written by this
 * process while the child runs; SIGPIPE is ignored for the time so a
 * child that stops reading early is not fatal to us.
 */
#include "run-command.h"
#include "error.h"
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
