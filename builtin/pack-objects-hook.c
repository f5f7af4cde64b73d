/*
 * builtin/pack-objects-hook.c: gitpack pack-objects-hook, the pack cache
 * for a stock Git server. Set as uploadpack.packObjectsHook in the
 * server's protected config:
 *
 *   [uploadpack]
 *	packObjectsHook = gitpack pack-objects-hook --cache-dir=/var/cache/gitpack
 *
 * git upload-pack then runs "<hook> git pack-objects <args>" in the git
 * directory with the request on standard input; the hook answers from
 * the cache or runs gitpack pack-objects and keeps what it wrote.
 *
 * Processes share the cache through its directory: a lock file per key
 * (flock, released by the kernel if a process dies) makes identical
 * requests wait for the one generating, then read its file rather than
 * generate again. Files: "<hex>.hook" (a 40-byte header: magic, the
 * pack's length, the progress' length; then the pack, then the progress
 * text), "<hex>.hook.lock", "<hex>.hook.count" (a byte per request: the
 * occurrences), "<hex>.hook.tmp-<pid>" while written.
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../pack-cache.h"
#include "../repository.h"
#include "../run-command.h"
#include "../strbuf.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEADER_SIZE 40
static const char magic[24] = "gitpack hook stream\n";
#define MAX_STDIN (1ull << 30)
#define MAX_PROGRESS (1u << 20)

struct hook_opts {
	const char *dir;
	uint64_t max_bytes;
	int min_occurrences;
	int max_age_s;
};


/* Copy len bytes of fd from offset to out_fd (a pipe, mostly). */
static int copy_out(int out_fd, int fd, off_t offset, uint64_t len)
{
	while (len) {
		ssize_t n = sendfile(out_fd, fd, &offset, len > (1u << 30) ? (1u << 30) : (size_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
			char buf[65536];
			size_t want = len < sizeof(buf) ? (size_t)len : sizeof(buf);
			n = pread(fd, buf, want, offset);
			if (n <= 0 || write_in_full(out_fd, buf, (size_t)n) < 0)
				return -1;
			offset += n;
		} else if (n <= 0) {
			return -1;
		}
		len -= (uint64_t)n;
	}
	return 0;
}

/*
 * Send a kept entry: its progress to stderr, its pack to stdout. Returns
 * 1 when there is no fresh, whole entry (the caller generates), 0 when
 * it was sent, -1 when stdout failed.
 */
static int send_entry(const char *path, const struct hook_opts *o)
{
	unsigned char h[HEADER_SIZE];
	struct stat st;
	uint64_t pack_len, progress_len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 1;

	if (fd < 0)
		return 1;
	if (fstat(fd, &st) || time(NULL) - st.st_mtime > o->max_age_s ||
	    pread_in_full(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, magic, sizeof(magic)))
		goto out;
	pack_len = get_be64(h + 24);
	progress_len = get_be64(h + 32);
	if ((uint64_t)st.st_size != HEADER_SIZE + pack_len + progress_len ||
	    progress_len > MAX_PROGRESS)
		goto out;
	if (progress_len) {
		char *text = xmalloc((size_t)progress_len);
		if (pread_in_full(fd, text, (size_t)progress_len,
				  (off_t)(HEADER_SIZE + pack_len)) == (ssize_t)progress_len)
			write_in_full(2, text, (size_t)progress_len);
		free(text);
	}
	ret = copy_out(1, fd, HEADER_SIZE, pack_len) ? -1 : 0;
	/* the last use, for eviction; the mtime stays the entry's age */
	{
		struct timespec times[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
		futimens(fd, times);
	}
out:
	close(fd);
	return ret;
}

/* Count this request; returns the requests within max_age, this one included. */
static uint64_t count_occurrence(const char *path, const struct hook_opts *o)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return 1;
	if (!fstat(fd, &st) && st.st_size && time(NULL) - st.st_mtime > o->max_age_s)
		if (ftruncate(fd, 0))
			st.st_size = 0;
	if (write(fd, "1", 1) != 1 || fstat(fd, &st)) {
		close(fd);
		return 1;
	}
	close(fd);
	return (uint64_t)st.st_size;
}

/* Expired entries go, then the least recently used while over the cap. */
static void evict(const struct hook_opts *o)
{
	DIR *dir = opendir(o->dir);
	struct dirent *de;
	struct file { char *path; time_t used; uint64_t size; } *files = NULL;
	size_t nr = 0, alloc = 0;
	uint64_t total = 0;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		size_t n = strlen(de->d_name);
		struct stat st;
		char *path;
		bool entry = n > 5 && !strcmp(de->d_name + n - 5, ".hook");
		/* counts and locks of keys nobody asked for lately go too */
		bool count = (n > 11 && !strcmp(de->d_name + n - 11, ".hook.count")) ||
			     (n > 10 && !strcmp(de->d_name + n - 10, ".hook.lock"));
		if (!entry && !count)
			continue;
		path = xstrfmt("%s/%s", o->dir, de->d_name);
		if (stat(path, &st)) {
			free(path);
			continue;
		}
		if (time(NULL) - st.st_mtime > o->max_age_s) {
			unlink(path);
			free(path);
			continue;
		}
		if (count) {
			free(path);
			continue;
		}
		ALLOC_GROW(files, nr + 1, alloc);
		files[nr].path = path;
		files[nr].used = st.st_atime;
		files[nr].size = (uint64_t)st.st_size;
		total += (uint64_t)st.st_size;
		nr++;
	}
	closedir(dir);
	while (o->max_bytes && total > o->max_bytes && nr) {
		size_t lru = 0;
		for (size_t i = 1; i < nr; i++)
			if (files[i].used < files[lru].used)
				lru = i;
		unlink(files[lru].path);
		total -= files[lru].size;
		free(files[lru].path);
		files[lru] = files[--nr];
	}
	for (size_t i = 0; i < nr; i++)
		free(files[i].path);
	free(files);
}

