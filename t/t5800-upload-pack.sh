#!/bin/sh

test_description='upload-pack at the protocol level, with stock git as the oracle

Every request is built here with printf (packetize) and fed to both
"git upload-pack" and "gitpack upload-pack"; the answers are compared
byte for byte where git'\''s are deterministic (GIT_USER_AGENT is fixed
so that the agent capability matches; a session-id is masked), and
otherwise line by line up to the pack, whose objects are compared after
"git index-pack". Git 2.39 is the oracle unless a behaviour changed
since: then git 2.55 (GIT_NEW), whose v2 advertisement offers
object-info only with transfer.advertiseObjectInfo, as gitpack does.

 - advertisements: v0, v1 and v2, --advertise-refs and a whole
   session, annotated tags (peeled lines), symbolic, unborn and hidden
   HEAD, an empty repository (capabilities^{}), the config that adds
   capabilities, hideRefs with "!" and "^", GIT_NAMESPACE, packed refs,
   a shallow repository;
 - ls-refs: symrefs, peel, ref-prefix (and its limit), unborn with
   lsrefs.unborn advertise, allow and ignore;
 - negotiation: v0 stateless rounds with multi_ack_detailed, multi_ack
   and neither, no-done, "done"; a whole v0 session; v2
   acknowledgments, ready, wait-for-done; the pack of each holds the
   objects git'\''s holds;
 - wants: tips, hidden tips (allowTipSHA1InWant), ancestors
   (allowReachableSHA1InWant, --stateless-rpc), any object in v2,
   missing objects;
 - filters: the capability, uploadpackfilter.* and their errors;
 - bad input: lengths, truncation, end of input, unknown commands,
   capabilities and arguments, and --timeout;
 - bounds: the ref-prefix limit, the round limit;
 - uploadpack.packObjectsHook from protected config only.

Where gitpack still differs from git the test expects git and is marked
as a known breakage. Depth requests (deepen*) are not tested here.
SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

GIT_USER_AGENT=gitpack-test-agent
export GIT_USER_AGENT

. "$TEST_DIRECTORY"/lib-pkt.sh

# serve_both NAME PROTO ARGS...: NAME.req to "upload-pack ARGS" of git
# (or of $oracle) and of gitpack, with GIT_PROTOCOL=PROTO; each one's
# stdout, stderr and exit code in NAME.{git,gp}.{out,err,code}.
oracle=git
serve_both () {
	sb_name_=$1 sb_proto_=$2
	shift 2
	GIT_PROTOCOL=$sb_proto_ $oracle upload-pack "$@" \
		<$sb_name_.req >$sb_name_.git.out 2>$sb_name_.git.err
	echo $? >$sb_name_.git.code
	GIT_PROTOCOL=$sb_proto_ gitpack upload-pack "$@" \
		<$sb_name_.req >$sb_name_.gp.out 2>$sb_name_.gp.err
	echo $? >$sb_name_.gp.code
}

# use_git_new: git 2.55 is the oracle of the current test
use_git_new () {
	oracle=git_new &&
	test_when_finished "oracle=git"
}

# the messages without the " (offset N)" gitpack adds to git's
strip_offset () {
	sed 's/ (offset [0-9]*)$//' "$@"
}

# same_answer NAME: the same bytes out, the same messages (offsets
# aside) and the same exit code.
same_answer () {
	test_cmp_bin $1.git.out $1.gp.out &&
	strip_offset $1.git.err >$1.git.msg &&
	strip_offset $1.gp.err >$1.gp.msg &&
	test_cmp $1.git.msg $1.gp.msg &&
	test_cmp $1.git.code $1.gp.code
}

# same_failure NAME: both failed, with the same message (offsets and
# empty lines aside) and exit code; gitpack by exiting, not by crashing.
same_failure () {
	! test "$(cat $1.git.code)" = 0 &&
	test "$(cat $1.gp.code)" -lt 130 &&
	strip_offset $1.git.err | sed "/^\$/d" >$1.git.msg &&
	strip_offset $1.gp.err | sed "/^\$/d" >$1.gp.msg &&
	test_cmp $1.git.msg $1.gp.msg &&
	test_cmp $1.git.code $1.gp.code
}

# depacketize FILE: the answer in FILE, a line per packet: a text
# line's payload (band 1 in sideband-all mode), "0000", "0001", "0002",
# "band3: MESSAGE"; the pack (raw after the text, or on band 1) is
# one "<pack>" line and goes to FILE.pack, progress to FILE.progress.
depacketize () {
	perl -e '
		my $file = shift;
		open(my $in, "<", $file) or die "$file: $!\n";
		open(my $pack, ">", "$file.pack") or die;
		open(my $progress, ">", "$file.progress") or die;
		binmode($_) for ($in, $pack, $progress);
		my $d = do { local $/; <$in> };
		my ($pos, $in_pack) = (0, 0);
		while ($pos < length($d)) {
			my $hdr = substr($d, $pos, 4);
			if ($hdr =~ /^000[012]$/) {
				print "$hdr\n";
				$pos += 4;
				next;
			}
			if ($hdr eq "PACK") {
				print $pack substr($d, $pos);
				print "<pack>\n";
				last;
			}
			die "bad pkt-line header \"$hdr\" at $pos\n"
				unless $hdr =~ /^[0-9a-f]{4}$/ && hex($hdr) >= 4;
			my $len = hex($hdr);
			my $payload = substr($d, $pos + 4, $len - 4);
			my $band = ord($payload);
			my $rest = substr($payload, 1);
			if ($band == 1 && ($in_pack || substr($rest, 0, 4) eq "PACK")) {
				print "<pack>\n" unless $in_pack;
				$in_pack = 1;
				print $pack $rest;
			} elsif ($band == 2) {
				print $progress $rest;
			} else {
				my $line = $band == 1 ? $rest : $payload;
				$line =~ s/\n$//;
				print $band == 3 ? "band3: $line\n" : "$line\n";
			}
			$pos += $len;
		}
	' "$1"
}

# pack_objects ALGO PACK: the sorted ids of the objects in PACK (whole,
# not thin), as the .idx stock git writes for it lists them.
pack_objects () {
	git -C scratch-$1 index-pack -o "$PWD/$2.idx" "$PWD/$2" >/dev/null &&
	perl -e '
		my ($rawsz, $idx) = @ARGV;
		open(my $in, "<", $idx) or die "$idx: $!\n";
		binmode($in);
		my $d = do { local $/; <$in> };
		die "$idx: not a v2 index\n" unless substr($d, 0, 8) eq "\377tOc\0\0\0\2";
		my $nr = unpack("N", substr($d, 8 + 255 * 4, 4));
		print unpack("H*", substr($d, 8 + 256 * 4 + $_ * $rawsz, $rawsz)), "\n"
			for 0 .. $nr - 1;
	' $(test_oid_rawsz $1) "$2.idx"
}

# same_exchange ALGO NAME [text]: the same text before the pack, and a
# pack of the same objects when there is one (both answers succeeded);
# with "text", only a pack or none in both.
same_exchange () {
	test_cmp $2.git.code $2.gp.code &&
	depacketize $2.git.out >$2.git.text &&
	depacketize $2.gp.out >$2.gp.text &&
	test_cmp $2.git.text $2.gp.text &&
	if ! test -s $2.git.out.pack
	then
		test_must_be_empty $2.gp.out.pack
	elif test "$3" = text
	then
		test_file_not_empty $2.gp.out.pack
	else
		pack_objects $1 $2.git.out.pack >$2.git.objects &&
		pack_objects $1 $2.gp.out.pack >$2.gp.objects &&
		test_cmp $2.git.objects $2.gp.objects
	fi
}

