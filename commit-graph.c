/*
 * commit-graph.c: reading, verifying and writing commit-graph files and
 * chains (gitformat-commit-graph(5), technical/commit-graph).
 *
 *   header   "CGPH", version 1, hash version (1 SHA-1, 2 SHA-256),
 *            number of chunks C, number of base layers B
 *   table    (C + 1) * 12 bytes (chunk-format.h)
 *   OIDF     256 * 4   cumulative counts by first byte; F[255] = N
 *   OIDL     N * H     commit ids, ascending
 *   CDAT     N * (H + 16): root tree; parent 1, parent 2 (graph
 *            positions; 0x70000000 none; 0x80000000 | i: the rest of
 *            the parents are EDGE[i..] up to an entry with the top bit);
 *            topological level << 2 | date bits 33-34; date bits 1-32
 *   GDA2     N * 4     corrected commit date - commit date, or
 *            0x80000000 | i for GDO2[i] (optional)
 *   GDO2     8-byte offsets too big for GDA2 (optional)
 *   EDGE     4-byte graph positions (optional)
 *   BASE     B * H     checksums of the layers below, base first
 *   trailer  H         checksum of everything above
 *
 * Git writes the chunks in the order above (BIDX and BDAT, which we
 * never write, go between EDGE and BASE), and GDO2 and EDGE only when
 * they have entries; we do the same, which makes the files identical.
 */
#include "commit-graph.h"
#include "chunk-format.h"
#include "commit.h"
#include "commit-prefetch.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "odb.h"
#include "packfile.h"
#include "progress.h"
#include "strbuf.h"
#include "trace2.h"
#include "bloom.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#define CG_SIGNATURE 0x43475048 /* "CGPH" */
#define CG_VERSION 1
#define CG_HEADER_SIZE 8
#define CG_CHUNK_OIDF 0x4f494446 /* "OIDF" */
#define CG_CHUNK_OIDL 0x4f49444c /* "OIDL" */
#define CG_CHUNK_CDAT 0x43444154 /* "CDAT" */
#define CG_CHUNK_GDA2 0x47444132 /* "GDA2" */
#define CG_CHUNK_GDO2 0x47444f32 /* "GDO2" */
#define CG_CHUNK_EDGE 0x45444745 /* "EDGE" */
#define CG_CHUNK_BASE 0x42415345 /* "BASE" */
#define CG_CHUNK_BIDX 0x42494458 /* "BIDX" */
#define CG_CHUNK_BDAT 0x42444154 /* "BDAT" */
#define CG_BDAT_HEADER_SIZE 12 /* version, hashes, bits per entry */

#define CG_PARENT_NONE 0x70000000u
#define CG_EDGE_BIT 0x80000000u
#define CG_GDA2_OVERFLOW 0x80000000u
#define CG_OFFSET_MAX 0x7fffffffu
#define CG_TOPO_MAX 0x3fffffffu
/* Positions must stay clear of the special parent values. */
#define CG_MAX_COMMITS 0x70000000u

#define CG_FILE "info/commit-graph"
#define CG_CHAIN_DIR "info/commit-graphs"
#define CG_CHAIN_FILE "info/commit-graphs/commit-graph-chain"

/*
 * What a file was when a graph was opened: git replaces the lone file
 * and the chain file by renaming a new one into place, so a new inode
 * (or mtime, or size) means a new graph.
 */
struct cg_file_stamp {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct cg_layer {
	char *path;
	const unsigned char *map;
	size_t size;
	bool mapped;            /* munmap at free (not for parse_buf) */
	uint32_t nr;            /* commits in this layer */
	uint32_t base_pos;      /* graph position of its first commit */
	uint8_t nr_bases;
	uint32_t dir_index;     /* where it was found: 0 the first directory */
	const unsigned char *fanout, *oids, *cdat, *gda2, *gdo2, *edge, *base;
	uint64_t nr_gdo2, nr_edge;
	/*
	 * Changed-path filters: BIDX (nr ends, relative to the data after
	 * BDAT's 12-byte header) and BDAT, or NULL with bloom_version 0
	 * when either is missing or misshapen (git ignores them then too).
	 */
	const unsigned char *bidx, *bdat;
	uint64_t bdat_size;
	uint32_t bloom_version, bloom_num_hashes, bloom_bits_per_entry;
};

struct commit_graph {
	int algo;
	size_t rawsz;
	struct cg_layer *layers;   /* base first */
	uint32_t nr_layers;
	uint32_t nr_commits;
	bool generation_data;      /* every layer has GDA2 */
	bool lone;                 /* info/commit-graph rather than a chain */
	/*
	 * The lone file and the chain file of each directory looked in,
	 * as they were before opening (none for a file or a buffer).
	 */
	char *opened_dir;
	char **stamp_paths;
	struct cg_file_stamp *stamps;
	size_t nr_stamps;
};

static const char *layer_name(const struct cg_layer *l)
{
	const char *slash = strrchr(l->path, '/');
	return slash ? slash + 1 : l->path;
}

/* Validate the shape of one file; commits below it are base_pos. */
static int parse_layer(struct cg_layer *l, int algo, uint32_t base_pos, struct gp_error *err)
{
	struct chunk_table t = CHUNK_TABLE_INIT;
	size_t rawsz = gp_hash_algos[algo].rawsz;
	const char *name = layer_name(l);
	const unsigned char *p;
	uint64_t size;
	unsigned nr_chunks;
	int ret = 0;

	if (l->size < CG_HEADER_SIZE + CHUNK_TOC_ENTRY_SIZE + rawsz) {
		ret = CORRUPT(err, "%s: commit-graph file is too small (%zu bytes)", name, l->size);
		goto out;
	}
	if (get_be32(l->map) != CG_SIGNATURE) {
		ret = CORRUPT(err, "%s: commit-graph signature %08x does not match signature %08x",
			      name, get_be32(l->map), CG_SIGNATURE);
		goto out;
	}
	if (l->map[4] != CG_VERSION) {
		ret = CORRUPT(err, "%s: commit-graph version %u does not match version %u", name,
			      l->map[4], CG_VERSION);
		goto out;
	}
	if (l->map[5] != gp_hash_algos[algo].id) {
		ret = CORRUPT(err, "%s: commit-graph hash version %u does not match version %u",
			      name, l->map[5], (unsigned)gp_hash_algos[algo].id);
		goto out;
	}
	nr_chunks = l->map[6];
	l->nr_bases = l->map[7];
	if (l->size < CG_HEADER_SIZE + (size_t)(nr_chunks + 1) * CHUNK_TOC_ENTRY_SIZE + rawsz) {
		ret = CORRUPT(err, "%s: commit-graph file is too small to hold %u chunks", name,
			      nr_chunks);
		goto out;
	}
	ret = chunk_table_parse(&t, l->map, l->size - rawsz, CG_HEADER_SIZE, nr_chunks, name, err);
	if (ret)
		goto out;
	if (!chunk_find(&t, CG_CHUNK_OIDF, &l->fanout, &size) || size != 256 * 4) {
		ret = CORRUPT(err, "%s: commit-graph required OID fanout chunk missing or corrupted", name);
		goto out;
	}
	for (unsigned b = 1; b < 256; b++)
		if (get_be32(l->fanout + 4 * b) < get_be32(l->fanout + 4 * (b - 1))) {
			ret = CORRUPT(err, "%s: commit-graph fanout values out of order at entry %u",
				      name, b);
			goto out;
		}
	l->nr = get_be32(l->fanout + 255 * 4);
	if (l->nr >= CG_MAX_COMMITS || (uint64_t)base_pos + l->nr >= CG_MAX_COMMITS) {
		ret = CORRUPT(err, "%s: commit-graph has too many commits (%u)", name, l->nr);
		goto out;
	}
	l->base_pos = base_pos;
	if (!chunk_find(&t, CG_CHUNK_OIDL, &l->oids, &size)) {
		ret = CORRUPT(err, "%s: commit-graph required OID lookup chunk missing or corrupted",
			      name);
		goto out;
	}
	if (size != (uint64_t)l->nr * rawsz) {
		ret = CORRUPT(err, "%s: commit-graph OID lookup chunk is the wrong size", name);
		goto out;
	}
	if (!chunk_find(&t, CG_CHUNK_CDAT, &l->cdat, &size)) {
		ret = CORRUPT(err, "%s: commit-graph required commit data chunk missing or corrupted",
			      name);
		goto out;
	}
	if (size != (uint64_t)l->nr * (rawsz + 16)) {
		ret = CORRUPT(err, "%s: commit-graph commit data chunk is the wrong size", name);
		goto out;
	}
	if (chunk_find(&t, CG_CHUNK_GDA2, &l->gda2, &size) && size != (uint64_t)l->nr * 4) {
		ret = CORRUPT(err, "%s: commit-graph generations chunk is the wrong size", name);
		goto out;
	}
	if (chunk_find(&t, CG_CHUNK_GDO2, &l->gdo2, &size)) {
		if (size % 8) {
			ret = CORRUPT(err, "%s: commit-graph generation overflow chunk is the wrong size",
				      name);
			goto out;
		}
		l->nr_gdo2 = size / 8;
	}
	if (chunk_find(&t, CG_CHUNK_EDGE, &l->edge, &size)) {
		if (size % 4) {
			ret = CORRUPT(err, "%s: commit-graph extra-edges chunk is the wrong size", name);
			goto out;
		}
		l->nr_edge = size / 4;
	}
	{
		const unsigned char *bidx, *bdat;
		uint64_t bidx_size, bdat_size;
		if (chunk_find(&t, CG_CHUNK_BIDX, &bidx, &bidx_size) &&
		    chunk_find(&t, CG_CHUNK_BDAT, &bdat, &bdat_size) &&
		    bidx_size == (uint64_t)l->nr * 4 && bdat_size >= CG_BDAT_HEADER_SIZE) {
			l->bidx = bidx;
			l->bdat = bdat;
			l->bdat_size = bdat_size;
			l->bloom_version = get_be32(bdat);
			l->bloom_num_hashes = get_be32(bdat + 4);
			l->bloom_bits_per_entry = get_be32(bdat + 8);
		}
	}
	if (chunk_find(&t, CG_CHUNK_BASE, &p, &size)) {
		if (size != (uint64_t)l->nr_bases * rawsz) {
			ret = CORRUPT(err, "%s: commit-graph base graphs chunk is the wrong size", name);
			goto out;
		}
		l->base = p;
	} else if (l->nr_bases) {
		ret = CORRUPT(err, "%s: commit-graph has no base graphs chunk", name);
		goto out;
	}
out:
	chunk_table_release(&t);
	return ret;
}

static void layer_release(struct cg_layer *l)
{
	if (l->mapped && l->map)
		munmap((void *)l->map, l->size);
	free(l->path);
}

void commit_graph_free(struct commit_graph *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->nr_layers; i++)
		layer_release(&g->layers[i]);
	for (size_t i = 0; i < g->nr_stamps; i++)
		free(g->stamp_paths[i]);
	free(g->stamp_paths);
	free(g->stamps);
	free(g->opened_dir);
	free(g->layers);
	free(g);
}

