#!/bin/sh

test_description='commit-graph files and split chains (gitformat-commit-graph)

Two copies of one repository (merges, an octopus, an annotated tag, a
commit dated past 2^32 and one dated before its parent by more than
2^31 seconds, so that GDO2 is written) get the same sequence of writes,
by git in one and by gitpack in the other: single files, --split chains
with the default merge rules, --size-multiple, --max-commits,
--split=no-merge and --split=replace, --append, --stdin-commits and
--stdin-packs. The files must be identical byte for byte. git verifies
what gitpack wrote and gitpack what git wrote (Bloom filters included,
which gitpack reads past; t5337 checks the ones it writes). rev-list gives the same commits with the graph
as without, and a write whose commits a second thread reads ahead
(commit-prefetch.c) gives the same file. A fork whose chain stands on
the layers of its alternate gets the same files from both. Then corruption: a truncated file, a bad signature, a parent
position outside the graph and a chain naming a missing layer give an
error naming the file, never a crash.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# graph_files DIR: the commit-graph files of DIR with their checksums.
graph_files () {
	(cd "$1/.git/objects/info" && find . -type f | LC_ALL=C sort | xargs md5sum)
}

# same_graphs: what git wrote in g is what gitpack wrote in p.
same_graphs () {
	graph_files g >expect &&
	graph_files p >actual &&
	test_cmp expect actual
}

# step ARGS...: the same write by git in g and by gitpack in p.
step () {
	git -C g commit-graph write "$@" &&
	gitpack -C p commit-graph write "$@" &&
	same_graphs
}

# commits N NAME: N commits in both copies, with the same dates.
commits () {
	for r in g p
	do
		for i in $(test_seq $1)
		do
			GIT_COMMITTER_DATE="$((1600000000 + i)) +0000" \
			GIT_AUTHOR_DATE="1600000000 +0000" \
				git -C $r commit -q --allow-empty -m "$2$i" || return 1
		done
	done
}

# same_rev_list DIR ARGS...: gitpack rev-list with the graph, git's and
# gitpack's without it agree.
same_rev_list () {
	dir=$1 &&
	shift &&
	git -C $dir -c core.commitGraph=false rev-list "$@" >expect &&
	gitpack -C $dir rev-list "$@" >actual &&
	test_cmp expect actual &&
	gitpack -C $dir -c core.commitGraph=false rev-list "$@" >actual &&
	test_cmp expect actual
}

# chunk_offset FILE ID: where chunk ID ("CDAT") starts.
chunk_offset () {
	n=$(od -An -tu1 -j6 -N1 "$1" | tr -d " ") &&
	i=0 &&
	while test $i -lt $n
	do
		ofs=$((8 + 12 * i)) &&
		id=$(dd if="$1" bs=1 skip=$ofs count=4 2>/dev/null) &&
		if test "$id" = "$2"
		then
			od -An -tu1 -j$((ofs + 4)) -N8 "$1" |
			awk '{ v = 0; for (k = 1; k <= NF; k++) v = v * 256 + $k; print v }'
			return 0
		fi &&
		i=$((i + 1))
	done
	return 1
}

# odd_commit MSG DATE: a commit on main whose committer date is DATE,
# which git commit would refuse.
odd_commit () {
	tree=$(git -C g rev-parse main^{tree}) &&
	parent=$(git -C g rev-parse main) &&
	oid=$(printf "tree %s\nparent %s\nauthor A <a@b> %s +0000\ncommitter C <c@d> %s +0000\n\n%s\n" \
		$tree $parent $2 $2 $1 | git -C g hash-object -w -t commit --stdin) &&
	git -C g update-ref refs/heads/main $oid
}

