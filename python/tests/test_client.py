"""The blocking API of hipobj.Client against hipobj-server: host buffers,
numpy, files, listing, multipart, configuration and errors."""

import concurrent.futures
import hashlib
import http.server
import os
import pathlib
import threading
import time

import pytest

import hipobj

from conftest import ACCESS_KEY, REGION, SECRET_KEY, new_bucket

MiB = 1 << 20


def pattern(n, seed=1):
    """n deterministic bytes that differ at every offset of a part."""
    out = bytearray()
    block = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{block}".encode()).digest()
        block += 1
    return bytes(out[:n])


def test_put_get_bytes(client, bucket):
    r = client.put(bucket, "a/b", b"hello, world")
    assert r.bytes == 12 and r.path == "http" and r.etag.startswith('"')
    g = client.get(bucket, "a/b")
    assert isinstance(g.data, bytearray) and g.data == b"hello, world"
    assert g.bytes == 12 and g.object_size == 12 and g.etag == r.etag
    assert g.rdma_bytes == 0
    info = client.head(bucket, "a/b")
    assert info.size == 12 and info.etag == r.etag and info.last_modified > 0


def test_get_into_buffers(client, bucket):
    data = pattern(1000)
    client.put(bucket, "k", data)
    exact = bytearray(1000)
    assert client.get(bucket, "k", out=exact).bytes == 1000
    assert exact == data
    bigger = bytearray(b"\xee" * 1500)  # capacity: only 1000 are written
    r = client.get(bucket, "k", out=memoryview(bigger))
    assert r.bytes == 1000 and bigger[:1000] == data
    assert bigger[1000:] == b"\xee" * 500


def test_ranges(client, bucket):
    data = pattern(4096)
    client.put(bucket, "k", data)
    assert client.get(bucket, "k", range=(100, 50)).data == data[100:150]
    assert client.get(bucket, "k", range=slice(4000, 4096)).data == \
        data[4000:]
    assert client.get(bucket, "k", range=(4000, None)).data == data[4000:]
    # A range past the end is clamped, as S3 does.
    assert client.get(bucket, "k", range=(4090, 100)).data == data[4090:]
    with pytest.raises(ValueError):
        client.get(bucket, "k", range=(-1, 4))
    with pytest.raises(hipobj.InvalidRange) as e:
        client.get(bucket, "k", range=(5000, 10))
    assert e.value.http_status == 416


def test_buffer_too_small(client, bucket):
    client.put(bucket, "k", pattern(100))
    small = bytearray(10)
    with pytest.raises(hipobj.BufferTooSmall) as e:
        client.get(bucket, "k", out=small)
    assert e.value.status == 16 and e.value.status_name


def server_requests(server, bucket, key, since, gets):
    """The server's log lines (one per request, written just after each
    answer, so they may trail the client) about bucket/key after offset
    since, once they hold gets GETs: [(method, status), ...]. A request
    before the last GET on the connection is logged before it."""
    deadline = time.monotonic() + 10
    while True:
        with open(pathlib.Path(server.dir) / "server.log", "rb") as f:
            f.seek(since)
            lines = f.read().decode(errors="replace").splitlines()
        out = []
        for line in lines:
            w = line.split()
            # "... <id> <METHOD> </bucket/key> <Op> <status> in=..."
            for i in range(1, len(w) - 2):
                if w[i] == f"/{bucket}/{key}" and w[i + 2].isdigit():
                    out.append((w[i - 1], int(w[i + 2])))
                    break
        if [m for m, _ in out].count("GET") >= gets or \
                time.monotonic() > deadline:
            return out
        time.sleep(0.01)


def test_get_into_a_new_buffer_sends_one_request_for_small_objects(
        server, client, bucket):
    small, big = pattern(5000, 1), pattern((256 << 10) + 7, 2)
    client.put(bucket, "small", small)
    client.put(bucket, "big", big)
    client.put(bucket, "empty", b"")
    log = pathlib.Path(server.dir) / "server.log"

    mark = log.stat().st_size
    g = client.get(bucket, "small")
    assert isinstance(g.data, bytearray) and g.data == small
    assert g.bytes == g.object_size == 5000
    assert server_requests(server, bucket, "small", mark, 1) == [("GET", 200)]

    # Larger than the first guess: that GET stops at its answer's size,
    # the second brings it whole, pinned to the first one's ETag.
    mark = log.stat().st_size
    g = client.get(bucket, "big")
    assert g.data == big and g.bytes == len(big)
    reqs = server_requests(server, bucket, "big", mark, 2)
    assert [m for m, _ in reqs] == ["GET", "GET"], reqs
    assert reqs[1][1] == 200

    assert client.get(bucket, "empty").data == b""
    with pytest.raises(hipobj.NotFound):
        client.get(bucket, "missing")
    # The same from another thread (the library's blocking call).
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda k: client.get(bucket, k).data,
                            ["small", "big", "empty"]))
    assert got == [small, big, b""]


