#!/bin/sh

test_description='multi-pack-index LOFF chunk, compared with git

Packs over 4 GiB are too big for the suite, and writing a MIDX reads only
the packs'"'"' .idx files (a .pack must merely exist). So the .idx files are
fabricated with test-tool write-idx, with offsets above 2^31 and 2^32,
and the MIDX that gitpack writes over them is compared with git'"'"'s.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# fake_pack ALGO K: a pack whose .idx has one small offset, four large
# ones, and (for K > 1) an object shared with pack 1.
fake_pack () {
	algo=$1 k=$2
	case $algo in sha1) sum=sha1sum len=40 ;; sha256) sum=sha256sum len=64 ;; esac
	name=$(printf "p$k" | $sum | cut -c1-$len) &&
	: >pack-$name.pack &&
	touch -d @$((1700000000 + k * 10)) pack-$name.pack &&
	{
		echo "$(printf "s$k" | $sum | cut -c1-$len) 12" &&
		for j in 1 2 3 4
		do
			echo "$(printf "o$k$j" | $sum | cut -c1-$len) $((k * j * 1500000000))"
		done &&
		if test $k != 1
		then
			echo "$(printf o11 | $sum | cut -c1-$len) $((k * 100))"
		fi
	} | test-tool write-idx --object-format=$algo pack-$name.idx
}

# clear-loff.pl: a MIDX on stdin with its LOFF chunk replaced by
# nothing (the chunks after it moved up), on stdout.
cat >clear-loff.pl <<\EOF
local $/;
my $d = <STDIN>;
my $n = ord(substr($d, 6, 1));
my (@id, @o);
for my $i (0 .. $n) {
	$id[$i] = substr($d, 12 + 12 * $i, 4);
	my ($hi, $lo) = unpack("NN", substr($d, 16 + 12 * $i, 8));
	$o[$i] = $hi * 4294967296 + $lo;
}
my ($k) = grep { $id[$_] eq "LOFF" } 0 .. $n - 1;
my $len = $o[$k + 1] - $o[$k];
substr($d, $o[$k], $len) = "";
substr($d, 16 + 12 * $_, 8) = pack("NN", 0, $o[$_] - $len) for $k + 1 .. $n;
print $d;
EOF

for algo in $test_hash_algos
do
	test_expect_success "MIDX with large offsets is byte-identical to git's ($algo)" '
		git init -q --bare --object-format=$algo loff-$algo &&
		(
			cd loff-$algo/objects/pack &&
			fake_pack $algo 1 && fake_pack $algo 2 && fake_pack $algo 3 &&
			git multi-pack-index write &&
			mv multi-pack-index ../../git.midx &&
			gitpack multi-pack-index write &&
			cmp multi-pack-index ../../git.midx &&
			perl -e "read STDIN, \$h, 12; read STDIN, \$t, 12 * ord(substr(\$h, 6, 1));
				 print join(q( ), map { substr(\$t, 12 * \$_, 4) } 0 .. ord(substr(\$h, 6, 1)) - 1), qq(\n)" \
				<multi-pack-index >chunks &&
			echo "PNAM OIDF OIDL OOFF LOFF" >expect &&
			test_cmp expect chunks
		)
	'

	test_expect_success "large offsets read back through the MIDX ($algo)" '
		(
			cd loff-$algo/objects/pack &&
			test-tool midx-dump --object-format=$algo offsets >actual &&
			for idx in pack-*.idx
			do
				git show-index --object-format=$algo <$idx
			done | awk "{ print \$2, \$1 }" | sort >all &&
			sort actual >sorted &&
			# every MIDX entry is one of the entries git reads in the packs
			comm -23 sorted all >extra &&
			test_must_be_empty extra &&
			grep " 18000000000\$" actual
		)
	'

	test_expect_success "a LOFF chunk emptied: --batch-all-objects dies with the message of git ($algo)" '
		rm -rf cleared-$algo && cp -R loff-$algo cleared-$algo &&
		midx=cleared-$algo/objects/pack/multi-pack-index &&
		perl "$TRASH_DIRECTORY/clear-loff.pl" <$midx >$midx.new &&
		mv -f $midx.new $midx &&
		test_must_fail gitpack -C cleared-$algo cat-file --batch-all-objects \
			--batch-check="%(objectsize)" >out 2>err &&
		echo "fatal: multi-pack-index large offset out of bounds" >expect &&
		test_cmp expect err
	'
done

test_done
