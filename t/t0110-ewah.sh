#!/bin/sh

test_description='EWAH and plain bitmaps (ewah/)

The self-checks of ewah/ through test-tool ewah: hand-computed encodings,
runs longer than one run-length word holds, empty, all-ones and
alternating bitmaps, thousands of random bitmaps with every EWAH
operation cross-checked against plain-bitmap operations, and corrupt
serializations refused with a precise message.

Then every EWAH of .bitmap files that stock git wrote (git repack -adb),
SHA-1 and SHA-256: the four type bitmaps are disjoint and cover every
object of the pack (git show-index counts them) with the types git
verify-pack reports, position by position; each commit bitmap, once its
XOR chain is resolved, lists what git rev-list --objects lists; and
rebuilding any of them with ewah/ gives back the same bytes.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

test_expect_success 'self-checks' '
	test-tool ewah selftest >out &&
	grep "^ok [0-9]* checks$" out
'

for seed in 1 7 42 1234567
do
	test_expect_success "random EWAH and plain-bitmap operations agree (seed $seed)" '
		test-tool ewah random $seed 3000 >out &&
		grep "^ok [0-9]* checks$" out
	'
done

test_expect_success 'encodings of hand-computed bitmaps' '
	test-tool ewah encode >actual &&
	echo "00000000 00000001 0000000000000000 00000000" >expect &&
	test_cmp expect actual &&

	test-tool ewah encode 0 1 2 >actual &&
	echo "00000003 00000002 0000000200000000 0000000000000007 00000000" >expect &&
	test_cmp expect actual &&

	# one zero word as a run, then a literal
	test-tool ewah encode 64 >actual &&
	echo "00000041 00000002 0000000200000002 0000000000000001 00000000" >expect &&
	test_cmp expect actual &&

	# a full word is a run of ones, not a literal
	test-tool ewah encode $(test_seq 0 63) >actual &&
	echo "00000040 00000001 0000000000000003 00000000" >expect &&
	test_cmp expect actual &&

	# two words of ones, a run of one zero word, a literal
	test-tool ewah encode $(test_seq 0 127) 200 >actual &&
	echo "000000c9 00000003 0000000000000005 0000000200000002 0000000000000100 00000001" >expect &&
	test_cmp expect actual
'

test_expect_success 'runs and literal counts split across run-length words' '
	# Limits of 3 run words and 2 literals an RLW (the format allows
	# 2^32-1 and 2^31-1) exercise the same code on small bitmaps.
	test-tool ewah encode --limits=3,2 0 65 130 195 260 961 >actual &&
	echo "000003c2 0000000d 0000000400000000 0000000000000001 0000000000000002 0000000400000000 0000000000000004 0000000000000008 0000000200000000 0000000000000010 0000000000000006 0000000000000006 0000000000000006 0000000200000002 0000000000000002 0000000b" >expect &&
	test_cmp expect actual
'

test_expect_success 'bits must come in increasing order' '
	test_must_fail test-tool ewah encode 5 3 2>err &&
	grep "ewah_set(3): invalid argument" err
'

test_expect_success 'read a serialized EWAH' '
	test-tool ewah read-hex "00000100 00000003" \
		"0000000200000000 0000000000000005 0000000000000006" \
		"00000002" ffff >actual &&
	test_write_lines "bit-size 256" "words 3" "popcount 2" "consumed 36" 0 2 >expect &&
	test_cmp expect actual
'

# expect_corrupt MESSAGE HEX...: reading HEX fails with MESSAGE.
expect_corrupt () {
	gp_ec_msg_=$1
	shift
	test_must_fail test-tool ewah read-hex "$@" >out 2>err &&
	test_must_be_empty out &&
	echo "error: $gp_ec_msg_" >expect &&
	test_cmp expect err
}

