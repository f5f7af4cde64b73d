#!/bin/sh

test_description='pseudo-merge bitmaps (bitmapPseudoMerge.*)

A linear history of 160 commits written by stock git (fast-import), one
a minute, each with a lightweight tag (refs/tags/t<n>), and the last 48
also under refs/remotes/<1..3>/tags/ (16 per remote). gitpack repack
-adb writes the bitmap with pseudo-merges; then:

 - stock git 2.39 (which knows nothing of pseudo-merges) still reads
   the file: "rev-list --test-bitmap", "--use-bitmap-index" counts as
   the walk, fsck;
 - gitpack'\''s reader (test-tool pseudo-merges) finds the merges, and
   each merge holds exactly the objects "git rev-list --objects" lists
   for its commits; gitpack'\''s own bitmap queries use them (trace2
   pseudo_merges_satisfied) and answer as git'\''s walk does;
 - what gitpacking(7) says of the settings: maxMerges, sampleRate (the
   share of the commits without a bitmap of their own), threshold
   (nothing newer), stableThreshold and stableSize (stable merges come
   first, of that many commits, oldest first), capture groups (no merge
   mixes two remotes), two groups over the same refs (merges sharing
   commits), a merge taken over from the old bitmap (trace2), no
   pseudo-merge for a commit outside the MIDX, git'\''s error for
   thresholds out of order and its warnings for values out of range;
 - the sizes of the merges for given candidates, as git 2.55 makes
   them (test-tool pseudo-merges plan); and, when git 2.55 is at hand
   (GIT_NEW), the merges themselves: for four configurations it writes
   the same merges as gitpack (commits and object counts), read by its
   own test-tool from both files;
 - a damaged section is refused, naming the file and the offset.

SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# pm_stream: the history described above, as a fast-import stream.
pm_stream () {
	perl -e '
		for my $k (1 .. 160) {
			print "commit refs/heads/main\nmark :$k\n";
			print "committer C O Mitter <c\@example.com> ", 1600000000 + 60 * $k, " +0000\n";
			print "data ", length("c$k"), "\nc$k\n";
			print "M 644 inline f", $k % 9, "\ndata ", length("$k\n"), "\n$k\n\n";
		}
		for my $k (1 .. 160) {
			print "reset refs/tags/t$k\nfrom :$k\n\n";
			print "reset refs/remotes/", 1 + int(($k - 113) / 16), "/tags/t$k\nfrom :$k\n\n"
				if $k > 112;
		}
	'
}

# merges DIR: the "at=, commits=, objects=" lines of DIR's bitmap.
merges () {
	(cd "$1" && test-tool pseudo-merges)
}

# merge_commits DIR N: the commits of merge N, sorted.
merge_commits () {
	(cd "$1" && test-tool pseudo-merges commits "$2") >mc.raw &&
	sort mc.raw
}

# check_objects DIR: every merge of DIR holds what its commits reach.
check_objects () {
	merges "$1" >m.out &&
	test -s m.out &&
	gp_co_i_=0 &&
	while test $gp_co_i_ -lt $(wc -l <m.out)
	do
		merge_commits "$1" $gp_co_i_ >commits &&
		git -C "$1" rev-list --objects --no-object-names --stdin <commits >expect.raw &&
		(cd "$1" && test-tool pseudo-merges objects $gp_co_i_) >actual.raw &&
		sort -u expect.raw >expect &&
		sort -u actual.raw >actual &&
		test_cmp expect actual &&
		gp_co_i_=$((gp_co_i_ + 1)) || return 1
	done
}

# git_reads DIR: stock git still reads the bitmap.
git_reads () {
	git -C "$1" rev-list --test-bitmap main >/dev/null 2>tb.err &&
	git -C "$1" rev-list --count --all --objects >expect &&
	git -C "$1" rev-list --count --all --objects --use-bitmap-index >actual &&
	test_cmp expect actual &&
	git -C "$1" fsck --full --no-progress
}

# bitmap_flags FILE: the header flags, as 4 hex digits.
bitmap_flags () {
	od -An -tx1 -j6 -N2 "$1" | tr -d ' \n'
}

