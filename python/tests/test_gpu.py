"""GPU memory through the package, against hipobj-server.

Two groups:
  * device memory from the library itself (hipobj's gpu_alloc), handed
    over as __cuda_array_interface__ and as DLPack capsules made here with
    ctypes: runs wherever the library finds a CUDA driver: on the GPU
    machine, and in CI under the stand-in libcuda.so.1 of tests/gpu (the
    meson test python-mock-cuda), whose "device" memory is host memory;
  * PyTorch CUDA tensors and CuPy arrays, load_safetensors and
    save_safetensors on cuda:0: only where torch.cuda works (the H200).
Device bytes are never read directly: every check goes through a round
trip (GPU -> server -> host) and compares host bytes."""

import concurrent.futures
import ctypes
import os

import pytest

import hipobj
from hipobj import _hipobj
from test_client import MiB, pattern

WAIT = 120

cuda_info = hipobj.gpu_platform("cuda")
needs_cuda = pytest.mark.skipif(
    not cuda_info["available"] or cuda_info["device_count"] < 1,
    reason=f"no CUDA device for the library: {cuda_info['reason']}")


def torch_cuda():
    try:
        import torch
    except ImportError as e:
        pytest.skip(f"PyTorch is not installed ({e})")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    if os.environ.get("HIPOBJ_TEST_MOCK_CUDA"):
        pytest.skip("the stand-in libcuda is loaded: no real GPU")
    return torch


class DeviceMemory:
    """n bytes of CUDA memory from the library, freed with the object."""

    def __init__(self, n, device=0):
        self.n, self.device = n, device
        self.ptr = _hipobj.gpu_alloc(_hipobj.MEM_CUDA, device, n)

    def __del__(self):
        if getattr(self, "ptr", None):
            _hipobj.gpu_free(_hipobj.MEM_CUDA, self.device, self.ptr, self.n)


class CAI:
    """__cuda_array_interface__ (v3) over bytes [off, off + n) of mem."""

    def __init__(self, mem, off=0, n=None, readonly=False):
        self.mem = mem
        n = mem.n - off if n is None else n
        self.__cuda_array_interface__ = {
            "shape": (n,), "typestr": "|u1", "version": 3, "strides": None,
            "data": (mem.ptr + off, readonly), "stream": None}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DLPack:
    """A DLPack producer (kDLCUDA, float32 rows x cols, optional strides)
    over mem at byte_offset. Keeps what the capsule points to alive."""

    def __init__(self, mem, rows, cols, byte_offset=0, strides=None):
        self.mem = mem
        self.shape = (ctypes.c_int64 * 2)(rows, cols)
        self.strides = (ctypes.c_int64 * 2)(*strides) if strides else None
        t = DLTensor(ctypes.c_void_p(mem.ptr), DLDevice(2, mem.device), 2,
                     DLDataType(2, 32, 1), self.shape, self.strides,
                     byte_offset)
        self.managed = DLManagedTensor(t, None, None)

    def __dlpack_device__(self):
        return (2, self.mem.device)

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self.managed), b"dltensor", None)


@needs_cuda
def test_library_device_memory_round_trip(client, bucket):
    data = pattern(3 * MiB + 5)
    client.put(bucket, "src", data)
    dev = DeviceMemory(4 * MiB)
    # GET into device memory (CAI: the library classifies the pointer).
    r = client.get(bucket, "src", out=CAI(dev, 0, len(data)),
                   part_size="1MiB", concurrency=4)
    assert r.bytes == len(data) and r.path in ("http-staged", "rdma-direct",
                                                "rdma-staged")
    # PUT from device memory (DLPack, kDLCUDA, an offset into it).
    rows = (len(data) - 1) // 4 // 256
    src = DLPack(dev, rows, 256, byte_offset=4)
    w = client.put(bucket, "back", src)
    assert w.bytes == rows * 256 * 4 and w.path != "http"
    assert client.get(bucket, "back").data == data[4:4 + w.bytes]
    # A range into the middle of device memory.
    client.get(bucket, "src", out=CAI(dev, MiB, 1000), range=(77, 1000))
    client.put(bucket, "mid", CAI(dev, MiB, 1000))
    assert client.get(bucket, "mid").data == data[77:1077]


