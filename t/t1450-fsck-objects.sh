#!/bin/sh

test_description='fsck object checks (fsck.c) against stock git

Each crafted object (commits, tags, trees, .gitmodules and .gitattributes
blobs) is packed by stock git and checked by "git index-pack
--fsck-objects" and by "test-tool fsck", which prints what index-pack
prints; stderr, stdout (the .gitmodules blobs left to the caller) and the
exit code must match. Also: severities set with --fsck-objects=<list>,
skip lists, what receive-pack and fetch-pack pass to index-pack from
receive.fsck.* / fetch.fsck.*, the links a connectivity check follows,
and git fsck'"'"'s own (not strict) verdicts.

A few rules changed after Git 2.39 (blanks before a date, largePathname,
the signature header of tags): those cases name the Git 2.55 verdict and
are compared with stock git only when it is new enough (GIT_FSCK_2_45).'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# Stock git knows largePathname (2.45 and later) and the date rules.
test_lazy_prereq GIT_FSCK_2_45 '
	git init -q --bare probe &&
	git -C probe pack-objects -q --stdout </dev/null >empty.pack &&
	git -C probe index-pack --fsck-objects=largePathname=warn -o e.idx empty.pack
'

# Stock git takes --fsck-objects=<list> (2.41 and later); before, only
# --strict=<list>, which also checks connectivity.
test_lazy_prereq FSCK_OBJECTS_LIST '
	git init -q --bare probe &&
	git -C probe pack-objects -q --stdout </dev/null >empty.pack &&
	git -C probe index-pack --fsck-objects=nulInCommit=warn -o e.idx empty.pack
'

# pack_objects ALGO PACK SPEC...: a pack of the objects (SPEC is
# TYPE:FILE), in the order given, written by stock git.
pack_objects () {
	gp_po_algo_=$1 gp_po_pack_=$2 &&
	shift 2 &&
	rm -rf src.git &&
	git init -q --bare --object-format=$gp_po_algo_ src.git &&
	for gp_po_spec_ in "$@"
	do
		git -C src.git hash-object --literally -w -t "${gp_po_spec_%%:*}" \
			"$PWD/${gp_po_spec_#*:}" || return 1
	done >objects.list &&
	git -C src.git pack-objects -q --stdout <objects.list >"$gp_po_pack_"
}

# check_like_git ALGO LIST SPEC...: stock git's index-pack
# --fsck-objects[=LIST] on a pack of the objects, and test-tool fsck on
# the objects, print the same thing and exit alike.
check_like_git () {
	gp_clg_algo_=$1 gp_clg_list_=$2 &&
	shift 2 &&
	pack_objects $gp_clg_algo_ objs.pack "$@" &&
	rm -rf dst.git objs.idx &&
	git init -q --bare --object-format=$gp_clg_algo_ dst.git &&
	gp_clg_opt_=--fsck-objects &&
	if test -n "$gp_clg_list_"
	then
		if test_have_prereq FSCK_OBJECTS_LIST
		then
			gp_clg_opt_="--fsck-objects=$gp_clg_list_"
		else
			# Connectivity is checked too: give it every object.
			gp_clg_opt_="--strict=$gp_clg_list_" &&
			{
				echo "$PWD/src.git/objects" &&
				echo "$PWD/repo-$gp_clg_algo_/.git/objects"
			} >dst.git/objects/info/alternates
		fi
	fi &&
	{
		git -C dst.git index-pack "$gp_clg_opt_" \
			-o "$PWD/objs.idx" "$PWD/objs.pack" >git.out 2>git.err
		echo $? >git.rc
	} &&
	# The first line git prints is the pack checksum.
	sed 1d git.out | sort >expect.out &&
	gp_clg_sha_= &&
	test $gp_clg_algo_ = sha1 || gp_clg_sha_=--sha256 &&
	{
		test-tool fsck $gp_clg_sha_ \
			${gp_clg_list_:+"--msg-types=$gp_clg_list_"} "$@" >gp.out 2>gp.err
		echo $? >gp.rc
	} &&
	sort gp.out >actual.out &&
	test_cmp git.err gp.err &&
	test_cmp git.rc gp.rc &&
	test_cmp expect.out actual.out
}

