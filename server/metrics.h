/*
 * metrics.h: what gitpack serve counts, and its Prometheus text
 * exposition (format 0.0.4) for GET /metrics.
 *
 * Every update is a short critical section under one mutex: the
 * counters are touched a few times a request, never per byte.
 */
#ifndef GP_SERVER_METRICS_H
#define GP_SERVER_METRICS_H

#include <stdint.h>

struct serve_metrics;
struct strbuf;

/* Durations in seconds, in histogram buckets from 5 ms to 5 minutes. */
#define SERVE_METRICS_BUCKETS 12

enum serve_cache_result {
	SERVE_CACHE_HIT,        /* a finished entry, streamed */
	SERVE_CACHE_FOLLOW,     /* an entry being written, followed */
	SERVE_CACHE_MISS,       /* generated, and kept for later requests */
	SERVE_CACHE_BYPASS,     /* generated, not kept (first occurrence, full disk) */
	SERVE_CACHE_NR,
};

struct serve_metrics *serve_metrics_new(void);
void serve_metrics_free(struct serve_metrics *m);

/* One answered request of service ("upload-pack", "info-refs", "git", "metrics", "http"). */
void serve_metrics_request(struct serve_metrics *m, const char *service, int status);
void serve_metrics_request_seconds(struct serve_metrics *m, double seconds);
/* Response bytes written to clients. */
void serve_metrics_bytes(struct serve_metrics *m, uint64_t bytes);
void serve_metrics_queue(struct serve_metrics *m, uint64_t length);
void serve_metrics_connections(struct serve_metrics *m, int64_t open);
/* The pack cache: a lookup's result; a generation's start, end and size. */
void serve_metrics_cache(struct serve_metrics *m, enum serve_cache_result result);
void serve_metrics_generation_start(struct serve_metrics *m);
void serve_metrics_generation_end(struct serve_metrics *m, double seconds, uint64_t bytes,
				  int failed);
/* The cache's own figures: held now, stream bytes sent from it, evictions so far. */
void serve_metrics_cache_state(struct serve_metrics *m, uint64_t bytes, uint64_t entries,
			       uint64_t served_bytes, uint64_t evictions);

/* Append the exposition of every metric to out. */
void serve_metrics_format(struct serve_metrics *m, struct strbuf *out);

#endif
