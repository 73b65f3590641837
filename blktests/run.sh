#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make blktests`: run blktests (copied to /blktests by
# scripts/initramfs-blktests.sh) against rnull and report in TAP 13, one line
# per test and device:
#   ok 3 block/005 => rnullb0 [mem]
#   ok 7 block/036 => rnullb0 [mem] # SKIP debugfs does not exist
#   not ok 9 rnull/004 # failed (output)
# A skip's reason is blktests' own text. blktests' report follows each line
# as '# ' comments.
#
# 1. Device tests (BLKTESTS_DEVICE_TESTS) once per rnull configuration in
#    RNULL_BLKTESTS_CONFIGS ('label:module parameters', ';' between them),
#    TEST_DEVS being the device that configuration made through configfs
#    (module-wide parameters stay module parameters).
# 2. The tests that set up rnull themselves (BLKTESTS_GROUP_TESTS, the rnull
#    group by default), with no rnull loaded.
# 3. blktests' null_blk tests (BLKTESTS_NULL_BLK_TESTS; "all" is every test
#    whose file or group rc names null_blk), with no TEST_DEVS, once per
#    driver in BLKTESTS_NULL_BLK_DRIVERS: "null_blk" is C null_blk,
#    "rnull" is rnull's null_blk face (/lib/modules/rnull-face/null_blk.ko)
#    installed in C null_blk's place, so that blktests finds it where it
#    looks for null_blk. The TAP label is the driver.
# BLKTESTS_QUICK=N runs `./check -q N` (blktests' quick run: timed tests
# limited to N seconds); otherwise TIMEOUT=BLKTESTS_TIMEOUT (default 30).
# Exit status: 0 if nothing failed.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# zgrep runs gzip from GZIP_BINDIR (default /bin: busybox's, here).
export GZIP_BINDIR=/usr/bin
cd /blktests || exit 1
# Process substitution needs /dev/fd, which devtmpfs does not make.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# cryptsetup's lock directory (zbd/013), which an init system would make.
mkdir -p /run/cryptsetup
# cgroup v2, where blktests' common/cgroup looks for it (the throtl group).
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup

# "none" runs no device tests.
device_tests=${BLKTESTS_DEVICE_TESTS:-block/003 block/004 block/005 block/007 block/008 block/012 block/036 block/042}
group_tests=${BLKTESTS_GROUP_TESTS-rnull}
configs=${RNULL_BLKTESTS_CONFIGS:-mem:memory_backed=1 gb=4 discard=1}
results=/tmp/blktests-results
n=0 failed=0

echo "TAP version 13"
echo "# blktests $(cut -c1-12 UPSTREAM-COMMIT 2>/dev/null), kernel $(uname -r), $(nproc) CPUs"

# Every I/O scheduler the kernel has, so block/005 switches between them all.
for m in mq-deadline bfq; do modprobe -q "$m"; done
echo "# schedulers: $(ls /sys/module | grep -E '^(mq_deadline|bfq|kyber)' | tr '\n' ' ')"

# The configfs device the device tests run on.
cfg_dev=/sys/kernel/config/rnull/blktests

# rnull_test_devs PARAMS...: load rnull with no device and make one through
# configfs, as null_blk's users do (`/sys/kernel/config/rnull/blktests`),
# from parameters written as module parameters: the host budget's
# (module-wide) stay module parameters, `gb`/`bs` become `size` (MiB) and
# `blocksize`, every other one is the configfs attribute of that name.
# Prints the device.
rnull_test_devs() {
	rnull_test_devs_down
	local kv mod=() dev=()
	for kv in "$@"; do
		case ${kv%%=*} in
		host_queue_depth | tag_policy | host_mbps | borrow_expiry_us) mod+=("$kv") ;;
		gb) dev+=("size=$((${kv#*=} * 1024))") ;;
		bs) dev+=("blocksize=${kv#*=}") ;;
		*) dev+=("$kv") ;;
		esac
	done
	modprobe rnull nr_devices=0 "${mod[@]}" || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
	mkdir "$cfg_dev" || return 1
	for kv in "${dev[@]}"; do
		if [ ! -e "$cfg_dev/${kv%%=*}" ]; then
			echo "# rnull's configfs has no attribute ${kv%%=*}" >&2
			return 1
		fi
		echo "${kv#*=}" >"$cfg_dev/${kv%%=*}" || return 1
	done
	echo 1 >"$cfg_dev/power" || return 1
	echo "/dev/rnullb$(cat "$cfg_dev/index")"
}

