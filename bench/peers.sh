#!/usr/bin/env bash
# pyebpf side by side with the profilers a user would pick instead, on the
# same workloads, interpreters and rates, runs interleaved (this machine is
# noisy: read ratios and medians):
#   py-spy 0.4.3 and Austin 4.0.0 (PyPI wheels, unpacked into the cache; Austin's
#   binary needs glibc 2.38: it runs on sid's, as the sid interpreters do) and
#   CPython 3.15's own sampler, Tachyon (python3.15 -m profiling.sampling:
#   it profiles 3.15 only, and py-spy and Austin stop at 3.14), and the
#   OpenTelemetry eBPF profiler (a whole-host agent built from its Go module,
#   its OTLP taken by bench/peers/otelrecv; CPU mode only).
#
#   bash bench/peers.sh [ROUNDS] [ROW...]      rows: accuracy wall slowdown start cost features (default: all)
#   PEERS_TOOLS="pyebpf otel" bash bench/peers.sh ...   some of the tools only
#     (pyebpf py-spy py-spy-nb austin tachyon otel; the others' cells say n/a)
#
# accuracy: a known CPU split (bench/peers/split.py: alpha/beta/gamma 5:3:2,
#   the script's own thread_time is the truth), each tool in its CPU mode at
#   100 Hz for 20 s, on 3.11, 3.13, 3.14 and 3.15; the error is the total variation
#   distance to the truth in percentage points (0: exact), median of ROUNDS.
# wall: a known wall split (tests/fixtures/pywall.py split: CPU, sleep, a pipe,
#   a lock; its own clock is the truth), each tool in its wall/idle mode.
# slowdown: bench/peers/duty.py's units of work while the tool is attached
#   against those just before and after, in one process (the machine's drift
#   falls out), by wall-clock and by CPU time, 5 x ROUNDS cycles, at 100 and
#   1000 Hz; py-spy in its default mode (it stops the target with ptrace for
#   each sample) and --nonblocking; "nothing" attached: the noise.
# start: the time to the first sample at 1000 Hz of bench/peers/clock.py
#   (functions t000... each owning a 5 ms slot after a known T0), launched by
#   the tool and attached to while it runs.
# cost: the tool's own CPU and peak RSS, attached at 1000 Hz for 2 s and 8 s
#   to bench/deep.py at stack depths 5, 50 and 300: the steady state per
#   1,000 samples from the difference, the one-time rest from the 2 s run.
# features: what each tool shows of a probe workload a feature
#   (bench/peers/features.py): kernel frames, a C library's frames, thread
#   names, GIL waits, asyncio tasks, children, a container, 3.13t.
# Results go to stdout as Markdown tables (and bench/out/peers.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/retry.sh
. .ci/retry.sh
ROUNDS=${1:-3}
shift || true
ROWS=${*:-accuracy wall slowdown start cost features}
CACHE=${PEERS_CACHE:-/var/cache/pyebpf/peers}
SIDROOT=/var/cache/pyebpf/pythons/sid
SIDLIB=$SIDROOT/usr/lib/x86_64-linux-gnu
PY311=/usr/bin/python3.11
pyenv313=(/root/.pyenv/versions/3.13*/bin/python3)
PY313=${pyenv313[-1]}
PY314=$SIDROOT/usr/bin/python3.14
PY315=$SIDROOT/usr/bin/python3.15
PY313T=/var/cache/pyebpf/pythons/3.13t/bin/python3.13t
PYEBPF=build/pyebpf
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x $PYEBPF ] || { echo "bench: run 'make' first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/out

# ---- the peers, from the package registries into the cache ----------------
setup() {
	mkdir -p "$CACHE/wheels" "$CACHE/bin"
	if ! ls "$CACHE"/wheels/py_spy-0.4.3-*x86_64*.whl >/dev/null 2>&1 ||
		! ls "$CACHE"/wheels/austin_dist-4.0.0-*x86_64*.whl >/dev/null 2>&1 ||
		! ls "$CACHE"/wheels/austin_python-2.4.0-*.whl >/dev/null 2>&1; then
		retry "the peers' wheels (PyPI)" python3 -m pip download --quiet --no-deps --only-binary :all: \
			-d "$CACHE/wheels" py-spy==0.4.3 austin-dist==4.0.0 austin-python==2.4.0
	fi
	if [ ! -x "$CACHE/bin/py-spy" ]; then
		unzip -q -o -d "$tmp/w" "$CACHE"/wheels/py_spy-0.4.3-*x86_64*.whl
		install -m 755 "$tmp"/w/py_spy-0.4.3.data/scripts/py-spy "$CACHE/bin/py-spy"
	fi
	if [ ! -x "$CACHE/bin/austin" ]; then
		unzip -q -o -d "$tmp/w" "$CACHE"/wheels/austin_dist-4.0.0-*x86_64*.whl
		install -m 755 "$tmp"/w/austin_dist-4.0.0.data/scripts/austin "$CACHE/bin/austin.new"
		# Built against glibc 2.38 (Debian 12 has 2.36): sid's loader and
		# libc, set in the binary, not in the environment the target inherits.
		patchelf --set-interpreter "$SIDLIB/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$SIDLIB" \
			"$CACHE/bin/austin.new"
		mv "$CACHE/bin/austin.new" "$CACHE/bin/austin"
	fi
	if [ ! -d "$CACHE/austin-python/austin" ]; then
		unzip -q -o -d "$CACHE/austin-python" "$CACHE"/wheels/austin_python-2.4.0-*.whl
	fi
	otel_setup
	PYSPY=$CACHE/bin/py-spy AUSTIN=$CACHE/bin/austin
	VERSIONS="pyebpf $(git rev-parse --short HEAD), $($PYSPY --version), $($AUSTIN --version 2>&1 | head -n1),"
	VERSIONS+=" Tachyon of $($PY315 -V), the OpenTelemetry eBPF profiler $OTEL_VERSION"
}

# The OpenTelemetry eBPF profiler: its Go module from the module proxy, its
# BPF tracer compiled with Debian's clang-19 (its Makefile wants clang 17;
# bookworm has 14, 16 and 19), one patch: it stops when it may not raise
# RLIMIT_MEMLOCK, which since Linux 5.11 limits no BPF map (memory is charged
# to the cgroup) and which this machine's root may not raise (no
# CAP_SYS_RESOURCE). It sends OTLP over gRPC only: bench/peers/otelrecv, built
# in its module (the same pdata), writes what it gets as folded stacks.
OTEL_VERSION=v0.0.202633
OTEL=$CACHE/otel-$OTEL_VERSION
otel_setup() {
	[ -x "$OTEL/ebpf-profiler" ] && [ -x "$OTEL/otelrecv" ] && return
	command -v clang-19 >/dev/null || retry "apt-get install clang-19 llvm-19" apt-get install -y -q clang-19 llvm-19 >/dev/null
	local src=$tmp/otel-src mod
	[ -d /usr/local/go/bin ] && PATH=/usr/local/go/bin:$PATH
	# shellcheck disable=SC2016 # the inner shell expands its own arguments
	retry "the OpenTelemetry eBPF profiler $OTEL_VERSION (Go module proxy)" sh -c \
		'cd "$1" && GOFLAGS=-mod=mod go mod download -json "go.opentelemetry.io/ebpf-profiler@$2" >otel.json' \
		sh "$tmp" "$OTEL_VERSION"
	mod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Dir"])' "$tmp/otel.json")
	cp -r "$mod" "$src" && chmod -R u+w "$src"
	python3 - "$src/rlimit/rlimit.go" <<-'PATCH'
		import sys
		p = sys.argv[1]
		s = open(p).read()
		old = "&tmpLimit, &oldLimit); err != nil {"
		assert old in s, "rlimit.go changed: look at the patch again"
		s = s.replace(old, "&tmpLimit, &oldLimit); err == unix.EPERM {\n\t\treturn func() {}, nil\n\t} else if err != nil {")
		open(p, "w").write(s)
	PATCH
	touch "$src/support/ebpf/errors.h" # generated, shipped: not made again (that wants clang-format-17)
	make -s -C "$src/support/ebpf" BPF_CLANG=clang-19 BPF_LINK=llvm-link-19 LLC=llc-19 STRIP=llvm-strip-19 \
		"$src/support/ebpf/tracer.ebpf.amd64" >/dev/null 2>&1 || [ -s "$src/support/ebpf/tracer.ebpf.amd64" ]
	mkdir -p "$src/cmd/otelrecv" "$OTEL"
	cp bench/peers/otelrecv/main.go "$src/cmd/otelrecv/"
	# The build downloads the module's dependencies: tried again on a failure.
	# shellcheck disable=SC2016
	retry "the OpenTelemetry eBPF profiler's modules (Go module proxy)" sh -c \
		'cd "$1" && GOFLAGS=-buildvcs=false go build -o "$2/ebpf-profiler.new" . &&
		GOFLAGS=-buildvcs=false go build -o "$2/otelrecv" ./cmd/otelrecv' sh "$src" "$OTEL"
	mv "$OTEL/ebpf-profiler.new" "$OTEL/ebpf-profiler"
}

# Start the agent at HZ, its samples to OUT.all ("PID;frames COUNT"); back
# once its tracer is attached. OTEL_PID is the agent (under rusage.py with
# PEERS_COST), OTEL_RECV the receiver.
otel_start() {
	local out=$1 hz=$2 cost=() port
	if [ -n "${PEERS_COST:-}" ]; then
		cost=(python3 bench/peers/rusage.py "$PEERS_COST" --)
		sysctl -q -w kernel.bpf_stats_enabled=1 # its BPF programs' time, read as it stops
	fi
	port=$((20000 + RANDOM % 20000))
	rm -f "$out.all"
	"$OTEL/otelrecv" "127.0.0.1:$port" "$out.all" 2>"$out.recv" &
	OTEL_RECV=$!
	"${cost[@]}" "$OTEL/ebpf-profiler" -collection-agent="127.0.0.1:$port" -disable-tls \
		-samples-per-second "$hz" -reporter-interval 1s >"$out.err" 2>&1 &
	OTEL_PID=$!
	for _ in $(seq 300); do
		grep -q "Attached tracer program" "$out.err" && return 0
		kill -0 $OTEL_PID 2>/dev/null || break
		sleep 0.1
	done
	otel_stop "$out" none
	return 1
}

# Stop it once its last report is in (it reports every second, jittered by
# 20%), keeping the samples of the pids in PIDS (a file of pids, or one pid)
# as OUT.raw.
otel_stop() {
	local out=$1 pids=$2
	sleep 2.5
	if [ -n "${PEERS_COST:-}" ]; then
		bpftool prog show -j | python3 -c '
import json, sys
print(sum(p.get("run_time_ns", 0) for p in json.load(sys.stdin)
          if any(o.get("comm") == "ebpf-profiler" for o in p.get("pids", []))))' >"$out.bpfns"
		sysctl -q -w kernel.bpf_stats_enabled=0
	fi
	kill "$OTEL_PID" 2>/dev/null || true
	wait "$OTEL_PID" 2>/dev/null || true
	kill "$OTEL_RECV" 2>/dev/null || true
	wait "$OTEL_RECV" 2>/dev/null || true
	[ -f "$pids" ] || echo "$pids" >"$out.pids"
	[ -f "$pids" ] || pids=$out.pids
	awk 'NR == FNR {want[$1]; next} {split($0, f, ";")} f[1] in want {sub(/^[0-9]+;/, ""); print}' \
		"$pids" "$out.all" >"$out.raw" 2>/dev/null || true
}

# ---- one run of a tool: TOOL MODE HZ OUT -- CMD... --------------------------
# MODE cpu or wall. Writes OUT.folded: "frame;...;frame COUNT" root first,
# frames reduced to their function names, and OUT.out: the command's stdout.
# Tools that cannot profile the command's interpreter leave OUT.folded out.
hz_us() { echo $((1000000 / $1)); }

# Attach to a running PID for SECONDS: TOOL HZ OUT PID SECONDS PYTHON.
attach_tool() {
	local tool=$1 hz=$2 out=$3 pid=$4 secs=$5 py=$6 cost=()
	rm -f "$out.folded"
	# PEERS_COST=FILE: the tool's CPU and peak RSS into FILE (bench/peers/rusage.py).
	[ -n "${PEERS_COST:-}" ] && cost=(python3 bench/peers/rusage.py "$PEERS_COST" --)
	case $tool in
	pyebpf)
		"${cost[@]}" $PYEBPF record -F "$hz" -p "$pid" -d "$secs" --format folded -o "$out.raw" 2>"$out.err"
		normalize paren <"$out.raw" >"$out.folded" ;;
	py-spy | py-spy-nb)
		local nb=()
		[ "$tool" = py-spy-nb ] && nb=(--nonblocking)
		"${cost[@]}" "$PYSPY" record -r "$hz" "${nb[@]}" -f raw -p "$pid" -d "$secs" -o "$out.raw" >/dev/null 2>"$out.err" ||
			return 0
		normalize paren <"$out.raw" >"$out.folded" ;;
	otel) # a whole-host agent: started, then the pid's samples kept
		otel_start "$out" "$hz" || return 0
		date +%s.%N >"$out.began"
		sleep "$secs"
		otel_stop "$out" "$pid"
		normalize paren <"$out.raw" >"$out.folded" ;;
	none) # the slowdown row's noise: the same pause, nothing attached
		sleep "$secs"
		echo "x 1" >"$out.folded" ;;
	austin)
		"${cost[@]}" "$AUSTIN" -c -i "$(hz_us "$hz")" -p "$pid" -x "$secs" -o "$out.mojo" >/dev/null 2>"$out.err" ||
			[ -s "$out.mojo" ] || return 0 # 254 when its -x time ran out
		PYTHONPATH=$CACHE/austin-python python3 -m austin.format.collapsed_stack "$out.mojo" "$out.raw" \
			>>"$out.err" 2>&1 || return 0
		normalize colon-austin <"$out.raw" >"$out.folded" ;;
	tachyon)
		[ "$py" = "$PY315" ] || return 0
		"${cost[@]}" $PY315 -m profiling.sampling attach -r "$hz" -d "$secs" --mode cpu -a --collapsed -o "$out.raw" "$pid" \
			>/dev/null 2>"$out.err" || return 0
		normalize colon <"$out.raw" >"$out.folded" ;;
	esac
}

