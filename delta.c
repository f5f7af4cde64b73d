/*
 * delta.c: applying and creating Git deltas (gitformat-pack,
 * "Deltified representation").
 *
 * Applying: the instruction stream comes straight from a pack, so every
 * copy is checked against the base and every write against the declared
 * result size before it happens.
 *
 * Creating: the base is cut into DELTA_BLOCK_SIZE-byte blocks at offsets
 * 0, 16, 32, ... and each block is filed in a hash table under a
 * polynomial hash of its bytes. The encoder slides a window of the same
 * size over the target one byte at a time, updating the same hash in
 * O(1) per byte (the outgoing byte's term is subtracted, the rest is
 * shifted by one power, the incoming byte added), and looks each window
 * up. Every base block filed under that hash is a candidate: its run is
 * extended forward as far as base and target agree, and backward into
 * the literal bytes not yet written. The candidate that saves the most
 * (run length less the size of its copy instructions) wins.
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
 *    targets that do not resemble the base. Nothing else depends on
 *    the limit: a delta that fits it is the delta made without one.
 */
#include "delta.h"
#include "error.h"

/* An insert instruction carries 1..127 literal bytes (its opcode). */
#define DELTA_MAX_INSERT 127
/* A copy instruction copies at most 0x10000 bytes (size bytes of 0). */
#define DELTA_MAX_COPY 0x10000
/* Literal bytes held back for backward extension of later matches. */
#define PENDING_KEEP (8 * DELTA_MAX_INSERT)
/* Matches shorter than this are compared with those found inside them. */
#define LAZY_MATCH_LEN 256
/* How far past the last copy its alignment is tried again. */
#define RESUME_REACH 64
/* Candidates a look-ahead lookup tries (the rest are passed over). */
#define LAZY_CANDIDATES 8
/* The hash table's load: base blocks per bucket, before any cap. */
#define BLOCKS_PER_BUCKET 4

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
 * The window hash of p[0..16) is sum(p[i] * HASH_MULT^(15 - i)) mod
 * 2^64. The low bits of such a sum barely depend on the last bytes'
 * high bits, so hash_mix() scrambles it before it picks a bucket (its
 * top bits) and a check value (its low 32 bits, kept in the slot so
 * that most non-matching candidates cost no access to the base).
 */
#define HASH_MULT 0x9e3779b97f4a7c15ull

struct delta_slot {
	uint32_t base_ofs; /* where the block starts in the base */
	uint32_t check;    /* low 32 bits of the block's mixed hash */
};

struct delta_index {
	const unsigned char *base; /* borrowed */
	size_t base_len;           /* the whole base, for the header */
	size_t src_len;            /* copies come from base[0..src_len) */
	unsigned bucket_shift;     /* bucket = mixed hash >> bucket_shift */
	size_t nr_buckets;
	/* bucket b's slots are slots[bucket_start[b] .. bucket_start[b + 1]) */
	uint32_t *bucket_start;
	struct delta_slot *slots;
	size_t nr_slots;
};

/* hash_pow[k] = HASH_MULT^k: the weight of the byte k places from the end. */
static void hash_powers(uint64_t hash_pow[DELTA_BLOCK_SIZE + 1])
{
	hash_pow[0] = 1;
	for (unsigned k = 0; k < DELTA_BLOCK_SIZE; k++)
		hash_pow[k + 1] = hash_pow[k] * HASH_MULT;
}

/* The products are independent, so they overlap in the CPU (no Horner). */
static inline uint64_t window_hash(const unsigned char *p, const uint64_t *hash_pow)
{
	uint64_t h = 0;
	for (unsigned i = 0; i < DELTA_BLOCK_SIZE; i++)
		h += p[i] * hash_pow[DELTA_BLOCK_SIZE - 1 - i];
	return h;
}

