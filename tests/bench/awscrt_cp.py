#!/usr/bin/python3
"""awscrt_cp.py - S3 transfers with aws-c-s3 (AWS's C S3 engine) through
Debian's python3-awscrt, the aws-c-s3 contender of tests/bench/compare.sh.

    awscrt_cp.py get      --endpoint URL --bucket B --key K FILE
    awscrt_cp.py put      --endpoint URL --bucket B --key K FILE
    awscrt_cp.py get-many --endpoint URL --bucket B --keys-file F DIR
    awscrt_cp.py mem      --endpoint URL --bucket B --key K FILE

get/put hand the file to the engine (recv_filepath / send_filepath): it
splits a GET into parallel ranged GETs and a PUT into a parallel multipart
upload, sized by --part-size and its throughput target. get-many GETs each
key of F (one per line) on one client, so connections are reused, into
DIR/<last part of the key>: in turn, or --jobs N of them in flight. mem reads FILE into memory (untimed),
PUTs it from memory to K, then GETs K into memory and compares the bytes
with FILE's (untimed): the aws-c-s3 side of compare.sh's memory rows.
The memory is a memfd handed to the engine as /proc/self/fd/N (--mem-via
memfd, the default), so the engine's own C file I/O moves the bytes; with
--mem-via python the PUT reads a BytesIO body stream and the GET's on_body
callback copies each chunk into a bytearray, both through the
interpreter, which costs the binding far more than the engine (a 512 MiB
PUT took 11 s against 1.2 s for hipobj on the 2-vCPU VM).
Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.

Prints "seconds=S cpu=C" on stdout: the wall time from the first request to
the last one's teardown and the process's CPU time (user+sys, all threads)
over the same span, without Python's start-up and the client's creation,
so the numbers measure the engine rather than the interpreter. mem prints
"put_seconds=S put_cpu=C get_seconds=S get_cpu=C" instead.

awscrt 0.16 connects to the scheme's default port whatever the Host header
says, so the endpoint must be on port 80 (http) or 443 (https).
"""
import argparse
import collections
import hashlib
import io as pyio
import os
import resource
import sys
import time
import urllib.parse

