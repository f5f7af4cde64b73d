/*
 * repo-index.c: reading entries of the index file (see repo-index.h and
 * gitformat-index, "The Git index file has the following format").
 */
#include "repo-index.h"
#include "error.h"
#include "repository.h"
#include "strbuf.h"

#define INDEX_SIGNATURE 0x44495243u /* "DIRC" */
#define INDEX_HEADER_SIZE 12
#define ENTRY_STAT_SIZE 40          /* ctime, mtime, dev, ino, mode, uid, gid, size */
#define ENTRY_MODE_OFFSET 24
#define FLAG_EXTENDED 0x4000
#define FLAG_STAGE_SHIFT 12
#define FLAG_STAGE_MASK 0x3

/* The v4 varint: 7 bits a byte, high bit "more", each continuation adds one. */
static bool read_varint(const unsigned char *buf, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v;
	unsigned char c;
	if (*pos >= len)
		return false;
	c = buf[(*pos)++];
	v = c & 0x7f;
	while (c & 0x80) {
		if (*pos >= len || v > (UINT64_MAX >> 7) - 1)
			return false;
		c = buf[(*pos)++];
		v = ((v + 1) << 7) | (c & 0x7f);
	}
	*out = v;
	return true;
}

int index_find_in_buf(const unsigned char *buf, size_t len, int algo,
		      const char *path, int stage, struct index_hit *hit,
		      struct gp_error *err)
{
	size_t rawsz = gp_hash_algos[algo].rawsz, pos = INDEX_HEADER_SIZE;
	size_t path_len = strlen(path);
	struct strbuf name = STRBUF_INIT;
	uint32_t version, nr;
	int ret = 0;

	memset(hit, 0, sizeof(*hit));
	if (len < INDEX_HEADER_SIZE + rawsz || get_be32(buf) != INDEX_SIGNATURE)
		return CORRUPT(err, "index: bad signature or too short (%zu bytes)", len);
	version = get_be32(buf + 4);
	nr = get_be32(buf + 8);
	if (version < 2 || version > 4)
		return CORRUPT(err, "index: unsupported version %" PRIu32, version);
	len -= rawsz; /* the checksum */
	for (uint32_t i = 0; i < nr; i++) {
		size_t start = pos, fixed = ENTRY_STAT_SIZE + rawsz + 2;
		unsigned flags;
		int entry_stage;
		if (fixed > len - pos) {
			ret = CORRUPT(err, "index: entry %" PRIu32 " at offset %zu is truncated", i, pos);
			goto out;
		}
		flags = get_be16(buf + pos + ENTRY_STAT_SIZE + rawsz);
		pos += fixed;
		if (flags & FLAG_EXTENDED) {
			if (version < 3 || 2 > len - pos) {
				ret = CORRUPT(err, "index: entry %" PRIu32 " has bad extended flags", i);
				goto out;
			}
			pos += 2;
		}
		if (version == 4) {
			uint64_t drop;
			const unsigned char *nul;
			if (!read_varint(buf, len, &pos, &drop) || drop > name.len) {
				ret = CORRUPT(err, "index: entry %" PRIu32 " has a bad path prefix", i);
				goto out;
			}
			nul = memchr(buf + pos, '\0', len - pos);
			if (!nul) {
				ret = CORRUPT(err, "index: entry %" PRIu32 " has an unterminated path", i);
				goto out;
			}
			strbuf_setlen(&name, name.len - (size_t)drop);
			strbuf_add(&name, buf + pos, (size_t)(nul - (buf + pos)));
			pos = (size_t)(nul - buf) + 1;
		} else {
			const unsigned char *nul = memchr(buf + pos, '\0', len - pos);
			size_t entry_len;
			if (!nul) {
				ret = CORRUPT(err, "index: entry %" PRIu32 " has an unterminated path", i);
				goto out;
			}
			strbuf_reset(&name);
			strbuf_add(&name, buf + pos, (size_t)(nul - (buf + pos)));
			/* padded with 1 to 8 NULs to a multiple of 8 from the entry's start */
			entry_len = ((size_t)(nul - (buf + start)) + 8) & ~(size_t)7;
			if (entry_len > len - start) {
				ret = CORRUPT(err, "index: entry %" PRIu32 " runs past the end", i);
				goto out;
			}
			pos = start + entry_len;
		}
		if (name.len != path_len || memcmp(name.buf, path, path_len))
			continue;
		entry_stage = (int)((flags >> FLAG_STAGE_SHIFT) & FLAG_STAGE_MASK);
		if (entry_stage != stage) {
			hit->other_stage = true;
			continue;
		}
		oid_from_raw(&hit->oid, buf + start + ENTRY_STAT_SIZE, algo);
		hit->mode = get_be32(buf + start + ENTRY_MODE_OFFSET);
		hit->found = true;
		goto out;
	}
	/* a split index keeps its entries elsewhere: not read here */
	for (size_t ext = pos; ext <= len && 8 <= len - ext;) {
		uint32_t ext_size = get_be32(buf + ext + 4);
		if (!memcmp(buf + ext, "link", 4)) {
			ret = gp_error_set(err, GP_EINVAL, "index: split index is not supported");
			goto out;
		}
		if (ext_size > len - ext - 8)
			break;
		ext += 8 + (size_t)ext_size;
	}
out:
	strbuf_release(&name);
	return ret;
}

int index_find(struct repository *repo, const char *path, int stage,
	       struct index_hit *hit, struct gp_error *err)
{
	const char *env = getenv("GIT_INDEX_FILE");
	char *file = env && *env ? xstrdup(env) : xstrfmt("%s/index", repo->gitdir);
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	memset(hit, 0, sizeof(*hit));
	if (strbuf_read_file(&sb, file, 0) < 0) {
		if (errno != ENOENT)
			ret = gp_error_errno(err, "%s: cannot read", file);
		goto out;
	}
	ret = index_find_in_buf((const unsigned char *)sb.buf, sb.len, repo->hash_algo,
				path, stage, hit, err);
	if (ret)
		gp_error_prefix(err, "%s", file);
out:
	strbuf_release(&sb);
	free(file);
	return ret;
}
