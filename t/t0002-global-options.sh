#!/bin/sh

test_description='gitpack: the global options and environment of git(1)

The options before the command, as git(1) documents them, and the
environment variables that carry them to the commands: "-c name=value"
and a bare "-c name", --config-env=name=envvar, GIT_CONFIG_PARAMETERS
(as stock git sets it for the programs it runs) and
GIT_CONFIG_COUNT/KEY/VALUE, each seen through a setting with a visible
effect (pack.writeReverseIndex: a .rev or none; pack.indexVersion: the
.idx stock git writes); -C, --git-dir, --bare, --exec-path,
--shallow-file (rev-list and pack-objects walk as git walks under the
same shallow file), unknown options and commands, -h of every command,
GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS.
Exit codes and messages are compared with stock git. SHA-1 and SHA-256.'

GP_TEST_NO_INIT=1
. ./test-lib.sh

SQ="'"

# files DIR PREFIX: the names in DIR starting with PREFIX, one a line.
files () {
	(cd "$1" && ls -1 | grep "^$2" || :)
}

# pack_into DIR REPO ARGS...: gitpack ARGS (global options and then
# "pack-objects --revs"), run in REPO, writing DIR/p-*.pack from HEAD;
# lists what it wrote.
pack_into () {
	gp_pi_dir_=$1
	gp_pi_repo_=$2
	shift 2
	rm -rf "$gp_pi_dir_" &&
	mkdir "$gp_pi_dir_" &&
	echo HEAD | (cd "$gp_pi_repo_" && "$@" pack-objects -q --revs "$gp_pi_dir_/p") >/dev/null &&
	files "$gp_pi_dir_" p- | sed "s/^p-[0-9a-f]*//"
}

for algo in $test_hash_algos
do

r=repo-$algo

test_expect_success "setup: a packed repository, a bare clone, a repository with one more blob ($algo)" '
	git init -q -b main --object-format=$algo $r &&
	test_commit -C $r one &&
	mkdir $r/sub &&
	test_commit -C $r two sub/two.t &&
	test_commit -C $r three &&
	git -C $r repack -adq &&
	git clone -q --bare $r bare-$algo.git &&
	git init -q --object-format=$algo alt-$algo &&
	echo "only in the alternate $algo" >blob-$algo &&
	git -C alt-$algo hash-object -w "$TRASH_DIRECTORY/blob-$algo" >alt-$algo.oid &&
	echo "only in the second alternate $algo" >blob2-$algo &&
	git init -q --object-format=$algo alt2-$algo &&
	git -C alt2-$algo hash-object -w "$TRASH_DIRECTORY/blob2-$algo" >alt2-$algo.oid &&
	ls $r/.git/objects/pack/pack-*.pack >pack-$algo &&
	test_line_count = 1 pack-$algo
'

out="$TRASH_DIRECTORY/out-$algo"

test_expect_success GITPACK_IS_GITPACK "-c pack.writeReverseIndex=false: pack-objects writes no .rev; a bare -c name means true ($algo)" '
	pack_into "$out" $r gitpack >actual &&
	test_write_lines .idx .pack .rev >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r gitpack -c pack.writeReverseIndex=false >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual &&
	test_when_finished "git -C $r config --unset pack.writeReverseIndex" &&
	git -C $r config pack.writeReverseIndex false &&
	pack_into "$out" $r gitpack >actual &&
	test_cmp expect actual &&
	pack_into "$out" $r gitpack -c pack.writeReverseIndex >actual &&
	test_write_lines .idx .pack .rev >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r gitpack -c pack.writeReverseIndex=true -c pack.writeReverseIndex=false >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "-c pack.writeReverseIndex=false: index-pack writes no .rev, with -o and with --stdin ($algo)" '
	pack="$TRASH_DIRECTORY/$(cat pack-$algo)" &&
	rm -rf "$out" && mkdir "$out" &&
	gitpack -C $r index-pack -o "$out/a.idx" "$pack" >/dev/null &&
	gitpack -C $r -c pack.writeReverseIndex=false index-pack -o "$out/b.idx" "$pack" >/dev/null &&
	files "$out" "" >actual &&
	test_write_lines a.idx a.rev b.idx >expect &&
	test_cmp expect actual &&
	git init -q --object-format=$algo recv-$algo &&
	gitpack -C recv-$algo -c pack.writeReverseIndex=false index-pack --stdin <"$pack" >/dev/null &&
	files recv-$algo/.git/objects/pack pack- | sed "s/^pack-[0-9a-f]*//" >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual
'

test_expect_success "-c pack.indexVersion=1: index-pack writes the version 1 .idx git writes ($algo)" '
	pack="$TRASH_DIRECTORY/$(cat pack-$algo)" &&
	git -C $r -c pack.indexVersion=1 index-pack -o "$TRASH_DIRECTORY/v1-git-$algo.idx" "$pack" >expect &&
	gitpack -C $r -c pack.indexVersion=1 index-pack -o "$TRASH_DIRECTORY/v1-gp-$algo.idx" "$pack" >actual &&
	test_cmp expect actual &&
	test_cmp_bin v1-git-$algo.idx v1-gp-$algo.idx &&
	gitpack -C $r index-pack -o "$TRASH_DIRECTORY/v2-gp-$algo.idx" "$pack" >actual &&
	! cmp -s v1-git-$algo.idx v2-gp-$algo.idx
'

test_expect_success GITPACK_IS_GITPACK "--config-env=name=envvar and --config-env name=envvar ($algo)" '
	NO=false YES=true &&
	export NO YES &&
	pack_into "$out" $r gitpack --config-env=pack.writeReverseIndex=NO >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r gitpack --config-env pack.writeReverseIndex=NO >actual &&
	test_cmp expect actual &&
	pack_into "$out" $r gitpack --config-env=pack.writeReverseIndex=NO \
		--config-env=pack.writeReverseIndex=YES >actual &&
	test_write_lines .idx .pack .rev >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "settings of stock git -c and --config-env reach gitpack through GIT_CONFIG_PARAMETERS ($algo)" '
	# git runs the alias with its -c settings in GIT_CONFIG_PARAMETERS
	NO=false &&
	export NO &&
	pack_into "$out" $r git -c alias.gp="!gitpack" -c pack.writeReverseIndex=false gp >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r git --config-env=pack.writeReverseIndex=NO -c alias.gp="!gitpack" gp >actual &&
	test_cmp expect actual &&
	test_when_finished "git -C $r config --unset pack.writeReverseIndex" &&
	git -C $r config pack.writeReverseIndex false &&
	pack_into "$out" $r git -c alias.gp="!gitpack" -c pack.writeReverseIndex gp >actual &&
	test_write_lines .idx .pack .rev >expect &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK "GIT_CONFIG_COUNT/KEY/VALUE; GIT_CONFIG_PARAMETERS wins over them, as in git ($algo)" '
	pack_into "$out" $r env GIT_CONFIG_COUNT=2 \
		GIT_CONFIG_KEY_0=pack.writeReverseIndex GIT_CONFIG_VALUE_0=true \
		GIT_CONFIG_KEY_1=pack.writeReverseIndex GIT_CONFIG_VALUE_1=false gitpack >actual &&
	test_write_lines .idx .pack >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r env GIT_CONFIG_COUNT=1 \
		GIT_CONFIG_KEY_0=pack.writeReverseIndex GIT_CONFIG_VALUE_0=true \
		"GIT_CONFIG_PARAMETERS=${SQ}pack.writeReverseIndex${SQ}=${SQ}false${SQ}" gitpack >actual &&
	test_cmp expect actual &&
	# the same order in stock git
	env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=x.y GIT_CONFIG_VALUE_0=count \
		"GIT_CONFIG_PARAMETERS=${SQ}x.y${SQ}=${SQ}params${SQ}" git config x.y >actual &&
	echo params >expect &&
	test_cmp expect actual &&
	pack_into "$out" $r env "GIT_CONFIG_PARAMETERS=${SQ}pack.writeReverseIndex${SQ}" gitpack >actual &&
	test_write_lines .idx .pack .rev >expect &&
	test_cmp expect actual
'

test_expect_success "a bad GIT_CONFIG_COUNT is refused, as git refuses it ($algo)" '
	for env in "GIT_CONFIG_COUNT=x" "GIT_CONFIG_COUNT=1"
	do
		test_expect_code 128 env "$env" git -C $r cat-file -t HEAD 2>expect.err &&
		test_expect_code 128 env "$env" gitpack -C $r cat-file -t HEAD 2>actual.err &&
		grep "^fatal: " expect.err &&
		grep "^fatal: " actual.err || return 1
	done
