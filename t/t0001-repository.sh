#!/bin/sh

test_description='repository discovery and format checks

test-tool config repo-info must find the same git directory, common
directory, object directory, bareness, object format and worktree as
git rev-parse does, from every kind of starting point.'

. ./test-lib.sh

# check_repo_info: from the current directory, test-tool and git agree
# on the repository. A missing worktree prints as an empty line.
check_repo_info () {
	{
		git rev-parse --absolute-git-dir &&
		(cd "$(git rev-parse --git-common-dir)" && pwd -P) &&
		(cd "$(git rev-parse --git-path objects)" && pwd -P) &&
		git rev-parse --is-bare-repository &&
		git rev-parse --show-object-format &&
		{ git rev-parse --show-toplevel 2>/dev/null || echo; }
	} >expect &&
	for field in gitdir commondir objdir bare object-format worktree
	do
		test-tool config repo-info $field || return 1
	done >actual &&
	test_cmp expect actual
}

# in_dir DIR: check_repo_info from DIR, in a subshell.
in_dir () {
	(cd "$1" && check_repo_info)
}

# refused DIR MESSAGE: git and test-tool both refuse the repository
# found from DIR, and test-tool says MESSAGE (a grep pattern).
refused () {
	! (cd "$1" && git rev-parse --show-object-format >/dev/null 2>&1) &&
	(cd "$1" && test_must_fail test-tool config repo-info) 2>err &&
	grep "$2" err
}

for algo in $test_hash_algos
do
	test_expect_success "non-bare repository ($algo)" '
		git init -q --object-format=$algo nb-$algo &&
		mkdir -p nb-$algo/sub/dir &&
		in_dir nb-$algo &&
		in_dir nb-$algo/sub &&
		in_dir nb-$algo/sub/dir
	'

	test_expect_success "inside the .git directory ($algo)" '
		in_dir nb-$algo/.git &&
		in_dir nb-$algo/.git/objects &&
		in_dir nb-$algo/.git/refs/heads
	'

	test_expect_success "bare repository ($algo)" '
		git init -q --bare --object-format=$algo bare-$algo.git &&
		in_dir bare-$algo.git &&
		in_dir bare-$algo.git/refs &&
		in_dir bare-$algo.git/objects/info
	'

	test_expect_success "GIT_DIR ($algo)" '
		(
			GIT_DIR=nb-$algo/.git &&
			export GIT_DIR &&
			check_repo_info
		) &&
		(
			cd nb-$algo/sub &&
			GIT_DIR=../.git &&
			export GIT_DIR &&
			check_repo_info
		) &&
		(
			GIT_DIR=$(pwd)/bare-$algo.git &&
			export GIT_DIR &&
			check_repo_info
		)
	'
done

test_expect_success 'the test repository itself' '
	check_repo_info &&
	test-tool config repo-info >actual &&
	cat >expect <<-EOF &&
	gitdir=$TRASH_DIRECTORY/.git
	commondir=$TRASH_DIRECTORY/.git
	objdir=$TRASH_DIRECTORY/.git/objects
	bare=false
	object-format=${GP_TEST_DEFAULT_HASH:-sha1}
	worktree=$TRASH_DIRECTORY
	ref-format=files
	EOF
	test_cmp expect actual
'

test_expect_success 'core.bare decides for a .git directory and a bare one' '
	git init -q flip &&
	git -C flip config core.bare true &&
	in_dir flip &&
	mkdir flip/sub &&
	in_dir flip/sub &&
	git -C flip/.git config core.bare false &&
	git init -q --bare unset.git &&
	git -C unset.git config --unset core.bare &&
	in_dir unset.git &&
	(
		GIT_DIR=unset.git &&
		export GIT_DIR &&
		check_repo_info
	) &&
	git -C unset.git config core.bare false &&
	in_dir unset.git
'

test_expect_success 'gitfile from git init --separate-git-dir' '
	git init -q --separate-git-dir="$(pwd)/separate.git" sepwt &&
	test_path_is_file sepwt/.git &&
	mkdir sepwt/sub &&
	in_dir sepwt &&
	in_dir sepwt/sub &&
	(
		GIT_DIR=sepwt/.git &&
		export GIT_DIR &&
		check_repo_info
	)
'

