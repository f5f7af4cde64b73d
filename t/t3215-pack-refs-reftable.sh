#!/bin/sh

test_description='pack-refs of reftable repositories, against Git 2.55

A stack of many tables (auto-compaction off) written by the git of
GP_TEST_GIT_NEW: thousands of refs (ref index, obj section, log index),
annotated tags (peeled values), symbolic refs, deletions of refs and of
reflog entries, and a linked worktree with its own stack. gitpack
pack-refs compacts a copy and git pack-refs another: the one table
left must hold the same bytes (gitpack lays blocks out as git does), with
the default write options and with reftable.blockSize,
reftable.restartInterval and reftable.indexObjects set; git then reads
the same refs and reflogs and fsck is clean. --auto merges what git
merges. A held lock, a corrupt table and bad options fail as git does
(the corruption named by file and offset), leaving the stack as it
was; stale tables go, other files stay; core.sharedRepository sets the
new files'"'"' modes; in a worktree its own stack is compacted. SHA-1
and SHA-256.

Without a git that writes reftable every test is skipped.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

if test_have_prereq GIT_NEW &&
   git_new init -q --ref-format=reftable reftable-probe >/dev/null 2>&1
then
	test_set_prereq REFTABLE
else
	echo "# no git writing reftable: set GP_TEST_GIT_NEW to git 2.45 or later"
fi
rm -rf reftable-probe

GIT_TEST_REFTABLE_AUTOCOMPACTION=false
export GIT_TEST_REFTABLE_AUTOCOMPACTION

# make_repo ALGO DIR: the stack of the description.
make_repo () {
	git_new init -q --ref-format=reftable --object-format=$1 -b main $2 &&
	(
		cd $2 &&
		git_new config gc.auto 0 &&
		for i in 1 2 3 4
		do
			test_tick &&
			git_new commit -q --allow-empty -m "commit $i" || return 1
		done &&
		for i in $(test_seq 1 800)
		do
			echo "create refs/heads/feature/b$i HEAD~$((i % 3))" || return 1
		done | git_new update-ref --stdin &&
		test_tick &&
		git_new tag -a -m annotated v1.0 HEAD~2 &&
		git_new tag -a -m "tag of a tag" v1.0-outer v1.0 &&
		git_new symbolic-ref refs/remotes/origin/HEAD refs/heads/main &&
		git_new update-ref -d refs/heads/feature/b17 &&
		git_new branch doomed HEAD~1 &&
		git_new update-ref -d refs/heads/doomed &&
		git_new update-ref -m "moved once" refs/heads/moved HEAD~2 &&
		git_new update-ref -m "moved twice" refs/heads/moved HEAD~1 &&
		git_new reflog delete refs/heads/moved@{1} &&
		git_new worktree add -q ../$2-wt HEAD~1 &&
		git_new -C ../$2-wt update-ref refs/bisect/wt-only HEAD &&
		git_new -C ../$2-wt update-ref refs/bisect/wt-two HEAD~1
	)
}

# the_table DIR: the one table of DIR's stack (DIR/.git/reftable)
the_table () {
	test_line_count = 1 "$1/tables.list" &&
	echo "$1/$(cat "$1/tables.list")"
}

# same_view A B: git reads the same refs and reflogs in both repositories.
same_view () {
	git_new -C "$1" for-each-ref --format="%(objectname) %(refname) %(symref)" >expect &&
	git_new -C "$2" for-each-ref --format="%(objectname) %(refname) %(symref)" >actual &&
	test_cmp expect actual &&
	git_new -C "$1" reflog show --all --format="%H %gd %gs" >expect &&
	git_new -C "$2" reflog show --all --format="%H %gd %gs" >actual &&
	test_cmp expect actual
}

