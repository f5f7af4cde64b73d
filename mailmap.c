/*
 * mailmap.c: the mailmap (see mailmap.h and gitmailmap(5)).
 *
 * Entries are kept by the address they map, each with its mapping for
 * the address alone and those for (name, address) pairs. Lookups are
 * linear: a mailmap has hundreds of lines, not millions, and a command
 * maps a few identities per object it shows.
 */
#include "mailmap.h"
#include "config.h"
#include "error.h"
#include "object-name.h"
#include "odb.h"
#include "repository.h"
#include "strbuf.h"
#include <ctype.h>
#include <strings.h>

struct mailmap_names {
	char *old_name;      /* the recorded name this mapping is for */
	char *name, *email;  /* the replacements; NULL: keep */
};

struct mailmap_entry {
	char *old_email;
	char *name, *email;  /* for the address alone; NULL: keep */
	struct mailmap_names *by_name;
	size_t nr_by_name, alloc_by_name;
};

struct mailmap {
	struct mailmap_entry *entries;
	size_t nr, alloc;
};

struct mailmap *mailmap_new(void)
{
	return xcalloc(1, sizeof(struct mailmap));
}

void mailmap_free(struct mailmap *mm)
{
	if (!mm)
		return;
	for (size_t i = 0; i < mm->nr; i++) {
		struct mailmap_entry *e = &mm->entries[i];
		for (size_t j = 0; j < e->nr_by_name; j++) {
			free(e->by_name[j].old_name);
			free(e->by_name[j].name);
			free(e->by_name[j].email);
		}
		free(e->by_name);
		free(e->old_email);
		free(e->name);
		free(e->email);
	}
	free(mm->entries);
	free(mm);
}

bool mailmap_is_empty(const struct mailmap *mm)
{
	return !mm->nr;
}

static bool same_ci(const char *a, const char *b, size_t b_len)
{
	return strlen(a) == b_len && !strncasecmp(a, b, b_len);
}

static void replace(char **slot, const char *value)
{
	if (!value)
		return;
	free(*slot);
	*slot = xstrdup(value);
}

static void add_mapping(struct mailmap *mm, const char *new_name, const char *new_email,
			const char *old_name, const char *old_email)
{
	struct mailmap_entry *e = NULL;
	if (!old_email) {
		/* "Name <email>": the name for that address, which stays */
		old_email = new_email;
		new_email = NULL;
	}
	for (size_t i = 0; i < mm->nr && !e; i++)
		if (same_ci(mm->entries[i].old_email, old_email, strlen(old_email)))
			e = &mm->entries[i];
	if (!e) {
		ALLOC_GROW(mm->entries, mm->nr + 1, mm->alloc);
		e = &mm->entries[mm->nr++];
		memset(e, 0, sizeof(*e));
		e->old_email = xstrdup(old_email);
	}
	if (!old_name) {
		replace(&e->name, new_name);
		replace(&e->email, new_email);
	} else {
		struct mailmap_names *n = NULL;
		for (size_t i = 0; i < e->nr_by_name && !n; i++)
			if (same_ci(e->by_name[i].old_name, old_name, strlen(old_name)))
				n = &e->by_name[i];
		if (!n) {
			ALLOC_GROW(e->by_name, e->nr_by_name + 1, e->alloc_by_name);
			n = &e->by_name[e->nr_by_name++];
			memset(n, 0, sizeof(*n));
			n->old_name = xstrdup(old_name);
		}
		replace(&n->name, new_name);
		replace(&n->email, new_email);
	}
}

/*
 * "[name] <email>" at *p: the name (trimmed; NULL when empty) and the
 * address (NULL when there is no "<...>"), both malloc'd; *p moves past.
 */
static void parse_name_email(const char **p, const char *end, char **name, char **email)
{
	const char *lt = memchr(*p, '<', (size_t)(end - *p)), *gt, *s, *e;
	*name = *email = NULL;
	if (!lt)
		return;
	gt = memchr(lt, '>', (size_t)(end - lt));
	if (!gt)
		return;
	for (s = *p; s < lt && isspace((unsigned char)*s); s++)
		;
	for (e = lt; e > s && isspace((unsigned char)e[-1]); e--)
		;
	if (e > s)
		*name = xstrndup(s, (size_t)(e - s));
	*email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
	*p = gt + 1;
}

void mailmap_add_buf(struct mailmap *mm, const char *buf, size_t len)
{
	const char *end = buf + len;
	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf)), *p = buf;
		const char *line_end = nl ? nl : end;
		char *name1, *email1, *name2, *email2;
		buf = nl ? nl + 1 : end;
		if (p < line_end && *p == '#')
			continue;
		parse_name_email(&p, line_end, &name1, &email1);
		if (email1) {
			parse_name_email(&p, line_end, &name2, &email2);
			add_mapping(mm, name1, email1, name2, email2);
			free(name2);
			free(email2);
		}
		free(name1);
		free(email1);
	}
}

static int add_file(struct mailmap *mm, const char *path, struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 0) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return gp_error_errno(err, "unable to read mailmap file '%s'", path);
	}
	mailmap_add_buf(mm, sb.buf, sb.len);
	strbuf_release(&sb);
	return 0;
}

