# shellcheck shell=sh
# Helpers shared by the rnull selftests (sourced; busybox sh in the guest).
#
# A test script is one scenario. It prints diagnostics as it likes (the
# runner prefixes them with '# '), and exits 0 for pass, 4 for skip
# (kselftest's KSFT_SKIP), anything else for failure.

RNULL_MODDIR=${RNULL_MODDIR:-/lib/modules/rnull}
RNULL_KO="$RNULL_MODDIR/rnull.ko"
KSFT_SKIP=4

log() { echo "$*"; }
fail() {
	echo "FAIL: $*"
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit "$KSFT_SKIP"
}

# requires_cpus N: skip unless the guest has N CPUs.
requires_cpus() {
	[ "$(nproc)" -ge "$1" ] || skip "needs $1 CPUs, guest has $(nproc)"
}

# requires_file PATH: skip unless PATH exists (a module or tool).
requires_file() {
	[ -e "$1" ] || skip "$1 is missing"
}

# One init per insmod: busybox's retries a refused load with init_module,
# which runs the module's init, and logs its refusals, a second time.
insmod() { insmod-once "$@"; }

rnull_loaded() { [ -d /sys/module/rnull ]; }

# load_rnull [param=value ...]: insmod rnull or fail the test.
load_rnull() {
	insmod "$RNULL_KO" "$@" || fail "insmod rnull $* failed"
	rnull_loaded || fail "rnull not in /sys/module after insmod"
}

unload_rnull() {
	rmmod rnull || fail "rmmod rnull failed"
	! rnull_loaded || fail "rnull still loaded after rmmod"
}

# Leave no background job or module behind whatever happens.
cleanup_rnull() {
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	wait 2>/dev/null
	# configfs directories pin the module; rmdir powers their devices off.
	for d in /sys/kernel/config/rnull/*/; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	rmmod rnull 2>/dev/null || true
}

# wait_writes DEV: wait (up to 20 s) until DEV has completed writes (the
# partition scan at registration only reads).
wait_writes() {
	n=0
	while [ $n -lt 200 ]; do
		set -- "$1" $(cat "/sys/block/$1/stat")
		[ "$6" -gt 0 ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "no write reached $1"
}
trap cleanup_rnull EXIT

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
	log "ok: $3 = $1"
}

# dev_attr N FILE: a value from /sys/block/rnullbN/rnull/FILE
dev_attr() { cat "/sys/block/rnullb$1/rnull/$2"; }

# kmsg_mark: put a marker line into the kernel log (at debug level, off the
# console); kmsg_since: what the log holds after the last marker. A line
# count would not do: once the hostile-input tests have filled the log
# buffer, it stops growing. A marker the buffer has already dropped gives
# the whole log.
kmsg_mark() {
	_kmsg_n=$(($(cat /tmp/.kmsg_n 2>/dev/null || echo 0) + 1))
	echo "$_kmsg_n" >/tmp/.kmsg_n
	echo "rnull-selftest-mark-$$-$_kmsg_n" >/tmp/.kmsg_mark
	echo "<7>$(cat /tmp/.kmsg_mark)" >/dev/kmsg
}
kmsg_since() {
	_m=$(cat /tmp/.kmsg_mark)
	if dmesg | grep -qF "$_m"; then
		dmesg | awk -v m="$_m" 'found { print } index($0, m) { found = 1 }'
	else
		dmesg
	fi
}

# The kernel's printk rate limit (DEFAULT_RATELIMIT_BURST): rnull logs at
# most this many refusals of one file per 5 s.
RATELIMIT_BURST=10

# fio_terse ARGS...: run fio, print only its terse (version 3) result lines
# (fio prints warnings on stdout too); on failure print everything.
fio_terse() {
	_out=$(mktemp)
	if ! fio --output-format=terse --terse-version=3 "$@" >"$_out" 2>&1; then
		cat "$_out"
		rm -f "$_out"
		return 1
	fi
	grep '^3;' "$_out"
	rm -f "$_out"
}

# terse_field N: field N (1-based, ';'-separated) of a terse line on stdin.
terse_field() { cut -d';' -f"$1"; }

# require_zoned: skips unless rnull makes zoned devices on this kernel
# (CONFIG_BLK_DEV_ZONED); a refusal must say that is why.
require_zoned() {
	kmsg_mark
	if ! insmod "$RNULL_KO" zoned=1 gb=1 zone_size=64 2>/dev/null; then
		kmsg_since | grep -q "needs a kernel with CONFIG_BLK_DEV_ZONED" ||
			fail "zoned=1 refused without saying why: $(kmsg_since | tail -n 3)"
		skip "the kernel has no CONFIG_BLK_DEV_ZONED"
	fi
	unload_rnull
}
