#!/bin/sh
# Runs every selftest in this directory (NNN-name.sh, in order) and reports
# in TAP 13, as kselftest's runner does. Exit status: 0 if none failed.
# RNULL_TESTS may name a subset (space-separated file names or numbers).
cd "$(dirname "$0")" || exit 1

tests=""
# A name may be given by its number alone (RNULL_TESTS="060 061").
for t in ${RNULL_TESTS:-$(ls [0-9][0-9][0-9]-*.sh)}; do
	[ -e "$t" ] || t=$(ls "$t"-*.sh 2>/dev/null || echo "$t")
	tests="$tests $t"
done
total=$(echo "$tests" | wc -w)
echo "TAP version 13"
echo "1..$total"
n=0 failed=0
for t in $tests; do
	n=$((n + 1))
	name=${t%.sh}
	start=$(date +%s)
	sh "./$t" >/tmp/selftest.out 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	sed "s/^/# /" /tmp/selftest.out
	echo "# $name took ${secs}s"

	killall fio 2>/dev/null && sleep 1
	rmmod rnull 2>/dev/null
	case "$rc" in
	0) echo "ok $n selftests: $name" ;;
	4) echo "ok $n selftests: $name # SKIP" ;;
	*)
		echo "not ok $n selftests: $name # exit=$rc"
		failed=$((failed + 1))
		;;
	esac
done
[ "$failed" -eq 0 ]
