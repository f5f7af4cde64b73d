/*
 * fsck.h: git's checks of object contents, as "git index-pack --strict"
 * and "--fsck-objects" run them on received objects (receive-pack and
 * fetch with transfer.fsckObjects), following git-fsck(1) ("FSCK
 * MESSAGES", Documentation/fsck-msgids.adoc), the fsck.* /
 * receive.fsck.* / fetch.fsck.* entries of git-config(1) and
 * git-index-pack(1), and what Git 2.55 does (see
 * Documentation/technical/fsck.adoc).
 *
 * What is checked:
 *  - commits: header order (tree, parents, author(s), committer), each
 *    ident (name, <email>, date, time zone), NUL bytes;
 *  - tags: object, type, tag (a valid ref name), tagger, the one
 *    signature header git allows, nothing else before the message;
 *  - trees: entry syntax, modes, order, duplicates, names ("." "..",
 *    ".git" and the names HFS+ and NTFS take for it, '/', length), and
 *    the entries named .gitmodules / .gitattributes (and symlinks
 *    named .gitignore / .mailmap);
 *  - blobs: only those a tree names .gitmodules (parsed as config:
 *    submodule names, urls, paths, update commands) or .gitattributes
 *    (size and line length).
 *
 * Each problem is a message id with a severity (error, warn, info,
 * ignore; two ids are fatal and can only be errors). Reports go to a
 * callback with the text git prints; the library never prints.
 *
 * The blob checks are two-phase, as in git: fsck_object() on a tree
 * queues the ids of its .gitmodules / .gitattributes entries; a queued
 * blob is checked when it is itself passed to fsck_object(), and
 * fsck_finish() checks the ones never seen, reading them through the
 * caller (from the repository, or the pack just written).
 *
 * Everything here reads untrusted bytes: no input is trusted to be
 * NUL-terminated, every scan is bounded by the buffer, and the cost is
 * linear in the input (the .gitmodules parse too).
 *
 * Threads: fsck_object() may run on several threads at once for one
 * fsck_options (index-pack resolves deltas in threads): the queues and
 * the callbacks are serialised by a lock inside, so a callback must
 * not call back into fsck with the same options. Configuration
 * (fsck_set_*, fsck_options_read_config) must be done before.
 */
#ifndef GP_FSCK_H
#define GP_FSCK_H

#include "object.h"

struct config_set;
struct gp_error;
struct strbuf;

/*
 * Every message id git knows (git's camelCase name, default severity),
 * including those about refs, which only git fsck checks: they are
 * accepted in configuration so that settings shared with git work.
 */
