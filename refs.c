/*
 * refs.c: loose refs and packed-refs, as git's "files" ref backend lays
 * them out (gitrepository-layout(5) under "refs", "packed-refs" and
 * "HEAD"; git-pack-refs(1); git-check-ref-format(1)).
 *
 * packed-refs:
 *
 *   [# pack-refs with: <trait> <trait>... LF]       optional, first line
 *   <hex oid> SP <refname> LF                        one per ref
 *   [^<hex oid> LF]                                  what the ref above peels to
 *
 * Traits git writes: "peeled" (every ref under refs/tags/ that peels
 * has a "^" line), "fully-peeled" (every ref that peels has one) and
 * "sorted" (lines in strcmp() order of refname). We check the order
 * ourselves and sort when it is wrong, so "sorted" is not trusted. Every
 * line must end in LF; anything else is GP_ECORRUPT naming the line. A
 * line whose refname is not well formed is kept as a broken ref, as git
 * keeps it, unless the name could escape refs/ (then it is corrupt, as
 * git calls it "dangerous"). Duplicate lines are tolerated; the first
 * counts, and iteration reports the name once.
 *
 * The parsed file is a refcounted snapshot: an iteration holds its
 * snapshot while its callback runs, so a callback may resolve refs (and
 * so reload packed-refs) without pulling the entries from under it.
 *
 * The file is mapped, not copied, and never written to. Loading it
 * checks every line once (structure, hex digits, refname, order) into
 * an array of two words per ref, the line's offset and the name's
 * length with flags: names and ids stay in the map, an id is decoded
 * only for a caller that wants an object_id, and copied as hex for one
 * that prints it (refs_for_each_view()).
 *
 * NEEDSWORK: git binary-searches the mapped file for a lookup without
 * reading the rest; a process that resolves a name or two in a huge
 * packed-refs still pays for checking every line here.
 */
#include "refs.h"
#include "config.h"
#include "error.h"
#include "reftable.h"
#include "repository.h"
#include "strbuf.h"
#include <dirent.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>

/* A loose ref file is read up to this size; git's are tiny. */
#define LOOSE_REF_MAX 8192

/* ---- refname rules --------------------------------------------------- */

/*
 * The bytes refname_is_valid() looks at: 1 for those never allowed
 * (control characters, space, ~ ^ : ? * [ \\), 2 for those that matter
 * by their neighbours (/ . @ {); 0 for the rest, which the scan skips.
 */
static const unsigned char refname_class[256] = {
	[0 ... 0x1f] = 1, [0x7f] = 1,
	[' '] = 1, ['~'] = 1, ['^'] = 1, [':'] = 1, ['?'] = 1, ['*'] = 1, ['['] = 1, ['\\'] = 1,
	['/'] = 2, ['.'] = 2, ['@'] = 2, ['{'] = 2,
};

bool refname_is_valid_len(const char *name, size_t len, unsigned flags)
{
	const char *comp = name, *end = name + len, *p = name;
	bool has_slash = false;

	if (!len || (len == 1 && name[0] == '@') || name[len - 1] == '.')
		return false;
	for (;; p++) {
		while (p < end && !refname_class[(unsigned char)*p])
			p++;
		if (p == end || *p == '/') {
			size_t clen = (size_t)(p - comp);
			if (!clen || comp[0] == '.')
				return false;
			if (clen >= 5 && !memcmp(p - 5, ".lock", 5))
				return false;
			if (p == end)
				break;
			has_slash = true;
			comp = p + 1;
			continue;
		}
		if (refname_class[(unsigned char)*p] == 1)
			return false;
		if (p + 1 < end && ((p[0] == '.' && p[1] == '.') || (p[0] == '@' && p[1] == '{')))
			return false;
	}
	return has_slash || (flags & REFNAME_ALLOW_ONELEVEL);
}

bool refname_is_valid(const char *name, unsigned flags)
{
	return refname_is_valid_len(name, strlen(name), flags);
}

/*
 * Whether a name that fails refname_is_valid() can still be kept as a
 * broken ref rather than refused: it stays inside refs/ (no empty, "."
 * or ".." component), or is all capitals and underscores like HEAD.
 */
static bool refname_is_safe(const char *name)
{
	const char *rest;
	if (skip_prefix(name, "refs/", &rest)) {
		for (const char *comp = rest;;) {
			size_t len = strcspn(comp, "/");
			if (!len || (len == 1 && comp[0] == '.') ||
			    (len == 2 && comp[0] == '.' && comp[1] == '.'))
				return false;
			if (!comp[len])
				return true;
			comp += len + 1;
		}
	}
	if (!*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || *p == '_'))
			return false;
	return true;
}

/* ---- packed-refs ----------------------------------------------------- */

enum packed_entry_flags {
	PACKED_HAS_PEELED = 1 << 0,  /* a "^" line follows */
	PACKED_KNOWS_PEELED = 1 << 1,
	PACKED_BROKEN = 1 << 2,      /* the refname is not well formed */
	PACKED_HEX_UPPER = 1 << 3,   /* an id has capital digits: not copied out as is */
};
#define PACKED_FLAG_BITS 4
/* A longer line is refused: no refname is this long. */
#define PACKED_NAME_MAX ((UINT32_C(1) << (32 - PACKED_FLAG_BITS)) - 1)

/*
 * One ref line, found and checked at load: the id stays as hex in the
 * map (decoded when a caller wants an object_id, copied when it wants
 * hex), so an entry is two words.
 */
struct packed_entry {
	uint32_t ofs;               /* of the line in the snapshot's buf */
	uint32_t len_flags;         /* name length << PACKED_FLAG_BITS | enum packed_entry_flags */
};

struct packed_snapshot {
	unsigned refcount;
	const char *buf;            /* the file, mapped (or borrowed, unmapped) */
	size_t buf_len;
	bool mapped;
	int algo;
	size_t hexsz;
	struct packed_entry *entries; /* sorted by name */
	size_t nr;
};

static size_t entry_name_len(const struct packed_entry *e)
{
	return e->len_flags >> PACKED_FLAG_BITS;
}

static unsigned entry_flags(const struct packed_entry *e)
{
	return e->len_flags & ((1u << PACKED_FLAG_BITS) - 1);
}

static const char *entry_hex(const struct packed_snapshot *snap, const struct packed_entry *e)
{
	return snap->buf + e->ofs;
}

/* Ended by LF, not NUL. */
static const char *entry_name(const struct packed_snapshot *snap, const struct packed_entry *e)
{
	return snap->buf + e->ofs + snap->hexsz + 1;
}

/* With PACKED_HAS_PEELED: the hex of the "^" line right after the ref's. */
static const char *entry_peeled_hex(const struct packed_snapshot *snap,
				    const struct packed_entry *e)
{
	return entry_name(snap, e) + entry_name_len(e) + 2;
}

/* strcmp() of two names given as (pointer, length). */
static int name_cmp(const char *a, size_t a_len, const char *b, size_t b_len)
{
	int c = memcmp(a, b, MIN(a_len, b_len));
	if (c)
		return c;
	return a_len < b_len ? -1 : a_len > b_len;
}

/* strcmp() of an entry's name and key. */
static int entry_cmp_key(const struct packed_snapshot *snap, const struct packed_entry *e,
			 const char *key, size_t key_len)
{
	return name_cmp(entry_name(snap, e), entry_name_len(e), key, key_len);
}

static bool entry_has_prefix(const struct packed_snapshot *snap, const struct packed_entry *e,
			     const char *prefix, size_t len)
{
	return entry_name_len(e) >= len && !memcmp(entry_name(snap, e), prefix, len);
}

/* What we knew of packed-refs when we read it. */
struct file_validity {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct timespec ctime;
};

