/*
 * trace2.c: see trace2.h. Field order follows git's events, since
 * readers (Git's test suite among them) match on adjacent fields such as
 * "category":"x","key":"y","value":"z".
 */
#include "trace2.h"
#include "strbuf.h"
#include "trace.h"
#include <pthread.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int trace_fd = -1;
static int perf_fd = -1;   /* GIT_TRACE2_PERF: git's "perf" format */
static uint64_t start_us;
static int nesting;
static char sid[64];

static uint64_t now_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
}

static void json_string(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, (char)c);
		} else if (c < 0x20) {
			strbuf_addf(sb, "\\u%04x", c);
		} else {
			strbuf_addch(sb, (char)c);
		}
	}
	strbuf_addch(sb, '"');
}

/* {"event":"<name>","sid":...,"thread":"main","time":... */
static void event_head(struct strbuf *sb, const char *event)
{
	uint64_t us = now_us();
	time_t secs = (time_t)(us / 1000000);
	struct tm tm;
	char when[64];
	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addstr(sb, "{\"event\":");
	json_string(sb, event);
	strbuf_addstr(sb, ",\"sid\":");
	json_string(sb, sid);
	strbuf_addf(sb, ",\"thread\":\"main\",\"time\":\"%s.%06uZ\"", when,
		    (unsigned)(us % 1000000));
}

static void emit(struct strbuf *sb)
{
	strbuf_addstr(sb, "}\n");
	if (write_in_full(trace_fd, sb->buf, sb->len) < 0) {
		/* A trace that cannot be written is given up, as git does. */
		trace_fd = -1;
	}
	strbuf_release(sb);
}

bool trace2_enabled(void)
{
	return trace_fd >= 0 || perf_fd >= 0;
}

/* "<time> <where> | d0 | main | <event> | r1 | <t_abs> | | <category> | <details>" */
static void perf_line(const char *event, const char *category, const char *details)
{
	struct strbuf sb = STRBUF_INIT;
	struct timeval tv;
	struct tm tm;
	time_t secs;
	char when[32];
	if (perf_fd < 0)
		return;
	gettimeofday(&tv, NULL);
	secs = tv.tv_sec;
	localtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	strbuf_addf(&sb, "%s.%06ld %-28s | d0 | main | %-12s | r1 | %9.6f | | %-12s | %s\n",
		    when, (long)tv.tv_usec, "gitpack", event,
		    start_us ? (double)(((uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec) - start_us) / 1e6 : 0.0,
		    category ? category : "", details ? details : "");
	if (write_in_full(perf_fd, sb.buf, sb.len) < 0)
		perf_fd = -1;
	strbuf_release(&sb);
}

void trace2_start(int argc, const char **argv)
{
	const char *target = getenv("GIT_TRACE2_EVENT");
	const char *parent = getenv("GIT_TRACE2_PARENT_SID");
	struct strbuf sb = STRBUF_INIT;

	perf_fd = trace_open_target(getenv("GIT_TRACE2_PERF"));
	trace_fd = trace_open_target(target);
	start_us = now_us();
	perf_line("start", NULL, "gitpack");
	if (trace_fd < 0)
		return;
	snprintf(sid, sizeof(sid), "%s%s%" PRIu64 "-P%08x", parent ? parent : "",
		 parent ? "/" : "", start_us, (unsigned)getpid());
	/* Children (there are few) continue our session, as git's do. */
	setenv("GIT_TRACE2_PARENT_SID", sid, 1);

	event_head(&sb, "version");
	strbuf_addstr(&sb, ",\"evt\":\"4\",\"exe\":\"gitpack\"");
	emit(&sb);
	event_head(&sb, "start");
	strbuf_addf(&sb, ",\"t_abs\":%.6f,\"argv\":[", 0.0);
	json_string(&sb, "git");
	for (int i = 0; i < argc; i++) {
		strbuf_addch(&sb, ',');
		json_string(&sb, argv[i]);
	}
	strbuf_addch(&sb, ']');
	emit(&sb);
}

static double elapsed(void)
{
	return (double)(now_us() - start_us) / 1e6;
}

void trace2_exit(int code)
{
	struct strbuf sb = STRBUF_INIT;
	if (perf_fd >= 0) {
		char details[32];
		snprintf(details, sizeof(details), "code:%d", code);
		perf_line("exit", NULL, details);
	}
	if (trace_fd < 0)
		return;
	event_head(&sb, "exit");
	strbuf_addf(&sb, ",\"t_abs\":%.6f,\"code\":%d", elapsed(), code);
	emit(&sb);
}

static void region(const char *event, const char *category, const char *label)
{
	struct strbuf sb = STRBUF_INIT;
	event_head(&sb, event);
	strbuf_addf(&sb, ",\"repo\":1,\"nesting\":%d,\"category\":", nesting);
	json_string(&sb, category);
	strbuf_addstr(&sb, ",\"label\":");
	json_string(&sb, label);
	emit(&sb);
}

void trace2_region_enter(const char *category, const char *label)
{
	if (trace_fd < 0)
		return;
	nesting++;
	region("region_enter", category, label);
}

void trace2_region_leave(const char *category, const char *label)
{
	if (trace_fd < 0)
		return;
	region("region_leave", category, label);
	if (nesting)
		nesting--;
}

/* A "data" event, or "data_json" when value is JSON already. */
static int nr_children;

int trace2_child_start(const char *child_class, const char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	int id = nr_children++;
	if (trace_fd < 0)
		return id;
	event_head(&sb, "child_start");
	strbuf_addf(&sb, ",\"child_id\":%d,\"child_class\":", id);
	json_string(&sb, child_class);
	strbuf_addstr(&sb, ",\"use_shell\":false,\"argv\":[");
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		json_string(&sb, argv[i]);
	}
	strbuf_addch(&sb, ']');
	emit(&sb);
	return id;
}

