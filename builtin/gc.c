/*
 * builtin/gc.c: gitpack gc, git gc (git-gc(1), config/gc.adoc) for a
 * repository gitpack keeps. gc itself decides and orders; every step
 * is a child with git's own argv, as git's gc runs them:
 *
 *   pack-refs --all --prune [--auto]     gitpack (this binary, argv[0] "git")
 *   reflog expire --all                  git from PATH
 *   worktree prune --expire <date>       git from PATH
 *   rerere gc                            git from PATH
 *   repack -d -l ...                     gitpack
 *   prune --expire <date>                git from PATH
 *   commit-graph write --reachable       gitpack
 *
 * The first two are the "foreground" steps (skipped with
 * --skip-foreground-tasks, which maintenance's gc task gives: it ran
 * them itself). The job runs under $GIT_DIR/gc.pid, whose content names
 * the process and host holding it. --detach (or --auto with
 * gc.autoDetach) hands the rest to a copy of this process started with
 * posix_spawn (run_command_detached(), never fork) whose standard error
 * goes to $GIT_DIR/gc.log; a gc.log that is not empty and younger than
 * gc.logExpiry stops the next detached run, as in git.
 */
#include "../builtin.h"
#include "../config.h"
#include "../date.h"
#include "../error.h"
#include "../odb.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../refs.h"
#include "../repository.h"
#include "../run-command.h"
#include "../strbuf.h"
#include "../trace.h"
#include "../trace2.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

static const char *const gc_usage[] = {
	"git gc [<options>]",
	NULL,
};

/* Set in the environment of the detached copy: it is the background half of a run. */
#define GC_DETACHED_ENV "GITPACK_GC_DETACHED"

struct gc_config {
	bool pack_refs;
	bool prune_reflogs;
	int cruft_packs;               /* -1 until config or option decides */
	unsigned long max_cruft_size;
	int aggressive_depth, aggressive_window;
	bool detach_auto;
	const char *log_expiry;
	const char *prune_expire;      /* NULL: --no-prune */
	const char *worktree_expire;
	const char *expire_to;
	int auto_threshold, auto_pack_limit;
	unsigned long big_pack_threshold;
	const char *repack_filter, *repack_filter_to;
	bool write_commit_graph;
	bool precious_objects;
};

/* ------------------------------------------------------------------ */
/* Configuration                                                      */

static const char *cfg_string(struct repository *repo, const char *key, const char *dflt)
{
	const char *v;
	if (config_get_string(&repo->config, key, &v) || !v)
		return dflt;
	return v;
}

/* An expiry date from the config, checked as git checks it: a bad one is fatal. */
static const char *cfg_expiry(struct repository *repo, const char *key, const char *dflt)
{
	const char *v = cfg_string(repo, key, NULL);
	int64_t when;
	if (!v)
		return dflt;
	if (strcmp(v, "now") && !parse_expiry_date(v, (int64_t)time(NULL), &when)) {
		error("Invalid %s: '%s'", key, v);
		die_bad_config(repo, key);
	}
	return v;
}

/* Whether key is set to a date that never expires anything ("never", "false"). */
static bool cfg_is_never(struct repository *repo, const char *key)
{
	const char *v = cfg_string(repo, key, NULL);
	int64_t when;
	if (!v)
		return false;
	if (!parse_expiry_date(v, (int64_t)time(NULL), &when))
		die("failed to parse '%s' value '%s'", key, v);
	return when == 0;
}

