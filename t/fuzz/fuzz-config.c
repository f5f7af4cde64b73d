/*
 * fuzz-config.c: the config parser, config_set_add_buf(), and the
 * lookups over what it read.
 *
 * Input: a config text (seeds: t/fuzz/corpus/config/, written by git
 * init and git config -f, and by hand to git-config(1)'s syntax).
 *
 * Checks beyond "no crash": a failed parse appends nothing (config.h:
 * "on error nothing is appended"), even to a set that already holds
 * entries; every key read is canonical (section and name lower-case)
 * and is found again by config_get_value(), at its last occurrence or
 * later ("last one wins"); the typed getters either parse or fail with
 * a message. The first line is also given to config_set_add() as
 * "key=value", which fuzzes the -c key canonicalisation.
 *
 * The same text also goes to config_parse_blob(), git's way of reading
 * a .gitmodules blob, which must agree with the set where the two
 * readers mean to (no NUL, byte order mark or include).
 *
 * Includes: "~/" paths resolve against a private HOME made on first use
 * (removed at exit), holding a plain file, two files including each
 * other to reach the depth limit, one of conditional includes (with
 * "./" patterns, which need a file) and one that sets a remote URL (an
 * error under includeIf.hasconfig). Absolute include paths read
 * whatever the fuzzer names, read-only; run the fuzzer with stdin from
 * /dev/null so that "/dev/stdin" cannot block (t/fuzz/run.sh does).
 *
 * Conditional includes: the text is read again as a repository's
 * config (config_read_opts.repo: a made-up git directory, work tree and
 * branch), where includeIf conditions can hold, and once more without
 * includes. Checks: the same contract (nothing appended on error); a
 * text without "include" reads the same either way; the branch is
 * asked at most once; and a read without includes succeeds whenever
 * the read with them does, with no more entries.
 */
#include "fuzz.h"
#include "config.h"
#include "strbuf.h"
#include <sys/stat.h>

static char fuzz_home[64];

static void write_file(const char *name, const char *text)
{
	char *path = xstrfmt("%s/%s", fuzz_home, name);
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		fuzz_fail("cannot write %s", path);
	free(path);
}

static void remove_home(void)
{
	static const char *const names[] = { "plain", "loop-a", "loop-b", ".gitconfig",
					      "cond", "url" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *path = xstrfmt("%s/%s", fuzz_home, names[i]);
		unlink(path);
		free(path);
	}
	rmdir(fuzz_home);
}

static void setup_home(void)
{
	const char *tmp = getenv("TMPDIR");
	if (fuzz_home[0])
		return;
	if (!tmp || strlen(tmp) > 30)
		tmp = "/tmp";
	snprintf(fuzz_home, sizeof(fuzz_home), "%s/gp-fuzz-config.XXXXXX", tmp);
	if (!mkdtemp(fuzz_home))
		fuzz_fail("mkdtemp %s failed", fuzz_home);
	atexit(remove_home);
	write_file("plain", "[included]\n\tkey = from plain\n[core]\n\tbare\n");
	write_file("loop-a", "[a]\n\tx = 1\n[include]\n\tpath = ~/loop-b\n");
	write_file("loop-b", "[b]\n\ty = 2\n[include]\n\tpath = ~/loop-a\n");
	write_file(".gitconfig", "[user]\n\tname = fuzz\n");
	write_file("cond", "[includeIf \"gitdir:./\"]\n\tpath = plain\n"
			   "[includeIf \"gitdir/i:./REPO/\"]\n\tpath = plain\n"
			   "[includeIf \"worktree:./\"]\n\tpath = plain\n"
			   "[includeIf \"onbranch:fuzz/\"]\n\tpath = plain\n"
			   "[includeIf \"hasconfig:remote.*.url:https://**\"]\n\tpath = plain\n");
	write_file("url", "[remote \"fuzz\"]\n\turl = https://example.com/fuzz\n");
	setenv("HOME", fuzz_home, 1);
}

/*
 * Section (before the first dot) and name (after the last) lower-case.
 * A key before any [section] has no dot: git reads "url = x" at the top
 * of a file as the key "url", and so do we.
 */
