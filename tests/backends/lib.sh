# shellcheck shell=bash
# What the backend scripts share: a server's pid in DIR/pid, whether it
# still runs, stopping it, and the verbs. The sourcing script sets NAME (how
# its process is told apart in /proc/PID/cmdline) and defines build, start
# and usage.

alive() { # DIR: the pid in DIR/pid is a running NAME
	local pid
	[ -s "$1/pid" ] || return 1
	pid=$(cat "$1/pid")
	[ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$NAME"
}

answers() { # PORT: something speaks HTTP there
	local code
	code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/" 2>/dev/null) || true
	[ -n "$code" ] && [ "$code" != 000 ]
}

stop() {
	[ $# -eq 1 ] || usage
	local dir=$1 pid i
	[ -s "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	if alive "$dir"; then
		kill -CONT "$pid" 2>/dev/null || true # a test may have frozen it (SIGSTOP)
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
	fi
	rm -f "$dir/pid"
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1
	shift
	case $cmd in
	build) [ $# -eq 0 ] || usage; build ;;
	start) start "$@" ;;
	stop) stop "$@" ;;
	*) usage ;;
	esac
}
