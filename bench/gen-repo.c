/*
 * gen-repo: write a deterministic `git fast-import` stream for a synthetic
 * repository, to benchmark gitpack against stock git on repositories of a
 * known shape and size. Standalone on purpose: it includes no gitpack
 * header, so a broken library never stops a benchmark from being set up.
 *
 *   bench/gen-repo [--size PRESET] [--commits N] [--files N] [--seed S]
 *                  [--branches N] | git fast-import --quiet
 *
 * The repository:
 *   - a tree of source-like text files (.c .h .py .sh .md .txt) in
 *     directories up to four levels deep, plus a few binary-ish .bin files;
 *   - one initial commit with all files on "main", then commits that each
 *     change, insert or delete a few lines in 1-5 files (hot files more
 *     often, often several files in one directory), occasionally add,
 *     remove or rename a file, touch a binary blob, or refactor 8-40 files
 *     at once;
 *   - several branches ("main", "next", "maint", "feature/...") that fork
 *     from main, get merged back with a three-way merge of their file
 *     states (fast-import "merge"), restart from the merge, and now and
 *     then merge main into themselves;
 *   - a tag every 25 commits on main, alternately annotated and lightweight;
 *   - fixed authors and time zones, timestamps from a fixed epoch.
 *
 * Everything derives from one splitmix64 stream seeded by --seed, and no
 * decision depends on --commits: the stream for N commits is a prefix of
 * the stream for M > N commits with the same other options. make-repo.sh
 * uses that to add incremental packs on top of a repacked base.
 *
 * Presets (--size; explicit options override them), measured with
 * git 2.39.5 after bench/make-repo.sh (fast-import, then repack -adfb
 * --window=10 --depth=50), seed 1, from `git count-objects -v` (in-pack)
 * and `git cat-file --batch-all-objects`; "tags" counts annotated tag
 * objects only (as many lightweight tags exist besides). "build" is the
 * whole make-repo.sh run on a shared 2-core machine (huge: 152 s at load
 * average 5, about 90 s on an idle machine). gen-repo itself writes the
 * huge stream (~500 MB) in about 2-3 s.
 *
 *   preset  commits  files  branches  objects  commits   trees   blobs  tags  pack      build
 *   tiny        100     60         2      728      100     318     309     1  0.2 MiB   0.4 s
 *   small     1,000    600         3    9,596    1,000   5,645   2,941    10  2.1 MiB   1.5 s
 *   medium    5,000  2,500         4   52,361    5,000  33,205  14,107    49  11 MiB    9 s
 *   large    20,000  8,000         5  209,794   20,000 135,232  54,364   198  40 MiB    35 s
 *   huge     50,000 16,000         6  524,066   50,000 341,405 132,163   498  97 MiB    152 s
 *   giant   100,000 24,000         7 1,039,493 100,000 682,701 255,797   995  see below
 *
 * giant was measured as make-repo.sh --packs 100 builds it for
 * bench/midx-write (a repacked base of 50,005 commits, then 99 packs of
 * 505 commits from one fast-import): 395 MiB in 100 packs, 412 s at
 * load average 4.5.
 *
 * Roughly 10.5 objects per commit: the commit, ~2.7 blobs and ~6.8 trees
 * (every touched path rewrites its trees up to the root).
 *
 * (Keep this table in step with GEN_VERSION: changing the generator
 * changes every object id, and make-repo.sh's cache keys on the version.)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_VERSION 1

/* ---- small helpers ------------------------------------------------------ */

static void die(const char *msg)
{
	fprintf(stderr, "gen-repo: %s\n", msg);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = xrealloc(NULL, len);
	memcpy(p, s, len);
	return p;
}

#define GROW(items, nr, alloc) do { \
	if ((nr) >= (alloc)) { \
		(alloc) = (alloc) < 16 ? 16 : (alloc) * 2; \
		(items) = xrealloc((items), (alloc) * sizeof(*(items))); \
	} \
} while (0)

/* splitmix64: tiny, fast, and the same on every platform. */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static uint32_t rng_below(uint32_t n)
{
	return (uint32_t)(((rng_next() >> 32) * (uint64_t)n) >> 32);
}

/* True with probability per_mille / 1000. */
static bool chance(uint32_t per_mille)
{
	return rng_below(1000) < per_mille;
}

/* A growable byte buffer. */
struct buf {
	unsigned char *p;
	size_t len, alloc;
};

static void buf_grow(struct buf *b, size_t extra)
{
	if (extra > SIZE_MAX / 2 - b->len)
		die("buffer too large");
	if (b->len + extra > b->alloc) {
		size_t want = b->alloc ? b->alloc : 256;
		while (want < b->len + extra)
			want *= 2;
		b->p = xrealloc(b->p, want);
		b->alloc = want;
	}
}

static void buf_add(struct buf *b, const void *data, size_t len)
{
	buf_grow(b, len);
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_putc(struct buf *b, char c)
{
	buf_grow(b, 1);
	b->p[b->len++] = (unsigned char)c;
}

static void buf_putu(struct buf *b, uint32_t v)
{
	char tmp[16];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu32, v);
	buf_add(b, tmp, (size_t)n);
}

