#!/bin/sh

test_description='multi-pack-index write --bitmap and the single-pack writer, checked by git

Two histories built by stock git (fast-import): main, linear, with a
merged side branch and an octopus merge of three branches; an unmerged
topic branch; an orphan branch; annotated and lightweight tags, a tag of
a tag, tags of a tree and of a blob; branches at old commits of main
(5 in "small", 18 refs in all; 40 in "big", 53 refs, more than
BITMAP_ALL_TIPS_LIMIT); a commit, a tree and a blob no ref reaches, in a
pack of their own; seven overlapping packs. "small" has 51 commits, "big"
321.

gitpack writes the bitmap (multi-pack-index write --bitmap, and
"test-tool bitmap-write" for one pack from "git repack -adk"), then
stock git is the judge: "rev-list --test-bitmap" passes for the commits
the file has entries for (read from the file) and says "doesn'\''t have
an indexed bitmap" for the others (every commit of "small"; every tip
commit has an entry there); "rev-list --use-bitmap-index" lists what
the plain walk lists; "multi-pack-index verify" and fsck pass; a
"clone --no-local" through upload-pack reuses the pack through the
bitmap. "gitpack rev-list --use-bitmap-index" prints what git prints
from the same file, byte for byte.

Also: pack.writeBitmapLookupTable and pack.writeBitmapHashCache (header
flags, sizes, git reads every combination); the same file from one
thread or several; --refs-snapshot with preferred tips;
pack.preferBitmapTips; a second write keeps the bitmap, a plain write
removes it; a ref to a loose commit (no bitmap for it, as git); a
reachable object missing from the packs (an error naming it, no file
left behind); the size of the file against git'\''s (within 10%: the
sizes are in the log); on a history shaped as git'\''s lib-bitmap.sh
(merges both ways, octopus merges), and on "big" (more tips than get
a bitmap each), "repack -adb" selects the same commits as stock git and
reports the same trace2 num_selected_commits and num_maximal_commits. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# bw_stream N NMANY: a git fast-import stream. main: N commits; at N/3
# a side branch of 4 commits from main~5 is merged back; at 2N/3 three
# branches oct1..oct3 of 2 commits each from main~2 are merged in one
# octopus merge (four parents). topic: 3 commits from main at N/2.
# many/01 .. many/NMANY: branches at old commits of main. orphan: 6
# commits of a history of their own. A checkpoint (a new pack) after
# N/4 commits of main, after the octopus and before the orphan branch.
bw_stream () {
	perl -e '
		use strict;
		my ($n, $nmany) = @ARGV;
		my ($when, $mark) = (1700000000, 0);
		my %at;
		sub blob {
			my ($mode, $path, $body) = @_;
			return "M $mode inline $path\ndata " . length($body) . "\n$body\n";
		}
		sub commit {
			my ($ref, $msg, $merges, @changes) = @_;
			$when += 60;
			$mark++;
			print "commit $ref\nmark :$mark\n";
			print "committer C O Mitter <committer\@example.com> $when +0000\n";
			print "data ", length($msg), "\n$msg\n";
			print "merge $_\n" for @$merges;
			print @changes, "\n";
			return ":$mark";
		}
		sub branch {
			my ($name, $from, $count) = @_;
			my $last;
			print "reset refs/heads/$name\nfrom $from\n\n";
			for my $k (1 .. $count) {
				$last = commit("refs/heads/$name", "$name $k", [],
					blob("100644", $name . $k % 2, "$name $k\n"));
			}
			return $last;
		}
		my ($side_at, $oct_at) = (int($n / 3), int(2 * $n / 3));
		for my $k (1 .. $n) {
			$at{$k} = commit("refs/heads/main", "main $k", [],
				blob("100644", "f" . $k % 7, "line $k\n" x ($k % 5 + 1)),
				blob("100644", "d/e/g" . $k % 3, "deep $k\n"));
			print "checkpoint\n\n" if $k == int($n / 4);
			if ($k == $side_at) {
				my $side = branch("side", $at{$k - 5}, 4);
				$at{$k} = commit("refs/heads/main", "merge side", [$side],
					blob("100644", "merged", "side\n"));
			}
			if ($k == $oct_at) {
				my @oct = map { branch("oct$_", $at{$k - 2}, 2) } 1 .. 3;
				$at{$k} = commit("refs/heads/main", "octopus", [@oct],
					blob("100644", "merged", "octopus\n"));
				print "checkpoint\n\n";
			}
		}
		branch("topic", $at{int($n / 2)}, 3);
		printf "reset refs/heads/many/%02d\nfrom %s\n\n", $_, $at{1 + $_ * 7 % $n}
			for 1 .. $nmany;
		print "checkpoint\n\n";
		print "reset refs/heads/orphan\n\n";
		commit("refs/heads/orphan", "orphan $_", [],
			blob("100644", "o" . $_ % 2, "orphan $_\n")) for 1 .. 6;
	' "$1" "$2"
}