static struct commit_graph *graph_alloc(int algo)
{
	struct commit_graph *g = xcalloc(1, sizeof(*g));
	g->algo = algo;
	g->rawsz = gp_hash_algos[algo].rawsz;
	return g;
}

static struct cg_layer *add_layer(struct commit_graph *g)
{
	g->layers = xrealloc(g->layers, (g->nr_layers + 1) * sizeof(*g->layers));
	memset(&g->layers[g->nr_layers], 0, sizeof(*g->layers));
	return &g->layers[g->nr_layers++];
}

static void finish_graph(struct commit_graph *g)
{
	g->generation_data = true;
	for (uint32_t i = 0; i < g->nr_layers; i++)
		if (!g->layers[i].gda2)
			g->generation_data = false;
	g->nr_commits = g->nr_layers
		? g->layers[g->nr_layers - 1].base_pos + g->layers[g->nr_layers - 1].nr : 0;
}

static int map_layer(struct cg_layer *l, const char *path, struct gp_error *err)
{
	int ret;
	l->path = xstrdup(path);
	ret = map_file_readonly(path, &l->map, &l->size, NULL, err);
	l->mapped = !ret && l->size;
	return ret;
}

/* A lone file has nothing below it to number its parents after. */
static int check_lone(const struct cg_layer *l, struct gp_error *err)
{
	if (l->nr_bases)
		return CORRUPT(err, "%s: a lone commit-graph names %u base graphs", layer_name(l),
			       l->nr_bases);
	return 0;
}

int commit_graph_parse_buf(struct commit_graph **out, const unsigned char *buf, size_t len,
			   int algo, struct gp_error *err)
{
	struct commit_graph *g = graph_alloc(algo);
	struct cg_layer *l = add_layer(g);
	int ret;
	l->path = xstrdup("commit-graph");
	l->map = buf;
	l->size = len;
	ret = parse_layer(l, algo, 0, err);
	if (!ret)
		ret = check_lone(l, err);
	if (ret) {
		commit_graph_free(g);
		return ret;
	}
	g->lone = true;
	finish_graph(g);
	*out = g;
	return 0;
}

int commit_graph_open_file(struct commit_graph **out, const char *path, int algo,
			   struct gp_error *err)
{
	struct commit_graph *g = graph_alloc(algo);
	struct cg_layer *l = add_layer(g);
	int ret = map_layer(l, path, err);
	if (!ret)
		ret = parse_layer(l, algo, 0, err);
	if (!ret)
		ret = check_lone(l, err);
	if (ret) {
		commit_graph_free(g);
		return ret;
	}
	g->lone = true;
	finish_graph(g);
	*out = g;
	return 0;
}

/*
 * The chain file chain_path; each layer is looked for in the
 * commit-graphs directory of dirs[0], then of each later one (a fork's
 * chain may name layers its alternate holds).
 */
static int open_chain(struct commit_graph *g, const char *const *dirs, size_t nr_dirs,
		      const char *chain_path, struct gp_error *err)
{
	struct strbuf buf = STRBUF_INIT;
	size_t hexsz = gp_hash_algos[g->algo].hexsz, pos = 0;
	uint32_t base_pos = 0;
	int ret = 0;

	if (strbuf_read_file(&buf, chain_path, 0) < 0) {
		ret = errno == ENOENT ? gp_error_set(err, GP_ENOTFOUND, "%s: no such file", chain_path)
				      : gp_error_errno(err, "%s: cannot read", chain_path);
		goto out;
	}
	if (buf.len < hexsz + 1) {
		ret = CORRUPT(err, "commit-graph-chain: commit-graph chain file too small");
		goto out;
	}
	while (pos < buf.len) {
		const char *line = buf.buf + pos;
		const char *nl = memchr(line, '\n', buf.len - pos);
		size_t len = nl ? (size_t)(nl - line) : buf.len - pos;
		unsigned char raw[GP_MAX_RAWSZ];
		struct object_id oid;
		struct cg_layer *l;
		char *path;
		pos += len + (nl ? 1 : 0);
		char hexbuf[GP_MAX_HEXSZ + 1];
		if (len == hexsz) {
			memcpy(hexbuf, line, len);
			hexbuf[len] = '\0';
		}
		if (len != hexsz || parse_oid_hex_exact(hexbuf, g->algo, &oid)) {
			ret = CORRUPT(err, "commit-graph-chain: invalid commit-graph chain: line '%.*s' not a hash",
				      (int)MIN(len, 80), line);
			goto out;
		}
		memcpy(raw, oid.hash, g->rawsz);
		l = add_layer(g);
		ret = GP_ENOTFOUND;
		for (size_t d = 0; d < nr_dirs && ret == GP_ENOTFOUND; d++) {
			if (d) {
				free(l->path);
				l->path = NULL;
				gp_error_clear(err);
			}
			path = xstrfmt("%s/" CG_CHAIN_DIR "/graph-%.*s.graph", dirs[d], (int)len, line);
			ret = map_layer(l, path, err);
			free(path);
			l->dir_index = (uint32_t)d;
		}
		if (!ret)
			ret = parse_layer(l, g->algo, base_pos, err);
		if (ret) {
			if (ret == GP_ENOTFOUND)
				ret = CORRUPT(err, "commit-graph-chain: unable to find all commit-graph files (graph-%.*s.graph)",
					      (int)len, line);
			goto out;
		}
		/* The layer is named by its checksum and lists the layers below. */
		if (memcmp(l->map + l->size - g->rawsz, raw, g->rawsz)) {
			ret = CORRUPT(err, "%s: checksum does not match its name", layer_name(l));
			goto out;
		}
		if (l->nr_bases != g->nr_layers - 1) {
			ret = CORRUPT(err, "%s: commit-graph has %u base graphs, the chain %u",
				      layer_name(l), l->nr_bases, g->nr_layers - 1);
			goto out;
		}
		for (uint32_t b = 0; b + 1 < g->nr_layers; b++) {
			const struct cg_layer *below = &g->layers[b];
			if (memcmp(l->base + (size_t)b * g->rawsz,
				   below->map + below->size - g->rawsz, g->rawsz)) {
				ret = CORRUPT(err, "%s: commit-graph chain does not match (base graph %u)",
					      layer_name(l), b);
				goto out;
			}
		}
		base_pos = l->base_pos + l->nr;
	}
	if (!g->nr_layers)
		ret = CORRUPT(err, "commit-graph-chain: the chain is empty");
out:
	strbuf_release(&buf);
	return ret;
}

static void stamp_file(const char *path, struct cg_file_stamp *st)
{
	struct stat sb;
	memset(st, 0, sizeof(*st));
	if (stat(path, &sb))
		return;
	st->exists = true;
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	st->size = sb.st_size;
	st->mtime = sb.st_mtim;
}

static bool same_file_stamp(const struct cg_file_stamp *a, const struct cg_file_stamp *b)
{
	if (a->exists != b->exists)
		return false;
	return !a->exists ||
	       (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
		a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec);
}

static void add_stamp(struct commit_graph *g, char *path)
{
	g->stamp_paths = xrealloc(g->stamp_paths, (g->nr_stamps + 1) * sizeof(*g->stamp_paths));
	g->stamps = xrealloc(g->stamps, (g->nr_stamps + 1) * sizeof(*g->stamps));
	g->stamp_paths[g->nr_stamps] = path;
	stamp_file(path, &g->stamps[g->nr_stamps]);
	g->nr_stamps++;
}

/*
 * The graph of dirs[0], else (when fallback) of the first later
 * directory that has one; layers are looked for in every directory.
 */
