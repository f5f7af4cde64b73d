#!/bin/sh

test_description='MIDX chains: updates killed at any moment, and read while they run

The promise of a chain update (midx-write.h, gitpack-multi-pack-index(1)):
new layers are written beside the chain the chain file names, the chain
file is replaced in one go, and only then are the layers and packs it no
longer needs removed. So a SIGKILL at any point leaves either the old
chain or the new one, every layer it names present and whole, and a
reader running meanwhile finds every object.

A template repository per object format (bare): a chain of four layers
written by "gitpack multi-pack-index write --incremental --bitmap" (of
packs of 150, 40, 12 and 4 commits), two packs outside the chain and
loose objects; some 1500 objects.

SIGKILL: the template is copied (hard links) and one of four chain
updates runs there in the background, in turn:
	repack -d --geometric=2 --write-midx=incremental --write-bitmap-index
		(repack.midxNewLayerThreshold=1: the top layer rolls up with
		the new packs, absorbs layers below it)
	repack --write-midx=incremental (a layer of the loose objects)
	multi-pack-index write --incremental --bitmap (a layer of the two
		packs outside the chain)
	multi-pack-index compact --incremental --bitmap <layer 2> <layer 3>
It is killed (its process group, SIGKILL) after a random fraction (0 to
1.05, one per slice of the range, from a logged seed) of the duration of
that update, measured beforehand and then by the complete runs that
follow the kills, so the delays follow the speed of the build (a
sanitizer build is slower) and of the machine. Each copy is judged:
the chain file names layers that all exist, and it is either the
template'"'"'s or passes as a new one; gitpack'"'"'s multi-pack-index verify
(and git 2.55'"'"'s, GIT_NEW, which reads chains: git 2.39 does not);
"git fsck --full"; every object of the template is found by git and by
gitpack cat-file, and every object the old chain held is found through
the chain (test-tool midx-dump); the bitmaps count every reachable
object (gitpack rev-list --use-bitmap-index, and git 2.55'"'"'s, against
stock git'"'"'s walk). Then the same
update runs to completion, must not be confused by what the kill left,
and the checks pass again. Each kill is logged with what the directory
holds (old or new chain, temporary files left, layers not in the
chain), and the test ends with the distribution of delays and states.

Readers: a background loop adds a pack (fast-import, as a push would)
and runs the four updates in turn, while the foreground reads every
object there is (the template'"'"'s and those added since) with gitpack
cat-file --batch-check and stock git'"'"'s, and a long-running gitpack
cat-file --batch, fed a little at a time, answers across updates that
delete the layers and packs it had opened. None may miss an object.

Knobs (environment):
	GP_KILL_POINTS=N	kills in all, split between the object
				formats (default 52)
	GP_KILL_SEED=N		seed of the delays (default 7707; logged;
				SHA-256 uses N+1)
	GP_KILL_READERS=N	reader rounds per object format (default 4)
SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

ck_points=${GP_KILL_POINTS:-52}
ck_seed=${GP_KILL_SEED:-7707}
ck_readers=${GP_KILL_READERS:-4}

if command -v timeout >/dev/null 2>&1
then
	ck_timeout="timeout 300"
else
	ck_timeout=
fi

# ck_stream FIRST LAST: a git fast-import stream of commits FIRST..LAST
# of main. Commit k sets line k*37%150 of numbers.txt and line k%40 of
# d<k%8>/f<k%24>.txt; its content does not depend on FIRST, so a
# history can be imported in several runs.
ck_stream () {
	perl -e '
		use strict;
		my ($first, $last) = @ARGV;
		my $ref = "refs/heads/main";
		my @numbers = map { "number $_\n" } 1 .. 150;
		my %files;
		for my $k (1 .. $last) {
			$numbers[$k * 37 % 150] = "edited by commit $k\n";
			my $f = "d" . $k % 8 . "/f" . $k % 24 . ".txt";
			$files{$f} //= [ map { "line $_ of $f\n" } 1 .. 40 ];
			$files{$f}[$k % 40] = "changed by commit $k\n";
			next if $k < $first;
			my $when = 1700000000 + 60 * $k;
			my $msg = "commit $k\n";
			print "commit $ref\n";
			print "committer C O Mitter <committer\@example.com> $when +0000\n";
			print "data ", length($msg), "\n$msg";
			print "from $ref^0\n" if $k == $first && $first > 1;
			for my $p ("numbers.txt", $k == $first ? (sort keys %files) : ($f)) {
				my $body = join("", $p eq "numbers.txt" ? @numbers : @{$files{$p}});
				print "M 100644 inline $p\ndata ", length($body), "\n$body\n";
			}
			print "\n";
		}
	' "$@"
}

# ck_import DIR FIRST LAST [LOOSE]: import those commits into the
# repository DIR, as one pack (loose objects when LOOSE is given).
ck_import () {
	if test -n "$4"
	then
		gp_ci_limit_=100000
	else
		gp_ci_limit_=0
	fi &&
	ck_stream "$2" "$3" >"$1.stream" &&
	git -C "$1" -c fastimport.unpackLimit=$gp_ci_limit_ fast-import --quiet <"$1.stream" &&
	rm -f "$1.stream"
}

# ck_now_ms: the time, in milliseconds.
ck_now_ms () {
	perl -MTime::HiRes=time -e 'printf "%d\n", time() * 1000'
}

# ck_chain DIR: the chain file of the bare repository DIR.
ck_chain () {
	echo "$1/objects/pack/multi-pack-index.d/multi-pack-index-chain"
}

# ck_packs DIR: the .idx names of DIR whose .pack is there, sorted.
ck_packs () {
	(cd "$1/objects/pack" && for idx in pack-*.idx; do test -f "${idx%.idx}.pack" && echo "$idx"; done)
}

# ck_chained DIR ALGO: the objects DIR's chain holds, sorted.
ck_chained () {
	test-tool midx-dump --object-format=$2 offsets "$1/objects/pack" | cut -d" " -f1 | sort
}

# ck_chain_packs DIR ALGO: the .idx names DIR's chain lists, sorted.
ck_chain_packs () {
	test-tool midx-dump --object-format=$2 packs "$1/objects/pack" | sort
}

# ck_temporaries DIR: files under DIR/objects/pack that are neither
# packs and their companions nor chain files: what a killed writer
# leaves (tmp_gitpack_*) and locks.
ck_temporaries () {
	(cd "$1/objects/pack" && find . -type f) | sed "s|^\./||" |
	grep -v -e "^pack-[0-9a-f]*\.\(pack\|idx\|rev\|bitmap\)$" \
		-e "^multi-pack-index\.d/multi-pack-index-chain$" \
		-e "^multi-pack-index\.d/multi-pack-index-[0-9a-f]*\.\(midx\|bitmap\|rev\)$" | sort
}

# ck_mode K: the update K (K is taken mod 4) for the repository DIR
# whose template is TMPL: the command line, without "gitpack -C DIR".
ck_mode () {
	case $(($1 % 4)) in
	0) echo "repack -q -d --geometric=2 --write-midx=incremental --write-bitmap-index" ;;
	1) echo "repack -q --write-midx=incremental" ;;
	2) echo "multi-pack-index write --no-progress --incremental --bitmap" ;;
	3) echo "multi-pack-index compact --no-progress --incremental --bitmap" \
		$(sed -n 2,3p "$(ck_chain "$2")") ;;
	esac
}

