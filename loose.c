/*
 * loose.c: reading and writing loose objects (see loose.h).
 */
#include "loose.h"
#include "error.h"
#include "hashfile.h"
#include "strbuf.h"
#include "zstream.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

/* "commit 18446744073709551615\0" is 28 bytes; allow a little more. */
#define LOOSE_MAX_HEADER 64

char *loose_path(const char *objdir, const struct object_id *oid)
{
	char hex[GP_MAX_HEXSZ + 1];
	oid_to_hex_r(hex, oid);
	return xstrfmt("%s/%.2s/%s", objdir, hex, hex + 2);
}

bool loose_has(const char *objdir, const struct object_id *oid)
{
	char *path = loose_path(objdir, oid);
	bool has = !access(path, F_OK);
	free(path);
	return has;
}

int loose_parse_header(const unsigned char *buf, size_t len,
		       enum object_type *type, uint64_t *size, size_t *hdr_len,
		       struct gp_error *err)
{
	size_t pos = 0, type_len;
	uint64_t v = 0;
	while (pos < len && pos < LOOSE_MAX_HEADER && buf[pos] != ' ')
		pos++;
	if (pos >= len || buf[pos] != ' ')
		return CORRUPT(err, "bad object header: no type");
	type_len = pos;
	*type = type_from_name((const char *)buf, type_len);
	if (*type == OBJ_BAD)
		return CORRUPT(err, "bad object header: unknown type '%.*s'", (int)MIN(type_len, (size_t)16), buf);
	pos++;
	if (pos >= len || buf[pos] < '0' || buf[pos] > '9')
		return CORRUPT(err, "bad object header: no size");
	/* No leading zeros, as git writes it. */
	if (buf[pos] == '0' && pos + 1 < len && buf[pos + 1] != '\0')
		return CORRUPT(err, "bad object header: size has a leading zero");
	while (pos < len && buf[pos] >= '0' && buf[pos] <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return CORRUPT(err, "bad object header: size overflows");
		v = v * 10 + (uint64_t)(buf[pos] - '0');
		pos++;
	}
	if (pos >= len || buf[pos] != '\0')
		return CORRUPT(err, "bad object header: size not followed by NUL");
	*size = v;
	*hdr_len = pos + 1;
	return 0;
}

static int read_file(const char *path, struct strbuf *sb, uint64_t *disk_size,
		     struct gp_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return gp_error_set(err, GP_ENOTFOUND, "%s: no such object file", path);
		return gp_error_errno(err, "%s: cannot open", path);
	}
	if (fstat(fd, &st) < 0 || strbuf_read_fd(sb, fd, (size_t)st.st_size) < 0)
		ret = gp_error_errno(err, "%s: cannot read", path);
	else if (disk_size)
		*disk_size = (uint64_t)st.st_size;
	close(fd);
	return ret;
}

int loose_read_info(const char *objdir, const struct object_id *oid,
		    enum object_type *type, uint64_t *size, uint64_t *disk_size,
		    struct gp_error *err)
{
	char *path = loose_path(objdir, oid);
	struct strbuf file = STRBUF_INIT;
	unsigned char hdr[LOOSE_MAX_HEADER];
	size_t produced, hdr_len;
	int ret = read_file(path, &file, disk_size, err);
	if (!ret)
		ret = inflate_prefix(file.buf, file.len, hdr, sizeof(hdr), &produced, err);
	if (!ret)
		ret = loose_parse_header(hdr, produced, type, size, &hdr_len, err);
	if (ret && ret != GP_ENOTFOUND)
		gp_error_prefix(err, "%s", path);
	strbuf_release(&file);
	free(path);
	return ret;
}

/* git refuses a loose object header longer than this (with its NUL). */
#define GIT_MAX_HEADER 32

int loose_inspect_header(const char *objdir, const struct object_id *oid,
			 enum loose_header_state *state, enum object_type *type,
			 uint64_t *size, struct gp_error *err)
{
	char *path = loose_path(objdir, oid);
	struct strbuf file = STRBUF_INIT;
	unsigned char hdr[LOOSE_MAX_HEADER];
	size_t produced = 0, hdr_len, type_len;
	int ret = read_file(path, &file, NULL, err);
	if (ret)
		goto out;
	*state = LOOSE_HEADER_OK;
	if (!file.len) {
		*state = LOOSE_HEADER_EMPTY;
		goto out;
	}
	if (inflate_prefix_git(file.buf, file.len, hdr, GIT_MAX_HEADER, &produced, err)) {
		*state = LOOSE_HEADER_UNREADABLE;
		goto out;
	}
	if (!memchr(hdr, '\0', produced)) {
		*state = produced == GIT_MAX_HEADER ? LOOSE_HEADER_TOO_LONG : LOOSE_HEADER_MALFORMED;
		if (*state == LOOSE_HEADER_MALFORMED)
			CORRUPT(err, "bad object header: not terminated");
		goto out;
	}
	type_len = strcspn((const char *)hdr, " ");
	if (type_len < produced && memchr(hdr, '\0', type_len) == NULL &&
	    type_from_name((const char *)hdr, type_len) == OBJ_BAD) {
		*state = LOOSE_HEADER_BAD_TYPE;
		goto out;
	}
	if (loose_parse_header(hdr, produced, type, size, &hdr_len, err)) {
		const char *digits = (const char *)hdr + type_len + 1;
		size_t nr_digits = strspn(digits, "0123456789");
		*state = LOOSE_HEADER_MALFORMED;
		/* more than 20 digits, or 20 that compare above 2^64 - 1 */
		if (nr_digits > 20 || (nr_digits == 20 && strncmp(digits, "18446744073709551615", 20) > 0))
			*state = LOOSE_HEADER_HUGE;
	}
out:
	strbuf_release(&file);
	free(path);
	return ret;
}

