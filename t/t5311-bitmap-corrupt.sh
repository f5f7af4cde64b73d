#!/bin/sh

test_description='reachability bitmaps: damaged files never give wrong answers

Four bitmaps written by git over the same 60 commits: a pack'\''s ("repack
-adb") and a multi-pack-index'\''s ("multi-pack-index write --bitmap" over
three overlapping packs), each without and with a lookup table, all with
the name-hash cache. Each case copies one, damages it at a named place
and checks that

 - "gitpack rev-list --use-bitmap-index" (--objects --all, --all,
   --count --objects --all) exits 0 and lists what the plain walk lists;
 - where the damage can be seen, each of those commands warns "ignoring
   bitmap: <file>: ..." with the message the case expects (where it is,
   what is wrong), and "rev-list --test-bitmap" fails, without crashing.

The damage: a byte flipped at many places (header, the pack or MIDX
checksum it records, each type bitmap, entries, lookup table, name-hash
cache, trailer), which the trailing checksum catches, and truncations
(both on the pack bitmap without and the MIDX bitmap with a lookup
table); then on all four, with the trailing checksum recomputed so that
only the check at hand can fire: a bad signature or version, unknown and
missing flags, wrong entry counts, bad type bitmaps, entries naming no
commit or a wrong XOR base, broken lookup-table rows (order, offsets, XOR
rows, a cycle), bytes added. Also a stale bitmap (of an older pack or
MIDX, under the new name), a MIDX with a pack deleted, and a damaged
bitmap beside a good one. Damage a checksum-correct file cannot reveal
(the name-hash cache, an entry that the lookup table no longer lists)
must still give the right answers; an entry whose bits lie may give a
wrong list, but must not crash, and "--test-bitmap" on its commit must
fail.

Git 2.39 checks none of this (it does not verify the trailing checksum
and dies or lists wrongly on most cases), so with GP_TEST_GITPACK=git only
the setup and the checks of the good files run.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# bitmap_layout FILE RAWSZ MAIN_POS: where the parts of the bitmap FILE
# are, as shell assignments (eval them): L_size, L_flags, L_count,
# L_type_commit, L_type_tree, L_type_blob, L_type_tag (each an EWAH),
# L_entries and L_entries_end, L_entry0, L_entry1 (headers of the first
# two entries in the file) and L_entry1_pos (its commit), L_main_entry
# (the entry of the commit at index position MAIN_POS), L_main_xor (its
# XOR offset); with a lookup table L_lookup, L_main_row (the row of that
# commit), L_main_row_ofs (where that row is), L_other_row and
# L_other_row_ofs (another row); L_hashcache (or empty) and L_trailer.
bitmap_layout () {
	perl -e '
		use strict;
		my ($file, $rawsz, $main_pos) = @ARGV;
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		my %l = (size => length($d), lookup => "", hashcache => "");
		($l{flags}, $l{count}) = unpack("n N", substr($d, 6, 6));
		my $ewah = sub { 12 + 8 * unpack("N", substr($d, $_[0] + 4, 4)) };
		my $ofs = 12 + $rawsz;
		for my $t (qw(commit tree blob tag)) {
			$l{"type_$t"} = $ofs;
			$ofs += $ewah->($ofs);
		}
		$l{entries} = $ofs;
		for my $k (0 .. $l{count} - 1) {
			my ($pos, $xor) = unpack("N C", substr($d, $ofs, 5));
			$l{entry0} = $ofs if $k == 0;
			($l{entry1}, $l{entry1_pos}) = ($ofs, $pos) if $k == 1;
			($l{main_entry}, $l{main_xor}) = ($ofs, $xor) if $pos == $main_pos;
			$ofs += 6 + $ewah->($ofs + 6);
		}
		$l{entries_end} = $ofs;
		if ($l{flags} & 0x10) {
			$l{lookup} = $ofs;
			for my $k (0 .. $l{count} - 1) {
				my $pos = unpack("N", substr($d, $ofs, 4));
				($l{main_row}, $l{main_row_ofs}) = ($k, $ofs) if $pos == $main_pos;
				$ofs += 16;
			}
			$l{other_row} = $l{main_row} ? 0 : 1;
			$l{other_row_ofs} = $l{lookup} + 16 * $l{other_row};
		}
		if ($l{flags} & 0x4) {
			$l{hashcache} = $ofs;
		}
		$l{trailer} = $l{size} - $rawsz;
		die "$file: no entry for $main_pos\n" unless defined $l{main_entry};
		print "L_$_=$l{$_}\n" for sort keys %l;
	' "$1" "$2" "$3"
}

