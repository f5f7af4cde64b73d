#!/bin/sh

test_description='incremental multi-pack-index chains (multi-pack-index.d)

gitpack writes a chain of MIDX layers with "multi-pack-index write
--incremental" (with and without --bitmap, --no-write-chain-file, --base),
turns a lone MIDX into the base of a chain and a chain back into a lone
MIDX, and reads chains: lookups through every layer, verify, and the
bitmaps of each layer as git 2.55 reads them. With GP_TEST_GIT255 naming
a git 2.55 (the GIT255 prerequisite), the same sequence of writes by git
and by gitpack gives the same files byte for byte (bitmaps aside, whose
commit selection is gitpack'"'"'s own), and each reads the other'"'"'s. Stock
git 2.39 reads no chain: there, the objects gitpack lists through a chain
are compared with git'"'"'s through the packs. Then a corruption group for
the chain file and for layers: a message naming the file and the line or
offset, never a crash, and readers fall back to the packs.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# chain_dir DIR, chain_file DIR: where DIR's chain lives.
chain_dir () {
	echo "$1/.git/objects/pack/multi-pack-index.d"
}

chain_file () {
	echo "$(chain_dir "$1")/multi-pack-index-chain"
}

# add_packs DIR FROM TO: commits FROM..TO in DIR, each in a pack of its own.
add_packs () {
	for i in $(test_seq $2 $3)
	do
		echo $i >"$1/f$i" &&
		git -C "$1" add f$i &&
		git -C "$1" commit -q -m c$i &&
		git -C "$1" tag c$i &&
		git -C "$1" repack -d -q || return 1
	done
}

# same_objects DIR: gitpack lists through the MIDX what git lists through
# the packs (git 2.39 reads no chain; a 2.55 reads either way).
same_objects () {
	git -C "$1" -c core.multiPackIndex=false cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype) %(objectsize)" >expect &&
	gitpack -C "$1" cat-file --batch-all-objects \
		--batch-check="%(objectname) %(objecttype) %(objectsize)" >actual &&
	test_cmp expect actual &&
	git -C "$1" rev-list --objects --all >all &&
	cut -d" " -f1 all | gitpack -C "$1" cat-file --batch-check >actual &&
	! grep missing actual
}

