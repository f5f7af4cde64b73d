/*
 * builtin/cat-file.c: gitpack cat-file, git's options and output.
 *
 *   cat-file <type> <object>
 *   cat-file (-e | -p | -t | -s) <object>
 *   cat-file (--batch | --batch-check | --batch-command)[=<format>]
 *            [--batch-all-objects] [--buffer] [--follow-symlinks]
 *            [--unordered] [--filter=<spec>] [-z | -Z]
 *
 * Objects are named as gitrevisions(7) says, through object-name.h. A
 * name that names nothing is "Not a valid object name" on the command
 * line and "missing" in batch mode; an ambiguous abbreviation is
 * "ambiguous" there. Replace refs (replace-object.h) are honoured for
 * names, not for --batch-all-objects, as in git.
 *
 * Output, messages and exit codes are git's (2.55), learned from
 * git-cat-file(1), git's t1006 and running git: usage problems exit 129
 * with git's words, a damaged object is explained as git explains it.
 * In batch mode each answer is flushed as soon as it is written unless
 * --buffer is given; --batch-all-objects always buffers.
 * --batch-command with --buffer queues the info and contents commands
 * until "flush" (or the end of input).
 *
 * --filters shows a blob as checked out (convert.h); --textconv runs
 * the textconv driver its "diff" attribute (attr.h) names on that.
 * The remote-object-info command asks a remote (remote-object-info.h,
 * git:// and file:// only).
 */
#include "../attr.h"
#include "../builtin.h"
#include "../convert.h"
#include "../config.h"
#include "../error.h"
#include "../loose.h"
#include "../mailmap.h"
#include "../object-filter.h"
#include "../object-name.h"
#include "../object.h"
#include "../odb.h"
#include "../oid-array.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../remote-object-info.h"
#include "../replace-object.h"
#include "../run-command.h"
#include "../repository.h"
#include "../strbuf.h"
#include "../tree.h"
#include <ctype.h>

static const char *const cat_file_usage[] = {
	"git cat-file <type> <object>",
	"git cat-file (-e | -p | -t | -s) <object>",
	"git cat-file (--textconv | --filters)\n"
	"                [<rev>:<path|tree-ish> | --path=<path|tree-ish> <rev>]",
	"git cat-file (--batch | --batch-check | --batch-command) [--batch-all-objects]\n"
	"                [--buffer] [--follow-symlinks] [--unordered]\n"
	"                [--textconv | --filters] [-Z]",
	NULL,
};

/* Output buffer for stdout; batch output is written in big blocks. */
#define STDOUT_BUFFER_SIZE (1 << 20)

enum batch_mode {
	BATCH_NONE = 0,
	BATCH_CHECK,    /* --batch-check: the formatted line only */
	BATCH_CONTENTS, /* --batch: the line, the content, a terminator */
	BATCH_COMMAND,  /* --batch-command: info or contents, per command */
};

/* One piece of a compiled --batch format. */
enum format_atom {
	ATOM_LITERAL,
	ATOM_OBJECTNAME,
	ATOM_OBJECTTYPE,
	ATOM_OBJECTSIZE,
	ATOM_OBJECTSIZE_DISK,
	ATOM_DELTABASE,
	ATOM_REST,
	ATOM_OBJECTMODE,
};

struct format_item {
	enum format_atom atom;
	const char *lit; /* ATOM_LITERAL: borrowed from the format string */
	size_t lit_len;
};

struct batch_format {
	struct format_item *items;
	size_t nr, alloc;
	bool need_type, need_size, need_disk, need_delta, need_rest;
};

struct cat_file_opts {
	int cmdmode;              /* 'e' 'p' 't' 's', 'c' (--textconv),
				     'w' (--filters), 'b' (--batch-all-objects) */
	const char *cmdmode_name; /* as given: "-e", "--textconv", ... */
	enum batch_mode batch;
	const char *format;       /* NULL: the default */
	int buffer;               /* -1 when neither --buffer nor --no-buffer */
	int follow_symlinks, unordered, use_mailmap, allow_unknown_type;
	int nul_input, nul_output; /* -z, -Z */
	const char *path;
	struct object_filter filter;
};

/* A --batch-command command waiting for "flush" (with --buffer). */
struct queued_cmd {
	enum batch_mode mode; /* BATCH_CHECK for info, BATCH_CONTENTS for contents,
				 BATCH_NONE for mailmap and remote-object-info */
	char *arg;            /* the object name, the remote-object-info arguments;
				 NULL for mailmap */
	bool mailmap;         /* mailmap: turn it on or off */
};

struct batch_state {
	struct repository *repo;
	struct odb *odb;
	int algo;
	enum batch_mode mode;
	bool flush_each;
	bool buffer;
	bool follow_symlinks;
	char in_delim, out_eol;
	const struct object_filter *filter; /* NULL: no filtering */
	struct replace_map *replace;
	bool use_mailmap;
	struct mailmap *mailmap; /* read on first use */
	int transform;           /* 'c' --textconv, 'w' --filters, or 0 */
	bool custom_format;      /* a format was given (remote-object-info has its own default) */
	struct batch_format fmt;
	struct strbuf line; /* the output line being built, reused */
	struct queued_cmd *queue;
	size_t nr_queue, alloc_queue;
};

GP_NORETURN static void usage_msg(const char *msg, const struct option *opts)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n\n", msg);
	usage_with_options(cat_file_usage, opts);
}

