#!/bin/sh

test_description='gitpack serve as clients see it

gitpack serve runs on 127.0.0.1 (ports of 0: free ones, read from the
"listening on" lines) with the base path srv/ of the trash directory, and
clients nobody here wrote talk to it:

  - stock git (2.39, and the newer git of GP_TEST_GIT_NEW over git://, and
    over http:// when it was built with curl) clones over http:// and
    git://, protocol v0 and v2, SHA-1 and SHA-256: a full clone, --depth=1
    then --deepen=1, --filter=blob:none then a lazy fetch, and fetches
    after a push; each result passes git fsck --full and holds the
    objects, refs and shallow list that stock git gets from file://;
  - libgit2 (pygit2), Dulwich and JGit clone over http://;
  - curl and Python for what clients never send: repository lookup
    (suffixes, git-daemon-export-ok, symbolic links and gitfiles out of the
    base path, "..") and the HTTP answers (403, 404, 405, 415, gzip and
    chunked bodies, keep-alive);
  - Basic authentication and serve.read;
  - the pack cache, seen through /metrics, the access log and the cache
    directory; /metrics through promtool;
  - the generation limits (429 and Retry-After, "server busy");
  - gitpack pack-objects-hook as stock git upload-pack'\''s
    uploadpack.packObjectsHook;
  - SIGTERM while clones are in flight.

Where a test needs a pack generation to last, a small proxy (Python)
between client and server stops passing the answer on after some bytes
until the test lets it go: the server then waits on a full socket, in the
middle of the pack.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

if ! test_have_prereq GITPACK_IS_GITPACK
then
	skip_all='gitpack serve has no stock git counterpart'
	test_done
fi
if ! test -d /proc/self
then
	skip_all='needs /proc to watch the server process'
	test_done
fi

# --- tools -----------------------------------------------------------------

# bounded CMD...: CMD, killed after 60 seconds (a server that hangs must
# fail the test, not the run).
# $SAFETY_NET CMD...: what runs the servers and proxies in the background,
# ending them within five minutes whatever happens (a simple command, so
# that $! is its pid and a signal sent there reaches CMD).
if command -v timeout >/dev/null 2>&1
then
	bounded () {
		timeout 60 "$@"
	}
	SAFETY_NET="timeout 300"
else
	bounded () {
		"$@"
	}
	SAFETY_NET=
fi

# A python3 with module $1 (Debian's python3-* packages install for the
# system python, not for another one first on PATH).
find_python () {
	for fp_py_ in ${GP_TEST_PYTHON:+"$GP_TEST_PYTHON"} /usr/bin/python3 python3
	do
		if "$fp_py_" -c "import $1" >/dev/null 2>&1
		then
			echo "$fp_py_"
			return 0
		fi
	done
	return 1
}

if PY=$(find_python http.client)
then
	test_set_prereq PYTHON
else
	echo "# no python3: the tests that need the proxy or raw requests are skipped"
fi
if command -v curl >/dev/null 2>&1
then
	test_set_prereq CURL
else
	echo "# no curl: the HTTP detail tests are skipped"
fi
if DULWICH_PY=$(find_python dulwich.porcelain)
then
	test_set_prereq DULWICH
else
	echo "# no dulwich (python3-dulwich): its case is skipped"
fi
if PYGIT2_PY=$(find_python pygit2)
then
	test_set_prereq PYGIT2
else
	echo "# no pygit2 (python3-pygit2): its case is skipped"
fi
jgit_ () {
	JAVA_TOOL_OPTIONS="-Duser.home=$HOME" bounded jgit "$@"
}
if command -v jgit >/dev/null 2>&1
then
	# Debian's jgit-cli 4.11 needs the LFS and Apache HTTP jars
	if ! jgit_ version >/dev/null 2>&1 && test -z "$JGIT_CLASSPATH"
	then
		for jar in org.eclipse.jgit.lfs org.eclipse.jgit.http.apache \
			httpclient httpcore commons-logging
		do
			jar=/usr/share/java/$jar.jar
			test -f "$jar" && JGIT_CLASSPATH=${JGIT_CLASSPATH:+$JGIT_CLASSPATH:}$jar
		done
		export JGIT_CLASSPATH
	fi
	if jgit_ version >/dev/null 2>&1
	then
		test_set_prereq JGIT
	else
		echo "# jgit does not start: its case is skipped"
	fi
else
	echo "# no jgit (jgit-cli): its case is skipped"
fi
if command -v promtool >/dev/null 2>&1
then
	test_set_prereq PROMTOOL
else
	echo "# no promtool (Debian package prometheus): /metrics is not checked by it"
fi
# crypt(3) hashes for the credentials file
if command -v openssl >/dev/null 2>&1 &&
	openssl passwd -6 -salt abcdefgh x >/dev/null 2>&1
then
	make_hash () {
		openssl passwd -6 -salt "$2" "$1"
	}
	test_set_prereq CRYPT
elif test_have_prereq PYTHON &&
	"$PY" -W ignore -c 'import crypt; assert crypt.crypt("x", "$6$abcdefgh$")' >/dev/null 2>&1
then
	make_hash () {
		"$PY" -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], "$6$" + sys.argv[2] + "$"))' "$1" "$2"
	}
	test_set_prereq CRYPT
else
	echo "# neither openssl nor python crypt: the authentication tests are skipped"
fi
if test_have_prereq GIT_NEW
then
	echo "# newer git: $("$GP_TEST_GIT_NEW" --version)"
	if test -x "$("$GP_TEST_GIT_NEW" --exec-path)/git-remote-http"
	then
		test_set_prereq GIT_NEW_HTTP
	else
		echo "# the newer git has no git-remote-http: it is tried over git:// only"
	fi
else
	echo "# no newer git (GP_TEST_GIT_NEW): its cases are skipped"
fi

# --- the server ----------------------------------------------------------------

SRV=$TRASH_DIRECTORY/srv
SERVER_PID=

# server_running PID: the process exists and is no zombie.
server_running () {
	test -d "/proc/$1" && ! grep '^State:[	 ]*Z' "/proc/$1/status" >/dev/null 2>&1
}

