/*
 * maintenance-schedule.c: see maintenance-schedule.h. The jobs' times
 * are git-maintenance(1)'s: hourly at minute M of hours 1-23, daily at
 * 0:M Monday to Saturday, weekly at 0:M on Sunday, so that the three
 * never overlap; M is random (spreading a fleet's load over the hour)
 * except under GIT_TEST_MAINT_SCHEDULER, where tests need files that
 * do not change from one start to the next.
 *
 * Removing jobs never fails the update: a scheduler that holds none
 * complains (systemctl disable, launchctl bootout, schtasks /delete
 * of what is not there), so those exit codes are ignored and their
 * standard error silenced; only a program that cannot be run at all
 * or a file that cannot be written is reported (ms->report).
 */
#include "maintenance-schedule.h"
#include "error.h"
#include "lockfile.h"
#include "run-command.h"
#include "strbuf.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEST_ENV "GIT_TEST_MAINT_SCHEDULER"
#define CRON_BEGIN "# BEGIN GIT MAINTENANCE SCHEDULE"
#define CRON_END "# END GIT MAINTENANCE SCHEDULE"
#define TEST_MINUTE 13

static const char *const frequencies[] = { "hourly", "daily", "weekly" };
#define NR_FREQ ARRAY_SIZE(frequencies)

/* What the scheduled job runs after the program: the same for every scheduler. */
#define JOB_ARGS "for-each-repo --keep-going --config=maintenance.repo maintenance run"

static const char *const program_names[MAINT_SCHEDULER_NR] = {
	[MAINT_SCHEDULER_AUTO] = "auto",
	[MAINT_SCHEDULER_CRONTAB] = "crontab",
	[MAINT_SCHEDULER_SYSTEMD] = "systemctl",
	[MAINT_SCHEDULER_LAUNCHCTL] = "launchctl",
	[MAINT_SCHEDULER_SCHTASKS] = "schtasks",
};

bool maint_scheduler_parse(const char *name, enum maint_scheduler *out)
{
	static const struct {
		const char *name;
		enum maint_scheduler s;
	} names[] = {
		{ "auto", MAINT_SCHEDULER_AUTO },
		{ "crontab", MAINT_SCHEDULER_CRONTAB },
		{ "systemd", MAINT_SCHEDULER_SYSTEMD },
		{ "systemd-timer", MAINT_SCHEDULER_SYSTEMD },
		{ "launchctl", MAINT_SCHEDULER_LAUNCHCTL },
		{ "schtasks", MAINT_SCHEDULER_SCHTASKS },
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(name, names[i].name)) {
			*out = names[i].s;
			return true;
		}
	}
	return false;
}

const char *maint_scheduler_name(enum maint_scheduler s)
{
	return program_names[s];
}

/* ------------------------------------------------------------------ */
/* Argument vectors                                                    */

struct cmd {
	const char **argv; /* NULL-terminated */
	size_t nr, alloc;
	char *words;       /* owns the strings split from the test command */
};

#define CMD_INIT { .argv = NULL }

static void cmd_push(struct cmd *c, const char *arg)
{
	ALLOC_GROW(c->argv, c->nr + 2, c->alloc);
	c->argv[c->nr++] = arg;
	c->argv[c->nr] = NULL;
}

static void cmd_release(struct cmd *c)
{
	free(c->argv);
	free(c->words);
	*c = (struct cmd)CMD_INIT;
}

/*
 * Start c with the command that stands for scheduler s: its program,
 * or what GIT_TEST_MAINT_SCHEDULER names for it (split at white space).
 * Returns whether s is available according to that variable: 1 yes, 0
 * no, -1 when the variable is not set (the program itself then).
 */
