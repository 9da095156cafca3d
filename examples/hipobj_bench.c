/* hipobj_bench.c - `hipobj bench`: measures hipObject through its public API
 * only. For every object size x concurrency x memory kind it PUTs and GETs
 * one object --runs times (after untimed warm-up runs), checks every GET
 * byte for byte against the buffer it PUT, and reports the median and spread
 * of the throughput and of the client CPU time per GiB (getrusage of the
 * whole process, so the library's worker threads count). --small N instead
 * times N GETs of small objects on one client (connection reuse) and
 * reports requests/s. Results: a table on stdout, optionally CSV, JSON and a
 * gnuplot PNG. The bench creates its own bucket and objects and removes
 * them, also after a failure or a first Ctrl-C. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hipobj_bench.h"

/* GPU memory hook. These are declared weak (and repeated here, identical to
 * hipobj.h) so that the tool builds and runs against a library without GPU
 * support: their address is then NULL and --memory gpu is skipped with a
 * message instead of failing to link. */
int hipobj_gpu_alloc(enum hipobj_mem_kind kind, int device, size_t len,
                     struct hipobj_mem *out, struct hipobj_error *err);
void hipobj_gpu_free(struct hipobj_mem *mem);
int hipobj_gpu_copy(const struct hipobj_mem *dst, const struct hipobj_mem *src,
                    struct hipobj_error *err);
#pragma weak hipobj_gpu_alloc
#pragma weak hipobj_gpu_free
#pragma weak hipobj_gpu_copy

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
/* Small objects are repeated within a run until about this many bytes have
 * moved (at most REPS_MAX times), so a run lasts long enough to time. */
#define REPS_BYTES (64 * MIB)
#define REPS_MAX 256u

const char bench_usage_text[] =
    "usage: hipobj [GLOBAL OPTIONS] bench [OPTIONS]\n"
    "\n"
    "Benchmarks the library against the endpoint: PUT and GET of each size\n"
    "x concurrency x memory, --runs timed runs after --warmup untimed ones;\n"
    "every GET is checked byte for byte. Reports median [min .. max] of MB/s\n"
    "and of client CPU seconds (user+sys) per GiB.\n"
    "\n"
    "  --sizes LIST          object sizes (default 4KiB,1MiB,64MiB,1GiB)\n"
    "  --concurrency LIST    parallel parts per transfer, one client each\n"
    "                        (default: the global --concurrency, else 8)\n"
    "  --ops get,put         what to time (default both)\n"
    "  --runs N, --warmup N  timed runs per case (5), untimed ones first (1)\n"
    "  --part-size SIZE      multipart part size (default: library's)\n"
    "  --unsigned-payload    send UNSIGNED-PAYLOAD (no SHA-256 of the body,\n"
    "                        no checksum; default: hipobj's --integrity)\n"
    "  --rdma auto|off|require  data path; require fails unless the results\n"
    "                        report an RDMA path (default auto)\n"
    "  --memory LIST         host, gpu or host,gpu (default host; gpu is\n"
    "                        skipped, saying why, when unavailable)\n"
    "  --gpu-device N        GPU ordinal (HIP tried first, then CUDA)\n"
    "  --small N [--small-size 4KiB]  instead: GETs of N small objects on\n"
    "                        one client, reported as requests/s\n"
    "  --bucket NAME         default hipobj-bench-PID-TIME (made, removed)\n"
    "  --csv FILE, --json FILE   write the results there\n"
    "  --plot FILE.png       throughput against size (needs gnuplot)\n"
    "  --endpoint-url URL, --region R, --profile P, --no-verify-ssl,\n"
    "  --ca-bundle FILE, --debug, -q/--quiet   as the global options\n";

/* One timed run: wall and CPU seconds, bytes and requests. */
struct sample {
  double secs, cpu;
  uint64_t bytes, reqs;
};

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Percentile q (0..1) of sorted v, interpolating between neighbours. */
static double pct(const double *v, size_t n, double q) {
  double at = q * (double)(n - 1);
  size_t i = (size_t)at;
  if (i + 1 >= n)
    return v[n - 1];
  return v[i] + (v[i + 1] - v[i]) * (at - (double)i);
}

