/* test_memstore.c - hipobj-server --storage memory, the server compare.sh
 * measures clients against: through the public library and real libcurl,
 * PUT, GET, multipart uploads and listings return exactly the bytes
 * stored; ETags are the documented CRC-64/NVME form (the MD5 when
 * Content-MD5 was sent); metadata and small objects' bytes kept in memory
 * follow every overwrite;
 * signatures and payload hashes are still checked;
 * the byte cap is enforced with 507 InsufficientStorage and freed space is
 * seen again; a root that is not in RAM is refused. Needs a tmpfs at
 * /dev/shm (skipped without one). */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define TMPFS_MAGIC_ 0x01021994

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(memstore, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

/* A memory-mode server with its root in /dev/shm (where its files are
 * looked at and removed by srv_cleanup), cap as given (NULL: default),
 * connection memory as given (NULL: default), and a client with 5 MiB
 * parts. */
static void start_with(const char *cap, const char *conn_memory,
                       const char *complete_threads, const char *const *more) {
  struct statfs f;
  if (statfs("/dev/shm", &f) != 0 || f.f_type != TMPFS_MAGIC_)
    cr_skip_test("no tmpfs at /dev/shm: the memory mode needs one");
  memset(&srv, 0, sizeof srv);
  snprintf(srv.base, sizeof srv.base, "/dev/shm/hipobj-memtest-XXXXXX");
  cr_assert_not_null(mkdtemp(srv.base), "mkdtemp: %s", strerror(errno));
  snprintf(srv.root, sizeof srv.root, "%s/root", srv.base);
  const char *extra[16] = {"--storage", "memory"};
  int n = 2;
  if (cap) {
    extra[n++] = "--memory-cap";
    extra[n++] = cap;
  }
  if (conn_memory) {
    extra[n++] = "--conn-memory";
    extra[n++] = conn_memory;
  }
  if (complete_threads) {
    extra[n++] = "--complete-threads";
    extra[n++] = complete_threads;
  }
  for (size_t i = 0; more && more[i] && n < 15; i++)
    extra[n++] = more[i];
  extra[n] = NULL;
  srv_start(&srv, srv.root, extra);
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  client_config(&cfg, srv.url, NULL, NULL, 1, 0);
  cfg.part_size = 5u << 20;
  cfg.concurrency = 3;
  cr_assert_eq(hipobj_client_create(&cfg, &cli, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

static void start(const char *cap) {
  start_with(cap, NULL, NULL, NULL);
}

/* GETs key whole into fresh memory and asserts it is want's n bytes. */
static void get_equals(const char *key, const char *want, size_t n) {
  char *buf = malloc(n + 1);
  cr_assert_not_null(buf);
  memset(buf, 0x5a, n + 1);
  struct hipobj_mem dst = hipobj_mem_host(buf, n + 1);
  struct hipobj_xfer_result r = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, NULL, &r, err));
  cr_assert_eq(r.bytes, n, "%s: %" PRIu64 " bytes, not %zu", key, r.bytes, n);
  cr_assert_eq(memcmp(buf, want, n), 0, "%s: other bytes came back", key);
  free(buf);
}

/* The memory mode's ETag of n bytes: CRC-64/NVME and size in hex. */
static void crc_etag(const void *data, size_t n, const char *suffix,
                     char out[64]) {
  snprintf(out, 64, "\"%016" PRIx64 "%016" PRIx64 "%s\"",
           ref_crc64nvme(0, data, n), (uint64_t)n, suffix);
}

Test(memstore, put_get_multipart_list_exact) {
  start(NULL);
  static const size_t sizes[] = {0, 1, 4096, (1u << 20) + 7};
  char key[32], etag[64];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    snprintf(key, sizeof key, "single/%zu", i);
    char *data = put_pattern(cli, key, sizes[i], (unsigned)i + 1);
    get_equals(key, data, sizes[i]);
    struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
    OK(hipobj_s3_head(cli, T_BUCKET, key, &info, err));
    crc_etag(data, sizes[i], "-1", etag);
    cr_assert_str_eq(info.etag, etag);
    cr_assert_eq(info.size, sizes[i]);
    free(data);
  }
  /* Three parts of 5 MiB, 5 MiB and a short one, in parallel. */
  size_t big = (10u << 20) + 12345;
  char *data = put_pattern(cli, "multi", big, 99);
  get_equals("multi", data, big);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "multi", &info, err));
  cr_assert_eq(info.size, big);
  size_t el = strlen(info.etag);
  cr_assert(el > 4 && !strcmp(info.etag + el - 3, "-3\""), "ETag %s",
            info.etag);
  /* A range inside the second part and across the first two. */
  char part[4096];
  struct hipobj_mem dst = hipobj_mem_host(part, sizeof part);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.offset = (5u << 20) - 100;
  go.length = sizeof part;
  OK(hipobj_s3_get(cli, T_BUCKET, "multi", &dst, &go, NULL, err));
  cr_assert_eq(memcmp(part, data + go.offset, sizeof part), 0);
  free(data);

  struct hipobj_list_page *page;
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  OK(hipobj_s3_list(cli, T_BUCKET, &lo, &page, err));
  cr_assert_eq(hipobj_list_page_count(page), 5);
  cr_assert_str_eq(hipobj_list_page_key(page, 0), "multi");
  cr_assert_eq(hipobj_list_page_size(page, 0), big);
  cr_assert_str_eq(hipobj_list_page_etag(page, 0), info.etag);
  cr_assert_str_eq(hipobj_list_page_key(page, 4), "single/3");
  cr_assert_eq(hipobj_list_page_size(page, 4), sizes[3]);
  hipobj_list_page_free(page);

  OK(hipobj_s3_delete(cli, T_BUCKET, "multi", err));
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "multi", &info, err),
               HIPOBJ_E_NOT_FOUND);
}

