# Shared setup for the pack-format tests (t5300-t5304, t1006).
# Source after test-lib.sh:  . "$TEST_DIRECTORY/lib-pack.sh"
#
#	pack_repo_create ALGO DIR	a varied repository, built by stock git,
#					fully packed with deltas
#	pack_repo_history DIR [N]	(used by the above) N more commits
#	pack_of DIR			path of DIR's only .pack
#	pack_ref_delta DIR PREFIX	a REF_DELTA pack of DIR's objects;
#					prints the .pack path
#	hex_to_bytes HEX		raw bytes to stdout
#	fix_pack_trailer FILE ALGO	recompute a pack's trailing checksum
#	set_object_type FILE OFS TYPE	rewrite the type bits of the object
#					header at OFS (1..7)
#	object_offsets DIR PACK		"offset oid type" lines, by offset
#	pack_object_types ALGO PACK IDX  "OFS TYPE" of each object, by offset
#	pack_byte FILE OFS, get_be32 FILE OFS, set_be32 FILE OFS VALUE
#	object_header_len FILE OFS	bytes in the type-and-size header
#	compare_results			git vs gitpack: expect* vs actual*

# pack_binary_file FILE SIZE SEED: SIZE pseudo-random bytes (deterministic).
pack_binary_file () {
	awk -v n="$2" -v seed="$3" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++)
			printf "%c", int(rand() * 256)
	}' >"$1"
}

# pack_repo_history DIR [N]: N (default 12) commits in DIR, each editing
# a few lines of the same files, so that repacking finds deltas; every
# fifth commit also touches the large text file, every seventh the large
# binary file.
pack_repo_history () {
	(
		cd "$1" &&
		gp_ph_n_=${2:-12} &&
		gp_ph_start_=$(git rev-list --count HEAD 2>/dev/null || echo 0) &&
		for gp_ph_i_ in $(test_seq "$gp_ph_n_")
		do
			gp_ph_k_=$((gp_ph_start_ + gp_ph_i_)) &&
			sed "s/^$((gp_ph_k_ * 37 % 600 + 1))\$/edited in commit $gp_ph_k_/" \
				src/numbers.txt >tmp && mv tmp src/numbers.txt &&
			echo "line $gp_ph_k_" >>doc/readme &&
			if test $((gp_ph_k_ % 5)) = 0
			then
				sed "s/^$((gp_ph_k_ * 797))\$/big edit $gp_ph_k_/" \
					big.txt >tmp && mv tmp big.txt
			fi &&
			if test $((gp_ph_k_ % 7)) = 0
			then
				printf 'patch %d' "$gp_ph_k_" |
				dd of=blob.bin bs=1 seek=$((gp_ph_k_ * 997)) conv=notrunc 2>/dev/null
			fi &&
			git add -A &&
			test_tick &&
			git commit -q -m "commit $gp_ph_k_" || exit 1
		done
	)
}

# pack_repo_create ALGO DIR [small]: a repository with commits (including a
# merge), trees (nested, with executable, symlink and gitlink entries),
# blobs (empty, small, binary, >1MB text and binary), annotated tags (of a
# commit, a blob, a tree and another tag), lightweight tags and a few
# dozen slightly edited revisions; then "git repack -adf" with a deep
# delta window so the pack has delta chains. With "small", the large
# files are only a few dozen kilobytes.
pack_repo_create () {
	git init -q -b main --object-format="$1" "$2" &&
	(
		cd "$2" &&
		mkdir -p src/deep/er doc &&
		test_seq 600 >src/numbers.txt &&
		echo hello >doc/readme &&
		: >empty &&
		printf '#!/bin/sh\necho run\n' >run.sh &&
		chmod +x run.sh &&
		ln -s doc/readme link &&
		echo deep >src/deep/er/file &&
		if test "$3" = small
		then
			seq 1 30000 >big.txt &&
			pack_binary_file blob.bin 40000 7
		else
			seq 1 150000 >big.txt &&
			pack_binary_file blob.bin 1100000 7
		fi &&
		git add -A &&
		test_tick &&
		git commit -q -m initial &&
		git tag -a -m "first release" v1 &&
		git tag light &&
		pack_repo_history . 8 &&
		git checkout -q -b side &&
		echo side >src/deep/er/side.txt &&
		git add -A && test_tick && git commit -q -m "side 1" &&
		echo more >>src/deep/er/side.txt &&
		git add -A && test_tick && git commit -q -m "side 2" &&
		git checkout -q main &&
		pack_repo_history . 4 &&
		test_tick &&
		git merge -q --no-ff -m "merge side" side &&
		gp_pr_commit_=$(git rev-parse HEAD) &&
		git update-index --add --cacheinfo "160000,$gp_pr_commit_,gitlink" &&
		test_tick &&
		git commit -q -m "add a gitlink" &&
		git tag -a -m "a blob" blob-tag "HEAD:doc/readme" &&
		git tag -a -m "a tree" tree-tag "HEAD^{tree}" &&
		git -c advice.nestedTag=false tag -a -m "a tag of a tag" outer-tag v1 &&
		git tag -a -m "the empty tree" empty-tree "$(git mktree </dev/null)" &&
		pack_repo_history . 6 &&
		git repack -adfq --window=20 --depth=20
	)
}