/* git's usage("..."): one line, no option list. */
GP_NORETURN GP_PRINTF(1, 2) static void usage_line(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("usage: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(129);
}

/*
 * -e -p -t -s --textconv --filters --batch-all-objects: one at most.
 * git reports a second one at once, without the usage text.
 */
static int cmdmode_cb(const struct option *opt, const char *arg, int unset)
{
	struct cat_file_opts *o = opt->value;
	int want = (int)opt->defval;
	char name[32];
	if (opt->long_name)
		snprintf(name, sizeof(name), "--%s", opt->long_name);
	else
		snprintf(name, sizeof(name), "-%c", opt->short_name);
	if (o->cmdmode && o->cmdmode != want) {
		error("options '%s' and '%s' cannot be used together", name, o->cmdmode_name);
		exit(129);
	}
	o->cmdmode = want;
	o->cmdmode_name = opt->long_name ? (want == 'c' ? "--textconv" :
					   want == 'w' ? "--filters" : "--batch-all-objects")
					 : (want == 'e' ? "-e" : want == 'p' ? "-p" :
					    want == 't' ? "-t" : "-s");
	return 0;
}

static int batch_cb(const struct option *opt, const char *arg, int unset)
{
	struct cat_file_opts *o = opt->value;
	if (o->batch) {
		error("only one batch option may be specified");
		exit(129);
	}
	o->batch = (enum batch_mode)opt->defval;
	o->format = arg;
	return 0;
}

static int buffer_cb(const struct option *opt, const char *arg, int unset)
{
	*(int *)opt->value = !unset;
	return 0;
}

static int filter_cb(const struct option *opt, const char *arg, int unset)
{
	struct object_filter *f = opt->value;
	struct gp_error err = GP_ERROR_INIT;
	if (unset || !arg) {
		object_filter_release(f);
		return 0;
	}
	if (object_filter_add(f, arg, &err))
		die_error(&err);
	return 0;
}

/*
 * The compiled format. Like git: "%(" starts an atom that must end in
 * ")", "%%" is a literal '%', and a '%' followed by anything else is a
 * literal '%' too. Errors die before any input is read, as git's do.
 */
static void compile_format(struct batch_format *f, const char *format)
{
	static const struct {
		const char *name;
		enum format_atom atom;
	} atoms[] = {
		{ "objectname", ATOM_OBJECTNAME },
		{ "objecttype", ATOM_OBJECTTYPE },
		{ "objectsize", ATOM_OBJECTSIZE },
		{ "objectsize:disk", ATOM_OBJECTSIZE_DISK },
		{ "deltabase", ATOM_DELTABASE },
		{ "rest", ATOM_REST },
		{ "objectmode", ATOM_OBJECTMODE },
	};
	const char *p = format;
	while (*p) {
		const char *pct = strchr(p, '%'), *name, *end;
		struct format_item item = { ATOM_LITERAL, NULL, 0 };
		size_t len, i;
		if (!pct)
			pct = p + strlen(p);
		if (pct > p) {
			ALLOC_GROW(f->items, f->nr + 1, f->alloc);
			f->items[f->nr].atom = ATOM_LITERAL;
			f->items[f->nr].lit = p;
			f->items[f->nr].lit_len = (size_t)(pct - p);
			f->nr++;
		}
		if (!*pct)
			break;
		if (pct[1] != '(') {
			/* "%%" is one '%'; a lone '%' stands for itself */
			item.lit = pct;
			item.lit_len = 1;
			ALLOC_GROW(f->items, f->nr + 1, f->alloc);
			f->items[f->nr++] = item;
			p = pct[1] == '%' ? pct + 2 : pct + 1;
			continue;
		}
		name = pct + 2;
		end = strchr(name, ')');
		if (!end)
			die("bad cat-file format: element '%s' does not end in ')'", pct + 1);
		len = (size_t)(end - name);
		for (i = 0; i < ARRAY_SIZE(atoms); i++)
			if (strlen(atoms[i].name) == len && !memcmp(name, atoms[i].name, len))
				break;
		if (i == ARRAY_SIZE(atoms))
			die("bad cat-file format: %%(%.*s)", (int)len, name);
		item.atom = atoms[i].atom;
		f->need_type |= item.atom == ATOM_OBJECTTYPE;
		f->need_size |= item.atom == ATOM_OBJECTSIZE;
		f->need_disk |= item.atom == ATOM_OBJECTSIZE_DISK;
		f->need_delta |= item.atom == ATOM_DELTABASE;
		f->need_rest |= item.atom == ATOM_REST;
		ALLOC_GROW(f->items, f->nr + 1, f->alloc);
		f->items[f->nr++] = item;
		p = end + 1;
	}
}

static void add_u64(struct strbuf *sb, uint64_t v)
{
	char digits[24];
	size_t n = sizeof(digits);
	do {
		digits[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	strbuf_add(sb, digits + n, sizeof(digits) - n);
}

static void add_hex(struct strbuf *sb, const struct object_id *oid)
{
	size_t hexsz = gp_hash_algos[oid->algo].hexsz;
	strbuf_grow(sb, hexsz + 1);
	hash_to_hex_r(sb->buf + sb->len, oid->hash, oid_rawsz(oid));
	strbuf_setlen(sb, sb->len + hexsz);
}

static void expand_format(struct strbuf *sb, const struct batch_format *f,
			  const struct object_id *oid, const struct object_info *info,
			  const char *rest, unsigned mode)
{
	for (size_t i = 0; i < f->nr; i++) {
		const struct format_item *item = &f->items[i];
		switch (item->atom) {
		case ATOM_LITERAL:
			strbuf_add(sb, item->lit, item->lit_len);
			break;
		case ATOM_OBJECTNAME:
			add_hex(sb, oid);
			break;
		case ATOM_OBJECTTYPE:
			strbuf_addstr(sb, type_name(info->type));
			break;
		case ATOM_OBJECTSIZE:
			add_u64(sb, info->size);
			break;
		case ATOM_OBJECTSIZE_DISK:
			add_u64(sb, info->disk_size);
			break;
		case ATOM_DELTABASE:
			add_hex(sb, &info->delta_base);
			break;
		case ATOM_REST:
			if (rest)
				strbuf_addstr(sb, rest);
			break;
		case ATOM_OBJECTMODE:
			if (mode)
				strbuf_addf(sb, "%06o", mode);
			break;
		}
	}
}

static void write_out(const void *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, stdout) != len)
		die("unable to write to standard output: %s", strerror(errno));
}

/*
 * Packs the odb had to skip (a bad .idx, a pack that does not match it)
 * explain why an object is missing: say so, as git does, once each.
 * A command runs once per process, so the count can live here.
 */
static void report_odb_warnings(struct odb *odb)
{
	static size_t nr_reported;
	for (; nr_reported < odb_nr_warnings(odb); nr_reported++)
		error("%s", odb_warning(odb, nr_reported));
}

/*
 * Whether a lookup that failed with ret failed because the object is
 * absent. GP_ENOTFOUND also reports a delta whose base cannot be found,
 * which is a damaged object, not a missing one.
 */
static bool is_missing(struct odb *odb, const struct object_id *oid, int ret)
{
	bool missing = ret == GP_ENOTFOUND && (!oid || !odb_has_object(odb, oid));
	if (missing)
		report_odb_warnings(odb);
	return missing;
}

/*
 * --batch-all-objects listed an object that cannot be read because a
 * damaged multi-pack-index listed it (and its packs' own indexes did not
 * find it either): git dies there rather than call it missing, with its
 * summary of the damage, the part before our details (`gitpack
 * multi-pack-index verify` gives those: file and offset). A damaged
 * loose object stays "missing", as in git.
 */
static void die_if_midx_damaged(struct odb *odb)
{
	for (size_t i = odb_nr_warnings(odb); i-- > 0;) {
		const char *w = odb_warning(odb, i), *colon = strstr(w, ": ");
		if (starts_with(w, "multi-pack-index") && colon)
			die("%.*s", (int)(colon - w), w);
	}
}

/* What a failed read was for: git words the final message by that. */
enum read_purpose {
	FOR_INFO,   /* -t, -s */
	FOR_PRETTY, /* -p */
	FOR_TYPED,  /* <type> <object> */
	FOR_BATCH,  /* batch modes: the object then counts as missing */
};

/*
 * A read of oid (named name) failed with err, and not because it is
 * missing. For a loose object whose header git cannot read, say what
 * git says; for anything else give the library's message. Dies, except
 * in batch mode after a header git cannot read, where the object is
 * then reported missing (returns).
 */
static void explain_read_failure(struct odb *odb, const struct object_id *oid,
				 const char *name, const struct gp_error *err,
				 enum read_purpose purpose)
{
	struct gp_error lerr = GP_ERROR_INIT;
	char hex[GP_MAX_HEXSZ + 1];
	struct packed_git *pack = NULL;
	const char *loose_dir = NULL;
	enum loose_header_state state = LOOSE_HEADER_OK;
	enum object_type type;
	uint64_t ofs, size;

	oid_to_hex_r(hex, oid);
	if (odb_locate(odb, oid, &pack, &ofs, &loose_dir) && !pack && loose_dir &&
	    !loose_inspect_header(loose_dir, oid, &state, &type, &size, &lerr)) {
		switch (state) {
		case LOOSE_HEADER_BAD_TYPE:
			die("invalid object type");
		case LOOSE_HEADER_HUGE:
			die("size of object %s in its header overflows", hex);
		case LOOSE_HEADER_TOO_LONG:
			error("header for %s too long, exceeds 32 bytes", hex);
			break;
		case LOOSE_HEADER_UNREADABLE:
			error("%s", gp_error_msg(&lerr));
			error("unable to unpack %s header", hex);
			break;
		case LOOSE_HEADER_EMPTY:
			error("object file %s/%.2s/%s is empty", loose_dir, hex, hex + 2);
			break;
		case LOOSE_HEADER_MALFORMED:
			error("unable to parse %s header", hex);
			break;
		default:
			break;
		}
	}
	gp_error_clear(&lerr);
	if (state == LOOSE_HEADER_OK) {
		error("%s", gp_error_msg(err));
		die("unable to read object %s", hex);
	}
	switch (purpose) {
	case FOR_INFO:
		die("git cat-file: could not get object info");
	case FOR_PRETTY:
		die("Not a valid object name %s", name);
	case FOR_TYPED:
		die("loose object %s (stored in %s/%.2s/%s) is corrupt", hex, loose_dir, hex, hex + 2);
	case FOR_BATCH:
		break;
	}
}

static void flush_out(void)
{
	if (fflush(stdout))
		die("unable to write to standard output: %s", strerror(errno));
}

/* The terminator git writes after each answer and content. */
static void end_answer(struct batch_state *st)
{
	strbuf_addch(&st->line, st->out_eol);
	write_out(st->line.buf, st->line.len);
}

/* The mailmap of repo, read on the first call (git reads it once). */
static struct mailmap *get_mailmap(struct repository *repo, struct odb *odb,
				   struct mailmap **cache)
{
	struct gp_error err = GP_ERROR_INIT;
	if (!*cache && mailmap_load(cache, repo, odb, &err))
		die_error(&err);
	return *cache;
}

/*
 * With --use-mailmap, a commit or tag shows its identities mapped: swap
 * *data for the rewritten content (and *size for its size).
 */
static void apply_mailmap(struct mailmap *mm, enum object_type type,
			  unsigned char **data, size_t *size)
{
	struct strbuf out = STRBUF_INIT;
	if (!mailmap_rewrite(mm, type, *data, *size, &out)) {
		strbuf_release(&out);
		return;
	}
	free(*data);
	*data = (unsigned char *)strbuf_detach(&out, size);
}

/* "<name> <word>": missing, ambiguous, excluded, submodule. */
static void say(struct batch_state *st, const char *name, const char *word)
{
	strbuf_reset(&st->line);
	strbuf_addstr(&st->line, name);
	strbuf_addch(&st->line, ' ');
	strbuf_addstr(&st->line, word);
	end_answer(st);
}

/*
 * The content of blob oid as --filters (cmdmode 'w') or --textconv
 * ('c') shows it for path: checked out as at path; for --textconv then
 * run through the textconv driver its "diff" attribute names, if any
 * (which sees the checked-out form, as in git), and for a symbolic link
 * (mode) left alone. Without a driver --textconv shows the blob as is.
 */
static void convert_blob(struct repository *repo, int cmdmode, const char *path,
			 unsigned mode, const struct object_id *oid,
			 unsigned char **data, size_t *size)
{
	static const char *const diff_attr[] = { "diff" };
	struct gp_error err = GP_ERROR_INIT;
	struct attr_result attr;
	const char *textconv = NULL;
	char *warn = NULL;

	if (cmdmode == 'c') {
		if ((mode & TREE_MODE_TYPE_MASK) == TREE_MODE_SYMLINK)
			return;
		if (attr_get(repo, path, diff_attr, 1, &attr, &err))
			die_error(&err);
		if (attr.state == ATTR_VALUE) {
			char *key = xstrfmt("diff.%s.textconv", attr.value);
			if (config_get_value(&repo->config, key, &textconv))
				textconv = NULL;
			free(key);
		}
		attr_results_release(&attr, 1);
		if (!textconv)
			return;
	}
	if (convert_to_worktree(repo, path, oid, data, size, &warn, &err))
		die_error(&err);
	if (warn)
		error("%s", warn);
	free(warn);
	if (textconv) {
		struct strbuf file = STRBUF_INIT, out = STRBUF_INIT;
		const char *args[] = { NULL, NULL };
		if (write_temp_file(*data, *size, &file, &err))
			die_error(&err);
		args[0] = file.buf;
		if (run_shell_capture(repo->worktree ? repo->worktree : repo->gitdir, textconv,
				      args, "", 0, &out, &err)) {
			unlink(file.buf);
			die("unable to read files to diff");
		}
		unlink(file.buf);
		strbuf_release(&file);
		free(*data);
		*data = (unsigned char *)strbuf_detach(&out, size);
	}
}

/*
 * Show one object. name is what the input called it (for the one-word
 * answers), oid what %(objectname) prints, read_oid the object to read
 * (oid, or its replacement), entry_mode the mode of the tree entry the
 * name went through (0: none). known, when not NULL, is the object's
 * info, already looked up. in_all: --batch-all-objects, where objects
 * the filter omits are left out rather than reported "excluded", and
 * where an object an index lists but no store can read is fatal.
 */
static void batch_one(struct batch_state *st, enum batch_mode mode, const char *name,
		      const struct object_id *oid, const struct object_id *read_oid,
		      const char *rest, unsigned entry_mode,
		      const struct object_info *known, bool in_all)
{
	char hex[GP_MAX_HEXSZ + 1];
	struct gp_error err = GP_ERROR_INIT;
	const struct batch_format *f = &st->fmt;
	struct object_info info;
	unsigned char *data = NULL;
	size_t size = 0;
	int ret = 0;
	bool need_info = mode != BATCH_CONTENTS || f->need_disk || f->need_delta || st->filter;
	bool names_only = mode == BATCH_CHECK && !st->filter && !f->need_type &&
			  !f->need_size && !f->need_disk && !f->need_delta;

	memset(&info, 0, sizeof(info));
	if (known) {
		info = *known;
	} else if (names_only) {
		/* like git, do not read what the format does not show */
		if (!odb_has_object(st->odb, read_oid))
			ret = GP_ENOTFOUND;
	} else if (need_info) {
		unsigned flags = (f->need_disk ? OI_DISK_SIZE : 0) |
				 (f->need_delta ? OI_DELTA_BASE : 0);
		ret = odb_read_object_info(st->odb, read_oid, &info, flags, &err);
	}
	if (!ret && st->use_mailmap && (info.type == OBJ_COMMIT || info.type == OBJ_TAG ||
					 (mode == BATCH_CONTENTS && !need_info)) &&
	    (mode == BATCH_CONTENTS || f->need_size)) {
		/* the size shown is that of the content with its identities mapped */
		enum object_type type;
		ret = odb_read_object(st->odb, read_oid, &type, &data, &size, &err);
		if (!ret) {
			apply_mailmap(get_mailmap(st->repo, st->odb, &st->mailmap), type,
				      &data, &size);
			info.type = type;
			info.size = size;
		}
	}
	if (!ret && st->filter && object_filter_omits(st->filter, info.type, info.size)) {
		if (!in_all)
			say(st, name, "excluded");
		free(data);
		return;
	}
	if (!ret && mode == BATCH_CONTENTS && !data) {
		enum object_type type;
		ret = odb_read_object(st->odb, read_oid, &type, &data, &size, &err);
		if (!ret && !need_info) {
			info.type = type;
			info.size = size;
		} else if (!ret && (type != info.type || size != info.size)) {
			ret = gp_error_set(&err, GP_ECORRUPT,
					   "object's content does not match its recorded type and size");
		}
	}
	if (ret && in_all)
		die_if_midx_damaged(st->odb);
	if (ret) {
		if (!is_missing(st->odb, read_oid, ret))
			explain_read_failure(st->odb, read_oid, name, &err, FOR_BATCH);
		gp_error_clear(&err);
		free(data);
		say(st, name, "missing");
		return;
	}

	strbuf_reset(&st->line);
	expand_format(&st->line, f, oid, &info, rest, entry_mode);
	end_answer(st);
	if (mode == BATCH_CONTENTS && st->transform && info.type == OBJ_BLOB) {
		/* the line gives the stored size; the content is converted */
		if (!rest || !*rest) {
			flush_out();
			die("missing path for '%s'", oid_to_hex_r(hex, oid));
		}
		convert_blob(st->repo, st->transform, rest, entry_mode, read_oid, &data, &size);
	}
	if (mode == BATCH_CONTENTS) {
		write_out(data, size);
		write_out(&st->out_eol, 1);
	}
	free(data);
}

/* The answers of --follow-symlinks that are not an object. */
static void say_symlink(struct batch_state *st, const char *name,
			const struct oid_context *ctx)
{
	static const char *const words[] = {
		[SYMLINK_DANGLING] = "dangling",
		[SYMLINK_LOOP] = "loop",
		[SYMLINK_NOTDIR] = "notdir",
		[SYMLINK_OUTSIDE] = "symlink",
	};
	const char *shown = ctx->symlink == SYMLINK_OUTSIDE ? ctx->symlink_path : name;
	strbuf_reset(&st->line);
	strbuf_addf(&st->line, "%s %zu", words[ctx->symlink], strlen(shown));
	strbuf_addch(&st->line, st->out_eol);
	strbuf_addstr(&st->line, shown);
	end_answer(st);
}

/*
 * One object name from the input, in mode. With %(rest) in the format
 * the name ends at the first space or tab and the rest starts after the
 * whitespace that follows; otherwise the whole line is the name.
 */
static void batch_name(struct batch_state *st, enum batch_mode mode, char *line)
{
	struct gp_error err = GP_ERROR_INIT;
	struct oid_context ctx;
	struct object_id oid, read_oid;
	char hex[GP_MAX_HEXSZ + 1];
	char *rest = NULL;
	int ret;

	/* with --textconv or --filters a batch line is "<object> <path>" */
	if (st->fmt.need_rest || (st->transform && st->mode != BATCH_COMMAND)) {
		char *sep = strpbrk(line, " \t");
		if (sep) {
			while (*sep && strchr(" \t\n\v\f\r", *sep))
				*sep++ = '\0';
			rest = sep;
		}
	}
	ret = get_oid_with_flags(st->repo, st->odb, line,
				 st->follow_symlinks ? GET_OID_FOLLOW_SYMLINKS : 0,
				 &oid, &ctx, &err);
	if (ret == GP_EINVAL && ctx.ambiguous) {
		say(st, line, "ambiguous");
	} else if (ret && ret != GP_ENOTFOUND) {
		die_error(&err);
	} else if (ret) {
		if (ctx.broken_ref)
			warning("%s", gp_error_msg(&err));
		say(st, line, "missing");
	} else if (ctx.symlink != SYMLINK_FOUND) {
		say_symlink(st, line, &ctx);
	} else if ((ctx.mode & TREE_MODE_TYPE_MASK) == TREE_MODE_GITLINK &&
		   !odb_has_object(st->odb, &oid)) {
		/* a submodule's commit, which lives in another repository */
		say(st, oid_to_hex_r(hex, &oid), "submodule");
	} else {
		if (replace_map_lookup(st->replace, &oid, &read_oid, &err))
			die_error(&err);
		batch_one(st, mode, line, &oid, &read_oid, rest, ctx.mode, NULL, false);
	}
	oid_context_release(&ctx);
	gp_error_clear(&err);
}

/*
 * Split a command's arguments into words as git splits them: at
 * whitespace, with "..." (backslash escapes inside) and '...' quoting.
 */
static size_t split_args(char *args, char **words, size_t max)
{
	size_t nr = 0;
	char *p = args, *out;
	while (*p && nr < max) {
		char quote = 0;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		words[nr++] = out = p;
		while (*p && (quote || !isspace((unsigned char)*p))) {
			if (!quote && (*p == '"' || *p == '\'')) {
				quote = *p++;
			} else if (quote && *p == quote) {
				quote = 0;
				p++;
			} else if (quote == '"' && *p == '\\' && p[1]) {
				p++;
				*out++ = *p++;
			} else {
				*out++ = *p++;
			}
		}
		if (*p)
			p++;
		*out = '\0';
	}
	return nr;
}

/*
 * "remote-object-info <remote> <oid>...": sizes from the remote, shown
 * with the format (only %(objectname) and %(objectsize) have values
 * there; the default is "%(objectname) %(objectsize)").
 */
static void remote_info(struct batch_state *st, const char *args)
{
	struct gp_error err = GP_ERROR_INIT;
	char *copy = xstrdup(args), *words[1024], *key = NULL;
	const char *url;
	struct object_id *oids;
	uint64_t *sizes;
	bool *found;
	size_t nr = split_args(copy, words, ARRAY_SIZE(words));

	if (nr < 2)
		die("remote-object-info requires objects");
	url = words[0];
	if (!strstr(url, "://") && url[0] != '/' && url[0] != '.') {
		const char *configured = NULL;
		key = xstrfmt("remote.%s.url", url);
		if (!config_get_value(&st->repo->config, key, &configured) && configured)
			url = configured;
	}
	oids = xcalloc(nr, sizeof(*oids));
	sizes = xcalloc(nr, sizeof(*sizes));
	found = xcalloc(nr, sizeof(*found));
	for (size_t i = 1; i < nr; i++)
		if (parse_oid_hex_exact(words[i], st->algo, &oids[i - 1]))
			die("Not a valid object name %s: remote-object-info does not support short oids",
			    words[i]);
	if (remote_object_info(url, st->algo, oids, nr - 1, sizes, found, &err))
		die_error(&err);
	for (size_t i = 0; i + 1 < nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		oid_to_hex_r(hex, &oids[i]);
		if (!found[i]) {
			say(st, hex, "missing");
			continue;
		}
		strbuf_reset(&st->line);
		if (!st->custom_format) {
			strbuf_addf(&st->line, "%s %" PRIu64, hex, sizes[i]);
		} else {
			for (size_t j = 0; j < st->fmt.nr; j++) {
				const struct format_item *item = &st->fmt.items[j];
				if (item->atom == ATOM_LITERAL)
					strbuf_add(&st->line, item->lit, item->lit_len);
				else if (item->atom == ATOM_OBJECTNAME)
					strbuf_addstr(&st->line, hex);
				else if (item->atom == ATOM_OBJECTSIZE)
					add_u64(&st->line, sizes[i]);
			}
		}
		end_answer(st);
	}
	free(oids);
	free(sizes);
	free(found);
	free(key);
	free(copy);
}

static void run_queue(struct batch_state *st)
{
	for (size_t i = 0; i < st->nr_queue; i++) {
		if (st->queue[i].mode == BATCH_NONE && st->queue[i].arg)
			remote_info(st, st->queue[i].arg);
		else if (st->queue[i].mode == BATCH_NONE)
			st->use_mailmap = st->queue[i].mailmap;
		else
			batch_name(st, st->queue[i].mode, st->queue[i].arg);
		free(st->queue[i].arg);
	}
	st->nr_queue = 0;
}

/*
 * One --batch-command line. A command is recognised by its name at the
 * start of the line; its argument is what follows the name and one
 * space. A line whose name is followed by anything else has no
 * argument (git's reading, which "infox HEAD" shows).
 */
static void batch_command(struct batch_state *st, char *line)
{
	static const struct {
		const char *name;
		enum batch_mode mode; /* BATCH_NONE: not an object command */
		bool takes_args;
	} cmds[] = {
		{ "contents", BATCH_CONTENTS, true },
		{ "info", BATCH_CHECK, true },
		{ "flush", BATCH_NONE, false },
		{ "mailmap", BATCH_NONE, true },
		{ "remote-object-info", BATCH_NONE, true },
	};
	size_t i, len;
	char *args = NULL;

	if (!*line)
		die("empty command in input");
	if (isspace((unsigned char)line[0]))
		die("whitespace before command: '%s'", line);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		len = strlen(cmds[i].name);
		if (!strncmp(line, cmds[i].name, len))
			break;
	}
	if (i == ARRAY_SIZE(cmds))
		die("unknown command: '%s'", line);
	if (line[len] == ' ')
		args = line + len + 1;
	if (cmds[i].takes_args && !args)
		die("%s requires arguments", cmds[i].name);
	if (!cmds[i].takes_args && line[len])
		die("%s takes no arguments", cmds[i].name);

	if (cmds[i].mode != BATCH_NONE) {
		if (!st->buffer) {
			batch_name(st, cmds[i].mode, args);
			return;
		}
		ALLOC_GROW(st->queue, st->nr_queue + 1, st->alloc_queue);
		st->queue[st->nr_queue].mode = cmds[i].mode;
		st->queue[st->nr_queue].arg = xstrdup(args);
		st->queue[st->nr_queue].mailmap = false;
		st->nr_queue++;
	} else if (!strcmp(cmds[i].name, "flush")) {
		if (!st->buffer)
			die("flush is only for --buffer mode");
		run_queue(st);
		flush_out();
	} else if (!strcmp(cmds[i].name, "mailmap")) {
		bool on;
		if (!config_parse_bool(args, &on))
			die("mailmap: invalid boolean '%s'", args);
		if (!st->buffer) {
			st->use_mailmap = on;
			return;
		}
		/* in its place among the queued commands, as git does */
		ALLOC_GROW(st->queue, st->nr_queue + 1, st->alloc_queue);
		st->queue[st->nr_queue].mode = BATCH_NONE;
		st->queue[st->nr_queue].arg = NULL;
		st->queue[st->nr_queue].mailmap = on;
		st->nr_queue++;
	} else if (!st->buffer) {
		remote_info(st, args);
	} else {
		ALLOC_GROW(st->queue, st->nr_queue + 1, st->alloc_queue);
		st->queue[st->nr_queue].mode = BATCH_NONE;
		st->queue[st->nr_queue].arg = xstrdup(args);
		st->queue[st->nr_queue].mailmap = false;
		st->nr_queue++;
	}
}

