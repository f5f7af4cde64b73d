#!/bin/sh

test_description='index-pack rejects corrupt packs cleanly

Each case copies a good pack written by git, damages it at a named place
(fixing up the trailing checksum when the damage is meant to be found
elsewhere) and runs index-pack with -o, without -o and with --stdin. Every
run must fail without crashing, say something on stderr (naming the pack
file, for gitpack), and leave no .idx, .rev or temporary file behind.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

of_opt () {
	test "$1" = sha1 || echo "--object-format=$1"
}

# max_ofs_distance K: the largest base distance a K-byte field encodes.
max_ofs_distance () {
	gp_mod_v_=127
	gp_mod_k_=$1
	while test "$gp_mod_k_" -gt 1
	do
		gp_mod_v_=$(( ((gp_mod_v_ + 1) << 7) + 127 ))
		gp_mod_k_=$((gp_mod_k_ - 1))
	done
	echo "$gp_mod_v_"
}

# ofs_field_len FILE OFS: for the OFS_DELTA object at OFS, "START LEN" of
# its base-distance field.
ofs_field_len () {
	gp_ofl_start_=$(($2 + $(object_header_len "$1" "$2")))
	gp_ofl_n_=1
	while test $(( $(pack_byte "$1" $((gp_ofl_start_ + gp_ofl_n_ - 1))) & 128 )) != 0
	do
		gp_ofl_n_=$((gp_ofl_n_ + 1))
	done
	echo "$gp_ofl_start_ $gp_ofl_n_"
}

# check_rejected ALGO CASE: every form of index-pack fails on
# c-ALGO-CASE/test.pack and leaves nothing behind.
check_rejected () {
	gp_cr_dir_=c-$1-$2
	ls -a "$gp_cr_dir_" >ls-expect &&
	(
		cd "$gp_cr_dir_" &&
		test_must_fail gitpack index-pack $(of_opt $1) -o test.idx test.pack \
			>../out-o 2>../err-o &&
		test_must_fail gitpack index-pack $(of_opt $1) test.pack \
			>../out-plain 2>../err-plain
	) &&
	ls -a "$gp_cr_dir_" >ls-actual &&
	test_cmp ls-expect ls-actual &&
	test_file_not_empty err-o &&
	test_file_not_empty err-plain &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		grep -F test.pack err-o &&
		grep -F test.pack err-plain
	fi &&

	rm -rf stdin-repo &&
	git init -q --object-format=$1 stdin-repo &&
	(
		cd stdin-repo &&
		test_must_fail gitpack index-pack --stdin \
			<"../$gp_cr_dir_/test.pack" >../out-stdin 2>../err-stdin
	) &&
	test_file_not_empty err-stdin &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		# (git leaves its tmp_pack_* behind)
		find stdin-repo/.git/objects -type f >leftovers &&
		test_must_be_empty leftovers
	fi
}

for algo in $test_hash_algos
do

