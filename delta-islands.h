/*
 * delta-islands.h: git's delta islands (git-pack-objects(1), "DELTA
 * ISLANDS"; pack.island and pack.islandCore in git-config(1)).
 *
 * Each pack.island value is an extended regular expression, anchored at
 * the start of the ref name. A ref it matches puts every object
 * reachable from it into an island named by the expression's capture
 * groups that took part in the match (at most 14), joined with "-"
 * ("" without groups). When several expressions match one ref, the
 * last one in config order names its island. Expressions that give the
 * same name make one island.
 *
 * The rule pack-objects keeps: an object A may be stored as a delta
 * against a base B (found anew or reused from a stored pack) only when
 * B is in every island A is in. An object in no island may use any
 * base.
 *
 * pack.islandCore names an island whose objects are written first,
 * ahead of the rest of the pack; a name no ref produces changes
 * nothing.
 *
 * Objects are numbered by the caller (pack-objects' entry numbers);
 * islands are computed over those numbers only: marks travel from the
 * ref tips along tags, parents, root trees and tree entries, but only
 * through objects that have a number (the objects being packed).
 *
 * Memory: one 32-bit set number per object; each distinct set of
 * islands is stored once (nr_islands bits), so a repository with many
 * islands but few distinct combinations stays small.
 */
#ifndef GP_DELTA_ISLANDS_H
#define GP_DELTA_ISLANDS_H

#include "object.h"

struct gp_error;
struct odb;
struct repository;
struct delta_islands;

/*
 * Compile pack.island values (in config order), each as "^" followed
 * by the value. Errors: GP_EINVAL "failed to load island regex for
 * 'pack.island': ^<value>" when one does not compile.
 */
int delta_islands_new(struct delta_islands **out, const char *const *regexes, size_t nr,
		      struct gp_error *err);
void delta_islands_free(struct delta_islands *di);

/*
 * Put ref refname (pointing at oid) into the island its last matching
 * expression names. Returns whether one matched. O(expressions).
 */
bool delta_islands_add_ref(struct delta_islands *di, const char *refname,
			   const struct object_id *oid);
/* The number of islands the refs added so far fall into. */
size_t delta_islands_nr(const struct delta_islands *di);
/* pack.islandCore: name the core island (copied; NULL for none). */
void delta_islands_set_core(struct delta_islands *di, const char *name);

/*
 * From repo: the pack.island values and pack.islandCore of its config,
 * and every ref under refs/. *out is NULL when there is nothing to keep
 * apart: no pack.island, or no ref matches one. Errors: those of
 * delta_islands_new(), GP_EINVAL "missing value for 'pack.island'",
 * and those of reading refs.
 */
int delta_islands_load(struct delta_islands **out, struct repository *repo,
		       struct gp_error *err);

/*
 * The objects islands are computed over, numbered 0..nr-1 by the
 * caller: find gives an object's number (DELTA_ISLANDS_NONE when it has
 * none), oid the name of a number (a pointer valid during the call).
 */
#define DELTA_ISLANDS_NONE UINT32_MAX
struct delta_islands_objects {
	uint32_t nr;
	uint32_t (*find)(const struct object_id *oid, void *data);
	const struct object_id *(*oid)(uint32_t n, void *data);
	void *data;
};

/*
 * Compute the islands of objs, reading tags, commits and trees from
 * odb. Call once, after every ref was added; numbers from objs->nr up
 * are in no island. With progress, a "Propagating island marks" meter.
 * Errors: GP_ECORRUPT (an object on the way does not parse, or has
 * another type than what points at it says), and those of reading
 * objects. Cost: each tagged tip, commit and tree with a number is read
 * once (a tree again when a later path brings it new islands); about
 * 4 bytes per object, plus 24 per commit, while it runs.
 */
int delta_islands_resolve(struct delta_islands *di, struct odb *odb,
			  const struct delta_islands_objects *objs, bool progress,
			  struct gp_error *err);

/*
 * After delta_islands_resolve(), thread-safe (nothing changes any
 * more). Each is O(1) unless two different sets must be compared
 * (O(islands / 64)).
 */
/* Whether object base may be object target's delta base. */
bool delta_islands_may_base(const struct delta_islands *di, uint32_t target, uint32_t base);
/*
 * An order for the delta search: objects in more islands first, then
 * those with the same islands together. Every base target may use
 * sorts before target, or has the same islands.
 */
int delta_islands_cmp(const struct delta_islands *di, uint32_t a, uint32_t b);
/* Whether the object is in the core island. */
bool delta_islands_in_core(const struct delta_islands *di, uint32_t n);
bool delta_islands_has_core(const struct delta_islands *di);

#endif