static struct stat5 summarize(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  struct stat5 s = {pct(v, n, 0.5), v[0], v[n - 1], pct(v, n, 0.1),
                    pct(v, n, 0.9)};
  return s;
}

/* Fills the result's statistics from the runs' samples. */
static void result_stats(struct result *r, const struct sample *s, size_t n) {
  double mbps[n], reqps[n], gib[n], us[n];
  for (size_t i = 0; i < n; i++) {
    double secs = s[i].secs > 1e-9 ? s[i].secs : 1e-9;
    mbps[i] = (double)s[i].bytes / secs / 1e6;
    reqps[i] = (double)s[i].reqs / secs;
    gib[i] = s[i].bytes ? s[i].cpu / ((double)s[i].bytes / (double)GIB) : 0;
    us[i] = s[i].reqs ? s[i].cpu * 1e6 / (double)s[i].reqs : 0;
  }
  r->mbps = summarize(mbps, n);
  r->reqps = summarize(reqps, n);
  r->cpu_gib = summarize(gib, n);
  r->cpu_us = summarize(us, n);
}

/* ---- command line ---- */

static int parse_u(const char *opt, const char *v, unsigned lo, unsigned hi,
                   unsigned *out) {
  char *end = NULL;
  errno = 0;
  unsigned long x = strtoul(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi)
    return report_usage("%s: '%s' is not a number in %u..%u", opt, v, lo, hi);
  *out = (unsigned)x;
  return 0;
}

/* Splits a comma-separated LIST into at most MAX_LIST words, each checked
 * and stored by fn. */
static int parse_list(const char *opt, const char *v,
                      int (*fn)(struct bench *, const char *, const char *),
                      struct bench *b) {
  char word[128];
  const char *p = v;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= sizeof word)
      return report_usage("%s: bad list '%s'", opt, v);
    memcpy(word, p, len);
    word[len] = '\0';
    int rc = fn(b, opt, word);
    if (rc)
      return rc;
    if (!comma)
      return 0;
    p = comma + 1;
  }
}

static int add_size(struct bench *b, const char *opt, const char *w) {
  uint64_t v = 0;
  if (hipobj_parse_size(w, &v) != HIPOBJ_OK || v == 0 || v > SIZE_MAX / 4)
    return report_usage("%s: '%s' is not a size (e.g. 4KiB,1MiB,1GiB)", opt, w);
  if (b->nsizes == MAX_LIST)
    return report_usage("%s: at most %d sizes", opt, MAX_LIST);
  b->sizes[b->nsizes++] = v;
  return 0;
}

static int add_conc(struct bench *b, const char *opt, const char *w) {
  if (b->nconc == MAX_LIST)
    return report_usage("%s: at most %d values", opt, MAX_LIST);
  return parse_u(opt, w, 1, 1024, &b->conc[b->nconc++]);
}

/* --ops and --memory: each word sets one of two flags. */
static int add_word(const char *opt, const char *w, const char *n1, int *f1,
                    const char *n2, int *f2) {
  if (strcmp(w, n1) && strcmp(w, n2))
    return report_usage("%s: '%s' is neither %s nor %s", opt, w, n1, n2);
  *(strcmp(w, n1) ? f2 : f1) = 1;
  return 0;
}

static int add_op(struct bench *b, const char *opt, const char *w) {
  return add_word(opt, w, "get", &b->do_get, "put", &b->do_put);
}

static int add_mem(struct bench *b, const char *opt, const char *w) {
  return add_word(opt, w, "host", &b->mem_host, "gpu", &b->mem_gpu);
}

