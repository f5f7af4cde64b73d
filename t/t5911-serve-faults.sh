#!/bin/sh

test_description='gitpack serve: bad input, load and faults

Malformed HTTP, oversized heads and bodies, gzip bombs, slow clients,
a thousand idle connections, clients that disconnect mid-pack, a cache
directory that fills or cannot be written, full queues, and a soak of
mixed concurrent clones and fetches with random disconnects. Each test
checks the server survives (no crash, descriptors back to their
baseline, memory bounded) and that every well-formed request is still
answered. Everything talks to 127.0.0.1 on ports the kernel picks, and
every wait is bounded. The misbehaving clients are lib-serve-faults.py.

GP_SOAK_SECONDS (default 30) makes the soak run longer by hand;
GP_SOAK_WORKERS (8) and GP_SOAK_DISCONNECTORS (2) set its clients.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

LIB="$TEST_DIRECTORY/lib-serve-faults.py"

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2>/dev/null
then
	skip_all='python3 (3.6 or later) is needed'
	test_done
fi
if ! test -d /proc/self/fd
then
	skip_all='/proc is needed to count the server'"'"'s descriptors'
	test_done
fi

lib () {
	python3 "$LIB" "$@"
}

# start_server NAME [OPTION...]: gitpack serve over srv/ on an HTTP and a
# git:// port of the kernel's choosing, logging to NAME.log; NAME.pid,
# NAME.http and NAME.git hold its pid and ports once it listens. With
# GP_SERVE_WRAP set, that command (words) runs in front of gitpack.
start_server () {
	ss_name_=$1
	shift
	rm -f "$ss_name_.pid" "$ss_name_.http" "$ss_name_.git" &&
	: >"$ss_name_.out" || return 1
	$GP_SERVE_WRAP gitpack serve --base-path="$TRASH_DIRECTORY/srv" --export-all \
		--http=127.0.0.1:0 --git=127.0.0.1:0 --access-log="$ss_name_.log" "$@" \
		>"$ss_name_.out" 2>"$ss_name_.err" &
	echo $! >"$ss_name_.pid"
	ss_tries_=0
	while test "$(grep -c "listening on" "$ss_name_.out")" -lt 2
	do
		ss_tries_=$((ss_tries_ + 1))
		if test $ss_tries_ -gt 300 || ! kill -0 "$(cat "$ss_name_.pid")" 2>/dev/null
		then
			echo "server $ss_name_ did not start" >&2
			cat "$ss_name_.err" >&2
			return 1
		fi
		sleep 0.1
	done
	sed -n 's|^gitpack serve: listening on http://127.0.0.1:\([0-9]*\)/$|\1|p' \
		"$ss_name_.out" >"$ss_name_.http" &&
	sed -n 's|^gitpack serve: listening on git://127.0.0.1:\([0-9]*\)/$|\1|p' \
		"$ss_name_.out" >"$ss_name_.git" &&
	test -s "$ss_name_.http" && test -s "$ss_name_.git"
}

# stop_server NAME: SIGTERM; it must exit 0 within 30 seconds (else it
# is killed, and that fails).
stop_server () {
	sv_pid_=$(cat "$1.pid") || return 1
	kill -TERM "$sv_pid_" 2>/dev/null
	sv_tries_=0
	while kill -0 "$sv_pid_" 2>/dev/null
	do
		sv_tries_=$((sv_tries_ + 1))
		if test $sv_tries_ -gt 300
		then
			echo "server $1 ignored SIGTERM for 30 s" >&2
			kill -KILL "$sv_pid_"
			wait "$sv_pid_"
			return 1
		fi
		sleep 0.1
	done
	wait "$sv_pid_"
	sv_status_=$?
	if test $sv_status_ != 0
	then
		echo "server $1 exited with $sv_status_" >&2
		cat "$1.err" >&2
		return 1
	fi
}

alive () {
	kill -0 "$(cat "$1.pid")" 2>/dev/null || {
		echo "server $1 is gone" >&2
		cat "$1.err" >&2
		return 1
	}
}

