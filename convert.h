/*
 * convert.h: what git does to a blob's content when it checks the blob
 * out at a path (gitattributes(5): "text", "eol", "crlf", "ident",
 * "filter"; core.autocrlf, core.eol), as "cat-file --filters" shows it
 * and textconv drivers receive it.
 *
 * In that order: $Id$ expanded to "$Id: <blob name> $" ("ident"); LF
 * turned into CRLF where the path's line endings are CRLF ("text" set,
 * or "auto" or core.autocrlf=true and the content looks like text with
 * no CR in it yet; "eol=crlf" alone sets "text"); then the smudge
 * command of the path's filter driver (filter.<driver>.smudge, "%f"
 * replaced by the path), run from the top of the work tree.
 *
 * Not supported (GP_EINVAL saying so): working-tree-encoding, and
 * filter.<driver>.process (long-running filter processes).
 */
#ifndef GP_CONVERT_H
#define GP_CONVERT_H

#include "object.h"

struct gp_error;
struct repository;

/*
 * Convert the content of blob oid, *data[0..*size) (malloc'd; replaced
 * when it changes), as checked out at path. Errors: GP_EINVAL for what
 * is not supported; GP_EIO when a required filter fails (one that is
 * not required is skipped, with its message in warning, as git warns).
 */
int convert_to_worktree(struct repository *repo, const char *path,
			const struct object_id *oid, unsigned char **data,
			size_t *size, char **warning, struct gp_error *err);

#endif
