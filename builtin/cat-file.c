/*
 * builtin/cat-file.c: gitpack cat-file, git's options and output.
 *
 *   cat-file (-t | -s | -e | -p) <object>
 *   cat-file <type> <object>
 *   cat-file (--batch | --batch-check)[=<format>] [--batch-all-objects]
 *            [--buffer] [--unordered]
 *
 * Objects are named as gitrevisions(7) says, through object-name.h
 * (refs, abbreviated ids, "HEAD~2", "v1^{tree}", "HEAD:path"). A name
 * that names nothing is "Not a valid object name" on the command line
 * and "missing" in batch mode; an ambiguous abbreviation is "ambiguous"
 * there.
 *
 * Output is byte-identical to git's. In batch mode each object is
 * written as soon as its input line is read (stdout is flushed per
 * line) unless --buffer is given; --batch-all-objects always buffers.
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../object-name.h"
#include "../object.h"
#include "../odb.h"
#include "../oid-array.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../strbuf.h"
#include "../tree.h"

static const char *const cat_file_usage[] = {
	"gitpack cat-file <type> <object>",
	"gitpack cat-file (-e | -p) <object>",
	"gitpack cat-file (-t | -s) <object>",
	"gitpack cat-file (--batch | --batch-check)[=<format>] [--batch-all-objects]\n"
	"                        [--buffer] [--unordered]",
	NULL,
};

/* Output buffer for stdout; batch output is written in big blocks. */
#define STDOUT_BUFFER_SIZE (1 << 20)

enum batch_mode {
	BATCH_NONE = 0,
	BATCH_CHECK, /* --batch-check: the formatted line only */
	BATCH_CONTENTS, /* --batch: the line, the content, "\n" */
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
	int cmdmode; /* 't', 's', 'e', 'p' or 0 */
	enum batch_mode batch;
	const char *format; /* NULL: the default */
	int all_objects, buffer, unordered;
};

struct batch_state {
	struct repository *repo;
	struct odb *odb;
	int algo;
	enum batch_mode mode;
	bool flush_each;
	struct batch_format fmt;
	struct strbuf line; /* the output line being built, reused */
};

GP_NORETURN static void usage_msg(const char *msg, const struct option *opts)
{
	fflush(stdout);
	fprintf(stderr, "fatal: %s\n\n", msg);
	usage_with_options(cat_file_usage, opts);
}

static int cmdmode_cb(const struct option *opt, const char *arg, int unset)
{
	int *mode = opt->value;
	int want = (int)opt->defval;
	if (*mode && *mode != want)
		return error("switch `%c' is incompatible with -%c", want, *mode);
	*mode = want;
	return 0;
}

static int batch_cb(const struct option *opt, const char *arg, int unset)
{
	struct cat_file_opts *o = opt->value;
	if (unset) {
		o->batch = BATCH_NONE;
		o->format = NULL;
		return 0;
	}
	if (o->batch)
		return error("only one batch option may be specified");
	o->batch = (enum batch_mode)opt->defval;
	o->format = arg;
	return 0;
}

/*
 * The compiled format. Like git: "%(" starts an atom that must end in
 * ")", "%%" is a literal '%', and a '%' followed by anything else is a
 * literal '%' too. Errors die before any input
 * is read, as git's do.
 */
static void compile_format(struct batch_format *f, const char *format)
{
	const char *p = format;
	while (*p) {
		const char *pct = strchr(p, '%'), *name, *end;
		struct format_item item = { ATOM_LITERAL, NULL, 0 };
		size_t len;
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
			die("format element '%s' does not end in ')'", pct + 1);
		len = (size_t)(end - name);
		if (len == 10 && !memcmp(name, "objectname", len)) {
			item.atom = ATOM_OBJECTNAME;
		} else if (len == 10 && !memcmp(name, "objecttype", len)) {
			item.atom = ATOM_OBJECTTYPE;
			f->need_type = true;
		} else if (len == 10 && !memcmp(name, "objectsize", len)) {
			item.atom = ATOM_OBJECTSIZE;
			f->need_size = true;
		} else if (len == 15 && !memcmp(name, "objectsize:disk", len)) {
			item.atom = ATOM_OBJECTSIZE_DISK;
			f->need_disk = true;
		} else if (len == 9 && !memcmp(name, "deltabase", len)) {
			item.atom = ATOM_DELTABASE;
			f->need_delta = true;
		} else if (len == 4 && !memcmp(name, "rest", len)) {
			item.atom = ATOM_REST;
			f->need_rest = true;
		} else {
			die("unknown format element: %.*s", (int)len, name);
		}
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
			  const char *rest)
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
		}
	}
	strbuf_addch(sb, '\n');
}

