#!/bin/sh

test_description='multi-pack-index: write the same file as git, read it back

Repositories with 1, 2, 50 and 200 packs, whose objects overlap (a pack of
everything, packs of overlapping commit ranges, an empty pack), for SHA-1
and SHA-256. Each case copies the repository twice with its pack mtimes,
runs "git multi-pack-index write" in one copy and "gitpack
multi-pack-index write" with the same options in the other, and compares
the files byte for byte: plain, with --preferred-pack (named by .pack and
by .idx), with --stdin-packs, with a RIDX chunk (both with --bitmap), with distinct,
equal and partly equal mtimes. Then each tool verifies the other'\''s file,
and gitpack cat-file lists every object as git does through the MIDX.
Also: --object-dir, options git rejects, a deleted pack, a MIDX with a
LOFF chunk, expire and repack against git.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# subset_packs DIR: the --stdin-packs input for a subset of DIR's packs:
# the pack of everything, the range packs and every third one-commit pack
# (so the packs left out hold no object twice among themselves, and the
# objects they hold are also in the MIDX: readers answer the same
# whichever copy they find first).
subset_packs () {
	(cd "$(midx_pack_dir "$1")" && ls pack-*.idx) >"$1.all-idx" &&
	for role in all range1 range2
	do
		midx_role "$1" $role idx 2>/dev/null || :
	done >"$1.subset" &&
	awk "NR % 3 == 1" "$1.all-idx" >>"$1.subset" &&
	sort -u "$1.subset" >"$1.subset.sorted" &&
	mv "$1.subset.sorted" "$1.subset" &&
	rm -f "$1.all-idx"
}

for algo in $test_hash_algos
do

for n in 1 2 50 200
do
	r=r$n-$algo

	test_expect_success "setup: $n pack(s) ($algo)" '
		midx_repo_create $algo $r $n &&
		midx_set_mtimes $r distinct &&
		if test $n -ge 2
		then
			preferred=range1
		else
			preferred=all
		fi &&
		echo $preferred >$r.preferred
	'

	test_expect_success "write: $n pack(s), distinct mtimes ($algo)" '
		midx_write_both $r &&
		midx_check_readers $r
	'

	test_expect_success "write --preferred-pack=pack-X.pack: $n pack(s) ($algo)" '
		midx_write_both $r --preferred-pack=$(midx_role $r $(cat $r.preferred)) &&
		midx_check_readers $r
	'

	test_expect_success "write --preferred-pack=pack-X.idx: $n pack(s) ($algo)" '
		midx_write_both $r --preferred-pack=$(midx_role $r all idx)
	'

	test_expect_success "RIDX: $n pack(s), oldest pack preferred ($algo)" '
		midx_write_both $r --ridx &&
		midx_check_readers $r &&
		midx_chunk_offset $(midx_pack_dir $r.gp)/multi-pack-index RIDX
	'

	test_expect_success "RIDX with --preferred-pack: $n pack(s) ($algo)" '
		midx_write_both $r --ridx --preferred-pack=$(midx_role $r $(cat $r.preferred)) &&
		midx_write_both $r --ridx --preferred-pack=$(midx_role $r all idx)
	'

	test $n -ge 2 || continue

	test_expect_success "write --stdin-packs, a subset: $n packs ($algo)" '
		subset_packs $r &&
		midx_write_both $r --stdin $r.subset --stdin-packs &&
		midx_check_readers $r &&
		midx_dump $(midx_pack_dir $r.gp)/multi-pack-index $algo >dump &&
		sed -n "s/^pack [0-9]* //p" dump >actual &&
		test_cmp $r.subset actual
	'

	test_expect_success "write --stdin-packs with RIDX and --preferred-pack: $n packs ($algo)" '
		midx_write_both $r --ridx --stdin $r.subset --stdin-packs &&
		midx_write_both $r --ridx --stdin $r.subset --stdin-packs \
			--preferred-pack=$(midx_role $r $(cat $r.preferred))
	'

	test_expect_success "equal mtimes: plain, RIDX, preferred: $n packs ($algo)" '
		test_when_finished "midx_set_mtimes $r distinct" &&
		midx_set_mtimes $r equal &&
		midx_write_both $r &&
		midx_check_readers $r &&
		midx_write_both $r --ridx &&
		midx_write_both $r --preferred-pack=$(midx_role $r $(cat $r.preferred))
	'

	test $n -ge 10 || continue

	test_expect_success "partly equal mtimes: plain, RIDX, preferred: $n packs ($algo)" '
		test_when_finished "midx_set_mtimes $r distinct" &&
		midx_set_mtimes $r grouped &&
		midx_write_both $r &&
		midx_check_readers $r &&
		midx_write_both $r --ridx &&
		midx_write_both $r --ridx --preferred-pack=$(midx_role $r one)
	'

	test_expect_success "RIDX with an empty pack older than all others: $n packs ($algo)" '
		test_when_finished "midx_set_mtimes $r distinct" &&
		midx_set_mtimes $r empty-oldest &&
		midx_write_both $r --ridx &&
		midx_check_readers $r
	'
