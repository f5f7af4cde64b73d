/*
 * path-patterns.c: gitignore-style patterns (see path-patterns.h).
 *
 * The glob language is git's (gitignore(5); the behaviour of git's
 * wildmatch was pinned down by running it on many patterns, edge cases
 * included: what an unterminated set does, where "**" is special, how
 * case folding treats sets). It is matched here as a nondeterministic
 * automaton rather than by backtracking: the states are byte offsets
 * into the pattern where a token starts, the text is read once, left
 * to right, and a set of live states is carried along. A star token
 * may stay on its state while it eats a byte, or be skipped (its
 * successor is in the closure of the state); everything else advances
 * on a matching byte. So the time is bounded by (pattern length x text
 * length) whatever the pattern, where a backtracking matcher can be
 * made to take exponential time, and there is no recursion.
 *
 * Tokens are decoded from the pattern text each time a state is
 * visited; patterns are short, and a list keeps nothing but offsets
 * into its text, so that a pattern blob costs about its own size.
 */
#include "path-patterns.h"
#include "error.h"

/* ---- the glob ------------------------------------------------------------ */

enum tok_kind {
	TOK_END,        /* the pattern is used up: the accepting state */
	TOK_LIT,        /* one byte, literal (or escaped) */
	TOK_ANY,        /* '?' */
	TOK_SET,        /* '[...]' */
	TOK_STAR,       /* a run of bytes without '/' */
	TOK_DSTAR,      /* a run of any bytes */
	TOK_DSTAR_SLASH,/* "" or a run of any bytes ending in '/': "**" + '/' */
	TOK_DSTAR_SLASH_IN, /* inside that run, having read a byte of it */
	TOK_NEVER,      /* matches nothing: a lone trailing '\', a bad set */
};

struct tok {
	enum tok_kind kind;
	unsigned char ch;   /* TOK_LIT */
	bool escaped;       /* TOK_LIT written "\c": under GLOB_ICASE only a
			     * lowercase c folds (git lowers the text byte,
			     * never an escaped pattern byte) */
	size_t next;        /* offset of the token after this one */
};

static bool is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static int to_lower(int c)
{
	return is_upper(c) ? c + 'a' - 'A' : c;
}

