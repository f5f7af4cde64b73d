#!/bin/sh

test_description='index-pack --stdin as fetch and push run it

Stock git fetch and push run "git index-pack --stdin" on the pack they
receive; here an exec-path of their own sends those calls to gitpack (a
"git" that runs "gitpack index-pack" for index-pack and stock git for
everything else, and a git-index-pack beside it), and a log shows that
gitpack ran. A fetch and a push of a changed large file get thin packs
that gitpack completes with the base the receiver has; git fsck --full
and git verify-pack accept the result. Then index-pack --stdin alone,
each option against stock git on the same input: --fix-thin ("completed
with N local objects" with -v), --keep and --keep=<msg>, --promisor,
--pack_header with the header cut off, --check-self-contained-and-connected
(0, 1, or 128 with "did not receive expected object"), --strict,
--max-input-size, --report-end-of-input (a NUL on stderr), bytes after
the pack passed through to stdout, a truncated stream (early EOF, no
temporary file left), an object that exists with other content (the
collision check), --verify-stat and --verify-stat-only, --verify of a
version 1 index and of a version 2 index with 64-bit offsets. SHA-1 and
SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# make_exec_path DIR LOG: an exec-path for stock git in DIR: every program
# of git's own, except that "git index-pack" and git-index-pack run
# "gitpack index-pack" (each call logged to LOG as "index-pack ARGS").
# GP_IN_GITPACK keeps a gitpack that is stock git (GP_TEST_GITPACK=git)
# from coming back here.
make_exec_path () {
	gp_mx_git_=$(git --exec-path)/git &&
	test -x "$gp_mx_git_" || gp_mx_git_=$(command -v git) &&
	gp_mx_gitpack_=$(command -v gitpack) &&
	mkdir "$1" &&
	for gp_mx_f_ in "$(git --exec-path)"/*
	do
		case "${gp_mx_f_##*/}" in
		git|git-index-pack) ;;
		*) ln -s "$gp_mx_f_" "$1/${gp_mx_f_##*/}" || return 1 ;;
		esac
	done &&
	cat >"$1/git" <<-EOF &&
	#!/bin/sh
	if test "\$1" = index-pack && test -z "\$GP_IN_GITPACK"
	then
		shift
		echo "index-pack \$*" >>"$2"
		GP_IN_GITPACK=1 exec "$gp_mx_gitpack_" index-pack "\$@"
	fi
	exec "$gp_mx_git_" "\$@"
	EOF
	cat >"$1/git-index-pack" <<-EOF &&
	#!/bin/sh
	echo "index-pack \$*" >>"$2"
	GP_IN_GITPACK=1 exec "$gp_mx_gitpack_" index-pack "\$@"
	EOF
	chmod +x "$1/git" "$1/git-index-pack"
}

# packs DIR: the .pack files of the repository DIR (bare or not), sorted.
packs () {
	if test -d "$1/.git"
	then
		ls "$1"/.git/objects/pack/ | grep "\.pack$" || :
	else
		ls "$1"/objects/pack/ | grep "\.pack$" || :
	fi
}

# no_tmp_pack DIR: no temporary pack is left in the pack directory DIR
# (gitpack removes it when it fails; stock git leaves it behind).
no_tmp_pack () {
	if test_have_prereq GITPACK_IS_GITPACK
	then
		ls -A "$1" >left &&
		! grep tmp_pack left
	fi
}

# pack_names ALGO PACK: the sorted object names of PACK (its .idx
# beside it).
pack_names () {
	git show-index --object-format="$1" <"${2%.pack}.idx" | cut -d" " -f2 | sort
}

# change_line DIR N: in DIR, line N of big.txt becomes "changed N", then
# a commit.
change_line () {
	sed "s/^$2\$/changed $2/" "$1/big.txt" >"$1/big.tmp" &&
	mv "$1/big.tmp" "$1/big.txt" &&
	git -C "$1" add big.txt &&
	test_tick &&
	git -C "$1" commit -q -m "change $2"
}