/* ---- vocabulary ----------------------------------------------------------- */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const nouns[] = {
	"buffer", "index", "pack", "object", "entry", "offset", "count",
	"delta", "tree", "commit", "hash", "table", "cache", "reader",
	"writer", "stream", "header", "chunk", "bitmap", "revision",
	"parent", "child", "node", "list", "queue", "state", "config",
	"option", "value", "result", "error", "status", "flag", "mode",
	"path", "name", "size", "length", "base", "data", "item", "key",
	"map", "set", "ref", "branch", "tag", "blob", "window", "depth",
	"limit", "thread", "lock", "worker", "job", "task", "timer",
	"clock", "event", "signal", "socket", "client", "server", "request",
	"response", "session", "token", "parser", "lexer", "scanner",
	"symbol", "scope", "frame", "stack", "heap", "arena", "pool",
	"slab", "page", "block", "sector", "file", "inode", "mount",
	"device", "driver", "port", "pipe", "channel", "message", "packet",
	"route", "filter", "rule", "policy", "quota", "budget", "score",
	"weight", "rank", "level", "cursor", "range", "bucket", "slot",
};

static const char *const verbs[] = {
	"init", "release", "clear", "free", "open", "close", "read",
	"write", "parse", "format", "find", "insert", "remove", "update",
	"lookup", "resolve", "compute", "check", "verify", "load", "store",
	"flush", "sync", "reset", "apply", "emit", "scan", "walk", "sort",
	"merge", "split", "grow", "shrink", "encode", "decode", "prepare",
	"finish", "handle", "dispatch", "register",
};

static const char *const prose[] = {
	"the", "a", "this", "that", "when", "if", "because", "so", "we",
	"it", "is", "are", "was", "be", "can", "should", "must", "not",
	"only", "also", "each", "every", "all", "some", "more", "less",
	"before", "after", "while", "until", "of", "to", "in", "on", "for",
	"with", "without", "from", "into", "by", "at", "new", "old",
	"first", "last", "next", "other", "same", "small", "large", "fast",
	"slow", "safe", "simple", "correct", "broken", "missing", "extra",
	"caller", "callee", "user", "server", "client", "test", "bug",
	"fix", "change", "patch", "code", "function", "loop", "case",
	"memory", "disk", "network", "time", "order", "way", "point",
};

static const char *const types[] = {
	"int", "size_t", "uint32_t", "uint64_t", "const char *", "bool",
	"unsigned", "void *", "off_t", "ssize_t",
};

static const char *const authors[][3] = {
	/* name, email, tz */
	{ "Alice Maintainer", "alice@example.org", "+0100" },
	{ "Bob Builder", "bob@example.com", "-0500" },
	{ "Carol Coder", "carol@example.net", "+0000" },
	{ "Dmitri Delta", "dmitri@example.org", "+0300" },
	{ "Eiko Endian", "eiko@example.jp", "+0900" },
	{ "Femi Fanout", "femi@example.ng", "+0100" },
	{ "Gustavo Graph", "gustavo@example.br", "-0300" },
};

static const char *const top_dirs[] = {
	"src", "lib", "include", "tests", "docs", "tools", "scripts",
	"contrib", "vendor", "examples",
};

#define PICK(a) ((a)[rng_below(ARRAY_SIZE(a))])

/* ---- a set of strings, for unique paths ------------------------------------ */

static const char **pathset;
static size_t pathset_nr, pathset_cap;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* Adds s (borrowed; must stay valid) unless present. True if added. */
static bool pathset_add(const char *s)
{
	size_t pos;

	if (2 * (pathset_nr + 1) > pathset_cap) {
		const char **old = pathset;
		size_t old_cap = pathset_cap;
		pathset_cap = pathset_cap ? pathset_cap * 2 : 1024;
		pathset = xcalloc(pathset_cap, sizeof(*pathset));
		for (size_t i = 0; i < old_cap; i++) {
			if (!old[i])
				continue;
			pos = hash_str(old[i]) & (pathset_cap - 1);
			while (pathset[pos])
				pos = (pos + 1) & (pathset_cap - 1);
			pathset[pos] = old[i];
		}
		free(old);
	}
	pos = hash_str(s) & (pathset_cap - 1);
	while (pathset[pos]) {
		if (!strcmp(pathset[pos], s))
			return false;
		pos = (pos + 1) & (pathset_cap - 1);
	}
	pathset[pos] = s;
	pathset_nr++;
	return true;
}

/* ---- file contents, shared between branch states ---------------------------- */

struct content {
	uint32_t refs;   /* branch and merge-base states holding it */
	uint32_t mark;   /* fast-import mark, 0 until written */
	size_t len;
	unsigned char data[];
};

static uint32_t next_mark = 1;

static struct content *content_new(const unsigned char *data, size_t len)
{
	struct content *c = xrealloc(NULL, sizeof(*c) + len);
	c->refs = 0;
	c->mark = 0;
	c->len = len;
	memcpy(c->data, data, len);
	return c;
}

static void content_unref(struct content *c)
{
	if (c && !--c->refs)
		free(c);
}

/* ---- the file layout ---------------------------------------------------------- */

enum kind { K_C, K_H, K_PY, K_SH, K_MD, K_TXT, K_BIN };
static const char *const kind_ext[] = { ".c", ".h", ".py", ".sh", ".md", ".txt", ".bin" };

struct dir {
	char *path;       /* "" for the root */
	unsigned depth;   /* 0 for the root */
	uint32_t *slots;  /* every slot ever created here */
	size_t nr, alloc;
};

static struct dir *dirs;
static size_t dirs_nr, dirs_alloc;

/*
 * A slot is one path over the whole history. Paths are never reused: a
 * rename makes a new slot, so a branch state is simply "slot -> content
 * or NULL" and merges compare slots.
 */
struct slot {
	char *path;
	uint32_t dir;
	enum kind kind;
	bool exec, hot;
};

static struct slot *slots;
static size_t slots_nr, slots_alloc;
static uint32_t *hot_slots, *bin_slots;
static size_t hot_nr, hot_alloc, bin_nr, bin_alloc;

