#!/bin/sh

test_description='upload-pack with clients nobody here wrote

The upload-pack under test (the candidate: $UPLOAD_PACK, by default
"gitpack upload-pack") serves clones and fetches to stock git (2.39, and
the newer git of GP_TEST_GIT_NEW), libgit2 (pygit2), Dulwich and JGit,
over four transports:

  file://  the client spawns the command named by --upload-pack (git;
	   JGit with remote.origin.uploadpack; Dulwich with its subprocess
	   client, which runs "git upload-pack PATH" through a "git" that
	   hands upload-pack to the candidate);
  ssh://   GIT_SSH_COMMAND (GIT_SSH for JGit) names a fake ssh that runs
	   the candidate on the "remote" path as a forced command would,
	   passing GIT_PROTOCOL through only when asked with
	   "-o SendEnv=GIT_PROTOCOL";
  git://   git daemon on 127.0.0.1, which runs "git upload-pack --strict
	   --timeout=N ." through PATH: a "git" first on its PATH runs the
	   candidate instead;
  http://  git http-backend as a CGI under a small HTTP server (Python),
	   which runs "git upload-pack --stateless-rpc" (after
	   "--advertise-refs" or "--http-backend-info-refs") the same way,
	   with GIT_PROTOCOL from the Git-Protocol header; dumb HTTP is off
	   (http.getanyfile false), so only the candidate can answer.

Cases, in SHA-1 and SHA-256 repositories where the client has SHA-256
(stock git only), protocol v0 and v2 (v1 too for stock git, in SHA-1;
the other clients speak v0 only): a full clone, then a fetch after new pushes; a
--depth=1 clone, then --deepen=1, then a fetch; a --filter=blob:none
clone, then a checkout that fetches a blob lazily, then a fetch. Tags are
annotated, one points at another, and a fetch after the push gets an
annotated tag by include-tag. Each result passes git fsck --full and
holds the objects (cat-file --batch-all-objects), refs and shallow list
that the same steps give with stock git upload-pack as the server. Every
step checks that the candidate did serve it, with the protocol asked for.

Knobs: UPLOAD_PACK="CMD ARGS" (a command taking upload-pack'\''s options
and a directory; "git upload-pack" checks the test itself),
GP_TEST_GIT_NEW, GP_TEST_PYTHON (a python3 with dulwich and pygit2),
JGIT_CLASSPATH.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# --- the candidate ---------------------------------------------------------

UPLOAD_PACK=${UPLOAD_PACK:-gitpack upload-pack}
echo "# upload-pack under test: $UPLOAD_PACK"

# A directory of our own programs, and where they log.
IP=$TRASH_DIRECTORY/interop
REAL_GIT=$(command -v git)

# --- the clients -----------------------------------------------------------

# bounded CMD...: CMD, killed after 30 seconds (a server that hangs must
# fail the test, not the whole run).
if command -v timeout >/dev/null 2>&1
then
	bounded () {
		timeout 30 "$@"
	}
else
	bounded () {
		"$@"
	}
fi


# A python3 that has the module $1 (the Debian packages python3-dulwich and
# python3-pygit2 install for the system python, not for another one that may
# come first on PATH).
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
if DULWICH_PY=$(find_python dulwich)
then
	test_set_prereq DULWICH
	echo "# dulwich $($DULWICH_PY -c 'import dulwich; print(".".join(map(str, dulwich.__version__)))'): protocol v0 only, SHA-1 only, no --filter"
else
	echo "# no dulwich (python3-dulwich): its cases are skipped"
fi
if PYGIT2_PY=$(find_python pygit2)
then
	test_set_prereq PYGIT2
	echo "# pygit2 $($PYGIT2_PY -c 'import pygit2; print(pygit2.__version__, "libgit2", pygit2.LIBGIT2_VERSION)'): git:// and http:// only (file:// is read in-process, ssh:// goes through libssh2), protocol v0 only, SHA-1 only, no shallow, no --filter"
else
	echo "# no pygit2 (python3-pygit2): its cases are skipped"
fi

# JGit runs with our home as its user.home (it would read the real user's
# ~/.gitconfig otherwise: Java takes the home from the password file, not
# from $HOME). Debian's jgit-cli 4.11 does not start unless the LFS and
# Apache HTTP jars are on its class path, and needs Apache's HTTP client
# for http://.
jgit_ () {
	JAVA_TOOL_OPTIONS="-Duser.home=$HOME" GIT_SSH="$IP/fake-ssh" \
		bounded jgit "$@"
}
if command -v jgit >/dev/null 2>&1
then
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
	if jgit_version=$(jgit_ version 2>/dev/null)
	then
		test_set_prereq JGIT
		echo "# $jgit_version: protocol v0 only, SHA-1 only, no shallow, no --filter"
	else
		echo "# jgit does not start: its cases are skipped"
	fi
