#!/bin/sh

test_description='object-filter: --filter=<filter-spec> parsing

test-tool object-filter against what stock git does with the same
specs: every spec git refuses is refused with git'"'"'s message (git
rev-list --filter), the combine: spec of several --filter options is the
one git records for a partial clone (remote.<name>.partialclonefilter),
and the parsed numbers, names and sub-filters are what the spec says.'

. ./test-lib.sh

test_expect_success 'setup' '
	test_commit_file () { echo "$1" >"$1" && git add "$1" && git commit -qm "$1"; } &&
	test_commit_file one &&
	test_commit_file two
'

# git_filter_error SPEC: what stock git says about SPEC, or nothing.
git_filter_error () {
	git rev-list --objects --filter="$1" HEAD 2>&1 >/dev/null || :
}

while IFS= read -r spec
do
	test_expect_success "refused as git refuses it: '$spec'" '
		git_filter_error "$spec" >expect &&
		test -s expect &&
		test_must_fail test-tool object-filter "$spec" 2>actual &&
		test_cmp expect actual
	'
done <<\EOF
unknown
BLOB:NONE
blob:none2
blob:limit
blob:limit=
blob:limit=-1
blob:limit=1kb
blob:limit=1t
blob:limit=1 
blob:limit=+
blob:limit=0x
blob:limit=08
blob:limit=99999999999999999999
blob:limit=18014398509481984k
tree
tree:
tree:-1
tree:1x
tree:1 
tree:99999999999999999999
sparse:oid
sparse:path
sparse:path=x
object:type
object:type=
object:type=blobx
object:type=commit 
combine:
combine:blob:none+tree:1%zz
combine:blob:limit=1%25
combine:blob:none%2btree:1
combine:bad+blob:none~
combine:blob:none~+bad
combine:blob:none+sparse:oid=a b
combine:blob:none+sparse:oid=a	b
combine:blob:none+sparse:oid=a~b
combine:blob:none+sparse:oid=a`b
combine:blob:none+sparse:oid=a!b
combine:blob:none+sparse:oid=a@b
combine:blob:none+sparse:oid=a#b
combine:blob:none+sparse:oid=a$b
combine:blob:none+sparse:oid=a^b
combine:blob:none+sparse:oid=a&b
combine:blob:none+sparse:oid=a*b
combine:blob:none+sparse:oid=a(b
combine:blob:none+sparse:oid=a)b
combine:blob:none+sparse:oid=a[b
combine:blob:none+sparse:oid=a]b
combine:blob:none+sparse:oid=a{b
combine:blob:none+sparse:oid=a}b
combine:blob:none+sparse:oid=a\b
combine:blob:none+sparse:oid=a;b
combine:blob:none+sparse:oid=a'b
combine:blob:none+sparse:oid=a"b
combine:blob:none+sparse:oid=a,b
combine:blob:none+sparse:oid=a<b
combine:blob:none+sparse:oid=a>b
combine:blob:none+sparse:oid=a?b
combine:sparse:path=x
EOF

while IFS= read -r spec
do
	test_expect_success "accepted as git accepts it: '$spec'" '
		git_filter_error "$spec" >expect &&
		test_must_be_empty expect &&
		test-tool object-filter "$spec" >out &&
		echo "spec $spec" >expect &&
		head -n 1 out >actual &&
		test_cmp expect actual
	'
done <<\EOF
blob:none
blob:limit=0
blob:limit=1k
blob:limit=1K
blob:limit=0x10
blob:limit= 1
blob:limit=+1
blob:limit=1g
blob:limit=18446744073709551615
tree:0
tree:1k
tree:010
object:type=blob
object:type=tree
object:type=commit
object:type=tag
combine:blob:none
combine:blob:none+tree:1
combine:blob:none+tree%3a1
combine:combine:blob:none+tree:1
combine:combine%3ablob:none
combine:blob:none+object:type=tag
EOF

# Empty sub-specs: git 2.39 refuses them, newer git skips them.
for spec in "combine:blob:none+" "combine:+blob:none" "combine:+" "combine:++" \
	"combine:combine:+" "combine:combine:+blob:none"
do
	test_expect_success GIT_NEW "as the newer git does: '$spec'" '
		git_new rev-list --objects --filter="$spec" HEAD 2>expect >/dev/null ||
		test -s expect &&
		if test -s expect
		then
			test_must_fail test-tool object-filter "$spec" 2>actual &&
			test_cmp expect actual
		else
			test-tool object-filter "$spec" >out &&
			echo "spec $spec" >expect &&
			head -n 1 out >actual &&
			test_cmp expect actual
		fi
	'
done

test_expect_success 'what the specs say' '
	test-tool object-filter blob:limit=1k >out &&
	test_write_lines "spec blob:limit=1k" "blob:limit 1024" walkless >expect &&
	test_cmp expect out &&
	test-tool object-filter blob:limit=0x10m >out &&
	grep "^blob:limit 16777216$" out &&
	test-tool object-filter blob:limit=017 >out &&
	grep "^blob:limit 15$" out &&
	test-tool object-filter blob:limit=2G >out &&
	grep "^blob:limit 2147483648$" out &&
	test-tool object-filter tree:3 >out &&
	test_write_lines "spec tree:3" "tree 3" walk >expect &&
	test_cmp expect out &&
	test-tool object-filter sparse:oid=main:.sparse >out &&
	test_write_lines "spec sparse:oid=main:.sparse" "sparse:oid main:.sparse" walk >expect &&
	test_cmp expect out &&
	test-tool object-filter "combine:object:type=tag+combine%3atree:3%2bblob:limit=0x10+sparse:oid=a%20b%7e%41%2B%2+sparse:oid=1%zz%00" >out &&
	cat >expect <<-\EOF &&
	combine 4
	  object:type tag
	  combine 2
	    tree 3
	    blob:limit 16
	  sparse:oid a b~A+%2
	  sparse:oid 1%zz%00
	EOF
	sed 1d out | sed \$d >actual &&
	test_cmp expect actual
'

test_expect_success 'several specs combine as git records them' '
	git init -q --bare srv.git &&
	git push -q srv.git HEAD:refs/heads/main &&
	while read a b c d
	do
		rm -rf clone &&
		git -c uploadpack.allowfilter=1 clone -q --no-local \
			${a:+"--filter=$a"} ${b:+"--filter=$b"} ${c:+"--filter=$c"} ${d:+"--filter=$d"} \
			srv.git clone 2>/dev/null &&
		git -C clone config remote.origin.partialclonefilter >expect &&
		test-tool object-filter $a $b $c $d >out &&
		sed -n "s/^spec //p" out >actual &&
		test_cmp expect actual || return 1
	done <<-\EOF
	blob:none sparse:oid=HEAD:f blob:limit=5 combine:tree:3+object:type=tag
	sparse:oid=a~%+x blob:none
	combine:blob:none+tree:2 tree:1 blob:limit=1k
	EOF
'

test_expect_success 'GIT_TRACE: each spec added to a combine:, as and where git traces it' '
	GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/git.trace" git rev-list --objects \
		--filter=blob:none "--filter=sparse:oid=a~b c" --filter=tree:1 HEAD \
		>/dev/null 2>&1 || : &&
	grep "^Add to combine" git.trace >expect &&
	test_line_count = 3 expect &&
	GIT_TRACE_BARE=1 GIT_TRACE="$TRASH_DIRECTORY/gp.trace" \
		test-tool object-filter blob:none "sparse:oid=a~b c" tree:1 >/dev/null &&
	test_cmp expect gp.trace &&
	for target in 1 true TRUE 2
	do
		GIT_TRACE_BARE=1 GIT_TRACE=$target test-tool object-filter blob:none tree:1 \
			>out 2>err &&
		test_line_count = 2 err &&
		grep "^Add to combine filter-spec: tree:1$" err || return 1
	done &&
	GIT_TRACE_BARE=1 GIT_TRACE=7 test-tool object-filter blob:none tree:1 7>fd7 >out 2>err &&
	test_must_be_empty err &&
	test_line_count = 2 fd7 &&
	for target in 0 false "" relative
	do
		GIT_TRACE=$target test-tool object-filter blob:none tree:1 >out 2>err &&
		test_must_be_empty err &&
		! test -e relative || return 1
	done &&
	GIT_TRACE="$TRASH_DIRECTORY/timed.trace" test-tool object-filter blob:none tree:1 >out &&
	grep "^[0-9][0-9]:[0-9][0-9]:[0-9][0-9][.][0-9]* object-filter[.]c:[0-9]* *Add to combine filter-spec: tree:1$" \
		timed.trace
'

test_expect_success 'the walkless predicate' '
	cat >in <<-\EOF &&
	blob 0
	blob 1023
	blob 1024
	tree 5000
	commit 0
	tag 7
	EOF
	test-tool object-filter blob:limit=1k <in >out &&
	test_write_lines "blob 0 kept" "blob 1023 kept" "blob 1024 omitted" \
		"tree 5000 kept" "commit 0 kept" "tag 7 kept" >expect &&
	tail -n 6 out >actual &&
	test_cmp expect actual &&
	test-tool object-filter blob:none <in >out &&
	test $(grep -c omitted out) = 3 &&
	test-tool object-filter object:type=tag <in >out &&
	test_write_lines "tag 7 kept" >expect &&
	grep kept out >actual &&
	test_cmp expect actual &&
	test-tool object-filter object:type=blob blob:limit=1000 <in >out &&
	test_write_lines "blob 0 kept" >expect &&
	grep kept out >actual &&
	test_cmp expect actual &&
	test-tool object-filter combine:+ <in >out &&
	! grep omitted out &&
	test-tool object-filter blob:none tree:1 >out &&
	tail -n 1 out >actual &&
	echo walk >expect &&
	test_cmp expect actual
'

test_done
