"""A known CPU split for the peers benchmark: alpha, beta and gamma do the
same pure-Python work in the ratio 5:3:2, interleaved in ~1 ms chunks in an
order shuffled every 10 chunks, so that a sampler whose period matches the
cycle (10 ms at 100 Hz) cannot keep landing on one of them; a new order each
run (seeded by the system), so that runs pooled are independent draws. Prints the split it measured
itself (thread CPU time around each call) as 'truth alpha A beta B gamma G'.
    split.py SECONDS"""
import random
import sys
import time


def chunk(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def alpha(n):
    return chunk(n)


def beta(n):
    return chunk(n)


def gamma(n):
    return chunk(n)


def main(seconds):
    spent = {"alpha": 0.0, "beta": 0.0, "gamma": 0.0}
    n = 4000  # about 1 ms of work on this machine
    cycle = [alpha] * 5 + [beta] * 3 + [gamma] * 2
    order = random.Random()
    end = time.time() + seconds
    while time.time() < end:
        order.shuffle(cycle)
        for fn in cycle:
            t0 = time.thread_time()
            fn(n)
            spent[fn.__name__] += time.thread_time() - t0
    total = sum(spent.values())
    print("truth " + " ".join("%s %.4f" % (k, v / total) for k, v in sorted(spent.items())), flush=True)


main(float(sys.argv[1]) if len(sys.argv) > 1 else 5)
