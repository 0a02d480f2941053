"""A fixed amount of CPU-bound Python work for the overhead benchmark:
a recursive function and a dict/str-heavy loop, half the time each."""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(rounds):
    counts = {}
    for r in range(rounds):
        for i in range(1000):
            key = "k%d-%s" % (i % 97, str(r % 13))
            counts[key] = counts.get(key, 0) + len(key.upper())
    return len(counts)


def main(scale):
    for _ in range(scale):
        fib(22)
        words(12)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
