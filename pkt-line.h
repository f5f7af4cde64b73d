/*
 * pkt-line.h: the framing of the Git wire protocol (gitprotocol-common
 * "pkt-line Format", gitprotocol-v2 "Packet-Line Framing") and the
 * side-band multiplexing of gitprotocol-pack "Packfile Data" and
 * gitprotocol-capabilities "side-band, side-band-64k".
 *
 * A pkt-line is four lowercase hex digits giving the length of the whole
 * packet (header included), then that many bytes less four of payload:
 *
 *   "0000"            flush-pkt: end of a message
 *   "0001"            delim-pkt: end of a section (protocol v2)
 *   "0002"            response-end-pkt: end of a response (v2, stateless)
 *   "0003"            never valid
 *   "0004" .. "fff0"  data-pkt with 0 .. 65516 bytes of payload
 *
 * Readers accept uppercase hex as Git does; writers write lowercase.
 * "0004" (an empty data line) is legal but should not be sent; readers
 * take it as an empty line unless PKT_READ_NO_EMPTY says otherwise.
 *
 * Side-band: inside a data-pkt, the first payload byte names a band
 * (1 pack data, 2 progress, 3 fatal error) and the rest is that band's
 * data. A whole side-band packet is at most 1000 bytes ("side-band") or
 * 65520 bytes ("side-band-64k"), header and band byte included.
 *
 * Nothing here prints or exits: errors come back as GP_EPROTO (the peer
 * broke the framing or a bound), GP_EIO (reading or the sink failed) or
 * GP_EINVAL (the caller asked to write something unframeable), with a
 * message in err. Protocol messages follow Git's wording and add the
 * byte offset in the stream: "protocol error: bad line length character:
 * 00x1 (offset 12)".
 */
#ifndef GP_PKT_LINE_H
#define GP_PKT_LINE_H

#include "util.h"

struct gp_error;
struct strbuf;

#define LARGE_PACKET_MAX 65520 /* a whole pkt-line, header included */
#define LARGE_PACKET_DATA_MAX (LARGE_PACKET_MAX - 4) /* its payload */
#define PKT_HEADER_SIZE 4
#define SIDEBAND_MAX 1000 /* a whole "side-band" packet */
#define SIDEBAND_64K_MAX LARGE_PACKET_MAX /* a whole "side-band-64k" packet */

/* What pkt_read() found. Non-negative, so callers can switch on it. */
enum pkt_status {
	PKT_EOF = 0,          /* end of input, between two packets */
	PKT_DATA = 1,         /* a data line: r->line, r->len */
	PKT_FLUSH = 2,        /* 0000 */
	PKT_DELIM = 3,        /* 0001 */
	PKT_RESPONSE_END = 4, /* 0002 */
};

enum pkt_read_flags {
	/* Drop one trailing LF from each data line (text lines). */
	PKT_READ_CHOMP_LF = 1 << 0,
	/* End of input, even between packets, is GP_EPROTO. */
	PKT_READ_EOF_IS_ERROR = 1 << 1,
	/* An empty data line ("0004") is GP_EPROTO. */
	PKT_READ_NO_EMPTY = 1 << 2,
};

/*
 * A reader of pkt-lines from a file descriptor or from memory. Set it up
 * with pkt_reader_init_fd() or pkt_reader_init_mem(); it holds no
 * allocation, so there is nothing to release. The struct carries a
 * fixed line buffer (LARGE_PACKET_MAX + 1 bytes, about 64 KiB): put it
 * in a request struct rather than on a small thread stack.
 *
 * A descriptor is read exactly packet by packet, never ahead, so after a
 * flush the caller may hand the descriptor on (to read a pack, say).
 * Bytes read are never more than a packet's header plus the payload it
 * announces, and a payload is never more than LARGE_PACKET_DATA_MAX.
 */