# set_config REPO KEY VALUE...: for the current test only (the config
# file is put back as it was; call it once a test).
set_config () {
	sc_repo_=$1
	shift
	cp $sc_repo_/.git/config $sc_repo_/.git/config.saved &&
	test_when_finished "mv $sc_repo_/.git/config.saved $sc_repo_/.git/config" &&
	while test $# -ge 2
	do
		git -C $sc_repo_ config --add "$1" "$2" &&
		shift 2 || return 1
	done
}

# mask_sid FILE: the session-id value (and the lengths it counts in).
mask_sid () {
	sed '/session-id=/{
		s/^..../LLLL/
		s/session-id=[^ ]*/session-id=X/
	}' "$1"
}

# v2_oracle_adv REPO ARGS...: what git says in a v2 advertisement, from
# git 2.55 when at hand; else from git 2.39 without the object-info
# line it always adds.
v2_oracle_adv () {
	va_repo_=$1
	shift
	if test_have_prereq GIT_NEW
	then
		GIT_PROTOCOL=version=2 git_new upload-pack "$@" $va_repo_
	else
		GIT_PROTOCOL=version=2 git upload-pack "$@" $va_repo_ >v2-oracle.raw &&
		sed "/^0010object-info\$/d" v2-oracle.raw
	fi
}

# drop_object_info FILE: git 2.39's v2 advertisement in FILE without
# its object-info line (see v2_oracle_adv).
drop_object_info () {
	sed "/^0010object-info\$/d" "$1" >"$1+" &&
	mv "$1+" "$1"
}

