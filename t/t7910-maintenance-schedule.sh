#!/bin/sh

test_description='maintenance start and stop: the background schedule

Each scheduler (crontab, systemd-timer, launchctl, schtasks) is replaced
by a fake program through GIT_TEST_MAINT_SCHEDULER, as git'\''s own tests
do; the fakes log their arguments, so the tests check the calls made and
the files written (crontab table, systemd units, launchd plists, Task
Scheduler XML). start keeps the rest of a crontab and stop restores it;
start registers the repository (stock git reads the config) and a failed
start registers nothing; a held objects/schedule.lock fails cleanly. The
scheduled command line, run as cron or systemd would, runs this gitpack
(for-each-repo, then maintenance run), not the git found in PATH.'

. ./test-lib.sh

# The binary the jobs must run: what /proc/self/exe says of gitpack.
prog=$(cd "$GP_BUILD_DIR" && pwd -P)/gitpack
job="for-each-repo --keep-going --config=maintenance.repo maintenance run"

test_expect_success 'setup: fake schedulers' '
	mkdir fakes &&
	cat >fakes/log-args <<-\EOF &&
	#!/bin/sh
	# log-args NAME ARGS...: one line "NAME ARGS" in $HOME/calls.
	echo "$*" >>"$HOME/calls"
	name=$1
	shift
	case "$name" in
	crontab)
		# crontab TABLE -l | crontab TABLE FILE
		table=$1
		if test "$2" = -l
		then
			test -f "$table" || exit 1
			cat "$table"
		else
			cp "$2" "$table"
		fi ;;
	launchctl)
		test "$1" != list || test -f "$HOME/launchctl-knows" ;;
	schtasks)
		# keep the XML: gitpack removes its temporary file afterwards
		while test $# -gt 0
		do
			if test "$1" = /xml
			then
				cp "$2" "$HOME/task-$(ls "$HOME" | grep -c "^task-").xml"
			fi
			shift
		done ;;
	esac
	EOF
	chmod +x fakes/log-args &&
	cat >fakes/fail <<-\EOF &&
	#!/bin/sh
	echo "$*" >>"$HOME/calls"
	exit 3
	EOF
	chmod +x fakes/fail &&
	fake="$HOME/fakes/log-args" &&
	git init -q repo &&
	test_commit -C repo one
'

fake="$HOME/fakes/log-args"
CRON="crontab:$fake crontab $HOME/crontab.txt"
SYSTEMD="systemctl:$fake systemctl"
LAUNCHD="launchctl:$fake launchctl"
SCHTASKS="schtasks:$fake schtasks"

test_expect_success '--scheduler: unknown, --no-, unavailable' '
	test_expect_code 129 gitpack -C repo maintenance start --scheduler=foo 2>err &&
	grep "unrecognized --scheduler argument .foo." err &&
	test_expect_code 129 gitpack -C repo maintenance start --no-scheduler 2>err &&
	grep "unknown option" err &&
	test_expect_code 128 env GIT_TEST_MAINT_SCHEDULER="$LAUNCHD" \
		gitpack -C repo maintenance start --scheduler=crontab 2>err &&
	grep "^fatal: crontab scheduler is not available" err &&
	test_path_is_missing calls &&
	test_must_fail git -C repo config maintenance.auto
'

test_expect_success 'crontab: start writes the block and registers the repository' '
	rm -f calls crontab.txt &&
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance start --scheduler=crontab &&
	cat >expect <<-EOF &&
	# BEGIN GIT MAINTENANCE SCHEDULE
	13 1-23 * * * "$prog" $job --schedule=hourly
	13 0 * * 1-6 "$prog" $job --schedule=daily
	13 0 * * 0 "$prog" $job --schedule=weekly
	# END GIT MAINTENANCE SCHEDULE
	EOF
	grep -v "^#.*[a-z]" crontab.txt | grep . >actual &&
	test_cmp expect actual &&
	sed -n 1p calls >actual &&
	echo "crontab $HOME/crontab.txt -l" >expect &&
	test_cmp expect actual &&
	test_line_count = 2 calls &&
	git config --global --get maintenance.repo >actual &&
	echo "$HOME/repo" >expect &&
	test_cmp expect actual &&
	test "$(git -C repo config maintenance.auto)" = false &&
	test "$(git -C repo config maintenance.strategy)" = incremental &&
	test_path_is_missing repo/.git/objects/schedule.lock
