# shellcheck shell=sh
# The I/O under the operations, each loop a background job, each job at
# most 300 requests/s (under TCG, fio at full speed would take the vCPUs
# from the operations):
# - verify_loop: fio writes and verifies (crc32c) data on the devices that
#   are never powered off, in rounds; any I/O error or mismatch ends it
#   and leaves $S/fail.verify;
# - load_loop: fio reads and writes (plain and polled) on the device the
#   operations power off, remove and mark bad; its errors are expected
#   and ignored, it only keeps requests in flight.
# A loop counts its rounds in $S/rounds.NAME (the watchdog's sign of
# progress), stops between rounds while $S/pause exists (saying so in
# $S/paused.NAME) and ends at the end of a round once $S/stop exists.

# loop_gate NAME: 0 to run a round, 1 to end the loop; waits while paused.
loop_gate() {
	while [ -e "$S/pause" ] && [ ! -e "$S/stop" ]; do
		: >"$S/paused.$1"
		usleep 50000
	done
	rm -f "$S/paused.$1"
	[ ! -e "$S/stop" ]
}

# run_fio NAME ARGS...: fio in the background, its pid in $S/pid.fio.NAME
# (so that a failed run can stop it), its output in $S/NAME.out. Never a
# file of its own (see load_loop).
run_fio() {
	_name=$1
	shift
	fio --allow_file_create=0 "$@" >"$S/$_name.out" 2>&1 &
	echo $! >"$S/pid.fio.$_name"
	wait $!
}

# verify_loop DEV...: write and verify 4 MiB of each DEV, twice, per round
# (one fio for both passes: starting fio takes seconds under TCG).
verify_loop() {
	_jobs=""
	for _d in "$@"; do
		_jobs="$_jobs --name=$_d --filename=/dev/$_d"
	done
	_round=0
	while loop_gate verify; do
		_round=$((_round + 1))
		echo $_round >"$S/rounds.verify"
		cs_now
		_t0=$CS
		# shellcheck disable=SC2086 # one --name/--filename pair per device
		run_fio verify --direct=1 --ioengine=io_uring --iodepth=8 --rw=randwrite --rate_iops=300 \
			--bsrange=4k-64k --size=4m --loops=2 --verify=crc32c --do_verify=1 --verify_fatal=1 \
			--randseed=$_round --output-format=terse --terse-version=3 $_jobs
		_rc=$?
		cs_now
		echo $((CS - _t0)) >>"$S/round_cs.verify"
		# Terse v3 field 5: the job's first error (0: none).
		_errs=$(grep '^3;' "$S/verify.out" | cut -d';' -f5 | grep -vx 0)
		if [ $_rc != 0 ] || [ -n "$_errs" ]; then
			{
				echo "round $_round: exit $_rc, errors ${_errs:-none}:"
				grep -v '^3;' "$S/verify.out" | tail -n 8
			} >"$S/fail.verify"
			return 1
		fi
	done
}

# load_loop DEV: 1 s rounds of mixed I/O on DEV when it is there,
# polled every other round. fio gets a device node of its own, made from
# the disk's sysfs dev at each round: fio that does not find a device at
# its path (the disk went while fio started) takes the path for a regular
# file, and laying that file out unlinks whatever the path names by then,
# such as the /dev node of the disk made next. A node of the old disk's
# numbers fails I/O (ENXIO) and is made again for the next round.
load_loop() {
	_round=0
	while loop_gate load; do
		_round=$((_round + 1))
		echo $_round >"$S/rounds.load"
		rm -f "$S/load.node"
		if read -r _devt 2>/dev/null <"/sys/block/$1/dev" &&
			mknod "$S/load.node" b "${_devt%:*}" "${_devt#*:}" 2>/dev/null; then
			run_fio load --name=load --filename="$S/load.node" --direct=1 --ioengine=io_uring \
				--iodepth=16 --rw=randrw --rate_iops=300 --bsrange=4k-128k --offset=1m --size=32m \
				--time_based --runtime=1 --continue_on_error=all --hipri=$((_round % 2))
		else
			usleep 100000
		fi
	done
	return 0
}

# loops_stop: end both loops at the end of their rounds (waited for by the
# caller, under the watchdog).
loops_stop() {
	: >"$S/stop"
	rm -f "$S/pause"
}

# loops_wait: until both loops have ended.
loops_wait() {
	for _f in "$S"/pid.loop.*; do
		[ -e "$_f" ] || continue
		read -r _pid <"$_f"
		# Quiet: the shell would report a loop loops_kill ended.
		wait "$_pid" 2>/dev/null
	done
}

# loops_kill: stop the loops now, their fio first (after a failure).
loops_kill() {
	: >"$S/stop"
	for _f in "$S"/pid.fio.* "$S"/pid.loop.*; do
		[ -e "$_f" ] || continue
		read -r _pid <"$_f"
		kill "$_pid" 2>/dev/null
	done
}

# loops_pause: wait (up to IO_TIMEOUT s) until both loops are between
# rounds, then leave them there; loops_resume lets them go.
loops_pause() {
	rm -f "$S"/paused.*
	: >"$S/pause"
	_t=0
	while [ ! -e "$S/paused.verify" ] || [ ! -e "$S/paused.load" ]; do
		check_io || return 1
		_t=$((_t + 1))
		if [ $_t -gt $((IO_TIMEOUT * 10)) ]; then
			ERR="a fio round did not end within $IO_TIMEOUT s"
			return 1
		fi
		usleep 100000
	done
}

loops_resume() { rm -f "$S/pause"; }
