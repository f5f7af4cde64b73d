/*
 * fuzz-pack-entry.c: one pack entry, as pack_read_object() meets it:
 * pack_parse_entry_header(), then the entry's zlib stream through
 * inflate_exact() into a buffer of the size the header declared.
 *
 * Input: 8 bytes big-endian, whose bit 63 selects SHA-256 (for the
 * REF_DELTA base name) and whose low 63 bits are the entry's offset in
 * its pack; then the entry's bytes as they sit in the pack. Seeds in
 * t/fuzz/corpus/pack-entry/ are cut from packs git wrote (one per
 * type: commit, tree, blob, tag, OFS_DELTA, REF_DELTA). Shorter inputs
 * are parsed whole at offset 12 (just past the pack header).
 *
 * Beyond "no crash", the target checks what the callers rely on: the
 * header length lies inside the input, an OFS_DELTA base lies between
 * the pack header and the entry; and, when the stream inflates, that a
 * reused inflater, the zlib path (when built with libdeflate), the
 * streaming inflate_to_strbuf() and inflate_prefix() all agree with it.
 * Inflating is bounded: only entries declaring less than 1 MiB.
 * GP_FUZZ_LAX_INFLATE=1 in the environment tolerates the known
 * differences between libdeflate and zlib (see lax_inflate()).
 */
#include "fuzz.h"
#include "delta.h"
#include "object.h"
#include "packfile.h"
#include "strbuf.h"
#include "zstream.h"

#define MAX_INFLATE (1u << 20)

struct inflate_result {
	int ret;
	char *msg;
	size_t consumed;
	unsigned char *out;
};

static void run_inflate(struct inflater *inf, const unsigned char *in,
			size_t in_len, size_t size, struct inflate_result *res)
{
	struct gp_error err = GP_ERROR_INIT;

	/* Exactly size bytes on the heap, so ASan sees any overrun. */
	res->out = xmalloc(size ? size : 1);
	res->consumed = SIZE_MAX;
	res->ret = inflate_exact(inf, in, in_len, res->out, size, &res->consumed, &err);
	res->msg = NULL;
	if (res->ret) {
		res->msg = xstrdup(err.msg ? err.msg : "(null)");
		fuzz_check_error(res->ret, &err, 0, "inflate_exact");
	} else {
		if (err.msg)
			fuzz_fail("inflate_exact succeeded with a message: %s", err.msg);
		if (res->consumed > in_len)
			fuzz_fail("inflate_exact consumed %zu of %zu bytes",
				  res->consumed, in_len);
	}
}

static void release_result(struct inflate_result *res)
{
	free(res->out);
	free(res->msg);
}

/*
 * One difference between the paths is accepted (zstream.h): libdeflate
 * decodes a few malformed-but-checksummed streams that zlib refuses
 * (regressions/pack-entry/libdeflate-lenient-stream); the adler-32
 * still vouches for the bytes. GP_FUZZ_LAX_INFLATE=1 also tolerates
 * differing messages, for fuzzing on past a new difference.
 */
static bool lax_inflate(void)
{
	return !!getenv("GP_FUZZ_LAX_INFLATE");
}

static void compare_results(const struct inflate_result *a,
			    const struct inflate_result *b, size_t size,
			    const char *what)
{
	if (!a->ret && b->ret)
		return; /* libdeflate's leniency: accepted, see above */
	if (a->ret != b->ret)
		fuzz_fail("%s: inflate_exact returned %d, then %d ('%s' / '%s')",
			  what, a->ret, b->ret, a->msg ? a->msg : "",
			  b->msg ? b->msg : "");
	if (a->ret) {
		if (strcmp(a->msg, b->msg) && !lax_inflate())
			fuzz_fail("%s: messages differ: '%s' / '%s'", what, a->msg, b->msg);
		return;
	}
	if (a->consumed != b->consumed)
		fuzz_fail("%s: consumed %zu, then %zu", what, a->consumed, b->consumed);
	if (memcmp(a->out, b->out, size))
		fuzz_fail("%s: inflated bytes differ", what);
}

/* Once inflate_exact() succeeded, the other inflaters must agree. */
static void check_other_inflaters(const unsigned char *in, size_t in_len,
				  const struct inflate_result *res, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf sb = STRBUF_INIT;
	unsigned char prefix[64];
	size_t consumed = SIZE_MAX, produced = SIZE_MAX;
	size_t want = size < sizeof(prefix) ? size : sizeof(prefix);
	int ret;

	ret = inflate_to_strbuf(in, in_len, &sb, size, &consumed, &err);
	if (ret)
		fuzz_fail("inflate_exact succeeded, inflate_to_strbuf failed: %s",
			  gp_error_msg(&err));
	if (sb.len != size || memcmp(sb.buf, res->out, size) || consumed != res->consumed)
		fuzz_fail("inflate_to_strbuf gave %zu bytes (consumed %zu), inflate_exact %zu (consumed %zu)",
			  sb.len, consumed, size, res->consumed);
	strbuf_release(&sb);

	ret = inflate_prefix(in, in_len, prefix, sizeof(prefix), &produced, &err);
	if (ret)
		fuzz_fail("inflate_exact succeeded, inflate_prefix failed: %s",
			  gp_error_msg(&err));
	if (produced != want || memcmp(prefix, res->out, want))
		fuzz_fail("inflate_prefix produced %zu bytes, want %zu", produced, want);
}

