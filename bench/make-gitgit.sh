#!/bin/bash
# make-gitgit.sh: build (or reuse) a complete bare copy of git.git for
# benchmarks, from a possibly incomplete mirror.
#
#   bench/make-gitgit.sh [--clone-refs] [SOURCE [DIR]]
#
# SOURCE (default: $GP_GITGIT_SOURCE; one of the two is required) is a
# bare repository of git.git, such as a mirror of github.com/git/git;
# it is only read. DIR defaults to
# bench/work/gitgit (bench/work/gitgit-clone with --clone-refs).
#
# The mirror this was written for is a partial copy: one pack marked
# .promisor, no config, and 25 blobs that some refs reach are absent
# (binaries and build products committed in a few pull requests), so
# `git repack -adb` and `git multi-pack-index write --bitmap` fail on it.
# This script drops exactly the refs whose closure is incomplete:
#
#  1. git init --bare DIR.tmp.PID; hard-link (else copy) SOURCE's .pack,
#     .idx and .rev files into it (not .promisor, .keep or .bitmap);
#     create its refs from `git for-each-ref` of SOURCE (all of them, or
#     with --clone-refs only refs/heads/* and refs/tags/*, what
#     `git clone --bare` copies) and HEAD.
#  2. Missing objects: `git rev-list --objects --all --missing=print`.
#     If there are any: the commits that introduce them, from
#     `git log --all -m --root -t --no-renames --raw` (each missing
#     blob or tree shows up where it is added to a tree, against every
#     parent of a merge); every descendant of those commits, from
#     `git rev-list --all --parents --topo-order --reverse`; then every
#     ref that peels to one of them, or names a missing object, is
#     deleted. The check is repeated: the copy must now be complete.
#  3. git repack -adb (one pack of the reachable objects, deltas reused,
#     a pack bitmap), git multi-pack-index write --bitmap (a MIDX and its
#     bitmap; both must succeed), git fsck --connectivity-only.
#
# The result is renamed into place with a marker file, DIR/gp-bench-repo,
# holding the source and its refs' digest; a DIR with the same marker is
# reused, one with another marker rebuilt, one without a marker never
# touched. DIR/gp-bench-stats has object counts per type,
# DIR/gp-bench-dropped the refs dropped and why.
#
# Cost on a loaded 2-core machine: about 11 minutes (the log scan ~2 min,
# the repack ~7 min, fsck ~0.5 min).

set -eo pipefail

die() { echo "make-gitgit: $*" >&2; exit 1; }
. "$(dirname "$0")/lib-cache.sh"
usage() { echo "usage: bench/make-gitgit.sh [--clone-refs] [SOURCE [DIR]]" >&2; exit 2; }

clone_refs=
while [ $# -gt 0 ]; do
	case "$1" in
	--clone-refs) clone_refs=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -le 2 ] || usage

top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-${GP_GITGIT_SOURCE:-}}
if [ -z "$src" ]; then
	echo "make-gitgit.sh: name a bare copy of git.git (SOURCE or GP_GITGIT_SOURCE)" >&2
	exit 2
fi
if [ -n "$clone_refs" ]; then
	dir=${2:-$top/bench/work/gitgit-clone}
	mode=clone
else
	dir=${2:-$top/bench/work/gitgit}
	mode=all
fi
dir=${dir%/}

# The identity of config and environment must not leak into the repository.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset GIT_DIR GIT_WORK_TREE GIT_OBJECT_DIRECTORY GIT_INDEX_FILE GIT_ALTERNATE_OBJECT_DIRECTORIES

src_gitdir=$(git -C "$src" rev-parse --absolute-git-dir 2>/dev/null) || die "$src is not a git repository"
src_packs=$(git -C "$src" rev-parse --path-format=absolute --git-path objects)/pack
format=$(git -C "$src" rev-parse --show-object-format)
ls "$src_packs"/pack-*.pack >/dev/null 2>&1 || die "$src has no packs"

if [ -n "$clone_refs" ]; then
	ref_patterns=(refs/heads refs/tags)
else
	ref_patterns=()
fi
refs_digest=$(git -C "$src" for-each-ref --format='%(objectname) %(refname)' "${ref_patterns[@]}" |
	git hash-object --stdin)
key="make-gitgit v1 source=$src_gitdir packs=$(cd "$src_packs" && ls pack-*.pack | tr '\n' ' ')refs=$mode refs-digest=$refs_digest"

cache_open make-gitgit "$dir" gp-bench-repo "$key"
g() { git -C "$tmp" "$@"; }

echo "make-gitgit: building $dir from $src ($mode refs)" >&2
t0=$(now)

# 1. The copy: same pack files, refs from SOURCE.
git init -q --bare --object-format="$format" "$tmp"
g config gc.auto 0
how=hard-linked
for f in "$src_packs"/pack-*; do
	case "$f" in
	*.pack|*.idx|*.rev) ;;
	*) continue ;;
	esac
	if ! ln "$f" "$tmp/objects/pack/" 2>/dev/null; then
		cp "$f" "$tmp/objects/pack/"
		how=copied
	fi
done
git -C "$src" for-each-ref --format='create %(refname) %(objectname)' "${ref_patterns[@]}" |
	g update-ref --stdin
if head=$(git -C "$src" symbolic-ref -q HEAD); then
	g symbolic-ref HEAD "$head"
