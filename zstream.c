/*
 * zstream.c: see zstream.h. libdeflate when HAVE_LIBDEFLATE, zlib
 * otherwise; the two paths must report the same errors.
 */
#include "zstream.h"
#include "error.h"
#include "strbuf.h"
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

struct inflater {
#ifdef HAVE_LIBDEFLATE
	struct libdeflate_decompressor *d;
#endif
	z_stream z;
	bool z_ready;
};

struct inflater *inflater_new(void)
{
	struct inflater *inf = xcalloc(1, sizeof(*inf));
#ifdef HAVE_LIBDEFLATE
	inf->d = libdeflate_alloc_decompressor();
	if (!inf->d)
		BUG("libdeflate_alloc_decompressor failed");
#endif
	return inf;
}

void inflater_free(struct inflater *inf)
{
	if (!inf)
		return;
#ifdef HAVE_LIBDEFLATE
	libdeflate_free_decompressor(inf->d);
#endif
	if (inf->z_ready)
		inflateEnd(&inf->z);
	free(inf);
}

static int inflate_exact_zlib(struct inflater *inf, const void *in, size_t in_len,
			      void *out, size_t out_len, size_t *consumed,
			      struct gp_error *err)
{
	unsigned char dummy;
	z_stream *z = &inf->z;
	int status;
	size_t in_done = 0, out_done = 0;

	if (!inf->z_ready) {
		memset(z, 0, sizeof(*z));
		if (inflateInit(z) != Z_OK)
			return gp_error_set(err, GP_ENOMEM, "zlib: inflateInit failed");
		inf->z_ready = true;
	} else if (inflateReset(z) != Z_OK) {
		return gp_error_set(err, GP_ENOMEM, "zlib: inflateReset failed");
	}
	if (!out_len)
		out = &dummy;
	do {
		size_t in_chunk = MIN(in_len - in_done, (size_t)UINT_MAX);
		size_t out_chunk = out_len ? MIN(out_len - out_done, (size_t)UINT_MAX) : 1;
		z->next_in = (unsigned char *)in + in_done;
		z->avail_in = (uInt)in_chunk;
		z->next_out = (unsigned char *)out + out_done;
		z->avail_out = (uInt)out_chunk;
		status = inflate(z, Z_FINISH);
		in_done += in_chunk - z->avail_in;
		out_done += out_chunk - z->avail_out;
		if (out_len == 0 && out_done)
			return gp_error_set(err, GP_ECORRUPT,
					    "object inflates to more than 0 bytes");
	} while (status == Z_BUF_ERROR && (in_done < in_len && out_done < out_len));

	if (status == Z_STREAM_END) {
		if (out_done != out_len)
			return gp_error_set(err, GP_ECORRUPT,
					    "inflated to %zu bytes, expected %zu",
					    out_done, out_len);
		*consumed = in_done;
		return 0;
	}
	if (status == Z_BUF_ERROR && out_done == out_len && out_len)
		return gp_error_set(err, GP_ECORRUPT,
				    "object inflates to more than %zu bytes", out_len);
	if (status == Z_BUF_ERROR || status == Z_OK)
		return gp_error_set(err, GP_ECORRUPT, "truncated zlib stream");
	return gp_error_set(err, GP_ECORRUPT, "zlib stream is corrupt (%s)",
			    z->msg ? z->msg : "bad data");
}

int inflate_exact(struct inflater *inf, const void *in, size_t in_len,
		  void *out, size_t out_len, size_t *consumed,
		  struct gp_error *err)
{
#ifdef HAVE_LIBDEFLATE
	unsigned char dummy[1];
	size_t in_used = 0, out_used = 0;
	enum libdeflate_result res;

	if (!getenv("GP_TEST_NO_LIBDEFLATE")) {
		res = libdeflate_zlib_decompress_ex(inf->d, in, in_len,
						    out_len ? out : dummy, out_len,
						    &in_used, &out_used);
		switch (res) {
		case LIBDEFLATE_SUCCESS:
			if (out_used == out_len) {
				*consumed = in_used;
				return 0;
			}
			break; /* a short result is an error: zlib words it */
		default:
			/*
			 * libdeflate stops at the first problem it meets and
			 * cannot tell a truncated stream from a corrupt one;
			 * let zlib decide and word the error, so that both
			 * builds report the same thing.
			 */
			break;
		}
	}
#endif
	return inflate_exact_zlib(inf, in, in_len, out, out_len, consumed, err);
}

