#!/bin/sh

test_description='pack-objects --stdin-packs[=follow]

A history A..E (one file per commit, each commit'\''s tree holding the
files of all before it) packed one range per pack with stock git, E
loose. gitpack pack-objects --stdin-packs, given packs to include and
^packs to exclude, writes exactly the objects stock git writes (the
sets compared through show-index), with --unpacked the loose ones too,
with --keep-pack, --honor-pack-keep, --local and --incremental leaving
out what git leaves out, and from an alternate'\''s packs; the packs pass
git verify-pack. A pack named twice counts once; one both included and
excluded gives an empty pack. Errors as git'\''s: a pack it does not have
(with many missing, the one git 2.55 names), "!pack" without follow,
--filter, --revs, an included promisor pack with
--exclude-promisor-objects, a bad mode. Follow mode (compared with git
2.55, GIT_NEW): objects of unlisted packs that the included ones reach;
with --unpacked what loose commits reach; !-packs walked through but
^-packs a boundary; promisor packs passed by; missing blobs, trees and
commits stepped over. Name hashes come from a walk: the packs of a
history whose ranges were packed without deltas roll up into one no
bigger than git'\''s (deltas found between files of the same name), and
so does repack --geometric. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# objs IDX...: the sorted names of the objects of the packs of IDX...
objs () {
	for gp_objs_idx_
	do
		git show-index --object-format=$algo <"$gp_objs_idx_" || return 1
	done | cut -d" " -f2 | sort
}

# idx REPO NAME: the .idx of REPO's pack NAME (a hash, as pack-objects prints it).
idx () {
	echo "$1/.git/objects/pack/pack-$2.idx"
}

# both REPO STDIN OPTS...: write a pack of STDIN with stock git (git OPTS,
# to REPO/out-git-*) and with gitpack (REPO/out-gp-*), check the latter with
# git verify-pack, and compare the objects they hold.
both () {
	gp_both_repo_=$1
	gp_both_in_=$2
	shift 2
	rm -f "$gp_both_repo_"/out-* &&
	git -C "$gp_both_repo_" pack-objects "$@" out-git <"$gp_both_in_" >/dev/null &&
	gitpack -C "$gp_both_repo_" pack-objects "$@" out-gp <"$gp_both_in_" >/dev/null &&
	git -C "$gp_both_repo_" verify-pack "$PWD/$gp_both_repo_"/out-gp-*.idx &&
	objs "$gp_both_repo_"/out-git-*.idx >expect &&
	objs "$gp_both_repo_"/out-gp-*.idx >actual &&
	test_cmp expect actual
}

# both_new REPO STDIN OPTS...: the same with git 2.55 (GIT_NEW).
both_new () {
	gp_both_repo_=$1
	gp_both_in_=$2
	shift 2
	rm -f "$gp_both_repo_"/out-* &&
	git_new -C "$gp_both_repo_" pack-objects "$@" out-git <"$gp_both_in_" >/dev/null &&
	gitpack -C "$gp_both_repo_" pack-objects "$@" out-gp <"$gp_both_in_" >/dev/null &&
	git -C "$gp_both_repo_" verify-pack "$PWD/$gp_both_repo_"/out-gp-*.idx &&
	objs "$gp_both_repo_"/out-git-*.idx >expect &&
	objs "$gp_both_repo_"/out-gp-*.idx >actual &&
	test_cmp expect actual
}

# fails_as_git REPO STDIN OPTS...: gitpack fails with stock git 2.55's message.
fails_as_git () {
	gp_fa_repo_=$1
	gp_fa_in_=$2
	shift 2
	test_must_fail gitpack -C "$gp_fa_repo_" pack-objects "$@" <"$gp_fa_in_" >/dev/null 2>actual &&
	test_expect_code 128 git_new -C "$gp_fa_repo_" pack-objects "$@" <"$gp_fa_in_" \
		>/dev/null 2>expect &&
	test_cmp expect actual
}

