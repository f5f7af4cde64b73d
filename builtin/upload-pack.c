/*
 * builtin/upload-pack.c: gitpack upload-pack, the server side of git
 * fetch and git clone over one connection (stdin/stdout), as git runs
 * it: over ssh, from git daemon, from git http-backend (--stateless-rpc),
 * or with clone --upload-pack. The protocol version comes from
 * GIT_PROTOCOL.
 */
#include "../builtin.h"
#include "../error.h"
#include "../parse-options.h"
#include "../pkt-line.h"
#include "../repository.h"
#include "../upload-pack.h"
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const upload_pack_usage[] = {
	"git upload-pack [--[no-]strict] [--timeout=<n>] [--stateless-rpc]\n"
	"                [--advertise-refs] <directory>",
	NULL,
};

/*
 * git's enter_repo(): <dir>, <dir>.git, <dir>/.git, <dir>.git/.git, in
 * that order unless strict; a git directory either way.
 */
static struct repository *open_repo(const char *dir, bool strict)
{
	static const char *const suffixes[] = { "/.git", "", ".git/.git", ".git" };
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo = NULL;
	size_t n = strict ? 1 : ARRAY_SIZE(suffixes);
	const char *const *list = strict ? (const char *const[]){ "" } : suffixes;

	for (size_t i = 0; i < n; i++) {
		char *path = xstrfmt("%s%s", dir, list[i]);
		struct stat st;
		/* a directory, or a gitfile ("gitdir: <path>") naming one */
		if (stat(path, &st) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
			free(path);
			continue;
		}
		if (!repo_open_gitdir(&repo, path, &err)) {
			free(path);
			return repo;
		}
		/* a directory that is no repository: try the next spelling */
		if (err.code != GP_ENOTFOUND) {
			free(path);
			die_error(&err);
		}
		gp_error_clear(&err);
		free(path);
	}
	die("'%s' does not appear to be a git repository", dir);
}

int cmd_upload_pack(int argc, const char **argv, struct repository *unused)
{
	struct upload_pack_options opts = UPLOAD_PACK_OPTIONS_INIT;
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo;
	struct pkt_buffered_sink *out = xmalloc(sizeof(*out));
	int stateless = 0, advertise = 0, strict = 0, timeout = 0;
	struct option options[] = {
		OPT_BOOL(0, "stateless-rpc", &stateless,
			 "quit after a single request/response exchange"),
		OPT_BOOL(0, "http-backend-info-refs", &advertise,
			 "serve up the info/refs for git-http-backend"),
		OPT_BOOL(0, "advertise-refs", &advertise,
			 "serve up the info/refs for git-http-backend"),
		OPT_BOOL(0, "strict", &strict,
			 "do not try <directory>/.git/ if <directory> is no Git directory"),
		OPT_INTEGER(0, "timeout", &timeout, "interrupt transfer after <n> seconds of inactivity"),
		OPT_END(),
	};
	int ret;

	(void)unused;
	argc = parse_options(argc, argv, options, upload_pack_usage);
	if (argc != 1)
		usage_with_options(upload_pack_usage, options);
	/* a client that goes away is a write error, not a signal */
	signal(SIGPIPE, SIG_IGN);
	pkt_trace_identity("upload-pack");
	/*
	 * As git: a server that is itself a partial clone does not fetch
	 * what it lacks for a client, unless GIT_NO_LAZY_FETCH=0 says so.
	 */
	setenv("GIT_NO_LAZY_FETCH", "1", 0);
	repo = open_repo(argv[0], strict);
	/* as git: the process (and any hook it starts) works in the git directory */
	if (chdir(repo->gitdir))
		die("cannot chdir to '%s': %s", repo->gitdir, strerror(errno));
	opts.version = upload_pack_protocol_version(getenv("GIT_PROTOCOL"));
	opts.stateless_rpc = stateless;
	opts.advertise_refs = advertise;
	opts.strict = strict;
	opts.timeout = timeout;
	opts.hook_allowed = true;
	opts.agent = "gitpack/" GITPACK_VERSION;
	pkt_buffered_sink_init(out, 1);
	ret = upload_pack(repo, 0, &out->sink, &opts, &err);
	/* what was said before a failure still goes out: the ERR packet, say */
	if (pkt_sink_flush(&out->sink, ret ? NULL : &err) && !ret)
		ret = -1;
	free(out);
	repo_free(repo);
	if (ret)
		die_error(&err);
	return 0;
}
