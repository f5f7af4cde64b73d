#!/bin/sh

test_description='rev-list --use-bitmap-index and --test-bitmap read what git wrote

A history built by stock git (a merged branch, an unmerged one, an orphan
branch, a gitlink, annotated and lightweight tags of commits, trees,
blobs and tags, and an unreachable commit, tree and blob that stay in the
packs), in seven overlapping packs, then bitmapped by git: one pack with
"repack -adkb" (default, with pack.writeBitmapLookupTable=true, with
pack.writeBitmapHashCache=false), and a multi-pack-index over the seven
packs with "multi-pack-index write --bitmap" (default, with
--preferred-pack, with a lookup table). Over a hundred commits, so git
leaves some of them without a bitmap.

For each, "gitpack rev-list --use-bitmap-index" prints byte for byte what
"git rev-list --use-bitmap-index" prints (all refs, ranges, --not, ^tags,
--tags, --branches, --count, trees and blobs as tips, the unreachable
commit as a tip), says nothing on stderr, and its set of objects is the
plain walk'\''s. Then loose objects and a pack without a bitmap are added
after the bitmap: the objects outside the bitmap may come in another
order, so the outputs are compared sorted, and byte for byte once those
objects are left out. "--test-bitmap" gives git'\''s stderr (without
progress) and exit code for commits with and without a bitmap. SHA-1 and
SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# bitmap_history_stream HEXSZ: a git fast-import stream. main: 60
# commits (the first with an executable, a symlink and an empty file);
# side: 12 commits from the 30th, merged into main; main: 50 more (one
# adding a gitlink, one deleting a file); topic: 3 commits from main's
# 70th; orphan: 6 commits of a history of their own. A checkpoint (a new
# pack) after the first 40 commits of main, after the merge and before
# the orphan branch.
bitmap_history_stream () {
	perl -e '
		use strict;
		my ($hexsz) = @ARGV;
		my ($when, $mark) = (1700000000, 0);
		my %at;
		sub blob {
			my ($mode, $path, $body) = @_;
			return "M $mode inline $path\ndata " . length($body) . "\n$body\n";
		}
		sub commit {
			my ($ref, $msg, $from, $merge, @changes) = @_;
			$when += 60;
			$mark++;
			print "commit $ref\nmark :$mark\n";
			print "committer C O Mitter <committer\@example.com> $when +0000\n";
			print "data ", length($msg), "\n$msg\n";
			print "from $from\n" if defined $from;
			print "merge $merge\n" if defined $merge;
			print @changes, "\n";
			return ":$mark";
		}
		sub main_commit {
			my ($k) = @_;
			my @changes = (
				blob("100644", "f" . $k % 7, "line $k\n" x ($k % 5 + 1)),
				blob("100644", "d/e/g" . $k % 3, "deep $k\n"),
			);
			if ($k == 1) {
				push @changes, blob("100755", "run.sh", "#!/bin/sh\necho run\n"),
					blob("120000", "link", "d/e/g0"),
					blob("100644", "empty", "");
			}
			push @changes, "M 160000 " . ("1" x $hexsz) . " sub\n" if $k == 80;
			push @changes, "D f3\n" if $k == 95;
			$at{$k} = commit("refs/heads/main", "main $k", undef, undef, @changes);
		}
		main_commit($_) for 1 .. 40;
		print "checkpoint\n\n";
		main_commit($_) for 41 .. 60;
		print "reset refs/heads/side\nfrom $at{30}\n\n";
		my $side;
		for my $k (1 .. 12) {
			$side = commit("refs/heads/side", "side $k", undef, undef,
				blob("100644", "side" . $k % 4, "side $k\n"));
		}
		commit("refs/heads/main", "merge side", undef, $side,
			blob("100644", "merged", "yes\n"));
		print "checkpoint\n\n";
		main_commit($_) for 61 .. 110;
		print "reset refs/heads/topic\nfrom $at{70}\n\n";
		for my $k (1 .. 3) {
			commit("refs/heads/topic", "topic $k", undef, undef,
				blob("100644", "topic", "topic $k\n"));
		}
		print "checkpoint\n\n";
		print "reset refs/heads/orphan\n\n";
		for my $k (1 .. 6) {
			commit("refs/heads/orphan", "orphan $k", undef, undef,
				blob("100644", "o" . $k % 2, "orphan $k\n"));
		}
	' "$1"
}

