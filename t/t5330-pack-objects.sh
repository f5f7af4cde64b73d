#!/bin/sh

test_description='pack-objects: packs that git reads back

A history built by stock git (fast-import): 190 commits on main that
edit the same files again and again (a 300-line file, a growing readme,
four small sources, a 1500-line file every tenth commit), a side branch
merged back, annotated and lightweight tags. It is stored in three packs:
"base" (commits 1-150, "git repack -adf --depth=50", so it has long delta
chains), "mid" (151-180, fast-import) and "kept" (181-190, fast-import,
with a .keep file); then three loose commits, a loose annotated tag and
an unreachable loose blob.

gitpack pack-objects writes packs of it, and stock git judges them:
"git index-pack" of each .pack writes the same .idx and .rev bytes,
"git verify-pack" passes, the objects are those asked for (compared with
"git rev-list --objects", "git show-index" of the source packs, and the
packs "git pack-objects" writes from the same input), and "git fsck
--full" passes in a repository holding nothing but the new pack. Also:
--stdout, object lists, --no-reuse-delta (the size against git'\''s, in
the log), --depth, --delta-base-offset, --unpacked, --incremental,
--local, --honor-pack-keep, --keep-pack, --stdin-packs, --non-empty,
--no-rev-index, --write-bitmap-index (git tests the bitmap), missing and
malformed input, a damaged source pack (an error naming it, no file
left behind), -h. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# po_stream FIRST LAST: a git fast-import stream of commits FIRST..LAST
# of main (the content of commit k does not depend on FIRST, so a
# history can be imported in several runs). Commit k sets line k*37%300
# of numbers.txt, adds a line to doc/readme, rewrites src/f<k%4>.c (40
# lines, one of them changed) and, every tenth commit, changes a line of
# data.txt (1500 lines). After commit 100, a side branch of 3 commits
# from commit 90 is merged into main. Commits 50, 100, 150 get
# annotated tags v<k>; commits 25, 75, 125, 175 lightweight tags
# light<k>. When FIRST > 1 the first commit continues refs/heads/main.
po_stream () {
	perl -e '
		use strict;
		my ($first, $last) = @ARGV;
		my $t0 = 1700000000;
		my @numbers = map { "$_\n" } 1 .. 300;
		my @data = map { "data line $_ of a longer file, edited now and then\n" } 1 .. 1500;
		my (@readme, %src, %at);
		my $mark = 0;
		sub blob {
			my ($path, $body) = @_;
			return "M 100644 inline $path\ndata " . length($body) . "\n$body\n";
		}
		sub commit {
			my ($ref, $k, $msg, $from, $merges, @changes) = @_;
			my $when = $t0 + 60 * $k;
			$mark++;
			print "commit $ref\nmark :$mark\n";
			print "author A U Thor <author\@example.com> $when +0000\n";
			print "committer C O Mitter <committer\@example.com> $when +0000\n";
			print "data ", length($msg), "\n$msg\n";
			print "from $from\n" if defined $from;
			print "merge $_\n" for @$merges;
			print @changes, "\n";
			return ":$mark";
		}
		for my $k (1 .. $last) {
			$numbers[$k * 37 % 300] = "edited in commit $k\n";
			push @readme, "line $k of the readme\n";
			$data[$k * 53 % 1500] = "data line changed by commit $k\n" if $k % 10 == 0;
			my $f = "src/f" . $k % 4 . ".c";
			$src{$f} = join("", map {
				$_ == $k % 40 ? "/* commit $k */\n" : "int v$_ = $_ * " . ($k % 4) . ";\n"
			} 0 .. 39);
			next if $k < $first;
			my @changes = (blob("numbers.txt", join("", @numbers)),
				       blob("doc/readme", join("", @readme)),
				       blob($f, $src{$f}));
			push @changes, blob("data.txt", join("", @data))
				if $k % 10 == 0 || $k == $first;
			push @changes, map { blob($_, $src{$_}) } sort keys %src
				if $k == $first && $first > 1;
			my $from = $k == $first && $first > 1 ? "refs/heads/main^0" : undef;
			$at{$k} = commit("refs/heads/main", $k, "commit $k\n", $from, [], @changes);
			if ($k == 100) {
				print "reset refs/heads/side\nfrom $at{90}\n\n";
				my $side;
				$side = commit("refs/heads/side", 90 + $_, "side $_\n", undef, [],
					       blob("side.txt", "side line\n" x (10 * $_))) for 1 .. 3;
				$at{$k} = commit("refs/heads/main", $k, "merge side\n", undef, [$side],
						 blob("side.txt", "side line\n" x 30));
			}
			if ($k % 50 == 0) {
				my $msg = "release $k\n";
				print "tag v$k\nfrom $at{$k}\n";
				print "tagger C O Mitter <committer\@example.com> ", $t0 + 60 * $k, " +0000\n";
				print "data ", length($msg), "\n$msg\n";
			}
			print "reset refs/tags/light$k\nfrom $at{$k}\n\n" if $k % 50 == 25;
		}
	' "$1" "$2"
}

