/*
 * pkt-line.c: pkt-line framing and side-band multiplexing, the lowest
 * layer of the wire protocol (gitprotocol-common "pkt-line Format",
 * gitprotocol-v2 "Packet-Line Framing", gitprotocol-pack "Packfile
 * Data", gitprotocol-capabilities "side-band, side-band-64k").
 *
 * Every length comes from the peer, so the reader trusts none: the four
 * header bytes must be hex digits, the length they give must be 0, 1, 2
 * or 4 .. LARGE_PACKET_MAX, and the payload is read into the reader's
 * own fixed buffer, so no allocation ever depends on input. Messages use
 * Git's words (a client's tests grep for them) and add the offset of the
 * packet in the stream, which Git's do not.
 */
#include "pkt-line.h"
#include <poll.h>
#include "error.h"
#include "strbuf.h"
#include "trace.h"

static const char hexdigits[] = "0123456789abcdef";

static void put_pkt_len(char *hdr, size_t len)
{
	hdr[0] = hexdigits[(len >> 12) & 0xf];
	hdr[1] = hexdigits[(len >> 8) & 0xf];
	hdr[2] = hexdigits[(len >> 4) & 0xf];
	hdr[3] = hexdigits[len & 0xf];
}

static void reader_init(struct pkt_reader *r, int fd, const void *mem,
			size_t len, unsigned flags)
{
	r->status = PKT_EOF;
	r->buf[0] = '\0';
	r->line = r->buf;
	r->len = 0;
	r->offset = 0;
	r->nr_packets = 0;
	r->max_bytes = 0;
	r->max_packets = 0;
	r->flags = flags;
	r->pkt_ofs = 0;
	r->fd = fd;
	r->mem = mem;
	r->mem_len = len;
}

void pkt_reader_init_fd(struct pkt_reader *r, int fd, unsigned flags)
{
	reader_init(r, fd, NULL, 0, flags);
}

void pkt_reader_init_mem(struct pkt_reader *r, const void *mem, size_t len,
			 unsigned flags)
{
	reader_init(r, -1, mem, len, flags);
}

/*
 * Copy up to want bytes of input into dst, setting *got (fewer only at
 * the end of the input). Returns 0 or GP_EIO.
 */
static int take(struct pkt_reader *r, char *dst, size_t want, size_t *got,
		struct gp_error *err)
{
	if (r->fd < 0) {
		/* offset never passes mem_len: it only grows by what we copy */
		size_t pos = (size_t)r->offset;
		size_t avail = r->mem_len - pos;
		*got = MIN(want, avail);
		memcpy(dst, r->mem + pos, *got);
	} else if (r->timeout_ms > 0) {
		/* an idle peer may not hold the process forever */
		*got = 0;
		while (*got < want) {
			struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
			ssize_t n;
			int ready = poll(&pfd, 1, r->timeout_ms);
			if (ready < 0 && errno == EINTR)
				continue;
			if (ready < 0)
				return gp_error_errno(err, "read error (offset %" PRIu64 ")",
						      r->offset + *got);
			if (!ready)
				return gp_error_set(err, GP_EPROTO,
						    "timed out waiting for input (offset %" PRIu64 ")",
						    r->offset + *got);
			n = read(r->fd, dst + *got, want - *got);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n < 0)
				return gp_error_errno(err, "read error (offset %" PRIu64 ")",
						      r->offset + *got);
			if (!n)
				break;
			*got += (size_t)n;
		}
	} else {
		ssize_t n = read_in_full(r->fd, dst, want);
		if (n < 0)
			return gp_error_errno(err, "read error (offset %" PRIu64 ")",
					      r->offset);
		*got = (size_t)n;
	}
	r->offset += *got;
	return 0;
}

static int hung_up(struct pkt_reader *r, struct gp_error *err)
{
	return gp_error_set(err, GP_EPROTO,
			    "the remote end hung up unexpectedly (offset %" PRIu64 ")",
			    r->pkt_ofs);
}

static int bad_length_chars(struct pkt_reader *r, const char *hdr,
			    struct gp_error *err)
{
	/* The four bytes may be anything: show them escaped. */
	char shown[4 * 4 + 1], *p = shown;
	for (int i = 0; i < PKT_HEADER_SIZE; i++) {
		unsigned char c = (unsigned char)hdr[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			*p++ = (char)c;
		} else {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hexdigits[c >> 4];
			*p++ = hexdigits[c & 0xf];
		}
	}
	*p = '\0';
	return gp_error_set(err, GP_EPROTO,
			    "protocol error: bad line length character: %s (offset %" PRIu64 ")",
			    shown, r->pkt_ofs);
}

static void trace_packet(char dir, int band, const char *data, size_t len);

