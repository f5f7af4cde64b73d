#!/bin/sh

test_description='repack --write-midx=incremental: MIDX chains

Without --geometric, each repack puts a layer of the packs it wrote on
top of the chain and leaves the layers below as they are; -a -d then
keeps the packs the chain lists. With --geometric, only the packs of
the top layer take part in the progression, and only when it has
repack.midxNewLayerThreshold packs; the new top layer takes the new
packs (and, when the old top rolled up, the packs of the progression
that stay), absorbs the layers below it while it outweighs
1/repack.midxSplitFactor of them, and runs of older layers are
compacted by the same rule. Each state is checked by gitpack'"'"'s
multi-pack-index verify, by stock git (fsck, and every object through
the chain against the packs); with a git 2.55 (GIT_NEW) its verify,
its bitmap counts, and the same layers (the packs of each layer, by
their objects) as git 2.55 leaves after the same steps. A held chain
lock stops the repack before anything is removed. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-midx.sh"

# chain DIR: the chain file of DIR.
chain () {
	echo "$1/.git/objects/pack/multi-pack-index.d/multi-pack-index-chain"
}

# layers ALGO DIR: one line per layer of DIR's chain, base first: the
# digests of its packs' object lists, sorted; "bitmap" when the layer
# has one. Pack names are left out: git and gitpack may write the same
# objects into packs of different bytes.
layers () {
	gp_l_dir_=$2/.git/objects/pack
	for gp_l_h_ in $(cat "$(chain $2)")
	do
		gp_l_f_=$gp_l_dir_/multi-pack-index.d/multi-pack-index-$gp_l_h_.midx &&
		perl -e '
			open(my $fh, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
			local $/; my $d = <$fh>;
			my $np = unpack("N", substr($d, 8, 4));
			my $nc = ord(substr($d, 6, 1));
			for my $i (0 .. $nc - 1) {
				my ($id, $o) = unpack("a4 Q>", substr($d, 12 + 12 * $i, 12));
				next unless $id eq "PNAM";
				my @names = split(/\0+/, substr($d, $o));
				print "$_\n" for @names[0 .. $np - 1];
			}
		' $gp_l_f_ >layer.packs &&
		for gp_l_p_ in $(cat layer.packs)
		do
			git show-index --object-format=$1 <$gp_l_dir_/$gp_l_p_ | cut -d" " -f2 | sort |
				git hash-object --stdin || return 1
		done | sort | tr "\n" " " &&
		if test -f ${gp_l_f_%.midx}.bitmap
		then
			echo bitmap
		else
			echo
		fi || return 1
	done
}

# checked ALGO DIR: the MIDX of DIR passes gitpack's verify (and git
# 2.55's), stock git finds no fault, and gitpack finds through the chain
# every object git finds through the packs.
checked () {
	gitpack -C $2 multi-pack-index verify &&
	if test_have_prereq GIT_NEW
	then
		git_new -C $2 multi-pack-index verify &&
		git_new -C $2 rev-list --objects --all | cut -d" " -f1 | sort >walk &&
		git_new -C $2 rev-list --use-bitmap-index --objects --all | cut -d" " -f1 | sort >bitmap &&
		test_cmp walk bitmap
	fi &&
	git -C $2 fsck --full --no-progress 2>err &&
	! grep -v "^dangling\|^notice" err &&
	git -C $2 -c core.multiPackIndex=false cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype) %(objectsize)" >expect &&
	gitpack -C $2 cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype) %(objectsize)" >actual &&
	test_cmp expect actual
}

# commits DIR PREFIX N: N commits, loose.
commits () {
	for gp_c_i_ in $(test_seq 1 $3)
	do
		test_commit -C $1 $2-$gp_c_i_ || return 1
	done
}

# layer DIR PREFIX N: N commits in one pack, then a layer of it (gitpack).
layer () {
	commits $1 $2 $3 &&
	git -C $1 repack -dq &&
	gitpack -C $1 multi-pack-index write --incremental --bitmap
}