done

r=r50-$algo

test_expect_success "write --object-dir: another repository's objects ($algo)" '
	midx_write_both $r &&
	git init -q --object-format=$algo other-$algo &&
	midx_copy $r $r.od &&
	# git wants the directory to be an alternate of the repository
	echo "$TRASH_DIRECTORY/$r.od/.git/objects" \
		>other-$algo/.git/objects/info/alternates &&
	gitpack -C other-$algo multi-pack-index \
		--object-dir="$TRASH_DIRECTORY/$r.od/.git/objects" write &&
	test_path_is_missing $(midx_pack_dir other-$algo)/multi-pack-index &&
	test_cmp_bin $(midx_pack_dir $r.git)/multi-pack-index \
		$(midx_pack_dir $r.od)/multi-pack-index &&
	gitpack -C other-$algo multi-pack-index \
		--object-dir="$TRASH_DIRECTORY/$r.od/.git/objects" verify &&
	git -C other-$algo multi-pack-index \
		--object-dir="$TRASH_DIRECTORY/$r.od/.git/objects" verify
'

test_expect_success "write --progress and --no-progress write the same file ($algo)" '
	midx_write_both $r &&
	for opt in --progress --no-progress
	do
		midx_copy $r $r.prog &&
		gitpack -C $r.prog multi-pack-index write $opt 2>err &&
		test_cmp_bin $(midx_pack_dir $r.git)/multi-pack-index \
			$(midx_pack_dir $r.prog)/multi-pack-index || return 1
	done &&
	test_must_be_empty err
'

test_expect_success GITPACK_IS_GITPACK "--[no-]progress before the subcommand ($algo)" '
	for opt in --progress --no-progress
	do
		midx_copy $r $r.prog &&
		gitpack -C $r.prog multi-pack-index $opt write 2>err &&
		test_cmp_bin $(midx_pack_dir $r.git)/multi-pack-index \
			$(midx_pack_dir $r.prog)/multi-pack-index || return 1
	done &&
	test_must_be_empty err
'

test_expect_success GIT255 "write --preferred-pack with an unknown pack: as git, a warning ($algo)" '
	midx_write_both $r --preferred-pack=pack-nonesuch.pack &&
	grep nonesuch actual.err &&
	midx_write_both $r --ridx --preferred-pack=pack-nonesuch.pack
'

test_expect_success "write --preferred-pack naming an empty pack fails, as in git ($algo)" '
	midx_write_both $r --expect-fail --preferred-pack=$(midx_role $r empty) &&
	midx_write_both $r --expect-fail --ridx --preferred-pack=$(midx_role $r empty idx)
'

test_expect_success "write --stdin-packs: .pack names, unknown names, nothing ($algo)" '
	midx_packs $r | head -n 3 >pack-names &&
	midx_write_both $r --expect-fail --stdin pack-names --stdin-packs &&
	midx_write_both $r --expect-fail --stdin /dev/null --stdin-packs &&
	echo pack-nonesuch.idx >unknown &&
	midx_write_both $r --expect-fail --stdin unknown --stdin-packs &&
	sed "s/pack\$/idx/" pack-names >>unknown &&
	midx_write_both $r --stdin unknown --stdin-packs
'

test_expect_success "write with no packs fails, as in git ($algo)" '
	git init -q --object-format=$algo nopacks-$algo &&
	midx_write_both nopacks-$algo --expect-fail
'

test_expect_success "write with loose objects only fails, as in git ($algo)" '
	git init -q --object-format=$algo loose-$algo &&
	test_commit -C loose-$algo one &&
	midx_write_both loose-$algo --expect-fail
