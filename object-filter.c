/*
 * object-filter.c: parsing "--filter=<filter-spec>" (see object-filter.h).
 *
 * What is accepted and the exact messages were learned from git's
 * documentation (rev-list-options "--filter", technical/partial-clone)
 * and by running git rev-list --filter on edge cases: a number is what
 * strtoumax() reads in base 0 with nothing but one unit letter after
 * it (no sign, no trailing blank); object:type takes only the four type
 * names, exactly; sparse:oid takes anything, resolved only when the
 * filter is applied.
 */
#include "object-filter.h"
#include "error.h"
#include "strbuf.h"
#include "trace.h"
#include <ctype.h>

/* Nested combine: specs this deep are refused rather than recursed into. */
#define MAX_COMBINE_DEPTH 64

/*
 * Characters a combine: sub-spec must %-encode, besides whitespace,
 * control characters and bytes >= 0x80. The list is git's: reserved so
 * that specs can later grow a syntax of their own.
 */
static const char must_escape[] = "~`!@#$^&*()[]{}\\;'\",<>?";

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c >= 0x80 || isspace(c) || (c && strchr(must_escape, c));
}

/*
 * An unsigned number with an optional k/m/g unit, as git's config
 * numbers: false on anything else, on a sign, and on overflow.
 */
static bool parse_scaled(const char *s, uint64_t *out)
{
	uintmax_t v, unit = 1;
	char *end;
	if (strchr(s, '-'))
		return false;
	errno = 0;
	v = strtoumax(s, &end, 0);
	if (errno == ERANGE || end == s)
		return false;
	if (!*end)
		unit = 1;
	else if (!strcmp(end, "k") || !strcmp(end, "K"))
		unit = 1024;
	else if (!strcmp(end, "m") || !strcmp(end, "M"))
		unit = 1024 * 1024;
	else if (!strcmp(end, "g") || !strcmp(end, "G"))
		unit = 1024 * 1024 * 1024;
	else
		return false;
	if (v > UINT64_MAX / unit)
		return false;
	*out = (uint64_t)(v * unit);
	return true;
}

/* Decode %XX in [s, s + len) into sb; %00 and malformed escapes stay as written. */
static void percent_decode(struct strbuf *sb, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len) {
			int hi = hex_digit_value(s[i + 1]), lo = hex_digit_value(s[i + 2]);
			if (hi >= 0 && lo >= 0 && (hi || lo)) {
				strbuf_addch(sb, hi << 4 | lo);
				i += 2;
				continue;
			}
		}
		strbuf_addch(sb, s[i]);
	}
}

static void percent_encode(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (needs_escape(c) || c == '%' || c == '+')
			strbuf_addf(sb, "%%%02x", c);
		else
			strbuf_addch(sb, (char)c);
	}
}

static int parse_one(struct object_filter *f, const char *spec, int depth,
		     struct gp_error *err);

/* Append spec %-encoded, and trace it as git does (GIT_TRACE). */
static void trace_added(struct strbuf *sb, const char *spec)
{
	size_t start = sb->len;
	percent_encode(sb, spec);
	trace_printf("Add to combine filter-spec: %s", sb->buf + start);
}

static struct object_filter *new_sub(struct object_filter *f)
{
	struct object_filter *sub;
	ALLOC_GROW(f->subs, f->nr_subs + 1, f->alloc_subs);
	sub = &f->subs[f->nr_subs++];
	memset(sub, 0, sizeof(*sub));
	return sub;
}

/* The part of a combine: spec after "combine:". */
static int parse_combine(struct object_filter *f, const char *list, int depth,
			 struct gp_error *err)
{
	struct strbuf sub_spec = STRBUF_INIT;
	int ret = 0;

	f->kind = OBJECT_FILTER_COMBINE;
	if (!*list)
		return gp_error_set(err, GP_EINVAL, "expected something after combine:");
	if (depth >= MAX_COMBINE_DEPTH)
		return gp_error_set(err, GP_EINVAL, "combine: filters nested more than %d deep",
				    MAX_COMBINE_DEPTH);
	while (*list) {
		size_t len = strcspn(list, "+");
		for (size_t i = 0; i < len; i++)
			if (needs_escape((unsigned char)list[i])) {
				ret = gp_error_set(err, GP_EINVAL,
						   "must escape char in sub-filter-spec: '%c'",
						   list[i]);
				goto out;
			}
		if (len) {
			strbuf_reset(&sub_spec);
			percent_decode(&sub_spec, list, len);
			ret = parse_one(new_sub(f), sub_spec.buf, depth + 1, err);
			if (ret)
				goto out;
		}
		list += len;
		if (*list == '+')
			list++;
	}
out:
	strbuf_release(&sub_spec);
	return ret;
}

