"""hipobj.torch - PyTorch: safetensors checkpoints loaded from and saved to
S3 straight in GPU (or host) memory, and a map-style Dataset over a prefix.

load_safetensors("s3://bucket/model.safetensors", device="cuda:0"):
  1. one ranged GET of the first MiB: the header (hipobj.safetensors);
  2. one allocation on the device, torch.empty(data_len, uint8), for the
     whole data section;
  3. one GET of the data section's byte range into it: the library splits
     it into parallel ranged GETs (the client's concurrency and part size)
     pinned to the header's ETag, each landing at its offset, by RDMA
     where the server and the NIC can, else through the bounded pinned
     staging pool (never a whole-file host copy);
  4. each tensor a view of that allocation (.view(dtype) of its bytes),
     so the tensors own the memory and nothing is copied again.
One transfer of the whole section rather than one per tensor: the
library's parts are sized for throughput whatever the tensors' sizes (a
checkpoint of many small tensors would otherwise be many small requests),
and the byte ranges of tensors are contiguous anyway. A tensor whose
offset is not a multiple of its element size (possible in files other
writers made) cannot be a view and is copied into its own allocation.
"""

import concurrent.futures
import math
import os

import torch

from . import parse_s3_uri
from . import safetensors as _st
from ._client import Client, parse_size

__all__ = ["load_safetensors", "save_safetensors", "S3Dataset"]

_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
           "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
           "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
           "BOOL": torch.bool}
for _code, _name in (("F8_E4M3", "float8_e4m3fn"), ("F8_E5M2", "float8_e5m2"),
                     ("U16", "uint16"), ("U32", "uint32"), ("U64", "uint64")):
    if hasattr(torch, _name):  # newer PyTorch only
        _DTYPES[_code] = getattr(torch, _name)
_CODES = {v: k for k, v in _DTYPES.items()}

_clients = {}  # pid -> the Client this module made for that process


def _client(client):
    """The caller's client, else one per process (from the environment):
    a client does not survive fork()."""
    if client is not None:
        return client
    pid = os.getpid()
    if pid not in _clients:
        _clients[pid] = Client()
    return _clients[pid]


def _view(buf, t, dtype):
    raw = buf[t.begin:t.end]
    size = _st.DTYPE_SIZES[t.dtype]
    if t.begin % size == 0:
        return raw.view(dtype).view(t.shape)
    out = torch.empty(math.prod(t.shape), dtype=dtype, device=buf.device)
    out.view(torch.uint8).copy_(raw)
    return out.view(t.shape)


def load_safetensors(uri, device="cpu", *, client=None, concurrency=None,
                     part_size=None, rdma=None):
    """{name: tensor} of the safetensors object at uri ("s3://bucket/key")
    on device (a torch.device or "cuda:0", "cpu", ...), like
    safetensors.torch.load_file. The tensors are views of one allocation
    of the data section. client: a hipobj.Client (default: one per process
    from the environment); concurrency, part_size, rdma: of the data
    GET."""
    bucket, key = parse_s3_uri(uri)
    c = _client(client)
    hdr, etag, _ = _st.read_header(c, bucket, key)
    dtypes = {}
    for name, t in hdr.tensors.items():
        if t.dtype not in _DTYPES:
            raise TypeError(f"{uri}: tensor {name!r}: this PyTorch "
                            f"({torch.__version__}) has no {t.dtype}")
        dtypes[name] = _DTYPES[t.dtype]
    dev = torch.device(device)
    buf = torch.empty(hdr.data_len, dtype=torch.uint8, device=dev)
    if hdr.data_len:
        c.get(bucket, key, out=buf, range=(hdr.data_start, hdr.data_len),
              if_match=etag, concurrency=concurrency, part_size=part_size,
              rdma=rdma)
    return {name: _view(buf, t, dtypes[name])
            for name, t in hdr.tensors.items()}


def _bytes_of(t):
    """The bytes of a contiguous tensor, as a flat uint8 tensor (a view)."""
    flat = t.reshape(-1)
    return flat.view(torch.uint8) if flat.numel() else \
        torch.empty(0, dtype=torch.uint8, device=t.device)