/*
 * Read the input: records end in "\n" (a "\r" before it is dropped too,
 * as git does; a lone "\r" stays), or in NUL with -z and -Z.
 */
static void batch_stdin(struct batch_state *st)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getdelim(&line, &cap, st->in_delim, stdin)) >= 0) {
		if (len && line[len - 1] == st->in_delim) {
			line[--len] = '\0';
			if (st->in_delim == '\n' && len && line[len - 1] == '\r')
				line[--len] = '\0';
		}
		if (st->mode == BATCH_COMMAND)
			batch_command(st, line);
		else
			batch_name(st, st->mode, line);
		if (st->flush_each)
			flush_out();
	}
	if (ferror(stdin))
		die("error reading standard input: %s", strerror(errno));
	if (st->nr_queue && !getenv("GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT"))
		run_queue(st);
	for (size_t i = 0; i < st->nr_queue; i++)
		free(st->queue[i].arg);
	free(st->queue);
	free(line);
}

static int collect_oid(const struct object_id *oid, void *data)
{
	oid_array_append(data, oid);
	return 0;
}

/* Object info looked up ahead of printing, by position in the sorted ids. */
struct prefetched {
	uint8_t *type;       /* 0: not looked up (yet) */
	uint64_t *size;      /* with %(objectsize) or a filter */
	uint64_t *disk;      /* with %(objectsize:disk) */
	unsigned char *base; /* with %(deltabase): rawsz bytes each */
};