static void write_out(const void *buf, size_t len)
{
	if (len && fwrite(buf, 1, len, stdout) != len)
		die("unable to write to standard output: %s", strerror(errno));
}

GP_NORETURN static void die_read(const struct object_id *oid, const struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	error("%s", gp_error_msg(err));
	die("unable to read object %s", oid_to_hex_r(hex, oid));
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
 * Show one object (name is what the input line named it, for the
 * "missing" line). oid is NULL when name is not an object id at all.
 * known, when not NULL, is the object's info, already looked up
 * (--batch-check only).
 */
static void batch_one(struct batch_state *st, const char *name,
		      const struct object_id *oid, const char *rest,
		      const struct object_info *known)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_info info;
	unsigned char *data = NULL;
	size_t size = 0;
	int ret = GP_ENOTFOUND;
	bool need_info = st->mode != BATCH_CONTENTS ||
			 st->fmt.need_disk || st->fmt.need_delta;

	memset(&info, 0, sizeof(info));
	if (known) {
		info = *known;
		ret = 0;
	} else if (oid && need_info) {
		unsigned flags = (st->fmt.need_disk ? OI_DISK_SIZE : 0) |
				 (st->fmt.need_delta ? OI_DELTA_BASE : 0);
		ret = odb_read_object_info(st->odb, oid, &info, flags, &err);
	}
	if (oid && !data && st->mode == BATCH_CONTENTS && (!need_info || !ret)) {
		enum object_type type;
		ret = odb_read_object(st->odb, oid, &type, &data, &size, &err);
		if (!ret && !need_info) {
			memset(&info, 0, sizeof(info));
			info.type = type;
			info.size = size;
		} else if (!ret && (type != info.type || size != info.size)) {
			ret = gp_error_set(&err, GP_ECORRUPT,
					   "object's content does not match its recorded type and size");
		}
	}
	if (is_missing(st->odb, oid, ret)) {
		strbuf_reset(&st->line);
		strbuf_addstr(&st->line, name);
		strbuf_addstr(&st->line, " missing\n");
		write_out(st->line.buf, st->line.len);
		gp_error_clear(&err);
		return;
	}
	if (ret)
		die_read(oid, &err);

	strbuf_reset(&st->line);
	expand_format(&st->line, &st->fmt, oid, &info, rest);
	write_out(st->line.buf, st->line.len);
	if (st->mode == BATCH_CONTENTS) {
		write_out(data, size);
		write_out("\n", 1);
	}
	free(data);
}

/*
 * One line of input. With %(rest) in the format the name ends at the
 * first space or tab and the rest starts after the whitespace that
 * follows; otherwise the whole line is the name.
 */
static void batch_line(struct batch_state *st, char *line)
{
	struct gp_error err = GP_ERROR_INIT;
	struct oid_context ctx;
	struct object_id oid;
	char *rest = NULL;
	int ret;
	if (st->fmt.need_rest) {
		char *sep = strpbrk(line, " \t");
		if (sep) {
			while (*sep && strchr(" \t\n\v\f\r", *sep))
				*sep++ = '\0';
			rest = sep;
		}
	}
	ret = get_oid_ctx(st->repo, st->odb, line, &oid, &ctx, &err);
	if (ret == GP_EINVAL && ctx.ambiguous) {
		strbuf_reset(&st->line);
		strbuf_addstr(&st->line, line);
		strbuf_addstr(&st->line, " ambiguous\n");
		write_out(st->line.buf, st->line.len);
	} else if (ret && ret != GP_ENOTFOUND) {
		die_error(&err);
	} else {
		if (ret && ctx.broken_ref)
			warning("%s", gp_error_msg(&err));
		batch_one(st, line, ret ? NULL : &oid, rest, NULL);
	}
	gp_error_clear(&err);
}

static void batch_stdin(struct batch_state *st)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		/* strip "\n", and "\r\n" as git does; a lone "\r" stays */
		if (len && line[len - 1] == '\n') {
			line[--len] = '\0';
			if (len && line[len - 1] == '\r')
				line[--len] = '\0';
		}
		batch_line(st, line);
		if (st->flush_each && fflush(stdout))
			die("unable to write to standard output: %s", strerror(errno));
	}
	if (ferror(stdin))
		die("error reading standard input: %s", strerror(errno));
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
	uint64_t *size;      /* with %(objectsize) */
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
 * (alternates included), once each, by name. --unordered is accepted
 * and gets the same order.
 */
