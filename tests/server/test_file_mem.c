/* test_file_mem.c - file memory (HIPOBJ_MEM_FILE, hipobj_mem_file) against a
 * real hipobj-server: GET into a file at an offset, odd sizes and parallel
 * ranged parts (concurrency 1..8, a last part of one byte), concurrent
 * GETs into one file and into files on one write stripe, PUT and
 * multipart PUT from a file range, empty objects, clear errors for a
 * read-only GET target, a PUT range past the end of the file, a bad
 * descriptor and a pipe, a write that fails for real (RLIMIT_FSIZE: EFBIG)
 * never reported as success, and the staging pool staying within its bound
 * whatever the object size (HIPOBJ_FILE_MAP=0: test_file_map.c has the
 * mapped windows of tmpfs files). Links the internal library to read the pool's
 * statistics. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "src/client_int.h"
#include "src/staging.h"

#define PS (64u * 1024)            /* GET part size */
#define CHUNK (256u * 1024)        /* staging chunk */
#define POOL (4u * CHUNK)          /* staging pool: 4 chunks */
#define MP_PART (5u * 1024 * 1024) /* multipart part size (S3's minimum) */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static char dir[] = "/tmp/hipobj-filemem-XXXXXX";

static void init(void) {
  /* The staged path (chunks, file threads) whatever /tmp is and however
   * many CPUs there are: test_file_map.c covers the mapped one. */
  setenv("HIPOBJ_FILE_MAP", "0", 1);
  hipobj_global_init();
  hipobj_error_create(&err);
  cr_assert_not_null(mkdtemp(dir));
  srv_start(&srv, NULL, NULL);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = srv.url;
  cfg.region = T_REGION;
  cfg.access_key_id = T_AK;
  cfg.secret_access_key = T_SK;
  cfg.max_attempts = 2;
  cfg.retry_base_ms = 5;
  cfg.part_size = MP_PART;
  cfg.stall_timeout_ms = 10000;
  cfg.staging_chunk_bytes = CHUNK;
  cfg.staging_pool_bytes = POOL;
  cfg.log_level = HIPOBJ_LOG_NONE;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(filemem, .init = init, .fini = fini, .timeout = 180);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* A temp file of the suite, open with flags. */
static int tmp_file(const char *name, int flags) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0600);
  cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
  return fd;
}

/* The object's bytes, read back into host memory. */
static char *get_all(const char *key, size_t n) {
  char *back = malloc(n + 1);
  struct hipobj_mem dst = hipobj_mem_host(back, n + 1);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, &res, err));
  cr_assert_eq(res.bytes, n);
  return back;
}

static void pool_bounded(void) {
  struct hstage_pool_stats ps;
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_FILE, &ps);
  cr_assert_eq(ps.max_chunks, POOL / CHUNK);
  cr_assert_leq(ps.allocated, ps.max_chunks, "allocated %u of %u", ps.allocated,
                ps.max_chunks);
  cr_assert_leq(ps.peak, ps.max_chunks);
  cr_assert_eq(ps.in_use, 0, "chunks still held after the transfers");
}

Test(filemem, get_into_file_at_offset_parallel_odd_sizes) {
  /* Last parts of one byte, a part size that is not a chunk multiple, an
   * object smaller than one part. */
  const size_t sizes[] = {3 * PS + 1, 2 * PS, PS + 7, 5 * PS - 3, 1, 100000};
  const unsigned concs[] = {1, 2, 3, 8};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "odd-%zu", i);
    char *data = put_pattern(cli, key, sizes[i], (unsigned)i + 11);
    for (size_t j = 0; j < sizeof concs / sizeof concs[0]; j++) {
      int fd = tmp_file(key, O_RDWR | O_TRUNC);
      const uint64_t at = 4096 * j + 333; /* the object lands here */
      struct hipobj_mem dst = hipobj_mem_file(fd, at, sizes[i] + 100);
      struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
      o.part_size = PS;
      o.concurrency = concs[j];
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, &o, &res, err));
      cr_assert_eq(res.bytes, sizes[i], "size %zu conc %u", sizes[i], concs[j]);
      cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
      struct stat st;
      cr_assert_eq(fstat(fd, &st), 0);
      cr_assert_eq((uint64_t)st.st_size, at + sizes[i],
                   "the file ends after the object");
      file_equals(fd, at, data, sizes[i]);
      /* The descriptor's own position was never used. */
      cr_assert_eq(lseek(fd, 0, SEEK_CUR), 0);
      close(fd);
    }
    free(data);
  }
  pool_bounded();
}

/* Parallel GETs whose writers take turns: two objects into one file at
 * different offsets, and a third into another file whose descriptor falls
 * on the same write stripe (src/gpu_file.c), all running at once. */