# stdin_both RECV ARGS... <PACK: stock git index-pack --stdin ARGS in a
# copy of RECV (RECV-git), gitpack in another (RECV-gp), reading PACK from
# a pipe as they do in fetch and push; their stdout,
# stderr and exit codes go to expect, expect.err, expect.code and actual,
# actual.err, actual.code.
stdin_both () {
	gp_sb_recv_=$1
	shift
	cat >stdin.pack &&
	rm -rf "$gp_sb_recv_-git" "$gp_sb_recv_-gp" &&
	cp -R "$gp_sb_recv_" "$gp_sb_recv_-git" &&
	cp -R "$gp_sb_recv_" "$gp_sb_recv_-gp" &&
	{ cat stdin.pack | git -C "$gp_sb_recv_-git" index-pack --stdin "$@" >expect 2>expect.err; echo $? >expect.code; } &&
	{ cat stdin.pack | gitpack -C "$gp_sb_recv_-gp" index-pack --stdin "$@" >actual 2>actual.err; echo $? >actual.code; }
}

# compare_codes: the exit codes of stdin_both agree (and stderr is shown
# if not).
compare_codes () {
	test_cmp expect.code actual.code || {
		echo "git:" && cat expect.err && echo "gitpack:" && cat actual.err
		return 1
	}
}

for algo in $test_hash_algos
do

src=src-$algo
dst=dst-$algo.git
have=have-$algo.git
empty=empty-$algo.git
xp="$TRASH_DIRECTORY/exec-path"

test_expect_success "setup: a repository with a large file, a bare clone, a receiver with the first commit ($algo)" '
	if ! test -d "$xp"
	then
		make_exec_path "$xp" "$TRASH_DIRECTORY/index-pack.log"
	fi &&
	git init -q -b main --object-format=$algo $src &&
	test_seq 20000 >$src/big.txt &&
	echo small >$src/small.txt &&
	mkdir $src/dir &&
	echo deep >$src/dir/deep.txt &&
	git -C $src add . &&
	test_tick &&
	git -C $src commit -q -m first &&
	git clone -q --bare $src $dst &&
	git -C $dst config gc.auto 0 &&
	git init -q --bare -b main --object-format=$algo $have &&
	echo main | git -C $src pack-objects -q --revs --stdout >first.pack &&
	git -C $have index-pack --stdin <first.pack >/dev/null &&
	git -C $have update-ref refs/heads/main $(git -C $src rev-parse main) &&
	git init -q --bare -b main --object-format=$algo $empty &&
	change_line $src 5000 &&
	change_line $src 6000 &&
	# a thin pack of the last two commits: deltas against the first
	# one'\''s big.txt, which is not in it
	printf "main\n^main~2\n" | git -C $src pack-objects -q --revs --thin --stdout >thin-$algo.pack &&
	printf "main\n^main~2\n" | git -C $src pack-objects -q --revs --stdout >fat-$algo.pack &&
	test $(wc -c <thin-$algo.pack) -lt $(wc -c <fat-$algo.pack) &&
	git -C $src pack-objects -q --all --revs --stdout </dev/null >all-$algo.pack &&
	git -C $src rev-parse main~2:big.txt >base-$algo &&
	git -C $src rev-parse main >tip-$algo
'

