# SPDX-License-Identifier: GPL-2.0
#
# rnull: top-level entry points. `make help` lists them.
#
# The kernel is built once per set of inputs into $(RNULL_CACHE) (default
# ~/.cache/rnull); KDIR=/path/to/a/rust-enabled/build/tree uses another one.

SHELL := /bin/bash
TOP := $(CURDIR)
SCRIPTS := $(TOP)/scripts

# Toolchain and cache settings shared with the scripts.
RUSTC ?= /usr/bin/rustc
RUST_LIB_SRC ?= /usr/src/rustc-1.96.0/library
BINDGEN ?= /opt/bindgen/bin/bindgen
export RUSTC RUST_LIB_SRC BINDGEN

# Evaluated when used, i.e. after `deps` and `kernel` have run.
KDIR ?= $(shell $(SCRIPTS)/kernel.sh dir)
KMAKE = $(MAKE) -C $(KDIR) M=$(TOP) LLVM=1 RUSTC=$(RUSTC) BINDGEN=$(BINDGEN) \
	RUST_LIB_SRC=$(RUST_LIB_SRC)

# Guest shape, overridable: make run CPUS=4 MEM=2G
CPUS ?= 2
MEM ?= 1G
export CPUS MEM

.PHONY: all deps kernel modules initramfs run test test-rtags test-guest \
	fmt fmt-check clippy clean help

all: modules

help:
	@echo "make            build rnull/rnull.ko (deps and kernel first if missing)"
	@echo "make run        boot the guest, load rnull, run fio on /dev/rnullb0"
	@echo "make test       rtags cargo tests + fmt-check + selftests in the guest"
	@echo "make deps       install packages and bindgen (idempotent)"
	@echo "make kernel     build or reuse the cached kernel"
	@echo "make fmt | fmt-check | clippy"
	@echo "Variables: KDIR=<kernel build tree>  CPUS=$(CPUS)  MEM=$(MEM)  RNULL_CACHE=<dir>"

deps:
	@$(SCRIPTS)/deps.sh

# A user-supplied KDIR is taken as is; otherwise build or reuse the cache.
kernel: deps
ifeq ($(origin KDIR),file)
	@$(SCRIPTS)/kernel.sh build
else
	@test -f "$(KDIR)/Module.symvers" || { echo "KDIR=$(KDIR) is not a built kernel tree" >&2; exit 1; }
endif

modules: kernel
	+$(KMAKE) modules

initramfs: modules
	@$(SCRIPTS)/initramfs.sh "$(KDIR)"

run: initramfs
	@$(SCRIPTS)/qemu.sh --kdir "$(KDIR)" --name run --job "$(SCRIPTS)/jobs/run.sh"

test-rtags:
	@$(SCRIPTS)/test-rtags.sh

test-guest: initramfs
	@$(SCRIPTS)/qemu.sh --kdir "$(KDIR)" --name selftests --job "$(SCRIPTS)/jobs/selftests.sh" \
		--env "RNULL_TESTS=$(RNULL_TESTS)"

# Userspace first: it is quick and needs no kernel.
test: deps
	@$(SCRIPTS)/test-all.sh

fmt:
	@rustfmt --config-path $(TOP)/.rustfmt.toml $$(find rnull rtags -name "*.rs" -not -path "*/target/*")

fmt-check:
	@rustfmt --check --config-path $(TOP)/.rustfmt.toml $$(find rnull rtags -name "*.rs" -not -path "*/target/*")

clippy: kernel
	+$(KMAKE) CLIPPY=1 KRUSTFLAGS=-Dwarnings modules

clean:
	-+$(KMAKE) clean
	rm -rf out