void trace2_child_exit(int child_id, int code)
{
	struct strbuf sb = STRBUF_INIT;
	if (trace_fd < 0)
		return;
	event_head(&sb, "child_exit");
	strbuf_addf(&sb, ",\"child_id\":%d,\"pid\":0,\"code\":%d", child_id, code);
	emit(&sb);
}

static void data_event(const char *category, const char *key, const char *value, bool json)
{
	struct strbuf sb = STRBUF_INIT;
	if (perf_fd >= 0) {
		strbuf_addf(&sb, "%s:%s", key, value);
		perf_line(json ? "data_json" : "data", category, sb.buf);
		strbuf_reset(&sb);
	}
	if (trace_fd < 0)
		return;
	event_head(&sb, json ? "data_json" : "data");
	strbuf_addf(&sb, ",\"repo\":1,\"t_abs\":%.6f,\"nesting\":%d,\"category\":", elapsed(),
		    nesting + 1);
	json_string(&sb, category);
	strbuf_addstr(&sb, ",\"key\":");
	json_string(&sb, key);
	strbuf_addstr(&sb, ",\"value\":");
	if (json)
		strbuf_addstr(&sb, value);
	else
		json_string(&sb, value);
	emit(&sb);
}

void trace2_def_param(const char *scope, const char *param, const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	if (perf_fd >= 0) {
		char *where = xstrfmt("scope:%s", scope);
		strbuf_addf(&sb, "%s:%s", param, value);
		perf_line("def_param", where, sb.buf);
		strbuf_reset(&sb);
		free(where);
	}
	if (trace_fd < 0)
		return;
	event_head(&sb, "def_param");
	strbuf_addstr(&sb, ",\"scope\":");
	json_string(&sb, scope);
	strbuf_addstr(&sb, ",\"param\":");
	json_string(&sb, param);
	strbuf_addstr(&sb, ",\"value\":");
	json_string(&sb, value);
	emit(&sb);
}

void trace2_data_string(const char *category, const char *key, const char *value)
{
	data_event(category, key, value, false);
}

void trace2_data_json(const char *category, const char *key, const char *json)
{
	data_event(category, key, json, true);
}

void trace2_data_intmax(const char *category, const char *key, int64_t value)
{
	char buf[32];
	if (trace_fd < 0 && perf_fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%" PRId64, value);
	trace2_data_string(category, key, buf);
}

void trace2_counter(const char *category, const char *name, int64_t count)
{
	struct strbuf sb = STRBUF_INIT;
	if (trace_fd < 0)
		return;
	event_head(&sb, "counter");
	strbuf_addstr(&sb, ",\"category\":");
	json_string(&sb, category);
	strbuf_addstr(&sb, ",\"name\":");
	json_string(&sb, name);
	strbuf_addf(&sb, ",\"count\":%" PRId64, count);
	emit(&sb);
}