static void batch_all(struct batch_state *st)
{
	struct oid_array ids = OID_ARRAY_INIT;
	struct prefetched pf = { NULL, NULL, NULL, NULL };
	const struct batch_format *f = &st->fmt;
	/* as git does, list names without looking objects up if nothing else is asked */
	bool names_only = st->mode == BATCH_CHECK && !f->need_type && !f->need_size &&
			  !f->need_disk && !f->need_delta;
	size_t hint = 0, nr;

	oid_array_init(&ids, st->algo);
	for (size_t i = 0; i < odb_nr_packs(st->odb); i++)
		hint += odb_pack(st->odb, i)->nr_objects;
	oid_array_grow(&ids, hint);
	odb_for_each_object(st->odb, collect_oid, &ids);
	oid_array_sort_unique(&ids);

	nr = ids.nr ? ids.nr : 1;
	if (st->mode == BATCH_CHECK && !names_only) {
		pf.type = xcalloc(nr, 1);
		if (f->need_size)
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
			batch_one(st, hex, &oid, NULL, &info);
		} else if (!pf.type || !pf.type[i]) {
			batch_one(st, hex, &oid, NULL, NULL);
		} else {
			info.type = (enum object_type)pf.type[i];
			info.size = pf.size ? pf.size[i] : 0;
			info.disk_size = pf.disk ? pf.disk[i] : 0;
			if (pf.base)
				oid_from_raw(&info.delta_base, pf.base + i * ids.rawsz, st->algo);
			batch_one(st, hex, &oid, NULL, &info);
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
	struct batch_state st = { 0 };
	st.repo = repo;
	st.odb = odb;
	st.algo = algo;
	st.mode = o->batch;
	st.flush_each = !o->buffer && !o->all_objects;
	strbuf_init(&st.line, 256);
	compile_format(&st.fmt, o->format ? o->format
					  : "%(objectname) %(objecttype) %(objectsize)");
	/* Lives until exit: stdio still uses it when exit() flushes stdout. */
	setvbuf(stdout, xmalloc(STDOUT_BUFFER_SIZE), _IOFBF, STDOUT_BUFFER_SIZE);
	if (o->all_objects)
		batch_all(&st);
	else
		batch_stdin(&st);
	if (fflush(stdout))
		die("unable to write to standard output: %s", strerror(errno));
	strbuf_release(&st.line);
	free(st.fmt.items);
	return 0;
}

/*
 * Append name as git quotes paths (quote_c_style): unchanged unless it
 * holds a control character, '"', '\\', DEL or (with core.quotePath,
 * the default) a byte >= 0x80; then in double quotes with C escapes,
 * octal for the bytes without a short escape.
 */
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

/*
 * -p on a tree: one line per entry as "git ls-tree" prints it. The
 * whole tree is parsed before anything is printed, so a malformed tree
 * prints nothing.
 */
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

/*
 * The object id in a "<field> <hex>\n" line at the start of a commit
 * ("tree") or tag ("object"); false when the object does not start so.
 * NEEDSWORK: belongs in commit and tag parsers, when there are some.
 */
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

static void read_or_die(struct odb *odb, const struct object_id *oid,
			enum object_type *type, unsigned char **data, size_t *size,
			const char *name)
{
	struct gp_error err = GP_ERROR_INIT;
	int ret = odb_read_object(odb, oid, type, data, size, &err);
	if (is_missing(odb, oid, ret))
		die("Not a valid object name %s", name);
	if (ret)
		die_read(oid, &err);
}

/*
 * "cat-file <type> <object>": the content of the object if it has that
 * type; like git, a tag is followed to the object it tags and a commit
 * stands for its tree when a tree is asked for.
 */
static int cat_typed(struct odb *odb, const char *type_arg, const char *name,
		     const struct object_id *start)
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
			die("gitpack cat-file %s: bad file", name);
		if (ret)
			die_read(&oid, &err);
		if (type == want) {
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
			die("gitpack cat-file %s: bad file", name);
	}
}

