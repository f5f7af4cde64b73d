/*
 * pack-cache.h: a cache of generated pack streams, so that identical
 * fetches (20 CI jobs cloning one commit) cost one pack generation.
 *
 * An entry is the whole pack stream of one request as upload-pack sends
 * it (upload-pack.h "pack hook": side-band framed pack data, progress,
 * the closing flush), stored in a file of the cache directory under the
 * hex of its key. The key is a SHA-256 of the repository's identity (its
 * common directory, resolved), the state of its object store (the files
 * of objects/pack and objects/info/alternates: names, sizes, mtimes) and
 * upload-pack's description of the request. Nothing user-specific.
 *
 * One generation per key: the first request writes the entry while it
 * sends it; identical requests that come meanwhile follow the writer and
 * send what is written as it is written; later ones send the finished
 * file (sendfile() through the client's send_file). A generation goes on
 * when the client that started it goes away, as long as a follower
 * remains; a failed generation is never served again, and followers
 * that have sent nothing yet generate the pack themselves. When the
 * file fails mid-way (the disk fills), followers get the rest from
 * memory and the entry is not kept.
 *
 * Policy: an entry is kept for later requests only once its key has been
 * asked for min_occurrences times within max_age (the default 2: a
 * one-off fetch leaves nothing behind); entries expire after max_age; the
 * files are held under max_bytes, evicting the least recently used. A
 * cache that cannot write (full disk, an unwritable directory) serves
 * without caching: a fetch never fails for the cache's sake.
 *
 * Files: "<hex>.stream" complete entries, a 32-byte header ("gitpack
 * pack stream\n" padded, then the stream's length, big-endian) before
 * the stream; "tmp-*" being written, removed at open. A restarted
 * server keeps the complete entries whose size matches their header.
 *
 * Thread-safe: one cache serves every worker thread of a process.
 */
#ifndef GP_PACK_CACHE_H
#define GP_PACK_CACHE_H

#include "upload-pack.h"

struct gp_error;
struct pack_cache;
struct repository;

struct pack_cache_options {
	const char *dir;
	uint64_t max_bytes;        /* the files' total; 0: no cap */
	unsigned min_occurrences;  /* keep an entry from this occurrence on */
	unsigned max_age_s;        /* an entry's life, and the occurrences' memory */
	unsigned max_keys;         /* occurrence records kept (bounded memory) */
};

#define PACK_CACHE_OPTIONS_INIT { \
	.max_bytes = 10ull << 30, .min_occurrences = 2, .max_age_s = 300, .max_keys = 65536, \
}

/*
 * Open (creating) the directory, remove unfinished files, and take up
 * the complete entries younger than max_age. Errors: GP_EIO when the
 * directory cannot be made or read.
 */
int pack_cache_open(struct pack_cache **out, const struct pack_cache_options *opts,
		    struct gp_error *err);
void pack_cache_free(struct pack_cache *cache);

/*
 * The client a stream goes to. out takes the bytes of a generation as
 * they are made; send_file sends len bytes of fd from offset (the
 * client's framing around them; sendfile() where it can). Both return
 * 0 or a GP_E* code with a message.
 */
struct pack_cache_client {
	struct pkt_sink *out;
	int (*send_file)(struct pack_cache_client *client, int fd, uint64_t offset, size_t len,
			 struct gp_error *err);
	void *data;
};

/* What pack_cache_send() did, for the log and the metrics. */
enum pack_cache_result {
	PACK_CACHE_HIT,     /* a finished entry was sent */
	PACK_CACHE_FOLLOW,  /* an entry being written was followed */
	PACK_CACHE_MISS,    /* generated here, and kept */
	PACK_CACHE_BYPASS,  /* generated here, not kept (policy, or the cache failed) */
};

/*
 * Send the pack stream for key (upload-pack's description) of repo to
 * client: from the cache, or made by generate(gen_data, ...) as the
 * upload-pack hook hands it. *result says which. Errors: generate's, or
 * the client's (GP_EIO when it went away).
 */
int pack_cache_send(struct pack_cache *cache, struct repository *repo, const char *key,
		    size_t key_len, upload_pack_generate_fn *generate, void *gen_data,
		    struct pack_cache_client *client, enum pack_cache_result *result,
		    struct gp_error *err);

/*
 * The cache's key of a request (32 bytes): repository, store state and
 * the caller's description, as above. The hook mode keys its own files
 * with it.
 */
void pack_cache_key(const struct repository *repo, const char *key, size_t key_len,
		    unsigned char *out);

struct pack_cache_stats {
	uint64_t lookups[4];        /* by enum pack_cache_result */
	uint64_t generations, generations_failed, generations_in_flight;
	uint64_t generated_bytes;   /* stream bytes generated, kept or not */
	uint64_t served_bytes;      /* stream bytes sent from entries (hits, followers) */
	uint64_t bytes, entries;    /* held now */
	uint64_t evictions;
	double generation_seconds_sum;
};

void pack_cache_stats(struct pack_cache *cache, struct pack_cache_stats *out);

#endif