# new_repo DIR [KEY=VALUE...]: an empty repository with that config.
new_repo () {
	gp_nr_dir_=$1
	shift
	rm -rf $gp_nr_dir_ &&
	git init -q -b main --object-format=$algo $gp_nr_dir_ &&
	git -C $gp_nr_dir_ config gc.auto 0 &&
	for gp_nr_kv_
	do
		git -C $gp_nr_dir_ config ${gp_nr_kv_%%=*} ${gp_nr_kv_#*=} || return 1
	done
}

geo="--geometric=2 -d --write-midx=incremental --write-bitmap-index"

# same_as_slow DIR [LAYERS]: repack $geo a copy of DIR the old way
# (GP_TEST_BITMAP_LAYER_SLOW: every type read from the packs, every old
# position looked up, every commit walked) and DIR itself: the chains,
# MIDX layers and bitmaps must be the same bytes. DIR's run must have
# taken the layer's fast path (trace2 layer_types_from_bitmaps > 0).
same_as_slow () {
	rm -rf $1-slow $1.trace &&
	cp -R $1 $1-slow &&
	GP_TEST_BITMAP_LAYER_SLOW=1 gitpack -C $1-slow repack -q $geo &&
	GIT_TRACE2_EVENT=$TRASH_DIRECTORY/$1.trace gitpack -C $1 repack -q $geo &&
	grep "\"key\":\"layer_types_from_bitmaps\",\"value\":\"[1-9]" $1.trace &&
	test_cmp $(chain $1-slow) $(chain $1) &&
	test_line_count = ${2:-3} $(chain $1) &&
	for gp_s_f_ in $1/.git/objects/pack/multi-pack-index.d/*
	do
		test_cmp_bin $gp_s_f_ $1-slow/.git/objects/pack/multi-pack-index.d/${gp_s_f_##*/} ||
			return 1
	done &&
	ls $1-slow/.git/objects/pack/multi-pack-index.d >expect &&
	ls $1/.git/objects/pack/multi-pack-index.d >actual &&
	test_cmp expect actual &&
	checked $algo $1
}

# history DIR N: N commits on main through fast-import, a file each,
# a minute apart from 2009 on (older than test_tick's dates).
history () {
	for gp_h_i_ in $(test_seq 1 $2)
	do
		echo "commit refs/heads/main" &&
		echo "committer C O Mitter <committer@example.com> $((1234567890 + 60 * gp_h_i_)) +0000" &&
		echo "data <<EOF" && echo "h$gp_h_i_" && echo "EOF" &&
		echo "M 644 inline h$gp_h_i_.t" &&
		echo "data <<EOF" && echo "$gp_h_i_" && echo "EOF" || return 1
	done | git -C $1 fast-import --quiet &&
	git -C $1 reset -q --hard main
}

# entries FILE: the number of commits a .bitmap file has bitmaps for.
entries () {
	perl -e 'open(my $fh, "<:raw", $ARGV[0]) or die; read($fh, my $h, 12);
		print unpack("N", substr($h, 8, 4)), "\n"' "$1"
}

# layered DIR: a chain of two bitmapped layers (30 commits, then 12)
# with a branch "old" at HEAD~32 and a tag at HEAD~37; a push of a few
# commits then stacks a third layer (its objects weigh less than half
# of the top layer's, and the top has fewer packs than the threshold).
layered () {
	# a threshold above the top layer's packs: each repack stacks a layer
	new_repo $1 repack.midxNewLayerThreshold=4 &&
	commits $1 base 30 &&
	git -C $1 branch old HEAD~20 &&
	git -C $1 tag -a -m "annotated" v1 HEAD~25 &&
	git -C $1 repack -adq &&
	gitpack -C $1 repack -q $geo &&
	commits $1 top 12 &&
	git -C $1 repack -dq &&
	gitpack -C $1 repack -q $geo &&
	test_line_count = 2 $(chain $1)
}

for algo in $test_hash_algos
do