# ck_template ALGO: tmpl-ALGO as described above; tmpl-ALGO.all lists
# its objects (all reachable), .loose its loose ones, .chained those
# its chain holds, .chain is its chain file.
ck_template () {
	gp_ct_t_=tmpl-$1
	rm -rf "$gp_ct_t_" &&
	git init -q --bare -b main --object-format="$1" "$gp_ct_t_" &&
	rm -rf "$gp_ct_t_/hooks" "$gp_ct_t_/description" &&
	git -C "$gp_ct_t_" config gc.auto 0 &&
	git -C "$gp_ct_t_" config repack.midxNewLayerThreshold 1 &&
	gp_ct_last_=0 &&
	for gp_ct_n_ in 150 40 12 4
	do
		ck_import "$gp_ct_t_" $((gp_ct_last_ + 1)) $((gp_ct_last_ + gp_ct_n_)) &&
		gp_ct_last_=$((gp_ct_last_ + gp_ct_n_)) &&
		gitpack -C "$gp_ct_t_" multi-pack-index write --no-progress --incremental --bitmap ||
		return 1
	done &&
	for gp_ct_n_ in 3 2
	do
		ck_import "$gp_ct_t_" $((gp_ct_last_ + 1)) $((gp_ct_last_ + gp_ct_n_)) &&
		gp_ct_last_=$((gp_ct_last_ + gp_ct_n_)) || return 1
	done &&
	ck_import "$gp_ct_t_" $((gp_ct_last_ + 1)) $((gp_ct_last_ + 4)) loose &&
	gp_ct_last_=$((gp_ct_last_ + 4)) &&
	echo $gp_ct_last_ >"$gp_ct_t_.last" &&
	git -C "$gp_ct_t_" cat-file --batch-all-objects --batch-check="%(objectname)" \
		>"$gp_ct_t_.all" &&
	(cd "$gp_ct_t_/objects" && find ?? -type f) | tr -d / | sort >"$gp_ct_t_.loose" &&
	ck_chained "$gp_ct_t_" "$1" >"$gp_ct_t_.chained" &&
	cp "$(ck_chain "$gp_ct_t_")" "$gp_ct_t_.chain"
}