test_expect_success "setup ($algo)" '
	pack_repo_create $algo repo-$algo small &&
	mkdir w-$algo &&
	cp "$(pack_of repo-$algo)" w-$algo/ofs.pack &&
	refpack=$(pack_ref_delta repo-$algo w-$algo/ref) &&
	mv "$refpack" w-$algo/ref.pack &&
	rm -f "${refpack%.pack}.idx" &&
	chmod u+w w-$algo/*.pack &&
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) -o ofs.idx ofs.pack >/dev/null &&
		git index-pack $(of_opt $algo) -o ref.idx ref.pack >/dev/null &&
		pack_object_types $algo ofs.pack ofs.idx >ofs.types &&
		pack_object_types $algo ref.pack ref.idx >ref.types &&
		git show-index $(of_opt $algo) <ofs.idx | cut -d" " -f1 | sort -n >ofs.offsets &&
		grep " 6$" ofs.types >/dev/null &&
		grep " 7$" ref.types >/dev/null
	)
'

# new_case CASE [SOURCE]: c-ALGO-CASE/test.pack, a copy of w-ALGO/SOURCE.pack
# (default ofs); prints the copy's path.
new_case () {
	mkdir "c-$algo-$1" &&
	cp "w-$algo/${2:-ofs}.pack" "c-$algo-$1/test.pack" &&
	chmod u+w "c-$algo-$1/test.pack" &&
	echo "c-$algo-$1/test.pack"
}

test_expect_success "sanity: the good pack is accepted ($algo)" '
	f=$(new_case good) &&
	(
		cd c-$algo-good &&
		gitpack index-pack $(of_opt $algo) -o test.idx test.pack
	) &&
	test_cmp_bin w-$algo/ofs.idx c-$algo-good/test.idx
'

test_expect_success "truncated in the middle ($algo)" '
	f=$(new_case half) &&
	truncate_file $f $(( $(wc -c <$f) / 2 )) &&
	check_rejected $algo half
'

test_expect_success "truncated inside the header ($algo)" '
	f=$(new_case short-header) &&
	truncate_file $f 10 &&
	check_rejected $algo short-header
'

test_expect_success "truncated inside the trailer ($algo)" '
	f=$(new_case short-trailer) &&
	truncate_file $f -5 &&
	check_rejected $algo short-trailer
'

test_expect_success "empty file ($algo)" '
	f=$(new_case empty) &&
	truncate_file $f 0 &&
	check_rejected $algo empty
'

test_expect_success "trailing checksum flipped ($algo)" '
	f=$(new_case trailer) &&
	corrupt_byte $f -1 &&
	check_rejected $algo trailer
'

test_expect_success "byte flipped in compressed object data ($algo)" '
	f=$(new_case data) &&
	# the middle of the largest object stored whole
	(cd repo-$algo && git verify-pack -v "$(pack_of .)") |
		awk "NF == 5 && \$2 ~ /^(commit|tree|blob|tag)\$/ { print \$4, \$5 }" |
		sort -n | tail -n 1 >biggest &&
	read size ofs <biggest &&
	test "$size" -gt 100 &&
	corrupt_byte $f $((ofs + size / 2)) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo data
'

test_expect_success "byte flipped in compressed delta data ($algo)" '
	f=$(new_case delta-data) &&
	(cd repo-$algo && git verify-pack -v "$(pack_of .)") |
		awk "NF == 7 { print \$4, \$5 }" | sort -n | tail -n 1 >biggest &&
	read size ofs <biggest &&
	test "$size" -gt 20 &&
	corrupt_byte $f $((ofs + size / 2)) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo delta-data
'

test_expect_success "bad signature ($algo)" '
	f=$(new_case signature) &&
	corrupt_byte $f 0 0x51 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo signature
'

test_expect_success "unsupported version 4 ($algo)" '
	f=$(new_case version4) &&
	corrupt_byte $f 7 4 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo version4
'

test_expect_success "unsupported version 1 ($algo)" '
	f=$(new_case version1) &&
	corrupt_byte $f 7 1 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo version1
'

test_expect_success "object count one more than the pack holds ($algo)" '
	f=$(new_case count-plus) &&
	set_be32 $f 8 $(( $(get_be32 $f 8) + 1 )) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo count-plus
'

test_expect_success "object count one less than the pack holds ($algo)" '
	f=$(new_case count-minus) &&
	set_be32 $f 8 $(( $(get_be32 $f 8) - 1 )) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo count-minus
'

test_expect_success "object count near 2^32 ($algo)" '
	f=$(new_case count-huge) &&
	set_be32 $f 8 4294967280 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo count-huge
'

test_expect_success "object of reserved type 5 ($algo)" '
	f=$(new_case type5) &&
	set_object_type $f 12 5 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo type5
'

test_expect_success "object of type 0 ($algo)" '
	f=$(new_case type0) &&
	set_object_type $f 12 0 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo type0
'

test_expect_success "object size in header does not match the data ($algo)" '
	f=$(new_case size) &&
	corrupt_byte $f 12 $(( $(pack_byte $f 12) ^ 1 )) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo size
'

test_expect_success "first object turned into an OFS_DELTA before the pack start ($algo)" '
	f=$(new_case first-ofs) &&
	set_object_type $f 12 6 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo first-ofs
'

test_expect_success "delta base offset pointing before the pack start ($algo)" '
	f=$(new_case ofs-before) &&
	found= &&
	while read ofs type
	do
		test "$type" = 6 || continue
		set -- $(ofs_field_len $f $ofs) &&
		if test $(max_ofs_distance $2) -gt $ofs
		then
			found="$1 $2" &&
			break
		fi
	done <w-$algo/ofs.types &&
	test -n "$found" &&
	set -- $found &&
	i=1 &&
	while test $i -lt $2
	do
		corrupt_byte $f $(($1 + i - 1)) 255 &&
		i=$((i + 1)) || return 1
	done &&
	corrupt_byte $f $(($1 + $2 - 1)) 127 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo ofs-before
'

test_expect_success "delta base offset pointing inside another object ($algo)" '
	f=$(new_case ofs-inside) &&
	found= &&
	while read ofs type
	do
		test "$type" = 6 || continue
		set -- $(ofs_field_len $f $ofs) &&
		test $2 = 1 || continue
		# distance 1: the last byte of the previous object
		if ! grep -x $((ofs - 1)) w-$algo/ofs.offsets >/dev/null
		then
			found=$1 &&
			break
		fi
	done <w-$algo/ofs.types &&
	test -n "$found" &&
	corrupt_byte $f $found 1 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo ofs-inside
'

test_expect_success "delta base offset pointing at the delta itself ($algo)" '
	f=$(new_case ofs-self) &&
	found= &&
	while read ofs type
	do
		test "$type" = 6 || continue
		set -- $(ofs_field_len $f $ofs) &&
		if test $2 = 1
		then
			found=$1 &&
			break
		fi
	done <w-$algo/ofs.types &&
	test -n "$found" &&
	corrupt_byte $f $found 0 &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo ofs-self
'

test_expect_success "REF_DELTA base missing from the pack ($algo)" '
	f=$(new_case ref-missing ref) &&
	ofs=$(grep " 7$" w-$algo/ref.types | head -n 1 | cut -d" " -f1) &&
	corrupt_byte $f $((ofs + $(object_header_len $f $ofs) + 3)) &&
	fix_pack_trailer $f $algo &&
	check_rejected $algo ref-missing
'

done

test_done
