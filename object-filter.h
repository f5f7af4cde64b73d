/*
 * object-filter.h: the object filters of "--filter=<filter-spec>"
 * (git rev-list, pack-objects, cat-file; partial clone), parsed from
 * the spec as git-rev-list(1) "--filter" and the partial-clone
 * technical notes describe it:
 *
 *   blob:none                  omit every blob
 *   blob:limit=<n>[kmg]        omit blobs of n bytes (KiB, MiB, GiB) or more
 *   tree:<depth>               omit trees and blobs deeper than depth
 *                              below a root tree (tree:0: every tree and blob)
 *   sparse:oid=<blob-ish>      keep the blobs a sparse-checkout
 *                              specification in that blob selects
 *   object:type=<type>         omit objects not of that type
 *   combine:<spec>+<spec>...   omit what any of the filters omits
 *
 * Numbers are unsigned, in C notation (0x1f hex, 017 octal), with an
 * optional unit k, m or g (either case, powers of 1024). In combine:,
 * each sub-spec is %-encoded: the characters '~`!@#$^&*()[]{}\;'",<>?',
 * whitespace, control characters and bytes >= 0x80 must be written as
 * %XX, as must '+' and '%' where they are meant literally; %XX (either
 * case) stands for that byte, except %00, and a '%' not followed by two
 * hex digits stands for itself. Empty sub-specs are skipped.
 *
 * Several specs given one after the other (several --filter options)
 * make one combine: filter, whose spec() is the combine: spec git
 * writes for them (each added spec %-encoded with lowercase hex).
 *
 * Error messages are git's, word for word, so that commands print them
 * after "fatal: " as git does.
 */
#ifndef GP_OBJECT_FILTER_H
#define GP_OBJECT_FILTER_H

#include "object.h"

struct gp_error;

enum object_filter_kind {
	OBJECT_FILTER_NONE = 0,   /* no filter: everything passes */
	OBJECT_FILTER_BLOB_NONE,
	OBJECT_FILTER_BLOB_LIMIT,
	OBJECT_FILTER_TREE_DEPTH,
	OBJECT_FILTER_SPARSE_OID,
	OBJECT_FILTER_OBJECT_TYPE,
	OBJECT_FILTER_COMBINE,
};

struct object_filter {
	enum object_filter_kind kind;
	char *spec;               /* the spec as given (owned); NULL for NONE */
	uint64_t blob_limit;      /* BLOB_LIMIT: bytes; blobs this big or bigger go */
	uint64_t tree_depth;      /* TREE_DEPTH: trees at this depth or deeper go */
	char *sparse_oid;         /* SPARSE_OID: the blob-ish, unresolved (owned) */
	enum object_type type;    /* OBJECT_TYPE: the type that is kept */
	struct object_filter *subs; /* COMBINE: the parsed sub-filters (owned) */
	size_t nr_subs, alloc_subs;
};

#define OBJECT_FILTER_INIT { .kind = OBJECT_FILTER_NONE }

/*
 * Parse spec into f, which must be empty (OBJECT_FILTER_INIT or
 * released). Errors: GP_EINVAL with git's message ("invalid filter-spec
 * 'x'", "expected 'tree:<depth>'", ...); f is left empty then.
 */
int object_filter_parse(struct object_filter *f, const char *spec,
			struct gp_error *err);
/*
 * Add spec to f, as a further --filter option does: an empty f takes
 * it as object_filter_parse() would; otherwise f becomes (or stays) a
 * combine: filter with spec as its last sub-filter. Errors as for
 * object_filter_parse(); f is unchanged then.
 */
int object_filter_add(struct object_filter *f, const char *spec,
		      struct gp_error *err);
/* Free what f owns; f is empty afterwards ("--no-filter"). */
void object_filter_release(struct object_filter *f);

/* The spec: as given, or the combine: spec of several. NULL for NONE. */
const char *object_filter_spec(const struct object_filter *f);
/*
 * The kind's name as git names it in messages: "blob:none",
 * "blob:limit", "tree", "sparse:oid", "object:type", "combine".
 */
const char *object_filter_kind_name(enum object_filter_kind kind);

/*
 * Whether f decides by an object's own type and size, without a walk
 * from the roots that would tell the depth of a tree or the path of a
 * blob: NONE, BLOB_NONE, BLOB_LIMIT, OBJECT_TYPE, and a COMBINE of only
 * those.
 */
bool object_filter_is_walkless(const struct object_filter *f);
/*
 * For a walkless f: whether it omits an object of this type and size
 * (size is only looked at for blobs under blob:limit). BUG() for a
 * filter that needs a walk.
 */
bool object_filter_omits(const struct object_filter *f, enum object_type type,
			 uint64_t size);
/* Whether object_filter_omits() needs the object's size for this type. */
bool object_filter_needs_size(const struct object_filter *f, enum object_type type);

#endif
