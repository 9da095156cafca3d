/* ops_multipart.c - multipart uploads: the step-by-step calls (create,
 * upload part, complete, abort, list parts) on a struct hipobj_mpu handle,
 * and the automatic multipart PUT that keeps several parts in flight and
 * aborts the upload when anything fails. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../s3/crypto.h"
#include "../s3/xml.h"
#include "base/codec.h"
#include "base/strutil.h"
#include "client_int.h"
#include "ops.h"
#include "plan.h"
#include "rdma_glue.h"
#include "staging.h"

struct hipobj_mpu {
  struct hipobj_client *client;
  char *bucket;
  char *key;
  char *upload_id;
  /* Created with x-amz-checksum-algorithm CRC32C, which the server
   * confirmed: every part carries its CRC32C instead of a signed SHA-256,
   * and Complete lists them. */
  int crc32c;
  pthread_mutex_t lock; /* parts are recorded from several threads */
  struct s3_part *parts;
  size_t n_parts;
  size_t cap_parts;
};

static int mpu_new(struct hipobj_client *c, const char *bucket, const char *key,
                   const char *upload_id, struct hipobj_mpu **out) {
  struct hipobj_mpu *m = calloc(1, sizeof *m);
  if (!m)
    return -1;
  m->client = c;
  m->bucket = strdup(bucket);
  m->key = strdup(key);
  m->upload_id = strdup(upload_id);
  pthread_mutex_init(&m->lock, NULL);
  if (!m->bucket || !m->key || !m->upload_id) {
    hipobj_mpu_free(m);
    return -1;
  }
  *out = m;
  return 0;
}

