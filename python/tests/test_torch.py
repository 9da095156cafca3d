"""hipobj.torch on CPU tensors against hipobj-server: transfers into and
from PyTorch CPU tensors (DLPack), load_safetensors / save_safetensors
(multipart) checked against files written byte by byte here and, where
the `safetensors` package is installed (not in Debian 12; on the GPU
machine), against it; the Dataset with forked DataLoader workers. The same
on GPU memory: test_gpu.py."""

import json
import struct

import pytest

import hipobj
from conftest import ACCESS_KEY, REGION, SECRET_KEY
from test_client import MiB, pattern
from test_safetensors import hand_written, sample

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import hipobj.torch as ht  # noqa: E402 (needs torch)


def storage_ptr(t):
    """Where the storage of t starts (the allocation it is a view of)."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr()


def test_cpu_tensors_as_memory(client, bucket):
    t = torch.arange(1000, dtype=torch.float32).to(torch.bfloat16)
    client.put(bucket, "bf16", t)  # no buffer protocol: DLPack, kDLCPU
    out = torch.empty(1000, dtype=torch.bfloat16)
    r = client.get(bucket, "bf16", out=out)
    assert r.bytes == 2000 and torch.equal(out, t)
    with pytest.raises(ValueError, match="contiguous"):
        client.get(bucket, "bf16", out=torch.empty(2000,
                                                   dtype=torch.bfloat16)[::2])


def test_cpu_tensors_do_not_go_through_dlpack(client, bucket):
    # Tensor.__dlpack_device__ asks CUDA whether a CPU tensor is pinned,
    # which fails in a forked DataLoader worker of a process that had used
    # CUDA: CPU tensors are taken at their data_ptr() instead.
    class NoDLPack(torch.Tensor):
        def __dlpack_device__(self):
            raise AssertionError("__dlpack_device__ was called")

    client.put(bucket, "k", b"0123456789")
    out = torch.zeros(10, dtype=torch.uint8).as_subclass(NoDLPack)
    client.get(bucket, "k", out=out)
    assert bytes(out.numpy()) == b"0123456789"
    client.put(bucket, "k2", out[2:6])  # a view: data_ptr() has the offset
    assert client.get(bucket, "k2").data == b"2345"


def test_load_safetensors_cpu(client, bucket):
    entries, expect = sample()
    bf = torch.tensor([1.5, -3.0, 0.25, 1e30], dtype=torch.bfloat16)
    # 8 bytes: the tensors after it stay where sample() put them.
    entries.insert(1, ("bf", "BF16", [4], bf.view(torch.int16).numpy()
                       .tobytes()))
    client.put(bucket, "m", hand_written(entries, metadata={"a": "b"}))
    got = ht.load_safetensors(f"s3://{bucket}/m", client=client)
    assert set(got) == set(expect) | {"bf"}
    assert torch.equal(got["bf"], bf)
    for k, v in expect.items():
        assert got[k].device.type == "cpu"
        assert got[k].shape == v.shape, k
        assert np.array_equal(got[k].numpy(), v), k
    # One allocation: the aligned tensors are views of it; "odd" (at an
    # offset its float32 elements cannot start at) is a copy.
    base = storage_ptr(got["big"])
    assert all(storage_ptr(got[k]) == base
               for k in ("bf", "scalar", "small", "flags"))
    assert storage_ptr(got["odd"]) != base


def test_dtypes_this_pytorch_lacks(client, bucket):
    missing = [c for c in ("U16", "U32", "U64", "F8_E4M3")
               if c not in ht._DTYPES]
    if not missing:
        pytest.skip(f"PyTorch {torch.__version__} has every dtype")
    size = hipobj.safetensors.DTYPE_SIZES[missing[0]]
    head = json.dumps({"t": {"dtype": missing[0], "shape": [8 // size],
                             "data_offsets": [0, 8]}}).encode()
    client.put(bucket, "u", struct.pack("<Q", len(head)) + head + b"\0" * 8)
    with pytest.raises(TypeError, match=missing[0]):
        ht.load_safetensors(f"s3://{bucket}/u", client=client)


def tensors():
    g = torch.Generator().manual_seed(5)
    return {
        "w": torch.randn(1500, 1000, generator=g),          # 6 MB
        "emb": torch.randn(1200, 1024, generator=g).to(torch.bfloat16),
        "ids": torch.randint(-9, 9, (700000,), generator=g),  # 5.6 MB
        "mask": torch.rand(333, generator=g) > 0.5,
        "scalar": torch.tensor(3.5, dtype=torch.float64),
        "none": torch.empty(0, 7, dtype=torch.int32),
        "b": torch.arange(7, dtype=torch.uint8),
    }


def test_save_safetensors_cpu_multipart(client, bucket, server):
    ts = tensors()
    total = sum(t.numel() * t.element_size() for t in ts.values())
    r = ht.save_safetensors(ts, f"s3://{bucket}/ck", client=client,
                            metadata={"step": 7}, part_size="5MiB",
                            concurrency=2)
    assert server.uploads(bucket) == []
    blob = client.get(bucket, "ck").data
    parts = -(-len(blob) // (5 * MiB))
    assert parts >= 3 and r.etag.endswith(f'-{parts}"')
    n = struct.unpack("<Q", blob[:8])[0]
    doc = json.loads(blob[8:8 + n])
    assert doc.pop("__metadata__") == {"step": "7"}
    assert (8 + n) % 8 == 0 and len(blob) == 8 + n + total
    for name, d in doc.items():  # every tensor starts aligned
        assert d["data_offsets"][0] % ts[name].element_size() == 0, name
        begin, end = (8 + n + o for o in d["data_offsets"])
        raw = ts[name].reshape(-1).view(torch.uint8).numpy().tobytes()
        assert bytes(blob[begin:end]) == raw, name
    got = ht.load_safetensors(f"s3://{bucket}/ck", client=client)
    for name, t in ts.items():
        assert got[name].dtype == t.dtype and torch.equal(got[name], t), name


def test_save_safetensors_small_is_one_put(client, bucket):
    r = ht.save_safetensors({"a": torch.ones(4)}, f"s3://{bucket}/one",
                            client=client)
    assert r.parts <= 1 and not r.etag.endswith('-1"')
    assert torch.equal(ht.load_safetensors(f"s3://{bucket}/one",
                                           client=client)["a"], torch.ones(4))
    with pytest.raises(ValueError, match="contiguous"):
        ht.save_safetensors({"a": torch.ones(4, 4).t()}, f"s3://{bucket}/x",
                            client=client)


def test_save_failure_aborts_the_upload(make_server):
    s = make_server("--faults", "op=UploadPart,nth=2,action=status:400")
    with s.client(max_attempts=1) as c:
        b = "pyt-abort"
        c.create_bucket(b)
        with pytest.raises(hipobj.ClientError) as e:
            ht.save_safetensors(tensors(), f"s3://{b}/ck", client=c,
                                part_size="5MiB", concurrency=1)
        assert e.value.operation.startswith("UploadPart")
        assert s.uploads(b) == []
        with pytest.raises(hipobj.NotFound):
            c.head(b, "ck")


def test_the_safetensors_package_agrees(client, bucket, tmp_path):
    stt = pytest.importorskip(
        "safetensors.torch",
        reason="the safetensors package is not installed (not in Debian "
               "12; the GPU machine has it)")
    ts = tensors()
    # Ours, read by theirs.
    ht.save_safetensors(ts, f"s3://{bucket}/ours", client=client,
                        part_size="5MiB")
    client.get(bucket, "ours", out=tmp_path / "ours")
    theirs = stt.load_file(str(tmp_path / "ours"))
    assert all(torch.equal(theirs[k], ts[k]) for k in ts)
    # Theirs, read by ours.
    stt.save_file(ts, str(tmp_path / "theirs"), metadata={"x": "y"})
    client.put(bucket, "theirs", tmp_path / "theirs")
    got = ht.load_safetensors(f"s3://{bucket}/theirs", client=client)
    assert all(torch.equal(got[k], ts[k]) for k in ts)


def test_dataset_with_forked_workers(client, bucket, server):
    objs = {f"ds/{i:03d}": pattern(1000 + 37 * i, i) for i in range(24)}
    for k, v in objs.items():
        client.put(bucket, k, v)
    client.put(bucket, "other/x", b"not in the dataset")
    ds = ht.S3Dataset(f"s3://{bucket}/ds/", client_config=dict(
        endpoint=server.endpoint, region=REGION, access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY))
    assert len(ds) == 24 and ds.keys == sorted(objs)
    assert bytes(ds[3].numpy()) == objs["ds/003"]
    loader = torch.utils.data.DataLoader(
        ds, batch_size=None, num_workers=2,
        multiprocessing_context="fork")
    seen = [bytes(t.numpy()) for t in loader]
    assert seen == [objs[k] for k in sorted(objs)]
    with pytest.raises(ValueError, match="s3://"):
        ht.S3Dataset("bucket/prefix")
