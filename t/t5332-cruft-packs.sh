#!/bin/sh

test_description='cruft packs: pack-objects --cruft and repack --cruft

A repository with three reachable commits in one pack, and unreachable
objects of known ages: two blobs in a pack 50 days old, a loose blob
of a day and one of 100 days, and an unreachable commit of a day whose
parent is an unreachable commit of 100 days (each with its tree and
blob). pack-objects --cruft, given the surviving pack and the pack to
go ("-pack-X.pack"), packs exactly what no surviving pack holds; the
.mtimes (read by test-tool pack-mtimes, which prints "<oid> <mtime>" in
.idx order as git'\''s own does) gives each object the mtime of its loose
file or of its pack, as git'\''s; --cruft-expiration drops the old
objects but keeps those a fresh one reaches, as git does; "now" drops
everything. repack --cruft -d leaves one pack of the reachable objects
and one cruft pack that stock git reads (cat-file, fsck) and takes
over (git repack --cruft -d keeps the same mtimes); repack -a -d -k,
-A -d, -A --unpack-unreachable=<date>, --cruft --cruft-expiration=now
leave the objects git leaves, packed and loose; what only a reflog or
the index holds stays; objects/info/packs and info/refs are written as
git writes them, and not with -n. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

now=$(date +%s)
old=$((now - 100 * 86400))
mid=$((now - 50 * 86400))
fresh=$((now - 86400))

# loose_path DIR OID: the loose file of OID in the repository DIR.
loose_path () {
	echo "$1/.git/objects/$(echo $2 | cut -c1-2)/$(echo $2 | cut -c3-)"
}

# age DIR EPOCH OID...: set the mtime of loose objects.
age () {
	gp_age_dir_=$1
	gp_age_t_=$2
	shift 2
	for gp_age_oid_
	do
		touch -d "@$gp_age_t_" "$(loose_path $gp_age_dir_ $gp_age_oid_)" || return 1
	done
}

# loose DIR: the sorted names of the loose objects of DIR.
loose () {
	find "$1/.git/objects" -path "*/objects/[0-9a-f][0-9a-f]/*" -type f |
	sed "s|.*/objects/\(..\)/|\1|" | sort
}

# packed ALGO DIR [mtimes|plain]: the sorted names of the objects of the
# packs of DIR: all of them, or those of cruft packs (mtimes) only, or
# of the others (plain).
packed () {
	for gp_pk_idx_ in "$2"/.git/objects/pack/pack-*.idx
	do
		test -f "$gp_pk_idx_" || continue
		case "$3" in
		mtimes) test -f "${gp_pk_idx_%.idx}.mtimes" || continue ;;
		plain) test -f "${gp_pk_idx_%.idx}.mtimes" && continue ;;
		esac
		git show-index --object-format=$1 <"$gp_pk_idx_" | cut -d" " -f2
	done | sort
}

# cruft_mtimes DIR: "<oid> <mtime>" of every cruft pack of DIR, sorted.
cruft_mtimes () {
	for gp_cm_ in "$1"/.git/objects/pack/pack-*.mtimes
	do
		test -f "$gp_cm_" || continue
		test-tool pack-mtimes "$gp_cm_" || return 1
	done | sort
}

# repack_both ALGO OPTS...: copies of the repository (mtimes kept),
# r-git repacked by stock git, r-gp by gitpack, with OPTS; then the
# same objects in plain packs, in cruft packs and loose.
repack_both () {
	gp_rb_algo_=$1
	shift
	rm -rf r-git r-gp &&
	cp -pR $r r-git &&
	cp -pR $r r-gp &&
	git -C r-git repack -q "$@" &&
	gitpack -C r-gp repack -q "$@" &&
	for gp_rb_what_ in plain mtimes
	do
		packed $gp_rb_algo_ r-git $gp_rb_what_ >expect.$gp_rb_what_ &&
		packed $gp_rb_algo_ r-gp $gp_rb_what_ >actual.$gp_rb_what_ &&
		test_cmp expect.$gp_rb_what_ actual.$gp_rb_what_ || return 1
	done &&
	loose r-git >expect.loose &&
	loose r-gp >actual.loose &&
	test_cmp expect.loose actual.loose
}

