/*
 * pack-objects.c: see pack-objects.h. The phases, in order:
 *
 *   locate   find each object's pack entry (or loose file) and read its
 *            stored header; a stored delta whose base is in the list is
 *            reused;
 *   chains   cut reused chains that loop or run deeper than depth;
 *   search   the delta window over the rest, on threads;
 *   write    bases before their deltas, copying what is reused.
 */
#include "pack-objects.h"
#include "commit.h"
#include "config.h"
#include "delta.h"
#include "delta-islands.h"
#include "error.h"
#include "hash.h"
#include "hashfile.h"
#include "loose.h"
#include "midx.h"
#include "ewah/ewah.h"
#include "odb.h"
#include "pack-bitmap.h"
#include "pack-write.h"
#include "pack-mtimes.h"
#include "packfile.h"
#include "progress.h"
#include "revision.h"
#include "strbuf.h"
#include "trace2.h"
#include "tree.h"
#include "zstream.h"
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_ENTRY UINT32_MAX
/* Objects this small are never worth a delta (git's bound too). */
#define MIN_DELTA_SIZE 50
/* Objects this large are stored whole (git's core.bigFileThreshold). */
#define BIG_FILE_THRESHOLD ((uint64_t)512 << 20)
#define MAX_THREADS 64
/*
 * Copying (and checking what is copied) reads the source packs from end to end; their mapped pages
 * would all count as ours (a 500 MB pack, 500 MB of RSS). Give them back
 * every DROP_EVERY bytes written; the page cache keeps them.
 */
#define DROP_EVERY ((uint64_t)16 << 20)

enum how_written {
	WRITE_WHOLE = 0,      /* inflate or read, then deflate */
	WRITE_REUSE_WHOLE,    /* copy the stored, compressed object */
	WRITE_REUSE_DELTA,    /* copy the stored, compressed delta */
	WRITE_NEW_DELTA,      /* the delta the search found */
};

struct po_entry {
	struct object_id oid;
	uint32_t name_hash;
	uint8_t type;          /* the object's type; OBJ_NONE until known */
	uint8_t stored_type;   /* its pack entry's type; OBJ_NONE when loose */
	uint8_t how;           /* enum how_written */
	uint8_t in_search;
	uint16_t depth;        /* of its delta chain in the new pack */
	uint16_t below;        /* depth of the reused deltas hanging below it */
	uint64_t size;         /* inflated size (of the delta when reused as one) */
	struct packed_git *pack;
	const char *loose_dir;
	uint64_t ofs;          /* entry offset in pack */
	uint32_t hdr_len;      /* stored header length, base reference included */
	uint32_t base;         /* delta base, an entry number; NO_ENTRY */
	/*
	 * WRITE_REUSE_DELTA against an object copied verbatim (which has
	 * no entry): that object's bit; else NO_ENTRY.
	 */
	uint32_t reused_base;
	unsigned char *delta_z;  /* WRITE_NEW_DELTA: the deflated delta */
	size_t delta_z_len;
	uint64_t delta_size;
	uint64_t out_ofs;
	uint32_t crc;
	uint32_t part;         /* which pack of a cut output it went into */
	bool written;
	/*
	 * A thin pack's preferred base: an object the receiver has, which
	 * the delta search may use as a base but which is not written.
	 */
	bool external;
	uint32_t mtime;        /* a cruft pack's: the object's last modification */
	bool reread;           /* its stored copy is damaged: read it through the odb */
};

/*
 * A run of bit positions whose objects verbatim reuse may copy from one
 * pack; whole: the run is the pack in offset order (bit and pack
 * position differ by bit_start). The writer notes where the copies
 * went: from a mark's pack offset on, out offset = pack offset + shift
 * (until the next mark).
 */
struct reuse_mark {
	uint64_t pack_ofs;
	int64_t shift;
};

struct reuse_range {
	struct packed_git *pack;
	uint32_t bit_start, bit_nr;
	bool whole;
	uint32_t prefix_nr;   /* whole: its first prefix_nr objects are all copied */
	struct reuse_mark *marks;
	size_t nr_marks, alloc_marks;
};

struct pack_objects {
	struct odb *odb;
	struct pack_objects_opts opts;
	int algo;
	size_t rawsz;
	struct po_entry *entries;
	uint32_t nr, alloc;
	uint32_t *slots;        /* oid hash table of entry numbers */
	size_t slots_mask;
	uint32_t nr_external;   /* entries that are preferred bases only */
	pthread_mutex_t odb_lock; /* odb reads from the search threads */
	bool cruft;             /* write a .mtimes with each pack */
	/*
	 * Verbatim reuse: objects copied from stored packs as they are (an
	 * offset delta's distance rewritten when gaps moved it), written
	 * first, range by range, in pack order. They are bits of reused,
	 * never entries: a clone's million objects cost a bitmap here.
	 */
	struct reuse_range *ranges;
	size_t nr_ranges;
	struct bitmap reused;
	const struct bitmap_order *reuse_order;  /* borrowed */
	uint32_t reuse_nr, reuse_packs;
	/* "Enumerating objects": from the walk until prepare(), preferred bases counted too */
	struct progress *enum_progress;
	uint64_t enumerated;
	/* thin pack from bitmaps: what the receiver has (borrowed) */
	const struct bitmap_result *haves;
	bool prepared;
	const struct bitmap_order *follow;   /* pack_objects_follow() */
	struct delta_islands *islands;       /* pack_objects_set_islands(); borrowed */
	const struct object_id *recent;      /* pack_objects_set_recent(); borrowed */
	size_t nr_recent;
	struct pack_objects_stats stats;
};

/* ------------------------------------------------------------------ */
/* The list                                                            */

static size_t oid_slot(const struct object_id *oid, size_t mask)
{
	uint64_t h;
	memcpy(&h, oid->hash, sizeof(h));
	return (size_t)h & mask;
}

static void grow_table_to(struct pack_objects *po, size_t nr_slots)
{
	free(po->slots);
	po->slots = xmalloc(sizeof(*po->slots) * nr_slots);
	memset(po->slots, 0xff, sizeof(*po->slots) * nr_slots);
	po->slots_mask = nr_slots - 1;
	for (uint32_t n = 0; n < po->nr; n++) {
		size_t i = oid_slot(&po->entries[n].oid, po->slots_mask);
		while (po->slots[i] != NO_ENTRY)
			i = (i + 1) & po->slots_mask;
		po->slots[i] = n;
	}
}

static void grow_table(struct pack_objects *po)
{
	grow_table_to(po, (po->slots_mask + 1) * 2);
}

/* Room for n more entries without growing on the way. */
static void reserve_entries(struct pack_objects *po, size_t n)
{
	size_t want = (size_t)po->nr + n, slots = po->slots_mask + 1;
	ALLOC_GROW(po->entries, want, po->alloc);
	while (want * 2 > slots)
		slots *= 2;
	if (slots != po->slots_mask + 1)
		grow_table_to(po, slots);
}

static uint32_t find_entry(const struct pack_objects *po, const struct object_id *oid)
{
	size_t i = oid_slot(oid, po->slots_mask);
	while (po->slots[i] != NO_ENTRY) {
		if (oideq(&po->entries[po->slots[i]].oid, oid))
			return po->slots[i];
		i = (i + 1) & po->slots_mask;
	}
	return NO_ENTRY;
}

static uint32_t find_entry_raw(const struct pack_objects *po, const unsigned char *raw)
{
	struct object_id oid;
	oid_from_raw(&oid, raw, po->algo);
	return find_entry(po, &oid);
}

/*
 * Walking a pack in order, the end of one entry is the start of the
 * next: remembered, it saves half the scattered .idx lookups.
 */
struct ofs_cursor {
	uint32_t pos;   /* the position whose offset is known; UINT32_MAX: none */
	uint64_t ofs;
};
#define OFS_CURSOR_INIT { UINT32_MAX, 0 }

/* Where the object of bit (in rr) is stored: false when not in rr's pack. */
static bool reuse_locate(const struct pack_objects *po, const struct reuse_range *rr,
			 uint32_t bit, struct ofs_cursor *cur, uint32_t *pack_pos, uint64_t *ofs)
{
	struct packed_git *q;
	if (rr->whole) {
		*pack_pos = bit - rr->bit_start;
		*ofs = cur->pos == *pack_pos ? cur->ofs : pack_pos_to_offset(rr->pack, *pack_pos);
		return true;
	}
	bitmap_order_locate(po->reuse_order, bit, &q, ofs);
	return q == rr->pack && pack_offset_to_pos(rr->pack, *ofs, pack_pos);
}

/* The end of the entry at pack_pos, which is where pack_pos + 1 starts. */
static uint64_t entry_end(const struct packed_git *p, uint32_t pack_pos, struct ofs_cursor *cur)
{
	cur->ofs = pack_pos_to_end(p, pack_pos);
	cur->pos = pack_pos + 1;
	return cur->ofs;
}

/* Whether oid is copied verbatim; its bit then. */
static bool reused_bit_of(const struct pack_objects *po, const struct object_id *oid,
			  uint32_t *bit)
{
	return po->reuse_nr && bitmap_order_find(po->reuse_order, oid, bit) &&
	       bitmap_get(&po->reused, *bit);
}

int pack_objects_new(struct pack_objects **out, struct odb *odb,
		     const struct pack_objects_opts *opts)
{
	struct pack_objects *po = xcalloc(1, sizeof(*po));
	po->odb = odb;
	po->opts = *opts;
	odb_set_cache_limit(odb, PACK_OBJECTS_CACHE_LIMIT);
	if (po->opts.depth > 4095)
		po->opts.depth = 4095;   /* git's limit too */
	if (po->opts.depth < 0)
		po->opts.depth = 0;
	if (po->opts.window < 0)
		po->opts.window = 0;
	po->algo = odb_algo(odb);
	po->rawsz = gp_hash_algos[po->algo].rawsz;
	po->slots_mask = 1023;
	pthread_mutex_init(&po->odb_lock, NULL);
	po->slots = xmalloc(sizeof(*po->slots) * (po->slots_mask + 1));
	memset(po->slots, 0xff, sizeof(*po->slots) * (po->slots_mask + 1));
	*out = po;
	return 0;
}

void pack_objects_free(struct pack_objects *po)
{
	if (!po)
		return;
	for (uint32_t n = 0; n < po->nr; n++)
		free(po->entries[n].delta_z);
	progress_stop(&po->enum_progress);
	free(po->entries);
	free(po->slots);
	for (size_t i = 0; i < po->nr_ranges; i++)
		free(po->ranges[i].marks);
	free(po->ranges);
	bitmap_release(&po->reused);
	pthread_mutex_destroy(&po->odb_lock);
	free(po);
}

/* Add oid, known not to be there yet. */
static void add_new_entry(struct pack_objects *po, const struct object_id *oid,
			  enum object_type type, uint32_t name_hash)
{
	struct po_entry *e;
	size_t i;
	if (((size_t)po->nr + 1) * 2 > po->slots_mask + 1)
		grow_table(po);
	ALLOC_GROW(po->entries, po->nr + 1, po->alloc);
	e = &po->entries[po->nr];
	memset(e, 0, sizeof(*e));
	e->oid = *oid;
	e->type = (uint8_t)type;
	e->name_hash = name_hash;
	e->base = NO_ENTRY;
	e->reused_base = NO_ENTRY;
	i = oid_slot(oid, po->slots_mask);
	while (po->slots[i] != NO_ENTRY)
		i = (i + 1) & po->slots_mask;
	po->slots[i] = po->nr++;
}

void pack_objects_add_hashed(struct pack_objects *po, const struct object_id *oid,
			     enum object_type type, uint32_t name_hash)
{
	uint32_t bit;
	if (find_entry(po, oid) == NO_ENTRY && !reused_bit_of(po, oid, &bit))
		add_new_entry(po, oid, type, name_hash);
}

/*
 * Version 2: the last component hashed as version 1 does, each
 * directory above it hashed alike and folded into the low bits, so the
 * high bits still order by file name.
 */
static uint32_t name_hash_v2(const char *path)
{
	const char *slash = strrchr(path, '/');
	uint32_t base, salt = 0;
	if (!slash)
		return bitmap_name_hash(path);
	base = bitmap_name_hash(slash + 1);
	for (const char *p = path; p < slash;) {
		const char *end = memchr(p, '/', (size_t)(slash - p));
		uint32_t h = 0;
		if (!end)
			end = slash;
		for (const char *c = p; c < end; c++)
			h = h * 31 + (unsigned char)*c;
		salt = (salt << 3 | salt >> 29) ^ h;
		p = end + 1;
	}
	return base ^ (salt & 0xffffu);
}

