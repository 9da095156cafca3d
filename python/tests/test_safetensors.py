"""hipobj.safetensors: the format read and written by the package's own
code, checked against files the tests write byte by byte (so a mistake
shared by the package's reader and writer cannot hide), and the numpy
loader against hipobj-server."""

import json
import struct

import pytest

import hipobj
from hipobj import safetensors as st

np = pytest.importorskip("numpy")


def hand_written(tensors, metadata=None, pad=0, order=None):
    """A safetensors file written here without the package: tensors is
    [(name, dtype, shape, raw bytes)], laid out one after the other in the
    given order; pad extra spaces after the JSON."""
    doc, blob = {}, b""
    if metadata is not None:
        doc["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        doc[name] = {"dtype": dtype, "shape": shape,
                     "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    if order is not None:  # the JSON's key order differs from the data's
        doc = {k: doc[k] for k in order}
    head = json.dumps(doc).encode() + b" " * pad
    return struct.pack("<Q", len(head)) + head + blob


def root(a):
    """The array that owns a's memory."""
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a


def sample():
    """Tensors in an order that puts F32 "odd" at an offset of 2 modulo 4
    (misaligned: a copy, not a view), a scalar, an empty tensor and a
    bool one."""
    a = np.arange(6, dtype="<i2").reshape(2, 3)
    odd = np.array([1.5, -2.25, 3.0], dtype="<f4")
    scalar = np.array(7.125, dtype="<f8")
    empty = np.zeros((0, 4), dtype="<i4")
    flags = np.array([True, False, True])
    big = np.arange(70000, dtype="<i8")
    return [("big", "I64", [70000], big.tobytes()),
            ("scalar", "F64", [], scalar.tobytes()),
            ("small", "I16", [2, 3], a.tobytes()),
            ("x_pad", "U8", [2], b"\x09\x08"),
            ("odd", "F32", [3], odd.tobytes()),
            ("empty", "I32", [0, 4], empty.tobytes()),
            ("flags", "BOOL", [3], flags.tobytes())], {
        "small": a, "x_pad": np.array([9, 8], dtype=np.uint8), "odd": odd,
        "scalar": scalar, "empty": empty, "flags": flags, "big": big}


def test_parse_header_of_a_hand_written_file():
    entries, _ = sample()
    blob = hand_written(entries, metadata={"format": "pt"}, pad=5,
                        order=["flags", "__metadata__", "big", "small",
                               "x_pad", "odd", "scalar", "empty"])
    h = st.parse_header(blob, len(blob))
    assert h.metadata == {"format": "pt"}
    assert list(h.tensors) == ["flags", "big", "small", "x_pad", "odd",
                               "scalar", "empty"]
    assert h.tensors["odd"] == st.TensorInfo("odd", "F32", (3,), 560022,
                                             560034)
    assert h.tensors["scalar"].shape == ()
    assert h.data_start == 8 + h.header_len
    assert h.data_len == sum(len(e[3]) for e in entries)
    with pytest.raises(st.HeaderIncomplete) as e:
        st.parse_header(blob[:20])
    assert e.value.needed == h.data_start


@pytest.mark.parametrize("doc, why", [
    ({"t": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}},
     "dtype"),
    ({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}},
     "4 bytes for F32"),
    ({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
     "shape"),
    ({"t": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}},
     "data_offsets"),
    ({"t": {"dtype": "F32", "shape": [100], "data_offsets": [0, 400]}},
     "tensors need"),
    ({"__metadata__": {"a": 1}}, "__metadata__"),
    ([1, 2], "not a JSON object"),
])
def test_bad_headers_are_refused(doc, why):
    head = json.dumps(doc).encode()
    blob = struct.pack("<Q", len(head)) + head + b"\0" * 8
    with pytest.raises(ValueError, match=why):
        st.parse_header(blob, len(blob))


