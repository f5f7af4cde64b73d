#!/bin/sh

test_description='the sparse:oid object filter, as git applies it

rev-list --objects --filter=sparse:oid=<blob> lists what git lists, in
the same order, for pattern blobs of every kind: directories, negation,
anchoring, globs, "**", sets, the oddities of a pattern file (comments,
CR, trailing spaces, escapes, a BOM), cone-mode patterns (which the
filter reads as plain patterns), an empty blob and the top directory
pattern "/"; over history where one tree and one blob sit both inside
and outside the patterns. Also in combine: specs, with tips named on
the command line, --filter-provided-objects, --filter-print-omitted,
core.ignoreCase, and git'"'"'s errors for a name that does not resolve
or is not a blob. pack-objects and repack --filter=sparse:oid write
packs that hold what git'"'"'s hold.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# make_repo ALGO DIR: history with paths in and out of every pattern set below.
make_repo () {
	git init -q -b main --object-format=$1 $2 &&
	(
		cd $2 &&
		mkdir -p dir1/sub dir2 inc/sub exc/sub src/lib/deep/er docs "sp ace" sub deep &&
		for f in a b top.txt secret1.txt README.md Readme.MD f1.c f22.c q.md \
			dir1/x dir1/sub/y dir1/sub/z.txt dir2/x dir2/sub.txt \
			inc/file inc/sub/file exc/file exc/sub/file \
			src/main.c src/lib/util.c src/lib/deep/er/x.c src/lib/deep/y.h \
			docs/guide.md "sp ace/f" "!bang" "#hash" "tr " "[x]" "a*b" \
			src/top.h sub/x deep/x
		do
			echo "$f" >"$f" || return 1
		done &&
		# the same content at several paths, in and out of the patterns
		cp dir1/x exc/twin && cp dir1/x inc/twin &&
		git add . &&
		test_tick &&
		git commit -q -m one &&
		# a tree met at two paths: same contents in shared-in/ and shared-out/
		mkdir shared-in shared-out &&
		echo shared >shared-in/f && echo shared >shared-out/f &&
		echo changed >dir1/x &&
		git add . &&
		test_tick &&
		git commit -q -m two &&
		git checkout -q -b side HEAD~1 &&
		echo side >exc/file && echo side >inc/sub/file &&
		git commit -q -a -m side &&
		git checkout -q main &&
		test_tick &&
		git merge -q --no-edit side &&
		git tag -a -m tag v1 HEAD~1
	)
}

# pattern ALGO NAME: write the pattern blob NAME (from patterns/NAME) in
# repo-ALGO; its id goes in the file oid-NAME.
pattern () {
	git -C repo-$1 hash-object -w --stdin <patterns/$2 >oid-$2
}

# compare DIR ARGS...: git rev-list ARGS and gitpack rev-list ARGS print the same.
compare () {
	gp_cmp_dir_=$1
	shift
	git -C $gp_cmp_dir_ rev-list "$@" >expect &&
	gitpack -C $gp_cmp_dir_ rev-list "$@" >actual &&
	test_cmp expect actual
}

test_expect_success 'pattern sets' '
	mkdir patterns &&
	printf "dir1/\n" >patterns/dir &&
	printf "/a\ndir1/\n!dir1/sub/\n!*.txt\n" >patterns/negation &&
	printf "/*\n!/*/\n/inc/\n" >patterns/cone &&
	printf "/*\n!/*/\n/src/\n!/src/*/\n/src/lib/\n!/src/lib/*/\n/src/lib/deep/\n" >patterns/cone-deep &&
	printf "*.txt\n!secret*.txt\n*.c\n" >patterns/globs &&
	printf "**/deep/**\nsrc/**/*.h\n**/sub\n" >patterns/stars &&
	printf "f[0-9].c\n?.md\n[!a-m]*.MD\n[[:upper:]]*\n" >patterns/sets &&
	printf "src/lib\ndir2/sub.txt\n/shared-in/\n" >patterns/anchored &&
	printf "\357\273\277# a comment\r\n\r\ntop.txt   \n\\!bang\n\\#hash\ntr\\ \n\\[x]\na\\*b\n" >patterns/file-oddities &&
	printf "/\n" >patterns/top &&
	printf "*\n!*/\n" >patterns/star-not-dirs &&
	printf "sp ace/\ninc\n" >patterns/plain-names &&
	printf "exc/twin\n" >patterns/twin &&
	printf "x" >patterns/no-newline &&
	: >patterns/empty
'

sets="dir negation cone cone-deep globs stars sets anchored file-oddities top star-not-dirs plain-names twin no-newline empty"