Test(filemem, concurrent_gets_into_one_file_and_a_shared_stripe) {
  const size_t n = 9 * PS + 5;
  char *a = put_pattern(cli, "turn-a", n, 71),
       *b = put_pattern(cli, "turn-b", n, 72);
  char *c = put_pattern(cli, "turn-c", n, 73);
  int fd = tmp_file("turn-ab", O_RDWR | O_TRUNC);
  int other = tmp_file("turn-c", O_RDWR | O_TRUNC);
  int fd2 = fcntl(other, F_DUPFD_CLOEXEC, fd + 64);
  cr_assert_geq(fd2, 0, "F_DUPFD: %s", strerror(errno));
  close(other);
  cr_assert_eq(fd2 % 64, fd % 64, "descriptors %d and %d share no stripe", fd,
               fd2);
  struct hipobj_mem dst[3] = {hipobj_mem_file(fd, 0, n),
                              hipobj_mem_file(fd, n + 4096, n),
                              hipobj_mem_file(fd2, 0, n)};
  const char *keys[3] = {"turn-a", "turn-b", "turn-c"};
  struct hipobj_xfer *x[3];
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 4;
  for (int i = 0; i < 3; i++)
    OK(hipobj_s3_get_start(cli, T_BUCKET, keys[i], &dst[i], &o, NULL, &x[i],
                           err));
  for (int i = 0; i < 3; i++) {
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_xfer_wait(x[i], &res, err));
    cr_assert_eq(res.bytes, n, "%s", keys[i]);
    hipobj_xfer_free(x[i]);
  }
  file_equals(fd, 0, a, n);
  file_equals(fd, n + 4096, b, n);
  file_equals(fd2, 0, c, n);
  close(fd);
  close(fd2);
  free(a);
  free(b);
  free(c);
  pool_bounded();
}

Test(filemem, put_single_and_multipart_from_file_range) {
  const size_t sizes[] = {1, 777777, 2 * MP_PART + 1, 3 * MP_PART};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    const uint64_t at = 12345; /* the object starts here in the file */
    char *data = malloc(n);
    fill_pattern(data, n, (unsigned)i + 3);
    int fd = tmp_file("src", O_RDWR | O_TRUNC);
    cr_assert_eq(pwrite(fd, "junkjunk", 8, 0), 8);
    cr_assert_eq(pwrite(fd, data, n, (off_t)at), (ssize_t)n);
    cr_assert_eq(pwrite(fd, "tail", 4, (off_t)(at + n)), 4);
    close(fd);
    fd = tmp_file("src", O_RDONLY); /* read-only is enough for a PUT */
    struct hipobj_mem src = hipobj_mem_file(fd, at, n);
    for (unsigned conc = 1; conc <= 8; conc *= 8) {
      struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
      po.concurrency = conc;
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      char key[32];
      snprintf(key, sizeof key, "put-%zu-%u", i, conc);
      OK(hipobj_s3_put(cli, T_BUCKET, key, &src, &po, &res, err));
      cr_assert_eq(res.path, HIPOBJ_PATH_HTTP_STAGED);
      cr_assert_eq(res.parts, n > MP_PART ? (n + MP_PART - 1) / MP_PART : 0,
                   "size %zu: %u parts", n, res.parts);
      char *back = get_all(key, n);
      cr_assert_eq(memcmp(back, data, n), 0, "size %zu conc %u", n, conc);
      free(back);
    }
    close(fd);
    free(data);
  }
  pool_bounded();
}

Test(filemem, unsigned_payload_and_upload_part_from_file) {
  size_t n = MP_PART + 4097;
  char *data = malloc(n);
  fill_pattern(data, n, 99);
  int fd = tmp_file("mpu", O_RDWR | O_TRUNC);
  cr_assert_eq(pwrite(fd, data, n, 0), (ssize_t)n);
  struct hipobj_mpu *mpu = NULL;
  OK(hipobj_mpu_create(cli, T_BUCKET, "steps", NULL, &mpu, err));
  struct hipobj_mem p1 = hipobj_mem_file(fd, 0, MP_PART);
  struct hipobj_mem p2 = hipobj_mem_file(fd, MP_PART, n - MP_PART);
  OK(hipobj_mpu_upload_part(mpu, 1, &p1, NULL, err));
  OK(hipobj_mpu_upload_part(mpu, 2, &p2, NULL, err));
  OK(hipobj_mpu_complete(mpu, NULL, err));
  hipobj_mpu_free(mpu);
  char *back = get_all("steps", n);
  cr_assert_eq(memcmp(back, data, n), 0);
  free(back);
  close(fd);
  free(data);
}