test_expect_success 'corrupt serializations are refused' '
	expect_corrupt "truncated EWAH header" 00000000 00000001 &&
	expect_corrupt "EWAH word count exceeds the buffer" \
		00000000 ffffffff 00000000 &&
	expect_corrupt "EWAH has no run-length word" 00000000 00000000 00000000 &&
	expect_corrupt "EWAH last run-length word position out of range" \
		00000000 00000001 0000000000000000 00000001 &&
	expect_corrupt "EWAH literal word count exceeds the words left" \
		00000040 00000002 fffffffe00000000 0000000000000001 00000000 &&
	expect_corrupt "EWAH words describe more bits than its bit size" \
		00000040 00000001 00000001fffffffe 00000000 &&
	expect_corrupt "EWAH last run-length word position is not the last run-length word" \
		00000040 00000003 0000000000000000 0000000200000000 0000000000000001 00000000 &&
	expect_corrupt "EWAH has bits set past its bit size" \
		00000003 00000002 0000000200000000 0000000000000008 00000000
'

# put_be32 FILE OFFSET VALUE: overwrite 4 bytes, big-endian.
put_be32 () {
	corrupt_byte "$1" "$2" $(( ($3 >> 24) & 255 )) &&
	corrupt_byte "$1" $(($2 + 1)) $(( ($3 >> 16) & 255 )) &&
	corrupt_byte "$1" $(($2 + 2)) $(( ($3 >> 8) & 255 )) &&
	corrupt_byte "$1" $(($2 + 3)) $(( $3 & 255 ))
}

# get_be32 FILE OFFSET
get_be32 () {
	od -An -tu1 -j "$2" -N4 "$1" |
	awk "{ print ((\$1 * 256 + \$2) * 256 + \$3) * 256 + \$4 }"
}

for algo in $test_hash_algos
do
	test_expect_success "setup: a repository with a bitmap written by git ($algo)" '
		git init -q --object-format=$algo repo-$algo &&
		(
			cd repo-$algo &&
			for i in $(test_seq 1 120)
			do
				mkdir -p dir$((i % 5)) &&
				echo "line $i" >dir$((i % 5))/file$((i % 7)) &&
				echo "$i" >top &&
				git add -A &&
				test_tick &&
				git commit -q -m "commit $i" || return 1
				if test $((i % 25)) = 0
				then
					git tag -a -m "tag $i" v$i || return 1
				fi
			done &&
			git repack -adbq
		) &&
		ls "$(pwd)"/repo-$algo/.git/objects/pack/pack-*.bitmap >bitmap-$algo &&
		test_line_count = 1 bitmap-$algo
	'

	test_expect_success "type bitmaps cover the pack ($algo)" '
		bitmap=$(cat bitmap-$algo) &&
		idx=${bitmap%.bitmap}.idx &&
		test-tool ewah bitmap-file --object-format=$algo "$bitmap" summary >summary &&
		nr=$(git -C repo-$algo show-index <"$idx" | wc -l | tr -d " ") &&
		grep "^objects $nr$" summary &&
		git -C repo-$algo verify-pack -v "$idx" >verify &&
		for type in commit tree blob tag
		do
			n=$(awk -v t=$type "\$2 == t && NF >= 5 { n++ } END { print n + 0 }" verify) &&
			grep "^$type $n$" summary || return 1
		done &&
		# hundreds of objects: runs of more than one word
		test $nr -gt 500
	'

	test_expect_success "each position has the type git reports ($algo)" '
		bitmap=$(cat bitmap-$algo) &&
		test-tool ewah bitmap-file --object-format=$algo "$bitmap" types >actual &&
		git -C repo-$algo verify-pack -v "${bitmap%.bitmap}.idx" |
		awk "NF >= 5 && \$2 ~ /^(commit|tree|blob|tag)\$/ { print \$5, \$2 }" |
		sort -n | awk "{ print NR - 1, \$2 }" >expect &&
		test_cmp expect actual
	'

	test_expect_success "commit bitmaps list what git rev-list lists ($algo)" '
		bitmap=$(cat bitmap-$algo) &&
		idx=${bitmap%.bitmap}.idx &&
		git -C repo-$algo show-index <"$idx" >index &&
		# pack position -> name, idx position -> name
		sort -n index | awk "{ print NR - 1, \$2 }" >by-pack-pos &&
		awk "{ print NR - 1, \$2 }" index >by-idx-pos &&
		test-tool ewah bitmap-file --object-format=$algo "$bitmap" entries >entries &&
		test $(wc -l <entries) -gt 10 &&
		while read idx_pos positions
		do
			commit=$(awk -v p=$idx_pos "\$1 == p { print \$2 }" by-idx-pos) &&
			git -C repo-$algo rev-list --objects --no-object-names $commit |
			sort >expect &&
			for pos in $positions
			do
				echo $pos
			done >bits &&
			awk "NR == FNR { want[\$1] = 1; next } \$1 in want { print \$2 }" \
				bits by-pack-pos | sort >actual &&
			test_cmp expect actual || return 1
		done <entries
	'

	test_expect_success "rebuilding each EWAH gives git's bytes ($algo)" '
		bitmap=$(cat bitmap-$algo) &&
		test-tool ewah bitmap-file --object-format=$algo "$bitmap" reencode >actual &&
		n=$(sed -n "s/^entries //p" summary) &&
		test_write_lines "commit identical" "tree identical" "blob identical" \
			"tag identical" "entries identical $n/$n" >expect &&
		test_cmp expect actual
	'

	test_expect_success "read single EWAHs cut out of the file ($algo)" '
		bitmap=$(cat bitmap-$algo) &&
		mkdir ewahs-$algo &&
		test-tool ewah bitmap-file --object-format=$algo --extract=ewahs-$algo \
			"$bitmap" summary >/dev/null &&
		for type in commit tree blob tag
		do
			test-tool ewah read ewahs-$algo/$type >out &&
			n=$(sed -n "s/^$type //p" summary) &&
			grep "^popcount $n$" out || return 1
		done &&
		test-tool ewah read ewahs-$algo/entry-0 >out &&
		grep "^consumed $(wc -c <ewahs-$algo/entry-0)$" out
	'