class _ChunkedGets(http.server.BaseHTTPRequestHandler):
    """A server that answers every GET chunked, without Content-Length (so
    a refused answer tells no size), and HEAD with the length and ETag."""
    protocol_version = "HTTP/1.1"
    body = pattern((256 << 10) + 99, 3)
    seen = []

    def _head(self, chunked):
        self.send_response(200)
        self.send_header("ETag", '"chunked-1"')
        self.send_header("Last-Modified", "Wed, 02 Dec 2026 12:00:00 GMT")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()

    def do_HEAD(self):
        self.seen.append("HEAD")
        self._head(False)

    def do_GET(self):
        self.seen.append("GET")
        self._head(True)
        try:
            for i in range(0, len(self.body), 65536):
                c = self.body[i:i + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client refused the answer and closed

    def log_message(self, *args):
        pass


def test_get_into_a_new_buffer_asks_a_head_when_the_answer_has_no_length():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChunkedGets)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        with hipobj.Client(endpoint=f"http://127.0.0.1:{srv.server_port}",
                           region=REGION, access_key_id="a",
                           secret_access_key="b", max_attempts=1) as c:
            g = c.get("bkt", "chunked")
        assert g.data == _ChunkedGets.body
        assert _ChunkedGets.seen == ["GET", "HEAD", "GET"]
    finally:
        srv.shutdown()
        srv.server_close()


def test_read_only_and_non_contiguous_are_refused(client, bucket):
    np = pytest.importorskip("numpy")
    client.put(bucket, "k", b"x" * 64)
    with pytest.raises(TypeError, match="read-only"):
        client.get(bucket, "k", out=b"\0" * 64)
    a = np.zeros((8, 16), dtype=np.uint8)
    with pytest.raises(ValueError, match="contiguous"):
        client.get(bucket, "k", out=a[:, ::2])
    with pytest.raises(TypeError, match="no memory hipobj can use"):
        client.put(bucket, "k", object())


def test_numpy(client, bucket):
    np = pytest.importorskip("numpy")
    a = np.arange(300000, dtype=np.float32).reshape(300, 1000)
    client.put(bucket, "arr", a)
    b = np.empty_like(a)
    r = client.get(bucket, "arr", out=b)
    assert r.bytes == a.nbytes and np.array_equal(a, b)
    c = np.zeros(10, dtype=np.int64)  # a range into part of an array
    client.get(bucket, "arr", out=c[2:7].view(np.uint8),
               range=(8, 40))
    assert c[2:7].view(np.uint8).tobytes() == a.tobytes()[8:48]


def test_files(client, bucket, tmp_path):
    data = pattern(3 * MiB + 17)
    src = tmp_path / "src"
    src.write_bytes(data)
    assert client.put(bucket, "f", src).bytes == len(data)  # a path
    dst = tmp_path / "dst"
    r = client.get(bucket, "f", out=dst)
    assert r.path == "http-staged" and dst.read_bytes() == data
    # Open files: at their position, which moves past the bytes moved.
    with open(tmp_path / "pos", "w+b") as f:
        f.write(b"HEAD")
        r = client.get(bucket, "f", out=f, range=(10, 1000))
        assert f.tell() == 4 + 1000
        f.write(b"TAIL")
    assert (tmp_path / "pos").read_bytes() == b"HEAD" + data[10:1010] + \
        b"TAIL"
    with open(src, "rb") as f:
        f.seek(MiB)
        assert client.put(bucket, "g", f).bytes == len(data) - MiB
        assert f.tell() == len(data)
    assert client.get(bucket, "g").data == data[MiB:]