test_expect_success "git fetch runs gitpack index-pack, which completes the thin pack with the local base ($algo)" '
	: >"$TRASH_DIRECTORY/index-pack.log" &&
	packs $dst >before &&
	GIT_EXEC_PATH="$xp" git -C $dst -c fetch.unpackLimit=1 \
		fetch --progress "$TRASH_DIRECTORY/$src" main:main 2>err &&
	cp "$TRASH_DIRECTORY/index-pack.log" fetch-$algo.log &&
	cat fetch-$algo.log &&
	test_line_count = 1 fetch-$algo.log &&
	grep "^index-pack --stdin .*--fix-thin" fetch-$algo.log &&
	grep -e "--keep=fetch-pack" fetch-$algo.log &&
	grep -e "--pack_header=2,[0-9]" fetch-$algo.log &&
	tr "\r" "\n" <err | grep "completed with 1 local object" &&
	git -C $src rev-parse main >expect &&
	git -C $dst rev-parse main >actual &&
	test_cmp expect actual &&
	packs $dst >after &&
	comm -13 before after >new &&
	test_line_count = 1 new &&
	new="$TRASH_DIRECTORY/$dst/objects/pack/$(cat new)" &&
	test_path_is_missing "${new%.pack}.keep" &&
	# the base came into the pack: the pack says one object more than
	# was received
	sent=$(sed -n "s/.*--pack_header=2,\([0-9]*\).*/\1/p" fetch-$algo.log) &&
	pack_names $algo "$new" >names &&
	test_line_count = $((sent + 1)) names &&
	grep "^$(cat base-$algo)\$" names &&
	git -C $dst verify-pack "${new%.pack}.idx" &&
	git -C $dst fsck --full --no-dangling 2>fsck.err &&
	test_must_be_empty fsck.err &&
	git -C $dst index-pack -o "$TRASH_DIRECTORY/refetch.idx" "$new" >/dev/null &&
	test_cmp_bin refetch.idx "${new%.pack}.idx"
'

test_expect_success "git push runs gitpack index-pack (--strict --report-end-of-input --fix-thin), which completes the thin pack ($algo)" '
	: >"$TRASH_DIRECTORY/index-pack.log" &&
	git -C $dst config receive.unpackLimit 1 &&
	git -C $dst config receive.fsckObjects true &&
	change_line $src 7000 &&
	packs $dst >before &&
	GIT_EXEC_PATH="$xp" git -C $src push --progress "$TRASH_DIRECTORY/$dst" main:main 2>err &&
	cp "$TRASH_DIRECTORY/index-pack.log" push-$algo.log &&
	cat push-$algo.log &&
	test_line_count = 1 push-$algo.log &&
	grep "^index-pack --stdin .*--fix-thin" push-$algo.log &&
	grep -e "--report-end-of-input" push-$algo.log &&
	grep -e "--strict" push-$algo.log &&
	grep -e "--keep=receive-pack" push-$algo.log &&
	git -C $src rev-parse main >expect &&
	git -C $dst rev-parse main >actual &&
	test_cmp expect actual &&
	packs $dst >after &&
	comm -13 before after >new &&
	test_line_count = 1 new &&
	new="$TRASH_DIRECTORY/$dst/objects/pack/$(cat new)" &&
	test_path_is_missing "${new%.pack}.keep" &&
	git -C $src rev-parse main~1:big.txt >push-base &&
	pack_names $algo "$new" >names &&
	grep "^$(cat push-base)\$" names &&
	git -C $dst verify-pack "${new%.pack}.idx" &&
	git -C $dst fsck --full --no-dangling 2>fsck.err &&
	test_must_be_empty fsck.err
'

test_expect_success "a push over receive.maxInputSize: gitpack index-pack refuses it, nothing is left ($algo)" '
	: >"$TRASH_DIRECTORY/index-pack.log" &&
	git -C $dst config receive.maxInputSize 20 &&
	test_when_finished "git -C $dst config --unset receive.maxInputSize" &&
	change_line $src 8000 &&
	git -C $dst rev-parse main >expect &&
	packs $dst >before &&
	test_must_fail env GIT_EXEC_PATH="$xp" git -C $src push "$TRASH_DIRECTORY/$dst" main:main 2>err &&
	cat err &&
	grep -e "--max-input-size=20" "$TRASH_DIRECTORY/index-pack.log" &&
	grep "pack exceeds maximum allowed size (20 bytes)" err &&
	git -C $dst rev-parse main >actual &&
	test_cmp expect actual &&
	packs $dst >after &&
	test_cmp before after &&
	no_tmp_pack $dst/objects/pack
