#!/bin/sh

test_description='pack-objects as upload-pack runs it

The options a server'\''s upload-pack gives pack-objects, each compared
with stock git pack-objects on the same input: --revs --thin --stdout
(smaller than without --thin, deltas against objects not in the pack,
completed by git index-pack --fix-thin where the base is), also when
the server has both versions packed whole or as deltas; --include-tag
(annotated tags of packed commits, chained tags too, no others);
"--shallow <oid>" lines and --shallow-file (the walk stops there);
"-<oid>" preferred bases in an object list (a commit, a tree or a tag
stands for its tree); --filter (blob:none, blob:limit, tree:<depth>,
object:type, combine:); --index-version (the .idx git writes for the
same pack); --name-hash-version (0 and 3 refused, -1 taken as 1, 2
with a bitmap warned about); an empty line ending --revs input;
"expected object ID, got garbage"; the Total line. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# names ALGO DIR PACK: the sorted names of the objects PACK (a stream)
# holds, indexed by stock git in DIR, which completes a thin pack with
# the bases (--fix-thin appends them after the objects of the stream:
# they are left out).
names () {
	rm -f "${3%.pack}-fixed".* &&
	git -C "$2" index-pack --stdin --fix-thin "$TRASH_DIRECTORY/${3%.pack}-fixed.pack" \
		<"$3" >/dev/null &&
	gp_nm_end_=$(( $(wc -c <"$3") - $(test_oid_rawsz $1) )) &&
	git show-index --object-format="$1" <"${3%.pack}-fixed.idx" |
	awk -v end=$gp_nm_end_ "\$1 < end { print \$2 }" | sort
}

# both_packs DIR ARGS... <INPUT: stock git and gitpack pack-objects
# --stdout ARGS in DIR, on the same input, into git.pack and gp.pack.
both_packs () {
	gp_bp_dir_=$1
	shift
	cat >both.in &&
	git -C "$gp_bp_dir_" pack-objects -q --stdout "$@" <both.in >git.pack &&
	gitpack -C "$gp_bp_dir_" pack-objects -q --stdout "$@" <both.in >gp.pack
}

# same_objects ALGO DIR ARGS... <INPUT: both_packs, then the two packs
# hold the same objects (listed in gp.names).
same_objects () {
	gp_so_algo_=$1
	gp_so_dir_=$2
	shift 2
	both_packs "$gp_so_dir_" "$@" &&
	names $gp_so_algo_ "$gp_so_dir_" git.pack >git.names &&
	names $gp_so_algo_ "$gp_so_dir_" gp.pack >gp.names &&
	test_cmp git.names gp.names
}

# change DIR FILE LINE: line LINE of FILE in DIR becomes "changed LINE";
# then a commit.
change () {
	sed "s/^$3\$/changed $3/" "$1/$2" >"$1/$2.tmp" &&
	mv "$1/$2.tmp" "$1/$2" &&
	git -C "$1" add "$2" &&
	test_tick &&
	git -C "$1" commit -q -m "change $2 $3"
}

for algo in $test_hash_algos
do

r=repo-$algo

test_expect_success "setup: five commits, nested trees, annotated tags ($algo)" '
	git init -q -b main --object-format=$algo $r &&
	test_seq 20000 >$r/big.txt &&
	mkdir -p $r/a/b/c &&
	echo top >$r/top.txt &&
	test_seq 100 >$r/a/mid.txt &&
	echo deep >$r/a/b/c/deep.txt &&
	echo x >$r/a/b/tiny &&
	git -C $r add . &&
	test_tick &&
	git -C $r commit -q -m first &&
	git -C $r tag -a -m "release 1" v1 &&
	git -C $r -c advice.nestedTag=false tag -a -m "a tag of a tag" v1-outer v1 &&
	git -C $r tag -a -m "a blob" blob-tag HEAD:top.txt &&
	change $r big.txt 5000 &&
	change $r a/mid.txt 50 &&
	git -C $r tag -a -m "release 2" v2 &&
	change $r big.txt 6000 &&
	change $r big.txt 7000 &&
	git -C $r tag -a -m "release 3" v3 &&
	git -C $r tag light main~1 &&
	git -C $r rev-list --all >commits &&
	test_line_count = 5 commits
'

