#!/bin/sh

test_description='corrupt .idx and .rev files beside a good pack

Each case copies a repository whose objects git packed (with a .rev), and
where one object is also stored loose, then damages the pack index or the
reverse index at a named place.

A bad .idx: show-index and verify-pack fail with a message; cat-file skips
that pack, so an object also stored loose is still read, and one only in
that pack is missing (a clean failure, not a crash). Damaged names are
found lazily (the object store checks a fanout bucket at its first
lookup): cat-file reports the damage, naming the .idx, once a lookup
reaches it, and from then on the pack answers nothing; before that, an
object of an intact bucket may still be read, correctly.

A bad .rev: cat-file --batch-check with %(objectsize:disk) or %(deltabase)
fails naming the .rev; without the .rev, the reverse index computed in
memory gives what git gives.

Also: a .pack whose trailer does not match its .idx, and an .idx without
its .pack. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# swap_bytes FILE OFS1 OFS2 LEN: exchange two non-overlapping ranges.
swap_bytes () {
	dd if="$1" of=swap.a bs=1 skip="$2" count="$4" 2>/dev/null &&
	dd if="$1" of=swap.b bs=1 skip="$3" count="$4" 2>/dev/null &&
	test "$(wc -c <swap.a)" = "$4" &&
	test "$(wc -c <swap.b)" = "$4" &&
	! cmp -s swap.a swap.b &&
	chmod u+w "$1" &&
	dd if=swap.b of="$1" bs=1 seek="$2" count="$4" conv=notrunc 2>/dev/null &&
	dd if=swap.a of="$1" bs=1 seek="$3" count="$4" conv=notrunc 2>/dev/null &&
	rm -f swap.a swap.b
}

for algo in $test_hash_algos
do

rawsz=$(test_oid_rawsz $algo)

test_expect_success "setup ($algo)" '
	pack_repo_create $algo base-$algo small &&
	(
		cd base-$algo &&
		echo "stored twice" >both &&
		echo "stored in the pack only" >only &&
		git add both only &&
		test_tick &&
		git commit -q -m "both and only" &&
		git -c pack.writeReverseIndex=true repack -adq &&
		git rev-parse HEAD:both >../both-$algo &&
		git rev-parse HEAD:only >../only-$algo &&
		# a loose copy of "both", written while the pack is away
		mkdir ../aside-$algo &&
		mv .git/objects/pack/pack-* ../aside-$algo/ &&
		git hash-object -w both >/dev/null &&
		mv ../aside-$algo/pack-* .git/objects/pack/ &&
		test $(ls .git/objects/pack/pack-*.pack | wc -l) = 1 &&
		test_path_is_file "$(ls .git/objects/pack/pack-*.pack | sed "s/pack\$/rev/")" &&
		git count-objects -v >counts &&
		grep "^count: 1\$" counts &&
		pack=$(ls .git/objects/pack/pack-*.pack) &&
		git show-index <${pack%.pack}.idx >../show-$algo &&
		cut -d" " -f2 ../show-$algo >../all-$algo &&
		git cat-file --batch-check="%(objectname) %(objectsize:disk)" \
			<../all-$algo >../disk-$algo &&
		git cat-file --batch-check="%(objectname) %(deltabase)" \
			<../all-$algo >../delta-$algo &&
		zero=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
		grep -v " $zero\$" ../delta-$algo >deltas &&
		test_line_count -gt 10 deltas &&
		tail -n 1 deltas | cut -d" " -f1 >../delta-oid-$algo &&
		git cat-file -p $(cat ../delta-oid-$algo) >../delta-content-$algo &&
		grep " $(cat ../only-$algo) " ../show-$algo &&
		grep " $(cat ../both-$algo) " ../show-$algo
	) &&
	git -C base-$algo cat-file -p $(cat both-$algo) >both-content-$algo &&
	git -C base-$algo cat-file -p $(cat only-$algo) >only-content-$algo
'

