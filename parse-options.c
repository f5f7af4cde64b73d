/*
 * parse-options.c: see parse-options.h. Like the rest of the library it
 * neither prints nor exits: it reports through a gp_error, and gitpack.c
 * turns that into git's messages and exit code 129.
 */
#include "parse-options.h"
#include "config.h"
#include "error.h"
#include "strbuf.h"

bool parse_ulong_suffixed(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v, factor = 1;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s)
		return false;
	if (*end == 'k' || *end == 'K')
		factor = 1024UL, end++;
	else if (*end == 'm' || *end == 'M')
		factor = 1024UL * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		factor = 1024UL * 1024 * 1024, end++;
	if (*end)
		return false;
	if (__builtin_mul_overflow(v, factor, &v))
		return false;
	*out = v;
	return true;
}

void parse_options_usage(const char *const *usage, const struct option *opts,
			 struct strbuf *out)
{
	strbuf_addf(out, "usage: %s\n", usage[0]);
	for (size_t line = 1; usage[line]; line++)
		strbuf_addf(out, "   or: %s\n", usage[line]);
	strbuf_addch(out, '\n');
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		char left[128];
		int n = 0;
		if (o->type == OPTION_GROUP) {
			strbuf_addf(out, "\n%s\n", o->help);
			continue;
		}
		if (o->flags & PARSE_OPT_HIDDEN)
			continue;
		n += snprintf(left + n, sizeof(left) - n, "    ");
		if (o->short_name)
			n += snprintf(left + n, sizeof(left) - n, "-%c%s", o->short_name,
				      o->long_name ? ", " : "");
		if (o->long_name) {
			bool neg = (o->type == OPTION_BOOL || o->type == OPTION_COUNTUP) &&
				   !(o->flags & PARSE_OPT_NONEG);
			n += snprintf(left + n, sizeof(left) - n, "--%s%s",
				      neg ? "[no-]" : "", o->long_name);
		}
		if (o->argh && !(o->flags & PARSE_OPT_NOARG))
			n += snprintf(left + n, sizeof(left) - n,
				      (o->flags & PARSE_OPT_OPTARG) ? "[=<%s>]" : " <%s>",
				      o->argh);
		if (n >= 26)
			strbuf_addf(out, "%s\n%26s%s\n", left, "", o->help ? o->help : "");
		else
			strbuf_addf(out, "%-26s%s\n", left, o->help ? o->help : "");
	}
	strbuf_addch(out, '\n');
}

static bool takes_value(const struct option *o)
{
	switch (o->type) {
	case OPTION_INTEGER:
	case OPTION_ULONG:
	case OPTION_STRING:
		return true;
	case OPTION_CALLBACK:
		return !(o->flags & PARSE_OPT_NOARG);
	default:
		return false;
	}
}

static int apply(const struct option *o, const char *arg, int unset,
		 const char *shown, struct gp_error *err)
{
	switch (o->type) {
	case OPTION_BOOL:
		*(int *)o->value = !unset;
		return 0;
	case OPTION_COUNTUP:
		*(int *)o->value = unset ? 0 : *(int *)o->value + 1;
		return 0;
	case OPTION_SET_INT:
		*(int *)o->value = unset ? 0 : (int)o->defval;
		return 0;
	case OPTION_INTEGER: {
		char *end;
		long v;
		if (unset) {
			*(int *)o->value = 0;
			return 0;
		}
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || !*arg || *end || v < INT_MIN || v > INT_MAX) {
			return gp_error_set(err, GP_EINVAL, "option `%s' expects a numerical value", shown);
		}
		*(int *)o->value = (int)v;
		return 0;
	}
	case OPTION_ULONG:
		if (unset) {
			*(unsigned long *)o->value = 0;
			return 0;
		}
		if (!parse_ulong_suffixed(arg, (unsigned long *)o->value)) {
			return gp_error_set(err, GP_EINVAL, "option `%s' expects a non-negative integer value with an optional k/m/g suffix", shown);
		}
		return 0;
	case OPTION_STRING:
		*(const char **)o->value = unset ? NULL : arg;
		return 0;
	case OPTION_CALLBACK:
		/* A callback reports its own error (it is command code). */
		return o->callback(o, arg, unset) ? gp_error_set(err, GP_EINVAL, "%s", "") : 0;
	default:
		BUG("unhandled option type %d", o->type);
	}
}