test_expect_success "without --geometric: a layer of the new packs on top, the layers below as they were ($algo)" '
	new_repo app-$algo &&
	test_commit -C app-$algo first &&
	git -C app-$algo repack -dq &&
	test_commit -C app-$algo second &&
	gitpack -C app-$algo repack -q --write-midx=incremental &&
	test_line_count = 1 $(chain app-$algo) &&
	cp $(chain app-$algo) chain.before &&
	layers $algo app-$algo >layers &&
	test_line_count = 1 layers &&
	# the layer holds the pack just written, not the older one
	test $(wc -w <layers) = 1 &&
	checked $algo app-$algo &&
	test_commit -C app-$algo third &&
	gitpack -C app-$algo repack -q --write-midx=incremental &&
	test_line_count = 2 $(chain app-$algo) &&
	head -n 1 $(chain app-$algo) >base &&
	test_cmp chain.before base &&
	checked $algo app-$algo &&
	# nothing new: the chain stays
	cp $(chain app-$algo) chain.before &&
	gitpack -C app-$algo repack -q --write-midx=incremental &&
	test_cmp chain.before $(chain app-$algo)
'

test_expect_success "-a -d --write-midx=incremental: the packs the chain lists stay, a layer of the new pack on top ($algo)" '
	new_repo ad-$algo &&
	test_commit -C ad-$algo first &&
	git -C ad-$algo repack -dq &&
	test_commit -C ad-$algo second &&
	gitpack -C ad-$algo repack -q -d --write-midx=incremental &&
	test-tool midx-dump --object-format=$algo packs ad-$algo/.git/objects/pack >listed &&
	test_commit -C ad-$algo third &&
	gitpack -C ad-$algo repack -q -a -d --write-midx=incremental &&
	test_line_count = 2 $(chain ad-$algo) &&
	for p in $(cat listed)
	do
		test_path_is_file ad-$algo/.git/objects/pack/$p || return 1
	done &&
	ls ad-$algo/.git/objects/pack/*.pack >packs &&
	test_line_count = 2 packs &&
	checked $algo ad-$algo &&
	# and a plain -a -d takes the chain away with those packs
	gitpack -C ad-$algo repack -q -a -d &&
	test_path_is_missing $(chain ad-$algo) &&
	checked_plain=$(ls ad-$algo/.git/objects/pack/multi-pack-index.d | wc -l) &&
	test "$checked_plain" = 0
'

test_expect_success "--geometric, below repack.midxNewLayerThreshold: the top layer stays, a new layer on it ($algo)" '
	new_repo below-$algo repack.midxNewLayerThreshold=4 &&
	test_commit -C below-$algo small &&
	git -C below-$algo repack -dq &&
	commits below-$algo medium 2 &&
	git -C below-$algo repack -dq &&
	commits below-$algo large 6 &&
	gitpack -C below-$algo repack -q $geo &&
	test_line_count = 1 $(chain below-$algo) &&
	cp $(chain below-$algo) chain.before &&
	ls below-$algo/.git/objects/pack/*.idx >packs.before &&
	test_commit -C below-$algo extra &&
	gitpack -C below-$algo repack -q $geo &&
	ls below-$algo/.git/objects/pack/*.idx >packs.after &&
	comm -13 packs.before packs.after >packs.new &&
	test_line_count = 1 packs.new &&
	test_line_count = 2 $(chain below-$algo) &&
	head -n 1 $(chain below-$algo) >base &&
	test_cmp chain.before base &&
	checked $algo below-$algo
'

test_expect_success "--geometric, at the threshold: the top layer's packs roll up, the layer is written anew ($algo)" '
	new_repo at-$algo repack.midxNewLayerThreshold=2 &&
	test_commit -C at-$algo small &&
	git -C at-$algo repack -dq &&
	commits at-$algo medium 2 &&
	git -C at-$algo repack -dq &&
	commits at-$algo large 6 &&
	gitpack -C at-$algo repack -q $geo &&
	cp $(chain at-$algo) chain.before &&
	test_commit -C at-$algo extra &&
	git -C at-$algo repack -dq &&
	gitpack -C at-$algo repack -q $geo &&
	! test_cmp chain.before $(chain at-$algo) &&
	test_line_count = 1 $(chain at-$algo) &&
	checked $algo at-$algo
'

test_expect_success "the new top layer takes the layers below while it outweighs half of them ($algo)" '
	new_repo absorb-$algo repack.midxNewLayerThreshold=1 &&
	layer absorb-$algo L0 25 &&
	layer absorb-$algo L1 7 &&
	layer absorb-$algo L2 3 &&
	layer absorb-$algo L3 1 &&
	test_line_count = 4 $(chain absorb-$algo) &&
	layers $algo absorb-$algo >before &&
	head -n 1 $(chain absorb-$algo) >base.before &&
	# 3 objects beside the 3 of L3: both roll up (6), which outweighs
	# half of L2 (9), then with it half of L1 (21), but not of L0 (75)
	test_commit -C absorb-$algo new &&
	git -C absorb-$algo repack -dq &&
	gitpack -C absorb-$algo repack -q $geo &&
	test_line_count = 2 $(chain absorb-$algo) &&
	head -n 1 $(chain absorb-$algo) >base &&
	test_cmp base.before base &&
	layers $algo absorb-$algo >after &&
	# the top layer: the rolled-up pack and the packs of L1 and L2
	test $(sed -n 2p after | wc -w) = 4 &&
	sed -n 2,3p before | tr " " "\n" | grep -v "^bitmap\$" | grep . >absorbed &&
	for p in $(cat absorbed)
	do
		sed -n 2p after | grep $p || return 1
	done &&
	checked $algo absorb-$algo
'

test_expect_success "a layer below that outweighs half the next one down is compacted with it ($algo)" '
	new_repo compact-$algo repack.midxNewLayerThreshold=1 &&
	layer compact-$algo one 2 &&
	layer compact-$algo two 4 &&
	layer compact-$algo barrier 54 &&
	test_line_count = 3 $(chain compact-$algo) &&
	layers $algo compact-$algo >before &&
	test_commit -C compact-$algo another &&
	gitpack -C compact-$algo repack -q $geo &&
	test_line_count = 2 $(chain compact-$algo) &&
	layers $algo compact-$algo >after &&
	# one, two and barrier become one layer of their packs, in place
	tr " " "\n" <before | grep . | grep -v "^bitmap\$" | sort >expect &&
	sed -n 1p after | tr " " "\n" | grep . | grep -v "^bitmap\$" | sort >actual &&
	test_cmp expect actual &&
	sed -n 1p after | grep "bitmap\$" &&
	checked $algo compact-$algo
'

test_expect_success "kept packs stay out of the progression and of the new layer ($algo)" '
	new_repo kept-$algo repack.midxNewLayerThreshold=1 &&
	test_commit -C kept-$algo A &&
	git -C kept-$algo repack -dq &&
	test_commit -C kept-$algo B &&
	git -C kept-$algo repack -dq &&
	keep=$(ls kept-$algo/.git/objects/pack/pack-*.idx | head -n 1) &&
	touch ${keep%.idx}.keep &&
	gitpack -C kept-$algo repack -q --geometric=2 -d --write-midx=incremental &&
	test-tool midx-dump --object-format=$algo packs kept-$algo/.git/objects/pack >listed &&
	test_line_count = 1 listed &&
	! grep $(basename $keep) listed &&
	test_path_is_file $keep &&
	checked $algo kept-$algo
'

test_expect_success "--max-pack-size: the new layer lists every pack cut ($algo)" '
	new_repo split-$algo repack.midxNewLayerThreshold=1 &&
	layer split-$algo base 1 &&
	for k in 1 2
	do
		perl -e "binmode STDOUT; srand($k); print map { chr(int(rand(256))) } 1..1100000" \
			>split-$algo/big$k || return 1
	done &&
	git -C split-$algo add big1 big2 &&
	git -C split-$algo commit -q -m big &&
	git -C split-$algo repack -dq &&
	gitpack -C split-$algo repack -q $geo --max-pack-size=1m &&
	test_line_count = 1 $(chain split-$algo) &&
	test-tool midx-dump --object-format=$algo packs split-$algo/.git/objects/pack >listed &&
	test_line_count -gt 1 listed &&
	checked $algo split-$algo
'

test_expect_success "bad repack.midxSplitFactor and repack.midxNewLayerThreshold are refused, as git ($algo)" '
	new_repo bad-$algo &&
	test_commit -C bad-$algo base &&
	for v in 0 1 -1
	do
		test_must_fail gitpack -C bad-$algo -c repack.midxSplitFactor=$v \
			repack -d --geometric=2 --write-midx=incremental 2>err &&
		grep "invalid value for --midx-split-factor: $v" err || return 1
	done &&
	for v in 0 -1
	do
		test_must_fail gitpack -C bad-$algo -c repack.midxNewLayerThreshold=$v \
			repack -d --geometric=2 --write-midx=incremental 2>err &&
		grep "invalid value for --midx-new-layer-threshold: $v" err || return 1
	done
'

test_expect_success "a held chain lock: the repack stops, nothing is removed, every object is there ($algo)" '
	new_repo lock-$algo repack.midxNewLayerThreshold=1 &&
	layer lock-$algo base 3 &&
	test_commit -C lock-$algo more &&
	git -C lock-$algo repack -dq &&
	cp $(chain lock-$algo) chain.before &&
	ls lock-$algo/.git/objects/pack/*.pack >packs.before &&
	git -C lock-$algo cat-file --batch-all-objects --batch-check >objects.before &&
	touch $(chain lock-$algo).lock &&
	test_must_fail gitpack -C lock-$algo repack -q $geo 2>err &&
	grep "multi-pack-index-chain.lock" err &&
	test_cmp chain.before $(chain lock-$algo) &&
	for p in $(cat packs.before)
	do
		test_path_is_file $p || return 1
	done &&
	git -C lock-$algo cat-file --batch-all-objects --batch-check >objects.after &&
	test_cmp objects.before objects.after &&
	gitpack -C lock-$algo multi-pack-index verify &&
	rm $(chain lock-$algo).lock &&
	gitpack -C lock-$algo repack -q $geo &&
	checked $algo lock-$algo
'

# both_steps DIR STEP...: the same steps in DIR-git (git 2.55) and
# DIR-gp (gitpack); each step is "commit N" (N commits, the same ones on
# both sides), "pack" (repack -d by stock git), "layer" (a MIDX layer,
# by git 2.55) or "repack" (the repack under test); after each repack
# the layers are the same.
both_steps () {
	gp_bs_dir_=$1
	shift
	for gp_bs_step_
	do
		case "$gp_bs_step_" in
		commit*)
			commits $gp_bs_dir_ c$gp_bs_n_ ${gp_bs_step_#commit } &&
			gp_bs_n_=$((gp_bs_n_ + 1)) ;;
		pack)
			git -C $gp_bs_dir_ repack -dq ;;
		layer)
			git_new -C $gp_bs_dir_ multi-pack-index write --incremental --bitmap ;;
		repack)
			rm -rf $gp_bs_dir_-git $gp_bs_dir_-gp &&
			cp -pR $gp_bs_dir_ $gp_bs_dir_-git &&
			cp -pR $gp_bs_dir_ $gp_bs_dir_-gp &&
			git_new -C $gp_bs_dir_-git repack -q $geo &&
			gitpack -C $gp_bs_dir_-gp repack -q $geo &&
			layers $algo $gp_bs_dir_-git >expect &&
			layers $algo $gp_bs_dir_-gp >actual &&
			test_cmp expect actual &&
			checked $algo $gp_bs_dir_-gp &&
			# go on from what git 2.55 left
			rm -rf $gp_bs_dir_ &&
			mv $gp_bs_dir_-git $gp_bs_dir_ ;;
		esac || return 1
	done
}

test_expect_success GIT_NEW "each step leaves the layers git 2.55 leaves ($algo)" '
	new_repo steps-$algo repack.midxNewLayerThreshold=2 &&
	gp_bs_n_=0 &&
	both_steps steps-$algo \
		"commit 1" repack "commit 1" repack "commit 2" repack "commit 1" repack \
		"commit 5" pack "commit 1" repack "commit 12" layer "commit 1" layer \
		"commit 1" pack repack "commit 3" repack repack
'

test_expect_success GIT_NEW "compaction as git 2.55: absorbed and compacted layers ($algo)" '
	new_repo steps2-$algo repack.midxNewLayerThreshold=1 &&
	gp_bs_n_=0 &&
	both_steps steps2-$algo \
		"commit 25" pack layer "commit 7" pack layer "commit 3" pack layer \
		"commit 1" pack layer "commit 1" repack \
		"commit 2" pack layer "commit 4" pack layer "commit 54" pack layer \
		"commit 1" repack
'

test_expect_success "a new layer takes over the bitmaps the old chain has for its commits ($algo)" '
	new_repo reuse-$algo &&
	commits reuse-$algo base 30 &&
	git -C reuse-$algo repack -adq &&
	gitpack -C reuse-$algo repack -q $geo &&
	test_commit -C reuse-$algo pushed &&
	git -C reuse-$algo repack -dq &&
	gitpack -C reuse-$algo repack $geo --progress 2>err &&
	test_line_count = 2 $(chain reuse-$algo) &&
	tr "\r" "\n" <err >progress &&
	grep "^Bitmaps reused: [1-9][0-9]* of " progress &&
	checked $algo reuse-$algo &&
	test_commit -C reuse-$algo more &&
	git -C reuse-$algo repack -dq &&
	gitpack -C reuse-$algo repack $geo --progress 2>err &&
	tr "\r" "\n" <err >progress &&
	grep "^Bitmaps reused: [1-9][0-9]* of " progress &&
	checked $algo reuse-$algo
'

test_expect_success "a layer built with the commit-graph is the layer built without ($algo)" '
	new_repo graph-$algo &&
	commits graph-$algo base 20 &&
	git -C graph-$algo repack -adq &&
	gitpack -C graph-$algo repack -q $geo &&
	git -C graph-$algo checkout -q -b side HEAD~5 &&
	commits graph-$algo side 3 &&
	git -C graph-$algo checkout -q main &&
	git -C graph-$algo merge -q --no-edit side &&
	git -C graph-$algo repack -dq &&
	gitpack -C graph-$algo commit-graph write --reachable --no-progress &&
	test_path_is_file graph-$algo/.git/objects/info/commit-graph &&
	rm -rf nograph-$algo liar-$algo &&
	cp -R graph-$algo nograph-$algo &&
	cp -R graph-$algo liar-$algo &&
	# the first commit of the graph gets a tree that is not there: a
	# writer that reads the graph can no longer bitmap the layer
	perl -e '"'"'
		open(my $fh, "+<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		local $/; my $d = <$fh>;
		for my $i (0 .. ord(substr($d, 6, 1)) - 1) {
			my ($id, $o) = unpack("a4 Q>", substr($d, 8 + 12 * $i, 12));
			next unless $id eq "CDAT";
			substr($d, $o + 3, 1) = chr(ord(substr($d, $o + 3, 1)) ^ 0xff);
		}
		seek($fh, 0, 0); print $fh $d;
	'"'"' liar-$algo/.git/objects/info/commit-graph &&
	gitpack -C graph-$algo repack -q $geo &&
	gitpack -C nograph-$algo -c core.commitGraph=false repack -q $geo &&
	test_cmp $(chain nograph-$algo) $(chain graph-$algo) &&
	for f in graph-$algo/.git/objects/pack/multi-pack-index.d/*.bitmap
	do
		test_cmp_bin $f nograph-$algo/.git/objects/pack/multi-pack-index.d/${f##*/} || return 1
	done &&
	top=$(tail -n 1 $(chain graph-$algo)) &&
	test_path_is_file graph-$algo/.git/objects/pack/multi-pack-index.d/multi-pack-index-$top.bitmap &&
	if gitpack -C liar-$algo repack -q $geo 2>/dev/null
	then
		top=$(tail -n 1 $(chain liar-$algo)) &&
		test_path_is_missing liar-$algo/.git/objects/pack/multi-pack-index.d/multi-pack-index-$top.bitmap
	fi &&
	checked $algo graph-$algo
