#!/bin/sh
# `make test`: run the selftests shipped in the initramfs.
exec sh /selftests/run.sh
