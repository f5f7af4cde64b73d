/*
 * server-info.h: the files "dumb" transports read (git-update-server-info(1)):
 * $GIT_DIR/info/refs, every ref as "<id> TAB <name>" (an annotated tag
 * followed by "<peeled id> TAB <name>^{}"), and
 * $GIT_DIR/objects/info/packs, "P <pack name>" for each local pack and
 * an empty line. git repack updates them unless told not to
 * (repack.updateServerInfo, -n).
 */
#ifndef GP_SERVER_INFO_H
#define GP_SERVER_INFO_H

struct gp_error;
struct repository;

/* Rewrite both files, each atomically. Errors: GP_ECORRUPT, GP_EIO. */
int update_server_info(struct repository *repo, struct gp_error *err);

#endif
