#!/bin/sh

test_description='cat-file prints what git prints

Loose-only, packed-only (with deltas) and mixed repositories (loose objects,
two packs, objects both loose and packed), SHA-1 and SHA-256. Every
comparison runs stock git and gitpack on the same repository and input and
compares standard output and the exit code.'

. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# compare_cat_file REPO INPUT ARGS...: "git ARGS" and "gitpack ARGS" in
# REPO, each reading INPUT (a file, or /dev/null), print the same and exit
# the same way. The outputs stay in expect, actual (and .code).
compare_cat_file () {
	gp_ccf_repo_=$1
	gp_ccf_in_=$2
	shift 2
	(cd "$gp_ccf_repo_" && git cat-file "$@") <"$gp_ccf_in_" >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_ccf_repo_" && gitpack cat-file "$@") <"$gp_ccf_in_" >actual 2>actual.err
	echo $? >actual.code
	compare_results
}

batch_format='%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase) %(rest)'

for algo in $test_hash_algos
do

test_expect_success "setup: loose, packed and mixed repositories ($algo)" '
	pack_repo_create $algo base-$algo small &&
	cp -R base-$algo packed-$algo &&

	cp -R base-$algo loose-$algo &&
	mv loose-$algo/.git/objects/pack/pack-*.pack loose-$algo.pack &&
	rm -f loose-$algo/.git/objects/pack/* &&
	git -C loose-$algo unpack-objects -q <loose-$algo.pack &&
	rm -f loose-$algo.pack &&

	cp -R base-$algo mixed-$algo &&
	pack_repo_history mixed-$algo 3 &&
	# packs the new loose objects, but keeps them: objects both loose
	# and packed
	git -C mixed-$algo repack -q &&
	pack_repo_history mixed-$algo 3 &&

	test $(ls packed-$algo/.git/objects/pack/*.pack | wc -l) = 1 &&
	test $(ls mixed-$algo/.git/objects/pack/*.pack | wc -l) = 2 &&
	git -C loose-$algo count-objects -v >counts &&
	grep "^packs: 0" counts &&
	git -C mixed-$algo count-objects -v >counts &&
	! grep "^prune-packable: 0" counts &&
	! grep "^count: 0" counts &&
	zero=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
	# a sample of each type, and of deltas
	for kind in loose packed mixed
	do
		git -C $kind-$algo cat-file --batch-all-objects \
			--batch-check="%(objectname) %(objecttype) %(deltabase)" |
		awk -v z=$zero "
			\$3 != z && nd < 4 { print \$1; nd++; next }
			c[\$2]++ < 3 { print \$1 }
		" >$kind-$algo.sample &&
		git -C $kind-$algo cat-file --batch-all-objects \
			--batch-check="%(objectname)" >$kind-$algo.all || return 1
	done &&
	test_line_count -gt 12 packed-$algo.sample
'

for kind in loose packed mixed
do
	repo=$kind-$algo

	for opt in -t -s -e -p
	do
		test_expect_success "cat-file $opt on each type ($repo)" '
			>expect.all && >actual.all &&
			for oid in $(cat $repo.sample)
			do
				(cd $repo && git cat-file $opt $oid) >>expect.all 2>&1 &&
				(cd $repo && gitpack cat-file $opt $oid) >>actual.all 2>&1 ||
				return 1
			done &&
			test_cmp expect.all actual.all
		'
	done

	test_expect_success "cat-file TYPE OID ($repo)" '
		>expect.all && >actual.all &&
		git -C $repo cat-file --batch-check="%(objectname) %(objecttype)" \
			<$repo.sample >pairs &&
		while read oid type
		do
			(cd $repo && git cat-file $type $oid) >>expect.all &&
			(cd $repo && gitpack cat-file $type $oid) >>actual.all ||
			return 1
		done <pairs &&
		test_cmp_bin expect.all actual.all
	'

	test_expect_success "cat-file --batch-check, every object and missing ones ($repo)" '
		cp $repo.all in &&
		printf "%0$(test_oid_hexsz $algo)d\n" 0 >>in &&
		printf "%0$(test_oid_hexsz $algo)d\n" 1 >>in &&
		echo deadbeef >>in &&
		compare_cat_file $repo in --batch-check
	'

	test_expect_success "cat-file --batch, every object and missing ones ($repo)" '
		compare_cat_file $repo in --batch
	'

	test_expect_success "cat-file --batch-check=FORMAT with %(rest) ($repo)" '
		sed "s/\$/ some rest  text/" $repo.all >in &&
		printf "%0$(test_oid_hexsz $algo)d trailing words\n" 0 >>in &&
		compare_cat_file $repo in --batch-check="$batch_format"
	'

	test_expect_success "cat-file --batch=FORMAT ($repo)" '
		compare_cat_file $repo $repo.sample --batch="%(objecttype) %(objectname) %(objectsize)"
	'

	test_expect_success "cat-file --batch-all-objects --batch-check ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --batch-check
	'

	test_expect_success "cat-file --batch-all-objects --batch-check=FORMAT ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects \
			--batch-check="%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
	'

	test_expect_success "cat-file --batch-all-objects --batch ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --batch
	'

	test_expect_success "cat-file --batch-all-objects --unordered, as a set ($repo)" '
		compare_cat_file $repo /dev/null --batch-all-objects --unordered \
			--batch-check="%(objectname) %(objecttype) %(objectsize)" ||
		{
			sort expect >expect.sorted &&
			sort actual >actual.sorted &&
			test_cmp expect.sorted actual.sorted &&
			test_cmp expect.code actual.code
		}
	'

	test_expect_success "cat-file on a missing object ($repo)" '
		missing=$(printf "%0$(test_oid_hexsz $algo)d" 1) &&
		(
			cd $repo &&
			test_expect_code 1 gitpack cat-file -e $missing >../out 2>../err &&
			test_must_be_empty ../out &&
			test_must_be_empty ../err &&
			test_must_fail gitpack cat-file -t $missing &&
			test_must_fail gitpack cat-file -s $missing &&
			test_must_fail gitpack cat-file -p $missing &&
			test_must_fail gitpack cat-file blob $missing
		)
	'

	test_expect_success "cat-file with ref names and abbreviated ids ($repo)" '
		short=$(head -n 1 $repo.all | cut -c1-12) &&
		>expect.all && >actual.all &&
		for arg in "-t HEAD" "-p HEAD" "-s main" "-t v1" "-p v1" "-p outer-tag" \
			"-t refs/heads/side" "-t tags/blob-tag" "commit v1" "-e HEAD" \
			"-t $short" "-p $short"
		do
			(cd $repo && git cat-file $arg) >>expect.all 2>&1 &&
			(cd $repo && gitpack cat-file $arg) >>actual.all 2>&1 ||
			return 1
		done &&
		test_cmp_bin expect.all actual.all
	'

	test_expect_success "cat-file --batch-check with ref names and abbreviated ids ($repo)" '
		short=$(head -n 1 $repo.all | cut -c1-12) &&
		test_write_lines HEAD main v1 blob-tag refs/tags/tree-tag nope $short >in &&
		compare_cat_file $repo in --batch-check
	'

	test_expect_success "cat-file with REV:path, REV~N, REV^{type} ($repo)" '
		>expect.all && >actual.all &&
		for arg in "-p HEAD:doc/readme" "-t HEAD^{tree}" "-p HEAD~2" \
			"tree HEAD" "-p HEAD:src" "-s v1^{commit}" "-p main~1^{tree}"
		do
			(cd $repo && git cat-file $arg) >>expect.all 2>&1 &&
			(cd $repo && gitpack cat-file $arg) >>actual.all 2>&1 ||
			return 1
		done &&
		test_cmp_bin expect.all actual.all
	'

	test_expect_success "cat-file --batch-check with REV:path and friends ($repo)" '
		test_write_lines HEAD:doc/readme HEAD:nope "HEAD^{tree}" HEAD~3 >in &&
		compare_cat_file $repo in --batch-check
	'
done


test_expect_success "cat-file -p on trees with unusual names and modes ($algo)" '
	git init -q --object-format=$algo odd-$algo &&
	(
		cd odd-$algo &&
		blob=$(echo x | git hash-object -w --stdin) &&
		commit=$(git commit-tree -m x $(git mktree </dev/null)) &&
		{
			for c in 001 007 010 011 012 013 014 015 033 037 042 134 177 200 377
			do
				printf "100644 blob %s\t\"n%s\"\n" $blob "\\$c" || exit 1
			done &&
			printf "100755 blob %s\texec\n" $blob &&
			printf "120000 blob %s\tlink\n" $blob &&
			printf "160000 commit %s\tsub\n" $commit &&
			printf "040000 tree %s\tdir\n" $(git mktree </dev/null) &&
			printf "100644 blob %s\tsp ace\n" $blob &&
			printf "100644 blob %s\t\"\\303\\274ni\"\n" $blob
		} | git mktree >../odd-$algo.tree &&
		# modes git would not write itself, shown canonicalised
		{
			for mode in 100664 100600 100744 040000 755 1 170000 120777
			do
				printf "$mode m$mode\0" &&
				hex_to_bytes $blob || exit 1
			done
		} | git hash-object -t tree -w --literally --stdin >../modes-$algo.tree
	) &&
	for tree in $(cat odd-$algo.tree modes-$algo.tree)
	do
		compare_cat_file odd-$algo /dev/null -p $tree &&
		compare_cat_file odd-$algo /dev/null tree $tree || return 1
	done &&
	compare_cat_file odd-$algo /dev/null -p $(cat odd-$algo.tree) &&
	grep "n\\\\001" actual &&
	grep "^160000 commit .*	sub\$" actual &&
	git -C odd-$algo config core.quotepath false &&
	compare_cat_file odd-$algo /dev/null -p $(cat odd-$algo.tree) &&
	git -C odd-$algo config --unset core.quotepath
'

test_expect_success "cat-file -p on malformed trees prints nothing and fails ($algo)" '
	blob=$(echo x | git -C odd-$algo hash-object -w --stdin) &&
	for body in "10x644 a" "100644 " "100644" "nohash" "trunc"
	do
		{
			case "$body" in
			trunc) printf "100644 a\0"; hex_to_bytes $blob; printf "100644 b\0abc" ;;
			nohash) printf "100644 a\0"; hex_to_bytes $blob; printf "100644 b\0" ;;
			*) printf "$body\0"; hex_to_bytes $blob ;;
			esac
		} | git -C odd-$algo hash-object -t tree -w --literally --stdin >tree &&
		compare_cat_file odd-$algo /dev/null -p $(cat tree) &&
		test_must_be_empty actual &&
		test "$(cat actual.code)" = 128 || return 1
	done
'

# git prints such entries; gitpack's tree parser refuses them (fsck
# calls them "fullPathname", an error).
test_expect_success GITPACK_IS_GITPACK "tree entries with a slash are refused ($algo)" '
	blob=$(echo x | git -C odd-$algo hash-object -w --stdin) &&
	tree=$( { printf "100644 a/b\0"; hex_to_bytes $blob; } |
		git -C odd-$algo hash-object -t tree -w --literally --stdin) &&
	test_expect_code 128 gitpack -C odd-$algo cat-file -p $tree >out 2>err &&
	test_must_be_empty out &&
	grep "tree $tree: tree entry 0 at offset 0: name contains ./." err
'

test_expect_success "the empty tree exists without being stored ($algo)" '
	git init -q --object-format=$algo noempty-$algo &&
	test_commit -C noempty-$algo one &&
	empty=$(git -C noempty-$algo hash-object -t tree /dev/null) &&
	! test -f noempty-$algo/.git/objects/$(echo $empty | cut -c1-2)/$(echo $empty | cut -c3-) &&
	compare_cat_file noempty-$algo /dev/null -t $empty &&
	compare_cat_file noempty-$algo /dev/null -s $empty &&
	compare_cat_file noempty-$algo /dev/null -e $empty &&
	compare_cat_file noempty-$algo /dev/null -p $empty &&
	compare_cat_file noempty-$algo /dev/null tree $empty &&
	compare_cat_file noempty-$algo /dev/null commit $empty &&
	echo $empty >in &&
	compare_cat_file noempty-$algo in --batch-check="$batch_format" &&
	compare_cat_file noempty-$algo in --batch &&
	compare_cat_file noempty-$algo /dev/null --batch-all-objects --batch-check &&
	# a stored copy does not change what is shown
	compare_cat_file packed-$algo in --batch-check="$batch_format" &&
	compare_cat_file loose-$algo in --batch-check="$batch_format" &&
	compare_cat_file loose-$algo /dev/null --batch-all-objects --batch-check="$batch_format"
'

test_expect_success "cat-file TYPE OID follows tags, and commits to trees ($algo)" '
	(
		cd packed-$algo &&
		for spec in "commit v1" "tree v1" "tree main" "commit outer-tag" \
			"tree outer-tag" "blob blob-tag" "tree tree-tag" "tag v1" \
			"blob main" "commit tree-tag" "tag main" "tree empty-tree"
		do
			set -- $spec &&
			echo "$1 $(git rev-parse $2)" || exit 1
		done
	) >pairs &&
	while read type oid
	do
		compare_cat_file packed-$algo /dev/null $type $oid || return 1
	done <pairs
'

test_expect_success "cat-file batch input: whitespace, CR, case, empty lines ($algo)" '
	oid=$(head -n 1 packed-$algo.all) &&
	upper=$(echo $oid | tr a-f A-F) &&
	{
		printf "%s\n" $oid "$upper" "" " $oid" "$oid " &&
		printf "%s\t tab and space \n" $oid &&
		printf "%s\r\n" $oid &&
		printf "%s\r\r\n" $oid &&
		printf "%s rest\r\n" $oid &&
		printf "not-an-id and more\n" &&
		printf "%s\r" $oid
	} >in &&
	compare_cat_file packed-$algo in --batch-check &&
	compare_cat_file packed-$algo in --batch-check="[%(objectname)] [%(rest)]" &&
	compare_cat_file packed-$algo in --batch="%(rest)|%(objecttype)" &&
	compare_cat_file packed-$algo in --batch-check --buffer
'

test_expect_success "cat-file batch format edge cases ($algo)" '
	head -n 3 packed-$algo.all >in &&
	for format in "%%(objectname)" "%%%(objecttype)%%" "%" "100%" "%x%(objectsize)" \
		"%(rest)%(rest)" "" "no atoms at all" "%(objectsize:disk)%(objectsize)"
	do
		compare_cat_file packed-$algo in --batch-check="$format" &&
		compare_cat_file packed-$algo in --batch="$format" || return 1
	done &&
	for format in "%(objectname" "%(" "%(foo)" "%()" "%(objectsize:foo)" "%(objectname:short)"
	do
		compare_cat_file packed-$algo in --batch-check="$format" &&
		test_must_be_empty actual &&
		test "$(cat actual.code)" = 128 || return 1
	done
'

test_expect_success "cat-file usage errors ($algo)" '
	oid=$(head -n 1 packed-$algo.all) &&
	>expect.codes && >actual.codes &&
	for args in "-t" "-t $oid $oid" "$oid" "blob $oid $oid" "-e -t $oid" \
		"--batch $oid" "--batch --batch-check" "--batch-all-objects" \
		"--buffer -t $oid" "--unordered" "--batch-all-objects -t $oid" \
		"-p --batch" "--no-such-option"
	do
		(cd packed-$algo && git cat-file $args) </dev/null >/dev/null 2>&1
		echo "$args: $?" >>expect.codes &&
		(cd packed-$algo && gitpack cat-file $args) </dev/null >/dev/null 2>&1
		echo "$args: $?" >>actual.codes || return 1
	done &&
	test_cmp expect.codes actual.codes &&
	for args in "-t nope" "-p 1234" "blob not-hex" "bogus $oid"
	do
		compare_cat_file packed-$algo /dev/null $args || return 1
	done
'


test_expect_success "a corrupt loose object fails the command ($algo)" '
	git init -q --object-format=$algo corrupt-$algo &&
	test_commit -C corrupt-$algo one &&
	blob=$(git -C corrupt-$algo rev-parse HEAD:one.t) &&
	file=corrupt-$algo/.git/objects/$(echo $blob | cut -c1-2)/$(echo $blob | cut -c3-) &&
	chmod u+w $file &&
	printf garbage | dd of=$file bs=1 seek=2 conv=notrunc 2>/dev/null &&
	for opt in -t -s -p
	do
		compare_cat_file corrupt-$algo /dev/null $opt $blob || return 1
	done &&
	compare_cat_file corrupt-$algo /dev/null blob $blob &&
	compare_cat_file corrupt-$algo /dev/null -e $blob
'

# A loose object whose header does not inflate: git explains it ("unable
# to unpack <oid> header"), reports it missing and goes on; so does gitpack.
test_expect_success "batch mode: an unreadable loose header is missing, as in git ($algo)" '
	git -C corrupt-$algo rev-parse HEAD >in &&
	echo $blob >>in &&
	git -C corrupt-$algo rev-parse HEAD >>in &&
	compare_cat_file corrupt-$algo in --batch-check &&
	test_line_count = 3 actual &&
	grep "^$blob missing\$" actual &&
	grep "^error: unable to unpack $blob header\$" actual.err &&
	compare_cat_file corrupt-$algo /dev/null --batch-all-objects --batch-check &&
	grep "^$blob missing\$" actual
'


# --- git 2.55's modes and options ----------------------------------------

# compare_new REPO INPUT ARGS...: like compare_cat_file, against the newer
# git of GP_TEST_GIT_NEW, comparing the first line of standard error too
# (the usage text names the program, which is not compared).
compare_new () {
	gp_cn_repo_=$1
	gp_cn_in_=$2
	shift 2
	(cd "$gp_cn_repo_" && git_new cat-file "$@") <"$gp_cn_in_" >expect 2>expect.err
	echo $? >expect.code
	(cd "$gp_cn_repo_" && gitpack cat-file "$@") <"$gp_cn_in_" >actual 2>actual.err
	echo $? >actual.code
	head -n 1 expect.err | sed "s/^usage: git /usage: PROG /" >expect.err1 &&
	head -n 1 actual.err | sed "s/^usage: git /usage: PROG /" >actual.err1 &&
	compare_results &&
	test_cmp expect.err1 actual.err1
}

test_expect_success "setup: links, a submodule, a replacement, the index ($algo)" '
	git init -q --object-format=$algo new-$algo &&
	(
		cd new-$algo &&
		mkdir -p dir/sub &&
		printf "hello\n" >f &&
		printf "deep\n" >dir/sub/deep &&
		printf "one\n" >dir/one &&
		ln -s f link &&
		ln -s dir dirlink &&
		ln -s ../f dir/up &&
		ln -s ../../f dir/sub/upup &&
		ln -s ../../escape dir/out &&
		ln -s .. dir/outdir &&
		ln -s /etc/passwd abs &&
		ln -s nope dangling &&
		ln -s loop2 loop1 &&
		ln -s loop1 loop2 &&
		ln -s dir/sub/deep downlink &&
		ln -s dir/.. updown &&
		ln -s dir/../../morx upupdown &&
		printf "white\n" >"white space" &&
		git add . &&
		test_tick &&
		git commit -q -m base &&
		git tag -a -m "a tag" v1 &&
		zero=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
		sub=$(printf "%s" "$zero" | sed "s/0/d/g") &&
		printf "160000 commit %s\tgone\n160000 commit %s\there\n" $sub $(git rev-parse HEAD) |
			git mktree >../mods-$algo.tree &&
		printf "staged\n" >staged &&
		git add staged
	) &&
	# git 2.39 aborts in --batch-command on a replaced object: the
	# replacement lives in a copy
	cp -R new-$algo repl-$algo &&
	(
		cd repl-$algo &&
		git cat-file commit HEAD >orig &&
		{ cat orig && echo extra; } >fake &&
		git replace HEAD $(git hash-object -t commit -w fake) &&
		git rev-parse HEAD >../orig-$algo
	)
'

test_expect_success "--batch-command info, contents and flush ($algo)" '
	cat >cmds <<-\EOF &&
	info HEAD
	contents HEAD:f
	info HEAD:nope
	contents v1
	flush
	info HEAD:dir
	contents HEAD
	EOF
	sed /flush/d cmds >cmds.noflush &&
	compare_cat_file new-$algo cmds.noflush --batch-command &&
	compare_cat_file new-$algo cmds --batch-command --buffer &&
	compare_cat_file new-$algo cmds --batch-command="%(objecttype) %(rest)" --buffer
'

# git 2.39 aborts on "contents" with a format without %(objecttype)
test_expect_success GIT_NEW "--batch-command with a format, as git 2.55 ($algo)" '
	compare_new new-$algo cmds.noflush --batch-command="%(objectname)" &&
	compare_new new-$algo cmds --batch-command="%(objectsize)" --buffer
'

test_expect_success "--batch-command --buffer without flush: queued until the end ($algo)" '
	echo "info HEAD" >cmds &&
	gitpack -C new-$algo cat-file --batch-command --buffer <cmds >actual &&
	git -C new-$algo cat-file --batch-command --buffer <cmds >expect &&
	test_cmp expect actual &&
	GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT=1 gitpack -C new-$algo cat-file \
		--batch-command --buffer <cmds >actual &&
	test_must_be_empty actual
'

test_expect_success "--batch-command errors, as git ($algo)" '
	for line in "" " info HEAD" "unknown HEAD" "info" "flush" "infox HEAD" \
		"contents" "flush now"
	do
		printf "%s\n" "$line" >cmds &&
		compare_cat_file new-$algo cmds --batch-command || return 1
	done &&
	echo "flush now" >cmds &&
	compare_cat_file new-$algo cmds --batch-command --buffer
'

test_expect_success GITPACK_IS_GITPACK "--batch-command messages ($algo)" '
	echo >cmds &&
	test_expect_code 128 gitpack -C new-$algo cat-file --batch-command <cmds 2>err &&
	echo "fatal: empty command in input" >expect &&
	test_cmp expect err &&
	echo " info x" >cmds &&
	test_expect_code 128 gitpack -C new-$algo cat-file --batch-command <cmds 2>err &&
	echo "fatal: whitespace before command: '"'"' info x'"'"'" >expect &&
	test_cmp expect err &&
	echo "info" >cmds &&
	test_expect_code 128 gitpack -C new-$algo cat-file --batch-command <cmds 2>err &&
	echo "fatal: info requires arguments" >expect &&
	test_cmp expect err &&
	echo "flush" >cmds &&
	test_expect_code 128 gitpack -C new-$algo cat-file --batch-command <cmds 2>err &&
	echo "fatal: flush is only for --buffer mode" >expect &&
	test_cmp expect err
'

test_expect_success "-z ($algo)" '
	printf "HEAD\0HEAD:f\0nope\0HEAD:white space\0" >in.z &&
	compare_cat_file new-$algo in.z --batch-check -z &&
	compare_cat_file new-$algo in.z --batch -z &&
	printf "info HEAD\0contents HEAD:f\0info nope\0" >cmds.z &&
	compare_cat_file new-$algo cmds.z --batch-command --buffer -z
'

# -Z (NUL-terminated output too) came after git 2.39
test_expect_success "-Z ($algo)" '
	gitpack -C new-$algo cat-file --batch -Z <in.z >actual &&
	{
		printf "%s commit %s\0" $(git -C new-$algo rev-parse HEAD) \
			$(git -C new-$algo cat-file -s HEAD) &&
		git -C new-$algo cat-file commit HEAD &&
		printf "\0%s blob 6\0hello\n\0nope missing\0" $(git -C new-$algo rev-parse HEAD:f) &&
		printf "%s blob 6\0white\n\0" $(git -C new-$algo rev-parse "HEAD:white space")
	} >expect &&
	test_cmp_bin expect actual
'

test_expect_success GIT_NEW "-Z, as git 2.55 ($algo)" '
	compare_new new-$algo in.z --batch-check -Z &&
	compare_new new-$algo in.z --batch -Z &&
	compare_new new-$algo cmds.z --batch-command -Z
'

test_expect_success "--follow-symlinks ($algo)" '
	cat >in <<-\EOF &&
	HEAD:f
	HEAD:link
	HEAD:dirlink
	HEAD:dirlink/one
	HEAD:dirlink/sub/deep
	HEAD:dir/up
	HEAD:dir/sub/upup
	HEAD:dir/out
	HEAD:dir/outdir
	HEAD:dir/outdir/f
	HEAD:abs
	HEAD:dangling
	HEAD:loop1
	HEAD:downlink
	HEAD:downlink/x
	HEAD:link/x
	HEAD:f/x
	HEAD:updown
	HEAD:upupdown
	HEAD:nope
	HEAD:dirlink/nope
	HEAD
	EOF
	compare_cat_file new-$algo in --batch-check --follow-symlinks &&
	compare_cat_file new-$algo in --batch --follow-symlinks &&
	compare_cat_file new-$algo in --batch-check
'

test_expect_success GIT_NEW "--follow-symlinks -Z, as git 2.55 ($algo)" '
	tr "\n" "\0" <in >in.z &&
	compare_new new-$algo in.z --batch-check --follow-symlinks -Z
'

test_expect_success "replace refs: honoured for names, not for --batch-all-objects ($algo)" '
	orig=$(cat orig-$algo) &&
	echo $orig >in &&
	compare_cat_file repl-$algo in --batch &&
	compare_cat_file repl-$algo in --batch-check &&
	for opt in -t -s -p commit
	do
		compare_cat_file repl-$algo /dev/null $opt $orig || return 1
	done &&
	compare_cat_file repl-$algo /dev/null --textconv --path=f $orig &&
	compare_cat_file repl-$algo /dev/null --batch-all-objects --batch-check &&
	GIT_NO_REPLACE_OBJECTS=1 gitpack -C repl-$algo cat-file -s $orig >actual &&
	git -C repl-$algo --no-replace-objects cat-file -s $orig >expect &&
	test_cmp expect actual
'

test_expect_success "attributes from a tree: attr.tree, GIT_ATTR_SOURCE ($algo)" '
	git init -q --object-format=$algo battr-$algo &&
	(
		cd battr-$algo &&
		printf "a\nb\n" >crlf.txt &&
		echo "crlf.txt eol=crlf" >.gitattributes &&
		git add . &&
		git commit -q -m attrs
	) &&
	git clone -q --bare battr-$algo battr-$algo.git &&
	# a bare repository has no .gitattributes unless attr.tree says
	gitpack -C battr-$algo.git cat-file --filters HEAD:crlf.txt >actual &&
	printf "a\nb\n" >expect &&
	test_cmp expect actual &&
	git -C battr-$algo.git config attr.tree HEAD &&
	gitpack -C battr-$algo.git cat-file --filters HEAD:crlf.txt >actual &&
	printf "a\r\nb\r\n" >expect &&
	test_cmp expect actual &&
	git -C battr-$algo.git config --unset attr.tree &&
	git -C battr-$algo rm -q --cached .gitattributes &&
	rm battr-$algo/.gitattributes &&
	gitpack -C battr-$algo cat-file --filters HEAD:crlf.txt >actual &&
	printf "a\nb\n" >expect &&
	test_cmp expect actual &&
	GIT_ATTR_SOURCE=HEAD gitpack -C battr-$algo cat-file --filters HEAD:crlf.txt >actual &&
	printf "a\r\nb\r\n" >expect &&
	test_cmp expect actual
'

test_expect_success GIT_NEW "attributes from a tree, as git 2.55 ($algo)" '
	compare_new battr-$algo.git /dev/null --filters HEAD:crlf.txt &&
	git -C battr-$algo.git config diff.rot.textconv "tr a-z n-za-m <" &&
	git -C battr-$algo.git config attr.tree HEAD &&
	compare_new battr-$algo.git /dev/null --textconv HEAD:crlf.txt
'

test_expect_success "remote-object-info over file:// ($algo)" '
	git init -q --object-format=$algo srv-$algo &&
	test_commit -C srv-$algo one &&
	git -C srv-$algo config transfer.advertiseobjectinfo true &&
	git init -q --object-format=$algo cli-$algo &&
	blob=$(git -C srv-$algo rev-parse HEAD:one.t) &&
	tree=$(git -C srv-$algo rev-parse HEAD^{tree}) &&
	commit=$(git -C srv-$algo rev-parse HEAD) &&
	absent=$(echo absent | git -C srv-$algo hash-object --stdin) &&
	srv=$(pwd)/srv-$algo &&
	cat >cmds <<-EOF &&
	remote-object-info "file://$srv" $blob $tree
	remote-object-info file://$srv $commit $absent
	info $blob
	EOF
	gitpack -C cli-$algo cat-file --batch-command <cmds >actual &&
	{
		echo "$blob $(git -C srv-$algo cat-file -s $blob)" &&
		echo "$tree $(git -C srv-$algo cat-file -s $tree)" &&
		echo "$commit $(git -C srv-$algo cat-file -s $commit)" &&
		echo "$absent missing" &&
		echo "$blob missing"
	} >expect &&
	test_cmp expect actual &&
	gitpack -C cli-$algo cat-file --batch-command="%(objectsize):%(objecttype):%(objectname)" \
		--buffer <cmds >actual &&
	{
		echo "$(git -C srv-$algo cat-file -s $blob)::$blob" &&
		echo "$(git -C srv-$algo cat-file -s $tree)::$tree" &&
		echo "$(git -C srv-$algo cat-file -s $commit)::$commit" &&
		echo "$absent missing" &&
		echo "$blob missing"
	} >expect &&
	test_cmp expect actual &&
	git -C cli-$algo remote add origin "$srv" &&
	echo "remote-object-info origin $blob" >cmds &&
	gitpack -C cli-$algo cat-file --batch-command <cmds >actual &&
	echo "$blob $(git -C srv-$algo cat-file -s $blob)" >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "remote-object-info errors ($algo)" '
	srv=$(pwd)/srv-$algo &&
	echo "remote-object-info file://$srv $(echo $blob | cut -c1-7)" >cmds &&
	test_expect_code 128 gitpack -C cli-$algo cat-file --batch-command <cmds 2>err &&
	grep "does not support short oids" err &&
	echo "remote-object-info file://$srv" >cmds &&
	test_expect_code 128 gitpack -C cli-$algo cat-file --batch-command <cmds 2>err &&
	grep "remote-object-info requires objects" err &&
	echo "remote-object-info ssh://host/repo $blob" >cmds &&
	test_expect_code 128 gitpack -C cli-$algo cat-file --batch-command <cmds 2>err &&
	grep "only git:// and file:// are supported" err
'

# git 2.39 says "missing" for a submodule commit it does not have
test_expect_success "a submodule entry ($algo)" '
	tree=$(cat mods-$algo.tree) &&
	printf "%s\n" $tree:gone $tree:here >in &&
	gitpack -C new-$algo cat-file --batch-check <in >actual &&
	printf "%s submodule\n" $(git -C new-$algo rev-parse $tree:gone) >expect &&
	git -C new-$algo cat-file --batch-check <in | sed 1d >>expect &&
	test_cmp expect actual
'

test_expect_success GIT_NEW "a submodule entry, as git 2.55 ($algo)" '
	compare_new new-$algo in --batch-check
'

test_expect_success "names in the index ($algo)" '
	cat >in <<-\EOF &&
	:f
	:staged
	:white space
	:0:staged
	:1:staged
	:nope
	:dir/one
	EOF
	compare_cat_file new-$algo in --batch-check &&
	compare_cat_file new-$algo /dev/null -p :staged &&
	compare_cat_file new-$algo /dev/null -t :nope &&
	compare_cat_file new-$algo /dev/null -p :2:staged
'

test_expect_success "--textconv and --filters without attributes show the blob ($algo)" '
	for opt in --textconv --filters
	do
		compare_cat_file new-$algo /dev/null $opt HEAD:f &&
		compare_cat_file new-$algo /dev/null $opt --path=f HEAD &&
		compare_cat_file new-$algo /dev/null $opt HEAD &&
		compare_cat_file new-$algo /dev/null $opt HEAD:nope || return 1
	done
'

test_expect_success "--textconv runs the diff driver of the path's attributes ($algo)" '
	test_when_finished "rm -f new-$algo/.gitattributes new-$algo/dir/.gitattributes" &&
	printf "#!/bin/sh\ntr a-z A-Z <\"\$1\"\n" >new-$algo/upper &&
	chmod +x new-$algo/upper &&
	git -C new-$algo config diff.up.textconv ./upper &&
	echo "f diff=up" >new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:f &&
	compare_cat_file new-$algo /dev/null --textconv :f &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:link &&
	compare_cat_file new-$algo /dev/null --textconv --path=f HEAD:dir/one &&
	echo "* diff=up" >new-$algo/dir/.gitattributes &&
	echo "[attr]loud diff=up" >new-$algo/.gitattributes &&
	echo "sub/* -diff" >>new-$algo/dir/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:dir/one &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:dir/sub/deep &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:f &&
	echo "f loud" >>new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:f &&
	echo "f binary" >>new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:f &&
	git -C new-$algo config diff.up.textconv false &&
	echo "f diff=up" >>new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:f
'

test_expect_success "--textconv: attribute patterns with ** and sets ($algo)" '
	test_when_finished "rm -f new-$algo/.gitattributes" &&
	git -C new-$algo config diff.up.textconv ./upper &&
	for pattern in "**/deep" "dir/**/deep" "dir/**" "**/sub/**" "/dir/**/sub/deep" \
		"dir**deep" "d*/deep" "dir/*/deep" "**/dee[a-p]" "dir/s[!x]b/*" "*/deep"
	do
		echo "$pattern diff=up" >new-$algo/.gitattributes &&
		compare_cat_file new-$algo /dev/null --textconv HEAD:dir/sub/deep || return 1
	done
