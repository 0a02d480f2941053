"""Probe workloads for the peers benchmark's features row, each a few
seconds long, each leaving a mark only a profiler that sees the feature
shows (no function is named after what a predicate looks for):
    features.py syscalls SECONDS   os.stat in a loop: kernel frames (do_syscall_64)
    features.py zlib SECONDS       zlib.compress: a C library's frames (deflate)
    features.py threads SECONDS    CPU in threads named worker-0 and worker-1
    features.py gil SECONDS        two threads taking turns at the GIL
    features.py children SECONDS   a child interpreter running child_spin()
    features.py spin SECONDS       container_spin() (run in a container)"""
import os
import subprocess
import sys
import threading
import time
import zlib


def until(seconds, fn, *args):
    end = time.time() + seconds
    while time.time() < end:
        fn(*args)


def burn(n=20000):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def syscalls(seconds):
    until(seconds, os.stat, "/")


def zlib_mode(seconds):
    data = os.urandom(1 << 16) * 8
    until(seconds, zlib.compress, data, 9)


def threads(seconds):
    ts = [threading.Thread(target=until, args=(seconds, burn), name="worker-%d" % i) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def take_turns(seconds):
    ts = [threading.Thread(target=until, args=(seconds, burn)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def child_spin(seconds):
    until(seconds, burn)


def children(seconds):
    subprocess.check_call([sys.executable, os.path.abspath(__file__), "child", str(seconds)])


def container_spin(seconds):
    until(seconds, burn)


MODES = {"syscalls": syscalls, "zlib": zlib_mode, "threads": threads, "gil": take_turns, "children": children,
         "child": child_spin, "spin": container_spin}
MODES[sys.argv[1]](float(sys.argv[2]))
