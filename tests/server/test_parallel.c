/* test_parallel.c - the parallel transfer engine and the asynchronous API
 * against hipobj-server: parallel ranged GETs of odd sizes at concurrency
 * 1..16 verified byte for byte, an overwrite between parts failing cleanly,
 * a failing part retried alone, cancellation of GETs and multipart PUTs
 * (the upload aborted on the server), and monotonic progress ending at the
 * total, reported one call at a time; small GETs and PUTs of blocking
 * calls run on the calling thread, bigger ones and asynchronous ones on
 * the HTTP workers. The client runs IO_THREADS HTTP workers (whatever the
 * CPU count), so parts really complete on several threads at once. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define PS (64u * 1024) /* GET part size in these tests */
#define IO_THREADS 4

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

TestSuite(parallel, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static void start(const char *spec) {
  const char *extra[] = {"--faults", spec, NULL};
  srv_start(&srv, NULL, spec ? extra : NULL);
  cli = mk_client_io(srv.url, NULL, NULL, 4, IO_THREADS);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

Test(parallel, odd_sizes_and_concurrency_byte_for_byte) {
  start(NULL);
  const size_t sizes[] = {3 * PS + 1, 2 * PS, PS + 7, 5 * PS - 3};
  const unsigned concs[] = {1, 2, 3, 8, 16};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char key[32];
    snprintf(key, sizeof key, "odd-%zu", i);
    char *data = put_pattern(cli, key, sizes[i], (unsigned)i + 1);
    for (size_t j = 0; j < sizeof concs / sizeof concs[0]; j++) {
      size_t cap = sizes[i] + 100; /* larger than the object */
      char *back = calloc(1, cap);
      struct hipobj_mem dst = hipobj_mem_host(back, cap);
      struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
      o.part_size = PS;
      o.concurrency = concs[j];
      struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
      OK(hipobj_s3_get(cli, T_BUCKET, key, &dst, &o, &res, err));
      cr_assert_eq(res.bytes, sizes[i], "size %zu conc %u", sizes[i], concs[j]);
      cr_assert_eq(res.object_size, sizes[i]);
      cr_assert_eq(memcmp(data, back, sizes[i]), 0, "size %zu conc %u",
                   sizes[i], concs[j]);
      unsigned want_parts =
          concs[j] > 1 ? (unsigned)((sizes[i] + PS - 1) / PS) : 0;
      cr_assert_eq(res.parts, want_parts, "size %zu conc %u: %u parts",
                   sizes[i], concs[j], res.parts);
      free(back);
    }
    free(data);
  }
}

Test(parallel, ranged_parallel_get_lands_at_offset_zero) {
  start(NULL);
  size_t n = 6 * PS + 11;
  char *data = put_pattern(cli, "ranged", n, 7);
  size_t off = PS / 2 + 3, len = 4 * PS + 5;
  char *back = calloc(1, len);
  struct hipobj_mem dst = hipobj_mem_host(back, len);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.has_range = 1;
  o.offset = off;
  o.length = len;
  o.part_size = PS;
  o.concurrency = 4;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "ranged", &dst, &o, &res, err));
  cr_assert_eq(res.bytes, len);
  cr_assert_eq(res.parts, 5);
  cr_assert_eq(memcmp(data + off, back, len), 0);
  free(back);
  free(data);
}

Test(parallel, too_small_buffer_and_empty_object) {
  start(NULL);
  char *data = put_pattern(cli, "big", 4 * PS, 3);
  char *back = calloc(1, 2 * PS + 1);
  struct hipobj_mem dst = hipobj_mem_host(back, 2 * PS + 1);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 4;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err),
               HIPOBJ_E_BUFFER_TOO_SMALL);
  /* The first part landed before the size was known to be too large;
   * the result tells the size and ETag to read it again with. */
  cr_assert_eq(res.bytes, PS);
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  OK(hipobj_s3_head(cli, T_BUCKET, "big", &info, err));
  cr_assert_eq(res.object_size, 4 * PS);
  cr_assert_str_eq(res.etag, info.etag);
  /* A buffer under one part: one request, refused at its headers, the
   * same size and ETag reported. */
  struct hipobj_mem tiny = hipobj_mem_host(back, 100);
  struct hipobj_xfer_result r2 = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "big", &tiny, NULL, &r2, err),
               HIPOBJ_E_BUFFER_TOO_SMALL);
  cr_assert_eq(r2.object_size, 4 * PS);
  cr_assert_str_eq(r2.etag, info.etag);
  cr_assert_eq(r2.bytes, 0);
  free(put_pattern(cli, "empty", 0, 1));
  OK(hipobj_s3_get(cli, T_BUCKET, "empty", &dst, &o, &res, err));
  cr_assert_eq(res.bytes, 0);
  free(back);
  free(data);
}