# bw_repo ALGO DIR N NMANY: the repository DIR with the history of
# bw_stream, tags (v1, light, tagtag of v1, orphan-tag, tree-tag,
# blob-light; one more pack), an unreachable commit, tree and blob (a
# pack of their own; the commit is in DIR.dangling) and a pack of
# main~N/2..main~N/8 overlapping the others. Seven packs, no loose
# object, no multi-pack-index.
bw_repo () {
	git init -q -b main --object-format="$1" "$2" &&
	git -C "$2" config gc.auto 0 &&
	bw_stream "$3" "$4" >"$2.stream" &&
	git -C "$2" -c fastimport.unpackLimit=0 fast-import --quiet <"$2.stream" &&
	rm -f "$2.stream" &&
	(
		cd "$2" &&
		git reset -q --hard main &&
		git tag -a -m "v1" v1 main~$(($3 / 6)) &&
		git tag light main~3 &&
		git -c advice.nestedTag=false tag -a -m "a tag of a tag" tagtag v1 &&
		git tag -a -m "on the orphan branch" orphan-tag orphan~2 &&
		git tag -a -m "a tree" tree-tag "main^{tree}" &&
		git tag blob-light main:f1 &&
		git repack -dq &&
		blob=$(echo "nobody reaches this" | git hash-object -w --stdin) &&
		tree=$(printf "100644 blob %s\tunreachable\n" $blob | git mktree) &&
		commit=$(git commit-tree -p main~3 -m unreachable $tree) &&
		echo $commit >../"$2.dangling" &&
		git rev-list --objects $commit --not main~3 |
		git pack-objects -q .git/objects/pack/pack >/dev/null &&
		git prune-packed
	) &&
	midx_pack_range "$2" main~$(($3 / 2)) main~$(($3 / 8)) &&
	test "$(ls "$(midx_pack_dir "$2")"/pack-*.pack | wc -l)" = 7 &&
	git -C "$2" count-objects -v >"$2.count" &&
	grep "^count: 0$" "$2.count" &&
	rm -f "$2.count"
}

# merges_stream: a fast-import stream of the history of git'\''s
# lib-bitmap.sh (setup_bitmap_history): second (10 commits), other (10
# from second~5), merge-left (other~2 with second~2), merge-right
# (second~1 with other~1), both merged into second and into other by
# octopus merges, then 100 more commits on each; the merge-* refs are
# dropped afterwards.
merges_stream () {
	perl -e '
		use strict;
		my ($when, $mark) = (1112912053, 0);
		sub commit {
			my ($ref, $msg, $from, @merges) = @_;
			$when += 60;
			$mark++;
			print "commit $ref\nmark :$mark\n";
			print "committer C O Mitter <c\@example.com> $when -0700\n";
			print "data ", length($msg), "\n$msg\n";
			print "from $from\n" if $from;
			print "merge $_\n" for @merges;
			print "M 100644 inline $msg.t\ndata ", length($msg), "\n$msg\n\n";
			return ":$mark";
		}
		my (@s, @o);
		push @s, commit("refs/heads/second", "file$_", @s ? $s[-1] : undef) for 1 .. 10;
		push @o, commit("refs/heads/other", "side$_", @o ? $o[-1] : $s[4]) for 1 .. 10;
		my $ml = commit("refs/heads/merge-left", "merge-left", $o[7], $s[7]);
		my $mr = commit("refs/heads/merge-right", "merge-right", $s[8], $o[8]);
		my $s = commit("refs/heads/second", "octopus-second", $s[9], $ml, $mr);
		my $o = commit("refs/heads/other", "octopus-other", $o[9], $ml, $mr);
		$s = commit("refs/heads/second", "file$_", $s) for 11 .. 110;
		$o = commit("refs/heads/other", "side$_", $o) for 11 .. 110;
	'
}

# bitmap_of DIR: the path of the only .bitmap of DIR (fails unless there
# is exactly one).
bitmap_of () {
	ls "$(midx_pack_dir "$1")"/*.bitmap >"$1.bitmaps" &&
	test_line_count = 1 "$1.bitmaps" &&
	cat "$1.bitmaps" &&
	rm -f "$1.bitmaps"
}

# bitmap_flags FILE: the flags of the bitmap FILE, as 4 hex digits.
bitmap_flags () {
	od -An -tx1 -j6 -N2 "$1" | tr -d ' \n'
}

# bitmap_nr_entries FILE: the number of entries the header of FILE gives.
bitmap_nr_entries () {
	perl -e '
		open(my $fh, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		read($fh, my $hdr, 12) == 12 or die "$ARGV[0]: short\n";
		print unpack("N", substr($hdr, 8, 4)), "\n";
	' "$1"
}

# index_oids DIR ALGO: the object names of the bitmapped MIDX of DIR (or,
# with a pack bitmap, of its pack) in index order: the order bitmap
# entries count in.
index_oids () {
	gp_io_bitmap_=$(bitmap_of "$1") &&
	case "$gp_io_bitmap_" in
	*/multi-pack-index-*.bitmap)
		midx_dump "$(midx_pack_dir "$1")/multi-pack-index" "$2" |
		sed -n "s/^object \([0-9a-f]*\) .*/\1/p"
		;;
	*)
		git show-index --object-format="$2" <"${gp_io_bitmap_%.bitmap}.idx" |
		cut -d" " -f2
		;;
	esac
}

# bitmap_entries DIR ALGO: the commits the bitmap of DIR has an entry
# for, in file order (read from the file itself: past the four type
# bitmaps, each entry is a 4-byte index position, the XOR offset and
# flags bytes, an EWAH).
bitmap_entries () {
	index_oids "$1" "$2" >"$1.oids" &&
	perl -e '
		use strict;
		my ($file, $oids) = @ARGV;
		open(my $oh, "<", $oids) or die "$oids: $!\n";
		chomp(my @oid = <$oh>);
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		my ($sig, $version, $flags, $n) = unpack("a4 n n N", $d);
		die "$file: not a bitmap\n" unless $sig eq "BITM" && $version == 1;
		my $pos = 12 + length($oid[0]) / 2;
		my $ewah = sub { $pos += 12 + 8 * unpack("N", substr($d, $pos + 4, 4)) };
		$ewah->() for 1 .. 4;
		for (1 .. $n) {
			my $index_pos = unpack("N", substr($d, $pos, 4));
			die "$file: entry at $pos names position $index_pos\n"
				if $index_pos >= @oid;
			$pos += 6;
			$ewah->();
			print "$oid[$index_pos]\n";
		}
	' "$(bitmap_of "$1")" "$1.oids" &&
	rm -f "$1.oids"
}

