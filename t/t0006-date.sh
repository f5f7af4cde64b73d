#!/bin/sh

test_description='date parsing (date.c) against git

test-tool date reads a few hundred texts the way gitpack reads an
expiry date, and stock git reads the same texts three ways:
"git rev-parse --since=<date>" prints what approxidate made of it
(--max-age=<seconds>), "git var GIT_COMMITTER_IDENT" with
GIT_COMMITTER_DATE=<date> what the strict parser made of it (or dies),
and "git prune --expire=<date>" says "malformed expiration date" when
git refuses the text.

The texts are generated: every format of "DATE FORMATS" in
git-commit(1) in many zones, the forms approxidate adds (relative dates,
"yesterday", "last friday", "noon", "10am", partial dates in every
order and separator), odd spacing, and text git does not understand.
Relative dates are compared at fixed times, in several zones with and
without summer time, when stock git takes GIT_TEST_DATE_NOW for now
(2.39 does); and always against the clock: git reads it once, so what
git printed must be what gitpack gives for the time just before git ran
or just after (or between).

Git changed the meaning of a few texts after 2.39: "today" (2.55),
"noon" and "tea" on a given day (2.55), ISO 8601 times without seconds
(2.40), dates their zone pushes before 1970 or after 2099 (2.46).
gitpack reads them as Git 2.55 does; they are compared with the newer
git of the git-t harness (GIT_NEW), and with stock git when it is 2.55
or later.'

. ./test-lib.sh

# Zones to read local times in: plain UTC, Central Europe and US Eastern
# with their summer time, and Nepal (+05:45). POSIX rules, so that no
# zone database is needed.
zones='UTC0 CET-1CEST,M3.5.0,M10.5.0/3 EST5EDT,M3.2.0,M11.1.0 <+0545>-5:45'

# Times to count relative dates from: t0006-date.sh of git's (a Sunday
# evening), the same morning, the night Europe put its clocks forward
# in 2024, a leap day, and a last second of a year.
nows='1251660000 1251626400 1711846800 1582934400 1704067199'

# strict_dates: the formats of "DATE FORMATS", in zones and spacings.
strict_dates () {
	for date in 'Thu, 07 Apr 2005 22:13:13' 'Thu, 7 Apr 2005 22:13:13' \
		'thu, 07 apr 2005 22:13:13' '07 Apr 2005 22:13:13' \
		'Sat, 29 Feb 2020 00:00:00' 'Fri, 31 Dec 1999 23:59:59' \
		'2005-04-07T22:13:13' '2005-04-07 22:13:13' \
		'2005-04-07T22:13:13.019' '20050407T221313' '2005.04.07 22:13:13' \
		'04/07/2005 22:13:13' '07.04.2005 22:13:13' '2005-04-07 22:13' \
		'Apr 7 22:13:13 2005'
	do
		for zone in '' ' +0200' ' -0700' ' +0000' ' -0000' ' +0530' ' -05' \
			' +05:30' 'Z' ' Z' ' GMT' ' UTC' ' EST' ' PDT' ' CEST' ' JST' \
			' +1400' ' -1200'
		do
			printf '%s%s\n' "$date" "$zone"
		done
	done
	cat <<-\EOF
	@1234567890 +0000
	@1234567890 -0700
	@0 +0000
	@99999999 +0000
	@1234567890
	1234567890
	100000000
	99999999
	1234567890 +0100
	2005-04-07T22:13:13+02:00
	2005-04-07T22:13:13.019-04:00
	2005-04-07 22:13:13.019 -04:00
	20050407T221313.5
	  2005-04-07   22:13:13  
	Thu,07 Apr 2005 22:13:13 +0200
	Thu, 07 Apr 2005 22:13:13 +0200 (CEST)
	Thursday, April 7, 2005, 10:13:13 pm
	Thu Apr 7 22:13:13 2005 +0200
	2005-04-07 10:13:13 PM
	2005-04-07 12:13:13 am
	1970-01-01 00:00:00 +0000
	1970-01-01 00:00:00 -0100
	2099-12-31 23:59:59 +0000
	2099-12-31 23:59:59 +0100
	2100-01-01 00:00:00
	1969-12-31 23:59:59
	2005-02-31 12:00:00
	2005-13-01 12:00:00
	2005-04-07 25:13:13
	2005-04-07 22:60:13
	EOF
}

