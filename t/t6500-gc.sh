#!/bin/sh

test_description='gc: git gc on repositories stock git made

gitpack gc runs git gc'"'"'s steps as children with git'"'"'s argv (trace2
shows them; where the newer stock git is at hand, the very list its gc
runs), keeps everything reachable (stock git fsck --full agrees), keeps
what nothing reaches in a cruft pack until gc.pruneExpire, decides
--auto by gc.auto and gc.autoPackLimit, honours the pre-auto-gc hook,
the gc.pid lock and gc.log, and maintenance'"'"'s gc task runs it as
git'"'"'s does. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# new_repo DIR: a work repository with history, a branch and tags, an
# amended commit only the reflog reaches, and a blob nothing reaches.
new_repo () {
	rm -rf $1 &&
	git init -q -b main --object-format=$algo $1 &&
	git -C $1 config gc.auto 0 &&
	git -C $1 config maintenance.auto false &&
	for i in 1 2 3
	do
		test_commit -C $1 c-$i || return 1
	done &&
	git -C $1 checkout -q -b side main~1 &&
	test_commit -C $1 s-1 &&
	git -C $1 checkout -q main &&
	git -C $1 tag -a -m annotated ann main~2 &&
	echo amended >$1/amend.t &&
	git -C $1 add amend.t &&
	git -C $1 commit -q -m first &&
	git -C $1 commit -q --amend -m second &&
	echo nobody | git -C $1 hash-object -w --stdin >$1.unreachable
}

# objects DIR: every object git finds.
objects () {
	git -C $1 cat-file --batch-all-objects --batch-check="%(objectname)" | sort
}

# reachable DIR: what refs and the index reach (the reflogs of
# test_commit's old dates are expired by gc's reflog expire, as git's).
reachable () {
	git -C $1 rev-list --objects --all --indexed-objects | cut -d" " -f1 | sort
}

# checked DIR: stock git finds no fault.
checked () {
	git -C $1 fsck --full --no-progress 2>err &&
	! grep -v "^dangling\|^notice" err
}

# nr_packs DIR: the packs that are not cruft packs.
nr_packs () {
	for gp_np_ in $1/.git/objects/pack/*.pack
	do
		test -f "$gp_np_" && ! test -f "${gp_np_%.pack}.mtimes" && echo "$gp_np_"
	done | wc -l
}

nr_loose () {
	find $1/.git/objects/?? -type f 2>/dev/null | wc -l
}

# children TRACE: the argv of the children the top process started.
children () {
	sed -n "s/.*\"event\":\"child_start\",\"sid\":\"[^\"/]*\".*\"argv\":\[\(.*\)\].*/\1/p" "$1" |
	sed -e "s/\"//g" -e "s/,/ /g"
}

for algo in $test_hash_algos
do

