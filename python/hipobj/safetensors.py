"""hipobj.safetensors - the safetensors format, read and written with the
standard library only (the `safetensors` package is not in Debian 12), and
a loader into numpy arrays.

The format (https://github.com/huggingface/safetensors): 8 bytes, the
little-endian length N of a JSON header; the header, N bytes of UTF-8 JSON
(padded with spaces): {"name": {"dtype": "F32", "shape": [2, 3],
"data_offsets": [begin, end]}, ..., "__metadata__": {"k": "v"}}; then the
data section, whose byte [begin, end) holds each tensor, C order, little
endian. Offsets count from the start of the data section.

hipobj.torch loads into PyTorch tensors (GPU memory included) with the
same header code.
"""

import collections
import json
import math

from . import parse_s3_uri

__all__ = ["DTYPE_SIZES", "TensorInfo", "Header", "HeaderIncomplete",
           "parse_header", "build_header", "read_header", "load_numpy",
           "save_numpy"]

DTYPE_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
               "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1,
               "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
MAX_HEADER = 100 << 20  # the safetensors package's own limit
FIRST_READ = 1 << 20  # one ranged GET holds all but huge headers

TensorInfo = collections.namedtuple("TensorInfo",
                                    "name dtype shape begin end")
TensorInfo.__doc__ = ("One tensor: dtype code, shape (tuple), and its bytes "
                      "[begin, end) in the data section.")


class Header(collections.namedtuple(
        "Header", "header_len tensors metadata data_len")):
    """A parsed header: header_len (N), tensors (name -> TensorInfo, in
    file order), metadata (dict or None), data_len (bytes of the data
    section the tensors cover); data_start is 8 + N."""

    @property
    def data_start(self):
        return 8 + self.header_len


class HeaderIncomplete(ValueError):
    """parse_header() was given fewer bytes than the header needs."""

    def __init__(self, needed):
        super().__init__(f"the header needs the first {needed} bytes")
        self.needed = needed


def parse_header(buf, object_size=None):
    """Parses the header at the start of buf (bytes-like). object_size, when
    known, must hold the whole data section. Raises HeaderIncomplete
    (with .needed) when buf is too short, ValueError when the header is
    not a valid safetensors header."""
    mv = memoryview(buf).cast("B")
    if len(mv) < 8:
        raise HeaderIncomplete(8)
    n = int.from_bytes(mv[:8], "little")
    if n > MAX_HEADER:
        raise ValueError(f"safetensors: header length {n} is over "
                         f"{MAX_HEADER} bytes: not a safetensors file?")
    if object_size is not None and 8 + n > object_size:
        raise ValueError(f"safetensors: header of {n} bytes in a "
                         f"{object_size}-byte object")
    if len(mv) < 8 + n:
        raise HeaderIncomplete(8 + n)
    try:
        doc = json.loads(bytes(mv[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"safetensors: header is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError("safetensors: header is not a JSON object")
    metadata = doc.pop("__metadata__", None)
    if metadata is not None and not (
            isinstance(metadata, dict)
            and all(isinstance(v, str) for v in metadata.values())):
        raise ValueError("safetensors: __metadata__ must map str to str")
    tensors = {}
    data_len = 0
    for name, d in doc.items():
        tensors[name] = _tensor_info(name, d)
        data_len = max(data_len, tensors[name].end)
    if object_size is not None and 8 + n + data_len > object_size:
        raise ValueError(f"safetensors: tensors need {8 + n + data_len} "
                         f"bytes, the object has {object_size}")
    return Header(n, tensors, metadata, data_len)


def _tensor_info(name, d):
    bad = f"safetensors: tensor {name!r}:"
    if not isinstance(d, dict):
        raise ValueError(f"{bad} not an object")
    dtype, shape, offs = d.get("dtype"), d.get("shape"), d.get("data_offsets")
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"{bad} dtype {dtype!r} is not one of "
                         f"{sorted(DTYPE_SIZES)}")
    if not (isinstance(shape, list) and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0
            for x in shape)):
        raise ValueError(f"{bad} shape {shape!r}")
    if not (isinstance(offs, list) and len(offs) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in offs)
            and 0 <= offs[0] <= offs[1]):
        raise ValueError(f"{bad} data_offsets {offs!r}")
    nbytes = math.prod(shape) * DTYPE_SIZES[dtype]
    if offs[1] - offs[0] != nbytes:
        raise ValueError(f"{bad} {offs[1] - offs[0]} bytes for {dtype} "
                         f"{shape} ({nbytes} bytes)")
    return TensorInfo(name, dtype, tuple(shape), offs[0], offs[1])


