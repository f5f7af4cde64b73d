/*
 * bloom.c: the changed-path Bloom filter of one commit
 * (gitformat-commit-graph(5), "Bloom Filter Data"): a diff of two root
 * trees into the set of changed paths with their leading directories,
 * then murmur3 double hashing into a bit array. See bloom.h for the
 * rules; the diff is git's recursive tree diff without renames, so a
 * file replaced by a directory of the same name is a deletion and the
 * additions under it.
 */
#include "util.h"
#include "bloom.h"
#include "error.h"
#include "odb.h"
#include "oidset.h"
#include "strbuf.h"
#include "tree.h"

#define BLOOM_SEED0 0x293ae76fu
/* The format document drops the final digit; git hashes with this. */
#define BLOOM_SEED1 0x7e646e2cu

static uint32_t rotl32(uint32_t x, unsigned r)
{
	return (x << r) | (x >> (32 - r));
}

/* A path byte as the hash version reads it: version 1 sign-extends. */
static uint32_t path_byte(const unsigned char *data, size_t i, int version)
{
	if (version == 1)
		return (uint32_t)(int32_t)(signed char)data[i];
	return data[i];
}

uint32_t bloom_murmur3(uint32_t seed, const unsigned char *data, size_t len, int version)
{
	const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
	uint32_t h = seed, k;
	size_t blocks = len / 4, tail = len & ~(size_t)3;

	for (size_t b = 0; b < blocks; b++) {
		k = path_byte(data, 4 * b, version) |
		    path_byte(data, 4 * b + 1, version) << 8 |
		    path_byte(data, 4 * b + 2, version) << 16 |
		    path_byte(data, 4 * b + 3, version) << 24;
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
		h = rotl32(h, 13);
		h = h * 5 + 0xe6546b64u;
	}
	k = 0;
	switch (len & 3) {
	case 3:
		k ^= path_byte(data, tail + 2, version) << 16;
		/* fallthrough */
	case 2:
		k ^= path_byte(data, tail + 1, version) << 8;
		/* fallthrough */
	case 1:
		k ^= path_byte(data, tail, version);
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
	}
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

struct path_set {
	char **items;
	size_t nr, alloc;
	size_t nr_leaves;
	uint32_t max_changed_paths;
	bool too_many; /* more leaves than BLOOM_MAX_CHANGED_PATHS: stopped */
	struct odb *odb;
	int algo;
};

/* Record a changed leaf and every directory leading to it. */
static void add_leaf(struct path_set *s, const struct strbuf *path)
{
	size_t len = path->len;
	if (++s->nr_leaves > s->max_changed_paths) {
		s->too_many = true;
		return;
	}
	while (len) {
		ALLOC_GROW(s->items, s->nr + 1, s->alloc);
		s->items[s->nr++] = xstrndup(path->buf, len);
		while (len && path->buf[len - 1] != '/')
			len--;
		if (len)
			len--; /* drop the slash: "a/b/c" -> "a/b" */
	}
}

struct tree_buf {
	unsigned char *data;
	size_t len;
};

static int read_tree(struct path_set *s, const struct object_id *oid, struct tree_buf *t,
		     struct gp_error *err)
{
	enum object_type type;
	int ret;

	t->data = NULL;
	t->len = 0;
	if (!oid)
		return 0;
	ret = odb_read_object(s->odb, oid, &type, &t->data, &t->len, err);
	if (!ret && type != OBJ_TREE) {
		char hex[GP_MAX_HEXSZ + 1];
		oid_to_hex_r(hex, oid);
		ret = CORRUPT(err, "object %s is not a tree", hex);
		free(t->data);
		t->data = NULL;
	}
	return ret;
}

/* git's base_name_compare(): a directory sorts as if named "name/". */
static int entry_cmp(const struct tree_entry *a, const struct tree_entry *b)
{
	size_t len = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, len);
	unsigned ca, cb;
	if (c)
		return c;
	ca = a->name_len > len ? (unsigned char)a->name[len]
			       : (tree_mode_type(a->mode) == OBJ_TREE ? '/' : 0);
	cb = b->name_len > len ? (unsigned char)b->name[len]
			       : (tree_mode_type(b->mode) == OBJ_TREE ? '/' : 0);
	return (int)ca - (int)cb;
}

