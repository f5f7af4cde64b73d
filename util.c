/*
 * util.c: allocation wrappers, full reads and writes, string predicates,
 * a runner for parallel blocks. Nothing here knows about Git formats.
 */
#include "util.h"
#include <sys/uio.h>
#include <pthread.h>

void gp_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void alloc_failed(size_t size)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		alloc_failed(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		alloc_failed(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		alloc_failed(size);
	return p;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void *xmemdup(const void *p, size_t n)
{
	void *r = xmalloc(n);
	memcpy(r, p, n);
	return r;
}

char *xstrfmt(const char *fmt, ...)
{
	va_list ap;
	char *out;
	va_start(ap, fmt);
	if (vasprintf(&out, fmt, ap) < 0)
		alloc_failed(strlen(fmt));
	va_end(ap);
	return out;
}

ssize_t read_in_full(int fd, void *buf, size_t count)
{
	char *p = buf;
	size_t total = 0;
	while (total < count) {
		ssize_t n = read(fd, p + total, count - total);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (!n)
			break;
		total += n;
	}
	return total;
}

ssize_t write_in_full(int fd, const void *buf, size_t count)
{
	return write2_in_full(fd, buf, count, NULL, 0) < 0 ? -1 : (ssize_t)count;
}

int write2_in_full(int fd, const void *a, size_t a_len, const void *b, size_t b_len)
{
	struct iovec iov[2] = { { (void *)a, a_len }, { (void *)b, b_len } };
	int first = 0;
	while (first < 2) {
		ssize_t n;
		if (!iov[first].iov_len) {
			first++;
			continue;
		}
		n = writev(fd, iov + first, 2 - first);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (!n) {
			errno = ENOSPC;
			return -1;
		}
		for (size_t done = (size_t)n; done && first < 2;) {
			size_t take = MIN(done, iov[first].iov_len);
			iov[first].iov_base = (char *)iov[first].iov_base + take;
			iov[first].iov_len -= take;
			done -= take;
			if (!iov[first].iov_len)
				first++;
		}
	}
	return 0;
}

ssize_t pread_in_full(int fd, void *buf, size_t count, off_t offset)
{
	char *p = buf;
	size_t total = 0;
	while (total < count) {
		ssize_t n = pread(fd, p + total, count - total, offset + total);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (!n)
			break;
		total += n;
	}
	return total;
}

ssize_t pwrite_in_full(int fd, const void *buf, size_t count, off_t offset)
{
	const char *p = buf;
	size_t total = 0;
	while (total < count) {
		ssize_t n = pwrite(fd, p + total, count - total, offset + total);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (!n) {
			errno = ENOSPC;
			return -1;
		}
		total += n;
	}
	return total;
}

bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool skip_prefix(const char *s, const char *prefix, const char **rest)
{
	size_t len = strlen(prefix);
	if (strncmp(s, prefix, len))
		return false;
	*rest = s + len;
	return true;
}

const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && !memcmp(s + ls - lx, suffix, lx);
}

void run_parallel(void *(*fn)(void *), void *args, size_t size, int nr,
		  void (*meanwhile)(void *), void *ctx)
{
	pthread_t *tids = xcalloc(nr > 1 ? (size_t)nr : 1, sizeof(*tids));
	bool *started = xcalloc(nr > 1 ? (size_t)nr : 1, sizeof(*started));
	for (int i = 1; i < nr; i++)
		started[i] = !pthread_create(&tids[i], NULL, fn, (char *)args + (size_t)i * size);
	if (meanwhile)
		meanwhile(ctx);
	fn(args);
	for (int i = 1; i < nr; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			fn((char *)args + (size_t)i * size);
	}
	free(started);
	free(tids);
}

/* A size as git prints it: "123 bytes", "1.50 KiB", "12.00 MiB", "1.25 GiB". */
void humanize_size(char *buf, size_t len, uint64_t n)
{
	if (n >= (uint64_t)1 << 30)
		snprintf(buf, len, "%" PRIu64 ".%2.2" PRIu64 " GiB", n >> 30,
			 ((n & ((1u << 30) - 1)) * 100) >> 30);
	else if (n >= 1 << 20)
		snprintf(buf, len, "%" PRIu64 ".%2.2" PRIu64 " MiB", n >> 20,
			 ((n & ((1u << 20) - 1)) * 100) >> 20);
	else if (n >= 1 << 10)
		snprintf(buf, len, "%" PRIu64 ".%2.2" PRIu64 " KiB", n >> 10,
			 ((n & ((1u << 10) - 1)) * 100) >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " byte%s", n, n == 1 ? "" : "s");
}

/* Each byte's value as a hex digit plus one, 0 for the others: one load per digit. */
static const unsigned char hex_value_table[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int hex_digit_value(int c)
{
	return c >= 0 && c < 256 ? hex_value_table[c] - 1 : -1;
}

int hex_pair_value(const char *p)
{
	int hi = hex_value_table[(unsigned char)p[0]] - 1;
	int lo = hex_value_table[(unsigned char)p[1]] - 1;
	if ((hi | lo) < 0)
		return -1;
	return (hi << 4) | lo;
}

/*
 * Hex is read and written eight digits at a time, as a big-endian word
 * (so the first digit is the top byte, whatever the machine): a v0 ref
 * advertisement decodes and encodes an id per ref, and packed-refs is
 * checked whole when first read, which byte loops made a tenth of a
 * no-op fetch.
 */
#define BYTES_01 0x0101010101010101ULL
#define BYTES_80 0x8080808080808080ULL

/* Per byte of x (each below 0x80, so nothing carries), 0x80 where it is >= lo. */
static inline uint64_t bytes_at_least(uint64_t x, unsigned lo)
{
	return (x + BYTES_01 * (0x80 - lo)) & BYTES_80;
}

/* 0x80 in each byte of raw that is no hex digit; *upper gets 0x80 per capital. */
static inline uint64_t hex8_invalid(uint64_t raw, uint64_t *upper)
{
	uint64_t x = raw & ~BYTES_80;
	uint64_t folded = x | (BYTES_01 * 0x20);	/* 'A'..'F' -> 'a'..'f' */
	uint64_t digit = bytes_at_least(x, '0') & ~bytes_at_least(x, '9' + 1);
	uint64_t letter = bytes_at_least(folded, 'a') & ~bytes_at_least(folded, 'f' + 1);
	*upper = letter & ~((x & (BYTES_01 * 0x20)) << 2);
	return (raw & BYTES_80) | (~(digit | letter) & BYTES_80);
}

/* The four bytes eight valid hex digits (a big-endian word) stand for. */
static inline uint32_t hex8_value(uint64_t x)
{
	/* a digit's low nibble is its value; a letter's is 9 less (bit 6 set) */
	uint64_t letter = (x >> 6) & BYTES_01;
	uint64_t val = (x & (BYTES_01 * 0x0f)) + (letter << 3) + letter;
	uint64_t pair = ((val & 0x0f000f000f000f00ULL) >> 4) | (val & 0x000f000f000f000fULL);
	pair = (pair | (pair >> 8)) & 0x0000ffff0000ffffULL;
	return (uint32_t)((pair | (pair >> 16)) & 0xffffffffULL);
}

int hex_to_bytes(unsigned char *out, const char *hex, size_t n)
{
	/* one test at the end: a non-digit's table value is 0, so bad goes negative */
	uint64_t invalid = 0, upper;
	int bad = 0;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint64_t x = get_be64(hex + 2 * i);
		invalid |= hex8_invalid(x, &upper);
		put_be32(out + i, hex8_value(x));
	}
	for (; i < n; i++) {
		int hi = hex_value_table[(unsigned char)hex[2 * i]] - 1;
		int lo = hex_value_table[(unsigned char)hex[2 * i + 1]] - 1;
		bad |= hi | lo;
		out[i] = (unsigned char)(((unsigned)hi << 4) | (unsigned)lo);
	}
	return bad < 0 || invalid ? -1 : 0;
}

int hex_scan(const char *p, size_t len)
{
	uint64_t invalid = 0, upper = 0, up;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		invalid |= hex8_invalid(get_be64(p + i), &up);
		upper |= up;
	}
	for (; i < len; i++) {
		unsigned char b = (unsigned char)p[i];
		if (!hex_value_table[b])
			return -1;
		upper |= (unsigned char)(b - 'A') < 6;
	}
	if (invalid)
		return -1;
	return upper ? 1 : 0;
}

void bytes_to_hex(char *out, const unsigned char *raw, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint64_t x = get_be32(raw + i), nib, above9;
		/* one byte per 16-bit lane, then one nibble per byte */
		x = ((x & 0xffff0000ULL) << 16) | (x & 0xffffULL);
		x = ((x & 0x0000ff000000ff00ULL) << 8) | (x & 0x000000ff000000ffULL);
		nib = ((x & 0x00f000f000f000f0ULL) << 4) | (x & 0x000f000f000f000fULL);
		above9 = ((nib + BYTES_01 * 0x76) >> 7) & BYTES_01;
		put_be64(out + 2 * i, nib + BYTES_01 * '0' + above9 * ('a' - '0' - 10));
	}
	for (; i < n; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 0xf];
	}
}
