#!/bin/sh

test_description='repack: the maintenance job, judged by stock git

A history written by stock git fast-import: commits 1-50 on main in one
pack ("base", with a side branch merged at commit 20, annotated tags
v10..v50 and lightweight tags light5..light45), then twelve packs of one
commit each (51-62, as twelve pushes would leave them), a pack whose only
branch was deleted ("gone": four unreachable objects), a pack with a
.keep file (63-67), three loose commits (68-70) with a loose annotated
tag, a lightweight tag and an unreachable loose blob.

Each mode of gitpack repack runs in a copy of it, and after every run
stock git checks the result: "git fsck --full", "git multi-pack-index
verify" when there is a multi-pack-index, "git rev-list --test-bitmap
HEAD" when there is a bitmap, the objects the refs reach are the same as
before, a "git clone --no-local" of it passes fsck, the kept pack is
still there, and the unreachable loose blob is still readable. Then what
the mode promises: which packs stay and go, what the new pack holds,
that -d leaves no loose object that is packed, that -A loosens the
unreachable objects of the packs it removes.

Geometric repacking is also checked on repositories whose pack sizes
(object counts) make the outcome known, against "git repack
--geometric=2 -d" in a copy of the same repository. The main job
(--geometric=2 --write-midx --write-bitmap-index -d) runs twice, then
again after new pushes. Errors: bad options, and a damaged pack (an
error naming it, nothing deleted, no temporary file left). SHA-1 and
SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"
. "$TEST_DIRECTORY/lib-midx.sh"

# rp_stream FIRST LAST: a git fast-import stream of commits FIRST..LAST
# of main. Commit k writes d<k%3>/f<k%5>.txt, 40 lines of which line
# k%40 names the commit (so versions of a file make good deltas, and
# the objects of commit k do not depend on FIRST). Commit 20 is followed
# by a side branch of two commits from commit 15, merged into main as
# commit 20 again. Commits 10, 20, ... get annotated tags v<k>, commits
# 5, 15, ... lightweight tags light<k>. When FIRST > 1, the first commit
# continues refs/heads/main.
rp_stream () {
	perl -e '
		use strict;
		my ($first, $last) = @ARGV;
		my $t0 = 1700000000;
		my $mark = 0;
		my %at;
		sub commit {
			my ($ref, $k, $msg, $from, $merge, $path, $body) = @_;
			my $when = $t0 + 60 * $k;
			$mark++;
			print "commit $ref\nmark :$mark\n";
			print "author A U Thor <author\@example.com> $when +0000\n";
			print "committer C O Mitter <committer\@example.com> $when +0000\n";
			print "data ", length($msg), "\n$msg\n";
			print "from $from\n" if defined $from;
			print "merge $merge\n" if defined $merge;
			print "M 100644 inline $path\ndata ", length($body), "\n$body\n\n";
			return ":$mark";
		}
		for my $k ($first .. $last) {
			my $path = "d" . $k % 3 . "/f" . $k % 5 . ".txt";
			my $body = join("", map {
				$_ == $k % 40 ? "changed in commit $k\n" : "line $_ of $path\n"
			} 0 .. 39);
			my $from = $k == $first && $first > 1 ? "refs/heads/main^0" : undef;
			$at{$k} = commit("refs/heads/main", $k, "commit $k\n", $from, undef,
					 $path, $body);
			if ($k == 20 && $first <= 15) {
				print "reset refs/heads/side\nfrom $at{15}\n\n";
				my $side;
				$side = commit("refs/heads/side", 15 + $_, "side $_\n", undef, undef,
					       "side.txt", "side line\n" x (5 * $_)) for 1 .. 2;
				$at{$k} = commit("refs/heads/main", $k, "merge side\n", undef, $side,
						 "side.txt", "side line\n" x 12);
			}
			if ($k % 10 == 0) {
				my $msg = "release $k\n";
				print "tag v$k\nfrom $at{$k}\n";
				print "tagger C O Mitter <committer\@example.com> ", $t0 + 60 * $k, " +0000\n";
				print "data ", length($msg), "\n$msg\n";
			}
			print "reset refs/tags/light$k\nfrom $at{$k}\n\n" if $k % 10 == 5;
		}
	' "$1" "$2"
}

# rp_import DIR FIRST LAST [loose]: import commits FIRST..LAST into DIR,
# as one pack, or as loose objects with "loose".
rp_import () {
	if test "$4" = loose
	then
		gp_ri_limit_=100000
	else
		gp_ri_limit_=0
	fi &&
	rp_stream "$2" "$3" >"$1.stream" &&
	git -C "$1" -c fastimport.unpackLimit=$gp_ri_limit_ fast-import --quiet \
		<"$1.stream" &&
	rm -f "$1.stream"
}

# rp_import_gone DIR: a pack of one commit on a branch that is then
# deleted: four objects nothing reaches.
rp_import_gone () {
	cat >"$1.stream" <<-\EOF &&
	commit refs/heads/gone
	committer C O Mitter <committer@example.com> 1700009999 +0000
	data 12
	abandoned!

	M 100644 inline gone/away.txt
	data 27
	work that nobody will need

	EOF
	git -C "$1" -c fastimport.unpackLimit=0 fast-import --quiet <"$1.stream" &&
	git -C "$1" rev-list --objects refs/heads/gone | cut -d" " -f1 | sort >"$1.unreachable" &&
	git -C "$1" update-ref -d refs/heads/gone &&
	rm -f "$1.stream"
}

# rp_config DIR: no "gc --auto" in the background, and no reflogs: git
# appends to a reflog in place, which would write through the hard
# links of rp_copy into every copy (and gitpack does not walk reflogs).
rp_config () {
	git -C "$1" config gc.auto 0 &&
	git -C "$1" config core.logAllRefUpdates false &&
	rm -rf "$1/.git/logs"
}

# rp_repo ALGO DIR: the repository described above. DIR.packs names the
# packs by role (base, small51..small62, gone, kept; see midx_role);
# DIR.reachable lists the objects the refs reach, DIR.unreachable the
# objects of the gone pack, DIR.blob the unreachable loose blob.
rp_repo () {
	git init -q -b main --object-format="$1" "$2" &&
	rp_config "$2" &&
	rp_import "$2" 1 50 &&
	echo "base $(midx_packs "$2")" >"$2.packs" &&
	for k in $(test_seq 51 62)
	do
		midx_new_pack_ "$2" small$k rp_import "$2" $k $k || return 1
	done &&
	midx_new_pack_ "$2" gone rp_import_gone "$2" &&
	midx_new_pack_ "$2" kept rp_import "$2" 63 67 &&
	gp_rr_kept_=$(midx_role "$2" kept) &&
	echo "kept by t7700" >"$(midx_pack_dir "$2")/${gp_rr_kept_%.pack}.keep" &&
	rp_import "$2" 68 70 loose &&
	git -C "$2" tag light-loose main~1 &&
	echo "nothing reaches this" | git -C "$2" hash-object -w --stdin >"$2.blob" &&
	rp_reachable "$2" >"$2.reachable"
}

