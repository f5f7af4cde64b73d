/*
 * metrics.c: see metrics.h.
 */
#include "metrics.h"
#include "../strbuf.h"
#include "../util.h"
#include <pthread.h>

#define MAX_SERIES 64

static const double bucket_le[SERVE_METRICS_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60, 300,
};

static const char *const cache_result_name[SERVE_CACHE_NR] = {
	"hit", "follow", "miss", "bypass",
};

struct histogram {
	uint64_t buckets[SERVE_METRICS_BUCKETS];
	uint64_t count;
	double sum;
};

struct series {
	const char *service; /* a static string */
	int status;
	uint64_t count;
};

struct serve_metrics {
	pthread_mutex_t lock;
	struct series requests[MAX_SERIES];
	size_t nr_requests;
	uint64_t requests_other; /* past MAX_SERIES: not expected, but bounded */
	struct histogram request_seconds, generation_seconds;
	uint64_t bytes_sent, queue_length;
	int64_t connections;
	uint64_t cache[SERVE_CACHE_NR];
	uint64_t generations_in_flight, generations_failed;
	uint64_t generated_bytes, cache_served_bytes;
	uint64_t cache_bytes, cache_entries, cache_evictions;
};

struct serve_metrics *serve_metrics_new(void)
{
	struct serve_metrics *m = xcalloc(1, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void serve_metrics_free(struct serve_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static void observe(struct histogram *h, double v)
{
	for (size_t i = 0; i < SERVE_METRICS_BUCKETS; i++)
		if (v <= bucket_le[i])
			h->buckets[i]++;
	h->count++;
	h->sum += v;
}

void serve_metrics_request(struct serve_metrics *m, const char *service, int status)
{
	size_t i;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->nr_requests; i++)
		if (m->requests[i].status == status && !strcmp(m->requests[i].service, service))
			break;
	if (i == m->nr_requests && i < MAX_SERIES) {
		m->requests[i].service = service;
		m->requests[i].status = status;
		m->nr_requests++;
	}
	if (i < MAX_SERIES)
		m->requests[i].count++;
	else
		m->requests_other++;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_request_seconds(struct serve_metrics *m, double seconds)
{
	pthread_mutex_lock(&m->lock);
	observe(&m->request_seconds, seconds);
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_bytes(struct serve_metrics *m, uint64_t bytes)
{
	pthread_mutex_lock(&m->lock);
	m->bytes_sent += bytes;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_queue(struct serve_metrics *m, uint64_t length)
{
	pthread_mutex_lock(&m->lock);
	m->queue_length = length;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_connections(struct serve_metrics *m, int64_t open)
{
	pthread_mutex_lock(&m->lock);
	m->connections = open;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_cache(struct serve_metrics *m, enum serve_cache_result result)
{
	pthread_mutex_lock(&m->lock);
	m->cache[result]++;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_generation_start(struct serve_metrics *m)
{
	pthread_mutex_lock(&m->lock);
	m->generations_in_flight++;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_generation_end(struct serve_metrics *m, double seconds, uint64_t bytes,
				  int failed)
{
	pthread_mutex_lock(&m->lock);
	m->generations_in_flight--;
	observe(&m->generation_seconds, seconds);
	m->generated_bytes += bytes;
	if (failed)
		m->generations_failed++;
	pthread_mutex_unlock(&m->lock);
}

void serve_metrics_cache_state(struct serve_metrics *m, uint64_t bytes, uint64_t entries,
			       uint64_t served_bytes, uint64_t evictions)
{
	pthread_mutex_lock(&m->lock);
	m->cache_bytes = bytes;
	m->cache_entries = entries;
	m->cache_served_bytes = served_bytes;
	m->cache_evictions = evictions;
	pthread_mutex_unlock(&m->lock);
}

static void add_header(struct strbuf *out, const char *name, const char *type, const char *help)
{
	strbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void add_scalar(struct strbuf *out, const char *name, const char *type, const char *help,
		       uint64_t value)
{
	add_header(out, name, type, help);
	strbuf_addf(out, "%s %" PRIu64 "\n", name, value);
}

static void add_histogram(struct strbuf *out, const char *name, const char *help,
			  const struct histogram *h)
{
	add_header(out, name, "histogram", help);
	for (size_t i = 0; i < SERVE_METRICS_BUCKETS; i++)
		strbuf_addf(out, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, bucket_le[i],
			    h->buckets[i]);
	strbuf_addf(out, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, h->count);
	strbuf_addf(out, "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->sum, name, h->count);
}

void serve_metrics_format(struct serve_metrics *m, struct strbuf *out)
{
	pthread_mutex_lock(&m->lock);
	add_header(out, "gitpack_serve_requests_total", "counter",
		   "Requests answered, by service and HTTP status (git:// as 200, 400, 403, 429, 500).");
	for (size_t i = 0; i < m->nr_requests; i++)
		strbuf_addf(out, "gitpack_serve_requests_total{service=\"%s\",status=\"%d\"} %" PRIu64 "\n",
			    m->requests[i].service, m->requests[i].status, m->requests[i].count);
	if (m->requests_other)
		strbuf_addf(out, "gitpack_serve_requests_total{service=\"other\",status=\"0\"} %" PRIu64 "\n",
			    m->requests_other);
	add_histogram(out, "gitpack_serve_request_duration_seconds",
		      "Time from a request's first byte to the end of its answer.",
		      &m->request_seconds);
	add_scalar(out, "gitpack_serve_response_bytes_total", "counter",
		   "Response bytes written to clients.", m->bytes_sent);
	add_scalar(out, "gitpack_serve_queue_length", "gauge",
		   "Requests waiting for a worker.", m->queue_length);
	add_scalar(out, "gitpack_serve_connections", "gauge", "Open client connections.",
		   (uint64_t)(m->connections > 0 ? m->connections : 0));
	add_header(out, "gitpack_serve_cache_lookups_total", "counter",
		   "Pack cache lookups, by result.");
	for (size_t i = 0; i < SERVE_CACHE_NR; i++)
		strbuf_addf(out, "gitpack_serve_cache_lookups_total{result=\"%s\"} %" PRIu64 "\n",
			    cache_result_name[i], m->cache[i]);
	add_scalar(out, "gitpack_serve_generations_in_flight", "gauge",
		   "Pack streams being generated.", m->generations_in_flight);
	add_scalar(out, "gitpack_serve_generations_failed_total", "counter",
		   "Pack generations that failed.", m->generations_failed);
	add_histogram(out, "gitpack_serve_generation_duration_seconds",
		      "Time to generate one pack stream.", &m->generation_seconds);
	add_scalar(out, "gitpack_serve_generated_bytes_total", "counter",
		   "Pack stream bytes generated.", m->generated_bytes);
	add_scalar(out, "gitpack_serve_cache_served_bytes_total", "counter",
		   "Pack stream bytes sent from the cache.", m->cache_served_bytes);
	add_scalar(out, "gitpack_serve_cache_bytes", "gauge", "Bytes held by the pack cache.",
		   m->cache_bytes);
	add_scalar(out, "gitpack_serve_cache_entries", "gauge", "Entries in the pack cache.",
		   m->cache_entries);
	add_scalar(out, "gitpack_serve_cache_evictions_total", "counter",
		   "Pack cache entries evicted to stay under the size cap.", m->cache_evictions);
	pthread_mutex_unlock(&m->lock);
}