struct ref_store {
	char *packed_path;
	struct packed_snapshot *snap; /* NULL until first read */
	struct file_validity validity;
	/*
	 * reftable: the common directory's stack, and a linked worktree's
	 * own one (its HEAD and per-worktree refs); NULL until first read.
	 */
	struct reftable_stack *rt_main, *rt_worktree;
};

static void snapshot_put(struct packed_snapshot *snap)
{
	if (!snap || --snap->refcount)
		return;
	if (snap->mapped)
		munmap((void *)snap->buf, snap->buf_len);
	else
		free((void *)snap->buf);
	free(snap->entries);
	free(snap);
}

void ref_store_free(struct ref_store *refs)
{
	if (!refs)
		return;
	snapshot_put(refs->snap);
	reftable_stack_free(refs->rt_main);
	reftable_stack_free(refs->rt_worktree);
	free(refs->packed_path);
	free(refs);
}

static struct ref_store *get_store(struct repository *repo)
{
	if (!repo->refs) {
		repo->refs = xcalloc(1, sizeof(*repo->refs));
		repo->refs->packed_path = xstrfmt("%s/packed-refs", repo->commondir);
	}
	return repo->refs;
}

static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct packed_snapshot *snap = ctx;
	const struct packed_entry *x = a, *y = b;
	return name_cmp(entry_name(snap, x), entry_name_len(x), entry_name(snap, y),
			entry_name_len(y));
}

/* Exactly hexsz hex digits at p, within avail bytes. */
static bool parse_hex_at(const char *p, size_t avail, int algo, struct object_id *oid)
{
	if (avail < gp_hash_algos[algo].hexsz)
		return false;
	return !hex_to_oid(p, algo, oid);
}

/*
 * Whether the hexsz bytes at p are hex digits, without decoding them:
 * 0 if not, PACKED_HEX_UPPER if some are capitals, else 1.
 */
static unsigned check_hex(const char *p, size_t hexsz)
{
	int scan = hex_scan(p, hexsz);
	return scan < 0 ? 0 : scan ? PACKED_HEX_UPPER : 1;
}

static bool has_traits(const char *traits, size_t len, const char *want)
{
	size_t wlen = strlen(want);
	for (size_t pos = 0; pos < len;) {
		size_t end = pos;
		while (end < len && traits[end] != ' ')
			end++;
		if (end - pos == wlen && !memcmp(traits + pos, want, wlen))
			return true;
		pos = end + 1;
	}
	return false;
}

/*
 * Find and check the lines of buf[0..len) (owned by snap, which must
 * have buf set) into snap's entries, without writing to it (it may be
 * mapped read-only) and without decoding the ids. path is for messages.
 * The entries are allocated once, for as many ref lines as len can
 * hold: the pages never reached cost nothing, and nothing is moved.
 */