# nr_entries FILE: the number of commits with a bitmap of their own.
nr_entries () {
	perl -e 'open(my $f, "<:raw", $ARGV[0]) or die; read($f, my $h, 12);
		print unpack("N", substr($h, 8, 4)), "\n"' "$1"
}

test_expect_success 'plan: the merges git 2.55 makes of 94 candidates' '
	# 94 commits a minute apart, none with a bitmap of its own; the
	# sizes are those git 2.55 writes for the same candidates (its
	# test-tool bitmap dump-pseudo-merges), decay and sampleRate as
	# git reads them.
	test_seq 94 | awk "{ print 1000 + \$1, 0 }" >cands &&
	plan () {
		test-tool pseudo-merges plan stableThreshold=never "$@" <cands >plan.out &&
		awk "{ printf \"%s%d\", (NR > 1 ? \" \" : \"\"), NF } END { print \"\" }" plan.out
	} &&
	test "$(plan maxMerges=3)" = "51 26 17" &&
	test "$(plan maxMerges=8)" = "35 17 12 9 21" &&
	test "$(plan)" = "20 10 64" &&
	test "$(plan maxMerges=7 decay=0)" = "13 13 13 13 13 13 13" &&
	test "$(plan maxMerges=13 decay=0)" = "94" &&
	test "$(plan maxMerges=4 decay=2)" = "66 17 11" &&
	test "$(plan maxMerges=3 decay=1.9)" = "51 26 17" &&
	test "$(plan maxMerges=3 sampleRate=0.3)" = "17 9 6" &&
	test "$(plan maxMerges=3 sampleRate=0.25)" = "13 7 4" &&
	test "$(plan maxMerges=0)" = "" &&
	# oldest first: the first merge holds the first 51 lines
	plan maxMerges=3 >/dev/null &&
	head -n 1 plan.out | tr " " "\n" >first &&
	test_seq 51 >expect &&
	test_cmp expect first
'

test_expect_success 'plan: stable merges of stableSize first, bitmapped ones too' '
	# 30 old commits (10 with a bitmap), 20 newer ones
	{
		test_seq 30 | awk "{ print 1000000100 + \$1, (\$1 % 3 == 0) }" &&
		test_seq 20 | awk "{ print 1000000500 + \$1, 0 }"
	} >cands &&
	test-tool pseudo-merges plan stableThreshold=1000000200 stableSize=12 maxMerges=1 \
		<cands >plan.out &&
	awk "{ print NF }" plan.out >sizes &&
	test_write_lines 12 12 6 20 >expect &&
	test_cmp expect sizes &&
	# threshold: nothing newer
	test-tool pseudo-merges plan stableThreshold=never threshold=1000000510 maxMerges=1 \
		<cands >plan.out &&
	test "$(cat plan.out)" = "$(test_seq 1 30 | awk "\$1 % 3" | tr "\n" " ")$(test_seq 31 40 | tr "\n" " " | sed "s/ \$//")"
'

test_expect_success 'plan: git'\''s warnings and errors' '
	: | test-tool pseudo-merges plan decay=-1 sampleRate=2 maxMerges=-1 stableSize=0 2>err &&
	cat >expect <<-\EOF &&
	warning: bitmappseudomerge.t.decay must be non-negative, using default
	warning: bitmappseudomerge.t.samplerate must be between 0 (exclusive) and 1, using default
	warning: bitmappseudomerge.t.maxmerges must be non-negative, using default
	warning: bitmappseudomerge.t.stablesize must be positive, using default
	EOF
	test_cmp expect err &&
	test_must_fail test-tool pseudo-merges plan maxMerges=abc </dev/null 2>err &&
	grep "bad numeric config value .abc. for .bitmappseudomerge.t.maxmerges.: invalid unit" err &&
	test_must_fail test-tool pseudo-merges plan threshold=garbage </dev/null 2>err &&
	grep "garbage. for .bitmappseudomerge.t.threshold. is not a valid timestamp" err &&
	test_must_fail test-tool pseudo-merges plan pattern="(" </dev/null 2>err &&
	grep "failed to load pseudo-merge regex for t.pattern: .^(." err
