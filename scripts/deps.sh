#!/usr/bin/env bash
# Install what building, booting and testing rnull needs (with the
# argument qemu-build: what building the benchmark's QEMU needs; with check:
# what `make check` needs, no kernel). Idempotent: a package or tool that is
# already there is left alone, so this is cheap to run before every
# top-level target.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/env.sh
. "$here/env.sh"

packages=(
	linux-source-6.12 rustc-web rust-web-src
	clang lld llvm libclang-dev
	make flex bison bc libelf-dev libssl-dev xz-utils cpio kmod
	qemu-system-x86 busybox-static fio
	python3-matplotlib rust-web-clippy
	# the blktests guest's userland (scripts/initramfs-blktests.sh)
	bash dash coreutils util-linux mount bsdextrautils bsdutils findutils grep sed
	gawk diffutils procps gzip xfsprogs udev blktrace e2fsprogs f2fs-tools btrfs-progs dmsetup
	cryptsetup-bin sg3-utils fscrypt
)

# `deps.sh qemu-build`: what scripts/qemu-build.sh needs on top (the
# source package's tools and the libraries an x86_64-only QEMU links).
if [ "${1:-}" = qemu-build ]; then
	packages=(dpkg-dev patch xz-utils python3 ninja-build meson pkg-config gcc libglib2.0-dev
		libpixman-1-dev libfdt-dev zlib1g-dev qemu-system-x86 qemu-system-data)
fi
# `deps.sh check`: the system Python (the report's tests); the crates'
# toolchain is rustup's, below.
[ "${1:-}" = check ] && packages=(python3)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	sudo_cmd=()
	[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
	"${sudo_cmd[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = qemu-build ] && exit 0

if [ "${1:-}" = check ]; then
	command -v cargo >/dev/null || { echo "deps: make check needs cargo (rustup)" >&2; exit 1; }
	rustfmt --version >/dev/null 2>&1 || rustup component add rustfmt
	cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
	exit 0
fi

if ! "$BINDGEN" --version 2>/dev/null | grep -q "bindgen $BINDGEN_VERSION"; then
	echo "deps: installing bindgen-cli $BINDGEN_VERSION into $BINDGEN_ROOT"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION" \
		--root "$BINDGEN_ROOT"
fi
