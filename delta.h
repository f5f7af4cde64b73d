/*
 * delta.h: Git's delta format (gitformat-pack, "Deltified
 * representation"): two size varints (base size, result size) followed
 * by copy instructions (bit 7 set: offset and size bytes selected by the
 * low bits) and insert instructions (1..127 literal bytes).
 *
 * Applying treats the delta as untrusted input. Creating (for the delta
 * search of pack-objects) indexes a base once with delta_index_create()
 * and encodes any number of targets against it with delta_create().
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

/*
 * An index of one base buffer for delta_create(): where each of its
 * 16-byte blocks (DELTA_BLOCK_SIZE) lies, by a hash of the block's bytes.
 * Read-only once built, so any number of threads may call
 * delta_create() on the same index at once.
 *
 * What it finds: a common run is found when it covers at least one
 * whole base block (one starting at a multiple of 16 in the base), so
 * runs of 31 bytes or more are found (unless their blocks fell to the
 * cap below) and, in general, runs of fewer than 16 are not; the exception is a run that resumes the last
 * copy's alignment shortly after it stopped (bytes replaced by as many
 * others), which is found whatever its length. Where a block's bytes
 * occur at more than DELTA_BUCKET_LIMIT places of the base, only that
 * many places, spread evenly from the start, are remembered; a run of
 * identical consecutive blocks (zeros, padding) is remembered by its
 * first block.
 *
 * Copy instructions hold 32-bit offsets, so only the first
 * DELTA_MAX_SOURCE bytes of a base (4 GiB - 1) are indexed and copied
 * from; a delta against a larger base stays correct, and stores what
 * lies beyond that literally.
 */
struct delta_index;

#define DELTA_BLOCK_SIZE 16
#define DELTA_BUCKET_LIMIT 64
#define DELTA_MAX_SOURCE ((size_t)UINT32_MAX)

/*
 * Index base[0..base_len). base is borrowed: it must stay mapped and
 * unchanged until delta_index_free(). Any length is accepted, including
 * 0 (every delta against an empty base is all inserts). The index holds
 * at most about base_len * 3 / 4 bytes (less for repetitive bases);
 * building it takes O(base_len) time and, while it runs, up to
 * base_len / 4 more.
 * Errors: GP_ENOMEM (the input-derived allocation failed; nothing is
 * aborted whatever the size).
 */
int delta_index_create(struct delta_index **out, const unsigned char *base,
		       size_t base_len);

/* Release the index (the base stays the caller's). Accepts NULL. */
void delta_index_free(struct delta_index *idx);

/* The bytes the index holds on the heap, for memory accounting. */
size_t delta_index_memory(const struct delta_index *idx);

/*
 * Encode target[0..target_len) as a delta against the indexed base. On
 * success returns 0, *out is the delta (malloc'd; caller frees) and
 * *out_len its length. The delta applies with delta_apply() and with
 * stock git, and is never longer than the header plus target_len plus
 * one insert opcode per 127 bytes (what storing everything literally
 * costs). The output depends only on the base and the target: the same
 * bytes on every run, in every thread, whatever max_delta_len.
 *
 * target_len may be 0, but stock git cannot read a delta whose result
 * is empty (it takes the size 0 for an error): pack writers store empty
 * objects whole.
 *
 * max_delta_len, when non-zero, is the longest delta the caller wants:
 * as soon as the delta being written grows past it, encoding stops and
 * GP_ENOTFOUND is returned (the caller then stores the object whole).
 * Before encoding, a sample of the target (a few stretches spread over
 * it) is looked up in the index; when too few of them are found for a
 * delta that short, which needs most of the target copied,
 * GP_ENOTFOUND comes at once. So a delta that would just have fit is
 * sometimes refused (one that copies little of the target); a limit of
 * target_len or more refuses only the deltas longer than it. A delta returned under a limit
 * is the one made without it. Errors callers may branch on:
 * GP_ENOTFOUND, GP_ENOMEM (*out is NULL after either).
 * O(target_len) time, with a constant bounded by DELTA_BUCKET_LIMIT
 * for the most repetitive inputs.
 */
int delta_create(const struct delta_index *idx,
		 const unsigned char *target, size_t target_len,
		 size_t max_delta_len, unsigned char **out, size_t *out_len);

#endif