static int parse_packed(struct packed_snapshot *snap, size_t len, const char *path,
			int algo, struct gp_error *err)
{
	static const char header[] = "# pack-refs with:";
	size_t hexsz = gp_hash_algos[algo].hexsz, pos = 0, line_nr = 0;
	bool peeled_tags = false, fully_peeled = false, sorted = true;
	const char *buf = snap->buf;
	struct packed_entry *prev = NULL;

	snap->algo = algo;
	snap->hexsz = hexsz;
	if (len > UINT32_MAX)
		return gp_error_set(err, GP_ENOMEM, "%s: too large (%zu bytes)", path, len);
	/* a ref line is hexsz + 3 bytes at least */
	snap->entries = xmalloc((len / (hexsz + 3) + 1) * sizeof(*snap->entries));
	while (pos < len) {
		const char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		const char *name;
		size_t line_len, name_len;
		unsigned hex_ok, flags = 0;

		line_nr++;
		if (!nl)
			return CORRUPT(err, "%s: line %zu: unterminated line", path, line_nr);
		line_len = (size_t)(nl - line);
		pos += line_len + 1;

		if (line_nr == 1 && line_len >= sizeof(header) - 1 &&
		    !memcmp(line, header, sizeof(header) - 1)) {
			const char *traits = line + sizeof(header) - 1;
			size_t tlen = line_len - (sizeof(header) - 1);
			fully_peeled = has_traits(traits, tlen, "fully-peeled");
			peeled_tags = has_traits(traits, tlen, "peeled");
			continue;
		}
		if (line_len && line[0] == '^') {
			/* prev's line is the one just before: a second "^" is refused */
			if (!prev || (prev->len_flags & PACKED_HAS_PEELED) || line_len != 1 + hexsz ||
			    !(hex_ok = check_hex(line + 1, hexsz)))
				return CORRUPT(err, "%s: line %zu: unexpected line '%.*s'",
					       path, line_nr, (int)MIN(line_len, 200), line);
			prev->len_flags |= PACKED_HAS_PEELED | PACKED_KNOWS_PEELED;
			if (hex_ok == PACKED_HEX_UPPER)
				prev->len_flags |= PACKED_HEX_UPPER;
			continue;
		}
		if (line_len < hexsz + 2 || line[hexsz] != ' ' ||
		    line_len - hexsz - 1 > PACKED_NAME_MAX || !(hex_ok = check_hex(line, hexsz)))
			return CORRUPT(err, "%s: line %zu: unexpected line '%.*s'",
				       path, line_nr, (int)MIN(line_len, 200), line);
		name = line + hexsz + 1;
		name_len = line_len - hexsz - 1;
		if (hex_ok == PACKED_HEX_UPPER)
			flags |= PACKED_HEX_UPPER;
		/* a NUL is a control character: only an invalid name can hold one */
		if (!refname_is_valid_len(name, name_len, REFNAME_ALLOW_ONELEVEL)) {
			char *copy;
			bool safe;
			if (memchr(name, '\0', name_len))
				return CORRUPT(err, "%s: line %zu: unexpected line '%.*s'",
					       path, line_nr, (int)MIN(line_len, 200), line);
			copy = xstrndup(name, name_len);
			safe = refname_is_safe(copy);
			free(copy);
			if (!safe)
				return CORRUPT(err, "%s: line %zu: dangerous refname '%.*s'",
					       path, line_nr, (int)MIN(name_len, 200), name);
			flags |= PACKED_BROKEN;
		}
		if (fully_peeled || (peeled_tags && name_len >= 10 && !memcmp(name, "refs/tags/", 10)))
			flags |= PACKED_KNOWS_PEELED;
		if (prev && sorted &&
		    name_cmp(entry_name(snap, prev), entry_name_len(prev), name, name_len) > 0)
			sorted = false;
		prev = &snap->entries[snap->nr++];
		prev->ofs = (uint32_t)(line - buf);
		prev->len_flags = (uint32_t)(name_len << PACKED_FLAG_BITS) | flags;
	}
	if (!sorted)
		qsort_r(snap->entries, snap->nr, sizeof(*snap->entries), cmp_entry, snap);
	return 0;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/*
 * The current packed-refs snapshot, re-read when the file changed.
 * The snapshot is borrowed (take a reference to keep it across calls
 * that may reload). Errors: GP_ECORRUPT, GP_EIO, GP_ENOMEM.
 */
static int packed_snapshot(struct repository *repo, struct packed_snapshot **out,
			   struct gp_error *err)
{
	struct ref_store *refs = get_store(repo);
	struct packed_snapshot *snap = NULL;
	struct file_validity now = { 0 };
	struct stat st;
	int fd = -1, ret = 0;

	*out = NULL;
	if (stat(refs->packed_path, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR) {
			ret = gp_error_errno(err, "cannot stat '%s'", refs->packed_path);
			goto out;
		}
	} else {
		now.exists = true;
		now.dev = st.st_dev;
		now.ino = st.st_ino;
		now.size = st.st_size;
		now.mtime = st.st_mtim;
		now.ctime = st.st_ctim;
	}
	if (refs->snap && refs->validity.exists == now.exists &&
	    (!now.exists ||
	     (refs->validity.dev == now.dev && refs->validity.ino == now.ino &&
	      refs->validity.size == now.size &&
	      same_time(&refs->validity.mtime, &now.mtime) &&
	      same_time(&refs->validity.ctime, &now.ctime)))) {
		*out = refs->snap;
		goto out;
	}

	snap = xcalloc(1, sizeof(*snap));
	snap->refcount = 1;
	if (now.exists) {
		size_t size;
		fd = open(refs->packed_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			now.exists = false;
		} else if (fd < 0 || fstat(fd, &st) < 0) {
			ret = gp_error_errno(err, "cannot read '%s'", refs->packed_path);
			goto out;
		} else if (!S_ISREG(st.st_mode)) {
			ret = CORRUPT(err, "'%s' is not a regular file", refs->packed_path);
			goto out;
		}
		if (now.exists) {
			/* take what we validate against from the file we read */
			now.dev = st.st_dev;
			now.ino = st.st_ino;
			now.size = st.st_size;
			now.mtime = st.st_mtim;
			now.ctime = st.st_ctim;
			if (st.st_size < 0 || (uint64_t)st.st_size >= SIZE_MAX) {
				ret = gp_error_set(err, GP_ENOMEM, "'%s' is too large", refs->packed_path);
				goto out;
			}
			size = (size_t)st.st_size;
			/*
			 * Mapped, as git maps it: packed-refs is replaced by a
			 * rename, never rewritten in place, so the pages we map
			 * stay the file we checked.
			 */
			if (size) {
				void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
				if (map == MAP_FAILED) {
					ret = gp_error_errno(err, "cannot mmap '%s'", refs->packed_path);
					goto out;
				}
				snap->buf = map;
				snap->buf_len = size;
				snap->mapped = true;
			}
			ret = parse_packed(snap, size, refs->packed_path, repo->hash_algo, err);
			if (ret)
				goto out;
		}
	}
	snapshot_put(refs->snap);
	refs->snap = snap;
	refs->validity = now;
	*out = snap;
	snap = NULL;
out:
	if (fd >= 0)
		close(fd);
	snapshot_put(snap);
	return ret;
}

/* The first entry whose name is >= key (nr when none). O(log n). */
static size_t packed_lower_bound(const struct packed_snapshot *snap, const char *key)
{
	size_t lo = 0, hi = snap->nr, key_len = strlen(key);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (entry_cmp_key(snap, &snap->entries[mid], key, key_len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct packed_entry *packed_find(const struct packed_snapshot *snap,
					      const char *name)
{
	size_t pos = packed_lower_bound(snap, name);
	if (pos < snap->nr && !entry_cmp_key(snap, &snap->entries[pos], name, strlen(name)))
		return &snap->entries[pos];
	return NULL;
}

/* ---- loose refs ------------------------------------------------------ */

/* Refs that live in each worktree's own git directory. */
static bool is_per_worktree(const char *name)
{
	return !strchr(name, '/') || starts_with(name, "refs/bisect/") ||
	       starts_with(name, "refs/worktree/") || starts_with(name, "refs/rewritten/");
}

static char *loose_ref_path(const struct repository *repo, const char *name)
{
	return xstrfmt("%s/%s", is_per_worktree(name) ? repo->gitdir : repo->commondir, name);
}

struct loose_value {
	struct object_id oid;  /* when target is NULL */
	char *target;          /* a symbolic ref: what it names; owned */
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Parse the content of a loose ref file; false when it is broken. */
static bool parse_loose(const char *buf, size_t len, bool truncated, int algo,
			struct loose_value *out, const char **why)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;

	if (len >= 4 && !memcmp(buf, "ref:", 4)) {
		size_t start = 4, end = len;
		while (start < len && is_space(buf[start]))
			start++;
		while (end > start && is_space(buf[end - 1]))
			end--;
		if (truncated) {
			*why = "symbolic ref too long";
			return false;
		}
		if (end == start || memchr(buf + start, '\0', end - start)) {
			*why = "symbolic ref to an invalid refname";
			return false;
		}
		out->target = xstrndup(buf + start, end - start);
		if (!refname_is_valid(out->target, REFNAME_ALLOW_ONELEVEL)) {
			FREE_AND_NULL(out->target);
			*why = "symbolic ref to an invalid refname";
			return false;
		}
		return true;
	}
	if (!parse_hex_at(buf, len, algo, &out->oid) ||
	    (len > hexsz && !is_space(buf[hexsz]))) {
		*why = "expected an object id or 'ref: <refname>'";
		return false;
	}
	if (oid_is_null(&out->oid)) {
		*why = "null object id";
		return false;
	}
	return true;
}

/*
 * Read the loose ref name. Errors: GP_ENOTFOUND (no such file, or a
 * directory), GP_ECORRUPT (broken; *broken is set), GP_EIO.
 */
static int read_loose(struct repository *repo, const char *name,
		      struct loose_value *out, bool *broken, struct gp_error *err)
{
	char *path = loose_ref_path(repo, name);
	char buf[LOOSE_REF_MAX];
	const char *why = NULL;
	struct stat st;
	ssize_t got;
	int fd = -1, ret = 0;

	memset(out, 0, sizeof(*out));
	*broken = false;
	if (lstat(path, &st) < 0) {
		/* a name too long for a file cannot be a loose ref */
		if (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG)
			ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
		else
			ret = gp_error_errno(err, "cannot stat '%s'", path);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		/* an old-style symbolic ref: a symlink to "refs/..." */
		got = readlink(path, buf, sizeof(buf) - 1);
		if (got < 0) {
			ret = gp_error_errno(err, "cannot read link '%s'", path);
			goto out;
		}
		buf[got] = '\0';
		if (starts_with(buf, "refs/") && refname_is_valid(buf, 0)) {
			out->target = xstrdup(buf);
			goto out;
		}
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR || errno == ENAMETOOLONG)
			ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
		else
			ret = gp_error_errno(err, "cannot open '%s'", path);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		ret = gp_error_errno(err, "cannot stat '%s'", path);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
		goto out;
	}
	got = read_in_full(fd, buf, sizeof(buf));
	if (got < 0) {
		ret = gp_error_errno(err, "cannot read '%s'", path);
		goto out;
	}
	if (!parse_loose(buf, (size_t)got, (size_t)got == sizeof(buf) &&
			 (uint64_t)st.st_size > sizeof(buf), repo->hash_algo, out, &why)) {
		*broken = true;
		ret = CORRUPT(err, "broken ref '%s' in %s: %s", name, path, why);
	}
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}

/* ---- reftable ---------------------------------------------------------- */

/*
 * Refs git keeps in files even in a reftable repository: they hold more
 * than a name and an id (FETCH_HEAD's lines, MERGE_HEAD's parents).
 */
static bool is_special_ref(const char *name)
{
	return !strcmp(name, "FETCH_HEAD") || !strcmp(name, "MERGE_HEAD");
}

/*
 * The reftable stack that holds name's kind of ref: in a linked worktree,
 * its own stack for per-worktree refs, else the common directory's.
 * Re-read when tables.list changed (one stat()); borrowed: take a
 * reference to keep it across calls that may reload.
 */
static int rt_stack(struct repository *repo, bool per_worktree,
		    struct reftable_stack **out, struct gp_error *err)
{
	struct ref_store *refs = get_store(repo);
	bool own = per_worktree && strcmp(repo->gitdir, repo->commondir) != 0;
	struct reftable_stack **slot = own ? &refs->rt_worktree : &refs->rt_main;
	struct reftable_stack *st;
	char *dir;
	int ret;

	if (*slot && reftable_stack_is_current(*slot)) {
		*out = *slot;
		return 0;
	}
	dir = xstrfmt("%s/reftable", own ? repo->gitdir : repo->commondir);
	ret = reftable_stack_open(&st, dir, repo->hash_algo, *slot, err);
	free(dir);
	if (ret)
		return ret;
	reftable_stack_free(*slot);
	*slot = st;
	*out = st;
	return 0;
}

/*
 * One level of name in a reftable repository, as read_loose() reads a
 * file. Errors: GP_ENOTFOUND, GP_ECORRUPT (broken: *broken set; or a
 * corrupt table), GP_EIO.
 */
static int read_reftable(struct repository *repo, const char *name,
			 struct loose_value *out, bool *broken, struct gp_error *err)
{
	struct strbuf target = STRBUF_INIT;
	struct reftable_stack *st;
	struct reftable_ref ref;
	int ret;

	memset(out, 0, sizeof(*out));
	*broken = false;
	if (is_special_ref(name))
		return read_loose(repo, name, out, broken, err);
	ret = rt_stack(repo, is_per_worktree(name), &st, err);
	if (!ret)
		ret = reftable_stack_read_ref(st, name, &ref, &target, err);
	if (ret)
		goto out;
	if (ref.type == REFTABLE_REF_SYMREF) {
		if (!refname_is_valid(ref.target, REFNAME_ALLOW_ONELEVEL)) {
			*broken = true;
			ret = CORRUPT(err, "broken ref '%s' in the reftable: symbolic ref to an invalid refname",
				      name);
			goto out;
		}
		out->target = strbuf_detach(&target, NULL);
	} else if (oid_is_null(&ref.oid)) {
		*broken = true;
		ret = CORRUPT(err, "broken ref '%s' in the reftable: null object id", name);
	} else {
		out->oid = ref.oid;
	}
out:
	strbuf_release(&target);
	return ret;
}

/* ---- resolving ------------------------------------------------------- */

/*
 * One level of name from whichever backend holds it: its id or symref
 * target in *val, and REF_ISPACKED added to *flags when packed-refs gave
 * it. Errors: GP_ENOTFOUND (with no message: the caller words it),
 * GP_ECORRUPT (*broken when the ref itself is broken), GP_EIO.
 */
static int read_ref_level(struct repository *repo, const char *name,
			  struct loose_value *val, bool *broken, unsigned *flags,
			  struct gp_error *err)
{
	struct packed_snapshot *snap;
	const struct packed_entry *e;
	int ret;

	if (repo->ref_storage == REF_STORAGE_REFTABLE)
		return read_reftable(repo, name, val, broken, err);
	ret = read_loose(repo, name, val, broken, err);
	if (ret != GP_ENOTFOUND)
		return ret;
	gp_error_clear(err);
	ret = packed_snapshot(repo, &snap, err);
	if (ret)
		return ret;
	e = packed_find(snap, name);
	if (!e)
		return GP_ENOTFOUND;
	if (entry_flags(e) & PACKED_BROKEN) {
		*broken = true;
		return CORRUPT(err, "%s: packed ref '%s' has an invalid name",
			       get_store(repo)->packed_path, name);
	}
	/* checked at load */
	hex_to_oid(entry_hex(snap, e), snap->algo, &val->oid);
	*flags |= REF_ISPACKED;
	return 0;
}

static int resolve(struct repository *repo, const char *name, struct object_id *oid,
		   char **resolved_out, unsigned *flags_out, struct gp_error *err)
{
	char *cur = xstrdup(name);
	unsigned flags = 0;
	int ret;

	oid_clear(oid, repo->hash_algo);
	if (!refname_is_valid(name, REFNAME_ALLOW_ONELEVEL)) {
		ret = gp_error_set(err, GP_EINVAL, "'%s' is not a valid refname", name);
		goto out;
	}
	for (int depth = 0;; depth++) {
		struct loose_value val;
		bool broken = false;

		memset(&val, 0, sizeof(val));
		ret = read_ref_level(repo, cur, &val, &broken, &flags, err);
		if (ret == GP_ENOTFOUND) {
			if (depth)
				ret = gp_error_set(err, GP_ENOTFOUND,
						   "ref '%s' points to '%s', which does not exist",
						   name, cur);
			else
				ret = gp_error_set(err, GP_ENOTFOUND, "ref '%s' not found", name);
			goto out;
		}
		if (ret) {
			if (broken)
				flags |= REF_ISBROKEN;
			goto out;
		}
		if (!val.target) {
			*oid = val.oid;
			goto out;
		}
		flags |= REF_ISSYMREF;
		free(cur);
		cur = val.target;
		if (depth + 1 >= REFS_MAX_SYMREF_DEPTH) {
			flags |= REF_ISBROKEN;
			ret = CORRUPT(err, "broken ref '%s': more than %d symbolic refs in a row",
				      name, REFS_MAX_SYMREF_DEPTH - 1);
			goto out;
		}
	}
out:
	if (ret)
		oid_clear(oid, repo->hash_algo);
	if (resolved_out)
		*resolved_out = ret ? NULL : cur;
	if (ret || !resolved_out)
		free(cur);
	if (flags_out)
		*flags_out = flags;
	return ret;
}

int refs_resolve_ext(struct repository *repo, const char *name,
		     struct object_id *oid, char **resolved_name_out,
		     unsigned *flags_out, struct gp_error *err)
{
	return resolve(repo, name, oid, resolved_name_out, flags_out, err);
}

int refs_resolve(struct repository *repo, const char *name, struct object_id *oid,
		 char **resolved_name_out, struct gp_error *err)
{
	return resolve(repo, name, oid, resolved_name_out, NULL, err);
}

int refs_read_symref(struct repository *repo, const char *name,
		     char **target_out, struct gp_error *err)
{
	struct loose_value val;
	bool broken;
	int ret;

	*target_out = NULL;
	if (!refname_is_valid(name, REFNAME_ALLOW_ONELEVEL))
		return gp_error_set(err, GP_EINVAL, "'%s' is not a valid refname", name);
	/* packed-refs holds no symbolic refs */
	if (repo->ref_storage == REF_STORAGE_REFTABLE)
		ret = read_reftable(repo, name, &val, &broken, err);
	else
		ret = read_loose(repo, name, &val, &broken, err);
	if (ret)
		return ret;
	if (!val.target)
		return gp_error_set(err, GP_ENOTFOUND, "ref '%s' is not a symbolic ref", name);
	*target_out = val.target;
	return 0;
}

/* ---- iterating ------------------------------------------------------- */

struct loose_ref {
	char *name;
	size_t name_len;
	struct object_id oid;
	unsigned flags;
};

struct loose_list {
	struct loose_ref *items;
	size_t nr, alloc;
};

static int cmp_loose(const void *a, const void *b)
{
	return strcmp(((const struct loose_ref *)a)->name, ((const struct loose_ref *)b)->name);
}

static void loose_list_release(struct loose_list *list)
{
	for (size_t i = 0; i < list->nr; i++)
		free(list->items[i].name);
	free(list->items);
}

/*
 * Add the loose ref rel (read from base) to list, when it starts with
 * prefix. A ref that fails to resolve is added as broken.
 */
static int add_loose(struct repository *repo, const char *rel, const char *prefix,
		     struct loose_list *list, struct gp_error *err)
{
	struct loose_ref item = { NULL, 0, { { 0 }, 0 }, 0 };
	struct gp_error sub = GP_ERROR_INIT;
	int ret = 0;

	if (!starts_with(rel, prefix))
		return 0;
	item.name_len = strlen(rel);
	item.name = xstrndup(rel, item.name_len);
	if (!refname_is_valid_len(rel, item.name_len, 0)) {
		item.flags = REF_ISBROKEN;
		oid_clear(&item.oid, repo->hash_algo);
	} else {
		ret = resolve(repo, rel, &item.oid, NULL, &item.flags, &sub);
		if (ret == GP_ECORRUPT && (item.flags & REF_ISBROKEN)) {
			ret = 0;
		} else if (ret == GP_ENOTFOUND) {
			/* a dangling symref, or a file that went away */
			item.flags |= REF_ISBROKEN;
			ret = 0;
		} else if (ret) {
			gp_error_set(err, ret, "%s", gp_error_msg(&sub));
			free(item.name);
			goto out;
		}
		if (item.flags & REF_ISBROKEN)
			oid_clear(&item.oid, repo->hash_algo);
		/* the value is loose, even when a symref led to a packed one */
		item.flags &= ~(unsigned)REF_ISPACKED;
	}
	ALLOC_GROW(list->items, list->nr + 1, list->alloc);
	list->items[list->nr++] = item;
out:
	gp_error_clear(&sub);
	return ret;
}

/*
 * Collect the loose refs under <base>/<start_dir> (start_dir ends in
 * '/', e.g. "refs/heads/") whose names start with prefix, skipping the
 * directories in skip (per-worktree ones read from elsewhere). Walks
 * directories with an explicit work list, not recursion, so deep trees
 * cannot exhaust the stack.
 */
static int collect_loose(struct repository *repo, const char *base,
			 const char *start_dir, const char *prefix,
			 const char *const *skip, struct loose_list *list,
			 struct gp_error *err)
{
	char **todo = NULL;
	size_t todo_nr = 0, todo_alloc = 0;
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	int ret = 0;

	ALLOC_GROW(todo, todo_nr + 1, todo_alloc);
	todo[todo_nr++] = xstrdup(start_dir);
	while (todo_nr) {
		char *dir_rel = todo[--todo_nr];
		struct dirent *de;
		DIR *dir;
		bool skipped = false;

		for (size_t i = 0; skip && skip[i]; i++)
			if (starts_with(dir_rel, skip[i]))
				skipped = true;
		if (skipped) {
			free(dir_rel);
			continue;
		}

		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", base, dir_rel);
		dir = opendir(path.buf);
		if (!dir) {
			if (errno != ENOENT && errno != ENOTDIR)
				ret = gp_error_errno(err, "cannot read directory '%s'", path.buf);
			free(dir_rel);
			if (ret)
				goto out;
			continue;
		}
		while ((de = readdir(dir))) {
			struct stat st;
			bool is_dir;

			/* ".", "..", hidden files and lock files are not refs */
			if (de->d_name[0] == '.' || ends_with(de->d_name, ".lock"))
				continue;
			strbuf_reset(&rel);
			strbuf_addf(&rel, "%s%s", dir_rel, de->d_name);
			if (de->d_type == DT_DIR) {
				is_dir = true;
			} else if (de->d_type == DT_REG || de->d_type == DT_LNK) {
				is_dir = false;
			} else {
				strbuf_reset(&path);
				strbuf_addf(&path, "%s/%s", base, rel.buf);
				if (lstat(path.buf, &st) < 0)
					continue;
				is_dir = S_ISDIR(st.st_mode);
			}
			if (is_dir) {
				strbuf_addch(&rel, '/');
				/* only directories that can hold refs under prefix */
				if (!starts_with(rel.buf, prefix) && !starts_with(prefix, rel.buf))
					continue;
				ALLOC_GROW(todo, todo_nr + 1, todo_alloc);
				todo[todo_nr++] = strbuf_detach(&rel, NULL);
				continue;
			}
			ret = add_loose(repo, rel.buf, prefix, list, err);
			if (ret)
				break;
		}
		closedir(dir);
		free(dir_rel);
		if (ret)
			goto out;
	}
out:
	for (size_t i = 0; i < todo_nr; i++)
		free(todo[i]);
	free(todo);
	strbuf_release(&path);
	strbuf_release(&rel);
	return ret;
}

bool refs_paranoia(void)
{
	const char *v = getenv("GIT_REF_PARANOIA");
	bool on = true;
	if (v && !config_parse_bool(v, &on))
		on = true;   /* not a boolean: git keeps the default */
	return on;
}

/* Internal: what REFS_EACH_PARANOID becomes when paranoia is on. */
#define REFS_EACH_OMIT_DANGLING (1u << 8)

static const char *const per_worktree_dirs[] = {
	"refs/bisect/", "refs/worktree/", "refs/rewritten/", NULL,
};

/*
 * Where an iteration's refs go: fn wants object ids, view_fn hex (see
 * refs_for_each_view()); each side is made from the other on need.
 */
struct each_out {
	refs_each_fn *fn;
	refs_view_fn *view_fn;
	void *data;
	int algo;
};

/*
 * One ref to o. The id comes as oid or as hex (hexsz lowercase digits),
 * and so does what it peels to (both NULL when nothing is said).
 */
static int emit(struct each_out *o, const char *name, size_t name_len,
		const struct object_id *oid, const char *hex,
		const struct object_id *peeled, const char *peeled_hex, unsigned flags)
{
	struct object_id oid_buf, peeled_buf;
	char hex_buf[GP_MAX_HEXSZ + 1], peeled_hex_buf[GP_MAX_HEXSZ + 1];
	struct ref_view view;

	if (o->fn) {
		if (!oid) {
			hex_to_oid(hex, o->algo, &oid_buf);
			oid = &oid_buf;
		}
		if (!peeled && peeled_hex) {
			hex_to_oid(peeled_hex, o->algo, &peeled_buf);
			peeled = &peeled_buf;
		}
		return o->fn(name, oid, peeled, flags, o->data);
	}
	if (!hex)
		hex = oid_to_hex_r(hex_buf, oid);
	if (!peeled_hex && peeled)
		peeled_hex = oid_to_hex_r(peeled_hex_buf, peeled);
	view.name = name;
	view.name_len = name_len;
	view.hex = hex;
	view.peeled_hex = peeled_hex;
	view.flags = flags;
	return o->view_fn(&view, o->data);
}

/*
 * Pass one reftable record to fn as refs_for_each_ext() describes:
 * symbolic refs resolved, broken refs flagged (or skipped).
 */
static int each_reftable_ref(struct repository *repo, const struct reftable_ref *ref,
			     unsigned each_flags, struct each_out *o, struct gp_error *err)
{
	const struct object_id *peeled = NULL;
	struct object_id oid;
	unsigned flags = 0;
	int ret = 0;

	oid_clear(&oid, repo->hash_algo);
	if (!refname_is_valid(ref->name, 0)) {
		flags = REF_ISBROKEN;
	} else if (ref->type == REFTABLE_REF_SYMREF) {
		struct gp_error sub = GP_ERROR_INIT;
		ret = resolve(repo, ref->name, &oid, NULL, &flags, &sub);
		if (ret == GP_ECORRUPT && (flags & REF_ISBROKEN)) {
			ret = 0;
		} else if (ret == GP_ENOTFOUND) {
			/* a dangling symref, or one deleted meanwhile */
			flags |= REF_ISBROKEN;
			ret = 0;
		} else if (ret) {
			gp_error_move(err, &sub);
		}
		gp_error_clear(&sub);
		if (ret)
			return ret;
		if (flags & REF_ISBROKEN)
			oid_clear(&oid, repo->hash_algo);
	} else if (oid_is_null(&ref->oid)) {
		flags = REF_ISBROKEN;
	} else {
		oid = ref->oid;
		/*
		 * Git writes the peeled id of every ref that peels; an id
		 * alone is not a promise that it does not (other writers
		 * may not peel), so only VAL2 tells.
		 */
		if (ref->type == REFTABLE_REF_VAL2) {
			flags |= REF_KNOWS_PEELED;
			peeled = &ref->peeled;
		}
	}
	if ((flags & REF_ISBROKEN) && !(each_flags & REFS_EACH_BROKEN))
		return 0;
	/* a symref to nothing holds nothing: even paranoia passes it by */
	if ((flags & REF_ISBROKEN) && (flags & REF_ISSYMREF) &&
	    (each_flags & REFS_EACH_OMIT_DANGLING))
		return 0;
	return emit(o, ref->name, strlen(ref->name), &oid, NULL, peeled, NULL, flags);
}

/*
 * The next record of it that belongs to this view: in a linked worktree
 * the common stack's per-worktree refs are the main worktree's, and the
 * worktree's own stack has only those. 1 with *ref, 0 at the end.
 */
static int next_reftable_ref(struct reftable_iter *it, bool want_per_worktree,
			     bool linked, struct reftable_ref *ref, struct gp_error *err)
{
	for (;;) {
		int ret = reftable_iter_next_ref(it, ref, err);
		if (ret <= 0 || !linked)
			return ret;
		if (is_per_worktree(ref->name) == want_per_worktree)
			return 1;
	}
}

static int for_each_reftable(struct repository *repo, const char *prefix,
			     unsigned each_flags, struct each_out *o, struct gp_error *err)
{
	bool linked = strcmp(repo->gitdir, repo->commondir) != 0;
	/* only refs under refs/ are listed: prefix may be shorter ("re") */
	const char *seek = starts_with(prefix, "refs/") ? prefix : "refs/";
	struct reftable_iter *main_it = NULL, *wt_it = NULL;
	struct reftable_ref main_ref, wt_ref;
	struct reftable_stack *st;
	int main_has = 0, wt_has = 0, ret;

	ret = rt_stack(repo, false, &st, err);
	if (!ret)
		ret = reftable_stack_refs(st, seek, &main_it, err);
	for (size_t i = 0; !ret && linked && per_worktree_dirs[i]; i++) {
		const char *d = per_worktree_dirs[i];
		if (!starts_with(d, seek) && !starts_with(seek, d))
			continue;
		ret = rt_stack(repo, true, &st, err);
		if (!ret)
			ret = reftable_stack_refs(st, seek, &wt_it, err);
		break;
	}
	if (!ret)
		main_has = ret = next_reftable_ref(main_it, false, linked, &main_ref, err);
	if (ret >= 0 && wt_it)
		wt_has = ret = next_reftable_ref(wt_it, true, linked, &wt_ref, err);
	if (ret < 0)
		goto out;
	ret = 0;
	/* two sorted streams of distinct names, merged */
	while (main_has > 0 || wt_has > 0) {
		bool take_wt = wt_has > 0 &&
			       (main_has <= 0 || strcmp(wt_ref.name, main_ref.name) < 0);
		ret = each_reftable_ref(repo, take_wt ? &wt_ref : &main_ref, each_flags, o, err);
		if (ret)
			goto out;
		if (take_wt)
			wt_has = next_reftable_ref(wt_it, true, linked, &wt_ref, err);
		else
			main_has = next_reftable_ref(main_it, false, linked, &main_ref, err);
		if (main_has < 0 || wt_has < 0) {
			ret = main_has < 0 ? main_has : wt_has;
			goto out;
		}
	}
out:
	reftable_iter_free(main_it);
	reftable_iter_free(wt_it);
	return ret;
}

static int for_each(struct repository *repo, const char *prefix, unsigned each_flags,
		    struct each_out *o, struct gp_error *err)
{
	struct loose_list loose = { NULL, 0, 0 };
	struct packed_snapshot *snap = NULL;
	char *start_dir = NULL;
	const char *slash;
	size_t loose_pos = 0, packed_pos;
	const char *last = NULL;             /* the last name consumed (map or loose list) */
	size_t last_len = 0;
	struct strbuf namebuf = STRBUF_INIT; /* a packed name, NUL-terminated */
	bool linked = strcmp(repo->gitdir, repo->commondir) != 0;
	/* what a rewrite of packed-refs must carry over: names outside refs/ too */
	bool every_entry = (each_flags & REFS_EACH_PACKED_ONLY) && (!prefix || !*prefix);
	size_t prefix_len;
	int ret = 0;

	o->algo = repo->hash_algo;
	if ((each_flags & REFS_EACH_PARANOID) && refs_paranoia())
		each_flags |= REFS_EACH_BROKEN | REFS_EACH_OMIT_DANGLING;
	if (!prefix)
		prefix = "";
	prefix_len = strlen(prefix);
	/* only refs under refs/ are listed */
	if (!starts_with(prefix, "refs/") && !starts_with("refs/", prefix))
		goto out;
	if (repo->ref_storage == REF_STORAGE_REFTABLE) {
		if (each_flags & (REFS_EACH_LOOSE_ONLY | REFS_EACH_PACKED_ONLY))
			ret = gp_error_set(err, GP_EINVAL,
					   "a reftable repository has no loose or packed refs");
		else
			ret = for_each_reftable(repo, prefix, each_flags, o, err);
		goto out;
	}
	if (starts_with(prefix, "refs/")) {
		slash = strrchr(prefix, '/');
		start_dir = xstrndup(prefix, (size_t)(slash - prefix) + 1);
	} else {
		start_dir = xstrdup("refs/");
	}
	if (!(each_flags & REFS_EACH_PACKED_ONLY))
		ret = collect_loose(repo, repo->commondir, start_dir, prefix,
				    linked ? per_worktree_dirs : NULL, &loose, err);
	for (size_t i = 0; linked && !ret && !(each_flags & REFS_EACH_PACKED_ONLY) &&
			   per_worktree_dirs[i]; i++) {
		const char *d = per_worktree_dirs[i];
		if (starts_with(d, prefix))
			ret = collect_loose(repo, repo->gitdir, d, prefix, NULL, &loose, err);
		else if (starts_with(prefix, d))
			ret = collect_loose(repo, repo->gitdir, start_dir, prefix, NULL, &loose, err);
	}
	if (ret)
		goto out;
	if (loose.nr > 1)
		qsort(loose.items, loose.nr, sizeof(*loose.items), cmp_loose);
	/*
	 * packed-refs after the loose refs, as git reads them: "git
	 * pack-refs" writes packed-refs before it deletes the loose files,
	 * so a ref being packed meanwhile is seen in one or the other.
	 */
	if (each_flags & REFS_EACH_LOOSE_ONLY) {
		packed_pos = 0;
	} else {
		ret = packed_snapshot(repo, &snap, err);
		if (ret)
			goto out;
		snap->refcount++;
		packed_pos = every_entry ? 0 : packed_lower_bound(snap, *prefix ? prefix : "refs/");
	}
	for (;;) {
		const struct packed_entry *pe = NULL;
		const struct loose_ref *le = loose_pos < loose.nr ? &loose.items[loose_pos] : NULL;
		const char *name;
		size_t name_len;
		bool take_loose;

		if (snap && packed_pos < snap->nr) {
			pe = &snap->entries[packed_pos];
			/* the packed refs under prefix (and refs/) end at the first that is not */
			if (!every_entry && (!entry_has_prefix(snap, pe, prefix, prefix_len) ||
					     !entry_has_prefix(snap, pe, "refs/", 5))) {
				pe = NULL;
				packed_pos = snap->nr;
			}
		}
		if (!pe && !le)
			break;
		/* on a tie the loose ref comes first, and hides the packed one */
		take_loose = !pe || (le && entry_cmp_key(snap, pe, le->name, le->name_len) >= 0);
		if (take_loose) {
			loose_pos++;
			name = le->name;
			name_len = le->name_len;
		} else {
			packed_pos++;
			name = entry_name(snap, pe);
			name_len = entry_name_len(pe);
		}
		/* a name seen already: hidden, or a duplicate line in packed-refs */
		if (last && last_len == name_len && !memcmp(last, name, name_len))
			continue;
		last = name;
		last_len = name_len;
		if (take_loose) {
			if ((le->flags & REF_ISBROKEN) && !(each_flags & REFS_EACH_BROKEN))
				continue;
			/* a symref to nothing holds nothing: even paranoia passes it by */
			if ((le->flags & REF_ISBROKEN) && (le->flags & REF_ISSYMREF) &&
			    (each_flags & REFS_EACH_OMIT_DANGLING))
				continue;
			ret = emit(o, le->name, le->name_len, &le->oid, NULL, NULL, NULL, le->flags);
		} else {
			unsigned pflags = entry_flags(pe), flags = REF_ISPACKED;
			const char *hex = NULL, *peeled_hex = NULL;
			struct object_id oid, peeled;
			bool have_peeled = false;

			if ((pflags & PACKED_BROKEN) && !(each_flags & REFS_EACH_BROKEN))
				continue;
			strbuf_reset(&namebuf);
			strbuf_add(&namebuf, name, name_len);
			if (pflags & PACKED_BROKEN) {
				oid_clear(&oid, repo->hash_algo);
				ret = emit(o, namebuf.buf, name_len, &oid, NULL, NULL, NULL,
					   REF_ISPACKED | REF_ISBROKEN);
				goto next;
			}
			if (pflags & PACKED_KNOWS_PEELED) {
				flags |= REF_KNOWS_PEELED;
				have_peeled = pflags & PACKED_HAS_PEELED;
			}
			if (pflags & PACKED_HEX_UPPER) {
				/* checked at load; what goes out is lowercase, as git writes it */
				hex_to_oid(entry_hex(snap, pe), snap->algo, &oid);
				if (have_peeled)
					hex_to_oid(entry_peeled_hex(snap, pe), snap->algo, &peeled);
				ret = emit(o, namebuf.buf, name_len, &oid, NULL,
					   have_peeled ? &peeled : NULL, NULL, flags);
				goto next;
			}
			hex = entry_hex(snap, pe);
			if (have_peeled)
				peeled_hex = entry_peeled_hex(snap, pe);
			ret = emit(o, namebuf.buf, name_len, NULL, hex, NULL, peeled_hex, flags);
		}
	next:
		if (ret)
			goto out;
	}
out:
	free(start_dir);
	loose_list_release(&loose);
	snapshot_put(snap);
	strbuf_release(&namebuf);
	return ret;
}

int refs_for_each_ext(struct repository *repo, const char *prefix, unsigned each_flags,
		      refs_each_fn *fn, void *data, struct gp_error *err)
{
	struct each_out o = { .fn = fn, .data = data };
	return for_each(repo, prefix, each_flags, &o, err);
}

int refs_for_each_view(struct repository *repo, const char *prefix, unsigned each_flags,
		       refs_view_fn *fn, void *data, struct gp_error *err)
{
	struct each_out o = { .view_fn = fn, .data = data };
	return for_each(repo, prefix, each_flags, &o, err);
}

int refs_parse_packed_buf(const char *buf, size_t len, int algo,
			  refs_each_fn *fn, void *data, struct gp_error *err)
{
	struct packed_snapshot snap = { .refcount = 1, .buf = buf, .buf_len = len };
	struct strbuf namebuf = STRBUF_INIT;
	const struct packed_entry *last = NULL;
	int ret;

	ret = parse_packed(&snap, len, "packed-refs", algo, err);
	for (size_t pos = 0; !ret && pos < snap.nr; pos++) {
		const struct packed_entry *e = &snap.entries[pos];
		unsigned pflags = entry_flags(e), flags = REF_ISPACKED;
		struct object_id oid, peeled;
		if (last && !cmp_entry(last, e, &snap))
			continue;
		last = e;
		if (pflags & PACKED_BROKEN)
			flags |= REF_ISBROKEN;
		if (pflags & PACKED_KNOWS_PEELED)
			flags |= REF_KNOWS_PEELED;
		hex_to_oid(entry_hex(&snap, e), algo, &oid);
		if (pflags & PACKED_HAS_PEELED)
			hex_to_oid(entry_peeled_hex(&snap, e), algo, &peeled);
		strbuf_reset(&namebuf);
		strbuf_add(&namebuf, entry_name(&snap, e), entry_name_len(e));
		ret = fn(namebuf.buf, &oid, (pflags & PACKED_HAS_PEELED) ? &peeled : NULL,
			 flags, data);
	}
	free(snap.entries);
	strbuf_release(&namebuf);
	return ret;
}

int refs_parse_loose_buf(const char *buf, size_t len, int algo,
			 struct object_id *oid, char **target_out,
			 struct gp_error *err)
{
	struct loose_value val;
	const char *why = NULL;

	memset(&val, 0, sizeof(val));
	*target_out = NULL;
	oid_clear(oid, algo);
	if (!parse_loose(buf, len, false, algo, &val, &why))
		return CORRUPT(err, "broken ref: %s", why);
	if (!val.target)
		*oid = val.oid;
	*target_out = val.target;
	return 0;
}

int refs_for_each(struct repository *repo, const char *prefix,
		  refs_each_fn *fn, void *data, struct gp_error *err)
{
	return refs_for_each_ext(repo, prefix, 0, fn, data, err);
}

/* ---- reflogs ---------------------------------------------------------- */

/*
 * One reflog file: lines "<old> SP <new> SP <ident> TAB <message>". A
 * line that does not start with two names is skipped, as git skips it.
 */
static int each_reflog_file(const char *path, int algo, reflog_oid_fn *fn, void *data,
			    struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	size_t hexsz = gp_hash_algos[algo].hexsz;
	const char *p, *end;
	int ret = 0;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		ret = errno == ENOENT ? 0 : gp_error_errno(err, "cannot read '%s'", path);
		strbuf_release(&sb);
		return ret;
	}
	for (p = sb.buf, end = sb.buf + sb.len; p < end && !ret;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
		struct object_id old_oid, new_oid;
		if (len > 2 * hexsz + 1 && p[hexsz] == ' ' && p[2 * hexsz + 1] == ' ' &&
		    !hex_to_oid(p, algo, &old_oid) && !hex_to_oid(p + hexsz + 1, algo, &new_oid)) {
			if (!oid_is_null(&old_oid))
				ret = fn(&old_oid, data);
			if (!ret && !oid_is_null(&new_oid))
				ret = fn(&new_oid, data);
		}
		p += len + (eol ? 1 : 0);
	}
	strbuf_release(&sb);
	return ret;
}

/* Every file below dir, iteratively (a stack of directories). */
static int each_reflog_dir(const char *top, int algo, reflog_oid_fn *fn, void *data,
			   struct gp_error *err)
{
	char **stack = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr++] = xstrdup(top);
	while (nr) {
		char *dir = stack[--nr];
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && !ret && (de = readdir(d))) {
			char *path;
			struct stat st;
			if (de->d_name[0] == '.')
				continue;
			path = xstrfmt("%s/%s", dir, de->d_name);
			if (lstat(path, &st) < 0) {
				free(path);
			} else if (S_ISDIR(st.st_mode)) {
				ALLOC_GROW(stack, nr + 1, alloc);
				stack[nr++] = path;
			} else {
				ret = each_reflog_file(path, algo, fn, data, err);
				free(path);
			}
		}
		if (d)
			closedir(d);
		free(dir);
	}
	while (nr)
		free(stack[--nr]);
	free(stack);
	return ret;
}

