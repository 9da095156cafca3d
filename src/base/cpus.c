/* cpus.c - how many CPUs this process may use: its affinity mask, cut by a
 * cgroup CPU quota anywhere on its cgroup's path. A container limited to 2
 * CPUs on a 64-core host still sees 64 online CPUs and an affinity mask of
 * 64; planning I/O and hashing threads, or mapped file writes, for 64
 * there would oversubscribe it (a mapped 1 GiB GET on 2 CPUs took 0.97 s
 * against 0.71 s with pwrite). Reads cgroup v2 (cpu.max) and v1 (the cpu
 * controller's cpu.cfs_quota_us and cpu.cfs_period_us). */
#include "cpus.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of a small file, or -1. */
static int read_line(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "re");
  if (!f)
    return -1;
  char *ok = fgets(buf, (int)len, f);
  fclose(f);
  if (!ok)
    return -1;
  buf[strcspn(buf, "\n")] = '\0';
  return 0;
}

/* quota / period in whole CPUs, rounded up; 0 for no limit or junk. */
static unsigned ratio(long long quota, long long period) {
  if (quota <= 0 || period <= 0)
    return 0;
  long long n = (quota + period - 1) / period;
  return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

/* The quota set on one cgroup directory, or 0. */
static unsigned dir_quota(const char *dir, int v2) {
  char path[PATH_MAX], line[128];
  if (v2) {
    /* "max 100000" or "200000 100000" */
    if (snprintf(path, sizeof path, "%s/cpu.max", dir) >= (int)sizeof path ||
        read_line(path, line, sizeof line) != 0)
      return 0;
    long long q, p;
    return sscanf(line, "%lld %lld", &q, &p) == 2 ? ratio(q, p) : 0;
  }
  long long q, p;
  if (snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >=
          (int)sizeof path ||
      read_line(path, line, sizeof line) != 0 || sscanf(line, "%lld", &q) != 1)
    return 0;
  if (snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >=
          (int)sizeof path ||
      read_line(path, line, sizeof line) != 0 || sscanf(line, "%lld", &p) != 1)
    return 0;
  return ratio(q, p);
}

/* The tightest quota from base+path up to base, or 0. */
static unsigned path_quota(const char *base, const char *path, int v2) {
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s%s", base, path) >= (int)sizeof dir)
    return 0;
  size_t stop = strlen(base);
  unsigned best = 0;
  for (;;) {
    unsigned q = dir_quota(dir, v2);
    if (q && (!best || q < best))
      best = q;
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < stop)
      break;
    *slash = '\0'; /* the parent; base itself once the path is used up */
  }
  return best;
}

/* Whether the v1 controller list "cpu,cpuacct" names cpu. */
static int names_cpu(const char *list) {
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    if (n == 3 && strncmp(p, "cpu", 3) == 0)
      return 1;
    p += n + (p[n] == ',');
  }
  return 0;
}

unsigned hcpu_quota_at(const char *root, const char *proc_cgroup) {
  FILE *f = fopen(proc_cgroup, "re");
  if (!f)
    return 0;
  unsigned best = 0;
  char line[PATH_MAX + 64];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    /* "0::/path" (v2) or "4:cpu,cpuacct:/path" (v1) */
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/')
      continue;
    *c1 = '\0';
    *c2 = '\0';
    const char *ctrl = c1 + 1, *path = c2 + 1;
    if (strcmp(path, "/") == 0)
      path = "";
    unsigned q = 0;
    if (*ctrl == '\0' && strcmp(line, "0") == 0) {
      q = path_quota(root, path, 1);
    } else if (names_cpu(ctrl)) {
      char base[PATH_MAX];
      if (snprintf(base, sizeof base, "%s/%s", root, ctrl) < (int)sizeof base)
        q = path_quota(base, path, 0);
    }
    if (q && (!best || q < best))
      best = q;
  }
  fclose(f);
  return best;
}

static unsigned usable;
static pthread_once_t usable_once = PTHREAD_ONCE_INIT;

static void usable_init(void) {
  cpu_set_t set;
  long n = sched_getaffinity(0, sizeof set, &set) == 0
               ? CPU_COUNT(&set)
               : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    n = 1;
  unsigned q = hcpu_quota_at("/sys/fs/cgroup", "/proc/self/cgroup");
  usable = q && q < (unsigned long)n ? q : (unsigned)n;
}

unsigned hcpu_usable(void) {
  pthread_once(&usable_once, usable_init);
  return usable;
}