struct gen_state {
	int tmp_fd;
	bool tmp_failed, out_failed;
	uint64_t pack_len;
	struct strbuf progress;
};

static int gen_output(void *data, int stream, const void *buf, size_t len)
{
	struct gen_state *g = data;
	if (stream == 2) {
		write_in_full(2, buf, len);
		if (g->progress.len + len <= MAX_PROGRESS)
			strbuf_add(&g->progress, buf, len);
		return 0;
	}
	if (!g->out_failed && write_in_full(1, buf, len) < 0)
		g->out_failed = true;
	if (!g->tmp_failed && write_in_full(g->tmp_fd, buf, len) < 0)
		g->tmp_failed = true;
	g->pack_len += len;
	/* upload-pack is gone and nothing keeps the file: stop */
	return g->out_failed && g->tmp_failed;
}

/* The command that makes the pack: this very program's pack-objects. */
static char *self_command(void)
{
	char *self = run_self_path();
	struct strbuf cmd = STRBUF_INIT;
	if (!self)
		return xstrdup("gitpack");
	strbuf_addch(&cmd, '\'');
	for (char *p = self; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(&cmd, "'\\''");
		else
			strbuf_addch(&cmd, *p);
	}
	strbuf_addch(&cmd, '\'');
	free(self);
	return strbuf_detach(&cmd, NULL);
}

#define PACK_OBJECTS_HOOK_USAGE \
	"usage: gitpack pack-objects-hook [--cache-dir=<dir>] [--cache-max-size=<size>]\n" \
	"                                 [--cache-min-occurrences=<n>] [--cache-max-age=<s>]\n" \
	"                                 git pack-objects <args>"