for algo in $test_hash_algos
do

r=repo-$algo

test_expect_success "setup: a reachable pack, unreachable objects packed and loose, old and fresh ($algo)" '
	git init -q -b main --object-format=$algo $r &&
	git -C $r config gc.auto 0 &&
	for i in 1 2 3
	do
		test_commit -C $r c$i || return 1
	done &&
	git -C $r repack -adq &&
	ls $r/.git/objects/pack/pack-*.pack >keep &&
	test_line_count = 1 keep &&
	# two unreachable blobs in a pack of 50 days
	u1=$(echo "unreachable one" | git -C $r hash-object -w --stdin) &&
	u2=$(echo "unreachable two" | git -C $r hash-object -w --stdin) &&
	gone=$(printf "%s\n" $u1 $u2 | git -C $r pack-objects -q "$TRASH_DIRECTORY/$r/.git/objects/pack/pack") &&
	git -C $r prune-packed &&
	touch -d @$mid $r/.git/objects/pack/pack-$gone.pack &&
	# loose ones of a day and of 100 days
	u3=$(echo "fresh and loose" | git -C $r hash-object -w --stdin) &&
	u4=$(echo "old and loose" | git -C $r hash-object -w --stdin) &&
	age $r $fresh $u3 &&
	age $r $old $u4 &&
	# an old unreachable commit, and a fresh one on top of it
	bo=$(echo "blob of the old commit" | git -C $r hash-object -w --stdin) &&
	to=$(printf "100644 blob %s\told\n" $bo | git -C $r mktree) &&
	co=$(echo old | git -C $r commit-tree $to) &&
	bf=$(echo "blob of the fresh commit" | git -C $r hash-object -w --stdin) &&
	tf=$(printf "100644 blob %s\tfresh\n" $bf | git -C $r mktree) &&
	cf=$(echo fresh | git -C $r commit-tree -p $co $tf) &&
	age $r $old $bo $to $co &&
	age $r $fresh $bf $tf $cf &&
	echo "$(basename $(cat keep))" >$r.list &&
	echo "-pack-$gone.pack" >>$r.list &&
	# what no surviving pack holds, with its loose or pack mtime
	printf "%s\n" $u1 $u2 | sort >$r.old-packed &&
	printf "%s $mid\n" $u1 $u2 >$r.unreachable &&
	printf "%s $fresh\n" $u3 $bf $tf $cf >>$r.unreachable &&
	printf "%s $old\n" $u4 $bo $to $co >>$r.unreachable &&
	sort -o $r.unreachable $r.unreachable &&
	# after --cruft-expiration=10.days.ago: the fresh ones and what they reach
	printf "%s $fresh\n" $u3 $bf $tf $cf >$r.fresh &&
	printf "%s $old\n" $bo $to $co >$r.rescued &&
	sort -o $r.fresh $r.fresh &&
	sort -o $r.rescued $r.rescued &&
	cut -d" " -f1 $r.rescued >$r.rescued.oids &&
	git -C $r cat-file --batch-all-objects --batch-check="%(objectname)" >all &&
	git -C $r rev-list --objects --all | cut -d" " -f1 | sort >reachable &&
	comm -23 all reachable >expect &&
	cut -d" " -f1 $r.unreachable >actual &&
	test_cmp expect actual
'

out="$TRASH_DIRECTORY/out-$algo"

test_expect_success "pack-objects --cruft: what no surviving pack holds, with loose and pack mtimes, as git ($algo)" '
	rm -rf "$out" && mkdir -p "$out/gp" "$out/git" &&
	gitpack -C $r pack-objects -q --cruft "$out/gp/p" <$r.list >hash &&
	git -C $r pack-objects -q --cruft "$out/git/p" <$r.list >git.hash &&
	p="$out/gp/p-$(cat hash)" &&
	test_path_is_file "$p.pack" &&
	test_path_is_file "$p.idx" &&
	test-tool pack-mtimes "$p.mtimes" >actual &&
	test_cmp $r.unreachable actual &&
	test-tool pack-mtimes "$out/git/p-$(cat git.hash).mtimes" >expect &&
	test_cmp expect actual &&
	git -C $r verify-pack "$p.idx" &&
	git -C $r index-pack -o "$out/gp/git.idx" "$p.pack" >/dev/null &&
	test_cmp_bin "$out/gp/git.idx" "$p.idx"
