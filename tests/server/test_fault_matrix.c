/* test_fault_matrix.c - the fault matrix of issue "Integrity and safety":
 * every transfer kind (GET in parallel parts, one ranged GET, PUT,
 * multipart PUT) against every fault hipobj-server can inject on its way
 * (a connection cut mid-body, 500, 503, a short body, a short 206 that
 * honestly says so, a flipped byte, a cut XML answer, a wrong secret, the
 * server killed and restarted; with HIPOBJ_MATRIX_RDMA=1, run on an RDMA
 * device, also a QP destroyed mid-transfer, a server ignoring the part
 * query and one without the mp capability). Each cell must end either
 * recovered with every byte right (read back over plain HTTP) or with an
 * error that names its cause; never a success with wrong bytes, and no
 * multipart upload left on the server. Two known gaps are shown, not
 * failed: a flipped byte in a single range (S3 has no checksum of an
 * arbitrary range; the result reports it unverified) and an upload whose
 * CreateMultipartUpload answer was cut (its id never reached the client).
 * The table is printed whatever happens, then the test fails on any bad
 * cell. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define PART (64 * KIB)            /* GET parts */
#define OBJ (4 * PART + 333)       /* the object every GET reads */
#define RANGE_OFF (PART + 17)      /* the ranged GET: a middle slice */
#define RANGE_LEN (2 * PART + 100) /* ... across two GET parts' worth */
#define MP_PART (5 * MIB)          /* S3's least multipart part */
#define PUT_N (300 * KIB + 5)      /* a PutObject */
#define MPUT_N (2 * MP_PART + 5)   /* a multipart PUT of 3 parts */

static struct server_proc srv;
static struct hipobj_client *cli;
static struct hipobj_error *err;
static int rdma;
static char port_arg[32];

enum op { GET, RGET, PUT, MPUT, N_OPS };
static const char *const op_names[N_OPS] = {"GET (parts)", "ranged GET", "PUT",
                                            "multipart PUT"};
/* The S3 operation a fault is aimed at, per transfer kind. */
static const char *const op_target[N_OPS] = {"GetObject", "GetObject",
                                             "PutObject", "UploadPart"};

struct fault {
  const char *name;
  const char *action;  /* hipobj-server action, NULL: see special */
  const char *special; /* "auth", "crash", or an op override "Op:action" */
  int rdma_only;
};

static const struct fault faults[] = {
    {"cut mid-body", "close:1000", NULL, 0},
    {"500", "status:500", NULL, 0},
    {"503", "status:503", NULL, 0},
    {"short body", "short:10", NULL, 0},
    {"short 206 (honest)", "partial", NULL, 0},
    {"flipped byte", "corrupt", NULL, 0},
    {"bad XML", NULL, "CompleteMultipartUpload:badxml", 0},
    {"bad XML (create)", NULL, "CreateMultipartUpload:badxml", 0},
    {"wrong secret", NULL, "auth", 0},
    {"server killed", NULL, "crash", 0},
    {"QP destroyed", NULL, "RdmaReady:rdma-fail", 1},
    {"part query ignored", NULL, "RdmaReady:rdma-ignore-part", 1},
    {"no mp capability", NULL, "RdmaPrepare:rdma-no-mp", 1},
};
#define N_FAULTS (sizeof faults / sizeof *faults)

static char table[N_FAULTS][N_OPS][96];
static int bad_cells, gaps;

static void set_faults(const char *spec) {
  struct http_resp r;
  http_send(srv.url,
            &(struct sreq){.method = spec ? "POST" : "DELETE",
                           .target = "/.hipobj-admin/faults",
                           .body = spec,
                           .len = spec ? strlen(spec) : 0},
            &r);
  cr_assert_eq(r.status, spec ? 200 : 204, "faults '%s': HTTP %d %s",
               spec ? spec : "(clear)", r.status, r.body ? r.body : "");
  resp_free(&r);
}

/* Multipart uploads still open on the server (ListMultipartUploads);
 * each one found is aborted, so that the next cell starts clean. */