'

test_expect_success "--fix-thin -v: completed with local objects, a pack git reads ($algo)" '
	stdin_both $have -v --fix-thin <thin-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 0 &&
	tr "\r" "\n" <expect.err | grep "completed with 1 local object\.$" | tail -n 1 >expect.line &&
	tr "\r" "\n" <actual.err | grep "completed with 1 local object\.$" | tail -n 1 >actual.line &&
	test_line_count = 1 expect.line &&
	test_cmp expect.line actual.line &&
	hash=$(sed -n "s/^pack	//p" actual) &&
	new="$TRASH_DIRECTORY/$have-gp/objects/pack/pack-$hash.pack" &&
	test_path_is_file "$new" &&
	pack_names $algo "$new" >actual.names &&
	pack_names $algo $have-git/objects/pack/pack-$(sed -n "s/^pack	//p" expect).pack >expect.names &&
	test_cmp expect.names actual.names &&
	grep "^$(cat base-$algo)\$" actual.names &&
	git -C $have-gp verify-pack "${new%.pack}.idx" &&
	git -C $have-gp index-pack -o "$TRASH_DIRECTORY/fixed.idx" "$new" >/dev/null &&
	test_cmp_bin fixed.idx "${new%.pack}.idx" &&
	git -C $have-gp update-ref refs/heads/main $(cat tip-$algo) &&
	git -C $have-gp fsck --full --no-dangling 2>fsck.err &&
	test_must_be_empty fsck.err
'

test_expect_success "a thin pack without --fix-thin: unresolved deltas, exit 128, nothing left ($algo)" '
	stdin_both $have <thin-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128 &&
	grep "pack has 2 unresolved deltas$" actual.err &&
	packs $have >expect &&
	packs $have-gp >actual &&
	test_cmp expect actual &&
	no_tmp_pack $have-gp/objects/pack
'

test_expect_success "--keep, --keep=<msg>: keep<TAB>hash and the .keep of git; pack<TAB>hash when a .keep exists ($algo)" '
	stdin_both $empty --keep=fetched\ by\ test <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual &&
	grep "^keep	" actual &&
	hash=$(sed -n "s/^keep	//p" actual) &&
	test_cmp_bin $empty-git/objects/pack/pack-$hash.keep $empty-gp/objects/pack/pack-$hash.keep &&
	echo "fetched by test" >expect.keep &&
	test_cmp expect.keep $empty-gp/objects/pack/pack-$hash.keep &&
	stdin_both $empty --keep <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual &&
	grep "^keep	" actual &&
	test_must_be_empty $empty-gp/objects/pack/pack-$hash.keep &&
	# a .keep that is there already: git says "pack"
	gitpack -C $empty-gp index-pack --stdin --keep=again <all-$algo.pack >actual &&
	git -C $empty-git index-pack --stdin --keep=again <all-$algo.pack >expect &&
	test_cmp expect actual &&
	grep "^pack	$hash\$" actual &&
	test_must_be_empty $empty-gp/objects/pack/pack-$hash.keep
'

test_expect_success "--promisor, --promisor=<msg>: the .promisor of git ($algo)" '
	stdin_both $empty --promisor=from\ a\ promisor <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual &&
	hash=$(sed -n "s/^pack	//p" actual) &&
	test_cmp_bin $empty-git/objects/pack/pack-$hash.promisor $empty-gp/objects/pack/pack-$hash.promisor &&
	echo "from a promisor" >expect.promisor &&
	test_cmp expect.promisor $empty-gp/objects/pack/pack-$hash.promisor &&
	stdin_both $empty --promisor <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual &&
	test_must_be_empty $empty-gp/objects/pack/pack-$hash.promisor
'

