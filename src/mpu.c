/* mpu.c - multipart uploads step by step: the struct hipobj_mpu handle
 * (upload id, the parts recorded so far), CreateMultipartUpload, Complete,
 * Abort and ListParts; UploadPart runs as a one-part job of the engine
 * (job_put.c), which also drives the automatic multipart PUT with these
 * calls as its steps. */
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
#include "hstruct.h"
#include "jobs.h"
#include "mem.h"
#include "mpu.h"
#include "plan.h"

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
int hmpu_record(struct hipobj_mpu *m, unsigned number, uint64_t size,
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
int hmpu_create(struct hipobj_client *c, const char *bucket, const char *key,
                const char *content_type, int want_crc32c,
                struct hipobj_mpu **out, struct hipobj_error *err) {
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
  /* The object's type goes on Create, the only request that describes
   * the object; S3's default is named rather than left to the server, as
   * hipobj_put_opts promises it. */
  s3_request_header(&r.req, "content-type",
                    content_type && *content_type ? content_type
                                                  : "application/octet-stream");
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
    hendpoint_note_crc32c(&c->facts);
  }
  hreq_cleanup(&r);
  return rc;
}

int hipobj_mpu_create(struct hipobj_client *c, const char *bucket,
                      const char *key, const char *content_type,
                      struct hipobj_mpu **out, struct hipobj_error *err) {
  return hmpu_create(c, bucket, key, content_type, 0, out, err);
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

int hipobj_mpu_upload_part(struct hipobj_mpu *m, unsigned number,
                           const struct hipobj_mem *src_in,
                           struct hipobj_xfer_result *res,
                           struct hipobj_error *err) {
  const char *op = "UploadPart";
  double t0 = hnow_seconds();
  struct hipobj_xfer_result r;
  int rc;
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  if (number < 1 || number > HPLAN_MAX_PARTS)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "part number %u is outside 1..10000", number);
  if ((rc = hstruct_out_begin(op, res, &r, err)))
    return rc;
  struct hipobj_mem m_src, *src = &m_src;
  if ((rc = hmem_import(op, src_in, &m_src, err)) == HIPOBJ_OK &&
      src->len > HPLAN_MAX_PART)
    rc = herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                  "part of %zu bytes exceeds S3's 5 GiB", src->len);
  /* A file or GPU buffer is checked once here, as a PUT's is when it
   * starts: the staged path does not check each chunk's window again. */
  if (rc == HIPOBJ_OK && src->kind != HIPOBJ_MEM_HOST)
    rc = hmem_check(op, src, HMEM_READ, &m->client->log, err);
  struct hjob j;
  if (rc == HIPOBJ_OK && (rc = hjob_upload_part_init(m, number, src, NULL, &j,
                                                     err)) == HIPOBJ_OK) {
    rc = hjob_run(&j, &r, err);
    r.seconds = hnow_seconds() - t0;
  }
  hstruct_out_end(res, &r);
  return rc;
}

struct hipobj_client *hmpu_client(const struct hipobj_mpu *m) {
  return m->client;
}
const char *hmpu_bucket(const struct hipobj_mpu *m) {
  return m->bucket;
}
const char *hmpu_key(const struct hipobj_mpu *m) {
  return m->key;
}
const char *hmpu_upload_id(const struct hipobj_mpu *m) {
  return m->upload_id;
}
int hmpu_crc32c(const struct hipobj_mpu *m) {
  return m->crc32c;
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

int hipobj_mpu_complete(struct hipobj_mpu *m, struct hipobj_xfer_result *res,
                        struct hipobj_error *err) {
  const char *op = "CompleteMultipartUpload";
  double t0 = hnow_seconds();
  struct hipobj_xfer_result r;
  int rc;
  if (!m)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "upload is NULL");
  if ((rc = hstruct_out_begin(op, res, &r, err)))
    return rc;
  if (m->n_parts == 0) {
    hstruct_out_end(res, &r);
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "no part was uploaded");
  }
  mpu_sort(m);
  struct hbuf body = HBUF_INIT;
  pthread_mutex_lock(&m->lock);
  /* A part list that cannot be written (an ETag S3 would never send) must
   * not go out as an empty body. */
  rc = s3_xml_build_complete(&body, m->parts, m->n_parts, err);
  uint64_t total = 0;
  for (size_t i = 0; i < m->n_parts; i++)
    total += m->parts[i].size;
  unsigned n_parts = (unsigned)m->n_parts;
  pthread_mutex_unlock(&m->lock);
  if (rc != HIPOBJ_OK) {
    hbuf_free(&body);
    hstruct_out_end(res, &r);
    return herr_op(err, op, rc);
  }
  struct complete_ctx cc;
  memset(&cc, 0, sizeof cc);
  hreq_init(&cc.r, m->client, op, "POST", m->bucket, m->key);
  s3_request_param(&cc.r.req, "uploadId", m->upload_id);
  /* No Content-Type: the body is XML, but OpenStack Swift's S3 API stores
   * a Complete's type on the object, which then read application/xml. */
  cc.r.body = body.data;
  cc.r.body_len = body.len;
  cc.r.send_body = 1;
  cc.r.sign_payload = HREQ_SIGN_ALWAYS;
  cc.r.check = complete_check;
  /* S3 may take minutes to assemble an upload, sending only whitespace to
   * keep the connection: below the client's low speed, not stalled. */
  cc.r.low_speed_bytes_per_s = 1;
  rc = hreq_run(&cc.r, err);
  if (rc == HIPOBJ_OK && !cc.etag[0]) {
    pthread_mutex_lock(&m->lock);
    multipart_etag(m->parts, m->n_parts, cc.etag);
    pthread_mutex_unlock(&m->lock);
  }
  r.bytes = rc == HIPOBJ_OK ? total : 0;
  r.parts = n_parts;
  r.retries = cc.r.retries;
  r.path = HIPOBJ_PATH_NONE;
  r.seconds = hnow_seconds() - t0;
  hstrlcpy(r.etag, cc.etag, sizeof r.etag);
  hstruct_out_end(res, &r);
  hreq_cleanup(&cc.r);
  hbuf_free(&body);
  return rc;
}

int hipobj_mpu_abort(struct hipobj_mpu *m, struct hipobj_error *err) {
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

int hipobj_mpu_list_parts(struct hipobj_mpu *m, struct hipobj_error *err) {
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
    if (lp.n) { /* an empty page adds nothing (and has no parts array) */
      struct s3_part *grown = realloc(all, (n_all + lp.n) * sizeof *all);
      if (!grown) {
        s3_xml_list_parts_free(&lp);
        rc = herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
        break;
      }
      all = grown;
      memcpy(all + n_all, lp.parts, lp.n * sizeof *all);
      n_all += lp.n;
    }
    /* A truncated answer must move on, or the list ends early or loops
     * (without NextPartNumberMarker: on from the page's last part). */
    unsigned next = lp.next_marker;
    if (next <= marker && lp.n)
      next = lp.parts[lp.n - 1].number;
    int truncated = lp.is_truncated;
    s3_xml_list_parts_free(&lp);
    if (truncated && next <= marker) {
      rc = herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "truncated answer that does not move past part %u", marker);
      break;
    }
    marker = next;
    if (!truncated)
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
