/*
 * reftable-compact.h: compacting a reftable stack (git's
 * Documentation/technical/reftable.adoc, "Compaction"), as git
 * pack-refs does for a reftable repository.
 *
 * Under tables.list.lock and a <table>.lock for each table compacted,
 * the tables of a range are merged into one new table named
 * 0x<min>-0x<max>-<random>.ref (update indexes as 12 hex digits), which
 * replaces them in tables.list (renamed over atomically); then the
 * compacted tables and any *.ref file the list no longer names (and no
 * one has locked) are removed. Other files are left alone. A compaction
 * that starts at the oldest table drops deletion records, refs' and
 * logs'; one above keeps them, as they hide older records.
 *
 * New files take the permission bits of the tables.list they replace,
 * so core.sharedRepository as git applied it carries over.
 */
#ifndef GP_REFTABLE_COMPACT_H
#define GP_REFTABLE_COMPACT_H

#include <stdbool.h>

struct gp_error;
struct reftable_write_opts;

struct reftable_compact_opts {
	int algo;                                 /* the repository's hash */
	const struct reftable_write_opts *write;  /* may be NULL */
	/*
	 * Auto: compact only the segment that breaks the geometric sequence
	 * of table sizes (each table at least factor times the size of the
	 * next newer one), and a table locked by another process is not an
	 * error: the segment is cut above it. Otherwise everything is
	 * compacted.
	 */
	bool autocompact;
	unsigned geometric_factor;                /* 0: 2 */
	/*
	 * How long to wait for tables.list.lock, in milliseconds
	 * (reftable.lockTimeout: 0 not at all, -1 forever); the tables'
	 * own locks are never waited for.
	 */
	long lock_timeout_ms;
	/* out: files flushed to disk (git counts them in trace2) */
	unsigned nr_fsyncs;
};

/*
 * Compact the stack in dir (".../reftable"). Errors: GP_EIO with the
 * message "data is locked" when a lock is held, or "entry too large"
 * (GP_EINVAL) when a record does not fit in a block, GP_ECORRUPT for a
 * bad table (its message names the file and offset); on any error no
 * new table is left behind and the stack is unchanged.
 */
int reftable_compact(const char *dir, struct reftable_compact_opts *opts,
		     struct gp_error *err);

#endif