Test(memstore, content_md5_and_signatures_still_checked) {
  start("64MiB");
  static const char body[] = "bytes with a Content-MD5";
  size_t n = sizeof body - 1;
  /* Content-MD5 sent: checked, and the ETag is the MD5. */
  char md5[40], b64[32];
  md5_etag(body, n, md5);
  unsigned char bin[16];
  for (int i = 0; i < 16; i++) {
    unsigned v;
    sscanf(md5 + 1 + 2 * i, "%2x", &v);
    bin[i] = (unsigned char)v;
  }
  static const char tb[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  int o = 0;
  for (int i = 0; i < 16; i += 3) {
    unsigned v = (unsigned)bin[i] << 16 |
                 (i + 1 < 16 ? (unsigned)bin[i + 1] << 8 : 0) |
                 (i + 2 < 16 ? bin[i + 2] : 0);
    b64[o++] = tb[v >> 18 & 63];
    b64[o++] = tb[v >> 12 & 63];
    b64[o++] = i + 1 < 16 ? tb[v >> 6 & 63] : '=';
    b64[o++] = i + 2 < 16 ? tb[v & 63] : '=';
  }
  b64[o] = '\0';
  char hdr[64];
  snprintf(hdr, sizeof hdr, "Content-MD5: %s", b64);
  const char *hdrs[] = {hdr, NULL};
  struct sreq q = {.method = "PUT",
                   .target = "/" T_BUCKET "/md5",
                   .hdrs = hdrs,
                   .body = body,
                   .len = n};
  struct http_resp r;
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  cr_assert_eq(r.status, 200, "%d %s", r.status, r.body ? r.body : "");
  char etag[80];
  cr_assert_str_eq(resp_hdr(&r, "ETag", etag, sizeof etag), md5);
  resp_free(&r);
  get_equals("md5", body, n);
  /* A wrong Content-MD5: BadDigest, nothing stored. */
  const char *bad[] = {"Content-MD5: AAAAAAAAAAAAAAAAAAAAAA==", NULL};
  q.hdrs = bad;
  q.target = "/" T_BUCKET "/md5-bad";
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  expect_s3_error(&r, 400, "BadDigest", NULL);
  /* A signed payload hash that is not the body's. */
  struct sreq h = {.method = "PUT",
                   .target = "/" T_BUCKET "/sha",
                   .body = body,
                   .len = n,
                   .payload_hash = "0000000000000000000000000000000000000000"
                                   "000000000000000000000000"};
  cr_assert_eq(http_send(srv.url, &h, &r), 0);
  expect_s3_error(&r, 400, "XAmzContentSHA256Mismatch", NULL);
  /* A wrong secret. */
  struct sreq w = {
      .method = "GET", .target = "/" T_BUCKET "/md5", .sk = "not-the-secret"};
  cr_assert_eq(http_send(srv.url, &w, &r), 0);
  expect_s3_error(&r, 403, "SignatureDoesNotMatch", NULL);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "md5-bad", &info, err),
               HIPOBJ_E_NOT_FOUND);
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "sha", &info, err),
               HIPOBJ_E_NOT_FOUND);
}

