/*
 * progress.h: progress meters on stderr, in git's format:
 *   "Indexing objects:  42% (420/1000)\r" ... ", done.\n"
 *
 * A NULL progress (when the meter is off) is accepted everywhere, so
 * callers need no conditionals. Updates from several threads are
 * allowed through progress_add(); printing is rate-limited.
 */
#ifndef GP_PROGRESS_H
#define GP_PROGRESS_H

#include "util.h"

struct progress;

/* NULL when !enabled. total 0 means unknown (no percentage). */
struct progress *progress_start(const char *title, uint64_t total, bool enabled);
void progress_update(struct progress *p, uint64_t done);
/*
 * The bytes moved so far: the meter then shows them and the rate as git
 * does (", 1.20 MiB | 3.40 MiB/s").
 */
void progress_set_bytes(struct progress *p, uint64_t bytes);
/* Thread-safe increment. */
void progress_add(struct progress *p, uint64_t delta);
/* Print the final line and free. Accepts NULL. */
void progress_stop(struct progress **p);
/* The same, ending the line with msg instead of ", done.\n". */
void progress_stop_msg(struct progress **p, const char *msg);

/*
 * Where meters go: stderr unless a process that speaks a protocol (an
 * upload-pack sending progress on side-band 2) says otherwise. fn may be
 * called from any thread that updates a meter; NULL restores stderr.
 * Per thread: a meter prints where its starting thread's output was
 * when it started, so set it before the work starts, reset it after.
 */
typedef void progress_out_fn(void *data, const char *buf, size_t len);
void progress_set_output(progress_out_fn *fn, void *data);
/* Send buf where meters go now (the "Total ..." line of pack-objects, say). */
void progress_output(const char *buf, size_t len);

#endif