# rp_reachable DIR: the sorted names of the objects the refs of DIR reach.
rp_reachable () {
	git -C "$1" rev-list --objects --all | cut -d" " -f1 | sort
}

# rp_pack_set DIR PACK: the sorted object names of PACK (pack-X.pack).
rp_pack_set () {
	git -C "$1" show-index <"$(midx_pack_dir "$1")/${2%.pack}.idx" |
		cut -d" " -f2 | sort
}

# rp_packs_set DIR FILE: the sorted object names of the packs FILE lists.
rp_packs_set () {
	while read gp_rps_pack_
	do
		rp_pack_set "$1" "$gp_rps_pack_" || return 1
	done <"$2" | sort -u
}

# rp_loose_set DIR: the sorted names of the loose objects of DIR.
rp_loose_set () {
	(
		cd "$1/.git/objects" &&
		find ?? -type f 2>/dev/null | tr -d / | sort
	)
}

# rp_copy SRC DST: a copy of the repository SRC (shared files, see
# midx_copy) with its lists (SRC.packs, .reachable, ...).
rp_copy () {
	midx_copy "$1" "$2" &&
	for gp_rc_ext_ in packs reachable unreachable blob
	do
		if test -f "$1.$gp_rc_ext_"
		then
			cp "$1.$gp_rc_ext_" "$2.$gp_rc_ext_" || return 1
		fi
	done
}

# rp_repack DIR ARGS...: gitpack repack ARGS in DIR, with the pack
# lists around it: DIR.before and DIR.after (the .pack names), DIR.new
# (the packs that appeared), DIR.removed (the packs that went away),
# DIR.stayed (the packs that stayed), DIR.loose-before. Then rp_check,
# and with -d rp_no_packed_loose, without -d that no pack went away.
rp_repack () {
	gp_rp_dir_=$1
	shift
	midx_packs "$gp_rp_dir_" >"$gp_rp_dir_.before" &&
	rp_loose_set "$gp_rp_dir_" >"$gp_rp_dir_.loose-before" &&
	gitpack -C "$gp_rp_dir_" repack "$@" &&
	midx_packs "$gp_rp_dir_" >"$gp_rp_dir_.after" &&
	comm -13 "$gp_rp_dir_.before" "$gp_rp_dir_.after" >"$gp_rp_dir_.new" &&
	comm -23 "$gp_rp_dir_.before" "$gp_rp_dir_.after" >"$gp_rp_dir_.removed" &&
	comm -12 "$gp_rp_dir_.before" "$gp_rp_dir_.after" >"$gp_rp_dir_.stayed" &&
	echo "repack $*: new $(wc -l <"$gp_rp_dir_.new"), removed $(wc -l <"$gp_rp_dir_.removed"), stayed $(wc -l <"$gp_rp_dir_.stayed")" &&
	case " $* " in
	*" -d "*)
		rp_no_packed_loose "$gp_rp_dir_" ;;
	*)
		test_must_be_empty "$gp_rp_dir_.removed" ;;
	esac &&
	rp_check "$gp_rp_dir_"
}

# rp_check DIR: what must hold after any repack of DIR: git fsck --full;
# git multi-pack-index verify when there is one; git rev-list
# --test-bitmap HEAD when there is a bitmap; the objects the refs reach
# are DIR.reachable; a clone (git clone --no-local) passes fsck; the
# kept pack (if DIR.packs names one) and its .keep are still there; the
# unreachable loose blob (DIR.blob) can still be read; and no temporary
# file is left in the pack directory.
rp_check () {
	gp_rc_pd_=$(midx_pack_dir "$1") &&
	git -C "$1" fsck --full --no-dangling --no-progress &&
	if test -f "$gp_rc_pd_/multi-pack-index"
	then
		git -C "$1" multi-pack-index verify --no-progress
	fi &&
	if test -n "$(rp_bitmaps "$1")"
	then
		git -C "$1" rev-list --test-bitmap HEAD >/dev/null 2>"$1.test-bitmap" &&
		grep "^OK!\$" "$1.test-bitmap"
	fi &&
	rp_reachable "$1" >"$1.reached" &&
	test_cmp "$1.reachable" "$1.reached" &&
	rm -rf "$1.clone" &&
	git clone -q --bare --no-local "$1" "$1.clone" &&
	git -C "$1.clone" fsck --full --no-progress &&
	rm -rf "$1.clone" &&
	if test -f "$1.packs" && grep "^kept " "$1.packs" >/dev/null
	then
		gp_rc_kept_=$(midx_role "$1" kept) &&
		test_path_is_file "$gp_rc_pd_/$gp_rc_kept_" &&
		test_path_is_file "$gp_rc_pd_/${gp_rc_kept_%.pack}.idx" &&
		test_path_is_file "$gp_rc_pd_/${gp_rc_kept_%.pack}.keep"
	fi &&
	if test -f "$1.blob"
	then
		git -C "$1" cat-file -e "$(cat "$1.blob")"
	fi &&
	ls -a "$gp_rc_pd_" >"$1.files" &&
	sed -e "/^pack-[0-9a-f]*\.\(pack\|idx\|rev\|bitmap\|keep\|promisor\)\$/d" \
		-e "/^multi-pack-index\(-[0-9a-f]*\.\(rev\|bitmap\)\)\{0,1\}\$/d" \
		-e "/^\.\.\{0,1\}\$/d" "$1.files" >"$1.stray" &&
	test_must_be_empty "$1.stray"
}

# rp_no_packed_loose DIR: no loose object of DIR is also in a pack (as
# after git prune-packed).
rp_no_packed_loose () {
	git -C "$1" count-objects -v >"$1.count" &&
	grep "^prune-packable: 0\$" "$1.count"
}

# rp_state DIR: what a failed repack must leave as it was: the names in
# the pack directory and the loose objects.
rp_state () {
	ls -a "$(midx_pack_dir "$1")" &&
	rp_loose_set "$1"
}

# rp_midx_packs DIR ALGO: the .idx names the MIDX of DIR lists, sorted.
rp_midx_packs () {
	midx_dump "$(midx_pack_dir "$1")/multi-pack-index" "$2" >"$1.dump" &&
	sed -n "s/^pack [0-9]* //p" "$1.dump" | sort
}

# rp_check_midx DIR ALGO: DIR has a MIDX that lists exactly the packs
# of the pack directory.
rp_check_midx () {
	rp_midx_packs "$1" "$2" >"$1.midx-packs" &&
	(cd "$(midx_pack_dir "$1")" && ls pack-*.idx) >"$1.idx-files" &&
	test_cmp "$1.idx-files" "$1.midx-packs"
}

