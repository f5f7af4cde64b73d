#!/bin/sh

test_description='index-pack writes the same .idx and .rev as git

Packs written by stock git (OFS_DELTA and REF_DELTA, deep delta chains,
large and binary blobs, every object type) are indexed by git and by
gitpack, and the files compared byte for byte, for SHA-1 and SHA-256.'

# The trash directory is not a repository: "outside a repository" tests
# run at its top.
GP_TEST_NO_INIT=1
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-pack.sh"

# of_opt ALGO: the --object-format option needed outside a repository.
of_opt () {
	test "$1" = sha1 || echo "--object-format=$1"
}

for algo in $test_hash_algos
do

test_expect_success "setup: repository and packs ($algo)" '
	pack_repo_create $algo repo-$algo &&
	mkdir w-$algo &&
	cp "$(pack_of repo-$algo)" w-$algo/ofs.pack &&
	refpack=$(pack_ref_delta repo-$algo w-$algo/ref) &&
	mv "$refpack" w-$algo/ref.pack &&
	rm -f "${refpack%.pack}.idx" &&
	git -C repo-$algo rev-list --objects --all |
		git -C repo-$algo pack-objects -q --window=0 ../w-$algo/nodelta >/dev/null &&
	mv w-$algo/nodelta-*.pack w-$algo/nodelta.pack &&
	rm -f w-$algo/nodelta-*.idx &&
	git -C repo-$algo pack-objects -q ../w-$algo/empty </dev/null >/dev/null &&
	mv w-$algo/empty-*.pack w-$algo/empty.pack &&
	rm -f w-$algo/empty-*.idx &&
	chmod u+w w-$algo/*.pack &&

	# the packs really have what they are meant to test
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) -o check.idx ofs.pack >/dev/null &&
		pack_object_types $algo ofs.pack check.idx >types &&
		grep " 6$" types >/dev/null &&
		! grep " 7$" types &&
		git index-pack $(of_opt $algo) -o check.idx ref.pack >/dev/null &&
		pack_object_types $algo ref.pack check.idx >types &&
		grep " 7$" types >/dev/null &&
		! grep " 6$" types &&
		rm -f check.idx check.rev types &&
		test $(wc -c <ofs.pack) -gt 1048576
	)
'

for pack in ofs ref nodelta empty
do
	test_expect_success "index-pack -o: same .idx, .rev and stdout as git ($algo, $pack)" '
		(
			cd w-$algo &&
			git index-pack $(of_opt $algo) -o $pack-git.idx $pack.pack >expect &&
			gitpack index-pack $(of_opt $algo) -o $pack-gp.idx $pack.pack >actual &&
			test_cmp expect actual &&
			test_cmp_bin $pack-git.idx $pack-gp.idx &&

			git index-pack $(of_opt $algo) --rev-index -o $pack-grev.idx $pack.pack >expect &&
			gitpack index-pack $(of_opt $algo) --rev-index -o $pack-prev.idx $pack.pack >actual &&
			test_cmp expect actual &&
			test_cmp_bin $pack-git.idx $pack-prev.idx &&
			test_cmp_bin $pack-grev.rev $pack-prev.rev
		)
	'
done

test_expect_success GITPACK_IS_GITPACK "index-pack writes X.rev for -o X.idx by default ($algo)" '
	(
		cd w-$algo &&
		gitpack index-pack $(of_opt $algo) -o default.idx ofs.pack >/dev/null &&
		test_cmp_bin ofs-grev.rev default.rev
	)
'

test_expect_success "index-pack PACK: writes PACK.idx, prints the hash ($algo)" '
	mkdir -p w-$algo/plain-git w-$algo/plain-gp &&
	cp w-$algo/ofs.pack w-$algo/plain-git/p.pack &&
	cp w-$algo/ofs.pack w-$algo/plain-gp/p.pack &&
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) plain-git/p.pack >expect &&
		gitpack index-pack $(of_opt $algo) plain-gp/p.pack >actual &&
		test_cmp expect actual &&
		test_line_count = 1 actual &&
		test_cmp_bin plain-git/p.idx plain-gp/p.idx
	)
'

test_expect_success "index-pack --index-version=1 ($algo)" '
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) --index-version=1 -o v1-git.idx ofs.pack >expect &&
		gitpack index-pack $(of_opt $algo) --index-version=1 -o v1-gp.idx ofs.pack >actual &&
		test_cmp expect actual &&
		test_cmp_bin v1-git.idx v1-gp.idx
	)
'

test_expect_success "index-pack --index-version=2,OFS: 64-bit offset table ($algo)" '
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) --index-version=2,0x1000 -o large-git.idx ofs.pack >expect &&
		gitpack index-pack $(of_opt $algo) --index-version=2,0x1000 -o large-gp.idx ofs.pack >actual &&
		test_cmp expect actual &&
		test_cmp_bin large-git.idx large-gp.idx &&
		# the option really moved offsets to the large table
		test $(wc -c <large-git.idx) -gt $(wc -c <ofs-git.idx)
	)
'

test_expect_success "index-pack --index-version=2,OFS with --rev-index ($algo)" '
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) --rev-index --index-version=2,0x100 -o lrev-git.idx ref.pack >/dev/null &&
		gitpack index-pack $(of_opt $algo) --rev-index --index-version=2,0x100 -o lrev-gp.idx ref.pack >/dev/null &&
		test_cmp_bin lrev-git.idx lrev-gp.idx &&
		test_cmp_bin lrev-git.rev lrev-gp.rev
	)
'

for threads in 1 4
do
	test_expect_success "index-pack --threads=$threads gives the same files ($algo)" '
		(
			cd w-$algo &&
			gitpack index-pack $(of_opt $algo) --rev-index --threads=$threads \
				-o t$threads.idx ofs.pack >actual &&
			test_cmp_bin ofs-grev.idx t$threads.idx &&
			test_cmp_bin ofs-grev.rev t$threads.rev &&
			gitpack index-pack $(of_opt $algo) --rev-index --threads=$threads \
				-o rt$threads.idx ref.pack >actual &&
			test_cmp_bin ref-grev.idx rt$threads.idx &&
			test_cmp_bin ref-grev.rev rt$threads.rev
		)
	'
done

test_expect_success "index-pack inside a $algo repository needs no --object-format" '
	(
		cd repo-$algo &&
		git index-pack -o ../w-$algo/inrepo-git.idx ../w-$algo/ofs.pack >../w-$algo/expect &&
		gitpack index-pack -o ../w-$algo/inrepo-gp.idx ../w-$algo/ofs.pack >../w-$algo/actual
	) &&
	test_cmp w-$algo/expect w-$algo/actual &&
	test_cmp_bin w-$algo/inrepo-git.idx w-$algo/inrepo-gp.idx &&
	test_cmp_bin w-$algo/ofs-git.idx w-$algo/inrepo-gp.idx
'

test_expect_success "index-pack --stdin stores the pack in the repository ($algo)" '
	for who in git gp
	do
		git init -q --object-format=$algo stdin-$who-$algo &&
		git -C stdin-$who-$algo config pack.writeReverseIndex true || return 1
	done &&
	(cd stdin-git-$algo && git index-pack --stdin <../w-$algo/ofs.pack >../w-$algo/expect) &&
	(cd stdin-gp-$algo && gitpack index-pack --stdin <../w-$algo/ofs.pack >../w-$algo/actual) &&
	test_cmp w-$algo/expect w-$algo/actual &&
	hash=$(git index-pack $(of_opt $algo) -o w-$algo/tmp.idx w-$algo/ofs.pack) &&
	printf "pack\t%s\n" "$hash" >w-$algo/expect &&
	test_cmp w-$algo/expect w-$algo/actual &&
	ls stdin-git-$algo/.git/objects/pack >w-$algo/expect &&
	ls stdin-gp-$algo/.git/objects/pack >w-$algo/actual &&
	test_cmp w-$algo/expect w-$algo/actual &&
	test_write_lines pack-$hash.idx pack-$hash.pack pack-$hash.rev >w-$algo/expect &&
	test_cmp w-$algo/expect w-$algo/actual &&
	for ext in pack idx rev
	do
		test_cmp_bin stdin-git-$algo/.git/objects/pack/pack-$hash.$ext \
			stdin-gp-$algo/.git/objects/pack/pack-$hash.$ext || return 1
	done &&
	git -C stdin-gp-$algo cat-file --batch-all-objects --batch-check >w-$algo/actual &&
	git -C repo-$algo cat-file --batch-all-objects --batch-check >w-$algo/expect &&
	test_cmp w-$algo/expect w-$algo/actual
'

test_expect_success GITPACK_IS_GITPACK "index-pack --stdin writes .rev by default ($algo)" '
	git init -q --object-format=$algo stdin-default-$algo &&
	(cd stdin-default-$algo && gitpack index-pack --stdin <../w-$algo/ref.pack >/dev/null) &&
	ls stdin-default-$algo/.git/objects/pack/*.rev
'

test_expect_success "index-pack --stdin --keep ($algo)" '
	git init -q --object-format=$algo keep-git-$algo &&
	git init -q --object-format=$algo keep-gp-$algo &&
	(cd keep-git-$algo && git index-pack --stdin --keep <../w-$algo/ref.pack >../w-$algo/expect) &&
	(cd keep-gp-$algo && gitpack index-pack --stdin --keep <../w-$algo/ref.pack >../w-$algo/actual) &&
	test_cmp w-$algo/expect w-$algo/actual &&
	grep "^keep	" w-$algo/actual &&
	hash=$(cut -f2 w-$algo/actual) &&
	test_cmp_bin keep-git-$algo/.git/objects/pack/pack-$hash.keep \
		keep-gp-$algo/.git/objects/pack/pack-$hash.keep &&
	test_cmp_bin keep-git-$algo/.git/objects/pack/pack-$hash.idx \
		keep-gp-$algo/.git/objects/pack/pack-$hash.idx
'

test_expect_success "index-pack --stdin --keep=MSG ($algo)" '
	git init -q --object-format=$algo keepmsg-git-$algo &&
	git init -q --object-format=$algo keepmsg-gp-$algo &&
	(cd keepmsg-git-$algo && git index-pack --stdin --keep="held by test" <../w-$algo/nodelta.pack >../w-$algo/expect) &&
	(cd keepmsg-gp-$algo && gitpack index-pack --stdin --keep="held by test" <../w-$algo/nodelta.pack >../w-$algo/actual) &&
	test_cmp w-$algo/expect w-$algo/actual &&
	hash=$(cut -f2 w-$algo/actual) &&
	echo "held by test" >w-$algo/expect &&
	test_cmp w-$algo/expect keepmsg-gp-$algo/.git/objects/pack/pack-$hash.keep
'

test_expect_success "index-pack --verify accepts a good pack ($algo)" '
	(
		cd w-$algo &&
		git index-pack $(of_opt $algo) --verify plain-git/p.pack &&
		gitpack index-pack $(of_opt $algo) --verify plain-gp/p.pack &&
		gitpack index-pack $(of_opt $algo) --verify plain-git/p.pack
	)
'

test_expect_success "index-pack accepts a version 3 pack header like git ($algo)" '
	(
		cd w-$algo &&
		cp nodelta.pack v3.pack &&
		corrupt_byte v3.pack 7 3 &&
		fix_pack_trailer v3.pack $algo &&
		git index-pack $(of_opt $algo) -o v3-git.idx v3.pack >expect &&
		gitpack index-pack $(of_opt $algo) -o v3-gp.idx v3.pack >actual &&
		test_cmp expect actual &&
		test_cmp_bin v3-git.idx v3-gp.idx
	)
'


test_expect_success "a pack holding an object twice: indexed as git does, found by readers, refused by --strict ($algo)" '
	(
		cd w-$algo &&
		rm -rf dup &&
		git init -q --object-format=$algo dup &&
		blob=$(echo duplicated | git -C dup hash-object -w --stdin) &&
		echo $blob | git -C dup pack-objects -q --stdout >one.pack &&
		raw=$(test_oid_rawsz $algo) &&
		size=$(wc -c <one.pack) &&
		# the header with 2 objects, the entry twice, a trailer
		head -c 11 one.pack >dup.pack &&
		printf "\\002" >>dup.pack &&
		tail -c +13 one.pack | head -c $((size - 12 - raw)) >entry &&
		cat entry entry >>dup.pack &&
		head -c $raw one.pack >>dup.pack &&
		fix_pack_trailer dup.pack $algo &&
		git index-pack $(of_opt $algo) -o dup-git.idx dup.pack >expect &&
		gitpack index-pack $(of_opt $algo) -o dup-gp.idx dup.pack >actual &&
		test_cmp expect actual &&
		test_cmp_bin dup-git.idx dup-gp.idx &&
		rm -rf dup/.git/objects/?? &&
		cp dup.pack dup/.git/objects/pack/pack-$(cat actual).pack &&
		cp dup-gp.idx dup/.git/objects/pack/pack-$(cat actual).idx &&
		echo $blob >in &&
		git -C dup cat-file --batch-check <in >expect &&
		gitpack -C dup cat-file --batch-check <in >actual &&
		test_cmp expect actual &&
		grep " blob 11\$" actual &&
		test_must_fail gitpack index-pack $(of_opt $algo) --strict -o dup-strict.idx dup.pack 2>err &&
		grep "^fatal: The same object $blob appears twice in the pack\$" err &&
		test_path_is_missing dup-strict.idx
	)
'

done

test_done
