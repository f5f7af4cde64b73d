/*
 * replace-object.c: the map of replace refs (see replace-object.h),
 * a sorted array of (original, replacement) pairs.
 */
#include "replace-object.h"
#include "config.h"
#include "error.h"
#include "refs.h"
#include "repository.h"

struct replace_pair {
	struct object_id from, to;
};

struct replace_map {
	struct replace_pair *pairs; /* sorted by from */
	size_t nr, alloc;
};

struct load_state {
	struct replace_map *map;
	size_t prefix_len;
	int algo;
};

static int add_ref(const char *refname, const struct object_id *oid,
		   const struct object_id *peeled, unsigned flags, void *data)
{
	struct load_state *st = data;
	struct object_id from;
	if (parse_oid_hex_exact(refname + st->prefix_len, st->algo, &from))
		return 0; /* not a replace ref of ours: git skips it too */
	ALLOC_GROW(st->map->pairs, st->map->nr + 1, st->map->alloc);
	st->map->pairs[st->map->nr].from = from;
	st->map->pairs[st->map->nr].to = *oid;
	st->map->nr++;
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	return oidcmp(&((const struct replace_pair *)a)->from,
		      &((const struct replace_pair *)b)->from);
}

int replace_map_load(struct replace_map **out, struct repository *repo,
		     struct gp_error *err)
{
	struct replace_map *map = xcalloc(1, sizeof(*map));
	const char *base = getenv("GIT_REPLACE_REF_BASE");
	struct load_state st = { .map = map, .algo = repo->hash_algo };
	char *prefix = NULL;
	bool use = true;
	int ret = 0;

	*out = map;
	if (getenv("GIT_NO_REPLACE_OBJECTS"))
		return 0;
	ret = config_get_bool(&repo->config, "core.usereplacerefs", &use, err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(err);
		ret = 0;
	}
	if (ret || !use)
		return ret;
	if (!base || !*base)
		base = "refs/replace/";
	prefix = base[strlen(base) - 1] == '/' ? xstrdup(base) : xstrfmt("%s/", base);
	st.prefix_len = strlen(prefix);
	ret = refs_for_each(repo, prefix, add_ref, &st, err);
	if (!ret && map->nr > 1)
		qsort(map->pairs, map->nr, sizeof(*map->pairs), cmp_pair);
	free(prefix);
	return ret;
}

void replace_map_free(struct replace_map *map)
{
	if (!map)
		return;
	free(map->pairs);
	free(map);
}

bool replace_map_is_empty(const struct replace_map *map)
{
	return !map->nr;
}

static const struct object_id *find(const struct replace_map *map,
				    const struct object_id *oid)
{
	size_t lo = 0, hi = map->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = oidcmp(&map->pairs[mid].from, oid);
		if (!cmp)
			return &map->pairs[mid].to;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int replace_map_lookup(const struct replace_map *map, const struct object_id *oid,
		       struct object_id *out, struct gp_error *err)
{
	const struct object_id *next;
	char hex[GP_MAX_HEXSZ + 1];
	*out = *oid;
	for (int depth = 0; (next = find(map, out)); depth++) {
		if (depth >= REPLACE_MAX_DEPTH)
			return gp_error_set(err, GP_ECORRUPT, "replace depth too high for object %s",
					    oid_to_hex_r(hex, oid));
		*out = *next;
	}
	return 0;
}
