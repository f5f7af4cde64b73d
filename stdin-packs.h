/*
 * stdin-packs.h: the objects of named packs, as git pack-objects
 * --stdin-packs[=follow] chooses them (git-pack-objects(1)); git's
 * geometric repack names its packs this way.
 *
 * The input names packs by basename ("pack-1234abcd.pack"), each line
 * one of:
 *
 *   pack-X.pack    included: its objects go into the new pack;
 *   ^pack-X.pack   excluded (closed): its objects stay out, and its
 *                  history is taken to be complete;
 *   !pack-X.pack   excluded-open (follow mode only; otherwise the "!"
 *                  is part of the name): its objects stay out, but
 *                  what they reach outside the excluded packs goes in.
 *
 * What goes in: every object of the included packs (newest pack
 * first, each in pack order) that no excluded pack holds, then with
 * --unpacked the loose objects likewise. Then a walk runs from the
 * commits among them (those of !-packs and loose commits too) through
 * their history and trees, tolerating missing objects. Commits in
 * ^-packs are not shown (their trees not entered) but their parents
 * are followed; when any !-pack is named, a ^-pack commit or tree ends
 * the walk there instead. What the walk reaches gives the objects
 * added before their name hash (the path's, so that the delta search
 * pairs objects as a walk of history would); in follow mode what it
 * reaches that is stored elsewhere (in packs not named, or loose) goes
 * in too, unless an excluded pack holds it, or it is a missing blob.
 *
 * Cost: the objects of the packs enumerated, plus the walk: the
 * history below the tips (commits only, through ^-packs; git's cost
 * too), and the trees of the commits shown. When every commit that
 * could be shown is a tip (every pack of the odb named, --unpacked,
 * no alternates: a geometric repack's case), the walk ends with the
 * last tip, so that it costs what was pushed, not the history.
 *
 * Throughout, an object is left out when git's other options say so:
 * --local (an alternate has it), --honor-pack-keep and --keep-pack
 * (a kept pack has it; --keep-pack packs count as ^-packs for the
 * walk too), --incremental (any pack has it). With
 * --exclude-promisor-objects, a promisor pack may not be included and
 * the walk passes no object of a promisor pack.
 */
#ifndef GP_STDIN_PACKS_H
#define GP_STDIN_PACKS_H

#include "util.h"

struct gp_error;
struct odb;
struct pack_objects;

enum stdin_pack_kind {
	STDIN_PACK_INCLUDE = 1 << 0,
	STDIN_PACK_EXCLUDE_CLOSED = 1 << 1,   /* "^" */
	STDIN_PACK_EXCLUDE_OPEN = 1 << 2,     /* "!" with follow */
};

/* The packs named, each once with the kinds it was named with. */
struct stdin_packs;

void stdin_packs_new(struct stdin_packs **out);
void stdin_packs_free(struct stdin_packs *sp);
/* Name a pack (a basename such as "pack-X.pack") as kind. */
void stdin_packs_add(struct stdin_packs *sp, const char *name, enum stdin_pack_kind kind);
/*
 * One line of input, without its newline; empty lines are ignored. A
 * "!" marks an excluded-open pack only when follow is set.
 */
void stdin_packs_add_line(struct stdin_packs *sp, const char *line, bool follow);

typedef void stdin_packs_warn_fn(const char *msg, void *data);

struct stdin_packs_opts {
	bool follow;            /* --stdin-packs=follow */
	bool unpacked;          /* --unpacked: the loose objects too */
	bool incremental;       /* --incremental: nothing that is packed */
	bool local;             /* --local */
	bool honor_pack_keep;   /* --honor-pack-keep */
	const char *const *keep_packs;  /* --keep-pack names ("pack-X.pack") */
	size_t nr_keep_packs;
	bool exclude_promisor;  /* --exclude-promisor-objects */
	/* Loose objects that cannot be read are skipped, with a warning here. */
	stdin_packs_warn_fn *warn;
	void *warn_data;
};

/* git's trace2 counters of the same names. */
struct stdin_packs_stats {
	uint64_t found;   /* objects met in the named packs (first time each) */
	uint64_t hints;   /* objects added before that the walk gave a name */
};

/*
 * Add to po (writing from odb) what sp and opts choose (see above).
 * sp's names are matched with odb's packs. Objects met in a
 * named pack are read from that pack. The walk never fetches missing
 * objects (a partial clone's odb hook is not called).
 *
 * Errors: GP_ENOTFOUND "could not find pack '<name>'" (any pack named
 * that the repository and its alternates lack; with several, the one
 * git would name), GP_EINVAL "packfile <path> is a promisor but
 * --exclude-promisor-objects was given", GP_EIO "packfile <path> cannot
 * be accessed" (an included pack that does not open), GP_ECORRUPT.
 */
int stdin_packs_add_objects(struct stdin_packs *sp, struct odb *odb, struct pack_objects *po,
			    const struct stdin_packs_opts *opts,
			    struct stdin_packs_stats *stats, struct gp_error *err);

#endif
