#!/bin/sh

test_description='shallow_compute() answers what git upload-pack answers

For fetches with deepen <n>, deepen-relative, deepen-since, deepen-not,
client shallow lines and servers that are shallow themselves, the
"shallow" and "unshallow" lines of test-tool shallow-compute must be
those stock git upload-pack sends in the shallow-info section of a
protocol v2 fetch (asked in stateless mode, the request written here
with printf), in the same order. Histories: a linear one, one with
branches of different lengths and dates (some commits older than their
parents), a criss-cross and an octopus; annotated tags as wants; client
boundaries from real shallow clones; servers made shallow by a clone
and by hand. deepen-relative is checked against git 2.55 (GIT_NEW)
where git 2.39 decides otherwise. Last, a chain of 100,000 commits
must not exhaust the stack.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# pkt LINE: LINE as a pkt-line (with its LF)
pkt () {
	printf '%04x%s\n' $((${#1} + 5)) "$1"
}

# shallow_info GIT REPO ARGS...: the shallow-info lines GIT's upload-pack
# sends for a v2 fetch described by ARGS (test-tool shallow-compute's
# options, each want a name git rev-parse resolves), one per line. Its
# standard error is left in "err". Fails when the answer does not get as
# far as the packfile.
shallow_info () {
	si_git=$1 &&
	si_repo=$2 &&
	shift 2 &&
	si_algo=$(git -C "$si_repo" rev-parse --show-object-format) &&
	{
		pkt command=fetch &&
		pkt object-format=$si_algo &&
		printf 0001 &&
		while test $# -gt 0
		do
			case "$1" in
			--depth) pkt "deepen $2" && shift ;;
			--relative) pkt deepen-relative ;;
			--since) pkt "deepen-since $2" && shift ;;
			--not) pkt "deepen-not $2" && shift ;;
			--shallow) pkt "shallow $(git -C "$si_repo" rev-parse "$2")" && shift ;;
			*) pkt "want $(git -C "$si_repo" rev-parse "$1")" ;;
			esac || return 1
			shift
		done &&
		pkt done &&
		printf 0000
	} >request &&
	(
		cd "$si_repo" &&
		GIT_PROTOCOL=version=2 "$si_git" upload-pack --stateless-rpc .
	) <request >response 2>err &&
	perl -e '
		binmode STDIN;
		my ($in, $ok) = (0, 0);
		while (read(STDIN, my $len, 4) == 4) {
			if ($len =~ /^000[012]$/) { $in = 0; next; }
			my $n = hex($len) - 4;
			read(STDIN, my $d, $n) == $n or die "short packet\n";
			if ($d eq "packfile\n") { $ok = 1; last; }
			if ($d eq "shallow-info\n") { $in = 1; next; }
			if ($in) { $d =~ s/\n?$/\n/; print $d; }
		}
		exit($ok ? 0 : 1);
	' <response
}

# check REPO ARGS...: test-tool shallow-compute answers as git upload-pack
check_with () {
	cw_git=$1 &&
	cw_repo=$2 &&
	shift 2 &&
	shallow_info "$cw_git" "$cw_repo" "$@" >expect &&
	(cd "$cw_repo" && test-tool shallow-compute "$@") >actual &&
	test_cmp expect actual
}

check () {
	check_with git "$@"
}

# check_error REPO ARGS...: both fail, with the same fatal message
check_error () {
	ce_repo=$1 &&
	shift &&
	test_must_fail shallow_info git "$ce_repo" "$@" >/dev/null &&
	grep "^fatal: " err >expect &&
	test_line_count = 1 expect &&
	(cd "$ce_repo" && test_expect_code 128 test-tool shallow-compute "$@") >out 2>actual &&
	test_must_be_empty out &&
	test_cmp expect actual
}

# shallow_of REPO: its shallow file as --shallow options
shallow_of () {
	sed "s/^/--shallow /" "$1/shallow"
}

# at DATE: commit dates for what follows
at () {
	GIT_COMMITTER_DATE="$1 +0000" &&
	GIT_AUTHOR_DATE="$1 +0000" &&
	export GIT_COMMITTER_DATE GIT_AUTHOR_DATE
}

# commit_at DATE NAME: an empty commit, tagged NAME (lightweight)
commit_at () {
	at $1 &&
	git commit -q --allow-empty -m "$2" &&
	git tag "$2"
}

