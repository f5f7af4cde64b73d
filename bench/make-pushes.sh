#!/bin/bash
# make-pushes.sh: build (or reuse) a server-like repository made by many
# small pushes, for repack benchmarks.
#
#   bench/make-pushes.sh [--pushes N] [--extra M] [--step S] SRC DIR
#
# SRC is a bare repository (a make-repo.sh repository, bench/work/gitgit,
# any clone); it is only read. B is the branch HEAD names in SRC (main,
# master). With T = N + M pushes (default 40 + 5), the commits
#
#   c0 = B~(T*S), c1 = B~((T-1)*S), ..., cT = B       (~ follows first parents)
#
# are the states the branch goes through: S first-parent commits per push
# (default: about 4 commits per push, measured over the last 1,000
# first-parent commits of B). The pushed commits are those of c0..cT
# (reachable from cT, not from c0). SRC's other
# refs go with the base when they reach none of them (older tags and
# branches, independent histories such as notes), with push i when they
# point into c(i-1)..c(i) (a tag of a pushed commit). Other branches
# that reach a pushed commit go with the base as they were before it:
# at the first commit of their first-parent chain that reaches none. Any
# other ref that reaches a pushed commit is left out.
#
# DIR/pristine.git, a bare repository with B (HEAD) and those refs:
#   1. base: `git fetch SRC c0:refs/heads/B` and the base's refs into an
#      empty repository, then `git repack -adb`: one pack with a bitmap,
#      as a server that has run a full repack;
#   2. N pushes: `git fetch SRC c(i):refs/heads/B` (and the push's refs)
#      for i = 1..N, with fetch.unpackLimit=1 and transfer.unpackLimit=1,
#      so each leaves one pack, thin on the wire and completed by
#      index-pack (--fix-thin), as a push would.
# So pristine.git holds N + 1 packs, no MIDX, no loose objects.
#
# DIR/incoming/1..M: the next M pushes, made the same way on a copy of
# pristine.git: each directory holds the pack files the fetch left and
# `refs`, the ref updates for `git update-ref --stdin`. A benchmark
# replays them (copy the files into objects/pack, then update the refs)
# into a repository holding pristine.git's objects and refs, repacked or
# not: fetching there would bring the same pack, since what the fetch
# sends depends on the refs, which a repack leaves alone. See
# apply_incoming in bench/repack.
#
# DIR/gp-bench-stats: the states, the objects of every pack, the refs
# left out or rolled back. The repository is built
# in DIR.tmp.PID and renamed into place with a marker file,
# DIR/gp-bench-scenario, holding the parameters (SRC, its branch tip and
# refs, N, M, S, git's version). Reused when they match; rebuilt when
# they differ; a DIR without a marker is never touched.
#
# Both git and the scenario repositories run without system or global
# config (GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null); the
# repositories' own config turns off auto-gc.

set -eo pipefail

die() { echo "make-pushes: $*" >&2; exit 1; }
. "$(dirname "$0")/lib-cache.sh"
usage() { echo "usage: bench/make-pushes.sh [--pushes N] [--extra M] [--step S] SRC DIR" >&2; exit 2; }

pushes=40
extra=5
step=
while [ $# -gt 0 ]; do
	case "$1" in
	--pushes) pushes=$2; shift 2 ;;
	--pushes=*) pushes=${1#*=}; shift ;;
	--extra) extra=$2; shift 2 ;;
	--extra=*) extra=${1#*=}; shift ;;
	--step) step=$2; shift 2 ;;
	--step=*) step=${1#*=}; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# = 2 ] || usage
src=$1
dir=${2%/}
case "$pushes" in ''|*[!0-9]*|0) die "--pushes wants a positive number" ;; esac
case "$extra" in ''|*[!0-9]*) die "--extra wants a number" ;; esac
case "$step" in '') ;; *[!0-9]*|0*) die "--step wants a positive number" ;; esac

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset GIT_DIR GIT_WORK_TREE GIT_OBJECT_DIRECTORY GIT_INDEX_FILE GIT_ALTERNATE_OBJECT_DIRECTORIES

