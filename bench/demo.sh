#!/bin/bash
# bench/demo.sh: what `make demo` runs. Shows the main job end to end: the
# maintenance repack of a server's repository that pushes keep adding
# packs to, done by gitpack and by stock git side by side.
#
#   1. installs missing build dependencies with apt-get (Debian/Ubuntu, as
#      root only; otherwise this step is skipped quietly);
#   2. builds gitpack (make);
#   3. builds a sample repository shaped by pushes (cached after the first
#      run): bench/make-repo.sh makes bench/work/medium (~52k objects), and
#      bench/make-pushes.sh --pushes 24 --extra 0 makes from it
#      bench/work/demo-pushes/pristine.git: its main branch 24 pushes back,
#      fetched and repacked by git into one pack with a bitmap, then 24
#      fetches of a few commits each, each leaving a pack: 25 packs;
#   4. in two copies of it (GP_DEMO_RUNS times, default 3, alternating
#      which goes first), runs
#          gitpack repack --geometric=2 --write-midx --write-bitmap-index -d
#          git repack --geometric=2 --write-midx --write-bitmap-index -d
#      prints the packs before and after and both tools' timings, and
#      checks every result with stock git: fsck --full, multi-pack-index
#      verify, rev-list --test-bitmap HEAD, and a clone (--no-local, so
#      upload-pack counts the objects with the bitmap);
#   5. indexes the packs of gitpack's result with gitpack index-pack and
#      git index-pack, and checks that gitpack's .idx and .rev are
#      byte-identical to git's;
#   6. serves gitpack's result with gitpack serve to 20 simultaneous
#      `git clone --depth=1` over HTTP, its pack cache cold then warm,
#      beside stock git http-backend behind lighttpd (when installed),
#      with bench/serve-clones: server CPU, wall, peak RSS, bytes made.
#
# Environment: GITPACK (default ./gitpack), GP_DEMO_SIZE (default medium),
# GP_DEMO_FORMATS (default "sha1"; "sha1 sha256" checks both),
# GP_DEMO_PUSHES (default 24), GP_DEMO_RUNS (default 3).
# Exits non-zero if anything differs or fails. For repeated timings on
# bigger repositories: bench/repack (see bench/README.md).

# `make demo` runs this with $(SHELL), usually dash: switch to bash.
if [ -z "$BASH_VERSION" ]; then exec bash "$0" "$@"; fi
set -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

size=${GP_DEMO_SIZE:-medium}
formats=${GP_DEMO_FORMATS:-sha1}
pushes=${GP_DEMO_PUSHES:-24}
runs=${GP_DEMO_RUNS:-3}
threads=$(nproc 2>/dev/null || echo 1)
geo=(repack --geometric=2 --write-midx --write-bitmap-index -d)

bold=; plain=
if [ -t 1 ]; then bold=$(printf '\033[1m'); plain=$(printf '\033[0m'); fi
step() { echo; echo "${bold}== $* ==${plain}"; }
fail() { echo "demo: $*" >&2; exit 1; }
commas() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|[,.]\)/\1,\2\3/' -e 'ta'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
bmib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
idx_objects() { od -An -tu4 --endian=big -j $((8 + 255 * 4)) -N4 "$1" | tr -d ' '; }
case "$runs" in ''|*[!0-9]*|0) fail "GP_DEMO_RUNS wants a positive number" ;; esac

# ---- 1. dependencies -------------------------------------------------------
step "1/6 build dependencies"
deps="git zlib1g-dev libssl-dev libdeflate-dev libcrypt-dev build-essential lighttpd"
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
step "2/6 make"
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
case "$gitpack" in /*) ;; */*) gitpack=$top/$gitpack ;; esac
echo "gitpack: $gitpack"
rusage=$top/bench/rusage
[ -x "$rusage" ] || fail "bench/rusage was not built"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
unset GIT_DIR GIT_WORK_TREE GIT_OBJECT_DIRECTORY GIT_INDEX_FILE GIT_ALTERNATE_OBJECT_DIRECTORIES

