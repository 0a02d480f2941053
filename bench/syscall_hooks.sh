#!/usr/bin/env bash
# What memory mode's syscall hooks cost every other process on the host,
# side by side: a loop of one-byte dd reads and writes (two syscalls per
# byte) alone, under `record --mode memory -p` of an idle process (the dd
# is not a target: what the host pays), alone, under the same without
# CAP_SYS_ADMIN (it cannot mount a private tracefs, so it takes the raw
# syscall tracepoints), alone. Both run in a mount namespace with tracefs
# and debugfs unmounted, as on a fresh host. A run's slowdown is its time
# over the mean of the two alone runs around it; medians over ROUNDS.
#   bash bench/syscall_hooks.sh [ROUNDS] [BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
BYTES=${2:-3000000}
PYEBPF=$PWD/build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$PYEBPF" ] || { echo "bench: run 'make'" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill "$idle" 2>/dev/null || true' EXIT
sleep 3600 &
idle=$!

loop() { # seconds the dd loop took
	local s e
	s=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count="$BYTES" 2>/dev/null
	e=$(date +%s%N)
	echo "$(((e - s) / 1000000))"
}
under() { # $@: a prefix for pyebpf; the loop's time while it records
	"$@" "$PYEBPF" record --mode memory -p "$idle" -d 3600 -o "$tmp/m.pb.gz" 2>"$tmp/err" &
	local rec=$! t
	sleep 3 # the programs loaded and attached
	t=$(loop)
	kill -INT "$rec"
	wait "$rec" || { echo "bench: pyebpf failed: $(tail -n1 "$tmp/err")" >&2; exit 1; }
	echo "$t"
}
export -f loop under
export PYEBPF BYTES tmp idle
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
nomount=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin)
unmounted='for m in $(awk '"'"'$3 == "tracefs" || $3 == "debugfs" { print $2 }'"'"' /proc/mounts | sort -r); do umount -l "$m"; done; exec "$@"'
for r in $(seq "$ROUNDS"); do
	a=$(loop)
	own=$(unshare --mount --propagation private bash -c "$unmounted" bash bash -c 'under' )
	b=$(loop)
	raw=$(unshare --mount --propagation private bash -c "$unmounted" bash bash -c "under ${nomount[*]}")
	c=$(loop)
	awk -v a="$a" -v b="$b" -v c="$c" -v o="$own" -v w="$raw" \
		'BEGIN { printf "%.1f %.1f\n", 100 * (o / ((a + b) / 2) - 1), 100 * (w / ((b + c) / 2) - 1) }' >>"$tmp/rounds"
	echo "round $r: alone ${a} ms, own tracepoints ${own} ms, alone ${b} ms, raw tracepoints ${raw} ms, alone ${c} ms"
done
echo "dd of $BYTES bytes, $ROUNDS rounds, median slowdown of a process that is not a target:"
echo "  memory mode at the syscalls' own tracepoints (ids from a private tracefs): +$(cut -d' ' -f1 "$tmp/rounds" | median)%"
echo "  memory mode at the raw syscall tracepoints (no right to mount):            +$(cut -d' ' -f2 "$tmp/rounds" | median)%"
