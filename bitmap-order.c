/*
 * bitmap-order.c: the object orders a reachability bitmap counts in
 * (pack-bitmap.h, "Object orders"): a pack's (its .rev), a MIDX's
 * pseudo-pack order, and the identity order the fuzzer parses over;
 * and the name hash git keeps per object. The reader's other files
 * are listed in pack-bitmap-internal.h.
 */
#include "pack-bitmap-internal.h"
#include "midx.h"
#include "odb.h"
#include "packfile.h"

uint32_t bitmap_name_hash(const char *path)
{
	uint32_t hash = 0;
	/* git skips isspace() characters: in the C locale, these six */
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (*c != ' ' && (*c < '\t' || *c > '\r'))
			hash = (hash >> 2) + ((uint32_t)*c << 24);
	return hash;
}

/* ------------------------------------------------------------------ */
/* Object orders                                                       */
/* ------------------------------------------------------------------ */

int bitmap_order_for_pack(struct bitmap_order **out, struct packed_git *p,
			  struct gp_error *err)
{
	struct bitmap_order *o;
	int ret = pack_load_revindex(p, err);
	if (ret)
		return ret;
	o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_PACK;
	o->algo = p->algo;
	o->nr = p->nr_objects;
	o->pack = p;
	o->idx_to_pack_pos = xmalloc(sizeof(uint32_t) * (o->nr ? o->nr : 1));
	for (uint32_t pack_pos = 0; pack_pos < o->nr; pack_pos++)
		o->idx_to_pack_pos[pack_pos_to_idx(p, pack_pos)] = pack_pos;
	memcpy(o->checksum, p->pack_hash, gp_hash_algos[p->algo].rawsz);
	*out = o;
	return 0;
}

/*
 * search_ridx: for a reader (bitmap_index_open() on a server's odb,
 * odb_verify_bitmaps() false) that maps a few positions: the RIDX is
 * searched rather than inverted (MIDX_ORDER_NO_INVERSE).
 */
int bitmap_order_for_midx_with(struct bitmap_order **out, struct odb *odb, struct midx *m,
			       bool by_name, bool compute_missing, bool search_ridx,
			       struct gp_error *err)
{
	struct bitmap_order *o;
	int ret = midx_load_pseudo_order_flags(m, compute_missing,
					       search_ridx ? MIDX_ORDER_NO_INVERSE : 0, err);
	if (ret)
		return ret;
	o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_MIDX;
	o->algo = odb_algo(odb);
	o->nr = midx_nr_objects(m);
	o->odb = odb;
	o->midx = m;
	o->midx_packs = xcalloc(midx_nr_packs(m) ? midx_nr_packs(m) : 1,
				sizeof(*o->midx_packs));
	for (uint32_t id = 0; id < midx_nr_packs(m); id++) {
		if (!by_name) {
			o->midx_packs[id] = odb_midx_pack(odb, id);
		} else {
			for (size_t i = 0; i < odb_nr_packs(odb) && !o->midx_packs[id]; i++)
				if (odb_pack_is_local(odb, i) &&
				    !strcmp(base_name(odb_pack(odb, i)->idx_path), midx_pack_name(m, id)))
					o->midx_packs[id] = odb_pack(odb, i);
		}
		if (!o->midx_packs[id]) {
			ret = gp_error_set(err, GP_ENOTFOUND, "%s: pack %s is missing",
					   midx_path(m), midx_pack_name(m, id));
			bitmap_order_free(o);
			return ret;
		}
	}
	memcpy(o->checksum, midx_checksum(m), gp_hash_algos[o->algo].rawsz);
	*out = o;
	return 0;
}

int bitmap_order_for_midx(struct bitmap_order **out, struct odb *odb,
			  struct gp_error *err)
{
	struct midx *m = odb_midx(odb);
	if (!m)
		return gp_error_set(err, GP_ENOTFOUND, "%s: no usable multi-pack-index",
				    odb_objdir(odb));
	return bitmap_order_for_midx_with(out, odb, m, false, false, false, err);
}

int bitmap_order_for_midx_file(struct bitmap_order **out, struct odb *odb,
			       struct midx *m, struct gp_error *err)
{
	return bitmap_order_for_midx_with(out, odb, m, true, false, false, err);
}

struct bitmap_order *bitmap_order_identity(int algo, uint32_t nr)
{
	struct bitmap_order *o = xcalloc(1, sizeof(*o));
	o->kind = ORDER_IDENTITY;
	o->algo = algo;
	o->nr = nr;
	return o;
}

void bitmap_order_free(struct bitmap_order *o)
{
	if (!o)
		return;
	free(o->idx_to_pack_pos);
	free(o->midx_packs);
	free(o);
}

uint32_t bitmap_order_nr(const struct bitmap_order *o)
{
	return o->nr;
}

const unsigned char *bitmap_order_checksum(const struct bitmap_order *o)
{
	return o->checksum;
}