# check_expect ALGO LIST EXPECT SPEC...: test-tool fsck prints the
# "<severity> <msgId>" lines of EXPECT (what Git 2.55 prints; "-" for
# none, "parse" for a parse failure); compared with stock git too when
# it has the same rules.
check_expect () {
	gp_ce_algo_=$1 gp_ce_list_=$2 gp_ce_expect_=$3 &&
	shift 3 &&
	if test_have_prereq GIT_FSCK_2_45
	then
		check_like_git $gp_ce_algo_ "$gp_ce_list_" "$@"
	fi &&
	gp_ce_sha_= &&
	test $gp_ce_algo_ = sha1 || gp_ce_sha_=--sha256 &&
	{ test-tool fsck $gp_ce_sha_ ${gp_ce_list_:+--msg-types=$gp_ce_list_} "$@" 2>gp.err; true; } &&
	sed -n -e "s/^\(error\|warning\): object [0-9a-f]*: \([A-Za-z]*\): .*/\1 \2/p" \
		-e "s/^fatal: invalid .*/parse/p" gp.err >actual.ids &&
	if test "$gp_ce_expect_" = -
	then
		test_must_be_empty actual.ids
	else
		printf '%s\n' "$gp_ce_expect_" | tr , '\n' >expect.ids &&
		test_cmp expect.ids actual.ids
	fi
}

# sha_opt ALGO: test-tool's option for ALGO.
sha_opt () {
	test "$1" = sha1 || echo --sha256
}

# tree_entry MODE NAME HEX: one raw tree entry.
tree_entry () {
	printf '%s %s\0' "$1" "$2" &&
	hex_to_bytes "$3"
}

