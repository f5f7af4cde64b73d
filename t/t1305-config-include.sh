#!/bin/sh

test_description='conditional includes: includeIf.<condition>.path

Stock git is the oracle: repositories and config files are set up with
git, and from the same directory, with the same environment,
"test-tool config list" (the config a gitpack command reads) must show
what "git config --list" shows. Each test also checks that the entry
its scenario is about is there (or not), so that it tests what it says.
The conditions are git-config(1)'"'"'s: gitdir: and gitdir/i: (with
"./", "~/", unanchored and trailing-slash patterns, symbolic links),
onbranch:, hasconfig:remote.*.url:, and worktree: (git 2.55, against
GP_TEST_GIT_NEW).'

GP_TEST_NO_INIT=1
. ./test-lib.sh

SQ="'"

# check_list: test-tool lists what git lists, from the current directory.
check_list () {
	git config --list >expect &&
	test-tool config list >actual &&
	test_cmp expect actual
}

# The key a NAME sets: t.NAME, with "-" for "_" (no "_" in config names).
key_of () {
	echo "t.$1" | tr _ -
}

# has NAME / lacks NAME: the last listing holds the key of NAME (or not).
has () {
	grep "^$(key_of "$1")=1\$" actual
}
lacks () {
	! grep "^$(key_of "$1")=" actual
}

# inc NAME...: write $HOME/inc-NAME, which sets the key of NAME to 1.
inc () {
	for name
	do
		printf "[t]\n\t%s = 1\n" "$(key_of "$name" | sed "s/^t.//")" \
			>"$HOME/inc-$name" || return 1
	done
}

# cond CONDITION NAME: an includeIf section bringing in inc-NAME.
cond () {
	inc "$2" &&
	printf "[includeIf \"%s\"]\n\tpath = %s\n" "$1" "$HOME/inc-$2"
}

# both_fail MESSAGE: git and test-tool refuse the config, both saying MESSAGE.
both_fail () {
	test_must_fail git config --list >/dev/null 2>git-err &&
	test_must_fail test-tool config list >/dev/null 2>tool-err &&
	grep "$1" git-err &&
	grep "$1" tool-err
}

for algo in $test_hash_algos
do
	test_expect_success "gitdir: absolute, unanchored, trailing slash, globs ($algo)" '
		git init -q --object-format=$algo plain-$algo &&
		{
			cond "gitdir:$HOME/plain-$algo/.git" exact &&
			cond "gitdir:$HOME/plain-$algo/" abs_slash &&
			cond "gitdir:plain-$algo/" slash &&
			cond "gitdir:plain-$algo" no_star_star &&
			cond "gitdir:plain-$algo/.git" tail &&
			cond "gitdir:**/plain-*/**" stars &&
			cond "gitdir:*" one_star &&
			cond "gitdir:/*/.git" root_star &&
			cond "gitdir:$HOME/other/" other &&
			cond "gitdir:" empty
		} >>plain-$algo/.git/config &&
		(
			cd plain-$algo &&
			check_list &&
			has exact && has abs_slash && has slash && has tail &&
			has stars && has one_star && has empty &&
			lacks no_star_star && lacks root_star && lacks other
		)
	'
done

test_expect_success 'gitdir/i: folds case, gitdir: does not' '
	git init -q MixedCase &&
	{
		cond "gitdir/i:mixedcase/" icase &&
		cond "gitdir/i:$(echo "$HOME" | tr a-z A-Z)/MIXEDCASE/.GIT" icase_abs &&
		cond "gitdir:mixedcase/" exact_case &&
		cond "GitDir:MixedCase/" keyword_case
	} >>MixedCase/.git/config &&
	(
		cd MixedCase &&
		check_list &&
		has icase && has icase_abs && lacks exact_case && lacks keyword_case
	)
'