static void check_canonical(const char *key)
{
	const char *first = strchr(key, '.'), *last = strrchr(key, '.');
	const char *section_end = first ? first : key;
	const char *name = last ? last + 1 : key;

	for (const char *p = key; p < section_end; p++)
		if (*p >= 'A' && *p <= 'Z')
			fuzz_fail("section of '%s' is not lower-case", key);
	for (const char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			fuzz_fail("name of '%s' is not lower-case", key);
}

static void check_lookups(const struct config_set *cs)
{
	struct gp_error err = GP_ERROR_INIT;

	for (size_t i = 0; i < cs->nr; i++) {
		const struct config_entry *e = &cs->items[i];
		const char *value = NULL;
		size_t last = i, k;
		bool b;
		int n, ret;
		unsigned long ul;

		if (!e->key)
			fuzz_fail("entry %zu has no key", i);
		check_canonical(e->key);
		for (size_t j = i + 1; j < cs->nr; j++)
			if (!strcmp(cs->items[j].key, e->key))
				last = j;
		ret = config_get_value(cs, e->key, &value);
		if (ret)
			fuzz_fail("config_get_value('%s') returned %d", e->key, ret);
		for (k = last; k < cs->nr; k++)
			if (cs->items[k].value == value)
				break;
		if (k == cs->nr)
			fuzz_fail("config_get_value('%s') did not return its last value",
				  e->key);

		ret = config_get_bool(cs, e->key, &b, &err);
		if (ret)
			fuzz_check_error(ret, &err, GP_EINVAL, "config_get_bool");
		ret = config_get_int(cs, e->key, &n, &err);
		if (ret)
			fuzz_check_error(ret, &err, GP_EINVAL, "config_get_int");
		ret = config_get_ulong(cs, e->key, &ul, &err);
		if (ret)
			fuzz_check_error(ret, &err, GP_EINVAL, "config_get_ulong");
		if (e->value) {
			int64_t v;
			(void)config_parse_bool(e->value, &b);
			(void)config_parse_int64(e->value, &v);
		}
	}
}

/* The first line as "key=value" (no '=': a bare key) for config_set_add(). */
static void fuzz_add(const uint8_t *data, size_t size)
{
	struct config_set cs = CONFIG_SET_INIT;
	struct gp_error err = GP_ERROR_INIT;
	const uint8_t *nl = memchr(data, '\n', size);
	char *line = xstrndup((const char *)data, nl ? (size_t)(nl - data) : size);
	char *eq = strchr(line, '=');
	int ret;

	if (eq)
		*eq++ = '\0';
	ret = config_set_add(&cs, line, eq, CONFIG_SCOPE_COMMAND, &err);
	if (ret) {
		fuzz_check_error(ret, &err, 0, "config_set_add");
		if (cs.nr)
			fuzz_fail("config_set_add failed but appended %zu entries", cs.nr);
	} else {
		if (!cs.nr)
			fuzz_fail("config_set_add succeeded but appended nothing");
		check_lookups(&cs);
	}
	config_set_release(&cs);
	free(line);
}

static int count_entry(const char *key, const char *value, void *data)
{
	if (!*key)
		fuzz_fail("blob entry with an empty key");
	(*(size_t *)data)++;
	return 0;
}

/*
 * The blob reader: never a crash, and on a text without NUL bytes, a
 * byte order mark or includes, the same verdict and entries as the set.
 */
static void check_blob(const char *copy, size_t size, int set_ret, size_t set_nr)
{
	struct gp_error err = GP_ERROR_INIT;
	size_t nr = 0;
	int ret = config_parse_blob("fuzz", copy, size, count_entry, &nr, &err);

	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "config_parse_blob");
	if (memchr(copy, '\0', size) || (size >= 3 && !memcmp(copy, "\xef\xbb\xbf", 3)))
		return;
	for (size_t pos = 0; pos + 7 <= size; pos++)
		if (!strncasecmp(copy + pos, "include", 7))
			return;
	if (!ret != !set_ret)
		fuzz_fail("blob parse returned %d, set parse %d", ret, set_ret);
	if (!ret && nr != set_nr)
		fuzz_fail("blob parse gave %zu entries, set parse %zu", nr, set_nr);
}

static int branch_asks;

static char *fuzz_branch(void *data)
{
	branch_asks++;
	return xstrdup("fuzz/main");
}

static bool mentions(const char *text, size_t size, const char *word)
{
	size_t len = strlen(word);

	for (size_t pos = 0; pos + len <= size; pos++)
		if (!strncasecmp(text + pos, word, len))
			return true;
	return false;
}