'

test_expect_success "--cruft-expiration: old objects go, unless a fresh one reaches them, as git ($algo)" '
	rm -rf "$out" && mkdir -p "$out/gp" "$out/git" &&
	gitpack -C $r pack-objects -q --cruft --cruft-expiration=10.days.ago "$out/gp/p" <$r.list >hash &&
	git -C $r pack-objects -q --cruft --cruft-expiration=10.days.ago "$out/git/p" <$r.list >git.hash &&
	test-tool pack-mtimes "$out/gp/p-$(cat hash).mtimes" >actual &&
	test-tool pack-mtimes "$out/git/p-$(cat git.hash).mtimes" >expect &&
	cut -d" " -f1 expect >expect.names &&
	cut -d" " -f1 actual >actual.names &&
	test_cmp expect.names actual.names &&
	sort $r.fresh $r.rescued | cut -d" " -f1 >want &&
	test_cmp want actual.names &&
	# the fresh ones keep their mtime, as in git
	grep -f $r.fresh actual >actual.fresh &&
	test_cmp $r.fresh actual.fresh &&
	grep -f $r.fresh expect >expect.fresh &&
	test_cmp $r.fresh expect.fresh &&
	git -C $r verify-pack "$out/gp/p-$(cat hash).idx"
'

test_expect_success "--cruft-expiration: what a fresh object saves expires with it, as in git ($algo)" '
	# git gives these the expiration date itself, so that they expire
	# at the next run unless a fresh object still reaches them
	rm -rf "$out" && mkdir -p "$out" &&
	gitpack -C $r pack-objects -q --cruft --cruft-expiration=@$(( $fresh - 100 )) "$out/p" <$r.list >hash &&
	test-tool pack-mtimes "$out/p-$(cat hash).mtimes" >actual &&
	cut -d" " -f1 $r.rescued | sed "s/\$/ $(( $fresh - 100 ))/" >expect &&
	grep -f $r.rescued.oids actual >actual.rescued &&
	test_cmp expect actual.rescued
'

test_expect_success "--cruft-expiration=now: an empty cruft pack, as git ($algo)" '
	rm -rf "$out" && mkdir -p "$out/gp" "$out/git" &&
	gitpack -C $r pack-objects -q --cruft --cruft-expiration=now "$out/gp/p" <$r.list >hash &&
	git -C $r pack-objects -q --cruft --cruft-expiration=now "$out/git/p" <$r.list >expect &&
	test_cmp expect hash &&
	test-tool pack-mtimes "$out/gp/p-$(cat hash).mtimes" >actual &&
	test_must_be_empty actual &&
	test_cmp_bin "$out/git/p-$(cat hash).pack" "$out/gp/p-$(cat hash).pack"
'

