"""load_safetensors.py - how fast a safetensors checkpoint gets from a local
hipobj-server into GPU tensors: hipobj.torch.load_safetensors against the
usual path, aws-c-s3 (awscrt) downloading the file to /dev/shm and then
safetensors.torch.load_file(device="cuda:0").

    python3 load_safetensors.py --server PATH [--sizes 4GiB,16GiB]
        [--runs 3] [--awscrt-python PY] [--tmp DIR] [--json FILE]

For each size: a checkpoint of bf16 "layers" (attention 4 x 8 MiB, MLP
2 x 32 MiB, a float32 norm) made on the GPU and uploaded with
save_safetensors (a multipart upload from GPU memory, timed too); then
--runs rounds, the two tools alternating which goes first. Each load is
checked once against the tensors it came from (torch.equal on the GPU).

Measured, interpreter start-up and imports excluded:
  hipobj  load_safetensors() + torch.cuda.synchronize(): the header GET,
          the device allocation, the data GET into it, the views;
  usual   awscrt_cp.py's own "seconds=" (tests/bench/awscrt_cp.py: from
          its first request to the file being closed, without Python's
          start-up and the client's creation), plus load_file() +
          synchronize in this process.
GB/s is the checkpoint's bytes over that time. Peak host RSS: for hipobj,
this process's peak resident memory during the load above what it held
before (VmHWM after resetting it through /proc/self/clear_refs); for the
usual path the larger of the awscrt process's peak (wait4's ru_maxrss)
and load_file's rise here. The CUDA caching allocator is emptied before
every load, so both tools allocate their device memory. Medians over runs.

Needs, on the GPU machine: torch with CUDA, the safetensors package, this
package (hipobj) importable, hipobj-server, and for the usual path a
Python with awscrt (Debian's, carried by tests/bench/pack-peers.sh), with
the server on port 80 (awscrt 0.16 connects to the scheme's port).
Nothing here fails on slow numbers; it fails on a wrong byte or error.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import hipobj
import hipobj.torch as ht

AK, SK = "HIPOBJBENCHKEY000001", "hipobjBenchSecret00000000000000000000001"
BUCKET = "bench"
REPO = pathlib.Path(__file__).resolve().parents[2]


def rss_kib():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def reset_peak():
    """Makes VmHWM the current RSS; False where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Peak:
    """The rise of this process's peak RSS over a block, in MiB."""

    def __enter__(self):
        self.ok = reset_peak()
        self.before = rss_kib()[0]
        return self

    def __exit__(self, *exc):
        hwm = rss_kib()[1]
        self.mib = (hwm - self.before) / 1024 if self.ok else None
        self.total_mib = hwm / 1024  # the whole process, CUDA included
        return False


DEVICE = "cuda:0"


def sync(release=False):
    """Waits for the GPU; release: and gives PyTorch's cached blocks back
    (before each load, so that every load allocates its memory)."""
    if torch.device(DEVICE).type == "cuda":
        torch.cuda.synchronize()
        if release:
            torch.cuda.empty_cache()


