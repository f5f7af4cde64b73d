#!/bin/sh

test_description='core.lockfilePid: the ~pid companion of lock files

With core.lockfilePid true, a lock gitpack takes ("<name>.lock") gets a
companion "<name>~pid.lock" holding "pid <n>", removed with the lock;
false (the default) writes none. A lock that cannot be taken is
explained by its companion, read whatever the setting: held by a
running process, or stale when that process is gone. Checked for the
maintenance lock (held across a child, and across --detach, where the
companion names the parent), packed-refs.lock, the MIDX lock and the
schedule lock.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# A "git" for maintenance children: it records what the lock directory
# holds while the maintenance that spawned it runs.
test_expect_success 'setup' '
	git init -q -b main repo &&
	test_commit -C repo one &&
	git -C repo remote add origin /does/not/exist &&
	mkdir bin &&
	cat >bin/git <<-\EOF &&
	#!/bin/sh
	o=$(pwd)/.git/objects
	{ ls "$o" | grep "lock$"; cat "$o/maintenance~pid.lock" 2>/dev/null; } >"$(pwd)/../seen"
	exit 0
	EOF
	chmod +x bin/git
'

test_expect_success 'maintenance: the companion exists while the lock is held, and goes with it' '
	git -C repo config core.lockfilePid true &&
	(cd repo && PATH="$(pwd)/../bin:$PATH" gitpack maintenance run --task=prefetch --quiet) &&
	grep "^maintenance.lock$" seen &&
	grep "^maintenance~pid.lock$" seen &&
	grep "^pid [1-9][0-9]*$" seen &&
	test_path_is_missing repo/.git/objects/maintenance.lock &&
	test_path_is_missing repo/.git/objects/maintenance~pid.lock
'

test_expect_success 'maintenance: no companion by default or with core.lockfilePid false' '
	git -C repo config --unset core.lockfilePid &&
	(cd repo && PATH="$(pwd)/../bin:$PATH" gitpack maintenance run --task=prefetch --quiet) &&
	grep "^maintenance.lock$" seen &&
	! grep "pid" seen &&
	git -C repo config core.lockfilePid false &&
	(cd repo && PATH="$(pwd)/../bin:$PATH" gitpack maintenance run --task=prefetch --quiet) &&
	grep "^maintenance.lock$" seen &&
	! grep "pid" seen
'

test_expect_success 'maintenance --detach: the companion names the parent and goes when the child is done' '
	git -C repo config core.lockfilePid true &&
	git -C repo config maintenance.auto false &&
	(
		cd repo &&
		{ PATH="$(pwd)/../bin:$PATH" gitpack maintenance run --task=prefetch --detach & } &&
		echo $! >parent &&
		wait
	) &&
	# the detached child is gone once the lock is
	for i in $(test_seq 100)
	do
		test -e repo/.git/objects/maintenance.lock || break
		sleep 0.1
	done &&
	test_path_is_missing repo/.git/objects/maintenance.lock &&
	test_path_is_missing repo/.git/objects/maintenance~pid.lock &&
	echo "pid $(cat repo/parent)" >expect &&
	grep "^pid" seen >actual &&
	test_cmp expect actual
'

test_expect_success 'a held lock is explained by its companion: a running holder' '
	: >repo/.git/packed-refs.lock &&
	printf "pid %d" $$ >repo/.git/packed-refs~pid.lock &&
	test_must_fail gitpack -C repo pack-refs --all 2>err &&
	grep "packed-refs.lock" err &&
	grep "held by process $$" err &&
	rm repo/.git/packed-refs.lock repo/.git/packed-refs~pid.lock
'

test_expect_success 'a stale lock is named stale, whatever core.lockfilePid says' '
	# a pid above the kernel limit runs nowhere
	git -C repo config core.lockfilePid false &&
	git -C repo repack -q -d &&
	: >repo/.git/objects/pack/multi-pack-index.lock &&
	printf "pid 99999999" >repo/.git/objects/pack/multi-pack-index~pid.lock &&
	test_must_fail gitpack -C repo multi-pack-index write 2>err &&
	grep "multi-pack-index.lock" err &&
	grep "process 99999999, which is no longer running" err &&
	grep "appears to be stale" err &&
	rm repo/.git/objects/pack/multi-pack-index.lock &&
	rm repo/.git/objects/pack/multi-pack-index~pid.lock &&
	: >repo/.git/objects/maintenance.lock &&
	printf "pid 99999999\n" >repo/.git/objects/maintenance~pid.lock &&
	gitpack -C repo maintenance run --no-quiet --task=commit-graph 2>err &&
	grep "maintenance.lock. exists, skipping maintenance" err &&
	grep "appears to be stale" err &&
	rm repo/.git/objects/maintenance.lock repo/.git/objects/maintenance~pid.lock
'

test_expect_success 'without a companion a held lock gets the plain message' '
	: >repo/.git/packed-refs.lock &&
	test_must_fail gitpack -C repo pack-refs --all 2>err &&
	grep "File exists; is another process writing it" err &&
	! grep "process [0-9]" err &&
	rm repo/.git/packed-refs.lock
'

test_expect_success 'schedule.lock: its companion explains it' '
	: >repo/.git/objects/schedule.lock &&
	printf "pid 99999999" >repo/.git/objects/schedule~pid.lock &&
	test_must_fail env GIT_TEST_MAINT_SCHEDULER=crontab:true \
		gitpack -C repo maintenance start --scheduler=crontab 2>err &&
	grep "Another scheduled git-maintenance(1) process" err &&
	grep "appears to be stale" err &&
	rm repo/.git/objects/schedule.lock repo/.git/objects/schedule~pid.lock
'

test_done
