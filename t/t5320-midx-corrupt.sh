#!/bin/sh

test_description='multi-pack-index: corrupt files are reported, not trusted

Each case copies a good multi-pack-index written by git (24 packs, with
a RIDX chunk; for the LOFF cases, the same file with half its offsets
moved to a LOFF chunk), damages it at a named place (fixing up the
trailing checksum unless the case is about the checksum) and checks:

 - "gitpack multi-pack-index verify" fails, without crashing, with a
   message naming the multi-pack-index and, where there is one, the
   chunk at fault;
 - "gitpack cat-file --batch-check --batch-all-objects" still prints what
   git prints for the repository without a MIDX: the damaged file is
   reported and ignored, and the objects are read from the packs. Damage
   that only verify can see (the checksum, the RIDX order, a missing
   pack) must not change what readers print either; damage that makes
   the MIDX lie about objects (a wrong offset) only must not crash them.

With GP_TEST_GITPACK=git, the cases git 2.39 does not detect (or where it
dies reading) are only checked not to crash.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# new_case CASE [SOURCE]: c-ALGO-CASE, a copy of the repository base-ALGO
# whose multi-pack-index is a private, writable copy of SOURCE (default
# good-ALGO.midx); prints the MIDX's path.
new_case () {
	midx_copy base-$algo c-$algo-$1 &&
	gp_nc_m_=$(midx_pack_dir c-$algo-$1)/multi-pack-index &&
	rm -f "$gp_nc_m_" &&
	cp "${2:-good-$algo.midx}" "$gp_nc_m_" &&
	chmod u+w "$gp_nc_m_" &&
	echo "$gp_nc_m_"
}

# no_crash CMD...: CMD may fail (die() exits with 128) but not crash
# (signals and sanitizer reports exit above 128) or be missing.
no_crash () {
	"$@"
	gp_nc_ret_=$?
	if test $gp_nc_ret_ -gt 129 || test $gp_nc_ret_ = 126 || test $gp_nc_ret_ = 127
	then
		# stdout: the callers send stderr to a file
		echo "no_crash: exit $gp_nc_ret_: $*"
		return 1
	fi
}

# fix_midx FILE: recompute the trailing checksum.
fix_midx () {
	fix_pack_trailer "$1" $algo
}

# toc_ofs FILE ID: where the 8-byte offset of chunk ID is in the table.
toc_ofs () {
	echo $((12 + 12 * $(midx_toc_entry "$1" "$2") + 4))
}

# set_toc FILE ID OFFSET: set the (low 32 bits of the) offset of chunk ID.
set_toc () {
	set_be32 "$1" $(($(toc_ofs "$1" "$2") + 4)) "$3"
}

# check_corrupt CASE KIND [REGEX]: run the checks on c-ALGO-CASE. KIND:
#	open	a malformed file: verify fails, readers report it (gitpack)
#		and print what git prints without a MIDX
#	verify	only verify can tell: readers print what git prints
#	lies	the MIDX points at the wrong bytes: verify fails, readers
#		must not crash
# with ",git-accepts" when git 2.39's verify passes the file, and
# ",git-misreads" when git's cat-file dies on it or prints something else
# than without the MIDX: with GP_TEST_GITPACK=git those checks only ask
# for no crash. gitpack's verify message must
# name the multi-pack-index, and match the extended regex REGEX.
check_corrupt () {
	gp_cc_dir_=c-$algo-$1
	gp_cc_kind_=$2
	gp_cc_re_=$3
	gp_cc_lax_verify_=
	gp_cc_lax_read_=
	if test_have_prereq GITPACK_IS_GIT
	then
		case "$gp_cc_kind_" in
		*git-accepts*) gp_cc_lax_verify_=t ;;
		esac
		case "$gp_cc_kind_" in
		*git-misreads*) gp_cc_lax_read_=t ;;
		esac
	fi
	if test -n "$gp_cc_lax_verify_"
	then
		no_crash gitpack -C $gp_cc_dir_ multi-pack-index verify 2>err
		gp_cc_ret_=$?
		cat err
		test $gp_cc_ret_ = 0
	else
		test_must_fail gitpack -C $gp_cc_dir_ multi-pack-index verify 2>err
		gp_cc_ret_=$?
		cat err
		test $gp_cc_ret_ = 0 &&
		test_file_not_empty err &&
		if test_have_prereq GITPACK_IS_GITPACK
		then
			if ! grep multi-pack-index err >/dev/null
			then
				echo "check_corrupt: verify does not name the multi-pack-index"
				return 1
			fi &&
			if test -n "$gp_cc_re_" && ! grep -E "$gp_cc_re_" err >/dev/null
			then
				echo "check_corrupt: verify does not say /$gp_cc_re_/"
				return 1
			fi
		fi
	fi &&
	for fmt in "" "$midx_batch_format"
	do
		if test -n "$gp_cc_lax_read_"
		then
			no_crash gitpack -C $gp_cc_dir_ cat-file --batch-all-objects \
				--batch-check${fmt:+="$fmt"} >actual 2>err || return 1
			continue
		fi
		case "$gp_cc_kind_" in
		lies*)
			no_crash gitpack -C $gp_cc_dir_ cat-file --batch-all-objects \
				--batch-check${fmt:+="$fmt"} >actual 2>err ;;
		*)
			gitpack -C $gp_cc_dir_ cat-file --batch-all-objects \
				--batch-check${fmt:+="$fmt"} >actual 2>err &&
			cat err &&
			if test -z "$fmt"
			then
				test_cmp expect-$algo actual
			else
				test_cmp expect-format-$algo actual
			fi ;;
		esac || return 1
	done &&
	case "$gp_cc_kind_" in
	open*)
		if test_have_prereq GITPACK_IS_GITPACK &&
		   ! grep multi-pack-index err >/dev/null
		then
			echo "check_corrupt: cat-file read the objects but did not report the bad multi-pack-index"
			return 1
		fi ;;
	esac
}