# fds NAME [CACHEDIR]: the server's open descriptors, those on files of
# CACHEDIR left out (a cache entry keeps one: see cache_fds_match).
fds () {
	fd_pid_=$(cat "$1.pid") &&
	for fd_f_ in /proc/$fd_pid_/fd/*
	do
		readlink "$fd_f_"
	done >"$1.fdlist" &&
	if test -n "$2"
	then
		grep -vc "^$TRASH_DIRECTORY/$2/" "$1.fdlist"
	else
		wc -l <"$1.fdlist" | tr -d ' '
	fi
}

# fds_settle NAME BASELINE [CACHEDIR]: the descriptors come back to
# BASELINE within 15 seconds (disconnects and timeouts take effect).
fds_settle () {
	fs_tries_=0
	while :
	do
		fs_n_=$(fds "$1" $3) || return 1
		test "$fs_n_" -le "$2" && return 0
		fs_tries_=$((fs_tries_ + 1))
		if test $fs_tries_ -gt 150
		then
			echo "server $1 holds $fs_n_ descriptors, baseline $2:" >&2
			cat "$1.fdlist" >&2
			return 1
		fi
		sleep 0.1
	done
}

# cache_fds_match NAME CACHEDIR: at rest, the server has one descriptor
# on each complete entry of the cache and none on anything else there.
cache_fds_match () {
	cf_pid_=$(cat "$1.pid") &&
	for cf_f_ in /proc/$cf_pid_/fd/*
	do
		readlink "$cf_f_"
	done | grep "^$TRASH_DIRECTORY/$2/" | sort >"$1.cachefds" &&
	ls "$2" | sed -n "s|^\(.*\.stream\)$|$TRASH_DIRECTORY/$2/\1|p" | sort >"$1.cachefiles" &&
	test_cmp "$1.cachefiles" "$1.cachefds"
}

# at_rest NAME: /metrics says nothing is queued or generating, and one
# connection is open (the one asking)
at_rest () {
	lib get $(cat "$1.http") /metrics >"$1.metrics" &&
	grep "^gitpack_serve_queue_length 0$" "$1.metrics" &&
	grep "^gitpack_serve_generations_in_flight 0$" "$1.metrics" &&
	grep "^gitpack_serve_connections 1$" "$1.metrics"
}

vm () {
	sed -n "s/^$2:[	 ]*\([0-9]*\) kB$/\1/p" "/proc/$(cat "$1.pid")/status"
}

# clone_ok NAME URL DIR [ARGS]: a clone that succeeds and is fsck-clean.
clone_ok () {
	co_url_=$2
	co_dir_=$3
	shift 3
	rm -rf "$co_dir_" &&
	git clone -q "$@" "$co_url_" "$co_dir_" &&
	git -C "$co_dir_" fsck --no-dangling --no-progress
}

http_url () {
	echo "http://127.0.0.1:$(cat "$1.http")/$2"
}

git_url () {
	echo "git://127.0.0.1:$(cat "$1.git")/$2"
}

test_expect_success 'setup: two repositories served, SHA-1 and SHA-256' '
	mkdir srv &&
	for algo in sha1 sha256
	do
		git init -q -b main --object-format=$algo src-$algo &&
		for i in $(test_seq 24)
		do
			# incompressible: the pack is ~500 KB, many socket buffers
			head -c 15000 /dev/urandom | base64 >src-$algo/f$i &&
			git -C src-$algo add f$i &&
			test_tick &&
			git -C src-$algo commit -q -m "c$i" || return 1
		done &&
		git -C src-$algo tag -a -m v1 v1 &&
		git clone -q --bare src-$algo srv/repo-$algo.git || return 1
	done &&
	git -C srv/repo-sha1.git rev-parse --verify main &&
	git -C srv/repo-sha256.git rev-parse --verify main &&
	oid1=$(git -C srv/repo-sha1.git rev-parse main) &&
	oid256=$(git -C srv/repo-sha256.git rev-parse main)
'

# the status each malformed request must get, and whether the server
# then closes ("closed"): a request it cannot frame ends the connection
cat >malformed.expect <<\EOF
garbage 400 closed
no-version 400 closed
http09 400 closed
version-2 505 closed
version-3 505 closed
version-junk 400 closed
version-lower 400 closed
no-colon 400 closed
space-before-colon 400 closed
obs-fold 400 closed
control-in-value 400 closed
two-hosts 400 closed
no-host 400 closed
bare-cr 400 closed
two-lengths 400 closed
length-list 400 closed
length-sign 400 closed
length-huge-number 400 closed
length-and-chunked 400 closed
te-gzip 501 closed
chunk-size-junk 400 closed
chunk-size-negative 400 closed
chunk-size-17-digits 400 closed
chunk-size-space 400 closed
chunk-no-crlf 400 closed
gzip-truncated 400 closed
gzip-garbage 400 closed
gzip-two-members 400 closed
encoding-br 415 closed
expect-other 417 closed
percent-nul 400 closed
percent-bad 400 closed
dot-dot 404
method-lower 405
method-delete 405
receive-pack 403
huge-header 431 closed
many-headers 431 closed
huge-target 414 closed
endless-target 414 closed
endless-blank-lines 414 closed
random-bytes 400 closed
huge-length 413 closed
huge-length-expect 413 closed
huge-chunk 413 closed
huge-body-sent 413 closed
gzip-bomb 413 closed
gzip-bomb-chunked 413 closed
EOF

test_expect_success 'malformed requests: the right refusal, and the next request is answered' '
	start_server bad --max-body-mb=1 &&
	test_when_finished "stop_server bad" &&
	base=$(fds bad) &&
	url=$(http_url bad repo-sha1.git) &&
	git ls-remote "$url" >expect.refs &&
	while read case want
	do
		echo "$case $(lib malformed $(cat bad.http) $case 1)" &&
		git ls-remote "$url" >actual.refs &&
		test_cmp expect.refs actual.refs ||
		echo "$case: the next ls-remote failed"
	done <malformed.expect >malformed.actual &&
	test_cmp malformed.expect malformed.actual &&
	# the refusals are logged, the server is alive, nothing is left open
	grep " 413 0 " bad.log &&
	grep " 431 0 " bad.log &&
	alive bad &&
	fds_settle bad $base
'

test_expect_success 'a gzip bomb costs the body bound, not what it inflates to' '
	start_server bomb --max-body-mb=1 &&
	test_when_finished "stop_server bomb" &&
	git ls-remote "$(http_url bomb repo-sha1.git)" >/dev/null &&
	# VmHWM from now: the peak of what the server holds while it reads
	echo 5 >/proc/$(cat bomb.pid)/clear_refs &&
	hwm0=$(vm bomb VmHWM) &&
	echo "413 closed" >expect &&
	# each inflates to 100 MiB; 1 MiB is all the server may keep
	lib malformed $(cat bomb.http) gzip-bomb 1 >actual &&
	test_cmp expect actual &&
	lib malformed $(cat bomb.http) gzip-bomb-chunked 1 >actual &&
	test_cmp expect actual &&
	hwm1=$(vm bomb VmHWM) &&
	echo "VmHWM $hwm0 kB -> $hwm1 kB" &&
	test $((hwm1 - hwm0)) -lt 16384 &&
	git ls-remote "$(http_url bomb repo-sha1.git)" >/dev/null
'

test_expect_success 'Expect: 100-continue with a body over the bound: 413, never "100 Continue"' '
	start_server expect --max-body-mb=1 &&
	test_when_finished "stop_server expect" &&
	echo "413 closed" >expect &&
	lib malformed $(cat expect.http) huge-length-expect 1 >actual &&
	test_cmp expect actual &&
	git ls-remote "$(http_url expect repo-sha1.git)" >/dev/null
'

within () {
	awk -v t="$1" -v lo="$2" -v hi="$3" "BEGIN { exit !(t >= lo && t < hi) }" || {
		echo "$1 s is not within [$2, $3)" >&2
		return 1
	}
}

test_expect_success 'slow clients: a trickled head gets 408 at the header deadline, not per byte' '
	start_server slow --header-timeout=2 --body-timeout=1 --idle-timeout=2 &&
	test_when_finished "stop_server slow" &&
	base=$(fds slow) &&
	# ~330 bytes, one every 50 ms: 16 s if each byte reset the clock
	lib trickle $(cat slow.http) 0.05 >out &&
	cat out &&
	{ read status && read secs && read closed; } <out &&
	test "$status" = 408 &&
	test "$closed" = closed &&
	within $secs 1.8 4 &&
	grep "408 .*timed out reading the request" slow.log &&
	fds_settle slow $base
'

test_expect_success 'slow clients: a stalled body gets 408 after --body-timeout of silence' '
	test_when_finished "stop_server slow" &&
	start_server slow --header-timeout=2 --body-timeout=1 --idle-timeout=2 &&
	base=$(fds slow) &&
	lib stall-body $(cat slow.http) >out &&
	cat out &&
	{ read status && read secs && read closed; } <out &&
	test "$status" = 408 &&
	test "$closed" = closed &&
	within $secs 0.9 3 &&
	grep "408 .*timed out reading the body" slow.log &&
	# a body slower in total than the timeout, never silent that long
	lib steady-body $(cat slow.http) repo-sha1.git 0.6 >out &&
	cat out &&
	{ read status && read secs; } <out &&
	test "$status" = 200 &&
	within $secs 2.3 5 &&
	fds_settle slow $base
'

test_expect_success 'slow clients: an idle keep-alive connection is closed after --idle-timeout' '
	test_when_finished "stop_server slow" &&
	start_server slow --header-timeout=2 --body-timeout=1 --idle-timeout=2 &&
	base=$(fds slow) &&
	lib idle $(cat slow.http) repo-sha1.git >out &&
	cat out &&
	{ read status && read closed && read secs; } <out &&
	test "$status" = 200 &&
	test "$closed" = closed &&
	within $secs 1.8 4 &&
	fds_settle slow $base
'

test_expect_success 'slow clients: bytes of a pipelined head are under the header deadline' '
	test_when_finished "stop_server slow" &&
	start_server slow --header-timeout=2 --idle-timeout=20 &&
	for first in 1 3 40
	do
		# FIRST bytes of the next request come with the first: the rest
		# trickles, and the header deadline (not the idle one) ends it
		lib pipe-trickle $(cat slow.http) $first >out &&
		cat out &&
		{ read statuses && read secs; } <out &&
		test "$statuses" = "200 408" &&
		within $secs 1.8 5 || return 1
	done
'

test_expect_success 'slow clients: a client that stops reading is dropped after --timeout' '
	git init -q -b main big &&
	# ~16 MB that do not compress: more than the socket buffers hold
	head -c 12000000 /dev/urandom | base64 >big/blob &&
	git -C big add blob &&
	git -C big commit -q -m big &&
	git clone -q --bare big srv/big.git &&
	test_when_finished "rm -rf srv/big.git" &&
	start_server slow --timeout=2 --workers=1 &&
	test_when_finished "stop_server slow" &&
	base=$(fds slow) &&
	{ lib slow-reader $(cat slow.http) big.git 30 $(git -C big rev-parse HEAD) & } &&
	reader=$! &&
	test_when_finished "kill $reader; wait $reader; true" &&
	# the only worker is stuck writing to it, for --timeout at most:
	# the fetch ends (failed) long before the reader lets go
	tries=0 &&
	while ! grep "POST /big.git" slow.log >post
	do
		tries=$((tries + 1)) &&
		test $tries -lt 250 &&
		sleep 0.1 || return 1
	done &&
	cat post &&
	grep "writing to the client" post &&
	ms=$(sed -n "s/.* \([0-9.]*\)ms .*/\1/p" post) &&
	within $ms 0 20000 &&
	git ls-remote "$(http_url slow repo-sha1.git)" &&
	kill $reader &&
	fds_settle slow $base
'

# what each malformed git:// request line gets: an ERR packet, or the
# connection closed without a word (a line that does not frame). Bytes
# after the request line are the service's, as for git daemon (git
# archive --remote sends its arguments at once): upload-pack answers.
cat >git-malformed.expect <<\EOF
bad-length nothing closed
length-3 nothing closed
length-4 nothing closed
flush nothing closed
length-too-large nothing closed
data-after-line advert closed
garbage nothing closed
receive-pack ERR service not enabled closed
upload-archive ERR service not enabled closed
no-path nothing closed
relative-path ERR access denied or repository not exported: repo-sha1.git closed
dot-dot ERR access denied or repository not exported: /../srv/repo-sha1.git closed
missing ERR access denied or repository not exported: /nope.git closed
bad-want advert then ERR upload-pack: not our ref 1111111111111111111111111111111111111111 closed
EOF

test_expect_success 'malformed git:// requests: refused, and the next clone is served' '
	start_server badgit --header-timeout=2 &&
	test_when_finished "stop_server badgit" &&
	base=$(fds badgit) &&
	while read case want
	do
		echo "$case $(lib git-malformed $(cat badgit.git) $case)" &&
		git ls-remote "$(git_url badgit repo-sha1.git)" >/dev/null ||
		echo "$case: the next ls-remote failed"
	done <git-malformed.expect >git-malformed.actual &&
	test_cmp git-malformed.expect git-malformed.actual &&
	# a request line trickled past the header deadline
	lib git-trickle $(cat badgit.git) 0.05 >out &&
	cat out &&
	{ read closed && read secs; } <out &&
	test "$closed" = closed &&
	within $secs 1.8 4 &&
	clone_ok badgit "$(git_url badgit repo-sha256.git)" c-git &&
	fds_settle badgit $base &&
	at_rest badgit
'

test_expect_success 'a refusal reaches a client that writes ahead (the close lingers)' '
	start_server ahead --max-body-mb=1 &&
	test_when_finished "stop_server ahead" &&
	base=$(fds ahead) &&
	lib write-ahead $(cat ahead.git) git >actual &&
	echo "ERR service not enabled" >expect &&
	test_cmp expect actual &&
	lib write-ahead $(cat ahead.http) http >actual &&
	echo 413 >expect &&
	test_cmp expect actual &&
	fds_settle ahead $base
'

test_expect_success 'request bodies held at once are bounded in sum (429), then served again' '
	start_server bodies --max-body-mb=4 --max-bodies-mb=1 &&
	test_when_finished "stop_server bodies" &&
	base=$(fds bodies) &&
	lib bodies $(cat bodies.http) 3 400 >actual &&
	echo "open open 429" >expect &&
	test_cmp expect actual &&
	grep " 429 .*too many request bodies" bodies.log &&
	lib bodies $(cat bodies.http) 2 400 >actual &&
	echo "open open" >expect &&
	test_cmp expect actual &&
	git ls-remote "$(http_url bodies repo-sha1.git)" >/dev/null &&
	fds_settle bodies $base
'

test_lazy_prereq OPENSSL 'openssl version && python3 -c "import ssl"'

test_expect_success OPENSSL 'TLS: handshakes that never complete end at the header deadline' '
	openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.crt \
		-days 1 -subj /CN=localhost &&
	# the git:// and http:// listeners of start_server, and one for TLS
	start_server tls --https=127.0.0.1:0 --tls-cert=tls.crt --tls-key=tls.key \
		--header-timeout=2 &&
	test_when_finished "stop_server tls" &&
	port=$(sed -n "s|^gitpack serve: listening on https://127.0.0.1:\([0-9]*\)/$|\1|p" tls.out) &&
	base=$(fds tls) &&
	lib tls-faults $port repo-sha1.git >out &&
	cat out &&
	grep "^silent closed" out >line && within $(cut -d" " -f3 line) 1.8 4 &&
	grep "^plain-http closed$" out &&
	grep "^half-hello closed" out >line && within $(cut -d" " -f3 line) 1.8 4 &&
	grep "^trickled-hello closed" out >line && within $(cut -d" " -f3 line) 1.8 5 &&
	grep "^silent-after-handshake closed" out >line && within $(cut -d" " -f3 line) 1.8 4 &&
	grep "^request 200$" out &&
	fds_settle tls $base
'

test_lazy_prereq FD_1100 'test "$(ulimit -Hn)" = unlimited || test "$(ulimit -Hn)" -ge 1100'

test_expect_success FD_1100 '1,000 idle connections held, clones still served, then descriptors back' '
	start_server many --header-timeout=60 &&
	test_when_finished "stop_server many" &&
	base=$(fds many) &&
	rm -f held.ready held.stop &&
	{ lib hold $(cat many.http) 1000 held.ready held.stop >held.out & } &&
	holder=$! &&
	test_when_finished "touch held.stop; wait $holder; true" &&
	tries=0 &&
	while ! test -s held.ready
	do
		tries=$((tries + 1)) &&
		test $tries -lt 300 &&
		sleep 0.1 || return 1
	done &&
	# the server holds every one (half of them with half a head)
	tries=0 &&
	while test "$(fds many)" -lt $((base + 1000))
	do
		tries=$((tries + 1)) &&
		test $tries -lt 100 &&
		sleep 0.1 || return 1
	done &&
	clone_ok many "$(http_url many repo-sha1.git)" c-http &&
	clone_ok many "$(git_url many repo-sha256.git)" c-git &&
	clone_ok many "$(http_url many repo-sha256.git)" c-http2 -c protocol.version=2 &&
	touch held.stop &&
	wait $holder &&
	echo "closed-by-server 0" >expect &&
	test_cmp expect held.out &&
	fds_settle many $base &&
	alive many
'

test_expect_success 'clients that disconnect mid-pack, over and over' '
	start_server drop &&
	test_when_finished "stop_server drop" &&
	start_server dropc --cache-dir=cache-drop &&
	test_when_finished "stop_server dropc" &&
	base=$(fds drop) &&
	basec=$(fds dropc cache-drop) &&
	for s in drop dropc
	do
		for n in 1 100 1000 4096 20000 65536 150000 400000
		do
			lib fetch-drop $(cat $s.http) repo-sha1.git $n $oid1 &&
			lib fetch-drop $(cat $s.http) repo-sha256.git $n $oid256 algo=sha256 ||
			return 1
		done &&
		for stage in advert wants haves pack advert wants haves pack
		do
			lib git-drop $(cat $s.git) repo-sha1.git $stage $oid1 &&
			lib git-drop $(cat $s.git) repo-sha256.git $stage $oid256 || return 1
		done || return 1
	done >drops.out &&
	grep "writing to the client" drop.log &&
	alive drop &&
	alive dropc &&
	fds_settle drop $base &&
	fds_settle dropc $basec cache-drop &&
	cache_fds_match dropc cache-drop &&
	clone_ok drop "$(http_url drop repo-sha1.git)" c1 &&
	clone_ok drop "$(git_url drop repo-sha256.git)" c2 &&
	clone_ok dropc "$(http_url dropc repo-sha256.git)" c3 &&
	clone_ok dropc "$(git_url dropc repo-sha1.git)" c4 &&
	at_rest drop &&
	at_rest dropc
'

test_expect_success 'git clones killed mid-way, over and over' '
	test_when_finished "stop_server kill" &&
	start_server kill &&
	test_when_finished "stop_server killc" &&
	start_server killc --cache-dir=cache-drop2 &&
	base=$(fds kill) &&
	basec=$(fds killc cache-drop2) &&
	n=0 &&
	for delay in 0.01 0.03 0.05 0.08 0.1 0.15 0.2 0.3
	do
		for url in "$(http_url kill repo-sha1.git)" "$(git_url kill repo-sha256.git)" \
			"$(http_url killc repo-sha256.git)" "$(git_url killc repo-sha1.git)"
		do
			# a directory each: the helpers of a killed clone (remote-http,
			# index-pack) die of the broken pipe a little later
			n=$((n + 1)) &&
			{ git clone -q --bare "$url" killed$n 2>/dev/null & } &&
			pid=$! &&
			sleep $delay &&
			kill -9 $pid 2>/dev/null
			# killed (137) or done in time (0): either is the point
			wait $pid || :
		done
	done &&
	alive kill &&
	alive killc &&
	fds_settle kill $base &&
	fds_settle killc $basec cache-drop2 &&
	cache_fds_match killc cache-drop2 &&
	clone_ok kill "$(http_url kill repo-sha256.git)" c1 &&
	clone_ok killc "$(git_url killc repo-sha256.git)" c2 &&
	at_rest kill &&
	at_rest killc
'

# fetches_bypassed NAME N: NAME.log has N fetches, each cache=bypass
# (every fetch that makes a pack logs what the cache did)
fetches_bypassed () {
	grep "cache=" "$1.log" >"$1.fetches" &&
	test_line_count = "$2" "$1.fetches" &&
	! grep -v "cache=bypass" "$1.fetches"
}

test_expect_success 'a cache whose writes fail mid-way (the disk fills): every fetch succeeds' '
	# files limited to 200 KB: the ~500 KB pack streams cannot be written
	GP_SERVE_WRAP="python3 $LIB exec-limited fsize=200000 --" &&
	start_server full --cache-dir=cache-full &&
	GP_SERVE_WRAP= &&
	test_when_finished "stop_server full" &&
	base=$(fds full cache-full) &&
	for i in 1 2 3
	do
		clone_ok full "$(http_url full repo-sha1.git)" c-http &&
		clone_ok full "$(git_url full repo-sha256.git)" c-git ||
		return 1
	done &&
	fetches_bypassed full 6 &&
	# nothing left behind: no entry, no temporary file
	ls cache-full >left &&
	test_must_be_empty left &&
	fds_settle full $base cache-full
'

# Followers that already sent part of the stream finish from memory
# when the writer's file fails (pack-cache.c "spill").
test_expect_success 'a cache whose writes fail mid-way: concurrent identical clones all succeed' '
	GP_SERVE_WRAP="python3 $LIB exec-limited fsize=200000 --" &&
	start_server full --cache-dir=cache-full2 &&
	GP_SERVE_WRAP= &&
	test_when_finished "stop_server full" &&
	url=$(http_url full repo-sha1.git) &&
	for round in 1 2 3
	do
		pids= &&
		for i in 1 2 3 4 5 6
		do
			rm -rf cc$i &&
			{ git clone -q --bare "$url" cc$i >cc$i.err 2>&1 & } &&
			pids="$pids $!" || return 1
		done &&
		for p in $pids
		do
			wait $p || return 1
		done &&
		for i in 1 2 3 4 5 6
		do
			git -C cc$i fsck --connectivity-only 2>/dev/null || return 1
		done || return 1
	done
'

test_expect_success 'a cache directory that became unusable (a file now): fetches bypass it' '
	start_server gone --cache-dir=cache-gone &&
	test_when_finished "stop_server gone" &&
	rm -rf cache-gone &&
	echo not a directory >cache-gone &&
	for i in 1 2
	do
		clone_ok gone "$(http_url gone repo-sha256.git)" c-http &&
		clone_ok gone "$(git_url gone repo-sha1.git)" c-git ||
		return 1
	done &&
	fetches_bypassed gone 4
'

test_lazy_prereq TMPFS '
	mkdir m &&
	mount -t tmpfs -o size=1m tmpfs m &&
	umount m
'

test_expect_success TMPFS 'a cache on a full file system, and on one out of inodes: fetches bypass it' '
	mkdir small inodes &&
	# 8 MiB: under the 64 MiB the cache wants free, so it writes nothing
	mount -t tmpfs -o size=8m tmpfs small &&
	test_when_finished "umount small" &&
	# room, but no inode for a new file
	mount -t tmpfs -o size=200m,nr_inodes=2 tmpfs inodes &&
	test_when_finished "umount inodes" &&
	mkdir inodes/cache &&
	start_server small --cache-dir=small/cache &&
	test_when_finished "stop_server small" &&
	start_server inodes --cache-dir=inodes/cache &&
	test_when_finished "stop_server inodes" &&
	for s in small inodes
	do
		for i in 1 2
		do
			clone_ok $s "$(http_url $s repo-sha1.git)" c-http &&
			clone_ok $s "$(git_url $s repo-sha256.git)" c-git ||
			return 1
		done &&
		fetches_bypassed $s 4 || return 1
	done &&
	ls small/cache inodes/cache >left &&
	! grep stream left
'

test_expect_success 'a full queue: 429 over HTTP, ERR over git://, then served again' '
	start_server busy --workers=1 --max-queue=1 &&
	test_when_finished "stop_server busy" &&
	lib queue $(cat busy.http) $(cat busy.git) repo-sha1.git >out &&
	cat >expect <<-\EOF &&
	holder advertised
	extra http 429 retry-after 5
	extra git ERR server busy, try again later
	queued waiting
	queued http 200
	EOF
	test_cmp expect out &&
	clone_ok busy "$(http_url busy repo-sha1.git)" c-http &&
	clone_ok busy "$(git_url busy repo-sha256.git)" c-git
'

test_expect_success 'a request that waited past --queue-timeout: 429' '
	start_server busy --workers=1 --max-queue=1 --queue-timeout=1 &&
	test_when_finished "stop_server busy" &&
	lib queue $(cat busy.http) $(cat busy.git) repo-sha1.git 2 >out &&
	cat >expect <<-\EOF &&
	holder advertised
	extra http 429 retry-after 5
	extra git ERR server busy, try again later
	queued waiting
	queued http 429
	EOF
	test_cmp expect out &&
	clone_ok busy "$(http_url busy repo-sha256.git)" c-http
'

test_expect_success '--max-connections: connections past it are closed, the server goes on' '
	start_server few --max-connections=4 &&
	test_when_finished "stop_server few" &&
	base=$(fds few) &&
	lib conns $(cat few.http) 10 >out &&
	echo "closed 6" >expect &&
	test_cmp expect out &&
	fds_settle few $base &&
	clone_ok few "$(http_url few repo-sha1.git)" c-http &&
	clone_ok few "$(git_url few repo-sha256.git)" c-git
'

test_expect_success 'out of descriptors: excess connections are closed at once, no busy loop' '
	GP_SERVE_WRAP="python3 $LIB exec-limited nofile=64 --" &&
	start_server nofd &&
	GP_SERVE_WRAP= &&
	test_when_finished "stop_server nofd" &&
	base=$(fds nofd) &&
	# 80 connections, fewer than 64 descriptors: the rest wait in the
	# backlog, and a level-triggered listener would spin the loop
	lib flood $(cat nofd.http) $(cat nofd.pid) 80 >out &&
	cat out &&
	sed -n "s/^cpu //p" out >cpu &&
	within $(cat cpu) 0 0.5 &&
	sed -n "s/^closed //p" out >closed &&
	# at least those that no descriptor numbered under 64 could hold
	test $(cat closed) -ge 16 &&
	fds_settle nofd $base &&
	clone_ok nofd "$(http_url nofd repo-sha1.git)" c-http &&
	clone_ok nofd "$(git_url nofd repo-sha256.git)" c-git
'

# The soak. Clients that stay must all succeed; the servers must end
# with their baseline descriptors, alive, and with flat memory.
#
# "Flat": VmRSS is sampled every 250 ms; the peak of the last third of
# the run may exceed the peak of the first third by at most half of it
# plus 20 MiB. The first third is the warm-up (a malloc arena per busy
# worker thread, the pages of packs mapped and read, the cache's table),
# so growth past it is what a leak looks like; the slack absorbs the
# allocator's fragmentation and the packs the pusher adds. A leak of a
# few KiB a request crosses it only in a longer run (GP_SOAK_SECONDS);
# the short run relies on LeakSanitizer (GP_TEST_LEAKS=1 under
# SANITIZE=address) for small leaks.
test_expect_success 'soak: concurrent clones and fetches, pushes, random disconnects' '
	start_server soakc --cache-dir=cache-soak &&
	test_when_finished "stop_server soakc" &&
	start_server soakn &&
	test_when_finished "stop_server soakn" &&
	basec=$(fds soakc cache-soak) &&
	basen=$(fds soakn) &&
	git clone -q "file://$TRASH_DIRECTORY/srv/repo-sha1.git" push-sha1 &&
	git clone -q "file://$TRASH_DIRECTORY/srv/repo-sha256.git" push-sha256 &&
	mkdir soak &&
	lib soak dir="$TRASH_DIRECTORY/soak" base="$TRASH_DIRECTORY/srv" \
		repos=repo-sha1.git,repo-sha256.git \
		pushers="$TRASH_DIRECTORY/push-sha1,$TRASH_DIRECTORY/push-sha256" \
		pids=$(cat soakc.pid),$(cat soakn.pid) \
		http-cache=$(cat soakc.http) git-cache=$(cat soakc.git) \
		http-nocache=$(cat soakn.http) git-nocache=$(cat soakn.git) \
		seconds=${GP_SOAK_SECONDS:-30} workers=${GP_SOAK_WORKERS:-8} \
		disconnectors=${GP_SOAK_DISCONNECTORS:-2} push-interval=3 >soak.out &&
	cat soak.out &&
	grep "^failures 0$" soak.out &&
	for what in clone shallow fetch ls-remote push drop-raw-http drop-raw-git drop-clone-kill
	do
		grep "^count $what [1-9]" soak.out || return 1
	done &&
	test $(grep -c "^rss .* flat$" soak.out) = 2 &&
	! grep GROWING soak.out &&
	alive soakc &&
	alive soakn &&
	fds_settle soakn $basen &&
	fds_settle soakc $basec cache-soak &&
	cache_fds_match soakc cache-soak &&
	at_rest soakc &&
	at_rest soakn &&
	# the cache served some of it
	grep -c "cache=hit\|cache=follow" soakc.log
'

test_done