# rp_bitmaps DIR: the bitmap files of DIR's pack directory.
rp_bitmaps () {
	(cd "$(midx_pack_dir "$1")" && ls) | sed -n "/\.bitmap\$/p"
}

# rp_bitmap_count DIR: git counts the objects the refs reach with the
# bitmap as without it.
rp_bitmap_count () {
	git -C "$1" rev-list --count --objects --all >"$1.count-walk" &&
	git -C "$1" rev-list --use-bitmap-index --count --objects --all >"$1.count-bitmap" &&
	test_cmp "$1.count-walk" "$1.count-bitmap" &&
	test "$(cat "$1.count-bitmap")" = "$(wc -l <"$1.reachable")"
}

# rp_role_list DIR ROLE...: the pack names of ROLEs (see midx_role), sorted.
rp_role_list () {
	gp_rrl_dir_=$1
	shift
	for gp_rrl_role_
	do
		midx_role "$gp_rrl_dir_" "$gp_rrl_role_" || return 1
	done | sort
}

# rp_max_chain DIR PACK: the longest delta chain of PACK (0 without
# deltas) and, in DIR.deltas, how many deltas it has; by git verify-pack.
rp_max_chain () {
	git -C "$1" verify-pack -v "$PWD/$(midx_pack_dir "$1")/${2%.pack}.idx" >"$1.vp" &&
	awk "NF == 7" "$1.vp" | wc -l >"$1.deltas" &&
	sed -n "s/^chain length = \([0-9]*\): .*/\1/p" "$1.vp" | sort -n | tail -n 1 >"$1.chain" &&
	echo $(($(cat "$1.chain") + 0))
}

# rp_vs_git DIR ARGS...: "git repack -q ARGS" in a copy of DIR (DIR.git),
# then rp_repack DIR ARGS; both leave the same number of packs, the same
# old packs stay, the new packs hold the same objects and the same loose
# objects remain.
rp_vs_git () {
	gp_rvg_dir_=$1
	shift
	rp_copy "$gp_rvg_dir_" "$gp_rvg_dir_.git" &&
	midx_packs "$gp_rvg_dir_.git" >"$gp_rvg_dir_.git.before" &&
	git -C "$gp_rvg_dir_.git" repack -q "$@" &&
	midx_packs "$gp_rvg_dir_.git" >"$gp_rvg_dir_.git.after" &&
	comm -13 "$gp_rvg_dir_.git.before" "$gp_rvg_dir_.git.after" >"$gp_rvg_dir_.git.new" &&
	comm -12 "$gp_rvg_dir_.git.before" "$gp_rvg_dir_.git.after" >"$gp_rvg_dir_.git.stayed" &&
	rp_repack "$gp_rvg_dir_" "$@" &&
	test_cmp "$gp_rvg_dir_.git.stayed" "$gp_rvg_dir_.stayed" &&
	test "$(wc -l <"$gp_rvg_dir_.git.new")" = "$(wc -l <"$gp_rvg_dir_.new")" &&
	rp_packs_set "$gp_rvg_dir_.git" "$gp_rvg_dir_.git.new" >"$gp_rvg_dir_.git.new-objects" &&
	rp_packs_set "$gp_rvg_dir_" "$gp_rvg_dir_.new" >"$gp_rvg_dir_.new-objects" &&
	test_cmp "$gp_rvg_dir_.git.new-objects" "$gp_rvg_dir_.new-objects" &&
	rp_loose_set "$gp_rvg_dir_.git" >"$gp_rvg_dir_.git.loose" &&
	rp_loose_set "$gp_rvg_dir_" >"$gp_rvg_dir_.loose" &&
	test_cmp "$gp_rvg_dir_.git.loose" "$gp_rvg_dir_.loose"
}

# rp_sized_repo ALGO DIR SIZE...: commits 1-50 of rp_stream (214
# objects) in packs of SIZE objects each, in the order of "git rev-list
# --objects --all" (the last SIZE may be "rest"), and nothing else. The
# packs are named p1, p2, ... in DIR.packs.
rp_sized_repo () {
	gp_rsr_dir_=$2 &&
	git init -q -b main --object-format="$1" "$gp_rsr_dir_" &&
	rp_config "$gp_rsr_dir_" &&
	rp_import "$gp_rsr_dir_" 1 50 &&
	gp_rsr_all_=$(midx_packs "$gp_rsr_dir_") &&
	git -C "$gp_rsr_dir_" rev-list --objects --all | cut -d" " -f1 >"$gp_rsr_dir_.objects" &&
	shift 2 &&
	: >"$gp_rsr_dir_.packs" &&
	gp_rsr_from_=1 &&
	gp_rsr_k_=0 &&
	for gp_rsr_size_
	do
		gp_rsr_k_=$((gp_rsr_k_ + 1)) &&
		if test "$gp_rsr_size_" = rest
		then
			gp_rsr_to_=$(wc -l <"$gp_rsr_dir_.objects")
		else
			gp_rsr_to_=$((gp_rsr_from_ + gp_rsr_size_ - 1))
		fi &&
		sed -n "${gp_rsr_from_},${gp_rsr_to_}p" "$gp_rsr_dir_.objects" >"$gp_rsr_dir_.slice" &&
		midx_new_pack_ "$gp_rsr_dir_" p$gp_rsr_k_ eval \
			"git -C \"$gp_rsr_dir_\" pack-objects -q .git/objects/pack/pack <\"$gp_rsr_dir_.slice\" >/dev/null" &&
		gp_rsr_from_=$((gp_rsr_to_ + 1)) || return 1
	done &&
	rm -f "$(midx_pack_dir "$gp_rsr_dir_")/${gp_rsr_all_%.pack}".* &&
	rp_reachable "$gp_rsr_dir_" >"$gp_rsr_dir_.reachable" &&
	git -C "$gp_rsr_dir_" fsck --full --no-progress
}

# rp_big_repo ALGO DIR: twelve commits, each adding 200 KB of random
# bytes (f<k>.bin) and changing one line of a 100 KB text of random
# lines (so its versions are deltas of each other, but do not
# compress): about 3 MB of packed objects in one pack, for
# --max-pack-size. DIR.reachable lists the objects the refs reach.
rp_big_repo () {
	git init -q -b main --object-format="$1" "$2" &&
	rp_config "$2" &&
	perl -e '
		binmode STDOUT;
		srand(7);
		my @lines = map {
			join("", map { chr(48 + int(rand(75))) } 1..60) . "\n"
		} 1..1600;
		for my $k (1..12) {
			my $bin = join("", map { chr(int(rand(256))) } 1..200000);
			$lines[$k * 100] = "commit $k\n";
			my $txt = join("", @lines);
			print "commit refs/heads/main\n";
			print "committer C O Mitter <c\@example.com> ", 1700000000 + $k, " +0000\n";
			print "data ", length("c$k"), "\nc$k\n";
			print "M 100644 inline f$k.bin\ndata ", length($bin), "\n$bin\n";
			print "M 100644 inline text.txt\ndata ", length($txt), "\n$txt\n";
		}
	' >"$2.stream" &&
	git -C "$2" -c fastimport.unpackLimit=0 fast-import --quiet <"$2.stream" &&
	rm -f "$2.stream" &&
	rp_reachable "$2" >"$2.reachable"
}

