"""An asyncio service for bench/asyncio.sh: N tasks each looping over
handler() -> fetch_remote() -> asyncio.sleep(0.2), plus one task doing
CPU work in slices (the service's throughput); prints its slices done and
the CPU it used."""
import asyncio
import sys
import time


async def fetch_remote():
    await asyncio.sleep(0.2)


async def handler():
    await fetch_remote()


async def client(until):
    while time.monotonic() < until:
        await handler()


async def worker(until, done):
    while time.monotonic() < until:
        x = 0
        for _ in range(20000):
            x += 1
        done[0] += 1
        await asyncio.sleep(0)


async def main(n, seconds):
    until = time.monotonic() + seconds
    done = [0]
    t0 = time.process_time()
    await asyncio.gather(worker(until, done), *[client(until) for _ in range(n)])
    print("slices %d cpu %.3f" % (done[0], time.process_time() - t0), flush=True)


asyncio.run(main(int(sys.argv[1]), float(sys.argv[2])))
