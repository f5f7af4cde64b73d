#!/bin/sh

test_description='changed-path Bloom filters in commit-graph write

gitpack commit-graph write --changed-paths must write the BIDX and BDAT
chunks byte for byte as Git 2.55 does, for hash versions 1 and 2
(commitGraph.changedPathsVersion), in SHA-1 and SHA-256 repositories.
The history covers what changes a filter: files in nested directories
(their leading directories count), a file replaced by a directory of the
same name, a mode change, a symbolic link, a deletion of a whole
directory, a path with bytes >= 0x80 (versions 1 and 2 hash it
differently), an empty commit (one zero byte), a commit of more than 512
files (one 0xff byte), four files in one directory (which counts once), one of 300 files in 300 directories (600 paths:
also 0xff), and a merge (filtered against its first parent only). The
trace2 counts of a fresh write are those git prints. A graph with
filters keeps them (and their version) when rewritten without
--changed-paths, --no-changed-paths drops them, and a rewrite takes the
old filters rather than compute them, as its trace2 counts show. --max-new-filters (and
commitGraph.maxNewFilters) leave the newest commits with empty filters,
which later writes fill in. Version 1 filters rewritten as version 2 are
taken as they are where neither tree has a path with a byte >= 0x80
(trace2 "filter-upgraded"), computed again elsewhere. The GIT_TEST_BLOOM_SETTINGS_* knobs of git give
other hash counts, bits per entry and change limits, which a rewrite
keeps; a lower layer whose settings differ from those of the top layer loses its
filters with the warning git prints.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

if ! test_have_prereq GIT_NEW
then
	skip_all='needs Git 2.55 (GP_TEST_GIT_NEW)'
	test_done
fi

# graph_files DIR: the commit-graph files of DIR with their checksums.
graph_files () {
	(cd "$1/.git/objects/info" && find . -type f | LC_ALL=C sort | xargs md5sum)
}

# step ARGS...: the same write by git in g and by gitpack in p.
step () {
	git_new -C g commit-graph write "$@" &&
	gitpack -C p commit-graph write "$@" &&
	graph_files g >expect &&
	graph_files p >actual &&
	test_cmp expect actual
}

# fresh: no graph in either copy.
fresh () {
	rm -rf g/.git/objects/info/commit-graph g/.git/objects/info/commit-graphs \
	       p/.git/objects/info/commit-graph p/.git/objects/info/commit-graphs
}