'

test_expect_success "--filters converts as checkout does ($algo)" '
	test_when_finished "rm -f new-$algo/.gitattributes" &&
	test_when_finished "git -C new-$algo config --unset core.autocrlf; git -C new-$algo config --unset core.eol; true" &&
	(
		cd new-$algo &&
		printf "line one\nline two\r\n\$Id\$ and \$Id: old \$\n" >crlf.txt &&
		printf "bin\000ary\n" >bin.dat &&
		printf "#!/bin/sh\nsed s/line/LINE/\n" >smudger &&
		chmod +x smudger &&
		git add crlf.txt bin.dat &&
		git commit -q -m conversions &&
		git config filter.up.smudge "./smudger %f" &&
		git config filter.broken.smudge false
	) &&
	for attrs in "" "crlf.txt text" "crlf.txt -text" "crlf.txt text=auto" \
		"crlf.txt eol=crlf" "crlf.txt eol=lf" "crlf.txt text eol=crlf" \
		"crlf.txt crlf" "crlf.txt -crlf" "crlf.txt crlf=input" \
		"crlf.txt ident" "crlf.txt ident eol=crlf" "* text=auto eol=crlf" \
		"crlf.txt filter=up" "crlf.txt filter=up eol=crlf" "crlf.txt binary" \
		"crlf.txt filter=nosuchdriver" "f eol=crlf"
	do
		echo "$attrs" >new-$algo/.gitattributes &&
		for path in crlf.txt bin.dat f
		do
			compare_cat_file new-$algo /dev/null --filters HEAD:$path || return 1
		done || return 1
	done &&
	>new-$algo/.gitattributes &&
	for config in "core.autocrlf true" "core.autocrlf input" "core.eol crlf"
	do
		git -C new-$algo config $config &&
		compare_cat_file new-$algo /dev/null --filters HEAD:crlf.txt &&
		compare_cat_file new-$algo /dev/null --filters HEAD:bin.dat &&
		echo "crlf.txt text" >new-$algo/.gitattributes &&
		compare_cat_file new-$algo /dev/null --filters HEAD:crlf.txt &&
		>new-$algo/.gitattributes &&
		git -C new-$algo config --unset ${config% *} || return 1
	done &&
	echo "crlf.txt filter=broken" >new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --filters HEAD:crlf.txt &&
	git -C new-$algo config filter.broken.required true &&
	compare_cat_file new-$algo /dev/null --filters HEAD:crlf.txt