int inflate_to_strbuf(const void *in, size_t in_len, struct strbuf *out,
		      size_t max_out, size_t *consumed, struct gp_error *err)
{
	z_stream z;
	int status;
	size_t in_done = 0, start = out->len;
	int ret = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return gp_error_set(err, GP_ENOMEM, "zlib: inflateInit failed");
	for (;;) {
		size_t in_chunk = MIN(in_len - in_done, (size_t)UINT_MAX);
		size_t room;
		strbuf_grow(out, 8192);
		room = out->alloc - out->len - 1;
		z.next_in = (unsigned char *)in + in_done;
		z.avail_in = (uInt)in_chunk;
		z.next_out = (unsigned char *)out->buf + out->len;
		z.avail_out = (uInt)MIN(room, (size_t)UINT_MAX);
		status = inflate(&z, Z_NO_FLUSH);
		in_done += in_chunk - z.avail_in;
		strbuf_setlen(out, out->alloc - 1 - z.avail_out -
				   (room - MIN(room, (size_t)UINT_MAX)));
		if (out->len - start > max_out) {
			ret = gp_error_set(err, GP_ECORRUPT,
					   "object inflates to more than %zu bytes", max_out);
			break;
		}
		if (status == Z_STREAM_END) {
			if (consumed)
				*consumed = in_done;
			break;
		}
		if (status == Z_OK)
			continue;
		if (status == Z_BUF_ERROR && z.avail_out == 0)
			continue;
		if (status == Z_BUF_ERROR)
			ret = gp_error_set(err, GP_ECORRUPT, "truncated zlib stream");
		else
			ret = gp_error_set(err, GP_ECORRUPT, "zlib stream is corrupt (%s)",
					   z.msg ? z.msg : "bad data");
		break;
	}
	inflateEnd(&z);
	return ret;
}

void deflate_to_strbuf(const void *in, size_t len, int level, struct strbuf *out)
{
	z_stream z;
	int status;
	memset(&z, 0, sizeof(z));
	if (deflateInit(&z, level) != Z_OK)
		BUG("deflateInit failed");
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	if ((size_t)z.avail_in != len)
		BUG("deflate_to_strbuf: object too large for one call");
	do {
		strbuf_grow(out, deflateBound(&z, (uLong)len) + 64);
		z.next_out = (unsigned char *)out->buf + out->len;
		z.avail_out = (uInt)MIN(out->alloc - out->len - 1, (size_t)UINT_MAX);
		size_t before = z.avail_out;
		status = deflate(&z, Z_FINISH);
		strbuf_setlen(out, out->len + (before - z.avail_out));
	} while (status == Z_OK || status == Z_BUF_ERROR);
	if (status != Z_STREAM_END)
		BUG("deflate failed: %d", status);
	deflateEnd(&z);
}

