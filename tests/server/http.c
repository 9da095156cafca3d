/* http.c - hipobj-server's glue to libmicrohttpd: one struct req per
 * request, the request target parsed from the raw URI, routing to an S3
 * operation, and the request phases:
 *
 *   header phase  (first call: headers complete, no body yet)
 *                 faults, SigV4, checksum headers, RDMA token rules, body
 *                 setup; errors are answered at once, before any body is
 *                 read
 *   body phase    (calls with upload data) streamed to the sink
 *   final phase   (call with no more data) body checks, then the operation
 *
 * libmicrohttpd decodes %XX and turns '+' into ' ' in paths and query
 * arguments. SigV4 needs the bytes as sent, so the URI log callback keeps
 * the raw target, the unescape callback is a no-op, and the query is parsed
 * here with huri_decode (which leaves '+' alone). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "handlers.h"
#include "server.h"

static enum MHD_Result h_not_allowed(struct req *r) {
  return srv_error(r, 405, "MethodNotAllowed",
                   "The specified method is not allowed against this "
                   "resource.");
}

static enum MHD_Result h_not_implemented(struct req *r) {
  return srv_error(r, 501, "NotImplemented",
                   "A header or query you provided implies functionality "
                   "that hipobj-server does not implement (it serves a "
                   "subset of S3).");
}

#define MEM_BODY_SMALL (64u * 1024)
#define MEM_BODY_LARGE (8u * 1024 * 1024)

struct op_entry {
  int (*begin)(struct req *); /* NULL: body discarded */
  size_t mem_body;            /* >0: body kept in memory, at most this */
  enum MHD_Result (*run)(struct req *);
};

static const struct op_entry op_table[OP_COUNT] = {
    [OP_UNKNOWN] = {NULL, 0, h_not_allowed},
    [OP_LIST_BUCKETS] = {NULL, 0, h_list_buckets},
    [OP_CREATE_BUCKET] = {NULL, MEM_BODY_SMALL, h_create_bucket},
    [OP_DELETE_BUCKET] = {NULL, 0, h_delete_bucket},
    [OP_HEAD_BUCKET] = {NULL, 0, h_head_bucket},
    [OP_GET_LOCATION] = {NULL, 0, h_get_location},
    [OP_GET_VERSIONING] = {NULL, 0, h_get_versioning},
    [OP_LIST_OBJECTS] = {NULL, 0, h_list_objects},
    [OP_LIST_OBJECTS_V2] = {NULL, 0, h_list_objects},
    [OP_LIST_UPLOADS] = {NULL, 0, h_list_uploads},
    [OP_DELETE_OBJECTS] = {NULL, MEM_BODY_LARGE, h_delete_objects},
    [OP_PUT_OBJECT] = {put_object_begin, 0, h_put_object},
    [OP_GET_OBJECT] = {NULL, 0, h_get_object},
    [OP_HEAD_OBJECT] = {NULL, 0, h_get_object},
    [OP_DELETE_OBJECT] = {NULL, 0, h_delete_object},
    [OP_CREATE_MPU] = {NULL, 0, h_create_mpu},
    [OP_UPLOAD_PART] = {upload_part_begin, 0, h_upload_part},
    [OP_COMPLETE_MPU] = {NULL, MEM_BODY_LARGE, h_complete_mpu},
    [OP_ABORT_MPU] = {NULL, 0, h_abort_mpu},
    [OP_LIST_PARTS] = {NULL, 0, h_list_parts},
    [OP_COPY_OBJECT] = {NULL, 0, h_copy_object},
    [OP_UPLOAD_PART_COPY] = {NULL, 0, h_upload_part_copy},
    [OP_RDMA_PREPARE] = {NULL, 0, rdma_control},
    [OP_RDMA_READY] = {NULL, 0, rdma_control},
    [OP_RDMA_CANCEL] = {NULL, 0, rdma_control},
    [OP_ADMIN] = {NULL, MEM_BODY_SMALL, faults_admin},
    [OP_NOT_IMPLEMENTED] = {NULL, 0, h_not_implemented},
};

