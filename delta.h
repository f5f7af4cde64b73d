/*
 * delta.h: Git's delta format (gitformat-pack, "Deltified
 * representation"): two size varints (base size, result size) followed
 * by copy instructions (bit 7 set: offset and size bytes selected by the
 * low bits) and insert instructions (1..127 literal bytes).
 *
 * Everything here treats the delta as untrusted input.
 */
#ifndef GP_DELTA_H
#define GP_DELTA_H

#include "util.h"

struct gp_error;

/*
 * Read the two leading size varints. Returns 0, or GP_ECORRUPT when the
 * delta is shorter than its header or a varint overflows 64 bits.
 */
int delta_sizes(const unsigned char *delta, size_t delta_len,
		uint64_t *base_size, uint64_t *result_size, size_t *hdr_len,
		struct gp_error *err);

/*
 * Apply delta to base into out, which must hold result_size bytes as
 * delta_sizes() reported. Errors (GP_ECORRUPT): base size mismatch,
 * a copy outside the base, an instruction overrunning the delta or the
 * result, the reserved opcode 0, a result shorter than declared.
 */
int delta_apply(const unsigned char *base, size_t base_len,
		const unsigned char *delta, size_t delta_len,
		unsigned char *out, size_t result_size, struct gp_error *err);

#endif