static int scheduler_cmd(enum maint_scheduler s, struct cmd *c)
{
	const char *env = getenv(TEST_ENV), *name = program_names[s];
	size_t name_len = strlen(name);
	int listed = 0;

	if (!env) {
		cmd_push(c, name);
		return -1;
	}
	for (const char *entry = env; *entry;) {
		const char *end = strchrnul(entry, ',');
		if ((size_t)(end - entry) > name_len && !strncmp(entry, name, name_len) &&
		    entry[name_len] == ':') {
			char *p;
			size_t len = (size_t)(end - entry) - name_len - 1;
			c->words = xmalloc(len + 1);
			memcpy(c->words, entry + name_len + 1, len);
			c->words[len] = '\0';
			for (p = c->words; *p;) {
				while (*p && isspace((unsigned char)*p))
					*p++ = '\0';
				if (!*p)
					break;
				cmd_push(c, p);
				while (*p && !isspace((unsigned char)*p))
					p++;
			}
			listed = 1;
			break;
		}
		entry = *end ? end + 1 : end;
	}
	if (!c->nr)
		cmd_push(c, name);
	return listed;
}

/* Run c; its exit status into *code. GP_EIO when it cannot be started. */
static int cmd_run(const struct cmd *c, unsigned flags, int *code, struct gp_error *err)
{
	return run_command(c->argv, NULL, 0, flags, code, err);
}

/* ------------------------------------------------------------------ */
/* Availability                                                        */

bool maint_scheduler_is_available(enum maint_scheduler s)
{
	struct cmd c = CMD_INIT;
	struct gp_error err = GP_ERROR_INIT;
	int listed, code = 0;
	bool ok = false;

	if (s == MAINT_SCHEDULER_AUTO || s >= MAINT_SCHEDULER_NR)
		return false;
	listed = scheduler_cmd(s, &c);
	if (listed >= 0) {
		ok = listed;
		goto out;
	}
	switch (s) {
	case MAINT_SCHEDULER_CRONTAB:
#ifdef __APPLE__
		/* macOS has cron, but asks the user for permission to use it. */
		ok = false;
#else
		/* An empty table makes "crontab -l" fail: starting is enough. */
		cmd_push(&c, "-l");
		ok = !cmd_run(&c, RUN_STDOUT_TO_NULL | RUN_STDERR_TO_NULL, &code, &err);
#endif
		break;
	case MAINT_SCHEDULER_SYSTEMD:
#ifdef __linux__
		cmd_push(&c, "--user");
		cmd_push(&c, "list-timers");
		ok = !cmd_run(&c, RUN_STDOUT_TO_NULL | RUN_STDERR_TO_NULL, &code, &err) && !code;
#endif
		break;
	case MAINT_SCHEDULER_LAUNCHCTL:
#ifdef __APPLE__
		ok = true;
#endif
		break;
	case MAINT_SCHEDULER_SCHTASKS:
#ifdef _WIN32
		ok = true;
#endif
		break;
	default:
		break;
	}
out:
	gp_error_clear(&err);
	cmd_release(&c);
	return ok;
}

int maint_scheduler_resolve(enum maint_scheduler *s, struct gp_error *err)
{
	if (*s != MAINT_SCHEDULER_AUTO)
		return 0;
#if defined(__APPLE__)
	*s = MAINT_SCHEDULER_LAUNCHCTL;
#elif defined(_WIN32)
	*s = MAINT_SCHEDULER_SCHTASKS;
#elif defined(__linux__)
	if (maint_scheduler_is_available(MAINT_SCHEDULER_SYSTEMD))
		*s = MAINT_SCHEDULER_SYSTEMD;
	else if (maint_scheduler_is_available(MAINT_SCHEDULER_CRONTAB))
		*s = MAINT_SCHEDULER_CRONTAB;
	else
		return gp_error_set(err, GP_ENOTFOUND,
				    "neither systemd timers nor crontab are available");
#else
	*s = MAINT_SCHEDULER_CRONTAB;
#endif
	return 0;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* mkdir -p of path's directories (not of its last component). */
static int create_leading_dirs(const char *path, struct gp_error *err)
{
	char *copy = xstrdup(path);
	int ret = 0;
	for (char *slash = strchr(copy + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(copy, 0777) < 0 && errno != EEXIST) {
			ret = gp_error_errno(err, "unable to create directory '%s'", copy);
			break;
		}
		*slash = '/';
	}
	free(copy);
	return ret;
}

/*
 * Replace path with content, atomically: a reader (systemd, launchd)
 * sees the old file or the new one, never half of one.
 */
static int write_file_atomic(const char *path, const struct strbuf *content,
			     struct gp_error *err)
{
	char *tmp = xstrfmt("%s.tmp-XXXXXX", path);
	int fd, ret = create_leading_dirs(path, err);

	if (ret)
		goto out;
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = gp_error_errno(err, "unable to create '%s'", tmp);
		goto out;
	}
	if (fchmod(fd, 0644) < 0 || write_in_full(fd, content->buf, content->len) < 0) {
		ret = gp_error_errno(err, "unable to write '%s'", tmp);
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		ret = gp_error_errno(err, "unable to write '%s'", path);
		unlink(tmp);
	}
out:
	free(tmp);
	return ret;
}

