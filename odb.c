/*
 * odb.c: the object database (see odb.h).
 */
#include "odb.h"
#include "delta.h"
#include "error.h"
#include "loose.h"
#include "midx.h"
#include "packfile.h"
#include "strbuf.h"
#include <dirent.h>
#include <sys/stat.h>

#define MAX_ALTERNATE_DEPTH 5

struct odb_dir {
	char *path;              /* for reading: alternates with links resolved */
	char *shown;             /* as git names it (see odb_alternate()) */
	int depth;               /* 0: the odb's own; alternates count from 1 */
	bool local;
	struct midx *midx;       /* NULL when absent or unusable */
	size_t *midx_packs;      /* pack_int_id -> index in odb->packs, or SIZE_MAX */
	struct stat midx_st;     /* the MIDX file as last looked at; */
	struct stat chain_st;    /* and the chain file (multi-pack-index.d) */
	bool midx_seen;          /* st_ino 0 when there was none */
};

struct odb {
	int algo;
	bool no_midx;               /* core.multiPackIndex=false */
	bool trust_bitmaps;         /* see odb_set_verify_bitmaps() */
	struct odb_dir *dirs;       /* [0] is the odb's own directory */
	size_t nr_dirs, alloc_dirs;
	struct packed_git **packs;
	bool *pack_local;
	bool *pack_in_midx;         /* found through a MIDX, not searched alone */
	size_t nr_packs, alloc_packs, alloc_local, alloc_in_midx;
	size_t last_pack;           /* where the last lookup hit */
	/*
	 * MIDXs replaced by a rescan: callers may still hold them
	 * (odb_midx()), so they live until odb_free().
	 */
	struct midx **retired_midx;
	size_t nr_retired_midx, alloc_retired_midx;
	struct object_id empty_tree;
	struct pack_reader *reader;
	char **warnings;
	size_t nr_warnings, alloc_warnings;
	odb_missing_fn *missing_fn;   /* a partial clone's lazy fetch */
	void *missing_data;
	char *local_real;           /* the own directory, links resolved (or NULL) */
};

GP_PRINTF(2, 3) static void add_warning(struct odb *odb, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(odb->warnings, odb->nr_warnings + 1, odb->alloc_warnings);
	odb->warnings[odb->nr_warnings++] = strbuf_detach(&sb, NULL);
}

static int cmp_pack_mtime(const void *a, const void *b)
{
	const struct packed_git *pa = *(struct packed_git *const *)a;
	const struct packed_git *pb = *(struct packed_git *const *)b;
	if (pa->mtime != pb->mtime)
		return pa->mtime < pb->mtime ? 1 : -1;
	return strcmp(pa->idx_path, pb->idx_path);
}

static bool have_pack(const struct odb *odb, const char *idx_path)
{
	for (size_t i = 0; i < odb->nr_packs; i++)
		if (!strcmp(odb->packs[i]->idx_path, idx_path))
			return true;
	return false;
}

/* Open the directory's packs that are not open yet. */
static void load_packs(struct odb *odb, const char *objdir, bool local)
{
	char *packdir = xstrfmt("%s/pack", objdir);
	DIR *d = opendir(packdir);
	struct dirent *de;
	size_t first = odb->nr_packs;
	if (!d) {
		free(packdir);
		return;
	}
	while ((de = readdir(d))) {
		struct gp_error err = GP_ERROR_INIT;
		struct packed_git *p;
		char *idx, *pack;
		/* Any name will do, as for git: "test-1-<hash>.idx" is a pack too. */
		if (!ends_with(de->d_name, ".idx") || de->d_name[0] == '.')
			continue;
		idx = xstrfmt("%s/%s", packdir, de->d_name);
		if (have_pack(odb, idx)) {
			free(idx);
			continue;
		}
		pack = xstrfmt("%.*s.pack", (int)(strlen(idx) - 4), idx);
		/* An .idx without its pack is a pack being deleted or garbage. */
		if (access(pack, F_OK)) {
			free(idx);
			free(pack);
			continue;
		}
		free(pack);
		if (pack_open_idx_flags(&p, idx, odb->algo, PACK_IDX_LAZY, &err)) {
			add_warning(odb, "%s", gp_error_msg(&err));
			gp_error_clear(&err);
			free(idx);
			continue;
		}
		free(idx);
		ALLOC_GROW(odb->packs, odb->nr_packs + 1, odb->alloc_packs);
		ALLOC_GROW(odb->pack_local, odb->nr_packs + 1, odb->alloc_local);
		ALLOC_GROW(odb->pack_in_midx, odb->nr_packs + 1, odb->alloc_in_midx);
		odb->pack_local[odb->nr_packs] = local;
		odb->pack_in_midx[odb->nr_packs] = false;
		odb->packs[odb->nr_packs++] = p;
	}
	closedir(d);
	free(packdir);
	if (odb->nr_packs - first > 1)
		qsort(odb->packs + first, odb->nr_packs - first, sizeof(*odb->packs), cmp_pack_mtime);
}