/*
 * Look up the info of every packed object in the order the packs store
 * them: a delta's chain then runs through entries just visited, which
 * makes this much faster than looking objects up by name. Objects whose
 * lookup fails are left for the printing pass, which reports the error
 * at the object's place in the output; so are loose objects.
 * NEEDSWORK: an odb walk in storage order would spare us the pack
 * positions here.
 */
static void prefetch_packed(struct batch_state *st, const struct oid_array *ids,
			    struct prefetched *pf)
{
	unsigned flags = (st->fmt.need_disk ? OI_DISK_SIZE : 0) |
			 (st->fmt.need_delta ? OI_DELTA_BASE : 0);
	for (size_t i = 0; i < odb_nr_packs(st->odb); i++) {
		struct packed_git *p = odb_pack(st->odb, i);
		struct gp_error err = GP_ERROR_INIT;
		if (pack_load_revindex(p, &err)) {
			gp_error_clear(&err);
			continue;
		}
		for (uint32_t pack_pos = 0; pack_pos < p->nr_objects; pack_pos++) {
			const unsigned char *raw = pack_nth_oid_raw(p, pack_pos_to_idx(p, pack_pos));
			struct object_info info;
			struct object_id oid;
			size_t pos;
			if (!oid_array_find(ids, raw, &pos) || pf->type[pos])
				continue;
			oid_from_raw(&oid, raw, st->algo);
			if (odb_read_object_info(st->odb, &oid, &info, flags, &err)) {
				gp_error_clear(&err);
				continue;
			}
			pf->type[pos] = (uint8_t)info.type;
			if (pf->size)
				pf->size[pos] = info.size;
			if (pf->disk)
				pf->disk[pos] = info.disk_size;
			if (pf->base)
				memcpy(pf->base + pos * ids->rawsz, info.delta_base.hash, ids->rawsz);
		}
	}
}