def test_not_json_and_huge_lengths_are_refused():
    with pytest.raises(ValueError, match="not JSON"):
        st.parse_header(struct.pack("<Q", 3) + b"{x}")
    with pytest.raises(ValueError, match="over"):
        st.parse_header(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(ValueError, match="object"):
        st.parse_header(struct.pack("<Q", 100) + b"{}", object_size=20)


def test_build_header_is_what_a_reader_expects():
    head, infos = st.build_header([("w", "F32", (2, 2)), ("b", "U8", (3,))],
                                  {"step": 5})
    n = struct.unpack("<Q", head[:8])[0]
    assert len(head) == 8 + n and len(head) % 8 == 0
    doc = json.loads(head[8:])
    assert doc["__metadata__"] == {"step": "5"}
    assert doc["w"] == {"dtype": "F32", "shape": [2, 2],
                        "data_offsets": [0, 16]}
    assert doc["b"]["data_offsets"] == [16, 19]
    assert [i.begin for i in infos] == [0, 16]


def test_load_numpy_from_the_server(client, bucket):
    entries, expect = sample()
    client.put(bucket, "m.safetensors", hand_written(entries))
    got = st.load_numpy(f"s3://{bucket}/m.safetensors", client=client)
    assert set(got) == set(expect)
    for k, v in expect.items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
        assert np.array_equal(got[k], v), k
    # Aligned tensors are views of one buffer; "odd" is a copy.
    assert root(got["big"]) is root(got["small"]) is root(got["flags"])
    assert root(got["big"]).nbytes == sum(len(e[3]) for e in entries)
    assert root(got["odd"]) is not root(got["big"])


def test_save_numpy_round_trip(client, bucket, tmp_path):
    _, arrays = sample()
    path = tmp_path / "out.safetensors"
    st.save_numpy(arrays, path, metadata={"who": "test"})
    blob = path.read_bytes()
    h = st.parse_header(blob, len(blob))
    assert h.metadata == {"who": "test"}
    client.put(bucket, "s", path)
    got = st.load_numpy(f"s3://{bucket}/s", client=client)
    for k, v in arrays.items():
        assert np.array_equal(got[k], v) and got[k].shape == v.shape, k


def test_a_header_over_the_first_read(client, bucket):
    # Over FIRST_READ (1 MiB) of JSON: the loader's second ranged GET.
    entries = [(f"t{i:05d}_" + "n" * 200, "U8", [1], bytes([i % 251]))
               for i in range(6000)]
    blob = hand_written(entries)
    assert struct.unpack("<Q", blob[:8])[0] > st.FIRST_READ
    client.put(bucket, "wide", blob)
    got = st.load_numpy(f"s3://{bucket}/wide", client=client)
    assert len(got) == 6000
    assert all(got[e[0]].tobytes() == e[3] for e in entries)


def test_objects_that_are_not_safetensors(client, bucket):
    client.put(bucket, "text", b"hello, this is not safetensors at all")
    with pytest.raises(ValueError, match="safetensors"):
        st.load_numpy(f"s3://{bucket}/text", client=client)
    entries, _ = sample()
    blob = hand_written(entries)
    client.put(bucket, "cut", blob[:-10])  # the data section is short
    with pytest.raises(ValueError, match="tensors need"):
        st.load_numpy(f"s3://{bucket}/cut", client=client)
    client.put(bucket, "cuthead", blob[:30])
    with pytest.raises(ValueError, match="header"):
        st.load_numpy(f"s3://{bucket}/cuthead", client=client)
    with pytest.raises(hipobj.NotFound):
        st.load_numpy(f"s3://{bucket}/missing", client=client)
    with pytest.raises(ValueError, match="s3://"):
        st.load_numpy("/local/file", client=client)


def test_the_data_get_is_pinned_to_the_header_version(client, bucket,
                                                      monkeypatch):
    entries, _ = sample()
    client.put(bucket, "v", hand_written(entries))
    real = st.read_header

    def then_overwrite(c, b, k):
        out = real(c, b, k)
        client.put(bucket, "v", hand_written(entries[::-1]))
        return out

    monkeypatch.setattr(st, "read_header", then_overwrite)
    with pytest.raises(hipobj.PreconditionFailed):
        st.load_numpy(f"s3://{bucket}/v", client=client)
