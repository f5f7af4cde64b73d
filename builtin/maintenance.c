/*
 * builtin/maintenance.c: gitpack maintenance run, git maintenance's
 * task runner (git-maintenance(1), config/maintenance) for a server's
 * repository: the whole job under objects/maintenance.lock. As in git,
 * the repack and multi-pack-index steps are child processes with git's
 * argv ("git repack ...", "git multi-pack-index ..."): this binary
 * started again (run_program()), so trace2 shows git's children and
 * each step is isolated. So are "git prune-packed" (loose-objects' first
 * step) and "git pack-refs --all --prune"; the loose- pack is written
 * here (pack-objects.h).
 *
 * Tasks, in git's order (foreground tasks first, as git runs them):
 *   loose-objects       child: prune-packed; then a batch of the other
 *                       loose objects packed into a "loose-" pack;
 *   incremental-repack  children: MIDX write, expire, repack;
 *   geometric-repack    child: repack -d -l -q --geometric=<f> --write-midx
 *                       (=incremental, with bitmaps, where bitmaps are wanted);
 *                       when the roll-up would take every pack, an
 *                       all-into-one with a cruft pack instead (as git's);
 *   gc                  pack-refs, then child: gc --quiet --no-detach
 *                       --skip-foreground-tasks (builtin/gc.c);
 *   commit-graph        child: gitpack commit-graph write --reachable --split;
 *   pack-refs           child: pack-refs --all --prune.
 * prefetch, reflog-expire, worktree-prune and rerere-gc are accepted
 * (they are in git's strategies) and do nothing: a server repository
 * has no remotes to prefetch, no work trees and no rerere cache, and
 * its reflogs are left to git.
 *
 * start and stop (the system scheduler's jobs) are
 * builtin/maintenance-schedule.c's; start ends with register's config.
 */
#include "../builtin.h"
#include "../commit-graph.h"
#include "../commit.h"
#include "../config.h"
#include "../date.h"
#include "../error.h"
#include "../lockfile.h"
#include "../loose.h"
#include "../midx.h"
#include "../odb.h"
#include "../pack-objects.h"
#include "../pack-refs.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../progress.h"
#include "../refs.h"
#include "../repository.h"
#include "../run-command.h"
#include "../strbuf.h"
#include "../trace2.h"
#include "maintenance-schedule.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const maintenance_usage[] = {
	"git maintenance <subcommand> [<options>]",
	"git maintenance run [--auto] [--[no-]quiet] [--task=<task>] [--schedule=<freq>]",
	"git maintenance is-needed [--auto] [--task=<task>]",
	"git maintenance register [--config-file <path>]",
	"git maintenance unregister [--config-file <path>] [--force]",
	"git maintenance start [--scheduler=<scheduler>]",
	"git maintenance stop",
	NULL,
};

static const char *const run_usage[] = {
	"git maintenance run [--auto] [--[no-]quiet] [--task=<task>] [--schedule=<freq>]",
	NULL,
};

static const char *const is_needed_usage[] = {
	"git maintenance is-needed [--auto] [--task=<task>]",
	NULL,
};

/* --schedule and maintenance.<task>.schedule; a task runs when its rank is at least the run's. */
enum schedule {
	SCHEDULE_NONE = 0,
	SCHEDULE_WEEKLY = 1,
	SCHEDULE_DAILY = 2,
	SCHEDULE_HOURLY = 3,
};

struct maint {
	struct repository *repo;
	struct odb *odb;
	char *pack_dir;
	bool quiet;
	bool auto_flag;
	bool explicit_task;   /* this task was named by --task */
};

typedef int task_fn(struct maint *m);
typedef bool auto_fn(struct maint *m);

enum task_id {
	TASK_PREFETCH, TASK_LOOSE_OBJECTS, TASK_INCREMENTAL_REPACK, TASK_GEOMETRIC_REPACK,
	TASK_GC, TASK_COMMIT_GRAPH, TASK_PACK_REFS, TASK_REFLOG_EXPIRE,
	TASK_WORKTREE_PRUNE, TASK_RERERE_GC, TASK__COUNT
};

struct task {
	const char *name;
	task_fn *foreground; /* run before every background part */
	task_fn *background;
	auto_fn *needed;     /* --auto: NULL means never */
};

/* ------------------------------------------------------------------ */
/* The lock                                                           */

static char *lock_path;
static char *lock_pid_path; /* its core.lockfilePid companion (lockfile.h), if any */

static void remove_lock(void)
{
	if (lock_path) {
		unlink(lock_path);
		free(lock_path);
		lock_path = NULL;
	}
	lockfile_pid_remove(lock_pid_path);
	lock_pid_path = NULL;
}

