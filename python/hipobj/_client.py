"""hipobj._client - hipobj.Client: S3 requests over the C library, with the
GIL released while they run. Asynchronous transfers are futures
(Transfer, a concurrent.futures.Future: asyncio.wrap_future takes it)
resolved by one dispatcher thread per client, so the library's own
threads never run Python code (python/src/_hipobj.h says why)."""

import collections
import concurrent.futures
import logging
import threading

from . import _hipobj, _memory
from ._errors import BufferTooSmall, Cancelled

__all__ = ["Client", "Result", "ObjectInfo", "ObjectSummary", "Page",
           "Part", "MultipartUpload", "Transfer"]

_log = logging.getLogger("hipobj")

# get() with no buffer: the first GET's guess, the CLI's small-object size.
_FIRST_GET = 256 * 1024

ObjectInfo = collections.namedtuple(
    "ObjectInfo", "size last_modified etag content_type")
ObjectInfo.__doc__ = "HeadObject: size, Unix time, quoted ETag, type."
ObjectSummary = collections.namedtuple(
    "ObjectSummary", "key size etag last_modified")
Part = collections.namedtuple("Part", "number size etag")

_ENUMS = {
    "addressing": {"auto": 0, "path": 1, "virtual": 2},
    "integrity": {"auto": 0, "sha256": 1, "none": 2},
    "rdma_policy": {None: 0, "default": 0, "auto": 1, "off": 2,
                    "require": 3},
    "log_level": {None: 0, "default": 0, "error": 1, "warn": 2, "info": 3,
                  "debug": 4, "none": 5},
}
_SIZES = {"part_size", "multipart_threshold", "staging_pool_bytes",
          "staging_chunk_bytes", "low_speed_bytes_per_s"}
_CONFIG = {"access_key_id", "secret_access_key", "session_token",
           "anonymous", "tls_skip_verify", "ca_bundle", "connect_timeout_ms",
           "request_timeout_ms", "stall_timeout_ms", "max_attempts",
           "retry_base_ms", "max_connections", "concurrency", "rdma_device",
           "rdma_gid_index", "io_threads", "busy_poll_us"} | _SIZES \
    | set(_ENUMS)


def parse_size(value):
    """An int, or a size such as "8MiB", "1.5GiB", "5242880"
    (hipobj_parse_size: IEC and SI suffixes, B optional)."""
    if value is None or isinstance(value, int):
        return value
    return _hipobj.parse_size(str(value))


def _enum(name, value):
    try:
        return _ENUMS[name][value if value is None else str(value).lower()]
    except KeyError:
        choices = ", ".join(k for k in _ENUMS[name] if k)
        raise ValueError(f"{name}={value!r}: one of {choices}") from None


class Result:
    """What a transfer did: bytes, object_size, rdma_bytes (of bytes, how
    many went by RDMA), retries, parts, path ("http", "http-staged",
    "rdma-direct", "rdma-staged", "none"), seconds, etag, upload_id; and
    data: what a get() filled (a bytearray when it made one)."""

    __slots__ = ("bytes", "object_size", "rdma_bytes", "retries", "parts",
                 "path", "seconds", "etag", "upload_id", "data")

    def __init__(self, t, data=None):
        (self.bytes, self.object_size, self.rdma_bytes, self.retries,
         self.parts, self.path, self.seconds, self.etag,
         self.upload_id) = t
        self.data = data

    def __repr__(self):
        return (f"Result(bytes={self.bytes}, path={self.path!r}, "
                f"rdma_bytes={self.rdma_bytes}, parts={self.parts}, "
                f"retries={self.retries}, seconds={self.seconds:.3f}, "
                f"etag={self.etag!r})")


class Page:
    """One ListObjectsV2 page: objects (ObjectSummary), prefixes (with a
    delimiter), next_token (None on the last page). Iterating a page
    iterates its objects."""

    __slots__ = ("objects", "prefixes", "next_token")

    def __init__(self, objects, prefixes, next_token):
        self.objects = [ObjectSummary(*o) for o in objects]
        self.prefixes = prefixes
        self.next_token = next_token

    def __iter__(self):
        return iter(self.objects)

    def __len__(self):
        return len(self.objects)

    def __repr__(self):
        return (f"Page({len(self.objects)} objects, "
                f"{len(self.prefixes)} prefixes, "
                f"next_token={self.next_token!r})")