# new_case CASE: c-ALGO-CASE, a copy of the base repository; sets pack,
# idx and rev to the paths of its pack files (relative to the copy).
new_case () {
	cp -R base-$algo c-$algo-$1 &&
	pack=$(cd c-$algo-$1 && ls .git/objects/pack/pack-*.pack) &&
	idx=${pack%.pack}.idx &&
	rev=${pack%.pack}.rev &&
	chmod u+w c-$algo-$1/.git/objects/pack/*
}

# idx_show_index_fails CASE: in c-ALGO-CASE, whose $idx is damaged,
# show-index fails with a message.
idx_show_index_fails () {
	(
		cd c-$algo-$1 &&
		test_must_fail gitpack show-index <$idx >out 2>err &&
		cat err &&
		test_file_not_empty err
	)
}

# idx_verify_pack_fails CASE: verify-pack fails, naming the .idx.
idx_verify_pack_fails () {
	(
		cd c-$algo-$1 &&
		test_must_fail gitpack verify-pack $idx >out 2>err &&
		cat err &&
		test_file_not_empty err &&
		if test_have_prereq GITPACK_IS_GITPACK
		then
			grep -F "$(basename $idx)" err
		fi &&
		test_must_fail gitpack verify-pack -v ${idx%.idx}.pack >out 2>err &&
		test_file_not_empty err
	)
}

# idx_cat_file_skips CASE: cat-file reads around the pack: the object
# also stored loose is read, the one only in that pack is missing.
idx_cat_file_skips () {
	(
		cd c-$algo-$1 &&
		gitpack cat-file -p $(cat ../both-$algo) >actual &&
		test_cmp ../both-content-$algo actual &&
		gitpack cat-file -t $(cat ../both-$algo) >actual &&
		echo blob >expect &&
		test_cmp expect actual &&

		# the object only in that pack is not found, cleanly
		test_must_fail gitpack cat-file -p $(cat ../only-$algo) >out 2>err &&
		cat err &&
		test_file_not_empty err &&
		test_must_fail gitpack cat-file -e $(cat ../only-$algo) &&
		cat ../both-$algo ../only-$algo >in &&
		gitpack cat-file --batch-check >actual <in &&
		{
			echo "$(cat ../both-$algo) blob $(wc -c <../both-content-$algo)" &&
			echo "$(cat ../only-$algo) missing"
		} >expect &&
		test_cmp expect actual
	)
}

# idx_cat_file_lazy CASE: damaged names, found when a lookup reaches
# their bucket: looking up every object of the pack reports the damage,
# naming the .idx; each object is either read as git reads it from the
# good repository, or missing (never anything else); the object also
# stored loose is always read.
idx_cat_file_lazy () {
	git -C base-$algo cat-file --batch-check <all-$algo >good-batch-$algo &&
	(
		cd c-$algo-$1 &&
		gitpack cat-file --batch-check <../all-$algo >actual 2>err &&
		cat err &&
		grep -F "$(basename $idx)" err &&
		test_line_count = $(wc -l <../all-$algo) actual &&
		while read oid rest
		do
			grep -qxF "$oid $rest" ../good-batch-$algo ||
			test "$rest" = missing ||
			return 1
		done <actual &&
		grep -q missing actual &&
		gitpack cat-file -p $(cat ../both-$algo) >content &&
		test_cmp ../both-content-$algo content
	)
}

# check_bad_names CASE: show-index, verify-pack, and cat-file as above.
check_bad_names () {
	idx_show_index_fails $1 &&
	idx_verify_pack_fails $1 &&
	idx_cat_file_lazy $1
}

# check_bad_idx CASE: all three of the above.
check_bad_idx () {
	idx_show_index_fails $1 &&
	idx_verify_pack_fails $1 &&
	idx_cat_file_skips $1
}

# check_bad_rev CASE: in c-ALGO-CASE, whose $rev is damaged, what needs
# the reverse index fails naming the .rev; the rest reads; and once the
# .rev is gone, the reverse index computed in memory gives git's answer.
check_bad_rev () {
	(
		cd c-$algo-$1 &&
		test_must_fail gitpack cat-file \
			--batch-check="%(objectname) %(objectsize:disk)" \
			<../all-$algo >out 2>err &&
		cat err &&
		grep -F "$(basename $rev)" err &&
		test_must_fail gitpack cat-file \
			--batch-check="%(objectname) %(deltabase)" \
			<../all-$algo >out 2>err &&
		grep -F "$(basename $rev)" err &&

		# reading objects, deltas too, does not need the reverse index
		gitpack cat-file -p $(cat ../only-$algo) >actual &&
		test_cmp ../only-content-$algo actual &&
		gitpack cat-file -p $(cat ../delta-oid-$algo) >actual &&
		test_cmp ../delta-content-$algo actual &&

		rm $rev &&
		gitpack cat-file --batch-check="%(objectname) %(objectsize:disk)" \
			<../all-$algo >actual &&
		test_cmp ../disk-$algo actual &&
		gitpack cat-file --batch-check="%(objectname) %(deltabase)" \
			<../all-$algo >actual &&
		test_cmp ../delta-$algo actual
	)
}

test_expect_success "sanity: the good repository reads ($algo)" '
	new_case good &&
	(
		cd c-$algo-good &&
		git show-index <$idx >expect &&
		gitpack show-index <$idx >actual &&
		test_cmp expect actual &&
		gitpack verify-pack $idx &&
		gitpack cat-file -p $(cat ../only-$algo) >actual &&
		test_cmp ../only-content-$algo actual &&
		gitpack cat-file --batch-check="%(objectname) %(objectsize:disk)" \
			<../all-$algo >actual &&
		test_cmp ../disk-$algo actual &&
		gitpack cat-file --batch-check="%(objectname) %(deltabase)" \
			<../all-$algo >actual &&
		test_cmp ../delta-$algo actual
	)
'

# --- the .idx ------------------------------------------------------------

test_expect_success "idx truncated in the middle ($algo)" '
	new_case idx-half &&
	f=c-$algo-idx-half/$idx &&
	truncate_file $f $(( $(wc -c <$f) / 2 )) &&
	check_bad_idx idx-half
'

test_expect_success "idx short by one byte ($algo)" '
	new_case idx-short &&
	truncate_file c-$algo-idx-short/$idx -1 &&
	check_bad_idx idx-short
'

test_expect_success "idx cut inside the fanout table ($algo)" '
	new_case idx-fanout-cut &&
	truncate_file c-$algo-idx-fanout-cut/$idx 100 &&
	check_bad_idx idx-fanout-cut
'

test_expect_success "idx with a decreasing fanout ($algo)" '
	new_case idx-fanout &&
	f=c-$algo-idx-fanout/$idx &&
	nr=$(get_be32 $f $((8 + 255 * 4))) &&
	second=$(get_be32 $f $((8 + 4))) &&
	test $second -lt $nr &&
	# fanout[0] one more than fanout[1]: still at most the count
	set_be32 $f 8 $((second + 1)) &&
	fix_pack_trailer $f $algo &&
	check_bad_idx idx-fanout
'

test_expect_success "idx with two names out of order ($algo)" '
	new_case idx-unsorted &&
	f=c-$algo-idx-unsorted/$idx &&
	# two neighbours in the same fanout bucket, so that only the order
	# of names is wrong
	cut -d" " -f2 show-$algo | cut -c1-2 | awk "
		NR > 1 && \$0 == prev { print NR - 2; exit }
		{ prev = \$0 }" >pos &&
	test_file_not_empty pos &&
	i=$(cat pos) &&
	swap_bytes $f $((1032 + i * rawsz)) $((1032 + (i + 1) * rawsz)) $rawsz &&
	fix_pack_trailer $f $algo &&
	check_bad_names idx-unsorted
'

test_expect_success "idx with a name repeated ($algo)" '
	new_case idx-dup &&
	f=c-$algo-idx-dup/$idx &&
	dd if=$f of=name0 bs=1 skip=1032 count=$rawsz 2>/dev/null &&
	dd if=name0 of=$f bs=1 seek=$((1032 + rawsz)) conv=notrunc 2>/dev/null &&
	fix_pack_trailer $f $algo &&
	check_bad_names idx-dup
'

test_expect_success "idx with a name outside its fanout bucket ($algo)" '
	new_case idx-bucket &&
	f=c-$algo-idx-bucket/$idx &&
	# the first name now starts with 0xff, but sits in a low bucket
	corrupt_byte $f 1032 255 &&
	fix_pack_trailer $f $algo &&
	check_bad_names idx-bucket
'

test_expect_success "idx with a large-offset reference beyond the 64-bit table ($algo)" '
	new_case idx-large &&
	(
		cd c-$algo-idx-large &&
		rm -f $idx &&
		git index-pack --index-version=2,0 -o $idx $pack >/dev/null &&
		# every offset is in the 64-bit table
		nr=$(get_be32 $idx $((8 + 255 * 4))) &&
		test $(wc -c <$idx) = $((8 + 1024 + nr * (rawsz + 16) + 2 * rawsz)) &&
		# it reads, before the damage
		gitpack show-index <$idx >actual &&
		test_cmp ../show-$algo actual &&
		gitpack cat-file -p $(cat ../only-$algo) >actual &&
		test_cmp ../only-content-$algo actual &&
		off32=$((8 + 1024 + nr * (rawsz + 4))) &&
		test $(pack_byte $idx $off32) -ge 128 &&
		set_be32 $idx $off32 $((2147483648 + nr)) &&
		fix_pack_trailer $idx $algo
	) &&
	check_bad_idx idx-large
'

test_expect_success "idx with a large-offset reference one past the 64-bit table ($algo)" '
	new_case idx-large-last &&
	(
		cd c-$algo-idx-large-last &&
		rm -f $idx &&
		git index-pack --index-version=2,0 -o $idx $pack >/dev/null &&
		nr=$(get_be32 $idx $((8 + 255 * 4))) &&
		off32=$((8 + 1024 + nr * (rawsz + 4))) &&
		# the last entry points one past the end of a table of nr
		set_be32 $idx $((off32 + 4 * (nr - 1))) $((2147483648 + nr)) &&
		fix_pack_trailer $idx $algo
	) &&
	check_bad_idx idx-large-last
'

test_expect_success "idx whose size does not fit its object count ($algo)" '
	new_case idx-count &&
	f=c-$algo-idx-count/$idx &&
	nr=$(get_be32 $f $((8 + 255 * 4))) &&
	set_be32 $f $((8 + 255 * 4)) $((nr + 1)) &&
	fix_pack_trailer $f $algo &&
	check_bad_idx idx-count
'

test_expect_success "idx with a huge object count ($algo)" '
	new_case idx-count-huge &&
	f=c-$algo-idx-count-huge/$idx &&
	set_be32 $f $((8 + 255 * 4)) 4294967295 &&
	fix_pack_trailer $f $algo &&
	check_bad_idx idx-count-huge
'

test_expect_success "idx version 3 ($algo)" '
	new_case idx-version &&
	f=c-$algo-idx-version/$idx &&
	set_be32 $f 4 3 &&
	fix_pack_trailer $f $algo &&
	check_bad_idx idx-version
'

test_expect_success "idx with a damaged signature ($algo)" '
	new_case idx-signature &&
	f=c-$algo-idx-signature/$idx &&
	corrupt_byte $f 1 &&
	fix_pack_trailer $f $algo &&
	check_bad_idx idx-signature
'

test_expect_success "idx with 8 bytes of trailing junk: verify-pack ($algo)" '
	new_case idx-junk &&
	f=c-$algo-idx-junk/$idx &&
	printf "junkjunk" >>$f &&
	idx_verify_pack_fails idx-junk
'

# Git takes 8 bytes of junk for one more entry of the 64-bit offset
# table; gitpack requires exactly one entry per large offset.
test_expect_success "idx with 8 bytes of trailing junk: show-index ($algo)" '
	idx_show_index_fails idx-junk
'

# The bad index is skipped, and the loose copy is found.
test_expect_success "idx with 8 bytes of trailing junk: cat-file ($algo)" '
	idx_cat_file_skips idx-junk
'

test_expect_success "idx with one byte of trailing junk ($algo)" '
	new_case idx-junk1 &&
	f=c-$algo-idx-junk1/$idx &&
	printf "j" >>$f &&
	check_bad_idx idx-junk1
'

test_expect_success "empty idx ($algo)" '
	new_case idx-empty &&
	f=c-$algo-idx-empty/$idx &&
	truncate_file $f 0 &&
	check_bad_idx idx-empty
'

test_expect_success "version 1 idx truncated by one byte ($algo)" '
	new_case idx-v1 &&
	(
		cd c-$algo-idx-v1 &&
		rm -f $idx &&
		git index-pack --index-version=1 -o $idx $pack >/dev/null &&
		gitpack show-index <$idx >actual &&
		git show-index <$idx >expect &&
		test_cmp expect actual &&
		truncate_file $idx -1
	) &&
	check_bad_idx idx-v1
'

# --- the .rev ------------------------------------------------------------

test_expect_success "rev truncated in the middle ($algo)" '
	new_case rev-half &&
	f=c-$algo-rev-half/$rev &&
	truncate_file $f $(( $(wc -c <$f) / 2 )) &&
	check_bad_rev rev-half
'

test_expect_success "rev short by one byte ($algo)" '
	new_case rev-short &&
	truncate_file c-$algo-rev-short/$rev -1 &&
	check_bad_rev rev-short
'

test_expect_success "rev cut inside the header ($algo)" '
	new_case rev-header &&
	truncate_file c-$algo-rev-header/$rev 6 &&
	check_bad_rev rev-header
'

test_expect_success "empty rev ($algo)" '
	new_case rev-empty &&
	truncate_file c-$algo-rev-empty/$rev 0 &&
	check_bad_rev rev-empty
'

test_expect_success "rev with trailing junk ($algo)" '
	new_case rev-junk &&
	printf "junk" >>c-$algo-rev-junk/$rev &&
	check_bad_rev rev-junk
'

test_expect_success "rev with a bad signature ($algo)" '
	new_case rev-signature &&
	f=c-$algo-rev-signature/$rev &&
	corrupt_byte $f 0 &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-signature
'

test_expect_success "rev version 2 ($algo)" '
	new_case rev-version &&
	f=c-$algo-rev-version/$rev &&
	test $(get_be32 $f 4) = 1 &&
	set_be32 $f 4 2 &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-version
'

test_expect_success "rev with the wrong hash id ($algo)" '
	new_case rev-hash &&
	f=c-$algo-rev-hash/$rev &&
	if test $algo = sha1
	then
		want=1 other=2
	else
		want=2 other=1
	fi &&
	test $(get_be32 $f 8) = $want &&
	set_be32 $f 8 $other &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-hash
'

test_expect_success "rev with an unknown hash id ($algo)" '
	new_case rev-hash0 &&
	f=c-$algo-rev-hash0/$rev &&
	set_be32 $f 8 0 &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-hash0
'

test_expect_success "rev with an entry out of range ($algo)" '
	new_case rev-range &&
	f=c-$algo-rev-range/$rev &&
	nr=$(wc -l <all-$algo) &&
	set_be32 $f 12 $nr &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-range
'

test_expect_success "rev with its last entry far out of range ($algo)" '
	new_case rev-range-last &&
	f=c-$algo-rev-range-last/$rev &&
	nr=$(wc -l <all-$algo) &&
	set_be32 $f $((12 + 4 * (nr - 1))) 4294967295 &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-range-last
'

test_expect_success "rev with two entries swapped ($algo)" '
	new_case rev-swap &&
	f=c-$algo-rev-swap/$rev &&
	swap_bytes $f 12 16 4 &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-swap
'

test_expect_success "rev with an entry repeated ($algo)" '
	new_case rev-dup &&
	f=c-$algo-rev-dup/$rev &&
	set_be32 $f 16 $(get_be32 $f 12) &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-dup
'

test_expect_success "rev whose pack checksum does not match ($algo)" '
	new_case rev-checksum &&
	f=c-$algo-rev-checksum/$rev &&
	nr=$(wc -l <all-$algo) &&
	corrupt_byte $f $((12 + 4 * nr)) &&
	fix_pack_trailer $f $algo &&
	check_bad_rev rev-checksum
'

test_expect_success "rev of another pack of the same objects ($algo)" '
	new_case rev-other &&
	(
		cd c-$algo-rev-other &&
		# no deltas: the same objects in another order, so a .rev of
		# the right size, with valid entries, for the wrong pack
		h=$(git rev-list --objects --all |
			git pack-objects -q --window=0 ../other-$algo) &&
		git index-pack --rev-index ../other-$algo-$h.pack >/dev/null &&
		test $(wc -c <../other-$algo-$h.rev) = $(wc -c <$rev) &&
		! cmp -s ../other-$algo-$h.rev $rev &&
		cp ../other-$algo-$h.rev $rev
	) &&
	check_bad_rev rev-other
'

# --- the .pack, and its absence ------------------------------------------

test_expect_success "pack whose trailer does not match its idx ($algo)" '
	new_case pack-trailer &&
	(
		cd c-$algo-pack-trailer &&
		corrupt_byte $pack -1 &&
		test_must_fail gitpack cat-file -p $(cat ../only-$algo) >out 2>err &&
		cat err &&
		grep -F "$(basename $pack)" err &&
		echo $(cat ../only-$algo) >in &&
		echo "$(cat ../only-$algo) missing" >expect &&
		gitpack cat-file --batch-check <in >out 2>err &&
		test_cmp expect out &&
		grep -F "$(basename $pack)" err &&
		test_must_fail gitpack verify-pack $idx >out 2>err &&
		test_file_not_empty err
	)
'

# As git: the pack that does not match its index is reported and
# skipped, and the loose copy is read.
test_expect_success "pack whose trailer does not match its idx: loose copy is read ($algo)" '
	(
		cd c-$algo-pack-trailer &&
		git cat-file -p $(cat ../both-$algo) >expect &&
		test_cmp ../both-content-$algo expect &&
		gitpack cat-file -p $(cat ../both-$algo) >actual &&
		test_cmp expect actual &&
		cat ../both-$algo >in &&
		git cat-file --batch-check <in >expect &&
		gitpack cat-file --batch-check <in >actual &&
		test_cmp expect actual
	)
'

test_expect_success "idx without its pack is ignored ($algo)" '
	new_case no-pack &&
	(
		cd c-$algo-no-pack &&
		rm $pack &&
		gitpack cat-file -p $(cat ../both-$algo) >actual &&
		test_cmp ../both-content-$algo actual &&
		test_must_fail gitpack cat-file -p $(cat ../only-$algo) >out 2>err &&
		cat err &&
		test_file_not_empty err &&
		cat ../both-$algo ../only-$algo >in &&
		git cat-file --batch-check <in >expect &&
		gitpack cat-file --batch-check <in >actual &&
		test_cmp expect actual &&
		git cat-file --batch-check="%(objectname) %(objectsize:disk)" <in >expect &&
		gitpack cat-file --batch-check="%(objectname) %(objectsize:disk)" <in >actual &&
		test_cmp expect actual
	)
'

test_expect_success "idx and rev without their pack are ignored ($algo)" '
	new_case no-pack-rev &&
	(
		cd c-$algo-no-pack-rev &&
		rm $pack &&
		corrupt_byte $rev 0 &&
		cat ../both-$algo ../only-$algo >in &&
		git cat-file --batch-check="%(objectname) %(objectsize:disk)" <in >expect &&
		gitpack cat-file --batch-check="%(objectname) %(objectsize:disk)" <in >actual &&
		test_cmp expect actual
	)
'

done

test_done