for state in loose "packed whole" "packed with deltas"
do
	test_expect_success "--revs --thin --stdout, objects $state: smaller, deltas against what the receiver has ($algo)" '
		case "$state" in
		"packed whole") git -C $r repack -adfq --window=0 ;;
		"packed with deltas") git -C $r repack -adfq ;;
		esac &&
		printf "main\n^main~2\n" | gitpack -C $r pack-objects -q --revs --stdout >fat.pack &&
		printf "main\n^main~2\n" | gitpack -C $r pack-objects -q --revs --thin --stdout >thin.pack &&
		printf "main\n^main~2\n" | git -C $r pack-objects -q --revs --thin --stdout >git-thin.pack &&
		echo "thin $(wc -c <thin.pack), not thin $(wc -c <fat.pack), git thin $(wc -c <git-thin.pack)" &&
		test $(wc -c <thin.pack) -lt $(($(wc -c <fat.pack) / 10)) &&
		# no more than a little over what git needs
		test $(wc -c <thin.pack) -lt $(($(wc -c <git-thin.pack) * 3 / 2 + 200)) &&
		# deltas against objects the pack does not have
		rm -rf empty-$algo &&
		git init -q --bare --object-format=$algo empty-$algo &&
		test_must_fail git -C empty-$algo index-pack --stdin <thin.pack 2>err &&
		grep "unresolved delta" err &&
		# a receiver with main~2 completes it
		rm -rf recv-$algo &&
		git init -q --bare -b main --object-format=$algo recv-$algo &&
		echo main~2 | git -C $r pack-objects -q --revs --stdout >base.pack &&
		git -C recv-$algo index-pack --stdin <base.pack >/dev/null &&
		git -C recv-$algo index-pack --stdin --fix-thin <thin.pack >/dev/null &&
		git -C recv-$algo update-ref refs/heads/main $(git -C $r rev-parse main) &&
		git -C recv-$algo fsck --full --no-dangling 2>err &&
		test_must_be_empty err &&
		names $algo $r thin.pack >thin.names &&
		names $algo $r git-thin.pack >git.names &&
		test_cmp git.names thin.names &&
		git -C $r rev-list --objects main ^main~2 | cut -d" " -f1 | sort >expect &&
		test_cmp expect thin.names
	'
done

test_expect_success "--include-tag: the annotated tags of packed objects, chained ones too, no others ($algo)" '
	echo main~3 | same_objects $algo $r --revs --include-tag &&
	git -C $r cat-file --batch-check="%(objecttype) %(objectname)" <gp.names >types &&
	grep "^tag " types | cut -d" " -f2 | sort >actual &&
	git -C $r rev-parse v1 v1-outer blob-tag | sort >expect &&
	test_cmp expect actual &&
	# without --include-tag: no tag
	echo main~3 | same_objects $algo $r --revs &&
	git -C $r cat-file --batch-check="%(objecttype)" <gp.names >types &&
	! grep "^tag" types &&
	# all commits: every tag
	echo main | same_objects $algo $r --revs --include-tag &&
	git -C $r cat-file --batch-check="%(objecttype)" <gp.names >types &&
	test $(grep -c "^tag" types) = 5
'

test_expect_success "\"--shallow <oid>\" lines: the walk stops there, as in git ($algo)" '
	shallow=$(git -C $r rev-parse main~2) &&
	printf "main\n--shallow %s\n" $shallow | same_objects $algo $r --revs &&
	git -C $r rev-parse $shallow >shallow-file &&
	git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-file" rev-list --objects main |
		cut -d" " -f1 | sort >expect &&
	test_cmp expect gp.names &&
	git -C $r rev-list --objects main >full &&
	test $(wc -l <gp.names) -lt $(wc -l <full) &&
	# with a base the receiver has, beyond its shallow boundary
	printf "main\n^main~3\n--shallow %s\n" $shallow | same_objects $algo $r --revs --thin
'

test_expect_success "--shallow-file: pack-objects walks as git does under it ($algo)" '
	git -C $r rev-parse main~1 >shallow-file &&
	echo main >in &&
	git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-file" pack-objects -q --revs --stdout <in >git.pack &&
	gitpack -C $r --shallow-file "$TRASH_DIRECTORY/shallow-file" pack-objects -q --revs --stdout <in >gp.pack &&
	names $algo $r git.pack >git.names &&
	names $algo $r gp.pack >gp.names &&
	test_cmp git.names gp.names &&
	git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-file" rev-list --objects main |
		cut -d" " -f1 | sort >expect &&
	test_cmp expect gp.names