else
	echo "# no jgit (jgit-cli): its cases are skipped"
fi

if test_have_prereq GIT_NEW
then
	echo "# newer git: $("$GP_TEST_GIT_NEW" --version)"
	if test -x "$("$GP_TEST_GIT_NEW" --exec-path)/git-remote-http"
	then
		test_set_prereq GIT_NEW_HTTP
	else
		echo "# the newer git has no git-remote-http (built with NO_CURL): its http:// cases are skipped"
	fi
else
	echo "# no newer git (set GP_TEST_GIT_NEW to a git 2.55 build): its cases are skipped"
fi

GIT_DAEMON=$(git --exec-path)/git-daemon
if test -x "$GIT_DAEMON"
then
	test_set_prereq DAEMON
else
	echo "# no git-daemon: the git:// cases are skipped"
fi

GIT_HTTP_BACKEND=$(git --exec-path)/git-http-backend
if HTTPD_PY=$(find_python http.server) && test -x "$GIT_HTTP_BACKEND"
then
	test_set_prereq HTTPD
else
	echo "# no python3 or no git-http-backend: the http:// cases are skipped"
fi

# --- helpers -------------------------------------------------------------------

# gitc CLIENT PROTO ARGS...: git ARGS run by CLIENT ("git": stock git;
# "new": the git of GP_TEST_GIT_NEW) asking for protocol PROTO. The -c
# reaches the git processes it starts too (a lazy fetch).
gitc () {
	case "$1" in
	git) gc_bin_=git ;;
	new) gc_bin_=$GP_TEST_GIT_NEW ;;
	esac
	gc_proto_=$2
	shift 2
	GIT_SSH_COMMAND="$IP/fake-ssh" bounded "$gc_bin_" -c protocol.version=$gc_proto_ "$@"
}

# pyclient LIB ARGS...: the client below, with dulwich or pygit2; the
# "git" that dulwich spawns for file:// is $PYCLIENT_GIT (the candidate's by
# default).
pyclient () {
	case "$1" in
	dulwich) pc_py_=$DULWICH_PY ;;
	pygit2) pc_py_=$PYGIT2_PY ;;
	esac
	PYCLIENT_GIT=${PYCLIENT_GIT:-$IP/daemon-path/git} GIT_SSH_COMMAND="$IP/fake-ssh" \
		bounded "$pc_py_" "$IP/pyclient.py" "$@"
}

# url TRANSPORT ALGO: the server repository of ALGO as TRANSPORT reaches it.
url () {
	case "$1" in
	file) echo "file://$TRASH_DIRECTORY/srv/$2.git" ;;
	ssh) echo "ssh://server.example$TRASH_DIRECTORY/srv/$2.git" ;;
	daemon) echo "git://127.0.0.1:$DAEMON_PORT/$2.git" ;;
	http) echo "http://127.0.0.1:$HTTP_PORT/$2.git" ;;
	esac
}

# clone_opt TRANSPORT: what a git clone needs to reach the candidate.
clone_opt () {
	case "$1" in
	file) echo "--upload-pack=$IP/upload-pack" ;;
	esac
}

# after_clone TRANSPORT DIR: later fetches from DIR (lazy ones too) reach the
# candidate (git clone --upload-pack does not record the command).
after_clone () {
	case "$1" in
	file) git -C "$2" config remote.origin.uploadpack "$IP/upload-pack" ;;
	esac
}

# fresh: forget who served what.
fresh () {
	: >"$IP/served.log"
}

# served PROTO: the candidate ran since "fresh", and each time with the
# protocol PROTO in GIT_PROTOCOL (0: no version 1 or 2 there).
served () {
	if ! test -s "$IP/served.log"
	then
		echo "served: the candidate upload-pack did not run" >&2
		return 1
	fi
	if test "$1" = 0
	then
		if grep "^GIT_PROTOCOL=[^ ]*version=[12]" "$IP/served.log" >&2
		then
			echo "served: protocol v0 asked for, above is what ran" >&2
			return 1
		fi
	elif grep -v "^GIT_PROTOCOL=[^ ]*version=$1" "$IP/served.log" >&2
	then
		echo "served: protocol v$1 asked for, above is what ran" >&2
		return 1
	fi
	fresh
}

