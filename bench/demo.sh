#!/bin/bash
# bench/demo.sh: what `make demo` runs. Shows the main job end to end.
#
#   1. installs missing build dependencies with apt-get (Debian/Ubuntu, as
#      root only; otherwise this step is skipped quietly);
#   2. builds gitpack (make);
#   3. builds a sample repository, bench/work/demo (bench/make-repo.sh
#      --packs 3 medium: ~52k objects in one repacked pack plus two packs
#      of later pushes; cached after the first run);
#   4. indexes every pack of it with `gitpack index-pack`, indexes the same
#      packs with `git index-pack`, and checks that gitpack's .idx and .rev
#      are byte-identical to git's and pass `git verify-pack`, printing
#      object counts and both tools' timings.
#
# Environment: GITPACK (default ./gitpack), GP_DEMO_SIZE (default medium),
# GP_DEMO_FORMATS (default "sha1"; "sha1 sha256" checks both).
# Exits non-zero if anything differs or fails.

# `make demo` runs this with $(SHELL), usually dash: switch to bash.
if [ -z "$BASH_VERSION" ]; then exec bash "$0" "$@"; fi
set -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

size=${GP_DEMO_SIZE:-medium}
formats=${GP_DEMO_FORMATS:-sha1}
threads=$(nproc 2>/dev/null || echo 1)

bold=; plain=
if [ -t 1 ]; then bold=$(printf '\033[1m'); plain=$(printf '\033[0m'); fi
step() { echo; echo "${bold}== $* ==${plain}"; }
fail() { echo "demo: $*" >&2; exit 1; }
commas() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|[,.]\)/\1,\2\3/' -e 'ta'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# ---- 1. dependencies -------------------------------------------------------
step "1/4 build dependencies"
deps="git zlib1g-dev libssl-dev libdeflate-dev build-essential"
if [ -f /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v dpkg-query >/dev/null &&
   command -v apt-get >/dev/null; then
	missing=
	for p in $deps; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } >/dev/null ||
			echo "warning: apt-get failed; continuing with what is installed"
	else
		echo "all present: $deps"
	fi
else
	echo "skipped (not Debian/Ubuntu as root)"
fi

# ---- 2. build ---------------------------------------------------------------
step "2/4 make"
mkdir -p "$top/bench/work"
log=$top/bench/work/make.log
if make --no-print-directory >"$log" 2>&1; then
	echo "make: ok"
elif [ -n "$GITPACK" ]; then
	tail -5 "$log"
	echo "warning: make failed (log: bench/work/make.log); continuing with GITPACK=$GITPACK"
	make --no-print-directory bench/rusage >/dev/null 2>&1 ||
		${CC:-cc} -std=gnu11 -O2 -o bench/rusage bench/rusage.c
else
	tail -30 "$log"
	fail "make failed (full log: bench/work/make.log)"