# new_case BASE CASE [SOURCE]: c-ALGO-BASE-CASE, a copy of the repository
# BASE-ALGO whose bitmap is a private, writable copy of SOURCE (default:
# the good one); prints the bitmap's path. Its name (for the messages)
# goes to c-ALGO-BASE-CASE.name, what the plain walk lists (the objects
# and the commits, sorted) to c-ALGO-BASE-CASE.expect and .expect-commits.
new_case () {
	gp_nc_dir_=c-$algo-$1-$2
	midx_copy $1-$algo $gp_nc_dir_ &&
	gp_nc_m_=$(midx_pack_dir $gp_nc_dir_)/$(cat $1-$algo.name) &&
	rm -f "$gp_nc_m_" &&
	cp "${3:-good-$1-$algo.bitmap}" "$gp_nc_m_" &&
	chmod u+w "$gp_nc_m_" &&
	cat $1-$algo.name >$gp_nc_dir_.name &&
	cp expect-$algo $gp_nc_dir_.expect &&
	cp expect-commits-$algo $gp_nc_dir_.expect-commits &&
	echo "$gp_nc_m_"
}

# no_crash CMD...: CMD may fail but not crash (signals and sanitizer
# reports exit above 128) or be missing.
no_crash () {
	"$@"
	gp_nc_ret_=$?
	if test $gp_nc_ret_ -gt 128 || test $gp_nc_ret_ = 126 || test $gp_nc_ret_ = 127
	then
		echo "no_crash: exit $gp_nc_ret_: $*"
		return 1
	fi
}

# fix_bitmap FILE: recompute the trailing checksum (of everything before
# it), so that damage elsewhere gets past it.
fix_bitmap () {
	perl -MDigest::SHA=sha1,sha256 -e '
		my ($file, $algo) = @ARGV;
		my $rawsz = $algo eq "sha256" ? 32 : 20;
		open(my $fh, "+<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		die "$file: too short\n" if length($d) < $rawsz;
		my $body = substr($d, 0, length($d) - $rawsz);
		seek($fh, length($body), 0) or die "$file: $!\n";
		print $fh ($algo eq "sha256" ? sha256($body) : sha1($body));
		close($fh) or die "$file: $!\n";
	' "$1" $algo
}

# set_be16 FILE OFS VALUE: write VALUE as 2 big-endian bytes at OFS.
set_be16 () {
	corrupt_byte "$1" "$2" $(( ($3 >> 8) & 255 )) &&
	corrupt_byte "$1" $(($2 + 1)) $(( $3 & 255 ))
}

# index_pos BASE TYPE [N]: the index position (rank by name) of the N-th
# (default first) object of TYPE in BASE-ALGO; for a commit, N may be a
# revision instead.
index_pos () {
	git -C $1-$algo cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype)" >objects &&
	case "$2" in
	commit:*)
		gp_ip_oid_=$(git -C $1-$algo rev-parse "${2#commit:}") &&
		grep -n "^$gp_ip_oid_ " objects ;;
	*)
		grep -n " $2$" objects | sed -n "${3:-1}p" ;;
	esac | cut -d: -f1 | {
		read gp_ip_line_ && echo $((gp_ip_line_ - 1))
	}
}

