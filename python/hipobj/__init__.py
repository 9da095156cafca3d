"""hipobj - S3 objects between S3-compatible storage and host memory, files
and GPU memory, over HTTP or RDMA: the Python face of hipObject's C library
(include/hipobj.h), with the GIL released while requests run.

    import hipobj
    c = hipobj.Client(endpoint="http://127.0.0.1:9000")   # or AWS_* env
    c.put("bucket", "key", b"hello")
    print(c.get("bucket", "key").data)                    # bytearray(b'hello')
    t = c.get_async("bucket", "big", out=torch.empty(n, dtype=torch.uint8,
                                                      device="cuda"))
    print(t.result().path)                                # http-staged

hipobj.torch.load_safetensors("s3://bucket/model.safetensors", "cuda:0")
loads a checkpoint straight into GPU memory (see hipobj.torch).
"""

from . import _hipobj
from ._client import (Client, MultipartUpload, ObjectInfo, ObjectSummary,
                      Page, Part, Result, Transfer, parse_size)
from ._errors import *  # noqa: F401,F403 (the exception classes)
from ._errors import __all__ as _error_names
from ._errors import from_c as _from_c

__version__ = _hipobj.version()

_hipobj.set_error_factory(_from_c)


def parse_s3_uri(uri):
    """("bucket", "key") of "s3://bucket/key"."""
    if not uri.startswith("s3://"):
        raise ValueError(f"{uri!r} is not an s3://bucket/key URI")
    bucket, _, key = uri[5:].partition("/")
    if not bucket or not key:
        raise ValueError(f"{uri!r}: s3://bucket/key needs both")
    return bucket, key


def gpu_platform(kind):
    """What the library found of a GPU runtime: kind "cuda" or "hip".
    A dict: available, device_count, library, version, reason (why not)."""
    k = {"cuda": _hipobj.MEM_CUDA, "hip": _hipobj.MEM_HIP}[kind]
    avail, count, name, lib, version, reason = _hipobj.gpu_platform(k)
    return {"available": bool(avail), "device_count": count, "name": name,
            "library": lib, "version": version, "reason": reason}


__all__ = ["Client", "MultipartUpload", "ObjectInfo", "ObjectSummary",
           "Page", "Part", "Result", "Transfer", "parse_size",
           "parse_s3_uri", "gpu_platform", "__version__"] + _error_names