bool bitmap_order_extends(const struct bitmap_order *o, const struct bitmap_order *base)
{
	uint32_t nr_layers;
	size_t rawsz = gp_hash_algos[o->algo].rawsz;
	if (o->kind != ORDER_MIDX || base->kind != ORDER_MIDX || o->algo != base->algo)
		return false;
	nr_layers = midx_nr_layers(o->midx);
	if (nr_layers < 2 || midx_nr_layers(base->midx) < nr_layers - 1 ||
	    midx_nr_objects_in_base(o->midx) > base->nr)
		return false;
	/*
	 * A layer's checksum covers its names, offsets, packs and order:
	 * the same files, layer by layer, give the same bit positions.
	 */
	for (uint32_t layer = 0; layer + 1 < nr_layers; layer++)
		if (memcmp(midx_checksum(midx_layer(o->midx, layer)),
			   midx_checksum(midx_layer(base->midx, layer)), rawsz))
			return false;
	return true;
}

/* pack-<hash>.bitmap beside pack-<hash>.pack */
char *pack_bitmap_path(const struct packed_git *p)
{
	size_t len = strlen(p->pack_path);
	if (ends_with(p->pack_path, ".pack"))
		len -= 5;
	return xstrfmt("%.*s.bitmap", (int)len, p->pack_path);
}

char *bitmap_order_bitmap_path(const struct bitmap_order *o)
{
	char hex[GP_MAX_HEXSZ + 1];
	const char *path;
	size_t len;
	switch (o->kind) {
	case ORDER_PACK:
		return pack_bitmap_path(o->pack);
	case ORDER_MIDX:
		hash_to_hex_r(hex, o->checksum, gp_hash_algos[o->algo].rawsz);
		path = midx_path(o->midx);
		len = strrchr(path, '/') ? (size_t)(strrchr(path, '/') - path) : 0;
		return xstrfmt("%.*s%smulti-pack-index-%s.bitmap", (int)len, path,
			       len ? "/" : "", hex);
	case ORDER_IDENTITY:
		break;
	}
	return xstrdup("(memory)");
}

bool bitmap_order_find(const struct bitmap_order *o, const struct object_id *oid,
		       uint32_t *bit_pos)
{
	uint32_t index_pos;
	switch (o->kind) {
	case ORDER_PACK:
		if (!pack_find_oid(o->pack, oid, &index_pos))
			return false;
		*bit_pos = o->idx_to_pack_pos[index_pos];
		return true;
	case ORDER_MIDX:
		if (!midx_find_oid(o->midx, oid, &index_pos))
			return false;
		*bit_pos = midx_pos_to_pseudo(o->midx, index_pos);
		/* a position a damaged RIDX does not list is in no bitmap */
		return *bit_pos != UINT32_MAX;
	case ORDER_IDENTITY:
		break;
	}
	return false;
}

uint32_t bitmap_order_bit_to_index(const struct bitmap_order *o, uint32_t bit_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return pack_pos_to_idx(o->pack, bit_pos);
	case ORDER_MIDX:
		return midx_pseudo_to_pos(o->midx, bit_pos);
	case ORDER_IDENTITY:
		break;
	}
	return bit_pos;
}

uint32_t bitmap_order_index_to_bit(const struct bitmap_order *o, uint32_t index_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return o->idx_to_pack_pos[index_pos];
	case ORDER_MIDX:
		return midx_pos_to_pseudo(o->midx, index_pos);
	case ORDER_IDENTITY:
		break;
	}
	return index_pos;
}

const unsigned char *bitmap_order_index_oid_raw(const struct bitmap_order *o,
						uint32_t index_pos)
{
	switch (o->kind) {
	case ORDER_PACK:
		return pack_nth_oid_raw(o->pack, index_pos);
	case ORDER_MIDX:
		return midx_nth_oid_raw(o->midx, index_pos);
	case ORDER_IDENTITY:
		break;
	}
	return NULL;
}

void bitmap_order_oid(const struct bitmap_order *o, uint32_t bit_pos,
		      struct object_id *oid)
{
	uint32_t index_pos = bitmap_order_bit_to_index(o, bit_pos);
	switch (o->kind) {
	case ORDER_PACK:
		pack_nth_oid(o->pack, index_pos, oid);
		return;
	case ORDER_MIDX:
		midx_nth_oid(o->midx, index_pos, oid);
		return;
	case ORDER_IDENTITY:
		break;
	}
	oid_clear(oid, o->algo);
	put_be32(oid->hash, index_pos);
}

void bitmap_order_locate(const struct bitmap_order *o, uint32_t bit_pos,
			 struct packed_git **pack, uint64_t *ofs)
{
	uint32_t index_pos = bitmap_order_bit_to_index(o, bit_pos);
	*pack = NULL;
	*ofs = 0;
	switch (o->kind) {
	case ORDER_PACK:
		*pack = o->pack;
		*ofs = pack_nth_offset(o->pack, index_pos);
		return;
	case ORDER_MIDX: {
		uint32_t pack_int_id;
		/* a damaged entry (of a MIDX checked lazily) is in no pack */
		if (midx_nth_entry(o->midx, index_pos, &pack_int_id, ofs))
			*pack = o->midx_packs[pack_int_id];
		else
			*ofs = 0;
		return;
	}
	case ORDER_IDENTITY:
		break;
	}
}
