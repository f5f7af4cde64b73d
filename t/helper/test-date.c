/*
 * test-date.c: test-tool date, printing what date.h makes of texts, so
 * that tests compare gitpack's reading of a date with git's.
 *
 *   test-tool date (approxidate | parse | expiry) [--now=<seconds>] [<date>...]
 *
 * Without dates, reads them from stdin, one a line. --now is the time
 * relative dates count from (default: the clock). Prints, a line per
 * date:
 *   approxidate  "<seconds> ok", or "<seconds> bad" when git would call
 *                the text malformed; seconds unsigned, as git prints them
 *                (git rev-parse --since=<date> gives --max-age=<seconds>)
 *   parse        "<seconds> <+|-hhmm>" as git's ident lines have them,
 *                or "bad" (git var GIT_COMMITTER_IDENT with
 *                GIT_COMMITTER_DATE=<date> prints the former, or dies)
 *   expiry       "<seconds>" (signed) or "malformed"
 */
#include "../../date.h"
#include "../../strbuf.h"
#include "test-tool.h"
#include <time.h>

static void show(const char *mode, const char *text, int64_t now)
{
	int64_t when;
	int tz;

	if (!strcmp(mode, "approxidate")) {
		bool ok = approxidate(text, now, &when);
		printf("%" PRIu64 " %s\n", (uint64_t)when, ok ? "ok" : "bad");
	} else if (!strcmp(mode, "parse")) {
		if (parse_date_strict(text, now, &when, &tz)) {
			char sign = tz < 0 ? '-' : '+';
			int abs_tz = tz < 0 ? -tz : tz;
			printf("%" PRIu64 " %c%02d%02d\n", (uint64_t)when, sign, abs_tz / 60, abs_tz % 60);
		} else {
			printf("bad\n");
		}
	} else if (parse_expiry_date(text, now, &when)) {
		printf("%" PRId64 "\n", when);
	} else {
		printf("malformed\n");
	}
}

int cmd__date(int argc, const char **argv)
{
	int64_t now = (int64_t)time(NULL);
	const char *mode = argc > 1 ? argv[1] : "", *val;
	int i = 2;

	if (strcmp(mode, "approxidate") && strcmp(mode, "parse") && strcmp(mode, "expiry")) {
		fprintf(stderr, "usage: test-tool date (approxidate | parse | expiry) [--now=<seconds>] [<date>...]\n");
		return 129;
	}
	if (i < argc && skip_prefix(argv[i], "--now=", &val)) {
		char *end;
		errno = 0;
		now = strtoll(val, &end, 10);
		if (errno || end == val || *end) {
			fprintf(stderr, "fatal: bad --now: '%s'\n", val);
			return 128;
		}
		i++;
	}
	if (i < argc) {
		for (; i < argc; i++)
			show(mode, argv[i], now);
	} else {
		struct strbuf line = STRBUF_INIT;
		while (strbuf_getline(&line, stdin))
			show(mode, line.buf, now);
		strbuf_release(&line);
	}
	return 0;
}
