/* error.c: the gp_error message carrier (see error.h). */
#include "error.h"
#include "strbuf.h"

static int set_v(struct gp_error *err, int code, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	if (!err)
		return code;
	strbuf_vaddf(&sb, fmt, ap);
	free(err->msg);
	err->msg = strbuf_detach(&sb, NULL);
	err->code = code;
	return code;
}

int gp_error_set(struct gp_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int gp_error_corrupt_at(struct gp_error *err, const char *file, int line,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(err, GP_ECORRUPT, fmt, ap);
	va_end(ap);
	if (err) {
		err->src_file = file;
		err->src_line = line;
	}
	return GP_ECORRUPT;
}

int gp_error_errno(struct gp_error *err, const char *fmt, ...)
{
	int saved = errno;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	if (!err)
		return GP_EIO;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addf(&sb, ": %s", strerror(saved));
	free(err->msg);
	err->msg = strbuf_detach(&sb, NULL);
	err->code = GP_EIO;
	errno = saved;
	return GP_EIO;
}

int gp_error_prefix(struct gp_error *err, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	if (!err)
		return GP_EINVAL;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addstr(&sb, ": ");
	strbuf_addstr(&sb, err->msg ? err->msg : gp_strerror(err->code));
	free(err->msg);
	err->msg = strbuf_detach(&sb, NULL);
	return err->code;
}

const char *gp_strerror(int code)
{
	switch (code) {
	case GP_OK: return "success";
	case GP_ENOTFOUND: return "not found";
	case GP_ECORRUPT: return "corrupt data";
	case GP_EIO: return "input/output error";
	case GP_ENOMEM: return "out of memory";
	case GP_EPROTO: return "protocol error";
	case GP_EINVAL: return "invalid argument";
	case GP_EBUSY: return "busy, try again later";
	}
	return "unknown error";
}

const char *gp_error_msg(const struct gp_error *err)
{
	if (!err)
		return "unknown error";
	return err->msg ? err->msg : gp_strerror(err->code);
}

void gp_error_move(struct gp_error *dst, struct gp_error *src)
{
	if (dst) {
		gp_error_clear(dst);
		*dst = *src;
		memset(src, 0, sizeof(*src));
	} else {
		gp_error_clear(src);
	}
}

void gp_error_clear(struct gp_error *err)
{
	if (!err)
		return;
	FREE_AND_NULL(err->msg);
	err->code = 0;
	err->src_file = NULL;
	err->src_line = 0;
}