uint32_t pack_objects_name_hash(const struct pack_objects *po, const char *path)
{
	if (!path || !*path)
		return 0;
	return po->opts.name_hash_version == 2 ? name_hash_v2(path) : bitmap_name_hash(path);
}

void pack_objects_add(struct pack_objects *po, const struct object_id *oid,
		      enum object_type type, const char *name)
{
	pack_objects_add_hashed(po, oid, type, pack_objects_name_hash(po, name));
}

void pack_objects_follow(struct pack_objects *po, const struct bitmap_order *order)
{
	po->follow = order;
}

void pack_objects_set_islands(struct pack_objects *po, struct delta_islands *islands)
{
	po->islands = islands;
}

/* Whether entry base may be entry n's delta base, as far as islands go. */
static bool island_allows(const struct pack_objects *po, uint32_t n, uint32_t base)
{
	return !po->islands || delta_islands_may_base(po->islands, n, base);
}

void pack_objects_add_packed(struct pack_objects *po, const struct object_id *oid,
			     enum object_type type, uint32_t name_hash,
			     struct packed_git *p, uint64_t ofs)
{
	uint32_t before = po->nr;
	pack_objects_add_hashed(po, oid, type, name_hash);
	if (po->nr == before)
		return;
	po->entries[before].pack = p;
	po->entries[before].ofs = ofs;
}

bool pack_objects_set_name_hash(struct pack_objects *po, const struct object_id *oid,
				uint32_t name_hash)
{
	uint32_t n = find_entry(po, oid);
	if (n == NO_ENTRY || po->entries[n].external)
		return false;
	po->entries[n].name_hash = name_hash;
	return true;
}

bool pack_objects_has(const struct pack_objects *po, const struct object_id *oid)
{
	uint32_t n = find_entry(po, oid), bit;
	if (n != NO_ENTRY)
		return !po->entries[n].external;
	return reused_bit_of(po, oid, &bit);
}

uint32_t pack_objects_nr(const struct pack_objects *po)
{
	return po->nr - po->nr_external + po->reuse_nr;
}

void pack_objects_add_base(struct pack_objects *po, const struct object_id *oid,
			   enum object_type type, uint32_t name_hash)
{
	if (find_entry(po, oid) != NO_ENTRY)
		return;
	pack_objects_add_hashed(po, oid, type, name_hash);
	po->entries[po->nr - 1].external = true;
	po->nr_external++;
	progress_update(po->enum_progress, ++po->enumerated);
}

void pack_objects_stats(const struct pack_objects *po, struct pack_objects_stats *out)
{
	*out = po->stats;
}

/* ------------------------------------------------------------------ */
/* Enumerating                                                         */

static bool pack_is_kept(const struct pack_objects_filter *f, const struct packed_git *p)
{
	const char *name;
	if (f->honor_pack_keep && p->is_keep)
		return true;
	if (!f->nr_keep_packs)
		return false;
	name = base_name(p->pack_path);
	for (size_t i = 0; i < f->nr_keep_packs; i++)
		if (!strcmp(name, f->keep_packs[i]))
			return true;
	return false;
}

bool pack_objects_filtered(struct pack_objects *po, const struct pack_objects_filter *f,
			   const struct object_id *oid)
{
	if (f->unpacked || f->local) {
		struct packed_git *p;
		uint64_t ofs;
		const char *dir;
		if (odb_locate(po->odb, oid, &p, &ofs, &dir)) {
			if (f->unpacked && p && !f->nr_unpacked_packs)
				return true;
			if (f->unpacked && p) {
				/* packed only in packs named --unpacked=: still "unpacked" */
				for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
					struct packed_git *q = odb_pack(po->odb, i);
					const char *name = base_name(q->pack_path);
					uint32_t idx_pos;
					bool listed = false;
					for (size_t k = 0; k < f->nr_unpacked_packs && !listed; k++)
						listed = !strcmp(name, f->unpacked_packs[k]);
					if (!listed && pack_find_oid(q, oid, &idx_pos))
						return true;
				}
			}
			if (f->local && !p && strcmp(dir, odb_objdir(po->odb)))
				return true;
		}
		/* --local: any copy in an alternate's pack makes it borrowed, as in git. */
		if (f->local && odb_has_alternates(po->odb)) {
			for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
				uint32_t idx_pos;
				if (!odb_pack_is_local(po->odb, i) &&
				    pack_find_oid(odb_pack(po->odb, i), oid, &idx_pos))
					return true;
			}
		}
	}
	if (f->exclude_promisor) {
		for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
			struct packed_git *p = odb_pack(po->odb, i);
			uint32_t idx_pos;
			if (p->is_promisor && pack_find_oid(p, oid, &idx_pos))
				return true;
		}
	}
	if (f->honor_pack_keep || f->nr_keep_packs) {
		/* As git: only the repository's own packs are kept, not an alternate's. */
		for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
			struct packed_git *p = odb_pack(po->odb, i);
			uint32_t idx_pos;
			if (odb_pack_is_local(po->odb, i) && pack_is_kept(f, p) &&
			    pack_find_oid(p, oid, &idx_pos))
				return true;
		}
	}
	return false;
}

struct walk_add {
	struct pack_objects *po;
	const struct pack_objects_filter *filter;
};

static int add_walked(const struct object_id *oid, enum object_type type,
		      const char *path, void *data)
{
	struct walk_add *wa = data;
	progress_update(wa->po->enum_progress, ++wa->po->enumerated);
	if (pack_objects_filtered(wa->po, wa->filter, oid))
		return 0;
	/* A tag's path is its own name, which says nothing of its content. */
	pack_objects_add(wa->po, oid, type, type == OBJ_TAG ? NULL : path);
	return 0;
}

int pack_objects_add_walk(struct pack_objects *po, struct rev_walk *walk,
			  const struct pack_objects_filter *f, struct gp_error *err)
{
	struct walk_add wa = { po, f };
	if (!po->enum_progress)
		po->enum_progress = progress_start("Enumerating objects", 0, po->opts.progress);
	return rev_walk_run(walk, REV_OBJECTS, add_walked, &wa, err);
}

static struct packed_git *pack_named(struct pack_objects *po, const char *name)
{
	for (size_t i = 0; i < odb_nr_packs(po->odb); i++)
		if (odb_pack_is_local(po->odb, i) &&
		    !strcmp(base_name(odb_pack(po->odb, i)->pack_path), name))
			return odb_pack(po->odb, i);
	return NULL;
}

int pack_objects_add_pack_list(struct pack_objects *po, struct packed_git *const *include,
			       size_t nr_include, struct packed_git *const *exclude,
			       size_t nr_exclude, struct gp_error *err)
{
	int ret = 0;
	for (size_t i = 0; i < nr_include && !ret; i++) {
		struct packed_git *p = include[i];
		ret = pack_load_revindex(p, err);
		for (uint32_t pack_pos = 0; !ret && pack_pos < p->nr_objects; pack_pos++) {
			struct object_id oid;
			bool skip = false;
			pack_nth_oid(p, pack_pos_to_idx(p, pack_pos), &oid);
			for (size_t k = 0; k < nr_exclude && !skip; k++) {
				uint32_t idx_pos;
				skip = pack_find_oid(exclude[k], &oid, &idx_pos);
			}
			if (!skip)
				pack_objects_add_hashed(po, &oid, OBJ_NONE, 0);
		}
	}
	return ret;
}

/* A pack whose objects a --keep-unreachable or --unpack-unreachable takes. */
static bool pack_is_repacked(struct pack_objects *po, const struct pack_objects_filter *f,
			     size_t index)
{
	struct packed_git *p = odb_pack(po->odb, index);
	return odb_pack_is_local(po->odb, index) && !pack_is_kept(f, p) && !p->is_keep &&
	       !(f->exclude_promisor && p->is_promisor);
}

int pack_objects_add_unreachable(struct pack_objects *po, const struct pack_objects_filter *f,
				 struct gp_error *err)
{
	for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
		struct packed_git *p = odb_pack(po->odb, i);
		if (!pack_is_repacked(po, f, i))
			continue;
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
			struct object_id oid;
			pack_nth_oid(p, idx_pos, &oid);
			pack_objects_add_hashed(po, &oid, OBJ_NONE, 0);
		}
	}
	return 0;
}

int pack_objects_loosen_unreachable(struct pack_objects *po, const struct pack_objects_filter *f,
				    int64_t since, struct gp_error *err)
{
	const char *objdir = odb_objdir(po->odb);
	int ret = 0;
	for (size_t i = 0; i < odb_nr_packs(po->odb) && !ret; i++) {
		struct packed_git *p = odb_pack(po->odb, i);
		struct stat st;
		if (!pack_is_repacked(po, f, i))
			continue;
		if (since && since != INT64_MAX && !stat(p->pack_path, &st) &&
		    (int64_t)st.st_mtime <= since)
			continue;   /* expired: let it go with its pack */
		if (since == INT64_MAX)
			continue;   /* "now": everything has expired */
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects && !ret; idx_pos++) {
			struct object_id oid, written;
			enum object_type type;
			unsigned char *data;
			size_t size;
			bool elsewhere = false;
			pack_nth_oid(p, idx_pos, &oid);
			if (find_entry(po, &oid) != NO_ENTRY || loose_has(objdir, &oid))
				continue;
			for (size_t k = 0; k < odb_nr_packs(po->odb) && !elsewhere; k++) {
				uint32_t at;
				elsewhere = !pack_is_repacked(po, f, k) &&
					    pack_find_oid(odb_pack(po->odb, k), &oid, &at);
			}
			if (elsewhere)
				continue;
			ret = odb_read_object(po->odb, &oid, &type, &data, &size, err);
			if (ret)
				break;
			ret = odb_write_object(po->odb, type, data, size, &written, err);
			free(data);
		}
	}
	return ret;
}

static int add_loose_one(const struct object_id *oid, const char *path, void *data)
{
	pack_objects_add_hashed(data, oid, OBJ_NONE, 0);
	return 0;
}

static int add_loose_unpacked(const struct object_id *oid, const char *path, void *data)
{
	struct pack_objects *po = data;
	struct packed_git *p;
	uint64_t ofs;
	const char *dir;
	/* odb_locate() answers with a pack first when there is one. */
	if (odb_locate(po->odb, oid, &p, &ofs, &dir) && p)
		return 0;
	pack_objects_add_hashed(po, oid, OBJ_NONE, 0);
	return 0;
}

int pack_objects_add_loose_unpacked(struct pack_objects *po, struct gp_error *err)
{
	return loose_for_each(odb_objdir(po->odb), po->algo, add_loose_unpacked, po);
}

int pack_objects_add_loose(struct pack_objects *po, struct gp_error *err)
{
	return loose_for_each(odb_objdir(po->odb), po->algo, add_loose_one, po);
}

/* ------------------------------------------------------------------ */
/* Locating                                                            */

static int not_found(const struct object_id *oid, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	/* git's words for it */
	return gp_error_set(err, GP_ENOTFOUND, "unable to read %s", oid_to_hex_r(hex, oid));
}

/* The real type and size of a packed object stored as a delta. */
static int resolve_type(struct po_entry *e, struct gp_error *err)
{
	struct pack_object_info info;
	int ret = pack_object_info(e->pack, e->ofs, &info, false, err);
	if (ret)
		return ret;
	e->type = (uint8_t)info.type;
	e->size = info.size;
	return 0;
}

