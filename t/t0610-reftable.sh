#!/bin/sh

test_description='refs and reflogs of reftable repositories

Repositories that keep their refs in reftable (git init
--ref-format=reftable) are written by the git of GP_TEST_GIT_NEW (Git
2.45 or later; Debian'"'"'s 2.39 cannot), with thousands of refs (several
ref blocks, restart points, a ref index, obj and log index blocks),
symbolic refs (one dangling), annotated tags (peeled values, a tag of a
tag), deletions spread over a stack of tables (auto-compaction off, then
compacted, then on), reflogs (one holding the only link to a commit) and
a linked worktree with refs of its own. gitpack must see what git sees:
the same refs (for-each-ref, show-ref -d, symbolic-ref, rev-parse), the
same history (rev-list --all), the same names (cat-file --batch-check
with ref names and <ref>@{<n>}), and keep what git keeps (pack-objects
--all --reflog against rev-list --all --reflog; repack -a -d). Corrupt
tables are errors naming the table and the offset. SHA-1 and SHA-256.

Without such a git every test is skipped (prerequisite REFTABLE).'

GP_TEST_NO_INIT=1
. ./test-lib.sh

if test_have_prereq GIT_NEW &&
   git_new init -q --ref-format=reftable reftable-probe >/dev/null 2>&1
then
	test_set_prereq REFTABLE
else
	say_skip='no git writing reftable: set GP_TEST_GIT_NEW to git 2.45 or later'
	echo "# $say_skip"
fi
rm -rf reftable-probe

# make_repo ALGO DIR: see the description. Leaves a stack of many tables.
make_repo () {
	git_new init -q --ref-format=reftable --object-format=$1 -b main $2 &&
	(
		cd $2 &&
		# git'"'"'s own test knob: every transaction stays a table of its own
		GIT_TEST_REFTABLE_AUTOCOMPACTION=false &&
		export GIT_TEST_REFTABLE_AUTOCOMPACTION &&
		git_new config maintenance.auto false &&
		git_new config gc.auto 0 &&
		for i in 1 2 3 4 5 6
		do
			echo "line $i" >>file &&
			git_new add file &&
			test_tick &&
			git_new commit -q -m "commit $i" || return 1
		done &&
		c1=$(git_new rev-parse HEAD~1) &&
		c2=$(git_new rev-parse HEAD~2) &&
		{
			for i in $(test_seq 1 1500)
			do
				echo "create refs/heads/feature/branch-$i $c1" &&
				echo "create refs/heads/topic/t$i $c2" || return 1
			done &&
			for i in $(test_seq 1 300)
			do
				echo "create refs/tags/light-$i $c2" || return 1
			done
		} | git_new update-ref --stdin &&
		test_tick &&
		git_new tag -a -m "annotated" v1.0 HEAD~3 &&
		git_new tag -a -m "a tag of a tag" v1.0-outer v1.0 &&
		git_new tag -a -m "a tree" tree-tag "HEAD^{tree}" &&
		git_new update-ref refs/remotes/origin/main HEAD~1 &&
		git_new symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main &&
		git_new symbolic-ref refs/heads/dangling refs/heads/nowhere &&
		git_new update-ref -d refs/heads/feature/branch-17 &&
		for i in $(test_seq 100 140)
		do
			echo "delete refs/tags/light-$i" || return 1
		done | git_new update-ref --stdin &&
		git_new branch doomed HEAD~4 &&
		git_new update-ref -d refs/heads/doomed &&
		git_new update-ref refs/heads/feature/branch-900 HEAD~5 &&
		echo lost >lost &&
		git_new add lost &&
		test_tick &&
		git_new commit -q -m "only a reflog keeps this" &&
		git_new reset -q --hard HEAD~1 &&
		git_new update-ref refs/heads/moved HEAD~2 &&
		git_new update-ref refs/heads/moved HEAD~1 &&
		git_new update-ref refs/heads/moved HEAD
	)
}

