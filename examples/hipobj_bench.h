/* hipobj_bench.h - `hipobj bench`, the benchmark subcommand of the hipobj
 * tool (hipobj_bench.c). Kept apart from hipobj_cli.h so the benchmark can
 * change without touching the other commands. */
#ifndef HIPOBJ_BENCH_H
#define HIPOBJ_BENCH_H

#include "hipobj_cli.h"

/* Usage of the bench command, printed by `hipobj bench --help`. */
extern const char bench_usage_text[];

/* Runs the benchmark. argv holds the words after "bench" (its own options,
 * which it parses itself: they are not the tool's global options). The
 * endpoint, region, profile, TLS and --debug settings of c apply; c->client
 * is not used (each concurrency gets its own client). Returns an exit
 * status (CLI_EXIT_*). */
int cmd_bench(struct cli *c, int argc, char **argv);

#endif