'

test_expect_success "--textconv sees the checked-out form; batch modes ($algo)" '
	test_when_finished "rm -f new-$algo/.gitattributes" &&
	git -C new-$algo config diff.rot.textconv "tr A-Za-z N-ZA-Mn-za-m <" &&
	echo "*.txt eol=crlf diff=rot" >new-$algo/.gitattributes &&
	compare_cat_file new-$algo /dev/null --textconv HEAD:crlf.txt &&
	compare_cat_file new-$algo /dev/null --textconv --path=crlf.txt HEAD:f &&
	oid=$(git -C new-$algo rev-parse HEAD:crlf.txt) &&
	printf "%s crlf.txt\n%s f\nHEAD crlf.txt\nnope x\n" $oid $oid >in &&
	compare_cat_file new-$algo in --textconv --batch &&
	compare_cat_file new-$algo in --filters --batch &&
	compare_cat_file new-$algo in --filters --batch-check &&
	compare_cat_file new-$algo in --textconv --batch="%(objectname) %(rest)" &&
	echo $oid >in &&
	compare_cat_file new-$algo in --filters --batch &&
	compare_cat_file new-$algo in --filters --batch-check
'

test_expect_success "--filter in batch modes, as git rev-list --filter ($algo)" '
	git -C new-$algo rev-list --objects --no-object-names --all >all &&
	sort all >all.sorted &&
	for filter in blob:none blob:limit=5 blob:limit=1k object:type=blob \
		object:type=tree object:type=commit object:type=tag
	do
		git -C new-$algo rev-list --objects --no-object-names --all \
			--filter=$filter --filter-provided-objects >kept &&
		sort kept >expect &&
		gitpack -C new-$algo cat-file --batch-check="%(objectname)" --batch-all-objects \
			--filter=$filter >actual.all &&
		comm -12 all.sorted actual.all >actual &&
		test_cmp expect actual &&
		gitpack -C new-$algo cat-file --batch-check="%(objectname)" --filter=$filter \
			<all >out &&
		sed -n "s/ excluded\$//p" out | sort >excluded &&
		comm -23 all.sorted expect >expect.excluded &&
		test_cmp expect.excluded excluded || return 1
	done &&
	gitpack -C new-$algo cat-file --batch-check --batch-all-objects --filter=blob:none \
		--no-filter >actual &&
	gitpack -C new-$algo cat-file --batch-check --batch-all-objects >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "usage: git 2.55's messages and exit codes ($algo)" '
	test_expect_code 129 gitpack -C new-$algo cat-file -e -p HEAD 2>err &&
	echo "error: options '"'"'-p'"'"' and '"'"'-e'"'"' cannot be used together" >expect &&
	test_cmp expect err &&
	test_expect_code 129 gitpack -C new-$algo cat-file --buffer 2>err &&
	grep "^fatal: '"'"'--buffer'"'"' requires a batch mode\$" err &&
	test_expect_code 129 gitpack -C new-$algo cat-file --batch -t 2>err &&
	grep "^fatal: '"'"'-t'"'"' is incompatible with batch mode\$" err &&
	test_expect_code 129 gitpack -C new-$algo cat-file --batch HEAD 2>err &&
	grep "^fatal: batch modes take no arguments\$" err &&
	test_expect_code 129 gitpack -C new-$algo cat-file --filter=blob:none 2>err &&
	echo "usage: objects filter only supported in batch mode" >expect &&
	test_cmp expect err &&
	test_expect_code 129 gitpack -C new-$algo cat-file --batch --filter=tree:1 2>err &&
	echo "usage: objects filter not supported: '"'"'tree'"'"'" >expect &&
	test_cmp expect err &&
	test_expect_code 128 gitpack -C new-$algo cat-file --batch --filter=nope 2>err &&
	echo "fatal: invalid filter-spec '"'"'nope'"'"'" >expect &&
	test_cmp expect err &&
	echo HEAD:f | gitpack -C new-$algo cat-file --batch-check="%(objectmode) %(objectname)" >actual &&
	echo "100644 $(git -C new-$algo rev-parse HEAD:f)" >expect &&
	test_cmp expect actual
