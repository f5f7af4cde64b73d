/*
 * error.h: how the library reports failure.
 *
 * Library functions return 0 (or a non-negative count) on success and a
 * negative GP_E* code on failure, and write a human-readable message into
 * a caller-supplied struct gp_error where the problem is found. Callers
 * add context on the way up with gp_error_prefix() ("pack-1a2b.idx: ").
 * Only builtin/ and gitpack.c turn an error into output and an exit.
 *
 * err may be NULL when the caller does not want the message.
 */
#ifndef GP_ERROR_H
#define GP_ERROR_H

#include "util.h"

enum gp_errcode {
	GP_OK = 0,
	GP_ENOTFOUND = -1, /* object, file or entry does not exist */
	GP_ECORRUPT = -2,  /* bytes on disk violate the format */
	GP_EIO = -3,       /* the operating system failed a read or write */
	GP_ENOMEM = -4,    /* an input-derived size could not be allocated */
	GP_EPROTO = -5,    /* a peer broke the protocol */
	GP_EINVAL = -6,    /* the caller asked for something impossible */
	GP_EBUSY = -7,     /* a limit says "not now": try again later */
};

struct gp_error {
	int code;
	char *msg;    /* owned; NULL when nothing was recorded */
	const char *src_file; /* where CORRUPT() fired, debug builds only */
	int src_line;
};

#define GP_ERROR_INIT { .code = 0 }

/* Record code and message (replacing any earlier one); returns code. */
GP_PRINTF(3, 4) int gp_error_set(struct gp_error *err, int code, const char *fmt, ...);
/* Like gp_error_set with ": strerror(errno)" appended; returns GP_EIO. */
GP_PRINTF(2, 3) int gp_error_errno(struct gp_error *err, const char *fmt, ...);
/* Prepend context to the recorded message: "ctx: old". Returns code. */
GP_PRINTF(2, 3) int gp_error_prefix(struct gp_error *err, const char *fmt, ...);
/* The message, or a generic text for the code when none was recorded. */
const char *gp_error_msg(const struct gp_error *err);
void gp_error_clear(struct gp_error *err);
/* Hand src's message to dst (which may be NULL), leaving src cleared. */
void gp_error_move(struct gp_error *dst, struct gp_error *src);
const char *gp_strerror(int code);

/*
 * CORRUPT(err, fmt, ...): record a GP_ECORRUPT message and evaluate to
 * GP_ECORRUPT. Debug builds also record the source line so a fuzz crash
 * points at the exact check.
 */
#ifdef GP_DEBUG
#define CORRUPT(err, ...) \
	gp_error_corrupt_at((err), __FILE__, __LINE__, __VA_ARGS__)
#else
#define CORRUPT(err, ...) gp_error_set((err), GP_ECORRUPT, __VA_ARGS__)
#endif
GP_PRINTF(4, 5) int gp_error_corrupt_at(struct gp_error *err, const char *file,
					 int line, const char *fmt, ...);

#endif
