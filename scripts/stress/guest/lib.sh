# shellcheck shell=sh
# Helpers of the stress engine's files. Results land in variables, not on
# stdout: under TCG every fork costs, and an operation's checks should not
# take longer than the operation.

# wr FILE VALUE: write VALUE to FILE; on failure WHY says why (echo: the
# shell's printf does not say why a write failed).
wr() {
	if echo "$2" >"$1" 2>"$S/err"; then
		return 0
	fi
	WHY=$(cat "$S/err")
	return 1
}

# cs_now: CS = the uptime in centiseconds.
cs_now() {
	read -r _up _ </proc/uptime
	CS=${_up%.*}${_up#*.}
}

# val FILE: V = its first line.
val() { read -r V <"$1"; }

# set_all DIR ATTR=VALUE...: write each; the first refusal fails.
set_all() {
	_dir=$1
	shift
	for _kv in "$@"; do
		wr "$_dir/${_kv%%=*}" "${_kv#*=}" || {
			ERR="${_dir##*/}/${_kv%%=*}=${_kv#*=} refused: $WHY"
			return 1
		}
	done
}

# expect_val FILE WANT: the file reads WANT.
expect_val() {
	val "$1"
	[ "$V" = "$2" ] && return 0
	ERR="${1#/sys/} reads '$V', not '$2'"
	return 1
}

# refused_with TEXT: the last wr failed with an error naming TEXT.
refused_with() {
	case "$WHY" in
	*"$1"*) return 0 ;;
	esac
	ERR="refused, but not with '$1': $WHY"
	return 1
}

# unbracket WORD...: W = the words with "[active]" as "active".
unbracket() {
	W=""
	for _w in "$@"; do
		_w=${_w#[}
		W="$W ${_w%]}"
	done
}

# nr_hctx DEV: N = its hardware queue directories.
nr_hctx() {
	N=0
	for _m in /sys/block/"$1"/mq/*; do
		[ -d "$_m" ] && N=$((N + 1))
	done
}

# desc TEXT: what the current operation does (the watchdog shows it if it
# hangs).
desc() {
	DESC=$*
	echo "$OPN $DESC" >"$S/beat"
}