static int locate_one(struct pack_objects *po, struct po_entry *e, struct gp_error *err)
{
	struct pack_entry_header hdr;
	uint32_t pack_pos;
	uint64_t end;
	int ret;

	/* pack_objects_add_packed() chose the copy already. */
	if (!e->pack && !odb_locate(po->odb, &e->oid, &e->pack, &e->ofs, &e->loose_dir)) {
		enum object_type type;
		unsigned char *data;
		size_t size;
		/* The empty tree is present without being stored. */
		ret = odb_read_object(po->odb, &e->oid, &type, &data, &size, err);
		if (ret)
			return ret == GP_ENOTFOUND ? not_found(&e->oid, err) : ret;
		free(data);
		e->type = (uint8_t)type;
		e->size = size;
		return 0;
	}
	if (!e->pack) {
		enum object_type type;
		uint64_t disk_size;
		ret = loose_read_info(e->loose_dir, &e->oid, &type, &e->size, &disk_size, err);
		e->type = (uint8_t)type;
		return ret;
	}
	ret = pack_load_revindex(e->pack, err);
	if (ret)
		return ret;
	if (!pack_offset_to_pos(e->pack, e->ofs, &pack_pos))
		return CORRUPT(err, "%s: no object at offset %" PRIu64, e->pack->pack_path, e->ofs);
	end = pack_pos_to_end(e->pack, pack_pos);
	ret = pack_parse_entry_header(e->pack->pack_map + e->ofs, (size_t)(end - e->ofs),
				      e->ofs, po->algo, &hdr, err);
	if (ret) {
		gp_error_prefix(err, "%s", e->pack->pack_path);
		return ret;
	}
	e->stored_type = (uint8_t)hdr.type;
	e->hdr_len = (uint32_t)hdr.hdr_len;
	if (hdr.type != OBJ_OFS_DELTA && hdr.type != OBJ_REF_DELTA) {
		e->type = (uint8_t)hdr.type;
		e->size = hdr.size;
		e->how = po->opts.reuse_object ? WRITE_REUSE_WHOLE : WRITE_WHOLE;
		return 0;
	}
	if (po->opts.reuse_delta) {
		uint32_t base = NO_ENTRY, bit;
		struct object_id base_oid;
		bool base_known = true;
		if (hdr.type == OBJ_REF_DELTA)
			base_oid = hdr.base_oid;
		else if (pack_offset_to_pos(e->pack, hdr.base_ofs, &pack_pos))
			pack_nth_oid(e->pack, pack_pos_to_idx(e->pack, pack_pos), &base_oid);
		else
			base_known = false;
		if (base_known)
			base = find_entry(po, &base_oid);
		if (base == NO_ENTRY && base_known && reused_bit_of(po, &base_oid, &bit)) {
			/*
			 * Its base is copied verbatim (say a push's base that
			 * index-pack --fix-thin appended, which the MIDX takes
			 * from another pack): written first, so the delta can
			 * point back at it. Its depth there is not known: it
			 * counts as a whole object.
			 */
			e->reused_base = bit;
			e->depth = 1;
			e->how = WRITE_REUSE_DELTA;
			e->size = hdr.size;
			return 0;
		}
		if (base == NO_ENTRY && base_known && po->haves &&
		    bitmap_result_in_haves(po->haves, &base_oid)) {
			/*
			 * A thin pack may keep a stored delta whose base the
			 * receiver has (git's bitmap-based thin packs).
			 */
			uint32_t n = (uint32_t)(e - po->entries);
			pack_objects_add_base(po, &base_oid, OBJ_NONE, 0);
			e = &po->entries[n];   /* the array may have moved */
			base = find_entry(po, &base_oid);
		}
		if (base != NO_ENTRY && !island_allows(po, (uint32_t)(e - po->entries), base))
			base = NO_ENTRY;   /* the search finds it a base within its islands */
		if (base != NO_ENTRY) {
			e->base = base;
			e->how = WRITE_REUSE_DELTA;
			e->size = hdr.size;
			return 0;
		}
	}
	e->how = WRITE_WHOLE;
	return resolve_type(e, err);
}

/*
 * The stored copy is damaged: the odb reads around it (another copy,
 * or a delta applied to another copy of its base) or fails; the object
 * is then written whole from what it read.
 */
static int locate_around_damage(struct pack_objects *po, struct po_entry *e, int why,
				struct gp_error *err)
{
	enum object_type type;
	unsigned char *data;
	size_t size;
	struct gp_error again = GP_ERROR_INIT;
	int ret = odb_read_object(po->odb, &e->oid, &type, &data, &size, &again);
	if (ret) {
		gp_error_clear(&again);
		return why;   /* the first message says where */
	}
	free(data);
	gp_error_clear(err);
	e->type = (uint8_t)type;
	e->size = size;
	e->pack = NULL;
	e->loose_dir = NULL;
	e->how = WRITE_WHOLE;
	e->base = NO_ENTRY;
	e->reused_base = NO_ENTRY;
	e->reread = true;
	return 0;
}

/* A reused delta whose base is an entry (not an object copied verbatim). */
static bool delta_of_entry(const struct po_entry *e)
{
	return e->how == WRITE_REUSE_DELTA && e->base != NO_ENTRY;
}

/*
 * Reused deltas form chains; duplicates across packs can make them
 * loop (A stored as a delta of B in one pack, B of A in another), and
 * reuse can make them longer than depth. Walk each chain once, cut a
 * loop where it closes and a chain wherever it passes depth.
 */
