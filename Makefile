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

.PHONY: all deps kernel modules initramfs run bench check test test-debug test-rtags test-guest \
	test-guest-blktests blktests stress fmt fmt-check param-table clippy doc rust-analyzer shell clean help

all: modules

help:
	@echo "Build and run:"
	@echo "  make | make modules  build rnull/rnull.ko (deps and kernel first if missing)"
	@echo "  make deps            install packages and bindgen (idempotent)"
	@echo "  make kernel          build or reuse the cached kernel (~15 min cold)"
	@echo "  make initramfs       the guest's initramfs (busybox, fio, the modules, the selftests)"
	@echo "  make run             boot the guest, load rnull, run fio on /dev/rnullb0"
	@echo "  make shell           interactive guest; PARAMS=\"...\" loads rnull with them"
	@echo "Test:"
	@echo "  make check           everything that needs no kernel (crates' tests, loom, clippy,"
	@echo "                       rustfmt, check-*.py, report tests, cargo doc); ~2.5 min cold"
	@echo "  make test            check, then clippy, the module build, selftests and quick"
	@echo "                       blktests in the guest (~8 min once the kernel is built)"
	@echo "  make test-debug      the selftests on the debug kernel (lockdep, KASAN, kmemleak;"
	@echo "                       its first build ~20 min); RNULL_TESTS as for test-guest"
	@echo "  make test-guest      the selftests alone; RNULL_TESTS=\"050 051\" picks some,"
	@echo "                       RNULL_TEST_TIMEOUT=<s> overrides selftests/settings' timeout"
	@echo "  make test-guest-blktests  the selftests (RNULL_TESTS) on the blktests kernel, in"
	@echo "                       its guest (util-linux, f2fs-tools, btrfs-progs, fs modules: 105)"
	@echo "  make test-rtags      the userspace crates' cargo tests, loom and clippy"
	@echo "  make blktests        blktests on the blktests kernel: device tests on rnull, the rnull"
	@echo "                       group, every null_blk test with C null_blk and rnull side by side"
	@echo "  make stress          seeded random run-time operations under fio verify, one guest;"
	@echo "                       SEED=1 OPS=500 FLAVOUR=debug STRESS_SKIP=\"hotplug ...\"; a failure"
	@echo "                       prints the seed and the OPS that replay it"
	@echo "  make clippy | fmt | fmt-check"
	@echo "Benchmark:"
	@echo "  make bench           rnull against null_blk and rnull_mod; report in out/bench/<time>/,"
	@echo "                       RECORD=1 replaces the scenarios' reference runs in bench/results/"
	@echo "                       SCENARIOS=\"peak policies ...\" ROUNDS=<n> RUNTIME=<s> CLOCK=virtual|wall"
	@echo "                       PEAK_CPUS=\"1 4\" POLICIES_SUBS=... (scripts/bench/run.sh lists all)"
	@echo "Other:"
	@echo "  make doc             rustdoc of the driver and the crates in out/"
	@echo "  make param-table     the README's parameter table from rnull.ko's .modinfo"
	@echo "  make rust-analyzer   rust-project.json for rust-analyzer"
	@echo "  make clean           the module build and out/"
	@echo "Variables: KDIR=<kernel build tree>  CPUS=$(CPUS)  MEM=$(MEM)  RNULL_CACHE=<dir>"
	@echo "  blktests: BLKTESTS=<checkout>  TESTS=\"block/003 ...\"  GROUP_TESTS=\"rnull\""
	@echo "            NULL_BLK_TESTS=\"block/006 ...\"|all|none  QUICK=<s>  TIMEOUT=<s>"

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

# Benchmarks against C null_blk and in-tree rnull_mod in one guest:
# make bench [CPUS=2] [ROUNDS=2] [RUNTIME=2] [SCENARIOS="peak fairness ..."]
# (the defaults of the virtual clock; scripts/bench/run.sh has the rest)
bench: initramfs
	@KDIR="$(KDIR)" $(SCRIPTS)/bench/run.sh

test-rtags:
	@$(SCRIPTS)/test-rtags.sh

test-guest: initramfs
	@$(SCRIPTS)/qemu.sh --kdir "$(KDIR)" --name selftests --job "$(SCRIPTS)/jobs/selftests.sh" \
		--env "RNULL_TESTS=$(RNULL_TESTS)" --env "RNULL_TEST_TIMEOUT=$(RNULL_TEST_TIMEOUT)"

# The whole selftest suite on the debug kernel (lockdep, KASAN, kmemleak,
# DEBUG_LIST, hrtimer debug objects, Rust debug assertions). Any splat, KASAN
# report or kmemleak leak fails it. First build: about 20 minutes. A test
# may take four times selftests/settings' timeout there.
test-debug: RNULL_TEST_TIMEOUT ?= 2400
test-debug: deps
	@FLAVOUR=debug $(SCRIPTS)/kernel.sh build
	@$(MAKE) -s modules initramfs KDIR=$$(FLAVOUR=debug $(SCRIPTS)/kernel.sh dir)
	@MEM=2G RNULL_TIMEOUT=5400 $(SCRIPTS)/qemu.sh --kdir $$(FLAVOUR=debug $(SCRIPTS)/kernel.sh dir) \
		--name selftests-debug --job "$(SCRIPTS)/jobs/selftests.sh" --env "RNULL_TESTS=$(RNULL_TESTS)" \
		--env "RNULL_TEST_TIMEOUT=$(RNULL_TEST_TIMEOUT)" \
		| tee out/selftests-debug.tap; \
	status=$${PIPESTATUS[0]}; \
	echo "$$(grep -c '^ok ' out/selftests-debug.tap) passed, $$(grep -c '^not ok ' out/selftests-debug.tap) failed"; \
	exit $$status

