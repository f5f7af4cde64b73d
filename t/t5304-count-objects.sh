#!/bin/sh

test_description='count-objects prints what git prints

Empty, loose-only, packed and mixed repositories (with loose objects that
are also packed), garbage in objects/ and objects/pack, alternates; SHA-1
and SHA-256; plain, -v and -H output compared with stock git.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# compare_count_objects REPO ARGS...: same stdout and exit code as git;
# stderr kept in expect.err / actual.err.
compare_count_objects () {
	gp_cco_repo_=$1
	shift
	(cd "$gp_cco_repo_" && git count-objects "$@") >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_cco_repo_" && gitpack count-objects "$@") >actual 2>actual.err
	echo $? >actual.code
	compare_results
}

# check_all REPO: plain, -v, -H and -v -H all match.
check_all () {
	compare_count_objects "$1" &&
	compare_count_objects "$1" -v &&
	compare_count_objects "$1" -H &&
	compare_count_objects "$1" -v -H
}

for algo in $test_hash_algos
do

test_expect_success "empty repository ($algo)" '
	git init -q --object-format=$algo empty-$algo &&
	check_all empty-$algo &&
	echo "0 objects, 0 kilobytes" >expect &&
	gitpack -C empty-$algo count-objects >actual &&
	test_cmp expect actual
'

test_expect_success "loose objects only ($algo)" '
	git init -q --object-format=$algo loose-$algo &&
	test_commit -C loose-$algo one &&
	test_commit -C loose-$algo two &&
	seq 1 20000 >loose-$algo/big &&
	git -C loose-$algo add big &&
	test_tick &&
	git -C loose-$algo commit -q -m big &&
	check_all loose-$algo &&
	grep "^count: 9$" expect
'

test_expect_success "one pack, no loose objects ($algo)" '
	pack_repo_create $algo packed-$algo small &&
	check_all packed-$algo &&
	grep "^count: 0$" expect &&
	grep "^packs: 1$" expect
'

test_expect_success "two packs, loose objects, some also packed ($algo)" '
	cp -R packed-$algo mixed-$algo &&
	pack_repo_history mixed-$algo 3 &&
	git -C mixed-$algo repack -q &&
	pack_repo_history mixed-$algo 2 &&
	check_all mixed-$algo &&
	grep "^packs: 2$" expect &&
	! grep "^prune-packable: 0$" expect
'

test_expect_success "garbage in objects/pack ($algo)" '
	cp -R mixed-$algo garbage-$algo &&
	p=garbage-$algo/.git/objects/pack &&
	echo junk >$p/random-file &&
	echo junk >$p/pack-0123456789abcdef.idx &&
	echo junk >$p/pack-fedcba9876543210.pack &&
	: >$p/pack-1111111111111111.keep &&
	seq 1 3000 >$p/tmp_pack_leftover &&
	mkdir $p/subdir &&
	check_all garbage-$algo &&
	! grep "^garbage: 0$" expect
'

test_expect_success "garbage warnings on stderr match git ($algo)" '
	compare_count_objects garbage-$algo -v &&
	test_cmp expect.err actual.err
'

test_expect_success "garbage in objects/XX and objects/ ($algo)" '
	cp -R mixed-$algo garbage2-$algo &&
	o=garbage2-$algo/.git/objects &&
	mkdir -p $o/ab $o/zz &&
	echo junk >$o/ab/not-an-object-name &&
	echo junk >$o/zz/0123 &&
	echo junk >$o/stray-file &&
	check_all garbage2-$algo &&
	compare_count_objects garbage2-$algo -v &&
	test_cmp expect.err actual.err
'

test_expect_success "a repository with an alternate ($algo)" '
	git clone -q --shared packed-$algo alt-$algo &&
	test_commit -C alt-$algo extra &&
	check_all alt-$algo &&
	compare_count_objects alt-$algo -v &&
	test_cmp expect.err actual.err
'

test_expect_success "count-objects from a subdirectory ($algo)" '
	mkdir -p loose-$algo/sub/dir &&
	compare_count_objects loose-$algo/sub/dir -v
