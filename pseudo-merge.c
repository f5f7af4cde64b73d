/*
 * pseudo-merge.c: the bitmapPseudoMerge.* groups, the merges they make,
 * and the .bitmap section holding them (see pseudo-merge.h).
 */
#include "pseudo-merge.h"
#include "config.h"
#include "date.h"
#include "error.h"
#include "hashfile.h"
#include "refs.h"
#include "repository.h"
#include "strbuf.h"
#include <math.h>
#include <regex.h>

/* git's defaults (gitpacking(7)) */
#define DEFAULT_DECAY 1
#define DEFAULT_SAMPLE_RATE 1.0
#define DEFAULT_THRESHOLD "1.week.ago"
#define DEFAULT_STABLE_THRESHOLD "1.month.ago"
#define DEFAULT_MAX_MERGES 64
#define DEFAULT_STABLE_SIZE 512

#define SECTION_KEY "bitmappseudomerge."

/* ---- configuration ------------------------------------------------- */

static void release_group(struct pseudo_merge_group *g)
{
	free(g->name);
	free(g->pattern);
	if (g->regex) {
		regfree(g->regex);
		free(g->regex);
	}
}

GP_PRINTF(2, 3) static void add_warning(struct pseudo_merge_config *cfg, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(cfg->warnings, cfg->nr_warnings + 1, cfg->alloc_warnings);
	cfg->warnings[cfg->nr_warnings++] = strbuf_detach(&sb, NULL);
}

static struct pseudo_merge_group *group_named(struct pseudo_merge_config *cfg, const char *name,
					      size_t len, int64_t threshold, int64_t stable)
{
	struct pseudo_merge_group *g;
	for (size_t i = 0; i < cfg->nr; i++)
		if (strlen(cfg->groups[i].name) == len && !memcmp(cfg->groups[i].name, name, len))
			return &cfg->groups[i];
	ALLOC_GROW(cfg->groups, cfg->nr + 1, cfg->alloc);
	g = &cfg->groups[cfg->nr++];
	memset(g, 0, sizeof(*g));
	g->name = xstrndup(name, len);
	g->decay = DEFAULT_DECAY;
	g->sample_rate = DEFAULT_SAMPLE_RATE;
	g->threshold = threshold;
	g->stable_threshold = stable;
	g->max_merges = DEFAULT_MAX_MERGES;
	g->stable_size = DEFAULT_STABLE_SIZE;
	return g;
}

static int set_pattern(struct pseudo_merge_group *g, const struct config_entry *e,
		       struct gp_error *err)
{
	struct strbuf anchored = STRBUF_INIT;
	regex_t *re;
	if (!e->value)
		return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
	/* git matches from the start of the ref name */
	strbuf_addch(&anchored, '^');
	strbuf_addstr(&anchored, e->value);
	re = xmalloc(sizeof(*re));
	if (regcomp(re, anchored.buf, REG_EXTENDED)) {
		free(re);
		gp_error_set(err, GP_EINVAL, "failed to load pseudo-merge regex for %s.pattern: '%s'",
			     g->name, anchored.buf);
		strbuf_release(&anchored);
		return GP_EINVAL;
	}
	strbuf_release(&anchored);
	if (g->regex) {
		regfree(g->regex);
		free(g->regex);
	}
	free(g->pattern);
	g->regex = re;
	g->pattern = xstrdup(e->value);
	return 0;
}

static int parse_date_value(const struct config_entry *e, int64_t now, int64_t *out,
			    struct gp_error *err)
{
	if (!e->value)
		return gp_error_set(err, GP_EINVAL, "missing value for '%s'", e->key);
	if (!parse_expiry_date(e->value, now, out))
		return gp_error_set(err, GP_EINVAL, "'%s' for '%s' is not a valid timestamp",
				    e->value, e->key);
	return 0;
}

static int apply_entry(struct pseudo_merge_config *cfg, struct pseudo_merge_group *g,
		       const struct config_entry *e, const char *var, int64_t now,
		       struct gp_error *err)
{
	double num;
	int whole;
	int ret;