# tip_commits DIR: the commits the refs of DIR peel to, sorted (tags of
# trees and blobs left out).
tip_commits () {
	git -C "$1" for-each-ref --format="%(refname)^{commit}" |
	git -C "$1" cat-file --batch-check="%(objectname) %(objecttype)" 2>/dev/null |
	sed -n "s/ commit\$//p" |
	sort -u
}

# test_bitmap_entries DIR ENTRIES COMMITS: stock "git rev-list
# --test-bitmap" on each commit of the file COMMITS: those in the file
# ENTRIES pass ("Found bitmap for 'C'", "OK!"), the others fail with
# nothing but "commit 'C' doesn't have an indexed bitmap".
# Prints how many of each.
test_bitmap_entries () {
	gp_tbe_ok_=0
	gp_tbe_none_=0
	for c in $(cat "$3")
	do
		if grep "^$c\$" "$2" >/dev/null
		then
			git -C "$1" rev-list --test-bitmap $c >/dev/null 2>tb.err &&
			grep "^Found bitmap for '$c'\. [0-9]* bits / [0-9a-f]\{8\} checksum\$" tb.err >/dev/null &&
			grep "^OK!\$" tb.err >/dev/null || {
				echo "--test-bitmap $c:"
				cat tb.err
				return 1
			}
			gp_tbe_ok_=$((gp_tbe_ok_ + 1))
		else
			test_expect_code 128 git -C "$1" rev-list --test-bitmap $c \
				>/dev/null 2>tb.err &&
			grep "^fatal: commit '$c' doesn't have an indexed bitmap\$" tb.err >/dev/null &&
			! grep -v "^Bitmap v1 test\|doesn't have an indexed bitmap" tb.err || {
				echo "--test-bitmap $c (no entry):"
				cat tb.err
				return 1
			}
			gp_tbe_none_=$((gp_tbe_none_ + 1))
		fi
	done
	echo "--test-bitmap: $gp_tbe_ok_ with a bitmap, $gp_tbe_none_ without"
}

# compare_walk DIR ARGS...: with stock git, "rev-list
# --use-bitmap-index ARGS" gives the objects (or the count) of the plain
# walk.
compare_walk () {
	gp_cw_dir_=$1
	shift
	git -C "$gp_cw_dir_" rev-list "$@" | cut -d" " -f1 | sort >walk &&
	git -C "$gp_cw_dir_" rev-list --use-bitmap-index "$@" >bitmap.raw &&
	sort bitmap.raw >bitmap &&
	test_cmp walk bitmap &&
	test_file_not_empty walk &&
	git -C "$gp_cw_dir_" rev-list --count "$@" >walk &&
	git -C "$gp_cw_dir_" rev-list --count --use-bitmap-index "$@" >bitmap &&
	test_cmp walk bitmap
}

# compare_bitmap DIR ARGS...: "rev-list --use-bitmap-index ARGS" prints
# the same bytes with git and gitpack, exits 0 with both, and gitpack
# says nothing on stderr.
compare_bitmap () {
	gp_cb_dir_=$1
	shift
	git -C "$gp_cb_dir_" rev-list --use-bitmap-index "$@" >expect 2>expect.err
	echo $? >expect.code
	gitpack -C "$gp_cb_dir_" rev-list --use-bitmap-index "$@" >actual 2>actual.err
	echo $? >actual.code
	compare_results &&
	test "$(cat actual.code)" = 0 &&
	test_must_be_empty actual.err
}

# The revisions every bitmap is asked about; DANGLING is the unreachable
# commit. Ranges are compared to the walk by commits and counts only:
# the walk of "--objects A..B" may list objects A reaches through older
# commits, which bitmaps leave out.
walk_args='--objects --all
--all
main~5..main
side..main
topic..oct2
oct2..topic
orphan..main
--objects main
--objects orphan-tag
--objects tagtag light
--objects DANGLING'

bitmap_args="$walk_args
--count --objects --all
--objects main~5..main
--objects side..main
--objects topic..oct2
--objects --all ^v1
--objects --all --not --tags
--objects main --not orphan
--objects tree-tag blob-light
--objects DANGLING --not main~2"

# expand DANGLING_FILE ARGS...: ARGS with DANGLING replaced by the
# commit in DANGLING_FILE.
expand () {
	gp_ex_commit_=$(cat "$1") &&
	shift &&
	echo "$*" | sed "s/DANGLING/$gp_ex_commit_/"
}

# walk_all DIR SRC / bitmap_all DIR SRC: compare_walk and compare_bitmap
# for every line of walk_args and bitmap_args, in DIR, a copy of the
# repository SRC.
walk_all () {
	while read -r args
	do
		compare_walk "$1" $(expand "$2.dangling" $args) || return 1
	done <<-EOF
	$walk_args
	EOF
}

bitmap_all () {
	while read -r args
	do
		compare_bitmap "$1" $(expand "$2.dangling" $args) || return 1
	done <<-EOF
	$bitmap_args
	EOF
}

# check_bitmap DIR SRC ALGO SAMPLE: the checks every bitmap gets, in DIR
# (a copy of the repository SRC). The entries of the bitmap (to
# DIR.entries) are what git finds: every SAMPLE-th of them and every tip
# commit with an entry pass --test-bitmap, and every eleventh commit
# without an entry has no bitmap; "git rev-list --use-bitmap-index"
# answers as the walk; gitpack answers as git.
check_bitmap () {
	bitmap_entries "$1" "$3" >"$1.entries" &&
	test_file_not_empty "$1.entries" &&
	test "$(sort -u "$1.entries" | wc -l)" = "$(wc -l <"$1.entries")" &&
	tip_commits "$1" >tips &&
	{
		awk "NR % $4 == 1" "$1.entries" &&
		sort "$1.entries" | comm -12 - tips &&
		git -C "$1" rev-list --all | grep -v -F -f "$1.entries" |
		awk "NR % 11 == 1"
	} >commits &&
	test_bitmap_entries "$1" "$1.entries" commits &&
	walk_all "$1" "$2" &&
	bitmap_all "$1" "$2"
}

