#!/bin/sh
# While /dev/rnullb0 is open the module is pinned: rmmod fails and the
# device keeps working; once closed, rmmod succeeds.
. "$(dirname "$0")/lib.sh"

load_rnull
exec 3</dev/rnullb0
if rmmod rnull 2>/tmp/rmmod.err; then
	fail "rmmod succeeded with /dev/rnullb0 open"
fi
log "rmmod refused: $(cat /tmp/rmmod.err)"
rnull_loaded || fail "module gone after refused rmmod"
dd if=/dev/rnullb0 of=/dev/null bs=4096 count=4 iflag=direct 2>/dev/null ||
	fail "device stopped working after refused rmmod"
exec 3<&-
unload_rnull
