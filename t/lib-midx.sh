# Shared setup for the multi-pack-index tests (t5319, t5320).
# Source after test-lib.sh and lib-pack.sh:
#	. "$TEST_DIRECTORY/lib-pack.sh"
#	. "$TEST_DIRECTORY/lib-midx.sh"
#
#	midx_import DIR N [checkpoint]	N commits into DIR with git fast-import;
#					one pack, or one pack per commit
#	midx_pack_range DIR FROM TO	a pack of the objects in FROM..TO
#	midx_repo_create ALGO DIR N	a repository with exactly N packs,
#					overlapping when N > 1
#	midx_set_mtimes DIR MODE	pack mtimes: distinct, equal or grouped
#	midx_packs DIR			the pack directory's .pack names, sorted
#	midx_write_both SRC [--ridx] [--stdin FILE] [--] ARGS...
#					git and gitpack "multi-pack-index write"
#					in two copies of SRC; compares the files
#	midx_check_readers DIR		verify and cat-file, git against gitpack
#	midx_dump FILE ALGO		the MIDX as text (header, chunks, packs,
#					objects, pseudo-pack order)
#	midx_chunk_offset FILE ID, midx_chunk_size FILE ID
#	midx_add_loff IN OUT ALGO	a copy of IN whose every other offset
#					goes through a LOFF chunk
#
# Pack mtimes matter to git: of several copies of an object, the MIDX
# selects the one in the pack with the newest .pack mtime (seconds), and
# with --bitmap the oldest pack becomes the preferred one. Ties go to the
# pack git found first while reading the pack directory, so the two
# copies compared by midx_write_both are made the same way from the same
# source (midx_copy), which gives them the same directory order on any file
# system.

# The git whose MIDX files gitpack must match byte for byte: a git 2.55
# build when GP_TEST_GIT255 names one (the path of its "git"), else the
# stock git on PATH (Debian's 2.39). Since git 2.44 a MIDX with a RIDX
# chunk also has a BTMP chunk, and since 2.46 an unknown --preferred-pack
# prefers no pack (2.39: the first pack added): against an older git,
# midx_write_both compares the content both write (midx_dump without the
# chunk table) when --ridx is given, and the GIT255 prerequisite guards
# what only 2.55 does.
if test -n "$GP_TEST_GIT255" && test -x "$GP_TEST_GIT255"
then
	midx_git () {
		"$GP_TEST_GIT255" "$@"
	}
	test_set_prereq GIT255
else
	midx_git () {
		git "$@"
	}
fi

# midx_cmp_written A B: the MIDX files A (written by midx_git) and B
# (by gitpack) are the same; against a git older than 2.44 (no BTMP
# chunk), their content apart from the chunk table.
midx_cmp_written () {
	if test_have_prereq GIT255
	then
		test_cmp_bin "$1" "$2"
		return
	fi
	gp_mcw_algo_=sha1
	if test "$(wc -c <"$1")" -gt 0 && test "$(head -c 6 "$1" | tail -c 1 | od -An -tu1 | tr -d " ")" = 2
	then
		gp_mcw_algo_=sha256
	fi &&
	midx_dump "$1" $gp_mcw_algo_ | grep -v "^header\|^chunk" >"$1.dump" &&
	midx_dump "$2" $gp_mcw_algo_ | grep -v "^header\|^chunk" >"$2.dump" &&
	test_cmp "$1.dump" "$2.dump" &&
	rm -f "$1.dump" "$2.dump"
}

# The pack directory of the repository at DIR.
midx_pack_dir () {
	echo "$1/.git/objects/pack"
}