# check_bitmap_quick DIR SRC ALGO: check_bitmap for variants of a bitmap
# checked in full: every twentieth entry and the tip commits with an
# entry pass --test-bitmap; all objects and a range as the walk and as
# gitpack answers.
check_bitmap_quick () {
	bitmap_entries "$1" "$3" >"$1.entries" &&
	tip_commits "$1" >tips &&
	{
		awk "NR % 20 == 1" "$1.entries" &&
		sort "$1.entries" | comm -12 - tips
	} >commits &&
	test_bitmap_entries "$1" "$1.entries" commits &&
	compare_walk "$1" --objects --all &&
	compare_walk "$1" topic..oct2 &&
	compare_bitmap "$1" --objects --all &&
	compare_bitmap "$1" --objects side..main
}

# midx_variant NAME SRC LOOKUP HASH: NAME-ALGO, a copy of SRC without a
# multi-pack-index, where gitpack wrote one with a bitmap, with
# pack.writeBitmapLookupTable=LOOKUP and pack.writeBitmapHashCache=HASH.
midx_variant () {
	midx_copy $2 $1-$algo &&
	rm -f $(midx_pack_dir $1-$algo)/multi-pack-index* &&
	git -C $1-$algo config pack.writeBitmapLookupTable $3 &&
	git -C $1-$algo config pack.writeBitmapHashCache $4 &&
	gitpack -C $1-$algo multi-pack-index write --bitmap
}

# pack_variant NAME SRC OPTIONS...: NAME-ALGO, a copy of SRC, where
# "test-tool bitmap-write OPTIONS" wrote the bitmap of its only pack.
pack_variant () {
	gp_pv_name_=$1-$algo
	midx_copy $2 $gp_pv_name_ &&
	shift 2 &&
	(
		cd $gp_pv_name_ &&
		test-tool bitmap-write "$@" .git/objects/pack/pack-*.idx
	)
}

# clone_from DIR: a stock "git clone --no-local" of DIR (through
# upload-pack and pack-objects, with GIT_TRACE2_EVENT on the server side
# to DIR.trace, all nesting levels: the progress regions push the
# interesting events past the default of 2) succeeds, passes fsck and
# has every object DIR reaches.
# The server's "Total ..." line goes to DIR.total.
clone_from () {
	rm -rf "$1.clone" "$1.trace" &&
	git clone -q --progress --no-local \
		-u "env GIT_TRACE2_EVENT=$TRASH_DIRECTORY/$1.trace GIT_TRACE2_EVENT_NESTING=100 git-upload-pack" \
		"file://$TRASH_DIRECTORY/$1" "$1.clone" 2>clone.err &&
	git -C "$1.clone" fsck &&
	git -C "$1" rev-list --objects --all | cut -d" " -f1 | sort >expect &&
	git -C "$1.clone" rev-list --objects --all | cut -d" " -f1 | sort >actual &&
	test_cmp expect actual &&
	grep "\"pack-objects\",\"--revs\"" "$1.trace" >/dev/null &&
	tr "\r" "\n" <clone.err | grep "Total [0-9]*" >"$1.total" &&
	cat "$1.total"
}

# clone_uses_bitmap DIR: clone_from DIR, and pack-objects reused pack
# data verbatim ("pack-reused N"), which git 2.39 does only from a
# bitmap: its trace2 output has no bitmap region or event.
clone_uses_bitmap () {
	clone_from "$1" &&
	grep "pack-reused [1-9][0-9]*" "$1.total"
}

# What pack-objects says (trace2) when it loads the reverse index of a
# MIDX from its RIDX chunk.
midx_revindex_event='"category":"load_midx_revindex","key":"source","value":"midx"'

for algo in $test_hash_algos
do

test_expect_success "setup: small and big histories in 7 packs ($algo)" '
	bw_repo $algo small-$algo 30 5 &&
	bw_repo $algo big-$algo 300 40 &&
	git -C small-$algo rev-list --all >commits &&
	test_line_count = 51 commits &&
	git -C big-$algo rev-list --all >commits &&
	test_line_count = 321 commits &&
	git -C small-$algo for-each-ref >refs &&
	test_line_count = 18 refs &&
	git -C big-$algo for-each-ref >refs &&
	test_line_count = 53 refs &&
	git -C big-$algo rev-list --min-parents=4 main >octopus &&
	test_line_count = 1 octopus &&
	git -C big-$algo rev-list --objects --all >all &&
	! grep $(cat big-$algo.dangling) all &&
	git -C big-$algo cat-file -e $(cat big-$algo.dangling)
'

test_expect_success "merges: the commits git selects, and its trace2 counts ($algo)" '
	# the shape of git'\''s lib-bitmap.sh history: two branches, merges
	# both ways, two octopus merges, then 100 commits on each
	git init -q --bare --object-format=$algo merges-$algo &&
	merges_stream | git -C merges-$algo fast-import --quiet &&
	git -C merges-$algo symbolic-ref HEAD refs/heads/second &&
	# not tips (as in git'\''s test)
	git -C merges-$algo update-ref -d refs/heads/merge-left &&
	git -C merges-$algo update-ref -d refs/heads/merge-right &&
	git -C merges-$algo rev-list --all >commits &&
	test_line_count = 224 commits &&
	# and "big" (more tips than all get a bitmap; merges, an octopus)
	for src in merges big
	do
		for who in git gitpack
		do
			rm -rf $who-$algo &&
			git init -q --object-format=$algo $who-$algo &&
			git -C $who-$algo fetch -q --no-tags ../$src-$algo "+refs/*:refs/*" &&
			git -C $who-$algo symbolic-ref HEAD "$(git -C $src-$algo symbolic-ref HEAD)" &&
			GIT_TRACE2_EVENT_NESTING=100 \
			GIT_TRACE2_EVENT="$TRASH_DIRECTORY/counts.$src.$who.$algo" \
				$who -C $who-$algo repack -adbq &&
			grep -o "\"key\":\"num_[a-z_]*_commits\",\"value\":\"[0-9]*\"" \
				"$TRASH_DIRECTORY/counts.$src.$who.$algo" >counts-$who.out &&
			bitmap_entries $who-$algo $algo >entries.raw &&
			sort entries.raw >entries-$who || return 1
		done &&
		test_line_count = 2 counts-git.out &&
		test_cmp counts-git.out counts-gitpack.out &&
		test_cmp entries-git entries-gitpack || return 1
	done &&
	test_line_count = 107 entries-git
