/* cpus.h - how many CPUs this process may use (cpus.c), for the defaults
 * that scale with them. */
#ifndef HIPOBJ_CPUS_H
#define HIPOBJ_CPUS_H

/* The CPUs of this process's affinity mask, cut by a cgroup CPU quota on
 * its cgroup's path (what a container's CPU limit sets), at least 1.
 * Computed once. */
unsigned hcpu_usable(void);

/* The tightest CPU quota, rounded up to whole CPUs, of the cgroups named
 * by the /proc/self/cgroup-format file proc_cgroup, under the cgroup file
 * system mounted at root (v2: cpu.max; v1: the cpu controller's
 * cpu.cfs_quota_us over cpu.cfs_period_us). 0 when none applies or the
 * files cannot be read. Parameterised for tests. */
unsigned hcpu_quota_at(const char *root, const char *proc_cgroup);

#endif