static char *midx_file(const struct odb_dir *dir)
{
	return xstrfmt("%s/pack/" MIDX_FILE, dir->path);
}

static char *chain_file(const struct odb_dir *dir)
{
	return xstrfmt("%s/pack/" MIDX_CHAIN_FILE, dir->path);
}

static void stat_or_zero(const char *path, struct stat *st)
{
	if (stat(path, st) < 0)
		memset(st, 0, sizeof(*st));
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * Open the directory's MIDX (lone, or an incremental chain) and tie its
 * packs to ours. A bad MIDX is reported and ignored (the packs still
 * answer); a pack it names that is gone is reported, and lookups that
 * land there fall back to the packs.
 */
static void load_midx(struct odb *odb, struct odb_dir *dir)
{
	struct gp_error err = GP_ERROR_INIT;
	char *pack_dir = xstrfmt("%s/pack", dir->path);
	char *file = midx_file(dir), *chain = chain_file(dir);
	struct midx *m;
	int ret;

	/* Stat first: a MIDX replaced after this is seen by the next rescan. */
	stat_or_zero(file, &dir->midx_st);
	stat_or_zero(chain, &dir->chain_st);
	dir->midx_seen = true;
	free(file);
	free(chain);
	if (odb->no_midx) {
		free(pack_dir);
		return;
	}
	ret = midx_open_flags(&m, pack_dir, odb->algo, MIDX_OPEN_LAZY, &err);
	if (ret) {
		if (ret != GP_ENOTFOUND)
			add_warning(odb, "%s (ignoring it)", gp_error_msg(&err));
		gp_error_clear(&err);
		free(pack_dir);
		return;
	}
	dir->midx = m;
	dir->midx_packs = xmalloc(sizeof(size_t) * (midx_nr_packs(m) ? midx_nr_packs(m) : 1));
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		char *idx_path = xstrfmt("%s/%s", pack_dir, midx_pack_name(m, id));
		dir->midx_packs[id] = SIZE_MAX;
		for (size_t i = 0; i < odb->nr_packs; i++)
			if (!strcmp(odb->packs[i]->idx_path, idx_path)) {
				dir->midx_packs[id] = i;
				odb->pack_in_midx[i] = true;
			}
		if (dir->midx_packs[id] == SIZE_MAX)
			add_warning(odb, "%s names %s, which is missing", midx_path(m),
				    midx_pack_name(m, id));
		free(idx_path);
	}
	free(pack_dir);
}

static bool midx_changed(const struct odb_dir *dir)
{
	char *file = midx_file(dir), *chain = chain_file(dir);
	struct stat st, cst;
	stat_or_zero(file, &st);
	stat_or_zero(chain, &cst);
	free(file);
	free(chain);
	return !dir->midx_seen || !same_stat(&st, &dir->midx_st) || !same_stat(&cst, &dir->chain_st);
}

/*
 * Look at the pack directories again, as a repack or a push may have
 * changed them since we opened: new packs are added, and a MIDX that was
 * replaced is reopened. Packs that were deleted stay open (their maps
 * still hold the data) or fail to open and are skipped. True when
 * anything new turned up, so that a lookup that missed may try again.
 */
