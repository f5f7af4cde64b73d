/*
 * bitmap-trees.c: every tree of the order decoded and resolved once, for
 * the bitmap writer (bitmap-trees.h).
 *
 * Every tree is read and parsed once, and its entries looked up, before
 * any bitmap is built; building then walks these lists in memory. Trees
 * are decoded along their delta chains, base first (as index-pack
 * resolves deltas): each delta is applied once, to its base still in
 * hand, whatever the cache would have held. Threads share the chains.
 *
 * Name hashes: an object's is the hash of its name in the tree that
 * lists it (git hashes the whole path; only the last 16 characters
 * count, so the two differ only for short names in subdirectories).
 * When an object has several names the smallest hash wins, so that the
 * file does not depend on thread timing.
 */
#include "bitmap-trees.h"
#include "pack-bitmap-write-internal.h"
#include "delta.h"
#include "error.h"
#include "pack-bitmap.h"
#include "pack-bitmap-write.h"
#include "packfile.h"
#include "progress.h"
#include "tree.h"

#define ARENA_WORDS (1u << 18)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	uint32_t words[ARENA_WORDS];
};

struct tree_resolver {
	struct bitmap_writer *w;
	struct pack_reader *reader;
	struct arena_chunk *chunks;
	/* per chain depth: the entries of the tree decoded at that depth */
	struct parsed {
		struct entry {
			struct object_id oid;
			const char *name;   /* borrowed from the frame's data */
			size_t name_len;
			bool is_tree;
			bool reused;        /* position taken from the base */
			uint32_t bit_pos;   /* NO_POS until found */
			uint32_t slot_hint; /* the lookup's candidate slot */
		} *entries;
		size_t nr, alloc;
	} *parsed;
	size_t parsed_alloc;
	struct chain_frame {
		uint32_t tree;      /* index in w->tree_bits */
		unsigned char *data;
		size_t size;
		uint32_t next_child;
	} *stack;
	size_t stack_nr, stack_alloc;
	struct gp_error err;
	int ret;
	uint64_t bytes;       /* tree bytes decoded since the last report */
};

/* Every this many bytes of trees decoded, the packs' pages are dropped. */
#define DROP_EVERY ((uint64_t)64 << 20)

struct resolve_shared {
	struct bitmap_writer *w;
	uint64_t since_drop;  /* atomic */
	uint32_t *roots;
	size_t nr_roots;
	size_t next_root;     /* atomic */
	int failed;           /* atomic */
	struct progress *progress;
};

/* Once gathered: back to plain hashes. */
void bitmap_trees_finish_hashes(struct bitmap_writer *w)
{
	for (uint32_t pos = 0; w->hashes && pos < w->nr; pos++)
		if (w->hashes[pos])
			w->hashes[pos]--;
}

