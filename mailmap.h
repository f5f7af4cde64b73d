/*
 * mailmap.h: the mailmap (gitmailmap(5)): canonical names and email
 * addresses for the identities recorded in commits and tags.
 *
 * A mailmap text has one mapping a line ('#' starts a comment):
 *
 *   Proper Name <commit@email>                      the name for an address
 *   <proper@email> <commit@email>                   the address for an address
 *   Proper Name <proper@email> <commit@email>       both
 *   Proper Name <proper@email> Commit Name <commit@email>
 *                                                   both, for that name only
 *
 * Addresses and names are matched without regard to case; a mapping
 * for a name and an address wins over one for the address alone, and a
 * later line over an earlier one. Sources, in git's order: the work
 * tree's .mailmap, the blob of mailmap.blob (HEAD:.mailmap by default
 * in a bare repository), the file of mailmap.file.
 */
#ifndef GP_MAILMAP_H
#define GP_MAILMAP_H

#include "object.h"

struct gp_error;
struct odb;
struct repository;
struct strbuf;
struct mailmap;

struct mailmap *mailmap_new(void);
void mailmap_free(struct mailmap *mm);
/* Add the mappings of a mailmap text; lines that are not one are skipped. */
void mailmap_add_buf(struct mailmap *mm, const char *buf, size_t len);

/*
 * Read repo's mailmap from the sources above; missing ones are empty.
 * Errors: GP_EIO for a file that exists but cannot be read.
 */
int mailmap_load(struct mailmap **out, struct repository *repo, struct odb *odb,
		 struct gp_error *err);
/* Whether the mailmap maps anything at all. */
bool mailmap_is_empty(const struct mailmap *mm);

/*
 * The identity to show for name and email (not NUL-terminated): true
 * when the mailmap changes it, with *new_name and *new_email the
 * replacements (NULL: keep that part; borrowed from mm).
 */
bool mailmap_map(const struct mailmap *mm, const char *name, size_t name_len,
		 const char *email, size_t email_len,
		 const char **new_name, const char **new_email);

/*
 * A commit's or tag's content with the identities of its author,
 * committer and tagger header lines mapped, into out (reset first).
 * False, and out untouched, when nothing changes (or for other types).
 */
bool mailmap_rewrite(const struct mailmap *mm, enum object_type type,
		     const unsigned char *buf, size_t len, struct strbuf *out);

#endif