# ck_copy TMPL DIR: DIR, a copy of TMPL whose files are hard links
# (gitpack and git replace files, never write into one in place; the
# kill test checks that the template did not change).
ck_copy () {
	rm -rf "$2" &&
	cp -al "$1" "$2"
}

# ck_check DIR ALGO WHEN [light]: the copy DIR of tmpl-ALGO after some
# chain update, as described above. WHEN says when, in messages. With
# "light", neither fsck nor the bitmaps (after a complete run: time).
ck_check () {
	gp_cc_t_=tmpl-$2
	gp_cc_chain_=$(ck_chain "$1")
	if ! test -f "$gp_cc_chain_"
	then
		echo "no chain file $3"
		return 1
	fi
	for gp_cc_h_ in $(cat "$gp_cc_chain_")
	do
		if ! test -f "$1/objects/pack/multi-pack-index.d/multi-pack-index-$gp_cc_h_.midx"
		then
			echo "the chain names a missing layer $3: $gp_cc_h_"
			cat "$gp_cc_chain_"
			return 1
		fi
	done
	if test -f "$1/objects/pack/multi-pack-index"
	then
		echo "a lone MIDX $3"
		return 1
	fi
	gitpack -C "$1" multi-pack-index verify --no-progress || {
		echo "gitpack multi-pack-index verify fails $3"
		return 1
	}
	if test_have_prereq GIT_NEW
	then
		git_new -C "$1" multi-pack-index verify --no-progress || {
			echo "git 2.55 multi-pack-index verify fails $3"
			return 1
		}
	fi
	if test "$4" != light && ! git -C "$1" fsck --full --no-dangling --no-progress >fsck.out 2>&1
	then
		echo "git fsck fails $3:"
		cat fsck.out
		return 1
	fi
	git -C "$1" cat-file --batch-check <"$gp_cc_t_.all" >batch.git &&
	if grep " missing$" batch.git >missing
	then
		echo "git misses objects $3 ($(wc -l <missing) of $(wc -l <"$gp_cc_t_.all")):"
		sed 5q missing
		return 1
	fi &&
	gitpack -C "$1" cat-file --batch-check <"$gp_cc_t_.all" >batch.gp &&
	test_cmp batch.git batch.gp &&
	ck_chained "$1" "$2" >chained &&
	comm -23 "$gp_cc_t_.chained" chained >unchained &&
	if test -s unchained
	then
		echo "objects the old chain held are not in the chain $3 ($(wc -l <unchained)):"
		sed 5q unchained
		return 1
	fi &&
	if test "$4" = light
	then
		return 0
	fi &&
	# the objects the refs reach, walked by stock git, and through the
	# bitmaps (when the top layer has none, there are none: a walk)
	git -C "$1" rev-list --objects --all | cut -d" " -f1 | sort >walk &&
	gitpack -C "$1" rev-list --objects --all --use-bitmap-index | cut -d" " -f1 | sort >bitmap &&
	test_cmp walk bitmap &&
	if test_have_prereq GIT_NEW
	then
		git_new -C "$1" rev-list --objects --all --use-bitmap-index |
			cut -d" " -f1 | sort >bitmap &&
		test_cmp walk bitmap
	fi
}