'

test_expect_success "-C: relative to the last one; an empty one changes nothing ($algo)" '
	git -C $r -C sub cat-file -t HEAD:sub/two.t >expect &&
	gitpack -C $r -C sub cat-file -t HEAD:sub/two.t >actual &&
	test_cmp expect actual &&
	(cd $r && gitpack -C "" cat-file -t HEAD) >actual &&
	echo commit >expect &&
	test_cmp expect actual &&
	test_expect_code 128 gitpack -C no-such-dir cat-file -t HEAD 2>err &&
	grep "^fatal: cannot change to .no-such-dir." err
'

test_expect_success "--git-dir=X and --git-dir X; a directory that is no repository ($algo)" '
	git --git-dir=$r/.git cat-file -p HEAD >expect &&
	gitpack --git-dir=$r/.git cat-file -p HEAD >actual &&
	test_cmp expect actual &&
	gitpack --git-dir $r/.git cat-file -p HEAD >actual &&
	test_cmp expect actual &&
	gitpack --git-dir=bare-$algo.git cat-file -p HEAD >actual &&
	test_cmp expect actual &&
	test_expect_code 128 git --git-dir=$r/sub cat-file -t HEAD 2>expect &&
	test_expect_code 128 gitpack --git-dir=$r/sub cat-file -t HEAD 2>actual &&
	test_cmp expect actual
'

test_expect_success "--bare: the current directory is the repository, or none ($algo)" '
	(cd bare-$algo.git && gitpack --bare cat-file -t HEAD) >actual &&
	echo commit >expect &&
	test_cmp expect actual &&
	# without --bare, sub/ would find the repository above it
	(cd $r/sub && gitpack cat-file -t HEAD) >actual &&
	test_cmp expect actual &&
	(cd $r/sub && test_expect_code 128 git --bare cat-file -t HEAD) 2>expect &&
	(cd $r/sub && test_expect_code 128 gitpack --bare cat-file -t HEAD) 2>actual &&
	test_cmp expect actual
'

test_expect_success "--shallow-file: rev-list --objects walks as git walks ($algo)" '
	git -C $r rev-parse HEAD~1 >shallow-$algo &&
	git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-$algo" rev-list --objects HEAD >expect &&
	gitpack -C $r --shallow-file "$TRASH_DIRECTORY/shallow-$algo" rev-list --objects HEAD >actual &&
	test_cmp expect actual &&
	git -C $r rev-list --objects HEAD >full &&
	test $(wc -l <expect) -lt $(wc -l <full) &&
	if test_have_prereq GITPACK_IS_GITPACK
	then
		# an extension: git 2.39 takes only "--shallow-file <file>"
		gitpack -C $r --shallow-file="$TRASH_DIRECTORY/shallow-$algo" \
			rev-list --objects HEAD >actual &&
		test_cmp expect actual
	fi
'

test_expect_success "--shallow-file: pack-objects --revs packs what git packs under it ($algo)" '
	echo HEAD | git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-$algo" \
		pack-objects -q --revs --stdout >git.pack &&
	git -C $r index-pack -o "$TRASH_DIRECTORY/git.idx" "$TRASH_DIRECTORY/git.pack" >/dev/null &&
	git show-index --object-format=$algo <git.idx | cut -d" " -f2 | sort >expect &&
	echo HEAD | gitpack -C $r --shallow-file "$TRASH_DIRECTORY/shallow-$algo" \
		pack-objects -q --revs --stdout >gp.pack &&
	git -C $r index-pack -o "$TRASH_DIRECTORY/gp.idx" "$TRASH_DIRECTORY/gp.pack" >/dev/null &&
	git show-index --object-format=$algo <gp.idx | cut -d" " -f2 | sort >actual &&
	test_cmp expect actual &&
	git -C $r rev-list --objects HEAD >full &&
	test $(wc -l <actual) -lt $(wc -l <full)
'