static int open_dirs(struct commit_graph **out, const char *const *dirs, size_t nr_dirs,
		     bool fallback, int algo, struct gp_error *err)
{
	struct commit_graph *g = graph_alloc(algo);
	int ret = GP_ENOTFOUND;

	g->opened_dir = xstrdup(dirs[0]);
	for (size_t d = 0; d < nr_dirs && ret == GP_ENOTFOUND && (!d || fallback); d++) {
		char *lone = xstrfmt("%s/" CG_FILE, dirs[d]);
		char *chain = xstrfmt("%s/" CG_CHAIN_FILE, dirs[d]);
		struct cg_layer *l;

		gp_error_clear(err);
		/*
		 * Stamped before opening: a graph replaced in between is
		 * opened new with the old stamps, so commit_graph_is_current()
		 * only errs towards opening again. The directories before
		 * the one used are stamped too: a graph appearing there
		 * would be read instead.
		 */
		add_stamp(g, lone);
		add_stamp(g, chain);
		/* As git: the lone file when there is one, else the chain. */
		l = add_layer(g);
		ret = map_layer(l, lone, err);
		if (!ret)
			ret = parse_layer(l, algo, 0, err);
		if (!ret)
			ret = check_lone(l, err);
		if (!ret) {
			l->dir_index = (uint32_t)d;
			g->lone = true;
			break;
		}
		layer_release(l);
		g->nr_layers = 0;
		if (ret != GP_ENOTFOUND)
			break;
		gp_error_clear(err);
		ret = open_chain(g, dirs, nr_dirs, chain, err);
		if (ret)
			for (uint32_t i = 0; i < g->nr_layers; i++)
				layer_release(&g->layers[i]);
		if (ret)
			g->nr_layers = 0;
	}
	if (ret) {
		commit_graph_free(g);
		g = NULL;
	} else {
		finish_graph(g);
	}
	*out = g;
	return ret;
}

int commit_graph_open(struct commit_graph **out, const char *objdir, int algo,
		      struct gp_error *err)
{
	return open_dirs(out, &objdir, 1, false, algo, err);
}

/* odb's own directory first, then its alternates, in git's order. */
static const char **odb_dirs(struct odb *odb, const char *objdir, size_t *nr)
{
	size_t nr_alt = odb_nr_alternates(odb);
	const char **dirs = xmalloc((nr_alt + 1) * sizeof(*dirs));
	dirs[0] = objdir ? objdir : odb_objdir(odb);
	for (size_t i = 0; i < nr_alt; i++)
		dirs[i + 1] = odb_alternate(odb, i);
	*nr = nr_alt + 1;
	return dirs;
}

int commit_graph_open_odb(struct commit_graph **out, struct odb *odb, unsigned flags,
			  struct gp_error *err)
{
	size_t nr;
	const char **dirs = odb_dirs(odb, NULL, &nr);
	int ret = open_dirs(out, dirs, nr, !(flags & COMMIT_GRAPH_OPEN_LOCAL), odb_algo(odb), err);
	free(dirs);
	return ret;
}

bool commit_graph_is_current(const struct commit_graph *g, const char *objdir)
{
	/* a graph opened from a single file or a buffer has no stamps: never current */
	bool any = false;
	if (!g->opened_dir || strcmp(g->opened_dir, objdir))
		return false;
	for (size_t i = 0; i < g->nr_stamps; i++) {
		struct cg_file_stamp now;
		stamp_file(g->stamp_paths[i], &now);
		if (!same_file_stamp(&g->stamps[i], &now))
			return false;
		any = any || now.exists;
	}
	return any;
}

uint32_t commit_graph_nr_commits(const struct commit_graph *g)
{
	return g->nr_commits;
}

uint32_t commit_graph_nr_layers(const struct commit_graph *g)
{
	return g->nr_layers;
}

static const struct cg_layer *layer_of(const struct commit_graph *g, uint32_t pos)
{
	for (uint32_t i = g->nr_layers; i-- > 0;)
		if (pos >= g->layers[i].base_pos)
			return &g->layers[i];
	return &g->layers[0];
}

void commit_graph_prefetch(const struct commit_graph *g, uint32_t pos)
{
	const struct cg_layer *l = layer_of(g, pos);
	uint32_t lpos = pos - l->base_pos;
	if (pos >= l->base_pos + l->nr)
		return;
	__builtin_prefetch(l->cdat + (size_t)lpos * (g->rawsz + 16));
	if (g->generation_data)
		__builtin_prefetch(l->gda2 + (size_t)lpos * 4);
}

bool commit_graph_find(const struct commit_graph *g, const struct object_id *oid,
		       uint32_t *pos)
{
	for (uint32_t i = g->nr_layers; i-- > 0;) {
		const struct cg_layer *l = &g->layers[i];
		uint32_t p;
		if (l->nr && oid_table_find(l->fanout, l->oids, g->rawsz, g->rawsz, oid->hash, &p) &&
		    p < l->nr) {
			*pos = l->base_pos + p;
			return true;
		}
	}
	return false;
}

void commit_graph_oid(const struct commit_graph *g, uint32_t pos, struct object_id *oid)
{
	const struct cg_layer *l = layer_of(g, pos);
	oid_from_raw(oid, l->oids + (size_t)(pos - l->base_pos) * g->rawsz, g->algo);
}

int commit_graph_entry_at(const struct commit_graph *g, uint32_t pos,
			  struct commit_graph_entry *e, struct gp_error *err)
{
	const struct cg_layer *l = layer_of(g, pos);
	uint32_t lpos = pos - l->base_pos, limit = l->base_pos + l->nr;
	const unsigned char *c = l->cdat + (size_t)lpos * (g->rawsz + 16);
	uint32_t p1 = get_be32(c + g->rawsz), p2 = get_be32(c + g->rawsz + 4);
	uint32_t w0 = get_be32(c + g->rawsz + 8), w1 = get_be32(c + g->rawsz + 12);

	oid_from_raw(&e->tree, c, g->algo);
	e->date = ((uint64_t)(w0 & 3) << 32) | w1;
	e->topo_level = w0 >> 2;
	e->generation = e->topo_level;
	e->edges = NULL;
	e->nr_parents = 0;
	if (g->generation_data) {
		uint32_t off = get_be32(l->gda2 + (size_t)lpos * 4);
		uint64_t off64 = off;
		if (off & CG_GDA2_OVERFLOW) {
			uint32_t i = off & ~CG_GDA2_OVERFLOW;
			if (i >= l->nr_gdo2)
				return CORRUPT(err, "%s: commit %u: generation overflow entry %u out of range",
					       layer_name(l), lpos, i);
			off64 = get_be64(l->gdo2 + (size_t)i * 8);
		}
		e->generation = e->date + off64;
	}
	if (p1 == CG_PARENT_NONE)
		return 0;
	if (p1 >= limit)
		return CORRUPT(err, "%s: commit %u: invalid parent position %u", layer_name(l),
			       lpos, p1);
	e->parents_inline[0] = p1;
	e->nr_parents = 1;
	if (p2 == CG_PARENT_NONE)
		return 0;
	if (!(p2 & CG_EDGE_BIT)) {
		if (p2 >= limit)
			return CORRUPT(err, "%s: commit %u: invalid parent position %u",
				       layer_name(l), lpos, p2);
		e->parents_inline[1] = p2;
		e->nr_parents = 2;
		return 0;
	}
	for (uint64_t i = p2 & ~CG_EDGE_BIT;; i++) {
		uint32_t v;
		if (i >= l->nr_edge)
			return CORRUPT(err, "%s: commit %u: extra edge %" PRIu64 " out of range",
				       layer_name(l), lpos, i);
		v = get_be32(l->edge + i * 4);
		if ((v & ~CG_EDGE_BIT) >= limit)
			return CORRUPT(err, "%s: commit %u: invalid parent position %u",
				       layer_name(l), lpos, v & ~CG_EDGE_BIT);
		if (!e->edges)
			e->edges = l->edge + i * 4;
		e->nr_parents++;
		if (v & CG_EDGE_BIT)
			break;
	}
	return 0;
}

uint32_t commit_graph_parent(const struct commit_graph_entry *e, uint32_t n)
{
	if (!e->edges || n == 0)
		return e->parents_inline[n];
	return get_be32(e->edges + (size_t)(n - 1) * 4) & ~CG_EDGE_BIT;
}

/* ---- verify --------------------------------------------------------- */

static bool file_checksum_ok(const char *path, int algo)
{
	size_t rawsz = gp_hash_algos[algo].rawsz;
	const unsigned char *map = NULL;
	unsigned char sum[GP_MAX_RAWSZ];
	struct gp_hash_ctx ctx;
	size_t size = 0;
	bool ok;
	if (map_file_readonly(path, &map, &size, NULL, NULL) || size < rawsz)
		return true; /* missing or tiny: the open reported it */
	hash_init_checksum(&ctx, algo);
	hash_update(&ctx, map, size - rawsz);
	hash_final_checksum(&ctx, sum);
	ok = !memcmp(sum, map + size - rawsz, rawsz);
	munmap((void *)map, size);
	return ok;
}