static int settle_chains(struct pack_objects *po, struct gp_error *err)
{
	enum { UNSEEN, ON_PATH, DONE };
	uint8_t *state = xcalloc(po->nr ? po->nr : 1, 1);
	uint32_t *path = xmalloc(sizeof(*path) * (po->nr ? po->nr : 1));
	int ret = 0;

	for (uint32_t start = 0; start < po->nr && !ret; start++) {
		uint32_t nr_path = 0, n = start;
		while (state[n] == UNSEEN && delta_of_entry(&po->entries[n])) {
			state[n] = ON_PATH;
			path[nr_path++] = n;
			n = po->entries[n].base;
		}
		if (state[n] == ON_PATH) {
			/* A loop closes at n: store n another way. */
			po->entries[n].how = WRITE_WHOLE;
			po->entries[n].base = NO_ENTRY;
			ret = resolve_type(&po->entries[n], err);
		}
		state[n] = DONE;
		/* Settle the path base side first: each base is final before its deltas. */
		while (nr_path-- && !ret) {
			uint32_t m = path[nr_path];
			struct po_entry *e = &po->entries[m];
			if (m == n)
				continue;
			if (po->entries[e->base].depth + 1 > po->opts.depth) {
				e->how = WRITE_WHOLE;
				e->base = NO_ENTRY;
				e->depth = 0;
				ret = resolve_type(e, err);
			} else {
				e->depth = (uint16_t)(po->entries[e->base].depth + 1);
			}
			state[m] = DONE;
		}
	}
	/* How deep the reused deltas below each object reach. */
	for (uint32_t n = 0; n < po->nr && !ret; n++) {
		struct po_entry *e = &po->entries[n];
		unsigned below = 0;
		while (delta_of_entry(e)) {
			struct po_entry *b = &po->entries[e->base];
			below++;
			if (b->below >= below)
				break;
			b->below = (uint16_t)below;
			e = b;
		}
	}
	free(state);
	free(path);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Delta search                                                        */

struct window_slot {
	uint32_t entry;
	unsigned char *data;
	size_t size;
	struct delta_index *index;
	enum object_type type;	/* as read */
	bool name_checked;	/* data hashes to the entry's name */
};

/*
 * The search list is cut into segments, each searched with a window of
 * its own, and the threads take the segments in order as they finish
 * the last. Where the cuts fall depends only on the list and the
 * number of threads, so the pack does not depend on which thread was
 * faster; there are SEGMENTS_PER_THREAD for each thread, of about equal
 * work (the bytes to search), so that a thread that drew large objects
 * does not leave the others idle. A cut falls only where the name hash
 * changes: the versions of one path stay in one window.
 */
#define SEGMENTS_PER_THREAD 16
/* The work of an object besides its bytes (reading it, its window). */
#define SEGMENT_OBJECT_COST 1024

struct search_queue {
	pthread_mutex_t lock;
	const uint32_t *list;     /* entry numbers, in search order */
	const uint32_t *seg_start; /* segment s: list[seg_start[s] .. seg_start[s + 1]) */
	uint32_t nr_segments;
	uint32_t next;            /* the next segment to take */
	bool failed;              /* a thread failed: take no more */
};

struct search_job {
	struct pack_objects *po;
	struct search_queue *queue;
	struct progress *progress;
	int ret;
	struct gp_error err;
};

static int read_entry_data_unchecked(struct pack_objects *po, struct pack_reader *reader,
				     struct po_entry *e, enum object_type *type,
				     unsigned char **data, size_t *size, struct gp_error *err);

/*
 * What is compressed anew must be what its name says: a delta made
 * against the wrong base (a "stealth" corruption that still applies
 * cleanly) would otherwise be passed on as good data. On failure data
 * is freed. Loose objects pass as git passes them: their name is
 * checked by whoever receives them (git's own tests count on a wrong
 * one reaching the other side), while a pack's deltas could turn
 * damage into plausible data nobody would notice.
 */
static int check_entry_name(struct pack_objects *po, const struct po_entry *e,
			    enum object_type type, unsigned char **data, size_t size,
			    struct gp_error *err)
{
	struct object_id check;
	char hex[GP_MAX_HEXSZ + 1];

	if (!e->pack && !e->reread)
		return 0;
	if (hash_object(po->algo, type, *data, size, &check, err)) {
		FREE_AND_NULL(*data);
		return -1;
	}
	if (oideq(&check, &e->oid))
		return 0;
	FREE_AND_NULL(*data);
	return CORRUPT(err, "object %s: its stored data hashes to another name%s%s",
		       oid_to_hex_r(hex, &e->oid), e->pack ? " in " : "",
		       e->pack ? e->pack->pack_path : "");
}

static int read_entry_data(struct pack_objects *po, struct pack_reader *reader,
			   struct po_entry *e, enum object_type *type, unsigned char **data,
			   size_t *size, struct gp_error *err)
{
	int ret = read_entry_data_unchecked(po, reader, e, type, data, size, err);
	if (ret)
		return ret;
	return check_entry_name(po, e, *type, data, *size, err);
}

/*
 * A window slot's data is checked only once it is used for output: as
 * a new delta's target or base. Most of what a search reads (a fetch's
 * objects whose stored form is kept) is only compared, and hashing it
 * all cost a fetch a tenth of its time.
 */
static int check_slot_name(struct pack_objects *po, struct window_slot *s, struct gp_error *err)
{
	const struct po_entry *e = &po->entries[s->entry];
	int ret;
	if (s->name_checked)
		return 0;
	ret = check_entry_name(po, e, s->type, &s->data, s->size, err);
	if (!ret)
		s->name_checked = true;
	return ret;
}

static int read_entry_data_unchecked(struct pack_objects *po, struct pack_reader *reader,
				     struct po_entry *e, enum object_type *type,
				     unsigned char **data, size_t *size, struct gp_error *err)
{
	if (e->pack) {
		int ret = pack_read_object(reader, e->pack, e->ofs, type, data, size, err);
		/*
		 * Damage is not copied: another copy (the odb reads around
		 * it) or an error. Not thread-safe: odb reads take the lock.
		 */
		if (ret == GP_ECORRUPT) {
			struct gp_error again = GP_ERROR_INIT;
			pthread_mutex_lock(&po->odb_lock);
			if (!odb_read_object(po->odb, &e->oid, type, data, size, &again)) {
				gp_error_clear(err);
				ret = 0;
			}
			pthread_mutex_unlock(&po->odb_lock);
			gp_error_clear(&again);
		}
		return ret;
	}
	if (e->loose_dir)
		return loose_read(e->loose_dir, &e->oid, type, data, size, err);
	if (e->reread) {
		int ret;
		pthread_mutex_lock(&po->odb_lock);
		ret = odb_read_object(po->odb, &e->oid, type, data, size, err);
		pthread_mutex_unlock(&po->odb_lock);
		return ret;
	}
	*type = OBJ_TREE;
	*data = xcalloc(1, 1);  /* the unstored empty tree */
	*size = 0;
	return 0;
}

static void clear_slot(struct window_slot *s)
{
	free(s->data);
	delta_index_free(s->index);
	memset(s, 0, sizeof(*s));
	s->entry = NO_ENTRY;
}

/* Search list[0..nr) with the window ring, which starts empty. */
static void search_segment(struct search_job *job, const uint32_t *list, uint32_t nr,
			   struct window_slot *ring, struct pack_reader *reader)
{
	struct pack_objects *po = job->po;
	int window = po->opts.window, max_depth = po->opts.depth;
	size_t next = 0;

	for (uint32_t k = 0; k < nr && !job->ret; k++) {
		struct po_entry *t = &po->entries[list[k]];
		struct window_slot *slot = &ring[next];
		bool base_only = t->external;
		unsigned char *best = NULL;
		size_t best_len = 0;
		uint32_t best_base = NO_ENTRY;
		size_t best_slot = 0;
		int64_t limit;

		clear_slot(slot);
		job->ret = read_entry_data_unchecked(po, reader, t, &slot->type, &slot->data,
						     &slot->size, &job->err);
		if (job->ret)
			break;
		slot->entry = list[k];
		limit = base_only ? 0 : (int64_t)(slot->size / 2) - (int64_t)po->rawsz;
		for (int back = 1; back <= window && limit > 0; back++) {
			size_t at = (next + (size_t)window + 1 - (size_t)back) % ((size_t)window + 1);
			struct window_slot *s = &ring[at];
			struct po_entry *b;
			uint64_t max_len;
			unsigned char *delta;
			size_t delta_len;
			if (s->entry == NO_ENTRY)
				break;
			b = &po->entries[s->entry];
			if (b->type != t->type)
				break;  /* sorted by type: no more candidates */
			if (!island_allows(po, list[k], s->entry))
				continue;
			if ((int)b->depth + 1 + (int)t->below > max_depth)
				continue;
			/*
			 * Two objects of one pack, the target stored whole: the
			 * packer that wrote it already found no delta worth
			 * keeping (git skips these pairs as well). Not so for a
			 * preferred base: the receiver has it, so even a poor
			 * delta saves sending the whole object.
			 */
			if (po->opts.reuse_delta && t->pack && t->pack == b->pack && !b->external &&
			    t->stored_type != OBJ_OFS_DELTA && t->stored_type != OBJ_REF_DELTA)
				continue;
			/* Deep bases must earn their place (git weighs them alike). */
			max_len = (uint64_t)limit * (uint64_t)(max_depth - b->depth) /
				  (uint64_t)(max_depth + 1);
			if (best && best_len - 1 < max_len)
				max_len = best_len - 1;
			if (max_len < 4)
				continue;
			if (slot->size < s->size / 32)
				continue;
			if (slot->size > s->size && slot->size - s->size >= max_len)
				continue;
			if (!s->index && delta_index_create(&s->index, s->data, s->size))
				continue;  /* no memory for this base: try the others */
			if (delta_create(s->index, slot->data, slot->size, (size_t)max_len, &delta, &delta_len))
				continue;
			free(best);
			best = delta;
			best_len = delta_len;
			best_base = s->entry;
			best_slot = at;
		}
		if (best && ((job->ret = check_slot_name(po, slot, &job->err)) ||
			     (job->ret = check_slot_name(po, &ring[best_slot], &job->err)))) {
			free(best);
			break;
		}
		if (best) {
			struct strbuf z = STRBUF_INIT;
			deflate_to_strbuf(best, best_len, po->opts.compression, &z);
			t->delta_z_len = z.len;
			t->delta_z = (unsigned char *)strbuf_detach(&z, NULL);
			t->delta_size = best_len;
			t->base = best_base;
			t->depth = (uint16_t)(po->entries[best_base].depth + 1);
			t->how = WRITE_NEW_DELTA;
			free(best);
			/*
			 * At the greatest depth it can never be a base: let
			 * the next object take its place (as git does).
			 */
			if ((int)t->depth + (int)t->below >= max_depth) {
				progress_add(job->progress, !base_only);
				continue;
			}
			/*
			 * Keep the base that won longest: it moves up to the
			 * newest place, just after this object, and is tried
			 * first for the next ones (git does the same; runs of
			 * versions of one file then share a good base).
			 */
			{
				size_t ring_size = (size_t)window + 1, dst = best_slot;
				struct window_slot keep = ring[best_slot];
				while (dst != next) {
					size_t src = (dst + 1) % ring_size;
					ring[dst] = ring[src];
					dst = src;
				}
				ring[next] = keep;
			}
		}
		next = (next + 1) % ((size_t)window + 1);
		progress_add(job->progress, !base_only);
	}
	for (int i = 0; i <= window; i++)
		clear_slot(&ring[i]);
}

static void *search_worker(void *arg)
{
	struct search_job *job = arg;
	struct search_queue *queue = job->queue;
	int window = job->po->opts.window;
	struct window_slot *ring = xcalloc((size_t)window + 1, sizeof(*ring));
	struct pack_reader *reader = pack_reader_new(0);

	for (int i = 0; i <= window; i++)
		ring[i].entry = NO_ENTRY;
	for (;;) {
		uint32_t seg;
		pthread_mutex_lock(&queue->lock);
		if (job->ret)
			queue->failed = true;
		seg = queue->failed ? queue->nr_segments : queue->next;
		if (seg < queue->nr_segments)
			queue->next++;
		pthread_mutex_unlock(&queue->lock);
		if (seg >= queue->nr_segments)
			break;
		search_segment(job, queue->list + queue->seg_start[seg],
			       queue->seg_start[seg + 1] - queue->seg_start[seg], ring, reader);
	}
	free(ring);
	pack_reader_free(reader);
	return NULL;
}

static int cmp_search(const void *va, const void *vb, void *vpo)
{
	const struct pack_objects *po = vpo;
	const struct po_entry *a = &po->entries[*(const uint32_t *)va];
	const struct po_entry *b = &po->entries[*(const uint32_t *)vb];
	/* Same type together, then same name, then largest first. */
	if (a->type != b->type)
		return a->type > b->type ? -1 : 1;
	if (a->name_hash != b->name_hash)
		return a->name_hash > b->name_hash ? -1 : 1;
	/* A preferred base goes before the objects that may use it. */
	if (a->external != b->external)
		return a->external ? -1 : 1;
	/* Objects in more islands first: the bases the others may use precede them. */
	if (po->islands) {
		int c = delta_islands_cmp(po->islands, *(const uint32_t *)va, *(const uint32_t *)vb);
		if (c)
			return c;
	}
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return *(const uint32_t *)va < *(const uint32_t *)vb ? -1 : 1;
}

/*
 * Cut list[0..nr) into at most want segments of about equal work (an
 * object's size, plus a little for reading it), each cut where the
 * name hash changes; *nr_segments of them, delimited by the returned
 * array of *nr_segments + 1 list positions (caller frees).
 */
static uint32_t *cut_segments(const struct pack_objects *po, const uint32_t *list, uint32_t nr,
			      int want, uint32_t *nr_segments)
{
	uint32_t *seg_start = xmalloc(sizeof(*seg_start) * ((size_t)want + 1));
	uint64_t total = 0, done = 0;
	uint32_t nr_seg = 0;

	for (uint32_t k = 0; k < nr; k++)
		total += po->entries[list[k]].size + SEGMENT_OBJECT_COST;
	seg_start[nr_seg++] = 0;
	for (uint32_t k = 0; k < nr; k++) {
		const struct po_entry *e = &po->entries[list[k]];
		/* Cut before k once the segments so far hold their share. */
		if (k && (int)nr_seg < want &&
		    done >= total / (uint64_t)want * nr_seg &&
		    (e->name_hash != po->entries[list[k - 1]].name_hash ||
		     e->type != po->entries[list[k - 1]].type))
			seg_start[nr_seg++] = k;
		done += e->size + SEGMENT_OBJECT_COST;
	}
	seg_start[nr_seg] = nr;
	*nr_segments = nr_seg;
	return seg_start;
}

static int search_deltas(struct pack_objects *po, struct gp_error *err)
{
	uint32_t *list = xmalloc(sizeof(*list) * (po->nr ? po->nr : 1));
	uint32_t nr = 0, nr_shown = 0;
	struct search_job *jobs;
	struct search_queue queue = { .lock = PTHREAD_MUTEX_INITIALIZER };
	uint32_t *seg_start;
	int nr_jobs = po->opts.threads > 0 ? po->opts.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct progress *progress;
	int ret = 0;

	uint64_t big = po->opts.big_file_threshold ? po->opts.big_file_threshold
						    : BIG_FILE_THRESHOLD;

	if (po->opts.window <= 0 || po->opts.depth <= 0) {
		free(list);
		return 0;
	}
	for (uint32_t n = 0; n < po->nr; n++) {
		struct po_entry *e = &po->entries[n];
		if ((e->how == WRITE_REUSE_DELTA && !e->external) ||
		    e->size < MIN_DELTA_SIZE || e->size > big)
			continue;
		list[nr++] = n;
		/* git counts what is packed: a thin pack's bases are searched unseen */
		nr_shown += !e->external;
	}
	qsort_r(list, nr, sizeof(*list), cmp_search, po);
	if (nr_jobs < 1)
		nr_jobs = 1;
	if (nr_jobs > MAX_THREADS)
		nr_jobs = MAX_THREADS;
	if (nr < 1024)
		nr_jobs = 1;
	seg_start = cut_segments(po, list, nr, nr_jobs == 1 ? 1 : nr_jobs * SEGMENTS_PER_THREAD,
				 &queue.nr_segments);
	queue.list = list;
	queue.seg_start = seg_start;
	jobs = xcalloc((size_t)nr_jobs, sizeof(*jobs));
	progress = progress_start(po->opts.by_path ? "Compressing objects by path"
					       : "Compressing objects", nr_shown, po->opts.progress && nr_shown);
	for (int j = 0; j < nr_jobs; j++) {
		jobs[j].po = po;
		jobs[j].queue = &queue;
		jobs[j].progress = progress;
		jobs[j].err = (struct gp_error)GP_ERROR_INIT;
	}
	run_parallel(search_worker, jobs, sizeof(*jobs), nr_jobs, NULL, NULL);
	progress_stop(&progress);
	pthread_mutex_destroy(&queue.lock);
	free(seg_start);
	for (int j = 0; j < nr_jobs; j++) {
		if (jobs[j].ret && !ret)
			ret = gp_error_set(err, jobs[j].ret, "%s", gp_error_msg(&jobs[j].err));
		gp_error_clear(&jobs[j].err);
	}
	free(jobs);
	free(list);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */


static void drop_source_pages(struct pack_objects *po)
{
	for (size_t i = 0; i < odb_nr_packs(po->odb); i++)
		pack_drop_pages(odb_pack(po->odb, i));
}

static uint32_t island_find(const struct object_id *oid, void *data)
{
	uint32_t n = find_entry(data, oid);
	return n == NO_ENTRY ? DELTA_ISLANDS_NONE : n;
}

static const struct object_id *island_oid(uint32_t n, void *data)
{
	const struct pack_objects *po = data;
	return &po->entries[n].oid;
}

static int prepare(struct pack_objects *po, struct gp_error *err)
{
	struct progress *progress;
	uint32_t total;
	int ret = 0;
	if (po->prepared)
		return 0;
	progress_stop(&po->enum_progress);
	if (po->islands) {
		struct delta_islands_objects objs = { po->nr, island_find, island_oid, po };
		ret = delta_islands_resolve(po->islands, po->odb, &objs, po->opts.progress, err);
		if (ret)
			return ret;
	}
	/* What the walk read (trees, commits) is not read again. */
	drop_source_pages(po);
	/*
	 * Counted as git counts: what the walk found, its edges included,
	 * and not the preferred bases locate_one() adds behind them.
	 */
	total = po->nr;
	progress = progress_start("Counting objects", total, po->opts.progress && total);
	for (uint32_t n = 0; n < po->nr && !ret; n++) {
		struct po_entry *e = &po->entries[n];
		ret = locate_one(po, e, err);
		e = &po->entries[n];   /* locate_one() may add preferred bases */
		if ((ret == GP_ECORRUPT || (ret == GP_ENOTFOUND && e->pack)) && !e->external)
			ret = locate_around_damage(po, e, ret, err);
		if (!ret && e->external && e->how == WRITE_REUSE_DELTA) {
			/* Only its content matters: it is never written. */
			e->how = WRITE_WHOLE;
			e->base = NO_ENTRY;
			ret = resolve_type(e, err);
		}
		if (ret && e->external) {
			/* A base we cannot read is just not a candidate. */
			gp_error_clear(err);
			ret = 0;
			e->size = 0;
			e->how = WRITE_WHOLE;
			e->base = NO_ENTRY;
		}
		if (n < total)
			progress_update(progress, n + 1);
	}
	progress_stop(&progress);
	if (!ret)
		ret = settle_chains(po, err);
	if (!ret)
		ret = search_deltas(po, err);
	po->prepared = !ret;
	return ret;
}

struct writer {
	struct pack_objects *po;
	struct hashfile *f;
	struct pack_reader *reader;
	struct strbuf buf;
	uint32_t *order;      /* entry numbers in write order */
	uint32_t nr_written;
	uint32_t nr_copied;   /* objects copied verbatim, before the entries */
	struct progress *progress;
	uint64_t since_drop;  /* bytes written since the source pages were dropped */
	/* Writing files (dir set), the output may be cut into several packs. */
	const char *dir, *prefix;
	char *tmp_name;
	bool write_rev;
	struct pack_objects_names *names;
	uint32_t part;        /* the pack being written, counting from 0 */
	uint32_t part_start;  /* its first object's index in order */
	uint32_t part_header_nr; /* the object count its header announced */
};

static uint64_t reused_out_ofs(const struct pack_objects *po, uint32_t bit);

/* The header of a delta entry of size bytes against e's base. */
static size_t delta_entry_header(const struct pack_objects *po, const struct po_entry *e,
				 uint64_t size, unsigned char *head)
{
	const struct po_entry *base = e->base != NO_ENTRY ? &po->entries[e->base] : NULL;
	struct object_id base_oid;
	size_t len;
	if (po->opts.delta_base_offset && (!base || !base->external)) {
		uint64_t base_out = base ? base->out_ofs : reused_out_ofs(po, e->reused_base);
		len = pack_encode_entry_header(head, OBJ_OFS_DELTA, size);
		return len + pack_encode_ofs_distance(head + len, e->out_ofs - base_out);
	}
	if (base)
		base_oid = base->oid;
	else
		bitmap_order_oid(po->reuse_order, e->reused_base, &base_oid);
	len = pack_encode_entry_header(head, OBJ_REF_DELTA, size);
	memcpy(head + len, base_oid.hash, po->rawsz);
	return len + po->rawsz;
}

static bool is_delta(const struct po_entry *e)
{
	return e->how == WRITE_REUSE_DELTA || e->how == WRITE_NEW_DELTA;
}

/* A delta whose base went into an earlier pack of a cut output. */
static void store_whole(struct po_entry *e)
{
	free(e->delta_z);
	e->delta_z = NULL;
	e->base = NO_ENTRY;
	e->reused_base = NO_ENTRY;
	e->how = WRITE_WHOLE;
}

/* e's entry as it goes into the pack, into w->buf, at offset e->out_ofs. */
static int encode_entry(struct writer *w, struct po_entry *e, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	unsigned char head[16 + 16 + GP_MAX_RAWSZ]; /* type+size, then distance or base name */
	size_t head_len;

	strbuf_reset(&w->buf);
	switch (e->how) {
	case WRITE_REUSE_WHOLE:
	case WRITE_REUSE_DELTA: {
		uint32_t pack_pos, idx_pos;
		uint64_t end;
		const unsigned char *stored;
		pack_offset_to_pos(e->pack, e->ofs, &pack_pos);
		idx_pos = pack_pos_to_idx(e->pack, pack_pos);
		end = pack_pos_to_end(e->pack, pack_pos);
		stored = e->pack->pack_map + e->ofs;
		/*
		 * Never copy damage: the CRC of what we copy must match the
		 * .idx. Else the object is read (around the damage, when
		 * another copy exists) and written whole.
		 */
		if (e->pack->idx_version >= 2 &&
		    gp_crc32(0, stored, (size_t)(end - e->ofs)) != pack_nth_crc(e->pack, idx_pos)) {
			struct packed_git *damaged = e->pack;
			uint64_t damaged_ofs = e->ofs;
			int ret;
			if (e->how == WRITE_REUSE_DELTA) {
				e->base = NO_ENTRY;
				e->reused_base = NO_ENTRY;
				e->depth = 0;
			}
			e->how = WRITE_WHOLE;
			e->pack = NULL;
			e->loose_dir = NULL;
			e->reread = true;
			ret = encode_entry(w, e, err);
			if (ret)
				gp_error_prefix(err, "%s: at offset %" PRIu64 ": CRC does not match "
						"the index, and no other copy reads", damaged->pack_path,
						damaged_ofs);
			return ret;
		}
		head_len = e->how == WRITE_REUSE_WHOLE
			? pack_encode_entry_header(head, e->type, e->size)
			: delta_entry_header(po, e, e->size, head);
		strbuf_add(&w->buf, head, head_len);
		strbuf_add(&w->buf, stored + e->hdr_len, (size_t)(end - e->ofs - e->hdr_len));
		return 0;
	}
	case WRITE_NEW_DELTA:
		head_len = delta_entry_header(po, e, e->delta_size, head);
		strbuf_add(&w->buf, head, head_len);
		strbuf_add(&w->buf, e->delta_z, e->delta_z_len);
		return 0;
	default: {
		enum object_type type;
		unsigned char *data;
		size_t size;
		int ret = read_entry_data(po, w->reader, e, &type, &data, &size, err);
		if (ret)
			return ret;
		/* A reused delta made whole may not have had its type looked up. */
		if (e->pack || e->loose_dir || e->reread)
			e->type = (uint8_t)type;
		head_len = pack_encode_entry_header(head, e->type, size);
		strbuf_add(&w->buf, head, head_len);
		deflate_to_strbuf(data, size, po->opts.compression, &w->buf);
		free(data);
		return 0;
	}
	}
}

static int start_part(struct writer *w, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	unsigned char head[PACK_HEADER_SIZE];
	int ret = hashfile_create(&w->f, w->tmp_name, po->algo, err);
	if (ret)
		return ret;
	w->part_start = w->nr_written;
	/* Right unless the pack is cut; finish_part() corrects it then. */
	w->part_header_nr = po->nr - po->nr_external - w->nr_written;
	pack_encode_header(head, w->part_header_nr);
	hashfile_write(w->f, head, sizeof(head));
	return 0;
}

/* Complete the pack being written: its trailer, .rev and .idx. */
static int finish_part(struct writer *w, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	uint32_t nr = w->nr_written - w->part_start;
	unsigned char *oids = xmalloc(po->rawsz * ((size_t)nr + 1));
	uint64_t *offsets = xmalloc(sizeof(*offsets) * ((size_t)nr + 1));
	uint32_t *crcs = xmalloc(sizeof(*crcs) * ((size_t)nr + 1));
	struct pack_objects_names *names = w->names;
	struct hashfile *f = w->f;
	uint32_t *mtimes = po->cruft ? xmalloc(sizeof(*mtimes) * ((size_t)nr + 1)) : NULL;
	struct pack_idx_opts idx_opts = { .version = po->opts.idx_version,
					  .off32_limit = po->opts.idx_off32_limit };
	int ret = 0;

	w->f = NULL;
	if (nr != w->part_header_nr) {
		unsigned char head[PACK_HEADER_SIZE];
		pack_encode_header(head, nr);
		ret = hashfile_rewrite_head(f, head, sizeof(head), err);
		if (ret) {
			hashfile_abort(f);
			goto out;
		}
	}
	for (uint32_t k = 0; k < nr; k++) {
		struct po_entry *e = &po->entries[w->order[w->part_start + k]];
		memcpy(oids + (size_t)k * po->rawsz, e->oid.hash, po->rawsz);
		offsets[k] = e->out_ofs;
		crcs[k] = e->crc;
		if (mtimes)
			mtimes[k] = e->mtime;
	}
	ALLOC_GROW(names->hex, names->nr + 1, names->alloc);
	ret = pack_write_finish(f, w->dir, w->prefix, po->algo, oids, offsets, crcs, mtimes, nr,
				w->write_rev, po->opts.idx_version ? &idx_opts : NULL,
				names->hex[names->nr], err);
	if (!ret)
		names->nr++;
	w->part++;
out:
	free(oids);
	free(offsets);
	free(crcs);
	free(mtimes);
	return ret;
}

/* Whether e, encoded in w->buf, must go into a new pack. */
static bool over_limit(const struct writer *w)
{
	uint64_t limit = w->po->opts.max_pack_size;
	/* A pack holds at least one object, however large. */
	return w->dir && limit && w->nr_written > w->part_start &&
		hashfile_total(w->f) + w->buf.len + w->po->rawsz > limit;
}

static int write_one(struct writer *w, uint32_t n, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	struct po_entry *e = &po->entries[n];
	int ret;

	if (is_delta(e) && e->base != NO_ENTRY && !po->entries[e->base].external &&
	    po->entries[e->base].part != w->part)
		store_whole(e);
	e->out_ofs = hashfile_total(w->f);
	ret = encode_entry(w, e, err);
	if (!ret && over_limit(w)) {
		ret = finish_part(w, err);
		if (!ret)
			ret = start_part(w, err);
		if (!ret)
			e->out_ofs = hashfile_total(w->f);
		if (!ret && is_delta(e)) {
			/* Its base is in the pack just completed. */
			store_whole(e);
			ret = encode_entry(w, e, err);
		}
	}
	if (ret)
		return ret;
	if (e->how == WRITE_REUSE_WHOLE || e->how == WRITE_REUSE_DELTA)
		po->stats.reused++;
	if (e->how == WRITE_REUSE_DELTA)
		po->stats.reused_deltas++;
	if (is_delta(e))
		po->stats.deltas++;
	free(e->delta_z);
	e->delta_z = NULL;
	e->crc = gp_crc32(0, w->buf.buf, w->buf.len);
	hashfile_write(w->f, w->buf.buf, w->buf.len);
	w->since_drop += w->buf.len;
	if (w->since_drop >= DROP_EVERY) {
		drop_source_pages(po);
		w->since_drop = 0;
	}
	e->written = true;
	e->part = w->part;
	w->order[w->nr_written++] = n;
	progress_set_bytes(w->progress, hashfile_total(w->f));
	progress_update(w->progress, w->nr_copied + w->nr_written);
	return 0;
}

/* Write a run of copied bytes, giving back the source's pages now and then. */
static void write_copied(struct writer *w, const unsigned char *src, size_t len)
{
	hashfile_write(w->f, src, len);
	w->since_drop += len;
	if (w->since_drop >= DROP_EVERY) {
		drop_source_pages(w->po);
		w->since_drop = 0;
	}
}

/* The range whose pack holds the copy of bit; NULL if none. */
static const struct reuse_range *range_of_bit(const struct pack_objects *po, uint32_t bit,
					      uint64_t *ofs)
{
	struct packed_git *q;
	for (size_t i = 0; i < po->nr_ranges; i++) {
		const struct reuse_range *rr = &po->ranges[i];
		if (bit < rr->bit_start || bit - rr->bit_start >= rr->bit_nr)
			continue;
		if (rr->whole) {
			*ofs = pack_pos_to_offset(rr->pack, bit - rr->bit_start);
			return rr;
		}
		bitmap_order_locate(po->reuse_order, bit, &q, ofs);
		return q == rr->pack ? rr : NULL;
	}
	return NULL;
}

/* Where the copy of the object at pack offset ofs of rr went (rr written). */
static uint64_t range_out_ofs(const struct reuse_range *rr, uint64_t ofs)
{
	size_t lo = 0, hi = rr->nr_marks;
	if (!hi)
		return ofs;   /* nothing of rr copied: no delta can lean on it */
	/* the last mark at or before ofs; the first is at the range's first copy */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (rr->marks[mid].pack_ofs <= ofs)
			lo = mid;
		else
			hi = mid;
	}
	return (uint64_t)((int64_t)ofs + rr->marks[lo].shift);
}

/* Where the object of bit, copied verbatim, went in the output. */
static uint64_t reused_out_ofs(const struct pack_objects *po, uint32_t bit)
{
	uint64_t ofs = 0;
	const struct reuse_range *rr = range_of_bit(po, bit, &ofs);
	return rr ? range_out_ofs(rr, ofs) : 0;
}

static void mark_shift(struct reuse_range *rr, uint64_t pack_ofs, int64_t shift)
{
	if (rr->nr_marks && rr->marks[rr->nr_marks - 1].shift == shift)
		return;
	ALLOC_GROW(rr->marks, rr->nr_marks + 1, rr->alloc_marks);
	rr->marks[rr->nr_marks].pack_ofs = pack_ofs;
	rr->marks[rr->nr_marks].shift = shift;
	rr->nr_marks++;
}

/*
 * The objects copied verbatim, range by range in pack order. Runs of
 * them that keep their distances (no gap between a delta and its base,
 * or gaps that moved both alike) are written as one block; an offset
 * delta that a gap moved away from its base gets its distance
 * rewritten. Nothing per object is kept but a mark where the shift
 * (out offset less pack offset) changes.
 */
static int write_reused(struct writer *w, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	struct strbuf buf = STRBUF_INIT;
	uint32_t nr_copied = 0;
	int ret = 0;

	for (size_t i = 0; i < po->nr_ranges && !ret; i++) {
		struct reuse_range *rr = &po->ranges[i];
		struct packed_git *p = rr->pack;
		const unsigned char *run = NULL;
		size_t run_len = 0;
		struct ofs_cursor cur = OFS_CURSOR_INIT;
		size_t word_end = (rr->bit_start + (size_t)rr->bit_nr + 63) / 64;

		if (rr->prefix_nr) {
			/* one block, as stored: nothing moved, nothing to look at */
			uint64_t ofs = pack_pos_to_offset(p, 0);
			uint64_t end = entry_end(p, rr->prefix_nr - 1, &cur);
			mark_shift(rr, ofs, (int64_t)hashfile_total(w->f) - (int64_t)ofs);
			while (ofs < end) {
				size_t len = (size_t)MIN(end - ofs, (uint64_t)8 << 20);
				write_copied(w, p->pack_map + ofs, len);
				ofs += len;
				progress_set_bytes(w->progress, hashfile_total(w->f));
			}
			nr_copied += rr->prefix_nr;
			progress_update(w->progress, nr_copied);
		}
		for (size_t wi = (rr->bit_start + (size_t)rr->prefix_nr) / 64;
		     wi < word_end && wi < po->reused.word_nr; wi++) {
			uint64_t word = po->reused.words[wi];
			while (word && !ret) {
				uint32_t bit = (uint32_t)(wi * 64 + (size_t)__builtin_ctzll(word));
				struct pack_entry_header hdr;
				uint32_t pack_pos;
				uint64_t ofs, end, out_ofs, base_out;
				const unsigned char *src;
				size_t len;

				word &= word - 1;
				if (bit < rr->bit_start + rr->prefix_nr ||
				    bit - rr->bit_start >= rr->bit_nr ||
				    !reuse_locate(po, rr, bit, &cur, &pack_pos, &ofs))
					continue;
				end = entry_end(p, pack_pos, &cur);
				src = p->pack_map + ofs;
				len = (size_t)(end - ofs);
				out_ofs = hashfile_total(w->f) + run_len;
				mark_shift(rr, ofs, (int64_t)out_ofs - (int64_t)ofs);
				nr_copied++;
				/* checked when it was chosen; the pack has not changed */
				ret = pack_parse_entry_header(src, len, ofs, po->algo, &hdr, err);
				if (ret)
					break;
				if (hdr.type != OBJ_OFS_DELTA ||
				    out_ofs - (base_out = range_out_ofs(rr, hdr.base_ofs)) ==
				    ofs - hdr.base_ofs) {
					if (run && run + run_len == src) {
						run_len += len;
					} else {
						if (run)
							write_copied(w, run, run_len);
						run = src;
						run_len = len;
					}
				} else {
					/* the distance has one encoding: what precedes it is type and size */
					unsigned char head[16];
					size_t ref_len = pack_encode_ofs_distance(head, ofs - hdr.base_ofs);
					size_t type_len = hdr.hdr_len - ref_len;
					if (run)
						write_copied(w, run, run_len);
					run = NULL;
					run_len = 0;
					strbuf_reset(&buf);
					strbuf_add(&buf, src, type_len);
					strbuf_add(&buf, head, pack_encode_ofs_distance(head, out_ofs - base_out));
					strbuf_add(&buf, src + type_len + ref_len, len - type_len - ref_len);
					hashfile_write(w->f, buf.buf, buf.len);
				}
				if (run_len >= ((size_t)8 << 20)) {
					write_copied(w, run, run_len);
					run = NULL;
					run_len = 0;
				}
				if (!(nr_copied & 0xfff)) {
					progress_set_bytes(w->progress, hashfile_total(w->f) + run_len);
					progress_update(w->progress, nr_copied);
				}
			}
		}
		if (run)
			write_copied(w, run, run_len);
	}
	strbuf_release(&buf);
	w->nr_copied = nr_copied;
	po->stats.pack_reused = po->reuse_nr;
	po->stats.pack_reused_packs = po->reuse_packs;
	progress_set_bytes(w->progress, hashfile_total(w->f));
	progress_update(w->progress, nr_copied);
	return ret;
}

/* Write n, its unwritten bases first (base-most first). */
static int write_with_bases(struct writer *w, uint32_t n, uint32_t *stack,
			    struct gp_error *err)
{
	struct pack_objects *po = w->po;
	uint32_t nr_stack = 0;
	int ret = 0;
	while (n != NO_ENTRY && !po->entries[n].written && !po->entries[n].external) {
		stack[nr_stack++] = n;
		n = po->entries[n].base;
	}
	while (nr_stack && !ret)
		ret = write_one(w, stack[--nr_stack], err);
	return ret;
}

/* The entries in the order they are written (bases aside). */
static uint32_t *write_sequence(struct pack_objects *po)
{
	uint32_t *seq = xmalloc(sizeof(*seq) * (po->nr ? po->nr : 1));
	uint32_t *tail, nr_tail = 0, k = 0, nr_old;
	bool *followed;

	if (!po->follow) {
		for (uint32_t n = 0; n < po->nr; n++)
			if (!po->entries[n].external)
				seq[k++] = n;
		return seq;
	}
	tail = xmalloc(sizeof(*tail) * (po->nr ? po->nr : 1));
	followed = xcalloc(po->nr ? po->nr : 1, sizeof(*followed));
	nr_old = bitmap_order_nr(po->follow);
	for (uint32_t bit = 0; bit < nr_old; bit++) {
		uint32_t n = find_entry_raw(po, bitmap_order_index_oid_raw(
			po->follow, bitmap_order_bit_to_index(po->follow, bit)));
		if (n == NO_ENTRY || po->entries[n].external)
			continue;
		followed[n] = true;
		tail[nr_tail++] = n;
	}
	for (uint32_t n = 0; n < po->nr; n++)
		if (!followed[n] && !po->entries[n].external)
			seq[k++] = n;
	memcpy(seq + k, tail, sizeof(*tail) * nr_tail);
	free(tail);
	free(followed);
	return seq;
}

/* pack.islandCore: the core island's objects first, each side in its own order. */
static void core_first(const struct pack_objects *po, uint32_t *seq, uint32_t nr)
{
	uint32_t *rest = xmalloc(sizeof(*rest) * (nr ? nr : 1));
	uint32_t nr_core = 0, nr_rest = 0;
	for (uint32_t k = 0; k < nr; k++) {
		if (delta_islands_in_core(po->islands, seq[k]))
			seq[nr_core++] = seq[k];
		else
			rest[nr_rest++] = seq[k];
	}
	memcpy(seq + nr_core, rest, sizeof(*rest) * nr_rest);
	free(rest);
}

/*
 * Write every object: to w->f, a stream, or (w->dir set) to files, each
 * pack completed by finish_part().
 */
static int write_pack(struct writer *w, struct gp_error *err)
{
	struct pack_objects *po = w->po;
	uint32_t *stack = xmalloc(sizeof(*stack) * (po->nr ? po->nr : 1));
	uint32_t *seq = write_sequence(po);
	int ret = 0;

	if (po->islands && delta_islands_has_core(po->islands))
		core_first(po, seq, po->nr - po->nr_external);

	memset(&po->stats, 0, sizeof(po->stats));
	w->reader = pack_reader_new(0);
	strbuf_init(&w->buf, 0);
	w->order = xmalloc(sizeof(*w->order) * (po->nr ? po->nr : 1));
	w->progress = progress_start("Writing objects", pack_objects_nr(po),
				     po->opts.progress && !po->opts.no_write_progress);
	if (w->dir) {
		ret = start_part(w, err);
	} else {
		unsigned char head[PACK_HEADER_SIZE];
		pack_encode_header(head, pack_objects_nr(po));
		hashfile_write(w->f, head, sizeof(head));
	}
	if (!ret && po->reuse_nr)
		ret = write_reused(w, err);
	for (uint32_t k = 0; k < po->nr - po->nr_external && !ret; k++)
		ret = write_with_bases(w, seq[k], stack, err);
	free(seq);
	if (!ret && w->dir)
		ret = finish_part(w, err);
	progress_stop(&w->progress);
	po->stats.total = w->nr_copied + w->nr_written;
	strbuf_release(&w->buf);
	pack_reader_free(w->reader);
	free(stack);
	free(w->order);
	return ret;
}

static int write_stream(struct pack_objects *po, struct hashfile *f, struct gp_error *err)
{
	struct writer w = { .po = po };
	int ret;
	if (po->opts.max_pack_size)
		ret = gp_error_set(err, GP_EINVAL,
				   "--max-pack-size cannot be used to build a pack for transfer");
	else
		ret = prepare(po, err);
	if (ret) {
		hashfile_abort(f);
		return ret;
	}
	w.f = f;
	ret = write_pack(&w, err);
	if (ret) {
		hashfile_abort(w.f);
		return ret;
	}
	return hashfile_finish_stream(w.f, NULL, err);
}

int pack_objects_write_fd(struct pack_objects *po, int fd, struct gp_error *err)
{
	return write_stream(po, hashfile_new_stream(fd, po->algo), err);
}

int pack_objects_write_fn(struct pack_objects *po, hashfile_out_fn *out, void *data,
			  struct gp_error *err)
{
	return write_stream(po, hashfile_new_stream_fn(out, data, po->algo), err);
}

void pack_objects_names_release(struct pack_objects_names *names)
{
	free(names->hex);
	memset(names, 0, sizeof(*names));
}

int pack_objects_write_files(struct pack_objects *po, const char *base, bool write_rev,
			     struct pack_objects_names *names, struct gp_error *err)
{
	const char *slash = strrchr(base, '/');
	char *dir = slash ? xstrndup(base, (size_t)(slash - base)) : xstrdup(".");
	struct writer w = { .po = po, .dir = dir, .prefix = slash ? slash + 1 : base,
			    .tmp_name = xstrfmt("%s-tmp.pack", base),
			    .write_rev = write_rev, .names = names };
	int ret = prepare(po, err);

	if (!ret)
		ret = write_pack(&w, err);
	/* An error leaves the pack being written unfinished: remove it. */
	hashfile_abort(w.f);
	free(dir);
	free(w.tmp_name);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Thin packs and tags                                                 */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

struct thin_ctx {
	struct pack_objects *po;
	uint32_t *hashes;       /* name hashes of the trees and blobs packed, sorted */
	size_t nr_hashes;
	struct gp_error *err;
};

static bool hash_packed(const struct thin_ctx *tc, uint32_t name_hash)
{
	return bsearch(&name_hash, tc->hashes, tc->nr_hashes, sizeof(uint32_t), cmp_u32) != NULL;
}

/*
 * Add what the edge tree holds at the paths of objects being packed
 * (by name hash: a collision only costs a look at one more path). A
 * subtree is entered only when a tree at its path is packed, since an
 * unchanged subtree holds nothing new.
 */
static int add_edge_bases(const struct object_id *root, void *data)
{
	struct thin_ctx *tc = data;
	struct pack_objects *po = tc->po;
	struct edge_item { struct object_id oid; char *path; } *stack = NULL;
	size_t nr = 0, alloc = 0;
	int ret = 0;

	/* As git: a base only where a packed object of the same name may use it. */
	if (hash_packed(tc, 0))
		pack_objects_add_base(po, root, OBJ_TREE, 0);
	ALLOC_GROW(stack, nr + 1, alloc);
	stack[nr].oid = *root;
	stack[nr++].path = xstrdup("");
	while (nr) {
		struct edge_item item = stack[--nr];
		enum object_type type;
		unsigned char *buf;
		size_t size;
		struct tree_iter it;
		struct tree_entry e;

		/* The receiver has these; one we cannot read is just no base. */
		if (odb_read_object(po->odb, &item.oid, &type, &buf, &size, tc->err)) {
			gp_error_clear(tc->err);
			free(item.path);
			continue;
		}
		if (type != OBJ_TREE) {
			free(buf);
			free(item.path);
			continue;
		}
		tree_iter_init(&it, buf, size, po->algo);
		while (tree_iter_next(&it, &e, tc->err) > 0) {
			enum object_type etype = tree_mode_type(e.mode);
			char *path;
			uint32_t h;
			if (etype != OBJ_TREE && etype != OBJ_BLOB)
				continue;
			path = *item.path ? xstrfmt("%s/%s", item.path, e.name) : xstrdup(e.name);
			h = pack_objects_name_hash(po, path);
			if (!hash_packed(tc, h)) {
				free(path);
				continue;
			}
			pack_objects_add_base(po, &e.oid, etype, h);
			if (etype == OBJ_TREE) {
				ALLOC_GROW(stack, nr + 1, alloc);
				stack[nr].oid = e.oid;
				stack[nr++].path = path;
			} else {
				free(path);
			}
		}
		gp_error_clear(tc->err);
		free(buf);
		free(item.path);
	}
	while (nr)
		free(stack[--nr].path);
	free(stack);
	return ret;
}

static void thin_ctx_hashes(struct thin_ctx *tc)
{
	struct pack_objects *po = tc->po;
	tc->hashes = xmalloc(sizeof(uint32_t) * (po->nr ? po->nr : 1));
	for (uint32_t n = 0; n < po->nr; n++) {
		const struct po_entry *e = &po->entries[n];
		if (!e->external && (e->type == OBJ_TREE || e->type == OBJ_BLOB || e->type == OBJ_NONE))
			tc->hashes[tc->nr_hashes++] = e->name_hash;
	}
	qsort(tc->hashes, tc->nr_hashes, sizeof(uint32_t), cmp_u32);
}

/*
 * A "-<oid>" line names a tree-ish, as git reads it: a commit stands for
 * its tree, a tag for what it points at. Sets *tree and returns true for
 * a tree; false for anything else, or for what cannot be read.
 */
static bool peel_to_tree(struct pack_objects *po, const struct object_id *oid,
			 struct object_id *tree)
{
	struct gp_error err = GP_ERROR_INIT;
	struct object_id cur = *oid;
	bool found = false;

	/* A chain of tags ends somewhere; git's peeling has no bound either. */
	for (int hops = 0; hops < 64; hops++) {
		enum object_type type;
		unsigned char *buf;
		size_t size;
		bool next = false;

		if (odb_read_object(po->odb, &cur, &type, &buf, &size, &err))
			break;
		if (type == OBJ_TREE) {
			*tree = cur;
			found = true;
		} else if (type == OBJ_COMMIT) {
			struct commit_info ci = COMMIT_INFO_INIT;
			if (!commit_parse(buf, size, po->algo, &ci, &err)) {
				cur = ci.tree;
				next = true;
			}
			commit_info_release(&ci);
		} else if (type == OBJ_TAG) {
			struct tag_info tag;
			if (!tag_parse(buf, size, po->algo, &tag, &err)) {
				cur = tag.object;
				next = true;
			}
		}
		free(buf);
		if (!next)
			break;
	}
	gp_error_clear(&err);
	return found;
}

int pack_objects_add_preferred_bases(struct pack_objects *po, const struct object_id *oids,
				     size_t nr, struct gp_error *err)
{
	struct thin_ctx tc = { .po = po, .err = err };
	int ret = 0;
	thin_ctx_hashes(&tc);
	for (size_t i = 0; i < nr && !ret; i++) {
		struct object_info info;
		struct object_id tree;
		if (odb_read_object_info(po->odb, &oids[i], &info, 0, err)) {
			gp_error_clear(err);   /* a base we lack is no base */
			continue;
		}
		if (info.type == OBJ_BLOB)
			pack_objects_add_base(po, &oids[i], info.type, 0);
		else if (peel_to_tree(po, &oids[i], &tree))
			ret = add_edge_bases(&tree, &tc);
	}
	free(tc.hashes);
	return ret;
}

int pack_objects_add_thin_bases(struct pack_objects *po, struct rev_walk *walk,
				struct gp_error *err)
{
	struct thin_ctx tc = { .po = po, .err = err };
	int ret;

	tc.hashes = xmalloc(sizeof(uint32_t) * (po->nr ? po->nr : 1));
	for (uint32_t n = 0; n < po->nr; n++) {
		const struct po_entry *e = &po->entries[n];
		if (!e->external && (e->type == OBJ_TREE || e->type == OBJ_BLOB))
			tc.hashes[tc.nr_hashes++] = e->name_hash;
	}
	qsort(tc.hashes, tc.nr_hashes, sizeof(uint32_t), cmp_u32);
	/* git takes as many edges as the window holds objects. */
	ret = rev_walk_for_each_edge(walk, (size_t)(po->opts.window > 0 ? po->opts.window : 1),
				     add_edge_bases, &tc);
	free(tc.hashes);
	return ret;
}

int pack_objects_include_tag(struct pack_objects *po, const struct object_id *oid,
			     struct gp_error *err)
{
	struct object_id chain[16], cur = *oid;
	size_t nr = 0;
	int ret = 0;

	if (pack_objects_has(po, oid))
		return 0;
	for (;;) {
		enum object_type type;
		unsigned char *buf;
		size_t size;
		struct tag_info tag;
		struct object_info info;

		ret = odb_read_object_info(po->odb, &cur, &info, 0, err);
		if (ret)
			return ret == GP_ENOTFOUND ? (gp_error_clear(err), 0) : ret;
		if (info.type != OBJ_TAG)
			break;
		if (nr == ARRAY_SIZE(chain))
			return 0;   /* absurdly long chains are not followed */
		chain[nr++] = cur;
		ret = odb_read_object(po->odb, &cur, &type, &buf, &size, err);
		if (ret)
			return ret;
		ret = tag_parse(buf, size, po->algo, &tag, err);
		free(buf);
		if (ret)
			return ret;
		cur = tag.object;
	}
	if (!nr || !pack_objects_has(po, &cur))
		return 0;
	for (size_t i = 0; i < nr; i++)
		pack_objects_add(po, &chain[i], OBJ_TAG, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Cruft packs                                                         */

/* An unreachable object that may go into the cruft pack. */
struct cruft_cand {
	struct object_id oid;   /* algo 0: a free slot */
	uint32_t mtime;
	bool added;
};

struct cruft_table {
	struct cruft_cand *slots;
	size_t mask, nr;
};

static struct cruft_cand *cruft_find(struct cruft_table *t, const struct object_id *oid,
				     bool create)
{
	size_t at;
	if (create && (t->nr + 1) * 2 > t->mask + 1) {
		struct cruft_cand *old = t->slots;
		size_t old_size = t->mask + 1;
		t->mask = old_size * 2 - 1;
		t->slots = xcalloc(t->mask + 1, sizeof(*t->slots));
		for (size_t i = 0; i < old_size; i++) {
			if (!old[i].oid.algo)
				continue;
			for (at = oid_slot(&old[i].oid, t->mask); t->slots[at].oid.algo;
			     at = (at + 1) & t->mask)
				;
			t->slots[at] = old[i];
		}
		free(old);
	}
	for (at = oid_slot(oid, t->mask); t->slots[at].oid.algo; at = (at + 1) & t->mask)
		if (oideq(&t->slots[at].oid, oid))
			return &t->slots[at];
	if (!create)
		return NULL;
	t->slots[at].oid = *oid;
	t->nr++;
	return &t->slots[at];
}

struct cruft_ctx {
	struct pack_objects *po;
	int64_t expiration;
	struct packed_git **kept;
	size_t nr_kept;
	struct cruft_table cands;
};

static bool in_kept(const struct cruft_ctx *cc, const struct object_id *oid)
{
	for (size_t i = 0; i < cc->nr_kept; i++) {
		uint32_t idx_pos;
		if (pack_find_oid(cc->kept[i], oid, &idx_pos))
			return true;
	}
	return false;
}

static void cruft_candidate(struct cruft_ctx *cc, const struct object_id *oid, uint32_t mtime)
{
	struct cruft_cand *c;
	if (in_kept(cc, oid))
		return;
	c = cruft_find(&cc->cands, oid, true);
	if (mtime > c->mtime)
		c->mtime = mtime;
}

static int cruft_loose(const struct object_id *oid, const char *path, void *data)
{
	struct stat st;
	if (!stat(path, &st))
		cruft_candidate(data, oid, (uint32_t)MIN((uint64_t)st.st_mtime, UINT32_MAX));
	return 0;
}

static bool name_listed(const char *name, const char *const *list, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

/* The objects of a discarded pack: a cruft pack's own mtimes, else the pack's. */
static int cruft_pack(struct cruft_ctx *cc, struct packed_git *p, struct gp_error *err)
{
	struct pack_objects *po = cc->po;
	size_t len = strlen(p->pack_path) - strlen(".pack");
	char *mtimes_path = xstrfmt("%.*s.mtimes", (int)len, p->pack_path);
	uint32_t *mtimes = NULL, pack_mtime = 0;
	struct stat st;
	int ret = mtimes_read(mtimes_path, po->algo, p->nr_objects, p->pack_hash, &mtimes, err);

	free(mtimes_path);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		ret = 0;
	}
	if (ret)
		return ret;
	if (!stat(p->pack_path, &st))
		pack_mtime = (uint32_t)MIN((uint64_t)st.st_mtime, UINT32_MAX);
	for (uint32_t idx_pos = 0; idx_pos < p->nr_objects; idx_pos++) {
		struct object_id oid;
		pack_nth_oid(p, idx_pos, &oid);
		cruft_candidate(cc, &oid, mtimes ? mtimes[idx_pos] : pack_mtime);
	}
	free(mtimes);
	return 0;
}

static void cruft_add(struct cruft_ctx *cc, struct cruft_cand *c, uint32_t mtime)
{
	struct pack_objects *po = cc->po;
	c->added = true;
	pack_objects_add_hashed(po, &c->oid, OBJ_NONE, 0);
	po->entries[find_entry(po, &c->oid)].mtime = mtime;
}

/*
 * Objects that expired but are reachable from one that did not stay
 * with it: walk from every object added, through candidates only
 * (objects in kept packs are safe already; missing ones are skipped).
 */
/* What oid points at (a commit's tree and parents, a tree's entries, a tag's object). */
static void links_of(struct pack_objects *po, const struct object_id *oid,
		     struct object_id **links, size_t *nr_links, size_t *alloc_links)
{
	struct gp_error err = GP_ERROR_INIT;
	enum object_type type;
	unsigned char *buf;
	size_t size;

	*nr_links = 0;
	if (odb_read_object(po->odb, oid, &type, &buf, &size, &err)) {
		gp_error_clear(&err);
		return;
	}
	if (type == OBJ_COMMIT) {
		struct commit_info ci = COMMIT_INFO_INIT;
		if (!commit_parse(buf, size, po->algo, &ci, &err)) {
			ALLOC_GROW(*links, *nr_links + ci.nr_parents + 1, *alloc_links);
			(*links)[(*nr_links)++] = ci.tree;
			for (size_t i = 0; i < ci.nr_parents; i++)
				(*links)[(*nr_links)++] = ci.parents[i];
		}
		commit_info_release(&ci);
	} else if (type == OBJ_TREE) {
		struct tree_iter it;
		struct tree_entry e;
		tree_iter_init(&it, buf, size, po->algo);
		while (tree_iter_next(&it, &e, &err) > 0) {
			if (tree_mode_type(e.mode) == OBJ_COMMIT)
				continue;
			ALLOC_GROW(*links, *nr_links + 1, *alloc_links);
			(*links)[(*nr_links)++] = e.oid;
		}
	} else if (type == OBJ_TAG) {
		struct tag_info tag;
		if (!tag_parse(buf, size, po->algo, &tag, &err)) {
			ALLOC_GROW(*links, *nr_links + 1, *alloc_links);
			(*links)[(*nr_links)++] = tag.object;
		}
	}
	gp_error_clear(&err);
	free(buf);
}

/* Kept for a fresher object's sake: it expires with it (git's choice). */
static void rescue_links(struct cruft_ctx *cc, const struct object_id *links, size_t nr_links)
{
	for (size_t i = 0; i < nr_links; i++) {
		struct cruft_cand *c = cruft_find(&cc->cands, &links[i], false);
		if (c && !c->added)
			cruft_add(cc, c, (uint32_t)MIN((uint64_t)cc->expiration, UINT32_MAX));
	}
}

/*
 * Objects that expired but are reachable from one that did not stay
 * with it, or from a recent tip (gc.recentObjectsHook): walk from every
 * object added and every tip, through candidates only (objects in kept
 * packs are safe already; missing ones are skipped).
 */
static int cruft_rescue(struct cruft_ctx *cc, struct gp_error *err)
{
	struct pack_objects *po = cc->po;
	struct object_id *links = NULL;
	size_t nr_links = 0, alloc_links = 0;
	uint32_t next = 0;

	for (size_t i = 0; i < po->nr_recent; i++) {
		struct cruft_cand *c = cruft_find(&cc->cands, &po->recent[i], false);
		if (c && !c->added) {
			/* a tip is as recent as now: it stays, and what it reaches */
			cruft_add(cc, c, (uint32_t)MIN((uint64_t)time(NULL), UINT32_MAX));
			continue;
		}
		if (c)
			continue;
		/* not a candidate (kept, or reachable): what it reaches may be */
		links_of(po, &po->recent[i], &links, &nr_links, &alloc_links);
		rescue_links(cc, links, nr_links);
	}
	while (next < po->nr) {
		struct object_id oid = po->entries[next++].oid;
		links_of(po, &oid, &links, &nr_links, &alloc_links);
		rescue_links(cc, links, nr_links);
	}
	free(links);
	gp_error_clear(err);
	return 0;
}

void pack_objects_set_recent(struct pack_objects *po, const struct object_id *tips, size_t nr)
{
	po->recent = tips;
	po->nr_recent = nr;
}

int pack_objects_add_cruft(struct pack_objects *po, const char *const *stay, size_t nr_stay,
			   const char *const *discard, size_t nr_discard, int64_t expiration,
			   struct gp_error *err)
{
	struct cruft_ctx cc = { .po = po, .expiration = expiration };
	int ret = 0;

	po->cruft = true;
	/* Every pack named must be one of ours, as git insists. */
	for (size_t i = 0; i < nr_discard; i++)
		if (!pack_named(po, discard[i]))
			return gp_error_set(err, GP_ENOTFOUND, "could not find pack '%s'", discard[i]);
	for (size_t i = 0; i < nr_stay; i++)
		if (!pack_named(po, stay[i]))
			return gp_error_set(err, GP_ENOTFOUND, "could not find pack '%s'", stay[i]);
	cc.cands.mask = 1023;
	cc.cands.slots = xcalloc(cc.cands.mask + 1, sizeof(*cc.cands.slots));
	cc.kept = xcalloc(odb_nr_packs(po->odb) + 1, sizeof(*cc.kept));
	/* Every pack that is not being discarded stays, listed or not. */
	for (size_t i = 0; i < odb_nr_packs(po->odb); i++) {
		struct packed_git *p = odb_pack(po->odb, i);
		if (!odb_pack_is_local(po->odb, i) ||
		    !name_listed(base_name(p->pack_path), discard, nr_discard))
			cc.kept[cc.nr_kept++] = p;
	}
	for (size_t i = 0; i < odb_nr_packs(po->odb) && !ret; i++) {
		struct packed_git *p = odb_pack(po->odb, i);
		if (odb_pack_is_local(po->odb, i) &&
		    name_listed(base_name(p->pack_path), discard, nr_discard))
			ret = cruft_pack(&cc, p, err);
	}
	if (!ret)
		ret = loose_for_each(odb_objdir(po->odb), po->algo, cruft_loose, &cc);
	for (size_t at = 0; !ret && at <= cc.cands.mask; at++) {
		struct cruft_cand *c = &cc.cands.slots[at];
		if (c->oid.algo && (!expiration || (int64_t)c->mtime > expiration))
			cruft_add(&cc, c, c->mtime);
	}
	if (!ret && expiration)
		ret = cruft_rescue(&cc, err);
	free(cc.cands.slots);
	free(cc.kept);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Counting with bitmaps, and reusing the stored pack as it is          */

struct bitmap_add {
	struct pack_objects *po;
	struct bitmap_index *bi;
	const struct bitmap_order *order;
	bool unique;   /* nothing was added before: every bit is a new object */
};

static int add_bitmapped(uint32_t bit_pos, const struct object_id *oid, enum object_type type,
			 void *data)
{
	struct bitmap_add *ba = data;
	uint32_t name_hash = 0;
	if (ba->order && bit_pos < bitmap_order_nr(ba->order) &&
	    !bitmap_index_name_hash(ba->bi, bitmap_order_bit_to_index(ba->order, bit_pos), &name_hash))
		name_hash = 0;
	/* a million objects of a clone need no lookup each: bits are distinct */
	if (ba->unique)
		add_new_entry(ba->po, oid, type, name_hash);
	else
		pack_objects_add_hashed(ba->po, oid, type, name_hash);
	return 0;
}


/* The bit of the object whose copy at pack position pos of rr is reused; false if none. */
static bool reused_bit_at(const struct pack_objects *po, const struct reuse_range *rr,
			  uint32_t pos, uint32_t *bit)
{
	struct object_id oid;
	uint64_t ofs;
	struct packed_git *q;
	if (rr->whole) {
		*bit = rr->bit_start + pos;
		return bitmap_get(&po->reused, *bit);
	}
	pack_nth_oid(rr->pack, pack_pos_to_idx(rr->pack, pos), &oid);
	if (!bitmap_order_find(po->reuse_order, &oid, bit) || !bitmap_get(&po->reused, *bit))
		return false;
	bitmap_order_locate(po->reuse_order, *bit, &q, &ofs);
	return q == rr->pack && ofs == pack_pos_to_offset(rr->pack, pos);
}

/*
 * Git's partial pack reuse, over one range: every object whose bit is
 * set is copied as stored, unless it is a delta whose base is not copied
 * from this pack before it (a delta against an object of another pack,
 * or one not sent, is found again by the usual way). Entries whose
 * stored CRC-32 does not match the .idx are not copied: no damage is
 * passed on.
 */
static void reuse_from_range(struct pack_objects *po, const struct bitmap_result *res,
			     struct reuse_range *rr)
{
	struct gp_error err = GP_ERROR_INIT;
	struct packed_git *p = rr->pack;
	struct ofs_cursor cur = OFS_CURSOR_INIT;
	uint32_t before = po->reuse_nr;
	/*
	 * Everything stored before gap_ofs is copied (a whole range, until
	 * its first object that is not): a base there needs no lookup.
	 */
	uint64_t gap_ofs = rr->whole ? UINT64_MAX : 0;
	uint64_t since_drop = 0;   /* bytes checked since the pages were given back */

	/* A small fetch often wants nothing of the big pack: no reverse index then. */
	if (!bitmap_result_count_range(res, rr->bit_start, rr->bit_nr))
		return;
	if (pack_open_pack(p, &err) || pack_load_revindex(p, &err) || p->idx_version < 2) {
		gp_error_clear(&err);
		return;
	}
	for (uint32_t bit = rr->bit_start; bit < rr->bit_start + rr->bit_nr; bit++) {
		struct pack_entry_header hdr;
		uint64_t ofs, end;
		uint32_t pack_pos, idx_pos, base_pos, base_idx, base_bit;

		if (!bitmap_result_has_bit(res, bit)) {
			if (gap_ofs == UINT64_MAX)
				gap_ofs = pack_pos_to_offset(p, bit - rr->bit_start);
			continue;
		}
		if (!reuse_locate(po, rr, bit, &cur, &pack_pos, &ofs))
			continue;
		if (rr->whole)
			pack_prefetch_pos(p, pack_pos + 16);
		end = entry_end(p, pack_pos, &cur);
		idx_pos = pack_pos_to_idx(p, pack_pos);
		if (pack_parse_entry_header(p->pack_map + ofs, (size_t)(end - ofs), ofs, po->algo,
					    &hdr, &err) ||
		    gp_crc32(0, p->pack_map + ofs, (size_t)(end - ofs)) != pack_nth_crc(p, idx_pos)) {
			gp_error_clear(&err);
			goto not_copied;
		}
		/* A delta's base must be copied from this very pack, earlier. */
		if (hdr.type == OBJ_OFS_DELTA && hdr.base_ofs < gap_ofs)
			; /* copied: it lies before the first gap */
		else if (hdr.type == OBJ_OFS_DELTA &&
			 (!pack_offset_to_pos_before(p, hdr.base_ofs, pack_pos, &base_pos) ||
			  !reused_bit_at(po, rr, base_pos, &base_bit)))
			goto not_copied;
		else if (hdr.type == OBJ_REF_DELTA &&
			 (!pack_find_oid(p, &hdr.base_oid, &base_idx) ||
			  !pack_offset_to_pos_before(p, pack_nth_offset(p, base_idx), pack_pos,
						     &base_pos) ||
			  !reused_bit_at(po, rr, base_pos, &base_bit)))
			goto not_copied;
		bitmap_set(&po->reused, bit);
		po->reuse_nr++;
		if (gap_ofs == UINT64_MAX)
			rr->prefix_nr = pack_pos + 1;
		since_drop += end - ofs;
		if (since_drop >= DROP_EVERY) {
			pack_drop_pages(p);
			since_drop = 0;
		}
		continue;
not_copied:
		if (gap_ofs == UINT64_MAX)
			gap_ofs = ofs;
	}
	if (po->reuse_nr > before)
		po->reuse_packs++;
}

/* Which packs verbatim reuse may copy from, with their runs of bit positions. */
static size_t reuse_ranges(struct odb *odb, const struct bitmap_order *order, bool multi,
			   struct reuse_range **out)
{
	struct midx *m = odb_midx(odb);
	struct reuse_range *rr;
	size_t nr = 0;
	struct packed_git *first;
	uint64_t ofs;

	*out = NULL;
	if (!bitmap_order_nr(order))
		return 0;
	bitmap_order_locate(order, 0, &first, &ofs);
	if (!first)
		return 0;
	if (!m || !multi || !midx_has_btmp(m)) {
		/* The pack whose objects come first: a pack bitmap's, a MIDX's preferred one. */
		uint32_t nr_bits = MIN(first->nr_objects, bitmap_order_nr(order));
		if (m && midx_has_btmp(m)) {
			for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
				uint32_t pos, cnt;
				if (odb_midx_pack(odb, id) == first &&
				    midx_bitmapped_pack(m, id, &pos, &cnt) && pos == 0)
					nr_bits = cnt;
			}
		}
		rr = xcalloc(1, sizeof(*rr));
		rr->pack = first;
		rr->bit_start = 0;
		rr->bit_nr = nr_bits;
		nr = 1;
	} else {
		rr = xcalloc(midx_nr_packs(m) + 1, sizeof(*rr));
		for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
			uint32_t pos, cnt;
			struct packed_git *p = odb_midx_pack(odb, id);
			if (!p || !midx_bitmapped_pack(m, id, &pos, &cnt) || !cnt)
				continue;
			rr[nr].pack = p;
			rr[nr].bit_start = pos;
			rr[nr].bit_nr = cnt;
			nr++;
		}
		/* In bit order: a base's pack before its deltas' when deltas cross. */
		for (size_t i = 1; i < nr; i++)
			for (size_t j = i; j > 0 && rr[j - 1].bit_start > rr[j].bit_start; j--) {
				struct reuse_range t = rr[j];
				rr[j] = rr[j - 1];
				rr[j - 1] = t;
			}
	}
	for (size_t i = 0; i < nr; i++)
		rr[i].whole = rr[i].bit_nr == rr[i].pack->nr_objects;
	*out = rr;
	return nr;
}


int pack_objects_add_from_bitmap(struct pack_objects *po, struct bitmap_index *bi,
				 const struct bitmap_result *res, enum pack_reuse reuse, bool thin,
				 struct gp_error *err)
{
	struct bitmap_add ba = { po, bi, bitmap_index_order(bi), po->nr == 0 };
	uint64_t counts[5];

	if (thin)
		po->haves = res;
	/*
	 * Verbatim reuse is decided first, once per pack object (only one
	 * bitmap may be reused): the rest become entries. Islands are
	 * known only at prepare(), so nothing is copied unchecked then.
	 */
	if (reuse != PACK_REUSE_NONE && ba.order && !po->islands && !po->reuse_order &&
	    !po->nr) {
		po->reuse_order = ba.order;
		po->nr_ranges = reuse_ranges(po->odb, ba.order, reuse == PACK_REUSE_MULTI,
					     &po->ranges);
		bitmap_grow(&po->reused, (bitmap_order_nr(ba.order) + 63) / 64);
		for (size_t i = 0; i < po->nr_ranges; i++)
			reuse_from_range(po, res, &po->ranges[i]);
	}
	bitmap_result_count(res, counts);
	reserve_entries(po, (size_t)(counts[1] + counts[2] + counts[3] + counts[4] - po->reuse_nr));
	return bitmap_result_for_each_pos(res, po->reuse_nr ? &po->reused : NULL, add_bitmapped,
					  &ba);
}

int pack_reuse_config(const struct config_set *cs, enum pack_reuse *out, struct gp_error *err)
{
	const char *value;
	bool b;
	if (config_get_value(cs, "pack.allowpackreuse", &value)) {
		*out = config_get_bool_or(cs, "feature.experimental", false) ? PACK_REUSE_MULTI
									     : PACK_REUSE_SINGLE;
		return 0;
	}
	if (value && !strcasecmp(value, "multi"))
		*out = PACK_REUSE_MULTI;
	else if (value && !strcasecmp(value, "single"))
		*out = PACK_REUSE_SINGLE;
	else if (!value || config_parse_bool(value, &b))
		*out = !value || b ? PACK_REUSE_SINGLE : PACK_REUSE_NONE;
	else
		return gp_error_set(err, GP_EINVAL, "invalid value for pack.allowPackReuse: '%s'",
				    value);
	return 0;
}

int pack_objects_count_bitmapped(struct pack_objects *po, struct odb *odb,
				 const struct bitmap_tip *tips, size_t nr_tips,
				 enum pack_reuse reuse, bool thin, bool progress,
				 struct bitmap_index **bi_out, struct bitmap_result **res_out,
				 struct gp_error *err)
{
	struct bitmap_index *bi = NULL;
	struct bitmap_result *res = NULL;
	struct progress *meter;
	int ret;

	if (bitmap_index_open(&bi, odb, err)) {
		gp_error_clear(err);
		return 1;
	}
	if (bitmap_reachable(bi, odb, tips, nr_tips, &res, err)) {
		/* 1: the bitmaps cannot answer; an error: the walk reports it better */
		gp_error_clear(err);
		bitmap_index_free(bi);
		return 1;
	}
	meter = progress_start("Enumerating objects", 0, progress);
	ret = pack_objects_add_from_bitmap(po, bi, res, reuse, thin, err);
	progress_update(meter, pack_objects_nr(po));
	progress_stop(&meter);
	if (ret) {
		bitmap_result_free(res);
		bitmap_index_free(bi);
		return ret;
	}
	trace2_data_intmax("bitmap", "bitmap/hits", (int64_t)pack_objects_nr(po));
	*bi_out = bi;
	*res_out = res;
	return 0;
}