for algo in $test_hash_algos
do
	test_expect_success "setup: merges, an octopus, odd dates ($algo)" '
		rm -rf g p &&
		git init -q -b main --object-format=$algo g &&
		git -C g config gc.auto 0 &&
		git -C g config maintenance.auto false &&
		test_commit -C g one &&
		test_commit -C g two &&
		git -C g checkout -q -b side one &&
		test_commit -C g side1 &&
		git -C g checkout -q -b other one &&
		test_commit -C g side2 &&
		git -C g checkout -q main &&
		test_tick &&
		git -C g merge -q --no-edit side other &&
		test_commit -C g --annotate three &&
		odd_commit future 4300000000 &&
		odd_commit past 100 &&
		git -C g tag tree-tag main^{tree} &&
		git -C g repack -adq &&
		cp -R g p
	'

	test_expect_success "single file: identical, each verifies the other ($algo)" '
		step --reachable &&
		head -c 120 p/.git/objects/info/commit-graph | tr -c "A-Z0-9" " " >chunks &&
		grep GDO2 chunks &&
		grep EDGE chunks &&
		git -C p commit-graph verify &&
		gitpack -C g commit-graph verify &&
		gitpack -C p commit-graph verify
	'

	test_expect_success "a thread reads commits ahead: the same file ($algo)" '
		rm -rf q r &&
		cp -R p q &&
		rm -f q/.git/objects/info/commit-graph &&
		test_commit -C q ahead1 &&
		git -C q repack -q &&
		test_commit -C q ahead2 &&
		cp -R q r &&
		git -C r commit-graph write --reachable &&
		GP_TEST_COMMIT_PREFETCH=1 GIT_TRACE2_EVENT="$(pwd)/ahead.trace" \
			gitpack -C q commit-graph write --reachable &&
		cmp r/.git/objects/info/commit-graph q/.git/objects/info/commit-graph &&
		grep "\"key\":\"commits_read_ahead\",\"value\":\"[1-9]" ahead.trace
	'

	test_expect_success "packed commits by default; --stdin-packs ($algo)" '
		step &&
		ls g/.git/objects/pack | grep "\.idx$" >packs &&
		git -C g commit-graph write --stdin-packs <packs &&
		gitpack -C p commit-graph write --stdin-packs <packs &&
		same_graphs
	'

	test_expect_success "--stdin-commits and --append ($algo)" '
		git -C g rev-parse side two >tips &&
		git -C g commit-graph write --stdin-commits <tips &&
		gitpack -C p commit-graph write --stdin-commits <tips &&
		same_graphs &&
		git -C g rev-parse main three >tips &&
		git -C g commit-graph write --stdin-commits --append <tips &&
		gitpack -C p commit-graph write --stdin-commits --append <tips &&
		same_graphs &&
		gitpack -C p commit-graph verify
	'

	test_expect_success "--stdin-commits: bad input ($algo)" '
		echo nothex | test_must_fail gitpack -C p commit-graph write --stdin-commits 2>err &&
		grep "unexpected non-hex object ID: nothex" err &&
		test_oid_hexsz $algo >/dev/null &&
		printf "%0$(test_oid_hexsz $algo)d\n" 1 |
			test_must_fail gitpack -C p commit-graph write --stdin-commits 2>err &&
		grep "invalid object" err
	'

	test_expect_success "split chains: default rules, multiples, no-merge, replace ($algo)" '
		step --reachable &&
		commits 3 a && step --reachable --split &&
		test_path_is_missing p/.git/objects/info/commit-graph &&
		commits 2 b && step --reachable --split &&
		commits 1 c && step --reachable --split &&
		commits 5 d && step --reachable --split=no-merge &&
		commits 1 e && step --reachable --split &&
		commits 1 f && step --reachable --split --size-multiple=8 &&
		commits 2 h && step --reachable --split=no-merge &&
		test_line_count -ge 2 p/.git/objects/info/commit-graphs/commit-graph-chain &&
		git -C p commit-graph verify &&
		gitpack -C g commit-graph verify &&
		gitpack -C p commit-graph verify --shallow &&
		same_rev_list p --all &&
		commits 2 i && step --reachable --split --max-commits=1 &&
		step --reachable --split &&
		commits 2 j && step --reachable --split=replace &&
		test_line_count = 1 p/.git/objects/info/commit-graphs/commit-graph-chain &&
		commits 1 k && step --reachable --split=no-merge &&
		commits 1 l && step --reachable &&
		test_path_is_missing p/.git/objects/info/commit-graphs/commit-graph-chain &&
		commits 1 m && step --reachable --split &&
		git -C p commit-graph verify
	'

	test_expect_success "--split=replace keeps only what it is given; grafts stop a write ($algo)" '
		git -C g rev-parse main~3 >tips &&
		git -C g commit-graph write --split=replace --stdin-commits <tips &&
		gitpack -C p commit-graph write --split=replace --stdin-commits <tips &&
		same_graphs &&
		rm -rf gr && cp -R p gr &&
		rm -rf gr/.git/objects/info/commit-graph* &&
		git -C gr rev-parse main main~2 >gr/.git/info/grafts &&
		gitpack -C gr commit-graph write --reachable &&
		test_path_is_missing gr/.git/objects/info/commit-graph &&
		step --reachable
	'

	test_expect_success "rev-list: the same with and without the graph ($algo)" '
		same_rev_list p --all &&
		same_rev_list p --objects --all &&
		same_rev_list p main ^side &&
		same_rev_list p --count --all
	'

	test_expect_success "Bloom filters: git reads them past, gitpack writes the same ($algo)" '
		rm -rf b && cp -R g b &&
		git -C b commit-graph write --reachable --changed-paths &&
		cp b/.git/objects/info/commit-graph git.graph &&
		gitpack -C b commit-graph verify &&
		same_rev_list b --all &&
		rm b/.git/objects/info/commit-graph &&
		gitpack -C b commit-graph write --reachable --changed-paths &&
		test_cmp_bin git.graph b/.git/objects/info/commit-graph &&
		git -C b commit-graph verify
	'

	test_expect_success "core.commitGraph=false: write warns and writes nothing ($algo)" '
		rm -rf n && cp -R g n &&
		rm -rf n/.git/objects/info/commit-graph* &&
		gitpack -C n -c core.commitGraph=false commit-graph write --reachable 2>err &&
		grep "core.commitGraph" err &&
		test_path_is_missing n/.git/objects/info/commit-graph
	'

	test_expect_success GITPACK_IS_GITPACK "corrupt: truncated, bad signature, hash version ($algo)" '
		rm -rf c && cp -R g c &&
		rm -rf c/.git/objects/info/commit-graphs &&
		git -C c commit-graph write --reachable &&
		f=c/.git/objects/info/commit-graph &&
		cp $f good &&
		truncate_file $f 30 &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "commit-graph: commit-graph file is too small" err &&
		same_rev_list c --all &&
		cp good $f && corrupt_byte $f 0 &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "commit-graph: commit-graph signature" err &&
		cp good $f && corrupt_byte $f 5 &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "hash version" err &&
		cp good $f && truncate_file $f -1 &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "commit-graph" err &&
		cp good $f && corrupt_byte $f -1 &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "incorrect checksum" err
	'

	test_expect_success GITPACK_IS_GITPACK "corrupt: parent out of range, wrong tree, write mends ($algo)" '
		f=c/.git/objects/info/commit-graph &&
		cp good $f &&
		cdat=$(chunk_offset $f CDAT) &&
		rawsz=$(test_oid_rawsz $algo) &&
		corrupt_byte $f $((cdat + rawsz)) 0x6f &&
		test_must_fail gitpack -C c rev-list --all 2>err &&
		grep "parent position" err &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "commit-graph" err &&
		cp good $f && corrupt_byte $f $((cdat + 3)) &&
		test_must_fail gitpack -C c commit-graph verify 2>err &&
		grep "root tree OID for commit" err &&
		# The walk takes the tree from the graph: proof that it is read.
		test_must_fail gitpack -C c rev-list --objects --all 2>err &&
		grep "bad tree object" err &&
		gitpack -C c -c core.commitGraph=false rev-list --objects --all >/dev/null &&
		gitpack -C c commit-graph write --reachable &&
		test_cmp_bin good $f &&
		gitpack -C c commit-graph verify
	'

	test_expect_success GITPACK_IS_GITPACK "corrupt chain: a missing layer, a bad line ($algo)" '
		rm -rf s && cp -R p s &&
		commits_s () { git -C s commit -q --allow-empty -m "$1"; } &&
		commits_s x1 && gitpack -C s commit-graph write --reachable --split=no-merge &&
		chain=s/.git/objects/info/commit-graphs/commit-graph-chain &&
		cp $chain chain.good &&
		layer=$(tail -n 1 $chain) &&
		mv s/.git/objects/info/commit-graphs/graph-$layer.graph layer.save &&
		test_must_fail gitpack -C s commit-graph verify 2>err &&
		grep "unable to find all commit-graph files" err &&
		same_rev_list s --all &&
		mv layer.save s/.git/objects/info/commit-graphs/graph-$layer.graph &&
		chmod u+w $chain && echo nothex >>$chain &&
		test_must_fail gitpack -C s commit-graph verify 2>err &&
		grep "line .nothex. not a hash" err &&
		cp chain.good $chain &&
		gitpack -C s commit-graph verify &&
		base=$(head -n 1 $chain) &&
		corrupt_byte s/.git/objects/info/commit-graphs/graph-$base.graph 200 &&
		test_must_fail gitpack -C s commit-graph verify 2>err &&
		grep "incorrect checksum" err
	'