static bool rescan(struct odb *odb)
{
	size_t nr_before = odb->nr_packs;
	bool midx_reloaded = false;
	for (size_t d = 0; d < odb->nr_dirs; d++)
		load_packs(odb, odb->dirs[d].path, odb->dirs[d].local);
	for (size_t d = 0; d < odb->nr_dirs; d++) {
		struct odb_dir *dir = &odb->dirs[d];
		if (!midx_changed(dir))
			continue;
		if (dir->midx) {
			ALLOC_GROW(odb->retired_midx, odb->nr_retired_midx + 1,
				   odb->alloc_retired_midx);
			odb->retired_midx[odb->nr_retired_midx++] = dir->midx;
			dir->midx = NULL;
			FREE_AND_NULL(dir->midx_packs);
		}
		load_midx(odb, dir);
		midx_reloaded = true;
	}
	if (midx_reloaded) {
		/* Which packs a MIDX covers, afresh: the old one may have covered others. */
		for (size_t i = 0; i < odb->nr_packs; i++)
			odb->pack_in_midx[i] = false;
		for (size_t d = 0; d < odb->nr_dirs; d++) {
			struct odb_dir *dir = &odb->dirs[d];
			for (uint32_t id = 0; dir->midx && id < midx_nr_packs(dir->midx); id++)
				if (dir->midx_packs[id] != SIZE_MAX)
					odb->pack_in_midx[dir->midx_packs[id]] = true;
		}
	}
	return midx_reloaded || odb->nr_packs != nr_before;
}

bool odb_reprepare(struct odb *odb)
{
	return rescan(odb);
}

static bool have_dir(const struct odb *odb, const char *path)
{
	if (odb->local_real && !strcmp(odb->local_real, path))
		return true;
	for (size_t i = 0; i < odb->nr_dirs; i++)
		if (!strcmp(odb->dirs[i].path, path))
			return true;
	return false;
}

/*
 * Resolve "." and ".." and repeated slashes in an absolute path, and
 * drop trailing slashes, in the text only (symbolic links stay, as git
 * shows them). False when ".." would climb above the root.
 */
static bool normalize_path(struct strbuf *sb)
{
	struct strbuf out = STRBUF_INIT;
	const char *p = sb->buf;
	bool ok = true;
	while (*p) {
		const char *seg;
		size_t len;
		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (!len || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			char *slash = strrchr(out.buf, '/');
			if (!slash) {
				ok = false;
				break;
			}
			strbuf_setlen(&out, (size_t)(slash - out.buf));
			continue;
		}
		strbuf_addch(&out, '/');
		strbuf_add(&out, seg, len);
	}
	if (!out.len)
		strbuf_addch(&out, '/');
	if (ok) {
		strbuf_reset(sb);
		strbuf_addbuf(sb, &out);
	}
	strbuf_release(&out);
	return ok;
}

static void add_dir(struct odb *odb, const char *path, const char *shown, bool local,
		    int depth);

/*
 * objdir/info/alternates (dir is odb->dirs[index]): one directory a
 * line, relative ones relative to objdir; "#" lines are comments. Read
 * depth first, as git does, and with git's messages for what is
 * skipped.
 */
static void read_alternates(struct odb *odb, size_t index)
{
	char *file = xstrfmt("%s/info/alternates", odb->dirs[index].path);
	char *objdir = xstrdup(odb->dirs[index].path);
	char *objdir_shown = xstrdup(odb->dirs[index].shown);
	int depth = odb->dirs[index].depth;
	struct strbuf sb = STRBUF_INIT, shown = STRBUF_INIT;
	char *line, *save = NULL, *base = NULL;

	if (strbuf_read_file(&sb, file, 0) < 0 || !sb.len)
		goto out;
	if (depth > MAX_ALTERNATE_DEPTH) {
		add_warning(odb, "%s: ignoring alternate object stores, nesting too deep",
			    objdir_shown);
		goto out;
	}
	base = realpath(objdir, NULL);
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct stat st;
		char *real;
		size_t len = strlen(line);
		if (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		strbuf_reset(&shown);
		if (line[0] != '/')
			strbuf_addf(&shown, "%s/", base ? base : objdir);
		strbuf_addstr(&shown, line);
		real = normalize_path(&shown) ? realpath(shown.buf, NULL) : NULL;
		if (!real) {
			add_warning(odb, "unable to normalize alternate object path: %s", shown.buf);
			continue;
		}
		if (stat(real, &st) || !S_ISDIR(st.st_mode))
			add_warning(odb, "object directory %s does not exist; "
				    "check .git/objects/info/alternates", shown.buf);
		else if (!have_dir(odb, real))
			add_dir(odb, real, shown.buf, false, depth + 1);
		free(real);
	}
out:
	strbuf_release(&sb);
	strbuf_release(&shown);
	free(base);
	free(objdir);
	free(objdir_shown);
	free(file);
}