static void read_gc_config(struct repository *repo, struct gc_config *cfg)
{
	const char *v = cfg_string(repo, "gc.packrefs", NULL);
	bool b;

	cfg->pack_refs = true;
	if (v && !strcasecmp(v, "notbare"))
		cfg->pack_refs = !repo->bare;
	else if (v && config_parse_bool(v, &b))
		cfg->pack_refs = b;
	/* Both kinds of entry kept for ever: "reflog expire" would do nothing. */
	cfg->prune_reflogs = !(cfg_is_never(repo, "gc.reflogexpire") &&
			       cfg_is_never(repo, "gc.reflogexpireunreachable"));
	cfg->aggressive_window = repo_config_int(repo, "gc.aggressivewindow", 250);
	cfg->aggressive_depth = repo_config_int(repo, "gc.aggressivedepth", 50);
	cfg->detach_auto = repo_config_bool(repo, "gc.autodetach", true);
	if (cfg->cruft_packs < 0)
		cfg->cruft_packs = repo_config_bool(repo, "gc.cruftpacks", true);
	cfg->max_cruft_size = repo_config_ulong(repo, "gc.maxcruftsize", 0);
	cfg->prune_expire = cfg_expiry(repo, "gc.pruneexpire", "2.weeks.ago");
	cfg->worktree_expire = cfg_expiry(repo, "gc.worktreepruneexpire", "3.months.ago");
	cfg->log_expiry = cfg_expiry(repo, "gc.logexpiry", "1.day.ago");
	cfg->auto_threshold = repo_config_int(repo, "gc.auto", 6700);
	cfg->auto_pack_limit = repo_config_int(repo, "gc.autopacklimit", 50);
	cfg->big_pack_threshold = repo_config_ulong(repo, "gc.bigpackthreshold", 0);
	cfg->repack_filter = cfg_string(repo, "gc.repackfilter", NULL);
	cfg->repack_filter_to = cfg_string(repo, "gc.repackfilterto", NULL);
	cfg->write_commit_graph = repo_config_bool(repo, "core.commitgraph", true) &&
				  repo_config_bool(repo, "gc.writecommitgraph", true);
	cfg->precious_objects = repo->precious_objects;
}

/* ------------------------------------------------------------------ */
/* Children                                                           */

static char *self_path(void)
{
	char *path = run_self_path();
	return path ? path : xstrdup("gitpack");
}

/* GIT_TRACE's line for a child, as git writes it: "trace: run_command: git repack -d ...". */
static void trace_child(const char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	if (!trace_enabled())
		return;
	strbuf_addstr(&sb, "trace: run_command:");
	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		strbuf_addch(&sb, ' ');
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789-_=./:,+@%^") == strlen(a)) {
			strbuf_addstr(&sb, a);
			continue;
		}
		strbuf_addch(&sb, '\'');
		for (; *a; a++) {
			if (*a == '\'')
				strbuf_addstr(&sb, "'\\''");
			else
				strbuf_addch(&sb, *a);
		}
		strbuf_addch(&sb, '\'');
	}
	trace_printf("%s", sb.buf);
	strbuf_release(&sb);
}

/*
 * Run one step: self true runs this gitpack (a command gitpack
 * implements), otherwise "git" from PATH. argv[0] is "git" either way,
 * so trace2 records the child git's gc records. Returns the exit code,
 * or -1 when the child could not be run (reported).
 */
static int run_step(bool self, const char *const *argv)
{
	struct gp_error err = GP_ERROR_INIT;
	int code = 0, id, ret;

	trace_child(argv);
	id = trace2_child_start("?", argv);
	if (self) {
		char *path = self_path();
		ret = run_program(path, argv, 0, &code, &err);
		free(path);
	} else {
		ret = run_command(argv, NULL, 0, 0, &code, &err);
	}
	trace2_child_exit(id, ret ? -1 : code);
	if (ret) {
		error("cannot run 'git %s': %s", argv[1], gp_error_msg(&err));
		gp_error_clear(&err);
		return -1;
	}
	return code;
}

/* ------------------------------------------------------------------ */
/* gc.pid                                                             */

static char *pid_path;      /* held while set: removed at exit */

static void remove_pid_file(void)
{
	if (pid_path) {
		unlink(pid_path);
		free(pid_path);
		pid_path = NULL;
	}
}

