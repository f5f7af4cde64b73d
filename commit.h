/*
 * commit.h: the headers of commit and tag objects that walks and name
 * resolution need, as git writes them (git-commit-tree(1), git-tag(1),
 * gitformat-signature(5) for the layout around signatures):
 *
 *   commit:  tree <hex> LF
 *            (parent <hex> LF)*
 *            author <ident> LF
 *            committer <ident> SP <unix seconds> SP <tz> LF
 *            ...other headers..., LF, message
 *
 *   tag:     object <hex> LF
 *            type <commit|tree|blob|tag> LF
 *            [tag <name> LF]
 *            [tagger <ident> LF]
 *            LF, message
 *
 * Both parsers work on untrusted bytes: every field is checked against
 * the remaining length, they never read outside buf[0..len), and a
 * malformed required header is GP_ECORRUPT with a message saying which
 * ("bad parent line at offset 46"); the caller adds which object.
 */
#ifndef GP_COMMIT_H
#define GP_COMMIT_H

#include "object.h"

struct gp_error;

struct commit_info {
	struct object_id tree;
	/* In the order stored; owned, freed by commit_info_release(). */
	struct object_id *parents;
	size_t nr_parents, alloc_parents;
	/*
	 * The committer date, in seconds since the epoch; 0 when the
	 * committer line is missing or its date cannot be parsed (git
	 * treats such commits as very old, and so do we).
	 */
	uint64_t date;
};

#define COMMIT_INFO_INIT { .parents = NULL }

/*
 * Parse the content buf[0..len) of a commit (without the object header)
 * whose ids are algo's. out must be initialised (COMMIT_INFO_INIT or
 * released); on error it is left empty. Errors: GP_ECORRUPT when the
 * first line is not "tree <hex>", or a "parent" line is malformed.
 * Cost: O(parents + header length); one allocation when there are
 * parents.
 */
int commit_parse(const unsigned char *buf, size_t len, int algo,
		 struct commit_info *out, struct gp_error *err);
void commit_info_release(struct commit_info *ci);

struct tag_info {
	struct object_id object;  /* what the tag points at */
	enum object_type type;    /* that object's type, as the tag says */
	/* The "tag" header: borrowed from buf, not NUL-terminated; NULL if absent. */
	const char *name;
	size_t name_len;
};

/*
 * Parse the content of a tag object. Errors: GP_ECORRUPT when it does
 * not start with "object <hex>" and "type <known type>" lines. O(1)
 * beyond the first three lines; no allocation.
 */
int tag_parse(const unsigned char *buf, size_t len, int algo,
	      struct tag_info *out, struct gp_error *err);

#endif