# snapshot DIR NAME: what a client repository holds, in NAME.objs (every
# object present, with its type), NAME.refs (every ref), NAME.rrefs (the
# refs the remote gave: under refs/remotes/origin/ but HEAD, and refs/tags/)
# and NAME.shallow (the shallow list).
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

# same_as REF DIR [remote]: DIR passes git fsck --full and holds what the
# snapshot snap/REF holds: the same objects, shallow list and refs (with
# "remote", the same refs from the remote: clients lay out local branches
# their own way).
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

# A file of the server's main branch whose blob a partial clone fetches
# lazily.
LAZY_FILE=a/b/deep.txt

# --- setup -------------------------------------------------------------------

test_expect_success 'setup: the candidate and the programs that reach it' '
	mkdir -p "$IP/daemon-path" snap srv &&
	set -- $UPLOAD_PACK &&
	up_prog=$(command -v "$1") &&
	shift &&

	# The candidate, logging how it was called, with the PATH of the
	# tests (not the one given to git daemon or http-backend) and no
	# client'\''s GIT_EXEC_PATH (the newer git sets one).
	cat >"$IP/upload-pack" <<-EOF &&
	#!/bin/sh
	echo "GIT_PROTOCOL=\${GIT_PROTOCOL-} args=\$*" >>"$IP/served.log"
	PATH='\''$PATH'\''
	unset GIT_EXEC_PATH
	exec "$up_prog" $* "\$@"
	EOF

	# What git daemon, git http-backend and Dulwich run as "git".
	cat >"$IP/daemon-path/git" <<-EOF &&
	#!/bin/sh
	if test "\$1" = upload-pack
	then
		shift
		exec "$IP/upload-pack" "\$@"
	fi
	unset GIT_EXEC_PATH
	exec "$REAL_GIT" "\$@"
	EOF

	# The ssh.
	cat >"$IP/fake-ssh" <<-EOF &&
	#!/bin/sh
	# ssh [OPTIONS] HOST COMMAND...: runs the candidate upload-pack on the
	# path COMMAND names, as a forced command on the server would, in a
	# clean environment but GIT_PROTOCOL if "-o SendEnv=GIT_PROTOCOL"
	# (sshd with "AcceptEnv GIT_PROTOCOL"). -G (how git tells OpenSSH)
	# succeeds.
	sendenv=
	while test \$# -gt 0
	do
		case "\$1" in
		-G) exit 0 ;;
		-o) test "\$2" = SendEnv=GIT_PROTOCOL && sendenv=t; shift 2 ;;
		-[bcDEeFIiJLlmOpQRSWw]) shift 2 ;;
		-*) shift ;;
		*) break ;;
		esac
	done
	shift
	cmd="\$*"
	eval "set -- \$cmd"
	if test \$# = 2 && test "\$1" = git-upload-pack
	then
		dir=\$2
	elif test \$# = 3 && test "\$1" = git && test "\$2" = upload-pack
	then
		dir=\$3
	else
		echo "fake-ssh: refused: \$cmd" >&2
		exit 128
	fi
	test -n "\$sendenv" || unset GIT_PROTOCOL
	unset GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT GIT_DIR GIT_WORK_TREE \
		GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES \
		GIT_INDEX_FILE GIT_NAMESPACE GIT_PREFIX
	cd "\$HOME" || exit 128
	exec "$IP/upload-pack" "\$dir"
	EOF
	chmod +x "$IP/upload-pack" "$IP/daemon-path/git" "$IP/fake-ssh" &&

	# The Python client: clone URL DIR, fetch DIR; --depth=N before.
	cat >"$IP/pyclient.py" <<-\EOF &&
	import os
	import sys

	def main():
	    lib, op = sys.argv[1], sys.argv[2]
	    args = sys.argv[3:]
	    depth = None
	    if args and args[0].startswith("--depth="):
	        depth = int(args.pop(0)[len("--depth="):])
	    if lib == "dulwich":
	        import dulwich.client
	        import dulwich.porcelain as porcelain
	        # file:// and paths: spawn "git upload-pack PATH" (the subprocess
	        # client) rather than read the repository in-process; its
	        # git_command cannot be set in 0.21 (it is read into an unbound
	        # local), find_git_command can.
	        git = os.environ["PYCLIENT_GIT"]
	        dulwich.client.default_local_git_client_cls = \
	            dulwich.client.SubprocessGitClient
	        dulwich.client.find_git_command = lambda: [git]
	        err = sys.stderr.buffer
	        if op == "clone":
	            porcelain.clone(args[0], args[1], depth=depth,
	                            errstream=err).close()
	        elif depth is None:
	            porcelain.fetch(args[0], errstream=err, outstream=sys.stderr)
	        else:
	            # porcelain.fetch with a depth, in a repository that has
	            # annotated tags, fails in 0.21 (its determine_wants_all
	            # takes a tag for a commit): want every ref that is missing
	            # and every commit tip again (to deepen it).
	            from dulwich.client import get_transport_and_path
	            from dulwich.refs import _import_remote_refs
	            from dulwich.repo import Repo
	            r = Repo(args[0])
	            url = r.get_config().get((b"remote", b"origin"), b"url")
	            client, path = get_transport_and_path(url.decode())

	            def wants(refs, depth=None):
	                out = []
	                for name, sha in refs.items():
	                    if name == b"HEAD" or name.endswith(b"^{}"):
	                        continue
	                    if sha not in r.object_store:
	                        out.append(sha)
	                    elif r[sha].type_name == b"commit":
	                        out.append(sha)
	                return list(dict.fromkeys(out))

	            result = client.fetch(path, r, determine_wants=wants,
	                                  progress=err.write, depth=depth)
	            _import_remote_refs(r.refs, "origin", result.refs)
	            r.close()
	    elif lib == "pygit2":
	        import pygit2
	        if depth is not None:
	            sys.exit("pyclient: no depth with pygit2")
	        if op == "clone":
	            pygit2.clone_repository(args[0], args[1])
	        else:
	            pygit2.Repository(args[0]).remotes["origin"].fetch()
	    else:
	        sys.exit("pyclient: unknown library " + lib)

	main()
	EOF
	fresh