int cmd_pack_objects_hook(int argc, const char **argv, struct repository *repo)
{
	struct hook_opts o = { .max_bytes = 10ull << 30, .min_occurrences = 2, .max_age_s = 300 };
	struct config_set *cs;
	struct strbuf in = STRBUF_INIT, desc = STRBUF_INIT;
	struct gen_state g = { .tmp_fd = -1, .progress = STRBUF_INIT };
	unsigned char key[32];
	char hex[65], *entry, *lock_path, *count_path, *tmp, *cmd;
	const char *v, *const *pass;
	uint64_t occurrences;
	int i, lock_fd, code = 0, ret;
	struct gp_error err = GP_ERROR_INIT;

	if (argc == 2 && !strcmp(argv[1], "-h")) {
		/* a question, answered with success; no repository is needed for it */
		puts(PACK_OBJECTS_HOOK_USAGE);
		return 0;
	}
	cs = &repo->config;
	/* config first (the protected config that named the hook), then options */
	if (!config_get_string(cs, "serve.cachedir", &v))
		o.dir = v;
	if (!config_get_string(cs, "serve.cachemaxsize", &v) &&
	    !config_parse_uint64(v, &o.max_bytes))
		die("bad serve.cacheMaxSize '%s'", v);
	config_get_int(cs, "serve.cacheminoccurrences", &o.min_occurrences, &err);
	config_get_int(cs, "serve.cachemaxage", &o.max_age_s, &err);
	gp_error_clear(&err);
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		const char *a = argv[i];
		if (!strncmp(a, "--cache-dir=", 12))
			o.dir = a + 12;
		else if (!strncmp(a, "--cache-max-size=", 17)) {
			if (!config_parse_uint64(a + 17, &o.max_bytes))
				die("bad --cache-max-size '%s'", a + 17);
		} else if (!strncmp(a, "--cache-min-occurrences=", 24))
			o.min_occurrences = atoi(a + 24);
		else if (!strncmp(a, "--cache-max-age=", 16))
			o.max_age_s = atoi(a + 16);
		else
			die("unknown option '%s'\n" PACK_OBJECTS_HOOK_USAGE, a);
	}
	/* "git [<options>] pack-objects <args>": git puts --shallow-file '' there */
	{
		int j = i + 1;
		while (j < argc && strcmp(argv[j], "pack-objects"))
			j++;
		if (i >= argc || strcmp(argv[i], "git") || j >= argc)
			die("pack-objects-hook: expected \"git pack-objects <args>\", as "
			    "uploadpack.packObjectsHook is run");
	}
	/* run as this gitpack with the same words: "<gitpack> [<options>] pack-objects <args>" */
	pass = argv + i + 1;
	if (!o.dir)
		die("pack-objects-hook: no cache directory (--cache-dir or serve.cacheDir)");
	cmd = self_command();
	if (o.min_occurrences < 1 || o.max_age_s < 1)
		die("pack-objects-hook: the minimum occurrences and the maximum age must be positive");
	if (strbuf_read_fd(&in, 0, 4096) < 0)
		die("pack-objects-hook: cannot read the request: %s", strerror(errno));
	if (in.len > MAX_STDIN)
		die("pack-objects-hook: request too large");
	if (mkdir(o.dir, 0700) && errno != EEXIST)
		die("cannot create pack cache directory '%s': %s", o.dir, strerror(errno));

	strbuf_addstr(&desc, "gitpack pack-objects-hook 1\n");
	for (const char *const *a = pass; *a; a++)
		strbuf_add(&desc, *a, strlen(*a) + 1);
	strbuf_addch(&desc, '\n');
	strbuf_add(&desc, in.buf, in.len);
	pack_cache_key(repo, desc.buf, desc.len, key);
	for (int k = 0; k < 32; k++)
		snprintf(hex + 2 * k, 3, "%02x", key[k]);
	entry = xstrfmt("%s/%s.hook", o.dir, hex);
	lock_path = xstrfmt("%s/%s.hook.lock", o.dir, hex);
	count_path = xstrfmt("%s/%s.hook.count", o.dir, hex);
	tmp = xstrfmt("%s/%s.hook.tmp-%d", o.dir, hex, (int)getpid());

	occurrences = count_occurrence(count_path, &o);
	/* one generation per key: the others wait here, then read its file */
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd >= 0)
		while (flock(lock_fd, LOCK_EX) && errno == EINTR)
			;
	ret = send_entry(entry, &o);
	if (ret <= 0) {
		if (lock_fd >= 0)
			close(lock_fd);
		return ret ? 128 : 0;
	}

	g.tmp_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (g.tmp_fd < 0 || write_in_full(g.tmp_fd, (unsigned char[HEADER_SIZE]){ 0 }, HEADER_SIZE) < 0)
		g.tmp_failed = true; /* the pack still goes out, uncached */
	ret = run_shell_stream(".", cmd, pass, in.buf, in.len, RUN_STREAM_STDERR, gen_output, &g,
			       &code, &err);
	if (ret)
		die_error(&err);
	if (!code && !g.tmp_failed) {
		unsigned char h[HEADER_SIZE];
		memcpy(h, magic, sizeof(magic));
		put_be64(h + 24, g.pack_len);
		put_be64(h + 32, g.progress.len);
		if (write_in_full(g.tmp_fd, g.progress.buf, g.progress.len) < 0 ||
		    pwrite_in_full(g.tmp_fd, h, sizeof(h), 0) < 0)
			g.tmp_failed = true;
	}
	if (g.tmp_fd >= 0)
		close(g.tmp_fd);
	/* occurrences counted meanwhile (the requests waiting on the lock) count too */
	if (!code && !g.tmp_failed && !g.out_failed) {
		struct stat st;
		if (!stat(count_path, &st) && (uint64_t)st.st_size > occurrences)
			occurrences = (uint64_t)st.st_size;
	}
	if (code || g.tmp_failed || occurrences < (uint64_t)o.min_occurrences || rename(tmp, entry))
		unlink(tmp);
	if (lock_fd >= 0)
		close(lock_fd);
	evict(&o);
	strbuf_release(&g.progress);
	strbuf_release(&in);
	strbuf_release(&desc);
	free(entry);
	free(lock_path);
	free(count_path);
	free(tmp);
	free(cmd);
	return code ? code : g.out_failed ? 128 : 0;
}