	if (!strcasecmp(var, "pattern"))
		return set_pattern(g, e, err);
	if (!strcasecmp(var, "threshold"))
		return parse_date_value(e, now, &g->threshold, err);
	if (!strcasecmp(var, "stablethreshold"))
		return parse_date_value(e, now, &g->stable_threshold, err);
	if (!strcasecmp(var, "decay")) {
		ret = config_entry_double(e, &num, err);
		if (ret)
			return ret;
		if (num < 0) {
			add_warning(cfg, "%s must be non-negative, using default", e->key);
			g->decay = DEFAULT_DECAY;
		} else {
			/* git keeps the whole part only */
			g->decay = num >= (double)UINT32_MAX ? UINT32_MAX : (uint64_t)num;
		}
		return 0;
	}
	if (!strcasecmp(var, "samplerate")) {
		ret = config_entry_double(e, &num, err);
		if (ret)
			return ret;
		if (!(num > 0 && num <= 1)) {
			add_warning(cfg, "%s must be between 0 (exclusive) and 1, using default",
				    e->key);
			num = DEFAULT_SAMPLE_RATE;
		}
		g->sample_rate = num;
		return 0;
	}
	if (!strcasecmp(var, "maxmerges")) {
		ret = config_entry_int(e, &whole, err);
		if (ret)
			return ret;
		if (whole < 0) {
			add_warning(cfg, "%s must be non-negative, using default", e->key);
			whole = DEFAULT_MAX_MERGES;
		}
		g->max_merges = (uint32_t)whole;
		return 0;
	}
	if (!strcasecmp(var, "stablesize")) {
		ret = config_entry_int(e, &whole, err);
		if (ret)
			return ret;
		if (whole <= 0) {
			add_warning(cfg, "%s must be positive, using default", e->key);
			whole = DEFAULT_STABLE_SIZE;
		}
		g->stable_size = (uint32_t)whole;
		return 0;
	}
	return 0; /* a key git does not know either */
}

static int cmp_group_name(const void *a, const void *b)
{
	const struct pseudo_merge_group *x = a, *y = b;
	return strcmp(x->name, y->name);
}

int pseudo_merge_config_read(struct pseudo_merge_config *cfg, const struct config_set *cs,
			     int64_t now, struct gp_error *err)
{
	int64_t threshold, stable;
	size_t kept = 0;
	int ret = 0;

	parse_expiry_date(DEFAULT_THRESHOLD, now, &threshold);
	parse_expiry_date(DEFAULT_STABLE_THRESHOLD, now, &stable);
	for (size_t i = 0; i < cs->nr && !ret; i++) {
		const struct config_entry *e = &cs->items[i];
		const char *name, *dot;
		if (strncasecmp(e->key, SECTION_KEY, strlen(SECTION_KEY)))
			continue;
		name = e->key + strlen(SECTION_KEY);
		dot = strrchr(name, '.');
		if (!dot)
			continue; /* no group name: not ours */
		ret = apply_entry(cfg, group_named(cfg, name, (size_t)(dot - name), threshold, stable),
				  e, dot + 1, now, err);
	}
	if (ret) {
		pseudo_merge_config_release(cfg);
		return ret;
	}
	for (size_t i = 0; i < cfg->nr; i++) {
		if (!cfg->groups[i].regex) {
			release_group(&cfg->groups[i]);
			continue;
		}
		cfg->groups[kept++] = cfg->groups[i];
	}
	cfg->nr = kept;
	if (cfg->nr > 1)
		qsort(cfg->groups, cfg->nr, sizeof(*cfg->groups), cmp_group_name);
	for (size_t i = 0; i < cfg->nr; i++) {
		if (cfg->groups[i].threshold < cfg->groups[i].stable_threshold) {
			ret = gp_error_set(err, GP_EINVAL,
					   "pseudo-merge group '%s' has unstable threshold before stable one",
					   cfg->groups[i].name);
			pseudo_merge_config_release(cfg);
			return ret;
		}
	}
	return 0;
}