static const char *const op_names[OP_COUNT] = {
#define SRV_OP_NAME(id, name) name,
    SRV_OPS(SRV_OP_NAME)
#undef SRV_OP_NAME
};

const char *srv_op_name(enum srv_op op) {
  return op < OP_COUNT ? op_names[op] : "Unknown";
}

int srv_op_from_name(const char *name) {
  for (int i = 0; i < OP_COUNT; i++)
    if (!strcasecmp(op_names[i], name))
      return i;
  return -1;
}

/* ---- accessors ---------------------------------------------------------- */

const char *req_header(const struct req *r, const char *name) {
  for (size_t i = 0; i < r->n_hdrs; i++)
    if (!strcasecmp(r->hdrs[i].name, name))
      return r->hdrs[i].value;
  return NULL;
}

const char *req_param(const struct req *r, const char *name) {
  for (size_t i = 0; i < r->n_params; i++)
    if (!strcmp(r->params[i].name, name))
      return r->params[i].value ? r->params[i].value : "";
  return NULL;
}

int req_has_param(const struct req *r, const char *name) {
  return req_param(r, name) != NULL;
}

int req_fail(struct req *r, int http, const char *code, const char *fmt, ...) {
  if (r->err_http)
    return -1; /* keep the first failure */
  r->err_http = http;
  snprintf(r->err_code, sizeof r->err_code, "%s", code);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err_msg, sizeof r->err_msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* ---- request target ----------------------------------------------------- */

/* The target as received (reqparse.c); r owns the pieces afterwards. */
static int parse_target(struct req *r) {
  struct rp_target t;
  const char *why = "";
  int rc = rp_parse_target(r->raw_uri, &t, &why);
  r->raw_path = t.raw_path;
  r->raw_query = t.raw_query;
  r->params = t.params;
  r->n_params = t.n_params;
  r->bucket = t.bucket;
  r->key = t.key;
  switch (rc) {
  case RP_OK:
    return 0;
  case RP_BAD_URI:
    return req_fail(r, 400, "InvalidURI", "%s", why);
  case RP_BAD_ARGUMENT:
    return req_fail(r, 400, "InvalidArgument", "%s", why);
  default:
    return req_fail(r, 500, "InternalError", "out of memory");
  }
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind,
                                      const char *key, const char *value) {
  (void)kind;
  struct req *r = cls;
  struct srv_header *nh = realloc(r->hdrs, (r->n_hdrs + 1) * sizeof *nh);
  if (!nh)
    return MHD_NO;
  r->hdrs = nh;
  nh[r->n_hdrs].name = key;
  nh[r->n_hdrs].value = value ? value : "";
  r->n_hdrs++;
  return MHD_YES;
}

/* Sub-resources this server does not implement: answered NotImplemented
 * rather than mistaken for a plain object or bucket request. */
static int other_subresource(const struct req *r) {
  static const char *const names[] = {"acl",
                                      "policy",
                                      "cors",
                                      "lifecycle",
                                      "tagging",
                                      "versions",
                                      "website",
                                      "logging",
                                      "notification",
                                      "replication",
                                      "encryption",
                                      "object-lock",
                                      "retention",
                                      "legal-hold",
                                      "torrent",
                                      "restore",
                                      "select",
                                      "accelerate",
                                      "analytics",
                                      "inventory",
                                      "metrics",
                                      "ownershipControls",
                                      "publicAccessBlock",
                                      "requestPayment",
                                      "intelligent-tiering",
                                      "attributes",
                                      "policyStatus",
                                      "versionId",
                                      NULL};
  for (const char *const *n = names; *n; n++)
    if (req_has_param(r, *n))
      return 1;
  return 0;
}

static enum srv_op classify(const struct req *r) {
  const char *m = r->method;
  int get = !strcmp(m, "GET"), put = !strcmp(m, "PUT"),
      head = !strcmp(m, "HEAD"), del = !strcmp(m, "DELETE"),
      post = !strcmp(m, "POST");
  if (!strncmp(r->raw_path, "/.hipobj-rc/", 12)) {
    const char *w = r->raw_path + 12;
    if (!strcmp(w, "prepare"))
      return OP_RDMA_PREPARE;
    if (!strcmp(w, "ready"))
      return OP_RDMA_READY;
    if (!strcmp(w, "cancel"))
      return OP_RDMA_CANCEL;
    return OP_UNKNOWN;
  }
  if (!strcmp(r->raw_path, "/.hipobj-admin/faults"))
    return OP_ADMIN;
  int sub = other_subresource(r);
  if (!r->bucket)
    return get ? OP_LIST_BUCKETS : OP_UNKNOWN;
  if (!r->key) {
    if (get) {
      if (req_has_param(r, "location"))
        return OP_GET_LOCATION;
      if (req_has_param(r, "versioning"))
        return OP_GET_VERSIONING;
      if (req_has_param(r, "uploads"))
        return OP_LIST_UPLOADS;
      if (sub)
        return OP_NOT_IMPLEMENTED;
      const char *lt = req_param(r, "list-type");
      return lt && !strcmp(lt, "2") ? OP_LIST_OBJECTS_V2 : OP_LIST_OBJECTS;
    }
    if (head)
      return OP_HEAD_BUCKET;
    if (put)
      return sub || req_has_param(r, "versioning") ? OP_NOT_IMPLEMENTED
                                                   : OP_CREATE_BUCKET;
    if (del)
      return sub ? OP_NOT_IMPLEMENTED : OP_DELETE_BUCKET;
    if (post)
      return req_has_param(r, "delete") ? OP_DELETE_OBJECTS
                                        : OP_NOT_IMPLEMENTED;
    return OP_UNKNOWN;
  }
  int upload = req_has_param(r, "uploadId");
  if (put) {
    if (req_header(r, "x-amz-copy-source"))
      return upload || req_has_param(r, "partNumber") ? OP_UPLOAD_PART_COPY
             : sub                                    ? OP_NOT_IMPLEMENTED
                                                      : OP_COPY_OBJECT;
    if (upload || req_has_param(r, "partNumber"))
      return OP_UPLOAD_PART;
    return sub ? OP_NOT_IMPLEMENTED : OP_PUT_OBJECT;
  }
  if (get)
    return upload ? OP_LIST_PARTS : sub ? OP_NOT_IMPLEMENTED : OP_GET_OBJECT;
  if (head)
    return OP_HEAD_OBJECT;
  if (del)
    return upload ? OP_ABORT_MPU : sub ? OP_NOT_IMPLEMENTED : OP_DELETE_OBJECT;
  if (post) {
    if (req_has_param(r, "uploads"))
      return OP_CREATE_MPU;
    return upload ? OP_COMPLETE_MPU : OP_NOT_IMPLEMENTED;
  }
  return OP_UNKNOWN;
}

/* ---- phases ------------------------------------------------------------- */

/* RFC 7230 3.3.3: a body whose length two headers could tell differently
 * has no framing both ends agree on (the stuff of request smuggling):
 * more than one Content-Length, or one beside Transfer-Encoding, is 400,
 * and the connection is closed after the answer. */
static int framing_check(struct req *r) {
  int n_cl = 0, te = 0;
  for (size_t i = 0; i < r->n_hdrs; i++) {
    n_cl += !strcasecmp(r->hdrs[i].name, "Content-Length");
    te |= !strcasecmp(r->hdrs[i].name, "Transfer-Encoding");
  }
  if (n_cl < 2 && !(n_cl && te))
    return 0;
  r->close_conn = 1;
  return req_fail(r, 400, "InvalidRequest",
                  n_cl > 1 ? "The request has more than one Content-Length "
                             "header."
                           : "The request has both Content-Length and "
                             "Transfer-Encoding.");
}

/* Lengths of the body: what arrives and, for aws-chunked, what it
 * decodes to. */
static int body_lengths(struct req *r) {
  const char *cl = req_header(r, "Content-Length");
  uint64_t v = 0;
  if (cl && rp_parse_u64(cl, strlen(cl), &v) != 0) {
    r->close_conn = 1;
    return req_fail(r, 400, "InvalidArgument", "bad Content-Length");
  }
  r->expect_len = v;
  if (r->pay == PAY_CHUNKED_SIGNED || r->pay == PAY_CHUNKED_UNSIGNED) {
    const char *dl = req_header(r, "x-amz-decoded-content-length");
    if (!dl || rp_parse_u64(dl, strlen(dl), &r->expect_len) != 0)
      return req_fail(r, 411, "MissingContentLength",
                      "You must provide the x-amz-decoded-content-length "
                      "header with an aws-chunked body.");
  }
  return 0;
}

/* Returns 1 when the request is dealt with (*res set), 0 to go on. */
static int header_phase(struct req *r, enum MHD_Result *res) {
  struct server *s = r->srv;
  if (s->stopping) {
    *res = MHD_NO;
    return 1;
  }
  if (r->state == RS_NEW) {
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_header, r);
    if (parse_target(r) == 0 && framing_check(r) == 0) {
      r->op = classify(r);
      int special = r->op == OP_ADMIN || r->op == OP_RDMA_PREPARE ||
                    r->op == OP_RDMA_READY || r->op == OP_RDMA_CANCEL;
      if (!special && r->bucket && !st_valid_bucket(r->bucket))
        req_fail(r, 400, "InvalidBucketName",
                 "The specified bucket is not valid.");
      else if (r->key && strlen(r->key) > SRV_MAX_KEY)
        req_fail(r, 400, "KeyTooLongError", "Your key is too long");
      else if (r->key &&
               (r->op == OP_PUT_OBJECT || r->op == OP_CREATE_MPU ||
                r->op == OP_COPY_OBJECT) &&
               !xml_text_ok(r->key))
        /* Listings and answers name keys in XML 1.0: a key it cannot
         * carry would make them ill-formed (xmlw.c). */
        req_fail(r, 400, "InvalidArgument",
                 "The key holds a control character or bytes that are not "
                 "UTF-8, which XML 1.0 cannot carry; hipobj-server does not "
                 "store such keys.");
    }
    if (r->op != OP_ADMIN && !r->fault_evaluated) {
      faults_evaluate(s->faults, r);
      r->fault_evaluated = 1;
      if (r->fault.delay_ms) {
        srv_log(s, SLOG_INFO, "%s: fault: delay %u ms", r->id,
                r->fault.delay_ms);
        r->state = RS_DELAYED;
        MHD_suspend_connection(r->conn);
        delayer_add(s->delayer, r->conn, r->fault.delay_ms);
        *res = MHD_YES;
        return 1;
      }
    }
  }
  switch (r->fault.action) {
  case FA_CRASH:
    srv_log(s, SLOG_WARN, "%s: fault: crash on %s", r->id, srv_op_name(r->op));
    _exit(70);
  case FA_DROP:
    srv_log(s, SLOG_INFO, "%s: fault: connection dropped", r->id);
    *res = MHD_NO;
    return 1;
  case FA_ENDLESS:
    *res = srv_endless(r);
    return 1;
  case FA_STATUS: {
    int st = r->fault.status;
    *res =
        srv_error(r, st, srv_fault_code(r),
                  st == 503   ? "Please reduce your request rate."
                  : st == 500 ? "We encountered an internal error. Please try "
                                "again."
                              : "Injected by hipobj-server --faults.");
    return 1;
  }
  default:
    break;
  }
  if (r->err_http || auth_check(r) != 0 || body_lengths(r) != 0 ||
      cks_headers(r) != 0) {
    *res = srv_fail(r);
    return 1;
  }
  if (req_header(r, "x-amz-rdma-token")) {
    if (rdma_check_token(r) != 0) {
      *res = srv_fail(r);
      return 1;
    }
    if (r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART) {
      /* RDMA declined: the object is not stored; retry without token. */
      struct MHD_Response *resp = srv_error_response(
          r, "NotImplemented",
          "RDMA is not available on this server (declined); send the data "
          "over HTTP without x-amz-rdma-token.");
      if (resp)
        MHD_add_response_header(resp, "x-amz-rdma-reply", "501");
      *res = srv_queue(r, 501, resp);
      return 1;
    }
  }
  const struct op_entry *e = &op_table[r->op];
  if (e->mem_body)
    body_begin_mem(r, e->mem_body);
  if (e->begin && e->begin(r) != 0) {
    *res = srv_fail(r);
    return 1;
  }
  if (r->fault.action == FA_CLOSE && r->expect_len > 0)
    r->fault_on_request = 1;
  if (r->fault.action == FA_CORRUPT && r->expect_len > 0 &&
      (r->op == OP_PUT_OBJECT || r->op == OP_UPLOAD_PART)) {
    /* Damage on the way in: the byte is flipped before any check sees it,
     * as a bad NIC or memory would (fault.arg: its offset in the body). */
    uint64_t len = (uint64_t)r->expect_len;
    r->fault.arg = !r->fault.has_arg    ? len / 2
                   : r->fault.arg < len ? r->fault.arg
                                        : len - 1;
    r->fault_on_request = 1;
  }
  r->state = RS_BODY;
  return 0;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *data,
                                 size_t *size, void **ctx) {
  (void)cls;
  (void)url;
  (void)version;
  struct req *r = *ctx;
  if (!r)
    return MHD_NO;
  if (r->state == RS_ANSWERED) {
    *size = 0; /* an early answer: the rest of the body is dropped */
    return MHD_YES;
  }
  int headers_now = 0;
  if (r->state == RS_NEW || r->state == RS_DELAYED) {
    r->conn = conn;
    r->method = method;
    enum MHD_Result res;
    if (header_phase(r, &res)) {
      if (r->state == RS_ANSWERED)
        *size = 0;
      return res;
    }
    headers_now = 1;
  }
  if (*size) {
    size_t n = *size;
    *size = 0;
    r->bytes_in += n;
    uint64_t start = r->bytes_in - n;
    if (r->fault_on_request && r->fault.action == FA_CORRUPT) {
      if (r->fault.arg >= start && r->fault.arg < r->bytes_in) {
        size_t k = (size_t)(r->fault.arg - start);
        char flipped = (char)(data[k] ^ 0xff);
        srv_log(r->srv, SLOG_INFO, "%s: fault: request body byte %llu flipped",
                r->id, (unsigned long long)r->fault.arg);
        body_feed(r, data, k);
        body_feed(r, &flipped, 1);
        body_feed(r, data + k + 1, n - k - 1);
        return MHD_YES;
      }
    } else if (r->fault_on_request && r->bytes_in > r->fault.arg) {
      srv_log(r->srv, SLOG_INFO,
              "%s: fault: connection closed after %llu request body bytes",
              r->id, (unsigned long long)r->fault.arg);
      return MHD_NO;
    }
    body_feed(r, data, n); /* a failure is kept in r and answered at end */
    return MHD_YES;
  }
  if (headers_now)
    return MHD_YES; /* the body (if any) comes in the next calls */
  if (body_finish(r) != 0)
    return srv_fail(r);
  return op_table[r->op].run(r);
}