static int to_upper(int c)
{
	return is_lower(c) ? c - 'a' + 'A' : c;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_glob_special(unsigned char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/*
 * Whether byte c (already lowered under GLOB_ICASE) is in the class
 * name[0..len) of a set; -1 for a name git does not know, which makes
 * the pattern match nothing. Classes are ASCII, and "space" is git's:
 * no vertical tab or form feed.
 */
static int class_has(const char *name, size_t len, int c, bool icase)
{
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
	bool alpha = is_upper(c) || is_lower(c);
	if (IS("alnum"))
		return alpha || is_digit(c);
	if (IS("alpha"))
		return alpha;
	if (IS("blank"))
		return c == ' ' || c == '\t';
	if (IS("cntrl"))
		return c < 0x20 || c == 0x7f;
	if (IS("digit"))
		return is_digit(c);
	if (IS("graph"))
		return c > 0x20 && c < 0x7f;
	if (IS("lower"))
		return is_lower(c);
	if (IS("print"))
		return c >= 0x20 && c < 0x7f;
	if (IS("punct"))
		return c > 0x20 && c < 0x7f && !alpha && !is_digit(c);
	if (IS("space"))
		return c == ' ' || c == '\t' || c == '\n' || c == '\r';
	if (IS("upper"))
		return is_upper(c) || (icase && is_lower(c));
	if (IS("xdigit"))
		return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	return -1;
#undef IS
}

/*
 * Read the set starting at pat[pos] == '['. Returns whether byte c is
 * in it (c < 0: only find where it ends), with *next just past its
 * ']'; -1 when it is malformed (unterminated, or an unknown class), for
 * every c alike. Under icase c is lowered first; a literal member is
 * compared as written, a range also against c's upper case (git's
 * folding).
 */
static int scan_set(const char *pat, size_t len, size_t pos, int c, bool icase,
		    size_t *next)
{
	size_t at = pos + 1;
	bool negated = false, matched = false, first = true;
	int prev = 0;   /* the last single member, for a range; 0: none */

	if (icase && c >= 0)
		c = to_lower(c);
	if (at < len && (pat[at] == '!' || pat[at] == '^')) {
		negated = true;
		at++;
	}
	for (;; first = false) {
		unsigned char ch;
		if (at >= len)
			return -1;
		ch = (unsigned char)pat[at];
		if (ch == ']' && !first) {
			*next = at + 1;
			break;
		}
		if (ch == '\\') {
			if (++at >= len)
				return -1;
			ch = (unsigned char)pat[at++];
			matched |= c == ch;
			prev = ch;
		} else if (ch == '-' && prev && at + 1 < len && pat[at + 1] != ']') {
			int hi = (unsigned char)pat[++at];
			if (hi == '\\') {
				if (++at >= len)
					return -1;
				hi = (unsigned char)pat[at];
			}
			at++;
			if (c >= prev && c <= hi)
				matched = true;
			else if (icase && is_lower(c) && to_upper(c) >= prev && to_upper(c) <= hi)
				matched = true;
			prev = 0;
		} else if (ch == '[' && at + 1 < len && pat[at + 1] == ':') {
			size_t name = at + 2, close = name;
			int in;
			while (close < len && pat[close] != ']')
				close++;
			if (close >= len)
				return -1;
			if (close == name || pat[close - 1] != ':') {
				/* no "...:]": the '[' is a member, the ':' after it too */
				matched |= c == '[';
				prev = '[';
				at++;
				continue;
			}
			in = class_has(pat + name, close - 1 - name, c, icase);
			if (in < 0)
				return -1;
			matched |= c >= 0 && in;
			prev = 0;
			at = close + 1;
		} else {
			matched |= c == ch;
			prev = ch;
			at++;
		}
	}
	return matched != negated;
}

/* The token at pat[pos]. */
static void decode(const char *pat, size_t len, size_t pos, unsigned flags, struct tok *t)
{
	size_t end;

	if (pos >= len) {
		t->kind = TOK_END;
		t->next = pos;
		return;
	}
	switch (pat[pos]) {
	case '\\':
		if (pos + 1 >= len) {
			t->kind = TOK_NEVER;
			t->next = len;
		} else {
			t->kind = TOK_LIT;
			t->ch = (unsigned char)pat[pos + 1];
			t->escaped = true;
			t->next = pos + 2;
		}
		return;
	case '?':
		t->kind = TOK_ANY;
		t->next = pos + 1;
		return;
	case '[':
		t->kind = scan_set(pat, len, pos, -1, false, &t->next) < 0 ? TOK_NEVER : TOK_SET;
		if (t->kind == TOK_NEVER)
			t->next = len;
		return;
	case '*':
		if (pos && pat[pos - 1] == '*') {
			/*
			 * Inside a star run: the state "**" + '/' moves to once
			 * it has read a byte, from which the '/' is no longer
			 * optional. No other token starts here.
			 */
			size_t start = pos;
			while (start && pat[start - 1] == '*')
				start--;
			decode(pat, len, start, flags, t);
			if (t->kind == TOK_DSTAR_SLASH)
				t->kind = TOK_DSTAR_SLASH_IN;
			return;
		}
		for (end = pos; end < len && pat[end] == '*'; end++)
			;
		t->next = end;
		/* Without GLOB_PATHNAME every star crosses '/'. */
		if (!(flags & GLOB_PATHNAME)) {
			t->kind = TOK_DSTAR;
			return;
		}
		if (end - pos == 1) {
			t->kind = TOK_STAR;
			return;
		}
		/* "**" is special only as a whole component; elsewhere it is '*'. */
		if ((pos == 0 || pat[pos - 1] == '/') &&
		    (end == len || pat[end] == '/' ||
		     (pat[end] == '\\' && end + 1 < len && pat[end + 1] == '/'))) {
			if (end < len && pat[end] == '/') {
				t->kind = TOK_DSTAR_SLASH;
				t->next = end + 1;
			} else {
				t->kind = TOK_DSTAR;
			}
		} else {
			t->kind = TOK_STAR;
		}
		return;
	default:
		t->kind = TOK_LIT;
		t->ch = (unsigned char)pat[pos];
		t->escaped = false;
		t->next = pos + 1;
		return;
	}
}

/* Tokens that can be passed without reading a byte. */
static bool is_star(enum tok_kind kind)
{
	return kind == TOK_STAR || kind == TOK_DSTAR || kind == TOK_DSTAR_SLASH;
}

/* Bit sets of pattern offsets; small patterns keep them on the stack. */
#define STACK_WORDS 16

static void set_bit(uint64_t *set, size_t pos)
{
	set[pos / 64] |= (uint64_t)1 << (pos % 64);
}

/*
 * Add to set what its states reach without reading a byte: the state
 * after each star, and the inside of a "**" + '/'. These lie at higher
 * offsets, so one ascending pass reaches chains of stars; a bit added
 * in the word being scanned is picked up by that same scan.
 */
static void close_over_stars(const char *pat, size_t len, unsigned flags,
			     uint64_t *set, size_t words)
{
	for (size_t w = 0; w < words; w++) {
		uint64_t bits = set[w];
		while (bits) {
			size_t pos = w * 64 + (size_t)__builtin_ctzll(bits);
			size_t to[2], nr = 0;
			struct tok t;
			bits &= bits - 1;
			decode(pat, len, pos, flags, &t);
			if (!is_star(t.kind))
				continue;
			to[nr++] = t.next;
			if (t.kind == TOK_DSTAR_SLASH)
				to[nr++] = pos + 1;
			for (size_t i = 0; i < nr; i++) {
				set_bit(set, to[i]);
				if (to[i] / 64 == w)
					bits |= (uint64_t)1 << (to[i] % 64);
			}
		}
	}
}

static bool byte_eq(unsigned char a, unsigned char b, bool icase)
{
	return a == b || (icase && to_lower(a) == to_lower(b));
}

/*
 * The automaton, from pattern offset start with the text read up to
 * text offset; the pattern before start is a literal prefix already
 * compared.
 */
static bool run_glob(const char *pat, size_t len, size_t start, const char *text,
		     size_t text_len, size_t text_pos, unsigned flags)
{
	uint64_t stack_sets[2 * STACK_WORDS];
	size_t words = len / 64 + 1;
	uint64_t *cur, *next;
	bool icase = flags & GLOB_ICASE, pathname = flags & GLOB_PATHNAME;
	bool ok = false;

	if (words <= STACK_WORDS) {
		cur = stack_sets;
		next = stack_sets + STACK_WORDS;
	} else {
		cur = xcalloc(2 * words, sizeof(*cur));
		next = cur + words;
	}
	memset(cur, 0, words * sizeof(*cur));
	set_bit(cur, start);
	close_over_stars(pat, len, flags, cur, words);

	for (; text_pos < text_len; text_pos++) {
		unsigned char c = (unsigned char)text[text_pos];
		bool live = false;
		uint64_t *tmp;

		memset(next, 0, words * sizeof(*next));
		for (size_t w = 0; w < words; w++) {
			uint64_t bits = cur[w];
			while (bits) {
				size_t pos = w * 64 + (size_t)__builtin_ctzll(bits);
				struct tok t;
				size_t unused;
				bits &= bits - 1;
				decode(pat, len, pos, flags, &t);
				switch (t.kind) {
				case TOK_LIT:
					if (t.escaped ? (icase ? to_lower(c) : c) == t.ch
						      : byte_eq(c, t.ch, icase))
						set_bit(next, t.next);
					break;
				case TOK_ANY:
					if (!pathname || c != '/')
						set_bit(next, t.next);
					break;
				case TOK_SET:
					if ((!pathname || c != '/') &&
					    scan_set(pat, len, pos, c, icase, &unused) > 0)
						set_bit(next, t.next);
					break;
				case TOK_STAR:
					if (c != '/')
						set_bit(next, pos);
					break;
				case TOK_DSTAR:
					set_bit(next, pos);
					break;
				case TOK_DSTAR_SLASH_IN:
					set_bit(next, pos);
					if (c == '/')
						set_bit(next, t.next);
					break;
				case TOK_DSTAR_SLASH:   /* only passed: its inside reads */
				case TOK_END:
				case TOK_NEVER:
					break;
				}
			}
		}
		close_over_stars(pat, len, flags, next, words);
		for (size_t w = 0; w < words && !live; w++)
			live = next[w] != 0;
		tmp = cur;
		cur = next;
		next = tmp;
		if (!live)
			goto out;
	}
	ok = (cur[len / 64] >> (len % 64)) & 1;
out:
	if (words > STACK_WORDS)
		free(cur < next ? cur : next);
	return ok;
}

/* Bytes before the first wildcard or escape: compared as they are. */
static size_t literal_prefix(const char *pat, size_t len)
{
	size_t n = 0;
	while (n < len && !is_glob_special((unsigned char)pat[n]))
		n++;
	return n;
}

static bool mem_eq(const char *a, const char *b, size_t n, bool icase)
{
	if (!icase)
		return !memcmp(a, b, n);
	for (size_t i = 0; i < n; i++)
		if (!byte_eq((unsigned char)a[i], (unsigned char)b[i], true))
			return false;
	return true;
}

static bool glob_from(const char *pat, size_t len, size_t prefix, const char *text,
		      size_t text_len, unsigned flags)
{
	bool icase = flags & GLOB_ICASE;
	if (text_len < prefix || !mem_eq(pat, text, prefix, icase))
		return false;
	if (prefix == len)
		return text_len == len;
	return run_glob(pat, len, prefix, text, text_len, prefix, flags);
}

bool glob_match(const char *pattern, size_t pattern_len, const char *text,
		size_t text_len, unsigned flags)
{
	const char *nul = memchr(pattern, '\0', pattern_len);
	if (nul)
		pattern_len = (size_t)(nul - pattern);
	nul = memchr(text, '\0', text_len);
	if (nul)
		text_len = (size_t)(nul - text);
	return glob_from(pattern, pattern_len, literal_prefix(pattern, pattern_len),
			 text, text_len, flags);
}

bool glob_is_wellformed(const char *pattern, size_t pattern_len)
{
	const char *nul = memchr(pattern, '\0', pattern_len);
	struct tok t;
	if (nul)
		pattern_len = (size_t)(nul - pattern);
	for (size_t pos = 0; pos < pattern_len; pos = t.next) {
		decode(pattern, pattern_len, pos, 0, &t);
		if (t.kind == TOK_NEVER)
			return false;
	}
	return true;
}

/* ---- pattern lists ------------------------------------------------------- */

enum pattern_flags {
	P_NEGATIVE = 1 << 0,   /* "!pattern" */
	P_MUSTBEDIR = 1 << 1,  /* "pattern/" */
	P_NODIR = 1 << 2,      /* no '/': matches the last component */
	P_NEVER = 1 << 3,      /* can match nothing (a bad set, a lone '\') */
	P_ENDSWITH = 1 << 4,   /* P_NODIR "*literal": a suffix compare */
};

/* Offsets into the list's text fit 32 bits: the text is bounded. */
struct pattern {
	uint32_t ofs, len;     /* the glob in pl->text, '!', '/'s removed */
	uint32_t prefix;       /* its literal prefix */
	uint32_t min_len;      /* bytes a match needs at least */
	uint8_t flags;
};

struct path_patterns {
	char *text;            /* a copy of the text parsed */
	struct pattern *items;
	size_t nr, alloc;
	unsigned glob_icase;   /* GLOB_ICASE or 0 */
};

/* The bytes of the line s[0..len) left when git trims trailing spaces. */
static size_t trim_trailing_spaces(const char *s, size_t len)
{
	size_t cut = len;   /* where a run of unescaped spaces starts; len: none */
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ') {
			if (cut == len)
				cut = i;
		} else if (s[i] == '\\') {
			/* an escape: the next byte stays; a last lone '\' keeps all */
			if (++i >= len)
				return len;
			cut = len;
		} else {
			cut = len;
		}
	}
	return cut;
}

