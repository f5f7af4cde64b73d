#!/bin/sh

test_description='repack --geometric: promisor packs, alternates

A partial clone (--filter=blob:none over file://) that fetched three
times has five promisor packs, three small packs of local commits and
loose objects: repack --geometric=2 -d rolls the promisor packs up into
one promisor pack and the others into one plain pack (as Git 2.55 does;
2.39 refuses). A clone borrowing from an alternate, with local packs and
loose objects: --geometric=2 -d copies the alternate'\''s objects in, -l
leaves them out, as git does; beside an alternate, -l with a bitmap
asked for warns "disabling bitmap writing, as some objects are not
being packed" and writes none, as git does. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# pack_sets ALGO DIR: one line per pack of DIR: "promisor" or "plain",
# then a digest of its sorted object names; sorted. Then the number of
# loose objects.
pack_sets () {
	for gp_ps_idx_ in "$2"/.git/objects/pack/pack-*.idx
	do
		if test -f "${gp_ps_idx_%.idx}.promisor"
		then
			printf "promisor "
		else
			printf "plain "
		fi &&
		git show-index --object-format=$1 <"$gp_ps_idx_" | cut -d" " -f2 | sort |
			git hash-object --stdin || return 1
	done | sort &&
	find "$2/.git/objects" -path "*/objects/[0-9a-f][0-9a-f]/*" -type f | wc -l
}

# names_of ALGO DIR KIND: the sorted object names of the packs of DIR of
# KIND (promisor or plain), each once.
names_of () {
	for gp_no_idx_ in "$2"/.git/objects/pack/pack-*.idx
	do
		if test -f "${gp_no_idx_%.idx}.promisor"
		then
			test "$3" = promisor || continue
		else
			test "$3" = plain || continue
		fi &&
		git show-index --object-format=$1 <"$gp_no_idx_" | cut -d" " -f2 || return 1
	done | sort -u
}

# loose_names DIR: the sorted names of the loose objects of DIR.
loose_names () {
	find "$1/.git/objects" -path "*/objects/[0-9a-f][0-9a-f]/*" -type f |
	sed "s|.*/objects/\(..\)/|\1|" | sort
}

# commit_file DIR N: a file of N lines, added and committed.
commit_file () {
	test_seq $(($2 * 100)) >"$1/f$2" &&
	git -C "$1" add "f$2" &&
	test_tick &&
	git -C "$1" commit -q -m "f$2"
}

# local_work DIR: three local commits each repacked into a small pack,
# and a fourth left loose.
local_work () {
	for gp_lw_i_ in 1 2 3
	do
		echo "local $gp_lw_i_" >"$1/local$gp_lw_i_" &&
		git -C "$1" add "local$gp_lw_i_" &&
		test_tick &&
		git -C "$1" commit -q -m "local $gp_lw_i_" &&
		git -C "$1" repack -q || return 1
	done &&
	echo "local 4" >"$1/local4" &&
	git -C "$1" add local4 &&
	test_tick &&
	git -C "$1" commit -q -m "local 4"
}

for algo in $test_hash_algos
do

test_expect_success "setup: a partial clone with promisor packs, local packs and loose objects ($algo)" '
	git init -q -b main --object-format=$algo server-$algo &&
	commit_file server-$algo 1 &&
	commit_file server-$algo 2 &&
	git -C server-$algo config uploadpack.allowFilter true &&
	git -C server-$algo config uploadpack.allowAnySHA1InWant true &&
	git clone -q --no-local --filter=blob:none "file://$TRASH_DIRECTORY/server-$algo" partial-$algo &&
	git -C partial-$algo config gc.auto 0 &&
	for i in 3 4 5
	do
		commit_file server-$algo $i &&
		git -C partial-$algo fetch -q origin || return 1
	done &&
	local_work partial-$algo &&
	ls partial-$algo/.git/objects/pack/*.promisor >promisor &&
	test $(wc -l <promisor) -ge 4 &&
	ls partial-$algo/.git/objects/pack/*.pack >packs &&
	test $(wc -l <packs) -ge 7 &&
	names_of $algo partial-$algo promisor >partial-$algo.promisor &&
	names_of $algo partial-$algo plain >partial-$algo.plain &&
	loose_names partial-$algo >>partial-$algo.plain &&
	sort -u -o partial-$algo.plain partial-$algo.plain &&
	test_file_not_empty partial-$algo.plain
'

test_expect_success GITPACK_IS_GITPACK "--geometric=2 -d: the promisor packs roll up into a promisor pack of their own ($algo)" '
	rm -rf p-gp && cp -pR partial-$algo p-gp &&
	gitpack -C p-gp repack -q --geometric=2 -d &&
	ls p-gp/.git/objects/pack/*.pack >packs &&
	test_line_count = 2 packs &&
	ls p-gp/.git/objects/pack/*.promisor >promisor &&
	test_line_count = 1 promisor &&
	names_of $algo p-gp promisor >actual &&
	test_cmp partial-$algo.promisor actual &&
	names_of $algo p-gp plain >actual &&
	test_cmp partial-$algo.plain actual &&
	loose_names p-gp >actual &&
	test_must_be_empty actual &&
	git -C p-gp fsck 2>err &&
	! grep -v "^dangling\|^notice" err &&
	git -C p-gp log --oneline >/dev/null
'

test_expect_success GIT_NEW "--geometric=2 -d on the partial clone: the packs of a newer git ($algo)" '
	rm -rf p-gp p-git && cp -pR partial-$algo p-gp && cp -pR partial-$algo p-git &&
	gitpack -C p-gp repack -q --geometric=2 -d &&
	git_new -C p-git repack -q --geometric=2 -d &&
	pack_sets $algo p-git >expect &&
	pack_sets $algo p-gp >actual &&
	test_cmp expect actual
'

test_expect_success "setup: a clone borrowing from an alternate, local packs and loose objects ($algo)" '
	git init -q -b main --object-format=$algo base-$algo &&
	for i in 1 2 3 4
	do
		commit_file base-$algo $i || return 1
	done &&
	git -C base-$algo repack -adq &&
	git clone -q -s base-$algo borrow-$algo &&
	git -C borrow-$algo config gc.auto 0 &&
	local_work borrow-$algo &&
	test_path_is_file borrow-$algo/.git/objects/info/alternates &&
	names_of $algo borrow-$algo plain >local &&
	loose_names borrow-$algo >>local &&
	sort -u -o borrow-$algo.local local &&
	names_of $algo base-$algo plain >borrow-$algo.alternate &&
	sort -u borrow-$algo.local borrow-$algo.alternate >borrow-$algo.all
'

test_expect_success "--geometric=2 -d without -l: the objects of the alternate are copied in, as git ($algo)" '
	rm -rf b-gp b-git && cp -pR borrow-$algo b-gp && cp -pR borrow-$algo b-git &&
	gitpack -C b-gp repack -q --geometric=2 -d &&
	git -C b-git repack -q --geometric=2 -d &&
	pack_sets $algo b-git >expect &&
	pack_sets $algo b-gp >actual &&
	test_cmp expect actual &&
	names_of $algo b-gp plain >actual &&
	test_cmp borrow-$algo.all actual
'

test_expect_success "--geometric=2 -d -l: only the local objects, as git ($algo)" '
	rm -rf b-gp b-git && cp -pR borrow-$algo b-gp && cp -pR borrow-$algo b-git &&
	gitpack -C b-gp repack -q --geometric=2 -d -l &&
	git -C b-git repack -q --geometric=2 -d -l &&
	pack_sets $algo b-git >expect &&
	pack_sets $algo b-gp >actual &&
	test_cmp expect actual &&
	names_of $algo b-gp plain >actual &&
	test_cmp borrow-$algo.local actual
'

test_expect_success GITPACK_IS_GITPACK "--geometric=2 -d -l --write-midx -b beside an alternate: no bitmap, a warning ($algo)" '
	rm -rf b-gp && cp -pR borrow-$algo b-gp &&
	gitpack -C b-gp repack -q --geometric=2 -d -l --write-midx --write-bitmap-index 2>err &&
	grep "^warning: disabling bitmap writing, as some objects are not being packed\$" err &&
	! ls b-gp/.git/objects/pack/*.bitmap &&
	names_of $algo b-gp plain >actual &&
	test_cmp borrow-$algo.local actual &&
	git -C b-gp multi-pack-index verify
'

test_expect_success GIT_NEW "--geometric=2 -d -l --write-midx -b beside an alternate: as a newer git ($algo)" '
	rm -rf b-gp b-git && cp -pR borrow-$algo b-gp && cp -pR borrow-$algo b-git &&
	gitpack -C b-gp repack -q --geometric=2 -d -l --write-midx --write-bitmap-index 2>actual.err &&
	git_new -C b-git repack -q --geometric=2 -d -l --write-midx --write-bitmap-index 2>expect.err &&
	test_cmp expect.err actual.err &&
	pack_sets $algo b-git >expect &&
	pack_sets $algo b-gp >actual &&
	test_cmp expect actual
'

test_expect_success "-a -d -l -b beside an alternate: the warning of git, no bitmap ($algo)" '
	rm -rf b-gp b-git && cp -pR borrow-$algo b-gp && cp -pR borrow-$algo b-git &&
	gitpack -C b-gp repack -q -a -d -l -b 2>actual.err &&
	git -C b-git repack -q -a -d -l -b 2>expect.err &&
	test_cmp expect.err actual.err &&
	grep "disabling bitmap writing, as some objects are not being packed" actual.err &&
	! ls b-gp/.git/objects/pack/*.bitmap &&
	pack_sets $algo b-git >expect &&
	pack_sets $algo b-gp >actual &&
	test_cmp expect actual
'

done

test_done
