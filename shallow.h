/*
 * shallow.h: the shallow file of a shallow repository
 * (Documentation/technical/shallow.adoc in git): one hex object id per
 * line, each a commit whose parents the repository does not have, so
 * that walks and connectivity checks must stop there.
 */
#ifndef GP_SHALLOW_H
#define GP_SHALLOW_H

#include "util.h"

struct gp_error;
struct oidset;
struct repository;

/*
 * Add the commits of the repository's shallow file (repo_shallow_path())
 * to out. A missing file is an empty list. Errors: GP_ECORRUPT for a
 * line that is not an object id ("bad shallow line: ..."), GP_EIO.
 */
int shallow_read(struct repository *repo, struct oidset *out, struct gp_error *err);

#endif
