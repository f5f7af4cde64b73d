#!/bin/sh

test_description='object names: refs, abbreviated ids, revision suffixes, <rev>:<path>

gitpack cat-file is compared with git cat-file (standard output and exit
code) for many names: HEAD and friends, DWIM refnames, refs only in
packed-refs, symbolic refs, a detached HEAD, ~N ^N ^{type} suffixes, paths
in trees, abbreviated and ambiguous ids; then the ref iteration of refs.h
against git for-each-ref; then broken loose refs and corrupt packed-refs,
which must give a clear error and never a crash. SHA-1 and SHA-256.'

. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# compare_names REPO FILE [OPTS...]: for each name in FILE, "cat-file -t"
# and "cat-file -p" (or OPTS) print the same and exit the same way under
# git and gitpack, run in REPO; then --batch-check over the whole list.
compare_names () {
	gp_cn_repo_=$1
	gp_cn_file_=$2
	shift 2
	test $# -gt 0 || set -- -t -p
	>expect.all && >actual.all &&
	while IFS= read -r gp_cn_name_
	do
		for gp_cn_opt_
		do
			echo "== $gp_cn_opt_ $gp_cn_name_" >>expect.all &&
			echo "== $gp_cn_opt_ $gp_cn_name_" >>actual.all &&
			(cd "$gp_cn_repo_" && git cat-file $gp_cn_opt_ "$gp_cn_name_") >>expect.all 2>/dev/null
			echo "exit $?" >>expect.all
			(cd "$gp_cn_repo_" && gitpack cat-file $gp_cn_opt_ "$gp_cn_name_") >>actual.all 2>actual.err
			gp_cn_code_=$?
			echo "exit $gp_cn_code_" >>actual.all
			# a sanitizer report or a signal is never an answer
			if test $gp_cn_code_ -gt 128
			then
				cat actual.err
				return 1
			fi
		done
	done <"$gp_cn_file_" &&
	test_cmp expect.all actual.all &&
	compare_batch "$gp_cn_repo_" "$gp_cn_file_"
}

# compare_batch REPO FILE: --batch-check over FILE's names.
compare_batch () {
	(cd "$1" && git cat-file --batch-check) <"$2" >expect 2>/dev/null
	echo $? >expect.code
	(cd "$1" && gitpack cat-file --batch-check) <"$2" >actual 2>actual.err
	echo $? >actual.code
	compare_results
}

for algo in $test_hash_algos
do

test_expect_success "setup ($algo)" '
	pack_repo_create $algo repo-$algo small &&
	(
		cd repo-$algo &&
		# a branch and a tag spelled alike: the tag wins
		git branch dup main~2 &&
		git tag dup main~4 &&
		# refs/remotes, with a symbolic HEAD
		git update-ref refs/remotes/origin/main main~1 &&
		git symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main &&
		git update-ref refs/remotes/solo/HEAD main~3 &&
		# symbolic refs, 4 deep (followed) and 5 deep (too deep)
		prev=refs/heads/main &&
		for i in 1 2 3 4 5
		do
			git symbolic-ref refs/heads/chain$i $prev &&
			prev=refs/heads/chain$i || exit 1
		done &&
		git symbolic-ref refs/heads/loop1 refs/heads/loop2 &&
		git symbolic-ref refs/heads/loop2 refs/heads/loop1 &&
		git symbolic-ref refs/heads/dangling refs/heads/nowhere &&
		# one-level refs in the git directory
		git rev-parse main~2 >.git/ORIG_HEAD &&
		printf "%s\t\tbranch '\''main'\'' of somewhere\n%s\tnot-for-merge\tbranch '\''side'\''\n" \
			$(git rev-parse main~1) $(git rev-parse side) >.git/FETCH_HEAD &&
		git rev-parse side >.git/lowercase &&
		# hand-written loose refs git reads too
		printf "ref:refs/heads/side" >.git/refs/heads/nospace &&
		printf "ref: \t refs/heads/side  \n\n" >.git/refs/heads/spaces &&
		printf "%s trailing words\n" $(git rev-parse main~3) >.git/refs/heads/words &&
		printf "%s" $(git rev-parse main~3) >.git/refs/heads/nonewline &&
		mkdir -p .git/refs/heads/deep/er &&
		git rev-parse main~5 >.git/refs/heads/deep/er/est &&
		# a branch named like an abbreviated id, which it beats
		git branch $(git rev-parse --short=7 HEAD^{tree}) main~3
	) &&
	git -C repo-$algo rev-parse HEAD >/dev/null
