/*
 * revision.h: walking history as git rev-list does.
 *
 * Tips are added as interesting or uninteresting (^rev, --not). Tags
 * are peeled to what they point at. The commit walk pops commits newest
 * first (committer date; ties in the order they were queued). When some
 * tip is uninteresting the walk is "limited": it runs until only
 * uninteresting commits remain queued (plus a few more, against clock
 * skew), marking ancestors of uninteresting commits uninteresting, and
 * then shows the interesting commits in the order they were popped.
 *
 * With REV_OBJECTS, the trees and blobs of the shown commits follow the
 * commits, as in git: the trees of the shown commits' uninteresting
 * parents are marked uninteresting first (git's "edges"), then each
 * shown commit's tree is walked depth first, in tree order, showing
 * every tree and blob not seen before with its path. Annotated tags and
 * trees or blobs named as tips come before those trees.
 *
 * Costs: memory per object reached (about 64 bytes, more for commits);
 * time linear in the objects read.
 */
#ifndef GP_REVISION_H
#define GP_REVISION_H

#include "object.h"

struct gp_error;
struct odb;
struct rev_walk;

enum rev_walk_flags {
	REV_OBJECTS = 1 << 0, /* trees and blobs too (--objects) */
};

struct oidset;

/*
 * git's --objects-edge-aggressive (pack-objects --shallow): the trees
 * of every uninteresting commit tip count as what the receiver has, not
 * only those of the shown commits' parents (a shallow receiver's new
 * boundary has no parents to tell).
 */
void rev_walk_set_edge_aggressive(struct rev_walk *w);
/*
 * git's sparse tree walk (pack-objects --sparse, pack.useSparse): the
 * edges' trees are marked uninteresting only along paths where the
 * shown commits changed something, rather than whole. Cheaper on a big
 * tree; may send an object again that sits at an unchanged path.
 */
void rev_walk_set_sparse(struct rev_walk *w, bool sparse);
/*
 * Blobs of the walked trees are shown without asking the object store
 * whether they exist (under REV_MISSING_ERROR): for a caller that reads
 * each one anyway, as pack-objects does, and reports a missing one then.
 */
void rev_walk_set_blobs_unchecked(struct rev_walk *w);
/*
 * oid is neither shown nor walked through; a commit passes that on to
 * its parents, as an uninteresting tip does (git's
 * --exclude-promisor-objects marks the objects of promisor packs so).
 * Unlike a tip, nothing else is marked: its tree may still be shown
 * from a commit that is.
 */
void rev_walk_mark_uninteresting(struct rev_walk *w, const struct object_id *oid);

struct commit_graph;
/*
 * Read commits from graph (commit-graph.h; borrowed, it must outlive
 * the walk) where it has them: parents, root tree and date without
 * inflating the commit. Call before rev_walk_run().
 */
void rev_walk_set_commit_graph(struct rev_walk *w, const struct commit_graph *graph);

/*
 * Commits in shallow are walked as if they had no parents (a shallow
 * repository's boundary, and upload-pack's --shallow lines). The set is
 * borrowed and must outlive the walk. Call before rev_walk_run().
 */
void rev_walk_set_shallow(struct rev_walk *w, const struct oidset *shallow);

/*
 * git's --max-age=<date> (upload-pack's deepen-since): commits whose
 * committer date is older than date (seconds since the epoch) are not
 * shown. Without uninteresting tips the walk also stops there (their
 * parents are not followed, as in git's unlimited walk); with some, they
 * become uninteresting, and so does all they reach. Call before
 * rev_walk_run().
 */
void rev_walk_set_max_age(struct rev_walk *w, uint64_t date);

struct walk_filter;
enum rev_filter_flags {
	REV_FILTER_PROVIDED = 1 << 0, /* the tips too (--filter-provided-objects) */
	REV_FILTER_OMITS = 1 << 1,    /* remember what is left out (--filter-print-omitted) */
};
/*
 * Leave out what filter (walk-filter.h; borrowed, it must outlive the
 * walk) leaves out, deciding object by object in walk order as git
 * does. Objects named as tips are always shown, unless
 * REV_FILTER_PROVIDED: what is below them is filtered. Call before
 * rev_walk_run().
 */
void rev_walk_set_filter(struct rev_walk *w, const struct walk_filter *filter, unsigned flags);
/*
 * After rev_walk_run() with REV_FILTER_OMITS: each object the filter
 * left out (and the walk did not show after all), once, in no
 * particular order. Returns fn's first non-zero value.
 */
typedef int rev_omit_fn(const struct object_id *oid, void *data);
int rev_walk_for_each_omitted(struct rev_walk *w, rev_omit_fn *fn, void *data);

/* What a walk does when an object it reaches is missing (--missing). */
enum rev_missing {
	REV_MISSING_ERROR = 0,    /* stop with GP_ENOTFOUND */
	REV_MISSING_ALLOW,        /* leave it out silently */
	REV_MISSING_PRINT,        /* leave it out, report it to missing_fn */
};
typedef void rev_missing_fn(const struct object_id *oid, void *data);
void rev_walk_set_missing(struct rev_walk *w, enum rev_missing how,
			  rev_missing_fn *fn, void *data);

/*
 * show() is called for each object in output order; path is NULL for
 * commits, the tag's own name (its "tag" header) for annotated tags,
 * the name given to rev_walk_add_tip() for tree and blob tips, and the
 * path (the root tree: "") for trees and blobs below. Returning non-zero stops the walk, and
 * rev_walk_run() returns that value.
 */
typedef int rev_show_fn(const struct object_id *oid, enum object_type type,
			const char *path, void *data);

int rev_walk_new(struct rev_walk **out, struct odb *odb, int algo);
void rev_walk_free(struct rev_walk *w);

/*
 * Add a tip. name is the path shown for a tree or blob tip under
 * REV_OBJECTS (git shows the <path> of "<rev>:<path>", else ""). Errors: GP_ENOTFOUND (missing object), GP_ECORRUPT.
 */
int rev_walk_add_tip(struct rev_walk *w, const struct object_id *oid,
		     bool uninteresting, const char *name, struct gp_error *err);

/* Errors: GP_ENOTFOUND (a missing object), GP_ECORRUPT, or show()'s value. */
int rev_walk_run(struct rev_walk *w, unsigned flags, rev_show_fn *show,
		 void *data, struct gp_error *err);

/*
 * After rev_walk_run() with REV_OBJECTS: the root trees of the
 * uninteresting commits that are parents of shown commits (git's
 * "edges"), which a thin pack may use as delta bases; each once, at most
 * max of them (0: all), in the order met.
 */
typedef int rev_edge_fn(const struct object_id *tree, void *data);
int rev_walk_for_each_edge(struct rev_walk *w, size_t max, rev_edge_fn *fn, void *data);

#endif
