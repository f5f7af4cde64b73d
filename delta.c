/*
 * delta.c: applying and creating Git deltas (gitformat-pack,
 * "Deltified representation").
 *
 * Applying: the instruction stream comes straight from a pack, so every
 * copy is checked against the base and every write against the declared
 * result size before it happens.
 *
 * Creating: the base is cut into DELTA_BLOCK_SIZE-byte blocks at offsets
 * 0, 16, 32, ... and each block is filed in a hash table under a hash of
 * its bytes, with a bit set in a small filter. The encoder slides a
 * window of the same size over the target one byte at a time, hashes it
 * (one multiply) and looks it up: the filter turns most windows away
 * with one bit test. Every base block filed under that hash is a
 * candidate: its run is extended forward as far as base and target
 * agree, and backward into the literal bytes not yet written. The
 * candidate that saves the most (run length less the size of its copy
 * instructions) wins.
 *
 * A win is not written at once when it is short (under LAZY_MATCH_LEN
 * bytes): the windows that start inside it are looked up too, because
 * a common line often matches first somewhere unrelated and only a few
 * bytes later in the place the target was edited from. A run found
 * there that goes further either replaces the first (the bytes between
 * their starts become literal), or follows it (the first is written and
 * the second goes on from where it stops), whichever copy_cost() and
 * literal_cost() say is shorter. Long wins are written at once (copy
 * instructions of at most 0x10000 bytes each) and the window jumps past
 * them. A byte no run covers goes into an insert instruction.
 *
 * Linear time and bounded memory, whatever the input:
 *  - buckets hold at most DELTA_BUCKET_LIMIT blocks (evenly spread over
 *    the base when more share a hash), and consecutive identical blocks
 *    are filed once, so an all-zero base costs one slot;
 *  - a lookup first checks the byte where its run would have to reach
 *    to win, so a candidate costs a full extension only when it can
 *    win; the extension work of a lookup is at most DELTA_BUCKET_LIMIT
 *    times the length of the run it produces;
 *  - the look-ahead inside a short win tries LAZY_CANDIDATES candidates
 *    a window, and only those that go past the win's end;
 *  - literal bytes wait for backward extension only while fewer than
 *    PENDING_KEEP of them are pending; older ones are written out in
 *    full 127-byte inserts (which cost what they would have cost later),
 *    so that the size limit of delta_create() is noticed early on
 *    targets that do not resemble the base;
 *  - with a size limit, a sample of the target is looked up first
 *    (looks_unlike()), and a target too little of which is found in
 *    the base for a delta that short is refused after at most
 *    PROBE_POINTS_MAX * DELTA_BLOCK_SIZE lookups. Nothing else depends
 *    on the limit: a delta returned under a limit is the delta made
 *    without one.
 */
#include "delta.h"
#include "error.h"

/* An insert instruction carries 1..127 literal bytes (its opcode). */
#define DELTA_MAX_INSERT 127
/* A copy instruction copies at most 0x10000 bytes (size bytes of 0). */
#define DELTA_MAX_COPY 0x10000
/* Literal bytes held back for backward extension of later matches. */
#define PENDING_KEEP (8 * DELTA_MAX_INSERT)
/*
 * Matches shorter than this are compared with those found inside them.
 * Each position inside costs a lookup whose window the base holds, so
 * this bounds most of delta_create's time: on git.git's history, 64
 * against 256 took 15% less CPU for a pack 0.02% smaller; 32 cost 0.7%
 * in size.
 */
#define LAZY_MATCH_LEN 64
/* How far past the last copy its alignment is tried again. */
#define RESUME_REACH 64
/* Candidates a look-ahead lookup tries (the rest are passed over). */
#define LAZY_CANDIDATES 8
/* The hash table's load: base blocks per bucket, before any cap. */
#define BLOCKS_PER_BUCKET 4
/* Filter bits a bucket (a power of two, 64 or fewer). */
#define FILTER_BITS 32

static int read_varint(const unsigned char *p, size_t len, size_t *pos,
		       uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		unsigned char c;
		if (*pos >= len)
			return -1;
		c = p[(*pos)++];
		if (shift > 63 || (shift && (uint64_t)(c & 0x7f) >> (64 - shift)))
			return -1;
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			break;
	}
	*out = v;
	return 0;
}

