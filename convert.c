/*
 * convert.c: checkout conversions (see convert.h and gitattributes(5),
 * "Effects").
 */
#include "convert.h"
#include "attr.h"
#include "config.h"
#include "error.h"
#include "repository.h"
#include "run-command.h"
#include "strbuf.h"

enum text_mode {
	TEXT_UNDECIDED, /* nothing said: core.autocrlf decides */
	TEXT_BINARY,
	TEXT_ON,
	TEXT_AUTO,
};

enum attr_index { A_TEXT, A_EOL, A_CRLF, A_IDENT, A_FILTER, A_ENCODING, A_NR };
static const char *const attr_names[A_NR] = {
	"text", "eol", "crlf", "ident", "filter", "working-tree-encoding",
};

/*
 * Whether the content looks like text, as git judges it: no NUL, no CR
 * that does not start a CRLF, and few control characters.
 */
static bool looks_binary(const unsigned char *buf, size_t len)
{
	size_t printable = 0, nonprintable = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = buf[i];
		if (!c || (c == '\r' && (i + 1 >= len || buf[i + 1] != '\n')))
			return true;
		if (c == '\r' || c == '\n')
			continue;
		if (c == 127 || (c < 32 && c != '\b' && c != '\t' && c != 033 && c != '\f'))
			nonprintable++;
		else
			printable++;
	}
	return (printable >> 7) < nonprintable;
}

static bool has_cr(const unsigned char *buf, size_t len)
{
	return memchr(buf, '\r', len) != NULL;
}

/* LF not preceded by CR becomes CRLF. */
static void lf_to_crlf(unsigned char **data, size_t *size)
{
	struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < *size; i++) {
		if ((*data)[i] == '\n' && (!i || (*data)[i - 1] != '\r'))
			strbuf_addch(&out, '\r');
		strbuf_addch(&out, (*data)[i]);
	}
	free(*data);
	*data = (unsigned char *)strbuf_detach(&out, size);
}

/* "$Id$" (or a "$Id: ... $" left expanded) becomes "$Id: <hex> $". */
static void expand_ident(const struct object_id *oid, unsigned char **data, size_t *size)
{
	struct strbuf out = STRBUF_INIT;
	char hex[GP_MAX_HEXSZ + 1];
	const char *p = (const char *)*data, *end = p + *size;
	bool changed = false;
	oid_to_hex_r(hex, oid);
	while (p < end) {
		const char *dollar = memchr(p, '$', (size_t)(end - p)), *close;
		if (!dollar || end - dollar < 4) {
			strbuf_add(&out, p, (size_t)(end - p));
			break;
		}
		strbuf_add(&out, p, (size_t)(dollar - p));
		p = dollar;
		if (memcmp(p, "$Id", 3) || (p[3] != '$' && p[3] != ':')) {
			strbuf_addch(&out, '$');
			p++;
			continue;
		}
		close = p[3] == '$' ? p + 3 : NULL;
		for (const char *q = p + 4; !close && q < end && *q != '\n'; q++)
			if (*q == '$')
				close = q;
		if (!close) {
			strbuf_addch(&out, '$');
			p++;
			continue;
		}
		strbuf_addf(&out, "$Id: %s $", hex);
		p = close + 1;
		changed = true;
	}
	if (changed) {
		free(*data);
		*data = (unsigned char *)strbuf_detach(&out, size);
	} else {
		strbuf_release(&out);
	}
}

/* Whether checkout writes CRLF for a text file with no eol attribute. */
static bool crlf_by_config(struct repository *repo, bool *input_only)
{
	const char *v = NULL;
	bool autocrlf = false;
	struct gp_error err = GP_ERROR_INIT;
	*input_only = false;
	if (!config_get_value(&repo->config, "core.autocrlf", &v) && v &&
	    !strcasecmp(v, "input")) {
		*input_only = true;
		return false;
	}
	if (!config_get_bool(&repo->config, "core.autocrlf", &autocrlf, &err) && autocrlf)
		return true;
	gp_error_clear(&err);
	return !config_get_value(&repo->config, "core.eol", &v) && v && !strcasecmp(v, "crlf");
}