# gen_file K V: version V of file K, 120 lines, unrelated to other files.
gen_file () {
	awk -v k=$1 -v v=$2 'BEGIN {
		for (i = 1; i <= 120; i++) {
			x = (i * 7919 + k * 104729) % 100003
			if (i % 23 == v % 23)
				x += v
			printf "%d %d %d\n", x, (x * 31337) % 99991, (x * 7 + k) % 77777
		}
	}'
}

for algo in $test_hash_algos
do
	r=repo-$algo

	test_expect_success "setup: A..E, a pack per range, E loose ($algo)" '
		git init -q --object-format=$algo $r &&
		git -C $r config maintenance.auto false &&
		for c in A B C D
		do
			test_commit -C $r $c || return 1
		done &&
		echo A | git -C $r pack-objects -q --revs .git/objects/pack/pack >$r/A &&
		echo A..B | git -C $r pack-objects -q --revs .git/objects/pack/pack >$r/B &&
		echo B..C | git -C $r pack-objects -q --revs .git/objects/pack/pack >$r/C &&
		echo C..D | git -C $r pack-objects -q --revs .git/objects/pack/pack >$r/D &&
		git -C $r prune-packed &&
		test_commit -C $r E &&
		for p in A B C D
		do
			echo "pack-$(cat $r/$p).pack" >$r/in-$p &&
			echo "^pack-$(cat $r/$p).pack" >$r/ex-$p &&
			echo "!pack-$(cat $r/$p).pack" >$r/open-$p || return 1
		done
	'

	test_expect_success "included and excluded packs as git ($algo)" '
		cat $r/in-A $r/ex-B $r/in-C >in &&
		both $r in --stdin-packs &&
		objs $(idx $r $(cat $r/A)) $(idx $r $(cat $r/C)) >expect &&
		test_cmp expect actual
	'

	test_expect_success "--unpacked adds the loose objects git adds ($algo)" '
		cat $r/in-A $r/ex-B $r/in-C >in &&
		both $r in --stdin-packs --unpacked &&
		{
			objs $(idx $r $(cat $r/A)) $(idx $r $(cat $r/C)) &&
			git -C $r rev-list --objects --no-object-names D..E
		} | sort >expect &&
		test_cmp expect actual
	'

	test_expect_success "to stdout, the same pack ($algo)" '
		cat $r/in-A $r/in-C >in &&
		gitpack -C $r pack-objects --stdin-packs --stdout <in >out.pack &&
		rm -f out.idx &&
		git index-pack --object-format=$algo -o out.idx out.pack &&
		objs out.idx >actual &&
		objs $(idx $r $(cat $r/A)) $(idx $r $(cat $r/C)) >expect &&
		test_cmp expect actual
	'

	# (git 2.39 fails these two; later versions do as here)
	test_expect_success "a pack named twice counts once ($algo)" '
		cat $r/in-B $r/in-B $r/ex-C $r/ex-C >in &&
		gitpack -C $r pack-objects --stdin-packs --stdout <in >out.pack &&
		rm -f out.idx &&
		git index-pack --object-format=$algo -o out.idx out.pack &&
		objs out.idx >actual &&
		objs $(idx $r $(cat $r/B)) >expect &&
		test_cmp expect actual
	'

	test_expect_success "a pack included and excluded gives an empty pack ($algo)" '
		cat $r/in-B $r/ex-B >in &&
		gitpack -C $r pack-objects --stdin-packs --stdout <in >out.pack &&
		rm -f out.idx &&
		git index-pack --object-format=$algo -o out.idx out.pack &&
		objs out.idx >actual &&
		test_must_be_empty actual
	'

	test_expect_success GIT_NEW "the same as git 2.55 ($algo)" '
		cat $r/in-B $r/in-B $r/ex-C $r/ex-C >in &&
		both_new $r in --stdin-packs &&
		cat $r/in-B $r/ex-B >in &&
		both_new $r in --stdin-packs
	'

	test_expect_success "--keep-pack and --honor-pack-keep leave out kept objects ($algo)" '
		test_when_finished "rm -f $r/.git/objects/pack/pack-$(cat $r/C).keep" &&
		{
			git -C $r cat-file --batch-all-objects --batch-check="%(objectname)" |
			git -C $r pack-objects -q .git/objects/pack/pack >$r/ALL
		} &&
		test_when_finished "rm -f $r/.git/objects/pack/pack-$(cat $r/ALL).*" &&
		echo "pack-$(cat $r/ALL).pack" >in &&
		both $r in --stdin-packs --keep-pack=pack-$(cat $r/B).pack &&
		git -C $r show-index --object-format=$algo <$(idx $r $(cat $r/B)) | cut -d" " -f2 >kept &&
		! grep -f kept actual &&
		objs $(idx $r $(cat $r/ALL)) | grep -v -f kept >expect &&
		test_cmp expect actual &&
		touch $r/.git/objects/pack/pack-$(cat $r/C).keep &&
		both $r in --stdin-packs --honor-pack-keep &&
		objs $(idx $r $(cat $r/C)) >kept &&
		! grep -f kept actual
	'

	test_expect_success "--incremental leaves out everything packed ($algo)" '
		cat $r/in-A $r/in-C >in &&
		both $r in --stdin-packs --incremental &&
		test_must_be_empty actual
	'

	test_expect_success "packs of an alternate, --local leaves them out ($algo)" '
		test_when_finished "rm -rf member-$algo" &&
		git clone -q --shared $r member-$algo &&
		test_commit -C member-$algo F &&
		git -C member-$algo repack -q -d -l &&
		ls member-$algo/.git/objects/pack/*.pack >local &&
		test_line_count = 1 local &&
		{ cat $r/in-B && basename $(cat local); } >in &&
		both member-$algo in --stdin-packs &&
		objs $(idx $r $(cat $r/B)) member-$algo/.git/objects/pack/*.idx | sort >expect &&
		test_cmp expect actual &&
		both member-$algo in --stdin-packs --local &&
		objs member-$algo/.git/objects/pack/*.idx >expect &&
		test_cmp expect actual
	'

	test_expect_success GITPACK_IS_GITPACK "a missing pack is named as git names it ($algo)" '
		{ cat $r/in-A && echo pack-nothere.pack; } >in &&
		test_must_fail gitpack -C $r pack-objects --stdin-packs --stdout <in >/dev/null 2>actual &&
		test_must_fail git -C $r pack-objects --stdin-packs --stdout <in >/dev/null 2>expect &&
		test_cmp expect actual &&
		echo "fatal: could not find pack '"'"'pack-nothere.pack'"'"'" >expect &&
		test_cmp expect actual &&
		{ cat $r/in-A && echo "^pack-gone.pack"; } >in &&
		test_must_fail gitpack -C $r pack-objects --stdin-packs --stdout <in >/dev/null 2>actual &&
		grep "could not find pack .pack-gone.pack." actual
	'

	test_expect_success GIT_NEW "of many missing packs, the one git 2.55 names ($algo)" '
		for i in $(test_seq 1 70)
		do
			echo "pack-missing-$i.pack" || return 1
		done >in &&
		cat $r/in-A >>in &&
		fails_as_git $r in --stdin-packs --stdout &&
		for i in $(test_seq 1 9)
		do
			echo "^pack-x$i.pack" || return 1
		done >in &&
		fails_as_git $r in --stdin-packs --stdout
	'

	test_expect_success GIT_NEW "incompatible options fail as in git ($algo)" '
		: >empty &&
		fails_as_git $r empty --stdin-packs --stdout --filter=blob:none &&
		fails_as_git $r empty --stdin-packs --revs --stdout &&
		fails_as_git $r empty --stdin-packs --all --stdout &&
		fails_as_git $r empty --stdin-packs --stdout --keep-unreachable &&
		fails_as_git $r empty --stdin-packs=frob --stdout &&
		fails_as_git $r empty --stdin-packs --cruft --stdout &&
		fails_as_git $r empty --stdin-packs=follow --cruft --revs --stdout
	'

	test_expect_success GIT_NEW "!pack without follow is a name ($algo)" '
		cat $r/open-A $r/in-B >in &&
		fails_as_git $r in --stdin-packs --stdout &&
		grep "could not find pack .!pack-" actual
	'

	test_expect_success GIT_NEW "follow: what included packs reach in unlisted ones ($algo)" '
		cat $r/in-B $r/ex-C $r/in-D >in &&
		both_new $r in --stdin-packs &&
		objs $(idx $r $(cat $r/B)) $(idx $r $(cat $r/D)) >expect &&
		test_cmp expect actual &&
		both_new $r in --stdin-packs=follow &&
		objs $(idx $r $(cat $r/A)) $(idx $r $(cat $r/B)) $(idx $r $(cat $r/D)) >expect &&
		test_cmp expect actual
	'

	test_expect_success GIT_NEW "follow with --unpacked: what loose commits reach ($algo)" '
		cat $r/ex-B $r/ex-C $r/ex-D >in &&
		both_new $r in --stdin-packs=follow --unpacked &&
		{
			objs $(idx $r $(cat $r/A)) &&
			git -C $r rev-list --objects --no-object-names D..E
		} | sort >expect &&
		test_cmp expect actual
	'

	test_expect_success GIT_NEW "follow: !packs walked through, ^packs a boundary ($algo)" '
		o=open-$algo &&
		test_when_finished "rm -rf $o" &&
		git init -q --object-format=$algo $o &&
		git -C $o config maintenance.auto false &&
		test_commit -C $o A &&
		test_commit -C $o B &&
		git -C $o checkout -q -b other &&
		test_commit -C $o C &&
		git -C $o checkout -q - &&
		test_commit -C $o D &&
		echo A | git -C $o pack-objects -q --revs .git/objects/pack/pack >/dev/null &&
		B=$(echo A..B | git -C $o pack-objects -q --revs .git/objects/pack/pack) &&
		echo B..C | git -C $o pack-objects -q --revs .git/objects/pack/pack >/dev/null &&
		D=$(echo B..D | git -C $o pack-objects -q --revs .git/objects/pack/pack) &&
		C_ONLY=$(git -C $o rev-parse other | git -C $o pack-objects -q .git/objects/pack/pack) &&
		git -C $o prune-packed &&
		printf "pack-%s.pack\n!pack-%s.pack\n^pack-%s.pack\n" $D $C_ONLY $B >in &&
		both_new $o in --stdin-packs=follow &&
		{
			objs $(idx $o $D) &&
			git -C $o rev-parse A:A.t "C^{tree}" C:C.t
		} | sort >expect &&
		test_cmp expect actual &&
		printf "pack-%s.pack\n^pack-%s.pack\n" $D $B >in &&
		both_new $o in --stdin-packs=follow
	'

	test_expect_success GIT_NEW "follow: missing blobs, trees, commits stepped over ($algo)" '
		m=missing-$algo &&
		test_when_finished "rm -rf $m" &&
		git init -q --object-format=$algo $m &&
		test_commit -C $m A &&
		test_commit -C $m B &&
		test_commit -C $m C &&
		echo A | git -C $m pack-objects -q --revs .git/objects/pack/pack >/dev/null &&
		git -C $m rev-parse HEAD HEAD^{tree} HEAD:B.t |
		git -C $m pack-objects -q .git/objects/pack/pack >/dev/null &&
		P=$(git -C $m rev-parse HEAD^ HEAD:A.t | git -C $m pack-objects -q .git/objects/pack/pack) &&
		rm -rf $m/.git/objects/??/ &&
		(cd $m/.git/objects/pack && ls pack-*.pack) >in &&
		both_new $m in --stdin-packs=follow &&
		both_new $m in --stdin-packs &&
		rm $m/.git/objects/pack/pack-$P.* &&
		(cd $m/.git/objects/pack && ls pack-*.pack) >in &&
		both_new $m in --stdin-packs=follow &&
		both_new $m in --stdin-packs
	'

	test_expect_success "promisor packs ($algo)" '
		p=promisor-$algo &&
		test_when_finished "rm -rf $p" &&
		git init -q --object-format=$algo $p &&
		git -C $p config maintenance.auto false &&
		git -C $p remote add promisor garbage &&
		git -C $p config remote.promisor.promisor true &&
		for c in A B C D
		do
			test_commit -C $p $c file $c || return 1
		done &&
		echo A | git -C $p pack-objects -q --revs .git/objects/pack/pack >/dev/null &&
		echo A..B | git -C $p pack-objects -q --revs --filter=blob:none --stdout >b.pack &&
		B=$(git -C $p index-pack --stdin <b.pack | cut -f2) &&
		C=$(echo B..C | git -C $p pack-objects -q --revs .git/objects/pack/pack) &&
		D=$(echo C..D | git -C $p pack-objects -q --revs .git/objects/pack/pack) &&
		touch $p/.git/objects/pack/pack-$B.promisor &&
		echo pack-$B.pack >in &&
		test_must_fail gitpack -C $p pack-objects --stdin-packs --exclude-promisor-objects \
			--stdout <in >/dev/null 2>err &&
		grep "fatal: packfile .*/pack-$B.pack is a promisor but --exclude-promisor-objects was given" err &&
		echo pack-$D.pack >in &&
		gitpack -C $p pack-objects --stdin-packs=follow --exclude-promisor-objects out <in >name &&
		objs $p/out-$(cat name).idx >actual &&
		objs $(idx $p $C) $(idx $p $D) >expect &&
		test_cmp expect actual
	'

	# Twenty files of one size with unrelated content, ten versions
	# each, a pack per commit without deltas: grouped by size alone,
	# a window sees mostly strangers; grouped by path, each version
	# finds the one before (without names the pack is 1.6 times git'\''s).
	test_expect_success "name hashes from the walk: deltas as good as git's ($algo)" '
		h=hash-$algo &&
		git init -q --object-format=$algo $h &&
		git -C $h config maintenance.auto false &&
		for v in $(test_seq 0 9)
		do
			k=0 &&
			for d in a b c d
			do
				mkdir -p $h/$d &&
				for f in 1 2 3 4 5
				do
					k=$((k + 1)) &&
					gen_file $k $v >$h/$d/f$f || return 1
				done || return 1
			done &&
			git -C $h add . &&
			git -C $h commit -q -m $v &&
			if test $v = 0
			then
				git -C $h rev-list --objects HEAD
			else
				git -C $h rev-list --objects HEAD^..HEAD
			fi | git -C $h pack-objects -q --window=0 .git/objects/pack/pack || return 1
		done &&
		git -C $h prune-packed &&
		(cd $h/.git/objects/pack && ls pack-*.pack) >in &&
		both $h in --stdin-packs --threads=1 &&
		git_size=$(wc -c <$(ls $h/out-git-*.pack)) &&
		gp_size=$(wc -c <$(ls $h/out-gp-*.pack)) &&
		echo "git $git_size gitpack $gp_size" &&
		test $((gp_size * 10)) -le $((git_size * 11))
	'

	test_expect_success "repack --geometric rolls up with names too ($algo)" '
		h=hash-$algo &&
		rm -f $h/out-* &&
		git -C $h config pack.threads 1 &&
		cp -R $h geo-git-$algo &&
		cp -R $h geo-gp-$algo &&
		git -C geo-git-$algo repack -q --geometric=2 -d &&
		gitpack -C geo-gp-$algo repack -q --geometric=2 -d &&
		ls geo-gp-$algo/.git/objects/pack/*.pack >packs &&
		test_line_count = 1 packs &&
		git -C geo-gp-$algo fsck --no-progress &&
		objs geo-git-$algo/.git/objects/pack/*.idx >expect &&
		objs geo-gp-$algo/.git/objects/pack/*.idx >actual &&
		test_cmp expect actual &&
		git_size=$(wc -c <$(ls geo-git-$algo/.git/objects/pack/*.pack)) &&
		gp_size=$(wc -c <$(ls geo-gp-$algo/.git/objects/pack/*.pack)) &&
		echo "git $git_size gitpack $gp_size" &&
		test $((gp_size * 10)) -le $((git_size * 11))
	'
done

test_done