# ---- 3. sample repositories ----------------------------------------------------
step "3/6 sample repository: a base pack and $pushes pushes"
repos=()
for fmt in $formats; do
	src=bench/work/$size
	dir=bench/work/demo-pushes
	if [ "$fmt" != sha1 ]; then src=$src-$fmt; dir=$dir-$fmt; fi
	[ "$size" = medium ] || dir=$dir-$size
	t0=$(date +%s.%N)
	bench/make-repo.sh "$size" "$src" "$fmt" 2>&1 | grep -v "^make-repo: $src: " | sed 's/^make-repo: /  /' ||
		fail "make-repo.sh failed"
	bench/make-pushes.sh --pushes "$pushes" --extra 0 "$src" "$dir" 2>&1 | sed 's/^make-pushes: /  /' ||
		fail "make-pushes.sh failed"
	[ -f "$dir/gp-bench-scenario" ] || fail "make-pushes.sh did not build $dir"
	repos+=("$dir:$fmt")
	awk -v d="$dir" -v f="$fmt" -v t0="$t0" -v t1="$(date +%s.%N)" '
		$1 == "step" { step = $2 } $1 == "branch" { branch = $2 }
		$1 == "pack" { if (n++) { s += $3; if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3 } else base = $3; bytes += $4 }
		END { printf "%s/pristine.git (%s): %d packs, %.1f MiB: a base of %d objects with a bitmap, then %d pushes of %d first-parent commits of %s (%d to %d objects each, %d in all); ready in %.1f s\n",
			d, f, n, bytes / 1048576, base, n - 1, step, branch, min, max, s, t1 - t0 }' "$dir/gp-bench-stats"
done

# ---- 4. the maintenance repack, checked by git ---------------------------------
step "4/6 maintenance repack: gitpack vs git"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gp-demo.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$scratch"' EXIT
export GIT_CEILING_DIRECTORIES=$scratch
bad=0; errors=()
summary=()

# packs DIR: one line per pack, largest first: "name objects bytes bitmap".
packs() {
	local idx
	for idx in "$1"/objects/pack/pack-*.idx; do
		[ -f "$idx" ] || continue
		echo "$(basename "$idx" .idx) $(idx_objects "$idx") $(stat -c %s "${idx%.idx}.pack")" \
			"$([ -f "${idx%.idx}.bitmap" ] && echo bitmap || echo -)"
	done | sort -k3,3nr
}

# show_packs DIR [OLD]: the packs, the largest one by one and the rest
# summed when there are many; "kept"/"new" against OLD's list.
show_packs() {
	local dir=$1 old=$2 midx=
	packs "$dir" >"$scratch/show"
	if [ -f "$dir/objects/pack/multi-pack-index" ]; then
		midx=", multi-pack-index"
		ls "$dir"/objects/pack/multi-pack-index-*.bitmap >/dev/null 2>&1 &&
			midx="$midx with a bitmap ($(commas "$(stat -c %s "$dir"/objects/pack/multi-pack-index-*.bitmap)") bytes)"
	fi
	awk -v midx="$midx" -v old="$old" '
		function commas(n) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]([,]|$)/, ",&", s); return s }
		BEGIN { if (old != "") while ((getline l < old) > 0) { split(l, f, " "); had[f[1]] = 1 } }
		{ name[NR] = $1; obj[NR] = $2; bytes[NR] = $3; bm[NR] = $4; tobj += $2; tbytes += $3 }
		END {
			printf "      %d pack%s, %s objects in them, %.1f MiB%s\n", NR, NR == 1 ? "" : "s", commas(tobj), tbytes / 1048576, midx
			for (i = 1; i <= NR; i++) {
				if (NR > 6 && i > 2) {
					for (j = i; j <= NR; j++) { o += obj[j]; b += bytes[j]; if (min == "" || obj[j] < min) min = obj[j]; if (obj[j] > max) max = obj[j] }
					printf "      %d more packs of %s to %s objects: %s objects, %.1f MiB\n", NR - i + 1, commas(min), commas(max), commas(o), b / 1048576
					break
				}
				tag = (bm[i] == "bitmap") ? "  .bitmap" : ""
				if (old != "") tag = tag ((name[i] in had) ? "  (kept)" : "  (new)")
				printf "        %s  %9s objects  %7.1f MiB%s\n", substr(name[i], 1, 17) "...", commas(obj[i]), bytes[i] / 1048576, tag
			}
		}' "$scratch/show"
}

