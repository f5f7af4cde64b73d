/*
 * commit-graph.h: the commit-graph (gitformat-commit-graph(5),
 * technical/commit-graph): for each commit, its root tree, parents,
 * commit date and generation numbers, so that walks need not inflate
 * commits.
 *
 * A repository has either objects/info/commit-graph (one file) or a
 * chain, objects/info/commit-graphs/commit-graph-chain naming the
 * layers base first, each in commit-graphs/graph-<checksum>.graph. A
 * layer's commits are numbered after those of the layers below it
 * ("graph positions"); parents are stored as graph positions.
 *
 * Opening validates the whole shape of each file (header, chunk table,
 * chunk sizes against the commit count, fanout, BASE against the chain)
 * so that every later lookup is bounded; parent positions are checked
 * when read. Bloom filter chunks (BIDX, BDAT, see bloom.h) are only
 * used by the writer, which keeps and reuses them; a misshapen pair is
 * ignored, as git does. Checksums and
 * the agreement with the commits themselves are checked by
 * commit_graph_verify().
 */
#ifndef GP_COMMIT_GRAPH_H
#define GP_COMMIT_GRAPH_H

#include "object.h"
#include "bloom.h"

struct gp_error;
struct odb;
struct commit_graph;

/* Positions over the whole chain, base layer first. */
#define COMMIT_GRAPH_NO_POS UINT32_MAX

/*
 * Open the graph of the object directory objdir alone (no alternates):
 * info/commit-graph when it exists, else the chain
 * commit-graphs/commit-graph-chain. Errors: GP_ENOTFOUND (no graph),
 * GP_ECORRUPT (a message naming the file and what is wrong), GP_EIO. A
 * file whose hash version is not algo's is GP_ECORRUPT.
 */
int commit_graph_open(struct commit_graph **out, const char *objdir, int algo,
		      struct gp_error *err);

enum commit_graph_open_flags {
	/* Only odb's own directory's graph, never an alternate's (verify). */
	COMMIT_GRAPH_OPEN_LOCAL = 1 << 0,
};

/*
 * Open the graph of odb as git reads it (technical/commit-graph,
 * "Chains across multiple object directories"): that of the first
 * directory that has one, odb's own first, then its alternates in
 * odb_alternate() order. A chain's layers are each looked for in the
 * commit-graphs/ directory of odb's own directory, then of each
 * alternate, so a fork's chain may stand on layers its alternate holds.
 * Errors as commit_graph_open(); a layer found nowhere is GP_ECORRUPT.
 */
int commit_graph_open_odb(struct commit_graph **out, struct odb *odb, unsigned flags,
			  struct gp_error *err);
/* Open one file as a lone graph (verify, fuzzing). */
int commit_graph_open_file(struct commit_graph **out, const char *path, int algo,
			   struct gp_error *err);
/* Parse a graph held in memory (borrowed; must outlive g): fuzzing. */
int commit_graph_parse_buf(struct commit_graph **out, const unsigned char *buf, size_t len,
			   int algo, struct gp_error *err);
void commit_graph_free(struct commit_graph *g);

/*
 * Whether the graph opened from objdir (the first directory looked in)
 * would still be g: the lone file and the chain file of each directory
 * looked in, up to the one g came from, have the inode, size and mtime
 * they had when g was opened (git and gitpack replace either by
 * renaming a new file into place; layers are named by their checksum
 * and listed in the chain, so a new layer changes the chain file).
 * For a server that keeps a graph between requests. Two stat() calls
 * per directory looked in.
 */
bool commit_graph_is_current(const struct commit_graph *g, const char *objdir);

/* Commits in the whole chain. */
uint32_t commit_graph_nr_commits(const struct commit_graph *g);
/* Layers in the chain (1 for a lone file). */
uint32_t commit_graph_nr_layers(const struct commit_graph *g);

/* The graph position of oid, or false. O(layers * log n). */
bool commit_graph_find(const struct commit_graph *g, const struct object_id *oid,
		       uint32_t *pos);
/*
 * Ask the CPU for pos's entry ahead of commit_graph_entry_at(): a walk
 * that queues a parent reads it later, and the read is a cache miss.
 */
void commit_graph_prefetch(const struct commit_graph *g, uint32_t pos);
/* The id at a graph position (< commit_graph_nr_commits()). */
void commit_graph_oid(const struct commit_graph *g, uint32_t pos, struct object_id *oid);

struct commit_graph_entry {
	struct object_id tree;
	uint64_t date;        /* commit date, 34 bits */
	uint32_t topo_level;  /* generation number v1 */
	uint64_t generation;  /* corrected commit date (v2), or topo_level without GDA2 */
	uint32_t nr_parents;
	uint32_t parents_inline[2];
	/* Graph positions of the parents: parents_inline, or a borrowed
	 * EDGE run read through commit_graph_parent(). */
	const unsigned char *edges;
};

/*
 * Read the entry at pos. Errors: GP_ECORRUPT when a parent position is
 * outside the chain or an EDGE run leaves its chunk.
 */
int commit_graph_entry_at(const struct commit_graph *g, uint32_t pos,
			  struct commit_graph_entry *e, struct gp_error *err);