/* Git's test suite sets this to catch scripts that rely on abbreviations. */
static bool abbreviations_disallowed(void)
{
	const char *env = getenv("GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS");
	bool v;
	return env && config_parse_bool(env, &v) && v;
}

static const struct option *find_long(const struct option *opts, const char *name,
				      size_t len, int *unset, bool *abbreviated)
{
	*abbreviated = false;
	const struct option *abbrev = NULL;
	int abbrev_unset = 0, nr_abbrev = 0;
	for (const struct option *o = opts; o->type != OPTION_END; o++) {
		const char *ln = o->long_name;
		if (!ln)
			continue;
		if (strlen(ln) == len && !strncmp(ln, name, len)) {
			*unset = 0;
			return o;
		}
		if (len > 3 && !strncmp(name, "no-", 3) && !(o->flags & PARSE_OPT_NONEG) &&
		    strlen(ln) == len - 3 && !strncmp(ln, name + 3, len - 3)) {
			*unset = 1;
			return o;
		}
		if (strlen(ln) > len && !strncmp(ln, name, len)) {
			abbrev = o, abbrev_unset = 0, nr_abbrev++;
		}
	}
	if (nr_abbrev == 1) {
		*unset = abbrev_unset;
		*abbreviated = true;
		return abbrev;
	}
	return NULL;
}

int parse_options_run(int argc, const char **argv, const struct option *opts,
		      struct gp_error *err)
{
	int nr_left = 0;
	int argpos = 1;
	for (; argpos < argc; argpos++) {
		const char *arg = argv[argpos];
		if (arg[0] != '-' || !arg[1]) {
			argv[nr_left++] = arg;
			continue;
		}
		if (!strcmp(arg, "--")) {
			argpos++;
			break;
		}
		if (arg[1] == '-') {
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			int unset = 0;
			bool abbreviated;
			const struct option *o;
			if (!strcmp(name, "help-all") || !strcmp(name, "help"))
				return PARSE_OPT_HELP;
			o = find_long(opts, name, len, &unset, &abbreviated);
			if (!o)
				return gp_error_set(err, GP_EINVAL, "unknown option `%.*s'", (int)len, name);
			if (abbreviated && abbreviations_disallowed()) {
				gp_error_set(err, GP_EINVAL, "disallowed abbreviated or ambiguous option '%.*s'",
					     (int)len, name);
				return PARSE_OPT_FATAL;
			}
			const char *value = eq ? eq + 1 : NULL;
			if (unset && value)
				return gp_error_set(err, GP_EINVAL, "option `no-%s' takes no value", o->long_name);
			if (!unset && takes_value(o) && !value && !(o->flags & PARSE_OPT_OPTARG)) {
				if (argpos + 1 >= argc)
					return gp_error_set(err, GP_EINVAL, "option `%s' requires a value", o->long_name);
				value = argv[++argpos];
			}
			if (value && !takes_value(o))
				return gp_error_set(err, GP_EINVAL, "option `%s' takes no value", o->long_name);
			if (apply(o, value, unset, o->long_name, err))
				return GP_EINVAL;
			continue;
		}
		for (const char *p = arg + 1; *p; p++) {
			const struct option *o = NULL;
			if (*p == 'h')
				return PARSE_OPT_HELP;
			for (const struct option *c = opts; c->type != OPTION_END; c++)
				if (c->short_name == *p)
					o = c;
			if (!o)
				return gp_error_set(err, GP_EINVAL, "unknown switch `%c'", *p);
			char shown[2] = { *p, 0 };
			if (takes_value(o)) {
				const char *value = p[1] ? p + 1 : NULL;
				if (!value && !(o->flags & PARSE_OPT_OPTARG)) {
					if (argpos + 1 >= argc)
						return gp_error_set(err, GP_EINVAL, "switch `%c' requires a value", *p);
					value = argv[++argpos];
				}
				if (apply(o, value, 0, shown, err))
					return GP_EINVAL;
				break;
			}
			if (apply(o, NULL, 0, shown, err))
				return GP_EINVAL;
		}
	}
	for (; argpos < argc; argpos++)
		argv[nr_left++] = argv[argpos];
	argv[nr_left] = NULL;
	return nr_left;
}

int parse_opt_string_list(const struct option *opt, const char *arg, int unset)
{
	struct opt_string_list *list = opt->value;
	if (unset) {
		list->nr = 0;
		return 0;
	}
	ALLOC_GROW(list->items, list->nr + 1, list->alloc);
	list->items[list->nr++] = arg;
	return 0;
}