static int diff_trees(struct path_set *s, struct strbuf *base, const struct object_id *a_oid,
		      const struct object_id *b_oid, struct gp_error *err);

/* One side's entry e alone (added or deleted), or both sides differing. */
static int diff_entry(struct path_set *s, struct strbuf *base, const struct tree_entry *a,
		      const struct tree_entry *b, struct gp_error *err)
{
	const struct tree_entry *e = a ? a : b;
	size_t old_len = base->len;
	int ret = 0;

	strbuf_add(base, e->name, e->name_len);
	if (tree_mode_type(e->mode) == OBJ_TREE) {
		strbuf_addch(base, '/');
		ret = diff_trees(s, base, a ? &a->oid : NULL, b ? &b->oid : NULL, err);
	} else {
		add_leaf(s, base);
	}
	strbuf_setlen(base, old_len);
	return ret;
}

static int diff_trees(struct path_set *s, struct strbuf *base, const struct object_id *a_oid,
		      const struct object_id *b_oid, struct gp_error *err)
{
	struct tree_buf ta, tb;
	struct tree_iter ia, ib;
	struct tree_entry ea, eb;
	int ra, rb, ret;

	ret = read_tree(s, a_oid, &ta, err);
	if (ret)
		return ret;
	ret = read_tree(s, b_oid, &tb, err);
	if (ret) {
		free(ta.data);
		return ret;
	}
	tree_iter_init(&ia, ta.data, ta.len, s->algo);
	tree_iter_init(&ib, tb.data, tb.len, s->algo);
	ra = tree_iter_next(&ia, &ea, err);
	rb = ra < 0 ? 0 : tree_iter_next(&ib, &eb, err);
	while (!s->too_many && ra > 0 && rb > 0) {
		int c = entry_cmp(&ea, &eb);
		if (c < 0) {
			ret = diff_entry(s, base, &ea, NULL, err);
			ra = tree_iter_next(&ia, &ea, err);
		} else if (c > 0) {
			ret = diff_entry(s, base, NULL, &eb, err);
			rb = tree_iter_next(&ib, &eb, err);
		} else {
			if (!oideq(&ea.oid, &eb.oid) ||
			    tree_mode_canon(ea.mode) != tree_mode_canon(eb.mode))
				ret = diff_entry(s, base, &ea, &eb, err);
			ra = tree_iter_next(&ia, &ea, err);
			if (ra >= 0)
				rb = tree_iter_next(&ib, &eb, err);
		}
		if (ret)
			goto out;
	}
	while (!s->too_many && ra > 0 && rb >= 0) {
		ret = diff_entry(s, base, &ea, NULL, err);
		if (ret)
			goto out;
		ra = tree_iter_next(&ia, &ea, err);
	}
	while (!s->too_many && rb > 0 && ra >= 0) {
		ret = diff_entry(s, base, NULL, &eb, err);
		if (ret)
			goto out;
		rb = tree_iter_next(&ib, &eb, err);
	}
	if (ra < 0 || rb < 0) {
		char hex[GP_MAX_HEXSZ + 1];
		oid_to_hex_r(hex, ra < 0 ? a_oid : b_oid);
		ret = gp_error_prefix(err, "tree %s", hex);
	}
out:
	free(ta.data);
	free(tb.data);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bloom_filter_compute(struct bloom_filter *out, struct odb *odb, int algo,
			 const struct object_id *parent_tree, const struct object_id *tree,
			 const struct bloom_settings *settings, unsigned *trunc,
			 struct gp_error *err)
{
	struct path_set s = { .odb = odb, .algo = algo,
			      .max_changed_paths = settings->max_changed_paths };
	int version = (int)settings->hash_version;
	struct strbuf base = STRBUF_INIT;
	size_t nr_paths = 0;
	int ret;

	bloom_filter_release(out);
	*trunc = 0;
	ret = diff_trees(&s, &base, parent_tree, tree, err);
	if (ret)
		goto out;
	if (!s.too_many && s.nr) {
		qsort(s.items, s.nr, sizeof(*s.items), cmp_str);
		for (size_t i = 0; i < s.nr; i++)
			if (!nr_paths || strcmp(s.items[nr_paths - 1], s.items[i]))
				s.items[nr_paths++] = s.items[i];
			else
				free(s.items[i]);
		s.nr = nr_paths;
	}
	if (s.too_many || nr_paths > settings->max_changed_paths) {
		*trunc = BLOOM_TRUNC_LARGE;
		out->len = 1;
		out->data = xmalloc(1);
		out->data[0] = 0xff;
		goto out;
	}
	out->len = (nr_paths * settings->bits_per_entry + 7) / 8;
	if (!out->len) {
		*trunc = BLOOM_TRUNC_EMPTY;
		out->len = 1;
	}
	out->data = xcalloc(out->len, 1);
	for (size_t i = 0; i < nr_paths; i++) {
		const unsigned char *p = (const unsigned char *)s.items[i];
		size_t len = strlen(s.items[i]);
		uint32_t h0 = bloom_murmur3(BLOOM_SEED0, p, len, version);
		uint32_t h1 = bloom_murmur3(BLOOM_SEED1, p, len, version);
		uint64_t bits = (uint64_t)out->len * 8;
		for (uint32_t n = 0; n < settings->num_hashes; n++) {
			uint64_t pos = (uint32_t)(h0 + n * h1) % bits;
			out->data[pos / 8] |= (unsigned char)(1u << (pos % 8));
		}
	}
out:
	for (size_t i = 0; i < s.nr; i++)
		free(s.items[i]);
	free(s.items);
	strbuf_release(&base);
	return ret;
}

void bloom_filter_release(struct bloom_filter *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}

int bloom_tree_has_high_bit(struct bloom_high_bits *hb, const struct object_id *tree,
			    bool *out, struct gp_error *err)
{
	struct path_set s = { .odb = hb->odb, .algo = hb->algo };
	struct tree_buf t;
	struct tree_iter it;
	struct tree_entry e;
	bool high = false;
	int ret;

	if (!hb->visited) {
		hb->visited = xcalloc(1, sizeof(*hb->visited));
		hb->high = xcalloc(1, sizeof(*hb->high));
	}
	if (oidset_contains(hb->visited, tree)) {
		*out = oidset_contains(hb->high, tree);
		return 0;
	}
	ret = read_tree(&s, tree, &t, err);
	if (ret)
		return ret;
	tree_iter_init(&it, t.data, t.len, hb->algo);
	while (!high && (ret = tree_iter_next(&it, &e, err)) > 0) {
		for (size_t i = 0; i < e.name_len && !high; i++)
			high = (unsigned char)e.name[i] >= 0x80;
		if (!high && tree_mode_type(e.mode) == OBJ_TREE) {
			ret = bloom_tree_has_high_bit(hb, &e.oid, &high, err);
			if (ret)
				break;
		}
	}
	free(t.data);
	if (ret < 0)
		return ret;
	oidset_insert(hb->visited, tree);
	if (high)
		oidset_insert(hb->high, tree);
	*out = high;
	return 0;
}

void bloom_high_bits_release(struct bloom_high_bits *hb)
{
	if (hb->visited) {
		oidset_release(hb->visited);
		oidset_release(hb->high);
		free(hb->visited);
		free(hb->high);
	}
	hb->visited = hb->high = NULL;
}
