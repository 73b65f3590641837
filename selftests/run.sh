#!/bin/sh
# Runs every selftest in this directory (NNN-name.sh, in order) and reports
# in TAP 13, as kselftest's runner does. Exit status: 0 if none failed.
# RNULL_TESTS may name a subset (space-separated file names or numbers).
# Each test runs under the timeout of ./settings (`timeout=N` seconds, 0:
# none, kselftest's 45 without the file); RNULL_TEST_TIMEOUT overrides it,
# as kselftest's --override-timeout.
cd "$(dirname "$0")" || exit 1

limit=45
if [ -r settings ]; then
	v=$(sed -n 's/^timeout=//p' settings)
	[ -z "$v" ] || limit=$v
fi
limit=${RNULL_TEST_TIMEOUT:-$limit}

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
	# Named before it runs, as kselftest does: a test that hangs the
	# guest is the last one the console shows.
	echo "# selftests: $name"
	start=$(date +%s)
	if [ "$limit" -gt 0 ]; then
		# TERM first, KILL 10 s later if the test ignores it. The test
		# leads a process group of its own (recorded in selftest.pgid),
		# so that its subshells and background jobs can go with it.
		timeout -k 10 "$limit" setsid sh -c 'echo $$ >/tmp/selftest.pgid; exec sh "$1"' \
			sh "./$t" >/tmp/selftest.out 2>&1 &
		pid=$!
		# A test stuck in the kernel (a write blocked in del_gendisk)
		# takes no signal: past the timeout and its KILL grace, give up
		# on the whole run rather than hang in `wait`.
		while kill -0 "$pid" 2>/dev/null && [ $(($(date +%s) - start)) -le $((limit + 20)) ]; do
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			sed "s/^/# /" /tmp/selftest.out
			echo "not ok $n selftests: $name # TIMEOUT $limit seconds, unkillable"
			echo "Bail out! $name did not end after SIGKILL"
			exit 1
		fi
		wait "$pid"
	else
		sh "./$t" >/tmp/selftest.out 2>&1
	fi
	rc=$?
	secs=$(($(date +%s) - start))
	# busybox's timeout leaves the signal's status (143, 137), not 124.
	if [ "$limit" -gt 0 ] && [ "$secs" -ge "$limit" ] && { [ "$rc" = 143 ] || [ "$rc" = 137 ]; }; then
		rc=timeout
		kill -KILL "-$(cat /tmp/selftest.pgid)" 2>/dev/null
		# A killed test ran no EXIT trap: its configfs directories pin
		# the module (rmdir powers their devices off), under a bound of
		# their own.
		timeout 30 sh -c 'for d in /sys/kernel/config/rnull/*/; do
			[ -d "$d" ] && rmdir "$d"
		done' 2>/dev/null
	fi
	sed "s/^/# /" /tmp/selftest.out
	echo "# $name took ${secs}s"

	killall fio 2>/dev/null && sleep 1
	rmmod rnull 2>/dev/null
	case "$rc" in
	0) echo "ok $n selftests: $name" ;;
	4) echo "ok $n selftests: $name # SKIP" ;;
	timeout)
		echo "not ok $n selftests: $name # TIMEOUT $limit seconds"
		failed=$((failed + 1))
		;;
	*)
		echo "not ok $n selftests: $name # exit=$rc"
		failed=$((failed + 1))
		;;
	esac
done
[ "$failed" -eq 0 ]