'

# The server repository: main with a merged side branch, annotated tags
# (one of them tagging another), a lightweight one; packed with a bitmap.
for algo in $test_hash_algos
do
	test_expect_success "setup: the server repository ($algo)" '
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
		test_commit -C work-$algo --no-tag "side 2" a/b/side2 &&
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

		git init -q --bare -b main --object-format=$algo srv/$algo.git &&
		git -C srv/$algo.git config uploadpack.allowFilter true &&
		git -C srv/$algo.git config uploadpack.allowAnySHA1InWant true &&
		git -C srv/$algo.git config http.getanyfile false &&
		git -C work-$algo push -q "$TRASH_DIRECTORY/srv/$algo.git" \
			"refs/heads/*:refs/heads/*" "refs/tags/*:refs/tags/*" &&
		git -C srv/$algo.git repack -adqb &&
		git -C srv/$algo.git fsck --full --no-progress
	'

	# What stock git upload-pack gives stock git, as the snapshots
	# <algo>-<case>: full (clone), shallow1 (--depth=1), shallow2 (then
	# --deepen=1), partial (--filter=blob:none), lazy (then a checkout).
	test_expect_success "setup: stock git clones from stock upload-pack ($algo)" '
		git clone -q "$(url file $algo)" ref-$algo-full &&
		snapshot ref-$algo-full snap/$algo-full &&
		git clone -q --depth=1 "$(url file $algo)" ref-$algo-shallow &&
		snapshot ref-$algo-shallow snap/$algo-shallow1 &&
		git -C ref-$algo-shallow fetch -q --deepen=1 &&
		snapshot ref-$algo-shallow snap/$algo-shallow2 &&
		git clone -q --filter=blob:none --no-checkout "$(url file $algo)" ref-$algo-partial &&
		snapshot ref-$algo-partial snap/$algo-partial &&
		git -C ref-$algo-partial checkout -q HEAD -- $LAZY_FILE &&
		snapshot ref-$algo-partial snap/$algo-lazy &&

		# the cases check something: the snapshots differ
		! test_cmp snap/$algo-shallow1.objs snap/$algo-shallow2.objs >/dev/null &&
		! test_cmp snap/$algo-shallow2.objs snap/$algo-full.objs >/dev/null &&
		! test_cmp snap/$algo-partial.objs snap/$algo-lazy.objs >/dev/null &&
		! test_cmp snap/$algo-lazy.objs snap/$algo-full.objs >/dev/null &&
		test_file_not_empty snap/$algo-shallow1.shallow &&
		grep " tag\$" snap/$algo-full.objs >tags &&
		test_line_count = 3 tags
	'
done

# --- git daemon ------------------------------------------------------------------