def make_checkpoint(total):
    """{name: bf16/f32 tensor on DEVICE} of about total bytes: layers,
    and an embedding of what is left."""
    g = torch.Generator(device=DEVICE).manual_seed(1)
    shapes = {"attn.q": (2048, 2048), "attn.k": (2048, 2048),
              "attn.v": (2048, 2048), "attn.o": (2048, 2048),
              "mlp.up": (8192, 2048), "mlp.down": (2048, 8192)}
    per_layer = sum(a * b * 2 for a, b in shapes.values()) + 2048 * 4
    layers = max(1, total // per_layer)
    rest = (total - layers * per_layer) // (2048 * 2)
    out = {"embed": torch.randn(max(rest, 1), 2048, device=DEVICE,
                                generator=g).to(torch.bfloat16)}
    for i in range(layers):
        for n, s in shapes.items():
            out[f"layers.{i}.{n}"] = torch.randn(
                s, device=DEVICE, generator=g).to(torch.bfloat16)
        out[f"layers.{i}.norm"] = torch.rand(2048, device=DEVICE,
                                             generator=g)
    sync()
    return out


def same(a, b):
    return set(a) == set(b) and all(
        a[k].dtype == b[k].dtype and a[k].device == b[k].device
        and torch.equal(a[k], b[k])
        for k in b)


def run_hipobj(client, uri, ref):
    sync(release=True)
    with Peak() as p:
        t0 = time.perf_counter()
        d = ht.load_safetensors(uri, device=DEVICE, client=client)
        sync()
        secs = time.perf_counter() - t0
    ok = same(d, ref) if ref is not None else None
    del d
    return secs, p.mib, ok, p.total_mib


def run_usual(args, key, path, ref):
    from safetensors.torch import load_file
    sync(release=True)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    cmd = [args.awscrt_python, str(REPO / "tests/bench/awscrt_cp.py"), "get",
           "--endpoint", "http://127.0.0.1:80", "--bucket", BUCKET,
           "--key", key, path]
    if args.awscrt_gbps:
        cmd[-1:-1] = ["--throughput-gbps", str(args.awscrt_gbps)]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE) as proc:
        out = proc.stdout.read().decode()
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or "seconds=" not in out:
        raise RuntimeError(f"awscrt_cp.py failed ({proc.returncode}): {out}")
    dl = float(out.split("seconds=")[1].split()[0])
    with Peak() as p:
        t0 = time.perf_counter()
        d = load_file(path, device=DEVICE)
        sync()
        secs = time.perf_counter() - t0
    ok = same(d, ref) if ref is not None else None
    del d
    os.unlink(path)
    rss = max(ru.ru_maxrss / 1024, p.mib or 0)
    return dl + secs, rss, ok, dl


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True, help="hipobj-server binary")
    ap.add_argument("--sizes", default="4GiB,16GiB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmp", default="/dev/shm",
                    help="where the usual path's file goes (/dev/shm)")
    ap.add_argument("--root", default=None,
                    help="the server's directory (default: under --tmp)")
    ap.add_argument("--awscrt-python", default=None,
                    help="a Python that imports awscrt (default: none: "
                         "hipobj only)")
    ap.add_argument("--awscrt-gbps", type=float, default=None,
                    help="aws-c-s3's throughput target, which sizes its "
                         "connection pool (default: the engine's own, as "
                         "tests/bench/compare.sh runs it)")
    ap.add_argument("--server-log", default=os.devnull)
    ap.add_argument("--pool", default="128MiB",
                    help="hipobj's staging pool (staging_pool_bytes)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", default=DEVICE,
                    help="where the tensors go (cpu: a dry run of this "
                         "script without a GPU)")
    return ap.parse_args()


def main():
    global DEVICE
    a = parse_args()
    DEVICE = a.device
    sizes = [hipobj.parse_size(s) for s in a.sizes.split(",")]
    root = pathlib.Path(a.root or tempfile.mkdtemp(prefix="hipobj-bench-",
                                                   dir=a.tmp))
    port = 80 if a.awscrt_python else 0
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    srv = subprocess.Popen(
        [a.server, "--root", str(root), "--listen", f"127.0.0.1:{port}",
         "--threads", str(os.cpu_count() or 4)],
        env=env, stdout=subprocess.PIPE, stderr=open(a.server_log, "wb"))
    line = srv.stdout.readline().decode()
    if "listening on " not in line:
        sys.exit(f"load_safetensors.py: hipobj-server did not start: {line}")
    endpoint = line.split("listening on ", 1)[1].split()[0]
    gpu = torch.cuda.get_device_name(0) if "cuda" in DEVICE else DEVICE
    print(f"# {gpu}, torch {torch.__version__}, "
          f"hipobj {hipobj.__version__}, {os.cpu_count()} CPUs; server "
          f"root {root}, usual path's file in {a.tmp}; pool {a.pool}",
          flush=True)
    results = []
    try:
        c = hipobj.Client(endpoint=endpoint, region="us-east-1",
                          access_key_id=AK, secret_access_key=SK,
                          staging_pool_bytes=a.pool)
        c.create_bucket(BUCKET)
        for size in sizes:
            # Loads on a client of their own, made here: its staging pool
            # is allocated inside the first measured load, not by the
            # upload before it.
            loader = hipobj.Client(endpoint=endpoint, region="us-east-1",
                                   access_key_id=AK, secret_access_key=SK,
                                   staging_pool_bytes=a.pool)
            results.append(bench_size(a, c, loader, size))
            loader.close()
            for r in results[-1]["rows"]:
                print(json.dumps(r), flush=True)
    finally:
        srv.terminate()
        srv.wait()
        if a.root is None:
            subprocess.run(["rm", "-rf", str(root)])
    print_table(results)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(results, indent=1))
    bad = [r for res in results for r in res["rows"] if r.get("ok") is False]
    sys.exit(1 if bad else 0)


