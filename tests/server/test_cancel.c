/* test_cancel.c - cancellation tokens (struct hipobj_cancel) against
 * hipobj-server: a token set from another thread stops a blocking GET
 * that the server holds back (a small one, which runs on the calling
 * thread, and a parallel one, whose parts run on the HTTP workers), a
 * blocking multipart PUT (the upload aborted on the server, no object)
 * and an asynchronous GET, also one waiting inside libcurl for a
 * connection (max_connections 1, taken by a held GET); a call that begins with
 * the token already set fails at once without creating anything; a token never
 * set changes nothing; one token serves several calls at once. The delays are
 * far longer than the bounds the tests wait: a call that returns before them
 * was stopped by its token. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define HELD_MS 20000 /* how long the server holds a request back */
#define BOUND_S 10.0  /* a cancelled call returns well before HELD_MS */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static struct hipobj_cancel *tok;

static void init(void) {
  hipobj_global_init();
  hipobj_error_create(&err);
  cr_assert_eq(hipobj_cancel_create(&tok), HIPOBJ_OK);
}

static void fini(void) {
  hipobj_client_free(cli);
  cli = NULL;
  srv_cleanup(&srv);
  hipobj_cancel_free(tok);
  hipobj_error_free(err);
  hipobj_global_cleanup();
}

TestSuite(cancel, .init = init, .fini = fini, .timeout = 120);

#define OK(expr)                                                               \
  cr_assert_eq((expr), HIPOBJ_OK, "%s: %s", #expr, hipobj_error_message(err))

static void start(const char *spec) {
  const char *extra[] = {"--faults", spec, NULL};
  srv_start(&srv, NULL, spec ? extra : NULL);
  cli = mk_client_io(srv.url, NULL, NULL, 1, 4);
  OK(hipobj_s3_create_bucket(cli, T_BUCKET, err));
}

/* Sets the token after a pause, from a thread of its own. */
static void *set_later(void *arg) {
  usleep(300 * 1000);
  hipobj_cancel_set(arg);
  return NULL;
}

static pthread_t cancel_later(void) {
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, set_later, tok), 0);
  return t;
}

Test(cancel, api_basics) {
  cr_assert_eq(hipobj_cancel_create(NULL), HIPOBJ_E_INVALID_ARGUMENT);
  cr_assert_eq(hipobj_cancel_is_set(NULL), 0);
  hipobj_cancel_set(NULL); /* ignored */
  hipobj_cancel_free(NULL);
  cr_assert_eq(hipobj_cancel_is_set(tok), 0);
  hipobj_cancel_set(tok);
  cr_assert_neq(hipobj_cancel_is_set(tok), 0);
  hipobj_cancel_set(tok); /* stays set */
  cr_assert_neq(hipobj_cancel_is_set(tok), 0);
}

Test(cancel, token_stops_a_small_blocking_get) {
  /* The first GET is held back: the token is all that can end it early. */
  start("op=GetObject,nth=1,action=delay:20000");
  size_t n = 4096;
  char *data = put_pattern(cli, "small", n, 1);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.cancel = tok;
  pthread_t t = cancel_later();
  double t0 = mono_now();
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "small", &dst, &o, NULL, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  cr_assert_lt(mono_now() - t0, BOUND_S, "the GET ran into the delay");
  pthread_join(t, NULL);
  /* The same object without the token: the rule has fired once. */
  OK(hipobj_s3_get(cli, T_BUCKET, "small", &dst, NULL, NULL, err));
  cr_assert_eq(memcmp(back, data, n), 0);
  free(back);
  free(data);
}

Test(cancel, token_stops_a_parallel_blocking_get) {
  start("op=GetObject,nth=2,action=delay:20000");
  size_t ps = 64 * 1024, n = 6 * ps;
  char *data = put_pattern(cli, "big", n, 2);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.part_size = ps;
  o.concurrency = 2;
  o.cancel = tok;
  pthread_t t = cancel_later();
  double t0 = mono_now();
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "big", &dst, &o, &res, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  cr_assert_lt(mono_now() - t0, BOUND_S, "the GET ran into the delay");
  cr_assert_lt(res.bytes, n, "a cancelled GET reports only what it wrote");
  pthread_join(t, NULL);
  free(back);
  free(data);
}

Test(cancel, token_stops_a_blocking_multipart_put_and_aborts_it) {
  start("op=UploadPart,nth=2,action=delay:20000");
  size_t big = (15u << 20) + 1;
  char *up = malloc(big);
  fill_pattern(up, big, 3);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.part_size = 5u << 20;
  po.concurrency = 1;
  po.cancel = tok;
  struct hipobj_mem src = hipobj_mem_host(up, big);
  pthread_t t = cancel_later();
  double t0 = mono_now();
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "stopped", &src, &po, NULL, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  cr_assert_lt(mono_now() - t0, BOUND_S, "the PUT ran into the delay");
  pthread_join(t, NULL);
  cr_assert_not(upload_open(srv.url), "an upload is left");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "stopped", &info, err),
               HIPOBJ_E_NOT_FOUND);
  free(up);
}

