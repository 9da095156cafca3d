/* test_get_checksum.c - GET checksums end to end against a real
 * hipobj-server: what the server keeps and returns (x-amz-checksum-mode:
 * ENABLED on GET and HEAD: the CRC-64/NVME of every upload, single and
 * multipart, beside the CRC32C or composite checksum it was uploaded with;
 * per part by partNumber; nothing for other ranges; kept across a restart;
 * none for a file put there by hand), and what the library verifies: a
 * whole GET in one answer, a parallel GET joining its parts' CRCs against
 * a HEAD's value, a range reported unverified, a byte flipped in the stored
 * file (or on the wire) failing with HIPOBJ_E_INTEGRITY for host memory,
 * files (staged and mapped) and GPU memory (the fake platform, staged),
 * an object without checksums and verification turned off reported as
 * unverified. Expected values come from the harness's bitwise CRC, not
 * from the library. Links the internal library for the fake GPU. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../gpu/fake_gpu.h"
#include "harness.h"

#define PS (64u * 1024)       /* GET part size of the parallel GETs */
#define MP (5u * 1024 * 1024) /* multipart part size (the library's least) */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static const char *const srv_args[] = {"--min-part-size", "64KiB", NULL};

static void make_client(void) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 2, 0);
  cfg.concurrency = 4;
  cfg.staging_chunk_bytes = 16 * 1024;
  cfg.staging_pool_bytes = 8 * 16 * 1024;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
}

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  srv_start(&srv, NULL, srv_args);
  make_client();
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(getcks, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* ---- helpers --------------------------------------------------------------
 */

static void crc64_b64(const void *p, size_t n, char out[16]) {
  ref_b64(ref_crc64nvme(0, p, n), 8, out);
}

static void send_req(struct sreq q, const char *target, struct http_resp *r) {
  q.method = q.method ? q.method : "GET";
  q.target = target;
  cr_assert_eq(http_send(srv.url, &q, r), 0, "cannot connect");
}

/* GET (or HEAD) target with x-amz-checksum-mode: ENABLED and extra. */
static void get_cks(const char *method, const char *target, const char *extra,
                    struct http_resp *r) {
  const char *h[] = {"x-amz-checksum-mode: ENABLED", extra, NULL};
  send_req((struct sreq){.method = method, .hdrs = h}, target, r);
}

/* GET key into m, in parts of PS unless o says otherwise. */
static int get_into(const char *key, const struct hipobj_mem *m,
                    const struct hipobj_get_opts *o,
                    struct hipobj_xfer_result *res) {
  struct hipobj_get_opts d = HIPOBJ_GET_OPTS_INIT;
  if (o)
    d = *o;
  if (!d.part_size)
    d.part_size = PS;
  return hipobj_s3_get(cli, T_BUCKET, key, m, &d, res, err);
}

static int get_host(const char *key, void *buf, size_t n,
                    const struct hipobj_get_opts *o,
                    struct hipobj_xfer_result *res) {
  struct hipobj_mem m = hipobj_mem_host(buf, n);
  return get_into(key, &m, o, res);
}

static void expect_integrity(int st) {
  cr_assert_eq(st, HIPOBJ_E_INTEGRITY, "status %d: %s", st,
               hipobj_error_message(err));
  cr_expect(strstr(hipobj_error_message(err), "mismatch") != NULL, "%s",
            hipobj_error_message(err));
}

static void expect_verified(const struct hipobj_xfer_result *res,
                            const void *data, size_t n) {
  char want[16];
  crc64_b64(data, n, want);
  cr_expect_eq(res->checksum, HIPOBJ_CHECKSUM_CRC64NVME, "note: %s",
               res->checksum_note);
  cr_expect_str_eq(res->checksum_value, want);
  cr_expect_str_eq(hipobj_checksum_name(res->checksum), "crc64nvme");
}

/* ---- what the server keeps and returns ----------------------------------- */

Test(getcks, server_returns_crc64_only_when_asked) {
  char *data = put_pattern(cli, "plain", 100000, 1);
  char want[16], v[64];
  crc64_b64(data, 100000, want);
  struct http_resp r;
  get_cks("GET", "/" T_BUCKET "/plain", NULL, &r);
  cr_assert_eq(r.status, 200);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-type", v, sizeof v),
                   "FULL_OBJECT");
  resp_free(&r);
  get_cks("HEAD", "/" T_BUCKET "/plain", NULL, &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  resp_free(&r);
  /* Not asked: nothing (as S3). */
  send_req((struct sreq){0}, "/" T_BUCKET "/plain", &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), "");
  resp_free(&r);
  /* A range that is not the whole object: nothing; one that is: all. */
  get_cks("GET", "/" T_BUCKET "/plain", "Range: bytes=0-99", &r);
  cr_expect_eq(r.status, 206);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), "");
  resp_free(&r);
  get_cks("HEAD", "/" T_BUCKET "/plain", "Range: bytes=10-", &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), "");
  resp_free(&r);
  get_cks("GET", "/" T_BUCKET "/plain", "Range: bytes=0-", &r);
  cr_expect_eq(r.status, 206);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  resp_free(&r);
  free(data);
}