for algo in $test_hash_algos
do
	srv=srv-$algo

	test_expect_success "setup ($algo)" '
		git init -q --object-format=$algo scratch-$algo &&
		git init -q -b main --object-format=$algo $srv &&
		test_commit -C $srv one &&
		test_commit -C $srv --annotate two &&
		git -C $srv checkout -q -b side one &&
		test_commit -C $srv side-one &&
		git -C $srv checkout -q main &&
		test_commit -C $srv three &&
		git -C $srv tag -a -m "a tag of a tag" nested two &&
		git -C $srv tag -a -m "a tag of a tree" treetag "three^{tree}" &&
		git -C $srv symbolic-ref refs/heads/alias refs/heads/main &&
		secret=$(echo secret | git -C $srv commit-tree -p three "three^{tree}") &&
		git -C $srv update-ref refs/hidden/secret $secret &&
		git -C $srv config transfer.hideRefs refs/hidden &&
		git -C $srv update-ref refs/namespaces/ns/refs/heads/main two &&
		git -C $srv update-ref refs/namespaces/ns/refs/heads/old one &&
		git -C $srv update-ref refs/namespaces/ns/refs/tags/v2 \
			$(git -C $srv rev-parse refs/tags/two) &&
		git -C $srv symbolic-ref refs/namespaces/ns/HEAD \
			refs/namespaces/ns/refs/heads/main &&
		git -C $srv update-ref \
			refs/namespaces/a/refs/namespaces/b/refs/heads/deep one &&
		git init -q -b main --object-format=$algo unborn-$algo &&
		git -C unborn-$algo commit -q --allow-empty -m other &&
		git -C unborn-$algo branch -m other &&
		git -C unborn-$algo symbolic-ref HEAD refs/heads/main &&
		git init -q --object-format=$algo empty-$algo
	'

	# ---- advertisements ----------------------------------------------

	for proto in "" version=1
	do
		test_expect_success "v0 advertisement, --advertise-refs ($algo, ${proto:-version=0})" '
			: >adv.req &&
			serve_both adv "$proto" --advertise-refs $srv &&
			same_answer adv
		'
	done

	test_expect_success "v0 and v1 advertisements show the peeled tags ($algo)" '
		grep "refs/tags/two^{}" adv.gp.out &&
		grep "refs/tags/nested^{}" adv.gp.out &&
		grep "refs/tags/treetag^{}" adv.gp.out &&
		grep "symref=HEAD:refs/heads/main" adv.gp.out &&
		! grep refs/hidden adv.gp.out
	'

	for proto in "" version=1
	do
		test_expect_success "v0 advertisement of a whole session ($algo, ${proto:-version=0})" '
			packetize 0000 >adv.req &&
			serve_both adv "$proto" $srv &&
			same_answer adv
		'
	done

	test_expect_success "v2 advertisement ($algo)" '
		v2_oracle_adv $srv --advertise-refs >expect &&
		GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs $srv >actual &&
		test_cmp_bin expect actual &&
		packetize 0000 >v2.req &&
		v2_oracle_adv $srv <v2.req >expect &&
		GIT_PROTOCOL=version=2 gitpack upload-pack $srv <v2.req >actual &&
		test_cmp_bin expect actual
	'

	test_expect_success "v0 advertisement after pack-refs ($algo)" '
		rm -rf packed-$algo &&
		cp -R $srv packed-$algo &&
		git -C packed-$algo pack-refs --all &&
		: >adv.req &&
		serve_both adv "" --advertise-refs packed-$algo &&
		same_answer adv
	'

	test_expect_success "v0 advertisement with an unborn HEAD ($algo)" '
		: >adv.req &&
		serve_both adv "" --advertise-refs unborn-$algo &&
		same_answer adv &&
		! grep symref= adv.gp.out
	'

	test_expect_success GIT_NEW "v0 and v1 advertisements of an empty repository ($algo)" '
		use_git_new &&
		: >adv.req &&
		serve_both adv "" --advertise-refs empty-$algo &&
		same_answer adv &&
		serve_both adv version=1 --advertise-refs empty-$algo &&
		same_answer adv
	'

	test_expect_success "an empty repository advertises capabilities^{} ($algo)" '
		gitpack upload-pack --advertise-refs empty-$algo >actual &&
		zero=$(printf "%0$(test_oid_hexsz $algo)d" 0) &&
		# the capabilities git gives a repository without a HEAD symref
		git upload-pack --advertise-refs unborn-$algo >unborn.out &&
		caps=$(tr "\000" "\n" <unborn.out | sed -n 2p) &&
		line="$zero capabilities^{}" &&
		printf "%04x%s\000%s\n0000" $((${#line} + ${#caps} + 6)) "$line" "$caps" >expect &&
		test_cmp_bin expect actual
	'

	test_expect_success "v2 advertisement of an empty repository ($algo)" '
		v2_oracle_adv empty-$algo --advertise-refs >expect &&
		GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs empty-$algo >actual &&
		test_cmp_bin expect actual
	'

	for config in uploadpack.allowTipSHA1InWant uploadpack.allowReachableSHA1InWant \
		uploadpack.allowAnySHA1InWant uploadpack.allowFilter \
		uploadpack.allowRefInWant uploadpack.allowSidebandAll
	do
		test_expect_success "advertisements with $config ($algo)" '
			set_config $srv $config true &&
			: >adv.req &&
			serve_both adv "" --advertise-refs $srv &&
			same_answer adv &&
			v2_oracle_adv $srv --advertise-refs >expect &&
			GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs $srv >actual &&
			test_cmp_bin expect actual
		'
	done

	test_expect_success "advertisements with every capability config ($algo)" '
		set_config $srv uploadpack.allowTipSHA1InWant true \
			uploadpack.allowReachableSHA1InWant true \
			uploadpack.allowFilter true uploadpack.allowRefInWant true \
			uploadpack.allowSidebandAll true &&
		: >adv.req &&
		serve_both adv version=1 --advertise-refs $srv &&
		same_answer adv &&
		grep " allow-tip-sha1-in-want allow-reachable-sha1-in-want no-done symref=HEAD:refs/heads/main filter object-format=$algo " adv.gp.out &&
		v2_oracle_adv $srv --advertise-refs >expect &&
		GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs $srv >actual &&
		test_cmp_bin expect actual &&
		grep "^....fetch=shallow wait-for-done filter ref-in-want sideband-all\$" actual
	'

	test_expect_success "transfer.advertiseSID adds a session-id ($algo)" '
		set_config $srv transfer.advertiseSID true &&
		: >adv.req &&
		serve_both adv "" --advertise-refs $srv &&
		grep "session-id=" adv.gp.out &&
		mask_sid adv.git.out >expect &&
		mask_sid adv.gp.out >actual &&
		test_cmp expect actual &&
		v2_oracle_adv $srv --advertise-refs >adv2.git &&
		GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs $srv >adv2.gp &&
		mask_sid adv2.git >expect &&
		mask_sid adv2.gp >actual &&
		test_cmp expect actual
	'

	test_expect_success GIT_NEW "transfer.advertiseObjectInfo ($algo)" '
		set_config $srv transfer.advertiseObjectInfo true &&
		GIT_PROTOCOL=version=2 git_new upload-pack --advertise-refs $srv >expect &&
		GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs $srv >actual &&
		test_cmp_bin expect actual
	'

	for hide in "uploadpack.hideRefs refs/tags" \
		"transfer.hideRefs refs/heads uploadpack.hideRefs !refs/heads/main" \
		"uploadpack.hideRefs refs/tags/ uploadpack.hideRefs !refs/tags/two" \
		"uploadpack.hideRefs refs/heads/ma" \
		"uploadpack.hideRefs ^refs/heads/side" \
		"transfer.hideRefs !refs/hidden" \
		"receive.hideRefs refs/heads"
	do
		test_expect_success "hideRefs: $hide ($algo)" '
			set_config $srv $hide &&
			: >adv.req &&
			serve_both adv "" --advertise-refs $srv &&
			same_answer adv &&
			packetize command=ls-refs object-format=$algo 0001 symrefs peel 0000 >ls.req &&
			serve_both ls version=2 --stateless-rpc $srv &&
			same_answer ls
		'
	done

	test_expect_success "a hidden HEAD still names its target in symref= ($algo)" '
		set_config $srv uploadpack.hideRefs HEAD &&
		: >adv.req &&
		serve_both adv "" --advertise-refs $srv &&
		same_answer adv
	'

	# git lists a namespace's HEAD twice in ls-refs (once as HEAD, once
	# among the refs of the namespace): once is enough
	for ns in ns a/b
	do
		test_expect_success "GIT_NAMESPACE=$ns ($algo)" '
			GIT_NAMESPACE=$ns &&
			export GIT_NAMESPACE &&
			test_when_finished "unset GIT_NAMESPACE" &&
			: >adv.req &&
			serve_both adv "" --advertise-refs $srv &&
			same_answer adv &&
			packetize command=ls-refs object-format=$algo 0001 symrefs peel unborn 0000 >ls.req &&
			serve_both ls version=2 --stateless-rpc $srv &&
			depacketize ls.git.out | uniq >expect &&
			depacketize ls.gp.out >actual &&
			test_cmp expect actual
		'
	done

	test_expect_success GIT_NEW "GIT_NAMESPACE of no ref ($algo)" '
		GIT_NAMESPACE=nowhere &&
		export GIT_NAMESPACE &&
		test_when_finished "unset GIT_NAMESPACE" &&
		use_git_new &&
		: >adv.req &&
		serve_both adv "" --advertise-refs $srv &&
		same_answer adv &&
		packetize command=ls-refs object-format=$algo 0001 symrefs peel unborn 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc $srv &&
		same_answer ls
	'

	test_expect_success "GIT_NAMESPACE with hideRefs on full names ($algo)" '
		GIT_NAMESPACE=ns &&
		export GIT_NAMESPACE &&
		test_when_finished "unset GIT_NAMESPACE" &&
		set_config $srv uploadpack.hideRefs ^refs/namespaces/ns/refs/heads/old \
			uploadpack.hideRefs refs/tags &&
		: >adv.req &&
		serve_both adv "" --advertise-refs $srv &&
		same_answer adv &&
		! grep refs/heads/old adv.gp.out &&
		packetize command=ls-refs object-format=$algo 0001 peel 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc $srv &&
		depacketize ls.git.out | uniq >expect &&
		depacketize ls.gp.out >actual &&
		test_cmp expect actual
	'

	test_expect_success "a shallow repository advertises its shallow commits ($algo)" '
		rm -rf shallow-$algo &&
		cp -R $srv shallow-$algo &&
		git -C $srv rev-parse side-one one >shallow-$algo/.git/shallow &&
		packetize 0000 >adv.req &&
		serve_both adv "" shallow-$algo &&
		same_answer adv
	'

	# ---- ls-refs -------------------------------------------------------

	for args in "" symrefs peel "symrefs peel" "ref-prefix refs/heads/" \
		"peel ref-prefix refs/tags/ ref-prefix HEAD" "symrefs ref-prefix refs/heads/ma" \
		"ref-prefix refs/nothing" "ref-prefix refs/heads/main ref-prefix refs/heads/main" \
		"ref-prefix HEA symrefs" "ref-prefix refs/hidden"
	do
		test_expect_success "ls-refs $args ($algo)" '
			{
				packetize command=ls-refs object-format=$algo 0001 &&
				for arg in $args
				do
					case "$arg" in
					ref-prefix) prefix=t ;;
					*)
						if test -n "$prefix"
						then
							packetize "ref-prefix $arg"
						else
							packetize "$arg"
						fi
						prefix= ;;
					esac
				done &&
				packetize 0000
			} >ls.req &&
			serve_both ls version=2 --stateless-rpc $srv &&
			same_answer ls
		'
	done

	test_expect_success "ls-refs in a whole session, twice ($algo)" '
		packetize command=ls-refs object-format=$algo 0001 peel 0000 \
			command=ls-refs object-format=$algo 0001 symrefs 0000 0000 >ls.req &&
		serve_both ls version=2 $srv &&
		drop_object_info ls.git.out &&
		same_answer ls
	'

	test_expect_success "ls-refs after pack-refs ($algo)" '
		packetize command=ls-refs object-format=$algo 0001 symrefs peel 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc packed-$algo &&
		same_answer ls
	'

	test_expect_success "ls-refs of a packed-refs file out of order, with capital hex ($algo)" '
		rm -rf unsorted-$algo &&
		cp -R packed-$algo unsorted-$algo &&
		packed=$(git -C unsorted-$algo rev-parse --absolute-git-dir)/packed-refs &&
		# the records (each with its "^" line) in reverse order, without
		# the "sorted" trait; the ids of the first two and last two in capitals
		awk "
			/^#/ { print \"# pack-refs with: peeled fully-peeled \"; next }
			/^\\^/ { peel[n] = \$0; next }
			{ n++; id[n] = \$1; name[n] = \$2 }
			END {
				for (i = n; i >= 1; i--) {
					up = i <= 2 || i >= n - 1
					print (up ? toupper(id[i]) : id[i]) \" \" name[i]
					if (i in peel)
						print (up ? toupper(peel[i]) : peel[i])
				}
			}
		" "$packed" >unsorted.tmp &&
		mv unsorted.tmp "$packed" &&
		! grep sorted "$packed" &&
		grep "^[0-9A-F]* refs/tags/" "$packed" &&
		packetize command=ls-refs object-format=$algo 0001 symrefs peel 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc unsorted-$algo &&
		same_answer ls
	'

	test_expect_success "ls-refs symrefs names the end of a chain ($algo)" '
		git -C $srv symbolic-ref refs/heads/alias2 refs/heads/alias &&
		test_when_finished "git -C $srv symbolic-ref -d refs/heads/alias2" &&
		packetize command=ls-refs object-format=$algo 0001 symrefs 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc $srv &&
		same_answer ls
	'

	for unborn in "" advertise allow ignore
	do
		test_expect_success "lsrefs.unborn=${unborn:-(unset)} ($algo)" '
			if test -n "$unborn"
			then
				set_config unborn-$algo lsrefs.unborn $unborn
			fi &&
			v2_oracle_adv unborn-$algo --advertise-refs >expect &&
			GIT_PROTOCOL=version=2 gitpack upload-pack --advertise-refs unborn-$algo >actual &&
			test_cmp_bin expect actual &&
			# "unborn" with lsrefs.unborn=ignore: see below
			if test "$unborn" = ignore
			then
				packetize command=ls-refs object-format=$algo 0001 symrefs peel 0000
			else
				packetize command=ls-refs object-format=$algo 0001 symrefs peel unborn 0000
			fi >ls.req &&
			serve_both ls version=2 --stateless-rpc unborn-$algo &&
			same_answer ls &&
			packetize command=ls-refs object-format=$algo 0001 symrefs 0000 >ls.req &&
			serve_both ls version=2 --stateless-rpc unborn-$algo &&
			same_answer ls
		'
	done

	test_expect_success "ls-refs unborn without symrefs says nothing of HEAD ($algo)" '
		packetize command=ls-refs object-format=$algo 0001 unborn 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc unborn-$algo &&
		same_answer ls
	'

	test_expect_success "lsrefs.unborn=ignore takes the unborn argument and ignores it ($algo)" '
		set_config unborn-$algo lsrefs.unborn ignore &&
		packetize command=ls-refs object-format=$algo 0001 symrefs unborn 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc unborn-$algo &&
		same_answer ls
	'

	test_expect_success "a bad lsrefs.unborn is an error ($algo)" '
		set_config unborn-$algo lsrefs.unborn bogus &&
		: >adv.req &&
		serve_both adv version=2 --advertise-refs unborn-$algo &&
		same_failure adv
	'

	test_expect_success "ls-refs arguments may end at the flush, without a delim ($algo)" '
		packetize command=ls-refs object-format=$algo 0000 >ls.req &&
		serve_both ls version=2 --stateless-rpc $srv &&
		same_answer ls
	'

	# 65536 prefixes or more: git takes none of them, and lists every ref
	for nr in 65535 65536 65537
	do
		test_expect_success "ls-refs with $nr ref-prefix lines ($algo)" '
			{
				packetize command=ls-refs object-format=$algo 0001 &&
				awk -v n=$nr "BEGIN {
					for (i = 0; i < n; i++) {
						s = \"ref-prefix refs/nothing/\" i
						printf \"%04x%s\\n\", length(s) + 5, s
					}
				}" &&
				packetize 0000
			} >ls.req &&
			serve_both ls version=2 --stateless-rpc $srv &&
			same_answer ls
		'
	done

	# ---- negotiation: v0 ------------------------------------------------

	test_expect_success "names for the negotiation ($algo)" '
		echo "no such object" | git -C scratch-$algo hash-object --stdin >$srv.unknown
	'

	# v0_req ALGO CAPS WANTS HAVES END: a stateless request, with "." for
	# no haves and END "flush" or "done"
	v0_req () {
		vr_first_=t
		for vr_want_ in $3
		do
			vr_oid_=$(git -C srv-$1 rev-parse $vr_want_) &&
			if test -n "$vr_first_"
			then
				packetize "want $vr_oid_${2:+ $2}"
			else
				packetize "want $vr_oid_"
			fi || return 1
			vr_first_=
		done &&
		packetize 0000 &&
		for vr_have_ in $4
		do
			case "$vr_have_" in
			.) continue ;;
			unknown) vr_oid_=$(cat srv-$1.unknown) ;;
			*) vr_oid_=$(git -C srv-$1 rev-parse $vr_have_) ;;
			esac &&
			packetize "have $vr_oid_" || return 1
		done &&
		case "$5" in
		flush) packetize 0000 ;;
		done) packetize done ;;
		esac
	}

	# every have set with a want set, a bigger matrix with GP_TEST_LONG
	v0_haves=". one unknown 'unknown one' 'one side-one unknown'"
	v0_wants=main
	if test_have_prereq EXPENSIVE
	then
		v0_haves="$v0_haves side-one 'one two' 'two one' three"
		v0_wants="$v0_wants 'side main' 'two one'"
	fi

	# the pack depends on the wants and haves, not on the capabilities of
	# the negotiation: its objects are compared once
	objects=
	for caps in "multi_ack_detailed side-band-64k ofs-delta" \
		"multi_ack side-band-64k ofs-delta" "side-band ofs-delta" "ofs-delta" \
		"multi_ack_detailed no-done side-band-64k"
	do
		for end in flush done
		do
			test_expect_success "v0 stateless: $caps, haves then $end ($algo)" '
				if test -z "$objects"
				then
					eval "set -- $v0_wants \"main side\""
				else
					eval "set -- $v0_wants"
				fi &&
				for wants
				do
					eval "set -- $v0_haves" &&
					for haves
					do
						v0_req $algo "$caps" "$wants" "$haves" $end >neg.req &&
						serve_both neg "" --stateless-rpc $srv &&
						same_exchange $algo neg $objects || {
							echo "failed: wants $wants, haves $haves" &&
							return 1
						}
					done || return 1
				done
			'
		done
		objects=text
	done

	test_expect_success "v0 stateless: nothing after the wants ($algo)" '
		v0_req $algo multi_ack_detailed main "" "" >neg.req &&
		serve_both neg "" --stateless-rpc $srv &&
		same_answer neg &&
		test_must_be_empty neg.gp.out
	'

	test_expect_success "v0 stateless: no wants ($algo)" '
		packetize 0000 >neg.req &&
		serve_both neg "" --stateless-rpc $srv &&
		same_answer neg
	'

	test_expect_success "v0 session: advertisement, rounds, done ($algo)" '
		{
			v0_req $algo "multi_ack_detailed side-band-64k ofs-delta" "main side" unknown flush &&
			v0_req $algo "" "" "one side-one" flush | tail -c +5 &&
			v0_req $algo "" "" "two" done | tail -c +5
		} >neg.req &&
		serve_both neg "" $srv &&
		same_exchange $algo neg &&
		grep "ACK .* ready" neg.gp.text
	'

	test_expect_success "v0 session: multi_ack, no side-band, include-tag ($algo)" '
		{
			v0_req $algo "multi_ack include-tag ofs-delta" "main" "unknown one" flush &&
			v0_req $algo "" "" "unknown" done | tail -c +5
		} >neg.req &&
		serve_both neg version=1 $srv &&
		same_exchange $algo neg
	'

	test_expect_success "v0 session: done without haves ($algo)" '
		v0_req $algo "side-band-64k thin-pack" "main side" . done >neg.req &&
		serve_both neg "" $srv &&
		same_exchange $algo neg
	'

	test_expect_success "v0: include-tag sends the tags of what is sent ($algo)" '
		v0_req $algo "multi_ack_detailed side-band-64k include-tag" main one done >neg.req &&
		serve_both neg "" --stateless-rpc $srv &&
		same_exchange $algo neg &&
		git -C $srv rev-parse refs/tags/two refs/tags/nested >tags &&
		grep -f tags neg.gp.objects >found &&
		test_line_count = 2 found
	'

	test_expect_success "v0: a thin pack completes with the haves ($algo)" '
		rm -rf client-$algo &&
		git init -q --object-format=$algo client-$algo &&
		git -C client-$algo fetch -q ../$srv one:refs/heads/one &&
		v0_req $algo "multi_ack_detailed side-band-64k thin-pack ofs-delta" main one done >neg.req &&
		GIT_PROTOCOL= gitpack upload-pack --stateless-rpc $srv <neg.req >neg.gp.out &&
		depacketize neg.gp.out >neg.gp.text &&
		git -C client-$algo index-pack --stdin --fix-thin <neg.gp.out.pack &&
		git -C client-$algo update-ref refs/heads/main $(git -C $srv rev-parse main) &&
		git -C client-$algo fsck --connectivity-only
	'

	test_expect_success "v0: no-progress and progress ($algo)" '
		v0_req $algo "multi_ack_detailed side-band-64k no-progress" main one done >neg.req &&
		serve_both neg "" --stateless-rpc $srv &&
		same_exchange $algo neg &&
		test_must_be_empty neg.gp.out.progress &&
		v0_req $algo "multi_ack_detailed side-band-64k" main one done >neg.req &&
		serve_both neg "" --stateless-rpc $srv &&
		same_exchange $algo neg &&
		test_file_not_empty neg.gp.out.progress
	'

	# ---- negotiation: v2 -------------------------------------------------

	# v2_fetch ALGO ARG...: a fetch request; "want X" and "have X" name
	# revisions, "have unknown" the missing object; an ARG may hold
	# several arguments separated by ";"
	v2_fetch () {
		vf_algo_=$1
		shift
		packetize command=fetch object-format=$vf_algo_ 0001 &&
		for vf_args_
		do
			while test -n "$vf_args_"
			do
				vf_arg_=${vf_args_%%;*}
				case "$vf_args_" in
				*";"*) vf_args_=${vf_args_#*;} ;;
				*) vf_args_= ;;
				esac
				case "$vf_arg_" in
				"have unknown")
					packetize "have $(cat srv-$vf_algo_.unknown)" ;;
				want\ *|have\ *|shallow\ *)
					packetize "${vf_arg_%% *} $(git -C srv-$vf_algo_ rev-parse ${vf_arg_#* })" ;;
				*)
					packetize "$vf_arg_" ;;
				esac || return 1
			done
		done &&
		packetize 0000
	}

	v2_haves="'' 'have one' 'have unknown' 'have unknown;have one' 'have side-one;have two'"
	v2_wants="'want main' 'want main;want side'"
	v2_extras="'' done wait-for-done"
	if test_have_prereq EXPENSIVE
	then
		v2_haves="$v2_haves 'have three' 'have one;have side-one;have unknown'"
		v2_wants="$v2_wants 'want side' 'want two;want one'"
		v2_extras="$v2_extras 'wait-for-done;done' 'ofs-delta;thin-pack' include-tag no-progress"
	fi

	test_expect_success "v2 fetch: acknowledgments, ready, the pack ($algo)" '
		eval "set -- $v2_haves" &&
		for haves
		do
			eval "set -- $v2_wants" &&
			for wants
			do
				eval "set -- $v2_extras" &&
				for extra
				do
					v2_fetch $algo "$wants" "$haves" "$extra" >fetch.req &&
					serve_both fetch version=2 --stateless-rpc $srv &&
					case "$extra" in
					done|include-tag)
						same_exchange $algo fetch ;;
					*)
						# thin packs cannot be indexed alone
						same_exchange $algo fetch text ;;
					esac || {
						echo "failed: $wants, $haves, $extra" &&
						return 1
					}
				done || return 1
			done || return 1
		done
	'

	test_expect_success "v2 fetch: thin-pack, ofs-delta, include-tag, no-progress ($algo)" '
		v2_fetch $algo "want main;want side" "have one" thin-pack ofs-delta >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_exchange $algo fetch text &&
		v2_fetch $algo "want main;want side" "have one" include-tag no-progress done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_exchange $algo fetch &&
		test_must_be_empty fetch.gp.out.progress &&
		git -C $srv rev-parse refs/tags/two refs/tags/nested >tags &&
		grep -f tags fetch.gp.objects >found &&
		test_line_count = 2 found
	'

	test_expect_success "v2 fetch: a whole session of two fetches ($algo)" '
		{
			v2_fetch $algo "want main" "have unknown" "have side-one" wait-for-done &&
			v2_fetch $algo "want main" "have unknown" "have side-one" "have one" done &&
			packetize 0000
		} >fetch.req &&
		serve_both fetch version=2 $srv &&
		drop_object_info fetch.git.out &&
		same_exchange $algo fetch
	'

	test_expect_success "v2 fetch: sideband-all ($algo)" '
		set_config $srv uploadpack.allowSidebandAll true &&
		v2_fetch $algo "want main" "have one" sideband-all >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_exchange $algo fetch &&
		v2_fetch $algo "want main" "have unknown" sideband-all >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_answer fetch
	'

	test_expect_success "v2 fetch: want-ref ($algo)" '
		set_config $srv uploadpack.allowRefInWant true &&
		v2_fetch $algo "want-ref refs/heads/side" "want-ref refs/tags/two" "have one" done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_exchange $algo fetch &&
		grep wanted-refs fetch.gp.text
	'

	test_expect_success "v2 fetch: want-ref of an unknown or hidden ref ($algo)" '
		set_config $srv uploadpack.allowRefInWant true &&
		for ref in refs/heads/nothing refs/hidden/secret refs/heads/..bad
		do
			v2_fetch $algo "want-ref $ref" done >fetch.req &&
			serve_both fetch version=2 --stateless-rpc $srv &&
			same_failure fetch &&
			test_cmp_bin fetch.git.out fetch.gp.out || return 1
		done
	'

	test_expect_success "v2 fetch: want-ref needs allowRefInWant ($algo)" '
		v2_fetch $algo "want-ref refs/heads/side" done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_failure fetch
	'

	test_expect_success GIT_NEW "v2 fetch: a want-ref twice is an error ($algo)" '
		use_git_new &&
		set_config $srv uploadpack.allowRefInWant true &&
		v2_fetch $algo "want-ref refs/heads/side" "want-ref refs/heads/side" done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_failure fetch &&
		test_cmp_bin fetch.git.out fetch.gp.out
	'

	test_expect_success "v2 fetch: wanted-refs comes before shallow-info ($algo)" '
		set_config $srv uploadpack.allowRefInWant true &&
		v2_fetch $algo "want-ref refs/heads/main" "shallow one" done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_exchange $algo fetch
	'

	test_expect_success "v2 fetch without wants answers nothing ($algo)" '
		v2_fetch $algo "have one" >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_answer fetch
	'

	test_expect_success "v2 fetch without wants but wait-for-done ($algo)" '
		v2_fetch $algo "have one" "have unknown" wait-for-done >fetch.req &&
		serve_both fetch version=2 --stateless-rpc $srv &&
		same_answer fetch
	'

	# ---- wants -------------------------------------------------------------

	test_expect_success "more history behind a hidden ref ($algo)" '
		d1=$(echo deep-1 | git -C $srv commit-tree -p one "one^{tree}") &&
		d2=$(echo deep-2 | git -C $srv commit-tree -p $d1 "one^{tree}") &&
		git -C $srv update-ref refs/hidden/deep $d2 &&
		echo $d1 >$srv.deep1 &&
		echo "a blob no ref reaches" | git -C $srv hash-object -w --stdin >$srv.loose-blob
	'

	# want_req ALGO CAPS OID...: a v0 request for OID..., then done
	want_req () {
		wr_caps_=$2
		shift 2 &&
		for wr_oid_
		do
			packetize "want $wr_oid_${wr_caps_:+ $wr_caps_}" || return 1
			wr_caps_=
		done &&
		packetize 0000 done
	}

	# wanted ALGO NAME: the object a want test asks for
	wanted () {
		case "$2" in
		deep1) cat srv-$1.deep1 ;;
		loose-blob) cat srv-$1.loose-blob ;;
		unknown) cat srv-$1.unknown ;;
		*) git -C srv-$1 rev-parse "$2" ;;
		esac
	}

	# each: the want, the config, whole session or stateless, and whether git serves it
	while read what config mode verdict
	do
		test_expect_success "want $what ($config, $mode: $verdict) ($algo)" '
			if test "$config" != -
			then
				set_config $srv $config true
			fi &&
			want_req $algo "side-band-64k ofs-delta" $(wanted $algo $what) >want.req &&
			case "$mode" in
			session) serve_both want "" $srv ;;
			stateless) serve_both want "" --stateless-rpc $srv ;;
			esac &&
			case "$verdict" in
			served)
				same_exchange $algo want ;;
			refused)
				same_failure want &&
				test_cmp_bin want.git.out want.gp.out &&
				grep "not our ref" want.gp.err ;;
			esac
		'
	done <<-\EOF
	main - session served
	two^{commit} - session refused
	two^{commit} - stateless served
	two^{commit} uploadpack.allowReachableSHA1InWant session served
	two^{commit} uploadpack.allowTipSHA1InWant session refused
	three^{tree} - stateless served
	three^{tree} - session refused
	refs/hidden/secret - session refused
	refs/hidden/secret - stateless refused
	refs/hidden/secret uploadpack.allowTipSHA1InWant session served
	refs/hidden/secret uploadpack.allowReachableSHA1InWant session served
	deep1 uploadpack.allowTipSHA1InWant session refused
	deep1 uploadpack.allowReachableSHA1InWant session served
	deep1 uploadpack.allowReachableSHA1InWant stateless served
	deep1 - stateless refused
	deep1 uploadpack.allowAnySHA1InWant session served
	loose-blob uploadpack.allowAnySHA1InWant session served
	unknown - session refused
	unknown - stateless refused
	unknown uploadpack.allowAnySHA1InWant session refused
	EOF

	# Deliberate (gitpack-upload-pack(1)): git's reachability check never
	# looks at non-commits, so it serves a blob nothing reaches; gitpack
	# checks that every wanted object is reachable.
	test_expect_failure "want a blob no ref reaches, stateless ($algo)" '
		want_req $algo "side-band-64k" $(wanted $algo loose-blob) >want.req &&
		serve_both want "" --stateless-rpc $srv &&
		same_exchange $algo want
	'

	for what in main deep1 refs/hidden/secret loose-blob "three^{tree}" unknown
	do
		test_expect_success "v2 want $what ($algo)" '
			packetize command=fetch object-format=$algo 0001 \
				"want $(wanted $algo "$what")" done 0000 >want.req &&
			serve_both want version=2 --stateless-rpc $srv &&
			if test $what = unknown
			then
				same_failure want &&
				test_cmp_bin want.git.out want.gp.out
			else
				same_exchange $algo want
			fi
		'
	done

	test_expect_success "want <oid> with no space before the capabilities ($algo)" '
		packetize "want $(wanted $algo main)multi_ack_detailed" 0000 done >want.req &&
		serve_both want "" --stateless-rpc $srv &&
		same_exchange $algo want
	'

	test_expect_success "capabilities on a later want line ($algo)" '
		{
			packetize "want $(wanted $algo side)" &&
			packetize "want $(wanted $algo main) multi_ack_detailed" &&
			packetize 0000 "have $(wanted $algo one)" 0000
		} >want.req &&
		serve_both want "" --stateless-rpc $srv &&
		same_answer want
	'

	# ---- filters -------------------------------------------------------------

	test_expect_success "v0 filter without the capability ($algo)" '
		{
			packetize "want $(wanted $algo main) side-band-64k" "filter blob:none" &&
			packetize 0000 done
		} >filter.req &&
		serve_both filter "" --stateless-rpc $srv &&
		same_failure filter &&
		set_config $srv uploadpack.allowFilter true &&
		serve_both filter "" --stateless-rpc $srv &&
		same_failure filter &&
		{
			packetize "want $(wanted $algo main) filter" "filter blob:none" &&
			packetize 0000 done
		} >filter.req &&
		git -C $srv config uploadpack.allowFilter false &&
		serve_both filter "" --stateless-rpc $srv &&
		same_failure filter
	'

	for spec in blob:none blob:limit=3 tree:0 tree:1 object:type=commit \
		object:type=blob "combine:blob:none+tree:2"
	do
		test_expect_success "filter $spec ($algo)" '
			set_config $srv uploadpack.allowFilter true &&
			{
				packetize "want $(wanted $algo main) filter side-band-64k include-tag" "filter $spec" &&
				packetize 0000 "have $(wanted $algo one)" done
			} >filter.req &&
			serve_both filter "" --stateless-rpc $srv &&
			same_exchange $algo filter &&
			v2_fetch $algo "want main" "have one" "filter $spec" done >filter.req &&
			serve_both filter version=2 --stateless-rpc $srv &&
			same_exchange $algo filter
		'
	done

	test_expect_success "v2 filter without allowFilter ($algo)" '
		v2_fetch $algo "want main" "filter blob:none" done >filter.req &&
		serve_both filter version=2 --stateless-rpc $srv &&
		same_failure filter
	'

	test_expect_success "bad filter specs ($algo)" '
		set_config $srv uploadpack.allowFilter true &&
		for spec in bogus blob:limit=x tree:-1 combine: sparse:path=x
		do
			v2_fetch $algo "want main" "filter $spec" done >filter.req &&
			serve_both filter version=2 --stateless-rpc $srv &&
			same_failure filter || return 1
		done
	'

	# config; the filter; what git says ("-": it serves the pack)
	while read config spec verdict
	do
		test_expect_success "uploadpackfilter: $config, $spec ($algo)" '
			set_config $srv uploadpack.allowFilter true $(echo $config | tr , " ") &&
			v2_fetch $algo "want main" "filter $spec" done >filter.req &&
			serve_both filter version=2 --stateless-rpc $srv &&
			if test "$verdict" = -
			then
				same_exchange $algo filter
			else
				same_failure filter &&
				test_cmp_bin filter.git.out filter.gp.out &&
				grep "$verdict" filter.gp.err
			fi &&
			{
				packetize "want $(wanted $algo main) filter" "filter $spec" &&
				packetize 0000 done
			} >filter.req &&
			serve_both filter "" --stateless-rpc $srv &&
			if test "$verdict" = -
			then
				same_exchange $algo filter
			else
				same_failure filter &&
				test_cmp_bin filter.git.out filter.gp.out
			fi
		'
	done <<-\EOF
	uploadpackfilter.allow,false blob:none not.supported
	uploadpackfilter.allow,false,uploadpackfilter.blob:none.allow,true blob:none -
	uploadpackfilter.allow,false,uploadpackfilter.blob:none.allow,true tree:0 not.supported
	uploadpackfilter.blob:none.allow,false blob:none not.supported
	uploadpackfilter.blob:none.allow,false blob:limit=1 -
	uploadpackfilter.blob:limit.allow,false blob:limit=1 not.supported
	uploadpackfilter.tree.allow,false tree:1 not.supported
	uploadpackfilter.object:type.allow,false object:type=tree not.supported
	uploadpackfilter.combine.allow,false combine:blob:none+tree:1 not.supported
	uploadpackfilter.tree.allow,false combine:blob:none+tree:1 not.supported
	uploadpackfilter.tree.maxDepth,1 tree:0 -
	uploadpackfilter.tree.maxDepth,1 tree:1 -
	uploadpackfilter.tree.maxDepth,1 tree:2 allows.max.depth
	uploadpackfilter.tree.maxDepth,0 combine:blob:none+tree:1 allows.max.depth
	uploadpackfilter.blob:none.allow,false,uploadpackfilter.blob:none.allow,true blob:none -
	EOF

	# the same, where gitpack once differed
	while read config spec
	do
		test_expect_success "uploadpackfilter: $config, $spec (as git) ($algo)" '
			set_config $srv uploadpack.allowFilter true $(echo $config | tr , " ") &&
			v2_fetch $algo "want main" "filter $spec" done >filter.req &&
			serve_both filter version=2 --stateless-rpc $srv &&
			if test "$(cat filter.git.code)" = 0
			then
				same_exchange $algo filter
			else
				same_failure filter &&
				test_cmp_bin filter.git.out filter.gp.out
			fi
		'
	done <<-\EOF
	uploadpackfilter.allow,false,uploadpackfilter.tree.maxDepth,1 tree:1
	uploadpackfilter.combine.allow,false,uploadpackfilter.blob:none.allow,false combine:blob:none+tree:1
	uploadpackfilter.allow,false,uploadpackfilter.Blob:none.allow,true blob:none
	uploadpackfilter.a.allow,true,uploadpackfilter.b.allow,true,uploadpackfilter.c.allow,true,uploadpackfilter.d.allow,true,uploadpackfilter.e.allow,true,uploadpackfilter.f.allow,true,uploadpackfilter.g.allow,true,uploadpackfilter.h.allow,true,uploadpackfilter.blob:none.allow,false blob:none
	EOF

	test_expect_success "two filter lines are an error ($algo)" '
		set_config $srv uploadpack.allowFilter true &&
		v2_fetch $algo "want main" "filter blob:none" "filter tree:0" done >filter.req &&
		serve_both filter version=2 --stateless-rpc $srv &&
		same_failure filter
	'

	# ---- bad input -------------------------------------------------------------

	# each: protocol, mode, a name, whether gitpack says what git says
	# ("as": the same failure; "differs": a known breakage), and the
	# command that writes the request ($H: an object id, $A: the
	# algorithm)
	while read proto mode name verdict request
	do
		prereq=
		case "$verdict" in
		as|new) expect=test_expect_success ;;
		differs) expect=test_expect_failure ;;
		esac
		if test $verdict = new
		then
			prereq=GIT_NEW
		fi
		$expect $prereq "bad input, $proto $mode: $name ($algo)" '
			if test $verdict = new
			then
				use_git_new
			fi &&
			H=$(wanted $algo main) &&
			A=$algo &&
			eval "$request" >bad.req &&
			case "$mode" in
			session) serve_both bad "${proto#v0}" $srv ;;
			stateless) serve_both bad "${proto#v0}" --stateless-rpc $srv ;;
			esac &&
			if test $mode = session && test $proto = version=2
			then
				drop_object_info bad.git.out
			fi &&
			same_failure bad &&
			test_cmp_bin bad.git.out bad.gp.out
		'
	done <<-\EOF
	v0 stateless bad-length as printf 00x1want
	v0 session bad-length as printf 00zz
	v0 stateless length-3 as printf 0003
	v0 stateless truncated-packet as printf 0032want\ 1234567890
	v0 stateless truncated-header as printf 003
	v0 session eof-in-wants as packetize "want $H"
	v0 session eof-after-wants as packetize "want $H" 0000
	v0 session eof-in-haves as packetize "want $H" 0000 "have $H"
	v0 stateless eof-in-haves as packetize "want $H" 0000 "have $H"
	v0 stateless empty-line as printf 0004
	v0 stateless want-garbage as packetize "want xyz" 0000
	v0 stateless want-short as packetize "want 1234" 0000
	v0 stateless frob-line as packetize frob 0000
	v0 stateless not-a-have as packetize "want $H" 0000 frob done
	v0 stateless have-garbage as packetize "want $H" 0000 "have xyz" done
	v0 stateless client-ERR as packetize "ERR boom"
	v0 session nothing as true
	v0 stateless nothing as true
	version=1 session eof-in-wants as packetize "want $H"
	version=2 stateless bad-length as printf 00zz
	version=2 stateless unknown-command as packetize command=frobnicate 0000
	version=2 stateless command-as-capability as packetize command=ls-refs ls-refs 0000
	version=2 stateless unknown-capability as packetize command=fetch frob=1 0000
	version=2 stateless no-command as packetize object-format=$A 0000
	version=2 stateless two-commands as packetize command=fetch command=ls-refs 0000
	version=2 stateless object-info-not-advertised new packetize command=object-info 0000
	version=2 stateless eof-in-capabilities as packetize command=fetch
	version=2 stateless delim-after-fetch-args as packetize command=fetch object-format=$A 0001 "want $H" 0001
	version=2 stateless response-end-in-fetch-args as packetize command=fetch object-format=$A 0001 "want $H" 0002
	version=2 stateless fetch-unexpected-line as packetize command=fetch object-format=$A 0001 frob 0000
	version=2 stateless fetch-want-garbage as packetize command=fetch object-format=$A 0001 "want xyz" 0000
	version=2 stateless fetch-have-garbage as packetize command=fetch object-format=$A 0001 "want $H" "have xyz" 0000
	version=2 stateless fetch-sideband-all-not-allowed as packetize command=fetch object-format=$A 0001 "want $H" sideband-all 0000
	version=2 stateless fetch-packfile-uris-not-allowed new packetize command=fetch object-format=$A 0001 "want $H" "packfile-uris https" 0000
	version=2 stateless eof-in-fetch-args as packetize command=fetch object-format=$A 0001 "want $H"
	version=2 stateless ls-refs-unexpected-line as packetize command=ls-refs object-format=$A 0001 frob 0000
	version=2 stateless ls-refs-delim as packetize command=ls-refs object-format=$A 0001 peel 0001
	version=2 stateless ls-refs-eof as packetize command=ls-refs object-format=$A 0001 peel
	version=2 stateless unknown-object-format as packetize command=ls-refs object-format=sha3 0001 0000
	version=2 session second-request-bad as packetize command=ls-refs object-format=$A 0001 0000 command=frob 0000
	EOF

	# git reads the first 40 (64) hex digits of a have and ignores the rest
	test_expect_success "a have with more after the id ($algo)" '
		v0_req $algo "multi_ack_detailed side-band-64k" main . none >bad.req &&
		packetize "have $(wanted $algo one)xyz" done >>bad.req &&
		serve_both bad "" --stateless-rpc $srv &&
		same_exchange $algo bad &&
		packetize command=fetch object-format=$algo 0001 "want $(wanted $algo main)" \
			"have $(wanted $algo one)xyz" 0000 >bad.req &&
		serve_both bad version=2 --stateless-rpc $srv &&
		same_exchange $algo bad
	'

	test_expect_success "a capability named without its value ($algo)" '
		packetize command=ls-refs agent object-format=$algo server-option 0001 0000 >bad.req &&
		serve_both bad version=2 --stateless-rpc $srv &&
		same_answer bad
	'

	test_expect_success "bad input: the other object format ($algo)" '
		case $algo in
		sha1) other=sha256 ;;
		sha256) other=sha1 ;;
		esac &&
		packetize command=ls-refs object-format=$other 0001 0000 >bad.req &&
		serve_both bad version=2 --stateless-rpc $srv &&
		same_failure bad
	'

	if test $algo = sha256
	then
		test_expect_success "bad input: no object-format is SHA-1 ($algo)" '
			packetize command=ls-refs 0001 0000 >bad.req &&
			serve_both bad version=2 --stateless-rpc $srv &&
			same_failure bad
		'
	fi

	# git says "the remote end hung up unexpectedly" (it reads the 65517
	# bytes announced before it looks at the length)
	test_expect_success GITPACK_IS_GITPACK "bad input: a length past the maximum ($algo)" '
		printf fff1 >bad.req &&
		test_must_fail gitpack upload-pack --stateless-rpc $srv <bad.req 2>err &&
		grep "bad line length 65517" err
	'

	# git calls it a BUG (and aborts), gitpack a protocol error
	test_expect_success GITPACK_IS_GITPACK "bad input: response-end among the capabilities ($algo)" '
		packetize command=fetch 0002 >bad.req &&
		GIT_PROTOCOL=version=2 test_must_fail gitpack upload-pack --stateless-rpc $srv \
			<bad.req >out 2>err &&
		test_must_be_empty out &&
		grep "expected command or capability" err
	'

	# ---- object-info ------------------------------------------------------------

	test_expect_success "object-info answers as git ($algo)" '
		set_config $srv transfer.advertiseObjectInfo true &&
		packetize command=object-info object-format=$algo 0001 size \
			"oid $(wanted $algo main)" "oid $(wanted $algo "main^{tree}")" \
			"oid $(wanted $algo unknown)" 0000 >info.req &&
		serve_both info version=2 --stateless-rpc $srv &&
		same_answer info
	'

	# ---- uploadpack.packObjectsHook -------------------------------------------------

	test_expect_success "packObjectsHook from the global config runs ($algo)" '
		cat >hook <<-\HOOK &&
		#!/bin/sh
		echo "$*" >>"$HOOK_LOG.args"
		tee -a "$HOOK_LOG.in" | "$@"
		HOOK
		chmod +x hook &&
		test_when_finished "rm -f .gitconfig" &&
		git config --global uploadpack.packObjectsHook "$PWD/hook" &&
		for req in "v0 multi_ack_detailed side-band-64k ofs-delta thin-pack include-tag" \
			"v0 side-band-64k no-progress" "version=2 ofs-delta;include-tag"
		do
			case "$req" in
			v0*)
				proto= &&
				v0_req $algo "${req#v0 }" "main side" "one unknown" done ;;
			*)
				proto=version=2 &&
				v2_fetch $algo "want main;want side" "have one;have unknown" "${req#* }" done ;;
			esac >hook.req &&
			rm -f git.args git.in gp.args gp.in &&
			HOOK_LOG=$PWD/git GIT_PROTOCOL=$proto git upload-pack --stateless-rpc $srv \
				<hook.req >hook.git.out &&
			HOOK_LOG=$PWD/gp GIT_PROTOCOL=$proto gitpack upload-pack --stateless-rpc $srv \
				<hook.req >hook.gp.out &&
			test_cmp git.args gp.args &&
			test_cmp git.in gp.in &&
			depacketize hook.git.out >hook.git.text &&
			depacketize hook.gp.out >hook.gp.text &&
			test_cmp hook.git.text hook.gp.text &&
			pack_objects $algo hook.gp.out.pack >hook.gp.objects &&
			test_file_not_empty hook.gp.objects || return 1
		done
	'

	test_expect_success "packObjectsHook from the repository config is ignored ($algo)" '
		cat >hook <<-\HOOK &&
		#!/bin/sh
		echo ran >>"$HOOK_LOG"
		exit 1
		HOOK
		chmod +x hook &&
		set_config $srv uploadpack.packObjectsHook "$PWD/hook" &&
		v0_req $algo "side-band-64k" main one done >hook.req &&
		rm -f hook.log &&
		HOOK_LOG=$PWD/hook.log gitpack upload-pack --stateless-rpc $srv <hook.req >hook.gp.out &&
		HOOK_LOG=$PWD/hook.log git upload-pack --stateless-rpc $srv <hook.req >hook.git.out &&
		test_path_is_missing hook.log &&
		depacketize hook.git.out >hook.git.text &&
		depacketize hook.gp.out >hook.gp.text &&
		test_cmp hook.git.text hook.gp.text
	'
