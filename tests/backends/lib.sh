# shellcheck shell=bash
# What the backend scripts share: a server's pid in DIR/pid, whether it
# still runs, starting and stopping it, and the verbs. The sourcing script
# sets NAME (how its process is told apart in /proc/PID/cmdline) and
# START_TIMEOUT (seconds), and defines die, build, start and usage. Its
# start declares `local dir port pid`: start_args and launch set them.

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

start_args() { # DIR PORT: DIR made, its absolute path in dir; PORT in port, or die
	mkdir -p "$1"
	dir=$(realpath "$1")
	port=$2
	if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then die "bad port: $port"; fi
}

vacant() { # die if a server runs in $dir already, or something answers on $port
	if alive "$dir"; then die "already running in $dir (pid $(cat "$dir/pid"))"; fi
	if answers "$port"; then die "port $port is taken already"; fi
}

# LOG READY WHO LATE CMD...: CMD in a session of its own, its output in
# $dir/LOG, its pid in $dir/pid and pid; returns once `READY $port` holds
# (checked every 0.1 s). If the server exits first ("WHO exited at start")
# or is not ready in START_TIMEOUT seconds ("LATE in ...s", and stopped),
# dies after the last lines of its log.
launch() {
	local log=$dir/$1 ready=$2 who=$3 late=$4 i
	shift 4
	setsid "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/pid"
	for ((i = 0; i < START_TIMEOUT * 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$log" >&2
			rm -f "$dir/pid"
			die "$who exited at start"
		fi
		if "$ready" "$port"; then return 0; fi
		sleep 0.1
	done
	tail -n 20 "$log" >&2
	stop "$dir"
	die "$late in ${START_TIMEOUT}s"
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