from awscrt import auth, http, io, s3


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("op", choices=("get", "put", "get-many", "mem"))
    ap.add_argument("path", help="FILE (get, put, mem) or DIR (get-many)")
    ap.add_argument("--endpoint", required=True, help="http://HOST[:80]")
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--key", help="the object (get, put)")
    ap.add_argument("--keys-file", help="keys to GET, one a line (get-many)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="get-many: GETs in flight at once (default 1)")
    ap.add_argument("--region", default=os.environ.get("AWS_REGION", "us-east-1"))
    ap.add_argument("--part-size", type=int, default=8 << 20,
                    help="bytes per part / ranged GET (default 8 MiB, as hipobj)")
    ap.add_argument("--mem-via", choices=("memfd", "python"), default="memfd",
                    help="mem: how the bytes reach the engine (see above)")
    ap.add_argument("--throughput-gbps", type=float, default=None,
                    help="the engine's target, which sizes its connection "
                         "pool (default: the engine's own, 5 Gbps)")
    a = ap.parse_args()
    if a.op == "get-many" and not a.keys_file:
        ap.error("get-many needs --keys-file")
    if a.op != "get-many" and not a.key:
        ap.error(f"{a.op} needs --key")
    return a


def make_client(a, url):
    default_port = 443 if url.scheme == "https" else 80
    if url.port not in (None, default_port):
        sys.exit(f"awscrt_cp.py: awscrt 0.16 only connects to port "
                 f"{default_port} for {url.scheme}://, not {url.port}")
    key_id = os.environ.get("AWS_ACCESS_KEY_ID")
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key_id or not secret:
        sys.exit("awscrt_cp.py: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    elg = io.EventLoopGroup()
    bootstrap = io.ClientBootstrap(elg, io.DefaultHostResolver(elg))
    return s3.S3Client(
        bootstrap=bootstrap, region=a.region,
        credential_provider=auth.AwsCredentialsProvider.new_static(key_id, secret),
        tls_mode=(s3.S3RequestTlsMode.ENABLED if url.scheme == "https"
                  else s3.S3RequestTlsMode.DISABLED),
        part_size=a.part_size, throughput_target_gbps=a.throughput_gbps)


def begin(client, url, a, op, key, path, mem=None):
    """One GET or PUT started on the engine (see wait()). With mem (a
    bytearray), the GET lands in it and the PUT's body is it."""
    target = "/" + urllib.parse.quote(a.bucket) + "/" + urllib.parse.quote(key)
    headers = http.HttpHeaders([("Host", url.hostname)])
    body = None
    if op == "get":
        req_type, method = s3.S3RequestType.GET_OBJECT, "GET"
        if mem is None:
            kwargs = {"recv_filepath": path}
        else:
            view = memoryview(mem)

            def on_body(chunk, offset, **_):
                view[offset:offset + len(chunk)] = chunk
            kwargs = {"on_body": on_body}
    else:
        req_type, method = s3.S3RequestType.PUT_OBJECT, "PUT"
        size = os.path.getsize(path) if mem is None else len(mem)
        headers.add("Content-Length", str(size))
        headers.add("Content-Type", "application/octet-stream")
        if mem is None:
            kwargs = {"send_filepath": path}
        else:
            kwargs = {}
            body = pyio.BytesIO(mem)
    return client.make_request(
        request=http.HttpRequest(method, target, headers, body_stream=body),
        type=req_type, **kwargs)


def wait(held, a, op, key):
    """A request from begin(), held alone in a list, waited for until torn
    down (the list gives it up: its shutdown needs the last reference)."""
    req = held.pop()
    try:
        req.finished_future.result()
    except Exception as e:  # AwsCrtError; the S3 error body is appended
        sys.exit(f"awscrt_cp.py: {op} s3://{a.bucket}/{key}: {e}")
    # The received file is flushed and closed only when the request is torn
    # down: drop it and wait for its shutdown, else the file may be short.
    shutdown = req.shutdown_event
    del req
    if not shutdown.wait(60):
        sys.exit("awscrt_cp.py: a request did not shut down within 60 s")


def transfer(client, url, a, op, key, path, mem=None):
    wait([begin(client, url, a, op, key, path, mem)], a, op, key)


def cpu_seconds():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main():
    a = parse_args()
    url = urllib.parse.urlsplit(a.endpoint)
    client = make_client(a, url)
    if a.op == "get-many":
        with open(a.keys_file) as f:
            keys = [line.strip() for line in f if line.strip()]
        start, cpu = time.monotonic(), cpu_seconds()
        inflight = collections.deque()
        for key in keys:
            if len(inflight) >= max(1, a.jobs):
                wait(*inflight.popleft())
            held = [begin(client, url, a, "get", key,
                          os.path.join(a.path, key.rsplit("/", 1)[-1]))]
            inflight.append((held, a, "get", key))
        while inflight:
            wait(*inflight.popleft())
    elif a.op == "mem":
        # Untimed: the expected digest, and the bytes in memory (a memfd
        # filled in the kernel, or a bytearray): never two copies of a
        # 10 GiB object in this process beside the server's.
        h = hashlib.sha256()
        with open(a.path, "rb") as f:
            while chunk := f.read(1 << 26):
                h.update(chunk)
        want, size = h.digest(), os.path.getsize(a.path)
        if a.mem_via == "memfd":
            src = os.memfd_create("awscrt-put")
            with open(a.path, "rb") as f:
                off = 0
                while off < size:
                    n = os.sendfile(src, f.fileno(), off, min(size - off, 1 << 30))
                    if n <= 0:
                        sys.exit("awscrt_cp.py: mem: cannot fill the memfd")
                    off += n
            dst = os.memfd_create("awscrt-get")
            start, cpu = time.monotonic(), cpu_seconds()
            transfer(client, url, a, "put", a.key, f"/proc/self/fd/{src}")
            put_s, put_c = time.monotonic() - start, cpu_seconds() - cpu
            start, cpu = time.monotonic(), cpu_seconds()
            transfer(client, url, a, "get", a.key, f"/proc/self/fd/{dst}")
            get_s, get_c = time.monotonic() - start, cpu_seconds() - cpu
            h, got_len = hashlib.sha256(), 0
            while chunk := os.pread(dst, 1 << 28, got_len):
                h.update(chunk)
                got_len += len(chunk)
            if got_len != size or h.digest() != want:
                sys.exit(f"awscrt_cp.py: mem: the GET of s3://{a.bucket}/"
                         f"{a.key} returned other bytes than were PUT")
        else:
            data = bytearray(size)
            with open(a.path, "rb") as f:
                if f.readinto(data) != size:
                    sys.exit("awscrt_cp.py: mem: short read of the source")
            start, cpu = time.monotonic(), cpu_seconds()
            transfer(client, url, a, "put", a.key, a.path, data)
            put_s, put_c = time.monotonic() - start, cpu_seconds() - cpu
            got = bytearray(len(data))  # zeros, unlike the data
            start, cpu = time.monotonic(), cpu_seconds()
            transfer(client, url, a, "get", a.key, a.path, got)
            get_s, get_c = time.monotonic() - start, cpu_seconds() - cpu
            if hashlib.sha256(got).digest() != want:
                sys.exit(f"awscrt_cp.py: mem: the GET of s3://{a.bucket}/"
                         f"{a.key} returned other bytes than were PUT")
        print(f"put_seconds={put_s:.6f} put_cpu={put_c:.6f} "
              f"get_seconds={get_s:.6f} get_cpu={get_c:.6f}")
        return
    else:
        start, cpu = time.monotonic(), cpu_seconds()
        transfer(client, url, a, a.op, a.key, a.path)
    print(f"seconds={time.monotonic() - start:.6f} cpu={cpu_seconds() - cpu:.6f}")


if __name__ == "__main__":
    main()