Test(cancel, token_stops_an_asynchronous_get) {
  start("op=GetObject,nth=1,action=delay:20000");
  size_t n = 1000;
  char *data = put_pattern(cli, "async", n, 4);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.cancel = tok;
  struct hipobj_xfer *x = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "async", &dst, &o, NULL, &x, err));
  pthread_t t = cancel_later();
  double t0 = mono_now();
  cr_assert_eq(hipobj_xfer_wait(x, NULL, err), HIPOBJ_E_CANCELLED, "%s",
               hipobj_error_message(err));
  cr_assert_lt(mono_now() - t0, BOUND_S, "the GET ran into the delay");
  pthread_join(t, NULL);
  hipobj_xfer_free(x);
  free(back);
  free(data);
}

Test(cancel, token_stops_a_get_waiting_for_a_connection) {
  /* One connection: GET "held" takes it and the server holds it back; GET
   * "queued" waits inside libcurl for the connection, where no progress
   * callback runs. Its token must still end it, with "held" still held. */
  start("op=GetObject,nth=1,action=delay:20000");
  hipobj_client_free(cli);
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, NULL, 1, 1);
  cfg.max_connections = 1;
  OK(hipobj_client_create(&cfg, &cli, err));
  size_t n = 1000;
  char *d1 = put_pattern(cli, "held", n, 7),
       *d2 = put_pattern(cli, "queued", n, 8);
  char *b1 = calloc(1, n), *b2 = calloc(1, n);
  struct hipobj_mem m1 = hipobj_mem_host(b1, n), m2 = hipobj_mem_host(b2, n);
  struct hipobj_xfer *held = NULL, *queued = NULL;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "held", &m1, NULL, NULL, &held, err));
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.cancel = tok;
  OK(hipobj_s3_get_start(cli, T_BUCKET, "queued", &m2, &o, NULL, &queued, err));
  pthread_t t = cancel_later();
  cr_assert_eq(hipobj_xfer_wait(queued, NULL, err), HIPOBJ_E_CANCELLED, "%s",
               hipobj_error_message(err));
  cr_assert_not(hipobj_xfer_done(held),
                "the queued GET ended only once the held one had");
  pthread_join(t, NULL);
  hipobj_xfer_cancel(held);
  cr_assert_eq(hipobj_xfer_wait(held, NULL, err), HIPOBJ_E_CANCELLED, "%s",
               hipobj_error_message(err));
  hipobj_xfer_free(held);
  hipobj_xfer_free(queued);
  free(b1);
  free(b2);
  free(d1);
  free(d2);
}

Test(cancel, a_set_token_fails_calls_at_once_creating_nothing) {
  start(NULL);
  size_t n = 100;
  char *data = put_pattern(cli, "there", n, 5);
  hipobj_cancel_set(tok);
  char *back = calloc(1, n);
  struct hipobj_mem dst = hipobj_mem_host(back, n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.cancel = tok;
  cr_assert_eq(hipobj_s3_get(cli, T_BUCKET, "there", &dst, &o, NULL, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.cancel = tok;
  struct hipobj_mem src = hipobj_mem_host(data, n);
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "never", &src, &po, NULL, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  /* Multipart: not even CreateMultipartUpload goes out. */
  size_t big = (11u << 20) + 7;
  char *up = malloc(big);
  fill_pattern(up, big, 6);
  struct hipobj_mem bsrc = hipobj_mem_host(up, big);
  po.part_size = 5u << 20;
  cr_assert_eq(hipobj_s3_put(cli, T_BUCKET, "never-mp", &bsrc, &po, NULL, err),
               HIPOBJ_E_CANCELLED, "%s", hipobj_error_message(err));
  cr_assert_not(upload_open(srv.url), "an upload is left");
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "never", &info, err),
               HIPOBJ_E_NOT_FOUND);
  cr_assert_eq(hipobj_s3_head(cli, T_BUCKET, "never-mp", &info, err),
               HIPOBJ_E_NOT_FOUND);
  free(up);
  free(back);
  free(data);
}

/* Several threads GET with one token that is never set: every byte
 * arrives. */
struct getter {
  const char *key;
  size_t n;
  const char *want;
  int status;
  int same;
};

static void *get_with_token(void *arg) {
  struct getter *g = arg;
  char *back = calloc(1, g->n);
  struct hipobj_mem dst = hipobj_mem_host(back, g->n);
  struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
  o.cancel = tok;
  o.part_size = 64 * 1024;
  g->status = hipobj_s3_get(cli, T_BUCKET, g->key, &dst, &o, NULL, NULL);
  g->same = memcmp(back, g->want, g->n) == 0;
  free(back);
  return NULL;
}

Test(cancel, a_token_never_set_changes_nothing) {
  start(NULL);
  struct getter g[4] = {{"a", 1}, {"b", 4096}, {"c", 200000}, {"d", 1 << 20}};
  char *data[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    data[i] = put_pattern(cli, g[i].key, g[i].n, 10 + (unsigned)i);
    g[i].want = data[i];
  }
  for (int i = 0; i < 4; i++)
    cr_assert_eq(pthread_create(&t[i], NULL, get_with_token, &g[i]), 0);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    cr_assert_eq(g[i].status, HIPOBJ_OK, "GET %s: %d", g[i].key, g[i].status);
    cr_assert(g[i].same, "GET %s: bytes differ", g[i].key);
    free(data[i]);
  }
  cr_assert_eq(hipobj_cancel_is_set(tok), 0);
}