/* Applies one option (value NULL for flags). *done: --help was shown. */
static int bench_option(struct bench *b, const char *name, const char *v,
                        int *used_value, int *done) {
  struct cli *c = b->c;
  const struct {
    const char *name;
    int *flag;
  } flags[] = {{"unsigned-payload", &b->unsigned_payload},
               {"no-verify-ssl", &c->no_verify_ssl},
               {"debug", &c->debug},
               {"quiet", &c->quiet},
               {"help", done}};
  *used_value = 0;
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (!strcmp(name, flags[i].name)) {
      if (flags[i].flag == done)
        fputs(bench_usage_text, stdout);
      return *flags[i].flag = 1, 0;
    }
  static const char valued[] =
      " sizes concurrency ops memory runs warmup small small-size part-size "
      "rdma gpu-device bucket csv json plot endpoint-url region profile "
      "ca-bundle ";
  char padded[72];
  snprintf(padded, sizeof padded, " %s ", name);
  if (!strstr(valued, padded))
    return report_usage("bench: unknown option '--%s'", name);
  *used_value = 1;
  if (!v)
    return report_usage("bench: option '--%s' needs a value", name);
  if (!strcmp(name, "sizes"))
    return b->nsizes = 0, parse_list("--sizes", v, add_size, b);
  if (!strcmp(name, "concurrency"))
    return b->nconc = 0, parse_list("--concurrency", v, add_conc, b);
  if (!strcmp(name, "ops"))
    return parse_list("--ops", v, add_op, b);
  if (!strcmp(name, "memory"))
    return parse_list("--memory", v, add_mem, b);
  if (!strcmp(name, "runs"))
    return parse_u("--runs", v, 1, 1000, &b->runs);
  if (!strcmp(name, "warmup"))
    return parse_u("--warmup", v, 0, 100, &b->warmup);
  if (!strcmp(name, "small"))
    return parse_u("--small", v, 1, 1000000, &b->small_count);
  if (!strcmp(name, "small-size") || !strcmp(name, "part-size")) {
    uint64_t x = 0;
    if (hipobj_parse_size(v, &x) != HIPOBJ_OK || x == 0 || x > 64 * MIB)
      return report_usage("--%s: '%s' is not a size up to 64MiB", name, v);
    *(name[0] == 's' ? &b->small_size : &b->part_size) = x;
    return 0;
  }
  if (!strcmp(name, "rdma")) {
    for (int m = RDMA_AUTO; m <= RDMA_REQUIRE; m++)
      if (!strcmp(v, rdma_names[m]))
        return b->rdma = (enum rdma_mode)m, 0;
    return report_usage("--rdma: '%s' is not auto, off or require", v);
  }
  if (!strcmp(name, "gpu-device"))
    return parse_u("--gpu-device", v, 0, 1023, &b->gpu_device);
  if (!strcmp(name, "bucket")) {
    if (strlen(v) < 3 || strlen(v) >= sizeof b->bucket)
      return report_usage("--bucket: '%s' is not 3..63 characters", v);
    snprintf(b->bucket, sizeof b->bucket, "%s", v);
    return 0;
  }
  const char **strs[] = {&b->csv,          &b->json,   &b->plot,
                         &c->endpoint_url, &c->region, &c->profile,
                         &c->ca_bundle};
  static const char *const str_names[] = {
      "csv", "json", "plot", "endpoint-url", "region", "profile", "ca-bundle"};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (!strcmp(name, str_names[i]))
      return *strs[i] = v, 0;
  return report_usage("bench: option '--%s' is not handled", name);
}

static int bench_args(struct bench *b, int argc, char **argv, int *done) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    a = !strcmp(a, "-h") ? "--help" : !strcmp(a, "-q") ? "--quiet" : a;
    if (strncmp(a, "--", 2) || !a[2])
      return report_usage("bench: unexpected argument '%s'", a);
    char name[64];
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (len >= sizeof name)
      return report_usage("bench: unknown option '%s'", a);
    memcpy(name, a + 2, len);
    name[len] = '\0';
    const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    int used = 0, rc = bench_option(b, name, v, &used, done);
    if (rc || *done)
      return rc;
    if (eq && !used)
      return report_usage("bench: option '--%s' takes no value", name);
    if (used && !eq)
      i++;
  }
  return 0;
}

