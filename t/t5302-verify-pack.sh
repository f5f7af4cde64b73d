#!/bin/sh

test_description='verify-pack prints what git prints

verify-pack, -v and -s on packs git wrote (OFS_DELTA, REF_DELTA, no
deltas, several at once), SHA-1 and SHA-256, compared with stock git; then
damaged packs and indexes must be rejected without a crash.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# compare_verify_pack DIR ARGS...: git and gitpack verify-pack, run in DIR,
# print the same and exit the same way.
compare_verify_pack () {
	gp_cvp_dir_=$1
	shift
	(cd "$gp_cvp_dir_" && git verify-pack "$@") >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_cvp_dir_" && gitpack verify-pack "$@") >actual 2>actual.err
	echo $? >actual.code
	compare_results
}

for algo in $test_hash_algos
do

test_expect_success "setup ($algo)" '
	pack_repo_create $algo repo-$algo small &&
	mkdir repo-$algo/w &&
	cp "$(pack_of repo-$algo)" repo-$algo/w/ofs.pack &&
	refpack=$(pack_ref_delta repo-$algo repo-$algo/w/ref) &&
	mv "$refpack" repo-$algo/w/ref.pack &&
	mv "${refpack%.pack}.idx" repo-$algo/w/ref.idx &&
	git -C repo-$algo rev-list --objects --all |
		git -C repo-$algo pack-objects -q --window=0 w/nodelta >/dev/null &&
	mv repo-$algo/w/nodelta-*.pack repo-$algo/w/nodelta.pack &&
	mv repo-$algo/w/nodelta-*.idx repo-$algo/w/nodelta.idx &&
	(
		cd repo-$algo/w &&
		chmod u+w *.pack *.idx &&
		git index-pack -o ofs.idx ofs.pack >/dev/null
	) &&
	# a second pack in the repository
	pack_repo_history repo-$algo 3 &&
	git -C repo-$algo repack -q -d &&
	test $(ls repo-$algo/.git/objects/pack/*.pack | wc -l) = 2
'

for pack in ofs ref nodelta
do
	for opt in -v -s --stat-only --verbose ""
	do
		test_expect_success "verify-pack $opt $pack.idx ($algo)" '
			compare_verify_pack repo-$algo/w $opt $pack.idx &&
			test $(cat actual.code) = 0
		'
	done

	test_expect_success "verify-pack -v $pack.pack names the .pack ($algo)" '
		compare_verify_pack repo-$algo/w -v $pack.pack
	'
done

test_expect_success "verify-pack -v on two packs at once ($algo)" '
	compare_verify_pack repo-$algo -v .git/objects/pack/pack-*.idx
'

test_expect_success "verify-pack -v with a path outside the current directory ($algo)" '
	mkdir -p repo-$algo/sub &&
	compare_verify_pack repo-$algo/sub -v ../w/ofs.idx
'

test_expect_success "verify-pack --object-format outside a repository ($algo)" '
	cp repo-$algo/w/ofs.pack repo-$algo/w/ofs.idx . &&
	compare_verify_pack . --object-format=$algo -v ofs.idx
'

# bad_pack CASE FILE-EXT OFFSET: copy of ofs.{pack,idx} in c-ALGO-CASE with
# the byte at OFFSET of the .FILE-EXT flipped.
bad_copy () {
	mkdir "repo-$algo/c-$1" &&
	cp repo-$algo/w/ofs.pack repo-$algo/w/ofs.idx "repo-$algo/c-$1/"
}

test_expect_success "corrupt: byte flipped in the middle of the pack ($algo)" '
	bad_copy mid &&
	f=repo-$algo/c-mid/ofs.pack &&
	corrupt_byte $f $(( $(wc -c <$f) / 2 )) &&
	(cd repo-$algo/c-mid && test_must_fail gitpack verify-pack -v ofs.idx >/dev/null)
'

test_expect_success "corrupt: pack trailer flipped ($algo)" '
	bad_copy trailer &&
	corrupt_byte repo-$algo/c-trailer/ofs.pack -1 &&
	(cd repo-$algo/c-trailer && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: object data flipped, trailer fixed ($algo)" '
	bad_copy data &&
	f=repo-$algo/c-data/ofs.pack &&
	corrupt_byte $f $(( $(wc -c <$f) / 3 )) &&
	fix_pack_trailer $f $algo &&
	(cd repo-$algo/c-data && test_must_fail gitpack verify-pack -v ofs.idx >/dev/null)
'

test_expect_success "corrupt: truncated pack ($algo)" '
	bad_copy short-pack &&
	truncate_file repo-$algo/c-short-pack/ofs.pack -100 &&
	(cd repo-$algo/c-short-pack && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: object name flipped in the .idx ($algo)" '
	bad_copy idx-name &&
	# first name of the v2 table: 8 header + 1024 fanout bytes
	corrupt_byte repo-$algo/c-idx-name/ofs.idx 1040 &&
	(cd repo-$algo/c-idx-name && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: offset flipped in the .idx ($algo)" '
	bad_copy idx-ofs &&
	f=repo-$algo/c-idx-ofs/ofs.idx &&
	n=$(get_be32 $f 1028) &&
	raw=$(test_oid_rawsz $algo) &&
	corrupt_byte $f $((1032 + n * raw + n * 4 + 3)) &&
	(cd repo-$algo/c-idx-ofs && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: truncated .idx ($algo)" '
	bad_copy short-idx &&
	truncate_file repo-$algo/c-short-idx/ofs.idx -10 &&
	(cd repo-$algo/c-short-idx && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: .idx of another pack ($algo)" '
	bad_copy other-idx &&
	cp repo-$algo/w/ref.idx repo-$algo/c-other-idx/ofs.idx &&
	(cd repo-$algo/c-other-idx && test_must_fail gitpack verify-pack ofs.idx)
'

test_expect_success "corrupt: missing .pack ($algo)" '
	bad_copy no-pack &&
	rm repo-$algo/c-no-pack/ofs.pack &&
	(cd repo-$algo/c-no-pack && test_must_fail gitpack verify-pack ofs.idx)
'

done

test_done
