/*
 * fuzz-date.c: the date parsers of date.h, parse_date_strict(),
 * approxidate() and parse_expiry_date().
 *
 * Input: one selector byte, then texts separated by NUL bytes. The
 * selector's low two bits pick the local zone (UTC, Central Europe and
 * US Eastern with their summer time, Nepal's +05:45), the next two the
 * time "now" is (2009-08-30 19:20 UTC, an hour before Europe's 2024
 * spring change, 1970-01-01, 2099-12-31 23:59:59). Seeds:
 * t/fuzz/corpus/date/, written by hand from "DATE FORMATS" in
 * git-commit(1) and the forms of t0006-date.sh.
 *
 * Checks beyond "no crash": each parse gives the same answer twice (no
 * state survives a call); a text the strict parser reads is one that
 * approxidate() accepts, with the same time; parse_expiry_date() is
 * approxidate() but for its four words, with a time before 1970 read as
 * 0.
 */
#include "fuzz.h"
#include "date.h"
#include <time.h>

static const char *const zones[] = {
	"UTC0", "CET-1CEST,M3.5.0,M10.5.0/3", "EST5EDT,M3.2.0,M11.1.0", "<+0545>-5:45",
};

static const int64_t nows[] = { 1251660000, 1711846800, 0, 4102444799 };

static void check_text(const char *text, int64_t now)
{
	int64_t strict, strict_again, approx, approx_again, expiry;
	int tz, tz_again;
	bool strict_ok, approx_ok, expiry_ok;

	strict_ok = parse_date_strict(text, now, &strict, &tz);
	if (strict_ok != parse_date_strict(text, now, &strict_again, &tz_again) ||
	    (strict_ok && (strict != strict_again || tz != tz_again)))
		fuzz_fail("parse_date_strict('%s') changed its mind", text);

	approx_ok = approxidate(text, now, &approx);
	if (approx_ok != approxidate(text, now, &approx_again) || approx != approx_again)
		fuzz_fail("approxidate('%s') changed its mind", text);
	if (strict_ok && (!approx_ok || approx != strict))
		fuzz_fail("approxidate('%s') = %" PRId64 " (%s), strict parse %" PRId64,
			  text, approx, approx_ok ? "ok" : "bad", strict);

	expiry_ok = parse_expiry_date(text, now, &expiry);
	if (!strcmp(text, "never") || !strcmp(text, "false")) {
		if (!expiry_ok || expiry)
			fuzz_fail("'%s' does not expire nothing", text);
	} else if (!strcmp(text, "now") || !strcmp(text, "all")) {
		if (!expiry_ok || expiry != EXPIRY_EVERYTHING)
			fuzz_fail("'%s' does not expire everything", text);
	} else if (expiry_ok != approx_ok || (expiry_ok && expiry != (approx < 0 ? 0 : approx))) {
		fuzz_fail("parse_expiry_date('%s') = %" PRId64 " (%s), approxidate %" PRId64 " (%s)",
			  text, expiry, expiry_ok ? "ok" : "bad", approx, approx_ok ? "ok" : "bad");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int zone = -1;
	char *text;
	size_t pos = 0;
	int64_t now;

	if (!size)
		return 0;
	if (zone != (data[0] & 3)) {
		zone = data[0] & 3;
		setenv("TZ", zones[zone], 1);
		tzset();
	}
	now = nows[(data[0] >> 2) & 3];
	text = xmalloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	while (pos < size) {
		check_text(text + pos, now);
		pos += strlen(text + pos) + 1;
	}
	free(text);
	return 0;
}