test_expect_success 'gitfile with a relative path' '
	git init -q --bare relative.git &&
	mkdir relwt &&
	printf "gitdir: ../relative.git\n" >relwt/.git &&
	git -C relative.git config core.bare false &&
	in_dir relwt &&
	printf "gitdir: ../relative.git" >relwt/.git &&
	in_dir relwt &&
	printf "gitdir: ../relative.git\r\n" >relwt/.git &&
	in_dir relwt
'

test_expect_success 'linked worktree from git worktree add' '
	test_commit -C nb-sha1 one &&
	git -C nb-sha1 worktree add -q ../linked &&
	mkdir linked/sub &&
	in_dir linked &&
	in_dir linked/sub &&
	(cd linked && test-tool config repo-info commondir) >actual &&
	echo "$TRASH_DIRECTORY/nb-sha1/.git" >expect &&
	test_cmp expect actual
'

test_expect_success 'linked worktree: config.worktree with extensions.worktreeConfig' '
	git -C nb-sha1 config core.repositoryformatversion 1 &&
	git -C nb-sha1 config extensions.worktreeConfig true &&
	git -C nb-sha1 config shared.key main &&
	git -C linked config --worktree shared.key linked &&
	(cd linked && git config --get shared.key) >expect &&
	(cd linked && test-tool config get shared.key) >actual &&
	test_cmp expect actual &&
	(cd nb-sha1 && git config --get shared.key) >expect &&
	(cd nb-sha1 && test-tool config get shared.key) >actual &&
	test_cmp expect actual &&
	in_dir linked
'

test_expect_success 'GIT_WORK_TREE and core.worktree' '
	git init -q wtconf &&
	mkdir -p elsewhere/deep wtconf/sub &&
	(
		GIT_DIR=$(pwd)/wtconf/.git &&
		GIT_WORK_TREE=$(pwd)/elsewhere &&
		export GIT_DIR GIT_WORK_TREE &&
		cd elsewhere/deep &&
		check_repo_info
	) &&
	git -C wtconf config core.worktree ../../elsewhere &&
	in_dir wtconf/sub &&
	(
		GIT_DIR=wtconf/.git &&
		export GIT_DIR &&
		check_repo_info
	)
'

test_expect_success 'GIT_OBJECT_DIRECTORY' '
	git init -q --bare objects-elsewhere.git &&
	(
		GIT_OBJECT_DIRECTORY=$(pwd)/objects-elsewhere.git/objects &&
		export GIT_OBJECT_DIRECTORY &&
		in_dir nb-sha1 &&
		(cd nb-sha1 && test-tool config repo-info objdir) >actual &&
		echo "$GIT_OBJECT_DIRECTORY" >expect &&
		test_cmp expect actual
	)
'

test_expect_success 'the repository config is read from a subdirectory' '
	git -C nb-sha1 config test.value "from nb" &&
	(cd nb-sha1/sub/dir && test-tool config get test.value) >actual &&
	echo "from nb" >expect &&
	test_cmp expect actual
'

test_expect_success 'not a repository (GIT_CEILING_DIRECTORIES)' '
	mkdir -p outside/a/b &&
	(
		GIT_CEILING_DIRECTORIES=$TRASH_DIRECTORY &&
		export GIT_CEILING_DIRECTORIES &&
		cd outside/a/b &&
		! git rev-parse --git-dir 2>/dev/null &&
		test_must_fail test-tool config repo-info 2>err &&
		grep "not a git repository (or any of the parent directories)" err
	)
'

test_expect_success 'a ceiling stops the walk before the ceiling itself' '
	(
		GIT_CEILING_DIRECTORIES=$TRASH_DIRECTORY/nb-sha1 &&
		export GIT_CEILING_DIRECTORIES &&
		cd nb-sha1/sub &&
		! git rev-parse --git-dir 2>/dev/null &&
		test_must_fail test-tool config repo-info &&
		cd .. &&
		check_repo_info
	)
'

test_expect_success 'GIT_DIR that is not a repository' '
	(
		GIT_DIR=$(pwd)/outside &&
		export GIT_DIR &&
		! git rev-parse --git-dir 2>/dev/null &&
		test_must_fail test-tool config repo-info 2>err &&
		grep "not a git repository" err
	)
'

test_expect_success 'bad gitfiles are refused' '
	mkdir -p badfile &&
	printf "garbage\n" >badfile/.git &&
	refused badfile "invalid gitfile format" &&
	printf "gitdir:../relative.git\n" >badfile/.git &&
	refused badfile "invalid gitfile format" &&
	printf "gitdir: nowhere\n" >badfile/.git &&
	refused badfile "not a git repository: .*nowhere" &&
	printf "gitdir: ../relative.git \n" >badfile/.git &&
	refused badfile "not a git repository" &&
	printf "gitdir: \n" >badfile/.git &&
	refused badfile "gitfile"
