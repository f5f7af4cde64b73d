#!/bin/sh

test_description='pack-refs: every option of git pack-refs, against stock git

A repository with refs packed already, loose refs over stale packed
ones, loose branches, tags (lightweight, annotated, a tag of a tag),
remote-tracking refs, a ref right below refs/, a per-worktree ref and
a symbolic ref is packed by gitpack and by stock git with the same
options; packed-refs must hold the same bytes and the same loose files
must be left. The default (tags and what is packed already), --all and
--[no-]prune are compared with git 2.39; --include, --exclude,
--no-include, --no-exclude and --auto, which 2.39 lacks, with the Git
2.55 of GP_TEST_GIT_NEW when there is one, and checked against what
git-pack-refs(1) says whether or not. Then: a packed-refs that is a
symbolic link is written through; a tag that lies about the type of
what it tags, or tags a missing object, is packed without a peeled
line; a loose ref to a missing object is reported and left alone; a
branch holding a blob is refused; a malformed packed-refs and a bad option
fail with nothing changed, a malformed pattern matches nothing, as in
Git, with a warning; maintenance passes
--auto to its pack-refs child. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# loose_refs DIR: every file and directory under DIR/.git/refs.
loose_refs () {
	(cd "$1/.git" && find refs | sort)
}

# same_result ORACLE-DIR DIR: the same packed-refs bytes (or none), the
# same loose refs, no lock left behind.
same_result () {
	if test -f "$1/.git/packed-refs"
	then
		test_cmp_bin "$1/.git/packed-refs" "$2/.git/packed-refs"
	else
		test_path_is_missing "$2/.git/packed-refs"
	fi &&
	loose_refs "$1" >loose.expect &&
	loose_refs "$2" >loose.actual &&
	test_cmp loose.expect loose.actual &&
	test_path_is_missing "$2/.git/packed-refs.lock"
}

# pack_both ORACLE SRC ARGS...: copies of SRC packed by ORACLE ("git" or
# "git_new") and by gitpack with ARGS: the same exit code, the same
# messages, the same result.
pack_both () {
	pb_oracle=$1 &&
	pb_src=$2 &&
	shift 2 &&
	rm -rf o p &&
	cp -R "$pb_src" o &&
	cp -R "$pb_src" p &&
	{ $pb_oracle -C o pack-refs "$@" 2>o.err; echo $? >o.rc; } &&
	{ gitpack -C p pack-refs "$@" 2>p.err; echo $? >p.rc; } &&
	test_cmp o.rc p.rc &&
	test_cmp o.err p.err &&
	same_result o p
}

# is_loose DIR REF / is_packed DIR REF
is_loose () {
	test_path_is_file "$1/.git/$2"
}
is_packed () {
	grep " $2\$" "$1/.git/packed-refs" >/dev/null
}

# auto_limit FILE: the loose refs pack-refs --auto waits for, given
# packed-refs FILE (git-pack-refs(1): more, the bigger packed-refs is):
# 5 x floor(log2(size / 100)), at least 16.
auto_limit () {
	al_n=0
	if test -f "$1"
	then
		al_n=$(($(wc -c <"$1") / 100))
	fi
	al_log=0
	while test $al_n -gt 1
	do
		al_n=$((al_n / 2))
		al_log=$((al_log + 1))
	done
	al_limit=$((al_log * 5))
	if test $al_limit -lt 16
	then
		al_limit=16
	fi
	echo $al_limit
}

for algo in sha1 sha256
do

test_expect_success "setup: refs packed and loose, of every kind ($algo)" '
	rm -rf src-$algo &&
	git init -q -b main --object-format=$algo src-$algo &&
	test_commit -C src-$algo one &&
	test_commit -C src-$algo two &&
	git -C src-$algo tag -a -m ann ann one &&
	git -C src-$algo tag -a -m nested nested ann &&
	git -C src-$algo branch deep/er/b one &&
	git -C src-$algo branch topic one &&
	git -C src-$algo update-ref refs/remotes/origin/main one &&
	git -C src-$algo pack-refs --all &&
	git -C src-$algo branch late two &&
	git -C src-$algo branch deep/other two &&
	git -C src-$algo update-ref refs/heads/topic two &&
	git -C src-$algo tag lw2 two &&
	git -C src-$algo tag -a -m ann2 ann2 two &&
	git -C src-$algo tag -a -m over -f ann two &&
	git -C src-$algo update-ref refs/top two &&
	git -C src-$algo update-ref refs/bisect/bad two &&
	git -C src-$algo update-ref refs/remotes/origin/feature two &&
	git -C src-$algo symbolic-ref refs/heads/sym refs/heads/main &&
	git -C src-$algo symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main &&
	is_loose src-$algo refs/heads/topic &&
	is_packed src-$algo refs/heads/topic
