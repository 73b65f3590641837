#!/bin/sh
# The host tag budget's sysfs files: every attribute reads back what was
# written, bad values give EINVAL and change nothing, non-root writes are
# refused, reads in small pieces see the same contents, and without
# host_queue_depth there is no host directory.
. "$(dirname "$0")/lib.sh"

h=/sys/module/rnull/host

load_rnull nr_devices=2
[ ! -e $h ] || fail "$h exists without host_queue_depth"
[ ! -e /sys/block/rnullb0/rnull/tags_limit ] || fail "tags_* files without host_queue_depth"
unload_rnull

load_rnull nr_devices=2 host_queue_depth=32 tag_policy=borrow
# host/policy lists every registered policy once, the active one in brackets.
policies=$(tr -d '[]' <$h/policy)
expect_eq "$(grep -o '\[[a-z]*\]' $h/policy)" "[borrow]" "initial policy"
expect_eq "$(printf '%s\n' $policies | sort -u | wc -l)" "$(printf '%s\n' $policies | wc -l)" \
	"policies listed once: $policies"
expect_eq "$(cat $h/depth)" 32 "initial depth"
for f in tags_in_flight tags_limit tags_failures tags_active tags_waiting; do
	[ -r "/sys/block/rnullb1/rnull/$f" ] || fail "rnullb1/rnull/$f missing"
done

# write_attr FILE VALUE: echo VALUE > FILE, return its status.
write_attr() { echo "$2" >"$1" 2>/dev/null; }

for p in $policies borrow; do
	write_attr $h/policy "$p" || fail "writing policy $p failed"
	cat $h/policy | grep -q "\[$p\]" || fail "policy $p not active: $(cat $h/policy)"
done

# check_attr FILE GOOD BAD...: GOOD is accepted and read back, every BAD
# is refused and leaves GOOD in place.
check_attr() {
	file=$h/$1
	good=$2
	shift 2
	write_attr "$file" "$good" || fail "$1 rejected valid value $good"
	expect_eq "$(cat "$file")" "$good" "$(basename "$file") after writing $good"
	for bad in "$@"; do
		if write_attr "$file" "$bad"; then
			fail "$(basename "$file") accepted '$bad'"
		fi
		expect_eq "$(cat "$file")" "$good" "$(basename "$file") unchanged after '$bad'"
	done
}
check_attr depth 16 0 1025 -1 abc "" 16x 99999999999999999999 " 8"
# borrow's fair share outlives a starved device's drain by 5 ms by default
# (a QD1 device drains after every request).
expect_eq "$(cat $h/borrow_expiry_us)" 5000 "default borrow_expiry_us"
check_attr borrow_expiry_us 2500 -1 10000001 x 1.5
check_attr idle_ms 250 0 100001 -3 ms
check_attr window_shared_pct 30 -1 101 x 2.5 ""

for bad in "" bogus "fair borrow" FAIR; do
	if write_attr $h/policy "$bad"; then
		fail "policy accepted '$bad'"
	fi
done
cat $h/policy | grep -q "\[borrow\]" || fail "policy changed by a bad write"

for ro in active_queues waiting_queues starved_queues in_use slow_handoffs; do
	if write_attr "$h/$ro" 1; then
		fail "read-only $ro accepted a write"
	fi
done

# Reads at an offset or into a small buffer see the same contents: the
# shell's `read` takes a byte at a time (the bench reads slow_handoffs so,
# without forking), `dd bs=3` three.
for f in policy depth slow_handoffs; do
	read -r v <$h/$f || fail "read of $f failed"
	expect_eq "$v" "$(cat $h/$f)" "$f by the shell's read"
	expect_eq "$(dd if=$h/$f bs=3 2>/dev/null)" "$(cat $h/$f)" "$f by dd bs=3"
done

# Writes by an unprivileged user are refused.
if su nobody -s /bin/sh -c "echo fair > $h/policy" 2>/dev/null; then
	fail "nobody could write the policy"
fi
cat $h/policy | grep -q "\[borrow\]" || fail "policy changed by nobody"
unload_rnull
[ ! -e $h ] || fail "$h left behind after unload"
