#!/bin/sh

test_description='pack-refs and prune-packed, against stock git

gitpack pack-refs [--all] [--no-prune] writes the packed-refs bytes git
writes and leaves the same loose refs (t3211 has every option). gitpack
prune-packed removes the loose objects that are in a pack and the
emptied fan-out directories, as git prune-packed leaves the object
directory; -n prints the "rm -f" lines git prints and removes nothing.
SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

tree_of () {
	(cd $1 && find $2 | sort)
}

for algo in sha1 sha256
do

test_expect_success "pack-refs --all: the bytes and loose refs of git pack-refs --all ($algo)" '
	rm -rf pr-$algo pr-git-$algo &&
	git init -q -b main --object-format=$algo pr-$algo &&
	test_commit -C pr-$algo one &&
	test_commit -C pr-$algo two &&
	git -C pr-$algo tag -a -m annotated ann one &&
	git -C pr-$algo branch deep/er/b one &&
	git -C pr-$algo symbolic-ref refs/heads/sym refs/heads/main &&
	git -C pr-$algo pack-refs --all &&
	git -C pr-$algo branch late two &&
	git -C pr-$algo update-ref refs/heads/deep/er/b two &&
	cp -R pr-$algo pr-git-$algo &&
	gitpack -C pr-$algo pack-refs --all &&
	git -C pr-git-$algo pack-refs --all &&
	test_cmp_bin pr-git-$algo/.git/packed-refs pr-$algo/.git/packed-refs &&
	tree_of pr-git-$algo/.git refs >expect &&
	tree_of pr-$algo/.git refs >actual &&
	test_cmp expect actual &&
	git -C pr-$algo for-each-ref >actual &&
	git -C pr-git-$algo for-each-ref >expect &&
	test_cmp expect actual
'

test_expect_success "pack-refs --all --no-prune keeps the loose refs, as git ($algo)" '
	git -C pr-$algo branch np one &&
	git -C pr-git-$algo branch np one &&
	gitpack -C pr-$algo pack-refs --all --no-prune &&
	git -C pr-git-$algo pack-refs --all --no-prune &&
	test_path_is_file pr-$algo/.git/refs/heads/np &&
	test_cmp_bin pr-git-$algo/.git/packed-refs pr-$algo/.git/packed-refs &&
	tree_of pr-git-$algo/.git refs >expect &&
	tree_of pr-$algo/.git refs >actual &&
	test_cmp expect actual
'

test_expect_success "pack-refs without --all: the tags and what is packed, as git ($algo)" '
	git -C pr-$algo branch na one &&
	git -C pr-git-$algo branch na one &&
	git -C pr-$algo tag lt two &&
	git -C pr-git-$algo tag lt two &&
	gitpack -C pr-$algo pack-refs &&
	git -C pr-git-$algo pack-refs &&
	test_path_is_file pr-$algo/.git/refs/heads/na &&
	test_path_is_missing pr-$algo/.git/refs/tags/lt &&
	test_cmp_bin pr-git-$algo/.git/packed-refs pr-$algo/.git/packed-refs &&
	tree_of pr-git-$algo/.git refs >expect &&
	tree_of pr-$algo/.git refs >actual &&
	test_cmp expect actual
'

test_expect_success "prune-packed: the loose objects in a pack go, as with git ($algo)" '
	rm -rf pp-$algo pp-git-$algo all-$algo &&
	git init -q --bare --object-format=$algo pp-$algo &&
	for i in $(test_seq 1 20)
	do
		echo blob-$i | git -C pp-$algo hash-object -w --stdin >>all-$algo || return 1
	done &&
	head -n 12 all-$algo | git -C pp-$algo pack-objects -q objects/pack/pack >/dev/null &&
	cp -R pp-$algo pp-git-$algo &&
	(cd pp-$algo && gitpack prune-packed -n) | sort >actual &&
	(cd pp-git-$algo && git prune-packed -n) | sort >expect &&
	test_line_count = 12 expect &&
	test_cmp expect actual &&
	# -n removed nothing
	tree_of pp-git-$algo objects >expect &&
	tree_of pp-$algo objects >actual &&
	test_cmp expect actual &&
	gitpack -C pp-$algo prune-packed -q &&
	git -C pp-git-$algo prune-packed -q &&
	tree_of pp-git-$algo objects >expect &&
	tree_of pp-$algo objects >actual &&
	test_cmp expect actual &&
	test $(git -C pp-$algo count-objects | cut -d" " -f1) = 8 &&
	git -C pp-$algo cat-file --batch-check <all-$algo >check &&
	! grep missing check &&
	git -C pp-$algo fsck --no-progress
'

test_expect_success "prune-packed: a pack whose .pack does not open does not count ($algo)" '
	rm -rf pg-$algo two-$algo &&
	git init -q --bare --object-format=$algo pg-$algo &&
	for i in 1 2
	do
		echo gone-$i | git -C pg-$algo hash-object -w --stdin >>two-$algo || return 1
	done &&
	git -C pg-$algo pack-objects -q objects/pack/pack <two-$algo >/dev/null &&
	f=$(echo pg-$algo/objects/pack/pack-*.pack) && head -c 8 "$f" >"$f.short" && mv -f "$f.short" "$f" &&
	gitpack -C pg-$algo prune-packed -q &&
	test $(git -C pg-$algo count-objects | cut -d" " -f1) = 2 &&
	git -C pg-$algo cat-file --batch-check <two-$algo >check &&
	! grep missing check
'

test_expect_success "prune-packed: bad option is a usage error ($algo)" '
	test_expect_code 129 gitpack -C pp-$algo prune-packed --bogus 2>err &&
	grep "usage: git prune-packed" err
'

done

test_done
