#!/bin/sh

test_description='repack with cruft packs: without -d, --expire-to, split,
beside --geometric and --write-midx

A repository with reachable commits in one pack and unreachable objects
of known ages (a pack of 50 days, loose blobs of a day and of 100 days).
repack --cruft without -d writes the cruft pack too and removes nothing;
--expire-to keeps what -d prunes in a cruft pack of its own elsewhere,
mtimes and all; --max-pack-size, --max-cruft-size and pack.packSizeLimit
cut cruft packs; each as stock git does. The cruft pack'"'"'s delta search
takes repack.cruftWindow, else --window (seen in the trace2 stream).
--geometric leaves cruft packs out of the progression but packs loose
copies of their objects again; --write-midx prefers a reachable pack to
a cruft one, and with repack.midxMustContainCruft=false leaves the cruft
pack out of the MIDX while the new pack takes the once-cruft objects
the refs reach again (checked as git 2.55 does it when GIT_NEW names
one). SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-midx.sh"

now=$(date +%s)
old=$((now - 100 * 86400))
mid=$((now - 50 * 86400))
fresh=$((now - 86400))

# loose_path DIR OID: the loose file of OID in the repository DIR.
loose_path () {
	echo "$1/.git/objects/$(echo $2 | cut -c1-2)/$(echo $2 | cut -c3-)"
}

# loose DIR: the sorted names of the loose objects of DIR.
loose () {
	find "$1/.git/objects" -path "*/objects/[0-9a-f][0-9a-f]/*" -type f |
	sed "s|.*/objects/\(..\)/|\1|" | sort
}

# packed ALGO PACKDIR plain|mtimes: the sorted object names of the plain
# (or of the cruft) packs of PACKDIR.
packed () {
	for gp_pk_idx_ in "$2"/pack-*.idx
	do
		test -f "$gp_pk_idx_" || continue
		case "$3" in
		mtimes) test -f "${gp_pk_idx_%.idx}.mtimes" || continue ;;
		plain) test -f "${gp_pk_idx_%.idx}.mtimes" && continue ;;
		esac
		git show-index --object-format=$1 <"$gp_pk_idx_" | cut -d" " -f2
	done | sort
}

# cruft_mtimes PACKDIR: "<oid> <mtime>" of every cruft pack of PACKDIR, sorted.
cruft_mtimes () {
	for gp_cm_ in "$1"/pack-*.mtimes
	do
		test -f "$gp_cm_" || continue
		test-tool pack-mtimes "$gp_cm_" || return 1
	done | sort
}

# same_result ALGO A B: the repositories A and B have the same objects in
# plain packs, in cruft packs (with the same mtimes) and loose.
same_result () {
	packed $1 $2/.git/objects/pack plain >expect &&
	packed $1 $3/.git/objects/pack plain >actual &&
	test_cmp expect actual &&
	cruft_mtimes $2/.git/objects/pack >expect &&
	cruft_mtimes $3/.git/objects/pack >actual &&
	test_cmp expect actual &&
	loose $2 >expect &&
	loose $3 >actual &&
	test_cmp expect actual
}

# both DIR: fresh copies DIR-git and DIR-gp (mtimes kept).
both () {
	rm -rf $1-git $1-gp &&
	cp -pR $1 $1-git &&
	cp -pR $1 $1-gp
}

