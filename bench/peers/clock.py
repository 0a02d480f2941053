"""A clock for the peers benchmark's time-to-first-sample row: functions
t000 ... t599 run in turn, t<i> until T0 + (i + 1) * 5 ms, T0 being the
epoch time in $PEERS_T0 (when the benchmark started the tool), or this
script's start. The earliest t<i> a profile shows says, to within 5 ms, how
long after T0 its first sample came. Slots already past when the script
starts (interpreter start-up) are skipped.
    clock.py"""
import os
import time

T0 = float(os.environ.get("PEERS_T0", time.time()))
SLOT = 0.005
N = 600

# A code object per slot: profilers name frames by the code object's name.
SOURCE = "".join("def t%03d(end):\n    x = 0\n    while time.time() < end:\n        x += 1\n" % i for i in range(N))
exec(compile(SOURCE, "clock_slots.py", "exec"))

for i in range(N):
    end = T0 + (i + 1) * SLOT
    if time.time() < end:
        globals()["t%03d" % i](end)
