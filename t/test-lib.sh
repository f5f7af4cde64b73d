# gitpack test harness.
#
# A test script sets test_description, sources this file from t/ and then
# declares tests:
#
#	test_description='what this script covers'
#	. ./test-lib.sh
#
#	test_expect_success 'setup' '
#		test_commit one &&
#		git repack -ad
#	'
#	test_expect_success SHA256 'title' '
#		gitpack cat-file -t HEAD >actual &&
#		echo commit >expect &&
#		test_cmp expect actual
#	'
#	test_done
#
# Each script gets a fresh trash directory, t/trash.<script>, which is the
# current directory while tests run and is $HOME. Unless GP_TEST_NO_INIT is
# set, stock git initialises a repository there ("git init -q", with
# --object-format=$GP_TEST_DEFAULT_HASH when that is set). The trash
# directory is removed when every test passed, and kept otherwise or with
# --debug, for post-mortems. Command output goes to t/trash.<script>.log
# (next to the trash directory, so it never shows up in "ls" or "git
# status"), or to the terminal with --verbose.
#
# "git" is always stock git: the oracle. "gitpack" and "test-tool" come from
# this build tree. With GP_TEST_GITPACK=git, "gitpack" runs stock git
# instead, so the oracle comparisons can be checked against git itself;
# tests that only make sense for the real gitpack (exact error messages,
# GP_TEST_* knobs) take the GITPACK_IS_GITPACK prerequisite.
#
# Options (or in $GP_TEST_OPTS):
#	-v, --verbose	show the commands' output
#	-d, --debug	keep the trash directory even when all tests pass
#	-x		trace the test bodies (set -x)
#	-i, --immediate	stop at the first failing test
#
# Environment knobs:
#	GP_TEST_GITPACK=git	  run stock git wherever a test says "gitpack"
#	GP_TEST_OUTPUT_DIR=DIR	  put trash.<script>* there instead of in t/
#	GP_TEST_LONG=1		  enable the EXPENSIVE prerequisite
#	GP_TEST_NO_INIT=1	  do not create a repository in the trash dir
#	GP_TEST_DEFAULT_HASH=sha256  object format of that repository
#	GP_TEST_LEAKS=1		  let LeakSanitizer report leaks (SANITIZE builds)
#	GP_TEST_GIT_NEW=PATH	  a newer stock git (the Git 2.55 that the git-t
#				  harness builds, found by default at
#				  $GIT_T_WORK/src/bin-wrappers/git) for what 2.39
#				  lacks: tests run it as "git_new" and take the
#				  GIT_NEW prerequisite, skipped without it
#
# The API, in brief (details at each function):
#	test_expect_success [PREREQ] TITLE BODY
#	test_expect_failure [PREREQ] TITLE BODY	  known breakage
#	test_done
#	test_must_fail [ok=sigpipe] CMD...	  CMD exits 1..129, not by crash
#	test_might_fail CMD...			  any exit but a crash
#	test_expect_code N CMD...
#	test_cmp EXPECT ACTUAL			  diff -u
#	test_cmp_bin A B			  cmp
#	test_must_be_empty FILE, test_file_not_empty FILE
#	test_path_is_file/_is_dir/_is_missing PATH
#	test_line_count (=|-lt|...) N FILE
#	test_when_finished CMD...		  cleanup after the current test
#	test_tick				  advance the fixed commit dates
#	test_commit [-C DIR] [--no-tag|--annotate] MSG [FILE [CONTENT [TAG]]]
#	test_seq [FIRST] LAST, test_write_lines LINE...
#	test_have_prereq P1,!P2, test_set_prereq P, test_lazy_prereq P SCRIPT
#	corrupt_byte FILE OFFSET [BYTE]		  OFFSET<0 counts from the end
#	truncate_file FILE SIZE			  SIZE as for truncate -s
#	test_oid_hexsz ALGO, test_oid_rawsz ALGO
#	$test_hash_algos			  "sha1 sha256": loop over it
#
# Format tests run under both hashes by looping over $test_hash_algos and
# creating one repository per algorithm:
#
#	for algo in $test_hash_algos
#	do
#		test_expect_success "idx matches git ($algo)" '
#			git init -q --object-format=$algo repo-$algo && ...
#		'
#	done
#
# (The body is eval'd when the test runs, so $algo is expanded then.)
#
# Unlike git's harness, the working directory is restored after every test,
# so a test that forgets its subshell around "cd" cannot derail the next.
#
# The output is TAP: "ok N - title", "not ok N - title", "ok N # skip ...",
# "not ok N - title # TODO known breakage", then "# passed all N test(s)" or
# "# failed M among N test(s)" and the plan "1..N". t/run-tests.sh counts
# these lines.