static int open_uploads(void) {
  struct http_resp r;
  char target[64];
  snprintf(target, sizeof target, "/%s?uploads", T_BUCKET);
  http_send(srv.url, &(struct sreq){.method = "GET", .target = target}, &r);
  cr_assert_eq(r.status, 200, "ListMultipartUploads: HTTP %d", r.status);
  int n = 0;
  for (const char *p = r.body; p && (p = strstr(p, "<UploadId>")); p++) {
    p += strlen("<UploadId>");
    char abort_target[320];
    snprintf(abort_target, sizeof abort_target, "/%s/matrix-dst?uploadId=%.*s",
             T_BUCKET, (int)strcspn(p, "<"), p);
    struct http_resp a;
    http_send(srv.url,
              &(struct sreq){.method = "DELETE", .target = abort_target}, &a);
    resp_free(&a);
    n++;
  }
  resp_free(&r);
  return n;
}

/* ---- the server killed: a watcher restarts it on its port and root ---- */

static pthread_t watcher;
static int watching;
static _Atomic int stop_watching;

static void *restart_when_dead(void *arg) {
  (void)arg;
  int st;
  for (;;) {
    pid_t p = waitpid(srv.pid, &st, WNOHANG);
    if (p == srv.pid)
      break;
    if (stop_watching) /* the fault never fired */
      return NULL;
    usleep(5000);
  }
  /* Same root, same port: the client's retries find it again. The ready
   * line is not waited for here (no assertion off the test's thread). */
  char log[320];
  snprintf(log, sizeof log, "%s/server.log", srv.base);
  const char *argv[] = {HIPOBJ_SERVER_BIN,
                        "--root",
                        srv.root,
                        "--listen",
                        port_arg,
                        "--access-key",
                        T_AK,
                        "--secret-key",
                        T_SK,
                        "--region",
                        T_REGION,
                        rdma ? "--rdma" : NULL,
                        "auto",
                        NULL};
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_APPEND);
    if (fd >= 0)
      dup2(fd, 2);
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0)
      dup2(dn, 1);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  srv.pid = pid;
  return NULL;
}

/* A client whose retries outlast a server restart (about 0.1-0.5 s):
 * backoff from 100 ms, 5 attempts. */