# po_import DIR FIRST LAST: import commits FIRST..LAST into DIR as a pack.
po_import () {
	po_stream "$2" "$3" >"$1.stream" &&
	git -C "$1" -c fastimport.unpackLimit=0 fast-import --quiet <"$1.stream" &&
	rm -f "$1.stream"
}

# po_repo ALGO DIR: the repository described above; DIR.packs names the
# packs by role (base, mid, kept; see midx_role).
po_repo () {
	git init -q -b main --object-format="$1" "$2" &&
	git -C "$2" config gc.auto 0 &&
	po_import "$2" 1 150 &&
	git -C "$2" repack -adfq --window=50 --depth=50 &&
	echo "base $(midx_packs "$2")" >"$2.packs" &&
	midx_new_pack_ "$2" mid po_import "$2" 151 180 &&
	midx_new_pack_ "$2" kept po_import "$2" 181 190 &&
	kept=$(midx_role "$2" kept) &&
	echo "kept by t5330" >"$(midx_pack_dir "$2")/${kept%.pack}.keep" &&
	(
		cd "$2" &&
		git reset -q --hard main &&
		for i in 1 2 3
		do
			echo "loose $i" >>doc/readme &&
			echo "loose file $i" >loose$i.txt &&
			git add -A &&
			test_tick &&
			git commit -q -m "loose $i" || exit 1
		done &&
		git tag -a -m "a loose tag" v-loose &&
		echo "nothing reaches this" | git hash-object -w --stdin >../"$2.unreachable"
	)
}

# idx_set IDX ALGO: the sorted object names of the pack index IDX.
idx_set () {
	git show-index --object-format="$2" <"$1" | cut -d" " -f2 | sort
}

# reachable DIR: the sorted names of every object the refs of DIR reach.
reachable () {
	git -C "$1" rev-list --objects --all | cut -d" " -f1 | sort
}

# packed DIR ALGO: the sorted names of every object in a pack of DIR.
packed () {
	for idx in "$(midx_pack_dir "$1")"/pack-*.idx
	do
		idx_set "$idx" "$2" || return 1
	done | sort -u
}

# role_set DIR ROLE ALGO: the sorted names of the objects of pack ROLE.
role_set () {
	idx_set "$(midx_pack_dir "$1")/$(midx_role "$1" "$3" idx)" "$2"
}

# git_accepts DIR PACK: stock git, in the repository DIR (for its object
# format), indexes PACK (an absolute path to X.pack, written with its X.idx
# and X.rev by gitpack) into the same .idx and .rev bytes, and
# verify-pack passes. (Stock git writes no .rev by default: with
# GP_TEST_GITPACK=git, only the .idx is compared.)
git_accepts () {
	gp_ga_base_=${2%.pack} &&
	rm -f "$gp_ga_base_.git.idx" "$gp_ga_base_.git.rev" &&
	git -C "$1" index-pack --rev-index -o "$gp_ga_base_.git.idx" "$2" >/dev/null &&
	test_cmp_bin "$gp_ga_base_.git.idx" "$gp_ga_base_.idx" &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		test_cmp_bin "$gp_ga_base_.git.rev" "$gp_ga_base_.rev"
	fi &&
	git -C "$1" verify-pack "$gp_ga_base_.idx" &&
	rm -f "$gp_ga_base_.git.idx" "$gp_ga_base_.git.rev"
}

# stream_set DIR PACK: the sorted names of the objects of PACK (a pack
# without index, say from --stdout), indexed by stock git in DIR.
stream_set () {
	rm -f "${2%.pack}.idx" &&
	git -C "$1" index-pack -o "${2%.pack}.idx" "$2" >/dev/null &&
	git -C "$1" show-index <"${2%.pack}.idx" | cut -d" " -f2 | sort
}

# gp_pack DIR OUT ARGS... <INPUT: gitpack pack-objects ARGS OUT/pack in
# DIR (OUT an absolute directory, emptied first); prints the path of
# the .pack, after checking that the hash printed names it.
gp_pack () {
	gp_gp_dir_=$1
	gp_gp_out_=$2
	shift 2
	rm -rf "$gp_gp_out_" &&
	mkdir -p "$gp_gp_out_" &&
	gp_gp_hash_=$(gitpack -C "$gp_gp_dir_" pack-objects -q "$@" "$gp_gp_out_/pack") &&
	test_path_is_file "$gp_gp_out_/pack-$gp_gp_hash_.pack" &&
	test_path_is_file "$gp_gp_out_/pack-$gp_gp_hash_.idx" &&
	echo "$gp_gp_out_/pack-$gp_gp_hash_.pack"
}

# max_chain IDX DIR: the longest delta chain of the pack of IDX (an
# absolute path), by git verify-pack -v in DIR (0 without deltas).
max_chain () {
	git -C "$2" verify-pack -v "$1" >chain.vp &&
	sed -n "s/^chain length = \([0-9]*\): .*/\1/p" chain.vp | sort -n | tail -n 1 >chain.max &&
	echo $(($(cat chain.max) + 0)) &&
	rm -f chain.vp chain.max
}

