/*
 * serve.h: gitpack serve, a Git server for smart HTTP (gitprotocol-http)
 * and git:// (gitprotocol-pack "Git Transport"), answering fetches with
 * upload-pack in this process (upload-pack.h).
 *
 * One thread runs the connections: it accepts, reads each request's
 * head and body under time and size bounds (server/http.h, server/body.h)
 * and keeps idle keep-alive connections, which cost a descriptor and a
 * small struct each. A complete request goes to a queue that a fixed
 * pool of worker threads takes from; a worker answers it (blocking
 * writes under a send timeout) and gives a keep-alive connection back.
 * A git:// session keeps its worker for the whole session, its reads
 * bounded by the idle timeout.
 *
 * Repositories are found under the base path as git daemon finds them
 * (the ".git" suffix optional, git-daemon-export-ok unless export_all);
 * a path that leaves the base path, by its spelling, a symbolic link
 * or a gitfile, is not found. Not found and not exported look the same.
 *
 * serve_run() serves until SIGTERM or SIGINT: it then stops accepting,
 * closes idle connections, lets the requests in flight finish, and
 * returns 0.
 */
#ifndef GP_SERVER_SERVE_H
#define GP_SERVER_SERVE_H

#include "../upload-pack.h"

struct gp_error;
struct serve_metrics;
struct pack_cache;
struct serve_auth;
struct serve_tls;

struct serve_options {
	const char *base_path;              /* directory the repositories are under */
	bool export_all;                    /* no git-daemon-export-ok needed */
	const char *const *http_addrs;      /* "host:port" ("[v6]:port"); port 0: any */
	size_t nr_http;
	const char *const *git_addrs;
	size_t nr_git;
	const char *const *https_addrs;     /* smart HTTP over TLS, with tls */
	size_t nr_https;
	struct serve_tls *tls;              /* certificate and key (tls.h) */
	int workers;                        /* request threads */
	int max_connections;                /* open at once; more are closed at accept */
	int max_queue;                      /* requests waiting for a worker; more: 429 */
	int queue_timeout_ms;               /* longest wait in the queue; then 429 */
	int header_timeout_ms;              /* a request's head, from its first byte */
	int body_timeout_ms;                /* silence while a body is read */
	int idle_timeout_ms;                /* between requests of a keep-alive connection */
	int io_timeout_s;                   /* silence of a peer during an answer */
	uint64_t max_body;                  /* decoded request body (413 past it) */
	uint64_t max_bodies;                /* bodies held, all connections (429 past it) */
	/*
	 * Pack generations at once per repository and per client address
	 * (0: no limit); past them a generation waits, at most gen_queue
	 * waiting for at most gen_queue_timeout_ms, then the request gets
	 * 429 (an ERR packet over git://). Cache hits are not limited.
	 */
	int max_generations_per_repo;
	int max_generations_per_client;
	int gen_queue;
	int gen_queue_timeout_ms;
	const char *agent;                  /* the agent= capability */
	/* Where "listening on <url>" lines go once bound (NULL: nowhere). */
	FILE *listen_report;
	int log_fd;                         /* one access-log line a request; -1: none */
	/* Counters for /metrics, shared with the pack hook; NULL: serve keeps its own. */
	struct serve_metrics *metrics;
	/*
	 * Services run by stock Git ("git" in PATH, started with
	 * posix_spawn): pushes (repository config serve.write over HTTP,
	 * daemon.receivePack over git://) and git archive --remote.
	 */
	bool enable_receive_pack;
	bool enable_upload_archive;
	/* HTTP Basic authentication (auth.h); NULL: every request is anonymous. */
	struct serve_auth *auth;
	/* The cache of pack streams (pack-cache.h); NULL: every pack is generated. */
	struct pack_cache *cache;
};

#define SERVE_OPTIONS_INIT { \
	.workers = 16, .max_connections = 4096, .max_queue = 256, \
	.queue_timeout_ms = 30000, .header_timeout_ms = 10000, \
	.body_timeout_ms = 30000, .idle_timeout_ms = 60000, .io_timeout_s = 120, \
	.max_body = 64u << 20, .max_bodies = 1024u << 20, .log_fd = -1, \
	.gen_queue = 100, .gen_queue_timeout_ms = 30000, \
}

/*
 * Bind every address, then serve until SIGTERM/SIGINT. Errors: GP_EIO
 * (an address cannot be bound: the message names it), GP_EINVAL (an
 * address that does not parse, no address at all).
 */
int serve_run(const struct serve_options *opts, struct gp_error *err);

#endif
