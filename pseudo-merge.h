/*
 * pseudo-merge.h: pseudo-merge bitmaps (Git's gitpacking(7), "Pseudo-merge
 * bitmaps", and technical/bitmap-format, "Pseudo-merge bitmaps"): the
 * bitmapPseudoMerge.<name>.* groups, the merges they make of the commits
 * ref tips point at, and the .bitmap section that stores them.
 *
 * A pseudo-merge is a set of commits and the objects reachable from any
 * of them, as an octopus merge of those commits would reach. A reader
 * whose walk includes every commit of one may OR in its objects at once.
 *
 * Grouping, as git 2.55 does it:
 *  - A ref belongs to group <name> when bitmapPseudoMerge.<name>.pattern
 *    (an extended regex, anchored at the start of the ref name) matches;
 *    its capture groups, joined by '-', split the group further. A ref's
 *    commit (tags peeled) is a candidate of each (group, captures) it
 *    falls in.
 *  - A candidate committed at or before stableThreshold is stable: the
 *    stable ones, oldest first, make merges of stableSize commits each
 *    (the last one may be smaller).
 *  - A candidate committed at or before threshold (and after
 *    stableThreshold) that has no bitmap of its own is unstable. Oldest
 *    first, they are cut into at most maxMerges merges whose sizes fall
 *    off as C * n^-decay (decay taken as a whole number, as git does;
 *    C makes the sizes add up to the candidates); a merge that would
 *    hold fewer than PSEUDO_MERGE_MIN_SIZE takes all that is left. Then
 *    sampleRate keeps about that share of each merge: every (1 / rate)th
 *    candidate, counting from the oldest, the fraction of 1 / rate
 *    dropped (as git).
 *  - Merges are laid out by group name, then by captures, stable ones
 *    first; an empty merge is not written.
 *
 * The section (after the commit bitmaps, before the lookup table; the
 * BITMAP_OPT_PSEUDO_MERGES flag says it is there; big-endian; offsets
 * are from the start of the .bitmap file):
 *   per merge    EWAH of its commits' bit positions, EWAH of its objects
 *   lookup       per commit in some merge, by rising bit position:
 *                4-byte bit position, 8-byte offset of its merge, or,
 *                top bit set, of its extended entry
 *   extended     per commit in several merges: 4-byte count, 8-byte
 *                offsets of the merges
 *   positions    8-byte offset of each merge, in merge order
 *   4            number of merges
 *   4            number of commits in the lookup table
 *   8            offset of the lookup table from the section's start
 *   8            size of the section, these 8 bytes included
 */
#ifndef GP_PSEUDO_MERGE_H
#define GP_PSEUDO_MERGE_H

#include "object.h"
#include "ewah/ewah.h"

struct gp_error;
struct config_set;
struct hashfile;
struct repository;

#define PSEUDO_MERGE_MIN_SIZE 8
#define PSEUDO_MERGE_METADATA_SIZE 24
#define PSEUDO_MERGE_LOOKUP_ROW_SIZE 12
#define PSEUDO_MERGE_EXTENDED_FLAG (UINT64_C(1) << 63)

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

struct pseudo_merge_group {
	char *name;
	char *pattern;          /* as configured; NULL: no pattern (group unused) */
	void *regex;            /* compiled "^<pattern>" (a regex_t) */
	uint64_t decay;         /* whole number: git drops a fraction */
	double sample_rate;     /* (0, 1] */
	int64_t threshold;      /* seconds since the epoch; 0 is "never" */
	int64_t stable_threshold;
	uint32_t max_merges;
	uint32_t stable_size;
};

struct pseudo_merge_config {
	struct pseudo_merge_group *groups; /* sorted by name */
	size_t nr, alloc;
	/* What git warns about (a value out of range, the default used). */
	char **warnings;
	size_t nr_warnings, alloc_warnings;
};

#define PSEUDO_MERGE_CONFIG_INIT { .groups = NULL }

/*
 * Read the bitmapPseudoMerge.* entries of cs, in order (the last value
 * of a key wins), dates relative to now. Groups without a pattern are
 * dropped. Errors: GP_EINVAL, with git's message: a value that is no
 * number or no date, a pattern that does not compile, a group whose
 * threshold is older than its stableThreshold.
 */
int pseudo_merge_config_read(struct pseudo_merge_config *cfg, const struct config_set *cs,
			     int64_t now, struct gp_error *err);
void pseudo_merge_config_release(struct pseudo_merge_config *cfg);