done

test_expect_success 'a new layer takes its parents levels from the layers below (trace2)' '
	rm -rf lv &&
	git init -q lv &&
	for i in 1 2 3 4 5
	do
		test_commit -C lv base-$i || return 1
	done &&
	gitpack -C lv commit-graph write --reachable &&
	test_commit -C lv extra &&
	gitpack -C lv commit-graph write --reachable --split=no-merge &&
	git -C lv checkout -q base-3 &&
	test_commit -C lv new-branch &&
	GIT_TRACE2_EVENT="$(pwd)/lv.trace" gitpack -C lv commit-graph write --reachable --split=no-merge &&
	grep "\"key\":\"generation-dfs-steps\",\"value\":\"1\"" lv.trace &&
	git -C lv commit-graph verify
'

# alt_graphs DIR: the local layer files of DIR and their checksums, and
# the chain file.
alt_graphs () {
	(cd "$1/.git/objects/info/commit-graphs" &&
	 ls graph-*.graph && md5sum graph-*.graph commit-graph-chain)
}

test_expect_success 'a chain whose lower layers are in an alternate (git t5324 "fork")' '
	rm -rf ab af-git af-gp &&
	git init -q ab &&
	for i in 1 2 3
	do
		test_commit -C ab ab-$i || return 1
	done &&
	git -C ab commit-graph write --reachable --split &&
	test_commit -C ab ab-4 &&
	git -C ab commit-graph write --reachable --split=no-merge &&
	test_line_count = 2 ab/.git/objects/info/commit-graphs/commit-graph-chain &&
	git clone -q ab af-git &&
	rm -rf af-git/.git/objects/info/commit-graphs &&
	echo "$(pwd)/ab/.git/objects" >af-git/.git/objects/info/alternates &&
	test_commit -C af-git fork-1 &&
	test_tick &&
	next=$(git -C af-git commit-tree -p HEAD -m fork-2 HEAD^{tree}) &&
	cp -R af-git af-gp &&
	# No local graph yet: the alternate'"'"'s chain is read.
	same_rev_list af-gp HEAD &&
	git -C af-git commit-graph write --reachable --split &&
	gitpack -C af-gp commit-graph write --reachable --split &&
	test_line_count = 3 af-gp/.git/objects/info/commit-graphs/commit-graph-chain &&
	alt_graphs af-git >expect &&
	alt_graphs af-gp >actual &&
	test_cmp expect actual &&
	test $(grep -c "^graph-" actual) = 1 &&
	git -C af-gp commit-graph verify &&
	gitpack -C af-gp commit-graph verify &&
	gitpack -C af-git commit-graph verify &&
	same_rev_list af-gp HEAD &&
	# The local layer is merged with the new one; the alternate'"'"'s stay.
	git -C af-git update-ref refs/heads/fork-2 $next &&
	git -C af-gp update-ref refs/heads/fork-2 $next &&
	git -C af-git commit-graph write --reachable --split --object-dir=.git/objects/ &&
	gitpack -C af-gp commit-graph write --reachable --split --object-dir=.git/objects/ &&
	test_line_count = 3 af-gp/.git/objects/info/commit-graphs/commit-graph-chain &&
	alt_graphs af-git >expect &&
	alt_graphs af-gp >actual &&
	test_cmp expect actual &&
	test $(grep -c "^graph-" actual) = 1 &&
	git -C af-gp commit-graph verify &&
	gitpack -C af-gp commit-graph verify &&
	same_rev_list af-gp --all &&
	git -C ab commit-graph verify &&
	# An alternate'"'"'s lone commit-graph, which no chain can name, is
	# taken into the new layer.
	rm -rf al al-git al-gp &&
	git init -q al &&
	test_commit -C al al-1 &&
	test_commit -C al al-2 &&
	git -C al commit-graph write --reachable &&
	git clone -q al al-git &&
	rm -rf al-git/.git/objects/info/commit-graph* &&
	echo "$(pwd)/al/.git/objects" >al-git/.git/objects/info/alternates &&
	test_commit -C al-git al-3 &&
	cp -R al-git al-gp &&
	git -C al-git commit-graph write --reachable --split &&
	gitpack -C al-gp commit-graph write --reachable --split &&
	alt_graphs al-git >expect &&
	alt_graphs al-gp >actual &&
	test_cmp expect actual &&
	test_line_count = 1 al-gp/.git/objects/info/commit-graphs/commit-graph-chain &&
	test_path_is_file al/.git/objects/info/commit-graph &&
	git -C al-gp commit-graph verify &&
	gitpack -C al-gp commit-graph verify &&
	same_rev_list al-gp --all