# ck_state DIR ALGO: what the copy DIR of tmpl-ALGO holds, one line:
# the chain (old: the template's; new), the number of its layers, the
# temporary files left, the layers in the directory the chain does not
# name, the packs added and removed.
ck_state () {
	gp_cs_t_=tmpl-$2
	gp_cs_d_=$1/objects/pack/multi-pack-index.d
	if cmp -s "$(ck_chain "$1")" "$gp_cs_t_.chain"
	then
		gp_cs_chain_=old
	else
		gp_cs_chain_=new
	fi &&
	(cd "$gp_cs_d_" && ls multi-pack-index-*.midx 2>/dev/null) |
		sed -e "s/^multi-pack-index-//" -e "s/\.midx$//" | sort >state.layers &&
	sort "$(ck_chain "$1")" >state.named &&
	ck_packs "$gp_cs_t_" >state.before &&
	ck_packs "$1" >state.after &&
	ck_temporaries "$1" >state.tmp &&
	echo "$gp_cs_chain_ layers=$(wc -l <state.named)" \
		"stray-layers=$(comm -23 state.layers state.named | wc -l)" \
		"new-packs=$(comm -13 state.before state.after | wc -l)" \
		"gone-packs=$(comm -23 state.before state.after | wc -l)" \
		"tmp=$(wc -l <state.tmp)" \
		$(sed -e "s|.*/||" -e "s/^\(tmp_[a-z]*_\).*/\1XXXXXX/" state.tmp | sort -u)
}

# ck_kill_run ALGO RUN MODE FRACTION LOG: copy tmpl-ALGO to kill-ALGO,
# start update MODE there and SIGKILL its process group FRACTION of the
# duration of the mode later; check; run the same update to completion;
# check again. The duration is read from kill-ALGO.msMODE and replaced
# by the mean of it and the complete run's. One line per run to LOG:
#	RUN MODE FRACTION DELAY EXIT STATE... | after: STATE
ck_kill_run () {
	gp_ck_t_=tmpl-$1
	gp_ck_k_=kill-$1
	gp_ck_cmd_=$(ck_mode $3 "$gp_ck_t_")
	gp_ck_ms_=$(cat "$gp_ck_k_.ms$3") &&
	gp_ck_delay_=$(awk -v f="$4" -v ms="$gp_ck_ms_" 'BEGIN { printf "%.3f\n", f * ms / 1000 }') &&
	ck_copy "$gp_ck_t_" "$gp_ck_k_" || return 1
	if command -v setsid >/dev/null 2>&1
	then
		setsid gitpack -C "$gp_ck_k_" $gp_ck_cmd_ >run.out 2>run.err &
	else
		gitpack -C "$gp_ck_k_" $gp_ck_cmd_ >run.out 2>run.err &
	fi
	gp_ck_pid_=$!
	sleep $gp_ck_delay_
	kill -9 -$gp_ck_pid_ 2>/dev/null || kill -9 $gp_ck_pid_ 2>/dev/null
	wait $gp_ck_pid_
	gp_ck_code_=$?
	if test $gp_ck_code_ != 0 && test $gp_ck_code_ != 137
	then
		echo "run $2: $gp_ck_cmd_ failed on its own (exit $gp_ck_code_):"
		cat run.err
		return 1
	fi
	gp_ck_state_=$(ck_state "$gp_ck_k_" $1) &&
	ck_temporaries "$gp_ck_k_" >kill.tmp &&
	echo "$gp_ck_state_" >kill.state &&
	printf "%3d %d %s %s %3d %s" "$2" "$3" "$4" $gp_ck_delay_ "$gp_ck_code_" \
		"$gp_ck_state_" >>"$5" &&
	echo "run $2: $gp_ck_cmd_, killed after $gp_ck_delay_ s: $gp_ck_state_" &&
	ck_check "$gp_ck_k_" $1 "after run $2 was killed" || return 1

	gp_ck_after_=
	# A compaction that got as far as the new chain file is done: its
	# layers are gone, and the same command is refused, changing nothing.
	if test $3 = 3 && ! cmp -s "$(ck_chain "$gp_ck_k_")" "$gp_ck_t_.chain"
	then
		test_must_fail gitpack -C "$gp_ck_k_" $gp_ck_cmd_ 2>again.err &&
		grep "could not find MIDX" again.err &&
		ck_check "$gp_ck_k_" $1 "after run $2 was done and refused again" light &&
		echo " | after: refused $(ck_state "$gp_ck_k_" $1)" >>"$5"
		return
	fi
	gp_ck_start_=$(ck_now_ms)
	if ! gitpack -C "$gp_ck_k_" $gp_ck_cmd_ >again.out 2>again.err
	then
		cat again.err
		# A kill while the chain file was written leaves its lock,
		# which stops the next update before it removes anything
		# (t7705), as in git; an operator removes it.
		if grep "multi-pack-index-chain\.lock" again.err >/dev/null &&
		   test -f "$(ck_chain "$gp_ck_k_").lock"
		then
			gp_ck_after_="stale-lock-removed "
			ck_check "$gp_ck_k_" $1 "after run $2 was stopped by the lock" light &&
			rm -f "$(ck_chain "$gp_ck_k_").lock" &&
			gp_ck_start_=$(ck_now_ms) &&
			gitpack -C "$gp_ck_k_" $gp_ck_cmd_ >again.out || return 1
		else
			echo "run $2: the update after the kill fails"
			return 1
		fi
	fi
	echo $(( (gp_ck_ms_ + $(ck_now_ms) - gp_ck_start_ - ck_clock) / 2 )) >"$gp_ck_k_.ms$3" &&
	ck_check "$gp_ck_k_" $1 "after run $2 and a complete run" light &&
	ck_complete "$gp_ck_k_" $1 $3 &&
	echo " | after: ${gp_ck_after_}$(ck_state "$gp_ck_k_" $1)" >>"$5"
}