for algo in $test_hash_algos
do

rawsz=$(test_oid_rawsz $algo)
if test $algo = sha1
then
	other_hash_id=2
else
	other_hash_id=1
fi

test_expect_success "setup: 24 packs, a MIDX with RIDX, one with LOFF ($algo)" '
	git init -q -b main --object-format=$algo base-$algo &&
	midx_import base-$algo 24 checkpoint &&
	midx_set_mtimes base-$algo distinct &&
	git -C base-$algo cat-file --batch-all-objects --batch-check >expect-$algo &&
	git -C base-$algo cat-file --batch-all-objects \
		--batch-check="$midx_batch_format" >expect-format-$algo &&
	git -C base-$algo multi-pack-index write --bitmap &&
	m=$(midx_pack_dir base-$algo)/multi-pack-index &&
	cp $m good-$algo.midx &&
	rm -f $(midx_pack_dir base-$algo)/multi-pack-index* &&
	midx_add_loff good-$algo.midx good-loff-$algo.midx $algo &&
	midx_dump good-$algo.midx $algo >dump &&
	grep "^chunk RIDX" dump &&
	grep "^pack 23 " dump &&
	nr=$(grep -c "^object " dump) &&
	echo $nr >nr-objects-$algo &&
	test $nr -gt 90
'

test_expect_success "sanity: the good files pass verify and are used ($algo)" '
	new_case good &&
	gitpack -C c-$algo-good multi-pack-index verify &&
	gitpack -C c-$algo-good cat-file --batch-all-objects --batch-check >actual &&
	test_cmp expect-$algo actual &&
	new_case good-loff good-loff-$algo.midx &&
	gitpack -C c-$algo-good-loff multi-pack-index verify &&
	gitpack -C c-$algo-good-loff cat-file --batch-all-objects \
		--batch-check="$midx_batch_format" >actual &&
	test_cmp expect-format-$algo actual
'

# --- the file as a whole, and its header ------------------------------------

test_expect_success "empty file ($algo)" '
	m=$(new_case empty) &&
	truncate_file $m 0 &&
	check_corrupt empty open
'

test_expect_success "truncated inside the header ($algo)" '
	m=$(new_case short-header) &&
	truncate_file $m 10 &&
	check_corrupt short-header open
'

test_expect_success "truncated inside the chunk table ($algo)" '
	m=$(new_case short-toc) &&
	truncate_file $m 30 &&
	check_corrupt short-toc open
'

test_expect_success "truncated in the middle ($algo)" '
	m=$(new_case half) &&
	truncate_file $m $(( $(wc -c <$m) / 2 )) &&
	check_corrupt half open
'

