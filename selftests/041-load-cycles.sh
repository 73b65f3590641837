#!/bin/sh
# 50 load/unload cycles with I/O in between leave no error in the log.
. "$(dirname "$0")/lib.sh"

kmsg_mark
i=0
while [ $i -lt 50 ]; do
	load_rnull nr_devices=2 irqmode=$((i % 3)) memory_backed=$((i % 2))
	dd if=/dev/zero of=/dev/rnullb1 bs=4096 count=8 oflag=direct 2>/dev/null ||
		fail "write failed in cycle $i"
	unload_rnull
	i=$((i + 1))
done
errors=$(kmsg_since | grep -iE 'error|fail|warn|bug|oops' || true)
[ -z "$errors" ] || fail "kernel log after 50 cycles: $errors"
log "50 cycles clean"