'

test_expect_success "\"-<oid>\" lines in an object list: bases, not sent; a commit or tag stands for its tree ($algo)" '
	git -C $r repack -adfq &&
	new=$(git -C $r rev-parse main:big.txt) &&
	for base in main~1 "main~1^{tree}" v2 light
	do
		oid=$(git -C $r rev-parse "$base") &&
		printf -- "-%s\n%s big.txt\n" $oid $new | same_objects $algo $r &&
		echo $new >expect &&
		test_cmp expect gp.names &&
		test $(wc -c <gp.pack) -lt 1000 &&
		test $(wc -c <gp.pack) -lt $(($(wc -c <git.pack) * 3 / 2 + 200)) || return 1
	done &&
	# no base: the whole blob
	printf "%s big.txt\n" $new | gitpack -C $r pack-objects -q --stdout >whole.pack &&
	test $(wc -c <whole.pack) -gt 10000
'

for filter in blob:none blob:limit=1 blob:limit=200 blob:limit=1k tree:0 tree:1 tree:3 \
	object:type=blob object:type=tree object:type=commit object:type=tag \
	combine:blob:none+tree:2 combine:tree:3+blob:limit=50 "combine:object:type=tree+tree:1"
do
	test_expect_success "--filter=$filter: the objects of git ($algo)" '
		printf "main\nv1-outer\nblob-tag\n" | same_objects $algo $r --revs --filter=$filter
	'
done

test_expect_success "--index-version=1 and 2,<offset>: the .idx git writes for that pack ($algo)" '
	for version in 1 2,0x40 2,0
	do
		rm -rf iv && mkdir iv &&
		hash=$(echo main | gitpack -C $r pack-objects -q --revs --index-version=$version "$TRASH_DIRECTORY/iv/p") &&
		git -C $r index-pack --index-version=$version -o "$TRASH_DIRECTORY/iv/git.idx" \
			"$TRASH_DIRECTORY/iv/p-$hash.pack" >/dev/null &&
		test_cmp_bin iv/git.idx iv/p-$hash.idx || return 1
	done &&
	# version 1 has no header; version 2 begins with "\377tOc"
	printf "\\377tOc" >magic &&
	head -c 4 iv/p-$hash.idx >actual &&
	test_cmp_bin magic actual
'

test_expect_success GITPACK_IS_GITPACK "--name-hash-version: 0 and 3 refused, -1 and 1 the same, 2 with --write-bitmap-index warned ($algo)" '
	for v in 0 3
	do
		echo main | test_expect_code 128 gitpack -C $r pack-objects -q --revs --stdout \
			--name-hash-version=$v >out 2>err &&
		grep "^fatal: invalid --name-hash-version option: $v\$" err || return 1
	done &&
	echo main | gitpack -C $r pack-objects -q --revs --stdout --name-hash-version=-1 >minus.pack &&
	echo main | gitpack -C $r pack-objects -q --revs --stdout --name-hash-version=1 >one.pack &&
	test_cmp_bin one.pack minus.pack &&
	echo main | gitpack -C $r pack-objects -q --revs --stdout --name-hash-version=2 >two.pack &&
	names $algo $r two.pack >two.names &&
	names $algo $r one.pack >one.names &&
	test_cmp one.names two.names &&
	rm -rf bm && mkdir bm &&
	gitpack -C $r pack-objects -q --revs --all --name-hash-version=2 --write-bitmap-index \
		"$TRASH_DIRECTORY/bm/p" </dev/null >hash 2>err &&
	grep "^warning: currently, --write-bitmap-index requires --name-hash-version=1\$" err &&
	test_path_is_file bm/p-$(cat hash).bitmap &&
	# without --all there is no bitmap, and nothing to warn about, as in git
	rm -rf bm && mkdir bm &&
	echo main | gitpack -C $r pack-objects -q --revs --name-hash-version=2 --write-bitmap-index \
		"$TRASH_DIRECTORY/bm/p" >hash 2>err &&
	test_must_be_empty err &&
	test_path_is_missing bm/p-$(cat hash).bitmap
'

