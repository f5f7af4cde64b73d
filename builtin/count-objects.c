/*
 * builtin/count-objects.c: gitpack count-objects [-v] [-H], with git's
 * output.
 *
 * What git counts, learned by running it:
 *  - loose objects: files in the local objects/00..ff whose names are
 *    the rest of a hex object id (either case); their size is what they
 *    occupy on disk (st_blocks * 512), not their length;
 *  - with -v, "prune-packable" is the loose objects also found in a
 *    pack (local or alternate), "in-pack", "packs" and "size-pack"
 *    cover the local packs whose .idx opens (size-pack is .pack plus
 *    .idx bytes), and "alternate:" lines list the alternate object
 *    directories;
 *  - with -v, garbage is reported, one warning each, and counted with
 *    its length (st_size): in objects/00..ff, any name that is not an
 *    object's, and any object name that is not a regular file; in each
 *    objects/pack (local and alternates), a name without one of the
 *    pack extensions (.pack .idx .rev .bitmap .keep .promisor .mtimes)
 *    is "garbage found", at once, in directory order; the rest are
 *    sorted and grouped by base name, and a group without both a .pack
 *    and an .idx is reported file by file as missing its .idx, its
 *    .pack, or both;
 *  - the pack directories are looked at when the first loose object is
 *    checked against the packs (or after the loose objects, if there
 *    are none), so that is where their warnings fall among the loose
 *    ones.
 * Paths in warnings are spelled as git spells its object directory:
 * ".git/objects" from a work tree, "./objects" from inside the git
 * directory, $GIT_DIR/objects or $GIT_OBJECT_DIRECTORY as given.
 */
#include "../builtin.h"
#include "../error.h"
#include "../object.h"
#include "../odb.h"
#include "../packfile.h"
#include "../parse-options.h"
#include "../repository.h"
#include "../strbuf.h"
#include <dirent.h>
#include <sys/stat.h>

static const char *const count_objects_usage[] = {
	"git count-objects [-v] [-H | --human-readable]",
	NULL,
};

struct count_state {
	struct repository *repo;
	int verbose;
	struct odb *odb;          /* opened for the packs, with -v */
	char *objdir_shown;       /* the local object directory, as git shows it */
	char *loose_shown;        /* the same, as git shows it for loose files */
	bool packs_scanned;

	uint64_t loose, loose_bytes, packed_loose;
	uint64_t garbage, garbage_bytes;
};

/*
 * git's humanised byte counts: "N bytes" ("1 byte") up to 1 KiB, then
 * two decimals of KiB, MiB or GiB. For KiB and MiB half a hundredth is
 * added before truncating (5 bytes, 5243 bytes); GiB truncate.
 */
