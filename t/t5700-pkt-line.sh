#!/bin/sh

test_description='pkt-line framing and side-band (pkt-line.c) against git

test-tool pkt-line encodes and decodes pkt-lines with pkt-line.h, and
stock git is the other end: what "git upload-pack" advertises and
answers decodes to what "git show-ref" lists, requests we encode are
understood by "git upload-pack --stateless-rpc", its side-band pack
demultiplexes into a pack "git index-pack" accepts, and bad lengths
give the messages git gives (plus the offset of the packet). Then the
bounds of the reader (line length, bytes, packets, empty lines, end of
input) and the side-band writer splitting at 1000 and 65520 bytes.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

# the messages without the " (offset N)" that gitpack adds to git's
strip_offset () {
	sed 's/ (offset [0-9]*)$//' "$@"
}

for algo in $test_hash_algos
do
	test_expect_success "setup ($algo)" '
		rm -rf repo-$algo &&
		git init -q --object-format=$algo repo-$algo &&
		test_commit -C repo-$algo one &&
		test_commit -C repo-$algo --annotate two &&
		git -C repo-$algo branch side one &&
		git -C repo-$algo tag -a -m "tag of a tag" nested two
	'

	test_expect_success "v0 advertisement decodes to show-ref ($algo)" '
		git upload-pack --advertise-refs repo-$algo >adv &&
		test-tool pkt-line unpack <adv >decoded &&
		# the first line carries the capabilities after a NUL
		head -n 1 decoded | tr "\000" "\n" >first &&
		tail -n +2 first | grep "object-format=$algo" &&
		{
			echo "$(git -C repo-$algo rev-parse HEAD) HEAD" &&
			git -C repo-$algo show-ref -d &&
			echo 0000
		} >expect &&
		{ head -n 1 first && tail -n +2 decoded; } >actual &&
		test_cmp expect actual
	'

	test_expect_success "v0 advertisement re-encodes byte for byte ($algo)" '
		test-tool pkt-line unpack <adv | test-tool pkt-line pack >again &&
		test_cmp_bin adv again &&
		test-tool pkt-line unpack --mem <adv >decoded-mem &&
		test_cmp decoded decoded-mem
	'

	test_expect_success "v2 advertisement decodes and re-encodes ($algo)" '
		GIT_PROTOCOL=version=2 git upload-pack --advertise-refs repo-$algo >adv2 &&
		test-tool pkt-line unpack <adv2 >decoded2 &&
		head -n 1 decoded2 >first &&
		echo "version 2" >expect &&
		test_cmp expect first &&
		grep "^object-format=$algo\$" decoded2 &&
		tail -n 1 decoded2 >last &&
		echo 0000 >expect &&
		test_cmp expect last &&
		test-tool pkt-line unpack <adv2 | test-tool pkt-line pack >again &&
		test_cmp_bin adv2 again
	'

	test_expect_success "git answers our v2 ls-refs request ($algo)" '
		test-tool pkt-line pack "command=ls-refs
" "object-format=$algo
" 0001 "ref-prefix refs/
" 0000 >request &&
		GIT_PROTOCOL=version=2 git upload-pack --stateless-rpc repo-$algo \
			<request >response &&
		test-tool pkt-line unpack <response >actual &&
		{ git -C repo-$algo show-ref && echo 0000; } >expect &&
		test_cmp expect actual
	'

	test_expect_success "git side-band pack demultiplexes ($algo)" '
		oid=$(git -C repo-$algo rev-parse HEAD) &&
		for cap in side-band side-band-64k
		do
			test-tool pkt-line pack "want $oid $cap
" 0000 "done
" >request &&
			git upload-pack --stateless-rpc repo-$algo <request >response &&
			head -c 8 response | test-tool pkt-line unpack >nak &&
			echo NAK >expect &&
			test_cmp expect nak &&
			tail -c +9 response >muxed &&
			test-tool pkt-line receive-sideband <muxed >pack 2>progress &&
			rm -rf clone && git init -q --object-format=$algo clone &&
			git -C clone index-pack --stdin <pack >/dev/null &&
			git -C clone cat-file -e $oid || return 1
		done
	'

	test_expect_success "git ERR line is ours byte for byte ($algo)" '
		bogus=$(git -C repo-$algo rev-parse HEAD | tr 0-9a-f 1) &&
		test-tool pkt-line pack "want $bogus
" 0000 "done
" >request &&
		test_must_fail git upload-pack --stateless-rpc repo-$algo \
			<request >response 2>/dev/null &&
		test-tool pkt-line err "upload-pack: not our ref $bogus" >ours &&
		test_cmp_bin ours response
	'

	# Each bad stream after one good want line, so the offset is
	# that line's length; git reads them the same way and dies.
	for bad in 00x1 0003 ffff 0009ab 00 0001000g
	do
		test_expect_success "bad length $bad: git's message, our offset ($algo)" '
			oid=$(git -C repo-$algo rev-parse HEAD) &&
			test-tool pkt-line pack "want $oid
