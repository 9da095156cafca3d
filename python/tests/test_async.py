"""The asynchronous API (get_async/put_async futures, asyncio, progress,
cancel) and the blocking calls' interruption, against hipobj-server.
Delays injected by the server (--faults ...delay) hold transfers in flight
long enough to cancel them; nothing here asserts how long anything takes."""

import _thread
import asyncio
import concurrent.futures
import pathlib
import threading

import pytest

import hipobj

from conftest import new_bucket
from test_client import MiB, pattern, server_requests

WAIT = 60  # seconds before a test gives up instead of hanging


def test_futures(client, bucket):
    datas = {f"k{i}": pattern(200000 + i, i) for i in range(8)}
    puts = [client.put_async(bucket, k, v) for k, v in datas.items()]
    done, _ = concurrent.futures.wait(puts, timeout=WAIT)
    assert len(done) == 8
    assert all(f.result().bytes in (200000 + i for i in range(8))
               for f in puts)
    outs = {k: bytearray(len(v)) for k, v in datas.items()}
    gets = {k: client.get_async(bucket, k, out=outs[k]) for k in datas}
    for k, f in gets.items():
        r = f.result(WAIT)
        assert r.data is outs[k] and outs[k] == datas[k]
    # Without out: a new bytearray (below: without a HEAD).
    assert client.get_async(bucket, "k3").result(WAIT).data == datas["k3"]


def test_get_async_into_a_new_buffer_sends_no_head(server, client, bucket):
    small, big = pattern(5000, 1), pattern((256 << 10) + 7, 2)
    client.put(bucket, "small", small)
    client.put(bucket, "big", big)
    client.put(bucket, "empty", b"")
    log = pathlib.Path(server.dir) / "server.log"
    mark = log.stat().st_size
    r = client.get_async(bucket, "small").result(WAIT)
    assert isinstance(r.data, bytearray) and r.data == small
    assert server_requests(server, bucket, "small", mark, 1) == [("GET", 200)]
    # Larger than the first GET's buffer: the dispatcher starts a second
    # GET into one of the object's size; the future gives its result.
    mark = log.stat().st_size
    r = client.get_async(bucket, "big").result(WAIT)
    assert r.data == big and r.bytes == len(big)
    reqs = server_requests(server, bucket, "big", mark, 2)
    assert [m for m, _ in reqs] == ["GET", "GET"], reqs
    assert client.get_async(bucket, "empty").result(WAIT).data == b""
    with pytest.raises(hipobj.NotFound):
        client.get_async(bucket, "missing").result(WAIT)
    # Many at once, the two kinds mixed; then cancelled ones end either
    # way (cancelled, or done with the right bytes), none hangs.
    keys = ["small", "big"] * 10
    fs = [client.get_async(bucket, k) for k in keys]
    for k, f in zip(keys, fs):
        assert f.result(WAIT).data == (small if k == "small" else big)
    fs = [client.get_async(bucket, "big") for _ in range(8)]
    for f in fs:
        f.cancel()
    done, _ = concurrent.futures.wait(fs, timeout=WAIT)
    assert len(done) == 8
    for f in fs:
        assert f.cancelled() or f.result().data == big


def test_errors_arrive_through_the_future(client, bucket):
    f = client.get_async(bucket, "missing", out=bytearray(4))
    with pytest.raises(hipobj.NotFound) as e:
        f.result(WAIT)
    assert e.value.s3_code == "NoSuchKey" and isinstance(f.exception(),
                                                          hipobj.NotFound)


def test_progress(client, bucket):
    data = pattern(12 * MiB)
    seen, threads = [], set()

    def progress(done, total):
        seen.append((done, total))
        threads.add(threading.current_thread().name)

    r = client.put_async(bucket, "p", data, part_size="5MiB",
                         multipart_threshold="5MiB", progress=progress)
    r.result(WAIT)
    assert seen and seen[-1] == (len(data), len(data))
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert threads == {"hipobj-dispatch"}
    # Blocking calls report on the calling thread.
    seen.clear()
    threads.clear()
    client.get(bucket, "p", out=bytearray(len(data)), progress=progress)
    assert seen[-1] == (len(data), len(data))
    assert threads == {threading.current_thread().name}