int commit_graph_verify_checksums(struct odb *odb, commit_graph_report_fn *report, void *data)
{
	size_t nr_dirs;
	const char **dirs = odb_dirs(odb, NULL, &nr_dirs);
	const char *objdir = dirs[0];
	int algo = odb_algo(odb);
	char *lone = xstrfmt("%s/" CG_FILE, objdir);
	char *chain = xstrfmt("%s/" CG_CHAIN_FILE, objdir);
	size_t hexsz = gp_hash_algos[algo].hexsz;
	struct strbuf buf = STRBUF_INIT;
	int problems = 0;

	if (!access(lone, F_OK)) {
		if (!file_checksum_ok(lone, algo))
			problems++;
	} else if (strbuf_read_file(&buf, chain, 0) >= 0) {
		for (size_t pos = 0; pos + hexsz <= buf.len; pos += hexsz + 1) {
			/* the first directory that has the layer, as the open looks */
			for (size_t d = 0; d < nr_dirs; d++) {
				char *path = xstrfmt("%s/" CG_CHAIN_DIR "/graph-%.*s.graph", dirs[d],
						     (int)hexsz, buf.buf + pos);
				bool found = !access(path, F_OK);
				if (found && !file_checksum_ok(path, algo))
					problems++;
				free(path);
				if (found)
					break;
			}
		}
	}
	for (int i = 0; i < problems; i++)
		report("the commit-graph file has incorrect checksum and is likely corrupt", data);
	strbuf_release(&buf);
	free(chain);
	free(lone);
	free(dirs);
	return problems;
}

GP_PRINTF(3, 4) static void vreport(commit_graph_report_fn *report, void *data,
				     const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	report(sb.buf, data);
	strbuf_release(&sb);
}

static int verify_layer(const struct commit_graph *g, const struct cg_layer *l, struct odb *odb,
			struct progress *progress, commit_graph_report_fn *report, void *data)
{
	char zero_hex[GP_MAX_HEXSZ + 1] = "", nonzero_hex[GP_MAX_HEXSZ + 1] = "";
	bool seen_zero = false, seen_nonzero = false;
	struct gp_hash_ctx ctx;
	unsigned char sum[GP_MAX_RAWSZ];
	char hex[GP_MAX_HEXSZ + 1], hex2[GP_MAX_HEXSZ + 1], hex3[GP_MAX_HEXSZ + 1];
	int problems = 0, bad_sum = 0;

	hash_init_checksum(&ctx, g->algo);
	hash_update(&ctx, l->map, l->size - g->rawsz);
	hash_final_checksum(&ctx, sum);
	if (memcmp(sum, l->map + l->size - g->rawsz, g->rawsz)) {
		vreport(report, data, "the commit-graph file has incorrect checksum and is likely corrupt");
		bad_sum = 1;
	}
	for (uint32_t i = 0; i + 1 < l->nr; i++) {
		const unsigned char *a = l->oids + (size_t)i * g->rawsz;
		if (memcmp(a, a + g->rawsz, g->rawsz) >= 0) {
			vreport(report, data, "commit-graph has incorrect OID order: %s then %s",
				hash_to_hex_r(hex, a, g->rawsz), hash_to_hex_r(hex2, a + g->rawsz, g->rawsz));
			problems++;
		}
	}
	{
		uint32_t count = 0, i = 0;
		for (unsigned b = 0; b < 256; b++) {
			while (i < l->nr && l->oids[(size_t)i * g->rawsz] == b) {
				i++;
				count++;
			}
			if (get_be32(l->fanout + 4 * b) != count) {
				vreport(report, data,
					"commit-graph has incorrect fanout value: fanout[%u] = %u != %u", b,
					get_be32(l->fanout + 4 * b), count);
				problems++;
			}
		}
	}
	/* As git: a bad checksum alone does not stop the commit checks. */
	if (problems)
		return problems + bad_sum;
	problems = bad_sum;
	for (uint32_t lpos = 0; lpos < l->nr; lpos++) {
		struct commit_graph_entry e;
		struct commit_info ci = COMMIT_INFO_INIT;
		struct gp_error err = GP_ERROR_INIT;
		struct object_id oid;
		enum object_type type;
		unsigned char *buf = NULL;
		size_t size;
		uint32_t pos = l->base_pos + lpos;
		uint64_t max_gen = 0;
		bool odd = false;

		commit_graph_oid(g, pos, &oid);
		oid_to_hex_r(hex, &oid);
		if (odb_read_object(odb, &oid, &type, &buf, &size, &err) || type != OBJ_COMMIT ||
		    commit_parse(buf, size, g->algo, &ci, &err)) {
			vreport(report, data, "failed to parse commit %s from object database for commit-graph",
				hex);
			problems++;
			goto next;
		}
		if (commit_graph_entry_at(g, pos, &e, &err)) {
			vreport(report, data, "%s", gp_error_msg(&err));
			problems++;
			goto next;
		}
		if (!oideq(&e.tree, &ci.tree)) {
			vreport(report, data, "root tree OID for commit %s in commit-graph is %s != %s", hex,
				oid_to_hex_r(hex2, &e.tree), oid_to_hex_r(hex3, &ci.tree));
			problems++;
		}
		for (uint32_t n = 0; n < e.nr_parents || n < ci.nr_parents; n++) {
			struct object_id p;
			struct commit_graph_entry pe;
			if (n >= ci.nr_parents) {
				vreport(report, data, "commit-graph parent list for commit %s is too long", hex);
				problems++;
				break;
			}
			if (n >= e.nr_parents) {
				vreport(report, data, "commit-graph parent list for commit %s terminates early",
					hex);
				problems++;
				break;
			}
			commit_graph_oid(g, commit_graph_parent(&e, n), &p);
			if (!oideq(&p, &ci.parents[n])) {
				vreport(report, data, "commit-graph parent for %s is %s != %s", hex,
					oid_to_hex_r(hex2, &p), oid_to_hex_r(hex3, &ci.parents[n]));
				problems++;
				odd = true;
				continue;
			}
			if (commit_graph_entry_at(g, commit_graph_parent(&e, n), &pe, &err)) {
				odd = true;
				continue;
			}
			if (pe.generation > max_gen)
				max_gen = pe.generation;
			if (!seen_zero && e.topo_level &&
			    pe.topo_level >= e.topo_level && e.topo_level != CG_TOPO_MAX) {
				vreport(report, data,
					"commit-graph generation for commit %s is %u < %u", hex,
					e.topo_level, pe.topo_level + 1);
				problems++;
			}
		}
		if (!seen_zero && !odd && e.nr_parents && g->generation_data && e.generation <= max_gen) {
			vreport(report, data, "commit-graph generation for commit %s is %" PRIu64
				" <= %" PRIu64, hex, e.generation, max_gen);
			problems++;
		}
		if (!seen_zero && !odd && g->generation_data && e.generation < e.date) {
			vreport(report, data, "commit-graph generation for commit %s is %" PRIu64
				" < its date %" PRIu64, hex, e.generation, e.date);
			problems++;
		}
		if (e.topo_level) {
			if (!seen_nonzero)
				oid_to_hex_r(nonzero_hex, &oid);
			seen_nonzero = true;
		} else {
			if (!seen_zero)
				oid_to_hex_r(zero_hex, &oid);
			seen_zero = true;
		}
		if (e.date != (ci.date & 0x3ffffffffULL)) {
			vreport(report, data,
				"commit date for commit %s in commit-graph is %" PRIu64 " != %" PRIu64, hex,
				e.date, ci.date);
			problems++;
		}
next:
		gp_error_clear(&err);
		commit_info_release(&ci);
		free(buf);
		progress_add(progress, 1);
	}
	if (seen_zero && seen_nonzero) {
		vreport(report, data,
			"commit-graph has both zero and non-zero generations (e.g., commits '%s' and '%s')",
			zero_hex, nonzero_hex);
		problems++;
	}
	return problems;
}

int commit_graph_verify(const struct commit_graph *g, struct odb *odb, bool shallow,
			bool show_progress, commit_graph_report_fn *report, void *data)
{
	uint64_t total = shallow ? g->layers[g->nr_layers - 1].nr : g->nr_commits;
	struct progress *progress = progress_start("Verifying commits in commit graph", total,
						   show_progress);
	int problems = 0;
	for (uint32_t i = g->nr_layers; i-- > 0;) {
		problems += verify_layer(g, &g->layers[i], odb, progress, report, data);
		if (shallow)
			break;
	}
	progress_stop(&progress);
	return problems;
}

/* ---- writing ---------------------------------------------------------- */

struct wcommit {
	struct object_id oid;
	struct object_id tree;
	uint64_t date;
	uint64_t generation;  /* corrected commit date */
	uint32_t topo_level;
	uint32_t first_parent; /* index into w->parents */
	uint32_t nr_parents;
};

struct writer {
	const struct commit_graph_write_opts *opts;
	struct odb *odb;
	struct commit_graph *old;
	int algo;
	size_t rawsz;
	uint32_t keep_layers;     /* layers of old kept below the new one */
	uint32_t base_commits;    /* commits in those layers */
	struct wcommit *commits;
	size_t nr, alloc;
	struct object_id *parents; /* parent ids, by wcommit.first_parent */
	size_t nr_parents, alloc_parents;
	uint32_t *table;          /* open addressing: index + 1, 0 empty */
	size_t table_size;
	struct object_id *stack;
	size_t nr_stack, alloc_stack;
	uint32_t *parent_pos;     /* graph positions, after sorting */
	uint32_t nr_edges, nr_overflow;
	struct progress *progress;
	struct commit_prefetch *prefetch; /* NULL: every commit read here */
	struct bloom_filter *filters; /* by sorted index, when writing BDAT */
	uint64_t filter_bytes;        /* their total length */
	int bloom_version;            /* the filters' hash version; 0: none written */
	struct bloom_settings bloom;  /* of the filters written */
};