'

test_expect_success "write over an existing MIDX after new packs came ($algo)" '
	midx_copy $r $r.grow &&
	rm -f $(midx_pack_dir $r.grow)/multi-pack-index* &&
	git -C $r.grow multi-pack-index write &&
	(
		cd $r.grow &&
		git checkout -q -b more main~5 &&
		test_commit more1 &&
		test_commit more2 &&
		git repack -d -q &&
		midx_pack_range . main~20 main~2 &&
		# the new packs are the newest; they duplicate MIDX objects
		for p in $(ls -t .git/objects/pack/pack-*.pack | head -n 2)
		do
			touch -d @1800000000 $p || exit 1
		done
	) &&
	# both copies keep the old MIDX this time
	midx_copy $r.grow $r.grow.git &&
	midx_copy $r.grow $r.grow.gp &&
	git -C $r.grow.git multi-pack-index write &&
	gitpack -C $r.grow.gp multi-pack-index write &&
	test_cmp_bin $(midx_pack_dir $r.grow.git)/multi-pack-index \
		$(midx_pack_dir $r.grow.gp)/multi-pack-index &&
	midx_check_readers $r.grow
'

test_expect_success "write over a MIDX of the same packs keeps it, as git does ($algo)" '
	midx_copy $r $r.same.git &&
	rm -f $(midx_pack_dir $r.same.git)/multi-pack-index* &&
	git -C $r.same.git multi-pack-index write &&
	midx_copy $r.same.git $r.same.gp &&
	git -C $r.same.git multi-pack-index write --preferred-pack=$(midx_role $r range2) &&
	gitpack -C $r.same.gp multi-pack-index write --preferred-pack=$(midx_role $r range2) &&
	test_cmp_bin $(midx_pack_dir $r.same.git)/multi-pack-index \
		$(midx_pack_dir $r.same.gp)/multi-pack-index
'

# A pack that git wrote holding objects nowhere else, then deleted: the
# MIDX still lists them.
test_expect_success "a pack deleted under the MIDX: the other objects still read ($algo)" '
	rm -rf del-$algo &&
	git init -q -b main --object-format=$algo del-$algo &&
	midx_import del-$algo 12 checkpoint &&
	git -C del-$algo multi-pack-index write &&
	victim=$(git -C del-$algo rev-parse main~3) &&
	for idx in $(midx_pack_dir del-$algo)/pack-*.idx
	do
		if git show-index --object-format=$algo <$idx | grep $victim >/dev/null
		then
			gone=$idx
		fi
	done &&
	git show-index --object-format=$algo <$gone | cut -d" " -f2 | sort >gone-objects &&
	git -C del-$algo rev-list --objects --all | cut -d" " -f1 >wanted &&
	other=$(git -C del-$algo rev-parse main~4) &&
	rm -f ${gone%.idx}.pack &&

	git -C del-$algo cat-file --batch-check --batch-all-objects >expect &&
	gitpack -C del-$algo cat-file --batch-check --batch-all-objects >actual 2>err &&
	test_cmp expect actual &&
	git -C del-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >expect &&
	gitpack -C del-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >actual 2>err &&
	test_cmp expect actual &&

	# asked for by name, the lost objects are missing, the rest are there
	git -C del-$algo cat-file --batch-check <wanted >expect &&
	grep " missing\$" expect >missing &&
	test_line_count = $(wc -l <gone-objects) missing &&
	gitpack -C del-$algo cat-file --batch-check <wanted >actual &&
	test_cmp expect actual &&
	test_must_fail gitpack -C del-$algo cat-file -t $victim 2>err &&
	test_file_not_empty err &&
	test_must_fail gitpack -C del-$algo cat-file -p $victim 2>err &&
	test_file_not_empty err &&
	gitpack -C del-$algo cat-file -p $other >actual &&
	git -C del-$algo cat-file -p $other >expect &&
	test_cmp expect actual &&

	# verify names the missing pack
	test_must_fail git -C del-$algo multi-pack-index verify &&
	test_must_fail gitpack -C del-$algo multi-pack-index verify 2>err &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		grep "$(basename ${gone%.idx})" err
	fi
'