# check_bitmap CASE KIND [REGEX]: run the checks on c-ALGO-CASE. KIND:
#	detected  every rev-list warns "ignoring bitmap: <file>: ..." matching
#		  the extended regex REGEX, and --test-bitmap fails
#	harmless  the answers are right; a warning is allowed (naming the
#		  file), --test-bitmap may pass
#	lies	  only: no crash, and --test-bitmap of main fails
# In all but "lies", every rev-list --use-bitmap-index exits 0 and lists
# what the plain walk lists (c-ALGO-CASE.expect and .expect-commits, or
# gitpack's walk when they are missing).
check_bitmap () {
	gp_cb_dir_=c-$algo-$1
	gp_cb_kind_=$2
	gp_cb_re_=$3
	gp_cb_name_=$(cat $gp_cb_dir_.name)
	if test $gp_cb_kind_ = lies
	then
		for args in "--objects --all" "--all" "--count --objects --all"
		do
			no_crash gitpack -C $gp_cb_dir_ rev-list --use-bitmap-index $args \
				>/dev/null || return 1
		done &&
		test_must_fail gitpack -C $gp_cb_dir_ rev-list --test-bitmap main 2>err &&
		cat err &&
		test_file_not_empty err
		return
	fi
	if ! test -f $gp_cb_dir_.expect
	then
		# the answer stock git walks to (without bitmaps it reads none)
		git -C $gp_cb_dir_ rev-list --objects --all >plain &&
		cut -d" " -f1 plain | sort >$gp_cb_dir_.expect &&
		git -C $gp_cb_dir_ rev-list --all | sort >$gp_cb_dir_.expect-commits
	fi &&
	cp $gp_cb_dir_.expect expect &&
	cp $gp_cb_dir_.expect-commits expect.commits &&
	wc -l <expect | tr -d " " >expect.count &&
	gitpack -C $gp_cb_dir_ rev-list --use-bitmap-index --objects --all >out 2>err.1
	echo $? >code.1
	gitpack -C $gp_cb_dir_ rev-list --use-bitmap-index --all >out.commits 2>err.2
	echo $? >code.2
	gitpack -C $gp_cb_dir_ rev-list --use-bitmap-index --count --objects --all \
		>actual.count 2>err.3
	echo $? >code.3
	cat err.1 err.2 err.3 &&
	test "$(cat code.1 code.2 code.3 | tr -d "\n")" = 000 &&
	cut -d" " -f1 out | sort >actual &&
	sort out.commits >actual.commits &&
	test_cmp expect actual &&
	test_cmp expect.commits actual.commits &&
	test_cmp expect.count actual.count &&
	# nothing on stderr but warnings about this bitmap
	cat err.1 err.2 err.3 >err &&
	if grep -v "^warning: ignoring bitmap: .*$gp_cb_name_" err
	then
		echo "check_bitmap: unexpected messages"
		return 1
	fi &&
	case "$gp_cb_kind_" in
	detected)
		for n in 1 2 3
		do
			if ! grep "^warning: ignoring bitmap: .*$gp_cb_name_" err.$n >/dev/null
			then
				echo "check_bitmap: command $n did not warn"
				return 1
			fi
		done &&
		if test -n "$gp_cb_re_" && ! grep -E "$gp_cb_re_" err.1 >/dev/null
		then
			echo "check_bitmap: the warning does not say /$gp_cb_re_/"
			return 1
		fi &&
		test_must_fail gitpack -C $gp_cb_dir_ rev-list --test-bitmap main 2>err &&
		cat err &&
		grep "$gp_cb_name_" err ;;
	harmless)
		no_crash gitpack -C $gp_cb_dir_ rev-list --test-bitmap main 2>err ;;
	*)
		echo "check_bitmap: unknown kind $gp_cb_kind_"
		return 1 ;;
	esac
}

# Damage only the trailing checksum catches (or the header checks before
# it): "NAME OFFSET-EXPRESSION REGEX", the expression in terms of the
# layout (bitmap_layout) and $rawsz; "lookup" cases need a lookup table.
flips='signature 0 bad signature at offset 0
version 5 unsupported version 254 at offset 4
flags 7 flags at offset 6 lack FULL_DAG
entry-count 11 checksum mismatch at offset
checksum-field 12 stale
checksum-field-end 12+rawsz-1 stale
commit-type-size L_type_commit+3 checksum mismatch at offset
tree-type-word-count L_type_tree+7 checksum mismatch at offset
blob-type-words L_type_blob+10 checksum mismatch at offset
tag-type-last-rlw L_entries-1 checksum mismatch at offset
first-entry-commit L_entry0+3 checksum mismatch at offset
first-entry-xor-offset L_entry0+4 checksum mismatch at offset
first-entry-flags L_entry0+5 checksum mismatch at offset
main-entry-words L_main_entry+14 checksum mismatch at offset
last-entry-end L_entries_end-1 checksum mismatch at offset
lookup-first-row L_lookup+3 checksum mismatch at offset
lookup-main-row-offset L_main_row_ofs+11 checksum mismatch at offset
lookup-main-row-xor L_main_row_ofs+15 checksum mismatch at offset
hash-cache-first L_hashcache checksum mismatch at offset
hash-cache-last L_trailer-1 checksum mismatch at offset
trailer-first L_trailer checksum mismatch at offset
trailer-last L_size-1 checksum mismatch at offset'