# pack_of DIR: the path of the (only) pack in DIR's repository.
pack_of () {
	ls "$1"/.git/objects/pack/pack-*.pack
}

# pack_ref_delta DIR PREFIX: write PREFIX-<hash>.pack (and .idx) with every
# object of DIR, deltas as REF_DELTA (no --delta-base-offset); prints the
# .pack path.
pack_ref_delta () {
	case "$2" in
	/*) gp_prd_prefix_=$2 ;;
	*) gp_prd_prefix_=$(pwd)/$2 ;;
	esac &&
	gp_prd_hash_=$(git -C "$1" rev-list --objects --all |
		git -C "$1" pack-objects -q --no-delta-base-offset \
			--window=50 --depth=20 "$gp_prd_prefix_") &&
	echo "$gp_prd_prefix_-$gp_prd_hash_.pack"
}

# hex_to_bytes HEX: write the bytes HEX spells.
hex_to_bytes () {
	printf '%s\n' "$1" | sed 's/../& /g' | tr ' ' '\n' | while read gp_hb_
	do
		test -n "$gp_hb_" || continue
		printf "\\$(printf %03o $((0x$gp_hb_)))"
	done
}

# fix_pack_trailer FILE ALGO: replace the trailing checksum of pack FILE
# with the right one, so a corruption elsewhere gets past it.
fix_pack_trailer () {
	gp_fpt_raw_=$(test_oid_rawsz "$2") &&
	gp_fpt_size_=$(wc -c <"$1") &&
	gp_fpt_hex_=$(head -c $((gp_fpt_size_ - gp_fpt_raw_)) "$1" |
		"${2}sum" | cut -d' ' -f1) &&
	truncate_file "$1" $((gp_fpt_size_ - gp_fpt_raw_)) &&
	hex_to_bytes "$gp_fpt_hex_" >>"$1"
}

# set_object_type FILE OFS TYPE: the object header byte at OFS keeps its
# size bits and continuation bit but gets type TYPE (1 commit, 2 tree,
# 3 blob, 4 tag, 5 reserved, 6 ofs-delta, 7 ref-delta).
set_object_type () {
	gp_sot_old_=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' \n') &&
	corrupt_byte "$1" "$2" $(( (gp_sot_old_ & 143) | ($3 << 4) ))
}

# object_offsets DIR PACK: "offset oid type" for each object of PACK
# (whose .idx exists), sorted by offset; run in repository DIR so the
# object format is right.
object_offsets () {
	(cd "$1" && git verify-pack -v "$2") |
	awk '$2 ~ /^(commit|tree|blob|tag)$/ { print $5, $1, $2 }' |
	sort -n
}

# pack_object_types ALGO PACK IDX: "OFS TYPE" for every object in PACK,
# in offset order, TYPE being the header's type bits (1..7; 6 is
# OFS_DELTA, 7 REF_DELTA); IDX is a .idx of PACK that git wrote.
pack_object_types () {
	git show-index --object-format="$1" <"$3" |
	cut -d' ' -f1 | sort -n | while read gp_pot_ofs_
	do
		gp_pot_b_=$(od -An -tu1 -j "$gp_pot_ofs_" -N1 "$2" | tr -d ' \n')
		echo "$gp_pot_ofs_ $(( (gp_pot_b_ >> 4) & 7 ))"
	done
}

# pack_byte FILE OFS: the byte at OFS, as a decimal number.
pack_byte () {
	od -An -tu1 -j "$2" -N1 "$1" | tr -d ' \n'
}

# object_header_len FILE OFS: the length of the type-and-size header of
# the object at OFS (bytes up to the first without the 0x80 bit).
object_header_len () {
	gp_ohl_n_=1
	while test $(( $(pack_byte "$1" $(($2 + gp_ohl_n_ - 1))) & 128 )) != 0
	do
		gp_ohl_n_=$((gp_ohl_n_ + 1))
	done
	echo "$gp_ohl_n_"
}

# set_be32 FILE OFS VALUE: write VALUE as 4 big-endian bytes at OFS.
set_be32 () {
	corrupt_byte "$1" "$2" $(( ($3 >> 24) & 255 )) &&
	corrupt_byte "$1" $(($2 + 1)) $(( ($3 >> 16) & 255 )) &&
	corrupt_byte "$1" $(($2 + 2)) $(( ($3 >> 8) & 255 )) &&
	corrupt_byte "$1" $(($2 + 3)) $(( $3 & 255 ))
}

# get_be32 FILE OFS: the 4 big-endian bytes at OFS as a number.
get_be32 () {
	od -An -tu1 -j "$2" -N4 "$1" |
	awk '{ printf "%d\n", $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }'
}

# compare_results: after running git into expect, expect.err, expect.code
# and gitpack into actual, actual.err, actual.code, the two outputs and exit
# codes are the same; if not, show gitpack's stderr too (a sanitizer
# report, say).
compare_results () {
	if test_cmp expect actual && test_cmp expect.code actual.code
	then
		return 0
	fi
	echo "--- git exit $(cat expect.code), gitpack exit $(cat actual.code); gitpack stderr:"
	cat actual.err
	return 1
}