static int remove_file(const char *path, struct gp_error *err)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return gp_error_errno(err, "unable to remove '%s'", path);
	return 0;
}

/*
 * The program path goes into a crontab line and a systemd ExecStart=
 * inside double quotes: characters the shell or systemd would still
 * interpret there ('%' is a newline to cron and a specifier to
 * systemd) are refused rather than escaped two different ways.
 */
static int check_program_path(const char *program, const char *where, struct gp_error *err)
{
	if (strpbrk(program, "\"\\%$`\n\r"))
		return gp_error_set(err, GP_EINVAL,
				    "cannot schedule '%s' with %s: its path has a character "
				    "(\", \\, %%, $, ` or a newline) that would be interpreted",
				    program, where);
	return 0;
}

/* s with &, <, > and quotes escaped for XML text and attributes. */
static void add_xml_escaped(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&apos;"); break;
		default: strbuf_addch(out, *s); break;
		}
	}
}

static int pick_minute(void)
{
	unsigned int r;
	if (getenv(TEST_ENV))
		return TEST_MINUTE;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	return (int)(r % 60);
}

/* ------------------------------------------------------------------ */
/* crontab                                                             */

/*
 * table without our block (every line kept, each ending in a newline);
 * *had_block tells whether there was one.
 */
static void cron_strip(const struct strbuf *table, struct strbuf *out, bool *had_block)
{
	bool inside = false;
	const char *p = table->buf, *end = table->buf + table->len;

	*had_block = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (!inside && len == strlen(CRON_BEGIN) && !memcmp(p, CRON_BEGIN, len)) {
			inside = true;
			*had_block = true;
		} else if (inside && len == strlen(CRON_END) && !memcmp(p, CRON_END, len)) {
			inside = false;
		} else if (!inside) {
			strbuf_add(out, p, len);
			strbuf_addch(out, '\n');
		}
		p += len + (nl ? 1 : 0);
	}
}