int pkt_read(struct pkt_reader *r, struct gp_error *err)
{
	char hdr[PKT_HEADER_SIZE];
	size_t got, pkt_len = 0, payload;
	int ret;

	r->pkt_ofs = r->offset;
	r->line = r->buf;
	r->len = 0;
	r->buf[0] = '\0';

	ret = take(r, hdr, sizeof(hdr), &got, err);
	if (ret < 0)
		return ret;
	if (!got) {
		if (r->flags & PKT_READ_EOF_IS_ERROR)
			return hung_up(r, err);
		r->status = PKT_EOF;
		return PKT_EOF;
	}
	if (got < sizeof(hdr))
		return hung_up(r, err);
	for (int i = 0; i < PKT_HEADER_SIZE; i++) {
		int v = hex_digit_value((unsigned char)hdr[i]);
		if (v < 0)
			return bad_length_chars(r, hdr, err);
		pkt_len = (pkt_len << 4) | (size_t)v;
	}

	if (pkt_len == 3)
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: bad line length 3 (offset %" PRIu64 ")",
				    r->pkt_ofs);
	if (pkt_len > LARGE_PACKET_MAX)
		/* Git names the payload length here; so do we. */
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: bad line length %zu (offset %" PRIu64 ")",
				    pkt_len - PKT_HEADER_SIZE, r->pkt_ofs);
	if (pkt_len == PKT_HEADER_SIZE && (r->flags & PKT_READ_NO_EMPTY))
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: empty pkt-line 0004 (offset %" PRIu64 ")",
				    r->pkt_ofs);

	if (r->max_packets && r->nr_packets >= r->max_packets)
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: more than %" PRIu64 " packets (offset %" PRIu64 ")",
				    r->max_packets, r->pkt_ofs);
	payload = pkt_len < PKT_HEADER_SIZE ? 0 : pkt_len - PKT_HEADER_SIZE;
	if (r->max_bytes &&
	    (r->offset > r->max_bytes || payload > r->max_bytes - r->offset))
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: more than %" PRIu64 " bytes (offset %" PRIu64 ")",
				    r->max_bytes, r->pkt_ofs);
	r->nr_packets++;

	switch (pkt_len) {
	case 0:
		trace_packet('<', 0, "0000", 4);
		r->status = PKT_FLUSH;
		return PKT_FLUSH;
	case 1:
		trace_packet('<', 0, "0001", 4);
		r->status = PKT_DELIM;
		return PKT_DELIM;
	case 2:
		trace_packet('<', 0, "0002", 4);
		r->status = PKT_RESPONSE_END;
		return PKT_RESPONSE_END;
	}

	ret = take(r, r->buf, payload, &got, err);
	if (ret < 0)
		return ret;
	if (got < payload)
		return hung_up(r, err);
	r->buf[payload] = '\0';
	trace_packet('<', 0, r->buf, payload);
	if ((r->flags & PKT_READ_CHOMP_LF) && payload && r->buf[payload - 1] == '\n')
		r->buf[--payload] = '\0';
	r->len = payload;
	r->status = PKT_DATA;
	return PKT_DATA;
}

int pkt_read_band(struct pkt_reader *r, int *band, struct gp_error *err)
{
	unsigned flags = r->flags;
	int ret;

	*band = 0;
	/* Chomp after the band byte is off, not before. */
	r->flags &= ~(unsigned)PKT_READ_CHOMP_LF;
	ret = pkt_read(r, err);
	r->flags = flags;
	if (ret != PKT_DATA)
		return ret;
	if (!r->len)
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: missing sideband designator (offset %" PRIu64 ")",
				    r->pkt_ofs);
	if (r->buf[0] < PKT_BAND_DATA || r->buf[0] > PKT_BAND_ERROR)
		return gp_error_set(err, GP_EPROTO,
				    "protocol error: bad band #%d (offset %" PRIu64 ")",
				    (unsigned char)r->buf[0], r->pkt_ofs);
	*band = r->buf[0];
	r->line = r->buf + 1;
	r->len--;
	if ((flags & PKT_READ_CHOMP_LF) && r->len && r->line[r->len - 1] == '\n')
		r->buf[r->len--] = '\0'; /* buf[len] is line[len - 1] */
	return PKT_DATA;
}

static int fd_write(struct pkt_sink *sink, const void *buf, size_t len,
		    struct gp_error *err)
{
	if (write_in_full(sink->fd, buf, len) < 0)
		return gp_error_errno(err, "write error");
	return 0;
}

struct pkt_sink pkt_sink_fd(int fd)
{
	struct pkt_sink sink = { .write = fd_write, .fd = fd };
	return sink;
}

static int buffered_flush(struct pkt_sink *sink, struct gp_error *err)
{
	struct pkt_buffered_sink *bs = sink->data;
	if (!bs->len)
		return 0;
	if (write_in_full(bs->fd, bs->buf, bs->len) < 0) {
		bs->len = 0;
		return gp_error_errno(err, "write error");
	}
	bs->len = 0;
	return 0;
}