# compare_refs: in the current directory, gitpack lists the refs git
# lists, with the same peeled values, HEAD and the symbolic refs.
compare_refs () {
	git_new for-each-ref --format="%(objectname) %(refname)" >expect &&
	test-tool refs for-each >out &&
	awk "/^--\$/ { exit } { print \$1, \$2 }" out >actual &&
	test_cmp expect actual &&
	# a fully peeled value for every ref that peels, as show-ref -d says
	git_new show-ref -d | sed -n "s/^\([0-9a-f]*\) \(.*\)^{}\$/\2 \1/p" >expect &&
	awk "/^--\$/ { exit } \$3 != \"?\" && \$3 != \"-\" { print \$2, \$3 }" out >actual &&
	test_cmp expect actual &&
	echo "$(git_new rev-parse HEAD) $(git_new symbolic-ref HEAD) symref" >expect &&
	test-tool refs resolve HEAD >actual &&
	test_cmp expect actual &&
	git_new symbolic-ref refs/remotes/origin/HEAD >expect &&
	test-tool refs symref refs/remotes/origin/HEAD >actual &&
	test_cmp expect actual &&
	test_must_fail test-tool refs resolve refs/heads/dangling &&
	test-tool refs symref refs/heads/dangling >actual &&
	echo refs/heads/nowhere >expect &&
	test_cmp expect actual &&
	test-tool refs for-each --broken refs/heads/dangling >actual &&
	grep "^0* refs/heads/dangling ? symref broken\$" actual
}

# compare_history: rev-list --all, names given to cat-file, and what
# pack-objects --all --reflog packs.
compare_history () {
	git_new rev-list --all >expect &&
	gitpack rev-list --all >actual &&
	test_cmp expect actual &&
	git_new rev-list --objects --all >expect &&
	gitpack rev-list --objects --all >actual &&
	test_cmp expect actual &&
	{
		git_new for-each-ref --format="%(refname)" &&
		git_new for-each-ref --format="%(refname:short)" refs/tags/v1.0 refs/heads/moved &&
		echo HEAD && echo main && echo "main@{1}" && echo "HEAD@{2}" &&
		echo "moved@{2}" && echo "@{0}" && echo origin/HEAD &&
		echo refs/heads/feature/branch-17 && echo refs/heads/doomed &&
		echo refs/tags/light-120 && echo dangling
	} >names &&
	git_new cat-file --batch-check <names >expect &&
	gitpack cat-file --batch-check <names >actual &&
	test_cmp expect actual &&
	git_new rev-list --objects --all --reflog | cut -d" " -f1 | sort >expect &&
	gitpack pack-objects --revs --all --reflog --stdout </dev/null >all.pack &&
	git_new index-pack -o all.idx all.pack >/dev/null &&
	git_new show-index <all.idx | cut -d" " -f2 | sort >actual &&
	rm -f all.pack all.idx &&
	test_cmp expect actual
}

