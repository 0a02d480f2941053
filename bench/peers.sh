#!/usr/bin/env bash
# pyebpf side by side with the profilers a user would pick instead, on the
# same workloads, interpreters and rates, runs interleaved (this machine is
# noisy: read ratios and medians):
#   py-spy 0.4.3 and Austin 4.0.0 (PyPI wheels, unpacked into the cache; Austin's
#   binary needs glibc 2.38: it runs on sid's, as the sid interpreters do) and
#   CPython 3.15's own sampler, Tachyon (python3.15 -m profiling.sampling:
#   it profiles 3.15 only, and py-spy and Austin stop at 3.14).
#
#   bash bench/peers.sh [ROUNDS] [ROW...]      rows: accuracy wall slowdown start cost features (default: all)
#
# accuracy: a known CPU split (bench/peers/split.py: alpha/beta/gamma 5:3:2,
#   the script's own thread_time is the truth), each tool in its CPU mode at
#   100 Hz for 20 s, on 3.11, 3.13, 3.14 and 3.15; the error is the total variation
#   distance to the truth in percentage points (0: exact), median of ROUNDS.
# wall: a known wall split (tests/fixtures/pywall.py split: CPU, sleep, a pipe,
#   a lock; its own clock is the truth), each tool in its wall/idle mode.
# slowdown: bench/peers/load.py (it times itself: a tool's start-up is not
#   counted), alone / under a tool / alone; the ratio to the mean of its two
#   neighbours, median of ROUNDS, at 100 and 1000 Hz; py-spy in its default
#   mode (it stops the target with ptrace for each sample) and --nonblocking.
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
		python3 -m pip download --quiet --no-deps --only-binary :all: -d "$CACHE/wheels" \
			py-spy==0.4.3 austin-dist==4.0.0 austin-python==2.4.0
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
	PYSPY=$CACHE/bin/py-spy AUSTIN=$CACHE/bin/austin
	VERSIONS="pyebpf $(git rev-parse --short HEAD), $($PYSPY --version), $($AUSTIN --version 2>&1 | head -n1),"
	VERSIONS+=" Tachyon of $($PY315 -V)"
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
	py-spy)
		"${cost[@]}" "$PYSPY" record -r "$hz" -f raw -p "$pid" -d "$secs" -o "$out.raw" >/dev/null 2>"$out.err" || return 0
		normalize paren <"$out.raw" >"$out.folded" ;;
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
median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "n/a"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
TOOLS=(pyebpf py-spy austin tachyon)

row_accuracy() {
	local pys=("$PY311" "$PY313" "$PY314" "$PY315") i p tool line runs
	for i in $(seq "$ROUNDS"); do
		for p in "${!pys[@]}"; do
			for tool in $(printf '%s\n' "${TOOLS[@]}" | shuf --random-source=<(yes "$i")); do
				run_tool "$tool" cpu 100 "$tmp/acc.$tool.$p.$i" -- "${pys[$p]}" bench/peers/split.py 20
			done
		done
		echo "accuracy: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**CPU split** (alpha/beta/gamma 5:3:2, 20 s at 100 Hz a run, CPU mode; a perfect sampler's error is about 1 pp at 2,000 samples, 0.5 at 8,000): error in percentage points of the $ROUNDS runs' samples pooled (sampling noise shrinks with them, a bias does not)"
	echo
	echo "| interpreter | pyebpf | py-spy | Austin | Tachyon |"
	echo "|---|---|---|---|---|"
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
		for tool in $(printf '%s\n' "${TOOLS[@]}" | shuf --random-source=<(yes "$i")); do
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
spread() { sort -n | awk '{a[NR]=$1} END {if (NR < 4) print "n/a"; else printf "%+.1f%% to %+.1f%%\n", a[int(NR/4)+1], a[int(3*NR/4)]}'; }
pct() { read -r v; case $v in n/a) echo n/a ;; *) printf '%+.2f%%' "$v" ;; esac; }

elapsed() { sed -n 's/^elapsed //p' "$1.out" | tail -n1; }