# start_daemon: git daemon on 127.0.0.1 and a free port ($DAEMON_PORT),
# serving srv/, its pid (a "timeout" that ends it within ten minutes, and
# its children with it) in $DAEMON_PID.
start_daemon () {
	sd_try_=0
	while test $sd_try_ -lt 5
	do
		sd_try_=$((sd_try_ + 1))
		DAEMON_PORT=$(awk -v p=$$ -v t=$sd_try_ \
			"BEGIN { srand(); print 20000 + (int(rand() * 40000) + p + 7919 * t) % 40000 }")
		: >daemon.log
		PATH="$IP/daemon-path:$PATH" timeout 600 "$GIT_DAEMON" \
			--listen=127.0.0.1 --port=$DAEMON_PORT --reuseaddr \
			--export-all --base-path="$TRASH_DIRECTORY/srv" \
			--timeout=60 --informative-errors --verbose \
			</dev/null >>daemon.log 2>&1 &
		DAEMON_PID=$!
		sd_wait_=0
		while test $sd_wait_ -lt 100
		do
			if grep "Ready to rumble" daemon.log >/dev/null
			then
				return 0
			fi
			kill -0 $DAEMON_PID 2>/dev/null || break
			sleep 0.1
			sd_wait_=$((sd_wait_ + 1))
		done
		cat daemon.log >&2
		kill $DAEMON_PID 2>/dev/null
		wait $DAEMON_PID 2>/dev/null
	done
	DAEMON_PID=
	return 1
}

test_expect_success DAEMON 'setup: git daemon runs the candidate' '
	start_daemon &&
	test_set_prereq DAEMON_UP &&
	fresh &&
	git -c protocol.version=0 ls-remote "$(url daemon sha1)" >actual &&
	served 0 &&
	grep "	refs/heads/main\$" actual &&
	git -c protocol.version=2 ls-remote "$(url daemon sha256)" >actual &&
	served 2 &&
	grep "	refs/heads/main\$" actual
'

# start_httpd: an HTTP server on 127.0.0.1 running git http-backend for
# srv/ ($HTTP_PORT), its pid (a "timeout" that ends it within ten minutes)
# in $HTTPD_PID. http-backend puts its exec path first on PATH: that path
# is daemon-path, whose "git" runs the candidate.
start_httpd () {
	rm -f "$IP/http.port" &&
	: >httpd.log &&
	GIT_EXEC_PATH="$IP/daemon-path" timeout 600 "$HTTPD_PY" "$IP/httpd.py" \
		"$GIT_HTTP_BACKEND" "$TRASH_DIRECTORY/srv" "$IP/http.port" \
		"$TRASH_DIRECTORY/httpd.log" </dev/null >>httpd.log 2>&1 &
	HTTPD_PID=$!
	sh_wait_=0
	while test $sh_wait_ -lt 100
	do
		if test -f "$IP/http.port"
		then
			HTTP_PORT=$(cat "$IP/http.port")
			return 0
		fi
		kill -0 $HTTPD_PID 2>/dev/null || break
		sleep 0.1
		sh_wait_=$((sh_wait_ + 1))
	done
	cat httpd.log >&2
	kill $HTTPD_PID 2>/dev/null
	wait $HTTPD_PID 2>/dev/null
	HTTPD_PID=
	return 1
}