'

test_expect_success "small: gitpack's MIDX bitmap, every commit checked by git ($algo)" '
	midx_variant smidx small-$algo true true &&
	test "$(bitmap_flags $(bitmap_of smidx-$algo))" = 0015 &&
	git -C smidx-$algo multi-pack-index verify &&
	git -C smidx-$algo fsck &&
	bitmap_entries smidx-$algo $algo >entries &&
	git -C smidx-$algo rev-list --all >commits &&
	test_bitmap_entries smidx-$algo entries commits &&
	# at most BITMAP_ALL_TIPS_LIMIT tips: each has a bitmap
	tip_commits smidx-$algo >tips &&
	sort entries | comm -13 - tips >no-bitmap &&
	test_must_be_empty no-bitmap &&
	check_bitmap smidx-$algo small-$algo $algo 1
'

test_expect_success "small: a single-pack bitmap, every commit checked by git ($algo)" '
	midx_copy small-$algo small-pack-$algo &&
	git -C small-pack-$algo repack -adkq &&
	git -C small-pack-$algo count-objects -v >count &&
	grep "^packs: 1\$" count &&
	test_path_is_missing $(midx_pack_dir small-pack-$algo)/multi-pack-index &&
	pack_variant spack small-pack-$algo &&
	bitmap=$(bitmap_of spack-$algo) &&
	case "$bitmap" in */pack-*.bitmap) ;; *) false ;; esac &&
	test "$(bitmap_flags $bitmap)" = 0015 &&
	git -C spack-$algo fsck &&
	bitmap_entries spack-$algo $algo >entries &&
	git -C spack-$algo rev-list --all >commits &&
	test_bitmap_entries spack-$algo entries commits &&
	tip_commits spack-$algo >tips &&
	sort entries | comm -13 - tips >no-bitmap &&
	test_must_be_empty no-bitmap &&
	check_bitmap spack-$algo small-$algo $algo 1
'

test_expect_success "big: gitpack's MIDX bitmap, checked by git ($algo)" '
	midx_variant midx big-$algo true true &&
	test "$(bitmap_flags $(bitmap_of midx-$algo))" = 0015 &&
	git -C midx-$algo multi-pack-index verify &&
	git -C midx-$algo fsck &&
	check_bitmap midx-$algo big-$algo $algo 4 &&
	# the newest commits have a bitmap
	git -C midx-$algo rev-parse main main~1 main~2 | sort >want &&
	sort midx-$algo.entries | comm -13 - want >missing &&
	test_must_be_empty missing
'

test_expect_success "big: git reads the lookup table: \"(N entries)\" ($algo)" '
	n=$(bitmap_nr_entries $(bitmap_of midx-$algo)) &&
	test_line_count = $n midx-$algo.entries &&
	git -C midx-$algo rev-list --test-bitmap main >/dev/null 2>err &&
	grep "^Bitmap v1 test ($n entries)\$" err
'

test_expect_success GITPACK_IS_GITPACK "gitpack's defaults: hash cache and lookup table ($algo)" '
	midx_copy small-$algo defaults-$algo &&
	gitpack -C defaults-$algo multi-pack-index write --bitmap &&
	test "$(bitmap_flags $(bitmap_of defaults-$algo))" = 0015 &&
	test_cmp_bin $(bitmap_of smidx-$algo) $(bitmap_of defaults-$algo)
'

for v in "nolookup false true 0005" "nohash true false 0011" "plain false false 0001"
do
	set -- $v
	test_expect_success "big: pack.writeBitmapLookupTable=$2, pack.writeBitmapHashCache=$3 ($algo)" '
		set -- $v &&
		midx_variant midx-$1 big-$algo $2 $3 &&
		bitmap=$(bitmap_of midx-$1-$algo) &&
		test "$(bitmap_flags $bitmap)" = $4 &&
		git -C midx-$1-$algo multi-pack-index verify &&
		check_bitmap_quick midx-$1-$algo big-$algo $algo &&
		test_cmp midx-$algo.entries midx-$1-$algo.entries &&
		# the same entries: the file is 16 bytes an entry shorter
		# without the lookup table, 4 bytes an object without the
		# hash cache
		n=$(wc -l <midx-$algo.entries) &&
		objects=$(midx_dump $(midx_pack_dir midx-$algo)/multi-pack-index $algo |
			grep -c "^object ") &&
		shrink=0 &&
		if test $2 = false
		then
			shrink=$((shrink + 16 * n))
		fi &&
		if test $3 = false
		then
			shrink=$((shrink + 4 * objects))
		fi &&
		test $(($(wc -c <$(bitmap_of midx-$algo)) - $(wc -c <$bitmap))) = $shrink &&
		git -C midx-$1-$algo rev-list --test-bitmap main >/dev/null 2>err &&
		if test $2 = true
		then
			grep "^Bitmap v1 test ($n entries)\$" err
		else
			grep "^Bitmap v1 test ($n entries loaded)\$" err
		fi
	'
done