@needs_cuda
def test_library_device_memory_errors(client, bucket):
    client.put(bucket, "k", pattern(5000))
    dev = DeviceMemory(4096)
    with pytest.raises(hipobj.BufferTooSmall):
        client.get(bucket, "k", out=CAI(dev))
    with pytest.raises(ValueError, match="read-only"):
        client.get(bucket, "k", out=CAI(dev, readonly=True))
    with pytest.raises(ValueError, match="contiguous"):
        client.put(bucket, "k", DLPack(dev, 4, 4, strides=(8, 1)))


@needs_cuda
def test_library_device_memory_async_and_cancel(client, bucket, make_server):
    data = pattern(6 * MiB)
    client.put(bucket, "k", data)
    dev = DeviceMemory(len(data))
    seen = []
    f = client.get_async(bucket, "k", out=CAI(dev), part_size="1MiB",
                         progress=lambda d, t: seen.append((d, t)))
    assert f.result(WAIT).bytes == len(data)
    assert seen and seen[-1] == (len(data), len(data))
    assert client.put_async(bucket, "k2", CAI(dev)).result(WAIT).bytes == \
        len(data)
    assert client.get(bucket, "k2").data == data
    s = make_server("--faults", "op=GetObject,action=delay:3000")
    with s.client() as c:
        c.create_bucket("gpu-cancel")
        c.put("gpu-cancel", "k", data)
        g = c.get_async("gpu-cancel", "k", out=CAI(dev))
        g.cancel()
        with pytest.raises(concurrent.futures.CancelledError):
            g.result(WAIT)


# ---- PyTorch and CuPy on a real GPU ----


def test_torch_cuda_tensors(client, bucket):
    torch = torch_cuda()
    data = pattern(5 * MiB)
    client.put(bucket, "k", data)
    t = torch.empty(len(data), dtype=torch.uint8, device="cuda:0")
    r = client.get(bucket, "k", out=t)
    assert r.bytes == len(data) and r.path != "http"
    assert bytes(t.cpu().numpy()) == data
    # bfloat16 has no __cuda_array_interface__ typestr: DLPack is used.
    b = (torch.arange(1 << 20, device="cuda:0") % 1000).to(torch.bfloat16)
    client.put(bucket, "bf", b)
    out = torch.zeros_like(b)
    client.get(bucket, "bf", out=out)
    assert torch.equal(out, b)
    f = client.get_async(bucket, "k", out=t[MiB:2 * MiB], range=(3, MiB))
    f.result(WAIT)
    assert bytes(t[MiB:2 * MiB].cpu().numpy()) == data[3:3 + MiB]


def test_cupy_arrays(client, bucket):
    torch_cuda()
    cupy = pytest.importorskip("cupy")
    data = pattern(2 * MiB)
    client.put(bucket, "k", data)
    a = cupy.empty(len(data), dtype=cupy.uint8)
    client.get(bucket, "k", out=a)
    assert bytes(cupy.asnumpy(a)) == data
    client.put(bucket, "k2", a[1000:])
    assert client.get(bucket, "k2").data == data[1000:]


def test_load_and_save_safetensors_on_cuda(client, bucket):
    torch = torch_cuda()
    import hipobj.torch as ht
    from test_safetensors import hand_written, sample
    entries, expect = sample()
    client.put(bucket, "m", hand_written(entries))
    got = ht.load_safetensors(f"s3://{bucket}/m", device="cuda:0",
                              client=client)
    base = got["big"].untyped_storage().data_ptr()
    for k, v in expect.items():
        assert got[k].is_cuda and tuple(got[k].shape) == v.shape, k
        assert (got[k].cpu().numpy() == v).all(), k
    assert got["small"].untyped_storage().data_ptr() == base
    assert got["odd"].untyped_storage().data_ptr() != base  # misaligned
    g = torch.Generator(device="cuda:0").manual_seed(3)
    ts = {"w": torch.randn(3000, 1000, device="cuda:0", generator=g),
          "h": torch.randn(1000, 999, device="cuda:0",
                           generator=g).to(torch.float16),
          "i": torch.arange(12345, device="cuda:0")}
    ht.save_safetensors(ts, f"s3://{bucket}/ck", client=client,
                        part_size="5MiB", concurrency=3)
    back = ht.load_safetensors(f"s3://{bucket}/ck", device="cuda:0",
                               client=client)
    assert all(torch.equal(back[k], ts[k]) for k in ts)
    host = ht.load_safetensors(f"s3://{bucket}/ck", client=client)
    assert all(torch.equal(host[k], ts[k].cpu()) for k in ts)