Test(parallel, failing_part_is_retried_alone) {
  start("op=GetObject,nth=3,action=status:503");
  size_t n = 4 * PS;
  char *data = put_pattern(cli, "retry", n, 5);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 2;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(cli, T_BUCKET, "retry", &dst, &o, &res, err));
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(res.parts, 4);
  cr_assert_eq(memcmp(data, back, n), 0);
  free(back);
  free(data);
}

struct overwrite {
  const char *url;
  size_t n;
};

static void *overwrite_later(void *arg) {
  struct overwrite *w = arg;
  usleep(300 * 1000);
  struct hipobj_client *c2 = mk_client(w->url, NULL, NULL, 1);
  char *other = malloc(w->n);
  fill_pattern(other, w->n, 99);
  struct hipobj_mem src = hipobj_mem_host(other, w->n);
  int rc = hipobj_s3_put(c2, T_BUCKET, "changing", &src, NULL, NULL, NULL);
  free(other);
  hipobj_client_free(c2);
  return (void *)(intptr_t)rc;
}

Test(parallel, overwrite_between_parts_fails_cleanly) {
  /* The second part is held back long enough for another client to
   * replace the object: its If-Match must fail (412), not mix versions. */
  start("op=GetObject,nth=2,action=delay:1500");
  size_t n = 3 * PS;
  char *data = put_pattern(cli, "changing", n, 8);
  struct overwrite w = {srv.url, n};
  pthread_t t;
  pthread_create(&t, NULL, overwrite_later, &w);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 1 + 1;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int rc = hipobj_s3_get(cli, T_BUCKET, "changing", &dst, &o, &res, err);
  void *put_rc;
  pthread_join(t, &put_rc);
  cr_assert_eq((intptr_t)put_rc, HIPOBJ_OK);
  cr_assert_eq(rc, HIPOBJ_E_PRECONDITION, "%d: %s", rc,
               hipobj_error_message(err));
  cr_assert(strstr(hipobj_error_message(err), "changed"), "%s",
            hipobj_error_message(err));
  cr_assert_lt(res.bytes, n, "a failed GET reports only what it wrote");
  free(back);
  free(data);
}

struct progress_log {
  pthread_mutex_t lock;
  uint64_t last_done, last_total;
  unsigned calls;
  int went_back;
  int done_calls, done_status;
  int inside, overlapped; /* calls running now; ever more than one */
  pthread_t threads[IO_THREADS + 2];
  unsigned n_threads; /* distinct threads that reported */
};

static void on_progress(void *user, uint64_t done, uint64_t total) {
  struct progress_log *p = user;
  if (__atomic_add_fetch(&p->inside, 1, __ATOMIC_SEQ_CST) > 1)
    p->overlapped = 1;
  pthread_mutex_lock(&p->lock);
  if (done < p->last_done)
    p->went_back = 1;
  p->last_done = done;
  p->last_total = total;
  p->calls++;
  unsigned i = 0;
  while (i < p->n_threads && !pthread_equal(p->threads[i], pthread_self()))
    i++;
  if (i == p->n_threads && i < sizeof p->threads / sizeof p->threads[0])
    p->threads[p->n_threads++] = pthread_self();
  pthread_mutex_unlock(&p->lock);
  usleep(200); /* a window in which an unserialised call would overlap */
  __atomic_sub_fetch(&p->inside, 1, __ATOMIC_SEQ_CST);
}

static void on_done(struct hipobj_xfer *x, int status, void *user) {
  (void)x;
  struct progress_log *p = user;
  pthread_mutex_lock(&p->lock);
  p->done_calls++;
  p->done_status = status;
  pthread_mutex_unlock(&p->lock);
}

