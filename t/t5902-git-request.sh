#!/bin/sh

test_description='the request line of git:// (server/git-request.h)

test-tool http git-request on lines as git daemon clients send them
(protocol v0 and v2, with and without host=) and on malformed ones: the
service, the path, the host, the extra parameters joined as GIT_PROTOCOL,
and the repository the path may name (the rules of an HTTP path).'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# line NAME FORMAT [ARG...]: printf FORMAT into NAME, then parse it into NAME.out.
line () {
	gp_line_name_=$1
	shift
	printf "$@" >"$gp_line_name_" &&
	test-tool http git-request <"$gp_line_name_" >"$gp_line_name_.out"
}

test_expect_success 'protocol v0 with host=' '
	line v0 "git-upload-pack /project.git\0host=example.com:9418\0" &&
	cat >expect <<-\END &&
	service git-upload-pack upload-pack
	path /project.git
	host example.com
	params 
	repo project.git
	END
	test_cmp expect v0.out
'

test_expect_success 'protocol v2: the extra parameters after an empty field' '
	line v2 "git-upload-pack /a/b.git\0host=h\0\0version=2\0object-format=sha256\0" &&
	grep "^params version=2:object-format=sha256\$" v2.out &&
	grep "^repo a/b.git\$" v2.out
'

test_expect_success 'no host, parameters only' '
	line nohost "git-upload-archive /r\0\0version=2\0" &&
	grep "^service git-upload-archive upload-archive\$" nohost.out &&
	grep "^host \$" nohost.out &&
	grep "^params version=2\$" nohost.out
'

test_expect_success 'an IPv6 host keeps its brackets, loses its port' '
	line v6 "git-receive-pack /r.git\0host=[::1]:9418\0" &&
	grep "^host \[::1\]\$" v6.out
'

test_expect_success 'an old client'"'"'s LF after the path is no part of it' '
	line lf "git-upload-pack /r.git\n" &&
	grep "^path /r.git\$" lf.out
'

test_expect_success 'a service Git does not name parses, as none' '
	line other "git-frobnicate /r.git\0" &&
	grep "^service git-frobnicate none\$" other.out
'

test_expect_success 'paths that could leave the base path name no repository' '
	for p in "/../etc" "/a/../../b" "/a//b" "/./a" "/a/.." "relative" "/"
	do
		line p "git-upload-pack $p\0" &&
		grep "^no-repo " p.out || return 1
	done
'

test_expect_success 'malformed lines are refused' '
	line a "nonsense" && grep "^bad " a.out &&
	line b "git-upload-pack" && grep "^bad " b.out &&
	line c "git-upload-pack \0" && grep "^bad " c.out &&
	line d "gi /x\0" && grep "^bad " d.out &&
	line e "git-upload-pack /x\0host=unterminated" && grep "^bad unterminated host" e.out &&
	line f "git-upload-pack /x\0host=h\0junk\0" && grep "^bad extra parameters" f.out &&
	line g "git-upload-pack /x\0\0bad param\0" && grep "^bad bad extra parameter" g.out
'

test_expect_success 'extra parameters are bounded' '
	long=$(printf "%01100d" 0) &&
	line long "git-upload-pack /x\0\0$long\0" &&
	grep "^bad bad extra parameter" long.out
'

test_done
