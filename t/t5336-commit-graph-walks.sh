#!/bin/sh

test_description='the commit walks of serving read the commit-graph

upload-pack (the negotiation, its reachability check of wants and the
walk that counts the pack) and pack-objects --revs take parents, trees,
dates and generation numbers from the repository'\''s commit-graph.

Equivalence: with a true graph, without one and with core.commitGraph
=false, gitpack answers v2 fetches (acknowledgments, ready, the objects
of the pack) as git upload-pack does, pack-objects --revs packs what git
packs, and git fetch from gitpack gets a pack git verifies.

Proof that the graph is read: a lying graph, still well formed, whose
entry for the tip names a side commit as its parent (the side branch is
no longer referenced). With it, and only when the graph is read, the
tip reaches the side commit: a "have" of it makes the negotiation
ready, a want of it passes allowReachableSHA1InWant, and the packs of
upload-pack and pack-objects hold the side commits. A second lie raises
the generation of a have and its parent above the tip'\''s: then the
generation cut of the negotiation keeps the tip from reaching the have.
core.commitGraph=false makes each answer the true one again.
SHA-1 and SHA-256.

gitpack serve keeps a repository'\''s graph between requests: a graph
replaced on disk (the lying one by a true one, and back) changes the
next answer.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

GIT_USER_AGENT=gitpack-test-agent
export GIT_USER_AGENT

. "$TEST_DIRECTORY"/lib-pkt.sh

# fetch_req REPO ALGO ARG...: a v2 fetch request, "want REV" and
# "have REV" naming revisions of REPO.
fetch_req () {
	fr_repo_=$1 fr_algo_=$2
	shift 2
	packetize command=fetch object-format=$fr_algo_ 0001 &&
	for fr_arg_
	do
		case "$fr_arg_" in
		want\ *|have\ *)
			packetize "${fr_arg_%% *} $(cat $fr_repo_.oids/${fr_arg_#* })" ;;
		*)
			packetize "$fr_arg_" ;;
		esac || return 1
	done &&
	packetize 0000
}

# answer FILE: the text of a v2 answer, a line a packet, "<pack>" for
# the pack, which goes (without its side-band framing) to FILE.pack.
answer () {
	perl -e '
		my $file = shift;
		open(my $in, "<", $file) or die "$file: $!\n";
		open(my $pack, ">", "$file.pack") or die;
		binmode($_) for ($in, $pack);
		my $d = do { local $/; <$in> };
		my ($pos, $in_pack) = (0, 0);
		while ($pos < length($d)) {
			my $hdr = substr($d, $pos, 4);
			if ($hdr =~ /^000[012]$/) {
				print "$hdr\n";
				$pos += 4;
				next;
			}
			die "bad pkt-line header \"$hdr\" at $pos\n"
				unless $hdr =~ /^[0-9a-f]{4}$/ && hex($hdr) >= 4;
			my $len = hex($hdr);
			my $payload = substr($d, $pos + 4, $len - 4);
			my $band = ord($payload);
			if ($in_pack && $band == 1) {
				print $pack substr($payload, 1);
			} elsif ($in_pack && $band == 2) {
			} elsif ($in_pack) {
				die "band $band in the pack\n";
			} else {
				$payload =~ s/\n$//;
				print "$payload\n";
				if ($payload eq "packfile") {
					$in_pack = 1;
					print "<pack>\n";
				}
			}
			$pos += $len;
		}
	' "$1"
}

# pack_list ALGO PACK: the ids in PACK, sorted, after git index-pack
# and git verify-pack of it.
pack_list () {
	git -C scratch-$1 index-pack -o "$PWD/${2%.pack}.idx" "$PWD/$2" >/dev/null &&
	git -C scratch-$1 verify-pack -v "$PWD/${2%.pack}.idx" >"$2.verify" &&
	grep -E "^[0-9a-f]{40,64} " "$2.verify" | cut -d" " -f1 | LC_ALL=C sort
}

