/*
 * replace-object.h: replacement objects (git-replace(1)). A ref
 * refs/replace/<oid> says "when asked for <oid>, read the object the
 * ref points at instead", while the object keeps its own name. Readers
 * that honour replacements (cat-file on names given to it, not
 * --batch-all-objects) ask this map which object to read.
 *
 * Replacement is off when GIT_NO_REPLACE_OBJECTS is set (git sets it
 * for --no-replace-objects) or core.useReplaceRefs is false; the ref
 * namespace is $GIT_REPLACE_REF_BASE when set, else refs/replace/.
 * Names under it that are not full hex object ids are ignored.
 */
#ifndef GP_REPLACE_OBJECT_H
#define GP_REPLACE_OBJECT_H

#include "object.h"

struct gp_error;
struct repository;
struct replace_map;

/* A chain of replacements longer than this is an error, as in git. */
#define REPLACE_MAX_DEPTH 5

/*
 * Read the replace refs of repo (none when replacement is off: *out is
 * then an empty map). Errors: those of refs_for_each() and of a bad
 * core.useReplaceRefs.
 */
int replace_map_load(struct replace_map **out, struct repository *repo,
		     struct gp_error *err);
void replace_map_free(struct replace_map *map);
/* Whether the map replaces anything at all. */
bool replace_map_is_empty(const struct replace_map *map);

/*
 * The object to read for oid, into *out: oid itself when it is not
 * replaced, else the end of its chain of replacements. Errors:
 * GP_ECORRUPT ("replace depth too high for object <oid>"). O(log n)
 * per step.
 */
int replace_map_lookup(const struct replace_map *map, const struct object_id *oid,
		       struct object_id *out, struct gp_error *err);

#endif