for algo in $test_hash_algos
do
	test_expect_success "setup ($algo)" '
		git init -q --object-format=$algo repo-$algo &&
		(
			cd repo-$algo &&
			echo content >file &&
			git add file &&
			test_tick &&
			git commit -q -m one
		)
	'

	# Commits and tags: content with @T@ (a tree), @C@ (a commit) and
	# @B@ (a blob) for ids; printf %b escapes. "|" separates the title,
	# the type, the content and the --fsck-objects list.
	while IFS='|' read -r title type content list
	do
		test_expect_success "$type: $title ($algo)" '
			T=$(git -C repo-$algo rev-parse HEAD^{tree}) &&
			C=$(git -C repo-$algo rev-parse HEAD) &&
			B=$(git -C repo-$algo rev-parse HEAD:file) &&
			printf "%b" "$content" |
			sed -e "s/@T@/$T/g" -e "s/@C@/$C/g" -e "s/@B@/$B/g" >obj &&
			check_like_git $algo "$list" $type:obj
		'
	done <<-\EOF
	good|commit|tree @T@\nparent @C@\nauthor A U Thor <a@example.com> 1234567890 +0000\ncommitter C O Mitter <c@example.com> 1234567890 -0130\n\nmessage\n|
	no body|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n|
	missing tree|commit|author A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad tree id|commit|tree zz\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	tree line alone|commit|tree @T@\n|
	bad parent|commit|tree @T@\nparent zz\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	missing author|commit|tree @T@\ncommitter C <c@d> 1 +0000\n\nm\n|
	two authors|commit|tree @T@\nauthor A <a@b> 1 +0000\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	two authors ignored|commit|tree @T@\nauthor A <a@b> 1 +0000\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|multipleAuthors=ignore
	missing committer|commit|tree @T@\nauthor A <a@b> 1 +0000\n\nm\n|
	header after author|commit|tree @T@\nauthor A <a@b> 1 +0000\nencoding x\ncommitter C <c@d> 1 +0000\n\nm\n|
	headers after committer|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\ncommitter C <c@d> 1 +0000\ngpgsig x\n y\n\nm\n|
	name before email missing|commit|tree @T@\nauthor <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad name|commit|tree @T@\nauthor A> <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	missing email|commit|tree @T@\nauthor A a@b 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	missing email ignored|commit|tree @T@\nauthor A a@b 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|missingEmail=ignore
	no space before email|commit|tree @T@\nauthor A<a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad email|commit|tree @T@\nauthor A <a<b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	no space before date|commit|tree @T@\nauthor A <a@b>1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	zero-padded date|commit|tree @T@\nauthor A <a@b> 01 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	date zero|commit|tree @T@\nauthor A <a@b> 0 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad date|commit|tree @T@\nauthor A <a@b> x +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	date over 2^64|commit|tree @T@\nauthor A <a@b> 18446744073709551617 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	date over 2^63|commit|tree @T@\nauthor A <a@b> 9223372036854775808 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	largest date|commit|tree @T@\nauthor A <a@b> 9223372036854775807 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad time zone|commit|tree @T@\nauthor A <a@b> 1 +000\ncommitter C <c@d> 1 +0000\n\nm\n|
	time zone with letters|commit|tree @T@\nauthor A <a@b> 1 +abcd\ncommitter C <c@d> 1 +0000\n\nm\n|
	bad committer|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +00000\n\nm\n|
	date warned, committer bad|commit|tree @T@\nauthor A <a@b> x +0000\ncommitter C <c@d> 1 -00\n\nm\n|badDate=warn
	NUL in header|commit|tree @T@\nauthor A <a\0@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n|
	NUL in body|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0x\n|
	NUL in body ignored|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0x\n|nulInCommit=ignore
	NUL in body warned|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0x\n|nulInCommit=warn
	unterminated header|commit|tree @T@\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000|
	empty|commit||
	good|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\n\nmessage\n|
	no tagger|tag|object @C@\ntype commit\ntag v1\n\nmessage\n|
	bad tag name|tag|object @C@\ntype commit\ntag guten tag\ntagger T <t@g> 1 +0000\n\nm\n|
	bad tag name as error|tag|object @C@\ntype commit\ntag a..b\ntagger T <t@g> 1 +0000\n\nm\n|badTagName=error
	tag name .lock|tag|object @C@\ntype commit\ntag x.lock\ntagger T <t@g> 1 +0000\n\nm\n|
	bad tagger|tag|object @C@\ntype commit\ntag v1\ntagger T t@g> 1 +0000\n\nm\n|
	bad tagger then extra header|tag|object @C@\ntype commit\ntag v1\ntagger T t@g> 1 +0000\njunk\n\nm\n|
	extra header|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\njunk\n\nm\n|
	extra header as error|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\njunk\n\nm\n|extraHeaderEntry=error
	unknown type|tag|object @C@\ntype bogus\ntag v1\ntagger T <t@g> 1 +0000\n\nm\n|
	no tag line|tag|object @C@\ntype commit\ntagger T <t@g> 1 +0000\n\nm\n|
	no type line|tag|object @C@\ntag v1\ntagger T <t@g> 1 +0000\n\nm\n|
	bad object id|tag|object zz\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\n\nm\n|
	type of another object|tag|object @B@\ntype tree\ntag v1\ntagger T <t@g> 1 +0000\n\nm\n|
	NUL in header|tag|object @C@\ntype commit\ntag v\0\ntagger T <t@g> 1 +0000\n\nm\n|
	unterminated|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000|
	EOF

	# Rules of Git after 2.39: the expected "<severity> <msgId>" lines.
	while IFS='|' read -r title type content list expect
	do
		test_expect_success "$type: $title ($algo)" '
			T=$(git -C repo-$algo rev-parse HEAD^{tree}) &&
			C=$(git -C repo-$algo rev-parse HEAD) &&
			printf "%b" "$content" |
			sed -e "s/@T@/$T/g" -e "s/@C@/$C/g" >obj &&
			check_expect $algo "$list" "$expect" $type:obj
		'
	done <<-\EOF
	blanks before the date|commit|tree @T@\nauthor A <a@b>  \t1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n||-
	signed date|commit|tree @T@\nauthor A <a@b> -1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n||error badDate
	plus date|commit|tree @T@\nauthor A <a@b> +1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n||error badDate
	zero after blanks|commit|tree @T@\nauthor A <a@b>   01 +0000\ncommitter C <c@d> 1 +0000\n\nm\n||error zeroPaddedDate
	signature header|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\ngpgsig x\n y\n\nm\n|extraHeaderEntry=error|-
	sha256 signature header|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\ngpgsig-sha256 x\n y\n\nm\n|extraHeaderEntry=error|-
	two signature headers|tag|object @C@\ntype commit\ntag v1\ntagger T <t@g> 1 +0000\ngpgsig x\ngpgsig y\n\nm\n|extraHeaderEntry=error|error extraHeaderEntry
	EOF

	# Trees: entries "MODE NAME OID" (OID: blob, tree or null; NAME
	# with printf %b escapes), "-" for an entry with a bad mode, "~"
	# for a truncated one, separated by ";".
	while IFS='|' read -r title entries list
	do
		test_expect_success "tree: $title ($algo)" '
			B=$(git -C repo-$algo rev-parse HEAD:file) &&
			T=$(git -C repo-$algo rev-parse HEAD^{tree}) &&
			Z=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
			printf "%s\n" "$entries" | tr ";" "\n" |
			while read -r mode name id
			do
				test -n "$mode" || continue
				name=$(printf "%b" "$name") &&
				case "$id" in
				blob) id=$B ;;
				tree) id=$T ;;
				null) id=$Z ;;
				esac &&
				if test "$mode" = -
				then
					tree_entry 1x0644 z $B
				elif test "$mode" = "~"
				then
					printf "100644 x\0abc"
				else
					tree_entry "$mode" "$name" $id
				fi || exit 1
			done >obj &&
			check_like_git $algo "$list" tree:obj
		'
	done <<-\EOF
	good|100644 a blob;100755 b blob;120000 c blob;40000 d tree;160000 e blob|
	empty tree||
	duplicates|100644 a blob;100644 a blob|
	file and directory|100644 x blob;100644 x.1 blob;40000 x tree|
	directory then file|40000 x tree;100644 x blob|
	unsorted|100644 b blob;100644 a blob|
	directory order|40000 a tree;100644 a.b blob|
	null id|100644 a null|
	null gitlink|160000 a null|
	dot|100644 . blob|
	dotdot|40000 .. tree|
	dotgit|40000 .git tree|
	dotgit upper case|100644 .GIT blob|
	dotgit short name|100644 GIT~1 blob|
	dotgit with stream|100644 .git:$DATA blob|
	dotgit with trailing dots|100644 .git.. blob|
	dotgit after backslash|100644 a\\\\.git blob|
	dotgit, HFS ignorable|100644 .g‌it blob|
	dotgit ignored|100644 .git blob|hasDotgit=ignore
	slash in a name|100644 a/b blob|
	zero-padded mode|040000 a tree|
	mode 100664|100664 a blob|
	mode 100000|100000 a blob|
	mode of 7 digits|1100644 a blob|
	mode 0|0 a blob|
	bad modes as errors|100000 a blob|badFilemode=error
	everything at once|0 . null;100644 .. blob;100644 .git blob;100644 a/b blob;100644 a/b blob;100664 c blob;100644 b blob|
	parse error first|-|
	truncated|100644 . blob;~|
	parse error after a dot|100644 . blob;-|
	parse error after a gitmodules symlink|120000 .gitmodules blob;-|
	parse error warned|100644 . blob;-|badTree=warn
	parse error ignored|100644 .. blob;-|badTree=ignore
	gitmodules symlink|120000 .gitmodules blob|
	gitmodules symlink, NTFS name|120000 .gitmodules\0040. blob|
	gitattributes symlink|120000 .gitattributes blob|
	gitignore symlink|120000 .gitignore blob|
	mailmap symlink|120000 .mailmap blob|
	gitmodules missing|100644 .gitmodules blob|
	gitmodules short name missing|100644 GITMOD~1 blob|
	gitmodules fallback short name missing|100644 gi7eba~9 blob|
	gitattributes missing|100644 .gitattributes blob|
	EOF

	test_expect_success "tree: large name ($algo)" '
		B=$(git -C repo-$algo rev-parse HEAD:file) &&
		long=$(printf "%04097d" 0 | tr 0 a) &&
		tree_entry 100644 "$long" $B >obj &&
		check_expect $algo "" "error largePathname" tree:obj &&
		tree_entry 100644 abcdefghijk $B >obj &&
		check_expect $algo "largePathname=warn:10" "warning largePathname" tree:obj &&
		check_expect $algo "largePathname=warn:11" "-" tree:obj
	'

	# .gitmodules blobs: the tree names the blob, both in the pack
	# (blob first when the title says so).
	while IFS='|' read -r title content list
	do
		test_expect_success "gitmodules: $title ($algo)" '
			printf "%b" "$content" >blob &&
			B=$(git -C repo-$algo hash-object "$PWD/blob") &&
			tree_entry 100644 .gitmodules $B >tree &&
			case "$title" in
			*"blob first"*) set -- blob:blob tree:tree ;;
			*) set -- tree:tree blob:blob ;;
			esac &&
			check_like_git $algo "$list" "$@"
		'
	done <<-\EOF
	good|[submodule "sub"]\n\tpath = sub\n\turl = https://example.com/sub.git\n\tupdate = rebase\n|
	bad name|[submodule "../sub"]\n\tpath = sub\n\turl = https://example.com/sub.git\n|
	bad name, blob first|[submodule "a/../../b"]\n\tpath = sub\n|
	empty name|[submodule ""]\n\tpath = sub\n|
	dash url|[submodule "sub"]\n\turl = -upload-pack=evil\n|
	protected dash url|[submodule "sub"]\n\turl = ./-sub\n|
	url without scheme|[submodule "sub"]\n\turl = http::one.example.com/sub.git\n|
	url with empty host|[submodule "sub"]\n\turl = https:///example.com/sub.git\n|
	url with newline|[submodule "sub"]\n\turl = "https://example.com?%0ahost=two.example.com"\n|
	relative url with newline|[submodule "sub"]\n\turl = ./%0ahost=two.example.com/sub.git\n|
	relative url up to the host|[submodule "sub"]\n\turl = ../../..//example.com/sub.git\n|
	relative url up to the scheme|[submodule "sub"]\n\turl = ..\\\\../.\\\\../:example.com/sub.git\n|
	unknown scheme with newline|[submodule "sub"]\n\turl = "data://x%0ay"\n|
	dash path|[submodule "sub"]\n\tpath = -sub\n|
	update command|[submodule "sub"]\n\tupdate = !rm -rf .\n|
	update command ignored|[submodule "sub"]\n\tupdate = !rm -rf .\n|gitmodulesUpdate=ignore
	everything|[submodule "../x"]\n\turl = -u\n\tpath = -p\n\tupdate = !c\n|
	no subsection|[submodule]\n\turl = -u\n|
	other section|[core]\n\turl = -u\n|
	syntax error|[broken\n|
	syntax error after a bad url|[submodule "s"]\n\turl = -u\n[broken\n|
	quoted and escaped|[submodule "s"]\n\turl = "-\\\\u" ; comment\n|
	continued line|[submodule "s"]\n\tpath = \\\n-p\n|
	value cut at a NUL|[submodule "s"]\n\tpath = -p\0x\n|
	include is not followed|[include]\n\tpath = /etc/passwd\n[submodule "s"]\n\turl = -u\n|
	EOF

	# Git 2.44 and later normalise the curl urls they check.
	test_expect_success "gitmodules: url with a bad port ($algo)" '
		printf "[submodule \"sub\"]\n\turl = http://example.com:test/sub.git\n" >blob &&
		B=$(git -C repo-$algo hash-object "$PWD/blob") &&
		tree_entry 100644 .gitmodules $B >tree &&
		check_expect $algo "" "error gitmodulesUrl" tree:tree blob:blob
	'

	test_expect_success "gitmodules: a tree named .gitmodules ($algo)" '
		T=$(git -C repo-$algo rev-parse HEAD^{tree}) &&
		git -C repo-$algo cat-file tree $T >sub &&
		tree_entry 40000 .gitmodules $T >tree &&
		check_like_git $algo "" tree:tree tree:sub
	'

	test_expect_success "gitattributes: line length and NUL ($algo)" '
		printf "%02047d\n" 1 >blob &&
		B=$(git -C repo-$algo hash-object "$PWD/blob") &&
		tree_entry 100644 .gitattributes $B >tree &&
		check_like_git $algo "" tree:tree blob:blob &&
		printf "%02048d\n" 1 >blob &&
		B=$(git -C repo-$algo hash-object "$PWD/blob") &&
		tree_entry 100644 .gitattributes $B >tree &&
		check_like_git $algo "" tree:tree blob:blob &&
		printf "a\0%03000d\n" 1 >blob &&
		B=$(git -C repo-$algo hash-object "$PWD/blob") &&
		tree_entry 100644 .gitattributes $B >tree &&
		check_like_git $algo "" blob:blob tree:tree
	'
done

# Name matching: the cases of git's t0060 (is_dotgitmodules & co.),
# and the submodule names and urls of git's t7450.
test_expect_success 'names NTFS and HFS+ take for .gitmodules (git t0060)' '
	u200c=$(printf "\342\200\214") &&
	cat >match <<-EOF &&
	.gitmodules
	.git${u200c}modules
	.Gitmodules
	.gitmoduleS
	.gitmodules 
	.gitmodules.
	.gitmodules  
	.gitmodules. 
	.gitmodules .
	.gitmodules..
	.gitmodules   
	.gitmodules.  
	.gitmodules . 
	.gitmodules  .
	.Gitmodules .
	.Gitmodules..
	GITMOD~1
	gitmod~1
	GITMOD~2
	gitmod~3
	GITMOD~4
	GITMOD~1 
	gitmod~2.
	GITMOD~3  
	gitmod~4. 
	GITMOD~1 .
	gitmod~2   
	GITMOD~3.  
	gitmod~4 . 
	GI7EBA~1
	gi7eba~9
	GI7EB~10
	GI7EB~11
	GI7EB~99
	GI7E~100
	GI7E~101
	GI7E~999
	~1000000
	~9999999
	.gitmodules:\$DATA
	gitmod~4 . :\$DATA
	EOF
	cat >nomatch <<-\EOF &&
	.gitmodules x
	.gitmodules .x
	 .gitmodules
	..gitmodules
	gitmodules
	.gitmodule
	.gitmodules x 
	GI7EBA~
	GI7EBA~0
	GI7EBA~~1
	GI7EBA~X
	Gx7EBA~1
	GI7EBX~1
	GI7EB~1
	GI7EB~01
	GI7EB~1X
	.gitmodules,:$DATA
	EOF
	{
		while IFS= read -r name
		do
			test-tool fsck name dotgitmodules "$name" || exit 1
		done <match
	} >actual &&
	test_cmp match actual &&
	{
		while IFS= read -r name
		do
			test-tool fsck name dotgitmodules "$name" || exit 1
		done <nomatch
	} >actual &&
	test_must_be_empty actual
'

test_expect_success 'names for .gitattributes, .gitignore, .mailmap (git t0060)' '
	u200c=$(printf "\342\200\214") &&
	test-tool fsck name dotgitattributes .gitattributes .git${u200c}attributes \
		.Gitattributes .gitattributeS GITATT~1 GI7D29~1 .gitattributesx >actual &&
	test_write_lines .gitattributes .git${u200c}attributes .Gitattributes \
		.gitattributeS GITATT~1 GI7D29~1 >expect &&
	test_cmp expect actual &&
	test-tool fsck name dotgitignore .gitignore .git${u200c}ignore .Gitignore \
		.gitignorE GITIGN~1 GI250A~1 gitignore >actual &&
	test_write_lines .gitignore .git${u200c}ignore .Gitignore .gitignorE \
		GITIGN~1 GI250A~1 >expect &&
	test_cmp expect actual &&
	test-tool fsck name dotmailmap .mailmap .mail${u200c}map .Mailmap .mailmaP \
		MAILMA~1 MABA30~1 .mailmap~ >actual &&
	test_write_lines .mailmap .mail${u200c}map .Mailmap .mailmaP MAILMA~1 \
		MABA30~1 >expect &&
	test_cmp expect actual
'

test_expect_success 'submodule names and urls (git t7450)' '
	test-tool fsck name submodule-name valid valid/with/paths "" ../foo \
		/../foo "..\\foo" "\\..\\foo" foo/.. foo/../ "foo\\.." "foo\\..\\" \
		foo/../bar >actual &&
	test_write_lines valid valid/with/paths >expect &&
	test_cmp expect actual &&
	test-tool fsck name submodule-url ./bar/baz/foo.git \
		https://example.com/foo.git http://example.com:80/deeper/foo.git \
		-a./foo ../../..//test/foo.git ../../../../../:localhost:8080/foo.git \
		"..\\../.\\../:example.com/foo.git" ./%0ahost=example.com/foo.git \
		https://one.example.com/evil?%0ahost=two.example.com \
		https:///example.com/foo.git http://example.com:test/foo.git \
		https::example.com/foo.git http:::example.com/foo.git >actual &&
	test_write_lines ./bar/baz/foo.git https://example.com/foo.git \
		http://example.com:80/deeper/foo.git >expect &&
	test_cmp expect actual
'

# --fsck-objects=<list> and its errors, on one commit with a NUL in its
# message (nulInCommit, a warning made an error by strictness).
test_expect_success 'setup a commit with a NUL' '
	T=$(git -C repo-sha1 rev-parse HEAD^{tree}) &&
	printf "tree %s\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0x\n" $T >nul-commit &&
	NUL=$(git -C repo-sha1 hash-object -t commit --literally "$PWD/nul-commit") &&
	printf "# a comment\n\n  %s  # the commit\n" $NUL >skip.list &&
	echo $NUL | tr a-f A-F >skip-upper.list &&
	echo bogus >skip-bad.list &&
	echo $NUL | cut -c1-20 >skip-short.list
'

while read -r list
do
	test_expect_success "list: $list" '
		check_like_git sha1 "$(echo "$list" | sed "s|@D@|$PWD|")" commit:nul-commit
	'
done <<\EOF
nulInCommit=ignore
nulInCommit=warn
nulInCommit:warn
NulInCommit=warn
nulInCommit=Warn
nulInCommit=info
nulInCommit=bogus
nulInCommit
nulInCommit=
=ignore
whatEver=ignore
missingEmail=ignore,nulInCommit=ignore
missingEmail=ignore|nulInCommit=ignore
,,nulInCommit=warn,,
nulInCommit=warn,nulInCommit=ignore
nulInHeader=warn
unterminatedHeader=ignore
nulInHeader=error
skiplist=@D@/skip.list
SkipList=@D@/skip.list
skiplist=@D@/skip-upper.list
skiplist=@D@/skip-bad.list
skiplist=@D@/skip-short.list
skiplist=@D@/does-not-exist
skiplist
EOF

test_expect_success GIT_FSCK_2_45 'list: largePathname=warn:x' '
	check_like_git sha1 largePathname=warn:x commit:nul-commit
'

test_expect_success 'list: largePathname=warn:x, the message' '
	test_must_fail test-tool fsck --msg-types=largePathname=warn:x \
		commit:nul-commit 2>err &&
	echo "fatal: unable to parse max tree entry len: x" >expect &&
	test_cmp expect err
'

test_expect_success 'list: a space ends a skip list path, as in git' '
	mkdir "with space" &&
	cp skip.list "with space/list" &&
	check_like_git sha1 "skiplist=$PWD/with space/list" commit:nul-commit
'

test_expect_success 'skip list: an object on it reports nothing, even fatal' '
	T=$(git -C repo-sha1 rev-parse HEAD^{tree}) &&
	printf "tree %s\nauthor A <a\0@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" $T >nul-header &&
	git -C repo-sha1 hash-object -t commit --literally "$PWD/nul-header" >skip-nul.list &&
	check_like_git sha1 "skiplist=$PWD/skip-nul.list" commit:nul-header
'

test_expect_success 'skip list: a listed tree still queues its .gitmodules' '
	printf "[submodule \"../x\"]\n\tpath = x\n" >blob &&
	B=$(git -C repo-sha1 hash-object "$PWD/blob") &&
	tree_entry 100644 .gitmodules $B >tree &&
	git -C repo-sha1 hash-object -t tree --literally "$PWD/tree" >skip-tree.list &&
	check_like_git sha1 "skiplist=$PWD/skip-tree.list" tree:tree blob:blob &&
	echo $B >skip-blob.list &&
	check_like_git sha1 "skiplist=$PWD/skip-blob.list" tree:tree blob:blob
'

# What receive-pack and fetch-pack hand to index-pack or unpack-objects
# ("--strict=<list>" on their command line, seen with GIT_TRACE) is what
# fsck_config_list() builds from the same configuration.
test_expect_success 'setup push and fetch' '
	git init -q src &&
	test_commit -C src one &&
	git init -q --bare dst.git &&
	git -C dst.git config receive.fsckObjects true &&
	git -C dst.git config receive.fsck.missingEmail warn &&
	git -C dst.git config receive.fsck.whatEver error &&
	git -C dst.git config fsck.nulInCommit ignore &&
	git -C dst.git config receive.fsck.skipList SKIP &&
	git -C dst.git config receive.fsck.badTagName ignore &&
	: >dst.git/SKIP
'

test_expect_success 'receive.fsck.* as receive-pack passes it' '
	GIT_TRACE="$PWD/trace" git -C src push -q ../dst.git HEAD:refs/heads/main 2>push.err &&
	sed -n "s/.*--strict=\([^ ]*\).*/\1/p" trace | sed 1q >expect &&
	test_file_not_empty expect &&
	(cd dst.git && test-tool fsck config-list receive) >actual &&
	sed 1q actual >actual.list &&
	test_cmp expect actual.list &&
	grep "skipping unknown msg id .whatever." push.err &&
	echo "skipping unknown msg id '"'"'whatever'"'"'" >expect.warn &&
	sed 1d actual >actual.warn &&
	test_cmp expect.warn actual.warn
'

test_expect_success 'fetch.fsck.* as fetch-pack passes it' '
	git init -q fetcher &&
	git -C fetcher config fetch.fsckObjects true &&
	git -C fetcher config fetch.fsck.zeroPaddedDate warn &&
	git -C fetcher config fetch.fsck.bogusId ignore &&
	git -C fetcher config receive.fsck.missingEmail ignore &&
	GIT_TRACE="$PWD/trace2" git -C fetcher fetch -q ../src HEAD 2>fetch.err &&
	sed -n "s/.*--\(strict\|fsck-objects\)=\([^ ]*\).*/\2/p" trace2 | sed 1q >expect &&
	test_file_not_empty expect &&
	(cd fetcher && test-tool fsck config-list fetch) >actual &&
	sed 1q actual >actual.list &&
	test_cmp expect actual.list &&
	grep "Skipping unknown msg id .bogusid." fetch.err
'

test_expect_success 'fsck.<id>: the rules git fsck applies' '
	git init -q cfg &&
	(
		cd cfg &&
		git config fsck.nulInCommit ignore &&
		test-tool fsck --config=fsck commit:../nul-commit &&
		git config fsck.whatEver ignore &&
		test_must_fail test-tool fsck --config=fsck commit:../nul-commit 2>err &&
		echo "fatal: Unhandled message id: whatever" >expect &&
		test_cmp expect err &&
		test_must_fail git fsck 2>git.err &&
		grep "Unhandled message id: whatever" git.err
	)
'

test_expect_success 'receive.fsck.<id>=<bad severity> dies as receive-pack does' '
	git init -q --bare badsev.git &&
	git -C badsev.git config receive.fsckObjects true &&
	git -C badsev.git config receive.fsck.missingEmail bogus &&
	test_must_fail git -C src push -q ../badsev.git HEAD:refs/heads/x 2>err &&
	grep "Unknown fsck message type: .bogus." err &&
	(cd badsev.git && test_must_fail test-tool fsck config-list receive 2>err) &&
	grep "Unknown fsck message type: .bogus." badsev.git/err
'

# The links a connectivity walk follows, against git's own view.
for algo in $test_hash_algos
do
	test_expect_success "links of a commit, a tree and a tag ($algo)" '
		(
			cd repo-$algo &&
			mkdir -p dir &&
			echo x >dir/y &&
			ln -s file link &&
			git add dir link &&
			test_tick &&
			git commit -q -m two &&
			git tag -a -m tag v1 &&
			git cat-file commit HEAD >c &&
			{
				echo "tree $(git rev-parse HEAD^{tree})" &&
				echo "commit $(git rev-parse HEAD^)"
			} >expect &&
			test-tool fsck links $(sha_opt $algo) commit c >actual &&
			test_cmp expect actual &&
			git cat-file tree HEAD^{tree} >t &&
			git ls-tree HEAD^{tree} | awk "{ print \$2, \$3 }" >expect &&
			test-tool fsck links $(sha_opt $algo) tree t >actual &&
			test_cmp expect actual &&
			git cat-file tag v1 >g &&
			echo "commit $(git rev-parse HEAD)" >expect &&
			test-tool fsck links $(sha_opt $algo) tag g >actual &&
			test_cmp expect actual
		)
	'
done

test_expect_success 'links: gitlinks are not followed, odd modes are' '
	B=$(git -C repo-sha1 rev-parse HEAD:file) &&
	T=$(git -C repo-sha1 rev-parse HEAD^{tree}) &&
	{
		tree_entry 100000 a $B &&
		tree_entry 160000 b $B &&
		tree_entry 170000 c $B &&
		tree_entry 40000 d $T
	} >t &&
	printf "blob %s\ntree %s\n" $B $T >expect &&
	test-tool fsck links tree t >actual &&
	test_cmp expect actual &&
	printf "100644 x\0abc" >bad &&
	test_must_fail test-tool fsck links tree bad 2>err &&
	grep "too-short tree object" err
'

# git fsck is not strict: 100664 is a good mode there, and warnings
# stay warnings.
test_expect_success 'not strict, as git fsck' '
	git init -q loose &&
	(
		cd loose &&
		B=$(echo blob | git hash-object -w --stdin) &&
		tree_entry 100664 a $B >t &&
		git hash-object -t tree -w --literally t >/dev/null &&
		git fsck --no-dangling 2>&1 | sed "/^notice:/d" >expect &&
		test_must_be_empty expect &&
		test-tool fsck --not-strict --format=fsck tree:t 2>actual &&
		test_must_be_empty actual &&
		tree_entry 100644 . $B >t2 &&
		git hash-object -t tree -w --literally t2 >/dev/null &&
		git fsck --no-dangling 2>&1 | sed "/^notice:/d" >expect &&
		test_file_not_empty expect &&
		test-tool fsck --not-strict --format=fsck tree:t tree:t2 2>actual &&
		test_cmp expect actual
	)
'

test_done