# serve REPO ALGO NAME [CONFIG]: NAME.req through gitpack upload-pack
# (with "-c CONFIG" when given) of REPO, v2; the answer's text in
# NAME.text and the pack's objects (if any) in NAME.objects.
serve () {
	sv_repo_=$1 sv_algo_=$2 sv_name_=$3
	if test -n "$4"
	then
		GIT_PROTOCOL=version=2 gitpack -c "$4" upload-pack --stateless-rpc $sv_repo_ \
			<$sv_name_.req >$sv_name_.out
	else
		GIT_PROTOCOL=version=2 gitpack upload-pack --stateless-rpc $sv_repo_ \
			<$sv_name_.req >$sv_name_.out
	fi &&
	answer $sv_name_.out >$sv_name_.text &&
	if test -s $sv_name_.out.pack
	then
		pack_list $sv_algo_ $sv_name_.out.pack >$sv_name_.objects
	else
		: >$sv_name_.objects
	fi
}

# serve_git REPO ALGO NAME: the same through git upload-pack (the oracle).
serve_git () {
	GIT_PROTOCOL=version=2 git upload-pack --stateless-rpc $1 <$3.req >$3.out &&
	answer $3.out >$3.text &&
	if test -s $3.out.pack
	then
		pack_list $2 $3.out.pack >$3.objects
	else
		: >$3.objects
	fi
}

# graph_patch FILE ALGO OID CHUNK OFS HEXBYTES: overwrite OID's entry of
# CHUNK (CDAT entries are rawsz + 16 bytes, GDA2 ones 4) at OFS bytes in.
graph_patch () {
	perl -e '
		my ($file, $rawsz, $oid, $chunk, $ofs, $hex) = @ARGV;
		open(my $fh, "+<:raw", $file) or die "$file: $!\n";
		local $/; my $d = <$fh>;
		my %at;
		for my $i (0 .. ord(substr($d, 6, 1)) - 1) {
			my ($id, $o) = unpack("a4 Q>", substr($d, 8 + 12 * $i, 12));
			$at{$id} = $o;
		}
		my $nr = unpack("N", substr($d, $at{OIDF} + 255 * 4, 4));
		my $want = pack("H*", $oid);
		my ($pos) = grep { substr($d, $at{OIDL} + $_ * $rawsz, $rawsz) eq $want } 0 .. $nr - 1;
		die "$oid is not in $file\n" unless defined $pos;
		my $size = $chunk eq "CDAT" ? $rawsz + 16 : 4;
		my $bytes = pack("H*", $hex);
		substr($d, $at{$chunk} + $pos * $size + $ofs, length($bytes)) = $bytes;
		seek($fh, 0, 0); print $fh $d;
	' "$1" $(test_oid_rawsz $2) $3 $4 $5 $6
}

# graph_pos_hex FILE ALGO OID: OID's graph position, as 8 hex digits.
graph_pos_hex () {
	perl -e '
		my ($file, $rawsz, $oid) = @ARGV;
		open(my $fh, "<:raw", $file) or die "$file: $!\n";
		local $/; my $d = <$fh>;
		my %at;
		for my $i (0 .. ord(substr($d, 6, 1)) - 1) {
			my ($id, $o) = unpack("a4 Q>", substr($d, 8 + 12 * $i, 12));
			$at{$id} = $o;
		}
		my $nr = unpack("N", substr($d, $at{OIDF} + 255 * 4, 4));
		my $want = pack("H*", $oid);
		my ($pos) = grep { substr($d, $at{OIDL} + $_ * $rawsz, $rawsz) eq $want } 0 .. $nr - 1;
		die "$oid is not in $file\n" unless defined $pos;
		printf "%08x\n", $pos;
	' "$1" $(test_oid_rawsz $2) $3
}