elif head=$(git -C "$src" rev-parse -q --verify HEAD); then
	g update-ref --no-deref HEAD "$head"
fi
g pack-refs --all
echo "make-gitgit:   packs $how, $(g for-each-ref | wc -l) refs" >&2

# 2. Drop the refs that reach a missing object.
: >"$tmp/gp-bench-dropped"
for pass in 1 2; do
	t=$(now)
	g rev-list --objects --all --missing=print | sed -n 's/^?//p' | sort >"$tmp/missing"
	n=$(wc -l <"$tmp/missing")
	echo "make-gitgit:   missing objects: $n ($(elapsed "$t") s)" >&2
	[ "$n" = 0 ] && break
	[ $pass = 1 ] || die "still $n missing objects after dropping refs: $(head -n3 "$tmp/missing" | tr '\n' ' ')..."

	# Commits whose tree gains a missing blob or tree, against some parent.
	t=$(now)
	g log --all -m --root -t --no-renames --raw --no-abbrev --format='C %H' |
		awk 'NR == FNR { m[$1] = 1; next }
		     /^C / { c = $2; next }
		     /^:/ { split($0, a, " "); if (a[4] in m) print c, a[4], $NF }' "$tmp/missing" - |
		sort -u >"$tmp/introduced"
	echo "make-gitgit:   commits adding them: $(cut -d' ' -f1 "$tmp/introduced" | sort -u | wc -l) ($(elapsed "$t") s)" >&2

	# Their descendants: parents come before children in --reverse --topo-order.
	g rev-list --all --parents --topo-order --reverse |
		awk 'NR == FNR { bad[$1] = 1; next }
		     { for (i = 2; i <= NF; i++) if ($i in bad) { bad[$1] = 1; break } }
		     END { for (c in bad) print c }' <(cut -d' ' -f1 "$tmp/introduced") - |
		sort >"$tmp/bad-commits"

	# Refs peeling to a bad commit, or naming a missing object.
	g for-each-ref --format='%(objectname)	%(*objectname)	%(refname)' |
		awk -F'\t' 'NR == FNR { bad[$1] = 1; next }
			    ($1 in bad) || ($2 in bad) { print $3 }' <(cat "$tmp/bad-commits" "$tmp/missing") - \
		>"$tmp/bad-refs"
	[ -s "$tmp/bad-refs" ] || die "no ref found that reaches the missing objects"
	sed 's/^/delete /' "$tmp/bad-refs" | g update-ref --stdin
	{
		echo "# $n objects missing from $src:"
		sed 's/^/#   /' "$tmp/missing"
		echo "# added by (commit, object, path):"
		sed 's/^/#   /' "$tmp/introduced"
		echo "# so these $(wc -l <"$tmp/bad-refs") refs were dropped:"
		cat "$tmp/bad-refs"
	} >"$tmp/gp-bench-dropped"
	echo "make-gitgit:   dropped $(wc -l <"$tmp/bad-refs") refs: $(tr '\n' ' ' <"$tmp/bad-refs")" >&2
	g symbolic-ref -q HEAD >/dev/null && ! g rev-parse -q --verify HEAD >/dev/null &&
		echo "make-gitgit:   warning: HEAD ($(g symbolic-ref HEAD)) was dropped" >&2
done
rm -f "$tmp/missing" "$tmp/introduced" "$tmp/bad-commits" "$tmp/bad-refs"
g pack-refs --all

# 3. One pack with a bitmap, a MIDX with a bitmap, and a clean fsck.
t=$(now)
g repack -q -adb
echo "make-gitgit:   git repack -adb: $(elapsed "$t") s" >&2
t=$(now)
g multi-pack-index write --bitmap
echo "make-gitgit:   git multi-pack-index write --bitmap: $(elapsed "$t") s" >&2
t=$(now)
g fsck --connectivity-only --no-dangling --no-progress >"$tmp/fsck.out" 2>&1 ||
	{ tail -n20 "$tmp/fsck.out" >&2; die "git fsck --connectivity-only failed"; }
[ -s "$tmp/fsck.out" ] && { tail -n20 "$tmp/fsck.out" >&2; die "git fsck --connectivity-only complained"; }
rm -f "$tmp/fsck.out"
echo "make-gitgit:   git fsck --connectivity-only: clean ($(elapsed "$t") s)" >&2

g cat-file --batch-all-objects --batch-check='%(objecttype)' |
	sort | uniq -c | awk '{ printf "%s %s\n", $2, $1 }' >"$tmp/gp-bench-stats"
g count-objects -v >>"$tmp/gp-bench-stats"
echo "refs: $(g for-each-ref | wc -l)" >>"$tmp/gp-bench-stats"
cache_install make-gitgit "$dir" gp-bench-repo "$key"

awk -v d="$dir" -v t="$(elapsed "$t0")" '
	/^(commit|tree|blob|tag) / { n[$1] = $2; total += $2 }
	/^size-pack:/ { kib = $2 } /^refs:/ { refs = $2 }
	END { printf "make-gitgit: %s: %d objects (%d commits, %d trees, %d blobs, %d tags), %d refs, %.1f MiB, %s s\n",
		d, total, n["commit"], n["tree"], n["blob"], n["tag"], refs, kib / 1024, t }' "$dir/gp-bench-stats" >&2
