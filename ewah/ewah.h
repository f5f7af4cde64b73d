/*
 * ewah.h: compressed (EWAH) and plain bitmaps, the sets of object
 * positions that reachability bitmaps are made of.
 *
 * Self-contained: libc only, no gitpack header, no knowledge of Git. It
 * implements "Appendix A: Serialization format for an EWAH bitmap" of
 * Git's Documentation/technical/bitmap-format (which is JavaEWAH's
 * format, also used by JGit), with 64-bit words:
 *
 *   offset  size     field (all big-endian)
 *   0       4        bit size: bits in the uncompressed bitmap
 *   4       4        N: number of 64-bit words that follow
 *   8       8 * N    the words
 *   8+8N    4        index (in words) of the last run-length word
 *
 * The words are chunks, each one run-length word (RLW) followed by its
 * literal words. An RLW holds, from the lowest bit up:
 *
 *   bit 0        the running bit B
 *   bits 1..32   K: the number of words that are all B (32 bits)
 *   bits 33..63  M: the number of literal words that follow (31 bits)
 *
 * so a chunk stands for K words of B, then M words copied verbatim. Bit
 * `pos` of the bitmap is bit (pos % 64) of uncompressed word (pos / 64).
 *
 * Two types live here:
 *
 *  - struct bitmap: plain, uncompressed, growable; O(1) set/get, and
 *    whole-word boolean operations. Scratch space for queries.
 *  - struct ewah: compressed; built by appending in increasing order,
 *    combined with streaming boolean operations whose cost is
 *    proportional to the compressed sizes (runs are skipped in O(1)),
 *    and read from untrusted bytes, by copy or in place.
 *
 * Errors: functions that can fail return 0 (or a count) on success and
 * one of the negative EWAH_E* codes below; none of them prints, exits
 * or aborts, and on failure every object is left valid (releasable).
 *
 * Thread safety: none needed beyond the usual: distinct objects may be
 * used from different threads; read-only use of one object from several
 * threads is safe (ewah_test_set_limits() excepted).
 */
#ifndef EWAH_EWAH_H
#define EWAH_EWAH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error codes. */
#define EWAH_ECORRUPT (-1) /* serialized bytes are not a valid EWAH */
#define EWAH_ENOMEM (-2)   /* memory allocation failed */
#define EWAH_ETOOBIG (-3)  /* a size beyond what the format or memory allows */
#define EWAH_EINVAL (-4)   /* the caller asked for something impossible */

/* A static description of an EWAH_E* code ("unknown error" otherwise). */
const char *ewah_strerror(int code);

/*
 * The largest bit size of an in-memory EWAH (2^62 bits, so that word
 * and bit counts never overflow). Serialized EWAHs are limited to
 * EWAH_MAX_DISK_BITS by their 4-byte size field.
 */
#define EWAH_MAX_BITS ((uint64_t)1 << 62)
#define EWAH_MAX_DISK_BITS ((uint64_t)UINT32_MAX)

/* ------------------------------------------------------------------ */
/* Plain bitmaps                                                       */
/* ------------------------------------------------------------------ */

/*
 * An uncompressed bitmap. words[0 .. word_nr) are its bits; every word
 * past word_nr is zero by definition (and words[word_nr .. word_alloc)
 * are kept zeroed). Callers may read the fields; they change them only
 * through the functions below. word_nr may include trailing zero words.
 */
struct bitmap {
	uint64_t *words;
	size_t word_nr;    /* words in use */
	size_t word_alloc; /* words allocated */
};

#define BITMAP_INIT { .words = NULL }

void bitmap_init(struct bitmap *b);
/* Free the words; b is then empty (as after bitmap_init()). */
void bitmap_release(struct bitmap *b);
/* Make every bit zero, keeping the memory. */
void bitmap_reset(struct bitmap *b);

/*
 * Make words [0, word_nr) addressable (zero-filled); word_nr only grows.
 * After bitmap_grow(b, n), setting bits below 64 * n cannot fail.
 * Errors: EWAH_ENOMEM, EWAH_ETOOBIG (word_nr * 8 overflows size_t).
 */
int bitmap_grow(struct bitmap *b, size_t word_nr);

/* dst becomes a copy of src. Errors: EWAH_ENOMEM. */
int bitmap_copy(struct bitmap *dst, const struct bitmap *src);