test_expect_success HTTPD 'setup: an HTTP server whose http-backend runs the candidate' '
	# GET and POST as CGI (RFC 3875), every request header passed on as
	# HTTP_*, a chunked request body read whole.
	cat >"$IP/httpd.py" <<-\EOF &&
	import http.server
	import os
	import subprocess
	import sys
	import threading
	import time

	backend, root, portfile, logfile = sys.argv[1:5]

	class Handler(http.server.BaseHTTPRequestHandler):
	    def log_message(self, fmt, *args):
	        with open(logfile, "a") as f:
	            f.write("%s\n" % (fmt % args))

	    def body(self):
	        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
	            data = b""
	            while True:
	                size = int(self.rfile.readline().split(b";")[0], 16)
	                if size == 0:
	                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
	                        pass
	                    return data
	                data += self.rfile.read(size)
	                self.rfile.readline()
	        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

	    def cgi(self):
	        path, _, query = self.path.partition("?")
	        data = self.body() if self.command == "POST" else b""
	        env = dict(os.environ)
	        env.update({
	            "GIT_PROJECT_ROOT": root,
	            "GIT_HTTP_EXPORT_ALL": "1",
	            "GATEWAY_INTERFACE": "CGI/1.1",
	            "SERVER_PROTOCOL": self.request_version,
	            "REQUEST_METHOD": self.command,
	            "PATH_INFO": path,
	            "QUERY_STRING": query,
	            "REMOTE_ADDR": self.client_address[0],
	            "CONTENT_LENGTH": str(len(data)),
	        })
	        for k, v in self.headers.items():
	            k = k.upper().replace("-", "_")
	            if k == "CONTENT_TYPE":
	                env[k] = v
	            elif k not in ("CONTENT_LENGTH", "TRANSFER_ENCODING"):
	                env["HTTP_" + k] = v
	        with open(logfile, "a") as err:
	            out = subprocess.run([backend], input=data, env=env,
	                                 stdout=subprocess.PIPE, stderr=err).stdout
	        head, sep, content = out.partition(b"\r\n\r\n")
	        if not sep:
	            head, sep, content = out.partition(b"\n\n")
	        status = 200
	        headers = []
	        for line in head.decode("latin-1").splitlines():
	            k, _, v = line.partition(":")
	            if k.lower() == "status":
	                status = int(v.split()[0])
	            elif k:
	                headers.append((k, v.strip()))
	        self.send_response(status)
	        for k, v in headers:
	            self.send_header(k, v)
	        self.send_header("Content-Length", str(len(content)))
	        self.end_headers()
	        self.wfile.write(content)

	    do_GET = cgi
	    do_POST = cgi

	server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
	threading.Thread(target=server.serve_forever, daemon=True).start()
	with open(portfile + ".tmp", "w") as f:
	    f.write("%d\n" % server.server_address[1])
	os.rename(portfile + ".tmp", portfile)
	time.sleep(600)
	EOF
	start_httpd &&
	test_set_prereq HTTP_UP &&
	fresh &&
	git -c protocol.version=0 ls-remote "$(url http sha1)" >actual &&
	served 0 &&
	grep "	refs/heads/main\$" actual &&
	git -c protocol.version=2 ls-remote "$(url http sha256)" >actual &&
	served 2 &&
	grep "	refs/heads/main\$" actual &&
	# and no dumb HTTP
	test_must_fail "$HTTPD_PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1])" \
		"$(url http sha1)/objects/info/packs"
'

# --- the cases ---------------------------------------------------------------------

# A client at a transport: "CLIENT:TRANSPORT:PREREQS". The git ones also
# take each protocol of $git_protos.
git_clients="git:file: git:ssh: git:daemon:DAEMON_UP git:http:HTTP_UP
new:file:GIT_NEW new:ssh:GIT_NEW new:daemon:GIT_NEW,DAEMON_UP
new:http:GIT_NEW_HTTP,HTTP_UP"

# tpre PREREQ TRANSPORT: PREREQ and what TRANSPORT needs.
tpre () {
	case "$2" in
	daemon) echo "$1,DAEMON_UP" ;;
	http) echo "$1,HTTP_UP" ;;
	*) echo "$1" ;;
	esac
}

# client_label CLIENT: for titles.
client_label () {
	case "$1" in
	git) echo "git $(git --version | sed "s/^git version //")" ;;
	new) echo "newer git" ;;
	*) echo "$1" ;;
	esac
}

# split_client CT: c (the client), t (the transport), pre (its test
# prerequisite) and label, from a "client:transport:prereq" entry.
split_client () {
	c=${1%%:*}
	t=${1#*:}
	pre=${t#*:}
	t=${t%%:*}
	label="$(client_label $c), $t"
}

# protos CLIENT CASE: the protocol versions to try in $algo (for time: v1
# differs from v0 by a line, tried in SHA-1 only; the newer git speaks v0
# as 2.39 does, it tries v2 only).
protos () {
	case "$1,$2,$algo" in
	git,full,sha1) echo "0 1 2" ;;
	git,*) echo "0 2" ;;
	new,*) echo 2 ;;
	esac
}