static int crontab_update(const struct maint_schedule *ms, bool enable, struct gp_error *err)
{
	struct cmd list = CMD_INIT, edit = CMD_INIT;
	struct strbuf table = STRBUF_INIT, updated = STRBUF_INIT, tmp = STRBUF_INIT;
	bool had_block;
	int code = 0, ret;

	if (enable && (ret = check_program_path(ms->program, "cron", err)))
		goto out;
	scheduler_cmd(MAINT_SCHEDULER_CRONTAB, &list);
	cmd_push(&list, "-l");
	/* "crontab -l" fails for a user without a table: an empty one. */
	ret = run_command_capture(list.argv, 0, &table, &code, err);
	if (ret) {
		gp_error_prefix(err, "failed to run 'crontab -l'; your system might not support 'cron'");
		goto out;
	}
	cron_strip(&table, &updated, &had_block);
	if (!enable && !had_block)
		goto out; /* nothing of ours: leave the table as it is */
	if (enable) {
		int minute = pick_minute();
		strbuf_addf(&updated, "%s\n", CRON_BEGIN);
		strbuf_addstr(&updated, "# The following schedule was created by gitpack maintenance start.\n"
					"# Any edits made in this region might be\n"
					"# replaced in the future by a gitpack command.\n\n");
		strbuf_addf(&updated, "%d 1-23 * * * \"%s\" " JOB_ARGS " --schedule=hourly\n",
			    minute, ms->program);
		strbuf_addf(&updated, "%d 0 * * 1-6 \"%s\" " JOB_ARGS " --schedule=daily\n",
			    minute, ms->program);
		strbuf_addf(&updated, "%d 0 * * 0 \"%s\" " JOB_ARGS " --schedule=weekly\n",
			    minute, ms->program);
		strbuf_addf(&updated, "\n%s\n", CRON_END);
	}
	ret = write_temp_file(updated.buf, updated.len, &tmp, err);
	if (ret)
		goto out;
	scheduler_cmd(MAINT_SCHEDULER_CRONTAB, &edit);
	cmd_push(&edit, tmp.buf);
	ret = cmd_run(&edit, 0, &code, err);
	if (ret)
		gp_error_prefix(err, "failed to run 'crontab'; your system might not support 'cron'");
	else if (code)
		ret = gp_error_set(err, GP_EIO, "'crontab' died (exit code %d)", code);
	unlink(tmp.buf);
out:
	strbuf_release(&tmp);
	strbuf_release(&updated);
	strbuf_release(&table);
	cmd_release(&edit);
	cmd_release(&list);
	return ret;
}

/* ------------------------------------------------------------------ */
/* systemd user timers                                                 */

/* $XDG_CONFIG_HOME/systemd/user/<file>, or ~/.config/systemd/user/<file>. */
static int systemd_unit_path(const char *file, char **out, struct gp_error *err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		*out = xstrfmt("%s/systemd/user/%s", xdg, file);
	else if (home && *home)
		*out = xstrfmt("%s/.config/systemd/user/%s", home, file);
	else
		return gp_error_set(err, GP_EINVAL,
				    "cannot find the systemd user unit directory: "
				    "neither $XDG_CONFIG_HOME nor $HOME is set");
	return 0;
}

static int systemd_write_unit(const char *file, const struct strbuf *content,
			      struct gp_error *err)
{
	char *path = NULL;
	int ret = systemd_unit_path(file, &path, err);
	if (!ret)
		ret = write_file_atomic(path, content, err);
	free(path);
	return ret;
}

static int systemd_remove_unit(const char *file, struct gp_error *err)
{
	char *path = NULL;
	int ret = systemd_unit_path(file, &path, err);
	if (!ret)
		ret = remove_file(path, err);
	free(path);
	return ret;
}

static const char systemd_header[] =
	"# This file was created by gitpack maintenance start, which rewrites it;\n"
	"# gitpack maintenance stop removes it. Customize with a drop-in file\n"
	"# (a .conf file in a directory named after this unit plus \".d\").\n\n";

static int systemd_write_units(const struct maint_schedule *ms, struct gp_error *err)
{
	/* systemd calendar events matching the crontab's times. */
	static const char *const on_calendar[NR_FREQ] = {
		"*-*-* 1..23:%02d:00",
		"Mon..Sat *-*-* 0:%02d:00",
		"Sun *-*-* 0:%02d:00",
	};
	struct strbuf unit = STRBUF_INIT;
	int minute = pick_minute(), ret;

	ret = check_program_path(ms->program, "systemd", err);
	for (size_t f = 0; !ret && f < NR_FREQ; f++) {
		char *file = xstrfmt("git-maintenance@%s.timer", frequencies[f]);
		strbuf_reset(&unit);
		strbuf_addstr(&unit, systemd_header);
		strbuf_addf(&unit, "[Unit]\nDescription=Optimize Git repositories data (%s)\n\n",
			    frequencies[f]);
		strbuf_addstr(&unit, "[Timer]\nOnCalendar=");
		strbuf_addf(&unit, on_calendar[f], minute);
		strbuf_addstr(&unit, "\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n");
		ret = systemd_write_unit(file, &unit, err);
		free(file);
	}
	if (ret)
		goto out;
	/*
	 * The service is a template: git-maintenance@daily.timer starts
	 * git-maintenance@daily.service, whose instance name (%i) is the
	 * frequency. Credential helpers must not prompt a user who is not
	 * there.
	 */
	strbuf_reset(&unit);
	strbuf_addstr(&unit, systemd_header);
	strbuf_addstr(&unit, "[Unit]\nDescription=Optimize Git repositories data\n\n[Service]\n"
			     "Type=oneshot\n");
	strbuf_addf(&unit,
		    "ExecStart=\"%s\" -c credential.interactive=false -c core.askPass=true "
		    JOB_ARGS " --schedule=%%i\n",
		    ms->program);
	strbuf_addstr(&unit, "LockPersonality=yes\n"
			     "MemoryDenyWriteExecute=yes\n"
			     "NoNewPrivileges=yes\n"
			     "RestrictRealtime=yes\n"
			     "RestrictSUIDSGID=yes\n"
			     "SystemCallArchitectures=native\n");
	ret = systemd_write_unit("git-maintenance@.service", &unit, err);
out:
	strbuf_release(&unit);
	return ret;
}