static void add_pattern(struct path_patterns *pl, size_t ofs, size_t len)
{
	const char *s = pl->text + ofs;
	struct pattern *p;
	unsigned flags = 0, glob_flags;
	size_t min_len = 0;

	if (len && s[0] == '!') {
		flags |= P_NEGATIVE;
		s++, ofs++, len--;
	}
	if (len && s[len - 1] == '/') {
		flags |= P_MUSTBEDIR;
		len--;
	}
	if (!memchr(s, '/', len))
		flags |= P_NODIR;
	else if (s[0] == '/')
		s++, ofs++, len--;   /* anchored at the top, which is where we match */
	glob_flags = flags & P_NODIR ? 0 : GLOB_PATHNAME;
	for (size_t pos = 0; pos < len;) {
		struct tok t;
		decode(s, len, pos, glob_flags, &t);
		if (t.kind == TOK_NEVER)
			flags |= P_NEVER;
		else if (!is_star(t.kind))
			min_len++;
		pos = t.next;
	}
	ALLOC_GROW(pl->items, pl->nr + 1, pl->alloc);
	p = &pl->items[pl->nr++];
	p->ofs = (uint32_t)ofs;
	p->len = (uint32_t)len;
	p->prefix = (uint32_t)literal_prefix(s, len);
	p->min_len = (uint32_t)min_len;
	if ((flags & P_NODIR) && len && s[0] == '*' && literal_prefix(s + 1, len - 1) == len - 1)
		flags |= P_ENDSWITH;
	p->flags = (uint8_t)flags;
}

