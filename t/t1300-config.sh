#!/bin/sh

test_description='config files: syntax, value types, includes and precedence

Stock git is the oracle: every file is read by "git config" and by
"test-tool config", and the two listings must agree.'

. ./test-lib.sh

SQ="'"

# check_file FILE: test-tool lists FILE (with its includes) exactly as
# "git config --includes -f FILE --list" does.
check_file () {
	git config --includes -f "$1" --list >expect &&
	test-tool config read-file "$1" >actual &&
	test_cmp expect actual
}

# check_bad FORMAT: the file printf FORMAT writes is refused by git and
# by test-tool, with the same "bad config line N in file bad" message.
check_bad () {
	printf "$1" >bad &&
	! git config -f bad --list >/dev/null 2>expect &&
	test_must_fail test-tool config read-file bad >out 2>actual &&
	test_must_be_empty out &&
	test_cmp expect actual
}

# check_scopes: test-tool sees the same config, in the same order and
# scopes, as git does from the current directory.
check_scopes () {
	git config --list --show-scope >expect &&
	test-tool config list --show-scope >actual &&
	test_cmp expect actual
}

test_expect_success 'sections, subsections and canonical keys' '
	cat >basic <<-\EOF &&
	# a comment
	; another comment
	[Core]
		Bare = false
		repositoryFormatVersion = 0
	[remote "Origin"]
		URL = https://example.com/r.git
		fetch = +refs/heads/*:refs/remotes/Origin/*
	[Branch.MAIN]
		Remote = Origin
	[section "with \"quotes\" and \\ backslash"]
		key = 1
	[section "dropped \t escape"]
		key = 2
	[ "nosection"]
		key = 3
	[dotted.many.parts]
		key = 4
	[Sec-1]
		Key-2 = 5
	EOF
	check_file basic &&
	test-tool config read-file basic >actual &&
	grep "^remote.Origin.url=https://example.com/r.git$" actual &&
	grep "^branch.main.remote=Origin$" actual &&
	grep "^section.dropped t escape.key=2$" actual
'

test_expect_success 'values: quoting, escapes, comments and whitespace' '
	sed -e "s/Q/\"/g" -e "s/T/	/g" -e "s/[$]$//" >values <<-\EOF &&
	[v]
		plain = value
		internal = a  bTTc
		trailing = value   $
		trailingtab = valueTT$
		quoted = Q  padded  Q
		mixed = x QQ y
		partial = aQb cQd
		escapes = a\tb\nc\bd\\e\Qf
		comment = value # comment
		semicolon = value ; comment
		quotedhash = Qa # b ; cQ
		continued = first \
			second
		quotedcont = Qone\
	twoQ
		empty =
		emptyquoted = QQ
		bare
		Tspaced  T=  T x
	[v] inline = on the header line
	EOF
	check_file values
'

test_expect_success 'CRLF, byte order mark, keys before any section' '
	printf "\357\273\277top = 1\r\n[crlf]\r\n\tkey = v\r\n\tcont = a\\\\\r\n b\r\n" >crlf &&
	check_file crlf &&
	printf "[s]\n\tk = a\rb\n\rj = 1\n" >cr &&
	check_file cr
'

test_expect_success 'a missing last newline and a final backslash' '
	printf "[s]\n\tk = v" >nonl &&
	check_file nonl &&
	printf "[s]\n\tk = v\\\\" >finalbs &&
	check_file finalbs &&
	printf "[s]" >onlyheader &&
	check_file onlyheader &&
	printf "" >empty &&
	check_file empty
'

test_expect_success 'syntax errors name the file and line' '
	check_bad "[]\nk = v\n" &&
	check_bad "[s]\nk = v\n[ s]\n" &&
	check_bad "[s ]\nk = v\n" &&
	check_bad "[s \"sub\" ]\nk = v\n" &&
	check_bad "[s \"sub\"x]\nk = v\n" &&
	check_bad "[s \"unterminated]\nk = v\n" &&
	check_bad "[s \"new\nline\"]\nk = v\n" &&
	check_bad "[s_x]\nk = v\n" &&
	check_bad "[s]\n\n\n1key = v\n" &&
	check_bad "[s]\nk_y = v\n" &&
	check_bad "[s]\n-k = v\n" &&
	check_bad "[s]\nkey value\n" &&
	check_bad "[s]\nkey ; comment\n" &&
	check_bad "[s]\nk = a\\\\q\n" &&
	check_bad "[s]\nk = \"unterminated\n" &&
	check_bad "[s]\nk = one\\\\\ntwo\\\\\n\"three\n" &&
	check_bad "[s]\nk = v\n\\\\\n" &&
	check_bad "[s]\nk = v\n[bad\n" &&
	check_bad "[s]\nk = v\n\200 = 1\n" &&
	check_bad "[s]\nk = v\n\013x = 1\n"
'

test_expect_success GITPACK_IS_GITPACK 'a syntax error adds nothing to the set' '
	printf "[s]\nk = v\n[bad\n" >bad &&
	test_must_fail test-tool config read-file bad >out 2>err &&
	test_must_be_empty out &&
	grep "^fatal: bad config line 3 in file bad$" err
'

test_expect_success 'arbitrary bytes: NULs are refused in values, fine in comments' '
	printf "[s]\n# a\000b\nk = 1\n" | test-tool config read-stdin >actual &&
	echo s.k=1 >expect &&
	test_cmp expect actual &&
	printf "[s]\nk = a\000b\n" >nul &&
	test_must_fail test-tool config read-stdin <nul 2>err &&
	grep "bad config line 2 in standard input" err &&
	printf "[s \"a\000b\"]\nk = 1\n" >nul &&
	test_must_fail test-tool config read-stdin <nul 2>err &&
	grep "bad config line 1 in standard input" err &&
	printf "[s\000]\n" >nul &&
	test_must_fail test-tool config read-stdin <nul
'

test_expect_success 'garbage never crashes the parser' '
	cat >gen.awk <<-\EOF &&
	BEGIN {
		srand(1300)
		alphabet = "[]\"\\ =;#\tabc.-Z0\n\n"
		for (n = 0; n < 300; n++) {
			text = ""
			len = int(rand() * 60)
			for (i = 0; i < len; i++)
				text = text substr(alphabet, int(rand() * length(alphabet)) + 1, 1)
			printf "%s", text > ("garbage-" n)
		}
	}
	EOF
	awk -f gen.awk &&
	for f in garbage-*
	do
		test-tool config read-file $f >/dev/null 2>&1
		test $? -le 128 || return 1
	done
'

test_expect_success 'lookups: last one wins, bare keys, missing keys' '
	git config multi.key one &&
	git config --add multi.key two &&
	git config --add multi.key three &&
	printf "[bare]\n\tflag\n" >>.git/config &&
	git config --get multi.key >expect &&
	test-tool config get multi.key >actual &&
	test_cmp expect actual &&
	test-tool config get MULTI.KEY >actual &&
	test_cmp expect actual &&
	git config --get bare.flag >expect &&
	test-tool config get bare.flag >actual &&
	test_cmp expect actual &&
	test_expect_code 1 test-tool config get no.such.key &&
	test_expect_code 1 test-tool config get-bool no.such.key &&
	test_expect_code 1 test-tool config get-int no.such.key
'

test_expect_success 'subsections match case-sensitively' '
	git config "sub.Case.key" upper &&
	git config "sub.case.key" lower &&
	test-tool config get sub.Case.key >actual &&
	echo upper >expect &&
	test_cmp expect actual &&
	test-tool config get SUB.case.KEY >actual &&
	echo lower >expect &&
	test_cmp expect actual
'

test_expect_success 'booleans and integers agree with git' '
	for v in true false yes no on off TRUE Off 1 0 2 -1 "" 1k 0x10 010 \
		" 5" +3 1K 1m 1g 0k -0 2147483647 -2147483647
	do
		git config vals.k "$v" &&
		git config --bool vals.k >expect &&
		test-tool config get-bool vals.k >actual &&
		test_cmp expect actual || return 1
	done &&
	for v in 1 0 -1 1k 0x10 010 " 5" +3 1K 1m 1g 0k -0 2147483647 -2147483647
	do
		git config vals.k "$v" &&
		git config --int vals.k >expect &&
		test-tool config get-int vals.k >actual &&
		test_cmp expect actual || return 1
	done &&
	git config --unset vals.k &&
	printf "[vals]\n\tk\n" >>.git/config &&
	git config --bool vals.k >expect &&
	test-tool config get-bool vals.k >actual &&
	test_cmp expect actual
'

test_expect_success 'bad booleans and integers are refused' '
	for v in maybe "5 " 1kb 1t 0x abc k 2147483648
	do
		git config vals.k "$v" &&
		! git config --bool vals.k 2>/dev/null &&
		test_must_fail test-tool config get-bool vals.k 2>err &&
		grep "bad boolean config value" err || return 1
	done &&
	for v in yes "" "5 " 1kb 1t 0x abc k
	do
		git config vals.k "$v" &&
		! git config --int vals.k 2>/dev/null &&
		test_must_fail test-tool config get-int vals.k 2>err &&
		grep "invalid unit" err || return 1
	done
'

test_expect_success GITPACK_IS_GITPACK 'integer ranges and messages' '
	git config vals.k 2147483648 &&
	test_must_fail test-tool config get-int vals.k 2>err &&
	grep "^fatal: bad numeric config value .2147483648. for .vals.k.: out of range$" err &&
	git config vals.k 2g &&
	test_must_fail test-tool config get-int vals.k 2>err &&
	grep "out of range" err &&
	test-tool config get-ulong vals.k >actual &&
	echo 2147483648 >expect &&
	test_cmp expect actual &&
	git config vals.k -1 &&
	test_must_fail test-tool config get-ulong vals.k 2>err &&
	grep "invalid unit" err &&
	git config vals.k 99999999999999999999 &&
	test_must_fail test-tool config get-ulong vals.k 2>err &&
	grep "out of range" err &&
	git config vals.k 8g &&
	test-tool config parse-int64 8g >actual &&
	echo 8589934592 >expect &&
	test_cmp expect actual &&
	test_must_fail test-tool config parse-int64 9223372036854775808 &&
	printf "[vals]\n\tk\n" >>.git/config &&
	test_must_fail test-tool config get-int vals.k 2>err &&
	grep "missing value for .vals.k." err
'

test_expect_success 'include.path: relative, nested, absolute and ~/' '
	mkdir -p inc/deeper &&
	cat >inc/top <<-\EOF &&
	[a]
		before = 1
	[include]
		path = deeper/middle
	[a]
		after = 1
	EOF
	cat >inc/deeper/middle <<-EOF &&
	[b]
		middle = 1
	[include]
		path = leaf
		path = $(pwd)/inc/absolute
		path = ~/inc/home
		path = does-not-exist
	EOF
	echo "[c] leaf = 1" >inc/deeper/leaf &&
	echo "[c] absolute = 1" >inc/absolute &&
	echo "[c] home = 1" >inc/home &&
	check_file inc/top
'

test_expect_success 'include.path in the repository config is followed' '
	test_when_finished "git config --unset include.path" &&
	echo "[from] include = yes" >included &&
	git config include.path ../included &&
	git config --get from.include >expect &&
	test-tool config get from.include >actual &&
	test_cmp expect actual &&
	check_scopes
'

test_expect_success 'includes nest ten deep, not eleven' '
	for n in $(test_seq 0 11)
	do
		printf "[d]\n\tk$n = $n\n[include]\n\tpath = depth$(($n + 1))\n" >depth$n ||
		return 1
	done &&
	check_file depth1 &&
	! git config --includes -f depth0 --list >/dev/null 2>&1 &&
	test_must_fail test-tool config read-file depth0 2>err &&
	grep "exceeded maximum include depth (10)" err
'

test_expect_success 'circular includes fail' '
	printf "[include]\n\tpath = loop-b\n" >loop-a &&
	printf "[include]\n\tpath = loop-a\n" >loop-b &&
	! git config --includes -f loop-a --list >/dev/null 2>&1 &&
	test_must_fail test-tool config read-file loop-a 2>err &&
	grep "exceeded maximum include depth" err
'

test_expect_success 'bad include.path values' '
	mkdir -p sub &&
	printf "[include]\n\tpath\n" >inc-bare &&
	! git config --includes -f inc-bare --list >/dev/null 2>&1 &&
	test_must_fail test-tool config read-file inc-bare 2>err &&
	grep "bad config line 2 in file inc-bare" err &&
	grep "missing value for .include.path." err &&
	mkdir -p inc-dir &&
	printf "[include]\n\tpath = inc-dir\n" >inc-isdir &&
	! git config --includes -f inc-isdir --list >/dev/null 2>&1 &&
	test_must_fail test-tool config read-file inc-isdir 2>err &&
	grep "bad config line 2 in file inc-isdir" err &&
	printf "[include]\n\tpath =\n" >sub/inc-empty &&
	! git config --includes -f sub/inc-empty --list >/dev/null 2>&1 &&
	test_must_fail test-tool config read-file sub/inc-empty &&
	printf "[include]\n\tpath =\n" >inc-empty &&
	check_file inc-empty
'

test_expect_success 'relative includes only come from files' '
	printf "[include]\n\tpath = inc/absolute\n" |
	test_must_fail test-tool config read-stdin 2>err &&
	grep "relative config includes must come from files" err &&
	! env GIT_CONFIG_PARAMETERS="${SQ}include.path${SQ}=${SQ}inc/absolute${SQ}" \
		git config --list >/dev/null 2>&1 &&
	test_must_fail env GIT_CONFIG_PARAMETERS="${SQ}include.path${SQ}=${SQ}inc/absolute${SQ}" \
		test-tool config list 2>err &&
	grep "relative config includes must come from files" err &&
	(
		GIT_CONFIG_PARAMETERS="${SQ}include.path${SQ}=${SQ}$(pwd)/inc/absolute${SQ}" &&
		export GIT_CONFIG_PARAMETERS &&
		check_scopes
	)
'

test_expect_success 'precedence: system, xdg, global, local, command' '
	test_when_finished "rm -rf .config .gitconfig system-config" &&
	mkdir -p .config/git &&
	printf "[p]\n\tlevel = system\n\tsystem = 1\n" >system-config &&
	printf "[p]\n\tlevel = xdg\n\txdg = 1\n" >.config/git/config &&
	printf "[p]\n\tlevel = global\n\tglobal = 1\n" >.gitconfig &&
	git config p.level local &&
	(
		GIT_CONFIG_NOSYSTEM=0 &&
		GIT_CONFIG_SYSTEM=$(pwd)/system-config &&
		export GIT_CONFIG_NOSYSTEM GIT_CONFIG_SYSTEM &&
		check_scopes &&
		test-tool config get p.level >actual &&
		echo local >expect &&
		test_cmp expect actual &&
		GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=p.level GIT_CONFIG_VALUE_0=count &&
		export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 &&
		check_scopes &&
		GIT_CONFIG_PARAMETERS="${SQ}p.level${SQ}=${SQ}param${SQ}" &&
		export GIT_CONFIG_PARAMETERS &&
		check_scopes &&
		test-tool config get p.level >actual &&
		echo param >expect &&
		test_cmp expect actual
	) &&
	(
		GIT_CONFIG_NOSYSTEM=true GIT_CONFIG_SYSTEM=$(pwd)/system-config &&
		export GIT_CONFIG_NOSYSTEM GIT_CONFIG_SYSTEM &&
		check_scopes &&
		test_expect_code 1 test-tool config get p.system
	) &&
	git config --unset p.level
'

test_expect_success 'GIT_CONFIG_GLOBAL replaces ~/.gitconfig and the xdg file' '
	test_when_finished "rm -rf .config .gitconfig other-global" &&
	mkdir -p .config/git &&
	printf "[g]\n\tfrom = xdg\n" >.config/git/config &&
	printf "[g]\n\tfrom = home\n" >.gitconfig &&
	printf "[g]\n\tfrom = env\n" >other-global &&
	check_scopes &&
	(
		GIT_CONFIG_GLOBAL=$(pwd)/other-global &&
		export GIT_CONFIG_GLOBAL &&
		check_scopes
	) &&
	(
		GIT_CONFIG_GLOBAL=/dev/null &&
		export GIT_CONFIG_GLOBAL &&
		check_scopes
	) &&
	(
		XDG_CONFIG_HOME=$(pwd)/nowhere &&
		export XDG_CONFIG_HOME &&
		check_scopes
	)
'

test_expect_success '-c as git passes it to children' '
	test_when_finished "git config --unset alias.tt" &&
	git config alias.tt "!test-tool config list --show-scope" &&
	git -c Foo.Bar=x -c bare.key -c empty.key= -c "Sec.Sub.Key=it${SQ}s !bang" \
		-c "x.y=a=b" config --list --show-scope >expect &&
	git -c Foo.Bar=x -c bare.key -c empty.key= -c "Sec.Sub.Key=it${SQ}s !bang" \
		-c "x.y=a=b" tt >actual &&
	test_cmp expect actual
'

test_expect_success 'GIT_CONFIG_PARAMETERS forms' '
	for p in "${SQ}a.b${SQ}=${SQ}1${SQ} ${SQ}c.d${SQ}" \
		"${SQ}old.style=value${SQ}" \
		"${SQ}a.b${SQ}=  ${SQ}c.d${SQ}=${SQ}${SQ}" \
		"${SQ}A.Sub.B${SQ}=${SQ}x${SQ}"
	do
		(
			GIT_CONFIG_PARAMETERS=$p &&
			export GIT_CONFIG_PARAMETERS &&
			check_scopes
		) || return 1
	done
'

test_expect_success 'bogus command-line config is refused' '
	for p in "${SQ}a.b${SQ}=${SQ}x" " ${SQ}a.b${SQ}=${SQ}x${SQ}" \
		"${SQ}a.b${SQ}=x" "${SQ}a.b${SQ}=${SQ}x${SQ}${SQ}c.d${SQ}=${SQ}y${SQ}" \
		"${SQ}nosection${SQ}=${SQ}x${SQ}" "${SQ}a.b_c${SQ}=${SQ}x${SQ}" \
		"${SQ}a.b.${SQ}=${SQ}x${SQ}"
	do
		! env GIT_CONFIG_PARAMETERS="$p" git config --list >/dev/null 2>&1 &&
		test_must_fail env GIT_CONFIG_PARAMETERS="$p" test-tool config list || return 1
	done &&
	for e in "GIT_CONFIG_COUNT=x" "GIT_CONFIG_COUNT=1" "GIT_CONFIG_COUNT=-1" \
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=a.b" \
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=ab GIT_CONFIG_VALUE_0=1"
	do
		! env $e git config --list >/dev/null 2>&1 &&
		test_must_fail env $e test-tool config list || return 1
	done &&
	test_must_fail env GIT_CONFIG_PARAMETERS="${SQ}a.b${SQ}=${SQ}x" test-tool config list 2>err &&
	grep "bogus format in GIT_CONFIG_PARAMETERS" err
'

test_expect_success 'outside a repository: global and command-line config only' '
	mkdir -p outside &&
	(
		cd outside &&
		GIT_CEILING_DIRECTORIES=$TRASH_DIRECTORY &&
		export GIT_CEILING_DIRECTORIES &&
		git config --global outside.key yes &&
		GIT_CONFIG_PARAMETERS="${SQ}cmd.key${SQ}=${SQ}1${SQ}" &&
		export GIT_CONFIG_PARAMETERS &&
		check_scopes &&
		test-tool config get outside.key >actual &&
		echo yes >expect &&
		test_cmp expect actual
	)
'

test_done
