#!/bin/sh

test_description='maintenance run: the tasks of git maintenance on a server

Each task is run by gitpack on repositories stock git built, and
checked by stock git: fsck --full, multi-pack-index verify, rev-list
--test-bitmap where there is a bitmap git reads, and the same objects
before and after (reachable ones; unreachable ones as the task says).
pack-refs writes the bytes git pack-refs --all writes and removes the
same loose refs. --auto runs a task only past its threshold; the
maintenance.lock of another run makes a run do nothing; config chooses
the tasks. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# new_repo DIR: an empty bare repository with a work repository DIR.w
# that pushes into it.
new_repo () {
	rm -rf $1 $1.w &&
	git init -q --bare --object-format=$algo $1 &&
	git -C $1 config gc.auto 0 &&
	git -C $1 config maintenance.auto false &&
	git init -q -b main --object-format=$algo $1.w &&
	git -C $1.w config gc.auto 0
}

# push DIR PREFIX N: N commits pushed to DIR (loose there: few objects).
push () {
	for gp_p_i_ in $(test_seq 1 $3)
	do
		test_commit -C $1.w $2-$gp_p_i_ || return 1
	done &&
	git -C $1.w -c transfer.unpackLimit=100000 push -q ../$1 main --tags
}

# objects DIR: every object git finds, by name and type.
objects () {
	git -C $1 -c core.multiPackIndex=false cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype)" | sort
}

# reachable DIR: the objects the refs reach.
reachable () {
	git -C $1 rev-list --objects --all | cut -d" " -f1 | sort
}