static void fuzz_inflate(const unsigned char *in, size_t in_len, size_t size)
{
	struct inflater *inf = inflater_new();
	struct inflate_result first, again;
	bool zlib_ok = true;

	run_inflate(inf, in, in_len, size, &first);
	/* A reused inflater must not remember the previous stream. */
	run_inflate(inf, in, in_len, size, &again);
	compare_results(&first, &again, size, "reused inflater");
	release_result(&again);
#ifdef HAVE_LIBDEFLATE
	{
		/* zstream.c: "the two paths must report the same errors". */
		struct inflate_result zlib_res;
		setenv("GP_TEST_NO_LIBDEFLATE", "1", 1);
		run_inflate(inf, in, in_len, size, &zlib_res);
		unsetenv("GP_TEST_NO_LIBDEFLATE");
		compare_results(&first, &zlib_res, size, "libdeflate vs zlib");
		zlib_ok = !zlib_res.ret;
		release_result(&zlib_res);
	}
#endif
	/* The streaming inflaters are zlib's: compare when it accepts too. */
	if (!first.ret && zlib_ok)
		check_other_inflaters(in, in_len, &first, size);
	release_result(&first);
	inflater_free(inf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pack_entry_header hdr;
	uint64_t entry_ofs = PACK_HEADER_SIZE;
	int algo = GP_HASH_SHA1;
	const unsigned char *entry = data;
	size_t avail = size;
	unsigned char *copy;
	int ret;

	if (size >= 8) {
		uint64_t word = get_be64(data);
		algo = (word >> 63) ? GP_HASH_SHA256 : GP_HASH_SHA1;
		entry_ofs = word & (UINT64_MAX >> 1);
		entry += 8;
		avail -= 8;
	}
	/* An exact-size heap copy, so ASan catches reads past the entry. */
	copy = xmalloc(avail ? avail : 1);
	memcpy(copy, entry, avail);

	memset(&hdr, 0xa5, sizeof(hdr));
	ret = pack_parse_entry_header(copy, avail, entry_ofs, algo, &hdr, &err);
	if (ret) {
		fuzz_check_error(ret, &err, GP_ECORRUPT, "pack_parse_entry_header");
		goto out;
	}
	if (err.msg)
		fuzz_fail("pack_parse_entry_header succeeded with a message: %s", err.msg);
	if (!hdr.hdr_len || hdr.hdr_len > avail)
		fuzz_fail("header length %zu of %zu bytes", hdr.hdr_len, avail);
	switch (hdr.type) {
	case OBJ_COMMIT:
	case OBJ_TREE:
	case OBJ_BLOB:
	case OBJ_TAG:
		break;
	case OBJ_OFS_DELTA:
		if (hdr.base_ofs < PACK_HEADER_SIZE || hdr.base_ofs >= entry_ofs)
			fuzz_fail("OFS_DELTA base %" PRIu64 " for an entry at %" PRIu64,
				  hdr.base_ofs, entry_ofs);
		break;
	case OBJ_REF_DELTA:
		if (hdr.base_oid.algo != algo ||
		    memcmp(hdr.base_oid.hash, copy + hdr.hdr_len - gp_hash_algos[algo].rawsz,
			   gp_hash_algos[algo].rawsz))
			fuzz_fail("REF_DELTA base name is not the bytes before the stream");
		break;
	default:
		fuzz_fail("pack_parse_entry_header accepted type %d", (int)hdr.type);
	}

	if (hdr.size < MAX_INFLATE) {
		fuzz_inflate(copy + hdr.hdr_len, avail - hdr.hdr_len, (size_t)hdr.size);
		/* The delta's own size header, as pack_object_info() reads it. */
		if (hdr.type == OBJ_OFS_DELTA || hdr.type == OBJ_REF_DELTA) {
			unsigned char head[20];
			size_t produced = 0, hdr_len;
			uint64_t base_size, result_size;
			if (!inflate_prefix(copy + hdr.hdr_len, avail - hdr.hdr_len,
					    head, sizeof(head), &produced, &err)) {
				ret = delta_sizes(head, produced, &base_size,
						  &result_size, &hdr_len, &err);
				if (ret)
					fuzz_check_error(ret, &err, GP_ECORRUPT, "delta_sizes");
				else if (hdr_len > produced)
					fuzz_fail("delta header of %zu bytes in %zu", hdr_len, produced);
			}
			gp_error_clear(&err);
		}
	}
out:
	free(copy);
	return 0;
}