/*
 * The text as a repository's config (conditions can hold), and without
 * includes; set_ret and set_nr are what the plain read gave.
 */
static void check_repo_reads(const char *copy, size_t size, int set_ret,
			     size_t set_nr)
{
	struct config_set cs = CONFIG_SET_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char *gitdir = xstrfmt("%s/repo/.git", fuzz_home);
	char *worktree = xstrfmt("%s/repo", fuzz_home);
	struct config_repo_info info = {
		.gitdir = gitdir, .gitdir_spelled = "/fuzz/link/repo/.git",
		.worktree = worktree, .current_branch = fuzz_branch,
	};
	struct config_read_opts opts = { .repo = &info };
	struct config_read_opts plain = { .no_includes = true };
	int ret;

	branch_asks = 0;
	ret = config_set_add_buf(&cs, "fuzz", copy, size, CONFIG_SCOPE_LOCAL, &opts, &err);
	if (branch_asks > 1)
		fuzz_fail("the branch was asked %d times in one read", branch_asks);
	if (ret) {
		fuzz_check_error(ret, &err, 0, "config_set_add_buf (repository)");
		if (cs.nr)
			fuzz_fail("config_set_add_buf (repository) failed but left %zu entries",
				  cs.nr);
	} else {
		check_lookups(&cs);
	}
	if (!mentions(copy, size, "include") && (!ret != !set_ret ||
						   (!ret && cs.nr != set_nr)))
		fuzz_fail("without includes, a repository read gave %d (%zu entries), a plain one %d (%zu)",
			  ret, cs.nr, set_ret, set_nr);
	config_set_release(&cs);

	ret = config_set_add_buf(&cs, "fuzz", copy, size, CONFIG_SCOPE_LOCAL, &plain, &err);
	if (ret)
		fuzz_check_error(ret, &err, GP_ECORRUPT, "config_set_add_buf (no includes)");
	if (!set_ret && (ret || cs.nr > set_nr))
		fuzz_fail("without includes: %d and %zu entries, with them: %zu entries",
			  ret, cs.nr, set_nr);
	if (!ret)
		check_lookups(&cs);
	config_set_release(&cs);
	free(worktree);
	free(gitdir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_set cs = CONFIG_SET_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char *copy;
	size_t nr_first;
	int ret;

	setup_home();
	/* An exact-size heap copy, not NUL-terminated, as the API allows. */
	copy = xmalloc(size ? size : 1);
	memcpy(copy, data, size);

	ret = config_set_add_buf(&cs, "fuzz", copy, size, CONFIG_SCOPE_LOCAL, NULL, &err);
	check_blob(copy, size, ret, cs.nr);
	check_repo_reads(copy, size, ret, cs.nr);
	if (ret) {
		fuzz_check_error(ret, &err, 0, "config_set_add_buf");
		if (cs.nr)
			fuzz_fail("config_set_add_buf failed but left %zu entries", cs.nr);
		/* Nor may it drop what an earlier source added. */
		if (config_set_add(&cs, "fuzz.before", "x", CONFIG_SCOPE_SYSTEM, &err))
			fuzz_fail("config_set_add(fuzz.before): %s", gp_error_msg(&err));
		ret = config_set_add_buf(&cs, "fuzz", copy, size, CONFIG_SCOPE_LOCAL, NULL, &err);
		if (!ret)
			fuzz_fail("config_set_add_buf failed, then succeeded");
		fuzz_check_error(ret, &err, 0, "config_set_add_buf");
		if (cs.nr != 1)
			fuzz_fail("a failed config_set_add_buf changed the set to %zu entries",
				  cs.nr);
	} else {
		if (err.msg)
			fuzz_fail("config_set_add_buf succeeded with a message: %s", err.msg);
		check_lookups(&cs);
		/* Parsing again appends the same entries again. */
		nr_first = cs.nr;
		ret = config_set_add_buf(&cs, "fuzz", copy, size, CONFIG_SCOPE_LOCAL, NULL, &err);
		if (ret)
			fuzz_fail("config_set_add_buf succeeded, then failed: %s",
				  gp_error_msg(&err));
		if (cs.nr != 2 * nr_first)
			fuzz_fail("second parse gave %zu entries, first %zu",
				  cs.nr - nr_first, nr_first);
	}
	config_set_release(&cs);
	fuzz_add(data, size);
	free(copy);
	return 0;
}
