#!/bin/sh

test_description='cat-file prints what git prints

Loose-only, packed-only (with deltas) and mixed repositories (loose objects,
two packs, objects both loose and packed), SHA-1 and SHA-256. Every
comparison runs stock git and gitpack on the same repository and input and
compares standard output and the exit code.'

. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# compare_cat_file REPO INPUT ARGS...: "git ARGS" and "gitpack ARGS" in
# REPO, each reading INPUT (a file, or /dev/null), print the same and exit
# the same way. The outputs stay in expect, actual (and .code).
compare_cat_file () {
	gp_ccf_repo_=$1
	gp_ccf_in_=$2
	shift 2
	(cd "$gp_ccf_repo_" && git cat-file "$@") <"$gp_ccf_in_" >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_ccf_repo_" && gitpack cat-file "$@") <"$gp_ccf_in_" >actual 2>actual.err
	echo $? >actual.code
	test_cmp expect actual &&
	test_cmp expect.code actual.code
}

batch_format='%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase) %(rest)'

for algo in $test_hash_algos
do

test_expect_success "setup: loose, packed and mixed repositories ($algo)" '
	pack_repo_create $algo base-$algo small &&
	cp -R base-$algo packed-$algo &&

	cp -R base-$algo loose-$algo &&
	mv loose-$algo/.git/objects/pack/pack-*.pack loose-$algo.pack &&
	rm -f loose-$algo/.git/objects/pack/* &&
	git -C loose-$algo unpack-objects -q <loose-$algo.pack &&
	rm -f loose-$algo.pack &&

	cp -R base-$algo mixed-$algo &&
	pack_repo_history mixed-$algo 3 &&
	# packs the new loose objects, but keeps them: objects both loose
	# and packed
	git -C mixed-$algo repack -q &&
	pack_repo_history mixed-$algo 3 &&

	test $(ls packed-$algo/.git/objects/pack/*.pack | wc -l) = 1 &&
	test $(ls mixed-$algo/.git/objects/pack/*.pack | wc -l) = 2 &&
	git -C loose-$algo count-objects -v >counts &&
	grep "^packs: 0" counts &&
	git -C mixed-$algo count-objects -v >counts &&
	! grep "^prune-packable: 0" counts &&
	! grep "^count: 0" counts &&
	zero=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
	# a sample of each type, and of deltas
	for kind in loose packed mixed
	do
		git -C $kind-$algo cat-file --batch-all-objects \
			--batch-check="%(objectname) %(objecttype) %(deltabase)" |
		awk -v z=$zero "
			\$3 != z && nd < 4 { print \$1; nd++; next }
			c[\$2]++ < 3 { print \$1 }
		" >$kind-$algo.sample &&
		git -C $kind-$algo cat-file --batch-all-objects \
			--batch-check="%(objectname)" >$kind-$algo.all || return 1
	done &&
	test_line_count -gt 12 packed-$algo.sample
'

for kind in loose packed mixed
do
	repo=$kind-$algo

	for opt in -t -s -e -p
	do
		test_expect_success "cat-file $opt on each type ($repo)" '
			for oid in $(cat $repo.sample)
			do
				(cd $repo && git cat-file $opt $oid) >>expect.all 2>&1 &&
				(cd $repo && gitpack cat-file $opt $oid) >>actual.all 2>&1 ||
				return 1
			done &&
			test_cmp expect.all actual.all &&
			rm -f expect.all actual.all
		'
	done

	test_expect_success "cat-file TYPE OID ($repo)" '
		git -C $repo cat-file --batch-check="%(objectname) %(objecttype)" \
			<$repo.sample >pairs &&
		while read oid type
		do
			(cd $repo && git cat-file $type $oid) >>expect.all &&
			(cd $repo && gitpack cat-file $type $oid) >>actual.all ||
			return 1
		done <pairs &&
		test_cmp_bin expect.all actual.all &&
		rm -f expect.all actual.all
	'

	test_expect_success "cat-file --batch-check, every object and missing ones ($repo)" '
		cp $repo.all in &&
		printf "%0$(test_oid_hexsz $algo)d\n" 0 >>in &&
		printf "%0$(test_oid_hexsz $algo)d\n" 1 >>in &&
		echo deadbeef >>in &&
		compare_cat_file $repo in --batch-check
	'

	test_expect_success "cat-file --batch, every object and missing ones ($repo)" '
		compare_cat_file $repo in --batch
	'

	test_expect_success "cat-file --batch-check=FORMAT with %(rest) ($repo)" '
		sed "s/\$/ some rest  text/" $repo.all >in &&
		printf "%0$(test_oid_hexsz $algo)d trailing words\n" 0 >>in &&
		compare_cat_file $repo in --batch-check="$batch_format"
	'

	test_expect_success "cat-file --batch=FORMAT ($repo)" '
		compare_cat_file $repo $repo.sample --batch="%(objecttype) %(objectname) %(objectsize)"
	'

	test_expect_success "cat-file --batch-all-objects --batch-check ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --batch-check
	'

	test_expect_success "cat-file --batch-all-objects --batch-check=FORMAT ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects \
			--batch-check="%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
	'

	test_expect_success "cat-file --batch-all-objects --batch ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --batch
	'

	test_expect_success "cat-file --batch-all-objects --unordered, as a set ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --unordered \
			--batch-check="%(objectname) %(objecttype) %(objectsize)" ||
		{
			sort expect >expect.sorted &&
			sort actual >actual.sorted &&
			test_cmp expect.sorted actual.sorted &&
			test_cmp expect.code actual.code
		}
	'

	test_expect_success "cat-file on a missing object ($repo)" '
		missing=$(printf "%0$(test_oid_hexsz $algo)d" 1) &&
		(
			cd $repo &&
			test_expect_code 1 gitpack cat-file -e $missing >../out 2>../err &&
			test_must_be_empty ../out &&
			test_must_be_empty ../err &&
			test_must_fail gitpack cat-file -t $missing &&
			test_must_fail gitpack cat-file -s $missing &&
			test_must_fail gitpack cat-file -p $missing &&
			test_must_fail gitpack cat-file blob $missing
		)
	'

	test_expect_success "cat-file with names, not object ids ($repo)" '
		for arg in "-t HEAD" "-p HEAD" "-s main" "-t v1" "-p v1" "-p outer-tag" \
			"-t refs/heads/side" "-p HEAD:doc/readme" "-t HEAD^{tree}" \
			"-p HEAD~2" "commit v1" "tree HEAD" "-p HEAD:src" "-e HEAD"
		do
			(cd $repo && git cat-file $arg) >>expect.all 2>&1 &&
			(cd $repo && gitpack cat-file $arg) >>actual.all 2>&1 ||
			return 1
		done &&
		test_cmp_bin expect.all actual.all &&
		rm -f expect.all actual.all
	'

	test_expect_success "cat-file --batch-check with names ($repo)" '
		short=$(head -n 1 $repo.all | cut -c1-12) &&
		test_write_lines HEAD main v1 blob-tag HEAD:doc/readme HEAD:nope \
			nope "HEAD^{tree}" $short >in &&
		compare_cat_file $repo in --batch-check
	'
done

done

test_done