for algo in $test_hash_algos
do
	test_expect_success REFTABLE "setup: a stack of tables ($algo)" '
		make_repo $algo r-$algo &&
		test $(wc -l <r-$algo/.git/reftable/tables.list) -gt 10
	'

	test_expect_success REFTABLE "pack-refs: the bytes git writes ($algo)" '
		rm -rf g p p-wt g-wt &&
		cp -R r-$algo g && cp -R r-$algo p &&
		git_new -C g pack-refs &&
		gitpack -C p pack-refs &&
		test_cmp_bin $(the_table g/.git/reftable) $(the_table p/.git/reftable) &&
		ls p/.git/reftable >files &&
		test_line_count = 2 files &&
		same_view r-$algo p &&
		git_new -C p fsck --no-progress
	'

	test_expect_success REFTABLE "pack-refs: write options as git ($algo)" '
		for opts in "-c reftable.blockSize=256 -c reftable.restartInterval=3" \
			    "-c reftable.blockSize=300 -c reftable.indexObjects=false" \
			    "-c reftable.blockSize=0" "-c reftable.restartInterval=1"
		do
			rm -rf g p &&
			cp -R r-$algo g && cp -R r-$algo p &&
			git_new -C g $opts pack-refs &&
			gitpack -C p $opts pack-refs &&
			test_cmp_bin $(the_table g/.git/reftable) $(the_table p/.git/reftable) &&
			same_view r-$algo p || return 1
		done
	'

	test_expect_success REFTABLE "pack-refs --auto: merges what git merges ($algo)" '
		rm -rf g p &&
		cp -R r-$algo base &&
		git_new -C base pack-refs &&
		for i in 1 2 3 4 5 6
		do
			git_new -C base update-ref refs/heads/auto-$i HEAD~$((i % 3)) || return 1
		done &&
		git_new -C base update-ref -d refs/heads/feature/b1 &&
		cp -R base g && cp -R base p && rm -rf base &&
		git_new -C g pack-refs --auto &&
		gitpack -C p pack-refs --auto &&
		test $(wc -l <p/.git/reftable/tables.list) -lt 8 &&
		test $(wc -l <p/.git/reftable/tables.list) -gt 1 &&
		while read ga && read pa <&3
		do
			test_cmp_bin g/.git/reftable/$ga p/.git/reftable/$pa || return 1
		done <g/.git/reftable/tables.list 3<p/.git/reftable/tables.list &&
		test_line_count = $(wc -l <g/.git/reftable/tables.list) p/.git/reftable/tables.list &&
		same_view g p
	'

	test_expect_success REFTABLE "pack-refs in a worktree: its own stack ($algo)" '
		rm -rf g p g-wt p-wt &&
		cp -R r-$algo p && cp -R r-$algo-wt p-wt &&
		git_new -C p worktree repair ../p-wt &&
		main_before=$(cat p/.git/reftable/tables.list) &&
		gitpack -C p-wt pack-refs &&
		test "$main_before" = "$(cat p/.git/reftable/tables.list)" &&
		test_line_count = 1 p/.git/worktrees/r-$algo-wt/reftable/tables.list &&
		git_new -C p-wt for-each-ref refs/bisect >actual &&
		test_line_count = 2 actual &&
		git_new -C p-wt rev-parse HEAD >/dev/null
	'
done

test_expect_success REFTABLE 'a held tables.list.lock: git'"'"'s error, nothing changed' '
	cp -R r-sha1 lk &&
	cp lk/.git/reftable/tables.list list.before &&
	touch lk/.git/reftable/tables.list.lock &&
	echo "error: unable to compact stack: data is locked" >expect &&
	test_must_fail gitpack -C lk pack-refs 2>err &&
	test_cmp expect err &&
	test_cmp_bin list.before lk/.git/reftable/tables.list &&
	test_path_is_file lk/.git/reftable/tables.list.lock &&
	# reftable.lockTimeout=-1 waits for the holder to let go
	{ (sleep 1 && rm lk/.git/reftable/tables.list.lock) & } &&
	gitpack -C lk -c reftable.lockTimeout=-1 pack-refs &&
	wait &&
	test_line_count = 1 lk/.git/reftable/tables.list
'