'

for args in "" "--all" "--no-prune" "--all --no-prune" "--prune" "--all --prune" "--no-all"
do
	test_expect_success "pack-refs $args: what git 2.39 writes and leaves ($algo)" '
		(set -f && pack_both git src-$algo $args)
	'
done

test_expect_success "pack-refs: the tags and what was packed; branches stay loose ($algo)" '
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs &&
	for r in refs/tags/lw2 refs/tags/ann2 refs/tags/ann
	do
		test_path_is_missing d/.git/$r && is_packed d $r || return 1
	done &&
	for r in refs/heads/late refs/heads/topic refs/top refs/bisect/bad refs/heads/sym
	do
		is_loose d $r || return 1
	done &&
	# the stale packed topic stays as it was; the loose file wins
	is_packed d refs/heads/topic &&
	test "$(git -C d rev-parse topic)" = "$(git -C d rev-parse two)" &&
	git -C src-$algo for-each-ref >expect &&
	git -C d for-each-ref >actual &&
	test_cmp expect actual
'

# --include, --exclude: git-pack-refs(1) whatever git is at hand.
test_expect_success "pack-refs --include: only those, no tags; --exclude wins ($algo)" '
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs --include "refs/heads/*" --exclude "refs/heads/t*" &&
	for r in refs/heads/late refs/heads/deep/other
	do
		test_path_is_missing d/.git/$r && is_packed d $r || return 1
	done &&
	test_path_is_missing d/.git/refs/heads/deep &&
	for r in refs/heads/topic refs/tags/lw2 refs/tags/ann2 refs/top refs/heads/sym
	do
		is_loose d $r || return 1
	done &&
	! is_packed d refs/tags/lw2 &&
	git -C src-$algo for-each-ref >expect &&
	git -C d for-each-ref >actual &&
	test_cmp expect actual
'

test_expect_success "pack-refs --all --exclude: all but those; --include is a no-op with --all ($algo)" '
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs --all --include refs/nothing --exclude "refs/remotes/*" &&
	test_path_is_missing d/.git/refs/heads/late &&
	test_path_is_missing d/.git/refs/top &&
	is_loose d refs/remotes/origin/feature &&
	! is_packed d refs/remotes/origin/feature &&
	is_packed d refs/remotes/origin/main &&
	is_loose d refs/bisect/bad
'

test_expect_success "pack-refs --no-include, --no-exclude: the lists start again ($algo)" '
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs --include "refs/heads/*" --no-include &&
	is_loose d refs/heads/late &&
	test_path_is_missing d/.git/refs/tags/lw2 &&
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs --all --exclude "refs/*" --no-exclude --exclude refs/top &&
	test_path_is_missing d/.git/refs/heads/late &&
	is_loose d refs/top
'

test_expect_success "pack-refs: a star crosses /, ? and [] work as in glob(7) ($algo)" '
	rm -rf d && cp -R src-$algo d &&
	gitpack -C d pack-refs --include "refs/*/d*" --include "refs/heads/?ate" \
		--include "refs/tags/[al]*2" &&
	test_path_is_missing d/.git/refs/heads/deep &&
	test_path_is_missing d/.git/refs/heads/late &&
	test_path_is_missing d/.git/refs/tags/lw2 &&
	test_path_is_missing d/.git/refs/tags/ann2 &&
	is_loose d refs/heads/topic &&
	is_loose d refs/tags/ann
'

for args in "--include refs/heads/*" "--include refs/heads/d* --include refs/remotes/*" \
	"--exclude refs/tags/ann*" "--all --exclude refs/heads/deep/*" \
	"--include refs/* --exclude refs/heads/t*" "--include refs/heads/* --no-include" \
	"--all --exclude refs/* --no-exclude" "--all --include refs/tags/lw2" \
	"--include refs/heads/?ate --include refs/tags/[al]*2" \
	"--include refs/* --no-prune" "--auto" "--all --auto"
do
	test_expect_success GIT_NEW "pack-refs $args: what Git 2.55 writes and leaves ($algo)" '
		(set -f && pack_both git_new src-$algo $args)
	'
done