# Git writes a LOFF chunk only for packs beyond 4 GiB: build one by hand
# from a MIDX git wrote, moving half the offsets to LOFF.
test_expect_success "a MIDX with a LOFF chunk: verified and read as git does ($algo)" '
	midx_write_both r200-$algo &&
	rm -rf loff-$algo && cp -a r200-$algo.git loff-$algo &&
	m=$(midx_pack_dir loff-$algo)/multi-pack-index &&
	midx_add_loff $m $m.new $algo &&
	mv $m.new $m &&
	midx_chunk_offset $m LOFF &&
	midx_dump $m $algo >dump &&
	grep " large\$" dump &&
	git -C loff-$algo multi-pack-index verify &&
	gitpack -C loff-$algo multi-pack-index verify &&
	git -C loff-$algo cat-file --batch-check --batch-all-objects >expect &&
	gitpack -C loff-$algo cat-file --batch-check --batch-all-objects >actual &&
	test_cmp expect actual &&
	git -C loff-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >expect &&
	gitpack -C loff-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >actual &&
	test_cmp expect actual &&
	git -C loff-$algo cat-file --batch-all-objects --batch >expect &&
	gitpack -C loff-$algo cat-file --batch-all-objects --batch >actual &&
	test_cmp_bin expect actual
'

test_expect_success "a MIDX with a LOFF chunk and RIDX: verified and read ($algo)" '
	midx_write_both r50-$algo --ridx &&
	rm -rf loffr-$algo && cp -a r50-$algo.git loffr-$algo &&
	rm -f $(midx_pack_dir loffr-$algo)/multi-pack-index-*.bitmap &&
	m=$(midx_pack_dir loffr-$algo)/multi-pack-index &&
	midx_add_loff $m $m.new $algo &&
	mv $m.new $m &&
	git -C loffr-$algo multi-pack-index verify &&
	gitpack -C loffr-$algo multi-pack-index verify &&
	git -C loffr-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >expect &&
	gitpack -C loffr-$algo cat-file --batch-all-objects --batch-check="$midx_batch_format" >actual &&
	test_cmp expect actual
'

test_expect_success "write over a MIDX with a LOFF chunk after a new pack came ($algo)" '
	midx_copy loff-$algo loffw-$algo &&
	(
		cd loffw-$algo &&
		git checkout -q -b more main~7 &&
		test_commit more1 &&
		git repack -d -q
	) &&
	midx_copy loffw-$algo loffw-$algo.git &&
	midx_copy loffw-$algo loffw-$algo.gp &&
	git -C loffw-$algo.git multi-pack-index write &&
	gitpack -C loffw-$algo.gp multi-pack-index write &&
	test_cmp_bin $(midx_pack_dir loffw-$algo.git)/multi-pack-index \
		$(midx_pack_dir loffw-$algo.gp)/multi-pack-index
'

# expire: ex-ALGO has eight one-commit packs, a pack "cover" holding the
# objects of commits 3 to 6 (the packs of those commits), and an empty
# pack; the pack of commit 4 has a .keep file.
test_expect_success "setup: packs for expire ($algo)" '
	rm -rf ex-$algo &&
	git init -q -b main --object-format=$algo ex-$algo &&
	midx_import ex-$algo 8 checkpoint &&
	: >ex-$algo.packs &&
	midx_new_pack_ ex-$algo cover midx_pack_range ex-$algo main~6 main~2 &&
	midx_new_pack_ ex-$algo empty eval \
		"git -C ex-$algo pack-objects -q .git/objects/pack/pack </dev/null >/dev/null" &&
	for k in 3 4 5 6
	do
		c=$(git -C ex-$algo rev-parse main~$((8 - k))) &&
		for idx in $(midx_pack_dir ex-$algo)/pack-*.idx
		do
			case "$idx" in
			*$(midx_role ex-$algo cover idx)) continue ;;
			esac
			if git show-index --object-format=$algo <$idx | grep $c >/dev/null
			then
				echo "commit$k $(basename ${idx%.idx}.pack)" >>ex-$algo.packs
			fi
		done || return 1
	done &&
	test_line_count = 6 ex-$algo.packs &&
	: >$(midx_pack_dir ex-$algo)/$(midx_role ex-$algo commit4 | sed "s/pack\$/keep/") &&
	midx_packs ex-$algo >all-packs &&
	test_line_count = 10 all-packs
'

