#!/bin/sh

test_description='delta creation (delta.h: delta_index_create, delta_create)

Deltas made by the encoder, through test-tool delta, for pairs of files:
every delta must give back its target byte for byte (round trips over
empty, equal, edited, unrelated, all-zero, random, larger than 64 KiB and
tree-shaped inputs); stock git must accept it inside a pack (a blob and a
REF_DELTA against it) and read the target back, SHA-1 and SHA-256; the
size limit must refuse exactly the deltas longer than it, and otherwise
change nothing; threads sharing one index must all make the same delta;
and the deltas must be about as small as git makes them.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# round_trip BASE TARGET: the delta of TARGET against BASE applies back to
# TARGET, the apply command agrees, and nothing is longer than storing
# TARGET literally (the header, the bytes, an opcode per 127).
round_trip () {
	test-tool delta create "$1" "$2" delta &&
	test-tool delta apply "$1" delta result &&
	test_cmp_bin "$2" result &&
	gp_rt_len_=$(wc -c <"$2") &&
	test $(wc -c <delta) -le $((gp_rt_len_ + (gp_rt_len_ + 126) / 127 + 20))
}

# stat_of NAME BASE TARGET: one field of "test-tool delta stats".
stat_of () {
	test-tool delta stats "$2" "$3" >stats &&
	sed -n "s/^$1 //p" stats
}

# edit_lines FILE STEP TEXT: FILE with every STEP-th line replaced by TEXT
# and the line number.
edit_lines () {
	awk -v step="$2" -v text="$3" \
		'NR % step == 0 { print text " " NR; next } { print }' "$1"
}

test_expect_success 'setup: inputs' '
	cp "$GP_BUILD_DIR/packfile.c" text &&
	test $(wc -c <text) -gt 20000 &&
	edit_lines text 97 "	/* an edited line */" >text-edited &&
	{ echo "/* a new first line */" && cat text; } >text-head &&
	{ cat text && echo "/* a new last line */"; } >text-tail &&
	: >empty &&
	printf "short" >short &&
	printf "a short target" >short-target &&
	test-tool delta random 1 100000 random1 &&
	test-tool delta random 2 100000 random2 &&
	test-tool delta random 3 300000 big &&
	dd if=/dev/zero of=zeros bs=1024 count=1024 2>/dev/null &&
	cp zeros zeros-edited &&
	printf "edit" | dd of=zeros-edited bs=1 seek=500000 conv=notrunc 2>/dev/null &&
	# the same bytes, shifted by inserting 3 bytes at 1000: copies of
	# the rest cross every 64 KiB boundary of base and target
	{ head -c 1000 big && printf "xyz" && tail -c +1001 big; } >big-shifted &&
	cp big big-edited &&
	for ofs in 65530 65536 131071 200000 299990
	do
		printf "E" | dd of=big-edited bs=1 seek=$ofs conv=notrunc 2>/dev/null ||
		return 1
	done
'

for algo in $test_hash_algos
do
	test_expect_success "setup: two trees that differ in a few entries ($algo)" '
		git init -q --object-format=$algo trees-$algo &&
		(
			cd trees-$algo &&
			for i in $(test_seq 1 300)
			do
				echo "file $i" >file-$i.txt || return 1
			done &&
			git add . &&
			git write-tree >../tree1-$algo.oid &&
			for i in 7 150 299
			do
				echo "changed $i" >file-$i.txt || return 1
			done &&
			rm file-42.txt &&
			echo new >file-new.txt &&
			git add -A . &&
			git write-tree >../tree2-$algo.oid
		) &&
		git -C trees-$algo cat-file tree $(cat tree1-$algo.oid) >tree1-$algo &&
		git -C trees-$algo cat-file tree $(cat tree2-$algo.oid) >tree2-$algo &&
		test $(wc -c <tree1-$algo) -gt 10000
	'
done

test_expect_success 'round trip: empty target' '
	round_trip text empty &&
	# just the header: base size (varint), then 0
	test $(wc -c <delta) = 4
'