struct branch {
	char *ref;
	struct content **state; /* slot -> content, state_cap long */
	struct content **base;  /* state at the last sync with main */
	uint32_t head_mark;     /* tip commit, 0 before the first commit */
	uint32_t fi_mark;       /* what fast-import thinks the ref's tip is */
	uint32_t since_sync;    /* commits since forked from / merged to main */
	uint32_t author;        /* usual author */
	size_t live;            /* files present in state */
};

static struct branch *branches;
static size_t branches_nr;
static size_t state_cap;
static uint32_t *touched; /* slot -> commit number that last touched it */

static void ensure_state_cap(size_t want)
{
	size_t old = state_cap;

	if (want <= state_cap)
		return;
	state_cap = state_cap ? state_cap * 2 : 1024;
	while (state_cap < want)
		state_cap *= 2;
	for (size_t b = 0; b < branches_nr; b++) {
		branches[b].state = xrealloc(branches[b].state, state_cap * sizeof(void *));
		branches[b].base = xrealloc(branches[b].base, state_cap * sizeof(void *));
		memset(branches[b].state + old, 0, (state_cap - old) * sizeof(void *));
		memset(branches[b].base + old, 0, (state_cap - old) * sizeof(void *));
	}
	touched = xrealloc(touched, state_cap * sizeof(*touched));
	memset(touched + old, 0, (state_cap - old) * sizeof(*touched));
}

static void set_state(struct branch *b, uint32_t slot, struct content *c)
{
	struct content *old = b->state[slot];

	if (old == c)
		return;
	if (c)
		c->refs++;
	b->live += (c != NULL) - (old != NULL);
	b->state[slot] = c;
	content_unref(old);
}

/* dst[slot] = src[slot] for every slot, with reference counts. */
static void copy_states(struct content **dst, struct content **src)
{
	for (size_t s = 0; s < slots_nr; s++) {
		if (dst[s] == src[s])
			continue;
		if (src[s])
			src[s]->refs++;
		content_unref(dst[s]);
		dst[s] = src[s];
	}
}

static void gen_word(struct buf *b)
{
	switch (rng_below(4)) {
	case 0:
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		/* fallthrough */
	case 1:
		buf_puts(b, PICK(nouns));
		break;
	default:
		buf_puts(b, PICK(nouns));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		break;
	}
}

static uint32_t new_dir(uint32_t parent)
{
	struct buf name = { 0 };
	struct dir *d;

	for (unsigned tries = 0;; tries++) {
		name.len = 0;
		if (dirs[parent].depth) {
			buf_puts(&name, dirs[parent].path);
			buf_putc(&name, '/');
		}
		if (!dirs[parent].depth && tries < 8)
			buf_puts(&name, PICK(top_dirs));
		else if (rng_below(3))
			buf_puts(&name, PICK(nouns));
		else {
			buf_puts(&name, PICK(nouns));
			buf_putc(&name, '_');
			buf_puts(&name, PICK(nouns));
		}
		if (tries >= 16) {
			buf_putc(&name, '_');
			buf_putu(&name, (uint32_t)dirs_nr);
		}
		buf_putc(&name, '\0');
		if (pathset_add((char *)name.p))
			break;
	}
	GROW(dirs, dirs_nr, dirs_alloc);
	d = &dirs[dirs_nr];
	memset(d, 0, sizeof(*d));
	d->path = (char *)name.p;
	d->depth = dirs[parent].depth + 1;
	return (uint32_t)dirs_nr++;
}

/* A directory for a new file or subdirectory; deeper ones are rarer. */
static uint32_t pick_dir(unsigned max_depth)
{
	for (;;) {
		uint32_t d = rng_below((uint32_t)dirs_nr);
		if (dirs[d].depth <= max_depth)
			return d;
	}
}

static uint32_t new_slot(uint32_t dir, enum kind kind, const char *fixed_name)
{
	struct buf path = { 0 };
	struct slot *s;
	uint32_t id;

	for (unsigned tries = 0;; tries++) {
		path.len = 0;
		if (dirs[dir].depth) {
			buf_puts(&path, dirs[dir].path);
			buf_putc(&path, '/');
		}
		if (fixed_name && !tries) {
			buf_puts(&path, fixed_name);
		} else {
			gen_word(&path);
			if (tries >= 8) {
				buf_putc(&path, '_');
				buf_putu(&path, (uint32_t)slots_nr);
			}
			buf_puts(&path, kind_ext[kind]);
		}
		buf_putc(&path, '\0');
		if (pathset_add((char *)path.p))
			break;
	}
	GROW(slots, slots_nr, slots_alloc);
	id = (uint32_t)slots_nr++;
	s = &slots[id];
	s->path = (char *)path.p;
	s->dir = dir;
	s->kind = kind;
	s->exec = kind == K_SH || (kind == K_PY && chance(200));
	s->hot = kind != K_BIN && chance(80);
	GROW(dirs[dir].slots, dirs[dir].nr, dirs[dir].alloc);
	dirs[dir].slots[dirs[dir].nr++] = id;
	if (s->hot) {
		GROW(hot_slots, hot_nr, hot_alloc);
		hot_slots[hot_nr++] = id;
	}
	if (kind == K_BIN) {
		GROW(bin_slots, bin_nr, bin_alloc);
		bin_slots[bin_nr++] = id;
	}
	ensure_state_cap(slots_nr);
	return id;
}

static enum kind pick_text_kind(void)
{
	uint32_t r = rng_below(100);
	if (r < 40)
		return K_C;
	if (r < 58)
		return K_H;
	if (r < 70)
		return K_PY;
	if (r < 76)
		return K_SH;
	if (r < 90)
		return K_MD;
	return K_TXT;
}

/* ---- text generation ----------------------------------------------------------- */