static void add_dir(struct odb *odb, const char *path, const char *shown, bool local,
		    int depth)
{
	size_t index = odb->nr_dirs;
	ALLOC_GROW(odb->dirs, odb->nr_dirs + 1, odb->alloc_dirs);
	memset(&odb->dirs[index], 0, sizeof(odb->dirs[0]));
	odb->dirs[index].path = xstrdup(path);
	odb->dirs[index].shown = xstrdup(shown);
	odb->dirs[index].depth = depth;
	odb->dirs[index].local = local;
	odb->nr_dirs++;
	load_packs(odb, path, local);
	load_midx(odb, &odb->dirs[index]);
	read_alternates(odb, index);
}

int odb_open(struct odb **out, const char *objdir, int algo, struct gp_error *err)
{
	return odb_open_flags(out, objdir, algo, 0, err);
}

int odb_open_flags(struct odb **out, const char *objdir, int algo, unsigned flags,
		   struct gp_error *err)
{
	struct odb *odb;
	struct stat st;
	if (stat(objdir, &st) < 0 || !S_ISDIR(st.st_mode))
		return gp_error_errno(err, "object directory '%s' is not readable", objdir);
	odb = xcalloc(1, sizeof(*odb));
	odb->algo = algo;
	odb->no_midx = flags & ODB_NO_MIDX;
	odb->reader = pack_reader_new(0);
	empty_tree_oid(algo, &odb->empty_tree);
	/* an alternate that leads back here is not a second store */
	odb->local_real = realpath(objdir, NULL);
	add_dir(odb, objdir, objdir, true, 0);
	*out = odb;
	return 0;
}

int odb_add_alternate(struct odb *odb, const char *objdir, struct gp_error *err)
{
	char *real = realpath(objdir, NULL);
	if (!real)
		return gp_error_errno(err, "alternate object directory '%s'", objdir);
	if (!have_dir(odb, real))
		add_dir(odb, real, objdir, false, 1);
	free(real);
	return 0;
}

void odb_free(struct odb *odb)
{
	if (!odb)
		return;
	for (size_t i = 0; i < odb->nr_packs; i++)
		pack_free(odb->packs[i]);
	for (size_t i = 0; i < odb->nr_dirs; i++) {
		free(odb->dirs[i].path);
		free(odb->dirs[i].shown);
		midx_free(odb->dirs[i].midx);
		free(odb->dirs[i].midx_packs);
	}
	for (size_t i = 0; i < odb->nr_retired_midx; i++)
		midx_free(odb->retired_midx[i]);
	free(odb->retired_midx);
	for (size_t i = 0; i < odb->nr_warnings; i++)
		free(odb->warnings[i]);
	free(odb->warnings);
	free(odb->local_real);
	free(odb->packs);
	free(odb->pack_local);
	free(odb->pack_in_midx);
	free(odb->dirs);
	pack_reader_free(odb->reader);
	free(odb);
}

static bool pack_usable(struct odb *odb, struct packed_git *p)
{
	struct gp_error err = GP_ERROR_INIT;
	if (p->pack_open)
		return true;
	if (p->pack_failed)
		return false;
	/* A pack that does not open is skipped: the object may be elsewhere. */
	if (pack_open_pack(p, &err)) {
		add_warning(odb, "%s", gp_error_msg(&err));
		gp_error_clear(&err);
		return false;
	}
	return true;
}

/*
 * A lookup found dir's MIDX damaged: report it as a bad MIDX is reported
 * at open, and go on without it (its packs are searched alone). Callers
 * may still hold it (odb_midx()), so it is retired, not freed.
 */
static void drop_damaged_midx(struct odb *odb, struct odb_dir *dir)
{
	add_warning(odb, "%s (ignoring it)", midx_damage(dir->midx));
	ALLOC_GROW(odb->retired_midx, odb->nr_retired_midx + 1, odb->alloc_retired_midx);
	odb->retired_midx[odb->nr_retired_midx++] = dir->midx;
	for (uint32_t id = 0; id < midx_nr_packs(dir->midx); id++)
		if (dir->midx_packs[id] != SIZE_MAX)
			odb->pack_in_midx[dir->midx_packs[id]] = false;
	dir->midx = NULL;
	FREE_AND_NULL(dir->midx_packs);
}

void odb_check_midx_entries(struct odb *odb)
{
	for (size_t d = 0; d < odb->nr_dirs; d++) {
		struct odb_dir *dir = &odb->dirs[d];
		uint32_t nr = dir->midx ? midx_nr_objects(dir->midx) : 0;
		for (uint32_t pos = 0; pos < nr; pos++) {
			uint32_t pack_int_id;
			uint64_t ofs;
			if (!midx_nth_entry(dir->midx, pos, &pack_int_id, &ofs)) {
				drop_damaged_midx(odb, dir);
				break;
			}
		}
	}
}

