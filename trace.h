/*
 * trace.h: git's original trace, GIT_TRACE: free-form lines for people
 * and for tests that grep them ("Skipping contents of tree ..."). When
 * GIT_TRACE is "1" or "true" they go to stderr, when it is a digit 2-9
 * to that file descriptor, when an absolute path to the end of that
 * file; "", "0", "false" or anything else: nowhere. Each line is
 * prefixed by the time and the source line that wrote it, as git does,
 * unless GIT_TRACE_BARE is set the same way (git's test suite sets it).
 *
 * Like trace2.h, this is process-wide: the environment is read once, on
 * the first call; a line is written whole with one write(2), and a
 * target that cannot be written is given up. Library code may trace;
 * it costs a flag test when tracing is off.
 */
#ifndef GP_TRACE_H
#define GP_TRACE_H

#include "util.h"

bool trace_enabled(void);

/*
 * The file descriptor a trace variable's value names, as git reads
 * GIT_TRACE and the GIT_TRACE2_* targets: 2 for "1" or "true", the
 * digit for "2" to "9", the file opened for appending for an absolute
 * path; -1 (no tracing) for "", "0", "false" or anything else. A file
 * opened here stays open for the life of the process.
 */
int trace_open_target(const char *value);

#define trace_printf(...) trace_printf_fl(__FILE__, __LINE__, __VA_ARGS__)
/* A line (a newline is added when fmt's output lacks one). */
GP_PRINTF(3, 4) void trace_printf_fl(const char *file, int line, const char *fmt, ...);

/*
 * GIT_TRACE_PACKET: the pkt-lines a process reads and writes
 * (pkt-line.c), same targets and prefix. Disabled for good once the
 * pack data starts, as git does.
 */
bool trace_packet_enabled(void);
void trace_packet_disable(void);
#define trace_packet_printf(...) trace_packet_printf_fl(__FILE__, __LINE__, __VA_ARGS__)
GP_PRINTF(3, 4) void trace_packet_printf_fl(const char *file, int line, const char *fmt, ...);

#endif