static int cat_one(struct repository *repo, struct odb *odb, int cmdmode,
		   const char *name, const struct object_id *oid)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_info info;
	enum object_type type;
	unsigned char *data;
	size_t size;
	int ret = 0;

	switch (cmdmode) {
	case 'e':
		return odb_has_object(odb, oid) ? 0 : 1;
	case 't':
	case 's':
		ret = odb_read_object_info(odb, oid, &info, 0, &err);
		if (is_missing(odb, oid, ret))
			die("could not get object info for %s", name);
		if (ret)
			die_read(oid, &err);
		if (cmdmode == 't')
			printf("%s\n", type_name(info.type));
		else
			printf("%" PRIu64 "\n", info.size);
		return 0;
	case 'p':
		read_or_die(odb, oid, &type, &data, &size, name);
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

int cmd_cat_file(int argc, const char **argv, struct repository *repo)
{
	struct cat_file_opts o = { 0 };
	struct gp_error err = GP_ERROR_INIT;
	struct oid_context ctx;
	struct object_id oid;
	struct odb *odb;
	const char *name;
	int ret;
	struct option options[] = {
		OPT_GROUP("Check object existence or emit object contents"),
		{ OPTION_CALLBACK, 'e', NULL, &o.cmdmode, NULL, "check if <object> exists",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'e' },
		{ OPTION_CALLBACK, 'p', NULL, &o.cmdmode, NULL, "pretty-print <object> content",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 'p' },
		OPT_GROUP("Emit object attributes"),
		{ OPTION_CALLBACK, 't', NULL, &o.cmdmode, NULL, "show object type",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 't' },
		{ OPTION_CALLBACK, 's', NULL, &o.cmdmode, NULL, "show object size",
		  PARSE_OPT_NOARG | PARSE_OPT_NONEG, cmdmode_cb, 's' },
		OPT_GROUP("Batch objects requested on stdin (or --batch-all-objects)"),
		{ OPTION_CALLBACK, 0, "batch", &o, "format", "show full <object> contents",
		  PARSE_OPT_OPTARG, batch_cb, BATCH_CONTENTS },
		{ OPTION_CALLBACK, 0, "batch-check", &o, "format",
		  "like --batch, but don't emit <contents>", PARSE_OPT_OPTARG, batch_cb, BATCH_CHECK },
		OPT_BOOL(0, "batch-all-objects", &o.all_objects,
			 "with --batch[-check]: ignores stdin, batches all known objects"),
		OPT_GROUP("Change or optimize batch output"),
		OPT_BOOL(0, "buffer", &o.buffer, "buffer --batch output"),
		OPT_BOOL(0, "unordered", &o.unordered, "do not order objects before emitting them"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, cat_file_usage);

	if (o.all_objects && o.cmdmode) {
		fprintf(stderr, "error: switch `%c' is incompatible with --batch-all-objects\n",
			o.cmdmode);
		usage_with_options(cat_file_usage, options);
	}
	if (o.batch) {
		if (o.cmdmode) {
			fprintf(stderr, "error: switch `%c' is incompatible with --batch\n", o.cmdmode);
			usage_with_options(cat_file_usage, options);
		}
		if (argc)
			usage_msg("batch modes take no arguments", options);
	} else if (o.all_objects) {
		usage_msg("'--batch-all-objects' requires a batch mode", options);
	} else if (o.buffer) {
		usage_msg("'--buffer' requires a batch mode", options);
	} else if (o.unordered) {
		usage_with_options(cat_file_usage, options);
	} else if (o.cmdmode) {
		if (!argc) {
			char msg[64];
			snprintf(msg, sizeof(msg), "<object> required with '-%c'", o.cmdmode);
			usage_msg(msg, options);
		}
		if (argc > 1)
			usage_msg("too many arguments", options);
	} else if (argc != 2) {
		char msg[96];
		if (!argc)
			usage_with_options(cat_file_usage, options);
		snprintf(msg, sizeof(msg),
			 "only two arguments allowed in <type> <object> mode, not %d", argc);
		usage_msg(msg, options);
	}

	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	/* A damaged .idx or MIDX is skipped, but never silently. */
	report_odb_warnings(odb);
	if (o.batch)
		return run_batch(repo, odb, repo->hash_algo, &o);

	name = argv[argc - 1];
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
	if (o.cmdmode)
		ret = cat_one(repo, odb, o.cmdmode, name, &oid);
	else
		ret = cat_typed(odb, argv[0], name, &oid);
	if (fflush(stdout))
		die("unable to write to standard output: %s", strerror(errno));
	return ret;
}
