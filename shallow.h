/*
 * shallow.h: shallow repositories (Documentation/technical/shallow.adoc
 * in git), and the shallow computations of upload-pack
 * (gitprotocol-pack.adoc "Packfile Negotiation", gitprotocol-v2.adoc
 * "fetch": deepen, deepen-relative, deepen-since, deepen-not,
 * shallow-info).
 *
 * The shallow file holds one hex object id per line, each a commit whose
 * parents the repository does not have, so that walks and connectivity
 * checks must stop there.
 *
 * A fetch that asks for a depth (or a date, or refs to stop at) makes
 * some commits the client's new shallow boundary ("shallow <oid>") and
 * may deepen the client's current boundary ("unshallow <oid>": the
 * commit's parents will be sent). shallow_compute() decides both lists
 * as stock git upload-pack does, in the order git sends them.
 */
#ifndef GP_SHALLOW_H
#define GP_SHALLOW_H

#include "util.h"

struct gp_error;
struct object_id;
struct odb;
struct oid_array;
struct oidset;
struct repository;

/*
 * Add the commits of the repository's shallow file (repo_shallow_path())
 * to out. A missing file is an empty list. Errors: GP_ECORRUPT for a
 * line that is not an object id ("bad shallow line: ..."), GP_EIO.
 */
int shallow_read(struct repository *repo, struct oidset *out, struct gp_error *err);

/* "deepen 2147483647": what git fetch --unshallow sends. */
#define INFINITE_DEPTH 0x7fffffff

/*
 * One fetch's shallow request, as upload-pack parsed it. All arrays are
 * borrowed for the call.
 */
struct shallow_request {
	/*
	 * The objects wanted ("want" lines, and the ids of "want-ref"
	 * lines), each once (a repeat is ignored, as git ignores it).
	 * Annotated tags are peeled; what peels to a tree or a blob takes
	 * no part.
	 */
	const struct object_id *wants;
	size_t nr_wants;
	/*
	 * The client's "shallow" lines, in the order received. Ids the
	 * repository lacks are ignored, as git ignores them; a repeat
	 * counts once.
	 */
	const struct object_id *client_shallow;
	size_t nr_client_shallow;
	/*
	 * The serving repository's own shallow file (shallow_read()), its
	 * commits walked as parentless; NULL when the repository has no
	 * shallow file. An empty set stands for an empty file, which git
	 * also takes for a shallow repository.
	 */
	const struct oidset *repo_shallow;
	/* "deepen <n>" (n >= 1); 0: none; INFINITE_DEPTH: no limit. */
	int depth;
	/* "deepen-relative": depth counts from the client's boundary. */
	bool relative;
	/* "deepen-since <since>" (seconds since the epoch; 0 is valid). */
	bool has_since;
	uint64_t since;
	/* "deepen-not <ref>" lines, the refs resolved by the caller. */
	const struct object_id *not_tips;
	size_t nr_not;
};

#define SHALLOW_REQUEST_INIT { .wants = NULL }

/*
 * Decide the "shallow" and "unshallow" lines of a fetch, as git 2.55's
 * upload-pack does, and append them to shallow_out and unshallow_out
 * (both initialised by the caller for algo) in the order git sends
 * them. upload-pack sends every "shallow" line, then every "unshallow"
 * line.
 *
 * What decides them:
 *
 *  - depth (without relative): the commits at distance depth - 1 from
 *    the nearest want (the wants themselves at depth 1) become the new
 *    boundary; a commit reached by a shorter path too is not shallow,
 *    and the walk goes on through it. A commit of the repository's own
 *    shallow file reached within the depth is boundary as well. Client
 *    shallow commits inside the depth are unshallowed; those on the
 *    boundary stay shallow and are not announced again. The order is
 *    git's depth-first walk, reversed: wants in order, a commit's last
 *    parent followed first, the other parents in turn from the
 *    second-to-last. A commit of the repository's shallow file reached
 *    first by a longer path and then by a shorter one is announced
 *    twice, as git announces it.
 *
 *  - INFINITE_DEPTH: when the repository is not shallow, every client
 *    shallow commit is unshallowed (even one no want reaches) and
 *    nothing is announced; otherwise as above, without a limit.
 *
 *  - relative: as git 2.55 (not 2.39, which started from the client's
 *    shallow commits reachable from the refs): the depth counts from
 *    the nearest client shallow commit reachable from the wants, so
 *    the walk above runs with depth plus that commit's depth. No
 *    client shallow commit reachable: no lines at all.
 *
 *  - has_since, not_tips: git's "rev-list --max-age=<since> <wants>
 *    --not <not_tips>" over the repository (its shallow file applied,
 *    the client's not); each listed commit with a parent that is not
 *    listed is a new boundary, in rev-list order, unless the client
 *    has it shallow already; client shallow commits listed but not on
 *    the boundary are unshallowed.
 *
 *  - nothing asked (no depth, since or not) in a shallow repository:
 *    what protocol v2 sends then, the walk without a limit where the
 *    client's shallow commits are boundaries as well: the repository's
 *    own shallow commits the client will receive are announced,
 *    nothing is unshallowed. Without a repository shallow file (or for
 *    protocol v0, which sends nothing then) both lists stay empty.
 *
 * What the caller does with them, as git does: the pack walk treats the
 * client's shallow commits (the unshallowed ones too), the new
 * boundary and the repository's own shallow commits as parentless; for
 * each unshallowed commit its parents are added to the wants and the
 * commit itself counts as something the client has (an edge of a thin
 * pack). When any shallow line was received or sent, git's pack walk
 * is also "edge-aggressive" (pack-objects --shallow; revision.h's
 * rev_walk_set_edge_aggressive()).
 *
 * git's quirks, kept: with has_since or not_tips in a shallow repository
 * a listed commit of its shallow file has no parents and so is not
 * announced (the client then lacks parents it was not told about), and
 * a client shallow commit that is also in it is unshallowed although
 * its parents are absent (git's pack-objects then fails). Not kept:
 * relative with INFINITE_DEPTH (or with nothing else asked) in a
 * shallow repository overflows an int in git 2.55, which then makes
 * every want a boundary commit; here the depth stays unlimited.
 *
 * Errors (GP_EPROTO, git's words): depth with has_since or not_tips
 * ("git upload-pack: deepen and deepen-since (or deepen-not) cannot be
 * used together"); has_since or not_tips selecting no commit ("no
 * commits selected for shallow requests"); a client shallow object that
 * is not a commit ("invalid shallow object <oid>"). GP_EINVAL for a
 * negative depth; GP_ENOTFOUND, GP_ECORRUPT for a commit the walks need
 * that is missing or damaged.
 *
 * Cost: memory for each commit reached (about 80 bytes); every walk is
 * iterative, so a history of any depth is fine. Time: each commit read
 * once, walked again each time a shorter path to it is found (as in
 * git); has_since and not_tips read the listed commits twice.
 */
int shallow_compute(struct odb *odb, int algo, const struct shallow_request *req,
		    struct oid_array *shallow_out, struct oid_array *unshallow_out,
		    struct gp_error *err);

#endif
