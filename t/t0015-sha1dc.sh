#!/bin/sh

test_description='SHA-1 collision detection (sha1dc)

Every SHA-1 object hash detects the known collision attacks, as Git has
since 2.13. The detector must find a real attack: the first 320 bytes of
the two SHAttered PDFs (Marc Stevens, Elie Bursztein, Pierre Karpman,
Ange Albertini and Yarik Markov, "The first collision for full SHA-1",
CRYPTO 2017; shattered.io), which already collide with each other. Both
must be refused, with and without the fast filter (GP_TEST_SHA1DC_FULL /
--full recompresses every block for every disturbance vector), so that a
filter that misses the attack shows as a difference. Everything else
must hash exactly as sha1sum and git do, in both modes, and index-pack
must refuse a colliding object with Git'"'"'s message.'

GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# The first 320 bytes of shattered-1.pdf: a 192-byte common PDF prefix,
# then the two near-collision blocks (64 bytes each).
shattered_1='
255044462d312e330a25e2e3cfd30a0a0a312030206f626a0a3c3c2f57696474
682032203020522f4865696768742033203020522f547970652034203020522f
537562747970652035203020522f46696c7465722036203020522f436f6c6f72
53706163652037203020522f4c656e6774682038203020522f42697473506572
436f6d706f6e656e7420383e3e0a73747265616d0affd8fffe00245348412d31
20697320646561642121212121852fec092339759c39b1a1c63c4c97e1fffe01
7346dc9166b67e118f029ab621b2560ff9ca67cca8c7f85ba84c79030c2b3de2
18f86db3a90901d5df45c14f26fedfb3dc38e96ac22fe7bd728f0e45bce046d2
3c570feb141398bb552ef5a0a82be331fea48037b8b5d71f0e332edf93ac3500
eb4ddc0decc1a864790c782c76215660dd309791d06bd0af3f98cda4bc4629b1
'
# The same 320 bytes of shattered-2.pdf.
shattered_2='
255044462d312e330a25e2e3cfd30a0a0a312030206f626a0a3c3c2f57696474
682032203020522f4865696768742033203020522f547970652034203020522f
537562747970652035203020522f46696c7465722036203020522f436f6c6f72
53706163652037203020522f4c656e6774682038203020522f42697473506572
436f6d706f6e656e7420383e3e0a73747265616d0affd8fffe00245348412d31
20697320646561642121212121852fec092339759c39b1a1c63c4c97e1fffe01
7f46dc93a6b67e013b029aaa1db2560b45ca67d688c7f84b8c4c791fe02b3df6
14f86db1690901c56b45c1530afedfb76038e972722fe7ad728f0e4904e046c2
30570fe9d41398abe12ef5bc942be33542a4802d98b5d70f2a332ec37fac3514
e74ddc0f2cc1a874cd0c78305a21566461309789606bd0bf3f98cda8044629a1
'

collision_message="SHA-1 appears to be part of a collision attack"

test_expect_success 'setup: the SHAttered prefixes collide (by sha1sum)' '
	hex_to_bytes "$(echo $shattered_1 | tr -d " ")" >shattered-1 &&
	hex_to_bytes "$(echo $shattered_2 | tr -d " ")" >shattered-2 &&
	test $(wc -c <shattered-1) = 320 &&
	test $(wc -c <shattered-2) = 320 &&
	! cmp -s shattered-1 shattered-2 &&
	sha1sum <shattered-1 | cut -d" " -f1 >hash-1 &&
	sha1sum <shattered-2 | cut -d" " -f1 >hash-2 &&
	test_cmp hash-1 hash-2 &&
	! test "$(sha256sum <shattered-1)" = "$(sha256sum <shattered-2)"
'

test_expect_success 'the disturbance vectors obey the message expansion' '
	test-tool sha1dc dvs >dvs &&
	test_line_count = 32 dvs &&
	grep "^II(52,0) testt 65 " dvs
'

