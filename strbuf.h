/*
 * strbuf.h: growable byte buffers with git's invariants.
 *
 * - buf is always NUL-terminated at buf[len], so it can be passed to
 *   string functions, but may hold NUL bytes before len.
 * - A strbuf initialised with STRBUF_INIT points at a shared empty
 *   string and owns no memory until something is added.
 * - strbuf_detach() is the only way to take ownership of the buffer.
 */
#ifndef GP_STRBUF_H
#define GP_STRBUF_H

#include "util.h"

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { .alloc = 0, .len = 0, .buf = strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Returns the buffer (caller frees) and resets sb to empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len_out);

/* Make room for extra more bytes beyond len (aborts on overflow). */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb) { strbuf_setlen(sb, 0); }

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other);
GP_PRINTF(2, 3) void strbuf_addf(struct strbuf *sb, const char *fmt, ...);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_insert(struct strbuf *sb, size_t pos, const void *data, size_t len);

void strbuf_rtrim(struct strbuf *sb);
void strbuf_trim(struct strbuf *sb);

/*
 * Read one line from fp without its terminator ("\n" or "\r\n").
 * Returns false at EOF with nothing read.
 */
bool strbuf_getline(struct strbuf *sb, FILE *fp);
/* Append the whole file at path; 0 or -1 with errno set. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t hint);
/* Append everything readable from fd; 0 or -1 with errno set. */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t hint);

#endif
