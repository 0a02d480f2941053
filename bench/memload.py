"""An allocation-heavy Python program for bench/memory.sh: a dict/list
builder. Each unit of work builds a dict of small records (str keys, lists,
tuples, small dicts), a list of small objects, a joined string and a larger
buffer (64 KiB to 1 MiB, some above glibc's mmap threshold); it keeps one
unit in four (their records go into a pool that is halved whenever it holds
more than POOL units, so the resident memory grows to ~200 MB, falls back
and grows again) and lets the rest go. Deterministic: the same objects in
the same order every run.

At the end it prints one line of its own clocks, from the first unit to the
last (its start-up and a launching profiler's start and finish left out):
    memload: UNITS units, WALL s wall, CPU s CPU (RATE units/s), peak RSS MB MB, process CPU S s
(CPU: time.process_time over the work; process CPU: the whole process's
user + system time from getrusage, start-up included, which the benchmark
takes off a launching tool's children's time to get the tool's own).
    memload.py [SIZE]     SIZE units (default 4500: ~5 s on one core here)"""
import resource
import sys
import time

POOL = 160  # units kept at most before the oldest half goes


class Point:
    __slots__ = ("x", "y", "tag")

    def __init__(self, x, y, tag):
        self.x, self.y, self.tag = x, y, tag


def records(i):
    d = {}
    for j in range(600):
        key = "user-%d-%d" % (i, j)
        d[key] = [j, str(j * 7), (i, j), {"id": j, "name": key[-6:]}]
    return d


def points(i):
    return [Point(j, i - j, "p%d" % (j % 50)) for j in range(1200)]


def text(i):
    return ",".join("%d:%x" % (i, j) for j in range(400))


def buffer(i):
    # 64 KiB to 1 MiB: the larger come from mmap (until glibc's threshold
    # rises past them), each one's pages are written
    b = bytearray(65536 << (i % 5))
    b[:: 4096] = b"\x01" * len(b[:: 4096])
    return b


def unit(i, pool):
    r, p, s, b = records(i), points(i), text(i), buffer(i)
    if i % 4 == 0:
        pool.append((r, p, s, b if i % 8 == 0 else None))
        if len(pool) > POOL:
            del pool[: POOL // 2]
    return len(r) + len(p) + len(s) + len(b)


def main(size):
    pool = []
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for i in range(size):
        n += unit(i, pool)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(
        "memload: %d units, %.4f s wall, %.4f s CPU (%.1f units/s), peak RSS %.0f MB, process CPU %.4f s"
        % (size, wall, cpu, size / wall, ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime)
    )
    return n


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4500)
