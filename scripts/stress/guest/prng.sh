# shellcheck shell=sh
# The stress run's only source of choices: a seeded pseudo-random sequence
# (Park and Miller's minimal standard generator, multiplier 48271), so that
# one STRESS_SEED always gives the same operations with the same arguments.
# Any shell with 64-bit arithmetic computes the same draws (busybox sh in
# the guest, dash or bash on the host).
#
# The draws land in variables, not on stdout: a command substitution would
# draw in a subshell and lose the state.

# prng_seed SEED: start the sequence of SEED (an integer, 0..2^31-1).
prng_seed() {
	# Nearby seeds spread apart; the state must be in 1..2^31-2.
	PRNG=$((($1 * 2654435761 + 12345) % 2147483646 + 1))
	_w=0
	while [ $_w -lt 8 ]; do
		rnd 2
		_w=$((_w + 1))
	done
}

# rnd N: R = the next draw in 0..N-1.
rnd() {
	PRNG=$((PRNG * 48271 % 2147483647))
	R=$((PRNG % $1))
}

# pick WORD...: R = one of the words.
pick() {
	rnd $#
	shift "$R"
	R=$1
}
