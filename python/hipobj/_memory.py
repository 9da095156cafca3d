"""hipobj._memory - what memory a Python object is, for the library's struct
hipobj_mem: the spec tuples the extension reads (python/src/_hipobj_mem.c).

Accepted, in the order tried:
  * files: a path (str or os.PathLike) or an open file object (fileno()):
    HIPOBJ_MEM_FILE at the file's current position, which moves past the
    bytes moved, as write() and read() would;
  * the buffer protocol: bytes (PUT only), bytearray, memoryview, array,
    numpy arrays, mmap: host memory, C-contiguous;
  * ``__cuda_array_interface__`` (CuPy, PyTorch CUDA tensors, Numba): the
    library asks the GPU runtimes which device holds the pointer;
  * PyTorch CPU tensors (any dtype, bfloat16 included): host memory at
    data_ptr(), taken directly rather than through DLPack, whose
    __dlpack_device__ asks CUDA whether the tensor is pinned: in a forked
    DataLoader worker of a process that had used CUDA that call fails
    ("CUDA error: initialization error");
  * DLPack (``__dlpack__`` / ``__dlpack_device__``): kDLCUDA (2) and
    kDLROCM (10) are HIPOBJ_MEM_CUDA / HIPOBJ_MEM_HIP on the device ordinal
    the tensor names; kDLCPU and pinned host memory are host memory.
Only contiguous memory is accepted: anything else is a ValueError naming
the object, before any request is sent.
"""

import ctypes
import io
import os
import sys

from . import _hipobj

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM, _DL_ROCM_HOST = 1, 2, 3, 10, 11
_DL_CUDA_MANAGED = 13
FILE_CAPACITY = 1 << 62  # a GET into a file may write this much at most


class Memory:
    """One resolved object: spec for the extension, size in bytes, what
    kind it is ("host", "gpu", "file"), and after(n) to call once a
    transfer moved n bytes (moves a file's position)."""

    __slots__ = ("spec", "nbytes", "kind", "_after", "_close")

    def __init__(self, spec, nbytes, kind, after=None, close=None):
        self.spec = spec
        self.nbytes = nbytes
        self.kind = kind
        self._after = after
        self._close = close

    def after(self, moved):
        if self._after is not None:
            self._after(moved)

    def close(self):
        if self._close is not None:
            self._close()
            self._close = None


def _describe(obj):
    name = type(obj).__module__ + "." + type(obj).__qualname__
    return name.replace("builtins.", "")


def _c_contiguous(shape, strides, itemsize):
    if strides is None:
        return True
    expect = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim > 1 and stride != expect:
            return False
        expect *= dim
    return True


def _file_memory(obj, writable, length):
    """A path or an open file: its descriptor and current offset."""
    close = None
    if isinstance(obj, (str, bytes, os.PathLike)):
        if writable:
            fd = os.open(obj, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o666)
        else:
            fd = os.open(obj, os.O_RDONLY)
        offset, close, seek = 0, (lambda: os.close(fd)), None
    else:
        if hasattr(obj, "flush"):
            obj.flush()  # bytes buffered by Python go before ours
        fd = obj.fileno()
        offset = obj.tell() if hasattr(obj, "tell") else 0
        seek = obj.seek if hasattr(obj, "seek") else None
    if writable:
        size = FILE_CAPACITY if length is None else length
    else:
        size = os.fstat(fd).st_size - offset
        if length is not None:
            size = min(size, length)

    def after(moved):
        if seek is not None:
            seek(offset + moved)

    return Memory(("file", fd, offset, max(size, 0), obj), size, "file",
                  after, close)


