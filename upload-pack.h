/*
 * upload-pack.h: the serving side of git fetch and git clone
 * (gitprotocol-pack, gitprotocol-v2, gitprotocol-capabilities): the ref
 * advertisement, the negotiation of what the client has, and the pack
 * of what it lacks, generated in this process (pack-for-fetch.h).
 *
 * Protocol versions: 0 and 1 (one session: advertisement, wants,
 * shallow update, haves with multi_ack / multi_ack_detailed / no-done,
 * then the pack), and 2 (a capability advertisement, then commands:
 * ls-refs, fetch, object-info). One negotiation core serves both.
 *
 * The repository is only read. Every request is bounded (UPLOAD_PACK_MAX_*
 * below, and the pkt-line bounds of pkt-line.h); a request that breaks
 * the protocol or a bound gets an "ERR" packet where git sends one, and
 * the session ends with an error.
 *
 * Config, as git's (git-config(1)): uploadpack.hideRefs and
 * transfer.hideRefs, uploadpack.allowTipSHA1InWant,
 * allowReachableSHA1InWant, allowAnySHA1InWant, allowFilter,
 * allowRefInWant, allowSidebandAll, uploadpackfilter.allow and
 * uploadpackfilter.<kind>.allow, uploadpackfilter.tree.maxDepth,
 * uploadpack.keepAlive, uploadpack.packObjectsHook (protected config
 * only), lsrefs.unborn, transfer.advertiseSID,
 * transfer.advertiseObjectInfo, and the pack settings of
 * pack-for-fetch.h. GIT_NAMESPACE serves refs/namespaces/<ns>/ as if it
 * were the whole repository.
 */
#ifndef GP_UPLOAD_PACK_H
#define GP_UPLOAD_PACK_H

#include "util.h"

struct gp_error;
struct pkt_sink;
struct repository;

/* Bounds of one request (of each fetch, for protocol v2). */
#define UPLOAD_PACK_MAX_WANTS 1000000
#define UPLOAD_PACK_MAX_HAVES 4000000    /* over every negotiation round */
#define UPLOAD_PACK_MAX_SHALLOWS 1000000
#define UPLOAD_PACK_MAX_DEEPEN_NOT 4096
#define UPLOAD_PACK_MAX_PREFIXES 65536   /* ls-refs ref-prefix (git ignores more) */
#define UPLOAD_PACK_MAX_ROUNDS 100000    /* negotiation flushes in one session */
#define UPLOAD_PACK_MAX_REQUEST ((uint64_t)1 << 30) /* bytes read in one session */
#define UPLOAD_PACK_MAX_COMMANDS 100000  /* protocol v2 commands in one session */

/*
 * A server's say over the pack (gitpack serve's pack cache): after the
 * negotiation, upload-pack describes what decides the bytes of the pack
 * stream and hands the hook a way to make them. The hook sends the
 * stream to out: made now by generate() (into out, or into a tee that
 * also keeps it), or copied from a stream made before for the same key.
 *
 * The stream is everything from the pack's first byte to the end of
 * the fetch: side-band framed pack data, progress (band 2), and the
 * closing flush where the protocol has one. It does not hold what comes
 * before (acknowledgments, shallow-info, wanted-refs, the "packfile"
 * line), so one stream answers every request with the same key.
 *
 * key is canonical text, one item a line: the protocol's framing (v2 or
 * v0, the side-band size), progress, thin-pack, ofs-delta, include-tag,
 * the filter, whether missing promisor objects are allowed, the pack
 * settings, then the wants, the haves negotiation kept and the shallow
 * boundary, each sorted. It names no user and no repository: the hook
 * adds the repository and the state of its store.
 */
typedef int upload_pack_generate_fn(void *gen_data, struct pkt_sink *out,
				    struct gp_error *err);
/*
 * The hook returns 0, an error of generate() or of out, or GP_EBUSY when
 * the pack may not be made now (a server's limits): upload-pack then
 * tells the client so, on side-band 3 or in an ERR packet, and fails.
 */
typedef int upload_pack_pack_fn(void *data, const char *key, size_t key_len,
				upload_pack_generate_fn *generate, void *gen_data,
				struct pkt_sink *out, struct gp_error *err);

struct upload_pack_options {
	int version;          /* 0, 1 or 2: what GIT_PROTOCOL asked for */
	bool stateless_rpc;   /* one request and its answer (smart HTTP) */
	bool advertise_refs;  /* only the advertisement */
	bool strict;          /* the directory must be a git directory as given */
	int timeout;          /* seconds a peer may stay silent; 0: no limit */
	/*
	 * Whether the process may start uploadpack.packObjectsHook: only
	 * when it was set in protected config (system, global, command
	 * line), as git trusts it.
	 */
	bool hook_allowed;
	const char *agent;    /* the agent= capability, unless GIT_USER_AGENT says */
	/*
	 * The pack hook (NULL: the pack is made into the session's out).
	 * Not called when uploadpack.packObjectsHook makes the pack.
	 */
	upload_pack_pack_fn *pack_fn;
	void *pack_data;
	/*
	 * The whole request in memory (a smart-HTTP POST body, decoded),
	 * read instead of in_fd; it must outlive the call. NULL: in_fd.
	 */
	const void *request;
	size_t request_len;
};

#define UPLOAD_PACK_OPTIONS_INIT { .version = 0 }

/*
 * The protocol version GIT_PROTOCOL (a colon-separated list of
 * key=value items, gitprotocol-v2 "Initial Client Request") asks for:
 * the largest "version=N" that upload-pack speaks, else 0.
 */
int upload_pack_protocol_version(const char *git_protocol);

/*
 * Serve one session of opts->version, reading requests from in_fd and
 * writing answers to out. Returns 0 when the session ended as the
 * protocol allows (the client hung up between requests, or the pack was
 * sent), or an error: GP_EPROTO for a request that breaks the protocol
 * (an ERR packet was sent where git sends one), GP_ENOTFOUND for a want
 * we do not serve, GP_EIO when the connection failed, GP_ECORRUPT when
 * the repository is damaged. The message is git's ("git upload-pack:
 * not our ref <oid>") so that a command can print it after "fatal: ".
 */
int upload_pack(struct repository *repo, int in_fd, struct pkt_sink *out,
		const struct upload_pack_options *opts, struct gp_error *err);

#endif