int mailmap_load(struct mailmap **out, struct repository *repo, struct odb *odb,
		 struct gp_error *err)
{
	struct mailmap *mm = mailmap_new();
	const char *blob = NULL, *file = NULL;
	int ret = 0;

	*out = mm;
	if (repo->worktree) {
		char *path = xstrfmt("%s/.mailmap", repo->worktree);
		ret = add_file(mm, path, err);
		free(path);
		if (ret)
			return ret;
	}
	if (config_get_value(&repo->config, "mailmap.blob", &blob) || !blob)
		blob = repo->bare || !repo->worktree ? "HEAD:.mailmap" : NULL;
	if (blob && *blob) {
		struct gp_error sub = GP_ERROR_INIT;
		struct object_id oid;
		enum object_type type;
		unsigned char *data;
		size_t size;
		/* a blob that is not there is an empty mailmap, as in git */
		if (!get_oid(repo, odb, blob, &oid, &sub) &&
		    !odb_read_object(odb, &oid, &type, &data, &size, &sub)) {
			if (type == OBJ_BLOB)
				mailmap_add_buf(mm, (const char *)data, size);
			free(data);
		}
		gp_error_clear(&sub);
	}
	if (!config_get_value(&repo->config, "mailmap.file", &file) && file) {
		const char *home = getenv("HOME");
		char *path = file[0] == '~' && file[1] == '/' && home ?
			     xstrfmt("%s%s", home, file + 1) : xstrdup(file);
		ret = add_file(mm, path, err);
		free(path);
	}
	return ret;
}

bool mailmap_map(const struct mailmap *mm, const char *name, size_t name_len,
		 const char *email, size_t email_len,
		 const char **new_name, const char **new_email)
{
	const struct mailmap_entry *e = NULL;
	*new_name = *new_email = NULL;
	for (size_t i = mm->nr; i-- > 0 && !e;)
		if (same_ci(mm->entries[i].old_email, email, email_len))
			e = &mm->entries[i];
	if (!e)
		return false;
	for (size_t i = 0; i < e->nr_by_name; i++)
		if (same_ci(e->by_name[i].old_name, name, name_len)) {
			*new_name = e->by_name[i].name;
			*new_email = e->by_name[i].email;
			return *new_name || *new_email;
		}
	*new_name = e->name;
	*new_email = e->email;
	return *new_name || *new_email;
}

/*
 * Map the identity of one header line "<field> <name> <<email>> <rest>"
 * (line without its newline) into out; false when it does not change.
 */
static bool map_ident_line(const struct mailmap *mm, const char *line, size_t len,
			   size_t field_len, struct strbuf *out)
{
	const char *name = line + field_len + 1, *lt, *gt, *name_end;
	const char *new_name, *new_email;
	lt = memchr(name, '<', len - field_len - 1);
	if (!lt)
		return false;
	gt = memchr(lt, '>', (size_t)(line + len - lt));
	if (!gt)
		return false;
	for (name_end = lt; name_end > name && name_end[-1] == ' '; name_end--)
		;
	if (!mailmap_map(mm, name, (size_t)(name_end - name), lt + 1, (size_t)(gt - lt - 1),
			 &new_name, &new_email))
		return false;
	strbuf_add(out, line, field_len + 1);
	if (new_name)
		strbuf_addstr(out, new_name);
	else
		strbuf_add(out, name, (size_t)(name_end - name));
	strbuf_addstr(out, " <");
	if (new_email)
		strbuf_addstr(out, new_email);
	else
		strbuf_add(out, lt + 1, (size_t)(gt - lt - 1));
	strbuf_add(out, gt, (size_t)(line + len - gt));
	return true;
}

bool mailmap_rewrite(const struct mailmap *mm, enum object_type type,
		     const unsigned char *buf, size_t len, struct strbuf *out)
{
	static const char *const commit_fields[] = { "author", "committer", NULL };
	static const char *const tag_fields[] = { "tagger", NULL };
	const char *const *fields = type == OBJ_COMMIT ? commit_fields :
				    type == OBJ_TAG ? tag_fields : NULL;
	const char *p = (const char *)buf, *end = p + len;
	struct strbuf tmp = STRBUF_INIT;
	bool changed = false;

	if (!fields || !mm->nr)
		return false;
	/* the header ends at the first empty line */
	while (p < end && *p != '\n') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line_len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		bool mapped = false;
		for (size_t f = 0; fields[f] && !mapped; f++) {
			size_t flen = strlen(fields[f]);
			if (line_len > flen && !memcmp(p, fields[f], flen) && p[flen] == ' ')
				mapped = map_ident_line(mm, p, line_len, flen, &tmp);
		}
		if (mapped)
			changed = true;
		else
			strbuf_add(&tmp, p, line_len);
		if (nl)
			strbuf_addch(&tmp, '\n');
		p += line_len + (nl ? 1 : 0);
	}
	if (changed) {
		strbuf_add(&tmp, p, (size_t)(end - p));
		strbuf_reset(out);
		strbuf_addbuf(out, &tmp);
	}
	strbuf_release(&tmp);
	return changed;
}