" >good &&
			size=$(wc -c <good) &&
			{ cat good && printf "%s" "$bad"; } >in &&
			test_must_fail git upload-pack --stateless-rpc repo-$algo \
				<in >/dev/null 2>git-err &&
			test_must_fail test-tool pkt-line unpack <in >out 2>err &&
			strip_offset err >err-no-ofs &&
			test_cmp git-err err-no-ofs &&
			case "$bad" in
			0001*) size=$((size + 4)) ;;
			esac &&
			grep " (offset $size)\$" err &&
			test_must_fail test-tool pkt-line unpack --mem <in >out 2>err-mem &&
			test_cmp err err-mem
		'
	done
done

test_expect_success 'flush, delim, response-end and data lines' '
	test-tool pkt-line pack a 0000 "b
" 0001 "" 0002 >actual &&
	printf "0005a00000006b\n000100040002" >expect &&
	test_cmp_bin expect actual &&
	test-tool pkt-line unpack <actual >decoded &&
	test_write_lines a 0000 b 0001 "" 0002 >expect &&
	test_cmp expect decoded
'

test_expect_success 'uppercase hex is read, lowercase written' '
	printf "000Aabcdef" | test-tool pkt-line unpack >out &&
	echo abcdef >expect &&
	test_cmp expect out &&
	test-tool pkt-line pack abcdef >out &&
	printf "000aabcdef" >expect &&
	test_cmp_bin expect out
'

test_expect_success 'LF chomped once, and only with chomping' '
	printf "0007a\n\n0005b" >in &&
	test-tool pkt-line unpack <in >out &&
	printf "a\n\nb\n" >expect &&
	test_cmp_bin expect out &&
	test-tool pkt-line unpack --no-chomp --lengths <in >out &&
	test_write_lines 3 1 >expect &&
	test_cmp expect out
'

test_expect_success 'the longest line is 65516 bytes' '
	printf "%065516d" 0 >max &&
	test-tool pkt-line pack-raw-stdin <max >pkt &&
	head -c 4 pkt >hdr &&
	printf fff0 >expect &&
	test_cmp_bin expect hdr &&
	test-tool pkt-line unpack --lengths <pkt >out &&
	echo 65516 >expect &&
	test_cmp expect out &&
	printf "%065517d" 0 >over &&
	test_must_fail test-tool pkt-line pack-raw-stdin <over >pkt 2>err &&
	test_must_be_empty pkt &&
	echo "fatal: pkt-line of 65517 bytes is longer than 65516" >expect &&
	test_cmp expect err &&
	{ printf fff1 && cat over; } >in &&
	test_must_fail test-tool pkt-line unpack <in 2>err &&
	echo "fatal: protocol error: bad line length 65517 (offset 0)" >expect &&
	test_cmp expect err
'

test_expect_success 'empty lines: read by default, refused on request' '
	printf "00040005x0000" >in &&
	test-tool pkt-line unpack <in >out &&
	test_write_lines "" x 0000 >expect &&
	test_cmp expect out &&
	printf "0005x0004" >in &&
	test_must_fail test-tool pkt-line unpack --no-empty <in 2>err &&
	echo "fatal: protocol error: empty pkt-line 0004 (offset 5)" >expect &&
	test_cmp expect err
'

test_expect_success 'end of input between packets: fine, or an error on request' '
	printf "0005x" >in &&
	test-tool pkt-line unpack <in >out &&
	test_must_fail test-tool pkt-line unpack --eof-is-error <in 2>err &&
	echo "fatal: the remote end hung up unexpectedly (offset 5)" >expect &&
	test_cmp expect err &&
	test_must_fail test-tool pkt-line unpack --eof-is-error --mem <in 2>err &&
	test_cmp expect err
'

test_expect_success 'bounds on packets and bytes' '
	test-tool pkt-line pack one two 0000 >in &&
	test-tool pkt-line unpack --max-packets=3 <in >out &&
	test_write_lines one two 0000 >expect &&
	test_cmp expect out &&
	test_must_fail test-tool pkt-line unpack --max-packets=2 <in >out 2>err &&
	test_write_lines one two >expect &&
	test_cmp expect out &&
	echo "fatal: protocol error: more than 2 packets (offset 14)" >expect &&
	test_cmp expect err &&
	size=$(wc -c <in) &&
	test-tool pkt-line unpack --max-bytes=$size <in >out &&
	test_must_fail test-tool pkt-line unpack --max-bytes=$((size - 1)) <in 2>err &&
	echo "fatal: protocol error: more than $((size - 1)) bytes (offset 14)" >expect &&
	test_cmp expect err &&
	test_must_fail test-tool pkt-line unpack --max-bytes=8 --mem <in 2>err &&
	echo "fatal: protocol error: more than 8 bytes (offset 7)" >expect &&
	test_cmp expect err
'

test_expect_success 'a tee writes the same bytes to both sinks' '
	test-tool pkt-line pack --tee=copy a b 0000 >out &&
	test_cmp_bin out copy &&
	printf "0005a0005b0000" >expect &&
	test_cmp_bin expect out
'