static uint64_t oid_key(const struct object_id *oid)
{
	uint64_t k;
	memcpy(&k, oid->hash, sizeof(k));
	return k;
}

static void table_grow(struct writer *w)
{
	size_t size = w->table_size ? w->table_size * 2 : 1024;
	uint32_t *t = xcalloc(size, sizeof(*t));
	for (size_t i = 0; i < w->nr; i++) {
		size_t s = oid_key(&w->commits[i].oid) & (size - 1);
		while (t[s])
			s = (s + 1) & (size - 1);
		t[s] = (uint32_t)i + 1;
	}
	free(w->table);
	w->table = t;
	w->table_size = size;
}

/* The slot for oid: holding it, or empty where it would go. */
static size_t table_slot(const struct writer *w, const struct object_id *oid)
{
	size_t s = oid_key(oid) & (w->table_size - 1);
	while (w->table[s] && !oideq(&w->commits[w->table[s] - 1].oid, oid))
		s = (s + 1) & (w->table_size - 1);
	return s;
}

static bool have_commit(const struct writer *w, const struct object_id *oid)
{
	return w->table_size && w->table[table_slot(w, oid)];
}

static struct wcommit *add_commit(struct writer *w, const struct object_id *oid)
{
	struct wcommit *c;
	if ((w->nr + 1) * 2 > w->table_size)
		table_grow(w);
	ALLOC_GROW(w->commits, w->nr + 1, w->alloc);
	w->table[table_slot(w, oid)] = (uint32_t)w->nr + 1;
	c = &w->commits[w->nr++];
	memset(c, 0, sizeof(*c));
	c->oid = *oid;
	c->first_parent = (uint32_t)w->nr_parents;
	return c;
}

static void add_parent(struct writer *w, struct wcommit *c, const struct object_id *p)
{
	ALLOC_GROW(w->parents, w->nr_parents + 1, w->alloc_parents);
	w->parents[w->nr_parents++] = *p;
	c->nr_parents++;
}

static void push(struct writer *w, const struct object_id *oid)
{
	ALLOC_GROW(w->stack, w->nr_stack + 1, w->alloc_stack);
	w->stack[w->nr_stack++] = *oid;
}

/* Add the commit at graph position pos of the old graph, queueing its parents. */
static int add_from_graph(struct writer *w, uint32_t pos, bool queue, struct gp_error *err)
{
	struct commit_graph_entry e;
	struct object_id oid;
	struct wcommit *c;
	int ret;
	commit_graph_oid(w->old, pos, &oid);
	if (have_commit(w, &oid))
		return 0;
	ret = commit_graph_entry_at(w->old, pos, &e, err);
	if (ret)
		return ret;
	c = add_commit(w, &oid);
	c->tree = e.tree;
	c->date = e.date;
	for (uint32_t n = 0; n < e.nr_parents; n++) {
		struct object_id p;
		commit_graph_oid(w->old, commit_graph_parent(&e, n), &p);
		add_parent(w, c, &p);
		if (queue)
			push(w, &p);
	}
	return 0;
}

/* oid as the prefetching thread parsed it, if it did. */
static bool prefetched(struct writer *w, const struct object_id *oid, struct commit_info *ci)
{
	struct packed_git *p;
	const char *loose_dir;
	uint64_t ofs;
	return odb_locate(w->odb, oid, &p, &ofs, &loose_dir) && p &&
	       commit_prefetch_take(w->prefetch, p, ofs, ci);
}

/* Add oid (a tip when peel: tags are peeled and non-commits skipped). */
static int add_from_odb(struct writer *w, const struct object_id *start, bool peel,
			struct gp_error *err)
{
	struct object_id oid = *start;
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;

	for (int depth = 0;; depth++) {
		enum object_type type;
		unsigned char *buf = NULL;
		size_t size;
		struct commit_info ci = COMMIT_INFO_INIT;
		struct tag_info tag;
		struct wcommit *c;

		if (have_commit(w, &oid))
			return 0;
		if (w->old && w->opts->split != COMMIT_GRAPH_NO_SPLIT &&
		    w->opts->split != COMMIT_GRAPH_SPLIT_REPLACE) {
			uint32_t pos;
			/* A new layer leaves out what the chain has. */
			if (commit_graph_find(w->old, &oid, &pos))
				return 0;
		} else if (w->old) {
			uint32_t pos;
			if (commit_graph_find(w->old, &oid, &pos))
				return add_from_graph(w, pos, true, err);
		}
		if (w->prefetch && prefetched(w, &oid, &ci))
			goto parsed;
		ret = odb_read_object(w->odb, &oid, &type, &buf, &size, err);
		if (ret) {
			if (ret == GP_ENOTFOUND)
				ret = gp_error_set(err, GP_ENOTFOUND, "unable to parse commit %s",
						   oid_to_hex_r(hex, &oid));
			return ret;
		}
		if (type == OBJ_TAG && peel && depth < 64) {
			ret = tag_parse(buf, size, w->algo, &tag, err);
			free(buf);
			if (ret)
				return gp_error_prefix(err, "tag %s", oid_to_hex_r(hex, &oid));
			oid = tag.object;
			continue;
		}
		if (type != OBJ_COMMIT) {
			free(buf);
			if (peel)
				return 0;
			return gp_error_set(err, GP_ECORRUPT, "object %s is a %s, not a commit",
					    oid_to_hex_r(hex, &oid), type_name(type));
		}
		ret = commit_parse(buf, size, w->algo, &ci, err);
		free(buf);
		if (ret)
			return gp_error_prefix(err, "unable to parse commit %s", oid_to_hex_r(hex, &oid));
parsed:
		c = add_commit(w, &oid);
		c->tree = ci.tree;
		c->date = ci.date;
		for (size_t n = 0; n < ci.nr_parents; n++) {
			add_parent(w, c, &ci.parents[n]);
			push(w, &ci.parents[n]);
		}
		commit_info_release(&ci);
		progress_update(w->progress, w->nr);
		return 0;
	}
}

static int close_reachable(struct writer *w, struct gp_error *err)
{
	int ret = 0;
	while (w->nr_stack && !ret) {
		struct object_id oid = w->stack[--w->nr_stack];
		ret = add_from_odb(w, &oid, false, err);
	}
	return ret;
}

static int cmp_wcommit(const void *a, const void *b)
{
	return oidcmp(&((const struct wcommit *)a)->oid, &((const struct wcommit *)b)->oid);
}