# Stage A: clones (and deepening, lazy fetches) from the server as set up.
for algo in $test_hash_algos
do
	for ct in $git_clients
	do
		split_client $ct
		for p in $(protos $c full)
		do
			d=$c-$t-v$p-$algo
			test_expect_success $pre "$label, v$p: clone ($algo)" '
				fresh &&
				gitc $c $p clone -q $(clone_opt $t) "$(url $t $algo)" $d-full &&
				after_clone $t $d-full &&
				served $p &&
				same_as $algo-full $d-full
			'
		done
		for p in $(protos $c shallow)
		do
			d=$c-$t-v$p-$algo
			test_expect_success $pre "$label, v$p: clone --depth=1, fetch --deepen=1 ($algo)" '
				fresh &&
				gitc $c $p clone -q --depth=1 $(clone_opt $t) "$(url $t $algo)" $d-shallow &&
				after_clone $t $d-shallow &&
				served $p &&
				same_as $algo-shallow1 $d-shallow &&
				gitc $c $p -C $d-shallow fetch -q --deepen=1 &&
				served $p &&
				same_as $algo-shallow2 $d-shallow
			'
			test_expect_success $pre "$label, v$p: clone --filter=blob:none, lazy fetch ($algo)" '
				fresh &&
				gitc $c $p clone -q --filter=blob:none --no-checkout \
					$(clone_opt $t) "$(url $t $algo)" $d-partial &&
				after_clone $t $d-partial &&
				served $p &&
				same_as $algo-partial $d-partial &&
				gitc $c $p -C $d-partial checkout -q HEAD -- $LAZY_FILE &&
				served $p &&
				same_as $algo-lazy $d-partial
			'
		done
	done
done

# Dulwich: its own references, from stock git upload-pack (it clones every
# ref at the depth asked, where git clone --depth takes one branch).
test_expect_success DULWICH 'setup: dulwich clones from stock upload-pack (sha1)' '
	PYCLIENT_GIT=$REAL_GIT pyclient dulwich clone "$(url file sha1)" ref-dulwich-full &&
	snapshot ref-dulwich-full snap/dulwich-full &&
	PYCLIENT_GIT=$REAL_GIT pyclient dulwich clone --depth=1 "$(url file sha1)" ref-dulwich-shallow &&
	snapshot ref-dulwich-shallow snap/dulwich-shallow1 &&
	PYCLIENT_GIT=$REAL_GIT pyclient dulwich fetch --depth=2 ref-dulwich-shallow &&
	snapshot ref-dulwich-shallow snap/dulwich-shallow2 &&
	test_cmp snap/sha1-full.objs snap/dulwich-full.objs &&
	test_cmp snap/sha1-full.rrefs snap/dulwich-full.rrefs &&
	! test_cmp snap/dulwich-shallow1.objs snap/dulwich-shallow2.objs >/dev/null &&
	test_file_not_empty snap/dulwich-shallow1.shallow
'

for t in file ssh daemon http
do
	pre=$(tpre DULWICH $t)
	d=dulwich-$t
	test_expect_success $pre "dulwich, $t, v0: clone (sha1)" '
		fresh &&
		pyclient dulwich clone "$(url $t sha1)" $d-full &&
		served 0 &&
		same_as dulwich-full $d-full remote
	'
	test_expect_success $pre "dulwich, $t, v0: clone --depth=1, fetch --depth=2 (sha1)" '
		fresh &&
		pyclient dulwich clone --depth=1 "$(url $t sha1)" $d-shallow &&
		served 0 &&
		same_as dulwich-shallow1 $d-shallow remote &&
		pyclient dulwich fetch --depth=2 $d-shallow &&
		served 0 &&
		same_as dulwich-shallow2 $d-shallow remote
	'
done

for t in daemon http
do
	test_expect_success $(tpre PYGIT2 $t) "pygit2, $t, v0: clone (sha1)" '
		fresh &&
		pyclient pygit2 clone "$(url $t sha1)" pygit2-$t-full &&
		served 0 &&
		same_as sha1-full pygit2-$t-full remote
	'
done

for t in file ssh daemon http
do
	pre=$(tpre JGIT $t)
	d=jgit-$t
	test_expect_success $pre "jgit, $t, v0: clone (sha1)" '
		fresh &&
		if test $t = file
		then
			# jgit clone cannot name an upload-pack; jgit fetch
			# spawns remote.origin.uploadpack when it is set (and
			# serves file:// in-process otherwise)
			jgit_ init $d-full &&
			git -C $d-full remote add origin "$(url $t sha1)" &&
			git -C $d-full config remote.origin.uploadpack "$IP/upload-pack" &&
			(cd $d-full && jgit_ fetch origin) 2>&1
		else
			jgit_ clone "$(url $t sha1)" $d-full
		fi &&
		served 0 &&
		same_as sha1-full $d-full remote
	'
done