int path_patterns_parse(struct path_patterns **out, const char *buf, size_t len,
			unsigned flags, struct gp_error *err)
{
	struct path_patterns *pl;
	size_t start = 0, text_len = len;

	*out = NULL;
	/* git adds a newline to a last line that lacks one before it checks the size */
	if (len && buf[len - 1] != '\n')
		text_len++;
	if (text_len > PATH_PATTERNS_MAX_SIZE)
		return gp_error_set(err, GP_ENOMEM, "pattern text of %" PRIuMAX " bytes is too large",
				    (uintmax_t)len);
	pl = xcalloc(1, sizeof(*pl));
	pl->glob_icase = flags & PATH_PATTERNS_ICASE ? GLOB_ICASE : 0;
	pl->text = xmalloc(len + 1);
	memcpy(pl->text, buf, len);
	pl->text[len] = '\0';
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		start = 3;
	while (start < len) {
		const char *line = pl->text + start;
		const char *nl = memchr(line, '\n', len - start);
		size_t line_len = nl ? (size_t)(nl - line) : len - start;
		size_t used = line_len;
		const char *nul;

		if (line_len && line[0] != '#') {
			/* before LF, or at the end, where git adds one */
			if (line[used - 1] == '\r')
				used--;
			nul = memchr(line, '\0', used);
			if (nul)
				used = (size_t)(nul - line);
			add_pattern(pl, start, trim_trailing_spaces(line, used));
		}
		start += line_len + 1;
	}
	*out = pl;
	return 0;
}