# midx_import DIR N [checkpoint]: N commits on "main" in the repository DIR
# (made by git init), written as packs directly (perl: git fast-import
# with a checkpoint per commit takes seconds for 200 packs, this a
# fraction of one). Commit k writes one file of 24 lines (d<k%7>/f<k%13>)
# with line k%24 changed; every tenth commit also gets an annotated tag
# v<k>. With "checkpoint", the new objects of every commit (and its tag)
# go to a pack of their own; otherwise all go to one pack. Objects are
# stored whole (no deltas), as fast-import would store them in one-commit
# packs. Fixed dates: the same objects every time. Then main is checked
# out.
midx_import () {
	gp_mi_algo_=$(git -C "$1" rev-parse --show-object-format) &&
	perl -MDigest::SHA -MCompress::Zlib -e '
		use strict;
		my ($packdir, $algo, $n, $split) = @ARGV;
		my $hash = $algo eq "sha256" ? \&Digest::SHA::sha256 : \&Digest::SHA::sha1;
		my $t0 = 1700000000;
		my $ident = "C O Mitter <committer\@example.com>";
		my (@objs, %files, %trees);

		sub add_object {
			my ($type, $data) = @_;
			my %code = (commit => 1, tree => 2, blob => 3, tag => 4);
			my $oid = $hash->("$type " . length($data) . "\0" . $data);
			push @objs, [$code{$type}, $data, $oid];
			return $oid;
		}

		sub write_pack {
			return unless @objs;
			my $body = "PACK" . pack("N N", 2, scalar @objs);
			my @entries;
			for my $o (@objs) {
				my ($type, $data, $oid) = @$o;
				my $size = length($data);
				my $c = ($type << 4) | ($size & 15);
				$size >>= 4;
				my $hdr = "";
				while ($size) {
					$hdr .= chr($c | 0x80);
					$c = $size & 0x7f;
					$size >>= 7;
				}
				$hdr .= chr($c);
				my $entry = $hdr . compress($data);
				push @entries, [$oid, length($body), crc32($entry)];
				$body .= $entry;
			}
			my $sum = $hash->($body);
			$body .= $sum;
			@entries = sort { $a->[0] cmp $b->[0] } @entries;
			my @fanout = (0) x 256;
			$fanout[ord(substr($_->[0], 0, 1))]++ for @entries;
			for my $i (1 .. 255) {
				$fanout[$i] += $fanout[$i - 1];
			}
			my $idx = "\377tOc" . pack("N", 2) . pack("N256", @fanout);
			$idx .= $_->[0] for @entries;
			$idx .= pack("N", $_->[2]) for @entries;
			$idx .= pack("N", $_->[1]) for @entries;
			$idx .= $sum;
			$idx .= $hash->($idx);
			my $name = "$packdir/pack-" . unpack("H*", $sum);
			for my $f (["$name.pack", $body], ["$name.idx", $idx]) {
				open(my $fh, ">:raw", $f->[0]) or die "$f->[0]: $!\n";
				print $fh $f->[1];
				close($fh) or die "$f->[0]: $!\n";
				chmod(0444, $f->[0]);
			}
			@objs = ();
		}

		my ($parent, @refs);
		for my $k (1 .. $n) {
			my ($dir, $file) = ("d" . $k % 7, "f" . $k % 13);
			my $body = "";
			for my $line (1 .. 24) {
				$body .= $line == $k % 24 + 1 ?
					"line $line of $dir/$file, changed in commit $k\n" :
					"line $line of $dir/$file, as it was\n";
			}
			$files{$dir}{$file} = add_object("blob", $body);
			my $tree = "";
			$tree .= "100644 $_\0$files{$dir}{$_}" for sort keys %{$files{$dir}};
			$trees{$dir} = add_object("tree", $tree);
			my $root = "";
			$root .= "40000 $_\0$trees{$_}" for sort keys %trees;
			my $when = $t0 + 60 * $k;
			my $commit = "tree " . unpack("H*", add_object("tree", $root)) . "\n";
			$commit .= "parent " . unpack("H*", $parent) . "\n" if $parent;
			$commit .= "author $ident $when +0000\ncommitter $ident $when +0000\n";
			$commit .= "\ncommit $k\n";
			$parent = add_object("commit", $commit);
			if ($k % 10 == 0) {
				my $tag = "object " . unpack("H*", $parent) . "\ntype commit\n" .
					"tag v$k\ntagger $ident $when +0000\n\nrelease $k\n";
				push @refs, "create refs/tags/v$k " . unpack("H*", add_object("tag", $tag));
			}
			write_pack() if $split;
		}
		write_pack();
		print "create refs/heads/main ", unpack("H*", $parent), "\n";
		print "$_\n" for @refs;
	' "$(midx_pack_dir "$1")" "$gp_mi_algo_" "$2" "$3" >"$1.refs" &&
	git -C "$1" update-ref --stdin <"$1.refs" &&
	rm -f "$1.refs" &&
	git -C "$1" reset -q --hard main
}

