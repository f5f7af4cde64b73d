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
	compare_results
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
			>expect.all && >actual.all &&
			for oid in $(cat $repo.sample)
			do
				(cd $repo && git cat-file $opt $oid) >>expect.all 2>&1 &&
				(cd $repo && gitpack cat-file $opt $oid) >>actual.all 2>&1 ||
				return 1
			done &&
			test_cmp expect.all actual.all
		'
	done

	test_expect_success "cat-file TYPE OID ($repo)" '
		>expect.all && >actual.all &&
		git -C $repo cat-file --batch-check="%(objectname) %(objecttype)" \
			<$repo.sample >pairs &&
		while read oid type
		do
			(cd $repo && git cat-file $type $oid) >>expect.all &&
			(cd $repo && gitpack cat-file $type $oid) >>actual.all ||
			return 1
		done <pairs &&
		test_cmp_bin expect.all actual.all
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

	test_expect_success "cat-file with ref names and abbreviated ids ($repo)" '
		short=$(head -n 1 $repo.all | cut -c1-12) &&
		>expect.all && >actual.all &&
		for arg in "-t HEAD" "-p HEAD" "-s main" "-t v1" "-p v1" "-p outer-tag" \
			"-t refs/heads/side" "-t tags/blob-tag" "commit v1" "-e HEAD" \
			"-t $short" "-p $short"
		do
			(cd $repo && git cat-file $arg) >>expect.all 2>&1 &&
			(cd $repo && gitpack cat-file $arg) >>actual.all 2>&1 ||
			return 1
		done &&
		test_cmp_bin expect.all actual.all
	'

	test_expect_success "cat-file --batch-check with ref names and abbreviated ids ($repo)" '
		short=$(head -n 1 $repo.all | cut -c1-12) &&
		test_write_lines HEAD main v1 blob-tag refs/tags/tree-tag nope $short >in &&
		compare_cat_file $repo in --batch-check
	'

	test_expect_success "cat-file with REV:path, REV~N, REV^{type} ($repo)" '
		>expect.all && >actual.all &&
		for arg in "-p HEAD:doc/readme" "-t HEAD^{tree}" "-p HEAD~2" \
			"tree HEAD" "-p HEAD:src" "-s v1^{commit}" "-p main~1^{tree}"
		do
			(cd $repo && git cat-file $arg) >>expect.all 2>&1 &&
			(cd $repo && gitpack cat-file $arg) >>actual.all 2>&1 ||
			return 1
		done &&
		test_cmp_bin expect.all actual.all
	'

	test_expect_success "cat-file --batch-check with REV:path and friends ($repo)" '
		test_write_lines HEAD:doc/readme HEAD:nope "HEAD^{tree}" HEAD~3 >in &&
		compare_cat_file $repo in --batch-check
	'
done


test_expect_success "cat-file -p on trees with unusual names and modes ($algo)" '
	git init -q --object-format=$algo odd-$algo &&
	(
		cd odd-$algo &&
		blob=$(echo x | git hash-object -w --stdin) &&
		commit=$(git commit-tree -m x $(git mktree </dev/null)) &&
		{
			for c in 001 007 010 011 012 013 014 015 033 037 042 134 177 200 377
			do
				printf "100644 blob %s\t\"n%s\"\n" $blob "\\$c" || exit 1
			done &&
			printf "100755 blob %s\texec\n" $blob &&
			printf "120000 blob %s\tlink\n" $blob &&
			printf "160000 commit %s\tsub\n" $commit &&
			printf "040000 tree %s\tdir\n" $(git mktree </dev/null) &&
			printf "100644 blob %s\tsp ace\n" $blob &&
			printf "100644 blob %s\t\"\\303\\274ni\"\n" $blob
		} | git mktree >../odd-$algo.tree &&
		# modes git would not write itself, shown canonicalised
		{
			for mode in 100664 100600 100744 040000 755 1 170000 120777
			do
				printf "$mode m$mode\0" &&
				hex_to_bytes $blob || exit 1
			done
		} | git hash-object -t tree -w --literally --stdin >../modes-$algo.tree
	) &&
	for tree in $(cat odd-$algo.tree modes-$algo.tree)
	do
		compare_cat_file odd-$algo /dev/null -p $tree &&
		compare_cat_file odd-$algo /dev/null tree $tree || return 1
	done &&
	compare_cat_file odd-$algo /dev/null -p $(cat odd-$algo.tree) &&
	grep "n\\\\001" actual &&
	grep "^160000 commit .*	sub\$" actual &&
	git -C odd-$algo config core.quotepath false &&
	compare_cat_file odd-$algo /dev/null -p $(cat odd-$algo.tree) &&
	git -C odd-$algo config --unset core.quotepath