# entry_types PACK ALGO: "TYPE COUNT" for the type bits of the entries of
# PACK (1..4 whole objects, 6 OFS_DELTA, 7 REF_DELTA), at the offsets
# its .idx gives.
entry_types () {
	git show-index --object-format="$2" <"${1%.pack}.idx" | cut -d" " -f1 |
	perl -e '
		open(my $fh, "<:raw", $ARGV[0]) or die "$ARGV[0]: $!\n";
		local $/;
		my $d = <$fh>;
		$/ = "\n";
		my %n;
		while (my $ofs = <STDIN>) {
			chomp $ofs;
			$n{(ord(substr($d, $ofs, 1)) >> 4) & 7}++;
		}
		print "$_ $n{$_}\n" for sort keys %n;
	' "$1"
}

# install_alone SRC PACK ALGO DST: a new repository DST whose only objects
# are PACK (with its .idx and whatever else shares its base name), with
# the refs of SRC.
install_alone () {
	rm -rf "$4" &&
	git init -q -b main --object-format="$3" "$4" &&
	cp "${2%.pack}".* "$(midx_pack_dir "$4")/" &&
	git -C "$1" for-each-ref --format="create %(refname) %(objectname)" >refs.in &&
	git -C "$4" update-ref --stdin <refs.in
}

# fail_clean OUT: after a failed run, OUT (the output directory) is empty:
# no temporary file, no pack, no index.
fail_clean () {
	ls -A "$1" >left &&
	test_must_be_empty left
}

for algo in $test_hash_algos
do

r=repo-$algo
out="$TRASH_DIRECTORY/out-$algo"

