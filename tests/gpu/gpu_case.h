/* gpu_case.h - the case helpers shared by the GPU programs gpu_suite.c and
 * multi_gpu.c (plain programs, not Criterion: they run on the GPU machine):
 * a case returns 0, -1 with its reason in `why` (failf, CHECK, CHECK_OK)
 * or SKIP. CHECK_OK reports the program's own `err` (struct
 * hipobj_error *). */
#ifndef HIPOBJ_TESTS_GPU_CASE_H
#define HIPOBJ_TESTS_GPU_CASE_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "hipobj.h"

#define SKIP 77

static char why[1024]; /* the current case's failure or skip reason */

static int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return -1;
}

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond))                                                               \
      return failf(__VA_ARGS__);                                               \
  } while (0)
#define CHECK_OK(call, what)                                                   \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != HIPOBJ_OK)                                                      \
      return failf("%s: %s: %s", what, hipobj_strerror(rc_),                   \
                   hipobj_error_message(err));                                 \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