# ck_complete DIR ALGO MODE: after a complete run of update MODE, what
# it must have done, whatever a kill left before: the geometric repack
# and the write leave every pack in the chain; the repack packs the
# loose objects, in a layer (unless the kill left their pack: state in
# kill.state); the compaction one layer fewer than the template; no
# stray layer is left, nor temporary files but those of the kill
# (kill.tmp).
ck_complete () {
	ck_chain_packs "$1" $2 >complete.chain &&
	ck_packs "$1" >complete.dir &&
	case $3 in
	0|2)
		test_cmp complete.dir complete.chain ;;
	1)
		# packed; in the chain, unless a kill left them in a pack
		# already: the next repack has nothing to pack then, and
		# leaves the chain as it is (so does git 2.55)
		for gp_cc_idx_ in $(ck_packs "$1")
		do
			git show-index --object-format=$2 <"$1/objects/pack/$gp_cc_idx_" ||
			return 1
		done | cut -d" " -f2 | sort >complete.packed &&
		comm -23 tmpl-$2.loose complete.packed >complete.loose &&
		test_must_be_empty complete.loose &&
		if ! grep "new-packs=[1-9]" kill.state >/dev/null
		then
			ck_chained "$1" $2 >complete.chained &&
			comm -23 tmpl-$2.loose complete.chained >complete.unchained &&
			test_must_be_empty complete.unchained
		fi ;;
	3)
		test_line_count = $(($(wc -l <tmpl-$2.chain) - 1)) "$(ck_chain "$1")" ;;
	esac &&
	(cd "$1/objects/pack/multi-pack-index.d" && ls multi-pack-index-*.midx) |
		sed -e "s/^multi-pack-index-//" -e "s/\.midx$//" | sort >complete.layers &&
	sort "$(ck_chain "$1")" >complete.named &&
	test_cmp complete.named complete.layers &&
	# a kill leaves its temporary files (for gc, as git does); no others
	ck_temporaries "$1" >complete.tmp &&
	comm -23 complete.tmp kill.tmp >complete.more &&
	test_must_be_empty complete.more
}

# ck_delays N SEED: the kill runs, "RUN MODE FRACTION" lines. Run r uses
# mode r%4; the runs of a mode are spread over its duration and a
# little beyond (FRACTION from 0 to 1.05), one per slice, at a random
# place in the slice.
ck_delays () {
	awk -v n="$1" -v seed="$2" '
		BEGIN {
			srand(seed)
			for (r = 0; r < n; r++) {
				m = r % 4
				slices = int((n - m + 3) / 4)
				printf "%d %d %.3f\n", r + 1, m, (int(r / 4) + rand()) / slices * 1.05
			}
		}'
}

