"""load_safetensors_2gpu.py - a safetensors checkpoint split over two GPUs,
loaded at once by one hipobj.Client from a local hipobj-server:

    python3 load_safetensors_2gpu.py --server PATH [--size 8GiB]
        [--runs 5] [--tmp DIR] [--pool 128MiB] [--json FILE]

The checkpoint is two shards of --size / 2 (bf16 "layers" as in
load_safetensors.py, each shard its own seed), made on cuda:0 and cuda:1
and uploaded from there with save_safetensors. Then --runs rounds of three
modes, their order rotating every round:
  one   shard 0 into cuda:0 alone (one GPU's share: half the bytes);
  two   shard 0 into cuda:0 and shard 1 into cuda:1 at once, one thread
        per shard, one client (the checkpoint split over two GPUs);
  same  both shards into cuda:0 at once (the same bytes through one GPU:
        tells a client or server limit from a per-GPU one).
Each load is load_safetensors() + torch.cuda.synchronize() of the GPUs it
used; a mode's time runs from its start to the end of its last load, and
GB/s is the bytes it loaded over that time (aggregate). The CUDA caching
allocator is emptied before every mode. The first round checks every
tensor of every load against the tensors it came from (torch.equal, on
the GPU): a wrong byte fails the script. Medians over the rounds.

Needs two CUDA GPUs, torch, this package (hipobj) and hipobj-server.
Exit status 77 with fewer than two GPUs.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import torch

import hipobj
import hipobj.torch as ht

AK, SK = "HIPOBJBENCHKEY000001", "hipobjBenchSecret00000000000000000000001"
BUCKET = "bench2"
MODES = {
    "one": [(0, "cuda:0")],
    "two": [(0, "cuda:0"), (1, "cuda:1")],
    "same": [(0, "cuda:0"), (1, "cuda:0")],
}


def sync(devices, release=False):
    for d in devices:
        torch.cuda.synchronize(d)
        if release:
            with torch.cuda.device(d):
                torch.cuda.empty_cache()


def make_shard(total, device, seed):
    """{name: tensor on device} of about total bytes."""
    g = torch.Generator(device=device).manual_seed(seed)
    shapes = {"attn.q": (2048, 2048), "attn.k": (2048, 2048),
              "attn.v": (2048, 2048), "attn.o": (2048, 2048),
              "mlp.up": (8192, 2048), "mlp.down": (2048, 8192)}
    per_layer = sum(a * b * 2 for a, b in shapes.values()) + 2048 * 4
    layers = max(1, total // per_layer)
    rest = (total - layers * per_layer) // (2048 * 2)
    out = {f"s{seed}.embed": torch.randn(max(rest, 1), 2048, device=device,
                                         generator=g).to(torch.bfloat16)}
    for i in range(layers):
        for n, s in shapes.items():
            out[f"s{seed}.layers.{i}.{n}"] = torch.randn(
                s, device=device, generator=g).to(torch.bfloat16)
        out[f"s{seed}.layers.{i}.norm"] = torch.rand(2048, device=device,
                                                     generator=g)
    sync([device])
    return out


def same(got, ref):
    """Every tensor of ref, equal, on got's device (ref may be elsewhere)."""
    if set(got) != set(ref):
        return False
    for k, t in ref.items():
        g = got[k]
        if g.dtype != t.dtype or g.shape != t.shape:
            return False
        if not torch.equal(g, t.to(g.device)):
            return False
    return True


def run_mode(client, mode, uris, refs):
    """Loads the mode's shards at once; (seconds, bytes, ok or None)."""
    loads = MODES[mode]
    devices = sorted({d for _, d in loads})
    sync(["cuda:0", "cuda:1"], release=True)
    out = [None] * len(loads)
    errors = []
    go = threading.Barrier(len(loads) + 1)

    def load(i, shard, dev):
        try:
            go.wait()
            out[i] = ht.load_safetensors(uris[shard], device=dev,
                                         client=client)
        except BaseException as e:  # reported by the caller
            errors.append(f"{mode}: shard {shard} -> {dev}: {e!r}")

    threads = [threading.Thread(target=load, args=(i, s, d))
               for i, (s, d) in enumerate(loads)]
    for t in threads:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    sync(devices)
    secs = time.perf_counter() - t0
    if errors:
        raise RuntimeError("; ".join(errors))
    nbytes = sum(t.numel() * t.element_size() for d in out for t in d.values())
    ok = None
    if refs is not None:
        ok = all(same(out[i], refs[s]) for i, (s, _) in enumerate(loads))
    del out
    return secs, nbytes, ok


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True, help="hipobj-server binary")
    ap.add_argument("--size", default="8GiB",
                    help="the whole checkpoint, both shards (8GiB)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tmp", default="/dev/shm",
                    help="where the server's directory goes")
    ap.add_argument("--server-log", default=os.devnull)
    ap.add_argument("--pool", default=None,
                    help="staging_pool_bytes (default: the library's)")
    ap.add_argument("--json", default=None)
    return ap.parse_args()