# rp_check_split DIR LIMIT: the packs DIR.new are at least three, none
# larger than LIMIT bytes, each one git verify-pack accepts alone (so no
# delta reaches into another pack), and together they hold every object
# the refs reach.
rp_check_split () {
	test_line_count -ge 3 "$1.new" &&
	while read gp_rcs_pack_
	do
		gp_rcs_path_=$PWD/$(midx_pack_dir "$1")/$gp_rcs_pack_ &&
		test "$(wc -c <"$gp_rcs_path_")" -le "$2" &&
		git -C "$1" verify-pack "${gp_rcs_path_%.pack}.idx" || return 1
	done <"$1.new" &&
	rp_packs_set "$1" "$1.new" >"$1.split-set" &&
	test_cmp "$1.reachable" "$1.split-set"
}

for algo in $test_hash_algos
do

b=base-$algo

test_expect_success "setup: 1 big pack, 12 small ones, a kept one, loose objects ($algo)" '
	rp_repo $algo $b &&
	midx_packs $b >packs &&
	test_line_count = 15 packs &&
	git -C $b rev-list --all >commits &&
	test_line_count = 73 commits &&
	git -C $b rev-list --merges --all >merges &&
	test_line_count = 1 merges &&
	git -C $b for-each-ref --format="%(objecttype) %(refname)" refs/tags >tags &&
	test "$(grep -c "^tag " tags)" = 7 &&
	test "$(grep -c "^commit " tags)" = 8 &&
	rp_loose_set $b >loose &&
	test_line_count = 14 loose &&
	test "$(rp_pack_set $b $(midx_role $b base) | wc -l)" = 214 &&
	for k in $(test_seq 51 62)
	do
		rp_pack_set $b $(midx_role $b small$k) >small &&
		test_line_count -ge 4 small &&
		test_line_count -le 5 small || return 1
	done &&
	test_line_count = 4 $b.unreachable &&
	rp_pack_set $b $(midx_role $b gone) >gone &&
	test_cmp $b.unreachable gone &&
	rp_check $b
'

test_expect_success "repack: the reachable loose objects go into a new pack, nothing is removed ($algo)" '
	r=inc-$algo &&
	rp_copy $b $r &&
	rp_repack $r &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.removed &&
	comm -12 $r.loose-before $r.reachable >expect &&
	test_line_count = 13 expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	rp_loose_set $r >actual &&
	test_cmp $r.loose-before actual
'

test_expect_success "repack -d: the same pack; no pack removed, no packed loose object left ($algo)" '
	r=incd-$algo &&
	rp_copy $b $r &&
	rp_repack $r -d &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.removed &&
	comm -12 $r.loose-before $r.reachable >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	rp_no_packed_loose $r &&
	rp_loose_set $r >actual &&
	test_cmp $r.blob actual
'

test_expect_success "repack -a: a pack of all that is reachable and not kept; every old pack stays ($algo)" '
	r=all-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.removed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	comm -23 $r.reachable kept >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	rp_loose_set $r >actual &&
	test_cmp $r.loose-before actual
'

test_expect_success "repack -a -d: the new pack and the kept one remain, the unreachable packed objects are dropped ($algo)" '
	r=ad-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	comm -23 $r.reachable kept >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	rp_loose_set $r >actual &&
	test_cmp $r.blob actual &&
	# as git drops them: nothing kept them
	for oid in $(cat $r.unreachable)
	do
		test_must_fail git -C $r cat-file -e $oid || return 1
	done
'

test_expect_success "repack -A -d: the unreachable objects of the removed packs are loose instead ($algo)" '
	r=Ad-$algo &&
	rp_copy $b $r &&
	rp_repack $r -A -d &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	comm -23 $r.reachable kept >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	sort $r.blob $r.unreachable >expect &&
	rp_loose_set $r >actual &&
	test_cmp expect actual &&
	for oid in $(cat $r.unreachable)
	do
		git -C $r cat-file -e $oid || return 1
	done
'

test_expect_success "repack -a -d -f: one new pack, with deltas ($algo)" '
	r=adf-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d -f &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	comm -23 $r.reachable kept >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	chain=$(rp_max_chain $r $(cat $r.new)) &&
	echo "-f: $(cat $r.deltas) deltas, longest chain $chain" &&
	test $(cat $r.deltas) -gt 100 &&
	test $chain -le 50
'

test_expect_success "repack -a -d -F: one new pack of everything reachable and not kept ($algo)" '
	r=adF-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d -F &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	comm -23 $r.reachable kept >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual
'

test_expect_success "repack -a -d -f --window=5 --depth=2 --threads=2: no chain longer than 2 ($algo)" '
	r=adw-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d -f --window=5 --depth=2 --threads=2 &&
	test_line_count = 1 $r.new &&
	chain=$(rp_max_chain $r $(cat $r.new)) &&
	echo "--depth=2: $(cat $r.deltas) deltas, longest chain $chain" &&
	test $(cat $r.deltas) -gt 50 &&
	test $chain -gt 0 &&
	test $chain -le 2
'

test_expect_success "repack -a -d -b, no kept pack: one pack and its bitmap, which git tests ($algo)" '
	r=adb-$algo &&
	rp_copy $b $r &&
	kept=$(midx_role $r kept) &&
	rm "$(midx_pack_dir $r)/${kept%.pack}.keep" &&
	sed -i "/^kept /d" $r.packs &&
	rp_repack $r -a -d -b &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.stayed &&
	new=$(cat $r.new) &&
	echo "${new%.pack}.bitmap" >expect &&
	rp_bitmaps $r >actual &&
	test_cmp expect actual &&
	rp_pack_set $r $new >actual &&
	test_cmp $r.reachable actual &&
	rp_bitmap_count $r
'

# rp_pack_order DIR PACK-OR-IDX: the object names of a pack, in pack order.
rp_pack_order () {
	git -C "$1" show-index <"$(midx_pack_dir "$1")/${2%.*}.idx" |
		sort -n | cut -d" " -f2
}

