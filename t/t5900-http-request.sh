#!/bin/sh

test_description='the head of an HTTP request, and its route (server/http.h)

test-tool http parse on requests as Git'"'"'s smart HTTP clients send them
and on malformed ones: the fields, the route (repository and service), the
status each refusal answers, and the bounds. Every request is also fed one
byte at a time, which must give the same answer.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# parse NAME: "test-tool http parse" of the file NAME into NAME.out, the
# same answer when the bytes come one at a time.
parse () {
	test-tool http parse <"$1" >"$1.out" &&
	test-tool http parse --chunk=1 <"$1" >"$1.chunked" &&
	test_cmp "$1.out" "$1.chunked"
}

# request NAME FORMAT [ARG...]: printf FORMAT ARGS into the file NAME (a
# literal % is written %%).
request () {
	gp_req_name_=$1
	shift
	printf "$@" >"$gp_req_name_"
}

test_expect_success 'GET info/refs, as git fetch sends it over v2' '
	request r "GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: git/2.39.5\r\nAccept: */*\r\nGit-Protocol: version=2\r\n\r\n" &&
	parse r &&
	cat >expect <<-\END &&
	method GET
	minor 1
	path /repo.git/info/refs
	query service=git-upload-pack
	chunked 0
	gzip 0
	keep-alive 1
	expect-continue 0
	host localhost:8080
	git-protocol version=2
	authorization 
	user-agent git/2.39.5
	headers 4
	END
	grep -v "^head-length\|^route" r.out >actual &&
	test_cmp expect actual &&
	grep "^route info-refs git-upload-pack repo.git$" r.out &&
	grep "^head-length $(wc -c <r)$" r.out
'

test_expect_success 'POST git-upload-pack with a gzip body of a given length; the body is not the head' '
	request r "POST /group/project.git/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-git-upload-pack-request\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nabcde" &&
	parse r &&
	grep "^length 5$" r.out &&
	grep "^gzip 1$" r.out &&
	grep "^expect-continue 1$" r.out &&
	grep "^route service git-upload-pack group/project.git$" r.out &&
	grep "^head-length $(($(wc -c <r) - 5))$" r.out
'

test_expect_success 'chunked bodies; x-gzip and identity codings' '
	request r "POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Encoding: x-gzip\r\n\r\n" &&
	parse r &&
	grep "^chunked 1$" r.out &&
	grep "^gzip 1$" r.out &&
	! grep "^length" r.out &&
	request r "POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Encoding: identity\r\n\r\n" &&
	parse r &&
	grep "^gzip 0$" r.out &&
	grep "^length 0$" r.out
'

test_expect_success 'keep-alive: HTTP/1.1 by default, HTTP/1.0 on request, Connection: close' '
	request r "GET /metrics HTTP/1.0\r\n\r\n" &&
	parse r &&
	grep "^keep-alive 0$" r.out &&
	grep "^route metrics - -$" r.out &&
	request r "GET /metrics HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" &&
	parse r &&
	grep "^keep-alive 1$" r.out &&
	request r "GET /metrics HTTP/1.1\r\nHost: h\r\nConnection: TE, close\r\n\r\n" &&
	parse r &&
	grep "^keep-alive 0$" r.out
'

test_expect_success 'bare LF line ends, empty lines before the request line, a later minor version' '
	request r "\r\n\nGET /r/info/refs?x=1&service=git-upload-pack HTTP/1.9\nHost: h\n\n" &&
	parse r &&
	grep "^minor 1$" r.out &&
	grep "^route info-refs git-upload-pack r$" r.out
'

test_expect_success 'an incomplete head asks for more' '
	echo more >expect &&
	request r "GET /r/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n" &&
	test-tool http parse <r >out &&
	test_cmp expect out &&
	request r "GET /r/info/re" &&
	test-tool http parse <r >out &&
	test_cmp expect out
'

while read -r status why format
do
	test_expect_success "refused with $status: $why" '
		request r "$format" &&
		parse r &&
		grep "^refused $status " r.out
	'
