#!/bin/sh
#
# make-corpus-upload-pack.sh: the seeds of fuzz-upload-pack.c in
# t/fuzz/corpus/upload-pack/ (make-corpus.sh runs it; it also runs
# alone). Each seed is the target's selector byte, then a request. The
# object ids are those of the repositories fuzz-upload-pack.c makes:
# stock git writes the same objects here (same bytes, so same ids) for
# SHA-1 and SHA-256. Deterministic.

set -e

here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus/upload-pack
work=$(mktemp -d "${TMPDIR:-/tmp}/gp-corpus-up.XXXXXX")
trap 'rm -rf "$work"' EXIT

for v in $(env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\)=.*/\1/p')
do
	unset "$v"
done
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" LC_ALL=C TZ=UTC

rm -rf "$out"
mkdir -p "$out"

# packetize LINE...: pkt-lines with an LF each; 0000, 0001 as themselves
packetize () {
	for line
	do
		case "$line" in
		0000|0001|0002) printf '%s' "$line" ;;
		*) printf '%04x%s\n' $((${#line} + 5)) "$line" ;;
		esac
	done
}

# seed NAME SELECTOR LINE...: the seed file NAME
seed () {
	name=$1 sel=$2
	shift 2
	{
		printf "\\$(printf %03o "$sel")"
		packetize "$@"
	} >"$out/$name"
}

# The objects of fuzz-upload-pack.c, in $1's repository.
objects () {
	git init -q --bare --object-format="$1" "$work/$1"
	g="git -C $work/$1"
	blob1=$(printf 'hello\n' | $g hash-object -w --stdin)
	blob2=$(printf 'world\n' | $g hash-object -w --stdin)
	tree1=$(printf '100644 blob %s\tfile\n' "$blob1" | $g mktree)
	tree2=$(printf '100644 blob %s\tfile\n100644 blob %s\tother\n' "$blob1" "$blob2" | $g mktree)
	who='<author@example.com>'
	c1=$(printf 'tree %s\nauthor A U Thor %s %s\ncommitter C O Mitter <committer@example.com> %s\n\none\n' \
		"$tree1" "$who" "1112911993 -0700" "1112911993 -0700" |
		$g hash-object -t commit -w --stdin)
	c2=$(printf 'tree %s\nparent %s\nauthor A U Thor %s %s\ncommitter C O Mitter <committer@example.com> %s\n\ntwo\n' \
		"$tree2" "$c1" "$who" "1112912053 -0700" "1112912053 -0700" |
		$g hash-object -t commit -w --stdin)
	c3=$(printf 'tree %s\nparent %s\nauthor A U Thor %s %s\ncommitter C O Mitter <committer@example.com> %s\n\nthree\n' \
		"$tree1" "$c2" "$who" "1112912113 -0700" "1112912113 -0700" |
		$g hash-object -t commit -w --stdin)
	tag=$(printf 'object %s\ntype commit\ntag v1\ntagger C O Mitter <committer@example.com> 1112911993 -0700\n\nversion one\n' \
		"$c1" | $g hash-object -t tag -w --stdin)
	unknown=$(echo "no such object" | $g hash-object --stdin)
}

# selector bits: see fuzz-upload-pack.c
V1=1 V2=2 STATELESS=4 ADVERTISE=24 SHA256=32 NS=64 PERMISSIVE=128

for algo in sha1 sha256
do
	objects $algo
	a=0
	test $algo = sha256 && a=$SHA256

	seed v0-advertise-$algo $((a + ADVERTISE))
	seed v2-advertise-$algo $((a + ADVERTISE + V2))
	seed v0-stateless-fetch-$algo $((a + STATELESS)) \
		"want $c2 multi_ack_detailed side-band-64k ofs-delta thin-pack include-tag no-progress" \
		"want $c1" 0000 "have $unknown" "have $c1" done
	seed v0-session-rounds-$algo $a \
		"want $c2 multi_ack side-band" 0000 "have $unknown" 0000 "have $c1" 0000 done
	seed v2-fetch-acks-$algo $((a + STATELESS + V2)) \
		command=fetch "object-format=$algo" agent=fuzz 0001 \
		"want $c2" "have $unknown" "have $c1" thin-pack ofs-delta include-tag 0000
	seed v2-session-$algo $((a + V2)) \
		command=ls-refs "object-format=$algo" 0001 symrefs peel unborn "ref-prefix refs/heads/" 0000 \
		command=fetch "object-format=$algo" 0001 "want $c2" "have $c1" wait-for-done 0000 \
		command=fetch "object-format=$algo" 0001 "want $c2" "have $c1" done 0000 \
		0000
done

# the SHA-1 repositories only, for the rest
objects sha1
seed v1-session-no-done 1 "want $c2 multi_ack_detailed no-done side-band-64k" "shallow $c1" 0000 "have $c1" 0000
seed v0-hidden-want $((STATELESS + PERMISSIVE)) "want $c3 side-band-64k" 0000 done
seed v0-filter $((STATELESS + PERMISSIVE)) \
	"want $c2 filter side-band-64k" "filter combine:blob:none+tree:1" 0000 done
seed v0-deepen $STATELESS "want $c2 deepen-relative" "deepen 1" 0000 done
seed v0-deepen-since-not $STATELESS "want $c2" "deepen-since 1112911993" \
	"deepen-not refs/heads/side" 0000 done
seed v2-ls-refs-namespace $((V2 + STATELESS + NS)) \
	command=ls-refs object-format=sha1 0001 symrefs peel unborn 0000
seed v2-ls-refs-unborn $((V2 + STATELESS + PERMISSIVE)) \
	command=ls-refs object-format=sha1 server-option=x 0001 symrefs unborn "ref-prefix HEAD" 0000
seed v2-fetch-permissive $((V2 + STATELESS + PERMISSIVE)) \
	command=fetch object-format=sha1 "session-id=fuzz" 0001 "want-ref refs/heads/main" \
	"want $tag" "filter tree:1" sideband-all "shallow $c1" done 0000
seed v2-object-info $((V2 + STATELESS + PERMISSIVE)) \
	command=object-info object-format=sha1 0001 size "oid $c1" "oid $unknown" 0000
seed v2-bad-command $((V2 + STATELESS)) command=frobnicate 0000