test_expect_success "truncated inside the trailing checksum ($algo)" '
	m=$(new_case short-trailer) &&
	truncate_file $m -5 &&
	check_corrupt short-trailer open
'

test_expect_success "bytes added before the trailing checksum ($algo)" '
	m=$(new_case long) &&
	size=$(wc -c <$m) &&
	head -c $((size - rawsz)) $m >long &&
	printf "\0\0\0\0\0\0\0\0" >>long &&
	tail -c $rawsz $m >>long &&
	cp long $m &&
	fix_midx $m &&
	check_corrupt long open,git-accepts
'

test_expect_success "bad signature ($algo)" '
	m=$(new_case signature) &&
	corrupt_byte $m 0 0x58 &&
	fix_midx $m &&
	check_corrupt signature open,git-misreads
'

test_expect_success "version 3 ($algo)" '
	m=$(new_case version) &&
	corrupt_byte $m 4 3 &&
	fix_midx $m &&
	check_corrupt version open,git-misreads
'

test_expect_success "hash id of the other algorithm ($algo)" '
	m=$(new_case hash-other) &&
	corrupt_byte $m 5 $other_hash_id &&
	fix_midx $m &&
	check_corrupt hash-other open
'

test_expect_success "unknown hash id ($algo)" '
	m=$(new_case hash-unknown) &&
	corrupt_byte $m 5 7 &&
	fix_midx $m &&
	check_corrupt hash-unknown open
'

test_expect_success "chunk count larger than the table ($algo)" '
	m=$(new_case chunks-many) &&
	corrupt_byte $m 6 200 &&
	fix_midx $m &&
	check_corrupt chunks-many open
'

test_expect_success "chunk count zero ($algo)" '
	m=$(new_case chunks-zero) &&
	corrupt_byte $m 6 0 &&
	fix_midx $m &&
	check_corrupt chunks-zero open
'

test_expect_success "pack count larger than PNAM holds ($algo)" '
	m=$(new_case packs-many) &&
	set_be32 $m 8 60 &&
	fix_midx $m &&
	check_corrupt packs-many open,git-misreads PNAM
'

# Four bytes that must not make a reader allocate gigabytes.
test_expect_success "pack count 0xfffffff0 ($algo)" '
	m=$(new_case packs-huge) &&
	set_be32 $m 8 4294967280 &&
	fix_midx $m &&
	check_corrupt packs-huge open,git-misreads PNAM
'

test_expect_success "pack count smaller than the pack ids used ($algo)" '
	m=$(new_case packs-few) &&
	set_be32 $m 8 3 &&
	fix_midx $m &&
	check_corrupt packs-few open,git-misreads "PNAM|OOFF|pack"
'

# --- the chunk table --------------------------------------------------------

test_expect_success "chunk offset beyond the end of the file ($algo)" '
	m=$(new_case beyond) &&
	set_toc $m OIDL $(( $(wc -c <$m) + 1000 )) &&
	fix_midx $m &&
	check_corrupt beyond open
'

test_expect_success "chunk offsets out of order (OOFF before OIDL) ($algo)" '
	m=$(new_case unsorted-toc) &&
	set_toc $m OOFF $(midx_chunk_offset good-$algo.midx OIDF) &&
	fix_midx $m &&
	check_corrupt unsorted-toc open
'

test_expect_success "overlapping chunks (OIDL starts inside OIDF) ($algo)" '
	m=$(new_case overlap) &&
	set_toc $m OIDL $(( $(midx_chunk_offset good-$algo.midx OIDF) + 512 )) &&
	fix_midx $m &&
	check_corrupt overlap open,git-misreads "OIDF|OIDL"
'

test_expect_success "chunk offset inside the chunk table ($algo)" '
	m=$(new_case into-toc) &&
	set_toc $m PNAM 20 &&
	fix_midx $m &&
	check_corrupt into-toc open,git-misreads
'

test_expect_success "the table does not end where the checksum starts ($algo)" '
	m=$(new_case toc-end) &&
	nc=$(pack_byte $m 6) &&
	set_be32 $m $((12 + 12 * nc + 8)) $(( $(wc -c <$m) - rawsz - 8 )) &&
	fix_midx $m &&
	check_corrupt toc-end open,git-accepts RIDX
'

test_expect_success "a chunk id of zero before the end of the table ($algo)" '
	m=$(new_case zero-id) &&
	set_be32 $m $((12 + 12 * $(midx_toc_entry $m OIDL))) 0 &&
	fix_midx $m &&
	check_corrupt zero-id open