test_expect_success GIT_NEW "--name-hash-version: the messages of a newer git ($algo)" '
	for v in 0 3 x
	do
		{
			echo main | git_new -C $r pack-objects -q --revs --stdout \
				--name-hash-version=$v >out 2>expect.err
			echo $? >expect.code
		} &&
		{
			echo main | gitpack -C $r pack-objects -q --revs --stdout \
				--name-hash-version=$v >out 2>actual.err
			echo $? >actual.code
		} &&
		test_cmp expect.code actual.code &&
		head -n 1 expect.err >expect &&
		head -n 1 actual.err >actual &&
		if test $v != x
		then
			test_cmp expect actual
		fi || return 1
	done
'

test_expect_success "--thin without --revs reads revisions, as git bundle sends them ($algo)" '
	printf "%s\n^%s\n" $(git -C $r rev-parse main main~2) |
		same_objects $algo $r --thin --delta-base-offset &&
	git -C $r rev-list --objects main ^main~2 | cut -d" " -f1 | sort >expect &&
	test_cmp expect gp.names &&
	test_must_fail gitpack -C $r pack-objects --thin out </dev/null 2>err &&
	grep "^fatal: --thin cannot be used to build an indexable pack\$" err
'

test_expect_success "--no-quiet turns progress on, -q then --no-quiet too; --quiet off ($algo)" '
	echo main >in &&
	GIT_PROGRESS_DELAY=0 gitpack -C $r pack-objects --revs --stdout --all-progress-implied --no-quiet <in >out.pack 2>err &&
	grep "^Total " err &&
	GIT_PROGRESS_DELAY=0 gitpack -C $r pack-objects --revs --stdout -q --no-quiet <in >out.pack 2>err &&
	grep "^Total " err &&
	GIT_PROGRESS_DELAY=0 gitpack -C $r pack-objects --revs --stdout --progress -q <in >out.pack 2>err &&
	test_must_be_empty err
'

test_expect_success "an empty line ends the --revs input ($algo)" '
	printf "main~3\n\nmain\n" | same_objects $algo $r --revs &&
	git -C $r rev-list --objects main~3 | cut -d" " -f1 | sort >expect &&
	test_cmp expect gp.names
'

test_expect_success "\"expected object ID, got garbage\", as git says it ($algo)" '
	for line in "not-an-id" "-not-an-edge" "--not"
	do
		printf "%s\n" "$line" >in &&
		test_expect_code 128 git -C $r pack-objects --stdout <in >out 2>expect &&
		test_expect_code 128 gitpack -C $r pack-objects --stdout <in >out 2>actual &&
		test_cmp expect actual || return 1
	done &&
	grep "^fatal: expected edge object ID, got garbage:\$" actual
'

test_expect_success GITPACK_IS_GITPACK "the Total line: Total N (delta D), reused R (delta RD), pack-reused P (from K) ($algo)" '
	printf "main\n^main~2\n" | gitpack -C $r pack-objects --revs --thin --stdout --progress >p.pack 2>err &&
	tr "\r" "\n" <err | grep "^Total " >total &&
	test_line_count = 1 total &&
	grep -E "^Total [0-9]+ \(delta [0-9]+\), reused [0-9]+ \(delta [0-9]+\), pack-reused [0-9]+ \(from [0-9]+\)\$" total &&
	set -- $(sed "s/[^0-9]/ /g" total) &&
	rm -f p-fixed.* &&
	git -C $r index-pack --stdin --fix-thin "$TRASH_DIRECTORY/p-fixed.pack" <p.pack >/dev/null &&
	git -C $r verify-pack -v "$TRASH_DIRECTORY/p-fixed.idx" >vp &&
	# N: what was sent (the completed pack has the bases too)
	n=$(od -An -tu1 -j8 -N4 p.pack | awk "{ print \$1 * 16777216 + \$2 * 65536 + \$3 * 256 + \$4 }") &&
	test $1 = $n &&
	# D: the deltas in it (the bases appended whole)
	awk "NF == 7" vp >deltas &&
	test_line_count = $2 deltas &&
	test $2 -gt 0 &&
	test $3 -le $1 &&
	test $4 -le $3 &&
	# quiet: no Total line
	printf "main\n^main~2\n" | gitpack -C $r pack-objects -q --revs --thin --stdout >p.pack 2>err &&
	test_must_be_empty err
'