# Truncations: "NAME LENGTH-EXPRESSION".
truncations='empty 0
signature-only 4
before-checksum-field 12
header-only 12+rawsz
in-commit-type L_type_commit+30
half L_size/2
no-trailer L_trailer
last-byte-missing L_size-1'

for algo in $test_hash_algos
do

rawsz=$(test_oid_rawsz $algo)

test_expect_success "setup: 60 commits; bitmaps of a pack and of a MIDX of 3 packs ($algo)" '
	git init -q -b main --object-format=$algo repo-$algo &&
	git -C repo-$algo config gc.auto 0 &&
	midx_import repo-$algo 60 &&
	midx_pack_range repo-$algo main~40 main~10 &&
	midx_pack_range repo-$algo main~20 main &&
	# fewer files to copy for each case: no work tree, no hooks
	(cd repo-$algo && rm -rf d[0-6] .git/hooks) &&
	for base in pack pack-lookup midx midx-lookup
	do
		midx_copy repo-$algo $base-$algo || return 1
	done &&
	git -C pack-$algo repack -adbq &&
	git -C pack-lookup-$algo -c pack.writeBitmapLookupTable=true repack -adbq &&
	git -C midx-$algo multi-pack-index write --bitmap &&
	git -C midx-lookup-$algo -c pack.writeBitmapLookupTable=true \
		multi-pack-index write --bitmap &&
	for base in pack pack-lookup midx midx-lookup
	do
		(cd $(midx_pack_dir $base-$algo) && ls *.bitmap) >$base-$algo.name &&
		test_line_count = 1 $base-$algo.name &&
		cp $(midx_pack_dir $base-$algo)/$(cat $base-$algo.name) \
			good-$base-$algo.bitmap &&
		main=$(index_pos $base commit:main) &&
		bitmap_layout good-$base-$algo.bitmap $rawsz $main >layout-$base-$algo &&
		cat layout-$base-$algo &&
		(
			eval "$(cat layout-$base-$algo)" &&
			case $base in
			*lookup) test $L_flags = 21 && test -n "$L_lookup" ;;
			*) test $L_flags = 5 && test -z "$L_lookup" ;;
			esac &&
			nr=$(git -C $base-$algo cat-file --batch-all-objects \
				--batch-check="%(objectname)" | wc -l) &&
			test $((L_trailer - L_hashcache)) = $((4 * nr)) &&
			test $L_count -ge 50
		) || return 1
	done &&
	git -C repo-$algo rev-list --objects --all | cut -d" " -f1 | sort >expect.git &&
	gitpack -C repo-$algo rev-list --objects --all | cut -d" " -f1 | sort >expect-$algo &&
	test_cmp expect.git expect-$algo &&
	gitpack -C repo-$algo rev-list --all | sort >expect-commits-$algo &&
	test_line_count = 60 expect-commits-$algo
'

for base in pack pack-lookup midx midx-lookup
do

test_expect_success "sanity: the good bitmap answers, with no warning ($base, $algo)" '
	new_case $base good &&
	check_bitmap $base-good harmless &&
	test_must_be_empty err.1 &&
	! grep " " out &&
	gitpack -C c-$algo-$base-good rev-list --test-bitmap main 2>err &&
	grep "^OK!$" err
'

# Flips and truncations meet the same checks whichever the file: they run
# on the pack bitmap without and the MIDX bitmap with a lookup table.
case $base in
pack|midx-lookup)
	while read -r case expr re
	do
		case "$case,$base" in
		lookup-*,*lookup) ;;
		lookup-*) continue ;;
		esac
		test_expect_success GITPACK_IS_GITPACK "byte flipped: $case ($base, $algo)" '
			eval "$(cat layout-$base-$algo)" &&
			m=$(new_case $base flip-$case) &&
			corrupt_byte $m $(($(echo "$expr" | sed "s/rawsz/$rawsz/"))) &&
			check_bitmap $base-flip-$case detected "$re"
		'
	done <<-EOF
	$flips
	EOF

	while read -r case expr
	do
		test_expect_success GITPACK_IS_GITPACK "truncated: $case ($base, $algo)" '
			eval "$(cat layout-$base-$algo)" &&
			m=$(new_case $base cut-$case) &&
			truncate_file $m $(($(echo "$expr" | sed "s/rawsz/$rawsz/"))) &&
			check_bitmap $base-cut-$case detected "too short|checksum mismatch"
		'
	done <<-EOF
	$truncations
	EOF
	;;
