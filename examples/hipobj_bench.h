/* hipobj_bench.h - `hipobj bench`, the benchmark subcommand of the hipobj
 * tool (hipobj_bench.c). Kept apart from hipobj_cli.h so the benchmark can
 * change without touching the other commands. */
#ifndef HIPOBJ_BENCH_H
#define HIPOBJ_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "hipobj_cli.h"

#define MAX_LIST 32

/* The internals shared by hipobj_bench.c (setup, measurements) and
 * hipobj_bench_out.c (the table, CSV, JSON and plot). */
enum rdma_mode { RDMA_AUTO, RDMA_OFF, RDMA_REQUIRE };
extern const char *const rdma_names[];

struct bench {
  struct cli *c;
  uint64_t sizes[MAX_LIST];
  size_t nsizes;
  unsigned conc[MAX_LIST];
  size_t nconc;
  int do_get, do_put, mem_host, mem_gpu;
  unsigned runs, warmup, small_count;
  uint64_t small_size, part_size;
  int unsigned_payload;
  unsigned gpu_device;
  enum rdma_mode rdma;
  char bucket[64];
  int bucket_created;
  const char *csv, *json, *plot;
  unsigned char *src, *dst; /* host buffers of the largest size */
  uint64_t max_size;
  struct hipobj_mem gpu; /* device buffer of the largest size, or empty */
  struct hipobj_error *err;
  struct result *res;
  size_t nres;
};

/* Median, spread and percentiles of one quantity over the runs. */
struct stat5 {
  double median, min, max, p10, p90;
};

/* One line of the result table. */
struct result {
  char op[12];
  uint64_t size;
  unsigned conc, runs, reps; /* reps: transfers per run */
  const char *mem;
  char path[16];
  struct stat5 mbps, reqps, cpu_gib, cpu_us; /* cpu_us: per request */
};

/* The results as a table on stdout, and in the files asked for; 0 or an
 * exit status after reporting. */
void bench_print_table(const struct bench *b);
int bench_write_csv(const struct bench *b);
int bench_write_json(const struct bench *b, struct hipobj_client *cl);
int bench_write_plot(const struct bench *b);

/* Usage of the bench command, printed by `hipobj bench --help`. */
extern const char bench_usage_text[];

/* Runs the benchmark. argv holds the words after "bench" (its own options,
 * which it parses itself: they are not the tool's global options). The
 * endpoint, region, profile, TLS and --debug settings of c apply; c->client
 * is not used (each concurrency gets its own client). Returns an exit
 * status (CLI_EXIT_*). */
int cmd_bench(struct cli *c, int argc, char **argv);

#endif