'


test_expect_success "loose garbage is reported around the pack scan as git does ($algo)" '
	cp -R mixed-$algo order-$algo &&
	o=order-$algo/.git/objects &&
	mkdir -p $o/00 $o/ff &&
	echo junk >$o/00/before-any-object &&
	echo junk >$o/ff/after-the-objects &&
	echo junk >$o/pack/pack-garbage.tmp &&
	: >$o/pack/pack-lonely.keep &&
	compare_count_objects order-$algo -v &&
	test_cmp expect.err actual.err &&
	test_line_count = 4 actual.err
'

test_expect_success "pack garbage comes last when there are no loose objects ($algo)" '
	cp -R packed-$algo order2-$algo &&
	o=order2-$algo/.git/objects &&
	mkdir -p $o/00 &&
	echo junk >$o/00/junk &&
	echo junk >$o/pack/junk &&
	compare_count_objects order2-$algo -v &&
	test_cmp expect.err actual.err &&
	tail -n 1 actual.err | grep pack/junk
'

test_expect_success "loose entries that are not objects ($algo)" '
	cp -R mixed-$algo odd-$algo &&
	o=odd-$algo/.git/objects &&
	hexsz=$(test_oid_hexsz $algo) &&
	name=$(cd $o && ls -d [0-9a-f][0-9a-f]/* | head -n 1) &&
	upper=$(echo $name | tr a-f A-F) &&
	mkdir -p $o/$(dirname $upper) &&
	cp $o/$name $o/$upper &&
	mkdir -p $o/12 &&
	mkdir $o/12/$(printf "%0$((hexsz - 2))d" 5) &&
	ln -s ../../../../odd-$algo/.git/config $o/12/$(printf "%0$((hexsz - 2))d" 6) &&
	echo junk >$o/12/tmp_obj_leftover &&
	echo junk >$o/12/$(printf "%0$((hexsz - 3))d" 7) &&
	check_all odd-$algo &&
	test_cmp expect.err actual.err
'

test_expect_success "a fan-out entry that is not a directory ($algo)" '
	cp -R mixed-$algo fanout-$algo &&
	rm -rf fanout-$algo/.git/objects/80 &&
	echo junk >fanout-$algo/.git/objects/80 &&
	check_all fanout-$algo
'

test_expect_success "bare repository, from the git directory and below ($algo)" '
	git clone -q --bare mixed-$algo bare-$algo.git &&
	echo junk >bare-$algo.git/objects/pack/junk &&
	mkdir -p bare-$algo.git/objects/00 &&
	echo junk >bare-$algo.git/objects/00/junk &&
	check_all bare-$algo.git &&
	test_cmp expect.err actual.err &&
	grep " \./objects/pack/junk\$" actual.err &&
	compare_count_objects bare-$algo.git/objects -v &&
	test_cmp expect.err actual.err &&
	compare_count_objects bare-$algo.git/objects/pack -v &&
	test_cmp expect.err actual.err
'

test_expect_success "paths in warnings as GIT_DIR and GIT_OBJECT_DIRECTORY spell them ($algo)" '
	for env in "GIT_DIR=bare-$algo.git" "GIT_DIR=bare-$algo.git/" \
		"GIT_DIR=$(pwd)/bare-$algo.git" "GIT_DIR=./garbage-$algo/.git" \
		"GIT_DIR=garbage-$algo/.git GIT_WORK_TREE=garbage-$algo" \
		"GIT_DIR=garbage-$algo/.git GIT_OBJECT_DIRECTORY=garbage-$algo/.git/objects/" \
		"GIT_DIR=garbage-$algo/.git GIT_OBJECT_DIRECTORY=garbage-$algo/.git/objects//"
	do
		(
			export $env &&
			compare_count_objects . -v &&
			test_cmp expect.err actual.err
		) || return 1
	done &&
	mkdir -p garbage-$algo/sub &&
	(
		cd garbage-$algo/sub &&
		GIT_DIR=../.git GIT_WORK_TREE=.. &&
		export GIT_DIR GIT_WORK_TREE &&
		compare_count_objects . -v &&
		test_cmp expect.err actual.err
	) &&
	compare_count_objects garbage-$algo/sub -v &&
	test_cmp expect.err actual.err &&
	compare_count_objects garbage-$algo/.git -v &&
	test_cmp expect.err actual.err &&
	compare_count_objects garbage-$algo/.git/objects -v &&
	test_cmp expect.err actual.err
'

test_expect_success "relative and nested alternates ($algo)" '
	git init -q --object-format=$algo nested-$algo &&
	test_commit -C nested-$algo nested &&
	echo "../../../alt-$algo/.git/objects" >nested-$algo/.git/objects/info/alternates &&
	echo "# a comment" >>nested-$algo/.git/objects/info/alternates &&
	echo "$(pwd)/packed-$algo/.git/objects/" >>nested-$algo/.git/objects/info/alternates &&
	echo junk >packed-$algo/.git/objects/pack/alternate-junk &&
	test_when_finished "rm -f packed-$algo/.git/objects/pack/alternate-junk" &&
	check_all nested-$algo &&
	test_cmp expect.err actual.err &&
	grep "^alternate: .*/alt-$algo/.git/objects\$" actual &&
	test $(grep -c "^alternate: " actual) = 2
'

test_expect_success "alternates nested too deep, missing or not directories ($algo)" '
	for i in 0 1 2 3 4 5 6 7 8
	do
		git init -q --bare --object-format=$algo chain$i-$algo &&
		echo "object $i" | git -C chain$i-$algo hash-object -w --stdin >/dev/null || return 1
	done &&
	for i in 0 1 2 3 4 5 6 7
	do
		echo "$(pwd)/chain$((i + 1))-$algo/objects" >chain$i-$algo/objects/info/alternates ||
		return 1
	done &&
	{
		echo "$(pwd)/no-such-dir/objects" &&
		echo "../../chain3-$algo/objects" &&
		echo "$(pwd)/chain0-$algo/objects/info/alternates" &&
		echo "$(pwd)/chain0-$algo/objects/../objects"
	} >>chain0-$algo/objects/info/alternates &&
	check_all chain0-$algo &&
	test_cmp expect.err actual.err &&
	test $(grep -c "^alternate: " actual) = 6 &&
	grep "nesting too deep" actual.err &&
	(cd chain0-$algo && git cat-file --batch-all-objects --batch-check) >expect 2>expect.err &&
	(cd chain0-$algo && gitpack cat-file --batch-all-objects --batch-check) >actual 2>actual.err &&
	test_cmp expect actual &&
	test_cmp expect.err actual.err
'

test_expect_success "-H rounds as git does ($algo)" '
	git init -q --object-format=$algo human-$algo &&
	for size in 0 1 2 1023 1024 1025 1029 1030 1152 1535 1536 10239 10240 \
		1048575 1048576 1048577 1053818 1053819 1221591 1073741823 \
		1073741824 1073741825 1084479243 1610612736 4294967295 6442450943
	do
		truncate -s $size human-$algo/.git/objects/pack/garbage &&
		compare_count_objects human-$algo -v -H || return 1
	done
'


test_expect_success "-v names a damaged .idx as git does, relative where git is ($algo)" '
	git init -q --object-format=$algo smallidx-$algo &&
	test_commit -C smallidx-$algo one &&
	git -C smallidx-$algo repack -adq &&
	: >smallidx-$algo/.git/objects/pack/fake.idx &&
	: >smallidx-$algo/.git/objects/pack/fake.pack &&
	(cd smallidx-$algo && git count-objects -v 2>&1 >/dev/null | grep "^error") >expect &&
	(cd smallidx-$algo && gitpack count-objects -v 2>&1 >/dev/null) >actual &&
	grep "^error: index file .git/objects/pack/fake.idx is too small" actual &&
	grep "^error: index file .git/objects/pack/fake.idx is too small" expect
'

done

test_expect_success 'count-objects outside a repository fails' '
	mkdir not-a-repo &&
	(cd not-a-repo && test_must_fail gitpack count-objects)
'

test_done