done

# Copies of EWAHs git wrote, damaged at named offsets: bit size (0),
# word count (4), the first RLW (8), the last RLW position (size - 4).
test_expect_success 'corruption: sizes, positions and counts' '
	good=ewahs-sha1/blob &&
	words=$(get_be32 $good 4) &&
	bits=$(get_be32 $good 0) &&
	size=$(wc -c <$good) &&

	cp $good bad && put_be32 bad 4 $((words + 1)) &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH word count exceeds the buffer$" err &&

	cp $good bad && truncate_file bad -1 &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH word count exceeds the buffer$" err &&

	cp $good bad && put_be32 bad $((size - 4)) $words &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH last run-length word position out of range$" err &&

	# the first RLW claims every literal there could be
	cp $good bad && corrupt_byte bad 8 0xff &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH literal word count exceeds the words left$" err &&

	# git sets bit size = highest bit + 1: one less leaves it outside
	# (or, at a word boundary, leaves a word outside)
	cp $good bad && put_be32 bad 0 $((bits - 1)) &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep -e "^error: EWAH has bits set past its bit size$" \
		-e "^error: EWAH words describe more bits than its bit size$" err &&

	cp $good bad && put_be32 bad 0 64 &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH words describe more bits than its bit size$" err &&

	# a larger bit size is fine: trailing zero bits
	cp $good ok && put_be32 ok 0 $((bits + 1000)) &&
	test-tool ewah read ok >out &&
	grep "^bit-size $((bits + 1000))$" out
'

test_expect_success 'corruption: the last RLW position' '
	good=ewahs-sha1/entry-0 &&
	words=$(get_be32 $good 4) &&
	size=$(wc -c <$good) &&
	last=$(get_be32 $good $((size - 4))) &&
	test $last -gt 0 &&
	cp $good bad && put_be32 bad $((size - 4)) $((last - 1)) &&
	test_must_fail test-tool ewah read bad 2>err &&
	grep "^error: EWAH last run-length word position is not the last run-length word$" err
'

test_done