# blktests (linux-blktests, used from BLKTESTS, never copied into this repo)
# on the blktests kernel (base plus scripts/config/blktests.config, or
# KDIR): its device tests with TEST_DEVS on rnull devices, the rnull group
# (blktests/tests/rnull), then every test that uses null_blk with C null_blk
# and with rnull as null_blk, side by side. TAP in out/blktests.tap, the
# table in out/blktests-null_blk.md.
# make blktests [BLKTESTS=../shared/blktests] [TESTS="block/003 ..."]
#               [GROUP_TESTS="rnull/004"] [NULL_BLK_TESTS="block/006 ..."|all|none]
#               [QUICK=3 | TIMEOUT=30] [RNULL_BLKTESTS_CONFIGS=...]
# Its guest has 4 vCPUs and 2 GiB unless CPUS or MEM is given: block/038
# sets null_blk's submit_queues to 4, which null_blk refuses on fewer CPUs,
# and scsi/011 makes a 1 GiB scsi_debug disk.
BLKTESTS ?= $(abspath $(TOP)/../shared/blktests)
export BLKTESTS
BLKTESTS_CPUS = $(if $(filter command line environment,$(origin CPUS)),$(CPUS),4)
BLKTESTS_MEM = $(if $(filter command line environment,$(origin MEM)),$(MEM),2G)
blktests: deps
ifeq ($(origin KDIR),file)
	@FLAVOUR=blktests $(SCRIPTS)/kernel.sh build
	@CPUS=$(BLKTESTS_CPUS) MEM=$(BLKTESTS_MEM) $(SCRIPTS)/blktests.sh "$$(FLAVOUR=blktests $(SCRIPTS)/kernel.sh dir)" full
else
	@CPUS=$(BLKTESTS_CPUS) MEM=$(BLKTESTS_MEM) $(SCRIPTS)/blktests.sh "$(KDIR)" full
endif

# The selftests in the blktests guest (scripts/blktests.sh selftests): its
# kernel and userland, for the tests that need file systems (105).
# make test-guest-blktests [RNULL_TESTS="105"] [KDIR=<blktests-like tree>]
test-guest-blktests: deps
ifeq ($(origin KDIR),file)
	@FLAVOUR=blktests $(SCRIPTS)/kernel.sh build
	@RNULL_TESTS="$(RNULL_TESTS)" RNULL_TEST_TIMEOUT="$(RNULL_TEST_TIMEOUT)" $(SCRIPTS)/blktests.sh "$$(FLAVOUR=blktests $(SCRIPTS)/kernel.sh dir)" selftests
else
	@RNULL_TESTS="$(RNULL_TESTS)" RNULL_TEST_TIMEOUT="$(RNULL_TEST_TIMEOUT)" $(SCRIPTS)/blktests.sh "$(KDIR)" selftests
endif

# Seeded random run-time operations under fio verify (scripts/stress/run.sh):
# make stress [SEED=1] [OPS=500] [FLAVOUR=debug | KDIR=<tree>]
stress: deps
	@$(SCRIPTS)/stress/run.sh

# Everything that needs no kernel; its own light dependencies only.
check:
	@$(SCRIPTS)/deps.sh check
	@$(SCRIPTS)/check.sh

# `check` first: it is quick and needs no kernel.
test: deps
	@$(SCRIPTS)/test-all.sh

# The README's parameter table, from the module's .modinfo (see params.rs).
param-table: modules
	@python3 $(SCRIPTS)/param-table.py $(TOP)/rnull/rnull.ko

# The driver and every crate beside it (a directory with a Cargo.toml).
RUST_DIRS = rnull $(patsubst %/Cargo.toml,%,$(wildcard */Cargo.toml))
RUST_SOURCES = $$(find $(RUST_DIRS) -name "*.rs" -not -path "*/target/*")

fmt:
	@rustfmt --config-path $(TOP)/.rustfmt.toml $(RUST_SOURCES)

fmt-check:
	@rustfmt --check --config-path $(TOP)/.rustfmt.toml $(RUST_SOURCES)

clippy: kernel
	+$(KMAKE) CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver KRUSTFLAGS=-Dwarnings modules

# rust-project.json for rust-analyzer. The kernel's own `make M=... rust-analyzer`
# fails on 6.12 for external modules, so call its generator directly.
rust-analyzer: kernel
	@python3 $$(realpath $(KDIR)/source)/scripts/generate_rust_analyzer.py \
		--cfgs='core=--cfg no_fp_fmt_parse' 2024 $$(realpath $(KDIR)/source) \
		$$(realpath $(KDIR)) $$($(RUSTC) --print sysroot) $(RUST_LIB_SRC) $(TOP) \
		>$(TOP)/rust-project.json
	@echo "rust-analyzer: wrote $(TOP)/rust-project.json"

# rustdoc for the driver (its abstraction layer included) and for the crates.
doc: modules
	@$(SCRIPTS)/doc.sh "$(KDIR)"

# An interactive guest: make shell [CPUS=4] [MEM=2G] [PARAMS="nr_devices=2"]
# rnull is loaded with PARAMS if given; 'exit' or Ctrl-A X leaves.
shell: initramfs
	@$(SCRIPTS)/qemu.sh --kdir "$(KDIR)" --name shell --shell --env "RNULL_PARAMS=$(PARAMS)"

clean:
	-+$(KMAKE) clean
	rm -rf out
