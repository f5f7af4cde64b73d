/*
 * bitmap-reuse.c: the bitmap writer takes over the repository's current
 * bitmap where the new order allows (bitmap-reuse.h).
 *
 * The repository's current bitmap (the MIDX's, or a pack's) already
 * says what its commits reach. When the new order keeps nearly every
 * object in long runs that the old order had too, a commit with an old
 * bitmap needs no walk: its bits, moved to their new positions, are
 * exactly what it reaches, provided every one of them is still in the
 * new order. Two orders do that: the geometric steady state, whose
 * largest pack leads both the old MIDX and the new (runs that did not
 * move), and an all-into-one pack that repack writes in the old
 * bitmap's order after the new objects (pack_objects_follow(): runs
 * moved by the number of new objects). A run is moved a word at a time;
 * the few bits outside runs one by one. Then trees are read only when a
 * walk needs them (below the commits no old bitmap covers), the name
 * hashes come from the old file's cache and from those trees, and
 * selection prefers commits with an old bitmap.
 *
 * When the orders differ (a pack written in another order, say),
 * moving every bit costs more than building afresh from trees read in
 * threads: then the old bitmap is not used.
 */
#include "bitmap-reuse.h"
#include "pack-bitmap-write-internal.h"
#include "bitmap-trees.h"
#include "error.h"
#include "ewah/ewah.h"
#include "pack-bitmap.h"
#include "pack-bitmap-write.h"
#include "pseudo-merge.h"

/* A pseudo-merge of the reused bitmap, its commits at our positions. */
struct old_pseudo {
	uint32_t *bit_pos;  /* sorted */
	size_t nr;
	bool usable;        /* every commit is still here */
};

struct reuse_run {
	uint32_t old_start, new_start, len;
};

struct reuse {
	struct bitmap_index *bi;
	uint32_t *new_of_old;   /* old bit_pos -> new bit_pos; NO_POS when gone */
	uint32_t nr_old;
	struct reuse_run *runs; /* by old_start; none shorter than REUSE_MIN_RUN */
	size_t nr_runs;
	size_t words;           /* bitmap words the runs' new positions need */
	struct bitmap scratch;
	struct tree_resolver *lazy;  /* reads trees when a walk needs them */
	uint32_t nr_reused;     /* bitmaps taken over */
	uint32_t nr_rows;       /* entries over every layer of the old chain */
	/*
	 * The new order is the old chain with one layer on top
	 * (bitmap_order_extends()): old positions are new positions.
	 */
	bool stacked;
	/* the old file's pseudo-merges, loaded when first asked for */
	bool pseudo_loaded;
	struct old_pseudo *old_pseudo;
	size_t nr_old_pseudo;
};

/* Reuse pays when runs hold at least this share of the new order. */
#define REUSE_MIN_SAME_NUM 3
#define REUSE_MIN_SAME_DEN 4
/* Shorter stretches are moved bit by bit. */
#define REUSE_MIN_RUN 64

void bitmap_reuse_free(struct bitmap_writer *w)
{
	struct reuse *ru = w->reuse;
	if (!ru)
		return;
	bitmap_index_free(ru->bi);
	free(ru->new_of_old);
	free(ru->runs);
	bitmap_release(&ru->scratch);
	bitmap_trees_resolver_free(ru->lazy);
	for (size_t i = 0; i < ru->nr_old_pseudo; i++)
		free(ru->old_pseudo[i].bit_pos);
	free(ru->old_pseudo);
	free(ru);
	w->reuse = NULL;
}

/* The stretches of old bits that keep their order in the new one. */
static uint64_t find_runs(struct reuse *ru)
{
	uint64_t covered = 0;
	size_t alloc = 0;
	uint32_t bit = 0;
	while (bit < ru->nr_old) {
		uint32_t start = bit++;
		if (ru->new_of_old[start] == NO_POS)
			continue;
		while (bit < ru->nr_old && ru->new_of_old[bit] != NO_POS &&
		       ru->new_of_old[bit] == ru->new_of_old[bit - 1] + 1)
			bit++;
		if (bit - start < REUSE_MIN_RUN)
			continue;
		ALLOC_GROW(ru->runs, ru->nr_runs + 1, alloc);
		ru->runs[ru->nr_runs++] = (struct reuse_run){ start, ru->new_of_old[start], bit - start };
		covered += bit - start;
		if (((uint64_t)ru->new_of_old[start] + (bit - start) + 63) / 64 > ru->words)
			ru->words = ((size_t)ru->new_of_old[start] + (bit - start) + 63) / 64;
	}
	return covered;
}

/*
 * Open the repository's bitmap and map its positions to ours. Any
 * trouble with it (none, stale, damaged) only means building afresh.
 */