test_expect_success 'read and write failures come back as errors' '
	test_must_fail test-tool pkt-line pack a 2>err >&- &&
	grep "^fatal: write error: " err &&
	test_must_fail test-tool pkt-line unpack 2>err <&- &&
	grep "^fatal: read error (offset 0): " err
'

test_expect_success 'side-band: 995 bytes a packet in 1000-byte mode' '
	printf "%02990d" 0 >data &&
	test-tool pkt-line send-sideband --max=1000 1 <data >muxed &&
	test-tool pkt-line receive-sideband --sizes <muxed >sizes &&
	test_write_lines "1 995" "1 995" "1 995" "1 5" >expect &&
	test_cmp expect sizes &&
	test-tool pkt-line receive-sideband <muxed >back &&
	test_cmp_bin data back &&
	head -c 995 data | test-tool pkt-line send-sideband --max=1000 2 >muxed &&
	test $(wc -c <muxed) = 1000 &&
	head -c 996 data | test-tool pkt-line send-sideband --max=1000 2 >muxed &&
	test-tool pkt-line receive-sideband --sizes <muxed >sizes &&
	test_write_lines "2 995" "2 1" >expect &&
	test_cmp expect sizes
'

test_expect_success 'side-band: 65515 bytes a packet in 64k mode' '
	printf "%0140000d" 0 >data &&
	test-tool pkt-line send-sideband --max=65520 1 <data >muxed &&
	test-tool pkt-line receive-sideband --sizes <muxed >sizes &&
	test_write_lines "1 65515" "1 65515" "1 8970" >expect &&
	test_cmp expect sizes &&
	head -c 4 muxed >hdr &&
	printf fff0 >expect &&
	test_cmp_bin expect hdr &&
	test-tool pkt-line receive-sideband <muxed >back &&
	test_cmp_bin data back
'

test_expect_success 'side-band: a band sink written in small pieces' '
	printf "%03000d" 0 >data &&
	test-tool pkt-line send-sideband --max=1000 --chunk=7 1 <data >muxed &&
	test-tool pkt-line receive-sideband --sizes <muxed | sort -u >sizes &&
	test_write_lines "1 7" "1 4" | sort >expect &&
	test_cmp expect sizes &&
	test-tool pkt-line receive-sideband <muxed >back &&
	test_cmp_bin data back
'

test_expect_success 'side-band: git 1000-byte packets are no bigger than ours' '
	printf "%0300000d" 0 >repo-sha1/big &&
	git -C repo-sha1 add big &&
	git -C repo-sha1 commit -q -m big &&
	oid=$(git -C repo-sha1 rev-parse HEAD) &&
	test-tool pkt-line pack "want $oid side-band
" 0000 "done
" >request &&
	git upload-pack --stateless-rpc repo-sha1 <request >response &&
	tail -c +9 response >muxed &&
	test-tool pkt-line receive-sideband --sizes <muxed >git-sizes &&
	test-tool pkt-line receive-sideband <muxed >pack &&
	test-tool pkt-line send-sideband --max=1000 1 <pack >ours &&
	test-tool pkt-line receive-sideband --sizes <ours >our-sizes &&
	cut -d" " -f2 git-sizes | sort -n | tail -n 1 >git-max &&
	cut -d" " -f2 our-sizes | sort -n | tail -n 1 >our-max &&
	echo 995 >expect &&
	test_cmp expect git-max &&
	test_cmp expect our-max
'

test_expect_success 'side-band: split progress and a primary line' '
	test-tool pkt-line send-split-sideband >muxed &&
	test-tool pkt-line receive-sideband <muxed >out 2>err &&
	echo "primary: regular output" >expect &&
	test_cmp expect out &&
	test_write_lines Foo. Bar. "Hello, world!" >expect &&
	test_cmp expect err
'

test_expect_success 'side-band: keepalive, fatal errors and bad bands' '
	test-tool pkt-line keepalive >out &&
	printf "0005\002" >expect &&
	test_cmp_bin expect out &&
	test-tool pkt-line receive-sideband --sizes <out >sizes &&
	echo "2 0" >expect &&
	test_cmp expect sizes &&
	printf "it broke" | test-tool pkt-line send-sideband 3 >in &&
	test_expect_code 1 test-tool pkt-line receive-sideband <in 2>err &&
	echo "remote error: it broke" >expect &&
	test_cmp expect err &&
	printf "0005a0004" >in &&
	test_must_fail test-tool pkt-line receive-sideband <in 2>err &&
	echo "fatal: protocol error: bad band #97 (offset 0)" >expect &&
	test_cmp expect err &&
	printf "0006\001x0004" >in &&
	test_must_fail test-tool pkt-line receive-sideband <in >out 2>err &&
	echo "fatal: protocol error: missing sideband designator (offset 6)" >expect &&
	test_cmp expect err &&
	echo x | test_must_fail test-tool pkt-line send-sideband 4 2>err &&
	echo "fatal: side-band: no band #4" >expect &&
	test_cmp expect err &&
	echo x | test_must_fail test-tool pkt-line send-sideband --max=5 1 2>err &&
	echo "fatal: side-band: packets of 5 bytes cannot carry data" >expect &&
	test_cmp expect err
'

test_done