Test(filemem, empty_object_both_ways) {
  int fd = tmp_file("empty", O_RDWR | O_TRUNC);
  struct hipobj_mem src = hipobj_mem_file(fd, 0, 0);
  OK(hipobj_s3_put(cli, T_BUCKET, "empty", &src, NULL, NULL, err));
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, 16);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "empty", &dst, NULL, &res, err));
  cr_assert_eq(res.bytes, 0);
  struct stat st;
  cr_assert_eq(fstat(fd, &st), 0);
  cr_assert_eq(st.st_size, 0);
  close(fd);
}

Test(filemem, read_only_get_target_is_refused) {
  free(put_pattern(cli, "ro", 1000, 5));
  int fd = tmp_file("ro", O_RDONLY);
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, 1000);
  int st = hipobj_s3_get(cli, T_BUCKET, "ro", &dst, NULL, NULL, err);
  cr_assert_eq(st, HIPOBJ_E_INVALID_ARGUMENT, "%d: %s", st,
               hipobj_error_message(err));
  cr_assert_not_null(strstr(hipobj_error_message(err), "read-only"), "%s",
                     hipobj_error_message(err));
  close(fd);
}

Test(filemem, put_range_past_eof_is_refused) {
  int fd = tmp_file("short", O_RDWR | O_TRUNC);
  cr_assert_eq(pwrite(fd, "0123456789", 10, 0), 10);
  struct hipobj_mem src = hipobj_mem_file(fd, 4, 7); /* bytes 4..11 of 10 */
  int st = hipobj_s3_put(cli, T_BUCKET, "short", &src, NULL, NULL, err);
  cr_assert_eq(st, HIPOBJ_E_INVALID_ARGUMENT, "%s", hipobj_error_message(err));
  cr_assert_not_null(strstr(hipobj_error_message(err), "past the end"), "%s",
                     hipobj_error_message(err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "short", &info, err),
               HIPOBJ_E_NOT_FOUND, "nothing may be stored");
  close(fd);
}

Test(filemem, bad_descriptor_and_pipe_are_refused) {
  struct hipobj_mem bad = hipobj_mem_file(-1, 0, 10);
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "x", &bad, NULL, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  int p[2];
  cr_assert_eq(pipe(p), 0);
  struct hipobj_mem pm = hipobj_mem_file(p[1], 0, 10);
  free(put_pattern(cli, "p", 10, 1));
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "p", &pm, NULL, NULL, err),
               HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(hipobj_error_message(err), "pipe"), "%s",
                     hipobj_error_message(err));
  close(p[0]);
  close(p[1]);
}

/* A write that the kernel refuses (file size limit: EFBIG). Criterion runs
 * every test in a process of its own, so the limit ends with it; the server
 * was started before it. The GET must fail with the cause, never succeed. */
Test(filemem, failed_write_is_an_error_never_success) {
  free(put_pattern(cli, "big", 3 * PS + 5, 8));
  int fd = tmp_file("limited", O_RDWR | O_TRUNC);
  signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
  struct rlimit rl = {PS, PS};
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
  struct hipobj_mem dst = hipobj_mem_file(fd, 0, 3 * PS + 5);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 2;
  int st = hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, NULL, err);
  const char *m = hipobj_error_message(err);
  cr_assert_eq(st, HIPOBJ_E_IO, "status %d: %s", st, m);
  cr_assert_not_null(strstr(m, "file write failed: pwrite: File too large"),
                     "%s", m);
  close(fd);
  pool_bounded();
}

Test(filemem, pool_stays_bounded_for_large_transfers) {
  /* 32 MiB through a 1 MiB pool, eight parts in flight both ways. */
  size_t n = 32u << 20;
  char *data = malloc(n);
  fill_pattern(data, n, 42);
  int fd = tmp_file("large", O_RDWR | O_TRUNC);
  cr_assert_eq(pwrite(fd, data, n, 0), (ssize_t)n);
  struct hipobj_mem src = hipobj_mem_file(fd, 0, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.concurrency = 8;
  OK(hipobj_s3_put(cli, T_BUCKET, "large", &src, &po, NULL, err));
  int out = tmp_file("large.back", O_WRONLY | O_TRUNC);
  struct hipobj_mem dst = hipobj_mem_file(out, 0, n);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.concurrency = 8;
  go.part_size = 1u << 20;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "large", &dst, &go, &res, err));
  cr_assert_eq(res.bytes, n);
  close(out);
  out = tmp_file("large.back", O_RDONLY);
  file_equals(out, 0, data, n);
  close(out);
  close(fd);
  free(data);
  pool_bounded();
  struct hstage_pool_stats ps;
  hstage_pool_stats(cli->stage_pool, HIPOBJ_MEM_FILE, &ps);
  cr_assert_gt(ps.waits, 0, "eight parts should have waited for chunks");
}
