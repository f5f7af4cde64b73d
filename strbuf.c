/* strbuf.c: see strbuf.h for the invariants kept here. */
#include "strbuf.h"
#include <fcntl.h>

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len_out)
{
	char *res;
	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len_out)
		*len_out = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need;
	bool fresh = !sb->alloc;
	if (!st_add(sb->len, extra, &need) || !st_add(need, 1, &need))
		BUG("strbuf_grow: size overflow");
	if (need <= sb->alloc)
		return;
	if (fresh)
		sb->buf = NULL;
	size_t alloc = sb->alloc ? sb->alloc : 16;
	while (alloc < need)
		alloc = alloc < SIZE_MAX / 2 ? alloc * 2 : need;
	sb->buf = xrealloc(sb->buf, alloc);
	sb->alloc = alloc;
	if (fresh)
		sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > (sb->alloc ? sb->alloc - 1 : 0))
		BUG("strbuf_setlen beyond allocation");
	sb->len = len;
	if (sb->buf != strbuf_slopbuf)
		sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
	strbuf_add(sb, other->buf, other->len);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed for '%s'", fmt);
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_insert(struct strbuf *sb, size_t pos, const void *data, size_t len)
{
	if (pos > sb->len)
		BUG("strbuf_insert past end");
	strbuf_grow(sb, len);
	memmove(sb->buf + pos + len, sb->buf + pos, sb->len - pos);
	memcpy(sb->buf + pos, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == ' ' || sb->buf[sb->len - 1] == '\t' ||
			   sb->buf[sb->len - 1] == '\n' || sb->buf[sb->len - 1] == '\r'))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void strbuf_trim(struct strbuf *sb)
{
	size_t skip = 0;
	strbuf_rtrim(sb);
	while (skip < sb->len && (sb->buf[skip] == ' ' || sb->buf[skip] == '\t' ||
				  sb->buf[skip] == '\n' || sb->buf[skip] == '\r'))
		skip++;
	if (skip) {
		memmove(sb->buf, sb->buf + skip, sb->len - skip);
		strbuf_setlen(sb, sb->len - skip);
	}
}

bool strbuf_getline(struct strbuf *sb, FILE *fp)
{
	int c;
	strbuf_reset(sb);
	while ((c = getc(fp)) != EOF && c != '\n')
		strbuf_addch(sb, c);
	if (c == EOF && !sb->len)
		return false;
	if (sb->len && sb->buf[sb->len - 1] == '\r')
		strbuf_setlen(sb, sb->len - 1);
	return true;
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t hint)
{
	strbuf_grow(sb, hint ? hint : 8192);
	for (;;) {
		ssize_t n;
		strbuf_grow(sb, 8192);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			sb->buf[sb->len] = '\0';
			return -1;
		}
		if (!n)
			break;
		sb->len += n;
	}
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t hint)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, saved;
	if (fd < 0)
		return -1;
	ret = strbuf_read_fd(sb, fd, hint);
	saved = errno;
	close(fd);
	errno = saved;
	return ret;
}
