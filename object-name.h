/*
 * object-name.h: turning the names people type into object ids, as
 * gitrevisions(7) describes them.
 *
 * Supported:
 *  - a full hex id (either case; its object need not exist);
 *  - an abbreviated hex id of at least OBJECT_NAME_MIN_ABBREV digits,
 *    unique among the objects of the packs and of the loose directory;
 *  - "<describe output>", i.e. anything ending in "-g<abbreviated id>";
 *  - a refname, tried in gitrevisions' order: <name>, refs/<name>,
 *    refs/tags/<name>, refs/heads/<name>, refs/remotes/<name>,
 *    refs/remotes/<name>/HEAD; "@" alone is HEAD. A ref wins over an
 *    abbreviated id spelled the same, as in git;
 *  - the suffixes ^, ^<n>, ~, ~<n>, ^{}, ^{commit}, ^{tree}, ^{blob},
 *    ^{tag}, ^{object}, in any number and order, and ^{/<regex>} (the
 *    youngest commit reachable whose message matches);
 *  - "<ref>@{<n>}", the ref's value n changes ago, from its reflog
 *    ("@{<n>}" alone: the current branch's);
 *  - ":<path>" and ":<n>:<path>", the blob at path (stage n) in the
 *    index (repo-index.h);
 *  - "<rev>:<path>", a path in the tree of <rev>; a path starting with
 *    "./" or "../" is relative to the current directory's place in the
 *    work tree.
 *
 * When an abbreviated id matches several objects and the name says what
 * type it wants ("abcd~2" a commit, "abcd^{tree}" and "abcd:path" a
 * tree-ish, "abcd^{blob}" a blob), the one candidate of that kind is
 * chosen, as git does.
 *
 * Not supported (GP_EINVAL with a message saying so): the other
 * "@{...}" forms (dates, @{-<n>}, @{upstream}), ":/<text>".
 *
 * Everything read along the way (refs, commits, tags, trees) is parsed
 * with the bounded parsers of refs.h, commit.h and tree.h; peeling and
 * path walks are loops with fixed bounds, never recursion, so no name
 * can exhaust the stack.
 */
#ifndef GP_OBJECT_NAME_H
#define GP_OBJECT_NAME_H

#include "object.h"

struct gp_error;
struct odb;
struct repository;

/* Shorter hex prefixes are never taken for object ids (git's minimum). */
#define OBJECT_NAME_MIN_ABBREV 4

/* What get_oid_ctx() learnt about a name besides its id. */
struct oid_context {
	/*
	 * The name had the form "<rev>:<path>". On GP_ENOTFOUND the message
	 * then says which half failed, in git's words ("invalid object name
	 * 'REV'." or "path 'P' does not exist in 'REV'"), which git's
	 * commands print as is.
	 */
	bool has_path;
	/* With has_path, on success: the entry's mode (0 for the empty path). */
	unsigned mode;
	/* On GP_EINVAL: an abbreviated id matched more than one object. */
	bool ambiguous;
	/*
	 * On GP_ENOTFOUND: a broken loose ref of a matching name was
	 * skipped; the message ("ignoring broken ref ...") names it, for
	 * the warning git prints.
	 */
	bool broken_ref;
	/*
	 * With GET_OID_FOLLOW_SYMLINKS, on success: what following the
	 * symbolic links of "<rev>:<path>" came to. For anything but
	 * SYMLINK_FOUND the id is null; for SYMLINK_OUTSIDE symlink_path
	 * is the part of the path that leaves the tree (an absolute link
	 * target, or "../..." from the root), owned: release it with
	 * oid_context_release().
	 */
	enum symlink_result {
		SYMLINK_FOUND = 0,
		SYMLINK_DANGLING, /* a link was followed to nothing */
		SYMLINK_LOOP,     /* more than GET_OID_MAX_SYMLINKS links */
		SYMLINK_NOTDIR,   /* a file was used as a directory */
		SYMLINK_OUTSIDE,  /* the path left the tree */
	} symlink;
	char *symlink_path;
};

/* Links followed in one name before it is taken for a loop (git's limit). */
#define GET_OID_MAX_SYMLINKS 40

enum get_oid_flags {
	/*
	 * In "<rev>:<path>", follow symbolic links found in the tree the
	 * way a file system would (a link's target is relative to the
	 * directory holding it; ".." goes back up the directories actually
	 * walked), as "cat-file --follow-symlinks" does.
	 */
	GET_OID_FOLLOW_SYMLINKS = 1 << 0,
};

void oid_context_release(struct oid_context *ctx);

/*
 * Resolve name in repo, reading objects from odb (the repository's,
 * normally). Errors:
 *  - GP_ENOTFOUND: the name names nothing (no such ref or object, no
 *    such parent, a path that is not in the tree, a peel to a type the
 *    object does not lead to);
 *  - GP_EINVAL: an ambiguous abbreviated id ("short object ID 1234 is
 *    ambiguous"), or syntax we do not support;
 *  - GP_ECORRUPT: a damaged object, a malformed packed-refs;
 *  - GP_EIO.
 * A broken loose ref is skipped as git skips it; when nothing else
 * matches, the GP_ENOTFOUND message mentions it.
 *
 * Cost: for a ref, a few open()s; for an abbreviated id, one O(log n)
 * search per pack plus one directory listing; each suffix or path
 * component reads one object.
 */
int get_oid(struct repository *repo, struct odb *odb, const char *name,
	    struct object_id *oid, struct gp_error *err);
/* Like get_oid(); ctx (which may be NULL) receives the details above. */
int get_oid_ctx(struct repository *repo, struct odb *odb, const char *name,
		struct object_id *oid, struct oid_context *ctx,
		struct gp_error *err);
/* Like get_oid_ctx(), with enum get_oid_flags. */
int get_oid_with_flags(struct repository *repo, struct odb *odb, const char *name,
		       unsigned flags, struct object_id *oid, struct oid_context *ctx,
		       struct gp_error *err);

/*
 * Call fn for each object of odb whose id starts with the hex digits
 * hex[0..len) (1 <= len <= hexsz; either case): in each pack, by a
 * search of its fanout bucket and a binary search for the first match;
 * then in the loose fan-out directories the prefix selects. An object
 * stored more than once may be reported more than once. Stops when fn
 * returns non-zero, and returns that value; GP_EINVAL when hex is not a
 * hex prefix of a valid length.
 * NEEDSWORK: loose objects of alternates are not searched (odb.h does
 * not expose their directories yet); their packs are.
 */
typedef int oid_prefix_fn(const struct object_id *oid, void *data);
int oid_prefix_for_each(struct odb *odb, const char *hex, size_t len,
			oid_prefix_fn *fn, void *data);

#endif