# approx_dates: partial dates git completes from now, in every order.
approx_dates () {
	cat <<-\EOF
	01-01-1980
	1980-01-01
	1980/01/01
	01/02/2020
	02.01.2020
	31.12.1999
	12/31/1999
	31/12/1999
	12-31-99
	31.12.99
	99-12-31
	06/05/2009
	06.05.2009
	2008-12-01
	2009-12-01
	Jan 5 2020
	jan 5 2020
	Jan 5, 2020
	5 January 2020
	5 January 2020 10:00
	January 5th
	July 5th
	2nd of May 2005
	Dec 02
	Dec 0002
	Feb 29 2004
	5 Jan
	Jan 1980
	1980 Jan
	2000
	2020
	Jun 6, 5AM
	5AM Jun 6
	6AM, June 7, 2009
	August 30
	Sep 5
	1969-12-31
	1960-01-01
	Jan 1 1965
	EOF
}

# relative_dates: counts of units back, and the words approxidate knows.
relative_dates () {
	for n in 1 2 3 10
	do
		for unit in second minute hour day week month year
		do
			test $n = 1 || unit=${unit}s
			printf '%s.%s.ago\n%s %s ago\n%s_%s_ago\n%s %s\n' \
				$n $unit $n $unit $n $unit $n $unit
		done
	done
	cat <<-\EOF
	2.weeks.ago
	2.years.3.months.ago
	1 year 2 months ago
	2 weeks 3 days ago
	3 days, 2 hours ago
	12:34:56.3.days.ago
	3.days.ago.10:00
	one week ago
	two.hours.ago
	ten days ago
	last week
	last month
	last year
	last friday
	last sunday
	last Saturday
	2 fridays ago
	3 mondays ago
	yesterday
	now
	never
	midnight
	10am
	10pm
	5pm
	12am
	12pm
	10:30
	3:00
	15:00
	yesterday 10am
	10am yesterday
	6am yesterday
	6pm yesterday
	yesterday 15:00
	last friday 10am
	3 days ago 5pm
	5.minutes.ago
	  3   days   ago  
	3,days,ago
	3-days-ago
	NOW
	Never
	YESTERDAY
	2 DAYS AGO
	5 mins ago
	EOF
}

# invalid_dates: text with nothing git knows (and some it half knows).
invalid_dates () {
	cat <<-\EOF
	garbage
	foo bar
	ago
	a week ago
	eleven days ago
	fortnight
	friday
	EST
	UTC
	Z
	T
	.
	-
	@
	+
	all
	false
	ALL
	nowhere
	never mind
	mayday
	xyz 5
	EOF
}

# newer_dates: texts Git reads differently since 2.39 (see above).
newer_dates () {
	cat <<-\EOF
	noon
	tea
	today
	today 10am
	noon today
	today at noon
	yesterday noon
	noon yesterday
	last Friday at noon
	tea last saturday
	January 5th noon pm
	Jan 5 today
	20050407T2213
	20050407T22
	2005-04-07T2213
	2005-04-07T22 +0200
	1970-01-01 00:00:00 +0100
	1970-01-01 00:30:00 +01
	1970-01-01 01:00:00 +01
	2099-12-31 23:59:59 -0100
	2099-12-31 22:59:59 -01
	4294967294
	4294967294 noon
	EOF
}