'

test_expect_success "names of refs, suffixes and paths ($algo)" '
	(
		cd repo-$algo &&
		tree=$(git rev-parse HEAD^{tree}) &&
		test_write_lines \
			HEAD @ main heads/main refs/heads/main side refs/heads/side \
			v1 tags/v1 refs/tags/v1 light outer-tag blob-tag tree-tag empty-tree \
			dup heads/dup tags/dup origin origin/main origin/HEAD solo \
			remotes/origin/main ORIG_HEAD FETCH_HEAD lowercase \
			chain1 chain4 chain5 loop1 dangling nospace spaces words nonewline \
			deep/er/est heads/deep/er/est er/est \
			$(echo $tree | cut -c1-7) \
			HEAD~0 HEAD~ HEAD~1 HEAD~3 HEAD~12 HEAD~999 HEAD~01 \
			HEAD^ HEAD^1 HEAD^0 HEAD^^ HEAD^^^ "HEAD^^2" HEAD~7^2 HEAD~7^3 \
			HEAD~7^2~1 HEAD~7^1^1 HEAD~7^0 HEAD~6^2 "@^" "@~2" \
			"v1^{}" "v1^{commit}" "v1^{tree}" "v1^{tag}" "v1^{object}" "v1^{blob}" \
			"v1^0" "v1~0" "v1~1" "v1^" "outer-tag^{}" "outer-tag^{tag}" \
			"outer-tag^{commit}" "outer-tag^{}^{}" "blob-tag^{}" "blob-tag^{blob}" \
			"blob-tag^{tree}" "tree-tag^{}" "tree-tag^{tree}" "tree-tag^{commit}" \
			"empty-tree^{}" "empty-tree^{tree}" "HEAD^{tree}" "HEAD^{tree}^{tree}" \
			"HEAD^{blob}" "HEAD^{tag}" "HEAD^{foo}" "HEAD^{}" "HEAD^{commit}~2" \
			"HEAD~99999999999999999999" "HEAD^-1" "HEAD^+1" "HEAD~x" \
			HEAD:doc/readme HEAD:doc HEAD:doc/ HEAD: HEAD:src/deep/er/file \
			HEAD:nope HEAD:doc/readme/ HEAD:doc//readme HEAD:/doc HEAD:link \
			HEAD:run.sh HEAD:gitlink HEAD:gitlink/x HEAD:empty "v1:doc/readme" \
			"v1^{tree}:src" "main~3:src/deep" "tree-tag:doc" "blob-tag:x" \
			"nope:doc" "HEAD~99:doc" "HEAD:doc:x" "HEAD^{tree}:" \
			"" nope refs/heads/nope "refs/heads/a..b" "a..b" "@@" \
			"refs" "objects" "config" "description" "HEAD/" "/HEAD" \
			"main^{/nope" "main}" "{}" "^{}" "~1" ":" \
			>names-refs
	) &&
	git -C repo-$algo cat-file -t HEAD~7^2 &&
	compare_names repo-$algo repo-$algo/names-refs
'

test_expect_success "abbreviated ids ($algo)" '
	(
		cd repo-$algo &&
		git cat-file --batch-all-objects --batch-check="%(objectname)" >all &&
		for len in 4 5 7 12 $(($(test_oid_hexsz $algo) - 1))
		do
			sed -n "1p;7p;19p" all | cut -c1-$len || exit 1
		done >names-abbrev &&
		# upper case, and suffixes on abbreviations
		head -n 1 all | cut -c1-10 | tr a-f A-F >>names-abbrev &&
		c=$(git rev-parse --short=8 HEAD) &&
		test_write_lines "$c~1" "$c^{tree}" "$c:doc/readme" abc 123 \
			$(git rev-parse HEAD | tr a-f A-F) >>names-abbrev
	) &&
	compare_names repo-$algo repo-$algo/names-abbrev