# Stage B: the server gets new commits on main, an annotated tag on the new
# tip (fetched by include-tag), a new branch; the clients fetch.
for algo in $test_hash_algos
do
	test_expect_success "push to the server; stock git fetches ($algo)" '
		for i in 11 12 13
		do
			echo "change $i" >>work-$algo/shared.txt &&
			test_commit -C work-$algo --no-tag "main $i" a/file$i || return 1
		done &&
		git -C work-$algo tag -a -m "version 1.0" v1.0 &&
		git -C work-$algo checkout -q -b topic HEAD~1 &&
		test_commit -C work-$algo --no-tag "topic 1" a/topic1 &&
		git -C work-$algo checkout -q main &&
		git -C work-$algo push -q "$TRASH_DIRECTORY/srv/$algo.git" \
			main topic v1.0 &&

		for k in full shallow partial
		do
			git -C ref-$algo-$k fetch -q &&
			snapshot ref-$algo-$k snap/$algo-$k-B || return 1
		done &&
		! test_cmp snap/$algo-full.objs snap/$algo-full-B.objs >/dev/null &&
		grep " refs/tags/v1.0\$" snap/$algo-full-B.refs &&
		grep " refs/remotes/origin/topic\$" snap/$algo-full-B.refs
	'
done

for algo in $test_hash_algos
do
	for ct in $git_clients
	do
		split_client $ct
		for p in $(protos $c full)
		do
			d=$c-$t-v$p-$algo
			test_expect_success $pre "$label, v$p: fetch after a push ($algo)" '
				fresh &&
				gitc $c $p -C $d-full fetch -q &&
				served $p &&
				same_as $algo-full-B $d-full
			'
		done
		for p in $(protos $c shallow)
		do
			d=$c-$t-v$p-$algo
			test_expect_success $pre "$label, v$p: fetch into the shallow clone ($algo)" '
				fresh &&
				gitc $c $p -C $d-shallow fetch -q &&
				served $p &&
				same_as $algo-shallow-B $d-shallow
			'
			test_expect_success $pre "$label, v$p: fetch into the partial clone ($algo)" '
				fresh &&
				gitc $c $p -C $d-partial fetch -q &&
				served $p &&
				same_as $algo-partial-B $d-partial
			'
		done
	done
done

test_expect_success DULWICH 'dulwich fetches from stock upload-pack (sha1)' '
	PYCLIENT_GIT=$REAL_GIT pyclient dulwich fetch ref-dulwich-full &&
	snapshot ref-dulwich-full snap/dulwich-full-B &&
	PYCLIENT_GIT=$REAL_GIT pyclient dulwich fetch --depth=2 ref-dulwich-shallow &&
	snapshot ref-dulwich-shallow snap/dulwich-shallow-B &&
	test_cmp snap/sha1-full-B.objs snap/dulwich-full-B.objs &&
	test_cmp snap/sha1-full-B.rrefs snap/dulwich-full-B.rrefs
'

for t in file ssh daemon http
do
	pre=$(tpre DULWICH $t)
	d=dulwich-$t
	test_expect_success $pre "dulwich, $t, v0: fetch after a push (sha1)" '
		fresh &&
		pyclient dulwich fetch $d-full &&
		served 0 &&
		same_as dulwich-full-B $d-full remote
	'
	test_expect_success $pre "dulwich, $t, v0: fetch --depth=2 into the shallow clone (sha1)" '
		fresh &&
		pyclient dulwich fetch --depth=2 $d-shallow &&
		served 0 &&
		same_as dulwich-shallow-B $d-shallow remote
	'
done

for t in daemon http
do
	test_expect_success $(tpre PYGIT2 $t) "pygit2, $t, v0: fetch after a push (sha1)" '
		fresh &&
		pyclient pygit2 fetch pygit2-$t-full &&
		served 0 &&
		same_as sha1-full-B pygit2-$t-full remote
	'
done

for t in file ssh daemon http
do
	pre=$(tpre JGIT $t)
	d=jgit-$t
	test_expect_success $pre "jgit, $t, v0: fetch after a push (sha1)" '
		fresh &&
		(cd $d-full && jgit_ fetch) 2>&1 &&
		served 0 &&
		same_as sha1-full-B $d-full remote
	'
done

test_expect_success DAEMON_UP 'stop git daemon' '
	kill $DAEMON_PID &&
	wait $DAEMON_PID
	! kill -0 $DAEMON_PID 2>/dev/null
'

test_expect_success HTTP_UP 'stop the HTTP server' '
	kill $HTTPD_PID &&
	wait $HTTPD_PID
	! kill -0 $HTTPD_PID 2>/dev/null
'

test_done