# Launch CMD under TOOL: TOOL MODE HZ OUT -- CMD...; PEERS_EXTRA: more of
# the tool's own options (words), for the features row.
run_tool() {
	local tool=$1 mode=$2 hz=$3 out=$4 more
	shift 5
	read -ra more <<<"${PEERS_EXTRA:-}"
	rm -f "$out.folded"
	case $tool in
	pyebpf)
		$PYEBPF record -F "$hz" --mode "$mode" "${more[@]}" --format folded -o "$out.raw" -- "$@" \
			>"$out.out" 2>"$out.err"
		normalize paren <"$out.raw" >"$out.folded" ;;
	py-spy | py-spy-nb)
		local opts=()
		[ "$mode" = wall ] && opts+=(--idle)
		[ "$tool" = py-spy-nb ] && opts+=(--nonblocking)
		"$PYSPY" record -r "$hz" -f raw -o "$out.raw" "${opts[@]}" "${more[@]}" -- "$@" >"$out.out" 2>"$out.err" ||
			return 0
		normalize paren <"$out.raw" >"$out.folded" ;;
	austin)
		local opts=()
		[ "$mode" = cpu ] && opts+=(-c)
		"$AUSTIN" -i "$(hz_us "$hz")" "${opts[@]}" "${more[@]}" -o "$out.mojo" "$@" >"$out.out" 2>"$out.err" ||
			return 0
		# mojo2austin: one line a sample, its metric microseconds, not a count.
		PYTHONPATH=$CACHE/austin-python python3 -m austin.format.collapsed_stack "$out.mojo" "$out.raw" \
			>>"$out.err" 2>&1 || return 0
		normalize colon-austin <"$out.raw" >"$out.folded" ;;
	otel)
		# Its off-CPU mode samples context switches, not the wall-clock.
		[ "$mode" = cpu ] || { echo "not sampled: no wall-clock mode" >"$out.err"; return 0; }
		otel_start "$out" "$hz" || return 0
		# The command in a session of its own, its members listed while it
		# runs: the agent sees the whole host, the command's are kept.
		setsid "$@" >"$out.out" 2>>"$out.cmd.err" &
		local pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			ps -o pid= -s "$pid" >>"$out.sid" || true
			sleep 0.2
		done
		wait "$pid" || true
		echo "$pid" >>"$out.sid"
		otel_stop "$out" "$out.sid"
		rm -f "$out.sid"
		normalize paren <"$out.raw" >"$out.folded" ;;
	tachyon)
		[ "$1" = "$PY315" ] || return 0 # it profiles its own version only
		shift
		local all=(-a)
		[ "${more[0]:-}" = --async-aware ] && all=() # it samples every thread's tasks, and refuses -a beside it
		$PY315 -m profiling.sampling run -r "$hz" --mode "$mode" "${all[@]}" "${more[@]}" --collapsed \
			-o "$out.raw" "$@" >"$out.out" 2>"$out.err" || return 0
		normalize colon <"$out.raw" >"$out.folded" ;;
	esac
}