test_expect_success 'SHAttered blocks 3 and 4 differ by the message difference of II(52,0)' '
	test-tool sha1dc xor-dm "II(52,0)" 3 4 <shattered-1 >other &&
	test_cmp_bin shattered-2 other &&
	test-tool sha1dc xor-dm "II(52,0)" 3 4 <shattered-2 >other &&
	test_cmp_bin shattered-1 other &&
	test-tool sha1dc xor-dm "II(51,0)" 3 4 <shattered-1 >other &&
	! cmp -s shattered-2 other
'

for mode in filter full
do
	if test $mode = full
	then
		opt=--full
	else
		opt=
	fi

	test_expect_success "test-tool sha1 detects both SHAttered prefixes ($mode)" '
		for n in 1 2
		do
			test_must_fail test-tool sha1 $opt <shattered-$n >out 2>err &&
			test_must_be_empty out &&
			echo "fatal: $collision_message: $(cat hash-$n)" >expect &&
			test_cmp expect err || return 1
		done
	'

	test_expect_success "the recompression finds the collision on II(52,0) in block 4 ($mode)" '
		for n in 1 2
		do
			test-tool sha1dc blocks $opt <shattered-$n >blocks &&
			grep -v "^block" blocks >actual &&
			cat hash-$n >expect &&
			test_cmp expect actual &&
			grep "^block .*: collision" blocks >actual &&
			echo "block 4: collision II(52,0)" >expect &&
			test_cmp expect actual || return 1
		done
	'

	test_expect_success "the collision is found inside a longer message ($mode)" '
		pack_binary_file tail 5000 7 &&
		cat shattered-1 tail >longer &&
		test_must_fail test-tool sha1 $opt <longer 2>err &&
		echo "fatal: $collision_message: $(sha1sum <longer | cut -d" " -f1)" >expect &&
		test_cmp expect err
	'

	test_expect_success "shifted by a byte the blocks are harmless ($mode)" '
		{ printf x && cat shattered-1; } >shifted &&
		test-tool sha1 $opt <shifted >actual &&
		sha1sum <shifted | cut -d" " -f1 >expect &&
		test_cmp expect actual
	'

	test_expect_success "random data of many lengths hashes as sha1sum does ($mode)" '
		for len in 0 1 3 55 56 57 63 64 65 119 120 127 128 129 191 192 \
			   1000 1023 1024 1025 4095 4096 4097 65535 65536 65600 200003
		do
			pack_binary_file data $len $len &&
			test-tool sha1 $opt <data >actual &&
			sha1sum <data | cut -d" " -f1 >expect &&
			test_cmp expect actual || return 1
		done
	'
done

test_expect_success 'a large input hashes as sha1sum does, with and without the filter' '
	pack_binary_file big 3000000 11 &&
	sha1sum <big | cut -d" " -f1 >expect &&
	test-tool sha1 <big >actual &&
	test_cmp expect actual &&
	test-tool sha1 --full <big >actual &&
	test_cmp expect actual &&
	GP_TEST_SHA1DC_FULL=1 test-tool sha1 <big >actual &&
	test_cmp expect actual
'

test_expect_success 'the filter agrees with the full check block by block on random data' '
	pack_binary_file data 70000 3 &&
	test-tool sha1dc blocks <data >filtered &&
	test-tool sha1dc blocks --full <data >full &&
	grep "^block .*: filter" filtered &&
	! grep collision filtered &&
	! grep collision full &&
	tail -n 1 filtered >actual &&
	tail -n 1 full >expect &&
	test_cmp expect actual
'

# The filter runs on 16, 8 or 4 blocks at once (AVX-512, AVX2, else);
# GP_TEST_SHA1DC_LANES picks a narrower one. Each must agree with the
# scalar filter on every block (test-tool sha1dc blocks checks), and
# find the attack in every lane.
for lanes in 16 8 4
do
	test_expect_success "the $lanes-lane filter passes the attack in every lane" '
		pack_binary_file data 2000 5 &&
		cat shattered-1 data >msg &&
		for k in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
		do
			GP_TEST_SHA1DC_LANES=$lanes test-tool sha1dc blocks --offset $k <msg >blocks &&
			grep "^block 4: filter II(52,0)\$" blocks &&
			grep "^block 4: collision II(52,0)\$" blocks || return 1
		done &&
		GP_TEST_SHA1DC_LANES=$lanes test_must_fail test-tool sha1 <msg 2>err &&
		grep "^fatal: $collision_message: " err
	'

	test_expect_success "the $lanes-lane filter agrees with the scalar one on random data" '
		pack_binary_file data 100000 9 &&
		GP_TEST_SHA1DC_LANES=$lanes test-tool sha1dc blocks <data >blocks &&
		! grep collision blocks &&
		tail -n 1 blocks >actual &&
		sha1sum <data | cut -d" " -f1 >expect &&
		test_cmp expect actual
	'