/* ---- setup ---- */

/* One client per concurrency: the library reads concurrency from the
 * client's configuration (a GET has no per-call setting). */
static int bench_client(struct bench *b, unsigned conc,
                        struct hipobj_client **out) {
  struct cli *c = b->c;
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = c->endpoint_url;
  cfg.region = c->region;
  cfg.profile = c->profile;
  cfg.tls_skip_verify = c->no_verify_ssl;
  cfg.ca_bundle = c->ca_bundle;
  cfg.part_size = b->part_size ? b->part_size : c->part_size;
  cfg.concurrency = conc;
  cfg.io_threads = c->io_threads;
  cfg.staging_pool_bytes = c->staging_pool;
  if (conc > 16)
    cfg.max_connections = conc; /* more parts than connections would queue */
  cfg.integrity = b->unsigned_payload ? HIPOBJ_INTEGRITY_NONE : c->integrity;
  cfg.log_level = c->debug ? HIPOBJ_LOG_DEBUG : HIPOBJ_LOG_DEFAULT;
  /* The library enforces the policy; check_path() also verifies that
   * require really gave RDMA paths. */
  cfg.rdma_policy = b->rdma == RDMA_OFF       ? HIPOBJ_RDMA_OFF
                    : b->rdma == RDMA_REQUIRE ? HIPOBJ_RDMA_REQUIRE
                                              : HIPOBJ_RDMA_AUTO;
  if (hipobj_client_create(&cfg, out, b->err) != HIPOBJ_OK) {
    *out = NULL;
    return report_lib(c, NULL, b->err);
  }
  return 0;
}

/* Deterministic pseudo-random bytes (xorshift64*), so a GET that returns
 * the wrong object or stale bytes cannot match by accident. */
static void fill_random(unsigned char *p, size_t n, uint64_t seed) {
  uint64_t x = seed | 1;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    uint64_t v = x * 0x2545F4914F6CDD1DULL;
    memcpy(p + i, &v, 8);
  }
  for (; i < n; i++)
    p[i] = (unsigned char)(i * 131u);
}

/* Marks the first and last 8 bytes with a case number, so objects of
 * different cases differ although they share one source buffer. */
static void stamp(unsigned char *p, uint64_t size, uint64_t tag) {
  size_t n = size < 8 ? (size_t)size : 8;
  memcpy(p, &tag, n);
  memcpy(p + size - n, &tag, n);
}

/* Allocates the device buffer for --memory gpu. Returns 1 when usable, 0
 * (after saying why) when gpu is to be skipped. */
static int gpu_setup(struct bench *b) {
  if (!hipobj_gpu_alloc || !hipobj_gpu_free || !hipobj_gpu_copy) {
    fprintf(stderr, "hipobj bench: skipping --memory gpu: this libhipobj "
                    "has no GPU memory support (hipobj_gpu_* absent)\n");
    return 0;
  }
  const enum hipobj_mem_kind kinds[2] = {HIPOBJ_MEM_HIP, HIPOBJ_MEM_CUDA};
  char why[2][512]; /* said only when neither kind works */
  for (size_t i = 0; i < 2; i++) {
    b->gpu = (struct hipobj_mem)HIPOBJ_MEM_INIT;
    if (hipobj_gpu_alloc(kinds[i], (int)b->gpu_device, (size_t)b->max_size,
                         &b->gpu, b->err) == HIPOBJ_OK)
      return 1;
    snprintf(why[i], sizeof why[i], "%s", hipobj_error_message(b->err));
  }
  cli_print(stderr, "hipobj bench: skipping --memory gpu: HIP: %s; CUDA: %s\n",
            why[0], why[1]);
  return 0;
}

/* b->res has room for every case (allocated in bench_main). */
static struct result *add_result(struct bench *b) {
  struct result *r = &b->res[b->nres++];
  memset(r, 0, sizeof *r);
  return r;
}