static struct hipobj_client *matrix_client(const char *sk) {
  struct hipobj_client_config cfg;
  client_config(&cfg, srv.url, NULL, sk, 5, 0);
  cfg.retry_base_ms = 100;
  struct hipobj_client *c = NULL;
  cr_assert_eq(hipobj_client_create(&cfg, &c, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  return c;
}

/* ---- one cell --------------------------------------------------------- */

static char *expect_obj; /* the object every GET reads */
static char *put_data;   /* what PUTs send (MPUT_N bytes) */

/* Runs kind k once; *bytes_ok: a success whose bytes were checked right. */
static int run_op(enum op k, struct hipobj_client *c, int *bytes_ok,
                  unsigned *retries, int *unverified) {
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int st;
  *bytes_ok = 0;
  if (k == GET || k == RGET) {
    size_t n = k == GET ? OBJ : RANGE_LEN;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    memset(buf, 0xEE, n);
    struct hipobj_mem dst = hipobj_mem_host(buf, n);
    struct hipobj_get_opts o = HIPOBJ_GET_OPTS_INIT;
    o.part_size = k == GET ? PART : 0;
    o.concurrency = k == GET ? 4 : 1;
    if (k == RGET) {
      o.has_range = 1;
      o.offset = RANGE_OFF;
      o.length = RANGE_LEN;
    }
    o.rdma_policy = rdma ? HIPOBJ_RDMA_AUTO : HIPOBJ_RDMA_OFF;
    st = hipobj_s3_get(c, T_BUCKET, "matrix-src", &dst, &o, &res, err);
    if (st == HIPOBJ_OK)
      *bytes_ok = res.bytes == n &&
                  !memcmp(buf, expect_obj + (k == GET ? 0 : RANGE_OFF), n);
    free(buf);
  } else {
    const size_t n = k == MPUT ? MPUT_N : PUT_N;
    struct hipobj_mem src = hipobj_mem_host(put_data, n);
    struct hipobj_put_opts o = HIPOBJ_PUT_OPTS_INIT;
    o.part_size = MP_PART;
    o.concurrency = 2;
    o.rdma_policy = rdma ? HIPOBJ_RDMA_AUTO : HIPOBJ_RDMA_OFF;
    st = hipobj_s3_put(c, T_BUCKET, "matrix-dst", &src, &o, &res, err);
    if (st == HIPOBJ_OK) {
      /* Read back over plain HTTP, by a client without the fault. */
      set_faults(NULL);
      char *back = malloc(n + 1);
      cr_assert_not_null(back);
      struct hipobj_mem dst = hipobj_mem_host(back, n + 1);
      struct hipobj_get_opts g = HIPOBJ_GET_OPTS_INIT;
      g.rdma_policy = HIPOBJ_RDMA_OFF;
      struct hipobj_xfer_result gr = HIPOBJ_XFER_RESULT_INIT;
      struct hipobj_error *e2;
      hipobj_error_create(&e2);
      int gst = hipobj_s3_get(cli, T_BUCKET, "matrix-dst", &dst, &g, &gr, e2);
      *bytes_ok =
          gst == HIPOBJ_OK && gr.bytes == n && !memcmp(back, put_data, n);
      hipobj_error_free(e2);
      free(back);
    }
  }
  *retries = res.retries;
  /* The result said no checksum covered the bytes, and why. */
  *unverified = res.checksum == HIPOBJ_CHECKSUM_NONE && res.checksum_note[0];
  return st;
}

static void run_cell(size_t fi, enum op k) {
  const struct fault *f = &faults[fi];
  char *cell = table[fi][k];
  if (f->rdma_only && !rdma) {
    snprintf(cell, sizeof table[0][0], "- (RDMA only)");
    return;
  }
  char spec[160] = "";
  const char *sp = f->special;
  if (sp && strchr(sp, ':')) {
    size_t on = strcspn(sp, ":");
    int xml_op = !strncmp(sp, "Complete", 8) || !strncmp(sp, "Create", 6);
    int rdma_op = !strncmp(sp, "Rdma", 4);
    /* XML answers exist only in a multipart PUT; RDMA faults need RDMA
     * parts, which a GET of unknown size does not make. */
    if ((xml_op && k != MPUT)) {
      snprintf(cell, sizeof table[0][0], "- (no such answer)");
      return;
    }
    (void)rdma_op;
    snprintf(spec, sizeof spec, "op=%.*s,nth=1,action=%s", (int)on, sp,
             sp + on + 1);
  } else if (f->action) {
    /* Answer-body faults need an answer body: GETs only. */
    if ((!strcmp(f->name, "short body") ||
         !strcmp(f->name, "short 206 (honest)")) &&
        (k == PUT || k == MPUT)) {
      snprintf(cell, sizeof table[0][0], "- (no answer body)");
      return;
    }
    /* The 2nd request of a GET in parts (a ranged one), the 2nd part. */
    snprintf(spec, sizeof spec, "op=%s,nth=%d,action=%s", op_target[k],
             k == RGET || k == PUT ? 1 : 2, f->action);
  } else if (!strcmp(sp, "crash")) {
    snprintf(spec, sizeof spec, "op=%s,nth=%d,action=crash", op_target[k],
             k == RGET || k == PUT ? 1 : 2);
  }

  struct hipobj_client *c = cli;
  if (sp && !strcmp(sp, "auth"))
    c = matrix_client("a-wrong-secret-key");
  if (sp && !strcmp(sp, "crash")) {
    stop_watching = 0;
    cr_assert_eq(pthread_create(&watcher, NULL, restart_when_dead, NULL), 0);
    watching = 1;
  }
  if (spec[0])
    set_faults(spec);
  int ok = 0;
  unsigned retries = 0;
  int unverified = 0;
  int st = run_op(k, c, &ok, &retries, &unverified);
  if (watching) {
    stop_watching = 1;
    pthread_join(watcher, NULL);
    watching = 0;
    /* Wait until the restarted server answers before looking at it. */
    for (int i = 0; i < 100; i++) {
      struct http_resp r;
      http_send(srv.url, &(struct sreq){.method = "GET", .target = "/"}, &r);
      int up = r.status != 0;
      resp_free(&r);
      if (up)
        break;
      usleep(50000);
    }
  }
  set_faults(NULL);
  if (c != cli)
    hipobj_client_free(c);
  int orphans = open_uploads();
  const char *msg = hipobj_error_message(err);
  if (st == HIPOBJ_OK && !ok && unverified && k == RGET) {
    /* S3 has no checksum of an arbitrary range: the result says that the
     * range was not verified (checksum NONE, with the reason). */
    snprintf(cell, sizeof table[0][0], "GAP: wrong bytes, result: unverified");
    gaps++;
  } else if (st == HIPOBJ_OK && !ok) {
    snprintf(cell, sizeof table[0][0], "BAD: success with wrong bytes");
    bad_cells++;
  } else if (st == HIPOBJ_OK) {
    snprintf(cell, sizeof table[0][0], "recovered (%u retries)", retries);
  } else if (!msg || !*msg) {
    snprintf(cell, sizeof table[0][0], "BAD: error %d without a message", st);
    bad_cells++;
  } else {
    snprintf(cell, sizeof table[0][0], "error %s: %.60s", hipobj_strerror(st),
             msg);
  }
  fprintf(stderr, "matrix: %-20s %-14s %s%s\n", f->name, op_names[k], cell,
          orphans ? " (uploads left)" : "");
  if (orphans && sp && !strcmp(sp, "CreateMultipartUpload:badxml")) {
    /* The upload exists, but its id was in the answer that never
     * parsed: nothing the client can abort (S3 users rely on a lifecycle
     * rule for these). */
    size_t l = strlen(cell);
    snprintf(cell + l, sizeof table[0][0] - l, " GAP: upload left, id unknown");
    gaps++;
  } else if (orphans) {
    size_t l = strlen(cell);
    snprintf(cell + l, sizeof table[0][0] - l, " BAD: %d upload(s) left",
             orphans);
    bad_cells++;
  }
}

static void print_table(void) {
  fprintf(stderr, "\nfault matrix (%s)\n", rdma ? "RDMA auto" : "HTTP");
  fprintf(stderr, "%-20s", "fault");
  for (int k = 0; k < N_OPS; k++)
    fprintf(stderr, " | %-40s", op_names[k]);
  fprintf(stderr, "\n");
  for (size_t f = 0; f < N_FAULTS; f++) {
    fprintf(stderr, "%-20s", faults[f].name);
    for (int k = 0; k < N_OPS; k++)
      fprintf(stderr, " | %-40.40s", table[f][k]);
    fprintf(stderr, "\n");
  }
  fprintf(stderr, "%d bad cell(s), %d known gap(s)\n", bad_cells, gaps);
}

Test(matrix, every_fault_recovers_or_names_its_cause, .timeout = 600) {
  const char *r = getenv("HIPOBJ_MATRIX_RDMA");
  rdma = r && *r == '1';
  hipobj_global_init();
  hipobj_error_create(&err);
  const char *extra[] = {rdma ? "--rdma" : NULL, "auto", NULL};
  srv_start(&srv, NULL, extra);
  snprintf(port_arg, sizeof port_arg, "%s", strstr(srv.url, "127.0.0.1:"));
  cli = matrix_client(NULL);
  cr_assert_eq(hipobj_s3_create_bucket(cli, T_BUCKET, err), HIPOBJ_OK, "%s",
               hipobj_error_message(err));
  expect_obj = put_pattern(cli, "matrix-src", OBJ, 7);
  put_data = malloc(MPUT_N);
  cr_assert_not_null(put_data);
  fill_pattern(put_data, MPUT_N, 8);
  for (size_t f = 0; f < N_FAULTS; f++)
    for (int k = 0; k < N_OPS; k++)
      run_cell(f, (enum op)k);
  print_table();
  free(expect_obj);
  free(put_data);
  hipobj_client_free(cli);
  srv_cleanup(&srv);
  hipobj_error_free(err);
  hipobj_global_cleanup();
  cr_assert_eq(bad_cells, 0, "%d bad cell(s): see the table", bad_cells);
}