test_expect_success GITPACK_IS_GITPACK "repack -a -d -b again after pushes: the new pack follows the old bitmap, whose bitmaps it takes over ($algo)" '
	r=adb-$algo &&
	# git writes deltas right after their bases: not the order of a walk
	git -C $r repack -a -d -b -q &&
	old=$(rp_bitmaps $r) &&
	rp_pack_order $r $old >old-order &&
	for k in 71 72 73
	do
		rp_import $r $k $k || return 1
	done &&
	rp_reachable $r >$r.reachable &&
	rp_repack $r -a -d -b --progress 2>err &&
	test_line_count = 1 $r.new &&
	grep "^Bitmaps reused: [1-9][0-9]* of [0-9]*\$" err &&
	test "$(rp_bitmaps $r)" != "$old" &&
	rp_bitmap_count $r &&
	# the old objects come last, in their old order but for a few
	# written early (bases of new deltas): at least 9 in 10 pairs of
	# neighbours stay neighbours
	rp_pack_order $r $(cat $r.new) >new-order &&
	paste -d" " old-order $(sed 1d old-order >old-next && echo old-next) |
		sed "\$d" >old-pairs &&
	paste -d" " new-order $(sed 1d new-order >new-next && echo new-next) >new-pairs &&
	grep -F -x -f new-pairs old-pairs >kept-pairs &&
	test $(($(wc -l <kept-pairs) * 10)) -ge $(($(wc -l <old-pairs) * 9)) &&
	tail -n 1 old-order >expect &&
	tail -n 1 new-order >actual &&
	test_cmp expect actual
'

# Git packs the objects of kept packs too when it writes a pack bitmap
# (repack.packKeptObjects defaults to true with -b), so that the bitmap
# covers everything reachable; so does gitpack.
test_expect_success "repack -a -d -b with a kept pack: it succeeds, with a bitmap git tests, as in git ($algo)" '
	r=adbk-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d -b &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	new=$(cat $r.new) &&
	echo "${new%.pack}.bitmap" >expect &&
	rp_bitmaps $r >actual &&
	test_cmp expect actual &&
	rp_pack_set $r $new >actual &&
	test_cmp $r.reachable actual &&
	rp_bitmap_count $r
'

test_expect_success "setup: a clone that borrows from the repository (alternates), with two pushes ($algo)" '
	a=alt-$algo &&
	git clone -q --shared --no-checkout $b $a &&
	rp_config $a &&
	rp_import $a 71 71 &&
	rp_import $a 72 72 &&
	midx_packs $a >packs &&
	test_line_count = 2 packs &&
	rp_reachable $a >$a.reachable &&
	git -C $b cat-file --batch-all-objects --batch-check="%(objectname)" >borrowed &&
	comm -23 $a.reachable borrowed >$a.local &&
	test_line_count = 8 $a.local
'

test_expect_success "repack -a -d -l: the objects of the alternate stay out, as git leaves them out ($algo)" '
	a=alt-$algo &&
	rp_copy $a altl-$algo &&
	rp_vs_git altl-$algo -a -d -l &&
	test_line_count = 1 altl-$algo.new &&
	test_must_be_empty altl-$algo.stayed &&
	rp_pack_set altl-$algo $(cat altl-$algo.new) >actual &&
	test_cmp $a.local actual
'

# Git honours .keep files only for packs of the repository itself: -a
# without -l packs the objects of an alternate'\''s kept pack too (the 20
# objects of the kept pack of the alternate); so does gitpack.
test_expect_success "repack -a -d without -l: the borrowed objects too, as git packs them ($algo)" '
	a=alt-$algo &&
	rp_copy $a altnl-$algo &&
	rp_vs_git altnl-$algo -a -d &&
	test_line_count = 1 altnl-$algo.new &&
	rp_pack_set altnl-$algo $(cat altnl-$algo.new) >actual &&
	test $(wc -l <actual) -gt 200 &&
	comm -23 $a.local actual >missing &&
	test_must_be_empty missing
'

test_expect_success "repack -a -d --keep-pack=NAME: that pack stays, its objects stay out of the new one ($algo)" '
	r=kp-$algo &&
	rp_copy $b $r &&
	named=$(midx_role $r small55) &&
	rp_repack $r -a -d --keep-pack=$named &&
	test_line_count = 1 $r.new &&
	rp_role_list $r kept small55 >expect &&
	test_cmp expect $r.stayed &&
	rp_pack_set $r $(midx_role $r kept) >kept &&
	rp_pack_set $r $named >named &&
	sort -u kept named | comm -23 $r.reachable - >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual
'

test_expect_success "repack --geometric=2 without -d: the small packs and loose objects go into a new pack; all stay ($algo)" '
	r=geo-$algo &&
	rp_copy $b $r &&
	rp_repack $r --geometric=2 &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.removed &&
	rp_loose_set $r >actual &&
	test_cmp $r.loose-before actual
'

test_expect_success "repack --geometric=2 -d: big and kept packs stay, the small ones and the loose objects roll into one, as git ($algo)" '
	r=geod-$algo &&
	rp_copy $b $r &&
	rp_vs_git $r --geometric=2 -d &&
	test_line_count = 1 $r.new &&
	rp_role_list $r base kept >expect &&
	test_cmp expect $r.stayed &&
	rp_role_list $r gone small51 small52 small53 small54 small55 small56 \
		small57 small58 small59 small60 small61 small62 >expect &&
	test_cmp expect $r.removed &&
	{ rp_packs_set $b $r.removed && cat $r.loose-before; } | sort -u >expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual &&
	rp_loose_set $r >actual &&
	test_must_be_empty actual &&
	test_path_is_missing "$(midx_pack_dir $r)/multi-pack-index"
'

test_expect_success "repack --geometric=2 --write-midx -d: the same, and a MIDX of exactly the packs left ($algo)" '
	r=geom-$algo &&
	rp_copy $b $r &&
	rp_repack $r --geometric=2 --write-midx -d &&
	test_line_count = 1 $r.new &&
	rp_role_list $r base kept >expect &&
	test_cmp expect $r.stayed &&
	test_line_count = 13 $r.removed &&
	rp_check_midx $r $algo &&
	rp_bitmaps $r >actual &&
	test_must_be_empty actual
'

job=job-$algo

test_expect_success "main job (--geometric=2 --write-midx --write-bitmap-index -d): one roll-up, a MIDX and its bitmap ($algo)" '
	rp_copy $b $job &&
	rp_repack $job --geometric=2 --write-midx --write-bitmap-index -d &&
	test_line_count = 1 $job.new &&
	rp_role_list $job base kept >expect &&
	test_cmp expect $job.stayed &&
	test_line_count = 13 $job.removed &&
	rp_check_midx $job $algo &&
	rp_bitmaps $job >bitmaps &&
	test_line_count = 1 bitmaps &&
	grep "^multi-pack-index-[0-9a-f]*\.bitmap\$" bitmaps &&
	rp_bitmap_count $job &&
	rp_loose_set $job >actual &&
	test_must_be_empty actual