# random_blob DIR SEED: a loose blob of 1.2 MB of random bytes; its name.
random_blob () {
	perl -e 'binmode STDOUT; srand($ARGV[0]); print map { chr(int(rand(256))) } 1..1200000' $2 |
	git -C $1 hash-object -w --stdin
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
	u1=$(echo "unreachable one" | git -C $r hash-object -w --stdin) &&
	u2=$(echo "unreachable two" | git -C $r hash-object -w --stdin) &&
	gone=$(printf "%s\n" $u1 $u2 | git -C $r pack-objects -q "$TRASH_DIRECTORY/$r/.git/objects/pack/pack") &&
	git -C $r prune-packed &&
	touch -d @$mid $r/.git/objects/pack/pack-$gone.pack &&
	u3=$(echo "fresh and loose" | git -C $r hash-object -w --stdin) &&
	u4=$(echo "old and loose" | git -C $r hash-object -w --stdin) &&
	touch -d @$fresh "$(loose_path $r $u3)" &&
	touch -d @$old "$(loose_path $r $u4)" &&
	printf "%s $mid\n" $u1 $u2 >$r.unreachable &&
	printf "%s $fresh\n" $u3 >>$r.unreachable &&
	printf "%s $old\n" $u4 >>$r.unreachable &&
	sort -o $r.unreachable $r.unreachable &&
	printf "%s $fresh\n" $u3 >$r.fresh &&
	git -C $r rev-list --objects --all | cut -d" " -f1 | sort >$r.reachable &&
	git -C $r cat-file --batch-all-objects --batch-check="%(objectname)" >$r.all
'

test_expect_success "repack --cruft without -d: a cruft pack too, and every old pack stays, as git ($algo)" '
	both $r &&
	git -C $r-git repack -q --cruft &&
	gitpack -C $r-gp repack -q --cruft &&
	same_result $algo $r-git $r-gp &&
	cruft_mtimes $r-gp/.git/objects/pack >actual &&
	test_cmp $r.unreachable actual &&
	ls $r/.git/objects/pack/*.pack | sed "s|.*/||" >before &&
	for p in $(cat before)
	do
		test_path_is_file $r-gp/.git/objects/pack/$p || return 1
	done &&
	git -C $r-gp fsck --full 2>err &&
	! grep -v "^dangling\|^notice" err
'

test_expect_success "--expire-to: what -d prunes goes into a cruft pack there, mtimes and all, as git ($algo)" '
	both $r &&
	for side in git gp
	do
		git init -q --bare --object-format=$algo $r-$side/expired.git || return 1
	done &&
	git -C $r-git repack -q --cruft --cruft-expiration=10.days.ago -d \
		--expire-to=expired.git/objects/pack/pack &&
	gitpack -C $r-gp repack -q --cruft --cruft-expiration=10.days.ago -d \
		--expire-to=expired.git/objects/pack/pack &&
	same_result $algo $r-git $r-gp &&
	cruft_mtimes $r-gp/.git/objects/pack >actual &&
	test_cmp $r.fresh actual &&
	# the expired objects are kept there, with their mtimes
	cruft_mtimes $r-git/expired.git/objects/pack >expect &&
	cruft_mtimes $r-gp/expired.git/objects/pack >actual &&
	test_cmp expect actual &&
	comm -23 $r.unreachable $r.fresh >expired &&
	test_cmp expired actual &&
	git -C $r-gp/expired.git verify-pack "$TRASH_DIRECTORY"/$r-gp/expired.git/objects/pack/pack-*.idx &&
	# together the two hold every object there was (the expired loose
	# object stays loose until a prune, as in git)
	{
		git -C $r-gp cat-file --batch-all-objects --batch-check="%(objectname)" &&
		git -C $r-gp/expired.git cat-file --batch-all-objects --batch-check="%(objectname)"
	} | sort -u >actual &&
	test_cmp $r.all actual
'

test_expect_success "--expire-to without -d prunes nothing, and writes nothing there, as git ($algo)" '
	both $r &&
	mkdir -p $r-gp/elsewhere &&
	gitpack -C $r-gp repack -q --cruft --cruft-expiration=10.days.ago \
		--expire-to=elsewhere/pack &&
	git -C $r-git repack -q --cruft --cruft-expiration=10.days.ago &&
	same_result $algo $r-git $r-gp &&
	ls $r-gp/elsewhere >actual &&
	test_must_be_empty actual
'

test_expect_success "cruft packs are cut by --max-pack-size, --max-cruft-size and pack.packSizeLimit, as git ($algo)" '
	rm -rf big-$algo &&
	git init -q -b main --object-format=$algo big-$algo &&
	test_commit -C big-$algo base &&
	foo=$(random_blob big-$algo 1) &&
	bar=$(random_blob big-$algo 2) &&
	touch -d @$mid "$(loose_path big-$algo $foo)" &&
	touch -d @$old "$(loose_path big-$algo $bar)" &&
	printf "%s\n" "$foo $mid" "$bar $old" | sort >big-$algo.cruft &&
	for opts in "--max-pack-size=1m" "-c pack.packSizeLimit=1m" "--max-cruft-size=1m"
	do
		both big-$algo &&
		case "$opts" in
		-c*) gitpack -C big-$algo-gp $opts repack -q --cruft -d &&
		     git -C big-$algo-git $opts repack -q --cruft -d ;;
		--max-cruft-size*)
		   # (git 2.39 has no --max-cruft-size; its --max-pack-size is the same here)
		   gitpack -C big-$algo-gp repack -q --cruft -d $opts &&
		   git -C big-$algo-git repack -q --cruft -d --max-pack-size=1m ;;
		*) gitpack -C big-$algo-gp repack -q --cruft -d $opts &&
		   git -C big-$algo-git repack -q --cruft -d $opts ;;
		esac &&
		same_result $algo big-$algo-git big-$algo-gp &&
		ls big-$algo-gp/.git/objects/pack/*.mtimes >cruft &&
		test_line_count = 2 cruft &&
		for m in $(cat cruft)
		do
			test-tool pack-mtimes $m >objects &&
			test_line_count = 1 objects || return 1
		done &&
		cruft_mtimes big-$algo-gp/.git/objects/pack >actual &&
		test_cmp big-$algo.cruft actual || return 1
	done &&
	# not cut: one cruft pack of both
	both big-$algo &&
	gitpack -C big-$algo-gp repack -q --cruft -d --max-cruft-size=10m &&
	ls big-$algo-gp/.git/objects/pack/*.mtimes >cruft &&
	test_line_count = 1 cruft
'

test_expect_success GITPACK_IS_GITPACK "the cruft pack's delta search: repack.cruftWindow, else --window, as git passes them ($algo)" '
	both $r &&
	GIT_TRACE2_EVENT="$TRASH_DIRECTORY/trace1" gitpack -C $r-gp \
		-c pack.window=1 -c repack.cruftWindow=2 -c repack.cruftDepth=7 \
		repack -q --cruft --window=3 &&
	grep "\"key\":\"pack-objects\",\"value\":\"--window=2 --depth=7 .*--cruft\"" trace1 &&
	grep "\"key\":\"pack-objects\",\"value\":\"--window=3 --depth=50 .*--all\"" trace1 &&
	both $r &&
	GIT_TRACE2_EVENT="$TRASH_DIRECTORY/trace2" gitpack -C $r-gp \
		-c pack.window=2 repack -q --cruft --window=3 &&
	grep "\"key\":\"pack-objects\",\"value\":\"--window=3 .*--cruft\"" trace2
'

g=geo-$algo

test_expect_success "setup: a reachable pack, a cruft pack, an unreachable commit loose again ($algo)" '
	git init -q -b main --object-format=$algo $g &&
	git -C $g config gc.auto 0 &&
	test_commit -C $g reachable &&
	git -C $g repack -adq &&
	git -C $g checkout -q --orphan other &&
	git -C $g rm -q -rf . &&
	test_commit -C $g --no-tag cruft &&
	git -C $g rev-parse HEAD >$g.cruft-commit &&
	git -C $g checkout -q main &&
	git -C $g branch -D other &&
	git -C $g reflog expire --all --expire=all &&
	# a cruft pack, and the loose copies stay (no -d)
	git -C $g repack -q --cruft &&
	ls $g/.git/objects/pack/*.mtimes >cruft &&
	test_line_count = 1 cruft &&
	test_file_not_empty $(loose_path $g $(cat $g.cruft-commit))
'

test_expect_success "--geometric=2 -d leaves the cruft pack alone; nothing else to do, as git ($algo)" '
	rm -rf $g-gp && cp -pR $g $g-gp &&
	git -C $g-gp prune-packed &&
	find $g-gp/.git/objects/pack -type f | sort >before &&
	gitpack -C $g-gp repack -q --geometric=2 -d &&
	find $g-gp/.git/objects/pack -type f | sort >after &&
	test_cmp before after
'

test_expect_success "--geometric=2 -d packs loose copies of cruft objects again, as git ($algo)" '
	git -C $g update-ref refs/heads/other $(cat $g.cruft-commit) &&
	test_commit -C $g reachable2 &&
	both $g &&
	git -C $g-git repack -q --geometric=2 -d &&
	gitpack -C $g-gp repack -q --geometric=2 -d &&
	same_result $algo $g-git $g-gp &&
	git -C $g-gp rev-list --objects $(cat $g.cruft-commit) reachable..reachable2 |
		cut -d" " -f1 | sort >want &&
	ls -t $g-gp/.git/objects/pack/*.idx | head -n 1 >newest &&
	git show-index --object-format=$algo <$(cat newest) | cut -d" " -f2 | sort >got &&
	test_cmp want got &&
	git -C $g-gp fsck --full 2>err &&
	! grep -v "^dangling\|^notice" err
'

test_expect_success "--geometric --write-midx -b: the MIDX prefers the new pack to the cruft pack ($algo)" '
	rm -rf pref-$algo &&
	git init -q -b main --object-format=$algo pref-$algo &&
	test_commit -C pref-$algo base &&
	test_commit -C pref-$algo --no-tag cruft &&
	p=pref-$algo/.git/objects/pack &&
	plain=$(echo base | git -C pref-$algo pack-objects -q --revs .git/objects/pack/pack) &&
	# a cruft pack that sorts first and is older, as midx_write would prefer
	cruft=$(echo pack-$plain.pack | git -C pref-$algo pack-objects -q --cruft .git/objects/pack/pack-A) &&
	touch -d @$mid $p/pack-A-$cruft.pack &&
	test_commit -C pref-$algo other &&
	git -C pref-$algo repack -q -d &&
	gitpack -C pref-$algo repack -q --geometric 2 -d --write-midx --write-bitmap-index &&
	ls $p/*.pack >packs &&
	test_line_count = 2 packs &&
	test-tool midx-dump --object-format=$algo pseudo $p | head -n 1 >first &&
	id=$(cut -d" " -f3 <first) &&
	preferred=$(test-tool midx-dump --object-format=$algo packs $p | sed -n "$((id + 1))p") &&
	test_path_is_missing $p/${preferred%.idx}.mtimes &&
	test_path_is_file $p/pack-A-$cruft.mtimes &&
	test-tool midx-dump --object-format=$algo packs $p | grep pack-A-$cruft &&
	git -C pref-$algo rev-list --count --objects --all >expect &&
	git -C pref-$algo rev-list --use-bitmap-index --count --objects --all >actual &&
	test_cmp expect actual &&
	gitpack -C pref-$algo multi-pack-index verify
'

# exclude_setup DIR: a pack of commit one, a cruft pack of commits two
# and three (unreachable), then two merged back and four on top (loose);
# repack.midxMustContainCruft=false.
exclude_setup () {
	rm -rf $1 &&
	git init -q -b main --object-format=$algo $1 &&
	git -C $1 config repack.midxMustContainCruft false &&
	test_commit -C $1 one &&
	test_commit -C $1 --no-tag two &&
	two=$(git -C $1 rev-parse HEAD) &&
	test_commit -C $1 --no-tag three &&
	git -C $1 reset -q --hard one &&
	git -C $1 reflog expire --all --expire=all &&
	git -C $1 repack -q --cruft -d &&
	git -C $1 merge -q $two &&
	test_commit -C $1 four
}

test_expect_success "repack.midxMustContainCruft=false: the MIDX leaves the cruft pack out, the new pack takes what the refs reach ($algo)" '
	exclude_setup ex-$algo &&
	p=ex-$algo/.git/objects/pack &&
	cruft=$(basename $(ls $p/*.mtimes) .mtimes) &&
	gitpack -C ex-$algo repack -q -d --geometric=2 --write-midx --write-bitmap-index &&
	test-tool midx-dump --object-format=$algo packs $p >midx-packs &&
	! grep $cruft midx-packs &&
	test_path_is_file $p/$cruft.pack &&
	git -C ex-$algo rev-list --objects --all | cut -d" " -f1 | sort >reachable &&
	test-tool midx-dump --object-format=$algo offsets $p | cut -d" " -f1 | sort >midx-objects &&
	test_cmp reachable midx-objects &&
	gitpack -C ex-$algo multi-pack-index verify &&
	git -C ex-$algo rev-list --use-bitmap-index --count --objects --all >actual &&
	test_line_count = 1 actual &&
	test "$(cat actual)" = "$(wc -l <reachable)" &&
	git -C ex-$algo fsck --full 2>err &&
	! grep -v "^dangling\|^notice" err
'

test_expect_success "repack.midxMustContainCruft=true (the default): the cruft pack stays in the MIDX ($algo)" '
	exclude_setup in-$algo &&
	p=in-$algo/.git/objects/pack &&
	cruft=$(basename $(ls $p/*.mtimes) .mtimes) &&
	gitpack -C in-$algo -c repack.midxMustContainCruft=true repack -q -d \
		--geometric=2 --write-midx --write-bitmap-index &&
	test-tool midx-dump --object-format=$algo packs $p >midx-packs &&
	grep $cruft midx-packs &&
	git -C in-$algo cat-file --batch-all-objects --batch-check="%(objectname)" >all &&
	test-tool midx-dump --object-format=$algo offsets $p | cut -d" " -f1 | sort >midx-objects &&
	test_cmp all midx-objects &&
	gitpack -C in-$algo multi-pack-index verify
'

test_expect_success "a MIDX that lists the cruft pack keeps listing it, as git ($algo)" '
	exclude_setup nec-$algo &&
	p=nec-$algo/.git/objects/pack &&
	(cd $p && ls pack-*.idx) >packs.all &&
	gitpack -C nec-$algo multi-pack-index write --stdin-packs --bitmap <packs.all &&
	test_commit -C nec-$algo five &&
	gitpack -C nec-$algo repack -q -d --geometric=2 --write-midx --write-bitmap-index &&
	git -C nec-$algo cat-file --batch-all-objects --batch-check="%(objectname)" >all &&
	test-tool midx-dump --object-format=$algo offsets $p | cut -d" " -f1 | sort >midx-objects &&
	test_cmp all midx-objects &&
	test-tool midx-dump --object-format=$algo packs $p >midx-packs &&
	test_line_count = $(($(wc -l <packs.all) + 1)) midx-packs
'

test_expect_success GIT_NEW "repack.midxMustContainCruft=false: the packs and MIDX git 2.55 leaves ($algo)" '
	exclude_setup ex2-$algo &&
	both ex2-$algo &&
	git_new -C ex2-$algo-git repack -q -d --geometric=2 --write-midx --write-bitmap-index &&
	gitpack -C ex2-$algo-gp repack -q -d --geometric=2 --write-midx --write-bitmap-index &&
	same_result $algo ex2-$algo-git ex2-$algo-gp &&
	# the MIDX lists packs of the same objects (pack names differ: so
	# do the bytes)
	for side in git gp
	do
		p=ex2-$algo-$side/.git/objects/pack &&
		for idx in $(test-tool midx-dump --object-format=$algo packs $p)
		do
			git show-index --object-format=$algo <$p/$idx | cut -d" " -f2 | sort |
				git hash-object --stdin || return 1
		done | sort >ex2-$algo-$side.midx-packs &&
		git_new -C ex2-$algo-$side multi-pack-index verify || return 1
	done &&
	test_cmp ex2-$algo-git.midx-packs ex2-$algo-gp.midx-packs
'

done

test_done