void pseudo_merge_config_release(struct pseudo_merge_config *cfg)
{
	for (size_t i = 0; i < cfg->nr; i++)
		release_group(&cfg->groups[i]);
	free(cfg->groups);
	for (size_t i = 0; i < cfg->nr_warnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	memset(cfg, 0, sizeof(*cfg));
}

#define MAX_CAPTURES 16

bool pseudo_merge_group_matches(const struct pseudo_merge_group *g, const char *refname,
				struct strbuf *captures)
{
	regmatch_t m[MAX_CAPTURES + 1];
	const regex_t *re = g->regex;
	size_t nr;
	if (!re || regexec(re, refname, MAX_CAPTURES + 1, m, 0))
		return false;
	strbuf_reset(captures);
	nr = re->re_nsub < MAX_CAPTURES ? re->re_nsub : MAX_CAPTURES;
	for (size_t i = 1; i <= nr; i++) {
		if (m[i].rm_so < 0)
			continue; /* a group that took no part in the match */
		if (captures->len)
			strbuf_addch(captures, '-');
		strbuf_add(captures, refname + m[i].rm_so, (size_t)(m[i].rm_eo - m[i].rm_so));
	}
	return true;
}

struct collect {
	const struct pseudo_merge_config *cfg;
	struct pseudo_merge_ref *refs;
	size_t nr, alloc;
	struct strbuf captures;
};

static int collect_ref(const char *refname, const struct object_id *oid,
		       const struct object_id *peeled, unsigned flags, void *data)
{
	struct collect *c = data;
	for (size_t g = 0; g < c->cfg->nr; g++) {
		if (!pseudo_merge_group_matches(&c->cfg->groups[g], refname, &c->captures))
			continue;
		ALLOC_GROW(c->refs, c->nr + 1, c->alloc);
		c->refs[c->nr].group = (uint32_t)g;
		c->refs[c->nr].captures = xstrdup(c->captures.buf);
		c->refs[c->nr++].oid = *oid;
	}
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct pseudo_merge_ref *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->captures, y->captures);
}

int pseudo_merge_collect_refs(struct repository *repo, const struct pseudo_merge_config *cfg,
			      struct pseudo_merge_ref **out, size_t *nr, struct gp_error *err)
{
	struct collect c = { cfg, NULL, 0, 0, STRBUF_INIT };
	int ret = 0;
	if (cfg->nr)
		ret = refs_for_each(repo, "", collect_ref, &c, err);
	strbuf_release(&c.captures);
	if (ret) {
		pseudo_merge_refs_free(c.refs, c.nr);
		return ret;
	}
	/* refs come in name order; a stable sort keeps it within a bucket */
	for (size_t i = 1; i < c.nr; i++) {
		struct pseudo_merge_ref r = c.refs[i];
		size_t j = i;
		while (j && cmp_ref(&c.refs[j - 1], &r) > 0) {
			c.refs[j] = c.refs[j - 1];
			j--;
		}
		c.refs[j] = r;
	}
	*out = c.refs;
	*nr = c.nr;
	return 0;
}

void pseudo_merge_refs_free(struct pseudo_merge_ref *refs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(refs[i].captures);
	free(refs);
}

/* ---- grouping ------------------------------------------------------ */