struct pkt_reader {
	/* Public, read-only after each pkt_read(). */
	enum pkt_status status;
	/*
	 * The last data line's payload, NUL-terminated (a payload may hold
	 * NULs of its own: use len). Borrowed: points into the reader's
	 * buffer (for memory input too, so the input may be read-only)
	 * and stays valid until the next pkt_read().
	 */
	const char *line;
	size_t len;          /* bytes of line, after chomping */
	uint64_t offset;     /* bytes of the stream consumed so far */
	uint64_t nr_packets; /* packets read so far, of every kind */

	/* Bounds, settable after init; 0 means none. */
	uint64_t max_bytes;   /* the stream may not be longer */
	uint64_t max_packets; /* nor hold more packets (flushes count) */
	unsigned flags;       /* enum pkt_read_flags */
	/*
	 * Descriptor input: waiting longer than this for the next byte is
	 * GP_EPROTO "timed out waiting for input" (upload-pack --timeout);
	 * 0: wait as long as it takes.
	 */
	int timeout_ms;

	/* Private. */
	uint64_t pkt_ofs;          /* offset of the last packet's header */
	int fd;                    /* -1 when reading memory */
	const unsigned char *mem;  /* memory input and its length */
	size_t mem_len;
	char buf[LARGE_PACKET_MAX + 1];
};

void pkt_reader_init_fd(struct pkt_reader *r, int fd, unsigned flags);
/* Read the len bytes at mem, which must outlive the reader. */
void pkt_reader_init_mem(struct pkt_reader *r, const void *mem, size_t len,
			 unsigned flags);

/*
 * Read the next packet. Returns its enum pkt_status (PKT_EOF only at a
 * packet boundary, and only without PKT_READ_EOF_IS_ERROR), or
 *   GP_EPROTO  a length that is not four hex digits, 0003, more than
 *              LARGE_PACKET_MAX, an input ending inside a packet, or a
 *              bound of the reader exceeded;
 *   GP_EIO     read() failed.
 * After an error the reader is in no defined place in the stream: stop.
 * O(length of the packet).
 */
int pkt_read(struct pkt_reader *r, struct gp_error *err);

/*
 * Read the next packet of a side-band stream. Data lines must carry a
 * band byte 1, 2 or 3 ("protocol error: missing sideband designator",
 * "protocol error: bad band #N" otherwise); *band is set to it and
 * r->line/r->len describe what follows it. Other packets come back as
 * pkt_read() gives them, with *band = 0. Chomping applies after the band
 * byte is taken off. Errors as pkt_read().
 */
int pkt_read_band(struct pkt_reader *r, int *band, struct gp_error *err);

/*
 * Where writers send their bytes. write() must take all len bytes or
 * fail with a negative GP_E* code and a message. Ready-made sinks:
 * pkt_sink_fd(), pkt_sink_strbuf(), pkt_sink_tee().
 */
struct pkt_sink {
	int (*write)(struct pkt_sink *sink, const void *buf, size_t len,
		     struct gp_error *err);
	void *data; /* the callback's own */
	int fd;     /* for pkt_sink_fd() */
	/* For buffering sinks: send what is held (NULL: nothing ever is). */
	int (*flush)(struct pkt_sink *sink, struct gp_error *err);
};

/* Send what a buffering sink holds; 0 for the others. Errors: the sink's. */
int pkt_sink_flush(struct pkt_sink *sink, struct gp_error *err);

/*
 * A sink that gathers writes to fd and sends them in blocks of up to
 * 64 KiB, as stdio would: a ref advertisement goes out in a few write()
 * calls rather than one a line. The owner must pkt_sink_flush() before
 * it waits for the peer (who would wait for the held bytes) and at the
 * end. Errors: GP_EIO.
 */
struct pkt_buffered_sink {
	struct pkt_sink sink; /* hand &bs->sink to writers */
	int fd;
	size_t len;
	char buf[65536];
};
void pkt_buffered_sink_init(struct pkt_buffered_sink *bs, int fd);