void bitmap_reuse_open(struct bitmap_writer *w)
{
	struct gp_error ignored = GP_ERROR_INIT;
	const struct bitmap_order *old;
	struct bitmap_index *bi;
	struct reuse *ru;

	if (bitmap_index_open(&bi, w->odb, &ignored)) {
		gp_error_clear(&ignored);
		return;
	}
	old = bitmap_index_order(bi);
	ru = xcalloc(1, sizeof(*ru));
	ru->bi = bi;
	ru->nr_old = bitmap_order_nr(old);
	ru->new_of_old = xmalloc(sizeof(uint32_t) * (ru->nr_old ? ru->nr_old : 1));
	/*
	 * A new layer on the old chain, or on its lower layers (the new
	 * layer took the old top's place), keeps every position below
	 * base_objects: no name there needs looking up, so the cost here
	 * follows the layers above.
	 */
	ru->stacked = w->opts->base_objects && !getenv("GP_TEST_BITMAP_LAYER_SLOW") &&
		      bitmap_order_extends(w->order, old);
	writer_table_build(w, ru->stacked ? w->opts->base_objects : 0);
	for (uint32_t bit = 0; bit < ru->nr_old; bit++) {
		const unsigned char *raw;
		if (ru->stacked && bit < w->opts->base_objects) {
			ru->new_of_old[bit] = bit;
			continue;
		}
		raw = bitmap_order_index_oid_raw(old, bitmap_order_bit_to_index(old, bit));
		if (!writer_find_raw(w, raw, &ru->new_of_old[bit]))
			ru->new_of_old[bit] = NO_POS;
	}
	w->reuse = ru;
	if (find_runs(ru) * REUSE_MIN_SAME_DEN < (uint64_t)w->nr * REUSE_MIN_SAME_NUM) {
		bitmap_reuse_free(w);
		return;
	}
	bitmap_init(&ru->scratch);
	ru->lazy = bitmap_trees_resolver_new(w);
	/*
	 * Names the old file knew, stored plus one as set_name() does. A
	 * layer writes the name hashes of its own objects only: stacked,
	 * those below base_objects are not wanted.
	 */
	for (uint32_t index_pos = ru->stacked ? w->opts->base_objects : 0;
	     w->hashes && index_pos < ru->nr_old; index_pos++) {
		uint32_t hash, new_pos = ru->new_of_old[bitmap_order_index_to_bit(old, index_pos)];
		if (new_pos == NO_POS || !bitmap_index_name_hash(bi, index_pos, &hash) || !hash)
			continue;
		w->hashes[new_pos] = writer_stored_hash(hash);
	}
}

bool bitmap_reuse_base_types(struct bitmap_writer *w)
{
	struct reuse *ru = w->reuse;
	uint32_t base = w->opts->base_objects;
	if (!ru || !ru->stacked)
		return false;
	memset(w->types, 0, base);
	for (enum object_type type = OBJ_COMMIT; type <= OBJ_TAG; type++) {
		const struct bitmap *bits = bitmap_index_type_bits(ru->bi, type);
		for (size_t i = 0; bits && i < bits->word_nr && i * 64 < base; i++) {
			uint64_t word = bits->words[i];
			while (word) {
				uint64_t bit = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(word);
				word &= word - 1;
				if (bit >= base)
					break;
				if (w->types[bit])
					return false;
				w->types[bit] = (uint8_t)type;
			}
		}
	}
	/* bitmap_index_open() checked that they cover every object; again, cheaply */
	for (uint32_t bit = 0; bit < base; bit++)
		if (!w->types[bit])
			return false;
	return true;
}

bool bitmap_reuse_layer_walk(const struct bitmap_writer *w)
{
	return w->reuse && w->reuse->stacked;
}