test_expect_success 'gitdir: from a subdirectory, GIT_DIR, a bare repository, a worktree' '
	git init -q where &&
	mkdir -p where/sub/deeper &&
	git -C where commit -q --allow-empty -m one &&
	git -C where worktree add -q ../where-linked &&
	git init -q --bare where-bare.git &&
	{
		cond "gitdir:where/" where &&
		cond "gitdir:where/.git/worktrees/where-linked" linked &&
		cond "gitdir:$HOME/where/.git/." dot
	} >>where/.git/config &&
	cond "gitdir:where-bare.git/" bare >>where-bare.git/config &&
	cond "gitdir:$HOME/where-bare.git/." bare_dot >>where-bare.git/config &&
	(cd where/sub/deeper && check_list && has where && lacks linked) &&
	(cd where/.git && check_list && has where && has dot) &&
	(cd where-linked && check_list && has linked && has where) &&
	(GIT_DIR=where/.git && export GIT_DIR && check_list && has where) &&
	(GIT_DIR=$HOME/where/.git/ && export GIT_DIR && check_list && has where) &&
	(cd where-bare.git && check_list && has bare && has bare_dot) &&
	(cd where-bare.git/refs && check_list && lacks bare && lacks bare_dot) &&
	(GIT_DIR=where-bare.git && export GIT_DIR && check_list && lacks bare)
'

test_expect_success 'gitdir: ./ is the directory of the including file' '
	git init -q dotted &&
	mkdir -p conf/nested &&
	cond "gitdir:./dotted/.git" home_dot >.gitconfig &&
	cond "gitdir:./" home_dot_all >>.gitconfig &&
	cond "gitdir:./nowhere/" home_dot_no >>.gitconfig &&
	printf "[include]\n\tpath = conf/nested/file\n" >>.gitconfig &&
	cond "gitdir:./../../dotted/" nested_dotdot >conf/nested/file &&
	cond "gitdir:./**" nested_below >>conf/nested/file &&
	(
		cd dotted &&
		check_list &&
		has home_dot && has home_dot_all && lacks home_dot_no &&
		lacks nested_dotdot && lacks nested_below
	) &&
	rm .gitconfig
'

test_expect_success 'gitdir: ~/ is $HOME, its symbolic links resolved' '
	mkdir real-home &&
	ln -s real-home link-home &&
	git init -q real-home/repo &&
	{
		cond "gitdir:~/repo/" tilde &&
		cond "gitdir:~/repo/.git" tilde_exact &&
		cond "gitdir:~/" tilde_all &&
		cond "gitdir:~" tilde_alone
	} >>real-home/repo/.git/config &&
	(
		HOME=$TRASH_DIRECTORY/link-home && export HOME &&
		cd "$HOME/repo" &&
		check_list &&
		has tilde && has tilde_exact && has tilde_all && lacks tilde_alone
	) &&
	(
		HOME=$TRASH_DIRECTORY/link-home && export HOME &&
		cd "$TRASH_DIRECTORY/real-home/repo" &&
		check_list && has tilde
	) &&
	(
		HOME=$TRASH_DIRECTORY/real-home && export HOME &&
		cd "$TRASH_DIRECTORY/link-home/repo" &&
		check_list && has tilde
	) &&
	(
		# A missing last component is kept as written.
		HOME=$TRASH_DIRECTORY/link-home/nothing && export HOME &&
		cd "$TRASH_DIRECTORY/real-home/repo" &&
		check_list && lacks tilde
	)
'

test_expect_success 'gitdir: ~user/ and an unexpandable ~ are kept as written' '
	mkdir -p "tilde/~" "tilde/~nosuchuser" &&
	git init -q "tilde/~/repo" &&
	git init -q "tilde/~nosuchuser/repo" &&
	cond "gitdir:~/repo/" literal_tilde >>"tilde/~/repo/.git/config" &&
	cond "gitdir:~nosuchuser/repo/" literal_user >>"tilde/~nosuchuser/repo/.git/config" &&
	(
		cd "tilde/~/repo" &&
		(unset HOME && check_list) &&
		has literal_tilde &&
		check_list &&
		lacks literal_tilde
	) &&
	(
		cd "tilde/~nosuchuser/repo" &&
		check_list && has literal_user
	)
'

