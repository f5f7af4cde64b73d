/*
 * commit-prefetch.h: commits of an odb's packs read and parsed ahead, on
 * another thread, for a walk that will ask for most of them.
 *
 * Writing a commit-graph from nothing reads every reachable commit, one
 * after the other (each names the next), and inflating them is most of
 * the cost. Packs keep their commits together, in about the order a
 * walk from the tips meets them, so a thread that reads them in pack
 * order stays a little ahead of the walk and halves its time on two
 * cores. Each commit is read once: the walk takes what the thread has
 * parsed, and reads the others itself (the thread then passes them by).
 * A commit stored as a delta, or loose, is always left to the walk.
 *
 *	struct commit_prefetch *cp = commit_prefetch_start(odb, algo);
 *	...
 *	if (cp && commit_prefetch_take(cp, pack, ofs, &ci))
 *		use(&ci);            (then commit_info_release(&ci))
 *	else
 *		read it yourself
 *	...
 *	commit_prefetch_stop(cp);
 */
#ifndef GP_COMMIT_PREFETCH_H
#define GP_COMMIT_PREFETCH_H

#include "commit.h"

struct odb;
struct packed_git;
struct commit_prefetch;

/*
 * Start the thread over odb's local packs. NULL (nothing to do, or no
 * second CPU, or no thread) means the caller reads everything itself.
 */
struct commit_prefetch *commit_prefetch_start(struct odb *odb, int algo);

/*
 * The commit whose entry is at ofs in p, parsed: true and *ci filled
 * (the caller releases it), when the thread read it or is reading it
 * (then this waits for it). False when the caller must read it itself:
 * the thread will not touch it afterwards.
 */
bool commit_prefetch_take(struct commit_prefetch *cp, const struct packed_git *p,
			  uint64_t ofs, struct commit_info *ci);

/* Stop the thread and free what it read that nobody took. NULL is fine. */
void commit_prefetch_stop(struct commit_prefetch *cp);

#endif
