/*
 * bitmap.c: plain, uncompressed bitmaps (ewah.h), and their boolean
 * operations with each other and with EWAH bitmaps.
 *
 * Invariant: words[word_nr, word_alloc) are zero, so growing is only a
 * matter of raising word_nr, and shrinking never happens except through
 * bitmap_reset(), which zeroes what it drops.
 *
 * Operations with an EWAH walk its segments (ewah-internal.h): a run of
 * zeros is skipped (OR, XOR, AND NOT) or cleared with one memset (AND),
 * a run of ones is one memset (OR), one clearing memset (AND NOT) or one
 * inverting loop (XOR), and literal words are combined one by one.
 */
#include "ewah-internal.h"
#include <stdlib.h>

void bitmap_init(struct bitmap *b)
{
	b->words = NULL;
	b->word_nr = 0;
	b->word_alloc = 0;
}

void bitmap_release(struct bitmap *b)
{
	free(b->words);
	bitmap_init(b);
}

void bitmap_reset(struct bitmap *b)
{
	if (b->word_nr)
		memset(b->words, 0, 8 * b->word_nr);
	b->word_nr = 0;
}

int bitmap_grow(struct bitmap *b, size_t word_nr)
{
	if (word_nr <= b->word_nr)
		return 0;
	if (word_nr > b->word_alloc) {
		size_t alloc = b->word_alloc < 4 ? 4 : b->word_alloc;
		uint64_t *words;

		if (word_nr > SIZE_MAX / 8)
			return EWAH_ETOOBIG;
		while (alloc < word_nr)
			alloc = alloc > SIZE_MAX / 16 ? word_nr : 2 * alloc;
		words = realloc(b->words, 8 * alloc);
		if (!words)
			return EWAH_ENOMEM;
		memset(words + b->word_alloc, 0, 8 * (alloc - b->word_alloc));
		b->words = words;
		b->word_alloc = alloc;
	}
	b->word_nr = word_nr;
	return 0;
}

/* bitmap_grow() for a count computed in 64 bits. */
static int grow64(struct bitmap *b, uint64_t word_nr)
{
	if (word_nr > SIZE_MAX / 8)
		return EWAH_ETOOBIG;
	return bitmap_grow(b, (size_t)word_nr);
}

int bitmap_copy(struct bitmap *dst, const struct bitmap *src)
{
	int ret;

	if (dst == src)
		return 0;
	bitmap_reset(dst);
	if ((ret = bitmap_grow(dst, src->word_nr)))
		return ret;
	if (src->word_nr)
		memcpy(dst->words, src->words, 8 * src->word_nr);
	return 0;
}

int bitmap_set(struct bitmap *b, size_t pos)
{
	size_t word_pos = pos / 64;

	if (word_pos >= b->word_nr) {
		int ret = bitmap_grow(b, word_pos + 1);
		if (ret)
			return ret;
	}
	b->words[word_pos] |= (uint64_t)1 << (pos % 64);
	return 0;
}

void bitmap_unset(struct bitmap *b, size_t pos)
{
	size_t word_pos = pos / 64;

	if (word_pos < b->word_nr)
		b->words[word_pos] &= ~((uint64_t)1 << (pos % 64));
}

int bitmap_or(struct bitmap *dst, const struct bitmap *src)
{
	int ret;

	if (dst == src)
		return 0;
	if ((ret = bitmap_grow(dst, src->word_nr)))
		return ret;
	for (size_t word_pos = 0; word_pos < src->word_nr; word_pos++)
		dst->words[word_pos] |= src->words[word_pos];
	return 0;
}

void bitmap_and(struct bitmap *dst, const struct bitmap *src)
{
	size_t common = dst->word_nr < src->word_nr ? dst->word_nr : src->word_nr;

	if (dst == src)
		return;
	for (size_t word_pos = 0; word_pos < common; word_pos++)
		dst->words[word_pos] &= src->words[word_pos];
	if (common < dst->word_nr)
		memset(dst->words + common, 0, 8 * (dst->word_nr - common));
}

void bitmap_and_not(struct bitmap *dst, const struct bitmap *src)
{
	size_t common = dst->word_nr < src->word_nr ? dst->word_nr : src->word_nr;

	if (dst == src) {
		bitmap_reset(dst);
		return;
	}
	for (size_t word_pos = 0; word_pos < common; word_pos++)
		dst->words[word_pos] &= ~src->words[word_pos];
}

int bitmap_xor(struct bitmap *dst, const struct bitmap *src)
{
	int ret;

	if (dst == src) {
		bitmap_reset(dst);
		return 0;
	}
	if ((ret = bitmap_grow(dst, src->word_nr)))
		return ret;
	for (size_t word_pos = 0; word_pos < src->word_nr; word_pos++)
		dst->words[word_pos] ^= src->words[word_pos];
	return 0;
}