'

test_expect_success "a chunk id twice ($algo)" '
	m=$(new_case dup-id) &&
	printf OIDF | dd of=$m bs=1 seek=$((12 + 12 * $(midx_toc_entry $m OIDL))) \
		conv=notrunc 2>/dev/null &&
	fix_midx $m &&
	check_corrupt dup-id open
'

for chunk in PNAM OIDF OIDL OOFF
do
	test_expect_success "required chunk $chunk missing (renamed) ($algo)" '
		m=$(new_case missing-$chunk) &&
		printf X | dd of=$m bs=1 seek=$((12 + 12 * $(midx_toc_entry $m $chunk))) \
			conv=notrunc 2>/dev/null &&
		fix_midx $m &&
		check_corrupt missing-$chunk open,git-misreads $chunk
	'
done

# --- PNAM ---------------------------------------------------------------------

test_expect_success "PNAM: the last name unterminated ($algo)" '
	m=$(new_case pnam-unterminated) &&
	end=$(( $(midx_chunk_offset $m PNAM) + $(midx_chunk_size $m PNAM) )) &&
	last=$(( $(midx_chunk_offset $m PNAM) + 23 * (2 * rawsz + 10) )) &&
	ofs=$last &&
	while test $ofs -lt $end
	do
		if test $(pack_byte $m $ofs) = 0
		then
			corrupt_byte $m $ofs 0x78 || return 1
		fi
		ofs=$((ofs + 1))
	done &&
	fix_midx $m &&
	check_corrupt pnam-unterminated open PNAM
'

test_expect_success "PNAM: names out of order ($algo)" '
	m=$(new_case pnam-unsorted) &&
	pnam=$(midx_chunk_offset $m PNAM) &&
	len=$((2 * rawsz + 10)) &&
	dd if=good-$algo.midx bs=1 skip=$pnam count=$len 2>/dev/null >first &&
	dd if=good-$algo.midx bs=1 skip=$((pnam + len)) count=$len 2>/dev/null >second &&
	cat second first | dd of=$m bs=1 seek=$pnam conv=notrunc 2>/dev/null &&
	fix_midx $m &&
	check_corrupt pnam-unsorted open,git-misreads PNAM
'

test_expect_success "PNAM: a name twice ($algo)" '
	m=$(new_case pnam-dup) &&
	pnam=$(midx_chunk_offset $m PNAM) &&
	len=$((2 * rawsz + 10)) &&
	dd if=good-$algo.midx bs=1 skip=$pnam count=$len 2>/dev/null |
	dd of=$m bs=1 seek=$((pnam + len)) conv=notrunc 2>/dev/null &&
	fix_midx $m &&
	check_corrupt pnam-dup open,git-misreads PNAM
'

test_expect_success "PNAM: a name of a pack that is not there ($algo)" '
	m=$(new_case pnam-missing) &&
	# the last hex digit of the first name: still sorted
	ofs=$(( $(midx_chunk_offset $m PNAM) + 5 + 2 * rawsz - 1 )) &&
	if test $(pack_byte $m $ofs) = 48
	then
		corrupt_byte $m $ofs 49
	else
		corrupt_byte $m $ofs 48
	fi &&
	fix_midx $m &&
	check_corrupt pnam-missing verify "pack-"
'

# --- OIDF, OIDL, OOFF ---------------------------------------------------------

test_expect_success "OIDF: fanout decreasing ($algo)" '
	m=$(new_case fanout) &&
	oidf=$(midx_chunk_offset $m OIDF) &&
	set_be32 $m $((oidf + 4 * 200)) $(( $(cat nr-objects-$algo) + 1 )) &&
	fix_midx $m &&
	check_corrupt fanout open "OIDF|fanout"
'

test_expect_success "OIDF: object count larger than OIDL holds ($algo)" '
	m=$(new_case fanout-count) &&
	oidf=$(midx_chunk_offset $m OIDF) &&
	set_be32 $m $((oidf + 4 * 255)) $(( $(cat nr-objects-$algo) + 1 )) &&
	fix_midx $m &&
	check_corrupt fanout-count open "OIDF|OIDL|OOFF"
'