/* Set bit pos, growing as needed. O(1) amortized. Errors: EWAH_ENOMEM. */
int bitmap_set(struct bitmap *b, size_t pos);
/* Clear bit pos (never grows). */
void bitmap_unset(struct bitmap *b, size_t pos);
/* Whether bit pos is set (false past the end). */
static inline bool bitmap_get(const struct bitmap *b, size_t pos)
{
	size_t word_pos = pos / 64;
	return word_pos < b->word_nr && ((b->words[word_pos] >> (pos % 64)) & 1);
}

/*
 * In-place boolean operations, dst = dst OP src, a whole word at a
 * time; O(words). OR and XOR grow dst to src's length and can fail with
 * EWAH_ENOMEM; AND and AND NOT never allocate. src may be dst.
 */
int bitmap_or(struct bitmap *dst, const struct bitmap *src);
void bitmap_and(struct bitmap *dst, const struct bitmap *src);
void bitmap_and_not(struct bitmap *dst, const struct bitmap *src);
int bitmap_xor(struct bitmap *dst, const struct bitmap *src);

struct ewah;

/*
 * The same with a compressed operand, streaming over it: runs cost O(1)
 * each (plus the words of dst they touch for OR/XOR/AND NOT with ones,
 * AND with zeros), literals one word each. OR and XOR grow dst only as
 * far as src's last nonzero word. Errors (OR, XOR): EWAH_ENOMEM,
 * EWAH_ETOOBIG (src reaches beyond what memory can address).
 */
int bitmap_or_ewah(struct bitmap *dst, const struct ewah *src);
void bitmap_and_ewah(struct bitmap *dst, const struct ewah *src);
void bitmap_and_not_ewah(struct bitmap *dst, const struct ewah *src);
int bitmap_xor_ewah(struct bitmap *dst, const struct ewah *src);

/* Number of set bits. O(words), with popcount instructions. */
uint64_t bitmap_popcount(const struct bitmap *b);
/* Whether a and b have the same bits set (lengths may differ). */
bool bitmap_equals(const struct bitmap *a, const struct bitmap *b);
/* Whether no bit is set. */
bool bitmap_is_empty(const struct bitmap *b);

/*
 * Iterate over the set bits in increasing order:
 *
 *	struct bitmap_iter it;
 *	size_t pos;
 *	bitmap_iter_init(&it, b);
 *	while (bitmap_iter_next(&it, &pos))
 *		use(pos);
 *
 * O(1) per set bit plus O(1) per word. b must not change meanwhile.
 */
struct bitmap_iter {
	const uint64_t *words;
	size_t word_nr;
	size_t word_pos; /* index of the word after the current one */
	uint64_t word;   /* bits of the current word not yet returned */
};

static inline void bitmap_iter_init(struct bitmap_iter *it, const struct bitmap *b)
{
	it->words = b->words;
	it->word_nr = b->word_nr;
	it->word_pos = 0;
	it->word = 0;
}

static inline bool bitmap_iter_next(struct bitmap_iter *it, size_t *pos)
{
	while (!it->word) {
		if (it->word_pos >= it->word_nr)
			return false;
		it->word = it->words[it->word_pos++];
	}
	*pos = (it->word_pos - 1) * 64 + (size_t)__builtin_ctzll(it->word);
	it->word &= it->word - 1;
	return true;
}

/* ------------------------------------------------------------------ */
/* EWAH bitmaps                                                        */
/* ------------------------------------------------------------------ */

/*
 * A compressed bitmap. Its words are kept exactly as they are stored on
 * disk (big-endian), so serializing is a copy and a mapped file can be
 * used in place (ewah_view()). Callers treat the fields as read-only and
 * use the accessors; the layout is public so that EWAHs can live in
 * arrays and on the stack.
 *
 * Invariants (checked by ewah_deserialize() and ewah_view(), kept by
 * every function here): the words are a well-formed chain of chunks; rlw
 * is the index of the last RLW; the chunks describe `cover` words and
 * cover <= ceil(bit_size / 64); no bit at or past bit_size is set.
 */
