/*
 * test-delta.c: test-tool delta, the delta encoder and decoder of
 * delta.h on files, so that tests can round-trip deltas, hand them to
 * stock git, and assert their sizes.
 *
 *   test-tool delta create [--max=N] BASE TARGET OUT
 *	encode TARGET against BASE into OUT. With --max=N, a delta longer
 *	than N bytes is refused: "delta longer than N bytes" on stderr,
 *	exit 1, OUT not written.
 *   test-tool delta apply BASE DELTA OUT
 *	delta_apply() DELTA to BASE into OUT; "error: <why>" and exit 1
 *	when the delta does not apply.
 *   test-tool delta stats BASE TARGET
 *	encode and print "delta <bytes>", "copies <instructions> <bytes>",
 *	"inserts <instructions> <bytes>", "index <bytes held>", after
 *	checking that the delta applies back to TARGET.
 *   test-tool delta pack [--object-format=ALGO] BASE TARGET OUT.pack
 *	write a version 2 pack of two entries: BASE as a blob, then
 *	TARGET as a REF_DELTA against it (our delta); print TARGET's
 *	object name. For git index-pack to judge.
 *   test-tool delta threads BASE TARGET NR
 *	NR threads encode TARGET against one shared index, several times
 *	each; print "ok" when every delta is identical to a
 *	single-threaded one.
 *   test-tool delta random SEED LEN OUT
 *	LEN deterministic pseudo-random bytes (from SEED) into OUT.
 *   test-tool delta bench BASE TARGET [ROUNDS]
 *	timings, for people, not tests: indexing and encoding throughput
 *	in MB/s of BASE and TARGET respectively, best of ROUNDS (10).
 */
#include "../../delta.h"
#include "../../error.h"
#include "../../hash.h"
#include "../../object.h"
#include "../../strbuf.h"
#include "../../zstream.h"
#include "test-tool.h"
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

static int read_file(struct strbuf *sb, const char *path)
{
	if (strbuf_read_file(sb, path, 0) < 0) {
		fprintf(stderr, "error: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0 || write_in_full(fd, buf, len) < 0 || close(fd) < 0) {
		fprintf(stderr, "error: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Encode target against base; prints why and returns non-zero on failure. */
static int encode(const struct strbuf *base, const struct strbuf *target,
		  size_t max, unsigned char **delta, size_t *delta_len,
		  size_t *index_memory)
{
	struct delta_index *idx = NULL;
	int ret = delta_index_create(&idx, (const unsigned char *)base->buf, base->len);
	if (ret) {
		fprintf(stderr, "error: delta_index_create: %s\n", gp_strerror(ret));
		return ret;
	}
	if (index_memory)
		*index_memory = delta_index_memory(idx);
	ret = delta_create(idx, (const unsigned char *)target->buf, target->len,
			   max, delta, delta_len);
	if (ret == GP_ENOTFOUND)
		fprintf(stderr, "delta longer than %zu bytes\n", max);
	else if (ret)
		fprintf(stderr, "error: delta_create: %s\n", gp_strerror(ret));
	delta_index_free(idx);
	return ret;
}

/* delta_apply() into a malloc'd buffer; NULL (and a message) on failure. */
static unsigned char *apply(const struct strbuf *base, const unsigned char *delta,
			    size_t delta_len, size_t *result_len)
{
	struct gp_error err = GP_ERROR_INIT;
	uint64_t base_size, result_size;
	size_t hdr_len;
	unsigned char *result = NULL;

	if (delta_sizes(delta, delta_len, &base_size, &result_size, &hdr_len, &err))
		goto fail;
	if (result_size > SIZE_MAX - 1) {
		gp_error_set(&err, GP_ECORRUPT, "result of %" PRIu64 " bytes", result_size);
		goto fail;
	}
	result = xmalloc((size_t)result_size + 1);
	if (delta_apply((const unsigned char *)base->buf, base->len, delta, delta_len,
			result, (size_t)result_size, &err))
		goto fail;
	*result_len = (size_t)result_size;
	return result;
fail:
	fprintf(stderr, "error: %s\n", gp_error_msg(&err));
	gp_error_clear(&err);
	free(result);
	return NULL;
}

static int cmd_create(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, target = STRBUF_INIT;
	unsigned char *delta = NULL;
	size_t delta_len = 0, max = 0;
	const char *val;
	int ret = 1;

	if (argc == 5 && skip_prefix(argv[1], "--max=", &val)) {
		max = strtoul(val, NULL, 10);
		argc--;
		argv++;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: test-tool delta create [--max=N] BASE TARGET OUT\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&target, argv[2]) ||
	    encode(&base, &target, max, &delta, &delta_len, NULL) ||
	    write_file(argv[3], delta, delta_len))
		goto out;
	ret = 0;
out:
	free(delta);
	strbuf_release(&base);
	strbuf_release(&target);
	return ret;
}

static int cmd_apply(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, delta = STRBUF_INIT;
	unsigned char *result = NULL;
	size_t result_len = 0;
	int ret = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: test-tool delta apply BASE DELTA OUT\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&delta, argv[2]))
		goto out;
	result = apply(&base, (unsigned char *)delta.buf, delta.len, &result_len);
	if (!result || write_file(argv[3], result, result_len))
		goto out;
	ret = 0;
out:
	free(result);
	strbuf_release(&base);
	strbuf_release(&delta);
	return ret;
}

static int cmd_stats(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, target = STRBUF_INIT;
	unsigned char *delta = NULL, *result = NULL;
	size_t delta_len = 0, result_len = 0, index_memory = 0, pos;
	size_t nr_copies = 0, copied = 0, nr_inserts = 0, inserted = 0;
	uint64_t base_size, result_size;
	int ret = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: test-tool delta stats BASE TARGET\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&target, argv[2]) ||
	    encode(&base, &target, 0, &delta, &delta_len, &index_memory))
		goto out;
	result = apply(&base, delta, delta_len, &result_len);
	if (!result)
		goto out;
	if (result_len != target.len || memcmp(result, target.buf, target.len)) {
		fprintf(stderr, "error: the delta does not give back the target\n");
		goto out;
	}
	/* delta_apply() accepted it, so every instruction is whole. */
	if (delta_sizes(delta, delta_len, &base_size, &result_size, &pos, NULL))
		goto out;
	while (pos < delta_len) {
		unsigned char op = delta[pos++];
		if (op & 0x80) {
			size_t size = 0;
			pos += (size_t)__builtin_popcount(op & 0x0f);
			for (unsigned byte = 0; byte < 3; byte++)
				if (op & (0x10u << byte))
					size |= (size_t)delta[pos++] << (8 * byte);
			nr_copies++;
			copied += size ? size : 0x10000;
		} else {
			nr_inserts++;
			inserted += op;
			pos += op;
		}
	}
	printf("delta %zu\ncopies %zu %zu\ninserts %zu %zu\nindex %zu\n",
	       delta_len, nr_copies, copied, nr_inserts, inserted, index_memory);
	ret = 0;