test_expect_success "OIDF: wrong size ($algo)" '
	m=$(new_case oidf-size) &&
	set_toc $m OIDL $(( $(midx_chunk_offset good-$algo.midx OIDL) - 4 )) &&
	fix_midx $m &&
	check_corrupt oidf-size open,git-misreads "OIDF"
'

test_expect_success "OIDL: two names swapped ($algo)" '
	m=$(new_case oidl-swap) &&
	oidl=$(midx_chunk_offset $m OIDL) &&
	dd if=good-$algo.midx bs=1 skip=$oidl count=$rawsz 2>/dev/null >first &&
	dd if=good-$algo.midx bs=1 skip=$((oidl + rawsz)) count=$rawsz 2>/dev/null >second &&
	cat second first | dd of=$m bs=1 seek=$oidl conv=notrunc 2>/dev/null &&
	fix_midx $m &&
	check_corrupt oidl-swap open,git-misreads "OIDL|order|sorted"
'

test_expect_success "OIDL: a name twice ($algo)" '
	m=$(new_case oidl-dup) &&
	oidl=$(midx_chunk_offset $m OIDL) &&
	k=$(( $(cat nr-objects-$algo) / 2 )) &&
	dd if=good-$algo.midx bs=1 skip=$((oidl + k * rawsz)) count=$rawsz 2>/dev/null |
	dd of=$m bs=1 seek=$((oidl + (k + 1) * rawsz)) conv=notrunc 2>/dev/null &&
	fix_midx $m &&
	check_corrupt oidl-dup open,git-misreads "OIDL|order|sorted|duplicate"
'

test_expect_success "OIDL: a name outside its fanout bucket ($algo)" '
	m=$(new_case oidl-bucket) &&
	oidl=$(midx_chunk_offset $m OIDL) &&
	k=$(( $(cat nr-objects-$algo) / 2 )) &&
	first=$(pack_byte $m $((oidl + k * rawsz))) &&
	# still between its neighbours, but with another first byte: the
	# last byte of the previous name set to 0xff keeps the order only
	# when the first bytes differ, so move the first byte instead
	prev=$(pack_byte $m $((oidl + (k - 1) * rawsz))) &&
	if test $prev -lt $first
	then
		corrupt_byte $m $((oidl + k * rawsz)) $prev &&
		corrupt_byte $m $((oidl + k * rawsz + 1)) 255
	else
		corrupt_byte $m $((oidl + k * rawsz + rawsz - 1)) 255
	fi &&
	fix_midx $m &&
	check_corrupt oidl-bucket open,git-misreads "OIDL|OIDF|fanout|bucket|order"
'

test_expect_success "OIDL: a name changed, still in order ($algo)" '
	m=$(new_case oidl-changed) &&
	oidl=$(midx_chunk_offset $m OIDL) &&
	k=$(( $(cat nr-objects-$algo) - 1 )) &&
	ofs=$((oidl + k * rawsz + rawsz - 1)) &&
	if test $(pack_byte $m $ofs) = 255
	then
		corrupt_byte $m $ofs 254
	else
		corrupt_byte $m $ofs 255
	fi &&
	fix_midx $m &&
	check_corrupt oidl-changed lies
'

test_expect_success "OOFF: pack id out of range ($algo)" '
	m=$(new_case pack-id) &&
	set_be32 $m $(midx_chunk_offset $m OOFF) 24 &&
	fix_midx $m &&
	check_corrupt pack-id open,git-misreads "OOFF|pack"
'

test_expect_success "OOFF: huge pack id ($algo)" '
	m=$(new_case pack-id-huge) &&
	set_be32 $m $(( $(midx_chunk_offset $m OOFF) + 8 * 5 )) 4294967295 &&
	fix_midx $m &&
	check_corrupt pack-id-huge open,git-misreads "OOFF|pack"
'

test_expect_success "OOFF: an offset moved by one ($algo)" '
	m=$(new_case offset) &&
	ofs=$(( $(midx_chunk_offset $m OOFF) + 8 * 3 + 4 )) &&
	set_be32 $m $ofs $(( $(get_be32 $m $ofs) + 1 )) &&
	fix_midx $m &&
	check_corrupt offset lies "offset|OOFF"
'

test_expect_success "OOFF: an offset beyond its pack ($algo)" '
	m=$(new_case offset-beyond) &&
	set_be32 $m $(( $(midx_chunk_offset $m OOFF) + 8 * 7 + 4 )) 2000000000 &&
	fix_midx $m &&
	check_corrupt offset-beyond lies "offset|OOFF"
