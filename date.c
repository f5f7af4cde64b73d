/*
 * date.c: see date.h. A small, strict subset of git's approxidate: the
 * forms expiry options are given in. Anything else is refused rather
 * than guessed at, since a wrong guess would delete objects.
 */
#include "date.h"
#include <ctype.h>
#include <time.h>

static const struct {
	const char *name;
	int64_t seconds;
} units[] = {
	{ "second", 1 }, { "sec", 1 }, { "minute", 60 }, { "min", 60 },
	{ "hour", 3600 }, { "day", 86400 }, { "week", 7 * 86400 },
	{ "fortnight", 14 * 86400 }, { "month", 30 * 86400 }, { "year", 365 * 86400 },
};

/* "seconds" and "second" alike; false for an unknown unit. */
static bool unit_seconds(const char *word, size_t len, int64_t *out)
{
	if (len > 1 && word[len - 1] == 's')
		len--;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i].name) == len && !strncasecmp(word, units[i].name, len)) {
			*out = units[i].seconds;
			return true;
		}
	return false;
}

/* "<n> <unit> [<n> <unit>...] [ago]", words separated by '.', ' ', '_' or ','. */
static bool parse_relative(const char *s, int64_t now, int64_t *out)
{
	int64_t back = 0, pending = -1;
	bool any = false;

	while (*s) {
		const char *w;
		size_t len;
		while (*s == '.' || *s == ' ' || *s == '_' || *s == ',')
			s++;
		if (!*s)
			break;
		w = s;
		if (isdigit((unsigned char)*s)) {
			int64_t n = 0;
			while (isdigit((unsigned char)*s)) {
				if (n > INT64_MAX / 10 - 10)
					return false;
				n = n * 10 + (*s++ - '0');
			}
			if (pending >= 0)
				return false;
			pending = n;
			continue;
		}
		while (isalpha((unsigned char)*s))
			s++;
		len = (size_t)(s - w);
		if (!len)
			return false;
		if (len == 3 && !strncasecmp(w, "ago", 3)) {
			if (pending >= 0)
				return false;
			continue;
		}
		if (len == 9 && !strncasecmp(w, "yesterday", 9)) {
			back += 86400;
			any = true;
			continue;
		}
		{
			int64_t unit;
			if (!unit_seconds(w, len, &unit))
				return false;
			if (pending < 0)
				pending = 1;
			if (pending > INT64_MAX / unit)
				return false;
			back += pending * unit;
			pending = -1;
			any = true;
		}
	}
	if (!any || pending >= 0)
		return false;
	*out = now > back ? now - back : 0;
	return true;
}

static bool parse_digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return true;
}

/* "YYYY-MM-DD[( |T)HH:MM[:SS]][ ][(+|-)HHMM|Z]", UTC unless a zone is given. */
static bool parse_absolute(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, sec = 0;
	int64_t t, tz = 0;

	if (!parse_digits(&s, 4, &y) || *s++ != '-' || !parse_digits(&s, 2, &mo) ||
	    *s++ != '-' || !parse_digits(&s, 2, &d))
		return false;
	if (*s == ' ' || *s == 'T') {
		const char *p = s + 1;
		if (parse_digits(&p, 2, &h) && *p == ':') {
			p++;
			if (!parse_digits(&p, 2, &mi))
				return false;
			if (*p == ':') {
				p++;
				if (!parse_digits(&p, 2, &sec))
					return false;
			}
			s = p;
		}
	}
	while (*s == ' ')
		s++;
	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, zh, zm;
		if (!parse_digits(&s, 2, &zh) || !parse_digits(&s, 2, &zm))
			return false;
		tz = sign * (zh * 3600 + zm * 60);
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = (int64_t)timegm(&tm);
	*out = t - tz;
	return true;
}

bool parse_expiry_date(const char *text, int64_t now, int64_t *out)
{
	const char *s = text;
	if (!strcasecmp(text, "never") || !strcasecmp(text, "false")) {
		*out = 0;
		return true;
	}
	if (!strcasecmp(text, "now") || !strcasecmp(text, "all")) {
		*out = EXPIRY_EVERYTHING;
		return true;
	}
	if (*s == '@')
		s++;
	if (isdigit((unsigned char)*s)) {
		const char *p = s;
		int64_t n = 0;
		while (isdigit((unsigned char)*p) && n < INT64_MAX / 10 - 10)
			n = n * 10 + (*p++ - '0');
		/* A bare count of seconds: git reads numbers this long as one. */
		if (!*p && (s != text || p - s >= 9)) {
			*out = n;
			return true;
		}
	}
	if (parse_absolute(text, out))
		return true;
	return parse_relative(text, now, out);
}
