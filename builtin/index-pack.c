/*
 * builtin/index-pack.c: gitpack index-pack, with git's options and
 * output, including the ones fetch-pack and receive-pack use on a pack
 * they receive: --stdin (the pack is read from a pipe, up to its
 * trailer), --pack_header, --fix-thin, --keep, --promisor, --strict,
 * --check-self-contained-and-connected, --max-input-size and
 * --report-end-of-input.
 */
#include "../builtin.h"
#include "../commit.h"
#include "../config.h"
#include "../error.h"
#include "../fsck.h"
#include "../hashfile.h"
#include "../object.h"
#include "../odb.h"
#include "../oidset.h"
#include "../pack-indexer.h"
#include "../packfile.h"
#include "../repack.h"
#include "../repository.h"
#include "../shallow.h"
#include "../strbuf.h"
#include "../tree.h"
#include <fcntl.h>
#include <sys/stat.h>

static const char index_pack_usage[] =
	"git index-pack [-v] [-o <index-file>] [--keep | --keep=<msg>] [--[no-]rev-index]"
	" [--verify] [--strict[=<msg-id>=<severity>...]] [--fsck-objects[=<msg-id>=<severity>...]]"
	" (<pack-file> | --stdin [--fix-thin] [<pack-file>])";

static GP_NORETURN void usage_exit(void)
{
	fprintf(stderr, "usage: %s\n", index_pack_usage);
	exit(129);
}

/* -h: a question, answered on stdout with success (Git 2.55). */
static GP_NORETURN void usage_help(void)
{
	printf("usage: %s\n", index_pack_usage);
	exit(0);
}

struct index_pack_args {
	const char *pack_name, *index_name, *keep_msg, *promisor_msg, *progress_title;
	const char *object_format;
	bool from_stdin, fix_thin, verify, stat, stat_only, strict, fsck_objects;
	struct strbuf fsck_lists;   /* the <list>s of --strict= and --fsck-objects=, a line each */
	bool check_self_contained, report_eoi, show_resolving;
	int verbose, rev_index, threads;
	unsigned char pack_header[PACK_HEADER_SIZE];
	bool have_pack_header;
	uint64_t max_input_size;
	struct pack_idx_opts idx;
};

static void parse_index_version(const char *arg, struct pack_idx_opts *idx)
{
	if (!pack_idx_opts_parse(arg, idx))
		die("bad %s", arg);
}

/* --pack_header=<version>,<count>: the caller read the header already. */
static void parse_pack_header(const char *arg, struct index_pack_args *a)
{
	char *end;
	unsigned long version = strtoul(arg, &end, 10), count;
	if (end == arg || *end != ',')
		die("bad --pack_header: %s", arg);
	arg = end + 1;
	errno = 0;
	count = strtoul(arg, &end, 10);
	if (end == arg || *end || errno || count > UINT32_MAX)
		die("bad --pack_header: %s", arg);
	put_be32(a->pack_header, PACK_SIGNATURE);
	put_be32(a->pack_header + 4, (uint32_t)version);
	put_be32(a->pack_header + 8, (uint32_t)count);
	a->have_pack_header = true;
}

/*
 * git index-pack parses its arguments by hand: options and the pack
 * name may come in any order, and anything unknown is a usage error.
 */