void hipobj_mpu_free(struct hipobj_mpu *m) {
  if (!m)
    return;
  free(m->bucket);
  free(m->key);
  free(m->upload_id);
  free(m->parts);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

const char *hipobj_mpu_upload_id(const struct hipobj_mpu *m) {
  return m ? m->upload_id : "";
}

/* Records (or replaces, on re-upload) a part; crc32c "" when none. */
static int mpu_record(struct hipobj_mpu *m, unsigned number, uint64_t size,
                      const char *etag, const char *crc32c) {
  int rc = 0;
  pthread_mutex_lock(&m->lock);
  struct s3_part *p = NULL;
  for (size_t i = 0; i < m->n_parts; i++)
    if (m->parts[i].number == number)
      p = &m->parts[i];
  if (!p) {
    if (m->n_parts == m->cap_parts) {
      size_t cap = m->cap_parts ? m->cap_parts * 2 : 16;
      struct s3_part *np = realloc(m->parts, cap * sizeof *np);
      if (!np) {
        rc = -1;
        goto out;
      }
      m->parts = np;
      m->cap_parts = cap;
    }
    p = &m->parts[m->n_parts++];
  }
  memset(p, 0, sizeof *p);
  p->number = number;
  p->size = size;
  hstrlcpy(p->etag, etag, sizeof p->etag);
  hstrlcpy(p->crc32c, crc32c, sizeof p->crc32c);
out:
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int part_cmp(const void *a, const void *b) {
  const struct s3_part *x = a, *y = b;
  return x->number < y->number ? -1 : x->number > y->number;
}

static void mpu_sort(struct hipobj_mpu *m) {
  pthread_mutex_lock(&m->lock);
  qsort(m->parts, m->n_parts, sizeof *m->parts, part_cmp);
  pthread_mutex_unlock(&m->lock);
}

size_t hipobj_mpu_part_count(const struct hipobj_mpu *m) {
  return m ? m->n_parts : 0;
}

int hipobj_mpu_part(const struct hipobj_mpu *m, size_t i, unsigned *number,
                    uint64_t *size, const char **etag) {
  if (!m || i >= m->n_parts)
    return HIPOBJ_E_INVALID_ARGUMENT;
  mpu_sort((struct hipobj_mpu *)m);
  if (number)
    *number = m->parts[i].number;
  if (size)
    *size = m->parts[i].size;
  if (etag)
    *etag = m->parts[i].etag;
  return HIPOBJ_OK;
}

/* ---- CreateMultipartUpload ----------------------------------------------- */

static int initiate_check(struct hreq *r, struct hipobj_error *err) {
  char *id = NULL;
  const struct hbuf *b = &r->xfer.resp.body;
  int rc = herr_op(err, r->op_name,
                   s3_xml_parse_initiate(hbuf_str(b), b->len, &id, err));
  free(id); /* parsed again by the caller; here we only validate */
  return rc;
}

/* Asks for CRC32C part checksums when want_crc32c; the upload uses them
 * only if the server's answer confirms the algorithm (servers that do not
 * know it ignore the header). */
static int mpu_create(struct hipobj_client *c, const char *bucket,
                      const char *key, const char *content_type,
                      int want_crc32c, struct hipobj_mpu **out,
                      struct hipobj_error *err) {
  const char *op = "CreateMultipartUpload";
  int rc;
  if (!c || !out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client or out is NULL");
  *out = NULL;
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  struct hreq r;
  hreq_init(&r, c, op, "POST", bucket, key);
  s3_request_param(&r.req, "uploads", NULL);
  if (content_type)
    s3_request_header(&r.req, "content-type", content_type);
  if (want_crc32c)
    s3_request_header(&r.req, "x-amz-checksum-algorithm", "CRC32C");
  r.send_body = 1;
  r.check = initiate_check;
  rc = hreq_run(&r, err);
  if (rc == HIPOBJ_OK) {
    char *id = NULL;
    const struct hbuf *b = &r.xfer.resp.body;
    if (s3_xml_parse_initiate(hbuf_str(b), b->len, &id, NULL) != 0 ||
        mpu_new(c, bucket, key, id, out) != 0)
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
    free(id);
  }
  char alg[16];
  if (rc == HIPOBJ_OK && want_crc32c &&
      s3_http_resp_header(&r.xfer.resp, "x-amz-checksum-algorithm", alg,
                          sizeof alg) &&
      !strcasecmp(alg, "CRC32C")) {
    (*out)->crc32c = 1;
    hreq_crc32c_note_checked(c);
  }
  hreq_cleanup(&r);
  return rc;
}

int hipobj_s3_mpu_create(struct hipobj_client *c, const char *bucket,
                         const char *key, const char *content_type,
                         struct hipobj_mpu **out, struct hipobj_error *err) {
  return mpu_create(c, bucket, key, content_type, 0, out, err);
}

int hipobj_mpu_open(struct hipobj_client *c, const char *bucket,
                    const char *key, const char *upload_id,
                    struct hipobj_mpu **out, struct hipobj_error *err) {
  const char *op = "OpenMultipartUpload";
  int rc;
  if (!c || !out || !upload_id || !*upload_id)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "client, upload id or out missing");
  *out = NULL;
  if ((rc = hcheck_bucket_key(op, bucket, key, 1, err)))
    return rc;
  if (mpu_new(c, bucket, key, upload_id, out) != 0)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  return HIPOBJ_OK;
}

/* ---- UploadPart ---------------------------------------------------------- */

static int part_check(struct hreq *r, struct hipobj_error *err) {
  if (!r->xfer.resp.etag[0])
    return herr_set(err, HIPOBJ_E_PROTOCOL, r->op_name, "answer has no ETag");
  return HIPOBJ_OK;
}

/* Fills r for one UploadPart; `number_text` must outlive the request. */
static void part_request(struct hreq *r, struct hipobj_mpu *m, unsigned number,
                         char number_text[16], const char *data, uint64_t len) {
  char name[64];
  snprintf(name, sizeof name, "UploadPart #%u", number);
  hreq_init(r, m->client, name, "PUT", m->bucket, m->key);
  snprintf(number_text, 16, "%u", number);
  s3_request_param(&r->req, "partNumber", number_text);
  s3_request_param(&r->req, "uploadId", m->upload_id);
  r->body = data;
  r->body_len = len;
  r->send_body = 1;
  r->sign_payload = m->crc32c ? HREQ_SIGN_NONE : HREQ_SIGN_OBJECT;
  r->crc32c = m->crc32c;
  r->check = part_check;
}

int hipobj_s3_mpu_upload_part(struct hipobj_mpu *m, unsigned number,
                              const struct hipobj_mem *src,
                              struct hipobj_xfer_result *res,
                              struct hipobj_error *err) {
  const char *op = "UploadPart";
  double t0 = hnow_seconds();
  int rc;
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  if (number < 1 || number > HPLAN_MAX_PARTS)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "part number %u is outside 1..10000", number);
  if ((rc = hops_check_result(op, res, err)) || (rc = hcheck_mem(op, src, err)))
    return rc;
  if (src->len > HPLAN_MAX_PART)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "part of %zu bytes exceeds S3's 5 GiB", src->len);
  {
    /* RDMA first when it can be tried (client policy). */
    char n[16];
    snprintf(n, sizeof n, "%u", number);
    struct hparam q[2] = {{"partNumber", n}, {"uploadId", m->upload_id}};
    struct hrdma_job job = {.is_put = 1,
                            .bucket = m->bucket,
                            .key = m->key,
                            .query = q,
                            .query_n = 2,
                            .size = src->len,
                            .mem = src,
                            .policy = HIPOBJ_RDMA_DEFAULT};
    struct hrdma_outcome out;
    rc = hrdma_transfer(m->client, &job, &out, err);
    if (rc != HIPOBJ_OK)
      return rc;
    if (out.done) {
      if (mpu_record(m, number, src->len, out.etag, "") != 0)
        return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
      if (res) {
        res->bytes = res->rdma_bytes = out.bytes;
        res->parts = 1;
        res->path = HIPOBJ_PATH_RDMA_DIRECT;
        res->seconds = hnow_seconds() - t0;
        hstrlcpy(res->etag, out.etag, sizeof res->etag);
      }
      return HIPOBJ_OK;
    }
  }
  struct hreq r;
  struct hstage *stage = NULL;
  char num[16];
  part_request(&r, m, number, num, src->ptr, src->len);
  if (src->kind != HIPOBJ_MEM_HOST) {
    rc = hstage_put_begin(m->client, r.op_name, src, 0, src->len, 0, &stage,
                          err);
    if (rc == HIPOBJ_OK)
      hstage_put_attach(stage, &r);
  }
  if (rc == HIPOBJ_OK)
    rc = hreq_run(&r, err);
  hstage_end(stage);
  if (rc == HIPOBJ_OK &&
      mpu_record(m, number, src->len, r.xfer.resp.etag, r.crc32c_b64))
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, r.op_name, "out of memory");
  if (res) {
    res->bytes = rc == HIPOBJ_OK ? src->len : 0;
    res->retries = r.retries;
    res->parts = 1;
    res->path = src->kind != HIPOBJ_MEM_HOST ? HIPOBJ_PATH_HTTP_STAGED
                                             : HIPOBJ_PATH_HTTP;
    res->seconds = hnow_seconds() - t0;
    hstrlcpy(res->etag, r.xfer.resp.etag, sizeof res->etag);
  }
  hreq_cleanup(&r);
  return rc;
}