/*
 * --batch-all-objects: every object in every pack and loose directory
 * (alternates included), once each, by name, replace refs ignored.
 * --unordered is accepted and gets the same order.
 */
static void batch_all(struct batch_state *st)
{
	struct oid_array ids = OID_ARRAY_INIT;
	struct prefetched pf = { NULL, NULL, NULL, NULL };
	const struct batch_format *f = &st->fmt;
	enum batch_mode mode = st->mode == BATCH_CONTENTS ? BATCH_CONTENTS : BATCH_CHECK;
	/* as git does, list names without looking objects up if nothing else is asked */
	bool names_only = mode == BATCH_CHECK && !st->filter && !f->need_type &&
			  !f->need_size && !f->need_disk && !f->need_delta;
	size_t hint = 0, nr;

	oid_array_init(&ids, st->algo);
	/*
	 * Every object is read: find a damaged MIDX before any, so that the
	 * first object it leaves unreadable is fatal (batch_one()), as in git.
	 */
	if (!names_only)
		odb_check_midx_entries(st->odb);
	for (size_t i = 0; i < odb_nr_packs(st->odb); i++)
		hint += odb_pack(st->odb, i)->nr_objects;
	oid_array_grow(&ids, hint);
	odb_for_each_object(st->odb, collect_oid, &ids);
	oid_array_sort_unique(&ids);

	nr = ids.nr ? ids.nr : 1;
	if (mode == BATCH_CHECK && !names_only) {
		pf.type = xcalloc(nr, 1);
		if (f->need_size || st->filter)
			pf.size = xmalloc(nr * sizeof(*pf.size));
		if (f->need_disk)
			pf.disk = xmalloc(nr * sizeof(*pf.disk));
		if (f->need_delta)
			pf.base = xmalloc(nr * ids.rawsz);
		prefetch_packed(st, &ids, &pf);
	}

	for (size_t i = 0; i < ids.nr; i++) {
		char hex[GP_MAX_HEXSZ + 1];
		struct object_id oid;
		struct object_info info;
		oid_array_get(&ids, i, &oid);
		oid_to_hex_r(hex, &oid);
		memset(&info, 0, sizeof(info));
		if (names_only) {
			batch_one(st, mode, hex, &oid, &oid, NULL, 0, &info, true);
		} else if (!pf.type || !pf.type[i]) {
			batch_one(st, mode, hex, &oid, &oid, NULL, 0, NULL, true);
		} else {
			info.type = (enum object_type)pf.type[i];
			info.size = pf.size ? pf.size[i] : 0;
			info.disk_size = pf.disk ? pf.disk[i] : 0;
			if (pf.base)
				oid_from_raw(&info.delta_base, pf.base + i * ids.rawsz, st->algo);
			batch_one(st, mode, hex, &oid, &oid, NULL, 0, &info, true);
		}
	}
	free(pf.type);
	free(pf.size);
	free(pf.disk);
	free(pf.base);
	oid_array_release(&ids);
}

