/*
 * serve.c: see serve.h. The connection thread (loop_*), the workers
 * (worker_*), and what a worker answers (http_*, git_*).
 */
#include "serve.h"
#include "auth.h"
#include "body.h"
#include "git-request.h"
#include "http.h"
#include "metrics.h"
#include "tls.h"
#include "../commit-graph.h"
#include "../error.h"
#include "../odb.h"
#include "../config.h"
#include "../pack-cache.h"
#include "../pkt-line.h"
#include "../repository.h"
#include "../strbuf.h"
#include "../upload-pack.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <spawn.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTENERS 16
/* A git:// request is one pkt-line: "git-upload-pack /path\0host=h\0\0version=2\0". */
#define GIT_REQUEST_MAX LARGE_PACKET_MAX
/* Bytes a connection keeps between requests (a pipelined next request, say). */
#define CONN_IN_MAX (HTTP_HEAD_MAX + 65536)

enum conn_kind { CONN_HTTP, CONN_GIT, CONN_HTTPS /* listeners only: its connections are CONN_HTTP with ssl */ };

enum conn_state {
	ST_HEAD,       /* reading an HTTP head (or idle between requests) */
	ST_BODY,       /* reading its body */
	ST_GIT,        /* reading a git:// request line */
	ST_WORKER,     /* a worker's (queued or answering) */
	ST_LINGER,     /* answered and shut for writing: reading what the peer still sends */
};

/*
 * How long a closing connection is drained. Closing a socket with unread
 * bytes makes the kernel send a reset, and a reset can overtake the
 * answer still in the peer's receive queue: a client that wrote ahead
 * (git archive --remote sends its arguments before it reads, a POST
 * refused with 413 goes on sending) would see "connection reset" instead
 * of the ERR or status it was sent. So the loop shuts the socket for
 * writing and reads until the peer closes, or this long.
 */
#define LINGER_MS 2000

struct conn {
	int fd;
	struct ssl_st *ssl;        /* an https connection's TLS session */
	enum conn_kind kind;
	enum conn_state state;
	char peer[INET6_ADDRSTRLEN + 8];  /* address and port, for the log */
	char addr[INET6_ADDRSTRLEN + 8];  /* address only: a client for the limits */
	char *in;                  /* received, not yet consumed */
	size_t in_len, in_alloc;
	size_t head_scanned;       /* bytes of in searched for the head's end */
	uint64_t deadline_ns;      /* of what the state waits for */
	uint64_t start_ns;         /* the request's first byte */
	uint64_t queued_ns;
	struct http_request *req;  /* the parsed head, from ST_BODY on */
	struct http_body body;
	bool body_active;
	size_t body_charged;       /* bytes of body counted in the server's bodies_held */
	bool keep;                 /* a worker's verdict: back to the loop */
	char user[SERVE_AUTH_USER_MAX + 1]; /* who the request authenticated as, or "" */
	unsigned nr_requests;
	struct conn *next;         /* in the queue or the returned list */
	struct conn *prev_all, *next_all; /* the loop's connections */
};

struct server {
	const struct serve_options *opts;
	char *base_real;           /* realpath of the base path */
	size_t base_len;
	int epfd, sigfd, wakefd;
	/*
	 * A descriptor held in reserve: out of descriptors (EMFILE), the
	 * loop closes it to accept one pending connection and close that,
	 * so that excess clients are refused at once rather than left in
	 * the backlog, and a listener still readable does not spin the loop.
	 */
	int spare_fd;
	bool listeners_paused;     /* out of descriptors and no spare: until the next tick */
	int listen_fd[MAX_LISTENERS];
	enum conn_kind listen_kind[MAX_LISTENERS];
	size_t nr_listen;
	bool stopping;
	/*
	 * Bytes allocated for request bodies, all connections: each is
	 * bounded by --max-body-mb, their sum by --max-bodies-mb. Charged
	 * by the loop as a body grows, given back by whoever releases it.
	 */
	uint64_t bodies_held;
	/* the loop's own */
	struct conn *all;
	struct http_request scratch;
	char rbuf[65536];
	/* shared with the workers, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct conn *queue_head, *queue_tail;
	size_t queue_len;
	struct conn *returned;
	size_t busy;               /* connections a worker holds */
	int nr_conns;              /* open, every state */
	pthread_t *threads;
	size_t nr_threads;
	struct serve_metrics *metrics, *own_metrics;
	/* object stores kept open between requests, under lock */
	struct pooled_odb *pool;
	size_t pool_len;
	/* the generation limits, under lock */
	struct gen_count *gen_counts;
	size_t gen_waiting;
	pthread_cond_t gen_cond;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ms_ns(int ms)
{
	return (uint64_t)ms * 1000000ull;
}

/* ---- access log ----------------------------------------------------------- */

static void log_request(struct server *srv, const struct conn *c, const char *what,
			int status, uint64_t bytes, const char *note)
{
	char when[64], line[2048];
	struct tm tm;
	time_t t = time(NULL);
	double ms = (double)(now_ns() - c->start_ns) / 1e6;
	int n;

	serve_metrics_request_seconds(srv->metrics, ms / 1e3);
	if (srv->opts->log_fd < 0)
		return;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s %s \"%s\" %d %" PRIu64 " %.1fms \"%s\"%s%s\n",
		     when, c->peer, c->user[0] ? c->user : "-", what, status, bytes, ms,
		     c->req ? c->req->user_agent : "", note ? " " : "", note ? note : "");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* one write a line: lines of concurrent requests do not interleave */
	if (write(srv->opts->log_fd, line, (size_t)n) < 0)
		return;
}

/* ---- sockets ------------------------------------------------------------------ */

static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Bytes to the client, through TLS when the connection has it. */
static int conn_send(struct conn *c, const void *buf, size_t len)
{
	if (c->ssl)
		return serve_tls_write(c->ssl, buf, len);
	return send_all(c->fd, buf, len);
}

static void set_nonblocking(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK));
}

static void set_io_timeout(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* "host:port", "[v6]:port", ":port" or "port"; names other than localhost are not looked up. */
static int parse_address(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
			 struct gp_error *err)
{
	char host[INET6_ADDRSTRLEN + 1] = "";
	const char *colon, *port_str;
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
			goto bad;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		port_str = close + 2;
	} else if ((colon = strrchr(spec, ':'))) {
		if ((size_t)(colon - spec) >= sizeof(host))
			goto bad;
		memcpy(host, spec, (size_t)(colon - spec));
		port_str = colon + 1;
	} else {
		port_str = spec;
	}
	errno = 0;
	port = strtol(port_str, &end, 10);
	if (!*port_str || *end || errno || port < 0 || port > 65535)
		goto bad;
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			goto bad;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (!*host || !strcmp(host, "*"))
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			goto bad;
		*len = sizeof(*s4);
	}
	return 0;
bad:
	return gp_error_set(err, GP_EINVAL, "bad listen address '%s' (want host:port)", spec);
}

static void format_address(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		snprintf(buf, size, "[%s]:%u", host, port);
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		snprintf(buf, size, "%s:%u", host, port);
	}
}

static void format_host(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr, buf,
			  (socklen_t)size);
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, buf,
			  (socklen_t)size);
}

static int listen_on(struct server *srv, const char *spec, enum conn_kind kind,
		     struct gp_error *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, ret;
	char where[INET6_ADDRSTRLEN + 16];

	if (srv->nr_listen == MAX_LISTENERS)
		return gp_error_set(err, GP_EINVAL, "more than %d listen addresses", MAX_LISTENERS);
	if ((ret = parse_address(spec, &ss, &len, err)))
		return ret;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gp_error_errno(err, "socket for '%s'", spec);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1024)) {
		ret = gp_error_errno(err, "cannot listen on '%s'", spec);
		close(fd);
		return ret;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	format_address(&ss, where, sizeof(where));
	if (srv->opts->listen_report) {
		fprintf(srv->opts->listen_report, "gitpack serve: listening on %s://%s/\n",
			kind == CONN_HTTP ? "http" : kind == CONN_HTTPS ? "https" : "git", where);
		fflush(srv->opts->listen_report);
	}
	srv->listen_fd[srv->nr_listen] = fd;
	srv->listen_kind[srv->nr_listen] = kind;
	srv->nr_listen++;
	return 0;
}

/* ---- repositories -------------------------------------------------------------- */

/* Whether path (resolved) lies strictly under the base path. */
static bool under_base(const struct server *srv, const char *path)
{
	char *real = realpath(path, NULL);
	bool ok = real && !strncmp(real, srv->base_real, srv->base_len) &&
		  real[srv->base_len] == '/';
	free(real);
	return ok;
}

/*
 * The repository rel names under the base path, as git daemon finds it
 * (enter_repo's spellings: rel/.git, rel, rel.git/.git, rel.git), and
 * only if it is exported. NULL for anything else, with no difference a
 * client could see between "absent" and "not exported".
 */