esac

# --- with the trailing checksum fixed: the header -----------------------------

test_expect_success GITPACK_IS_GITPACK "signature XITM ($base, $algo)" '
	m=$(new_case $base signature) &&
	corrupt_byte $m 0 0x58 &&
	fix_bitmap $m &&
	check_bitmap $base-signature detected "bad signature at offset 0"
'

test_expect_success GITPACK_IS_GITPACK "version 2 ($base, $algo)" '
	m=$(new_case $base version) &&
	set_be16 $m 4 2 &&
	fix_bitmap $m &&
	check_bitmap $base-version detected "unsupported version 2 at offset 4"
'

for flag in 0x2 0x8 0x40 0x8000
do
	test_expect_success GITPACK_IS_GITPACK "unknown flag $flag ($base, $algo)" '
		eval "$(cat layout-$base-$algo)" &&
		m=$(new_case $base flag-$flag) &&
		set_be16 $m 6 $((L_flags | flag)) &&
		fix_bitmap $m &&
		check_bitmap $base-flag-$flag detected "unknown flags 0x[0-9a-f]+ at offset 6"
	'
done

test_expect_success GITPACK_IS_GITPACK "FULL_DAG flag cleared ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base no-full-dag) &&
	set_be16 $m 6 $((L_flags & ~1)) &&
	fix_bitmap $m &&
	check_bitmap $base-no-full-dag detected "lack FULL_DAG"
'

test_expect_success GITPACK_IS_GITPACK "hash-cache flag cleared ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base no-hash-cache) &&
	set_be16 $m 6 $((L_flags & ~4)) &&
	fix_bitmap $m &&
	check_bitmap $base-no-hash-cache detected "offset"
'

test_expect_success GITPACK_IS_GITPACK "lookup-table flag toggled ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base toggle-lookup) &&
	set_be16 $m 6 $((L_flags ^ 16)) &&
	fix_bitmap $m &&
	check_bitmap $base-toggle-lookup detected "offset"
'

test_expect_success GITPACK_IS_GITPACK "pseudo-merge flag set, none there ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base pseudo-merges) &&
	set_be16 $m 6 $((L_flags | 32)) &&
	fix_bitmap $m &&
	check_bitmap $base-pseudo-merges detected "offset"
'

test_expect_success GITPACK_IS_GITPACK "the pack or MIDX checksum it records changed: stale ($base, $algo)" '
	m=$(new_case $base checksum-field) &&
	corrupt_byte $m $((12 + rawsz - 1)) &&
	fix_bitmap $m &&
	check_bitmap $base-checksum-field detected "stale"
'

test_expect_success GITPACK_IS_GITPACK "entry count 0xffffffff ($base, $algo)" '
	m=$(new_case $base count-huge) &&
	set_be32 $m 8 4294967295 &&
	fix_bitmap $m &&
	check_bitmap $base-count-huge detected
'

test_expect_success GITPACK_IS_GITPACK "entry count one more ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base count-more) &&
	set_be32 $m 8 $((L_count + 1)) &&
	fix_bitmap $m &&
	check_bitmap $base-count-more detected "offset"
'

# Without a lookup table every entry is read at open: one too few leaves
# bytes over. With one, the rows are read from the end: one row fewer is
# a valid table without the first row, whose commit is then walked.
case $base in
*lookup) fewer=harmless ;;
*) fewer=detected ;;
esac

test_expect_success GITPACK_IS_GITPACK "entry count one less ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base count-less) &&
	set_be32 $m 8 $((L_count - 1)) &&
	fix_bitmap $m &&
	check_bitmap $base-count-less $fewer
'

test_expect_success GITPACK_IS_GITPACK "entry count 0 ($base, $algo)" '
	m=$(new_case $base count-zero) &&
	set_be32 $m 8 0 &&
	fix_bitmap $m &&
	check_bitmap $base-count-zero $fewer