/* Writes this large skip the buffer. */
#define PKT_BUFFERED_DIRECT 8192

static int buffered_write(struct pkt_sink *sink, const void *buf, size_t len,
			  struct gp_error *err)
{
	struct pkt_buffered_sink *bs = sink->data;
	int ret;
	/*
	 * A large block (a side-band packet of pack data) goes out with
	 * what is held before it, in one writev: it is not copied.
	 */
	if (len >= PKT_BUFFERED_DIRECT) {
		ret = write2_in_full(bs->fd, bs->buf, bs->len, buf, len);
		bs->len = 0;
		return ret < 0 ? gp_error_errno(err, "write error") : 0;
	}
	if (bs->len + len > sizeof(bs->buf) && (ret = buffered_flush(sink, err)))
		return ret;
	memcpy(bs->buf + bs->len, buf, len);
	bs->len += len;
	return 0;
}

void pkt_buffered_sink_init(struct pkt_buffered_sink *bs, int fd)
{
	bs->fd = fd;
	bs->len = 0;
	bs->sink = (struct pkt_sink){ .write = buffered_write, .flush = buffered_flush,
				      .data = bs, .fd = fd };
}

int pkt_sink_flush(struct pkt_sink *sink, struct gp_error *err)
{
	return sink->flush ? sink->flush(sink, err) : 0;
}

static int strbuf_write(struct pkt_sink *sink, const void *buf, size_t len,
			struct gp_error *err)
{
	strbuf_add(sink->data, buf, len);
	return 0;
}

struct pkt_sink pkt_sink_strbuf(struct strbuf *sb)
{
	struct pkt_sink sink = { .write = strbuf_write, .data = sb, .fd = -1 };
	return sink;
}

static int tee_write(struct pkt_sink *sink, const void *buf, size_t len,
		     struct gp_error *err)
{
	struct pkt_sink *pair = sink->data;
	int ret = pair[0].write(&pair[0], buf, len, err);
	if (ret < 0)
		return ret;
	return pair[1].write(&pair[1], buf, len, err);
}

struct pkt_sink pkt_sink_tee(struct pkt_sink pair[2])
{
	struct pkt_sink sink = { .write = tee_write, .data = pair, .fd = -1 };
	return sink;
}

/*
 * Small packets go out in one write (whole packets keep a pipe's
 * writes atomic and halve the system calls of a ref advertisement);
 * big ones as header and payload, to keep 64 KiB off the stack.
 */
#define PKT_SMALL SIDEBAND_MAX

static const char *trace_identity = "git";

void pkt_trace_identity(const char *name)
{
	trace_identity = name;
}

/*
 * GIT_TRACE_PACKET, as git prints it: "packet: <identity>< line" for
 * what is read, ">" for what is written, control packets by their
 * four digits, other bytes than printable ones octal-escaped; at the
 * first pack data the tracing stops.
 */
