/*
 * ewah.c: building, combining and iterating EWAH bitmaps (ewah.h).
 *
 * The words of an EWAH stay in their on-disk byte order (big-endian)
 * in memory: that makes serializing a copy and lets a mapped .bitmap be
 * read in place, at the price of a byte swap (one instruction) per word
 * touched.
 *
 * Everything that writes an EWAH goes through two appenders, add_run()
 * and add_literal(), which keep the output canonical: a literal that is
 * all zeros or all ones becomes a one-word run, a run extends the last
 * chunk's run when that chunk has no literals yet and the same running
 * bit, and a run or literal count that an RLW cannot hold (2^32-1 and
 * 2^31-1 words, or the smaller test limits) continues in a new chunk.
 * Git's writer makes the same choices: bitmaps built bit by bit with
 * ewah_set() come out byte for byte as git writes its type bitmaps, and
 * commit bitmaps (bitmap_to_ewah(), then ewah_xor() against another)
 * as git writes its entries (t/t0110-ewah.sh checks both).
 *
 * The boolean operations walk both inputs segment by segment (a run, or
 * a stretch of literal words) with the cursor of ewah-internal.h, so
 * runs cost O(1) however long they are, and an exhausted input counts
 * as an endless run of zeros.
 */
#include "ewah-internal.h"
#include <stdlib.h>

/* The builders' limits: the format's, or smaller ones set by tests. */
static uint64_t max_run = RLW_MAX_RUN;
static uint64_t max_lit = RLW_MAX_LIT;

/* Uncompressed words an in-memory EWAH may describe. */
#define EWAH_MAX_WORDS (EWAH_MAX_BITS / 64)

void ewah_test_set_limits(uint64_t run, uint64_t literals)
{
	max_run = run && run < RLW_MAX_RUN ? run : RLW_MAX_RUN;
	max_lit = literals && literals < RLW_MAX_LIT ? literals : RLW_MAX_LIT;
}

const char *ewah_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case EWAH_ECORRUPT:
		return "corrupt EWAH bitmap";
	case EWAH_ENOMEM:
		return "out of memory";
	case EWAH_ETOOBIG:
		return "bitmap too large";
	case EWAH_EINVAL:
		return "invalid argument";
	}
	return "unknown error";
}

void ewah_init(struct ewah *e)
{
	struct ewah blank = EWAH_INIT;
	*e = blank;
}

void ewah_release(struct ewah *e)
{
	if (!e->borrowed)
		free(e->buf);
	ewah_init(e);
}

void ewah_reset(struct ewah *e)
{
	if (e->borrowed) {
		ewah_init(e);
		return;
	}
	e->nr = 0;
	e->rlw = 0;
	e->bit_size = 0;
	e->cover = 0;
}

static inline uint64_t word_at(const struct ewah *e, size_t word_pos)
{
	return ewah_get_be64(e->buf + 8 * word_pos);
}

static inline void word_put(struct ewah *e, size_t word_pos, uint64_t word)
{
	ewah_put_be64(e->buf + 8 * word_pos, word);
}

/* Make room for extra more words; a borrowed buf is copied first. */
static int ewah_reserve(struct ewah *e, size_t extra)
{
	size_t need, alloc;
	unsigned char *buf;

	if (extra > SIZE_MAX / 8 - e->nr)
		return EWAH_ETOOBIG;
	need = e->nr + extra;
	if (!e->borrowed && need <= e->alloc)
		return 0;
	alloc = e->borrowed ? e->nr : e->alloc;
	if (alloc < 8)
		alloc = 8;
	while (alloc < need)
		alloc = alloc > SIZE_MAX / 16 ? need : 2 * alloc;
	if (e->borrowed) {
		buf = malloc(alloc * 8);
		if (!buf)
			return EWAH_ENOMEM;
		if (e->nr)
			memcpy(buf, e->buf, e->nr * 8);
		e->borrowed = false;
	} else {
		buf = realloc(e->buf, alloc * 8);
		if (!buf)
			return EWAH_ENOMEM;
	}
	e->buf = buf;
	e->alloc = alloc;
	return 0;
}