def main():
    a = parse_args()
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        print("load_safetensors_2gpu.py: SKIP: needs two CUDA GPUs "
              f"(torch sees {torch.cuda.device_count()})")
        sys.exit(77)
    total = hipobj.parse_size(a.size)
    root = pathlib.Path(tempfile.mkdtemp(prefix="hipobj-bench2-", dir=a.tmp))
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
    srv = subprocess.Popen(
        [a.server, "--root", str(root), "--listen", "127.0.0.1:0",
         "--threads", str(os.cpu_count() or 4)],
        env=env, stdout=subprocess.PIPE, stderr=open(a.server_log, "wb"))
    line = srv.stdout.readline().decode()
    if "listening on " not in line:
        sys.exit(f"load_safetensors_2gpu.py: hipobj-server did not start: "
                 f"{line}")
    endpoint = line.split("listening on ", 1)[1].split()[0]
    print(f"# {torch.cuda.get_device_name(0)} x "
          f"{torch.cuda.device_count()}, torch {torch.__version__}, hipobj "
          f"{hipobj.__version__}, {os.cpu_count()} CPUs; pool "
          f"{a.pool or 'default'}", flush=True)
    kw = dict(endpoint=endpoint, region="us-east-1", access_key_id=AK,
              secret_access_key=SK)
    if a.pool:
        kw["staging_pool_bytes"] = a.pool
    rows, bad = [], False
    try:
        c = hipobj.Client(**kw)
        c.create_bucket(BUCKET)
        refs, uris = [], []
        for s in range(2):
            dev = f"cuda:{s}"
            ref = make_shard(total // 2, dev, s + 1)
            uri = f"s3://{BUCKET}/model-0000{s + 1}-of-00002.safetensors"
            t0 = time.perf_counter()
            ht.save_safetensors(ref, uri, client=c, concurrency=16)
            dt = time.perf_counter() - t0
            size = c.head(BUCKET, uri.split("/", 3)[3]).size
            print(f"# shard {s}: {len(ref)} tensors, {size} bytes, saved "
                  f"from {dev} in {dt:.2f} s ({size / dt / 1e9:.2f} GB/s)",
                  flush=True)
            refs.append(ref)
            uris.append(uri)
        # The loads on a client of their own: its staging pool is made in
        # the first measured load, not by the uploads.
        loader = hipobj.Client(**kw)
        names = list(MODES)
        for run in range(a.runs):
            for k in range(len(names)):
                mode = names[(k + run) % len(names)]
                secs, nbytes, ok = run_mode(loader, mode, uris,
                                            refs if run == 0 else None)
                row = dict(mode=mode, run=run, secs=secs, bytes=nbytes,
                           gbps=nbytes / secs / 1e9, ok=ok)
                print(json.dumps(row), flush=True)
                rows.append(row)
                bad = bad or ok is False
        loader.close()
        c.close()
    finally:
        srv.terminate()
        srv.wait()
        subprocess.run(["rm", "-rf", str(root)])
    summary = table(rows)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(
            dict(size=total, runs=a.runs, rows=rows, summary=summary),
            indent=1))
    if bad:
        print("load_safetensors_2gpu.py: FAIL: a load differs from the "
              "tensors it came from")
    sys.exit(1 if bad else 0)


def table(rows):
    what = {"one": "shard 0 -> cuda:0 alone",
            "two": "shard 0 -> cuda:0 + shard 1 -> cuda:1 at once",
            "same": "both shards -> cuda:0 at once"}
    print("\n| mode | what | GiB | median s | median GB/s "
          "| runs [min .. max] s |")
    print("|---|---|---|---|---|---|")
    summary = {}
    for mode in MODES:
        r = [x for x in rows if x["mode"] == mode]
        if not r:
            continue
        s = [x["secs"] for x in r]
        med = statistics.median(s)
        summary[mode] = dict(median_s=med, gbps=r[0]["bytes"] / med / 1e9)
        print(f"| {mode} | {what[mode]} | {r[0]['bytes'] / 2**30:.1f} | "
              f"{med:.2f} | {r[0]['bytes'] / med / 1e9:.2f} | "
              f"[{min(s):.2f} .. {max(s):.2f}] |")
    if "one" in summary and "two" in summary:
        print(f"\ntwo GPUs / one GPU (aggregate GB/s): "
              f"{summary['two']['gbps'] / summary['one']['gbps']:.2f}x")
    return summary


if __name__ == "__main__":
    main()