for algo in $test_hash_algos
do
	test_expect_success "setup ($algo)" '
		make_repo $algo repo-$algo &&
		for p in $sets
		do
			pattern $algo $p || return 1
		done
	'

	for p in $sets
	do
		test_expect_success "sparse:oid, $p: the objects of git, in its order ($algo)" '
			oid=$(cat oid-$p) &&
			compare repo-$algo --objects --filter=sparse:oid=$oid --all &&
			compare repo-$algo --objects --filter=sparse:oid=$oid main &&
			compare repo-$algo --objects --filter=sparse:oid=$oid main~1..main &&
			compare repo-$algo --objects --filter=sparse:oid=$oid side --not main~1 &&
			compare repo-$algo --objects --filter=sparse:oid=$oid --quiet main &&
			git -C repo-$algo rev-list --objects --filter=sparse:oid=$oid --filter-print-omitted --all |
				sort >expect &&
			gitpack -C repo-$algo rev-list --objects --filter=sparse:oid=$oid --filter-print-omitted --all |
				sort >actual &&
			test_cmp expect actual
		'
	done

	test_expect_success "the filter leaves blobs out and keeps every tree ($algo)" '
		oid=$(cat oid-dir) &&
		gitpack -C repo-$algo rev-list --objects --all >all &&
		gitpack -C repo-$algo rev-list --objects --filter=sparse:oid=$oid --all >some &&
		test $(wc -l <some) -lt $(wc -l <all) &&
		grep " dir1/sub/y\$" some &&
		! grep " dir2/x\$" some &&
		for t in $(git -C repo-$algo rev-list --objects --all | cut -d" " -f1)
		do
			test $(git -C repo-$algo cat-file -t $t) != tree ||
			grep "^$t" some || return 1
		done
	'

	test_expect_success "sparse:oid names a blob by any name, as git resolves it ($algo)" '
		git -C repo-$algo tag patterns-tag $(cat oid-negation) &&
		compare repo-$algo --objects --filter=sparse:oid=patterns-tag --all &&
		short=$(cut -c1-12 oid-cone) &&
		compare repo-$algo --objects --filter=sparse:oid=$short main &&
		compare repo-$algo --objects --filter=sparse:oid=main:docs/guide.md main
	'

	test_expect_success "combine: with sparse:oid, in git's order ($algo)" '
		a=$(cat oid-cone) && b=$(cat oid-globs) &&
		for spec in "combine:sparse:oid=$a+tree:2" "combine:tree:3+blob:limit=8+sparse:oid=$b" \
			"combine:sparse:oid=$a+sparse:oid=$b" "combine:blob:none+sparse:oid=$a" \
			"combine:sparse:oid=$b+object:type=blob" "combine:sparse:oid=$a+tree:1"
		do
			compare repo-$algo --objects --filter="$spec" --all &&
			git -C repo-$algo rev-list --objects --quiet --filter-print-omitted \
				--filter="$spec" --all | sort >expect &&
			gitpack -C repo-$algo rev-list --objects --quiet --filter-print-omitted \
				--filter="$spec" --all | sort >actual &&
			test_cmp expect actual || return 1
		done &&
		compare repo-$algo --objects --filter=sparse:oid=$a --filter=tree:2 main
	'

	test_expect_success "tips named on the command line, and --filter-provided-objects ($algo)" '
		oid=$(cat oid-cone) &&
		for args in "main:exc" "main:exc main" "main main:exc" "main:inc/sub main:exc/file" \
			"main^{tree}" "v1" "main:exc/file"
		do
			compare repo-$algo --objects --filter=sparse:oid=$oid $args &&
			compare repo-$algo --objects --filter=sparse:oid=$oid --filter-provided-objects $args ||
			return 1
		done
	'

	test_expect_success "core.ignoreCase folds the patterns, as in git ($algo)" '
		printf "readme.md\nDIR1/\n[R]*\n" | git -C repo-$algo hash-object -w --stdin >oid-icase &&
		oid=$(cat oid-icase) &&
		compare repo-$algo --objects --filter=sparse:oid=$oid --all &&
		cp actual case-sensitive &&
		git -C repo-$algo -c core.ignorecase=true rev-list --objects --filter=sparse:oid=$oid --all >expect &&
		gitpack -C repo-$algo -c core.ignorecase=true rev-list --objects --filter=sparse:oid=$oid --all >actual &&
		test_cmp expect actual &&
		! test_cmp case-sensitive actual >/dev/null
	'

	test_expect_success "a name that does not resolve, or not to a blob: git's errors ($algo)" '
		tree=$(git -C repo-$algo rev-parse main^{tree}) &&
		missing=$(echo missing | git -C repo-$algo hash-object --stdin) &&
		for name in no-such-ref main:no-such-path $tree main $missing
		do
			test_expect_code 128 git -C repo-$algo rev-list --objects \
				--filter=sparse:oid=$name main >expect 2>expect.err &&
			test_expect_code 128 gitpack -C repo-$algo rev-list --objects \
				--filter=sparse:oid=$name main >actual 2>actual.err &&
			test_cmp expect actual &&
			test_cmp expect.err actual.err &&
			echo main | test_expect_code 128 gitpack -C repo-$algo pack-objects \
				--revs --stdout --filter=sparse:oid=$name >out 2>actual.err &&
			test_cmp expect.err actual.err || return 1
		done
	'

	test_expect_success "missing trees and blobs under --missing, filtered or not ($algo)" '
		rm -rf miss-$algo &&
		cp -R repo-$algo miss-$algo &&
		for path in main:exc/sub main:dir1/x main:inc/file
		do
			oid=$(git -C miss-$algo rev-parse $path) &&
			rm miss-$algo/.git/objects/$(echo $oid | sed "s|^..|&/|") || return 1
		done &&
		for filter in "" --filter=sparse:oid=$(cat oid-cone) --filter=sparse:oid=$(cat oid-dir)
		do
			for missing in print allow-any
			do
				git -C miss-$algo rev-list --objects $filter --missing=$missing --all |
					sort >expect 2>expect.err &&
				gitpack -C miss-$algo rev-list --objects $filter --missing=$missing --all |
					sort >actual 2>actual.err &&
				test_cmp expect actual &&
				test_cmp expect.err actual.err || return 1
			done &&
			compare miss-$algo --objects $filter --missing=allow-any --all &&
			test_must_fail git -C miss-$algo rev-list --objects $filter --all >expect 2>expect.err &&
			test_must_fail gitpack -C miss-$algo rev-list --objects $filter --all >actual 2>actual.err &&
			test_cmp expect.err actual.err || return 1
		done
	'

	test_expect_success "GIT_TRACE: the trees a filter skips, the specs it combines ($algo)" '
		rm -f git.trace gp.trace &&
		for spec in tree:0 "combine:tree:1+tree:3" object:type=commit
		do
			GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/git.trace" \
				git -C repo-$algo rev-list --objects --filter=$spec --all >/dev/null &&
			GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/gp.trace" \
				gitpack -C repo-$algo rev-list --objects --filter=$spec --all >/dev/null || return 1
		done &&
		oid=$(cat oid-cone) &&
		GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/git.trace" git -C repo-$algo rev-list \
			--objects --filter=tree:3 --filter="sparse:oid=$oid" --filter=blob:none --all >/dev/null &&
		GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/gp.trace" gitpack -C repo-$algo rev-list \
			--objects --filter=tree:3 --filter="sparse:oid=$oid" --filter=blob:none --all >/dev/null &&
		grep -e "^Skipping contents" -e "^Add to combine" git.trace >expect &&
		grep -e "^Skipping contents" -e "^Add to combine" gp.trace >actual &&
		test_cmp expect actual &&
		grep "^Skipping contents of tree [.][.][.]" actual &&
		grep "^Add to combine filter-spec: sparse:oid=" actual
	'

	test_expect_success "pack-objects --filter=sparse:oid: the objects of git's pack ($algo)" '
		for p in dir negation cone stars twin
		do
			oid=$(cat oid-$p) &&
			printf "main\nside\n^main~2\n" >in &&
			git -C repo-$algo pack-objects -q --revs --stdout --filter=sparse:oid=$oid <in >git.pack &&
			gitpack -C repo-$algo pack-objects -q --revs --stdout --filter=sparse:oid=$oid <in >gp.pack &&
			for pack in git gp
			do
				rm -f $pack.idx &&
				git -C repo-$algo index-pack "$TRASH_DIRECTORY/$pack.pack" >/dev/null &&
				git -C repo-$algo verify-pack -v "$TRASH_DIRECTORY/$pack.idx" >$pack.v &&
				grep -E "^[0-9a-f]{$(test_oid_hexsz $algo)} " $pack.v |
					cut -d" " -f1,2 | sort >$pack.objects || return 1
			done &&
			test_cmp git.objects gp.objects &&
			git -C repo-$algo rev-list --objects --filter=sparse:oid=$oid main side ^main~2 |
				cut -d" " -f1 | sort >expect &&
			cut -d" " -f1 gp.objects >actual &&
			test_cmp expect actual || return 1
		done
	'

	test_expect_success GIT_NEW "repack -a -d --filter=sparse:oid: the packs git writes hold the same ($algo)" '
		oid=$(cat oid-cone) &&
		git -C repo-$algo tag cone-patterns $oid &&
		for prog in git_new gitpack
		do
			rm -rf r-$prog &&
			git clone -q --bare --no-local repo-$algo r-$prog &&
			$prog -C r-$prog repack -a -d -q --no-write-bitmap-index --filter=sparse:oid=$oid &&
			for idx in r-$prog/objects/pack/*.idx
			do
				git show-index --object-format=$algo <$idx | cut -d" " -f2 | sort >$idx.names ||
				return 1
			done &&
			sort r-$prog/objects/pack/*.idx.names >$prog.all &&
			git -C r-$prog fsck --no-dangling || return 1
		done &&
		test_cmp git_new.all gitpack.all &&
		ls r-git_new/objects/pack/*.idx.names | wc -l >expect &&
		ls r-gitpack/objects/pack/*.idx.names | wc -l >actual &&
		test_cmp expect actual &&
		git -C r-git_new rev-list --objects --filter=sparse:oid=$oid --all | cut -d" " -f1 | sort >kept &&
		found= &&
		for n in r-gitpack/objects/pack/*.idx.names
		do
			if test_cmp kept $n >/dev/null
			then
				found=t
			fi
		done &&
		test -n "$found"
	'
done

test_done