Test(parallel, async_progress_is_monotonic_and_ends_at_total) {
  start("op=GetObject,nth=2,action=status:503");
  size_t n = 7 * PS + 13;
  char *data = put_pattern(cli, "prog", n, 4);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 3;
  struct progress_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  struct hipobj_xfer_opts xo = HIPOBJ_XFER_OPTS_INIT;
  xo.progress = on_progress;
  xo.done = on_done;
  xo.user = &log;
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "prog", &dst, &o, &xo, &x, err));
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_xfer_wait(x, &res, err));
  hipobj_xfer_free(x); /* waits for the callback to return */
  cr_assert_eq(res.retries, 1);
  cr_assert_eq(memcmp(data, back, n), 0);
  cr_assert_eq(log.went_back, 0, "progress went backwards");
  cr_assert_eq(log.overlapped, 0, "progress calls overlapped");
  cr_assert_eq(log.last_done, n);
  cr_assert_eq(log.last_total, n);
  cr_assert_gt(log.calls, 1);
  /* Three parts at a time on four workers: they report from several. */
  cr_assert_geq(log.n_threads, 2, "progress from %u thread(s)", log.n_threads);
  cr_assert_eq(log.done_calls, 1);
  cr_assert_eq(log.done_status, HIPOBJ_OK);

  /* The same for a multipart PUT (5 MiB parts, the minimum). */
  size_t big = (11u << 20) + 5;
  char *up = malloc(big);
  fill_pattern(up, big, 12);
  struct progress_log plog = {.lock = PTHREAD_MUTEX_INITIALIZER};
  xo.user = &plog;
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  struct hipobj_mem src = hipobj_mem_host(up, big);
  OK(hipobj_s3_put_start(cli, T_BUCKET, "prog-put", &src, &po, &xo, &x, err));
  OK(hipobj_xfer_wait(x, &res, err));
  hipobj_xfer_free(x);
  cr_assert_eq(res.parts, 3);
  cr_assert_eq(plog.went_back, 0);
  cr_assert_eq(plog.overlapped, 0);
  cr_assert_eq(plog.last_done, big);
  cr_assert_eq(plog.last_total, big);
  free(up);
  free(back);
  free(data);
}

Test(parallel, cancel_get_mid_transfer) {
  start("op=GetObject,nth=2,action=delay:5000");
  size_t n = 4 * PS;
  char *data = put_pattern(cli, "slow", n, 6);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = PS;
  o.concurrency = 1 + 1;
  struct progress_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  struct hipobj_xfer_opts xo = HIPOBJ_XFER_OPTS_INIT;
  xo.done = on_done;
  xo.user = &log;
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "slow", &dst, &o, &xo, &x, err));
  usleep(400 * 1000);
  cr_assert_not(hipobj_xfer_done(x));
  double t0 = mono_now();
  hipobj_xfer_cancel(x);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_xfer_wait(x, &res, err), HIPOBJ_E_CANCELLED, "%s",
               hipobj_error_message(err));
  cr_assert_lt(mono_now() - t0, 3.0, "cancel took too long");
  hipobj_xfer_free(x);
  cr_assert_eq(log.done_calls, 1);
  cr_assert_eq(log.done_status, HIPOBJ_E_CANCELLED);
  cr_assert_lt(res.bytes, n, "a cancelled GET reports only what it wrote");
  free(back);
  free(data);
}

Test(parallel, cancel_multipart_put_aborts_the_upload) {
  start("op=UploadPart,nth=2,action=delay:5000");
  size_t big = (15u << 20) + 1;
  char *up = malloc(big);
  fill_pattern(up, big, 2);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  po.concurrency = 1;
  struct hipobj_mem src = hipobj_mem_host(up, big);
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_put_start(cli, T_BUCKET, "cancelled", &src, &po, NULL, &x, err));
  usleep(700 * 1000);
  hipobj_xfer_cancel(x);
  cr_assert_eq(hipobj_xfer_wait(x, NULL, err), HIPOBJ_E_CANCELLED, "%s",
               hipobj_error_message(err));
  hipobj_xfer_free(x);
  /* Checked on the server: no multipart upload left behind. */
  cr_assert_not(upload_open(srv.url), "an upload is left");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "cancelled", &info, err),
               HIPOBJ_E_NOT_FOUND);
  free(up);
}