/*
 * pack_find_oid(), and when the lookup found the pack's .idx damaged,
 * that is reported (once): the pack then answers no lookup, as if it
 * had not opened.
 */
static bool find_in_pack(struct odb *odb, struct packed_git *p, const struct object_id *oid,
			 uint32_t *idx_pos)
{
	const char *damage;
	if (pack_find_oid(p, oid, idx_pos))
		return true;
	damage = pack_idx_damage(p);
	if (damage) {
		for (size_t i = 0; i < odb->nr_warnings; i++)
			if (!strcmp(odb->warnings[i], damage))
				return false;
		add_warning(odb, "%s", damage);
	}
	return false;
}

/*
 * Find oid through the MIDXs first, then in the packs no MIDX covers.
 * When a MIDX sends us to a pack that is gone or broken, every pack is
 * searched, so a copy elsewhere is still found.
 */
static bool find_packed(struct odb *odb, const struct object_id *oid,
			struct packed_git **pack, uint64_t *ofs)
{
	bool search_all = false;
	for (size_t d = 0; d < odb->nr_dirs; d++) {
		struct odb_dir *dir = &odb->dirs[d];
		uint32_t midx_pos, pack_int_id;
		uint64_t midx_ofs;
		size_t i;
		if (!dir->midx)
			continue;
		if (!midx_find_oid(dir->midx, oid, &midx_pos)) {
			if (midx_damage(dir->midx)) {
				drop_damaged_midx(odb, dir);
				search_all = true;
			}
			continue;
		}
		if (!midx_nth_entry(dir->midx, midx_pos, &pack_int_id, &midx_ofs)) {
			drop_damaged_midx(odb, dir);
			search_all = true;
			continue;
		}
		i = dir->midx_packs[pack_int_id];
		if (i != SIZE_MAX && pack_usable(odb, odb->packs[i])) {
			*pack = odb->packs[i];
			*ofs = midx_ofs;
			return true;
		}
		search_all = true;
	}
	for (size_t n = 0; n < odb->nr_packs; n++) {
		size_t i = n == 0 ? odb->last_pack : (n <= odb->last_pack ? n - 1 : n);
		struct packed_git *p = odb->packs[i];
		uint32_t idx_pos;
		if ((odb->pack_in_midx[i] && !search_all) || p->pack_failed ||
		    !find_in_pack(odb, p, oid, &idx_pos) || !pack_usable(odb, p))
			continue;
		odb->last_pack = i;
		*pack = p;
		*ofs = pack_nth_offset(p, idx_pos);
		return true;
	}
	return false;
}

static const char *loose_dir_with(struct odb *odb, const struct object_id *oid)
{
	for (size_t i = 0; i < odb->nr_dirs; i++)
		if (loose_has(odb->dirs[i].path, oid))
			return odb->dirs[i].path;
	return NULL;
}

/*
 * Where oid is stored: a pack (*pack set) or a loose directory (*loose
 * set). A miss looks at the pack directories again and retries once, as
 * a repack may have moved the object into a pack we have not seen while
 * deleting the one (or the loose file) we knew.
 */
static bool find_stored(struct odb *odb, const struct object_id *oid,
			struct packed_git **pack, uint64_t *ofs, const char **loose_dir)
{
	*pack = NULL;
	*ofs = 0;
	*loose_dir = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (find_packed(odb, oid, pack, ofs))
			return true;
		*loose_dir = loose_dir_with(odb, oid);
		if (*loose_dir)
			return true;
		if (attempt || !rescan(odb))
			break;
	}
	return false;
}

/*
 * Git treats the empty tree as present in every repository, stored or
 * not, and answers for it before looking at storage (so its disk size
 * is 0); so do we.
 */
static bool is_empty_tree(const struct odb *odb, const struct object_id *oid)
{
	return oideq(oid, &odb->empty_tree);
}

void odb_set_missing_hook(struct odb *odb, odb_missing_fn *fn, void *data)
{
	odb->missing_fn = fn;
	odb->missing_data = data;
}

/* Not stored anywhere: a partial clone may fetch it, then it is looked for again. */
static bool fetched_missing(struct odb *odb, const struct object_id *oid,
			    struct packed_git **pack, uint64_t *ofs, const char **dir)
{
	if (!odb->missing_fn || odb->missing_fn(odb->missing_data, oid))
		return false;
	rescan(odb);
	return find_stored(odb, oid, pack, ofs, dir);
}

