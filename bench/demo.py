"""The bundled demo: a few seconds of recognisable Python work.

`make demo` profiles it system-wide. Three functions split the time about
50/30/20, so the flame graph has a shape you can check by eye.
"""
import json
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def crunch_numbers(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        fib(18)


def build_documents(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        docs = [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", str(i)]} for i in range(200)]
        json.loads(json.dumps(docs))


def sort_words(seconds):
    end = time.monotonic() + seconds
    words = ["w%07d" % ((i * 7919) % 100003) for i in range(20000)]
    while time.monotonic() < end:
        sorted(words, key=lambda w: w[::-1])


def main(total=5.0):
    crunch_numbers(total * 0.5)
    build_documents(total * 0.3)
    sort_words(total * 0.2)


if __name__ == "__main__":
    main()