test_expect_success "--thin --progress: the counts are of what is sent, as git counts, not of the bases ($algo)" '
	for tool in git gitpack
	do
		printf "main\n^main~2\n" | GIT_PROGRESS_DELAY=0 $tool -C $r pack-objects --revs --thin \
			--stdout --progress >p.pack 2>err &&
		tr "\r" "\n" <err | grep -E "^(Counting|Compressing) objects: .*done" >$tool.counts ||
		return 1
	done &&
	cat gitpack.counts &&
	test_line_count = 2 gitpack.counts &&
	test_cmp git.counts gitpack.counts &&
	# counted with a bitmap, whose walk names no edges (nothing copied
	# verbatim, which would leave nothing to count)
	rm -rf bm-$algo &&
	cp -R $r bm-$algo &&
	git -C bm-$algo repack -adbq &&
	for tool in git gitpack
	do
		printf "main\n^main~2\n" | GIT_PROGRESS_DELAY=0 $tool -C bm-$algo \
			-c pack.allowPackReuse=false pack-objects --revs --thin --use-bitmap-index \
			--stdout --progress >p.pack 2>err &&
		tr "\r" "\n" <err | grep -E "^(Counting|Compressing) objects: .*done" >$tool.counts ||
		return 1
	done &&
	cat gitpack.counts &&
	test_cmp git.counts gitpack.counts
'

test_expect_success "--sparse, --no-sparse, pack.useSparse: the objects of git, a copied tree sent again only when sparse ($algo)" '
	s=sparse-$algo &&
	git init -q -b main --object-format=$algo $s &&
	for i in 1 2 3
	do
		for j in 1 2 3
		do
			mkdir -p $s/f$i/f$j &&
			echo $i$j >$s/f$i/f$j/data.txt || return 1
		done
	done &&
	git -C $s add . &&
	test_tick &&
	git -C $s commit -q -m trees &&
	mkdir $s/f3/f4 &&
	cp $s/f1/f1/data.txt $s/f3/f4/ &&
	git -C $s add f3/f4 &&
	test_tick &&
	git -C $s commit -q -m "copy f1/f1 to f3/f4" &&
	printf "main\n^main~1\n" >in &&
	for how in --sparse --no-sparse "-c pack.useSparse=false" "-c pack.useSparse=true" ""
	do
		case "$how" in
		-c*) set -- $how && cfg="$1 $2" && opt= ;;
		*) cfg= && opt=$how ;;
		esac &&
		git -C $s $cfg pack-objects -q --revs --stdout $opt <in >git.pack &&
		gitpack -C $s $cfg pack-objects -q --revs --stdout $opt <in >gp.pack &&
		names $algo $s git.pack >git.names &&
		names $algo $s gp.pack >gp.names &&
		test_cmp git.names gp.names || return 1
	done &&
	# the default is sparse: the copy is sent again, with its tree
	gitpack -C $s pack-objects -q --revs --stdout <in >gp.pack &&
	names $algo $s gp.pack >gp.names &&
	git -C $s rev-parse main:f3/f4 main:f3/f4/data.txt >copied &&
	test $(grep -c -F -f copied gp.names) = 2 &&
	gitpack -C $s pack-objects -q --revs --stdout --no-sparse <in >gp.pack &&
	names $algo $s gp.pack >gp.names &&
	test $(grep -c -F -f copied gp.names) = 0
'

test_expect_success "a repository whose old history lacks its parents serves what is new, as git does ($algo)" '
	b=nobase-$algo &&
	git init -q -b main --object-format=$algo $b &&
	echo one >$b/file &&
	git -C $b add file &&
	test_tick &&
	git -C $b commit -q -m A &&
	echo two >>$b/file &&
	test_tick &&
	git -C $b commit -q -a -m B &&
	p=patched-$algo &&
	git init -q -b main --object-format=$algo $p &&
	# B and its tree only: not A, not the old blob
	for o in $(git -C $b rev-parse main main^{tree})
	do
		git -C $b cat-file $(git -C $b cat-file -t $o) $o |
		git -C $p hash-object -w --stdin -t $(git -C $b cat-file -t $o) || return 1
	done &&
	git -C $b cat-file blob main:file | git -C $p hash-object -w --stdin &&
	echo three >$p/file &&
	git -C $p read-tree $(git -C $b rev-parse main) &&
	git -C $p update-index --add file &&
	tree=$(git -C $p write-tree) &&
	c=$(echo C | git -C $p commit-tree $tree -p $(git -C $b rev-parse main)) &&
	printf "%s\n^%s\n" $c $(git -C $b rev-parse main) >in &&
	git -C $p pack-objects -q --revs --thin --stdout <in >git.pack &&
	gitpack -C $p pack-objects -q --revs --thin --stdout <in >gp.pack &&
	git -C $b index-pack --stdin --fix-thin <gp.pack >/dev/null &&
	git -C $b update-ref refs/heads/c $c &&
	git -C $b fsck --full --no-dangling &&
	git -C $b cat-file -p $c:file >actual &&
	echo three >expect &&
	test_cmp expect actual