static int not_found(const struct object_id *oid, struct gp_error *err)
{
	char hex[GP_MAX_HEXSZ + 1];
	return gp_error_set(err, GP_ENOTFOUND, "object %s not found", oid_to_hex_r(hex, oid));
}

/*
 * A loose object found a moment ago may have been pruned since, its
 * copy now in a pack: look for it once more before calling it missing.
 */
static bool moved_from_loose(struct odb *odb, const struct object_id *oid, int ret,
			     struct packed_git **pack, uint64_t *ofs)
{
	return ret == GP_ENOTFOUND && (find_packed(odb, oid, pack, ofs) ||
				       (rescan(odb) && find_packed(odb, oid, pack, ofs)));
}

static int read_packed(struct odb *odb, struct packed_git *p, uint64_t ofs,
		       const struct object_id *oid, enum object_type *type,
		       unsigned char **data, size_t *size, struct gp_error *err, int depth);

/*
 * Whether the entry itself and its delta chain read: when they do, a
 * failure came from elsewhere (a damaged .rev) and is reported as such.
 */
static bool entry_is_sound(struct packed_git *p, uint64_t ofs)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pack_object_info pi;
	bool ok = !pack_object_info(p, ofs, &pi, false, &err);
	gp_error_clear(&err);
	return ok;
}

int odb_read_object_info(struct odb *odb, const struct object_id *oid,
			 struct object_info *info, unsigned flags,
			 struct gp_error *err)
{
	struct packed_git *p;
	uint64_t ofs;
	const char *dir;
	int ret;

	memset(info, 0, sizeof(*info));
	oid_clear(&info->delta_base, odb->algo);
	if (is_empty_tree(odb, oid)) {
		info->type = OBJ_TREE;
		info->source = OBJECT_LOOSE;
		return 0;
	}
	if (!find_stored(odb, oid, &p, &ofs, &dir) && !fetched_missing(odb, oid, &p, &ofs, &dir))
		return not_found(oid, err);
	if (!p) {
		struct gp_error loose_err = GP_ERROR_INIT;
		ret = loose_read_info(dir, oid, &info->type, &info->size, &info->disk_size,
				      &loose_err);
		info->source = OBJECT_LOOSE;
		if (!moved_from_loose(odb, oid, ret, &p, &ofs)) {
			gp_error_move(err, &loose_err);
			return ret;
		}
		gp_error_clear(&loose_err);
	}
	{
		struct pack_object_info pi;
		ret = pack_object_info(p, ofs, &pi, flags & OI_DELTA_BASE, err);
		if (ret == GP_ECORRUPT && !entry_is_sound(p, ofs)) {
			/* Read around the damage (odb_read_object()): slow, but rare. */
			unsigned char *data;
			size_t size;
			enum object_type type;
			if (!read_packed(odb, p, ofs, oid, &type, &data, &size, err, 0)) {
				free(data);
				info->type = type;
				info->size = size;
				info->source = OBJECT_PACKED;
				info->pack = p;
				info->pack_ofs = ofs;
				return 0;
			}
			return ret;
		}
		if (!ret && (flags & OI_DISK_SIZE)) {
			uint32_t pack_pos;
			ret = pack_load_revindex(p, err);
			if (!ret && !pack_offset_to_pos(p, ofs, &pack_pos))
				ret = CORRUPT(err, "offset %" PRIu64 " is not an object", ofs);
			if (!ret)
				pi.disk_size = pack_pos_to_end(p, pack_pos) - ofs;
		}
		if (ret)
			return ret;
		info->type = pi.type;
		info->size = pi.size;
		info->disk_size = pi.disk_size;
		info->delta_base = pi.delta_base;
		info->source = OBJECT_PACKED;
		info->pack = p;
		info->pack_ofs = ofs;
		return 0;
	}
}

/*
 * Reading around damage, as git does: an object whose stored copy is
 * corrupt is read from another copy (another pack, a loose file), and a
 * delta whose base is corrupt is applied to a copy of the base found
 * elsewhere. Bounded by MAX_RECOVERY_DEPTH bases.
 */
#define MAX_RECOVERY_DEPTH 16

static int read_packed(struct odb *odb, struct packed_git *p, uint64_t ofs,
		       const struct object_id *oid, enum object_type *type,
		       unsigned char **data, size_t *size, struct gp_error *err, int depth);

