"""A CPU-bound Python workload whose stacks are DEPTH frames deep, for the
replay benchmark (bench/replay.sh): THREADS threads each recurse through
three alternating functions to DEPTH, then run a loop of several lines, so
a recording holds many distinct stacks of one depth."""
import sys
import threading


def leaf(n):
    total = 0
    for i in range(n):
        total += i * i
        if i % 7 == 0:
            total ^= i
        total %= 1000003
    return total


def step_a(depth, n):
    return leaf(n) if depth <= 1 else step_b(depth - 1, n)


def step_b(depth, n):
    return leaf(n) if depth <= 1 else step_c(depth - 1, n)


def step_c(depth, n):
    return leaf(n) if depth <= 1 else step_a(depth - 1, n)


def work(depth):
    while True:
        step_a(depth, 2000)
        step_b(depth, 3000)


def main():
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    # The thread's own frames (bootstrap, run, work) count towards the depth.
    depth = max(1, depth - 4)
    sys.setrecursionlimit(depth + 100)
    for _ in range(threads - 1):
        threading.Thread(target=work, args=(depth,), daemon=True).start()
    work(depth)


main()