src_gitdir=$(git -C "$src" rev-parse --absolute-git-dir 2>/dev/null) || die "$src is not a git repository"
format=$(git -C "$src" rev-parse --show-object-format) || die "cannot read the object format of $src"
head=$(git -C "$src" symbolic-ref -q HEAD) || die "HEAD of $src is not a branch"
branch=${head#refs/heads/}
tip=$(git -C "$src" rev-parse -q --verify "$head^{commit}") || die "$head does not exist in $src"
total=$((pushes + extra))

if [ -z "$step" ]; then
	fp=$(git -C "$src" rev-list --first-parent --count "$tip")
	sample=1000
	[ "$fp" -gt $((sample + 1)) ] || sample=$((fp - 1))
	[ "$sample" -ge 1 ] || die "$head of $src has a single commit"
	all=$(git -C "$src" rev-list --count "$tip~$sample..$tip")
	step=$(awk -v s="$sample" -v a="$all" 'BEGIN { n = int(4 * s / a + 0.5); print n < 1 ? 1 : n }')
fi

# The branch's states, oldest first: state[i] is c(i).
mapfile -t fps < <(git -C "$src" rev-list --first-parent -n $((total * step + 1)) "$tip")
[ ${#fps[@]} = $((total * step + 1)) ] ||
	die "$head of $src has ${#fps[@]} first-parent commits; $total pushes of $step need $((total * step + 1))"
state=()
for i in $(seq 0 "$total"); do
	state[i]=${fps[(total - i) * step]}
done

refs_digest=$(git -C "$src" for-each-ref --format='%(objectname) %(refname)' | git hash-object --stdin)
version=2
key="make-pushes v$version src=$src_gitdir branch=$branch tip=$tip refs=$refs_digest pushes=$pushes extra=$extra step=$step format=$format $(git --version)"

cache_open make-pushes "$dir" gp-bench-scenario "$key"
mkdir "$tmp"

echo "make-pushes: building $dir from $src_gitdir: $branch~$((total * step)) then $pushes pushes + $extra incoming of $step first-parent commits each" >&2
t0=$(now)

# The other refs, by the push that brings them (0: the base; "-": left
# out), as "PUSH SOURCE REF" (SOURCE: REF, or the commit a branch is
# rolled back to). A commit outside c0's closure is "ahead" when it is
# pushed or has an ahead parent: rev-list --reverse --topo-order lists
# parents first, so one pass decides. Refs to trees and blobs go with
# the base.
for i in $(seq 1 "$total"); do
	git -C "$src" rev-list "${state[i - 1]}..${state[i]}" | sed "s/\$/ $i/"
done >"$tmp/pushed"
git -C "$src" rev-list --reverse --topo-order --parents --all --not "${state[0]}" >"$tmp/outside"
git -C "$src" for-each-ref --format='%(refname)' | grep -vx "refs/heads/$branch" >"$tmp/refnames" || :
sed 's/$/^{commit}/' "$tmp/refnames" | git -C "$src" cat-file --batch-check='%(objectname)' 2>/dev/null |
	awk '{ print (NF == 1 ? $1 : "-") }' | paste -d' ' - "$tmp/refnames" >"$tmp/refcommits"
awk 'FILENAME == ARGV[1] { push[$1] = $2; next }
	FILENAME == ARGV[2] {
		if (NF > 1) first[$1] = $2
		a = ($1 in push); for (k = 2; k <= NF && !a; k++) a = ($k in ahead)
		if (a) ahead[$1] = 1
		next
	}
	$1 in push { print push[$1], $2, $2; next }
	!($1 in ahead) { print 0, $2, $2; next }
	$2 ~ /^refs\/heads\// {
		for (c = $1; c in ahead; c = first[c])
			if (!(c in first)) { c = ""; break }
		if (c != "") { print 0, c, $2; next }
	}
	{ print "-", $2, $2 }' \
	"$tmp/pushed" "$tmp/outside" "$tmp/refcommits" >"$tmp/refplan"
declare -A refs_at
for i in $(seq 0 "$total"); do
	refs_at[$i]=$(awk -v i="$i" '$1 == i { print $2 ":" $3 }' "$tmp/refplan" | tr '\n' ' ')
done
nskipped=$(awk '$1 == "-"' "$tmp/refplan" | wc -l)
nrolled=$(awk '$1 == 0 && $2 != $3' "$tmp/refplan" | wc -l)

# fetch_state REPO I: what push I leaves in REPO. The branch is fetched
# by object name, which upload-pack accepts with allowAnySHA1InWant
# (read from the environment git -c sets, inherited by the local
# upload-pack).
fetch_state() {
	local repo=$1 i=$2 r
	{
		echo "+${state[i]}:refs/heads/$branch"
		for r in ${refs_at[$i]}; do
			echo "+$r"
		done
	} | git -C "$repo" -c uploadpack.allowAnySHA1InWant=true fetch -q --no-tags --no-write-fetch-head \
		--stdin "$src_gitdir"
}

idx_objects() { od -An -tu4 --endian=big -j $((8 + 255 * 4)) -N4 "$1" | tr -d ' '; }
npacks() { ls "$1"/objects/pack/pack-*.pack 2>/dev/null | wc -l; }

repo=$tmp/pristine.git
git init -q --bare --object-format="$format" "$repo"
git -C "$repo" symbolic-ref HEAD "refs/heads/$branch"
git -C "$repo" config gc.auto 0
git -C "$repo" config maintenance.auto false
git -C "$repo" config fetch.unpackLimit 1
git -C "$repo" config transfer.unpackLimit 1

t=$(now)
fetch_state "$repo" 0
echo "make-pushes:   base fetch ($branch~$((total * step)) and $(echo ${refs_at[0]} | wc -w) other refs, branches rolled back: $nrolled; refs left out: $nskipped): $(elapsed "$t") s" >&2
t=$(now)
git -C "$repo" repack -q -adb
git -C "$repo" pack-refs --all
echo "make-pushes:   base repack -adb: $(elapsed "$t") s" >&2
[ "$(npacks "$repo")" = 1 ] || die "the base is $(npacks "$repo") packs, not 1"

t=$(now)
for i in $(seq 1 "$pushes"); do
	fetch_state "$repo" "$i"
	[ "$(npacks "$repo")" = $((i + 1)) ] || die "push $i left $(npacks "$repo") packs, expected $((i + 1))"
done
[ "$(git -C "$repo" count-objects | cut -d' ' -f1)" = 0 ] || die "the pushes left loose objects"
echo "make-pushes:   $pushes pushes: $(elapsed "$t") s" >&2

if [ "$extra" -gt 0 ]; then
	t=$(now)
	work=$tmp/work.git
	cp -a "$repo" "$work"
	for i in $(seq 1 "$extra"); do
		ls "$work"/objects/pack >"$tmp/before"
		fetch_state "$work" $((pushes + i))
		ls "$work"/objects/pack >"$tmp/after"
		mkdir -p "$tmp/incoming/$i"
		new=$(comm -13 "$tmp/before" "$tmp/after")
		[ "$(echo "$new" | grep -c '\.pack$')" = 1 ] || die "incoming push $i left other than one pack: $new"
		for f in $new; do
			cp -p "$work/objects/pack/$f" "$tmp/incoming/$i/"
		done
		{
			echo "update refs/heads/$branch ${state[pushes + i]}"
			for r in ${refs_at[$((pushes + i))]}; do
				echo "create ${r#*:} $(git -C "$src" rev-parse "${r%%:*}")"
			done
		} >"$tmp/incoming/$i/refs"
	done
	rm -rf "$work" "$tmp/before" "$tmp/after"
	echo "make-pushes:   $extra incoming pushes: $(elapsed "$t") s" >&2
fi

# Objects per pack: the base, then the pushes in order (by mtime), then
# the incoming ones.
{
	echo "format $format"
	echo "branch $branch"
	echo "step $step"
	for i in $(seq 0 "$total"); do
		echo "state $i ${state[i]} $(echo ${refs_at[$i]} | wc -w)"
	done
	for p in $(ls -tr "$repo"/objects/pack/pack-*.idx); do
		n=$(idx_objects "$p")
		echo "pack $(basename "$p" .idx) $n $(stat -c %s "${p%.idx}.pack")"
	done
	awk '$1 == "-" { print "left-out", $3 } $1 == 0 && $2 != $3 { print "rolled-back", $3, $2 }' "$tmp/refplan"
	for i in $(seq 1 "$extra"); do
		p=$(ls "$tmp/incoming/$i"/pack-*.idx)
		n=$(idx_objects "$p")
		echo "incoming $i $(basename "$p" .idx) $n $(stat -c %s "${p%.idx}.pack")"
	done
} >"$tmp/gp-bench-stats"
rm -f "$tmp/pushed" "$tmp/outside" "$tmp/refnames" "$tmp/refcommits" "$tmp/refplan"
cache_install make-pushes "$dir" gp-bench-scenario "$key"

awk -v d="$dir" -v t="$(elapsed "$t0")" '
	$1 == "pack" { if (n++ == 0) base = $3; else { pushed += $3; if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3 } bytes += $4 }
	$1 == "incoming" { inc++; incobj += $4 }
	END { printf "make-pushes: %s: pristine.git: base pack of %d objects + %d push packs (%d objects, %d to %d each), %.1f MiB; %d incoming pushes (%d objects); %s s\n",
		d, base, n - 1, pushed, min, max, bytes / 1048576, inc, incobj, t }' "$dir/gp-bench-stats" >&2
