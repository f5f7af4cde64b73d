/*
 * builtin/maintenance-schedule.c: gitpack maintenance start and stop
 * (git-maintenance(1)): options, the choice of scheduler and git's
 * messages; the schedulers themselves are maintenance-schedule.c's.
 * The jobs run this very binary (/proc/self/exe), so that the
 * repositories are maintained by the gitpack that was asked to.
 */
#include "maintenance-schedule.h"
#include "../builtin.h"
#include "../error.h"
#include "../lockfile.h"
#include "../maintenance-schedule.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../run-command.h"
#include <errno.h>
#include <signal.h>
#include <unistd.h>

static const char *const start_usage[] = {
	"git maintenance start [--scheduler=<scheduler>]",
	NULL,
};

static const char *const stop_usage[] = {
	"git maintenance stop",
	NULL,
};

static int parse_scheduler(const struct option *opt, const char *arg, int unset)
{
	enum maint_scheduler *s = opt->value;
	if (!maint_scheduler_parse(arg, s))
		return error("unrecognized --scheduler argument '%s'", arg);
	return 0;
}

static void report_warning(void *data, const char *msg)
{
	warning("%s", msg);
}

/* The absolute path of the running binary: what the jobs will run. */
static char *self_program(void)
{
	char *path = run_self_path();
	if (!path)
		die("cannot find the path of the running gitpack (/proc/self/exe)");
	return path;
}

/* The lock this process holds and its ~pid companion, for the signal handler; NULL when none. */
static char *held_lock, *held_lock_pid;

static void unlock_on_signal(int sig)
{
	/* unlink() alone: a signal handler may not allocate. */
	if (held_lock_pid)
		unlink(held_lock_pid);
	if (held_lock)
		unlink(held_lock);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The update under objects/schedule.lock, which goes away with us even
 * when we are interrupted (a scheduler program can take its time).
 */
static int update(struct repository *repo, enum maint_scheduler enable, struct gp_error *err)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	char *program = self_program();
	char *lock_path = xstrfmt("%s/schedule.lock", repo->objdir);
	struct maint_schedule ms = {
		.program = program,
		.tmp_dir = repo->commondir,
		.report = report_warning,
	};
	int ret = maint_schedule_lock(lock_path, err);

	if (ret)
		goto out;
	held_lock_pid = lockfile_pid_path(lock_path);
	held_lock = lock_path;
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], unlock_on_signal);
	ret = maint_schedule_update(&ms, enable, err);
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		signal(signals[i], SIG_DFL);
	held_lock = NULL;
	{
		char *pid_path = held_lock_pid;
		held_lock_pid = NULL;
		free(pid_path);
	}
	maint_schedule_unlock(lock_path);
out:
	free(lock_path);
	free(program);
	return ret;
}

int maintenance_start(int argc, const char **argv, struct repository *repo)
{
	enum maint_scheduler scheduler = MAINT_SCHEDULER_AUTO;
	struct gp_error err = GP_ERROR_INIT;
	struct option options[] = {
		OPT_CALLBACK_F(0, "scheduler", &scheduler, "scheduler",
			       "scheduler to trigger git maintenance run", PARSE_OPT_NONEG,
			       parse_scheduler),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, start_usage);
	if (argc)
		usage_with_options(start_usage, options);
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	if (maint_scheduler_resolve(&scheduler, &err))
		die_error(&err);
	if (!maint_scheduler_is_available(scheduler))
		die("%s scheduler is not available", maint_scheduler_name(scheduler));
	if (update(repo, scheduler, &err)) {
		error("%s", gp_error_msg(&err));
		die("failed to set up maintenance schedule");
	}
	return 0;
}

int maintenance_stop(int argc, const char **argv, struct repository *repo)
{
	struct gp_error err = GP_ERROR_INIT;
	struct option options[] = { OPT_END() };

	argc = parse_options(argc, argv, options, stop_usage);
	if (argc)
		usage_with_options(stop_usage, options);
	if (!repo)
		die("not a git repository (or any of the parent directories): .git");
	if (update(repo, MAINT_SCHEDULER_AUTO, &err)) {
		error("%s", gp_error_msg(&err));
		gp_error_clear(&err);
		return 1;
	}
	return 0;
}
