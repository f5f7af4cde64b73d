#!/bin/sh

test_description='the body of an HTTP request, de-framed and decoded (server/body.h)

test-tool http body on requests with a Content-Length, chunked, or no body,
gzip or not: the decoded body, the bytes the body used on the wire (what
follows is a pipelined request'"'"'s), and the status each refusal answers.
Every request is also fed one and three bytes at a time, which must give
the same answer and the same body. Last, the bodies stock git'"'"'s HTTP
client sends (gzip with a length, and chunked) are captured from a fetch
and decoded.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# request NAME FORMAT [ARG...]: printf FORMAT ARGS into the file NAME (a
# literal % is written %%).
request () {
	gp_req_name_=$1
	shift
	printf "$@" >"$gp_req_name_"
}

# body NAME [OPTION...]: "test-tool http body" of the file NAME into
# NAME.out, the decoded body into NAME.body; fed 1 and 3 bytes at a time,
# the same answer and body.
body () {
	gp_body_name_=$1
	shift
	test-tool http body --out="$gp_body_name_.body" "$@" \
		<"$gp_body_name_" >"$gp_body_name_.out" &&
	for n in 1 3
	do
		test-tool http body --chunk=$n --out="$gp_body_name_.body$n" "$@" \
			<"$gp_body_name_" >"$gp_body_name_.out$n" &&
		test_cmp "$gp_body_name_.out" "$gp_body_name_.out$n" &&
		test_cmp_bin "$gp_body_name_.body" "$gp_body_name_.body$n" || return 1
	done
}

# chunked FILE SIZE: FILE framed as Transfer-Encoding: chunked, in
# chunks of SIZE bytes, with the last chunk and no trailer.
chunked () {
	rm -rf parts &&
	mkdir parts &&
	if test -s "$1"
	then
		split -b "$2" "$1" parts/ &&
		for p in parts/*
		do
			printf '%x\r\n' $(wc -c <"$p") &&
			cat "$p" &&
			printf '\r\n' || return 1
		done
	fi &&
	printf '0\r\n\r\n'
}

# random_bytes N: N bytes that do not compress, the same each run.
random_bytes () {
	awk -v n="$1" "BEGIN { srand(1); for (i = 0; i < n; i++) printf \"%c\", int(rand() * 256) }"
}

post='POST /r.git/git-upload-pack HTTP/1.1\r\nHost: h\r\n'

test_expect_success 'Content-Length: that many bytes, the rest is the next request' '
	request r "${post}Content-Length: 11\r\n\r\nhello worldGET /metrics HTTP/1.1\r\n\r\n" &&
	body r &&
	cat >expect <<-\END &&
	done
	used 11
	rest 25
	length 11
	END
	test_cmp expect r.out &&
	printf "hello world" >expect &&
	test_cmp_bin expect r.body
'

test_expect_success 'Content-Length: a body that has not all arrived is "more"' '
	request r "${post}Content-Length: 12\r\n\r\nhello world" &&
	body r &&
	printf "more\nused 11\nrest 0\nlength 11\n" >expect &&
	test_cmp expect r.out
'

test_expect_success 'no body: done at once, whatever follows is the next request' '
	request r "GET /r.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\n" &&
	body r &&
	printf "done\nused 0\nrest 16\nlength 0\n" >expect &&
	test_cmp expect r.out &&
	request r "${post}Content-Length: 0\r\nContent-Encoding: gzip\r\n\r\nX" &&
	body r &&
	printf "done\nused 0\nrest 1\nlength 0\n" >expect &&
	test_cmp expect r.out
'

test_expect_success 'chunked, with extensions, trailers and a pipelined request' '
	request r "${post}Transfer-Encoding: chunked\r\n\r\n5;name=value;x\r\nhello\r\n1 ; ext=\"quoted;\"\r\n \r\nA\r\nworld12345\r\n0;last\r\nChecksum: abc\r\nX-Two:\r\n\r\nGET / HTTP/1.1\r\n" &&
	body r &&
	cat >expect <<-\END &&
	done
	used 93
	rest 16
	length 16
	END
	test_cmp expect r.out &&
	printf "hello world12345" >expect &&
	test_cmp_bin expect r.body
'

test_expect_success 'chunked: hex sizes in either case, leading zeros, bare LF line ends' '
	request r "${post}Transfer-Encoding: chunked\r\n\r\n00b\nhello world\n000\n\n" &&
	body r &&
	printf "done\nused 21\nrest 0\nlength 11\n" >expect &&
	test_cmp expect r.out &&
	random_bytes 300 >data &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n12C\r\n" && cat data && printf "\r\n0\r\n\r\n"; } >r &&
	body r &&
	test_cmp_bin data r.body &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n12c\r\n" && cat data && printf "\r\n0\r\n\r\n"; } >r &&
	body r &&
	test_cmp_bin data r.body
'

test_expect_success 'chunked: the empty body, and a body that stops after a chunk is "more"' '
	request r "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n0\r\n\r\n" &&
	body r &&
	printf "done\nused 5\nrest 0\nlength 0\n" >expect &&
	test_cmp expect r.out &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n" &&
	body r &&
	printf "more\nused 8\nrest 0\nlength 3\n" >expect &&
	test_cmp expect r.out
'

test_expect_success 'setup: data to compress' '
	random_bytes 100000 >random &&
	test_seq 1 20000 >text &&
	cat random text random >mixed &&
	: >empty
'

for data in random text mixed empty
do
	test_expect_success "gzip with a Content-Length: $data" '
		gzip -c <$data >$data.gz &&
		{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $(wc -c <$data.gz) &&
		  cat $data.gz && printf "POST /next"; } >r &&
		body r --max=1000000 &&
		test_cmp_bin $data r.body &&
		printf "done\nused %d\nrest 10\nlength %d\n" $(wc -c <$data.gz) $(wc -c <$data) >expect &&
		test_cmp expect r.out
	'

	test_expect_success "gzip and chunked: $data" '
		chunked $data.gz 4000 >framed &&
		{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: x-gzip\r\n\r\n" &&
		  cat framed && printf "POST /next"; } >r &&
		body r --max=1000000 &&
		test_cmp_bin $data r.body &&
		printf "done\nused %d\nrest 10\nlength %d\n" $(wc -c <framed) $(wc -c <$data) >expect &&
		test_cmp expect r.out
	'
done

test_expect_success 'chunked without gzip, in chunks of 1 and of 65536 bytes' '
	head -c 3000 text >short &&
	chunked short 1 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n" && cat framed; } >r &&
	body r &&
	test_cmp_bin short r.body &&
	grep "^done$" r.out &&
	chunked mixed 65536 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n" && cat framed; } >r &&
	body r &&
	test_cmp_bin mixed r.body
'

test_expect_success 'the bound: exactly max_decoded bytes pass, one more is 413' '
	request r "${post}Content-Length: 11\r\n\r\nhello world" &&
	body r --max=11 &&
	grep "^done$" r.out &&
	body r --max=10 &&
	printf "refused 413 Content-Length over the bound\nlength 0\n" >expect &&
	test_cmp expect r.out &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n" &&
	body r --max=11 &&
	grep "^done$" r.out &&
	body r --max=10 &&
	printf "refused 413 a chunk over the bound\nlength 6\n" >expect &&
	test_cmp expect r.out &&
	gzip -c <text >text.gz &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $(wc -c <text.gz) &&
	  cat text.gz; } >r &&
	body r --max=$(wc -c <text) &&
	grep "^done$" r.out &&
	body r --max=$(($(wc -c <text) - 1)) &&
	grep "^refused 413 the decoded body is over the bound$" r.out
'

test_expect_success 'a Content-Length over the bound is refused before its body arrives' '
	request r "${post}Content-Length: 1000001\r\n\r\n" &&
	body r --max=1000000 &&
	printf "refused 413 Content-Length over the bound\nlength 0\n" >expect &&
	test_cmp expect r.out &&
	request r "${post}Content-Length: 1000000\r\n\r\n" &&
	body r --max=1000000 &&
	grep "^more$" r.out &&
	request r "${post}Content-Length: 1000\r\nContent-Encoding: gzip\r\n\r\n" &&
	body r --max=100 --max-wire=999 &&
	printf "refused 413 Content-Length over the wire bound\nlength 0\n" >expect &&
	test_cmp expect r.out
'

test_expect_success 'a gzip bomb stops one byte past the bound' '
	head -c 10000000 /dev/zero | gzip -c >bomb.gz &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $(wc -c <bomb.gz) &&
	  cat bomb.gz; } >r &&
	body r --max=100000 &&
	printf "refused 413 the decoded body is over the bound\nlength 100001\n" >expect &&
	test_cmp expect r.out &&
	chunked bomb.gz 1000 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" && cat framed; } >r &&
	body r --max=100000 &&
	test_cmp expect r.out
'

test_expect_success 'the wire bound: bytes that inflate to little still count' '
	gzip -c <text >text.gz &&
	wire=$(wc -c <text.gz) &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $wire && cat text.gz; } >r &&
	body r --max-wire=$wire &&
	grep "^done$" r.out &&
	body r --max-wire=$(($wire - 1)) &&
	grep "^refused 413 Content-Length over the wire bound$" r.out &&
	chunked text.gz 100000 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" && cat framed; } >r &&
	body r --max-wire=$(wc -c <framed) &&
	grep "^done$" r.out &&
	body r --max-wire=$(($(wc -c <framed) - 1)) &&
	grep "^refused 413 the body is over the wire bound$" r.out &&
	body r --max-wire=$wire &&
	grep "^refused 413 a chunk over the wire bound$" r.out
'

test_expect_success 'the default wire bound is over max_decoded, for gzip of random data' '
	gzip -c <random >random.gz &&
	test $(wc -c <random.gz) -gt $(wc -c <random) &&
	chunked random.gz 1000 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" && cat framed; } >r &&
	body r --max=$(wc -c <random) &&
	grep "^done$" r.out &&
	test_cmp_bin random r.body
'

test_expect_success 'gzip: truncated, bad, or followed by more data is 400' '
	gzip -c <text >text.gz &&
	size=$(wc -c <text.gz) &&
	head -c $(($size - 1)) text.gz >cut.gz &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $(($size - 1)) && cat cut.gz; } >r &&
	body r &&
	grep "^refused 400 the gzip stream is truncated$" r.out &&
	chunked cut.gz 1000 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" && cat framed; } >r &&
	body r &&
	grep "^refused 400 the gzip stream is truncated$" r.out &&
	{ cat text.gz && printf x; } >long.gz &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $(($size + 1)) && cat long.gz; } >r &&
	body r &&
	grep "^refused 400 data after the end of the gzip stream$" r.out &&
	cat text.gz text.gz >two.gz &&
	chunked two.gz 1000 >framed &&
	{ printf "${post}Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n" && cat framed; } >r &&
	body r &&
	grep "^refused 400 data after the end of the gzip stream$" r.out &&
	cp text.gz bad.gz &&
	corrupt_byte bad.gz 0 0x1e &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $size && cat bad.gz; } >r &&
	body r &&
	grep "^refused 400 bad gzip data$" r.out &&
	cp text.gz bad.gz &&
	corrupt_byte bad.gz -5 &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" $size && cat bad.gz; } >r &&
	body r &&
	grep "^refused 400 bad gzip data$" r.out &&
	printf "hello" >plain &&
	{ printf "${post}Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\n" && cat plain; } >r &&
	body r &&
	grep "^refused 400 bad gzip data$" r.out
'

# Chunk framing refusals: the bytes after a chunked POST head, the status
# and reason.
while IFS='|' read -r name bytes want
do
	test_expect_success "chunked: $name" '
		request r "${post}Transfer-Encoding: chunked\r\n\r\n$bytes" &&
		body r &&
		echo "refused $want" >expect &&
		head -n 1 r.out >actual &&
		test_cmp expect actual
	'
done <<\END
a size that is not hex|g\r\nabc\r\n0\r\n\r\n|400 chunk size is not hex
an empty size|\r\n|400 chunk size is not hex
a negative size|-1\r\n|400 chunk size is not hex
a size with 17 digits|00000000000000001\r\nx\r\n0\r\n\r\n|400 chunk size has too many digits
a size with 16 digits over the bound|ffffffffffffffff\r\n|413 a chunk over the bound
a size with junk after it|5x\r\nhello\r\n0\r\n\r\n|400 bad chunk size line
whitespace then no extension|5 \r\nhello\r\n0\r\n\r\n|400 bad chunk size line
CR without LF after a size|5\rhello\r\n0\r\n\r\n|400 CR without LF after a chunk size
data not followed by a line end|5\r\nhelloX\r\n0\r\n\r\n|400 chunk data not followed by a line end
data followed by CR without LF|5\r\nhello\rX0\r\n\r\n|400 CR without LF after chunk data
a control byte in an extension|5;a=\001\r\nhello\r\n0\r\n\r\n|400 bad chunk extension
a trailer without a colon|0\r\nno-colon\r\n\r\n|400 bad trailer field name
a folded trailer|0\r\nA: b\r\n c\r\n\r\n|400 bad trailer field
a control byte in a trailer|0\r\nA: \001\r\n\r\n|400 bad trailer field value
CR without LF in a trailer|0\r\nA: b\rc\r\n\r\n|400 CR without LF in the trailer section
CR without LF at the end|0\r\n\rX|400 CR without LF at the end of the body
END

test_expect_success 'chunked: an extension of 1024 bytes is skipped, one of 1025 refused' '
	ext=$(printf "%01024d" 0) &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n1;%s\r\nx\r\n0\r\n\r\n" "$ext" &&
	body r &&
	grep "^done$" r.out &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n1;%s0\r\nx\r\n0\r\n\r\n" "$ext" &&
	body r &&
	grep "^refused 400 chunk extension over the bound$" r.out
'

test_expect_success 'chunked: 32 trailer fields are skipped, 33 refused; so are 8 KiB of them' '
	test_seq 1 32 | sed "s/.*/T&: v\r/" >trailers &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n0\r\n" && cat trailers && printf "\r\n"; } >r &&
	body r &&
	grep "^done$" r.out &&
	echo "T: v" >>trailers &&
	{ printf "${post}Transfer-Encoding: chunked\r\n\r\n0\r\n" && cat trailers && printf "\r\n"; } >r &&
	body r &&
	grep "^refused 431 too many trailer fields$" r.out &&
	value=$(printf "%08186d" 0) &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n0\r\nT:%s\r\n\r\n" "$value" &&
	body r &&
	grep "^done$" r.out &&
	request r "${post}Transfer-Encoding: chunked\r\n\r\n0\r\nT:%s0\r\n\r\n" "$value" &&
	body r &&
	grep "^refused 431 the trailer section is over the bound$" r.out
'

test_expect_success 'the answer is kept: bytes after a refusal are not read' '
	request r "${post}Transfer-Encoding: chunked\r\n\r\nzzzz" &&
	test-tool http body --chunk=1 <r >r.out &&
	printf "refused 400 chunk size is not hex\nlength 0\n" >expect &&
	test_cmp expect r.out
'

# Stock git as the client: a stand-in server answers a v0 advertisement of
# made-up branches, so that git fetch wants them all, and keeps the raw
# POST git sends. Over 1 KiB of wants git gzips with a Content-Length;
# over http.postBuffer it sends them chunked (after a probe POST).
test_lazy_prereq CAPTURE '
	python3 -c "import hashlib, socket" &&
	test -x "$(git --exec-path)/git-remote-http"
'

test_expect_success CAPTURE 'setup: the capturing server' '
	cat >capture.py <<-\END
	# capture.py ALGO REFS: a stand-in smart HTTP server for one fetch. It
	# answers GET info/refs with a protocol v0 advertisement of REFS
	# branches (made-up object names of hash ALGO, written sorted to
	# "oids"), saves the raw bytes of the first POST of the fetch (head
	# and body, as they came) to "post", answers it with 500 and exits. A
	# POST of only a flush packet (the probe git sends before a chunked
	# request) gets 200. It writes its port to "port" once listening.
	import hashlib, socket, sys

	def pkt(s):
	    return b"%04x" % (len(s) + 4) + s

	algo, refs = sys.argv[1], int(sys.argv[2])
	oids = [hashlib.new(algo, b"%d" % i).hexdigest().encode() for i in range(refs)]
	with open("oids", "wb") as f:
	    f.write(b"".join(o + b"\n" for o in sorted(oids)))
	caps = b"multi_ack_detailed side-band-64k ofs-delta agent=capture"
	if algo == "sha256":
	    caps += b" object-format=sha256"
	adv = pkt(b"# service=git-upload-pack\n") + b"0000"
	adv += pkt(oids[0] + b" HEAD\0" + caps + b"\n")
	for i, oid in enumerate(oids):
	    adv += pkt(oid + b" refs/heads/b%d\n" % i)
	adv += b"0000"

	srv = socket.socket()
	srv.bind(("127.0.0.1", 0))
	srv.listen(4)
	srv.settimeout(60)
	with open("port.tmp", "w") as f:
	    f.write("%d\n" % srv.getsockname()[1])
	import os
	os.rename("port.tmp", "port")

	def answer(conn, status, ctype, body):
	    conn.sendall(b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
	                 b"Connection: close\r\n\r\n" % (status, ctype, len(body)) + body)

	while True:
	    conn, _ = srv.accept()
	    conn.settimeout(60)
	    raw = b""
	    while b"\r\n\r\n" not in raw:
	        got = conn.recv(65536)
	        if not got:
	            break
	        raw += got
	    head = raw.split(b"\r\n\r\n", 1)[0].lower()
	    if head.startswith(b"get "):
	        answer(conn, b"200 OK", b"application/x-git-upload-pack-advertisement", adv)
	        conn.close()
	        continue
	    if b"expect: 100-continue" in head:
	        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
	    length = None
	    for line in head.split(b"\r\n"):
	        if line.startswith(b"content-length:"):
	            length = int(line.split(b":", 1)[1])
	    start = len(head) + 4
	    while True:
	        if length is not None and len(raw) >= start + length:
	            break
	        if length is None and raw.endswith(b"\r\n0\r\n\r\n"):
	            break
	        got = conn.recv(65536)
	        if not got:
	            break
	        raw += got
	    if raw[start:] == b"0000":
	        answer(conn, b"200 OK", b"application/x-git-upload-pack-result", b"")
	        conn.close()
	        continue
	    with open("post", "wb") as f:
	        f.write(raw)
	    answer(conn, b"500 Internal Server Error", b"text/plain", b"captured\n")
	    conn.close()
	    break
	END
'

# capture ALGO REFS [GIT-CONFIG...]: git fetch from capture.py with REFS
# branches, into a fresh repository; the POST is left in "post".
capture () {
	rm -rf client post port oids &&
	git init -q --object-format=$1 client &&
	{ python3 capture.py $1 $2 & } &&
	gp_capture_pid_=$! &&
	test_when_finished "kill $gp_capture_pid_ 2>/dev/null || :" &&
	for i in $(test_seq 1 300)
	do
		test -s port && break
		sleep 0.1
	done &&
	port=$(cat port) &&
	shift 2 &&
	! env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY \
		timeout 60 git -C client -c protocol.version=0 "$@" \
		fetch "http://127.0.0.1:$port/r.git" "refs/heads/*:refs/remotes/o/*" &&
	wait $gp_capture_pid_ &&
	test -s post
}

# check_wants ALGO: the body decoded from "post" is the want of every
# advertised object, a flush and "done".
check_wants () {
	test-tool pkt-line unpack <post.body >lines &&
	sed -n "s/^want \([0-9a-f]*\).*/\1/p" lines | sort >wants &&
	test_cmp oids wants &&
	head -n 1 lines | grep "^want [0-9a-f]* .*multi_ack_detailed" &&
	tail -n 2 lines >actual &&
	printf "0000\ndone\n" >expect &&
	test_cmp expect actual
}

for algo in $test_hash_algos
do
	test_expect_success CAPTURE "stock git's gzip body with a Content-Length ($algo)" '
		capture $algo 100 &&
		grep -a "^Content-Encoding: gzip" post &&
		grep -a "^Content-Length: " post &&
		body post &&
		grep "^done$" post.out &&
		grep "^rest 0$" post.out &&
		check_wants $algo
	'

	test_expect_success CAPTURE "stock git's chunked body ($algo)" '
		capture $algo 2000 -c http.postBuffer=65536 &&
		grep -a "^Transfer-Encoding: chunked" post &&
		body post --max=10000000 &&
		grep "^done$" post.out &&
		grep "^rest 0$" post.out &&
		check_wants $algo
	'
done

test_done