test_expect_success "pack-refs --auto: nothing below 16 loose refs without packed-refs ($algo)" '
	rm -rf au &&
	git init -q -b main --object-format=$algo au &&
	test_commit -C au --no-tag base &&
	test_seq 2 15 | sed "s,.*,create refs/heads/b& HEAD," | git -C au update-ref --stdin &&
	gitpack -C au pack-refs --all --auto &&
	test_path_is_missing au/.git/packed-refs &&
	# the default counts the tags only
	git -C au update-ref refs/heads/b16 HEAD &&
	gitpack -C au pack-refs --auto &&
	test_path_is_missing au/.git/packed-refs &&
	gitpack -C au pack-refs --all --auto &&
	test_path_is_file au/.git/packed-refs &&
	test_line_count = 17 au/.git/packed-refs &&
	test_path_is_missing au/.git/refs/heads/b16
'

test_expect_success "pack-refs --auto: the bigger packed-refs, the more loose refs it takes ($algo)" '
	rm -rf as &&
	git init -q -b main --object-format=$algo as &&
	test_commit -C as --no-tag base &&
	test_seq 1 300 | sed "s,.*,create refs/heads/packed-& HEAD," | git -C as update-ref --stdin &&
	git -C as pack-refs --all &&
	limit=$(auto_limit as/.git/packed-refs) &&
	test $limit -gt 16 &&
	test_seq 2 $limit | sed "s,.*,create refs/tags/t& HEAD," | git -C as update-ref --stdin &&
	# loose refs that are never packed do not count
	git -C as update-ref refs/bisect/x HEAD &&
	git -C as symbolic-ref refs/heads/s refs/heads/main &&
	cp as/.git/packed-refs before &&
	gitpack -C as pack-refs --all --auto &&
	test_cmp_bin before as/.git/packed-refs &&
	# the default counts only the tags
	git -C as update-ref refs/heads/one-more HEAD &&
	gitpack -C as pack-refs --auto &&
	test_cmp_bin before as/.git/packed-refs &&
	git -C as update-ref -d refs/heads/one-more &&
	git -C as update-ref refs/tags/t1 HEAD &&
	gitpack -C as pack-refs --auto &&
	test_path_is_missing as/.git/refs/tags/t1 &&
	is_packed as refs/tags/t1 &&
	is_loose as refs/bisect/x
'

test_expect_success GIT_NEW "pack-refs --auto: the same threshold as Git 2.55 ($algo)" '
	rm -rf ag &&
	git init -q -b main --object-format=$algo ag &&
	test_commit -C ag --no-tag base &&
	test_seq 1 1000 | sed "s,.*,create refs/heads/packed-& HEAD," | git -C ag update-ref --stdin &&
	git -C ag pack-refs --all &&
	limit=$(auto_limit ag/.git/packed-refs) &&
	test_seq 2 $limit | sed "s,.*,create refs/heads/l& HEAD," | git -C ag update-ref --stdin &&
	pack_both git_new ag --all --auto &&
	test_cmp_bin ag/.git/packed-refs p/.git/packed-refs &&
	git -C ag update-ref refs/heads/l1 HEAD &&
	pack_both git_new ag --all --auto &&
	test_path_is_missing p/.git/refs/heads/l1
'

test_expect_success "pack-refs: a packed-refs that is a symlink is written through ($algo)" '
	rm -rf o p &&
	cp -R src-$algo o &&
	mv o/.git/packed-refs o/.git/real-packed-refs &&
	ln -s real-packed-refs o/.git/packed-refs &&
	cp -R o p &&
	git -C o pack-refs --all &&
	gitpack -C p pack-refs --all &&
	test -h p/.git/packed-refs &&
	test "$(readlink p/.git/packed-refs)" = real-packed-refs &&
	test_cmp_bin o/.git/real-packed-refs p/.git/real-packed-refs &&
	test_path_is_missing p/.git/real-packed-refs.lock &&
	loose_refs o >expect &&
	loose_refs p >actual &&
	test_cmp expect actual
'

test_expect_success "pack-refs: through a chain of links, relative and absolute ($algo)" '
	rm -rf o p &&
	cp -R src-$algo p &&
	mkdir p/store &&
	mv p/.git/packed-refs p/store/packed &&
	ln -s "$(pwd)/p/store/packed" p/.git/link2 &&
	ln -s link2 p/.git/packed-refs &&
	git -C p for-each-ref >expect &&
	gitpack -C p pack-refs --all &&
	test -h p/.git/packed-refs &&
	test -h p/.git/link2 &&
	test -f p/store/packed &&
	test_path_is_missing p/store/packed.lock &&
	test_path_is_missing p/.git/refs/heads/late &&
	git -C p for-each-ref >actual &&
	test_cmp expect actual
'