'

test_expect_success "cat-file -p on malformed trees prints nothing and fails ($algo)" '
	blob=$(echo x | git -C odd-$algo hash-object -w --stdin) &&
	for body in "10x644 a" "100644 " "100644" "nohash" "trunc"
	do
		{
			case "$body" in
			trunc) printf "100644 a\0"; hex_to_bytes $blob; printf "100644 b\0abc" ;;
			nohash) printf "100644 a\0"; hex_to_bytes $blob; printf "100644 b\0" ;;
			*) printf "$body\0"; hex_to_bytes $blob ;;
			esac
		} | git -C odd-$algo hash-object -t tree -w --literally --stdin >tree &&
		compare_cat_file odd-$algo /dev/null -p $(cat tree) &&
		test_must_be_empty actual &&
		test "$(cat actual.code)" = 128 || return 1
	done
'

# git prints such entries; gitpack's tree parser refuses them (fsck
# calls them "fullPathname", an error).
test_expect_success GITPACK_IS_GITPACK "tree entries with a slash are refused ($algo)" '
	blob=$(echo x | git -C odd-$algo hash-object -w --stdin) &&
	tree=$( { printf "100644 a/b\0"; hex_to_bytes $blob; } |
		git -C odd-$algo hash-object -t tree -w --literally --stdin) &&
	test_expect_code 128 gitpack -C odd-$algo cat-file -p $tree >out 2>err &&
	test_must_be_empty out &&
	grep "tree $tree: tree entry 0 at offset 0: name contains ./." err
'

test_expect_success "the empty tree exists without being stored ($algo)" '
	git init -q --object-format=$algo noempty-$algo &&
	test_commit -C noempty-$algo one &&
	empty=$(git -C noempty-$algo hash-object -t tree /dev/null) &&
	! test -f noempty-$algo/.git/objects/$(echo $empty | cut -c1-2)/$(echo $empty | cut -c3-) &&
	compare_cat_file noempty-$algo /dev/null -t $empty &&
	compare_cat_file noempty-$algo /dev/null -s $empty &&
	compare_cat_file noempty-$algo /dev/null -e $empty &&
	compare_cat_file noempty-$algo /dev/null -p $empty &&
	compare_cat_file noempty-$algo /dev/null tree $empty &&
	compare_cat_file noempty-$algo /dev/null commit $empty &&
	echo $empty >in &&
	compare_cat_file noempty-$algo in --batch-check="$batch_format" &&
	compare_cat_file noempty-$algo in --batch &&
	compare_cat_file noempty-$algo /dev/null --batch-all-objects --batch-check &&
	# a stored copy does not change what is shown
	compare_cat_file packed-$algo in --batch-check="$batch_format" &&
	compare_cat_file loose-$algo in --batch-check="$batch_format" &&
	compare_cat_file loose-$algo /dev/null --batch-all-objects --batch-check="$batch_format"
'

test_expect_success "cat-file TYPE OID follows tags, and commits to trees ($algo)" '
	(
		cd packed-$algo &&
		for spec in "commit v1" "tree v1" "tree main" "commit outer-tag" \
			"tree outer-tag" "blob blob-tag" "tree tree-tag" "tag v1" \
			"blob main" "commit tree-tag" "tag main" "tree empty-tree"
		do
			set -- $spec &&
			echo "$1 $(git rev-parse $2)" || exit 1
		done
	) >pairs &&
	while read type oid
	do
		compare_cat_file packed-$algo /dev/null $type $oid || return 1
	done <pairs
'

