/*
 * odb.h: one object lookup over everything a repository stores: its
 * packs, its loose objects, and those of its alternates
 * (objects/info/alternates, followed as deep as git follows them; what
 * is skipped is reported in odb_warnings() in git's words).
 *
 * Lookup order: the empty tree (which git treats as always present),
 * each directory's multi-pack-index, the packs no MIDX covers (the pack
 * that answered last first, then newest first), then loose objects. A
 * bad MIDX is reported in odb_warnings() and ignored; a MIDX entry whose
 * pack is missing or broken makes the lookup search every pack.
 *
 * An .idx that fails validation is skipped and its message kept in
 * odb_warnings(), so that one corrupt pack does not make the rest of the
 * repository unreadable; the caller decides whether to print them.
 *
 * A struct odb is not thread-safe (it owns one pack_reader); open one
 * per thread, or share its packs through packfile.h.
 */
#ifndef GP_ODB_H
#define GP_ODB_H

#include "object.h"

struct gp_error;
struct packed_git;
struct midx;

struct odb;

/*
 * A hook for objects stored nowhere, which reading (not odb_has_object())
 * calls once per lookup before giving up: a partial clone fetches the
 * object from its promisor remote there. Returns 0 when the object may
 * be stored now (the odb looks again).
 */
typedef int odb_missing_fn(void *data, const struct object_id *oid);

/* Errors: GP_EIO when objdir cannot be read. */
int odb_open(struct odb **out, const char *objdir, int algo, struct gp_error *err);
enum odb_open_flags {
	ODB_NO_MIDX = 1 << 0,  /* ignore multi-pack-indexes (core.multiPackIndex=false) */
};
int odb_open_flags(struct odb **out, const char *objdir, int algo, unsigned flags,
		   struct gp_error *err);
void odb_free(struct odb *odb);
void odb_set_missing_hook(struct odb *odb, odb_missing_fn *fn, void *data);
/*
 * Add an alternate object directory (and the alternates it names), as
 * GIT_ALTERNATE_OBJECT_DIRECTORIES does. Errors: GP_EIO when it cannot
 * be resolved.
 */
int odb_add_alternate(struct odb *odb, const char *objdir, struct gp_error *err);

enum object_source {
	OBJECT_LOOSE = 1,
	OBJECT_PACKED,
};

struct object_info {
	enum object_type type;
	uint64_t size;
	uint64_t disk_size;       /* with OI_DISK_SIZE */
	struct object_id delta_base; /* with OI_DELTA_BASE; null if none */
	enum object_source source;
	struct packed_git *pack;  /* OBJECT_PACKED: borrowed */
	uint64_t pack_ofs;
};

enum object_info_flags {
	OI_DISK_SIZE = 1 << 0,
	OI_DELTA_BASE = 1 << 1,
};

/*
 * Errors: GP_ENOTFOUND, GP_ECORRUPT (the object's storage is damaged;
 * the message names the file and offset), GP_EIO.
 */
int odb_read_object_info(struct odb *odb, const struct object_id *oid,
			 struct object_info *info, unsigned flags,
			 struct gp_error *err);
/* *data is malloc'd with a trailing NUL; caller frees. Errors as above. */
int odb_read_object(struct odb *odb, const struct object_id *oid,
		    enum object_type *type, unsigned char **data, size_t *size,
		    struct gp_error *err);
bool odb_has_object(struct odb *odb, const struct object_id *oid);
/*
 * Where oid is stored, without reading it: an opened pack and the
 * offset of its entry, or else the objects directory holding it loose
 * (borrowed, valid until odb_free()). False when it is stored nowhere,
 * including the empty tree when no copy of it is stored.
 */
bool odb_locate(struct odb *odb, const struct object_id *oid,
		struct packed_git **pack, uint64_t *ofs, const char **loose_dir);

/*
 * The bytes of delta bases the odb keeps to read objects faster (0: the
 * default, 96 MiB); lowering it drops the oldest.
 */
void odb_set_cache_limit(struct odb *odb, size_t bytes);

/* Write a loose object into the odb's own directory. */
int odb_write_object(struct odb *odb, enum object_type type, const void *data,
		     size_t len, struct object_id *oid, struct gp_error *err);

/*
 * Call fn for every object in every pack and loose directory (including
 * alternates), in no particular order and possibly more than once.
 */
typedef int odb_each_fn(const struct object_id *oid, void *data);
int odb_for_each_object(struct odb *odb, odb_each_fn *fn, void *data);

/*
 * Look at the pack directories again (new packs, a replaced MIDX), as a
 * lookup that misses does by itself; for a caller that has just written
 * packs. True when anything changed. Pack indexes stay valid.
 */
bool odb_reprepare(struct odb *odb);

/*
 * Whether bitmap readers (pack-bitmap.h) hash each .bitmap file whole
 * when they open it, to check its trailing checksum: yes by default. A
 * server that opens the bitmaps for each request turns it off, as git's
 * readers never hash: the structure is still checked at open and every
 * read is bounded, and fsck and "rev-list --test-bitmap" check the hash.
 */
void odb_set_verify_bitmaps(struct odb *odb, bool verify);
bool odb_verify_bitmaps(const struct odb *odb);

/* The packs, local ones first; index < odb_nr_packs(). */
size_t odb_nr_packs(const struct odb *odb);
struct packed_git *odb_pack(const struct odb *odb, size_t index);
/* Whether any alternate object directory is attached. */
bool odb_has_alternates(const struct odb *odb);
/* Whether pack index came from the odb's own directory. */
bool odb_pack_is_local(const struct odb *odb, size_t index);

/*
 * The MIDX of the odb's own pack directory, when it has a usable one
 * (borrowed; NULL otherwise), and the loaded pack behind one of its
 * pack_int_ids (NULL when that pack is missing).
 */
struct midx *odb_midx(const struct odb *odb);
/*
 * Check every entry of every MIDX (own and alternates': pack ids, large
 * offsets), as lookups check them lazily; a damaged MIDX is dropped with
 * its warning (odb_warnings()), as a lookup drops it. For commands that
 * are about to read every object anyway. O(objects in the MIDXs).
 */
void odb_check_midx_entries(struct odb *odb);
struct packed_git *odb_midx_pack(const struct odb *odb, uint32_t pack_int_id);

const char *odb_objdir(const struct odb *odb);

/*
 * The alternate object directories, in the order git reads them (depth
 * first, each listed once): index < odb_nr_alternates(). The path is
 * as git shows it ("alternate:" of count-objects -v): absolute, with
 * "." and ".." resolved in the text but symbolic links kept (borrowed,
 * valid until odb_free()). As in git, the alternates file of a directory
 * more than 5 levels below the odb's own is not read (so at most 6
 * levels are used), with a warning.
 */
size_t odb_nr_alternates(const struct odb *odb);
const char *odb_alternate(const struct odb *odb, size_t index);
int odb_algo(const struct odb *odb);

/* Problems found while opening (bad .idx files, bad alternates). */
size_t odb_nr_warnings(const struct odb *odb);
const char *odb_warning(const struct odb *odb, size_t index);

#endif