test_expect_success REFTABLE 'a locked table: an error; --auto merges the newer ones as git' '
	rm -rf p && cp -R r-sha1 p &&
	cp p/.git/reftable/tables.list list.before &&
	locked=$(sed -n 3p p/.git/reftable/tables.list) &&
	touch p/.git/reftable/$locked.lock &&
	test_must_fail gitpack -C p pack-refs 2>err &&
	grep "unable to compact stack: data is locked" err &&
	test_cmp_bin list.before p/.git/reftable/tables.list &&
	test_path_is_missing p/.git/reftable/tables.list.lock &&
	ls p/.git/reftable/*.lock >locks &&
	test_line_count = 1 locks &&
	rm -rf g && cp -R p g &&
	git_new -C g pack-refs --auto &&
	gitpack -C p pack-refs --auto &&
	test_line_count = $(wc -l <g/.git/reftable/tables.list) p/.git/reftable/tables.list &&
	test $(wc -l <p/.git/reftable/tables.list) -lt $(wc -l <list.before) &&
	grep -x "$locked" p/.git/reftable/tables.list &&
	test_path_is_file p/.git/reftable/$locked.lock &&
	while read ga && read pa <&3
	do
		test_cmp_bin g/.git/reftable/$ga p/.git/reftable/$pa || return 1
	done <g/.git/reftable/tables.list 3<p/.git/reftable/tables.list &&
	same_view g p
'

test_expect_success REFTABLE 'a corrupt table: file and offset named, no table left behind' '
	rm -rf p && cp -R r-sha1 p &&
	first=$(head -n 1 p/.git/reftable/tables.list) &&
	# the suffix length of the first record: the key runs past the block
	corrupt_byte p/.git/reftable/$first 29 255 &&
	ls p/.git/reftable >files.before &&
	cp p/.git/reftable/tables.list list.before &&
	test_must_fail gitpack -C p pack-refs 2>err &&
	grep "unable to compact stack: .*$first: record at offset 28" err &&
	ls p/.git/reftable >files.after &&
	test_cmp files.before files.after &&
	test_cmp_bin list.before p/.git/reftable/tables.list
'

test_expect_success REFTABLE 'stale tables go, other files stay' '
	rm -rf p && cp -R r-sha1 p &&
	touch p/.git/reftable/0x000000000999-0x000000000999-deadbeef.ref &&
	touch p/.git/reftable/garbage &&
	gitpack -C p pack-refs &&
	test_path_is_missing p/.git/reftable/0x000000000999-0x000000000999-deadbeef.ref &&
	test_path_is_file p/.git/reftable/garbage &&
	rm p/.git/reftable/garbage &&
	touch p/.git/reftable/stale.ref &&
	gitpack -C p pack-refs &&
	test_path_is_missing p/.git/reftable/stale.ref
'

test_expect_success REFTABLE 'bad write options: git'"'"'s messages' '
	echo "fatal: reftable block size cannot exceed 16MB" >expect &&
	test_must_fail gitpack -C r-sha1 -c reftable.blockSize=16777216 pack-refs 2>err &&
	test_cmp expect err &&
	echo "fatal: reftable block size cannot exceed 65535" >expect &&
	test_must_fail gitpack -C r-sha1 -c reftable.restartInterval=65536 pack-refs 2>err &&
	test_cmp expect err &&
	echo "fatal: reftable geometric factor cannot exceed 255" >expect &&
	test_must_fail gitpack -C r-sha1 -c reftable.geometricFactor=256 pack-refs --auto 2>err &&
	test_cmp expect err &&
	echo "fatal: reftable lock timeout does not support negative values other than -1" >expect &&
	test_must_fail gitpack -C r-sha1 -c reftable.lockTimeout=-2 pack-refs 2>err &&
	test_cmp expect err &&
	rm -rf p && cp -R r-sha1 p &&
	echo "error: unable to compact stack: entry too large" >expect &&
	test_must_fail gitpack -C p -c reftable.blockSize=50 pack-refs 2>err &&
	test_cmp expect err &&
	ls p/.git/reftable/*.temp 2>/dev/null >temps;
	test_must_be_empty temps
'

test_expect_success REFTABLE 'core.sharedRepository: the modes git gives' '
	rm -rf s &&
	(
		umask 077 &&
		git_new init -q --ref-format=reftable --shared=group s &&
		test_tick &&
		git_new -C s commit -q --allow-empty -m one &&
		git_new -C s branch two &&
		gitpack -C s pack-refs
	) &&
	for f in s/.git/reftable/tables.list s/.git/reftable/*.ref
	do
		test "$(stat -c %a $f)" = 660 || return 1
	done
'

test_done