#define FSCK_MSG_IDS(X) \
	X(NUL_IN_HEADER, nulInHeader, FATAL) \
	X(UNTERMINATED_HEADER, unterminatedHeader, FATAL) \
	X(BAD_HEADER_CONTINUATION, badHeaderContinuation, ERROR) \
	X(BAD_DATE, badDate, ERROR) \
	X(BAD_DATE_OVERFLOW, badDateOverflow, ERROR) \
	X(BAD_EMAIL, badEmail, ERROR) \
	X(BAD_GPGSIG, badGpgsig, ERROR) \
	X(BAD_HEAD_TARGET, badHeadTarget, ERROR) \
	X(BAD_NAME, badName, ERROR) \
	X(BAD_OBJECT_SHA1, badObjectSha1, ERROR) \
	X(BAD_PACKED_REF_ENTRY, badPackedRefEntry, ERROR) \
	X(BAD_PACKED_REF_HEADER, badPackedRefHeader, ERROR) \
	X(BAD_PARENT_SHA1, badParentSha1, ERROR) \
	X(BAD_REFERENT_NAME, badReferentName, ERROR) \
	X(BAD_REF_CONTENT, badRefContent, ERROR) \
	X(BAD_REF_FILETYPE, badRefFiletype, ERROR) \
	X(BAD_REF_NAME, badRefName, ERROR) \
	X(BAD_REF_OID, badRefOid, ERROR) \
	X(BAD_TIMEZONE, badTimezone, ERROR) \
	X(BAD_TREE, badTree, ERROR) \
	X(BAD_TREE_SHA1, badTreeSha1, ERROR) \
	X(BAD_TYPE, badType, ERROR) \
	X(DUPLICATE_ENTRIES, duplicateEntries, ERROR) \
	X(GITATTRIBUTES_BLOB, gitattributesBlob, ERROR) \
	X(GITATTRIBUTES_LARGE, gitattributesLarge, ERROR) \
	X(GITATTRIBUTES_LINE_LENGTH, gitattributesLineLength, ERROR) \
	X(GITATTRIBUTES_MISSING, gitattributesMissing, ERROR) \
	X(GITMODULES_BLOB, gitmodulesBlob, ERROR) \
	X(GITMODULES_LARGE, gitmodulesLarge, ERROR) \
	X(GITMODULES_MISSING, gitmodulesMissing, ERROR) \
	X(GITMODULES_NAME, gitmodulesName, ERROR) \
	X(GITMODULES_PATH, gitmodulesPath, ERROR) \
	X(GITMODULES_SYMLINK, gitmodulesSymlink, ERROR) \
	X(GITMODULES_UPDATE, gitmodulesUpdate, ERROR) \
	X(GITMODULES_URL, gitmodulesUrl, ERROR) \
	X(MISSING_AUTHOR, missingAuthor, ERROR) \
	X(MISSING_COMMITTER, missingCommitter, ERROR) \
	X(MISSING_EMAIL, missingEmail, ERROR) \
	X(MISSING_NAME_BEFORE_EMAIL, missingNameBeforeEmail, ERROR) \
	X(MISSING_OBJECT, missingObject, ERROR) \
	X(MISSING_SPACE_BEFORE_DATE, missingSpaceBeforeDate, ERROR) \
	X(MISSING_SPACE_BEFORE_EMAIL, missingSpaceBeforeEmail, ERROR) \
	X(MISSING_TAG, missingTag, ERROR) \
	X(MISSING_TAG_ENTRY, missingTagEntry, ERROR) \
	X(MISSING_TREE, missingTree, ERROR) \
	X(MISSING_TYPE, missingType, ERROR) \
	X(MISSING_TYPE_ENTRY, missingTypeEntry, ERROR) \
	X(MULTIPLE_AUTHORS, multipleAuthors, ERROR) \
	X(PACKED_REF_ENTRY_NOT_TERMINATED, packedRefEntryNotTerminated, ERROR) \
	X(PACKED_REF_UNSORTED, packedRefUnsorted, ERROR) \
	X(TREE_NOT_SORTED, treeNotSorted, ERROR) \
	X(UNKNOWN_TYPE, unknownType, ERROR) \
	X(ZERO_PADDED_DATE, zeroPaddedDate, ERROR) \
	X(BAD_REFTABLE_TABLE_NAME, badReftableTableName, WARN) \
	X(EMPTY_NAME, emptyName, WARN) \
	X(FULL_PATHNAME, fullPathname, WARN) \
	X(HAS_DOT, hasDot, WARN) \
	X(HAS_DOTDOT, hasDotdot, WARN) \
	X(HAS_DOTGIT, hasDotgit, WARN) \
	X(LARGE_PATHNAME, largePathname, WARN) \
	X(NULL_SHA1, nullSha1, WARN) \
	X(NUL_IN_COMMIT, nulInCommit, WARN) \
	X(ZERO_PADDED_FILEMODE, zeroPaddedFilemode, WARN) \
	X(BAD_FILEMODE, badFilemode, INFO) \
	X(BAD_TAG_NAME, badTagName, INFO) \
	X(EMPTY_PACKED_REFS_FILE, emptyPackedRefsFile, INFO) \
	X(GITATTRIBUTES_SYMLINK, gitattributesSymlink, INFO) \
	X(GITIGNORE_SYMLINK, gitignoreSymlink, INFO) \
	X(GITMODULES_PARSE, gitmodulesParse, INFO) \
	X(MAILMAP_SYMLINK, mailmapSymlink, INFO) \
	X(MISSING_TAGGER_ENTRY, missingTaggerEntry, INFO) \
	X(REF_MISSING_NEWLINE, refMissingNewline, INFO) \
	X(SYMLINK_REF, symlinkRef, INFO) \
	X(SYMREF_TARGET_IS_NOT_A_REF, symrefTargetIsNotARef, INFO) \
	X(TRAILING_REF_CONTENT, trailingRefContent, INFO) \
	X(EXTRA_HEADER_ENTRY, extraHeaderEntry, IGNORE)

