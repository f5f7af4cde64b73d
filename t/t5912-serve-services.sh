#!/bin/sh

test_description='gitpack serve: TLS, and the services stock Git runs

--https with a self-signed certificate (stock git clones and fetches over
https://, hits of the pack cache included); --enable=receive-pack (a push
over HTTP needs a user that serve.write names; over git://,
daemon.receivePack) and --enable=upload-archive (git archive --remote over
git://), each started by the server with posix_spawn.'

. ./test-lib.sh

SAFETY_NET="timeout 300"
SRV=$TRASH_DIRECTORY/srv

# start_server NAME [OPTION...]: gitpack serve with http, https and git
# listeners on free ports; HTTP_URL, HTTPS_URL, GIT_URL without the
# trailing slash. Stopped with SIGTERM by the test's cleanup, which fails
# unless the server exits 0.
start_server () {
	ss_name_=$1
	shift
	test_when_finished stop_server || return 1
	$SAFETY_NET gitpack serve --base-path="$SRV" --export-all \
		--http=127.0.0.1:0 --git=127.0.0.1:0 --https=127.0.0.1:0 \
		--tls-cert="$TRASH_DIRECTORY/cert.pem" --tls-key="$TRASH_DIRECTORY/key.pem" \
		--access-log="$TRASH_DIRECTORY/$ss_name_.log" "$@" \
		</dev/null >"$ss_name_.out" 2>"$ss_name_.err" &
	SERVER_PID=$!
	ss_wait_=0
	while test $ss_wait_ -lt 200
	do
		if test "$(grep -c "listening on" "$ss_name_.out" 2>/dev/null)" = 3
		then
			HTTP_URL=$(sed -n "s|^gitpack serve: listening on \(http://.*\)/\$|\1|p" "$ss_name_.out")
			HTTPS_URL=$(sed -n "s|^gitpack serve: listening on \(https://.*\)/\$|\1|p" "$ss_name_.out")
			GIT_URL=$(sed -n "s|^gitpack serve: listening on \(git://.*\)/\$|\1|p" "$ss_name_.out")
			return 0
		fi
		kill -0 $SERVER_PID 2>/dev/null || break
		sleep 0.05
		ss_wait_=$((ss_wait_ + 1))
	done
	cat "$ss_name_.out" "$ss_name_.err" >&2
	return 1
}

stop_server () {
	test -n "$SERVER_PID" || return 0
	kill -TERM "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID"
	st_code_=$?
	SERVER_PID=
	test $st_code_ = 0
}

test_expect_success 'setup: a certificate, users, repositories' '
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem \
		-days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
		>/dev/null 2>&1 &&
	printf "alice:%s\n" "$(openssl passwd -6 -salt abcdefgh secret)" >users &&
	printf "bob:%s\n" "$(openssl passwd -6 -salt hgfedcba other)" >>users &&
	git init -q src &&
	for i in 1 2 3
	do
		echo "$i" >src/f$i && git -C src add f$i &&
		git -C src commit -q -m "c$i" || return 1
	done &&
	mkdir srv &&
	git clone -q --bare src srv/repo.git &&
	git clone -q --bare src srv/push.git &&
	git -C srv/push.git config serve.write alice
'

test_expect_success 'https: stock git clones, v2 and v0, and the cache answers over TLS' '
	start_server s1 --cache-dir="$TRASH_DIRECTORY/cache" --cache-min-occurrences=1 &&
	GIT_SSL_CAINFO="$TRASH_DIRECTORY/cert.pem" git clone -q "$HTTPS_URL/repo.git" t1 &&
	GIT_SSL_CAINFO="$TRASH_DIRECTORY/cert.pem" git -c protocol.version=0 clone -q "$HTTPS_URL/repo.git" t0 &&
	GIT_SSL_CAINFO="$TRASH_DIRECTORY/cert.pem" git clone -q "$HTTPS_URL/repo.git" t2 &&
	for d in t0 t1 t2
	do
		git -C $d fsck --full &&
		test "$(git -C $d rev-parse HEAD)" = "$(git -C src rev-parse HEAD)" || return 1
	done &&
	grep "cache=hit" s1.log
'

test_expect_success 'https: a client that does not trust the certificate gets no answer' '
	start_server s2 &&
	test_must_fail env GIT_SSL_CAINFO=/dev/null git clone -q "$HTTPS_URL/repo.git" untrusted 2>err &&
	grep -i "certificate\|SSL" err &&
	! test -d untrusted/.git
'

test_expect_success 'receive-pack is refused unless enabled' '
	start_server s3 &&
	host=${HTTP_URL#http://} &&
	git clone -q "$HTTP_URL/push.git" p0 &&
	(cd p0 && echo x >x && git add x && git commit -q -m x) &&
	test_must_fail git -C p0 push -q "http://alice:secret@$host/push.git" HEAD:refs/heads/new 2>err &&
	grep "403" err
'

test_expect_success 'receive-pack over HTTP: serve.write decides, with Basic auth' '
	start_server s4 --enable=receive-pack --auth-file="$TRASH_DIRECTORY/users" &&
	host=${HTTP_URL#http://} &&
	git clone -q "$HTTP_URL/push.git" p1 &&
	(cd p1 && echo y >y && git add y && git commit -q -m y) &&
	GIT_TERMINAL_PROMPT=0 test_must_fail git -C p1 push -q "$HTTP_URL/push.git" HEAD:refs/heads/anon &&
	test_must_fail git -C p1 push -q "http://bob:other@$host/push.git" HEAD:refs/heads/bob 2>err &&
	grep "403" err &&
	git -C p1 push -q "http://alice:secret@$host/push.git" HEAD:refs/heads/alice &&
	test "$(git -C srv/push.git rev-parse refs/heads/alice)" = "$(git -C p1 rev-parse HEAD)" &&
	test_must_fail git -C srv/push.git rev-parse --verify -q refs/heads/bob &&
	git -C srv/push.git fsck &&
	grep "^[^ ]* [^ ]* alice \"POST /push.git/git-receive-pack\" 200" s4.log
'

test_expect_success 'receive-pack over git:// needs daemon.receivePack' '
	start_server s5 --enable=receive-pack &&
	git clone -q "$HTTP_URL/push.git" p2 &&
	(cd p2 && echo z >z && git add z && git commit -q -m z) &&
	test_must_fail git -C p2 push -q "$GIT_URL/push.git" HEAD:refs/heads/viagit 2>err &&
	grep "access denied or repository not exported" err &&
	git -C srv/push.git config daemon.receivePack true &&
	git -C p2 push -q "$GIT_URL/push.git" HEAD:refs/heads/viagit &&
	test "$(git -C srv/push.git rev-parse refs/heads/viagit)" = "$(git -C p2 rev-parse HEAD)"
'

test_expect_success 'upload-archive over git://, when enabled' '
	start_server s6 &&
	test_must_fail git archive --remote="$GIT_URL/repo.git" HEAD >/dev/null 2>err &&
	grep "service not enabled" err &&
	stop_server &&
	start_server s7 --enable=upload-archive &&
	git archive --remote="$GIT_URL/repo.git" HEAD >remote.tar &&
	git -C src archive HEAD >local.tar &&
	test_cmp local.tar remote.tar
'

test_done