# since GIT FILE: what GIT (git or git_new) makes of each line of FILE
# as --since=<date>, a line each.
since () {
	(
		gp_git_=$1 &&
		gp_file_=$2 &&
		set -- &&
		while IFS= read -r d
		do
			set -- "$@" "--since=$d"
		done <"$gp_file_" &&
		$gp_git_ rev-parse "$@"
	) | sed 's/^--max-age=//'
}

# ident GIT FILE: GIT's strict parse of each line, "<seconds> <zone>" or "bad".
ident () {
	while IFS= read -r d
	do
		if out=$(GIT_COMMITTER_DATE=$d $1 var GIT_COMMITTER_IDENT 2>/dev/null)
		then
			echo "${out##*> }"
		else
			echo bad
		fi
	done <"$2"
}

# malformed GIT FILE: "ok" or "malformed" a line, as GIT's prune --expire says.
malformed () {
	while IFS= read -r d
	do
		if $1 prune -n --expire="$d" 2>err
		then
			echo ok
		elif grep "malformed expiration date" err >/dev/null
		then
			echo malformed
		else
			cat err >&2
			echo "prune failed"
		fi
	done <"$2"
}

# side_by_side TEXTS VALUES: each text with its value, for a readable diff.
side_by_side () {
	paste -d '|' "$1" "$2"
}

# git_is_new: stock git is 2.55 or later.
git_is_new () {
	v=$(git version | sed -n 's/^git version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p') &&
	set -- $v &&
	test $# = 2 && { test "$1" -gt 2 || { test "$1" = 2 && test "$2" -ge 55; }; }
}

# between TEXTS GIT LO HI: each value GIT printed is LO or HI, or lies
# between them (gitpack at the times just before and after git ran).
between () {
	paste "$2" "$3" "$4" | awk '
		!($1 "" == $2 "" || $1 "" == $3 "" || ($1 + 0 > $2 + 0 && $1 + 0 < $3 + 0)) {
			print NR; bad = 1
		}
		END { exit bad }
	' >mismatch && return 0
	while read n
	do
		printf '%s: git %s, gitpack %s .. %s\n' "$(sed -n "${n}p" "$1")" \
			"$(sed -n "${n}p" "$2")" "$(sed -n "${n}p" "$3")" "$(sed -n "${n}p" "$4")"
	done <mismatch
	return 1
}

# Stock git 2.39 takes GIT_TEST_DATE_NOW for approxidate's now (its
# strict parser reads the clock).
test_lazy_prereq DATE_NOW '
	git init -q repo &&
	GIT_TEST_DATE_NOW=1251660000 git -C repo rev-parse --since=1.day.ago \
		--since=now >actual &&
	printf "%s\\n" --max-age=1251573600 --max-age=1251660000 >expect &&
	test_cmp expect actual
'

test_expect_success 'setup: the texts' '
	strict_dates >strict &&
	approx_dates >approx &&
	relative_dates >relative &&
	invalid_dates >invalid &&
	cat strict approx relative invalid >all &&
	newer_dates >newer &&
	if git_is_new
	then
		cat newer >>all
	fi &&
	test_line_count -gt 400 all
'

test_expect_success 'strict parse matches git var GIT_COMMITTER_IDENT' '
	ident git all >expect &&
	test-tool date parse <all >actual &&
	side_by_side all expect >expect.txt &&
	side_by_side all actual >actual.txt &&
	test_cmp expect.txt actual.txt &&
	grep -v bad expect >parsed &&
	test_line_count -gt 250 parsed
'

test_expect_success 'malformed dates are those git prune --expire refuses' '
	malformed git all >expect &&
	test-tool date expiry <all | sed "s/^-\{0,1\}[0-9][0-9]*$/ok/" >actual &&
	side_by_side all expect >expect.txt &&
	side_by_side all actual >actual.txt &&
	test_cmp expect.txt actual.txt &&
	grep -c malformed expect >count &&
	test $(cat count) -gt 15
'