# bitmap_history ALGO DIR: the repository DIR, with the history above
# (four packs), tags (annotated and lightweight, of commits, trees, blobs
# and tags: one more pack), a commit, tree and blob no ref reaches (a pack
# of their own; the commit is in DIR.dangling) and a pack of main~40..main~10
# that overlaps the others. Seven packs, no loose object, no bitmap. The
# roles of the last three packs are in DIR.packs (midx_role).
bitmap_history () {
	git init -q -b main --object-format="$1" "$2" &&
	git -C "$2" config gc.auto 0 &&
	bitmap_history_stream $(test_oid_hexsz $1) >"$2.stream" &&
	git -C "$2" -c fastimport.unpackLimit=0 fast-import --quiet <"$2.stream" &&
	rm -f "$2.stream" &&
	(
		cd "$2" &&
		git reset -q --hard main &&
		git tag -a -m "v1" v1 main~50 &&
		git tag -a -m "v2" v2 side &&
		git tag light main~20 &&
		git -c advice.nestedTag=false tag -a -m "a tag of a tag" tagtag v1 &&
		git -c advice.nestedTag=false tag -a -m "and of that" tagtagtag tagtag &&
		git tag -a -m "a tree" tree-tag "main^{tree}" &&
		git tag -a -m "a blob" blob-tag main:f1 &&
		git tag tree-light "main~5^{tree}" &&
		git tag blob-light main~5:d/e/g1 &&
		git tag -a -m "on the orphan branch" orphan-tag orphan~2 &&
		blob=$(echo "nobody reaches this" | git hash-object -w --stdin) &&
		tree=$(printf "100644 blob %s\tunreachable\n" $blob | git mktree) &&
		git commit-tree -p main~3 -m unreachable $tree
	) >"$2.dangling" &&
	test_line_count = 1 "$2.dangling" &&
	: >"$2.packs" &&
	midx_new_pack_ "$2" tags git -C "$2" repack -dq &&
	midx_new_pack_ "$2" dangling eval \
		"git -C \"$2\" rev-list --objects \$(cat \"$2.dangling\") --not main~3 |
		git -C \"$2\" pack-objects -q .git/objects/pack/pack >/dev/null" &&
	midx_new_pack_ "$2" range midx_pack_range "$2" main~40 main~10 &&
	git -C "$2" prune-packed &&
	test "$(ls "$(midx_pack_dir "$2")"/pack-*.pack | wc -l)" = 7 &&
	git -C "$2" count-objects -v >"$2.count" &&
	grep "^count: 0$" "$2.count" &&
	rm -f "$2.count"
}

# bitmap_flags FILE: the flags of the bitmap FILE, as 4 hex digits.
bitmap_flags () {
	od -An -tx1 -j6 -N2 "$1" | tr -d ' \n'
}