static int cmp_oldest_first(const void *a, const void *b)
{
	const struct pseudo_merge_candidate *x = a, *y = b;
	if (x->date != y->date)
		return x->date < y->date ? -1 : 1;
	if (x->tiebreak != y->tiebreak)
		return x->tiebreak < y->tiebreak ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

static void end_merge(struct pseudo_merge_plan *plan)
{
	size_t last_end = plan->nr_merges ? plan->ends[plan->nr_merges - 1] : 0;
	if (last_end == plan->nr_items)
		return; /* nothing since the last one: no empty merge */
	ALLOC_GROW(plan->ends, plan->nr_merges + 1, plan->alloc_merges);
	plan->ends[plan->nr_merges++] = plan->nr_items;
}

static void add_item(struct pseudo_merge_plan *plan, uint32_t item)
{
	ALLOC_GROW(plan->items, plan->nr_items + 1, plan->alloc_items);
	plan->items[plan->nr_items++] = item;
}

/* n^-decay for n >= 1 */
static double weight(uint64_t n, uint64_t decay)
{
	return decay ? pow((double)n, -(double)decay) : 1.0;
}

/*
 * The sum of n^-decay for n in 1 .. max_merges. Past a million terms
 * the rest is taken from the integral (maxMerges is an int: summing two
 * billion terms would take seconds; the error is below a millionth).
 */
#define EXACT_TERMS 1000000u

static double weight_sum(uint64_t max_merges, uint64_t decay)
{
	uint64_t exact = max_merges < EXACT_TERMS ? max_merges : EXACT_TERMS;
	double sum = 0, m, n;
	if (!decay)
		return (double)max_merges;
	for (uint64_t i = 1; i <= exact; i++)
		sum += weight(i, decay);
	if (exact == max_merges)
		return sum;
	m = (double)exact + 0.5;
	n = (double)max_merges + 0.5;
	if (decay == 1)
		return sum + log(n / m);
	return sum + (pow(m, 1.0 - (double)decay) - pow(n, 1.0 - (double)decay)) /
		((double)decay - 1.0);
}

static void plan_stable(struct pseudo_merge_plan *plan, const struct pseudo_merge_group *g,
			const struct pseudo_merge_candidate *cands, size_t nr)
{
	size_t in_merge = 0;
	for (size_t i = 0; i < nr; i++) {
		add_item(plan, cands[i].item);
		if (++in_merge == g->stable_size) {
			end_merge(plan);
			in_merge = 0;
		}
	}
	if (in_merge)
		end_merge(plan);
}

/*
 * Whether sampling at rate keeps the candidate at position pos: git
 * keeps every (1 / rate)th, the fraction dropped (0.3 keeps every third).
 */
static bool sampled(double rate, size_t pos)
{
	double step = floor(1.0 / rate);
	if (step <= 1.0)
		return true;
	if (step >= (double)SIZE_MAX)
		return !pos;
	return pos % (size_t)step == 0;
}

static void plan_unstable(struct pseudo_merge_plan *plan, const struct pseudo_merge_group *g,
			  const struct pseudo_merge_candidate *cands, size_t nr)
{
	double scale;
	size_t pos = 0;
	if (!nr || !g->max_merges)
		return;
	scale = (double)nr / weight_sum(g->max_merges, g->decay);
	for (uint64_t n = 1; n <= g->max_merges && pos < nr; n++) {
		double want = llround(scale * weight(n, g->decay));
		size_t size = want < PSEUDO_MERGE_MIN_SIZE || want > (double)(nr - pos)
			? nr - pos : (size_t)want;
		for (size_t i = pos; i < pos + size; i++)
			if (sampled(g->sample_rate, i))
				add_item(plan, cands[i].item);
		pos += size;
		end_merge(plan);
	}
}

void pseudo_merge_plan_add(struct pseudo_merge_plan *plan, const struct pseudo_merge_group *g,
			   struct pseudo_merge_candidate *cands, size_t nr)
{
	size_t nr_stable = 0, nr_unstable = 0;
	struct pseudo_merge_candidate *unstable;

	if (nr > 1)
		qsort(cands, nr, sizeof(*cands), cmp_oldest_first);
	unstable = xmalloc(sizeof(*unstable) * (nr ? nr : 1));
	for (size_t i = 0; i < nr; i++) {
		if (cands[i].date <= g->stable_threshold)
			cands[nr_stable++] = cands[i];
		else if (cands[i].date <= g->threshold && !cands[i].bitmapped)
			unstable[nr_unstable++] = cands[i];
	}
	plan_stable(plan, g, cands, nr_stable);
	plan_unstable(plan, g, unstable, nr_unstable);
	free(unstable);
}

void pseudo_merge_plan_release(struct pseudo_merge_plan *plan)
{
	free(plan->items);
	free(plan->ends);
	memset(plan, 0, sizeof(*plan));
}

/* ---- writing ------------------------------------------------------- */

struct membership {
	uint32_t bit_pos;
	uint32_t merge;
};

static int cmp_membership(const void *a, const void *b)
{
	const struct membership *x = a, *y = b;
	if (x->bit_pos != y->bit_pos)
		return x->bit_pos < y->bit_pos ? -1 : 1;
	return (x->merge > y->merge) - (x->merge < y->merge);
}

static int write_to_hashfile(void *data, const void *buf, size_t len)
{
	hashfile_write(data, buf, len);
	return 0;
}

int pseudo_merge_write(struct hashfile *f, const struct pseudo_merge_bitmaps *merges, size_t nr,
		       struct gp_error *err)
{
	uint64_t start = hashfile_total(f), lookup_ofs, extended_ofs;
	uint64_t *merge_ofs = xmalloc(sizeof(*merge_ofs) * (nr ? nr : 1));
	struct membership *members = NULL;
	size_t nr_members = 0, alloc_members = 0, nr_commits = 0;
	int ret = 0;

	if (nr > UINT32_MAX) {
		free(merge_ofs);
		return gp_error_set(err, GP_EINVAL, "too many pseudo-merges (%zu)", nr);
	}
	for (size_t i = 0; i < nr && !ret; i++) {
		struct ewah_iter it;
		uint64_t bit_pos;
		size_t before = nr_members;
		ewah_iter_init(&it, &merges[i].commits);
		while (ewah_iter_next(&it, &bit_pos)) {
			ALLOC_GROW(members, nr_members + 1, alloc_members);
			members[nr_members].bit_pos = (uint32_t)bit_pos;
			members[nr_members++].merge = (uint32_t)i;
		}
		if (before == nr_members) {
			ret = gp_error_set(err, GP_EINVAL, "pseudo-merge %zu has no commits", i);
			break;
		}
		merge_ofs[i] = hashfile_total(f);
		if (ewah_serialize_to(&merges[i].commits, write_to_hashfile, f) ||
		    ewah_serialize_to(&merges[i].objects, write_to_hashfile, f))
			ret = gp_error_set(err, GP_EINVAL, "pseudo-merge %zu is too large to write", i);
	}
	if (ret)
		goto out;
	if (nr_members)
		qsort(members, nr_members, sizeof(*members), cmp_membership);

	/* the lookup table: one row per commit */
	lookup_ofs = hashfile_total(f);
	for (size_t i = 0; i < nr_members; i++)
		nr_commits += !i || members[i].bit_pos != members[i - 1].bit_pos;
	extended_ofs = lookup_ofs + (uint64_t)nr_commits * PSEUDO_MERGE_LOOKUP_ROW_SIZE;
	{
		uint64_t next_extended = extended_ofs;
		for (size_t i = 0; i < nr_members;) {
			size_t j = i + 1;
			while (j < nr_members && members[j].bit_pos == members[i].bit_pos)
				j++;
			hashfile_write_be32(f, members[i].bit_pos);
			if (j - i == 1) {
				hashfile_write_be64(f, merge_ofs[members[i].merge]);
			} else {
				hashfile_write_be64(f, next_extended | PSEUDO_MERGE_EXTENDED_FLAG);
				next_extended += 4 + 8 * (uint64_t)(j - i);
			}
			i = j;
		}
	}
	/* the extended table, in the same order */
	for (size_t i = 0; i < nr_members;) {
		size_t j = i + 1;
		while (j < nr_members && members[j].bit_pos == members[i].bit_pos)
			j++;
		if (j - i > 1) {
			hashfile_write_be32(f, (uint32_t)(j - i));
			for (size_t k = i; k < j; k++)
				hashfile_write_be64(f, merge_ofs[members[k].merge]);
		}
		i = j;
	}
	for (size_t i = 0; i < nr; i++)
		hashfile_write_be64(f, merge_ofs[i]);
	hashfile_write_be32(f, (uint32_t)nr);
	hashfile_write_be32(f, (uint32_t)nr_commits);
	hashfile_write_be64(f, lookup_ofs - start);
	hashfile_write_be64(f, hashfile_total(f) + 8 - start);
out:
	free(members);
	free(merge_ofs);
	return ret;
}

/* ---- reading ------------------------------------------------------- */

static int bad(struct gp_error *err, const struct pseudo_merge_section *s, uint64_t ofs,
	       const char *what)
{
	return CORRUPT(err, "%s: pseudo-merges: %s at offset %llu", s->name, what,
		       (unsigned long long)ofs);
}

/* The two EWAHs of the merge at ofs, which must end by limit. */
static int view_merge(const struct pseudo_merge_section *s, uint64_t ofs, uint64_t limit,
		      uint32_t nr_objects, struct ewah *commits, struct ewah *objects,
		      struct gp_error *err)
{
	size_t used;
	const char *why = NULL;
	ewah_init(commits);
	ewah_init(objects);
	if (ofs >= limit)
		return bad(err, s, ofs, "a merge past the end of its section");
	if (ewah_view(commits, s->map + ofs, (size_t)(limit - ofs), &used, &why))
		return CORRUPT(err, "%s: pseudo-merges: bad commit bitmap at offset %llu: %s",
			       s->name, (unsigned long long)ofs, why);
	if (ewah_view(objects, s->map + ofs + used, (size_t)(limit - ofs - used), NULL, &why))
		return CORRUPT(err, "%s: pseudo-merges: bad object bitmap at offset %llu: %s",
			       s->name, (unsigned long long)(ofs + used), why);
	if (ewah_bits_used(commits) > nr_objects || ewah_bits_used(objects) > nr_objects)
		return bad(err, s, ofs, "a merge with bits past the last object");
	return 0;
}

/* The merge at ofs: its index, or nr_merges when none starts there. */
static uint32_t merge_at(const struct pseudo_merge_section *s, uint64_t ofs)
{
	uint32_t lo = 0, hi = s->nr_merges;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t at = get_be64(s->map + s->positions_ofs + 8 * (uint64_t)mid);
		if (at == ofs)
			return mid;
		if (at < ofs)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s->nr_merges;
}

static bool is_merge_ofs(const struct pseudo_merge_section *s, uint64_t ofs)
{
	return merge_at(s, ofs) < s->nr_merges;
}

int pseudo_merge_section_parse(struct pseudo_merge_section *s, const unsigned char *map,
			       uint64_t min_start, uint64_t end, uint32_t nr_objects,
			       const char *name, struct gp_error *err)
{
	uint64_t size, lookup_rel, ext_pos;
	uint32_t prev_pos = 0;

	memset(s, 0, sizeof(*s));
	s->map = map;
	s->name = name;
	if (end < min_start || end - min_start < PSEUDO_MERGE_METADATA_SIZE)
		return CORRUPT(err, "%s: too short for pseudo-merges (section ends at offset %llu)",
			       name, (unsigned long long)end);
	size = get_be64(map + end - 8);
	if (size < PSEUDO_MERGE_METADATA_SIZE || size > end - min_start)
		return CORRUPT(err, "%s: pseudo-merge size %llu at offset %llu is out of range",
			       name, (unsigned long long)size, (unsigned long long)(end - 8));
	s->start = end - size;
	s->nr_merges = get_be32(map + end - 24);
	s->nr_commits = get_be32(map + end - 20);
	lookup_rel = get_be64(map + end - 16);
	if ((uint64_t)s->nr_merges * 8 > size - PSEUDO_MERGE_METADATA_SIZE)
		return bad(err, s, end - 24, "a merge count that does not fit");
	s->positions_ofs = end - PSEUDO_MERGE_METADATA_SIZE - (uint64_t)s->nr_merges * 8;
	if (lookup_rel > s->positions_ofs - s->start ||
	    (uint64_t)s->nr_commits * PSEUDO_MERGE_LOOKUP_ROW_SIZE >
	    s->positions_ofs - s->start - lookup_rel)
		return bad(err, s, end - 16, "a lookup table that does not fit");
	s->lookup_ofs = s->start + lookup_rel;
	s->extended_ofs = s->lookup_ofs + (uint64_t)s->nr_commits * PSEUDO_MERGE_LOOKUP_ROW_SIZE;

	/* the merges: rising offsets, each ending before the next */
	for (uint32_t i = 0; i < s->nr_merges; i++) {
		uint64_t at = get_be64(map + s->positions_ofs + 8 * (uint64_t)i);
		uint64_t limit = i + 1 < s->nr_merges
			? get_be64(map + s->positions_ofs + 8 * (uint64_t)(i + 1)) : s->lookup_ofs;
		struct ewah commits, objects;
		int ret;
		if (at < s->start || limit > s->lookup_ofs || at >= limit)
			return bad(err, s, s->positions_ofs + 8 * (uint64_t)i,
				   "a merge position out of order or range");
		ret = view_merge(s, at, limit, nr_objects, &commits, &objects, err);
		if (ret)
			return ret;
		if (!ewah_popcount(&commits))
			return bad(err, s, at, "a merge without commits");
	}
	/* the lookup table, and the extended entries it points at, in order */
	ext_pos = s->extended_ofs;
	for (uint32_t row = 0; row < s->nr_commits; row++) {
		uint64_t at = s->lookup_ofs + (uint64_t)row * PSEUDO_MERGE_LOOKUP_ROW_SIZE;
		uint32_t bit_pos = get_be32(map + at);
		uint64_t target = get_be64(map + at + 4);
		if (bit_pos >= nr_objects || (row && bit_pos <= prev_pos))
			return bad(err, s, at, "a lookup row out of order or range");
		prev_pos = bit_pos;
		if (!(target & PSEUDO_MERGE_EXTENDED_FLAG)) {
			if (!is_merge_ofs(s, target))
				return bad(err, s, at, "a lookup row naming no merge");
			continue;
		}
		target &= ~PSEUDO_MERGE_EXTENDED_FLAG;
		if (target != ext_pos || s->positions_ofs - ext_pos < 4)
			return bad(err, s, at, "a lookup row naming no extended entry");
		{
			uint32_t count = get_be32(map + ext_pos);
			if (count < 2 || (uint64_t)count * 8 > s->positions_ofs - ext_pos - 4)
				return bad(err, s, ext_pos, "an extended entry that does not fit");
			for (uint32_t k = 0; k < count; k++)
				if (!is_merge_ofs(s, get_be64(map + ext_pos + 4 + 8 * (uint64_t)k)))
					return bad(err, s, ext_pos + 4 + 8 * (uint64_t)k,
						   "an extended entry naming no merge");
			ext_pos += 4 + 8 * (uint64_t)count;
		}
	}
	if (ext_pos != s->positions_ofs)
		return bad(err, s, ext_pos, "bytes between the extended table and the positions");
	return 0;
}

void pseudo_merge_section_for_commit(const struct pseudo_merge_section *s, uint32_t bit_pos,
				     uint32_t *merges, size_t max, size_t *nr)
{
	uint32_t lo = 0, hi = s->nr_commits;
	*nr = 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const unsigned char *row = s->map + s->lookup_ofs +
			(uint64_t)mid * PSEUDO_MERGE_LOOKUP_ROW_SIZE;
		uint32_t at = get_be32(row);
		uint64_t target;
		if (at < bit_pos) {
			lo = mid + 1;
			continue;
		}
		if (at > bit_pos) {
			hi = mid;
			continue;
		}
		/* checked at parse: a merge, or an extended entry in range */
		target = get_be64(row + 4);
		if (!(target & PSEUDO_MERGE_EXTENDED_FLAG)) {
			if (max)
				merges[0] = merge_at(s, target);
			*nr = 1;
			return;
		}
		target &= ~PSEUDO_MERGE_EXTENDED_FLAG;
		*nr = get_be32(s->map + target);
		for (size_t k = 0; k < *nr && k < max; k++)
			merges[k] = merge_at(s, get_be64(s->map + target + 4 + 8 * (uint64_t)k));
		return;
	}
}

uint64_t pseudo_merge_section_offset(const struct pseudo_merge_section *s, uint32_t i)
{
	return get_be64(s->map + s->positions_ofs + 8 * (uint64_t)i);
}

int pseudo_merge_section_merge(const struct pseudo_merge_section *s, uint32_t i,
			       struct ewah *commits, struct ewah *objects, struct gp_error *err)
{
	uint64_t at, limit;
	if (i >= s->nr_merges)
		return gp_error_set(err, GP_EINVAL, "%s: no pseudo-merge %u (of %u)", s->name, i,
				    s->nr_merges);
	at = get_be64(s->map + s->positions_ofs + 8 * (uint64_t)i);
	limit = i + 1 < s->nr_merges
		? get_be64(s->map + s->positions_ofs + 8 * (uint64_t)(i + 1)) : s->lookup_ofs;
	return view_merge(s, at, limit, UINT32_MAX, commits, objects, err);
}