static int run_batch(struct repository *repo, struct odb *odb, int algo,
		     const struct cat_file_opts *o)
{
	struct gp_error err = GP_ERROR_INIT;
	struct batch_state st = { 0 };
	st.repo = repo;
	st.odb = odb;
	st.algo = algo;
	st.mode = o->batch;
	st.buffer = o->buffer > 0 || (o->buffer < 0 && o->cmdmode == 'b');
	st.flush_each = !st.buffer;
	st.follow_symlinks = o->follow_symlinks;
	st.in_delim = o->nul_input || o->nul_output ? '\0' : '\n';
	st.out_eol = o->nul_output ? '\0' : '\n';
	st.filter = o->filter.kind != OBJECT_FILTER_NONE ? &o->filter : NULL;
	st.use_mailmap = o->use_mailmap;
	st.transform = o->cmdmode == 'c' || o->cmdmode == 'w' ? o->cmdmode : 0;
	st.custom_format = o->format != NULL;
	if (replace_map_load(&st.replace, repo, &err))
		die_error(&err);
	strbuf_init(&st.line, 256);
	compile_format(&st.fmt, o->format ? o->format
					  : "%(objectname) %(objecttype) %(objectsize)");
	/* Lives until exit: stdio still uses it when exit() flushes stdout. */
	setvbuf(stdout, xmalloc(STDOUT_BUFFER_SIZE), _IOFBF, STDOUT_BUFFER_SIZE);
	if (o->cmdmode == 'b')
		batch_all(&st);
	else
		batch_stdin(&st);
	flush_out();
	strbuf_release(&st.line);
	free(st.fmt.items);
	replace_map_free(st.replace);
	mailmap_free(st.mailmap);
	return 0;
}
static void add_quoted_path(struct strbuf *sb, const char *name, size_t len,
			    bool quote_high)
{
	static const char short_esc[] = "abtnvfr"; /* for bytes 7..13 */
	bool need = false;
	for (size_t i = 0; i < len && !need; i++) {
		unsigned char c = (unsigned char)name[i];
		need = c < 0x20 || c == '"' || c == '\\' || c == 0x7f ||
		       (c >= 0x80 && quote_high);
	}
	if (!need) {
		strbuf_add(sb, name, len);
		return;
	}
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '"' || c == '\\') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, (char)c);
		} else if (c >= 7 && c <= 13) {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, short_esc[c - 7]);
		} else if (c < 0x20 || c == 0x7f || (c >= 0x80 && quote_high)) {
			strbuf_addf(sb, "\\%03o", c);
		} else {
			strbuf_addch(sb, (char)c);
		}
	}
	strbuf_addch(sb, '"');
}

static void print_tree(struct repository *repo, const struct object_id *oid,
		       const unsigned char *data, size_t size)
{
	struct strbuf out = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct tree_iter it;
	struct tree_entry e;
	bool quote_high = true;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;

	if (config_get_bool(&repo->config, "core.quotepath", &quote_high, &err) == GP_EINVAL)
		die_error(&err);
	tree_iter_init(&it, data, size, oid->algo);
	while ((ret = tree_iter_next(&it, &e, &err)) > 0)
		;
	if (ret < 0) {
		gp_error_prefix(&err, "tree %s", oid_to_hex_r(hex, oid));
		die_error(&err);
	}
	tree_iter_init(&it, data, size, oid->algo);
	while (tree_iter_next(&it, &e, &err) > 0) {
		unsigned mode = tree_mode_canon(e.mode);
		strbuf_reset(&out);
		strbuf_addf(&out, "%06o %s ", mode, type_name(tree_mode_type(mode)));
		add_hex(&out, &e.oid);
		strbuf_addch(&out, '\t');
		add_quoted_path(&out, e.name, e.name_len, quote_high);
		strbuf_addch(&out, '\n');
		write_out(out.buf, out.len);
	}
	strbuf_release(&out);
}