# expire_both SRC: copy SRC (with its MIDX) twice, run "git
# multi-pack-index expire" in one copy and gitpack in the other; same
# exit code, same MIDX, same files left in the pack directory.
expire_both () {
	midx_copy "$1" "$1.git" &&
	midx_copy "$1" "$1.gp" &&
	git -C "$1.git" multi-pack-index expire &&
	gitpack -C "$1.gp" multi-pack-index expire &&
	(cd "$(midx_pack_dir "$1.git")" && ls | grep -v "^multi-pack-index") >expect &&
	(cd "$(midx_pack_dir "$1.gp")" && ls | grep -v "^multi-pack-index") >actual &&
	test_cmp expect actual &&
	test_cmp_bin "$(midx_pack_dir "$1.git")/multi-pack-index" \
		"$(midx_pack_dir "$1.gp")/multi-pack-index" &&
	git -C "$1.gp" multi-pack-index verify &&
	git -C "$1.git" cat-file --batch-all-objects --batch-check="$midx_batch_format" >expect &&
	gitpack -C "$1.gp" cat-file --batch-all-objects --batch-check="$midx_batch_format" >actual &&
	test_cmp expect actual
}

# set_expire_mtimes DIR COVER_AGE: every pack at 1600000000 + 100 * (its
# place by name), the cover pack "new" (newest) or "old" (oldest).
set_expire_mtimes () {
	midx_set_mtimes "$1" distinct &&
	if test "$2" = new
	then
		t=1700000000
	else
		t=1500000000
	fi &&
	touch -d @$t "$(midx_pack_dir "$1")/$(midx_role "$1" cover)"
}

test_expect_success "expire: packs whose objects all come from a newer pack ($algo)" '
	rm -rf ex1-$algo && cp -a ex-$algo ex1-$algo && cp ex-$algo.packs ex1-$algo.packs &&
	set_expire_mtimes ex1-$algo new &&
	git -C ex1-$algo multi-pack-index write &&
	expire_both ex1-$algo &&
	# commits 3, 5 and 6 lost their packs, commit 4 kept its (.keep)
	for k in 3 5 6
	do
		test_path_is_missing $(midx_pack_dir ex1-$algo.gp)/$(midx_role ex1-$algo commit$k) || return 1
	done &&
	test_path_is_file $(midx_pack_dir ex1-$algo.gp)/$(midx_role ex1-$algo commit4) &&
	test_path_is_missing $(midx_pack_dir ex1-$algo.gp)/$(midx_role ex1-$algo empty)
'

test_expect_success "expire: an older pack all of whose objects are elsewhere ($algo)" '
	rm -rf ex2-$algo && cp -a ex-$algo ex2-$algo && cp ex-$algo.packs ex2-$algo.packs &&
	set_expire_mtimes ex2-$algo old &&
	git -C ex2-$algo multi-pack-index write &&
	expire_both ex2-$algo &&
	test_path_is_missing $(midx_pack_dir ex2-$algo.gp)/$(midx_role ex2-$algo cover)
'

test_expect_success "expire: selections made by --preferred-pack count ($algo)" '
	rm -rf ex3-$algo && cp -a ex-$algo ex3-$algo && cp ex-$algo.packs ex3-$algo.packs &&
	set_expire_mtimes ex3-$algo old &&
	git -C ex3-$algo multi-pack-index write --preferred-pack=$(midx_role ex3-$algo cover) &&
	expire_both ex3-$algo &&
	test_path_is_file $(midx_pack_dir ex3-$algo.gp)/$(midx_role ex3-$algo cover) &&
	test_path_is_missing $(midx_pack_dir ex3-$algo.gp)/$(midx_role ex3-$algo commit5)
'

test_expect_success "expire: a MIDX with RIDX (git writes the new one without) ($algo)" '
	rm -rf ex6-$algo && cp -a ex-$algo ex6-$algo && cp ex-$algo.packs ex6-$algo.packs &&
	set_expire_mtimes ex6-$algo new &&
	git -C ex6-$algo multi-pack-index write --bitmap &&
	rm -f $(midx_pack_dir ex6-$algo)/multi-pack-index-*.bitmap &&
	midx_chunk_offset $(midx_pack_dir ex6-$algo)/multi-pack-index RIDX &&
	expire_both ex6-$algo
'