: "${test_description:?set test_description before sourcing test-lib.sh}"

# --- options -----------------------------------------------------------

gp_verbose_=
gp_debug_=
gp_trace_=
gp_immediate_=
for gp_opt_ in $GP_TEST_OPTS "$@"
do
	case "$gp_opt_" in
	-v|--verbose) gp_verbose_=t ;;
	-d|--debug) gp_debug_=t ;;
	-x|--trace) gp_trace_=t ;;
	-i|--immediate) gp_immediate_=t ;;
	-h|--help)
		printf '%s\n' "$test_description"
		exit 0 ;;
	*)
		echo "test-lib.sh: unknown option '$gp_opt_'" >&2
		exit 1 ;;
	esac
done

# --- where things are --------------------------------------------------

TEST_DIRECTORY=$(pwd)
if ! test -f "$TEST_DIRECTORY/test-lib.sh"
then
	echo "Bail out! run test scripts from t/" >&2
	exit 1
fi
GP_BUILD_DIR=$(cd "$TEST_DIRECTORY/.." && pwd)
gp_name_=$(basename "$0" .sh)
gp_out_=${GP_TEST_OUTPUT_DIR:-$TEST_DIRECTORY}
mkdir -p "$gp_out_" && gp_out_=$(cd "$gp_out_" && pwd) || exit 1
TRASH_DIRECTORY="$gp_out_/trash.$gp_name_"
GP_LOG="$gp_out_/trash.$gp_name_.log"
gp_bin_="$gp_out_/trash.$gp_name_.bin"
gp_lock_="$gp_out_/trash.$gp_name_.lock"
export TEST_DIRECTORY GP_BUILD_DIR TRASH_DIRECTORY

# Two runs of the same script would share the trash directory: the second
# waits for the first (a lock directory holding the owner's pid; a lock
# whose owner is gone is taken over).
gp_lock_tries_=0
while ! mkdir "$gp_lock_" 2>/dev/null
do
	gp_lock_pid_=$(cat "$gp_lock_/pid" 2>/dev/null)
	if test -n "$gp_lock_pid_" && ! kill -0 "$gp_lock_pid_" 2>/dev/null
	then
		rm -rf "$gp_lock_"
		continue
	fi
	gp_lock_tries_=$((gp_lock_tries_ + 1))
	if test $gp_lock_tries_ -gt 600
	then
		echo "Bail out! $gp_lock_ held by pid $gp_lock_pid_ for 10 minutes"
		exit 1
	fi
	sleep 1
done
echo $$ >"$gp_lock_/pid"
trap 'rm -rf "$gp_lock_"' EXIT

# --- environment isolation --------------------------------------------

# Drop every GIT_* variable the caller had (GIT_DIR, GIT_INDEX_FILE,
# GIT_CONFIG_PARAMETERS, GIT_TRACE, ...), then set the few we want.
# GIT_T_WORK only tells where the git-t harness keeps its newer git.
gp_git_t_work_=${GIT_T_WORK-}
for gp_var_ in $(env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\)=.*/\1/p')
do
	unset "$gp_var_"
done
unset gp_var_ EMAIL VISUAL XDG_CONFIG_HOME XDG_CACHE_HOME CDPATH

LC_ALL=C
LANG=C
TZ=UTC
PAGER=cat
EDITOR=:
HOME="$TRASH_DIRECTORY"
GIT_CONFIG_NOSYSTEM=1
GIT_PAGER=cat
GIT_EDITOR=:
GIT_MERGE_AUTOEDIT=no
GIT_AUTHOR_NAME='A U Thor'
GIT_AUTHOR_EMAIL='author@example.com'
GIT_COMMITTER_NAME='C O Mitter'
GIT_COMMITTER_EMAIL='committer@example.com'
# Repository discovery must never climb out of t/ into the gitpack
# checkout itself (tests that run "outside a repository").
GIT_CEILING_DIRECTORIES="$TEST_DIRECTORY"
# Stock git skips fsync (tests only; speed under a loaded disk).
GIT_TEST_FSYNC=0
export GIT_TEST_FSYNC
export LC_ALL LANG TZ PAGER EDITOR HOME GIT_CONFIG_NOSYSTEM GIT_PAGER \
	GIT_EDITOR GIT_MERGE_AUTOEDIT GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CEILING_DIRECTORIES