/* "systemctl --user enable|disable --now git-maintenance@<f>.timer". */
static int systemctl_timer(const char *frequency, bool enable, int *code, struct gp_error *err)
{
	struct cmd c = CMD_INIT;
	char *unit = xstrfmt("git-maintenance@%s.timer", frequency);
	int ret;

	scheduler_cmd(MAINT_SCHEDULER_SYSTEMD, &c);
	cmd_push(&c, "--user");
	cmd_push(&c, enable ? "enable" : "disable");
	cmd_push(&c, "--now");
	cmd_push(&c, unit);
	/* Disabling what is not enabled is an error to systemctl, not to us. */
	ret = cmd_run(&c, enable ? 0 : RUN_STDERR_TO_NULL, code, err);
	if (ret)
		gp_error_prefix(err, "failed to start systemctl");
	free(unit);
	cmd_release(&c);
	return ret;
}

static int systemd_remove(const struct maint_schedule *ms, struct gp_error *err)
{
	int ret = 0, code;
	for (size_t f = 0; !ret && f < NR_FREQ; f++)
		ret = systemctl_timer(frequencies[f], false, &code, err);
	for (size_t f = 0; !ret && f < NR_FREQ; f++) {
		char *file = xstrfmt("git-maintenance@%s.timer", frequencies[f]);
		ret = systemd_remove_unit(file, err);
		free(file);
	}
	/* Older gits wrote a template timer; it goes too. */
	if (!ret)
		ret = systemd_remove_unit("git-maintenance@.timer", err);
	if (!ret)
		ret = systemd_remove_unit("git-maintenance@.service", err);
	return ret;
}