test_expect_success "expire: nothing to expire leaves the MIDX as it was ($algo)" '
	rm -rf ex4-$algo && cp -a ex-$algo ex4-$algo && cp ex-$algo.packs ex4-$algo.packs &&
	set_expire_mtimes ex4-$algo new &&
	rm -f $(midx_pack_dir ex4-$algo)/$(midx_role ex4-$algo empty) \
		$(midx_pack_dir ex4-$algo)/$(midx_role ex4-$algo empty idx) &&
	for k in 3 5 6
	do
		rm -f $(midx_pack_dir ex4-$algo)/$(midx_role ex4-$algo commit$k) \
			$(midx_pack_dir ex4-$algo)/$(midx_role ex4-$algo commit$k idx) || return 1
	done &&
	git -C ex4-$algo multi-pack-index write &&
	cp $(midx_pack_dir ex4-$algo)/multi-pack-index before &&
	expire_both ex4-$algo &&
	test_cmp_bin before $(midx_pack_dir ex4-$algo.gp)/multi-pack-index
'

test_expect_success "expire: a pack that came after the MIDX joins it ($algo)" '
	rm -rf ex5-$algo && cp -a ex-$algo ex5-$algo && cp ex-$algo.packs ex5-$algo.packs &&
	set_expire_mtimes ex5-$algo new &&
	git -C ex5-$algo multi-pack-index write &&
	midx_pack_range ex5-$algo main~3 main &&
	expire_both ex5-$algo &&
	midx_dump $(midx_pack_dir ex5-$algo.gp)/multi-pack-index $algo >dump &&
	grep "^pack " dump >packs &&
	test_line_count = 7 packs
'

# repack --batch-size: gitpack may build its new pack differently, so
# compare what is in it, not its bytes.
repack_both () {
	gp_rb_src_=$1
	shift
	midx_copy "$gp_rb_src_" "$gp_rb_src_.git" &&
	midx_copy "$gp_rb_src_" "$gp_rb_src_.gp" &&
	git -C "$gp_rb_src_.git" multi-pack-index repack "$@" &&
	gitpack -C "$gp_rb_src_.gp" multi-pack-index repack "$@" &&
	midx_packs "$gp_rb_src_" >before &&
	for who in git gp
	do
		midx_packs "$gp_rb_src_.$who" >after-$who &&
		comm -13 before after-$who >new-$who &&
		for p in $(cat new-$who)
		do
			git show-index --object-format=$algo \
				<"$(midx_pack_dir "$gp_rb_src_.$who")/${p%.pack}.idx" |
			cut -d" " -f2 || return 1
		done | sort >objects-$who &&
		sed "s/\.pack\$/.idx/" new-$who >new-idx-$who &&
		midx_dump "$(midx_pack_dir "$gp_rb_src_.$who")/multi-pack-index" $algo |
		sed -n "s/^pack [0-9]* //p" >midx-packs-all-$who &&
		if test -s new-idx-$who
		then
			grep -v -F -f new-idx-$who midx-packs-all-$who >midx-packs-$who
		else
			cp midx-packs-all-$who midx-packs-$who
		fi &&
		test_line_count = $(( $(wc -l <midx-packs-$who) + $(wc -l <new-idx-$who) )) \
			midx-packs-all-$who
	done &&
	test_line_count = $(wc -l <new-git) new-gp &&
	test_cmp objects-git objects-gp &&
	test_cmp midx-packs-git midx-packs-gp &&
	git -C "$gp_rb_src_.gp" multi-pack-index verify &&
	git -C "$gp_rb_src_.git" cat-file --batch-check --batch-all-objects >expect &&
	gitpack -C "$gp_rb_src_.gp" cat-file --batch-check --batch-all-objects >actual &&
	test_cmp expect actual
}