'

test_expect_success 'crontab: start again replaces the block, stop removes it, the rest stays' '
	{
		echo "# my own jobs" &&
		echo "0 5 * * * backup" &&
		cat crontab.txt &&
		echo "30 6 * * * report"
	} >table &&
	cp table crontab.txt &&
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance start --scheduler=crontab &&
	test "$(grep -c "BEGIN GIT MAINTENANCE SCHEDULE" crontab.txt)" = 1 &&
	test "$(grep -c -- "--schedule=" crontab.txt)" = 3 &&
	grep "^0 5 \* \* \* backup$" crontab.txt &&
	grep "^30 6 \* \* \* report$" crontab.txt &&
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance stop &&
	printf "# my own jobs\n0 5 * * * backup\n30 6 * * * report\n" >expect &&
	test_cmp expect crontab.txt &&
	git config --global --get maintenance.repo
'

test_expect_success 'crontab: stop with nothing scheduled leaves the table alone' '
	rm -f calls &&
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance stop &&
	echo "crontab $HOME/crontab.txt -l" >expect &&
	test_cmp expect calls &&
	printf "# my own jobs\n0 5 * * * backup\n30 6 * * * report\n" >expect &&
	test_cmp expect crontab.txt
'

test_expect_success 'crontab: the scheduled line runs this gitpack, not the git in PATH' '
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance start --scheduler=crontab &&
	sed -n "s/^13 1-23 \* \* \* //p" crontab.txt >line &&
	test_line_count = 1 line &&
	mkdir -p nogit &&
	printf "#!/bin/sh\necho \"\$*\" >>\"\$HOME/git-called\"\nexit 1\n" >nogit/git &&
	chmod +x nogit/git &&
	rm -rf repo/.git/objects/info/commit-graph repo/.git/objects/info/commit-graphs &&
	(
		cd / &&
		PATH="$HOME/nogit:/usr/bin:/bin" &&
		GIT_TRACE2_EVENT="$HOME/trace.json" &&
		export GIT_TRACE2_EVENT &&
		sh -c "$(cat "$HOME/line")"
	) &&
	test_path_is_missing git-called &&
	test_path_is_file repo/.git/objects/info/commit-graphs/commit-graph-chain &&
	git -C repo commit-graph verify &&
	grep "\"argv\":\[\"git\",\"-C\",\"$HOME/repo\",\"maintenance\",\"run\",\"--schedule=hourly\"\]" trace.json &&
	GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C repo maintenance stop
'

test_expect_success 'systemd: start writes the units and enables the timers; stop undoes it' '
	rm -f calls &&
	(
		XDG_CONFIG_HOME="$HOME/xdg" &&
		export XDG_CONFIG_HOME &&
		GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance start --scheduler=systemd-timer
	) &&
	units=xdg/systemd/user &&
	for f in hourly daily weekly
	do
		echo "systemctl --user enable --now git-maintenance@$f.timer" || return 1
	done >expect &&
	test_cmp expect calls &&
	grep "^OnCalendar=\*-\*-\* 1\.\.23:13:00$" $units/git-maintenance@hourly.timer &&
	grep "^OnCalendar=Mon\.\.Sat \*-\*-\* 0:13:00$" $units/git-maintenance@daily.timer &&
	grep "^OnCalendar=Sun \*-\*-\* 0:13:00$" $units/git-maintenance@weekly.timer &&
	grep "^WantedBy=timers.target$" $units/git-maintenance@weekly.timer &&
	cat >expect <<-EOF &&
	ExecStart="$prog" -c credential.interactive=false -c core.askPass=true $job --schedule=%i
	EOF
	grep "^ExecStart=" $units/git-maintenance@.service >actual &&
	test_cmp expect actual &&
	if systemd-analyze verify /lib/systemd/system/basic.target >/dev/null 2>&1
	then
		for f in hourly daily weekly
		do
			cp $units/git-maintenance@.service $units/git-maintenance@$f.service &&
			systemd-analyze verify $units/git-maintenance@$f.timer &&
			rm $units/git-maintenance@$f.service || return 1
		done
	fi &&

	rm -f calls &&
	(
		XDG_CONFIG_HOME="$HOME/xdg" &&
		export XDG_CONFIG_HOME &&
		GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance stop
	) &&
	for f in hourly daily weekly
	do
		echo "systemctl --user disable --now git-maintenance@$f.timer" || return 1
	done >expect &&
	test_cmp expect calls &&
	ls $units >actual &&
	test_must_be_empty actual
