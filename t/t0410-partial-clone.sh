#!/bin/sh

test_description='partial clones: promisor packs, promisor remotes

repack -a -d in a repository with a promisor remote rolls every
promisor pack into one new promisor pack and leaves its objects out of
the main pack, as git does; the walk stops at promisor objects, so that
a missing object a promisor pack refers to (a parent, a tree) neither
stops the repack nor is fetched. A lazy fetch asks each promisor remote
in turn (extensions.partialClone first, then remote.<name>.promisor)
until one gives the object. index-pack --promisor copies the local
objects a received pack builds on into a promisor pack, so that a
later repack keeps them. SHA-1 and SHA-256; stock git is the oracle
for the packs'"'"' contents.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# packed ALGO DIR [promisor|plain]: sorted names of the objects of DIR's
# promisor packs, or of its other packs.
packed () {
	for gp_pk_idx_ in "$2"/.git/objects/pack/pack-*.idx
	do
		test -f "$gp_pk_idx_" || continue
		case "$3" in
		promisor) test -f "${gp_pk_idx_%.idx}.promisor" || continue ;;
		plain) test -f "${gp_pk_idx_%.idx}.promisor" && continue ;;
		esac
		git show-index --object-format=$1 <"$gp_pk_idx_" | cut -d" " -f2
	done | sort
}

# as_promisor DIR: pack the names on stdin into a promisor pack of DIR.
as_promisor () {
	gp_ap_hash_=$(git -C "$1" pack-objects -q .git/objects/pack/pack) &&
	>"$1/.git/objects/pack/pack-$gp_ap_hash_.promisor" &&
	echo $gp_ap_hash_
}

for algo in $test_hash_algos
do