struct ewah {
	unsigned char *buf; /* nr words, 8 big-endian bytes each */
	size_t nr;          /* words in buf (0 only for an empty EWAH) */
	size_t alloc;       /* words allocated; 0 when buf is borrowed */
	size_t rlw;         /* index in buf of the last RLW */
	uint64_t bit_size;  /* bits in the uncompressed bitmap */
	uint64_t cover;     /* uncompressed words the chunks describe */
	bool borrowed;      /* buf belongs to someone else (read-only) */
};

#define EWAH_INIT { .buf = NULL }

void ewah_init(struct ewah *e);
/* Free what e owns (nothing when borrowed); e is then empty. */
void ewah_release(struct ewah *e);
/* Make e empty (bit size 0), keeping its memory when it owns some. */
void ewah_reset(struct ewah *e);
/* dst becomes an owned copy of src. Errors: EWAH_ENOMEM. */
int ewah_copy(struct ewah *dst, const struct ewah *src);

/* Bits in the uncompressed bitmap (its highest set bit is below it). */
static inline uint64_t ewah_bit_size(const struct ewah *e)
{
	return e->bit_size;
}

/* Words of the compressed form (what the 4-byte word count says). */
static inline size_t ewah_word_nr(const struct ewah *e)
{
	return e->nr ? e->nr : 1;
}

/*
 * Building, in increasing bit order. A borrowed EWAH is copied into
 * memory of its own first.
 *
 * ewah_set() sets bit pos, which must be at or past the bit size (so
 * bits come in strictly increasing order), and makes the bit size pos+1.
 * Errors: EWAH_EINVAL (pos below the bit size; or pos in the last word
 * of a deserialized EWAH that ends in an empty chunk, which git never
 * writes), EWAH_ETOOBIG (pos at or past EWAH_MAX_BITS), EWAH_ENOMEM.
 * O(1) amortized. On failure e is unchanged.
 *
 * ewah_append_word() and ewah_append_run() first round the bit size up
 * to a whole word, then append one uncompressed word, or nwords words
 * all equal to bit (one run, O(1) however long, split into several RLWs
 * if an RLW cannot hold it), growing the bit size by 64 per word. Same
 * errors (but EWAH_EINVAL).
 */
int ewah_set(struct ewah *e, uint64_t pos);
int ewah_append_word(struct ewah *e, uint64_t word);
int ewah_append_run(struct ewah *e, bool bit, uint64_t nwords);

/*
 * Conversions. bitmap_to_ewah() replaces out with the compressed form of
 * b, whose bit size is 64 * b->word_nr (its trailing zero words become a
 * run); errors: EWAH_ENOMEM. ewah_to_bitmap() replaces out with the
 * uncompressed bits of e (word_nr: up to e's last nonzero word); errors:
 * EWAH_ENOMEM, EWAH_ETOOBIG. Both O(words). ewah_to_bitmap() allocates
 * up to bit size / 8 bytes (512 MiB for the largest EWAH a file can
 * hold): a caller reading untrusted bitmaps checks ewah_bit_size()
 * against what it expects (say, the object count) first.
 */
int bitmap_to_ewah(struct ewah *out, const struct bitmap *b);
int ewah_to_bitmap(struct bitmap *out, const struct ewah *e);

/*
 * out = a OP b, streaming over both at once: cost O(chunks + literal
 * words) of the inputs, runs skipped or merged in O(1) whatever their
 * length. The result is compressed canonically (no literal is all zeros
 * or all ones, adjacent equal runs merge, runs and literal counts too
 * long for one RLW are split) and its bit size is the larger of the two.
 * out must be initialised and must not be a or b; its content is
 * replaced, its memory reused. Errors: EWAH_EINVAL (out is a or b),
 * EWAH_ENOMEM.
 */
int ewah_or(struct ewah *out, const struct ewah *a, const struct ewah *b);
int ewah_and(struct ewah *out, const struct ewah *a, const struct ewah *b);
int ewah_and_not(struct ewah *out, const struct ewah *a, const struct ewah *b);
int ewah_xor(struct ewah *out, const struct ewah *a, const struct ewah *b);
/*
 * out = NOT a within a's bit size: bits [0, bit size) flipped, nothing
 * set past it. Same contract as above.
 */
int ewah_not(struct ewah *out, const struct ewah *a);

/* Number of set bits. O(chunks + literal words). */
uint64_t ewah_popcount(const struct ewah *e);
/*
 * One past the highest set bit (0 when none is set): O(chunks), plus
 * the zero literal words at the end of chunks, which canonical EWAHs
 * do not have.
 */