# Folded lines of any tool to "func;func;... COUNT" (function names only).
normalize() {
	python3 -c '
import sys
kind = sys.argv[1]
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line or line[0] in "#":
        continue
    stack, _, count = line.rpartition(" ")
    frames = stack.split(";")
    names = []
    for f in frames:
        if kind == "paren":
            names.append(f.split(" (", 1)[0])
        elif kind == "colon-austin":  # P<pid>;T<iid>:<tid>;file:func:line ... one line a sample
            if f[:1] in "PT" and not f.count(":") >= 2:
                continue
            names.append(f.rsplit(":", 2)[1] if f.count(":") >= 2 else f)
        else:  # tachyon: tid:N;file:func:line
            if f.startswith("tid:"):
                continue
            names.append(f.rsplit(":", 2)[1] if f.count(":") >= 2 else f)
    if kind == "colon-austin":
        count = "1"
    print(";".join(names) + " " + count)
' "$1"
}

# The error of one run or of several pooled: "NAME..." RUN...; each RUN is
# RUN.folded beside the truth its program printed (RUN.out). The counts of
# the named functions are summed over the runs, the truths averaged (each
# weighed by its run's samples), and the error is the total variation
# distance in percentage points: pooled, sampling noise shrinks, a bias does
# not. "n/a" when no run has samples and a truth.
split_error() {
	python3 -c '
import os, sys
names, runs = sys.argv[1].split(), sys.argv[2:]
got, truth = dict.fromkeys(names, 0), dict.fromkeys(names, 0.0)
for run in runs:
    if not os.path.exists(run + ".folded") or not os.path.exists(run + ".out"):
        continue
    t = {}
    for line in open(run + ".out"):
        w = line.split()
        if w and w[0] in ("truth", "wall-split"):
            t = {w[i]: float(w[i + 1]) for i in range(1, len(w) - 1, 2)}
    g = dict.fromkeys(names, 0)
    for line in open(run + ".folded"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        for f in reversed(stack.split(";")):
            if f in g:
                g[f] += int(count)
                break
    n = sum(g.values())
    if not t or not n:
        continue
    # The truth names a function or its phase (pywall.py: "cpu" for cpu_phase).
    share = {k: t.get(k, t.get(k.rsplit("_phase", 1)[0], 0)) for k in names}
    if not sum(share.values()):
        sys.exit("bench: no truth for %s in %s.out" % (" ".join(names), run))
    for k in names:
        got[k] += g[k]
        truth[k] += share[k] / sum(share.values()) * n
total = sum(got.values())
if not total:
    print("n/a")
    sys.exit()
print("%.2f" % (50 * sum(abs(got[k] - truth[k]) / total for k in names)))
' "$@"
}

vals() { grep -vs n/a "$1" || true; } # a row's figures, the runs that had none left out
# The tools of a row that PEERS_TOOLS (words; default: every tool) names, a
# line each; "none" (the slowdown row's noise) always.
chosen() {
	local t
	for t; do
		[[ $t == none || " ${PEERS_TOOLS:-$t} " == *" $t "* ]] && echo "$t"
	done
	return 0
}
median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "n/a"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
TOOLS=(pyebpf py-spy austin tachyon otel)

row_accuracy() {
	local pys=("$PY311" "$PY313" "$PY314" "$PY315") i p tool line runs
	for i in $(seq "$ROUNDS"); do
		for p in "${!pys[@]}"; do
			for tool in $(chosen "${TOOLS[@]}" | shuf --random-source=<(yes "$i")); do
				run_tool "$tool" cpu 100 "$tmp/acc.$tool.$p.$i" -- "${pys[$p]}" bench/peers/split.py 20
			done
		done
		echo "accuracy: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**CPU split** (alpha/beta/gamma 5:3:2, 20 s at 100 Hz a run, CPU mode; a perfect sampler's error is about 1 pp at 2,000 samples, 0.5 at 8,000): error in percentage points of the $ROUNDS runs' samples pooled (sampling noise shrinks with them, a bias does not)"
	echo
	echo "| interpreter | pyebpf | py-spy | Austin | Tachyon | OTel eBPF profiler |"
	echo "|---|---|---|---|---|---|"
	for p in "${!pys[@]}"; do
		line="| $("${pys[$p]}" -V 2>&1) |"
		for tool in "${TOOLS[@]}"; do
			runs=("$tmp/acc.$tool.$p".*.out)
			line+=" $(split_error "alpha beta gamma" "${runs[@]%.out}") |"
		done
		echo "$line"
	done
}

row_wall() {
	local i tool k=$tmp/wall
	for i in $(seq "$ROUNDS"); do
		for tool in $(chosen "${TOOLS[@]}" | shuf --random-source=<(yes "$i")); do
			run_tool "$tool" wall 100 "$tmp/run" -- "$PY314" tests/fixtures/pywall.py split 10
			[ "$tool" = tachyon ] && run_tool "$tool" wall 100 "$tmp/run" -- "$PY315" tests/fixtures/pywall.py split 10
			split_error "cpu_phase sleep_phase pipe_phase lock_phase" "$tmp/run" >>"$k.$tool"
		done
		echo "wall: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**Wall split** (CPU 40 / sleep 30 / pipe 20 / lock 10, 10 s at 100 Hz, each tool's wall mode; Tachyon on 3.15, the others on 3.14): error in percentage points, median of $ROUNDS"
	echo
	echo "| tool | error |"
	echo "|---|---|"
	for tool in "${TOOLS[@]}"; do
		echo "| $tool | $(vals "$k.$tool" | median) |"
	done
}

# The interquartile range of a column of percentages, "A% to B%".
spread() { sort -n | awk '{a[NR]=$1} END {if (NR < 4) print "n/a"; else printf "%+.1f%% to %+.1f%%\n", a[int(NR/4)+1], a[NR-int(NR/4)]}'; }
pct() { read -r v; case $v in n/a) echo n/a ;; *) printf '%+.2f%%' "$v" ;; esac; }