test_expect_success "gc: everything reachable kept, one pack and a cruft pack, nothing loose ($algo)" '
	new_repo g-$algo &&
	reachable g-$algo >reach.before &&
	objects g-$algo >before &&
	GIT_TRACE2_EVENT="$(pwd)/trace-g-$algo" gitpack -C g-$algo gc -q &&
	checked g-$algo &&
	test $(nr_loose g-$algo) = 0 &&
	objects g-$algo >after &&
	test_cmp before after &&
	reachable g-$algo >reach.after &&
	test_cmp reach.before reach.after &&
	ls g-$algo/.git/objects/pack/*.mtimes >cruft &&
	test_line_count = 1 cruft &&
	ls g-$algo/.git/objects/pack/*.pack >packs &&
	test_line_count = 2 packs &&
	# the unreachable blob is in the cruft pack, not the other
	cp=$(sed -e "s/mtimes$/idx/" cruft) &&
	git show-index --object-format=$algo <$cp | grep $(cat g-$algo.unreachable) &&
	test_path_is_file g-$algo/.git/packed-refs &&
	test_path_is_file g-$algo/.git/objects/info/commit-graph &&
	git -C g-$algo commit-graph verify &&
	test_path_is_missing g-$algo/.git/gc.pid &&
	children trace-g-$algo >actual &&
	cat >expect <<-\EOF &&
	git pack-refs --all --prune
	git reflog expire --all
	git worktree prune --expire 3.months.ago
	git rerere gc
	git repack -d -l -q --cruft --cruft-expiration=2.weeks.ago
	git prune --expire 2.weeks.ago --no-progress
	git commit-graph write --reachable --no-progress
	EOF
	test_cmp expect actual
'

test_expect_success "gc: unreachable objects stay until gc.pruneExpire, then go ($algo)" '
	new_repo p-$algo &&
	echo old | git -C p-$algo hash-object -w --stdin >old &&
	f=p-$algo/.git/objects/$(cut -c1-2 old)/$(cut -c3- old) &&
	touch -d "30 days ago" $f &&
	gitpack -C p-$algo gc -q &&
	checked p-$algo &&
	# the young one is kept in the cruft pack, the old one is gone
	git -C p-$algo cat-file -e $(cat p-$algo.unreachable) &&
	test_must_fail git -C p-$algo cat-file -e $(cat old) &&
	gitpack -C p-$algo gc -q &&
	git -C p-$algo cat-file -e $(cat p-$algo.unreachable) &&
	gitpack -C p-$algo gc -q --prune=now &&
	test_must_fail git -C p-$algo cat-file -e $(cat p-$algo.unreachable) &&
	! ls p-$algo/.git/objects/pack/*.mtimes &&
	reachable p-$algo >expect &&
	objects p-$algo >actual &&
	test_cmp expect actual &&
	checked p-$algo
'

test_expect_success "gc --no-cruft: unreachable objects loose until they expire ($algo)" '
	new_repo nc-$algo &&
	gitpack -C nc-$algo -c gc.pruneExpire=never gc -q --no-cruft &&
	checked nc-$algo &&
	! ls nc-$algo/.git/objects/pack/*.mtimes &&
	git -C nc-$algo cat-file -e $(cat nc-$algo.unreachable) &&
	test_path_is_file nc-$algo/.git/objects/$(cut -c1-2 nc-$algo.unreachable)/$(cut -c3- nc-$algo.unreachable)
'

done

algo=sha1

test_expect_success 'the repack argv follows the options and gc.* as git gc builds it' '
	new_repo o &&
	run () {
		rm -f trace &&
		GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C o "$@" &&
		children trace | grep "^git repack" >actual
	} &&
	run gc -q --aggressive &&
	echo "git repack -d -l -f --depth=50 --window=250 -q --cruft --cruft-expiration=2.weeks.ago" >expect &&
	test_cmp expect actual &&
	run -c gc.aggressiveDepth=7 -c gc.aggressiveWindow=9 gc -q --aggressive &&
	echo "git repack -d -l -f --depth=7 --window=9 -q --cruft --cruft-expiration=2.weeks.ago" >expect &&
	test_cmp expect actual &&
	run gc -q --no-cruft &&
	echo "git repack -d -l -q -A --unpack-unreachable=2.weeks.ago" >expect &&
	test_cmp expect actual &&
	run -c gc.cruftPacks=false -c gc.pruneExpire=3.days.ago gc -q &&
	echo "git repack -d -l -q -A --unpack-unreachable=3.days.ago" >expect &&
	test_cmp expect actual &&
	run gc -q --prune=now &&
	echo "git repack -d -l -q -a" >expect &&
	test_cmp expect actual &&
	run gc -q --no-prune &&
	echo "git repack -d -l -q --cruft" >expect &&
	test_cmp expect actual &&
	! children trace | grep "^git prune" &&
	run -c gc.maxCruftSize=2M gc -q --expire-to=$(pwd)/x &&
	echo "git repack -d -l -q --cruft --cruft-expiration=2.weeks.ago --max-cruft-size=2097152 --expire-to=$(pwd)/x" >expect &&
	test_cmp expect actual &&
	git -C o repack -adq &&
	test_commit -C o more &&
	git -C o repack -dq &&
	largest=$(cd o/.git/objects/pack &&
		  for p in $(ls -S pack-*.pack)
		  do
			test -f ${p%.pack}.mtimes || { echo $p; break; }
		  done) &&
	run gc -q --keep-largest-pack &&
	echo "git repack -d -l -q --cruft --cruft-expiration=2.weeks.ago --keep-pack=$largest" >expect &&
	test_cmp expect actual &&
	test_path_is_file o/.git/objects/pack/$largest &&
	checked o &&
	# last: the blobs leave for a pack no alternate points at
	run -c gc.repackFilter=blob:none -c gc.repackFilterTo=$(pwd)/f gc -q --no-cruft &&
	echo "git repack -d -l -q -A --unpack-unreachable=2.weeks.ago --filter=blob:none --filter-to=$(pwd)/f" >expect &&
	test_cmp expect actual
'

test_expect_success 'foreground steps: gc.packRefs, reflogs kept for ever, --skip-foreground-tasks' '
	new_repo fg &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C fg -c gc.packRefs=false \
		-c gc.reflogExpire=never -c gc.reflogExpireUnreachable=never gc -q &&
	! children trace | grep "pack-refs\|reflog" &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C fg -c gc.reflogExpire=never gc -q &&
	children trace | grep "^git reflog expire --all$" &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C fg gc -q --no-detach --skip-foreground-tasks &&
	! children trace | grep "pack-refs\|reflog" &&
	children trace | grep "^git repack"
'

test_expect_success GIT_NEW 'the children are those of git gc (2.55) on the same repository' '
	new_repo n1 &&
	rm -rf n2 &&
	cp -R n1 n2 &&
	for opts in "-q" "--no-prune -q" "--prune=now --aggressive -q" "--no-cruft -q"
	do
		rm -f t1 t2 &&
		GIT_TRACE2_EVENT="$(pwd)/t1" gitpack -C n1 gc $opts &&
		GIT_TRACE2_EVENT="$(pwd)/t2" git_new -C n2 gc $opts &&
		# git writes the commit-graph in-process; gitpack in a child
		children t1 | grep -v "^git commit-graph" >actual &&
		children t2 >expect &&
		test_cmp expect actual || return 1
	done
'

test_expect_success 'gc --auto: nothing below gc.auto and gc.autoPackLimit, nothing with gc.auto=0' '
	new_repo a &&
	git -C a repack -adq &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C a -c gc.auto=6700 gc --auto 2>err &&
	test_must_be_empty err &&
	! grep child_start trace &&
	# N loose objects in objects/17 make an estimate of 256 * N
	mkdir -p blobs &&
	for i in $(test_seq 2000)
	do
		echo blob-$i >blobs/$i || return 1
	done &&
	ls "$(pwd)"/blobs/* | git -C a hash-object -w --stdin-paths >/dev/null &&
	n=$(ls a/.git/objects/17 | wc -l) &&
	test $n -ge 2 &&
	gitpack -C a -c gc.auto=$((256 * n)) gc --auto 2>err &&
	test_must_be_empty err &&
	test $(ls a/.git/objects/17 | wc -l) = $n &&
	gitpack -C a -c gc.auto=0 -c gc.autoPackLimit=1 gc --auto &&
	test $(ls a/.git/objects/17 | wc -l) = $n
'

test_expect_success 'gc --auto past gc.auto: the loose objects into a pack of their own, no bitmap; gc.pruneExpire prunes' '
	rm -f trace &&
	ls a/.git/objects/pack/*.pack >packs.before &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C a -c gc.auto=$((256 * n - 256)) \
		-c gc.autoDetach=false -c gc.pruneExpire=now gc --auto 2>err &&
	test_write_lines "Auto packing the repository for optimum performance." \
		"See \"git help gc\" for manual housekeeping." >expect &&
	test_cmp expect err &&
	children trace >actual &&
	grep "^git repack -d -l --no-write-bitmap-index$" actual &&
	grep "^git pack-refs --all --prune --auto$" actual &&
	grep "^git prune --expire now$" actual &&
	ls a/.git/objects/pack/*.pack >packs.after &&
	# the old pack stays, none is added: the loose blobs were unreachable
	test_cmp packs.before packs.after &&
	test_path_is_missing a/.git/objects/17 &&
	checked a
'

test_expect_success 'gc --auto past gc.autoPackLimit: all into one (gc.bigPackThreshold keeps the big)' '
	new_repo ap &&
	git -C ap repack -adq &&
	for i in 1 2 3
	do
		test_commit -C ap more-$i &&
		git -C ap repack -dq || return 1
	done &&
	big=$(cd ap/.git/objects/pack && ls -S pack-*.pack | head -n 1) &&
	size=$(wc -c <ap/.git/objects/pack/$big) &&
	git -C ap config gc.auto 6700 &&
	gitpack -C ap -c gc.autoPackLimit=10 gc --auto -q &&
	test $(ls ap/.git/objects/pack/*.pack | wc -l) = 4 &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C ap -c gc.autoPackLimit=3 \
		-c gc.bigPackThreshold=$size -c gc.autoDetach=false gc --auto -q &&
	children trace | grep "^git repack" >actual &&
	echo "git repack -d -l -q --cruft --cruft-expiration=2.weeks.ago --keep-pack=$big" >expect &&
	test_cmp expect actual &&
	test $(nr_packs ap) = 2 &&
	test_path_is_file ap/.git/objects/pack/$big &&
	checked ap
'

test_expect_success 'the pre-auto-gc hook stops gc --auto when it fails' '
	new_repo hk &&
	git -C hk config gc.auto 6700 &&
	for i in 1 2
	do
		test_commit -C hk h-$i &&
		git -C hk repack -dq || return 1
	done &&
	mkdir -p hk/.git/hooks &&
	write_hook () {
		printf "#!/bin/sh\necho hook says $1 >&2\nexit $2\n" >hk/.git/hooks/pre-auto-gc &&
		chmod +x hk/.git/hooks/pre-auto-gc
	} &&
	write_hook no 1 &&
	gitpack -C hk -c gc.autoPackLimit=1 -c gc.autoDetach=false gc --auto >out 2>err &&
	test_must_be_empty out &&
	echo "hook says no" >expect &&
	test_cmp expect err &&
	test $(ls hk/.git/objects/pack/*.pack | wc -l) -gt 1 &&
	write_hook yes 0 &&
	gitpack -C hk -c gc.autoPackLimit=1 -c gc.autoDetach=false gc --auto -q &&
	test $(nr_packs hk) = 1 &&
	checked hk
'

test_expect_success 'gc.pid: a live gc of this host stops another; --force, a dead one or another host do not' '
	sleep 300 &
	live=$! &&
	new_repo lk &&
	git -C lk config gc.auto 6700 &&
	git -C lk repack -dq &&
	test_commit -C lk l-1 &&
	git -C lk repack -dq &&
	test_when_finished "kill $live" &&
	printf "%d %s" $live "$(hostname)" >lk/.git/gc.pid &&
	test_must_fail gitpack -C lk gc -q 2>err &&
	grep "gc is already running on machine .$(hostname). pid $live (use --force if not)" err &&
	test $(nr_loose lk) != 0 &&
	# --auto: a quiet success, nothing done
	gitpack -C lk -c gc.autoPackLimit=1 -c gc.autoDetach=false gc --auto -q 2>err &&
	test_must_be_empty err &&
	test $(ls lk/.git/objects/pack/*.pack | wc -l) = 2 &&
	test_path_is_file lk/.git/gc.pid &&
	gitpack -C lk gc -q --force &&
	test $(nr_loose lk) = 0 &&
	test_path_is_missing lk/.git/gc.pid &&
	# a process that is gone holds nothing
	dead=$(sh -c "echo \$\$") &&
	printf "%d %s" $dead "$(hostname)" >lk/.git/gc.pid &&
	gitpack -C lk gc -q &&
	test_path_is_missing lk/.git/gc.pid &&
	# nor does a file older than 12 hours
	printf "%d %s" $live other-host >lk/.git/gc.pid &&
	test_must_fail gitpack -C lk gc -q 2>err &&
	grep "machine .other-host." err &&
	touch -d "13 hours ago" lk/.git/gc.pid &&
	gitpack -C lk gc -q &&
	test_path_is_missing lk/.git/gc.pid &&
	checked lk
'

test_expect_success 'gc --auto in the background: gc.log stops the next run while young' '
	new_repo bg &&
	for i in 1 2
	do
		test_commit -C bg b-$i &&
		git -C bg repack -dq || return 1
	done &&
	git -C bg config gc.auto 6700 &&
	git -C bg config gc.autoPackLimit 1 &&
	echo failure >bg/.git/gc.log &&
	gitpack -C bg gc --auto 2>err &&
	grep "^warning: .*gc.log" err &&
	grep failure err &&
	test $(ls bg/.git/objects/pack/*.pack | wc -l) -gt 1 &&
	touch -d "2 days ago" bg/.git/gc.log &&
	# fd 9 stays open in the background gc: reading it waits for it
	out=$(gitpack -C bg gc --auto 9>&1 2>err) &&
	grep "Auto packing the repository in background for optimum performance." err &&
	test $(nr_packs bg) = 1 &&
	test_path_is_missing bg/.git/gc.log &&
	test_path_is_missing bg/.git/gc.pid &&
	checked bg
'

test_expect_success 'a background run that fails leaves gc.log' '
	test_commit -C bg b-3 &&
	git -C bg repack -dq &&
	# a step that fails in the background: the repack, given a bad filter
	git -C bg config gc.repackFilter no-such-filter &&
	out=$(gitpack -C bg gc --auto 9>&1 2>/dev/null) &&
	grep "failed to run repack" bg/.git/gc.log &&
	test_path_is_missing bg/.git/gc.log.lock &&
	test_path_is_missing bg/.git/gc.pid &&
	gitpack -C bg gc --auto 2>err &&
	grep "^warning: .*gc.log" err &&
	grep "failed to run repack" err &&
	test $(nr_packs bg) = 2 &&
	git -C bg config --unset gc.repackFilter &&
	rm bg/.git/gc.log &&
	out=$(gitpack -C bg gc --auto 9>&1 2>/dev/null) &&
	test_path_is_missing bg/.git/gc.log &&
	test $(nr_packs bg) = 1 &&
	checked bg
'

test_expect_success 'pack garbage: an .idx without its .pack goes with its other files, as git gc removes it' '
	rm -rf pg && git init -q pg && test_commit -C pg one &&
	git -C pg repack -q -d &&
	(
		cd pg/.git/objects/pack &&
		p=$(ls pack-*.pack) &&
		: >foo.keep && : >foo.pack && : >fake.idx &&
		: >fake2.keep && : >fake2.idx && : >fake3.keep &&
		: >pack-0123.idx && : >pack-0123.rev &&
		# the real pack keeps its .idx: garbage is decided per name
		: >${p%.pack}.keep
	) &&
	cp -R pg pg-git &&
	gitpack -C pg gc --no-cruft -q &&
	git -C pg-git gc --no-cruft -q &&
	(cd pg-git/.git/objects/pack && ls | sed "s/^pack-[0-9a-f]\{40,\}/pack-X/") >expect &&
	(cd pg/.git/objects/pack && ls | sed "s/^pack-[0-9a-f]\{40,\}/pack-X/") >actual &&
	test_cmp expect actual &&
	(cd pg/.git/objects/pack && ls | grep -v "^pack-") >actual &&
	test_write_lines fake3.keep foo.keep foo.pack >expect &&
	test_cmp expect actual &&
	git -C pg fsck --full
'

test_expect_success 'gc: a bad gc.pruneExpire names the file and line, as git' '
	rm -rf pe && git init -q pe &&
	git -C pe config gc.pruneExpire invalid &&
	test_must_fail git -C pe gc 2>expect &&
	test_must_fail gitpack -C pe gc 2>actual &&
	test_cmp expect actual &&
	grep "in file .\.git/config. at line" actual &&
	test_must_fail git -C pe -c gc.pruneExpire=bad gc 2>expect &&
	test_must_fail gitpack -C pe -c gc.pruneExpire=bad gc 2>actual &&
	test_cmp expect actual
'

test_expect_success 'extensions.preciousObjects: repack -d refuses, as git; gc deletes nothing' '
	rm -rf po && git init -q po && test_commit -C po one && test_commit -C po two &&
	git -C po repack -q -d && test_commit -C po three && git -C po repack -q &&
	git -C po config extensions.preciousObjects true &&
	ls po/.git/objects/pack >before &&
	test_must_fail git -C po repack -a -d 2>expect &&
	test_must_fail gitpack -C po repack -a -d 2>actual &&
	test_cmp expect actual &&
	test_must_fail gitpack -C po repack -d 2>actual &&
	test_cmp expect actual &&
	gitpack -C po repack -q &&
	gitpack -C po gc -q &&
	ls po/.git/objects/pack >after &&
	comm -23 before after >gone &&
	test_must_be_empty gone &&
	git -C po fsck --full
'

test_expect_success 'usage: git gc, exit 129 on a bad option; -h alone answers' '
	test_expect_code 129 gitpack -C bg gc --nonsense 2>err &&
	grep "usage: git gc" err &&
	gitpack -C bg gc -h >out &&
	grep "usage: git gc" out
'

test_expect_success 'maintenance: the gc task runs git gc as git maintenance does' '
	new_repo mt &&
	git -C mt config maintenance.strategy gc &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C mt maintenance run --quiet &&
	children trace >actual &&
	grep "^git gc --quiet --no-detach --skip-foreground-tasks$" actual &&
	grep "^git pack-refs --all --prune$" actual &&
	! grep "^git repack" actual &&
	# the repack is the gc child'"'"'s
	grep "\"argv\":\[\"git\",\"repack\",\"-d\",\"-l\",\"-q\",\"--cruft\"" trace &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C mt maintenance run --no-quiet 2>/dev/null &&
	children trace | grep "^git gc --no-quiet --no-detach --skip-foreground-tasks$" &&
	rm -f trace &&
	git -C mt config gc.auto 6700 &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C mt -c gc.autoPackLimit=10 maintenance run --auto --quiet &&
	! children trace | grep "^git gc" &&
	for i in 1 2
	do
		test_commit -C mt m-$i &&
		git -C mt repack -dq || return 1
	done &&
	rm -f trace &&
	GIT_TRACE2_EVENT="$(pwd)/trace" gitpack -C mt -c gc.autoPackLimit=1 maintenance run --auto --quiet &&
	children trace | grep "^git gc --auto --quiet --no-detach --skip-foreground-tasks$" &&
	checked mt
'

test_done