def save_safetensors(tensors, uri, *, metadata=None, client=None,
                     part_size="64MiB", concurrency=8):
    """Uploads {name: tensor} as a safetensors object, from the memory the
    tensors are in (GPU memory included): a multipart upload whose parts
    are gathered on the tensors' device (torch.cat of the byte ranges a
    part covers, header first; a part inside one tensor is that tensor's
    memory), `concurrency` parts in flight, so the device memory used
    beyond the tensors is at most concurrency x part_size.
    Tensors must be contiguous. An object of one part is a single PUT.
    Tensors are laid out by element size, then name, so that every tensor
    starts aligned. Returns the hipobj.Result of the Complete (or PUT)."""
    bucket, key = parse_s3_uri(uri)
    c = _client(client)
    names = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    for n in names:
        t = tensors[n]
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"tensor {n!r} is a {type(t).__name__}")
        if not t.is_contiguous():
            raise ValueError(f"tensor {n!r} is not contiguous")
        if t.dtype not in _CODES:
            raise TypeError(f"tensor {n!r}: no safetensors dtype for "
                            f"{t.dtype}")
    head, _ = _st.build_header(
        [(n, _CODES[tensors[n].dtype], tuple(tensors[n].shape))
         for n in names], metadata)
    dev = tensors[names[0]].device if names else torch.device("cpu")
    segs = [torch.frombuffer(bytearray(head), dtype=torch.uint8).to(dev)]
    segs += [_bytes_of(tensors[n]).to(dev) for n in names]
    total = sum(s.numel() for s in segs)
    psize = max(parse_size(part_size), -(-total // 10000), 5 << 20)

    def part(i):
        """Part i (0-based): the byte ranges of the segments it covers."""
        lo, hi, pos, pieces = i * psize, min(total, (i + 1) * psize), 0, []
        for s in segs:
            n = s.numel()
            if pos + n > lo and pos < hi:
                pieces.append(s[max(lo - pos, 0):min(hi - pos, n)])
            pos += n
        # One piece is a view of a tensor (contiguous: a 1-D slice), sent
        # as it is; pieces of several are gathered on their device. The
        # library's copies wait for PyTorch's stream (hipobj._memory).
        return torch.cat(pieces) if len(pieces) > 1 else pieces[0]

    nparts = max(1, -(-total // psize))
    if nparts == 1:
        return c.put(bucket, key, part(0))
    with c.create_multipart_upload(bucket, key) as mpu, \
            concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        pending = set()
        for i in range(nparts):
            if len(pending) >= concurrency:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in done:
                    f.result()  # raises: the with-block aborts the upload
            pending.add(pool.submit(mpu.upload_part, i + 1, part(i)))
        for f in concurrent.futures.as_completed(pending):
            f.result()
        return mpu.complete()


class S3Dataset(torch.utils.data.Dataset):
    """A map-style Dataset of the objects under an S3 prefix
    ("s3://bucket/prefix"), for torch.utils.data.DataLoader. The keys are
    listed once, here; item i is the bytes of object i as a uint8 tensor
    (read straight into it), or transform(that tensor). Safe with forked
    or spawned workers: each process makes its own client (a client does
    not survive fork()), from client_config (Client's keyword arguments)
    or the environment."""

    def __init__(self, uri, *, transform=None, client_config=None):
        if not uri.startswith("s3://"):
            raise ValueError(f"{uri!r} is not an s3://bucket/prefix URI")
        self.bucket, _, self.prefix = uri[5:].partition("/")
        self.transform = transform
        self._config = dict(client_config or {})
        self._client = self._pid = None
        items = []
        for page in self._get_client().list(self.bucket, self.prefix):
            items += [(o.key, o.size) for o in page]
        self._items = sorted(items)

    @property
    def keys(self):
        return [k for k, _ in self._items]

    def _get_client(self):
        if self._client is None or self._pid != os.getpid():
            self._client = Client(**self._config)
            self._pid = os.getpid()
        return self._client

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        key, size = self._items[i]
        buf = torch.empty(size, dtype=torch.uint8)
        r = self._get_client().get(self.bucket, key, out=buf)
        if r.bytes != size:
            raise RuntimeError(f"s3://{self.bucket}/{key}: {r.bytes} bytes, "
                               f"listed as {size}")
        return self.transform(buf) if self.transform else buf

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_client"] = state["_pid"] = None  # never pickled
        return state