# midx_pack_range DIR FROM TO: a new pack in DIR holding the objects
# reachable from TO but not from FROM ("-" for none: everything reachable
# from TO). Prints nothing.
midx_pack_range () {
	if test "$2" = -
	then
		gp_mpr_range_=$3
	else
		gp_mpr_range_="$2..$3"
	fi &&
	git -C "$1" rev-list --objects $gp_mpr_range_ >"$1.range" &&
	git -C "$1" -c pack.threads=1 pack-objects -q .git/objects/pack/pack \
		<"$1.range" >/dev/null &&
	rm -f "$1.range"
}

# midx_repo_create ALGO DIR N: a repository at DIR with exactly N packs
# and no loose objects. N=1: six commits in one pack. N=2: eight commits
# in one pack plus an overlapping pack of a commit range. N>=10: N-4 packs
# of one commit each (fast-import checkpoints), one pack of everything
# ("git repack -a" without -d), two packs of overlapping commit ranges and
# one empty pack. The roles are written to DIR.packs, "ROLE pack-X.pack"
# lines: all, range1 (N>1), range2, empty and one (the first by name of
# the one-commit packs) for N>=10. Mtimes are not set: call
# midx_set_mtimes.
midx_repo_create () {
	git init -q -b main --object-format="$1" "$2" &&
	# no "gc --auto" in the background, deleting packs while we copy
	git -C "$2" config gc.auto 0 &&
	gp_mrc_dir_=$(midx_pack_dir "$2") &&
	case "$3" in
	1)
		midx_import "$2" 6 &&
		echo "all $(cd "$gp_mrc_dir_" && ls pack-*.pack)" >"$2.packs"
		;;
	2)
		midx_import "$2" 8 &&
		echo "all $(cd "$gp_mrc_dir_" && ls pack-*.pack)" >"$2.packs" &&
		midx_new_pack_ "$2" range1 midx_pack_range "$2" main~6 main~2
		;;
	*)
		test "$3" -ge 10 &&
		midx_import "$2" $(($3 - 4)) checkpoint &&
		echo "one $(cd "$gp_mrc_dir_" && ls pack-*.pack | head -n 1)" >"$2.packs" &&
		midx_new_pack_ "$2" all git -C "$2" repack -a -q &&
		midx_new_pack_ "$2" range1 midx_pack_range "$2" main~$(($3 * 3 / 4)) main~$(($3 / 4)) &&
		midx_new_pack_ "$2" range2 midx_pack_range "$2" main~$(($3 / 2)) main &&
		midx_new_pack_ "$2" empty eval \
			"git -C \"$2\" pack-objects -q .git/objects/pack/pack </dev/null >/dev/null"
		;;
	esac &&
	test "$(ls "$gp_mrc_dir_"/pack-*.pack | wc -l)" = "$3" &&
	test "$(ls "$gp_mrc_dir_"/pack-*.idx | wc -l)" = "$3" &&
	git -C "$2" count-objects -v >"$2.count" &&
	grep "^count: 0$" "$2.count" &&
	rm -f "$2.count"
}