# checked DIR: stock git finds no fault; MIDX and bitmaps verify.
checked () {
	git -C $1 fsck --full --no-progress 2>err &&
	! grep -v "^dangling\|^notice" err &&
	if test -f $1/objects/pack/multi-pack-index
	then
		git -C $1 multi-pack-index verify 2>err ||
		{ cat err; return 1; }
	fi &&
	gitpack -C $1 multi-pack-index verify &&
	if test_have_prereq GIT_NEW
	then
		git_new -C $1 multi-pack-index verify &&
		git_new -C $1 rev-list --objects --all | cut -d" " -f1 | sort >walk &&
		git_new -C $1 rev-list --use-bitmap-index --objects --all | cut -d" " -f1 | sort >bm &&
		test_cmp walk bm
	fi &&
	if ls $1/objects/pack/*.bitmap >/dev/null 2>&1
	then
		git -C $1 rev-list --test-bitmap main >tb 2>&1 || { cat tb; return 1; }
	fi
}

nr_packs () {
	ls $1/objects/pack/*.pack 2>/dev/null | wc -l
}

nr_loose () {
	find $1/objects/?? -type f 2>/dev/null | wc -l
}

for algo in $test_hash_algos
do

test_expect_success "pack-refs: the bytes of git pack-refs --all, the same loose refs removed ($algo)" '
	new_repo pr-$algo &&
	push pr-$algo a 3 &&
	git -C pr-$algo update-ref refs/heads/deep/er/branch main~1 &&
	git -C pr-$algo tag -a -m annotated ann main &&
	git -C pr-$algo -c advice.nestedTag=false tag -a -m nested nest ann &&
	git -C pr-$algo symbolic-ref refs/heads/sym refs/heads/main &&
	git -C pr-$algo update-ref refs/bisect/bad main &&
	git -C pr-$algo pack-refs --all &&
	# a loose ref over a packed one, and new loose refs
	git -C pr-$algo update-ref refs/heads/deep/er/branch main &&
	git -C pr-$algo update-ref refs/heads/z main~2 &&
	git -C pr-$algo tag -a -m late late main~1 &&
	rm -rf pr-git-$algo &&
	cp -R pr-$algo pr-git-$algo &&
	GIT_TRACE2_EVENT="$(pwd)/trace-pr-$algo" gitpack -C pr-$algo maintenance run --task=pack-refs &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"pack-refs\",\"--all\",\"--prune\"\]" trace-pr-$algo &&
	git -C pr-git-$algo pack-refs --all --prune &&
	test_cmp_bin pr-git-$algo/packed-refs pr-$algo/packed-refs &&
	(cd pr-git-$algo && find refs | sort) >expect &&
	(cd pr-$algo && find refs | sort) >actual &&
	test_cmp expect actual &&
	test_path_is_missing pr-$algo/packed-refs.lock &&
	git -C pr-$algo for-each-ref >actual &&
	git -C pr-git-$algo for-each-ref >expect &&
	test_cmp expect actual &&
	checked pr-$algo
'

test_expect_success "pack-refs: a held packed-refs.lock fails the task, nothing moves ($algo)" '
	git -C pr-$algo update-ref refs/heads/held main &&
	cp pr-$algo/packed-refs packed.before &&
	>pr-$algo/packed-refs.lock &&
	test_when_finished "rm -f pr-$algo/packed-refs.lock" &&
	test_must_fail gitpack -C pr-$algo -c core.packedRefsTimeout=0 \
		maintenance run --task=pack-refs --no-quiet 2>err &&
	grep "packed-refs.lock" err &&
	test_cmp_bin packed.before pr-$algo/packed-refs &&
	test_path_is_file pr-$algo/refs/heads/held &&
	test_path_is_missing pr-$algo/objects/maintenance.lock
'

test_expect_success "loose-objects: a loose- pack first, the packed loose objects go the next run ($algo)" '
	new_repo lo-$algo &&
	push lo-$algo a 4 &&
	echo unreachable | git -C lo-$algo hash-object -w --stdin &&
	objects lo-$algo >before &&
	test $(nr_loose lo-$algo) = 13 &&
	GIT_TRACE2_EVENT="$(pwd)/trace-lo-$algo" gitpack -C lo-$algo maintenance run --quiet \
		--task=loose-objects &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"prune-packed\",\"--quiet\"\]" trace-lo-$algo &&
	ls lo-$algo/objects/pack/loose-*.pack >packs &&
	test_line_count = 1 packs &&
	test $(nr_loose lo-$algo) = 13 &&
	gitpack -C lo-$algo maintenance run --task=loose-objects &&
	test $(nr_loose lo-$algo) = 0 &&
	# the emptied fan-out directories are gone too, as after git prune-packed
	ls lo-$algo/objects >dirs &&
	test_write_lines info pack >expect &&
	test_cmp expect dirs &&
	ls lo-$algo/objects/pack/*.pack >packs.after &&
	test_cmp packs packs.after &&
	objects lo-$algo >after &&
	test_cmp before after &&
	checked lo-$algo
'

test_expect_success "loose-objects: maintenance.loose-objects.batchSize packs that many a run ($algo)" '
	new_repo lb-$algo &&
	push lb-$algo a 4 &&
	objects lb-$algo >before &&
	git -C lb-$algo config maintenance.loose-objects.batchSize 5 &&
	GIT_PROGRESS_DELAY=0 gitpack -C lb-$algo maintenance run --no-quiet --task=loose-objects 2>err &&
	grep "Enumerating objects: 5, done" err &&
	gitpack -C lb-$algo maintenance run --task=loose-objects &&
	test $(nr_loose lb-$algo) = 7 &&
	gitpack -C lb-$algo maintenance run --task=loose-objects &&
	gitpack -C lb-$algo maintenance run --task=loose-objects &&
	test $(nr_loose lb-$algo) = 0 &&
	test $(nr_packs lb-$algo) = 3 &&
	# nothing left to pack: nothing said
	GIT_PROGRESS_DELAY=0 gitpack -C lb-$algo maintenance run --no-quiet --task=loose-objects 2>err &&
	test_must_be_empty err &&
	objects lb-$algo >after &&
	test_cmp before after &&
	checked lb-$algo
'

test_expect_success "geometric-repack: a git repack child, all-into-one with a cruft pack first, then geometric ($algo)" '
	new_repo geo-$algo &&
	push geo-$algo a 3 &&
	reachable geo-$algo >reach &&
	GIT_TRACE2_EVENT="$(pwd)/trace-geo-$algo" gitpack -C geo-$algo maintenance run --task=geometric-repack &&
	# the argv git maintenance gives its child, and the child runs in a process of its own
	grep "\"child_start\".*\"argv\":\[\"git\",\"repack\",\"-d\",\"-l\",\"-q\",\"--cruft\",\"--cruft-expiration=2.weeks.ago\",\"--write-midx\",\"--write-bitmap-index\"\]" trace-geo-$algo &&
	grep "\"event\":\"start\".*\"argv\":\[\"git\",\"repack\"" trace-geo-$algo &&
	test $(nr_packs geo-$algo) = 1 &&
	test $(nr_loose geo-$algo) = 0 &&
	test_path_is_file geo-$algo/objects/pack/multi-pack-index &&
	checked geo-$algo &&
	# a push: a new pack of what is loose, the MIDX over both
	push geo-$algo b 1 &&
	GIT_TRACE2_EVENT="$(pwd)/trace-geo2-$algo" gitpack -C geo-$algo maintenance run --task=geometric-repack &&
	# a bare repository wants bitmaps (repack.writeBitmaps): a new layer of a MIDX chain
	grep "\"child_start\".*\"argv\":\[\"git\",\"repack\",\"-d\",\"-l\",\"-q\",\"--geometric=2\",\"--write-midx=incremental\",\"--write-bitmap-index\"\]" trace-geo2-$algo &&
	test $(nr_packs geo-$algo) = 2 &&
	test_path_is_file geo-$algo/objects/pack/multi-pack-index.d/multi-pack-index-chain &&
	ls geo-$algo/objects/pack/multi-pack-index.d/*.bitmap &&
	test $(nr_loose geo-$algo) = 0 &&
	checked geo-$algo &&
	# without bitmaps (the default with a work tree), the child is as git gives it
	push geo-$algo b2 1 &&
	GIT_TRACE2_EVENT="$(pwd)/trace-geo3-$algo" gitpack -C geo-$algo -c repack.writeBitmaps=false \
		maintenance run --task=geometric-repack &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"repack\",\"-d\",\"-l\",\"-q\",\"--geometric=2\",\"--write-midx\"\]" trace-geo3-$algo &&
	checked geo-$algo &&
	push geo-$algo c 1 &&
	gitpack -C geo-$algo -c core.multiPackIndex=false -c maintenance.geometric-repack.splitFactor=3 \
		maintenance run --task=geometric-repack &&
	test $(nr_loose geo-$algo) = 0 &&
	checked geo-$algo &&
	reachable geo-$algo >reach.after &&
	reachable geo-$algo.w >expect &&
	test_cmp expect reach.after
'

test_expect_success "geometric-repack: a failing repack child fails the task ($algo)" '
	push geo-$algo d 1 &&
	# a setting only the child reads, and dies on
	GIT_TRACE2_EVENT="$(pwd)/trace-fail-$algo" test_must_fail gitpack -C geo-$algo \
		-c pack.depth=bogus maintenance run --task=geometric-repack 2>err &&
	grep "pack.depth" err &&
	grep "failed to run repack" err &&
	grep "\"child_exit\".*\"code\":[1-9]" trace-fail-$algo &&
	test_path_is_missing geo-$algo/objects/maintenance.lock
'

test_expect_success "geometric-repack: when every pack would roll up, all-into-one; unreachable objects go cruft ($algo)" '
	new_repo ga-$algo &&
	push ga-$algo a 1 &&
	git -C ga-$algo repack -dq &&
	push ga-$algo b 1 &&
	git -C ga-$algo repack -dq &&
	test $(nr_packs ga-$algo) = 2 &&
	echo lost | git -C ga-$algo hash-object -w --stdin >lost &&
	objects ga-$algo >before &&
	gitpack -C ga-$algo maintenance run --task=geometric-repack &&
	test $(nr_packs ga-$algo) = 2 &&
	ls ga-$algo/objects/pack/*.mtimes >cruft &&
	test_line_count = 1 cruft &&
	objects ga-$algo >after &&
	test_cmp before after &&
	checked ga-$algo
'

test_expect_success "geometric-repack: maintenance.geometric-repack.splitFactor ($algo)" '
	new_repo gs-$algo &&
	for n in 9 2 1
	do
		for i in $(test_seq $n)
		do
			echo $n-$i | git -C gs-$algo hash-object -w --stdin || return 1
		done >blobs &&
		git -C gs-$algo pack-objects -q objects/pack/pack <blobs || return 1
	done &&
	test $(nr_packs gs-$algo) = 3 &&
	test_must_fail gitpack -C gs-$algo -c maintenance.geometric-repack.splitFactor=2 \
		maintenance is-needed --auto --task=geometric-repack &&
	gitpack -C gs-$algo -c maintenance.geometric-repack.splitFactor=3 \
		maintenance is-needed --auto --task=geometric-repack &&
	gitpack -C gs-$algo -c maintenance.geometric-repack.splitFactor=3 \
		maintenance run --auto --task=geometric-repack &&
	test $(nr_packs gs-$algo) = 2 &&
	checked gs-$algo
'

test_expect_success "gc: all-into-one with a cruft pack; gc.pruneExpire=now drops what nothing reaches ($algo)" '
	new_repo gc-$algo &&
	push gc-$algo a 3 &&
	echo young | git -C gc-$algo hash-object -w --stdin >young &&
	objects gc-$algo >before &&
	gitpack -C gc-$algo maintenance run --task=gc &&
	test $(nr_loose gc-$algo) = 0 &&
	ls gc-$algo/objects/pack/*.mtimes &&
	test $(nr_packs gc-$algo) = 2 &&
	objects gc-$algo >after &&
	test_cmp before after &&
	test_path_is_missing gc-$algo/refs/tags/a-1 &&
	checked gc-$algo &&
	echo old | git -C gc-$algo hash-object -w --stdin >old &&
	gitpack -C gc-$algo -c gc.pruneExpire=now maintenance run --task=gc &&
	test $(nr_loose gc-$algo) = 0 &&
	reachable gc-$algo >expect &&
	objects gc-$algo | cut -d" " -f1 >actual &&
	test_cmp expect actual &&
	checked gc-$algo
'

test_expect_success "gc: a MIDX and its bitmap are written anew ($algo)" '
	new_repo gm-$algo &&
	push gm-$algo a 2 &&
	gitpack -C gm-$algo maintenance run --task=geometric-repack &&
	push gm-$algo b 1 &&
	gitpack -C gm-$algo maintenance run --task=geometric-repack &&
	test_path_is_file gm-$algo/objects/pack/multi-pack-index.d/multi-pack-index-chain &&
	GIT_TRACE2_EVENT="$(pwd)/trace-gm-$algo" gitpack -C gm-$algo maintenance run --task=gc &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"repack\",\"-d\",\"-l\",\"-q\",\"--cruft\",\"--cruft-expiration=2.weeks.ago\",\"--write-midx\",\"--write-bitmap-index\"\]" trace-gm-$algo &&
	test_path_is_missing gm-$algo/objects/pack/multi-pack-index.d/multi-pack-index-chain &&
	test_path_is_file gm-$algo/objects/pack/multi-pack-index &&
	ls gm-$algo/objects/pack/multi-pack-index-*.bitmap &&
	checked gm-$algo
'

test_expect_success "incremental-repack: MIDX write, expire, repack as git ($algo)" '
	new_repo ir-$algo &&
	push ir-$algo a 5 &&
	d=ir-$algo/objects/pack &&
	echo main~2 | git -C ir-$algo pack-objects -q --revs objects/pack/test-1 &&
	printf "main~1\n^main~2\n" | git -C ir-$algo pack-objects -q --revs objects/pack/test-2 &&
	printf "main\n^main~1\n" | git -C ir-$algo pack-objects -q --revs objects/pack/test-3 &&
	git -C ir-$algo tag -l | sed "s,^,delete refs/tags/," | git -C ir-$algo update-ref --stdin &&
	git -C ir-$algo prune-packed &&
	test $(nr_packs ir-$algo) = 3 &&
	rm -rf ir-git-$algo &&
	cp -R ir-$algo ir-git-$algo &&
	# The first run as git (the packs git would choose); later runs
	# may part, as the rolled-up pack has not the size of git'"'"'s.
	GIT_TRACE2_EVENT="$(pwd)/trace-ir-$algo" gitpack -C ir-$algo maintenance run --task=incremental-repack &&
	GIT_TRACE2_EVENT="$(pwd)/trace-ir-git-$algo" git -C ir-git-$algo maintenance run --task=incremental-repack &&
	# the same three children as git: write, expire, repack --batch-size
	# (of the maintenance process: a child'"'"'s own children have a sid with a "/")
	sed -n "s/.*\"event\":\"child_start\",\"sid\":\"[^\"/]*\".*\"argv\":\(.*\)}$/\1/p" trace-ir-$algo >actual &&
	sed -n "s/.*\"event\":\"child_start\",\"sid\":\"[^\"/]*\".*\"argv\":\(.*\)}$/\1/p" trace-ir-git-$algo >expect &&
	test_line_count = 3 expect &&
	test_cmp expect actual &&
	test $(nr_packs ir-$algo) = $(nr_packs ir-git-$algo) &&
	test $(nr_packs ir-$algo) = 4 &&
	checked ir-$algo &&
	gitpack -C ir-$algo maintenance run --task=incremental-repack &&
	test $(nr_packs ir-$algo) -le 3 &&
	checked ir-$algo &&
	git -C ir-$algo -c core.multiPackIndex=false rev-list --objects --all >/dev/null
'

test_expect_success "--auto: loose-objects and incremental-repack run past their thresholds only ($algo)" '
	new_repo au-$algo &&
	push au-$algo a 1 &&
	git -C au-$algo repack -adq --no-write-bitmap-index &&
	echo one | git -C au-$algo hash-object -w --stdin &&
	test_must_fail gitpack -C au-$algo -c maintenance.loose-objects.auto=2 \
		maintenance is-needed --auto --task=loose-objects &&
	gitpack -C au-$algo -c maintenance.loose-objects.auto=2 \
		maintenance run --auto --task=loose-objects &&
	test $(nr_packs au-$algo) = 1 &&
	echo two | git -C au-$algo hash-object -w --stdin &&
	gitpack -C au-$algo -c maintenance.loose-objects.auto=2 \
		maintenance is-needed --auto --task=loose-objects &&
	gitpack -C au-$algo -c maintenance.loose-objects.auto=2 \
		maintenance run --auto --task=loose-objects &&
	test $(nr_packs au-$algo) = 2 &&
	gitpack -C au-$algo -c maintenance.loose-objects.auto=0 \
		maintenance run --auto --task=loose-objects &&
	test $(nr_loose au-$algo) = 2 &&
	gitpack -C au-$algo -c maintenance.loose-objects.auto=-1 \
		maintenance run --auto --task=loose-objects &&
	test $(nr_loose au-$algo) = 0 &&
	checked au-$algo &&

	git -C au-$algo multi-pack-index write &&
	push au-$algo b 1 &&
	git -C au-$algo repack -dq &&
	test_must_fail gitpack -C au-$algo -c maintenance.incremental-repack.auto=2 \
		maintenance is-needed --auto --task=incremental-repack &&
	push au-$algo c 1 &&
	git -C au-$algo repack -dq &&
	gitpack -C au-$algo -c maintenance.incremental-repack.auto=2 \
		maintenance is-needed --auto --task=incremental-repack &&
	gitpack -C au-$algo -c maintenance.incremental-repack.auto=2 \
		maintenance run --auto --task=incremental-repack &&
	test_must_fail gitpack -C au-$algo -c maintenance.incremental-repack.auto=1 \
		maintenance is-needed --auto --task=incremental-repack &&
	checked au-$algo
'

test_expect_success "--auto: gc by gc.auto (the objects/17 estimate) and gc.autoPackLimit ($algo)" '
	new_repo ag-$algo &&
	push ag-$algo a 1 &&
	git -C ag-$algo repack -adq --no-write-bitmap-index &&
	test_must_fail gitpack -C ag-$algo -c gc.auto=1 maintenance is-needed --auto --task=gc &&
	# loose objects: N in objects/17 make an estimate of 256 * N
	mkdir -p blobs-$algo &&
	for i in $(test_seq 3000)
	do
		echo blob-$i >blobs-$algo/$i || return 1
	done &&
	ls "$(pwd)"/blobs-$algo/* | git -C ag-$algo hash-object -w --stdin-paths >/dev/null &&
	n=$(ls ag-$algo/objects/17 | wc -l) &&
	test $n -ge 2 &&
	test_must_fail gitpack -C ag-$algo -c gc.auto=$((256 * n)) \
		maintenance is-needed --auto --task=gc &&
	gitpack -C ag-$algo -c gc.auto=$((256 * n - 256)) maintenance is-needed --auto --task=gc &&
	test_must_fail gitpack -C ag-$algo -c gc.auto=0 maintenance is-needed --auto --task=gc &&
	test_must_fail gitpack -C ag-$algo -c gc.auto=6700 -c gc.autoPackLimit=1 \
		maintenance is-needed --auto --task=gc &&
	push ag-$algo b 1 &&
	git -C ag-$algo repack -dq &&
	gitpack -C ag-$algo -c gc.auto=6700 -c gc.autoPackLimit=1 \
		maintenance is-needed --auto --task=gc &&
	# as git gc --auto: the loose objects nothing reaches stay loose
	# until git prune expires them (gc.pruneExpire=now: at once)
	gitpack -C ag-$algo -c gc.auto=$((256 * n - 256)) -c gc.pruneExpire=now \
		maintenance run --auto --task=gc &&
	test $(ls ag-$algo/objects/17 2>/dev/null | wc -l) = 0 &&
	checked ag-$algo
'

test_expect_success "lock: a run while another holds objects/maintenance.lock does nothing ($algo)" '
	new_repo lk-$algo &&
	push lk-$algo a 2 &&
	>lk-$algo/objects/maintenance.lock &&
	gitpack -C lk-$algo maintenance run --task=gc --no-quiet 2>err &&
	grep "maintenance.lock.* exists, skipping maintenance" err &&
	test $(nr_packs lk-$algo) = 0 &&
	gitpack -C lk-$algo maintenance run --task=gc --auto --no-quiet 2>err &&
	test_must_be_empty err &&
	test_path_is_file lk-$algo/objects/maintenance.lock &&
	rm lk-$algo/objects/maintenance.lock &&
	gitpack -C lk-$algo maintenance run --task=gc &&
	test_path_is_missing lk-$algo/objects/maintenance.lock &&
	test $(nr_packs lk-$algo) = 1
'

done

test_expect_success 'config chooses the tasks: strategy, maintenance.<task>.enabled, --schedule' '
	algo=sha1 &&
	new_repo cf &&
	push cf a 2 &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C cf maintenance run --quiet &&
	sed -n "s/.*\"region_enter\".*\"category\":\"\(maintenance[^\"]*\)\".*\"label\":\"\([^\"]*\)\".*/\2 \1/p" \
		trace >actual &&
	cat >expect <<-\EOF &&
	pack-refs maintenance foreground
	reflog-expire maintenance foreground
	geometric-repack maintenance
	commit-graph maintenance
	worktree-prune maintenance
	rerere-gc maintenance
	EOF
	test_cmp expect actual &&
	rm trace &&
	git -C cf config maintenance.strategy gc &&
	git -C cf config maintenance.loose-objects.enabled true &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C cf maintenance run --quiet &&
	# the regions of the tasks, not those of their children
	sed -n "s/.*\"region_enter\".*\"category\":\"maintenance[^\"]*\".*\"label\":\"\([^\"]*\)\".*/\1/p" \
		trace >actual &&
	test_write_lines gc loose-objects gc >expect &&
	test_cmp expect actual &&
	rm trace &&
	git -C cf config maintenance.gc.enabled false &&
	git -C cf config maintenance.strategy incremental &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C cf maintenance run --quiet --schedule=daily &&
	# the regions of the tasks, not those of their children
	sed -n "s/.*\"region_enter\".*\"category\":\"maintenance[^\"]*\".*\"label\":\"\([^\"]*\)\".*/\1/p" \
		trace >actual &&
	test_write_lines prefetch loose-objects incremental-repack commit-graph >expect &&
	test_cmp expect actual &&
	test_must_fail gitpack -C cf -c maintenance.strategy=bogus maintenance run 2>err &&
	grep "unknown maintenance strategy: .bogus." err &&
	test_must_fail gitpack -C cf maintenance run --task=bogus 2>err &&
	grep "is not a valid task" err &&
	test_must_fail gitpack -C cf maintenance run --task=gc --task=gc 2>err &&
	grep "cannot be selected multiple times" err &&
	test_must_fail gitpack -C cf maintenance run --auto --schedule=daily 2>err &&
	grep "cannot be used together" err &&
	test_must_fail gitpack -C cf maintenance run --schedule=annually 2>err &&
	grep "unrecognized --schedule" err &&
	checked cf
'

test_expect_success 'pre-auto-gc: run once before an --auto run with work to do; a failure stops it' '
	algo=sha1 &&
	new_repo hk &&
	push hk a 2 &&
	mkdir -p hk/hooks &&
	printf "#!/bin/sh\necho hook >>hook.log\nexit \${HOOK_EXIT:-0}\n" >hk/hooks/pre-auto-gc &&
	chmod +x hk/hooks/pre-auto-gc &&
	gitpack -C hk -c maintenance.loose-objects.auto=1 -c maintenance.pack-refs.auto=0 \
		maintenance run --auto --task=loose-objects --task=pack-refs &&
	test_line_count = 1 hk/hook.log &&
	test $(nr_packs hk) = 1 &&
	# nothing needed: no hook
	gitpack -C hk -c maintenance.loose-objects.auto=100 maintenance run --auto --task=loose-objects &&
	test_line_count = 1 hk/hook.log &&
	# not without --auto
	gitpack -C hk maintenance run --task=loose-objects &&
	test_line_count = 1 hk/hook.log &&
	echo more | git -C hk hash-object -w --stdin &&
	rm -f trace-hook &&
	GIT_TRACE2_EVENT="$(pwd)/trace-hook" HOOK_EXIT=1 gitpack -C hk \
		-c maintenance.loose-objects.auto=1 maintenance run --auto --task=loose-objects &&
	test_line_count = 2 hk/hook.log &&
	grep "child_start.*pre-auto-gc" trace-hook &&
	! grep region_enter trace-hook &&
	test $(nr_loose hk) = 1
'

test_expect_success '--detach: the background part runs on in a child that holds the lock' '
	algo=sha1 &&
	new_repo dt &&
	push dt a 2 &&
	objects dt >before &&
	rm -f trace-dt &&
	GIT_TRACE2_EVENT="$(pwd)/trace-dt" \
		gitpack -C dt maintenance run --detach --task=gc --task=pack-refs &&
	# pack-refs is a foreground task: done before the parent returns
	test_path_is_missing dt/refs/tags/a-1 &&
	i=0 &&
	while test -f dt/objects/maintenance.lock && test $i -lt 100
	do
		sleep 0.1 &&
		i=$((i + 1)) || return 1
	done &&
	test_path_is_missing dt/objects/maintenance.lock &&
	# the foreground parts ran once (in the parent), gc in the child
	grep "region_enter.*\"maintenance foreground\"" trace-dt >fg &&
	test_line_count = 2 fg &&
	grep "region_enter.*\"maintenance\",\"label\":\"gc\"" trace-dt >bg &&
	test_line_count = 1 bg &&
	grep "region_enter.*\"label\":\"detach\"" trace-dt &&
	test $(nr_loose dt) = 0 &&
	test $(nr_packs dt) = 1 &&
	objects dt >after &&
	test_cmp before after &&
	checked dt
'

test_expect_success 'an empty repository: every task succeeds and writes nothing' '
	algo=sha1 &&
	new_repo empty &&
	gitpack -C empty maintenance run --task=pack-refs --task=loose-objects \
		--task=incremental-repack --task=geometric-repack --task=gc &&
	test $(nr_packs empty) = 0 &&
	test_path_is_missing empty/objects/maintenance.lock
'

test_expect_success 'commit-graph: a split chain that stock git verifies, a layer per run' '
	# the gc task ran above, and gc writes one commit-graph file, as
	# git gc does; --split leaves a graph that holds every commit alone
	rm -f cf/objects/info/commit-graph &&
	gitpack -C cf maintenance run --task=commit-graph --quiet &&
	chain=cf/objects/info/commit-graphs/commit-graph-chain &&
	test_path_is_file $chain &&
	git -C cf commit-graph verify &&
	gitpack -C cf commit-graph verify &&
	layers=$(wc -l <$chain) &&
	push cf after-graph 3 &&
	gitpack -C cf maintenance run --task=commit-graph --quiet &&
	git -C cf commit-graph verify &&
	gitpack -C cf commit-graph verify &&
	test $(wc -l <$chain) -ge $layers &&
	git -C cf rev-list --all | sort >expect &&
	git -C cf -c core.commitGraph=false rev-list --all | sort >actual &&
	test_cmp expect actual &&
	rm -rf cf/objects/info/commit-graphs &&
	gitpack -C cf -c core.commitGraph=false maintenance run --task=commit-graph --no-quiet 2>err &&
	test_must_be_empty err &&
	test_path_is_missing $chain
'


test_expect_success 'commit-graph --auto: reachable commits the graph lacks, at least maintenance.commit-graph.auto' '
	rm -rf ca && git init -q ca &&
	for i in 1 2 3 4 5; do test_commit -C ca c$i || return 1; done &&
	git -C ca commit-graph write --reachable --split &&
	test_commit -C ca c6 &&
	test_commit -C ca c7 &&
	# an unreachable commit does not count
	git -C ca commit-tree -m loose $(git -C ca rev-parse HEAD^{tree}) >/dev/null &&
	gitpack -C ca -c maintenance.commit-graph.auto=2 maintenance is-needed --auto --task=commit-graph &&
	test_must_fail gitpack -C ca -c maintenance.commit-graph.auto=3 \
		maintenance is-needed --auto --task=commit-graph &&
	test_must_fail gitpack -C ca maintenance is-needed --auto --task=commit-graph &&
	gitpack -C ca -c maintenance.commit-graph.auto=-1 maintenance is-needed --auto --task=commit-graph &&
	test_must_fail gitpack -C ca -c maintenance.commit-graph.auto=0 \
		maintenance is-needed --auto --task=commit-graph &&
	# without a graph every reachable commit counts (7)
	rm -rf ca/.git/objects/info/commit-graphs &&
	gitpack -C ca -c maintenance.commit-graph.auto=7 maintenance is-needed --auto --task=commit-graph &&
	test_must_fail gitpack -C ca -c maintenance.commit-graph.auto=8 \
		maintenance is-needed --auto --task=commit-graph &&
	if test_have_prereq GIT_NEW
	then
		for n in 7 8
		do
			git_new -C ca -c maintenance.commit-graph.auto=$n maintenance is-needed --auto \
				--task=commit-graph && echo yes >expect || echo no >expect
			gitpack -C ca -c maintenance.commit-graph.auto=$n maintenance is-needed --auto \
				--task=commit-graph && echo yes >actual || echo no >actual
			test_cmp expect actual || return 1
		done
	fi
'


# The child git processes a trace records, as "argv words" lines.
children () {
	sed -n "s/.*\"event\":\"child_start\".*\"argv\":\[\(.*\)\].*/\1/p" "$1" |
	sed -e "s/\"//g" -e "s/,/ /g"
}

test_expect_success 'reflog-expire, worktree-prune, rerere-gc run git as git maintenance does' '
	rm -rf hk &&
	git init -q hk &&
	git -C hk commit -q --allow-empty -m one &&
	git -C hk worktree add -q ../hk-wt &&
	rm -rf hk-wt &&
	mkdir -p hk/.git/rr-cache/abc &&
	(
		cd hk &&
		GIT_TRACE2_EVENT="$(pwd)/../hk-trace" gitpack -c gc.worktreePruneExpire=now \
			maintenance run --task=reflog-expire --task=worktree-prune --task=rerere-gc
	) &&
	children hk-trace >actual &&
	cat >expect <<-\EOF &&
	git reflog expire --all
	git worktree prune --expire now
	git rerere gc
	EOF
	test_cmp expect actual &&
	test_path_is_missing hk/.git/worktrees/hk-wt
'

test_expect_success '--auto: each housekeeping task only when its threshold is met' '
	rm -rf ha ha-trace &&
	git init -q ha &&
	test_tick &&
	git -C ha commit -q --allow-empty -m one &&
	test_tick &&
	git -C ha commit -q --allow-empty -m two &&
	(
		cd ha &&
		for t in reflog-expire worktree-prune rerere-gc
		do
			test_must_fail gitpack maintenance is-needed --auto --task=$t || return 1
		done
	) &&
	(
		cd ha &&
		! gitpack -c maintenance.reflog-expire.auto=3 maintenance is-needed --auto --task=reflog-expire &&
		gitpack -c maintenance.reflog-expire.auto=2 maintenance is-needed --auto --task=reflog-expire &&
		mkdir .git/worktrees && : >.git/worktrees/gone &&
		gitpack maintenance is-needed --auto --task=worktree-prune &&
		! gitpack -c maintenance.worktree-prune.auto=0 maintenance is-needed --auto --task=worktree-prune &&
		! gitpack -c maintenance.worktree-prune.auto=2 maintenance is-needed --auto --task=worktree-prune &&
		mkdir .git/rr-cache &&
		! gitpack maintenance is-needed --auto --task=rerere-gc &&
		: >.git/rr-cache/entry &&
		gitpack -c maintenance.rerere-gc.auto=9000 maintenance is-needed --auto --task=rerere-gc &&
		GIT_TRACE2_EVENT="$(pwd)/../ha-trace" gitpack -c maintenance.reflog-expire.auto=2 \
			maintenance run --auto --task=reflog-expire --task=worktree-prune --task=rerere-gc
	) &&
	children ha-trace >actual &&
	cat >expect <<-\EOF &&
	git reflog expire --all
	git worktree prune --expire 3.months.ago
	git rerere gc
	EOF
	test_cmp expect actual
'


test_expect_success 'register and unregister edit maintenance.repo as git documents' '
	rm -rf rg rg-home &&
	mkdir rg-home &&
	git init -q rg &&
	(
		HOME=$(pwd)/rg-home &&
		export HOME &&
		unset XDG_CONFIG_HOME GIT_CONFIG_GLOBAL &&
		cd rg &&
		top=$(pwd -P) &&
		test_must_fail gitpack maintenance unregister 2>err &&
		grep "is not registered" err &&
		gitpack maintenance unregister --force &&
		git config --global --add maintenance.repo "/a+b*c" &&
		gitpack maintenance register &&
		gitpack maintenance register &&
		test "$(git config --local maintenance.auto)" = false &&
		test "$(git config --local maintenance.strategy)" = incremental &&
		printf "%s\n" "/a+b*c" "$top" >expect &&
		git config --global --get-all maintenance.repo >actual &&
		test_cmp expect actual &&
		gitpack maintenance unregister &&
		echo "/a+b*c" >expect &&
		git config --global --get-all maintenance.repo >actual &&
		test_cmp expect actual &&
		git config maintenance.strategy none &&
		gitpack maintenance register --config-file ../rg-other &&
		test "$(git config --local maintenance.strategy)" = none &&
		echo "$top" >expect &&
		git config --file ../rg-other --get-all maintenance.repo >actual &&
		test_cmp expect actual &&
		gitpack maintenance unregister --config-file ../rg-other &&
		test_must_fail git config --file ../rg-other --get-all maintenance.repo &&
		test_must_fail gitpack maintenance unregister --config-file ../rg-other
	)
'


test_expect_success 'prefetch: git fetch --prefetch for each remote but those skipping fetch --all' '
	rm -rf pf pf-up pf-trace &&
	git init -q pf-up &&
	git -C pf-up commit -q --allow-empty -m up &&
	git init -q pf &&
	git -C pf remote add one "file://$(pwd)/pf-up" &&
	git -C pf remote add two "file://$(pwd)/pf-up" &&
	git -C pf config remote.two.skipFetchAll true &&
	(
		cd pf &&
		GIT_TRACE2_EVENT="$(pwd)/../pf-trace" gitpack maintenance run --task=prefetch --quiet
	) &&
	children pf-trace >actual &&
	echo "git fetch one --prefetch --prune --no-tags --no-write-fetch-head --recurse-submodules=no --quiet" >expect &&
	test_cmp expect actual &&
	git -C pf rev-parse --verify refs/prefetch/remotes/one/main 2>/dev/null ||
	git -C pf rev-parse --verify refs/prefetch/remotes/one/master
'

test_done
