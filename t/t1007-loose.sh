#!/bin/sh

test_description='loose objects: gitpack writes what git reads, reads what git writes

Objects of every type written by the loose writer (test-tool loose write)
must be read back by stock git (cat-file, fsck --full --strict) under the
name git hash-object gives the same content; objects git wrote (at several
compression levels) must be read identically by test-tool loose read/info
and gitpack cat-file. Writing an object that exists leaves its file alone.
Damaged loose files (truncated, flipped bytes, bad headers, not zlib at
all, empty) must make every reader fail, without crashing, with a message
naming the file. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# loose_file OID: the path of OID's loose file in the current repository.
loose_file () {
	echo ".git/objects/$(printf %.2s "$1")/${1#??}"
}

# zlib_stored IN OUT: OUT is a zlib stream holding the bytes of IN in one
# stored (uncompressed) deflate block, so that tests can wrap any header
# they like. IN must be under 64 KiB.
zlib_stored () {
	gp_zs_n_=$(wc -c <"$1") &&
	test "$gp_zs_n_" -lt 65536 &&
	gp_zs_adler_=$(od -An -tu1 -v "$1" | awk '
		BEGIN { a = 1; b = 0 }
		{ for (i = 1; i <= NF; i++) { a = (a + $i) % 65521; b = (b + a) % 65521 } }
		END { printf "%04x%04x\n", b, a }') &&
	gp_zs_nn_=$((65535 - gp_zs_n_)) &&
	{
		# CMF/FLG (32K window, no dictionary), then BFINAL=1 BTYPE=00
		hex_to_bytes 780101 &&
		hex_to_bytes "$(printf %02x%02x%02x%02x \
			$((gp_zs_n_ & 255)) $((gp_zs_n_ >> 8)) \
			$((gp_zs_nn_ & 255)) $((gp_zs_nn_ >> 8)))" &&
		cat "$1" &&
		hex_to_bytes "$gp_zs_adler_"
	} >"$2"
}

# raw_oid ALGO FILE: the hash of FILE's bytes (a whole object, header
# included), as git names a loose object.
raw_oid () {
	"${1}sum" <"$2" | cut -d" " -f1
}

# check_git_reads TYPE OID CONTENT: stock git reads OID as TYPE with
# exactly the bytes in file CONTENT, and hash-object agrees on the name.
check_git_reads () {
	test "$(git cat-file -t "$2")" = "$1" &&
	test "$(git cat-file -s "$2")" = "$(wc -c <"$3")" &&
	git cat-file "$1" "$2" >git-content &&
	test_cmp_bin "$3" git-content &&
	test "$(git hash-object -t "$1" --stdin <"$3")" = "$2"
}

# check_gitpack_reads OID: test-tool loose read/info and gitpack cat-file
# see the loose object OID exactly as git does.
check_gitpack_reads () {
	gp_cgr_type_=$(git cat-file -t "$1") &&
	gp_cgr_size_=$(git cat-file -s "$1") &&
	gp_cgr_disk_=$(wc -c <"$(loose_file "$1")") &&
	{
		echo "$gp_cgr_type_ $gp_cgr_size_" &&
		git cat-file "$gp_cgr_type_" "$1"
	} >expect.read &&
	test-tool loose read "$1" >actual.read &&
	test_cmp_bin expect.read actual.read &&
	echo "$gp_cgr_type_ $gp_cgr_size_ $gp_cgr_disk_" >expect.info &&
	test-tool loose info "$1" >actual.info &&
	test_cmp expect.info actual.info &&
	for gp_cgr_opt_ in -t -s -p
	do
		git cat-file $gp_cgr_opt_ "$1" >expect.cat &&
		gitpack cat-file $gp_cgr_opt_ "$1" >actual.cat &&
		test_cmp_bin expect.cat actual.cat || return 1
	done &&
	echo "$1" >in.batch &&
	git cat-file --batch <in.batch >expect.batch &&
	gitpack cat-file --batch <in.batch >actual.batch &&
	test_cmp_bin expect.batch actual.batch &&
	git cat-file --batch-check="%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)" \
		<in.batch >expect.check &&
	gitpack cat-file --batch-check="%(objectname) %(objecttype) %(objectsize) %(objectsize:disk)" \
		<in.batch >actual.check &&
	test_cmp expect.check actual.check
}

# check_loose_rejected OID [header|git-reads]: every reader fails on
# OID's damaged file, without crashing; stock git fails too. The
# library's readers (test-tool loose) name the file. gitpack cat-file
# answers as git does: an object whose header git cannot read (git
# reads the first 32 bytes alone) is "missing" in batch mode, or stops
# it where git stops ("invalid object type"), with git's stdout and exit
# code; damage past the header stops the batch, naming the file. With
# "header", the damage is in the header, so that reading only the
# header fails too. With "git-reads", git 2.39 does not notice (it
# streams small blobs without checking their length), but we must.
check_loose_rejected () {
	gp_clr_path_="$(printf %.2s "$1")/${1#??}" &&
	if test "$2" != git-reads
	then
		! git cat-file -p "$1" >/dev/null 2>&1
	fi &&
	test_must_fail gitpack cat-file -p "$1" >out 2>err &&
	cat err &&
	test_must_fail test-tool loose read "$1" >out 2>err &&
	cat err &&
	grep -F "$gp_clr_path_" err &&
	echo "$1" >in.batch &&
	git cat-file --batch <in.batch >expect.batch 2>/dev/null
	echo $? >expect.code &&
	if test "$2" != git-reads && {
		grep -q " missing\$" expect.batch || test ! -s expect.batch
	}
	then
		gitpack cat-file --batch <in.batch >out 2>err
		echo $? >actual.code &&
		cat err &&
		test_cmp expect.batch out &&
		test_cmp expect.code actual.code
	else
		test_must_fail gitpack cat-file --batch <in.batch >out 2>err &&
		cat err &&
		grep -F "$gp_clr_path_" err
	fi &&
	if test "$2" = header
	then
		test_must_fail gitpack cat-file -t "$1" >out 2>err &&
		cat err &&
		test_must_fail gitpack cat-file -s "$1" >out 2>err &&
		test_must_fail test-tool loose info "$1" >out 2>err &&
		cat err &&
		grep -F "$gp_clr_path_" err
	fi
}

for algo in $test_hash_algos
do

test_expect_success "setup: source repository and contents ($algo)" '
	pack_repo_create $algo src-$algo small &&
	git -C src-$algo cat-file --batch-all-objects --batch-check="%(objectname) %(objecttype)" \
		>src-$algo.objects &&
	mkdir c-$algo &&
	: >c-$algo/empty &&
	printf "a\000b\000\000c\000" >c-$algo/nuls &&
	pack_binary_file c-$algo/binary 5000 3 &&
	pack_binary_file c-$algo/big-binary 1100000 11 &&
	test_seq 200000 >c-$algo/big-text &&
	test $(wc -c <c-$algo/big-text) -gt 1048576 &&
	printf "no newline at the end" >c-$algo/small &&
	tree=$(git -C src-$algo rev-parse "HEAD^{tree}") &&
	git -C src-$algo cat-file tree $tree >c-$algo/tree &&
	git -C src-$algo cat-file tree $(git -C src-$algo mktree </dev/null) >c-$algo/empty-tree &&
	git -C src-$algo cat-file commit HEAD >c-$algo/commit &&
	merge=$(git -C src-$algo rev-list --merges -n 1 HEAD) &&
	git -C src-$algo cat-file commit $merge >c-$algo/merge &&
	test $(grep -c "^parent " c-$algo/merge) = 2 &&
	git -C src-$algo cat-file tag v1 >c-$algo/tag &&
	git -C src-$algo cat-file tag outer-tag >c-$algo/tag-of-tag &&
	test_must_be_empty c-$algo/empty &&
	test_file_not_empty c-$algo/tree
'

test_expect_success "blobs written by gitpack are read by git ($algo)" '
	git init -q --object-format=$algo w-$algo &&
	(
		cd w-$algo &&
		for c in empty nuls binary big-binary big-text small
		do
			oid=$(test-tool loose write blob <../c-$algo/$c) &&
			test_path_is_file "$(loose_file $oid)" &&
			check_git_reads blob $oid ../c-$algo/$c || return 1
		done &&
		# the empty blob has its well-known name
		oid=$(test-tool loose write blob </dev/null) &&
		test $oid = $(git hash-object -t blob --stdin </dev/null)
	)
'

test_expect_success "trees, commits and tags written by gitpack are read by git ($algo)" '
	(
		cd w-$algo &&
		for c in tree empty-tree
		do
			oid=$(test-tool loose write tree <../c-$algo/$c) &&
			check_git_reads tree $oid ../c-$algo/$c || return 1
		done &&
		for c in commit merge
		do
			oid=$(test-tool loose write commit <../c-$algo/$c) &&
			check_git_reads commit $oid ../c-$algo/$c || return 1
		done &&
		for c in tag tag-of-tag
		do
			oid=$(test-tool loose write tag <../c-$algo/$c) &&
			check_git_reads tag $oid ../c-$algo/$c || return 1
		done
	)
'

test_expect_success "a whole history written by gitpack passes git fsck --full --strict ($algo)" '
	git init -q --object-format=$algo h-$algo &&
	(
		cd h-$algo &&
		# every object of the source repository, bases before the
		# objects that point at them
		for type in blob tree commit tag
		do
			grep " $type\$" ../src-$algo.objects | cut -d" " -f1 |
			while read oid
			do
				git -C ../src-$algo cat-file $type $oid >content &&
				new=$(test-tool loose write $type <content) &&
				test "$new" = "$oid" || return 1
			done || return 1
		done &&
		git update-ref refs/heads/main $(git -C ../src-$algo rev-parse main) &&
		git update-ref refs/tags/outer-tag $(git -C ../src-$algo rev-parse outer-tag) &&
		git fsck --full --strict --no-dangling >fsck.out 2>&1 &&
		cat fsck.out &&
		! grep -i -e error -e bad -e corrupt -e missing fsck.out &&
		git count-objects -v >counts &&
		grep "^count: $(wc -l <../src-$algo.objects)\$" counts &&
		grep "^packs: 0\$" counts
	)
'

test_expect_success "loose files written by gitpack are read-only, like git's ($algo)" '
	(
		cd w-$algo &&
		oid=$(test-tool loose write blob <../c-$algo/small) &&
		ls -l "$(loose_file $oid)" >mode &&
		grep "^-r--r--r--" mode &&
		# no temporary files left in the fan-out directories
		find .git/objects -type f ! -path "*/info/*" ! -path "*/pack/*" >files &&
		! grep -v "/objects/[0-9a-f][0-9a-f]/[0-9a-f]*\$" files
	)
'

test_expect_success "gitpack reads back what it wrote ($algo)" '
	(
		cd w-$algo &&
		for oid in $(find .git/objects -type f -path "*/objects/??/*" |
			sed "s|.*/objects/\(..\)/|\1|")
		do
			check_gitpack_reads $oid || return 1
		done
	)
'

for level in default 0 1 9
do
	test_expect_success "objects git wrote (compression $level) are read as git reads them ($algo)" '
		rm -rf g-$algo &&
		git init -q --object-format=$algo g-$algo &&
		if test $level != default
		then
			git -C g-$algo config core.looseCompression $level
		fi &&
		(
			cd g-$algo &&
			for c in empty nuls binary big-binary big-text small
			do
				git hash-object -w ../c-$algo/$c >/dev/null || return 1
			done &&
			git hash-object -w -t tree ../c-$algo/tree >/dev/null &&
			git hash-object -w -t commit ../c-$algo/commit >/dev/null &&
			git hash-object -w -t tag ../c-$algo/tag >/dev/null &&
			test_commit one &&
			test_commit --annotate two &&
			git count-objects -v >counts &&
			grep "^packs: 0\$" counts &&
			find .git/objects -type f -path "*/objects/??/*" |
			sed "s|.*/objects/\(..\)/|\1|" >oids &&
			test_line_count -gt 15 oids &&
			for oid in $(cat oids)
			do
				check_gitpack_reads $oid || return 1
			done
		)
	'
done

test_expect_success "writing an existing object leaves its file alone ($algo)" '
	git init -q --object-format=$algo e-$algo &&
	(
		cd e-$algo &&
		# git writes it first, stored uncompressed, so that a rewrite
		# by gitpack (which compresses) would show
		oid=$(git -c core.looseCompression=0 hash-object -w ../c-$algo/big-text) &&
		f=$(loose_file $oid) &&
		cp "$f" saved &&
		ls -i "$f" >inode.before &&
		again=$(test-tool loose write blob <../c-$algo/big-text) &&
		test "$again" = "$oid" &&
		test_cmp_bin saved "$f" &&
		ls -i "$f" >inode.after &&
		test_cmp inode.before inode.after &&
		# and the other way round: git leaves gitpack'"'"'s file alone
		oid=$(test-tool loose write blob <../c-$algo/binary) &&
		f=$(loose_file $oid) &&
		cp "$f" saved &&
		again=$(test-tool loose write blob <../c-$algo/binary) &&
		test "$again" = "$oid" &&
		test_cmp_bin saved "$f" &&
		git -c core.looseCompression=0 hash-object -w ../c-$algo/binary &&
		test_cmp_bin saved "$f"
	)
'

# --- damaged loose objects -------------------------------------------

test_expect_success "setup: a repository for damaged objects ($algo)" '
	git init -q --object-format=$algo d-$algo &&
	(
		cd d-$algo &&
		# a few hundred bytes of compressed data, so that damage in
		# the middle hits the deflate stream, not its header or trailer
		test_seq 1000 >big &&
		big=$(git hash-object -w big) &&
		test $(wc -c <"$(loose_file $big)") -gt 500 &&
		cp "$(loose_file $big)" big.z &&
		echo $big >big.oid
	)
'

# damaged_case NAME CONTENT-FILE: write the raw (already compressed)
# CONTENT-FILE as the loose object whose name is in NAME.oid, in the
# current directory (d-ALGO); prints the name.
damaged_case () {
	gp_dc_oid_=$(cat "$1.oid") &&
	gp_dc_f_=$(loose_file "$gp_dc_oid_") &&
	mkdir -p "$(dirname "$gp_dc_f_")" &&
	rm -f "$gp_dc_f_" &&
	cp "$2" "$gp_dc_f_" &&
	echo "$gp_dc_oid_"
}

# crafted NAME: NAME.raw is a whole inflated object (header and
# content); store it zlib-wrapped under the name git would give it.
crafted () {
	raw_oid $algo "$1.raw" >"$1.oid" &&
	zlib_stored "$1.raw" "$1.z" &&
	damaged_case "$1" "$1.z"
}

test_expect_success "sanity: a crafted well-formed object is read ($algo)" '
	(
		cd d-$algo &&
		printf "blob 5\000hello" >good.raw &&
		oid=$(crafted good) &&
		test $oid = $(printf hello | git hash-object --stdin) &&
		git cat-file -p $oid >expect &&
		printf hello >expect.git &&
		test_cmp_bin expect.git expect &&
		check_gitpack_reads $oid
	)
'

test_expect_success "truncated in the middle of the stream ($algo)" '
	(
		cd d-$algo &&
		cp big.z half.z &&
		truncate_file half.z $(( $(wc -c <big.z) / 2 )) &&
		cp big.oid half.oid &&
		oid=$(damaged_case half half.z) &&
		check_loose_rejected $oid
	)
'

test_expect_success "truncated inside the zlib header ($algo)" '
	(
		cd d-$algo &&
		head -c 1 big.z >short.z &&
		cp big.oid short.oid &&
		oid=$(damaged_case short short.z) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "truncated inside the adler-32 trailer ($algo)" '
	(
		cd d-$algo &&
		cp big.z tail.z &&
		truncate_file tail.z -2 &&
		cp big.oid tail.oid &&
		oid=$(damaged_case tail tail.z) &&
		check_loose_rejected $oid
	)
'

test_expect_success "byte flipped in the deflate stream ($algo)" '
	(
		cd d-$algo &&
		cp big.z flip.z &&
		corrupt_byte flip.z $(( $(wc -c <big.z) / 2 )) &&
		cp big.oid flip.oid &&
		oid=$(damaged_case flip flip.z) &&
		check_loose_rejected $oid
	)
'

test_expect_success "byte flipped in the adler-32 trailer ($algo)" '
	(
		cd d-$algo &&
		cp big.z adler.z &&
		corrupt_byte adler.z -1 &&
		cp big.oid adler.oid &&
		oid=$(damaged_case adler adler.z) &&
		check_loose_rejected $oid
	)
'

test_expect_success "byte flipped in the stored content ($algo)" '
	(
		cd d-$algo &&
		printf "blob 11\000hello world" >stored.raw &&
		raw_oid $algo stored.raw >stored.oid &&
		zlib_stored stored.raw stored.z &&
		# the "w" of "world": the zlib stream is still well formed,
		# only the adler-32 checksum tells
		corrupt_byte stored.z $((2 + 5 + 8 + 6)) &&
		oid=$(damaged_case stored stored.z) &&
		check_loose_rejected $oid
	)
'

test_expect_success "header with an unknown type ($algo)" '
	(
		cd d-$algo &&
		printf "bogus 5\000hello" >badtype.raw &&
		oid=$(crafted badtype) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "header with a delta type ($algo)" '
	(
		cd d-$algo &&
		printf "ofs-delta 5\000hello" >deltatype.raw &&
		oid=$(crafted deltatype) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "declared size larger than the content ($algo)" '
	(
		cd d-$algo &&
		printf "blob 6\000hello" >long.raw &&
		oid=$(crafted long) &&
		check_loose_rejected $oid git-reads
	)
'

test_expect_success "declared size smaller than the content ($algo)" '
	(
		cd d-$algo &&
		printf "blob 4\000hello" >shortsize.raw &&
		oid=$(crafted shortsize) &&
		check_loose_rejected $oid git-reads
	)
'

test_expect_success "header without a NUL ($algo)" '
	(
		cd d-$algo &&
		printf "blob 5 hello, with no end to the header in sight" >nonul.raw &&
		oid=$(crafted nonul) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "header that is only a type and size, no NUL ($algo)" '
	(
		cd d-$algo &&
		printf "blob 5" >onlyhdr.raw &&
		oid=$(crafted onlyhdr) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "size with a leading zero ($algo)" '
	(
		cd d-$algo &&
		printf "blob 05\000hello" >zero.raw &&
		oid=$(crafted zero) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "size that is not a number ($algo)" '
	(
		cd d-$algo &&
		printf "blob five\000hello" >nan.raw &&
		oid=$(crafted nan) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "size beyond 64 bits ($algo)" '
	(
		cd d-$algo &&
		printf "blob 18446744073709551621\000hello" >huge.raw &&
		oid=$(crafted huge) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "not a zlib stream ($algo)" '
	(
		cd d-$algo &&
		printf "this is not zlib data at all\n" >notzlib.z &&
		cp big.oid notzlib.oid &&
		oid=$(damaged_case notzlib notzlib.z) &&
		check_loose_rejected $oid header
	)
'

test_expect_success "empty file ($algo)" '
	(
		cd d-$algo &&
		: >empty.z &&
		cp big.oid empty.oid &&
		oid=$(damaged_case empty empty.z) &&
		check_loose_rejected $oid header
	)
'

done

test_done
