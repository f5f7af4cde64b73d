/*
 * server-info.c: see server-info.h. Both files are small and rewritten
 * whole, through a temporary file renamed into place.
 */
#include "server-info.h"
#include "commit.h"
#include "error.h"
#include "hashfile.h"
#include "odb.h"
#include "packfile.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include <sys/stat.h>

static int write_whole(const char *path, const struct strbuf *sb, int algo,
		       struct gp_error *err)
{
	struct hashfile *f;
	int ret = hashfile_create(&f, path, algo, err);
	if (ret)
		return ret;
	hashfile_write(f, sb->buf, sb->len);
	return hashfile_commit(f, NULL, HASHFILE_NO_TRAILER, err);
}

struct refs_info {
	struct strbuf *out;
	struct odb *odb;
	int algo;
	struct gp_error *err;
};

/* What an annotated tag finally points at; false for other objects. */
static bool peel(struct odb *odb, int algo, const struct object_id *oid,
		 struct object_id *out)
{
	struct object_id cur = *oid;
	struct gp_error err = GP_ERROR_INIT;
	bool is_tag = false;
	for (int depth = 0; depth < 64; depth++) {
		struct object_info info;
		enum object_type type;
		unsigned char *buf;
		size_t size;
		struct tag_info tag;
		if (odb_read_object_info(odb, &cur, &info, 0, &err) || info.type != OBJ_TAG)
			break;
		if (odb_read_object(odb, &cur, &type, &buf, &size, &err))
			break;
		if (tag_parse(buf, size, algo, &tag, &err)) {
			free(buf);
			break;
		}
		free(buf);
		cur = tag.object;
		is_tag = true;
	}
	gp_error_clear(&err);
	*out = cur;
	return is_tag;
}

static int add_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	struct refs_info *ri = data;
	char hex[GP_MAX_HEXSZ + 1];
	struct object_id target;
	strbuf_addf(ri->out, "%s\t%s\n", oid_to_hex_r(hex, oid), refname);
	if ((flags & REF_KNOWS_PEELED) ? peeled != NULL : peel(ri->odb, ri->algo, oid, &target)) {
		if (flags & REF_KNOWS_PEELED)
			target = *peeled;
		strbuf_addf(ri->out, "%s\t%s^{}\n", oid_to_hex_r(hex, &target), refname);
	}
	return 0;
}

int update_server_info(struct repository *repo, struct gp_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct refs_info ri = { &sb, NULL, repo->hash_algo, err };
	char *path;
	int ret = repo_odb(repo, &ri.odb, err);

	if (ret)
		return ret;
	ret = refs_for_each(repo, "", add_ref, &ri, err);
	if (!ret) {
		path = repo_git_path(repo, "info");
		mkdir(path, 0777);
		free(path);
		path = repo_git_path(repo, "info/refs");
		ret = write_whole(path, &sb, repo->hash_algo, err);
		free(path);
	}
	strbuf_reset(&sb);
	odb_reprepare(ri.odb);
	for (size_t i = 0; !ret && i < odb_nr_packs(ri.odb); i++) {
		struct packed_git *p = odb_pack(ri.odb, i);
		if (odb_pack_is_local(ri.odb, i) && !access(p->idx_path, F_OK))
			strbuf_addf(&sb, "P %s\n", base_name(p->pack_path));
	}
	if (!ret) {
		strbuf_addch(&sb, '\n');
		path = repo_obj_path(repo, "info");
		mkdir(path, 0777);
		free(path);
		path = repo_obj_path(repo, "info/packs");
		ret = write_whole(path, &sb, repo->hash_algo, err);
		free(path);
	}
	strbuf_release(&sb);
	return ret;
}