static void parse_args(int argc, const char **argv, struct index_pack_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val;
		if (*arg != '-') {
			if (a->pack_name)
				usage_exit();
			a->pack_name = arg;
		} else if (!strcmp(arg, "--stdin")) {
			a->from_stdin = true;
		} else if (!strcmp(arg, "--fix-thin")) {
			a->fix_thin = true;
		} else if (!strcmp(arg, "--strict")) {
			a->strict = a->fsck_objects = true;
		} else if (skip_prefix(arg, "--strict=", &val)) {
			a->strict = a->fsck_objects = true;
			strbuf_addf(&a->fsck_lists, "%s\n", val);
		} else if (!strcmp(arg, "--fsck-objects")) {
			a->fsck_objects = true;
		} else if (skip_prefix(arg, "--fsck-objects=", &val)) {
			a->fsck_objects = true;
			strbuf_addf(&a->fsck_lists, "%s\n", val);
		} else if (!strcmp(arg, "--check-self-contained-and-connected")) {
			a->strict = true;
			a->check_self_contained = true;
		} else if (!strcmp(arg, "--verify")) {
			a->verify = true;
		} else if (!strcmp(arg, "--verify-stat")) {
			a->verify = a->stat = true;
		} else if (!strcmp(arg, "--verify-stat-only")) {
			a->verify = a->stat = a->stat_only = true;
		} else if (!strcmp(arg, "--keep")) {
			a->keep_msg = "";
		} else if (skip_prefix(arg, "--keep=", &val)) {
			a->keep_msg = val;
		} else if (!strcmp(arg, "--promisor")) {
			a->promisor_msg = "";
		} else if (skip_prefix(arg, "--promisor=", &val)) {
			a->promisor_msg = val;
		} else if (skip_prefix(arg, "--threads=", &val)) {
			char *end;
			long n = strtol(val, &end, 10);
			if (end == val || *end || n < 0)
				die("invalid number of threads specified (%s)", val);
			a->threads = (int)MIN(n, (long)INT_MAX);
		} else if (skip_prefix(arg, "--pack_header=", &val)) {
			parse_pack_header(val, a);
		} else if (!strcmp(arg, "-v")) {
			a->verbose = 1;
		} else if (!strcmp(arg, "--progress-title")) {
			if (++i >= argc)
				usage_exit();
			a->progress_title = argv[i];
		} else if (!strcmp(arg, "--show-resolving-progress")) {
			a->show_resolving = true;
		} else if (!strcmp(arg, "--report-end-of-input")) {
			a->report_eoi = true;
		} else if (!strcmp(arg, "-o")) {
			if (a->index_name || ++i >= argc)
				usage_exit();
			a->index_name = argv[i];
		} else if (skip_prefix(arg, "--index-version=", &val)) {
			parse_index_version(val, &a->idx);
		} else if (skip_prefix(arg, "--max-input-size=", &val)) {
			char *end;
			errno = 0;
			a->max_input_size = strtoull(val, &end, 10);
			if (end == val || *end || errno)
				die("bad --max-input-size: %s", val);
		} else if (skip_prefix(arg, "--object-format=", &val)) {
			a->object_format = val;
		} else if (!strcmp(arg, "--rev-index")) {
			a->rev_index = 1;
		} else if (!strcmp(arg, "--no-rev-index")) {
			a->rev_index = 0;
		} else if (!strcmp(arg, "-h")) {
			usage_help();
		} else {
			usage_exit();
		}
	}
}

/* ---- what the indexer reports, object by object ---------------------- */

/* What the objects point at, each once, with the type the link says. */
struct link_table {
	struct link { struct object_id oid; uint8_t type; } *slots; /* algo 0: free */
	size_t mask, nr;
};

struct check_state {
	struct odb *odb;        /* NULL outside a repository */
	int algo;
	bool collision_check;   /* compare with copies the repository has */
	bool want_links;        /* remember what each object points at */
	struct link_table links;
	struct oidset shallow;  /* commits whose parents need not be present */
	struct fsck_options *fsck;   /* --strict, --fsck-objects */
	bool current_shallow;       /* the object whose links are added is a shallow commit */
	struct packed_git *written; /* the pack just indexed, for fsck_finish() */
	struct pack_reader *reader;
};

static void link_add(struct link_table *t, const struct object_id *oid, enum object_type type)
{
	size_t at;
	if ((t->nr + 1) * 2 > t->mask + 1) {
		struct link *old = t->slots;
		size_t old_size = t->slots ? t->mask + 1 : 0;
		t->mask = old_size ? old_size * 2 - 1 : 1023;
		t->slots = xcalloc(t->mask + 1, sizeof(*t->slots));
		for (size_t i = 0; i < old_size; i++) {
			if (!old[i].oid.algo)
				continue;
			for (at = get_be32(old[i].oid.hash) & t->mask; t->slots[at].oid.algo;
			     at = (at + 1) & t->mask)
				;
			t->slots[at] = old[i];
		}
		free(old);
	}
	for (at = get_be32(oid->hash) & t->mask; t->slots[at].oid.algo; at = (at + 1) & t->mask)
		if (oideq(&t->slots[at].oid, oid))
			return;
	t->slots[at].oid = *oid;
	t->slots[at].type = (uint8_t)type;
	t->nr++;
}