'

test_expect_success "ambiguous ids, and types that settle them ($algo)" '
	(
		cd repo-$algo &&
		# enough blobs that 4-digit prefixes collide, fast-imported
		# into a pack; the commits stay loose
		test_seq 30000 | awk "{ printf \"blob\\ndata %d\\n%s\\n\", length(\$0), \$0 }" |
			git fast-import --quiet &&
		git rev-list --all >commits &&
		git cat-file --batch-all-objects --batch-check="%(objectname) %(objecttype)" >typed &&
		cut -c1-4 typed | sort | uniq -d >dups &&
		test -s dups &&
		# prefixes shared by a commit and only non-commits
		for c in $(cut -c1-4 commits)
		do
			if grep -q "^$c\$" dups && test $(grep -c "^$c.* commit\$" typed) = 1
			then
				echo $c
			fi
		done >mixed &&
		test -s mixed &&
		{
			head -n 3 dups &&
			for p in $(head -n 3 mixed)
			do
				test_write_lines "$p" "$p^{commit}" "$p~0" "$p^0" "$p^{tree}" \
					"$p:doc" "$p^{}" || exit 1
			done
		} >names-ambiguous
	) &&
	compare_names repo-$algo repo-$algo/names-ambiguous -t &&
	grep ambiguous expect &&
	head -n 1 repo-$algo/dups >name &&
	test_expect_code 128 gitpack -C repo-$algo cat-file -t $(cat name) 2>err &&
	grep "short object ID $(cat name) is ambiguous" err
'

test_expect_success "refs only in packed-refs ($algo)" '
	cp -R repo-$algo packed-$algo &&
	git -C packed-$algo pack-refs --all &&
	test_path_is_missing packed-$algo/.git/refs/heads/main &&
	test_path_is_missing packed-$algo/.git/refs/tags/v1 &&
	# the symbolic refs stay loose, pointing into packed-refs
	test -f packed-$algo/.git/refs/remotes/origin/HEAD &&
	compare_names packed-$algo repo-$algo/names-refs &&
	compare_names packed-$algo repo-$algo/names-ambiguous -t
'

test_expect_success "a loose ref hides its packed copy ($algo)" '
	git -C packed-$algo update-ref refs/heads/side main~6 &&
	git -C packed-$algo update-ref refs/tags/v1 main &&
	grep -q "refs/heads/side" packed-$algo/.git/packed-refs &&
	test_write_lines side v1 "v1^{}" tags/v1 heads/side refs/heads/side >names &&
	compare_names packed-$algo names
'

test_expect_success "packed-refs without a header, unsorted, with duplicates ($algo)" '
	cp -R packed-$algo unsorted-$algo &&
	# no "^" lines either: they must follow their ref
	grep -v "^[#^]" packed-$algo/.git/packed-refs | sort -r -k2 >unsorted &&
	cp unsorted unsorted-$algo/.git/packed-refs &&
	compare_names unsorted-$algo repo-$algo/names-refs -t &&
	cp -R unsorted-$algo dup-$algo &&
	grep "refs/tags/light" unsorted >>dup-$algo/.git/packed-refs &&
	compare_names dup-$algo repo-$algo/names-refs -t
'

test_expect_success "a detached HEAD ($algo)" '
	cp -R repo-$algo detached-$algo &&
	git -C detached-$algo checkout -q --detach main~3 &&
	test_write_lines HEAD @ HEAD~1 HEAD^{tree} HEAD:doc/readme "@^" >names &&
	compare_names detached-$algo names &&
	gitpack -C detached-$algo cat-file -p HEAD >actual &&
	git -C detached-$algo cat-file -p main~3 >expect &&
	test_cmp expect actual
'

