# shellcheck shell=sh
# Helpers of the hostile-input selftests (sourced after lib.sh): the ranges
# of the module parameters (from the module's modinfo) and of the writable
# files (hostile.table, else the parameter of the same name), the files to
# try, and runs of the hostile-input tool (selftests/tools/hostile-input.c),
# which generates the inputs and checks each outcome.

HOSTILE_TABLE="$(dirname "$0")/hostile.table"
HOSTILE_PARAMS=/tmp/hostile.params
command -v hostile-input >/dev/null || skip "the hostile-input tool is missing"

# "NAME RANGE" of every parameter, from modinfo's "parm=NAME:HELP (RANGE;
# default D)" (busybox modinfo wants modules.dep; the strings are the same).
strings "$RNULL_KO" | grep '^parm=' >/tmp/hostile.parm
sed -n 's/^parm=\([^:]*\):.*(\([^()]*\); default [^()]*)$/\1 \2/p' /tmp/hostile.parm \
	>"$HOSTILE_PARAMS"
[ -s "$HOSTILE_PARAMS" ] || fail "no parameter ranges in the modinfo of $RNULL_KO"
[ "$(wc -l <"$HOSTILE_PARAMS")" = "$(wc -l </tmp/hostile.parm)" ] ||
	fail "a parameter's description in modinfo states no range"

# param_range NAME: parameter NAME's range.
param_range() {
	awk -v n="$1" '$1 == n { sub(/^[^ ]+ /, ""); print }' "$HOSTILE_PARAMS"
}

# range_of WHERE NAME: the range of file NAME of WHERE (configfs, disk,
# hctx, host), nothing if it has none.
range_of() {
	r=$(awk -v w="$1" -v n="$2" '$1 == w && $2 == n { sub(/^[^ ]+ +[^ ]+ +/, ""); print }' \
		"$HOSTILE_TABLE")
	case "$r" in
	=*) param_range "${r#=}" ;;
	"") param_range "$2" ;;
	*) echo "$r" ;;
	esac
}

# load_args NAME: what parameter NAME needs beside it to load.
load_args() {
	awk -v n="$1" '$1 == "load" && $2 == n { sub(/^[^ ]+ +[^ ]+ +/, ""); print }' \
		"$HOSTILE_TABLE"
}

# sysfs_files: "WHERE PATH LABEL" for every writable sysfs file of rnull's,
# LABEL as the driver's log lines name it.
sysfs_files() {
	for f in $(find /sys/block/rnullb*/rnull /sys/block/rnullb*/mq /sys/module/rnull/host \
		-type f -perm -200 2>/dev/null | sort); do
		case "$f" in
		/sys/module/rnull/host/*) echo "host $f host/${f##*/}" ;;
		/sys/block/*/rnull/*) echo "disk $f ${f#/sys/block/}" ;;
		/sys/block/*/mq/*) echo "hctx $f ${f#/sys/block/}" ;;
		esac
	done
}

# configfs_files DIR: "configfs PATH LABEL" for every attribute `features`
# lists, in directory DIR of /sys/kernel/config/rnull.
configfs_files() {
	for a in $(tr ',' ' ' </sys/kernel/config/rnull/features); do
		echo "configfs /sys/kernel/config/rnull/$1/$a configfs rnull/$1/$a"
	done
}

# hostile ARGS...: run `hostile-input ARGS`, print what it found wrong and
# add its summary to the totals.
h_inputs=0 h_wrong=0 h_refusals=0 h_logged=0
hostile() {
	hostile-input "$@" >/tmp/hostile.out
	rc=$?
	grep -v '^SUMMARY' /tmp/hostile.out
	[ "$rc" -le 1 ] || fail "hostile-input $1 $2 $3 could not run (exit $rc)"
	# shellcheck disable=SC2046 # the summary's four numbers
	set -- $(sed -n 's/^SUMMARY inputs=\([0-9]*\) wrong=\([0-9]*\) refusals=\([0-9]*\) logged=\([0-9]*\)$/\1 \2 \3 \4/p' /tmp/hostile.out)
	[ $# -eq 4 ] || fail "hostile-input gave no summary"
	h_inputs=$((h_inputs + $1))
	h_wrong=$((h_wrong + $2))
	h_refusals=$((h_refusals + $3))
	h_logged=$((h_logged + $4))
	h_last="$1 inputs, $3 refused, $4 logged, $2 wrong"
}

# hostile_files: `hostile-input file` for each "WHERE PATH LABEL" line on
# stdin, with the range of its WHERE and name; $h_files counts them.
h_files=0
hostile_files() {
	while read -r where path label; do
		# No oracle for these (see the table).
		grep -q "^form  *${path##*/} " "$HOSTILE_TABLE" && continue
		range=$(range_of "$where" "${path##*/}")
		[ -n "$range" ] || fail "$where file ${path##*/} has no range: add it to $HOSTILE_TABLE"
		hostile file "$path" "$label" "$range"
		log "$label: $h_last"
		h_files=$((h_files + 1))
	done
}

# hostile_params CLASS...: `hostile-input param` for every parameter (the
# inputs spelled from its range unless hostile.table gives it all);
# $h_params counts them.
h_params=0
hostile_params() {
	while read -r name range; do
		# The kernel's fault_attr form has no oracle here (see the table).
		grep -q "^form  *$name " "$HOSTILE_TABLE" && continue
		only=specific
		grep -q "^full  *$name\$" "$HOSTILE_TABLE" && only=
		# shellcheck disable=SC2086 # $only: a class or none
		hostile param "$RNULL_KO" "$name" "$range" "nr_devices=0 $(load_args "$name")" "$@" $only
		log "parameter $name ($range): $h_last"
		h_params=$((h_params + 1))
	done <"$HOSTILE_PARAMS"
}

# hostile_verdict WHAT: log the totals; fail if any input was handled wrongly.
hostile_verdict() {
	log "$1: $h_inputs inputs, $h_refusals refused, $h_logged logged, $h_wrong handled wrongly"
	[ "$h_wrong" -eq 0 ] || fail "$h_wrong hostile inputs handled wrongly"
}