# midx_new_pack_ DIR ROLE CMD...: run CMD, which must add exactly one
# pack to DIR, and record it in DIR.packs as ROLE.
midx_new_pack_ () {
	gp_mnp_dir_=$1
	gp_mnp_role_=$2
	shift 2
	(cd "$(midx_pack_dir "$gp_mnp_dir_")" && ls pack-*.pack) >"$gp_mnp_dir_.old" &&
	"$@" &&
	(cd "$(midx_pack_dir "$gp_mnp_dir_")" && ls pack-*.pack) >"$gp_mnp_dir_.new" &&
	comm -13 "$gp_mnp_dir_.old" "$gp_mnp_dir_.new" >"$gp_mnp_dir_.added" &&
	test_line_count = 1 "$gp_mnp_dir_.added" &&
	echo "$gp_mnp_role_ $(cat "$gp_mnp_dir_.added")" >>"$gp_mnp_dir_.packs" &&
	rm -f "$gp_mnp_dir_.old" "$gp_mnp_dir_.new" "$gp_mnp_dir_.added"
}

# midx_role DIR ROLE [idx]: the name of the pack with ROLE in DIR.packs
# (pack-X.pack, or pack-X.idx with "idx").
midx_role () {
	gp_mr_name_=$(sed -n "s/^$2 //p" "$1.packs") &&
	test -n "$gp_mr_name_" &&
	if test "$3" = idx
	then
		echo "${gp_mr_name_%.pack}.idx"
	else
		echo "$gp_mr_name_"
	fi
}

# midx_packs DIR: the .pack files of DIR, by name.
midx_packs () {
	(cd "$(midx_pack_dir "$1")" && ls pack-*.pack)
}

# midx_set_mtimes DIR MODE: set the mtime of every pack in DIR (and of
# its .idx). The k-th pack by name gets, with MODE
#	distinct: a time of its own (a permutation of the packs, not in
#		  name order); an empty pack is the newest of all
#	empty-oldest: the same, but an empty pack is the oldest of all
#	equal:	  the same time for all
#	grouped:  one of three times (k mod 3), so there are ties among
#		  both the newest and the oldest
midx_set_mtimes () {
	perl -e '
		my ($dir, $mode) = @ARGV;
		opendir(my $dh, $dir) or die "$dir: $!\n";
		my @packs = sort grep { /^pack-.*\.pack$/ } readdir($dh);
		my $n = @packs;
		for my $k (0 .. $n - 1) {
			my $p = "$dir/$packs[$k]";
			my $t;
			if ($mode eq "distinct" || $mode eq "empty-oldest") {
				$t = 1600000000 + ($k * 7919 % $n) * 100;
				open(my $fh, "<:raw", $p) or die "$p: $!\n";
				read($fh, my $hdr, 12) == 12 or die "$p: short\n";
				if (unpack("N", substr($hdr, 8, 4)) == 0) {
					$t = $mode eq "distinct" ? 1700000000 : 1500000000;
				}
			} elsif ($mode eq "equal") {
				$t = 1600000000;
			} elsif ($mode eq "grouped") {
				$t = 1600000000 + ($k % 3) * 100;
			} else {
				die "midx_set_mtimes: unknown mode $mode\n";
			}
			(my $idx = $p) =~ s/\.pack$/.idx/;
			utime($t, $t, $p, $idx) == 2 or die "$p: $!\n";
		}
	' "$(midx_pack_dir "$1")" "$2"
}