test_expect_success "pack-refs: no peeled line for a tag that lies about its object ($algo)" '
	rm -rf bt &&
	git init -q -b main --object-format=$algo bt &&
	test_commit -C bt --no-tag base &&
	blob=$(echo garbage | git -C bt hash-object -w --stdin) &&
	printf "object %s\ntype commit\ntag bad\ntagger C O Mitter <c@example.com> 1112354055 +0200\n\nbad\n" \
		$blob >tag.txt &&
	bad=$(git -C bt hash-object -w -t tag --literally --stdin <tag.txt) &&
	git -C bt update-ref refs/tags/bad $bad &&
	missing=$(echo $blob | tr "0-9a-f" "1") &&
	printf "object %s\ntype commit\ntag gone\ntagger C O Mitter <c@example.com> 1112354055 +0200\n\ngone\n" \
		$missing >tag2.txt &&
	gone=$(git -C bt hash-object -w -t tag --literally --stdin <tag2.txt) &&
	git -C bt update-ref refs/tags/gone $gone &&
	git -C bt tag -a -m good good HEAD &&
	gitpack -C bt pack-refs --all &&
	is_packed bt refs/tags/bad &&
	is_packed bt refs/tags/gone &&
	test "$(grep -c "^\^" bt/.git/packed-refs)" = 1 &&
	grep -A1 " refs/tags/good\$" bt/.git/packed-refs | tail -n 1 >peeled &&
	echo "^$(git -C bt rev-parse HEAD)" >expect &&
	test_cmp expect peeled
'

test_expect_success GIT_NEW "pack-refs: invalid peeled values as Git 2.55 leaves them out ($algo)" '
	rm -rf bt2 && cp -R bt bt2 && rm -f bt2/.git/packed-refs &&
	for t in bad gone good
	do
		git -C bt rev-parse refs/tags/$t >bt2/.git/refs/tags/$t || return 1
	done &&
	git -C bt rev-parse main >bt2/.git/refs/heads/main &&
	pack_both git_new bt2 --all
'

test_expect_success "pack-refs: a packed-refs without a header is peeled from the objects, as git 2.39 ($algo)" '
	rm -rf nh &&
	cp -R src-$algo nh &&
	git -C nh pack-refs --all &&
	grep -v "^[#^]" nh/.git/packed-refs >plain &&
	mv plain nh/.git/packed-refs &&
	git -C nh branch fresh one &&
	pack_both git nh --all &&
	grep "^\^" p/.git/packed-refs
'

test_expect_success "pack-refs: a loose ref to a missing object is reported and stays ($algo)" '
	rm -rf dg && cp -R src-$algo dg &&
	git -C dg rev-parse HEAD | tr "0-9a-f" "1" >dg/.git/refs/heads/dangling &&
	git -C dg rev-parse HEAD | tr "0-9a-f" "2" >dg/.git/refs/tags/dangling &&
	pack_both git dg --all &&
	grep "error: refs/heads/dangling does not point to a valid object!" p.err &&
	grep "error: refs/tags/dangling does not point to a valid object!" p.err &&
	test_path_is_file p/.git/refs/heads/dangling &&
	# every candidate is checked, selected or not (git 2.39 checked the selected only)
	gitpack -C p pack-refs 2>err &&
	grep "error: refs/heads/dangling does not point" err
'

test_expect_success GIT_NEW "pack-refs: a loose ref to a missing object, as Git 2.55 ($algo)" '
	pack_both git_new dg &&
	pack_both git_new dg --all &&
	pack_both git_new dg --include "refs/remotes/*"
'

test_expect_success "pack-refs: a branch holding a blob is refused, nothing changes ($algo)" '
	rm -rf bb && cp -R src-$algo bb &&
	echo blob | git -C bb hash-object -w --stdin >bb/.git/refs/heads/blob &&
	cp bb/.git/packed-refs before &&
	test_must_fail gitpack -C bb pack-refs --all 2>err &&
	grep "trying to write non-commit object .* to branch .refs/heads/blob." err &&
	test_cmp_bin before bb/.git/packed-refs &&
	test_path_is_missing bb/.git/packed-refs.lock &&
	is_loose bb refs/heads/late &&
	# not selected: not looked at
	gitpack -C bb pack-refs &&
	is_loose bb refs/heads/blob
'

test_expect_success GIT_NEW "pack-refs: a branch holding a blob, as Git 2.55 ($algo)" '
	rm -rf bb2 && cp -R src-$algo bb2 &&
	echo blob | git -C bb2 hash-object -w --stdin >bb2/.git/refs/heads/blob &&
	pack_both git_new bb2 --all &&
	test "$(cat p.rc)" = 128 &&
	pack_both git_new bb2
