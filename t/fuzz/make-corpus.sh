#!/bin/sh
#
# make-corpus.sh: regenerate the fuzz seed corpora in t/fuzz/corpus/ from
# files that stock git writes. Run from anywhere; needs git (2.39 or
# later, for SHA-256, --rev-index and bitmap lookup tables) and python3
# (to cut entries and deltas out of a pack, and to convert bitmaps). The
# output is deterministic: fixed dates, one delta-search thread.
#
# Seed formats (what each fuzz-<target>.c expects):
#   idx/         a whole .idx (v1, v2, v2 with 64-bit offsets; SHA-1 and
#                SHA-256)
#   rev/         a whole .rev
#   pack-entry/  8 bytes big-endian (bit 63: SHA-256; the rest: the
#                entry's offset in its pack), then the entry's bytes
#                (header and zlib stream) as they sit in the pack
#   delta/       2 bytes big-endian base length, the base, the delta
#   config/      a config file
#   refs/, commit/  a flag byte, then a file (see below)
#   fsck/        a flag byte, then an object (see below and fuzz-fsck.c)
#   bitmap/      a flag byte and a 4-byte object count, then a .bitmap
#                converted to the identity order (see below and
#                fuzz-bitmap.c)
#   upload-pack/ a selector byte, then a client's request
#                (make-corpus-upload-pack.sh, run at the end)
#
# The committed corpus is the output of this script; rerun it only when a
# format seed is missing, and keep the total small (a few dozen files).

set -e

here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus
work=$(mktemp -d "${TMPDIR:-/tmp}/gp-corpus.XXXXXX")
trap 'test -n "$KEEP" || rm -rf "$work"' EXIT

# GIT_NEW (see reftable/ below) survives the clean-up of GIT_*.
new_git=${GIT_NEW-}
for v in $(env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\)=.*/\1/p')
do
	unset "$v"
done
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=committer@example.com
export GIT_AUTHOR_DATE='1112911993 -0700' GIT_COMMITTER_DATE='1112911993 -0700'

# Only the directories made here: corpus/ewah/, corpus/midx/,
# corpus/object-filter/, corpus/index/, corpus/mailmap/, corpus/attr/
# and corpus/remote-object-info/ are made by hand as their
# fuzz-<target>.c files describe, and must survive.
for dir in idx rev pack-entry delta config refs commit fsck bitmap
do
	rm -rf "$out/$dir"
done
mkdir -p "$out/idx" "$out/rev" "$out/pack-entry" "$out/delta" "$out/config"

# make_repo ALGO DIR: a few commits editing the same files (so that the
# pack has deltas), a nested tree, an annotated tag; fully repacked.
make_repo () {
	git init -q -b main --object-format="$1" "$2"
	(
		cd "$2"
		mkdir -p src/sub
		i=1
		while test $i -le 60
		do
			echo "line $i of the numbers file"
			i=$((i + 1))
		done >src/numbers.txt
		for f in alpha beta gamma delta epsilon zeta eta theta iota kappa
		do
			echo "file $f" >src/$f.c
		done
		printf 'para %s: some words about the project\n' 1 2 3 4 5 6 7 8 >README
		echo nested >src/sub/file
		git add -A
		git commit -q -m initial
		for n in 1 2 3 4
		do
			sed "s/^line $((n * 11)) of/edited line $((n * 11)) of/" \
				src/numbers.txt >tmp && mv tmp src/numbers.txt
			sed "s/^para $((n * 2)):/para $((n * 2)) (edit $n):/" README >tmp &&
			mv tmp README
			echo "edit $n" >>src/alpha.c
			git add -A
			git commit -q -m "edit $n of the numbers, the readme and alpha.c

A longer message, so that commits are worth a delta against each other."
		done
		git tag -a -m 'version one' v1
		git -c pack.threads=1 repack -q -adf --window=10 --depth=5
	)
}

make_repo sha1 "$work/r1"
make_repo sha256 "$work/r256"

