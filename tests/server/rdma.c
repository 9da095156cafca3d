/* rdma.c - the RDMA side of hipobj-server (see
 * /work/shared/docs/rdma-wire-protocol.md):
 *
 * - The hipobj-rc-v2 control paths (POST /.hipobj-rc/prepare, ready,
 *   cancel) go to the server engine of rdma/rc_server.h when the server
 *   runs with --rdma auto (or --rdma-device NAME) and a device is usable;
 *   otherwise they answer 501 with X-Amz-Rdma-Protocol-Status: unsupported
 *   and no body, the explicit marker that lets a client fall back to HTTP
 *   (§3.7). The signature was verified by auth.c before (every x-amz-rdma-*
 *   header signed); the principal is the request's access key. Objects are
 *   read and stored through storage.h, as GetObject, PutObject and
 *   UploadPart do. READY holds its answer through the data phase (up to
 *   T_exec): its connection is suspended and the engine runs on a thread of
 *   its own, so no libmicrohttpd worker blocks meanwhile.
 *   Faults: rdma-decline declines a PREPARE, rdma-fail destroys the QP of a
 *   READY in its data phase (on a PREPARE: puts the QP in ERROR before the
 *   answer, so no WRITE of the session can land).
 * - cuObject single-request mode (§7.2): a GET carrying x-amz-rdma-token
 *   gets its data over HTTP plus x-amz-rdma-reply: 501 (declined); a PUT
 *   is refused with 501 NotImplemented and the object is not stored. A
 *   token that is neither a cuObject DC descriptor (§7.1) nor an RC token
 *   (§2) is a malformed request: 400. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handlers.h"
#include "rdma/rc_server.h"
#include "s3/crypto.h"
#include "src/base/codec.h"
#include "src/base/crc64nvme.h"
#include "src/base/error.h"

static int all_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
      return 0;
  return 1;
}

/* addr:size:rkey:lid:dctn:gid_present:gid, fixed widths, 81 characters. */
static int is_dc_descriptor(const char *t, size_t n) {
  static const size_t widths[] = {16, 8, 8, 4, 6, 1, 32};
  if (n != 81)
    return 0;
  const char *p = t;
  for (size_t i = 0; i < 7; i++) {
    if (!all_hex(p, widths[i]))
      return 0;
    p += widths[i];
    if (i < 6 && *p++ != ':')
      return 0;
  }
  return 1;
}

/* 88 hex (44 bytes: transport 01, qpn, gid, ...), optionally followed by
 * the legacy ":<addr hex>:<size hex>" suffix; all zeros is the loopback
 * marker. Otherwise transport must be RC and the GID non-zero (§2.2). */
static int is_rc_token(const char *t, size_t n) {
  if (n < 88 || !all_hex(t, 88))
    return 0;
  if (n > 88) {
    const char *p = t + 88;
    for (int part = 0; part < 2; part++) {
      if (*p++ != ':')
        return 0;
      size_t k = strspn(p, "0123456789abcdefABCDEF");
      if (k < 1 || k > 16)
        return 0;
      p += k;
    }
    if ((size_t)(p - t) != n)
      return 0;
  }
  if (strspn(t, "0") >= 88)
    return 1;
  if (strncmp(t, "01", 2))
    return 0;
  return strspn(t + 10, "0") < 32; /* GID: bytes 5..20 */
}

int rdma_check_token(struct req *r) {
  const char *t = req_header(r, "x-amz-rdma-token");
  while (*t == ' ')
    t++;
  size_t n = strlen(t);
  while (n && t[n - 1] == ' ')
    n--;
  if (!is_dc_descriptor(t, n) && !is_rc_token(t, n))
    return req_fail(r, 400, "InvalidArgument",
                    "x-amz-rdma-token is malformed: expected the 81-character "
                    "cuObject descriptor addr:size:rkey:lid:dctn:gid_present:"
                    "gid or an 88-hex-digit RC token");
  r->rdma_token = 1;
  srv_log(r->srv, SLOG_DEBUG,
          "%s: RDMA token declined (single-request mode is not served)", r->id);
  return 0;
}

/* ---- the engine ------------------------------------------------------------
 */

static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static struct rdma_server *engine;
static struct server *engine_srv;

/* Created at the first control request of a server started with --rdma
 * auto or --rdma-device; a failure is logged once and RDMA declined. */
static void engine_start(void) {
  struct server *s = engine_srv;
  if (!s->rdma_auto && !s->rdma_device)
    return;
  struct rdma_server_opts o = RDMA_SERVER_OPTS_INIT;
  o.device = s->rdma_device; /* HIPOBJ_RDMA* is the client's setting */
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  if (rdma_server_create(&o, &engine, &err) != HIPOBJ_OK) {
    srv_log(s, SLOG_WARN, "RDMA: unavailable, declining (%s)", err.message);
    engine = NULL;
    return;
  }
  srv_log(s, SLOG_INFO, "RDMA: hipobj-rc-v2 on %s",
          rdma_server_describe(engine));
}