/* A sink writing to fd (retrying short writes; errors are GP_EIO). */
struct pkt_sink pkt_sink_fd(int fd);
/* A sink appending to sb, which must outlive it. Never fails. */
struct pkt_sink pkt_sink_strbuf(struct strbuf *sb);
/*
 * A sink writing to two sinks in turn (a socket and a cache file, say);
 * pair[0] and pair[1] must outlive it. Stops at the first failure.
 */
struct pkt_sink pkt_sink_tee(struct pkt_sink pair[2]);

/*
 * Write one data line of len bytes. Errors: GP_EINVAL when len is more
 * than LARGE_PACKET_DATA_MAX (nothing is written); the sink's error.
 */
int pkt_write(struct pkt_sink *sink, const void *data, size_t len,
	      struct gp_error *err);
/*
 * pkt_write() of the line at buf + PKT_HEADER_SIZE (len bytes in all),
 * the caller having kept the first PKT_HEADER_SIZE bytes of buf for the
 * length, which this fills in: the line is not copied on the way to the
 * sink. Errors as above.
 */
int pkt_write_framed(struct pkt_sink *sink, char *buf, size_t len, struct gp_error *err);
/* Write a formatted data line (add the LF yourself). Errors as above. */
GP_PRINTF(3, 4) int pkt_writef(struct pkt_sink *sink, struct gp_error *err,
			       const char *fmt, ...);
/* Write "ERR <msg>" (gitprotocol-pack error-line, no LF). */
GP_PRINTF(3, 4) int pkt_write_error(struct pkt_sink *sink, struct gp_error *err,
				    const char *fmt, ...);
int pkt_flush(struct pkt_sink *sink, struct gp_error *err);
int pkt_delim(struct pkt_sink *sink, struct gp_error *err);
int pkt_response_end(struct pkt_sink *sink, struct gp_error *err);

/*
 * Append one data line to sb (the header and len bytes of data). For
 * callers that build a message before sending it. Errors: GP_EINVAL
 * when len is more than LARGE_PACKET_DATA_MAX (sb is left unchanged).
 */
int pkt_buf_add(struct strbuf *sb, const void *data, size_t len,
		struct gp_error *err);

enum pkt_band {
	PKT_BAND_DATA = 1,     /* pack data */
	PKT_BAND_PROGRESS = 2, /* progress messages */
	PKT_BAND_ERROR = 3,    /* a fatal error, just before the stream ends */
};

/*
 * Write len bytes on band, split into side-band packets of at most
 * packet_max bytes each (SIDEBAND_MAX or SIDEBAND_64K_MAX, header and
 * band byte included, so packet_max - 5 bytes of data in each). Writes
 * nothing when len is 0. Errors: GP_EINVAL for a band other than 1, 2,
 * 3 or packet_max outside [6, LARGE_PACKET_MAX]; the sink's error.
 */
int pkt_write_band(struct pkt_sink *sink, size_t packet_max, int band,
		   const void *data, size_t len, struct gp_error *err);
/* "0005\2": an empty progress packet, protocol v2's keepalive. */
int pkt_write_keepalive(struct pkt_sink *sink, struct gp_error *err);

/*
 * A sink that frames everything written to it on one band of another
 * sink, so that a pack writer can stream straight into a side-band
 * connection. Nothing is buffered: each write goes out as whole packets.
 */
struct pkt_band_sink {
	struct pkt_sink sink; /* hand &bs->sink to the writer */
	struct pkt_sink *out; /* borrowed */
	size_t packet_max;
	int band;
};
/* Errors: GP_EINVAL as pkt_write_band() (bs is then unusable). */
int pkt_band_sink_init(struct pkt_band_sink *bs, struct pkt_sink *out,
		       size_t packet_max, int band, struct gp_error *err);

/*
 * The name GIT_TRACE_PACKET lines give this process ("packet:
 * upload-pack< want ..."); "git" until set. Process-wide.
 */
void pkt_trace_identity(const char *name);

#endif