static struct repository *find_repo(struct server *srv, const char *rel)
{
	static const char *const suffixes[] = { "/.git", "", ".git/.git", ".git" };
	struct repository *repo = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		struct gp_error err = GP_ERROR_INIT;
		char *path = xstrfmt("%s/%s%s", srv->base_real, rel, suffixes[i]);
		struct stat st;
		bool found = !stat(path, &st) && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) &&
			     under_base(srv, path) && !repo_open_gitdir(&repo, path, &err);
		gp_error_clear(&err);
		free(path);
		if (found)
			break;
		repo = NULL;
	}
	if (!repo)
		return NULL;
	/* a gitfile or commondir may point anywhere: the directories must stay inside */
	if (!under_base(srv, repo->gitdir) || !under_base(srv, repo->commondir))
		goto refuse;
	if (!srv->opts->export_all) {
		char *ok = xstrfmt("%s/git-daemon-export-ok", repo->gitdir);
		bool exported = !access(ok, F_OK);
		free(ok);
		if (!exported)
			goto refuse;
	}
	return repo;
refuse:
	repo_free(repo);
	return NULL;
}

/*
 * Whether user (NULL: nobody authenticated) may read repo: its config's
 * serve.read entries name the users ("*": every authenticated one); a
 * repository without any is public.
 */
static bool may_read(const struct repository *repo, const char *user)
{
	bool listed = false;
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		if (strcmp(e->key, "serve.read") || !e->value)
			continue;
		listed = true;
		if (user && (!strcmp(e->value, "*") || !strcmp(e->value, user)))
			return true;
	}
	return !listed;
}

/* ---- services stock Git runs: receive-pack, upload-archive ------------------------ */

static bool service_enabled(const struct server *srv, enum http_service service)
{
	switch (service) {
	case HTTP_SERVICE_UPLOAD_PACK:
		return true;
	case HTTP_SERVICE_RECEIVE_PACK:
		return srv->opts->enable_receive_pack;
	case HTTP_SERVICE_UPLOAD_ARCHIVE:
		return srv->opts->enable_upload_archive;
	default:
		return false;
	}
}

/*
 * Whether user may push to repo: its serve.write entries name the users
 * ("*": every authenticated one). Nobody is listed: nobody pushes.
 */
static bool may_write(const struct repository *repo, const char *user)
{
	if (!user)
		return false;
	for (size_t i = 0; i < repo->config.nr; i++) {
		const struct config_entry *e = &repo->config.items[i];
		if (!strcmp(e->key, "serve.write") && e->value &&
		    (!strcmp(e->value, "*") || !strcmp(e->value, user)))
			return true;
	}
	return false;
}

extern char **environ;

/*
 * Run "git <service> [<mode>] <gitdir>" in the git directory, with
 * posix_spawn (never fork: this process may hold gigabytes of mappings),
 * its standard input on in_fd, its output on out_fd (or, with out_fd
 * -1, through a pipe into out_sink), its errors on ours, GIT_PROTOCOL
 * set as the client asked; wait for it.
 */
static int spawn_git_service(struct server *srv, struct repository *repo,
			     enum http_service service, const char *mode, const char *protocol,
			     int in_fd, int out_fd, struct pkt_sink *out_sink, int *code,
			     struct gp_error *err)
{
	int pipefd[2] = { -1, -1 };
	const char *argv[5];
	size_t n = 0, nenv = 0;
	char **env;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, ret;

