/*
 * ewah-io.c: the on-disk form of an EWAH bitmap (ewah.h; Git's
 * Documentation/technical/bitmap-format, "Appendix A"):
 *
 *   offset  size     field (big-endian)
 *   0       4        bit size
 *   4       4        N, the number of words
 *   8       8 * N    the words: chunks of one RLW and its literals
 *   8+8N    4        index of the last RLW
 *
 * Reading treats the bytes as hostile. Sizes are checked against the
 * buffer before anything is read, then the chain of RLWs is walked once
 * (O(RLWs): literal words are jumped over, not read) to establish what
 * every other function of ewah/ relies on:
 *
 *  - each RLW's literal count fits in the words that remain, and the
 *    last chunk ends exactly at word N;
 *  - the stored position is that of the last RLW (appending uses it);
 *  - the chunks describe at most ceil(bit size / 64) words, and no bit
 *    at or past the bit size is set (checked on the last word described:
 *    a literal, or the end of a run).
 *
 * Git writes exactly ceil(bit size / 64) words: bitmaps built bit by bit
 * have bit size = highest bit + 1, bitmaps compressed from a plain one
 * have a bit size that is a whole number of words, and may end in zero
 * bits or in a run of zero words. All of that is accepted.
 */
#include "ewah-internal.h"
#include <stdlib.h>

size_t ewah_serialized_size(const struct ewah *e)
{
	return EWAH_HEADER_SIZE + 8 * ewah_word_nr(e) + EWAH_TRAILER_SIZE;
}

/* Fill the header and trailer; EWAH_ETOOBIG if a field cannot hold its value. */
static int make_header(const struct ewah *e, unsigned char *header,
		       unsigned char *trailer)
{
	if (e->bit_size > EWAH_MAX_DISK_BITS || e->nr > UINT32_MAX ||
	    ewah_word_nr(e) > (SIZE_MAX - EWAH_HEADER_SIZE - EWAH_TRAILER_SIZE) / 8)
		return EWAH_ETOOBIG;
	ewah_put_be32(header, (uint32_t)e->bit_size);
	ewah_put_be32(header + 4, (uint32_t)ewah_word_nr(e));
	ewah_put_be32(trailer, (uint32_t)e->rlw);
	return 0;
}

int ewah_serialize(const struct ewah *e, unsigned char *dst, size_t dst_len,
		   size_t *written)
{
	unsigned char header[EWAH_HEADER_SIZE], trailer[EWAH_TRAILER_SIZE];
	size_t words = 8 * ewah_word_nr(e);
	int ret = make_header(e, header, trailer);

	if (ret)
		return ret;
	if (dst_len < ewah_serialized_size(e))
		return EWAH_EINVAL;
	memcpy(dst, header, sizeof(header));
	if (e->nr)
		memcpy(dst + EWAH_HEADER_SIZE, e->buf, words);
	else
		memset(dst + EWAH_HEADER_SIZE, 0, words); /* one empty RLW */
	memcpy(dst + EWAH_HEADER_SIZE + words, trailer, sizeof(trailer));
	if (written)
		*written = EWAH_HEADER_SIZE + words + EWAH_TRAILER_SIZE;
	return 0;
}

int ewah_serialize_to(const struct ewah *e,
		      int (*write_fn)(void *data, const void *buf, size_t len),
		      void *data)
{
	unsigned char header[EWAH_HEADER_SIZE], trailer[EWAH_TRAILER_SIZE];
	static const unsigned char empty_rlw[8];
	int ret = make_header(e, header, trailer);

	if (ret)
		return ret;
	if ((ret = write_fn(data, header, sizeof(header))) < 0)
		return ret;
	if (e->nr)
		ret = write_fn(data, e->buf, 8 * e->nr);
	else
		ret = write_fn(data, empty_rlw, sizeof(empty_rlw));
	if (ret < 0)
		return ret;
	if ((ret = write_fn(data, trailer, sizeof(trailer))) < 0)
		return ret;
	return 0;
}

struct ewah_shape {
	uint64_t bit_size;
	size_t nr;   /* words */
	size_t rlw;  /* the last RLW */
	uint64_t cover;
	const unsigned char *words;
	size_t size; /* bytes of the whole serialized form */
};

