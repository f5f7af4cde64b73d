/*
 * trace2.h: Git's trace2 event stream (Documentation/technical/api-trace2
 * in git), the part of it that tools and tests read: when the
 * environment variable GIT_TRACE2_EVENT names a file (an absolute path,
 * appended to) or a file descriptor ("2" to "9"; "1" and "true" are
 * stderr, as for every git trace: trace_open_target()), one JSON
 * object per line is written there: "version", "start" and "exit"
 * events, "region_enter"/"region_leave" and "data" events.
 *
 * This is process-wide, like a logger: gitpack.c calls trace2_start()
 * once; library code may record regions and data anywhere, which cost
 * nothing when tracing is off. Events are written whole with one
 * write(2), so lines from several threads or processes do not mix.
 */
#ifndef GP_TRACE2_H
#define GP_TRACE2_H

#include "util.h"

/* Read GIT_TRACE2_EVENT; write "version" and "start" (argv). */
void trace2_start(int argc, const char **argv);
/* The "exit" event. */
void trace2_exit(int code);
bool trace2_enabled(void);

void trace2_region_enter(const char *category, const char *label);
void trace2_region_leave(const char *category, const char *label);
/*
 * A child process, as git records it: "child_start" with child_class
 * ("hook", "?" for others) and the argv it runs, and "child_exit" with
 * its exit code. trace2_child_start() returns the child's id for
 * trace2_child_exit().
 */
int trace2_child_start(const char *child_class, const char *const *argv);
void trace2_child_exit(int child_id, int code);

/*
 * A "def_param" event: a setting the operator asked to see in the trace
 * (git's trace2.configParams / GIT_TRACE2_CONFIG_PARAMS), with the
 * scope it came from ("system", "global", "local", "command").
 */
void trace2_def_param(const char *scope, const char *param, const char *value);

void trace2_data_string(const char *category, const char *key, const char *value);
/* A data_json event: json must be one well-formed JSON value. */
void trace2_data_json(const char *category, const char *key, const char *json);
void trace2_data_intmax(const char *category, const char *key, int64_t value);
/* A "counter" event, as git emits its fsync counts ("fsync", "hardware-flush"). */
void trace2_counter(const char *category, const char *name, int64_t count);

#endif