'

# --- type bitmaps ---------------------------------------------------------------

test_expect_success GITPACK_IS_GITPACK "commit type bitmap: bit size 0xffffffff ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base type-size) &&
	set_be32 $m $L_type_commit 4294967295 &&
	fix_bitmap $m &&
	check_bitmap $base-type-size detected "commit type bitmap at offset $L_type_commit"
'

test_expect_success GITPACK_IS_GITPACK "tree type bitmap: word count past the end ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base type-words) &&
	set_be32 $m $((L_type_tree + 4)) 268435455 &&
	fix_bitmap $m &&
	check_bitmap $base-type-words detected "tree type bitmap at offset $L_type_tree"
'

test_expect_success GITPACK_IS_GITPACK "blob type bitmap: a word flipped ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base type-word-flip) &&
	corrupt_byte $m $((L_type_blob + 8 + 8 + 7)) &&
	fix_bitmap $m &&
	check_bitmap $base-type-word-flip detected
'

test_expect_success GITPACK_IS_GITPACK "commit and tag type bitmaps swapped ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base types-swapped) &&
	f=good-$base-$algo.bitmap &&
	{
		head -c $L_type_commit $f &&
		tail -c +$((L_type_tag + 1)) $f | head -c $((L_entries - L_type_tag)) &&
		tail -c +$((L_type_tree + 1)) $f | head -c $((L_type_tag - L_type_tree)) &&
		tail -c +$((L_type_commit + 1)) $f | head -c $((L_type_tree - L_type_commit)) &&
		tail -c +$((L_entries + 1)) $f
	} >$m &&
	test $(wc -c <$m) = $L_size &&
	fix_bitmap $m &&
	check_bitmap $base-types-swapped detected "not a commit"
'

# --- entries ----------------------------------------------------------------------

test_expect_success GITPACK_IS_GITPACK "entry of main: object number out of range ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-range) &&
	nr=$(git -C $base-$algo cat-file --batch-all-objects --batch-check="%(objectname)" | wc -l) &&
	set_be32 $m $L_main_entry $nr &&
	fix_bitmap $m &&
	check_bitmap $base-entry-range detected "offset $L_main_entry"
'

test_expect_success GITPACK_IS_GITPACK "entry of main: object number 0xffffffff ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-huge) &&
	set_be32 $m $L_main_entry 4294967295 &&
	fix_bitmap $m &&
	check_bitmap $base-entry-huge detected "offset $L_main_entry"
'

test_expect_success GITPACK_IS_GITPACK "entry of main names a blob ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-blob) &&
	set_be32 $m $L_main_entry $(index_pos $base blob 3) &&
	fix_bitmap $m &&
	check_bitmap $base-entry-blob detected "offset $L_main_entry"
'

test_expect_success GITPACK_IS_GITPACK "entry of main names the commit of another entry ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-dup) &&
	if test $L_main_entry = $L_entry1
	then
		other=$(get_be32 $m $L_entry0)
	else
		other=$L_entry1_pos
	fi &&
	set_be32 $m $L_main_entry $other &&
	fix_bitmap $m &&
	check_bitmap $base-entry-dup detected "a second one for object|lookup table says"
'

case $base in
*lookup) xor_kind=harmless ;;	# the lookup table gives the XOR base
*) xor_kind=detected ;;
esac

test_expect_success GITPACK_IS_GITPACK "first entry: XOR with an entry before the first ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base xor-first) &&
	corrupt_byte $m $((L_entry0 + 4)) 1 &&
	fix_bitmap $m &&
	check_bitmap $base-xor-first $xor_kind "XOR offset 1"
'

test_expect_success GITPACK_IS_GITPACK "second entry: XOR offset 161 ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base xor-far) &&
	corrupt_byte $m $((L_entry1 + 4)) 161 &&
	fix_bitmap $m &&
	check_bitmap $base-xor-far $xor_kind "XOR offset 161"
'

test_expect_success GITPACK_IS_GITPACK "entry of main: bit size 0xffffffff ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-bits) &&
	set_be32 $m $((L_main_entry + 6)) 4294967295 &&
	fix_bitmap $m &&
	check_bitmap $base-entry-bits detected "offset $((L_main_entry + 6))"
