/*
 * auth.c: see auth.h.
 */
#include "auth.h"
#include "../error.h"
#include "../hash.h"
#include "../strbuf.h"
#include "../util.h"
#include <crypt.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

/* Remembered good answers: a minute each, a bounded table. */
#define REMEMBER_NS (60ull * 1000000000ull)
#define REMEMBER_SLOTS 1024
/* An Authorization value longer than this never authenticates. */
#define HEADER_MAX 1024

struct user {
	char *name;
	char *hash;
};

struct remembered {
	unsigned char digest[32];
	char user[SERVE_AUTH_USER_MAX + 1];
	uint64_t until_ns;
};

struct serve_auth {
	pthread_mutex_t lock;
	char *path;
	struct timespec mtime;
	off_t size;
	struct user *users;
	size_t nr_users;
	struct remembered seen[REMEMBER_SLOTS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void free_users(struct user *users, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(users[i].name);
		/* the hashes are secrets of a kind: not left in freed memory */
		explicit_bzero(users[i].hash, strlen(users[i].hash));
		free(users[i].hash);
	}
	free(users);
}

static int load(const char *path, struct user **out, size_t *nr_out, struct stat *st,
		struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct user *users = NULL;
	size_t nr = 0, alloc = 0, line_no = 0;
	char *line, *next;
	FILE *f = fopen(path, "re");

	if (!f)
		return gp_error_errno(err, "cannot read credentials file '%s'", path);
	if (fstat(fileno(f), st) || strbuf_read_fd(&sb, fileno(f), 0) < 0) {
		fclose(f);
		strbuf_release(&sb);
		return gp_error_errno(err, "cannot read credentials file '%s'", path);
	}
	fclose(f);
	for (line = sb.buf; line && *line; line = next) {
		char *colon, *end;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line_no++;
		end = line + strlen(line);
		while (end > line && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*line || *line == '#')
			continue;
		colon = strchr(line, ':');
		if (!colon || colon == line || !colon[1] ||
		    (size_t)(colon - line) > SERVE_AUTH_USER_MAX) {
			free_users(users, nr);
			strbuf_release(&sb);
			return gp_error_set(err, GP_ECORRUPT,
					    "%s:%zu: not a \"user:hash\" line", path, line_no);
		}
		ALLOC_GROW(users, nr + 1, alloc);
		users[nr].name = xstrndup(line, (size_t)(colon - line));
		users[nr].hash = xstrdup(colon + 1);
		nr++;
	}
	explicit_bzero(sb.buf, sb.len);
	strbuf_release(&sb);
	*out = users;
	*nr_out = nr;
	return 0;
}

int serve_auth_open(struct serve_auth **out, const char *path, struct gp_error *err)
{
	struct serve_auth *auth = xcalloc(1, sizeof(*auth));
	struct stat st;
	int ret = load(path, &auth->users, &auth->nr_users, &st, err);
	if (ret) {
		free(auth);
		return ret;
	}
	pthread_mutex_init(&auth->lock, NULL);
	auth->path = xstrdup(path);
	auth->mtime = st.st_mtim;
	auth->size = st.st_size;
	*out = auth;
	return 0;
}

void serve_auth_free(struct serve_auth *auth)
{
	if (!auth)
		return;
	free_users(auth->users, auth->nr_users);
	pthread_mutex_destroy(&auth->lock);
	free(auth->path);
	free(auth);
}

/* Under the lock: read the file again if it changed (a bad new file keeps the old users). */
static void maybe_reload(struct serve_auth *auth)
{
	struct stat st;
	struct user *users;
	size_t nr;
	struct gp_error err = GP_ERROR_INIT;

	if (stat(auth->path, &st) ||
	    (st.st_mtim.tv_sec == auth->mtime.tv_sec && st.st_mtim.tv_nsec == auth->mtime.tv_nsec &&
	     st.st_size == auth->size))
		return;
	if (load(auth->path, &users, &nr, &st, &err)) {
		gp_error_clear(&err);
		return;
	}
	free_users(auth->users, auth->nr_users);
	auth->users = users;
	auth->nr_users = nr;
	auth->mtime = st.st_mtim;
	auth->size = st.st_size;
	/* a removed user or a changed password ends what was remembered */
	memset(auth->seen, 0, sizeof(auth->seen));
}

static int b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard base64 with padding; false on anything else. out holds len * 3 / 4 + 1. */
static bool b64_decode(const char *in, size_t len, char *out, size_t *out_len)
{
	size_t n = 0;
	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		for (int j = 0; j < 4; j++) {
			v[j] = in[i + j] == '=' && i + 4 == len && j >= 2 ? 0 : b64_value(in[i + j]);
			if (v[j] < 0)
				return false;
		}
		if (in[i + 2] == '=' && in[i + 3] != '=')
			return false;
		out[n++] = (char)(v[0] << 2 | v[1] >> 4);
		if (in[i + 2] != '=')
			out[n++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
		if (in[i + 3] != '=')
			out[n++] = (char)((v[2] & 3) << 6 | v[3]);
	}
	out[n] = '\0';
	*out_len = n;
	return true;
}

static bool same_string(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;
	/* as long as the stored hash, whatever matches: no timing hint */
	for (size_t i = 0; i < lb; i++)
		diff |= (unsigned char)(a[i < la ? i : 0] ^ b[i]);
	return !diff;
}

bool serve_auth_check(struct serve_auth *auth, const char *authorization, char *user)
{
	char decoded[HEADER_MAX], hash[GP_MAX_RAWSZ];
	const char *b64, *colon;
	size_t len, dlen, slot;
	struct crypt_data *cd;
	char *stored = NULL;
	bool ok = false;

	if (!auth || strncasecmp(authorization, "Basic ", 6))
		return false;
	for (b64 = authorization + 6; *b64 == ' '; b64++)
		;
	len = strlen(b64);
	if (len > sizeof(decoded) / 4 * 3 || !b64_decode(b64, len, decoded, &dlen))
		return false;
	colon = memchr(decoded, ':', dlen);
	if (!colon || colon == decoded || (size_t)(colon - decoded) > SERVE_AUTH_USER_MAX ||
	    memchr(decoded, '\0', dlen))
		goto out;
	hash_buf_checksum(GP_HASH_SHA256, authorization, strlen(authorization),
			  (unsigned char *)hash);
	memcpy(&slot, hash, sizeof(slot));
	slot %= REMEMBER_SLOTS;

	pthread_mutex_lock(&auth->lock);
	maybe_reload(auth);
	if (auth->seen[slot].until_ns > now_ns() && !memcmp(auth->seen[slot].digest, hash, 32)) {
		strcpy(user, auth->seen[slot].user);
		pthread_mutex_unlock(&auth->lock);
		ok = true;
		goto out;
	}
	/* a name given twice: its first line counts, as htpasswd reads it */
	for (size_t i = 0; i < auth->nr_users && !stored; i++)
		if (strlen(auth->users[i].name) == (size_t)(colon - decoded) &&
		    !memcmp(auth->users[i].name, decoded, (size_t)(colon - decoded)))
			stored = xstrdup(auth->users[i].hash);
	pthread_mutex_unlock(&auth->lock);
	if (!stored)
		goto out;

	/* the slow part, outside the lock: other requests go on meanwhile */
	cd = xcalloc(1, sizeof(*cd));
	{
		const char *out_hash = crypt_rn(colon + 1, stored, cd, (int)sizeof(*cd));
		ok = out_hash && out_hash[0] != '*' && same_string(out_hash, stored);
	}
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	explicit_bzero(stored, strlen(stored));
	free(stored);
	if (!ok)
		goto out;
	memcpy(user, decoded, (size_t)(colon - decoded));
	user[colon - decoded] = '\0';
	pthread_mutex_lock(&auth->lock);
	memcpy(auth->seen[slot].digest, hash, 32);
	strcpy(auth->seen[slot].user, user);
	auth->seen[slot].until_ns = now_ns() + REMEMBER_NS;
	pthread_mutex_unlock(&auth->lock);
out:
	explicit_bzero(decoded, sizeof(decoded));
	return ok;
}