# make_variant NAME FLAGS CMD...: NAME-ALGO, a copy of base-ALGO in which
# CMD ran (there); it must leave one bitmap, whose flags are FLAGS. The
# objects it covers (all there are) go to NAME-ALGO.in-bitmap.
make_variant () {
	gp_mv_dir_=$1-$algo
	gp_mv_flags_=$2
	shift 2
	midx_copy base-$algo $gp_mv_dir_ &&
	(cd $gp_mv_dir_ && "$@") &&
	ls $(midx_pack_dir $gp_mv_dir_)/*.bitmap >$gp_mv_dir_.bitmaps &&
	test_line_count = 1 $gp_mv_dir_.bitmaps &&
	test "$(bitmap_flags "$(cat $gp_mv_dir_.bitmaps)")" = "$gp_mv_flags_" &&
	git -C $gp_mv_dir_ count-objects -v >$gp_mv_dir_.count &&
	grep "^count: 0$" $gp_mv_dir_.count &&
	git -C $gp_mv_dir_ cat-file --batch-all-objects \
		--batch-check="%(objectname)" >$gp_mv_dir_.in-bitmap
}

# add_after_bitmap DIR: objects the bitmap of DIR does not know, all loose:
# commits on main (a new file, then an empty commit), a commit reaching the
# unreachable tree, a branch from a commit in the middle of main,
# annotated tags of an old and a new commit, a tag of a new blob.
add_after_bitmap () {
	gp_aab_tree_="$(cat base-$algo.dangling)^{tree}" &&
	(
		cd "$1" &&
		test_commit after &&
		test_tick &&
		git commit -q --allow-empty -m "empty" &&
		commit=$(git commit-tree -p main -m "reuse" "$gp_aab_tree_") &&
		git update-ref refs/heads/reuse $commit &&
		commit=$(git commit-tree -p main~47 -m "old base" "main~47^{tree}") &&
		git update-ref refs/heads/old-base $commit &&
		git tag -a -m "late" late-tag main~70 &&
		git tag -a -m "new" new-tag main &&
		git tag fresh-blob "$(echo fresh | git hash-object -w --stdin)"
	) &&
	git -C "$1" count-objects -v >"$1.count" &&
	! grep "^count: 0$" "$1.count"
}

# run_both DIR ARGS...: "rev-list ARGS" in DIR, git into expect,
# expect.err and expect.code, gitpack into actual, actual.err and
# actual.code.
run_both () {
	gp_rb_dir_=$1
	shift
	git -C "$gp_rb_dir_" rev-list "$@" >expect 2>expect.err
	echo $? >expect.code
	gitpack -C "$gp_rb_dir_" rev-list "$@" >actual 2>actual.err
	echo $? >actual.code
}

# compare_bitmap DIR ARGS...: "rev-list --use-bitmap-index ARGS" prints
# the same bytes with git and gitpack, exits 0 with both, and gitpack
# says nothing on stderr.
compare_bitmap () {
	run_both "$@" --use-bitmap-index &&
	compare_results &&
	test "$(cat actual.code)" = 0 &&
	test_must_be_empty actual.err
}

# in_bitmap DIR FILE: the lines of FILE whose first word is an object the
# bitmap of DIR covers.
in_bitmap () {
	awk 'NR == FNR { known[$1] = 1; next } ($1 in known)' "$1.in-bitmap" "$2"
}

# compare_after DIR ARGS...: as compare_bitmap when objects outside the
# bitmap exist: the outputs sorted are the same, and so are they with
# those objects left out.
compare_after () {
	run_both "$@" --use-bitmap-index &&
	test_cmp expect.code actual.code &&
	test "$(cat actual.code)" = 0 &&
	test_must_be_empty actual.err &&
	sort expect >expect.sorted &&
	sort actual >actual.sorted &&
	test_cmp expect.sorted actual.sorted &&
	in_bitmap "$1" expect >expect.in &&
	in_bitmap "$1" actual >actual.in &&
	test_cmp expect.in actual.in
}

# expand ARGS...: ARGS, with DANGLING replaced by the unreachable commit.
expand () {
	echo "$*" | sed "s/DANGLING/$(cat base-$algo.dangling)/"
}

# test_bitmap_like_git DIR REVS MIN_OK MIN_NONE: for each revision of
# the file REVS, "rev-list --test-bitmap" prints the same on stderr
# (progress left out) and exits the same with git and gitpack: OK! when
# git is happy, "doesn't have an indexed bitmap" when not (the revision
# is not a commit, or git has no bitmap for it). At least MIN_OK of them
# pass and MIN_NONE have no bitmap.
test_bitmap_like_git () {
	gp_tb_ok_=0
	gp_tb_none_=0
	for rev in $(cat "$2")
	do
		oid=$(git -C "$1" rev-parse "$rev") || return 1
		git -C "$1" rev-list --test-bitmap $rev >/dev/null 2>expect.raw
		echo $? >expect.code
		gitpack -C "$1" rev-list --test-bitmap $rev >/dev/null 2>actual.raw
		echo $? >actual.code
		grep -v "Verifying bitmap entries" expect.raw >expect
		grep -v "Verifying bitmap entries" actual.raw >actual
		cp actual actual.err
		compare_results || return 1
		if test "$(cat expect.code)" = 0
		then
			grep "^Found bitmap for '$oid'\. [0-9]* bits / [0-9a-f]\{8\} checksum$" actual &&
			grep "^OK!$" actual || return 1
			gp_tb_ok_=$((gp_tb_ok_ + 1))
		else
			grep "commit '$oid' doesn.t have an indexed bitmap" actual || return 1
			gp_tb_none_=$((gp_tb_none_ + 1))
		fi
	done
	echo "$gp_tb_ok_ with a bitmap, $gp_tb_none_ without"
	test $gp_tb_ok_ -ge $3 && test $gp_tb_none_ -ge $4
}

# The revisions asked for; DANGLING is the unreachable commit.
bitmap_args='--objects --all
--all
--count --objects --all
--count --all
main~30..main
--objects main~30..main
--objects side..main
--objects main --not side
--objects topic..side
--count --objects main~25..main
--tags
--branches
--objects --tags
--objects --branches
--objects --all ^v1
--objects --all ^tagtagtag ^tree-tag
--all ^v1 ^light
--objects --all --not --tags
--objects orphan --not main
--objects main --not orphan
--objects main ^main
--objects main^{tree}
--objects blob-tag
--objects tree-tag tree-light blob-light
--objects DANGLING
--objects DANGLING --not main~2
--count --objects DANGLING
--objects --all --not DANGLING
--objects main ^main^{tree}
--objects --all ^blob-tag ^tree-light
--count --all --not v1'

# With objects outside the bitmap, also: tips and exclusions among them.
after_args="$bitmap_args
--objects --all --not new-tag
--objects reuse --not main
--objects old-base ^main~40
--count --objects --all --not late-tag
--objects main~3..main"

# The variants, "NAME FLAGS COMMAND".
variants='pack 0005 git repack -adkbq
pack-lookup 0015 git -c pack.writeBitmapLookupTable=true repack -adkbq
pack-nohash 0001 git -c pack.writeBitmapHashCache=false repack -adkbq
midx 0005 git multi-pack-index write --bitmap
midx-preferred 0005 git multi-pack-index write --bitmap --preferred-pack=PREFERRED
midx-lookup 0015 git -c pack.writeBitmapLookupTable=true multi-pack-index write --bitmap'

for algo in $test_hash_algos
do

test_expect_success "setup: history, tags, unreachable objects in 7 packs ($algo)" '
	bitmap_history $algo base-$algo &&
	dangling=$(cat base-$algo.dangling) &&
	git -C base-$algo cat-file -e $dangling &&
	git -C base-$algo rev-list --objects --all >all &&
	! grep $dangling all &&
	test $(git -C base-$algo rev-list --all | wc -l) -gt 100
'

while read -r name flags cmd
do
	test_expect_success "setup: $name ($algo)" '
		preferred=$(midx_role base-$algo range) &&
		make_variant $name $flags $(echo "$cmd" | sed "s/PREFERRED/$preferred/") &&
		if test $name = ${name#midx}
		then
			# one pack, holding the unreachable objects too
			grep "^packs: 1$" $name-$algo.count
		fi &&
		grep $(cat base-$algo.dangling) $name-$algo.in-bitmap
	'

	while read -r args
	do
		test_expect_success "rev-list --use-bitmap-index $args ($name, $algo)" '
			compare_bitmap $name-$algo $(expand $args)
		'
	done <<-EOF
	$bitmap_args
	EOF

	test_expect_success "the bitmap answers with the plain walk's objects ($name, $algo)" '
		dir=$name-$algo &&
		git -C $dir rev-list --objects --all | cut -d" " -f1 | sort >expect.git &&
		gitpack -C $dir rev-list --objects --all >plain &&
		cut -d" " -f1 plain | sort >expect &&
		test_cmp expect.git expect &&
		gitpack -C $dir rev-list --use-bitmap-index --objects --all >actual.raw 2>err &&
		test_must_be_empty err &&
		! grep " " actual.raw &&
		sort actual.raw >actual &&
		test_cmp expect actual &&
		gitpack -C $dir rev-list --all | sort >expect &&
		gitpack -C $dir rev-list --use-bitmap-index --all | sort >actual &&
		test_cmp expect actual &&
		! grep $(cat base-$algo.dangling) actual
	'

	test_expect_success "--test-bitmap as git ($name, $algo)" '
		dir=$name-$algo &&
		{
			git -C $dir rev-list --all | awk "NR % 11 == 1" &&
			echo main side topic orphan main~1 v1 tagtag "main^{tree}" blob-tag &&
			cat base-$algo.dangling
		} >commits &&
		test_bitmap_like_git $dir commits 5 6
	'
done <<EOF
$variants
EOF

test_expect_success "no bitmap: --use-bitmap-index walks, --test-bitmap fails, as in git ($algo)" '
	compare_bitmap base-$algo --objects --all &&
	grep " " actual &&
	compare_bitmap base-$algo --count --objects main~30..main &&
	compare_bitmap base-$algo --objects --all ^v1 &&
	test_must_fail gitpack -C base-$algo rev-list --test-bitmap main 2>err &&
	grep "^fatal: failed to load bitmap indexes" err &&
	test_must_fail git -C base-$algo rev-list --test-bitmap main
'

test_expect_success "--test-bitmap wants exactly one commit, as git ($algo)" '
	run_both pack-$algo --test-bitmap main side &&
	test_must_be_empty actual &&
	test_cmp expect.err actual.err &&
	test_cmp expect.code actual.code &&
	run_both pack-$algo --test-bitmap &&
	test_cmp expect.err actual.err &&
	test_cmp expect.code actual.code &&
	test "$(cat actual.code)" != 0
'

test_expect_success "setup: objects after the bitmap, loose and in a pack without one ($algo)" '
	for v in pack midx pack-lookup
	do
		midx_copy $v-$algo $v-loose-$algo &&
		cp $v-$algo.in-bitmap $v-loose-$algo.in-bitmap &&
		add_after_bitmap $v-loose-$algo || return 1
	done &&
	midx_copy pack-loose-$algo pack-incr-$algo &&
	cp pack-$algo.in-bitmap pack-incr-$algo.in-bitmap &&
	git -C pack-incr-$algo repack -dq &&
	git -C pack-incr-$algo count-objects -v >count &&
	grep "^count: 0$" count &&
	grep "^packs: 2$" count &&
	ls $(midx_pack_dir pack-incr-$algo)/*.bitmap >bitmaps &&
	test_line_count = 1 bitmaps
'

for name in pack-loose midx-loose pack-lookup-loose pack-incr
do
	while read -r args
	do
		test_expect_success "rev-list --use-bitmap-index $args ($name, $algo)" '
			compare_after $name-$algo $(expand $args)
		'
	done <<-EOF
	$after_args
	EOF

	test_expect_success "the bitmap answers with the plain walk's objects ($name, $algo)" '
		dir=$name-$algo &&
		gitpack -C $dir rev-list --objects --all | cut -d" " -f1 | sort >expect &&
		git -C $dir rev-list --objects --all | cut -d" " -f1 | sort >expect.git &&
		test_cmp expect.git expect &&
		gitpack -C $dir rev-list --use-bitmap-index --objects --all >actual.raw 2>err &&
		test_must_be_empty err &&
		! grep " " actual.raw &&
		sort actual.raw >actual &&
		test_cmp expect actual &&
		gitpack -C $dir rev-list --use-bitmap-index --count --objects --all >count &&
		test "$(cat count)" = "$(wc -l <expect)"
	'

	test_expect_success "--test-bitmap as git, new commits have none ($name, $algo)" '
		dir=$name-$algo &&
		{
			echo main main~1 main~2 reuse old-base side new-tag fresh-blob &&
			git -C $dir rev-list --all | awk "NR % 23 == 5"
		} >commits &&
		test_bitmap_like_git $dir commits 2 6
	'
done

# Commits after the bitmap whose trees change in every way: the walk
# compares each commit's tree with its first parent's and skips what is
# the same, so a dir that becomes a file and a file or a subtree that
# comes back must still be told apart. The commits left out are in the
# bitmap (a have outside it makes both tools walk without one).
test_expect_success "setup: commits after the bitmap that change trees in every way ($algo)" '
	rm -rf churn-$algo &&
	cp -R midx-$algo churn-$algo &&
	cp midx-$algo.in-bitmap churn-$algo.in-bitmap &&
	(
		cd churn-$algo &&
		git checkout -q main &&
		git tag churn-base &&
		mkdir -p cz/e &&
		echo 1 >cz/e/f &&
		echo 2 >cz/g &&
		git add cz &&
		git commit -qm "a new dir" &&
		echo 3 >cz/e/f &&
		git commit -qam "a deep change" &&
		git rm -rq cz/e &&
		git commit -qm "a subdir gone" &&
		echo 1 >cz/e &&
		git add cz/e &&
		git commit -qm "the dir a file, with a blob of before" &&
		git rm -q cz/e &&
		mkdir cz/e &&
		echo 3 >cz/e/f &&
		git add cz &&
		git commit -qm "the file a dir again, the subtree of before" &&
		git checkout -q -b churn-side HEAD~3 &&
		echo s >churn-s &&
		git add churn-s &&
		git commit -qm "a side" &&
		git checkout -q main &&
		git merge -q --no-edit churn-side &&
		ln -s cz/g churn-link &&
		git add churn-link &&
		git commit -qm "a symlink" &&
		git update-index --add --cacheinfo 160000,$(git rev-parse HEAD~2),churn-sub &&
		git commit -qm "a gitlink" &&
		git rm -q --cached churn-sub &&
		echo 2 >cz/e/f &&
		git commit -qam "the gitlink gone, a blob of before" &&
		git commit -q --allow-empty -m "an empty one" &&
		git read-tree HEAD~5 &&
		git commit -qm "the tree of five before, again" &&
		git checkout -q -f
	)
'

while read -r args
do
	test_expect_success "rev-list --use-bitmap-index $args (churn, $algo)" '
		compare_after churn-$algo $args
	'
done <<-\EOF
--objects main ^churn-base
--objects main ^churn-base~1
--objects main~1 ^churn-base~3
--objects main~4 churn-side ^churn-base
--objects churn-side ^churn-base
--objects --branches ^churn-base
--count --objects main ^churn-base~2
EOF

test_expect_success "a MIDX without a bitmap: the pack's bitmap answers ($algo)" '
	midx_copy pack-$algo midx-plain-$algo &&
	git -C midx-plain-$algo multi-pack-index write &&
	test_path_is_file $(midx_pack_dir midx-plain-$algo)/multi-pack-index &&
	compare_bitmap midx-plain-$algo --objects --all &&
	! grep " " actual &&
	compare_bitmap midx-plain-$algo --objects main~30..main &&
	echo main side >commits &&
	test_bitmap_like_git midx-plain-$algo commits 2 0
'

test_expect_success "a MIDX bitmap is preferred to a pack's bitmap ($algo)" '
	midx_copy pack-incr-$algo both-$algo &&
	git -C both-$algo multi-pack-index write --bitmap &&
	ls $(midx_pack_dir both-$algo)/*.bitmap >bitmaps &&
	test_line_count = 2 bitmaps &&
	compare_bitmap both-$algo --objects --all &&
	compare_bitmap both-$algo --count --objects main~30..main &&
	compare_bitmap both-$algo --objects new-tag --not v1 &&
	echo main main~2 side >commits &&
	test_bitmap_like_git both-$algo commits 3 0
'

done

test_done
