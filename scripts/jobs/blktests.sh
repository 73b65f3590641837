#!/bin/sh
# `make blktests`: blktests against rnull (blktests/run.sh, in the guest's
# blktests layer from scripts/initramfs-blktests.sh).
exec /usr/bin/bash /blktests/rnull-run.sh