done <<\END
400 no-Host-in-1.1 GET / HTTP/1.1\r\n\r\n
400 two-Host-headers GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n
400 length-and-chunked POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n
400 two-lengths POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n
400 length-not-digits POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\n
400 length-too-long POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Length: 1234567890123456789\r\n\r\n
501 transfer-coding POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n
415 content-coding POST /r/git-upload-pack HTTP/1.1\r\nHost: h\r\nContent-Encoding: br\r\n\r\n
417 expectation GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n
505 HTTP/2 GET / HTTP/2.0\r\nHost: h\r\n\r\n
400 version GET / HTTP/1\r\nHost: h\r\n\r\n
400 lowercase-version GET / http/1.1\r\nHost: h\r\n\r\n
400 two-spaces GET  / HTTP/1.1\r\nHost: h\r\n\r\n
400 folded-header GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n
400 space-before-colon GET / HTTP/1.1\r\nHost : h\r\n\r\n
400 control-character GET / HTTP/1.1\r\nHost: h\001\r\n\r\n
400 NUL-in-path GET /r%%00/info/refs HTTP/1.1\r\nHost: h\r\n\r\n
400 bad-escape GET /r%%zz/info/refs HTTP/1.1\r\nHost: h\r\n\r\n
400 short-escape GET /r%%2 HTTP/1.1\r\nHost: h\r\n\r\n
400 not-a-path GET r/info/refs HTTP/1.1\r\nHost: h\r\n\r\n
501 long-method ABCDEFGHIJKLMNOPQRSTUVWXYZ / HTTP/1.1\r\nHost: h\r\n\r\n
END

test_expect_success 'a method is case-sensitive; an unknown one is parsed, routed nowhere' '
	request r "get /r/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h\r\n\r\n" &&
	parse r &&
	grep "^method other$" r.out &&
	grep "^route none - -$" r.out &&
	request r "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n" &&
	parse r &&
	grep "^path \*$" r.out
'

test_expect_success 'bounds: the target (414), the header count and the head size (431)' '
	target=$(printf "%08200d" 0) &&
	request r "GET /$target HTTP/1.1\r\nHost: h\r\n\r\n" &&
	parse r &&
	grep "^refused 414 " r.out &&
	# a request line that never ends within the bound
	target=$(printf "%017000d" 0) &&
	request r "GET /$target" &&
	parse r &&
	grep "^refused 414 " r.out &&
	{
		printf "GET / HTTP/1.1\r\nHost: h\r\n" &&
		for i in $(test_seq 100); do printf "X-%d: 1\r\n" $i || return 1; done &&
		printf "\r\n"
	} >r &&
	parse r &&
	grep "^refused 431 " r.out &&
	{
		printf "GET / HTTP/1.1\r\nHost: h\r\n" &&
		for i in $(test_seq 99); do printf "X-%d: %0200d\r\n" $i 0 || return 1; done
	} >r &&
	parse r &&
	grep "^refused 431 " r.out &&
	# 100 headers within the bound pass
	{
		printf "GET / HTTP/1.1\r\n" &&
		for i in $(test_seq 99); do printf "X-%d: 1\r\n" $i || return 1; done &&
		printf "Host: h\r\n\r\n"
	} >r &&
	parse r &&
	grep "^headers 100$" r.out &&
	request r "GET / HTTP/1.1\r\nHost: h\r\nGit-Protocol: %01100d\r\n\r\n" 0 &&
	parse r &&
	grep "^refused 431 " r.out
'

while read -r method target want
do
	test_expect_success "route of $method $target: $want" '
		request r "$method $target HTTP/1.1\r\nHost: h\r\n\r\n" &&
		parse r &&
		echo "route $want" >expect &&
		grep "^route" r.out >actual &&
		test_cmp expect actual
	'
done <<\END
GET /info/refs?service=git-upload-pack none - -
GET /r/info/refs none - -
GET /r/info/refs?service=git-frobnicate none - -
GET /r/info/refs?service=git-receive-pack info-refs git-receive-pack r
HEAD /r/info/refs?service=git-upload-pack info-refs git-upload-pack r
POST /r/info/refs?service=git-upload-pack none - -
POST /r/git-receive-pack service git-receive-pack r
POST /r/git-upload-archive service git-upload-archive r
POST /git-upload-pack none - -
GET /r/git-upload-pack none - -
POST /r/HEAD none - -
GET /../r/info/refs?service=git-upload-pack none - -
GET /a/../r/info/refs?service=git-upload-pack none - -
GET /a/%%2e%%2e/r/info/refs?service=git-upload-pack none - -
GET /a/./r/info/refs?service=git-upload-pack none - -
GET //r/info/refs?service=git-upload-pack none - -
GET /a//r/info/refs?service=git-upload-pack none - -
POST /a%%5cb/git-upload-pack none - -
GET http://example.com/x/y.git/info/refs?service=git-upload-pack info-refs git-upload-pack x/y.git
GET /.git/info/refs?service=git-upload-pack info-refs git-upload-pack .git
GET /metrics metrics - -
POST /metrics none - -
END

test_done
