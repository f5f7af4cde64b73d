/*
 * fuzz-mailmap.c: mailmap texts through mailmap_add_buf(), mailmap_map()
 * and mailmap_rewrite().
 *
 * Input: a mailmap text (seeds: t/fuzz/corpus/mailmap/, written by hand
 * to gitmailmap(5)'s forms, with comments, odd spacing and unclosed
 * brackets). The identities of a few fixed commit and tag headers, and
 * of the text's own lines taken as identities, are mapped.
 *
 * Checks beyond "no crash": a rewrite changes only the header (the
 * message after the first empty line is kept byte for byte) and keeps
 * the number of lines; mapping the same identity twice gives the same
 * answer.
 */
#include "fuzz.h"
#include "mailmap.h"
#include "strbuf.h"

static const char commit_text[] =
	"tree 0000000000000000000000000000000000000000\n"
	"author A U Thor <author@example.com> 1112911993 -0700\n"
	"committer C O Mitter <COMMITTER@example.com> 1112911993 -0700\n"
	"\n"
	"author Not A Header <author@example.com> 0 +0000\n";
static const char tag_text[] =
	"object 0000000000000000000000000000000000000000\n"
	"type commit\n"
	"tag v1\n"
	"tagger T Agger <tagger@example.com> 1112911993 -0700\n"
	"\n"
	"message\n";

static size_t count_lines(const char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

static void check_rewrite(const struct mailmap *mm, enum object_type type,
			  const char *text)
{
	struct strbuf out = STRBUF_INIT;
	size_t len = strlen(text);
	const char *body = strstr(text, "\n\n");
	if (mailmap_rewrite(mm, type, (const unsigned char *)text, len, &out)) {
		const char *out_body = strstr(out.buf, "\n\n");
		if (!out_body || strcmp(out_body, body))
			fuzz_fail("a rewrite changed the message");
		if (count_lines(out.buf, out.len) != count_lines(text, len))
			fuzz_fail("a rewrite changed the number of lines");
	}
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mailmap *mm = mailmap_new();
	char *copy = xmalloc(size ? size : 1);
	const char *p, *end;

	memcpy(copy, data, size);
	mailmap_add_buf(mm, copy, size);
	check_rewrite(mm, OBJ_COMMIT, commit_text);
	check_rewrite(mm, OBJ_TAG, tag_text);
	/* each "<...>" of the input, with what precedes it, as an identity */
	for (p = copy, end = copy + size; p < end;) {
		const char *lt = memchr(p, '<', (size_t)(end - p)), *gt;
		const char *n1, *e1, *n2, *e2;
		if (!lt || !(gt = memchr(lt, '>', (size_t)(end - lt))))
			break;
		bool a = mailmap_map(mm, p, (size_t)(lt - p), lt + 1, (size_t)(gt - lt - 1), &n1, &e1);
		bool b = mailmap_map(mm, p, (size_t)(lt - p), lt + 1, (size_t)(gt - lt - 1), &n2, &e2);
		if (a != b || n1 != n2 || e1 != e2)
			fuzz_fail("two lookups of one identity differ");
		p = gt + 1;
	}
	mailmap_free(mm);
	free(copy);
	return 0;
}