static void set_name(struct bitmap_writer *w, uint32_t pos, const char *name)
{
	uint32_t hash, old;
	if (!w->hashes)
		return;
	hash = writer_stored_hash(bitmap_name_hash(name));
	old = __atomic_load_n(&w->hashes[pos], __ATOMIC_RELAXED);
	while ((!old || hash < old) &&
	       !__atomic_compare_exchange_n(&w->hashes[pos], &old, hash, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static uint32_t *arena_alloc(struct tree_resolver *r, size_t words)
{
	struct arena_chunk *c = r->chunks;
	if (words > ARENA_WORDS)
		return NULL;
	if (!c || ARENA_WORDS - c->used < words) {
		c = xmalloc(sizeof(*c));
		c->next = r->chunks;
		c->used = 0;
		r->chunks = c;
	}
	c->used += words;
	return c->words + c->used - words;
}

/* git's tree order: names compared as if directories ended in '/'. */
static int cmp_entry_names(const char *a, size_t a_len, bool a_dir,
			   const char *b, size_t b_len, bool b_dir)
{
	size_t common = a_len < b_len ? a_len : b_len;
	int cmp = memcmp(a, b, common);
	unsigned char ca, cb;
	if (cmp)
		return cmp;
	ca = common < a_len ? (unsigned char)a[common] : a_dir ? '/' : '\0';
	cb = common < b_len ? (unsigned char)b[common] : b_dir ? '/' : '\0';
	return ca < cb ? -1 : ca > cb;
}

/*
 * A tree decoded from a delta is mostly its base: walk both in tree
 * order and take the position of every entry the base has unchanged
 * (same name, kind and id) from the base's kids, instead of looking it
 * up. Anything else is left for the lookup. Unsorted trees only cost
 * lookups, never a wrong position: a position is reused only for the
 * same id.
 */
static void reuse_base_kids(struct parsed *cur, const struct parsed *base,
			    const uint32_t *base_kids)
{
	size_t j = 0, base_nr = base->nr < base_kids[0] ? base->nr : base_kids[0];
	for (size_t i = 0; i < cur->nr; i++) {
		struct entry *en = &cur->entries[i];
		int cmp = 1;
		while (j < base_nr) {
			const struct entry *be = &base->entries[j];
			cmp = cmp_entry_names(be->name, be->name_len, be->is_tree,
					      en->name, en->name_len, en->is_tree);
			if (cmp >= 0)
				break;
			j++;
		}
		if (j >= base_nr)
			break;
		if (!cmp && en->is_tree == base->entries[j].is_tree &&
		    oideq(&base->entries[j].oid, &en->oid)) {
			en->bit_pos = base_kids[j + 1] & ~KID_TREE;
			en->reused = true;
		}
	}
}

static struct parsed *parsed_at(struct tree_resolver *r, size_t depth)
{
	if (depth >= r->parsed_alloc) {
		size_t old = r->parsed_alloc;
		r->parsed_alloc = depth + 16;
		r->parsed = xrealloc(r->parsed, r->parsed_alloc * sizeof(*r->parsed));
		memset(r->parsed + old, 0, (r->parsed_alloc - old) * sizeof(*r->parsed));
	}
	return &r->parsed[depth];
}

/*
 * Parse one tree, decoded at chain depth depth, and record its entries'
 * positions. base_kids (may be NULL) are the positions of the tree it
 * was decoded from, parsed at depth - 1.
 */
static int resolve_tree(struct tree_resolver *r, uint32_t tree_pos,
			const unsigned char *data, size_t size, size_t depth,
			const uint32_t *base_kids)
{
	struct bitmap_writer *w = r->w;
	struct parsed *cur = parsed_at(r, depth);
	struct tree_iter it;
	struct tree_entry e;
	size_t nr = 0;
	uint32_t *kids;
	int ret;

	r->bytes += size;
	tree_iter_init(&it, data, size, w->algo);
	while ((ret = tree_iter_next(&it, &e, &r->err)) > 0) {
		unsigned kind = e.mode & TREE_MODE_TYPE_MASK;
		struct entry *en;
		if (kind == TREE_MODE_GITLINK)
			continue;
		ALLOC_GROW(cur->entries, nr + 1, cur->alloc);
		en = &cur->entries[nr++];
		en->oid = e.oid;
		en->name = e.name;
		en->name_len = e.name_len;
		en->bit_pos = NO_POS;
		en->reused = false;
		en->is_tree = kind == TREE_MODE_DIR;
	}
	cur->nr = nr;
	if (ret < 0) {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, tree_pos, &oid);
		return gp_error_prefix(&r->err, "tree %s", oid_to_hex_r(hex, &oid));
	}
	if (ret >= 0 && depth && base_kids)
		reuse_base_kids(cur, &r->parsed[depth - 1], base_kids);
	for (size_t i = 0; i < nr; i++)
		if (cur->entries[i].bit_pos == NO_POS)
			writer_prefetch(w, cur->entries[i].oid.hash);
	/*
	 * Look the other names up in two sweeps, so that the cache misses
	 * of a whole tree overlap: find each slot whose key matches and
	 * prefetch the name it points at (the slot index is kept in
	 * slot_hint meanwhile); then compare the names.
	 */
	for (size_t i = 0; i < nr; i++) {
		struct entry *en = &cur->entries[i];
		const struct pos_table *t = &w->table;
		uint64_t key = writer_oid_key(en->oid.hash);
		en->slot_hint = NO_POS;
		if (en->bit_pos != NO_POS)
			continue;
		for (size_t slot = writer_slot_of(t, key); t->slots[slot].index_pos != NO_POS;
		     slot = (slot + 1) & t->mask)
			if (t->slots[slot].key == key) {
				en->slot_hint = (uint32_t)slot;
				__builtin_prefetch(bitmap_order_index_oid_raw(w->order,
									      t->slots[slot].index_pos));
				break;
			}
	}
	for (size_t i = 0; i < nr; i++) {
		struct entry *en = &cur->entries[i];
		const struct pos_slot *slot = en->slot_hint == NO_POS ? NULL : &w->table.slots[en->slot_hint];
		if (en->bit_pos != NO_POS)
			continue;
		if (slot && !memcmp(bitmap_order_index_oid_raw(w->order, slot->index_pos),
				    en->oid.hash, w->table.rawsz))
			en->bit_pos = slot->bit_pos;
		else if (!writer_find(w, &en->oid, &en->bit_pos))
			en->bit_pos = NO_POS;
	}
	kids = arena_alloc(r, nr + 1);
	if (!kids)
		return CORRUPT(&r->err, "a tree with %zu entries is too large", nr);
	kids[0] = (uint32_t)nr;
	for (size_t i = 0; i < nr; i++) {
		const struct entry *en = &cur->entries[i];
		enum object_type want = en->is_tree ? OBJ_TREE : OBJ_BLOB;
		char hex[GP_MAX_HEXSZ + 1];
		if (en->bit_pos == NO_POS)
			return gp_error_set(&r->err, GP_ENOTFOUND,
					    "%s %s is not in the bitmapped pack or MIDX "
					    "(a bitmap must cover everything reachable)",
					    type_name(want), oid_to_hex_r(hex, &en->oid));
		if (w->types[en->bit_pos] != want)
			return CORRUPT(&r->err, "tree entry %s names %s, a %s, not a %s",
				       en->name, oid_to_hex_r(hex, &en->oid),
				       type_name((enum object_type)w->types[en->bit_pos]),
				       type_name(want));
		kids[i + 1] = en->bit_pos | (en->is_tree ? KID_TREE : 0);
		/* a reused entry has the same name in the base: same hash */
		if (!en->reused)
			set_name(w, en->bit_pos, en->name);
	}
	w->kids[tree_pos] = kids;
	return 0;
}

/* Decode a chain root: a whole tree, or a delta whose base is elsewhere. */
static int decode_root(struct tree_resolver *r, uint32_t tree_pos, unsigned char **data,
		       size_t *size)
{
	return writer_read_with(r->w, r->reader, tree_pos, OBJ_TREE, data, size, &r->err);
}

static int decode_child(struct tree_resolver *r, const struct chain_frame *parent,
			uint32_t tree_pos, unsigned char **data, size_t *size)
{
	struct pack_entry_header hdr;
	struct packed_git *p;
	unsigned char *delta = NULL, *result;
	uint64_t ofs, base_size, result_size;
	size_t hdr_len;
	int ret;

	writer_locate(r->w, tree_pos, &p, &ofs);
	ret = pack_read_entry(r->reader, p, ofs, &hdr, &delta, &r->err);
	if (!ret)
		ret = delta_sizes(delta, (size_t)hdr.size, &base_size, &result_size,
				  &hdr_len, &r->err);
	if (!ret && base_size != parent->size)
		ret = CORRUPT(&r->err, "%s: delta at offset %llu expects a base of %llu bytes, not %zu",
			      p->pack_path, (unsigned long long)ofs,
			      (unsigned long long)base_size, parent->size);
	if (!ret && result_size > SIZE_MAX - 1)
		ret = gp_error_set(&r->err, GP_ENOMEM, "delta result too large");
	if (ret) {
		free(delta);
		return ret;
	}
	result = malloc((size_t)result_size + 1);
	if (!result) {
		free(delta);
		return gp_error_set(&r->err, GP_ENOMEM, "cannot allocate %llu bytes",
				    (unsigned long long)result_size);
	}
	ret = delta_apply(parent->data, parent->size, delta, (size_t)hdr.size, result,
			  (size_t)result_size, &r->err);
	free(delta);
	if (ret) {
		free(result);
		return gp_error_prefix(&r->err, "%s: at offset %llu", p->pack_path,
				       (unsigned long long)ofs);
	}
	result[result_size] = '\0';
	*data = result;
	*size = (size_t)result_size;
	return 0;
}

/*
 * A tree that cannot be decoded or resolved (a corrupt entry, an entry
 * outside the pack or MIDX) is left without kids and the work goes on:
 * it may be unreachable. walk_trees() reports it if a commit needs it.
 * Only running out of memory stops everything.
 */
static int tolerate(struct tree_resolver *r, int ret)
{
	if (ret == GP_ENOMEM)
		return ret;
	gp_error_clear(&r->err);
	r->err = (struct gp_error)GP_ERROR_INIT;
	return 0;
}

static int resolve_chain(struct tree_resolver *r, uint32_t root)
{
	struct bitmap_writer *w = r->w;
	unsigned char *data = NULL;
	size_t size;
	int ret = decode_root(r, w->tree_bits[root], &data, &size);
	if (ret)
		return tolerate(r, ret);
	ret = tolerate(r, resolve_tree(r, w->tree_bits[root], data, size, 0, NULL));
	if (ret) {
		free(data);
		return ret;
	}
	ALLOC_GROW(r->stack, r->stack_nr + 1, r->stack_alloc);
	r->stack[r->stack_nr++] = (struct chain_frame){ root, data, size, 0 };
	while (r->stack_nr && !ret) {
		struct chain_frame *top = &r->stack[r->stack_nr - 1];
		uint32_t first = w->child_start[top->tree];
		uint32_t count = w->child_start[top->tree + 1] - first;
		uint32_t child;
		if (top->next_child >= count) {
			free(top->data);
			r->stack_nr--;
			continue;
		}
		child = w->children[first + top->next_child++];
		ret = decode_child(r, top, w->tree_bits[child], &data, &size);
		if (ret) {
			ret = tolerate(r, ret);
			continue;
		}
		top = &r->stack[r->stack_nr - 1];
		ret = tolerate(r, resolve_tree(r, w->tree_bits[child], data, size, r->stack_nr,
					       w->kids[w->tree_bits[top->tree]]));
		if (ret) {
			free(data);
			break;
		}
		ALLOC_GROW(r->stack, r->stack_nr + 1, r->stack_alloc);
		r->stack[r->stack_nr++] = (struct chain_frame){ child, data, size, 0 };
	}
	while (r->stack_nr)
		free(r->stack[--r->stack_nr].data);
	return ret;
}

/* Why a tree needed by a commit has no kids: decode it again, alone. */
int bitmap_trees_diagnose(struct bitmap_writer *w, uint32_t tree_pos)
{
	struct tree_resolver r = { 0 };
	unsigned char *data = NULL;
	size_t size;
	int ret;
	r.w = w;
	r.reader = w->reader;
	r.err = (struct gp_error)GP_ERROR_INIT;
	ret = decode_root(&r, tree_pos, &data, &size);
	if (!ret)
		ret = resolve_tree(&r, tree_pos, data, size, 0, NULL);
	free(data);
	if (ret) {
		gp_error_set(w->err, ret, "%s", gp_error_msg(&r.err));
	} else {
		struct object_id oid;
		char hex[GP_MAX_HEXSZ + 1];
		bitmap_order_oid(w->order, tree_pos, &oid);
		ret = CORRUPT(w->err, "tree %s could not be decoded: its delta chain never reaches a base",
			      oid_to_hex_r(hex, &oid));
	}
	gp_error_clear(&r.err);
	for (size_t i = 0; i < r.parsed_alloc; i++)
		free(r.parsed[i].entries);
	free(r.parsed);
	while (r.chunks) {
		struct arena_chunk *c = r.chunks;
		r.chunks = c->next;
		free(c);
	}
	return ret;
}

struct resolve_arg {
	struct resolve_shared *sh;
	struct tree_resolver *result; /* its arena stays: w->kids points into it */
};

static void *resolve_worker(void *data)
{
	struct resolve_arg *arg = data;
	struct resolve_shared *sh = arg->sh;
	struct tree_resolver *r = xcalloc(1, sizeof(*r));
	r->w = sh->w;
	r->reader = pack_reader_new(4 << 20);
	r->err = (struct gp_error)GP_ERROR_INIT;
	for (;;) {
		size_t index = __atomic_fetch_add(&sh->next_root, 1, __ATOMIC_RELAXED);
		if (index >= sh->nr_roots || __atomic_load_n(&sh->failed, __ATOMIC_RELAXED))
			break;
		r->ret = resolve_chain(r, sh->roots[index]);
		progress_add(sh->progress, 1);
		/*
		 * Decoding touches pages all over the packs; give them back
		 * now and then, or they would all count as this process's.
		 */
		if (__atomic_add_fetch(&sh->since_drop, r->bytes, __ATOMIC_RELAXED) > DROP_EVERY) {
			__atomic_store_n(&sh->since_drop, 0, __ATOMIC_RELAXED);
			writer_drop_pages(sh->w);
		}
		r->bytes = 0;
		if (r->ret) {
			__atomic_store_n(&sh->failed, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	free(r->stack);
	for (size_t i = 0; i < r->parsed_alloc; i++)
		free(r->parsed[i].entries);
	free(r->parsed);
	pack_reader_free(r->reader);
	arg->result = r;
	return NULL;
}

/* The bit of the object at ofs in pack p, when the order holds that copy. */
static bool bit_at_offset(const struct bitmap_writer *w, struct packed_git *p, uint64_t ofs,
			  uint32_t *bit_pos)
{
	for (size_t i = 0; i < w->nr_ranges; i++) {
		const struct pack_range *range = &w->ranges[i];
		size_t lo = range->start, hi = range->end;
		if (range->pack != p)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (w->ofs[mid] == ofs) {
				*bit_pos = (uint32_t)mid;
				return true;
			}
			if (w->ofs[mid] < ofs)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

/* Which tree each tree delta applies to: the forest of delta chains. */
static int find_chains(struct bitmap_writer *w, uint32_t **roots, size_t *nr_roots)
{
	uint32_t *tree_of_bit = xmalloc(sizeof(uint32_t) * (w->nr ? w->nr : 1));
	uint32_t *base_of;
	size_t nr = 0;
	int ret = 0;

	for (uint32_t bit_pos = 0; bit_pos < w->nr; bit_pos++) {
		tree_of_bit[bit_pos] = NO_POS;
		if (w->types[bit_pos] != OBJ_TREE)
			continue;
		ALLOC_GROW(w->tree_bits, w->nr_trees + 1, w->alloc_trees);
		tree_of_bit[bit_pos] = (uint32_t)w->nr_trees;
		w->tree_bits[w->nr_trees++] = bit_pos;
	}
	base_of = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
	w->child_start = xcalloc(w->nr_trees + 2, sizeof(uint32_t));
	for (size_t t = 0; t < w->nr_trees && !ret; t++) {
		struct pack_entry_header hdr;
		struct packed_git *p;
		uint32_t base_bit;
		uint64_t ofs;
		bool found = false;
		writer_locate(w, w->tree_bits[t], &p, &ofs);
		base_of[t] = NO_POS;
		ret = pack_parse_entry_header(p->pack_map + ofs, p->pack_size - ofs, ofs,
					      p->algo, &hdr, w->err);
		if (ret)
			break;
		if (hdr.type == OBJ_OFS_DELTA)
			found = bit_at_offset(w, p, hdr.base_ofs, &base_bit);
		else if (hdr.type == OBJ_REF_DELTA)
			found = writer_find(w, &hdr.base_oid, &base_bit);
		if (found && tree_of_bit[base_bit] != NO_POS) {
			base_of[t] = tree_of_bit[base_bit];
			w->child_start[base_of[t] + 2]++;
		}
	}
	if (!ret) {
		/* counts at [t + 2]; prefix sums make [t + 1] each run's end */
		for (size_t t = 2; t < w->nr_trees + 2; t++)
			w->child_start[t] += w->child_start[t - 1];
		w->children = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
		*roots = xmalloc(sizeof(uint32_t) * (w->nr_trees ? w->nr_trees : 1));
		for (size_t t = 0; t < w->nr_trees; t++) {
			if (base_of[t] == NO_POS)
				(*roots)[nr++] = (uint32_t)t;
			else
				w->children[w->child_start[base_of[t] + 1]++] = (uint32_t)t;
		}
		*nr_roots = nr;
	}
	free(base_of);
	free(tree_of_bit);
	return ret;
}

/*
 * Resolve the trees in threads; meanwhile the calling thread runs
 * meanwhile(w) (the commit graph, which needs no tree), then resolves
 * too.
 */
struct meanwhile_ctx {
	struct bitmap_writer *w;
	struct resolve_shared *sh;
	int (*fn)(struct bitmap_writer *);
	int ret;
};

static void run_meanwhile(void *data)
{
	struct meanwhile_ctx *ctx = data;
	ctx->ret = ctx->fn(ctx->w);
	if (ctx->ret)
		__atomic_store_n(&ctx->sh->failed, 1, __ATOMIC_RELAXED);
}

int bitmap_trees_resolve(struct bitmap_writer *w, int (*meanwhile)(struct bitmap_writer *))
{
	struct resolve_shared sh = { 0 };
	struct resolve_arg args[MAX_THREADS];
	struct meanwhile_ctx ctx = { w, &sh, meanwhile, 0 };
	int nr_jobs = w->threads;
	int ret;

	w->kids = xcalloc(w->nr ? w->nr : 1, sizeof(*w->kids));
	ret = find_chains(w, &sh.roots, &sh.nr_roots);
	if (ret)
		return ret;
	sh.w = w;
	sh.progress = progress_start("Reading trees", sh.nr_roots, w->opts->progress);
	for (int i = 0; i < nr_jobs; i++)
		args[i] = (struct resolve_arg){ &sh, NULL };
	run_parallel(resolve_worker, args, sizeof(*args), nr_jobs, run_meanwhile, &ctx);
	progress_stop(&sh.progress);
	free(sh.roots);
	ret = ctx.ret;
	for (int i = 0; i < nr_jobs; i++) {
		struct tree_resolver *r = args[i].result;
		while (r->chunks) {
			struct arena_chunk *c = r->chunks;
			r->chunks = c->next;
			w->arena = xrealloc(w->arena, (w->nr_arena + 1) * sizeof(*w->arena));
			w->arena[w->nr_arena++] = c;
		}
		if (r->ret && !ret) {
			ret = r->ret;
			gp_error_set(w->err, ret, "%s", gp_error_msg(&r->err));
		}
		gp_error_clear(&r->err);
		free(r);
	}
	bitmap_trees_finish_hashes(w);
	return ret;
}


void bitmap_trees_release(struct bitmap_writer *w)
{
	for (size_t i = 0; i < w->nr_arena; i++)
		free(w->arena[i]);
	free(w->arena);
	w->arena = NULL;
	w->nr_arena = 0;
}

struct tree_resolver *bitmap_trees_resolver_new(struct bitmap_writer *w)
{
	struct tree_resolver *r = xcalloc(1, sizeof(*r));
	r->w = w;
	r->reader = w->reader;
	r->err = (struct gp_error)GP_ERROR_INIT;
	return r;
}

int bitmap_trees_load(struct tree_resolver *r, uint32_t tree_pos)
{
	unsigned char *data = NULL;
	size_t size;
	int ret = decode_root(r, tree_pos, &data, &size);
	if (!ret)
		ret = resolve_tree(r, tree_pos, data, size, 0, NULL);
	free(data);
	if (ret) {
		gp_error_set(r->w->err, ret, "%s", gp_error_msg(&r->err));
		gp_error_clear(&r->err);
	}
	return ret;
}

void bitmap_trees_resolver_free(struct tree_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->parsed_alloc; i++)
		free(r->parsed[i].entries);
	free(r->parsed);
	free(r->stack);
	while (r->chunks) {
		struct arena_chunk *c = r->chunks;
		r->chunks = c->next;
		free(c);
	}
	gp_error_clear(&r->err);
	free(r);
}