out:
	free(result);
	free(delta);
	strbuf_release(&base);
	strbuf_release(&target);
	return ret;
}

/* A pack entry header: type and size (gitformat-pack, "object entry"). */
static void add_entry_header(struct strbuf *pack, enum object_type type, size_t size)
{
	unsigned char c = (unsigned char)(type << 4 | (size & 0x0f));
	size >>= 4;
	while (size) {
		strbuf_addch(pack, c | 0x80);
		c = size & 0x7f;
		size >>= 7;
	}
	strbuf_addch(pack, c);
}

static int cmd_pack(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, target = STRBUF_INIT, pack = STRBUF_INIT;
	unsigned char *delta = NULL, hdr[12], trailer[GP_MAX_RAWSZ];
	size_t delta_len = 0;
	struct object_id base_oid, target_oid;
	char hex[GP_MAX_HEXSZ + 1];
	int algo = GP_HASH_SHA1, ret = 1;
	const char *val;

	if (argc == 5 && skip_prefix(argv[1], "--object-format=", &val)) {
		algo = hash_algo_by_name(val);
		argc--;
		argv++;
	}
	if (argc != 4 || !algo) {
		fprintf(stderr, "usage: test-tool delta pack [--object-format=ALGO] BASE TARGET OUT.pack\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&target, argv[2]) ||
	    encode(&base, &target, 0, &delta, &delta_len, NULL))
		goto out;
	hash_object(algo, OBJ_BLOB, base.buf, base.len, &base_oid, NULL);
	hash_object(algo, OBJ_BLOB, target.buf, target.len, &target_oid, NULL);

	put_be32(hdr, 0x5041434b); /* "PACK" */
	put_be32(hdr + 4, 2);
	put_be32(hdr + 8, 2);
	strbuf_add(&pack, hdr, sizeof(hdr));
	add_entry_header(&pack, OBJ_BLOB, base.len);
	deflate_to_strbuf(base.buf, base.len, -1, &pack);
	add_entry_header(&pack, OBJ_REF_DELTA, delta_len);
	strbuf_add(&pack, base_oid.hash, gp_hash_algos[algo].rawsz);
	deflate_to_strbuf(delta, delta_len, -1, &pack);
	hash_buf_checksum(algo, pack.buf, pack.len, trailer);
	strbuf_add(&pack, trailer, gp_hash_algos[algo].rawsz);
	if (write_file(argv[3], pack.buf, pack.len))
		goto out;
	printf("%s\n", oid_to_hex_r(hex, &target_oid));
	ret = 0;
out:
	free(delta);
	strbuf_release(&base);
	strbuf_release(&target);
	strbuf_release(&pack);
	return ret;
}

struct encode_job {
	const struct delta_index *idx;
	const struct strbuf *target;
	const unsigned char *want;
	size_t want_len;
	int rounds;
	bool ok;
};

static void *encode_thread(void *arg)
{
	struct encode_job *job = arg;
	job->ok = true;
	for (int round = 0; round < job->rounds; round++) {
		unsigned char *delta = NULL;
		size_t delta_len = 0;
		/* Alternate with a limit the delta fits exactly. */
		size_t max = round % 2 ? job->want_len : 0;
		if (delta_create(job->idx, (const unsigned char *)job->target->buf,
				 job->target->len, max, &delta, &delta_len) ||
		    delta_len != job->want_len || memcmp(delta, job->want, delta_len))
			job->ok = false;
		free(delta);
	}
	return NULL;
}

static int cmd_threads(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, target = STRBUF_INIT;
	struct delta_index *idx = NULL;
	struct encode_job *jobs = NULL;
	pthread_t *threads = NULL;
	unsigned char *want = NULL;
	size_t want_len = 0;
	int nr, started = 0, ret = 1;

	if (argc != 4 || (nr = atoi(argv[3])) < 1 || nr > 256) {
		fprintf(stderr, "usage: test-tool delta threads BASE TARGET NR (1..256)\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&target, argv[2]) ||
	    encode(&base, &target, 0, &want, &want_len, NULL))
		goto out;
	if (delta_index_create(&idx, (const unsigned char *)base.buf, base.len))
		goto out;
	jobs = xcalloc((size_t)nr, sizeof(*jobs));
	threads = xcalloc((size_t)nr, sizeof(*threads));
	for (started = 0; started < nr; started++) {
		struct encode_job *job = &jobs[started];
		job->idx = idx;
		job->target = &target;
		job->want = want;
		job->want_len = want_len;
		job->rounds = 8;
		if (pthread_create(&threads[started], NULL, encode_thread, job)) {
			fprintf(stderr, "error: pthread_create failed\n");
			break;
		}
	}
	ret = started == nr ? 0 : 1;
	for (int i = 0; i < started; i++) {
		pthread_join(threads[i], NULL);
		if (!jobs[i].ok) {
			fprintf(stderr, "error: thread %d made a different delta\n", i);
			ret = 1;
		}
	}
	if (!ret)
		printf("ok\n");
out:
	delta_index_free(idx);
	free(jobs);
	free(threads);
	free(want);
	strbuf_release(&base);
	strbuf_release(&target);
	return ret;
}

static int cmd_random(int argc, const char **argv)
{
	unsigned char *buf;
	uint64_t state;
	size_t len;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: test-tool delta random SEED LEN OUT\n");
		return 129;
	}
	state = strtoull(argv[1], NULL, 10);
	len = strtoul(argv[2], NULL, 10);
	buf = xmalloc(len ? len : 1);
	for (size_t pos = 0; pos < len; pos++) {
		/* splitmix64, one byte of each output */
		uint64_t z = (state += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		buf[pos] = (unsigned char)((z ^ (z >> 31)) >> 56);
	}
	ret = write_file(argv[3], buf, len) ? 1 : 0;
	free(buf);
	return ret;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_bench(int argc, const char **argv)
{
	struct strbuf base = STRBUF_INIT, target = STRBUF_INIT;
	double best_index = 1e9, best_encode = 1e9;
	size_t delta_len = 0, memory = 0;
	int rounds = argc > 3 ? atoi(argv[3]) : 10, ret = 1;

	if (argc < 3 || argc > 4 || rounds < 1) {
		fprintf(stderr, "usage: test-tool delta bench BASE TARGET [ROUNDS]\n");
		return 129;
	}
	if (read_file(&base, argv[1]) || read_file(&target, argv[2]))
		goto out;
	for (int round = 0; round < rounds; round++) {
		struct delta_index *idx = NULL;
		unsigned char *delta = NULL;
		double t0 = now(), t1, t2;
		if (delta_index_create(&idx, (const unsigned char *)base.buf, base.len))
			goto out;
		t1 = now();
		if (delta_create(idx, (const unsigned char *)target.buf, target.len, 0,
				 &delta, &delta_len)) {
			delta_index_free(idx);
			goto out;
		}
		t2 = now();
		memory = delta_index_memory(idx);
		best_index = MIN(best_index, t1 - t0);
		best_encode = MIN(best_encode, t2 - t1);
		free(delta);
		delta_index_free(idx);
	}
	printf("index %zu bytes in %.3f ms: %.0f MB/s (holds %zu bytes)\n",
	       base.len, best_index * 1e3, (double)base.len / best_index / 1e6, memory);
	printf("encode %zu bytes in %.3f ms: %.0f MB/s (delta %zu bytes)\n",
	       target.len, best_encode * 1e3, (double)target.len / best_encode / 1e6,
	       delta_len);
	ret = 0;
out:
	strbuf_release(&base);
	strbuf_release(&target);
	return ret;
}

int cmd__delta(int argc, const char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, const char **argv);
	} subcmds[] = {
		{ "create", cmd_create },
		{ "apply", cmd_apply },
		{ "stats", cmd_stats },
		{ "pack", cmd_pack },
		{ "threads", cmd_threads },
		{ "random", cmd_random },
		{ "bench", cmd_bench },
	};

	if (argc >= 2)
		for (size_t i = 0; i < ARRAY_SIZE(subcmds); i++)
			if (!strcmp(argv[1], subcmds[i].name))
				return subcmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "usage: test-tool delta (create | apply | stats | pack | threads | random | bench) ...\n");
	return 129;
}