Test(getcks, server_keeps_the_put_crc32c_beside_crc64) {
  char body[1000], hdr[64], b64[16], v[64], want[16];
  fill_pattern(body, sizeof body, 2);
  ref_b64(ref_crc32c(0, body, sizeof body), 4, b64);
  snprintf(hdr, sizeof hdr, "x-amz-checksum-crc32c: %s", b64);
  const char *h[] = {hdr, NULL};
  struct http_resp r;
  send_req(
      (struct sreq){
          .method = "PUT", .hdrs = h, .body = body, .len = sizeof body},
      "/" T_BUCKET "/c32", &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  get_cks("GET", "/" T_BUCKET "/c32", NULL, &r);
  crc64_b64(body, sizeof body, want);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v), b64);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-type", v, sizeof v),
                   "FULL_OBJECT");
  resp_free(&r);
}

/* A multipart upload through the library (CRC32C part checksums: a
 * composite object) of 3 parts: the whole object's CRC-64/NVME (joined by
 * the server from the parts'), the composite, and per part. */
Test(getcks, server_multipart_whole_and_per_part) {
  size_t n = 2 * MP + 1234;
  char *data = malloc(n);
  fill_pattern(data, n, 3);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = MP;
  po.multipart_threshold = MP;
  struct hipobj_mem src = hipobj_mem_host(data, n);
  OK(hipobj_s3_put(cli, T_BUCKET, "mp", &src, &po, NULL, err));
  char want[16], v[64];
  crc64_b64(data, n, want);
  struct http_resp r;
  get_cks("GET", "/" T_BUCKET "/mp", NULL, &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  /* The composite: CRC32C of the parts' CRC32Cs, then -3. */
  uint8_t cat[12];
  for (int i = 0; i < 3; i++) {
    size_t len = i < 2 ? MP : 1234;
    uint32_t c = ref_crc32c(0, data + (size_t)i * MP, len);
    cat[4 * i] = (uint8_t)(c >> 24);
    cat[4 * i + 1] = (uint8_t)(c >> 16);
    cat[4 * i + 2] = (uint8_t)(c >> 8);
    cat[4 * i + 3] = (uint8_t)c;
  }
  char comp[32], b64[16];
  ref_b64(ref_crc32c(0, cat, sizeof cat), 4, b64);
  snprintf(comp, sizeof comp, "%s-3", b64);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v), comp);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-type", v, sizeof v),
                   "COMPOSITE");
  resp_free(&r);
  /* Part 2 by number: its own CRC-64/NVME and CRC32C. */
  get_cks("GET", "/" T_BUCKET "/mp?partNumber=2", NULL, &r);
  cr_assert_eq(r.status, 206);
  cr_expect_eq(r.len, MP);
  crc64_b64(data + MP, MP, want);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  ref_b64(ref_crc32c(0, data + MP, MP), 4, b64);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v), b64);
  resp_free(&r);
  /* A range over part 2 exactly is not a part asked by number. */
  get_cks("GET", "/" T_BUCKET "/mp", "Range: bytes=5242880-10485759", &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), "");
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc32c", v, sizeof v), "");
  resp_free(&r);
  free(data);
}

Test(getcks, server_checksums_survive_a_restart) {
  char *data = put_pattern(cli, "kept", 5000, 4);
  char want[16], v[64];
  crc64_b64(data, 5000, want);
  hipobj_client_free(cli);
  cli = NULL;
  srv_signal(&srv, SIGTERM);
  srv_start(&srv, srv.root, srv_args);
  make_client();
  struct http_resp r;
  get_cks("GET", "/" T_BUCKET "/kept", NULL, &r);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), want);
  resp_free(&r);
  free(data);
}

/* ---- what the library verifies ------------------------------------------- */

Test(getcks, whole_get_in_one_answer_is_verified) {
  char *data = put_pattern(cli, "one", 40000, 5);
  char buf[40000];
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("one", buf, sizeof buf, NULL, &res));
  cr_assert_eq(memcmp(buf, data, sizeof buf), 0);
  cr_expect_eq(res.parts, 0);
  expect_verified(&res, data, sizeof buf);
  cr_expect_str_eq(res.checksum_note, "");
  free(data);
}

