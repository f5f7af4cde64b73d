/*
 * ewah-internal.h: what the files of ewah/ share and nobody else needs:
 * big-endian word access, the fields of a run-length word, and a cursor
 * that walks an EWAH one segment (a run, or a stretch of literal words)
 * at a time. See ewah.h for the format.
 */
#ifndef EWAH_INTERNAL_H
#define EWAH_INTERNAL_H

#include "ewah.h"
#include <string.h>

static inline uint64_t ewah_get_be64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v;
#else
	return __builtin_bswap64(v);
#endif
}

static inline void ewah_put_be64(unsigned char *p, uint64_t v)
{
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

static inline uint32_t ewah_get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void ewah_put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Run-length word fields (ewah.h): bit 0, bits 1..32, bits 33..63. */
#define RLW_RUN_SHIFT 1
#define RLW_LIT_SHIFT 33
#define RLW_MAX_RUN ((uint64_t)0xffffffff)
#define RLW_MAX_LIT ((uint64_t)0x7fffffff)
#define EWAH_HEADER_SIZE 8   /* bit size, word count */
#define EWAH_TRAILER_SIZE 4  /* last RLW position */

static inline bool rlw_bit(uint64_t rlw)
{
	return rlw & 1;
}

static inline uint64_t rlw_run(uint64_t rlw)
{
	return (rlw >> RLW_RUN_SHIFT) & RLW_MAX_RUN;
}

static inline uint64_t rlw_lit(uint64_t rlw)
{
	return rlw >> RLW_LIT_SHIFT;
}

static inline uint64_t rlw_make(bool bit, uint64_t run, uint64_t lit)
{
	return (uint64_t)bit | run << RLW_RUN_SHIFT | lit << RLW_LIT_SHIFT;
}

/*
 * Without -mpopcnt (the x86-64 baseline lacks it), __builtin_popcountll
 * is a table-driven library call, several times slower than the
 * instruction. Counting loops are therefore compiled twice, the second
 * time with EWAH_TARGET_POPCNT, and picked at run time with
 * ewah_cpu_has_popcnt().
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
#define EWAH_POPCNT_DISPATCH 1
#define EWAH_TARGET_POPCNT __attribute__((target("popcnt")))
#include <cpuid.h>
/*
 * Asked of cpuid directly, once: __builtin_cpu_supports() would link
 * libgcc's start-up probe, which runs cpuid (slow in a virtual machine)
 * in every process, bitmaps or not.
 */
static inline bool ewah_cpu_has_popcnt(void)
{
	static int known; /* 0: not asked yet; 1: no; 2: yes */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (!k) {
		unsigned int a, b, c, d;
		k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_POPCNT) ? 2 : 1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
}
#endif

/*
 * Set bits in the n 64-bit words at p (either byte order: a byte swap
 * does not change a count). In bitmap.c.
 */
uint64_t ewah_popcount_words_(const unsigned char *p, size_t n);

/* Uncompressed words needed for bit_size bits. */
static inline uint64_t ewah_words_for_bits(uint64_t bit_size)
{
	return bit_size / 64 + (bit_size % 64 != 0);
}

/*
 * A cursor over an EWAH's segments. After ewah_cursor_fill() returns
 * true, the current segment is a run (run > 0 words of `bit`) or, when
 * run is 0, lit > 0 literal words starting at litp. Consumers take
 * words off the front by decrementing run, or lit while advancing litp.
 */
struct ewah_cursor {
	const unsigned char *buf; /* the EWAH's words */
	size_t nr;                /* how many */
	size_t pos;               /* index of the next RLW */
	uint64_t run;             /* words left in the current run */
	bool bit;                 /* the run's bit */
	size_t lit;               /* literal words left in the current chunk */
	const unsigned char *litp; /* the next of them */
};

static inline void ewah_cursor_init(struct ewah_cursor *c, const struct ewah *e)
{
	c->buf = e->buf;
	c->nr = e->nr;
	c->pos = 0;
	c->run = 0;
	c->bit = false;
	c->lit = 0;
	c->litp = NULL;
}

/* Move past used-up segments; false when the EWAH is exhausted. */
static inline bool ewah_cursor_fill(struct ewah_cursor *c)
{
	while (!c->run && !c->lit) {
		uint64_t rlw;
		size_t left;

		if (c->pos >= c->nr)
			return false;
		rlw = ewah_get_be64(c->buf + 8 * c->pos++);
		left = c->nr - c->pos;
		c->run = rlw_run(rlw);
		c->bit = rlw_bit(rlw);
		c->lit = (size_t)rlw_lit(rlw);
		/* Never past the end, even if an invariant were broken. */
		if (c->lit > left)
			c->lit = left;
		c->litp = c->buf + 8 * c->pos;
		c->pos += c->lit;
	}
	return true;
}

#endif