static int check_collision(struct check_state *st, const struct object_id *oid,
			   enum object_type type, const unsigned char *data,
			   size_t size, struct gp_error *err)
{
	enum object_type have_type;
	unsigned char *have = NULL;
	size_t have_size;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;

	if (!odb_has_object(st->odb, oid))
		return 0;
	ret = odb_read_object(st->odb, oid, &have_type, &have, &have_size, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		return 0;
	}
	if (ret)
		return gp_error_prefix(err, "cannot read existing object %s", oid_to_hex_r(hex, oid));
	if (have_type != type || have_size != size || memcmp(have, data, size))
		ret = gp_error_set(err, GP_ECORRUPT, "SHA1 COLLISION FOUND WITH %s !",
				   oid_to_hex_r(hex, oid));
	free(have);
	return ret;
}

static int add_link(const struct object_id *oid, enum object_type type, void *data)
{
	struct check_state *st = data;
	/* A shallow commit's parents are not there to check. */
	if (type == OBJ_COMMIT && st->current_shallow)
		return 0;
	link_add(&st->links, oid, type);
	return 0;
}

static int record_links(struct check_state *st, const struct object_id *oid,
			enum object_type type, const unsigned char *data,
			size_t size, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	if (type == OBJ_BLOB)
		return 0;
	st->current_shallow = type == OBJ_COMMIT && oidset_contains(&st->shallow, oid);
	if (fsck_links(type, data, size, st->algo, add_link, st, err))
		return gp_error_set(err, GP_ECORRUPT, "Not all child objects of %s are reachable",
				    oid_to_hex_r(hex, oid));
	return 0;
}

/* The checks of git's fsck, as index-pack runs them on each object. */
static int fsck_one(struct check_state *st, const struct object_id *oid, enum object_type type,
		    const unsigned char *data, size_t size, struct gp_error *err)
{
	struct strbuf msg = STRBUF_INIT;
	int ret = 0;
	if (type != OBJ_BLOB && fsck_parse_check(type, data, size, oid, &msg) < 0) {
		if (msg.len)
			error("%s", msg.buf);
		ret = gp_error_set(err, GP_ECORRUPT, "invalid %s", type_name(type));
	} else if (fsck_object(st->fsck, oid, type, data, size)) {
		ret = gp_error_set(err, GP_ECORRUPT, "fsck error in packed object");
	}
	strbuf_release(&msg);
	return ret;
}

static int ip_fsck_report(const struct fsck_report *r, void *data)
{
	char hex[GP_MAX_HEXSZ + 1];
	oid_to_hex_r(hex, r->oid);
	/* --fsck-objects leaves missing .gitmodules blobs to the caller. */
	if (r->id == FSCK_MSG_GITMODULES_MISSING) {
		printf("%s\n", hex);
		return 0;
	}
	if (r->severity == FSCK_ERROR)
		error("object %s: %s", hex, r->message);
	else
		warning("object %s: %s", hex, r->message);
	return r->severity == FSCK_ERROR;
}

static void ip_fsck_tree_error(const struct object_id *oid, const char *message, void *data)
{
	error("%s", message);
}

static int ip_fsck_read(const struct object_id *oid, enum object_type *type,
			void **buf, size_t *len, void *data)
{
	struct check_state *st = data;
	struct gp_error err = GP_ERROR_INIT;
	unsigned char *out = NULL;
	uint32_t idx_pos;
	int ret = GP_ENOTFOUND;
	/* The pack just indexed first: it need not be in the repository. */
	if (st->written && pack_find_oid(st->written, oid, &idx_pos))
		ret = pack_read_object(st->reader, st->written, pack_nth_offset(st->written, idx_pos),
				       type, &out, len, &err);
	if (ret && st->odb) {
		gp_error_clear(&err);
		ret = odb_read_object(st->odb, oid, type, &out, len, &err);
	}
	gp_error_clear(&err);
	*buf = out;
	return ret ? GP_ENOTFOUND : 0;
}

static int each_object(void *cb_data, const struct object_id *oid, enum object_type type,
		       const unsigned char *data, size_t size, struct gp_error *err)
{
	struct check_state *st = cb_data;
	int ret = 0;
	if (st->collision_check)
		ret = check_collision(st, oid, type, data, size, err);
	if (!ret && st->fsck)
		ret = fsck_one(st, oid, type, data, size, err);
	if (!ret && st->want_links)
		ret = record_links(st, oid, type, data, size, err);
	return ret;
}