/* An UNSIGNED-PAYLOAD PutObject of n bytes of pattern seed; the answer. */
static void raw_put(const char *key, size_t n, unsigned seed,
                    struct http_resp *r) {
  char *data = malloc(n);
  cr_assert_not_null(data);
  fill_pattern(data, n, seed);
  char target[64];
  snprintf(target, sizeof target, "/" T_BUCKET "/%s", key);
  struct sreq q = {.method = "PUT",
                   .target = target,
                   .body = data,
                   .len = n,
                   .payload_hash = "UNSIGNED-PAYLOAD"};
  cr_assert_eq(http_send(srv.url, &q, r), 0);
  free(data);
}

/* The cap counts what is in RAM: a multipart upload holds its parts and,
 * at Complete, the object assembled from them (until the parts go). */
Test(memstore, cap_enforced_and_freed) {
  start("14MiB");
  struct http_resp r;
  raw_put("a", 5u << 20, 1, &r);
  cr_assert_eq(r.status, 200);
  resp_free(&r);
  raw_put("b", 5u << 20, 2, &r);
  cr_assert_eq(r.status, 200);
  resp_free(&r);
  /* 15 MiB would not fit in 14: refused, and not stored. */
  raw_put("c", 5u << 20, 3, &r);
  expect_s3_error(&r, 507, "InsufficientStorage", "--memory-cap");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "c", &info, err),
               HIPOBJ_E_NOT_FOUND);
  /* Through the library (a multipart upload) the same refusal. */
  char *big = malloc(6u << 20);
  cr_assert_not_null(big);
  fill_pattern(big, 6u << 20, 4);
  struct hipobj_mem src = hipobj_mem_host(big, 6u << 20);
  cr_assert_neq(hipobj_s3_put(cli, T_BUCKET, "d", &src, NULL, NULL, err),
                HIPOBJ_OK);
  cr_assert_eq(hipobj_error_http_status(err), 507, "%s",
               hipobj_error_message(err));
  char *b = malloc(5u << 20);
  cr_assert_not_null(b);
  fill_pattern(b, 5u << 20, 2);
  get_equals("b", b, 5u << 20);
  free(b);
  /* Deleting frees the space: the same upload (6 MiB of parts and 6 of
   * assembled object) fits now, byte-exact. */
  OK(hipobj_s3_delete(cli, T_BUCKET, "a", err));
  OK(hipobj_s3_delete(cli, T_BUCKET, "b", err));
  OK(hipobj_s3_put(cli, T_BUCKET, "d", &src, NULL, NULL, err));
  get_equals("d", big, 6u << 20);
  free(big);
}

/* Runs the server binary with args (NULL-terminated) and returns its exit
 * status, its stderr in out. */