/*
 * Whether refname is in group g; if so, *captures is set to its capture
 * groups joined by '-' (empty without any).
 */
struct strbuf;
bool pseudo_merge_group_matches(const struct pseudo_merge_group *g, const char *refname,
				struct strbuf *captures);

/* One ref of the repository's that some group matched. */
struct pseudo_merge_ref {
	uint32_t group;         /* index in the config's groups */
	char *captures;
	struct object_id oid;   /* the ref's value, not peeled */
};

/*
 * Every (ref, group) match of repo's refs, sorted by group, then
 * captures, then ref name. Caller frees with pseudo_merge_refs_free().
 * Errors: those of refs_for_each().
 */
int pseudo_merge_collect_refs(struct repository *repo, const struct pseudo_merge_config *cfg,
			      struct pseudo_merge_ref **out, size_t *nr, struct gp_error *err);
void pseudo_merge_refs_free(struct pseudo_merge_ref *refs, size_t nr);

/* ------------------------------------------------------------------ */
/* Grouping                                                            */
/* ------------------------------------------------------------------ */

struct pseudo_merge_candidate {
	uint32_t item;      /* the caller's name for the commit */
	uint32_t tiebreak;  /* orders commits of one date (a bit position) */
	int64_t date;       /* committer date */
	bool bitmapped;     /* has a reachability bitmap of its own */
};

/* Merges as runs of items: merge i is items[ends[i - 1] .. ends[i]). */
struct pseudo_merge_plan {
	uint32_t *items;
	size_t nr_items, alloc_items;
	size_t *ends;
	size_t nr_merges, alloc_merges;
};

#define PSEUDO_MERGE_PLAN_INIT { .items = NULL }

/*
 * Append the merges group g makes of the candidates of one (group,
 * captures) (reordered here; no item twice). O(nr log nr).
 */
void pseudo_merge_plan_add(struct pseudo_merge_plan *plan, const struct pseudo_merge_group *g,
			   struct pseudo_merge_candidate *cands, size_t nr);
void pseudo_merge_plan_release(struct pseudo_merge_plan *plan);

/* ------------------------------------------------------------------ */
/* The .bitmap section                                                 */
/* ------------------------------------------------------------------ */

struct pseudo_merge_bitmaps {
	struct ewah commits;  /* bit positions of its commits */
	struct ewah objects;  /* bit positions of what they reach */
};

/*
 * Write the section for merges[0 .. nr) at f's current position (nr >
 * 0). Errors: GP_EINVAL (a merge without commits, or too large a
 * bitmap), GP_ENOMEM.
 */
int pseudo_merge_write(struct hashfile *f, const struct pseudo_merge_bitmaps *merges, size_t nr,
		       struct gp_error *err);

/* A parsed section; borrows the mapped file. */
struct pseudo_merge_section {
	const unsigned char *map;
	const char *name;        /* the file, for messages */
	uint64_t start;          /* the section, in the file */
	uint64_t lookup_ofs, extended_ofs, positions_ofs;
	uint32_t nr_merges, nr_commits;
};

/*
 * Parse and check the section that ends at end (the lookup table or
 * name-hash cache follows) and does not begin before min_start (the end
 * of the type bitmaps), of a bitmap over nr_objects objects: every
 * offset, every EWAH, the lookup table's order. Errors: GP_ECORRUPT,
 * naming name and the offset.
 */
int pseudo_merge_section_parse(struct pseudo_merge_section *s, const unsigned char *map,
			       uint64_t min_start, uint64_t end, uint32_t nr_objects,
			       const char *name, struct gp_error *err);

/*
 * The merges that hold the commit at bit_pos: up to max of their
 * indices into merges[], *nr set to how many there are (0 when none;
 * may exceed max). O(log commits + its merges' count).
 */
void pseudo_merge_section_for_commit(const struct pseudo_merge_section *s, uint32_t bit_pos,
				     uint32_t *merges, size_t max, size_t *nr);

/* Where merge i (< nr_merges) starts in the file. */
uint64_t pseudo_merge_section_offset(const struct pseudo_merge_section *s, uint32_t i);

/*
 * Merge i's two bitmaps, borrowing the map (ewah_view). Errors:
 * GP_EINVAL (no such merge).
 */
int pseudo_merge_section_merge(const struct pseudo_merge_section *s, uint32_t i,
			       struct ewah *commits, struct ewah *objects, struct gp_error *err);

#endif