/* Every id of the live log records of the stack in dir (see refs_for_each_reflog_oid()). */
static int each_reftable_log(struct reftable_stack *st, reflog_oid_fn *fn, void *data,
			     struct gp_error *err)
{
	struct reftable_iter *it = NULL;
	struct reftable_log log;
	int ret = reftable_stack_logs(st, NULL, &it, err);

	while (!ret && (ret = reftable_iter_next_log(it, &log, err)) > 0) {
		ret = 0;
		if (!oid_is_null(&log.old_oid))
			ret = fn(&log.old_oid, data);
		if (!ret && !oid_is_null(&log.new_oid))
			ret = fn(&log.new_oid, data);
	}
	reftable_iter_free(it);
	return ret;
}

int refs_for_each_reflog_oid(struct repository *repo, reflog_oid_fn *fn, void *data,
			     struct gp_error *err)
{
	bool reftable = repo->ref_storage == REF_STORAGE_REFTABLE;
	struct reftable_stack *st;
	char *path;
	int ret;
	DIR *d;
	struct dirent *de;

	if (reftable) {
		ret = rt_stack(repo, false, &st, err);
		if (!ret)
			ret = each_reftable_log(st, fn, data, err);
	} else {
		path = xstrfmt("%s/logs", repo->commondir);
		ret = each_reflog_dir(path, repo->hash_algo, fn, data, err);
		free(path);
	}
	/* Each linked worktree's own logs (HEAD's, in the files backend). */
	path = xstrfmt("%s/worktrees", repo->commondir);
	d = opendir(path);
	while (!ret && d && (de = readdir(d))) {
		char *log;
		if (de->d_name[0] == '.')
			continue;
		if (reftable) {
			log = xstrfmt("%s/%s/reftable", path, de->d_name);
			ret = reftable_stack_open(&st, log, repo->hash_algo, NULL, err);
			if (!ret) {
				ret = each_reftable_log(st, fn, data, err);
				reftable_stack_free(st);
			}
		} else {
			log = xstrfmt("%s/%s/logs/HEAD", path, de->d_name);
			ret = each_reflog_file(log, repo->hash_algo, fn, data, err);
		}
		free(log);
	}
	if (d)
		closedir(d);
	free(path);
	return ret;
}

