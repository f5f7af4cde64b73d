/*
 * pack-bitmap-write-internal.h: what the files of the bitmap writer
 * share and nobody else needs. The writer (pack-bitmap-write.h is its
 * API) is split along its steps:
 *
 *   pack-bitmap-write.c  the writer's state, the oid -> bit_pos table,
 *                        object types, building, pseudo-merges, XOR
 *                        compression and the file
 *   bitmap-select.c      the commit graph read from the tips, and which
 *                        commits get a bitmap (bitmap-select.h)
 *   bitmap-trees.c       every tree decoded and resolved once, in
 *                        threads; name hashes (bitmap-trees.h)
 *   bitmap-reuse.c       taking over the repository's current bitmap
 *                        (bitmap-reuse.h)
 *
 * Positions are named by space as in pack-bitmap.h: bit_pos in the
 * order being written, index_pos by name; a "commit index" is a
 * position in struct bitmap_writer's commits.
 */
#ifndef GP_PACK_BITMAP_WRITE_INTERNAL_H
#define GP_PACK_BITMAP_WRITE_INTERNAL_H

#include "object.h"

struct bitmap;
struct bitmap_order;
struct bitmap_write_opts;
struct ewah;
struct gp_error;
struct odb;
struct pack_reader;
struct packed_git;
struct pseudo_merge_bitmaps;

#define NO_POS UINT32_MAX
#define MAX_THREADS 16
#define OUTSIDE_POS (UINT32_MAX - 1) /* bitmap_select_peel_tip(): not in the order */

/*
 * oid -> bit_pos. A slot holds the name's first 8 bytes, so a probe
 * touches one cache line; the whole name is then compared with the
 * .idx or MIDX. The hash is salted per process, so names chosen to
 * collide cannot make probing quadratic.
 */
struct pos_slot {
	uint64_t key;
	uint32_t index_pos; /* NO_POS: empty */
	uint32_t bit_pos;
};

struct pos_table {
	struct pos_slot *slots;   /* NULL until writer_table_build() */
	size_t mask;
	uint64_t salt;
	size_t rawsz;
	/*
	 * The table holds index_pos from..nr only: a layer on the old chain
	 * leaves the old objects to the order's own lookup (which a miss
	 * then asks), so that building it follows the new objects.
	 */
	uint32_t from;
};

/* Consecutive bits held by one pack, by rising offset. */
struct pack_range {
	struct packed_git *pack;
	uint32_t start, end;
};

struct wcommit {
	uint32_t bit_pos;
	uint32_t tree_pos;
	uint64_t date;
	uint32_t parents_start, nr_parents; /* in writer.parents */
	uint32_t topo;     /* parents before children */
	uint32_t selected; /* index in writer.selected, or NO_POS */
	uint32_t epoch;    /* last build that queued it */
	uint32_t old_row;  /* its entry in the reused bitmap, or NO_POS */
	bool is_tip, preferred;
	/*
	 * An old commit whose old bitmap maps whole: read without its
	 * parents (nr_parents 0), its bitmap stands for everything below.
	 */
	bool stub;
};

struct reuse;
struct arena_chunk;

struct bitmap_writer {
	struct bitmap_order *order;
	struct odb *odb;
	const struct bitmap_write_opts *opts;
	struct gp_error *err;
	int algo;
	uint32_t nr;
	uint8_t *types;            /* by bit_pos */
	struct pos_table table;
	uint32_t *commit_of_bit;   /* bit_pos -> commit index, NO_POS */
	struct wcommit *commits;
	size_t nr_commits, alloc_commits;
	uint32_t nr_tip_commits;   /* distinct commits the tips name, in the order */
	uint32_t *parents;         /* bit_pos while reading, then commit index */
	size_t nr_parents, alloc_parents;
	uint32_t *selected;        /* commit indices, in file order */
	size_t nr_selected, alloc_selected;
	struct ewah *bitmaps;      /* by index in selected */
	uint32_t *hashes;          /* by bit_pos */
	struct pack_reader *reader;  /* for the main thread */
	int threads;
	/*
	 * Each tree's entries, resolved once: kids[bit_pos][0] is their
	 * number, then each entry's bit_pos, KID_TREE set for subtrees.
	 */
	uint32_t **kids;
	/*
	 * pack order within each pack of the order (offsets by bit_pos);
	 * below located_from, not read (the types came from the old
	 * layers' bitmaps): writer_locate() asks the order.
	 */
	uint64_t *ofs;
	uint32_t located_from;
	struct pack_range *ranges;
	size_t nr_ranges, alloc_ranges;
	/* the trees, and the delta chains between them */
	uint32_t *tree_bits;
	size_t nr_trees, alloc_trees;
	uint32_t *child_start;       /* children of tree t: [child_start[t], child_start[t + 1]) */
	uint32_t *children;
	/* the memory kids point into (bitmap-trees.c) */
	struct arena_chunk **arena;
	size_t nr_arena;
	struct reuse *reuse;         /* the repository's bitmap, when worth reusing */
	uint32_t next_epoch;         /* for struct wcommit's epoch */
	struct pseudo_merge_bitmaps *pseudo;
	size_t nr_pseudo;
	uint32_t nr_pseudo_reused;
};