test_expect_success "setup: three packs (one kept), loose objects ($algo)" '
	po_repo $algo $r &&
	test "$(midx_packs $r | wc -l)" = 3 &&
	ls "$(midx_pack_dir $r)"/*.keep >keeps &&
	test_line_count = 1 keeps &&
	git -C $r rev-list --all >commits &&
	test_line_count = 197 commits &&
	git -C $r rev-list --merges --all >merges &&
	test_line_count = 1 merges &&
	git -C $r for-each-ref --format="%(objecttype) %(refname)" refs/tags >tags &&
	test "$(grep -c "^tag " tags)" = 4 &&
	test "$(grep -c "^commit " tags)" = 4 &&
	git -C $r count-objects -v >count &&
	grep "^count: 1[0-9]$" count &&
	reachable $r >$r.reachable &&
	packed $r $algo >$r.packed &&
	comm -23 $r.reachable $r.packed >$r.loose &&
	test_line_count = 16 $r.loose &&
	# the base pack has chains far deeper than 3
	chain=$(max_chain "$PWD/$(midx_pack_dir $r)/$(midx_role $r base idx)" $r) &&
	echo "longest chain in base: $chain" &&
	test $chain -gt 20
'

test_expect_success "--revs --all: git writes the same .idx and .rev, fsck passes alone ($algo)" '
	rm -rf "$out/all" && mkdir -p "$out/all" &&
	echo | gitpack -C $r pack-objects -q --revs --all "$out/all/pack" >hash &&
	test_line_count = 1 hash &&
	pack="$out/all/pack-$(cat hash).pack" &&
	ls "$out/all" >files &&
	sed -e "s/^/pack-/" -e "s/$/.idx/" hash >expect &&
	sed -e "s/^/pack-/" -e "s/$/.pack/" hash >>expect &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		sed -e "s/^/pack-/" -e "s/$/.rev/" hash >>expect
	fi &&
	test_cmp expect files &&
	git_accepts $r "$pack" &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.reachable actual &&
	install_alone $r "$pack" $algo alone-$algo &&
	git -C alone-$algo fsck --full --no-dangling 2>fsck.err &&
	test_must_be_empty fsck.err &&
	git -C alone-$algo rev-list --objects --all | cut -d" " -f1 | sort >actual &&
	test_cmp $r.reachable actual
'

test_expect_success "--stdout: the same bytes, and git index-pack --stdin takes them ($algo)" '
	pack=$(ls "$out"/all/pack-*.pack) &&
	echo | gitpack -C $r pack-objects -q --revs --all --stdout >stdout.pack &&
	# (git'\''s threads make its output vary from run to run)
	if test_have_prereq GITPACK_IS_GITPACK
	then
		test_cmp_bin "$pack" stdout.pack
	fi &&
	rm -rf stdin-$algo &&
	git init -q -b main --object-format=$algo stdin-$algo &&
	git -C stdin-$algo index-pack --stdin <stdout.pack >indexed &&
	git -C $r for-each-ref --format="create %(refname) %(objectname)" >refs.in &&
	git -C stdin-$algo update-ref --stdin <refs.in &&
	git -C stdin-$algo fsck --full --no-dangling &&
	idx_set "$(ls stdin-$algo/.git/objects/pack/pack-*.idx)" $algo >actual &&
	test_cmp $r.reachable actual
'

test_expect_success "an object list: exactly those objects, names or not ($algo)" '
	git -C $r rev-list --objects --all >list &&
	awk "NR % 3 == 1" list >subset &&
	# some lines without a name, one repeated
	awk "NR % 2 == 0 { print \$1; next } { print }" subset >input &&
	head -n 5 subset >>input &&
	pack=$(gp_pack $r "$out/list" <input) &&
	git_accepts $r "$pack" &&
	cut -d" " -f1 subset | sort >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual
'

test_expect_success "--no-reuse-delta: new deltas git accepts, within 5% of git's size ($algo)" '
	echo | git -C $r pack-objects -q --revs --all --stdout --no-reuse-delta \
		--window=10 --depth=50 --threads=1 >git.pack &&
	pack=$(echo | gp_pack $r "$out/f" --revs --all --no-reuse-delta \
		--window=10 --depth=50 --threads=1) &&
	git_accepts $r "$pack" &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.reachable actual &&
	chain=$(max_chain "${pack%.pack}.idx" $r) &&
	test $chain -gt 1 && test $chain -le 50 &&
	git -C $r verify-pack -v "${pack%.pack}.idx" >vp &&
	deltas=$(awk "NF == 7" vp | wc -l) &&
	git_size=$(wc -c <git.pack) &&
	gp_size=$(wc -c <"$pack") &&
	echo "--no-reuse-delta ($algo): git $git_size bytes, gitpack $gp_size bytes, $deltas deltas, longest chain $chain" &&
	test $deltas -gt 500 &&
	test $((gp_size * 100)) -le $((git_size * 105))
'

test_expect_success GITPACK_IS_GITPACK "the same input and options give the same pack, with 4 threads ($algo)" '
	echo | gitpack -C $r pack-objects -q --revs --all --no-reuse-delta \
		--threads=4 --stdout >one.pack &&
	echo | gitpack -C $r pack-objects -q --revs --all --no-reuse-delta \
		--threads=4 --stdout >two.pack &&
	test_cmp_bin one.pack two.pack &&
	rm -rf threads-$algo &&
	git init -q --object-format=$algo threads-$algo &&
	git -C threads-$algo index-pack --stdin <one.pack >/dev/null &&
	git -C threads-$algo verify-pack "$(ls "$PWD"/threads-$algo/.git/objects/pack/pack-*.idx)"
'

test_expect_success "--depth=3 --no-reuse-delta: no chain longer than 3 ($algo)" '
	pack=$(echo | gp_pack $r "$out/d3f" --revs --all --no-reuse-delta --depth=3) &&
	git_accepts $r "$pack" &&
	test "$(max_chain "${pack%.pack}.idx" $r)" = 3
'

test_expect_success "--depth=3 reusing git's depth-50 chains: none longer than 3 ($algo)" '
	pack=$(echo | gp_pack $r "$out/d3" --revs --all --depth=3) &&
	git_accepts $r "$pack" &&
	test "$(max_chain "${pack%.pack}.idx" $r)" = 3 &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.reachable actual &&
	# all from the base pack alone: nothing but reuse
	midx_role $r base >in &&
	pack=$(gp_pack $r "$out/d3b" --stdin-packs --depth=3 <in) &&
	git_accepts $r "$pack" &&
	test "$(max_chain "${pack%.pack}.idx" $r)" = 3 &&
	pack=$(gp_pack $r "$out/d1b" --stdin-packs --depth=1 <in) &&
	git_accepts $r "$pack" &&
	test "$(max_chain "${pack%.pack}.idx" $r)" = 1
'

test_expect_success "--delta-base-offset: OFS_DELTA entries; without: REF_DELTA ($algo)" '
	ofs=$(echo | gp_pack $r "$out/ofs" --revs --all --delta-base-offset) &&
	ref=$(echo | gp_pack $r "$out/ref" --revs --all) &&
	git_accepts $r "$ofs" &&
	git_accepts $r "$ref" &&
	entry_types "$ofs" $algo >ofs.types &&
	entry_types "$ref" $algo >ref.types &&
	cat ofs.types ref.types &&
	grep "^6 " ofs.types && ! grep "^7 " ofs.types &&
	grep "^7 " ref.types && ! grep "^6 " ref.types &&
	# the same objects, and with gitpack the same deltas
	if test_have_prereq GITPACK_IS_GITPACK
	then
		sed "s/^6 /D /" ofs.types >expect &&
		sed "s/^7 /D /" ref.types >actual &&
		test_cmp expect actual
	fi &&
	idx_set "${ofs%.pack}.idx" $algo >expect &&
	idx_set "${ref%.pack}.idx" $algo >actual &&
	test_cmp expect actual
'

test_expect_success "--incremental, --unpacked --incremental: the loose objects the refs reach ($algo)" '
	pack=$(echo | gp_pack $r "$out/incremental" --revs --all --incremental) &&
	git_accepts $r "$pack" &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.loose actual &&
	# as git repack (without -a) asks for them
	pack=$(echo | gp_pack $r "$out/unpinc" --revs --all --unpacked --incremental) &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.loose actual &&
	echo | git -C $r pack-objects -q --revs --all --unpacked --incremental --stdout >git.pack &&
	stream_set $r "$PWD/git.pack" >expect &&
	test_cmp expect actual
'

# Git's --unpacked only leaves out packed commits: the trees, blobs
# and tags they reach that are packed go in all the same (git rev-list
# --objects --unpacked); gitpack leaves out every packed object.
test_expect_success GITPACK_IS_GITPACK "--unpacked: the loose objects the refs reach ($algo)" '
	pack=$(echo | gp_pack $r "$out/unpacked" --revs --all --unpacked) &&
	git_accepts $r "$pack" &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp $r.loose actual &&
	git -C $r rev-list --objects --all --unpacked | cut -d" " -f1 | sort >git &&
	comm -13 git actual >more &&
	test_must_be_empty more
'

test_expect_success "--honor-pack-keep, --keep-pack: the objects of those packs left out ($algo)" '
	role_set $r $algo kept >kept &&
	role_set $r $algo mid >mid &&
	pack=$(echo | gp_pack $r "$out/hpk" --revs --all --honor-pack-keep) &&
	git_accepts $r "$pack" &&
	comm -23 $r.reachable kept >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual &&
	echo | git -C $r pack-objects -q --revs --all --honor-pack-keep --stdout >git.pack &&
	stream_set $r "$PWD/git.pack" >expect &&
	test_cmp expect actual &&

	pack=$(echo | gp_pack $r "$out/kp" --revs --all --keep-pack=$(midx_role $r mid)) &&
	git_accepts $r "$pack" &&
	comm -23 $r.reachable mid >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual &&

	pack=$(echo | gp_pack $r "$out/both" --revs --all --honor-pack-keep \
		--keep-pack=$(midx_role $r mid)) &&
	sort -u kept mid | comm -23 $r.reachable - >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual &&
	echo | git -C $r pack-objects -q --revs --all --honor-pack-keep \
		--keep-pack=$(midx_role $r mid) --stdout >git.pack &&
	stream_set $r "$PWD/git.pack" >expect &&
	test_cmp expect actual
'

test_expect_success "an object list with --honor-pack-keep ($algo)" '
	git -C $r rev-list --objects --all >list &&
	role_set $r $algo kept >kept &&
	pack=$(gp_pack $r "$out/listkeep" --honor-pack-keep <list) &&
	comm -23 $r.reachable kept >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual
'

# (git takes --unpacked for --revs and reads the list as revisions)
test_expect_success "--unpacked without --revs: stdin holds revisions, as git reads it ($algo)" '
	git -C $r for-each-ref --format="%(objectname)" >tips &&
	pack=$(gp_pack $r "$out/listunpacked" --unpacked <tips) &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	# (git 2.55 leaves out every packed object, as here; 2.39 kept the
	# packed trees, blobs and tags a walk of loose commits meets)
	test_cmp $r.loose actual
'

test_expect_success "--stdin-packs: included packs minus excluded ones ($algo)" '
	role_set $r $algo base >base &&
	role_set $r $algo mid >mid &&
	role_set $r $algo kept >kept &&
	{
		midx_role $r base &&
		midx_role $r mid &&
		echo "^$(midx_role $r kept)"
	} >in &&
	pack=$(gp_pack $r "$out/sp" --stdin-packs <in) &&
	git_accepts $r "$pack" &&
	sort -u base mid | comm -23 - kept >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual &&
	git -C $r pack-objects -q --stdin-packs --stdout <in >git.pack &&
	stream_set $r "$PWD/git.pack" >expect &&
	test_cmp expect actual &&
	# a pack that is not there
	echo pack-0000.pack >bad.in &&
	test_must_fail gitpack -C $r pack-objects -q --stdin-packs "$out/bad" <bad.in 2>err &&
	grep "pack-0000.pack" err
'

test_expect_success "--stdin-packs --unpacked: every loose object too ($algo)" '
	{
		midx_role $r mid &&
		echo "^$(midx_role $r base)"
	} >in &&
	pack=$(gp_pack $r "$out/spu" --stdin-packs --unpacked <in) &&
	git_accepts $r "$pack" &&
	role_set $r $algo mid >mid &&
	role_set $r $algo base >base &&
	{
		comm -23 mid base &&
		cat $r.loose $r.unreachable
	} | sort -u >expect &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_cmp expect actual &&
	git -C $r pack-objects -q --stdin-packs --unpacked --stdout <in >git.pack &&
	stream_set $r "$PWD/git.pack" >expect &&
	test_cmp expect actual
'

test_expect_success "--local: objects of an alternate left out ($algo)" '
	rm -rf shared-$algo &&
	git clone -q --shared $r shared-$algo &&
	(
		cd shared-$algo &&
		echo "only here" >here.txt &&
		git add here.txt &&
		test_tick &&
		git commit -q -m "only in the clone"
	) &&
	pack=$(echo | gp_pack shared-$algo "$out/local" --revs --all --local) &&
	git_accepts shared-$algo "$pack" &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test_line_count = 3 actual &&
	echo | git -C shared-$algo pack-objects -q --revs --all --local --stdout >git.pack &&
	stream_set shared-$algo "$PWD/git.pack" >expect &&
	test_cmp expect actual &&
	pack=$(echo | gp_pack shared-$algo "$out/nolocal" --revs --all) &&
	idx_set "${pack%.pack}.idx" $algo >actual &&
	test $(wc -l <actual) -gt 1000
'

test_expect_success "--non-empty writes nothing for no objects ($algo)" '
	rm -rf "$out/ne" && mkdir -p "$out/ne" &&
	gitpack -C $r pack-objects -q --non-empty "$out/ne/pack" </dev/null >hash &&
	test_must_be_empty hash &&
	fail_clean "$out/ne" &&
	# without --non-empty: an empty pack, as git writes it
	gitpack -C $r pack-objects -q "$out/ne/pack" </dev/null >hash &&
	test_line_count = 1 hash &&
	git -C $r pack-objects -q --stdout </dev/null >git.pack &&
	test_cmp_bin git.pack "$out/ne/pack-$(cat hash).pack"
'

test_expect_success "pack.writeReverseIndex=false: no .rev ($algo)" '
	git -C $r rev-parse HEAD >one &&
	git -C $r config pack.writeReverseIndex false &&
	test_when_finished "git -C $r config --unset pack.writeReverseIndex" &&
	pack=$(gp_pack $r "$out/norev" <one) &&
	test_path_is_missing "${pack%.pack}.rev" &&
	git -C $r verify-pack "${pack%.pack}.idx"
'

test_expect_success "--write-bitmap-index: git tests the bitmap of the pack alone ($algo)" '
	pack=$(echo | gp_pack $r "$out/bitmap" --revs --all --write-bitmap-index) &&
	test_path_is_file "${pack%.pack}.bitmap" &&
	git_accepts $r "$pack" &&
	install_alone $r "$pack" $algo bitmap-$algo &&
	# (git selects no bitmap for HEAD here)
	if test_have_prereq GITPACK_IS_GITPACK
	then
		git -C bitmap-$algo rev-list --test-bitmap HEAD >/dev/null 2>err &&
		grep "^OK!\$" err
	fi &&
	git -C bitmap-$algo rev-list --count --objects --all >expect &&
	git -C bitmap-$algo rev-list --use-bitmap-index --count --objects --all >actual &&
	test_cmp expect actual &&
	test "$(cat actual)" = "$(wc -l <$r.reachable)" &&
	git -C bitmap-$algo rev-list --objects --all | cut -d" " -f1 | sort >expect &&
	git -C bitmap-$algo rev-list --use-bitmap-index --objects --all | cut -d" " -f1 | sort >actual &&
	test_cmp expect actual
'

test_expect_success "a missing object: an error naming it, no file left ($algo)" '
	missing=$(echo "not in the repository" | git -C $r hash-object --stdin) &&
	! git -C $r cat-file -e $missing &&
	{ git -C $r rev-parse HEAD && echo $missing; } >in &&
	rm -rf "$out/err" && mkdir -p "$out/err" &&
	test_must_fail gitpack -C $r pack-objects -q "$out/err/pack" <in >stdout 2>err &&
	cat err &&
	grep "$missing" err &&
	test_must_be_empty stdout &&
	fail_clean "$out/err" &&
	# in a list of revisions
	echo $missing >in &&
	test_must_fail gitpack -C $r pack-objects -q --revs "$out/err/pack" <in 2>err &&
	grep "$missing" err &&
	fail_clean "$out/err"
'

test_expect_success "a line that is not an object name: expected object ID ($algo)" '
	rm -rf "$out/err" && mkdir -p "$out/err" &&
	lines="garbage
$(git -C $r rev-parse HEAD | cut -c2-)" &&
	# git takes the name as an object name, with an empty path
	if test_have_prereq GITPACK_IS_GITPACK
	then
		lines="$lines
$(git -C $r rev-parse HEAD)x"
	fi &&
	echo "$lines" >lines &&
	while read -r line
	do
		{ git -C $r rev-parse HEAD~1 && echo "$line"; } >in &&
		test_must_fail gitpack -C $r pack-objects -q "$out/err/pack" <in 2>err &&
		grep "expected object ID" err &&
		fail_clean "$out/err" || return 1
	done <lines &&
	# a SHA-1 name in a SHA-256 repository is not one either
	if test $algo = sha256
	then
		echo 0123456789012345678901234567890123456789 >in &&
		test_must_fail gitpack -C $r pack-objects -q "$out/err/pack" <in 2>err &&
		grep "expected object ID" err &&
		fail_clean "$out/err"
	fi
'

test_expect_success "a damaged stored delta: an error naming its pack, no file left ($algo)" '
	rm -rf damaged-$algo &&
	cp -R $r damaged-$algo &&
	cp $r.packs damaged-$algo.packs &&
	base=$(midx_role damaged-$algo base) &&
	bpack=$PWD/$(midx_pack_dir damaged-$algo)/$base &&
	git -C damaged-$algo verify-pack -v "${bpack%.pack}.idx" >vp &&
	# a blob delta nothing else is a delta of: only its copy reads it
	awk "NF == 7 { print \$7 }" vp | sort -u >bases &&
	awk "NF == 7 && \$2 == \"blob\" && \$4 > 24 { print \$1, \$4, \$5 }" vp |
		sort >deltas &&
	join -v 1 deltas bases | head -n 1 >victim &&
	test_line_count = 1 victim &&
	read oid len ofs <victim &&
	corrupt_byte "$bpack" $((ofs + len - 6)) &&
	rm -rf "$out/dmg" && mkdir -p "$out/dmg" &&
	# copying it verbatim: its CRC is checked
	echo | test_must_fail gitpack -C damaged-$algo pack-objects -q --revs --all \
		"$out/dmg/pack" 2>err &&
	cat err &&
	grep "$base" err &&
	grep "CRC" err &&
	fail_clean "$out/dmg" &&
	# inflating it
	echo | test_must_fail gitpack -C damaged-$algo pack-objects -q --revs --all \
		--no-reuse-object "$out/dmg/pack" 2>err &&
	cat err &&
	grep "$base" err &&
	fail_clean "$out/dmg" &&
	# git refuses too (to a file: git checks no CRC for --stdout)
	rm -rf "$out/dmg-git" && mkdir -p "$out/dmg-git" &&
	! git -C damaged-$algo pack-objects -q --revs --all "$out/dmg-git/pack" \
		</dev/null >/dev/null
'

test_expect_success GITPACK_IS_GITPACK "--stdout does not stream a damaged stored delta either ($algo)" '
	echo | test_must_fail gitpack -C damaged-$algo pack-objects -q --revs --all \
		--stdout >stdout.pack 2>err &&
	cat err &&
	grep "$(midx_role damaged-$algo base)" err &&
	grep "CRC" err &&
	# what was streamed is cut short: no trailing checksum makes it a pack
	! git -C damaged-$algo index-pack -o "$PWD/cut.idx" "$PWD/stdout.pack"
'

test_expect_success "a damaged whole object: an error naming its pack, no file left ($algo)" '
	rm -rf damaged2-$algo &&
	cp -R $r damaged2-$algo &&
	cp $r.packs damaged2-$algo.packs &&
	mid=$(midx_role damaged2-$algo mid) &&
	mpack=$PWD/$(midx_pack_dir damaged2-$algo)/$mid &&
	git -C damaged2-$algo verify-pack -v "${mpack%.pack}.idx" >vp &&
	awk "NF == 5 && \$2 == \"blob\" && \$4 > 200 { print \$1, \$4, \$5; exit }" vp >victim &&
	test_line_count = 1 victim &&
	read oid len ofs <victim &&
	corrupt_byte "$mpack" $((ofs + len / 2)) &&
	rm -rf "$out/dmg" && mkdir -p "$out/dmg" &&
	for opt in --reuse-object --no-reuse-object --no-reuse-delta
	do
		echo | test_must_fail gitpack -C damaged2-$algo pack-objects -q \
			--revs --all $opt "$out/dmg/pack" 2>err &&
		cat err &&
		grep "$mid" err &&
		fail_clean "$out/dmg" || return 1
	done
'

test_expect_success GITPACK_IS_GITPACK "a damaged tree: the message names the pack once ($algo)" '
	rm -rf damaged3-$algo &&
	cp -R $r damaged3-$algo &&
	cp $r.packs damaged3-$algo.packs &&
	base=$(midx_role damaged3-$algo base) &&
	bpack=$PWD/$(midx_pack_dir damaged3-$algo)/$base &&
	git -C damaged3-$algo verify-pack -v "${bpack%.pack}.idx" >vp &&
	awk "NF == 7 { print \$7 }" vp | sort -u >bases &&
	awk "NF == 7 && \$2 == \"tree\" && \$4 > 24 { print \$1, \$4, \$5 }" vp |
		sort >deltas &&
	join -v 1 deltas bases | head -n 1 >victim &&
	test_line_count = 1 victim &&
	read oid len ofs <victim &&
	corrupt_byte "$bpack" $((ofs + len - 6)) &&
	echo | test_must_fail gitpack -C damaged3-$algo pack-objects -q --revs --all \
		--stdout >/dev/null 2>err &&
	cat err &&
	test "$(grep -o "$base" err | wc -l)" = 1
'

# A stealth corruption: a REF_DELTA whose base name is swapped for another
# object of the same size, with its CRC made right. The delta applies
# cleanly and gives the wrong data; only hashing what was read tells.
test_expect_success "a delta against the wrong base of the same size: refused by name, no file left ($algo)" '
	rm -rf stealth-$algo &&
	git init -q --object-format=$algo stealth-$algo &&
	awk "BEGIN { for (i = 0; i < 300; i++) print \"line \" i \" of a file that deltas well\" }" \
		>stealth-$algo/a &&
	sed "s/line/LINE/" stealth-$algo/a >stealth-$algo/a2 &&
	{ cat stealth-$algo/a && echo "one more line"; } >stealth-$algo/b &&
	sed "s/line/LINE/" stealth-$algo/b >stealth-$algo/b2 &&
	git -C stealth-$algo add a a2 b b2 &&
	git -C stealth-$algo commit -qm files &&
	git -C stealth-$algo -c repack.useDeltaBaseOffset=false repack -adfq &&
	spack=$PWD/$(ls stealth-$algo/.git/objects/pack/pack-*.pack) &&
	git -C stealth-$algo verify-pack -v "${spack%.pack}.idx" >vp &&
	for f in a a2 b b2
	do
		echo "$(git -C stealth-$algo rev-parse HEAD:$f) $f" || return 1
	done >names &&
	# a delta between two of the files, and the base sibling of its base
	awk "NR == FNR { name[\$1] = \$2; next }
	     NF == 7 && (\$1 in name) && (\$7 in name) { print \$1, \$4, \$5, name[\$7]; exit }" \
		names vp >victim &&
	test_line_count = 1 victim &&
	read oid len ofs base <victim &&
	case $base in *2) sibling=${base%2} ;; *) sibling=${base}2 ;; esac &&
	wrong=$(awk -v f=$sibling "\$2 == f { print \$1 }" names) &&
	chmod u+w "$spack" "${spack%.pack}.idx" &&
	python3 - "$spack" "${spack%.pack}.idx" $ofs $len $oid $wrong <<-\EOF &&
	import sys, zlib
	pack, idx, ofs, length = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
	target, wrong = bytes.fromhex(sys.argv[5]), bytes.fromhex(sys.argv[6])
	data = bytearray(open(pack, "rb").read())
	hdr = 1
	while data[ofs + hdr - 1] & 0x80:
	    hdr += 1
	assert (data[ofs] >> 4) & 7 == 7
	data[ofs + hdr:ofs + hdr + len(wrong)] = wrong
	open(pack, "wb").write(data)
	ix = bytearray(open(idx, "rb").read())
	n = int.from_bytes(ix[8 + 255 * 4:8 + 256 * 4], "big")
	names = 8 + 256 * 4
	k = [bytes(ix[names + i * len(target):names + (i + 1) * len(target)]) for i in range(n)].index(target)
	crc = zlib.crc32(bytes(data[ofs:ofs + length]))
	at = names + n * len(target) + 4 * k
	ix[at:at + 4] = crc.to_bytes(4, "big")
	open(idx, "wb").write(ix)
	EOF
	rm -rf "$out/stealth" && mkdir -p "$out/stealth" &&
	echo | test_must_fail gitpack -C stealth-$algo pack-objects -q --revs --all \
		--no-reuse-delta "$out/stealth/pack" 2>err &&
	cat err &&
	grep "$oid: its stored data hashes to another name" err &&
	fail_clean "$out/stealth"
'

test_expect_success "-h: usage, exit 0 as Git 2.55 ($algo)" '
	gitpack -C $r pack-objects -h >usage &&
	grep "^usage: git[a-z]* pack-objects" usage &&
	grep "stdin-packs" usage &&
	test_expect_code 129 gitpack -C $r pack-objects --no-such-option </dev/null 2>err &&
	grep "usage: git[a-z]* pack-objects" err &&
	# a base name and --stdout, or neither
	test_expect_code 129 gitpack -C $r pack-objects --stdout "$out/x" </dev/null &&
	test_expect_code 129 gitpack -C $r pack-objects </dev/null
'

test_expect_success GITPACK_IS_GITPACK "--all implies --revs, as in git ($algo)" '
	gitpack -C $r pack-objects -q --all --stdout </dev/null >all.pack &&
	stream_set $r "$PWD/all.pack" >actual &&
	test_cmp $r.reachable actual
'

# The window keeps its best base longest and lets objects at the
# greatest depth go first, as git'\''s does: without that, 8-11% larger.
test_expect_success GITPACK_IS_GITPACK "a pack reusing deltas is within 5% of git's size ($algo)" '
	echo | git -C $r pack-objects -q --revs --all --threads=1 --stdout >git.pack &&
	echo | gitpack -C $r pack-objects -q --revs --all --threads=1 --stdout >gp.pack &&
	git_size=$(wc -c <git.pack) &&
	gp_size=$(wc -c <gp.pack) &&
	echo "reusing deltas ($algo): git $git_size bytes, gitpack $gp_size bytes" &&
	test $((gp_size * 100)) -le $((git_size * 105))
'

done

test_done