# rnull_test_devs_down: powers the configfs device off, removes it and
# unloads rnull (a configfs device holds the module).
rnull_test_devs_down() {
	if [ -d "$cfg_dev" ]; then
		echo 0 >"$cfg_dev/power"
		rmdir "$cfg_dev"
	fi
	rmmod rnull 2>/dev/null
	return 0
}

# report LABEL < check's output: one TAP line per result line of ./check
# ('NAME [=> DEV] (description)  [passed|failed|not run]' followed by
# indented detail lines).
report() {
	local label=$1 line name="" dev="" status="" re
	local -a details=()
	re='^([^[:space:]]+)( => ([^[:space:]]+))? .*\[(passed|failed|not run)\][[:space:]]*$'
	flush() {
		[ -n "$status" ] || return 0
		# A group's requires() failing is reported as GROUP/***: name the
		# test, when check ran only one.
		[[ $name != */'***' || -z ${report_test:-} ]] || name=$report_test
		local what="$name${dev:+ => $dev}${label:+ [$label]}" reason d
		n=$((n + 1))
		for d in "${details[@]}"; do echo "#   $d"; done
		case $status in
		passed) echo "ok $n $what" ;;
		"not run")
			reason=$(printf '%s; ' "${details[@]}")
			echo "ok $n $what # SKIP ${reason%; }"
			;;
		*)
			# What check says after a failure: a diff, an exit status, dmesg.
			reason=""
			for d in "${details[@]}"; do
				case $d in
				"exited with status"*) reason=exit ;;
				"something found in dmesg"*) reason=dmesg ;;
				"kmemleak detected"*) reason=kmemleak ;;
				"--- "*) reason=output ;;
				*) continue ;;
				esac
				break
			done
			echo "not ok $n $what # failed${reason:+ ($reason)}"
			failed=$((failed + 1))
			;;
		esac
		status="" details=()
	}
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			flush
			name=${BASH_REMATCH[1]} dev=${BASH_REMATCH[3]} status=${BASH_REMATCH[4]}
			echo "# $line"
		elif [ -n "$status" ] && [[ $line == "    "* ]]; then
			line=${line#    }
			details+=("$line")
		else
			flush
			echo "# $line"
		fi
	done
	flush
}

# run_check LABEL CONFIG-FILE TESTS...: ./check, reported; a ./check that
# reports nothing (crashed) is a failure.
run_check() {
	local label=$1 cfg=$2 before=$n
	shift 2
	# A results directory per configuration: check compares a test with its
	# last run on the same device name, and prints that run's figures.
	local -a args=(-o "$results/${label:-group}" -c "$cfg")
	[ -z "${BLKTESTS_QUICK:-}" ] || args+=("--quick=$BLKTESTS_QUICK")
	echo "# ./check ${args[*]} $*"
	# Reported as it runs (not in a pipe: report counts in this shell).
	report "$label" < <(./check "${args[@]}" "$@" 2>&1)
	if [ "$n" = "$before" ]; then
		n=$((n + 1))
		# check runs a device test without a fallback device on TEST_DEVS
		# only, and prints nothing for it when there are none.
		if [ "$#" = 1 ] && [ -n "${no_test_devs:-}" ] && grep -q '^test_device()' "tests/$1" &&
			! grep -q '^fallback_device()' "tests/$1"; then
			echo "ok $n $1${label:+ [$label]} # SKIP a device test without a fallback device: it runs on TEST_DEVS only"
		else
			failed=$((failed + 1))
			echo "not ok $n ./check $* [$label] # no result"
		fi
	fi
}

write_config() { # FILE DEV...
	local f=$1
	shift
	{
		echo "TEST_DEVS=($*)"
		[ -n "${BLKTESTS_QUICK:-}" ] || echo "TIMEOUT=${BLKTESTS_TIMEOUT:-30}"
		# No syslog in the guest.
		echo "LOGGER_PROG=true"
	} >"$f"
}