'

test_expect_success GITPACK_IS_GITPACK 'a fork without a graph walks through its alternate'"'"'s; a layer found nowhere' '
	rm -rf ab2 af3 &&
	cp -R ab ab2 &&
	git clone -q ab2 af3 &&
	rm -rf af3/.git/objects/info/commit-graphs &&
	echo "$(pwd)/ab2/.git/objects" >af3/.git/objects/info/alternates &&
	same_rev_list af3 --objects --all &&
	rm -rf af4 && cp -R af-gp af4 &&
	echo "$(pwd)/ab2/.git/objects" >af4/.git/objects/info/alternates &&
	gitpack -C af4 commit-graph verify &&
	f=ab2/.git/objects/info/commit-graphs/graph-$(head -n 1 ab2/.git/objects/info/commit-graphs/commit-graph-chain).graph &&
	cdat=$(chunk_offset $f CDAT) &&
	corrupt_byte $f $((cdat + 3)) &&
	# The walk takes the tree from the alternate'"'"'s graph: proof that it is read.
	test_must_fail gitpack -C af3 rev-list --objects --all 2>err &&
	grep "bad tree object" err &&
	gitpack -C af3 -c core.commitGraph=false rev-list --objects --all >/dev/null &&
	# A fork'"'"'s chain naming a layer that neither directory has.
	rm -f $f &&
	test_must_fail gitpack -C af4 commit-graph verify 2>err &&
	grep "unable to find all commit-graph files (graph-.*\.graph)" err
'

test_expect_success 'usage: one source of commits, a known --split' '
	test_must_fail gitpack -C p commit-graph write --reachable --stdin-commits 2>err &&
	grep "use at most one of --reachable, --stdin-commits, or --stdin-packs" err &&
	test_must_fail gitpack -C p commit-graph write --split=bogus 2>err &&
	grep "unrecognized --split argument, bogus" err &&
	test_expect_code 129 gitpack commit-graph nope
'

test_done
