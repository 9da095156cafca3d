/* hipobj_bench_out.c - what `hipobj bench` (hipobj_bench.c) reports: the
 * result table on stdout (MB/s are 10^6 bytes per second, as the
 * benchmark scripts of tests/bench and the tools they compare with
 * report), and the CSV, JSON and gnuplot PNG files asked for. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj_bench.h"

const char *const rdma_names[] = {"auto", "off", "require"};

void bench_print_table(const struct bench *b) {
  printf("%-9s %9s %4s %-4s %-11s %4s %28s %23s %8s\n", "op", "size", "conc",
         "mem", "path", "runs", "MB/s median [min .. max]",
         "CPU s/GiB [min .. max]", "req/s");
  for (size_t i = 0; i < b->nres; i++) {
    const struct result *r = &b->res[i];
    char sz[32];
    fmt_bytes(r->size, sz, sizeof sz);
    printf("%-9s %9s %4u %-4s %-11s %4u %8.1f [%7.1f .. %7.1f] %6.3f [%.3f .. "
           "%.3f] %8.0f\n",
           r->op, sz, r->conc, r->mem, r->path, r->runs, r->mbps.median,
           r->mbps.min, r->mbps.max, r->cpu_gib.median, r->cpu_gib.min,
           r->cpu_gib.max, r->reqps.median);
  }
}

int bench_write_csv(const struct bench *b) {
  FILE *f = fopen(b->csv, "w");
  if (!f)
    return report_errno(b->csv, errno);
  fputs("op,size_bytes,concurrency,memory,path,runs,reps_per_run,mbps_median,"
        "mbps_min,mbps_max,mbps_p10,mbps_p90,reqps_median,reqps_min,reqps_max,"
        "cpu_s_per_gib_median,cpu_s_per_gib_min,cpu_s_per_gib_max,"
        "cpu_us_per_req_median\n",
        f);
  for (size_t i = 0; i < b->nres; i++) {
    const struct result *r = &b->res[i];
    fprintf(f,
            "%s,%" PRIu64 ",%u,%s,%s,%u,%u,%.2f,%.2f,%.2f,%.2f,%.2f,"
            "%.1f,%.1f,%.1f,%.4f,%.4f,%.4f,%.2f\n",
            r->op, r->size, r->conc, r->mem, r->path, r->runs, r->reps,
            r->mbps.median, r->mbps.min, r->mbps.max, r->mbps.p10, r->mbps.p90,
            r->reqps.median, r->reqps.min, r->reqps.max, r->cpu_gib.median,
            r->cpu_gib.min, r->cpu_gib.max, r->cpu_us.median);
  }
  if (fclose(f) != 0)
    return report_errno(b->csv, errno);
  return 0;
}

static void json_stat(FILE *f, const char *name, const struct stat5 *s) {
  fprintf(f,
          ",\"%s\":{\"median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
          "\"p10\":%.4f,\"p90\":%.4f}",
          name, s->median, s->min, s->max, s->p10, s->p90);
}

int bench_write_json(const struct bench *b, struct hipobj_client *cl) {
  FILE *f = fopen(b->json, "w");
  if (!f)
    return report_errno(b->json, errno);
  fputs("{\"tool\":\"hipobj bench\"", f);
  json_str(f, "library", hipobj_version());
  json_str(f, "endpoint", cl ? hipobj_client_endpoint(cl) : "");
  json_str(f, "bucket", b->bucket);
  json_u64(f, "runs", b->runs);
  json_u64(f, "warmup", b->warmup);
  json_str(f, "rdma", rdma_names[b->rdma]);
  static const char *const integrity_names[] = {"auto", "sha256", "none"};
  json_str(f, "integrity",
           integrity_names[b->unsigned_payload ? HIPOBJ_INTEGRITY_NONE
                                               : b->c->integrity]);
  json_u64(f, "nproc", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
  fputs(",\"results\":[\n", f);
  for (size_t i = 0; i < b->nres; i++) {
    const struct result *r = &b->res[i];
    if (i)
      fputc(',', f);
    json_begin(f, r->op);
    json_u64(f, "size", r->size);
    json_u64(f, "concurrency", r->conc);
    json_str(f, "memory", r->mem);
    json_str(f, "path", r->path);
    json_u64(f, "runs", r->runs);
    json_u64(f, "reps_per_run", r->reps);
    json_stat(f, "MBps", &r->mbps);
    json_stat(f, "req_per_s", &r->reqps);
    json_stat(f, "cpu_s_per_GiB", &r->cpu_gib);
    json_stat(f, "cpu_us_per_req", &r->cpu_us);
    json_end(f);
  }
  fputs("]}\n", f);
  if (fclose(f) != 0)
    return report_errno(b->json, errno);
  return 0;
}

static int same_series(const struct result *x, const struct result *y) {
  return !strcmp(x->op, y->op) && x->conc == y->conc && x->mem == y->mem;
}

/* Throughput against size, one line per op x concurrency x memory, through
 * gnuplot (skipped with a message when it is not installed). */
int bench_write_plot(const struct bench *b) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    fprintf(stderr, "hipobj bench: gnuplot not found, no plot written "
                    "(apt-get install gnuplot-nox)\n");
    return 0;
  }
  size_t head[64], nhead = 0; /* the first result of each series */
  for (size_t i = 0; i < b->nres && nhead < 64; i++) {
    size_t j = 0;
    while (j < i && !same_series(&b->res[j], &b->res[i]))
      j++;
    if (j == i)
      head[nhead++] = i;
  }
  FILE *g = popen("gnuplot", "w");
  if (!g)
    return report_errno("gnuplot", errno);
  fprintf(g,
          "set terminal png size 1000,600\nset output '%s'\n"
          "set logscale x 2\nset xtics ('1K' 1024, '4K' 4096, '16K' 16384, "
          "'64K' 65536, '256K' 262144, '1M' 1048576, '4M' 4194304, '16M' "
          "16777216, '64M' 67108864, '256M' 268435456, '1G' 1073741824)\n"
          "set yrange [0:*]\nset xlabel 'object size (KiB, MiB, GiB)'\n"
          "set ylabel 'MB/s (median, bars: min..max)'\nset key left top\n"
          "set grid\nset title 'hipobj bench, libhipobj %s'\nplot ",
          b->plot, hipobj_version());
  for (size_t h = 0; h < nhead; h++) {
    const struct result *r = &b->res[head[h]];
    fprintf(g, "%s'-' using 1:2:3:4 with yerrorlines title '%s c%u %s'",
            h ? ", " : "", r->op, r->conc, r->mem);
  }
  fputc('\n', g);
  for (size_t h = 0; h < nhead; h++) {
    for (size_t j = head[h]; j < b->nres; j++) {
      const struct result *q = &b->res[j];
      if (same_series(q, &b->res[head[h]]))
        fprintf(g, "%" PRIu64 " %.2f %.2f %.2f\n", q->size, q->mbps.median,
                q->mbps.min, q->mbps.max);
    }
    fputs("e\n", g);
  }
  int st = pclose(g);
  if (st != 0)
    return report_msg(b->plot, "gnuplot failed (status %d)", st);
  return 0;
}
