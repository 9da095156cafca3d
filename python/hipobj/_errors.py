"""hipobj._errors - the exceptions: one hipobj.Error carrying the library's
whole error detail (include/hipobj/error.h), subclassed by status so that
callers can catch what they handle (``except hipobj.NotFound``) without
comparing numbers. The C extension builds them through from_c()."""

__all__ = [
    "Error", "InvalidArgument", "OutOfMemory", "ConfigError", "ConnectError",
    "NetworkError", "Timeout", "TLSError", "ProtocolError", "NotFound",
    "AccessDenied", "PreconditionFailed", "InvalidRange", "ClientError",
    "ServerError", "Throttled", "BufferTooSmall", "IOError", "Cancelled",
    "Unsupported", "InternalError", "IntegrityError",
]


class Error(Exception):
    """A failed hipObject call.

    Attributes (the library's error detail):
      status        the enum hipobj_status value (int)
      status_name   hipobj_strerror(status)
      http_status   HTTP status of the failing answer, 0 when none came
      s3_code       S3 error code ("NoSuchKey"), "" when none
      request_id    the server's request id, "" when none
      operation     the failing step ("GetObject", "UploadPart #3")
      message       one line naming the cause (also str(exc))
      s3_message    the server's own Message, "" when none
      retries       requests repeated before giving up
      errno         errno of a failed system call, 0 when none
      rdma_status   ibv_wc_status of a failed RDMA completion, -1 when none
    """

    status = 0

    def __init__(self, message, *, status=None, status_name="",
                 http_status=0, s3_code="", request_id="", operation="",
                 s3_message="", retries=0, errno=0, rdma_status=-1):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.status_name = status_name
        self.http_status = http_status
        self.s3_code = s3_code
        self.request_id = request_id
        self.operation = operation
        self.message = message
        self.s3_message = s3_message
        self.retries = retries
        self.errno = errno
        self.rdma_status = rdma_status

    @property
    def retryable(self):
        """True when repeating the call may succeed (network failures,
        timeouts, 5xx, throttling): hipobj_status_is_retryable()."""
        from . import _hipobj
        return _hipobj.is_retryable(self.status)

    def __repr__(self):
        parts = [f"status={self.status} ({self.status_name})"]
        if self.http_status:
            parts.append(f"http_status={self.http_status}")
        if self.s3_code:
            parts.append(f"s3_code={self.s3_code!r}")
        if self.request_id:
            parts.append(f"request_id={self.request_id!r}")
        return f"{type(self).__name__}({self.message!r}, {', '.join(parts)})"


def _sub(name, status, doc, bases=(Error,)):
    cls = type(name, bases, {"status": status, "__doc__": doc})
    return cls


InvalidArgument = _sub("InvalidArgument", 1, "A parameter is invalid.",
                       (Error, ValueError))
OutOfMemory = _sub("OutOfMemory", 2, "An allocation failed.",
                   (Error, MemoryError))
ConfigError = _sub("ConfigError", 3,
                   "No endpoint or credentials, or a bad setting.")
ConnectError = _sub("ConnectError", 4, "Could not resolve or connect.",
                    (Error, ConnectionError))
NetworkError = _sub("NetworkError", 5, "Connection reset or send/receive "
                    "failure.", (Error, ConnectionError))
Timeout = _sub("Timeout", 6, "A timeout expired (or S3 RequestTimeout).",
               (Error, TimeoutError))
TLSError = _sub("TLSError", 7, "TLS handshake or certificate failure.")
ProtocolError = _sub("ProtocolError", 8, "A malformed answer.")
NotFound = _sub("NotFound", 9, "404: no such bucket, key or upload.",
                (Error, LookupError))
AccessDenied = _sub("AccessDenied", 10,
                    "401/403: bad credentials, signature or access.",
                    (Error, PermissionError))
PreconditionFailed = _sub("PreconditionFailed", 11,
                          "412: the object changed (If-Match).")
InvalidRange = _sub("InvalidRange", 12, "416: range not satisfiable.")
ClientError = _sub("ClientError", 13, "Another 4xx answer.")
ServerError = _sub("ServerError", 14, "A 5xx answer.")
Throttled = _sub("Throttled", 15, "503 SlowDown / 429.")
BufferTooSmall = _sub("BufferTooSmall", 16,
                      "The destination is smaller than the data.",
                      (Error, ValueError))
IOError = _sub("IOError", 17, "A local I/O operation failed (see errno).",
               (Error, OSError))
Cancelled = _sub("Cancelled", 18, "The transfer was cancelled.")
Unsupported = _sub("Unsupported", 19, "Not supported by this build, memory "
                   "kind or server.")
InternalError = _sub("InternalError", 20, "A bug in hipObject.")
IntegrityError = _sub("IntegrityError", 21, "A checksum mismatch.")

_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgument, OutOfMemory, ConfigError, ConnectError, NetworkError,
    Timeout, TLSError, ProtocolError, NotFound, AccessDenied,
    PreconditionFailed, InvalidRange, ClientError, ServerError, Throttled,
    BufferTooSmall, IOError, Cancelled, Unsupported, InternalError,
    IntegrityError)}


def from_c(status, status_name, http_status, s3_code, request_id, operation,
           message, s3_message, retries, errno, rdma_status):
    """Called by the extension with a failed call's detail."""
    cls = _BY_STATUS.get(status, Error)
    return cls(message, status=status, status_name=status_name,
               http_status=http_status, s3_code=s3_code or "",
               request_id=request_id or "", operation=operation or "",
               s3_message=s3_message or "", retries=retries, errno=errno,
               rdma_status=rdma_status)