static inline uint64_t hash_mix(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

int delta_index_create(struct delta_index **out, const unsigned char *base,
		       size_t base_len)
{
	struct delta_index *idx;
	struct bucket_tally {
		uint32_t total; /* blocks filed under the bucket's hashes */
		uint32_t seen;  /* of which the second pass has met so far */
	} *tally = NULL;
	size_t nr_blocks, block_nr, bucket_bytes, slot_bytes, nr_slots = 0;
	uint64_t hash_pow[DELTA_BLOCK_SIZE + 1];
	unsigned bits = 4;
	int ret = GP_ENOMEM;

	*out = NULL;
	hash_powers(hash_pow);
	idx = calloc(1, sizeof(*idx));
	if (!idx)
		goto out;
	idx->base = base;
	idx->base_len = base_len;
	idx->src_len = MIN(base_len, DELTA_MAX_SOURCE);
	nr_blocks = idx->src_len / DELTA_BLOCK_SIZE;
	/* About four blocks a bucket; nr_blocks < 2^28, so bits < 27. */
	while (((size_t)1 << bits) < nr_blocks / BLOCKS_PER_BUCKET)
		bits++;
	idx->nr_buckets = (size_t)1 << bits;
	idx->bucket_shift = 64 - bits;
	if (!st_add(idx->nr_buckets, 1, &bucket_bytes) ||
	    !st_mult(bucket_bytes, sizeof(*idx->bucket_start), &bucket_bytes))
		goto out;
	idx->bucket_start = malloc(bucket_bytes);
	tally = calloc(idx->nr_buckets, sizeof(*tally));
	if (!idx->bucket_start || !tally)
		goto out;

	/* First pass: how many blocks each bucket is offered. */
	for (block_nr = 0; block_nr < nr_blocks; block_nr++) {
		const unsigned char *p = base + block_nr * DELTA_BLOCK_SIZE;
		if (block_nr && !memcmp(p - DELTA_BLOCK_SIZE, p, DELTA_BLOCK_SIZE))
			continue; /* filed as the run's first block */
		tally[hash_mix(window_hash(p, hash_pow)) >> idx->bucket_shift].total++;
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
	 * Second pass: file the blocks, in base order. A bucket offered
	 * total > DELTA_BUCKET_LIMIT blocks keeps the r-th (from 0) when
	 * floor(r * LIMIT / total) steps past floor((r - 1) * LIMIT / total),
	 * and the first: exactly LIMIT of them, evenly spread over the base
	 * from its start (low offsets make short copy instructions).
	 */
	for (block_nr = 0; block_nr < nr_blocks; block_nr++) {
		const unsigned char *p = base + block_nr * DELTA_BLOCK_SIZE;
		uint64_t mixed;
		struct bucket_tally *t;
		size_t bucket, slot;
		uint32_t rank;

		if (block_nr && !memcmp(p - DELTA_BLOCK_SIZE, p, DELTA_BLOCK_SIZE))
			continue;
		mixed = hash_mix(window_hash(p, hash_pow));
		bucket = mixed >> idx->bucket_shift;
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
		idx->slots[slot].check = (uint32_t)mixed;
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
	free(idx);
}

size_t delta_index_memory(const struct delta_index *idx)
{
	if (!idx)
		return 0;
	return sizeof(*idx) + (idx->nr_buckets + 1) * sizeof(*idx->bucket_start) +
	       idx->nr_slots * sizeof(*idx->slots);
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
 * The best match through the window target[pos..pos + DELTA_BLOCK_SIZE),
 * whose hash is hash: each base block filed under that hash is extended
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
		       size_t pos, uint64_t hash, size_t back_max, size_t reach,
		       struct match *found)
{
	const unsigned char *base = idx->base;
	uint64_t mixed = hash_mix(hash);
	size_t bucket = mixed >> idx->bucket_shift;
	size_t best_saves = 0, tries = 0;

	for (size_t slot = idx->bucket_start[bucket];
	     slot < idx->bucket_start[bucket + 1]; slot++) {
		size_t base_ofs, fwd_max, fwd = 0, back, saves;
		if (idx->slots[slot].check != (uint32_t)mixed)
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

int delta_create(const struct delta_index *idx,
		 const unsigned char *target, size_t target_len,
		 size_t max_delta_len, unsigned char **out, size_t *out_len)
{
	struct delta_writer w = { NULL, 0, 0, max_delta_len };
	uint64_t hash_pow[DELTA_BLOCK_SIZE + 1];
	size_t pos = 0;         /* start of the window */
	size_t literal_pos = 0; /* start of the literal bytes not written yet */
	struct match cur = { 0, 0, 0 };  /* found, not written yet */
	struct match last = { 0, 0, 0 }; /* the last one written */
	bool have_cur = false, have_last = false;
	size_t hint;
	int ret;

	*out = NULL;
	*out_len = 0;
	hash_powers(hash_pow);
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
		uint64_t hash = window_hash(target, hash_pow);
		for (;;) {
			struct match next = { 0, 0, 0 };
			bool found;
			size_t flush_end;

			found = find_match(idx, target, target_len, pos, hash,
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
				hash = window_hash(target + pos, hash_pow);
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
			hash = hash * HASH_MULT + target[pos + DELTA_BLOCK_SIZE] -
			       target[pos] * hash_pow[DELTA_BLOCK_SIZE];
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
