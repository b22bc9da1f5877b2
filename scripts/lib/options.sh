# Sourced by scripts/*: the checks of their command-line options, before anything heavy runs.
#   take "$@"    the option in $1 takes a value: $2 must be there, and $1 given once
#   once OPTION  an option without a value, given once
# A missing value or an option given twice prints the message, then the script's usage (its own
# usage function), and exits 2: never "unbound variable" from set -u nor a failed shift.
# (contribs/cluster/dlsched-cluster is installed alone and carries its own copy of these lines.)
_options_seen=" "
once() {
	case "$_options_seen" in
	*" $1 "*) echo "$(basename "$0"): $1 is given twice: give it once" >&2; usage >&2; exit 2 ;;
	esac
	_options_seen="$_options_seen$1 "
}
take() {
	[ $# -ge 2 ] || { echo "$(basename "$0"): $1 needs a value" >&2; usage >&2; exit 2; }
	once "$1"
}
# help_if_asked "$@": with -h or --help anywhere among the arguments, print the script's header
# comment (its usage) and exit 0, before anything is installed, built or started.
help_if_asked() {
	local a
	for a in "$@"; do
		case "$a" in
		-h | --help)
			sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"
			exit 0
			;;
		esac
	done
}