for algo in $test_hash_algos
do
	test_expect_success "setup: history, a graph, an unreferenced side branch ($algo)" '
		git init -q --object-format=$algo scratch-$algo &&
		git init -q -b main --object-format=$algo srv-$algo &&
		mkdir srv-$algo.oids &&
		for i in 1 2 3
		do
			test_commit -C srv-$algo c$i || return 1
		done &&
		git -C srv-$algo checkout -q -b side &&
		test_commit -C srv-$algo s1 &&
		test_commit -C srv-$algo s2 &&
		git -C srv-$algo checkout -q main &&
		for i in 4 5 6 7 8
		do
			test_commit -C srv-$algo c$i || return 1
		done &&
		for n in c1 c2 c3 c4 c5 c6 c7 c8 s1 s2
		do
			git -C srv-$algo rev-parse $n >srv-$algo.oids/$n || return 1
		done &&
		git -C srv-$algo repack -adq &&
		gitpack -C srv-$algo commit-graph write --reachable --no-progress &&
		git -C srv-$algo commit-graph verify &&
		# what only the lie reaches: kept, loose, but no ref names it
		git -C srv-$algo tag -d s1 s2 >/dev/null &&
		git -C srv-$algo branch -q -D side &&
		test_path_is_missing srv-$algo/.git/objects/info/commit-graphs &&
		rm -rf nograph-$algo liar-$algo genliar-$algo &&
		cp -R srv-$algo nograph-$algo &&
		rm nograph-$algo/.git/objects/info/commit-graph &&
		for r in liar genliar
		do
			cp -R srv-$algo $r-$algo &&
			cp -R srv-$algo.oids $r-$algo.oids || return 1
		done &&
		cp -R srv-$algo.oids nograph-$algo.oids &&
		# the tip'\''s first parent is s2 in the graph
		graph_patch liar-$algo/.git/objects/info/commit-graph $algo \
			$(cat srv-$algo.oids/c8) CDAT $(test_oid_rawsz $algo) \
			$(graph_pos_hex srv-$algo/.git/objects/info/commit-graph $algo \
				$(cat srv-$algo.oids/s2)) &&
		# c4 and its parent c3 get a generation far above the tip'\''s
		# (GDA2: corrected commit date - commit date)
		for n in c3 c4
		do
			graph_patch genliar-$algo/.git/objects/info/commit-graph $algo \
				$(cat srv-$algo.oids/$n) GDA2 0 10000000 || return 1
		done &&
		! test_cmp_bin srv-$algo/.git/objects/info/commit-graph \
			liar-$algo/.git/objects/info/commit-graph &&
		! test_cmp_bin srv-$algo/.git/objects/info/commit-graph \
			genliar-$algo/.git/objects/info/commit-graph &&
		# the lies are well formed: git still reads the files (and finds them wrong)
		test_must_fail git -C liar-$algo commit-graph verify 2>err &&
		test_must_fail git -C genliar-$algo commit-graph verify 2>err
	'

	test_expect_success "v2 fetches: as git answers, with and without the graph ($algo)" '
		for req in "want c8;have c4" "want c8;have c4;done" "want c8;have c1" \
			"want c8;have s2" "want c8;have s2;have c2" "want c6;want c8;have c5;have s1" \
			"want c8;have c7;have c2;done" "want c2;have c8"
		do
			IFS=";" &&
			set -- $req &&
			unset IFS &&
			fetch_req srv-$algo $algo "$@" >eq.req &&
			cp eq.req eq.git.req &&
			serve_git srv-$algo $algo eq.git &&
			cp eq.req eq.gp.req &&
			cp eq.req eq.off.req &&
			cp eq.req eq.none.req &&
			serve srv-$algo $algo eq.gp &&
			serve srv-$algo $algo eq.off core.commitGraph=false &&
			serve nograph-$algo $algo eq.none &&
			for v in gp off none
			do
				test_cmp eq.git.text eq.$v.text &&
				test_cmp eq.git.objects eq.$v.objects || return 1
			done || return 1
		done
	'

	test_expect_success "a lying graph: the negotiation reads it ($algo)" '
		fetch_req liar-$algo $algo "want c8" "have s2" >neg.req &&
		cp neg.req neg.true.req &&
		cp neg.req neg.lie.req &&
		cp neg.req neg.off.req &&
		serve srv-$algo $algo neg.true &&
		! grep "^ready\$" neg.true.text &&
		serve liar-$algo $algo neg.lie &&
		grep "^ready\$" neg.lie.text &&
		serve liar-$algo $algo neg.off core.commitGraph=false &&
		test_cmp neg.true.text neg.off.text
	'

	test_expect_success "a lying graph: the pack walk of upload-pack reads it ($algo)" '
		fetch_req liar-$algo $algo "want c8" "have c4" done >pk.req &&
		cp pk.req pk.true.req &&
		cp pk.req pk.lie.req &&
		cp pk.req pk.off.req &&
		serve srv-$algo $algo pk.true &&
		serve liar-$algo $algo pk.lie &&
		serve liar-$algo $algo pk.off core.commitGraph=false &&
		test_cmp pk.true.objects pk.off.objects &&
		! grep $(cat srv-$algo.oids/s2) pk.true.objects &&
		grep $(cat srv-$algo.oids/s2) pk.lie.objects &&
		grep $(cat srv-$algo.oids/s1) pk.lie.objects
	'

	# v0 (stateless, as smart HTTP): a want that is no tip must be
	# reachable from one (v2 takes any object)
	test_expect_success "a lying graph: the reachability check of wants reads it ($algo)" '
		packetize "want $(cat srv-$algo.oids/s2) side-band-64k ofs-delta" 0000 done >rw.req &&
		test_must_fail gitpack upload-pack --stateless-rpc srv-$algo <rw.req \
			>rw.true.out 2>rw.true.err &&
		grep "not our ref $(cat srv-$algo.oids/s2)" rw.true.err &&
		gitpack upload-pack --stateless-rpc liar-$algo <rw.req >rw.lie.out &&
		test_file_not_empty rw.lie.out &&
		test_must_fail gitpack -c core.commitGraph=false upload-pack --stateless-rpc \
			liar-$algo <rw.req >rw.off.out 2>rw.off.err &&
		test_cmp rw.true.err rw.off.err
	'

	test_expect_success "a lying generation: the negotiation cuts by generation ($algo)" '
		fetch_req genliar-$algo $algo "want c8" "have c4" >gen.req &&
		cp gen.req gen.true.req &&
		cp gen.req gen.lie.req &&
		cp gen.req gen.off.req &&
		serve srv-$algo $algo gen.true &&
		grep "^ready\$" gen.true.text &&
		serve genliar-$algo $algo gen.lie &&
		! grep "^ready\$" gen.lie.text &&
		serve genliar-$algo $algo gen.off core.commitGraph=false &&
		test_cmp gen.true.text gen.off.text
	'

	test_expect_success "pack-objects --revs: as git packs, with and without the graph ($algo)" '
		for revs in "c8" "c8 ^c4" "c6 c8 ^c2 ^c5"
		do
			for r in $revs
			do
				case $r in
				^*) echo "^$(cat srv-$algo.oids/${r#^})" ;;
				*) cat srv-$algo.oids/$r ;;
				esac || return 1
			done >revs.in &&
			git -C srv-$algo pack-objects --revs --stdout <revs.in >po.git.pack &&
			gitpack -C srv-$algo pack-objects --revs --stdout <revs.in >po.gp.pack &&
			gitpack -C srv-$algo -c core.commitGraph=false pack-objects --revs --stdout \
				<revs.in >po.off.pack &&
			gitpack -C nograph-$algo pack-objects --revs --stdout <revs.in >po.none.pack &&
			pack_list $algo po.git.pack >po.git.list &&
			for v in gp off none
			do
				pack_list $algo po.$v.pack >po.$v.list &&
				test_cmp po.git.list po.$v.list || return 1
			done || return 1
		done
	'

	test_expect_success "a lying graph: pack-objects --revs reads it ($algo)" '
		{
			cat srv-$algo.oids/c8 &&
			echo "^$(cat srv-$algo.oids/c4)"
		} >revs.in &&
		gitpack -C srv-$algo pack-objects --revs --stdout <revs.in >pl.true.pack &&
		gitpack -C liar-$algo pack-objects --revs --stdout <revs.in >pl.lie.pack &&
		gitpack -C liar-$algo -c core.commitGraph=false pack-objects --revs --stdout \
			<revs.in >pl.off.pack &&
		pack_list $algo pl.true.pack >pl.true.list &&
		pack_list $algo pl.lie.pack >pl.lie.list &&
		pack_list $algo pl.off.pack >pl.off.list &&
		test_cmp pl.true.list pl.off.list &&
		! grep $(cat srv-$algo.oids/s2) pl.true.list &&
		grep $(cat srv-$algo.oids/s2) pl.lie.list
	'

	test_expect_success "gitpack serve: a graph replaced between requests is read anew ($algo)" '
		rm -rf served-$algo &&
		mkdir served-$algo &&
		cp -R liar-$algo/.git served-$algo/repo.git &&
		git -C served-$algo/repo.git config core.bare true &&
		graph=served-$algo/repo.git/objects/info/commit-graph &&
		chmod u+w $graph &&
		fetch_req liar-$algo $algo "want c8" "have s2" >srv.req &&
		{
			timeout 300 gitpack serve --base-path="$PWD/served-$algo" --export-all \
				--http=127.0.0.1:0 </dev/null >serve.out 2>serve.err &
		} &&
		pid=$! &&
		test_when_finished "kill $pid; wait $pid" &&
		for i in $(test_seq 200)
		do
			grep "listening on" serve.out >/dev/null && break
			sleep 0.05
		done &&
		url=$(sed -n "s|^gitpack serve: listening on \(http://.*\)/\$|\1|p" serve.out)/repo.git &&
		# post NAME: the request to the server; its answer in NAME.text
		post () {
			curl -s -X POST -H "Content-Type: application/x-git-upload-pack-request" \
				-H "Git-Protocol: version=2" --data-binary @srv.req \
				-o $1.out "$url/git-upload-pack" &&
			answer $1.out >$1.text
		} &&
		post first &&
		grep "^ready\$" first.text &&
		post again &&
		grep "^ready\$" again.text &&
		# maintenance renames a new graph into place
		cp srv-$algo/.git/objects/info/commit-graph $graph.new &&
		mv $graph.new $graph &&
		post truth &&
		! grep "^ready\$" truth.text &&
		cp liar-$algo/.git/objects/info/commit-graph $graph.new &&
		mv $graph.new $graph &&
		post lie &&
		grep "^ready\$" lie.text &&
		rm $graph &&
		post none &&
		! grep "^ready\$" none.text
	'

	test_expect_success "git fetch from gitpack upload-pack: the same with and without the graph ($algo)" '
		for v in gp none
		do
			case $v in
			gp) src=srv-$algo ;;
			none) src=nograph-$algo ;;
			esac &&
			rm -rf fetch-$v-$algo &&
			git init -q --bare --object-format=$algo fetch-$v-$algo &&
			git -C fetch-$v-$algo -c transfer.unpackLimit=1 fetch -q --no-tags \
				--upload-pack="gitpack upload-pack" "$PWD/$src" \
				$(cat srv-$algo.oids/c4):refs/heads/main &&
			git -C fetch-$v-$algo -c transfer.unpackLimit=1 -c protocol.version=2 fetch --no-tags -v \
				--upload-pack="gitpack upload-pack" "$PWD/$src" \
				main:refs/remotes/o/main 2>fetch-$v.err &&
			git -C fetch-$v-$algo fsck --no-progress &&
			git -C fetch-$v-$algo rev-parse refs/remotes/o/main >fetch-$v.tip &&
			git -C fetch-$v-$algo count-objects -v | grep -v size >fetch-$v.count &&
			for p in fetch-$v-$algo/objects/pack/*.idx
			do
				git -C fetch-$v-$algo verify-pack "$PWD/$p" || return 1
			done || return 1
		done &&
		test_cmp srv-$algo.oids/c8 fetch-gp.tip &&
		test_cmp fetch-gp.tip fetch-none.tip &&
		test_cmp fetch-gp.count fetch-none.count
	'
done

test_done