# Sanitizer builds: a sanitizer report must look like a crash (SIGABRT,
# exit 134) so that test_must_fail rejects it, instead of the default
# exit 1 that would pass for an ordinary failure. Leak reports are off
# unless asked for: a command that dies leaks by design.
if test -z "$GP_TEST_LEAKS"
then
	gp_leaks_=0
else
	gp_leaks_=1
fi
ASAN_OPTIONS="abort_on_error=1:detect_leaks=$gp_leaks_:disable_coredump=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="abort_on_error=1:print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS

# Fixed dates, advanced by test_tick.
gp_tick_=1700000000
GIT_AUTHOR_DATE="$gp_tick_ +0000"
GIT_COMMITTER_DATE="$gp_tick_ +0000"
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE

# --- the binaries -------------------------------------------------------

chmod -R u+w "$TRASH_DIRECTORY" "$gp_bin_" 2>/dev/null
rm -rf "$TRASH_DIRECTORY" "$gp_bin_" "$GP_LOG"
mkdir -p "$gp_bin_" || exit 1

if test "$GP_TEST_GITPACK" = git
then
	printf '#!/bin/sh\nexec git "$@"\n' >"$gp_bin_/gitpack" &&
	chmod +x "$gp_bin_/gitpack" || exit 1
else
	if ! test -x "$GP_BUILD_DIR/gitpack"
	then
		echo "Bail out! $GP_BUILD_DIR/gitpack is not built (run make)"
		exit 1
	fi
	ln -s "$GP_BUILD_DIR/gitpack" "$gp_bin_/gitpack" || exit 1
fi
if test -x "$GP_BUILD_DIR/t/helper/test-tool"
then
	ln -s "$GP_BUILD_DIR/t/helper/test-tool" "$gp_bin_/test-tool" || exit 1
fi
PATH="$gp_bin_:$PATH"
export PATH

# --- counters and output -----------------------------------------------

gp_count_=0
gp_passed_=0
gp_failed_=0
gp_broken_=0
gp_fixed_=0
gp_skipped_=0
gp_failed_titles_=
gp_done_=

gp_say_ () {
	printf '%s\n' "$*"
}

gp_exit_trap_ () {
	gp_code_=$?
	rm -rf "$gp_lock_"
	if test -z "$gp_done_"
	then
		gp_say_ "Bail out! $gp_name_: exited with code $gp_code_ before test_done"
		exit 1
	fi
}
trap gp_exit_trap_ EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- prerequisites -----------------------------------------------------

gp_prereqs_=' '
gp_lazy_prereqs_=' '

# test_set_prereq NAME: declare prerequisite NAME satisfied.
test_set_prereq () {
	case "$gp_prereqs_" in
	*" $1 "*) ;;
	*) gp_prereqs_="$gp_prereqs_$1 " ;;
	esac
}

# test_lazy_prereq NAME SCRIPT: NAME holds if SCRIPT succeeds; SCRIPT runs
# (in a subshell, in a scratch directory) the first time NAME is asked for.
test_lazy_prereq () {
	gp_lazy_prereqs_="$gp_lazy_prereqs_$1 "
	eval "gp_lazy_script_$1=\$2"
}

gp_have_one_prereq_ () {
	case "$gp_prereqs_" in
	*" $1 "*) return 0 ;;
	esac
	case "$gp_lazy_prereqs_" in
	*" $1 "*) ;;
	*) return 1 ;;
	esac
	# Evaluate once, remember the answer either way.
	gp_lazy_prereqs_=$(printf '%s' "$gp_lazy_prereqs_" | sed "s/ $1 / /")
	eval "gp_lazy_body_=\$gp_lazy_script_$1"
	mkdir -p "$TRASH_DIRECTORY/.prereq-$1" &&
	if (cd "$TRASH_DIRECTORY/.prereq-$1" && eval "$gp_lazy_body_") >/dev/null 2>&1
	then
		test_set_prereq "$1"
	fi
	rm -rf "$TRASH_DIRECTORY/.prereq-$1"
	case "$gp_prereqs_" in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# test_have_prereq LIST: LIST is comma-separated; "!NAME" means NAME must
