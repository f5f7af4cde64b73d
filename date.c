/*
 * date.c: git's date parsing (see date.h), written from git's
 * documentation ("DATE FORMATS" in git-commit(1), "--since" in
 * git-log(1)), its tests (t0006-date.sh) and from observing what git
 * 2.55 makes of many thousands of texts; none of its code is used.
 *
 * The strict parser walks the text once, token by token (a run of
 * letters, a run of digits, a signed zone, or one other character it
 * skips), filling the UTC fields of a struct tm; at the end year, month,
 * day and time must all be known. Approxidate walks the text the same
 * way over a struct tm that starts as the local time now, with the date
 * fields unset, and lets each token adjust it: a number waits until the
 * next token says what it counts ("3 days"), or is placed as a day,
 * month or year when none does; "N units ago" subtracts; a special word
 * sets a time ("noon") or a day ("yesterday"). mktime() and
 * localtime_r() do the calendar, in local time, as in git, so that
 * daylight saving time and out-of-range fields come out the same.
 *
 * git does some of its arithmetic in int and lets it wrap ("25000 days
 * ago" is in 2077 for git). Where that can happen it is done here in
 * unsigned arithmetic cut to 32 bits, so that the result is git's and
 * no input is undefined behaviour.
 */
#include "date.h"
#include <time.h>

/* git's own character classes: ASCII only, whatever the locale. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
	return is_digit(c) || is_alpha(c);
}

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static char to_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A 32-bit int as git's arithmetic on int leaves it: wrapped. */
static int wrap_int(uint64_t v)
{
	return (int)(int32_t)(uint32_t)v;
}

static int int_add(int a, int b)
{
	return wrap_int((uint64_t)(int64_t)a + (uint64_t)(int64_t)b);
}

static int int_sub(int a, int b)
{
	return wrap_int((uint64_t)(int64_t)a - (uint64_t)(int64_t)b);
}

static int int_mul(int a, int b)
{
	return wrap_int((uint64_t)(int64_t)a * (uint64_t)(int64_t)b);
}

/*
 * How many leading characters of text spell word, in any case; 0 when
 * text goes on with a letter or digit that is not word's ("Janx", and
 * "Mayday" for "May"). A prefix ends at any other character.
 */
static size_t match_word(const char *text, const char *word)
{
	size_t i;
	for (i = 0; text[i]; i++) {
		if (to_upper(text[i]) == to_upper(word[i]))
			continue;
		if (!is_alnum(text[i]))
			break;
		return 0;
	}
	return i;
}

/* The letters from s on (at least one character). */
static const char *skip_word(const char *s)
{
	do
		s++;
	while (is_alpha(*s));
	return s;
}

/*
 * A run of digits as strtoumax() reads it: saturated at UINT64_MAX,
 * *overflow (if not NULL) telling that from the number itself.
 */
static uint64_t scan_digits_checked(const char *s, const char **end, bool *overflow)
{
	uint64_t v = 0;
	bool over = false;
	for (; is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			over = true;
		else
			v = v * 10 + d;
	}
	*end = s;
	if (overflow)
		*overflow = over;
	return over ? UINT64_MAX : v;
}

static uint64_t scan_digits(const char *s, const char **end)
{
	return scan_digits_checked(s, end, NULL);
}

/*
 * strtol() and strtoul() in base 10 on a 64-bit system, where git calls
 * them on text that need not start with a digit: leading space and a
 * sign are accepted; no digits leave *end at s and give 0.
 */
static uint64_t scan_c_number(const char *s, const char **end, bool *negative, bool *over)
{
	const char *p = s;

	*negative = false;
	*over = false;
	while (is_space(*p))
		p++;
	if (*p == '+' || *p == '-')
		*negative = *p++ == '-';
	if (!is_digit(*p)) {
		*end = s;
		return 0;
	}
	return scan_digits_checked(p, end, over);
}

static uint64_t c_strtoul(const char *s, const char **end)
{
	bool negative, over;
	uint64_t v = scan_c_number(s, end, &negative, &over);
	if (over)
		return UINT64_MAX;
	return negative ? 0 - v : v;
}