'

while read args
do
	test_expect_success GIT_NEW "as git 2.55: cat-file $args ($algo)" '
		compare_new new-$algo /dev/null $args
	'
done <<\EOF
-e -p
-s --textconv
--textconv --filters
--batch-all-objects -e
--path=foo --batch
--textconv
-e
-e --batch
-e --follow-symlinks
-e --path=foo HEAD:f
-e one two three
--textconv one two three
--textconv --buffer
--buffer
--no-buffer
--follow-symlinks commit HEAD
--batch-all-objects
-z
-Z commit HEAD
--unordered
--buffer --follow-symlinks
-z --buffer
--batch -t HEAD
--batch HEAD
--batch --batch-check
commit
a b c
--filter=blob:none
--filter=unknown
--batch --filter=tree:1
--batch --filter=sparse:oid=1234
--batch --filter=sparse:path=x
--batch --filter=blob:none --filter=blob:none
--textconv HEAD
--textconv --path=f HEAD
--textconv --path=f HEAD extra
--use-mailmap HEAD
--allow-unknown-type -t HEAD
-t HEAD:nope
-t nope:f
EOF

while read args
do
	test_expect_success GIT_NEW "as git 2.55, batch: cat-file $args ($algo)" '
		cat >in <<-\EOF &&
		HEAD:f
		HEAD:dir
		HEAD:
		HEAD
		HEAD:dir/up
		nope
		EOF
		compare_new new-$algo in $args
	'