/* The name of a delta entry's base, without reading the base. */
static bool delta_base_name(struct packed_git *p, const struct pack_entry_header *hdr,
			    struct object_id *out)
{
	struct gp_error err = GP_ERROR_INIT;
	uint32_t pack_pos;
	if (hdr->type == OBJ_REF_DELTA) {
		*out = hdr->base_oid;
		return true;
	}
	if (pack_load_revindex(p, &err) || !pack_offset_to_pos(p, hdr->base_ofs, &pack_pos)) {
		gp_error_clear(&err);
		return false;
	}
	pack_nth_oid(p, pack_pos_to_idx(p, pack_pos), out);
	return true;
}

/* Any copy of oid but the one in skip_pack or in the loose skip_dir. */
static int read_elsewhere(struct odb *odb, const struct object_id *oid,
			  const struct packed_git *skip_pack, const char *skip_dir,
			  enum object_type *type, unsigned char **data, size_t *size, int depth)
{
	struct gp_error err = GP_ERROR_INIT;
	for (size_t i = 0; i < odb->nr_packs; i++) {
		struct packed_git *p = odb->packs[i];
		uint32_t idx_pos;
		if (p == skip_pack || p->pack_failed || !find_in_pack(odb, p, oid, &idx_pos) ||
		    !pack_usable(odb, p))
			continue;
		if (!read_packed(odb, p, pack_nth_offset(p, idx_pos), oid, type, data, size,
				 &err, depth))
			return 0;
		gp_error_clear(&err);
	}
	for (size_t i = 0; i < odb->nr_dirs; i++) {
		const char *dir = odb->dirs[i].path;
		if ((skip_dir && !strcmp(dir, skip_dir)) || !loose_has(dir, oid))
			continue;
		if (!loose_read(dir, oid, type, data, size, &err))
			return 0;
		gp_error_clear(&err);
	}
	return GP_ENOTFOUND;
}

static int read_packed(struct odb *odb, struct packed_git *p, uint64_t ofs,
		       const struct object_id *oid, enum object_type *type,
		       unsigned char **data, size_t *size, struct gp_error *err, int depth)
{
	struct gp_error local = GP_ERROR_INIT;
	struct pack_entry_header hdr;
	struct object_id base_oid;
	unsigned char *delta = NULL, *base = NULL, *result;
	enum object_type base_type;
	size_t base_size, result_size;
	uint64_t want_base, want_result;
	size_t hdr_len;
	int ret = pack_read_object(odb->reader, p, ofs, type, data, size, err);

	if ((ret != GP_ECORRUPT && ret != GP_ENOTFOUND) || depth >= MAX_RECOVERY_DEPTH)
		return ret;
	/* Another copy of the object itself. */
	if (oid && !read_elsewhere(odb, oid, p, NULL, type, data, size, depth + 1))
		goto recovered;
	/* Its delta may be intact while the base is not: rebuild it on another copy of the base. */
	if (pack_read_entry(odb->reader, p, ofs, &hdr, &delta, &local) ||
	    (hdr.type != OBJ_OFS_DELTA && hdr.type != OBJ_REF_DELTA) ||
	    !delta_base_name(p, &hdr, &base_oid) ||
	    read_elsewhere(odb, &base_oid, NULL, NULL, &base_type, &base, &base_size,
			   depth + 1) ||
	    delta_sizes(delta, (size_t)hdr.size, &want_base, &want_result, &hdr_len, &local) ||
	    want_result > SIZE_MAX - 1)
		goto fail;
	result_size = (size_t)want_result;
	result = malloc(result_size + 1);
	if (!result || delta_apply(base, base_size, delta, (size_t)hdr.size, result, result_size,
				   &local)) {
		free(result);
		goto fail;
	}
	result[result_size] = '\0';
	*type = base_type;
	*data = result;
	*size = result_size;
	free(delta);
	free(base);
recovered:
	gp_error_clear(err);
	gp_error_clear(&local);
	return 0;
fail:
	free(delta);
	free(base);
	gp_error_clear(&local);
	return ret;
}

