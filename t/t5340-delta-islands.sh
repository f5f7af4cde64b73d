#!/bin/sh

test_description='delta islands: pack-objects --delta-islands, repack -i

A history written by stock git: a root commit on main, branches one and
two on top of it (each changing another line of the same files), a pull
ref on top of one (refs/pull/1/head), and an annotated tag of a commit
no branch reaches (refs/tags/v1). Versions of a file make good deltas of
each other, so a pack made without islands has deltas between branches.

The islands are worked out here, without gitpack: for each island the
objects "git rev-list --objects" lists for its refs. Every pack gitpack
writes with islands is read by stock git ("git verify-pack -v", or
"git index-pack" for a stream) and no delta in it may have a base
missing from an island of its object; the same pack without islands
does have such deltas (so the check can fail). Then what the
documentation promises: one island for expressions without groups or
giving the same name, the last matching expression wins, expressions
are anchored at the start, objects in more islands serve as bases,
pack.islandCore objects come first, stored deltas that cross are not
reused (also when a bitmap could count the objects), repack -i and
repack.useDeltaIslands, and git'\''s errors for a bad expression or a
missing value. Every repository passes "git fsck --full". SHA-1 and
SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# deltas DIR IDX: "object base" for each delta of the pack of IDX, as
# stock git reads it.
deltas () {
	git -C "$1" verify-pack -v "$2" >verify.out &&
	awk 'NF == 7 && $6 ~ /^[0-9]+$/ { print $1, $7 }' verify.out
}

# in_order DIR IDX: the objects of the pack of IDX, by offset.
in_order () {
	git -C "$1" verify-pack -v "$2" >verify.out &&
	awk '$2 ~ /^(commit|tree|blob|tag)$/ { print $5, $1 }' verify.out |
	sort -n | cut -d" " -f2
}

# island DIR NAME REF...: the objects REF... reach form island NAME
# (appended to islands.txt as "name object" lines).
island () {
	gp_is_dir_=$1
	gp_is_name_=$2
	shift 2
	git -C "$gp_is_dir_" rev-list --objects "$@" >island.out &&
	cut -d" " -f1 island.out | sed "s/^/$gp_is_name_ /" >>islands.txt
}

# crossing FILE: the deltas of FILE ("object base" lines) whose base is
# not in every island of islands.txt its object is in.
crossing () {
	awk 'NR == FNR { isl[$2] = isl[$2] " " $1; member[$1 " " $2] = 1; next }
	     {
		n = split(isl[$1], names, " ")
		for (i = 1; i <= n; i++)
			if (!((names[i] " " $2) in member)) {
				print $1, $2, names[i]
				break
			}
	     }' islands.txt "$1"
}

# heads_islands DIR: islands.txt for pack.island=refs/heads/(.*)
heads_islands () {
	rm -f islands.txt &&
	island "$1" main refs/heads/main &&
	island "$1" one refs/heads/one &&
	island "$1" two refs/heads/two
}

# only_pack DIR: the .idx of the one pack of DIR.
only_pack () {
	echo "$TRASH_DIRECTORY/$1"/objects/pack/pack-*.idx
}

# check_repo DIR: git fsck --full, and the pack holds what the refs reach.
check_repo () {
	git -C "$1" fsck --full --no-dangling 2>fsck.err &&
	test_must_be_empty fsck.err &&
	git -C "$1" rev-list --objects --all | cut -d" " -f1 | sort >expect.objects &&
	git -C "$1" show-index <"$(only_pack "$1")" | cut -d" " -f2 | sort >actual.objects &&
	test_cmp expect.objects actual.objects
}

# edit DIR BRANCH LINE: on BRANCH, line LINE of big.txt and of sub/mid.txt changes.
edit () {
	git -C "$1" checkout -q "$2" &&
	sed "s/^$3\$/changed $3 on $2/" "$1/big.txt" >"$1/big.tmp" &&
	mv "$1/big.tmp" "$1/big.txt" &&
	sed "s/^$3\$/changed $3 on $2/" "$1/sub/mid.txt" >"$1/mid.tmp" &&
	mv "$1/mid.tmp" "$1/sub/mid.txt" &&
	git -C "$1" add big.txt sub/mid.txt &&
	test_tick &&
	git -C "$1" commit -q -m "$2: line $3"
}