# not hold. Sets gp_missing_prereq_ to the first unmet one.
test_have_prereq () {
	gp_missing_prereq_=
	gp_save_ifs_=$IFS
	IFS=,
	set -- $*
	IFS=$gp_save_ifs_
	for gp_p_
	do
		case "$gp_p_" in
		!*)
			if gp_have_one_prereq_ "${gp_p_#!}"
			then
				gp_missing_prereq_=$gp_p_
				return 1
			fi ;;
		*)
			if ! gp_have_one_prereq_ "$gp_p_"
			then
				gp_missing_prereq_=$gp_p_
				return 1
			fi ;;
		esac
	done
	return 0
}

# Built-in prerequisites.
test_set_prereq SHA256		# stock git 2.39 does SHA-256 repositories
if test -z "$GP_TEST_GIT_NEW" && test -n "$gp_git_t_work_"
then
	GP_TEST_GIT_NEW=$gp_git_t_work_/src/bin-wrappers/git
fi
if test -n "$GP_TEST_GIT_NEW" && test -x "$GP_TEST_GIT_NEW"
then
	test_set_prereq GIT_NEW
fi
# git_new ARGS...: the newer stock git of GP_TEST_GIT_NEW (GIT_NEW only).
git_new () {
	"$GP_TEST_GIT_NEW" "$@"
}
test_hash_algos='sha1 sha256'
if test "${GP_TEST_LONG:-0}" != 0
then
	test_set_prereq EXPENSIVE
fi
if test "$GP_TEST_GITPACK" = git
then
	test_set_prereq GITPACK_IS_GIT
else
	test_set_prereq GITPACK_IS_GITPACK
fi
if test "$(id -u)" != 0
then
	test_set_prereq NOT_ROOT
fi
test_lazy_prereq TEST_TOOL 'command -v test-tool'

# --- running tests -------------------------------------------------------

gp_cleanup_n_=0

# test_when_finished CMD...: run CMD (eval'd) after the current test body,
# whether it passed or not; cleanups run last-registered first. A failing
# cleanup fails the test. Call it from the test body itself, not from a
# subshell.
test_when_finished () {
	if test -z "$gp_in_test_"
	then
		echo "test_when_finished outside a test" >&2
		return 1
	fi
	gp_cleanup_n_=$((gp_cleanup_n_ + 1))
	eval "gp_cleanup_$gp_cleanup_n_=\$*"
}

gp_run_cleanups_ () {
	gp_cleanup_ok_=0
	while test "$gp_cleanup_n_" -gt 0
	do
		eval "gp_cleanup_cmd_=\$gp_cleanup_$gp_cleanup_n_"
		unset "gp_cleanup_$gp_cleanup_n_"
		gp_cleanup_n_=$((gp_cleanup_n_ - 1))
		eval "$gp_cleanup_cmd_" || gp_cleanup_ok_=1
	done
	return $gp_cleanup_ok_
}

# A function of its own, so that "return 1" in a body (say, to leave a
# loop) ends the body and not the harness's bookkeeping.
gp_eval_inner_ () {
	eval "$1"
}

gp_eval_body_ () {
	if test -n "$gp_trace_"
	then
		set -x
	fi
	gp_eval_inner_ "$1"
	gp_eval_ret_=$?
	{ set +x; } 2>/dev/null
	if test $gp_eval_ret_ = 0
	then
		gp_run_cleanups_
		gp_eval_ret_=$?
	else
		gp_run_cleanups_
	fi
	return $gp_eval_ret_
}

# Runs one body; returns its status. Output to the log, or the terminal.
gp_run_body_ () {
	gp_in_test_=t
	gp_pwd_=$(pwd)
	if test -n "$gp_verbose_"
	then
		gp_eval_body_ "$1" </dev/null
	else
		gp_eval_body_ "$1" </dev/null >>"$GP_LOG" 2>&1
	fi
	gp_body_ret_=$?
	cd "$gp_pwd_" || cd "$TRASH_DIRECTORY"
	gp_in_test_=
	return $gp_body_ret_
}