int ewah_copy(struct ewah *dst, const struct ewah *src)
{
	int ret;

	if (dst == src)
		return ewah_reserve(dst, 0);
	ewah_reset(dst);
	ret = ewah_reserve(dst, src->nr);
	if (ret)
		return ret;
	if (src->nr)
		memcpy(dst->buf, src->buf, src->nr * 8);
	dst->nr = src->nr;
	dst->rlw = src->rlw;
	dst->bit_size = src->bit_size;
	dst->cover = src->cover;
	return 0;
}

static int push_word(struct ewah *e, uint64_t word)
{
	if (e->nr >= e->alloc || e->borrowed) {
		int ret = ewah_reserve(e, 1);
		if (ret)
			return ret;
	}
	word_put(e, e->nr++, word);
	return 0;
}

/* Start a new, empty chunk. */
static int push_rlw(struct ewah *e)
{
	int ret = push_word(e, 0);
	if (!ret)
		e->rlw = e->nr - 1;
	return ret;
}

/* Append nwords uncompressed words equal to bit (bit size untouched). */
static int add_run_slow(struct ewah *e, bool bit, uint64_t nwords)
{
	int ret;

	if (!nwords)
		return 0;
	if (nwords > EWAH_MAX_WORDS - e->cover)
		return EWAH_ETOOBIG;
	/* Never write into a borrowed buffer (callers copy it first). */
	if (e->borrowed && (ret = ewah_reserve(e, 0)))
		return ret;
	if (!e->nr && (ret = push_rlw(e)))
		return ret;
	while (nwords) {
		uint64_t rlw = word_at(e, e->rlw);
		uint64_t run = rlw_run(rlw), take;

		/* A run can only open a chunk, and holds one bit value. */
		if (rlw_lit(rlw) || (run && rlw_bit(rlw) != bit) || run >= max_run) {
			if ((ret = push_rlw(e)))
				return ret;
			continue;
		}
		take = max_run - run < nwords ? max_run - run : nwords;
		word_put(e, e->rlw, rlw_make(bit, run + take, 0));
		e->cover += take;
		nwords -= take;
	}
	return 0;
}

/*
 * The common case inline: the last chunk has no literals yet and a run
 * of the same bit (or none) with room left.
 */
static inline int add_run(struct ewah *e, bool bit, uint64_t nwords)
{
	if (e->nr && nwords <= max_run && e->cover < EWAH_MAX_WORDS - nwords) {
		uint64_t rlw = word_at(e, e->rlw), run = rlw_run(rlw);
		if (!rlw_lit(rlw) && (!run || rlw_bit(rlw) == bit) &&
		    nwords <= max_run - run && !e->borrowed) {
			word_put(e, e->rlw, rlw_make(bit, run + nwords, 0));
			e->cover += nwords;
			return 0;
		}
	}
	return add_run_slow(e, bit, nwords);
}

/* Append one uncompressed word (bit size untouched). */
static int add_literal_slow(struct ewah *e, uint64_t word)
{
	uint64_t rlw;
	int ret;

	if (!word)
		return add_run(e, false, 1);
	if (word == UINT64_MAX)
		return add_run(e, true, 1);
	if (e->cover >= EWAH_MAX_WORDS)
		return EWAH_ETOOBIG;
	if (e->borrowed && (ret = ewah_reserve(e, 0)))
		return ret;
	if (!e->nr && (ret = push_rlw(e)))
		return ret;
	rlw = word_at(e, e->rlw);
	if (rlw_lit(rlw) >= max_lit) {
		if ((ret = push_rlw(e)))
			return ret;
		rlw = 0;
	}
	if ((ret = push_word(e, word)))
		return ret;
	word_put(e, e->rlw, rlw + ((uint64_t)1 << RLW_LIT_SHIFT));
	e->cover++;
	return 0;
}

/* The common case inline: room in the buffer and in the last chunk. */
static inline int add_literal(struct ewah *e, uint64_t word)
{
	/* nr < alloc: the buffer is ours (borrowed ones have alloc 0). */
	if (word && word != UINT64_MAX && e->nr && e->nr < e->alloc &&
	    e->cover < EWAH_MAX_WORDS) {
		uint64_t rlw = word_at(e, e->rlw);
		if (rlw_lit(rlw) < max_lit) {
			word_put(e, e->nr++, word);
			word_put(e, e->rlw, rlw + ((uint64_t)1 << RLW_LIT_SHIFT));
			e->cover++;
			return 0;
		}
	}
	return add_literal_slow(e, word);
}