'

test_expect_success GITPACK_IS_GITPACK "entry of main: word count past the end ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-words) &&
	set_be32 $m $((L_main_entry + 10)) 268435455 &&
	fix_bitmap $m &&
	check_bitmap $base-entry-words detected "offset $((L_main_entry + 6))"
'

test_expect_success GITPACK_IS_GITPACK "entry of main: a word flipped, no check can tell ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base entry-lies) &&
	corrupt_byte $m $((L_main_entry + 6 + 8 + 8 + 7)) &&
	fix_bitmap $m &&
	check_bitmap $base-entry-lies lies
'

test_expect_success GITPACK_IS_GITPACK "eight bytes added before the trailer ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base longer) &&
	f=good-$base-$algo.bitmap &&
	{
		head -c $L_trailer $f &&
		printf "\0\0\0\0\0\0\0\0" &&
		tail -c $rawsz $f
	} >$m &&
	fix_bitmap $m &&
	check_bitmap $base-longer detected "offset"
'

test_expect_success GITPACK_IS_GITPACK "name-hash cache changed: not used by rev-list ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base hash-cache) &&
	corrupt_byte $m $L_hashcache &&
	corrupt_byte $m $((L_trailer - 1)) &&
	fix_bitmap $m &&
	check_bitmap $base-hash-cache harmless &&
	test_must_be_empty err.1
'

# --- the lookup table --------------------------------------------------------------

case $base in
*lookup) ;;
*) continue ;;
esac

test_expect_success GITPACK_IS_GITPACK "lookup table: two rows swapped ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base rows-swapped) &&
	f=good-$base-$algo.bitmap &&
	{
		head -c $L_lookup $f &&
		tail -c +$((L_lookup + 17)) $f | head -c 16 &&
		tail -c +$((L_lookup + 1)) $f | head -c 16 &&
		tail -c +$((L_lookup + 33)) $f
	} >$m &&
	fix_bitmap $m &&
	check_bitmap $base-rows-swapped detected "lookup table row 1 at offset $((L_lookup + 16)) is out of order"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: a row naming a blob ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-blob) &&
	set_be32 $m $L_main_row_ofs $(index_pos $base blob 2) &&
	fix_bitmap $m &&
	check_bitmap $base-row-blob detected "lookup table row [0-9]+ at offset $L_main_row_ofs names object [0-9]+, not a commit"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: entry offset 0 ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-offset-zero) &&
	set_be32 $m $((L_main_row_ofs + 8)) 0 &&
	fix_bitmap $m &&
	check_bitmap $base-row-offset-zero detected "lookup table row $L_main_row .*outside the entries"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: entry offset past 4 GiB ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-offset-huge) &&
	set_be32 $m $((L_main_row_ofs + 4)) 1 &&
	fix_bitmap $m &&
	check_bitmap $base-row-offset-huge detected "outside the entries"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: offset of another entry ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-other-entry) &&
	if test $L_main_entry = $L_entry0
	then
		other=$L_entry1
	else
		other=$L_entry0
	fi &&
	set_be32 $m $((L_main_row_ofs + 8)) $other &&
	fix_bitmap $m &&
	check_bitmap $base-row-other-entry detected "entry at offset $other is for object"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: offset inside an entry ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-mid-entry) &&
	set_be32 $m $((L_main_row_ofs + 8)) $((L_main_entry + 2)) &&
	fix_bitmap $m &&
	check_bitmap $base-row-mid-entry detected "offset $((L_main_entry + 2))"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: XOR with its own row ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-xor-self) &&
	set_be32 $m $((L_main_row_ofs + 12)) $L_main_row &&
	fix_bitmap $m &&
	check_bitmap $base-row-xor-self detected "has XOR row $L_main_row"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: XOR row out of range ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-xor-range) &&
	set_be32 $m $((L_main_row_ofs + 12)) $L_count &&
	fix_bitmap $m &&
	check_bitmap $base-row-xor-range detected "has XOR row $L_count"
'

test_expect_success GITPACK_IS_GITPACK "lookup table: two rows XORed with each other ($base, $algo)" '
	eval "$(cat layout-$base-$algo)" &&
	m=$(new_case $base row-xor-cycle) &&
	set_be32 $m $((L_main_row_ofs + 12)) $L_other_row &&
	set_be32 $m $((L_other_row_ofs + 12)) $L_main_row &&
	fix_bitmap $m &&
	check_bitmap $base-row-xor-cycle detected "cycle"
