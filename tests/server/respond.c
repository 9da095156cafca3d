/* respond.c - every answer of hipobj-server goes through here: S3 error
 * documents, XML and empty answers, object bodies streamed from files, the
 * headers common to all answers (x-amz-request-id; on success the checksum
 * echoes of checksums.c), and the faults that
 * act on a response body (short body, closed connection, corrupted byte,
 * malformed XML, crash after the operation, an error body that never
 * ends, a body dripping a few bytes per second). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "storage.h"

struct body_src {
  int fd;       /* -1 for memory */
  char *mem;    /* owned copy */
  uint64_t off; /* file offset of body byte 0 */
  uint64_t limit;
  int corrupt;
  uint64_t corrupt_at;
  /* drip: bytes per second, the connection and when the body started */
  uint64_t drip_bps;
  struct MHD_Connection *conn;
  struct server *srv;
  double t0;
};

/* How many bytes a dripping body may send from pos on: the first at once,
 * then drip_bps per second. With none due yet the connection is suspended
 * until the next few are (no thread sleeps; delay.c resumes it) and 0 is
 * returned, which libmicrohttpd allows only with the connection
 * suspended. */
static uint64_t drip_allowed(struct body_src *s, uint64_t pos) {
  double now = srv_now();
  if (pos == 0)
    s->t0 = now;
  uint64_t due = 1 + (uint64_t)((now - s->t0) * (double)s->drip_bps);
  if (due > pos)
    return due - pos;
  /* Wake for a twentieth of a second's worth, not for every byte. */
  uint64_t step = s->drip_bps / 20 ? s->drip_bps / 20 : 1;
  double at = s->t0 + (double)(pos + step - 1) / (double)s->drip_bps;
  double ms = (at - now) * 1000.0;
  MHD_suspend_connection(s->conn);
  delayer_add(s->srv->delayer, s->conn, ms < 1 ? 1u : (unsigned)ms + 1);
  return 0;
}

