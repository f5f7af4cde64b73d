/*
 * index-file.c: see index-file.h.
 *
 * Layout (gitformat-index(5), big-endian):
 *   0    4     "DIRC"
 *   4    4     version: 2, 3 or 4
 *   8    4     number of entries
 *   12   ...   entries: ctime, mtime (4+4 each), dev, ino, mode, uid,
 *              gid, size (4 each), object name (rawsz), flags (2),
 *              [extended flags (2), version 3+ when flags has 0x4000],
 *              path: v2/v3 NUL-terminated and padded with NULs to a
 *              multiple of 8 from the entry's start; v4 a varint of
 *              bytes to drop from the previous path, then the NUL-
 *              terminated rest, no padding
 *   ...  ...   extensions: signature (4), size (4), data
 *   end  rawsz checksum of all the above
 */
#include "index-file.h"
#include "error.h"
#include "hash.h"
#include "strbuf.h"
#include "util.h"

#define INDEX_SIGNATURE 0x44495243u   /* "DIRC" */
#define EXT_TREE 0x54524545u           /* "TREE" */
#define EXT_REUC 0x52455543u           /* "REUC" */
#define EXT_LINK 0x6c696e6bu           /* "link" */
#define EXT_SDIR 0x73646972u           /* "sdir": the index is sparse */
#define ENTRY_STAT_SIZE 40             /* ctime..size */
#define FLAG_EXTENDED 0x4000
#define FLAG_STAGE_MASK 0x3000
#define XFLAG_INTENT_TO_ADD 0x2000
#define MODE_TYPE_MASK 0170000
#define MODE_DIR 0040000
#define MODE_GITLINK 0160000

struct index_reader {
	const unsigned char *buf;
	size_t len;          /* the data before the trailing checksum */
	const char *name;
	int algo;
	size_t rawsz;
	const struct index_visitor *visitor;
	struct gp_error *err;
	struct strbuf path;
	/* the second pass over a sparse index's entries collects them here */
	bool collect;
	bool unmerged;
	struct strbuf paths;          /* NUL-terminated, one after another */
	struct collected_entry {
		size_t path_at;
		uint32_t mode;
		struct object_id oid;
	} *entries;
	size_t nr_entries, alloc_entries;
};

/* Read a varint as OFS_DELTA encodes it; false when it runs out or overflows. */
static bool read_varint(struct index_reader *r, size_t *pos, uint64_t *out)
{
	uint64_t n;
	unsigned char c;
	if (*pos >= r->len)
		return false;
	c = r->buf[(*pos)++];
	n = c & 0x7f;
	while (c & 0x80) {
		if (*pos >= r->len || n >= (UINT64_MAX >> 7) - 1)
			return false;
		c = r->buf[(*pos)++];
		n = ((n + 1) << 7) | (c & 0x7f);
	}
	*out = n;
	return true;
}