for algo in $test_hash_algos
do

r=repo-$algo

test_expect_success "setup: main, one, two, a pull ref and a tagged commit ($algo)" '
	git init -q --bare -b main --object-format=$algo $r &&
	git init -q -b main --object-format=$algo work-$algo &&
	w=work-$algo &&
	test_seq 3000 >$w/big.txt &&
	mkdir $w/sub &&
	test_seq 500 >$w/sub/mid.txt &&
	git -C $w add . &&
	test_tick &&
	git -C $w commit -q -m root &&
	git -C $w branch one &&
	git -C $w branch two &&
	git -C $w branch three &&
	edit $w one 100 &&
	edit $w two 200 &&
	git -C $w checkout -q -b pull one &&
	edit $w pull 300 &&
	edit $w three 400 &&
	git -C $w tag -a -m "release 1" v1 three &&
	git -C $w push -q ../$r main one two v1 pull:refs/pull/1/head &&
	git -C $r for-each-ref --format="%(refname)" >refs &&
	cat >expect <<-\EOF &&
	refs/heads/main
	refs/heads/one
	refs/heads/two
	refs/pull/1/head
	refs/tags/v1
	EOF
	test_cmp expect refs &&
	git -C $r repack -adfq &&
	one_blob=$(git -C $r rev-parse one:big.txt) &&
	two_blob=$(git -C $r rev-parse two:big.txt) &&
	root_blob=$(git -C $r rev-parse main:big.txt)
'

test_expect_success "without islands the branches delta against each other ($algo)" '
	rm -rf $r.0 && cp -R $r $r.0 &&
	gitpack -C $r.0 repack -adfq &&
	check_repo $r.0 &&
	deltas $r.0 "$(only_pack $r.0)" >deltas &&
	heads_islands $r.0 &&
	crossing deltas >cross &&
	test_file_not_empty cross &&
	# --delta-islands without any pack.island is the same
	gitpack -C $r.0 repack -adfiq &&
	deltas $r.0 "$(only_pack $r.0)" >deltas &&
	crossing deltas >cross &&
	test_file_not_empty cross
'

test_expect_success "repack -i: no delta crosses islands, bases in more islands used ($algo)" '
	rm -rf $r.1 && cp -R $r $r.1 &&
	gitpack -C $r.1 -c "pack.island=refs/heads/(.*)" repack -adfiq &&
	check_repo $r.1 &&
	deltas $r.1 "$(only_pack $r.1)" >deltas &&
	heads_islands $r.1 &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	# main'\''s blob is in all three islands: the base of both branches'\''
	grep "^$one_blob $root_blob\$" deltas &&
	grep "^$two_blob $root_blob\$" deltas
'

test_expect_success "pack-objects --revs --all --delta-islands, to files and to a stream ($algo)" '
	rm -rf $r.2 && cp -R $r $r.2 &&
	git -C $r.2 config pack.island "refs/heads/(.*)" &&
	heads_islands $r.2 &&
	gitpack -C $r.2 pack-objects -q --revs --all --delta-islands --no-reuse-delta \
		"$TRASH_DIRECTORY/$r.2/objects/pack/new" </dev/null >name &&
	deltas $r.2 "$TRASH_DIRECTORY/$r.2/objects/pack/new-$(cat name).idx" >deltas &&
	test_file_not_empty deltas &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	gitpack -C $r.2 pack-objects -q --revs --all --delta-islands --stdout </dev/null >stream.pack &&
	rm -rf recv-$algo && git init -q --bare --object-format=$algo recv-$algo &&
	git -C recv-$algo index-pack --stdin <stream.pack >/dev/null &&
	deltas recv-$algo "$(only_pack recv-$algo)" >deltas &&
	test_file_not_empty deltas &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	# the same without --delta-islands crosses
	gitpack -C $r.2 pack-objects -q --revs --all --no-reuse-delta --stdout </dev/null >plain.pack &&
	rm -rf recv-$algo && git init -q --bare --object-format=$algo recv-$algo &&
	git -C recv-$algo index-pack --stdin <plain.pack >/dev/null &&
	deltas recv-$algo "$(only_pack recv-$algo)" >deltas &&
	crossing deltas >cross &&
	test_file_not_empty cross