test_expect_success "big: clone --no-local uses gitpack's MIDX bitmap ($algo)" '
	clone_uses_bitmap midx-$algo &&
	# the MIDX reverse index, which pack-objects loads for the bitmap
	grep "$midx_revindex_event" midx-$algo.trace &&
	clone_uses_bitmap midx-plain-$algo
'

test_expect_success "big: without a bitmap, the clone reuses no pack: the check works ($algo)" '
	midx_copy big-$algo nobitmap-$algo &&
	git -C nobitmap-$algo multi-pack-index write &&
	clone_from nobitmap-$algo &&
	! grep "pack-reused [1-9]" nobitmap-$algo.total &&
	! grep "$midx_revindex_event" nobitmap-$algo.trace
'

test_expect_success "big: a single-pack bitmap by test-tool bitmap-write ($algo)" '
	midx_copy big-$algo big-pack-$algo &&
	git -C big-pack-$algo repack -adkq &&
	git -C big-pack-$algo count-objects -v >count &&
	grep "^packs: 1\$" count &&
	pack_variant pack big-pack-$algo --stats >stats &&
	cat stats &&
	bitmap=$(bitmap_of pack-$algo) &&
	test "$(bitmap_flags $bitmap)" = 0015 &&
	grep "^commits 321\$" stats &&
	grep "^size $(wc -c <$bitmap)\$" stats &&
	grep "^selected $(bitmap_nr_entries $bitmap)\$" stats &&
	# the unreachable objects are in the pack
	git -C pack-$algo cat-file -e $(cat big-$algo.dangling) &&
	git -C pack-$algo fsck &&
	check_bitmap pack-$algo big-$algo $algo 4 &&
	clone_uses_bitmap pack-$algo
'

test_expect_success "big: test-tool bitmap-write --no-lookup-table, --no-hash-cache ($algo)" '
	pack_variant pack-nolookup big-pack-$algo --no-lookup-table &&
	test "$(bitmap_flags $(bitmap_of pack-nolookup-$algo))" = 0005 &&
	check_bitmap_quick pack-nolookup-$algo big-$algo $algo &&
	test_cmp pack-$algo.entries pack-nolookup-$algo.entries &&
	pack_variant pack-nohash big-pack-$algo --no-hash-cache &&
	test "$(bitmap_flags $(bitmap_of pack-nohash-$algo))" = 0011 &&
	check_bitmap_quick pack-nohash-$algo big-$algo $algo &&
	pack_variant pack-plain big-pack-$algo --no-hash-cache --no-lookup-table &&
	test "$(bitmap_flags $(bitmap_of pack-plain-$algo))" = 0001 &&
	git -C pack-plain-$algo rev-list --test-bitmap main 2>err &&
	grep "entries loaded)\$" err &&
	grep "^OK!\$" err
'

test_expect_success "big: one thread or several write the same bitmap ($algo)" '
	pack_variant pack-1 big-pack-$algo --threads=1 &&
	test_cmp_bin $(bitmap_of pack-$algo) $(bitmap_of pack-1-$algo) &&
	pack_variant pack-5 big-pack-$algo --threads=5 &&
	test_cmp_bin $(bitmap_of pack-$algo) $(bitmap_of pack-5-$algo)
'

test_expect_success "test-tool bitmap-write: a pack without closure fails, naming the object ($algo)" '
	midx_copy big-pack-$algo open-$algo &&
	(
		cd open-$algo &&
		test_commit open &&
		ls .git/objects/pack/pack-*.idx >../before &&
		git repack -dq &&
		ls .git/objects/pack/pack-*.idx >../after &&
		new=$(comm -13 ../before ../after) &&
		test -n "$new" &&
		test_must_fail test-tool bitmap-write $new 2>../err &&
		ls -a .git/objects/pack >../files
	) &&
	cat err &&
	grep "^fatal: .* [0-9a-f]\{40,64\} is reachable but not in the bitmapped pack or MIDX" err &&
	! grep "\.bitmap\$\|tmp" files &&
	(
		cd open-$algo &&
		test_must_fail test-tool bitmap-write nonesuch.idx 2>../err
	) &&
	grep "nonesuch.idx is not one of the repository" err
'

test_expect_success "file size: gitpack's MIDX bitmap against git's ($algo)" '
	midx_copy big-$algo gitsize-$algo &&
	midx_git -C gitsize-$algo -c pack.writeBitmapLookupTable=true \
		multi-pack-index write --bitmap &&
	midx_cmp_written $(midx_pack_dir gitsize-$algo)/multi-pack-index \
		$(midx_pack_dir midx-$algo)/multi-pack-index &&
	git_bitmap=$(bitmap_of gitsize-$algo) &&
	gp_bitmap=$(bitmap_of midx-$algo) &&
	git_size=$(wc -c <$git_bitmap) &&
	gp_size=$(wc -c <$gp_bitmap) &&
	echo "MIDX bitmap, $algo: git $git_size bytes ($(bitmap_nr_entries $git_bitmap) entries)," \
		"gitpack $gp_size bytes ($(bitmap_nr_entries $gp_bitmap) entries)" &&
	test $((gp_size * 100)) -le $((git_size * 110))
'

test_expect_success "file size: single pack, against git repack -adkb ($algo)" '
	midx_copy big-pack-$algo gitpacksize-$algo &&
	git -C gitpacksize-$algo -c pack.writeBitmapLookupTable=true repack -adkbq &&
	git -C gitpacksize-$algo rev-list --test-bitmap main >/dev/null 2>&1 &&
	git_bitmap=$(bitmap_of gitpacksize-$algo) &&
	gp_bitmap=$(bitmap_of pack-$algo) &&
	git_size=$(wc -c <$git_bitmap) &&
	gp_size=$(wc -c <$gp_bitmap) &&
	echo "pack bitmap, $algo: git $git_size bytes ($(bitmap_nr_entries $git_bitmap) entries)," \
		"gitpack $gp_size bytes ($(bitmap_nr_entries $gp_bitmap) entries)" &&
	test $((gp_size * 100)) -le $((git_size * 110))