static struct rdma_server *get_engine(struct server *s) {
  engine_srv = s;
  pthread_once(&engine_once, engine_start);
  return engine;
}

/* ---- backend: the server's own object paths ------------------------------ */

static void be_error(struct rdma_server_answer *a, int http, const char *code,
                     const char *msg) {
  a->http_status = http;
  snprintf(a->s3_code, sizeof a->s3_code, "%s", code);
  snprintf(a->message, sizeof a->message, "%s", msg);
}

static int be_errno(struct rdma_server_answer *a, int rc, const char *what) {
  if (rc < 0)
    rc = -rc;
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(rc));
  be_error(a, rc == ENOSPC || rc == EDQUOT ? 507 : 500,
           rc == ENOSPC || rc == EDQUOT ? "InsufficientStorage"
                                        : "InternalError",
           msg);
  return -1;
}

/* The upload's info file exists and names this key (multipart.c's rule). */
static int upload_matches(struct server *s, const char *bucket, const char *key,
                          const char *id) {
  if (!id || strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32)
    return 0;
  char *p = st_path(s, bucket, ".hipobj/uploads/%s/info", id);
  struct obj_meta info;
  memset(&info, 0, sizeof info);
  int ok = p && meta_load(p, &info) == 0 && info.key && !strcmp(info.key, key);
  if (p && ok)
    meta_free(&info);
  free(p);
  return ok;
}

static int be_authorize(void *ctx, const struct rdma_server_target *t,
                        struct rdma_server_answer *a) {
  struct req *r = ctx;
  /* Every credential may use every bucket here (as over HTTP); what is
   * left to check is that the target exists in the form asked for. */
  if (t->version_id) {
    be_error(a, 501, "NotImplemented", "versioning is not implemented");
    return -1;
  }
  if (!st_valid_bucket(t->bucket) || !st_bucket_exists(r->srv, t->bucket)) {
    be_error(a, 404, "NoSuchBucket", "The specified bucket does not exist");
    return -1;
  }
  if (strlen(t->key) > SRV_MAX_KEY) {
    be_error(a, 400, "KeyTooLongError", "Your key is too long");
    return -1;
  }
  if (t->op == RDMA_OP_PUT && t->part_number &&
      !upload_matches(r->srv, t->bucket, t->key, t->upload_id)) {
    be_error(a, 404, "NoSuchUpload", "The specified upload does not exist.");
    return -1;
  }
  return 0;
}

static int be_read(void *ctx, const struct rdma_server_target *t, void *dst,
                   uint64_t *nread, struct rdma_server_object *obj,
                   struct rdma_server_answer *a) {
  struct req *r = ctx;
  struct obj_meta m;
  int fd = -1;
  int rc = st_obj_open(r->srv, t->bucket, t->key, &m, &fd);
  if (rc == -ENOENT || rc == -ENOTDIR) {
    be_error(a, 404, "NoSuchKey", "The specified key does not exist.");
    return -1;
  }
  if (rc != 0)
    return be_errno(a, rc, "cannot open the object");
  uint64_t base = 0, len = m.size;
  if (t->part_number) { /* as GetObject ?partNumber=N */
    if ((m.n_parts && t->part_number > m.n_parts) ||
        (!m.n_parts && t->part_number != 1)) {
      close(fd);
      meta_free(&m);
      be_error(a, 416, "InvalidPartNumber",
               "The requested partnumber is not satisfiable");
      return -1;
    }
    for (unsigned i = 0; m.n_parts && i + 1 < t->part_number; i++)
      base += m.parts[i];
    if (m.n_parts)
      len = m.parts[t->part_number - 1];
  }
  obj->length = len;
  snprintf(obj->etag, sizeof obj->etag, "%s", m.etag);
  meta_free(&m);
  uint64_t want = t->offset < len ? len - t->offset : 0;
  if (want > t->size)
    want = t->size;
  rc = st_pread_full(fd, dst, (size_t)want, base + t->offset);
  close(fd);
  if (rc != 0)
    return be_errno(a, rc, "cannot read the object");
  *nread = want;
  return 0;
}

/* UploadPart's storage step (multipart.c): data and metadata files renamed
 * into the upload's directory under the upload lock. */