# One tool's slowdown of bench/peers/duty.py: TOOL HZ OUT. The workload
# runs on CPU 1 and the tool on CPU 0 (what the tool spends on its own CPU is
# the cost row's; here is what the profiled program feels: BPF in its
# interrupts, ptrace stops, caches), the tool attached for 2 s and detached
# for 2 s, CYCLES times; each attachment (its first 0.6 s left out: start-up
# is the start row's) against the detached stretches either side of it.
# Appends a percentage a cycle to OUT.
duty_cycles() {
	local tool=$1 hz=$2 out=$3 py=$PY314 pid a b
	[ "$tool" = tachyon ] && py=$PY315
	taskset -c 1 "$py" bench/peers/duty.py 3600 >"$tmp/duty.units" &
	pid=$!
	: >"$tmp/duty.windows"
	sleep 2
	for _ in $(seq "$CYCLES"); do
		a=$(date +%s.%N)
		rm -f "$tmp/duty.began"
		(taskset -pc 0 $BASHPID >/dev/null && attach_tool "$tool" "$hz" "$tmp/duty" "$pid" 2 "$py") || true
		b=$(date +%s.%N)
		# The OpenTelemetry agent takes ~1.3 s to attach: its 2 s count from then.
		[ -s "$tmp/duty.began" ] && a=$(cat "$tmp/duty.began")
		echo "on $a $b" >>"$tmp/duty.windows"
		sleep 2
	done
	kill -TERM "$pid"
	wait "$pid"
	python3 -c '
import sys
units = [tuple(map(float, l.split()[1:])) for l in open(sys.argv[1]) if l.startswith("u ")]
wins = [tuple(map(float, l.split()[1:])) for l in open(sys.argv[2])]
def mean_unit(lo, hi, k):  # k 0: wall-clock, 1: CPU time
    d = [(e - s, c)[k] for s, e, c in units if s >= lo and e <= hi]
    return sum(d) / len(d) if len(d) >= 50 else None
for i, (a, b) in enumerate(wins):
    r = []
    for k in (0, 1):
        before = mean_unit((wins[i - 1][1] if i else a - 2) + 0.3, a - 0.1, k)
        after = mean_unit(b + 0.3, (wins[i + 1][0] if i + 1 < len(wins) else b + 2) - 0.1, k)
        on = mean_unit(a + 0.6, b - 0.2, k)
        if None not in (before, after, on):
            r.append("%.3f" % ((on / ((before + after) / 2) - 1) * 100))
    if len(r) == 2:
        print(*r)
' "$tmp/duty.units" "$tmp/duty.windows" >>"$out"
}