/* ---- small transfers of blocking calls run on the calling thread ---------
 * The library's debug line "GetObject...: GET key -> STATUS" (PutObject,
 * PUT) is written where the request completed: for a small GET into host
 * memory, or a small PUT from it, made by a blocking call, on the caller's
 * own thread (no hand-off to an HTTP worker and back); for bigger requests
 * and for asynchronous transfers, on a worker. */

struct answer_log {
  pthread_mutex_t lock;
  pthread_t caller;
  const char *op, *method;  /* "GetObject", ": GET " */
  unsigned here, elsewhere; /* the op's answers per thread kind */
};

static void on_log(void *user, enum hipobj_log_level level, const char *line) {
  struct answer_log *a = user;
  /* "GetObject: GET key -> 200, ..." or "GetObject part 2: GET ..." */
  if (level != HIPOBJ_LOG_DEBUG || strncmp(line, a->op, strlen(a->op)) ||
      !strstr(line, a->method) || !strstr(line, " -> "))
    return;
  pthread_mutex_lock(&a->lock);
  if (pthread_equal(pthread_self(), a->caller))
    a->here++;
  else
    a->elsewhere++;
  pthread_mutex_unlock(&a->lock);
}

static struct hipobj_client *logging_client(struct answer_log *a) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 4, IO_THREADS);
  cfg.log_level = HIPOBJ_LOG_DEBUG;
  cfg.log_fn = on_log;
  cfg.log_user = a;
  struct hipobj_client *c = NULL;
  OK(hipobj_client_create(&cfg, &c, err));
  return c;
}

static char *raw_put(const char *key, size_t n, unsigned seed) {
  char *data = malloc(n), target[64];
  fill_pattern(data, n, seed);
  snprintf(target, sizeof target, "/%s/%s", T_BUCKET, key);
  struct sreq q = {.method = "PUT", .target = target, .body = data, .len = n};
  struct http_resp r;
  cr_assert_eq(http_send(srv.url, &q, &r), 0);
  cr_assert_eq(r.status, 200, "PUT %s: %ld", key, (long)r.status);
  resp_free(&r);
  return data;
}

static void count_reset(struct answer_log *a) {
  pthread_mutex_lock(&a->lock);
  a->here = a->elsewhere = 0;
  pthread_mutex_unlock(&a->lock);
}

Test(parallel, small_blocking_gets_run_on_the_calling_thread) {
  /* The second GetObject fails once (503): its retry runs here too. */
  start("op=GetObject,nth=2,action=status:503");
  struct answer_log a = {.lock = PTHREAD_MUTEX_INITIALIZER,
                         .caller = pthread_self(),
                         .op = "GetObject",
                         .method = ": GET "};
  struct hipobj_client *c = logging_client(&a);
  const size_t small = 4096 + 3, big = (3u << 20) + 1;
  /* Stored without c: its first GET must find no thread of c's still
   * scheduling (one would start the GET itself, correctly, elsewhere). */
  char *sdata = raw_put("small", small, 5);
  char *bdata = raw_put("big", big, 6);
  char *back = malloc(big);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;

  /* Small, blocking, in a buffer of its size: every answer here. */
  count_reset(&a);
  for (int i = 0; i < 5; i++) {
    memset(back, 0, small);
    struct hipobj_mem dst = hipobj_mem_host(back, small);
    OK(hipobj_s3_get(c, T_BUCKET, "small", &dst, NULL, &res, err));
    cr_assert_eq(res.bytes, small);
    cr_assert_eq(memcmp(back, sdata, small), 0, "GET %d", i);
  }
  cr_assert_eq(a.elsewhere, 0, "%u small answers on another thread",
               a.elsewhere);
  cr_assert_eq(a.here, 6, "5 GETs and one retry: %u answers here", a.here);

  /* 2 MiB parts of a 3 MiB object: parts over 1 MiB, on the workers. */
  count_reset(&a);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = 2u << 20;
  o.concurrency = 4;
  struct hipobj_mem bdst = hipobj_mem_host(back, big);
  OK(hipobj_s3_get(c, T_BUCKET, "big", &bdst, &o, &res, err));
  cr_assert_eq(memcmp(back, bdata, big), 0);
  cr_assert_eq(a.here, 0, "%u parts over 1 MiB answered here", a.here);
  cr_assert_geq(a.elsewhere, 2, "%u big parts answered (%u here)", a.elsewhere,
                a.here);

  /* Asynchronous, small: the caller does not wait in the library, so the
   * request runs on a worker. */
  count_reset(&a);
  struct hipobj_mem dst = hipobj_mem_host(back, small);
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(c, T_BUCKET, "small", &dst, NULL, NULL, &x, err));
  OK(hipobj_xfer_wait(x, &res, err));
  hipobj_xfer_free(x);
  cr_assert_eq(memcmp(back, sdata, small), 0);
  cr_assert_eq(a.here, 0, "an asynchronous GET ran on the caller's thread");
  cr_assert_eq(a.elsewhere, 1);

  hipobj_client_free(c);
  free(back);
  free(sdata);
  free(bdata);
}

