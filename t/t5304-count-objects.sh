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
	test_cmp expect actual &&
	test_cmp expect.code actual.code
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

done

test_expect_success 'count-objects outside a repository fails' '
	mkdir not-a-repo &&
	(cd not-a-repo && test_must_fail gitpack count-objects)
'

test_done