# merge_at DATE NAME BRANCH...: a merge commit, tagged NAME
merge_at () {
	ma_date=$1 ma_name=$2 &&
	shift 2 &&
	at $ma_date &&
	git merge -q --no-ff --no-edit -m "$ma_name" "$@" &&
	git tag "$ma_name"
}

for algo in $test_hash_algos
do
	test_expect_success "setup: histories ($algo)" '
		git init -q -b main --object-format=$algo lin-$algo &&
		(
			cd lin-$algo &&
			for i in 1 2 3 4 5 6 7 8 9 10
			do
				commit_at $((1000000000 + i * 100)) l$i || return 1
			done
		) &&

		# main m1..m6; side s1..s7 from m3, its dates older than
		# m3 itself; M merges them; criss-cross a/b after m7; an
		# octopus of c1, c2, c3; "top" at the end.
		git init -q -b main --object-format=$algo hist-$algo &&
		(
			cd hist-$algo &&
			for i in 1 2 3 4 5 6
			do
				commit_at $((1000000000 + i * 100)) m$i || return 1
			done &&
			git checkout -q -b side m3 &&
			for i in 1 2 3 4 5 6 7
			do
				commit_at $((1000000000 + i * 60)) s$i || return 1
			done &&
			git checkout -q main &&
			merge_at 1000001000 M side &&
			commit_at 1000001100 m7 &&
			git checkout -q -b a m7 &&
			commit_at 1000001200 a1 &&
			git checkout -q -b b m7 &&
			commit_at 1000001210 b1 &&
			git checkout -q a &&
			merge_at 1000001300 a2 b1 &&
			git checkout -q b &&
			merge_at 1000001310 b2 a1 &&
			commit_at 1000001400 b3 &&
			git checkout -q a &&
			commit_at 1000001410 a3 &&
			git checkout -q main &&
			git merge -q --ff-only a &&
			merge_at 1000001500 X b &&
			for c in c1 c2 c3
			do
				git checkout -q -b br-$c X &&
				commit_at $((1000001600 + ${c#c})) $c || return 1
			done &&
			git checkout -q main &&
			merge_at 1000001700 octo br-c1 br-c2 br-c3 &&
			commit_at 1000001800 top &&
			git tag -a -m "annotated" v-top top &&
			git tag -a -m "tag of a tag" vv v-top &&
			git tag -a -m "annotated" v-s5 s5 &&
			git tag -a -m "a tree" treetag "top^{tree}" &&
			git tag also-top top &&
			git repack -q -a -d
		)
	'

	test_expect_success "the oracle answers (a request git understands, $algo)" '
		shallow_info git hist-$algo --depth 2 M >lines &&
		{
			echo "shallow $(git -C hist-$algo rev-parse m6)" &&
			echo "shallow $(git -C hist-$algo rev-parse s7)"
		} >expect &&
		test_cmp expect lines
	'

	test_expect_success "deepen 1, 2, 5 and past the root on a linear history ($algo)" '
		for d in 1 2 5 9 10 11 100
		do
			check lin-$algo --depth $d l10 || return 1
		done &&
		check lin-$algo --depth 3 l10 l7 &&
		check lin-$algo --depth 3 l7 l10
	'

	test_expect_success "deepen through merges, a criss-cross and an octopus ($algo)" '
		for d in 1 2 3 4 5 6 7 8 9 10 11 12 13 20
		do
			check hist-$algo --depth $d top &&
			check hist-$algo --depth $d M &&
			check hist-$algo --depth $d X || return 1
		done &&
		check hist-$algo --depth 4 top s3 m7 &&
		check hist-$algo --depth 3 a3 b3 c2
	'

	test_expect_success "annotated tags as wants, a tag of a tree ignored ($algo)" '
		check hist-$algo --depth 1 v-top &&
		check hist-$algo --depth 3 vv &&
		check hist-$algo --depth 2 v-s5 top &&
		check hist-$algo --depth 2 treetag s6 &&
		check hist-$algo --depth 4 treetag &&
		check hist-$algo --since 1000000200 vv v-s5 &&
		# two names of one commit: git walks it from each
		check hist-$algo --depth 1 v-top also-top &&
		shallow_info git hist-$algo --depth 1 v-top also-top >lines &&
		test_line_count = 2 lines
	'

	test_expect_success "a client already shallow, deepened ($algo)" '
		git clone -q --no-local --depth 3 hist-$algo client3-$algo &&
		git clone -q --no-local --depth 6 hist-$algo client6-$algo &&
		test_line_count -gt 1 client3-$algo/.git/shallow &&
		for d in 1 2 3 4 5 6 8 12 30
		do
			check hist-$algo --depth $d $(shallow_of client3-$algo/.git) top &&
			check hist-$algo --depth $d $(shallow_of client6-$algo/.git) top || return 1
		done &&
		# the order of the unshallow lines is the order of the client
		sort -r client6-$algo/.git/shallow >rev &&
		check hist-$algo --depth 20 $(sed "s/^/--shallow /" rev) top &&
		shallow_info git hist-$algo --depth 20 $(sed "s/^/--shallow /" rev) top >lines &&
		grep "^unshallow" lines >unshallow &&
		test_line_count -gt 1 unshallow
	'

	test_expect_success "deepen 2147483647 (git fetch --unshallow) ($algo)" '
		check hist-$algo --depth 2147483647 $(shallow_of client3-$algo/.git) top &&
		# a client shallow commit no want reaches is unshallowed too
		check hist-$algo --depth 2147483647 --shallow s4 --shallow m6 m5 &&
		# unknown ones are ignored
		check hist-$algo --depth 2147483647 --shallow $(printf "%0*d" $(test_oid_hexsz $algo) 1) --shallow s2 top
	'

	test_expect_success "deepen-relative on a linear history ($algo)" '
		git clone -q --no-local --depth 3 lin-$algo linclient-$algo &&
		for d in 1 2 5 20
		do
			check lin-$algo --relative --depth $d $(shallow_of linclient-$algo/.git) l10 || return 1
		done &&
		# a client that is not shallow: nothing
		check lin-$algo --relative --depth 2 l10
	'

	test_expect_success GIT_NEW "deepen-relative through merges, as git 2.55 ($algo)" '
		for d in 1 2 3 5 9
		do
			check_with git_new hist-$algo --relative --depth $d $(shallow_of client3-$algo/.git) top &&
			check_with git_new hist-$algo --relative --depth $d $(shallow_of client6-$algo/.git) M top &&
			check_with git_new hist-$algo --relative --depth $d --shallow s3 --shallow m6 M || return 1
		done
	'

	test_expect_success "deepen-since ($algo)" '
		for since in 0 1 1000000100 1000000150 1000000250 1000000400 1000001000
		do
			check hist-$algo --since $since top &&
			check hist-$algo --since $since M || return 1
		done &&
		for since in 1000001205 1000001300 1000001650 1000001800
		do
			check hist-$algo --since $since top || return 1
		done &&
		check hist-$algo --since 1000000250 $(shallow_of client3-$algo/.git) top &&
		check hist-$algo --since 1000001350 $(shallow_of client6-$algo/.git) top &&
		check hist-$algo --since 1000000500 $(shallow_of client6-$algo/.git) top &&
		check lin-$algo --since 1000000550 l10
	'

	test_expect_success "deepen-not, one ref and two, and with deepen-since ($algo)" '
		check hist-$algo --not m5 top &&
		check hist-$algo --not s4 top &&
		check hist-$algo --not m5 --not s4 top &&
		check hist-$algo --not c2 --not a1 top &&
		check hist-$algo --not m7 M top &&
		check hist-$algo --not v-s5 top &&
		check hist-$algo --not b1 --since 1000001250 top &&
		check hist-$algo --not s2 --since 1000000200 M &&
		check hist-$algo --not m7 $(shallow_of client6-$algo/.git) top &&
		check lin-$algo --not l4 l10
	'

	test_expect_success "a server that is shallow itself ($algo)" '
		git clone -q --bare --no-local --depth 4 hist-$algo srv-$algo &&
		test_line_count -gt 1 srv-$algo/shallow &&
		# nothing asked: v2 still tells of the server boundary
		check srv-$algo top &&
		check srv-$algo $(shallow_of client3-$algo/.git) top &&
		for d in 1 2 3 4 5 8 2147483647
		do
			check srv-$algo --depth $d top &&
			check srv-$algo --depth $d $(shallow_of client3-$algo/.git) top || return 1
		done &&
		# git leaves the server boundary unannounced here (kept)
		check srv-$algo --since 1000001350 top &&
		check srv-$algo --not X top
	'

	test_expect_success "a server boundary met twice is announced twice, as git does ($algo)" '
		git clone -q --bare hist-$algo hand-$algo &&
		git -C hist-$algo rev-parse m3 >hand-$algo/shallow &&
		check hand-$algo M &&
		check hand-$algo --depth 9 M &&
		check hand-$algo --depth 20 --shallow s6 M &&
		shallow_info git hand-$algo M >lines &&
		test_line_count = 2 lines &&
		# an empty shallow file still makes git take the server for shallow
		: >hand-$algo/shallow &&
		check hand-$algo --depth 2147483647 --shallow m5 --shallow s4 top &&
		check hand-$algo --shallow m5 top
	'

	test_expect_success "errors, in the words of git ($algo)" '
		check_error hist-$algo --depth 2 --since 1000000300 top &&
		check_error hist-$algo --depth 2 --not m5 top &&
		check_error hist-$algo --since 2000000000 top &&
		check_error hist-$algo --not top top &&
		check_error hist-$algo --since 1 treetag &&
		check_error hist-$algo --depth 2 --shallow "top^{tree}" top
	'
done

# chain_pack ALGO N TREE: a pack of a chain of N commits of TREE (dated
# 1000000001, ...) on stdout, the tip's id on stderr. Written here, with
# zlib's stored blocks, in a fraction of the time fast-import takes.
chain_pack () {
	perl -e '
		use strict; use Digest::SHA; use Compress::Zlib ();
		my ($algo, $n, $tree) = @ARGV;
		my $bits = $algo eq "sha256" ? 256 : 1;
		my ($pack, $parent) = ("PACK" . pack("NN", 2, $n), "");
		for my $i (1 .. $n) {
			my $when = 1000000000 + $i;
			my $body = "tree $tree\n" . ($parent ? "parent $parent\n" : "") .
				"author A <a\@example.com> $when +0000\n" .
				"committer C <c\@example.com> $when +0000\n\n";
			my $len = length($body);
			$parent = Digest::SHA->new($bits)->add("commit $len\0$body")->hexdigest;
			# the entry header: type 1 (commit), then the size, 4 bits and 7s
			my ($c, $size, $hdr) = (0x10 | ($len & 0x0f), $len >> 4, "");
			while ($size) {
				$hdr .= chr($c | 0x80);
				($c, $size) = ($size & 0x7f, $size >> 7);
			}
			$pack .= $hdr . chr($c) . "\x78\x01\x01" . pack("vv", $len, ~$len & 0xffff) .
				$body . pack("N", Compress::Zlib::adler32($body));
		}
		binmode STDOUT;
		print $pack, Digest::SHA->new($bits)->add($pack)->digest;
		print STDERR "$parent\n";
	' "$@"
}

test_expect_success 'a chain of 100,000 commits: no recursion, and quick' '
	git init -q -b main deep &&
	(
		cd deep &&
		tree=$(git hash-object -w -t tree /dev/null) &&
		chain_pack sha1 100000 $tree >chain.pack 2>tip &&
		git index-pack --stdin <chain.pack >/dev/null &&
		git update-ref refs/heads/main $(cat tip) &&
		test $(git rev-list --count main) = 100000 &&
		test-tool shallow-compute --depth 99999 main >actual &&
		echo "shallow $(git rev-parse main~99998)" >expect &&
		test_cmp expect actual &&

		test-tool shallow-compute --since 1000050000 main >actual &&
		echo "shallow $(git rev-parse main~50000)" >expect &&
		test_cmp expect actual &&

		test-tool shallow-compute --not main~50000 main >actual &&
		echo "shallow $(git rev-parse main~49999)" >expect &&
		test_cmp expect actual &&

		test-tool shallow-compute --relative --depth 30000 \
			--shallow main~60000 main >actual &&
		{
			echo "shallow $(git rev-parse main~90000)" &&
			echo "unshallow $(git rev-parse main~60000)"
		} >expect &&
		test_cmp expect actual &&

		git rev-parse main~99990 main~3 >tips &&
		head -n 1 tips >.git/shallow &&
		test-tool shallow-compute main >actual &&
		sed -n "1s/^/shallow /p" tips >expect &&
		test_cmp expect actual &&
		test-tool shallow-compute --depth 2147483647 --shallow $(tail -n 1 tips) main >actual &&
		sed -e "1s/^/shallow /" -e "2s/^/unshallow /" tips >expect &&
		test_cmp expect actual
	)
'

test_done