# midx_dump FILE ALGO: print a well-formed MIDX as text, to compare two
# files readably (test_cmp) when they differ:
#	header <sig> version=V hash=H chunks=C base=B packs=P
#	chunk <ID> <offset> (and "chunk end <offset>")
#	pack <k> <name>
#	object <oid> <pack name> <offset> [large]
#	ridx <pseudo pos> <oid> (when there is a RIDX chunk)
midx_dump () {
	perl -e '
		use strict;
		my ($file, $algo) = @ARGV;
		my $rawsz = $algo eq "sha256" ? 32 : 20;
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		my ($sig, $ver, $hid, $nc, $nb, $np) = unpack("a4 C C C C N", $d);
		print "header $sig version=$ver hash=$hid chunks=$nc base=$nb packs=$np\n";
		my (%ofs, %size, @ids);
		for my $i (0 .. $nc) {
			my ($id, $hi, $lo) = unpack("a4 N N", substr($d, 12 + 12 * $i, 12));
			my $o = $hi * 4294967296 + $lo;
			if ($i == $nc) {
				print "chunk end $o\n";
				$size{$ids[-1]} = $o - $ofs{$ids[-1]} if @ids;
				last;
			}
			print "chunk $id $o\n";
			$size{$ids[-1]} = $o - $ofs{$ids[-1]} if @ids;
			push @ids, $id;
			$ofs{$id} = $o;
		}
		my $chunk = sub { substr($d, $ofs{$_[0]}, $size{$_[0]}) };
		my @packs = split(/\0/, $chunk->("PNAM"));
		@packs = @packs[0 .. $np - 1];
		print "pack $_ $packs[$_]\n" for 0 .. $#packs;
		my $n = unpack("N", substr($chunk->("OIDF"), 255 * 4, 4));
		my $oidl = $chunk->("OIDL");
		my $ooff = $chunk->("OOFF");
		my $loff = exists $ofs{"LOFF"} ? $chunk->("LOFF") : "";
		my @oid;
		for my $k (0 .. $n - 1) {
			$oid[$k] = unpack("H*", substr($oidl, $k * $rawsz, $rawsz));
			my ($pack, $o) = unpack("N N", substr($ooff, 8 * $k, 8));
			my $large = "";
			if ($o & 0x80000000) {
				my ($hi, $lo) = unpack("N N", substr($loff, 8 * ($o & 0x7fffffff), 8));
				$o = $hi * 4294967296 + $lo;
				$large = " large";
			}
			print "object $oid[$k] ", $packs[$pack] // "pack#$pack", " $o$large\n";
		}
		if (exists $ofs{"RIDX"}) {
			my $ridx = $chunk->("RIDX");
			for my $k (0 .. $n - 1) {
				my $pos = unpack("N", substr($ridx, 4 * $k, 4));
				print "ridx $k ", $oid[$pos] // "pos#$pos", "\n";
			}
		}
	' "$1" "$2"
}

# midx_chunk_offset FILE ID / midx_chunk_size FILE ID: where chunk ID
# ("OIDF") starts in FILE and how long it is (up to the next table
# entry's offset), from the chunk table. Fails when there is no such chunk.
midx_chunk_offset () {
	midx_chunk_info_ "$1" "$2" offset
}

midx_chunk_size () {
	midx_chunk_info_ "$1" "$2" size
}

midx_chunk_info_ () {
	perl -e '
		my ($file, $want, $what) = @ARGV;
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		my $nc = unpack("C", substr($d, 6, 1));
		for my $i (0 .. $nc - 1) {
			my ($id, $hi, $lo, $nid, $nhi, $nlo) =
				unpack("a4 N N a4 N N", substr($d, 12 + 12 * $i, 24));
			next unless $id eq $want;
			my $o = $hi * 4294967296 + $lo;
			print $what eq "offset" ? $o : $nhi * 4294967296 + $nlo - $o, "\n";
			exit 0;
		}
		exit 1;
	' "$1" "$2" "$3"
}

# midx_toc_entry FILE ID: the index of chunk ID in FILE's chunk table.
midx_toc_entry () {
	perl -e '
		my ($file, $want) = @ARGV;
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/;
		my $d = <$fh>;
		my $nc = unpack("C", substr($d, 6, 1));
		for my $i (0 .. $nc - 1) {
			if (substr($d, 12 + 12 * $i, 4) eq $want) {
				print "$i\n";
				exit 0;
			}
		}
		exit 1;
	' "$1" "$2"
}