'

# new_merges DIR: DIR's merges as git 2.55'\''s test-tool reads them, one
# line each, "<objects> <sorted commits...>", the lines sorted (the
# order of capture groups is the writer'\''s).
new_merges () {
	gp_nm_tool_=$(dirname "$GP_TEST_GIT_NEW")/test-tool &&
	(cd "$1" && "$gp_nm_tool_" bitmap dump-pseudo-merges) >nm.out &&
	gp_nm_i_=0 &&
	while test $gp_nm_i_ -lt $(wc -l <nm.out)
	do
		(cd "$1" && "$gp_nm_tool_" bitmap dump-pseudo-merge-commits $gp_nm_i_) >nm.commits &&
		sed -n "$((gp_nm_i_ + 1))s/.*objects=//p" nm.out | tr "\n" " " &&
		sort nm.commits | tr "\n" " " &&
		echo &&
		gp_nm_i_=$((gp_nm_i_ + 1)) || return 1
	done >nm.lines &&
	sort nm.lines
}

for algo in $test_hash_algos
do
	r=repo-$algo

	test_expect_success "$algo: setup" '
		git init -q -b main --object-format=$algo $r &&
		git -C $r config gc.auto 0 &&
		pm_stream >stream &&
		git -C $r fast-import --quiet <stream &&
		git -C $r reset -q --hard main &&
		git -C $r repack -adq
	'

	test_expect_success "$algo: no pseudo-merges without a group" '
		gitpack -C $r repack -adbq &&
		bm=$(ls $r/.git/objects/pack/pack-*.bitmap) &&
		test "$(bitmap_flags $bm)" = 0015 &&
		merges $r >m.out &&
		test_must_be_empty m.out
	'

	test_expect_success "$algo: pseudo-merges hold what their commits reach" '
		git -C $r config bitmapPseudoMerge.tags.pattern refs/tags/ &&
		git -C $r config bitmapPseudoMerge.tags.maxMerges 3 &&
		git -C $r config bitmapPseudoMerge.tags.stableThreshold never &&
		gitpack -C $r repack -adbq &&
		bm=$(ls $r/.git/objects/pack/pack-*.bitmap) &&
		test "$(bitmap_flags $bm)" = 0035 &&
		merges $r >m.out &&
		test_line_count = 3 m.out &&
		check_objects $r &&
		git_reads $r
	'

	test_expect_success "$algo: sampleRate keeps that share of the commits without a bitmap" '
		commits=$(git -C $r rev-list --count --all) &&
		for rate in 1.0 0.5 0.25
		do
			gitpack -C $r -c bitmapPseudoMerge.tags.maxMerges=1 \
				-c bitmapPseudoMerge.tags.sampleRate=$rate repack -adbq &&
			merges $r >m.out &&
			test_line_count = 1 m.out &&
			merge_commits $r 0 >commits &&
			bitmaps=$(nr_entries $(ls $r/.git/objects/pack/pack-*.bitmap)) &&
			perl -MPOSIX -e "print ceil(\$ARGV[0] * (\$ARGV[1] - \$ARGV[2])), qq(\n)" \
				$rate $commits $bitmaps >expect &&
			wc -l <commits >actual &&
			test $(cat expect) -eq $(cat actual) || return 1
		done
	'

	test_expect_success "$algo: threshold, stableThreshold and stableSize" '
		# commit k is dated 1600000000 + 60k
		gitpack -C $r -c bitmapPseudoMerge.tags.threshold=$((1600000000 + 60 * 50)) \
			-c bitmapPseudoMerge.tags.stableThreshold=$((1600000000 + 60 * 20)) \
			-c bitmapPseudoMerge.tags.stableSize=8 \
			-c bitmapPseudoMerge.tags.maxMerges=1 repack -adbq &&
		merges $r >m.out &&
		test_line_count = 4 m.out &&
		for i in 0 1 2 3
		do
			merge_commits $r $i >commits &&
			git -C $r log --no-walk --format=%ct --stdin <commits | sort -n >dates.$i || return 1
		done &&
		# stable: commits 1..20, oldest first, 8, 8 and 4 of them
		test_line_count = 8 dates.0 &&
		test_line_count = 8 dates.1 &&
		test_line_count = 4 dates.2 &&
		test "$(head -n 1 dates.0)" = $((1600000000 + 60)) &&
		test "$(tail -n 1 dates.2)" = $((1600000000 + 60 * 20)) &&
		# unstable: commits 21..50 that have no bitmap of their own
		test "$(head -n 1 dates.3)" -gt $((1600000000 + 60 * 20)) &&
		test "$(tail -n 1 dates.3)" -le $((1600000000 + 60 * 50)) &&
		check_objects $r
	'

	test_expect_success "$algo: capture groups split a group" '
		# the remotes'\'' commits all have bitmaps: stable merges only
		gitpack -C $r -c bitmapPseudoMerge.tags.pattern="refs/remotes/([0-9]+)/tags/" \
			-c bitmapPseudoMerge.tags.stableThreshold=1.month.ago \
			-c bitmapPseudoMerge.tags.maxMerges=1 repack -adbq &&
		merges $r >m.out &&
		test_line_count = 3 m.out &&
		git -C $r for-each-ref --format="%(objectname) %(refname)" refs/remotes >refs &&
		for i in 0 1 2
		do
			merge_commits $r $i >oids &&
			grep -F -f oids refs | sed "s|.* refs/remotes/\([0-9]*\)/.*|\1|" | sort -u >remotes &&
			test_line_count = 1 remotes || return 1
		done &&
		check_objects $r
	'

	test_expect_success "$algo: two groups over the same refs share commits" '
		gitpack -C $r -c bitmapPseudoMerge.tags.maxMerges=1 \
			-c bitmapPseudoMerge.all.pattern=refs/ \
			-c bitmapPseudoMerge.all.maxMerges=1 \
			-c bitmapPseudoMerge.all.stableThreshold=never repack -adbq &&
		merges $r >m.out &&
		test_line_count = 2 m.out &&
		merge_commits $r 0 >c0 &&
		merge_commits $r 1 >c1 &&
		comm -12 c0 c1 >both &&
		test -s both &&
		check_objects $r &&
		git_reads $r
	'

	test_expect_success "$algo: an identical merge is taken over from the old bitmap" '
		stable=$((1600000000 + 60 * 80)) &&
		gitpack -C $r -c bitmapPseudoMerge.tags.stableThreshold=$stable \
			-c bitmapPseudoMerge.tags.maxMerges=1 repack -adbq &&
		merge_commits $r 0 >stable.before &&
		GIT_TRACE2_EVENT="$TRASH_DIRECTORY/trace.$algo" gitpack -C $r \
			-c bitmapPseudoMerge.tags.stableThreshold=$stable \
			-c bitmapPseudoMerge.tags.maxMerges=2 repack -adbq &&
		grep "\"key\":\"building_bitmaps_pseudo_merge_reused\",\"value\":\"1\"" \
			"$TRASH_DIRECTORY/trace.$algo" &&
		merge_commits $r 0 >stable.after &&
		test_cmp stable.before stable.after &&
		check_objects $r
	'

	test_expect_success "$algo: gitpack's bitmap queries use the pseudo-merges" '
		gitpack -C $r -c bitmapPseudoMerge.tags.maxMerges=3 repack -adbq &&
		merges $r >m.out &&
		test_line_count = 3 m.out &&
		GIT_TRACE2_EVENT="$TRASH_DIRECTORY/q.$algo" gitpack -C $r rev-list --count \
			--all --objects --use-bitmap-index >actual &&
		git -C $r rev-list --count --all --objects >expect &&
		test_cmp expect actual &&
		grep "\"category\":\"bitmap\",\"key\":\"pseudo_merges_satisfied\",\"value\":\"3\"" \
			"$TRASH_DIRECTORY/q.$algo" &&
		# what a merge brings in is right whatever the query
		for q in "--all --not t50" "t100 t20 ^t10" "main~30..main" "--tags --not t150"
		do
			gitpack -C $r rev-list --objects --no-object-names --use-bitmap-index $q >actual.raw &&
			git -C $r rev-list --objects --no-object-names $q >expect.raw &&
			sort actual.raw >actual &&
			sort expect.raw >expect &&
			test_cmp expect actual || return 1
		done
	'

	test_expect_success GIT_NEW "$algo: git 2.55 writes the same merges, and reads gitpack's" '
		for cfg in "maxMerges=3" "maxMerges=8 sampleRate=0.3" \
			"maxMerges=1 stableThreshold=$((1600000000 + 60 * 40)) stableSize=7" \
			"pattern=refs/remotes/([0-9]+)/tags/ stableThreshold=1.month.ago"
		do
			args= &&
			for kv in $cfg
			do
				args="$args -c bitmapPseudoMerge.tags.$kv" || return 1
			done &&
			rm -rf new-$algo &&
			cp -R $r new-$algo &&
			gitpack -C $r $args repack -adbq &&
			git_new -C new-$algo $args repack -adbq &&
			new_merges $r >gitpack.merges &&
			new_merges new-$algo >git.merges &&
			test -s git.merges &&
			test_cmp git.merges gitpack.merges || return 1
		done
	'

	test_expect_success "$algo: thresholds out of order are git's error, before any work" '
		ls $r/.git/objects/pack >packs.before &&
		test_must_fail gitpack -C $r -c bitmapPseudoMerge.tags.threshold=1.month.ago \
			-c bitmapPseudoMerge.tags.stableThreshold=1.week.ago repack -adbq 2>err &&
		echo "fatal: pseudo-merge group '\''tags'\'' has unstable threshold before stable one" >expect &&
		test_cmp expect err &&
		ls $r/.git/objects/pack >packs.after &&
		test_cmp packs.before packs.after
	'

	test_expect_success "$algo: a commit outside the MIDX gets no pseudo-merge" '
		git init -q -b main --object-format=$algo $r-midx &&
		test_commit -C $r-midx A &&
		git -C $r-midx repack -dq &&
		test_commit -C $r-midx B &&
		git -C $r-midx config bitmapPseudoMerge.test.pattern refs/ &&
		git -C $r-midx config bitmapPseudoMerge.test.threshold now &&
		gitpack -C $r-midx multi-pack-index write --bitmap &&
		merges $r-midx >m.out &&
		test_line_count = 1 m.out &&
		git -C $r-midx rev-parse A >expect &&
		merge_commits $r-midx 0 >actual &&
		test_cmp expect actual &&
		git -C $r-midx multi-pack-index verify
	'

	test_expect_success "$algo: a damaged section is refused, naming the file and offset" '
		gitpack -C $r -c bitmapPseudoMerge.tags.maxMerges=2 repack -adbq &&
		bm=$(ls $r/.git/objects/pack/pack-*.bitmap) &&
		cp $bm bm.good &&
		# the merge count, in the metadata before the lookup table,
		# the name-hash cache and the trailer
		objects=$(git -C $r rev-list --all --objects | wc -l) &&
		entries=$(nr_entries $bm) &&
		rawsz=$(test $algo = sha1 && echo 20 || echo 32) &&
		at=$(( $(wc -c <$bm) - rawsz - 4 * objects - 16 * entries - 24 )) &&
		chmod u+w $bm &&
		printf "\377" | dd of=$bm bs=1 seek=$at conv=notrunc 2>/dev/null &&
		perl -MDigest::SHA -e "
			open(my \$f, q(+<:raw), \$ARGV[0]) or die; local \$/; my \$d = <\$f>;
			my \$n = \$ARGV[1]; my \$body = substr(\$d, 0, length(\$d) - \$n);
			my \$h = \$n == 20 ? Digest::SHA::sha1(\$body) : Digest::SHA::sha256(\$body);
			seek(\$f, 0, 0); print \$f \$body, \$h;" $bm $rawsz &&
		test_must_fail merges $r 2>err &&
		grep "pack-.*\.bitmap: pseudo-merges: .* at offset [0-9]" err &&
		cp bm.good $bm
	'
done

test_done
