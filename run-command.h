/*
 * run-command.h: running the shell commands a repository configures
 * (textconv drivers, smudge filters), without fork: posix_spawn of
 * /bin/sh, as git runs them ("sh -c '<command> \"$@\"' <args>").
 */
#ifndef GP_RUN_COMMAND_H
#define GP_RUN_COMMAND_H

#include "util.h"

struct gp_error;
struct strbuf;

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

/* Write buf to a new temporary file; its path into path (caller unlinks). */
int write_temp_file(const void *buf, size_t len, struct strbuf *path, struct gp_error *err);

#endif