# midx_add_loff IN OUT ALGO: write OUT, a copy of the MIDX IN (which has
# no LOFF chunk) in which the offset of every object at an even position
# is moved to a new LOFF chunk (OOFF gets 0x80000000 | its index there),
# placed after OOFF as git places it, with the chunk table and the
# trailing checksum updated. Git writes LOFF only for packs over 4 GiB;
# readers must accept a large-offset entry for any offset.
midx_add_loff () {
	perl -MDigest::SHA=sha1,sha256 -e '
		use strict;
		my ($in, $out, $algo) = @ARGV;
		my $rawsz = $algo eq "sha256" ? 32 : 20;
		open(my $fh, "<:raw", $in) or die "$in: $!\n";
		local $/;
		my $d = <$fh>;
		close $fh;
		my $nc = unpack("C", substr($d, 6, 1));
		my (@ids, @ofs);
		for my $i (0 .. $nc) {
			my ($id, $hi, $lo) = unpack("a4 N N", substr($d, 12 + 12 * $i, 12));
			push @ids, $id;
			push @ofs, $hi * 4294967296 + $lo;
		}
		my %data;
		for my $i (0 .. $nc - 1) {
			$data{$ids[$i]} = substr($d, $ofs[$i], $ofs[$i + 1] - $ofs[$i]);
		}
		die "$in already has LOFF\n" if exists $data{"LOFF"};
		my $n = length($data{"OOFF"}) / 8;
		my ($ooff, $loff) = ("", "");
		for my $k (0 .. $n - 1) {
			my ($pack, $o) = unpack("N N", substr($data{"OOFF"}, 8 * $k, 8));
			if ($k % 2 == 0) {
				$ooff .= pack("N N", $pack, 0x80000000 | (length($loff) / 8));
				$loff .= pack("N N", 0, $o);
			} else {
				$ooff .= pack("N N", $pack, $o);
			}
		}
		$data{"OOFF"} = $ooff;
		$data{"LOFF"} = $loff;
		my @order;
		for my $id (@ids[0 .. $nc - 1]) {
			push @order, $id;
			push @order, "LOFF" if $id eq "OOFF";
		}
		my $table_end = 12 + 12 * (@order + 1);
		my ($toc, $body, $pos) = ("", "", $table_end);
		for my $id (@order) {
			$toc .= $id . pack("N N", int($pos / 4294967296), $pos % 4294967296);
			$body .= $data{$id};
			$pos += length($data{$id});
		}
		$toc .= pack("N N N", 0, int($pos / 4294967296), $pos % 4294967296);
		my $new = substr($d, 0, 12) . $toc . $body;
		substr($new, 6, 1) = pack("C", scalar @order);
		$new .= $algo eq "sha256" ? sha256($new) : sha1($new);
		open($fh, ">:raw", $out) or die "$out: $!\n";
		print $fh $new;
		close $fh or die "$out: $!\n";
	' "$1" "$2" "$3"
}

# midx_copy SRC DST: a copy of the repository SRC at DST that shares its
# files through hard links (the same mtimes, and ten times faster than a
# copy with 200 packs). Git and gitpack replace files (temporary file,
# rename) and never write into a pack, an index or a MIDX in place; a
# test that does (corrupt_byte) must first replace the file by a copy of
# its own.
midx_copy () {
	rm -rf "$2" &&
	cp -al "$1" "$2"
}

