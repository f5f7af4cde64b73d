/*
 * test-pkt-line.c: test-tool pkt-line, for pkt-line.h.
 *
 *   test-tool pkt-line pack [--tee=<file>] [<line>...]
 *	Write each argument (or each line of stdin, LF kept) as a
 *	pkt-line on stdout; "0000", "0001" and "0002" (with or without
 *	LF) become flush, delim and response-end. --tee also writes the
 *	same bytes to <file>.
 *   test-tool pkt-line pack-raw-stdin
 *	All of stdin as one pkt-line.
 *   test-tool pkt-line err <message>
 *	An "ERR <message>" pkt-line.
 *   test-tool pkt-line unpack [--no-chomp] [--mem] [--lengths]
 *		[--eof-is-error] [--no-empty] [--max-bytes=<n>] [--max-packets=<n>]
 *	Decode pkt-lines from stdin: a data line's payload and LF, or
 *	"0000", "0001", "0002". --mem reads stdin whole and decodes it from
 *	memory; --lengths prints each data line's payload length instead
 *	of the payload. On a protocol error prints "fatal: <message>" to
 *	stderr and exits 128.
 *   test-tool pkt-line send-sideband [--max=<n>] [--chunk=<n>] <band>
 *	Frame stdin on <band> in side-band packets of at most <n> bytes
 *	(default 65520), written through a band sink <chunk> bytes at a
 *	time (default: all at once).
 *   test-tool pkt-line keepalive
 *	The protocol v2 keepalive packet.
 *   test-tool pkt-line send-split-sideband
 *	Progress "Foo.\n" and "Bar.\n", progress "Hello,", a data line
 *	"\1primary: regular output\n", progress " world!\n", a
 *	response-end and a flush.
 *   test-tool pkt-line receive-sideband [--chomp] [--sizes]
 *	Demultiplex stdin until a flush or the end: band 1 to stdout,
 *	band 2 to stderr, band 3 to stderr as "remote error: <msg>" and
 *	exit 1. --sizes prints "<band> <length>" per packet instead.
 */
#include "../../pkt-line.h"
#include "../../error.h"
#include "../../strbuf.h"
#include "test-tool.h"
#include <fcntl.h>

static int fail(struct gp_error *err)
{
	fprintf(stderr, "fatal: %s\n", gp_error_msg(err));
	gp_error_clear(err);
	return 128;
}

static int pack_line(struct pkt_sink *out, const char *line, size_t len,
		     struct gp_error *err)
{
	size_t cmp_len = len && line[len - 1] == '\n' ? len - 1 : len;

	if (cmp_len == 4 && !memcmp(line, "0000", 4))
		return pkt_flush(out, err);
	if (cmp_len == 4 && !memcmp(line, "0001", 4))
		return pkt_delim(out, err);
	if (cmp_len == 4 && !memcmp(line, "0002", 4))
		return pkt_response_end(out, err);
	return pkt_write(out, line, len, err);
}

static int pack(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf in = STRBUF_INIT;
	struct pkt_sink pair[2], out = pkt_sink_fd(1);
	int tee_fd = -1, ret = 0;
	const char *tee;

	if (argc > 1 && skip_prefix(argv[1], "--tee=", &tee)) {
		tee_fd = open(tee, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (tee_fd < 0) {
			perror(tee);
			return 1;
		}
		pair[0] = pkt_sink_fd(1);
		pair[1] = pkt_sink_fd(tee_fd);
		out = pkt_sink_tee(pair);
		argc--;
		argv++;
	}
	if (argc > 1) {
		for (int arg_pos = 1; !ret && arg_pos < argc; arg_pos++)
			ret = pack_line(&out, argv[arg_pos], strlen(argv[arg_pos]), &err);
	} else if (strbuf_read_fd(&in, 0, 0) < 0) {
		perror("stdin");
		ret = -1;
	} else {
		size_t pos = 0;
		while (!ret && pos < in.len) {
			const char *lf = memchr(in.buf + pos, '\n', in.len - pos);
			size_t len = lf ? (size_t)(lf - in.buf) + 1 - pos : in.len - pos;
			ret = pack_line(&out, in.buf + pos, len, &err);
			pos += len;
		}
	}
	strbuf_release(&in);
	if (tee_fd >= 0)
		close(tee_fd);
	if (ret < 0)
		return err.code ? fail(&err) : 1;
	return 0;
}

static int pack_raw_stdin(void)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf in = STRBUF_INIT;
	struct pkt_sink out = pkt_sink_fd(1);
	int ret;

	if (strbuf_read_fd(&in, 0, 0) < 0) {
		perror("stdin");
		return 1;
	}
	ret = pkt_write(&out, in.buf, in.len, &err);
	strbuf_release(&in);
	return ret < 0 ? fail(&err) : 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || !*s || *end ? -1 : 0;
}