/* The n-th (< e->nr_parents) parent's graph position. */
uint32_t commit_graph_parent(const struct commit_graph_entry *e, uint32_t n);

/*
 * Check every layer (or only the top one when shallow) against its
 * checksum and the commits in odb, as git commit-graph verify does
 * (with a progress meter on stderr when progress).
 * Each problem is reported through report (one line, no newline);
 * returns the number of problems (0: fine).
 */
typedef void commit_graph_report_fn(const char *msg, void *data);
int commit_graph_verify(const struct commit_graph *g, struct odb *odb, bool shallow,
			bool progress, commit_graph_report_fn *report, void *data);

/*
 * For a graph of odb's own directory that does not open: check the
 * trailing checksum of each file there is (the lone file, or each layer
 * the chain file names, wherever commit_graph_open_odb() would find
 * it), reporting each mismatch as verify does. Returns the number found.
 */
int commit_graph_verify_checksums(struct odb *odb, commit_graph_report_fn *report, void *data);

/* ---- writing ---------------------------------------------------------- */

enum commit_graph_split {
	COMMIT_GRAPH_NO_SPLIT = 0,  /* one file, info/commit-graph */
	COMMIT_GRAPH_SPLIT,          /* a new layer, merged by the rules below */
	COMMIT_GRAPH_SPLIT_NO_MERGE, /* --split=no-merge */
	COMMIT_GRAPH_SPLIT_REPLACE,  /* --split=replace: a chain of one */
};

struct commit_graph_write_opts {
	enum commit_graph_split split;
	/* A new layer of N commits takes in the layer below while that
	 * has at most size_multiple * N commits, or N > max_commits (when
	 * not 0). */
	uint32_t size_multiple;
	uint32_t max_commits;
	/* Unused layer files whose mtime is at most this go; 0: now. */
	uint64_t expire_time;
	bool append;          /* keep the existing graph's commits */
	bool no_generation_data; /* commitGraph.generationVersion=1: no GDA2 */
	bool progress;
	/*
	 * Changed-path Bloom filters (BIDX, BDAT, see bloom.h) for every
	 * commit written: BLOOM_WRITE always (--changed-paths), BLOOM_NO
	 * never, BLOOM_KEEP (the default) when the top layer of the graph
	 * read has them. changed_paths_version is
	 * commitGraph.changedPathsVersion: 2 writes version 2, -1 the
	 * version of the graph read (else 1), 0 and 1 version 1; with 0
	 * the existing filters are neither kept nor reused.
	 */
	enum commit_graph_bloom {
		COMMIT_GRAPH_BLOOM_KEEP = 0,
		COMMIT_GRAPH_BLOOM_WRITE,
		COMMIT_GRAPH_BLOOM_NO,
	} changed_paths;
	int changed_paths_version;
	/*
	 * --max-new-filters: compute at most this many filters (oldest
	 * generation first); the other commits without one in the graph
	 * read get an empty filter. -1: no limit.
	 */
	int max_new_filters;
	/*
	 * Hash count, bits per entry and change limit of new filters
	 * (git's GIT_TEST_BLOOM_SETTINGS_* knobs); those of the graph
	 * read win when its filters are kept. hash_version is not read.
	 */
	struct bloom_settings bloom;
	/*
	 * core.sharedRepository for the files written: 0 leaves their mode
	 * (0444) alone; a positive value is an explicit mode ("0600"),
	 * a negative one bits to add (-0660 for "group"). Write bits are
	 * dropped either way: the files are read-only.
	 */
	int shared_perm;
};

#define COMMIT_GRAPH_WRITE_OPTS_INIT { .size_multiple = 2, .changed_paths_version = -1, \
				       .max_new_filters = -1, .bloom = BLOOM_SETTINGS_INIT }

struct commit_graph_write_result {
	bool written;        /* false: nothing to write (no commits) */
	bool old_unusable;   /* the existing graph did not open and was ignored */
	uint32_t nr_commits; /* in the file written */
	/*
	 * Checksums of the layers whose Bloom filters were set aside
	 * because their settings differ from those of the topmost layer
	 * with filters (git warns about each); the caller frees them,
	 * whether or not the write succeeded.
	 */
	struct object_id *bloom_disabled;
	size_t nr_bloom_disabled;
};

/*
 * Write the graph of objdir for the commits reachable from tips (tags
 * are peeled; tips that are not commits are skipped, as git does for
 * refs and --stdin-commits). Commits come from the existing graph where
 * it has them, else from odb. The existing graph is objdir's, else that
 * of the first of odb's alternates that has one; a split write puts its
 * layer in objdir on top of it and never merges a layer held by another
 * directory (nor removes one). Errors: GP_ENOTFOUND (a missing commit or
 * parent), GP_ECORRUPT, GP_EIO.
 */
int commit_graph_write(const char *objdir, struct odb *odb, int algo,
		       const struct object_id *tips, size_t nr_tips,
		       const struct commit_graph_write_opts *opts,
		       struct commit_graph_write_result *result, struct gp_error *err);

#endif