static void gen_indent(struct buf *b, char unit)
{
	uint32_t n = rng_below(4);
	n = n == 3 ? 1 + rng_below(4) : n; /* mostly 0-2 levels */
	for (uint32_t i = 0; i < n; i++) {
		if (unit == '\t')
			buf_putc(b, '\t');
		else
			buf_puts(b, "    ");
	}
}

static void gen_prose(struct buf *b, uint32_t words)
{
	for (uint32_t i = 0; i < words; i++) {
		if (i)
			buf_putc(b, ' ');
		buf_puts(b, PICK(prose));
	}
}

static void gen_expr(struct buf *b)
{
	switch (rng_below(6)) {
	case 0:
		buf_putu(b, rng_below(4) ? rng_below(64) : rng_below(1u << 20));
		break;
	case 1:
	case 2:
		gen_word(b);
		break;
	case 3:
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		buf_puts(b, "(");
		gen_word(b);
		buf_puts(b, ")");
		break;
	case 4:
		buf_puts(b, PICK(nouns));
		buf_puts(b, "->");
		buf_puts(b, PICK(nouns));
		break;
	default:
		gen_word(b);
		buf_puts(b, rng_below(2) ? " + " : " - ");
		buf_putu(b, rng_below(16));
		break;
	}
}

static void gen_c_line(struct buf *b)
{
	uint32_t r = rng_below(100);

	if (r < 10) {
		/* blank */
	} else if (r < 18) {
		gen_indent(b, '\t');
		buf_putc(b, '}');
	} else if (r < 30) {
		gen_indent(b, '\t');
		buf_puts(b, "if (");
		gen_expr(b);
		buf_puts(b, rng_below(2) ? " < 0)" : ")");
		if (rng_below(2))
			buf_puts(b, " {");
	} else if (r < 42) {
		gen_indent(b, '\t');
		buf_puts(b, PICK(types));
		buf_putc(b, ' ');
		gen_word(b);
		buf_puts(b, " = ");
		gen_expr(b);
		buf_putc(b, ';');
	} else if (r < 55) {
		gen_indent(b, '\t');
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		buf_putc(b, '(');
		for (uint32_t i = 0, n = rng_below(4); i < n; i++) {
			if (i)
				buf_puts(b, ", ");
			gen_expr(b);
		}
		buf_puts(b, ");");
	} else if (r < 62) {
		gen_indent(b, '\t');
		buf_puts(b, "return ");
		gen_expr(b);
		buf_putc(b, ';');
	} else if (r < 70) {
		gen_indent(b, '\t');
		buf_puts(b, "/* ");
		gen_prose(b, 3 + rng_below(9));
		buf_puts(b, " */");
	} else if (r < 75) {
		buf_puts(b, rng_below(3) ? "static " : "");
		buf_puts(b, PICK(types));
		buf_putc(b, ' ');
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		buf_puts(b, "(struct ");
		buf_puts(b, PICK(nouns));
		buf_puts(b, " *");
		buf_puts(b, PICK(nouns));
		buf_puts(b, ", ");
		buf_puts(b, PICK(types));
		buf_putc(b, ' ');
		buf_puts(b, PICK(nouns));
		buf_putc(b, ')');
	} else if (r < 80) {
		gen_indent(b, '\t');
		buf_puts(b, "for (i = 0; i < ");
		gen_word(b);
		buf_puts(b, "; i++)");
	} else if (r < 84) {
		buf_puts(b, "#include \"");
		buf_puts(b, PICK(nouns));
		buf_puts(b, ".h\"");
	} else if (r < 93) {
		gen_indent(b, '\t');
		buf_puts(b, PICK(nouns));
		buf_puts(b, "->");
		gen_word(b);
		buf_puts(b, " = ");
		gen_expr(b);
		buf_putc(b, ';');
	} else {
		gen_indent(b, '\t');
		buf_puts(b, "} else {");
	}
	buf_putc(b, '\n');
}

static void gen_py_line(struct buf *b)
{
	uint32_t r = rng_below(100);

	if (r < 12) {
		/* blank */
	} else if (r < 20) {
		buf_puts(b, "def ");
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		buf_puts(b, "(self, ");
		buf_puts(b, PICK(nouns));
		buf_puts(b, "):");
	} else if (r < 45) {
		gen_indent(b, ' ');
		gen_word(b);
		buf_puts(b, " = ");
		gen_expr(b);
	} else if (r < 60) {
		gen_indent(b, ' ');
		buf_puts(b, "if ");
		gen_word(b);
		buf_puts(b, rng_below(2) ? " is None:" : ":");
	} else if (r < 70) {
		gen_indent(b, ' ');
		buf_puts(b, "return ");
		gen_expr(b);
	} else if (r < 80) {
		gen_indent(b, ' ');
		buf_puts(b, "# ");
		gen_prose(b, 3 + rng_below(9));
	} else if (r < 85) {
		buf_puts(b, "import ");
		buf_puts(b, PICK(nouns));
	} else {
		gen_indent(b, ' ');
		buf_puts(b, "self.");
		buf_puts(b, PICK(verbs));
		buf_putc(b, '_');
		buf_puts(b, PICK(nouns));
		buf_puts(b, "(");
		gen_word(b);
		buf_puts(b, ")");
	}
	buf_putc(b, '\n');
}