for algo in $test_hash_algos
do
	test_expect_success "setup: a history of every kind of change ($algo)" '
		rm -rf g p &&
		git init -q -b main --object-format=$algo g &&
		git -C g config gc.auto 0 &&
		(
			cd g &&
			mkdir -p a/b/c d &&
			echo 1 >a/b/c/f && echo 2 >d/g && echo 3 >top &&
			git add . && test_tick && git commit -qm one &&
			echo 4 >a/b/c/f && test_tick && git commit -qam nested &&
			for f in p q r s; do echo $f >a/b/$f || return 1; done &&
			git add a && test_tick && git commit -qm four-in-one-dir &&
			git rm -q top && mkdir top && echo 5 >top/x && git add top &&
			test_tick && git commit -qm file-to-dir &&
			chmod +x d/g && git add d/g && test_tick && git commit -qm mode &&
			ln -s d/g link && git add link && test_tick && git commit -qm symlink &&
			git rm -qr a && test_tick && git commit -qm rm-dir &&
			printf x >"$(printf "\303\251t\351")" && git add . &&
			test_tick && git commit -qm high-bytes &&
			test_tick && git commit -q --allow-empty -m empty &&
			mkdir big && for i in $(test_seq 600); do echo $i >big/$i || return 1; done &&
			git add big && test_tick && git commit -qm big &&
			for i in $(test_seq 300); do mkdir w$i && echo $i >w$i/f || return 1; done &&
			git add . && test_tick && git commit -qm wide &&
			git checkout -q -b side HEAD~3 &&
			echo 6 >side && git add side && test_tick && git commit -qm side &&
			git checkout -q main && test_tick && git merge -q --no-edit side
		) &&
		cp -R g p
	'

	test_expect_success "--changed-paths, version 1: identical ($algo)" '
		fresh &&
		step --reachable --changed-paths &&
		head -c 200 p/.git/objects/info/commit-graph | tr -c "A-Z0-9" " " >chunks &&
		grep BIDX chunks && grep BDAT chunks &&
		git_new -C p commit-graph verify
	'

	test_expect_success "commitGraph.changedPathsVersion=2: identical ($algo)" '
		fresh &&
		test_when_finished "git -C g config --unset commitGraph.changedPathsVersion; git -C p config --unset commitGraph.changedPathsVersion" &&
		git -C g config commitGraph.changedPathsVersion 2 &&
		git -C p config commitGraph.changedPathsVersion 2 &&
		step --reachable --changed-paths &&
		git_new -C p commit-graph verify
	'

	test_expect_success "commitGraph.changedPaths=true: identical ($algo)" '
		fresh &&
		test_when_finished "git -C g config --unset commitGraph.changedPaths; git -C p config --unset commitGraph.changedPaths" &&
		git -C g config commitGraph.changedPaths true &&
		git -C p config commitGraph.changedPaths true &&
		step --reachable
	'

	test_expect_success "trace2 counts of a fresh write ($algo)" '
		fresh &&
		rm -f g.trace p.trace &&
		GIT_TRACE2_EVENT="$PWD/g.trace" git_new -C g commit-graph write --reachable --changed-paths &&
		GIT_TRACE2_EVENT="$PWD/p.trace" gitpack -C p commit-graph write --reachable --changed-paths &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" g.trace >expect &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" p.trace >actual &&
		test_line_count = 5 expect &&
		test_cmp expect actual
	'

	test_expect_success "--split chain and --split=replace: identical ($algo)" '
		fresh &&
		git -C g rev-list --first-parent main >list &&
		sed -n "6,\$p" list | git_new -C g commit-graph write --stdin-commits --split --changed-paths &&
		sed -n "6,\$p" list | gitpack -C p commit-graph write --stdin-commits --split --changed-paths &&
		step --reachable --split=no-merge --changed-paths &&
		step --reachable --split=replace --changed-paths
	'
	test_expect_success "filters kept without the option, version taken from the graph ($algo)" '
		fresh &&
		git_new -C g -c commitGraph.changedPathsVersion=2 commit-graph write --reachable --changed-paths &&
		gitpack -C p -c commitGraph.changedPathsVersion=2 commit-graph write --reachable --changed-paths &&
		step --reachable &&
		step --reachable --split &&
		step --reachable --split=replace &&
		head -c 300 p/.git/objects/info/commit-graphs/graph-*.graph | tr -c "A-Z0-9" " " >chunks &&
		grep BDAT chunks &&
		step --reachable --no-changed-paths &&
		head -c 200 p/.git/objects/info/commit-graph | tr -c "A-Z0-9" " " >chunks &&
		! grep BDAT chunks
	'

	test_expect_success "a rewrite reuses the filters: trace2 counts as git ($algo)" '
		fresh &&
		step --reachable --changed-paths &&
		rm -f g.trace p.trace &&
		GIT_TRACE2_EVENT="$PWD/g.trace" git_new -C g commit-graph write --reachable &&
		GIT_TRACE2_EVENT="$PWD/p.trace" gitpack -C p commit-graph write --reachable &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" g.trace >expect &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" p.trace >actual &&
		grep "filter-computed.*\"0\"" expect &&
		test_cmp expect actual &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual
	'
	test_expect_success "--max-new-filters and commitGraph.maxNewFilters: identical, then backfilled ($algo)" '
		fresh &&
		rm -f g.trace p.trace &&
		GIT_TRACE2_EVENT="$PWD/g.trace" git_new -C g commit-graph write --reachable --changed-paths --max-new-filters=3 &&
		GIT_TRACE2_EVENT="$PWD/p.trace" gitpack -C p commit-graph write --reachable --changed-paths --max-new-filters=3 &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" g.trace >expect &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" p.trace >actual &&
		test_cmp expect actual &&
		git_new -C g -c commitGraph.maxNewFilters=4 commit-graph write --reachable &&
		gitpack -C p -c commitGraph.maxNewFilters=4 commit-graph write --reachable &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual &&
		step --reachable --split=replace --max-new-filters=2 &&
		step --reachable --changed-paths
	'
	test_expect_success "version 1 filters rewritten as version 2: upgraded where no path has high bits ($algo)" '
		fresh &&
		step --reachable --changed-paths &&
		rm -f g.trace p.trace &&
		GIT_TRACE2_EVENT="$PWD/g.trace" git_new -C g -c commitGraph.changedPathsVersion=2 commit-graph write --reachable &&
		GIT_TRACE2_EVENT="$PWD/p.trace" gitpack -C p -c commitGraph.changedPathsVersion=2 commit-graph write --reachable &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" g.trace >expect &&
		grep -o "\"key\":\"filter-[a-z-]*\",\"value\":\"[0-9]*\"" p.trace >actual &&
		! grep "filter-upgraded.*\"0\"" expect &&
		! grep "filter-computed.*\"0\"" expect &&
		test_cmp expect actual
	'

	test_expect_success "an unsupported commitGraph.changedPathsVersion: a warning, no write ($algo)" '
		fresh &&
		gitpack -C p -c commitGraph.changedPathsVersion=3 commit-graph write --reachable 2>err &&
		grep "commitGraph.changedPathsVersion.*(3) is not supported" err &&
		test_path_is_missing p/.git/objects/info/commit-graph
	'
	test_expect_success "GIT_TEST_BLOOM_SETTINGS_*: identical, and kept by a rewrite ($algo)" '
		fresh &&
		GIT_TEST_BLOOM_SETTINGS_NUM_HASHES=9 GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY=15 \
		GIT_TEST_BLOOM_SETTINGS_MAX_CHANGED_PATHS=10 \
			step --reachable --changed-paths &&
		rm -f p.trace &&
		GIT_TRACE2_EVENT="$PWD/p.trace" gitpack -C p commit-graph write --reachable &&
		grep "{\"hash_version\":1,\"num_hashes\":9,\"bits_per_entry\":15,\"max_changed_paths\":512}" p.trace &&
		git_new -C g commit-graph write --reachable &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual
	'
	test_expect_success "a layer with other filter settings is ignored, with the warning of git ($algo)" '
		fresh &&
		git -C g rev-list --first-parent main >list &&
		for r in g p
		do
			if test $r = g; then cg="git_new -C g"; else cg="gitpack -C p"; fi &&
			sed -n "9,\$p" list | GIT_TEST_BLOOM_SETTINGS_NUM_HASHES=3 \
				$cg commit-graph write --stdin-commits --split --changed-paths &&
			sed -n "5,\$p" list | $cg commit-graph write --stdin-commits --split=no-merge --no-changed-paths &&
			$cg commit-graph write --reachable --split=no-merge --changed-paths || return 1
		done &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual &&
		layer=$(head -n 1 p/.git/objects/info/commit-graphs/commit-graph-chain) &&
		git_new -C g commit-graph write --reachable --changed-paths 2>g.err &&
		gitpack -C p commit-graph write --reachable --changed-paths 2>p.err &&
		grep "disabling Bloom filters for commit-graph layer .$layer. due to incompatible settings" g.err &&
		test_cmp g.err p.err &&
		graph_files g >expect &&
		graph_files p >actual &&
		test_cmp expect actual
	'
done

test_done
