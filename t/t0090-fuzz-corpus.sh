#!/bin/sh

test_description='fuzz corpora and crash regressions replay

Every fuzz target t/fuzz/fuzz-<target>.c is linked with t/fuzz/replay.c
(a main() that feeds files to LLVMFuzzerTestOneInput, no libFuzzer)
against ../libgitpack.a, then run on its seed corpus t/fuzz/corpus/<target>/
and on each crash regression t/fuzz/regressions/<target>/<name>, one test
per regression. A target aborts when an input crashes the library or
breaks an invariant, so each of these must run clean.

A regression whose name starts with "open-" is a bug found by fuzzing
and not fixed yet: it runs as a known breakage (test_expect_failure).
Whoever fixes it drops the prefix (git mv), so it becomes a guard.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

fuzz_dir=$TEST_DIRECTORY/fuzz
lib=$GP_BUILD_DIR/libgitpack.a

# Link the way the library was compiled: with libdeflate when it uses it
# (asked of the archive itself when nm is there, since the fuzz targets
# compare the libdeflate and zlib paths only then), and with its
# sanitizers, which must be linked in too.
replay_cflags="-std=gnu11 -pthread -g -O1 -I$GP_BUILD_DIR -D_FILE_OFFSET_BITS=64"
replay_libs="-lcrypto -lcrypt -lz -lpthread -lm"
build_flags=
test -f "$GP_BUILD_DIR/.build-flags" && build_flags=$(cat "$GP_BUILD_DIR/.build-flags")
if command -v nm >/dev/null 2>&1 && test -f "$lib"
then
	nm "$lib" 2>/dev/null | grep -q 'U libdeflate_' && have_libdeflate=t
else
	case "$build_flags" in *HAVE_LIBDEFLATE*) have_libdeflate=t ;; esac
fi
if test -n "$have_libdeflate"
then
	replay_cflags="$replay_cflags -DHAVE_LIBDEFLATE"
	replay_libs="-ldeflate $replay_libs"
fi
for flag in $build_flags
do
	case "$flag" in
	-fsanitize=*|-fno-sanitize-recover=*)
		replay_cflags="$replay_cflags $flag" ;;
	esac
done

targets=
for src in "$fuzz_dir"/fuzz-*.c
do
	test -f "$src" || continue
	t=${src##*/fuzz-}
	targets="$targets ${t%.c}"
done

test_expect_success 'libgitpack.a is built' '
	test -f "$lib"
'

# The config target makes a private HOME under $TMPDIR: keep it in the
# trash directory, so that an aborted replay leaves nothing behind.
TMPDIR=$TRASH_DIRECTORY
export TMPDIR

for t in $targets
do
	test_expect_success "build the $t replay driver" '
		${CC:-cc} $replay_cflags -o replay-$t \
			"$fuzz_dir/replay.c" "$fuzz_dir/fuzz-$t.c" "$lib" $replay_libs
	'

	test_expect_success "seed corpus of $t replays cleanly" '
		ls "$fuzz_dir/corpus/$t"/* >inputs-$t &&
		test -s inputs-$t &&
		./replay-$t "$fuzz_dir/corpus/$t"/* </dev/null
	'

	for f in "$fuzz_dir/regressions/$t"/*
	do
		test -f "$f" || continue
		name=${f##*/}
		case "$name" in
		open-*) expect=test_expect_failure ;;
		*) expect=test_expect_success ;;
		esac
		$expect "regression $t/$name" '
			./replay-$t "$fuzz_dir/regressions/$t/'"$name"'" </dev/null
		'
	done
done

test_done