test_expect_success 'round trip: target equal to base' '
	round_trip text text &&
	test "$(stat_of inserts text text)" = "0 0" &&
	test $(stat_of copies text text | cut -d" " -f2) = $(wc -c <text) &&
	test $(stat_of delta text text) -le 12
'

test_expect_success 'round trip: small edits in a text file' '
	round_trip text text-edited &&
	round_trip text-edited text
'

test_expect_success 'round trip: insertion at the beginning and at the end' '
	round_trip text text-head &&
	test "$(stat_of inserts text text-head)" = "1 23" &&
	round_trip text text-tail &&
	test "$(stat_of inserts text text-tail)" = "1 22" &&
	round_trip text-head text &&
	round_trip text-tail text
'

test_expect_success 'round trip: unrelated data' '
	round_trip random1 random2 &&
	test "$(stat_of copies random1 random2)" = "0 0" &&
	round_trip text random1 &&
	round_trip random1 text
'

test_expect_success 'round trip: bases and targets shorter than a block, empty base' '
	round_trip short short-target &&
	round_trip short-target short &&
	round_trip short text &&
	round_trip empty text &&
	round_trip empty empty &&
	round_trip text short
'

test_expect_success 'round trip: all-zero 1 MiB buffers' '
	round_trip zeros zeros &&
	# 16 copies of 64 KiB, from one slot: the run of zero blocks
	test "$(stat_of copies zeros zeros)" = "16 1048576" &&
	test $(stat_of delta zeros zeros) -le 48 &&
	test $(stat_of index zeros zeros) -lt 100000 &&
	round_trip zeros zeros-edited &&
	test "$(stat_of inserts zeros zeros-edited)" = "1 4" &&
	round_trip zeros-edited zeros &&
	round_trip zeros random1 &&
	round_trip random1 zeros
'

test_expect_success 'round trip: random binary, edited' '
	round_trip big big-edited &&
	# bytes replaced one for one: the copy resumes after each, even 9
	# bytes before the end (299990); but the 5 bytes between the edits
	# at 65530 and 65536 are cheaper as literals than as a copy
	test "$(stat_of inserts big big-edited)" = "4 10" &&
	test "$(stat_of copies big big-edited)" = "7 299990" &&
	round_trip big-edited big
'

test_expect_success 'round trip: copies longer than 64 KiB, across its boundaries' '
	round_trip big big-shifted &&
	# 3 literal bytes; the 299000 bytes after them need five copies
	test "$(stat_of inserts big big-shifted)" = "1 3" &&
	test "$(stat_of copies big big-shifted)" = "6 300000" &&
	round_trip big-shifted big
'

for algo in $test_hash_algos
do
	test_expect_success "round trip: trees ($algo)" '
		round_trip tree1-$algo tree2-$algo &&
		round_trip tree2-$algo tree1-$algo &&
		# three changed ids, one new entry, one gone: the rest is copied
		test $(stat_of delta tree1-$algo tree2-$algo) -lt 250
	'
done

# A pack of BASE (a blob) and TARGET as a REF_DELTA against it, made by
# our encoder; git must index it and give the target back.
for algo in $test_hash_algos
do
	test_expect_success "git accepts our deltas in a pack ($algo)" '
		git init -q --object-format=$algo repo-$algo &&
		for pair in "text text-edited" "text-edited text" "text text-head" \
			"tree1-$algo tree2-$algo" "big big-shifted" "big big-edited" \
			"zeros zeros-edited" "random1 random2" "text short"
		do
			set -- $pair &&
			oid=$(test-tool delta pack --object-format=$algo $1 $2 pack.pack) &&
			git -C repo-$algo index-pack --stdin <pack.pack >out &&
			git -C repo-$algo cat-file blob $oid >actual &&
			test_cmp_bin $2 actual || return 1
		done &&
		git -C repo-$algo fsck --strict
	'
done