static void add_human_bytes(struct strbuf *sb, uint64_t bytes)
{
	const uint64_t kib = 1024, mib = kib * 1024, gib = mib * 1024;
	if (bytes > gib) {
		uint64_t frac = (bytes % gib) / 10737419;
		strbuf_addf(sb, "%" PRIu64 ".%02" PRIu64 " GiB", bytes / gib, frac);
	} else if (bytes > mib) {
		uint64_t v = bytes + 5243;
		strbuf_addf(sb, "%" PRIu64 ".%02" PRIu64 " MiB", v / mib, (v % mib) * 100 / mib);
	} else if (bytes > kib) {
		uint64_t v = bytes + 5;
		strbuf_addf(sb, "%" PRIu64 ".%02" PRIu64 " KiB", v / kib, (v % kib) * 100 / kib);
	} else {
		strbuf_addf(sb, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
	}
}

static void print_size(const char *label, uint64_t bytes, bool human)
{
	struct strbuf sb = STRBUF_INIT;
	if (human)
		add_human_bytes(&sb, bytes);
	else
		strbuf_addf(&sb, "%" PRIu64, bytes / 1024);
	printf("%s%s\n", label, sb.buf);
	strbuf_release(&sb);
}

/* As cat-file quotes paths: C-style, in double quotes, only when needed. */
static void add_quoted(struct strbuf *sb, const char *s)
{
	static const char short_esc[] = "abtnvfr"; /* bytes 7..13 */
	bool need = false;
	for (const char *p = s; *p && !need; p++) {
		unsigned char c = (unsigned char)*p;
		need = c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
	}
	if (!need) {
		strbuf_addstr(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c >= 7 && c <= 13)
			strbuf_addf(sb, "\\%c", short_esc[c - 7]);
		else if (c < 0x20 || c >= 0x7f)
			strbuf_addf(sb, "\\%03o", c);
		else
			strbuf_addch(sb, (char)c);
	}
	strbuf_addch(sb, '"');
}

/* real is the path to look at, shown the one to print. */
static void report_garbage(struct count_state *st, const char *what,
			   const char *real, const char *shown)
{
	struct stat sb;
	if (!stat(real, &sb))
		st->garbage_bytes += (uint64_t)sb.st_size;
	warning("%s: %s", what, shown);
	st->garbage++;
}

static bool has_pack_ext(const char *name)
{
	static const char *const exts[] = {
		".idx", ".rev", ".pack", ".bitmap", ".keep", ".promisor", ".mtimes",
	};
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (ends_with(name, exts[i]))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Report one group of pack files sharing a base name. paths are as
 * shown; the real ones are dir + the part after skip characters.
 */
static void report_group(struct count_state *st, char **paths, size_t nr,
			 const char *dir, size_t skip, bool has_pack, bool has_idx)
{
	const char *what;
	if (has_pack && has_idx)
		return;
	what = has_pack ? "no corresponding .idx" :
	       has_idx ? "no corresponding .pack" : "no corresponding .idx or .pack";
	for (size_t i = 0; i < nr; i++) {
		char *real = xstrfmt("%s/%s", dir, paths[i] + skip);
		report_garbage(st, what, real, paths[i]);
		free(real);
	}
}

static void scan_pack_dir(struct count_state *st, const char *objdir_shown,
			  const char *objdir)
{
	char *dir = xstrfmt("%s/pack", objdir);
	DIR *d = opendir(dir);
	struct dirent *de;
	char **paths = NULL;
	size_t nr = 0, alloc = 0, first = 0, baselen = 0;
	size_t skip = strlen(objdir_shown) + strlen("/pack/");
	bool in_group = false, has_pack = false, has_idx = false;

	if (!d)
		goto out;
	while ((de = readdir(d))) {
		char *path;
		/* the MIDX, lone or as an incremental chain, is no garbage (git 2.55) */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "multi-pack-index") ||
		    !strcmp(de->d_name, "multi-pack-index.d"))
			continue;
		path = xstrfmt("%s/pack/%s", objdir_shown, de->d_name);
		if (!has_pack_ext(de->d_name)) {
			char *real = xstrfmt("%s/%s", dir, de->d_name);
			report_garbage(st, "garbage found", real, path);
			free(real);
			free(path);
			continue;
		}
		ALLOC_GROW(paths, nr + 1, alloc);
		paths[nr++] = path;
	}
	closedir(d);

	if (nr > 1)
		qsort(paths, nr, sizeof(*paths), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		const char *path = paths[i];
		if (in_group && strncmp(path, paths[first], baselen)) {
			report_group(st, paths + first, i - first, dir, skip,
				     has_pack, has_idx);
			in_group = false;
		}
		if (!in_group) {
			/* every listed name has an extension, hence a dot */
			baselen = (size_t)(strrchr(path, '.') - path) + 1;
			first = i;
			in_group = true;
			has_pack = has_idx = false;
		}
		if (!strcmp(path + baselen, "pack"))
			has_pack = true;
		else if (!strcmp(path + baselen, "idx"))
			has_idx = true;
	}
	if (in_group)
		report_group(st, paths + first, nr - first, dir, skip,
			     has_pack, has_idx);
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
out:
	free(dir);
}

/* The pack directories' garbage, once, where git reports it. */
static void scan_packs(struct count_state *st)
{
	if (st->packs_scanned)
		return;
	st->packs_scanned = true;
	scan_pack_dir(st, st->objdir_shown, st->repo->objdir);
	for (size_t i = 0; i < odb_nr_alternates(st->odb); i++)
		scan_pack_dir(st, odb_alternate(st->odb, i), odb_alternate(st->odb, i));
	for (size_t i = 0; i < odb_nr_warnings(st->odb); i++) {
		/* the file named as git names it, relative where git's is */
		const char *msg = odb_warning(st->odb, i);
		const char *at = strstr(msg, st->repo->objdir);
		if (at && starts_with(at + strlen(st->repo->objdir), "/pack/") &&
		    strcmp(st->repo->objdir, st->objdir_shown))
			error("%.*s%s%s", (int)(at - msg), msg, st->objdir_shown,
			      at + strlen(st->repo->objdir));
		else
			error("%s", msg);
	}
}

static bool in_some_pack(struct count_state *st, const struct object_id *oid)
{
	uint32_t idx_pos;
	for (size_t i = 0; i < odb_nr_packs(st->odb); i++)
		if (pack_find_oid(odb_pack(st->odb, i), oid, &idx_pos))
			return true;
	return false;
}