int bitmap_reuse_covered(struct bitmap_writer *w, uint32_t bit_pos, struct bitmap *closure,
			 bool *covered)
{
	struct reuse *ru = w->reuse;
	struct gp_error bad = GP_ERROR_INIT;
	const struct ewah *old;
	uint32_t base = w->opts->base_objects;
	int ret = 0;

	*covered = false;
	if (!ru || !ru->stacked || bit_pos >= base)
		return 0;
	if (bitmap_index_for_commit(ru->bi, bit_pos, &old, &bad)) {
		/* none, or a damaged entry: the commit is walked instead */
		ret = bad.code == GP_ENOMEM ? gp_error_set(w->err, GP_ENOMEM, "out of memory") : 0;
		gp_error_clear(&bad);
		return ret;
	}
	/*
	 * Every bit must lie below base_objects, where old positions are
	 * new ones (so reuse_or_ewah() finds it complete): a commit of the
	 * layers below reaches nothing above them.
	 */
	bitmap_reset(&ru->scratch);
	if (bitmap_or_ewah(&ru->scratch, old) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	for (size_t i = base / 64; i < ru->scratch.word_nr; i++) {
		uint64_t word = ru->scratch.words[i];
		if (i == base / 64)
			word &= base % 64 ? ~(uint64_t)0 << (base % 64) : ~(uint64_t)0;
		if (word)
			return 0;
	}
	if (bitmap_or(closure, &ru->scratch) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	*covered = true;
	return 0;
}

/* Which of our commits the old file has a bitmap for. */
void bitmap_reuse_mark_commits(struct bitmap_writer *w)
{
	struct reuse *ru = w->reuse;
	const struct bitmap_order *old;
	if (!ru)
		return;
	/*
	 * Every layer of an old chain: a new top layer's commits mostly
	 * descend from commits whose bitmaps the layers below hold. Rows
	 * are numbered across the layers, the top layer's first.
	 */
	for (struct bitmap_index *layer = ru->bi; layer; layer = bitmap_index_base(layer)) {
		uint32_t first = ru->nr_rows, nr = bitmap_index_nr_entries(layer);
		old = bitmap_index_order(layer);
		ru->nr_rows += nr;
		for (uint32_t row = 0; old && row < nr; row++) {
			uint32_t old_bit = bitmap_order_index_to_bit(old, bitmap_index_entry_commit(layer, row));
			uint32_t new_bit = old_bit < ru->nr_old ? ru->new_of_old[old_bit] : NO_POS;
			if (new_bit != NO_POS && w->commit_of_bit[new_bit] != NO_POS &&
			    w->commits[w->commit_of_bit[new_bit]].old_row == NO_POS)
				w->commits[w->commit_of_bit[new_bit]].old_row = first + row;
		}
	}
}

/*
 * OR into dst the bits of src in [run->old_start, + len), moved to start
 * at run->new_start, a word at a time; clear them in src. dst has words
 * for the whole new stretch.
 */
static void move_run(uint64_t *dst, struct bitmap *src, const struct reuse_run *run)
{
	uint64_t start = run->old_start, end = start + run->len;
	uint64_t last_word = (end + 63) / 64;
	if (last_word > src->word_nr)
		last_word = src->word_nr;
	for (uint64_t i = start / 64; i < last_word; i++) {
		uint64_t mask = ~(uint64_t)0, word;
		uint64_t dst_bit, dst_word;
		unsigned off;
		if (i * 64 < start)
			mask &= ~(uint64_t)0 << (start - i * 64);
		if (i * 64 + 64 > end)
			mask &= ~(uint64_t)0 >> (i * 64 + 64 - end);
		word = src->words[i] & mask;
		if (!word)
			continue;
		src->words[i] &= ~mask;
		/*
		 * The new position of this word's lowest set bit tells where
		 * the word lands; its bit 0 may lie before new_start (and
		 * before 0), so count from the lowest bit in the run.
		 */
		dst_bit = (uint64_t)run->new_start + (i * 64 + (uint64_t)__builtin_ctzll(word) - start);
		word >>= __builtin_ctzll(word);
		dst_word = dst_bit / 64;
		off = (unsigned)(dst_bit % 64);
		dst[dst_word] |= word << off;
		if (off && (word >> (64 - off)))
			dst[dst_word + 1] |= word >> (64 - off);
	}
}

/*
 * OR the old bitmap of entry row, moved to the new positions, into bits.
 * *complete is false when it holds an object the new order lacks: the
 * commit must then be walked (what was ORed is reachable all the same).
 */
static int reuse_or_ewah(struct bitmap_writer *w, struct bitmap *bits, const struct ewah *old,
			 bool *complete)
{
	struct reuse *ru = w->reuse;

	*complete = false;
	bitmap_reset(&ru->scratch);
	if (bitmap_or_ewah(&ru->scratch, old) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	/*
	 * bits must count every word the runs write into: past its word_nr
	 * they would be unseen (bitmap_get, the EWAH made of it: a commit
	 * whose old bits all lie there got an empty bitmap) and, bitmap_reset()
	 * clearing only up to word_nr, left behind for the next build.
	 */
	if (bitmap_grow(bits, ru->words) < 0)
		return gp_error_set(w->err, GP_ENOMEM, "out of memory");
	for (size_t i = 0; i < ru->nr_runs; i++)
		move_run(bits->words, &ru->scratch, &ru->runs[i]);
	/* What is left lies outside the runs. */
	for (size_t i = 0; i < ru->scratch.word_nr; i++) {
		uint64_t word = ru->scratch.words[i];
		while (word) {
			uint64_t old_bit = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(word);
			uint32_t new_bit = old_bit < ru->nr_old ? ru->new_of_old[old_bit] : NO_POS;
			word &= word - 1;
			if (new_bit == NO_POS)
				return 0;
			if (writer_set_bit(w, bits, new_bit))
				return GP_ENOMEM;
		}
	}
	*complete = true;
	return 0;
}

int bitmap_reuse_or(struct bitmap_writer *w, struct bitmap *bits, uint32_t row, bool *complete)
{
	struct bitmap_index *layer = w->reuse->bi;
	const struct ewah *old;
	uint32_t index_pos;
	struct gp_error bad = GP_ERROR_INIT;
	int ret;

	*complete = false;
	/* the layer the row is in (bitmap_reuse_mark_commits() numbered them) */
	while (layer && row >= bitmap_index_nr_entries(layer)) {
		row -= bitmap_index_nr_entries(layer);
		layer = bitmap_index_base(layer);
	}
	if (!layer)
		return 0;
	if (bitmap_index_entry(layer, row, &index_pos, &old, &bad)) {
		ret = bad.code == GP_ENOMEM ? gp_error_set(w->err, GP_ENOMEM, "out of memory") : 0;
		gp_error_clear(&bad);
		return ret;   /* a damaged entry: walk instead */
	}
	ret = reuse_or_ewah(w, bits, old, complete);
	if (!ret && *complete)
		w->reuse->nr_reused++;
	return ret;
}

int bitmap_reuse_load_tree(struct bitmap_writer *w, uint32_t tree_pos)
{
	return bitmap_trees_load(w->reuse->lazy, tree_pos);
}

uint32_t bitmap_reuse_nr_reused(const struct bitmap_writer *w)
{
	return w->reuse ? w->reuse->nr_reused : 0;
}

void bitmap_reuse_set_nr_reused(struct bitmap_writer *w, uint32_t nr)
{
	if (w->reuse)
		w->reuse->nr_reused = nr;
}

static void load_old_pseudo(struct bitmap_writer *w, struct old_pseudo **out, size_t *nr)
{
	const struct pseudo_merge_section *s;
	*out = NULL;
	*nr = 0;
	if (!w->reuse || !(s = bitmap_index_pseudo_merges(w->reuse->bi)) || !s->nr_merges)
		return;
	*out = xcalloc(s->nr_merges, sizeof(**out));
	*nr = s->nr_merges;
	for (uint32_t i = 0; i < s->nr_merges; i++) {
		struct old_pseudo *op = &(*out)[i];
		struct gp_error ignored = GP_ERROR_INIT;
		struct ewah commits, objects;
		struct ewah_iter it;
		uint64_t old_bit;
		size_t alloc = 0;
		if (pseudo_merge_section_merge(s, i, &commits, &objects, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		op->usable = true;
		ewah_iter_init(&it, &commits);
		while (ewah_iter_next(&it, &old_bit)) {
			uint32_t new_bit = old_bit < w->reuse->nr_old ? w->reuse->new_of_old[old_bit] : NO_POS;
			if (new_bit == NO_POS) {
				op->usable = false;
				break;
			}
			ALLOC_GROW(op->bit_pos, op->nr + 1, alloc);
			op->bit_pos[op->nr++] = new_bit;
		}
		if (op->nr > 1)
			qsort(op->bit_pos, op->nr, sizeof(uint32_t), writer_cmp_u32);
	}
}

/*
 * The objects of the old pseudo-merge with exactly these commits, moved
 * to our positions, into bits; *found false when there is none (or
 * it holds an object we lack).
 */
int bitmap_reuse_pseudo(struct bitmap_writer *w, struct bitmap *bits, const uint32_t *bit_pos,
			size_t nr, bool *found)
{
	const struct old_pseudo *old;
	size_t nr_old;

	*found = false;
	if (!w->reuse)
		return 0;
	if (!w->reuse->pseudo_loaded) {
		load_old_pseudo(w, &w->reuse->old_pseudo, &w->reuse->nr_old_pseudo);
		w->reuse->pseudo_loaded = true;
	}
	old = w->reuse->old_pseudo;
	nr_old = w->reuse->nr_old_pseudo;
	for (size_t i = 0; i < nr_old; i++) {
		const struct pseudo_merge_section *s = bitmap_index_pseudo_merges(w->reuse->bi);
		struct gp_error ignored = GP_ERROR_INIT;
		struct ewah commits, objects;
		if (!old[i].usable || old[i].nr != nr ||
		    memcmp(old[i].bit_pos, bit_pos, nr * sizeof(uint32_t)))
			continue;
		if (pseudo_merge_section_merge(s, (uint32_t)i, &commits, &objects, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		bitmap_reset(bits);
		return reuse_or_ewah(w, bits, &objects, found);
	}
	return 0;
}