static int unpack(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf in = STRBUF_INIT;
	struct pkt_reader *r = xmalloc(sizeof(*r));
	unsigned flags = PKT_READ_CHOMP_LF;
	uint64_t max_bytes = 0, max_packets = 0;
	bool mem = false, lengths = false;
	int ret = 0;

	for (int arg_pos = 1; arg_pos < argc; arg_pos++) {
		const char *arg = argv[arg_pos], *v;
		if (!strcmp(arg, "--no-chomp"))
			flags &= ~(unsigned)PKT_READ_CHOMP_LF;
		else if (!strcmp(arg, "--mem"))
			mem = true;
		else if (!strcmp(arg, "--lengths"))
			lengths = true;
		else if (!strcmp(arg, "--eof-is-error"))
			flags |= PKT_READ_EOF_IS_ERROR;
		else if (!strcmp(arg, "--no-empty"))
			flags |= PKT_READ_NO_EMPTY;
		else if (skip_prefix(arg, "--max-bytes=", &v) && !parse_u64(v, &max_bytes))
			;
		else if (skip_prefix(arg, "--max-packets=", &v) && !parse_u64(v, &max_packets))
			;
		else {
			fprintf(stderr, "test-tool pkt-line unpack: bad option '%s'\n", arg);
			free(r);
			return 129;
		}
	}
	if (mem) {
		if (strbuf_read_fd(&in, 0, 0) < 0) {
			perror("stdin");
			free(r);
			return 1;
		}
		pkt_reader_init_mem(r, in.buf, in.len, flags);
	} else {
		pkt_reader_init_fd(r, 0, flags);
	}
	r->max_bytes = max_bytes;
	r->max_packets = max_packets;

	while ((ret = pkt_read(r, &err)) > 0) {
		switch (ret) {
		case PKT_DATA:
			if (lengths) {
				printf("%zu\n", r->len);
			} else {
				fwrite(r->line, 1, r->len, stdout);
				putchar('\n');
			}
			break;
		case PKT_FLUSH:
			puts("0000");
			break;
		case PKT_DELIM:
			puts("0001");
			break;
		case PKT_RESPONSE_END:
			puts("0002");
			break;
		}
	}
	fflush(stdout);
	strbuf_release(&in);
	free(r);
	return ret < 0 ? fail(&err) : 0;
}

static int send_sideband(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf in = STRBUF_INIT;
	struct pkt_sink out = pkt_sink_fd(1);
	struct pkt_band_sink bs;
	uint64_t max = SIDEBAND_64K_MAX, chunk = 0, band;
	size_t pos = 0;
	int ret, arg_pos;

	for (arg_pos = 1; arg_pos < argc - 1; arg_pos++) {
		const char *v;
		if (skip_prefix(argv[arg_pos], "--max=", &v) && !parse_u64(v, &max))
			continue;
		if (skip_prefix(argv[arg_pos], "--chunk=", &v) && !parse_u64(v, &chunk))
			continue;
		break;
	}
	if (arg_pos != argc - 1 || parse_u64(argv[arg_pos], &band) || band > 255) {
		fprintf(stderr, "usage: test-tool pkt-line send-sideband [--max=<n>] [--chunk=<n>] <band>\n");
		return 129;
	}
	if (strbuf_read_fd(&in, 0, 0) < 0) {
		perror("stdin");
		return 1;
	}
	ret = pkt_band_sink_init(&bs, &out, (size_t)max, (int)band, &err);
	while (!ret && pos < in.len) {
		size_t len = chunk ? MIN(chunk, in.len - pos) : in.len - pos;
		ret = bs.sink.write(&bs.sink, in.buf + pos, len, &err);
		pos += len;
	}
	strbuf_release(&in);
	return ret < 0 ? fail(&err) : 0;
}

