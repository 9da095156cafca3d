/* test_rdma_server.c - the client engine against hipobj-server over real
 * HTTP and real verbs (suite rdma, in the Soft-RoCE guest): signed control
 * requests (rc_http_ops.c), the server's engine behind
 * tests/server/rdma.c, objects checked over plain S3 HTTP afterwards.
 * GET (whole, range), PUT, UploadPart + Complete, transfers in flight
 * together (READY's suspended connections), a server without --rdma
 * (fallback), and the rdma-decline / rdma-fail faults. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/harness.h"
#include "rc_http_ops.h"
#include "rdma/mr.h"
#include "rdma/qp.h"
#include "rdma/rc_async.h"
#include "src/base/error.h"

static struct server_proc srv;
static struct http_ops H;
static struct rdma_engine *eng;

static void start(const char *const *extra) {
  srv_start(&srv, NULL, extra);
  memset(&H, 0, sizeof H);
  http_ops_init(&H, srv.url);
  struct http_resp r;
  cr_assert_eq(
      http_send(srv.url,
                &(struct sreq){.method = "PUT", .target = "/" T_BUCKET}, &r),
      0);
  cr_assert_eq(r.status, 200, "CreateBucket: %d", r.status);
  resp_free(&r);
  struct hipobj_error err;
  memset(&err, 0, sizeof err);
  cr_assert_eq(rdma_engine_create(NULL, &eng, &err), HIPOBJ_OK, "%s",
               err.message);
}

static void stop(void) {
  http_ops_drain(&H);
  rdma_engine_destroy(eng);
  eng = NULL;
  cr_expect_eq(rdma_qp_live_count(), 0);
  cr_expect_eq(rdma_mr_live_count(), 0);
  srv_cleanup(&srv);
}

static void start_rdma(void) {
  const char *extra[] = {"--rdma", "auto", "--min-part-size", "1", NULL};
  start(extra);
}

TestSuite(server_rc, .fini = stop, .timeout = 300);

static void http_put(const char *key, const void *data, size_t len) {
  char target[256];
  snprintf(target, sizeof target, "/" T_BUCKET "/%s", key);
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){
                .method = "PUT", .target = target, .body = data, .len = len},
            &r);
  cr_assert_eq(r.status, 200, "PUT %s: %d", key, r.status);
  resp_free(&r);
}

static void http_expect(const char *key, const void *data, size_t len) {
  char target[256];
  snprintf(target, sizeof target, "/" T_BUCKET "/%s", key);
  struct http_resp r;
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_eq(r.status, 200, "GET %s: %d", key, r.status);
  cr_assert_eq(r.len, len, "GET %s", key);
  cr_expect(memcmp(r.body, data, len) == 0, "GET %s: data differs", key);
  resp_free(&r);
}

static void http_expect_missing(const char *key) {
  char target[256];
  snprintf(target, sizeof target, "/" T_BUCKET "/%s", key);
  struct http_resp r;
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_expect_eq(r.status, 404, "GET %s: %d", key, r.status);
  resp_free(&r);
}

static struct rdma_rc_request req(const char *key, void *buf, uint64_t off,
                                  uint64_t size) {
  return (struct rdma_rc_request){.bucket = T_BUCKET,
                                  .key = key,
                                  .offset = off,
                                  .size = size,
                                  .buf = buf,
                                  .ops = &H.ops};
}

Test(server_rc, get_put_multipart, .init = start_rdma) {
  size_t len = 100000;
  unsigned char *d = malloc(len), *buf = calloc(1, len);
  fill_pattern(d, len, 1);
  http_put("dir/obj 1", d, len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  struct rdma_rc_request rq = req("dir/obj 1", buf, 0, len);
  cr_assert_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  cr_expect(memcmp(buf, d, len) == 0, "GET data differs");
  cr_expect(res.checksum_verified);
  char etag[40];
  md5_etag(d, len, etag);
  cr_expect(!strncmp(res.etag, etag + 1, 32), "ETag %s vs %s", res.etag, etag);
  /* A range, with the empty-body SHA-256 as payload hash this time. */
  H.unsigned_payload = 1;
  memset(buf, 0, len);
  rq = req("dir/obj 1", buf, 12345, 777);
  cr_assert_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  cr_expect(memcmp(buf, d + 12345, 777) == 0, "range differs");
  H.unsigned_payload = 0;

  /* PUT, read back over HTTP. */
  rq = req("up", d, 0, 54321);
  cr_assert_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  md5_etag(d, 54321, etag);
  cr_expect(!strncmp(res.etag, etag + 1, 32));
  http_expect("up", d, 54321);

  /* UploadPart by RDMA, Create and Complete over HTTP. */
  struct http_resp r;
  http_send(
      srv.url,
      &(struct sreq){.method = "POST", .target = "/" T_BUCKET "/mp?uploads"},
      &r);
  cr_assert_eq(r.status, 200);
  char id[64];
  snprintf(id, sizeof id, "%s", xml_text(&r, "UploadId"));
  resp_free(&r);
  char e1[140], e2[140];
  struct hparam q1[] = {{"partNumber", "1"}, {"uploadId", id}};
  struct hparam q2[] = {{"uploadId", id}, {"partNumber", "2"}};
  rq = req("mp", d, 0, 60000);
  rq.query = q1;
  rq.nq = 2;
  cr_assert_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  snprintf(e1, sizeof e1, "\"%s\"", res.etag);
  rq = req("mp", d + 60000, 0, len - 60000);
  rq.query = q2;
  rq.nq = 2;
  cr_assert_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  snprintf(e2, sizeof e2, "\"%s\"", res.etag);
  char body[512], target[128];
  snprintf(body, sizeof body,
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
           "<ETag>%s</ETag></Part><Part><PartNumber>2</PartNumber>"
           "<ETag>%s</ETag></Part></CompleteMultipartUpload>",
           e1, e2);
  snprintf(target, sizeof target, "/" T_BUCKET "/mp?uploadId=%s", id);
  http_send(srv.url,
            &(struct sreq){.method = "POST",
                           .target = target,
                           .body = body,
                           .len = strlen(body)},
            &r);
  cr_assert_eq(r.status, 200, "Complete: %d %s", r.status, r.body);
  resp_free(&r);
  http_expect("mp", d, len);
  /* A part GET by RDMA: the whole part, offset 0. */
  memset(buf, 0, len);
  struct hparam qp[] = {{"partNumber", "2"}};
  rq = req("mp", buf, 0, len - 60000);
  rq.query = qp;
  rq.nq = 1;
  cr_assert_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  cr_expect(memcmp(buf, d + 60000, len - 60000) == 0, "part differs");
  /* No such key: 404 with the protocol echo, an error. */
  rq = req("nope", buf, 0, 10);
  cr_expect_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_E_NOT_FOUND);
  cr_expect_eq(res.fallback, 0);
  free(d);
  free(buf);
}