'

test_expect_success 'an empty .git directory is skipped' '
	mkdir -p nb-sha1/hollow/.git &&
	in_dir nb-sha1/hollow
'

# fmt_repo NAME: a fresh repository whose config the test then edits
# with "git config -f" (git refuses to edit a repository it cannot read).
fmt_repo () {
	rm -rf "$1" &&
	git init -q "$1"
}

test_expect_success 'repositoryformatversion 1 is accepted, 2 refused' '
	fmt_repo fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 1 &&
	in_dir fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 2 &&
	refused fmt "Expected git repo version <= 1, found 2" &&
	git config -f fmt/.git/config core.repositoryformatversion bogus &&
	refused fmt "bad numeric config value"
'

test_expect_success 'unknown extensions: refused under version 1, ignored under 0' '
	fmt_repo fmt &&
	git config -f fmt/.git/config extensions.frobnicate true &&
	in_dir fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 1 &&
	refused fmt "unknown repository extension found" &&
	grep "^	frobnicate$" err &&
	git config -f fmt/.git/config extensions.another 1 &&
	refused fmt "unknown repository extensions found"
'

test_expect_success 'the extensions git 2.39 knows are accepted under version 1' '
	fmt_repo fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 1 &&
	git config -f fmt/.git/config extensions.noop true &&
	git config -f fmt/.git/config extensions.noop-v1 true &&
	git config -f fmt/.git/config extensions.preciousObjects true &&
	git config -f fmt/.git/config extensions.partialClone origin &&
	git config -f fmt/.git/config extensions.worktreeConfig true &&
	git config -f fmt/.git/config extensions.objectFormat sha1 &&
	in_dir fmt
'

test_expect_success 'version-1-only extensions are refused under version 0' '
	fmt_repo fmt &&
	git config -f fmt/.git/config extensions.preciousObjects true &&
	in_dir fmt &&
	git config -f fmt/.git/config extensions.objectFormat sha256 &&
	refused fmt "repo version is 0, but v1-only extension found" &&
	grep "^	objectformat$" err
'

test_expect_success 'extensions.refStorage: files or reftable, other values refused' '
	fmt_repo fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 1 &&
	git config -f fmt/.git/config extensions.refStorage files &&
	(cd fmt && test-tool config repo-info ref-format) >actual &&
	echo files >expect &&
	test_cmp expect actual &&
	git config -f fmt/.git/config extensions.refStorage reftable &&
	(cd fmt && test-tool config repo-info ref-format) >actual &&
	echo reftable >expect &&
	test_cmp expect actual &&
	git config -f fmt/.git/config extensions.refStorage foo &&
	refused fmt "invalid value for .extensions.refstorage.: .foo." &&
	git config -f fmt/.git/config extensions.refStorage reftable://elsewhere &&
	refused fmt "refs stored outside the repository" &&
	git config -f fmt/.git/config extensions.refStorage reftable &&
	git config -f fmt/.git/config core.repositoryformatversion 0 &&
	(cd fmt && test_must_fail test-tool config repo-info) 2>err &&
	grep "repo version is 0, but v1-only extension found" err &&
	grep "^	refstorage$" err
'

test_expect_success 'extensions.objectFormat picks the hash, unknown ones are refused' '
	fmt_repo fmt &&
	git config -f fmt/.git/config core.repositoryformatversion 1 &&
	git config -f fmt/.git/config extensions.objectFormat sha256 &&
	in_dir fmt &&
	(cd fmt && test-tool config repo-info object-format) >actual &&
	echo sha256 >expect &&
	test_cmp expect actual &&
	git config -f fmt/.git/config extensions.objectFormat md5 &&
	refused fmt "invalid value for .extensions.objectformat.: .md5." &&
	git config -f fmt/.git/config extensions.objectFormat SHA256 &&
	refused fmt "invalid value for .extensions.objectformat."
'

test_expect_success 'a syntax error in the repository config is reported' '
	fmt_repo fmt &&
	printf "[core\n" >>fmt/.git/config &&
	refused fmt "bad config line [0-9]* in file .*fmt/.git/config"
'

test_done
