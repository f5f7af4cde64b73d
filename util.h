/*
 * util.h: the few things every gitpack file needs: system headers,
 * allocation that aborts on small fixed-size failure, checked size
 * arithmetic, and the BUG()/ALWAYS()/NEVER() invariant helpers.
 *
 * Sizes that come from input (disk or network) must be bounded with the
 * st_* helpers, which return false on overflow instead of dying, before
 * they reach an allocator.
 */
#ifndef GP_UTIL_H
#define GP_UTIL_H

#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define GP_NORETURN __attribute__((noreturn))
#define GP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#define GP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define GP_NORETURN
#define GP_PRINTF(f, a)
#define GP_LIKELY(x) (x)
#define GP_UNLIKELY(x) (x)
#endif

/* Our own broken invariant: prints file:line and aborts. Never for input. */
#define BUG(...) gp_bug(__FILE__, __LINE__, __VA_ARGS__)
GP_NORETURN GP_PRINTF(3, 4) void gp_bug(const char *file, int line, const char *fmt, ...);

/*
 * Defensive checks that should never trigger. In debug builds
 * (GP_DEBUG) a failed check is a BUG(); in release builds they evaluate
 * to the condition so the caller can take a safe error path.
 */
#ifdef GP_DEBUG
#define ALWAYS(x) ((x) ? 1 : (BUG("ALWAYS(%s) failed", #x), 0))
#define NEVER(x) ((x) ? (BUG("NEVER(%s) failed", #x), 1) : 0)
#else
#define ALWAYS(x) (!!(x))
#define NEVER(x) (!!(x))
#endif

/* Allocation of small, fixed or already-bounded sizes; aborts on failure. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t n);
GP_PRINTF(1, 2) char *xstrfmt(const char *fmt, ...);

/* Checked arithmetic: false on overflow, result untouched then. */
static inline bool st_add(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}
static inline bool st_mult(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}
static inline bool u64_add(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* Grow (items, nr, alloc) arrays: ensure room for nr_needed items. */
#define ALLOC_GROW(items, nr_needed, alloc)                                    \
	do {                                                                   \
		if ((size_t)(nr_needed) > (size_t)(alloc)) {                   \
			size_t gp_new_alloc_ = ((size_t)(alloc) + 16) * 3 / 2; \
			if (gp_new_alloc_ < (size_t)(nr_needed))               \
				gp_new_alloc_ = (size_t)(nr_needed);           \
			(items) = xrealloc((items),                            \
					   gp_new_alloc_ * sizeof(*(items)));  \
			(alloc) = gp_new_alloc_;                               \
		}                                                              \
	} while (0)

#define FREE_AND_NULL(p) do { free(p); (p) = NULL; } while (0)

/* Big-endian helpers for on-disk formats. */
/*
 * Run fn on nr argument blocks (args, size bytes apart): blocks 1..nr-1
 * on threads of their own, block 0 on the calling thread, after
 * meanwhile(ctx) when given. A thread that cannot be started runs on
 * the calling thread instead, so the work is done either way; fn must
 * therefore never wait for another block.
 */
void run_parallel(void *(*fn)(void *), void *args, size_t size, int nr,
		  void (*meanwhile)(void *), void *ctx);

static inline uint32_t get_be32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static inline uint64_t get_be64(const void *p)
{
	const uint8_t *b = p;
	return (uint64_t)get_be32(b) << 32 | get_be32(b + 4);
}
static inline uint16_t get_be16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] << 8 | b[1]);
}
static inline void put_be32(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = v >> 24; b[1] = v >> 16; b[2] = v >> 8; b[3] = v;
}
static inline void put_be64(void *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32((uint8_t *)p + 4, (uint32_t)v);
}

/* Read/write exactly, retrying on EINTR and short counts. */
ssize_t read_in_full(int fd, void *buf, size_t count);
ssize_t write_in_full(int fd, const void *buf, size_t count);
/*
 * Write a[0..a_len) then b[0..b_len) with as few write calls as the
 * kernel allows (writev): a buffer's head and a large block after it go
 * out without copying the block. Returns -1 with errno, else 0.
 */
int write2_in_full(int fd, const void *a, size_t a_len, const void *b, size_t b_len);
ssize_t pread_in_full(int fd, void *buf, size_t count, off_t offset);
ssize_t pwrite_in_full(int fd, const void *buf, size_t count, off_t offset);

/* A size as git prints it: "123 bytes", "1.50 KiB", "12.00 MiB", "1.25 GiB". */
void humanize_size(char *buf, size_t len, uint64_t n);

bool starts_with(const char *s, const char *prefix);
bool skip_prefix(const char *s, const char *prefix, const char **rest);
bool ends_with(const char *s, const char *suffix);
/* The value of one hex digit (either case), or -1. */
int hex_digit_value(int c);
/* The byte two hex digits at p stand for; negative when either is none. */
int hex_pair_value(const char *p);
/* The n bytes 2n hex digits at hex stand for, into out; -1 when any is no digit. */
int hex_to_bytes(unsigned char *out, const char *hex, size_t n);
/*
 * Whether the len bytes at p are all hex digits: -1 if not, 1 if some
 * are capitals, else 0. Nothing is decoded.
 */
int hex_scan(const char *p, size_t len);
/* The 2n lower-case hex digits of the n bytes at raw, into out (no NUL). */
void bytes_to_hex(char *out, const unsigned char *raw, size_t n);
/* The part of path after its last '/' (all of it when there is none). */
const char *base_name(const char *path);

#endif