Test(getcks, parallel_get_joins_the_parts) {
  size_t n = 10 * PS + 777;
  char *data = put_pattern(cli, "par", n, 6);
  char *buf = malloc(n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("par", buf, n, NULL, &res));
  cr_assert_eq(memcmp(buf, data, n), 0);
  cr_expect_eq(res.parts, 11);
  expect_verified(&res, data, n);
  /* The same through the asynchronous API. */
  struct hipobj_xfer *x = NULL;
  struct hipobj_mem m = hipobj_mem_host(buf, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "par", &m, &o, NULL, &x, err));
  struct hipobj_xfer_result r2 = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_xfer_wait(x, &r2, err));
  hipobj_xfer_free(x);
  expect_verified(&r2, data, n);
  free(buf);
  free(data);
}

Test(getcks, a_range_is_reported_unverified) {
  size_t n = 4 * PS;
  char *data = put_pattern(cli, "rng", n, 7);
  char *buf = malloc(n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = 100;
  o.length = 3 * PS; /* in parts */
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("rng", buf, n, &o, &res));
  cr_expect_eq(memcmp(buf, data + 100, 3 * PS), 0);
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "range") != NULL, "%s",
            res.checksum_note);
  o.length = 1000; /* one request */
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("rng", buf, n, &o, &res));
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "range") != NULL, "%s",
            res.checksum_note);
  /* From 0 to the end is the whole object. */
  o.offset = 0;
  o.length = 0;
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("rng", buf, n, &o, &res));
  expect_verified(&res, data, n);
  free(buf);
  free(data);
}

Test(getcks, flipped_stored_byte_fails_host_memory) {
  size_t n = 6 * PS + 5;
  char *data = put_pattern(cli, "flip", n, 8);
  flip_stored(&srv, "flip", (off_t)(4 * PS + 3));
  char *buf = malloc(n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  expect_integrity(get_host("flip", buf, n, NULL, &res)); /* in parts */
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.concurrency = 1; /* one request */
  expect_integrity(get_host("flip", buf, n, &o, NULL));
  free(buf);
  free(data);
}

/* The same byte damaged on the wire (the server's corrupt fault on every
 * GetObject answer): the stored object is fine, the bytes received are
 * not. */
Test(getcks, byte_damaged_in_transit_fails) {
  size_t n = 3 * PS;
  char *data = put_pattern(cli, "wire", n, 9);
  const char *spec = "op=GetObject,action=corrupt";
  const char *h[] = {NULL};
  struct http_resp r;
  send_req(
      (struct sreq){
          .method = "POST", .hdrs = h, .body = spec, .len = strlen(spec)},
      "/.hipobj-admin/faults", &r);
  cr_assert_eq(r.status, 200, "%s", r.body);
  resp_free(&r);
  char *buf = malloc(n);
  expect_integrity(get_host("wire", buf, n, NULL, NULL));
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.concurrency = 1;
  expect_integrity(get_host("wire", buf, n, &o, NULL));
  free(buf);
  free(data);
}

static int tmp_file(const char *dir, char *path, size_t cap) {
  snprintf(path, cap, "%s/hipobj-getcks-XXXXXX", dir);
  int fd = mkstemp(path);
  cr_assert(fd >= 0, "mkstemp in %s", dir);
  unlink(path);
  return fd;
}

/* A file through the staging chunks (map 0) or mapped windows (map 1,
 * tmpfs). */
static void file_case(const char *map, const char *dir) {
  setenv("HIPOBJ_FILE_MAP", map, 1);
  size_t n = 5 * PS + 99;
  char *data = put_pattern(cli, "file", n, 10);
  char path[256];
  int fd = tmp_file(dir, path, sizeof path);
  struct hipobj_mem m = hipobj_mem_file(fd, 0, n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_into("file", &m, NULL, &res));
  file_equals(fd, 0, data, n);
  expect_verified(&res, data, n);
  flip_stored(&srv, "file", 7);
  expect_integrity(get_into("file", &m, NULL, NULL));
  close(fd);
  free(data);
}

Test(getcks, flipped_stored_byte_fails_a_staged_file) {
  file_case("0", "/tmp");
}

Test(getcks, flipped_stored_byte_fails_a_mapped_file) {
  struct stat st;
  if (stat("/dev/shm", &st) != 0)
    cr_skip_test("no /dev/shm (tmpfs) for a mapped file");
  file_case("1", "/dev/shm");
}

Test(getcks, flipped_stored_byte_fails_gpu_memory_staged) {
  hgpu_register_fake_for_tests();
  size_t n = 4 * PS + 17;
  char *data = put_pattern(cli, "gpu", n, 11);
  struct hipobj_mem g = HIPOBJ_MEM_INIT;
  OK(hipobj_gpu_alloc(HIPOBJ_MEM_CUDA, 0, n, &g, err));
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_into("gpu", &g, NULL, &res));
  cr_expect_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
  expect_verified(&res, data, n);
  flip_stored(&srv, "gpu", (off_t)(n - 1));
  expect_integrity(get_into("gpu", &g, NULL, NULL));
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.concurrency = 1;
  expect_integrity(get_into("gpu", &g, &o, NULL));
  hipobj_gpu_free(&g);
  hgpu_unregister_fake_for_tests();
  free(data);
}