gp_show_failure_ () {
	# $1 = body, $2 = log size before the test
	printf '%s\n' "$1" | sed 's/^/#	/'
	if test -z "$gp_verbose_" && test -s "$GP_LOG"
	then
		echo "# --- output (last 40 lines) ---"
		tail -c +$(($2 + 1)) "$GP_LOG" | tail -n 40 | sed 's/^/# /'
	fi
}

gp_test_ () {
	gp_mode_=$1
	shift
	case $# in
	2) gp_prereq_= ;;
	3) gp_prereq_=$1; shift ;;
	*)
		echo "Bail out! $gp_name_: test_expect_$gp_mode_ needs [PREREQ] TITLE BODY"
		gp_done_=t
		exit 1 ;;
	esac
	gp_title_=$1
	gp_body_=$2
	gp_count_=$((gp_count_ + 1))

	if test -n "$gp_prereq_" && ! test_have_prereq "$gp_prereq_"
	then
		gp_skipped_=$((gp_skipped_ + 1))
		gp_say_ "ok $gp_count_ # skip $gp_title_ (missing $gp_missing_prereq_)"
		return 0
	fi

	echo "=== $gp_count_ - $gp_title_" >>"$GP_LOG"
	gp_logsize_=$(wc -c <"$GP_LOG")
	if test -n "$gp_verbose_"
	then
		gp_say_ "expecting $gp_mode_: $gp_title_"
	fi
	gp_run_body_ "$gp_body_"
	gp_ret_=$?

	case "$gp_mode_,$gp_ret_" in
	success,0)
		gp_passed_=$((gp_passed_ + 1))
		gp_say_ "ok $gp_count_ - $gp_title_" ;;
	success,*)
		gp_failed_=$((gp_failed_ + 1))
		gp_failed_titles_="$gp_failed_titles_ $gp_count_"
		gp_say_ "not ok $gp_count_ - $gp_title_"
		gp_show_failure_ "$gp_body_" "$gp_logsize_"
		if test -n "$gp_immediate_"
		then
			gp_say_ "# stopping at the first failure (--immediate)"
			gp_debug_=t
			test_done
		fi ;;
	failure,0)
		gp_fixed_=$((gp_fixed_ + 1))
		gp_say_ "ok $gp_count_ - $gp_title_ # TODO known breakage vanished" ;;
	failure,*)
		gp_broken_=$((gp_broken_ + 1))
		gp_say_ "not ok $gp_count_ - $gp_title_ # TODO known breakage" ;;
	esac
	return 0
}

# test_expect_success [PREREQ] TITLE BODY: BODY is eval'd in the current
# shell (output captured); the test passes if it returns 0.
test_expect_success () {
	gp_test_ success "$@"
}

# test_expect_failure [PREREQ] TITLE BODY: a known breakage; its failure
# does not fail the script, its success is reported as "vanished".
test_expect_failure () {
	gp_test_ failure "$@"
}

# test_done: print the summary and the plan, clean up, exit 0 if no test
# failed. If the script set skip_all="reason" and ran no test, the whole
# script is reported as skipped.
test_done () {
	gp_done_=t
	if test "$gp_count_" = 0 && test -n "$skip_all"
	then
		gp_say_ "1..0 # SKIP $skip_all"
		gp_remove_trash_
		exit 0
	fi
	if test "$gp_fixed_" -gt 0
	then
		gp_say_ "# $gp_fixed_ known breakage(s) vanished; please update test(s)"
	fi
	if test "$gp_broken_" -gt 0
	then
		gp_say_ "# still have $gp_broken_ known breakage(s)"
	fi
	if test "$gp_failed_" = 0
	then
		gp_say_ "# passed all $gp_count_ test(s)"
		gp_say_ "1..$gp_count_"
		if test -z "$gp_debug_"
		then
			gp_remove_trash_
		fi
		exit 0
	fi
	gp_say_ "# failed $gp_failed_ among $gp_count_ test(s)"
	gp_say_ "# failing test numbers:$gp_failed_titles_"
	gp_say_ "# trash directory kept: $TRASH_DIRECTORY (log: $GP_LOG)"
	gp_say_ "1..$gp_count_"
	exit 1
}

gp_remove_trash_ () {
	cd "$TEST_DIRECTORY" || return
	chmod -R u+w "$TRASH_DIRECTORY" 2>/dev/null
	rm -rf "$TRASH_DIRECTORY" "$gp_bin_" "$GP_LOG"
}

