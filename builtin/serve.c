/*
 * builtin/serve.c: gitpack serve, the smart-HTTP and git:// server
 * (server/serve.h). Options override the serve.* keys of the system and
 * global config (there is no repository of its own to read).
 */
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../pack-cache.h"
#include "../parse-options.h"
#include "../server/auth.h"
#include "../server/metrics.h"
#include "../server/serve.h"
#include "../server/tls.h"
#include <fcntl.h>
#include <unistd.h>

static const char *const serve_usage[] = {
	"gitpack serve --base-path=<dir> [--export-all] [--http=<host>:<port>]\n"
	"              [--git=<host>:<port>] [--workers=<n>] [--access-log=<file>] [...]",
	NULL,
};

/* A serve.* integer key: seconds, counts, sizes (with k/m/g). */
struct int_key {
	const char *key;
	int *value;
};

static void read_config(struct serve_options *o, const char **base, bool *export_all,
			struct opt_string_list *http, struct opt_string_list *https,
			struct opt_string_list *git, const char **tls_cert, const char **tls_key,
			const char **log, int *header_s, int *body_s, int *idle_s, int *queue_s,
			int *max_body_mb, int *max_bodies_mb, int *gen_queue_s, const char **auth_file, const char **cache_dir, const char **cache_size,
			int *cache_min, int *cache_age)
{
	struct config_set cs = CONFIG_SET_INIT;
	struct gp_error err = GP_ERROR_INIT;
	const struct int_key ints[] = {
		{ "serve.workers", &o->workers },
		{ "serve.maxconnections", &o->max_connections },
		{ "serve.maxqueue", &o->max_queue },
		{ "serve.queuetimeout", queue_s },
		{ "serve.headertimeout", header_s },
		{ "serve.bodytimeout", body_s },
		{ "serve.idletimeout", idle_s },
		{ "serve.timeout", &o->io_timeout_s },
		{ "serve.maxbodymb", max_body_mb },
		{ "serve.maxbodiesmb", max_bodies_mb },
		{ "serve.maxgenerationsperrepo", &o->max_generations_per_repo },
		{ "serve.maxgenerationsperclient", &o->max_generations_per_client },
		{ "serve.generationqueue", &o->gen_queue },
		{ "serve.generationqueuetimeout", gen_queue_s },
		{ "serve.cacheminoccurrences", cache_min },
		{ "serve.cachemaxage", cache_age },
	};
	const char *v;

	if (config_set_load_standard(&cs, NULL, &err))
		die_error(&err);
	for (size_t i = 0; i < ARRAY_SIZE(ints); i++) {
		int ret = config_get_int(&cs, ints[i].key, ints[i].value, &err);
		if (ret && ret != GP_ENOTFOUND)
			die_error(&err);
		gp_error_clear(&err);
	}
	if (!config_get_string(&cs, "serve.basepath", &v))
		*base = xstrdup(v);
	*export_all = config_get_bool_or(&cs, "serve.exportall", *export_all);
	if (!config_get_string(&cs, "serve.accesslog", &v))
		*log = xstrdup(v);
	o->enable_receive_pack = config_get_bool_or(&cs, "serve.receivepack", false);
	o->enable_upload_archive = config_get_bool_or(&cs, "serve.uploadarchive", false);
	if (!config_get_string(&cs, "serve.tlscert", &v))
		*tls_cert = xstrdup(v);
	if (!config_get_string(&cs, "serve.tlskey", &v))
		*tls_key = xstrdup(v);
	if (!config_get_string(&cs, "serve.authfile", &v))
		*auth_file = xstrdup(v);
	if (!config_get_string(&cs, "serve.cachedir", &v))
		*cache_dir = xstrdup(v);
	if (!config_get_string(&cs, "serve.cachemaxsize", &v))
		*cache_size = xstrdup(v);
	/* every serve.http / serve.git entry is one more address */
	for (size_t i = 0; i < cs.nr; i++) {
		const struct config_entry *e = &cs.items[i];
		struct opt_string_list *list = !strcmp(e->key, "serve.http") ? http :
					       !strcmp(e->key, "serve.https") ? https :
					       !strcmp(e->key, "serve.git") ? git : NULL;
		if (!list || !e->value)
			continue;
		ALLOC_GROW(list->items, list->nr + 1, list->alloc);
		list->items[list->nr++] = xstrdup(e->value);
	}
	config_set_release(&cs);
}