static void gen_sh_line(struct buf *b)
{
	uint32_t r = rng_below(100);

	if (r < 12) {
		/* blank */
	} else if (r < 35) {
		gen_indent(b, '\t');
		gen_word(b);
		buf_puts(b, "=$(");
		buf_puts(b, PICK(verbs));
		buf_puts(b, " \"$");
		buf_puts(b, PICK(nouns));
		buf_puts(b, "\")");
	} else if (r < 50) {
		gen_indent(b, '\t');
		buf_puts(b, "if test -z \"$");
		buf_puts(b, PICK(nouns));
		buf_puts(b, "\"; then");
	} else if (r < 60) {
		gen_indent(b, '\t');
		buf_puts(b, "fi");
	} else if (r < 75) {
		gen_indent(b, '\t');
		buf_puts(b, "echo \"");
		gen_prose(b, 2 + rng_below(8));
		buf_puts(b, "\"");
	} else {
		buf_puts(b, "# ");
		gen_prose(b, 3 + rng_below(9));
	}
	buf_putc(b, '\n');
}

static void gen_prose_line(struct buf *b)
{
	uint32_t r = rng_below(100);

	if (r < 15) {
		/* blank */
	} else if (r < 20) {
		buf_puts(b, "## ");
		gen_prose(b, 2 + rng_below(4));
	} else if (r < 35) {
		buf_puts(b, "- ");
		gen_prose(b, 3 + rng_below(8));
	} else {
		gen_prose(b, 6 + rng_below(10));
		buf_putc(b, '.');
	}
	buf_putc(b, '\n');
}

static void gen_line(struct buf *b, enum kind kind)
{
	switch (kind) {
	case K_C:
	case K_H:
		gen_c_line(b);
		break;
	case K_PY:
		gen_py_line(b);
		break;
	case K_SH:
		gen_sh_line(b);
		break;
	default:
		gen_prose_line(b);
		break;
	}
}

static struct buf scratch; /* reused for building new contents */

static struct content *gen_text(enum kind kind)
{
	uint32_t lines = 8 + rng_below(60);

	if (chance(250))
		lines += rng_below(400);
	scratch.len = 0;
	for (uint32_t i = 0; i < lines; i++)
		gen_line(&scratch, kind);
	return content_new(scratch.p, scratch.len);
}

/* Roughly half random bytes, half runs: deflate shrinks it a little. */
static void gen_binary_bytes(struct buf *b, size_t len)
{
	while (len) {
		size_t n = len < 64 ? len : 64;
		buf_grow(b, n);
		if (rng_below(2)) {
			for (size_t i = 0; i < n; i += 8) {
				uint64_t v = rng_next();
				for (size_t j = i; j < n && j < i + 8; j++, v >>= 8)
					b->p[b->len + j] = (unsigned char)v;
			}
		} else {
			memset(b->p + b->len, (int)rng_below(256), n);
		}
		b->len += n;
		len -= n;
	}
}

static struct content *gen_binary(void)
{
	static const unsigned char magic[8] = { 0x89, 'G', 'P', 'B', '\r', '\n', 0x1a, '\n' };
	size_t len = 8192u << rng_below(5); /* 8 KiB .. 128 KiB */

	len += rng_below((uint32_t)len);
	scratch.len = 0;
	buf_add(&scratch, magic, sizeof(magic));
	gen_binary_bytes(&scratch, len);
	return content_new(scratch.p, scratch.len);
}

static struct content *edit_binary(const struct content *old)
{
	uint32_t ranges = 1 + rng_below(4);

	scratch.len = 0;
	buf_add(&scratch, old->data, old->len);
	for (uint32_t i = 0; i < ranges && scratch.len > 8; i++) {
		size_t ofs = 8 + rng_below((uint32_t)(scratch.len - 8));
		size_t n = 16 + rng_below(512);
		size_t keep = scratch.len;
		if (n > keep - ofs)
			n = keep - ofs;
		scratch.len = ofs;
		gen_binary_bytes(&scratch, n);
		scratch.len = keep;
	}
	if (chance(100)) {
		if (scratch.len > (256u << 10))
			scratch.len /= 2;
		else
			gen_binary_bytes(&scratch, 1024 + rng_below(8192));
	}
	return content_new(scratch.p, scratch.len);
}

/* Line starts of the content being edited, reused. */
static size_t *line_ofs;
static size_t line_alloc;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* 1-3 hunks, each changing, inserting or deleting a few lines. */
static struct content *edit_text(const struct content *old, enum kind kind)
{
	uint32_t nlines = 0, pos[3], hunks, cursor = 0;

	for (size_t i = 0; i < old->len; i++) {
		if (!i || old->data[i - 1] == '\n') {
			GROW(line_ofs, nlines, line_alloc);
			line_ofs[nlines++] = i;
		}
	}
	GROW(line_ofs, nlines, line_alloc);
	line_ofs[nlines] = old->len; /* sentinel: end of the last line */

	hunks = 1 + rng_below(2) + rng_below(2);
	for (uint32_t h = 0; h < hunks; h++)
		pos[h] = rng_below(nlines + 1);
	qsort(pos, hunks, sizeof(pos[0]), cmp_u32);

	scratch.len = 0;
	for (uint32_t h = 0; h < hunks; h++) {
		uint32_t p = pos[h] > cursor ? pos[h] : cursor;
		uint32_t op = rng_below(10), del = 0, add = 0;

		if (nlines > 600 && op < 6)
			op = 9; /* big files mostly shrink */
		else if (nlines < 8)
			op = 4; /* small ones grow */
		if (op < 4) {            /* change */
			del = 1 + rng_below(3);
			add = del;
		} else if (op < 7) {     /* insert */
			add = 1 + rng_below(7);
		} else {                 /* delete */
			del = 1 + rng_below(4);
		}
		if (del > nlines - p)
			del = nlines - p;
		if (!del && !add)
			add = 1;
		buf_add(&scratch, old->data + line_ofs[cursor], line_ofs[p] - line_ofs[cursor]);
		for (uint32_t i = 0; i < add; i++)
			gen_line(&scratch, kind);
		cursor = p + del;
	}
	buf_add(&scratch, old->data + line_ofs[cursor], old->len - line_ofs[cursor]);
	if (scratch.len == old->len && !memcmp(scratch.p, old->data, old->len))
		buf_puts(&scratch, "\n");
	return content_new(scratch.p, scratch.len);
}