test_expect_success "paths relative to the current directory ($algo)" '
	>expect.all && >actual.all &&
	for name in HEAD:./readme HEAD:../doc/readme HEAD:./ HEAD:../src/numbers.txt \
		HEAD:./nope HEAD:../../x HEAD:. HEAD:.. "HEAD:./../doc/./readme"
	do
		(cd repo-$algo/doc && git cat-file -t "$name") >>expect.all 2>/dev/null
		echo "$name $?" >>expect.all
		(cd repo-$algo/doc && gitpack cat-file -t "$name") >>actual.all 2>/dev/null
		echo "$name $?" >>actual.all || return 1
	done &&
	test_cmp expect.all actual.all
'

test_expect_success "a linked worktree has its own HEAD ($algo)" '
	git -C repo-$algo worktree add -q ../wt-$algo side~1 &&
	test_write_lines HEAD main side "HEAD~1" HEAD:doc/readme >names &&
	compare_names wt-$algo names &&
	git -C repo-$algo worktree remove --force ../wt-$algo
'

test_expect_success TEST_TOOL "ref iteration matches git for-each-ref ($algo)" '
	for repo in repo-$algo packed-$algo unsorted-$algo
	do
		for prefix in "" refs/heads/ refs/tags/ refs/remotes/ refs/heads/deep/ refs/nothing/
		do
			git -C $repo for-each-ref --format="%(objectname) %(refname)" $prefix >expect &&
			(cd $repo && test-tool refs for-each $prefix) >out &&
			sed -n "/^--\$/q;p" out | cut -d" " -f1,2 >actual &&
			test_cmp expect actual &&
			# the second pass uses the cached packed-refs
			sed "1,/^--\$/d" out >second &&
			sed -n "/^--\$/q;p" out >first &&
			test_cmp first second || return 1
		done || return 1
	done
'

test_expect_success TEST_TOOL "iteration: prefixes that are not directories ($algo)" '
	for prefix in refs/heads/ch refs/heads/m refs/t refs/ re r
	do
		git -C packed-$algo for-each-ref --format="%(objectname) %(refname)" >all &&
		awk -v p="$prefix" "index(\$2, p) == 1" all >expect &&
		(cd packed-$algo && test-tool refs for-each $prefix) >out &&
		sed -n "/^--\$/q;p" out | cut -d" " -f1,2 >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success TEST_TOOL "iteration: peeled ids from a fully-peeled packed-refs ($algo)" '
	cp -R repo-$algo peeled-$algo &&
	git -C peeled-$algo pack-refs --all &&
	head -n 1 peeled-$algo/.git/packed-refs >header &&
	grep fully-peeled header &&
	git -C peeled-$algo for-each-ref --format="%(objectname) %(refname) %(objecttype)" \
		refs/tags/ refs/heads/main >typed &&
	while read oid ref type
	do
		if test $type = tag
		then
			echo "$oid $ref $(git -C peeled-$algo rev-parse "$ref^{}")"
		else
			echo "$oid $ref -"
		fi || return 1
	done <typed >expect &&
	(cd peeled-$algo && test-tool refs for-each refs/tags/ && test-tool refs for-each refs/heads/main) >out &&
	grep -v "^--\$" out | sort -u | cut -d" " -f1-3 >actual &&
	sort expect >expect.sorted &&
	test_cmp expect.sorted actual
'

test_expect_success TEST_TOOL "iteration skips broken refs, or shows them with --broken ($algo)" '
	(cd repo-$algo && test-tool refs for-each refs/heads/) >out &&
	! grep -E "loop|dangling|chain5" out &&
	grep " refs/heads/chain4 .* symref" out &&
	(cd repo-$algo && test-tool refs for-each --broken refs/heads/) >out &&
	grep "refs/heads/loop1 .* broken" out &&
	grep "refs/heads/dangling .* broken" out &&
	grep "refs/heads/chain5 .* broken" out
'