test_expect_success 'approxidate matches git rev-parse --since (clock)' '
	before=$(date +%s) &&
	since git all >git-out &&
	after=$(date +%s) &&
	test-tool date approxidate --now=$before <all | cut -d" " -f1 >lo &&
	test-tool date approxidate --now=$after <all | cut -d" " -f1 >hi &&
	between all git-out lo hi
'

for tz in $zones
do
	test_expect_success DATE_NOW "approxidate matches git rev-parse --since (TZ=$tz)" '
		for now in $nows
		do
			(
				GIT_TEST_DATE_NOW=$now TZ=$tz &&
				export GIT_TEST_DATE_NOW TZ &&
				since git all >git-out &&
				test-tool date approxidate --now=$now <all
			) | cut -d" " -f1 >gitpack-out &&
			side_by_side all git-out >expect.$now &&
			side_by_side all gitpack-out >actual.$now &&
			test_cmp expect.$now actual.$now || return 1
		done
	'
done

test_expect_success GIT_NEW 'texts git changed since 2.39 read as the newer git does' '
	ident git_new newer >expect &&
	test-tool date parse <newer >actual &&
	side_by_side newer expect >expect.txt &&
	side_by_side newer actual >actual.txt &&
	test_cmp expect.txt actual.txt &&

	malformed git_new newer >expect &&
	test-tool date expiry <newer | sed "s/^-\{0,1\}[0-9][0-9]*$/ok/" >actual &&
	side_by_side newer expect >expect.txt &&
	side_by_side newer actual >actual.txt &&
	test_cmp expect.txt actual.txt &&

	z=0 &&
	for tz in $zones
	do
		z=$((z + 1)) &&
		for now in $nows
		do
			(
				GIT_TEST_DATE_NOW=$now TZ=$tz &&
				export GIT_TEST_DATE_NOW TZ &&
				since git_new newer >git-out &&
				test-tool date approxidate --now=$now <newer
			) | cut -d" " -f1 >gitpack-out &&
			side_by_side newer git-out >expect.$z.$now &&
			side_by_side newer gitpack-out >actual.$z.$now &&
			test_cmp expect.$z.$now actual.$z.$now || return 1
		done
	done
'

test_expect_success 'expiry words, and dates before 1970 expire nothing' '
	cat >words <<-\EOF &&
	never
	false
	now
	all
	1 day ago
	01-01-1980
	60 years ago
	100 years ago
	EOF
	(
		GIT_TEST_DATE_NOW=1251660000 &&
		export GIT_TEST_DATE_NOW &&
		since git words >git-out
	) &&
	test-tool date expiry --now=1251660000 <words >actual &&
	{
		echo 0 && echo 0 &&
		echo 9223372036854775807 && echo 9223372036854775807 &&
		sed -n 5,6p git-out &&
		# git: an unsigned time past 2^63 (before 1970): none here
		sed -n 7,8p git-out | awk "{ print (\$1 + 0 >= 2^63) ? 0 : \$1 }"
	} >expect &&
	test_cmp expect actual
'

test_expect_success 'repack and pack-objects take every form, and refuse garbage' '
	test_commit one &&
	git rev-parse HEAD >unreachable &&
	git commit --allow-empty -q -m two &&
	git reset -q --hard HEAD^ &&
	git reflog expire --expire=all --all &&
	for when in 01-01-1980 "5 January 2020 10:00" "Thu, 07 Apr 2005 22:13:13 +0200" \
		2005-04-07T22:13:13Z @1234567890 2.weeks.ago "last friday" never
	do
		gitpack repack -d --cruft --cruft-expiration="$when" || return 1
	done &&
	test_must_fail gitpack repack -d --cruft --cruft-expiration=garbage 2>err &&
	grep "malformed expiration date .garbage." err &&
	test_must_fail gitpack pack-objects --cruft --cruft-expiration="a week ago" \
		--stdout </dev/null >/dev/null 2>err &&
	grep "malformed expiration date .a week ago." err
'

test_done
