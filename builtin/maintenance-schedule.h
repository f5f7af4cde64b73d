/*
 * builtin/maintenance-schedule.h: "maintenance start" and "maintenance
 * stop", the subcommands of builtin/maintenance.c that hand the
 * schedule to the system's scheduler (maintenance-schedule.h).
 */
#ifndef GP_BUILTIN_MAINTENANCE_SCHEDULE_H
#define GP_BUILTIN_MAINTENANCE_SCHEDULE_H

struct repository;

/*
 * "start [--scheduler=<scheduler>]" (argv[0] is "start"): install the
 * hourly, daily and weekly jobs with the chosen scheduler, removing
 * them from the other available ones. Dies on failure, before the
 * caller registers the repository, so that a failed start changes no
 * config. Returns 0.
 */
int maintenance_start(int argc, const char **argv, struct repository *repo);

/* "stop": remove the jobs from every available scheduler; exit code. */
int maintenance_stop(int argc, const char **argv, struct repository *repo);

#endif