'

test_expect_success "a new top layer takes over the bitmaps of the layers below it too ($algo)" '
	new_repo below-reuse-$algo &&
	commits below-reuse-$algo base 30 &&
	git -C below-reuse-$algo repack -adq &&
	gitpack -C below-reuse-$algo repack -q $geo &&
	test_commit -C below-reuse-$algo top &&
	git -C below-reuse-$algo repack -dq &&
	gitpack -C below-reuse-$algo repack -q $geo &&
	test_line_count = 2 $(chain below-reuse-$algo) &&
	# a side branch from deep in the base layer, merged: its walk meets
	# a commit whose bitmap only the base layer holds
	git -C below-reuse-$algo checkout -q -b side HEAD~12 &&
	commits below-reuse-$algo side 2 &&
	git -C below-reuse-$algo checkout -q main &&
	git -C below-reuse-$algo merge -q --no-edit side &&
	git -C below-reuse-$algo repack -dq &&
	gitpack -C below-reuse-$algo repack $geo --progress 2>err &&
	tr "\r" "\n" <err >progress &&
	reused=$(sed -n "s/^Bitmaps reused: \([0-9]*\) of .*/\1/p" progress) &&
	test "$reused" -ge 2 &&
	checked $algo below-reuse-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: a push on main, as built the slow way ($algo)" '
	layered fast-push-$algo &&
	commits fast-push-$algo pushed 3 &&
	git -C fast-push-$algo repack -dq &&
	same_as_slow fast-push-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: a push that merges an old branch ($algo)" '
	layered fast-merge-$algo &&
	git -C fast-merge-$algo checkout -q old &&
	commits fast-merge-$algo side 2 &&
	git -C fast-merge-$algo checkout -q main &&
	git -C fast-merge-$algo merge -q --no-edit old &&
	git -C fast-merge-$algo repack -dq &&
	same_as_slow fast-merge-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: new commits dated before the old ones ($algo)" '
	layered fast-dated-$algo &&
	git -C fast-dated-$algo checkout -q -b past old &&
	for i in 1 2 3
	do
		echo $i >fast-dated-$algo/past.t &&
		git -C fast-dated-$algo add past.t &&
		GIT_COMMITTER_DATE="@$((1000000000 + i)) +0000" \
			git -C fast-dated-$algo commit -q -m "past $i" || return 1
	done &&
	git -C fast-dated-$algo checkout -q main &&
	git -C fast-dated-$algo merge -q --no-edit past &&
	git -C fast-dated-$algo repack -dq &&
	same_as_slow fast-dated-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer that takes the place of the old top layer, as built the slow way ($algo)" '
	# a base layer large enough that the new top, which absorbs the
	# old top, stops there
	new_repo fast-roll-$algo repack.midxNewLayerThreshold=4 &&
	history fast-roll-$algo 300 &&
	git -C fast-roll-$algo repack -adq &&
	gitpack -C fast-roll-$algo repack -q $geo &&
	commits fast-roll-$algo top 12 &&
	git -C fast-roll-$algo repack -dq &&
	gitpack -C fast-roll-$algo repack -q $geo &&
	test_line_count = 2 $(chain fast-roll-$algo) &&
	git -C fast-roll-$algo checkout -q -b roll main~20 &&
	commits fast-roll-$algo roll 8 &&
	git -C fast-roll-$algo checkout -q main &&
	git -C fast-roll-$algo merge -q --no-edit roll &&
	git -C fast-roll-$algo repack -dq &&
	old_top=$(tail -n 1 $(chain fast-roll-$algo)) &&
	same_as_slow fast-roll-$algo 2 &&
	! grep $old_top $(chain fast-roll-$algo)
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: a new tag on an old commit, a ref deleted ($algo)" '
	layered fast-refs-$algo &&
	git -C fast-refs-$algo tag -a -m "late" late HEAD~17 &&
	git -C fast-refs-$algo tag light HEAD~3 &&
	git -C fast-refs-$algo branch -D old &&
	test_commit -C fast-refs-$algo after &&
	git -C fast-refs-$algo repack -dq &&
	same_as_slow fast-refs-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: a new commit only an old one reaches ($algo)" '
	layered fast-late-$algo &&
	d=fast-late-$algo &&
	git -C $d checkout -q -b late &&
	echo y >$d/y.t &&
	git -C $d add y.t &&
	git -C $d commit -q -m y &&
	for i in $(test_seq 1 20)
	do
		echo x$i >$d/x$i.t || return 1
	done &&
	git -C $d add x*.t &&
	git -C $d commit -q -m x &&
	x=$(git -C $d rev-parse HEAD) &&
	# x, its tree and its blobs in a pack; its parent y stays loose
	{
		echo $x &&
		git -C $d rev-parse HEAD^{tree} &&
		git -C $d ls-tree HEAD | grep " x[0-9]*\.t\$" | cut -d" " -f3 | cut -f1
	} | git -C $d pack-objects -q .git/objects/pack/pack >/dev/null &&
	git -C $d checkout -q main &&
	git -C $d branch -D late &&
	gitpack -C $d multi-pack-index write --incremental --bitmap &&
	test_line_count = 3 $(chain $d) &&
	# now a ref to x: y comes into the next layer, and only x reaches it
	git -C $d update-ref refs/heads/late $x &&
	same_as_slow $d 4
