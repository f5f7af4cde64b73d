/*
 * pack-cache.c: see pack-cache.h.
 *
 * One mutex guards the table of entries and the occurrence counts; a
 * condition variable wakes followers when a writer adds bytes or ends.
 * The bytes themselves move outside the lock: the writer appends to its
 * file, readers send from their own offsets through a descriptor the
 * entry keeps, so an entry evicted or expired while read (its file
 * unlinked) is still read whole.
 */
#include "pack-cache.h"
#include "error.h"
#include "hash.h"
#include "pkt-line.h"
#include "repository.h"
#include "strbuf.h"
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define KEY_RAWSZ 32
#define HEADER_SIZE 32
static const char header_magic[24] = "gitpack pack stream\n";
/* Free space below this on the cache's file system: generate without caching. */
#define MIN_FREE_BYTES (64ull << 20)
/* Entries held at once (each keeps a descriptor), whatever their size. */
#define MAX_ENTRIES 4096

enum entry_state { E_WRITING, E_DONE, E_FAILED };

struct entry {
	unsigned char key[KEY_RAWSZ];
	char hex[2 * KEY_RAWSZ + 1];
	enum entry_state state;
	int fd;                /* read-only, for readers; -1 once closed */
	uint64_t size;         /* stream bytes readable (after the header) */
	/*
	 * When the file fails mid-way (the disk fills) while followers read
	 * it: the bytes past file_size are kept in spill instead, so that a
	 * follower that sent part of the stream can send the rest. Such an
	 * entry is never kept.
	 */
	bool spilling;
	uint64_t file_size;
	struct strbuf spill;
	uint64_t created_ns, used_ns;
	unsigned refs;         /* threads using it: its writer, its readers */
	unsigned followers;    /* readers attached while it is written */
	bool listed;           /* in the table; false: freed by the last ref */
	struct entry *next;
};

struct occurrence {
	unsigned char key[KEY_RAWSZ];
	unsigned count;
	uint64_t first_ns;
	bool used;
};