/* ---- lifecycle ---------------------------------------------------------- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
  struct server *s = cls;
  struct req *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  srv_http_begun();
  r->srv = s;
  r->conn = conn;
  r->tmp_fd = -1;
  r->t0 = srv_now();
  r->raw_uri = strdup(uri ? uri : "/");
  r->method = "?";
  /* Request ids: unique per process run, cheap, not guessable enough to
   * matter (they identify log lines, nothing more). */
  static unsigned long long counter;
  unsigned long long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
  snprintf(r->id, sizeof r->id, "%08llX%08llX",
           (unsigned long long)time(NULL) & 0xffffffffull, n & 0xffffffffull);
  if (!r->raw_uri) {
    free(r);
    return NULL;
  }
  return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **ctx,
                         enum MHD_RequestTerminationCode term) {
  (void)cls;
  (void)conn;
  struct req *r = *ctx;
  if (!r)
    return;
  srv_http_answered();
  double ms = (srv_now() - r->t0) * 1000.0;
  const char *how = term == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
                    : term == MHD_REQUEST_TERMINATED_CLIENT_ABORT
                        ? " (client closed the connection)"
                        : " (connection closed before the answer was sent)";
  /* The path only: a presigned query holds a signature. */
  srv_log(r->srv, SLOG_INFO, "%s %s %s %s %d in=%llu out=%llu %.1f ms%s", r->id,
          r->method, r->raw_path ? r->raw_path : r->raw_uri, srv_op_name(r->op),
          r->http_status, (unsigned long long)r->bytes_in,
          (unsigned long long)r->bytes_out, ms, how);
  body_cleanup(r);
  for (size_t i = 0; i < r->n_params; i++) {
    free(r->params[i].name);
    free(r->params[i].value);
  }
  free(r->params);
  free(r->hdrs);
  free(r->raw_uri);
  free(r->raw_path);
  free(r->bucket);
  free(r->key);
  free(r);
  *ctx = NULL;
}