int delta_sizes(const unsigned char *delta, size_t delta_len,
		uint64_t *base_size, uint64_t *result_size, size_t *hdr_len,
		struct gp_error *err)
{
	size_t pos = 0;
	if (read_varint(delta, delta_len, &pos, base_size) ||
	    read_varint(delta, delta_len, &pos, result_size))
		return CORRUPT(err, "delta header is truncated or overflows");
	*hdr_len = pos;
	return 0;
}

int delta_apply(const unsigned char *base, size_t base_len,
		const unsigned char *delta, size_t delta_len,
		unsigned char *out, size_t result_size, struct gp_error *err)
{
	uint64_t want_base, want_result;
	size_t pos, out_pos = 0;
	int ret = delta_sizes(delta, delta_len, &want_base, &want_result, &pos, err);
	if (ret)
		return ret;
	if (want_base != base_len)
		return CORRUPT(err, "delta expects a base of %" PRIu64 " bytes, base has %zu",
			       want_base, base_len);
	if (want_result != result_size)
		return CORRUPT(err, "delta result size %" PRIu64 " does not match %zu",
			       want_result, result_size);

	while (pos < delta_len) {
		unsigned char op = delta[pos++];
		if (op & 0x80) {
			size_t copy_ofs = 0, copy_len = 0;
			for (unsigned bit = 0; bit < 4; bit++) {
				if (!(op & (1u << bit)))
					continue;
				if (pos >= delta_len)
					return CORRUPT(err, "delta copy instruction truncated at byte %zu", pos);
				copy_ofs |= (size_t)delta[pos++] << (8 * bit);
			}
			for (unsigned bit = 0; bit < 3; bit++) {
				if (!(op & (0x10u << bit)))
					continue;
				if (pos >= delta_len)
					return CORRUPT(err, "delta copy instruction truncated at byte %zu", pos);
				copy_len |= (size_t)delta[pos++] << (8 * bit);
			}
			if (!copy_len)
				copy_len = 0x10000;
			if (copy_ofs > base_len || copy_len > base_len - copy_ofs)
				return CORRUPT(err, "delta copies %zu bytes at %zu, outside its base of %zu bytes",
					       copy_len, copy_ofs, base_len);
			if (copy_len > result_size - out_pos)
				return CORRUPT(err, "delta copy overruns the result (%zu bytes)", result_size);
			memcpy(out + out_pos, base + copy_ofs, copy_len);
			out_pos += copy_len;
		} else if (op) {
			if (op > delta_len - pos)
				return CORRUPT(err, "delta insert of %u bytes overruns the delta at byte %zu",
					       op, pos);
			if (op > result_size - out_pos)
				return CORRUPT(err, "delta insert overruns the result (%zu bytes)", result_size);
			memcpy(out + out_pos, delta + pos, op);
			out_pos += op;
			pos += op;
		} else {
			return CORRUPT(err, "delta uses reserved opcode 0 at byte %zu", pos - 1);
		}
	}
	if (out_pos != result_size)
		return CORRUPT(err, "delta produced %zu bytes, expected %zu", out_pos, result_size);
	return 0;
}

/*
 * Creating deltas.
 *
 * The hash of a window p[0..16) is computed from scratch at every
 * position, not rolled: its two halves, read as little-endian words
 * (so every platform files the same blocks) and offset by constants,
 * are multiplied into 128 bits, and the halves of the product are
 * folded by xor. One multiply a window, and no chain from one window to
 * the next, so consecutive windows overlap in the CPU. Its top bits pick
 * a filter bit and a bucket, its low 32 bits are the check value kept in
 * the slot, so that most non-matching candidates cost no access to the
 * base.
 */
#define HASH_K0 0x9e3779b97f4a7c15ull
#define HASH_K1 0xbf58476d1ce4e5b9ull

