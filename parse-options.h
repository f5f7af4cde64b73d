/*
 * parse-options.h: git-style command-line options.
 *
 * Long options accept "--name=value" and "--name value"; boolean long
 * options accept "--no-name"; unambiguous prefixes of long names are
 * accepted; short options may be bundled ("-vq") and take values as
 * "-ofile" or "-o file". "--" ends options.
 *
 * Like the rest of the library this module neither prints nor exits:
 * parse_options_run() reports "-h" and errors by its return value and
 * err. Commands call parse_options() and usage_with_options() (in
 * builtin.h, implemented in gitpack.c), which print git's messages and
 * exit with 129.
 */
#ifndef GP_PARSE_OPTIONS_H
#define GP_PARSE_OPTIONS_H

#include "util.h"

enum parse_opt_type {
	OPTION_END,
	OPTION_GROUP,   /* a heading line in the usage text */
	OPTION_BOOL,    /* int *: set to 1, or 0 with --no- */
	OPTION_COUNTUP, /* int *: incremented, reset to 0 with --no- */
	OPTION_SET_INT, /* int *: set to defval, 0 with --no- */
	OPTION_INTEGER, /* int *: parse a decimal value */
	OPTION_ULONG,   /* unsigned long *: decimal with k/m/g suffix */
	OPTION_STRING,  /* const char **: the value, NULL with --no- */
	OPTION_CALLBACK,
};

enum parse_opt_flags {
	PARSE_OPT_OPTARG = 1 << 0,  /* value is optional (--opt[=v]) */
	PARSE_OPT_NONEG = 1 << 1,   /* no --no- form */
	PARSE_OPT_NOARG = 1 << 2,   /* callback takes no value */
	PARSE_OPT_HIDDEN = 1 << 3,  /* not shown in usage */
};

struct option;
/* arg is NULL for --no-name (unset=1) or a missing optional value. */
typedef int parse_opt_cb(const struct option *opt, const char *arg, int unset);

struct option {
	enum parse_opt_type type;
	int short_name;
	const char *long_name;
	void *value;
	const char *argh; /* name of the value in usage, e.g. "file" */
	const char *help;
	int flags;
	parse_opt_cb *callback;
	intptr_t defval;
};

#define OPT_END() { OPTION_END, 0, NULL, NULL, NULL, NULL, 0, NULL, 0 }
#define OPT_GROUP(h) { OPTION_GROUP, 0, NULL, NULL, NULL, (h), 0, NULL, 0 }
#define OPT_BOOL(s, l, v, h) { OPTION_BOOL, (s), (l), (v), NULL, (h), 0, NULL, 0 }
#define OPT_COUNTUP(s, l, v, h) { OPTION_COUNTUP, (s), (l), (v), NULL, (h), 0, NULL, 0 }
#define OPT_SET_INT(s, l, v, h, i) { OPTION_SET_INT, (s), (l), (v), NULL, (h), 0, NULL, (i) }
#define OPT_INTEGER(s, l, v, h) { OPTION_INTEGER, (s), (l), (v), "n", (h), 0, NULL, 0 }
#define OPT_ULONG(s, l, v, h) { OPTION_ULONG, (s), (l), (v), "n", (h), 0, NULL, 0 }
#define OPT_STRING(s, l, v, a, h) { OPTION_STRING, (s), (l), (v), (a), (h), 0, NULL, 0 }
#define OPT_CALLBACK(s, l, v, a, h, cb) { OPTION_CALLBACK, (s), (l), (v), (a), (h), 0, (cb), 0 }
#define OPT_CALLBACK_F(s, l, v, a, h, f, cb) { OPTION_CALLBACK, (s), (l), (v), (a), (h), (f), (cb), 0 }
/*
 * A repeatable option collecting its values (--keep-pack=a --keep-pack=b);
 * --no-<name> empties the list. The strings are argv's (borrowed); free
 * items when done.
 */
struct opt_string_list {
	const char **items;
	size_t nr, alloc;
};
int parse_opt_string_list(const struct option *opt, const char *arg, int unset);
#define OPT_STRING_LIST(s, l, v, a, h) \
	{ OPTION_CALLBACK, (s), (l), (v), (a), (h), 0, parse_opt_string_list, 0 }
#define OPT__QUIET(v, h) OPT_COUNTUP('q', "quiet", (v), (h))
#define OPT__VERBOSE(v, h) OPT_COUNTUP('v', "verbose", (v), (h))

struct gp_error;
struct strbuf;

/* parse_options_run() found "-h" or "--help". */
#define PARSE_OPT_HELP (-100)
/* A problem git reports with "fatal:" (exit 128) rather than the usage. */
#define PARSE_OPT_FATAL (-101)

/*
 * Parse argv (argv[0] is the command name). Returns the number of
 * arguments left, moved to the front of argv (argv[result] is NULL);
 * PARSE_OPT_HELP; or GP_EINVAL with the problem in err (empty when a
 * callback failed: callbacks are command code and report their own).
 */
int parse_options_run(int argc, const char **argv, const struct option *opts,
		      struct gp_error *err);
/* Append the usage text (git's layout) for usage lines and opts. */
void parse_options_usage(const char *const *usage, const struct option *opts,
			 struct strbuf *out);

/* Parse "123", "10k", "2m", "1g" (powers of 1024); false when invalid. */
bool parse_ulong_suffixed(const char *s, unsigned long *out);

#endif