for algo in $test_hash_algos
do
	r=inc-$algo

	test_expect_success "setup: packs, one a commit ($algo)" '
		git init -q -b main --object-format=$algo $r &&
		git -C $r config maintenance.auto false &&
		git -C $r config gc.auto 0 &&
		add_packs $r 1 3
	'

	test_expect_success "write --incremental with no MIDX: the chain's base ($algo)" '
		gitpack -C $r multi-pack-index write --incremental --bitmap &&
		test_path_is_missing $(midx_pack_dir $r)/multi-pack-index &&
		test_line_count = 1 $(chain_file $r) &&
		base=$(cat $(chain_file $r)) &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$base.midx &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$base.bitmap &&
		gitpack -C $r multi-pack-index verify &&
		same_objects $r
	'

	test_expect_success "a second layer takes only the new packs and objects ($algo)" '
		add_packs $r 4 5 &&
		gitpack -C $r multi-pack-index write --incremental --bitmap &&
		test_line_count = 2 $(chain_file $r) &&
		gitpack -C $r multi-pack-index verify &&
		same_objects $r
	'

	test_expect_success "no new pack: nothing written ($algo)" '
		cp $(chain_file $r) chain.before &&
		ls $(chain_dir $r) >files.before &&
		gitpack -C $r multi-pack-index write --incremental --bitmap &&
		test_cmp chain.before $(chain_file $r) &&
		ls $(chain_dir $r) >files.after &&
		test_cmp files.before files.after
	'

	test_expect_success "a layer without --bitmap, then one with fails as git does ($algo)" '
		add_packs $r 6 6 &&
		gitpack -C $r multi-pack-index write --incremental &&
		test_line_count = 3 $(chain_file $r) &&
		add_packs $r 7 7 &&
		test_must_fail gitpack -C $r multi-pack-index write --incremental --bitmap 2>err &&
		grep "could not load reverse index for MIDX" err &&
		test_line_count = 3 $(chain_file $r) &&
		gitpack -C $r multi-pack-index write --incremental &&
		gitpack -C $r multi-pack-index verify &&
		same_objects $r
	'

	test_expect_success "--no-write-chain-file prints the layer; --base ($algo)" '
		add_packs $r 8 8 &&
		cp $(chain_file $r) chain.before &&
		gitpack -C $r multi-pack-index write --incremental --no-write-chain-file >out &&
		test_cmp chain.before $(chain_file $r) &&
		test_line_count = 1 out &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$(cat out).midx &&
		# with RIDX chunks, whose positions count the base objects
		gitpack -C $r multi-pack-index write --incremental --bitmap \
			--no-write-chain-file --base=none >none &&
		gitpack -C $r multi-pack-index write --incremental --bitmap \
			--no-write-chain-file --base=$(head -n 1 $(chain_file $r)) >on-base &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$(cat none).midx &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$(cat on-base).midx &&
		! test_cmp none on-base &&
		test_must_fail gitpack -C $r multi-pack-index write --incremental \
			--no-write-chain-file --base=0000 2>err &&
		grep "could not find base MIDX" err &&
		test_must_fail gitpack -C $r multi-pack-index write --no-write-chain-file 2>err &&
		grep "cannot use --no-write-chain-file without --incremental" err &&
		test_must_fail gitpack -C $r multi-pack-index write --incremental --base=none 2>err &&
		grep "cannot use --base without --no-write-chain-file" err &&
		test_cmp chain.before $(chain_file $r)
	'

	test_expect_success "a chain goes back to a lone MIDX, and a lone MIDX into a chain ($algo)" '
		gitpack -C $r multi-pack-index write --bitmap &&
		test_path_is_file $(midx_pack_dir $r)/multi-pack-index &&
		test_path_is_missing $(chain_file $r) &&
		ls $(chain_dir $r) >left &&
		test_must_be_empty left &&
		add_packs $r 9 9 &&
		GIT_TEST_MIDX_WRITE_REV=1 gitpack -C $r multi-pack-index write --incremental --bitmap &&
		test_path_is_missing $(midx_pack_dir $r)/multi-pack-index &&
		test_line_count = 2 $(chain_file $r) &&
		lone=$(head -n 1 $(chain_file $r)) &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$lone.midx &&
		test_path_is_file $(chain_dir $r)/multi-pack-index-$lone.bitmap &&
		gitpack -C $r multi-pack-index verify &&
		same_objects $r
	'

	test_expect_success "core.multiPackIndex=false: no MIDX is read ($algo)" '
		rm -rf off-$algo &&
		cp -R $r off-$algo &&
		chmod -R u+w off-$algo &&
		f=$(chain_file off-$algo) &&
		m=$(chain_dir off-$algo)/multi-pack-index-$(sed -n 2p $f).midx &&
		printf "XXXX" | dd of=$m bs=1 seek=0 conv=notrunc 2>/dev/null &&
		gitpack -C off-$algo cat-file -p c9 >/dev/null 2>err &&
		grep "multi-pack-index signature" err &&
		git -C off-$algo config core.multiPackIndex false &&
		gitpack -C off-$algo cat-file -p c9 >/dev/null 2>err &&
		test_must_be_empty err
	'

	test_expect_success "gitpack reads the bitmaps of every layer ($algo)" '
		for c in c9 c5 c3 c1
		do
			gitpack -C $r rev-list --test-bitmap $c 2>err ||
			return 1
		done &&
		git -C $r rev-list --objects --all | cut -d" " -f1 | sort >expect &&
		gitpack -C $r rev-list --objects --all --use-bitmap-index | cut -d" " -f1 | sort >actual &&
		test_cmp expect actual &&
		git -C $r rev-list --objects c9 --not c3 | cut -d" " -f1 | sort >expect &&
		gitpack -C $r rev-list --objects --use-bitmap-index c9 --not c3 | cut -d" " -f1 | sort >actual &&
		test_cmp expect actual &&
		git -C $r rev-list --count --objects --all >expect &&
		gitpack -C $r rev-list --count --objects --all --use-bitmap-index >actual &&
		test_cmp expect actual
	'

	test_expect_success "a layer without its bitmap: no MIDX bitmap, the walk answers ($algo)" '
		rm -rf nb-$algo &&
		cp -R $r nb-$algo &&
		chmod -R u+w nb-$algo &&
		rm $(chain_dir nb-$algo)/multi-pack-index-$(head -n 1 $(chain_file nb-$algo)).bitmap &&
		test_must_fail gitpack -C nb-$algo rev-list --test-bitmap c9 2>err &&
		git -C nb-$algo rev-list --objects c9 --not c3 | cut -d" " -f1 | sort >expect &&
		gitpack -C nb-$algo rev-list --objects --use-bitmap-index c9 --not c3 |
			cut -d" " -f1 | sort >actual &&
		test_cmp expect actual
	'

	test_expect_success "expire and repack refuse a chain, as git does ($algo)" '
		test_must_fail gitpack -C $r multi-pack-index expire 2>err &&
		grep "cannot expire packs from an incremental multi-pack-index" err &&
		test_must_fail gitpack -C $r multi-pack-index repack 2>err &&
		grep "cannot repack an incremental multi-pack-index" err
	'

	test_expect_success GIT255 "git 2.55 reads gitpack's chain and its bitmaps ($algo)" '
		"$GP_TEST_GIT255" -C $r multi-pack-index verify &&
		for c in c9 c5 c3
		do
			"$GP_TEST_GIT255" -C $r rev-list --test-bitmap $c 2>err ||
			return 1
		done &&
		"$GP_TEST_GIT255" -C $r rev-list --objects --all >expect &&
		git -C $r rev-list --objects --all >actual &&
		test_cmp expect actual
	'

	test_expect_success GIT255 "gitpack reads a chain git 2.55 wrote, bitmaps and all ($algo)" '
		rm -rf g-$algo &&
		git init -q -b main --object-format=$algo g-$algo &&
		git -C g-$algo config maintenance.auto false &&
		for i in 1 2 3
		do
			add_packs g-$algo $((2 * i - 1)) $((2 * i)) &&
			"$GP_TEST_GIT255" -C g-$algo multi-pack-index write --incremental --bitmap ||
			return 1
		done &&
		test_line_count = 3 $(chain_file g-$algo) &&
		gitpack -C g-$algo multi-pack-index verify &&
		same_objects g-$algo &&
		gitpack -C g-$algo rev-list --test-bitmap c6 &&
		git -C g-$algo rev-list --objects c6 --not c2 | cut -d" " -f1 | sort >expect &&
		gitpack -C g-$algo rev-list --objects --use-bitmap-index c6 --not c2 |
			cut -d" " -f1 | sort >actual &&
		test_cmp expect actual
	'

	test_expect_success GIT255 "the same writes by git 2.55 and gitpack: the same files ($algo)" '
		rm -rf s-$algo s-$algo.git s-$algo.gp &&
		git init -q -b main --object-format=$algo s-$algo &&
		git -C s-$algo config maintenance.auto false &&
		add_packs s-$algo 1 2 &&
		cp -R s-$algo s-$algo.git &&
		cp -R s-$algo s-$algo.gp &&
		step () {
			"$GP_TEST_GIT255" -C s-$algo.git "$@" >expect.out 2>expect.err
			echo $? >expect.code
			gitpack -C s-$algo.gp "$@" >actual.out 2>actual.err
			echo $? >actual.code
			test_cmp expect.code actual.code &&
			test_cmp expect.out actual.out &&
			(cd s-$algo.git/.git/objects/pack && find . -type f ! -name "*.bitmap" | sort) >expect.files &&
			(cd s-$algo.gp/.git/objects/pack && find . -type f ! -name "*.bitmap" | sort) >actual.files &&
			test_cmp expect.files actual.files &&
			for f in $(cat expect.files)
			do
				test_cmp_bin s-$algo.git/.git/objects/pack/$f s-$algo.gp/.git/objects/pack/$f ||
				return 1
			done
		} &&
		both () {
			# the same commits: fixed dates, the same names
			for d in s-$algo.git s-$algo.gp
			do
				GIT_COMMITTER_DATE=@1700000000 GIT_AUTHOR_DATE=@1700000000 \
					add_packs $d $1 $2 || return 1
			done
		} &&
		step multi-pack-index write --bitmap &&
		both 3 3 && step multi-pack-index write --incremental --bitmap &&
		both 4 5 && step multi-pack-index write --incremental --bitmap &&
		both 6 6 && step multi-pack-index write --incremental &&
		both 7 7 && step multi-pack-index write --incremental --no-write-chain-file &&
		step multi-pack-index write --incremental &&
		step multi-pack-index verify &&
		# (not --bitmap: git 2.55 then mixes up the ids of the chain'"'"'s
		# packs when it picks the preferred one, and loses its objects)
		both 8 8 && step multi-pack-index write &&
		"$GP_TEST_GIT255" -C s-$algo.gp multi-pack-index verify &&
		gitpack -C s-$algo.git multi-pack-index verify
	'

	test_expect_success "compact: layers 2..4 of 5 become one, the pseudo-pack order kept ($algo)" '
		rm -rf k-$algo &&
		git init -q -b main --object-format=$algo k-$algo &&
		git -C k-$algo config maintenance.auto false &&
		for i in 1 2 3 4 5
		do
			add_packs k-$algo $i $i &&
			gitpack -C k-$algo multi-pack-index write --incremental --bitmap || return 1
		done &&
		f=$(chain_file k-$algo) &&
		cp $f chain.before &&
		gitpack -C k-$algo multi-pack-index compact --incremental --bitmap \
			$(sed -n 2p $f) $(sed -n 4p $f) &&
		test_line_count = 3 $f &&
		sed -n 1p chain.before >expect && sed -n 5p chain.before >>expect &&
		{ sed -n 1p $f && sed -n 3p $f; } >actual &&
		test_cmp expect actual &&
		m=$(chain_dir k-$algo)/multi-pack-index-$(sed -n 2p $f).midx &&
		midx_dump $m $algo >dump &&
		grep "^header MIDX version=2 .* packs=3" dump &&
		sed -n "s/^pack [0-9]* pack-\([0-9a-f]*\)\.idx/\1/p" dump >packs &&
		test_line_count = 3 packs &&
		gitpack -C k-$algo multi-pack-index verify &&
		same_objects k-$algo &&
		ls $(chain_dir k-$algo) | grep -c "\.midx\$" >count &&
		echo 3 >expect && test_cmp expect count
	'

	test_expect_success "compact: bad endpoints and versions, as git says ($algo)" '
		f=$(chain_file k-$algo) &&
		test_must_fail gitpack -C k-$algo multi-pack-index compact --incremental \
			nosuch $(sed -n 2p $f) 2>err &&
		grep "could not find MIDX: nosuch" err &&
		test_must_fail gitpack -C k-$algo multi-pack-index compact --incremental \
			$(sed -n 2p $f) $(sed -n 2p $f) 2>err &&
		grep "MIDX compaction endpoints must be unique" err &&
		test_must_fail gitpack -C k-$algo multi-pack-index compact --incremental \
			$(sed -n 3p $f) $(sed -n 1p $f) 2>err &&
		grep "MIDX $(sed -n 3p $f) must be an ancestor of $(sed -n 1p $f)" err &&
		git -C k-$algo config midx.version 1 &&
		test_must_fail gitpack -C k-$algo multi-pack-index compact --incremental \
			$(sed -n 1p $f) $(sed -n 2p $f) 2>err &&
		git -C k-$algo config --unset midx.version &&
		grep "cannot perform MIDX compaction with v1 format" err
	'

	test_expect_success GIT255 "compact: the same files as git 2.55, which reads them ($algo)" '
		rm -rf kk-$algo kk-$algo.git kk-$algo.gp &&
		git init -q -b main --object-format=$algo kk-$algo &&
		git -C kk-$algo config maintenance.auto false &&
		for c in D C A B E
		do
			echo $c >kk-$algo/$c &&
			git -C kk-$algo add $c &&
			git -C kk-$algo commit -q -m $c &&
			git -C kk-$algo pack-objects -q --all --unpacked \
				.git/objects/pack/pack-$c </dev/null >/dev/null &&
			git -C kk-$algo prune-packed &&
			"$GP_TEST_GIT255" -C kk-$algo multi-pack-index write --incremental --bitmap ||
			return 1
		done &&
		cp -R kk-$algo kk-$algo.git &&
		cp -R kk-$algo kk-$algo.gp &&
		f=$(chain_file kk-$algo) &&
		"$GP_TEST_GIT255" -C kk-$algo.git multi-pack-index compact --incremental --bitmap \
			$(sed -n 2p $f) $(sed -n 4p $f) &&
		gitpack -C kk-$algo.gp multi-pack-index compact --incremental --bitmap \
			$(sed -n 2p $f) $(sed -n 4p $f) &&
		(cd kk-$algo.git/.git/objects/pack && find . -type f ! -name "*.bitmap" | sort) >expect &&
		(cd kk-$algo.gp/.git/objects/pack && find . -type f ! -name "*.bitmap" | sort) >actual &&
		test_cmp expect actual &&
		for x in $(cat expect)
		do
			test_cmp_bin kk-$algo.git/.git/objects/pack/$x kk-$algo.gp/.git/objects/pack/$x ||
			return 1
		done &&
		"$GP_TEST_GIT255" -C kk-$algo.gp multi-pack-index verify &&
		"$GP_TEST_GIT255" -C kk-$algo.gp rev-list --test-bitmap HEAD
	'

	# The corruption group: each case is a copy of a good chain of three
	# layers (written by gitpack, with bitmaps), damaged in one place.
	test_expect_success "corruption setup ($algo)" '
		rm -rf good-$algo &&
		git init -q -b main --object-format=$algo good-$algo &&
		git -C good-$algo config maintenance.auto false &&
		add_packs good-$algo 1 2 &&
		gitpack -C good-$algo multi-pack-index write --incremental --bitmap &&
		add_packs good-$algo 3 4 &&
		gitpack -C good-$algo multi-pack-index write --incremental --bitmap &&
		add_packs good-$algo 5 5 &&
		gitpack -C good-$algo multi-pack-index write --incremental --bitmap &&
		test_line_count = 3 $(chain_file good-$algo)
	'

	# bad_chain NAME PATTERN: the copy c-ALGO-NAME, damaged by the caller,
	# fails verify with a message matching PATTERN that names a file, and
	# readers still find every object (through the packs).
	bad_chain () {
		test_must_fail gitpack -C c-$algo-$1 multi-pack-index verify 2>err &&
		cat err &&
		grep "$2" err &&
		grep "multi-pack-index" err &&
		same_objects c-$algo-$1 2>warnings &&
		gitpack -C c-$algo-$1 cat-file -p c5 >/dev/null
	}

	copy_good () {
		rm -rf c-$algo-$1 &&
		cp -R good-$algo c-$algo-$1 &&
		chmod -R u+w c-$algo-$1
	}

	test_expect_success "chain: a line that is not a hash ($algo)" '
		copy_good nothex &&
		f=$(chain_file c-$algo-nothex) &&
		sed "2s/^./z/" $f >$f.new && mv $f.new $f &&
		bad_chain nothex "line 2 (offset [0-9]*).*not a hash"
	'

	test_expect_success "chain: a short line ($algo)" '
		copy_good short &&
		f=$(chain_file c-$algo-short) &&
		sed "1s/..\$//" $f >$f.new && mv $f.new $f &&
		bad_chain short "line 1 (offset 0) is [0-9]* characters"
	'

	test_expect_success "chain: the last line not terminated ($algo)" '
		copy_good unterminated &&
		f=$(chain_file c-$algo-unterminated) &&
		printf "%s" "$(cat $f)" >$f.new && mv $f.new $f &&
		bad_chain unterminated "line 3 (offset [0-9]*) is not terminated"
	'

	test_expect_success "chain: a layer that is missing ($algo)" '
		copy_good missing &&
		f=$(chain_file c-$algo-missing) &&
		rm $(chain_dir c-$algo-missing)/multi-pack-index-$(sed -n 2p $f).midx &&
		bad_chain missing "unable to find all multi-pack index files.*layer 2"
	'

	test_expect_success "chain: layers in the wrong order ($algo)" '
		copy_good order &&
		f=$(chain_file c-$algo-order) &&
		{ sed -n 2p $f && sed -n 1p $f && sed -n 3p $f; } >$f.new && mv $f.new $f &&
		bad_chain order "invalid MIDX object position\\|RIDX\\|BTMP"
	'

	test_expect_success "chain: a layer under another layer's name ($algo)" '
		copy_good renamed &&
		d=$(chain_dir c-$algo-renamed) f=$(chain_file c-$algo-renamed) &&
		cp $d/multi-pack-index-$(sed -n 1p $f).midx $d/multi-pack-index-$(sed -n 2p $f).midx &&
		bad_chain renamed "layer 2 is named for checksum"
	'

	test_expect_success "an empty chain file is no chain ($algo)" '
		copy_good empty &&
		: >$(chain_file c-$algo-empty) &&
		gitpack -C c-$algo-empty multi-pack-index verify &&
		same_objects c-$algo-empty
	'

	test_expect_success "layer: RIDX entry out of the layer's range ($algo)" '
		copy_good ridx &&
		d=$(chain_dir c-$algo-ridx) f=$(chain_file c-$algo-ridx) &&
		m=$d/multi-pack-index-$(sed -n 2p $f).midx &&
		ofs=$(midx_chunk_offset $m RIDX) &&
		printf "\0\0\0\0" | dd of=$m bs=1 seek=$ofs conv=notrunc 2>/dev/null &&
		bad_chain ridx "invalid MIDX object position: RIDX entry 0 is 0, outside \\[[1-9][0-9]*, [0-9]*) (multi-pack-index-.*\\.midx, offset $ofs)"
	'

	test_expect_success "layer: BTMP range out of the layer's range ($algo)" '
		copy_good btmp &&
		d=$(chain_dir c-$algo-btmp) f=$(chain_file c-$algo-btmp) &&
		m=$d/multi-pack-index-$(sed -n 3p $f).midx &&
		ofs=$(midx_chunk_offset $m BTMP) &&
		printf "\0\0\0\0" | dd of=$m bs=1 seek=$ofs conv=notrunc 2>/dev/null &&
		bad_chain btmp "BTMP chunk: pack 0 (offset $ofs) covers bits 0\\.\\."
	'

	test_expect_success "layer: a damaged trailer is found by verify ($algo)" '
		copy_good trailer &&
		d=$(chain_dir c-$algo-trailer) f=$(chain_file c-$algo-trailer) &&
		m=$d/multi-pack-index-$(sed -n 3p $f).midx &&
		size=$(wc -c <$m) &&
		printf "\377" | dd of=$m bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null &&
		bad_chain trailer "layer 3 is named for checksum\\|incorrect checksum"
	'
done

test_done