row_slowdown() {
	local hz tool runs=(none pyebpf py-spy py-spy-nb austin tachyon otel)
	CYCLES=$((5 * ROUNDS))
	for hz in 100 1000; do
		for tool in $(chosen "${runs[@]}" | shuf --random-source=<(yes "$hz")); do
			duty_cycles "$tool" "$hz" "$tmp/slow.$tool.$hz"
			echo "slowdown: $tool at $hz Hz done" >&2
		done
	done
	echo
	echo "**Slowdown** of a CPU-bound program (bench/peers/duty.py on CPU 1, 3.14, Tachyon on 3.15; the tool on CPU 0), attached for 2 s and detached for 2 s, $CYCLES times: the ~3 ms units of work done attached against those just before and after, in the same process, by the wall-clock and by the thread's CPU time (which leaves out other programs and the hypervisor, and a tool's ptrace stops); median of the $CYCLES cycles, in brackets the middle half; 'nothing' attaches no tool: this machine's noise"
	echo
	echo "| tool | 100 Hz wall | 100 Hz CPU | 1000 Hz wall | 1000 Hz CPU |"
	echo "|---|---|---|---|---|"
	for tool in "${runs[@]}"; do
		local line="| ${tool/none/nothing} |"
		for hz in 100 1000; do
			for k in 1 2; do
				line+=" $(cut -sd' ' -f$k "$tmp/slow.$tool.$hz" 2>/dev/null | median | pct)"
				line+=" ($(cut -sd' ' -f$k "$tmp/slow.$tool.$hz" 2>/dev/null | spread)) |"
			done
		done
		echo "$line"
	done
}