# ck_summary LOG: the distribution of the delays (tenths of the
# duration) and of the states in LOG.
ck_summary () {
	awk '
		{
			b = int($3 * 10)
			if (b > 10)
				b = 10
			delay[b]++
			state[($5 == 0 ? "finished" : "killed") "/" $6]++
			if ($0 ~ /stale-lock/)
				stale++
			if ($0 ~ / tmp=[1-9].*\|/)
				left++
			n++
		}
		END {
			printf "%d kills\n", n
			printf "delays, in tenths of the duration:"
			for (b = 0; b <= 10; b++)
				printf " %s%d:%d", b == 10 ? ">=" : "", b, delay[b]
			printf "\nstates (exit/chain):"
			for (s in state)
				printf " %s=%d", s, state[s]
			printf "\nkills that left temporary files or a lock: %d\n", left
			printf "next runs stopped by a stale chain lock: %d\n", stale
		}' "$1"
}

# ck_writer LIVE LOG: until LOG.stop exists (at most 100 cycles): add a
# pack of three commits to LIVE, then run the next of the four updates
# (the repack with --write-bitmap-index; the compaction when the chain
# has three layers or more). LOG gets a
# line per cycle, LOG.count the number of the last cycle done.
ck_writer () {
	gp_cw_i_=0
	while test $gp_cw_i_ -lt 100 && ! test -f "$2.stop" && kill -0 $$ 2>/dev/null
	do
		gp_cw_i_=$((gp_cw_i_ + 1))
		gp_cw_first_=$(($(cat "$1.last") + 1))
		if ck_import "$1" $gp_cw_first_ $((gp_cw_first_ + 2)) >>"$2" 2>&1 &&
		   echo $((gp_cw_first_ + 2)) >"$1.last"
		then
			:
		else
			echo "cycle $gp_cw_i_ FAILED: import" >>"$2"
		fi
		gp_cw_m_=$((gp_cw_i_ % 4))
		if test $gp_cw_m_ = 3 && test "$(wc -l <"$(ck_chain "$1")")" -lt 3
		then
			gp_cw_m_=2
		fi
		gp_cw_cmd_=$(ck_mode $gp_cw_m_ "$1")
		# (a layer without its pseudo-pack order would stop the
		# next write --bitmap: "could not load reverse index")
		if test $gp_cw_m_ = 1
		then
			gp_cw_cmd_="$gp_cw_cmd_ --write-bitmap-index"
		fi
		if $ck_timeout gitpack -C "$1" $gp_cw_cmd_ >>"$2" 2>&1
		then
			echo "cycle $gp_cw_i_ ok: $gp_cw_cmd_" >>"$2"
		else
			echo "cycle $gp_cw_i_ FAILED: $gp_cw_cmd_" >>"$2"
		fi
		echo $gp_cw_i_ >"$2.count+" &&
		mv -f "$2.count+" "$2.count"
	done
}

# ck_wait_for WHAT COMMAND...: run COMMAND every 0.05 s until it
# succeeds; after 60 s, say that WHAT did not happen and fail.
ck_wait_for () {
	gp_cwf_what_=$1 &&
	shift &&
	gp_cwf_tries_=0 &&
	until "$@"
	do
		gp_cwf_tries_=$((gp_cwf_tries_ + 1))
		if test $gp_cwf_tries_ -gt 1200
		then
			echo "waited 60 s: $gp_cwf_what_"
			return 1
		fi
		sleep 0.05
	done
}

# ck_long_reader DIR NAME: gitpack cat-file --batch in DIR, reading
# NAME.fifo; its output to NAME.out and NAME.err, its exit code to
# NAME.rc.
ck_long_reader () {
	$ck_timeout gitpack -C "$1" cat-file --batch <"$2.fifo" >"$2.out" 2>"$2.err"
	echo $? >"$2.rc"
}

# ck_writer_past LOG N: the writer has done more than N cycles.
ck_writer_past () {
	test "$(cat "$1.count")" -gt "$2"
}

# What ck_now_ms itself takes (a perl start), left out of the durations
# measured, so that the delays spread over the run of the update.
ck_clock=$(perl -MTime::HiRes=time -e '
	my $t0 = time(); system("perl", "-e", "1") for 1 .. 5;
	printf "%d\n", (time() - $t0) * 1000 / 5')

for algo in $test_hash_algos
do

t=tmpl-$algo
case $algo in
sha1) kills=$(( (ck_points + 1) / 2 )) seed=$ck_seed ;;
*) kills=$((ck_points / 2)) seed=$((ck_seed + 1)) ;;
esac