def bench_size(a, c, loader, size):
    key = f"model-{size >> 20}MiB.safetensors"
    uri = f"s3://{BUCKET}/{key}"
    ref = make_checkpoint(size)
    nbytes = sum(t.numel() * t.element_size() for t in ref.values())
    t0 = time.perf_counter()
    r = ht.save_safetensors(ref, uri, client=c, concurrency=16)
    save_s = time.perf_counter() - t0
    obj = c.head(BUCKET, key).size
    print(f"# {key}: {len(ref)} tensors, {obj} bytes; save_safetensors "
          f"from {DEVICE} memory {save_s:.2f} s "
          f"({obj / save_s / 1e9:.2f} GB/s, {r.parts} parts)", flush=True)
    rows = []
    for run in range(a.runs):
        order = ["hipobj", "usual"] if run % 2 == 0 else ["usual", "hipobj"]
        for tool in order:
            check = ref if run == 0 else None  # each tool checked once
            if tool == "hipobj":
                secs, rss, ok, total = run_hipobj(loader, uri, check)
                row = dict(tool="hipobj", secs=secs, rss_mib=rss,
                           process_peak_rss_mib=total)
            elif a.awscrt_python:
                path = os.path.join(a.tmp, f"hipobj-bench-{os.getpid()}")
                secs, rss, ok, dl = run_usual(a, key, path, check)
                row = dict(tool="usual", secs=secs, rss_mib=rss,
                           download_s=dl)
            else:
                continue
            row.update(size=obj, run=run, gbps=obj / secs / 1e9, ok=ok)
            rows.append(row)
    c.delete(BUCKET, key)
    del ref
    sync(release=True)
    return dict(size=obj, tensors_bytes=nbytes, save_s=save_s, rows=rows)


def print_table(results):
    print("\n| size | tool | median s | GB/s | peak host RSS MiB (max) "
          "| runs [min .. max] s |")
    print("|---|---|---|---|---|---|")
    for res in results:
        med = {}
        for tool in ("hipobj", "usual"):
            rows = [r for r in res["rows"] if r["tool"] == tool]
            if not rows:
                continue
            s = [r["secs"] for r in rows]
            rss = [r["rss_mib"] for r in rows if r["rss_mib"] is not None]
            med[tool] = statistics.median(s)
            extra = ""
            if tool == "usual":
                extra = (" (download "
                         f"{statistics.median(r['download_s'] for r in rows):.2f} s)")
            peak = f"{max(rss):.0f}" if rss else "n/a"
            print(f"| {res['size'] / 2**30:.1f} GiB | {tool} | "
                  f"{med[tool]:.2f}{extra} | "
                  f"{res['size'] / med[tool] / 1e9:.2f} | {peak} | "
                  f"[{min(s):.2f} .. {max(s):.2f}] |")
        if len(med) == 2:
            print(f"| | hipobj / usual | {med['usual'] / med['hipobj']:.2f}x "
                  "faster | | | |")


if __name__ == "__main__":
    main()