/* ---- the measurements ---- */

/* Records the data path of a transfer; with --rdma require, anything but
 * RDMA fails the bench. */
static int check_path(struct bench *b, struct result *r,
                      const struct hipobj_xfer_result *x) {
  const char *name = hipobj_data_path_name(x->path);
  if (!r->path[0])
    snprintf(r->path, sizeof r->path, "%s", name);
  else if (strcmp(r->path, name))
    snprintf(r->path, sizeof r->path, "mixed");
  if (b->rdma == RDMA_REQUIRE && x->path != HIPOBJ_PATH_RDMA_DIRECT &&
      x->path != HIPOBJ_PATH_RDMA_STAGED)
    return report_msg("--rdma require", "a transfer took path %s", name);
  return 0;
}

/* The memory descriptor of one case: host buffer or the GPU buffer. */
static struct hipobj_mem case_mem(struct bench *b, int gpu, void *host,
                                  uint64_t size) {
  struct hipobj_mem m = hipobj_mem_host(host, (size_t)size);
  if (gpu)
    m = b->gpu, m.len = (size_t)size;
  return m;
}

/* One timed transfer: PUT of data, or GET into b->dst checked against
 * data. With gpu the object goes through the device buffer, which the
 * caller has loaded with data for a PUT. */
static int xfer(struct bench *b, struct hipobj_client *cl, const char *key,
                int put, int gpu, unsigned char *data, uint64_t size,
                struct result *r, struct sample *s) {
  struct hipobj_xfer_result x = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem m = case_mem(b, gpu, put ? data : b->dst, size);
  struct hipobj_mem h = hipobj_mem_host(b->dst, (size_t)size);
  int st;
  if (!put) { /* a GET must overwrite all of it: poison it first */
    memset(b->dst, 0xA5, (size_t)size);
    if (gpu && hipobj_gpu_copy(&m, &h, b->err) != HIPOBJ_OK)
      return report_lib(b->c, "copy to the GPU", b->err);
  }
  /* CPU first: the timed window holds the library call alone, not the
   * getrusage(2) of the CPU count (on small GETs about 1% of the time). */
  double c0 = cpu_seconds(), t0 = now_seconds();
  if (put)
    st = hipobj_s3_put(cl, b->bucket, key, &m, NULL, &x, b->err);
  else
    st = hipobj_s3_get(cl, b->bucket, key, &m, NULL, &x, b->err);
  s->secs += now_seconds() - t0;
  s->cpu += cpu_seconds() - c0;
  s->bytes += size;
  s->reqs++;
  if (st != HIPOBJ_OK)
    return report_lib(b->c, key, b->err);
  if (check_path(b, r, &x))
    return CLI_EXIT_FAIL;
  if (put)
    return 0;
  if (gpu && hipobj_gpu_copy(&h, &m, b->err) != HIPOBJ_OK)
    return report_lib(b->c, "copy from the GPU", b->err);
  if (x.bytes != size || memcmp(b->dst, data, (size_t)size))
    return report_msg(key, "GET returned different bytes than were PUT");
  return 0;
}

static int interrupted(void) { /* after a first Ctrl-C: clean up, stop */
  report_msg("bench", "interrupted");
  return CLI_EXIT_INTERRUPTED;
}

/* One case: nobj objects of one size (one, or N with --small), PUT by the
 * put phase and read back by the get phase; reps transfers of each per run
 * (small objects are repeated so a run lasts long enough to time). */
struct bcase {
  uint64_t size, tag;
  unsigned conc, nobj, reps;
  int gpu;
  const char *prefix; /* "" or "small-" */
};

static void case_key(const struct bcase *k, unsigned o, char *key, size_t len) {
  snprintf(key, len, "hipobj-bench/%s%" PRIu64 "-c%u-%s-%06u", k->prefix,
           k->size, k->conc, k->gpu ? "gpu" : "host", o);
}