'

test_expect_success "pack-refs: a malformed packed-refs fails, naming it and the line ($algo)" '
	rm -rf mf && cp -R src-$algo mf &&
	cp mf/.git/packed-refs good &&
	for bad in "bogus content" "$(git -C mf rev-parse HEAD | cut -c1-7) refs/heads/short"
	do
		cp good mf/.git/packed-refs &&
		echo "$bad" >>mf/.git/packed-refs &&
		cp mf/.git/packed-refs before &&
		lines=$(wc -l <before) &&
		test_expect_code 128 gitpack -C mf pack-refs --all 2>err &&
		grep "packed-refs: line $lines: unexpected line" err &&
		test_cmp_bin before mf/.git/packed-refs &&
		test_path_is_missing mf/.git/packed-refs.lock &&
		is_loose mf refs/heads/late || return 1
	done &&
	cp good mf/.git/packed-refs &&
	printf "%s refs/heads/unterminated" $(git -C mf rev-parse HEAD) >>mf/.git/packed-refs &&
	test_expect_code 128 gitpack -C mf pack-refs 2>err &&
	grep "unterminated line" err &&
	test_path_is_missing mf/.git/packed-refs.lock
'

test_expect_success "pack-refs: a malformed pattern matches nothing, with a warning ($algo)" '
	for pat in "refs/heads/[abc" "refs/heads/[[:nosuch:]]" "refs/\\"
	do
		rm -rf bp && cp -R src-$algo bp &&
		cp bp/.git/packed-refs before &&
		gitpack -C bp pack-refs --include "$pat" 2>err &&
		grep "warning: --include .* matches no ref" err &&
		grep -F "$pat" err &&
		rm -rf bp2 && cp -R src-$algo bp2 &&
		gitpack -C bp2 pack-refs --include "refs/no/such/*" &&
		test_cmp_bin bp2/.git/packed-refs bp/.git/packed-refs &&
		loose_refs bp2 >expect && loose_refs bp >actual &&
		test_cmp expect actual &&
		rm -rf bp && cp -R src-$algo bp &&
		gitpack -C bp pack-refs --all --exclude "$pat" 2>err &&
		grep "warning: --exclude .* matches no ref" err &&
		rm -rf bp2 && cp -R src-$algo bp2 &&
		git -C bp2 pack-refs --all &&
		test_cmp_bin bp2/.git/packed-refs bp/.git/packed-refs &&
		loose_refs bp2 >expect && loose_refs bp >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success "pack-refs: a bad option or an argument is a usage error ($algo)" '
	test_expect_code 129 gitpack -C src-$algo pack-refs --bogus 2>err &&
	grep "^usage: git pack-refs \[--all\] \[--no-prune\] \[--auto\] \[--include <pattern>\] \[--exclude <pattern>\]" err &&
	test_expect_code 129 gitpack -C src-$algo pack-refs refs/heads/main 2>err &&
	grep "^usage: git pack-refs" err
'

test_expect_success "maintenance run --auto: pack-refs only when needed, its child with --auto ($algo)" '
	rm -rf mt trace-mt &&
	git init -q -b main --object-format=$algo mt &&
	test_commit -C mt --no-tag base &&
	test_seq 1 10 | sed "s,.*,create refs/heads/b& HEAD," | git -C mt update-ref --stdin &&
	GIT_TRACE2_EVENT="$(pwd)/trace-mt" gitpack -C mt maintenance run --auto --task=pack-refs &&
	! grep "child_start" trace-mt &&
	test_path_is_missing mt/.git/packed-refs &&
	test_seq 11 20 | sed "s,.*,create refs/heads/b& HEAD," | git -C mt update-ref --stdin &&
	rm -f trace-mt &&
	GIT_TRACE2_EVENT="$(pwd)/trace-mt" gitpack -C mt maintenance run --auto --task=pack-refs &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"pack-refs\",\"--all\",\"--prune\",\"--auto\"\]" trace-mt &&
	test_path_is_missing mt/.git/refs/heads/b20 &&
	git -C mt update-ref refs/heads/one-more HEAD &&
	rm -f trace-mt &&
	GIT_TRACE2_EVENT="$(pwd)/trace-mt" gitpack -C mt maintenance run --task=pack-refs &&
	grep "\"child_start\".*\"argv\":\[\"git\",\"pack-refs\",\"--all\",\"--prune\"\]" trace-mt &&
	test_path_is_missing mt/.git/refs/heads/one-more
'

done

test_done