test_expect_success TEST_TOOL "refname rules match git check-ref-format" '
	>expect && >actual &&
	for name in refs/heads/main main HEAD refs/heads/a..b refs/heads/.hidden \
		refs/heads/x.lock refs/heads/x.lock/y refs/heads/a.lockx "refs/heads/sp ace" \
		"refs/heads/t~1" "refs/heads/c^" "refs/heads/co:lon" "refs/heads/q?" \
		"refs/heads/st*r" "refs/heads/br[" "refs/heads/back\\slash" refs/heads/ \
		/refs/heads/x refs//heads/x refs/heads/x. "refs/heads/at@{x" @ "refs/heads/@" \
		refs/heads/a@b "refs/heads/$(printf "\\001")x" "refs/heads/$(printf "\\177")x" \
		refs/heads/ü refs/heads/-dash . .. refs/./x refs/heads/..x "refs/heads/x/."
	do
		for opt in --allow-onelevel --no-allow-onelevel
		do
			if git check-ref-format $opt "$name"
			then
				echo "ok $name"
			else
				echo "bad $name"
			fi >>expect || return 1
			if test $opt = --allow-onelevel
			then
				test-tool refs check-format --allow-onelevel "$name"
			else
				test-tool refs check-format "$name"
			fi >>actual || return 1
		done
	done &&
	test_cmp expect actual
'

test_expect_success "broken loose refs are skipped as git skips them ($algo)" '
	cp -R repo-$algo broken-$algo &&
	(
		cd broken-$algo &&
		echo garbage >.git/refs/heads/garbage &&
		printf "%sjunk\n" $(git rev-parse HEAD) >.git/refs/heads/hexjunk &&
		printf "%0$(test_oid_hexsz $algo)d\n" 0 >.git/refs/heads/null &&
		: >.git/refs/heads/empty &&
		printf "ref: refs/heads/../x\n" >.git/refs/heads/badtarget &&
		printf "ref:" >.git/refs/heads/reftonothing &&
		head -c 20000 /dev/zero | tr "\\0" a >.git/refs/heads/huge &&
		{ printf "ref: refs/heads/"; head -c 9000 /dev/zero | tr "\\0" a; } >.git/refs/heads/longsym &&
		mkdir .git/refs/heads/dir &&
		# a broken branch hides nothing: its tag of the same name still counts
		echo garbage >.git/refs/heads/v1 &&
		ln -s ../../../nonexistent .git/refs/heads/badlink
	) &&
	test_write_lines garbage hexjunk null empty badtarget reftonothing huge longsym \
		dir v1 badlink main heads/garbage refs/heads/garbage >names &&
	compare_names broken-$algo names -t
'

test_expect_success GITPACK_IS_GITPACK "a broken ref is named in the message ($algo)" '
	test_expect_code 128 gitpack -C broken-$algo cat-file -t garbage 2>err &&
	grep "Not a valid object name garbage" err &&
	echo garbage >in &&
	gitpack -C broken-$algo cat-file --batch-check <in >out &&
	echo "garbage missing" >expect &&
	test_cmp expect out
'

test_expect_success "corrupt packed-refs: a clear error, no crash ($algo)" '
	good=$(git -C packed-$algo rev-parse main) &&
	n=0 &&
	for body in "zzz" "# random comment" "$good refs/heads/main" "^$good" \
		"$good refs/heads/other|^$good|^$good" "" "$good" "${good}0 refs/heads/x" \
		"$good  refs/heads/two-spaces" "$good refs/heads/cr\r" \
		"$(echo $good | cut -c2-) refs/heads/short" \
		"$(echo $good | tr 0-9a-f g-v) refs/heads/nonhex" \
		"$good refs/heads/ok|^$good extra"
	do
		n=$((n + 1)) &&
		rm -rf corrupt-$algo &&
		cp -R packed-$algo corrupt-$algo &&
		{
			echo "# pack-refs with: peeled fully-peeled sorted " &&
			printf "%s\n" "$body" | tr "|" "\\n"
		} >corrupt-$algo/.git/packed-refs &&
		if test "$body" = "$good refs/heads/main"
		then
			# no final newline
			printf "%s" "$good refs/heads/main" >corrupt-$algo/.git/packed-refs
		fi &&
		# names that need packed-refs; git reads only the line it
		# looks for, and may miss the damage, where we refuse the file
		for name in main HEAD tags/dup nope
		do
			(cd corrupt-$algo && git cat-file -t $name) >expect 2>/dev/null
			echo "$name $?" >>expect &&
			(cd corrupt-$algo && gitpack cat-file -t $name) >actual 2>actual.err
			echo "$name $?" >>actual &&
			test_cmp expect actual || return 1
		done || return 1
	done