/* ---- CompleteMultipartUpload / Abort ------------------------------------- */

/* S3's multipart ETag: MD5 over the parts' binary MD5s, "-N". Used when a
 * server (Ceph RGW) completes the upload but leaves <ETag> empty. Only
 * possible when every part ETag is a plain MD5; otherwise etag stays "". */
static void multipart_etag(const struct s3_part *parts, size_t n,
                           char out[128]) {
  out[0] = '\0';
  uint8_t *md5s = malloc(n * 16 + 1);
  if (!md5s)
    return;
  for (size_t i = 0; i < n; i++) {
    const char *e = parts[i].etag;
    size_t len = strlen(e);
    if (len == 34 && e[0] == '"' && e[33] == '"') {
      e++;
      len = 32;
    }
    if (len != 32 || strspn(e, "0123456789abcdefABCDEF") < 32)
      goto out;
    for (size_t j = 0; j < 16; j++) {
      unsigned v;
      if (sscanf(e + 2 * j, "%2x", &v) != 1)
        goto out;
      md5s[i * 16 + j] = (uint8_t)v;
    }
  }
  uint8_t digest[16];
  char hex[33];
  if (s3_md5(md5s, n * 16, digest) != 0)
    goto out; /* no ETag rather than a wrong one (MD5 unavailable) */
  hhex_encode(digest, 16, hex);
  snprintf(out, 128, "\"%s-%zu\"", hex, n);
out:
  free(md5s);
}

