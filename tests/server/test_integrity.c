/* test_integrity.c - how uploads are protected (hipobj_client_config
 * .integrity), seen through what the server catches: the server's fault
 * switch damages one byte of an upload's body as it arrives, and the code
 * of the refusal says which check caught it (BadDigest: the CRC32C the
 * client sent; XAmzContentSHA256Mismatch: the signed SHA-256). Nothing
 * catches it with integrity NONE: the damaged object is stored, which is
 * what that setting risks. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define PART (5u << 20)
#define SIZE (2 * PART + 12345) /* three parts, the last a short one */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char *data;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  data = malloc(SIZE);
  cr_assert_not_null(data);
  fill_pattern(data, SIZE, 31);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  free(data);
  hipobj_global_cleanup();
}

TestSuite(integrity, .init = init, .fini = fini, .timeout = 90);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* A server with these faults (NULL: none) and a client with this
 * integrity setting, 5 MiB parts, 2 parts in flight. */
static void start(const char *faults, enum hipobj_integrity integrity) {
  const char *extra[] = {"--faults", faults, NULL};
  srv_start(&srv, NULL, faults ? extra : NULL);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  client_config(&cfg, srv.url, NULL, NULL, 1, 0);
  cfg.integrity = integrity;
  cfg.part_size = PART;
  cfg.concurrency = 2;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static int put(const char *key, size_t n, int keep_failed_upload) {
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.keep_failed_upload = keep_failed_upload;
  return hipobj_s3_put(cli, T_BUCKET, key, &src, &po, NULL, err);
}

/* The upload failed because `code` refused a part, left no object and no
 * upload behind (unless kept). */
static void refused_by(const char *key, const char *code, int kept) {
  cr_assert_not_null(strstr(hipobj_error_message(err), code), "%s",
                     hipobj_error_message(err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, key, &info, err),
               HIPOBJ_E_NOT_FOUND);
  if (kept)
    cr_assert(upload_open(srv.url), "the kept upload is not listed");
  else
    cr_assert_not(upload_open(srv.url), "an upload is left");
}

/* The object reads back as sent; returns the number of differing bytes. */
static size_t differences(const char *key, size_t n) {
  char *back = malloc(n);
  cr_assert_not_null(back);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, NULL, err));
  size_t diff = 0;
  for (size_t i = 0; i < n; i++)
    diff += back[i] != data[i];
  free(back);
  return diff;
}

Test(integrity, auto_uploads_parts_with_crc32c_instead_of_sha256) {
  start("op=UploadPart,nth=2,action=corrupt:1000", HIPOBJ_INTEGRITY_AUTO);
  int st = put("mp", SIZE, 0);
  cr_assert_neq(st, HIPOBJ_OK, "a damaged part was accepted");
  /* BadDigest, not XAmzContentSHA256Mismatch: the part was checked by its
   * CRC32C and sent unsigned. */
  refused_by("mp", "BadDigest", 0);
}

Test(integrity, auto_upload_intact_reads_back) {
  start(NULL, HIPOBJ_INTEGRITY_AUTO);
  OK(put("mp", SIZE, 0));
  cr_assert_eq(differences("mp", SIZE), 0);
}

Test(integrity, auto_from_a_file_checks_the_staged_bytes) {
  start("op=UploadPart,nth=3,action=corrupt", HIPOBJ_INTEGRITY_AUTO);
  char path[] = "/tmp/hipobj-integrity-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  unlink(path);
  cr_assert_eq(pwrite(fd, data, SIZE, 0), (ssize_t)SIZE);
  struct hipobj_mem src = hipobj_mem_file(fd, 0, SIZE);
  int st = hipobj_s3_put(cli, T_BUCKET, "file", &src, NULL, NULL, err);
  cr_assert_neq(st, HIPOBJ_OK, "a damaged part was accepted");
  refused_by("file", "BadDigest", 0);
  /* And without damage the file's checksums match what the server got. */
  OK(hipobj_s3_put(cli, T_BUCKET, "file", &src, NULL, NULL, err));
  close(fd);
  cr_assert_eq(differences("file", SIZE), 0);
}

Test(integrity, sha256_signs_every_part) {
  start("op=UploadPart,nth=2,action=corrupt:1000", HIPOBJ_INTEGRITY_SHA256);
  cr_assert_neq(put("mp", SIZE, 0), HIPOBJ_OK);
  refused_by("mp", "XAmzContentSHA256Mismatch", 0);
}

Test(integrity, auto_signs_a_resumable_upload) {
  /* Parts of an upload kept for resuming may later come from the
   * step-by-step calls, which sign them: no checksum algorithm for it. */
  start("op=UploadPart,nth=2,action=corrupt:1000", HIPOBJ_INTEGRITY_AUTO);
  cr_assert_neq(put("kept", SIZE, 1), HIPOBJ_OK);
  refused_by("kept", "XAmzContentSHA256Mismatch", 1);
}

Test(integrity, auto_signs_a_first_single_put) {
  /* Nothing says yet whether the server checks CRC32C: signed (and the
   * server checks the SHA-256 first). */
  start("op=PutObject,nth=1,action=corrupt:10", HIPOBJ_INTEGRITY_AUTO);
  cr_assert_neq(put("small", 4096, 0), HIPOBJ_OK);
  refused_by("small", "XAmzContentSHA256Mismatch", 0);
}

Test(integrity, auto_single_puts_go_unsigned_once_crc32c_was_checked) {
  /* The first PUT's answer echoes its CRC32C: the second is sent unsigned
   * with its CRC32C, which catches the damage. */
  start("op=PutObject,nth=2,action=corrupt:10", HIPOBJ_INTEGRITY_AUTO);
  OK(put("first", 4096, 0));
  cr_assert_neq(put("second", 4096, 0), HIPOBJ_OK);
  refused_by("second", "BadDigest", 0);
}

Test(integrity, auto_single_puts_after_a_confirmed_multipart_upload) {
  start("op=PutObject,nth=1,action=corrupt:10", HIPOBJ_INTEGRITY_AUTO);
  OK(put("mp", SIZE, 0)); /* CreateMultipartUpload confirmed CRC32C */
  cr_assert_neq(put("small", 4096, 0), HIPOBJ_OK);
  refused_by("small", "BadDigest", 0);
}

Test(integrity, none_stores_what_arrives) {
  start("op=UploadPart,nth=2,action=corrupt:1000", HIPOBJ_INTEGRITY_NONE);
  OK(put("mp", SIZE, 0));
  cr_assert_eq(differences("mp", SIZE), 1, "the damaged byte is stored");
}
