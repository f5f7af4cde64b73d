#!/bin/sh
#
# run.sh [SECONDS [TARGET...]]: run the built libFuzzer targets
# (t/fuzz/fuzz-<target>, from "make fuzz"; this script builds nothing)
# for SECONDS each (default 60), one after another, on a scratch copy of
# t/fuzz/corpus/<target>/ plus the crash regressions, so that the
# committed corpus never grows. "make fuzz-run FUZZ_SECONDS=N" calls it.
#
# A crash, leak, timeout or sanitizer report fails the run; the input
# that did it is copied to t/fuzz/crashes/<target>/ (not committed: turn
# it into t/fuzz/regressions/<target>/<name> once the bug is understood)
# and the libFuzzer log is shown. Environment:
#	FUZZ_ARGS	extra libFuzzer flags (e.g. -max_len=65536)
#	FUZZ_KEEP=1	keep the scratch directory and its grown corpus
#	GP_FUZZ_LAX_INFLATE=1	fuzz-pack-entry: tolerate the known
#			libdeflate/zlib differences (see that file)

here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-60}
test $# -gt 0 && shift
targets=$*
if test -z "$targets"
then
	for bin in "$here"/fuzz-*
	do
		case "$bin" in
		*.c|*.h) continue ;;
		esac
		test -x "$bin" && targets="$targets ${bin##*/fuzz-}"
	done
fi
if test -z "$targets"
then
	echo "run.sh: no fuzz targets built in $here (run make fuzz)" >&2
	exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gp-fuzz.XXXXXX") || exit 1
test -n "$FUZZ_KEEP" || trap 'rm -rf "$scratch"' EXIT

failed=
for t in $targets
do
	bin=$here/fuzz-$t
	if ! test -x "$bin"
	then
		echo "run.sh: $bin is not built" >&2
		failed="$failed $t"
		continue
	fi
	mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
	for dir in "$here/corpus/$t" "$here/regressions/$t"
	do
		test -d "$dir" && cp "$dir"/* "$scratch/$t/corpus/" 2>/dev/null
	done
	echo "fuzz-$t: ${seconds}s"
	# stdin from /dev/null: a fuzzed config include of /dev/stdin
	# must not wait for a terminal.
	# In-process, so a single job: -jobs=N would fork workers that log
	# to ./fuzz-N.log.
	if "$bin" -max_total_time="$seconds" \
		-timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$scratch/$t/artifacts/" $FUZZ_ARGS \
		"$scratch/$t/corpus" </dev/null >"$scratch/$t/log" 2>&1
	then
		grep -aE '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)' \
			"$scratch/$t/log" | sed 's/^/	/'
	else
		echo "fuzz-$t: FAILED" >&2
		tail -n 60 "$scratch/$t/log" >&2
		mkdir -p "$here/crashes/$t"
		cp "$scratch/$t/log" "$here/crashes/$t/libfuzzer.log"
		for a in "$scratch/$t/artifacts"/*
		do
			test -f "$a" && cp "$a" "$here/crashes/$t/"
		done
		echo "fuzz-$t: inputs and logs saved in $here/crashes/$t/" >&2
		failed="$failed $t"
	fi
done

if test -n "$failed"
then
	echo "run.sh: failed:$failed" >&2
	exit 1
fi
echo "run.sh: all targets ran ${seconds}s without a crash"