test_expect_success "repack --cruft -d: a reachable pack and a cruft pack git reads ($algo)" '
	rm -rf r-gp && cp -pR $r r-gp &&
	gitpack -C r-gp repack -q --cruft -d &&
	ls r-gp/.git/objects/pack/*.pack >packs &&
	test_line_count = 2 packs &&
	ls r-gp/.git/objects/pack/*.mtimes >cruft &&
	test_line_count = 1 cruft &&
	cruft_mtimes r-gp >actual &&
	test_cmp $r.unreachable actual &&
	packed $algo r-gp plain >actual &&
	test_cmp reachable actual &&
	loose r-gp >actual &&
	test_must_be_empty actual &&
	# stock git reads every object, fsck passes
	git -C r-gp cat-file --batch-all-objects --batch-check="%(objectname)" >actual &&
	test_cmp all actual &&
	cut -d" " -f1 $r.unreachable | git -C r-gp cat-file --batch >/dev/null &&
	git -C r-gp fsck --full 2>err &&
	! grep -v "^dangling\|^notice" err &&
	for idx in r-gp/.git/objects/pack/*.idx
	do
		git -C r-gp verify-pack "$TRASH_DIRECTORY/$idx" || return 1
	done
'

test_expect_success "stock git repack --cruft -d afterwards takes the cruft pack over, mtimes and all ($algo)" '
	git -C r-gp repack -q --cruft -d &&
	cruft_mtimes r-gp >actual &&
	test_cmp $r.unreachable actual &&
	git -C r-gp fsck --full 2>err &&
	! grep -v "^dangling\|^notice" err &&
	# and gitpack takes over the cruft pack git wrote
	gitpack -C r-gp repack -q --cruft -d &&
	cruft_mtimes r-gp >actual &&
	test_cmp $r.unreachable actual
'

test_expect_success "repack --cruft -d leaves the packed and loose objects git leaves ($algo)" '
	repack_both $algo --cruft -d &&
	test_file_not_empty actual.mtimes &&
	cruft_mtimes r-git >expect &&
	cruft_mtimes r-gp >actual &&
	test_cmp expect actual
'

test_expect_success "repack --cruft --cruft-expiration=10.days.ago -d: as git ($algo)" '
	repack_both $algo --cruft --cruft-expiration=10.days.ago -d &&
	sort $r.fresh $r.rescued | cut -d" " -f1 >want &&
	test_cmp want actual.mtimes
'

test_expect_success "repack --cruft --cruft-expiration=now -d: no cruft object, as git ($algo)" '
	repack_both $algo --cruft --cruft-expiration=now -d &&
	test_must_be_empty actual.mtimes
'

test_expect_success "repack -a -d -k: the unreachable objects stay, in the new pack, as git ($algo)" '
	repack_both $algo -a -d -k &&
	test_must_be_empty actual.mtimes &&
	test_cmp all actual.plain
'

test_expect_success "repack -A -d: the unreachable objects of the packs go loose, as git ($algo)" '
	repack_both $algo -A -d &&
	test_cmp reachable actual.plain &&
	cut -d" " -f1 $r.unreachable >want &&
	test_cmp want actual.loose
'

test_expect_success "repack -A -d --unpack-unreachable=10.days.ago: only those newer go loose, as git ($algo)" '
	repack_both $algo -A -d --unpack-unreachable=10.days.ago &&
	test_cmp reachable actual.plain &&
	# the 50-day-old packed blobs are dropped; the loose ones stay
	cut -d" " -f1 $r.unreachable >unreachable &&
	comm -23 unreachable $r.old-packed >want &&
	test_cmp want actual.loose
'

test_expect_success "repack keeps what only a reflog or the index holds, as git ($algo)" '
	rm -rf ri-$algo &&
	git init -q -b main --object-format=$algo ri-$algo &&
	test_commit -C ri-$algo one &&
	test_commit -C ri-$algo two &&
	test_commit -C ri-$algo --no-tag three &&
	gone=$(git -C ri-$algo rev-parse HEAD) &&
	git -C ri-$algo reset -q --hard HEAD^ &&
	echo staged >ri-$algo/staged.t &&
	git -C ri-$algo add staged.t &&
	staged=$(git -C ri-$algo rev-parse :staged.t) &&
	! git -C ri-$algo rev-list --objects --all | grep $gone &&
	for opts in "-a -d" "--cruft -d" "-A -d"
	do
		rm -rf ri-gp ri-git &&
		cp -pR ri-$algo ri-gp &&
		cp -pR ri-$algo ri-git &&
		gitpack -C ri-gp repack -q $opts &&
		git -C ri-git repack -q $opts &&
		packed $algo ri-gp plain >actual &&
		packed $algo ri-git plain >expect &&
		test_cmp expect actual &&
		grep "^$gone\$" actual &&
		grep "^$staged\$" actual &&
		grep "^$(git -C ri-gp rev-parse $gone^{tree})\$" actual &&
		loose ri-gp >actual &&
		test_must_be_empty actual || return 1
	done
'

test_expect_success "repack writes objects/info/packs and info/refs as git does; -n writes neither ($algo)" '
	rm -rf si-gp si-git &&
	cp -pR $r si-gp &&
	cp -pR $r si-git &&
	rm -f si-gp/.git/objects/info/packs si-gp/.git/info/refs &&
	git -C si-gp tag -a -m "a tag" annotated &&
	git -C si-git tag -a -m "a tag" annotated &&
	gitpack -C si-gp repack -q -a -d &&
	git -C si-git repack -q -a -d &&
	test_cmp si-git/.git/info/refs si-gp/.git/info/refs &&
	grep "	refs/tags/annotated^{}\$" si-gp/.git/info/refs &&
	pack=$(basename $(ls si-gp/.git/objects/pack/*.pack)) &&
	printf "P %s\n\n" $pack >expect &&
	test_cmp expect si-gp/.git/objects/info/packs &&
	rm -f si-gp/.git/objects/info/packs si-gp/.git/info/refs &&
	test_commit -C si-gp more &&
	gitpack -C si-gp repack -q -a -d -n &&
	test_path_is_missing si-gp/.git/objects/info/packs &&
	test_path_is_missing si-gp/.git/info/refs
'


test_expect_success "gc.recentObjectsHook: what it names, and what that reaches, stays recent; a failing hook stops the repack ($algo)" '
	rm -rf rh-$algo &&
	cp -pR $r rh-$algo &&
	u1=$(head -n 1 $r.old-packed) &&
	u4=$(grep " $old\$" $r.unreachable | cut -d" " -f1 | grep -v -F -f $r.rescued.oids) &&
	test -n "$u4" &&
	# a tag nobody refers to, old, naming the old packed blob
	tag=$(printf "object %s\ntype blob\ntag held\ntagger T <t@example.com> 1234567890 +0000\n\nheld\n" $u1 |
		git -C rh-$algo mktag) &&
	age rh-$algo $old $tag &&
	printf "#!/bin/sh\necho %s\necho %s\n" $tag $u4 >rh-$algo/hook &&
	chmod +x rh-$algo/hook &&
	git -C rh-$algo config gc.recentObjectsHook ./hook &&
	cp -pR rh-$algo rh-A-$algo &&
	cp -pR rh-$algo rh-fail-$algo &&
	gitpack -C rh-$algo repack -q --cruft --cruft-expiration=10.days.ago -d &&
	packed $algo rh-$algo mtimes >actual &&
	{ cut -d" " -f1 $r.fresh $r.rescued && echo $u1 && echo $u4 && echo $tag; } | sort >want &&
	test_cmp want actual &&
	git -C rh-$algo fsck --full --no-dangling &&
	# -A with an expiry: the tip and what it reaches go into the new pack
	gitpack -C rh-A-$algo repack -q -A -d --unpack-unreachable=10.days.ago &&
	packed $algo rh-A-$algo plain >actual &&
	grep "^$u1\$" actual &&
	grep "^$tag\$" actual &&
	! grep "^$(sed -n 2p $r.old-packed)\$" actual &&
	# a hook that fails, or prints what is not a name: nothing changes
	for hook in false "echo not-a-name"
	do
		git -C rh-fail-$algo config gc.recentObjectsHook "$hook" &&
		ls rh-fail-$algo/.git/objects/pack >before &&
		test_must_fail gitpack -C rh-fail-$algo repack -q --cruft --cruft-expiration=10.days.ago -d 2>err &&
		grep "unable to enumerate additional recent objects" err &&
		ls rh-fail-$algo/.git/objects/pack >after &&
		test_cmp before after || return 1
	done &&
	grep "invalid extra cruft tip: .not-a-name." err
'

test_expect_success "--cruft-expiration=now: an object dated in the future is still young, as git ($algo)" '
	rm -rf rf-$algo &&
	cp -pR $r rf-$algo &&
	u3=$(grep " $fresh\$" $r.unreachable | head -n 1 | cut -d" " -f1) &&
	age rf-$algo $((now + 100000)) $(cut -d" " -f1 $r.unreachable | grep -v -F -f $r.old-packed) &&
	r_save=$r && r=rf-$algo &&
	repack_both $algo --cruft --cruft-expiration=now -d &&
	r=$r_save &&
	test_file_not_empty actual.mtimes
'

done

test_done