'

# reuse_repo ALGO DIR: a history of 12 versions of 3 files in one pack
# (deltas against older versions and newer, as git writes them), with a
# MIDX bitmap; then its first commit, tagged v1.
reuse_repo () {
	git init -q -b main --object-format=$1 $2 &&
	for i in $(test_seq 12)
	do
		test_seq $((i * 300)) >$2/a.txt &&
		test_seq 5000 | sed "s/^$i\$/v$i/" >$2/b.txt &&
		test_seq $((3000 - i * 100)) >$2/c.txt &&
		git -C $2 add . &&
		test_tick &&
		git -C $2 commit -q -m "v$i" &&
		if test $i = 1
		then
			git -C $2 tag v1
		fi || return 1
	done &&
	git -C $2 repack -adq &&
	git -C $2 multi-pack-index write --bitmap
}

test_expect_success "verbatim reuse with gaps: distances rewritten, the objects git sends ($algo)" '
	reuse_repo $algo gaps-$algo &&
	# the haves leave holes in the stored pack: what is copied must have
	# its offset deltas pointed at the bases where they landed
	printf "main\n^main~3\n" >in &&
	for who in git gitpack
	do
		$who -C gaps-$algo pack-objects --revs --stdout --delta-base-offset \
			--use-bitmap-index --progress <in >$who.pack 2>$who.err || return 1
	done &&
	tr "\r" "\n" <gitpack.err | grep "pack-reused [1-9]" &&
	names $algo gaps-$algo git.pack >git.names &&
	names $algo gaps-$algo gitpack.pack >gp.names &&
	test_cmp git.names gp.names &&
	git init -q --bare --object-format=$algo gaps-check-$algo &&
	git -C gaps-check-$algo index-pack --stdin --fix-thin <gitpack.pack >/dev/null
'

test_expect_success "a delta whose base is copied verbatim from another pack stays a delta ($algo)" '
	reuse_repo $algo xbase-$algo &&
	# a second pack, as index-pack --fix-thin leaves a push: a new
	# version of b.txt as a delta of the old one, which is stored again
	old=$(git -C xbase-$algo rev-parse main:b.txt) &&
	test_seq 5000 | sed "s/^4000\$/new/" >xbase-$algo/b.txt &&
	new=$(git -C xbase-$algo hash-object -w b.txt) &&
	printf "%s\n%s\n" $old $new |
		git -C xbase-$algo pack-objects -q --window=10 .git/objects/pack/pack >push.name &&
	git -C xbase-$algo verify-pack -v \
		.git/objects/pack/pack-$(cat push.name).idx >push.vp &&
	grep "^$new blob .* $old\$" push.vp &&
	rm -f xbase-$algo/.git/objects/$(echo $new | cut -c1-2)/$(echo $new | cut -c3-) &&
	git -C xbase-$algo add b.txt &&
	test_tick &&
	git -C xbase-$algo commit -q -m push &&
	base=$(ls xbase-$algo/.git/objects/pack/pack-*.pack | grep -v $(cat push.name)) &&
	git -C xbase-$algo multi-pack-index write --bitmap \
		--preferred-pack=$(basename $base) &&
	gitpack -C xbase-$algo pack-objects --revs --all --stdout --delta-base-offset \
		--use-bitmap-index --progress </dev/null >gp.pack 2>gp.err &&
	tr "\r" "\n" <gp.err | grep "pack-reused [1-9]" &&
	rm -rf xbase-check-$algo &&
	git init -q --bare --object-format=$algo xbase-check-$algo &&
	idx=$(git -C xbase-check-$algo index-pack --stdin <gp.pack | cut -f2) &&
	git -C xbase-check-$algo verify-pack -v objects/pack/pack-$idx.idx >gp.vp &&
	grep "^$new blob .* $old\$" gp.vp &&
	git -C xbase-$algo rev-list --objects --all | cut -d" " -f1 | sort >expect &&
	cut -d" " -f1 gp.vp | grep -E "^[0-9a-f]{40,64}\$" | sort >actual &&
	test_cmp expect actual
'

done

test_done