static int run_server(const char *const *args, char *out, size_t outsz) {
  char path[] = "/tmp/hipobj-memtest-err-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    dup2(fd, 2);
    dup2(fd, 1);
    const char *argv[16] = {
        HIPOBJ_SERVER_BIN, "--listen", "127.0.0.1:0", "--access-key", T_AK,
        "--secret-key",    T_SK};
    int argc = 7;
    for (int i = 0; args[i] && argc < 15; i++)
      argv[argc++] = args[i];
    argv[argc] = NULL;
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  ssize_t k = pread(fd, out, outsz - 1, 0);
  out[k > 0 ? k : 0] = '\0';
  close(fd);
  unlink(path);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Parts get the "-1" of a non-MD5 ETag as objects do (s3cmd compares a
 * dash-less part ETag with the part's MD5 and gives up the upload), and
 * Complete still forms its ETag from the parts' 32 hex digits. */
Test(memstore, part_etags_are_marked_as_no_md5) {
  start(NULL);
  static const size_t sizes[] = {(5u << 20) + 3, 100};
  char *data = malloc(sizes[0] + sizes[1]);
  cr_assert_not_null(data);
  fill_pattern(data, sizes[0] + sizes[1], 11);
  struct hipobj_mpu *mpu = NULL;
  OK(hipobj_mpu_create(cli, T_BUCKET, "parts", NULL, &mpu, err));
  unsigned char digests[32];
  char want[64];
  for (unsigned i = 0; i < 2; i++) {
    const char *part = data + (i ? sizes[0] : 0);
    struct hipobj_mem src = hipobj_mem_host((void *)part, sizes[i]);
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    OK(hipobj_mpu_upload_part(mpu, i + 1, &src, &res, err));
    crc_etag(part, sizes[i], "-1", want);
    cr_assert_str_eq(res.etag, want, "part %u", i + 1);
    for (int k = 0; k < 16; k++) {
      unsigned v = 0;
      sscanf(want + 1 + 2 * k, "%2x", &v);
      digests[16 * i + k] = (unsigned char)v;
    }
  }
  OK(hipobj_mpu_list_parts(mpu, err));
  cr_assert_eq(hipobj_mpu_part_count(mpu), 2);
  for (size_t i = 0; i < 2; i++) {
    const char *etag = NULL;
    OK(hipobj_mpu_part(mpu, i, NULL, NULL, &etag));
    crc_etag(data + (i ? sizes[0] : 0), sizes[i], "-1", want);
    cr_assert_str_eq(etag, want, "listed part %zu", i + 1);
  }
  struct hipobj_xfer_result done = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_mpu_complete(mpu, &done, err));
  hipobj_mpu_free(mpu);
  md5_etag(digests, sizeof digests, want); /* "<md5>" */
  snprintf(want + strlen(want) - 1, 8, "-2\"");
  cr_assert_str_eq(done.etag, want);
  get_equals("parts", data, sizes[0] + sizes[1]);
  free(data);
}

/* PUTs n bytes of seed's pattern to key with content type ctype, as one
 * request or (mpu) a multipart upload of one part; HEADs it and asserts
 * what a reader must see: the new ETag, size and type, then the bytes. */
static void put_and_check(const char *key, size_t n, unsigned seed,
                          const char *ctype, int mpu) {
  char *data = malloc(n);
  cr_assert_not_null(data);
  fill_pattern(data, n, seed);
  struct hipobj_mem src = hipobj_mem_host(data, n);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type = ctype;
  po.multipart_threshold = mpu ? 1 : 0;
  OK(hipobj_s3_put(cli, T_BUCKET, key, &src, &po, NULL, err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, key, &info, err));
  cr_assert_eq(info.size, n);
  cr_assert_str_eq(info.content_type, ctype, "seed %u", seed);
  if (mpu) {
    size_t el = strlen(info.etag);
    cr_assert(el > 4 && !strcmp(info.etag + el - 3, "-1\""), "ETag %s",
              info.etag);
  } else {
    char etag[64];
    crc_etag(data, n, "-1", etag);
    cr_assert_str_eq(info.etag, etag, "seed %u", seed);
  }
  get_equals(key, data, n);
  free(data);
}

/* The memory mode keeps each object's metadata in memory beside the data
 * file it describes (metacache.c): every overwrite of a key with an
 * object of the same size, by PutObject, by a one-part upload (whose part
 * becomes the object by a link, the same inode) and after a delete, is
 * seen at once by HEAD and GET, each answered right after the last. */
Test(memstore, metadata_follows_every_overwrite) {
  start(NULL);
  put_and_check("k", 4096, 1, "text/one", 0);
  put_and_check("k", 4096, 2, "text/two", 0);
  put_and_check("k", 4096, 3, "text/three", 1);
  put_and_check("k", 4096, 3, "text/four", 1);
  put_and_check("k", 4096, 4, "text/five", 0);
  OK(hipobj_s3_delete(cli, T_BUCKET, "k", err));
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "k", &info, err),
               HIPOBJ_E_NOT_FOUND);
  put_and_check("k", 4096, 5, "text/six", 0);
}