Test(getcks, multipart_object_is_verified) {
  size_t n = 2 * MP + 10;
  char *data = malloc(n);
  fill_pattern(data, n, 12);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = MP;
  po.multipart_threshold = MP;
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_xfer_result pr = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_put(cli, T_BUCKET, "mpv", &src, &po, &pr, err));
  cr_assert_eq(pr.parts, 3);
  char *buf = malloc(n);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("mpv", buf, n, NULL, &res)); /* in parts */
  expect_verified(&res, data, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.concurrency = 1; /* one answer, with the composite beside CRC-64 */
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("mpv", buf, n, &o, &res));
  expect_verified(&res, data, n);
  flip_stored(&srv, "mpv", (off_t)MP + 3);
  expect_integrity(get_host("mpv", buf, n, NULL, NULL));
  free(buf);
  free(data);
}

/* An object the server keeps no checksum for (a file put into the bucket
 * by hand: its metadata is rebuilt from the data, which cannot vouch for
 * itself): no error, reported unverified. */
Test(getcks, object_without_checksum_is_reported_unverified) {
  char path[512], data[3 * PS];
  fill_pattern(data, sizeof data, 13);
  snprintf(path, sizeof path, "%s/" T_BUCKET "/kbyhand", srv.root);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, sizeof data, f), sizeof data);
  fclose(f);
  struct http_resp r;
  char v[64];
  get_cks("GET", "/" T_BUCKET "/byhand", NULL, &r);
  cr_assert_eq(r.status, 200);
  cr_expect_str_eq(resp_hdr(&r, "x-amz-checksum-crc64nvme", v, sizeof v), "");
  resp_free(&r);
  char buf[sizeof data];
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  for (unsigned conc = 1; conc <= 4; conc += 3) {
    o.concurrency = conc;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(get_host("byhand", buf, sizeof buf, &o, &res));
    cr_expect_eq(memcmp(buf, data, sizeof buf), 0);
    cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
    cr_expect_str_eq(res.checksum_value, "");
    cr_expect(strstr(res.checksum_note, "no checksum") != NULL, "%s",
              res.checksum_note);
  }
}

Test(getcks, verification_off_reads_a_damaged_object) {
  size_t n = 2 * PS;
  char *data = put_pattern(cli, "off", n, 14);
  flip_stored(&srv, "off", 1);
  char *buf = malloc(n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.checksum_mode = HIPOBJ_CHECKSUM_MODE_OFF;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("off", buf, n, &o, &res));
  cr_expect_neq(memcmp(buf, data, n), 0, "the damage was read");
  cr_expect_eq(res.checksum, HIPOBJ_CHECKSUM_NONE);
  cr_expect(strstr(res.checksum_note, "off") != NULL, "%s", res.checksum_note);
  o.checksum_mode = 7;
  cr_expect_eq(get_host("off", buf, n, &o, NULL), HIPOBJ_E_INVALID_ARGUMENT);
  /* Off for the client: the GET's own setting wins. */
  hipobj_client_free(cli);
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 2, 0);
  cfg.checksum_mode = HIPOBJ_CHECKSUM_MODE_OFF;
  OK(hipobj_client_create(&cfg, &cli, err));
  OK(get_host("off", buf, n, NULL, NULL));
  o.checksum_mode = HIPOBJ_CHECKSUM_MODE_VERIFY;
  expect_integrity(get_host("off", buf, n, &o, NULL));
  free(buf);
  free(data);
}

Test(getcks, empty_object_is_verified) {
  struct hipobj_mem src = hipobj_mem_host(NULL, 0);
  OK(hipobj_s3_put(cli, T_BUCKET, "empty", &src, NULL, NULL, err));
  char buf[16];
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(get_host("empty", buf, sizeof buf, NULL, &res));
  cr_expect_eq(res.bytes, 0);
  expect_verified(&res, "", 0);
}