enum fsck_msg_id {
#define FSCK_MSG_ENUM_(id, name, severity) FSCK_MSG_##id,
	FSCK_MSG_IDS(FSCK_MSG_ENUM_)
#undef FSCK_MSG_ENUM_
	FSCK_MSG_NR
};

enum fsck_msg_type {
	FSCK_IGNORE = 0,
	FSCK_INFO,  /* reported as a warning */
	FSCK_WARN,
	FSCK_ERROR,
	FSCK_FATAL, /* reported as an error; cannot be demoted */
};

/* git's camelCase name of id ("missingEmail"). */
const char *fsck_msg_id_name(enum fsck_msg_id id);
/* The id named name[0..len), in any case; false when git knows none. */
bool fsck_msg_id_parse(const char *name, size_t len, enum fsck_msg_id *out);
/* The severity git gives id when nothing is configured. */
enum fsck_msg_type fsck_msg_id_default(enum fsck_msg_id id);

/*
 * One problem found. All pointers are borrowed for the duration of the
 * callback.
 */
struct fsck_report {
	const struct object_id *oid; /* the object the message is about */
	enum object_type type;       /* its type, as far as fsck knows it */
	enum fsck_msg_id id;
	/*
	 * FSCK_ERROR or FSCK_WARN: what git prints ("error", "warning")
	 * once configuration and strictness are applied (fatal prints as
	 * error, info as warning).
	 */
	enum fsck_msg_type severity;
	const char *message; /* "<msgId>: <text>", as git prints it */
	const char *text;    /* the part after "<msgId>: " */
};

/*
 * Called for each report, in the order git makes them. Returns nonzero
 * when the report counts as an error (what fsck_object() counts).
 *
 * index-pack prints "error: object <oid>: <message>" or "warning:
 * object <oid>: <message>" and counts errors; with --fsck-objects it
 * prints the id of a gitmodulesMissing blob on stdout instead, and
 * does not count it. git fsck prints "<error|warning> in <type> <oid>:
 * <message>". The default (no callback set) counts errors and prints
 * nothing.
 */
typedef int fsck_report_fn(const struct fsck_report *report, void *data);

/*
 * git prints a line of its own, "error: <message>", when a tree does
 * not parse, before the badTree report and even when badTree is
 * ignored: "too-short tree object", "malformed mode in tree entry",
 * "empty filename in tree entry". This callback gets that message.
 */
typedef void fsck_tree_error_fn(const struct object_id *oid,
				const char *message, void *data);

struct fsck_options;

/*
 * New options for objects of hash algorithm algo: no callbacks, not
 * strict, every id at its default severity. Free with
 * fsck_options_free(). Never fails (small fixed allocation).
 */
struct fsck_options *fsck_options_new(int algo);
void fsck_options_free(struct fsck_options *o);

/*
 * Strict mode, as git fsck --strict and index-pack --strict and
 * --fsck-objects (always strict): a warning becomes an error, and the
 * mode 100664 is a bad file mode.
 */
void fsck_set_strict(struct fsck_options *o, bool strict);
void fsck_set_report(struct fsck_options *o, fsck_report_fn *fn, void *data);
void fsck_set_tree_error(struct fsck_options *o, fsck_tree_error_fn *fn,
			 void *data);