static int read_base(void *cb_data, const struct object_id *oid, enum object_type *type,
		     unsigned char **data, size_t *size, struct gp_error *err)
{
	struct check_state *st = cb_data;
	if (!st->odb)
		return gp_error_set(err, GP_ENOTFOUND, "no repository");
	return odb_read_object(st->odb, oid, type, data, size, err);
}


static bool pack_lookup(const struct indexed_pack *ip, const struct object_id *oid,
			uint32_t *pack_pos)
{
	size_t rawsz = gp_hash_algos[ip->algo].rawsz;
	uint32_t lo = 0, hi = ip->nr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(ip->oids + (size_t)ip->by_name[mid] * rawsz, oid->hash, rawsz);
		if (!cmp) {
			*pack_pos = ip->by_name[mid];
			return true;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * Every object the pack's objects point at must be in the pack or in
 * the repository, of the type the link says. Returns whether all of
 * them are in the pack.
 */
static bool check_connected(struct check_state *st, const struct indexed_pack *ip)
{
	struct gp_error err = GP_ERROR_INIT;
	bool self_contained = true;
	for (size_t at = 0; st->links.slots && at <= st->links.mask; at++) {
		const struct link *l = &st->links.slots[at];
		char hex[GP_MAX_HEXSZ + 1];
		struct object_info info;
		uint32_t pack_pos;
		enum object_type have;
		if (!l->oid.algo)
			continue;
		oid_to_hex_r(hex, &l->oid);
		if (pack_lookup(ip, &l->oid, &pack_pos)) {
			have = (enum object_type)ip->real_types[pack_pos];
		} else {
			self_contained = false;
			if (!st->odb || odb_read_object_info(st->odb, &l->oid, &info, 0, &err))
				die("did not receive expected object %s", hex);
			have = info.type;
		}
		if (l->type != OBJ_NONE && have != l->type)
			die("object %s: expected type %s, found %s", hex, type_name(l->type),
			    type_name(have));
	}
	gp_error_clear(&err);
	return self_contained;
}

/* ---- files ------------------------------------------------------------- */

static char *replace_ext(const char *path, const char *old_ext, const char *new_ext)
{
	size_t len = strlen(path);
	if (!ends_with(path, old_ext))
		return NULL;
	return xstrfmt("%.*s%s", (int)(len - strlen(old_ext)), path, new_ext);
}

/*
 * Create path holding msg and a newline (nothing for an empty msg).
 * Returns 1 when it was created, 0 when it existed already.
 */
static int write_marker_file(const char *path, const char *msg, const char *what,
			     struct gp_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		return gp_error_errno(err, "cannot write %s file '%s'", what, path);
	}
	if (msg && *msg &&
	    (write_in_full(fd, msg, strlen(msg)) < 0 || write_in_full(fd, "\n", 1) < 0)) {
		close(fd);
		return gp_error_errno(err, "cannot write %s file '%s'", what, path);
	}
	if (fsync(fd) < 0 || close(fd) < 0)
		return gp_error_errno(err, "cannot close %s file '%s'", what, path);
	return 1;
}

static void verify_like_existing(const char *idx_path, int algo, struct pack_idx_opts *opts)
{
	struct gp_error err = GP_ERROR_INIT;
	struct packed_git *p;
	uint64_t least_large = UINT64_MAX;
	if (pack_open_idx(&p, idx_path, algo, &err)) {
		gp_error_clear(&err);
		return;
	}
	opts->version = p->idx_version;
	for (uint32_t idx_pos = 0; p->idx_version >= 2 && idx_pos < p->nr_objects; idx_pos++)
		if (get_be32(p->off32 + 4 * (size_t)idx_pos) & 0x80000000u)
			least_large = MIN(least_large, pack_nth_offset(p, idx_pos));
	if (least_large != UINT64_MAX && least_large)
		opts->off32_limit = least_large - 1;
	pack_free(p);
}

/* Compare a freshly computed file image with the one on disk. */
static int verify_against(const char *path, const struct strbuf *want, struct gp_error *err)
{
	struct strbuf have = STRBUF_INIT;
	int ret = 0;
	if (strbuf_read_file(&have, path, want->len) < 0)
		ret = gp_error_errno(err, "cannot read '%s'", path);
	else if (have.len != want->len || memcmp(have.buf, want->buf, want->len))
		ret = gp_error_set(err, GP_ECORRUPT, "%s does not match its pack", path);
	strbuf_release(&have);
	return ret;
}

static int verify_rev(const struct indexed_pack *ip, const char *rev_path, struct gp_error *err)
{
	char *tmp = xstrfmt("%s.verify-XXXXXX", rev_path);
	struct strbuf want = STRBUF_INIT;
	int fd = mkstemp(tmp), ret;
	if (fd < 0) {
		ret = gp_error_errno(err, "unable to create '%s'", tmp);
		free(tmp);
		return ret;
	}
	close(fd);
	unlink(tmp);
	ret = indexed_pack_write_rev(ip, tmp, err);
	if (!ret && strbuf_read_file(&want, tmp, 0) < 0)
		ret = gp_error_errno(err, "cannot read '%s'", tmp);
	unlink(tmp);
	if (!ret)
		ret = verify_against(rev_path, &want, err);
	strbuf_release(&want);
	free(tmp);
	return ret;
}

/* Read the pack from standard input into a new temporary file in dir. */
static char *receive_pack_file(const struct index_pack_args *a, int algo, const char *dir,
			       struct strbuf *rest)
{
	struct pack_spool_opts sopts = {
		.algo = algo,
		.header = a->have_pack_header ? a->pack_header : NULL,
		.max_size = a->max_input_size,
		.progress_title = a->verbose ? (a->progress_title ? a->progress_title
						: "Receiving objects") : NULL,
	};
	struct gp_error err = GP_ERROR_INIT;
	char *tmp = xstrfmt("%s/tmp_pack_XXXXXX", dir);
	unsigned char *extra = NULL;
	size_t extra_len = 0;
	uint64_t pack_len;
	int fd = mkostemp(tmp, O_CLOEXEC);

	if (fd < 0)
		die("unable to create temporary file '%s': %s", tmp, strerror(errno));
	fchmod(fd, 0444);
	if (pack_spool(0, fd, &sopts, &extra, &extra_len, &pack_len, &err) ||
	    (fsync(fd) < 0 && gp_error_errno(&err, "unable to write '%s'", tmp))) {
		close(fd);
		unlink(tmp);
		die_error(&err);
	}
	if (close(fd) < 0) {
		unlink(tmp);
		die("unable to write '%s': %s", tmp, strerror(errno));
	}
	strbuf_add(rest, extra, extra_len);
	free(extra);
	return tmp;
}

static void print_verify_stats(const struct indexed_pack *ip, bool stat_only)
{
	if (!stat_only)
		verify_pack_print_objects(ip);
	verify_pack_print_histogram(ip);
}

/* What obj links to, as git's index-pack --promisor records it: no blobs. */
static void add_links(struct odb *odb, int algo, const struct object_id *oid,
		      enum object_type type, struct oidset *links,
		      struct object_id **out, size_t *nr, size_t *alloc)
{
	struct gp_error err = GP_ERROR_INIT;
	enum object_type got;
	unsigned char *buf;
	size_t size;
#define ADD_LINK(o) do { if (oidset_insert(links, (o))) { \
		ALLOC_GROW(*out, *nr + 1, *alloc); (*out)[(*nr)++] = *(o); } } while (0)

	if (odb_read_object(odb, oid, &got, &buf, &size, &err)) {
		gp_error_clear(&err);
		return;
	}
	if (type == OBJ_COMMIT) {
		struct commit_info ci = COMMIT_INFO_INIT;
		if (!commit_parse(buf, size, algo, &ci, &err)) {
			ADD_LINK(&ci.tree);
			for (size_t i = 0; i < ci.nr_parents; i++)
				ADD_LINK(&ci.parents[i]);
		}
		commit_info_release(&ci);
	} else if (type == OBJ_TREE) {
		struct tree_iter it;
		struct tree_entry e;
		tree_iter_init(&it, buf, size, algo);
		while (tree_iter_next(&it, &e, &err) > 0)
			if (tree_mode_type(e.mode) == OBJ_TREE)
				ADD_LINK(&e.oid);
	} else if (type == OBJ_TAG) {
		struct tag_info tag;
		if (!tag_parse(buf, size, algo, &tag, &err))
			ADD_LINK(&tag.object);
	}
