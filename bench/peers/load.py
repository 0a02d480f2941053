"""A fixed amount of CPU-bound Python work for the peers benchmark's
slowdown row (bench/pyload.py's, half recursion and half dict/str work),
timed by itself so that a profiler's own start-up is not counted: prints
'elapsed SECONDS'.
    load.py SCALE"""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(rounds):
    counts = {}
    for r in range(rounds):
        for i in range(1000):
            key = "k%d-%s" % (i % 97, str(r % 13))
            counts[key] = counts.get(key, 0) + len(key.upper())
    return len(counts)


t0 = time.perf_counter()
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 200):
    fib(22)
    words(12)
print("elapsed %.4f" % (time.perf_counter() - t0), flush=True)