def build_header(entries, metadata=None):
    """The header bytes (length prefix included) for entries, a list of
    (name, dtype, shape) in the order their bytes follow one another.
    Returns (bytes, [TensorInfo]). Padded with spaces so that the data
    section starts 8-byte aligned, as the safetensors package writes."""
    doc = {}
    if metadata:
        doc["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    infos, off = [], 0
    for name, dtype, shape in entries:
        if dtype not in DTYPE_SIZES:
            raise ValueError(f"tensor {name!r}: dtype {dtype!r}")
        nbytes = math.prod(shape) * DTYPE_SIZES[dtype]
        doc[name] = {"dtype": dtype, "shape": list(shape),
                     "data_offsets": [off, off + nbytes]}
        infos.append(TensorInfo(name, dtype, tuple(shape), off, off + nbytes))
        off += nbytes
    text = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    return len(text).to_bytes(8, "little") + text, infos


def read_header(client, bucket, key):
    """The header of an object, read with one ranged GET (two when it is
    over FIRST_READ). Returns (Header, etag, object_size); the etag pins
    the data GET that follows to this version of the object."""
    r = client.get(bucket, key, range=(0, FIRST_READ))
    size = r.object_size or None
    try:
        hdr = parse_header(r.data, size)
    except HeaderIncomplete as e:
        if len(r.data) < FIRST_READ or e.needed <= len(r.data):
            raise ValueError(f"s3://{bucket}/{key}: safetensors: object "
                             f"ends inside its header") from None
        rest = client.get(bucket, key, range=(len(r.data),
                                              e.needed - len(r.data)),
                          if_match=r.etag)
        hdr = parse_header(bytes(r.data) + bytes(rest.data), size)
    return hdr, r.etag, size


_NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8",
          "I32": "<i4", "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4",
          "U16": "<u2", "U8": "u1", "BOOL": "?"}


def _numpy_dtype(np, code):
    if code in _NUMPY:
        return np.dtype(_NUMPY[code])
    try:  # bfloat16 and float8 where ml_dtypes is installed
        import ml_dtypes
        return np.dtype({"BF16": ml_dtypes.bfloat16,
                         "F8_E4M3": ml_dtypes.float8_e4m3fn,
                         "F8_E5M2": ml_dtypes.float8_e5m2}[code])
    except ImportError:
        raise TypeError(f"numpy has no {code}: load with hipobj.torch, or "
                        "install ml_dtypes") from None


def load_numpy(uri, client=None):
    """{name: numpy array} of a safetensors object: the header by one
    ranged GET, then the data section by one parallel GET into one numpy
    buffer, of which the arrays are views."""
    import numpy as np

    from ._client import Client
    bucket, key = parse_s3_uri(uri)
    c = client or Client()
    hdr, etag, _ = read_header(c, bucket, key)
    dtypes = {n: _numpy_dtype(np, t.dtype) for n, t in hdr.tensors.items()}
    buf = np.empty(hdr.data_len, dtype=np.uint8)
    if hdr.data_len:
        c.get(bucket, key, out=buf, range=(hdr.data_start, hdr.data_len),
              if_match=etag)
    out = {}
    for name, t in hdr.tensors.items():
        dt = dtypes[name]
        raw = buf[t.begin:t.end]
        if t.begin % dt.itemsize:  # misaligned: a copy, not a view
            raw = raw.copy()
        out[name] = raw.view(dt).reshape(t.shape)
    return out


def _numpy_code(np, dtype):
    for code, s in _NUMPY.items():
        if np.dtype(s) == dtype:
            return code
    names = {"bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3",
             "float8_e5m2": "F8_E5M2"}
    if dtype.name in names:
        return names[dtype.name]
    raise TypeError(f"no safetensors dtype for numpy {dtype}")


def save_numpy(arrays, file, metadata=None):
    """Writes {name: numpy array} as safetensors to an open binary file
    (or a path). Tensors are laid out by name, as the safetensors package
    does for one dtype size; used by the tests and the benchmark."""
    import numpy as np
    names = sorted(arrays)
    entries = [(n, _numpy_code(np, arrays[n].dtype), arrays[n].shape)
               for n in names]
    head, _ = build_header(entries, metadata)
    own = not hasattr(file, "write")
    f = open(file, "wb") if own else file
    try:
        f.write(head)
        for n in names:
            f.write(np.ascontiguousarray(arrays[n]).astype(
                arrays[n].dtype.newbyteorder("<"), copy=False).tobytes())
    finally:
        if own:
            f.close()
