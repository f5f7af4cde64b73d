#!/bin/bash
# make-repo.sh: build (or reuse) a synthetic bare repository for benchmarks.
#
#   bench/make-repo.sh [--packs N] [--seed S] SIZE DIR [OBJECT_FORMAT]
#
# SIZE is a gen-repo preset (tiny, small, medium, large, huge, giant; see the table
# at the top of bench/gen-repo.c). OBJECT_FORMAT is sha1 (default) or
# sha256. The seed defaults to $GP_BENCH_SEED, else 1.
#
# Steps: git init --bare, bench/gen-repo | git fast-import, then
# git repack -adfb --window=10 --depth=50, so the repository is one pack
# with deltas (plus a .bitmap). With --packs N, N-1 more packs follow,
# each from a fast-import of the next few commits (the generator's stream
# for fewer commits is a prefix of the stream for more, and fast-import
# skips objects the repository already has): the total is still the
# preset's commit count, so object counts match the 1-pack repository.
# Each later pack holds commits/50 commits, or with so many packs that
# this leaves no base, the later half of the commits split evenly. Above
# ten packs, one fast-import with a checkpoint per pack writes them all.
#
# The repository is built in DIR.tmp.PID and renamed into place with a
# marker file, DIR/gp-bench-repo, holding the parameters. If DIR already
# has a marker with the same parameters, nothing is done; if it has a
# different one, it is rebuilt. A DIR without a marker is never touched.
# DIR/gp-bench-stats holds object counts per type.

set -eo pipefail

die() { echo "make-repo: $*" >&2; exit 1; }
. "$(dirname "$0")/lib-cache.sh"
usage() { echo "usage: bench/make-repo.sh [--packs N] [--seed S] SIZE DIR [sha1|sha256]" >&2; exit 2; }

packs=1
seed=${GP_BENCH_SEED:-1}
while [ $# -gt 0 ]; do
	case "$1" in
	--packs) packs=$2; shift 2 ;;
	--packs=*) packs=${1#*=}; shift ;;
	--seed) seed=$2; shift 2 ;;
	--seed=*) seed=${1#*=}; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] && [ $# -le 3 ] || usage
size=$1
dir=${2%/}
format=${3:-sha1}
case "$format" in sha1|sha256) ;; *) die "unknown object format '$format'" ;; esac
case "$packs" in ''|*[!0-9]*|0) die "--packs wants a positive number" ;; esac

top=$(cd "$(dirname "$0")/.." && pwd)
gen=$top/bench/gen-repo

# Build the generator if needed. Compiled directly, not through make, so a
# benchmark run never rewrites the top Makefile's .build-flags.
if [ ! -x "$gen" ] || [ "$gen.c" -nt "$gen" ]; then
	${CC:-cc} -std=gnu11 -O2 -Wall -o "$gen.tmp.$$" "$gen.c" || die "cannot build $gen"
	mv -f "$gen.tmp.$$" "$gen"
fi

read -r _ commits _ files _ branches _ seed _ version < <("$gen" --size "$size" --seed "$seed" --params) ||
	die "unknown size '$size'"
key="gen-repo v$version size=$size commits=$commits files=$files branches=$branches seed=$seed format=$format packs=$packs"

cache_open make-repo "$dir" gp-bench-repo "$key"

# The identity of config and environment must not leak into the repository.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset GIT_DIR GIT_WORK_TREE GIT_OBJECT_DIRECTORY GIT_INDEX_FILE

echo "make-repo: building $dir ($key)" >&2
t0=$(now)
git init -q --bare --object-format="$format" "$tmp"
git -C "$tmp" symbolic-ref HEAD refs/heads/main

step=$(( commits / 50 ))
[ $step -ge 10 ] || step=10
base=$(( commits - (packs - 1) * step ))
if [ $base -lt 1 ] && [ $packs -gt 1 ]; then
	# Many packs: the later half of the commits, spread over them.
	step=$(( commits / (2 * (packs - 1)) ))
	base=$(( commits - (packs - 1) * step ))
fi
[ $step -ge 1 ] && [ $base -ge 1 ] || die "too many packs for $commits commits"

t=$(now)
"$gen" --size "$size" --seed "$seed" --commits "$base" |
	git -C "$tmp" fast-import --quiet --active-branches=64
echo "make-repo:   fast-import of $base commits: $(elapsed "$t") s" >&2

t=$(now)
git -C "$tmp" repack -q -adfb --window=10 --depth=50
git -C "$tmp" pack-refs --all
echo "make-repo:   repack -adfb --window=10 --depth=50: $(elapsed "$t") s" >&2

if [ $packs -le 10 ]; then
	for i in $(seq 1 $((packs - 1))); do
		t=$(now)
		"$gen" --size "$size" --seed "$seed" --commits $((base + i * step)) |
			git -C "$tmp" fast-import --quiet --active-branches=64
		echo "make-repo:   incremental pack $i (+$step commits): $(elapsed "$t") s" >&2
	done
else
	# One fast-import run instead of packs-1 runs over ever longer
	# streams: a checkpoint wherever a shorter stream would have ended
	# writes the same pack (the first one, at $base, finds nothing new
	# and writes none). fastimport.unpackLimit=0: keep small packs.
	t=$(now)
	"$gen" --size "$size" --seed "$seed" --commits $((base + (packs - 1) * step)) \
		--checkpoint-from "$base" --checkpoint-every "$step" |
		git -C "$tmp" -c fastimport.unpackLimit=0 fast-import --quiet --active-branches=64
	echo "make-repo:   $((packs - 1)) incremental packs (+$step commits each), one fast-import: $(elapsed "$t") s" >&2
fi

git -C "$tmp" cat-file --batch-all-objects --batch-check='%(objecttype)' |
	sort | uniq -c | awk '{ printf "%s %s\n", $2, $1 }' >"$tmp/gp-bench-stats"
git -C "$tmp" count-objects -v >>"$tmp/gp-bench-stats"
cache_install make-repo "$dir" gp-bench-repo "$key"

awk -v d="$dir" -v t="$(elapsed "$t0")" '
	/^(commit|tree|blob|tag) / { n[$1] = $2; total += $2 }
	/^packs:/ { packs = $2 } /^size-pack:/ { kib = $2 }
	END { printf "make-repo: %s: %d objects (%d commits, %d trees, %d blobs, %d tags), %d pack(s), %.1f MiB, %s s\n",
		d, total, n["commit"], n["tree"], n["blob"], n["tag"], packs, kib / 1024, t }' "$dir/gp-bench-stats" >&2
