#!/bin/sh

test_description='show-index prints what git prints

Version 1 and 2 pack indexes (the latter with and without the 64-bit
offset table) that git index-pack wrote, SHA-1 and SHA-256, inside and
outside a repository, compared with stock git show-index.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

of_opt () {
	test "$1" = sha1 || echo "--object-format=$1"
}

# compare_show_index DIR IDX ARGS...: "show-index ARGS <IDX", run in DIR
# by git and by gitpack, prints the same and exits the same way.
compare_show_index () {
	gp_csi_dir_=$1
	gp_csi_idx_=$2
	shift 2
	(cd "$gp_csi_dir_" && git show-index "$@") <"$gp_csi_idx_" >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_csi_dir_" && gitpack show-index "$@") <"$gp_csi_idx_" >actual 2>actual.err
	echo $? >actual.code
	compare_results
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
	git -C repo-$algo pack-objects -q ../w-$algo/empty </dev/null >/dev/null &&
	mv w-$algo/empty-*.pack w-$algo/empty.pack &&
	rm -f w-$algo/empty-*.idx &&
	(
		cd w-$algo &&
		chmod u+w *.pack &&
		for pack in ofs ref empty
		do
			git index-pack $(of_opt $algo) -o $pack-v2.idx $pack.pack &&
			git index-pack $(of_opt $algo) --index-version=1 -o $pack-v1.idx $pack.pack &&
			git index-pack $(of_opt $algo) --index-version=2,0x400 -o $pack-large.idx $pack.pack ||
			return 1
		done >/dev/null
	) &&
	# the large-offset index really has 64-bit entries
	test $(wc -c <w-$algo/ofs-large.idx) -gt $(wc -c <w-$algo/ofs-v2.idx)
'

for pack in ofs ref empty
do
	for kind in v1 v2 large
	do
		test_expect_success "show-index: $pack pack, $kind index, outside a repository ($algo)" '
			compare_show_index . w-$algo/$pack-$kind.idx $(of_opt $algo) &&
			test $(cat actual.code) = 0
		'
	done
done

for kind in v1 v2 large
do
	test_expect_success "show-index: $kind index inside a $algo repository" '
		compare_show_index repo-$algo w-$algo/ofs-$kind.idx &&
		test $(cat actual.code) = 0
	'
done

test_expect_success "show-index of the repository's own index ($algo)" '
	compare_show_index repo-$algo "$(ls repo-$algo/.git/objects/pack/*.idx)"
'

test_expect_success "show-index lists every object with its offset ($algo)" '
	gitpack show-index $(of_opt $algo) <w-$algo/ofs-v2.idx >actual &&
	test_line_count = $(git -C repo-$algo count-objects -v | sed -n "s/^in-pack: //p") actual &&
	cut -d" " -f1,2 actual | sort -n >actual.sorted &&
	(cd repo-$algo && git verify-pack -v "$(pack_of .)") |
		awk "\$2 ~ /^(commit|tree|blob|tag)\$/ { print \$5, \$1 }" | sort -n >expect &&
	test_cmp expect actual.sorted
'

for kind in v1 v2 large
do
	test_expect_success "show-index fails on a truncated $kind index ($algo)" '
		cp w-$algo/ofs-$kind.idx short.idx &&
		truncate_file short.idx 1100 &&
		! git show-index $(of_opt $algo) <short.idx >/dev/null &&
		test_must_fail gitpack show-index $(of_opt $algo) <short.idx >/dev/null
	'
done

test_expect_success "show-index fails on an index cut inside the fanout ($algo)" '
	head -c 500 w-$algo/ofs-v2.idx >short.idx &&
	test_must_fail gitpack show-index $(of_opt $algo) <short.idx >/dev/null &&
	head -c 6 w-$algo/ofs-v2.idx >short.idx &&
	test_must_fail gitpack show-index $(of_opt $algo) <short.idx >/dev/null &&
	test_must_fail gitpack show-index $(of_opt $algo) </dev/null >/dev/null
'

test_expect_success "show-index fails on an unknown index version ($algo)" '
	cp w-$algo/ofs-v2.idx v3.idx &&
	corrupt_byte v3.idx 7 3 &&
	! git show-index $(of_opt $algo) <v3.idx >/dev/null &&
	test_must_fail gitpack show-index $(of_opt $algo) <v3.idx >/dev/null
'

test_expect_success "show-index fails on a bad 64-bit offset reference ($algo)" '
	cp w-$algo/ofs-large.idx badlarge.idx &&
	n=$(get_be32 badlarge.idx 1028) &&
	raw=$(test_oid_rawsz $algo) &&
	# find a 32-bit offset entry with the MSB set; point it past the table
	pos=0 &&
	found= &&
	while test $pos -lt $n
	do
		at=$((1032 + n * raw + n * 4 + pos * 4)) &&
		if test $(( $(pack_byte badlarge.idx $at) & 128 )) != 0
		then
			found=$at &&
			break
		fi
		pos=$((pos + 1))
	done &&
	test -n "$found" &&
	set_be32 badlarge.idx $found $((0x80000000 + n + 5)) &&
	! git show-index $(of_opt $algo) <badlarge.idx >/dev/null &&
	test_must_fail gitpack show-index $(of_opt $algo) <badlarge.idx >/dev/null
'

done

test_done