done

test_expect_success 'v0: a want of what was advertised holds when its ref moves before the want' '
	rm -rf moving &&
	git init -q -b main moving &&
	test_commit -C moving first &&
	old=$(git -C moving rev-parse HEAD) &&
	test_commit -C moving second &&
	new=$(git -C moving rev-parse HEAD) &&
	git -C moving update-ref refs/heads/main $old &&
	for tool in git gitpack
	do
		git -C moving update-ref refs/heads/main $old &&
		# the advertisement read, the ref moved, then the want of its old value
		python3 - $tool "$PWD/moving" $new $old >$tool.moved <<-\EOF || return 1
		import subprocess, sys
		tool, repo, new, old = sys.argv[1:5]
		p = subprocess.Popen([tool, "upload-pack", repo], stdin=subprocess.PIPE,
		                     stdout=subprocess.PIPE)
		while True:
		    n = int(p.stdout.read(4), 16)
		    if n == 0:
		        break
		    p.stdout.read(n - 4)
		subprocess.run(["git", "-C", repo, "update-ref", "refs/heads/main", new], check=True)
		def pkt(s):
		    return b"%04x" % (len(s) + 4) + s.encode()
		p.stdin.write(pkt("want %s ofs-delta\n" % old) + b"0000" + pkt("done\n"))
		p.stdin.close()
		out = p.stdout.read()
		print("exit", p.wait())
		print("pack" if b"PACK" in out else "no pack")
		EOF
		cat $tool.moved || return 1
	done &&
	test_cmp git.moved gitpack.moved &&
	grep "^exit 0" gitpack.moved &&
	grep "^pack" gitpack.moved
