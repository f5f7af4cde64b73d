/*
 * run-command.h: starting child processes with posix_spawn, never fork
 * (DESIGN.md: a big process that forks copies its page tables, which
 * stalls a server). A child is given its argument vector, an optional
 * block of input for its standard input, and where its standard output
 * goes; its standard error is ours.
 */
#ifndef GP_RUN_COMMAND_H
#define GP_RUN_COMMAND_H

#include "util.h"

struct gp_error;

enum run_command_flags {
	RUN_STDOUT_TO_STDERR = 1 << 0, /* keep our stdout clean (a batch protocol) */
	RUN_STDOUT_TO_NULL = 1 << 1,
};

/*
 * Run argv[0] (searched in PATH) with argv, feeding it input[0..len)
 * (NULL: /dev/null), and wait for it. *exit_code receives its exit
 * status (128 + signal when it was killed). Errors: GP_EIO when it
 * cannot be started or waited for.
 */
int run_command(const char *const *argv, const void *input, size_t len, unsigned flags,
		int *exit_code, struct gp_error *err);

#endif
