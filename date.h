/*
 * date.h: the dates Git's options take for expiry (git-config(1)
 * "gc.pruneExpire", git-repack(1) "--cruft-expiration", git-pack-objects(1)
 * "--unpack-unreachable"): "never", "now"/"all", relative dates such as
 * "2.weeks.ago" or "3 days ago", "yesterday", "@<seconds>", seconds since
 * the epoch, and absolute "YYYY-MM-DD[ HH:MM[:SS]][ +HHMM]" dates.
 */
#ifndef GP_DATE_H
#define GP_DATE_H

#include "util.h"

/* What "now" and "all" mean for an expiry: everything is older. */
#define EXPIRY_EVERYTHING INT64_MAX

/*
 * Parse an expiry date relative to now (seconds since the epoch) into
 * *out: "never" and "false" are 0 (nothing expires), "now" and "all"
 * EXPIRY_EVERYTHING. Returns false when the text is not a date.
 */
bool parse_expiry_date(const char *text, int64_t now, int64_t *out);

#endif