test_expect_success "setup: a chain of four layers, two packs outside it, loose objects ($algo)" '
	ck_template $algo &&
	test_line_count = 4 $t.chain &&
	ck_packs $t >packs &&
	test_line_count = 6 packs &&
	ck_chain_packs $t $algo >chain.packs &&
	test_line_count = 4 chain.packs &&
	ls $t/objects/pack/multi-pack-index.d/*.bitmap >bitmaps &&
	test_line_count = 4 bitmaps &&
	test "$(wc -l <$t.loose)" -ge 10 &&
	echo "template ($algo): $(wc -l <$t.all) objects, $(wc -l <$t.chained) in the chain" &&
	ck_check $t $algo "in the template" &&
	find $t -type f -printf "%p %s %T@\n" | sort >$t.files
'

test_expect_success "each update runs to completion on a copy; its duration ($algo)" '
	for m in 0 1 2 3
	do
		ck_copy $t full-$algo &&
		cmd=$(ck_mode $m $t) &&
		start=$(ck_now_ms) &&
		gitpack -C full-$algo $cmd >/dev/null &&
		end=$(ck_now_ms) &&
		echo $((end - start - ck_clock)) >kill-$algo.ms$m &&
		echo "$cmd ($algo): $((end - start)) ms; $(ck_state full-$algo $algo)" &&
		! cmp -s $t.chain $(ck_chain full-$algo) &&
		ck_check full-$algo $algo "after $cmd" &&
		: >kill.tmp &&
		: >kill.state &&
		ck_complete full-$algo $algo $m || return 1
	done
'

test_expect_success "SIGKILL at $kills random points, then a complete run ($algo)" '
	echo "delays: seed $seed (GP_KILL_SEED=$ck_seed), $kills runs (GP_KILL_POINTS=$ck_points" \
		"in all); durations measured: $(cat kill-$algo.ms0) $(cat kill-$algo.ms1)" \
		"$(cat kill-$algo.ms2) $(cat kill-$algo.ms3) ms" &&
	ck_delays $kills $seed >delays-$algo &&
	test_line_count = $kills delays-$algo &&
	: >kills-$algo.log &&
	while read run mode fraction
	do
		ck_kill_run $algo $run $mode $fraction kills-$algo.log || {
			echo "run $run failed: $(ck_mode $mode $t), $fraction of" \
				"$(cat kill-$algo.ms$mode) ms; GP_KILL_SEED=$ck_seed" \
				"GP_KILL_POINTS=$ck_points runs the same fractions"
			return 1
		}
	done <delays-$algo &&
	echo "--- kills ($algo): run mode fraction delay exit state | after the complete run" &&
	cat kills-$algo.log &&
	echo "durations at the end: $(cat kill-$algo.ms0) $(cat kill-$algo.ms1)" \
		"$(cat kill-$algo.ms2) $(cat kill-$algo.ms3) ms" &&
	ck_summary kills-$algo.log &&
	test_line_count = $kills kills-$algo.log &&
	# the copies shared the files of the template: none was changed
	find $t -type f -printf "%p %s %T@\n" | sort >files &&
	test_cmp $t.files files
'

test_expect_success "readers while packs land and the chain is updated ($algo)" '
	ck_copy $t live-$algo &&
	cp $t.last live-$algo.last &&
	log=writer-$algo.log &&
	rm -f $log $log.stop long-$algo.* &&
	echo 0 >$log.count &&
	{ ck_writer live-$algo $log >/dev/null 2>&1 & } &&
	writer=$! &&
	test_when_finished "touch $log.stop; wait $writer || :" &&

	# the long-running reader, fed through a fifo
	mkfifo long-$algo.fifo &&
	{ ck_long_reader live-$algo long-$algo & } &&
	long=$! &&
	# (read-write: the open does not wait for the reader)
	exec 9<>long-$algo.fifo &&
	: >long-$algo.fed &&
	n=$(wc -l <$t.all) &&
	part=$(( (n + ck_readers - 1) / ck_readers )) &&

	for round in $(test_seq $ck_readers)
	do
		# every object there is now: the template'"'"'s and those
		# added since, listed by stock git
		git -C live-$algo rev-list --objects --all | cut -d" " -f1 >round.list &&
		$ck_timeout gitpack -C live-$algo cat-file --batch-check <round.list >round.gp &&
		$ck_timeout git -C live-$algo cat-file --batch-check <round.list >round.git &&
		if test_have_prereq GIT_NEW
		then
			$ck_timeout "$GP_TEST_GIT_NEW" -C live-$algo cat-file --batch-check <round.list >round.new &&
			test_cmp round.git round.new
		fi &&
		! grep " missing$" round.gp &&
		! grep " missing$" round.git &&
		test_cmp round.git round.gp &&
		test_line_count = $(wc -l <round.list) round.gp &&
		sed -n "$(( (round - 1) * part + 1 )),$((round * part))p" $t.all >round.part &&
		cat round.part >>long-$algo.fed &&
		cat round.part >&9 &&
		echo "round $round: $(wc -l <round.list) objects; writer at cycle $(cat $log.count)" &&
		# the next round after two more updates
		c=$(cat $log.count) &&
		ck_wait_for "the writer to go on" ck_writer_past $log $((c + 1)) || return 1
	done &&
	# and what was added since the reader started
	sort $t.all >sorted.all &&
	git -C live-$algo rev-list --objects --all | cut -d" " -f1 |
		sort | comm -13 sorted.all - >added &&
	test -s added &&
	cat added >>long-$algo.fed &&
	cat added >&9 &&
	exec 9>&- &&
	wait $long &&
	touch $log.stop &&
	wait $writer &&
	cat $log &&
	! grep FAILED $log &&
	for m in repack multi-pack-index\ write multi-pack-index\ compact
	do
		grep " ok: $m" $log >/dev/null || return 1
	done &&
	echo "long reader: exit $(cat long-$algo.rc), fed $(wc -l <long-$algo.fed) names" &&
	cat long-$algo.err &&
	test "$(cat long-$algo.rc)" = 0 &&
	git -C live-$algo cat-file --batch <long-$algo.fed >long-$algo.expect &&
	cmp long-$algo.expect long-$algo.out &&
	ck_check live-$algo $algo "after the readers"
'

done

# A crash can forget a new directory that was not synced in its parent,
# with everything in it: the chain directory is synced in the pack
# directory before anything goes into it (the chain file and layers are
# synced with their own directory only). SIGKILL cannot show this; the
# system calls can.
test_lazy_prereq STRACE '
	strace -f -o strace.out true
'

# ck_synced_dir TRACE: in the strace output TRACE, the mkdir of
# multi-pack-index.d is followed by an fsync of the pack directory
# before any file is opened in it.
ck_synced_dir () {
	awk '
		/mkdir\(.*\/multi-pack-index\.d", .*= 0$/ { made = 1; next }
		made && /openat\(.*\/objects\/pack", .*O_DIRECTORY.*= [0-9]+$/ {
			fd[$NF] = 1; next
		}
		made && /fsync\([0-9]+\)/ {
			n = $0; sub(/.*fsync\(/, "", n); sub(/\).*/, "", n)
			if (n in fd) synced = 1
			next
		}
		made && !synced && /openat\(.*\/multi-pack-index\.d\// { early = 1 }
		END {
			if (!made) { print "no mkdir of multi-pack-index.d"; exit 1 }
			if (early || !synced) { print "multi-pack-index.d used before it is synced"; exit 1 }
		}' "$1"
}

test_expect_success STRACE "a new chain directory is synced in the pack directory (write and repack)" '
	rm -rf sync &&
	git init -q --bare sync &&
	ck_import sync 1 3 &&
	strace -f -e trace=mkdir,openat,fsync -o write.trace \
		gitpack -C sync multi-pack-index write --no-progress --incremental --bitmap &&
	ck_synced_dir write.trace &&
	rm -rf sync/objects/pack/multi-pack-index.d &&
	ck_import sync 4 6 &&
	strace -f -e trace=mkdir,openat,fsync -o repack.trace \
		gitpack -C sync repack -q -d --geometric=2 --write-midx=incremental &&
	ck_synced_dir repack.trace &&
	gitpack -C sync multi-pack-index verify
'

test_done
