/* test_cpus.c - the CPU quota a process's cgroups impose (src/base/cpus.c),
 * read from cgroup trees written into a temp directory: v2 cpu.max with and
 * without a limit, rounding up, the tightest limit on the path winning, v1's
 * cpu controller, and unreadable or junk files meaning no limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/cpus.h"

static char root[] = "/tmp/hipobj-cpus-XXXXXX";

static void setup(void) {
  cr_assert_not_null(mkdtemp(root));
}

static void teardown(void) {
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", root);
}

TestSuite(cpus, .init = setup, .fini = teardown);

/* Writes text to root/rel, making the directories on the way. */
static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
    *p = '\0';
    mkdir(path, 0755);
    *p = '/';
  }
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* The quota for a /proc/self/cgroup file with these contents. */
static unsigned quota(const char *proc_cgroup) {
  put("proc-cgroup", proc_cgroup);
  char pc[512];
  snprintf(pc, sizeof pc, "%s/proc-cgroup", root);
  return hcpu_quota_at(root, pc);
}

Test(cpus, v2_limit_and_no_limit) {
  put("cpu.max", "200000 100000\n");
  cr_assert_eq(quota("0::/\n"), 2);
  put("cpu.max", "max 100000\n");
  cr_assert_eq(quota("0::/\n"), 0);
}

Test(cpus, v2_rounds_up_to_whole_cpus) {
  put("cpu.max", "150000 100000\n");
  cr_assert_eq(quota("0::/\n"), 2);
  put("cpu.max", "50000 100000\n");
  cr_assert_eq(quota("0::/\n"), 1);
}

Test(cpus, v2_tightest_on_the_path_wins) {
  put("kubepods/cpu.max", "300000 100000\n");
  put("kubepods/pod1/cpu.max", "max 100000\n");
  put("kubepods/pod1/ctr/cpu.max", "800000 100000\n");
  cr_assert_eq(quota("0::/kubepods/pod1/ctr\n"), 3);
  /* A sibling's limit does not apply. */
  put("other/cpu.max", "100000 100000\n");
  cr_assert_eq(quota("0::/kubepods/pod1/ctr\n"), 3);
}

Test(cpus, v1_cpu_controller) {
  put("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  put("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  cr_assert_eq(quota("12:memory:/docker/abc\n"
                     "4:cpu,cpuacct:/docker/abc\n"
                     "0::/\n"),
               3);
  put("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  cr_assert_eq(quota("4:cpu,cpuacct:/docker/abc\n"), 0);
  /* cpuacct alone is not the cpu controller. */
  put("cpuacct/x/cpu.cfs_quota_us", "100000\n");
  put("cpuacct/x/cpu.cfs_period_us", "100000\n");
  cr_assert_eq(quota("5:cpuacct:/x\n"), 0);
}

Test(cpus, missing_or_junk_means_no_limit) {
  cr_assert_eq(quota("0::/nowhere\n"), 0);
  put("j/cpu.max", "lots\n");
  cr_assert_eq(quota("0::/j\n"), 0);
  put("z/cpu.max", "100000 0\n");
  cr_assert_eq(quota("0::/z\n"), 0);
  cr_assert_eq(quota("garbage without colons\n"), 0);
  cr_assert_eq(hcpu_quota_at(root, "/nonexistent/cgroup"), 0);
}

Test(cpus, usable_is_at_least_one_and_at_most_online) {
  unsigned n = hcpu_usable();
  cr_assert_geq(n, 1);
  cr_assert_leq(n, (unsigned)sysconf(_SC_NPROCESSORS_CONF));
}