test_expect_success "--pack_header=<v>,<n> with the first 12 bytes cut off: the same pack as git ($algo)" '
	n=$(od -An -tu1 -j8 -N4 all-$algo.pack | awk "{ print \$1 * 16777216 + \$2 * 65536 + \$3 * 256 + \$4 }") &&
	tail -c +13 all-$algo.pack >headless.pack &&
	stdin_both $empty --pack_header=2,$n <headless.pack &&
	compare_codes &&
	test_cmp expect actual &&
	hash=$(sed -n "s/^pack	//p" actual) &&
	test_cmp_bin $empty-git/objects/pack/pack-$hash.idx $empty-gp/objects/pack/pack-$hash.idx &&
	test_cmp_bin all-$algo.pack $empty-gp/objects/pack/pack-$hash.pack &&
	# the header is not read again: a wrong count fails
	stdin_both $empty --pack_header=2,$((n + 1)) <headless.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128
'

test_expect_success "--check-self-contained-and-connected: 0 closed, 1 open into the repository, 128 missing ($algo)" '
	stdin_both $empty --check-self-contained-and-connected <all-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 0 &&
	test_cmp expect actual &&
	stdin_both $have --check-self-contained-and-connected <fat-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 1 &&
	test_cmp expect actual &&
	grep "^pack	" actual &&
	stdin_both $empty --check-self-contained-and-connected <fat-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128 &&
	sed -n "s/^fatal: did not receive expected object //p" actual.err >missing &&
	test_line_count = 1 missing &&
	# one of what the two commits point at outside themselves
	git -C $src rev-list --objects main~2 | cut -d" " -f1 >outside &&
	grep "^$(cat missing)\$" outside
'

test_expect_success "--strict: links into the repository are fine, missing ones fatal ($algo)" '
	stdin_both $have --strict <fat-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 0 &&
	test_cmp expect actual &&
	stdin_both $empty --strict <fat-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128 &&
	grep "^fatal: did not receive expected object " actual.err &&
	stdin_both $have --strict --fix-thin <thin-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 0
'

test_expect_success "--max-input-size: a larger pack is refused, nothing left; one of that size passes ($algo)" '
	stdin_both $empty --max-input-size=20 <all-$algo.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128 &&
	test_cmp expect.err actual.err &&
	grep "^fatal: pack exceeds maximum allowed size (20 bytes)\$" actual.err &&
	test_must_be_empty actual &&
	packs $empty-gp >left &&
	test_must_be_empty left &&
	no_tmp_pack $empty-gp/objects/pack &&
	stdin_both $empty --max-input-size=$(wc -c <all-$algo.pack) <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual
'

test_expect_success "--report-end-of-input: a NUL byte on stderr once the pack is read, as git ($algo)" '
	stdin_both $empty --report-end-of-input <all-$algo.pack &&
	compare_codes &&
	test_cmp expect actual &&
	test_cmp_bin expect.err actual.err &&
	printf "\\000" >nul &&
	test_cmp_bin nul actual.err &&
	stdin_both $empty <all-$algo.pack &&
	test_must_be_empty actual.err
'

test_expect_success "bytes after the pack go to stdout after the pack line, as git ($algo)" '
	{ cat all-$algo.pack && printf "more bytes\\nand more" ; } >trailing.pack &&
	stdin_both $empty <trailing.pack &&
	compare_codes &&
	test_cmp_bin expect actual &&
	hash=$(sed -n "s/^pack	//p" actual) &&
	{ printf "pack\\t%s\\n" $hash && printf "more bytes\\nand more" ; } >want &&
	test_cmp_bin want actual
'

test_expect_success "a truncated stream: early EOF, exit 128, no pack and no temporary file ($algo)" '
	size=$(wc -c <all-$algo.pack) &&
	for cut in 5 12 100 $((size / 2)) $((size - 1))
	do
		head -c $cut all-$algo.pack >cut.pack &&
		stdin_both $empty <cut.pack &&
		compare_codes &&
		test "$(cat actual.code)" = 128 &&
		grep "early EOF" actual.err &&
		packs $empty-gp >left &&
		test_must_be_empty left &&
		no_tmp_pack $empty-gp/objects/pack || return 1
	done