static int systemd_update(const struct maint_schedule *ms, bool enable, struct gp_error *err)
{
	int ret, code = 0;
	if (!enable)
		return systemd_remove(ms, err);
	ret = systemd_write_units(ms, err);
	for (size_t f = 0; !ret && f < NR_FREQ; f++) {
		ret = systemctl_timer(frequencies[f], true, &code, err);
		if (!ret && code)
			ret = gp_error_set(err, GP_EIO, "failed to run systemctl (exit code %d)",
					   code);
	}
	if (ret) {
		/* No half-installed schedule: what was written goes again. */
		struct gp_error ignored = GP_ERROR_INIT;
		systemd_remove(ms, &ignored);
		gp_error_clear(&ignored);
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* launchd                                                             */

static int launchd_plist_path(const char *frequency, char **out, struct gp_error *err)
{
	const char *home = getenv("HOME");
	if (!home || !*home)
		return gp_error_set(err, GP_EINVAL, "cannot find ~/Library/LaunchAgents: $HOME is not set");
	*out = xstrfmt("%s/Library/LaunchAgents/org.git-scm.git.%s.plist", home, frequency);
	return 0;
}

/* "launchctl bootout|bootstrap gui/<uid> <plist>". */
static int launchctl_boot(const char *verb, const char *plist, unsigned flags, int *code,
			  struct gp_error *err)
{
	struct cmd c = CMD_INIT;
	char *domain = xstrfmt("gui/%lu", (unsigned long)getuid());
	int ret;
	scheduler_cmd(MAINT_SCHEDULER_LAUNCHCTL, &c);
	cmd_push(&c, verb);
	cmd_push(&c, domain);
	cmd_push(&c, plist);
	ret = cmd_run(&c, flags, code, err);
	if (ret)
		gp_error_prefix(err, "failed to start launchctl");
	free(domain);
	cmd_release(&c);
	return ret;
}

static void launchd_plist(const struct maint_schedule *ms, size_t f, int minute,
			  struct strbuf *out)
{
	static const char *const args[] = {
		"for-each-repo", "--keep-going", "--config=maintenance.repo", "maintenance", "run",
	};
	strbuf_addstr(out, "<?xml version=\"1.0\"?>\n"
			   "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
			   "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
			   "<plist version=\"1.0\">\n<dict>\n");
	strbuf_addf(out, "<key>Label</key><string>org.git-scm.git.%s</string>\n", frequencies[f]);
	strbuf_addstr(out, "<key>ProgramArguments</key>\n<array>\n<string>");
	add_xml_escaped(out, ms->program);
	strbuf_addstr(out, "</string>\n");
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		strbuf_addf(out, "<string>%s</string>\n", args[i]);
	strbuf_addf(out, "<string>--schedule=%s</string>\n</array>\n", frequencies[f]);
	strbuf_addstr(out, "<key>StartCalendarInterval</key>\n<array>\n");
	if (f == 0) {
		for (int hour = 1; hour <= 23; hour++)
			strbuf_addf(out, "<dict><key>Hour</key><integer>%d</integer>"
					 "<key>Minute</key><integer>%d</integer></dict>\n",
				    hour, minute);
	} else {
		/* daily: Monday (1) to Saturday (6); weekly: Sunday (0). */
		int first = f == 1 ? 1 : 0, last = f == 1 ? 6 : 0;
		for (int day = first; day <= last; day++)
			strbuf_addf(out, "<dict><key>Weekday</key><integer>%d</integer>"
					 "<key>Hour</key><integer>0</integer>"
					 "<key>Minute</key><integer>%d</integer></dict>\n",
				    day, minute);
	}
	strbuf_addstr(out, "</array>\n"
			   "<key>StandardOutPath</key><string>/dev/null</string>\n"
			   "<key>StandardErrorPath</key><string>/dev/null</string>\n"
			   "</dict>\n</plist>\n");
}

/* Whether launchd already runs label: "launchctl list <label>" succeeds. */
static bool launchctl_knows(const char *frequency)
{
	struct cmd c = CMD_INIT;
	struct gp_error err = GP_ERROR_INIT;
	char *label = xstrfmt("org.git-scm.git.%s", frequency);
	int code = 1;
	bool known;
	scheduler_cmd(MAINT_SCHEDULER_LAUNCHCTL, &c);
	cmd_push(&c, "list");
	cmd_push(&c, label);
	known = !cmd_run(&c, RUN_STDOUT_TO_NULL | RUN_STDERR_TO_NULL, &code, &err) && !code;
	gp_error_clear(&err);
	free(label);
	cmd_release(&c);
	return known;
}

static int launchd_update(const struct maint_schedule *ms, bool enable, struct gp_error *err)
{
	struct strbuf want = STRBUF_INIT, have = STRBUF_INIT;
	int minute = pick_minute(), ret = 0, code;

	for (size_t f = 0; !ret && f < NR_FREQ; f++) {
		char *plist = NULL;
		ret = launchd_plist_path(frequencies[f], &plist, err);
		if (ret)
			break;
		if (!enable) {
			/* Not loaded: bootout says so, and that is fine. */
			ret = launchctl_boot("bootout", plist, RUN_STDERR_TO_NULL, &code, err);
			if (!ret)
				ret = remove_file(plist, err);
			free(plist);
			continue;
		}
		strbuf_reset(&want);
		strbuf_reset(&have);
		launchd_plist(ms, f, minute, &want);
		if (strbuf_read_file(&have, plist, 0) >= 0 && have.len == want.len &&
		    !memcmp(have.buf, want.buf, want.len) && launchctl_knows(frequencies[f])) {
			free(plist);
			continue; /* already scheduled as we would schedule it */
		}
		ret = write_file_atomic(plist, &want, err);
		if (!ret)
			ret = launchctl_boot("bootout", plist, RUN_STDERR_TO_NULL, &code, err);
		if (!ret)
			ret = launchctl_boot("bootstrap", plist, 0, &code, err);
		if (!ret && code)
			ret = gp_error_set(err, GP_EIO, "failed to bootstrap service %s", plist);
		free(plist);
	}
	strbuf_release(&have);
	strbuf_release(&want);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Windows Task Scheduler                                              */

static void schtasks_xml(const struct maint_schedule *ms, size_t f, int minute,
			 struct strbuf *out)
{
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			   "<Task version=\"1.4\" "
			   "xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\n"
			   "<Triggers>\n<CalendarTrigger>\n");
	strbuf_addf(out, "<StartBoundary>2020-01-01T%02d:%02d:00</StartBoundary>\n",
		    f == 0 ? 1 : 0, minute);
	strbuf_addstr(out, "<Enabled>true</Enabled>\n");
	if (f == 0)
		strbuf_addstr(out, "<ScheduleByDay><DaysInterval>1</DaysInterval></ScheduleByDay>\n"
				   "<Repetition>\n<Interval>PT1H</Interval>\n"
				   "<Duration>PT23H</Duration>\n"
				   "<StopAtDurationEnd>false</StopAtDurationEnd>\n</Repetition>\n");
	else if (f == 1)
		strbuf_addstr(out, "<ScheduleByWeek>\n<DaysOfWeek>\n<Monday /><Tuesday />"
				   "<Wednesday /><Thursday /><Friday /><Saturday />\n"
				   "</DaysOfWeek>\n<WeeksInterval>1</WeeksInterval>\n"
				   "</ScheduleByWeek>\n");
	else
		strbuf_addstr(out, "<ScheduleByWeek>\n<DaysOfWeek><Sunday /></DaysOfWeek>\n"
				   "<WeeksInterval>1</WeeksInterval>\n</ScheduleByWeek>\n");
	strbuf_addstr(out, "</CalendarTrigger>\n</Triggers>\n"
			   "<Principals>\n<Principal id=\"Author\">\n"
			   "<LogonType>InteractiveToken</LogonType>\n"
			   "<RunLevel>LeastPrivilege</RunLevel>\n"
			   "</Principal>\n</Principals>\n"
			   "<Settings>\n"
			   "<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n"
			   "<DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n"
			   "<StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n"
			   "<Enabled>true</Enabled>\n"
			   "<Hidden>false</Hidden>\n"
			   "<ExecutionTimeLimit>PT72H</ExecutionTimeLimit>\n"
			   "</Settings>\n"
			   "<Actions Context=\"Author\">\n<Exec>\n<Command>&quot;");
	add_xml_escaped(out, ms->program);
	strbuf_addf(out, "&quot;</Command>\n<Arguments>" JOB_ARGS " --schedule=%s</Arguments>\n"
			 "</Exec>\n</Actions>\n</Task>\n",
		    frequencies[f]);
}

static int schtasks_run(const char *verb, const char *frequency, const char *xml_path,
			int *code, struct gp_error *err)
{
	struct cmd c = CMD_INIT;
	char *name = xstrfmt("Git Maintenance (%s)", frequency);
	int ret;
	scheduler_cmd(MAINT_SCHEDULER_SCHTASKS, &c);
	cmd_push(&c, verb);
	cmd_push(&c, "/tn");
	cmd_push(&c, name);
	cmd_push(&c, "/f");
	if (xml_path) {
		cmd_push(&c, "/xml");
		cmd_push(&c, xml_path);
	}
	ret = cmd_run(&c, xml_path ? 0 : RUN_STDERR_TO_NULL, code, err);
	if (ret)
		gp_error_prefix(err, "failed to start schtasks");
	free(name);
	cmd_release(&c);
	return ret;
}

static int schtasks_update(const struct maint_schedule *ms, bool enable, struct gp_error *err)
{
	struct strbuf xml = STRBUF_INIT;
	int minute = pick_minute(), ret = 0, code;

	for (size_t f = 0; !ret && f < NR_FREQ; f++) {
		char *path;
		int fd;
		if (!enable) {
			ret = schtasks_run("/delete", frequencies[f], NULL, &code, err);
			continue;
		}
		strbuf_reset(&xml);
		schtasks_xml(ms, f, minute, &xml);
		path = xstrfmt("%s/schedule_%s_XXXXXX", ms->tmp_dir, frequencies[f]);
		fd = mkstemp(path);
		if (fd < 0) {
			ret = gp_error_errno(err, "unable to create '%s'", path);
		} else if (write_in_full(fd, xml.buf, xml.len) < 0 || close(fd) < 0) {
			ret = gp_error_errno(err, "unable to write '%s'", path);
			unlink(path);
		} else {
			ret = schtasks_run("/create", frequencies[f], path, &code, err);
			if (!ret && code)
				ret = gp_error_set(err, GP_EIO,
						   "failed to create the task 'Git Maintenance (%s)' "
						   "(schtasks exit code %d)",
						   frequencies[f], code);
			unlink(path);
		}
		free(path);
	}
	strbuf_release(&xml);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The update                                                          */

static int scheduler_update(const struct maint_schedule *ms, enum maint_scheduler s,
			    bool enable, struct gp_error *err)
{
	switch (s) {
	case MAINT_SCHEDULER_CRONTAB:
		return crontab_update(ms, enable, err);
	case MAINT_SCHEDULER_SYSTEMD:
		return systemd_update(ms, enable, err);
	case MAINT_SCHEDULER_LAUNCHCTL:
		return launchd_update(ms, enable, err);
	case MAINT_SCHEDULER_SCHTASKS:
		return schtasks_update(ms, enable, err);
	default:
		return gp_error_set(err, GP_EINVAL, "no scheduler to update");
	}
}

int maint_schedule_lock(const char *lock_path, struct gp_error *err)
{
	int fd = open(lock_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		if (errno == EEXIST) {
			struct strbuf holder = STRBUF_INIT;
			int ret;
			lockfile_describe_holder(lock_path, &holder);
			ret = gp_error_set(err, GP_EBUSY,
				"unable to create '%s': File exists%s.\n\n"
				"Another scheduled git-maintenance(1) process seems to be running in this\n"
				"repository (a 'maintenance start' or 'maintenance stop'). Make sure none\n"
				"is, then try again; if none is, one of them crashed earlier: remove the\n"
				"file by hand to continue.",
				lock_path, holder.buf);
			strbuf_release(&holder);
			return ret;
		}
		return gp_error_errno(err, "unable to create '%s'", lock_path);
	}
	close(fd);
	free(lockfile_pid_write(lock_path));
	return 0;
}

void maint_schedule_unlock(const char *lock_path)
{
	/* The companion first: a lock without one is still a lock. */
	char *pid_path = lockfile_pid_path(lock_path);
	unlink(pid_path);
	free(pid_path);
	unlink(lock_path);
}

int maint_schedule_update(const struct maint_schedule *ms, enum maint_scheduler enable,
			  struct gp_error *err)
{
	for (enum maint_scheduler s = MAINT_SCHEDULER_AUTO + 1; s < MAINT_SCHEDULER_NR; s++) {
		struct gp_error sub = GP_ERROR_INIT;
		if (s == enable || !maint_scheduler_is_available(s))
			continue;
		if (scheduler_update(ms, s, false, &sub) && ms->report)
			ms->report(ms->report_data, gp_error_msg(&sub));
		gp_error_clear(&sub);
	}
	if (enable == MAINT_SCHEDULER_AUTO)
		return 0;
	return scheduler_update(ms, enable, true, err);
}