uint32_t gp_crc32(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_LIBDEFLATE
	return libdeflate_crc32(crc, data, len);
#else
	const unsigned char *p = data;
	while (len) {
		uInt chunk = (uInt)MIN(len, (size_t)UINT_MAX);
		crc = (uint32_t)crc32(crc, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return crc;
#endif
}

int inflate_prefix(const void *in, size_t in_len, void *out, size_t out_len,
		   size_t *produced, struct gp_error *err)
{
	z_stream z;
	int status, ret = 0;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return gp_error_set(err, GP_ENOMEM, "zlib: inflateInit failed");
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)MIN(in_len, (size_t)UINT_MAX);
	z.next_out = out;
	z.avail_out = (uInt)out_len;
	do {
		status = inflate(&z, Z_SYNC_FLUSH);
	} while (status == Z_OK && z.avail_out && z.avail_in);
	if (status != Z_OK && status != Z_STREAM_END &&
	    !(status == Z_BUF_ERROR && !z.avail_out))
		ret = gp_error_set(err, GP_ECORRUPT, "zlib stream is corrupt (%s)",
				   z.msg ? z.msg : "truncated");
	*produced = out_len - z.avail_out;
	inflateEnd(&z);
	return ret;
}

struct inflate_skip {
	z_stream z;
	bool ready;
	uint64_t expected, produced;
	unsigned char sink[16384];
};

struct inflate_skip *inflate_skip_new(void)
{
	return xcalloc(1, sizeof(struct inflate_skip));
}

void inflate_skip_free(struct inflate_skip *s)
{
	if (!s)
		return;
	if (s->ready)
		inflateEnd(&s->z);
	free(s);
}

int inflate_skip_reset(struct inflate_skip *s, uint64_t expected_size, struct gp_error *err)
{
	if (!s->ready) {
		memset(&s->z, 0, sizeof(s->z));
		if (inflateInit(&s->z) != Z_OK)
			return gp_error_set(err, GP_ENOMEM, "zlib: inflateInit failed");
		s->ready = true;
	} else if (inflateReset(&s->z) != Z_OK) {
		return gp_error_set(err, GP_ENOMEM, "zlib: inflateReset failed");
	}
	s->expected = expected_size;
	s->produced = 0;
	return 0;
}

int inflate_skip_feed(struct inflate_skip *s, const void *in, size_t len,
		      size_t *used, struct gp_error *err)
{
	z_stream *z = &s->z;
	size_t in_done = 0;
	int status = Z_OK;

	for (;;) {
		size_t in_chunk = MIN(len - in_done, (size_t)UINT_MAX);
		size_t out_chunk;
		z->next_in = (unsigned char *)in + in_done;
		z->avail_in = (uInt)in_chunk;
		z->next_out = s->sink;
		z->avail_out = sizeof(s->sink);
		status = inflate(z, Z_NO_FLUSH);
		in_done += in_chunk - z->avail_in;
		out_chunk = sizeof(s->sink) - z->avail_out;
		s->produced += out_chunk;
		if (s->produced > s->expected) {
			*used = in_done;
			return gp_error_set(err, GP_ECORRUPT, "object inflates to more than %" PRIu64
					    " bytes", s->expected);
		}
		if (status == Z_STREAM_END)
			break;
		if (status != Z_OK && status != Z_BUF_ERROR) {
			*used = in_done;
			return gp_error_set(err, GP_ECORRUPT, "zlib stream is corrupt (%s)",
					    z->msg ? z->msg : "bad data");
		}
		/* Out of input with the output buffer not full: wait for more. */
		if (in_done == len && z->avail_out)
			break;
		if (status == Z_BUF_ERROR && !out_chunk && in_done == len)
			break;
	}
	*used = in_done;
	if (status != Z_STREAM_END)
		return 0;
	if (s->produced != s->expected)
		return gp_error_set(err, GP_ECORRUPT, "inflated to %" PRIu64 " bytes, expected %" PRIu64,
				    s->produced, s->expected);
	return 1;
}

/* git's words for a zlib status. */
static const char *zlib_status_text(int status)
{
	switch (status) {
	case Z_MEM_ERROR:
		return "out of memory";
	case Z_BUF_ERROR:
		return "needs more space in the output buffer";
	case Z_NEED_DICT:
		return "needs dictionary";
	case Z_DATA_ERROR:
		return "data stream error";
	case Z_STREAM_ERROR:
		return "stream consistency error";
	default:
		return "unknown error";
	}
}

int inflate_prefix_git(const void *in, size_t in_len, void *out, size_t out_len,
		       size_t *produced, struct gp_error *err)
{
	z_stream z;
	int status, ret = 0;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return gp_error_set(err, GP_ENOMEM, "zlib: inflateInit failed");
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)MIN(in_len, (size_t)UINT_MAX);
	z.next_out = out;
	z.avail_out = (uInt)out_len;
	do {
		status = inflate(&z, Z_SYNC_FLUSH);
	} while (status == Z_OK && z.avail_out && z.avail_in);
	/* out of input before the header was whole: what zlib says is a buffer error */
	if (status == Z_OK && z.avail_out && !z.avail_in)
		status = Z_BUF_ERROR;
	if (status != Z_OK && status != Z_STREAM_END &&
	    !(status == Z_BUF_ERROR && !z.avail_out))
		ret = gp_error_set(err, GP_ECORRUPT, "inflate: %s (%s)", zlib_status_text(status),
				   z.msg ? z.msg : "no message");
	*produced = out_len - z.avail_out;
	inflateEnd(&z);
	return ret;
}