'

test_expect_success GITPACK_IS_GITPACK "a layer over the unchanged chain: a branch from below the old bitmaps ($algo)" '
	new_repo fast-deep-$algo repack.midxNewLayerThreshold=4 &&
	history fast-deep-$algo 300 &&
	git -C fast-deep-$algo repack -adq &&
	gitpack -C fast-deep-$algo repack -q $geo &&
	commits fast-deep-$algo top 12 &&
	git -C fast-deep-$algo repack -dq &&
	gitpack -C fast-deep-$algo repack -q $geo &&
	# most of the oldest commits have no bitmap: the walk must pass them
	git -C fast-deep-$algo checkout -q -b deep main~290 &&
	commits fast-deep-$algo deep 2 &&
	git -C fast-deep-$algo checkout -q main &&
	git -C fast-deep-$algo merge -q --no-edit deep &&
	git -C fast-deep-$algo repack -dq &&
	same_as_slow fast-deep-$algo
'

test_expect_success GITPACK_IS_GITPACK "a layer ranks its own commits only: each new one gets a bitmap, however old its date ($algo)" '
	new_repo fast-rank-$algo repack.midxNewLayerThreshold=4 &&
	history fast-rank-$algo 300 &&
	git -C fast-rank-$algo repack -adq &&
	gitpack -C fast-rank-$algo repack -q $geo &&
	commits fast-rank-$algo top 12 &&
	git -C fast-rank-$algo repack -dq &&
	gitpack -C fast-rank-$algo repack -q $geo &&
	# three commits dated before all 300: ranked among every commit,
	# they would fall in the windows past the newest hundred
	git -C fast-rank-$algo checkout -q -b past main~299 &&
	for i in 1 2 3
	do
		echo $i >fast-rank-$algo/past.t &&
		git -C fast-rank-$algo add past.t &&
		GIT_COMMITTER_DATE="@$((1000000000 + i)) +0000" \
			git -C fast-rank-$algo commit -q -m "past $i" || return 1
	done &&
	git -C fast-rank-$algo checkout -q main &&
	git -C fast-rank-$algo merge -q --no-edit past &&
	git -C fast-rank-$algo repack -dq &&
	same_as_slow fast-rank-$algo &&
	top=$(tail -n 1 $(chain fast-rank-$algo)) &&
	entries fast-rank-$algo/.git/objects/pack/multi-pack-index.d/multi-pack-index-$top.bitmap >actual &&
	echo 4 >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "a layer over a chain whose top has no bitmap: built as before ($algo)" '
	layered fast-nobm-$algo &&
	top=$(tail -n 1 $(chain fast-nobm-$algo)) &&
	rm fast-nobm-$algo/.git/objects/pack/multi-pack-index.d/multi-pack-index-$top.bitmap &&
	test_commit -C fast-nobm-$algo last &&
	git -C fast-nobm-$algo repack -dq &&
	rm -rf fast-nobm-$algo-slow &&
	cp -R fast-nobm-$algo fast-nobm-$algo-slow &&
	GP_TEST_BITMAP_LAYER_SLOW=1 gitpack -C fast-nobm-$algo-slow repack -q $geo &&
	GIT_TRACE2_EVENT=$TRASH_DIRECTORY/fast-nobm-$algo.trace gitpack -C fast-nobm-$algo repack -q $geo &&
	grep "\"key\":\"layer_types_from_bitmaps\",\"value\":\"0\"" fast-nobm-$algo.trace &&
	test_cmp $(chain fast-nobm-$algo-slow) $(chain fast-nobm-$algo) &&
	for f in fast-nobm-$algo/.git/objects/pack/multi-pack-index.d/*
	do
		test_cmp_bin $f fast-nobm-$algo-slow/.git/objects/pack/multi-pack-index.d/${f##*/} ||
			return 1
	done &&
	checked $algo fast-nobm-$algo
'

done

test_done