# The start and cost rows' rate: 1000 Hz; 100 Hz for the OpenTelemetry
# agent, which at 1000 Hz took 11 samples in 4.5 s, none of the target (at
# 500 Hz a seventh of its samples, at 100 Hz all).
rate_of() { if [ "$1" = otel ]; then echo 100; else echo 1000; fi; }

# The earliest clock slot (bench/peers/clock.py) in OUT.folded, in ms after
# its T0; "n/a" without one.
first_slot_ms() {
	[ -s "$1.folded" ] || { echo n/a; return; }
	grep -o '\bt[0-9][0-9][0-9]\b' "$1.folded" | sort | head -n1 | awk '{print (substr($1, 2) + 0) * 5}' |
		grep . || echo n/a
}

row_start() {
	local i tool py pid t0 tc slot runs=(pyebpf py-spy austin tachyon otel)
	for i in $(seq "$ROUNDS"); do
		for tool in $(chosen "${runs[@]}" | shuf --random-source=<(yes "$i")); do
			py=$PY314
			[ "$tool" = tachyon ] && py=$PY315
			# Launched: from the command to the first sample of Python code.
			t0=$(date +%s.%N)
			PEERS_T0=$t0 run_tool "$tool" cpu "$(rate_of "$tool")" "$tmp/run" -- "$py" bench/peers/clock.py
			first_slot_ms "$tmp/run" >>"$tmp/start.launch.$tool"
			# Attached: the clock runs from its own T0; from the attach command
			# to the first sample, the slots counted from the clock's T0.
			tc=$(date +%s.%N)
			PEERS_T0=$tc "$py" bench/peers/clock.py &
			pid=$!
			sleep 0.5
			t0=$(date +%s.%N)
			attach_tool "$tool" "$(rate_of "$tool")" "$tmp/run" "$pid" 1 "$py"
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			slot=$(first_slot_ms "$tmp/run")
			[ "$slot" = n/a ] || echo "$tc * 1000 + $slot - $t0 * 1000" | bc -l |
				xargs printf '%.0f\n' >>"$tmp/start.attach.$tool"
		done
		echo "start: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**Time to the first sample** (bench/peers/clock.py at 1000 Hz; 3.14, Tachyon 3.15): ms from the command to the first sample of Python code, launched and attached, median of $ROUNDS (5 ms slots)"
	echo
	echo "| tool | launched | attached |"
	echo "|---|---|---|"
	for tool in "${runs[@]}"; do
		echo "| $tool | $(vals "$tmp/start.launch.$tool" | median) | $(vals "$tmp/start.attach.$tool" | median) |"
	done
}