	(void)srv;
	argv[n++] = "git";
	argv[n++] = service == HTTP_SERVICE_RECEIVE_PACK ? "receive-pack" : "upload-archive";
	if (mode)
		argv[n++] = mode;
	argv[n++] = repo->gitdir;
	argv[n] = NULL;
	while (environ[nenv])
		nenv++;
	env = xcalloc(nenv + 2, sizeof(*env));
	n = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "GIT_PROTOCOL=", 13))
			env[n++] = environ[i];
	if (protocol && *protocol)
		env[n++] = xstrfmt("GIT_PROTOCOL=%s", protocol);
	if (out_fd < 0) {
		if (pipe2(pipefd, O_CLOEXEC)) {
			free(env);
			return gp_error_errno(err, "pipe");
		}
		out_fd = pipefd[1];
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_addchdir_np(&fa, repo->gitdir);
	ret = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (protocol && *protocol)
		free(env[n - 1]);
	free(env);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (ret) {
		if (pipefd[0] >= 0)
			close(pipefd[0]);
		errno = ret;
		return gp_error_errno(err, "cannot run git %s", argv[1]);
	}
	if (pipefd[0] >= 0) {
		/* the child's answer to the client as it comes; a gone client only drains */
		char buf[65536];
		bool failed = false;
		ssize_t got;
		while ((got = read(pipefd[0], buf, sizeof(buf))) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				break;
			if (!failed && out_sink->write(out_sink, buf, (size_t)got, NULL))
				failed = true;
		}
		close(pipefd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return gp_error_errno(err, "waiting for git %s", argv[1]);
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (*code)
		return gp_error_set(err, GP_EIO, "git %s exited with %d", argv[1], *code);
	return 0;
}

/* ---- object stores kept open ------------------------------------------------------ */

/*
 * One store, many requests: an odb a request opened (its indexes,
 * multi-pack-index and bitmaps mapped and checked) goes back to a pool
 * when the request ends, and the next request for the same object
 * directory takes it instead of opening again. An odb is stamped with
 * the pack directory's mtime when its request began: a pack added or
 * removed, a MIDX replaced (all renames in that directory) changes it,
 * and a stale odb is freed rather than reused. Each odb serves one
 * request at a time (it owns its reader); the pool holds at most as many
 * as there are workers, and they hold no delta bases while they wait.
 *
 * The repository's commit-graph (repo_commit_graph()) travels with the
 * odb, but has its own test of freshness: a new pack does not make it
 * stale (an entry may hold a graph and no odb), and repo_commit_graph()
 * opens the graph again when maintenance replaced the lone file or the
 * chain file (commit_graph_is_current()), when a request starts.
 */
struct pooled_odb {
	char *objdir;
	struct timespec stamp;
	struct odb *odb;                /* NULL: only the graph is kept */
	struct commit_graph *graph;     /* NULL: none kept */
	struct pooled_odb *next;
};

static void pooled_free(struct pooled_odb *p)
{
	odb_free(p->odb);
	commit_graph_free(p->graph);
	free(p->objdir);
	free(p);
}

static struct timespec pack_dir_stamp(const struct repository *repo)
{
	struct stat st;
	char *path = xstrfmt("%s/pack", repo->objdir);
	struct timespec none = { 0 };
	int ret = stat(path, &st);
	free(path);
	return ret ? none : st.st_mtim;
}

static bool same_stamp(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec && (a.tv_sec || a.tv_nsec);
}

/*
 * Give repo a pooled odb of its object directory, if one is fresh, and
 * a pooled graph of it, if there is one.
 */
static void pool_take(struct server *srv, struct repository *repo, struct timespec stamp)
{
	struct pooled_odb **pp, *found = NULL, *stale = NULL;
	struct commit_graph *graph = NULL;

	pthread_mutex_lock(&srv->lock);
	for (pp = &srv->pool; *pp;) {
		struct pooled_odb *p = *pp;
		if (strcmp(p->objdir, repo->objdir)) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		srv->pool_len--;
		if (!graph && p->graph) {
			graph = p->graph;
			p->graph = NULL;
		}
		if (!found && p->odb && same_stamp(p->stamp, stamp)) {
			found = p;
		} else {
			p->next = stale;
			stale = p;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	while (stale) {
		struct pooled_odb *p = stale;
		stale = p->next;
		pooled_free(p);
	}
	if (graph)
		repo_attach_commit_graph(repo, graph);
	if (!found)
		return;
	odb_set_cache_limit(found->odb, 0);
	repo_attach_odb(repo, found->odb);
	found->odb = NULL;
	pooled_free(found);
}

/*
 * Take repo's odb back into the pool, unless the pack directory
 * changed, and its commit-graph (checked when next taken).
 */
static void pool_put(struct server *srv, struct repository *repo, struct timespec stamp)
{
	struct odb *odb = repo_detach_odb(repo);
	struct commit_graph *graph = repo_detach_commit_graph(repo);
	struct pooled_odb *p, *drop = NULL;

	if (odb && !same_stamp(stamp, pack_dir_stamp(repo))) {
		odb_free(odb);
		odb = NULL;
	}
	if (!odb && !graph)
		return;
	/* no delta bases kept while it waits: an idle server holds no caches */
	if (odb)
		odb_set_cache_limit(odb, 1);
	p = xcalloc(1, sizeof(*p));
	p->objdir = xstrdup(repo->objdir);
	p->stamp = stamp;
	p->odb = odb;
	p->graph = graph;
	pthread_mutex_lock(&srv->lock);
	p->next = srv->pool;
	srv->pool = p;
	if (++srv->pool_len > (size_t)srv->opts->workers) {
		/* the oldest goes: the last of the list */
		struct pooled_odb **pp = &srv->pool;
		while ((*pp)->next)
			pp = &(*pp)->next;
		drop = *pp;
		*pp = NULL;
		srv->pool_len--;
	}
	pthread_mutex_unlock(&srv->lock);
	if (drop)
		pooled_free(drop);
}

static void pool_free(struct server *srv)
{
	while (srv->pool) {
		struct pooled_odb *p = srv->pool;
		srv->pool = p->next;
		pooled_free(p);
	}
	srv->pool_len = 0;
}

/* ---- HTTP answers ----------------------------------------------------------- */

/* A response body written with chunked framing (HTTP/1.1) or up to the close. */
struct http_out {
	struct pkt_sink sink;
	struct conn *c;
	bool chunked;
	bool failed;
	/*
	 * Until the pack may be made (the generation limits) or is sent
	 * from the cache, upload-pack's flushes (after a v0 NAK, a v2
	 * section) keep the bytes here: sent, they would commit the
	 * answer to 200 and a refusal could not be 429.
	 */
	bool defer_flush;
	uint64_t bytes;
	/*
	 * The status line and headers, sent with the first body bytes: until
	 * then the answer may still become another (429 when the pack may
	 * not be made now).
	 */
	struct strbuf *headers;
	size_t len;
	char buf[65536];
};

/* Send the held headers, if they are still held. */
static int http_out_headers(struct http_out *o)
{
	int ret = 0;
	if (o->headers && o->headers->len) {
		ret = conn_send(o->c, o->headers->buf, o->headers->len);
		strbuf_reset(o->headers);
	}
	return ret;
}

static int http_out_send(struct http_out *o, const char *data, size_t len)
{
	char head[32];
	struct iovec iov[3];
	struct msghdr msg = { .msg_iov = iov };
	/* nothing to send: the headers may still wait (a flush before a read) */
	if (!len)
		return 0;
	if (http_out_headers(o))
		return -1;
	if (o->c->ssl) {
		/* TLS takes no iovec: the chunk's parts in turn, one record each at most */
		int n = snprintf(head, sizeof(head), "%zx\r\n", len);
		if ((o->chunked && conn_send(o->c, head, (size_t)n)) || conn_send(o->c, data, len) ||
		    (o->chunked && conn_send(o->c, "\r\n", 2)))
			return -1;
		o->bytes += len;
		return 0;
	}
	if (o->chunked) {
		int n = snprintf(head, sizeof(head), "%zx\r\n", len);
		iov[0] = (struct iovec){ head, (size_t)n };
		iov[1] = (struct iovec){ (void *)data, len };
		iov[2] = (struct iovec){ (void *)"\r\n", 2 };
		msg.msg_iovlen = 3;
	} else {
		iov[0] = (struct iovec){ (void *)data, len };
		msg.msg_iovlen = 1;
	}
	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(o->c->fd, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		while (n > 0 && msg.msg_iovlen) {
			if ((size_t)n >= msg.msg_iov->iov_len) {
				n -= (ssize_t)msg.msg_iov->iov_len;
				msg.msg_iov++;
				msg.msg_iovlen--;
			} else {
				msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
				msg.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	o->bytes += len;
	return 0;
}

/* Send what is buffered, the held headers first. */
static int http_out_send_buffered(struct http_out *o, struct gp_error *err)
{
	if (o->failed)
		return gp_error_set(err, GP_EIO, "the client went away");
	if (http_out_send(o, o->buf, o->len)) {
		o->failed = true;
		return gp_error_errno(err, "writing to the client");
	}
	o->len = 0;
	return 0;
}

static int http_out_flush(struct pkt_sink *sink, struct gp_error *err)
{
	struct http_out *o = sink->data;
	if (o->failed)
		return gp_error_set(err, GP_EIO, "the client went away");
	if (o->defer_flush && o->headers && o->headers->len)
		return 0;
	return http_out_send_buffered(o, err);
}

static int http_out_write(struct pkt_sink *sink, const void *buf, size_t len,
			  struct gp_error *err)
{
	struct http_out *o = sink->data;
	if (o->failed)
		return gp_error_set(err, GP_EIO, "the client went away");
	if (o->len + len > sizeof(o->buf)) {
		if (http_out_send_buffered(o, err))
			return GP_EIO;
		if (len >= sizeof(o->buf)) {
			if (http_out_send(o, buf, len)) {
				o->failed = true;
				return gp_error_errno(err, "writing to the client");
			}
			return 0;
		}
	}
	memcpy(o->buf + o->len, buf, len);
	o->len += len;
	return 0;
}

static void http_out_init(struct http_out *o, struct conn *c, bool chunked)
{
	memset(&o->sink, 0, sizeof(o->sink));
	o->sink.write = http_out_write;
	o->sink.flush = http_out_flush;
	o->sink.data = o;
	o->sink.fd = -1;
	o->c = c;
	o->chunked = chunked;
	o->failed = false;
	o->defer_flush = false;
	o->bytes = 0;
	o->len = 0;
}

/* The last chunk; false when the connection failed on the way. */
static bool http_out_finish(struct http_out *o)
{
	if (o->failed || http_out_send_buffered(o, NULL) || http_out_headers(o))
		return false;
	if (o->chunked && conn_send(o->c, "0\r\n\r\n", 5))
		return false;
	return true;
}

/* The Server header: the agent= of the protocol ("gitpack/<version>"), set at start. */
static const char *server_agent = "gitpack";

static void add_common_headers(struct strbuf *h, int status, bool keep_alive)
{
	char date[64];
	struct tm tm;
	time_t t = time(NULL);
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	strbuf_addf(h, "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: %s\r\n", status,
		    http_status_text(status), date, server_agent);
	if (!keep_alive)
		strbuf_addstr(h, "Connection: close\r\n");
}

/* Git's http-backend never lets a proxy keep these answers. */
static void add_nocache_headers(struct strbuf *h)
{
	strbuf_addstr(h, "Expires: Fri, 01 Jan 1980 00:00:00 GMT\r\nPragma: no-cache\r\n"
		      "Cache-Control: no-cache, max-age=0, must-revalidate\r\n");
}

/*
 * A short whole answer (an error, /metrics): returns whether the
 * connection may carry another request.
 */
static bool http_send_simple(struct conn *c, int status, bool keep_alive, const char *extra_headers,
			     const char *type, const char *body, size_t body_len, bool head_only,
			     uint64_t *sent)
{
	struct strbuf h = STRBUF_INIT;
	bool ok;
	add_common_headers(&h, status, keep_alive);
	if (extra_headers)
		strbuf_addstr(&h, extra_headers);
	strbuf_addf(&h, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n", type, body_len);
	if (!head_only)
		strbuf_add(&h, body, body_len);
	ok = !conn_send(c, h.buf, h.len);
	if (sent)
		*sent = head_only ? 0 : body_len;
	strbuf_release(&h);
	return ok && keep_alive;
}

/* "GET /path?query" for the log, cut to fit. */
static void describe_request(const struct http_request *req, char *buf, size_t size)
{
	static const char *const names[] = { "GET", "HEAD", "POST", "OTHER" };
	if (!req) {
		snprintf(buf, size, "-");
		return;
	}
	snprintf(buf, size, "%s %.2000s%s%.1000s", names[req->method], req->path,
		 req->has_query ? "?" : "", req->query);
}

static bool http_error(struct server *srv, struct conn *c, int status, const char *extra_headers,
		       const char *fmt, ...) GP_PRINTF(5, 6);

static bool http_error(struct server *srv, struct conn *c, int status, const char *extra_headers,
		       const char *fmt, ...)
{
	struct strbuf body = STRBUF_INIT;
	char what[3100];
	uint64_t sent = 0;
	bool keep;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&body, fmt, ap);
	va_end(ap);
	strbuf_addch(&body, '\n');
	keep = http_send_simple(c, status, c->req && c->req->keep_alive, extra_headers,
				"text/plain; charset=utf-8", body.buf, body.len,
				c->req && c->req->method == HTTP_HEAD, &sent);
	describe_request(c->req, what, sizeof(what));
	serve_metrics_request(srv->metrics, "http", status);
	log_request(srv, c, what, status, sent, NULL);
	strbuf_release(&body);
	return keep;
}

/* GIT_PROTOCOL's words for the protocol version (the Git-Protocol header). */
static int protocol_version(const char *git_protocol)
{
	return upload_pack_protocol_version(git_protocol);
}

/* ---- the pack cache's side of a request ------------------------------------------ */

/* One request's pack: where its stream goes, and what the cache did. */
struct pack_ctx {
	struct server *srv;
	struct repository *repo;
	int fd;
	struct http_out *http;             /* HTTP: the response body */
	struct pkt_buffered_sink *raw;     /* git://: the connection */
	upload_pack_generate_fn *generate; /* upload-pack's, wrapped for the metrics */
	void *gen_data;
	const char *client;                /* the peer's address, without the port */
	bool used;
	bool busy;                         /* refused by the generation limits */
	enum pack_cache_result result;
};

/* ---- limits on pack generations ---------------------------------------------------- */

/*
 * Pack generations running at once, per repository and per client
 * address, as Gitaly limits pack-objects: past a limit a generation
 * waits (at most gen_queue of them, at most gen_queue_timeout_ms each),
 * then is refused. Cache hits and followers cost no generation and are
 * never limited. The table holds a counter for each repository and
 * client with a generation running or waiting: as many as workers.
 */
struct gen_count {
	char *key;
	unsigned running;
	struct gen_count *next;
};

static struct gen_count **gen_find(struct server *srv, const char *key)
{
	struct gen_count **pp = &srv->gen_counts;
	while (*pp && strcmp((*pp)->key, key))
		pp = &(*pp)->next;
	return pp;
}

static unsigned gen_running(struct server *srv, const char *key)
{
	struct gen_count **pp = gen_find(srv, key);
	return *pp ? (*pp)->running : 0;
}

static void gen_adjust(struct server *srv, const char *key, int delta)
{
	struct gen_count **pp = gen_find(srv, key), *g = *pp;
	if (!g) {
		g = xcalloc(1, sizeof(*g));
		g->key = xstrdup(key);
		*pp = g;
	}
	g->running = (unsigned)((int)g->running + delta);
	if (!g->running) {
		*pp = g->next;
		free(g->key);
		free(g);
	}
}

static bool gen_fits(struct server *srv, const char *repo_key, const char *client_key)
{
	const struct serve_options *o = srv->opts;
	return (!o->max_generations_per_repo ||
		gen_running(srv, repo_key) < (unsigned)o->max_generations_per_repo) &&
	       (!o->max_generations_per_client ||
		gen_running(srv, client_key) < (unsigned)o->max_generations_per_client);
}

/* Take a generation slot; false when the wait is refused or too long. */
static bool gen_acquire(struct server *srv, const char *repo_key, const char *client_key)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += srv->opts->gen_queue_timeout_ms / 1000;
	until.tv_nsec += (long)(srv->opts->gen_queue_timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&srv->lock);
	if (!gen_fits(srv, repo_key, client_key)) {
		if (srv->gen_waiting >= (size_t)srv->opts->gen_queue) {
			ok = false;
		} else {
			srv->gen_waiting++;
			while (!gen_fits(srv, repo_key, client_key) && ok)
				ok = pthread_cond_timedwait(&srv->gen_cond, &srv->lock, &until) !=
				     ETIMEDOUT || gen_fits(srv, repo_key, client_key);
			srv->gen_waiting--;
		}
	}
	if (ok) {
		gen_adjust(srv, repo_key, 1);
		gen_adjust(srv, client_key, 1);
	}
	pthread_mutex_unlock(&srv->lock);
	return ok;
}

static void gen_release(struct server *srv, const char *repo_key, const char *client_key)
{
	pthread_mutex_lock(&srv->lock);
	gen_adjust(srv, repo_key, -1);
	gen_adjust(srv, client_key, -1);
	pthread_cond_broadcast(&srv->gen_cond);
	pthread_mutex_unlock(&srv->lock);
}

static int send_file_raw(int out_fd, int fd, uint64_t offset, size_t len, struct gp_error *err)
{
	off_t off = (off_t)offset;
	while (len) {
		ssize_t n = sendfile(out_fd, fd, &off, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return gp_error_errno(err, "sending the pack");
		len -= (size_t)n;
	}
	return 0;
}

/* The cache's bytes straight from its file: one chunk around them over HTTP/1.1. */
static int pack_send_file(struct pack_cache_client *client, int fd, uint64_t offset, size_t len,
			  struct gp_error *err)
{
	struct pack_ctx *ctx = client->data;
	char head[32];
	int ret;

	if (ctx->raw) {
		if ((ret = pkt_sink_flush(&ctx->raw->sink, err)))
			return ret;
		return send_file_raw(ctx->fd, fd, offset, len, err);
	}
	ctx->http->defer_flush = false;
	if ((ret = pkt_sink_flush(&ctx->http->sink, err)))
		return ret;
	if (ctx->http->c->ssl) {
		/* no sendfile through TLS: the file's pages go through a buffer */
		char *buf = xmalloc(65536);
		while (len && !ret) {
			size_t want = len < 65536 ? len : 65536;
			ssize_t got = pread(fd, buf, want, (off_t)offset);
			if (got <= 0)
				ret = gp_error_errno(err, "reading the pack cache");
			else if (http_out_send(ctx->http, buf, (size_t)got))
				ret = gp_error_set(err, GP_EIO, "writing to the client failed");
			offset += (uint64_t)(got > 0 ? got : 0);
			len -= got > 0 ? (size_t)got : 0;
		}
		free(buf);
		if (ret)
			ctx->http->failed = true;
		return ret;
	}
	if (ctx->http->chunked) {
		int n = snprintf(head, sizeof(head), "%zx\r\n", len);
		if (conn_send(ctx->http->c, head, (size_t)n))
			goto fail;
	}
	if (send_file_raw(ctx->fd, fd, offset, len, err))
		goto fail_err;
	if (ctx->http->chunked && conn_send(ctx->http->c, "\r\n", 2))
		goto fail;
	ctx->http->bytes += len;
	return 0;
fail:
	gp_error_errno(err, "writing to the client");
fail_err:
	ctx->http->failed = true;
	return GP_EIO;
}

/* A sink that counts what passes to the next: the bytes a generation made. */
struct counting_sink {
	struct pkt_sink sink;
	struct pkt_sink *next;
	uint64_t bytes;
};

static int counting_write(struct pkt_sink *sink, const void *buf, size_t len, struct gp_error *err)
{
	struct counting_sink *cs = sink->data;
	cs->bytes += len;
	return cs->next->write(cs->next, buf, len, err);
}

static int counting_flush(struct pkt_sink *sink, struct gp_error *err)
{
	struct counting_sink *cs = sink->data;
	return pkt_sink_flush(cs->next, err);
}

static int timed_generate(void *data, struct pkt_sink *out, struct gp_error *err)
{
	struct pack_ctx *ctx = data;
	struct counting_sink cs = { .next = out };
	uint64_t start = now_ns();
	int ret;

	char repo_key[PATH_MAX + 8], client_key[INET6_ADDRSTRLEN + 16];

	cs.sink.write = counting_write;
	cs.sink.flush = counting_flush;
	cs.sink.data = &cs;
	cs.sink.fd = -1;
	/* repositories and clients count apart even if a path looks like an address */
	snprintf(repo_key, sizeof(repo_key), "repo %s", ctx->repo->commondir);
	snprintf(client_key, sizeof(client_key), "client %s", ctx->client);
	if (!gen_acquire(ctx->srv, repo_key, client_key)) {
		ctx->busy = true;
		serve_metrics_request(ctx->srv->metrics, "generation", 429);
		return gp_error_set(err, GP_EBUSY, "server busy: too many pack generations, "
				    "try again later");
	}
	if (ctx->http)
		ctx->http->defer_flush = false;
	serve_metrics_generation_start(ctx->srv->metrics);
	ret = ctx->generate(ctx->gen_data, &cs.sink, err);
	serve_metrics_generation_end(ctx->srv->metrics, (double)(now_ns() - start) / 1e9, cs.bytes,
				     ret != 0);
	gen_release(ctx->srv, repo_key, client_key);
	return ret;
}

static int pack_hook(void *data, const char *key, size_t key_len, upload_pack_generate_fn *generate,
		     void *gen_data, struct pkt_sink *out, struct gp_error *err)
{
	struct pack_ctx *ctx = data;
	struct pack_cache_client client = { .out = out, .send_file = pack_send_file, .data = ctx };
	ctx->generate = generate;
	ctx->gen_data = gen_data;
	ctx->used = true;
	if (!ctx->srv->opts->cache) {
		ctx->result = PACK_CACHE_BYPASS;
		return timed_generate(ctx, out, err);
	}
	return pack_cache_send(ctx->srv->opts->cache, ctx->repo, key, key_len, timed_generate, ctx,
			       &client, &ctx->result, err);
}

static const char *pack_note(const struct pack_ctx *ctx)
{
	static const char *const names[] = { "cache=hit", "cache=follow", "cache=miss",
					     "cache=bypass" };
	if (!ctx->used || !ctx->srv->opts->cache)
		return NULL;
	return names[ctx->result];
}

static void pack_count(const struct pack_ctx *ctx)
{
	static const enum serve_cache_result map[] = {
		[PACK_CACHE_HIT] = SERVE_CACHE_HIT, [PACK_CACHE_FOLLOW] = SERVE_CACHE_FOLLOW,
		[PACK_CACHE_MISS] = SERVE_CACHE_MISS, [PACK_CACHE_BYPASS] = SERVE_CACHE_BYPASS,
	};
	if (ctx->used && ctx->srv->opts->cache)
		serve_metrics_cache(ctx->srv->metrics, map[ctx->result]);
}

static bool http_upload_pack(struct server *srv, struct conn *c, const struct http_route *route)
{
	static const char req_type[] = "application/x-git-upload-pack-request";
	struct upload_pack_options up = UPLOAD_PACK_OPTIONS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct http_request *req = c->req;
	bool info_refs = route->kind == HTTP_ROUTE_INFO_REFS;
	struct pack_ctx ctx = { .srv = srv, .fd = c->fd, .client = c->addr };
	char *user = c->user;
	struct repository *repo;
	struct strbuf h = STRBUF_INIT;
	struct http_out *out;
	char what[3100];
	bool chunked = req->minor >= 1, keep, ok;
	int ret;

	if (srv->opts->auth && req->authorization[0] &&
	    !serve_auth_check(srv->opts->auth, req->authorization, user))
		return http_error(srv, c, 401, "WWW-Authenticate: Basic realm=\"gitpack\"\r\n",
				  "Authentication failed.");
	repo = ctx.repo = find_repo(srv, route->repo);
	if (!repo || !may_read(repo, user[0] ? user : NULL)) {
		repo_free(repo);
		/* to a stranger, a private repository and none look alike */
		if (!user[0] && srv->opts->auth)
			return http_error(srv, c, 401,
					  "WWW-Authenticate: Basic realm=\"gitpack\"\r\n",
					  "Authentication required.");
		return http_error(srv, c, 404, NULL, "Repository not found.");
	}
	if (!info_refs && strcmp(req->content_type, req_type)) {
		repo_free(repo);
		return http_error(srv, c, 415, NULL,
				  "Expected POST with Content-Type '%s', but received '%s' instead.",
				  req_type, req->content_type);
	}
	keep = req->keep_alive && chunked;
	add_common_headers(&h, 200, keep);
	add_nocache_headers(&h);
	strbuf_addf(&h, "Content-Type: application/x-git-upload-pack-%s\r\n",
		    info_refs ? "advertisement" : "result");
	if (chunked)
		strbuf_addstr(&h, "Transfer-Encoding: chunked\r\n");
	strbuf_addstr(&h, "\r\n");
	describe_request(req, what, sizeof(what));
	if (req->method == HTTP_HEAD) {
		ok = !conn_send(c, h.buf, h.len);
		strbuf_release(&h);
		repo_free(repo);
		serve_metrics_request(srv->metrics, "upload-pack", 200);
		log_request(srv, c, what, 200, 0, ok ? NULL : "client gone");
		return false;
	}

	up.version = protocol_version(req->git_protocol);
	up.stateless_rpc = true;
	up.advertise_refs = info_refs;
	up.timeout = srv->opts->io_timeout_s;
	up.agent = srv->opts->agent;
	up.pack_fn = pack_hook;
	up.pack_data = &ctx;
	/* an empty request reads as an immediate end, not as the descriptor 0 */
	up.request = c->body.data ? (const void *)c->body.data : "";
	up.request_len = c->body.len;
	out = xmalloc(sizeof(*out));
	http_out_init(out, c, chunked);
	out->headers = &h;
	out->defer_flush = !info_refs;
	ctx.http = out;
	ret = 0;
	if (info_refs && up.version < 2) {
		ret = pkt_writef(&out->sink, &err, "# service=git-upload-pack\n");
		if (!ret)
			ret = pkt_flush(&out->sink, &err);
	}
	if (!ret) {
		struct timespec stamp = pack_dir_stamp(repo);
		pool_take(srv, repo, stamp);
		ret = upload_pack(repo, -1, &out->sink, &up, &err);
		pool_put(srv, repo, stamp);
	}
	if (ctx.busy && h.len) {
		/* nothing went out yet: the answer becomes "later" */
		strbuf_release(&h);
		free(out);
		repo_free(repo);
		gp_error_clear(&err);
		return http_error(srv, c, 429, "Retry-After: 10\r\n",
				  "Too many pack generations for this repository or client; "
				  "try again later.");
	}
	/* what was said before a failure (an ERR packet) still goes out */
	ok = http_out_finish(out) && !ret;
	strbuf_release(&h);
	serve_metrics_request(srv->metrics, info_refs ? "info-refs" : "upload-pack", 200);
	serve_metrics_bytes(srv->metrics, out->bytes);
	pack_count(&ctx);
	log_request(srv, c, what, 200, out->bytes, ret ? gp_error_msg(&err) : pack_note(&ctx));
	gp_error_clear(&err);
	free(out);
	repo_free(repo);
	return ok && keep;
}

/*
 * receive-pack (push) and upload-archive over smart HTTP, run by stock
 * Git as http-backend runs them, under the same access rules (a push
 * needs a user serve.write names).
 */
static bool http_git_service(struct server *srv, struct conn *c, const struct http_route *route)
{
	struct http_request *req = c->req;
	bool info_refs = route->kind == HTTP_ROUTE_INFO_REFS;
	const char *name = http_service_name(route->service); /* "git-receive-pack" */
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo;
	struct strbuf h = STRBUF_INIT, type = STRBUF_INIT;
	struct http_out *out;
	char what[3100];
	bool keep = req->keep_alive && req->minor >= 1, ok;
	int ret, code = 0, in_fd = -1;

	if (srv->opts->auth && req->authorization[0] &&
	    !serve_auth_check(srv->opts->auth, req->authorization, c->user))
		return http_error(srv, c, 401, "WWW-Authenticate: Basic realm=\"gitpack\"\r\n",
				  "Authentication failed.");
	repo = find_repo(srv, route->repo);
	if (!repo || !may_read(repo, c->user[0] ? c->user : NULL)) {
		repo_free(repo);
		if (!c->user[0] && srv->opts->auth)
			return http_error(srv, c, 401,
					  "WWW-Authenticate: Basic realm=\"gitpack\"\r\n",
					  "Authentication required.");
		return http_error(srv, c, 404, NULL, "Repository not found.");
	}
	if (route->service == HTTP_SERVICE_RECEIVE_PACK &&
	    !may_write(repo, c->user[0] ? c->user : NULL)) {
		repo_free(repo);
		if (!c->user[0] && srv->opts->auth)
			return http_error(srv, c, 401,
					  "WWW-Authenticate: Basic realm=\"gitpack\"\r\n",
					  "Authentication required.");
		return http_error(srv, c, 403, NULL, "Push not allowed.");
	}
	if (!info_refs) {
		strbuf_addf(&type, "application/x-%s-request", name);
		if (strcmp(req->content_type, type.buf)) {
			ret = 0;
			repo_free(repo);
			keep = http_error(srv, c, 415, NULL,
					  "Expected POST with Content-Type '%s', but received '%s' instead.",
					  type.buf, req->content_type);
			strbuf_release(&type);
			return keep;
		}
		/* the body, as the child's standard input */
		in_fd = memfd_create("gitpack-request", MFD_CLOEXEC);
		if (in_fd < 0 || write_in_full(in_fd, c->body.data ? c->body.data : "",
					       c->body.len) < 0 || lseek(in_fd, 0, SEEK_SET)) {
			if (in_fd >= 0)
				close(in_fd);
			repo_free(repo);
			strbuf_release(&type);
			return http_error(srv, c, 500, NULL, "Cannot hold the request.");
		}
	} else {
		in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	strbuf_reset(&type);
	strbuf_addf(&type, "application/x-%s-%s", name, info_refs ? "advertisement" : "result");
	add_common_headers(&h, 200, keep);
	add_nocache_headers(&h);
	strbuf_addf(&h, "Content-Type: %s\r\n", type.buf);
	if (req->minor >= 1)
		strbuf_addstr(&h, "Transfer-Encoding: chunked\r\n");
	strbuf_addstr(&h, "\r\n");
	out = xmalloc(sizeof(*out));
	http_out_init(out, c, req->minor >= 1);
	out->headers = &h;
	ret = 0;
	if (info_refs && upload_pack_protocol_version(req->git_protocol) < 2) {
		ret = pkt_writef(&out->sink, &err, "# service=%s\n", name);
		if (!ret)
			ret = pkt_flush(&out->sink, &err);
	}
	if (!ret)
		ret = spawn_git_service(srv, repo, route->service,
					info_refs ? "--http-backend-info-refs" :
					route->service == HTTP_SERVICE_RECEIVE_PACK ? "--stateless-rpc" : NULL,
					req->git_protocol, in_fd, -1, &out->sink, &code, &err);
	ok = http_out_finish(out) && !ret;
	describe_request(req, what, sizeof(what));
	serve_metrics_request(srv->metrics, name + 4, ret ? 500 : 200);
	serve_metrics_bytes(srv->metrics, out->bytes);
	log_request(srv, c, what, 200, out->bytes, ret ? gp_error_msg(&err) : NULL);
	gp_error_clear(&err);
	if (in_fd >= 0)
		close(in_fd);
	free(out);
	strbuf_release(&h);
	strbuf_release(&type);
	repo_free(repo);
	return ok && keep;
}

static bool http_answer(struct server *srv, struct conn *c)
{
	struct http_request *req = c->req;
	struct http_route route;

	http_route(req, &route);
	switch (route.kind) {
	case HTTP_ROUTE_METRICS: {
		struct strbuf text = STRBUF_INIT;
		uint64_t sent = 0;
		bool keep;
		if (req->method != HTTP_GET && req->method != HTTP_HEAD)
			return http_error(srv, c, 405, "Allow: GET\r\n", "Method not allowed.");
		serve_metrics_request(srv->metrics, "metrics", 200);
		pthread_mutex_lock(&srv->lock);
		serve_metrics_connections(srv->metrics, srv->nr_conns);
		pthread_mutex_unlock(&srv->lock);
		if (srv->opts->cache) {
			struct pack_cache_stats st;
			pack_cache_stats(srv->opts->cache, &st);
			serve_metrics_cache_state(srv->metrics, st.bytes, st.entries, st.served_bytes,
						  st.evictions);
		}
		serve_metrics_format(srv->metrics, &text);
		keep = http_send_simple(c, 200, req->keep_alive, NULL,
					"text/plain; version=0.0.4; charset=utf-8", text.buf, text.len,
					req->method == HTTP_HEAD, &sent);
		log_request(srv, c, "GET /metrics", 200, sent, NULL);
		strbuf_release(&text);
		return keep;
	}
	case HTTP_ROUTE_INFO_REFS:
	case HTTP_ROUTE_SERVICE:
		if (route.kind == HTTP_ROUTE_INFO_REFS && req->method == HTTP_POST)
			return http_error(srv, c, 405, "Allow: GET\r\n", "Method not allowed.");
		if (route.kind == HTTP_ROUTE_SERVICE && req->method != HTTP_POST)
			return http_error(srv, c, 405, "Allow: POST\r\n", "Method not allowed.");
		if (!service_enabled(srv, route.service))
			return http_error(srv, c, 403, NULL, "Service not enabled: '%s'",
					  http_service_name(route.service));
		if (route.service != HTTP_SERVICE_UPLOAD_PACK)
			return http_git_service(srv, c, &route);
		return http_upload_pack(srv, c, &route);
	case HTTP_ROUTE_NONE:
	default: {
		/*
		 * A path that another method would route (GET of a service,
		 * POST of info/refs or /metrics) is 405, as Git's http-backend
		 * answers; the route is asked again with that method.
		 */
		enum http_method method = req->method;
		struct http_route as_get, as_post;
		req->method = HTTP_GET;
		http_route(req, &as_get);
		req->method = HTTP_POST;
		http_route(req, &as_post);
		req->method = method;
		if (method != HTTP_GET && method != HTTP_HEAD && as_get.kind != HTTP_ROUTE_NONE)
			return http_error(srv, c, 405, "Allow: GET, HEAD\r\n", "Method not allowed.");
		if (method != HTTP_POST && as_post.kind != HTTP_ROUTE_NONE)
			return http_error(srv, c, 405, "Allow: POST\r\n", "Method not allowed.");
		if (method == HTTP_OTHER)
			return http_error(srv, c, 405, "Allow: GET, HEAD, POST\r\n",
					  "Method not allowed.");
		return http_error(srv, c, 404, NULL, "Not found.");
	}
	}
}

/* ---- git:// answers --------------------------------------------------------- */

/* "ERR <msg>" as git daemon says it, then the end of the connection. */
static void git_refuse(struct server *srv, struct conn *c, const char *what, const char *msg)
{
	struct pkt_sink sink = pkt_sink_fd(c->fd);
	pkt_write_error(&sink, NULL, "%s", msg);
	serve_metrics_request(srv->metrics, "git", 403);
	log_request(srv, c, what, 403, 0, msg);
}

/*
 * The request line (gitprotocol-pack "Git Transport"):
 *   <service> SP <path> NUL [host=<host>[:<port>] NUL [NUL (<param> NUL)*]]
 * Extra parameters ("version=2") are joined with ':' as GIT_PROTOCOL.
 */
static void git_answer(struct server *srv, struct conn *c)
{
	struct upload_pack_options up = UPLOAD_PACK_OPTIONS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_buffered_sink *out;
	struct repository *repo = NULL;
	struct pack_ctx ctx = { .srv = srv, .fd = c->fd, .client = c->addr };
	struct git_request *gr = xmalloc(sizeof(*gr));
	enum git_request_result parsed;
	enum http_service service;
	const char *reason;
	char what[512];
	int ret;

	parsed = git_request_parse(c->in + 4, c->in_len - 4, gr, &reason);
	service = gr->service;
	snprintf(what, sizeof(what), "git %s %.400s", gr->service_name, gr->path);
	if (parsed == GIT_REQUEST_BAD) {
		serve_metrics_request(srv->metrics, "git", 400);
		log_request(srv, c, what, 400, 0, reason);
		goto out;
	}
	if (!service_enabled(srv, service)) {
		git_refuse(srv, c, what, "service not enabled");
		goto out;
	}
	if (parsed == GIT_REQUEST_OK && (repo = find_repo(srv, gr->repo)) &&
	    (!may_read(repo, NULL) ||
	     (service == HTTP_SERVICE_RECEIVE_PACK &&
	      !config_get_bool_or(&repo->config, "daemon.receivepack", false)))) {
		/*
		 * git:// has no users: only public repositories, and a push
		 * only where daemon.receivePack says so, as git daemon
		 */
		repo_free(repo);
		repo = NULL;
	}
	if (!repo) {
		char *msg = xstrfmt("access denied or repository not exported: %s", gr->path);
		git_refuse(srv, c, what, msg);
		free(msg);
		goto out;
	}
	if (service != HTTP_SERVICE_UPLOAD_PACK) {
		int code = 0;
		ret = spawn_git_service(srv, repo, service, NULL, gr->params, c->fd, c->fd, NULL,
					&code, &err);
		serve_metrics_request(srv->metrics, "git", ret || code ? 500 : 200);
		log_request(srv, c, what, ret || code ? 500 : 200, 0, ret ? gp_error_msg(&err) : NULL);
		gp_error_clear(&err);
		goto out;
	}
	up.version = protocol_version(gr->params);
	up.timeout = srv->opts->io_timeout_s;
	up.agent = srv->opts->agent;
	up.pack_fn = pack_hook;
	up.pack_data = &ctx;
	out = xmalloc(sizeof(*out));
	pkt_buffered_sink_init(out, c->fd);
	ctx.repo = repo;
	ctx.raw = out;
	{
		struct timespec stamp = pack_dir_stamp(repo);
		pool_take(srv, repo, stamp);
		ret = upload_pack(repo, c->fd, &out->sink, &up, &err);
		pool_put(srv, repo, stamp);
	}
	if (pkt_sink_flush(&out->sink, ret ? NULL : &err) && !ret)
		ret = -1;
	serve_metrics_request(srv->metrics, "git", ret ? 500 : 200);
	pack_count(&ctx);
	log_request(srv, c, what, ret ? 500 : 200, 0, ret ? gp_error_msg(&err) : pack_note(&ctx));
	gp_error_clear(&err);
	free(out);
out:
	repo_free(repo);
	free(gr);
}

/* ---- workers -------------------------------------------------------------------- */

static void conn_free(struct conn *c)
{
	serve_tls_end(c->ssl);
	if (c->fd >= 0)
		close(c->fd);
	if (c->body_active)
		http_body_release(&c->body);
	free(c->req);
	free(c->in);
	free(c);
}

static void conn_body_drop(struct server *srv, struct conn *c)
{
	if (c->body_active)
		http_body_release(&c->body);
	c->body_active = false;
	__atomic_sub_fetch(&srv->bodies_held, (uint64_t)c->body_charged, __ATOMIC_RELAXED);
	c->body_charged = 0;
}

/* Count what the body holds now; whether all bodies together hold too much. */
static bool conn_body_charge(struct server *srv, struct conn *c)
{
	uint64_t held;
	if (c->body.alloc <= c->body_charged)
		return false;
	held = __atomic_add_fetch(&srv->bodies_held, (uint64_t)(c->body.alloc - c->body_charged),
				  __ATOMIC_RELAXED);
	c->body_charged = c->body.alloc;
	return held > srv->opts->max_bodies;
}

/* The request is answered: drop what it consumed, keep what follows. */
static void conn_request_done(struct server *srv, struct conn *c)
{
	conn_body_drop(srv, c);
	free(c->req);
	c->req = NULL;
	c->user[0] = '\0';
}

static void worker_hand_back(struct server *srv, struct conn *c)
{
	uint64_t one = 1;
	pthread_mutex_lock(&srv->lock);
	srv->busy--;
	/* a connection not kept comes back too, to linger */
	c->next = srv->returned;
	srv->returned = c;
	pthread_mutex_unlock(&srv->lock);
	if (write(srv->wakefd, &one, sizeof(one)) < 0)
		return;
}

static void *worker_main(void *data)
{
	struct server *srv = data;
	for (;;) {
		struct conn *c;
		uint64_t waited;
		pthread_mutex_lock(&srv->lock);
		while (!srv->queue_head && !srv->stopping)
			pthread_cond_wait(&srv->cond, &srv->lock);
		if (!srv->queue_head) {
			pthread_mutex_unlock(&srv->lock);
			return NULL;
		}
		c = srv->queue_head;
		srv->queue_head = c->next;
		if (!srv->queue_head)
			srv->queue_tail = NULL;
		srv->queue_len--;
		serve_metrics_queue(srv->metrics, srv->queue_len);
		pthread_mutex_unlock(&srv->lock);

		set_nonblocking(c->fd, false);
		set_io_timeout(c->fd, srv->opts->io_timeout_s);
		c->keep = false;
		waited = now_ns() - c->queued_ns;
		if (c->kind == CONN_GIT) {
			if (waited > ms_ns(srv->opts->queue_timeout_ms))
				git_refuse(srv, c, "git", "server busy, try again later");
			else
				git_answer(srv, c);
		} else if (waited > ms_ns(srv->opts->queue_timeout_ms)) {
			c->keep = http_error(srv, c, 429, "Retry-After: 5\r\n",
					     "Too many requests; try again later.");
		} else {
			c->keep = http_answer(srv, c);
		}
		c->nr_requests++;
		conn_request_done(srv, c);
		worker_hand_back(srv, c);
	}
}

/* ---- the connection thread -------------------------------------------------------- */

static void loop_add(struct server *srv, struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
	c->next_all = srv->all;
	c->prev_all = NULL;
	if (srv->all)
		srv->all->prev_all = c;
	srv->all = c;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void loop_remove(struct server *srv, struct conn *c)
{
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->prev_all)
		c->prev_all->next_all = c->next_all;
	else
		srv->all = c->next_all;
	if (c->next_all)
		c->next_all->prev_all = c->prev_all;
	c->prev_all = c->next_all = NULL;
}

static void loop_close(struct server *srv, struct conn *c)
{
	conn_body_drop(srv, c);
	loop_remove(srv, c);
	pthread_mutex_lock(&srv->lock);
	srv->nr_conns--;
	pthread_mutex_unlock(&srv->lock);
	conn_free(c);
}

/* Close gently (LINGER_MS): the connection must be the loop's. */
static void loop_linger(struct server *srv, struct conn *c)
{
	if (c->ssl) {
		/* close_notify, then the raw bytes are drained as they come */
		serve_tls_end(c->ssl);
		c->ssl = NULL;
	}
	conn_body_drop(srv, c);
	free(c->req);
	c->req = NULL;
	if (shutdown(c->fd, SHUT_WR)) {
		loop_close(srv, c);
		return;
	}
	c->state = ST_LINGER;
	c->in_len = 0;
	c->deadline_ns = now_ns() + ms_ns(LINGER_MS);
}

/* Read and drop what a lingering peer sends; closes at its end. */
static void linger_readable(struct server *srv, struct conn *c)
{
	char sink[16384];
	for (;;) {
		ssize_t n = recv(c->fd, sink, sizeof(sink), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			loop_close(srv, c);
			return;
		}
	}
}

/* A refusal the loop sends itself (bad head, too large, too slow): then close. */
static void loop_refuse(struct server *srv, struct conn *c, int status, const char *reason)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "%s\n", reason ? reason : http_status_text(status));
	if (c->kind == CONN_HTTP) {
		/* a socket buffer takes this much at once; a peer that does not read loses it */
		http_send_simple(c, status, false, status == 429 ? "Retry-After: 5\r\n" : NULL,
				 "text/plain; charset=utf-8", body, (size_t)n, false, NULL);
		serve_metrics_request(srv->metrics, "http", status);
	}
	log_request(srv, c, c->kind == CONN_HTTP ? "http" : "git", status, 0, reason);
	loop_linger(srv, c);
}

static void loop_dispatch(struct server *srv, struct conn *c)
{
	bool full;
	loop_remove(srv, c);
	c->state = ST_WORKER;
	c->queued_ns = now_ns();
	pthread_mutex_lock(&srv->lock);
	full = srv->queue_len >= (size_t)srv->opts->max_queue;
	if (!full) {
		c->next = NULL;
		if (srv->queue_tail)
			srv->queue_tail->next = c;
		else
			srv->queue_head = c;
		srv->queue_tail = c;
		srv->queue_len++;
		srv->busy++;
		serve_metrics_queue(srv->metrics, srv->queue_len);
		pthread_cond_signal(&srv->cond);
	}
	pthread_mutex_unlock(&srv->lock);
	if (!full)
		return;
	/* the queue is the bound: past it, an answer now rather than a wait */
	if (c->kind == CONN_HTTP) {
		http_send_simple(c, 429, false, "Retry-After: 5\r\n", "text/plain; charset=utf-8",
				 "Too many requests; try again later.\n", 36, false, NULL);
		serve_metrics_request(srv->metrics, "http", 429);
	} else {
		struct pkt_sink sink = pkt_sink_fd(c->fd);
		pkt_write_error(&sink, NULL, "server busy, try again later");
		serve_metrics_request(srv->metrics, "git", 429);
	}
	log_request(srv, c, "queue", 429, 0, "queue full");
	loop_add(srv, c);
	loop_linger(srv, c);
}

static void conn_consume(struct conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	c->head_scanned = 0;
}

/* Whether the bytes hold an empty line yet ("\n\n" or "\n\r\n"); scans each byte once. */
static bool head_may_be_complete(struct conn *c)
{
	size_t i = c->head_scanned;
	for (; i < c->in_len; i++) {
		if (c->in[i] != '\n' || !i)
			continue;
		if (c->in[i - 1] == '\n' || (i >= 2 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n'))
			break;
	}
	if (i < c->in_len)
		return true;
	c->head_scanned = c->in_len;
	return false;
}

/*
 * Move c on with what it has received: parse the head, feed the body,
 * check the git:// line. Returns false when c was closed or handed to
 * a worker.
 */
static bool conn_progress(struct server *srv, struct conn *c)
{
	if (c->state == ST_GIT) {
		unsigned len = 0;
		if (c->in_len < 4)
			return true;
		for (int i = 0; i < 4; i++) {
			int d = http_hex_value((unsigned char)c->in[i]);
			if (d < 0) {
				loop_refuse(srv, c, 400, "bad request line length");
				return false;
			}
			len = len * 16 + (unsigned)d;
		}
		if (len <= 4 || len > GIT_REQUEST_MAX) {
			loop_refuse(srv, c, 400, "bad request line length");
			return false;
		}
		if (c->in_len < len)
			return true;
		loop_dispatch(srv, c);
		return false;
	}
	if (c->state == ST_HEAD) {
		size_t head_len;
		int status;
		const char *reason;
		enum http_parse_result r;
		if (!c->in_len)
			return true;
		/* parse only once the head can be whole: a slow client costs no re-parse a byte */
		if (c->in_len < HTTP_HEAD_MAX && !head_may_be_complete(c))
			return true;
		r = http_parse_head(c->in, c->in_len, &srv->scratch, &head_len, &status, &reason);
		if (r == HTTP_PARSE_MORE) {
			if (c->in_len >= HTTP_HEAD_MAX) {
				loop_refuse(srv, c, 431, "request head too large");
				return false;
			}
			return true;
		}
		if (r == HTTP_PARSE_REFUSED) {
			loop_refuse(srv, c, status, reason);
			return false;
		}
		c->req = xmalloc(sizeof(*c->req));
		memcpy(c->req, &srv->scratch, sizeof(*c->req));
		conn_consume(c, head_len);
		http_body_init(&c->body, c->req, (size_t)srv->opts->max_body);
		c->body_active = true;
		c->state = ST_BODY;
		c->deadline_ns = now_ns() + ms_ns(srv->opts->body_timeout_ms);
		if (c->req->expect_continue && !c->in_len) {
			/* a length over the bound is answered now, not invited */
			size_t used;
			int br = http_body_feed(&c->body, "", 0, &used, &status, &reason);
			if (br == HTTP_BODY_REFUSED) {
				loop_refuse(srv, c, status, reason);
				return false;
			}
			if (br == HTTP_BODY_MORE &&
			    conn_send(c, "HTTP/1.1 100 Continue\r\n\r\n", 25)) {
				loop_close(srv, c);
				return false;
			}
		}
	}
	if (c->state == ST_BODY) {
		size_t used = 0;
		int status = 0;
		const char *reason = NULL;
		int r = http_body_feed(&c->body, c->in, c->in_len, &used, &status, &reason);
		conn_consume(c, used);
		if (r == HTTP_BODY_REFUSED) {
			loop_refuse(srv, c, status, reason);
			return false;
		}
		if (conn_body_charge(srv, c)) {
			/* memory for bodies is spent: this one may come back later */
			loop_refuse(srv, c, 429, "too many request bodies in memory; try again later");
			return false;
		}
		if (r == HTTP_BODY_MORE)
			return true;
		loop_dispatch(srv, c);
		return false;
	}
	return true;
}

static void conn_readable(struct server *srv, struct conn *c)
{
	if (c->state == ST_LINGER) {
		linger_readable(srv, c);
		return;
	}
	for (;;) {
		size_t room;
		ssize_t n;
		if (c->in_alloc - c->in_len < 4096) {
			size_t want = c->in_alloc ? c->in_alloc * 2 : 8192;
			if (want > CONN_IN_MAX)
				want = CONN_IN_MAX;
			if (want > c->in_alloc) {
				c->in = xrealloc(c->in, want);
				c->in_alloc = want;
			}
		}
		room = c->in_alloc - c->in_len;
		if (c->state == ST_GIT) {
			/*
			 * Exactly the request line, never past it: what follows
			 * (git archive --remote sends its arguments at once) is
			 * for the service, which reads the socket itself.
			 */
			size_t want = 4;
			if (c->in_len >= 4) {
				want = 0;
				for (int i = 0; i < 4; i++) {
					int d = http_hex_value((unsigned char)c->in[i]);
					want = want * 16 + (size_t)(d < 0 ? 0 : d);
				}
				if (want < 5 || want > GIT_REQUEST_MAX)
					want = c->in_len + 1; /* conn_progress refuses it */
			}
			if (want <= c->in_len) {
				conn_progress(srv, c);
				return;
			}
			if (room > want - c->in_len)
				room = want - c->in_len;
		}
		if (!room) {
			/* the state machine takes bytes faster than this fills: never here */
			loop_refuse(srv, c, 431, "request too large");
			return;
		}
		n = c->ssl ? serve_tls_read(c->ssl, c->in + c->in_len, room)
			   : recv(c->fd, c->in + c->in_len, room, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* the peer closed (or failed); mid-request, that is its loss */
			loop_close(srv, c);
			return;
		}
		if (!c->in_len && c->state == ST_HEAD) {
			c->start_ns = now_ns();
			c->deadline_ns = c->start_ns + ms_ns(srv->opts->header_timeout_ms);
		}
		c->in_len += (size_t)n;
		if (c->state == ST_BODY)
			c->deadline_ns = now_ns() + ms_ns(srv->opts->body_timeout_ms);
		if (!conn_progress(srv, c))
			return;
	}
}

/* Stop (or restart) waiting on the listeners. */
static void loop_arm_listeners(struct server *srv, bool on)
{
	for (size_t i = 0; i < srv->nr_listen; i++) {
		struct epoll_event ev = { .events = on ? EPOLLIN : 0,
					  .data.ptr = (void *)(uintptr_t)(i + 1) };
		if (srv->listen_fd[i] >= 0)
			epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->listen_fd[i], &ev);
	}
	srv->listeners_paused = !on;
}

/*
 * Out of descriptors with connections pending: a level-triggered
 * listener would wake the loop at once, forever. Refuse the pending
 * connections through the spare descriptor; without one, stop
 * listening until the next deadline scan (250 ms), when descriptors
 * may have come back.
 */
static void loop_shed(struct server *srv, int lfd, enum conn_kind kind)
{
	while (srv->spare_fd >= 0) {
		int fd;
		close(srv->spare_fd);
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			serve_metrics_request(srv->metrics, kind == CONN_GIT ? "git" : "http", 503);
			close(fd);
		}
		srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
	}
	loop_arm_listeners(srv, false);
}

static void loop_accept(struct server *srv, int lfd, enum conn_kind kind)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct conn *c;
		int one = 1, fd = accept4(lfd, (struct sockaddr *)&ss, &len,
					  SOCK_NONBLOCK | SOCK_CLOEXEC);
		bool full;
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				loop_shed(srv, lfd, kind);
			return;
		}
		pthread_mutex_lock(&srv->lock);
		full = srv->nr_conns >= srv->opts->max_connections;
		if (!full)
			srv->nr_conns++;
		pthread_mutex_unlock(&srv->lock);
		if (full) {
			serve_metrics_request(srv->metrics, kind == CONN_GIT ? "git" : "http", 503);
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = xcalloc(1, sizeof(*c));
		c->fd = fd;
		if (kind == CONN_HTTPS) {
			c->ssl = serve_tls_session(srv->opts->tls, fd);
			if (!c->ssl) {
				pthread_mutex_lock(&srv->lock);
				srv->nr_conns--;
				pthread_mutex_unlock(&srv->lock);
				conn_free(c);
				continue;
			}
		}
		c->kind = kind == CONN_GIT ? CONN_GIT : CONN_HTTP;
		c->state = c->kind == CONN_HTTP ? ST_HEAD : ST_GIT;
		c->start_ns = now_ns();
		c->deadline_ns = c->start_ns + ms_ns(srv->opts->header_timeout_ms);
		format_address(&ss, c->peer, sizeof(c->peer));
		format_host(&ss, c->addr, sizeof(c->addr));
		loop_add(srv, c);
	}
}

/* Take back the connections workers answered, and go on with what they hold. */
static void loop_take_returned(struct server *srv)
{
	struct conn *list;
	uint64_t v;
	if (read(srv->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&srv->lock);
	list = srv->returned;
	srv->returned = NULL;
	pthread_mutex_unlock(&srv->lock);
	while (list) {
		struct conn *c = list;
		list = c->next;
		set_nonblocking(c->fd, true);
		if (!c->keep) {
			loop_add(srv, c);
			loop_linger(srv, c);
			continue;
		}
		c->state = ST_HEAD;
		c->start_ns = now_ns();
		c->deadline_ns = c->start_ns + ms_ns(srv->stopping ? 0 : srv->opts->idle_timeout_ms);
		loop_add(srv, c);
		if (srv->stopping && !c->in_len) {
			loop_close(srv, c);
			continue;
		}
		/*
		 * Bytes of a pipelined request: its head is under the header
		 * deadline from now, however few (conn_readable starts that
		 * clock only on a connection's first byte), and may be
		 * complete already.
		 */
		if (c->in_len)
			c->deadline_ns = c->start_ns + ms_ns(srv->opts->header_timeout_ms);
		/* decrypted bytes epoll cannot see: read them now */
		if (c->ssl && serve_tls_pending(c->ssl)) {
			conn_readable(srv, c);
			continue;
		}
		if (c->in_len)
			conn_progress(srv, c);
	}
}

static void loop_expire(struct server *srv)
{
	uint64_t now = now_ns();
	struct conn *c = srv->all, *next;
	for (; c; c = next) {
		next = c->next_all;
		if (now < c->deadline_ns)
			continue;
		if ((c->state == ST_HEAD && !c->in_len) || c->state == ST_LINGER) {
			/* an idle keep-alive connection, or one drained long enough */
			loop_close(srv, c);
		} else {
			loop_refuse(srv, c, 408, c->state == ST_BODY ? "timed out reading the body"
								   : "timed out reading the request");
		}
	}
}

static void loop_stop(struct server *srv)
{
	struct conn *c = srv->all, *next;
	srv->stopping = true;
	for (size_t i = 0; i < srv->nr_listen; i++) {
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, srv->listen_fd[i], NULL);
		close(srv->listen_fd[i]);
		srv->listen_fd[i] = -1;
	}
	/* idle connections go now; a request being read may still come in */
	for (; c; c = next) {
		next = c->next_all;
		if (c->state == ST_HEAD && !c->in_len)
			loop_close(srv, c);
	}
}

static int loop_run(struct server *srv)
{
	struct epoll_event evs[64];
	uint64_t next_expire = now_ns() + ms_ns(250);

	for (;;) {
		int n = epoll_wait(srv->epfd, evs, ARRAY_SIZE(evs), 250);
		bool done;
		if (n < 0 && errno != EINTR)
			return -1;
		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;
			if (ptr == &srv->sigfd) {
				struct signalfd_siginfo si;
				if (read(srv->sigfd, &si, sizeof(si)) > 0 && !srv->stopping)
					loop_stop(srv);
			} else if (ptr == &srv->wakefd) {
				loop_take_returned(srv);
			} else if ((uintptr_t)ptr < MAX_LISTENERS + 1) {
				size_t li = (uintptr_t)ptr - 1;
				if (!srv->stopping)
					loop_accept(srv, srv->listen_fd[li], srv->listen_kind[li]);
			} else {
				conn_readable(srv, ptr);
			}
		}
		if (now_ns() >= next_expire) {
			if (srv->spare_fd < 0)
				srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (srv->listeners_paused && !srv->stopping)
				loop_arm_listeners(srv, true);
			loop_expire(srv);
			next_expire = now_ns() + ms_ns(250);
		}
		if (!srv->stopping)
			continue;
		pthread_mutex_lock(&srv->lock);
		done = !srv->all && !srv->busy && !srv->returned;
		pthread_mutex_unlock(&srv->lock);
		if (done)
			return 0;
	}
}

/* As many descriptors as the hard limit allows: idle connections are one each. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int serve_run(const struct serve_options *opts, struct gp_error *err)
{
	struct server *srv = xcalloc(1, sizeof(*srv));
	struct epoll_event ev;
	sigset_t mask;
	int ret = 0;

	srv->opts = opts;
	if (opts->agent)
		server_agent = opts->agent;
	srv->epfd = srv->sigfd = srv->wakefd = -1;
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->cond, NULL);
	pthread_cond_init(&srv->gen_cond, NULL);
	srv->metrics = opts->metrics;
	if (!srv->metrics)
		srv->metrics = srv->own_metrics = serve_metrics_new();
	if (!opts->nr_http && !opts->nr_https && !opts->nr_git) {
		ret = gp_error_set(err, GP_EINVAL, "nothing to listen on: give --http, --https or --git");
		goto out;
	}
	srv->base_real = realpath(opts->base_path, NULL);
	if (!srv->base_real) {
		ret = gp_error_errno(err, "base path '%s'", opts->base_path);
		goto out;
	}
	srv->base_len = strlen(srv->base_real);
	if (srv->base_len == 1)
		srv->base_len = 0; /* "/": every absolute path is under it */
	raise_fd_limit();
	/* the signals come through the loop; every thread created after this blocks them */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	srv->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->epfd < 0 || srv->sigfd < 0 || srv->wakefd < 0) {
		ret = gp_error_errno(err, "setting up the event loop");
		goto out;
	}
	for (size_t i = 0; i < opts->nr_http && !ret; i++)
		ret = listen_on(srv, opts->http_addrs[i], CONN_HTTP, err);
	for (size_t i = 0; i < opts->nr_https && !ret; i++)
		ret = opts->tls ? listen_on(srv, opts->https_addrs[i], CONN_HTTPS, err)
				: gp_error_set(err, GP_EINVAL, "--https needs --tls-cert and --tls-key");
	for (size_t i = 0; i < opts->nr_git && !ret; i++)
		ret = listen_on(srv, opts->git_addrs[i], CONN_GIT, err);
	if (ret)
		goto out;
	for (size_t i = 0; i < srv->nr_listen; i++) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = (void *)(uintptr_t)(i + 1) };
		epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->listen_fd[i], &ev);
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &srv->sigfd };
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->sigfd, &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = &srv->wakefd };
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->wakefd, &ev);

	srv->threads = xcalloc((size_t)(opts->workers > 0 ? opts->workers : 1), sizeof(pthread_t));
	for (int i = 0; i < (opts->workers > 0 ? opts->workers : 1); i++) {
		if (pthread_create(&srv->threads[srv->nr_threads], NULL, worker_main, srv))
			break;
		srv->nr_threads++;
	}
	if (!srv->nr_threads) {
		ret = gp_error_set(err, GP_EIO, "cannot start a worker thread");
		goto out;
	}
	if (loop_run(srv))
		ret = gp_error_errno(err, "event loop");
	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	for (size_t i = 0; i < srv->nr_threads; i++)
		pthread_join(srv->threads[i], NULL);
out:
	while (srv->all)
		loop_close(srv, srv->all);
	for (size_t i = 0; i < srv->nr_listen; i++)
		if (srv->listen_fd[i] >= 0)
			close(srv->listen_fd[i]);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->sigfd >= 0)
		close(srv->sigfd);
	if (srv->wakefd >= 0)
		close(srv->wakefd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	pool_free(srv);
	serve_metrics_free(srv->own_metrics);
	free(srv->threads);
	free(srv->base_real);
	pthread_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->cond);
	pthread_cond_destroy(&srv->gen_cond);
	free(srv);
	return ret;
}
