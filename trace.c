/*
 * trace.c: see trace.h. The targets are git's, learned from git's
 * documentation of GIT_TRACE (git(1) "Debugging") and by running git
 * with each kind of value.
 */
#include "trace.h"
#include "strbuf.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int trace_fd = -1;
static bool bare;

int trace_open_target(const char *value)
{
	if (!value || !*value || !strcmp(value, "0") || !strcasecmp(value, "false"))
		return -1;
	if (!strcmp(value, "1") || !strcasecmp(value, "true"))
		return 2;
	if (value[0] >= '2' && value[0] <= '9' && !value[1])
		return value[0] - '0';
	if (value[0] == '/')
		return open(value, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	return -1;
}

static void init(void)
{
	const char *b = getenv("GIT_TRACE_BARE");
	trace_fd = trace_open_target(getenv("GIT_TRACE"));
	/* GIT_TRACE_BARE is read as a trace target too: any that is on */
	bare = b && *b && strcmp(b, "0") && strcasecmp(b, "false");
}

bool trace_enabled(void)
{
	pthread_once(&once, init);
	return trace_fd >= 0;
}

static void vtrace_to(int *fd, const char *file, int line, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	if (!bare) {
		struct timeval tv;
		struct tm tm;
		time_t secs;
		gettimeofday(&tv, NULL);
		secs = tv.tv_sec;
		localtime_r(&secs, &tm);
		strbuf_addf(&sb, "%02d:%02d:%02d.%06ld %s:%d", tm.tm_hour, tm.tm_min,
			    tm.tm_sec, (long)tv.tv_usec, file, line);
		while (sb.len < 40)
			strbuf_addch(&sb, ' ');
	}
	strbuf_vaddf(&sb, fmt, ap);
	if (!sb.len || sb.buf[sb.len - 1] != '\n')
		strbuf_addch(&sb, '\n');
	if (write_in_full(*fd, sb.buf, sb.len) < 0)
		*fd = -1;
	strbuf_release(&sb);
}

void trace_printf_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!trace_enabled())
		return;
	va_start(ap, fmt);
	vtrace_to(&trace_fd, file, line, fmt, ap);
	va_end(ap);
}

static pthread_once_t packet_once = PTHREAD_ONCE_INIT;
static int packet_fd = -1;

static void packet_init(void)
{
	pthread_once(&once, init);
	packet_fd = trace_open_target(getenv("GIT_TRACE_PACKET"));
}

bool trace_packet_enabled(void)
{
	pthread_once(&packet_once, packet_init);
	return packet_fd >= 0;
}

void trace_packet_disable(void)
{
	pthread_once(&packet_once, packet_init);
	packet_fd = -1;
}

void trace_packet_printf_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!trace_packet_enabled())
		return;
	va_start(ap, fmt);
	vtrace_to(&packet_fd, file, line, fmt, ap);
	va_end(ap);
}
