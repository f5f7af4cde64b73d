/*
 * walk-filter.h: what an object filter (object-filter.h; git's
 * "--filter=<spec>" of rev-list, pack-objects and partial clone) leaves
 * out of an object walk, decided object by object as git decides it, so
 * that a filtered rev-list or pack holds exactly what git's would.
 *
 * The walk (revision.c) tells the filter what it meets, in walk order:
 * a commit, a tag, entering a tree at a path, a blob at a path, leaving
 * a tree. The filter answers with WF_SHOW (list it), WF_MARK_SEEN (never
 * offer it again) and, entering a tree, WF_SKIP_TREE (do not walk its
 * entries). What was not marked seen may be offered again, reached by
 * another path, and the answer may change then. Objects the user named
 * are not offered: they are always shown.
 *
 *   blob:none      every blob left out (and marked seen)
 *   blob:limit=n   blobs of n bytes or more left out; a blob that is not
 *                  stored here is shown, for the walk to report missing
 *   tree:n         trees and blobs at depth n or more left out, a root
 *                  tree being at depth 0 (depth counts the trees
 *                  entered through this filter). Nothing is marked
 *                  seen: a tree is entered again when met higher up
 *                  than before (and skipped when met no higher)
 *   sparse:oid=B   the blob B holds a sparse-checkout pattern list,
 *                  read as a gitignore-style list (path-patterns.h;
 *                  cone-mode patterns are taken as such patterns too,
 *                  as git does). A blob is shown when its path is
 *                  matched; a path the list does not decide takes the
 *                  decision of its directory, the top directory's
 *                  default being not matched. Every tree is shown,
 *                  once; a tree below which a blob was left out is
 *                  walked again wherever it turns up, since its blobs
 *                  may be wanted at another path
 *   object:type=T  only objects of type T shown; trees not walked at all
 *                  when T is commit or tag
 *   combine:...    shown when every sub-filter shows it, marked seen
 *                  when every one marks it seen, its entries skipped
 *                  when every one skips them; each sub-filter keeps its
 *                  own record of what it has seen
 *
 * Commits and tags are shown by all but object:type.
 */
#ifndef GP_WALK_FILTER_H
#define GP_WALK_FILTER_H

#include "object.h"

struct gp_error;
struct object_filter;
struct odb;
struct repository;
struct strbuf;

/* A filter ready to apply: sparse:oid blobs resolved and parsed. */
struct walk_filter;

/*
 * Prepare the parsed filter spec (which must not be OBJECT_FILTER_NONE)
 * in repo, reading objects from odb. Errors, in git's words:
 *  - GP_ENOTFOUND "unable to access sparse blob in '<name>'": a
 *    sparse:oid name that does not resolve;
 *  - GP_EINVAL "unable to parse sparse filter data in <hex>": it names
 *    something that is not a blob, or nothing stored;
 *  - GP_ENOMEM, with the same message, for a blob over git's limit
 *    (PATH_PATTERNS_MAX_SIZE); warning (when not NULL) then receives
 *    the warning git prints first.
 * Cost: one read of each sparse:oid blob; the patterns stay in memory
 * (about the blob's size) until walk_filter_free().
 */
int walk_filter_new(struct walk_filter **out, const struct object_filter *spec,
		    struct repository *repo, struct odb *odb, struct strbuf *warning,
		    struct gp_error *err);
void walk_filter_free(struct walk_filter *wf);

/* One walk's decisions so far. */
struct walk_filter_state;

/*
 * Start applying wf (borrowed: it must outlive the state) to one walk,
 * reading sizes from odb. With collect_omits, what is left out is
 * remembered, for walk_filter_for_each_omitted().
 */
struct walk_filter_state *walk_filter_start(const struct walk_filter *wf, struct odb *odb,
					    bool collect_omits);
void walk_filter_state_free(struct walk_filter_state *st);

enum walk_filter_situation {
	WF_COMMIT,
	WF_TAG,
	WF_BEGIN_TREE,
	WF_END_TREE,      /* after the entries (or in place of them, when skipped) */
	WF_BLOB,
};

enum walk_filter_result {
	WF_SHOW = 1 << 0,
	WF_MARK_SEEN = 1 << 1,
	WF_SKIP_TREE = 1 << 2,
};

/*
 * The decision about oid, met in situation at path[0..path_len) (its
 * last component from path + basename_ofs; "" for a root tree; the
 * walk passes for WF_END_TREE what it passed for WF_BEGIN_TREE). Every
 * WF_BEGIN_TREE must be followed by its WF_END_TREE, properly nested.
 * Returns enum walk_filter_result bits. Cost: O(1) but for sparse:oid,
 * which matches the path against the patterns, and blob:limit, which
 * looks up the blob's size.
 */
unsigned walk_filter_decide(struct walk_filter_state *st, enum walk_filter_situation situation,
			    const struct object_id *oid, const char *path, size_t path_len,
			    size_t basename_ofs);

/*
 * After the walk, with collect_omits: each object left out and not
 * shown later, once, in no particular order. Stops at, and returns,
 * fn's first non-zero value.
 */
typedef int walk_filter_omit_fn(const struct object_id *oid, void *data);
int walk_filter_for_each_omitted(struct walk_filter_state *st, walk_filter_omit_fn *fn,
				 void *data);

#endif