def test_asyncio(client, bucket):
    async def main():
        await asyncio.gather(*(
            asyncio.wrap_future(client.put_async(bucket, f"a{i}",
                                                 pattern(5000, i)))
            for i in range(4)))
        rs = await asyncio.gather(*(
            asyncio.wrap_future(client.get_async(bucket, f"a{i}"))
            for i in range(4)))
        return [bytes(r.data) for r in rs]

    assert asyncio.run(main()) == [pattern(5000, i) for i in range(4)]


def test_cancel_get(make_server):
    s = make_server("--faults", "op=GetObject,action=delay:3000")
    with s.client() as c:
        b = new_bucket(c)
        c.put(b, "k", pattern(MiB))
        f = c.get_async(b, "k", out=bytearray(MiB))
        assert f.cancel() is True
        with pytest.raises(concurrent.futures.CancelledError):
            f.result(WAIT)
        assert f.cancelled() and f.done() and f.cancel() is False
        # wait() wakes on the cancellation too.
        g = c.get_async(b, "k", out=bytearray(MiB))
        g.cancel()
        done, _ = concurrent.futures.wait([g], timeout=WAIT)
        assert done == {g}


def test_cancel_put_aborts_the_upload(make_server):
    s = make_server("--faults", "op=UploadPart,action=delay:3000")
    with s.client() as c:
        b = new_bucket(c)
        f = c.put_async(b, "k", pattern(12 * MiB), part_size="5MiB",
                        multipart_threshold="5MiB")
        while not s.uploads(b):  # CreateMultipartUpload has been answered
            threading.Event().wait(0.01)
        f.cancel()
        with pytest.raises(concurrent.futures.CancelledError):
            f.result(WAIT)
        assert s.uploads(b) == []
        with pytest.raises(hipobj.NotFound):
            c.head(b, "k")


def test_asyncio_cancel(make_server):
    s = make_server("--faults", "op=GetObject,action=delay:3000")
    with s.client() as c:
        b = new_bucket(c)
        c.put(b, "k", b"x" * 100)
        f = c.get_async(b, "k", out=bytearray(100))

        async def main():
            task = asyncio.ensure_future(asyncio.wrap_future(f))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())
        with pytest.raises(concurrent.futures.CancelledError):
            f.result(WAIT)  # the transfer itself was cancelled


def test_close_cancels_transfers_in_flight(make_server):
    s = make_server("--faults", "op=GetObject,action=delay:3000")
    c = s.client()
    b = new_bucket(c)
    c.put(b, "k", b"x" * 100)
    fs = [c.get_async(b, "k", out=bytearray(100)) for _ in range(3)]
    c.close()
    for f in fs:
        with pytest.raises(concurrent.futures.CancelledError):
            f.result(WAIT)
    with pytest.raises(ValueError, match="closed"):
        c.get_async(b, "k", out=bytearray(100))


def test_keyboard_interrupt_cancels_a_blocking_get(make_server):
    s = make_server("--faults", "op=GetObject,nth=1,action=delay:5000")
    with s.client() as c:
        b = new_bucket(c)
        c.put(b, "k", b"y" * 100)
        timer = threading.Timer(0.2, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            c.get(b, "k", out=bytearray(100))
        timer.join()
        # The client is still usable (the rule fired once).
        assert c.get(b, "k").data == b"y" * 100


def test_progress_exception_stops_the_transfer(client, bucket):
    client.put(bucket, "k", pattern(12 * MiB))

    def progress(done, total):
        raise ZeroDivisionError("stop")

    with pytest.raises(ZeroDivisionError):
        client.get(bucket, "k", out=bytearray(12 * MiB), progress=progress,
                   part_size="1MiB", concurrency=1)
    assert client.get(bucket, "k", range=(0, 3)).data == pattern(3)


def test_many_small_transfers_all_end(client, bucket):
    # Transfers that end before get_async returns: each future must still
    # be resolved (the dispatcher finds it from the start on).
    client.put(bucket, "tiny", b"t")
    fs = [client.get_async(bucket, "tiny", out=bytearray(1))
          for _ in range(300)]
    done, pending = concurrent.futures.wait(fs, timeout=WAIT)
    assert not pending
    assert all(f.result().data == b"t" for f in fs)
