/*
 * fuzz-pkt-line.c: the pkt-line reader and side-band demultiplexer of
 * pkt-line.h, on bytes from a peer.
 *
 * Input: one selector byte, then the stream. Selector bits: 0 chomp
 * LFs, 1 refuse empty lines ("0004"), 2 end of input is an error, 3 a
 * byte bound of half the stream, 4 a bound of three packets, 5-6 the
 * side-band packet size for the write-back check (6, 1000, 65520, 65520).
 * Seeds: t/fuzz/corpus/pkt-line/, a ref advertisement of stock git's,
 * v2 requests and side-band streams written by test-tool pkt-line.
 *
 * Checks beyond "no crash" (the stream is read from a copy of exactly
 * its size, so ASan sees any read past it):
 * - offsets only grow, and never pass the input or the byte bound;
 * - a data line is at most LARGE_PACKET_DATA_MAX bytes, NUL-terminated;
 * - re-encoding each accepted packet gives the bytes it was read from
 *   (header compared without case, as readers accept uppercase hex);
 * - a failure is GP_EPROTO with a message;
 * - the side-band reader agrees with the plain one on where packets
 *   are, and the data lines, written back on band 1 in packets of the
 *   chosen size and read again, come back whole and in packets no
 *   bigger than that size.
 */
#include "fuzz.h"
#include "pkt-line.h"
#include "strbuf.h"
#include <strings.h>

static const size_t band_maxes[] = { 6, SIDEBAND_MAX, SIDEBAND_64K_MAX, SIDEBAND_64K_MAX };

static void reencode(struct strbuf *out, int status, const struct pkt_reader *r,
		     bool chomped)
{
	struct gp_error err = GP_ERROR_INIT;
	static const char *const specials[] = {
		[PKT_FLUSH] = "0000", [PKT_DELIM] = "0001", [PKT_RESPONSE_END] = "0002",
	};

	if (status != PKT_DATA) {
		strbuf_add(out, specials[status], 4);
		return;
	}
	if (chomped) {
		struct strbuf line = STRBUF_INIT;
		strbuf_add(&line, r->line, r->len);
		strbuf_addch(&line, '\n');
		if (pkt_buf_add(out, line.buf, line.len, &err) < 0)
			fuzz_fail("cannot re-encode a line of %zu bytes", line.len);
		strbuf_release(&line);
	} else if (pkt_buf_add(out, r->line, r->len, &err) < 0) {
		fuzz_fail("cannot re-encode a line of %zu bytes", r->len);
	}
}

static void check_band_roundtrip(const struct strbuf *payloads, size_t packet_max)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf wire = STRBUF_INIT, back = STRBUF_INIT;
	struct pkt_sink out = pkt_sink_strbuf(&wire);
	struct pkt_reader *r = xmalloc(sizeof(*r));
	int ret, band;

	if (pkt_write_band(&out, packet_max, PKT_BAND_DATA, payloads->buf,
			   payloads->len, &err) < 0)
		fuzz_fail("pkt_write_band: %s", gp_error_msg(&err));
	pkt_reader_init_mem(r, wire.buf, wire.len, 0);
	while ((ret = pkt_read_band(r, &band, &err)) == PKT_DATA) {
		if (band != PKT_BAND_DATA || !r->len || r->len + 5 > packet_max)
			fuzz_fail("band %d packet of %zu bytes, max %zu", band, r->len,
				  packet_max);
		strbuf_add(&back, r->line, r->len);
	}
	if (ret != PKT_EOF)
		fuzz_fail("side-band write-back read as %d: %s", ret, gp_error_msg(&err));
	if (back.len != payloads->len || memcmp(back.buf, payloads->buf, back.len))
		fuzz_fail("side-band write-back changed the data");
	free(r);
	strbuf_release(&wire);
	strbuf_release(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_reader *r, *br;
	struct strbuf payloads = STRBUF_INIT, packet = STRBUF_INIT;
	unsigned flags = 0;
	unsigned char *input;
	uint8_t sel;
	int ret, band_ret, band;
	bool band_dead = false;

	if (!size)
		return 0;
	sel = data[0];
	data++;
	size--;
	/* a copy of exactly the stream's size, so over-reads are caught */
	input = xmalloc(size ? size : 1);
	if (size)
		memcpy(input, data, size);

	if (sel & 1)
		flags |= PKT_READ_CHOMP_LF;
	if (sel & 2)
		flags |= PKT_READ_NO_EMPTY;
	if (sel & 4)
		flags |= PKT_READ_EOF_IS_ERROR;
	r = xmalloc(sizeof(*r));
	br = xmalloc(sizeof(*br));
	pkt_reader_init_mem(r, input, size, flags);
	pkt_reader_init_mem(br, input, size, flags);
	if (sel & 8)
		r->max_bytes = br->max_bytes = size / 2 + 1;
	if (sel & 16)
		r->max_packets = br->max_packets = 3;

	for (;;) {
		uint64_t start = r->offset;
		size_t raw_len;

		ret = pkt_read(r, &err);
		if (ret < 0) {
			fuzz_check_error(ret, &err, GP_EPROTO, "pkt_read");
			if (r->offset > size)
				fuzz_fail("offset %" PRIu64 " past the input after an error",
					  r->offset);
			break;
		}
		if (r->offset < start || r->offset > size ||
		    (r->max_bytes && r->offset > r->max_bytes))
			fuzz_fail("offset %" PRIu64 " after %" PRIu64 ", size %zu",
				  r->offset, start, size);
		if (ret == PKT_EOF) {
			if (r->offset != size)
				fuzz_fail("EOF at %" PRIu64 " of %zu", r->offset, size);
			break;
		}
		raw_len = (size_t)(r->offset - start);
		if (ret == PKT_DATA) {
			if (r->len > LARGE_PACKET_DATA_MAX || r->line[r->len] != '\0')
				fuzz_fail("data line of %zu bytes", r->len);
			strbuf_add(&payloads, r->line, r->len);
		}
		strbuf_reset(&packet);
		reencode(&packet, ret, r, ret == PKT_DATA && raw_len == r->len + 5);
		if (packet.len != raw_len ||
		    strncasecmp(packet.buf, (const char *)input + start, 4) ||
		    memcmp(packet.buf + 4, input + start + 4, raw_len - 4))
			fuzz_fail("packet at %" PRIu64 " re-encodes differently", start);

		/* the side-band reader sees the same packet boundaries */
		if (band_dead)
			continue;
		band_ret = pkt_read_band(br, &band, &err);
		if (band_ret < 0) {
			fuzz_check_error(band_ret, &err, GP_EPROTO, "pkt_read_band");
		} else if (band_ret != ret || br->offset != r->offset ||
			   (ret == PKT_DATA && (band < 1 || band > 3)) ||
			   (ret != PKT_DATA && band)) {
			fuzz_fail("pkt_read_band gave %d (band %d) at %" PRIu64
				  ", pkt_read %d at %" PRIu64,
				  band_ret, band, br->offset, ret, r->offset);
		}
		if (band_ret < 0) /* it stops at its first bad band */
			band_dead = true;
	}

	check_band_roundtrip(&payloads, band_maxes[(sel >> 5) & 3]);
	strbuf_release(&payloads);
	strbuf_release(&packet);
	free(r);
	free(br);
	free(input);
	return 0;
}
