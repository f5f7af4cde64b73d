/*
 * remote-object-info.c: the client side of protocol v2 "object-info"
 * (see remote-object-info.h).
 *
 * A pkt-line is four hex digits giving its length (the four included)
 * and the data; "0000" is a flush, "0001" a delimiter. The server
 * speaks first: "version 2", its capabilities, a flush. The request is
 * "command=object-info", "object-format=<algo>" when the server names
 * one, a delimiter, "size", "oid <hex>" lines and a flush; the answer is
 * "size" and then "<hex> <size>" per object ("<hex> " when the server
 * does not have it), and a flush.
 */
#include "remote-object-info.h"
#include "error.h"
#include "strbuf.h"
#include <netdb.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

extern char **environ;

#define PKT_MAX 65520

struct conn {
	int in, out;   /* read from in, write to out */
	pid_t pid;     /* the upload-pack child, or 0 */
};

static int write_all(int fd, const void *buf, size_t len, struct gp_error *err)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return gp_error_errno(err, "remote-object-info: unable to write to the remote");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len, struct gp_error *err)
{
	char *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return gp_error_errno(err, "remote-object-info: unable to read from the remote");
		if (!n)
			return gp_error_set(err, GP_EPROTO,
					    "remote-object-info: the remote hung up unexpectedly");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Append one pkt-line holding data (or a special packet "0000"/"0001"). */
static void pkt_add(struct strbuf *sb, const char *data)
{
	strbuf_addf(sb, "%04zx%s", strlen(data) + 4, data);
}

/*
 * Read one pkt-line into line (without its trailing LF). Returns 1 for
 * data, 0 for a flush, 2 for a delimiter or response end, or an error.
 */
static int pkt_read(int fd, struct strbuf *line, struct gp_error *err)
{
	char hdr[5];
	unsigned len = 0;
	int ret = read_all(fd, hdr, 4, err);
	if (ret)
		return ret;
	hdr[4] = '\0';
	for (int i = 0; i < 4; i++) {
		char c = hdr[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return gp_error_set(err, GP_EPROTO,
					    "remote-object-info: bad packet length '%s'", hdr);
		len = len * 16 + (unsigned)v;
	}
	strbuf_reset(line);
	if (len == 0)
		return 0;
	if (len < 4)
		return 2;
	if (len > PKT_MAX)
		return gp_error_set(err, GP_EPROTO, "remote-object-info: packet of %u bytes", len);
	strbuf_grow(line, len - 4);
	ret = read_all(fd, line->buf, len - 4, err);
	if (ret)
		return ret;
	strbuf_setlen(line, len - 4);
	if (line->len && line->buf[line->len - 1] == '\n')
		strbuf_setlen(line, line->len - 1);
	return 1;
}

static int connect_git(const char *url, struct conn *c, struct gp_error *err)
{
	const char *hostport = url + strlen("git://"), *path = strchr(hostport, '/');
	char *host, *port = NULL, *colon;
	struct addrinfo hints, *res = NULL, *ai;
	struct strbuf req = STRBUF_INIT, pkt = STRBUF_INIT;
	int fd = -1, ret = 0;

	if (!path)
		return gp_error_set(err, GP_EINVAL, "remote-object-info: no path in '%s'", url);
	host = xstrndup(hostport, (size_t)(path - hostport));
	colon = strrchr(host, ':');
	if (colon && !strchr(colon, ']')) {
		*colon = '\0';
		port = colon + 1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host[0] == '[' ? host + 1 : host, port && *port ? port : "9418",
			&hints, &res)) {
		ret = gp_error_set(err, GP_EIO, "remote-object-info: unable to look up %s", host);
		goto out;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		ret = gp_error_errno(err, "remote-object-info: unable to connect to %s", host);
		goto out;
	}
	/* "git-upload-pack <path>\0host=<host>\0\0version=2\0" */
	strbuf_addf(&req, "git-upload-pack %s", path);
	strbuf_addch(&req, '\0');
	strbuf_addf(&req, "host=%.*s", (int)(path - hostport), hostport);
	strbuf_addch(&req, '\0');
	strbuf_addch(&req, '\0');
	strbuf_addstr(&req, "version=2");
	strbuf_addch(&req, '\0');
	strbuf_addf(&pkt, "%04zx", req.len + 4);
	strbuf_addbuf(&pkt, &req);
	ret = write_all(fd, pkt.buf, pkt.len, err);
	c->in = c->out = fd;
	c->pid = 0;
out:
	if (ret && fd >= 0)
		close(fd);
	strbuf_release(&req);
	strbuf_release(&pkt);
	free(host);
	return ret;
}

static int connect_local(const char *path, struct conn *c, struct gp_error *err)
{
	int to_child[2], from_child[2], ret;
	struct strbuf quoted = STRBUF_INIT, env_proto = STRBUF_INIT;
	posix_spawn_file_actions_t fa;
	char **env;
	size_t nr_env = 0;
	char *script;

	strbuf_addch(&quoted, '\'');
	for (const char *p = path; *p; p++)
		if (*p == '\'')
			strbuf_addstr(&quoted, "'\\''");
		else
			strbuf_addch(&quoted, *p);
	strbuf_addch(&quoted, '\'');
	script = xstrfmt("git-upload-pack %s", quoted.buf);
	char *argv[] = { "sh", "-c", script, NULL };
	while (environ[nr_env])
		nr_env++;
	env = xcalloc(nr_env + 2, sizeof(*env));
	for (size_t i = 0, j = 0; i < nr_env; i++)
		if (strncmp(environ[i], "GIT_PROTOCOL=", 13))
			env[j++] = environ[i];
	strbuf_addstr(&env_proto, "GIT_PROTOCOL=version=2");
	for (size_t i = 0;; i++)
		if (!env[i]) {
			env[i] = env_proto.buf;
			break;
		}
	if (pipe(to_child) || pipe(from_child)) {
		ret = gp_error_errno(err, "remote-object-info: pipe");
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
	posix_spawn_file_actions_addclose(&fa, to_child[0]);
	posix_spawn_file_actions_addclose(&fa, to_child[1]);
	posix_spawn_file_actions_addclose(&fa, from_child[0]);
	posix_spawn_file_actions_addclose(&fa, from_child[1]);
	ret = posix_spawn(&c->pid, "/bin/sh", &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(to_child[0]);
	close(from_child[1]);
	if (ret) {
		errno = ret;
		close(to_child[1]);
		close(from_child[0]);
		ret = gp_error_errno(err, "remote-object-info: unable to run git-upload-pack");
		goto out;
	}
	c->out = to_child[1];
	c->in = from_child[0];
out:
	free(env);
	free(script);
	strbuf_release(&quoted);
	strbuf_release(&env_proto);
	return ret;
}

static void disconnect(struct conn *c)
{
	int status;
	if (c->out >= 0 && c->out != c->in)
		close(c->out);
	if (c->in >= 0)
		close(c->in);
	if (c->pid > 0)
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
}

int remote_object_info_fd(int in, int out, int algo, const struct object_id *oids,
			  size_t nr, uint64_t *sizes, bool *found, struct gp_error *err)
{
	struct conn c = { in, out, 0 };
	struct strbuf line = STRBUF_INIT, req = STRBUF_INIT;
	bool has_object_info = false, has_format = false;
	char hex[GP_MAX_HEXSZ + 1];
	int ret;

	for (size_t i = 0; i < nr; i++)
		found[i] = false;

	/* the capability advertisement */
	while ((ret = pkt_read(c.in, &line, err)) == 1) {
		if (!strcmp(line.buf, "object-info") || starts_with(line.buf, "object-info="))
			has_object_info = true;
		else if (starts_with(line.buf, "object-format="))
			has_format = true;
	}
	if (ret < 0)
		goto out;
	if (!has_object_info) {
		ret = gp_error_set(err, GP_EPROTO,
				   "object-info capability is not enabled on the server");
		goto out;
	}
	pkt_add(&req, "command=object-info\n");
	if (has_format) {
		char *fmt = xstrfmt("object-format=%s\n", gp_hash_algos[algo].name);
		pkt_add(&req, fmt);
		free(fmt);
	}
	strbuf_addstr(&req, "0001");
	pkt_add(&req, "size\n");
	for (size_t i = 0; i < nr; i++) {
		char *l = xstrfmt("oid %s\n", oid_to_hex_r(hex, &oids[i]));
		pkt_add(&req, l);
		free(l);
	}
	strbuf_addstr(&req, "0000");
	ret = write_all(c.out, req.buf, req.len, err);
	if (ret)
		goto out;

	/* "size", then one line an object, in the order asked */
	ret = pkt_read(c.in, &line, err);
	if (ret == 1 && strcmp(line.buf, "size"))
		ret = gp_error_set(err, GP_EPROTO, "remote-object-info: unexpected '%s'", line.buf);
	for (size_t i = 0; ret == 1 && i < nr; i++) {
		const char *sp;
		ret = pkt_read(c.in, &line, err);
		if (ret != 1)
			break;
		sp = strchr(line.buf, ' ');
		if (!sp || strncmp(line.buf, oid_to_hex_r(hex, &oids[i]), (size_t)(sp - line.buf)) ||
		    (size_t)(sp - line.buf) != strlen(hex)) {
			ret = gp_error_set(err, GP_EPROTO, "remote-object-info: unexpected '%s'",
					   line.buf);
			break;
		}
		if (sp[1]) {
			char *end;
			errno = 0;
			sizes[i] = strtoull(sp + 1, &end, 10);
			if (errno || *end) {
				ret = gp_error_set(err, GP_EPROTO,
						   "remote-object-info: bad size in '%s'", line.buf);
				break;
			}
			found[i] = true;
		}
	}
	if (ret == 1)
		ret = 0;
	else if (ret == 0 || ret == 2)
		ret = gp_error_set(err, GP_EPROTO, "remote-object-info: the answer ended early");
	if (!ret)
		ret = write_all(c.out, "0000", 4, err);
out:
	strbuf_release(&line);
	strbuf_release(&req);
	return ret < 0 ? ret : 0;
}

int remote_object_info(const char *url, int algo, const struct object_id *oids,
		       size_t nr, uint64_t *sizes, bool *found, struct gp_error *err)
{
	struct conn c = { -1, -1, 0 };
	void (*old_pipe)(int);
	int ret;

	if (starts_with(url, "git://"))
		ret = connect_git(url, &c, err);
	else if (starts_with(url, "file://"))
		ret = connect_local(url + strlen("file://"), &c, err);
	else if (!strstr(url, "://") && !strchr(url, ':'))
		ret = connect_local(url, &c, err);
	else
		return gp_error_set(err, GP_EINVAL,
				    "remote-object-info: '%s': only git:// and file:// are supported",
				    url);
	if (ret)
		return ret;
	/* a remote that hangs up is an error to report, not a signal to die of */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	ret = remote_object_info_fd(c.in, c.out, algo, oids, nr, sizes, found, err);
	disconnect(&c);
	signal(SIGPIPE, old_pipe);
	return ret;
}