'

test_expect_success "main job again, nothing new: the same packs, the MIDX and bitmap still valid ($algo)" '
	rp_repack $job --geometric=2 --write-midx --write-bitmap-index -d &&
	test_must_be_empty $job.new &&
	test_must_be_empty $job.removed &&
	rp_check_midx $job $algo &&
	rp_bitmaps $job >bitmaps &&
	test_line_count = 1 bitmaps &&
	rp_bitmap_count $job
'

test_expect_success "main job after three pushes: only the pushed packs roll up ($algo)" '
	midx_packs $job >old &&
	for k in 71 72 73
	do
		rp_import $job $k $k || return 1
	done &&
	midx_packs $job >now &&
	comm -13 old now >pushed &&
	test_line_count = 3 pushed &&
	rp_reachable $job >$job.reachable &&
	rp_repack $job --geometric=2 --write-midx --write-bitmap-index -d &&
	test_line_count = 1 $job.new &&
	test_cmp pushed $job.removed &&
	test_cmp old $job.stayed &&
	rp_check_midx $job $algo &&
	rp_bitmaps $job >bitmaps &&
	test_line_count = 1 bitmaps &&
	rp_bitmap_count $job &&
	rp_loose_set $job >actual &&
	test_must_be_empty actual
'

test_expect_success "main job once more: steady again ($algo)" '
	rp_repack $job --geometric=2 --write-midx --write-bitmap-index -d &&
	test_must_be_empty $job.new &&
	test_must_be_empty $job.removed &&
	rp_check_midx $job $algo &&
	rp_bitmap_count $job
'

test_expect_success "repack -a -d after the main job: the MIDX and its bitmap go with the packs they named ($algo)" '
	r=jobad-$algo &&
	rp_copy $job $r &&
	# the main job packed the unreachable blob: -a -d drops it (as git)
	rm $r.blob &&
	rp_repack $r -a -d &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	ls "$(midx_pack_dir $r)" >files &&
	! grep multi-pack-index files &&
	rp_bitmaps $r >actual &&
	test_must_be_empty actual
'

test_expect_success "repack -a -d --write-midx -b: one pack and the kept one, a MIDX with its bitmap ($algo)" '
	r=admb-$algo &&
	rp_copy $b $r &&
	rp_repack $r -a -d --write-midx -b &&
	test_line_count = 1 $r.new &&
	midx_role $r kept >expect &&
	test_cmp expect $r.stayed &&
	rp_check_midx $r $algo &&
	rp_bitmaps $r >bitmaps &&
	test_line_count = 1 bitmaps &&
	grep "^multi-pack-index-[0-9a-f]*\.bitmap\$" bitmaps &&
	rp_bitmap_count $r
'

test_expect_success "setup: packs of 4, 12, 40 and 158 objects; of 3, 3, 3, 3, 10, 20 and 172 ($algo)" '
	rp_sized_repo $algo prog-$algo 4 12 40 rest &&
	rp_sized_repo $algo grow-$algo 3 3 3 3 10 20 rest &&
	for r in prog-$algo grow-$algo
	do
		for pack in $(midx_packs $r)
		do
			echo "$(rp_pack_set $r $pack | wc -l)" || return 1
		done | sort -n | tr "\n" " " >$r.sizes &&
		echo >>$r.sizes || return 1
	done &&
	echo "4 12 40 158 " >expect &&
	test_cmp expect prog-$algo.sizes &&
	echo "3 3 3 3 10 20 172 " >expect &&
	test_cmp expect grow-$algo.sizes
'

test_expect_success "--geometric=2 -d on packs in a progression: nothing to do, as git ($algo)" '
	r=prog1-$algo &&
	rp_copy prog-$algo $r &&
	rp_vs_git $r --geometric=2 -d &&
	test_must_be_empty $r.new &&
	test_must_be_empty $r.removed
'

test_expect_success "--geometric=2 -d on packs in a progression, and loose objects: they alone go into a new pack, as git ($algo)" '
	r=prog2-$algo &&
	rp_copy prog-$algo $r &&
	rp_import $r 51 52 loose &&
	rp_reachable $r >$r.reachable &&
	rp_loose_set $r >loose &&
	test_line_count = 8 loose &&
	rp_vs_git $r --geometric=2 -d &&
	test_line_count = 1 $r.new &&
	test_must_be_empty $r.removed &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp loose actual
'

test_expect_success "--geometric=2 -d on 3, 3, 3, 3, 10, 20, 172: the roll-up grows over 10 and 20, as git ($algo)" '
	r=grow1-$algo &&
	rp_copy grow-$algo $r &&
	rp_vs_git $r --geometric=2 -d &&
	test_line_count = 1 $r.new &&
	midx_role $r p7 >expect &&
	test_cmp expect $r.stayed &&
	rp_role_list $r p1 p2 p3 p4 p5 p6 >expect &&
	test_cmp expect $r.removed &&
	rp_packs_set grow-$algo $r.removed >expect &&
	test_line_count = 42 expect &&
	rp_pack_set $r $(cat $r.new) >actual &&
	test_cmp expect actual
'

# rp_promisor SRC DST ROLE: a copy of SRC in which the pack of ROLE has a
# .promisor file; prints that pack's name.
rp_promisor () {
	rp_copy "$1" "$2" &&
	gp_rpr_pack_=$(midx_role "$2" "$3") &&
	: >"$(midx_pack_dir "$2")/${gp_rpr_pack_%.pack}.promisor" &&
	echo "$gp_rpr_pack_"
}

# gitpack only: its manual makes a .promisor pack a kept one. (Git
# rewrites it: -a -d into a new .promisor pack, --geometric=2 -d into
# the new pack, which has no .promisor file.)
test_expect_success GITPACK_IS_GITPACK "a .promisor pack stays, with its .promisor file, through -a -d and --geometric=2 -d ($algo)" '
	for mode in "-a -d" "--geometric=2 -d"
	do
		r=promisor-$algo &&
		promisor=$(rp_promisor $b $r small58) &&
		rp_repack $r $mode &&
		grep "^$promisor\$" $r.stayed &&
		test_path_is_file "$(midx_pack_dir $r)/${promisor%.pack}.promisor" || return 1
	done
'

test_expect_success GITPACK_IS_GITPACK "--geometric=2 -d: the objects of a .promisor pack stay out of the new pack ($algo)" '
	r=promisor-$algo &&
	promisor=$(rp_promisor $b $r small58) &&
	rp_repack $r --geometric=2 -d &&
	test_line_count = 1 $r.new &&
	rp_pack_set $r $promisor >promised &&
	rp_pack_set $r $(cat $r.new) >new &&
	comm -12 promised new >both &&
	test_must_be_empty both
'