test_expect_success "setup: packs for repack ($algo)" '
	rm -rf rp-$algo && cp -a ex-$algo rp-$algo && cp ex-$algo.packs rp-$algo.packs &&
	rm -f $(midx_pack_dir rp-$algo)/*.keep &&
	midx_set_mtimes rp-$algo distinct &&
	git -C rp-$algo config pack.threads 1 &&
	git -C rp-$algo multi-pack-index write
'

if gitpack multi-pack-index -h 2>&1 | grep "multi-pack-index.* repack" >/dev/null
then
	expect_repack=test_expect_success
else
	# "repack" is not there yet
	expect_repack=test_expect_failure
fi

$expect_repack "repack --batch-size=0: everything into one new pack ($algo)" '
	repack_both rp-$algo --batch-size=0 &&
	test_line_count = 1 new-gp
'

$expect_repack "repack --batch-size=SIZE: the small packs into one ($algo)" '
	size=$(ls -l $(midx_pack_dir rp-$algo)/*.pack | awk "{ s += \$5 } END { print int(s / 3) }") &&
	repack_both rp-$algo --batch-size=$size
'

$expect_repack "repack --batch-size=SIZE larger than all packs: all of them ($algo)" '
	repack_both rp-$algo --batch-size=1000000000 &&
	test_line_count = 1 new-gp
'

$expect_repack "repack --batch-size smaller than every pack: nothing ($algo)" '
	rm -rf rp2-$algo &&
	git init -q -b main --object-format=$algo rp2-$algo &&
	midx_import rp2-$algo 6 checkpoint &&
	git -C rp2-$algo multi-pack-index write &&
	repack_both rp2-$algo --batch-size=1 &&
	test_must_be_empty new-gp &&
	test_cmp_bin $(midx_pack_dir rp2-$algo)/multi-pack-index \
		$(midx_pack_dir rp2-$algo.gp)/multi-pack-index
'

# git 2.55'"'"'s test knobs: GIT_TEST_MIDX_WRITE_REV writes the pseudo-pack
# order to multi-pack-index-<sum>.rev too, and GIT_TEST_MIDX_READ_RIDX=0
# makes readers ignore the RIDX chunk, so that the .rev must serve.
test_expect_success "GIT_TEST_MIDX_WRITE_REV and GIT_TEST_MIDX_READ_RIDX=0 ($algo)" '
	r=r50-$algo rawsz=20 &&
	if test $algo = sha256
	then
		rawsz=32
	fi &&
	midx_copy $r $r.rev &&
	rm -f $(midx_pack_dir $r.rev)/multi-pack-index* &&
	GIT_TEST_MIDX_WRITE_REV=1 gitpack -C $r.rev multi-pack-index write --bitmap &&
	dir=$(midx_pack_dir $r.rev) &&
	sum=$(tail -c $rawsz $dir/multi-pack-index | od -An -tx1 | tr -d " \n") &&
	test_path_is_file $dir/multi-pack-index-$sum.rev &&
	test_path_is_file $dir/multi-pack-index-$sum.bitmap &&
	# the .rev is the RIDX chunk as a file (positions, then the MIDX checksum)
	ofs=$(midx_chunk_offset $dir/multi-pack-index RIDX) &&
	size=$(midx_chunk_size $dir/multi-pack-index RIDX) &&
	tail -c +$((ofs + 1)) $dir/multi-pack-index | head -c $size >ridx &&
	tail -c +13 $dir/multi-pack-index-$sum.rev | head -c $size >rev &&
	test_cmp_bin ridx rev &&
	GIT_TEST_MIDX_READ_RIDX=0 gitpack -C $r.rev rev-list --test-bitmap main &&
	GIT_TEST_MIDX_READ_RIDX=0 gitpack -C $r.rev multi-pack-index verify &&
	rm $dir/multi-pack-index-$sum.rev &&
	test_must_fail env GIT_TEST_MIDX_READ_RIDX=0 gitpack -C $r.rev rev-list --test-bitmap main 2>err &&
	grep "multi-pack bitmap is missing required reverse index" err &&
	gitpack -C $r.rev rev-list --test-bitmap main
'

test_expect_success GIT255 "GIT_TEST_MIDX_WRITE_REV: the same .rev as git 2.55 ($algo)" '
	r=r50-$algo &&
	for tool in midx_git gitpack
	do
		midx_copy $r $r.$tool &&
		rm -f $(midx_pack_dir $r.$tool)/multi-pack-index* &&
		GIT_TEST_MIDX_WRITE_REV=1 $tool -C $r.$tool multi-pack-index write --bitmap &&
		(cd $(midx_pack_dir $r.$tool) && ls multi-pack-index-*.rev) >rev.$tool ||
		return 1
	done &&
	test_cmp rev.midx_git rev.gitpack &&
	test_cmp_bin $(midx_pack_dir $r.midx_git)/$(cat rev.midx_git) \
		$(midx_pack_dir $r.gitpack)/$(cat rev.gitpack)
'

done

test_done