/* GETs back key through c and asserts it is want's n bytes. */
static void read_back(struct hipobj_client *c, const char *key,
                      const char *want, size_t n) {
  char *back = malloc(n + 1);
  cr_assert_not_null(back);
  struct hipobj_mem dst = hipobj_mem_host(back, n + 1);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  OK(hipobj_s3_get(c, T_BUCKET, key, &dst, NULL, &res, err));
  cr_assert_eq(res.bytes, n, "%s: %llu bytes", key,
               (unsigned long long)res.bytes);
  cr_assert_eq(memcmp(back, want, n), 0, "%s: other bytes", key);
  free(back);
}

Test(parallel, small_blocking_puts_run_on_the_calling_thread) {
  /* The second PutObject fails once (503): its retry runs here too. */
  start("op=PutObject,nth=2,action=status:503");
  struct answer_log a = {.lock = PTHREAD_MUTEX_INITIALIZER,
                         .caller = pthread_self(),
                         .op = "PutObject",
                         .method = ": PUT "};
  struct hipobj_client *c = logging_client(&a);
  const size_t small = 4096 + 3, big = (3u << 20) + 1;
  char *data = malloc(big);
  cr_assert_not_null(data);
  fill_pattern(data, big, 7);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;

  /* Small, blocking, from host memory: every answer here. */
  count_reset(&a);
  for (int i = 0; i < 5; i++) {
    char key[32];
    snprintf(key, sizeof key, "small-%d", i);
    struct hipobj_mem src = hipobj_mem_host(data + i, small);
    OK(hipobj_s3_put(c, T_BUCKET, key, &src, NULL, &res, err));
  }
  cr_assert_eq(a.elsewhere, 0, "%u small answers on another thread",
               a.elsewhere);
  cr_assert_eq(a.here, 6, "5 PUTs and one retry: %u answers here", a.here);
  for (int i = 0; i < 5; i++) {
    char key[32];
    snprintf(key, sizeof key, "small-%d", i);
    read_back(c, key, data + i, small);
  }

  /* Over 1 MiB in one request: on a worker. */
  count_reset(&a);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.multipart_threshold = 64u << 20;
  struct hipobj_mem bsrc = hipobj_mem_host(data, big);
  OK(hipobj_s3_put(c, T_BUCKET, "big", &bsrc, &po, &res, err));
  cr_assert_eq(a.here, 0, "a PUT over 1 MiB answered here");
  cr_assert_eq(a.elsewhere, 1, "%u big answers", a.elsewhere);
  read_back(c, "big", data, big);

  /* Asynchronous, small: on a worker. */
  count_reset(&a);
  struct hipobj_mem src = hipobj_mem_host(data + 9, small);
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_put_start(c, T_BUCKET, "async", &src, NULL, NULL, &x, err));
  OK(hipobj_xfer_wait(x, &res, err));
  hipobj_xfer_free(x);
  cr_assert_eq(a.here, 0, "an asynchronous PUT ran on the caller's thread");
  cr_assert_eq(a.elsewhere, 1);
  read_back(c, "async", data + 9, small);

  hipobj_client_free(c);
  free(data);
}