# The manual says a .promisor pack is kept, and that -a packs what is
# not in a kept pack: its objects are not copied into the new pack.
test_expect_success GITPACK_IS_GITPACK "-a -d: the objects of a .promisor pack stay out of the new pack, as for a kept pack ($algo)" '
	r=promisor-$algo &&
	promisor=$(rp_promisor $b $r small58) &&
	rp_repack $r -a -d &&
	test_line_count = 1 $r.new &&
	rp_pack_set $r $promisor >promised &&
	rp_pack_set $r $(cat $r.new) >new &&
	comm -12 promised new >both &&
	test_must_be_empty both
'

big=big-$algo

test_expect_success "setup: twelve commits of 200 KB random blobs and a 100 KB text, one pack ($algo)" '
	rp_big_repo $algo $big &&
	midx_packs $big >packs &&
	test_line_count = 1 packs &&
	test "$(wc -c <"$(midx_pack_dir $big)/$(cat packs)")" -gt 3000000 &&
	rp_check $big
'

test_expect_success "repack -a -d --max-pack-size=1m: packs of at most 1 MiB holding every reachable object, as git splits ($algo)" '
	r=split-$algo &&
	rp_copy $big $r &&
	rp_repack $r -a -d --max-pack-size=1m &&
	test_must_be_empty $r.stayed &&
	rp_check_split $r 1048576 &&
	rp_copy $big $r.git &&
	git -C $r.git repack -a -d -q --max-pack-size=1m &&
	midx_packs $r.git >git-packs &&
	test $(wc -l <git-packs) = $(wc -l <$r.new)
'

test_expect_success "pack.packSizeLimit does the same; under 1 MiB: a warning, and 1 MiB, as git ($algo)" '
	r=limit-$algo &&
	rp_copy $big $r &&
	git -C $r config pack.packSizeLimit 1m &&
	rp_repack $r -a -d &&
	rp_check_split $r 1048576 &&
	r=tiny-$algo &&
	rp_copy $big $r &&
	rp_repack $r -a -d --max-pack-size=1000 2>err &&
	grep "minimum pack size limit is 1 MiB" err &&
	rp_check_split $r 1048576 &&
	rp_copy $big $r.git &&
	git -C $r.git repack -a -d -q --max-pack-size=1000 2>err &&
	grep "minimum pack size limit is 1 MiB" err
'

test_expect_success "repack -a -d -b split by --max-pack-size: a warning and no bitmap, as git ($algo)" '
	r=split-b-$algo &&
	rp_copy $big $r &&
	rp_repack $r -a -d -b --max-pack-size=1m 2>err &&
	grep "disabling bitmap writing" err &&
	rp_check_split $r 1048576 &&
	test -z "$(rp_bitmaps $r)" &&
	rp_copy $big $r.git &&
	git -C $r.git repack -a -d -b -q --max-pack-size=1m 2>err &&
	grep "disabling bitmap writing" err &&
	test -z "$(rp_bitmaps $r.git)"
'

test_expect_success "main job with --max-pack-size=1m: a MIDX of the split packs, and its bitmap ($algo)" '
	r=split-midx-$algo &&
	rp_copy $big $r &&
	rp_repack $r -a -d --write-midx -b --max-pack-size=1m &&
	rp_check_split $r 1048576 &&
	rp_check_midx $r $algo &&
	test -n "$(rp_bitmaps $r)" &&
	for k in 1 2 3
	do
		echo "push $k" >$r/push$k.txt &&
		git -C $r add push$k.txt &&
		git -C $r -c user.name=P -c user.email=p@example.com commit -q -m "push $k" || return 1
	done &&
	rp_reachable $r >$r.reachable &&
	rp_repack $r --geometric=2 --write-midx --write-bitmap-index -d --max-pack-size=1m &&
	test_line_count -ge 1 $r.new &&
	rp_check_midx $r $algo &&
	for p in $(midx_packs $r)
	do
		test "$(wc -c <"$(midx_pack_dir $r)/$p")" -le 1048576 || return 1
	done
'

test_expect_success "pack-objects --max-pack-size=1m: a hash per pack, each pack whole; with --stdout refused ($algo)" '
	r=po-split-$algo &&
	rp_copy $big $r &&
	mkdir $r/out &&
	git -C $r rev-list --objects --all >list &&
	gitpack -C $r pack-objects -q --max-pack-size=1m out/pack <list >hashes &&
	sed "s/.*/pack-&.pack/" hashes >$r.new &&
	(cd $r/out && ls pack-*.pack) >written &&
	sort $r.new >expect &&
	test_cmp expect written &&
	while read h
	do
		test "$(wc -c <$r/out/pack-$h.pack)" -le 1048576 &&
		git -C $r verify-pack out/pack-$h.idx &&
		git -C $r show-index <$r/out/pack-$h.idx >>$r.shown || return 1
	done <hashes &&
	cut -d" " -f2 $r.shown | sort -u >objects &&
	test_line_count -ge 3 hashes &&
	test_cmp $r.reachable objects &&
	test_must_fail gitpack -C $r pack-objects --stdout --max-pack-size=1m <list >out.pack 2>err &&
	grep "cannot be used to build a pack for transfer" err
'

test_expect_success "bad options: exit 129 or an error, and nothing changes ($algo)" '
	r=opts-$algo &&
	rp_copy $b $r &&
	rp_state $r >expect &&
	test_expect_code 129 gitpack -C $r repack --geometric=abc -d 2>err &&
	grep "geometric" err &&
	test_expect_code 129 gitpack -C $r repack --no-such-option 2>err &&
	test_must_fail gitpack -C $r repack --geometric=2 -a -d 2>err &&
	grep "geometric" err &&
	rp_state $r >actual &&
	test_cmp expect actual
'

# (git ignores arguments that are not options)
test_expect_success GITPACK_IS_GITPACK "refused: --geometric=1, an argument; nothing changes ($algo)" '
	r=opts-$algo &&
	rp_state $r >expect &&
	test_expect_code 129 gitpack -C $r repack -a -d extra 2>err &&
	test_must_fail gitpack -C $r repack --geometric=1 -d 2>err &&
	grep "geometric" err &&
	rp_state $r >actual &&
	test_cmp expect actual
'