# idx: v1, v2, and v2 with every offset in the 64-bit table.
for algo in sha1 sha256
do
	r=$work/r$(test $algo = sha1 && echo 1 || echo 256)
	pack=$(ls "$r"/.git/objects/pack/pack-*.pack)
	(
		cd "$r"
		cp "$pack" "$work/p-$algo.pack"
		git index-pack --index-version=1 -o "$work/v1-$algo.idx" "$work/p-$algo.pack"
		git index-pack --index-version=2,0 -o "$work/large-$algo.idx" "$work/p-$algo.pack"
		git index-pack --rev-index -o "$work/v2-$algo.idx" "$work/p-$algo.pack"
	) >/dev/null
	cp "$work/v2-$algo.idx" "$work/p-$algo.idx"
	cp "$work/v1-$algo.idx" "$out/idx/v1-$algo.idx"
	cp "$work/v2-$algo.idx" "$out/idx/v2-$algo.idx"
	cp "$work/large-$algo.idx" "$out/idx/v2-large-offsets-$algo.idx"
	cp "$work/v2-$algo.rev" "$out/rev/$algo.rev"
done

# An empty pack: no objects, the smallest valid idx and rev.
(
	cd "$work/r1"
	git pack-objects -q --stdout </dev/null >"$work/empty.pack"
	git index-pack --rev-index -o "$work/empty.idx" "$work/empty.pack"
	git index-pack --index-version=1 -o "$work/empty-v1.idx" "$work/empty.pack"
) >/dev/null
cp "$work/empty.idx" "$out/idx/empty-v2-sha1.idx"
cp "$work/empty-v1.idx" "$out/idx/empty-v1-sha1.idx"
cp "$work/empty.rev" "$out/rev/empty-sha1.rev"

# A REF_DELTA pack (pack-objects without --delta-base-offset).
for algo in sha1 sha256
do
	r=$work/r$(test $algo = sha1 && echo 1 || echo 256)
	(
		cd "$r"
		git rev-list --objects --all |
		git -c pack.threads=1 pack-objects -q --window=10 --depth=5 "$work/ref-$algo" >/dev/null
	)
	for f in "$work"/ref-$algo-*.pack
	do
		mv "$f" "$work/ref-$algo.pack"
	done
	rm -f "$work"/ref-$algo-*.idx
	(cd "$r" && git index-pack -o "$work/ref-$algo.idx" "$work/ref-$algo.pack") >/dev/null
done