/*
 * Configuration. Errors are GP_EINVAL (GP_EIO for a skip list that
 * cannot be read) with git's message, which git prints after "fatal: ".
 *
 * fsck_set_msg_type: id in any case, severity exactly "error", "warn"
 * or "ignore" ("Unknown fsck message type: 'S'"); an unknown id is
 * "Unhandled message id: ID"; a fatal id can only be set to error
 * ("Cannot demote ID to S"). For largePathname, "warn:N" also sets
 * the longest name allowed (an integer with an optional k/m/g; git's
 * default is 4096): "unable to parse max tree entry len: N".
 */
int fsck_set_msg_type(struct fsck_options *o, const char *id,
		      const char *severity, struct gp_error *err);
/*
 * A list as index-pack's --strict=<list> and --fsck-objects=<list>
 * take it: "<id>=<severity>" (or "<id>:<severity>") items separated by
 * ',', ' ' or '|', ids in any case, and "skiplist=<path>" items.
 * Items before a bad one stay applied. "Missing '=': 'ITEM'" for an
 * item without one; "skiplist requires a path".
 */
int fsck_set_msg_types(struct fsck_options *o, const char *list,
		       struct gp_error *err);
/*
 * Add the object names in the file at path to the skip list: objects
 * about which nothing is reported. One full hex id per line; '#'
 * starts a comment; blank lines and surrounding whitespace are
 * ignored. Errors: "could not open object name list: PATH" (GP_EIO),
 * "invalid object name: LINE" (GP_EINVAL). Lists accumulate.
 */
int fsck_add_skiplist(struct fsck_options *o, const char *path,
		      struct gp_error *err);

/* Whose configuration: git fsck, receive-pack, or fetch-pack. */
enum fsck_config_scope {
	FSCK_CONFIG_FSCK,    /* fsck.<id>, fsck.skipList */
	FSCK_CONFIG_RECEIVE, /* receive.fsck.<id>, receive.fsck.skipList */
	FSCK_CONFIG_FETCH,   /* fetch.fsck.<id>, fetch.fsck.skipList */
};

/*
 * Whether receive.fsckObjects (RECEIVE) or fetch.fsckObjects (FETCH),
 * else transfer.fsckObjects, is true (default false); for FSCK always
 * true. Errors: GP_EINVAL for a value that is not a boolean.
 */
int fsck_config_enabled(const struct config_set *cs,
			enum fsck_config_scope scope, bool *out,
			struct gp_error *err);

/*
 * The list receive-pack (RECEIVE) or fetch-pack (FETCH) builds from
 * its configuration and hands to index-pack as --strict=<list>,
 * appended to spec ("" when nothing is set): each <scope>.fsck.<id> in
 * the order read, as "<id>=<value>", and <scope>.fsck.skipList as
 * "skiplist=<path>" ("~/" expanded), comma-separated. They never fall
 * back on fsck.*. An id git does not know is skipped with a warning
 * appended to warnings (one line each, without "warning: ": "skipping
 * unknown msg id 'ID'" for RECEIVE, "Skipping unknown msg id 'ID'" for
 * FETCH). Errors (GP_EINVAL): "missing value for 'KEY'", "Unknown fsck
 * message type: 'S'". GP_EINVAL for FSCK (git fsck applies fsck.*
 * itself: see fsck_options_read_config).
 */
int fsck_config_list(const struct config_set *cs, enum fsck_config_scope scope,
		     struct strbuf *spec, struct strbuf *warnings,
		     struct gp_error *err);

/*
 * Apply a scope's configuration to o: for FSCK, each fsck.<id> as
 * fsck_set_msg_type() (an unknown id is an error: "Unhandled message
 * id: ID") and fsck.skipList; for RECEIVE and FETCH, the list of
 * fsck_config_list() (warnings as there). Errors as those functions.
 */
int fsck_options_read_config(struct fsck_options *o,
			     const struct config_set *cs,
			     enum fsck_config_scope scope,
			     struct strbuf *warnings, struct gp_error *err);