static int send_split_sideband(void)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_sink out = pkt_sink_fd(1);
	static const char primary[] = "\001primary: regular output\n";
	int ret = 0;

	if (!ret)
		ret = pkt_write_band(&out, SIDEBAND_64K_MAX, PKT_BAND_PROGRESS, "Foo.\n", 5, &err);
	if (!ret)
		ret = pkt_write_band(&out, SIDEBAND_64K_MAX, PKT_BAND_PROGRESS, "Bar.\n", 5, &err);
	if (!ret)
		ret = pkt_write_band(&out, SIDEBAND_64K_MAX, PKT_BAND_PROGRESS, "Hello,", 6, &err);
	if (!ret)
		ret = pkt_write(&out, primary, sizeof(primary) - 1, &err);
	if (!ret)
		ret = pkt_write_band(&out, SIDEBAND_64K_MAX, PKT_BAND_PROGRESS, " world!\n", 8, &err);
	if (!ret)
		ret = pkt_response_end(&out, &err);
	if (!ret)
		ret = pkt_flush(&out, &err);
	return ret < 0 ? fail(&err) : 0;
}

static int receive_sideband(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_reader *r = xmalloc(sizeof(*r));
	bool sizes = false;
	unsigned flags = 0;
	int ret, band, status = 0;

	for (int arg_pos = 1; arg_pos < argc; arg_pos++) {
		if (!strcmp(argv[arg_pos], "--chomp"))
			flags |= PKT_READ_CHOMP_LF;
		else if (!strcmp(argv[arg_pos], "--sizes"))
			sizes = true;
		else {
			fprintf(stderr, "test-tool pkt-line receive-sideband: bad option '%s'\n",
				argv[arg_pos]);
			free(r);
			return 129;
		}
	}
	pkt_reader_init_fd(r, 0, flags);
	while ((ret = pkt_read_band(r, &band, &err)) > 0 && ret != PKT_FLUSH) {
		if (ret != PKT_DATA)
			continue;
		if (sizes) {
			printf("%d %zu\n", band, r->len);
		} else if (band == PKT_BAND_DATA) {
			fwrite(r->line, 1, r->len, stdout);
		} else if (band == PKT_BAND_PROGRESS) {
			fflush(stdout);
			fwrite(r->line, 1, r->len, stderr);
		} else {
			fprintf(stderr, "remote error: %.*s\n", (int)r->len, r->line);
			status = 1;
			break;
		}
	}
	fflush(stdout);
	free(r);
	return ret < 0 ? fail(&err) : status;
}

int cmd__pkt_line(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct pkt_sink out = pkt_sink_fd(1);

	if (argc < 2) {
		fprintf(stderr, "usage: test-tool pkt-line <mode> [<args>]\n");
		return 129;
	}
	argc--;
	argv++;
	if (!strcmp(argv[0], "pack"))
		return pack(argc, argv);
	if (!strcmp(argv[0], "pack-raw-stdin"))
		return pack_raw_stdin();
	if (!strcmp(argv[0], "err") && argc == 2)
		return pkt_write_error(&out, &err, "%s", argv[1]) < 0 ? fail(&err) : 0;
	if (!strcmp(argv[0], "unpack"))
		return unpack(argc, argv);
	if (!strcmp(argv[0], "send-sideband"))
		return send_sideband(argc, argv);
	if (!strcmp(argv[0], "keepalive"))
		return pkt_write_keepalive(&out, &err) < 0 ? fail(&err) : 0;
	if (!strcmp(argv[0], "send-split-sideband"))
		return send_split_sideband();
	if (!strcmp(argv[0], "receive-sideband"))
		return receive_sideband(argc, argv);
	fprintf(stderr, "test-tool pkt-line: unknown mode '%s'\n", argv[0]);
	return 129;
}