uint64_t ewah_bits_used(const struct ewah *e);
/* Whether a and b have the same bits set (encodings and bit sizes may differ). */
bool ewah_equals(const struct ewah *a, const struct ewah *b);

/*
 * Iterate over the set bits in increasing order:
 *
 *	struct ewah_iter it;
 *	uint64_t pos;
 *	ewah_iter_init(&it, e);
 *	while (ewah_iter_next(&it, &pos))
 *		use(pos);
 *
 * Runs of zeros are skipped in O(1); otherwise O(1) per word and per
 * set bit. e must not change meanwhile.
 */
struct ewah_iter {
	const unsigned char *buf; /* the EWAH's words */
	size_t nr;                /* how many */
	size_t pos;               /* index of the next unread word */
	size_t lit;               /* literal words left in this chunk */
	uint64_t run;             /* words of ones left in this run */
	uint64_t next_base;       /* bit position of the next word */
	uint64_t base;            /* bit position of bit 0 of `word` */
	uint64_t word;            /* its bits not yet returned */
};

void ewah_iter_init(struct ewah_iter *it, const struct ewah *e);
/* Load the next nonzero word; false at the end. Internal to ewah_iter_next(). */
bool ewah_iter_refill_(struct ewah_iter *it);

static inline bool ewah_iter_next(struct ewah_iter *it, uint64_t *pos)
{
	if (!it->word && !ewah_iter_refill_(it))
		return false;
	*pos = it->base + (uint64_t)__builtin_ctzll(it->word);
	it->word &= it->word - 1;
	return true;
}

/* ------------------------------------------------------------------ */
/* Serialization                                                       */
/* ------------------------------------------------------------------ */

/*
 * Bytes ewah_serialize() writes: 12 + 8 * ewah_word_nr(e). An empty EWAH
 * is written as git writes it: bit size 0, one empty RLW.
 */
size_t ewah_serialized_size(const struct ewah *e);

/*
 * Write e in the on-disk format into dst (dst_len bytes), setting
 * *written. Errors: EWAH_ETOOBIG (bit size or word count beyond the
 * 4-byte fields), EWAH_EINVAL (dst too short).
 */
int ewah_serialize(const struct ewah *e, unsigned char *dst, size_t dst_len,
		   size_t *written);

/*
 * The same through a callback (say, a checksummed file writer), which
 * gets three calls: header, words, trailer. A negative value returned by
 * write_fn stops the writing and is returned as it is.
 */
int ewah_serialize_to(const struct ewah *e,
		      int (*write_fn)(void *data, const void *buf, size_t len),
		      void *data);

/*
 * Read one serialized EWAH from the start of buf (len bytes; bytes
 * after it are left alone) into out, replacing its content. The input
 * is untrusted: every size is checked against len without overflow, and
 * the chain of RLWs is walked once to check the invariants listed at
 * struct ewah: the literal counts agree with the word count, the stored
 * last-RLW position is the last RLW, the words describe no more than
 * the bit size (git writes exactly that many, sometimes with trailing
 * zero bits in the last word or a trailing run of zero words) and no bit
 * past it is set. Cost O(RLWs), not O(words).
 *
 * ewah_deserialize() copies the words into memory out owns.
 * ewah_view() does not copy: out borrows buf, which must stay valid and
 * unchanged for as long as out is used (say, a mapped .bitmap file);
 * buf needs no alignment.
 *
 * On success *consumed (if not NULL) is the number of bytes read. On
 * failure out is empty and *why (if not NULL) points at a static
 * description of the first problem found. Errors: EWAH_ECORRUPT,
 * EWAH_ENOMEM (ewah_deserialize only).
 */
int ewah_deserialize(struct ewah *out, const void *buf, size_t len,
		     size_t *consumed, const char **why);
int ewah_view(struct ewah *out, const void *buf, size_t len,
	      size_t *consumed, const char **why);

/*
 * For tests only: make builders split runs longer than max_run words and
 * chunks of more than max_literals literal words (0 restores the format's
 * limits, 2^32-1 and 2^31-1), so that the splitting paths run on small
 * bitmaps. Process-wide and not thread-safe.
 */
void ewah_test_set_limits(uint64_t max_run, uint64_t max_literals);

#endif