if [ -n "$device_tests" ] && [ "$device_tests" != none ]; then
	IFS=';' read -ra cfgs <<<"$configs"
	for c in "${cfgs[@]}"; do
		label=${c%%:*} params=${c#*:}
		# One hardware queue per CPU unless the configuration says otherwise.
		[[ $params == *submit_queues=* ]] || params+=" submit_queues=$(nproc)"
		echo "# rnull [$label]: $params"
		# shellcheck disable=SC2086 # the parameters are words
		if ! devs=$(rnull_test_devs $params) || [ -z "$devs" ]; then
			n=$((n + 1)) failed=$((failed + 1))
			echo "not ok $n rnull $params [$label] # loading failed"
			continue
		fi
		# shellcheck disable=SC2086
		write_config /tmp/blktests.config $devs
		# shellcheck disable=SC2086 # one word per test
		run_check "$label" /tmp/blktests.config $device_tests
		rnull_test_devs_down
		! grep -q '^rnull ' /proc/modules || echo "# rmmod rnull failed after [$label]"
	done
fi

# null_blk_tests: every upstream test whose file or group rc names null_blk
# (rnull's own group, which names it too, is phase 2's).
null_blk_tests() {
	local f
	for f in tests/*/[0-9][0-9][0-9]; do
		[ "${f#tests/rnull/}" = "$f" ] || continue
		grep -q null_blk "$f" "$(dirname "$f")/rc" && echo "${f#tests/}"
	done
}

# use_null_blk DRIVER: makes `modprobe null_blk` load DRIVER's module.
null_blk_ko=$(modinfo -n null_blk 2>/dev/null)
use_null_blk() {
	local ko
	case $1 in
	null_blk) ko=/lib/modules/rnull/null_blk.ko ;;
	rnull) ko=/lib/modules/rnull-face/null_blk.ko ;;
	*) echo "# unknown null_blk driver $1" >&2; return 1 ;;
	esac
	! grep -q '^null_blk ' /proc/modules || rmmod null_blk || return 1
	cp "$ko" "$null_blk_ko" && depmod -a || return 1
	echo "# null_blk is $1: $(modinfo -F description null_blk)"
}

# null_blk_cleanup TEST: powers off and removes the configfs devices TEST
# left, and unloads null_blk and scsi_debug (which the throtl group refuses
# to find loaded), saying so if there was anything to remove.
null_blk_cleanup() {
	local d left=""
	if [ -d /sys/kernel/config/nullb ]; then
		for d in /sys/kernel/config/nullb/*/; do
			[ -d "$d" ] || continue
			left+=" $(basename "$d")"
			echo 0 >"$d/power" 2>/dev/null
			rmdir "$d" 2>/dev/null
		done
	fi
	[ -z "$left" ] || echo "# $1 left configfs devices behind:$left"
	local m
	for m in null_blk scsi_debug; do
		! grep -q "^$m " /proc/modules || rmmod "$m" 2>/dev/null ||
			echo "# $1 left $m in use"
	done
}

null_tests=${BLKTESTS_NULL_BLK_TESTS:-}
[ "$null_tests" != all ] || null_tests=$(null_blk_tests | tr '\n' ' ')
if [ -n "$null_tests" ] && [ "$null_tests" != none ]; then
	write_config /tmp/blktests-null_blk.config
	for driver in ${BLKTESTS_NULL_BLK_DRIVERS:-null_blk rnull}; do
		if ! use_null_blk "$driver"; then
			n=$((n + 1)) failed=$((failed + 1))
			echo "not ok $n null_blk as $driver # could not be installed"
			continue
		fi
		# One check per test: a test that fails may leave its configfs
		# devices and the module behind, and the next one would then fail
		# on them (mkdir: File exists), whichever the driver.
		for t in $null_tests; do
			no_test_devs=1 report_test=$t run_check "$driver" /tmp/blktests-null_blk.config "$t"
			null_blk_cleanup "$t"
		done
	done
	use_null_blk null_blk >/dev/null
fi

if [ -n "$group_tests" ]; then
	write_config /tmp/blktests-group.config
	# shellcheck disable=SC2086
	run_check "" /tmp/blktests-group.config $group_tests
fi

echo "1..$n"
echo "# blktests: $((n - failed)) ok (skips included), $failed failed"
[ "$failed" = 0 ]