/* A GET of key straight over HTTP (no client-side checks): status, and
 * the body when want is not NULL. */
static void raw_get_equals(const char *key, const char *range, const char *want,
                           size_t n) {
  char target[128], rh[64];
  snprintf(target, sizeof target, "/" T_BUCKET "/%s", key);
  snprintf(rh, sizeof rh, "Range: %s", range ? range : "");
  const char *hdrs[] = {rh, NULL};
  struct sreq q = {.method = "GET", .target = target};
  if (range)
    q.hdrs = hdrs;
  struct http_resp r;
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  cr_assert_eq(r.status, range ? 206 : 200, "%s: %d", key, r.status);
  cr_assert_eq(r.len, n, "%s: %zu bytes, not %zu", key, r.len, n);
  cr_assert_eq(memcmp(r.body, want, n), 0, "%s: other bytes came back", key);
  resp_free(&r);
}

/* The memory mode keeps small objects' bytes (metacache.c): served again
 * from there they are still exactly the stored bytes, whole and in
 * ranges, of the version last stored, up to and past the size limit;
 * bytes changed behind the server's back (same file, new change time) are
 * what the next GET sends; a deleted object is gone. */
Test(memstore, kept_small_bodies_are_the_stored_bytes) {
  start(NULL);
  static const size_t sizes[] = {0, 1, 4096, 64 * 1024, 64 * 1024 + 1};
  char key[32];
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    snprintf(key, sizeof key, "kept%zu", i);
    for (unsigned version = 1; version <= 2; version++) {
      char *data = put_pattern(cli, key, n, (unsigned)(10 * i + version));
      get_equals(key, data, n); /* reads it, and keeps it when small */
      get_equals(key, data, n); /* from what was kept */
      raw_get_equals(key, NULL, data, n);
      if (n > 2)
        raw_get_equals(key, "bytes=1-2", data + 1, 2);
      free(data);
    }
  }
  char *data = put_pattern(cli, "changed", 4096, 7);
  get_equals("changed", data, 4096);
  raw_get_equals("changed", NULL, data, 4096);
  /* The change time of the commit and of the change must differ: tmpfs
   * takes it from a clock that moves once a tick. */
  usleep(50 * 1000);
  flip_stored(&srv, "changed", 7);
  data[7] ^= 0x20;
  raw_get_equals("changed", NULL, data, 4096);
  OK(hipobj_s3_delete(cli, T_BUCKET, "changed", err));
  char buf[16];
  struct hipobj_mem dst = hipobj_mem_host(buf, sizeof buf);
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "changed", &dst, NULL, NULL, err),
               HIPOBJ_E_NOT_FOUND);
  free(data);
}

/* A small libmicrohttpd pool per connection (what small requests want)
 * still carries bodies of any size, read in more pieces, whole. */