static inline uint64_t get_le64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint64_t window_hash(const unsigned char *p)
{
	unsigned __int128 m = (unsigned __int128)(get_le64(p) ^ HASH_K0) *
			      (get_le64(p + 8) ^ HASH_K1);
	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

struct delta_slot {
	uint32_t base_ofs; /* where the block starts in the base */
	uint32_t check;    /* low 32 bits of the block's hash */
};

struct delta_index {
	const unsigned char *base; /* borrowed */
	size_t base_len;           /* the whole base, for the header */
	size_t src_len;            /* copies come from base[0..src_len) */
	unsigned bucket_shift;     /* bucket = hash >> bucket_shift */
	size_t nr_buckets;
	/*
	 * Bit (hash >> filter_shift) is set when some filed block has
	 * that hash prefix: FILTER_BITS bits a bucket, so that most windows
	 * found in no bucket cost one bit test in a small array.
	 */
	unsigned filter_shift;
	uint64_t *filter;
	/* bucket b's slots are slots[bucket_start[b] .. bucket_start[b + 1]) */
	uint32_t *bucket_start;
	struct delta_slot *slots;
	size_t nr_slots;
};

/* A block like the one before it is filed as their run's first block. */
static inline bool repeats_previous(const unsigned char *p, size_t block_nr,
				    uint64_t hash, uint64_t prev_hash)
{
	return block_nr && hash == prev_hash &&
	       !memcmp(p - DELTA_BLOCK_SIZE, p, DELTA_BLOCK_SIZE);
}

int delta_index_create(struct delta_index **out, const unsigned char *base,
		       size_t base_len)
{
	struct delta_index *idx;
	struct bucket_tally {
		uint32_t total; /* blocks filed under the bucket's hashes */
		uint32_t seen;  /* of which the third pass has met so far */
	} *tally = NULL;
	size_t nr_blocks, nr_filed = 0, block_nr, bucket_bytes, slot_bytes, nr_slots = 0;
	uint64_t hash, prev = 0;
	unsigned bits = 4;
	int ret = GP_ENOMEM;

	*out = NULL;
	idx = calloc(1, sizeof(*idx));
	if (!idx)
		goto out;
	idx->base = base;
	idx->base_len = base_len;
	idx->src_len = MIN(base_len, DELTA_MAX_SOURCE);
	nr_blocks = idx->src_len / DELTA_BLOCK_SIZE;
	/*
	 * Hashing is cheap (a multiply a block): each pass hashes again
	 * rather than keep the hashes. The first counts the blocks to file.
	 */
	for (block_nr = 0; block_nr < nr_blocks; block_nr++, prev = hash) {
		const unsigned char *p = base + block_nr * DELTA_BLOCK_SIZE;
		hash = window_hash(p);
		if (!repeats_previous(p, block_nr, hash, prev))
			nr_filed++;
	}
	/* About four blocks a bucket; nr_filed < 2^28, so bits < 27. */
	while (((size_t)1 << bits) < nr_filed / BLOCKS_PER_BUCKET)
		bits++;
	idx->nr_buckets = (size_t)1 << bits;
	idx->bucket_shift = 64 - bits;
	idx->filter_shift = 64 - bits - __builtin_ctz(FILTER_BITS);
	idx->filter = calloc((idx->nr_buckets * FILTER_BITS + 63) / 64, sizeof(*idx->filter));
	if (!idx->filter)
		goto out;
	if (!st_add(idx->nr_buckets, 1, &bucket_bytes) ||
	    !st_mult(bucket_bytes, sizeof(*idx->bucket_start), &bucket_bytes))
		goto out;
	idx->bucket_start = malloc(bucket_bytes);
	tally = calloc(idx->nr_buckets, sizeof(*tally));
	if (!idx->bucket_start || !tally)
		goto out;

	/* Second pass: how many blocks each bucket is offered. */
	for (block_nr = 0; block_nr < nr_blocks; block_nr++, prev = hash) {
		const unsigned char *p = base + block_nr * DELTA_BLOCK_SIZE;
		hash = window_hash(p);
		if (!repeats_previous(p, block_nr, hash, prev))
			tally[hash >> idx->bucket_shift].total++;
	}
	for (size_t bucket = 0; bucket < idx->nr_buckets; bucket++) {
		idx->bucket_start[bucket] = (uint32_t)nr_slots;
		nr_slots += MIN(tally[bucket].total, DELTA_BUCKET_LIMIT);
	}
	idx->bucket_start[idx->nr_buckets] = (uint32_t)nr_slots;
	idx->nr_slots = nr_slots;
	if (!st_mult(nr_slots ? nr_slots : 1, sizeof(*idx->slots), &slot_bytes))
		goto out;
	idx->slots = malloc(slot_bytes);
	if (!idx->slots)
		goto out;

	/*
	 * Third pass: file the blocks, in base order. A bucket offered
	 * total > DELTA_BUCKET_LIMIT blocks keeps the r-th (from 0) when
	 * floor(r * LIMIT / total) steps past floor((r - 1) * LIMIT / total),
	 * and the first: exactly LIMIT of them, evenly spread over the base
	 * from its start (low offsets make short copy instructions).
	 */
	for (block_nr = 0; block_nr < nr_blocks; block_nr++, prev = hash) {
		const unsigned char *p = base + block_nr * DELTA_BLOCK_SIZE;
		struct bucket_tally *t;
		size_t bucket, slot;
		uint32_t rank;

		hash = window_hash(p);
		if (repeats_previous(p, block_nr, hash, prev))
			continue;
		bucket = hash >> idx->bucket_shift;
		t = &tally[bucket];
		rank = t->seen++;
		if (t->total > DELTA_BUCKET_LIMIT) {
			uint64_t kept = (uint64_t)rank * DELTA_BUCKET_LIMIT / t->total;
			if (rank && kept == ((uint64_t)rank - 1) * DELTA_BUCKET_LIMIT / t->total)
				continue;
			slot = idx->bucket_start[bucket] + (size_t)kept;
		} else {
			slot = idx->bucket_start[bucket] + rank;
		}
		idx->slots[slot].base_ofs = (uint32_t)(block_nr * DELTA_BLOCK_SIZE);
		idx->slots[slot].check = (uint32_t)hash;
		idx->filter[(hash >> idx->filter_shift) / 64] |=
			(uint64_t)1 << (hash >> idx->filter_shift) % 64;
	}
	*out = idx;
	idx = NULL;
	ret = 0;
out:
	free(tally);
	delta_index_free(idx);
	return ret;
}

void delta_index_free(struct delta_index *idx)
{
	if (!idx)
		return;
	free(idx->bucket_start);
	free(idx->slots);
	free(idx->filter);
	free(idx);
}

size_t delta_index_memory(const struct delta_index *idx)
{
	if (!idx)
		return 0;
	return sizeof(*idx) + (idx->nr_buckets + 1) * sizeof(*idx->bucket_start) +
	       (idx->nr_buckets * FILTER_BITS + 63) / 64 * sizeof(*idx->filter) +
	       idx->nr_slots * sizeof(*idx->slots);
}

/* False when no filed block has the hash (true may be wrong). */
static inline bool filter_has(const struct delta_index *idx, uint64_t hash)
{
	uint64_t bit = hash >> idx->filter_shift;
	return idx->filter[bit / 64] >> (bit % 64) & 1;
}

/*
 * Both directions compare eight bytes at a time where the byte order
 * tells which end of a differing word comes first in memory.
 */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
	(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#define DELTA_WORDWISE 1
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FIRST_DIFF_BYTE(x) ((unsigned)__builtin_ctzll(x) >> 3)
#define LAST_DIFF_BYTE(x) ((unsigned)__builtin_clzll(x) >> 3)
#else
#define FIRST_DIFF_BYTE(x) ((unsigned)__builtin_clzll(x) >> 3)
#define LAST_DIFF_BYTE(x) ((unsigned)__builtin_ctzll(x) >> 3)
#endif
#endif

/* How many leading bytes a[0..max) and b[0..max) have in common. */
static inline size_t common_prefix(const unsigned char *a, const unsigned char *b,
				   size_t max)
{
	size_t n = 0;
#ifdef DELTA_WORDWISE
	while (max - n >= 8) {
		uint64_t wa, wb;
		memcpy(&wa, a + n, 8);
		memcpy(&wb, b + n, 8);
		if (wa != wb)
			return n + FIRST_DIFF_BYTE(wa ^ wb);
		n += 8;
	}
#endif
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

/* How many bytes just before a_end and b_end agree, at most max. */
static inline size_t common_suffix(const unsigned char *a_end,
				   const unsigned char *b_end, size_t max)
{
	size_t n = 0;
#ifdef DELTA_WORDWISE
	while (max - n >= 8) {
		uint64_t wa, wb;
		memcpy(&wa, a_end - n - 8, 8);
		memcpy(&wb, b_end - n - 8, 8);
		if (wa != wb)
			return n + LAST_DIFF_BYTE(wa ^ wb);
		n += 8;
	}
#endif
	while (n < max && a_end[-1 - (ptrdiff_t)n] == b_end[-1 - (ptrdiff_t)n])
		n++;
	return n;
}

/* The delta being written, and the length past which to give up. */
struct delta_writer {
	unsigned char *buf;
	size_t len, alloc;
	size_t limit; /* 0: none */
};

static int writer_reserve(struct delta_writer *w, size_t extra)
{
	size_t need, alloc, cap;
	unsigned char *grown;

	if (!st_add(w->len, extra, &need))
		return GP_ENOMEM;
	if (need <= w->alloc)
		return 0;
	if (!st_mult(w->alloc, 2, &alloc) || alloc < need)
		alloc = need;
	/* Past the limit by one instruction at most before giving up. */
	if (w->limit && st_add(w->limit, 2 * DELTA_MAX_INSERT, &cap) && alloc > cap)
		alloc = MAX(need, cap);
	grown = realloc(w->buf, alloc);
	if (!grown)
		return GP_ENOMEM;
	w->buf = grown;
	w->alloc = alloc;
	return 0;
}

/* After each instruction: GP_ENOTFOUND once the delta is too long. */
static inline int writer_check(const struct delta_writer *w)
{
	return w->limit && w->len > w->limit ? GP_ENOTFOUND : 0;
}

static int put_varint(struct delta_writer *w, uint64_t v)
{
	int ret = writer_reserve(w, 10);
	if (ret)
		return ret;
	while (v >= 0x80) {
		w->buf[w->len++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	w->buf[w->len++] = (unsigned char)v;
	return writer_check(w);
}

/* Insert instructions for lit[0..n), 127 bytes at most each. */
static int put_literals(struct delta_writer *w, const unsigned char *lit, size_t n)
{
	while (n) {
		size_t chunk = MIN(n, DELTA_MAX_INSERT);
		int ret = writer_reserve(w, chunk + 1);
		if (ret)
			return ret;
		w->buf[w->len++] = (unsigned char)chunk;
		memcpy(w->buf + w->len, lit, chunk);
		w->len += chunk;
		lit += chunk;
		n -= chunk;
		ret = writer_check(w);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Copy instructions for base[base_ofs .. base_ofs + n), which lies below
 * DELTA_MAX_SOURCE, so every offset fits the four offset bytes. Only
 * the non-zero bytes of offset and size are written; a size of exactly
 * 0x10000 is written as no size bytes at all.
 */
static int put_copy(struct delta_writer *w, size_t base_ofs, size_t n)
{
	while (n) {
		size_t chunk = MIN(n, DELTA_MAX_COPY);
		uint32_t ofs = (uint32_t)base_ofs;
		uint32_t size = chunk == DELTA_MAX_COPY ? 0 : (uint32_t)chunk;
		unsigned char *op;
		int ret = writer_reserve(w, 8);
		if (ret)
			return ret;
		op = &w->buf[w->len++];
		*op = 0x80;
		for (unsigned byte = 0; byte < 4; byte++) {
			if (!(ofs >> (8 * byte) & 0xff))
				continue;
			*op |= 1u << byte;
			w->buf[w->len++] = (unsigned char)(ofs >> (8 * byte));
		}
		for (unsigned byte = 0; byte < 2; byte++) {
			if (!(size >> (8 * byte) & 0xff))
				continue;
			*op |= 0x10u << byte;
			w->buf[w->len++] = (unsigned char)(size >> (8 * byte));
		}
		base_ofs += chunk;
		n -= chunk;
		ret = writer_check(w);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A run of target[start..end) equal to the base from base_ofs: a copy
 * not yet written, or a candidate for one.
 */
struct match {
	size_t start, end; /* in the target */
	size_t base_ofs;   /* where start lies in the base */
};

/* Bytes of the copy instructions for n bytes from base_ofs. */
static size_t copy_cost(size_t base_ofs, size_t n)
{
	size_t cost = 0;
	while (n) {
		size_t chunk = MIN(n, DELTA_MAX_COPY);
		uint32_t size = chunk == DELTA_MAX_COPY ? 0 : (uint32_t)chunk;
		cost += 1 + !!(base_ofs & 0xff) + !!(base_ofs & 0xff00) +
			!!(base_ofs & 0xff0000) + !!(base_ofs & 0xff000000) +
			!!(size & 0xff) + !!(size & 0xff00);
		base_ofs += chunk;
		n -= chunk;
	}
	return cost;
}

/* Roughly what n literal bytes cost, opcode included. */
static inline size_t literal_cost(size_t n)
{
	return n ? n + 1 + (n - 1) / DELTA_MAX_INSERT : 0;
}

/*
 * The best match through the window target[pos..pos + DELTA_BLOCK_SIZE):
 * each base block filed under the window's hash is extended
 * forward, and backward by at most back_max bytes. The winner saves the
 * most: its length less the size of its copy instructions (so a nearer
 * copy beats one a byte longer that needs more offset bytes); the
 * earliest slot wins a tie. False when no block matches.
 *
 * reach, when not 0, is where the match being improved on stops: then
 * only blocks whose run goes past it are of interest, and only the
 * first LAZY_CANDIDATES blocks with the window's check value are tried.
 * This keeps the look-ahead inside a short match cheap, however many
 * places of the base look alike.
 */
static bool find_match(const struct delta_index *idx,
		       const unsigned char *target, size_t target_len,
		       size_t pos, size_t back_max, size_t reach,
		       struct match *found)
{
	const unsigned char *base = idx->base;
	uint64_t hash = window_hash(target + pos);
	size_t bucket = hash >> idx->bucket_shift;
	size_t best_saves = 0, tries = 0;

	if (!filter_has(idx, hash))
		return false;
	for (size_t slot = idx->bucket_start[bucket];
	     slot < idx->bucket_start[bucket + 1]; slot++) {
		size_t base_ofs, fwd_max, fwd = 0, back, saves;
		if (idx->slots[slot].check != (uint32_t)hash)
			continue;
		base_ofs = idx->slots[slot].base_ofs;
		fwd_max = MIN(idx->src_len - base_ofs, target_len - pos);
		if (reach) {
			if (++tries > LAZY_CANDIDATES)
				break;
			if (reach - pos >= fwd_max ||
			    base[base_ofs + (reach - pos)] != target[reach])
				continue;
			fwd = common_prefix(base + base_ofs, target + pos, reach - pos + 1);
			if (fwd <= reach - pos)
				continue;
		}
		back = common_suffix(base + base_ofs, target + pos,
				     MIN(base_ofs, back_max));
		/*
		 * A copy instruction is at least one byte, so to save more
		 * than the best, the run must be at least best_saves + 2
		 * bytes long: look at its last byte first.
		 */
		if (best_saves + 1 > back && best_saves + 1 - back >= fwd) {
			size_t must = best_saves + 1 - back;
			if (must >= fwd_max || base[base_ofs + must] != target[pos + must])
				continue;
		}
		fwd += common_prefix(base + base_ofs + fwd, target + pos + fwd, fwd_max - fwd);
		if (fwd < DELTA_BLOCK_SIZE)
			continue; /* the hashes collided */
		saves = fwd + back - copy_cost(base_ofs - back, fwd + back);
		if (saves > best_saves) {
			best_saves = saves;
			found->start = pos - back;
			found->end = pos + fwd;
			found->base_ofs = base_ofs - back;
		}
	}
	return best_saves != 0;
}

/*
 * The last copy's alignment, resumed at pos, a few bytes after that copy
 * stopped: what an edit that replaced bytes by as many others leaves.
 * Such a run is found at once, even when too short or too near the end
 * of the target to hold a whole window. False unless it saves a couple
 * of bytes.
 */
static bool resume_match(const struct delta_index *idx,
			 const unsigned char *target, size_t target_len,
			 size_t pos, const struct match *last, struct match *found)
{
	size_t base_ofs, fwd;

	if (pos < last->end || pos - last->end > RESUME_REACH)
		return false;
	base_ofs = last->base_ofs + (last->end - last->start) + (pos - last->end);
	if (base_ofs >= idx->src_len)
		return false;
	fwd = common_prefix(idx->base + base_ofs, target + pos,
			    MIN(idx->src_len - base_ofs, target_len - pos));
	if (fwd < copy_cost(base_ofs, fwd) + 2)
		return false;
	found->start = pos;
	found->end = pos + fwd;
	found->base_ofs = base_ofs;
	return true;
}

/*
 * Having cur (not written yet), a later window found next. Both are
 * correct; which makes the smaller delta over target[cur->start ..
 * next->end)? Keep cur (and leave what next adds past cur for later),
 * replace cur by next (the bytes between their starts become literal),
 * or chain: write cur, and go on with the part of next past cur.
 */
enum lazy_choice { LAZY_KEEP, LAZY_REPLACE, LAZY_CHAIN };

static enum lazy_choice choose(const struct match *cur, const struct match *next)
{
	size_t tail, cost_keep, cost_replace, cost_chain;

	if (next->end <= cur->end)
		return LAZY_KEEP; /* next adds nothing */
	if (next->start <= cur->start)
		return LAZY_REPLACE; /* next covers cur and more */
	/*
	 * Counted in keep's favour: its tail as bare literal bytes (they
	 * may join a run that has its opcode anyway), the replacement's
	 * literal bytes with an opcode of their own. So the delta only
	 * changes when that surely makes it shorter.
	 */
	tail = next->end - cur->end;
	cost_keep = copy_cost(cur->base_ofs, cur->end - cur->start) + tail;
	cost_replace = literal_cost(next->start - cur->start) +
		       copy_cost(next->base_ofs, next->end - next->start);
	cost_chain = copy_cost(cur->base_ofs, cur->end - cur->start) +
		     copy_cost(next->base_ofs + (cur->end - next->start), tail);
	if (cost_replace < cost_keep && cost_replace <= cost_chain)
		return LAZY_REPLACE;
	if (cost_chain < cost_keep)
		return LAZY_CHAIN;
	return LAZY_KEEP;
}

/* Write the literal bytes before m, then m's copy instructions. */
static int put_match(struct delta_writer *w, const unsigned char *target,
		     size_t *literal_pos, const struct match *m)
{
	int ret = put_literals(w, target + *literal_pos, m->start - *literal_pos);
	if (!ret)
		ret = put_copy(w, m->base_ofs, m->end - m->start);
	*literal_pos = m->end;
	return ret;
}

/*
 * Before a limited delta is encoded, a sample of the target is looked
 * up: PROBE_POINTS stretches spread evenly over it (one per
 * PROBE_SPACING bytes in large targets, up to PROBE_POINTS_MAX), each of
 * DELTA_BLOCK_SIZE windows in a row. A stretch inside a common run of
 * 2 * DELTA_BLOCK_SIZE - 1 bytes or more holds a window that starts at
 * a filed base block, so it is found; a stretch of new bytes is not. A
 * delta of at most max_delta_len bytes has at most that many literal
 * bytes, so it copies at least the rest of the target, and about that
 * share of the stretches is found. When fewer than PROBE_SHARE_NUM /
 * PROBE_SHARE_DEN of that share are, the target is taken to be unlike
 * the base, without encoding it.
 *
 * Measured on the pairs pack-objects tries (most of which give no
 * delta; Documentation/technical/delta-notes.adoc): no pair that gave a
 * delta was refused, and a refusal costs a small fraction of failing
 * the hard way (scanning the target until the literal bytes pass the
 * limit).
 */
#define PROBE_POINTS 8
#define PROBE_POINTS_MAX 64
#define PROBE_SPACING 1024
#define PROBE_SHARE_NUM 2
#define PROBE_SHARE_DEN 5

/* Is any window of p[0 .. 2 * DELTA_BLOCK_SIZE - 1) a filed base block? */
static bool stretch_found(const struct delta_index *idx, const unsigned char *p)
{
	for (unsigned k = 0; k < DELTA_BLOCK_SIZE; k++) {
		uint64_t hash = window_hash(p + k);
		size_t bucket = hash >> idx->bucket_shift;
		if (!filter_has(idx, hash))
			continue;
		for (size_t slot = idx->bucket_start[bucket];
		     slot < idx->bucket_start[bucket + 1]; slot++) {
			if (idx->slots[slot].check == (uint32_t)hash &&
			    !memcmp(idx->base + idx->slots[slot].base_ofs, p + k,
				    DELTA_BLOCK_SIZE))
				return true;
		}
	}
	return false;
}

static bool looks_unlike(const struct delta_index *idx, const unsigned char *target,
			 size_t target_len, size_t max_delta_len)
{
	size_t nr = PROBE_POINTS, need, found = 0, missed = 0, span;

	if (max_delta_len >= target_len || target_len < 4 * DELTA_BLOCK_SIZE)
		return false;
	if (target_len / PROBE_SPACING > nr)
		nr = MIN(target_len / PROBE_SPACING, PROBE_POINTS_MAX);
	/* need = ceil(nr * (copied share) * PROBE_SHARE), in 128 bits */
	need = (size_t)(((unsigned __int128)nr * (target_len - max_delta_len) * PROBE_SHARE_NUM +
			 (unsigned __int128)target_len * PROBE_SHARE_DEN - 1) /
			((unsigned __int128)target_len * PROBE_SHARE_DEN));
	span = target_len - (2 * DELTA_BLOCK_SIZE - 1);
	for (size_t point = 0; point < nr && need; point++) {
		if (stretch_found(idx, target + span * point / (nr - 1))) {
			if (++found >= need)
				return false;
		} else if (++missed > nr - need) {
			return true;
		}
	}
	return false;
}

int delta_create(const struct delta_index *idx,
		 const unsigned char *target, size_t target_len,
		 size_t max_delta_len, unsigned char **out, size_t *out_len)
{
	struct delta_writer w = { NULL, 0, 0, max_delta_len };
	size_t pos = 0;         /* start of the window */
	size_t literal_pos = 0; /* start of the literal bytes not written yet */
	struct match cur = { 0, 0, 0 };  /* found, not written yet */
	struct match last = { 0, 0, 0 }; /* the last one written */
	bool have_cur = false, have_last = false;
	size_t hint;
	int ret;

	*out = NULL;
	*out_len = 0;
	if (max_delta_len && idx->nr_slots &&
	    looks_unlike(idx, target, target_len, max_delta_len))
		return GP_ENOTFOUND;
	/*
	 * Most deltas are small, and none may outgrow the limit by more than
	 * an instruction; the writer doubles when the guess is short.
	 */
	hint = MIN(target_len / 8, (size_t)1 << 20) + 64;
	if (max_delta_len && max_delta_len < hint)
		hint = max_delta_len + 16;
	ret = writer_reserve(&w, hint);
	if (!ret)
		ret = put_varint(&w, idx->base_len);
	if (!ret)
		ret = put_varint(&w, target_len);
	if (ret)
		goto out;

	if (idx->nr_slots && target_len >= DELTA_BLOCK_SIZE) {
		for (;;) {
			struct match next = { 0, 0, 0 };
			bool found;
			size_t flush_end;

			found = find_match(idx, target, target_len, pos,
					   pos > literal_pos ? pos - literal_pos : 0,
					   have_cur ? cur.end : 0, &next);
			if (!found && !have_cur && have_last)
				found = resume_match(idx, target, target_len, pos, &last, &next);
			/*
			 * After a chain, the window may start inside what
			 * is written already: only the part of a match
			 * past literal_pos counts then.
			 */
			if (found && next.end > literal_pos) {
				if (next.start < literal_pos) {
					next.base_ofs += literal_pos - next.start;
					next.start = literal_pos;
				}
				if (!have_cur) {
					cur = next;
					have_cur = true;
				} else {
					switch (choose(&cur, &next)) {
					case LAZY_KEEP:
						break;
					case LAZY_REPLACE:
						cur = next;
						break;
					case LAZY_CHAIN:
						ret = put_match(&w, target, &literal_pos, &cur);
						if (ret)
							goto out;
						next.base_ofs += cur.end - next.start;
						next.start = cur.end;
						last = cur;
						have_last = true;
						cur = next;
						break;
					}
				}
			}

			/*
			 * A short match may yet lose to one found a little
			 * further on: look at every window that starts inside
			 * it. A long one is written at once and skipped.
			 */
			if (have_cur && (pos + 1 >= cur.end || cur.end == target_len ||
					 cur.end - cur.start >= LAZY_MATCH_LEN)) {
				ret = put_match(&w, target, &literal_pos, &cur);
				if (ret)
					goto out;
				last = cur;
				have_last = true;
				have_cur = false;
				pos = cur.end;
				if (target_len - pos < DELTA_BLOCK_SIZE)
					break;
				continue;
			}

			flush_end = have_cur ? cur.start : pos;
			if (flush_end - literal_pos >= PENDING_KEEP + DELTA_MAX_INSERT) {
				ret = put_literals(&w, target + literal_pos, DELTA_MAX_INSERT);
				if (ret)
					goto out;
				literal_pos += DELTA_MAX_INSERT;
			}
			if (target_len - pos == DELTA_BLOCK_SIZE)
				break;
			pos++;
		}
	}
	if (have_cur) {
		ret = put_match(&w, target, &literal_pos, &cur);
		if (ret)
			goto out;
		last = cur;
		have_last = true;
	}
	/* The last few bytes, too few for a window: only resuming covers them. */
	for (pos = literal_pos; have_last && pos < target_len; pos++) {
		struct match next;
		if (!resume_match(idx, target, target_len, pos, &last, &next))
			continue;
		ret = put_match(&w, target, &literal_pos, &next);
		if (ret)
			goto out;
		last = next;
		pos = next.end - 1;
	}
	ret = put_literals(&w, target + literal_pos, target_len - literal_pos);
	if (ret)
		goto out;
	*out = w.buf;
	*out_len = w.len;
	w.buf = NULL;
out:
	free(w.buf);
	return ret;
}