'

test_expect_success "stored deltas that cross islands are not reused ($algo)" '
	rm -rf $r.3 && cp -R $r $r.3 &&
	gitpack -C $r.3 repack -adfq &&
	deltas $r.3 "$(only_pack $r.3)" >deltas &&
	heads_islands $r.3 &&
	crossing deltas >cross &&
	test_file_not_empty cross &&
	# without -f: deltas are reused where islands allow
	gitpack -C $r.3 -c "pack.island=refs/heads/(.*)" repack -adiq &&
	check_repo $r.3 &&
	deltas $r.3 "$(only_pack $r.3)" >deltas &&
	crossing deltas >cross &&
	test_must_be_empty cross
'

test_expect_success "a bitmap does not let stored deltas cross in a stream ($algo)" '
	rm -rf $r.4 && cp -R $r $r.4 &&
	git -C $r.4 repack -adfbq &&
	deltas $r.4 "$(only_pack $r.4)" >deltas &&
	heads_islands $r.4 &&
	crossing deltas >cross &&
	test_file_not_empty cross &&
	gitpack -C $r.4 -c "pack.island=refs/heads/(.*)" pack-objects -q --revs --all \
		--delta-islands --use-bitmap-index --stdout </dev/null >stream.pack &&
	rm -rf recv-$algo && git init -q --bare --object-format=$algo recv-$algo &&
	git -C recv-$algo index-pack --stdin <stream.pack >/dev/null &&
	deltas recv-$algo "$(only_pack recv-$algo)" >deltas &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	# without islands the stored pack is copied as it is: deltas cross
	gitpack -C $r.4 pack-objects -q --revs --all --use-bitmap-index --stdout \
		</dev/null >plain.pack &&
	rm -rf recv-$algo && git init -q --bare --object-format=$algo recv-$algo &&
	git -C recv-$algo index-pack --stdin <plain.pack >/dev/null &&
	deltas recv-$algo "$(only_pack recv-$algo)" >deltas &&
	crossing deltas >cross &&
	test_file_not_empty cross
'

test_expect_success "repack.useDeltaIslands is -i; --no-delta-islands overrides it ($algo)" '
	rm -rf $r.5 && cp -R $r $r.5 &&
	git -C $r.5 config pack.island "refs/heads/(.*)" &&
	git -C $r.5 config repack.useDeltaIslands true &&
	gitpack -C $r.5 repack -adfq &&
	check_repo $r.5 &&
	deltas $r.5 "$(only_pack $r.5)" >deltas &&
	heads_islands $r.5 &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	gitpack -C $r.5 repack -adfq --no-delta-islands &&
	deltas $r.5 "$(only_pack $r.5)" >deltas &&
	crossing deltas >cross &&
	test_file_not_empty cross
'

test_expect_success "tags and pulls: each tag an island, pull-only objects in none ($algo)" '
	rm -rf $r.6 && cp -R $r $r.6 &&
	gitpack -C $r.6 -c "pack.island=refs/heads/(.*)" -c "pack.island=refs/tags/(.*)" \
		repack -adfiq &&
	check_repo $r.6 &&
	deltas $r.6 "$(only_pack $r.6)" >deltas &&
	heads_islands $r.6 &&
	island $r.6 v1 refs/tags/v1 &&
	crossing deltas >cross &&
	test_must_be_empty cross &&
	# what only the pull ref reaches may take any base, and does
	git -C $r.6 rev-parse refs/pull/1/head:big.txt >pull_blob &&
	grep "^$(cat pull_blob) " deltas