int odb_read_object(struct odb *odb, const struct object_id *oid,
		    enum object_type *type, unsigned char **data, size_t *size,
		    struct gp_error *err)
{
	struct packed_git *p;
	uint64_t ofs;
	const char *dir;
	if (is_empty_tree(odb, oid)) {
		*type = OBJ_TREE;
		*data = xcalloc(1, 1);
		*size = 0;
		return 0;
	}
	if (!find_stored(odb, oid, &p, &ofs, &dir) && !fetched_missing(odb, oid, &p, &ofs, &dir))
		return not_found(oid, err);
	if (!p) {
		struct gp_error loose_err = GP_ERROR_INIT;
		int ret = loose_read(dir, oid, type, data, size, &loose_err);
		if (ret == GP_ECORRUPT &&
		    !read_elsewhere(odb, oid, NULL, dir, type, data, size, 0)) {
			gp_error_clear(&loose_err);
			return 0;
		}
		if (!moved_from_loose(odb, oid, ret, &p, &ofs)) {
			gp_error_move(err, &loose_err);
			return ret;
		}
		gp_error_clear(&loose_err);
	}
	return read_packed(odb, p, ofs, oid, type, data, size, err, 0);
}

bool odb_locate(struct odb *odb, const struct object_id *oid,
		struct packed_git **pack, uint64_t *ofs, const char **loose_dir)
{
	return find_stored(odb, oid, pack, ofs, loose_dir);
}

bool odb_has_object(struct odb *odb, const struct object_id *oid)
{
	struct packed_git *p;
	uint64_t ofs;
	const char *dir;
	return is_empty_tree(odb, oid) || find_stored(odb, oid, &p, &ofs, &dir);
}

void odb_set_cache_limit(struct odb *odb, size_t bytes)
{
	pack_reader_set_cache_limit(odb->reader, bytes);
}

int odb_write_object(struct odb *odb, enum object_type type, const void *data,
		     size_t len, struct object_id *oid, struct gp_error *err)
{
	return loose_write(odb->dirs[0].path, odb->algo, type, data, len, oid, err);
}

struct each_loose {
	odb_each_fn *fn;
	void *data;
};

static int each_loose(const struct object_id *oid, const char *path, void *data)
{
	struct each_loose *el = data;
	return el->fn(oid, el->data);
}

int odb_for_each_object(struct odb *odb, odb_each_fn *fn, void *data)
{
	struct each_loose el = { fn, data };
	int ret = 0;
	for (size_t i = 0; i < odb->nr_packs && !ret; i++) {
		struct packed_git *p = odb->packs[i];
		for (uint32_t idx_pos = 0; idx_pos < p->nr_objects && !ret; idx_pos++) {
			struct object_id oid;
			pack_nth_oid(p, idx_pos, &oid);
			ret = fn(&oid, data);
		}
	}
	for (size_t i = 0; i < odb->nr_dirs && !ret; i++)
		ret = loose_for_each(odb->dirs[i].path, odb->algo, each_loose, &el);
	return ret;
}

void odb_set_verify_bitmaps(struct odb *odb, bool verify)
{
	odb->trust_bitmaps = !verify;
}

bool odb_verify_bitmaps(const struct odb *odb)
{
	return !odb->trust_bitmaps;
}

size_t odb_nr_packs(const struct odb *odb)
{
	return odb->nr_packs;
}

struct packed_git *odb_pack(const struct odb *odb, size_t index)
{
	return odb->packs[index];
}

bool odb_has_alternates(const struct odb *odb)
{
	return odb->nr_dirs > 1;
}

bool odb_pack_is_local(const struct odb *odb, size_t index)
{
	return odb->pack_local[index];
}

struct midx *odb_midx(const struct odb *odb)
{
	return odb->nr_dirs ? odb->dirs[0].midx : NULL;
}

struct packed_git *odb_midx_pack(const struct odb *odb, uint32_t pack_int_id)
{
	const struct odb_dir *dir = odb->nr_dirs ? &odb->dirs[0] : NULL;
	if (!dir || !dir->midx || pack_int_id >= midx_nr_packs(dir->midx) ||
	    dir->midx_packs[pack_int_id] == SIZE_MAX)
		return NULL;
	return odb->packs[dir->midx_packs[pack_int_id]];
}

const char *odb_objdir(const struct odb *odb)
{
	return odb->dirs[0].path;
}

int odb_algo(const struct odb *odb)
{
	return odb->algo;
}

size_t odb_nr_warnings(const struct odb *odb)
{
	return odb->nr_warnings;
}

const char *odb_warning(const struct odb *odb, size_t index)
{
	return odb->warnings[index];
}

size_t odb_nr_alternates(const struct odb *odb)
{
	return odb->nr_dirs - 1;
}

const char *odb_alternate(const struct odb *odb, size_t index)
{
	if (index + 1 >= odb->nr_dirs)
		BUG("alternate %zu of %zu", index, odb->nr_dirs - 1);
	return odb->dirs[index + 1].shown;
}