'

test_expect_success 'systemd: without XDG_CONFIG_HOME the units go to ~/.config' '
	GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance start --scheduler=systemd &&
	test_path_is_file .config/systemd/user/git-maintenance@.service &&
	test_path_is_file .config/systemd/user/git-maintenance@daily.timer &&
	GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance stop &&
	test_path_is_missing .config/systemd/user/git-maintenance@daily.timer
'

test_expect_success 'systemd: the service line runs this gitpack' '
	GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance start --scheduler=systemd &&
	sed -n "s/^ExecStart=//p" .config/systemd/user/git-maintenance@.service |
		sed "s/%i/daily/" >line &&
	rm -f trace.json git-called &&
	(
		cd / &&
		PATH="$HOME/nogit:/usr/bin:/bin" &&
		GIT_TRACE2_EVENT="$HOME/trace.json" &&
		export GIT_TRACE2_EVENT &&
		sh -c "$(cat "$HOME/line")"
	) &&
	test_path_is_missing git-called &&
	grep "\"argv\":\[\"git\",\"-C\",\"$HOME/repo\",\"maintenance\",\"run\",\"--schedule=daily\"\]" trace.json &&
	GIT_TEST_MAINT_SCHEDULER="$SYSTEMD" gitpack -C repo maintenance stop
'