test_expect_success "cat-file batch input: whitespace, CR, case, empty lines ($algo)" '
	oid=$(head -n 1 packed-$algo.all) &&
	upper=$(echo $oid | tr a-f A-F) &&
	{
		printf "%s\n" $oid "$upper" "" " $oid" "$oid " &&
		printf "%s\t tab and space \n" $oid &&
		printf "%s\r\n" $oid &&
		printf "%s\r\r\n" $oid &&
		printf "%s rest\r\n" $oid &&
		printf "not-an-id and more\n" &&
		printf "%s\r" $oid
	} >in &&
	compare_cat_file packed-$algo in --batch-check &&
	compare_cat_file packed-$algo in --batch-check="[%(objectname)] [%(rest)]" &&
	compare_cat_file packed-$algo in --batch="%(rest)|%(objecttype)" &&
	compare_cat_file packed-$algo in --batch-check --buffer
'

test_expect_success "cat-file batch format edge cases ($algo)" '
	head -n 3 packed-$algo.all >in &&
	for format in "%%(objectname)" "%%%(objecttype)%%" "%" "100%" "%x%(objectsize)" \
		"%(rest)%(rest)" "" "no atoms at all" "%(objectsize:disk)%(objectsize)"
	do
		compare_cat_file packed-$algo in --batch-check="$format" &&
		compare_cat_file packed-$algo in --batch="$format" || return 1
	done &&
	for format in "%(objectname" "%(" "%(foo)" "%()" "%(objectsize:foo)" "%(objectname:short)"
	do
		compare_cat_file packed-$algo in --batch-check="$format" &&
		test_must_be_empty actual &&
		test "$(cat actual.code)" = 128 || return 1
	done
'

test_expect_success "cat-file usage errors ($algo)" '
	oid=$(head -n 1 packed-$algo.all) &&
	>expect.codes && >actual.codes &&
	for args in "-t" "-t $oid $oid" "$oid" "blob $oid $oid" "-e -t $oid" \
		"--batch $oid" "--batch --batch-check" "--batch-all-objects" \
		"--buffer -t $oid" "--unordered" "--batch-all-objects -t $oid" \
		"-p --batch" "--no-such-option"
	do
		(cd packed-$algo && git cat-file $args) </dev/null >/dev/null 2>&1
		echo "$args: $?" >>expect.codes &&
		(cd packed-$algo && gitpack cat-file $args) </dev/null >/dev/null 2>&1
		echo "$args: $?" >>actual.codes || return 1
	done &&
	test_cmp expect.codes actual.codes &&
	for args in "-t nope" "-p 1234" "blob not-hex" "bogus $oid"
	do
		compare_cat_file packed-$algo /dev/null $args || return 1
	done
'


test_expect_success "a corrupt loose object fails the command ($algo)" '
	git init -q --object-format=$algo corrupt-$algo &&
	test_commit -C corrupt-$algo one &&
	blob=$(git -C corrupt-$algo rev-parse HEAD:one.t) &&
	file=corrupt-$algo/.git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-) &&
	chmod u+w $file &&
	printf garbage | dd of=$file bs=1 seek=2 conv=notrunc 2>/dev/null &&
	for opt in -t -s -p
	do
		compare_cat_file corrupt-$algo /dev/null $opt $blob || return 1
	done &&
	compare_cat_file corrupt-$algo /dev/null blob $blob &&
	compare_cat_file corrupt-$algo /dev/null -e $blob
'

# git reports the object as "missing" and goes on; gitpack stops there,
# naming the object, so that damage is not mistaken for absence.
test_expect_success GITPACK_IS_GITPACK "batch mode stops at a corrupt object ($algo)" '
	git -C corrupt-$algo rev-parse HEAD >in &&
	echo $blob >>in &&
	git -C corrupt-$algo rev-parse HEAD >>in &&
	test_expect_code 128 gitpack -C corrupt-$algo cat-file --batch-check <in >out 2>err &&
	test_line_count = 1 out &&
	grep "^fatal: unable to read object $blob\$" err &&
	test_expect_code 128 gitpack -C corrupt-$algo cat-file --batch-all-objects --batch-check >out 2>err &&
	grep "^fatal: unable to read object $blob\$" err
'

done

test_done