# verify-pack -v lines, "oid type size size-in-pack offset [depth base]",
# plus the base's content for deltas, for the python cutter below.
for p in p-sha1 p-sha256 ref-sha1 ref-sha256
do
	r=$work/r$(case $p in *sha1) echo 1 ;; *) echo 256 ;; esac)
	algo=${p#*-}
	(cd "$r" && git verify-pack -v "$work/$p.idx") |
	grep -E '^[0-9a-f]{40,64} ' >"$work/$p.list"
	while read -r oid type size disk ofs depth base
	do
		test -n "$base" || continue
		(cd "$r" && git cat-file "$type" "$base") >"$work/base-$base"
	done <"$work/$p.list"
done

python3 - "$work" "$out" <<'EOF'
import os, sys, struct, zlib
work, out = sys.argv[1], sys.argv[2]

def header(buf, ofs, rawsz):
    """Length of the entry header at ofs (type/size, base reference)."""
    pos = ofs
    c = buf[pos]; pos += 1
    typ = (c >> 4) & 7
    while c & 0x80:
        c = buf[pos]; pos += 1
    if typ == 6:
        c = buf[pos]; pos += 1
        while c & 0x80:
            c = buf[pos]; pos += 1
    elif typ == 7:
        pos += rawsz
    return typ, pos - ofs

names = {1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag', 6: 'ofs-delta', 7: 'ref-delta'}
wanted_entries = {
    'p-sha1': (1, 2, 3, 4, 6),
    'ref-sha1': (7,),
    'p-sha256': (1, 6),
    'ref-sha256': (7,),
}
deltas_per_pack = {'p-sha1': 3, 'ref-sha1': 1, 'p-sha256': 2, 'ref-sha256': 1}
delta_kinds = set()  # (object type, base size): one seed each

for p in ('p-sha1', 'ref-sha1', 'p-sha256', 'ref-sha256'):
    sha256 = p.endswith('sha256')
    rawsz = 32 if sha256 else 20
    pack = open(os.path.join(work, p + '.pack'), 'rb').read()
    seen = set()
    ndeltas = 0
    for line in open(os.path.join(work, p + '.list')):
        f = line.split()
        oid, disk, ofs = f[0], int(f[3]), int(f[4])
        base = f[6] if len(f) > 6 else None
        typ, hlen = header(pack, ofs, rawsz)
        entry = pack[ofs:ofs + disk]
        if typ in wanted_entries[p] and typ not in seen:
            seen.add(typ)
            prefix = struct.pack('>Q', ofs | ((1 << 63) if sha256 else 0))
            name = '%s-%s' % (names[typ], 'sha256' if sha256 else 'sha1')
            open(os.path.join(out, 'pack-entry', name), 'wb').write(prefix + entry)
        if base and ndeltas < deltas_per_pack[p]:
            basedata = open(os.path.join(work, 'base-' + base), 'rb').read()
            if len(basedata) >= 65536 or (f[1], len(basedata)) in delta_kinds:
                continue
            delta_kinds.add((f[1], len(basedata)))
            delta = zlib.decompressobj().decompress(entry[hlen:])
            ndeltas += 1
            name = 'git-%s-%d' % (p, ndeltas)
            open(os.path.join(out, 'delta', name), 'wb').write(
                struct.pack('>H', len(basedata)) + basedata + delta)

# Hand-made deltas (gitformat-pack, "Deltified representation").
def varint(n):
    b = bytearray()
    while True:
        c = n & 0x7f
        n >>= 7
        if n:
            b.append(c | 0x80)
        else:
            b.append(c)
            return bytes(b)

base = b'0123456789abcdefghijklmnopqrstuvwxyz'
# copy 10 bytes at 26 (offset byte and size byte), insert 3, copy 5 at 0
d = varint(len(base)) + varint(18) + bytes([0x91, 26, 10]) + bytes([3]) + b'XYZ' + bytes([0x90, 5])
open(os.path.join(out, 'delta', 'hand-copy-insert'), 'wb').write(struct.pack('>H', len(base)) + base + d)
# an empty base and an insert-only delta
d = varint(0) + varint(5) + bytes([5]) + b'hello'
open(os.path.join(out, 'delta', 'hand-insert-only'), 'wb').write(struct.pack('>H', 0) + d)
# a copy spelling out all four offset bytes and all three size bytes
base = bytes(range(100))
d = varint(len(base)) + varint(10) + bytes([0xff, 5, 0, 0, 0, 10, 0, 0])
open(os.path.join(out, 'delta', 'hand-all-bits'), 'wb').write(struct.pack('>H', len(base)) + base + d)
EOF

# reftable/: a flag byte (bit 0: SHA-256; bit 1: two tables, the older
# one's length as 4 bytes big-endian first, read as a stack), then the
# table(s). They need a git that writes reftable (2.45 or later), given
# as GIT_NEW=<path>; without it the committed seeds stay as they are.
# Seeds: a small table of refs and logs (SHA-1, SHA-256); one of a few
# hundred refs in 1 KiB blocks with a restart every 4 records (several
# blocks, an index, obj blocks, log blocks); a log-only table (git
# reflog delete); a linked worktree's table; and a stack pair whose newer
# table deletes refs of the older.
if test -n "$new_git"
then
	rm -rf "$out/reftable"
	mkdir -p "$out/reftable"
	GIT_TEST_REFTABLE_AUTOCOMPACTION=false
	export GIT_TEST_REFTABLE_AUTOCOMPACTION
	newest () {
		echo "$1/.git/reftable/$(tail -n 1 "$1/.git/reftable/tables.list")"
	}
	for algo in sha1 sha256
	do
		flag=$(test $algo = sha1 && echo 0 || echo 1)
		r=$work/rt-$algo
		"$new_git" init -q --ref-format=reftable --object-format=$algo -b main "$r"
		(
			cd "$r"
			for n in 1 2 3
			do
				"$new_git" commit -q --allow-empty -m "commit $n"
			done
			"$new_git" tag -a -m "version one" v1 HEAD~1
			"$new_git" branch side HEAD~2
			"$new_git" symbolic-ref refs/remotes/origin/HEAD refs/heads/main
			"$new_git" pack-refs --all
		)
		{ printf "\\$flag"; cat "$(newest "$r")"; } >"$out/reftable/small-$algo"
		old=$(newest "$r")
		(
			cd "$r"
			"$new_git" update-ref -d refs/heads/side
			"$new_git" tag -d v1 >/dev/null
			"$new_git" update-ref refs/heads/new HEAD
		)
		python3 - "$flag" "$old" "$(newest "$r")" "$out/reftable/stack-$algo" <<'EOF_STACK'
import struct, sys
flag, old, new, out = int(sys.argv[1]) | 2, sys.argv[2], sys.argv[3], sys.argv[4]
a, b = open(old, 'rb').read(), open(new, 'rb').read()
open(out, 'wb').write(bytes([flag]) + struct.pack('>I', len(a)) + a + b)
EOF_STACK
		(
			cd "$r"
			"$new_git" reflog delete HEAD@{1}
		)
		{ printf "\\$flag"; cat "$(newest "$r")"; } >"$out/reftable/log-only-$algo"
	done
	r=$work/rt-blocks
	"$new_git" init -q --ref-format=reftable -b main "$r"
	(
		cd "$r"
		"$new_git" config reftable.blockSize 1024
		"$new_git" config reftable.restartInterval 4
		"$new_git" commit -q --allow-empty -m one
		"$new_git" commit -q --allow-empty -m two
		c=$("$new_git" rev-parse HEAD~1)
		n=1
		while test $n -le 120
		do
			echo "create refs/heads/b$n $c"
			echo "create refs/tags/t$n HEAD"
			n=$((n + 1))
		done | "$new_git" update-ref --stdin
		"$new_git" tag -a -m annotated v1
		"$new_git" pack-refs --all
		"$new_git" worktree add -q --detach ../rt-wt HEAD~1
	)
	{ printf "\\0"; cat "$(newest "$r")"; } >"$out/reftable/blocks-sha1"
	wt=$r/.git/worktrees/rt-wt/reftable
	{ printf "\\0"; cat "$wt/$(tail -n 1 "$wt/tables.list")"; } >"$out/reftable/worktree-sha1"
fi

# config: git's own, and hand-written ones covering the syntax.
cp "$work/r1/.git/config" "$out/config/git-init-sha1"
cp "$work/r256/.git/config" "$out/config/git-init-sha256"
git config -f "$out/config/git-written" remote.origin.url https://example.com/repo.git
git config -f "$out/config/git-written" --add remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'
git config -f "$out/config/git-written" 'Branch.Main.Remote' origin
git config -f "$out/config/git-written" core.quoted 'a "quoted" value; with # comment chars\tand tab'
git config -f "$out/config/git-written" pack.windowMemory 10m
git config -f "$out/config/git-written" 'weird.sub "section" with \\ back.key' 'x'

cat >"$out/config/syntax" <<'EOF'
# comment
; another
[core]
	bare = false
	Filemode = yes
	trustctime
	bigFileThreshold = 512k
[section "Sub Section"]
	key = "quoted \"value\" with \\ and \t tab"   ; trailing comment
	multi = first \
		continued
	empty =
[section.legacy]
	name = v
[pack] window = 10
[int]
	hex = 0x10
	octal = 010
	neg = -1g
	big = 99999999999999999999
[include]
	path = ~/nonexistent-include
	path =
[includeIf "gitdir:/tmp/"]
	path = /nonexistent/conditional
EOF
printf '\357\273\277[bom]\r\n\tkey = crlf value\r\n[x]y=z' >"$out/config/bom-crlf"
# ~/plain and ~/loop-a exist in the private HOME fuzz-config.c makes.
printf '[include]\n\tpath = ~/plain\n[x]\n\tafter = 1\n[include]\n\tpath = ~/loop-a\n' >"$out/config/includes"
# Conditional includes: ~/cond holds "./" patterns, ~/url a remote URL
# (refused under includeIf.hasconfig); the read as a repository's
# config has the git directory ~/repo/.git and the branch fuzz/main.
cat >"$out/config/conditional" <<'EOF'
[remote "origin"]
	url = https://example.com/fuzz.git
[includeIf "gitdir:~/repo/"]
	path = ~/cond
[includeIf "gitdir/i:**/REPO/.git"]
	path = ~/plain
[includeIf "gitdir:link/"]
	path = ~/plain
[includeIf "worktree:~/"]
	path = ~/plain
[includeIf "onbranch:fuzz/*"]
	path = ~/plain
[includeIf "hasconfig:remote.*.url:https://example.com/**"]
	path = ~/plain
[includeIf "unknown:condition"]
	path = ~/url
EOF
printf '[includeIf "hasconfig:remote.*.url:nomatch"]\n\tpath = ~/url\n' >"$out/config/conditional-url"

# refs/: a flag byte (bit 0: SHA-256; bit 1: a loose ref file, else
# packed-refs), then the file. commit/: a flag byte (bit 0: SHA-256;
# bit 1: a tag, else a commit), then the object's content.
mkdir -p "$out/refs" "$out/commit"
for algo in sha1 sha256
do
	r=$work/r$(test $algo = sha1 && echo 1 || echo 256)
	flag=$(test $algo = sha1 && echo 0 || echo 1)
	(
		cd "$r"
		git branch side HEAD~1
		git tag light HEAD~2
		git update-ref refs/remotes/origin/main HEAD~3
		git symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main
		git pack-refs --all
	)
	{ printf "\\$flag"; cat "$r/.git/packed-refs"; } >"$out/refs/packed-$algo"
	{ printf "\\$((flag | 2))"; cat "$r/.git/HEAD"; } >"$out/refs/loose-symref-$algo"
	{ printf "\\$((flag | 2))"; git -C "$r" rev-parse HEAD; } >"$out/refs/loose-oid-$algo"
	{ printf "\\$flag"; git -C "$r" cat-file commit HEAD; } >"$out/commit/commit-$algo"
	{ printf "\\$flag"; git -C "$r" cat-file commit HEAD~4; } >"$out/commit/root-$algo"
	{ printf "\\$((flag | 2))"; git -C "$r" cat-file tag v1; } >"$out/commit/tag-$algo"
done

# fsck/: a flag byte (bit 0: SHA-256; bits 1-2: 0 commit, 1 tree, 2
# tag, 3 a blob the harness names .gitmodules; bit 4: the content is
# also a --strict list), then the object: a commit, the root tree, a
# tree with a subtree, the tag and a .gitmodules file; and one list.
mkdir -p "$out/fsck"
for algo in sha1 sha256
do
	r=$work/r$(test $algo = sha1 && echo 1 || echo 256)
	flag=$(test $algo = sha1 && echo 0 || echo 1)
	{ printf "\\$flag"; git -C "$r" cat-file commit HEAD; } >"$out/fsck/commit-$algo"
	{ printf "\\$((flag | 2))"; git -C "$r" cat-file tree HEAD^{tree}; } >"$out/fsck/tree-$algo"
	{ printf "\\$((flag | 2))"; git -C "$r" cat-file tree HEAD:src; } >"$out/fsck/tree-src-$algo"
	{ printf "\\$((flag | 4))"; git -C "$r" cat-file tag v1; } >"$out/fsck/tag-$algo"
	{
		printf "\\$((flag | 6))"
		printf '[submodule "sub"]\n\tpath = sub\n\turl = https://example.com/sub.git\n'
	} >"$out/fsck/gitmodules-$algo"
done
printf '\020missingEmail=ignore,largePathname=warn:10 nulInCommit:warn\0tree x\n' \
	>"$out/fsck/list"

# bitmap/: a 5-byte prefix, then a .bitmap. The prefix: a flag byte
# (bit 0: SHA-256; bit 1: the image is the body only and the harness
# appends its checksum), then the object count, big-endian 32-bit.
# The repositories above first grow two dozen more commits, a topic
# branch, two merges and another annotated tag: a few hundred objects,
# and every commit gets a bitmap (git bitmaps them all below 100), about
# half of them XORed with an earlier one. Pack bitmaps: "repack -adb",
# also with pack.writeBitmapLookupTable, and (SHA-1) without the
# name-hash cache. MIDX bitmaps: two more packs ("repack -d" after new
# commits), then "multi-pack-index write --bitmap", with and without a
# lookup table. The python below converts each to the identity order
# fuzz-bitmap.c parses with (see there), and writes it as a body for the
# harness to checksum, plus <name>-whole with the trailer for the plain
# pack and MIDX ones.
mkdir -p "$out/bitmap" "$work/bitmaps"
for algo in sha1 sha256
do
	r=$work/r$(test $algo = sha1 && echo 1 || echo 256)
	b=$work/bitmaps
	(
		cd "$r"
		# Bitmaps of several words, so that XORing with a neighbour
		# sometimes saves one and git writes XOR offsets.
		n=1
		while test $n -le 24
		do
			for f in alpha beta gamma delta epsilon zeta eta theta
			do
				echo "round $n of $f" >src/$f.c
			done
			echo "round $n" >src/sub/file
			git add -A
			git commit -q -m "round $n"
			n=$((n + 1))
		done
		git checkout -q -b topic HEAD~3
		for n in 1 2 3
		do
			echo "topic $n" >>src/iota.c
			git add -A
			git commit -q -m "topic $n"
		done
		git checkout -q main
		git merge -q --no-edit topic
		git checkout -q topic
		echo "topic 4" >>src/kappa.c
		git commit -q -a -m "topic 4"
		git checkout -q main
		echo "main after the merge" >>src/delta.c
		git commit -q -a -m "main after the merge"
		git merge -q --no-edit topic
		git tag -a -m 'version two' v2

		# keep_pack NAME: the bitmap of the one pack, and its .idx (each
		# repack may order the pack differently).
		keep_pack () {
			p=$(ls .git/objects/pack/pack-*.pack)
			cp "${p%.pack}.bitmap" "$b/$1-$algo.bitmap"
			cp "${p%.pack}.idx" "$b/$1-$algo.idx"
		}
		git -c pack.threads=1 repack -q -adb
		keep_pack pack
		git -c pack.threads=1 -c pack.writeBitmapLookupTable=true repack -q -adb
		keep_pack pack-lookup
		if test $algo = sha1
		then
			git -c pack.threads=1 -c pack.writeBitmapHashCache=false repack -q -adb
			keep_pack pack-nohash
		fi
		rm -f .git/objects/pack/*.bitmap
		# The MIDX prefers this pack explicitly: by default git picks
		# the oldest, and the packs are written within a second.
		big=$(ls .git/objects/pack/pack-*.pack)
		big=${big##*/}

		for n in 1 2
		do
			echo "after the packs $n" >>src/epsilon.c
			git commit -q -a -m "after the packs $n"
			git -c pack.threads=1 repack -q -d
		done
		git multi-pack-index write --bitmap --preferred-pack="$big"
		m=.git/objects/pack/multi-pack-index
		cp "$m" "$b/midx-$algo.midx"
		cp $m-*.bitmap "$b/midx-$algo.bitmap"
		rm -f $m $m-*.bitmap $m-*.rev
		git -c pack.writeBitmapLookupTable=true multi-pack-index write --bitmap \
			--preferred-pack="$big"
		cp "$m" "$b/midx-lookup-$algo.midx"
		cp $m-*.bitmap "$b/midx-lookup-$algo.bitmap"
	)
done

python3 - "$work/bitmaps" "$out/bitmap" <<'EOF_BITMAP'
import hashlib, os, struct, sys
work, out = sys.argv[1], sys.argv[2]

def be32(b, o):
    return struct.unpack_from('>I', b, o)[0]

def idx_order(path, rawsz):
    """index_pos -> pack_pos of a v2 .idx: the rank of each offset."""
    idx = open(path, 'rb').read()
    assert idx[:8] == b'\xfftOc\x00\x00\x00\x02'
    n = be32(idx, 8 + 255 * 4)
    ofs_at = 8 + 1024 + n * rawsz + n * 4
    large_at = ofs_at + 4 * n
    ofs = []
    for i in range(n):
        o = be32(idx, ofs_at + 4 * i)
        if o & 0x80000000:
            o = struct.unpack_from('>Q', idx, large_at + 8 * (o & 0x7fffffff))[0]
        ofs.append(o)
    by_ofs = sorted(range(n), key=lambda i: ofs[i])
    to_bit = [0] * n
    for pack_pos, index_pos in enumerate(by_ofs):
        to_bit[index_pos] = pack_pos
    return to_bit

def midx_order(path):
    """midx_pos -> pseudo_pos, from the RIDX chunk."""
    m = open(path, 'rb').read()
    assert m[:4] == b'MIDX'
    chunks = {}
    for k in range(m[6] + 1):
        cid, cofs = struct.unpack_from('>4sQ', m, 12 + 12 * k)
        chunks[cid] = cofs
    n = be32(m, chunks[b'OIDF'] + 255 * 4)
    to_bit = [0] * n
    for pseudo_pos in range(n):
        to_bit[be32(m, chunks[b'RIDX'] + 4 * pseudo_pos)] = pseudo_pos
    return to_bit

def skip_ewah(b, o):
    return o + 12 + 8 * be32(b, o + 4)

def ewah_bits(b, o):
    """The set bits of the EWAH at o."""
    nbits, nwords = be32(b, o), be32(b, o + 4)
    words = [struct.unpack_from('>Q', b, o + 8 + 8 * k)[0] for k in range(nwords)]
    bits, pos, k = [], 0, 0
    while k < len(words):
        rlw = words[k]
        run, lits = (rlw >> 1) & 0xffffffff, rlw >> 33
        if rlw & 1:
            bits.extend(range(pos, pos + 64 * run))
        pos += 64 * run
        for lit in words[k + 1:k + 1 + lits]:
            bits.extend(pos + i for i in range(64) if lit >> i & 1)
            pos += 64
        k += 1 + lits
    return [x for x in bits if x < nbits]

def ewah_of(bits):
    """An EWAH of one marker word and literal words."""
    nwords = (max(bits) // 64 + 1) if bits else 0
    words = [0] * nwords
    for x in bits:
        words[x // 64] |= 1 << (x % 64)
    return struct.pack('>II', (max(bits) + 1) if bits else 0, nwords + 1) + \
        struct.pack('>Q', nwords << 33) + \
        b''.join(struct.pack('>Q', w) for w in words) + struct.pack('>I', 0)

def pseudo_merge_section(body, at, rawsz):
    """Two merges over the first commits, sharing two; at: its offset."""
    commits = ewah_bits(body, 12 + rawsz)[:5]
    merges = [commits[:3], commits[1:]]
    section, offsets = b'', []
    for m in merges:
        offsets.append(at + len(section))
        section += ewah_of(m) + ewah_of(sorted(set(m) | {0}))
    lookup = len(section)
    owners = {c: [i for i, m in enumerate(merges) if c in m] for c in commits}
    extended = at + lookup + 12 * len(commits)
    rows, ext = b'', b''
    for c in commits:
        if len(owners[c]) == 1:
            rows += struct.pack('>IQ', c, offsets[owners[c][0]])
        else:
            rows += struct.pack('>IQ', c, (extended + len(ext)) | 1 << 63)
            ext += struct.pack('>I', len(owners[c])) + \
                b''.join(struct.pack('>Q', offsets[i]) for i in owners[c])
    section += rows + ext + b''.join(struct.pack('>Q', o) for o in offsets)
    section += struct.pack('>IIQ', len(merges), len(commits), lookup)
    return section + struct.pack('>Q', len(section) + 8)

def to_identity(bm, to_bit, rawsz):
    """The bitmap body (no trailer) with index_pos rewritten to bit_pos."""
    body = bytearray(bm[:-rawsz])
    flags, nr_entries = struct.unpack_from('>HI', body, 6)
    n = len(to_bit)
    o = 12 + rawsz
    for _ in range(4):
        o = skip_ewah(body, o)
    for _ in range(nr_entries):
        struct.pack_into('>I', body, o, to_bit[be32(body, o)])
        o = skip_ewah(body, o + 6)
    end = len(body)
    if flags & 0x4:  # name-hash cache, in index order
        end -= 4 * n
        cache = [be32(body, end + 4 * i) for i in range(n)]
        for index_pos in range(n):
            struct.pack_into('>I', body, end + 4 * to_bit[index_pos], cache[index_pos])
    if flags & 0x10:  # lookup table: rows by index_pos, XOR rows by row
        end -= 16 * nr_entries
        rows = [struct.unpack_from('>IQI', body, end + 16 * k) for k in range(nr_entries)]
        order = sorted(range(nr_entries), key=lambda k: to_bit[rows[k][0]])
        new_row = {old: new for new, old in enumerate(order)}
        for new, old in enumerate(order):
            pos, ofs, xor = rows[old]
            if xor != 0xffffffff:
                xor = new_row[xor]
            struct.pack_into('>IQI', body, end + 16 * new, to_bit[pos], ofs, xor)
    assert end == o, 'unexpected bytes between the entries and the tables'
    return bytes(body)

def write(name, algo, n, body, whole):
    sha256 = algo == 'sha256'
    h = (hashlib.sha256 if sha256 else hashlib.sha1)(body).digest()
    flag = 1 if sha256 else 0
    if whole:
        open(os.path.join(out, name + '-whole'), 'wb').write(
            struct.pack('>BI', flag, n) + body + h)
    open(os.path.join(out, name), 'wb').write(struct.pack('>BI', flag | 2, n) + body)

for algo in ('sha1', 'sha256'):
    rawsz = 32 if algo == 'sha256' else 20
    for name, whole in (('pack', True), ('pack-lookup', False), ('pack-nohash', False),
                        ('midx', True), ('midx-lookup', False)):
        path = os.path.join(work, '%s-%s.bitmap' % (name, algo))
        if not os.path.exists(path):
            continue
        if name.startswith('midx'):
            to_bit = midx_order(os.path.join(work, '%s-%s.midx' % (name, algo)))
        else:
            to_bit = idx_order(os.path.join(work, '%s-%s.idx' % (name, algo)), rawsz)
        bm = open(path, 'rb').read()
        body = to_identity(bm, to_bit, rawsz)
        write('%s-%s' % (name, algo), algo, len(to_bit), body, whole)
        if name == 'pack' and algo == 'sha1':
            # A pseudo-merge section after the entries and before the
            # name-hash cache (git 2.47 layout): two merges sharing two
            # commits, so the extended table is there too.
            n = len(to_bit)
            cut = len(body) - 4 * n
            flags = struct.unpack_from('>H', body, 6)[0] | 0x20
            pm = body[:6] + struct.pack('>H', flags) + body[8:cut] + \
                pseudo_merge_section(body, cut, rawsz) + body[cut:]
            write('hand-pseudo-merge-sha1', algo, n, pm, False)

# No objects: four empty EWAHs (as git writes them) and no entries.
empty_ewah = struct.pack('>IIQI', 0, 1, 0, 0)
body = b'BITM' + struct.pack('>HHI', 1, 1, 0) + bytes(20) + empty_ewah * 4
write('hand-empty-sha1', 'sha1', 0, body, False)
EOF_BITMAP

# upload-pack/: requests naming the objects of fuzz-upload-pack.c.
sh "$here/make-corpus-upload-pack.sh"