done <<\EOF
--batch-check=%(objectmode)|%(objectname)|%(objecttype)
--batch-check=%(objectname
--batch-check=%(bogus)
--batch-check --follow-symlinks
--batch-check --filter=object:type=tree
--batch --filter=blob:limit=3
EOF


test_expect_success "setup: a mailmap ($algo)" '
	git init -q --object-format=$algo mm-$algo &&
	(
		cd mm-$algo &&
		echo one >one &&
		git add one &&
		test_tick &&
		GIT_AUTHOR_NAME="Old Name" GIT_AUTHOR_EMAIL="old@example.com" \
			git commit -q -m one &&
		echo two >two &&
		git add two &&
		test_tick &&
		GIT_COMMITTER_NAME="Other" GIT_COMMITTER_EMAIL="other@example.com" \
			git commit -q -m two &&
		git tag -a -m "a tag" v1 &&
		cat >.mailmap <<-\EOF
		# a comment
		New Name <new@example.com> <old@example.com>
		Just A Name <other@example.com>
		<committer@example.com> <c@x>
		Pair Name <pair@example.com> C O Mitter <committer@example.com>
		EOF
		git add .mailmap &&
		test_tick &&
		GIT_AUTHOR_EMAIL="old@example.com" git commit -q -m mailmap
	)
'

test_expect_success "--use-mailmap -p and <type>, as git ($algo)" '
	# git 2.39 does not apply "Name <address>" lines (HEAD~1): see below
	for name in HEAD HEAD~2 v1
	do
		compare_cat_file mm-$algo /dev/null --use-mailmap -p $name &&
		compare_cat_file mm-$algo /dev/null -p $name || return 1
	done &&
	compare_cat_file mm-$algo /dev/null --use-mailmap commit HEAD &&
	compare_cat_file mm-$algo /dev/null --use-mailmap tag v1 &&
	gitpack -C mm-$algo cat-file --use-mailmap -p HEAD~2 >out &&
	grep "^author New Name <new@example.com> " out &&
	gitpack -C mm-$algo cat-file --use-mailmap -p HEAD~1 >out &&
	grep "^committer Just A Name <other@example.com> " out &&
	gitpack -C mm-$algo cat-file --use-mailmap -p HEAD >out &&
	grep "^committer Pair Name <pair@example.com> " out
'

test_expect_success "--use-mailmap -s and batch modes: the mapped size ($algo)" '
	gitpack -C mm-$algo cat-file --use-mailmap -p HEAD >mapped &&
	gitpack -C mm-$algo cat-file --use-mailmap -s HEAD >actual &&
	wc -c <mapped | tr -d " " >expect &&
	test_cmp expect actual &&
	echo HEAD >in &&
	gitpack -C mm-$algo cat-file --use-mailmap --batch <in >actual &&
	{
		echo "$(git -C mm-$algo rev-parse HEAD) commit $(cat expect)" &&
		cat mapped &&
		echo
	} >expect.batch &&
	test_cmp expect.batch actual &&
	printf "info HEAD\nmailmap true\ninfo HEAD\nmailmap false\ninfo HEAD\n" >cmds &&
	gitpack -C mm-$algo cat-file --batch-command --buffer <cmds >actual &&
	oid=$(git -C mm-$algo rev-parse HEAD) &&
	{
		echo "$oid commit $(git -C mm-$algo cat-file -s HEAD)" &&
		echo "$oid commit $(cat expect)" &&
		echo "$oid commit $(git -C mm-$algo cat-file -s HEAD)"
	} >expect.cmds &&
	test_cmp expect.cmds actual
'

test_expect_success GIT_NEW "--use-mailmap, as git 2.55 ($algo)" '
	compare_new mm-$algo /dev/null --use-mailmap -s HEAD &&
	compare_new mm-$algo /dev/null --mailmap -p HEAD~1 &&
	compare_new mm-$algo /dev/null --use-mailmap commit HEAD~1 &&
	compare_new mm-$algo /dev/null --use-mailmap -s v1 &&
	printf "HEAD\nHEAD~1\nHEAD~2\nv1\nHEAD:one\n" >in &&
	compare_new mm-$algo in --use-mailmap --batch &&
	compare_new mm-$algo in --use-mailmap --batch-check &&
	compare_new mm-$algo cmds --batch-command --buffer &&
	compare_new mm-$algo cmds --batch-command &&
	(cd mm-$algo && git config mailmap.file ../mm-file-$algo) &&
	# addresses match without regard to case (git 2.39 cat-file did not)
	echo "File Name <file@example.com> <AUTHOR@example.com>" >mm-file-$algo &&
	compare_new mm-$algo in --use-mailmap --batch &&
	git clone -q --bare mm-$algo mm-bare-$algo &&
	compare_new mm-bare-$algo in --use-mailmap --batch
'

done

test_done