static bool is_hex_name(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

static void count_loose(struct count_state *st)
{
	size_t hexsz = gp_hash_algos[st->repo->hash_algo].hexsz;
	for (unsigned fan = 0; fan < 256; fan++) {
		char *dir = xstrfmt("%s/%02x", st->repo->objdir, fan);
		DIR *d = opendir(dir);
		struct dirent *de;
		free(dir);
		if (!d && errno == ENOENT)
			continue;
		if (!d) {
			/* git gives up on the remaining directories too */
			error("unable to open %s/%02x: %s", st->loose_shown, fan, strerror(errno));
			break;
		}
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			char *path, *shown;
			struct stat sb;
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			path = xstrfmt("%s/%02x/%s", st->repo->objdir, fan, de->d_name);
			shown = xstrfmt("%s/%02x/%s", st->loose_shown, fan, de->d_name);
			if (len != hexsz - 2 || !is_hex_name(de->d_name, len)) {
				if (st->verbose)
					report_garbage(st, "garbage found", path, shown);
			} else if (lstat(path, &sb) || !S_ISREG(sb.st_mode)) {
				if (st->verbose)
					report_garbage(st, "garbage found", path, shown);
			} else {
				st->loose++;
				st->loose_bytes += (uint64_t)sb.st_blocks * 512;
				if (st->verbose) {
					char hex[GP_MAX_HEXSZ + 1];
					struct object_id oid;
					snprintf(hex, sizeof(hex), "%02x%s", fan, de->d_name);
					scan_packs(st);
					if (!hex_to_oid(hex, st->repo->hash_algo, &oid) &&
					    in_some_pack(st, &oid))
						st->packed_loose++;
				}
			}
			free(shown);
			free(path);
		}
		closedir(d);
	}
}

int cmd_count_objects(int argc, const char **argv, struct repository *repo)
{
	struct count_state st = { 0 };
	struct gp_error err = GP_ERROR_INIT;
	int human = 0;
	uint64_t in_pack = 0, nr_packs = 0, pack_bytes = 0;
	struct option options[] = {
		OPT__VERBOSE(&st.verbose, "be verbose"),
		OPT_BOOL('H', "human-readable", &human, "print sizes in human readable format"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, options, count_objects_usage);
	if (argc)
		usage_with_options(count_objects_usage, options);

	st.repo = repo;
	st.objdir_shown = repo_objdir_shown(repo);
	/* git drops one trailing slash there ("objects//" shows as "objects/") */
	st.loose_shown = xstrdup(st.objdir_shown);
	if (ends_with(st.loose_shown, "/") && st.loose_shown[1])
		st.loose_shown[strlen(st.loose_shown) - 1] = '\0';
	if (st.verbose) {
		if (repo_odb(repo, &st.odb, &err))
			die_error(&err);
	}

	count_loose(&st);

	if (!st.verbose) {
		struct strbuf sb = STRBUF_INIT;
		if (human)
			add_human_bytes(&sb, st.loose_bytes);
		else
			strbuf_addf(&sb, "%" PRIu64 " kilobytes", st.loose_bytes / 1024);
		printf("%" PRIu64 " objects, %s\n", st.loose, sb.buf);
		strbuf_release(&sb);
		goto out;
	}

	scan_packs(&st);
	for (size_t i = 0; i < odb_nr_packs(st.odb); i++) {
		struct packed_git *p = odb_pack(st.odb, i);
		struct stat sb;
		if (!odb_pack_is_local(st.odb, i) || stat(p->pack_path, &sb))
			continue;
		in_pack += p->nr_objects;
		pack_bytes += (uint64_t)sb.st_size + p->idx_size;
		nr_packs++;
	}
	printf("count: %" PRIu64 "\n", st.loose);
	print_size("size: ", st.loose_bytes, human);
	printf("in-pack: %" PRIu64 "\n", in_pack);
	printf("packs: %" PRIu64 "\n", nr_packs);
	print_size("size-pack: ", pack_bytes, human);
	printf("prune-packable: %" PRIu64 "\n", st.packed_loose);
	printf("garbage: %" PRIu64 "\n", st.garbage);
	print_size("size-garbage: ", st.garbage_bytes, human);
	for (size_t i = 0; i < odb_nr_alternates(st.odb); i++) {
		struct strbuf sb = STRBUF_INIT;
		add_quoted(&sb, odb_alternate(st.odb, i));
		printf("alternate: %s\n", sb.buf);
		strbuf_release(&sb);
	}

out:
	free(st.objdir_shown);
	free(st.loose_shown);
	if (fflush(stdout) || ferror(stdout))
		die("unable to write to standard output");
	return 0;
}