'

done

# --- stale bitmaps, and which bitmap is read ----------------------------------

test_expect_success GITPACK_IS_GITPACK "stale: the bitmap of the pack before a repack ($algo)" '
	midx_copy pack-$algo c-$algo-stale-pack &&
	(
		cd c-$algo-stale-pack &&
		test_commit stale &&
		git repack -adbq
	) &&
	ls $(midx_pack_dir c-$algo-stale-pack)/*.bitmap >bitmaps &&
	test_line_count = 1 bitmaps &&
	m=$(cat bitmaps) &&
	basename $m >c-$algo-stale-pack.name &&
	! test_cmp_bin good-pack-$algo.bitmap $m &&
	rm -f $m &&
	cp good-pack-$algo.bitmap $m &&
	check_bitmap stale-pack detected "stale: it was written for another pack"
'

test_expect_success GITPACK_IS_GITPACK "stale: the bitmap of the MIDX before a new pack ($algo)" '
	midx_copy midx-lookup-$algo c-$algo-stale-midx &&
	(
		cd c-$algo-stale-midx &&
		test_commit stale &&
		git repack -dq &&
		git multi-pack-index write
	) &&
	dir=$(midx_pack_dir c-$algo-stale-midx) &&
	sum=$(tail -c $rawsz $dir/multi-pack-index | od -An -tx1 | tr -d " \n") &&
	name=multi-pack-index-$sum.bitmap &&
	test_path_is_missing $dir/$name &&
	rm -f $dir/multi-pack-index-*.bitmap &&
	cp good-midx-lookup-$algo.bitmap $dir/$name &&
	echo $name >c-$algo-stale-midx.name &&
	check_bitmap stale-midx detected "stale: it was written for another multi-pack-index"
'

# Git 2.39 cannot even read main here (the MIDX sends it to the missing
# pack); the objects are all in the pack of everything.
test_expect_success GITPACK_IS_GITPACK "a pack of the MIDX deleted: its bitmap is not used ($algo)" '
	new_case midx missing-pack &&
	dir=$(midx_pack_dir c-$algo-midx-missing-pack) &&
	ls -S $dir/pack-*.pack >packs &&
	test_line_count = 3 packs &&
	small=$(tail -n 1 packs) &&
	rm -f $small ${small%.pack}.idx &&
	check_bitmap midx-missing-pack harmless
'

test_expect_success GITPACK_IS_GITPACK "a damaged pack bitmap beside a good MIDX bitmap is not read ($algo)" '
	midx_copy pack-$algo c-$algo-both &&
	(
		cd c-$algo-both &&
		test_commit more &&
		git repack -dq &&
		git multi-pack-index write --bitmap
	) &&
	dir=$(midx_pack_dir c-$algo-both) &&
	ls $dir/*.bitmap >bitmaps &&
	test_line_count = 2 bitmaps &&
	m=$(ls $dir/pack-*.bitmap) &&
	cp $m pack.bitmap &&
	rm -f $m &&
	cp pack.bitmap $m &&
	truncate_file $m 100 &&
	(cd $dir && ls multi-pack-index-*.bitmap) >c-$algo-both.name &&
	check_bitmap both harmless &&
	test_must_be_empty err.1 &&
	test_must_be_empty err.2 &&
	! grep " " out
'

test_expect_success GITPACK_IS_GITPACK "a damaged MIDX bitmap beside a good pack bitmap ($algo)" '
	midx_copy c-$algo-both c-$algo-both-midx &&
	dir=$(midx_pack_dir c-$algo-both-midx) &&
	rm -f $dir/pack-*.bitmap &&
	cp pack.bitmap $dir/$(basename $(ls $(midx_pack_dir c-$algo-both)/pack-*.bitmap)) &&
	m=$(ls $dir/multi-pack-index-*.bitmap) &&
	cp $m midx.bitmap &&
	rm -f $m &&
	cp midx.bitmap $m &&
	corrupt_byte $m -1 &&
	basename $m >c-$algo-both-midx.name &&
	check_bitmap both-midx detected "checksum mismatch"
'

done

test_done