# check WHO DIR: stock git's checks of DIR; sets res to one line saying
# how each went, adds to errors and sets bad on a failure.
check() {
	local who=$1 dir=$2 out=$scratch/check.out n head
	res=
	if git -C "$dir" fsck --full --no-dangling --no-progress >"$out" 2>&1; then
		res="fsck --full ok"
	else
		res="fsck --full FAILED"; errors+=("$who: git fsck --full: $(tail -n 3 "$out" | tr '\n' ' ')")
	fi
	if git -C "$dir" multi-pack-index verify --no-progress >"$out" 2>&1; then
		res="$res, multi-pack-index verify ok"
	else
		res="$res, multi-pack-index verify FAILED"; errors+=("$who: git multi-pack-index verify: $(tail -n 3 "$out" | tr '\n' ' ')")
	fi
	if git -C "$dir" rev-list --test-bitmap HEAD >"$out" 2>&1; then
		res="$res, --test-bitmap HEAD ok"
	else
		res="$res, --test-bitmap HEAD FAILED"
		errors+=("$who: git rev-list --test-bitmap HEAD: $(tr '\r' '\n' <"$out" | grep -v '^Verifying' | tail -n 2 | tr '\n' ' ')")
	fi
	rm -rf "$scratch/clone.git"
	if git clone -q --bare --no-local "$dir" "$scratch/clone.git" >"$out" 2>&1 &&
	   head=$(git -C "$scratch/clone.git" rev-parse HEAD) && [ "$head" = "$(git -C "$dir" rev-parse HEAD)" ]; then
		n=$(git -C "$scratch/clone.git" count-objects -v | awk '$1 == "in-pack:" { print $2 }')
		res="$res, clone ok ($(commas "$n") objects)"
	else
		res="$res, clone FAILED"; errors+=("$who: git clone --no-local: $(tail -n 3 "$out" | tr '\n' ' ')")
	fi
	rm -rf "$scratch/clone.git"
	case "$res" in *FAILED*) bad=1 ;; esac
}

tool() { if [ "$1" = a ]; then echo gitpack; else echo git; fi; }