test_expect_success 'gitdir: a ~/ pattern with an empty or impossible $HOME is an error' '
	git init -q home-errors &&
	cond "gitdir:~/x/" never >>home-errors/.git/config &&
	(
		cd home-errors &&
		HOME= && export HOME &&
		both_fail "The empty string is not a valid path"
	) &&
	(
		cd home-errors &&
		HOME=$TRASH_DIRECTORY/no/such/home && export HOME &&
		both_fail "Invalid path"
	)
'

test_expect_success 'gitdir: both the path as reached and the resolved one' '
	mkdir -p sym/real &&
	ln -s real sym/link &&
	git init -q sym/real/repo &&
	mkdir sym/real/repo/sub &&
	git init -q --bare sym/real/bare.git &&
	for config in sym/real/repo/.git/config sym/real/bare.git/config
	do
		{
			cond "gitdir:link/" via_link &&
			cond "gitdir:real/" via_real &&
			cond "gitdir:$HOME/sym/link/repo/.git" link_exact &&
			cond "gitdir:$HOME/sym/link/bare.git/." link_bare_dot
		} >>$config || return 1
	done &&
	(cd sym/link/repo && check_list && has via_link && has via_real && has link_exact) &&
	# git moves to the top of the work tree: $PWD no longer names it.
	(cd sym/link/repo/sub && check_list && lacks via_link && has via_real) &&
	(cd sym/link/bare.git && check_list && has via_link && has link_bare_dot) &&
	(cd sym && GIT_DIR=link/repo/.git && export GIT_DIR && check_list && has link_exact) &&
	(
		cd sym/link/repo/sub &&
		GIT_DIR=../.git && export GIT_DIR &&
		check_list && has via_link && lacks link_exact
	) &&
	(
		cd sym/link/repo/sub &&
		GIT_DIR=../.git GIT_WORK_TREE=.. && export GIT_DIR GIT_WORK_TREE &&
		check_list && lacks via_link
	) &&
	# $PWD names the directory git works from: its spelling is taken.
	(cd sym/real/repo && PWD=$HOME/sym/link/repo && check_list && has via_link)
'

test_expect_success 'gitdir: a ./ prefix is plain text and must start the resolved path' '
	mkdir -p "lit/a*b" lit/aXb lit/conf &&
	git init -q "lit/a*b/repo" &&
	git init -q lit/aXb/repo &&
	cond "gitdir:./repo/" star_dir >"lit/a*b/gitconfig" &&
	ln -s ../aXb lit/conf/link &&
	cond "gitdir:./link/**" through_link >lit/conf/gitconfig &&
	cond "gitdir:$HOME/lit/conf/link/**" absolute_link >>lit/conf/gitconfig &&
	(
		GIT_CONFIG_GLOBAL="$HOME/lit/a*b/gitconfig" && export GIT_CONFIG_GLOBAL &&
		(cd "lit/a*b/repo" && check_list && has star_dir) &&
		(cd lit/aXb/repo && check_list && lacks star_dir)
	) &&
	(
		GIT_CONFIG_GLOBAL=$HOME/lit/conf/gitconfig && export GIT_CONFIG_GLOBAL &&
		cd lit/conf/link/repo &&
		check_list && lacks through_link && has absolute_link
	)
'

for algo in $test_hash_algos
do
	test_expect_success "onbranch: globs, trailing slash, detached HEAD, unborn ($algo)" '
		git init -q -b main --object-format=$algo branchy-$algo &&
		{
			cond "onbranch:main" main &&
			cond "onbranch:?oo-*/**" foo_glob &&
			cond "onbranch:foo-dir/" foo_dir &&
			cond "onbranch:*" any_flat &&
			cond "onbranch:" empty
		} >>branchy-$algo/.git/config &&
		(
			cd branchy-$algo &&
			check_list && has main && has any_flat && lacks empty &&
			git commit -q --allow-empty -m one &&
			git checkout -q -b foo-x/a/b &&
			check_list && has foo_glob && lacks main && lacks any_flat &&
			git checkout -q -b not-foo/a &&
			check_list && lacks foo_glob &&
			git checkout -q -b foo-dir/a/b &&
			check_list && has foo_dir && has foo_glob &&
			git checkout -q --detach &&
			check_list && lacks foo_dir && lacks any_flat &&
			git symbolic-ref HEAD refs/heads/unborn &&
			check_list && has any_flat
		)
	'
