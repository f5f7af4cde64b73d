/*
 * commit.c: the bounded header parsers of commit.h.
 *
 * A header line is "<key> SP <value> LF". Lines are found with memchr()
 * bounded by the bytes left, and object ids must be exactly hexsz hex
 * digits followed by LF, as git requires when it parses a commit or tag
 * ("bad tree pointer", "bad parents"). Only the headers before the first
 * empty line are looked at; the message is never scanned.
 */
#include "commit.h"
#include "error.h"

/*
 * If buf[pos..len) starts with "<key> <hex>\n", the id, and *pos moved
 * past the line; 1 then. 0 when the line does not start with "<key> ";
 * -1 when it does but the rest is malformed.
 */
static int oid_line(const unsigned char *buf, size_t len, size_t *pos,
		    const char *key, int algo, struct object_id *oid)
{
	size_t klen = strlen(key), hexsz = gp_hash_algos[algo].hexsz;
	size_t left = len - *pos;
	const unsigned char *p = buf + *pos;
	char hex[GP_MAX_HEXSZ + 1];

	if (left < klen + 1 || memcmp(p, key, klen) || p[klen] != ' ')
		return 0;
	if (left - klen - 1 < hexsz + 1 || p[klen + 1 + hexsz] != '\n')
		return -1;
	memcpy(hex, p + klen + 1, hexsz);
	hex[hexsz] = '\0';
	if (parse_oid_hex_exact(hex, algo, oid))
		return -1;
	*pos += klen + 1 + hexsz + 1;
	return 1;
}

/* The unix time after the last '>' of a committer line; 0 if none. */
static uint64_t parse_date(const unsigned char *line, size_t len)
{
	const unsigned char *gt = NULL;
	uint64_t date = 0;
	size_t pos;

	for (size_t i = 0; i < len; i++)
		if (line[i] == '>')
			gt = line + i;
	if (!gt)
		return 0;
	pos = (size_t)(gt - line) + 1;
	while (pos < len && line[pos] == ' ')
		pos++;
	if (pos == len || line[pos] < '0' || line[pos] > '9')
		return 0;
	for (; pos < len && line[pos] >= '0' && line[pos] <= '9'; pos++) {
		if (date > (UINT64_MAX - 9) / 10)
			return 0;
		date = date * 10 + (uint64_t)(line[pos] - '0');
	}
	return date;
}

int commit_parse(const unsigned char *buf, size_t len, int algo,
		 struct commit_info *out, struct gp_error *err)
{
	size_t pos = 0;
	int ret = 0, got;

	commit_info_release(out);
	if (oid_line(buf, len, &pos, "tree", algo, &out->tree) != 1) {
		ret = CORRUPT(err, "bad tree line at offset 0");
		goto out;
	}
	for (;;) {
		struct object_id parent;
		size_t at = pos;
		got = oid_line(buf, len, &pos, "parent", algo, &parent);
		if (!got)
			break;
		if (got < 0) {
			ret = CORRUPT(err, "bad parent line at offset %zu", at);
			goto out;
		}
		ALLOC_GROW(out->parents, out->nr_parents + 1, out->alloc_parents);
		out->parents[out->nr_parents++] = parent;
	}
	/* the committer date, from the headers only */
	while (pos < len && buf[pos] != '\n') {
		const unsigned char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		if (line_len > 10 && !memcmp(buf + pos, "committer ", 10)) {
			out->date = parse_date(buf + pos + 10, line_len - 10);
			break;
		}
		pos += line_len + (nl ? 1 : 0);
	}
out:
	if (ret)
		commit_info_release(out);
	return ret;
}

void commit_info_release(struct commit_info *ci)
{
	int algo = ci->tree.algo;
	free(ci->parents);
	memset(ci, 0, sizeof(*ci));
	ci->tree.algo = algo;
}

int tag_parse(const unsigned char *buf, size_t len, int algo,
	      struct tag_info *out, struct gp_error *err)
{
	const unsigned char *nl;
	size_t pos = 0, type_len;

	memset(out, 0, sizeof(*out));
	out->type = OBJ_BAD;
	if (oid_line(buf, len, &pos, "object", algo, &out->object) != 1)
		return CORRUPT(err, "bad object line at offset 0");
	if (len - pos < 5 || memcmp(buf + pos, "type ", 5) ||
	    !(nl = memchr(buf + pos + 5, '\n', len - pos - 5)))
		return CORRUPT(err, "bad type line at offset %zu", pos);
	type_len = (size_t)(nl - (buf + pos + 5));
	out->type = type_from_name((const char *)buf + pos + 5, type_len);
	if (out->type == OBJ_BAD)
		return CORRUPT(err, "unknown type '%.*s' at offset %zu",
			       (int)MIN(type_len, 32), (const char *)buf + pos + 5, pos + 5);
	pos += 5 + type_len + 1;
	if (len - pos >= 4 && !memcmp(buf + pos, "tag ", 4) &&
	    (nl = memchr(buf + pos + 4, '\n', len - pos - 4))) {
		out->name = (const char *)buf + pos + 4;
		out->name_len = (size_t)(nl - (buf + pos + 4));
	}
	return 0;
}
