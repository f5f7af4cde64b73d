/*
 * date.h: the dates git reads, as git reads them. Expiry options and
 * settings (git-gc(1) --prune and gc.pruneExpire, git-repack(1)
 * --cruft-expiration and --unpack-unreachable, git-pack-objects(1)) take
 * any of them, and git hands them to gitpack as the user wrote them, so
 * a date must mean here exactly what it means to git.
 *
 * Two parsers, as in git:
 *
 *  - the strict one reads the formats of "DATE FORMATS" in
 *    git-commit(1): Git's internal "@<seconds> <+|-hhmm>", RFC 2822
 *    ("Thu, 07 Apr 2005 22:13:13 +0200"), ISO 8601
 *    ("2005-04-07T22:13:13Z", "20050407T2213", a space for the "T"),
 *    "YYYY.MM.DD", "MM/DD/YYYY" and "DD.MM.YYYY", seconds since the epoch
 *    (nine digits or more), zone names ("EST", "CEST", ...). It needs a
 *    whole date and time; a missing zone is the local one (TZ).
 *
 *  - "approxidate", which git falls back to: relative dates
 *    ("2.weeks.ago", "3 days ago", "1.year.ago", "last friday",
 *    "yesterday", "today", "noon", "midnight", "tea" (17:00), "10am",
 *    "now", "never"), partial ones ("Jan 5", "5 January 2020 10:00",
 *    "01/02/2020", "02.01.2020", "01-01-1980", "1980-01-01") and mixtures
 *    ("yesterday 10am", "last Friday at noon"), read in local time
 *    relative to a given now. Words it does not know are skipped.
 *
 * Timestamps are seconds since the epoch as git computes them, oddities
 * included (an int that wraps, a day of the month git leaves at 31 in
 * February), so that gitpack and git agree on every text. git keeps them
 * unsigned: a result before 1970 is negative here where git shows the
 * same bits as a number above 2^63. Every function is O(length of the
 * text) and reads any NUL-terminated text without fault.
 */
#ifndef GP_DATE_H
#define GP_DATE_H

#include "util.h"

/* What "now" and "all" mean for an expiry: everything is older. */
#define EXPIRY_EVERYTHING INT64_MAX

/*
 * The strict parse (git's parse_date()): *out seconds since the epoch
 * and *tz_minutes the zone the text gave (east of UTC), or the local one
 * at that time when it gave none. now only decides which of the
 * "MM/DD" and "DD/MM" readings of a date is too far in the future.
 * Returns false, leaving *out and *tz_minutes unspecified, when the text
 * is not a whole date and time in one of the formats, or falls outside
 * 1970 to 2099.
 */
bool parse_date_strict(const char *text, int64_t now, int64_t *out, int *tz_minutes);

/*
 * git's approxidate_careful(): the strict parse when it succeeds, else
 * approxidate relative to now (seconds since the epoch). *out is always
 * set: to now (or what the words understood made of it) when nothing
 * was. Returns false when no word or number of the text meant anything
 * to git, which makes git say "malformed expiration date".
 */
bool approxidate(const char *text, int64_t now, int64_t *out);

/*
 * Parse an expiry date relative to now into *out, as git's
 * parse_expiry_date(): "never" and "false" are 0 (nothing expires),
 * "now" and "all" EXPIRY_EVERYTHING (exact words, as in git), anything
 * else approxidate(). Returns false when approxidate() does.
 *
 * A date before the epoch (negative) gives 0: git stores it as an
 * enormous unsigned time, after which everything "expired", while
 * nothing is older than 1970 here. Deleting fewer objects than git would
 * is the safe side of that difference.
 */
bool parse_expiry_date(const char *text, int64_t now, int64_t *out);

#endif