/* ---- other worktrees' HEADs, one ref's reflog --------------------------- */

int refs_read_worktree_head(struct repository *repo, const char *wt_gitdir,
			    struct object_id *oid, struct gp_error *err)
{
	struct reftable_stack *st = NULL;
	struct strbuf target = STRBUF_INIT;
	struct reftable_ref ref;
	char *path;
	int ret;

	oid_clear(oid, repo->hash_algo);
	if (repo->ref_storage == REF_STORAGE_FILES) {
		struct strbuf sb = STRBUF_INIT;
		struct loose_value val;
		const char *why = NULL;

		memset(&val, 0, sizeof(val));
		path = xstrfmt("%s/HEAD", wt_gitdir);
		if (strbuf_read_file(&sb, path, 0) < 0)
			ret = gp_error_set(err, GP_ENOTFOUND, "cannot read '%s'", path);
		else if (!parse_loose(sb.buf, sb.len, false, repo->hash_algo, &val, &why))
			ret = gp_error_set(err, GP_ENOTFOUND, "%s: %s", path, why);
		else if (val.target)
			ret = gp_error_set(err, GP_ENOTFOUND, "%s: a symbolic ref", path);
		else
			ret = 0;
		if (!ret)
			*oid = val.oid;
		free(val.target);
		strbuf_release(&sb);
		free(path);
		return ret;
	}
	path = xstrfmt("%s/reftable", wt_gitdir);
	ret = reftable_stack_open(&st, path, repo->hash_algo, NULL, err);
	if (!ret)
		ret = reftable_stack_read_ref(st, "HEAD", &ref, &target, err);
	if (!ret && (ref.type == REFTABLE_REF_SYMREF || oid_is_null(&ref.oid)))
		ret = gp_error_set(err, GP_ENOTFOUND, "%s: HEAD is not detached", path);
	if (!ret)
		*oid = ref.oid;
	reftable_stack_free(st);
	strbuf_release(&target);
	free(path);
	return ret;
}