'

# Without a LOFF chunk, bit 31 is part of the offset (git writes offsets
# from 2 GiB to 4 GiB that way when no pack goes beyond 4 GiB).
test_expect_success "OOFF: bit 31 set without a LOFF chunk: a plain wrong offset ($algo)" '
	m=$(new_case no-loff) &&
	set_be32 $m $(( $(midx_chunk_offset $m OOFF) + 4 )) 2147483648 &&
	fix_midx $m &&
	check_corrupt no-loff lies "offset"
'

# --- LOFF ---------------------------------------------------------------------

test_expect_success "LOFF: a reference past its end ($algo)" '
	m=$(new_case loff-ref good-loff-$algo.midx) &&
	k=$(( $(midx_chunk_size $m LOFF) / 8 )) &&
	set_be32 $m $(( $(midx_chunk_offset $m OOFF) + 8 * 2 + 4 )) $((2147483648 + k)) &&
	fix_midx $m &&
	check_corrupt loff-ref open,git-misreads "LOFF|large offset"
'

test_expect_success "LOFF: size not a multiple of 8 ($algo)" '
	m=$(new_case loff-size good-loff-$algo.midx) &&
	set_toc $m RIDX $(( $(midx_chunk_offset $m RIDX) - 4 )) &&
	fix_midx $m &&
	check_corrupt loff-size open,git-accepts "LOFF|RIDX"
'

test_expect_success "LOFF: a wrong large offset ($algo)" '
	m=$(new_case loff-value good-loff-$algo.midx) &&
	ofs=$(( $(midx_chunk_offset $m LOFF) + 8 * 4 + 4 )) &&
	set_be32 $m $ofs $(( $(get_be32 $m $ofs) + 3 )) &&
	fix_midx $m &&
	check_corrupt loff-value lies
'

# --- RIDX ---------------------------------------------------------------------

test_expect_success "RIDX: an entry out of range ($algo)" '
	m=$(new_case ridx-range) &&
	set_be32 $m $(( $(midx_chunk_offset $m RIDX) + 4 * 9 )) $(cat nr-objects-$algo) &&
	fix_midx $m &&
	# readers load the order (and find this) only for bitmaps, as for ridx-dup
	check_corrupt ridx-range verify,git-accepts RIDX &&
	no_crash gitpack -C c-$algo-ridx-range rev-list --use-bitmap-index --objects --all \
		>actual 2>err
'

test_expect_success "RIDX: an entry twice ($algo)" '
	m=$(new_case ridx-dup) &&
	ridx=$(midx_chunk_offset $m RIDX) &&
	set_be32 $m $((ridx + 4)) $(get_be32 $m $ridx) &&
	fix_midx $m &&
	check_corrupt ridx-dup verify,git-accepts RIDX
'

test_expect_success "RIDX: two entries swapped ($algo)" '
	m=$(new_case ridx-swap) &&
	ridx=$(midx_chunk_offset $m RIDX) &&
	a=$(get_be32 $m $((ridx + 4 * 10))) &&
	b=$(get_be32 $m $((ridx + 4 * 40))) &&
	set_be32 $m $((ridx + 4 * 10)) $b &&
	set_be32 $m $((ridx + 4 * 40)) $a &&
	fix_midx $m &&
	check_corrupt ridx-swap verify,git-accepts RIDX
'

test_expect_success "RIDX: wrong size ($algo)" '
	m=$(new_case ridx-size) &&
	set_toc $m RIDX $(( $(midx_chunk_offset $m RIDX) + 4 )) &&
	fix_midx $m &&
	check_corrupt ridx-size open,git-accepts "RIDX|OOFF"
'

# --- the trailing checksum ------------------------------------------------------

test_expect_success "checksum flipped: only verify notices ($algo)" '
	m=$(new_case checksum) &&
	corrupt_byte $m -1 &&
	check_corrupt checksum verify "checksum"
'

test_expect_success "a byte flipped in OIDL, checksum not fixed: verify notices ($algo)" '
	m=$(new_case oidl-flip) &&
	corrupt_byte $m $(( $(midx_chunk_offset $m OIDL) + 3 )) &&
	check_corrupt oidl-flip lies
'

done

test_done