test_expect_success "a damaged pack: -a -d, -A -d and the main job fail naming it, delete nothing, leave no temporary file ($algo)" '
	r=damaged-$algo &&
	rm -rf $r &&
	cp -R $b $r &&
	victim=$(midx_role $b small55) &&
	vpack=$PWD/$(midx_pack_dir $r)/$victim &&
	git -C $r verify-pack -v "${vpack%.pack}.idx" >vp &&
	awk "NF == 5 && \$2 == \"blob\" { print \$4, \$5; exit }" vp >blob &&
	read len ofs <blob &&
	corrupt_byte "$vpack" $((ofs + len / 2)) &&
	ls -a "$(midx_pack_dir $r)" >files.before &&
	rp_loose_set $r >loose.before &&
	for mode in "-a -d" "-A -d" "--geometric=2 --write-midx --write-bitmap-index -d"
	do
		test_must_fail gitpack -C $r repack $mode 2>err &&
		cat err &&
		grep "$victim" err &&
		ls -a "$(midx_pack_dir $r)" >files.after &&
		test_cmp files.before files.after &&
		rp_loose_set $r >loose.after &&
		comm -23 loose.before loose.after >lost &&
		test_must_be_empty lost &&
		# (git -A writes the unreachable objects loose before it fails)
		if test_have_prereq GITPACK_IS_GITPACK
		then
			test_cmp loose.before loose.after
		fi || return 1
	done
'

test_expect_success "a sparse index: the trees of its directories are stored and kept, as git expands it ($algo)" '
	r=sparse-$algo &&
	rm -rf $r $r.probe $r.git &&
	git init -q --object-format=$algo $r &&
	(
		cd $r &&
		mkdir -p a/b out &&
		echo one >file && echo stuff >a/b/c && echo more >a/d && echo far >out/f &&
		git add . && git commit -q -m first &&
		git sparse-checkout set --sparse-index a &&
		echo staged >a/d && echo new >a/e &&
		git add a
	) &&
	git -C $r ls-files --sparse -s >sparse-ls &&
	grep "	out/\$" sparse-ls &&
	# the trees of the staged state, which no commit holds, named in a copy
	cp -R $r $r.probe &&
	root=$(git -C $r.probe write-tree) &&
	atree=$(git -C $r.probe rev-parse $root:a) &&
	for t in $root $atree
	do
		rm -f $r/.git/objects/$(echo $t | sed "s,^..,&/,") || return 1
	done &&
	test_must_fail git -C $r cat-file -e $root &&
	cp -R $r $r.git &&
	gitpack -C $r repack -a -d -f &&
	git -C $r.git repack -a -d -f -q &&
	for d in $r $r.git
	do
		git -C $d cat-file -e $root &&
		git -C $d cat-file -e $atree &&
		git -C $d fsck --no-dangling >fsck.out 2>&1 &&
		! grep -v "^hint:" fsck.out || return 1
	done
'


test_expect_success "a broken ref stops a repack as in git, unless GIT_REF_PARANOIA=0; a dangling symref does not ($algo)" '
	r=paranoia-$algo &&
	rm -rf $r &&
	git init -q --object-format=$algo $r &&
	test_commit -C $r one &&
	git -C $r rev-parse HEAD >$r/.git/refs/heads/bad..name &&
	git -C $r count-objects -v >before &&
	for opts in "-a -d -k" "-A -d --unpack-unreachable=now" "-a -d"
	do
		test_must_fail gitpack -C $r repack $opts 2>err &&
		grep "bad object refs/heads/bad..name" err &&
		git -C $r count-objects -v >after &&
		test_cmp before after || return 1
	done &&
	echo HEAD | test_must_fail gitpack -C $r pack-objects --all --revs --stdout >/dev/null 2>err &&
	grep "^fatal: bad object refs/heads/bad..name\$" err &&
	GIT_REF_PARANOIA=0 gitpack -C $r repack -a -d -q &&
	rm $r/.git/refs/heads/bad..name &&
	# a ref to an object that is not there: refused, or passed by when told
	git -C $r rev-parse HEAD | sed "s/./1/g" >$r/.git/refs/heads/gone &&
	test_must_fail gitpack -C $r repack -a -d -q 2>err &&
	grep "bad object" err &&
	GIT_REF_PARANOIA=0 gitpack -C $r repack -a -d -q &&
	echo HEAD | GIT_REF_PARANOIA=0 gitpack -C $r pack-objects --all --revs --stdout >/dev/null &&
	rm $r/.git/refs/heads/gone &&
	echo "ref: refs/heads/nothing" >$r/.git/refs/heads/dangling &&
	gitpack -C $r repack -a -d -q &&
	rm $r/.git/refs/heads/dangling &&
	git -C $r fsck --full --no-dangling
'

test_expect_success "core.bigFileThreshold: larger blobs are neither deltas nor bases, as git packs them ($algo)" '
	r=bigfile-$algo &&
	rm -rf $r &&
	git init -q --object-format=$algo $r &&
	test_seq 20000 >$r/big &&
	git -C $r add big &&
	git -C $r commit -q -m one &&
	echo more >>$r/big &&
	git -C $r commit -q -a -m two &&
	gitpack -C $r -c core.bigFileThreshold=50k repack -a -d -f -q &&
	(cd $r && git verify-pack -v .git/objects/pack/pack-*.idx) >vp &&
	! awk "NF == 7" vp | grep " blob " &&
	gitpack -C $r repack -a -d -f -q &&
	(cd $r && git verify-pack -v .git/objects/pack/pack-*.idx) >vp &&
	awk "NF == 7" vp | grep " blob " &&
	printf "%s\n" $(git -C $r rev-list --objects --all | cut -d" " -f1) >objs &&
	gitpack -C $r -c core.bigFileThreshold=50k pack-objects -q --window=10 --no-reuse-delta --stdout <objs >p.pack &&
	git -C $r index-pack -o "$TRASH_DIRECTORY/p.idx" --stdin <p.pack >/dev/null &&
	git -C $r verify-pack -v "$TRASH_DIRECTORY/p.idx" >vp &&
	! awk "NF == 7" vp | grep " blob "
'


test_expect_success "the in-process pack step in trace2 as git's pack-objects child; --name-hash-version passes through ($algo)" '
	rm -rf nh && git init -q --object-format=$algo nh &&
	test_commit -C nh one && test_commit -C nh two &&
	GIT_TRACE2_EVENT="$(pwd)/nh.ev" gitpack -C nh repack -a -d --name-hash-version=2 &&
	grep "\"child_start\".*\"child_class\":\"in-process\".*\"argv\":\[\"git\",\"pack-objects\",\"--all\",.*\"--name-hash-version=2\"" nh.ev &&
	grep "\"child_exit\".*\"code\":0" nh.ev &&
	git -C nh fsck --full &&
	rm -f nh.ev &&
	GIT_TRACE2_EVENT="$(pwd)/nh.ev" gitpack -C nh repack -a -d &&
	grep "\"argv\":\[\"git\",\"pack-objects\"" nh.ev &&
	! grep "name-hash-version" nh.ev &&
	test_must_fail gitpack -C nh repack -a -d --name-hash-version=3 2>err &&
	grep "invalid --name-hash-version option: 3" err &&
	gitpack -C nh repack -a -d -b --name-hash-version=2 2>err &&
	grep "requires --name-hash-version=1" err
'

done

test_done