void path_patterns_free(struct path_patterns *pl)
{
	if (!pl)
		return;
	free(pl->text);
	free(pl->items);
	free(pl);
}

size_t path_patterns_nr(const struct path_patterns *pl)
{
	return pl->nr;
}

static bool pattern_matches(const struct path_patterns *pl, const struct pattern *p,
			    const char *text, size_t text_len, unsigned flags)
{
	const char *s = pl->text + p->ofs;
	bool icase = flags & GLOB_ICASE;

	if (text_len < p->min_len)
		return false;
	if (p->flags & P_ENDSWITH)
		return mem_eq(s + 1, text + text_len - (p->len - 1), p->len - 1, icase);
	return glob_from(s, p->len, p->prefix, text, text_len, flags);
}

enum path_match path_patterns_match(const struct path_patterns *pl, const char *path,
				    size_t len, size_t basename_ofs, bool is_dir)
{
	for (size_t k = pl->nr; k-- > 0;) {
		const struct pattern *p = &pl->items[k];
		bool hit;

		if ((p->flags & P_NEVER) || ((p->flags & P_MUSTBEDIR) && !is_dir))
			continue;
		if (p->flags & P_NODIR)
			hit = pattern_matches(pl, p, path + basename_ofs, len - basename_ofs,
					      pl->glob_icase);
		else
			/* a pattern with a '/' never names the top itself */
			hit = len && pattern_matches(pl, p, path, len, pl->glob_icase | GLOB_PATHNAME);
		if (hit)
			return p->flags & P_NEGATIVE ? PATH_NOT_MATCHED : PATH_MATCHED;
	}
	return PATH_UNDECIDED;
}
