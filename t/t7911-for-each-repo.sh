#!/bin/sh

test_description='for-each-repo: a command on each repository of a config list

As git for-each-repo: the values of a multi-valued config variable, in
order, each run as "git -C <path> <command>" (stock git checks what ran:
rev-parse output per repository); ~ expanded; a gitpack command runs in
this gitpack with git'\''s argv (trace2); the repository environment
(GIT_DIR) is not passed on; the first failure stops the loop unless
--keep-going (exit 1 then); bad keys and value-less entries are usage
errors (129); an empty list runs nothing.'

. ./test-lib.sh

test_expect_success 'for-each-repo: each listed repository, in order; ~ expanded' '
	git init -q a &&
	git init -q b &&
	git init -q c &&
	git config --global fer.list "$HOME/a" &&
	git config --global --add fer.list "~/c" &&
	gitpack for-each-repo --config=fer.list rev-parse --show-toplevel >actual &&
	printf "%s\n" "$HOME/a" "$HOME/c" >expect &&
	test_cmp expect actual &&
	gitpack for-each-repo --config=fer.list -- rev-parse --show-toplevel >actual &&
	test_cmp expect actual &&
	# a gitpack command runs in gitpack (never the git in PATH), with git'\''s argv
	mkdir nogit &&
	printf "#!/bin/sh\necho \"\$*\" >>\"\$HOME/git-called\"\nexit 1\n" >nogit/git &&
	chmod +x nogit/git &&
	GIT_TRACE2_EVENT="$HOME/fer.json" PATH="$HOME/nogit:$PATH" \
		gitpack -C b for-each-repo --config=fer.list count-objects >actual &&
	test_path_is_missing git-called &&
	test_line_count = 2 actual &&
	grep -c "\"event\":\"start\".*\"argv\":\[\"git\",\"-C\",\"$HOME/[ac]\",\"count-objects\"\]" fer.json >count &&
	echo 2 >expect &&
	test_cmp expect count
'

test_expect_success 'for-each-repo: the repository environment is not passed on' '
	GIT_DIR="$HOME/b/.git" gitpack for-each-repo --config=fer.list rev-parse --absolute-git-dir >actual &&
	printf "%s\n" "$HOME/a/.git" "$HOME/c/.git" >expect &&
	test_cmp expect actual
'

test_expect_success 'for-each-repo: the command-line config is passed on; --config <key>' '
	gitpack -c fer.x=one for-each-repo --config fer.list config fer.x >actual &&
	test_write_lines one one >expect &&
	test_cmp expect actual &&
	git -c fer.list="$HOME/b" config --get-all fer.list >/dev/null &&
	gitpack -c fer.list="$HOME/b" for-each-repo --config=fer.list rev-parse --show-toplevel >actual &&
	printf "%s\n" "$HOME/a" "$HOME/c" "$HOME/b" >expect &&
	test_cmp expect actual
'

test_expect_success 'for-each-repo: stops at a failure, or goes on with --keep-going' '
	git config --global fer.bad "$HOME/missing" &&
	git config --global --add fer.bad "$HOME/a" &&
	test_expect_code 128 gitpack for-each-repo --config=fer.bad rev-parse --show-toplevel >out 2>err &&
	grep "cannot change to" err &&
	test_must_be_empty out &&
	test_expect_code 1 gitpack for-each-repo --config=fer.bad --keep-going rev-parse --show-toplevel >out &&
	echo "$HOME/a" >expect &&
	test_cmp expect out
'

test_expect_success 'for-each-repo: bad keys, missing values, nothing listed' '
	test_expect_code 129 gitpack for-each-repo --config=a &&
	test_expect_code 129 gitpack for-each-repo --config=a.b. &&
	test_expect_code 129 gitpack for-each-repo --config="x y.z" &&
	test_expect_code 128 gitpack for-each-repo rev-parse &&
	printf "[fer]\n\tempty\n" >>.gitconfig &&
	test_expect_code 129 gitpack for-each-repo --config=fer.empty 2>err &&
	grep "^error: missing value for .fer.empty." err &&
	gitpack for-each-repo --config=fer.none -- no-such-command >out &&
	test_must_be_empty out
'

test_done