static ssize_t src_read(void *cls, uint64_t pos, char *buf, size_t max) {
  struct body_src *s = cls;
  if (pos >= s->limit)
    /* A deliberately short body: MHD closes the connection. */
    return MHD_CONTENT_READER_END_WITH_ERROR;
  uint64_t want = s->limit - pos;
  if (want > max)
    want = max;
  if (s->drip_bps) {
    if (s->srv->stopping)
      return MHD_CONTENT_READER_END_WITH_ERROR; /* no more pauses */
    uint64_t allowed = drip_allowed(s, pos);
    if (!allowed)
      return 0;
    if (want > allowed)
      want = allowed;
  }
  ssize_t n;
  if (s->mem) {
    memcpy(buf, s->mem + pos, (size_t)want);
    n = (ssize_t)want;
  } else {
    do
      n = pread(s->fd, buf, (size_t)want, (off_t)(s->off + pos));
    while (n < 0 && errno == EINTR);
    if (n <= 0)
      return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  if (s->corrupt && s->corrupt_at >= pos && s->corrupt_at < pos + (uint64_t)n)
    buf[s->corrupt_at - pos] ^= (char)0xff;
  return n;
}

static void src_free(void *cls) {
  struct body_src *s = cls;
  if (s->fd >= 0)
    close(s->fd);
  free(s->mem);
  free(s);
}

/* Does a body fault apply to this answer's body? */
static int body_fault(const struct req *r) {
  switch (r->fault.action) {
  case FA_CLOSE:
  case FA_CORRUPT:
    return !r->fault_on_request; /* the request's body took the fault */
  case FA_SHORT:
  case FA_DRIP:
    return 1;
  default:
    return 0;
  }
}

static struct MHD_Response *faulty_body(struct req *r, int fd, char *mem,
                                        uint64_t off, uint64_t len) {
  struct body_src *s = calloc(1, sizeof *s);
  if (!s) {
    if (fd >= 0)
      close(fd);
    free(mem);
    return NULL;
  }
  s->fd = fd;
  s->mem = mem;
  s->off = off;
  s->limit = len;
  uint64_t arg = r->fault.arg;
  switch (r->fault.action) {
  case FA_CLOSE:
    s->limit = arg < len ? arg : len;
    break;
  case FA_SHORT:
    if (!r->fault.has_arg)
      arg = 1;
    s->limit = len - (arg < len ? arg : len);
    break;
  case FA_CORRUPT:
    s->corrupt = len > 0;
    s->corrupt_at = r->fault.has_arg ? (arg < len ? arg : len - 1) : len / 2;
    break;
  case FA_DRIP:
    s->drip_bps = arg;
    s->conn = r->conn;
    s->srv = r->srv;
    break;
  default:
    break;
  }
  char how[64] = "";
  if (s->corrupt)
    snprintf(how, sizeof how, ", one byte corrupted");
  else if (s->drip_bps)
    snprintf(how, sizeof how, ", at %llu bytes/s",
             (unsigned long long)s->drip_bps);
  srv_log(r->srv, SLOG_INFO, "%s: fault: body of %llu bytes, %llu sent%s",
          r->id, (unsigned long long)len, (unsigned long long)s->limit, how);
  r->bytes_out = s->limit;
  struct MHD_Response *resp =
      MHD_create_response_from_callback(len, 64 * 1024, src_read, s, src_free);
  if (!resp)
    src_free(s);
  return resp;
}

/* A small body is read and answered from memory: libmicrohttpd then sends
 * the headers and the body in one writev, one TCP segment, where a body
 * from a file goes out by sendfile after the headers, two segments each
 * processed by the loopback on its own (H200 machine, serial 4 KiB GETs).
 * A file shorter than the range (it cannot be: objects are immutable
 * once linked) falls back to the file path, which then reports it. */
#define SRV_SMALL_BODY (64 * 1024)

static struct MHD_Response *small_body(int fd, uint64_t off, uint64_t len) {
  char *buf = malloc(len ? len : 1);
  if (!buf)
    return NULL;
  struct MHD_Response *resp = NULL;
  if (st_pread_full(fd, buf, len, off) == 0)
    resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
  if (!resp)
    free(buf);
  return resp;
}

struct MHD_Response *srv_body_fd(struct req *r, int fd, uint64_t off,
                                 uint64_t len) {
  if (body_fault(r))
    return faulty_body(r, fd, NULL, off, len);
  r->bytes_out = len;
  if (len <= SRV_SMALL_BODY) {
    struct MHD_Response *resp = small_body(fd, off, len);
    if (resp) {
      close(fd);
      return resp;
    }
  }
  struct MHD_Response *resp =
      MHD_create_response_from_fd_at_offset64(len, fd, off);
  if (!resp)
    close(fd);
  return resp;
}

struct MHD_Response *srv_body_mem(struct req *r, const void *data, size_t len) {
  if (body_fault(r)) {
    char *copy = malloc(len ? len : 1);
    if (!copy)
      return NULL;
    memcpy(copy, data, len);
    return faulty_body(r, -1, copy, 0, len);
  }
  r->bytes_out = len;
  return MHD_create_response_from_buffer(len, (void *)data,
                                         MHD_RESPMEM_MUST_COPY);
}

enum MHD_Result srv_queue(struct req *r, int http, struct MHD_Response *resp) {
  if (!resp) {
    srv_log(r->srv, SLOG_ERROR, "%s: cannot build the answer (out of memory)",
            r->id);
    return MHD_NO;
  }
  MHD_add_response_header(resp, "x-amz-request-id", r->id);
  MHD_add_response_header(resp, "x-amz-id-2", r->id);
  MHD_add_response_header(resp, "Server", SRV_NAME);
  if (r->close_conn)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
  if (http < 300)
    cks_answer_headers(r, resp); /* the checksum echoes (checksums.c) */
  if (r->fault.action == FA_CRASH_AFTER && http < 300) {
    srv_log(r->srv, SLOG_WARN, "%s: fault: crash after %s", r->id,
            srv_op_name(r->op));
    _exit(70);
  }
  if (!strcmp(r->method, "HEAD"))
    r->bytes_out = 0;
  r->http_status = http;
  r->state = RS_ANSWERED;
  enum MHD_Result q = MHD_queue_response(r->conn, (unsigned)http, resp);
  MHD_destroy_response(resp);
  return q;
}

struct MHD_Response *srv_error_response(struct req *r, const char *code,
                                        const char *msg) {
  struct hbuf b = HBUF_INIT;
  xml_begin_bare(&b, "Error");
  xml_el(&b, "Code", code);
  /* S3 never sends an empty Message; neither do we. */
  xml_el(&b, "Message", msg && *msg ? msg : code);
  if (r->bucket)
    xml_el(&b, "BucketName", r->bucket);
  if (r->key)
    xml_el(&b, "Key", r->key);
  if (r->upload_id[0])
    xml_el(&b, "UploadId", r->upload_id);
  xml_el(&b, "Resource", r->raw_path ? r->raw_path : "/");
  xml_el(&b, "RequestId", r->id);
  xml_el(&b, "HostId", r->id);
  xml_end(&b, "Error");
  struct MHD_Response *resp = NULL;
  if (!b.oom) {
    resp =
        MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_COPY);
    r->bytes_out = b.len;
  }
  hbuf_free(&b);
  if (resp)
    MHD_add_response_header(resp, "Content-Type", "application/xml");
  return resp;
}

enum MHD_Result srv_error(struct req *r, int http, const char *code,
                          const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  srv_log(r->srv, SLOG_DEBUG, "%s: %d %s: %s", r->id, http, code, msg);
  return srv_queue(r, http, srv_error_response(r, code, msg));
}