# --- helpers for test bodies ---------------------------------------------

# test_tick: advance GIT_AUTHOR_DATE and GIT_COMMITTER_DATE by a minute.
# (Called in a subshell, the new date stays in that subshell.)
test_tick () {
	gp_tick_=$((gp_tick_ + 60))
	GIT_AUTHOR_DATE="$gp_tick_ +0000"
	GIT_COMMITTER_DATE="$gp_tick_ +0000"
	export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}

# test_must_fail [ok=sigpipe] CMD...: CMD must exit with 1..129. Success,
# "command not found" (126, 127) and crashes (130 and up: signals,
# sanitizer aborts) all fail. ok=sigpipe also accepts death by SIGPIPE.
test_must_fail () {
	gp_mf_ok_=
	case "$1" in
	ok=*) gp_mf_ok_=${1#ok=}; shift ;;
	esac
	"$@"
	gp_mf_ret_=$?
	if test $gp_mf_ret_ = 0
	then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif test $gp_mf_ret_ = 126 || test $gp_mf_ret_ = 127
	then
		echo "test_must_fail: command not found or not executable: $*" >&2
		return 1
	elif test $gp_mf_ret_ = 141 && test "$gp_mf_ok_" = sigpipe
	then
		return 0
	elif test $gp_mf_ret_ -ge 130
	then
		echo "test_must_fail: command crashed (exit $gp_mf_ret_): $*" >&2
		return 1
	fi
	return 0
}

# test_might_fail CMD...: any outcome but a crash or a missing command.
test_might_fail () {
	"$@"
	gp_mf_ret_=$?
	if test $gp_mf_ret_ -ge 126
	then
		echo "test_might_fail: command crashed or missing (exit $gp_mf_ret_): $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N CMD...: CMD must exit with exactly N.
test_expect_code () {
	gp_want_=$1
	shift
	"$@"
	gp_mf_ret_=$?
	if test $gp_mf_ret_ = "$gp_want_"
	then
		return 0
	fi
	echo "test_expect_code: want exit $gp_want_, got $gp_mf_ret_: $*" >&2
	return 1
}

# test_cmp EXPECT ACTUAL: the files are identical (diff -u shown if not).
test_cmp () {
	diff -u "$@"
}

# test_cmp_bin A B: byte comparison, for binary files.
test_cmp_bin () {
	cmp "$@"
}

test_must_be_empty () {
	if ! test -f "$1"
	then
		echo "test_must_be_empty: '$1' does not exist" >&2
		return 1
	fi
	if test -s "$1"
	then
		echo "test_must_be_empty: '$1' is not empty:" >&2
		cat "$1" >&2
		return 1
	fi
}

test_file_not_empty () {
	if ! test -s "$1"
	then
		echo "test_file_not_empty: '$1' is missing or empty" >&2
		return 1
	fi
}

test_path_is_file () {
	if ! test -f "$1"
	then
		echo "test_path_is_file: '$1' is not a file" >&2
		return 1
	fi
}

test_path_is_dir () {
	if ! test -d "$1"
	then
		echo "test_path_is_dir: '$1' is not a directory" >&2
		return 1
	fi
}

test_path_is_missing () {
	if test -e "$1" || test -L "$1"
	then
		echo "test_path_is_missing: '$1' exists:" >&2
		ls -ld "$1" >&2
		return 1
	fi
}

# test_line_count OP N FILE: e.g. test_line_count = 3 out.
test_line_count () {
	if test $# != 3
	then
		echo "test_line_count: usage: OP N FILE" >&2
		return 1
	fi
	gp_lines_=$(wc -l <"$3") || return 1
	if ! test "$gp_lines_" "$1" "$2"
	then
		echo "test_line_count: $3 has $gp_lines_ lines, want $1 $2" >&2
		return 1
	fi
}

# test_seq [FIRST] LAST: the integers FIRST (default 1) to LAST, one a line.
test_seq () {
	case $# in
	1) gp_seq_i_=1; gp_seq_n_=$1 ;;
	2) gp_seq_i_=$1; gp_seq_n_=$2 ;;
	*) echo "test_seq: usage: [FIRST] LAST" >&2; return 1 ;;
	esac
	while test "$gp_seq_i_" -le "$gp_seq_n_"
	do
		echo "$gp_seq_i_"
		gp_seq_i_=$((gp_seq_i_ + 1))
	done
}