class Transfer(concurrent.futures.Future):
    """A get_async/put_async transfer. result() gives its Result (or raises
    its hipobj.Error); cancel() asks the library to stop it (requests in
    flight end, a multipart upload is aborted) and returns True unless it
    had ended: the future then ends cancelled once the transfer has
    stopped, never earlier, so the memory is free to reuse when done()
    says so. progress is (bytes_done, bytes_total). asyncio:
    ``await asyncio.wrap_future(t)``; cancelling that task cancels t."""

    def __init__(self, mem, finish, progress, again=None):
        super().__init__()
        self._x = None  # the extension's Xfer, once started
        self._mem = mem
        self._finish = finish
        self._progress_fn = progress
        # get_async without a buffer: on BufferTooSmall, again(exc, self)
        # starts the second GET into a buffer of the object's size and
        # returns its (mem, finish, xfer). _lock orders that with cancel().
        self._again = again
        self._lock = threading.Lock()
        self._stop = False

    def _started(self, x):
        """From _start, once start() returned x (the first transfer)."""
        with self._lock:
            if self._x is None:  # else _deliver already started the next
                self._x = x

    def cancel(self):
        if self.done():
            return False
        with self._lock:
            self._stop = True
            x = self._x
        if x is not None:
            x.cancel()
        return True

    @property
    def progress(self):
        return self._x.progress

    def _cancelled(self):
        self._mem.close()
        concurrent.futures.Future.cancel(self)
        self.set_running_or_notify_cancel()  # wakes wait()/as_completed

    def _chain(self, e):
        """On the dispatcher thread: the first GET of get_async without a
        buffer found the object larger; start the second (or end)."""
        again, self._again = self._again, None
        self._mem.close()
        with self._lock:
            if self._stop:
                self._cancelled()
                return
            try:
                mem, finish, x = again(e, self)
            except BaseException as e2:
                self.set_exception(e2)
                return
            self._mem, self._finish, self._x = mem, finish, x

    def _deliver(self, x):
        """On the dispatcher thread, once x (this transfer) has ended;
        possibly before _start has stored x in self._x."""
        try:
            t = x.result()
        except Cancelled:
            self._cancelled()
            return
        except BufferTooSmall as e:
            if self._again is not None:
                self._chain(e)
                return
            self._mem.close()
            self.set_exception(e)
            return
        except BaseException as e:  # the library's error, delivered
            self._mem.close()
            self.set_exception(e)
            return
        try:
            r = self._finish(t)
        except BaseException as e:
            self._mem.close()
            self.set_exception(e)
        else:
            self.set_result(r)


class MultipartUpload:
    """A multipart upload, step by step (include/hipobj/mpu.h). Parts may
    be uploaded from several threads at once (each call releases the GIL);
    complete(), abort() and list_parts() must not overlap with them. As a
    context manager it aborts the upload when the block raises."""

    def __init__(self, mpu):
        self._m = mpu

    @property
    def upload_id(self):
        return self._m.upload_id

    @property
    def parts(self):
        """Parts recorded in this handle: [Part(number, size, etag)]."""
        return [Part(*p) for p in self._m.parts]

    def upload_part(self, number, data):
        """UploadPart number (1..10000) from data (any memory put takes)."""
        mem = _memory.resolve(data, writable=False)
        try:
            r = Result(self._m.upload_part(number, mem.spec))
        finally:
            mem.close()
        mem.after(r.bytes)
        return r

    def complete(self):
        return Result(self._m.complete())

    def abort(self):
        self._m.abort()

    def list_parts(self):
        """ListParts: the parts the server holds (they replace those
        recorded here, so that an upload can be resumed)."""
        self._m.list_parts()
        return self.parts

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if et is not None:
            try:
                self.abort()
            except Exception:  # the block's own exception matters more
                _log.warning("abort of upload %s failed", self.upload_id,
                             exc_info=True)
        return False