test_expect_success "the repository shallow file counts; --shallow-file \"\" sets it aside, as in git ($algo)" '
	git -C $r rev-list --objects HEAD >full &&
	test_when_finished "rm -f $r/.git/shallow" &&
	cp shallow-$algo $r/.git/shallow &&
	git -C $r rev-list --objects HEAD >expect &&
	gitpack -C $r rev-list --objects HEAD >actual &&
	test_cmp expect actual &&
	git -C $r --shallow-file "$TRASH_DIRECTORY/shallow-$algo" rev-list --objects HEAD >shallow.list &&
	test_cmp shallow.list actual &&
	git -C $r --shallow-file "" rev-list --objects HEAD >expect &&
	gitpack -C $r --shallow-file "" rev-list --objects HEAD >actual &&
	test_cmp expect actual &&
	test_cmp full actual
'

test_expect_success "GIT_ALTERNATE_OBJECT_DIRECTORIES: cat-file finds an object only there ($algo)" '
	oid=$(cat alt-$algo.oid) &&
	oid2=$(cat alt2-$algo.oid) &&
	test_must_fail git -C $r cat-file -e $oid &&
	test_must_fail gitpack -C $r cat-file -e $oid &&
	GIT_ALTERNATE_OBJECT_DIRECTORIES="$TRASH_DIRECTORY/alt-$algo/.git/objects:$TRASH_DIRECTORY/alt2-$algo/.git/objects" &&
	export GIT_ALTERNATE_OBJECT_DIRECTORIES &&
	git -C $r cat-file -p $oid >expect &&
	git -C $r cat-file -p $oid2 >>expect &&
	gitpack -C $r cat-file -p $oid >actual &&
	gitpack -C $r cat-file -p $oid2 >>actual &&
	unset GIT_ALTERNATE_OBJECT_DIRECTORIES &&
	test_cmp expect actual &&
	cat blob-$algo blob2-$algo >expect &&
	test_cmp expect actual
'

test_expect_success "GIT_ALTERNATE_OBJECT_DIRECTORIES: relative to the top of the work tree, C-quoted, raw when the quoting is broken, as git ($algo)" '
	oid=$(cat alt-$algo.oid) &&
	oid2=$(cat alt2-$algo.oid) &&
	mkdir -p $r/sub &&
	rm -rf "$r/\"q" &&
	cp -R alt2-$algo "$r/\"q" &&
	for alt in "../alt-$algo/.git/objects" \
		"\"..\\057alt-$algo/.git/objects\":../alt2-$algo/.git/objects" \
		"\"q/.git/objects"
	do
		printf "%s\n%s\n" $oid $oid2 >in &&
		GIT_ALTERNATE_OBJECT_DIRECTORIES="$alt" git -C $r/sub cat-file --batch-check <in >expect &&
		GIT_ALTERNATE_OBJECT_DIRECTORIES="$alt" gitpack -C $r/sub cat-file --batch-check <in >actual &&
		test_cmp expect actual &&
		! grep -v missing actual >/dev/null ||
		grep " blob " actual || return 1
	done &&
	GIT_ALTERNATE_OBJECT_DIRECTORIES="\"q/.git/objects" gitpack -C $r/sub cat-file -e $oid2 &&
	GIT_ALTERNATE_OBJECT_DIRECTORIES="\"..\\057alt-$algo/.git/objects\"" gitpack -C $r/sub cat-file -e $oid
'

done

test_expect_success '--exec-path prints a directory; --exec-path=P and GIT_EXEC_PATH set it, as in git' '
	gitpack --exec-path >path &&
	test_line_count = 1 path &&
	test_path_is_dir "$(cat path)" &&
	git --exec-path=/some/where --exec-path >expect &&
	gitpack --exec-path=/some/where --exec-path >actual &&
	test_cmp expect actual &&
	GIT_EXEC_PATH=/else/where git --exec-path >expect &&
	GIT_EXEC_PATH=/else/where gitpack --exec-path >actual &&
	test_cmp expect actual
'

test_expect_success GITPACK_IS_GITPACK '--exec-path is where gitpack is' '
	test -x "$(gitpack --exec-path)/gitpack"
'

test_expect_success 'an unknown global option: exit 129 and usage, as git' '
	test_expect_code 129 git --no-such-option version 2>expect &&
	test_expect_code 129 gitpack --no-such-option version 2>actual &&
	head -n 1 expect >expect.1 &&
	head -n 1 actual >actual.1 &&
	test_cmp expect.1 actual.1 &&
	grep "^usage: " actual
'