static void remove_pid_file_on_signal(int sig)
{
	if (pid_path)
		unlink(pid_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Take gc.pid unless another gc holds it (and not --force): a gc on
 * another host, or a live process of this one, that wrote the file in
 * the last 12 hours. Returns true when taken; otherwise *pid and host
 * name the holder.
 */
static bool take_gc_lock(struct repository *repo, bool force, uintmax_t *pid, struct strbuf *host)
{
	char *path = xstrfmt("%s/gc.pid", repo->commondir);
	char *lock = xstrfmt("%s.lock", path);
	char me[256] = "unknown";
	struct strbuf content = STRBUF_INIT;
	bool taken = false;
	int fd;

	if (pid_path) { /* this process holds it already */
		free(path);
		free(lock);
		return true;
	}
	if (gethostname(me, sizeof(me) - 1))
		strcpy(me, "unknown");
	me[sizeof(me) - 1] = '\0';
	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		die("unable to create '%s': %s", lock, strerror(errno));
	if (!force) {
		FILE *f = fopen(path, "r");
		struct stat st;
		char other[256];
		bool held = false;
		if (f && !fstat(fileno(f), &st) && time(NULL) - st.st_mtime <= 12 * 3600 &&
		    fscanf(f, "%ju %255s", pid, other) == 2)
			/* Another host's gc cannot be asked; this host's is alive or not. */
			held = strcmp(other, me) || !kill((pid_t)*pid, 0) || errno == EPERM;
		if (f)
			fclose(f);
		if (held) {
			strbuf_addstr(host, other);
			close(fd);
			unlink(lock);
			goto out;
		}
	}
	strbuf_addf(&content, "%ju %s", (uintmax_t)getpid(), me);
	if (write_in_full(fd, content.buf, content.len) < 0 || close(fd) < 0 ||
	    rename(lock, path)) {
		int e = errno;
		unlink(lock);
		die("unable to write '%s': %s", path, strerror(e));
	}
	pid_path = path;
	path = NULL;
	atexit(remove_pid_file);
	signal(SIGINT, remove_pid_file_on_signal);
	signal(SIGTERM, remove_pid_file_on_signal);
	signal(SIGHUP, remove_pid_file_on_signal);
	signal(SIGPIPE, remove_pid_file_on_signal);
	taken = true;
out:
	strbuf_release(&content);
	free(path);
	free(lock);
	return taken;
}

/* ------------------------------------------------------------------ */
/* gc.log                                                             */

static char *log_lock_path;

/*
 * At the end of a detached run: what it wrote to standard error
 * becomes gc.log (the next --auto run reports it rather than run); a
 * run that wrote nothing removes an old gc.log.
 */
static void finish_log(void)
{
	struct stat st;
	char *log = xstrfmt("%.*s", (int)(strlen(log_lock_path) - strlen(".lock")), log_lock_path);
	fflush(stderr);
	if (!fstat(2, &st) && st.st_size > 0) {
		rename(log_lock_path, log);
	} else {
		unlink(log);
		unlink(log_lock_path);
	}
	free(log);
}

static void log_to_gc_log(struct repository *repo)
{
	int fd;
	log_lock_path = xstrfmt("%s/gc.log.lock", repo->commondir);
	fd = open(log_lock_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd < 0)
		die("unable to create '%s': %s", log_lock_path, strerror(errno));
	if (dup2(fd, 2) < 0)
		die("cannot redirect standard error to '%s': %s", log_lock_path, strerror(errno));
	close(fd);
	atexit(finish_log);
}

/*
 * 0: go on; 1: the last detached run left a report younger than
 * gc.logExpiry (shown as a warning): this one is skipped.
 */
static int last_gc_failed(struct repository *repo, const struct gc_config *cfg)
{
	char *path = xstrfmt("%s/gc.log", repo->commondir);
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int64_t expiry;
	int ret = 0;

	if (!parse_expiry_date(cfg->log_expiry, (int64_t)time(NULL), &expiry))
		die("failed to parse gc.logExpiry value %s", cfg->log_expiry);
	if (stat(path, &st)) {
		if (errno != ENOENT)
			die("cannot stat '%s': %s", path, strerror(errno));
		goto out;
	}
	if ((int64_t)st.st_mtime < expiry)
		goto out;
	if (strbuf_read_file(&sb, path, 0) < 0)
		die("cannot read '%s': %s", path, strerror(errno));
	if (sb.len) {
		warning("the last background gc failed, and automatic gc stays off until "
			"%s is removed (correct the cause first). It reported:\n\n%s",
			path, sb.buf);
		ret = 1;
	}
out:
	strbuf_release(&sb);
	free(path);
	return ret;
}

/* ------------------------------------------------------------------ */
/* What there is                                                      */

static struct odb *open_odb(struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct odb *odb;
	if (repo_odb(repo, &odb, &err))
		die_error(&err);
	odb_reprepare(odb);
	return odb;
}

static bool pack_is_cruft(const struct packed_git *p)
{
	char *path;
	bool cruft;
	if (!ends_with(p->pack_path, ".pack"))
		return false;
	path = xstrfmt("%.*s.mtimes", (int)(strlen(p->pack_path) - 5), p->pack_path);
	cruft = !access(path, F_OK);
	free(path);
	return cruft;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* git's estimate: the loose objects in objects/17, times 256, above the limit rounded up. */
static bool too_many_loose(struct repository *repo, int limit)
{
	char *dir = xstrfmt("%s/17", repo->objdir);
	size_t hexsz = gp_hash_algos[repo->hash_algo].hexsz;
	int threshold = (limit + 255) / 256, nr = 0;
	DIR *d;
	struct dirent *de;

	if (limit <= 0) {
		free(dir);
		return false;
	}
	d = opendir(dir);
	free(dir);
	if (!d)
		return false;
	while (nr <= threshold && (de = readdir(d)))
		if (strlen(de->d_name) == hexsz - 2 &&
		    strspn(de->d_name, "0123456789abcdef") == hexsz - 2)
			nr++;
	closedir(d);
	return nr > threshold;
}

/* More local packs without a .keep than gc.autoPackLimit. */
static bool too_many_packs(struct odb *odb, int limit)
{
	size_t nr = 0;
	if (limit <= 0)
		return false;
	for (size_t i = 0; i < odb_nr_packs(odb); i++)
		if (odb_pack_is_local(odb, i) && !odb_pack(odb, i)->is_keep)
			nr++;
	return nr > (size_t)limit;
}

static bool auto_gc_needed(struct repository *repo, const struct gc_config *cfg)
{
	bool needed;
	if (cfg->auto_threshold <= 0)
		return false;
	if (too_many_loose(repo, cfg->auto_threshold))
		return true;
	needed = too_many_packs(open_odb(repo), cfg->auto_pack_limit);
	return needed;
}

/*
 * The packs to keep as they are: with limit, every local non-cruft
 * pack of at least limit bytes; without, the largest. Their base names
 * (pack-<hash>.pack) go to keep; returns the largest's index or -1.
 */
static long base_packs(struct odb *odb, uint64_t limit, struct strbuf *keep, size_t *nr)
{
	long largest = -1;
	uint64_t largest_size = 0;
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct packed_git *p = odb_pack(odb, i);
		uint64_t size;
		if (!odb_pack_is_local(odb, i) || pack_is_cruft(p))
			continue;
		size = file_size(p->pack_path);
		if (limit) {
			if (size >= limit) {
				const char *base = strrchr(p->pack_path, '/');
				strbuf_addf(keep, "%s%c", base ? base + 1 : p->pack_path, '\0');
				(*nr)++;
			}
		} else if (largest < 0 || size > largest_size) {
			largest = (long)i;
			largest_size = size;
		}
	}
	if (largest >= 0) {
		const char *path = odb_pack(odb, (size_t)largest)->pack_path;
		const char *base = strrchr(path, '/');
		strbuf_addf(keep, "%s%c", base ? base + 1 : path, '\0');
		(*nr)++;
	}
	return largest;
}

/*
 * Whether repacking around the pack at index base would want more than
 * half the machine's memory (git's rule of thumb: the pack and its
 * index in the page cache, a few hundred bytes of bookkeeping per
 * object, the delta caches). Then gc --auto keeps that pack.
 */
static bool repack_wants_too_much(struct repository *repo, struct odb *odb, long base)
{
	struct sysinfo si;
	uint64_t have, want, objects = 0;
	struct packed_git *p;
	if (base < 0 || sysinfo(&si))
		return false;
	have = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
	p = odb_pack(odb, (size_t)base);
	for (size_t i = 0; i < odb_nr_packs(odb); i++)
		objects += odb_pack(odb, i)->nr_objects;
	want = file_size(p->pack_path) + file_size(p->idx_path);
	want += objects * 256;
	want += repo_config_ulong(repo, "pack.deltacachesize", 256UL << 20);
	want += repo_config_ulong(repo, "core.deltabasecachelimit", 96UL << 20);
	return have && want >= have / 2;
}

/* ------------------------------------------------------------------ */
/* The steps                                                          */

struct gc_run {
	struct repository *repo;
	struct gc_config *cfg;
	bool quiet, auto_flag, aggressive, daemonized;
	int keep_largest;    /* -1: not given */
};

static int foreground_steps(struct gc_run *r)
{
	if (r->cfg->pack_refs) {
		const char *argv[] = { "git", "pack-refs", "--all", "--prune",
				       r->auto_flag ? "--auto" : NULL, NULL };
		/* gitpack packs loose refs and compacts reftable stacks */
		if (run_step(true, argv))
			return error("failed to run pack-refs");
	}
	if (r->cfg->prune_reflogs) {
		const char *argv[] = { "git", "reflog", "expire", "--all", NULL };
		if (run_step(false, argv))
			return error("failed to run reflog");
	}
	return 0;
}

struct argv_list {
	const char **v;
	char **owned;
	size_t nr, alloc, nr_owned, alloc_owned;
};

static void push(struct argv_list *a, const char *arg)
{
	ALLOC_GROW(a->v, a->nr + 2, a->alloc);
	a->v[a->nr++] = arg;
	a->v[a->nr] = NULL;
}

GP_PRINTF(2, 3) static void pushf(struct argv_list *a, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(a->owned, a->nr_owned + 1, a->alloc_owned);
	a->owned[a->nr_owned++] = strbuf_detach(&sb, NULL);
	push(a, a->owned[a->nr_owned - 1]);
}

static void argv_release(struct argv_list *a)
{
	for (size_t i = 0; i < a->nr_owned; i++)
		free(a->owned[i]);
	free(a->owned);
	free(a->v);
}

/* Everything into one pack: what is unreachable goes to a cruft pack, stays loose, or goes. */
static void repack_all_args(struct gc_run *r, struct argv_list *a, const struct strbuf *keep,
			    size_t nr_keep)
{
	const struct gc_config *cfg = r->cfg;
	const char *k = keep->buf;

	if (cfg->prune_expire && !strcmp(cfg->prune_expire, "now") &&
	    !(cfg->cruft_packs && cfg->expire_to)) {
		push(a, "-a");
	} else if (cfg->cruft_packs) {
		push(a, "--cruft");
		if (cfg->prune_expire)
			pushf(a, "--cruft-expiration=%s", cfg->prune_expire);
		if (cfg->max_cruft_size)
			pushf(a, "--max-cruft-size=%lu", cfg->max_cruft_size);
		if (cfg->expire_to)
			pushf(a, "--expire-to=%s", cfg->expire_to);
	} else {
		push(a, "-A");
		if (cfg->prune_expire)
			pushf(a, "--unpack-unreachable=%s", cfg->prune_expire);
	}
	for (size_t i = 0; i < nr_keep; i++, k += strlen(k) + 1)
		pushf(a, "--keep-pack=%s", k);
	if (cfg->repack_filter && *cfg->repack_filter)
		pushf(a, "--filter=%s", cfg->repack_filter);
	if (cfg->repack_filter_to && *cfg->repack_filter_to)
		pushf(a, "--filter-to=%s", cfg->repack_filter_to);
}

/*
 * gitpack's addition for a server: where a multi-pack-index is (with
 * the bitmaps fetches are served from), the repack that replaces the
 * packs it lists writes it anew, bitmaps included where they are
 * wanted (repack.writeBitmaps, true by default when bare), rather
 * than leave the repository without either. Without a MIDX the argv is
 * git's.
 */
static void midx_args(struct gc_run *r, struct odb *odb, struct argv_list *a)
{
	if (!odb_midx(odb))
		return;
	push(a, "--write-midx");
	if (repo_config_bool(r->repo, "repack.writebitmaps", r->repo->bare))
		push(a, "--write-bitmap-index");
}

/*
 * The object store's part, as git's gc: one repack child (all into
 * one, or with --auto and few enough packs only the loose objects),
 * then git prune for the loose objects that expired.
 */
static int repack_step(struct gc_run *r)
{
	const struct gc_config *cfg = r->cfg;
	struct argv_list a = { 0 };
	struct strbuf keep = STRBUF_INIT;
	size_t nr_keep = 0;
	struct odb *odb = open_odb(r->repo);
	int ret = 0;

	push(&a, "git");
	push(&a, "repack");
	push(&a, "-d");
	push(&a, "-l");
	if (r->aggressive) {
		push(&a, "-f");
		if (cfg->aggressive_depth > 0)
			pushf(&a, "--depth=%d", cfg->aggressive_depth);
		if (cfg->aggressive_window > 0)
			pushf(&a, "--window=%d", cfg->aggressive_window);
	}
	if (r->quiet)
		push(&a, "-q");
	if (!r->auto_flag) {
		if (r->keep_largest > 0)
			base_packs(odb, 0, &keep, &nr_keep);
		else if (r->keep_largest < 0 && cfg->big_pack_threshold)
			base_packs(odb, cfg->big_pack_threshold, &keep, &nr_keep);
		repack_all_args(r, &a, &keep, nr_keep);
		midx_args(r, odb, &a);
	} else if (too_many_packs(odb, cfg->auto_pack_limit)) {
		if (cfg->big_pack_threshold) {
			base_packs(odb, cfg->big_pack_threshold, &keep, &nr_keep);
			/* So many big packs that keeping them all would leave too many: keep one. */
			if (nr_keep >= (size_t)cfg->auto_pack_limit) {
				strbuf_reset(&keep);
				nr_keep = 0;
				base_packs(odb, 0, &keep, &nr_keep);
			}
		} else {
			long base = base_packs(odb, 0, &keep, &nr_keep);
			if (!repack_wants_too_much(r->repo, odb, base)) {
				strbuf_reset(&keep);
				nr_keep = 0;
			}
		}
		repack_all_args(r, &a, &keep, nr_keep);
		midx_args(r, odb, &a);
	} else {
		/* Only the loose objects, into a new pack: no bitmap for a pack of a few. */
		push(&a, "--no-write-bitmap-index");
	}
	if (run_step(true, a.v)) {
		ret = error("failed to run repack");
		goto out;
	}
	if (cfg->prune_expire) {
		const char *argv[] = { "git", "prune", "--expire", cfg->prune_expire, NULL, NULL,
				       NULL };
		size_t n = 4;
		if (r->quiet)
			argv[n++] = "--no-progress";
		if (r->repo->promisor)
			argv[n++] = "--exclude-promisor-objects";
		if (run_step(false, argv)) {
			ret = error("failed to run prune");
			goto out;
		}
	}
	if (r->auto_flag && too_many_loose(r->repo, cfg->auto_threshold))
		warning("There are too many unreachable loose objects; "
			"run 'git prune' to remove them.");
out:
	strbuf_release(&keep);
	argv_release(&a);
	return ret;
}

/* The pack files that belong together: "<base>.<ext>" for these. */
static const char *const pack_exts[] = { "pack", "idx", "keep", "bitmap", "rev", "mtimes",
					 "promisor" };

static bool pack_file_base(const char *name, size_t *base_len, const char **ext)
{
	const char *dot = strrchr(name, '.');
	if (!dot || dot == name)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(pack_exts); i++)
		if (!strcmp(dot + 1, pack_exts[i])) {
			*base_len = (size_t)(dot - name);
			*ext = pack_exts[i];
			return true;
		}
	return false;
}

/* By base, then extension: a base's files are then next to each other. */
static int cmp_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t xl = (size_t)(strrchr(x, '.') - x), yl = (size_t)(strrchr(y, '.') - y);
	int c = memcmp(x, y, xl < yl ? xl : yl);
	if (c)
		return c;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	return strcmp(x + xl, y + yl);
}