enum MHD_Result srv_fail(struct req *r) {
  if (!r->err_http)
    return srv_error(r, 500, "InternalError",
                     "We encountered an internal error. Please try again.");
  return srv_error(r, r->err_http, r->err_code, "%s", r->err_msg);
}

enum MHD_Result srv_errno(struct req *r, int err, const char *what) {
  if (err < 0)
    err = -err;
  srv_log(r->srv, SLOG_WARN, "%s: %s: %s", r->id, what, strerror(err));
  if (err == ENOSPC || err == EDQUOT)
    return srv_error(r, 507, "InsufficientStorage", "%s: %s", what,
                     strerror(err));
  return srv_error(r, 500, "InternalError", "%s: %s", what, strerror(err));
}

enum MHD_Result srv_xml(struct req *r, int http, struct hbuf *xml) {
  if (xml->oom) {
    hbuf_free(xml);
    return srv_error(r, 500, "InternalError", "out of memory");
  }
  size_t len = xml->len;
  if (r->fault.action == FA_BADXML && http < 300) {
    /* Half a document: the root element is never closed. */
    len /= 2;
    srv_log(r->srv, SLOG_INFO, "%s: fault: XML answer cut to %zu bytes", r->id,
            len);
  }
  struct MHD_Response *resp = srv_body_mem(r, xml->data ? xml->data : "", len);
  hbuf_free(xml);
  if (resp)
    MHD_add_response_header(resp, "Content-Type", "application/xml");
  return srv_queue(r, http, resp);
}

enum MHD_Result srv_empty(struct req *r, int http) {
  r->bytes_out = 0;
  return srv_queue(
      r, http,
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT));
}

const char *srv_fault_code(const struct req *r) {
  int st = r->fault.status;
  return r->fault.code[0]         ? r->fault.code
         : st == 503 || st == 429 ? "SlowDown"
         : st == 500              ? "InternalError"
                                  : "InjectedFault";
}

/* An error body that never ends: the start of an S3 error document, then
 * padding inside an element that is never closed, produced as it is sent
 * (nothing is buffered) and counted for the fault's rule. */
struct endless_src {
  struct server *srv;
  uint64_t rule_id;
  char head[600];
  size_t head_len;
  uint64_t sent;
};

static ssize_t endless_read(void *cls, uint64_t pos, char *buf, size_t max) {
  struct endless_src *e = cls;
  if (e->srv->stopping)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  static const char pad[] = "endless error body (hipobj-server --faults) ";
  size_t n = 0;
  for (; n < max && pos + n < e->head_len; n++)
    buf[n] = e->head[pos + n];
  for (; n < max; n++)
    buf[n] = pad[(pos + n - e->head_len) % (sizeof pad - 1)];
  e->sent += n;
  faults_add_sent(e->srv->faults, e->rule_id, n);
  return (ssize_t)n;
}

static void endless_free(void *cls) {
  struct endless_src *e = cls;
  srv_log(e->srv, SLOG_INFO,
          "fault: endless error body stopped after %llu "
          "bytes",
          (unsigned long long)e->sent);
  free(e);
}

enum MHD_Result srv_endless(struct req *r) {
  struct endless_src *e = calloc(1, sizeof *e);
  if (!e)
    return srv_error(r, 500, "InternalError", "out of memory");
  e->srv = r->srv;
  e->rule_id = r->fault.rule_id;
  /* Code, Message and RequestId come first, complete: a client keeping
   * the beginning of the body can still tell what the error was. */
  struct hbuf h = HBUF_INIT;
  xml_begin_bare(&h, "Error");
  xml_el(&h, "Code", srv_fault_code(r));
  xml_el(&h, "Message",
         "Injected by hipobj-server --faults endless: this "
         "body never ends.");
  xml_el(&h, "RequestId", r->id);
  xml_open(&h, "Padding");
  e->head_len = !h.oom && h.len < sizeof e->head ? h.len : 0;
  memcpy(e->head, hbuf_str(&h), e->head_len);
  hbuf_free(&h);
  srv_log(r->srv, SLOG_INFO, "%s: fault: endless %d error body", r->id,
          r->fault.status);
  /* A small send buffer, so that the count stays close to what the client
   * read: on loopback the kernel would otherwise let megabytes wait in
   * the socket when the client hangs up. */
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  int sndbuf = 64 * 1024;
  if (ci)
    setsockopt(ci->connect_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  /* Unknown size: chunked, so the client cannot know when to stop. */
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 64 * 1024, endless_read, e, endless_free);
  if (!resp) {
    free(e);
    return MHD_NO;
  }
  MHD_add_response_header(resp, "Content-Type", "application/xml");
  r->bytes_out = 0; /* unknown when logged; endless_free logs the count */
  return srv_queue(r, r->fault.status, resp);
}