'

test_expect_success "an object that exists with other content: SHA1 COLLISION FOUND, as git ($algo)" '
	rm -rf collide-$algo &&
	git init -q --object-format=$algo collide-$algo &&
	echo one >one.txt &&
	echo two >two.txt &&
	a=$(git -C collide-$algo hash-object -w "$TRASH_DIRECTORY/one.txt") &&
	b=$(git -C collide-$algo hash-object -w "$TRASH_DIRECTORY/two.txt") &&
	printf "%s\\n" $a $b | git -C collide-$algo pack-objects -q --stdout >ab.pack &&
	# the loose file of b now holds a: same name, other content
	loose_b=collide-$algo/.git/objects/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-) &&
	loose_a=collide-$algo/.git/objects/$(echo $a | cut -c1-2)/$(echo $a | cut -c3-) &&
	chmod u+w "$loose_b" &&
	cp -f "$loose_a" "$loose_b" &&
	stdin_both collide-$algo <ab.pack &&
	compare_codes &&
	test "$(cat actual.code)" = 128 &&
	test_cmp expect.err actual.err &&
	grep "^fatal: SHA1 COLLISION FOUND WITH $b !\$" actual.err &&
	packs collide-$algo-gp >left &&
	test_must_be_empty left &&
	no_tmp_pack collide-$algo-gp/.git/objects/pack &&
	# the same content is no collision
	printf "%s\\n" $a | git -C collide-$algo pack-objects -q --stdout >a.pack &&
	gitpack -C collide-$algo-gp index-pack --stdin <a.pack
'

test_expect_success "--verify-stat, --verify-stat-only: the output of git ($algo)" '
	git -C $src repack -adfq &&
	pack=$(ls "$TRASH_DIRECTORY"/$src/.git/objects/pack/pack-*.pack) &&
	git -C $src verify-pack -v "${pack%.pack}.idx" >vp &&
	grep "^chain length = 1" vp &&
	for opt in --verify-stat --verify-stat-only
	do
		git -C $src index-pack $opt "$pack" >expect 2>expect.err &&
		gitpack -C $src index-pack $opt "$pack" >actual 2>actual.err &&
		test_cmp expect actual &&
		test_cmp expect.err actual.err || return 1
	done &&
	grep "^non delta: " actual
'

test_expect_success "--verify: an index of version 1 and one of version 2 with 64-bit offsets pass, untouched ($algo)" '
	pack=$(ls $src/.git/objects/pack/pack-*.pack) &&
	cp "$pack" v.pack &&
	for version in 1 2,0x40 2
	do
		rm -f v.idx v.rev &&
		git -C $src index-pack --index-version=$version -o "$TRASH_DIRECTORY/v.idx" \
			"$TRASH_DIRECTORY/v.pack" >/dev/null &&
		cp v.idx v.idx.orig &&
		gitpack -C $src index-pack --verify "$TRASH_DIRECTORY/v.pack" &&
		gitpack -C $src index-pack --verify -o "$TRASH_DIRECTORY/v.idx" "$TRASH_DIRECTORY/v.pack" &&
		test_cmp_bin v.idx.orig v.idx &&
		test_path_is_missing v.rev || return 1
	done &&
	# a version 1 index that does not match fails, as in git
	git -C $src index-pack --index-version=1 -o "$TRASH_DIRECTORY/v.idx" \
		"$TRASH_DIRECTORY/v.pack" >/dev/null &&
	corrupt_byte v.idx 1030 &&
	test_expect_code 128 git -C $src index-pack --verify "$TRASH_DIRECTORY/v.pack" &&
	test_expect_code 128 gitpack -C $src index-pack --verify "$TRASH_DIRECTORY/v.pack"
'

done

test_done