/* Parse spec into the empty f; on error f may hold parts, for the caller to release. */
static int parse_one(struct object_filter *f, const char *spec, int depth,
		     struct gp_error *err)
{
	const char *v;
	f->spec = xstrdup(spec);
	if (!strcmp(spec, "blob:none")) {
		f->kind = OBJECT_FILTER_BLOB_NONE;
		return 0;
	}
	if (!strncmp(spec, "blob:limit=", 11)) {
		if (!parse_scaled(spec + 11, &f->blob_limit))
			return gp_error_set(err, GP_EINVAL, "invalid filter-spec '%s'", spec);
		f->kind = OBJECT_FILTER_BLOB_LIMIT;
		return 0;
	}
	if (!strncmp(spec, "tree:", 5)) {
		if (!parse_scaled(spec + 5, &f->tree_depth))
			return gp_error_set(err, GP_EINVAL, "expected 'tree:<depth>'");
		f->kind = OBJECT_FILTER_TREE_DEPTH;
		return 0;
	}
	if (!strncmp(spec, "sparse:oid=", 11)) {
		f->kind = OBJECT_FILTER_SPARSE_OID;
		f->sparse_oid = xstrdup(spec + 11);
		return 0;
	}
	if (!strncmp(spec, "sparse:path=", 12))
		return gp_error_set(err, GP_EINVAL, "sparse:path filters support has been dropped");
	if (!strncmp(spec, "object:type=", 12)) {
		v = spec + 12;
		f->type = type_from_name(v, strlen(v));
		if (f->type == OBJ_BAD)
			return gp_error_set(err, GP_EINVAL,
					    "'%s' for 'object:type=<type>' is not a valid object type", v);
		f->kind = OBJECT_FILTER_OBJECT_TYPE;
		return 0;
	}
	if (!strncmp(spec, "combine:", 8))
		return parse_combine(f, spec + 8, depth, err);
	return gp_error_set(err, GP_EINVAL, "invalid filter-spec '%s'", spec);
}

int object_filter_parse(struct object_filter *f, const char *spec,
			struct gp_error *err)
{
	int ret;
	if (f->kind != OBJECT_FILTER_NONE || f->spec)
		BUG("object_filter_parse() into a filter in use");
	ret = parse_one(f, spec, 0, err);
	if (ret)
		object_filter_release(f);
	return ret;
}

int object_filter_add(struct object_filter *f, const char *spec,
		      struct gp_error *err)
{
	struct object_filter added = OBJECT_FILTER_INIT;
	struct strbuf combined = STRBUF_INIT;
	int ret;

	if (f->kind == OBJECT_FILTER_NONE)
		return object_filter_parse(f, spec, err);
	ret = object_filter_parse(&added, spec, err);
	if (ret)
		return ret;
	if (f->kind != OBJECT_FILTER_COMBINE) {
		/* the first filter becomes the first sub-filter of a combine: */
		struct object_filter first = *f;
		memset(f, 0, sizeof(*f));
		f->kind = OBJECT_FILTER_COMBINE;
		strbuf_addstr(&combined, "combine:");
		trace_added(&combined, first.spec);
		*new_sub(f) = first;
	} else {
		strbuf_addstr(&combined, f->spec);
		free(f->spec);
	}
	strbuf_addch(&combined, '+');
	trace_added(&combined, spec);
	f->spec = strbuf_detach(&combined, NULL);
	*new_sub(f) = added;
	return 0;
}

void object_filter_release(struct object_filter *f)
{
	for (size_t i = 0; i < f->nr_subs; i++)
		object_filter_release(&f->subs[i]);
	free(f->subs);
	free(f->spec);
	free(f->sparse_oid);
	memset(f, 0, sizeof(*f));
}

const char *object_filter_spec(const struct object_filter *f)
{
	return f->spec;
}

const char *object_filter_kind_name(enum object_filter_kind kind)
{
	switch (kind) {
	case OBJECT_FILTER_NONE:
		return "none";
	case OBJECT_FILTER_BLOB_NONE:
		return "blob:none";
	case OBJECT_FILTER_BLOB_LIMIT:
		return "blob:limit";
	case OBJECT_FILTER_TREE_DEPTH:
		return "tree";
	case OBJECT_FILTER_SPARSE_OID:
		return "sparse:oid";
	case OBJECT_FILTER_OBJECT_TYPE:
		return "object:type";
	case OBJECT_FILTER_COMBINE:
		return "combine";
	}
	BUG("unknown object filter kind %d", (int)kind);
}

bool object_filter_is_walkless(const struct object_filter *f)
{
	switch (f->kind) {
	case OBJECT_FILTER_NONE:
	case OBJECT_FILTER_BLOB_NONE:
	case OBJECT_FILTER_BLOB_LIMIT:
	case OBJECT_FILTER_OBJECT_TYPE:
		return true;
	case OBJECT_FILTER_TREE_DEPTH:
	case OBJECT_FILTER_SPARSE_OID:
		return false;
	case OBJECT_FILTER_COMBINE:
		for (size_t i = 0; i < f->nr_subs; i++)
			if (!object_filter_is_walkless(&f->subs[i]))
				return false;
		return true;
	}
	BUG("unknown object filter kind %d", (int)f->kind);
}

bool object_filter_omits(const struct object_filter *f, enum object_type type,
			 uint64_t size)
{
	switch (f->kind) {
	case OBJECT_FILTER_NONE:
		return false;
	case OBJECT_FILTER_BLOB_NONE:
		return type == OBJ_BLOB;
	case OBJECT_FILTER_BLOB_LIMIT:
		return type == OBJ_BLOB && size >= f->blob_limit;
	case OBJECT_FILTER_OBJECT_TYPE:
		return type != f->type;
	case OBJECT_FILTER_COMBINE:
		for (size_t i = 0; i < f->nr_subs; i++)
			if (object_filter_omits(&f->subs[i], type, size))
				return true;
		return false;
	case OBJECT_FILTER_TREE_DEPTH:
	case OBJECT_FILTER_SPARSE_OID:
		break;
	}
	BUG("object_filter_omits() on a %s filter, which needs a walk",
	    object_filter_kind_name(f->kind));
}

bool object_filter_needs_size(const struct object_filter *f, enum object_type type)
{
	if (f->kind == OBJECT_FILTER_BLOB_LIMIT)
		return type == OBJ_BLOB;
	for (size_t i = 0; f->kind == OBJECT_FILTER_COMBINE && i < f->nr_subs; i++)
		if (object_filter_needs_size(&f->subs[i], type))
			return true;
	return false;
}