/* Warm-up, then timed runs of one op over the case's objects. */
static int run_op(struct bench *b, struct hipobj_client *cl,
                  const struct bcase *k, int put, unsigned warmup,
                  unsigned runs) {
  struct result *r = add_result(b);
  snprintf(r->op, sizeof r->op, "%s%s", k->prefix, put ? "put" : "get");
  r->size = k->size, r->conc = k->conc, r->runs = runs;
  r->reps = k->reps * k->nobj, r->mem = k->gpu ? "gpu" : "host";
  struct sample samples[runs ? runs : 1];
  char key[128];
  for (unsigned run = 0; run < warmup + runs; run++) {
    struct sample s = {0, 0, 0, 0};
    for (unsigned i = 0; i < r->reps; i++) {
      unsigned o = i % k->nobj;
      case_key(k, o, key, sizeof key);
      if (cli_interrupted)
        return interrupted();
      int rc = xfer(b, cl, key, put, k->gpu, b->src + (size_t)o * k->size,
                    k->size, r, &s);
      if (rc)
        return rc;
    }
    if (run >= warmup)
      samples[run - warmup] = s;
  }
  if (runs)
    result_stats(r, samples, runs);
  return 0;
}

/* PUT then GET of the case's objects, then their removal. */
static int bench_case(struct bench *b, struct hipobj_client *cl,
                      const struct bcase *k) {
  char key[128];
  for (unsigned o = 0; o < k->nobj; o++)
    stamp(b->src + (size_t)o * k->size, k->size, k->tag + o);
  if (k->gpu) { /* nobj is 1 here: --small is host only */
    struct hipobj_mem h = hipobj_mem_host(b->src, (size_t)k->size);
    struct hipobj_mem d = case_mem(b, 1, NULL, k->size);
    if (hipobj_gpu_copy(&d, &h, b->err) != HIPOBJ_OK)
      return report_lib(b->c, "copy to the GPU", b->err);
  }
  /* Without put in --ops the objects are still written, once, untimed. */
  int rc =
      run_op(b, cl, k, 1, b->do_put ? b->warmup : 1, b->do_put ? b->runs : 0);
  if (!b->do_put && !rc)
    b->nres--;
  if (!rc && b->do_get)
    rc = run_op(b, cl, k, 0, b->warmup, b->runs);
  for (unsigned o = 0; o < k->nobj; o++) {
    case_key(k, o, key, sizeof key);
    if (hipobj_s3_delete(cl, b->bucket, key, b->err) != HIPOBJ_OK && !rc)
      rc = report_lib(b->c, key, b->err);
  }
  return rc;
}

/* ---- the command ---- */

