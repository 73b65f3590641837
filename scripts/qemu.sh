#!/usr/bin/env bash
# Boot the guest kernel with the base initramfs plus one job, under TCG.
#
# usage: scripts/qemu.sh --kdir DIR --name NAME (--job SCRIPT | --shell)
#                        [--env 'VAR=value ...'] [--timeout SECONDS]
#                        [--initrd-extra ARCHIVE]...
#
# --initrd-extra appends another cpio archive after the base one (its files
# win), e.g. out/initramfs-blktests.cpio.gz for `make blktests`.
#
# Environment: RNULL_CLOCK (wall, the default: multi-threaded TCG; virtual:
# time counted in guest instructions), RNULL_SEED (virtual: the guest's
# random seed, default 1), CPUS, MEM, KCMDLINE, RNULL_TIMEOUT.
#
# Logs go to out/logs/NAME-<time>/ (serial.log, dmesg.log); out/logs/latest
# points at the newest. Exit status: the job's, or 1 if the guest did not
# report one (crash, hang, timeout), or if the kernel log has a WARN, BUG,
# Oops, lockdep or KASAN line.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kdir="" name=run job="" shell=0 env_lines="" timeout_s=${RNULL_TIMEOUT:-1800} extras=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) kdir=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--job) job=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--env) env_lines+="$2"$'\n'; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--initrd-extra) extras+=("$2"); shift 2 ;;
	*) echo "qemu.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$kdir" ] || { echo "qemu.sh: --kdir is required" >&2; exit 2; }
[ -n "$job" ] || [ "$shell" = 1 ] || { echo "qemu.sh: --job or --shell is required" >&2; exit 2; }

logdir="$top/out/logs/$name-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logdir"
ln -sfn "$logdir" "$top/out/logs/latest"

# The job travels as a second cpio archive appended to the base one.
jobroot=$(mktemp -d)
trap 'rm -rf "$jobroot"' EXIT
mkdir -p "$jobroot/job"
if [ -n "$job" ]; then
	cp "$job" "$jobroot/job/job.sh"
fi
{
	echo "RNULL_INTERACTIVE=$shell"
	# Each --env line is VAR=value; quote the value for the guest shell.
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		printf "export %s='%s'\n" "${line%%=*}" "${line#*=}"
	done <<<"$env_lines"
} >"$jobroot/job/env"
# The same bytes on every boot (no host times or inode numbers), as the
# base archive (scripts/initramfs.sh): the guest unpacks both on virtual
# time, and on several vCPUs a few instructions more or less there change
# the order in which the vCPUs take turns for the rest of the run.
find "$jobroot/job" -exec touch -h -d @0 {} +
(cd "$jobroot" && find job | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible |
	gzip -n -1) >"$jobroot/job.cpio.gz"
cat "$top/out/initramfs.cpio.gz" "${extras[@]}" "$jobroot/job.cpio.gz" >"$jobroot/run.cpio.gz"

# RNULL_CLOCK=virtual runs the guest on a clock derived from the number of
# instructions it executes (one virtual ns each, idle time skipped, vCPUs
# round robin on one host thread): what it measures repeats exactly.
# The default, wall, is multi-threaded TCG on the host's clock.
# On virtual time -seed (RNULL_SEED, default 1) pins the guest's random
# numbers (RDRAND: KASLR, the kernel's pool) and a fixed RTC base its date,
# and both archives are the same bytes on every build and boot. Nothing
# from the host reaches the guest while it runs: -nodefaults drops the
# default NIC, whose user network (slirp) sends IPv6 router advertisements
# at random virtual times, and a job's console is a file (below). With
# several vCPUs QEMU 7.2 itself drifts (its main loop may warp the clock in
# the middle of a vCPU's run); the build of scripts/qemu-build.sh has the
# fix and is used when it is there (`make bench` builds it), else the
# installed QEMU with a warning.
qemu_bin=qemu-system-x86_64
boot_args=
case "${RNULL_CLOCK:-wall}" in
virtual)
	accel=tcg
	clock_args=(-icount shift=0,sleep=off -rtc "clock=vm,base=2026-01-01T00:00:00"
		-seed "${RNULL_SEED:-1}")
	patched=$("$top/scripts/qemu-build.sh" path)
	if [ -x "$patched" ]; then
		qemu_bin=$patched
		# Round-robin turns of at most 20 virtual µs (20,000 instructions;
		# scripts/qemu/icount-rr-turn.patch). A vCPU's turn is otherwise
		# its budget, set when the turn starts to the next deadline of any
		# timer (up to the 100 ms round-robin kick); an interrupt another
		# vCPU raises for it (an IPI: one host thread runs them all, so no
		# kick) waits for that. With the bound it waits at most a turn per
		# other vCPU (140 µs at 8), as CPUs side by side would hardly wait.
		export QEMU_ICOUNT_RR_TURN=${QEMU_ICOUNT_RR_TURN:-20000}
	elif [ "${CPUS:-2}" -gt 1 ]; then
		echo "qemu: warning: $patched not built (scripts/qemu-build.sh build);" \
			"the installed QEMU's ${CPUS:-2} vCPUs drift apart from boot to boot" >&2
	fi
	;;