Test(memstore, small_connection_memory_moves_every_byte) {
  start_with(NULL, "16KiB", NULL, NULL);
  char *one = put_pattern(cli, "one", (1u << 20) + 7, 5);
  get_equals("one", one, (1u << 20) + 7);
  size_t big = (10u << 20) + 3;
  char *multi = put_pattern(cli, "multi", big, 6);
  get_equals("multi", multi, big);
  free(one);
  free(multi);
}

/* Complete copied by 4 threads (--complete-threads), parts of sizes that
 * put their boundaries inside pages, so two threads write one page: the
 * object is every part's bytes in order, and a second upload over the key
 * replaces it whole. */
Test(memstore, parallel_complete_puts_parts_in_order) {
  start_with(NULL, NULL, "4", NULL);
  static const size_t sizes[] = {(5u << 20) + 1, (5u << 20) + 4095,
                                 (6u << 20) + 3, 5u << 20, 777};
  const size_t np = sizeof sizes / sizeof *sizes;
  for (unsigned round = 0; round < 2; round++) {
    size_t total = 0;
    for (size_t i = 0; i < np; i++)
      total += sizes[i];
    char *data = malloc(total);
    cr_assert_not_null(data);
    for (size_t i = 0; i < total; i++)
      data[i] = (char)(i * 131 + i / 4096 + round * 7);
    struct hipobj_mpu *mpu = NULL;
    OK(hipobj_mpu_create(cli, T_BUCKET, "assembled", NULL, &mpu, err));
    /* Out of order, as parallel uploads arrive. */
    for (size_t k = 0; k < np; k++) {
      size_t i = (k * 3) % np, off = 0;
      for (size_t j = 0; j < i; j++)
        off += sizes[j];
      struct hipobj_mem src = hipobj_mem_host(data + off, sizes[i]);
      OK(hipobj_mpu_upload_part(mpu, (unsigned)i + 1, &src, NULL, err));
    }
    OK(hipobj_mpu_complete(mpu, NULL, err));
    hipobj_mpu_free(mpu);
    get_equals("assembled", data, total);
    free(data);
  }
}

/* --busy-poll: the daemon is run by a thread of the server's that polls
 * after each answer. Serial small requests move every byte; the server
 * stops cleanly (exit 0) and says it found work while polling: with 10 ms
 * windows nearly every request of a serial client arrives within one (none
 * would if polling never began). One thread: the client's connections
 * (bucket calls and transfers may use two) all meet the polling one. The
 * whole server suite also runs in this mode, with several threads
 * (tests/server/meson.build, server-busy-poll). */
Test(memstore, busy_poll_serves_and_polls) {
  const char *more[] = {"--busy-poll", "10000", "--threads", "1", NULL};
  start_with(NULL, NULL, NULL, more);
  enum { N = 20 };
  for (unsigned i = 0; i < N; i++) {
    char key[16];
    snprintf(key, sizeof key, "s%u", i);
    char *data = put_pattern(cli, key, 1000 + 37 * i, i + 1);
    get_equals(key, data, 1000 + 37 * i);
    free(data);
  }
  hipobj_client_free(cli);
  cli = NULL;

  pid_t pid = srv.pid;
  cr_assert_eq(kill(pid, SIGTERM), 0);
  int st = 0;
  cr_assert(srv_wait(&srv, 20, &st), "the server did not stop in 20 s");
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server ended with %#x", st);
  char path[320], line[512];
  snprintf(path, sizeof path, "%s/server.log", srv.base);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  unsigned long long windows = 0, caught = 0;
  unsigned us = 0;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "busy polling: ");
    if (p && sscanf(p,
                    "busy polling: %llu windows of up to %u us, work came "
                    "%llu times",
                    &windows, &us, &caught) == 3)
      found = 1;
  }
  fclose(f);
  cr_assert(found, "no busy polling line in %s", path);
  cr_assert_eq(us, 10000u);
  cr_assert_geq(windows, 1);
  cr_assert_geq(caught, N, "work came while polling only %llu times", caught);
}