'

test_expect_success "expressions without groups, or naming the same island, make one ($algo)" '
	rm -rf $r.7 && cp -R $r $r.7 &&
	rm -f islands.txt &&
	island $r.7 all refs/heads/main refs/heads/one refs/heads/two &&
	for config in "pack.island=refs/heads/" \
		"pack.island=refs/(.*)/one pack.island=refs/(.*)/two pack.island=refs/(.*)/main" \
		"pack.island=refs/heads/(.*) pack.island=refs/heads/"
	do
		args= &&
		for c in $config
		do
			args="$args -c $c" || return 1
		done &&
		gitpack -C $r.7 $args repack -adfiq &&
		deltas $r.7 "$(only_pack $r.7)" >deltas &&
		crossing deltas >cross &&
		test_must_be_empty cross &&
		# one island: the branches delta against each other again
		heads_islands $r.7 &&
		crossing deltas >cross &&
		test_file_not_empty cross &&
		rm -f islands.txt &&
		island $r.7 all refs/heads/main refs/heads/one refs/heads/two || return 1
	done
'

test_expect_success "expressions are anchored at the start of the ref name ($algo)" '
	rm -rf $r.8 && cp -R $r $r.8 &&
	gitpack -C $r.8 -c "pack.island=heads/(.*)" repack -adfiq &&
	deltas $r.8 "$(only_pack $r.8)" >deltas &&
	heads_islands $r.8 &&
	crossing deltas >cross &&
	test_file_not_empty cross
'

test_expect_success "pack.islandCore: the core island's objects come first ($algo)" '
	rm -rf $r.9 && cp -R $r $r.9 &&
	for core in one two
	do
		gitpack -C $r.9 -c "pack.island=refs/heads/(.*)" -c pack.islandCore=$core \
			repack -adfiq &&
		check_repo $r.9 &&
		git -C $r.9 rev-list --objects refs/heads/$core | cut -d" " -f1 | sort >core &&
		in_order $r.9 "$(only_pack $r.9)" >order &&
		head -n $(wc -l <core) order | sort >first &&
		test_cmp core first || return 1
	done &&
	# a name no ref gives changes nothing
	gitpack -C $r.9 -c "pack.island=refs/heads/(.*)" -c pack.islandCore=nothing repack -adfiq &&
	check_repo $r.9
'

test_expect_success "a bad expression is fatal with --delta-islands and -i only, as in git 2.55 ($algo)" '
	rm -rf $r.10 && cp -R $r $r.10 &&
	# git 2.55 words it so (2.39, which counts with the bitmap here, does not look)
	echo "fatal: failed to load island regex for '\''pack.island'\'': ^refs/(" >expect &&
	test_must_fail gitpack -C $r.10 -c "pack.island=refs/(" pack-objects --revs --all --stdout \
		--delta-islands </dev/null >/dev/null 2>actual &&
	test_cmp expect actual &&
	test_must_fail gitpack -C $r.10 -c "pack.island=refs/(" repack -adi 2>actual &&
	test_cmp expect actual &&
	gitpack -C $r.10 -c "pack.island=refs/(" repack -adq &&
	gitpack -C $r.10 -c "pack.island=refs/(" pack-objects --revs --all --stdout \
		</dev/null >/dev/null &&
	# an object list, not --revs: islands are not read (git does the same)
	git -C $r.10 rev-parse main >list &&
	gitpack -C $r.10 -c "pack.island=refs/(" pack-objects --delta-islands --stdout \
		<list >/dev/null &&
	test_must_fail gitpack -C $r.10 -c pack.island pack-objects --revs --all --stdout \
		--delta-islands </dev/null >/dev/null 2>actual &&
	grep "missing value for .pack.island." actual &&
	test_must_fail gitpack -C $r.10 -c pack.island=refs/ -c pack.islandCore repack -adiq \
		2>actual &&
	grep "missing value for .pack.islandcore." actual &&
	check_repo $r.10
'

done

test_done