'

# ---- time and bounds ---------------------------------------------------------------

test_lazy_prereq FIFO 'mkfifo probe'

for proto in "" version=2
do
	test_expect_success FIFO,GITPACK_IS_GITPACK "--timeout=1 ends a silent client's session (${proto:-version=0})" '
		mkfifo silent &&
		test_when_finished "rm -f silent" &&
		# the client: the connection open, nothing said
		{ sleep 30 >silent & } &&
		pid=$! &&
		test_when_finished "kill $pid" &&
		start=$(date +%s) &&
		GIT_PROTOCOL=$proto test_must_fail gitpack upload-pack --timeout=1 srv-sha1 \
			<silent >out 2>err &&
		test $(($(date +%s) - start)) -le 5 &&
		grep "timed out" err
	'
done

test_expect_success GITPACK_IS_GITPACK 'a negotiation of too many rounds is cut short' '
	{
		packetize "want $(wanted sha1 main) multi_ack_detailed" 0000 &&
		awk "BEGIN { for (i = 0; i <= 100000; i++) printf \"0000\" }"
	} >rounds.req &&
	test_must_fail gitpack upload-pack srv-sha1 <rounds.req >rounds.out 2>rounds.err &&
	grep "too many negotiation rounds" rounds.err &&
	tail -c 100 rounds.out | grep "ERR upload-pack: too many negotiation rounds"
'

test_done