def test_multipart_and_parallel_get(client, bucket):
    data = pattern(20 * MiB + 3)
    r = client.put(bucket, "big", data, part_size="5MiB",
                   multipart_threshold=5 * MiB, concurrency=3)
    assert r.parts == 5 and r.etag.endswith('-5"')
    out = bytearray(len(data))
    g = client.get(bucket, "big", out=out, part_size=4 * MiB, concurrency=4)
    assert g.parts >= 5 and g.bytes == len(data)
    assert hashlib.sha256(out).digest() == hashlib.sha256(data).digest()


def test_list_pages(client, bucket):
    for i in range(25):
        client.put(bucket, f"p/{i:02d}", b"x" * i)
    client.put(bucket, "q/x", b"")
    pages = list(client.list(bucket, "p/", page_size=10))
    assert [len(p) for p in pages] == [10, 10, 5]
    assert pages[-1].next_token is None and pages[0].next_token
    keys = [o.key for p in pages for o in p]
    assert keys == [f"p/{i:02d}" for i in range(25)]
    assert [o.size for p in pages for o in p] == list(range(25))
    top = list(client.list(bucket, delimiter="/"))
    assert len(top) == 1 and top[0].prefixes == ["p/", "q/"]


def test_delete_and_not_found(client, bucket):
    client.put(bucket, "gone", b"x")
    client.delete(bucket, "gone")
    client.delete(bucket, "gone")  # S3: no error
    with pytest.raises(hipobj.NotFound) as e:
        client.get(bucket, "gone", out=bytearray(8))
    err = e.value
    assert isinstance(err, hipobj.Error) and isinstance(err, LookupError)
    assert err.status == 9 and err.http_status == 404
    assert err.s3_code == "NoSuchKey" and err.request_id
    assert err.operation == "GetObject" and "NoSuchKey" in str(err)
    assert not err.retryable
    with pytest.raises(hipobj.NotFound):
        client.head(bucket, "gone")


def test_step_by_step_multipart(client, bucket, server):
    a, b = pattern(5 * MiB, 1), pattern(1000, 2)
    with client.create_multipart_upload(bucket, "mp") as up:
        assert up.upload_id and server.uploads(bucket) == [up.upload_id]
        up.upload_part(2, b)
        up.upload_part(1, a)
        assert [p.number for p in up.list_parts()] == [1, 2]
        assert [p.size for p in up.parts] == [len(a), len(b)]
        r = up.complete()
    assert r.etag.endswith('-2"')
    assert client.get(bucket, "mp").data == a + b
    # Resuming by id, then an exception in the block: the upload is aborted.
    up = client.create_multipart_upload(bucket, "mp2")
    up.upload_part(1, a)
    with pytest.raises(KeyError):
        with client.resume_multipart_upload(bucket, "mp2", up.upload_id) as r:
            assert [p.number for p in r.list_parts()] == [1]
            raise KeyError("boom")
    assert server.uploads(bucket) == []
    with pytest.raises(hipobj.NotFound) as e:
        up.list_parts()
    assert e.value.s3_code == "NoSuchUpload"


def test_environment_and_profile(server, monkeypatch, tmp_path):
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    with hipobj.Client() as c:
        assert c.endpoint == server.endpoint and c.region == REGION
        b = new_bucket(c)
        c.put(b, "env", b"from the environment")
    creds = tmp_path / "credentials"
    creds.write_text(f"[other]\naws_access_key_id = {ACCESS_KEY}\n"
                     f"aws_secret_access_key = {SECRET_KEY}\n")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with hipobj.Client(profile="other") as c:
        assert c.get(b, "env").data == b"from the environment"
    with pytest.raises(hipobj.ConfigError) as e:
        hipobj.Client(profile="missing")
    assert e.value.status == 3 and "missing" in e.value.message


def test_wrong_secret_is_access_denied(server, bucket):
    with server.client(secret_access_key="wrong" * 8) as c:
        with pytest.raises(hipobj.AccessDenied) as e:
            c.get(bucket, "k", out=bytearray(1))
    assert e.value.http_status == 403
    assert e.value.s3_code == "SignatureDoesNotMatch"
    assert isinstance(e.value, PermissionError)


def test_broken_endpoint():
    # A port nothing listens on (the server's own, after it stopped).
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with hipobj.Client(endpoint=f"http://127.0.0.1:{port}",
                       access_key_id="a", secret_access_key="b",
                       max_attempts=1) as c:
        with pytest.raises(hipobj.ConnectError) as e:
            c.get("some-bucket", "k")
    err = e.value
    assert err.status == 4 and err.http_status == 0 and err.retryable
    assert err.operation == "GetObject" and str(err) == err.message
    assert "127.0.0.1" in err.message or "connect" in err.message.lower()