struct pack_cache {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pack_cache_options opts;
	char *dir;
	struct entry *entries;
	size_t nr_entries;
	uint64_t bytes;
	struct occurrence *occ;     /* open addressing, 2 * max_keys slots */
	size_t nr_occ, occ_slots;
	uint64_t tmp_seq;
	struct pack_cache_stats stats;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t age_limit_ns(const struct pack_cache *cache)
{
	return (uint64_t)cache->opts.max_age_s * 1000000000ull;
}

static char *entry_path(const struct pack_cache *cache, const struct entry *e)
{
	return xstrfmt("%s/%s.stream", cache->dir, e->hex);
}

/* ---- the table ------------------------------------------------------------- */

static void entry_unlist(struct pack_cache *cache, struct entry *e)
{
	struct entry **pp = &cache->entries;
	if (!e->listed)
		return;
	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	e->listed = false;
	cache->nr_entries--;
	if (e->state == E_DONE) {
		char *path = entry_path(cache, e);
		unlink(path);
		free(path);
		cache->bytes -= e->size + HEADER_SIZE;
	}
}

/* Drop a reference; the last one of an unlisted entry frees it. Under the lock. */
static void entry_put(struct entry *e)
{
	if (--e->refs || e->listed)
		return;
	if (e->fd >= 0)
		close(e->fd);
	strbuf_release(&e->spill);
	free(e);
}

static void entry_remove(struct pack_cache *cache, struct entry *e)
{
	entry_unlist(cache, e);
	e->refs++;
	entry_put(e);
}

/* Expired entries go; then the least recently used, while over the caps. */
static void sweep(struct pack_cache *cache)
{
	uint64_t now = now_ns(), limit = age_limit_ns(cache);
	struct entry *e, *next;

	for (e = cache->entries; e; e = next) {
		next = e->next;
		if (e->state == E_FAILED || (e->state == E_DONE && now - e->created_ns > limit))
			entry_remove(cache, e);
	}
	while ((cache->opts.max_bytes && cache->bytes > cache->opts.max_bytes) ||
	       cache->nr_entries > MAX_ENTRIES) {
		struct entry *lru = NULL;
		for (e = cache->entries; e; e = e->next)
			if (e->state == E_DONE && (!lru || e->used_ns < lru->used_ns))
				lru = e;
		if (!lru)
			break;
		entry_remove(cache, lru);
		cache->stats.evictions++;
	}
	cache->stats.bytes = cache->bytes;
	cache->stats.entries = cache->nr_entries;
}

static struct entry *find(struct pack_cache *cache, const unsigned char *key)
{
	for (struct entry *e = cache->entries; e; e = e->next)
		if (e->state != E_FAILED && !memcmp(e->key, key, KEY_RAWSZ))
			return e;
	return NULL;
}

static struct entry *entry_new(struct pack_cache *cache, const unsigned char *key)
{
	struct entry *e = xcalloc(1, sizeof(*e));
	static const char hexdig[] = "0123456789abcdef";
	memcpy(e->key, key, KEY_RAWSZ);
	for (size_t i = 0; i < KEY_RAWSZ; i++) {
		e->hex[2 * i] = hexdig[key[i] >> 4];
		e->hex[2 * i + 1] = hexdig[key[i] & 15];
	}
	e->fd = -1;
	strbuf_init(&e->spill, 0);
	e->created_ns = e->used_ns = now_ns();
	e->listed = true;
	e->next = cache->entries;
	cache->entries = e;
	cache->nr_entries++;
	return e;
}

/*
 * Count one more request for key; returns how many there were within
 * max_age. The table is bounded: when half full, records older than
 * max_age go, and if that frees nothing, all of them (a flood of
 * distinct keys forgets counts rather than growing).
 */
static unsigned occurrence_bump(struct pack_cache *cache, const unsigned char *key)
{
	uint64_t now = now_ns(), limit = age_limit_ns(cache);
	size_t mask = cache->occ_slots - 1, i;
	uint64_t h;

	if (cache->nr_occ * 2 >= cache->occ_slots) {
		struct occurrence *old = cache->occ;
		size_t n = cache->occ_slots;
		cache->occ = xcalloc(n, sizeof(*old));
		cache->nr_occ = 0;
		for (size_t j = 0; j < n; j++) {
			if (!old[j].used || now - old[j].first_ns > limit)
				continue;
			memcpy(&h, old[j].key, sizeof(h));
			for (i = h & mask; cache->occ[i].used; i = (i + 1) & mask)
				;
			cache->occ[i] = old[j];
			cache->nr_occ++;
		}
		free(old);
		if (cache->nr_occ * 2 >= cache->occ_slots) {
			memset(cache->occ, 0, n * sizeof(*old));
			cache->nr_occ = 0;
		}
	}
	memcpy(&h, key, sizeof(h));
	for (i = h & mask; cache->occ[i].used; i = (i + 1) & mask) {
		struct occurrence *o = &cache->occ[i];
		if (memcmp(o->key, key, KEY_RAWSZ))
			continue;
		if (now - o->first_ns > limit) {
			o->count = 0;
			o->first_ns = now;
		}
		return ++o->count;
	}
	memcpy(cache->occ[i].key, key, KEY_RAWSZ);
	cache->occ[i].count = 1;
	cache->occ[i].first_ns = now;
	cache->occ[i].used = true;
	cache->nr_occ++;
	return 1;
}

static unsigned occurrence_count(struct pack_cache *cache, const unsigned char *key)
{
	size_t mask = cache->occ_slots - 1, i;
	uint64_t h;
	memcpy(&h, key, sizeof(h));
	for (i = h & mask; cache->occ[i].used; i = (i + 1) & mask)
		if (!memcmp(cache->occ[i].key, key, KEY_RAWSZ))
			return cache->occ[i].count;
	return 0;
}

/* ---- opening ------------------------------------------------------------------- */

static bool read_header(int fd, uint64_t *len)
{
	unsigned char h[HEADER_SIZE];
	if (pread_in_full(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, header_magic, sizeof(header_magic)))
		return false;
	*len = 0;
	for (int i = 0; i < 8; i++)
		*len = (*len << 8) | h[24 + i];
	return true;
}

static bool parse_hex_key(const char *hex, unsigned char *key)
{
	for (size_t i = 0; i < KEY_RAWSZ; i++) {
		int hi = hex_digit_value(hex[2 * i]), lo = hex_digit_value(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hex[2 * i] >= 'A' && hex[2 * i] <= 'F') ||
		    (hex[2 * i + 1] >= 'A' && hex[2 * i + 1] <= 'F'))
			return false;
		key[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

/* Take up a complete entry left by an earlier process, or remove the file. */
static void adopt(struct pack_cache *cache, const char *name)
{
	char *path = xstrfmt("%s/%s", cache->dir, name);
	unsigned char key[KEY_RAWSZ];
	size_t n = strlen(name);
	struct stat st;
	uint64_t len, age_ns;
	struct timespec now;
	int fd = -1;

	if (n == 2 * KEY_RAWSZ + 7 && !strcmp(name + 2 * KEY_RAWSZ, ".stream") &&
	    parse_hex_key(name, key) && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 &&
	    !fstat(fd, &st) && read_header(fd, &len) && (uint64_t)st.st_size == HEADER_SIZE + len &&
	    !find(cache, key)) {
		clock_gettime(CLOCK_REALTIME, &now);
		age_ns = (uint64_t)(now.tv_sec - st.st_mtim.tv_sec) * 1000000000ull;
		if (now.tv_sec >= st.st_mtim.tv_sec && age_ns < age_limit_ns(cache)) {
			struct entry *e = entry_new(cache, key);
			e->state = E_DONE;
			e->fd = fd;
			e->size = len;
			e->created_ns = e->used_ns = now_ns() - age_ns;
			cache->bytes += st.st_size;
			free(path);
			return;
		}
	}
	if (fd >= 0)
		close(fd);
	/* only this cache's own names: a hook cache may share the directory */
	if ((n > 7 && !strcmp(name + n - 7, ".stream")) || !strncmp(name, "tmp-", 4))
		unlink(path);
	free(path);
}

int pack_cache_open(struct pack_cache **out, const struct pack_cache_options *opts,
		    struct gp_error *err)
{
	struct pack_cache *cache;
	DIR *dir;
	struct dirent *de;
	size_t slots = 16;

	if (mkdir(opts->dir, 0700) && errno != EEXIST)
		return gp_error_errno(err, "cannot create pack cache directory '%s'", opts->dir);
	dir = opendir(opts->dir);
	if (!dir)
		return gp_error_errno(err, "cannot read pack cache directory '%s'", opts->dir);
	cache = xcalloc(1, sizeof(*cache));
	pthread_mutex_init(&cache->lock, NULL);
	pthread_cond_init(&cache->cond, NULL);
	cache->opts = *opts;
	if (!cache->opts.min_occurrences)
		cache->opts.min_occurrences = 1;
	if (!cache->opts.max_keys)
		cache->opts.max_keys = 1;
	cache->dir = xstrdup(opts->dir);
	while (slots < 2 * (size_t)cache->opts.max_keys)
		slots *= 2;
	cache->occ_slots = slots;
	cache->occ = xcalloc(slots, sizeof(*cache->occ));
	/* only complete entries survive a restart; the rest is removed */
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		adopt(cache, de->d_name);
	}
	closedir(dir);
	sweep(cache);
	*out = cache;
	return 0;
}

void pack_cache_free(struct pack_cache *cache)
{
	struct entry *e, *next;
	if (!cache)
		return;
	/* the files stay for the next process: only memory goes */
	for (e = cache->entries; e; e = next) {
		next = e->next;
		if (e->fd >= 0)
			close(e->fd);
		free(e);
	}
	pthread_mutex_destroy(&cache->lock);
	pthread_cond_destroy(&cache->cond);
	free(cache->occ);
	free(cache->dir);
	free(cache);
}

void pack_cache_stats(struct pack_cache *cache, struct pack_cache_stats *out)
{
	pthread_mutex_lock(&cache->lock);
	*out = cache->stats;
	pthread_mutex_unlock(&cache->lock);
}

/* ---- the key --------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The state of the object store, as far as it decides a pack's bytes:
 * the files of objects/pack (a push that made a pack, a repack) and the
 * alternates. Loose objects are not in it: an object's name is its
 * content, so a pack made before a loose object came is still the right
 * answer to a request that names the same objects.
 */
static void store_state(const struct repository *repo, struct gp_hash_ctx *ctx)
{
	char *packdir = xstrfmt("%s/pack", repo->objdir);
	char *alt = xstrfmt("%s/info/alternates", repo->objdir);
	DIR *dir = opendir(packdir);
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	struct strbuf sb = STRBUF_INIT;
	struct dirent *de;
	struct stat st;

	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "tmp_", 4))
			continue;
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrdup(de->d_name);
	}
	if (dir)
		closedir(dir);
	/* no pack at all (loose objects only): names is NULL, which qsort may not take */
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		char *path = xstrfmt("%s/%s", packdir, names[i]);
		if (!stat(path, &st))
			strbuf_addf(&sb, "%s %lld %lld.%09ld\n", names[i], (long long)st.st_size,
				    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		free(path);
		free(names[i]);
	}
	free(names);
	if (!stat(alt, &st))
		strbuf_addf(&sb, "alternates %lld %lld.%09ld\n", (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	hash_update(ctx, sb.buf, sb.len);
	strbuf_release(&sb);
	free(packdir);
	free(alt);
}

void pack_cache_key(const struct repository *repo, const char *key, size_t key_len,
		    unsigned char *out)
{
	struct gp_hash_ctx ctx;
	char *real = realpath(repo->commondir, NULL);
	struct strbuf head = STRBUF_INIT;

	strbuf_addf(&head, "gitpack pack cache 1\nrepository %s\nobjects %s\n",
		    real ? real : repo->commondir, repo->objdir);
	hash_init_checksum(&ctx, GP_HASH_SHA256);
	hash_update(&ctx, head.buf, head.len);
	store_state(repo, &ctx);
	hash_update(&ctx, key, key_len);
	hash_final_checksum(&ctx, out);
	strbuf_release(&head);
	free(real);
}

/* ---- streaming an entry ------------------------------------------------------------ */

/*
 * Send e's stream to client as it becomes readable, until the writer
 * is done. *sent: the bytes sent, so that a caller can tell "nothing
 * yet" from "part of it" when the writer fails.
 */
static int stream_entry(struct pack_cache *cache, struct entry *e,
			struct pack_cache_client *client, uint64_t *sent, struct gp_error *err)
{
	for (;;) {
		enum entry_state state;
		uint64_t avail;
		int ret;

		pthread_mutex_lock(&cache->lock);
		while (e->state == E_WRITING && e->size == *sent)
			pthread_cond_wait(&cache->cond, &cache->lock);
		state = e->state;
		avail = e->size - *sent;
		if (avail && e->spilling && *sent >= e->file_size) {
			/* from memory: copied under the lock, as the writer may grow it */
			char *copy;
			size_t n = avail > 65536 ? 65536 : (size_t)avail;
			copy = xmalloc(n);
			memcpy(copy, e->spill.buf + (*sent - e->file_size), n);
			pthread_mutex_unlock(&cache->lock);
			ret = client->out->write(client->out, copy, n, err);
			free(copy);
			if (ret)
				return ret;
			*sent += n;
			continue;
		}
		if (e->spilling && avail > e->file_size - *sent)
			avail = e->file_size - *sent;
		pthread_mutex_unlock(&cache->lock);
		if (avail) {
			ret = client->send_file(client, e->fd, HEADER_SIZE + *sent, (size_t)avail, err);
			if (ret)
				return ret;
			*sent += avail;
			continue;
		}
		if (state == E_DONE)
			return 0;
		return gp_error_set(err, GP_EIO, "the pack generation this fetch followed failed");
	}
}

/* ---- generating into an entry ------------------------------------------------------- */

/*
 * The writer's sink: every byte to the client that asked (while it is
 * there) and to the entry's file (while that works). The generation
 * stops only when nobody is left to read it.
 */
struct tee {
	struct pkt_sink sink;
	struct pack_cache *cache;
	struct entry *e;
	struct pkt_sink *client;
	int wfd;
	bool client_failed, file_failed;
	bool spilling;  /* the file failed; followers read the rest from memory */
	struct gp_error client_err;
	uint64_t written;
};

/* The most a spill may hold: past it, the followers fail after all. */
#define SPILL_MAX ((size_t)512 << 20)

/*
 * The file failed: with followers attached, the rest goes to memory so
 * that they finish; without, the entry fails (nobody attaches any more).
 */
static void tee_file_broke(struct tee *t)
{
	bool followers;
	pthread_mutex_lock(&t->cache->lock);
	followers = t->e->followers > 0;
	if (followers) {
		t->e->spilling = true;
		t->e->file_size = t->written;
	}
	pthread_mutex_unlock(&t->cache->lock);
	t->file_failed = true;
	t->spilling = followers;
	if (!followers) {
		pthread_mutex_lock(&t->cache->lock);
		t->e->state = E_FAILED;
		pthread_cond_broadcast(&t->cache->cond);
		pthread_mutex_unlock(&t->cache->lock);
	}
}

static void tee_spill(struct tee *t, const void *buf, size_t len)
{
	pthread_mutex_lock(&t->cache->lock);
	if (t->e->spill.len + len > SPILL_MAX) {
		t->spilling = false;
		t->e->state = E_FAILED;
	} else {
		strbuf_add(&t->e->spill, buf, len);
		t->e->size += len;
	}
	pthread_cond_broadcast(&t->cache->cond);
	pthread_mutex_unlock(&t->cache->lock);
}

static void tee_file_failed(struct tee *t)
{
	t->file_failed = true;
	pthread_mutex_lock(&t->cache->lock);
	t->e->state = E_FAILED;
	pthread_cond_broadcast(&t->cache->cond);
	pthread_mutex_unlock(&t->cache->lock);
}

static int tee_check(struct tee *t, struct gp_error *err)
{
	bool readers;
	if (!t->client_failed)
		return 0;
	if (t->file_failed && !t->spilling)
		goto gone;
	/*
	 * Nobody left to read: the generation stops, and the entry fails
	 * under the same lock, so that no request attaches between the
	 * decision and the failure (a follower that sent part of a failed
	 * entry would fail its fetch).
	 */
	pthread_mutex_lock(&t->cache->lock);
	readers = t->e->followers > 0;
	if (!readers) {
		t->e->state = E_FAILED;
		pthread_cond_broadcast(&t->cache->cond);
	}
	pthread_mutex_unlock(&t->cache->lock);
	if (readers)
		return 0;
	t->file_failed = true;
	t->spilling = false;
gone:
	return gp_error_set(err, GP_EIO, "%s", gp_error_msg(&t->client_err));
}

static int tee_write(struct pkt_sink *sink, const void *buf, size_t len, struct gp_error *err)
{
	struct tee *t = sink->data;
	if (!t->client_failed && t->client->write(t->client, buf, len, &t->client_err))
		t->client_failed = true;
	if (t->spilling) {
		tee_spill(t, buf, len);
	} else if (!t->file_failed) {
		if (write_in_full(t->wfd, buf, len) < 0) {
			tee_file_broke(t);
			if (t->spilling)
				tee_spill(t, buf, len);
		} else {
			t->written += len;
			pthread_mutex_lock(&t->cache->lock);
			t->e->size = t->written;
			pthread_cond_broadcast(&t->cache->cond);
			pthread_mutex_unlock(&t->cache->lock);
		}
	}
	return tee_check(t, err);
}

static int tee_flush(struct pkt_sink *sink, struct gp_error *err)
{
	struct tee *t = sink->data;
	if (!t->client_failed && pkt_sink_flush(t->client, &t->client_err))
		t->client_failed = true;
	return tee_check(t, err);
}

static bool disk_has_room(const struct pack_cache *cache)
{
	struct statvfs vfs;
	if (statvfs(cache->dir, &vfs))
		return false;
	return (uint64_t)vfs.f_bavail * vfs.f_frsize >= MIN_FREE_BYTES;
}

/*
 * Generate into e (which the caller created, WRITING, with one ref) and
 * to the client. Then keep it (when its key has been asked for often
 * enough) or let it go.
 */
static int generate_entry(struct pack_cache *cache, struct entry *e, char *tmp, int wfd,
			  upload_pack_generate_fn *generate, void *gen_data,
			  struct pack_cache_client *client, enum pack_cache_result *result,
			  struct gp_error *err)
{
	struct tee t = { .cache = cache, .e = e, .client = client->out, .wfd = wfd };
	unsigned char header[HEADER_SIZE] = { 0 };
	uint64_t start = now_ns();
	bool complete, keep = false;
	int ret;

	t.sink.write = tee_write;
	t.sink.flush = tee_flush;
	t.sink.data = &t;
	t.sink.fd = -1;
	if (e->state == E_FAILED)
		t.file_failed = true;
	ret = generate(gen_data, &t.sink, err);
	/* done even if the client left on the way: the followers had it all */
	complete = !ret;
	memcpy(header, header_magic, sizeof(header_magic));
	for (int i = 0; i < 8; i++)
		header[24 + i] = (unsigned char)(t.written >> (56 - 8 * i));
	if (!complete && (!t.file_failed || t.spilling))
		tee_file_failed(&t); /* a failed generation is never served */
	else if (!t.file_failed && pwrite_in_full(wfd, header, sizeof(header), 0) < 0)
		tee_file_broke(&t);
	close(wfd);

	pthread_mutex_lock(&cache->lock);
	cache->stats.generations_in_flight--;
	cache->stats.generated_bytes += t.written;
	cache->stats.generation_seconds_sum += (double)(now_ns() - start) / 1e9;
	if (!complete && !t.client_failed)
		cache->stats.generations_failed++;
	if (e->state == E_FAILED) {
		unlink(tmp);
		entry_unlist(cache, e);
	} else {
		char *path = entry_path(cache, e);
		keep = !e->spilling &&
		       occurrence_count(cache, e->key) >= cache->opts.min_occurrences &&
		       !rename(tmp, path);
		if (keep) {
			cache->bytes += t.written + HEADER_SIZE;
		} else {
			/* not kept: followers still read it through the descriptor */
			unlink(tmp);
			entry_unlist(cache, e);
		}
		e->state = E_DONE;
		if (!e->spilling)
			e->size = t.written;
		e->used_ns = now_ns();
		free(path);
	}
	*result = keep ? PACK_CACHE_MISS : PACK_CACHE_BYPASS;
	pthread_cond_broadcast(&cache->cond);
	entry_put(e);
	sweep(cache);
	pthread_mutex_unlock(&cache->lock);
	if (complete && t.client_failed)
		ret = gp_error_set(err, GP_EIO, "%s", gp_error_msg(&t.client_err));
	gp_error_clear(&t.client_err);
	return ret;
}

int pack_cache_send(struct pack_cache *cache, struct repository *repo, const char *key,
		    size_t key_len, upload_pack_generate_fn *generate, void *gen_data,
		    struct pack_cache_client *client, enum pack_cache_result *result,
		    struct gp_error *err)
{
	unsigned char k[KEY_RAWSZ];
	struct entry *e;
	char *tmp = NULL;
	int wfd = -1, ret;
	bool room = disk_has_room(cache);

	pack_cache_key(repo, key, key_len, k);
	pthread_mutex_lock(&cache->lock);
	sweep(cache);
	occurrence_bump(cache, k);
	e = find(cache, k);
	if (e) {
		uint64_t sent = 0;
		bool following = e->state == E_WRITING;
		e->refs++;
		e->used_ns = now_ns();
		if (following)
			e->followers++;
		*result = following ? PACK_CACHE_FOLLOW : PACK_CACHE_HIT;
		cache->stats.lookups[*result]++;
		pthread_mutex_unlock(&cache->lock);

		ret = stream_entry(cache, e, client, &sent, err);

		pthread_mutex_lock(&cache->lock);
		cache->stats.served_bytes += sent;
		if (following)
			e->followers--;
		entry_put(e);
		pthread_mutex_unlock(&cache->lock);
		if (!ret || sent || !following)
			return ret;
		/* the writer failed before anything went out: make it here */
		gp_error_clear(err);
		*result = PACK_CACHE_BYPASS;
		return generate(gen_data, client->out, err);
	}
	if (room && cache->nr_entries < MAX_ENTRIES) {
		tmp = xstrfmt("%s/tmp-%016" PRIx64 ".%d", cache->dir, ++cache->tmp_seq, (int)getpid());
		wfd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (wfd < 0) {
		/* no room, or no file: the fetch goes on without the cache */
		cache->stats.lookups[PACK_CACHE_BYPASS]++;
		cache->stats.generations++;
		pthread_mutex_unlock(&cache->lock);
		free(tmp);
		*result = PACK_CACHE_BYPASS;
		return generate(gen_data, client->out, err);
	}
	e = entry_new(cache, k);
	e->state = E_WRITING;
	e->refs = 1;
	e->fd = open(tmp, O_RDONLY | O_CLOEXEC);
	cache->stats.generations++;
	cache->stats.generations_in_flight++;
	pthread_mutex_unlock(&cache->lock);
	if (e->fd < 0 || write_in_full(wfd, (unsigned char[HEADER_SIZE]){ 0 }, HEADER_SIZE) < 0) {
		struct tee t = { .cache = cache, .e = e };
		tee_file_failed(&t);
	}
	ret = generate_entry(cache, e, tmp, wfd, generate, gen_data, client, result, err);
	pthread_mutex_lock(&cache->lock);
	cache->stats.lookups[*result]++;
	pthread_mutex_unlock(&cache->lock);
	free(tmp);
	return ret;
}