static int64_t c_strtol(const char *s, const char **end)
{
	bool negative, over;
	uint64_t v = scan_c_number(s, end, &negative, &over);
	if (negative)
		return over || v > (uint64_t)INT64_MAX + 1 ? INT64_MIN : (int64_t)(0 - v);
	return over || v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static const char *const month_names[] = {
	"January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December",
};

/* Plural, so that "2 fridays ago" reads as well as "last friday". */
static const char *const weekday_names[] = {
	"Sundays", "Mondays", "Tuesdays", "Wednesdays",
	"Thursdays", "Fridays", "Saturdays",
};

/*
 * The zone names the strict parser knows, in minutes east of UTC, summer
 * time included. Three letters of a longer name are enough ("EAS" is
 * EAST); the first that fits wins, so IDLW comes before IDLE.
 */
static const struct {
	const char *name;
	int minutes;
} zone_names[] = {
	{ "IDLW", -720 }, { "NT", -660 }, { "CAT", -600 }, { "HST", -600 },
	{ "HDT", -540 }, { "YST", -540 }, { "YDT", -480 }, { "PST", -480 },
	{ "PDT", -420 }, { "MST", -420 }, { "MDT", -360 }, { "CST", -360 },
	{ "CDT", -300 }, { "EST", -300 }, { "EDT", -240 }, { "AST", -180 },
	{ "ADT", -120 }, { "WAT", -60 }, { "GMT", 0 }, { "UTC", 0 },
	{ "Z", 0 }, { "WET", 0 }, { "BST", 60 }, { "CET", 60 },
	{ "MET", 60 }, { "MEWT", 60 }, { "MEST", 120 }, { "CEST", 120 },
	{ "MESZ", 120 }, { "FWT", 60 }, { "FST", 120 }, { "EET", 120 },
	{ "EEST", 180 }, { "WAST", 420 }, { "WADT", 480 }, { "CCT", 480 },
	{ "JST", 540 }, { "EAST", 600 }, { "EADT", 660 }, { "GST", 600 },
	{ "NZT", 720 }, { "NZST", 720 }, { "NZDT", 780 }, { "IDLE", 720 },
};

/* The last second git dates may name: 2099-12-31 23:59:59 UTC. */
#define LAST_DATE 4102444799

/*
 * Seconds since the epoch of the UTC fields of tm, or -1 when they are
 * outside git's calendar: years 1970 to 2099, a month 0 to 11, and a
 * time that is set. The day of the month is not checked: git counts on
 * from the first of the month, so "Feb 31" is March 2 or 3, and an
 * unset day (-1) two days before the first.
 */
static int64_t utc_seconds(const struct tm *tm)
{
	static const int days_before_month[] = {
		0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334,
	};
	int64_t year = tm->tm_year + (int64_t)1900, days;

	if (year < 1970 || year > 2099 || tm->tm_mon < 0 || tm->tm_mon > 11)
		return -1;
	if (tm->tm_hour < 0 || tm->tm_min < 0 || tm->tm_sec < 0)
		return -1;
	/* Every fourth year is a leap year from 1970 to 2099 (2000 was). */
	days = (year - 1970) * 365 + (year - 1969) / 4 +
	       days_before_month[tm->tm_mon] + tm->tm_mday - 1;
	if (tm->tm_mon > 1 && year % 4 == 0)
		days++;
	return days * 86400 + tm->tm_hour * (int64_t)3600 + tm->tm_min * (int64_t)60 + tm->tm_sec;
}

/* Hour, minute and second, if they are a time (24:00 and a leap second are). */
static bool set_time(int64_t hour, int64_t min, int64_t sec, struct tm *tm)
{
	if (hour < 0 || hour > 24 || min < 0 || min > 59 || sec < 0 || sec > 60)
		return false;
	tm->tm_hour = (int)hour;
	tm->tm_min = (int)min;
	tm->tm_sec = (int)sec;
	return true;
}

/*
 * Whether year, month and day are a date, and if so put them in tm.
 * Years 71 to 99 are 19xx, any year under 38 is 2000 more. With now_utc
 * (now, broken down in UTC), a year of -1 is "not given" and becomes
 * now's, and a date more than ten days after now is refused, since then
 * another reading of the numbers is likelier; a refused date leaves tm
 * alone. Without it, -1 is a year like any other (1999), and month and
 * day are stored even when the year then turns out wrong, as git does.
 */
static bool try_date(int year, int month, int day, const struct tm *now_utc,
		     int64_t now, struct tm *tm)
{
	struct tm check;
	struct tm *dst;
	int64_t when;

	if (month < 1 || month > 12 || day < 1 || day > 31)
		return false;
	check = *tm;
	dst = now_utc ? &check : tm;
	dst->tm_mon = month - 1;
	dst->tm_mday = day;
	if (year == -1 && now_utc) {
		dst->tm_year = now_utc->tm_year;
	} else if (year >= 1970 && year < 2100) {
		dst->tm_year = year - 1900;
	} else if (year > 70 && year < 100) {
		dst->tm_year = year;
	} else if (year < 38) {
		dst->tm_year = year + 100;
	} else {
		return false;
	}
	if (!now_utc)
		return true;
	when = utc_seconds(dst);
	if (when != -1 && when - 10 * 86400 > now)
		return false;
	tm->tm_mon = dst->tm_mon;
	tm->tm_mday = dst->tm_mday;
	if (year != -1)
		tm->tm_year = dst->tm_year;
	return true;
}

/*
 * Numbers joined by one separator, "a<sep>b" or "a<sep>b<sep>c", where
 * s starts a and end is just past it, at sep. ':' makes a time; '-', '/'
 * and '.' a date, read as year-month-day or year-day-month when a is
 * over 70, then (for '.') day.month.year, then month/day/year, then
 * day/month/year, the first that is a date winning; the last three
 * refuse a date more than ten days ahead. A missing year is now's.
 * Returns how much of s it took, or 0 when no reading fits.
 */
static size_t number_group(uint64_t a, char sep, const char *s, const char *end,
			   struct tm *tm, int64_t now)
{
	int64_t b, c = -1;
	int ia, ib, ic;
	struct tm now_utc;
	const struct tm *refuse_future;
	time_t now_t = (time_t)now;

	b = c_strtol(end + 1, &end);
	if (*end == sep && is_digit(end[1]))
		c = c_strtol(end + 1, &end);

	if (sep == ':') {
		if (c < 0)
			c = 0;
		if (a >= 25 || b < 0 || b >= 60 || c > 60)
			return 0;
		tm->tm_hour = (int)a;
		tm->tm_min = (int)b;
		tm->tm_sec = (int)c;
		/*
		 * Once the date is complete, ".<digits>" is a fraction of a
		 * second. (To git, a year is there unless it is -1; a month
		 * or day only when it is not negative.)
		 */
		if (tm->tm_year != -1 && tm->tm_mon >= 0 && tm->tm_mday >= 0 &&
		    *end == '.' && is_digit(end[1]))
			scan_digits(end + 1, &end);
		return (size_t)(end - s);
	}

	/* git hands these to an int: the low 32 bits are what it sees. */
	ia = wrap_int(a);
	ib = wrap_int((uint64_t)b);
	ic = wrap_int((uint64_t)c);
	refuse_future = gmtime_r(&now_t, &now_utc) ? &now_utc : NULL;
	if (a > 70 && (try_date(ia, ib, ic, NULL, now, tm) || try_date(ia, ic, ib, NULL, now, tm)))
		return (size_t)(end - s);
	if (sep == '.' && try_date(ic, ib, ia, refuse_future, now, tm))
		return (size_t)(end - s);
	if (try_date(ic, ia, ib, refuse_future, now, tm))
		return (size_t)(end - s);
	if (try_date(ic, ib, ia, refuse_future, now, tm))
		return (size_t)(end - s);
	return 0;
}

/* The strict parser's state. */
struct strict_date {
	struct tm tm;	/* UTC fields; -1 while not given */
	int offset;	/* minutes east of UTC; -1 while not given (so "-0001" is none) */
	bool epoch;	/* tm came from a count of seconds, which has no zone */
};

static bool no_field_set(const struct tm *tm)
{
	return tm->tm_year < 0 && tm->tm_mon < 0 && tm->tm_mday < 0 &&
	       tm->tm_hour < 0 && tm->tm_min < 0 && tm->tm_sec < 0;
}

/* A run of letters at s: a month, a weekday, a zone, AM/PM or the ISO "T". */
static size_t strict_word(const char *s, struct strict_date *d)
{
	size_t len;

	for (size_t i = 0; i < ARRAY_SIZE(month_names); i++)
		if ((len = match_word(s, month_names[i])) >= 3) {
			d->tm.tm_mon = (int)i;
			return len;
		}
	for (size_t i = 0; i < ARRAY_SIZE(weekday_names); i++)
		if ((len = match_word(s, weekday_names[i])) >= 3) {
			d->tm.tm_wday = (int)i;
			return len;
		}
	for (size_t i = 0; i < ARRAY_SIZE(zone_names); i++) {
		len = match_word(s, zone_names[i].name);
		if (len >= 3 || (len && len == strlen(zone_names[i].name))) {
			if (d->offset == -1)
				d->offset = zone_names[i].minutes;
			return len;
		}
	}
	if (match_word(s, "PM") == 2) {
		d->tm.tm_hour = d->tm.tm_hour % 12 + 12;
		return 2;
	}
	if (match_word(s, "AM") == 2) {
		d->tm.tm_hour = d->tm.tm_hour % 12;
		return 2;
	}
	/*
	 * ISO 8601's "T" before the time: the minutes and seconds it may
	 * leave out are zero, and the digits right after are the time.
	 */
	if (s[0] == 'T' && is_digit(s[1]) && d->tm.tm_hour == -1) {
		d->tm.tm_min = 0;
		d->tm.tm_sec = 0;
		return 1;
	}
	return (size_t)(skip_word(s) - s);
}

/* A run of digits at s, with what follows it if that makes a group. */
static size_t strict_number(const char *s, struct strict_date *d, int64_t now)
{
	struct tm *tm = &d->tm;
	const char *end;
	uint64_t num = scan_digits(s, &end);
	size_t n = (size_t)(end - s);

	/*
	 * 100000000 or more, before any other field, is seconds since the
	 * epoch; eight digits are left for YYYYMMDD.
	 */
	if (num >= 100000000 && no_field_set(tm)) {
		time_t t = (time_t)num;
		if (gmtime_r(&t, tm)) {
			d->epoch = true;
			return n;
		}
	}
	if ((*end == ':' || *end == '.' || *end == '/' || *end == '-') && is_digit(end[1])) {
		size_t len = number_group(num, *end, s, end, tm, now);
		if (len)
			return len;
	}
	if (n == 8) {
		try_date((int)(num / 10000), (int)(num / 100 % 100), (int)(num % 100), NULL, now, tm);
		return n;
	}
	if (n == 6) {
		/* HHMMSS, and a fraction of a second after it is dropped. */
		if (set_time((int64_t)(num / 10000), (int64_t)(num / 100 % 100), (int64_t)(num % 100), tm) &&
		    *end == '.' && is_digit(end[1]))
			scan_digits(end + 1, &end);
		return (size_t)(end - s);
	}
	/*
	 * Just after a "T" (minutes and seconds zero, no hour yet), "HH" or
	 * "HHMM" is the time. Anything else there undoes the "T" and is
	 * read as if it had not been.
	 */
	if (tm->tm_hour == -1 && tm->tm_min == 0 && tm->tm_sec == 0) {
		if (n == 4 && set_time((int64_t)(num / 100), (int64_t)(num % 100), 0, tm))
			return n;
		if (n == 2 && set_time((int64_t)num, 0, 0, tm))
			return n;
		tm->tm_min = -1;
		tm->tm_sec = -1;
	}
	if (n == 4) {
		/* A zone ("1400" is +14:00) or a year. */
		if (num <= 1400 && d->offset == -1)
			d->offset = (int)(num / 100 * 60 + num % 100);
		else if (num > 1900 && num < 2100)
			tm->tm_year = (int)num - 1900;
		return n;
	}
	if (n > 2)
		return n;
	/* One or two digits: a day first, then a year, then a month. */
	if (num > 0 && num < 32 && tm->tm_mday < 0) {
		tm->tm_mday = (int)num;
		return n;
	}
	if (n == 2 && tm->tm_year < 0) {
		if (num < 10 && tm->tm_mday >= 0) {
			tm->tm_year = (int)num + 100;
			return n;
		}
		if (num >= 70) {
			tm->tm_year = (int)num;
			return n;
		}
	}
	if (num > 0 && num < 13 && tm->tm_mon < 0)
		tm->tm_mon = (int)num - 1;
	return n;
}

/* "+hhmm", "-hh", "+hh:mm" at s (a sign and a digit); other lengths are skipped. */
static size_t strict_zone(const char *s, struct strict_date *d)
{
	const char *end;
	int hour = wrap_int(c_strtoul(s + 1, &end));
	size_t n = (size_t)(end - (s + 1));
	int min = 0;

	if (n == 4) {
		min = hour % 100;
		hour = hour / 100;
	} else if (n != 2) {
		min = 99;
	} else if (*end == ':') {
		min = wrap_int(c_strtoul(end + 1, &end));
		if (end - (s + 1) != 5)
			min = 99;
	}
	if (min < 60 && hour < 24) {
		int offset = hour * 60 + min;
		d->offset = *s == '-' ? -offset : offset;
	}
	return (size_t)(end - s);
}

/*
 * Git's internal format after the "@": "<seconds> <+|-><4 characters>",
 * the zone read by strtol() (so "+-100" is -01:00), then the end or a
 * newline.
 */
static bool strict_raw(const char *s, int64_t *out, int *tz_minutes)
{
	const char *end;
	uint64_t stamp;
	int64_t zone;

	if (!is_digit(*s))
		return false;
	stamp = scan_digits(s, &end);
	if (*end != ' ' || stamp == UINT64_MAX || (end[1] != '+' && end[1] != '-'))
		return false;
	s = end + 2;
	zone = c_strtol(s, &end);
	if ((*end && *end != '\n') || end != s + 4)
		return false;
	zone = zone / 100 * 60 + zone % 100;
	*out = (int64_t)stamp;
	*tz_minutes = (int)(s[-1] == '-' ? -zone : zone);
	return true;
}

bool parse_date_strict(const char *text, int64_t now, int64_t *out, int *tz_minutes)
{
	struct strict_date d = { .offset = -1 };
	const char *s = text;
	int64_t stamp;

	if (*s == '@' && strict_raw(s + 1, out, tz_minutes))
		return true;

	d.tm.tm_year = d.tm.tm_mon = d.tm.tm_mday = -1;
	d.tm.tm_hour = d.tm.tm_min = d.tm.tm_sec = -1;
	d.tm.tm_isdst = -1;
	while (*s && *s != '\n') {
		size_t len = 0;
		if (is_alpha(*s))
			len = strict_word(s, &d);
		else if (is_digit(*s))
			len = strict_number(s, &d, now);
		else if ((*s == '-' || *s == '+') && is_digit(s[1]))
			len = strict_zone(s, &d);
		s += len ? len : 1;
	}

	stamp = utc_seconds(&d.tm);
	if (stamp == -1)
		return false;
	if (d.offset == -1) {
		/* The local zone of that time: what mktime() makes of the fields. */
		time_t local;
		d.tm.tm_isdst = -1;
		local = mktime(&d.tm);
		d.offset = (int)((stamp - (int64_t)local) / 60);
	}
	if (!d.epoch) {
		/* git compares unsigned: a leap second past LAST_DATE slips through. */
		uint64_t ustamp = (uint64_t)stamp;
		int64_t shift = d.offset * (int64_t)60;
		if (d.offset > 0 && (uint64_t)shift > ustamp)
			return false;
		if (d.offset < 0 && (uint64_t)-shift > (uint64_t)LAST_DATE - ustamp)
			return false;
		stamp -= shift;
	}
	*out = stamp;
	*tz_minutes = d.offset;
	return true;
}

/* Approxidate's state. */
struct approx_date {
	/*
	 * The date being built, local time. Year, month and day start unset
	 * (-1); a day of -2 means "the day before, unless a day is given"
	 * ("noon" before noon), and lower values further back still.
	 */
	struct tm tm;
	struct tm now;	 /* now, local time */
	time_t now_sec;
	int number;	 /* a number not placed yet; 0 when none */
	bool understood; /* some token meant something */
};

/*
 * Fill the unset date fields from now (the year before now's when the
 * month is later than now's), go back sec seconds, and renormalize tm
 * as local time. A deferred "day before" is taken only when nothing
 * else moves the date (sec is 0). Returns the time.
 */
static time_t settle(struct approx_date *a, time_t sec)
{
	struct tm *tm = &a->tm;
	time_t t;

	if (tm->tm_mday < 0) {
		if (!sec)
			sec = int_mul(int_sub(-1, tm->tm_mday), 86400);
		tm->tm_mday = a->now.tm_mday;
	}
	if (tm->tm_mon < 0)
		tm->tm_mon = a->now.tm_mon;
	if (tm->tm_year < 0) {
		tm->tm_year = a->now.tm_year;
		if (tm->tm_mon > a->now.tm_mon)
			tm->tm_year--;
	}
	t = mktime(tm) - sec;
	localtime_r(&t, tm);
	return t;
}

/* Place a number no word claimed: as the day, else the month, else the year. */
static void place_number(struct approx_date *a)
{
	int num = a->number;
	struct tm *tm = &a->tm;

	if (!num)
		return;
	a->number = 0;
	if (tm->tm_mday < 0 && num < 32) {
		tm->tm_mday = num;
	} else if (tm->tm_mon < 0 && num < 13) {
		tm->tm_mon = int_add(num, -1);
	} else if (tm->tm_year < 0) {
		if (num > 1969 && num < 2100)
			tm->tm_year = num - 1900;
		else if (num > 69 && num < 100)
			tm->tm_year = num;
		else if (num < 38)
			tm->tm_year = num + 100;
	}
}

/* "noon", "midnight", "tea": before that hour today, it means yesterday's. */
static void at_hour(struct approx_date *a, int hour)
{
	place_number(a);
	if (a->tm.tm_mday < 0 && a->tm.tm_hour < hour)
		a->tm.tm_mday = -2;
	a->tm.tm_hour = hour;
	a->tm.tm_min = 0;
	a->tm.tm_sec = 0;
}

/* "[N] pm", "[N] am": the hour N (else the hour so far) in that half of the day. */
static void half_day(struct approx_date *a, int half)
{
	int hour = a->tm.tm_hour;
	if (a->number) {
		hour = a->number;
		a->tm.tm_min = 0;
		a->tm.tm_sec = 0;
	}
	a->number = 0;
	a->tm.tm_hour = hour % 12 + half;
}

enum special_word {
	SPECIAL_YESTERDAY, SPECIAL_TODAY, SPECIAL_NOON, SPECIAL_MIDNIGHT,
	SPECIAL_TEA, SPECIAL_PM, SPECIAL_AM, SPECIAL_NEVER, SPECIAL_NOW,
};

static const char *const special_words[] = {
	[SPECIAL_YESTERDAY] = "yesterday", [SPECIAL_TODAY] = "today",
	[SPECIAL_NOON] = "noon", [SPECIAL_MIDNIGHT] = "midnight",
	[SPECIAL_TEA] = "tea", [SPECIAL_PM] = "PM", [SPECIAL_AM] = "AM",
	[SPECIAL_NEVER] = "never", [SPECIAL_NOW] = "now",
};

static void special(struct approx_date *a, enum special_word w)
{
	struct tm *tm = &a->tm;

	switch (w) {
	case SPECIAL_YESTERDAY:
		/* The day before today's date, or before the date given. */
		a->number = 0;
		tm->tm_mday = -1;
		settle(a, 86400);
		break;
	case SPECIAL_TODAY:
		/* Today; at midnight unless a time was given (is not now's). */
		a->number = 0;
		tm->tm_mday = -1;
		if (tm->tm_hour == a->now.tm_hour && tm->tm_min == a->now.tm_min &&
		    tm->tm_sec == a->now.tm_sec)
			tm->tm_hour = tm->tm_min = tm->tm_sec = 0;
		settle(a, 0);
		break;
	case SPECIAL_NOON:
		at_hour(a, 12);
		break;
	case SPECIAL_MIDNIGHT:
		at_hour(a, 0);
		break;
	case SPECIAL_TEA:
		at_hour(a, 17);
		break;
	case SPECIAL_PM:
		half_day(a, 12);
		break;
	case SPECIAL_AM:
		half_day(a, 0);
		break;
	case SPECIAL_NEVER: {
		time_t zero = 0;
		localtime_r(&zero, tm);
		a->number = 0;
		break;
	}
	case SPECIAL_NOW:
		a->number = 0;
		settle(a, 0);
		break;
	}
}

static const char *const number_words[] = {
	"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
};

/* Units "N <unit>" goes back by, singular or plural. */
static const struct {
	const char *plural;
	int seconds;
} units[] = {
	{ "seconds", 1 }, { "minutes", 60 }, { "hours", 3600 },
	{ "days", 86400 }, { "weeks", 7 * 86400 },
};

/* A run of letters at s; returns where it ends. */
static const char *approx_word(const char *s, struct approx_date *a)
{
	const char *end = skip_word(s);
	struct tm *tm = &a->tm;

	for (size_t i = 0; i < ARRAY_SIZE(month_names); i++)
		if (match_word(s, month_names[i]) >= 3) {
			tm->tm_mon = (int)i;
			a->understood = true;
			return end;
		}
	for (size_t i = 0; i < ARRAY_SIZE(special_words); i++)
		if (match_word(s, special_words[i]) == strlen(special_words[i])) {
			special(a, (enum special_word)i);
			a->understood = true;
			return end;
		}
	if (!a->number) {
		/* Nothing to count: only a number word or "last" (one) can follow. */
		for (size_t i = 0; i < ARRAY_SIZE(number_words); i++)
			if (match_word(s, number_words[i]) == strlen(number_words[i])) {
				a->number = (int)i + 1;
				a->understood = true;
				return end;
			}
		if (match_word(s, "last") == 4) {
			a->number = 1;
			a->understood = true;
		}
		return end;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (match_word(s, units[i].plural) >= strlen(units[i].plural) - 1) {
			settle(a, int_mul(units[i].seconds, a->number));
			a->number = 0;
			a->understood = true;
			return end;
		}
	for (size_t i = 0; i < ARRAY_SIZE(weekday_names); i++)
		if (match_word(s, weekday_names[i]) >= 3) {
			/* "last friday" is 1: the latest Friday before today. */
			int weeks = int_add(a->number, -1), days;
			a->number = 0;
			days = tm->tm_wday - (int)i;
			if (days <= 0)
				weeks = int_add(weeks, 1);
			days = int_add(days, int_mul(7, weeks));
			settle(a, int_mul(days, 86400));
			a->understood = true;
			return end;
		}
	if (match_word(s, "months") >= 5) {
		int month;
		settle(a, 0);
		month = int_sub(tm->tm_mon, a->number);
		a->number = 0;
		if (month < 0) {
			/* git steps back a year at a time; do it in one go. */
			int64_t years = (-(int64_t)month + 11) / 12;
			month = (int)(month + years * 12);
			tm->tm_year = wrap_int((uint64_t)(int64_t)tm->tm_year - (uint64_t)years);
		}
		tm->tm_mon = month;
		a->understood = true;
		return end;
	}
	if (match_word(s, "years") >= 4) {
		settle(a, 0);
		tm->tm_year = int_sub(tm->tm_year, a->number);
		a->number = 0;
		a->understood = true;
	}
	return end;
}

/* A run of digits at s; returns where it ends. */
static const char *approx_number(const char *s, struct approx_date *a)
{
	const char *end;
	uint64_t num = scan_digits(s, &end);

	if ((*end == ':' || *end == '.' || *end == '/' || *end == '-') && is_digit(end[1])) {
		size_t len = number_group(num, *end, s, end, &a->tm, (int64_t)a->now_sec);
		if (len)
			return s + len;
	}
	/* Zeros in front only of a small number: "Dec 02", never "Dec 0002". */
	if (s[0] != '0' || end - s <= 2)
		a->number = wrap_int(num);
	return end;
}

static time_t approx_parse(const char *text, time_t now, bool *understood)
{
	struct approx_date a = { .now_sec = now };
	const char *s = text;

	localtime_r(&now, &a.tm);
	a.now = a.tm;
	a.tm.tm_year = a.tm.tm_mon = a.tm.tm_mday = -1;
	while (*s) {
		if (is_digit(*s)) {
			place_number(&a);
			s = approx_number(s, &a);
			a.understood = true;
		} else if (is_alpha(*s)) {
			s = approx_word(s, &a);
		} else {
			s++;
		}
	}
	place_number(&a);
	*understood = a.understood;
	return settle(&a, 0);
}

bool approxidate(const char *text, int64_t now, int64_t *out)
{
	int tz_minutes;
	bool understood;

	if (parse_date_strict(text, now, out, &tz_minutes))
		return true;
	*out = (int64_t)approx_parse(text, (time_t)now, &understood);
	return understood;
}

bool parse_expiry_date(const char *text, int64_t now, int64_t *out)
{
	int64_t when;

	if (!strcmp(text, "never") || !strcmp(text, "false")) {
		*out = 0;
		return true;
	}
	if (!strcmp(text, "all") || !strcmp(text, "now")) {
		*out = EXPIRY_EVERYTHING;
		return true;
	}
	if (!approxidate(text, now, &when))
		return false;
	*out = when < 0 ? 0 : when;
	return true;
}