row_slowdown() {
	local i hz tool py before after t runs=(pyebpf py-spy py-spy-nb austin tachyon)
	for i in $(seq "$ROUNDS"); do
		for hz in 100 1000; do
			for tool in $(printf '%s\n' "${runs[@]}" | shuf --random-source=<(yes "$i$hz")); do
				py=$PY314
				[ "$tool" = tachyon ] && py=$PY315
				"$py" bench/peers/load.py 400 >"$tmp/alone.out"
				before=$(elapsed "$tmp/alone")
				run_tool "$tool" cpu "$hz" "$tmp/run" -- "$py" bench/peers/load.py 400
				t=$(elapsed "$tmp/run")
				"$py" bench/peers/load.py 400 >"$tmp/alone.out"
				after=$(elapsed "$tmp/alone")
				[ -n "$t" ] && echo "($t / (($before + $after) / 2) - 1) * 100" | bc -l >>"$tmp/slow.$tool.$hz"
				echo "($after / $before - 1) * 100" | bc -l >>"$tmp/slow.alone.$hz"
			done
		done
		echo "slowdown: round $i/$ROUNDS done" >&2
	done
	echo
	echo "**Slowdown** of a CPU-bound program (bench/peers/load.py, ~3 s; 3.14, Tachyon on 3.15), launched under each tool: % over the mean of the runs alone before and after, median of $ROUNDS"
	echo
	echo "| tool | 100 Hz | 1000 Hz |"
	echo "|---|---|---|"
	for tool in "${runs[@]}"; do
		printf '| %s | %s | %s |\n' "$tool" "$(vals "$tmp/slow.$tool.100" | median | pct)" "$(vals "$tmp/slow.$tool.1000" | median | pct)"
	done
	# What this machine's noise alone reads: a run alone against the one before it.
	printf '| (none: alone against alone, the noise) | %s | %s |\n' "$(vals "$tmp/slow.alone.100" | median | pct)" \
		"$(vals "$tmp/slow.alone.1000" | median | pct)"
	printf '| (noise: the middle half of alone against alone) | %s | %s |\n' \
		"$(vals "$tmp/slow.alone.100" | spread)" "$(vals "$tmp/slow.alone.1000" | spread)"
}

# The earliest clock slot (bench/peers/clock.py) in OUT.folded, in ms after
# its T0; "n/a" without one.
first_slot_ms() {
	[ -s "$1.folded" ] || { echo n/a; return; }
	grep -o '\bt[0-9][0-9][0-9]\b' "$1.folded" | sort | head -n1 | awk '{print (substr($1, 2) + 0) * 5}' |
		grep . || echo n/a
}

row_start() {
	local i tool py pid t0 tc slot runs=(pyebpf py-spy austin tachyon)
	for i in $(seq "$ROUNDS"); do
		for tool in $(printf '%s\n' "${runs[@]}" | shuf --random-source=<(yes "$i")); do
			py=$PY314
			[ "$tool" = tachyon ] && py=$PY315
			# Launched: from the command to the first sample of Python code.
			t0=$(date +%s.%N)
			PEERS_T0=$t0 run_tool "$tool" cpu 1000 "$tmp/run" -- "$py" bench/peers/clock.py
			first_slot_ms "$tmp/run" >>"$tmp/start.launch.$tool"
			# Attached: the clock runs from its own T0; from the attach command
			# to the first sample, the slots counted from the clock's T0.
			tc=$(date +%s.%N)
			PEERS_T0=$tc "$py" bench/peers/clock.py &
			pid=$!
			sleep 0.5
			t0=$(date +%s.%N)
			attach_tool "$tool" 1000 "$tmp/run" "$pid" 1 "$py"
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
print(cpu, rss, samples)
' "$out" "$tool" >"$out.cost"
}

row_cost() {
	local i d tool py pid314 pid315 runs=(pyebpf py-spy austin tachyon) secs
	for i in $(seq "$ROUNDS"); do
		for d in 5 50 300; do
			$PY314 bench/deep.py "$d" &
			pid314=$!
			$PY315 bench/deep.py "$d" &
			pid315=$!
			sleep 1
			for tool in $(printf '%s\n' "${runs[@]}" | shuf --random-source=<(yes "$i$d")); do
				py=$PY314 pid=$pid314
				[ "$tool" = tachyon ] && py=$PY315 pid=$pid315
				for secs in 2 8; do
					cost_of "$tool" 1000 "$tmp/cost" "$pid" "$secs" "$py"
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
	local tool out=$tmp/feat runs=(pyebpf py-spy austin tachyon) f py pid mnt
	declare -A cells
	for tool in "${runs[@]}"; do
		py=$PY314
		[ "$tool" = tachyon ] && py=$PY315
		# feature@mode@regex@share@pyebpf's@py-spy's@Austin's@Tachyon's option@probe
		while IFS='@' read -r f mode regex share e_pyebpf e_pyspy e_austin e_tachyon probe; do
			local extra
			case $tool in
			pyebpf) extra=$e_pyebpf ;; py-spy) extra=$e_pyspy ;; austin) extra=$e_austin ;; tachyon) extra=$e_tachyon ;;
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
	echo "| feature | pyebpf | py-spy | Austin | Tachyon |"
	echo "|---|---|---|---|---|"
	for f in "kernel frames" "native frames of a C library (zlib)" "thread names" "GIL waits" \
		"asyncio tasks (their await chains while they wait)" "subprocesses" container ft; do
		local name=$f
		[ "$f" = container ] && name="a program in a container (attached by host pid)"
		[ "$f" = ft ] && name="free-threaded 3.13t"
		echo "| $name | ${cells[$f.pyebpf]} | ${cells[$f.py-spy]} | ${cells[$f.austin]} | ${cells[$f.tachyon]} |"
	done
}

setup
{
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs, Linux $(uname -r): $VERSIONS; $ROUNDS rounds."
	echo "Command: bash bench/peers.sh $ROUNDS $ROWS"
	for row in $ROWS; do
		"row_$row"
	done
} | tee bench/out/peers.md