#undef ADD_LINK
	gp_error_clear(&err);
	free(buf);
}

/*
 * --promisor: what the pack refers to that the repository holds outside
 * promisor packs goes into a promisor pack too (repack.h), or a later
 * repack, which stops at promisor objects, would drop it.
 */
static void repack_local_links(struct repository *repo, const struct indexed_pack *ip)
{
	struct gp_error err = GP_ERROR_INIT;
	struct oidset seen = OIDSET_INIT;
	struct object_id *links = NULL;
	size_t nr = 0, alloc = 0, rawsz = gp_hash_algos[ip->algo].rawsz;
	struct odb *odb;

	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	odb_reprepare(odb);
	for (uint32_t i = 0; i < ip->nr; i++) {
		enum object_type type = (enum object_type)ip->real_types[i];
		struct object_id oid;
		if (type != OBJ_COMMIT && type != OBJ_TREE && type != OBJ_TAG)
			continue;
		oid.algo = ip->algo;
		memcpy(oid.hash, ip->oids + (size_t)i * rawsz, rawsz);
		memset(oid.hash + rawsz, 0, sizeof(oid.hash) - rawsz);
		add_links(odb, ip->algo, &oid, type, &seen, &links, &nr, &alloc);
	}
	if (nr && repack_promisor_links(repo, links, nr, &err)) {
		gp_error_prefix(&err, "could not repack local links");
		die_error(&err);
	}
	oidset_release(&seen);
	free(links);
}