struct complete_ctx {
  struct hreq r;
  char etag[128];
};

/* S3 may answer 200 and still fail: the <Error> then sits in the body. Its
 * code decides whether the runner tries again (InternalError: yes). */
static int complete_check(struct hreq *r, struct hipobj_error *err) {
  struct complete_ctx *cc = (struct complete_ctx *)r;
  const struct hbuf *b = &r->xfer.resp.body;
  struct s3_xml_error xe;
  int is_error = 0;
  memset(&xe, 0, sizeof xe);
  int rc = herr_op(err, r->op_name,
                   s3_xml_parse_complete(hbuf_str(b), b->len, &is_error, &xe,
                                         cc->etag, err));
  if (rc == HIPOBJ_OK && is_error) {
    int st = herr_status_from_http(500, xe.code);
    if (strcmp(xe.code, "InternalError") && strcmp(xe.code, "SlowDown"))
      st = herr_status_from_http(400, xe.code);
    rc = herr_set_s3(
        err, st, r->op_name, (int)r->xfer.resp.status, xe.code, xe.message,
        xe.request_id[0] ? xe.request_id : r->xfer.resp.request_id);
  }
  return rc;
}

int hipobj_s3_mpu_complete(struct hipobj_mpu *m, struct hipobj_xfer_result *res,
                           struct hipobj_error *err) {
  const char *op = "CompleteMultipartUpload";
  double t0 = hnow_seconds();
  int rc;
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  if ((rc = hops_check_result(op, res, err)))
    return rc;
  if (m->n_parts == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "no part was uploaded");
  mpu_sort(m);
  struct hbuf body = HBUF_INIT;
  pthread_mutex_lock(&m->lock);
  s3_xml_build_complete(&body, m->parts, m->n_parts);
  uint64_t total = 0;
  for (size_t i = 0; i < m->n_parts; i++)
    total += m->parts[i].size;
  unsigned n_parts = (unsigned)m->n_parts;
  pthread_mutex_unlock(&m->lock);
  if (body.oom) {
    hbuf_free(&body);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  struct complete_ctx cc;
  memset(&cc, 0, sizeof cc);
  hreq_init(&cc.r, m->client, op, "POST", m->bucket, m->key);
  s3_request_param(&cc.r.req, "uploadId", m->upload_id);
  s3_request_header(&cc.r.req, "content-type", "application/xml");
  cc.r.body = body.data;
  cc.r.body_len = body.len;
  cc.r.send_body = 1;
  cc.r.sign_payload = HREQ_SIGN_ALWAYS;
  cc.r.check = complete_check;
  rc = hreq_run(&cc.r, err);
  if (rc == HIPOBJ_OK && !cc.etag[0]) {
    pthread_mutex_lock(&m->lock);
    multipart_etag(m->parts, m->n_parts, cc.etag);
    pthread_mutex_unlock(&m->lock);
  }
  if (res) {
    res->bytes = rc == HIPOBJ_OK ? total : 0;
    res->parts = n_parts;
    res->retries = cc.r.retries;
    res->path = HIPOBJ_PATH_NONE;
    res->seconds = hnow_seconds() - t0;
    hstrlcpy(res->etag, cc.etag, sizeof res->etag);
  }
  hreq_cleanup(&cc.r);
  hbuf_free(&body);
  return rc;
}

int hipobj_s3_mpu_abort(struct hipobj_mpu *m, struct hipobj_error *err) {
  const char *op = "AbortMultipartUpload";
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  struct hreq r;
  hreq_init(&r, m->client, op, "DELETE", m->bucket, m->key);
  s3_request_param(&r.req, "uploadId", m->upload_id);
  int rc = hreq_run(&r, err);
  hreq_cleanup(&r);
  return rc;
}

/* ---- ListParts ----------------------------------------------------------- */

int hipobj_s3_mpu_list_parts(struct hipobj_mpu *m, struct hipobj_error *err) {
  const char *op = "ListParts";
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  struct s3_part *all = NULL;
  size_t n_all = 0;
  unsigned marker = 0;
  int rc = HIPOBJ_OK;
  for (;;) {
    struct hreq r;
    char marker_text[16];
    hreq_init(&r, m->client, op, "GET", m->bucket, m->key);
    s3_request_param(&r.req, "uploadId", m->upload_id);
    snprintf(marker_text, sizeof marker_text, "%u", marker);
    if (marker)
      s3_request_param(&r.req, "part-number-marker", marker_text);
    rc = hreq_run(&r, err);
    struct s3_list_parts lp;
    memset(&lp, 0, sizeof lp);
    if (rc == HIPOBJ_OK) {
      const struct hbuf *b = &r.xfer.resp.body;
      rc = herr_op(err, op,
                   s3_xml_parse_list_parts(hbuf_str(b), b->len, &lp, err));
    }
    hreq_cleanup(&r);
    if (rc != HIPOBJ_OK)
      break;
    struct s3_part *grown =
        lp.n ? realloc(all, (n_all + lp.n) * sizeof *all) : all;
    if (!grown) {
      s3_xml_list_parts_free(&lp);
      rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
      break;
    }
    all = grown;
    memcpy(all + n_all, lp.parts, lp.n * sizeof *all);
    n_all += lp.n;
    int more = lp.is_truncated && lp.next_marker > marker;
    marker = lp.next_marker;
    s3_xml_list_parts_free(&lp);
    if (!more)
      break;
  }
  if (rc != HIPOBJ_OK) {
    free(all);
    return rc;
  }
  pthread_mutex_lock(&m->lock);
  free(m->parts);
  m->parts = all;
  m->n_parts = m->cap_parts = n_all;
  pthread_mutex_unlock(&m->lock);
  hipobj_error_clear(err);
  return HIPOBJ_OK;
}

/* ---- Automatic multipart PUT --------------------------------------------- */

struct part_slot {
  struct hreq r;        /* first: the completion callback casts back */
  struct hstage *stage; /* GPU source: its staging pipeline */
  struct mp_state *st;
  unsigned number;
  uint64_t len;
  char number_text[16];
  int busy;
};

struct mp_state {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct hipobj_mpu *mpu;
  struct hxctl *ctl;
  int rdma, rdma_policy; /* try parts by RDMA first */
  uint64_t rdma_bytes;
  int rdma_staged; /* a part went through pinned host memory */
  unsigned next;   /* RDMA workers: the next part to send */
  unsigned share;  /* staging chunks per part: all parts in flight fit */
  unsigned in_flight;
  unsigned retries;
  int failed;
  struct hipobj_error first_error;
};

static void part_done(struct hreq *r, void *ctx) {
  struct part_slot *s = ctx;
  struct mp_state *st = s->st;
  int rc = r->status;
  if (rc == HIPOBJ_OK && mpu_record(st->mpu, s->number, s->len,
                                    r->xfer.resp.etag, r->crc32c_b64) != 0)
    rc = herr_set(&r->err, HIPOBJ_E_OUT_OF_MEMORY, r->op_name, "out of memory");
  /* Its chunks go back to the pool before anyone is woken to take them. */
  hstage_end(s->stage);
  s->stage = NULL;
  pthread_mutex_lock(&st->lock);
  st->retries += r->retries;
  if (rc != HIPOBJ_OK && !st->failed) {
    st->failed = 1;
    st->first_error = r->err;
  }
  hreq_cleanup(r);
  s->busy = 0;
  st->in_flight--;
  /* The driver and RDMA workers waiting for their own slot share it. */
  pthread_cond_broadcast(&st->cond);
  pthread_mutex_unlock(&st->lock);
}

/* One part by RDMA, in the calling thread (a worker of upload_parts_rdma
 * or the driver). Returns 0 when done, 1 when it failed for good (recorded in
 * st), -1 when HTTP must send it. */
static int rdma_part(struct mp_state *st, const struct hipobj_mem *src,
                     unsigned number, uint64_t off, uint64_t len) {
  char num[16];
  snprintf(num, sizeof num, "%u", number);
  struct hparam q[2] = {{"partNumber", num}, {"uploadId", st->mpu->upload_id}};
  struct hipobj_mem pm = *src;
  pm.ptr = (char *)src->ptr + off;
  pm.len = (size_t)len;
  struct hrdma_job job = {.is_put = 1,
                          .bucket = st->mpu->bucket,
                          .key = st->mpu->key,
                          .query = q,
                          .query_n = 2,
                          .size = len,
                          .mem = &pm,
                          .policy = st->rdma_policy};
  struct hrdma_outcome out;
  struct hipobj_error e;
  memset(&e, 0, sizeof e);
  int rc = hrdma_transfer(st->mpu->client, &job, &out, &e);
  if (rc == HIPOBJ_OK && out.done &&
      mpu_record(st->mpu, number, len, out.etag, "") != 0)
    rc = herr_set(&e, HIPOBJ_E_OUT_OF_MEMORY, "UploadPart", "out of memory");
  if (rc != HIPOBJ_OK) {
    snprintf(e.operation, sizeof e.operation, "UploadPart #%u", number);
    pthread_mutex_lock(&st->lock);
    if (!st->failed) {
      st->failed = 1;
      st->first_error = e;
    }
    pthread_mutex_unlock(&st->lock);
    return 1;
  }
  if (!out.done)
    return -1;
  pthread_mutex_lock(&st->lock);
  st->rdma_bytes += out.bytes;
  st->rdma_staged |= out.staged;
  pthread_mutex_unlock(&st->lock);
  hxctl_add(st->ctl, out.bytes);
  return 0;
}

/* Sends part `number` over HTTP in slot s (busy, counted in in_flight);
 * part_done() ends it, on the engine's thread. */
static void http_part_submit(struct mp_state *st, const struct hipobj_mem *src,
                             struct part_slot *s, unsigned number, uint64_t off,
                             uint64_t len) {
  s->st = st;
  s->number = number;
  s->len = len;
  part_request(&s->r, st->mpu, number, s->number_text,
               (const char *)src->ptr + off, len);
  s->r.done = part_done;
  s->r.done_ctx = s;
  s->r.ctl = st->ctl;
  if (src->kind != HIPOBJ_MEM_HOST) {
    /* May wait here, in the caller's thread, for parts in flight to give
     * their chunks back. */
    int rc = hstage_put_begin(st->mpu->client, s->r.op_name, src, off, len,
                              st->share, &s->stage, &s->r.err);
    if (rc != HIPOBJ_OK) {
      s->r.status = rc;
      part_done(&s->r, s);
      return;
    }
    hstage_put_attach(s->stage, &s->r);
  }
  hreq_submit(&s->r);
}

/* HTTP only: keeps up to `conc` parts in flight from this thread; stops
 * submitting at the first failure and waits for the parts still running. */
static void upload_parts_http(struct mp_state *st, const struct hipobj_mem *src,
                              uint64_t part_size, unsigned n_parts,
                              unsigned conc, struct part_slot *slots) {
  unsigned next = 1;
  for (;;) {
    pthread_mutex_lock(&st->lock);
    while (st->in_flight > 0 && (st->in_flight >= conc || next > n_parts ||
                                 st->failed || hxctl_cancelled(st->ctl)))
      pthread_cond_wait(&st->cond, &st->lock);
    if (st->failed || next > n_parts || hxctl_cancelled(st->ctl)) {
      pthread_mutex_unlock(&st->lock);
      break;
    }
    struct part_slot *s = NULL;
    for (unsigned i = 0; i < conc && !s; i++)
      if (!slots[i].busy)
        s = &slots[i];
    s->busy = 1;
    st->in_flight++;
    pthread_mutex_unlock(&st->lock);
    uint64_t off, len;
    hplan_part(src->len, part_size, next, &off, &len);
    http_part_submit(st, src, s, next++, off, len);
  }
}

/* RDMA parts: every worker (the driver is one of them) takes the next
 * part, sends it by RDMA (sessions block their thread), and over HTTP in
 * its own slot when RDMA cannot, waiting for that part before the next. */
#define MAX_RDMA_WORKERS 16 /* threads sending RDMA parts of one upload */

struct rdma_worker {
  pthread_t th;
  struct mp_state *st;
  const struct hipobj_mem *src;
  uint64_t part_size;
  unsigned n_parts;
  struct part_slot *slot;
};

static void *rdma_worker_main(void *arg) {
  struct rdma_worker *w = arg;
  struct mp_state *st = w->st;
  for (;;) {
    pthread_mutex_lock(&st->lock);
    if (st->failed || st->next > w->n_parts || hxctl_cancelled(st->ctl)) {
      pthread_mutex_unlock(&st->lock);
      break;
    }
    unsigned number = st->next++;
    pthread_mutex_unlock(&st->lock);
    uint64_t off, len;
    hplan_part(w->src->len, w->part_size, number, &off, &len);
    if (rdma_part(st, w->src, number, off, len) >= 0)
      continue; /* done by RDMA, or failed for good */
    pthread_mutex_lock(&st->lock);
    w->slot->busy = 1;
    st->in_flight++;
    pthread_mutex_unlock(&st->lock);
    http_part_submit(st, w->src, w->slot, number, off, len);
    pthread_mutex_lock(&st->lock);
    while (w->slot->busy)
      pthread_cond_wait(&st->cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
  }
  return NULL;
}

static void upload_parts_rdma(struct mp_state *st, const struct hipobj_mem *src,
                              uint64_t part_size, unsigned n_parts,
                              unsigned conc, struct part_slot *slots) {
  struct rdma_worker w[MAX_RDMA_WORKERS];
  unsigned started = 0;
  if (conc > MAX_RDMA_WORKERS)
    conc = MAX_RDMA_WORKERS;
  st->next = 1;
  for (unsigned i = 0; i < conc; i++) {
    w[i] = (struct rdma_worker){.st = st,
                                .src = src,
                                .part_size = part_size,
                                .n_parts = n_parts,
                                .slot = &slots[i]};
    /* Fewer workers when a thread cannot be made: slower, still correct. */
    if (i > 0 && pthread_create(&w[i].th, NULL, rdma_worker_main, &w[i]) != 0)
      break;
    started = i + 1;
  }
  rdma_worker_main(&w[0]);
  for (unsigned i = 1; i < started; i++)
    pthread_join(w[i].th, NULL);
}

static int upload_parts(struct mp_state *st, const struct hipobj_mem *src,
                        uint64_t part_size, unsigned n_parts, unsigned conc,
                        struct part_slot *slots) {
  if (st->rdma)
    upload_parts_rdma(st, src, part_size, n_parts, conc, slots);
  else
    upload_parts_http(st, src, part_size, n_parts, conc, slots);
  if (!st->failed && hxctl_cancelled(st->ctl)) {
    herr_set(&st->first_error, HIPOBJ_E_CANCELLED, "PutObject", "cancelled");
    st->failed = 1;
  }
  return st->failed ? st->first_error.status : HIPOBJ_OK;
}

int hops_put_multipart(struct hipobj_client *c, const char *bucket,
                       const char *key, const struct hipobj_mem *src,
                       const char *content_type, uint64_t part_size,
                       unsigned concurrency, int keep_failed_upload,
                       int rdma_policy, struct hxctl *ctl,
                       struct hipobj_xfer_result *res,
                       struct hipobj_error *err) {
  /* RDMA required but impossible: fail before an upload exists. */
  int ready = hrdma_ready(c, rdma_policy, src, "UploadPart", err);
  if (ready < 0)
    return -ready;
  uint64_t ps;
  if (hplan_part_size(src->len, part_size, &ps) != 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "PutObject",
                    "%zu bytes exceed S3's 5 TiB object limit", src->len);
  unsigned n_parts = hplan_part_count(src->len, ps);
  unsigned conc = concurrency ? concurrency : 1;
  if (conc > n_parts)
    conc = n_parts;
  struct hipobj_mpu *m = NULL;
  /* Part checksums instead of signed payloads where the server checks
   * them: not for RDMA parts (the client never reads that data) nor for an
   * upload kept for resuming (its later parts come from the step-by-step
   * calls, which sign them). */
  int want_crc32c = c->cfg.integrity == HIPOBJ_INTEGRITY_AUTO && ready == 0 &&
                    !keep_failed_upload;
  int rc = mpu_create(c, bucket, key, content_type, want_crc32c, &m, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct part_slot *slots = calloc(conc, sizeof *slots);
  struct mp_state st;
  memset(&st, 0, sizeof st);
  pthread_mutex_init(&st.lock, NULL);
  pthread_cond_init(&st.cond, NULL);
  st.mpu = m;
  st.ctl = ctl;
  st.rdma = ready > 0;
  st.rdma_policy = rdma_policy;
  st.share = hstage_share(c, conc);
  hxctl_set_total(ctl, src->len);
  if (!slots) {
    rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "PutObject", "out of memory");
  } else {
    rc = upload_parts(&st, src, ps, n_parts, conc, slots);
    if (rc != HIPOBJ_OK)
      herr_copy(err, &st.first_error);
  }
  struct hipobj_xfer_result cres = HIPOBJ_XFER_RESULT_INIT;
  if (rc == HIPOBJ_OK)
    rc = hipobj_s3_mpu_complete(m, &cres, err);
  if (res) {
    res->bytes = rc == HIPOBJ_OK ? src->len : 0;
    res->parts = n_parts;
    res->retries = st.retries + cres.retries;
    res->rdma_bytes = rc == HIPOBJ_OK ? st.rdma_bytes : 0;
    res->path = st.rdma_bytes == src->len
                    ? (st.rdma_staged ? HIPOBJ_PATH_RDMA_STAGED
                                      : HIPOBJ_PATH_RDMA_DIRECT)
                : src->kind != HIPOBJ_MEM_HOST ? HIPOBJ_PATH_HTTP_STAGED
                                               : HIPOBJ_PATH_HTTP;
    hstrlcpy(res->etag, cres.etag, sizeof res->etag);
  }
  if (rc != HIPOBJ_OK) {
    if (keep_failed_upload) {
      if (res)
        hstrlcpy(res->upload_id, m->upload_id, sizeof res->upload_id);
      HLOG_INFO(&c->log, "multipart upload of %s/%s failed; kept for resuming",
                bucket, key);
    } else {
      /* No orphaned upload: its parts would be billed and invisible. */
      struct hipobj_error *aerr = NULL;
      hipobj_error_create(&aerr);
      if (hipobj_s3_mpu_abort(m, aerr) != HIPOBJ_OK)
        HLOG_WARN(&c->log, "could not abort the failed upload of %s/%s: %s",
                  bucket, key, hipobj_error_message(aerr));
      hipobj_error_free(aerr);
    }
  }
  pthread_cond_destroy(&st.cond);
  pthread_mutex_destroy(&st.lock);
  free(slots);
  hipobj_mpu_free(m);
  return rc;
}