static bool sorted_find(const struct writer *w, const struct object_id *oid, uint32_t *idx)
{
	size_t lo = 0, hi = w->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = oidcmp(&w->commits[mid].oid, oid);
		if (!c) {
			*idx = (uint32_t)mid;
			return true;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Parents to graph positions; generations (parents before children). */
static int resolve(struct writer *w, struct gp_error *err)
{
	uint8_t *state = xcalloc(w->nr ? w->nr : 1, 1);
	uint32_t *stack = NULL;
	size_t nr_stack = 0, alloc_stack = 0;
	int64_t steps = 0;  /* commits whose levels the walk computed */
	char hex[GP_MAX_HEXSZ + 1];
	int ret = 0;
	/* git's meter for this step (topological levels and generations, one pass here) */
	struct progress *meter = progress_start("Computing commit graph generation numbers",
						w->nr, w->opts->progress);

	w->parent_pos = xmalloc((w->nr_parents ? w->nr_parents : 1) * sizeof(*w->parent_pos));
	for (size_t i = 0; i < w->nr; i++) {
		const struct wcommit *c = &w->commits[i];
		for (uint32_t n = 0; n < c->nr_parents; n++) {
			const struct object_id *p = &w->parents[c->first_parent + n];
			uint32_t idx, pos;
			if (sorted_find(w, p, &idx)) {
				pos = w->base_commits + idx;
			} else if (w->old && commit_graph_find(w->old, p, &pos) && pos < w->base_commits) {
				;
			} else {
				ret = gp_error_set(err, GP_ENOTFOUND, "missing parent %s of commit %s",
						   oid_to_hex_r(hex, p), oid_to_hex_r(hex, &c->oid));
				goto out;
			}
			w->parent_pos[c->first_parent + n] = pos;
		}
		if (c->nr_parents > 2)
			w->nr_edges += c->nr_parents - 1;
	}
	for (size_t root = 0; root < w->nr; root++) {
		if (state[root])
			continue;
		ALLOC_GROW(stack, nr_stack + 1, alloc_stack);
		stack[nr_stack++] = (uint32_t)root;
		while (nr_stack) {
			uint32_t idx = stack[nr_stack - 1];
			struct wcommit *c = &w->commits[idx];
			bool ready = true;
			uint32_t topo = 0;
			uint64_t gen = 0;
			if (state[idx] == 2) {
				nr_stack--;
				continue;
			}
			state[idx] = 1;
			for (uint32_t n = 0; n < c->nr_parents; n++) {
				uint32_t pos = w->parent_pos[c->first_parent + n];
				uint32_t ptopo;
				uint64_t pgen;
				if (pos >= w->base_commits) {
					uint32_t pidx = pos - w->base_commits;
					if (state[pidx] != 2) {
						if (state[pidx] == 1) {
							ret = gp_error_set(err, GP_ECORRUPT,
									   "commit %s is its own ancestor",
									   oid_to_hex_r(hex, &c->oid));
							goto out;
						}
						ready = false;
						ALLOC_GROW(stack, nr_stack + 1, alloc_stack);
						stack[nr_stack++] = pidx;
						continue;
					}
					ptopo = w->commits[pidx].topo_level;
					pgen = w->commits[pidx].generation;
				} else {
					struct commit_graph_entry e;
					ret = commit_graph_entry_at(w->old, pos, &e, err);
					if (ret)
						goto out;
					ptopo = e.topo_level;
					pgen = e.generation;
				}
				if (ptopo > topo)
					topo = ptopo;
				if (pgen + 1 > gen)
					gen = pgen + 1;
			}
			if (!ready)
				continue;
			c->topo_level = topo >= CG_TOPO_MAX ? CG_TOPO_MAX : topo + 1;
			c->generation = MAX(gen, c->date);
			if (c->generation - c->date > CG_OFFSET_MAX)
				w->nr_overflow++;
			state[idx] = 2;
			steps++;
			progress_update(meter, (uint64_t)steps);
			nr_stack--;
		}
	}
	/*
	 * Git's name for it (t5324 checks it): a layer's levels start
	 * from what the layers below it hold, never walked again, so
	 * this counts the new layer's commits only.
	 */
	trace2_data_intmax("commit-graph", "generation-dfs-steps", steps);
out:
	progress_stop(&meter);
	free(stack);
	free(state);
	return ret;
}

static void write_oidf(struct hashfile *f, void *data)
{
	struct writer *w = data;
	size_t i = 0;
	for (unsigned b = 0; b < 256; b++) {
		while (i < w->nr && w->commits[i].oid.hash[0] == b)
			i++;
		hashfile_write_be32(f, (uint32_t)i);
	}
}

static void write_oidl(struct hashfile *f, void *data)
{
	struct writer *w = data;
	for (size_t i = 0; i < w->nr; i++)
		hashfile_write(f, w->commits[i].oid.hash, w->rawsz);
}

static void write_cdat(struct hashfile *f, void *data)
{
	struct writer *w = data;
	uint32_t edge = 0;
	for (size_t i = 0; i < w->nr; i++) {
		const struct wcommit *c = &w->commits[i];
		const uint32_t *pp = w->parent_pos + c->first_parent;
		hashfile_write(f, c->tree.hash, w->rawsz);
		hashfile_write_be32(f, c->nr_parents ? pp[0] : CG_PARENT_NONE);
		if (c->nr_parents > 2) {
			hashfile_write_be32(f, CG_EDGE_BIT | edge);
			edge += c->nr_parents - 1;
		} else {
			hashfile_write_be32(f, c->nr_parents == 2 ? pp[1] : CG_PARENT_NONE);
		}
		hashfile_write_be32(f, (c->topo_level << 2) | (uint32_t)((c->date >> 32) & 3));
		hashfile_write_be32(f, (uint32_t)c->date);
	}
}

static void write_gda2(struct hashfile *f, void *data)
{
	struct writer *w = data;
	uint32_t overflow = 0;
	for (size_t i = 0; i < w->nr; i++) {
		uint64_t off = w->commits[i].generation - w->commits[i].date;
		hashfile_write_be32(f, off > CG_OFFSET_MAX ? CG_GDA2_OVERFLOW | overflow++ : (uint32_t)off);
	}
}

static void write_gdo2(struct hashfile *f, void *data)
{
	struct writer *w = data;
	for (size_t i = 0; i < w->nr; i++) {
		uint64_t off = w->commits[i].generation - w->commits[i].date;
		if (off > CG_OFFSET_MAX)
			hashfile_write_be64(f, off);
	}
}

static void write_edge(struct hashfile *f, void *data)
{
	struct writer *w = data;
	for (size_t i = 0; i < w->nr; i++) {
		const struct wcommit *c = &w->commits[i];
		if (c->nr_parents <= 2)
			continue;
		for (uint32_t n = 1; n < c->nr_parents; n++)
			hashfile_write_be32(f, w->parent_pos[c->first_parent + n] |
						       (n + 1 == c->nr_parents ? CG_EDGE_BIT : 0));
	}
}

static void write_bidx(struct hashfile *f, void *data)
{
	struct writer *w = data;
	uint32_t end = 0;
	for (size_t i = 0; i < w->nr; i++) {
		end += (uint32_t)w->filters[i].len;
		hashfile_write_be32(f, end);
	}
}

static void write_bdat(struct hashfile *f, void *data)
{
	struct writer *w = data;
	hashfile_write_be32(f, w->bloom.hash_version);
	hashfile_write_be32(f, w->bloom.num_hashes);
	hashfile_write_be32(f, w->bloom.bits_per_entry);
	for (size_t i = 0; i < w->nr; i++)
		if (w->filters[i].len)
			hashfile_write(f, w->filters[i].data, w->filters[i].len);
}

/* The root tree of the first parent of c, which is in w or below it. */
static int first_parent_tree(struct writer *w, const struct wcommit *c, struct object_id *tree,
			     struct gp_error *err)
{
	const struct object_id *p = &w->parents[c->first_parent];
	struct commit_graph_entry e;
	uint32_t idx, pos;
	int ret;

	if (sorted_find(w, p, &idx)) {
		*tree = w->commits[idx].tree;
		return 0;
	}
	if (!w->old || !commit_graph_find(w->old, p, &pos))
		BUG("first parent neither written nor in the graph below");
	ret = commit_graph_entry_at(w->old, pos, &e, err);
	if (!ret)
		*tree = e.tree;
	return ret;
}

enum old_filter {
	OLD_NONE,    /* no filter in the graph read, or an empty one */
	OLD_SAME,    /* one of the version written */
	OLD_OTHER,   /* one of the other version */
};

/*
 * The filter of oid in the graph read, copied into *out when there is
 * one in bounds: git takes one of the same version as it is rather
 * than compute it, and may take one of the other version (see
 * compute_filters()).
 */
static enum old_filter old_filter(struct writer *w, const struct object_id *oid,
				  struct bloom_filter *out)
{
	const struct cg_layer *l;
	uint32_t pos, lpos, start, end;

	if (!w->old || !w->opts->changed_paths_version || !commit_graph_find(w->old, oid, &pos))
		return OLD_NONE;
	l = layer_of(w->old, pos);
	lpos = pos - l->base_pos;
	if (!l->bdat)
		return OLD_NONE;
	start = lpos ? get_be32(l->bidx + (size_t)(lpos - 1) * 4) : 0;
	end = get_be32(l->bidx + (size_t)lpos * 4);
	/* An empty one was left uncomputed (--max-new-filters): compute it. */
	if (start >= end || end > l->bdat_size - CG_BDAT_HEADER_SIZE)
		return OLD_NONE;
	bloom_filter_release(out);
	out->len = end - start;
	out->data = xmemdup(l->bdat + CG_BDAT_HEADER_SIZE + start, out->len);
	return l->bloom_version == (uint32_t)w->bloom_version ? OLD_SAME : OLD_OTHER;
}

/*
 * Whether a filter of the other hash version is that of this one too:
 * when no path of c's tree nor of its first parent's has a byte >=
 * 0x80, as git checks before "upgrading" it.
 */
static int same_in_both_versions(struct writer *w, struct bloom_high_bits *hb,
				 const struct wcommit *c, bool *same, struct gp_error *err)
{
	struct object_id ptree;
	bool high = false;
	int ret = bloom_tree_has_high_bit(hb, &c->tree, &high, err);
	if (!ret && !high && c->nr_parents) {
		ret = first_parent_tree(w, c, &ptree, err);
		if (!ret)
			ret = bloom_tree_has_high_bit(hb, &ptree, &high, err);
	}
	*same = !high;
	return ret;
}

struct filter_order {
	uint64_t generation;
	uint64_t date;
	size_t idx;
};

static int cmp_filter_order(const void *va, const void *vb)
{
	const struct filter_order *a = va, *b = vb;
	if (a->generation != b->generation)
		return a->generation < b->generation ? -1 : 1;
	if (a->date != b->date)
		return a->date < b->date ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int compute_filters(struct writer *w, bool gda2, struct gp_error *err)
{
	/* Filters taken from the old graph count as "not computed", as git's. */
	intmax_t computed = 0, not_computed = 0, empty = 0, large = 0, upgraded = 0;
	struct bloom_high_bits hb = { .odb = w->odb, .algo = w->algo };
	intmax_t limit = w->opts->max_new_filters >= 0 ? w->opts->max_new_filters : (intmax_t)w->nr;
	struct progress *meter = progress_start("Computing commit changed paths Bloom filters",
						w->nr, w->opts->progress);
	struct filter_order *order = xcalloc(w->nr ? w->nr : 1, sizeof(*order));
	int ret = 0;

	/*
	 * Git visits commits by generation, then date, so that under
	 * --max-new-filters the oldest get theirs first; a commit left
	 * out gets an empty filter (BIDX repeats the previous end).
	 */
	for (size_t i = 0; i < w->nr; i++) {
		order[i].generation = gda2 ? w->commits[i].generation : w->commits[i].topo_level;
		order[i].date = w->commits[i].date;
		order[i].idx = i;
	}
	qsort(order, w->nr, sizeof(*order), cmp_filter_order);
	w->filters = xcalloc(w->nr ? w->nr : 1, sizeof(*w->filters));
	for (size_t n = 0; n < w->nr && !ret; n++) {
		size_t i = order[n].idx;
		const struct wcommit *c = &w->commits[i];
		struct object_id ptree;
		enum old_filter kind;
		unsigned trunc;

		progress_update(meter, n + 1);
		kind = old_filter(w, &c->oid, &w->filters[i]);
		if (kind == OLD_SAME) {
			w->filter_bytes += w->filters[i].len;
			not_computed++;
			continue;
		}
		if (computed >= limit) {
			bloom_filter_release(&w->filters[i]);
			not_computed++;
			continue;
		}
		if (kind == OLD_OTHER) {
			bool same;
			ret = same_in_both_versions(w, &hb, c, &same, err);
			if (ret)
				break;
			if (same) {
				w->filter_bytes += w->filters[i].len;
				upgraded++;
				continue;
			}
		}
		if (c->nr_parents)
			ret = first_parent_tree(w, c, &ptree, err);
		if (!ret)
			ret = bloom_filter_compute(&w->filters[i], w->odb, w->algo,
						   c->nr_parents ? &ptree : NULL, &c->tree,
						   &w->bloom, &trunc, err);
		if (ret)
			break;
		w->filter_bytes += w->filters[i].len;
		computed++;
		empty += !!(trunc & BLOOM_TRUNC_EMPTY);
		large += !!(trunc & BLOOM_TRUNC_LARGE);
	}
	free(order);
	bloom_high_bits_release(&hb);
	progress_stop(&meter);
	if (ret)
		return ret;
	if (w->filter_bytes > UINT32_MAX)
		return gp_error_set(err, GP_EINVAL, "changed-path Bloom filters too large");
	trace2_data_intmax("commit-graph", "filter-computed", computed);
	trace2_data_intmax("commit-graph", "filter-not-computed", not_computed);
	trace2_data_intmax("commit-graph", "filter-trunc-empty", empty);
	trace2_data_intmax("commit-graph", "filter-trunc-large", large);
	trace2_data_intmax("commit-graph", "filter-upgraded", upgraded);
	return 0;
}

static void write_base(struct hashfile *f, void *data)
{
	struct writer *w = data;
	for (uint32_t l = 0; l < w->keep_layers; l++) {
		const struct cg_layer *layer = &w->old->layers[l];
		hashfile_write(f, layer->map + layer->size - w->rawsz, w->rawsz);
	}
}

static bool checksums_ok(const struct commit_graph *g)
{
	for (uint32_t i = 0; i < g->nr_layers; i++) {
		const struct cg_layer *l = &g->layers[i];
		unsigned char sum[GP_MAX_RAWSZ];
		struct gp_hash_ctx ctx;
		hash_init_checksum(&ctx, g->algo);
		hash_update(&ctx, l->map, l->size - g->rawsz);
		hash_final_checksum(&ctx, sum);
		if (memcmp(sum, l->map + l->size - g->rawsz, g->rawsz))
			return false;
	}
	return true;
}

/* Decide which layers of the old chain stay, and take in the rest. */
static int plan_split(struct writer *w, struct gp_error *err)
{
	uint32_t keep = w->old ? w->old->nr_layers : 0;
	uint64_t n = w->nr;
	int ret = 0;

	if (w->opts->split == COMMIT_GRAPH_SPLIT_REPLACE) {
		keep = 0;
	} else if (w->opts->split == COMMIT_GRAPH_SPLIT) {
		uint64_t mult = w->opts->size_multiple ? w->opts->size_multiple : 2;
		while (keep) {
			const struct cg_layer *top = &w->old->layers[keep - 1];
			/* Another directory's layers (an alternate's) stay as they are. */
			if (top->dir_index)
				break;
			if (!(top->nr <= mult * n || (w->opts->max_commits && n > w->opts->max_commits)))
				break;
			n += top->nr;
			keep--;
		}
	}
	/*
	 * A chain names its layers by checksum in commit-graphs/: another
	 * directory's lone info/commit-graph cannot be one, so it is taken
	 * into the new layer (as git does).
	 */
	if (keep && w->old->lone && w->old->layers[0].dir_index)
		keep = 0;
	w->keep_layers = keep;
	w->base_commits = keep ? w->old->layers[keep - 1].base_pos + w->old->layers[keep - 1].nr : 0;
	/* Merged layers come in whole; replace starts afresh from what was given. */
	for (uint32_t pos = w->base_commits;
	     w->old && w->opts->split != COMMIT_GRAPH_SPLIT_REPLACE && pos < w->old->nr_commits && !ret;
	     pos++)
		ret = add_from_graph(w, pos, false, err);
	return ret;
}

static void expire_layers(const char *objdir, const struct commit_graph *old,
			  const unsigned char *keep, uint32_t nr_keep, size_t rawsz,
			  uint64_t expire_time)
{
	char *dir = xstrfmt("%s/" CG_CHAIN_DIR, objdir);
	DIR *d = opendir(dir);
	struct dirent *de;
	(void)old;
	if (!expire_time)
		expire_time = (uint64_t)time(NULL);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char hex[GP_MAX_HEXSZ + 1];
		bool kept = false;
		struct stat st;
		char *path;
		if (len < 6 || strcmp(de->d_name + len - 6, ".graph"))
			continue;
		for (uint32_t l = 0; l < nr_keep && !kept; l++)
			kept = len == 6 + 2 * rawsz + 6 && !strncmp(de->d_name, "graph-", 6) &&
			       !strncmp(de->d_name + 6, hash_to_hex_r(hex, keep + (size_t)l * rawsz, rawsz),
					2 * rawsz);
		if (kept)
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (!stat(path, &st) && (uint64_t)st.st_mtime <= expire_time)
			unlink(path);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
}

static void adjust_perm(const char *path, int shared)
{
	mode_t mode = 0444;
	if (!shared)
		return;
	if (shared > 0)
		mode = (mode_t)shared & ~0222u;
	else
		mode |= (mode_t)-shared & ~0222u;
	chmod(path, mode);
}

static int install(struct writer *w, const char *objdir, struct hashfile *f,
		   struct gp_error *err)
{
	unsigned char sum[GP_MAX_RAWSZ];
	char hex[GP_MAX_HEXSZ + 1];
	unsigned char *chain = NULL;
	uint32_t nr_chain = w->keep_layers + 1;
	char *path = NULL, *chain_path = NULL;
	struct hashfile *cf = NULL;
	int ret;

	if (w->opts->split == COMMIT_GRAPH_NO_SPLIT) {
		path = xstrfmt("%s/" CG_FILE, objdir);
		ret = hashfile_commit(f, NULL, 0, err);
		if (!ret)
			adjust_perm(path, w->opts->shared_perm);
		free(path);
		if (ret)
			return ret;
		chain_path = xstrfmt("%s/" CG_CHAIN_FILE, objdir);
		unlink(chain_path);
		free(chain_path);
		expire_layers(objdir, w->old, NULL, 0, w->rawsz, w->opts->expire_time);
		return 0;
	}
	ret = hashfile_finalize(f, sum, 0, err);
	if (ret)
		return ret;
	path = xstrfmt("%s/" CG_CHAIN_DIR "/graph-%s.graph", objdir, hash_to_hex_r(hex, sum, w->rawsz));
	ret = hashfile_install(f, path, HASHFILE_KEEP_EXISTING, err);
	if (ret)
		goto out;
	adjust_perm(path, w->opts->shared_perm);
	chain = xmalloc(nr_chain * w->rawsz);
	for (uint32_t l = 0; l < w->keep_layers; l++) {
		const struct cg_layer *layer = &w->old->layers[l];
		memcpy(chain + (size_t)l * w->rawsz, layer->map + layer->size - w->rawsz, w->rawsz);
	}
	memcpy(chain + (size_t)w->keep_layers * w->rawsz, sum, w->rawsz);
	/* A lone graph kept as the base moves into the chain directory. */
	if (w->keep_layers && w->old->lone) {
		char *lone = xstrfmt("%s/" CG_FILE, objdir);
		char *to = xstrfmt("%s/" CG_CHAIN_DIR "/graph-%s.graph", objdir,
				   hash_to_hex_r(hex, chain, w->rawsz));
		if (link(lone, to) && errno != EEXIST)
			ret = gp_error_errno(err, "unable to link '%s' to '%s'", lone, to);
		free(lone);
		free(to);
		if (ret)
			goto out;
	}
	chain_path = xstrfmt("%s/" CG_CHAIN_FILE, objdir);
	ret = hashfile_create_locked(&cf, chain_path, w->algo, err);
	if (ret)
		goto out;
	for (uint32_t l = 0; l < nr_chain; l++) {
		hash_to_hex_r(hex, chain + (size_t)l * w->rawsz, w->rawsz);
		hashfile_write(cf, hex, strlen(hex));
		hashfile_write(cf, "\n", 1);
	}
	ret = hashfile_commit(cf, NULL, HASHFILE_NO_TRAILER, err);
	if (ret)
		goto out;
	adjust_perm(chain_path, w->opts->shared_perm);
	{
		char *lone = xstrfmt("%s/" CG_FILE, objdir);
		unlink(lone);
		free(lone);
	}
	expire_layers(objdir, w->old, chain, nr_chain, w->rawsz, w->opts->expire_time);
out:
	free(chain);
	free(chain_path);
	free(path);
	return ret;
}

/*
 * As git reads a chain: the topmost layer with filters sets their
 * version, hash count and bits per entry; the filters of a layer below
 * with other settings are ignored (and named in result), so its
 * commits get theirs computed anew.
 */
static void disable_mixed_filters(struct writer *w, struct commit_graph_write_result *result)
{
	const struct cg_layer *ref = NULL;
	for (uint32_t n = w->old->nr_layers; n-- > 0;) {
		struct cg_layer *l = &w->old->layers[n];
		if (!l->bdat)
			continue;
		if (!ref) {
			ref = l;
			continue;
		}
		if (l->bloom_version == ref->bloom_version &&
		    l->bloom_num_hashes == ref->bloom_num_hashes &&
		    l->bloom_bits_per_entry == ref->bloom_bits_per_entry)
			continue;
		l->bidx = l->bdat = NULL;
		l->bdat_size = 0;
		l->bloom_version = 0;
		result->bloom_disabled = xrealloc(result->bloom_disabled,
						  (result->nr_bloom_disabled + 1) *
							  sizeof(*result->bloom_disabled));
		oid_from_raw(&result->bloom_disabled[result->nr_bloom_disabled++],
			     l->map + l->size - w->rawsz, w->algo);
	}
}

int commit_graph_write(const char *objdir, struct odb *odb, int algo,
		       const struct object_id *tips, size_t nr_tips,
		       const struct commit_graph_write_opts *opts,
		       struct commit_graph_write_result *result, struct gp_error *err)
{
	struct writer w = { .opts = opts, .odb = odb, .algo = algo,
			    .rawsz = gp_hash_algos[algo].rawsz };
	struct chunk_writer chunks = CHUNK_WRITER_INIT;
	struct hashfile *f = NULL;
	struct gp_error old_err = GP_ERROR_INIT;
	bool split = opts->split != COMMIT_GRAPH_NO_SPLIT;
	const char **dirs;
	size_t nr_dirs;
	bool gda2;
	char *path = NULL;
	int ret;

	memset(result, 0, sizeof(*result));
	/*
	 * The graph of objdir, or else of its first alternate that has
	 * one: a fork's new layer goes on top of the chain it reads.
	 */
	dirs = odb_dirs(odb, objdir, &nr_dirs);
	ret = open_dirs(&w.old, dirs, nr_dirs, true, algo, &old_err);
	free(dirs);
	if (ret && ret != GP_ENOTFOUND)
		result->old_unusable = true;
	/*
	 * The old graph's entries are copied rather than parsed again from
	 * the commits, so a damaged one must not be trusted: it is left
	 * out, as if there were none, and the new graph mends it.
	 */
	if (!ret && !checksums_ok(w.old)) {
		commit_graph_free(w.old);
		w.old = NULL;
		result->old_unusable = true;
	}
	gp_error_clear(&old_err);
	ret = 0;
	if (w.old && opts->changed_paths_version)
		disable_mixed_filters(&w, result);

	if (split) {
		char *dir = xstrfmt("%s/" CG_CHAIN_DIR, objdir);
		if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			ret = gp_error_errno(err, "unable to create '%s'", dir);
		free(dir);
		if (ret)
			goto out;
	}
	w.progress = progress_start("Expanding reachable commits in commit graph", 0,
				    opts->progress);
	if (opts->append && w.old && !split)
		for (uint32_t pos = 0; pos < w.old->nr_commits && !ret; pos++)
			ret = add_from_graph(&w, pos, false, err);
	/* From nothing, the walk reads every commit: a thread reads ahead. */
	if (!w.old && !opts->append)
		w.prefetch = commit_prefetch_start(odb, algo);
	for (size_t i = 0; i < nr_tips && !ret; i++) {
		ret = add_from_odb(&w, &tips[i], true, err);
		if (!ret)
			ret = close_reachable(&w, err);
	}
	commit_prefetch_stop(w.prefetch);
	w.prefetch = NULL;
	progress_stop(&w.progress);
	if (ret)
		goto out;
	if (split) {
		/* Nothing new: the chain stays as it is. */
		if (!w.nr && opts->split != COMMIT_GRAPH_SPLIT_REPLACE)
			goto out;
		ret = plan_split(&w, err);
		if (ret)
			goto out;
	}
	if (!w.nr)
		goto out;
	if (w.nr >= CG_MAX_COMMITS || (uint64_t)w.base_commits + w.nr >= CG_MAX_COMMITS) {
		ret = gp_error_set(err, GP_EINVAL, "too many commits to write graph");
		goto out;
	}
	/* Index the entries in sorted order, then resolve parents. */
	qsort(w.commits, w.nr, sizeof(*w.commits), cmp_wcommit);
	ret = resolve(&w, err);
	if (ret)
		goto out;

	/* As git: GDA2 when the layer below the new one has it. */
	gda2 = !opts->no_generation_data &&
	       !(w.keep_layers && !w.old->layers[w.keep_layers - 1].gda2);
	chunk_writer_add(&chunks, CG_CHUNK_OIDF, 256 * 4, write_oidf);
	chunk_writer_add(&chunks, CG_CHUNK_OIDL, (uint64_t)w.nr * w.rawsz, write_oidl);
	chunk_writer_add(&chunks, CG_CHUNK_CDAT, (uint64_t)w.nr * (w.rawsz + 16), write_cdat);
	if (gda2) {
		chunk_writer_add(&chunks, CG_CHUNK_GDA2, (uint64_t)w.nr * 4, write_gda2);
		if (w.nr_overflow)
			chunk_writer_add(&chunks, CG_CHUNK_GDO2, (uint64_t)w.nr_overflow * 8, write_gdo2);
	}
	if (w.nr_edges)
		chunk_writer_add(&chunks, CG_CHUNK_EDGE, (uint64_t)w.nr_edges * 4, write_edge);
	/*
	 * As git: filters when asked, or when the graph read has them
	 * (its top layer) and not told otherwise; their version is the
	 * configured one, or the graph's when that is -1, and 1 unless 2.
	 */
	{
		const struct cg_layer *top = w.old && opts->changed_paths_version
						     ? &w.old->layers[w.old->nr_layers - 1] : NULL;
		bool has = top && top->bdat;
		if (opts->changed_paths == COMMIT_GRAPH_BLOOM_WRITE ||
		    (opts->changed_paths == COMMIT_GRAPH_BLOOM_KEEP && has)) {
			int v = opts->changed_paths_version;
			w.bloom = opts->bloom;
			if (has) {
				if (v == -1)
					v = (int)top->bloom_version;
				w.bloom.num_hashes = top->bloom_num_hashes;
				w.bloom.bits_per_entry = top->bloom_bits_per_entry;
				w.bloom.max_changed_paths = BLOOM_MAX_CHANGED_PATHS;
			}
			w.bloom_version = v == 2 ? 2 : 1;
			w.bloom.hash_version = (uint32_t)w.bloom_version;
		}
	}
	if (w.bloom_version) {
		char json[160];
		snprintf(json, sizeof(json),
			 "{\"hash_version\":%u,\"num_hashes\":%u,\"bits_per_entry\":%u,"
			 "\"max_changed_paths\":%u}",
			 w.bloom.hash_version, w.bloom.num_hashes, w.bloom.bits_per_entry,
			 w.bloom.max_changed_paths);
		trace2_data_json("bloom", "settings", json);
		ret = compute_filters(&w, gda2, err);
		if (ret)
			goto out;
		chunk_writer_add(&chunks, CG_CHUNK_BIDX, (uint64_t)w.nr * 4, write_bidx);
		chunk_writer_add(&chunks, CG_CHUNK_BDAT, 12 + w.filter_bytes, write_bdat);
	}
	if (w.keep_layers)
		chunk_writer_add(&chunks, CG_CHUNK_BASE, (uint64_t)w.keep_layers * w.rawsz, write_base);

	if (split) {
		char *dir = xstrfmt("%s/" CG_CHAIN_DIR, objdir);
		if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			ret = gp_error_errno(err, "unable to create '%s'", dir);
		path = xstrfmt("%s/graph", dir);
		free(dir);
		if (!ret)
			ret = hashfile_create(&f, path, algo, err);
	} else {
		path = xstrfmt("%s/" CG_FILE, objdir);
		ret = hashfile_create_locked(&f, path, algo, err);
	}
	if (ret)
		goto out;
	{
		unsigned char head[CG_HEADER_SIZE];
		put_be32(head, CG_SIGNATURE);
		head[4] = CG_VERSION;
		head[5] = (unsigned char)gp_hash_algos[algo].id;
		head[6] = (unsigned char)chunks.nr;
		head[7] = (unsigned char)w.keep_layers;
		hashfile_write(f, head, sizeof(head));
	}
	chunk_writer_write(&chunks, f, &w);
	ret = install(&w, objdir, f, err);
	f = NULL;
	if (ret)
		goto out;
	result->written = true;
	result->nr_commits = (uint32_t)w.nr;
out:
	hashfile_abort(f);
	chunk_writer_release(&chunks);
	commit_graph_free(w.old);
	free(path);
	free(w.commits);
	free(w.parents);
	free(w.parent_pos);
	free(w.table);
	free(w.stack);
	for (size_t i = 0; w.filters && i < w.nr; i++)
		bloom_filter_release(&w.filters[i]);
	free(w.filters);
	return ret;
}
