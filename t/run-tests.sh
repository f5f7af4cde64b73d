#!/bin/sh
# Run the test scripts and sum up.
#
#	sh t/run-tests.sh [SCRIPT...]	(from anywhere; "make test" does this)
#
# Runs every t/t[0-9]*.sh (or the named scripts), $GP_TEST_JOBS at a time
# (default 2), each under a time limit of $GP_TEST_TIMEOUT seconds (default
# 600). Each script's TAP output lands in t/results/<script>.out. A script
# that exits non-zero without a failing test (a crash, a "Bail out!", a
# timeout) counts as one failed test. Prints one line per script, then the
# failing scripts and test titles, and last exactly one line:
#
#	N passed, N failed
#
# counting individual tests (skipped tests and known breakages count in
# neither). Exits non-zero if anything failed.

cd "$(dirname "$0")" || exit 1
GP_TEST_JOBS=${GP_TEST_JOBS:-2}
GP_TEST_TIMEOUT=${GP_TEST_TIMEOUT:-600}
export GP_TEST_TIMEOUT

# count FILE: prints "passed failed" from a script's TAP output.
count () {
	awk '
		/^ok [0-9]+ # skip/ { next }
		/^ok [0-9]+/ { if ($0 !~ /# TODO/) p++; next }
		/^not ok [0-9]+/ { if ($0 !~ /# TODO known breakage$/) f++; next }
		END { printf "%d %d\n", p, f }
	' "$1"
}

# --one SCRIPT: run a single script (used by the parallel driver below).
if test "$1" = --one
then
	script=$2
	name=${script%.sh}
	# a private file, renamed when done, so that concurrent runs of the
	# suite do not write into each other's output
	out=results/$name.out.$$
	start=$(date +%s)
	if command -v timeout >/dev/null 2>&1
	then
		timeout -k 10 "$GP_TEST_TIMEOUT" ${GP_TEST_SHELL:-sh} "./$script" >"$out" 2>&1
	else
		${GP_TEST_SHELL:-sh} "./$script" >"$out" 2>&1
	fi
	status=$?
	secs=$(( $(date +%s) - start ))
	set -- $(count "$out")
	mv -f "$out" "results/$name.out"
	echo "$status" >"results/$name.exit"
	echo "$script $1 $2 $status" >>"results/.summary.$GP_RUN_ID"
	note=
	if test "$status" = 124
	then
		note=" (timed out after ${GP_TEST_TIMEOUT}s)"
	elif test "$status" != 0 && test "$2" = 0
	then
		note=" (exited with status $status)"
	fi
	if test "$status" = 0 && test "$2" = 0
	then
		printf '%-40s %4d passed (%ds)\n' "$script" "$1" "$secs"
	else
		printf '%-40s %4d passed, %d failed%s (%ds)\n' "$script" "$1" "$2" "$note" "$secs"
	fi
	exit 0
fi

if test $# -gt 0
then
	scripts=
	for s
	do
		scripts="$scripts $(basename "$s")"
	done
else
	scripts=$(ls t[0-9]*.sh 2>/dev/null)
fi

mkdir -p results || exit 1
for script in $scripts
do
	rm -f "results/${script%.sh}.out" "results/${script%.sh}.exit"
done

GP_RUN_ID=$$
export GP_RUN_ID
rm -f "results/.summary.$GP_RUN_ID"
if test -n "$scripts"
then
	printf '%s\n' $scripts |
	xargs -P "$GP_TEST_JOBS" -n 1 ${GP_TEST_SHELL:-sh} ./run-tests.sh --one
fi

passed=0
failed=0
failures=
for script in $scripts
do
	# this run's own record of the script (see --one)
	line=$(grep "^$script " "results/.summary.$GP_RUN_ID" 2>/dev/null | tail -n 1)
	if test -n "$line"
	then
		set -- $line
		p=$2
		f=$3
		status=$4
	else
		p=0
		f=0
		status=missing
	fi
	if test "$status" != 0 && test "$f" = 0
	then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if test "$f" != 0
	then
		failures="$failures $script"
	fi
done
rm -f "results/.summary.$GP_RUN_ID"

if test -n "$failures"
then
	echo
	echo "Failures (output in t/results/):"
	for script in $failures
	do
		name=${script%.sh}
		echo "  $script:"
		grep '^not ok [0-9]' "results/$name.out" 2>/dev/null |
			grep -v '# TODO known breakage$' | sed 's/^/    /'
		grep '^Bail out!' "results/$name.out" 2>/dev/null | sed 's/^/    /'
		status=$(cat "results/$name.exit" 2>/dev/null)
		if test "$status" = 124
		then
			echo "    (timed out)"
		fi
	done
	echo
fi

echo "$passed passed, $failed failed"
test "$failed" = 0