int cmd_index_pack(int argc, const char **argv, struct repository *repo)
{
	struct index_pack_args a = { .rev_index = -1, .threads = -1, .idx = PACK_IDX_OPTS_INIT,
				     .fsck_lists = STRBUF_INIT };
	struct pack_indexer_opts opts = PACK_INDEXER_OPTS_INIT;
	struct check_state st = { .shallow = OIDSET_INIT };
	struct gp_error err = GP_ERROR_INIT;
	struct indexed_pack *ip = NULL;
	struct strbuf rest = STRBUF_INIT;
	char *pack_path = NULL, *idx_path = NULL, *rev_path = NULL, *tmp_pack = NULL;
	char hex[GP_MAX_HEXSZ + 1];
	bool keep_created = false, self_contained = true;
	int ret = 0, n;
	bool v;

	a.idx.version = 0; /* unset: pack.indexVersion, then 2 */
	parse_args(argc, argv, &a);
	if (!a.pack_name && !a.from_stdin)
		usage_exit();
	if (a.fix_thin && !a.from_stdin)
		die("the option '--fix-thin' requires '--stdin'");
	if (a.from_stdin && !repo)
		die("--stdin requires a git repository");
	if (a.from_stdin && a.object_format)
		die("options '--object-format' and '--stdin' cannot be used together");
	if (a.verify && !a.pack_name)
		die("--verify with no packfile name given");
	if (a.promisor_msg && a.pack_name)
		die("--promisor cannot be used with a pack name");
	if (a.from_stdin && a.verify)
		die("--verify with --stdin does not make sense");

	opts.algo = repo ? repo->hash_algo : GP_HASH_SHA1;
	if (a.object_format) {
		opts.algo = hash_algo_by_name(a.object_format);
		if (!opts.algo)
			die("unknown hash algorithm '%s'", a.object_format);
	}
	if (repo) {
		/* A value that does not parse is an error, as in git. */
#define CONFIG_OR_DIE(call) do { ret = (call); if (ret && ret != GP_ENOTFOUND) die_error(&err); \
				 gp_error_clear(&err); } while (0)
		if (a.rev_index < 0) {
			CONFIG_OR_DIE(config_get_bool(&repo->config, "pack.writereverseindex", &v, &err));
			if (!ret)
				a.rev_index = v;
		}
		if (a.threads < 0) {
			CONFIG_OR_DIE(config_get_int(&repo->config, "pack.threads", &n, &err));
			if (!ret)
				a.threads = n;
		}
		if (!a.idx.version) {
			CONFIG_OR_DIE(config_get_int(&repo->config, "pack.indexversion", &n, &err));
			if (!ret)
				a.idx.version = (uint32_t)n;
		}
		CONFIG_OR_DIE(config_get_int(&repo->config, "pack.compression", &n, &err));
		if (ret)
			CONFIG_OR_DIE(config_get_int(&repo->config, "core.compression", &n, &err));
		if (!ret)
			opts.compression = n;
#undef CONFIG_OR_DIE
	}
	if (a.rev_index < 0)
		a.rev_index = 1;
	if (!a.idx.version)
		a.idx.version = 2;
	opts.threads = a.threads < 0 ? 0 : a.threads;
	opts.progress = a.verbose || a.show_resolving;
	opts.keep_stats = a.stat;

	st.algo = opts.algo;
	if (repo && repo_odb(repo, &st.odb, &err))
		die_error(&err);
	/* As git: what the repository has already must be the same object. */
	st.collision_check = st.odb != NULL;
	st.want_links = a.strict;
	if (st.want_links && repo && shallow_read(repo, &st.shallow, &err))
		die_error(&err);
	if (a.fsck_objects) {
		st.fsck = fsck_options_new(opts.algo);
		fsck_set_strict(st.fsck, true);
		fsck_set_report(st.fsck, ip_fsck_report, &st);
		fsck_set_tree_error(st.fsck, ip_fsck_tree_error, &st);
		for (char *line = a.fsck_lists.buf; *line;) {
			char *nl = strchr(line, '\n');
			*nl = '\0';
			if (fsck_set_msg_types(st.fsck, line, &err) < 0)
				die_error(&err);
			line = nl + 1;
		}
	}
	opts.each_object = each_object;
	opts.cb_data = &st;
	if (a.fix_thin)
		opts.read_base = read_base;

	if (a.from_stdin) {
		char *dir;
		if (a.pack_name) {
			const char *slash = strrchr(a.pack_name, '/');
			dir = slash ? xstrndup(a.pack_name, slash - a.pack_name) : xstrdup(".");
		} else {
			dir = repo_obj_path(repo, "pack");
			/* git recreates a missing objects/pack */
			mkdir(dir, 0777);
		}
		tmp_pack = receive_pack_file(&a, opts.algo, dir, &rest);
		free(dir);
		/* receive-pack may now send keepalives: the input is all read */
		if (a.report_eoi)
			write_in_full(2, "", 1);
		pack_path = xstrdup(tmp_pack);
		opts.progress_title = "";
	} else {
		struct stat sb;
		pack_path = xstrdup(a.pack_name);
		if (!a.index_name && !ends_with(pack_path, ".pack"))
			die("packfile name '%s' does not end with '.pack'", pack_path);
		if (stat(pack_path, &sb) < 0)
			die("could not open '%s' for reading: %s", pack_path, strerror(errno));
		if (a.max_input_size && (uint64_t)sb.st_size > a.max_input_size)
		{
			char limit[32];
			humanize_size(limit, sizeof(limit), a.max_input_size);
			die("pack exceeds maximum allowed size (%s)", limit);
		}
		opts.progress_title = a.progress_title;
	}

	ret = pack_index(pack_path, &opts, &ip, &err);
	if (ret) {
		if (tmp_pack)
			unlink(tmp_pack);
		die_error(&err);
	}
	if (a.strict) {
		/* git's index-pack accepts an object twice, unless --strict */
		size_t rawsz = gp_hash_algos[opts.algo].rawsz;
		for (uint32_t i = 1; i < ip->nr; i++) {
			const unsigned char *prev = ip->oids + (size_t)ip->by_name[i - 1] * rawsz;
			const unsigned char *cur = ip->oids + (size_t)ip->by_name[i] * rawsz;
			if (!memcmp(prev, cur, rawsz)) {
				if (tmp_pack)
					unlink(tmp_pack);
				die("The same object %s appears twice in the pack",
				    hash_to_hex_r(hex, cur, rawsz));
			}
		}
	}
	if (st.want_links) {
		self_contained = check_connected(&st, ip);
		if (!self_contained && !a.check_self_contained)
			self_contained = true;
	}
	hash_to_hex_r(hex, ip->pack_hash, gp_hash_algos[opts.algo].rawsz);

	if (a.from_stdin) {
		char *final_pack, *keep_path, *promisor_path;
		if (a.pack_name) {
			final_pack = xstrdup(a.pack_name);
		} else {
			char *rel = xstrfmt("pack/pack-%s.pack", hex);
			final_pack = repo_obj_path(repo, rel);
			free(rel);
		}
		idx_path = a.index_name ? xstrdup(a.index_name) : replace_ext(final_pack, ".pack", ".idx");
		if (!idx_path)
			die("packfile name '%s' does not end with '.pack'", final_pack);
		/* .keep and .promisor first: a repack must not take the pack away. */
		keep_path = replace_ext(final_pack, ".pack", ".keep");
		if (a.keep_msg && keep_path) {
			ret = write_marker_file(keep_path, a.keep_msg, "keep", &err);
			if (ret < 0)
				goto fail_tmp;
			keep_created = ret > 0;
		}
		free(keep_path);
		promisor_path = replace_ext(final_pack, ".pack", ".promisor");
		if (a.promisor_msg && promisor_path &&
		    write_marker_file(promisor_path, a.promisor_msg, "promisor", &err) < 0) {
			free(promisor_path);
			goto fail_tmp;
		}
		free(promisor_path);
		/* The pack first, the .rev next, the .idx last: readers look for the .idx. */
		if (!access(final_pack, F_OK)) {
			unlink(tmp_pack);
		} else if (rename(tmp_pack, final_pack) < 0) {
			gp_error_errno(&err, "unable to rename '%s' to '%s'", tmp_pack, final_pack);
			goto fail_tmp;
		}
		free(pack_path);
		pack_path = final_pack;
		FREE_AND_NULL(tmp_pack);
	} else {
		idx_path = a.index_name ? xstrdup(a.index_name) : replace_ext(pack_path, ".pack", ".idx");
		if (a.keep_msg) {
			char *keep_path = replace_ext(pack_path, ".pack", ".keep");
			if (keep_path && write_marker_file(keep_path, a.keep_msg, "keep", &err) < 0)
				die_error(&err);
			free(keep_path);
		}
	}
	rev_path = ends_with(idx_path, ".idx") ? replace_ext(idx_path, ".idx", ".rev")
					       : xstrfmt("%s.rev", idx_path);

	if (a.verify) {
		struct strbuf want = STRBUF_INIT;
		/* The index is rebuilt as the existing one was written: its version, its 64-bit offsets. */
		verify_like_existing(idx_path, opts.algo, &a.idx);
		ret = indexed_pack_write_idx(ip, NULL, &want, &a.idx, &err);
		if (!ret)
			ret = verify_against(idx_path, &want, &err);
		if (!ret && a.rev_index && !access(rev_path, F_OK) && verify_rev(ip, rev_path, &err))
			ret = gp_error_set(&err, GP_ECORRUPT, "%s: reverse-index validation error: "
					   "it does not match the pack", rev_path);
		strbuf_release(&want);
		if (ret)
			die_error(&err);
		if (a.stat)
			print_verify_stats(ip, a.stat_only);
	} else {
		if (a.rev_index && indexed_pack_write_rev(ip, rev_path, &err))
			die_error(&err);
		if (indexed_pack_write_idx(ip, idx_path, NULL, &a.idx, &err)) {
			if (a.rev_index)
				unlink(rev_path);
			die_error(&err);
		}
	}

	if (a.from_stdin) {
		printf("%s\t%s\n", keep_created ? "keep" : "pack", hex);
		fwrite(rest.buf, 1, rest.len, stdout);
	} else if (!a.verify) {
		printf("%s\n", hex);
	}
	fflush(stdout);
	/* The .gitmodules and .gitattributes blobs trees named, read now that the pack is in. */
	if (st.fsck) {
		if (fsck_pending_nr(st.fsck) && !repo)
			die("cannot perform queued object checks outside of a repository");
		if (st.odb)
			odb_reprepare(st.odb);
		if (fsck_pending_nr(st.fsck) && !a.verify &&
		    !pack_open_idx(&st.written, idx_path, opts.algo, &err)) {
			free(st.written->pack_path);
			st.written->pack_path = xstrdup(pack_path);
			if (pack_open_pack(st.written, &err)) {
				pack_free(st.written);
				st.written = NULL;
			}
			st.reader = pack_reader_new(0);
		}
		gp_error_clear(&err);
		if (fsck_finish(st.fsck, ip_fsck_read, &st))
			die("fsck error in pack objects");
	}
	if (a.promisor_msg && repo && !a.verify)
		repack_local_links(repo, ip);
	goto out;
fail_tmp:
	unlink(tmp_pack);
	die_error(&err);
out:
	indexed_pack_free(ip);
	free(st.links.slots);
	oidset_release(&st.shallow);
	fsck_options_free(st.fsck);
	pack_free(st.written);
	pack_reader_free(st.reader);
	strbuf_release(&a.fsck_lists);
	strbuf_release(&rest);
	free(pack_path);
	free(idx_path);
	free(rev_path);
	free(tmp_pack);
	gp_error_clear(&err);
	return self_contained ? 0 : 1;
}