done

test_expect_success 'onbranch: through symbolic refs; outside refs/heads/ never' '
	git init -q -b main symbolic &&
	cond "onbranch:main" main >>symbolic/.git/config &&
	cond "onbranch:alias" alias >>symbolic/.git/config &&
	(
		cd symbolic &&
		git commit -q --allow-empty -m one &&
		git symbolic-ref refs/heads/alias refs/heads/main &&
		git symbolic-ref HEAD refs/heads/alias &&
		check_list && has main && lacks alias &&
		git update-ref refs/remotes/origin/main HEAD &&
		git symbolic-ref HEAD refs/remotes/origin/main &&
		check_list && lacks main
	)
'

test_expect_success 'hasconfig:remote.*.url: a URL anywhere in the config' '
	git init -q urls &&
	{
		cond "hasconfig:remote.*.url:https://example.com/**" global_any &&
		cond "hasconfig:remote.*.url:**/baz" dstar_start &&
		cond "hasconfig:remote.*.url:https:/**" dstar_end &&
		cond "hasconfig:remote.*.url:https:/**/baz" dstar_middle &&
		cond "hasconfig:remote.*.url:https://*/bar/baz" star_middle &&
		cond "hasconfig:remote.*.url:https://*/baz" star_no &&
		cond "hasconfig:remote.*.url:https://example.com/" trailing_slash &&
		cond "hasconfig:remote.*.url:from-c" from_c &&
		cond "hasconfig:remote.*.url:from-include" from_include &&
		cond "hasconfig:remote.*.pushurl:**" pushurl
	} >.gitconfig &&
	(cd urls && check_list && lacks global_any && lacks dstar_start) &&
	git -C urls config remote.origin.url https://example.com/bar/baz &&
	git -C urls config remote.origin.pushurl https://example.com/push &&
	printf "[remote \"two\"]\n\turl = from-include\n" >url-file &&
	git -C urls config include.path "$HOME/url-file" &&
	(
		cd urls &&
		check_list &&
		has global_any && has dstar_start && has dstar_end &&
		has dstar_middle && has star_middle && has from_include &&
		lacks star_no && lacks trailing_slash && lacks from_c && lacks pushurl &&
		GIT_CONFIG_PARAMETERS="${SQ}remote.c.url${SQ}=${SQ}from-c${SQ}" &&
		export GIT_CONFIG_PARAMETERS &&
		check_list && has from_c
	) &&
	rm .gitconfig
'

test_expect_success 'hasconfig:remote.*.url: last one wins around the include' '
	git init -q urls-order &&
	printf "[t]\n\ttwo = included\n\tthree = included\n" >inc-order &&
	cat >>urls-order/.git/config <<-EOF &&
	[remote "foo"]
		url = foourl
	[t]
		one = main
		two = main
	[includeIf "hasconfig:remote.*.url:foourl"]
		path = $HOME/inc-order
	[t]
		three = main
	EOF
	(
		cd urls-order &&
		check_list &&
		test-tool config get t.two >value &&
		echo included >expect &&
		test_cmp expect value &&
		test-tool config get t.three >value &&
		echo main >expect &&
		test_cmp expect value
	)
'