int bitmap_or_ewah(struct bitmap *dst, const struct ewah *src)
{
	struct ewah_cursor c;
	uint64_t word_pos = 0;
	int ret;

	ewah_cursor_init(&c, src);
	while (ewah_cursor_fill(&c)) {
		if (c.run) {
			if (c.bit) {
				if ((ret = grow64(dst, word_pos + c.run)))
					return ret;
				memset(dst->words + word_pos, 0xff, 8 * (size_t)c.run);
			}
			word_pos += c.run;
			c.run = 0;
			continue;
		}
		for (size_t k = 0; k < c.lit; k++, word_pos++) {
			uint64_t word = ewah_get_be64(c.litp + 8 * k);
			if (!word)
				continue;
			if (word_pos >= dst->word_nr && (ret = grow64(dst, word_pos + 1)))
				return ret;
			dst->words[word_pos] |= word;
		}
		c.lit = 0;
	}
	return 0;
}

int bitmap_xor_ewah(struct bitmap *dst, const struct ewah *src)
{
	struct ewah_cursor c;
	uint64_t word_pos = 0;
	int ret;

	ewah_cursor_init(&c, src);
	while (ewah_cursor_fill(&c)) {
		if (c.run) {
			if (c.bit) {
				if ((ret = grow64(dst, word_pos + c.run)))
					return ret;
				for (uint64_t k = 0; k < c.run; k++)
					dst->words[word_pos + k] = ~dst->words[word_pos + k];
			}
			word_pos += c.run;
			c.run = 0;
			continue;
		}
		for (size_t k = 0; k < c.lit; k++, word_pos++) {
			uint64_t word = ewah_get_be64(c.litp + 8 * k);
			if (!word)
				continue;
			if (word_pos >= dst->word_nr && (ret = grow64(dst, word_pos + 1)))
				return ret;
			dst->words[word_pos] ^= word;
		}
		c.lit = 0;
	}
	return 0;
}

void bitmap_and_ewah(struct bitmap *dst, const struct ewah *src)
{
	struct ewah_cursor c;
	uint64_t word_pos = 0;

	ewah_cursor_init(&c, src);
	while (word_pos < dst->word_nr && ewah_cursor_fill(&c)) {
		if (c.run) {
			uint64_t end = word_pos + c.run;
			if (end > dst->word_nr)
				end = dst->word_nr;
			if (!c.bit)
				memset(dst->words + word_pos, 0, 8 * (size_t)(end - word_pos));
			word_pos += c.run;
			c.run = 0;
			continue;
		}
		for (size_t k = 0; k < c.lit && word_pos < dst->word_nr; k++, word_pos++)
			dst->words[word_pos] &= ewah_get_be64(c.litp + 8 * k);
		c.lit = 0;
	}
	/* Past the end of src everything is zero. */
	if (word_pos < dst->word_nr)
		memset(dst->words + word_pos, 0, 8 * (size_t)(dst->word_nr - word_pos));
}

void bitmap_and_not_ewah(struct bitmap *dst, const struct ewah *src)
{
	struct ewah_cursor c;
	uint64_t word_pos = 0;

	ewah_cursor_init(&c, src);
	while (word_pos < dst->word_nr && ewah_cursor_fill(&c)) {
		if (c.run) {
			uint64_t end = word_pos + c.run;
			if (end > dst->word_nr)
				end = dst->word_nr;
			if (c.bit)
				memset(dst->words + word_pos, 0, 8 * (size_t)(end - word_pos));
			word_pos += c.run;
			c.run = 0;
			continue;
		}
		for (size_t k = 0; k < c.lit && word_pos < dst->word_nr; k++, word_pos++)
			dst->words[word_pos] &= ~ewah_get_be64(c.litp + 8 * k);
		c.lit = 0;
	}
}

static inline __attribute__((always_inline))
uint64_t count_words(const unsigned char *p, size_t n)
{
	uint64_t count = 0;

	for (size_t k = 0; k < n; k++) {
		uint64_t word;
		memcpy(&word, p + 8 * k, 8);
		count += (uint64_t)__builtin_popcountll(word);
	}
	return count;
}

#ifdef EWAH_POPCNT_DISPATCH
EWAH_TARGET_POPCNT
static uint64_t count_words_hw(const unsigned char *p, size_t n)
{
	return count_words(p, n);
}
#endif

uint64_t ewah_popcount_words_(const unsigned char *p, size_t n)
{
#ifdef EWAH_POPCNT_DISPATCH
	if (ewah_cpu_has_popcnt())
		return count_words_hw(p, n);
#endif
	return count_words(p, n);
}

uint64_t bitmap_popcount(const struct bitmap *b)
{
	if (!b->word_nr)
		return 0;
	return ewah_popcount_words_((const unsigned char *)b->words, b->word_nr);
}

bool bitmap_equals(const struct bitmap *a, const struct bitmap *b)
{
	const struct bitmap *longer = a->word_nr > b->word_nr ? a : b;
	size_t common = a->word_nr < b->word_nr ? a->word_nr : b->word_nr;

	if (common && memcmp(a->words, b->words, 8 * common))
		return false;
	for (size_t word_pos = common; word_pos < longer->word_nr; word_pos++)
		if (longer->words[word_pos])
			return false;
	return true;
}

bool bitmap_is_empty(const struct bitmap *b)
{
	for (size_t word_pos = 0; word_pos < b->word_nr; word_pos++)
		if (b->words[word_pos])
			return false;
	return true;
}