for algo in $test_hash_algos
do
	test_expect_success REFTABLE "setup: a stack of reftables ($algo)" '
		make_repo $algo r-$algo &&
		test_line_count -gt 10 r-$algo/.git/reftable/tables.list &&
		test_path_is_missing r-$algo/.git/packed-refs &&
		test_path_is_file r-$algo/.git/refs/heads
	'

	test_expect_success REFTABLE "the tables: blocks, restarts, an index, logs ($algo)" '
		big=$(ls -S r-$algo/.git/reftable/*.ref | head -n 1) &&
		opt= &&
		if test $algo = sha256; then opt=--sha256; fi &&
		test-tool reftable table $opt $big info >info &&
		version=1 &&
		if test $algo = sha256; then version=2; fi &&
		grep "^version $version\$" info &&
		grep "^block_size [1-9]" info &&
		# more than a block of refs, and of logs: both indexed
		! grep "^ref_index 0\$" info &&
		! grep "^log_index 0\$" info &&
		test-tool reftable table $opt $big refs >refs &&
		test_line_count = 3300 refs &&
		test-tool reftable table $opt $big logs >logs &&
		test_line_count = 3000 logs &&
		test-tool reftable stack $opt r-$algo/.git/reftable refs >merged &&
		# each name, looked up (through the big table'"'"'s index), is as listed
		cut -d" " -f1 merged >names &&
		test-tool reftable read $opt r-$algo/.git/reftable $(cat names) >found &&
		test_cmp merged found &&
		grep "^refs/heads/moved [0-9]* $(git_new -C r-$algo rev-parse main)\$" merged &&
		! grep "^refs/heads/doomed " merged &&
		! grep "^refs/heads/feature/branch-17 " merged &&
		grep "^refs/tags/v1.0 [0-9]* [0-9a-f]* ^" merged &&
		test-tool reftable stack $opt r-$algo/.git/reftable logs refs/heads/moved >moved &&
		test_line_count = 3 moved &&
		git_new -C r-$algo rev-parse moved moved@{1} moved@{2} >expect &&
		cut -d" " -f4 moved >actual &&
		test_cmp expect actual
	'

	test_expect_success REFTABLE "refs as git sees them, stacked tables ($algo)" '
		(cd r-$algo && compare_refs)
	'

	test_expect_success REFTABLE "history as git sees it, stacked tables ($algo)" '
		(cd r-$algo && compare_history)
	'

	test_expect_success REFTABLE "repack -a -d keeps what git keeps ($algo)" '
		rm -rf rp-$algo &&
		cp -R r-$algo rp-$algo &&
		(
			cd rp-$algo &&
			echo staged >staged &&
			git_new add staged &&
			git_new rev-list --objects --all --reflog --indexed-objects |
				cut -d" " -f1 | sort >expect &&
			gitpack repack -a -d -q &&
			git_new count-objects -v >counts &&
			grep "^count: 0\$" counts &&
			git_new cat-file --batch-check="%(objectname)" <expect >actual &&
			test_cmp expect actual &&
			git_new rev-list --objects --all --reflog --indexed-objects >/dev/null
		)
	'

	test_expect_success REFTABLE "after compaction: git pack-refs ($algo)" '
		(
			cd r-$algo &&
			git_new pack-refs --all &&
			test_line_count = 1 .git/reftable/tables.list &&
			compare_refs &&
			compare_history
		)
	'

	test_expect_success REFTABLE "auto-compaction on: new tables over a compacted one ($algo)" '
		(
			cd r-$algo &&
			for i in 1 2 3 4 5 6 7 8
			do
				git_new update-ref refs/heads/auto-$i HEAD~$((i % 5)) &&
				git_new update-ref -d refs/heads/topic/t$i || return 1
			done &&
			git_new tag -a -m late late-tag HEAD~2 &&
			compare_refs &&
			compare_history
		)
	'

	test_expect_success REFTABLE "a linked worktree: its HEAD and refs in its own stack ($algo)" '
		(
			cd r-$algo &&
			git_new worktree add -q --detach ../wt-$algo HEAD~2 &&
			cd ../wt-$algo &&
			echo "worktree only" >wtfile &&
			git_new add wtfile &&
			test_tick &&
			git_new commit -q -m "only the worktree HEAD has this" &&
			git_new update-ref refs/bisect/bad HEAD &&
			git_new update-ref refs/worktree/mine HEAD~1 &&
			test_path_is_file ../r-$algo/.git/worktrees/wt-$algo/reftable/tables.list &&
			git_new for-each-ref --format="%(objectname) %(refname)" >expect &&
			test-tool refs for-each >out &&
			awk "/^--\$/ { exit } { print \$1, \$2 }" out >actual &&
			test_cmp expect actual &&
			grep " refs/bisect/bad\$" actual &&
			git_new rev-parse HEAD >expect &&
			test-tool refs resolve HEAD >actual &&
			echo "$(cat expect) HEAD" >expect &&
			test_cmp expect actual &&
			git_new rev-list --all >expect &&
			gitpack rev-list --all >actual &&
			test_cmp expect actual &&
			cd ../r-$algo &&
			test-tool refs for-each refs/bisect/ >actual &&
			echo -- >expect &&
			test_cmp expect actual &&
			compare_refs
		)
	'

	test_expect_success REFTABLE "the worktree HEAD and its reflog stay through repack ($algo)" '
		(
			cd r-$algo &&
			git_new rev-list --objects --all --reflog | cut -d" " -f1 | sort >expect &&
			wt_only=$(git_new -C ../wt-$algo rev-parse HEAD) &&
			grep $wt_only expect &&
			gitpack pack-objects --revs --all --reflog --stdout </dev/null >all.pack &&
			git_new index-pack -o all.idx all.pack >/dev/null &&
			git_new show-index <all.idx | cut -d" " -f2 | sort >actual &&
			rm -f all.pack all.idx &&
			test_cmp expect actual &&
			gitpack repack -a -d -q &&
			git_new cat-file -e $wt_only &&
			git_new rev-list --objects --all --reflog --indexed-objects >/dev/null
		)
	'

	test_expect_success REFTABLE "a log-only table: git reflog delete ($algo)" '
		rm -rf lo-$algo &&
		git_new init -q --ref-format=reftable --object-format=$algo -b main lo-$algo &&
		(
			cd lo-$algo &&
			GIT_TEST_REFTABLE_AUTOCOMPACTION=false &&
			export GIT_TEST_REFTABLE_AUTOCOMPACTION &&
			for i in 1 2 3 4
			do
				test_tick &&
				git_new commit -q --allow-empty -m "commit $i" || return 1
			done &&
			git_new reset -q --hard HEAD~2 &&
			git_new reflog delete HEAD@{1} &&
			opt= &&
			if test $algo = sha256; then opt=--sha256; fi &&
			test-tool reftable table $opt .git/reftable/$(tail -n 1 .git/reftable/tables.list) \
				info >info &&
			grep "^refs 0\$" info &&
			grep "^logs 1\$" info &&
			printf "%s\n" "HEAD@{0}" "HEAD@{1}" "HEAD@{2}" "HEAD@{3}" "main@{1}" "main@{4}" >names &&
			git_new cat-file --batch-check <names >expect &&
			gitpack cat-file --batch-check <names >actual &&
			test_cmp expect actual &&
			git_new rev-list --objects --all --reflog | cut -d" " -f1 | sort >expect &&
			gitpack pack-objects --revs --all --reflog --stdout </dev/null >all.pack &&
			git_new index-pack -o all.idx all.pack >/dev/null &&
			git_new show-index <all.idx | cut -d" " -f2 | sort >actual &&
			test_cmp expect actual
		)
	'
done

# corrupt_table REPO OFFSET [BYTE]: a copy of REPO whose newest table has
# the byte at OFFSET (negative: from the end) overwritten.
corrupt_table () {
	rm -rf bad &&
	cp -R "$1" bad &&
	corrupt_byte bad/.git/reftable/$(tail -n 1 bad/.git/reftable/tables.list) "$2" $3
}

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'setup: a small table to break' '
	git_new init -q --ref-format=reftable -b main small &&
	(
		cd small &&
		test_tick &&
		git_new commit -q --allow-empty -m one &&
		git_new tag -a -m tag v1 &&
		git_new pack-refs --all
	) &&
	table=$(tail -n 1 small/.git/reftable/tables.list) &&
	git_new -C small rev-list --all >expect &&
	(cd small && gitpack rev-list --all) >actual &&
	test_cmp expect actual
'

# refused_at PATTERN: gitpack rev-list --all in bad/ fails, naming the
# table, with PATTERN in its message.
refused_at () {
	(cd bad && test_must_fail gitpack rev-list --all) 2>err &&
	grep "reftable/$table: " err &&
	grep "$1" err
}

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'a corrupt footer CRC' '
	corrupt_table small -1 &&
	refused_at "footer CRC-32 mismatch at offset"
'

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'a bad signature, an unknown version' '
	corrupt_table small 0 88 &&
	refused_at "bad signature at offset 0" &&
	corrupt_table small 4 7 &&
	refused_at "unsupported reftable version 7 at offset 4"
'

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'a block_len past the ref blocks' '
	corrupt_table small 25 255 &&
	refused_at "block at offset 0: block_len .* runs past offset"
'

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'a ref record running past its block' '
	# the first record: prefix 0, then (suffix length << 3 | type)
	corrupt_table small 29 255 &&
	refused_at "record at offset 28: "
'

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'a truncated table' '
	rm -rf bad &&
	cp -R small bad &&
	truncate_file bad/.git/reftable/$table 60 &&
	refused_at "too short for a version 1 header and footer"
'

test_expect_success REFTABLE,GITPACK_IS_GITPACK 'tables.list naming a table that is not there' '
	rm -rf bad &&
	cp -R small bad &&
	echo 0x000000000009-0x000000000009-gone.ref >>bad/.git/reftable/tables.list &&
	(cd bad && test_must_fail gitpack rev-list --all) 2>err &&
	grep "tables.list names .0x000000000009-0x000000000009-gone.ref., which does not exist" err
'

test_done
