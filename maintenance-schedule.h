/*
 * maintenance-schedule.h: the background schedule of "maintenance
 * start" and "maintenance stop" (git-maintenance(1): --scheduler and
 * BACKGROUND MAINTENANCE ON POSIX / LINUX SYSTEMD / MACOS / WINDOWS
 * SYSTEMS). Three jobs, hourly, daily and weekly, each running
 *
 *   <program> for-each-repo --keep-going --config=maintenance.repo \
 *           maintenance run --schedule=<frequency>
 *
 * where <program> is the gitpack binary that scheduled them, so that
 * the repositories listed in maintenance.repo are maintained by
 * gitpack, not by whatever git the scheduler finds. Four schedulers
 * can hold the jobs:
 *  - crontab: a block between "# BEGIN GIT MAINTENANCE SCHEDULE" and
 *    "# END GIT MAINTENANCE SCHEDULE" lines of the user's table
 *    ("crontab -l", then "crontab <file>"), the rest of the table kept;
 *  - systemd-timer: user units git-maintenance@<frequency>.timer and
 *    the template git-maintenance@.service in
 *    $XDG_CONFIG_HOME/systemd/user (or ~/.config/systemd/user), started
 *    and stopped with "systemctl --user enable|disable --now";
 *  - launchctl: ~/Library/LaunchAgents/org.git-scm.git.<frequency>.plist,
 *    "launchctl bootout|bootstrap gui/<uid> <plist>" (a job whose file
 *    is unchanged and that "launchctl list <label>" knows is left alone);
 *  - schtasks: tasks "Git Maintenance (<frequency>)", created from an
 *    XML file written to the git directory, deleted by name.
 *
 * Each scheduler program is found in PATH. For tests, as in git,
 * GIT_TEST_MAINT_SCHEDULER="<name>:<command>,..." (names crontab,
 * systemctl, launchctl, schtasks) replaces each listed program by
 * <command> (split at white space, arguments appended) and makes
 * exactly the listed ones available; the jobs' minute is then fixed.
 *
 * Every program is started with posix_spawn (run-command.h).
 */
#ifndef GP_MAINTENANCE_SCHEDULE_H
#define GP_MAINTENANCE_SCHEDULE_H

#include "util.h"

struct gp_error;

/* In the order schedulers are visited when jobs are removed. */
enum maint_scheduler {
	MAINT_SCHEDULER_AUTO = 0,
	MAINT_SCHEDULER_CRONTAB,
	MAINT_SCHEDULER_SYSTEMD,
	MAINT_SCHEDULER_LAUNCHCTL,
	MAINT_SCHEDULER_SCHTASKS,
	MAINT_SCHEDULER_NR,
};

/*
 * The --scheduler value: "auto", "crontab", "systemd-timer" (or
 * "systemd"), "launchctl", "schtasks". false when name is none of them.
 */
bool maint_scheduler_parse(const char *name, enum maint_scheduler *out);

/* The name of s in messages: its program's ("crontab", "systemctl", ...). */
const char *maint_scheduler_name(enum maint_scheduler s);

/*
 * Whether s can be used here. Without GIT_TEST_MAINT_SCHEDULER this
 * runs a program: "crontab -l" must start, "systemctl --user
 * list-timers" must succeed; launchctl is macOS's and schtasks
 * Windows', never available elsewhere.
 */
bool maint_scheduler_is_available(enum maint_scheduler s);

/*
 * Resolve MAINT_SCHEDULER_AUTO into the platform's scheduler (on Linux
 * systemd-timer when available, else crontab); any other value is left
 * as it is. Errors: GP_ENOTFOUND when Linux has neither.
 */
int maint_scheduler_resolve(enum maint_scheduler *s, struct gp_error *err);

/*
 * objects/schedule.lock, created exclusively: only one start or stop
 * at a time in a repository. Errors: GP_EBUSY when it exists (another
 * start or stop runs, or one crashed), with git's explanation naming
 * the file; GP_EIO when it cannot be created. The holder removes it
 * with maint_schedule_unlock() (also from a signal handler: it only
 * calls unlink()).
 */
int maint_schedule_lock(const char *lock_path, struct gp_error *err);
void maint_schedule_unlock(const char *lock_path);

struct maint_schedule {
	const char *program;   /* absolute path of the gitpack the jobs run */
	const char *tmp_dir;   /* where schtasks' XML files are written */
	/*
	 * Problems that do not stop the update (a scheduler whose jobs
	 * could not be removed), as git reports them and goes on.
	 */
	void (*report)(void *data, const char *msg);
	void *report_data;
};

/*
 * With the lock held: remove the jobs from every available scheduler
 * other than enable, then, unless enable is MAINT_SCHEDULER_AUTO
 * (meaning "stop"), install them with enable, which must be resolved
 * and available. Errors: GP_EIO when a program cannot be run or fails
 * or a file cannot be written; GP_EINVAL when the program's path
 * cannot be written into a crontab or a systemd unit.
 */
int maint_schedule_update(const struct maint_schedule *ms, enum maint_scheduler enable,
			  struct gp_error *err);

#endif