static int corrupt(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return EWAH_ECORRUPT;
}

/* Check buf[0, len) starts with a valid EWAH and describe it. */
static int parse(struct ewah_shape *s, const unsigned char *buf, size_t len,
		 const char **why)
{
	uint64_t nr, max_cover, cover = 0;
	uint64_t last_word = 0; /* the last word described, when it matters */
	size_t word_pos = 0, last_rlw = 0, stored_rlw;

	if (len < EWAH_HEADER_SIZE + EWAH_TRAILER_SIZE)
		return corrupt(why, "truncated EWAH header");
	s->bit_size = ewah_get_be32(buf);
	nr = ewah_get_be32(buf + 4);
	if (nr > (len - EWAH_HEADER_SIZE - EWAH_TRAILER_SIZE) / 8)
		return corrupt(why, "EWAH word count exceeds the buffer");
	if (!nr)
		return corrupt(why, "EWAH has no run-length word");
	s->nr = (size_t)nr;
	s->words = buf + EWAH_HEADER_SIZE;
	s->size = EWAH_HEADER_SIZE + 8 * s->nr + EWAH_TRAILER_SIZE;
	stored_rlw = ewah_get_be32(buf + EWAH_HEADER_SIZE + 8 * s->nr);
	if (stored_rlw >= s->nr)
		return corrupt(why, "EWAH last run-length word position out of range");

	max_cover = ewah_words_for_bits(s->bit_size);
	while (word_pos < s->nr) {
		uint64_t rlw = ewah_get_be64(s->words + 8 * word_pos);
		uint64_t run = rlw_run(rlw), lit = rlw_lit(rlw);

		if (lit > s->nr - word_pos - 1)
			return corrupt(why, "EWAH literal word count exceeds the words left");
		/* Both terms are below 2^33 and cover stays <= 2^26: no overflow. */
		if (run + lit > max_cover - cover)
			return corrupt(why, "EWAH words describe more bits than its bit size");
		cover += run + lit;
		if (lit)
			last_word = ewah_get_be64(s->words + 8 * (word_pos + lit));
		else if (run)
			last_word = rlw_bit(rlw) ? UINT64_MAX : 0;
		last_rlw = word_pos;
		word_pos += 1 + (size_t)lit;
	}
	if (stored_rlw != last_rlw)
		return corrupt(why, "EWAH last run-length word position is not the last run-length word");
	if (cover == max_cover && s->bit_size % 64 &&
	    last_word >> (s->bit_size % 64))
		return corrupt(why, "EWAH has bits set past its bit size");
	s->rlw = last_rlw;
	s->cover = cover;
	return 0;
}

static void fill(struct ewah *out, const struct ewah_shape *s)
{
	out->nr = s->nr;
	out->rlw = s->rlw;
	out->bit_size = s->bit_size;
	out->cover = s->cover;
}

int ewah_view(struct ewah *out, const void *buf, size_t len,
	      size_t *consumed, const char **why)
{
	struct ewah_shape s;
	int ret;

	ewah_release(out);
	if ((ret = parse(&s, buf, len, why)))
		return ret;
	/* Read-only: the words are only ever written through an owned copy. */
	out->buf = (unsigned char *)s.words;
	out->borrowed = true;
	fill(out, &s);
	if (consumed)
		*consumed = s.size;
	return 0;
}

int ewah_deserialize(struct ewah *out, const void *buf, size_t len,
		     size_t *consumed, const char **why)
{
	struct ewah_shape s;
	int ret;

	ewah_reset(out);
	if ((ret = parse(&s, buf, len, why)))
		return ret;
	if (out->alloc < s.nr) {
		unsigned char *words = realloc(out->buf, 8 * s.nr);
		if (!words) {
			if (why)
				*why = "out of memory";
			return EWAH_ENOMEM;
		}
		out->buf = words;
		out->alloc = s.nr;
	}
	memcpy(out->buf, s.words, 8 * s.nr);
	fill(out, &s);
	if (consumed)
		*consumed = s.size;
	return 0;
}