int loose_read(const char *objdir, const struct object_id *oid,
	       enum object_type *type, unsigned char **data, size_t *size,
	       struct gp_error *err)
{
	char *path = loose_path(objdir, oid);
	struct strbuf file = STRBUF_INIT, out = STRBUF_INIT;
	unsigned char hdr[LOOSE_MAX_HEADER];
	size_t produced, hdr_len, consumed, want;
	uint64_t declared;
	int ret = read_file(path, &file, NULL, err);
	if (ret)
		goto out;
	ret = inflate_prefix(file.buf, file.len, hdr, sizeof(hdr), &produced, err);
	if (!ret)
		ret = loose_parse_header(hdr, produced, type, &declared, &hdr_len, err);
	if (ret)
		goto prefix;
	/* deflate cannot expand by more than ~1032:1. */
	if (declared > SIZE_MAX - hdr_len - 1 || declared / 1100 > file.len + 64) {
		ret = CORRUPT(err, "declared size %" PRIu64 " is impossible for %zu bytes",
			      declared, file.len);
		goto prefix;
	}
	want = (size_t)declared + hdr_len;
	ret = inflate_to_strbuf(file.buf, file.len, &out, want, &consumed, err);
	if (ret)
		goto prefix;
	if (out.len != want) {
		ret = CORRUPT(err, "object has %zu bytes, header says %" PRIu64,
			      out.len - MIN(out.len, hdr_len), declared);
		goto prefix;
	}
	*size = (size_t)declared;
	*data = xmalloc(*size + 1);
	memcpy(*data, out.buf + hdr_len, *size);
	(*data)[*size] = '\0';
	goto out;
prefix:
	gp_error_prefix(err, "%s", path);
out:
	strbuf_release(&file);
	strbuf_release(&out);
	free(path);
	return ret;
}

int loose_write(const char *objdir, int algo, enum object_type type,
		const void *data, size_t len, struct object_id *oid,
		struct gp_error *err)
{
	char hdr[64];
	size_t hdr_len = format_object_header(hdr, sizeof(hdr), type, len);
	struct strbuf raw = STRBUF_INIT, z = STRBUF_INIT;
	struct hashfile *f = NULL;
	char *path, *dir;
	int ret;

	ret = hash_object(algo, type, data, len, oid, err);
	if (ret)
		return ret;
	path = loose_path(objdir, oid);
	if (!access(path, F_OK)) {
		free(path);
		return 0;
	}
	dir = xstrndup(path, strlen(path) - (gp_hash_algos[algo].hexsz - 2) - 1);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		ret = gp_error_errno(err, "unable to create directory '%s'", dir);
		goto out;
	}
	strbuf_add(&raw, hdr, hdr_len);
	strbuf_add(&raw, data, len);
	deflate_to_strbuf(raw.buf, raw.len, -1, &z);
	ret = hashfile_create(&f, path, algo, err);
	if (ret)
		goto out;
	hashfile_write(f, z.buf, z.len);
	ret = hashfile_commit(f, NULL, HASHFILE_NO_TRAILER | HASHFILE_KEEP_EXISTING, err);
out:
	strbuf_release(&raw);
	strbuf_release(&z);
	free(dir);
	free(path);
	return ret;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int loose_for_each(const char *objdir, int algo, loose_each_fn *fn, void *data)
{
	size_t hexsz = gp_hash_algos[algo].hexsz;
	struct strbuf path = STRBUF_INIT;
	int ret = 0;
	for (unsigned fan = 0; fan < 256 && !ret; fan++) {
		DIR *d;
		struct dirent *de;
		size_t base;
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%02x", objdir, fan);
		d = opendir(path.buf);
		if (!d)
			continue;
		strbuf_addch(&path, '/');
		base = path.len;
		while (!ret && (de = readdir(d))) {
			char hex[GP_MAX_HEXSZ + 1];
			struct object_id oid;
			if (strlen(de->d_name) != hexsz - 2 || !is_hex(de->d_name, hexsz - 2))
				continue;
			snprintf(hex, 3, "%02x", fan);
			memcpy(hex + 2, de->d_name, hexsz - 2);
			hex[hexsz] = '\0';
			if (hex_to_oid(hex, algo, &oid))
				continue;
			strbuf_setlen(&path, base);
			strbuf_addstr(&path, de->d_name);
			ret = fn(&oid, path.buf, data);
		}
		closedir(d);
	}
	strbuf_release(&path);
	return ret;
}
