/*
 * lockfile.h: the "~pid" companion of a lock file, git's core.lockfilePid
 * (git-config(1)). A lock is "<name>.lock", created exclusively; with
 * core.lockfilePid true its taker also writes "<name>~pid.lock" holding
 * "pid <n>" LF, and removes it with the lock. When a lock cannot be
 * taken because it exists, the companion (read whether or not the
 * setting is on, as git does) tells who holds it and whether that
 * process still runs: a stale lock is then named as such.
 *
 * The setting is process-wide (git reads it once per process too): the
 * repository's config sets it when it is opened.
 */
#ifndef GP_LOCKFILE_H
#define GP_LOCKFILE_H

#include "util.h"

struct strbuf;

/* core.lockfilePid of the repository this process works on. */
void lockfile_pid_configure(bool enabled);

/*
 * The companion's path for lock_path ("x/name.lock" -> "x/name~pid.lock";
 * a path not ending in ".lock" gets "~pid.lock" appended). Caller frees.
 */
char *lockfile_pid_path(const char *lock_path);

/*
 * Just after taking lock_path: write the companion when the setting is
 * on. Returns the companion's path (to hand to lockfile_pid_remove())
 * or NULL when none was written; best effort, as the lock is the
 * exclusive file itself and the companion only a note for a human.
 */
char *lockfile_pid_write(const char *lock_path);

/* Remove the companion written for a lock (NULL: nothing); frees pid_path. */
void lockfile_pid_remove(char *pid_path);

/*
 * When lock_path could not be taken because it exists: append to msg
 * what the companion, if there is one, says of the holder ("; it is
 * held by process 123, still running" or "; it was taken by process
 * 123, which is no longer running: the lock appears to be stale, ...")
 * and return true; without a companion append nothing, return false.
 */
bool lockfile_describe_holder(const char *lock_path, struct strbuf *msg);

#endif