int cmd_serve(int argc, const char **argv, struct repository *unused)
{
	struct serve_options o = SERVE_OPTIONS_INIT;
	struct opt_string_list http = { 0 }, git = { 0 }, cfg_http = { 0 }, cfg_git = { 0 };
	struct opt_string_list enable = { 0 }, disable = { 0 }, https = { 0 }, cfg_https = { 0 };
	const char *tls_cert = NULL, *tls_key = NULL;
	struct serve_tls *tls = NULL;
	struct gp_error err = GP_ERROR_INIT;
	const char *base = NULL, *log = NULL;
	bool export_all = false;
	int export_all_opt = -1;
	int header_s = 10, body_s = 30, idle_s = 60, queue_s = 30, max_body_mb = 64;
	int max_bodies_mb = 1024;
	int gen_queue_s = 30;
	struct pack_cache_options co = PACK_CACHE_OPTIONS_INIT;
	const char *cache_dir = NULL, *cache_size = NULL;
	int cache_min = (int)co.min_occurrences, cache_age = (int)co.max_age_s;
	struct pack_cache *cache = NULL;
	const char *auth_file = NULL;
	struct serve_auth *auth = NULL;
	int ret;

	(void)unused;
	read_config(&o, &base, &export_all, &cfg_http, &cfg_https, &cfg_git, &tls_cert, &tls_key,
		    &log, &header_s, &body_s,
		    &idle_s, &queue_s, &max_body_mb, &max_bodies_mb, &gen_queue_s, &auth_file, &cache_dir, &cache_size, &cache_min, &cache_age);
	{
		struct option options[] = {
			OPT_STRING(0, "base-path", &base, "dir",
				   "serve the repositories under <dir>"),
			OPT_BOOL(0, "export-all", &export_all_opt,
				 "serve repositories without git-daemon-export-ok"),
			OPT_STRING_LIST(0, "http", &http, "host:port",
					"serve smart HTTP on <host>:<port> (port 0: any free one)"),
			OPT_STRING_LIST(0, "git", &git, "host:port", "serve git:// on <host>:<port>"),
			OPT_STRING_LIST(0, "https", &https, "host:port",
					"serve smart HTTP over TLS on <host>:<port>"),
			OPT_STRING(0, "tls-cert", &tls_cert, "file",
				   "the certificate chain for --https (PEM)"),
			OPT_STRING(0, "tls-key", &tls_key, "file", "its private key (PEM)"),
			OPT_STRING_LIST(0, "enable", &enable, "service",
					"serve receive-pack or upload-archive too (run by stock git)"),
			OPT_STRING_LIST(0, "disable", &disable, "service",
					"do not serve receive-pack or upload-archive"),
			OPT_INTEGER(0, "workers", &o.workers, "threads answering requests"),
			OPT_INTEGER(0, "max-connections", &o.max_connections,
				    "connections open at once"),
			OPT_INTEGER(0, "max-queue", &o.max_queue,
				    "requests waiting for a worker before 429"),
			OPT_INTEGER(0, "queue-timeout", &queue_s,
				    "seconds a request may wait for a worker"),
			OPT_INTEGER(0, "header-timeout", &header_s,
				    "seconds a client has to send a request head"),
			OPT_INTEGER(0, "body-timeout", &body_s,
				    "seconds of silence allowed while a body is read"),
			OPT_INTEGER(0, "idle-timeout", &idle_s,
				    "seconds an idle keep-alive connection is kept"),
			OPT_INTEGER(0, "timeout", &o.io_timeout_s,
				    "seconds of silence allowed during an answer"),
			OPT_INTEGER(0, "max-body-mb", &max_body_mb,
				    "largest request body, decoded, in MiB"),
			OPT_INTEGER(0, "max-bodies-mb", &max_bodies_mb,
				    "request bodies held at once, all connections, in MiB"),
			OPT_INTEGER(0, "max-generations-per-repo", &o.max_generations_per_repo,
				    "pack generations at once for one repository (0: any)"),
			OPT_INTEGER(0, "max-generations-per-client", &o.max_generations_per_client,
				    "pack generations at once for one client address (0: any)"),
			OPT_INTEGER(0, "generation-queue", &o.gen_queue,
				    "generations that may wait for a slot before 429"),
			OPT_INTEGER(0, "generation-queue-timeout", &gen_queue_s,
				    "seconds a generation may wait for a slot"),
			OPT_STRING(0, "access-log", &log, "file",
				   "append one line per request to <file> (- for stderr)"),
			OPT_STRING(0, "auth-file", &auth_file, "file",
				   "HTTP Basic users: \"user:hash\" lines of crypt(3) hashes"),
			OPT_STRING(0, "cache-dir", &cache_dir, "dir",
				   "keep generated pack streams in <dir> (the pack cache)"),
			OPT_STRING(0, "cache-max-size", &cache_size, "size",
				   "bytes the cache may hold (k, m, g suffixes; default 10g)"),
			OPT_INTEGER(0, "cache-min-occurrences", &cache_min,
				    "keep a pack from the n-th identical request on (default 2)"),
			OPT_INTEGER(0, "cache-max-age", &cache_age,
				    "seconds an entry is served (default 300)"),
			OPT_END(),
		};
		argc = parse_options(argc, argv, options, serve_usage);
		if (argc)
			usage_with_options(serve_usage, options);
	}
	for (size_t i = 0; i < enable.nr + disable.nr; i++) {
		bool on = i < enable.nr;
		const char *svc = on ? enable.items[i] : disable.items[i - enable.nr];
		if (!strcmp(svc, "receive-pack"))
			o.enable_receive_pack = on;
		else if (!strcmp(svc, "upload-archive"))
			o.enable_upload_archive = on;
		else if (strcmp(svc, "upload-pack") || !on)
			die("unknown service '%s' (receive-pack, upload-archive)", svc);
	}
	if (export_all_opt >= 0)
		export_all = export_all_opt;
	if (!base)
		die("no base path: give --base-path=<dir> (or serve.basePath)");
	if (o.workers < 1 || o.max_connections < 1 || o.max_queue < 0 || header_s < 1 ||
	    body_s < 1 || idle_s < 0 || queue_s < 0 || o.io_timeout_s < 1 || max_body_mb < 1 ||
	    max_bodies_mb < 1 ||
	    o.max_generations_per_repo < 0 || o.max_generations_per_client < 0 ||
	    o.gen_queue < 0 || gen_queue_s < 0)
		die("serve: every limit must be positive");
	/* the command line replaces the config's addresses, as git's options do */
	if (!http.nr && !git.nr && !https.nr) {
		http = cfg_http;
		https = cfg_https;
		git = cfg_git;
	}
	if (https.nr) {
		if (!tls_cert || !tls_key)
			die("--https needs --tls-cert and --tls-key");
		if (serve_tls_open(&tls, tls_cert, tls_key, &err))
			die_error(&err);
	}
	o.https_addrs = https.items;
	o.nr_https = https.nr;
	o.tls = tls;
	o.base_path = base;
	o.export_all = export_all;
	o.http_addrs = http.items;
	o.nr_http = http.nr;
	o.git_addrs = git.items;
	o.nr_git = git.nr;
	o.header_timeout_ms = header_s * 1000;
	o.body_timeout_ms = body_s * 1000;
	o.idle_timeout_ms = idle_s * 1000;
	o.queue_timeout_ms = queue_s * 1000;
	o.max_body = (uint64_t)max_body_mb << 20;
	o.max_bodies = (uint64_t)max_bodies_mb << 20;
	o.gen_queue_timeout_ms = gen_queue_s * 1000;
	o.agent = "gitpack/" GITPACK_VERSION;
	o.listen_report = stdout;
	o.log_fd = 2;
	if (log && strcmp(log, "-")) {
		o.log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (o.log_fd < 0)
			die("cannot open access log '%s': %s", log, strerror(errno));
	}
	if (auth_file) {
		if (serve_auth_open(&auth, auth_file, &err))
			die_error(&err);
		o.auth = auth;
	}
	if (cache_dir) {
		if (cache_size && !config_parse_uint64(cache_size, &co.max_bytes))
			die("bad --cache-max-size '%s'", cache_size);
		if (cache_min < 1 || cache_age < 1)
			die("serve: --cache-min-occurrences and --cache-max-age must be positive");
		co.dir = cache_dir;
		co.min_occurrences = (unsigned)cache_min;
		co.max_age_s = (unsigned)cache_age;
		if (pack_cache_open(&cache, &co, &err))
			die_error(&err);
		o.cache = cache;
	}
	/* as git upload-pack: a server that is a partial clone does not fetch for a client */
	setenv("GIT_NO_LAZY_FETCH", "1", 0);
	o.metrics = serve_metrics_new();
	ret = serve_run(&o, &err);
	serve_metrics_free(o.metrics);
	pack_cache_free(cache);
	serve_auth_free(auth);
	serve_tls_free(tls);
	/* the config's addresses are copies; the command line's point into argv */
	{
		struct opt_string_list *cfg[] = { &cfg_http, &cfg_https, &cfg_git };
		for (size_t i = 0; i < ARRAY_SIZE(cfg); i++) {
			for (size_t j = 0; j < cfg[i]->nr; j++)
				free((char *)cfg[i]->items[j]);
			free(cfg[i]->items);
		}
		if (http.items != cfg_http.items)
			free(http.items);
		if (https.items != cfg_https.items)
			free(https.items);
		if (git.items != cfg_git.items)
			free(git.items);
		free(enable.items);
		free(disable.items);
	}
	if (ret)
		die_error(&err);
	return 0;
}
