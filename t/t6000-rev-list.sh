#!/bin/sh

test_description='rev-list lists what git rev-list lists, in the same order

Commits in git'"'"'s date order (with merges, branches, annotated tags,
and tags of trees and blobs), ranges and --not, --objects with paths,
--count, --quiet, --no-object-names, simple --filter specs, --max-age
(also where a commit is older than its parent), for SHA-1
and SHA-256; and a missing blob stops the listing as it stops git.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

make_history () {
	git init -q -b main --object-format=$1 $2 &&
	(
		cd $2 &&
		mkdir -p dir/sub &&
		for i in 1 2 3 4 5 6
		do
			echo "line $i" >>file &&
			echo "sub $i" >dir/sub/f$i &&
			git add . &&
			test_tick &&
			git commit -q -m "main $i" || return 1
		done &&
		git checkout -q -b side HEAD~3 &&
		for i in 1 2 3
		do
			echo "side $i" >side.txt &&
			git add side.txt &&
			test_tick &&
			git commit -q -m "side $i" || return 1
		done &&
		git checkout -q main &&
		test_tick &&
		git merge -q --no-edit side &&
		git tag -a -m "v1" v1 HEAD~2 &&
		git tag -a -m "tree" tree-tag HEAD^{tree} &&
		git tag -a -m "blob" blob-tag HEAD:file &&
		git tag light main~4 &&
		git tag -a -m "tag of tag" tagtag v1 &&
		git repack -q -d
	)
}

compare () {
	git rev-list "$@" >expect &&
	gitpack rev-list "$@" >actual &&
	test_cmp expect actual
}

for algo in $test_hash_algos
do
	test_expect_success "setup ($algo)" '
		make_history $algo h-$algo
	'

	for args in "main" "--all" "--branches" "--tags" "main~2..main" "side --not main~4" \
		"--objects main" "--objects --all" "--objects --tags" "--objects v1" \
		"--objects main~3..main" "--objects main --not side" "--objects main^{tree}" \
		"--objects main:dir" "--objects main:file" "--count --objects --all" \
		"--count main" "--all --not --tags" "--objects --all --not v1" \
		"--objects --no-object-names --all" "--objects --no-object-names --object-names main" \
		"--quiet --objects --all" "--objects --filter=blob:none --all" \
		"--objects --filter=tree:1 --filter=object:type=tree --all" \
		"--objects --filter=blob:none --no-filter main" \
		"--objects --filter=object:type=blob --filter-provided-objects main:file main^{tree}"
	do
		test_expect_success "rev-list $args ($algo)" '
			(cd h-$algo && compare $args)
		'
	done

	test_expect_success "rev-list through a multi-pack-index ($algo)" '
		(
			cd h-$algo &&
			echo more >more && git add more && test_tick && git commit -q -m more &&
			git repack -q &&
			gitpack multi-pack-index write &&
			compare --objects --all &&
			compare --count --objects main~2..main
		)
	'

	test_expect_success "rev-list --max-age, alone and with --not ($algo)" '
		(
			cd h-$algo &&
			t=$(git log -1 --format=%ct main~2) &&
			compare --max-age=$t main &&
			compare --max-age=$t --all &&
			compare --max-age=$t main --not side~2 &&
			compare --max-age=$((t + 1)) --all --not v1 &&
			compare --max-age=0 main
		)
	'

	test_expect_success "rev-list --max-age stops at a commit older than its parent, as git does ($algo)" '
		rm -rf skew-$algo &&
		git init -q -b main --object-format=$algo skew-$algo &&
		(
			cd skew-$algo &&
			for when in 1000001000 1000001100 1000000500 1000001200 1000001300
			do
				GIT_COMMITTER_DATE="$when +0000" git commit -q --allow-empty -m "at $when" || return 1
			done &&
			git branch old main~3 &&
			compare --max-age=1000000900 main &&
			compare --max-age=1000000900 main --not old~1 &&
			compare --max-age=1000001050 main ^old
		)
	'

	test_expect_success "a missing blob stops the listing, as in git ($algo)" '
		rm -rf miss-$algo &&
		git init -q -b main --object-format=$algo miss-$algo &&
		(
			cd miss-$algo &&
			echo a >a && echo b >b && git add a b && test_tick && git commit -q -m one &&
			blob=$(git rev-parse HEAD:b) &&
			rm -f .git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-) &&
			test_must_fail gitpack rev-list --objects main >out 2>err &&
			grep "missing blob object .$blob" err
		)
	'

	test_expect_success GITPACK_IS_GITPACK "bad revisions are refused ($algo)" '
		(
			cd h-$algo &&
			test_must_fail gitpack rev-list nonesuch 2>err &&
			grep nonesuch err &&
			test_must_fail gitpack rev-list main...side 2>err &&
			grep "not supported" err
		)
	'
done

test_done
