#!/bin/sh

test_description='hex digits eight at a time

util.h decodes, checks and encodes hex a machine word at a time (packed-refs
ids, the v0 advertisement). test-tool hex compares each routine with a
byte-at-a-time model over every byte value at every position of SHA-1 and
SHA-256 ids, lengths that leave a tail, and random bytes to encode.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

test_expect_success 'hex_to_bytes, hex_scan and bytes_to_hex agree with the model' '
	test-tool hex >out &&
	grep "^ok [0-9]" out
'

test_expect_success 'capital and non-digit ids in packed-refs are told apart' '
	git init -q repo &&
	test_commit -C repo one &&
	oid=$(git -C repo rev-parse HEAD) &&
	upper=$(echo $oid | tr a-f A-F) &&
	printf "# pack-refs with: peeled fully-peeled sorted \n%s refs/heads/up\n" "$upper" >repo/.git/packed-refs &&
	gitpack -C repo upload-pack --advertise-refs . >adv &&
	grep "$oid refs/heads/up" adv &&
	bad=$(echo $oid | sed "s/^./g/") &&
	printf "# pack-refs with: peeled fully-peeled sorted \n%s refs/heads/up\n" "$bad" >repo/.git/packed-refs &&
	test_must_fail gitpack -C repo upload-pack --advertise-refs . 2>err &&
	grep "packed-refs" err
'

test_done
