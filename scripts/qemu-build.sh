#!/usr/bin/env bash
# Build (or reuse) the QEMU that runs the guest on virtual time.
#
#   scripts/qemu-build.sh key     print the cache key
#   scripts/qemu-build.sh path    print the binary's path for that key
#   scripts/qemu-build.sh build   build it unless a finished build is cached
#
# It is Debian's own QEMU (the source package of the installed
# qemu-system-x86, fetched from deb.debian.org through a private apt list)
# with scripts/qemu/*.patch on top, configured for x86_64 system emulation
# and nothing else; firmware comes from the installed qemu-system-data.
#
# Why: with several vCPUs on -icount, QEMU 7.2's main loop may warp the
# virtual clock while the round-robin vCPU thread is inside a run whose
# instructions it has not counted yet (scripts/qemu/icount-rr-warp.patch
# says how). Where the warp falls depends on host timing, so multi-vCPU
# guests drift apart between boots: one vCPU repeats, four or eight do not.
# The key hashes every input: the package version, the Debian release, the
# configure arguments, the patches and RECIPE.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/env.sh
. "$here/env.sh"

RECIPE=1
patches=("$here"/qemu/*.patch)
configure_args=(--target-list=x86_64-softmmu --without-default-features --enable-fdt=system
	--disable-werror --disable-docs
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu)

# The source package version of the installed qemu-system-x86 (a binNMU's
# binary version has no source of its own), epoch included, as apt wants it.
version() { dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null || echo none; }

# The Debian release whose source archive has that version.
codename() { (. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}"); }

key() {
	{
		version
		codename
		echo "recipe=$RECIPE"
		echo "${configure_args[*]}"
		cat "${patches[@]}"
	} | sha256sum | cut -c1-16
}

dir() { echo "$RNULL_CACHE/qemu-$(key)"; }

path() { echo "$(dir)/qemu-system-x86_64"; }

# fetch DEST: downloads the source package of exactly version() and
# unpacks it into DEST/qemu. No other version: the key names this one.
fetch() {
	local dest=$1 apt_dir=$1/apt suite
	suite=$(codename)
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	cat >"$apt_dir/sources.list" <<-EOF
		deb-src http://deb.debian.org/debian $suite main
		deb-src http://deb.debian.org/debian $suite-updates main
		deb-src http://deb.debian.org/debian-security $suite-security main
	EOF
	local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
	apt-get "${apt_opts[@]}" -qq update
	(cd "$dest" && apt-get "${apt_opts[@]}" -qq source --download-only "qemu=$(version)")
	dpkg-source -x "$dest"/qemu_*.dsc "$dest/qemu" >/dev/null
}

# compile WORK: fetch, patch (exactly: no fuzz), configure, build.
compile() {
	local work=$1 p
	fetch "$work"
	for p in "${patches[@]}"; do
		patch -d "$work/qemu" -p1 --forward --batch --fuzz=0 <"$p"
	done
	(cd "$work/qemu" && ./configure "${configure_args[@]}")
	ninja -C "$work/qemu/build" qemu-system-x86_64
}

build() {
	local out work log
	# First: the key names the installed qemu-system-x86's version.
	"$here/deps.sh" qemu-build
	out=$(dir)
	cached "$out" "$out/qemu-system-x86_64" qemu && return 0
	work="$RNULL_CACHE/qemu-src-$(key)"
	rm -rf "$work"
	mkdir -p "$work" "$out"
	log="$out/build.log"
	echo "qemu: building $(version) with ${patches[*]##*/} in $work (log: $log)"
	local start=$SECONDS
	# Not in an `if` or on the left of `||`: bash turns `set -e` off there,
	# in subshells too, and a failed patch would go on to build an
	# unpatched QEMU.
	local rc=0
	set +e
	(set -e; compile "$work") >"$log" 2>&1
	rc=$?
	set -e
	if [ "$rc" != 0 ]; then
		echo "qemu: build failed, see $log" >&2
		tail -n 20 "$log" >&2
		rm -rf "$work"
		return 1
	fi
	version >"$out/version"
	install -m 755 "$work/qemu/build/qemu-system-x86_64" "$out/qemu-system-x86_64.tmp"
	mv "$out/qemu-system-x86_64.tmp" "$out/qemu-system-x86_64"
	rm -rf "$work"
	echo "qemu: built in $((SECONDS - start)) s: $out/qemu-system-x86_64"
}

case "${1:-}" in
key) key ;;
path) path ;;
build) build ;;
*)
	echo "usage: $0 key|path|build" >&2
	exit 2
	;;
esac