/*
 * Check one object, whose id oid the caller computed from type and
 * buf[0..len). For a blob, only a queued .gitmodules / .gitattributes
 * is looked at; buf may be NULL (with len its size) for a blob the
 * caller did not load because it is too large, which then fails the
 * check if it is one of those (gitmodulesLarge, gitattributesLarge).
 *
 * Returns the number of reports the callback counted as errors: 0
 * when the object passes. Like git, a commit or tag check stops at the
 * first error (warnings go on); a tree reports each problem once.
 * O(len) time; memory O(entries) for a tree, O(len) for .gitmodules.
 */
int fsck_object(struct fsck_options *o, const struct object_id *oid,
		enum object_type type, const void *buf, size_t len);

/*
 * How fsck_finish() reads a queued blob that fsck_object() never saw.
 * Returns 0 with *type, *buf (malloc'd; fsck frees it) and *len set;
 * *buf may be NULL for an object too large to load. GP_ENOTFOUND when
 * the object is not there; any other negative code aborts
 * fsck_finish(), which returns it.
 */
typedef int fsck_read_fn(const struct object_id *oid, enum object_type *type,
			 void **buf, size_t *len, void *data);

/* How many queued blobs fsck_object() has not seen yet. */
size_t fsck_pending_nr(struct fsck_options *o);

/*
 * Check the queued blobs not seen yet, in object id order: a missing
 * one is gitmodulesMissing ("unable to read .gitmodules blob") or
 * gitattributesMissing, one that is not a blob gitmodulesBlob /
 * gitattributesBlob ("non-blob found at .gitmodules"), the others as
 * fsck_object() checks blobs. Empties the queues. Returns the number
 * of errors counted, or read's error.
 */
int fsck_finish(struct fsck_options *o, fsck_read_fn *read, void *data);

/*
 * Whether git's object parser accepts the object: index-pack parses
 * each commit, tree and tag before it runs fsck, and dies when the
 * parse fails, whatever fsck would say. For a commit it wants "tree
 * <hex>" LF and at least one more byte, and well-formed "parent" lines
 * (and something after the last one); for a tag "object", "type" (a
 * known type) and "tag" lines. Trees always parse here (their entries
 * are read by fsck). Returns 0, or GP_ECORRUPT with the line git
 * prints after "error: " in *message ("bogus commit object <oid>",
 * "bad parents in commit <oid>", "unknown tag type 'T' in <oid>"), or
 * "" when git prints none; git then dies with "invalid <type>".
 */
int fsck_parse_check(enum object_type type, const void *buf, size_t len,
		     const struct object_id *oid, struct strbuf *message);

/*
 * The objects this object links to, as git's connectivity walk
 * (index-pack --strict) follows them: a commit's tree then its
 * parents; a tag's object, with the type its "type" line names; a
 * tree's entries, as trees (mode 040000), blobs (regular files and
 * symlinks, any mode git reads as such), gitlinks skipped (they name
 * commits of other repositories). fn is called for each in order and
 * may stop the walk by returning nonzero, which is returned. A blob
 * has none. Errors: GP_ECORRUPT when the object does not parse as
 * fsck_parse_check() or the tree reader say, with git's message.
 * O(len); no allocation.
 */
typedef int fsck_link_fn(const struct object_id *oid, enum object_type type,
			 void *data);
int fsck_links(enum object_type type, const void *buf, size_t len, int algo,
	       fsck_link_fn *fn, void *data, struct gp_error *err);

/*
 * The name checks, exposed for tests (test-tool fsck name): whether a
 * tree entry name is what HFS+ or NTFS would open as ".git",
 * ".gitmodules", ".gitattributes", ".gitignore" or ".mailmap" (name is
 * a NUL-terminated path component).
 */
bool fsck_is_dotgit(const char *name);
bool fsck_is_dotgitmodules(const char *name);
bool fsck_is_dotgitattributes(const char *name);
bool fsck_is_dotgitignore(const char *name);
bool fsck_is_dotmailmap(const char *name);
/* Whether git accepts a submodule name / url from .gitmodules. */
bool fsck_submodule_name_ok(const char *name);
bool fsck_submodule_url_ok(const char *url);

#endif