test_expect_success 'launchctl: plists, bootout and bootstrap; list spares an unchanged job' '
	rm -f calls launchctl-knows &&
	GIT_TEST_MAINT_SCHEDULER="$LAUNCHD" gitpack -C repo maintenance start --scheduler=launchctl &&
	ls Library/LaunchAgents >actual &&
	printf "org.git-scm.git.%s.plist\n" daily hourly weekly >expect &&
	test_cmp expect actual &&
	uid=$(id -u) &&
	for f in hourly daily weekly
	do
		plist="$HOME/Library/LaunchAgents/org.git-scm.git.$f.plist" &&
		echo "launchctl bootout gui/$uid $plist" &&
		echo "launchctl bootstrap gui/$uid $plist" || return 1
	done >expect &&
	test_cmp expect calls &&
	plist=Library/LaunchAgents/org.git-scm.git.daily.plist &&
	grep "<string>$prog</string>" $plist &&
	grep "<string>--schedule=daily</string>" $plist &&
	test "$(grep -c "<key>Weekday</key>" $plist)" = 6 &&
	test "$(grep -c "<key>Hour</key>" Library/LaunchAgents/org.git-scm.git.hourly.plist)" = 23 &&
	if xmllint --version >/dev/null 2>&1
	then
		xmllint --noout Library/LaunchAgents/*.plist
	fi &&

	# Known to launchd and unchanged: only "list" is asked.
	rm -f calls &&
	: >launchctl-knows &&
	GIT_TEST_MAINT_SCHEDULER="$LAUNCHD" gitpack -C repo maintenance start --scheduler=launchctl &&
	printf "launchctl list org.git-scm.git.%s\n" hourly daily weekly >expect &&
	test_cmp expect calls &&

	# Not known to launchd: loaded again.
	rm -f calls launchctl-knows &&
	GIT_TEST_MAINT_SCHEDULER="$LAUNCHD" gitpack -C repo maintenance start --scheduler=launchctl &&
	grep -c bootstrap calls >actual &&
	echo 3 >expect &&
	test_cmp expect actual &&

	rm -f calls &&
	GIT_TEST_MAINT_SCHEDULER="$LAUNCHD" gitpack -C repo maintenance stop &&
	printf "launchctl bootout gui/$uid $HOME/Library/LaunchAgents/org.git-scm.git.%s.plist\n" \
		hourly daily weekly >expect &&
	test_cmp expect calls &&
	ls Library/LaunchAgents >actual &&
	test_must_be_empty actual
'

test_expect_success 'schtasks: /create with an XML file, /delete by name' '
	rm -f calls task-*.xml &&
	GIT_TEST_MAINT_SCHEDULER="$SCHTASKS" gitpack -C repo maintenance start --scheduler=schtasks &&
	sed "s|/xml $HOME/repo/.git/schedule_\([a-z]*\)_......$|/xml \1|" calls >actual &&
	printf "schtasks /create /tn Git Maintenance (%s) /f /xml %s\n" \
		hourly hourly daily daily weekly weekly >expect &&
	test_cmp expect actual &&
	{ ls repo/.git | grep "^schedule_" || :; } >actual &&
	test_must_be_empty actual &&
	grep "<Command>&quot;$prog&quot;</Command>" task-0.xml &&
	grep "<Arguments>$job --schedule=hourly</Arguments>" task-0.xml &&
	grep "<Interval>PT1H</Interval>" task-0.xml &&
	grep "<Saturday />" task-1.xml &&
	grep "<Arguments>$job --schedule=weekly</Arguments>" task-2.xml &&
	grep "<Sunday />" task-2.xml &&
	if xmllint --version >/dev/null 2>&1
	then
		xmllint --noout task-0.xml task-1.xml task-2.xml
	fi &&
	rm -f calls &&
	GIT_TEST_MAINT_SCHEDULER="$SCHTASKS" gitpack -C repo maintenance stop &&
	printf "schtasks /delete /tn Git Maintenance (%s) /f\n" hourly daily weekly >expect &&
	test_cmp expect calls
'

test_expect_success 'several schedulers: start clears the others first, stop clears all' '
	rm -f calls crontab.txt &&
	all="$CRON,$SYSTEMD,$LAUNCHD,$SCHTASKS" &&
	GIT_TEST_MAINT_SCHEDULER="$all" gitpack -C repo maintenance start --scheduler=launchctl &&
	uid=$(id -u) &&
	{
		echo "crontab $HOME/crontab.txt -l" &&
		printf "systemctl --user disable --now git-maintenance@%s.timer\n" hourly daily weekly &&
		printf "schtasks /delete /tn Git Maintenance (%s) /f\n" hourly daily weekly &&
		for f in hourly daily weekly
		do
			plist="$HOME/Library/LaunchAgents/org.git-scm.git.$f.plist" &&
			echo "launchctl bootout gui/$uid $plist" &&
			echo "launchctl bootstrap gui/$uid $plist" || return 1
		done
	} >expect &&
	test_cmp expect calls &&

	rm -f calls &&
	GIT_TEST_MAINT_SCHEDULER="$all" gitpack -C repo maintenance start --scheduler=crontab &&
	grep -c -- "--schedule=" crontab.txt >actual &&
	echo 3 >expect &&
	test_cmp expect actual &&
	test_path_is_missing Library/LaunchAgents/org.git-scm.git.daily.plist &&
	head -n 1 calls >actual &&
	echo "systemctl --user disable --now git-maintenance@hourly.timer" >expect &&
	test_cmp expect actual &&

	rm -f calls &&
	GIT_TEST_MAINT_SCHEDULER="$all" gitpack -C repo maintenance stop &&
	{
		echo "crontab $HOME/crontab.txt -l" &&
		printf "systemctl --user disable --now git-maintenance@%s.timer\n" hourly daily weekly &&
		printf "launchctl bootout gui/$uid $HOME/Library/LaunchAgents/org.git-scm.git.%s.plist\n" \
			hourly daily weekly &&
		printf "schtasks /delete /tn Git Maintenance (%s) /f\n" hourly daily weekly
	} >expect &&
	grep -v "^crontab $HOME/crontab.txt /" calls >actual &&
	test_cmp expect actual &&
	test_must_be_empty crontab.txt
'

test_expect_success 'a held schedule.lock fails cleanly and changes nothing' '
	git init -q locked &&
	: >locked/.git/objects/schedule.lock &&
	rm -f calls &&
	test_expect_code 128 env GIT_TEST_MAINT_SCHEDULER="$CRON" \
		gitpack -C locked maintenance start --scheduler=crontab 2>err &&
	grep "Another scheduled git-maintenance(1) process seems to be running" err &&
	grep "schedule.lock" err &&
	test_must_fail env GIT_TEST_MAINT_SCHEDULER="$CRON" gitpack -C locked maintenance stop 2>err &&
	grep "Another scheduled git-maintenance(1) process seems to be running" err &&
	test_path_is_missing calls &&
	test_path_is_file locked/.git/objects/schedule.lock &&
	test_must_fail git -C locked config maintenance.auto &&
	! git config --global --get-all maintenance.repo | grep locked
'

test_expect_success 'an interrupted start leaves no schedule.lock behind' '
	printf "#!/bin/sh\nkill -TERM \$PPID\nsleep 1\n" >fakes/interrupt &&
	chmod +x fakes/interrupt &&
	git init -q interrupted &&
	test_expect_code 143 env GIT_TEST_MAINT_SCHEDULER="systemctl:$HOME/fakes/interrupt" \
		gitpack -C interrupted maintenance start --scheduler=systemd &&
	test_path_is_missing interrupted/.git/objects/schedule.lock &&
	test_must_fail git -C interrupted config maintenance.auto
'

test_expect_success 'a failing scheduler fails start and registers nothing' '
	git init -q --bare failing &&
	for s in crontab systemctl launchctl schtasks
	do
		case $s in systemctl) name=systemd ;; *) name=$s ;; esac &&
		test_must_fail env GIT_TEST_MAINT_SCHEDULER="$s:$HOME/fakes/fail" \
			gitpack -C failing maintenance start --scheduler=$name 2>err &&
		grep "failed to set up maintenance schedule" err &&
		test_must_fail git -C failing config maintenance.auto &&
		test_path_is_missing failing/objects/schedule.lock || return 1
	done &&
	! git config --global --get-all maintenance.repo | grep failing &&
	ls .config/systemd/user >actual &&
	test_must_be_empty actual
'

test_expect_success 'without GIT_TEST_MAINT_SCHEDULER: systemctl from PATH' '
	mkdir -p bin &&
	printf "#!/bin/sh\necho \"systemctl \$*\" >>\"\$HOME/calls\"\n" >bin/systemctl &&
	chmod +x bin/systemctl &&
	# never the user'\''s real crontab: an empty one that logs
	printf "#!/bin/sh\necho \"crontab \$*\" >>\"\$HOME/calls\"\n" >bin/crontab &&
	chmod +x bin/crontab &&
	rm -f calls &&
	PATH="$HOME/bin:$PATH" gitpack -C repo maintenance start --scheduler=systemd &&
	grep "^systemctl --user list-timers$" calls &&
	grep "^systemctl --user enable --now git-maintenance@weekly.timer$" calls &&
	PATH="$HOME/bin:$PATH" gitpack -C repo maintenance stop &&
	grep "^systemctl --user disable --now git-maintenance@weekly.timer$" calls &&
	# an empty table has no block of ours: it is read, never written
	grep "^crontab -l$" calls &&
	! grep "^crontab /" calls
'

test_done
