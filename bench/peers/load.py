"""bench/pyload.py's fixed CPU-bound work for the peers benchmark's slowdown
row, timed by itself so that a profiler's own start-up is not counted:
prints 'elapsed SECONDS'.
    load.py SCALE"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyload  # noqa: E402

t0 = time.perf_counter()
pyload.main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
print("elapsed %.4f" % (time.perf_counter() - t0), flush=True)