test_expect_success "repack -a -d: one promisor pack of the promisor objects, the rest beside it, as git ($algo)" '
	r=roll-$algo &&
	git init -q --object-format=$algo $r &&
	test_commit -C $r one &&
	test_commit -C $r two &&
	git -C $r rev-parse one^{tree} | as_promisor $r &&
	git -C $r rev-parse two^{tree} | as_promisor $r &&
	git -C $r config core.repositoryformatversion 1 &&
	git -C $r config extensions.partialclone "nowhere" &&
	test $(ls $r/.git/objects/pack/*.promisor | wc -l) = 2 &&
	for opts in "-a -d" "-A -d" "--cruft -d"
	do
		rm -rf $r.git $r.gp &&
		cp -R $r $r.git &&
		cp -R $r $r.gp &&
		git -C $r.git repack -q $opts &&
		gitpack -C $r.gp repack -q $opts &&
		test $(ls $r.gp/.git/objects/pack/*.promisor | wc -l) = 1 &&
		packed $algo $r.git promisor >expect &&
		packed $algo $r.gp promisor >actual &&
		test_cmp expect actual &&
		git -C $r rev-parse one^{tree} two^{tree} | sort >trees &&
		test_cmp trees actual &&
		packed $algo $r.git plain >expect &&
		packed $algo $r.gp plain >actual &&
		test_cmp expect actual &&
		grep "^$(git -C $r rev-parse one)\$" actual &&
		! grep -F -f trees actual || return 1
	done
'

test_expect_success "repack stops at promisor objects: a missing parent or tree they refer to neither fails nor is fetched ($algo)" '
	r=stop-$algo &&
	git init -q --object-format=$algo $r &&
	git -C $r config core.repositoryformatversion 1 &&
	git -C $r config extensions.partialclone "nowhere" &&
	for i in 1 2 3 4
	do
		git -C $r commit -q --allow-empty -m c$i || return 1
	done &&
	one=$(git -C $r rev-parse HEAD~3) &&
	git -C $r rev-parse HEAD~2 | as_promisor $r &&
	git -C $r rev-parse HEAD~1 | as_promisor $r &&
	rm $r/.git/objects/$(echo $one | cut -c1-2)/$(echo $one | cut -c3-) &&
	for opts in "-a -d" "-A -d" "--cruft -d"
	do
		rm -rf $r.gp &&
		cp -R $r $r.gp &&
		gitpack -C $r.gp repack -q $opts 2>err &&
		! grep "nowhere" err &&
		git -C $r.gp cat-file -e HEAD~1 &&
		git -C $r.gp cat-file -e HEAD~2 &&
		git -C $r.gp cat-file -e HEAD || return 1
	done &&
	# a tree only an annotated tag of a promisor pack names, then lost
	t=tree-$algo &&
	git init -q --object-format=$algo $t &&
	test_commit -C $t only &&
	tree=$(git -C $t rev-parse HEAD^{tree}) &&
	git -C $t tag -a -m m held $tree &&
	git -C $t rev-parse held | as_promisor $t &&
	git -C $t tag -d held >/dev/null &&
	rm $t/.git/objects/$(echo $tree | cut -c1-2)/$(echo $tree | cut -c3-) &&
	git -C $t config core.repositoryformatversion 1 &&
	git -C $t config extensions.partialclone "nowhere" &&
	cp -R $t $t.git &&
	git -C $t.git repack -q -a -d &&
	gitpack -C $t repack -q -a -d 2>err &&
	! grep "nowhere" err &&
	packed $algo $t.git plain >expect &&
	packed $algo $t plain >actual &&
	test_cmp expect actual &&
	! grep "^$tree\$" actual &&
	grep "^$(git -C $t rev-parse HEAD)\$" actual
'

test_expect_success "a lazy fetch asks each promisor remote in turn until one has the object ($algo)" '
	s1=server1-$algo &&
	s2=server2-$algo &&
	c=client-$algo &&
	git init -q --object-format=$algo $s1 &&
	test_commit -C $s1 base &&
	git -C $s1 config uploadpack.allowfilter 1 &&
	git -C $s1 config uploadpack.allowanysha1inwant 1 &&
	git clone -q --no-local --filter=blob:none "file://$TRASH_DIRECTORY/$s1" $c &&
	git init -q --object-format=$algo $s2 &&
	echo "only on the second server" >$s2/only.t &&
	git -C $s2 add only.t &&
	git -C $s2 commit -q -m only &&
	git -C $s2 config uploadpack.allowanysha1inwant 1 &&
	blob=$(git -C $s2 rev-parse HEAD:only.t) &&
	git -C $c remote add second "file://$TRASH_DIRECTORY/$s2" &&
	git -C $c config remote.second.promisor true &&
	gitpack -C $c cat-file -p $blob >actual 2>err &&
	echo "only on the second server" >expect &&
	test_cmp expect actual &&
	git -C $c cat-file -e $blob
'


test_expect_success "index-pack --promisor copies the local commits a fetched pack builds on into a promisor pack, so gc keeps them ($algo)" '
	full=full-$algo &&
	part=part-$algo &&
	git init -q -b main --object-format=$algo $full &&
	test_commit -C $full one &&
	git -C $full config uploadpack.allowfilter 1 &&
	git -C $full config uploadpack.allowanysha1inwant 1 &&
	git -C $full config receive.denyCurrentBranch ignore &&
	git clone -q --no-local --filter=blob:none "file://$TRASH_DIRECTORY/$full" $part &&
	test_commit -C $part local &&
	local=$(git -C $part rev-parse HEAD) &&
	git -C $part push -q origin main &&
	git -C $full reset -q --hard main &&
	test_commit -C $full three &&
	git -C $part fetch -q origin &&
	# index the same received pack again with gitpack, as fetch runs it
	git -C $full pack-objects -q --revs --stdout --filter=blob:none <<-EOF >recv.pack &&
	main
	^$local
	EOF
	gitpack -C $part index-pack --stdin --fix-thin --promisor <recv.pack >/dev/null &&
	# the local commit now sits in a promisor pack too
	for idx in $part/.git/objects/pack/*.idx
	do
		test -f "${idx%.idx}.promisor" || continue
		git show-index --object-format=$algo <"$idx" | cut -d" " -f2 || return 1
	done >in-promisor &&
	grep "^$local\$" in-promisor &&
	git -C $part merge -q --ff-only origin/main &&
	gitpack -C $part repack -a -d -q &&
	git -C $part cat-file -e $local &&
	git -C $part fsck --connectivity-only
'

done

test_done
