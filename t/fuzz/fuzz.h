/*
 * fuzz.h: helpers shared by the libFuzzer targets t/fuzz/fuzz-*.c.
 *
 * Every target is one LLVMFuzzerTestOneInput() that must return 0 on
 * any input without crashing, leaking or tripping a sanitizer. The
 * same file is linked two ways: by "make fuzz" with clang's libFuzzer,
 * and by t/t0090-fuzz-corpus.sh with t/fuzz/replay.c (plain cc, no
 * libFuzzer) to replay the seed corpus and the crash regressions.
 *
 * A target that finds the library breaking its own contract (a wrong
 * error code, a lookup that misses an entry that parsed) calls
 * fuzz_fail(), which aborts so that both drivers report the input.
 */
#ifndef GP_FUZZ_H
#define GP_FUZZ_H

#include "error.h"
#include "hash.h"
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_fail(...) fuzz_fail_at(__FILE__, __LINE__, __VA_ARGS__)

GP_PRINTF(3, 4) static inline void fuzz_fail_at(const char *file, int line,
						  const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: fuzz invariant failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/*
 * A failed call must return a negative code, record the same code in
 * err, and have a message. want is the only code the contract allows
 * (0: any negative code). Clears err for the next call.
 */
static inline void fuzz_check_error(int ret, struct gp_error *err, int want,
				    const char *what)
{
	if (ret >= 0 || err->code != ret || !err->msg || !*err->msg ||
	    (want && ret != want))
		fuzz_fail("%s returned %d, err has code %d and message '%s'",
			  what, ret, err->code, err->msg ? err->msg : "(null)");
	gp_error_clear(err);
}

/*
 * Whether to recompute the trailing checksum of a hashed file image
 * ("an option to append a valid trailing hash, so fuzzing gets past the
 * checksum"). Always when built with -DGP_FUZZ_FIX_TRAILER; otherwise
 * when bit 0 of the input's last byte is set. The last byte belongs to
 * that very checksum, which the fix overwrites, so the flag costs the
 * fuzzer no format bits (the first byte would: it is a signature or a
 * fanout count).
 */
static inline bool fuzz_want_fixed_trailer(const uint8_t *data, size_t size)
{
#ifdef GP_FUZZ_FIX_TRAILER
	(void)data;
	return size > 0;
#else
	return size && (data[size - 1] & 1);
#endif
}

/*
 * A malloc'd copy of data whose last rawsz bytes are the hash of the
 * bytes before them, or NULL when the image is too short to hold one.
 */
static inline unsigned char *fuzz_fix_trailer(const uint8_t *data, size_t size,
					      int algo)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	unsigned char *copy;
	if (size < rawsz)
		return NULL;
	copy = xmalloc(size);
	memcpy(copy, data, size);
	hash_buf_checksum(algo, copy, size - rawsz, copy + size - rawsz);
	return copy;
}

#endif