# test_write_lines LINE...: each argument on its own line.
test_write_lines () {
	printf '%s\n' "$@"
}

# test_commit [-C DIR] [--no-tag|--annotate] MSG [FILE [CONTENT [TAG]]]:
# with stock git, write CONTENT (default MSG) to FILE (default MSG.t), add,
# test_tick, commit with message MSG, and tag it TAG (default MSG;
# lightweight unless --annotate).
test_commit () {
	gp_tc_dir_=.
	gp_tc_tag_=light
	while :
	do
		case "$1" in
		-C) gp_tc_dir_=$2; shift 2 ;;
		--no-tag) gp_tc_tag_=none; shift ;;
		--annotate) gp_tc_tag_=annotate; shift ;;
		*) break ;;
		esac
	done
	gp_tc_file_=${2:-$1.t}
	printf '%s\n' "${3-$1}" >"$gp_tc_dir_/$gp_tc_file_" &&
	git -C "$gp_tc_dir_" add -- "$gp_tc_file_" &&
	test_tick &&
	git -C "$gp_tc_dir_" commit -q -m "$1" &&
	case "$gp_tc_tag_" in
	light) git -C "$gp_tc_dir_" tag "${4:-$1}" ;;
	annotate) git -C "$gp_tc_dir_" tag -a -m "$1" "${4:-$1}" ;;
	esac
}

# corrupt_byte FILE OFFSET [BYTE]: overwrite the byte at OFFSET in place
# (a negative OFFSET counts from the end: -1 is the last byte). BYTE is a
# number (65, 0x41, 0101); by default the old byte with every bit flipped,
# so the file always changes. Makes FILE writable first (packs are 0444).
corrupt_byte () {
	gp_cb_size_=$(wc -c <"$1") || return 1
	gp_cb_ofs_=$2
	case "$gp_cb_ofs_" in
	-*) gp_cb_ofs_=$((gp_cb_size_ + gp_cb_ofs_)) ;;
	esac
	if test "$gp_cb_ofs_" -lt 0 || test "$gp_cb_ofs_" -ge "$gp_cb_size_"
	then
		echo "corrupt_byte: offset $2 outside $1 ($gp_cb_size_ bytes)" >&2
		return 1
	fi
	if test $# -ge 3
	then
		gp_cb_val_=$(($3))
	else
		gp_cb_old_=$(od -An -tu1 -j "$gp_cb_ofs_" -N1 "$1" | tr -d ' \n')
		gp_cb_val_=$((gp_cb_old_ ^ 255))
	fi
	chmod u+w "$1" &&
	printf "\\$(printf %03o "$gp_cb_val_")" |
	dd of="$1" bs=1 seek="$gp_cb_ofs_" count=1 conv=notrunc 2>/dev/null
}

# truncate_file FILE SIZE: cut (or extend) FILE to SIZE bytes; "-N" removes
# the last N bytes.
truncate_file () {
	chmod u+w "$1" &&
	truncate -s "$2" "$1"
}

# test_oid_hexsz ALGO / test_oid_rawsz ALGO: object name sizes.
test_oid_hexsz () {
	case "$1" in
	sha1) echo 40 ;;
	sha256) echo 64 ;;
	*) echo "test_oid_hexsz: unknown algorithm '$1'" >&2; return 1 ;;
	esac
}

test_oid_rawsz () {
	case "$1" in
	sha1) echo 20 ;;
	sha256) echo 32 ;;
	*) echo "test_oid_rawsz: unknown algorithm '$1'" >&2; return 1 ;;
	esac
}

# --- the trash directory ---------------------------------------------------

mkdir -p "$TRASH_DIRECTORY" &&
: >"$GP_LOG" &&
cd "$TRASH_DIRECTORY" || {
	echo "Bail out! cannot create $TRASH_DIRECTORY"
	exit 1
}

if test -z "$GP_TEST_NO_INIT"
then
	if ! git init -q ${GP_TEST_DEFAULT_HASH:+--object-format=$GP_TEST_DEFAULT_HASH} >>"$GP_LOG" 2>&1
	then
		echo "Bail out! git init failed in $TRASH_DIRECTORY"
		exit 1
	fi
fi

if test -n "$gp_verbose_"
then
	gp_say_ "# $gp_name_: $test_description"
fi