# midx_write_both SRC [--ridx] [--stdin FILE] [--expect-fail] [--] ARGS...:
# copy the repository SRC (midx_copy) to SRC.git and SRC.gp,
# without any multi-pack-index, then run
#	git multi-pack-index write ARGS		in SRC.git
#	gitpack multi-pack-index write ARGS	in SRC.gp
# (standard input from FILE, or /dev/null), and compare the MIDX files
# byte for byte (showing both dumps' differences when they differ) and
# the standard output. With --ridx, both get --bitmap (the only way git
# 2.39 writes a RIDX chunk). With --expect-fail, both must
# fail and write no MIDX. Leaves SRC.git and SRC.gp for more checks.
midx_write_both () {
	gp_mwb_src_=$1
	shift
	gp_mwb_ridx_=
	gp_mwb_in_=/dev/null
	gp_mwb_fail_=
	while test $# -gt 0
	do
		case "$1" in
		--ridx) gp_mwb_ridx_=t; shift ;;
		--stdin) gp_mwb_in_=$2; shift 2 ;;
		--expect-fail) gp_mwb_fail_=t; shift ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	gp_mwb_git_=$gp_mwb_src_.git
	gp_mwb_gp_=$gp_mwb_src_.gp
	midx_copy "$gp_mwb_src_" "$gp_mwb_git_" &&
	midx_copy "$gp_mwb_src_" "$gp_mwb_gp_" &&
	rm -f "$(midx_pack_dir "$gp_mwb_git_")"/multi-pack-index* \
		"$(midx_pack_dir "$gp_mwb_gp_")"/multi-pack-index* &&
	if test -n "$gp_mwb_ridx_"
	then
		set -- --bitmap "$@"
	fi &&
	midx_git -C "$gp_mwb_git_" multi-pack-index write "$@" \
		<"$gp_mwb_in_" >expect 2>expect.err
	echo $? >expect.code
	gitpack -C "$gp_mwb_gp_" multi-pack-index write "$@" \
		<"$gp_mwb_in_" >actual 2>actual.err
	echo $? >actual.code
	cat expect.err actual.err
	gp_mwb_a_=$(midx_pack_dir "$gp_mwb_git_")/multi-pack-index
	gp_mwb_b_=$(midx_pack_dir "$gp_mwb_gp_")/multi-pack-index
	if test -n "$gp_mwb_fail_"
	then
		test "$(cat expect.code)" != 0 &&
		test "$(cat actual.code)" -ge 1 && test "$(cat actual.code)" -le 129 &&
		test_path_is_missing "$gp_mwb_a_" &&
		test_path_is_missing "$gp_mwb_b_" &&
		test_file_not_empty actual.err
		return
	fi
	test "$(cat expect.code)" = 0 &&
	test "$(cat actual.code)" = 0 &&
	test_cmp expect actual &&
	if ! test_cmp_bin "$gp_mwb_a_" "$gp_mwb_b_"
	then
		gp_mwb_algo_=$(git -C "$gp_mwb_src_" rev-parse --show-object-format)
		midx_dump "$gp_mwb_a_" "$gp_mwb_algo_" >dump.git
		midx_dump "$gp_mwb_b_" "$gp_mwb_algo_" >dump.gp
		if test -n "$gp_mwb_ridx_" && ! test_have_prereq GIT255
		then
			# git before 2.44 writes no BTMP chunk: the rest must agree
			grep -v "^header\|^chunk" dump.git >dump.git.body &&
			grep -v "^header\|^chunk" dump.gp >dump.gp.body &&
			midx_chunk_offset "$gp_mwb_b_" BTMP >/dev/null &&
			test_cmp dump.git.body dump.gp.body
			return
		fi
		test_cmp dump.git dump.gp | head -n 40
		return 1
	fi
}

midx_batch_format='%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)'

# midx_check_readers SRC: after midx_write_both (identical files), each
# tool's verify accepts the other's MIDX, and gitpack cat-file lists every
# object as git does, through the MIDX (the plain and a detailed format,
# whose disk sizes and delta bases show which copy was selected).
midx_check_readers () {
	git -C "$1.gp" multi-pack-index verify &&
	gitpack -C "$1.git" multi-pack-index verify &&
	gitpack -C "$1.gp" multi-pack-index verify &&
	git -C "$1.git" cat-file --batch-check --batch-all-objects >expect &&
	gitpack -C "$1.gp" cat-file --batch-check --batch-all-objects >actual &&
	test_cmp expect actual &&
	git -C "$1.git" cat-file --batch-all-objects \
		--batch-check="$midx_batch_format" >expect &&
	gitpack -C "$1.gp" cat-file --batch-all-objects \
		--batch-check="$midx_batch_format" >actual &&
	test_cmp expect actual
}