for entry in "${repos[@]}"; do
	dir=${entry%:*} fmt=${entry##*:}
	pristine=$top/$dir/pristine.git
	[ "$entry" = "${repos[0]}" ] || echo
	echo "in two copies of $dir/pristine.git ($fmt), $runs run(s) each, alternating which goes first:"
	echo "  gitpack: (cd $scratch/gitpack.git && $gitpack ${geo[*]})"
	echo "  git:     (cd $scratch/git.git && git ${geo[*]})"
	echo "  then, by git: fsck --full; multi-pack-index verify; rev-list --test-bitmap HEAD; clone --no-local"
	echo
	echo "  before (objects in more than one pack counted in each):"
	show_packs "$pristine"
	packs "$pristine" >"$scratch/before"
	: >"$scratch/a.times"; : >"$scratch/b.times"
	a_failed=
	echo
	for r in $(seq 1 "$runs"); do
		if [ $((r % 2)) = 1 ]; then order="a b"; else order="b a"; fi
		for who in $order; do
			[ "$who" = a ] && [ -n "$a_failed" ] && continue
			d=$scratch/$(tool "$who").git
			rm -rf "$d"
			cp -a "$pristine" "$d" || fail "cannot copy $pristine"
		done
		for who in $order; do
			[ "$who" = a ] && [ -n "$a_failed" ] && continue
			d=$scratch/$(tool "$who").git
			if [ "$who" = a ]; then cmd=("$gitpack" "${geo[@]}"); else cmd=(git "${geo[@]}"); fi
			(cd "$d" && "$rusage" -o "$scratch/ru" -- "${cmd[@]}" </dev/null >"$scratch/out" 2>"$scratch/err")
			read -r wall rss _ _ code <"$scratch/ru"
			if [ "$code" != 0 ]; then
				[ "$who" = b ] && fail "git repack failed: $(tail -n 3 "$scratch/err")"
				printf "  run %d  %-8s FAILED (exit %s)\n" "$r" gitpack "$code"
				errors+=("gitpack repack (run $r) exited with $code: $(tail -n 3 "$scratch/err" | tr '\n' ' ')")
				errors+=("to repeat: cp -a $pristine /tmp/gp-repeat && cd /tmp/gp-repeat && ${cmd[*]}")
				a_failed=$r bad=1
				continue
			fi
			echo "$wall $rss" >>"$scratch/$who.times"
			check "$(tool "$who")" "$d"
			case "$res" in *FAILED*) errors+=("to repeat: cp -a $pristine /tmp/gp-repeat && cd /tmp/gp-repeat && ${cmd[*]}, then the check") ;; esac
			printf "  run %d  %-8s %7.3f s %5s MiB   %s\n" "$r" "$(tool "$who")" "$wall" "$(mib "$rss")" "$res"
		done
	done
	for who in a b; do
		[ "$who" = a ] && [ -n "$a_failed" ] && continue
		d=$scratch/$(tool "$who").git
		echo
		echo "  after, $(tool "$who") (run $runs):"
		show_packs "$d" "$scratch/before"
	done
	echo
	wb=$(awk '{ print $1 }' "$scratch/b.times" | median); rb=$(awk '{ print $2 }' "$scratch/b.times" | median)
	if [ -s "$scratch/a.times" ]; then
		wa=$(awk '{ print $1 }' "$scratch/a.times" | median); ra=$(awk '{ print $2 }' "$scratch/a.times" | median)
		line=$(awk -v wa="$wa" -v wb="$wb" -v ra="$ra" -v rb="$rb" 'BEGIN {
			printf "median of %s: gitpack %.3f s, %.0f MiB; git %.3f s, %.0f MiB; gitpack/git: wall %.2f, peak RSS %.2f",
				"'"$runs"'", wa, ra / 1024, wb, rb / 1024, wa / wb, ra / rb }')
	else
		line=$(awk -v wb="$wb" -v rb="$rb" 'BEGIN { printf "gitpack FAILED; git %.3f s, %.0f MiB", wb, rb / 1024 }')
	fi
	echo "  $line"
	summary+=("$dir ($fmt): $line")
	# Step 5 indexes the packs of gitpack's last result.
	[ -n "$a_failed" ] || mv "$scratch/gitpack.git" "$scratch/result-$fmt.git"
	rm -rf "$scratch/gitpack.git" "$scratch/git.git"
done

# ---- 5. index-pack, checked against git -------------------------------------------
step "5/6 index-pack of gitpack's packs: gitpack vs git (--threads=$threads --rev-index)"
echo "for each pack, in a scratch directory ($scratch/index):"
echo "  $gitpack index-pack --threads=$threads --rev-index [--object-format=F] -o gitpack/P.idx P.pack"
echo "  git index-pack --threads=$threads --rev-index [--object-format=F] -o git/P.idx P.pack"
echo "  cmp gitpack/P.idx git/P.idx; cmp gitpack/P.rev git/P.rev; git verify-pack gitpack/P.idx"
echo
printf "%-20s %6s %9s | %9s %8s | %9s %8s | %-5s %-5s %-6s\n" \
	pack format objects "gitpack" "RSS" "git" "RSS" ".idx" ".rev" verify
ix=$scratch/index
npacks=0

# Runs one index-pack under rusage; sets wall, rss, code. $1 = tool dir.
run_index() {
	local who=$1; shift
	(cd "$ix/$who" && "$rusage" -o "$ix/$who.ru" -- "$@" >"$ix/$who.out" 2>"$ix/$who.err")
	read -r wall rss _ _ code <"$ix/$who.ru"
}