test_expect_success 'hasconfig: files an includeIf brings in may not set a URL' '
	printf "[remote \"bar\"]\n\turl = barurl\n" >with-url &&
	printf "[include]\n\tpath = with-url\n" >includes-url &&
	message="remote URLs cannot be configured in file directly or indirectly included by includeIf.hasconfig:remote.\*.url" &&
	git init -q forbid &&
	cp forbid/.git/config forbid-config &&
	# hasconfig whose pattern matches nothing: still read, and refused
	printf "[includeIf \"hasconfig:remote.*.url:nomatch\"]\n\tpath = $HOME/with-url\n" \
		>>forbid/.git/config &&
	(cd forbid && both_fail "$message") &&
	# through a plain include inside it
	cp forbid-config forbid/.git/config &&
	printf "[includeIf \"hasconfig:remote.*.url:nomatch\"]\n\tpath = $HOME/includes-url\n" \
		>>forbid/.git/config &&
	(cd forbid && both_fail "$message") &&
	# any includeIf that holds, once some hasconfig condition is met
	cp forbid-config forbid/.git/config &&
	printf "[includeIf \"gitdir:forbid/\"]\n\tpath = $HOME/with-url\n" >>forbid/.git/config &&
	cond "hasconfig:remote.*.url:**" any_url >>forbid/.git/config &&
	(cd forbid && both_fail "$message") &&
	# ... but not one that does not hold, nor a plain include
	cp forbid-config forbid/.git/config &&
	printf "[includeIf \"gitdir:elsewhere/\"]\n\tpath = $HOME/with-url\n" >>forbid/.git/config &&
	printf "[include]\n\tpath = $HOME/with-url\n" >>forbid/.git/config &&
	cond "hasconfig:remote.*.url:barurl" any_url >>forbid/.git/config &&
	(cd forbid && check_list && has any_url) &&
	# ... nor without any hasconfig condition
	cp forbid-config forbid/.git/config &&
	printf "[includeIf \"gitdir:forbid/\"]\n\tpath = $HOME/with-url\n" >>forbid/.git/config &&
	(cd forbid && check_list && grep "^remote.bar.url=barurl" actual)
'

test_expect_success 'includeIf in an included file; the depth limit' '
	git init -q nested &&
	mkdir -p nested-conf &&
	printf "[include]\n\tpath = $HOME/nested-conf/level1\n" >>nested/.git/config &&
	printf "[includeIf \"gitdir:nested/\"]\n\tpath = level2\n" >nested-conf/level1 &&
	cond "gitdir:./../nested/" level3_dotdot >nested-conf/level2 &&
	cond "onbranch:*" level3_branch >>nested-conf/level2 &&
	(cd nested && check_list && has level3_branch && lacks level3_dotdot) &&
	git init -q looping &&
	printf "[includeIf \"gitdir:looping/\"]\n\tpath = loop\n" >looping/.git/loop &&
	printf "[include]\n\tpath = loop\n" >>looping/.git/config &&
	(cd looping && both_fail "exceeded maximum include depth")
'

test_expect_success 'command-line includeIf: conditions as in files; no ./, no relative path' '
	git init -q cmdline &&
	inc cmd_true cmd_false cmd_dot &&
	(
		cd cmdline &&
		param () {
			printf "${SQ}includeIf.%s.path${SQ}=${SQ}%s${SQ} " "$1" "$2"
		} &&
		GIT_CONFIG_PARAMETERS="$(param gitdir:cmdline/ "$HOME/inc-cmd_true")$(param gitdir:nope/ "$HOME/inc-cmd_false")$(param gitdir:./ "$HOME/inc-cmd_dot")" &&
		export GIT_CONFIG_PARAMETERS &&
		check_list && has cmd_true && lacks cmd_false && lacks cmd_dot &&
		GIT_CONFIG_PARAMETERS="$(param gitdir:nope/ relative)" &&
		check_list &&
		GIT_CONFIG_PARAMETERS="$(param gitdir:cmdline/ relative)" &&
		both_fail "relative config includes must come from files" &&
		unset GIT_CONFIG_PARAMETERS &&
		GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="includeIf.onbranch:**.path" \
			GIT_CONFIG_VALUE_0=$HOME/inc-cmd_true &&
		export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 &&
		check_list && has cmd_true
	)
'

test_expect_success 'unknown conditions are ignored; a bad path only when the condition holds' '
	git init -q unknown &&
	{
		cond "worktree-ish:/" unknown_kw &&
		cond "foo:bar" foo &&
		cond "gitdir" no_colon &&
		cond "" empty &&
		cond "hasconfig:remote.*.url" no_pattern &&
		cond "hasconfig:foo.bar:**" other_key
	} >>unknown/.git/config &&
	printf "[includeif]\n\tpath = $HOME/inc-foo\n" >>unknown/.git/config &&
	printf "[includeIf \"gitdir:nope/\"]\n\tpath\n" >>unknown/.git/config &&
	(
		cd unknown &&
		check_list &&
		lacks unknown_kw && lacks foo && lacks no_colon && lacks empty &&
		lacks no_pattern && lacks other_key
	) &&
	printf "[includeIf \"gitdir:unknown/\"]\n\tpath\n" >>unknown/.git/config &&
	(cd unknown && both_fail "missing value for .include.path.")