static int smudge(struct repository *repo, const char *path, const char *driver,
		  unsigned char **data, size_t *size, char **warning, struct gp_error *err)
{
	struct strbuf key = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	const char *value = NULL, *smudge_cmd = NULL;
	bool required = false;
	int ret = 0;

	strbuf_addf(&key, "filter.%s.process", driver);
	if (!config_get_value(&repo->config, key.buf, &value) && value) {
		ret = gp_error_set(err, GP_EINVAL,
				   "filter.%s.process: long-running filters are not supported", driver);
		goto out;
	}
	strbuf_reset(&key);
	strbuf_addf(&key, "filter.%s.smudge", driver);
	if (config_get_value(&repo->config, key.buf, &smudge_cmd) || !smudge_cmd)
		goto out;
	strbuf_reset(&key);
	strbuf_addf(&key, "filter.%s.required", driver);
	if (config_get_bool(&repo->config, key.buf, &required, err) == GP_EINVAL) {
		ret = GP_EINVAL;
		goto out;
	}
	gp_error_clear(err);
	/* "%f" is the path, quoted for the shell; "%%" a '%' */
	for (const char *p = smudge_cmd; *p; p++) {
		if (p[0] == '%' && p[1] == 'f') {
			strbuf_addch(&cmd, '\'');
			for (const char *q = path; *q; q++)
				if (*q == '\'')
					strbuf_addstr(&cmd, "'\\''");
				else
					strbuf_addch(&cmd, *q);
			strbuf_addch(&cmd, '\'');
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			strbuf_addch(&cmd, '%');
			p++;
		} else {
			strbuf_addch(&cmd, *p);
		}
	}
	ret = run_shell_capture(repo->worktree ? repo->worktree : repo->gitdir, cmd.buf, NULL,
				*data, *size, &out, err);
	if (ret && !required) {
		*warning = xstrfmt("external filter '%s' failed", smudge_cmd);
		gp_error_clear(err);
		ret = 0;
	} else if (!ret) {
		free(*data);
		*data = (unsigned char *)strbuf_detach(&out, size);
	}
out:
	strbuf_release(&key);
	strbuf_release(&cmd);
	strbuf_release(&out);
	return ret;
}

int convert_to_worktree(struct repository *repo, const char *path,
			const struct object_id *oid, unsigned char **data,
			size_t *size, char **warning, struct gp_error *err)
{
	struct attr_result a[A_NR];
	enum text_mode text = TEXT_UNDECIDED;
	bool crlf = false, input_only = false;
	int ret;

	*warning = NULL;
	ret = attr_get(repo, path, attr_names, A_NR, a, err);
	if (ret)
		return ret;
	if (a[A_ENCODING].state == ATTR_VALUE) {
		ret = gp_error_set(err, GP_EINVAL, "%s: working-tree-encoding is not supported",
				   path);
		goto out;
	}
	if (a[A_IDENT].state == ATTR_SET)
		expand_ident(oid, data, size);

	/* the legacy "crlf" attribute, then "text", which wins */
	if (a[A_CRLF].state == ATTR_SET)
		text = TEXT_ON;
	else if (a[A_CRLF].state == ATTR_UNSET)
		text = TEXT_BINARY;
	else if (a[A_CRLF].state == ATTR_VALUE && !strcmp(a[A_CRLF].value, "input"))
		text = TEXT_ON, input_only = true;
	if (a[A_TEXT].state == ATTR_SET)
		text = TEXT_ON;
	else if (a[A_TEXT].state == ATTR_UNSET)
		text = TEXT_BINARY;
	else if (a[A_TEXT].state == ATTR_VALUE && !strcmp(a[A_TEXT].value, "auto"))
		text = TEXT_AUTO;

	if (a[A_EOL].state == ATTR_VALUE && text != TEXT_BINARY) {
		crlf = !strcmp(a[A_EOL].value, "crlf");
		input_only = false;
		if (text == TEXT_UNDECIDED)
			text = TEXT_ON; /* "eol" alone makes a path text */
	} else if (text != TEXT_BINARY) {
		bool cfg_input;
		crlf = crlf_by_config(repo, &cfg_input) && !input_only;
		if (text == TEXT_UNDECIDED) {
			/* core.autocrlf=true or input: text=auto for every path */
			const char *v = NULL;
			bool autocrlf = false;
			struct gp_error sub = GP_ERROR_INIT;
			if (cfg_input ||
			    (!config_get_bool(&repo->config, "core.autocrlf", &autocrlf, &sub) &&
			     autocrlf))
				text = TEXT_AUTO;
			gp_error_clear(&sub);
			(void)v;
			if (cfg_input)
				crlf = false;
		}
	}
	if (crlf && (text == TEXT_ON ||
		     (text == TEXT_AUTO && !has_cr(*data, *size) && !looks_binary(*data, *size))))
		lf_to_crlf(data, size);

	if (a[A_FILTER].state == ATTR_VALUE)
		ret = smudge(repo, path, a[A_FILTER].value, data, size, warning, err);
out:
	attr_results_release(a, A_NR);
	return ret;
}
