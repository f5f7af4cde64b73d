/*
 * tree.c: a bounded parser for tree objects (see tree.h for the entry
 * layout and what counts as malformed).
 *
 * Trees come from packs and loose objects, so from disk, and later from
 * the network: every read below is preceded by a check of the bytes
 * remaining (it->len - pos), so a truncated or garbled entry ends in
 * GP_ECORRUPT, never in a read past the buffer. The name is found with
 * memchr() bounded by the remaining length; the mode is parsed one
 * digit at a time with a digit limit, so it cannot overflow.
 */
#include "tree.h"
#include "error.h"

void tree_iter_init(struct tree_iter *it, const unsigned char *buf,
		    size_t len, int algo)
{
	it->buf = buf;
	it->len = len;
	it->pos = 0;
	it->entry_nr = 0;
	it->algo = algo;
	it->failed = false;
}

static int entry_corrupt(struct tree_iter *it, size_t entry_ofs,
			 struct gp_error *err, const char *what)
{
	it->failed = true;
	return CORRUPT(err, "tree entry %zu at offset %zu: %s",
		       it->entry_nr, entry_ofs, what);
}

int tree_iter_next(struct tree_iter *it, struct tree_entry *out,
		   struct gp_error *err)
{
	const unsigned char *buf = it->buf;
	size_t rawsz = gp_hash_algos[it->algo].rawsz;
	size_t entry_ofs = it->pos, pos = it->pos, digits = 0, name_len;
	const unsigned char *nul;
	unsigned mode = 0;

	if (it->failed)
		return CORRUPT(err, "tree entry %zu at offset %zu: tree already found malformed",
			       it->entry_nr, entry_ofs);
	if (pos >= it->len)
		return 0;

	while (pos < it->len && buf[pos] != ' ') {
		if (buf[pos] < '0' || buf[pos] > '7')
			return entry_corrupt(it, entry_ofs, err, "malformed mode (not octal)");
		if (++digits > TREE_MODE_MAX_DIGITS)
			return entry_corrupt(it, entry_ofs, err, "malformed mode (too long)");
		mode = mode << 3 | (unsigned)(buf[pos] - '0');
		pos++;
	}
	if (pos >= it->len)
		return entry_corrupt(it, entry_ofs, err, "truncated (no space after the mode)");
	if (!digits)
		return entry_corrupt(it, entry_ofs, err, "malformed mode (empty)");
	pos++; /* the space */

	nul = memchr(buf + pos, '\0', it->len - pos);
	if (!nul)
		return entry_corrupt(it, entry_ofs, err, "truncated (name not terminated)");
	name_len = (size_t)(nul - (buf + pos));
	if (!name_len)
		return entry_corrupt(it, entry_ofs, err, "empty name");
	if (memchr(buf + pos, '/', name_len))
		return entry_corrupt(it, entry_ofs, err, "name contains '/'");

	out->name = (const char *)buf + pos;
	out->name_len = name_len;
	pos += name_len + 1;

	if (rawsz > it->len - pos)
		return entry_corrupt(it, entry_ofs, err, "truncated object id");
	oid_from_raw(&out->oid, buf + pos, it->algo);
	out->mode = mode;
	pos += rawsz;

	it->pos = pos;
	it->entry_nr++;
	return 1;
}

enum object_type tree_mode_type(unsigned mode)
{
	switch (mode & TREE_MODE_TYPE_MASK) {
	case TREE_MODE_DIR:
		return OBJ_TREE;
	case TREE_MODE_REG:
	case TREE_MODE_SYMLINK:
		return OBJ_BLOB;
	default:
		return OBJ_COMMIT;
	}
}

unsigned tree_mode_canon(unsigned mode)
{
	switch (mode & TREE_MODE_TYPE_MASK) {
	case TREE_MODE_REG:
		return TREE_MODE_REG | ((mode & 0100) ? 0755 : 0644);
	case TREE_MODE_SYMLINK:
		return TREE_MODE_SYMLINK;
	case TREE_MODE_DIR:
		return TREE_MODE_DIR;
	default:
		return TREE_MODE_GITLINK;
	}
}
