#!/usr/bin/env bash
# What pushing costs and sends, on a busy host: gunicorn (4 workers) serving
# bench/push_service.py under a steady load from 4 client processes, the
# whole machine recorded at 99 Hz in INTERVALS intervals of 15 s, pushed
# live to a Pyroscope stand-in (tests/backends/pyroscope.sh) and an
# OpenTelemetry Collector (tests/backends/otelcol.sh) side by side.
# Reports bytes sent per interval and backend, the senders' CPU per push and
# as a share of one core, then replays the spool as AGENTS hosts into one
# Pyroscope stand-in at once (intervals/s it takes), and from those the
# ingest bandwidth of a 1,000-host fleet.
#   bash bench/push.sh [INTERVALS] [AGENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
INTERVALS=${1:-8}
AGENTS=${2:-50}
PYEBPF=build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
make -s backends
tmp=$(mktemp -d)
pids=()
cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	bash tests/backends/pyroscope.sh stop "$tmp/py" 2>/dev/null || true
	bash tests/backends/pyroscope.sh stop "$tmp/py2" 2>/dev/null || true
	bash tests/backends/otelcol.sh stop "$tmp/oc" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

bash tests/backends/pyroscope.sh start "$tmp/py" 25040 2>/dev/null
bash tests/backends/otelcol.sh start "$tmp/oc" 25318 2>/dev/null
(cd bench && exec gunicorn -w 4 -b 127.0.0.1:25080 push_service:app 2>/dev/null) &
pids+=($!)
sleep 2
for _ in 1 2 3 4; do
	python3 -c '
import urllib.request, itertools
for path in itertools.cycle(["/page", "/api", "/hash", "/api"]):
    try:
        urllib.request.urlopen("http://127.0.0.1:25080" + path).read()
    except OSError:
        pass
' &
	pids+=($!)
done

secs=$((INTERVALS * 15))
# pyebpf's whole CPU (sampling, naming, writing, pushing) from its summary line.
own_cpu() { sed -n 's/.*cost: pyebpf \([0-9.]*\) s CPU while recording.*/\1/p' "$1" | tail -n1; }
echo "bench: recording the whole machine for ${secs} s (99 Hz, 15 s intervals): without pushing, then pushing to both backends"
$PYEBPF record -a --continuous "$tmp/control" --interval 15s -d "$secs" 2>"$tmp/err0"
$PYEBPF record -a --continuous "$tmp/spool" --interval 15s -d "$secs" \
	--push http://127.0.0.1:25040 --otlp http://127.0.0.1:25318 2>"$tmp/err"
grep -h 'pyebpf: pushed [0-9]' "$tmp/err" | tail -1
cpu0=$(own_cpu "$tmp/err0")
cpu1=$(own_cpu "$tmp/err")

# Per interval and backend: the bytes each request carried (from a backfill
# of the same spool with fresh journals: one line per interval and backend).
mkdir "$tmp/again"
cp "$tmp"/spool/pyebpf-*.pb.gz "$tmp/again/"
bash tests/backends/pyroscope.sh start "$tmp/py2" 25041 2>/dev/null
$PYEBPF push "$tmp/again" --push http://127.0.0.1:25041 --otlp http://127.0.0.1:25318 2>"$tmp/push.err"
files=$(find "$tmp/spool" -name "pyebpf-*.pb.gz" | wc -l)
disk=$(cat "$tmp"/spool/pyebpf-*.pb.gz | wc -c)
py_bytes=$(sed -n 's/.*to http:\/\/127.0.0.1:25041 (\([0-9]*\) profiles, \([0-9]*\) bytes).*/\2/p' "$tmp/push.err" | awk '{s+=$1} END {print s+0}')
oc_bytes=$(sed -n 's/.*to http:\/\/127.0.0.1:25318 (\([0-9]*\) profiles, \([0-9]*\) bytes).*/\2/p' "$tmp/push.err" | awk '{s+=$1} END {print s+0}')
cpu=$(sed -n 's/.*KB, \([0-9.]*\) s of CPU.*/\1/p' "$tmp/err" | tail -n1)
pushes=$(sed -n 's/.*pyebpf: pushed \([0-9]*\) intervals.*/\1/p' "$tmp/err" | tail -n1)

printf "\n%-44s %12s\n" "per interval (15 s, 99 Hz, this host)" "bytes"
printf "%-44s %12d\n" "interval file on disk (pprof + timeline)" $((disk / files))
printf "%-44s %12d\n" "Pyroscope PushRequest (gzip'd pprof inside)" $((py_bytes / files))
printf "%-44s %12d\n" "OTLP ExportProfilesServiceRequest (gzip)" $((oc_bytes / files))
awk -v c="$cpu" -v n="$pushes" -v s="$secs" -v c0="$cpu0" -v c1="$cpu1" 'BEGIN {
	printf "\nsenders: %.4f s of CPU for %d pushes (both backends): %.2f ms a push, %.4f%% of one core\n",
		c, n, n ? 1000 * c / n : 0, 100 * c / s
	printf "pyebpf in all: %.3f s of CPU without pushing, %.3f s pushing to both (%.3f%% vs %.3f%% of one core)\n",
		c0, c1, 100 * c0 / s, 100 * c1 / s }'

# One backend, many agents: the spool replayed as AGENTS hosts at once.
bash tests/backends/pyroscope.sh stop "$tmp/py2" 2>/dev/null
bash tests/backends/pyroscope.sh start "$tmp/py2" 25041 2>/dev/null
for i in $(seq "$AGENTS"); do
	mkdir "$tmp/host$i"
	cp "$tmp"/spool/pyebpf-*.pb.gz "$tmp/host$i/"
done
start=$(date +%s.%N)
for i in $(seq "$AGENTS"); do
	$PYEBPF push "$tmp/host$i" --push http://127.0.0.1:25041 --label "host=host$i" 2>/dev/null &
done
wait_ok=0
for job in $(jobs -p); do
	case " ${pids[*]} " in *" $job "*) continue ;; esac
	wait "$job" && wait_ok=$((wait_ok + 1))
done
end=$(date +%s.%N)
stats=$(curl -s http://127.0.0.1:25041/stub/stats)
awk -v a="$AGENTS" -v f="$files" -v t0="$start" -v t1="$end" -v b="$py_bytes" -v st="$stats" 'BEGIN {
	t = t1 - t0; n = a * f
	printf "\none Pyroscope stand-in (not Pyroscope: tests/backends/pyroscope-stub), %d agents at once:\n", a
	printf "  %d intervals in %.1f s (%.0f intervals/s); its stats: %s\n", n, t, n / t, st
	per = b / f
	printf "a 1,000-host fleet at 15 s intervals: %.0f pushes/s, %.2f MB/s (%.1f GB/day) into Pyroscope\n",
		1000 / 15, 1000 * per / 15 / 1e6, 1000 * per / 15 * 86400 / 1e9 }'