'

test_expect_success 'outside a repository: gitdir and onbranch never hold, hasconfig does' '
	mkdir -p outside &&
	{
		cond "gitdir:**" out_gitdir &&
		cond "onbranch:**" out_branch &&
		cond "hasconfig:remote.*.url:global-url" out_hasconfig
	} >.gitconfig &&
	printf "[remote \"g\"]\n\turl = global-url\n" >>.gitconfig &&
	(
		cd outside &&
		check_list &&
		lacks out_gitdir && lacks out_branch && has out_hasconfig
	) &&
	rm .gitconfig
'

test_expect_success 'the format comes from the config files, not what they include' '
	git init -q format &&
	printf "[core]\n\tbare = true\n" >format/.git/bare-include &&
	git -C format config include.path bare-include &&
	(
		cd format &&
		git rev-parse --is-bare-repository >expect &&
		test-tool config repo-info bare >actual &&
		test_cmp expect actual &&
		echo false >expect &&
		test_cmp expect actual &&
		git rev-parse --show-toplevel >expect &&
		test-tool config repo-info worktree >actual &&
		test_cmp expect actual
	) &&
	git init -q --bare format-ext.git &&
	printf "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tunknownext = x\n" \
		>format-ext.git/ext-include &&
	git -C format-ext.git config include.path ext-include &&
	(
		cd format-ext.git &&
		git rev-parse --git-dir &&
		test-tool config repo-info bare
	)
'

test_expect_success GIT_NEW 'worktree: and worktree/i: (git 2.55)' '
	git_new init -q -b main wt-main &&
	git_new -C wt-main commit -q --allow-empty -m one &&
	git_new -C wt-main worktree add -q -b side ../wt-linked &&
	git_new init -q --bare wt-bare.git &&
	mkdir -p wt-real &&
	ln -s wt-real wt-link &&
	git_new init -q wt-link/repo &&
	{
		cond "worktree:$HOME/wt-main" wt_main &&
		cond "worktree:$HOME/wt-linked" wt_linked &&
		cond "worktree/i:$(echo "$HOME" | tr a-z A-Z)/WT-LINKED" wt_icase &&
		cond "worktree:wt-*" wt_any
	} >>wt-main/.git/config &&
	cond "worktree:**" wt_bare >>wt-bare.git/config &&
	cond "worktree:**/wt-real/repo" wt_real >>wt-link/repo/.git/config &&
	cond "worktree:**/wt-link/repo" wt_as_linked >>wt-link/repo/.git/config &&
	check_new () {
		git_new config --list >expect &&
		test-tool config list >actual &&
		test_cmp expect actual
	} &&
	(cd wt-main && check_new && has wt_main && has wt_any && lacks wt_linked) &&
	(cd wt-linked && check_new && has wt_linked && has wt_icase && lacks wt_main) &&
	(cd wt-main/.git && check_new && lacks wt_main) &&
	(cd wt-bare.git && check_new && lacks wt_bare) &&
	(cd wt-link/repo && check_new && has wt_real && lacks wt_as_linked)
'

test_expect_success GIT_NEW 'onbranch: in a reftable repository (git 2.55)' '
	git_new init -q -b main --ref-format=reftable branchy-reftable &&
	cond "onbranch:topic/**" reftable_topic >>branchy-reftable/.git/config &&
	(
		cd branchy-reftable &&
		git_new commit -q --allow-empty -m one &&
		git_new checkout -q -b topic/x &&
		git_new config --list >expect &&
		test-tool config list >actual &&
		test_cmp expect actual &&
		has reftable_topic
	)
'

test_done
