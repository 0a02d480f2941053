"""The peers benchmark's slowdown row: one small unit of CPU-bound work
(bench/pyload.py's fib and words, ~3 ms) done over and over for SECONDS,
while the benchmark attaches a profiler and detaches it in turn. At the end
it prints each unit's start and end ("u START END CPU": time.time(), the
clock `date +%s.%N` reads, and the thread's CPU time the unit took), so the units done while the profiler was attached are
compared with those done just before and after it, in the same process: this
machine's slow drift (it reads the same program alone 10% apart from one run
to the next) falls out of the ratio. The CPU time leaves out what the
wall-clock cannot: other programs and the hypervisor taking the CPU (the
kernel here counts interrupt time, a BPF program's included, to the thread
it interrupted, and steal time to no one); it also leaves out a profiler
stopping the program (py-spy's default), which only the wall-clock shows.
    duty.py SECONDS     (or until SIGTERM)"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyload  # noqa: E402


stop = []


def main(seconds):
    clock, cpu = time.time, time.thread_time
    units = []
    end = clock() + seconds
    t, c = clock(), cpu()
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))  # the benchmark is done: print
    while t < end and not stop:
        pyload.fib(20)
        pyload.words(5)
        u, d = clock(), cpu()
        units.append((t, u, d - c))
        t, c = u, d
    sys.stdout.write("".join("u %.6f %.6f %.7f\n" % s for s in units))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