/* ---- history -------------------------------------------------------------------- */

static uint32_t commit_nr;     /* commits written so far */
static uint32_t main_nr;       /* of them on main */
static uint32_t tag_nr;
static uint64_t now = 1262304000; /* 2010-01-01, advanced per commit */

static uint32_t *changes;      /* slots changed by the commit being built */
static size_t changes_nr, changes_alloc;

static void touch(uint32_t slot)
{
	touched[slot] = commit_nr + 1;
	GROW(changes, changes_nr, changes_alloc);
	changes[changes_nr++] = slot;
}

static bool is_touched(uint32_t slot)
{
	return touched[slot] == commit_nr + 1;
}

static void write_data(const void *p, size_t len)
{
	printf("data %zu\n", len);
	fwrite(p, 1, len, stdout);
	putchar('\n');
}

static void write_ident(const char *what, uint32_t who)
{
	printf("%s %s <%s> %" PRIu64 " %s\n", what, authors[who][0],
	       authors[who][1], now, authors[who][2]);
}

static void write_tag(struct branch *b)
{
	char name[64];
	uint32_t n = ++tag_nr;

	snprintf(name, sizeof(name), "v%" PRIu32 ".%" PRIu32 ".%" PRIu32,
		 n / 100, n / 10 % 10, n % 10);
	if (n % 2) {
		printf("reset refs/tags/%s\nfrom :%" PRIu32 "\n\n", name, b->head_mark);
		return;
	}
	scratch.len = 0;
	buf_puts(&scratch, "Release ");
	buf_puts(&scratch, name);
	buf_puts(&scratch, "\n\n");
	gen_prose(&scratch, 8 + rng_below(20));
	buf_puts(&scratch, ".\n");
	printf("tag %s\nfrom :%" PRIu32 "\n", name, b->head_mark);
	write_ident("tagger", 0);
	write_data(scratch.p, scratch.len);
}

static uint32_t next_commit_author(struct branch *b)
{
	return rng_below(10) < 7 ? b->author : rng_below(ARRAY_SIZE(authors));
}

/*
 * Writes the blobs, then the commit of b with the slots in changes[].
 * merge is the other parent, or NULL.
 */
static void write_commit(struct branch *b, struct branch *merge, const char *subject)
{
	uint32_t author = merge ? 0 : next_commit_author(b);
	uint32_t mark;

	for (size_t i = 0; i < changes_nr; i++) {
		struct content *c = b->state[changes[i]];
		if (c && !c->mark) {
			c->mark = next_mark++;
			printf("blob\nmark :%" PRIu32 "\n", c->mark);
			write_data(c->data, c->len);
		}
	}

	now += 60 + rng_below(12000);
	mark = next_mark++;
	printf("commit %s\nmark :%" PRIu32 "\n", b->ref, mark);
	write_ident("author", author);
	write_ident("committer", merge || chance(100) ? 0 : author);

	scratch.len = 0;
	buf_puts(&scratch, subject);
	buf_putc(&scratch, '\n');
	if (rng_below(2)) {
		buf_putc(&scratch, '\n');
		for (uint32_t i = 0, n = 1 + rng_below(5); i < n; i++) {
			gen_prose(&scratch, 6 + rng_below(8));
			buf_putc(&scratch, '\n');
		}
	}
	write_data(scratch.p, scratch.len);

	if (b->head_mark && b->fi_mark != b->head_mark)
		printf("from :%" PRIu32 "\n", b->head_mark);
	if (merge)
		printf("merge :%" PRIu32 "\n", merge->head_mark);
	for (size_t i = 0; i < changes_nr; i++) {
		const struct slot *s = &slots[changes[i]];
		const struct content *c = b->state[changes[i]];
		if (c)
			printf("M %s :%" PRIu32 " %s\n", s->exec ? "100755" : "100644",
			       c->mark, s->path);
		else
			printf("D %s\n", s->path);
	}
	putchar('\n');

	b->head_mark = b->fi_mark = mark;
	b->since_sync++;
	commit_nr++;
	changes_nr = 0;
	if (b == &branches[0] && ++main_nr % 25 == 0)
		write_tag(b);
}

/* A live text file of b not yet touched by this commit, or UINT32_MAX. */
static uint32_t pick_text(struct branch *b, int near_dir)
{
	for (unsigned tries = 0; tries < 200; tries++) {
		uint32_t s;
		if (near_dir >= 0 && tries < 20) {
			const struct dir *d = &dirs[near_dir];
			s = d->slots[rng_below((uint32_t)d->nr)];
		} else if (hot_nr && rng_below(10) < 5 && tries < 100) {
			s = hot_slots[rng_below((uint32_t)hot_nr)];
		} else {
			s = rng_below((uint32_t)slots_nr);
		}
		if (b->state[s] && slots[s].kind != K_BIN && !is_touched(s))
			return s;
	}
	return UINT32_MAX;
}

static void edit_file(struct branch *b, uint32_t s)
{
	set_state(b, s, edit_text(b->state[s], slots[s].kind));
	touch(s);
}

static void add_file(struct branch *b, enum kind kind)
{
	uint32_t dir = pick_dir(3);
	uint32_t s;

	if (chance(100) && dirs[dir].depth < 4)
		dir = new_dir(dir);
	s = new_slot(dir, kind, NULL);
	set_state(b, s, kind == K_BIN ? gen_binary() : gen_text(kind));
	touch(s);
}