'

test_expect_success "--refs-snapshot: only its tips count ($algo)" '
	git -C big-$algo for-each-ref --format="%(objectname)" refs/heads/many/ >snap &&
	git -C big-$algo rev-parse main tagtag >>snap &&
	test_line_count = 42 snap &&
	midx_copy big-$algo snap-$algo &&
	gitpack -C snap-$algo multi-pack-index write --bitmap \
		--refs-snapshot="$TRASH_DIRECTORY/snap" &&
	bitmap_entries snap-$algo $algo | sort >snap-$algo.entries &&
	# not in the snapshot: the orphan and topic branches have no bitmap
	git -C big-$algo rev-list orphan topic --not main | sort >hidden &&
	test_line_count = 9 hidden &&
	comm -12 snap-$algo.entries hidden >found &&
	test_must_be_empty found &&
	compare_walk snap-$algo --objects --all
'

# git 2.39 only prefers such a tip to the other commits of its selection
# window; gitpack always selects it.
test_expect_success GITPACK_IS_GITPACK "--refs-snapshot: a tip marked '+' is selected ($algo)" '
	# more than BITMAP_ALL_TIPS_LIMIT tips: not all have a bitmap
	sort -u snap | comm -23 - snap-$algo.entries >unselected &&
	test_file_not_empty unselected &&
	head -n 3 unselected >want &&
	sed "s/^/+/" want >snap.plus &&
	cat snap >>snap.plus &&
	rm -f $(midx_pack_dir snap-$algo)/multi-pack-index* &&
	gitpack -C snap-$algo multi-pack-index write --bitmap \
		--refs-snapshot="$TRASH_DIRECTORY/snap.plus" &&
	bitmap_entries snap-$algo $algo | sort >entries &&
	sort want | comm -13 entries - >missing &&
	test_must_be_empty missing &&
	for c in $(cat want)
	do
		git -C snap-$algo rev-list --test-bitmap $c 2>err &&
		grep "^OK!\$" err || return 1
	done &&
	compare_walk snap-$algo --objects --all
'

test_expect_success "--refs-snapshot: a tag is peeled; a ref left out is not a tip ($algo)" '
	midx_copy small-$algo snap2-$algo &&
	git -C small-$algo rev-parse orphan-tag main >snap2 &&
	gitpack -C snap2-$algo multi-pack-index write --bitmap \
		--refs-snapshot="$TRASH_DIRECTORY/snap2" &&
	bitmap_entries snap2-$algo $algo | sort >entries &&
	git -C small-$algo rev-parse orphan~2 main | sort >want &&
	comm -13 entries want >missing &&
	test_must_be_empty missing &&
	git -C small-$algo rev-list orphan topic --not main orphan~2 | sort >hidden &&
	test_line_count = 5 hidden &&
	comm -12 entries hidden >found &&
	test_must_be_empty found &&
	git -C snap2-$algo rev-list --test-bitmap orphan~2 2>err &&
	grep "^OK!\$" err
'

test_expect_success GITPACK_IS_GITPACK "pack.preferBitmapTips: a tip under each hierarchy gets a bitmap ($algo)" '
	git -C big-$algo for-each-ref --format="%(objectname) %(refname)" \
		refs/heads/many/ >many &&
	awk "NR == FNR { e[\$1] = 1; next } !(\$1 in e) { print \$2 }" \
		midx-$algo.entries many >unselected &&
	ref1=$(sed -n 1p unselected) &&
	ref2=$(sed -n 2p unselected) &&
	test -n "$ref2" &&
	midx_copy big-$algo prefer-$algo &&
	# values name hierarchies, as in git: "refs/prefer/one" and
	# "refs/prefer/two/" both mean the refs below
	git -C prefer-$algo update-ref refs/prefer/one/tip $ref1 &&
	git -C prefer-$algo update-ref refs/prefer/two/tip $ref2 &&
	git -C prefer-$algo config pack.preferBitmapTips refs/prefer/one &&
	git -C prefer-$algo config --add pack.preferBitmapTips refs/prefer/two/ &&
	gitpack -C prefer-$algo multi-pack-index write --bitmap &&
	bitmap_entries prefer-$algo $algo | sort >entries &&
	git -C prefer-$algo rev-parse $ref1 $ref2 | sort >want &&
	comm -13 entries want >missing &&
	test_must_be_empty missing &&
	for c in $(cat want)
	do
		git -C prefer-$algo rev-list --test-bitmap $c 2>err &&
		grep "^OK!\$" err || return 1
	done
'

test_expect_success "a second write --bitmap: the same MIDX, the bitmap kept ($algo)" '
	midx_copy small-$algo twice-$algo &&
	midx_set_mtimes twice-$algo distinct &&
	gitpack -C twice-$algo multi-pack-index write --bitmap &&
	pack_dir=$(midx_pack_dir twice-$algo) &&
	cp $pack_dir/multi-pack-index midx.before &&
	(cd $pack_dir && ls -i multi-pack-index-*.bitmap) >before &&
	gitpack -C twice-$algo multi-pack-index write --bitmap &&
	(cd $pack_dir && ls -i multi-pack-index-*.bitmap) >after &&
	test_cmp before after &&
	test_cmp_bin midx.before $pack_dir/multi-pack-index &&
	git -C twice-$algo multi-pack-index write --bitmap &&
	(cd $pack_dir && ls -i multi-pack-index-*.bitmap) >after &&
	test_cmp before after
'