/* The files backend's reflog of a full refname. Caller frees. */
static char *reflog_file(const struct repository *repo, const char *refname)
{
	return xstrfmt("%s/logs/%s", is_per_worktree(refname) ? repo->gitdir : repo->commondir,
		       refname);
}

bool refs_reflog_exists(struct repository *repo, const char *refname)
{
	struct gp_error err = GP_ERROR_INIT;
	struct reftable_iter *it = NULL;
	struct reftable_stack *st;
	struct reftable_log log;
	bool exists;

	if (!refname_is_valid(refname, REFNAME_ALLOW_ONELEVEL))
		return false;
	if (repo->ref_storage == REF_STORAGE_FILES) {
		char *path = reflog_file(repo, refname);
		exists = !access(path, F_OK);
		free(path);
		return exists;
	}
	exists = !rt_stack(repo, is_per_worktree(refname), &st, &err) &&
		 !reftable_stack_logs(st, refname, &it, &err) &&
		 reftable_iter_next_log(it, &log, &err) > 0;
	reftable_iter_free(it);
	gp_error_clear(&err);
	return exists;
}

int refs_reflog_nth(struct repository *repo, const char *refname, size_t n,
		    struct object_id *oid, size_t *nr_out, struct gp_error *err)
{
	size_t hexsz = gp_hash_algos[repo->hash_algo].hexsz, nr = 0;
	struct reftable_iter *it = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct reftable_stack *st;
	struct reftable_log log;
	bool any = false, found = false;
	char *path = NULL;
	int ret;