static void remove_file(struct branch *b)
{
	uint32_t s = pick_text(b, -1);

	if (s == UINT32_MAX || b->live < 8)
		return;
	set_state(b, s, NULL);
	touch(s);
}

static void rename_file(struct branch *b)
{
	uint32_t from = pick_text(b, -1), to;

	if (from == UINT32_MAX)
		return;
	to = new_slot(rng_below(10) < 7 ? slots[from].dir : pick_dir(3), slots[from].kind, NULL);
	if (rng_below(10) < 4)
		set_state(b, to, edit_text(b->state[from], slots[from].kind));
	else
		set_state(b, to, b->state[from]);
	slots[to].exec = slots[from].exec;
	set_state(b, from, NULL);
	touch(from);
	touch(to);
}

static void binary_change(struct branch *b)
{
	for (unsigned tries = 0; bin_nr && tries < 20; tries++) {
		uint32_t s = bin_slots[rng_below((uint32_t)bin_nr)];
		if (b->state[s] && !is_touched(s) && rng_below(4)) {
			set_state(b, s, edit_binary(b->state[s]));
			touch(s);
			return;
		}
	}
	add_file(b, K_BIN);
}

static void make_subject(struct buf *sb, const char *prefix)
{
	const char *area = "misc";
	char top[64];

	if (changes_nr) {
		const char *p = slots[changes[0]].path, *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : 0;
		if (n && n < sizeof(top)) {
			memcpy(top, p, n);
			top[n] = '\0';
			area = top;
		}
	}
	sb->len = 0;
	buf_puts(sb, prefix ? prefix : area);
	buf_puts(sb, ": ");
	buf_puts(sb, PICK(verbs));
	buf_putc(sb, ' ');
	buf_puts(sb, PICK(nouns));
	buf_putc(sb, ' ');
	gen_prose(sb, 1 + rng_below(5));
	buf_putc(sb, '\0');
}

static struct buf subject;

static void normal_commit(struct branch *b)
{
	uint32_t r = rng_below(100);
	uint32_t nfiles = r < 35 ? 1 : r < 60 ? 2 : r < 80 ? 3 : r < 92 ? 4 : 5;
	int near = -1;

	if (chance(4))
		nfiles = 8 + rng_below(33); /* a refactoring */
	for (uint32_t i = 0; i < nfiles; i++) {
		uint32_t s = pick_text(b, rng_below(2) ? near : -1);
		if (s == UINT32_MAX)
			break;
		edit_file(b, s);
		near = (int)slots[s].dir;
	}
	if (chance(40))
		add_file(b, pick_text_kind());
	if (chance(12))
		remove_file(b);
	if (chance(15))
		rename_file(b);
	if (chance(20))
		binary_change(b);
	if (!changes_nr)
		add_file(b, pick_text_kind());
	make_subject(&subject, NULL);
	write_commit(b, NULL, (char *)subject.p);
}

/*
 * Three-way merge by slot: a side that left a slot as it was at the
 * merge base takes the other side's version; when both changed it,
 * "prefer" wins (conflicts resolved by taking one side whole).
 */
static void merge_into(struct branch *into, struct branch *from, bool prefer_from)
{
	struct content **base = from == &branches[0] ? into->base : from->base;
	char msg[160];

	for (size_t s = 0; s < slots_nr; s++) {
		struct content *ours = into->state[s], *theirs = from->state[s], *res;
		if (theirs == base[s] || ours == theirs)
			continue;
		if (ours == base[s] || prefer_from)
			res = theirs;
		else
			continue;
		set_state(into, (uint32_t)s, res);
		touch((uint32_t)s);
	}
	if (from == &branches[0])
		snprintf(msg, sizeof(msg), "Merge branch 'main' into %s", into->ref + 11);
	else
		snprintf(msg, sizeof(msg), "Merge branch '%s'", from->ref + 11);
	write_commit(into, from, msg);
}

static void step(void)
{
	struct branch *main_b = &branches[0], *b;

	if (branches_nr == 1 || rng_below(100) < 45) {
		normal_commit(main_b);
		return;
	}
	b = &branches[1 + rng_below((uint32_t)branches_nr - 1)];
	if (b->since_sync >= 3 && chance(120)) {
		merge_into(main_b, b, true);
		/* The topic restarts from the merge. */
		copy_states(b->state, main_b->state);
		copy_states(b->base, main_b->state);
		b->live = main_b->live;
		b->head_mark = main_b->head_mark;
		b->since_sync = 0;
	} else if (b->since_sync >= 2 && chance(30)) {
		merge_into(b, main_b, false);
		copy_states(b->base, main_b->state);
	} else {
		normal_commit(b);
	}
}

static void initial_commit(uint32_t nfiles)
{
	struct branch *main_b = &branches[0];
	uint32_t ndirs = 2 + nfiles / 12, nbin = nfiles / 100;
	static const char *const topic_names[] = { "next", "maint" };

	GROW(dirs, dirs_nr, dirs_alloc);
	memset(&dirs[0], 0, sizeof(dirs[0]));
	dirs[0].path = xstrdup("");
	dirs_nr = 1;
	for (uint32_t i = 0; i < ndirs; i++)
		new_dir(i < 4 ? 0 : pick_dir(i < ndirs / 3 ? 1 : 3));

	set_state(main_b, new_slot(0, K_MD, "README.md"), gen_text(K_MD));
	set_state(main_b, new_slot(0, K_SH, "Makefile"), gen_text(K_SH));
	slots[slots_nr - 1].exec = false;
	for (uint32_t i = 2; i < nfiles; i++) {
		enum kind kind = i < 2 + nbin ? K_BIN : pick_text_kind();
		uint32_t s = new_slot(1 + rng_below((uint32_t)dirs_nr - 1), kind, NULL);
		set_state(main_b, s, kind == K_BIN ? gen_binary() : gen_text(kind));
	}
	for (uint32_t s = 0; s < slots_nr; s++)
		touch(s);
	write_commit(main_b, NULL, "Initial import");

	for (size_t i = 1; i < branches_nr; i++) {
		struct branch *b = &branches[i];
		struct buf ref = { 0 };
		buf_puts(&ref, "refs/heads/");
		if (i <= ARRAY_SIZE(topic_names)) {
			buf_puts(&ref, topic_names[i - 1]);
		} else {
			buf_puts(&ref, "feature/");
			buf_puts(&ref, PICK(nouns));
			buf_putc(&ref, '-');
			buf_putu(&ref, (uint32_t)i);
		}
		buf_putc(&ref, '\0');
		b->ref = (char *)ref.p;
		copy_states(b->state, main_b->state);
		copy_states(b->base, main_b->state);
		b->live = main_b->live;
		b->head_mark = main_b->head_mark;
	}
}