# Attached for SECONDS to a running PID at HZ, the tool's own cost:
# TOOL HZ OUT PID SECONDS PYTHON -> OUT.cost "CPU_S RSS_KB SAMPLES". pyebpf's
# BPF program runs in the target's interrupts, not in pyebpf's process: its
# time (the summary's per-sample figure times the samples) is added.
cost_of() {
	local tool=$1 hz=$2 out=$3 pid=$4 secs=$5 py=$6
	rm -f "$out.cost" "$out.folded"
	PEERS_COST=$out.rusage attach_tool "$tool" "$hz" "$out" "$pid" "$secs" "$py"
	[ -s "$out.folded" ] && [ -s "$out.rusage" ] || return 0
	python3 -c '
import re, sys
out, tool = sys.argv[1], sys.argv[2]
cpu, rss = open(out + ".rusage").read().split()
cpu = float(cpu)
samples = sum(int(l.rpartition(" ")[2]) for l in open(out + ".folded") if l.strip())
if tool == "pyebpf":
    m = re.search(r"BPF ([0-9.]+) us per sample taken", open(out + ".err").read())
    cpu += float(m.group(1)) * samples / 1e6 if m else 0
if tool == "otel":  # every sample it took of the host, and the time of its BPF programs
    samples = sum(int(l.rpartition(" ")[2]) for l in open(out + ".all") if l.strip())
    cpu += int(open(out + ".bpfns").read()) / 1e9
print(cpu, rss, samples)
' "$out" "$tool" >"$out.cost"
}

row_cost() {
	local i d tool py pid314 pid315 runs=(pyebpf py-spy austin tachyon otel) secs
	for i in $(seq "$ROUNDS"); do
		for d in 5 50 300; do
			$PY314 bench/deep.py "$d" &
			pid314=$!
			$PY315 bench/deep.py "$d" &
			pid315=$!
			sleep 1
			for tool in $(chosen "${runs[@]}" | shuf --random-source=<(yes "$i$d")); do
				py=$PY314 pid=$pid314
				[ "$tool" = tachyon ] && py=$PY315 pid=$pid315
				for secs in 2 8; do
					cost_of "$tool" "$(rate_of "$tool")" "$tmp/cost" "$pid" "$secs" "$py"
					[ -s "$tmp/cost.cost" ] && cat "$tmp/cost.cost" >>"$tmp/cost.$tool.$d.$secs"
				done
			done
			kill "$pid314" "$pid315"
			wait "$pid314" "$pid315" 2>/dev/null || true
		done
		echo "cost: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**The profiler's own cost**, attached at 1000 Hz for 2 s and for 8 s to a Python thread whose stacks are 5, 50 and 300 frames deep (bench/deep.py; 3.14, Tachyon 3.15): CPU per 1,000 samples in the steady state (the 8 s run less the 2 s run), the one-time CPU (set-up, symbols, what the 2 s run spent beyond its samples), the peak RSS of the 8 s run; pyebpf's CPU includes its BPF program's time in the target; median of $ROUNDS"
	echo
	echo "| tool | depth | CPU per 1k samples | one-time CPU | peak RSS |"
	echo "|---|---|---|---|---|"
	for tool in "${runs[@]}"; do
		for d in 5 50 300; do
			python3 -c '
import statistics, sys
def rows(p):
    try:
        return [list(map(float, l.split())) for l in open(p) if l.strip()]
    except OSError:
        return []
a, b = rows(sys.argv[1]), rows(sys.argv[2])
if not a or not b:
    print("| %s | %s | n/a | n/a | n/a |" % (sys.argv[3], sys.argv[4]))
    sys.exit()
steady, once = [], []
for (c2, _, s2), (c8, _, s8) in zip(a, b):
    per = (c8 - c2) / (s8 - s2) if s8 > s2 else float("nan")
    steady.append(per * 1000)
    once.append(c2 - per * s2)
med = statistics.median
print("| %s | %s | %.0f ms | %.0f ms | %.0f MB |" % (sys.argv[3], sys.argv[4], med(steady) * 1000,
      med(once) * 1000, med(r[1] for r in b) / 1024))
' "$tmp/cost.$tool.$d.2" "$tmp/cost.$tool.$d.8" "$tool" "$d"
		done
	done
}