static bool header_oid(const unsigned char *data, size_t size, const char *field,
		       int algo, struct object_id *oid)
{
	size_t flen = strlen(field), hexsz = gp_hash_algos[algo].hexsz;
	char hex[GP_MAX_HEXSZ + 1];
	if (size < flen + 1 + hexsz + 1 || memcmp(data, field, flen) ||
	    data[flen] != ' ' || data[flen + 1 + hexsz] != '\n')
		return false;
	memcpy(hex, data + flen + 1, hexsz);
	hex[hexsz] = '\0';
	return !parse_oid_hex_exact(hex, algo, oid);
}

/*
 * "cat-file <type> <object>": the content of the object if it has that
 * type; like git, a tag is followed to the object it tags and a commit
 * stands for its tree when a tree is asked for.
 */
static int cat_typed(struct odb *odb, const char *type_arg, const char *name,
		     const struct object_id *start, struct mailmap *mm)
{
	enum object_type want = type_from_name(type_arg, strlen(type_arg));
	struct object_id oid = *start;
	if (want == OBJ_BAD)
		die("invalid object type \"%s\"", type_arg);
	for (unsigned depth = 0;; depth++) {
		struct gp_error err = GP_ERROR_INIT;
		enum object_type type;
		unsigned char *data;
		size_t size;
		bool next = false;
		int ret = odb_read_object(odb, &oid, &type, &data, &size, &err);
		if (is_missing(odb, &oid, ret))
			die("git cat-file %s: bad file", name);
		if (ret)
			explain_read_failure(odb, &oid, name, &err, FOR_TYPED);
		if (type == want) {
			if (mm)
				apply_mailmap(mm, type, &data, &size);
			write_out(data, size);
			free(data);
			return 0;
		}
		/* a chain of tags this long is a loop */
		if (depth < 1000 && type == OBJ_TAG)
			next = header_oid(data, size, "object", oid.algo, &oid);
		else if (depth < 1000 && type == OBJ_COMMIT && want == OBJ_TREE)
			next = header_oid(data, size, "tree", oid.algo, &oid);
		free(data);
		if (!next)
			die("git cat-file %s: bad file", name);
	}
}

/* -t -s -p on oid (read_oid: what to read for it, its replacement or itself). */
static int cat_one(struct repository *repo, struct odb *odb, int cmdmode,
		   const char *name, const struct object_id *oid,
		   const struct object_id *read_oid, struct mailmap *mm)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_info info;
	enum object_type type;
	unsigned char *data;
	size_t size;
	int ret;

	switch (cmdmode) {
	case 't':
	case 's':
		ret = odb_read_object_info(odb, read_oid, &info, 0, &err);
		if (is_missing(odb, read_oid, ret))
			die("git cat-file: could not get object info");
		if (ret)
			explain_read_failure(odb, read_oid, name, &err, FOR_INFO);
		if (cmdmode == 's' && mm && (info.type == OBJ_COMMIT || info.type == OBJ_TAG)) {
			ret = odb_read_object(odb, read_oid, &type, &data, &size, &err);
			if (ret)
				explain_read_failure(odb, read_oid, name, &err, FOR_INFO);
			apply_mailmap(mm, type, &data, &size);
			info.size = size;
			free(data);
		}
		if (cmdmode == 't')
			printf("%s\n", type_name(info.type));
		else
			printf("%" PRIu64 "\n", info.size);
		return 0;
	case 'p':
		ret = odb_read_object(odb, read_oid, &type, &data, &size, &err);
		if (is_missing(odb, read_oid, ret))
			die("Not a valid object name %s", name);
		if (ret)
			explain_read_failure(odb, read_oid, name, &err, FOR_PRETTY);
		if (mm)
			apply_mailmap(mm, type, &data, &size);
		if (type == OBJ_TREE)
			print_tree(repo, oid, data, size);
		else
			write_out(data, size);
		free(data);
		return 0;
	default:
		BUG("unknown cat-file mode %c", cmdmode);
	}
}

/*
 * --textconv and --filters on "<rev>:<path>", or on <rev> with --path
 * (which then only says whose attributes apply). Without attributes git
 * shows the object as stored, except that --textconv lists a tree as -p
 * does.
 */
static int cat_converted(struct repository *repo, struct odb *odb,
			 const struct cat_file_opts *o, const char *name)
{
	struct gp_error err = GP_ERROR_INIT;
	struct replace_map *replace;
	struct oid_context ctx;
	struct object_id oid, read_oid;
	const char *path = o->path;
	enum object_type type;
	unsigned char *data;
	size_t size;
	int ret;

	ret = get_oid_ctx(repo, odb, name, &oid, &ctx, &err);
	if (ret == GP_ENOTFOUND && ctx.has_path)
		die_error(&err);
	if (ret == GP_EINVAL && ctx.ambiguous)
		error("%s", gp_error_msg(&err));
	if (ret == GP_ENOTFOUND || (ret == GP_EINVAL && ctx.ambiguous))
		die("Not a valid object name %s", name);
	if (ret)
		die_error(&err);
	if (!path) {
		const char *colon = strchr(name, ':');
		if (!ctx.has_path || !colon)
			die("<object>:<path> required, only <object> '%s' given", name);
		path = colon + 1;
	}
	if (replace_map_load(&replace, repo, &err) ||
	    replace_map_lookup(replace, &oid, &read_oid, &err))
		die_error(&err);
	replace_map_free(replace);
	ret = odb_read_object(odb, &read_oid, &type, &data, &size, &err);
	if (is_missing(odb, &read_oid, ret))
		die("Not a valid object name %s", name);
	if (ret)
		explain_read_failure(odb, &read_oid, name, &err, FOR_PRETTY);
	if (type == OBJ_BLOB)
		convert_blob(repo, o->cmdmode, path, ctx.mode, &read_oid, &data, &size);
	if (type == OBJ_TREE && o->cmdmode == 'c')
		print_tree(repo, &oid, data, size);
	else
		write_out(data, size);
	free(data);
	return 0;
}

