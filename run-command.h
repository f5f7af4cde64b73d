/*
 * run-command.h: starting child processes with posix_spawn, never fork
 * (DESIGN.md: a big process that forks copies its page tables, which
 * stalls a server): programs with their argument vector, and the shell
 * commands a repository configures (textconv drivers, smudge filters),
 * as git runs them ("sh -c '<command> \"$@\"' <args>").
 */
#ifndef GP_RUN_COMMAND_H
#define GP_RUN_COMMAND_H

#include "util.h"

struct gp_error;
struct strbuf;

enum run_command_flags {
	RUN_STDOUT_TO_STDERR = 1 << 0, /* keep our stdout clean (a batch protocol) */
	RUN_STDOUT_TO_NULL = 1 << 1,
	RUN_STDERR_TO_NULL = 1 << 2, /* a child whose complaints are expected */
};

/*
 * Run argv[0] (searched in PATH) with argv, feeding it input[0..len)
 * (NULL: /dev/null), and wait for it. *exit_code receives its exit
 * status (128 + signal when it was killed). Errors: GP_EIO when it
 * cannot be started or waited for.
 */
int run_command(const char *const *argv, const void *input, size_t len, unsigned flags,
		int *exit_code, struct gp_error *err);

/*
 * Like run_command() with no input, but the program run is the file
 * program (no PATH search) while its argv[0] stays argv[0]: how a
 * gitpack command runs gitpack itself as the "git" child git's own
 * command would run (trace2 and the child both see git's argv).
 */
int run_program(const char *program, const char *const *argv, unsigned flags, int *exit_code,
		struct gp_error *err);

/*
 * Run argv[0] (searched in PATH) with standard input on /dev/null and
 * its standard output appended to out, and wait for it; flags as for
 * run_command() (RUN_STDERR_TO_NULL only: the output is ours).
 * *exit_code as for run_command(). Errors: GP_EIO when it cannot be
 * started, read from or waited for.
 */
int run_command_capture(const char *const *argv, unsigned flags, struct strbuf *out,
			int *exit_code, struct gp_error *err);

/*
 * Start argv[0] (searched in PATH) in a session of its own, standard
 * input, output and error on /dev/null (other descriptors inherited),
 * and do not wait for it: it runs on after the caller exits, as git's
 * daemonize() makes a process run on, without fork. Errors: GP_EIO
 * when it cannot be started.
 */
int run_command_detached(const char *const *argv, struct gp_error *err);

/*
 * The absolute path of the running binary (/proc/self/exe): gitpack's
 * children that are gitpack itself run it. NULL when it cannot be read.
 */
char *run_self_path(void);

/*
 * Run command through the shell in directory dir, with args as its
 * arguments ("$@"), standard input from in[0..in_len) (through a
 * temporary file, so that no pipe can fill up both ways) and standard
 * output appended to out. Standard error is the caller's. Errors:
 * GP_EIO (with the command named) when it cannot be run or exits other
 * than with 0; out then holds what it wrote.
 */
int run_shell_capture(const char *dir, const char *command, const char *const *args,
		      const void *in, size_t in_len, struct strbuf *out,
		      struct gp_error *err);

/*
 * Like run_shell_capture(), streaming: fn(data, 1, ...) receives the
 * standard output as it comes and, with RUN_STREAM_STDERR, fn(data, 2,
 * ...) the standard error (otherwise the caller's). fn returns non-zero
 * to give up sending (the child is still drained and waited for; the
 * result is then GP_EIO). *exit_code: the child's exit status (128 +
 * signal). Errors: GP_EIO when it cannot be started.
 */
enum run_stream_flags {
	RUN_STREAM_STDERR = 1 << 0,
};
typedef int run_stream_fn(void *data, int stream, const void *buf, size_t len);
int run_shell_stream(const char *dir, const char *command, const char *const *args,
		     const void *in, size_t in_len, unsigned flags, run_stream_fn *fn,
		     void *data, int *exit_code, struct gp_error *err);

/* Write buf to a new temporary file; its path into path (caller unlinks). */
int write_temp_file(const void *buf, size_t len, struct strbuf *path, struct gp_error *err);

#endif