for entry in "${repos[@]}"; do
	dir=${entry%:*} fmt=${entry##*:}
	fmt_opt=
	[ "$fmt" = sha1 ] || fmt_opt=--object-format=$fmt
	# gitpack's last result of step 4, else the packs it started from
	# (the largest few).
	from=$scratch/result-$fmt.git
	[ -d "$from" ] || from=$top/$dir/pristine.git
	for pack in $(ls -S "$from"/objects/pack/pack-*.pack | head -n 4); do
		name=$(basename "$pack" .pack)
		npacks=$((npacks + 1))
		rm -rf "$ix"
		mkdir -p "$ix/gitpack" "$ix/git"
		for who in gitpack git; do
			ln "$pack" "$ix/$who/$name.pack" 2>/dev/null || cp "$pack" "$ix/$who/$name.pack"
		done
		nobj=$(od -An -tu4 --endian=big -j8 -N4 "$pack" | tr -d ' ')

		run_index gitpack "$gitpack" index-pack --threads="$threads" --rev-index $fmt_opt -o "$name.idx" "$name.pack"
		a_wall=$wall a_rss=$rss a_code=$code
		run_index git git index-pack --threads="$threads" --rev-index $fmt_opt -o "$name.idx" "$name.pack"
		b_wall=$wall b_rss=$rss b_code=$code
		[ "$b_code" = 0 ] || fail "git index-pack failed on $pack: $(cat "$ix/git.err")"

		idx=same rev=same verify=ok
		if [ "$a_code" != 0 ]; then
			idx=- rev=- verify=-
			errors+=("$name: gitpack index-pack exited with $a_code: $(head -3 "$ix/gitpack.err")")
			bad=1
		else
			cmp -s "$ix/gitpack/$name.idx" "$ix/git/$name.idx" || { idx=DIFF; bad=1; }
			cmp -s "$ix/gitpack/$name.rev" "$ix/git/$name.rev" || { rev=DIFF; bad=1; }
			# Inside the sample repository, so git knows the object format.
			if ! git --git-dir="$top/$dir/pristine.git" verify-pack "$ix/gitpack/$name.idx" >/dev/null 2>"$ix/verify.err"; then
				verify=FAIL; bad=1
				errors+=("$name: git verify-pack: $(head -3 "$ix/verify.err")")
			fi
			cmp -s "$ix/gitpack.out" "$ix/git.out" ||
				{ errors+=("$name: gitpack index-pack printed '$(head -c 80 "$ix/gitpack.out")', git printed '$(head -c 80 "$ix/git.out")'"); bad=1; }
		fi
		printf "%-20s %6s %9s | %7.2f s %4s MiB | %7.2f s %4s MiB | %-5s %-5s %-6s\n" \
			"${name:0:17}..." "$fmt" "$(commas "$nobj")" "$a_wall" "$(mib "$a_rss")" \
			"$b_wall" "$(mib "$b_rss")" "$idx" "$rev" "$verify"
	done
done

# ---- 6. the server ---------------------------------------------------------------
step "6/6 gitpack serve: 20 simultaneous clone --depth=1 over HTTP"
echo "the repository gitpack just maintained, served by gitpack serve (its pack cache"
echo "cold, then warm) and, when lighttpd is installed, by git http-backend behind"
echo "lighttpd without a cache; only the server's CPU is counted (bench/serve-clones)"
serve_repo=$scratch/result-${formats%% *}.git
scenarios=gitpack-cold,gitpack-warm
[ -x /usr/sbin/lighttpd ] && scenarios=$scenarios,lighttpd
if [ -d "$serve_repo" ] &&
   python3 bench/serve-clones --runs 1 --clones 20 --repo "$serve_repo" --gitpack "$gitpack" \
	--scenario "$scenarios" >"$scratch/serve.out" 2>&1; then
	cat "$scratch/serve.out"
	if grep -q "gitpack-cold .*(1 gens)" "$scratch/serve.out"; then
		summary+=("serve: 20 simultaneous clones cost gitpack serve one pack generation")
	else
		errors+=("gitpack serve made more than one pack for 20 identical clones")
		bad=1
	fi
else
	[ -f "$scratch/serve.out" ] && tail -20 "$scratch/serve.out"
	errors+=("bench/serve-clones failed")
	bad=1
fi

echo
echo "${bold}summary${plain}"
for line in "${summary[@]}"; do
	echo "  $line"
done
echo
if [ $bad = 0 ]; then
	echo "${bold}OK${plain}: gitpack's maintenance repack passes git's fsck --full, multi-pack-index verify, --test-bitmap and a clone; its packs index the same with gitpack and git; gitpack serve answered 20 simultaneous clones with one pack generation."
	echo "(For repeated timings on bigger repositories: bench/repack; see bench/README.md.)"
	exit 0
fi
printf '%s\n' "${errors[@]}" >&2
echo "${bold}FAILED${plain}: see the messages above." >&2
exit 1
