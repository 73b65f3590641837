#!/bin/sh
# Last test: on a kernel with kmemleak, nothing rnull loaded and unloaded
# during the run may be left unreferenced.
. "$(dirname "$0")/lib.sh"

k=/sys/kernel/debug/kmemleak
requires_file $k
# Two scans: kmemleak only reports objects unreferenced in two of them.
echo scan >$k
sleep 6
echo scan >$k
leaks=$(cat $k)
if [ -n "$leaks" ]; then
	echo "$leaks" | head -n 40
	fail "kmemleak reports $(echo "$leaks" | grep -c '^unreferenced object') leak(s)"
fi
log "kmemleak: no leaks"