static void remove_lock_on_signal(int sig)
{
	if (lock_pid_path)
		unlink(lock_pid_path);
	if (lock_path)
		unlink(lock_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void hold_lock(char *path)
{
	lock_path = path;
	atexit(remove_lock);
	signal(SIGINT, remove_lock_on_signal);
	signal(SIGTERM, remove_lock_on_signal);
	signal(SIGHUP, remove_lock_on_signal);
	signal(SIGPIPE, remove_lock_on_signal);
}

/* Set for the child of --detach: the lock its parent took is its own now. */
#define DETACHED_ENV "GITPACK_MAINTENANCE_DETACHED"
static bool is_detached_child;

/* 0: held; 1: another maintenance holds it. Dies on other failures. */
static int take_lock(struct repository *repo)
{
	char *path = xstrfmt("%s/maintenance.lock", repo->objdir);
	int fd;

	if (getenv(DETACHED_ENV)) {
		/* Not for our own children (commit-graph, hooks). */
		unsetenv(DETACHED_ENV);
		is_detached_child = true;
		/* The parent's companion names the parent, as git's does; it is ours to remove. */
		lock_pid_path = lockfile_pid_path(path);
		if (access(lock_pid_path, F_OK)) {
			free(lock_pid_path);
			lock_pid_path = NULL;
		}
		hold_lock(path);
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		if (errno == EEXIST) {
			free(path);
			return 1;
		}
		die("unable to create '%s': %s", path, strerror(errno));
	}
	close(fd);
	lock_pid_path = lockfile_pid_write(path);
	hold_lock(path);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Config                                                             */

static int config_task_int(struct maint *m, const char *task, const char *name, int dflt)
{
	char *key = xstrfmt("maintenance.%s.%s", task, name);
	int v = repo_config_int(m->repo, key, dflt);
	free(key);
	return v;
}

/* gc.pruneExpire (git's default "2.weeks.ago"), as given. */
static const char *prune_expire(struct maint *m)
{
	const char *v;
	if (config_get_string(&m->repo->config, "gc.pruneexpire", &v) || !v)
		return "2.weeks.ago";
	return v;
}

/* ------------------------------------------------------------------ */
/* Counting                                                           */

static void reopen_odb(struct maint *m)
{
	struct gp_error err = GP_ERROR_INIT;
	if (!m->odb && repo_odb(m->repo, &m->odb, &err))
		die_error(&err);
	odb_reprepare(m->odb);
}

/* git's estimate: loose objects in objects/17, times 256, above limit. */
static bool too_many_loose(struct maint *m, int limit)
{
	char *dir = xstrfmt("%s/17", m->repo->objdir);
	int threshold = (limit + 255) / 256;
	size_t hexsz = gp_hash_algos[m->repo->hash_algo].hexsz;
	DIR *d = opendir(dir);
	struct dirent *de;
	int nr = 0;
	free(dir);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (strlen(de->d_name) != hexsz - 2 ||
		    strspn(de->d_name, "0123456789abcdef") != hexsz - 2)
			continue;
		if (++nr > threshold)
			break;
	}
	closedir(d);
	return nr > threshold;
}

struct loose_count {
	size_t nr, limit;
};

static int count_loose(const struct object_id *oid, const char *path, void *data)
{
	struct loose_count *lc = data;
	return ++lc->nr >= lc->limit;
}

static size_t nr_loose_objects(struct maint *m, size_t limit)
{
	struct loose_count lc = { 0, limit ? limit : SIZE_MAX };
	loose_for_each(m->repo->objdir, m->repo->hash_algo, count_loose, &lc);
	return lc.nr;
}

static bool is_cruft(const struct packed_git *p)
{
	struct strbuf path = STRBUF_INIT;
	bool cruft;
	strbuf_addstr(&path, p->pack_path);
	if (ends_with(path.buf, ".pack"))
		strbuf_setlen(&path, path.len - strlen(".pack"));
	strbuf_addstr(&path, ".mtimes");
	cruft = !access(path.buf, F_OK);
	strbuf_release(&path);
	return cruft;
}

static int cmp_count(const void *va, const void *vb)
{
	uint64_t a = *(const uint64_t *)va, b = *(const uint64_t *)vb;
	return a < b ? -1 : a > b;
}

/*
 * The geometric roll-up repack plans (repack.h), over the local packs
 * that take part (neither kept, promisor nor cruft): how many of them
 * roll up; *nr_out receives how many there are.
 */
static size_t geometric_rollup(struct maint *m, int factor, size_t *nr_out)
{
	size_t nr = 0, split = 0, i;
	uint64_t *counts = xcalloc(odb_nr_packs(m->odb) + 1, sizeof(*counts));
	uint64_t rolled = 0;
	for (i = 0; i < odb_nr_packs(m->odb); i++) {
		struct packed_git *p = odb_pack(m->odb, i);
		if (!odb_pack_is_local(m->odb, i) || p->is_keep || p->is_promisor || is_cruft(p))
			continue;
		counts[nr++] = p->nr_objects;
	}
	qsort(counts, nr, sizeof(*counts), cmp_count);
	/* The largest packs that already make a progression stay. */
	for (i = nr; i > 1; i--)
		if (counts[i - 1] < (uint64_t)factor * counts[i - 2])
			break;
	if (i > 1)
		split = i;
	for (i = 0; i < split; i++)
		rolled += counts[i];
	while (split < nr && counts[split] < (uint64_t)factor * rolled)
		rolled += counts[split++];
	free(counts);
	*nr_out = nr;
	return split;
}

/* The local packs no MIDX lists (all of them without a MIDX). */
static size_t nr_packs_outside_midx(struct maint *m)
{
	struct midx *midx = odb_midx(m->odb);
	size_t nr = 0;
	for (size_t i = 0; i < odb_nr_packs(m->odb); i++) {
		struct packed_git *p = odb_pack(m->odb, i);
		const char *base = strrchr(p->idx_path, '/');
		uint32_t id;
		if (!odb_pack_is_local(m->odb, i))
			continue;
		base = base ? base + 1 : p->idx_path;
		if (!midx || !midx_find_pack(midx, base, &id))
			nr++;
	}
	return nr;
}

/* ------------------------------------------------------------------ */
/* Children: gitpack itself, as git runs git                          */

static char *self_path(void)
{
	char *path = run_self_path();
	return path ? path : xstrdup("gitpack");
}

/*
 * One step of a task in a process of its own, as git's maintenance
 * runs "git <command>": this gitpack's binary, with git's very argv
 * (argv[0] "git"), so that trace2 shows the child git shows and the
 * step's memory and failures stay the step's. The child's exit status
 * is the step's result; afterwards the object store is read anew,
 * since the child changed it.
 */
static int run_self_child(struct maint *m, const char *const *argv)
{
	struct gp_error err = GP_ERROR_INIT;
	char *self = self_path();
	int code = 0, id = trace2_child_start("?", argv);
	int ret = run_program(self, argv, 0, &code, &err);
	trace2_child_exit(id, ret ? -1 : code);
	if (ret) {
		error("failed to run 'git %s': %s", argv[1], gp_error_msg(&err));
		gp_error_clear(&err);
		code = 1;
	}
	free(self);
	reopen_odb(m);
	return code ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* loose-objects                                                      */

struct loose_batch {
	struct maint *m;
	struct pack_objects *po;
	size_t limit;    /* 0: none */
	size_t nr;
	bool show_progress;
	struct progress *progress;
};

static int batch_one(const struct object_id *oid, const char *path, void *data)
{
	struct loose_batch *lb = data;
	if (lb->limit && lb->nr >= lb->limit)
		return 1;
	pack_objects_add(lb->po, oid, OBJ_NONE, NULL);
	/* The meter starts with the first object: an empty batch says nothing. */
	if (!lb->nr++ && lb->show_progress)
		lb->progress = progress_start("Enumerating objects", 0, true);
	progress_update(lb->progress, lb->nr);
	return 0;
}

static bool loose_objects_needed(struct maint *m)
{
	int limit = config_task_int(m, "loose-objects", "auto", 100);
	if (!limit)
		return false;
	if (limit < 0)
		return true;
	return nr_loose_objects(m, (size_t)limit) >= (size_t)limit;
}

static int task_loose_objects(struct maint *m)
{
	struct pack_objects_opts opts = PACK_OBJECTS_OPTS_INIT;
	struct pack_objects_names names = { 0 };
	struct gp_error err = GP_ERROR_INIT;
	struct loose_batch lb = { .m = m };
	int batch = config_task_int(m, "loose-objects", "batchsize", 50000);
	const char *prune_argv[] = { "git", "prune-packed", m->quiet ? "--quiet" : NULL, NULL };
	char *base;
	int ret = 0;

	/* First, as git's task: what is packed already goes, in a child. */
	if (run_self_child(m, prune_argv))
		return error("failed to run prune-packed");
	opts.progress = !m->quiet && isatty(2);
	if (!m->quiet && getenv("GIT_PROGRESS_DELAY"))
		opts.progress = true;
	opts.window = repo_config_int(m->repo, "pack.window", 10);
	opts.depth = repo_config_int(m->repo, "pack.depth", 50);
	opts.threads = repo_config_int(m->repo, "pack.threads", 0);
	opts.compression = repo_config_int(m->repo, "pack.compression",
					 repo_config_int(m->repo, "core.compression", -1));
	if (pack_objects_new(&lb.po, m->odb, &opts))
		die("cannot start packing loose objects");
	lb.limit = batch > 0 ? (size_t)batch : 0;
	lb.show_progress = opts.progress;
	loose_for_each(m->repo->objdir, m->repo->hash_algo, batch_one, &lb);
	if (lb.progress)
		progress_stop(&lb.progress);
	if (lb.nr) {
		base = xstrfmt("%s/loose", m->pack_dir);
		ret = pack_objects_write_files(lb.po, base,
					       config_get_bool_or(&m->repo->config,
								  "pack.writereverseindex", true),
					       &names, &err);
		free(base);
		if (ret)
			ret = error("loose-objects: %s", gp_error_msg(&err));
		pack_objects_names_release(&names);
	}
	pack_objects_free(lb.po);
	gp_error_clear(&err);
	reopen_odb(m);
	return ret ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* incremental-repack                                                 */

static bool incremental_repack_needed(struct maint *m)
{
	int limit = config_task_int(m, "incremental-repack", "auto", 10);
	if (!config_get_bool_or(&m->repo->config, "core.multipackindex", true) || !limit)
		return false;
	if (limit < 0)
		return true;
	return nr_packs_outside_midx(m) >= (size_t)limit;
}

/* git's "auto" batch size: one more than the second largest pack, at most 2 GiB - 1. */
static uint64_t auto_batch_size(struct maint *m)
{
	uint64_t largest = 0, second = 0;
	for (size_t i = 0; i < odb_nr_packs(m->odb); i++) {
		struct stat st;
		uint64_t size;
		if (stat(odb_pack(m->odb, i)->pack_path, &st))
			continue;
		size = (uint64_t)st.st_size;
		if (size > largest) {
			second = largest;
			largest = size;
		} else if (size > second) {
			second = size;
		}
	}
	return second + 1 > INT32_MAX ? INT32_MAX : second + 1;
}

/*
 * As git's task, three children: "multi-pack-index write", "expire",
 * then "repack --batch-size=<auto>", the first failure ending the task.
 */
static int task_incremental_repack(struct maint *m)
{
	struct midx *midx = odb_midx(m->odb);
	const char *progress = m->quiet ? "--no-progress" : "--progress";
	const char *write[] = { "git", "multi-pack-index", "write", progress, NULL };
	const char *expire[] = { "git", "multi-pack-index", "expire", progress, NULL };
	const char *repack[] = { "git", "multi-pack-index", "repack", progress, NULL, NULL };
	char *batch;
	int ret;

	if (!config_get_bool_or(&m->repo->config, "core.multipackindex", true)) {
		warning("skipping incremental-repack task because core.multiPackIndex is disabled");
		return 0;
	}
	if (midx && midx_is_chain(midx)) {
		if (!m->quiet)
			warning("skipping incremental-repack task: the multi-pack-index is an "
				"incremental chain (see the geometric-repack task)");
		return 0;
	}
	/* No pack, no MIDX to write (git's write would fail: "no pack files to index"). */
	if (!odb_nr_packs(m->odb))
		return 0;
	if (run_self_child(m, write))
		return error("failed to write multi-pack-index");
	if (run_self_child(m, expire))
		return error("'git multi-pack-index expire' failed");
	batch = xstrfmt("--batch-size=%" PRIu64, auto_batch_size(m));
	repack[4] = batch;
	ret = run_self_child(m, repack);
	free(batch);
	if (ret)
		return error("'git multi-pack-index repack' failed");
	return 0;
}

/* ------------------------------------------------------------------ */
/* geometric-repack                                                   */

static int split_factor(struct maint *m)
{
	int f = config_task_int(m, "geometric-repack", "splitfactor", 2);
	if (f < 2)
		die("invalid value for maintenance.geometric-repack.splitFactor: %d", f);
	return f;
}

static bool geometric_repack_needed(struct maint *m)
{
	int limit = config_task_int(m, "geometric-repack", "auto", 100);
	size_t nr;
	if (!limit)
		return false;
	if (limit < 0)
		return true;
	if (geometric_rollup(m, split_factor(m), &nr))
		return true;
	return too_many_loose(m, limit);
}

/*
 * As git's task, one "git repack -d -l -q" child: --geometric=<factor>
 * when the progression keeps some packs, else an all-into-one where
 * what nothing reaches goes to a cruft pack; --write-midx while
 * core.multiPackIndex is on.
 *
 * Where bitmaps are wanted (repack.writeBitmaps, true by default in a
 * bare repository, as git defaults it), the MIDX gets them too, and the
 * geometric roll-up writes a new layer of an incremental chain rather
 * than the whole MIDX again: a server's job then costs what was pushed.
 * Git's task writes neither; in a repository with a work tree, unless
 * configured, the child is git's exactly.
 */
static int task_geometric_repack(struct maint *m)
{
	size_t nr, split = geometric_rollup(m, split_factor(m), &nr);
	/* git repack -d -l -q, then at most four (the mode, its expiry, the MIDX, the bitmap), NULL */
	const char *argv[10] = { "git", "repack", "-d", "-l", "-q" };
	size_t argc = 5;
	bool bitmaps = config_get_bool_or(&m->repo->config, "repack.writebitmaps", m->repo->bare);
	bool rollup = false;
	char *arg;
	int ret;

	if (!nr || split == nr) {
		arg = xstrfmt("--cruft-expiration=%s", prune_expire(m));
		argv[argc++] = "--cruft";
		if (strcmp(prune_expire(m), "never"))
			argv[argc++] = arg;
	} else {
		arg = xstrfmt("--geometric=%d", split_factor(m));
		argv[argc++] = arg;
		rollup = true;
	}
	if (config_get_bool_or(&m->repo->config, "core.multipackindex", true)) {
		argv[argc++] = bitmaps && rollup ? "--write-midx=incremental" : "--write-midx";
		if (bitmaps)
			argv[argc++] = "--write-bitmap-index";
	}
	argv[argc] = NULL;
	ret = run_self_child(m, argv);
	free(arg);
	return ret ? error("failed to run repack") : 0;
}

/* ------------------------------------------------------------------ */
/* pack-refs                                                          */

/*
 * pack-refs --auto: git asks the ref store the question "git pack-refs
 * --all --auto" asks (pack-refs.h: enough loose refs for the size of
 * packed-refs), and the child asks it again.
 */
static bool pack_refs_needed(struct maint *m)
{
	struct pack_refs_opts opts = { .flags = PACK_REFS_ALL | PACK_REFS_PRUNE };
	struct gp_error err = GP_ERROR_INIT;
	bool needed = false;
	/* a reftable stack: the child's --auto picks the tables to merge, if any */
	if (m->repo->ref_storage != REF_STORAGE_FILES)
		return true;
	if (
	    pack_refs_check_auto(m->repo, &opts, &needed, NULL, &err))
		gp_error_clear(&err); /* not due then, as in git */
	return needed;
}

static int task_pack_refs(struct maint *m)
{
	const char *argv[] = { "git", "pack-refs", "--all", "--prune", NULL, NULL };
	/* As git's task: under --auto the child decides again, with git's heuristic. */
	if (m->auto_flag)
		argv[4] = "--auto";
	if (run_self_child(m, argv))
		return error("failed to run pack-refs");
	return 0;
}

/* ------------------------------------------------------------------ */
/* gc                                                                 */

static bool gc_needed(struct maint *m)
{
	int limit = repo_config_int(m->repo, "gc.auto", 6700);
	int pack_limit = repo_config_int(m->repo, "gc.autopacklimit", 50);
	size_t nr = 0;
	if (limit <= 0)
		return false;
	if (too_many_loose(m, limit))
		return true;
	if (pack_limit <= 0)
		return false;
	for (size_t i = 0; i < odb_nr_packs(m->odb); i++)
		if (odb_pack_is_local(m->odb, i) && !odb_pack(m->odb, i)->is_keep)
			nr++;
	return nr > (size_t)pack_limit;
}

/* gc.packRefs: true (the default), false, or "notbare" (not for a bare repository). */
static bool gc_packs_refs(struct maint *m)
{
	const char *v;
	bool b;
	if (config_get_string(&m->repo->config, "gc.packrefs", &v) || !v)
		return true;
	if (!strcasecmp(v, "notbare"))
		return !m->repo->bare;
	return config_parse_bool(v, &b) ? b : true;
}

static int task_gc_foreground(struct maint *m)
{
	return gc_packs_refs(m) ? task_pack_refs(m) : 0;
}

/*
 * As git's task: the rest of git gc in a child, "git gc --quiet
 * --no-detach --skip-foreground-tasks" (--auto under --auto,
 * --no-quiet when not quiet): gitpack's gc (builtin/gc.c), started as
 * this binary with git's argv. The foreground part ran already.
 */
static int task_gc(struct maint *m)
{
	const char *argv[7] = { "git", "gc" };
	size_t nr = 2;

	if (m->auto_flag)
		argv[nr++] = "--auto";
	argv[nr++] = m->quiet ? "--quiet" : "--no-quiet";
	argv[nr++] = "--no-detach";
	argv[nr++] = "--skip-foreground-tasks";
	argv[nr] = NULL;
	if (run_self_child(m, argv))
		return error("failed to run gc");
	return 0;
}

/* ------------------------------------------------------------------ */
/* commit-graph                                                       */

static int commit_graph_sink(void *data, int stream, const void *buf, size_t len)
{
	struct strbuf *err_out = data;
	if (stream == 2)
		strbuf_add(err_out, buf, len);
	else if (write(1, buf, len) < 0)
		return -1;
	return 0;
}

/* Single-quoted for sh. */
static void sq_quote(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

/*
 * The walk of maintenance.commit-graph.auto: from every ref (tags
 * peeled), the commits no commit-graph holds, stopping at those it
 * holds (the graph is closed under parents) and once limit are counted.
 */
struct graph_gap {
	struct maint *m;
	const struct commit_graph *graph; /* NULL: there is none */
	struct oidset seen;
	struct object_id *stack;
	size_t nr, alloc, counted, limit;
};

static void gap_push(struct graph_gap *g, const struct object_id *oid)
{
	uint32_t pos;
	if (g->graph && commit_graph_find(g->graph, oid, &pos))
		return;
	if (!oidset_insert(&g->seen, oid))
		return;
	ALLOC_GROW(g->stack, g->nr + 1, g->alloc);
	g->stack[g->nr++] = *oid;
}

static int gap_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	gap_push(data, peeled ? peeled : oid);
	return 0;
}

static bool commit_graph_needed(struct maint *m)
{
	int limit = config_task_int(m, "commit-graph", "auto", 100);
	struct graph_gap g = { .m = m, .seen = OIDSET_INIT };
	struct gp_error err = GP_ERROR_INIT;

	if (!config_get_bool_or(&m->repo->config, "core.commitgraph", true) || !limit)
		return false;
	if (limit < 0)
		return true;
	g.limit = (size_t)limit;
	if (repo_commit_graph(m->repo, &g.graph, &err))
		g.graph = NULL; /* an unreadable graph: every commit counts */
	gp_error_clear(&err);
	if (refs_for_each(m->repo, "", gap_ref, &g, &err))
		gp_error_clear(&err);
	while (g.nr && g.counted < g.limit) {
		struct object_id oid = g.stack[--g.nr];
		struct commit_info ci = COMMIT_INFO_INIT;
		enum object_type type;
		unsigned char *buf = NULL;
		size_t len;
		if (odb_read_object(m->odb, &oid, &type, &buf, &len, &err)) {
			gp_error_clear(&err);
			continue;
		}
		if (type == OBJ_TAG) {
			/* a ref whose tag was not peeled for us: follow it */
			struct tag_info ti;
			if (!tag_parse(buf, len, m->repo->hash_algo, &ti, &err))
				gap_push(&g, &ti.object);
			gp_error_clear(&err);
		} else if (type == OBJ_COMMIT &&
			   !commit_parse(buf, len, m->repo->hash_algo, &ci, &err)) {
			g.counted++;
			for (size_t i = 0; i < ci.nr_parents; i++)
				gap_push(&g, &ci.parents[i]);
		}
		gp_error_clear(&err);
		commit_info_release(&ci);
		free(buf);
	}
	oidset_release(&g.seen);
	free(g.stack);
	return g.counted >= g.limit;
}

static int task_commit_graph(struct maint *m)
{
	const char *args[] = { "commit-graph", "write", "--reachable", "--split",
			       "--no-progress", NULL };
	struct strbuf cmd = STRBUF_INIT, child_err = STRBUF_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char *self;
	int code = 0, ret = 0;
	const char *traced[ARRAY_SIZE(args) + 1];
	int child_id;

	if (!config_get_bool_or(&m->repo->config, "core.commitgraph", true))
		return 0;
	self = self_path();
	sq_quote(&cmd, self);
	traced[0] = self;
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		traced[i + 1] = args[i];
	child_id = trace2_child_start("?", traced);
	ret = run_shell_stream(".", cmd.buf, args, NULL, 0, RUN_STREAM_STDERR,
			       commit_graph_sink, &child_err, &code, &err);
	trace2_child_exit(child_id, ret ? -1 : code);
	free(self);
	if (ret) {
		ret = error("failed to run commit-graph: %s", gp_error_msg(&err));
	} else if (code == 1 && strstr(child_err.buf, "is not a gitpack command")) {
		/* This gitpack has no commit-graph writer: nothing to keep up to date. */
		if (!m->quiet)
			fprintf(stderr, "skipping commit-graph task: this gitpack cannot write "
				"commit-graphs\n");
	} else {
		if (child_err.len)
			fwrite(child_err.buf, 1, child_err.len, stderr);
		if (code)
			ret = error("failed to write commit-graph");
	}
	strbuf_release(&cmd);
	strbuf_release(&child_err);
	gp_error_clear(&err);
	return ret ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Housekeeping of a work repository: run by git                      */

/*
 * Reflogs, worktrees and the rerere cache are a work repository's
 * state, not the object store gitpack keeps: for them gitpack runs
 * stock git, with the very argv git's own maintenance gives its child
 * (so trace2 shows the same child process). "git" is found in PATH.
 */
static int run_git_child(struct maint *m, const char *const *argv)
{
	struct gp_error err = GP_ERROR_INIT;
	int code = 0, id = trace2_child_start("?", argv);
	int ret = run_command(argv, NULL, 0, 0, &code, &err);
	trace2_child_exit(id, ret ? -1 : code);
	if (ret) {
		error("failed to run 'git %s': %s", argv[1], gp_error_msg(&err));
		gp_error_clear(&err);
		return 1;
	}
	return code ? 1 : 0;
}

static const char *expire_config(struct maint *m, const char *key, const char *dflt)
{
	const char *v;
	if (config_get_string(&m->repo->config, key, &v) || !v)
		return dflt;
	return v;
}

/*
 * reflog-expire --auto: entries of the HEAD reflog older than
 * gc.reflogExpire (git's default 90 days) number at least
 * maintenance.reflog-expire.auto (default 100).
 */
static bool reflog_expire_needed(struct maint *m)
{
	int limit = config_task_int(m, "reflog-expire", "auto", 100);
	const char *expire = expire_config(m, "gc.reflogexpire", "90.days.ago");
	int64_t when;
	char *path;
	FILE *f;
	char line[8192];
	int nr = 0;

	if (!limit)
		return false;
	if (limit < 0)
		return true;
	if (!parse_expiry_date(expire, (int64_t)time(NULL), &when) || !when)
		return false;
	path = xstrfmt("%s/logs/HEAD", m->repo->gitdir);
	f = fopen(path, "r");
	free(path);
	if (!f)
		return false;
	while (nr < limit && fgets(line, sizeof(line), f)) {
		/* "<old> <new> <ident> <timestamp> <tz>\t<message>": the time follows "> ". */
		char *tab = strchr(line, '\t'), *gt, *end;
		long long ts;
		if (tab)
			*tab = '\0';
		gt = strrchr(line, '>');
		if (!gt || gt[1] != ' ')
			continue;
		ts = strtoll(gt + 2, &end, 10);
		if (end != gt + 2 && ts <= when)
			nr++;
	}
	fclose(f);
	return nr >= limit;
}

static int task_reflog_expire(struct maint *m)
{
	const char *argv[] = { "git", "reflog", "expire", "--all", NULL };
	return run_git_child(m, argv);
}

/*
 * A worktree git would prune (git-worktree(1), "prune"): its entry
 * under $GIT_COMMON_DIR/worktrees is not a directory, or it is not
 * locked and its gitdir file is missing, unreadable or names a path
 * that is gone, the entry having been left alone since expire.
 */
static bool worktree_prunable(const char *dir, int64_t expire)
{
	struct stat st;
	char *file;
	struct strbuf target = STRBUF_INIT;
	bool prunable;
	FILE *f;
	char buf[4096];

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return true;
	file = xstrfmt("%s/locked", dir);
	if (!access(file, F_OK)) {
		free(file);
		return false;
	}
	free(file);
	file = xstrfmt("%s/gitdir", dir);
	f = fopen(file, "r");
	if (!f) {
		prunable = true;
	} else {
		if (fgets(buf, sizeof(buf), f)) {
			strbuf_addstr(&target, buf);
			strbuf_rtrim(&target);
		}
		fclose(f);
		if (!target.len)
			prunable = true;
		else if (!access(target.buf, F_OK))
			prunable = false;
		else
			prunable = !stat(file, &st) && (int64_t)st.st_mtime <= expire;
	}
	free(file);
	strbuf_release(&target);
	return prunable;
}

static const char *worktree_expire(struct maint *m)
{
	return expire_config(m, "gc.worktreepruneexpire", "3.months.ago");
}

/* worktree-prune --auto: at least maintenance.worktree-prune.auto (default 1) prunable. */
static bool worktree_prune_needed(struct maint *m)
{
	int limit = config_task_int(m, "worktree-prune", "auto", 1);
	char *path;
	DIR *d;
	struct dirent *de;
	int64_t expire;
	int nr = 0;

	if (!limit)
		return false;
	if (limit < 0)
		return true;
	if (!parse_expiry_date(worktree_expire(m), (int64_t)time(NULL), &expire) || !expire)
		return false;
	path = xstrfmt("%s/worktrees", m->repo->commondir);
	d = opendir(path);
	while (d && nr < limit && (de = readdir(d))) {
		char *entry;
		if (de->d_name[0] == '.')
			continue;
		entry = xstrfmt("%s/%s", path, de->d_name);
		if (worktree_prunable(entry, expire))
			nr++;
		free(entry);
	}
	if (d)
		closedir(d);
	free(path);
	return nr >= limit;
}

static int task_worktree_prune(struct maint *m)
{
	const char *argv[] = { "git", "worktree", "prune", "--expire", worktree_expire(m),
			       NULL };
	return run_git_child(m, argv);
}

/* rerere-gc --auto: any positive limit means "rr-cache has an entry". */
static bool rerere_gc_needed(struct maint *m)
{
	int limit = config_task_int(m, "rerere-gc", "auto", 1);
	char *path;
	DIR *d;
	struct dirent *de;
	bool any = false;

	if (!limit)
		return false;
	if (limit < 0)
		return true;
	path = xstrfmt("%s/rr-cache", m->repo->commondir);
	d = opendir(path);
	while (d && !any && (de = readdir(d)))
		any = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	free(path);
	return any;
}

static int task_rerere_gc(struct maint *m)
{
	const char *argv[] = { "git", "rerere", "gc", NULL };
	return run_git_child(m, argv);
}

/* ------------------------------------------------------------------ */
/* prefetch                                                           */

/*
 * As git's prefetch task: "git fetch <remote> --prefetch --prune
 * --no-tags --no-write-fetch-head --recurse-submodules=no [--quiet]"
 * for each remote the config defines (in the order first named),
 * except those with remote.<name>.skipFetchAll (or skipDefaultUpdate).
 * Fetching is git's work, so git runs it. Remotes that only the legacy
 * $GIT_DIR/remotes and branches files define are not fetched.
 */
static int task_prefetch(struct maint *m)
{
	const struct config_set *cs = &m->repo->config;
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	for (size_t i = 0; i < cs->nr; i++) {
		const char *key = cs->items[i].key, *dot;
		size_t len;
		bool seen = false;
		if (strncasecmp(key, "remote.", 7) || !(dot = strrchr(key + 7, '.')) ||
		    dot == key + 7)
			continue;
		len = (size_t)(dot - (key + 7));
		for (size_t j = 0; j < nr && !seen; j++)
			seen = strlen(names[j]) == len && !memcmp(names[j], key + 7, len);
		if (seen)
			continue;
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrndup(key + 7, len);
	}
	for (size_t i = 0; i < nr; i++) {
		char *skip_all = xstrfmt("remote.%s.skipfetchall", names[i]);
		char *skip_default = xstrfmt("remote.%s.skipdefaultupdate", names[i]);
		bool skip = config_get_bool_or(cs, skip_all, false) ||
			    config_get_bool_or(cs, skip_default, false);
		const char *argv[] = { "git", "fetch", names[i], "--prefetch", "--prune",
				       "--no-tags", "--no-write-fetch-head",
				       "--recurse-submodules=no", m->quiet ? "--quiet" : NULL,
				       NULL };
		if (!skip && run_git_child(m, argv))
			ret = 1;
		free(skip_all);
		free(skip_default);
		free(names[i]);
	}
	free(names);
	if (ret)
		error("failed to prefetch remotes");
	return ret;
}

static const struct task tasks[TASK__COUNT] = {
	[TASK_PREFETCH] = { "prefetch", NULL, task_prefetch, NULL },
	[TASK_LOOSE_OBJECTS] = { "loose-objects", NULL, task_loose_objects, loose_objects_needed },
	[TASK_INCREMENTAL_REPACK] = { "incremental-repack", NULL, task_incremental_repack,
				      incremental_repack_needed },
	[TASK_GEOMETRIC_REPACK] = { "geometric-repack", NULL, task_geometric_repack,
				    geometric_repack_needed },
	[TASK_GC] = { "gc", task_gc_foreground, task_gc, gc_needed },
	[TASK_COMMIT_GRAPH] = { "commit-graph", NULL, task_commit_graph, commit_graph_needed },
	[TASK_PACK_REFS] = { "pack-refs", task_pack_refs, NULL, pack_refs_needed },
	[TASK_REFLOG_EXPIRE] = { "reflog-expire", task_reflog_expire, NULL, reflog_expire_needed },
	[TASK_WORKTREE_PRUNE] = { "worktree-prune", NULL, task_worktree_prune,
				  worktree_prune_needed },
	[TASK_RERERE_GC] = { "rerere-gc", NULL, task_rerere_gc, rerere_gc_needed },
};

/* ------------------------------------------------------------------ */
/* Choosing the tasks                                                 */

/* Per strategy and task: runs in manual maintenance, and its schedule. */
struct strategy_task {
	bool manual;
	enum schedule schedule;
};

struct strategy {
	struct strategy_task t[TASK__COUNT];
};

static struct strategy parse_strategy(const char *name)
{
	struct strategy s = { 0 };
	if (!strcasecmp(name, "none"))
		return s;
	if (!strcasecmp(name, "gc")) {
		s.t[TASK_GC] = (struct strategy_task){ true, SCHEDULE_DAILY };
		return s;
	}
	if (!strcasecmp(name, "incremental")) {
		s.t[TASK_COMMIT_GRAPH] = (struct strategy_task){ false, SCHEDULE_HOURLY };
		s.t[TASK_PREFETCH] = (struct strategy_task){ false, SCHEDULE_HOURLY };
		s.t[TASK_INCREMENTAL_REPACK] = (struct strategy_task){ false, SCHEDULE_DAILY };
		s.t[TASK_LOOSE_OBJECTS] = (struct strategy_task){ false, SCHEDULE_DAILY };
		s.t[TASK_PACK_REFS] = (struct strategy_task){ false, SCHEDULE_WEEKLY };
		s.t[TASK_GC] = (struct strategy_task){ true, SCHEDULE_NONE };
		return s;
	}
	if (!strcasecmp(name, "geometric")) {
		s.t[TASK_COMMIT_GRAPH] = (struct strategy_task){ true, SCHEDULE_HOURLY };
		s.t[TASK_GEOMETRIC_REPACK] = (struct strategy_task){ true, SCHEDULE_DAILY };
		s.t[TASK_PACK_REFS] = (struct strategy_task){ true, SCHEDULE_DAILY };
		s.t[TASK_RERERE_GC] = (struct strategy_task){ true, SCHEDULE_WEEKLY };
		s.t[TASK_REFLOG_EXPIRE] = (struct strategy_task){ true, SCHEDULE_WEEKLY };
		s.t[TASK_WORKTREE_PRUNE] = (struct strategy_task){ true, SCHEDULE_WEEKLY };
		return s;
	}
	die("unknown maintenance strategy: '%s'", name);
}

static enum schedule parse_schedule(const char *v)
{
	if (!strcasecmp(v, "hourly"))
		return SCHEDULE_HOURLY;
	if (!strcasecmp(v, "daily"))
		return SCHEDULE_DAILY;
	if (!strcasecmp(v, "weekly"))
		return SCHEDULE_WEEKLY;
	return SCHEDULE_NONE;
}

/*
 * The tasks to run, in git's order, into ids: the strategy
 * (maintenance.strategy; geometric for a manual run, none for a
 * scheduled one), then maintenance.<task>.enabled and .schedule.
 */
static size_t configured_tasks(struct repository *repo, enum schedule schedule, enum task_id *ids)
{
	struct strategy s;
	const char *name;
	size_t nr = 0;
	if (!config_get_string(&repo->config, "maintenance.strategy", &name) && name)
		s = parse_strategy(name);
	else
		s = parse_strategy(schedule ? "none" : "geometric");
	for (int i = 0; i < TASK__COUNT; i++) {
		struct strategy_task t = s.t[i];
		bool enabled = schedule ? t.schedule != SCHEDULE_NONE : t.manual;
		char *key = xstrfmt("maintenance.%s.enabled", tasks[i].name);
		struct gp_error err = GP_ERROR_INIT;
		bool v;
		int ret = config_get_bool(&repo->config, key, &v, &err);
		free(key);
		if (!ret)
			enabled = v;
		else if (ret != GP_ENOTFOUND)
			die_error(&err);
		gp_error_clear(&err);
		if (!enabled)
			continue;
		if (schedule) {
			const char *sv;
			key = xstrfmt("maintenance.%s.schedule", tasks[i].name);
			if (!config_get_string(&repo->config, key, &sv) && sv)
				t.schedule = parse_schedule(sv);
			free(key);
			if (t.schedule < schedule)
				continue;
		}
		ids[nr++] = (enum task_id)i;
	}
	return nr;
}

static int task_by_name(const char *name)
{
	for (int i = 0; i < TASK__COUNT; i++)
		if (!strcasecmp(tasks[i].name, name))
			return i;
	return -1;
}

static size_t selected_tasks(const struct opt_string_list *names, enum task_id *ids)
{
	size_t nr = 0;
	for (size_t i = 0; i < names->nr; i++) {
		int id = task_by_name(names->items[i]);
		if (id < 0) {
			error("'%s' is not a valid task", names->items[i]);
			exit(129);
		}
		for (size_t k = 0; k < nr; k++)
			if (ids[k] == (enum task_id)id) {
				error("task '%s' cannot be selected multiple times", names->items[i]);
				exit(129);
			}
		ids[nr++] = (enum task_id)id;
	}
	return nr;
}

/*
 * The pre-auto-gc hook, once, before an --auto run that has work to do
 * (githooks(5)): a failure stops the run. Hooks live in core.hooksPath
 * or <commondir>/hooks. Returns true when the run may go on.
 */
static bool pre_auto_gc_allows(struct maint *m)
{
	const char *dir = NULL;
	struct gp_error err = GP_ERROR_INIT;
	char *path;
	const char *argv[2];
	int code = 0, child_id;
	bool ok = true;

	if (config_get_string(&m->repo->config, "core.hookspath", &dir) || !dir)
		path = xstrfmt("%s/hooks/pre-auto-gc", m->repo->commondir);
	else
		path = xstrfmt("%s/pre-auto-gc", dir);
	if (access(path, X_OK)) {
		free(path);
		return true;
	}
	argv[0] = path;
	argv[1] = NULL;
	child_id = trace2_child_start("hook", argv);
	if (run_command(argv, NULL, 0, 0, &code, &err)) {
		error("%s", gp_error_msg(&err));
		code = -1;
	}
	trace2_child_exit(child_id, code);
	ok = code == 0;
	gp_error_clear(&err);
	free(path);
	return ok;
}

static void prepare(struct maint *m, struct repository *repo)
{
	m->repo = repo;
	m->pack_dir = xstrfmt("%s/pack", repo->objdir);
	reopen_odb(m);
}

/* ------------------------------------------------------------------ */
/* Subcommands                                                        */

/*
 * --detach: the background parts of the tasks to run go to a child
 * (this gitpack, "maintenance run --no-detach --task=..."), which
 * inherits the lock and removes it when done, as git's daemonized
 * process does; this process returns at once. False when there is
 * nothing to hand over, or the child cannot be started (the caller
 * then runs the tasks itself).
 */
static bool detach_background(const enum task_id *ids, const bool *run, size_t nr)
{
	const char **argv = xcalloc(nr + 6, sizeof(*argv));
	char **task_args = xcalloc(nr + 1, sizeof(*task_args));
	struct gp_error err = GP_ERROR_INIT;
	size_t argc = 0, nr_tasks = 0;
	char *self = self_path();
	bool started = false;

	argv[argc++] = self;
	argv[argc++] = "maintenance";
	argv[argc++] = "run";
	argv[argc++] = "--no-detach";
	argv[argc++] = "--quiet";
	for (size_t i = 0; i < nr; i++)
		if (run[i] && tasks[ids[i]].background) {
			task_args[nr_tasks] = xstrfmt("--task=%s", tasks[ids[i]].name);
			argv[argc++] = task_args[nr_tasks++];
		}
	argv[argc] = NULL;
	if (nr_tasks) {
		trace2_region_enter("maintenance", "detach");
		setenv(DETACHED_ENV, "1", 1);
		started = !run_command_detached(argv, &err);
		unsetenv(DETACHED_ENV);
		trace2_region_leave("maintenance", "detach");
		if (started) {
			/* The lock (and its companion) is the child's now. */
			free(lock_path);
			lock_path = NULL;
			free(lock_pid_path);
			lock_pid_path = NULL;
		}
	}
	gp_error_clear(&err);
	for (size_t i = 0; i < nr_tasks; i++)
		free(task_args[i]);
	free(task_args);
	free(argv);
	free(self);
	return started;
}

static int parse_schedule_opt(const struct option *opt, const char *arg, int unset)
{
	enum schedule *s = opt->value;
	if (unset || !arg) {
		*s = SCHEDULE_NONE;
		return 0;
	}
	*s = parse_schedule(arg);
	if (*s == SCHEDULE_NONE)
		die("unrecognized --schedule argument '%s'", arg);
	return 0;
}

static int maintenance_run(int argc, const char **argv, struct repository *repo)
{
	struct opt_string_list names = { 0 };
	enum schedule schedule = SCHEDULE_NONE;
	int auto_flag = 0, quiet = -1, detach = -1;
	enum task_id ids[TASK__COUNT];
	size_t nr;
	struct maint m = { 0 };
	int failed = 0;
	struct option options[] = {
		OPT_BOOL(0, "auto", &auto_flag, "run tasks based on the state of the repository"),
		OPT_BOOL(0, "detach", &detach, "run the background tasks in a process of their own"),
		OPT_CALLBACK(0, "schedule", &schedule, "frequency",
			     "run tasks based on frequency", parse_schedule_opt),
		OPT_BOOL(0, "quiet", &quiet, "do not report progress or other information over stderr"),
		OPT_STRING_LIST(0, "task", &names, "task", "run a specific task"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, run_usage);
	if (argc)
		usage_with_options(run_usage, options);
	if (auto_flag && schedule)
		die("options '%s' and '%s' cannot be used together", "--auto", "--schedule=");
	if (names.nr && schedule)
		die("options '%s' and '%s' cannot be used together", "--task=", "--schedule=");
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	if (quiet < 0)
		quiet = !isatty(2);
	nr = names.nr ? selected_tasks(&names, ids) : configured_tasks(repo, schedule, ids);

	if (take_lock(repo)) {
		if (!auto_flag && !quiet) {
			char *path = xstrfmt("%s/maintenance.lock", repo->objdir);
			struct strbuf holder = STRBUF_INIT;
			lockfile_describe_holder(path, &holder);
			warning("lock file '%s' exists, skipping maintenance%s", path, holder.buf);
			strbuf_release(&holder);
			free(path);
		}
		free(names.items);
		return 0;
	}
	prepare(&m, repo);
	m.quiet = quiet;
	m.auto_flag = auto_flag;
	m.explicit_task = names.nr > 0;

	/* --auto decides before anything runs: one task's work must not hide another's need. */
	{
		bool run[TASK__COUNT] = { false }, any = false;
		for (size_t i = 0; i < nr; i++) {
			run[i] = !auto_flag || (tasks[ids[i]].needed && tasks[ids[i]].needed(&m));
			any |= run[i];
		}
		if (auto_flag && any && !pre_auto_gc_allows(&m))
			memset(run, 0, sizeof(run));
		for (size_t i = 0; i < nr; i++) {
			const struct task *t = &tasks[ids[i]];
			/* The child of --detach: its parent did the foreground parts. */
			if (!run[i] || !t->foreground || is_detached_child)
				continue;
			trace2_region_enter("maintenance foreground", t->name);
			if (t->foreground(&m)) {
				error("task '%s' failed", t->name);
				failed = 1;
			}
			trace2_region_leave("maintenance foreground", t->name);
		}
		if (detach > 0 && detach_background(ids, run, nr)) {
			free(m.pack_dir);
			free(names.items);
			return failed;
		}
		for (size_t i = 0; i < nr; i++) {
			const struct task *t = &tasks[ids[i]];
			if (!run[i] || !t->background)
				continue;
			trace2_region_enter("maintenance", t->name);
			if (t->background(&m)) {
				error("task '%s' failed", t->name);
				failed = 1;
			}
			trace2_region_leave("maintenance", t->name);
		}
	}
	remove_lock();
	free(m.pack_dir);
	free(names.items);
	return failed;
}

static int maintenance_is_needed(int argc, const char **argv, struct repository *repo)
{
	struct opt_string_list names = { 0 };
	int auto_flag = 0;
	enum task_id ids[TASK__COUNT];
	struct maint m = { 0 };
	bool needed = false;
	size_t nr;
	struct option options[] = {
		OPT_BOOL(0, "auto", &auto_flag, "check tasks based on the state of the repository"),
		OPT_STRING_LIST(0, "task", &names, "task", "check a specific task"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, is_needed_usage);
	if (argc)
		usage_with_options(is_needed_usage, options);
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	nr = names.nr ? selected_tasks(&names, ids) : configured_tasks(repo, SCHEDULE_NONE, ids);
	prepare(&m, repo);
	m.quiet = true;
	for (size_t i = 0; i < nr && !needed; i++)
		needed = !auto_flag || (tasks[ids[i]].needed && tasks[ids[i]].needed(&m));
	free(m.pack_dir);
	free(names.items);
	return needed ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* register, unregister                                               */

static const char *const register_usage[] = {
	"git maintenance register [--config-file <path>]",
	NULL,
};

static const char *const unregister_usage[] = {
	"git maintenance unregister [--config-file <path>] [--force]",
	NULL,
};

/*
 * gitpack has no config writer: the edits are made by running
 * "git config", which knows where the global file is ($GIT_CONFIG_GLOBAL,
 * $XDG_CONFIG_HOME or ~/.gitconfig) and how to rewrite a file safely.
 */
static void git_config(const char *const *argv)
{
	struct gp_error err = GP_ERROR_INIT;
	int code = 0;
	if (run_command(argv, NULL, 0, 0, &code, &err))
		die_error(&err);
	if (code)
		die("'git config' failed (exit code %d)", code);
}

/* The path git's maintenance registers: the work tree's top, or the git directory when bare. */
static const char *maint_path(struct repository *repo)
{
	return repo->worktree ? repo->worktree : repo->gitdir;
}

/*
 * Whether cs lists path as a maintenance.repo. As git reads the list,
 * a bare "maintenance.repo" line makes it unreadable: an error is
 * reported and the path counts as not listed.
 */
static bool registered_in(const struct config_set *cs, const char *path)
{
	bool found = false;
	for (size_t i = 0; i < cs->nr; i++) {
		if (strcasecmp(cs->items[i].key, "maintenance.repo"))
			continue;
		if (!cs->items[i].value) {
			error("missing value for 'maintenance.repo'");
			return false;
		}
		if (!strcmp(cs->items[i].value, path))
			found = true;
	}
	return found;
}

static int maintenance_register(int argc, const char **argv, struct repository *repo)
{
	const char *config_file = NULL, *path;
	const char *value;
	struct option options[] = {
		OPT_STRING(0, "config-file", &config_file, "file", "use given config file"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, register_usage);
	if (argc)
		usage_with_options(register_usage, options);
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	path = maint_path(repo);

	/* As git documents: no foreground maintenance, and the incremental strategy unless one is set. */
	git_config((const char *[]){ "git", "config", "--local", "maintenance.auto", "false",
				     NULL });
	if (config_get_value(&repo->config, "maintenance.strategy", &value) == GP_ENOTFOUND)
		git_config((const char *[]){ "git", "config", "--local", "maintenance.strategy",
					     "incremental", NULL });
	if (!registered_in(&repo->config, path)) {
		if (config_file)
			git_config((const char *[]){ "git", "config", "--file", config_file, "--add",
						     "maintenance.repo", path, NULL });
		else
			git_config((const char *[]){ "git", "config", "--global", "--add",
						     "maintenance.repo", path, NULL });
	}
	return 0;
}

static int maintenance_unregister(int argc, const char **argv, struct repository *repo)
{
	const char *config_file = NULL, *path;
	int force = 0;
	bool found;
	struct option options[] = {
		OPT_STRING(0, "config-file", &config_file, "file", "use given config file"),
		OPT_BOOL('f', "force", &force,
			 "return success even if repository was not registered"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, unregister_usage);
	if (argc)
		usage_with_options(unregister_usage, options);
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	path = maint_path(repo);

	if (config_file) {
		/* Only that file: one that cannot be read lists nothing. */
		struct config_set cs = CONFIG_SET_INIT;
		struct gp_error err = GP_ERROR_INIT;
		if (config_set_add_file(&cs, config_file, CONFIG_SCOPE_COMMAND, NULL, &err))
			gp_error_clear(&err);
		found = registered_in(&cs, path);
		config_set_release(&cs);
	} else {
		found = registered_in(&repo->config, path);
	}
	if (!found) {
		if (!force)
			die("repository '%s' is not registered", path);
		return 0;
	}
	if (config_file)
		git_config((const char *[]){ "git", "config", "--file", config_file, "--unset-all",
					     "--fixed-value", "maintenance.repo", path, NULL });
	else
		git_config((const char *[]){ "git", "config", "--global", "--unset-all",
					     "--fixed-value", "maintenance.repo", path, NULL });
	return 0;
}

int cmd_maintenance(int argc, const char **argv, struct repository *repo)
{
	struct option options[] = { OPT_END() };
	const char *sub;

	if (argc < 2) {
		error("need a subcommand");
		usage_with_options(maintenance_usage, options);
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		struct strbuf text = STRBUF_INIT;
		parse_options_usage(maintenance_usage, options, &text);
		fputs(text.buf, stdout);
		strbuf_release(&text);
		/* As git maintenance -h (a command of subcommands): success. */
		exit(0);
	}
	if (!strcmp(sub, "run"))
		return maintenance_run(argc - 1, argv + 1, repo);
	if (!strcmp(sub, "is-needed"))
		return maintenance_is_needed(argc - 1, argv + 1, repo);
	if (!strcmp(sub, "register"))
		return maintenance_register(argc - 1, argv + 1, repo);
	if (!strcmp(sub, "unregister"))
		return maintenance_unregister(argc - 1, argv + 1, repo);
	if (!strcmp(sub, "start")) {
		/* As git: schedule first, then the config changes of register. */
		const char *register_argv[] = { "register", NULL };
		maintenance_start(argc - 1, argv + 1, repo);
		return maintenance_register(1, register_argv, repo);
	}
	if (!strcmp(sub, "stop"))
		return maintenance_stop(argc - 1, argv + 1, repo);
	error("unknown subcommand: `%s'", sub);
	usage_with_options(maintenance_usage, options);
}