static int store_part(struct server *s, const struct rdma_server_target *t,
                      const char *data_tmp, const char *etag, uint64_t crc,
                      struct rdma_server_answer *a) {
  struct obj_meta m;
  memset(&m, 0, sizeof m);
  snprintf(m.etag, sizeof m.etag, "%.40s", etag); /* "md5 hex" */
  m.has_crc64 = 1;
  m.crc64 = crc;
  m.mtime_ms = st_now_ms();
  struct stat st;
  if (stat(data_tmp, &st) != 0)
    return be_errno(a, errno, "cannot stat the part");
  m.ino = (uint64_t)st.st_ino;
  m.size = (uint64_t)st.st_size;
  struct hbuf text = HBUF_INIT;
  meta_format(&m, &text);
  char *meta_tmp = NULL;
  int rc = text.oom
               ? -ENOMEM
               : st_tmp_write(s, t->bucket, text.data, text.len, &meta_tmp);
  hbuf_free(&text);
  if (rc != 0)
    return be_errno(a, rc, "cannot store the part");
  const char *id = t->upload_id;
  char *dir = st_path(s, t->bucket, ".hipobj/uploads/%s", id);
  char *dp =
      st_path(s, t->bucket, ".hipobj/uploads/%s/p%05u", id, t->part_number);
  char *mp =
      st_path(s, t->bucket, ".hipobj/uploads/%s/p%05u.m", id, t->part_number);
  int gone = 0;
  st_upload_lock(id);
  if (!upload_matches(s, t->bucket, t->key, id))
    gone = 1;
  else if (!dir || !dp || !mp)
    rc = -ENOMEM;
  else if (rename(meta_tmp, mp) != 0 || rename(data_tmp, dp) != 0)
    rc = -errno;
  st_upload_unlock(id);
  if (rc == 0 && !gone)
    st_fsync_dir(dir);
  unlink(meta_tmp); /* no-op when it was renamed */
  free(meta_tmp);
  free(dir);
  free(dp);
  free(mp);
  if (gone) {
    be_error(a, 404, "NoSuchUpload", "The specified upload does not exist.");
    return -1;
  }
  return rc ? be_errno(a, rc, "cannot store the part") : 0;
}

/* A temporary file that is no longer needed: removed unless it was stored
 * (rc 0 means rename() took it). */
static void tmp_free(char **tmp, int rc) {
  if (*tmp && rc != 0)
    unlink(*tmp);
  free(*tmp);
  *tmp = NULL;
}

static int be_commit(void *ctx, const struct rdma_server_target *t,
                     const void *data, uint32_t len, uint64_t crc,
                     struct rdma_server_object *obj,
                     struct rdma_server_answer *a) {
  struct req *r = ctx;
  /* The ETag a PutObject of these bytes gets (body_etag). */
  uint8_t digest[16];
  char hex[33];
  if (r->srv->memory)
    body_mem_digest(crc, len, digest);
  else
    s3_md5(data, len, digest);
  hhex_encode(digest, sizeof digest, hex);
  snprintf(obj->etag, sizeof obj->etag, "\"%s%s\"", hex,
           r->srv->memory ? "-1" : "");
  char *tmp = NULL;
  /* Counted against a memory mode's cap like any upload (body.c). */
  int rc = r->srv->memory ? mem_reserve(r->srv, len) : 0;
  if (rc != 0)
    return be_errno(a, rc, "cannot store the object");
  rc = st_tmp_write(r->srv, t->bucket, data, len, &tmp);
  if (rc == -ENOENT) {
    be_error(a, 404, "NoSuchBucket", "The specified bucket does not exist");
    return -1;
  }
  if (rc != 0)
    return be_errno(a, rc, "cannot store the object");
  int ignore_part = t->part_number && r->fault.action == FA_RDMA_IGNORE_PART;
  if (t->part_number && !ignore_part) {
    rc = store_part(r->srv, t, tmp, obj->etag, crc, a);
  } else {
    struct obj_meta m;
    memset(&m, 0, sizeof m);
    snprintf(m.etag, sizeof m.etag, "%.40s", obj->etag);
    m.has_crc64 = 1; /* the CRC-64/NVME of data, as GET returns it */
    m.crc64 = crc;
    m.key = strdup(t->key); /* listings of long (hashed) names need it */
    rc = m.key ? st_obj_commit(r->srv, t->bucket, t->key, tmp, &m) : -ENOMEM;
    meta_free(&m);
    if (rc != 0)
      rc = be_errno(a, rc, "cannot store the object");
    tmp_free(&tmp, rc);
    if (rc == 0 && ignore_part) {
      /* The fault: the part's data became the object; an empty part
       * under the ETag answered stands where the part should be, so a
       * Complete naming it goes through (as on a lax server). */
      rc = st_tmp_write(r->srv, t->bucket, "", 0, &tmp);
      rc = rc ? be_errno(a, rc, "cannot store the part")
              : store_part(r->srv, t, tmp, obj->etag, crc64nvme("", 0), a);
    }
  }
  tmp_free(&tmp, rc);
  return rc;
}

/* ---- control requests -------------------------------------------------------
 */

