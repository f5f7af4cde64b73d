# bench/lib-cache.sh: the cache protocol of the scripts that build
# benchmark repositories (make-repo.sh, make-gitgit.sh, make-pushes.sh).
# Source it (bash) after defining die(). A repository is built in
# DIR.tmp.PID and renamed into place holding a marker file whose content
# is the KEY of its parameters; a DIR without a marker is never touched.
#
#   cache_open NAME DIR MARKER KEY
#	exit 0 when DIR/MARKER holds KEY (up to date); remove a DIR built
#	with another key; refuse any other DIR; then set tmp to a fresh
#	DIR.tmp.PID, removed on exit unless cache_install ran.
#   cache_install NAME DIR MARKER KEY
#	write KEY into $tmp/MARKER and rename $tmp to DIR; when another
#	run installed the same KEY meanwhile, keep it and exit 0.
#   now; elapsed START
#	seconds since the epoch, and since START with one decimal.

cache_open () {
	local name=$1 dir=$2 marker=$3 key=$4
	if [ -e "$dir" ]; then
		if [ -f "$dir/$marker" ]; then
			if [ "$(cat "$dir/$marker")" = "$key" ]; then
				echo "$name: $dir is up to date" >&2
				exit 0
			fi
			echo "$name: $dir was built with other parameters (or from something else); rebuilding" >&2
			rm -rf "$dir"
		elif [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ]; then
			rmdir "$dir"
		else
			die "$dir exists and is not a $name repository; not touching it"
		fi
	fi
	mkdir -p "$(dirname "$dir")"
	tmp=$dir.tmp.$$
	rm -rf "$tmp"
	trap 'rm -rf "$tmp"' EXIT
}

cache_install () {
	local name=$1 dir=$2 marker=$3 key=$4
	echo "$key" >"$tmp/$marker"
	if ! mv -T "$tmp" "$dir" 2>/dev/null; then
		# Someone else finished the same repository first.
		[ "$(cat "$dir/$marker" 2>/dev/null)" = "$key" ] || die "cannot rename $tmp to $dir"
		echo "$name: $dir appeared meanwhile; keeping it" >&2
		exit 0
	fi
	trap - EXIT
}

now () { date +%s.%N; }
elapsed () { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
