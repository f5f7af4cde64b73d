/*
 * fuzz-path-patterns.c: pattern texts through path_patterns_parse(),
 * and paths through path_patterns_match() and glob_match().
 *
 * Input: a flag byte (bit 0: PATH_PATTERNS_ICASE, bit 1: ask about the
 * path as a directory), a path up to the first NUL byte, then a
 * pattern text (seeds: t/fuzz/corpus/path-patterns/, written by hand to
 * gitignore(5) and git-sparse-checkout(1): negation, anchoring,
 * directory patterns, sets and classes, "**" in every place, and the
 * pattern-file oddities: BOM, CR, comments, escaped trailing spaces).
 *
 * Checks beyond "no crash" (and no time out: the matcher has no
 * backtracking, so a long pattern against a long path stays linear in
 * each):
 *  - the answer is one of the three, and the same when asked twice;
 *  - a text of at most the size limit parses, into no more patterns
 *    than it has lines;
 *  - every line of the text that is a bare pattern (no '!', '#', no
 *    trailing '/', space or CR) gives, as a list of its own, exactly
 *    what glob_match() says of it: against the last component when it
 *    has no '/', else against the whole path with GLOB_PATHNAME and
 *    its leading '/' dropped.
 */
#include "fuzz.h"
#include "path-patterns.h"

static bool is_bare(const char *line, size_t len)
{
	return len && line[0] != '!' && line[0] != '#' && line[len - 1] != '/' &&
		line[len - 1] != ' ' && line[len - 1] != '\r' && !memchr(line, '\0', len) &&
		!(len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3));
}

static void check_one_line(const char *line, size_t len, unsigned flags, const char *path,
			   size_t path_len, size_t base, bool is_dir)
{
	struct path_patterns *pl;
	struct gp_error err = GP_ERROR_INIT;
	unsigned glob_flags = flags & PATH_PATTERNS_ICASE ? GLOB_ICASE : 0;
	enum path_match got;
	bool want;

	if (path_patterns_parse(&pl, line, len, flags, &err))
		fuzz_fail("one line of %zu bytes does not parse: %s", len, gp_error_msg(&err));
	if (path_patterns_nr(pl) != 1)
		fuzz_fail("one bare line gave %zu patterns", path_patterns_nr(pl));
	got = path_patterns_match(pl, path, path_len, base, is_dir);
	if (!memchr(line, '/', len))
		want = glob_match(line, len, path + base, path_len - base, glob_flags);
	else if (line[0] == '/')
		want = path_len && glob_match(line + 1, len - 1, path, path_len,
					      glob_flags | GLOB_PATHNAME);
	else
		want = path_len && glob_match(line, len, path, path_len,
					      glob_flags | GLOB_PATHNAME);
	if (got != (want ? PATH_MATCHED : PATH_UNDECIDED))
		fuzz_fail("the list of '%.*s' answers %d, glob_match() %d", (int)len, line,
			  (int)got, (int)want);
	path_patterns_free(pl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct path_patterns *pl;
	struct gp_error err = GP_ERROR_INIT;
	const char *nul, *text, *slash;
	size_t path_len, text_len, base, lines = 1;
	unsigned flags;
	bool is_dir;
	enum path_match a, b;

	if (!size)
		return 0;
	flags = data[0] & 1 ? PATH_PATTERNS_ICASE : 0;
	is_dir = data[0] & 2;
	data++, size--;
	nul = memchr(data, '\0', size);
	path_len = nul ? (size_t)(nul - (const char *)data) : size;
	text = nul ? nul + 1 : "";
	text_len = nul ? size - path_len - 1 : 0;
	/* a path as the walk gives it: no leading or trailing '/' */
	while (path_len && data[path_len - 1] == '/')
		path_len--;
	slash = memrchr(data, '/', path_len);
	base = slash ? (size_t)(slash - (const char *)data) + 1 : 0;

	if (path_patterns_parse(&pl, text, text_len, flags, &err))
		fuzz_fail("a text of %zu bytes does not parse: %s", text_len, gp_error_msg(&err));
	for (size_t i = 0; i < text_len; i++)
		lines += text[i] == '\n';
	if (path_patterns_nr(pl) > lines)
		fuzz_fail("%zu patterns from %zu lines", path_patterns_nr(pl), lines);
	a = path_patterns_match(pl, (const char *)data, path_len, base, is_dir);
	b = path_patterns_match(pl, (const char *)data, path_len, base, is_dir);
	if (a != b || a < PATH_UNDECIDED || a > PATH_MATCHED)
		fuzz_fail("answers %d then %d", (int)a, (int)b);
	path_patterns_free(pl);

	for (size_t pos = 0; pos < text_len;) {
		const char *line = text + pos, *nl = memchr(line, '\n', text_len - pos);
		size_t len = nl ? (size_t)(nl - line) : text_len - pos;
		if (is_bare(line, len))
			check_one_line(line, len, flags, (const char *)data, path_len, base, is_dir);
		pos += len + 1;
	}
	return 0;
}