def _sync_torch(obj):
    """PyTorch queues kernels on its stream; the library copies on its own.
    Wait for the producer's work on this tensor before the library reads or
    overwrites it."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor) and obj.is_cuda:
        torch.cuda.current_stream(obj.device).synchronize()
        return True
    return False


_libcuda = None


def _sync_cai_stream(stream):
    """__cuda_array_interface__ v3: the consumer synchronises on the
    producer's stream (1 = legacy default, 2 = per-thread default, else a
    CUstream), here through the driver API by ctypes."""
    global _libcuda
    if stream is None:
        return
    try:
        if _libcuda is None:
            _libcuda = ctypes.CDLL("libcuda.so.1")
            _libcuda.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        _libcuda.cuStreamSynchronize(ctypes.c_void_p(stream))
    except OSError:
        pass


def _cai_memory(obj, cai, writable):
    if cai.get("mask") is not None:
        raise ValueError(f"{_describe(obj)}: masked arrays are not supported")
    shape = tuple(cai["shape"])
    itemsize = int(cai["typestr"][2:])
    nbytes = itemsize
    for d in shape:
        nbytes *= d
    if not _c_contiguous(shape, cai.get("strides"), itemsize):
        raise ValueError(f"{_describe(obj)} is not contiguous: make it so "
                         "(.contiguous(), cupy.ascontiguousarray) first")
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise ValueError(f"{_describe(obj)} is read-only")
    if not _sync_torch(obj):
        _sync_cai_stream(cai.get("stream"))
    return Memory(("classify", ptr or 0, nbytes, obj), nbytes, "gpu")


def _dlpack_memory(obj, writable):
    dev_type, dev_id = obj.__dlpack_device__()
    _sync_torch(obj)
    capsule = obj.__dlpack__()
    dtype, did, ptr, nbytes, contiguous, readonly = \
        _hipobj.dlpack_info(capsule)
    if not contiguous:
        raise ValueError(f"{_describe(obj)} is not contiguous: make it so "
                         "(.contiguous()) first")
    if writable and readonly:
        raise ValueError(f"{_describe(obj)} is read-only")
    owner = (obj, capsule)
    if dtype == _DL_CUDA:
        return Memory(("gpu", _hipobj.MEM_CUDA, did, ptr, nbytes, owner),
                      nbytes, "gpu")
    if dtype == _DL_ROCM:
        return Memory(("gpu", _hipobj.MEM_HIP, did, ptr, nbytes, owner),
                      nbytes, "gpu")
    if dtype in (_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST):
        return Memory(("host", ptr, nbytes, owner), nbytes, "host")
    if dtype == _DL_CUDA_MANAGED:
        return Memory(("classify", ptr, nbytes, owner), nbytes, "gpu")
    raise TypeError(f"{_describe(obj)}: DLPack device type {dev_type} is "
                    "neither host, CUDA nor ROCm memory")


def _torch_cpu_memory(obj):
    """A PyTorch CPU tensor's memory, or None for anything else."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(obj, torch.Tensor) or \
            obj.device.type != "cpu":
        return None
    if not obj.is_contiguous():
        raise ValueError(f"{_describe(obj)} is not contiguous: make it so "
                         "(.contiguous()) first")
    nbytes = obj.numel() * obj.element_size()
    return Memory(("host", obj.data_ptr() if nbytes else 0, nbytes, obj),
                  nbytes, "host")


def resolve(obj, *, writable, length=None):
    """The Memory of obj. writable: a GET writes into it. length: a file
    GET's capacity, or how much of a file a PUT sends (None: the rest)."""
    if isinstance(obj, (str, os.PathLike, io.IOBase)):
        try:
            return _file_memory(obj, writable, length)
        except io.UnsupportedOperation as e:
            raise TypeError(f"{_describe(obj)} has no file descriptor: pass "
                            "a real file, or a buffer") from e
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is None:
        mem = _torch_cpu_memory(obj)
        if mem is not None:
            return mem
    if mv is not None:
        with mv:
            if not mv.c_contiguous:
                raise ValueError(f"{_describe(obj)} is not C-contiguous")
            if writable and mv.readonly:
                raise TypeError(f"{_describe(obj)} is read-only: a GET needs "
                                "a writable buffer (bytearray, numpy array)")
            nbytes = mv.nbytes
        return Memory(("buffer", obj), nbytes, "host")
    try:
        cai = obj.__cuda_array_interface__
    except (AttributeError, TypeError, RuntimeError):
        cai = None  # PyTorch raises TypeError for dtypes CAI cannot name
    if cai is not None:
        return _cai_memory(obj, cai, writable)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _dlpack_memory(obj, writable)
    raise TypeError(
        f"{_describe(obj)} is no memory hipobj can use: pass a writable "
        "buffer (bytearray, memoryview, numpy array), a CUDA or HIP array "
        "(__cuda_array_interface__ or DLPack: PyTorch, CuPy), a PyTorch CPU "
        "tensor, or a file (path or open file)")