fi
gitpack=${GITPACK:-$top/gitpack}
case "$gitpack" in */*) [ -x "$gitpack" ] || fail "no gitpack binary at $gitpack" ;; esac
echo "gitpack: $gitpack"
rusage=$top/bench/rusage
[ -x "$rusage" ] || fail "bench/rusage was not built"

# ---- 3. sample repositories ----------------------------------------------------
step "3/4 sample repository"
repos=()
for fmt in $formats; do
	dir=bench/work/demo
	[ "$fmt" = sha1 ] || dir=bench/work/demo-$fmt
	t0=$(date +%s.%N)
	bench/make-repo.sh --packs 3 "$size" "$dir" "$fmt" 2>&1 |
		grep -v "^make-repo: $dir: " | sed 's/^make-repo: /  /' ||
		fail "make-repo.sh failed"
	repos+=("$dir:$fmt")
	awk -v d="$dir" -v f="$fmt" -v t0="$t0" -v t1="$(date +%s.%N)" '
		/^(commit|tree|blob|tag) / { n[$1] = $2; total += $2 }
		/^packs:/ { packs = $2 } /^size-pack:/ { kib = $2 }
		END { printf "%s (%s): %d objects (%d commits, %d trees, %d blobs, %d tags) in %d packs, %.1f MiB; ready in %.1f s\n",
			d, f, total, n["commit"], n["tree"], n["blob"], n["tag"], packs, kib / 1024, t1 - t0 }' "$dir/gp-bench-stats"
done

# ---- 4. index-pack, checked against git -------------------------------------------
step "4/4 index-pack: gitpack vs git (--threads=$threads --rev-index)"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gp-demo.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$scratch"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_CEILING_DIRECTORIES=$(dirname "$scratch")
unset GIT_DIR GIT_WORK_TREE GIT_OBJECT_DIRECTORY GIT_INDEX_FILE

echo "for each pack, in a scratch directory ($scratch):"
echo "  $gitpack index-pack --threads=$threads --rev-index [--object-format=F] -o gitpack/P.idx P.pack"
echo "  git index-pack --threads=$threads --rev-index [--object-format=F] -o git/P.idx P.pack"
echo "  cmp gitpack/P.idx git/P.idx; cmp gitpack/P.rev git/P.rev; git verify-pack gitpack/P.idx"
echo
printf "%-18s %6s %9s | %9s %8s | %9s %8s | %-5s %-5s %-6s\n" \
	pack format objects "gitpack" "RSS" "git" "RSS" ".idx" ".rev" verify
bad=0; npacks=0; tot_obj=0; tot_a=0; tot_b=0; errors=()

# Runs one index-pack under rusage; sets wall, rss, code. $1 = tool dir.
run_index() {
	local who=$1; shift
	(cd "$scratch/$who" && "$rusage" -o "$scratch/$who.ru" -- "$@" >"$scratch/$who.out" 2>"$scratch/$who.err")
	read -r wall rss _ _ code <"$scratch/$who.ru"
}

for entry in "${repos[@]}"; do
	dir=${entry%:*} fmt=${entry##*:}
	fmt_opt=
	[ "$fmt" = sha1 ] || fmt_opt=--object-format=$fmt
	# Largest first: the repacked base, then the incremental packs.
	for pack in $(ls -S "$dir"/objects/pack/pack-*.pack); do
		name=$(basename "$pack" .pack)
		npacks=$((npacks + 1))
		rm -rf "$scratch/gitpack" "$scratch/git"
		mkdir -p "$scratch/gitpack" "$scratch/git"
		for who in gitpack git; do
			ln "$pack" "$scratch/$who/$name.pack" 2>/dev/null || cp "$pack" "$scratch/$who/$name.pack"
		done
		nobj=$(od -An -tu4 --endian=big -j8 -N4 "$pack" | tr -d ' ')

		run_index gitpack "$gitpack" index-pack --threads="$threads" --rev-index $fmt_opt -o "$name.idx" "$name.pack"
		a_wall=$wall a_rss=$rss a_code=$code
		run_index git git index-pack --threads="$threads" --rev-index $fmt_opt -o "$name.idx" "$name.pack"
		b_wall=$wall b_rss=$rss b_code=$code
		[ "$b_code" = 0 ] || fail "git index-pack failed on $pack: $(cat "$scratch/git.err")"

		idx=same rev=same verify=ok
		if [ "$a_code" != 0 ]; then
			idx=- rev=- verify=-
			errors+=("$name: gitpack index-pack exited with $a_code: $(head -3 "$scratch/gitpack.err")")
			bad=1
		else
			cmp -s "$scratch/gitpack/$name.idx" "$scratch/git/$name.idx" || { idx=DIFF; bad=1; }
			cmp -s "$scratch/gitpack/$name.rev" "$scratch/git/$name.rev" || { rev=DIFF; bad=1; }
			# Inside the sample repository, so git knows the object format.
			if ! git --git-dir="$top/$dir" verify-pack "$scratch/gitpack/$name.idx" >/dev/null 2>"$scratch/verify.err"; then
				verify=FAIL; bad=1
				errors+=("$name: git verify-pack: $(head -3 "$scratch/verify.err")")
			fi
			cmp -s "$scratch/gitpack.out" "$scratch/git.out" ||
				{ errors+=("$name: gitpack index-pack printed '$(head -c 80 "$scratch/gitpack.out")', git printed '$(head -c 80 "$scratch/git.out")'"); bad=1; }
		fi
		tot_obj=$((tot_obj + nobj))
		tot_a=$(awk -v a="$tot_a" -v b="$a_wall" 'BEGIN { print a + b }')
		tot_b=$(awk -v a="$tot_b" -v b="$b_wall" 'BEGIN { print a + b }')
		printf "%-18s %6s %9s | %7.2f s %4s MiB | %7.2f s %4s MiB | %-5s %-5s %-6s\n" \
			"${name:0:13}..." "$fmt" "$(commas "$nobj")" "$a_wall" "$(mib "$a_rss")" \
			"$b_wall" "$(mib "$b_rss")" "$idx" "$rev" "$verify"
	done
done
printf "%-18s %6s %9s | %7.2f s %8s | %7.2f s %8s |\n" "total ($npacks packs)" "" "$(commas "$tot_obj")" \
	"$tot_a" "" "$tot_b" ""
awk -v a="$tot_a" -v b="$tot_b" 'BEGIN { if (b > 0) printf "gitpack/git wall time: %.2f\n", a / b }'

echo
if [ $bad = 0 ]; then
	echo "${bold}OK${plain}: $npacks packs, $(commas "$tot_obj") objects: gitpack index-pack wrote the same .idx and .rev as git, and git verify-pack accepts them."
	echo "(For repeated timings: bench/index-pack; see bench/README.md.)"
	exit 0
fi
printf '%s\n' "${errors[@]}" >&2
echo "${bold}FAILED${plain}: gitpack index-pack's output differs from git's or does not verify." >&2
exit 1
