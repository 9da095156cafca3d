"""small_gets.py - serial small GETs through the Python package, from the
main thread (started and waited for, so that Ctrl-C cancels) and from
another thread (the library's blocking call, which runs a small GET on the
calling thread), in alternating rounds: requests per second and CPU
microseconds per request (the whole process, user + sys) of each.
--ways picks how each object is read: buffer (get into one bytearray of
the object's size, the default), new (get without a buffer: a new
bytearray), head+get (a HEAD, then a GET into a new bytearray of the size
it told, pinned to its ETag: what get without a buffer did before).

    python3 small_gets.py ENDPOINT [--count 1000] [--size 4096] [--rounds 4]
                                   [--ways buffer,new,head+get]

Credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; the objects go
into a bucket of their own, removed at the end. A benchmark, not a test:
it asserts nothing about time."""
import argparse
import os
import resource
import threading
import time

import hipobj


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoint")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--ways", default="buffer")
    a = ap.parse_args()
    ways = a.ways.split(",")
    if not ways or set(ways) - {"buffer", "new", "head+get"}:
        ap.error("--ways: a list of buffer, new, head+get")
    c = hipobj.Client(a.endpoint, region="us-east-1")
    bucket = f"small-gets-{os.getpid()}"
    c.create_bucket(bucket)
    keys = [f"o/{i:06d}" for i in range(a.count)]
    data = os.urandom(a.size)
    for k in keys:
        c.put(bucket, k, data)
    buf = bytearray(a.size)
    last = []

    def read(way, k):
        if way == "buffer":
            return c.get(bucket, k, out=buf).data
        if way == "new":
            return c.get(bucket, k).data
        info = c.head(bucket, k)
        return c.get(bucket, k, out=bytearray(info.size),
                     if_match=info.etag).data

    def run(way):
        for k in keys:
            got = read(way, k)
        last.append(bytes(got))

    def timed(way, where):
        t0, c0 = time.perf_counter(), cpu_seconds()
        if where == "main thread":
            run(way)
        else:
            t = threading.Thread(target=run, args=(way,))
            t.start()
            t.join()
        secs, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        return a.count / secs, cpu / a.count * 1e6

    cases = [(w, where) for w in ways
             for where in ("main thread", "other thread")]
    res = {case: [] for case in cases}
    for _ in range(a.rounds):
        for case in cases:
            res[case].append(timed(*case))
    assert all(x == data for x in last), "a GET returned other bytes"
    for k in keys:
        c.delete(bucket, k)
    c.delete_bucket(bucket)
    print(f"{a.count} GETs of {a.size} B, {a.rounds} alternating rounds")
    med = {}
    for (way, where), v in res.items():
        rates = sorted(x[0] for x in v)
        cpus = sorted(x[1] for x in v)
        med[way, where] = rates[len(rates) // 2]
        print(f"  {way:8s} {where:12s} {med[way, where]:8.0f} requests/s  "
              f"[{rates[0]:.0f} .. {rates[-1]:.0f}]  "
              f"{cpus[len(cpus) // 2]:6.1f} us CPU/request")
    for way in ways:
        print(f"  {way}: other/main "
              f"{med[way, 'other thread'] / med[way, 'main thread']:.2f}x")


if __name__ == "__main__":
    main()