/* Append n literal words read from p, inverted if asked. */
static int add_literals(struct ewah *e, const unsigned char *p, size_t n, bool invert)
{
	uint64_t flip = invert ? UINT64_MAX : 0;

	for (size_t k = 0; k < n; k++) {
		int ret = add_literal(e, ewah_get_be64(p + 8 * k) ^ flip);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * What the public appenders may change, so that a failure half-way
 * leaves e as it was: the last RLW, the last word, and the count.
 */
struct ewah_undo {
	size_t nr, rlw;
	uint64_t cover, rlw_word, last_word;
};

static void undo_save(struct ewah_undo *u, const struct ewah *e)
{
	u->nr = e->nr;
	u->rlw = e->rlw;
	u->cover = e->cover;
	u->rlw_word = e->nr ? word_at(e, e->rlw) : 0;
	u->last_word = e->nr ? word_at(e, e->nr - 1) : 0;
}

static void undo_restore(const struct ewah_undo *u, struct ewah *e)
{
	e->nr = u->nr;
	e->rlw = u->rlw;
	e->cover = u->cover;
	if (e->nr && !e->borrowed) {
		word_put(e, e->rlw, u->rlw_word);
		word_put(e, e->nr - 1, u->last_word);
	}
}

/* Zero words between what the chunks describe and the bit size. */
static int pad_to_bit_size(struct ewah *e)
{
	return add_run(e, false, ewah_words_for_bits(e->bit_size) - e->cover);
}

int ewah_set(struct ewah *e, uint64_t pos)
{
	uint64_t word_pos = pos / 64, bit = (uint64_t)1 << (pos % 64);
	struct ewah_undo undo;
	int ret;

	if (pos >= EWAH_MAX_BITS)
		return EWAH_ETOOBIG;
	if (pos < e->bit_size)
		return EWAH_EINVAL;
	if ((ret = ewah_reserve(e, 0)))
		return ret;
	undo_save(&undo, e);
	if (word_pos >= e->cover) {
		ret = add_run(e, false, word_pos - e->cover);
		if (!ret)
			ret = add_literal(e, bit);
	} else {
		/*
		 * pos is in the last word described (no bit at or past the
		 * bit size is set, so it is not all ones): the last literal
		 * of the last chunk, or the end of its run of zeros.
		 */
		uint64_t rlw = word_at(e, e->rlw);
		uint64_t lit = rlw_lit(rlw), run = rlw_run(rlw);

		if (lit) {
			uint64_t word = word_at(e, e->nr - 1) | bit;
			if (word != UINT64_MAX) {
				word_put(e, e->nr - 1, word);
			} else {
				/* Full: it becomes (part of) a run of ones. */
				word_put(e, e->rlw, rlw - ((uint64_t)1 << RLW_LIT_SHIFT));
				e->nr--;
				e->cover--;
				ret = add_run(e, true, 1);
			}
		} else if (run && !rlw_bit(rlw)) {
			word_put(e, e->rlw, rlw_make(false, run - 1, 0));
			e->cover--;
			ret = add_literal(e, bit);
		} else {
			/* An empty last chunk after others: not ours to append to. */
			ret = EWAH_EINVAL;
		}
	}
	if (ret)
		undo_restore(&undo, e);
	else
		e->bit_size = pos + 1;
	return ret;
}

static int append_words(struct ewah *e, bool is_run, bool bit, uint64_t word,
			uint64_t nwords)
{
	struct ewah_undo undo;
	int ret;

	if ((ret = ewah_reserve(e, 0)))
		return ret;
	undo_save(&undo, e);
	ret = pad_to_bit_size(e);
	if (!ret)
		ret = is_run ? add_run(e, bit, nwords) : add_literal(e, word);
	if (ret)
		undo_restore(&undo, e);
	else
		e->bit_size = e->cover * 64;
	return ret;
}

int ewah_append_word(struct ewah *e, uint64_t word)
{
	return append_words(e, false, false, word, 1);
}

int ewah_append_run(struct ewah *e, bool bit, uint64_t nwords)
{
	return append_words(e, true, bit, 0, nwords);
}

int bitmap_to_ewah(struct ewah *out, const struct bitmap *b)
{
	size_t word_pos = 0;
	int ret = 0;

	ewah_reset(out);
	if (b->word_nr > EWAH_MAX_WORDS)
		return EWAH_ETOOBIG;
	while (word_pos < b->word_nr && !ret) {
		uint64_t word = b->words[word_pos];
		size_t end = word_pos + 1;

		if (word == 0 || word == UINT64_MAX) {
			while (end < b->word_nr && b->words[end] == word)
				end++;
			ret = add_run(out, word != 0, end - word_pos);
		} else {
			ret = add_literal(out, word);
		}
		word_pos = end;
	}
	if (ret) {
		ewah_reset(out);
		return ret;
	}
	out->bit_size = (uint64_t)b->word_nr * 64;
	return 0;
}

int ewah_to_bitmap(struct bitmap *out, const struct ewah *e)
{
	int ret;

	bitmap_reset(out);
	ret = bitmap_or_ewah(out, e);
	if (ret)
		bitmap_reset(out);
	return ret;
}

enum ewah_op { EWAH_OP_OR, EWAH_OP_AND, EWAH_OP_AND_NOT, EWAH_OP_XOR };

static inline uint64_t op_word(enum ewah_op op, uint64_t a, uint64_t b)
{
	switch (op) {
	case EWAH_OP_OR:
		return a | b;
	case EWAH_OP_AND:
		return a & b;
	case EWAH_OP_AND_NOT:
		return a & ~b;
	case EWAH_OP_XOR:
		break;
	}
	return a ^ b;
}

static int add_literals_op(struct ewah *out, enum ewah_op op,
			   const unsigned char *pa, const unsigned char *pb, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t word = op_word(op, ewah_get_be64(pa + 8 * k),
					ewah_get_be64(pb + 8 * k));
		int ret = add_literal(out, word);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * n words of a run of `bit` against n literal words at p; run_is_a says
 * which operand the run belongs to (AND NOT is not symmetric). Each
 * case is a run or a copy of the literals, inverted or not.
 */
static int run_with_literals(struct ewah *out, enum ewah_op op, bool bit,
			     bool run_is_a, const unsigned char *p, size_t n)
{
	switch (op) {
	case EWAH_OP_OR:
		return bit ? add_run(out, true, n) : add_literals(out, p, n, false);
	case EWAH_OP_AND:
		return bit ? add_literals(out, p, n, false) : add_run(out, false, n);
	case EWAH_OP_XOR:
		return add_literals(out, p, n, bit);
	case EWAH_OP_AND_NOT:
		if (run_is_a) /* run & ~lit */
			return bit ? add_literals(out, p, n, true) : add_run(out, false, n);
		/* lit & ~run */
		return bit ? add_run(out, false, n) : add_literals(out, p, n, false);
	}
	return EWAH_EINVAL;
}

/* Append what is left of c. */
static int add_rest(struct ewah *out, struct ewah_cursor *c)
{
	int ret = 0;

	while (!ret && ewah_cursor_fill(c)) {
		if (c->run) {
			ret = add_run(out, c->bit, c->run);
			c->run = 0;
		} else {
			ret = add_literals(out, c->litp, c->lit, false);
			c->lit = 0;
		}
	}
	return ret;
}

static int binop(struct ewah *out, const struct ewah *a, const struct ewah *b,
		 enum ewah_op op)
{
	struct ewah_cursor ca, cb;
	bool has_a, has_b;
	int ret = 0;

	if (out == a || out == b)
		return EWAH_EINVAL;
	ewah_reset(out);
	ewah_cursor_init(&ca, a);
	ewah_cursor_init(&cb, b);
	for (;;) {
		has_a = ewah_cursor_fill(&ca);
		has_b = ewah_cursor_fill(&cb);
		if (!has_a || !has_b)
			break;
		if (ca.run && cb.run) {
			uint64_t n = ca.run < cb.run ? ca.run : cb.run;
			ret = add_run(out, op_word(op, ca.bit ? UINT64_MAX : 0,
						   cb.bit ? UINT64_MAX : 0) != 0, n);
			ca.run -= n;
			cb.run -= n;
		} else if (ca.run) {
			size_t n = ca.run < cb.lit ? (size_t)ca.run : cb.lit;
			ret = run_with_literals(out, op, ca.bit, true, cb.litp, n);
			ca.run -= n;
			cb.lit -= n;
			cb.litp += 8 * n;
		} else if (cb.run) {
			size_t n = cb.run < ca.lit ? (size_t)cb.run : ca.lit;
			ret = run_with_literals(out, op, cb.bit, false, ca.litp, n);
			cb.run -= n;
			ca.lit -= n;
			ca.litp += 8 * n;
		} else {
			size_t n = ca.lit < cb.lit ? ca.lit : cb.lit;
			ret = add_literals_op(out, op, ca.litp, cb.litp, n);
			ca.lit -= n;
			ca.litp += 8 * n;
			cb.lit -= n;
			cb.litp += 8 * n;
		}
		if (ret)
			goto fail;
	}
	/* One side has ended: it is all zeros from here on. */
	if (has_a && op != EWAH_OP_AND)
		ret = add_rest(out, &ca);
	else if (has_b && (op == EWAH_OP_OR || op == EWAH_OP_XOR))
		ret = add_rest(out, &cb);
	if (ret)
		goto fail;
	out->bit_size = a->bit_size > b->bit_size ? a->bit_size : b->bit_size;
	return 0;
fail:
	ewah_reset(out);
	return ret;
}

int ewah_or(struct ewah *out, const struct ewah *a, const struct ewah *b)
{
	return binop(out, a, b, EWAH_OP_OR);
}

int ewah_and(struct ewah *out, const struct ewah *a, const struct ewah *b)
{
	return binop(out, a, b, EWAH_OP_AND);
}

int ewah_and_not(struct ewah *out, const struct ewah *a, const struct ewah *b)
{
	return binop(out, a, b, EWAH_OP_AND_NOT);
}

int ewah_xor(struct ewah *out, const struct ewah *a, const struct ewah *b)
{
	return binop(out, a, b, EWAH_OP_XOR);
}

int ewah_not(struct ewah *out, const struct ewah *a)
{
	struct ewah ones = EWAH_INIT;
	uint64_t tail = a->bit_size % 64;
	int ret;

	if (out == a)
		return EWAH_EINVAL;
	/* NOT a = a XOR (bit_size ones): nothing set past the bit size. */
	ret = add_run(&ones, true, a->bit_size / 64);
	if (!ret && tail)
		ret = add_literal(&ones, ((uint64_t)1 << tail) - 1);
	ones.bit_size = a->bit_size;
	if (!ret)
		ret = binop(out, a, &ones, EWAH_OP_XOR);
	else
		ewah_reset(out);
	ewah_release(&ones);
	return ret;
}

/* One pass over the chunks; runs count in O(1). */
static inline __attribute__((always_inline))
uint64_t count_chunks(const unsigned char *buf, size_t nr)
{
	uint64_t count = 0;
	size_t word_pos = 0;

	while (word_pos < nr) {
		uint64_t rlw = ewah_get_be64(buf + 8 * word_pos++);
		size_t lit = (size_t)rlw_lit(rlw);

		if (lit > nr - word_pos)
			lit = nr - word_pos;
		if (rlw_bit(rlw))
			count += 64 * rlw_run(rlw);
		for (size_t k = 0; k < lit; k++) {
			uint64_t word;
			memcpy(&word, buf + 8 * (word_pos + k), 8);
			count += (uint64_t)__builtin_popcountll(word);
		}
		word_pos += lit;
	}
	return count;
}

#ifdef EWAH_POPCNT_DISPATCH
EWAH_TARGET_POPCNT
static uint64_t count_chunks_hw(const unsigned char *buf, size_t nr)
{
	return count_chunks(buf, nr);
}
#endif

uint64_t ewah_popcount(const struct ewah *e)
{
#ifdef EWAH_POPCNT_DISPATCH
	if (ewah_cpu_has_popcnt())
		return count_chunks_hw(e->buf, e->nr);
#endif
	return count_chunks(e->buf, e->nr);
}

uint64_t ewah_bits_used(const struct ewah *e)
{
	uint64_t word_pos = 0, used = 0;
	size_t i = 0;
	while (i < e->nr) {
		uint64_t rlw = ewah_get_be64(e->buf + 8 * i);
		uint64_t run = rlw_run(rlw), lit = rlw_lit(rlw);
		if (run && rlw_bit(rlw))
			used = 64 * (word_pos + run);
		word_pos += run;
		for (uint64_t k = lit; k-- > 0;) {
			uint64_t word = ewah_get_be64(e->buf + 8 * (i + 1 + k));
			if (word) {
				used = 64 * (word_pos + k) + 64 - (uint64_t)__builtin_clzll(word);
				break;
			}
		}
		word_pos += lit;
		i += 1 + lit;
	}
	return used;
}

/* Whether the rest of c is all zeros. */
static bool rest_is_zero(struct ewah_cursor *c)
{
	while (ewah_cursor_fill(c)) {
		if (c->run) {
			if (c->bit)
				return false;
			c->run = 0;
		} else {
			for (size_t k = 0; k < c->lit; k++)
				if (ewah_get_be64(c->litp + 8 * k))
					return false;
			c->lit = 0;
		}
	}
	return true;
}

/* Whether the n literals at p all equal word. */
static bool literals_are(const unsigned char *p, size_t n, uint64_t word)
{
	for (size_t k = 0; k < n; k++)
		if (ewah_get_be64(p + 8 * k) != word)
			return false;
	return true;
}

bool ewah_equals(const struct ewah *a, const struct ewah *b)
{
	struct ewah_cursor ca, cb;

	ewah_cursor_init(&ca, a);
	ewah_cursor_init(&cb, b);
	for (;;) {
		bool has_a = ewah_cursor_fill(&ca), has_b = ewah_cursor_fill(&cb);

		if (!has_a)
			return rest_is_zero(&cb);
		if (!has_b)
			return rest_is_zero(&ca);
		if (ca.run && cb.run) {
			uint64_t n = ca.run < cb.run ? ca.run : cb.run;
			if (ca.bit != cb.bit)
				return false;
			ca.run -= n;
			cb.run -= n;
		} else if (ca.run) {
			size_t n = ca.run < cb.lit ? (size_t)ca.run : cb.lit;
			if (!literals_are(cb.litp, n, ca.bit ? UINT64_MAX : 0))
				return false;
			ca.run -= n;
			cb.lit -= n;
			cb.litp += 8 * n;
		} else if (cb.run) {
			size_t n = cb.run < ca.lit ? (size_t)cb.run : ca.lit;
			if (!literals_are(ca.litp, n, cb.bit ? UINT64_MAX : 0))
				return false;
			cb.run -= n;
			ca.lit -= n;
			ca.litp += 8 * n;
		} else {
			size_t n = ca.lit < cb.lit ? ca.lit : cb.lit;
			if (memcmp(ca.litp, cb.litp, 8 * n))
				return false;
			ca.lit -= n;
			ca.litp += 8 * n;
			cb.lit -= n;
			cb.litp += 8 * n;
		}
	}
}

void ewah_iter_init(struct ewah_iter *it, const struct ewah *e)
{
	it->buf = e->buf;
	it->nr = e->nr;
	it->pos = 0;
	it->lit = 0;
	it->run = 0;
	it->next_base = 0;
	it->base = 0;
	it->word = 0;
}

bool ewah_iter_refill_(struct ewah_iter *it)
{
	for (;;) {
		uint64_t rlw;
		size_t left;

		if (it->run) {
			it->run--;
			it->base = it->next_base;
			it->next_base += 64;
			it->word = UINT64_MAX;
			return true;
		}
		while (it->lit) {
			uint64_t word = ewah_get_be64(it->buf + 8 * it->pos++);
			it->lit--;
			it->base = it->next_base;
			it->next_base += 64;
			if (word) {
				it->word = word;
				return true;
			}
		}
		if (it->pos >= it->nr)
			return false;
		rlw = ewah_get_be64(it->buf + 8 * it->pos++);
		left = it->nr - it->pos;
		it->lit = (size_t)rlw_lit(rlw);
		if (it->lit > left)
			it->lit = left;
		if (rlw_bit(rlw))
			it->run = rlw_run(rlw);
		else
			it->next_base += 64 * rlw_run(rlw); /* zeros: skipped */
	}
}