static int bench_main(struct bench *b) {
  struct hipobj_client *cl = NULL;
  int rc = 0, gpu_ok = 0;
  if (b->small_count) {
    if ((uint64_t)b->small_count * b->small_size > 4 * GIB)
      return report_usage("--small N x --small-size: over 4 GiB");
    b->max_size = (uint64_t)b->small_count * b->small_size;
    b->nconc = 1, b->conc[0] = 1, b->mem_gpu = 0;
  }
  for (size_t i = 0; i < b->nsizes && !b->small_count; i++)
    if (b->sizes[i] > b->max_size)
      b->max_size = b->sizes[i];
  b->src = malloc((size_t)b->max_size);
  b->dst = malloc((size_t)b->max_size);
  b->res = calloc(b->nsizes * b->nconc * 4 + 2, sizeof *b->res);
  if (!b->src || !b->dst || !b->res)
    return report_msg("bench", "cannot allocate 2 x %" PRIu64 " bytes",
                      b->max_size);
  fill_random(b->src, (size_t)b->max_size, (uint64_t)time(NULL));
  if (b->mem_gpu)
    gpu_ok = gpu_setup(b);
  if ((rc = bench_client(b, b->nconc ? b->conc[0] : 0, &cl)) != 0)
    return rc;
  if (!b->bucket[0])
    snprintf(b->bucket, sizeof b->bucket, "hipobj-bench-%ld-%lld",
             (long)getpid(), (long long)time(NULL));
  if (hipobj_s3_create_bucket(cl, b->bucket, b->err) == HIPOBJ_OK)
    b->bucket_created = 1;
  else if (strcmp(hipobj_error_s3_code(b->err), "BucketAlreadyOwnedByYou"))
    rc = report_lib(b->c, b->bucket, b->err);
  if (!rc && !b->c->quiet)
    cli_print(stderr,
              "hipobj bench: %s, bucket %s, %u run(s) after %u warm-up, "
              "rdma %s, %ld CPU(s), libhipobj %s\n",
              hipobj_client_endpoint(cl), b->bucket, b->runs, b->warmup,
              rdma_names[b->rdma], sysconf(_SC_NPROCESSORS_ONLN),
              hipobj_version());
  signals_set_soft(1); /* a first Ctrl-C stops at the next transfer */
  if (!rc && b->small_count) {
    struct bcase k = {b->small_size, 1, 1, b->small_count, 1, 0, "small-"};
    rc = bench_case(b, cl, &k);
  }
  for (size_t ci = 0; ci < b->nconc && !rc && !b->small_count; ci++) {
    if (ci > 0) {
      hipobj_client_free(cl);
      if ((rc = bench_client(b, b->conc[ci], &cl)) != 0)
        break;
    }
    for (int gpu = 0; gpu < 2 && !rc; gpu++) {
      if (gpu ? !(b->mem_gpu && gpu_ok) : !b->mem_host)
        continue;
      for (size_t si = 0; si < b->nsizes && !rc; si++) {
        if (!b->c->quiet)
          fprintf(stderr, "hipobj bench: %" PRIu64 " B, concurrency %u, %s\n",
                  b->sizes[si], b->conc[ci], gpu ? "gpu" : "host");
        uint64_t reps = REPS_BYTES / b->sizes[si], tag = ci * 1000 + si * 10;
        struct bcase k = {b->sizes[si], tag + (uint64_t)gpu, b->conc[ci], 1};
        k.reps = reps < 1 ? 1 : reps > REPS_MAX ? REPS_MAX : (unsigned)reps;
        k.gpu = gpu, k.prefix = "";
        rc = bench_case(b, cl, &k);
      }
    }
  }
  if (cl && b->bucket_created &&
      hipobj_s3_delete_bucket(cl, b->bucket, b->err) != HIPOBJ_OK)
    report_lib(b->c, b->bucket, b->err); /* reported, not a bench failure */
  signals_set_soft(0);
  if (!rc && b->nres) {
    bench_print_table(b);
    if (b->csv && !rc)
      rc = bench_write_csv(b);
    if (b->json && !rc)
      rc = bench_write_json(b, cl);
    if (b->plot && !rc)
      rc = bench_write_plot(b);
  }
  hipobj_client_free(cl);
  return rc;
}

int cmd_bench(struct cli *c, int argc, char **argv) {
  struct bench b;
  memset(&b, 0, sizeof b);
  b.c = c;
  b.runs = 5, b.warmup = 1, b.small_size = 4096, b.rdma = RDMA_AUTO;
  int done = 0, rc = bench_args(&b, argc, argv, &done);
  if (rc || done)
    return rc;
  if (!b.do_get && !b.do_put)
    b.do_get = b.do_put = 1;
  if (!b.mem_host && !b.mem_gpu)
    b.mem_host = 1;
  if (!b.nsizes)
    parse_list("--sizes", "4KiB,1MiB,64MiB,1GiB", add_size, &b);
  if (!b.nconc)
    b.conc[b.nconc++] = c->concurrency ? c->concurrency : 8;
  if (hipobj_error_create(&b.err) != HIPOBJ_OK)
    return report_errno("bench", ENOMEM);
  rc = bench_main(&b);
  if (b.gpu.ptr)
    hipobj_gpu_free(&b.gpu);
  free(b.src);
  free(b.dst);
  free(b.res);
  hipobj_error_free(b.err);
  return rc;
}