static enum MHD_Result send_answer(struct req *r,
                                   const struct rdma_server_answer *a) {
  struct MHD_Response *resp;
  if (a->s3_code[0] && a->http_status >= 300) {
    resp = srv_error_response(r, a->s3_code, a->message);
  } else {
    r->bytes_out = 0;
    resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  }
  for (size_t i = 0; resp && i < a->n; i++) {
    /* The fault: a server that does not say it takes parts. */
    if (r->fault.action == FA_RDMA_NO_MP &&
        !strcasecmp(a->hdrs[i].name, "X-Amz-Rdma-Capabilities"))
      continue;
    MHD_add_response_header(resp, a->hdrs[i].name, a->hdrs[i].value);
  }
  return srv_queue(r, a->http_status, resp);
}

static struct rdma_header *headers_of(const struct req *r) {
  struct rdma_header *h = calloc(r->n_hdrs + 1, sizeof *h);
  for (size_t i = 0; h && i < r->n_hdrs; i++)
    h[i] = (struct rdma_header){r->hdrs[i].name, r->hdrs[i].value};
  return h;
}

/* A READY in its data phase: its connection is suspended meanwhile. */
struct ready_job {
  struct req *r;
  struct rdma_server *eng;
  struct rdma_header *hdrs;
  unsigned faults;
  int done;
  struct rdma_server_answer ans;
  struct ready_job *next;
};

static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ready_job *jobs;

static void *ready_main(void *arg) {
  struct ready_job *j = arg;
  struct req *r = j->r;
  struct rdma_server_backend be = {be_authorize, be_read, be_commit, r};
  rdma_server_ready(j->eng, j->hdrs, r->n_hdrs, r->cred->access_key, &be,
                    j->faults, &j->ans);
  pthread_mutex_lock(&jobs_lock);
  j->done = 1;
  pthread_mutex_unlock(&jobs_lock);
  /* The handler runs again and sends the answer; r is not ours after. */
  MHD_resume_connection(r->conn);
  return NULL;
}

static enum MHD_Result ready(struct req *r, struct rdma_server *eng) {
  pthread_mutex_lock(&jobs_lock);
  struct ready_job **pp = &jobs, *j;
  while ((j = *pp) && j->r != r)
    pp = &j->next;
  if (j && j->done)
    *pp = j->next;
  pthread_mutex_unlock(&jobs_lock);
  if (j) { /* resumed: the data phase is over */
    enum MHD_Result res = send_answer(r, &j->ans);
    free(j->hdrs);
    free(j);
    return res;
  }
  j = calloc(1, sizeof *j);
  if (!j || !(j->hdrs = headers_of(r))) {
    free(j);
    return srv_error(r, 503, "SlowDown", "out of memory");
  }
  j->r = r;
  j->eng = eng;
  j->faults =
      r->fault.action == FA_RDMA_FAIL ? RDMA_SERVER_FAULT_DESTROY_QP : 0;
  pthread_mutex_lock(&jobs_lock);
  j->next = jobs;
  jobs = j;
  pthread_mutex_unlock(&jobs_lock);
  MHD_suspend_connection(r->conn);
  pthread_t th;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&th, &at, ready_main, j) != 0) {
    /* Answer inline rather than not at all. */
    pthread_attr_destroy(&at);
    ready_main(j);
    return MHD_YES;
  }
  pthread_attr_destroy(&at);
  return MHD_YES;
}

enum MHD_Result rdma_control(struct req *r) {
  if (strcmp(r->method, "POST"))
    return srv_error(r, 405, "MethodNotAllowed",
                     "RDMA control requests are POSTs.");
  struct rdma_server *eng = get_engine(r->srv);
  struct rdma_server_answer a;
  if (!eng ||
      (r->op == OP_RDMA_PREPARE && r->fault.action == FA_RDMA_DECLINE)) {
    /* Declined: Content-Length: 0 and no body, as §3.1 requires. */
    rdma_server_decline(&a, NULL);
    a.s3_code[0] = '\0';
    return send_answer(r, &a);
  }
  if (r->op == OP_RDMA_READY)
    return ready(r, eng);
  struct rdma_header *h = headers_of(r);
  if (!h)
    return srv_error(r, 503, "SlowDown", "out of memory");
  struct rdma_server_backend be = {be_authorize, be_read, be_commit, r};
  if (r->op == OP_RDMA_PREPARE)
    rdma_server_prepare(
        eng, h, r->n_hdrs, r->cred->access_key, &be,
        r->fault.action == FA_RDMA_FAIL ? RDMA_SERVER_FAULT_LOSE_QP : 0, &a);
  else
    rdma_server_cancel(eng, h, r->n_hdrs, r->cred->access_key, &a);
  free(h);
  return send_answer(r, &a);
}