/* Reads a counter of /proc/PID/io ("syscr: N"). */
static unsigned long long proc_io(pid_t pid, const char *name) {
  char path[64], line[128];
  snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  unsigned long long v = 0;
  int found = 0;
  size_t n = strlen(name);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, name, n) && line[n] == ':')
      found = sscanf(line + n + 1, "%llu", &v) == 1;
  fclose(f);
  cr_assert(found, "no %s in %s", name, path);
  return v;
}

/* --busy-poll with two threads: the acceptor gives the client's
 * connections (parts in flight) to both, not all to the one that polls;
 * and big bodies go out by sendfile(), not 4 KiB reads (libmicrohttpd uses
 * it on threads it did not start only when told SIGPIPE is handled). The
 * server's read system calls (/proc/PID/io syscr; sendfile counts as one)
 * for a 32 MiB GET: about 260 with sendfile, 8192 without. */
Test(memstore, busy_poll_spreads_connections_and_sends_files) {
  const char *more[] = {"--busy-poll", "100", "--threads", "2", NULL};
  start_with(NULL, NULL, NULL, more);
  size_t n = 32u << 20;
  char *data = put_pattern(cli, "big", n, 9);
  unsigned long long before = proc_io(srv.pid, "syscr");
  get_equals("big", data, n);
  unsigned long long reads = proc_io(srv.pid, "syscr") - before;
  free(data);
  cr_assert_lt(reads, 2048, "%llu read calls for a 32 MiB GET", reads);
  hipobj_client_free(cli);
  cli = NULL;
  srv_signal(&srv, SIGTERM);

  char path[320], line[512];
  snprintf(path, sizeof path, "%s/server.log", srv.base);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  int to[2] = {0, 0};
  while (fgets(line, sizeof line, f)) {
    unsigned t, of;
    const char *p = strstr(line, "connection handed to thread ");
    if (p && sscanf(p, "connection handed to thread %u of %u", &t, &of) == 2 &&
        t < 2)
      to[t]++;
  }
  fclose(f);
  cr_assert(to[0] > 0 && to[1] > 0, "connections to thread 0: %d, 1: %d", to[0],
            to[1]);
}

Test(memstore, refuses_a_root_not_in_memory) {
  char dir[] = "/tmp/hipobj-memtest-root-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  struct statfs f;
  cr_assert_eq(statfs(dir, &f), 0);
  char out[1024];
  if (f.f_type != TMPFS_MAGIC_) {
    const char *a[] = {"--storage", "memory", "--root", dir, NULL};
    cr_assert_eq(run_server(a, out, sizeof out), 2, "%s", out);
    cr_assert_not_null(strstr(out, "not on tmpfs"), "%s", out);
  }
  const char *b[] = {"--root", dir, "--memory-cap", "1GiB", NULL};
  cr_assert_eq(run_server(b, out, sizeof out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "--memory-cap needs --storage memory"), "%s",
                     out);
  const char *d[] = {"--root", dir, "--conn-memory", "1KiB", NULL};
  cr_assert_eq(run_server(d, out, sizeof out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "expected a size from 4KiB to 16MiB"), "%s",
                     out);
  const char *e[] = {"--root", dir, "--complete-threads", "17", NULL};
  cr_assert_eq(run_server(e, out, sizeof out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "--complete-threads 17: expected 1..16"), "%s",
                     out);
  const char *g[] = {"--root", dir, "--busy-poll", "10001", NULL};
  cr_assert_eq(run_server(g, out, sizeof out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "--busy-poll 10001: expected microseconds"),
                     "%s", out);
  const char *c[] = {"--storage", "ram", NULL};
  cr_assert_eq(run_server(c, out, sizeof out), 2, "%s", out);
  cr_assert_not_null(strstr(out, "expected disk or memory"), "%s", out);
  /* Every refusal came before the server made anything in the root. */
  cr_assert_eq(rmdir(dir), 0, "%s: %s", dir, strerror(errno));
}