#define KID_TREE 0x80000000u

static inline uint64_t writer_oid_key(const unsigned char *hash)
{
	uint64_t key;
	memcpy(&key, hash, sizeof(key));
	return key;
}

static inline size_t writer_slot_of(const struct pos_table *t, uint64_t key)
{
	return (size_t)(((key ^ t->salt) * 0x9e3779b97f4a7c15ull) >> 20) & t->mask;
}

/*
 * Build the oid -> bit_pos table over index_pos from..nr (from is 0 or,
 * for a layer whose old positions are the old chain's, base_objects),
 * unless built already. O(nr - from).
 */
void writer_table_build(struct bitmap_writer *w, uint32_t from);

/* The bit_pos of a name (rawsz bytes, or an oid); false when not in the order. */
bool writer_find_raw(const struct bitmap_writer *w, const unsigned char *hash,
		     uint32_t *bit_pos);
bool writer_find(const struct bitmap_writer *w, const struct object_id *oid,
		 uint32_t *bit_pos);
/* Prefetch the slot a lookup of hash starts at. */
void writer_prefetch(const struct bitmap_writer *w, const unsigned char *hash);

/*
 * Where the object at bit_pos lies, from the runs found while typing
 * (below located_from, from the order: *pack may then be NULL, as
 * bitmap_order_locate() says).
 */
void writer_locate(const struct bitmap_writer *w, uint32_t bit_pos, struct packed_git **pack,
		   uint64_t *ofs);
/*
 * Read the object at bit_pos, which must be of type want, through
 * reader (writer_read: the main thread's, errors into w->err). The
 * caller frees *data. Errors: those of pack_read_object(), GP_ECORRUPT.
 */
int writer_read_with(struct bitmap_writer *w, struct pack_reader *reader, uint32_t bit_pos,
		     enum object_type want, unsigned char **data, size_t *size,
		     struct gp_error *err);
int writer_read(struct bitmap_writer *w, uint32_t bit_pos, enum object_type want,
		unsigned char **data, size_t *size);
/* GP_ENOTFOUND, with a message naming oid: reachable but outside the order. */
int writer_not_in_order(struct bitmap_writer *w, const struct object_id *oid, const char *what);
/* Give back the pages of the packs touched so far (see pack_drop_pages()). */
void writer_drop_pages(struct bitmap_writer *w);
/* bitmap_set(), GP_ENOMEM into w->err on failure. */
int writer_set_bit(struct bitmap_writer *w, struct bitmap *bits, uint32_t bit_pos);

/*
 * Sorting lists of indices by keys computed up front: the comparator
 * needs no state, so two writers may run at once (no static writer).
 * writer_sort_keyed() sorts keys, writes their items to items in that
 * order, and frees keys.
 */
struct keyed {
	uint64_t major, minor;
	uint32_t item;
};
void writer_sort_keyed(uint32_t *items, struct keyed *keys, size_t nr);

/* For qsort() over uint32_t. */
int writer_cmp_u32(const void *a, const void *b);

/* Name hashes are stored plus one while they are gathered, so that 0 means "none yet". */
static inline uint32_t writer_stored_hash(uint32_t hash)
{
	return hash + 1 ? hash + 1 : UINT32_MAX;
}

#endif