# ---- what each shows: one probe and one predicate a cell --------------------
# yes (EXTRA) when at least SHARE % of the samples TOOL wrote (OUT.raw as
# it wrote it, or a file a child's samples went to: OUT*) match REGEX, no
# when they do not, "no: ERROR" with the tool's first line of complaint when
# it wrote nothing.
feature_verdict() {
	local tool=$1 out=$2 regex=$3 share=$4 extra=$5
	python3 -c '
import glob, re, sys
tool, out, regex, share, extra = sys.argv[1], sys.argv[2], re.compile(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
total = hit = 0
for path in glob.glob(out + "*"):
    if path.endswith((".err", ".mojo", ".folded", ".out")):
        continue
    for line in open(path, errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or line.startswith("#"):
            continue
        n = int(count) if count.isdigit() else 1
        if tool == "austin":
            n = 1  # mojo2austin: a line a sample, its metric microseconds
        total += n
        hit += n if regex.search(stack) else 0
if not total:
    try:
        err = [re.sub(r"\x1b\[[0-9;]*m", "", l).strip() for l in open(out + ".err", errors="replace")]
        err = [l for l in err if l]
    except OSError:
        err = []
    err = [l for l in err if re.search("(?i)error|unsupported|fail|cannot|can.t|not ", l)]
    print("no: " + (err[0][:70].replace("|", "/") if err else "no samples written"))
elif 100.0 * hit / total >= share:
    print("yes" + (" (%s)" % extra if extra else ""))
else:
    print("no")
' "$tool" "$out" "$regex" "$share" "$extra"
}

row_features() {
	local tool out=$tmp/feat runs=(pyebpf py-spy austin tachyon otel) f py pid mnt
	declare -A cells
	for tool in $(chosen "${runs[@]}"); do
		py=$PY314
		[ "$tool" = tachyon ] && py=$PY315
		# feature@mode@regex@share@pyebpf's@py-spy's@Austin's@Tachyon's option@probe
		while IFS='@' read -r f mode regex share e_pyebpf e_pyspy e_austin e_tachyon probe; do
			local extra
			case $tool in
			pyebpf) extra=$e_pyebpf ;; py-spy) extra=$e_pyspy ;; austin) extra=$e_austin ;; tachyon) extra=$e_tachyon ;;
			otel) extra= ;;
			esac
			rm -f "$out"* # a child's own files too
			# shellcheck disable=SC2086 # PROBE is words
			PEERS_EXTRA=$extra run_tool "$tool" "$mode" 100 "$out" -- "$py" $probe || true
			cells[$f.$tool]=$(feature_verdict "$tool" "$out" "$regex" "$share" "$extra")
		done <<-TABLE
			kernel frames@cpu@do_syscall_64@5@@@@@bench/peers/features.py syscalls 3
			native frames of a C library (zlib)@cpu@(^|;)deflate\b@10@--native@--native@@--native@bench/peers/features.py zlib 3
			thread names@cpu@worker-1@5@--threads@--threads@@@bench/peers/features.py threads 3
			GIL waits@wall@(?i)gil@10@@@@@bench/peers/features.py gil 3
			asyncio tasks (their await chains while they wait)@wall@fetch_remote@10@@@@--async-aware --async-mode all@tests/fixtures/pyasync.py requests 3
			subprocesses@cpu@child_spin@20@@--subprocesses@-C@--subprocesses@bench/peers/features.py children 3
		TABLE
		# A container: a root in a mount namespace the host cannot see into
		# but by /proc/PID/root (its maps name /usr/... paths that are the
		# host's own files, or none).
		mnt=$(mktemp -d)
		unshare -m -p -f sh -c "mount -t tmpfs none '$mnt' && mkdir -p '$mnt$SIDROOT' '$mnt/app' &&
			mount --bind '$SIDROOT' '$mnt$SIDROOT' && mount --bind '$PWD/bench/peers' '$mnt/app' &&
			exec chroot '$mnt' '$SIDROOT/usr/bin/python3.14' /app/features.py spin 6" &
		sleep 1
		pid=$(pgrep -f 'python3.14 /app/features.py spin' | head -n1)
		if [ -n "$pid" ]; then
			rm -f "$out"*
			attach_tool "$tool" 100 "$out" "$pid" 3 "$py" || true
			cells[container.$tool]=$(feature_verdict "$tool" "$out" container_spin 20 "")
		else
			cells[container.$tool]="n/a: the container did not start"
		fi
		wait || true
		rmdir "$mnt"
		# The free-threaded build (3.13t); Tachyon reads its own version only.
		if [ "$tool" = tachyon ]; then
			cells[ft.$tool]="no: profiles 3.15 only (no 3.15t here)"
		else
			run_tool "$tool" cpu 100 "$out" -- "$PY313T" bench/peers/split.py 3 || true
			rm -f "$out".raw*
			cp "$out.folded" "$out.raw" 2>/dev/null || true
			cells[ft.$tool]=$(feature_verdict "$tool" "$out" '(^|;)alpha\b' 20 "")
		fi
		echo "features: $tool done" >&2
	done
	echo
	echo "**What each shows**, from a probe per feature (bench/peers/features.py; 3.14, Tachyon 3.15): yes when at least a set share of the samples show it (the tool's option in brackets), no with the tool's own complaint when it has one"
	echo
	echo "| feature | pyebpf | py-spy | Austin | Tachyon | OTel eBPF profiler |"
	echo "|---|---|---|---|---|---|"
	for f in "kernel frames" "native frames of a C library (zlib)" "thread names" "GIL waits" \
		"asyncio tasks (their await chains while they wait)" "subprocesses" container ft; do
		local name=$f
		[ "$f" = container ] && name="a program in a container (attached by host pid)"
		[ "$f" = ft ] && name="free-threaded 3.13t"
		echo "| $name | ${cells[$f.pyebpf]:-n/a} | ${cells[$f.py-spy]:-n/a} | ${cells[$f.austin]:-n/a} | ${cells[$f.tachyon]:-n/a} | ${cells[$f.otel]:-n/a} |"
	done
}

setup
{
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs, Linux $(uname -r): $VERSIONS; $ROUNDS rounds."
	echo "Command: ${PEERS_TOOLS:+PEERS_TOOLS=\"$PEERS_TOOLS\" }bash bench/peers.sh $ROUNDS $ROWS"
	for row in $ROWS; do
		"row_$row"
	done
} | tee bench/out/peers.md