/* ---- options ----------------------------------------------------------------------- */

struct preset {
	const char *name;
	uint32_t commits, files, branches;
};

static const struct preset presets[] = {
	{ "tiny", 100, 60, 2 },
	{ "small", 1000, 600, 3 },
	{ "medium", 5000, 2500, 4 },
	{ "large", 20000, 8000, 5 },
	{ "huge", 50000, 16000, 6 },
	{ "giant", 100000, 24000, 7 },
};

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: gen-repo [--size tiny|small|medium|large|huge|giant] [--commits N]\n"
		"                [--files N] [--seed S] [--branches N] [--version] [--params]\n"
		"                [--checkpoint-from M --checkpoint-every K]\n"
		"Writes a deterministic `git fast-import` stream to stdout;\n"
		"--params prints the resolved parameters instead.\n"
		"Default: --size small --seed 1.\n");
	exit(code);
}

static uint64_t parse_num(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	if (!arg)
		usage(2);
	v = strtoull(arg, &end, 10);
	if (*arg == '-' || end == arg || *end || v < min || v > max) {
		fprintf(stderr, "gen-repo: bad value for %s: '%s'\n", opt, arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const struct preset *size = &presets[1];
	int64_t commits = -1, files = -1, nbranches = -1;
	uint64_t seed = 1;
	bool show_params = false;
	uint64_t checkpoint_from = 0, checkpoint_every = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char *eq = strchr(a, '=');
		char opt[32];

		if (!strncmp(a, "--", 2) && eq && (size_t)(eq - a) < sizeof(opt)) {
			memcpy(opt, a, (size_t)(eq - a));
			opt[eq - a] = '\0';
			a = opt;
			v = eq + 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(0);
		} else if (!strcmp(a, "--version")) {
			printf("gen-repo %d\n", GEN_VERSION);
			return 0;
		} else if (!strcmp(a, "--params")) {
			show_params = true;
			continue;
		} else {
			i++;
		}
		if (!strcmp(a, "--size")) {
			size = NULL;
			for (size_t p = 0; v && p < ARRAY_SIZE(presets); p++)
				if (!strcmp(v, presets[p].name))
					size = &presets[p];
			if (!size) {
				fprintf(stderr, "gen-repo: unknown size '%s'\n", v ? v : "");
				exit(2);
			}
		} else if (!strcmp(a, "--commits")) {
			commits = (int64_t)parse_num(a, v, 1, 100000000);
		} else if (!strcmp(a, "--files")) {
			files = (int64_t)parse_num(a, v, 2, 10000000);
		} else if (!strcmp(a, "--branches")) {
			nbranches = (int64_t)parse_num(a, v, 1, 64);
		} else if (!strcmp(a, "--seed")) {
			seed = parse_num(a, v, 0, UINT64_MAX);
		} else if (!strcmp(a, "--checkpoint-from")) {
			checkpoint_from = parse_num(a, v, 1, 100000000);
		} else if (!strcmp(a, "--checkpoint-every")) {
			checkpoint_every = parse_num(a, v, 1, 100000000);
		} else {
			fprintf(stderr, "gen-repo: unknown option '%s'\n", argv[i - (eq ? 0 : 1)]);
			usage(2);
		}
	}
	if (commits < 0)
		commits = size->commits;
	if (files < 0)
		files = size->files;
	if (nbranches < 0)
		nbranches = size->branches;
	if (show_params) {
		printf("commits %" PRId64 " files %" PRId64 " branches %" PRId64
		       " seed %" PRIu64 " version %d\n",
		       commits, files, nbranches, seed, GEN_VERSION);
		return 0;
	}

	rng_state = seed;
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);

	branches_nr = (size_t)nbranches;
	branches = xcalloc(branches_nr, sizeof(*branches));
	branches[0].ref = xstrdup("refs/heads/main");
	for (size_t i = 0; i < branches_nr; i++)
		branches[i].author = (uint32_t)(i % ARRAY_SIZE(authors));
	ensure_state_cap(1024);

	initial_commit((uint32_t)files);
	while (commit_nr < (uint64_t)commits) {
		step();
		/*
		 * A checkpoint where the stream for commit_nr commits would
		 * end: fast-import then writes the objects since the last
		 * one as a pack of their own, the same pack a separate run
		 * on that shorter stream would add. Not part of the stream
		 * otherwise, so the objects do not change.
		 */
		if (checkpoint_every && commit_nr >= checkpoint_from &&
		    (commit_nr - checkpoint_from) % checkpoint_every == 0)
			fputs("checkpoint\n\n", stdout);
	}

	if (fflush(stdout) || ferror(stdout))
		die("write error on stdout");
	return 0;
}