test_expect_success 'git verify-pack sees the REF_DELTA entry' '
	oid=$(test-tool delta pack text text-edited one.pack) &&
	git -C repo-sha1 index-pack -o "$(pwd)/one.idx" "$(pwd)/one.pack" &&
	git -C repo-sha1 verify-pack -v "$(pwd)/one.idx" >verify &&
	test-tool delta create text text-edited delta &&
	# "<oid> blob <delta size> <size in pack> <offset> 1 <base>"
	awk -v oid=$oid "\$1 == oid { print \$3, \$6 }" verify >actual &&
	echo "$(wc -c <delta) 1" >expect &&
	test_cmp expect actual
'

test_expect_success 'the size limit refuses exactly the longer deltas' '
	test-tool delta create text text-edited delta &&
	len=$(wc -c <delta) &&
	test-tool delta create --max=$len text text-edited limited &&
	test_cmp_bin delta limited &&
	test_must_fail test-tool delta create --max=$((len - 1)) text text-edited none 2>err &&
	echo "delta longer than $((len - 1)) bytes" >expect &&
	test_cmp expect err &&
	test_path_is_missing none
'

for pair in "big big-edited" "big big-shifted" "tree1-sha1 tree2-sha1"
do
	test_expect_success "a limit of its own length keeps a close delta ($pair)" '
		set -- $pair &&
		test-tool delta create $1 $2 delta &&
		len=$(wc -c <delta) &&
		test-tool delta create --max=$len $1 $2 limited &&
		test_cmp_bin delta limited
	'
done

test_expect_success 'the size limit stops unrelated targets' '
	test_must_fail test-tool delta create --max=1000 random1 random2 none 2>err &&
	grep "delta longer than 1000 bytes" err &&
	test_must_fail test-tool delta create --max=3 text empty none &&
	test-tool delta create --max=4 text empty delta &&
	test $(wc -c <delta) = 4
'

test_expect_success 'threads sharing an index make the same delta' '
	echo ok >expect &&
	test-tool delta threads text text-edited 8 >actual &&
	test_cmp expect actual &&
	test-tool delta threads big big-shifted 4 >actual &&
	test_cmp expect actual &&
	test-tool delta threads tree1-sha256 tree2-sha256 4 >actual &&
	test_cmp expect actual
'

test_expect_success 'the same inputs give the same delta' '
	test-tool delta create text text-edited one &&
	test-tool delta create text text-edited two &&
	test_cmp_bin one two
'

test_expect_success 'size: a few changed lines cost about their bytes' '
	awk "NR == 100 || NR == 400 || NR == 700 { print \"\\tchanged_line(\" NR \");\"; next } { print }" \
		text >text-3 &&
	grep "^	changed_line(" text-3 >new-lines &&
	test_line_count = 3 new-lines &&
	new=$(wc -c <new-lines) &&
	# three inserts of the new lines, four copies, the header
	len=$(stat_of delta text text-3) &&
	test $len -le $((new + 3 + 4 * 5 + 8))
'

# git_delta_size BASE TARGET: the size of the delta git makes between the
# two (as a blob pair in pack-objects), as "<delta> <base file> <target
# file>": git picks which one to store as the delta.
git_delta_size () {
	rm -rf gd && git init -q gd &&
	gd_a=$(git -C gd hash-object -w "$(pwd)/$1") &&
	gd_b=$(git -C gd hash-object -w "$(pwd)/$2") &&
	printf "%s\n%s\n" $gd_a $gd_b |
		git -C gd pack-objects -q --window=10 --depth=10 pk >/dev/null &&
	(cd gd && git verify-pack -v pk-*.idx) >gd.out &&
	awk -v a=$gd_a -v b=$gd_b -v fa=$1 -v fb=$2 \
		"NF == 7 { print \$3, (\$7 == a ? fa \" \" fb : fb \" \" fa) }" gd.out
}

for pair in "text text-edited" "text text-3" "tree1-sha1 tree2-sha1" \
	"tree1-sha256 tree2-sha256" "big big-edited"
do
	test_expect_success "size: within 5/4 of git's delta ($pair)" '
		set -- $pair &&
		git_delta_size $1 $2 >git-size &&
		read git_len base target <git-size &&
		ours=$(stat_of delta $base $target) &&
		echo "git $git_len ours $ours ($base -> $target)" &&
		test $((ours * 4)) -le $((git_len * 5 + 64))
	'
done

test_done