def _range(rng):
    """range=(offset, length) (length None: to the end) or a slice."""
    if rng is None:
        return None
    if isinstance(rng, slice):
        if rng.step not in (None, 1):
            raise ValueError("range: a slice with a step")
        start = rng.start or 0
        length = None if rng.stop is None else rng.stop - start
    else:
        start, length = rng
    if start < 0 or (length is not None and length < 0):
        raise ValueError(f"range={rng!r}: negative offset or length")
    return start, length


class Client:
    """A client of one S3 endpoint. Thread-safe: any number of threads may
    call it at once (docs/threading.md).

    Client(endpoint=None, region=None, profile=None, **config): anything
    left None comes from the environment, as the C library and the AWS CLI
    read it (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...,
    AWS_PROFILE and the ~/.aws files). config takes the fields of struct
    hipobj_client_config by name: access_key_id, secret_access_key,
    session_token, anonymous, addressing ("auto", "path", "virtual"),
    tls_skip_verify, ca_bundle, connect_timeout_ms, request_timeout_ms,
    stall_timeout_ms, max_attempts, retry_base_ms, max_connections,
    concurrency, part_size, multipart_threshold ("8MiB" or bytes),
    integrity ("auto", "sha256", "none"), rdma_policy ("auto", "off",
    "require"), rdma_device, rdma_gid_index, log_level ("error", "warn",
    "info", "debug", "none"), staging_pool_bytes, staging_chunk_bytes,
    io_threads, low_speed_bytes_per_s, busy_poll_us (negative: never).

    A client made before os.fork() is unusable in the child (its threads
    stayed in the parent): make one per process.
    """

    def __init__(self, endpoint=None, region=None, profile=None, **config):
        bad = set(config) - _CONFIG
        if bad:
            raise TypeError(f"Client: unknown setting(s) {sorted(bad)}; "
                            f"known: {sorted(_CONFIG)}")
        kw = {}
        for k, v in config.items():
            if v is None:
                continue
            if k in _ENUMS:
                v = _enum(k, v)
            elif k in _SIZES:
                v = parse_size(v)
            kw[k] = v
        self._c = _hipobj.Client(endpoint_url=endpoint, region=region,
                                 profile=profile, **kw)
        self._lock = threading.Lock()
        self._dispatcher = None

    # ---- lifetime ----

    @property
    def endpoint(self):
        return self._c.endpoint

    @property
    def region(self):
        return self._c.region

    def close(self):
        """Cancels asynchronous transfers still running, waits for them and
        frees the client. Calls running on other threads make it raise."""
        self._c.close()
        d = self._dispatcher
        if d is not None and d is not threading.current_thread():
            d.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self._c.closed else self.endpoint
        return f"<hipobj.Client {state}>"

    # ---- objects ----

    def head(self, bucket, key):
        """HeadObject -> ObjectInfo(size, last_modified, etag,
        content_type)."""
        return ObjectInfo(*self._c.head(bucket, key))

    def delete(self, bucket, key):
        """DeleteObject (a missing key is no error, as in S3)."""
        self._c.delete(bucket, key)

    def create_bucket(self, bucket):
        self._c.create_bucket(bucket)

    def delete_bucket(self, bucket):
        self._c.delete_bucket(bucket)

    def list(self, bucket, prefix=None, *, delimiter=None, start_after=None,
             page_size=None, continuation_token=None):
        """ListObjectsV2: an iterator over Pages, one request each."""
        token = continuation_token
        while True:
            objs, prefixes, token = self._c.list(
                bucket, prefix, delimiter, token, start_after,
                page_size or 0)
            yield Page(objs, prefixes, token)
            if not token:
                return

    def _get_args(self, bucket, key, out, rng, if_match, part_size,
                  concurrency, rdma, progress):
        rng = _range(rng)
        data = out
        if out is None:
            # Size first, then a GET pinned to that version (If-Match).
            if rng is not None and rng[1] is not None:
                size = rng[1]
            else:
                info = self.head(bucket, key)
                size = info.size - (rng[0] if rng else 0)
                if_match = if_match or info.etag
                if size < 0:
                    size = 0
            data = bytearray(size)
        mem = _memory.resolve(data, writable=True,
                              length=rng[1] if rng else None)
        kw = dict(has_range=rng is not None, offset=rng[0] if rng else 0,
                  length=(rng[1] or 0) if rng else 0, if_match=if_match,
                  part_size=parse_size(part_size) or 0,
                  concurrency=concurrency or 0,
                  rdma_policy=_enum("rdma_policy", rdma), progress=progress)

        def finish(t):
            r = Result(t, data)
            mem.close()
            mem.after(r.bytes)
            if out is None and r.bytes < len(data):
                del data[r.bytes:]
            return r

        return mem, kw, finish

    def _refused_size(self, e, bucket, key):
        """The object's (size, etag) from a GET refused with BufferTooSmall
        (the answer's headers, in the exception's _result), else a HEAD."""
        t = getattr(e, "_result", None)
        size, etag = (t[1], t[7]) if t else (0, "")
        if not size:  # an answer without its length: ask a HEAD
            info = self.head(bucket, key)
            size, etag = info.size, info.etag
        return size, etag

    def _get_new(self, bucket, key, if_match, part_size, concurrency, rdma):
        """get() into a new bytearray: one GET into _FIRST_GET bytes brings
        a small object whole, with its checksum checked; a larger one
        fails that GET at its first answer, which still tells the
        object's size and ETag (the exception's _result), and is read
        again into a buffer of its size, pinned to that ETag. A HEAD
        first would cost every small object a second round trip."""
        kw = dict(part_size=part_size, concurrency=concurrency, rdma=rdma)
        first = bytearray(_FIRST_GET)
        try:
            r = self.get(bucket, key, first, if_match=if_match, **kw)
        except BufferTooSmall as e:
            size, etag = self._refused_size(e, bucket, key)
            data = bytearray(size)
            return self.get(bucket, key, data, if_match=if_match or etag,
                            **kw)
        del first[r.bytes:]
        return r

    def get(self, bucket, key, out=None, range=None, *, if_match=None,
            part_size=None, concurrency=None, rdma=None, progress=None):
        """GetObject into out (any memory, see hipobj._memory; None: a new
        bytearray in result.data: without range or progress, one GET of up
        to 256 KiB, a second for a larger object; else sized by a HEAD
        unless the range says).
        range=(offset, length) (length None: to the end) or a slice.
        Large reads run as parallel ranged GETs pinned to one ETag.
        progress(bytes_done, bytes_total) is called on this thread.
        Ctrl-C cancels the transfer on the main thread (on other threads,
        which Python's signals never reach, a call without progress is the
        library's blocking call: a small GET then runs entirely on the
        calling thread). Returns a Result."""
        if out is None and range is None and progress is None:
            return self._get_new(bucket, key, if_match, part_size,
                                 concurrency, rdma)
        mem, kw, finish = self._get_args(bucket, key, out, range, if_match,
                                         part_size, concurrency, rdma,
                                         progress)
        try:
            t = self._c.get(bucket, key, mem.spec, **kw)
        except BaseException:
            mem.close()
            raise
        return finish(t)

    def _put_args(self, data, content_type, part_size, multipart_threshold,
                  concurrency, keep_failed_upload, rdma, progress):
        mem = _memory.resolve(data, writable=False)
        kw = dict(content_type=content_type,
                  part_size=parse_size(part_size) or 0,
                  multipart_threshold=parse_size(multipart_threshold) or 0,
                  concurrency=concurrency or 0,
                  keep_failed_upload=bool(keep_failed_upload),
                  rdma_policy=_enum("rdma_policy", rdma), progress=progress)

        def finish(t):
            r = Result(t, data)
            mem.close()
            mem.after(r.bytes)
            return r

        return mem, kw, finish

    def put(self, bucket, key, data, *, content_type=None, part_size=None,
            multipart_threshold=None, concurrency=None,
            keep_failed_upload=False, rdma=None, progress=None):
        """PutObject from data (any memory; a file from its position to
        its end). Above multipart_threshold a parallel multipart upload,
        aborted on failure unless keep_failed_upload (then
        result.upload_id, or the exception's, names it). Returns a
        Result."""
        mem, kw, finish = self._put_args(data, content_type, part_size,
                                         multipart_threshold, concurrency,
                                         keep_failed_upload, rdma, progress)
        try:
            t = self._c.put(bucket, key, mem.spec, **kw)
        except BaseException:
            mem.close()
            raise
        return finish(t)

    # ---- asynchronous ----

    def _start(self, start, bucket, key, mem, kw, finish, progress,
               again=None):
        if progress is not None:
            kw["progress"] = True  # delivered by the dispatcher thread
        self._ensure_dispatcher()
        fut = Transfer(mem, finish, progress, again)
        try:
            # user: the dispatcher finds the future through x from the
            # start on, even when x ends before start() returns.
            fut._started(start(bucket, key, mem.spec, user=fut, **kw))
        except BaseException:
            mem.close()
            raise
        return fut

    def get_async(self, bucket, key, out=None, range=None, *, if_match=None,
                  part_size=None, concurrency=None, rdma=None,
                  progress=None):
        """get() in the background: returns a Transfer (a future).
        progress(bytes_done, bytes_total) runs on the client's dispatcher
        thread. Without out, range and progress, as get(): one GET of up to
        256 KiB, a second (started by the dispatcher thread) for a larger
        object; without out but with one of them, the HEAD that sizes the
        buffer runs first, on this thread."""
        if out is None and range is None and progress is None:
            return self._get_async_new(bucket, key, if_match, part_size,
                                       concurrency, rdma)
        mem, kw, finish = self._get_args(bucket, key, out, range, if_match,
                                         part_size, concurrency, rdma,
                                         progress)
        return self._start(self._c.get_start, bucket, key, mem, kw, finish,
                           progress)

    def _get_async_new(self, bucket, key, if_match, part_size, concurrency,
                       rdma):
        """_get_new in the background: the first GET's BufferTooSmall is
        not delivered; the future's dispatcher starts the second GET."""
        first = bytearray(_FIRST_GET)
        mem, kw, finish = self._get_args(bucket, key, first, None, if_match,
                                         part_size, concurrency, rdma, None)

        def finish_first(t):
            r = finish(t)
            del first[r.bytes:]
            return r

        def again(e, fut):
            size, etag = self._refused_size(e, bucket, key)
            data = bytearray(size)
            mem2, kw2, finish2 = self._get_args(
                bucket, key, data, None, if_match or etag, part_size,
                concurrency, rdma, None)
            try:
                x = self._c.get_start(bucket, key, mem2.spec, user=fut, **kw2)
            except BaseException:
                mem2.close()
                raise
            return mem2, finish2, x

        return self._start(self._c.get_start, bucket, key, mem, kw,
                           finish_first, None, again)

    def put_async(self, bucket, key, data, *, content_type=None,
                  part_size=None, multipart_threshold=None, concurrency=None,
                  keep_failed_upload=False, rdma=None, progress=None):
        """put() in the background: returns a Transfer (a future). data
        must not change until it is done."""
        mem, kw, finish = self._put_args(data, content_type, part_size,
                                         multipart_threshold, concurrency,
                                         keep_failed_upload, rdma, progress)
        return self._start(self._c.put_start, bucket, key, mem, kw, finish,
                           progress)

    def _ensure_dispatcher(self):
        with self._lock:
            if self._dispatcher is None:
                t = threading.Thread(target=self._dispatch, daemon=True,
                                     name="hipobj-dispatch")
                t.start()
                self._dispatcher = t

    def _dispatch(self):
        c = self._c
        while True:
            events = c.wait_event()
            if events is None:
                return
            for x, done, pdone, ptotal, progressed in events:
                fut = x.user
                if fut is None:
                    continue
                if progressed and fut._progress_fn is not None:
                    try:
                        fut._progress_fn(pdone, ptotal)
                    except Exception:
                        _log.exception("hipobj: progress callback raised")
                if done:
                    x.user = None  # the future and x referred to each other
                    fut._deliver(x)

    # ---- multipart, step by step ----

    def create_multipart_upload(self, bucket, key, content_type=None):
        """CreateMultipartUpload -> MultipartUpload."""
        return MultipartUpload(self._c.mpu_create(bucket, key, content_type))

    def resume_multipart_upload(self, bucket, key, upload_id):
        """A handle on an existing upload; list_parts() learns its parts."""
        return MultipartUpload(self._c.mpu_open(bucket, key, upload_id))