Test(server_rc, concurrent, .init = start_rdma) {
  enum { N = 6 };
  size_t len = 40000;
  unsigned char *src[N], *dst[N];
  struct rdma_rc_request rq[N];
  struct rdma_rc_result res[N];
  struct hipobj_error err[N];
  struct rdma_rc_async *a[N];
  char keys[N][16];
  for (int i = 0; i < N; i++) {
    src[i] = malloc(len);
    dst[i] = calloc(1, len);
    fill_pattern(src[i], len, 10u + (unsigned)i);
    snprintf(keys[i], sizeof keys[i], "c%d", i);
    if (i % 2)
      http_put(keys[i], src[i], len);
    rq[i] = req(keys[i], i % 2 ? dst[i] : src[i], 0, len);
    memset(&err[i], 0, sizeof err[i]);
    cr_assert_eq(
        rdma_rc_start(eng, i % 2 == 0, &rq[i], &res[i], &err[i], &a[i]),
        HIPOBJ_OK);
  }
  for (int i = 0; i < N; i++) {
    cr_expect_eq(rdma_rc_join(a[i]), HIPOBJ_OK, "%d: %s", i, err[i].message);
    if (i % 2)
      cr_expect(memcmp(dst[i], src[i], len) == 0, "%d differs", i);
    else
      http_expect(keys[i], src[i], len);
    free(src[i]);
    free(dst[i]);
  }
}

Test(server_rc, declined_without_rdma) {
  start(NULL);
  unsigned char buf[100];
  struct rdma_rc_result res;
  struct hipobj_error err;
  struct rdma_rc_request rq = req("x", buf, 0, sizeof buf);
  cr_expect_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect_eq(res.http_status, 501);
  cr_expect_eq(res.fallback, 1, "%s", res.reason);
  cr_expect_eq(res.ready_sent, 0);
}

Test(server_rc, faults) {
  const char *extra[] = {"--rdma", "auto", "--faults",
                         "op=RdmaPrepare,nth=1,action=rdma-decline;"
                         "op=RdmaReady,nth=1,action=rdma-fail;"
                         "op=RdmaPrepare,nth=3,action=rdma-fail;"
                         "op=RdmaReady,nth=3,action=delay:1000;"
                         "op=RdmaReady,nth=3,action=rdma-fail",
                         NULL};
  start(extra);
  size_t len = 30000;
  unsigned char *d = malloc(len), *buf = calloc(1, len);
  fill_pattern(d, len, 3);
  http_put("f", d, len);
  struct rdma_rc_result res;
  struct hipobj_error err;
  struct rdma_rc_request rq = req("f", buf, 0, len);
  /* 1st PREPARE declined: fall back. */
  cr_expect_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_E_UNSUPPORTED);
  cr_expect_eq(res.fallback, 1);
  /* READY 1 loses its QP in the data phase: a GET error. */
  cr_expect_eq(rdma_rc_get(eng, &rq, &res, &err), HIPOBJ_E_SERVER_ERROR, "%s",
               err.message);
  cr_expect_eq(res.fallback, 0);
  /* PREPARE 3's QP is in ERROR before the client has it, so the PUT's
   * WRITE finds no responder whenever the server handles READY 2: a
   * completion error. (A READY fault alone races the WRITE: PREPARE
   * pairs a PUT's QP, see below.) */
  rq = req("f2", d, 0, len);
  cr_expect_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_E_NETWORK, "%s",
               err.message);
  cr_expect_geq(res.rdma_status, 1, "%s", err.message);
  http_expect_missing("f2");
  /* READY 3 is handled 1 s late, so its data has landed (and the client
   * has its completion) when the QP goes: the server must answer at once,
   * not leave the client waiting for a FINAL until T_exec (30 s). */
  rq = req("f3", d, 0, len);
  cr_expect_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_E_SERVER_ERROR, "%s",
               err.message);
  cr_expect_eq(res.rdma_status, -1, "%s", err.message);
  http_expect_missing("f3");
  /* Then all is well again. */
  rq = req("f2", d, 0, len);
  cr_expect_eq(rdma_rc_put(eng, &rq, &res, &err), HIPOBJ_OK, "%s", err.message);
  http_expect("f2", d, len);
  free(d);
  free(buf);
}