static int read_entries(struct index_reader *r, uint32_t version, uint32_t nr, size_t *pos_out)
{
	size_t pos = 12;
	for (uint32_t n = 0; n < nr; n++) {
		size_t start = pos, fixed = ENTRY_STAT_SIZE + r->rawsz + 2;
		uint32_t mode;
		uint16_t flags, xflags = 0;
		struct object_id oid;
		const unsigned char *nul;
		int ret;

		if (fixed > r->len - pos)
			return CORRUPT(r->err, "%s: at offset %zu: index entry %" PRIu32
				       " is truncated", r->name, pos, n);
		mode = get_be32(r->buf + pos + 24);
		oid_from_raw(&oid, r->buf + pos + ENTRY_STAT_SIZE, r->algo);
		flags = (uint16_t)get_be16(r->buf + pos + ENTRY_STAT_SIZE + r->rawsz);
		pos += fixed;
		if (flags & FLAG_EXTENDED) {
			if (version < 3)
				return CORRUPT(r->err, "%s: at offset %zu: extended flags in a version %"
					       PRIu32 " index", r->name, start, version);
			if (2 > r->len - pos)
				return CORRUPT(r->err, "%s: at offset %zu: index entry %" PRIu32
					       " is truncated", r->name, start, n);
			xflags = (uint16_t)get_be16(r->buf + pos);
			pos += 2;
		}
		if (version == 4) {
			uint64_t drop;
			if (!read_varint(r, &pos, &drop) || drop > r->path.len)
				return CORRUPT(r->err, "%s: at offset %zu: index entry %" PRIu32
					       " has a bad path prefix", r->name, start, n);
			strbuf_setlen(&r->path, r->path.len - (size_t)drop);
		} else {
			strbuf_reset(&r->path);
		}
		nul = pos < r->len ? memchr(r->buf + pos, '\0', r->len - pos) : NULL;
		if (!nul)
			return CORRUPT(r->err, "%s: at offset %zu: index entry %" PRIu32
				       " has an unterminated path", r->name, start, n);
		strbuf_add(&r->path, r->buf + pos, (size_t)(nul - (r->buf + pos)));
		pos = (size_t)(nul - r->buf) + 1;
		if (version != 4) {
			/* Padded to 8 bytes from the entry's start, at least one NUL. */
			size_t want = (pos - 1 - start + 8) & ~(size_t)7;
			if (want > r->len - start)
				return CORRUPT(r->err, "%s: at offset %zu: index entry %" PRIu32
					       " is truncated", r->name, start, n);
			pos = start + want;
		}
		if (r->collect) {
			/* what a tree of the entries holds: gitlinks, no intent-to-add */
			if (flags & FLAG_STAGE_MASK)
				r->unmerged = true;
			if (!(xflags & XFLAG_INTENT_TO_ADD)) {
				ALLOC_GROW(r->entries, r->nr_entries + 1, r->alloc_entries);
				r->entries[r->nr_entries++] = (struct collected_entry){
					.path_at = r->paths.len, .mode = mode, .oid = oid };
				strbuf_add(&r->paths, r->path.buf, r->path.len + 1);
			}
			continue;
		}
		if ((mode & MODE_TYPE_MASK) == MODE_GITLINK || (xflags & XFLAG_INTENT_TO_ADD))
			continue;
		ret = r->visitor->object(&oid, (mode & MODE_TYPE_MASK) == MODE_DIR ? OBJ_TREE : OBJ_BLOB,
					 r->path.buf, r->visitor->data);
		if (ret)
			return ret;
	}
	*pos_out = pos;
	return 0;
}

/* TREE: "<path> NUL <entries> SP <subtrees> LF [<oid> when entries >= 0]" repeated. */
static int read_cache_tree(struct index_reader *r, size_t pos, size_t end)
{
	while (pos < end) {
		const unsigned char *nul = memchr(r->buf + pos, '\0', end - pos);
		const unsigned char *lf;
		size_t path_len;
		bool valid;
		int ret;
		if (!nul || !(lf = memchr(nul, '\n', (size_t)(r->buf + end - nul))))
			return CORRUPT(r->err, "%s: at offset %zu: bad cache-tree entry", r->name, pos);
		path_len = (size_t)(nul - (r->buf + pos));
		/* "-1" marks a tree that must be computed again: no name follows. */
		valid = nul[1] != '-';
		strbuf_reset(&r->path);
		strbuf_add(&r->path, r->buf + pos, path_len);
		pos = (size_t)(lf - r->buf) + 1;
		if (!valid)
			continue;
		if (r->rawsz > end - pos)
			return CORRUPT(r->err, "%s: at offset %zu: cache-tree entry is truncated",
				       r->name, pos);
		{
			struct object_id oid;
			oid_from_raw(&oid, r->buf + pos, r->algo);
			ret = r->visitor->object(&oid, OBJ_TREE, r->path.buf, r->visitor->data);
			if (ret)
				return ret;
		}
		pos += r->rawsz;
	}
	return 0;
}

