/*
 * tree.h: reading tree objects, as gitformat-loose (and "git help
 * glossary" under "tree object") describe them.
 *
 * A tree's content is a sequence of entries, each
 *
 *   <mode in octal ASCII> SP <name> NUL <raw object id, rawsz bytes>
 *
 * with no header, no count and no trailer. The iterator below walks such
 * a buffer without trusting it: every field is checked against the
 * remaining length before it is read, and a malformed entry stops the
 * walk with GP_ECORRUPT. It never allocates and never reads outside
 * buf[0..len).
 *
 * What counts as malformed:
 *  - a mode that is empty, has a character other than 0-7, or has more
 *    than TREE_MODE_MAX_DIGITS digits;
 *  - a mode not followed by a single space;
 *  - an empty name, a name containing '/', or a name with no NUL before
 *    the end of the buffer;
 *  - fewer than rawsz bytes left for the object id.
 *
 * Not checked here (these are fsck's business, and git itself reads such
 * trees): entry order, duplicate names, "." and ".." names, and modes
 * other than the five git writes.
 *
 *	struct tree_iter it;
 *	struct tree_entry e;
 *	int ret;
 *
 *	tree_iter_init(&it, buf, len, algo);
 *	while ((ret = tree_iter_next(&it, &e, &err)) > 0)
 *		use(e.mode, e.name, &e.oid);
 *	if (ret < 0)
 *		... err says which entry, at which offset, and what is wrong
 */
#ifndef GP_TREE_H
#define GP_TREE_H

#include "object.h"

struct gp_error;

/* The modes git writes, and the file-type bits they are made of. */
#define TREE_MODE_TYPE_MASK 0170000
#define TREE_MODE_DIR 0040000     /* a subtree */
#define TREE_MODE_REG 0100000     /* with 0644 or 0755: a blob */
#define TREE_MODE_SYMLINK 0120000 /* a blob holding the link target */
#define TREE_MODE_GITLINK 0160000 /* a commit of another repository */

/* Longer modes are treated as corrupt ("100644" has six digits). */
#define TREE_MODE_MAX_DIGITS 7

struct tree_entry {
	/*
	 * Borrowed pointer into the iterator's buffer, valid as long as
	 * that buffer is; NUL-terminated there (the NUL is part of the
	 * format). Never empty, never contains '/'.
	 */
	const char *name;
	size_t name_len;
	unsigned mode;         /* as stored; see tree_mode_canon() */
	struct object_id oid;
};

struct tree_iter {
	const unsigned char *buf;
	size_t len;
	size_t pos;        /* byte offset of the next entry in buf */
	size_t entry_nr;   /* 0-based number of the next entry */
	int algo;
	bool failed;       /* a malformed entry was found: stay stopped */
};

/*
 * Start walking the tree content buf[0..len) (without the loose-object
 * header), whose object ids are algo's. buf is borrowed and must
 * outlive the iteration. O(1).
 */
void tree_iter_init(struct tree_iter *it, const unsigned char *buf,
		    size_t len, int algo);

/*
 * Parse the next entry into *out. Returns 1 for an entry, 0 at the end
 * of the buffer, GP_ECORRUPT for a malformed entry, with a message
 * such as "tree entry 3 at offset 57: empty name" (the caller adds
 * which tree). After an error every later call returns GP_ECORRUPT
 * again. O(length of the entry).
 */
int tree_iter_next(struct tree_iter *it, struct tree_entry *out,
		   struct gp_error *err);

/*
 * The type of object an entry with this mode names, as git decides it
 * from the file-type bits: OBJ_TREE for a directory, OBJ_BLOB for a
 * regular file or a symbolic link, OBJ_COMMIT for anything else (a
 * gitlink, or a mode git does not know).
 */
enum object_type tree_mode_type(unsigned mode);

/*
 * The mode git shows for a stored mode (git ls-tree, cat-file -p):
 * regular files become 100755 when the owner-execute bit is set, else
 * 100644; symbolic links 120000; directories 040000; anything else
 * 160000.
 */
unsigned tree_mode_canon(unsigned mode);

#endif