/*
 * The garbage git's gc removes from objects/pack: every file of a
 * "<base>" that has an .idx but no .pack (its .keep, .rev, ... too).
 * Other garbage (a .pack without .idx, a lone .keep) is only reported,
 * by count-objects -v, as in git.
 */
static void remove_pack_garbage(struct repository *repo)
{
	char *dir = xstrfmt("%s/pack", repo->objdir);
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0;

	while (d && (de = readdir(d))) {
		size_t base_len;
		const char *ext;
		if (pack_file_base(de->d_name, &base_len, &ext)) {
			ALLOC_GROW(names, nr + 1, alloc);
			names[nr++] = xstrdup(de->d_name);
		}
	}
	if (d)
		closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_names);
	for (size_t i = 0, j; i < nr; i = j) {
		size_t base_len, len;
		const char *ext;
		bool has_idx = false, has_pack = false;
		pack_file_base(names[i], &base_len, &ext);
		for (j = i; j < nr; j++) {
			if (!pack_file_base(names[j], &len, &ext) || len != base_len ||
			    strncmp(names[j], names[i], base_len))
				break;
			has_idx |= !strcmp(ext, "idx");
			has_pack |= !strcmp(ext, "pack");
		}
		for (size_t k = i; k < j && has_idx && !has_pack; k++) {
			char *path = xstrfmt("%s/%s", dir, names[k]);
			if (unlink(path) && errno != ENOENT)
				warning("unable to unlink '%s': %s", path, strerror(errno));
			free(path);
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	free(dir);
}

/*
 * git shows the commit-graph meters of a gc that is not quiet, after
 * a delay (GIT_PROGRESS_DELAY, 2 seconds by default), so a quick gc
 * prints none. gitpack's meters have no delay: they are asked for on
 * a terminal, or when GIT_PROGRESS_DELAY is set to 0.
 */
static bool show_meters(const struct gc_run *r)
{
	const char *delay = getenv("GIT_PROGRESS_DELAY");
	if (r->quiet || r->daemonized)
		return false;
	return isatty(2) || (delay && !strcmp(delay, "0"));
}

static int run_gc_steps(struct gc_run *r, bool foreground)
{
	const struct gc_config *cfg = r->cfg;

	if (foreground)
		foreground_steps(r);
	if (cfg->worktree_expire) {
		const char *argv[] = { "git", "worktree", "prune", "--expire",
				       cfg->worktree_expire, NULL };
		if (run_step(false, argv))
			die("failed to run worktree");
	}
	{
		const char *argv[] = { "git", "rerere", "gc", NULL };
		if (run_step(false, argv))
			die("failed to run rerere");
	}
	/* extensions.preciousObjects: nothing may be deleted, so no repack. */
	if (!cfg->precious_objects && repack_step(r))
		exit(128);
	remove_pack_garbage(r->repo);
	if (cfg->write_commit_graph) {
		const char *argv[] = { "git", "commit-graph", "write", "--reachable",
				       show_meters(r) ? "--progress" : "--no-progress", NULL };
		if (run_step(true, argv))
			error("failed to write commit-graph");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* pre-auto-gc, --detach                                              */

/* The pre-auto-gc hook (githooks(5)): true when there is none or it succeeds. */
static bool pre_auto_gc_allows(struct repository *repo)
{
	const char *dir = cfg_string(repo, "core.hookspath", NULL);
	char *path = dir ? xstrfmt("%s/pre-auto-gc", dir)
			 : xstrfmt("%s/hooks/pre-auto-gc", repo->commondir);
	const char *argv[] = { path, NULL };
	struct gp_error err = GP_ERROR_INIT;
	int code = 0, id;
	bool ok = true;

	if (!access(path, X_OK)) {
		id = trace2_child_start("hook", argv);
		if (run_command(argv, NULL, 0, RUN_STDOUT_TO_STDERR, &code, &err)) {
			error("%s", gp_error_msg(&err));
			gp_error_clear(&err);
			code = -1;
		}
		trace2_child_exit(id, code);
		ok = !code;
	}
	free(path);
	return ok;
}

/*
 * Start the background half: this gitpack again, with this run's
 * options and --no-detach --skip-foreground-tasks after them (the
 * foreground steps are done), in a session of its own. False when it
 * cannot be started: the caller then runs in the foreground.
 */
static bool detach_rest(int argc, const char **argv)
{
	const char **child = xcalloc((size_t)argc + 5, sizeof(*child));
	struct gp_error err = GP_ERROR_INIT;
	char *self = self_path();
	size_t n = 0;
	bool started;

	child[n++] = self;
	child[n++] = "gc";
	for (int i = 0; i < argc; i++)
		child[n++] = argv[i];
	child[n++] = "--no-detach";
	child[n++] = "--skip-foreground-tasks";
	child[n] = NULL;
	setenv(GC_DETACHED_ENV, "1", 1);
	started = !run_command_detached(child, &err);
	unsetenv(GC_DETACHED_ENV);
	gp_error_clear(&err);
	free(child);
	free(self);
	return started;
}

/* ------------------------------------------------------------------ */
/* The command                                                        */

static const char prune_default[] = "default"; /* --prune without a date: the configured one */

static int parse_prune(const struct option *opt, const char *arg, int unset)
{
	const char **out = opt->value;
	if (unset)
		*out = NULL;
	else if (arg)
		*out = arg;
	else
		*out = prune_default;
	return 0;
}

static int parse_size(const struct option *opt, const char *arg, int unset)
{
	unsigned long *out = opt->value;
	if (unset) {
		*out = 0;
		return 0;
	}
	if (!parse_ulong_suffixed(arg, out))
		die("invalid size for --max-cruft-size: '%s'", arg);
	return 0;
}

int cmd_gc(int argc, const char **argv, struct repository *repo)
{
	struct gc_config cfg = { .cruft_packs = -1 };
	const char *prune = prune_default, *expire_to = NULL;
	unsigned long max_cruft_size = 0;
	int quiet = 0, cruft = -1, aggressive = 0, auto_flag = 0, detach = -1, force = 0;
	int keep_largest = -1, skip_foreground = 0;
	bool detached_child = getenv(GC_DETACHED_ENV) != NULL;
	struct gc_run r = { .repo = repo, .cfg = &cfg };
	uintmax_t pid = 0;
	struct strbuf host = STRBUF_INIT;
	int64_t when;
	struct option options[] = {
		OPT__QUIET(&quiet, "suppress progress reporting"),
		{ OPTION_CALLBACK, 0, "prune", &prune, "date", "prune unreferenced objects",
		  PARSE_OPT_OPTARG, parse_prune, 0 },
		OPT_BOOL(0, "cruft", &cruft, "pack unreferenced objects separately"),
		OPT_CALLBACK(0, "max-cruft-size", &max_cruft_size, "n",
			     "with --cruft, limit the size of new cruft packs", parse_size),
		OPT_BOOL(0, "aggressive", &aggressive, "be more thorough (increased runtime)"),
		OPT_BOOL(0, "auto", &auto_flag, "enable auto-gc mode"),
		OPT_BOOL(0, "detach", &detach, "perform garbage collection in the background"),
		OPT_BOOL(0, "force", &force,
			 "force running gc even if there may be another gc running"),
		OPT_BOOL(0, "keep-largest-pack", &keep_largest,
			 "repack all other packs except the largest pack"),
		OPT_STRING(0, "expire-to", &expire_to, "dir",
			   "pack prefix to store a pack containing pruned objects"),
		{ OPTION_BOOL, 0, "skip-foreground-tasks", &skip_foreground, NULL,
		  "skip maintenance tasks typically done in the foreground", PARSE_OPT_HIDDEN,
		  NULL, 0 },
		OPT_END(),
	};

	/* As git 2.55: -h alone is a question answered on stdout, with success. */
	if (argc == 2 && !strcmp(argv[1], "-h")) {
		struct strbuf text = STRBUF_INIT;
		parse_options_usage(gc_usage, options, &text);
		fputs(text.buf, stdout);
		strbuf_release(&text);
		exit(0);
	}
	/* The options as given, for the detached copy (parse_options() reorders argv). */
	const char **given = xcalloc((size_t)argc + 1, sizeof(*given));
	int nr_given = argc - 1;
	for (int i = 1; i < argc; i++)
		given[i - 1] = argv[i];
	argc = parse_options(argc, argv, options, gc_usage);
	if (argc)
		usage_with_options(gc_usage, options);
	if (detached_child)
		unsetenv(GC_DETACHED_ENV); /* not for our own children */

	cfg.cruft_packs = cruft;
	read_gc_config(repo, &cfg);
	if (max_cruft_size)
		cfg.max_cruft_size = max_cruft_size;
	cfg.expire_to = expire_to;
	if (prune != prune_default)
		cfg.prune_expire = prune;
	if (cfg.prune_expire && strcmp(cfg.prune_expire, "now") &&
	    !parse_expiry_date(cfg.prune_expire, (int64_t)time(NULL), &when))
		die("failed to parse prune expiry value %s", cfg.prune_expire);
	r.quiet = quiet > 0;
	r.auto_flag = auto_flag;
	r.aggressive = aggressive;
	r.keep_largest = keep_largest;

	if (auto_flag && !detached_child) {
		if (cfg.detach_auto && detach < 0)
			detach = 1;
		/* Least intrusive: nothing to do, or the hook says no, is a quiet success. */
		if (!auto_gc_needed(repo, &cfg) || !pre_auto_gc_allows(repo))
			return 0;
		if (!r.quiet) {
			if (detach > 0)
				fprintf(stderr, "Auto packing the repository in background for "
					"optimum performance.\n");
			else
				fprintf(stderr, "Auto packing the repository for optimum "
					"performance.\n");
			fprintf(stderr, "See \"git help gc\" for manual housekeeping.\n");
		}
	}
	if (detach > 0 && !detached_child) {
		if (last_gc_failed(repo, &cfg))
			return 0;
		if (!skip_foreground) {
			if (!take_gc_lock(repo, force, &pid, &host))
				return 0;
			if (foreground_steps(&r))
				exit(128);
			remove_pid_file();
		}
		if (detach_rest(nr_given, given))
			return 0;
		/* Not started: the rest runs here, as git does when it cannot daemonize. */
	}
	if (!take_gc_lock(repo, force, &pid, &host)) {
		if (auto_flag)
			return 0; /* quiet under --auto */
		die("gc is already running on machine '%s' pid %ju (use --force if not)",
		    host.buf, pid);
	}
	if (detached_child) {
		r.daemonized = true;
		log_to_gc_log(repo);
	}
	run_gc_steps(&r, detach <= 0 && !skip_foreground);
	if (!r.daemonized) {
		char *log = xstrfmt("%s/gc.log", repo->commondir);
		unlink(log);
		free(log);
	}
	strbuf_release(&host);
	free(given);
	return 0;
}
