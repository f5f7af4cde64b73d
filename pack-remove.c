/*
 * pack-remove.c: removing packs under one policy (see pack-remove.h for
 * what, when and in which order).
 */
#include "pack-remove.h"
#include "error.h"
#include <unistd.h>

/* <dir>/<base> without the extension, from a name ending in .idx or .pack. */
static char *pack_stem(const char *pack_dir, const char *name)
{
	size_t len = strlen(name);
	if (ends_with(name, ".idx"))
		len -= 4;
	else if (ends_with(name, ".pack"))
		len -= 5;
	if (pack_dir)
		return xstrfmt("%s/%.*s", pack_dir, (int)len, name);
	return xstrfmt("%.*s", (int)len, name);
}

static bool stem_has(const char *stem, const char *ext)
{
	char *path = xstrfmt("%s%s", stem, ext);
	bool found = !access(path, F_OK);
	free(path);
	return found;
}

bool pack_may_remove(const char *pack_dir, const char *idx_name, unsigned flags)
{
	char *stem = pack_stem(pack_dir, idx_name);
	bool ok = !stem_has(stem, ".keep") &&
		  ((flags & PACK_REMOVE_CRUFT) || !stem_has(stem, ".mtimes"));
	free(stem);
	return ok;
}

int pack_remove(const char *pack_dir, const char *name, struct gp_error *err)
{
	static const char *const exts[] = {
		".idx", ".rev", ".bitmap", ".mtimes", ".promisor", ".pack",
	};
	char *stem = pack_stem(pack_dir, name);
	int ret = 0;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		char *path = xstrfmt("%s%s", stem, exts[i]);
		if (unlink(path) < 0 && errno != ENOENT && !ret)
			ret = gp_error_errno(err, "could not remove '%s'", path);
		free(path);
	}
	free(stem);
	return ret;
}