/* REUC: "<path> NUL <mode> NUL <mode> NUL <mode> NUL" then a name per non-zero mode. */
static int read_resolve_undo(struct index_reader *r, size_t pos, size_t end)
{
	while (pos < end) {
		const unsigned char *nul = memchr(r->buf + pos, '\0', end - pos);
		unsigned long modes[3];
		if (!nul)
			return CORRUPT(r->err, "%s: at offset %zu: bad resolve-undo entry", r->name, pos);
		strbuf_reset(&r->path);
		strbuf_add(&r->path, r->buf + pos, (size_t)(nul - (r->buf + pos)));
		pos = (size_t)(nul - r->buf) + 1;
		for (int i = 0; i < 3; i++) {
			char *endp;
			nul = pos < end ? memchr(r->buf + pos, '\0', end - pos) : NULL;
			if (!nul)
				return CORRUPT(r->err, "%s: at offset %zu: bad resolve-undo entry",
					       r->name, pos);
			modes[i] = strtoul((const char *)r->buf + pos, &endp, 8);
			if ((const unsigned char *)endp != nul)
				return CORRUPT(r->err, "%s: at offset %zu: bad resolve-undo mode",
					       r->name, pos);
			pos = (size_t)(nul - r->buf) + 1;
		}
		for (int i = 0; i < 3; i++) {
			struct object_id oid;
			int ret;
			if (!modes[i])
				continue;
			if (r->rawsz > end - pos)
				return CORRUPT(r->err, "%s: at offset %zu: resolve-undo entry is truncated",
					       r->name, pos);
			oid_from_raw(&oid, r->buf + pos, r->algo);
			pos += r->rawsz;
			if ((modes[i] & MODE_TYPE_MASK) == MODE_GITLINK)
				continue;
			ret = r->visitor->object(&oid, OBJ_BLOB, r->path.buf, r->visitor->data);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* A directory being built: its path ("" or "a/b/") and its tree so far. */
struct open_dir {
	size_t path_len;
	struct strbuf tree;
};

static void add_tree_entry(struct strbuf *tree, uint32_t mode, const char *name, size_t name_len,
			   const struct object_id *oid, size_t rawsz)
{
	strbuf_addf(tree, "%o ", (mode & MODE_TYPE_MASK) == MODE_DIR ? MODE_DIR : mode);
	strbuf_add(tree, name, name_len);
	strbuf_addch(tree, '\0');
	strbuf_add(tree, oid->hash, rawsz);
}

/* Finish the innermost open directory into its parent (the root into nothing). */
static int close_dir(struct index_reader *r, struct open_dir *dirs, size_t *depth,
		     struct strbuf *dir_path)
{
	struct open_dir *d = &dirs[*depth - 1];
	struct object_id oid;
	int ret = hash_object(r->algo, OBJ_TREE, d->tree.buf, d->tree.len, &oid, r->err);
	if (!ret)
		ret = r->visitor->store_tree(&oid, (const unsigned char *)d->tree.buf, d->tree.len,
					     r->visitor->data);
	/* the object's path is the directory's without its slash */
	strbuf_setlen(dir_path, d->path_len ? d->path_len - 1 : 0);
	if (!ret)
		ret = r->visitor->object(&oid, OBJ_TREE, dir_path->buf, r->visitor->data);
	if (*depth > 1) {
		struct open_dir *parent = &dirs[*depth - 2];
		if (!ret)
			add_tree_entry(&parent->tree, MODE_DIR, dir_path->buf + parent->path_len,
				       dir_path->len - parent->path_len, &oid, r->rawsz);
		strbuf_setlen(dir_path, parent->path_len);
	}
	strbuf_reset(&d->tree);
	(*depth)--;
	return ret;
}

/*
 * The trees of a sparse index's entries, as git computes them when it
 * expands the index. The entries are sorted by path, which within one
 * directory is a tree's order too (a directory "x" sorts as "x/" in
 * both). Iterative: one open tree per level of the current path.
 */
static int compute_trees(struct index_reader *r)
{
	struct open_dir *dirs = NULL;
	size_t depth = 0, alloc = 0, inited = 0;
	struct strbuf dir_path = STRBUF_INIT;
	int ret = 0;

	for (size_t i = 0; !ret && i < r->nr_entries; i++) {
		const char *path, *slash;
		size_t len;

		path = r->paths.buf + r->entries[i].path_at;
		len = strlen(path);
		/* a sparse directory entry is "dir/": the tree of that directory */
		if (len && path[len - 1] == '/')
			len--;
		while (!ret && depth > 1 &&
		       (dir_path.len > len || memcmp(path, dir_path.buf, dir_path.len)))
			ret = close_dir(r, dirs, &depth, &dir_path);
		/* open the directories of the path, the root first of all */
		for (;;) {
			if (depth) {
				slash = memchr(path + dir_path.len, '/', len - dir_path.len);
				if (!slash)
					break;
				if (slash == path + dir_path.len) {
					ret = CORRUPT(r->err, "%s: index entry '%s' has an empty "
						      "path component", r->name, path);
					break;
				}
				strbuf_add(&dir_path, path + dir_path.len,
					   (size_t)(slash - (path + dir_path.len)) + 1);
			}
			ALLOC_GROW(dirs, depth + 1, alloc);
			if (depth == inited) {
				strbuf_init(&dirs[depth].tree, 0);
				inited++;
			}
			dirs[depth++].path_len = dir_path.len;
		}
		if (!ret)
			add_tree_entry(&dirs[depth - 1].tree, r->entries[i].mode,
				       path + dir_path.len, len - dir_path.len,
				       &r->entries[i].oid, r->rawsz);
	}
	while (!ret && depth)
		ret = close_dir(r, dirs, &depth, &dir_path);
	for (size_t i = 0; i < inited; i++)
		strbuf_release(&dirs[i].tree);
	free(dirs);
	strbuf_release(&dir_path);
	return ret;
}

int index_buf_for_each_object(const unsigned char *buf, size_t len, const char *name,
			      int algo, const struct index_visitor *visitor,
			      struct gp_error *err)
{
	struct index_reader r = { .buf = buf, .name = name, .algo = algo,
				  .rawsz = gp_hash_algos[algo].rawsz, .visitor = visitor,
				  .err = err };
	uint32_t version, nr;
	size_t pos = 12;
	bool sparse = false;
	int ret;

	if (len < 12 + r.rawsz)
		return CORRUPT(err, "%s: index file is too short (%zu bytes)", name, len);
	r.len = len - r.rawsz;
	if (get_be32(buf) != INDEX_SIGNATURE)
		return CORRUPT(err, "%s: at offset 0: bad index signature", name);
	version = get_be32(buf + 4);
	if (version < 2 || version > 4)
		return CORRUPT(err, "%s: at offset 4: bad index version %" PRIu32, name, version);
	nr = get_be32(buf + 8);
	strbuf_init(&r.path, 0);
	ret = read_entries(&r, version, nr, &pos);
	while (!ret && pos < r.len) {
		uint32_t sig, size;
		if (8 > r.len - pos) {
			ret = CORRUPT(err, "%s: at offset %zu: truncated extension header", name, pos);
			break;
		}
		sig = get_be32(buf + pos);
		size = get_be32(buf + pos + 4);
		pos += 8;
		if (size > r.len - pos) {
			ret = CORRUPT(err, "%s: at offset %zu: extension of %" PRIu32
				      " bytes runs past the end", name, pos - 8, size);
			break;
		}
		if (sig == EXT_TREE)
			ret = read_cache_tree(&r, pos, pos + size);
		else if (sig == EXT_REUC)
			ret = read_resolve_undo(&r, pos, pos + size);
		else if (sig == EXT_LINK)
			ret = gp_error_set(err, GP_EINVAL, "%s: split indexes are not supported", name);
		else if (sig == EXT_SDIR)
			sparse = true;
		pos += size;
	}
	if (!ret && sparse && visitor->store_tree) {
		size_t end;
		r.collect = true;
		strbuf_init(&r.paths, 0);
		ret = read_entries(&r, version, nr, &end);
		if (!ret && !r.unmerged)
			ret = compute_trees(&r);
		strbuf_release(&r.paths);
		free(r.entries);
	}
	strbuf_release(&r.path);
	return ret;
}

int index_file_for_each_object(const char *path, int algo, const struct index_visitor *visitor,
			       struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;
	if (strbuf_read_file(&sb, path, 0) < 0) {
		ret = errno == ENOENT ? 0 : gp_error_errno(err, "cannot read '%s'", path);
		strbuf_release(&sb);
		return ret;
	}
	ret = index_buf_for_each_object((const unsigned char *)sb.buf, sb.len, path, algo,
					visitor, err);
	strbuf_release(&sb);
	return ret;
}