done

test_expect_success 'every path sample of every DV passes the filter' '
	test-tool sha1dc sample --samples 24 --seed 12345 >samples &&
	test_line_count = 32 samples &&
	! grep -v " 24 of 24 " samples
'

test_expect_success 'object names of random blobs match git hash-object' '
	git init -q repo &&
	for len in 0 1 54 55 56 63 64 65 1000 4096 100000
	do
		pack_binary_file data $len $((len + 1)) &&
		git hash-object data >expect &&
		(cd repo && test-tool loose write blob <../data) >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success 'index-pack indexes the SHAttered prefixes as blobs like git' '
	git init -q --bare shat.git &&
	b1=$(git -C shat.git hash-object -w --stdin <shattered-1) &&
	b2=$(git -C shat.git hash-object -w --stdin <shattered-2) &&
	printf "%s\n" $b1 $b2 | git -C shat.git pack-objects --window=10 pack >name &&
	cp shat.git/pack-$(cat name).pack shat.pack &&
	gitpack index-pack -o gitpack.idx shat.pack &&
	git index-pack -o git.idx shat.pack &&
	test_cmp_bin git.idx gitpack.idx
'

test_expect_success GITPACK_IS_GITPACK 'index-pack refuses a colliding blob (object hash without header)' '
	GP_TEST_OBJECT_HASH_NO_HEADER=1 test_must_fail gitpack index-pack -o bad.idx shat.pack 2>err &&
	echo "fatal: $collision_message: $(cat hash-1)" >expect &&
	test_cmp expect err &&
	test_path_is_missing bad.idx
'

test_expect_success GITPACK_IS_GITPACK 'index-pack refuses a colliding blob that is a delta' '
	# an offset delta: under the knob a base named by id would not be found
	git init -q --bare delta.git &&
	{ printf x && cat shattered-1; } >base &&
	b1=$(git -C delta.git hash-object -w --stdin <base) &&
	b2=$(git -C delta.git hash-object -w --stdin <shattered-2) &&
	printf "%s\n" $b1 $b2 |
	git -C delta.git pack-objects --delta-base-offset --window=10 pack >name &&
	cp delta.git/pack-$(cat name).pack delta.pack &&
	git verify-pack -v delta.git/pack-$(cat name).idx >verify &&
	grep "^$b2 blob .* 1 $b1\$" verify &&
	gitpack index-pack -o ok.idx delta.pack &&
	GP_TEST_OBJECT_HASH_NO_HEADER=1 test_must_fail gitpack index-pack -o bad.idx delta.pack 2>err &&
	echo "fatal: $collision_message: $(cat hash-2)" >expect &&
	test_cmp expect err &&
	GP_TEST_OBJECT_HASH_NO_HEADER=1 GP_TEST_SHA1DC_FULL=1 \
		test_must_fail gitpack index-pack -o bad.idx delta.pack 2>err &&
	test_cmp expect err
'

test_expect_success 'SHA-256 repositories are not affected' '
	git init -q --bare --object-format=sha256 shat256.git &&
	b1=$(git -C shat256.git hash-object -w --stdin <shattered-1) &&
	b2=$(git -C shat256.git hash-object -w --stdin <shattered-2) &&
	printf "%s\n" $b1 $b2 | git -C shat256.git pack-objects pack >name &&
	cp shat256.git/pack-$(cat name).pack shat256.pack &&
	gitpack index-pack --object-format=sha256 -o gitpack256.idx shat256.pack &&
	git index-pack --object-format=sha256 -o git256.idx shat256.pack &&
	test_cmp_bin git256.idx gitpack256.idx
'

test_done