	*nr_out = 0;
	oid_clear(oid, repo->hash_algo);
	if (!refname_is_valid(refname, REFNAME_ALLOW_ONELEVEL))
		return gp_error_set(err, GP_EINVAL, "'%s' is not a valid refname", refname);
	if (repo->ref_storage == REF_STORAGE_REFTABLE) {
		/* newest first; git's "existence marker" (both ids null) is no entry */
		ret = rt_stack(repo, is_per_worktree(refname), &st, err);
		if (!ret)
			ret = reftable_stack_logs(st, refname, &it, err);
		while (!ret && (ret = reftable_iter_next_log(it, &log, err)) > 0) {
			ret = 0;
			any = true;
			if (oid_is_null(&log.old_oid) && oid_is_null(&log.new_oid))
				continue;
			if (nr++ == n) {
				*oid = log.new_oid;
				found = true;
			}
		}
		if (!ret && !any)
			ret = gp_error_set(err, GP_ENOTFOUND, "no reflog for '%s'", refname);
		goto done;
	}

	/* "<old> <new> <ident> <date>\t<message>" lines, oldest first */
	path = reflog_file(repo, refname);
	if (strbuf_read_file(&sb, path, 0) < 0) {
		ret = gp_error_set(err, GP_ENOTFOUND, "no reflog for '%s'", refname);
		goto done;
	}
	for (size_t i = 0; i < sb.len; i++)
		nr += sb.buf[i] == '\n';
	if (sb.len && sb.buf[sb.len - 1] != '\n')
		nr++;
	ret = 0;
	if (n < nr) {
		const char *line = sb.buf;
		for (size_t i = 0; i < nr - 1 - n; i++)
			line = strchr(line, '\n') + 1;
		if ((size_t)(sb.buf + sb.len - line) < 2 * hexsz + 1 || line[hexsz] != ' ' ||
		    hex_to_oid(line + hexsz + 1, repo->hash_algo, oid))
			ret = CORRUPT(err, "%s: malformed reflog entry", path);
		else
			found = true;
	}
done:
	if (!ret && !found) {
		*nr_out = nr;
		ret = gp_error_set(err, GP_EINVAL, "log for '%s' only has %zu entries", refname, nr);
	}
	reftable_iter_free(it);
	strbuf_release(&sb);
	free(path);
	return ret;
}