/* Keeps paths and arguments exactly as received (see the top comment). */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  return strlen(s);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap) {
  struct server *s = cls;
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
    line[--n] = '\0';
  srv_log(s, SLOG_DEBUG, "libmicrohttpd: %s", line);
}

struct MHD_Daemon *http_start(struct server *s, int listen_fd) {
  unsigned flags = MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
  /* listen_fd < 0: a daemon of poller.c, which hands it its connections
   * (MHD_add_connection) and runs it from its own loop. */
  int own_loop = listen_fd < 0;
  flags |= own_loop ? MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET
                    : MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
  /* Options that depend on the mode, in MHD_OPTION_ARRAYs. Without TLS no
   * key and certificate (the array ends at once). */
  struct MHD_OptionItem tls_opts[] = {
      {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key_pem},
      {MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert_pem},
      {MHD_OPTION_END, 0, NULL}};
  if (s->tls_cert_pem)
    flags |= MHD_USE_TLS;
  else
    tls_opts[0].option = MHD_OPTION_END;
  struct MHD_OptionItem listen_opts[] = {
      {MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL},
      {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->threads, NULL},
      {MHD_OPTION_END, 0, NULL}};
  /* Our own threads run it: SIGPIPE is ignored process-wide (main.c), and
   * libmicrohttpd must be told so, or it never uses sendfile() on threads
   * it did not start: it read and sent each GET body 4 KiB at a time
   * (strace of a 32 MiB GET: 8192 pread64 and 8192 sendto, against 259
   * sendfile with this). */
  struct MHD_OptionItem own_loop_opts[] = {
      {MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, NULL}, {MHD_OPTION_END, 0, NULL}};
  struct MHD_OptionItem *where = own_loop ? own_loop_opts : listen_opts;
  return MHD_start_daemon(
      flags, 0, NULL, NULL, on_access, s, MHD_OPTION_ARRAY, tls_opts,
      MHD_OPTION_ARRAY, where, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s,
      MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_UNESCAPE_CALLBACK,
      no_unescape, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
      MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)s->conn_memory, MHD_OPTION_END);
}