def test_server_errors(make_server):
    s = make_server("--faults", "op=GetObject,nth=1,action=status:500;"
                    "op=GetObject,nth=2,count=9,action=status:503")
    with s.client(max_attempts=1) as c:
        b = new_bucket(c)
        c.put(b, "k", b"data")
        with pytest.raises(hipobj.ServerError) as e:
            c.get(b, "k", out=bytearray(4))
        assert e.value.http_status == 500 and e.value.request_id
        assert e.value.s3_code == "InternalError"
        with pytest.raises(hipobj.Throttled) as e:
            c.get(b, "k", out=bytearray(4))
        assert e.value.s3_code == "SlowDown" and e.value.retries == 0


def test_retries_are_reported(make_server):
    s = make_server("--faults", "op=GetObject,nth=1,action=status:503")
    with s.client(max_attempts=3, retry_base_ms=1) as c:
        b = new_bucket(c)
        c.put(b, "k", b"data")
        r = c.get(b, "k", out=bytearray(4))
    assert r.retries == 1 and r.bytes == 4


def test_config_checks(server):
    with pytest.raises(TypeError, match="unknown setting"):
        hipobj.Client(endpoint=server.endpoint, not_a_setting=1)
    with pytest.raises(ValueError, match="integrity"):
        server.client(integrity="md5")
    with server.client(part_size="5MiB", integrity="sha256",
                       rdma_policy="off", log_level="error") as c:
        assert "127.0.0.1" in repr(c)
    with pytest.raises(hipobj.InvalidArgument, match="busy_poll_us 5000"):
        server.client(busy_poll_us=5000)
    for busy_poll_us in (-1, 1000):  # never, or up to 1 ms: same bytes
        with server.client(busy_poll_us=busy_poll_us) as c:
            b = new_bucket(c)
            c.put(b, "k", b"polled")
            assert c.get(b, "k").data == b"polled"
    c = server.client()
    c.close()
    c.close()
    with pytest.raises(ValueError, match="closed"):
        c.head("bucket", "key")
    assert hipobj.parse_size("1.5KiB") == 1536


def test_fork_child_needs_its_own_client(client, bucket):
    client.put(bucket, "k", b"parent")
    pid = os.fork()
    if pid == 0:  # the child: the parent's client is refused, a new works
        status = 1
        try:
            try:
                client.get(bucket, "k")
            except RuntimeError as e:
                if "another process" in str(e):
                    status = 0
        finally:
            os._exit(status)
    _, st = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(st) == 0
    assert client.get(bucket, "k").data == b"parent"


def test_blocking_calls_on_other_threads(client, bucket):
    """Off the main thread, get/put without a progress callback are the
    library's blocking calls (a small GET runs on the calling thread); the
    results and errors are those of the main thread's."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    small, big = pattern(4096, 7), pattern(9 * MiB + 5, 8)
    on_main = client.put(bucket, "t/small", small)

    def work(i):
        key = f"t/{i}"
        data = small if i % 2 else big
        r = client.put(bucket, key, data, part_size="5MiB",
                       multipart_threshold=5 * MiB)
        assert r.bytes == len(data)
        assert r.parts == (on_main.parts if i % 2 else 2)
        out = bytearray(len(data))
        g = client.get(bucket, key, out=out, part_size=2 * MiB)
        assert g.bytes == len(data) and g.etag == r.etag and out == data
        g = client.get(bucket, "t/small")
        assert g.data == small and g.etag == on_main.etag
        with pytest.raises(hipobj.NotFound):
            client.get(bucket, f"t/none-{i}", out=bytearray(8))
        with pytest.raises(hipobj.BufferTooSmall):
            client.get(bucket, "t/small", out=bytearray(10))
        # With a progress callback the transfer is waited for on this
        # thread, the callback called here.
        seen = set()
        client.get(bucket, "t/small", out=bytearray(4096),
                   progress=lambda d, t: seen.add(threading.get_ident()))
        assert seen == {threading.get_ident()}
        return i

    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(work, range(6))) == list(range(6))
    client.close()  # no call is left running on it