test_expect_success 'an unknown command: exit 1, as git' '
	test_expect_code 1 git no-such-command 2>expect &&
	test_expect_code 1 gitpack no-such-command 2>actual &&
	grep "no-such-command" actual
'

test_expect_success '--config-env errors: the messages and exit codes of git' '
	unset NOPE &&
	for spec in a.b=NOPE a.b= ab
	do
		test_expect_code 128 git --config-env=$spec version 2>expect &&
		test_expect_code 128 gitpack --config-env=$spec version 2>actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success '-c errors: an empty name, exit 128 as in git' '
	git init -q empty-key &&
	test_commit -C empty-key one &&
	for spec in =x ""
	do
		test_expect_code 128 git -C empty-key -c "$spec" cat-file -t HEAD 2>err &&
		grep "^fatal: " err &&
		test_expect_code 128 gitpack -C empty-key -c "$spec" cat-file -t HEAD 2>err &&
		grep "^fatal: " err || return 1
	done
'

test_expect_success 'every command: -h prints usage on stdout, exit 0 (as Git 2.55), inside a repository and outside' '
	git init -q inside &&
	mkdir outside &&
	for cmd in cat-file commit-graph count-objects for-each-repo gc index-pack \
		maintenance multi-pack-index pack-objects pack-objects-hook pack-refs \
		prune-packed repack rev-list serve show-index upload-pack verify-pack
	do
		for dir in inside outside
		do
			gitpack -C $dir $cmd -h >out 2>err &&
			grep "^usage: [a-z]* $cmd" out &&
			test_must_be_empty err || return 1
		done || return 1
	done
'

test_expect_success 'a bad option is a usage error: usage on stderr, exit 129' '
	for cmd in cat-file count-objects gc index-pack multi-pack-index pack-objects \
		pack-refs prune-packed repack rev-list show-index verify-pack
	do
		test_expect_code 129 gitpack -C inside $cmd --no-such-option >out 2>err </dev/null &&
		grep "usage: [a-z]* $cmd" err &&
		test_must_be_empty out || return 1
	done
'

test_expect_success 'GIT_TRACE2_CONFIG_PARAMS and trace2.configParams: def_param events as git writes them' '
	git init -q tp &&
	git -C tp config gc.autoPackLimit 7 &&
	git -C tp config core.bigFileThreshold 9m &&
	for who in git gitpack
	do
		rm -f tp.$who.ev &&
		GIT_TRACE2_EVENT="$(pwd)/tp.$who.ev" GIT_TRACE2_CONFIG_PARAMS="gc.autoPackLimit,core.big*" \
			$who -C tp -c gc.autoPackLimit=1 count-objects >/dev/null &&
		grep "\"def_param\"" tp.$who.ev | sed "s/.*\"scope\"/\"scope\"/" >tp.$who.params || return 1
	done &&
	test_line_count = 3 tp.gitpack.params &&
	test_cmp tp.git.params tp.gitpack.params &&
	rm -f tp.ev &&
	GIT_TRACE2_EVENT="$(pwd)/tp.ev" gitpack -C tp -c trace2.configParams=core.bigfilethreshold count-objects >/dev/null &&
	grep "\"param\":\"core.bigfilethreshold\",\"value\":\"9m\"" tp.ev
'

test_expect_success 'GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1: an abbreviated option is fatal, as in git' '
	git init -q abbrev &&
	test_commit -C abbrev one &&
	echo HEAD | git -C abbrev pack-objects --revs --stdo >expect.pack &&
	echo HEAD | gitpack -C abbrev pack-objects --revs --stdo >actual.pack &&
	test_cmp_bin expect.pack actual.pack &&
	echo HEAD | test_expect_code 128 env GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1 \
		git -C abbrev pack-objects --revs --stdo >out 2>expect &&
	test_must_be_empty out &&
	echo HEAD | test_expect_code 128 env GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1 \
		gitpack -C abbrev pack-objects --revs --stdo >out 2>actual &&
	test_must_be_empty out &&
	grep "disallowed abbreviated or ambiguous option .stdo." actual &&
	test_cmp expect actual &&
	echo HEAD | env GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS=1 \
		gitpack -C abbrev pack-objects --revs --stdout >actual.pack &&
	test_cmp_bin expect.pack actual.pack
'

test_done
