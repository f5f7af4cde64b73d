/*
 * remote-object-info.h: asking a remote for the sizes of objects
 * without fetching them: protocol v2's "object-info" command
 * (gitprotocol-v2 "object-info", gitprotocol-common pkt-lines).
 *
 * Transports: git://host[:port]/path (a TCP connection to git daemon)
 * and file://path or a plain path (git-upload-pack run through the
 * shell, as git runs it, with GIT_PROTOCOL=version=2).
 *
 * NEEDSWORK: ssh:// and http(s):// are not supported; the pkt-line
 * reading and writing here belong in a pkt-line module shared with
 * upload-pack when there is one.
 */
#ifndef GP_REMOTE_OBJECT_INFO_H
#define GP_REMOTE_OBJECT_INFO_H

#include "object.h"

struct gp_error;

/*
 * The sizes of oids[0..nr) (full ids of algo) at url: found[i] and
 * sizes[i] for each. Errors: GP_EINVAL for a transport not supported,
 * GP_EPROTO ("object-info capability is not enabled on the server", or
 * a malformed answer), GP_EIO when the remote cannot be reached.
 */
int remote_object_info(const char *url, int algo, const struct object_id *oids,
		       size_t nr, uint64_t *sizes, bool *found, struct gp_error *err);

/*
 * The exchange itself, over a connection already made: read the
 * server's advertisement from in, write the request to out, read the
 * answer from in. For remote_object_info() and the fuzz target. Errors
 * as above.
 */
int remote_object_info_fd(int in, int out, int algo, const struct object_id *oids,
			  size_t nr, uint64_t *sizes, bool *found, struct gp_error *err);

#endif