# On the wall clock a loaded host can stall a vCPU through the kernel's
# check that the IO-APIC timer ticks ("IO-APIC + timer doesn't work!", a
# panic at boot); virtual time cannot stall, and keeps its boot unchanged.
wall) accel=${ACCEL:-tcg,thread=multi} clock_args=() boot_args=no_timer_check ;;
*) echo "qemu.sh: RNULL_CLOCK=${RNULL_CLOCK} is not virtual or wall" >&2; exit 2 ;;
esac
qemu=("$qemu_bin" -accel "$accel" "${clock_args[@]}" -cpu max -smp "${CPUS:-2}" -m "${MEM:-1G}"
	-kernel "$kdir/arch/x86/boot/bzImage" -initrd "$jobroot/run.cpio.gz"
	-append "console=ttyS0 panic=-1 oops=panic $boot_args ${KCMDLINE:-}"
	-nodefaults -nographic -no-reboot)

serial="$logdir/serial.log"
echo "qemu: $qemu_bin, ${CPUS:-2} vCPUs, ${MEM:-1G}, $accel ${clock_args[*]}; logs in $logdir"
if [ "$shell" = 1 ]; then
	# Interactive: the console is this terminal. Ctrl-A X leaves QEMU.
	"${qemu[@]}" -serial mon:stdio | tee "$serial"
else
	# The console goes to a regular file, never to a pipe: QEMU makes its
	# stdout non-blocking, and when a pipe is full it sends the byte later
	# from its main loop (host time) while the guest's 8250 driver spins
	# on the port. tail follows the file for the live view.
	# --foreground keeps timeout (and QEMU) in our process group, so a
	# kill of the group (CI's) takes QEMU along.
	: >"$serial"
	qemu_pid=""
	trap '[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null || true; rm -rf "$jobroot"' EXIT
	timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" -chardev "file,id=con,path=$serial" \
		-serial chardev:con -monitor none </dev/null &
	qemu_pid=$!
	tail -n +1 -f --pid="$qemu_pid" "$serial" | sed -u -n '/RNULL-GUEST-START/,/RNULL-DMESG-BEGIN/p' |
		grep --line-buffered -v 'RNULL-DMESG-BEGIN' || true
	qemu_status=0
	wait "$qemu_pid" || qemu_status=$?
	[ "$qemu_status" != 124 ] || echo "qemu: timed out after $timeout_s s" >&2
fi

tr -d '\r' <"$serial" | sed -n '/^RNULL-DMESG-BEGIN/,/^RNULL-DMESG-END/p' |
	sed '1d;$d' >"$logdir/dmesg.log"
# Without the guest's own dump (crash, hang), keep the console's kernel lines.
[ -s "$logdir/dmesg.log" ] || grep -E '^\[ *[0-9]+\.[0-9]+\]' "$serial" >"$logdir/dmesg.log" || true

rc=$(tr -d '\r' <"$serial" | sed -n 's/^RNULL-EXIT=\([0-9]*\)$/\1/p' | tail -n1)
# Splats: WARN()/BUG() and friends, lockdep, KASAN and kmemleak reports.
# The debug kernel's own boot banners mention lockdep and kmemleak; skip them.
splat_re='WARNING:|\bBUG\b|Oops|lockdep|KASAN|UBSAN|kmemleak: [0-9]+ new suspected|Kernel panic|general protection'
benign_re='RCU lockdep checking is enabled|Lock dependency validator|lockdep: fixing up alternatives'
splats=$(grep -E "$splat_re" "$logdir/dmesg.log" | grep -vE "$benign_re" || true)

status=0
if [ -z "$rc" ]; then
	echo "qemu: the guest did not report an exit status (crash, hang or timeout)" >&2
	status=1
elif [ "$rc" != 0 ]; then
	status=$rc
fi
if [ -n "$splats" ]; then
	echo "qemu: kernel log has $(wc -l <<<"$splats") WARN/BUG/Oops/lockdep/KASAN line(s):" >&2
	head -n 5 <<<"$splats" >&2
	status=1
fi
if [ "$status" != 0 ]; then
	first=$(grep -E "$splat_re" "$logdir/dmesg.log" | grep -vE "$benign_re" | head -n1)
	[ -n "$first" ] || first=$(grep -v 'Command line' "$logdir/dmesg.log" | grep -m1 -iE 'error|fail' || true)
	echo "qemu: FAILED (status $status). serial: $serial  kernel log: $logdir/dmesg.log" >&2
	[ -z "$first" ] || echo "qemu: first kernel error line: $first" >&2
fi
exit "$status"
