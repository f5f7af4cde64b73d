/*
 * pack-for-fetch.h: the pack a fetch asks for, made in the serving
 * process (no pack-objects child): every object reachable from the
 * wants that the client does not have, as gitprotocol-pack "Packfile
 * Data" and gitprotocol-v2 "packfile" describe it, streamed to a
 * caller's function (a side-band framer).
 *
 * What the client has: everything reachable from the haves (commits the
 * negotiation found common), cut at the shallow boundary. What is sent:
 * everything reachable from the wants, cut at the same boundary, less
 * that. Annotated tags of what is sent come along with include_tag
 * (gitprotocol-capabilities "include-tag"); thin packs may hold deltas
 * against what the client has; a filter (partial clone) leaves objects
 * out unless they are wanted by name.
 *
 * Counting: with the repository's reachability bitmaps (pack or MIDX,
 * pseudo-merges included) when the request allows it (no shallow
 * boundary, no filter), which also lets stored objects of the bitmapped
 * packs be sent as stored (verbatim reuse, pack.allowPackReuse);
 * otherwise a walk of commits and trees, iterative (revision.h).
 */
#ifndef GP_PACK_FOR_FETCH_H
#define GP_PACK_FOR_FETCH_H

#include "hashfile.h"
#include "pack-objects.h"

struct commit_graph;
struct gp_error;
struct object_filter;
struct oidset;
struct odb;
struct repository;

struct pack_for_fetch {
	const struct object_id *wants;
	size_t nr_wants;
	const struct object_id *haves;    /* objects the client has (we have them too) */
	size_t nr_haves;
	/*
	 * Commits whose parents the walk must not follow: the client's
	 * shallow commits, the new boundary of a depth request and the
	 * serving repository's own shallow file. NULL or empty: none.
	 */
	const struct oidset *shallow;
	bool thin;                 /* thin-pack */
	bool include_tag;          /* include-tag */
	bool ofs_delta;            /* ofs-delta */
	bool progress;             /* meters (progress.h decides where) */
	const struct object_filter *filter; /* NULL: none */
	/*
	 * Objects this repository lacks (a partial clone's, which the
	 * client fetches from the promisor remote it accepted) are left
	 * out rather than failing the pack: git's --missing=allow-promisor.
	 */
	bool allow_missing;
	bool use_bitmaps;          /* pack.useBitmaps */
	bool sparse;               /* pack.useSparse */
	enum pack_reuse reuse;     /* pack.allowPackReuse */
	struct pack_objects_opts opts; /* window, depth, threads, compression */
	/*
	 * The commit-graph the counting walk reads commits from
	 * (repo_commit_graph(); borrowed). NULL: the commits are read.
	 */
	const struct commit_graph *graph;
};

/*
 * Read the pack.* and core.* settings a pack for transfer honours
 * (pack.window, pack.depth, pack.threads, pack.compression,
 * core.compression, core.bigFileThreshold, pack.useBitmaps,
 * pack.allowPackReuse, pack.useSparse) into req. Errors: GP_EINVAL for
 * a value git would refuse ("bad pack compression level 12").
 */
int pack_for_fetch_config(struct repository *repo, struct pack_for_fetch *req,
			  struct gp_error *err);

/*
 * Count, then write the pack to out(data, ...). stats (may be NULL)
 * receives the "Total ..." figures. Errors: GP_ENOTFOUND (a wanted
 * object is missing), GP_ECORRUPT (damaged storage: file and offset),
 * GP_EIO (out() failed; the connection is gone).
 */
int pack_for_fetch_write(struct repository *repo, struct odb *odb,
			 const struct pack_for_fetch *req, hashfile_out_fn *out, void *data,
			 struct pack_objects_stats *stats, struct gp_error *err);

#endif