static void trace_packet(char dir, int band, const char *data, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	if (!trace_packet_enabled())
		return;
	if ((band == 0 && len >= 4 && !memcmp(data, "PACK", 4)) ||
	    (band == PKT_BAND_DATA && len >= 4 && !memcmp(data, "PACK", 4))) {
		trace_packet_printf("packet: %12s%c %s", trace_identity, dir, "PACK ...");
		trace_packet_disable();
		return;
	}
	if (band)
		strbuf_addf(&sb, "\\%o", band);
	if (len && data[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		if (c >= 0x20 && c < 0x7f)
			strbuf_addch(&sb, (char)c);
		else
			strbuf_addf(&sb, "\\%o", c);
	}
	trace_packet_printf("packet: %12s%c %s", trace_identity, dir, sb.buf);
	strbuf_release(&sb);
}

static int write_packet(struct pkt_sink *sink, int band, const void *data,
			size_t len, struct gp_error *err)
{
	size_t hdr_len = PKT_HEADER_SIZE + (band ? 1 : 0);
	char small[PKT_SMALL];
	int ret;

	trace_packet('>', band, data, len);
	put_pkt_len(small, hdr_len + len);
	if (band)
		small[PKT_HEADER_SIZE] = (char)band;
	if (len <= sizeof(small) - hdr_len) {
		if (len)
			memcpy(small + hdr_len, data, len);
		return sink->write(sink, small, hdr_len + len, err);
	}
	ret = sink->write(sink, small, hdr_len, err);
	if (ret < 0)
		return ret;
	return sink->write(sink, data, len, err);
}

int pkt_write(struct pkt_sink *sink, const void *data, size_t len,
	      struct gp_error *err)
{
	if (len > LARGE_PACKET_DATA_MAX)
		return gp_error_set(err, GP_EINVAL,
				    "pkt-line of %zu bytes is longer than %d",
				    len, LARGE_PACKET_DATA_MAX);
	return write_packet(sink, 0, data, len, err);
}

int pkt_write_framed(struct pkt_sink *sink, char *buf, size_t len, struct gp_error *err)
{
	if (len < PKT_HEADER_SIZE || len - PKT_HEADER_SIZE > LARGE_PACKET_DATA_MAX)
		return gp_error_set(err, GP_EINVAL, "pkt-line of %zu bytes is longer than %d",
				    len - MIN(len, (size_t)PKT_HEADER_SIZE), LARGE_PACKET_DATA_MAX);
	trace_packet('>', 0, buf + PKT_HEADER_SIZE, len - PKT_HEADER_SIZE);
	put_pkt_len(buf, len);
	return sink->write(sink, buf, len, err);
}

static int pkt_vwritef(struct pkt_sink *sink, struct gp_error *err,
		       const char *prefix, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	strbuf_addstr(&sb, prefix);
	strbuf_vaddf(&sb, fmt, ap);
	ret = pkt_write(sink, sb.buf, sb.len, err);
	strbuf_release(&sb);
	return ret;
}

int pkt_writef(struct pkt_sink *sink, struct gp_error *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pkt_vwritef(sink, err, "", fmt, ap);
	va_end(ap);
	return ret;
}

int pkt_write_error(struct pkt_sink *sink, struct gp_error *err,
		    const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = pkt_vwritef(sink, err, "ERR ", fmt, ap);
	va_end(ap);
	return ret;
}

/* A control packet ("0000", "0001", "0002"): traced, then written as is. */
static int write_control(struct pkt_sink *sink, const char *pkt, struct gp_error *err)
{
	trace_packet('>', 0, pkt, PKT_HEADER_SIZE);
	return sink->write(sink, pkt, PKT_HEADER_SIZE, err);
}

int pkt_flush(struct pkt_sink *sink, struct gp_error *err)
{
	return write_control(sink, "0000", err);
}

int pkt_delim(struct pkt_sink *sink, struct gp_error *err)
{
	return write_control(sink, "0001", err);
}

int pkt_response_end(struct pkt_sink *sink, struct gp_error *err)
{
	return write_control(sink, "0002", err);
}

int pkt_buf_add(struct strbuf *sb, const void *data, size_t len,
		struct gp_error *err)
{
	char hdr[PKT_HEADER_SIZE];

	if (len > LARGE_PACKET_DATA_MAX)
		return gp_error_set(err, GP_EINVAL,
				    "pkt-line of %zu bytes is longer than %d",
				    len, LARGE_PACKET_DATA_MAX);
	put_pkt_len(hdr, PKT_HEADER_SIZE + len);
	strbuf_add(sb, hdr, sizeof(hdr));
	strbuf_add(sb, data, len);
	return 0;
}

static int check_band(size_t packet_max, int band, struct gp_error *err)
{
	if (band < PKT_BAND_DATA || band > PKT_BAND_ERROR)
		return gp_error_set(err, GP_EINVAL, "side-band: no band #%d", band);
	if (packet_max < PKT_HEADER_SIZE + 2 || packet_max > LARGE_PACKET_MAX)
		return gp_error_set(err, GP_EINVAL,
				    "side-band: packets of %zu bytes cannot carry data",
				    packet_max);
	return 0;
}

int pkt_write_band(struct pkt_sink *sink, size_t packet_max, int band,
		   const void *data, size_t len, struct gp_error *err)
{
	const char *p = data;
	size_t chunk_max = packet_max - PKT_HEADER_SIZE - 1;
	int ret = check_band(packet_max, band, err);

	while (!ret && len) {
		size_t chunk = MIN(len, chunk_max);
		ret = write_packet(sink, band, p, chunk, err);
		p += chunk;
		len -= chunk;
	}
	return ret;
}

int pkt_write_keepalive(struct pkt_sink *sink, struct gp_error *err)
{
	return write_packet(sink, PKT_BAND_PROGRESS, NULL, 0, err);
}

static int band_sink_write(struct pkt_sink *sink, const void *buf, size_t len,
			   struct gp_error *err)
{
	/* sink is the first member of its pkt_band_sink */
	struct pkt_band_sink *bs = (struct pkt_band_sink *)sink;
	return pkt_write_band(bs->out, bs->packet_max, bs->band, buf, len, err);
}

int pkt_band_sink_init(struct pkt_band_sink *bs, struct pkt_sink *out,
		       size_t packet_max, int band, struct gp_error *err)
{
	int ret = check_band(packet_max, band, err);

	memset(bs, 0, sizeof(*bs));
	bs->sink.write = band_sink_write;
	bs->sink.fd = -1;
	bs->out = out;
	bs->packet_max = packet_max;
	bs->band = band;
	return ret;
}