'

test_expect_success GITPACK_IS_GITPACK "corrupt packed-refs: the message names the file and line ($algo)" '
	good=$(git -C packed-$algo rev-parse main) &&
	{
		echo "# pack-refs with: peeled fully-peeled sorted " &&
		echo "$good refs/heads/a" &&
		echo "zzz"
	} >corrupt-$algo/.git/packed-refs &&
	test_expect_code 128 gitpack -C corrupt-$algo cat-file -t main 2>err &&
	grep "packed-refs: line 3: unexpected line .zzz." err &&
	echo main >in &&
	test_expect_code 128 gitpack -C corrupt-$algo cat-file --batch-check <in 2>err &&
	grep "packed-refs: line 3" err &&
	printf "%s refs/heads/x" $good >corrupt-$algo/.git/packed-refs &&
	test_expect_code 128 gitpack -C corrupt-$algo cat-file -t main 2>err &&
	grep "packed-refs: line 1: unterminated line" err
'

test_expect_success "packed-refs rewritten between lookups is re-read ($algo)" '
	cp -R packed-$algo reread-$algo &&
	(
		cd reread-$algo &&
		git rev-parse main~4 >expect &&
		# same size, new content: the inode changes as git renames it
		sed "s/^$(git rev-parse main) refs\/heads\/main\$/$(git rev-parse main~4) refs\/heads\/main/" \
			.git/packed-refs >tmp &&
		mv tmp .git/packed-refs &&
		git cat-file -p main >expect &&
		gitpack cat-file -p main >actual &&
		test_cmp expect actual
	)
'

test_expect_success GITPACK_IS_GITPACK "unsupported syntax fails cleanly ($algo)" '
	for name in "@{-1}" "main@{upstream}" "HEAD@{yesterday}" ":/initial"
	do
		test_expect_code 128 gitpack -C repo-$algo cat-file -t "$name" 2>err &&
		grep "not supported" err || return 1
	done
'

test_expect_success "reflog entries and message searches, as git finds them ($algo)" '
	(
		cd repo-$algo &&
		git branch "odd@" main~1 &&
		git branch "odd{name" main~2 &&
		git update-ref -m moved refs/heads/odd@ main~3 &&
		git commit-tree -m "note: a colon" main^{tree} >../colon.oid &&
		git branch colon $(cat ../colon.oid)
	) &&
	cat >names <<-\EOF &&
	HEAD@{0}
	HEAD@{1}
	HEAD@{2}
	main@{0}
	main@{1}
	odd@@{0}
	odd@@{1}
	odd@@{0}:one.t
	odd{name
	odd{name:one.t
	@{0}
	@@{0}
	nosuch@{0}
	HEAD^{/.}
	main^{/^one}
	main^{/!-one}
	main^{/!!x}
	main^{/no such message}
	colon^{/note: a}
	colon^{/note: a}:one.t
	main~2^{/[tT]wo}
	EOF
	compare_names repo-$algo names &&
	# past the end of a reflog: git stops, in batch mode too
	echo "odd@@{2}" >names &&
	compare_names repo-$algo names &&
	echo "HEAD@{99999}" >names &&
	compare_names repo-$algo names
'

test_expect_success "long names: no crash, bounded work ($algo)" '
	carets=$(printf "%05000d" 0 | tr 0 ^) &&
	tildes=$(printf "%05000d" 0 | tr 0 "~") &&
	slashes=$(printf "%02000d" 0 | sed "s/0/a\\//g") &&
	for name in "HEAD$carets" "HEAD$tildes" "HEAD:$slashes" \
		"$(printf "%03000d" 0 | tr 0 a)" "HEAD~$(printf "%0300d" 0 | tr 0 9)"
	do
		test_expect_code 128 gitpack -C repo-$algo cat-file -t "$name" 2>err ||
		return 1
	done &&
	braces=$(printf "%0500d" 0 | sed "s/0/^{}/g") &&
	echo "v1$braces" >names &&
	compare_names repo-$algo names
'

done

test_done