# start_server NAME [OPTION...]: gitpack serve on srv/ with OPTIONs, on a
# free HTTP and a free git:// port of 127.0.0.1, in the background under
# a "timeout" (the safety net of a run that goes wrong); its output in
# NAME.out and NAME.err, its access log NAME.log. Sets SERVER_PID,
# HTTP_URL and GIT_URL (no trailing slash), HTTP_PORT and GIT_PORT.
# Registers stop_server with test_when_finished: call it from a test body.
start_server () {
	ss_name_=$1
	shift
	test_when_finished stop_server || return 1
	rm -f "$ss_name_.out" "$ss_name_.err" || return 1
	$SAFETY_NET gitpack serve --base-path="$SRV" \
		--http=127.0.0.1:0 --git=127.0.0.1:0 \
		--access-log="$TRASH_DIRECTORY/$ss_name_.log" "$@" \
		</dev/null >"$ss_name_.out" 2>"$ss_name_.err" &
	SERVER_PID=$!
	SERVER_NAME=$ss_name_
	ss_wait_=0
	while test $ss_wait_ -lt 200
	do
		if test "$(grep -c "listening on" "$ss_name_.out" 2>/dev/null)" = 2
		then
			HTTP_URL=$(sed -n "s|^gitpack serve: listening on \(http://.*\)/\$|\1|p" "$ss_name_.out")
			GIT_URL=$(sed -n "s|^gitpack serve: listening on \(git://.*\)/\$|\1|p" "$ss_name_.out")
			HTTP_PORT=${HTTP_URL##*:}
			GIT_PORT=${GIT_URL##*:}
			export HTTP_URL GIT_URL
			return 0
		fi
		server_running $SERVER_PID || break
		sleep 0.05
		ss_wait_=$((ss_wait_ + 1))
	done
	echo "start_server: no listening lines" >&2
	cat "$ss_name_.out" "$ss_name_.err" >&2
	return 1
}

# stop_server: SIGTERM; the server must exit 0 within 30 seconds (it is
# killed otherwise, and that fails). Nothing when none runs.
stop_server () {
	test -n "$SERVER_PID" || return 0
	if ! server_running "$SERVER_PID"
	then
		echo "stop_server: the server ended before SIGTERM" >&2
		st_gone_=t
	else
		st_gone_=
		kill -TERM "$SERVER_PID"
	fi
	st_wait_=0
	while server_running "$SERVER_PID" && test $st_wait_ -lt 300
	do
		sleep 0.1
		st_wait_=$((st_wait_ + 1))
	done
	if server_running "$SERVER_PID"
	then
		echo "stop_server: still running 30 s after SIGTERM" >&2
		kill -KILL "$SERVER_PID"
	fi
	wait "$SERVER_PID"
	st_code_=$?
	SERVER_PID=
	if test $st_code_ != 0 || test -n "$st_gone_"
	then
		echo "stop_server: gitpack serve exited with $st_code_" >&2
		cat "$SERVER_NAME.err" >&2
		return 1
	fi
}

# metric NAME: the value of the sample NAME (with its labels, as
# /metrics spells them) now; 0 when absent.
metric () {
	curl -s "$HTTP_URL/metrics" >metrics.txt &&
	awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }' metrics.txt
}

# lookups RESULT: gitpack_serve_cache_lookups_total{result="RESULT"}.
lookups () {
	metric "gitpack_serve_cache_lookups_total{result=\"$1\"}"
}

# cache_notes LOG: the cache= words of LOG's fetches, one a line.
cache_notes () {
	sed -n "s/.* cache=\([a-z]*\)\$/\1/p" "$1"
}

# wait_for CMD...: until CMD succeeds, at most 30 seconds.
wait_for () {
	wf_n_=0
	until "$@"
	do
		wf_n_=$((wf_n_ + 1))
		if test $wf_n_ -ge 300
		then
			echo "wait_for: gave up on: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# --- the stalling proxy -----------------------------------------------------------

# start_proxy NAME PORT STALL: a TCP proxy on a free port of 127.0.0.1
# ($PROXY_PORT) to PORT, that passes the server's bytes to the client
# until STALL of them went on one connection, then holds the rest until
# the file NAME.release exists; NAME.stalled appears when it holds.
# Small socket buffers on its side, so that the server soon waits.
# Registers stop_proxy.
start_proxy () {
	test_when_finished "stop_proxy $1" || return 1
	rm -f "$1.port" "$1.release" "$1.stalled" || return 1
	$SAFETY_NET "$PY" "$TRASH_DIRECTORY/proxy.py" "$1" "$2" "$3" \
		</dev/null >"$1.proxy-out" 2>&1 &
	PROXY_PID=$!
	eval "PROXY_PID_$1=\$PROXY_PID"
	wait_for test -s "$1.port" &&
	PROXY_PORT=$(cat "$1.port")
}

stop_proxy () {
	eval "sp_pid_=\$PROXY_PID_$1"
	test -n "$sp_pid_" || return 0
	eval "PROXY_PID_$1="
	touch "$1.release"
	kill "$sp_pid_" 2>/dev/null
	wait "$sp_pid_"
	return 0
}

# --- references --------------------------------------------------------------------

# snapshot DIR NAME: what a client repository holds, in NAME.objs (every
# object, with its type), NAME.refs (every ref), NAME.rrefs (those the
# remote gave: refs/remotes/origin/ but HEAD, and refs/tags/) and
# NAME.shallow (the shallow list).
snapshot () {
	git -C "$1" cat-file --batch-all-objects \
		--batch-check='%(objectname) %(objecttype)' | sort >"$2.objs" &&
	git -C "$1" for-each-ref --format='%(objectname) %(refname)' >"$2.refs" &&
	{ grep -E " refs/(remotes/origin|tags)/" "$2.refs" || :; } |
	grep -v " refs/remotes/origin/HEAD\$" >"$2.rrefs" &&
	sn_shallow_=$(git -C "$1" rev-parse --git-path shallow) &&
	case "$sn_shallow_" in
	/*) ;;
	*) sn_shallow_=$1/$sn_shallow_ ;;
	esac &&
	if test -f "$sn_shallow_"
	then
		sort "$sn_shallow_"
	fi >"$2.shallow"
}

# same_as REF DIR [remote]: DIR passes git fsck --full and holds what
# snap/REF holds: objects, shallow list, refs (with "remote": the refs from
# the remote only; clients lay out local branches their own way).
same_as () {
	git -C "$2" fsck --full --no-progress &&
	snapshot "$2" actual &&
	test_cmp "snap/$1.objs" actual.objs &&
	test_cmp "snap/$1.shallow" actual.shallow &&
	if test "$3" = remote
	then
		test_cmp "snap/$1.rrefs" actual.rrefs
	else
		test_cmp "snap/$1.refs" actual.refs
	fi
}

# A file whose blob a partial clone fetches lazily.
LAZY_FILE=a/b/deep.txt

test_expect_success 'setup: helper programs' '
	mkdir -p snap "$SRV" &&
	cat >proxy.py <<-\EOF &&
	import os
	import socket
	import sys
	import threading
	import time

	name, port, stall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	release, stalled = name + ".release", name + ".stalled"

	def pipe(src, dst, limit):
	    passed = 0
	    try:
	        while True:
	            if limit is not None and passed >= limit:
	                while not os.path.exists(release):
	                    if not os.path.exists(stalled):
	                        open(stalled, "w").close()
	                    time.sleep(0.05)
	                limit = None
	            data = src.recv(16384 if limit is None else min(16384, limit - passed))
	            if not data:
	                break
	            dst.sendall(data)
	            passed += len(data)
	    except OSError:
	        pass
	    for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
	        try:
	            s.shutdown(how)
	        except OSError:
	            pass

	def serve(client):
	    upstream = socket.socket()
	    upstream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
	    upstream.connect(("127.0.0.1", port))
	    client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
	    up = threading.Thread(target=pipe, args=(client, upstream, None))
	    up.start()
	    pipe(upstream, client, stall)
	    up.join()
	    client.close()
	    upstream.close()

	listener = socket.socket()
	listener.bind(("127.0.0.1", 0))
	listener.listen(64)
	with open(name + ".port.tmp", "w") as f:
	    f.write("%d\n" % listener.getsockname()[1])
	os.rename(name + ".port.tmp", name + ".port")
	while True:
	    c, _ = listener.accept()
	    threading.Thread(target=serve, args=(c,), daemon=True).start()
	EOF

	# post URL BODY-FILE OUT [HEADER...]: a POST of BODY-FILE with
	# curl; OUT.head gets the status line and headers, OUT the body
	cat >post.sh <<-\EOF &&
	url=$1 body=$2 out=$3
	shift 3
	for h
	do
	    set -- "$@" -H "$h"
	    shift
	done
	exec curl -s -D "$out.head" -o "$out" --data-binary "@$body" "$@" "$url"
	EOF

	# A client for libgit2 and Dulwich: clone URL DIR.
	cat >pyclient.py <<-\EOF
	import sys

	lib, url, path = sys.argv[1:4]
	if lib == "dulwich":
	    import dulwich.porcelain as porcelain
	    porcelain.clone(url, path, errstream=sys.stderr.buffer).close()
	else:
	    import pygit2
	    pygit2.clone_repository(url, path)
	EOF
'

# The served repositories: main with a merged side branch, annotated tags
# (one tagging another), a lightweight one, a file deep down for the lazy
# fetch; packed with a bitmap, exported, filters allowed.
for algo in $test_hash_algos
do
	test_expect_success "setup: the served repository ($algo)" '
		git init -q -b main --object-format=$algo work-$algo &&
		mkdir -p work-$algo/a/b &&
		test_seq 200 >work-$algo/shared.txt &&
		echo deep >work-$algo/$LAZY_FILE &&
		git -C work-$algo add . &&
		for i in 1 2 3 4 5 6
		do
			echo "change $i" >>work-$algo/shared.txt &&
			test_commit -C work-$algo --no-tag "main $i" a/file$i || return 1
		done &&
		git -C work-$algo tag -a -m "version 0.4" v0.4 HEAD~2 &&
		git -C work-$algo checkout -q -b side &&
		test_commit -C work-$algo --no-tag "side 1" a/b/side1 &&
		git -C work-$algo checkout -q main &&
		test_commit -C work-$algo --annotate "main 7" a/file7 "seven" v0.7 &&
		git -C work-$algo tag -a -m "tag of a tag" v0.7-signed v0.7 &&
		test_tick &&
		git -C work-$algo merge -q --no-ff -m "merge side" side &&
		for i in 8 9 10
		do
			echo "change $i" >>work-$algo/shared.txt &&
			test_commit -C work-$algo --no-tag "main $i" a/file$i || return 1
		done &&
		git -C work-$algo tag light10 &&

		git init -q --bare -b main --object-format=$algo "$SRV/$algo.git" &&
		git -C "$SRV/$algo.git" config uploadpack.allowFilter true &&
		git -C "$SRV/$algo.git" config uploadpack.allowAnySHA1InWant true &&
		git -C work-$algo push -q "$SRV/$algo.git" \
			"refs/heads/*:refs/heads/*" "refs/tags/*:refs/tags/*" &&
		git -C "$SRV/$algo.git" repack -adqb &&
		touch "$SRV/$algo.git/git-daemon-export-ok"
	'

	# What stock git gets from file:// (stock upload-pack): the snapshots
	# <algo>-full, -shallow1 (--depth=1), -shallow2 (then --deepen=1),
	# -partial (--filter=blob:none), -lazy (then a checkout).
	test_expect_success "setup: stock git clones from file:// ($algo)" '
		git clone -q --no-local "$SRV/$algo.git" ref-$algo-full &&
		snapshot ref-$algo-full snap/$algo-full &&
		git clone -q --depth=1 "file://$SRV/$algo.git" ref-$algo-shallow &&
		snapshot ref-$algo-shallow snap/$algo-shallow1 &&
		git -C ref-$algo-shallow fetch -q --deepen=1 &&
		snapshot ref-$algo-shallow snap/$algo-shallow2 &&
		git clone -q --filter=blob:none --no-checkout "file://$SRV/$algo.git" ref-$algo-partial &&
		snapshot ref-$algo-partial snap/$algo-partial &&
		git -C ref-$algo-partial checkout -q HEAD -- $LAZY_FILE &&
		snapshot ref-$algo-partial snap/$algo-lazy &&
		# the cases differ
		! test_cmp snap/$algo-shallow1.objs snap/$algo-shallow2.objs >/dev/null &&
		! test_cmp snap/$algo-shallow2.objs snap/$algo-full.objs >/dev/null &&
		! test_cmp snap/$algo-partial.objs snap/$algo-lazy.objs >/dev/null &&
		! test_cmp snap/$algo-lazy.objs snap/$algo-full.objs >/dev/null &&
		test_file_not_empty snap/$algo-shallow1.shallow
	'
done

# --- stock git --------------------------------------------------------------------

# gitc CLIENT PROTO ARGS...: git ARGS run by CLIENT ("git": stock git;
# "new": the git of GP_TEST_GIT_NEW), with protocol PROTO (reaching the
# git processes it starts: a lazy fetch too), its packets traced to
# trace.packet.
gitc () {
	case "$1" in
	git) gc_bin_=git ;;
	new) gc_bin_=$GP_TEST_GIT_NEW ;;
	esac
	gc_proto_=$2
	shift 2
	GIT_TRACE_PACKET="$TRASH_DIRECTORY/trace.packet" \
		bounded "$gc_bin_" -c protocol.version=$gc_proto_ "$@"
}

# spoke PROTO: the server answered the traced commands in protocol PROTO.
spoke () {
	if test "$1" = 2
	then
		grep "packet: *[a-z-]*< version 2\$" trace.packet >/dev/null
	else
		! grep "packet: *[a-z-]*< version [12]\$" trace.packet
	fi &&
	rm -f trace.packet
}

# url TRANSPORT ALGO: the served repository of ALGO.
url () {
	case "$1" in
	http) echo "$HTTP_URL/$2.git" ;;
	git) echo "$GIT_URL/$2.git" ;;
	esac
}

# The clients: "client:transport:proto:prereq".
git_clients="git:http:0: git:http:2: git:git:0: git:git:2: new:git:2:GIT_NEW
new:http:2:GIT_NEW_HTTP"

# Every test starts its server (the ports change; clones are pointed at
# the new one with remote set-url), all with the same cache directory, so
# that later clients get packs from the cache and from a restarted server.
INTEROP="interop --cache-dir=$TRASH_DIRECTORY/cache-interop"

for algo in $test_hash_algos
do
	for ct in $git_clients
	do
		c=${ct%%:*} rest=${ct#*:}
		t=${rest%%:*} rest=${rest#*:}
		p=${rest%%:*} pre=${rest#*:}
		d=$c-$t-v$p-$algo
		test_expect_success $pre "$c, $t, v$p: clone ($algo)" '
			start_server $INTEROP &&
			gitc $c $p clone -q "$(url $t $algo)" $d-full &&
			spoke $p &&
			same_as $algo-full $d-full
		'
		test_expect_success $pre "$c, $t, v$p: clone --depth=1, fetch --deepen=1 ($algo)" '
			start_server $INTEROP &&
			gitc $c $p clone -q --depth=1 "$(url $t $algo)" $d-shallow &&
			spoke $p &&
			same_as $algo-shallow1 $d-shallow &&
			gitc $c $p -C $d-shallow fetch -q --deepen=1 &&
			spoke $p &&
			same_as $algo-shallow2 $d-shallow
		'
		test_expect_success $pre "$c, $t, v$p: clone --filter=blob:none, lazy fetch ($algo)" '
			start_server $INTEROP &&
			gitc $c $p clone -q --filter=blob:none --no-checkout "$(url $t $algo)" $d-partial &&
			spoke $p &&
			same_as $algo-partial $d-partial &&
			gitc $c $p -C $d-partial checkout -q HEAD -- $LAZY_FILE &&
			spoke $p &&
			same_as $algo-lazy $d-partial
		'
	done

	# New commits on main, an annotated tag at the new tip (include-tag),
	# a new branch; stock git fetches them from file:// for the references.
	test_expect_success "push to the served repository ($algo)" '
		for i in 11 12 13
		do
			echo "change $i" >>work-$algo/shared.txt &&
			test_commit -C work-$algo --no-tag "main $i" a/file$i || return 1
		done &&
		git -C work-$algo tag -a -m "version 1.0" v1.0 &&
		git -C work-$algo checkout -q -b topic HEAD~1 &&
		test_commit -C work-$algo --no-tag "topic 1" a/topic1 &&
		git -C work-$algo checkout -q main &&
		git -C work-$algo push -q "$SRV/$algo.git" main topic v1.0 &&
		for k in full shallow partial
		do
			git -C ref-$algo-$k fetch -q &&
			snapshot ref-$algo-$k snap/$algo-$k-B || return 1
		done &&
		! test_cmp snap/$algo-full.objs snap/$algo-full-B.objs >/dev/null &&
		grep " refs/tags/v1.0\$" snap/$algo-full-B.refs &&
		grep " refs/remotes/origin/topic\$" snap/$algo-full-B.refs
	'

	for ct in $git_clients
	do
		c=${ct%%:*} rest=${ct#*:}
		t=${rest%%:*} rest=${rest#*:}
		p=${rest%%:*} pre=${rest#*:}
		d=$c-$t-v$p-$algo
		test_expect_success $pre "$c, $t, v$p: fetch after a push ($algo)" '
			start_server $INTEROP &&
			for k in full shallow partial
			do
				git -C $d-$k remote set-url origin "$(url $t $algo)" &&
				gitc $c $p -C $d-$k fetch -q &&
				spoke $p &&
				same_as $algo-$k-B $d-$k || return 1
			done
		'
	done
done

# --- other clients ------------------------------------------------------------------

test_expect_success PYGIT2 'pygit2 (libgit2) clones over http:// (sha1)' '
	start_server $INTEROP &&
	bounded "$PYGIT2_PY" pyclient.py pygit2 "$HTTP_URL/sha1.git" pygit2-http &&
	same_as sha1-full-B pygit2-http remote
'

test_expect_success DULWICH 'Dulwich clones over http:// (sha1)' '
	start_server $INTEROP &&
	bounded "$DULWICH_PY" pyclient.py dulwich "$HTTP_URL/sha1.git" dulwich-http &&
	same_as sha1-full-B dulwich-http remote
'

test_expect_success JGIT 'JGit clones over http:// (sha1)' '
	start_server $INTEROP &&
	jgit_ clone "$HTTP_URL/sha1.git" jgit-http &&
	same_as sha1-full-B jgit-http remote
'

# --- repository lookup --------------------------------------------------------------

# http_get URL OUT: curl GET of URL (as it is spelled), the body in OUT;
# prints the status.
http_get () {
	curl -s --path-as-is -o "$2" -w "%{http_code}\n" "$1"
}

# refs_of PATH OUT: GET PATH/info/refs?service=git-upload-pack; prints
# the status, the body in OUT.
refs_of () {
	http_get "$HTTP_URL/$1/info/refs?service=git-upload-pack" "$2"
}

# git_err PATH: the error of git ls-remote over git:// for PATH, with
# PATH itself taken out.
git_err () {
	test_must_fail bounded git ls-remote "$GIT_URL/$1" 2>git-err.raw &&
	sed "s|$1||" git-err.raw
}

test_expect_success 'setup: repositories to look up' '
	git clone -q --bare srv/sha1.git srv/hidden.git &&
	git clone -q --bare srv/sha1.git outside.git &&
	touch outside.git/git-daemon-export-ok &&
	ln -s ../outside.git srv/link-out.git &&
	ln -s sha1.git srv/link-in.git &&
	echo "gitdir: ../outside.git" >srv/gitfile-out.git &&
	echo "gitdir: sha1.git" >srv/gitfile-in.git &&
	mkdir srv/wt-out &&
	echo "gitdir: $TRASH_DIRECTORY/outside.git" >srv/wt-out/.git &&
	mkdir -p srv/sub/deeper &&
	git clone -q --bare srv/sha1.git srv/sub/nested.git &&
	touch srv/sub/nested.git/git-daemon-export-ok
'

test_expect_success 'the .git suffix is optional; project finds project.git' '
	start_server lookup &&
	git ls-remote "$HTTP_URL/sha1.git" >expect &&
	test_file_not_empty expect &&
	git ls-remote "$HTTP_URL/sha1" >actual &&
	test_cmp expect actual &&
	git ls-remote "$GIT_URL/sha1" >actual &&
	test_cmp expect actual &&
	git ls-remote "$HTTP_URL/sub/nested" >actual &&
	test_cmp expect actual &&
	git ls-remote "$GIT_URL/sub/nested.git" >actual &&
	test_cmp expect actual &&
	# a link and a gitfile that stay inside are followed
	git ls-remote "$HTTP_URL/link-in.git" >actual &&
	test_cmp expect actual &&
	git ls-remote "$GIT_URL/gitfile-in" >actual &&
	test_cmp expect actual
'

test_expect_success CURL 'absent, not exported, or out of the base path: one answer' '
	start_server lookup &&
	echo 404 >expect.status &&
	refs_of absent.git absent.body >status &&
	test_cmp expect.status status &&
	git_err absent.git >absent.err &&
	grep "access denied or repository not exported" absent.err &&
	for r in hidden.git hidden link-out.git gitfile-out.git gitfile-out wt-out \
		sub/deeper sub
	do
		refs_of $r body >status &&
		test_cmp expect.status status &&
		test_cmp absent.body body &&
		git_err $r >err &&
		test_cmp absent.err err || return 1
	done &&
	# the POST of the fetch too
	printf 0000 >flush &&
	sh post.sh "$HTTP_URL/hidden.git/git-upload-pack" flush body \
		"Content-Type: application/x-git-upload-pack-request" &&
	grep "^HTTP/1.1 404" body.head &&
	test_cmp absent.body body
'

test_expect_success CURL '.. and %2e%2e never leave the path they are in' '
	start_server lookup &&
	echo 404 >expect &&
	for p in sub/../sha1.git sub/%2e%2e/sha1.git sub/%2E%2E/sha1.git \
		../outside.git %2e%2e/outside.git sub/./nested.git sub//nested.git \
		./sha1.git
	do
		refs_of $p body >status &&
		test_cmp expect status || return 1
	done &&
	git_err sub/../sha1.git >err &&
	grep "access denied or repository not exported" err &&
	git_err ../outside.git >err &&
	grep "access denied or repository not exported" err
'

test_expect_success CURL '--export-all serves what git-daemon-export-ok would, nothing outside' '
	start_server lookup --export-all &&
	git ls-remote "$HTTP_URL/sha1.git" >expect &&
	git ls-remote "$HTTP_URL/hidden" >actual &&
	test_cmp expect actual &&
	git ls-remote "$GIT_URL/hidden.git" >actual &&
	test_cmp expect actual &&
	for r in link-out.git gitfile-out.git wt-out
	do
		test_must_fail git ls-remote "$HTTP_URL/$r" &&
		test_must_fail git ls-remote "$GIT_URL/$r" || return 1
	done
'

# --- HTTP ---------------------------------------------------------------------------

# pkt STRING: STRING and a newline as a pkt-line.
pkt () {
	printf "%04x%s\n" $((${#1} + 5)) "$1"
}

UPLOAD_REQ="Content-Type: application/x-git-upload-pack-request"

test_expect_success CURL 'setup: a protocol v0 request' '
	oid=$(git -C srv/sha1.git rev-parse main) &&
	{
		pkt "want $oid ofs-delta" &&
		printf 0000 &&
		pkt done
	} >want.req &&
	# check_pack RESPONSE: the answer is NAK and a pack holding main whole
	check_pack () {
		head -c 8 "$1" >nak &&
		printf "0008NAK\n" >expect.nak &&
		test_cmp expect.nak nak &&
		rm -rf chk.git &&
		git init -q --bare chk.git &&
		tail -c +9 "$1" | git -C chk.git index-pack --stdin >/dev/null &&
		git -C chk.git rev-list --objects $oid >objs &&
		git -C srv/sha1.git rev-list --objects $oid >expect.objs &&
		test_cmp expect.objs objs
	}
'

test_expect_success CURL 'plain, gzip and chunked request bodies' '
	start_server http &&
	url=$HTTP_URL/sha1.git/git-upload-pack &&
	sh post.sh "$url" want.req plain "$UPLOAD_REQ" &&
	grep "^HTTP/1.1 200" plain.head &&
	grep -i "^Content-Type: application/x-git-upload-pack-result" plain.head &&
	check_pack plain &&
	gzip -c want.req >want.req.gz &&
	sh post.sh "$url" want.req.gz gzip "$UPLOAD_REQ" "Content-Encoding: gzip" &&
	grep "^HTTP/1.1 200" gzip.head &&
	check_pack gzip &&
	sh post.sh "$url" want.req chunked "$UPLOAD_REQ" "Transfer-Encoding: chunked" &&
	grep "^HTTP/1.1 200" chunked.head &&
	check_pack chunked &&
	sh post.sh "$url" want.req.gz both "$UPLOAD_REQ" "Transfer-Encoding: chunked" \
		"Content-Encoding: x-gzip" &&
	check_pack both
'

test_expect_success 'stock git gzips a large request; the fetch works' '
	for i in $(test_seq 40)
	do
		git -C work-sha1 commit-tree -m "many $i" HEAD^{tree} >oid &&
		echo "create refs/heads/many/$i $(cat oid)" || return 1
	done >many.updates &&
	git -C work-sha1 update-ref --stdin <many.updates &&
	git -C work-sha1 push -q "$SRV/sha1.git" "refs/heads/many/*:refs/heads/many/*" &&
	git clone -q --bare --no-local srv/sha1.git many-ref.git &&
	git clone -q --bare srv/sha1.git many-v0.git &&
	git clone -q --bare srv/sha1.git many-v2.git &&
	git -C many-v0.git for-each-ref --format="delete %(refname)" refs/heads/many >del &&
	git -C many-v0.git update-ref --stdin <del &&
	git -C many-v2.git update-ref --stdin <del &&
	git -C many-v0.git gc -q --prune=now &&
	git -C many-v2.git gc -q --prune=now &&
	start_server http &&
	for p in 0 2
	do
		GIT_TRACE_CURL="$TRASH_DIRECTORY/trace.curl" GIT_TRACE_CURL_NO_DATA=1 \
			git -C many-v$p.git -c protocol.version=$p fetch -q \
			"$HTTP_URL/sha1.git" "refs/heads/*:refs/heads/*" &&
		grep -i "=> Send header: Content-Encoding: gzip" trace.curl &&
		rm trace.curl &&
		git -C many-v$p.git fsck --full --no-progress &&
		git -C many-ref.git for-each-ref >expect &&
		git -C many-v$p.git for-each-ref >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success CURL '403 for receive-pack and upload-archive' '
	start_server http &&
	for s in git-receive-pack git-upload-archive
	do
		echo 403 >expect &&
		http_get "$HTTP_URL/sha1.git/info/refs?service=$s" body >status &&
		test_cmp expect status &&
		grep "Service not enabled" body &&
		sh post.sh "$HTTP_URL/sha1.git/$s" flush body \
			"Content-Type: application/x-$s-request" &&
		grep "^HTTP/1.1 403" body.head || return 1
	done &&
	# stock git is told so
	test_must_fail git -C many-ref.git push "$HTTP_URL/sha1.git" HEAD:refs/heads/pushed 2>err &&
	grep "403" err
'

test_expect_success CURL '405 for a method a route does not take' '
	start_server http &&
	for m in PUT DELETE PATCH
	do
		curl -s -X $m -o body -D head "$HTTP_URL/sha1.git/info/refs?service=git-upload-pack" &&
		grep "^HTTP/1.1 405" head || return 1
	done &&
	curl -s -o body -D head "$HTTP_URL/sha1.git/git-upload-pack" &&
	grep "^HTTP/1.1 405" head &&
	grep -i "^Allow: POST" head &&
	sh post.sh "$HTTP_URL/sha1.git/info/refs?service=git-upload-pack" want.req body "$UPLOAD_REQ" &&
	grep "^HTTP/1.1 405" body.head &&
	grep -i "^Allow: GET" body.head &&
	sh post.sh "$HTTP_URL/metrics" flush body "Content-Type: text/plain" &&
	grep "^HTTP/1.1 405" body.head
'

test_expect_success CURL '415 for a POST of another Content-Type' '
	start_server http &&
	sh post.sh "$HTTP_URL/sha1.git/git-upload-pack" want.req body "Content-Type: text/plain" &&
	grep "^HTTP/1.1 415" body.head &&
	sh post.sh "$HTTP_URL/sha1.git/git-upload-pack" want.req body \
		"Content-Type: application/x-www-form-urlencoded" &&
	grep "^HTTP/1.1 415" body.head &&
	sh post.sh "$HTTP_URL/sha1.git/git-upload-pack" want.req body "Content-Type:" &&
	grep "^HTTP/1.1 415" body.head
'

test_expect_success CURL 'no dumb HTTP: 404' '
	start_server http &&
	pack=$(cd srv/sha1.git/objects/pack && ls pack-*.pack) &&
	echo 404 >expect &&
	for p in info/refs HEAD objects/info/packs objects/pack/$pack config \
		info/refs?service=git-frobnicate
	do
		http_get "$HTTP_URL/sha1.git/$p" body >status &&
		test_cmp expect status || return 1
	done &&
	# a client that asks for it fails
	test_must_fail env GIT_SMART_HTTP=0 git ls-remote "$HTTP_URL/sha1.git"
'

test_expect_success PYTHON 'keep-alive: several requests on one connection' '
	start_server http &&
	cat >keepalive.py <<-\EOF &&
	import http.client
	import sys

	port, req = int(sys.argv[1]), open(sys.argv[2], "rb").read()
	c = http.client.HTTPConnection("127.0.0.1", port)
	sock = None
	for method, path, body in (
	        ("GET", "/sha1.git/info/refs?service=git-upload-pack", None),
	        ("POST", "/sha1.git/git-upload-pack", req),
	        ("GET", "/absent.git/info/refs?service=git-upload-pack", None),
	        ("GET", "/metrics", None),
	        ("POST", "/sha1.git/git-upload-pack", req)):
	    headers = {"Content-Type": "application/x-git-upload-pack-request"} if body else {}
	    c.request(method, path, body=body, headers=headers)
	    r = c.getresponse()
	    data = r.read()
	    print(method, path, r.status, len(data))
	    if sock is not None and c.sock is not sock:
	        sys.exit("a new connection for " + path)
	    if r.will_close:
	        sys.exit("the server closes after " + path)
	    sock = c.sock
	EOF
	bounded "$PY" keepalive.py $HTTP_PORT want.req >out &&
	cat out &&
	test_line_count = 5 out &&
	grep "^GET /absent.git/info/refs?service=git-upload-pack 404" out &&
	# one connection in the access log: one client address and port
	tail -n 5 http.log | cut -d" " -f2 | sort -u >peers &&
	test_line_count = 1 peers
'

# --- authentication -------------------------------------------------------------------

# status_of CURL-ARGS...: the HTTP status of a curl request; headers in
# auth.head, body in auth.body.
status_of () {
	curl -s -D auth.head -o auth.body -w "%{http_code}\n" "$@"
}

test_expect_success CRYPT 'setup: users, a private and a team repository' '
	alice=$(make_hash alice-pw saltsal1) &&
	bob=$(make_hash bob-pw saltsal2) &&
	{
		echo "# users of gitpack serve" &&
		echo "alice:$alice" &&
		echo &&
		echo "bob:$bob"
	} >users &&
	for r in private team unlisted-hidden
	do
		git clone -q --bare srv/sha1.git srv/$r.git || return 1
	done &&
	touch srv/private.git/git-daemon-export-ok srv/team.git/git-daemon-export-ok &&
	git -C srv/private.git config serve.read alice &&
	git -C srv/team.git config serve.read carol &&
	git -C srv/team.git config --add serve.read "*" &&
	git -C srv/unlisted-hidden.git config serve.read alice &&
	cat >cred.sh <<-\EOF
	#!/bin/sh
	test "$1" = get || exit 0
	echo username=alice
	echo password=alice-pw
	EOF
	chmod +x cred.sh
'

test_expect_success CRYPT 'a public repository: anonymous clones, over HTTP and git://' '
	start_server auth --auth-file="$TRASH_DIRECTORY/users" &&
	git clone -q "$HTTP_URL/sha1.git" auth-public &&
	git -C auth-public fsck --full --no-progress &&
	git clone -q "$GIT_URL/sha1.git" auth-public-git &&
	git -C auth-public-git fsck --full --no-progress &&
	grep " - \"POST /sha1.git/git-upload-pack\" 200 " auth.log
'

test_expect_success CRYPT,CURL 'no credentials, or wrong ones: 401, and no hint of existence' '
	start_server auth --auth-file="$TRASH_DIRECTORY/users" &&
	echo 401 >expect &&
	status_of "$HTTP_URL/private.git/info/refs?service=git-upload-pack" >status &&
	test_cmp expect status &&
	grep -i "^WWW-Authenticate: Basic realm=" auth.head &&
	mv auth.body private.body &&
	for r in absent.git unlisted-hidden.git
	do
		status_of "$HTTP_URL/$r/info/refs?service=git-upload-pack" >status &&
		test_cmp expect status &&
		grep -i "^WWW-Authenticate: Basic" auth.head &&
		test_cmp private.body auth.body || return 1
	done &&
	for who in alice:wrong alice: bob:alice-pw nobody:x ALICE:alice-pw
	do
		status_of -u "$who" "$HTTP_URL/private.git/info/refs?service=git-upload-pack" >status &&
		test_cmp expect status || return 1
	done &&
	# the POST too
	sh post.sh "$HTTP_URL/private.git/git-upload-pack" want.req body "$UPLOAD_REQ" &&
	grep "^HTTP/1.1 401" body.head &&
	# stock git gives up
	test_must_fail env GIT_TERMINAL_PROMPT=0 git clone -q "$HTTP_URL/private.git" no-cred 2>err &&
	test_must_fail env GIT_TERMINAL_PROMPT=0 \
		git clone -q "http://alice:wrong@127.0.0.1:$HTTP_PORT/private.git" wrong-cred 2>err &&
	test_path_is_missing no-cred &&
	test_path_is_missing wrong-cred
'

test_expect_success CRYPT,CURL 'a user serve.read does not name: 404, as for no repository' '
	start_server auth --auth-file="$TRASH_DIRECTORY/users" &&
	echo 404 >expect &&
	status_of -u bob:bob-pw "$HTTP_URL/private.git/info/refs?service=git-upload-pack" >status &&
	test_cmp expect status &&
	mv auth.body private.body &&
	for r in absent.git unlisted-hidden.git hidden.git
	do
		status_of -u bob:bob-pw "$HTTP_URL/$r/info/refs?service=git-upload-pack" >status &&
		test_cmp expect status &&
		test_cmp private.body auth.body || return 1
	done &&
	# not exported stays not exported for a listed user
	status_of -u alice:alice-pw "$HTTP_URL/unlisted-hidden.git/info/refs?service=git-upload-pack" >status &&
	test_cmp expect status &&
	test_must_fail env GIT_TERMINAL_PROMPT=0 \
		git clone -q "http://bob:bob-pw@127.0.0.1:$HTTP_PORT/private.git" bob-private
'

test_expect_success CRYPT 'listed users clone; the access log names them' '
	rm -f auth.log &&
	start_server auth --auth-file="$TRASH_DIRECTORY/users" &&
	git clone -q "http://alice:alice-pw@127.0.0.1:$HTTP_PORT/private.git" alice-private &&
	git -C alice-private fsck --full --no-progress &&
	git clone -q -c credential.helper="$TRASH_DIRECTORY/cred.sh" \
		"$HTTP_URL/private.git" alice-helper &&
	git -C alice-helper fsck --full --no-progress &&
	git clone -q "http://bob:bob-pw@127.0.0.1:$HTTP_PORT/team.git" bob-team &&
	git -C bob-team fsck --full --no-progress &&
	git -C srv/private.git rev-parse main >expect &&
	git -C alice-private rev-parse origin/main >actual &&
	test_cmp expect actual &&
	grep " alice \"POST /private.git/git-upload-pack\" 200 " auth.log &&
	grep " bob \"POST /team.git/git-upload-pack\" 200 " auth.log &&
	! grep " bob \"[A-Z]* /private.git" auth.log
'

test_expect_success CRYPT 'git:// serves public repositories only' '
	start_server auth --auth-file="$TRASH_DIRECTORY/users" &&
	git_err absent.git >absent.err &&
	for r in private.git team.git
	do
		git_err $r >err &&
		test_cmp absent.err err || return 1
	done &&
	git ls-remote "$GIT_URL/sha1.git" >out &&
	test_file_not_empty out
'

# --- the pack cache -----------------------------------------------------------------------

# A repository whose pack takes a while to send: twelve MiB that do not
# compress, on main; a small commit before them on the branch small.
test_expect_success 'setup: a big repository' '
	git init -q -b main big &&
	test_commit -C big --no-tag small &&
	git -C big branch small &&
	for i in $(test_seq 12)
	do
		head -c 1048576 /dev/urandom >big/random$i || return 1
	done &&
	git -C big add . &&
	git -C big commit -q -m random &&
	git clone -q --bare big srv/big.git &&
	git -C srv/big.git repack -adq &&
	touch srv/big.git/git-daemon-export-ok
'

# clones_receiving PREFIX N: each clone PREFIX-1 .. PREFIX-N has received
# pack data (a pack being written, or a whole one).
clones_receiving () {
	for cr_i_ in $(test_seq $2)
	do
		ls "$1-$cr_i_"/.git/objects/pack/ 2>/dev/null | grep "pack" >/dev/null || return 1
	done
}

test_expect_success PYTHON 'identical clones at once: one generation, the others follow' '
	start_server cache1 --cache-dir="$TRASH_DIRECTORY/cache1" &&
	start_proxy p1 $HTTP_PORT 65536 &&
	# the first clone goes through the proxy, which holds the pack
	{ bounded git clone -q --depth=1 "http://127.0.0.1:$PROXY_PORT/big.git" same-0 2>same-0.err & } &&
	pid0=$! &&
	wait_for test -f p1.stalled &&
	test "$(metric gitpack_serve_generations_in_flight)" = 1 &&
	# seven identical ones, at once, straight to the server
	pids= &&
	for i in 1 2 3 4 5 6 7
	do
		{ bounded git clone -q --depth=1 "$HTTP_URL/big.git" same-$i 2>same-$i.err & } &&
		pids="$pids $!" || return 1
	done &&
	# they are served as the first one is: they wait with it
	wait_for clones_receiving same 7 &&
	sleep 0.5 &&
	test "$(metric gitpack_serve_generations_in_flight)" = 1 &&
	touch p1.release &&
	wait $pid0 &&
	for pid in $pids
	do
		wait $pid || return 1
	done &&
	# one made it (and kept it: seven more asked meanwhile), seven
	# followed it as it was made
	test "$(lookups miss)" = 1 &&
	test "$(lookups bypass)" = 0 &&
	test "$(lookups follow)" = 7 &&
	test "$(lookups hit)" = 0 &&
	test "$(metric gitpack_serve_generation_duration_seconds_count)" = 1 &&
	test "$(metric gitpack_serve_generations_failed_total)" = 0 &&
	git -C srv/big.git rev-parse main >expect &&
	for i in 0 1 2 3 4 5 6 7
	do
		git -C same-$i fsck --full --no-progress &&
		git -C same-$i rev-parse HEAD >actual &&
		test_cmp expect actual || return 1
	done &&
	ls cache1/*.stream >entries &&
	test_line_count = 1 entries &&
	# a later one is sent the entry
	git clone -q --depth=1 "$HTTP_URL/big.git" same-8 &&
	git -C same-8 fsck --full --no-progress &&
	cache_notes cache1.log >notes &&
	tail -n 1 notes >last &&
	echo hit >expect &&
	test_cmp expect last &&
	test "$(metric gitpack_serve_generation_duration_seconds_count)" = 1 &&
	rm -rf same-*
'

# clone_note NAME ARGS...: git clone ARGS into NAME (replacing it), then
# the cache= word the server logged for its pack.
clone_note () {
	cn_dir_=$1
	shift
	rm -rf "$cn_dir_" &&
	bounded git clone -q "$@" "$cn_dir_" &&
	git -C "$cn_dir_" fsck --full --no-progress &&
	cache_notes "$SERVER_NAME.log" | tail -n 1
}

test_expect_success 'a pack is kept from its second request on, and after a restart' '
	rm -f cache2.log &&
	start_server cache2 --cache-dir="$TRASH_DIRECTORY/cache2" &&
	echo bypass >expect &&
	clone_note c2 --depth=1 "$HTTP_URL/sha1.git" >note &&
	test_cmp expect note &&
	ls cache2 >files &&
	! grep "\.stream\$" files &&
	echo miss >expect &&
	clone_note c2 --depth=1 "$HTTP_URL/sha1.git" >note &&
	test_cmp expect note &&
	ls cache2/*.stream >entries &&
	test_line_count = 1 entries &&
	echo hit >expect &&
	clone_note c2 --depth=1 "$HTTP_URL/sha1.git" >note &&
	test_cmp expect note &&
	stop_server &&

	# what a crash leaves is removed at start: a temporary file, an
	# entry cut short
	entry=$(cat entries) &&
	touch cache2/tmp-0000000000000001.99999 &&
	head -c 100 "$entry" >cache2/0000000000000000000000000000000000000000000000000000000000000000.stream &&
	start_server cache2 --cache-dir="$TRASH_DIRECTORY/cache2" &&
	ls cache2 >files &&
	! grep "tmp-" files &&
	! grep "^0000000000000000000000000000000000000000000000000000000000000000" files &&
	echo hit >expect &&
	clone_note c2 --depth=1 "$HTTP_URL/sha1.git" >note &&
	test_cmp expect note
'

test_expect_success '--cache-max-age: an entry is not served once old' '
	start_server cache3 --cache-dir="$TRASH_DIRECTORY/cache3" \
		--cache-min-occurrences=1 --cache-max-age=1 &&
	echo miss >expect &&
	clone_note c3 --depth=1 "$HTTP_URL/sha1.git" >note &&
	test_cmp expect note &&
	ls cache3/*.stream >entries &&
	test_line_count = 1 entries &&
	sleep 2 &&
	clone_note c3 --depth=1 "$HTTP_URL/sha1.git" >note &&
	! grep hit note
'

test_expect_success 'a new pack in the repository starts new keys; loose objects do not' '
	git clone -q --bare srv/sha1.git srv/keyed.git &&
	git -C srv/keyed.git repack -adq &&
	touch srv/keyed.git/git-daemon-export-ok &&
	start_server cache4 --cache-dir="$TRASH_DIRECTORY/cache4" --cache-min-occurrences=1 &&
	side="--depth=1 --single-branch --branch=side" &&
	echo miss >expect &&
	clone_note c4 $side "$HTTP_URL/keyed.git" >note &&
	test_cmp expect note &&
	echo hit >expect &&
	clone_note c4 $side "$HTTP_URL/keyed.git" >note &&
	test_cmp expect note &&
	# a push of a few objects leaves them loose: the key stays
	git -C work-sha1 checkout -q -b keyed main &&
	test_commit -C work-sha1 --no-tag keyed1 &&
	git -C work-sha1 push -q "$SRV/keyed.git" keyed:main &&
	clone_note c4 $side "$HTTP_URL/keyed.git" >note &&
	test_cmp expect note &&
	# a repack changes the store: a new key, no stale entry
	test_commit -C work-sha1 --no-tag keyed2 &&
	git -C work-sha1 push -q "$SRV/keyed.git" keyed:main &&
	git -C srv/keyed.git repack -adq &&
	echo miss >expect &&
	clone_note c4 $side "$HTTP_URL/keyed.git" >note &&
	test_cmp expect note &&
	# and main is new
	clone_note c4 --depth=1 "$HTTP_URL/keyed.git" >note &&
	git -C work-sha1 rev-parse keyed >expect &&
	git -C c4 rev-parse HEAD >actual &&
	test_cmp expect actual
'

test_expect_success '--cache-max-size: entries are evicted' '
	start_server cache5 --cache-dir="$TRASH_DIRECTORY/cache5" \
		--cache-min-occurrences=1 --cache-max-size=2k &&
	for b in main side topic
	do
		clone_note c5 --depth=1 --branch=$b "$HTTP_URL/sha1.git" >note || return 1
	done &&
	test "$(metric gitpack_serve_cache_evictions_total)" -gt 0 &&
	test "$(metric gitpack_serve_cache_bytes)" -le 2048 &&
	cat cache5/*.stream | wc -c >size &&
	test "$(cat size)" -le 2048
'

test_expect_success PROMTOOL '/metrics passes promtool check metrics' '
	start_server metrics --cache-dir="$TRASH_DIRECTORY/cache-metrics" &&
	git clone -q --depth=1 "$HTTP_URL/sha1.git" m1 &&
	git clone -q "$GIT_URL/sha1.git" m2 &&
	curl -s "$HTTP_URL/absent" >/dev/null &&
	curl -s "$HTTP_URL/metrics" >metrics.txt &&
	grep "^gitpack_serve_requests_total{" metrics.txt &&
	grep "^gitpack_serve_cache_lookups_total{result=\"bypass\"} [1-9]" metrics.txt &&
	promtool check metrics <metrics.txt
'

# --- generation limits ----------------------------------------------------------------

# hold_clone PROXY-NAME PORT URL-SCHEME DIR: a full clone of big.git through
# a proxy to PORT that holds it mid-pack ($HELD_PID); returns once it holds.
hold_clone () {
	start_proxy $1 $2 65536 || return 1
	{ bounded git clone -q "$3://127.0.0.1:$PROXY_PORT/big.git" $4 2>$4.err & }
	HELD_PID=$!
	wait_for test -f $1.stalled
}

test_expect_success PYTHON,CURL 'past --max-generations-per-repo: 429 and Retry-After, "server busy"' '
	start_server limits --max-generations-per-repo=1 --generation-queue=0 &&
	hold_clone p2 $HTTP_PORT http held &&
	test "$(metric gitpack_serve_generations_in_flight)" = 1 &&
	small=$(git -C srv/big.git rev-parse small) &&
	{
		pkt "want $small ofs-delta" &&
		printf 0000 &&
		pkt done
	} >small.req &&
	sh post.sh "$HTTP_URL/big.git/git-upload-pack" small.req busy "$UPLOAD_REQ" &&
	grep "^HTTP/1.1 429" busy.head &&
	grep -i "^Retry-After: [1-9]" busy.head &&
	test_must_fail bounded git clone -q --depth=1 --branch=small "$HTTP_URL/big.git" busy-http 2>err &&
	grep 429 err &&
	test_must_fail bounded git clone -q --depth=1 --branch=small "$GIT_URL/big.git" busy-git 2>err &&
	grep "server busy" err &&
	# another repository has its own count
	git clone -q --depth=1 "$HTTP_URL/sha1.git" other-repo &&
	touch p2.release &&
	wait $HELD_PID &&
	git -C held fsck --full --no-progress &&
	# the slot is free again
	git clone -q --depth=1 --branch=small "$HTTP_URL/big.git" after &&
	git -C after fsck --full --no-progress &&
	rm -rf held
'

test_expect_success PYTHON 'a generation waits in --generation-queue, at most --generation-queue-timeout' '
	start_server queue --max-generations-per-repo=1 --generation-queue=1 \
		--generation-queue-timeout=5 &&
	hold_clone p2 $HTTP_PORT http held &&
	# this one waits five seconds, then is refused
	start=$(date +%s) &&
	test_must_fail bounded git clone -q --depth=1 --branch=small "$HTTP_URL/big.git" waited 2>err &&
	end=$(date +%s) &&
	grep 429 err &&
	test $((end - start)) -ge 4 &&
	# this one gets the slot when the held clone lets it go, which it
	# does once the next one asked for its pack (its ls-refs answered,
	# counted from the line of the 429, written after its answer)
	wait_for grep "\"POST /big.git/git-upload-pack\" 429 " queue.log &&
	posts=$(grep -c "\"POST /big.git/" queue.log) &&
	{ bounded git clone -q --depth=1 --branch=small "$HTTP_URL/big.git" waiting 2>waiting.err & } &&
	pid=$! &&
	more_posts () {
		test "$(grep -c "\"POST /big.git/" queue.log)" -gt $posts
	} &&
	wait_for more_posts &&
	sleep 0.5 &&
	touch p2.release &&
	wait $HELD_PID &&
	wait $pid &&
	git -C waiting fsck --full --no-progress &&
	git -C held fsck --full --no-progress &&
	rm -rf held
'

# --- pack-objects-hook -----------------------------------------------------------------

# hooked ARGS...: stock git with uploadpack.packObjectsHook set to gitpack
# pack-objects-hook (in a global config file: git takes the hook only from
# protected config, and clears GIT_CONFIG_PARAMETERS for a file://
# upload-pack); trace2 events in hook.events, where each pack made is a
# "write_pack_file/wrote".
hooked () {
	GIT_CONFIG_GLOBAL="$TRASH_DIRECTORY/hook.gitconfig" \
	GIT_TRACE2_EVENT="$TRASH_DIRECTORY/hook.events" bounded git "$@"
}

# packs_made: the packs made since hook.events began.
packs_made () {
	grep -c "\"key\":\"write_pack_file/wrote\"" hook.events
}

test_expect_success 'setup: stock git with gitpack pack-objects-hook' '
	gitpack=$(command -v gitpack) &&
	printf "[uploadpack]\n\tpackObjectsHook = %s pack-objects-hook --cache-dir=%s\n" \
		"$gitpack" "$TRASH_DIRECTORY/hook-cache" >hook.gitconfig &&
	git clone -q --bare --no-local srv/sha1.git hook-ref-full.git &&
	git clone -q --bare --depth=1 "file://$SRV/sha1.git" hook-ref-shallow.git &&
	snapshot hook-ref-full.git snap/hook-full &&
	snapshot hook-ref-shallow.git snap/hook-shallow
'

test_expect_success 'the hook keeps a pack from its second request on, and sends it' '
	rm -rf hook-cache hook.events &&
	hooked clone -q --bare --no-local srv/sha1.git hook-1.git &&
	same_as hook-full hook-1.git &&
	test "$(packs_made)" = 1 &&
	! ls hook-cache/*.hook &&
	hooked clone -q --bare --no-local srv/sha1.git hook-2.git &&
	same_as hook-full hook-2.git &&
	test "$(packs_made)" = 2 &&
	ls hook-cache/*.hook >entries &&
	test_line_count = 1 entries &&
	entry=$(cat entries) &&
	inode=$(stat -c %i "$entry") &&
	touch -a -d @1000000000 "$entry" &&
	hooked clone -q --bare --no-local srv/sha1.git hook-3.git &&
	same_as hook-full hook-3.git &&
	# no pack made: the entry was sent (its use marks its atime)
	test "$(packs_made)" = 2 &&
	test "$(stat -c %i "$entry")" = $inode &&
	test "$(stat -c %X "$entry")" -gt 1000000000
'

test_expect_success 'the hook: identical clones at once make one pack' '
	rm -rf hook-cache hook.events hook-same-* &&
	sed "s/pack-objects-hook/pack-objects-hook --cache-min-occurrences=1/" \
		hook.gitconfig >hook1.gitconfig &&
	pids= &&
	for i in 1 2 3 4 5 6 7 8
	do
		{ GIT_CONFIG_GLOBAL="$TRASH_DIRECTORY/hook1.gitconfig" \
			GIT_TRACE2_EVENT="$TRASH_DIRECTORY/hook.events" \
			bounded git clone -q --bare --no-local srv/big.git hook-same-$i.git & } &&
		pids="$pids $!" || return 1
	done &&
	for pid in $pids
	do
		wait $pid || return 1
	done &&
	test "$(packs_made)" = 1 &&
	ls hook-cache/*.hook >entries &&
	test_line_count = 1 entries &&
	git -C srv/big.git rev-parse main >expect &&
	for i in 1 2 3 4 5 6 7 8
	do
		git -C hook-same-$i.git fsck --full --no-progress &&
		git -C hook-same-$i.git rev-parse main >actual &&
		test_cmp expect actual || return 1
	done &&
	rm -rf hook-same-*
'

test_expect_success 'the hook: shallow clones (git puts --shallow-file before pack-objects)' '
	rm -rf hook-cache hook.events &&
	hooked clone -q --bare --depth=1 "file://$SRV/sha1.git" hook-shallow-1.git &&
	same_as hook-shallow hook-shallow-1.git &&
	grep "\"argv\":\[.*\"pack-objects-hook\",.*\"--shallow-file\"" hook.events &&
	hooked clone -q --bare --depth=1 "file://$SRV/sha1.git" hook-shallow-2.git &&
	same_as hook-shallow hook-shallow-2.git &&
	hooked clone -q --bare --depth=1 "file://$SRV/sha1.git" hook-shallow-3.git &&
	same_as hook-shallow hook-shallow-3.git &&
	test "$(packs_made)" = 2
'

# --- stopping -------------------------------------------------------------------------------

test_expect_success PYTHON,CURL 'SIGTERM: clones in flight complete, nothing new is taken, exit 0' '
	start_server term &&
	hold_clone p3 $HTTP_PORT http term-http &&
	pid_http=$HELD_PID &&
	hold_clone p4 $GIT_PORT git term-git &&
	pid_git=$HELD_PID &&
	test "$(metric gitpack_serve_generations_in_flight)" = 2 &&
	kill -TERM $SERVER_PID &&
	sleep 1 &&
	server_running $SERVER_PID &&
	test_must_fail curl -s "$HTTP_URL/metrics" &&
	test_must_fail bounded git ls-remote "$GIT_URL/sha1.git" &&
	touch p3.release p4.release &&
	wait $pid_http &&
	wait $pid_git &&
	git -C term-http fsck --full --no-progress &&
	git -C term-git fsck --full --no-progress &&
	# and the server ends, with 0
	wait_for eval "! server_running $SERVER_PID" &&
	wait $SERVER_PID &&
	SERVER_PID= &&
	rm -rf term-http term-git
'

test_done