int cmd_cat_file(int argc, const char **argv, struct repository *repo)
{
	struct cat_file_opts o = { .buffer = -1, .filter = OBJECT_FILTER_INIT };
	struct gp_error err = GP_ERROR_INIT;
	struct oid_context ctx;
	struct object_id oid, read_oid;
	struct replace_map *replace;
	struct mailmap *mm = NULL;
	struct odb *odb;
	const char *name = NULL;
	bool epts;
	int ret;
	struct option options[] = {
		OPT_GROUP("Check object existence or emit object contents"),
		{ OPTION_CALLBACK, 'e', NULL, &o, NULL, "check if <object> exists",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'e' },
		{ OPTION_CALLBACK, 'p', NULL, &o, NULL, "pretty-print <object> content",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'p' },
		OPT_GROUP("Emit [broken] object attributes"),
		{ OPTION_CALLBACK, 't', NULL, &o, NULL,
		  "show object type (one of 'blob', 'tree', 'commit', 'tag', ...)",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 't' },
		{ OPTION_CALLBACK, 's', NULL, &o, NULL, "show object size",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 's' },
		OPT_BOOL(0, "use-mailmap", &o.use_mailmap, "use mail map file"),
		OPT_BOOL(0, "mailmap", &o.use_mailmap, "alias of --use-mailmap"),
		{ OPTION_BOOL, 0, "allow-unknown-type", &o.allow_unknown_type, NULL,
		  "allow -s and -t to work with broken/corrupt objects", PARSE_OPT_HIDDEN,
		  NULL, 0 },
		OPT_GROUP("Batch objects requested on stdin (or --batch-all-objects)"),
		{ OPTION_CALLBACK, 0, "batch", &o, "format", "show full <object> or <rev> contents",
		  PARSE_OPT_OPTARG | PARSE_OPT_NONEG, batch_cb, BATCH_CONTENTS },
		{ OPTION_CALLBACK, 0, "batch-check", &o, "format",
		  "like --batch, but don't emit <contents>",
		  PARSE_OPT_OPTARG | PARSE_OPT_NONEG, batch_cb, BATCH_CHECK },
		{ OPTION_BOOL, 'z', NULL, &o.nul_input, NULL, "stdin is NUL-terminated",
		  PARSE_OPT_HIDDEN, NULL, 0 },
		{ OPTION_BOOL, 'Z', NULL, &o.nul_output, NULL, "stdin and stdout is NUL-terminated",
		  0, NULL, 0 },
		{ OPTION_CALLBACK, 0, "batch-command", &o, "format", "read commands from stdin",
		  PARSE_OPT_OPTARG | PARSE_OPT_NONEG, batch_cb, BATCH_COMMAND },
		{ OPTION_CALLBACK, 0, "batch-all-objects", &o, NULL,
		  "with --batch[-check]: ignores stdin, batches all known objects",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'b' },
		OPT_GROUP("Change or optimize batch output"),
		{ OPTION_CALLBACK, 0, "buffer", &o.buffer, NULL, "buffer --batch output",
		  PARSE_OPT_NOARG, buffer_cb, 0 },
		OPT_BOOL(0, "follow-symlinks", &o.follow_symlinks, "follow in-tree symlinks"),
		OPT_BOOL(0, "unordered", &o.unordered, "do not order objects before emitting them"),
		OPT_GROUP("Emit object (blob or tree) with conversion or filter (stand-alone, or with batch)"),
		{ OPTION_CALLBACK, 0, "textconv", &o, NULL, "run textconv on object's content",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'c' },
		{ OPTION_CALLBACK, 0, "filters", &o, NULL, "run filters on object's content",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'w' },
		OPT_STRING(0, "path", &o.path, "blob|tree",
			   "use a <path> for (--textconv | --filters); Not with 'batch'"),
		{ OPTION_CALLBACK, 0, "filter", &o.filter, "args", "object filtering",
		  0, filter_cb, 0 },
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, cat_file_usage);

	/* The checks, in git's order (its messages and exit codes). */
	if (o.filter.kind != OBJECT_FILTER_NONE) {
		switch (o.filter.kind) {
		case OBJECT_FILTER_BLOB_NONE:
		case OBJECT_FILTER_BLOB_LIMIT:
		case OBJECT_FILTER_OBJECT_TYPE:
			break;
		default:
			usage_line("objects filter not supported: '%s'",
				   object_filter_kind_name(o.filter.kind));
		}
		if (!o.batch)
			usage_line("objects filter only supported in batch mode");
	}
	if (o.path && o.cmdmode != 'c' && o.cmdmode != 'w')
		usage_msg("'--path=<path|tree-ish>' needs '--filters' or '--textconv'", options);
	if (!o.batch) {
		const char *needs = o.follow_symlinks ? "--follow-symlinks" :
				    o.buffer >= 0 ? "--buffer" :
				    o.cmdmode == 'b' ? "--batch-all-objects" :
				    o.nul_input ? "-z" : o.nul_output ? "-Z" : NULL;
		if (needs) {
			char msg[64];
			snprintf(msg, sizeof(msg), "'%s' requires a batch mode", needs);
			usage_msg(msg, options);
		}
	}
	epts = o.cmdmode == 'e' || o.cmdmode == 'p' || o.cmdmode == 't' || o.cmdmode == 's';
	if (o.batch) {
		if (epts) {
			char msg[64];
			snprintf(msg, sizeof(msg), "'%s' is incompatible with batch mode",
				 o.cmdmode_name);
			usage_msg(msg, options);
		}
		if (argc)
			usage_msg("batch modes take no arguments", options);
	} else if (o.cmdmode) {
		if (!argc) {
			char msg[64];
			snprintf(msg, sizeof(msg), "<%s> required with '%s'",
				 epts ? "object" : "rev", o.cmdmode_name);
			usage_msg(msg, options);
		}
		if (argc > 1)
			usage_msg("too many arguments", options);
		name = argv[0];
	} else if (!argc) {
		usage_with_options(cat_file_usage, options);
	} else if (argc != 2) {
		char msg[96];
		snprintf(msg, sizeof(msg),
			 "only two arguments allowed in <type> <object> mode, not %d", argc);
		usage_msg(msg, options);
	} else {
		name = argv[1];
	}

	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	/* A damaged .idx or MIDX is skipped, but never silently. */
	report_odb_warnings(odb);
	if (o.batch) {
		ret = run_batch(repo, odb, repo->hash_algo, &o);
		/* damage that lookups found on the way (the odb checks lazily) */
		report_odb_warnings(odb);
		object_filter_release(&o.filter);
		return ret;
	}
	if (o.cmdmode == 'c' || o.cmdmode == 'w') {
		ret = cat_converted(repo, odb, &o, name);
		goto out;
	}

	if (!o.cmdmode && type_from_name(argv[0], strlen(argv[0])) == OBJ_BAD)
		die("invalid object type \"%s\"", argv[0]);
	ret = get_oid_ctx(repo, odb, name, &oid, &ctx, &err);
	if (ret == GP_ENOTFOUND && ctx.has_path)
		die_error(&err); /* git says which half of <rev>:<path> failed */
	if (ret == GP_EINVAL && ctx.ambiguous)
		error("%s", gp_error_msg(&err));
	if (ret == GP_ENOTFOUND && ctx.broken_ref)
		warning("%s", gp_error_msg(&err));
	if (ret == GP_ENOTFOUND || (ret == GP_EINVAL && ctx.ambiguous))
		die("Not a valid object name %s", name);
	if (ret)
		die_error(&err);
	if (o.cmdmode == 'e') {
		ret = odb_has_object(odb, &oid) ? 0 : 1;
		goto out;
	}
	if (replace_map_load(&replace, repo, &err) ||
	    replace_map_lookup(replace, &oid, &read_oid, &err))
		die_error(&err);
	replace_map_free(replace);
	if (o.use_mailmap && o.cmdmode != 't')
		mm = get_mailmap(repo, odb, &mm);
	if (o.cmdmode)
		ret = cat_one(repo, odb, o.cmdmode, name, &oid, &read_oid, mm);
	else
		ret = cat_typed(odb, argv[0], name, &read_oid, mm);
	mailmap_free(mm);
out:
	if (fflush(stdout))
		die("unable to write to standard output: %s", strerror(errno));
	report_odb_warnings(odb);
	object_filter_release(&o.filter);
	return ret;
}