# As git, a MIDX of the same packs that has its bitmap is kept as it
# is: no file is written (even where, with equal mtimes, a rewrite could
# prefer another pack).
test_expect_success "a second write --bitmap touches no file, as git ($algo)" '
	midx_copy twice-$algo twice-ino-$algo &&
	(cd $(midx_pack_dir twice-ino-$algo) && ls -i multi-pack-index*) >before &&
	gitpack -C twice-ino-$algo multi-pack-index write --bitmap &&
	(cd $(midx_pack_dir twice-ino-$algo) && ls -i multi-pack-index*) >after &&
	test_cmp before after &&
	(cd $(midx_pack_dir smidx-$algo) && ls -i multi-pack-index*) >before &&
	for who in git gitpack
	do
		midx_copy smidx-$algo equal-$who-$algo &&
		$who -C equal-$who-$algo multi-pack-index write --bitmap &&
		(cd $(midx_pack_dir equal-$who-$algo) && ls -i multi-pack-index*) >after &&
		test_cmp before after || return 1
	done
'

test_expect_success "a plain write over a changed MIDX removes the stale bitmap, as git does ($algo)" '
	midx_copy smidx-$algo stale-$algo &&
	(
		cd stale-$algo &&
		test_commit stale &&
		git repack -dq
	) &&
	midx_copy stale-$algo stale-git-$algo &&
	gitpack -C stale-$algo multi-pack-index write &&
	git -C stale-git-$algo multi-pack-index write &&
	ls $(midx_pack_dir stale-git-$algo) >expect &&
	ls $(midx_pack_dir stale-$algo) >actual &&
	test_cmp expect actual &&
	! grep "\.bitmap\$" actual &&
	test_cmp_bin $(midx_pack_dir stale-git-$algo)/multi-pack-index \
		$(midx_pack_dir stale-$algo)/multi-pack-index &&
	# --bitmap again: a new bitmap for the new MIDX
	gitpack -C stale-$algo multi-pack-index write --bitmap &&
	bitmap_of stale-$algo &&
	git -C stale-$algo rev-list --test-bitmap stale 2>err &&
	grep "^OK!\$" err
'

# git 2.39 removes the bitmap when a write without --bitmap finds the
# MIDX up to date (and keeps the MIDX, RIDX chunk and all).
test_expect_success "a plain write over the same MIDX removes its bitmap, as git does ($algo)" '
	midx_copy smidx-$algo same-$algo &&
	midx_copy smidx-$algo same-git-$algo &&
	gitpack -C same-$algo multi-pack-index write &&
	git -C same-git-$algo multi-pack-index write &&
	ls -i $(midx_pack_dir same-git-$algo) >expect &&
	ls -i $(midx_pack_dir same-$algo) >actual &&
	! grep "\.bitmap\$" expect &&
	test_cmp expect actual
'

# git leaves such a tip out (its walk for the MIDX bitmap keeps only the
# commits that are in the MIDX) and writes a bitmap of the rest.
test_expect_success "a loose commit a ref points at: no bitmap for it, as git ($algo)" '
	midx_copy small-$algo loose-$algo &&
	test_commit -C loose-$algo loose &&
	for who in git gitpack
	do
		midx_copy loose-$algo loose-$who-$algo &&
		$who -C loose-$who-$algo multi-pack-index write --bitmap &&
		bitmap_of loose-$who-$algo &&
		git -C loose-$who-$algo rev-list --test-bitmap main~1 2>err &&
		grep "^OK!\$" err &&
		test_expect_code 128 git -C loose-$who-$algo rev-list --test-bitmap loose 2>err &&
		grep "doesn.t have an indexed bitmap" err &&
		compare_walk loose-$who-$algo --objects --all || return 1
	done &&
	compare_bitmap loose-gitpack-$algo --objects main~1 &&
	compare_bitmap loose-gitpack-$algo --count --objects --all
'

test_expect_success "a loose commit below a packed tip: both fail, gitpack names it ($algo)" '
	midx_copy small-$algo hole-$algo &&
	(
		cd hole-$algo &&
		test_commit hole1 &&
		test_commit hole2 &&
		git rev-list --objects hole1..hole2 |
		git pack-objects -q .git/objects/pack/pack >/dev/null &&
		git prune-packed &&
		git rev-parse hole1 >../hole &&
		git tag -d hole1 >/dev/null
	) &&
	hole=$(cat hole) &&
	git -C hole-$algo cat-file -e $hole &&
	midx_copy hole-$algo hole-git-$algo &&
	test_must_fail gitpack -C hole-$algo multi-pack-index write --bitmap 2>err &&
	cat err &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		grep "^fatal: .*commit $hole is reachable but not in the bitmapped pack or MIDX" err
	fi &&
	ls -a $(midx_pack_dir hole-$algo) >files &&
	! grep "\.bitmap\$" files &&
	! grep "tmp" files &&
	! git -C hole-git-$algo multi-pack-index write --bitmap 2>err &&
	cat err &&
	grep "Packfile doesn.t have full closure" err &&
	# git writes no MIDX then
	test_path_is_missing $(midx_pack_dir hole-git-$algo)/multi-pack-index
'

# The new MIDX goes into place only once its bitmap is written: when the
# bitmap fails, the MIDX and bitmap that were there stay, as with git.
test_expect_success "a failed bitmap leaves the old MIDX and bitmap, as git does ($algo)" '
	midx_copy smidx-$algo keep-$algo &&
	(
		cd keep-$algo &&
		test_commit keep1 &&
		test_commit keep2 &&
		git rev-list --objects keep1..keep2 |
		git pack-objects -q .git/objects/pack/pack >/dev/null &&
		git prune-packed &&
		git tag -d keep1 >/dev/null
	) &&
	midx_copy keep-$algo keep-git-$algo &&
	! git -C keep-git-$algo multi-pack-index write --bitmap &&
	test_must_fail gitpack -C keep-$algo multi-pack-index write --bitmap &&
	ls -i $(midx_pack_dir keep-git-$algo) >expect &&
	ls -i $(midx_pack_dir keep-$algo) >actual &&
	grep "\.bitmap\$" expect &&
	test_cmp expect actual
'

done

test_done
