#!/bin/sh

test_description='oid-array: sorting, deduplication and lookup

test-tool oid-array against sort -u: small tables (qsort), big ones
(the two-byte bucket sort), duplicates, and ids that all share a prefix
(buckets too big for insertion sort). Every id is found at its line in
the sorted output; ids not in the table are missing.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# random_ids HEXSZ COUNT SEED [PREFIX]: COUNT random lowercase hex ids.
random_ids () {
	awk -v hexsz=$1 -v n=$2 -v seed=$3 -v prefix="$4" 'BEGIN {
		srand(seed)
		for (i = 0; i < n; i++) {
			s = prefix
			while (length(s) < hexsz)
				s = s sprintf("%x", int(rand() * 16))
			print s
		}
	}'
}

for algo in sha1 sha256
do
	hexsz=40
	test $algo = sha1 || hexsz=64

	for n in 0 1 2 100 5000 20000
	do
		test_expect_success "$n random ids sort as sort -u ($algo)" '
			random_ids $hexsz $n $n >ids &&
			# every third id twice
			{ cat ids && awk "NR % 3 == 0" ids; } >in &&
			sort -u in >expect &&
			test-tool oid-array $algo <in >actual &&
			test_cmp expect actual
		'
	done

	test_expect_success "ids sharing a two-byte prefix ($algo)" '
		random_ids $hexsz 3000 1 abcd >in &&
		random_ids $hexsz 3000 2 >>in &&
		random_ids $hexsz 200 3 00 >>in &&
		random_ids $hexsz 200 4 ffff >>in &&
		sort -u in >expect &&
		test-tool oid-array $algo <in >actual &&
		test_cmp expect actual
	'

	test_expect_success "lookups find each id at its position ($algo)" '
		random_ids $hexsz 6000 5 >in &&
		sort -u in >sorted &&
		first=$(sed -n 1p sorted) &&
		mid=$(sed -n 3000p sorted) &&
		last=$(sed -n \$p sorted) &&
		absent=$(random_ids $hexsz 1 99 0000) &&
		test-tool oid-array $algo $first $mid $last $absent <in >out &&
		tail -n 4 out >actual &&
		cat >expect <<-EOF &&
		$first 0
		$mid 2999
		$last $(($(wc -l <sorted) - 1))
		$absent missing
		EOF
		test_cmp expect actual
	'
done

test_expect_success 'an id of the wrong length is refused' '
	echo abc | test_must_fail test-tool oid-array sha1
'

test_done
