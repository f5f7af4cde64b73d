/*
 * builtin/pack-refs-reftable.c: pack-refs for reftable repositories
 * (see builtin/pack-refs-reftable.h).
 */
#include "pack-refs-reftable.h"
#include "../builtin.h"
#include "../config.h"
#include "../error.h"
#include "../reftable-compact.h"
#include "../reftable-write.h"
#include "../repository.h"
#include "../trace2.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* git's limit on reftable.restartInterval (its restart count is 16 bits) */
#define MAX_RESTART_INTERVAL 65535

static long config_long(struct repository *repo, const char *key, long dflt)
{
	struct gp_error err = GP_ERROR_INIT;
	unsigned long v;
	int ret = config_get_ulong(&repo->config, key, &v, &err);
	if (ret == GP_ENOTFOUND) {
		gp_error_clear(&err);
		return dflt;
	}
	if (ret)
		die_error(&err);
	return (long)v;
}

/* reftable.lockTimeout, checked as git checks it; 100 by default */
static long lock_timeout(struct repository *repo)
{
	const char *value;
	int64_t v;
	if (config_get_string(&repo->config, "reftable.locktimeout", &value) || !value)
		return 100;
	if (!config_parse_int64(value, &v))
		die("bad numeric config value '%s' for 'reftable.locktimeout'", value);
	if (v > LONG_MAX)
		die("reftable lock timeout cannot exceed %ld", LONG_MAX);
	if (v < 0 && v != -1)
		die("reftable lock timeout does not support negative values other than -1");
	return (long)v;
}

int pack_refs_reftable(struct repository *repo, bool autocompact)
{
	struct reftable_write_opts wopts = { 0 };
	struct reftable_compact_opts copts = { 0 };
	struct gp_error err = GP_ERROR_INIT;
	bool own = strcmp(repo->gitdir, repo->commondir) != 0;
	char *dir;
	long v;
	int ret;

	v = config_long(repo, "reftable.blocksize", 0);
	if (v > (long)REFTABLE_MAX_BLOCK_SIZE)
		die("reftable block size cannot exceed 16MB");
	wopts.block_size = (uint32_t)v;
	v = config_long(repo, "reftable.restartinterval", 0);
	if (v > MAX_RESTART_INTERVAL)
		die("reftable block size cannot exceed 65535"); /* git's wording */
	wopts.restart_interval = (uint16_t)v;
	wopts.skip_index_objects = !config_get_bool_or(&repo->config, "reftable.indexobjects", true);
	copts.algo = repo->hash_algo;
	copts.write = &wopts;
	copts.autocompact = autocompact;
	v = config_long(repo, "reftable.geometricfactor", 2);
	if (v > 255)
		die("reftable geometric factor cannot exceed 255");
	copts.geometric_factor = (unsigned)v;
	copts.lock_timeout_ms = lock_timeout(repo);

	dir = xstrfmt("%s/reftable", own ? repo->gitdir : repo->commondir);
	ret = reftable_compact(dir, &copts, &err);
	free(dir);
	if (copts.nr_fsyncs)
		trace2_counter("fsync", "hardware-flush", copts.nr_fsyncs);
	if (ret) {
		error("unable to compact stack: %s", err.msg);
		gp_error_clear(&err);
		return 1;
	}
	return 0;
}
