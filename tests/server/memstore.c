/* memstore.c - hipobj-server's memory mode (--storage memory): the same
 * layout as on disk (storage.h), kept on tmpfs, so objects are real bytes
 * in RAM that GETs return as PUTs stored them, at a fraction of the disk
 * mode's CPU per byte. What the mode changes, and why:
 *   - the root is a tmpfs directory (by default a fresh one under
 *     /dev/shm, removed at exit): every byte lives in memory;
 *   - nothing is fsynced (durability means nothing in RAM);
 *   - ETags are not MD5s unless the request sent Content-MD5 (MD5 costs
 *     about 1.3 CPU s/GiB, more than the client under test): body.c forms
 *     them from the CRC-64/NVME every upload keeps anyway, and the size;
 *   - CompleteMultipartUpload still copies the parts into one object:
 *     with 16 or more CPUs by 8 threads at once (4 with 8 or more) into a
 *     mapping of it whose pages each thread faults in itself (assemble.c;
 *     H200 machine, 10 GiB PUT from memory by hipobj bench, 2 alternating
 *     rounds: 1041 / 1259 MB/s with one thread, 1518 / 1778 with 4; in
 *     another pair of rounds the Complete itself took 4.5-7.3 s with 4
 *     threads, 3.7-4.8 s with 8, 3.9-5.8 s with 12), else serially with
 *     copy_file_range (about 0.3 CPU s/GiB): on a 2-vCPU VM 4 threads made
 *     a 512 MiB PUT twice as slow (227-267 against 581-591 MB/s);
 *   - the bytes stored are capped (--memory-cap): a write past the cap is
 *     507 InsufficientStorage. The count grows with every byte written and
 *     is recounted from the files (st_blocks, so deletions are seen) when
 *     it would pass the cap, so it errs on the side of refusing.
 * Signatures, payload hashes, aws-chunked framing and checksums are
 * checked as in the disk mode. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "storage.h"

int st_volatile;

static _Atomic uint64_t g_used;
static pthread_mutex_t g_recount = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_walk_sum;

int st_sync_fd(int fd) {
  return st_volatile || fsync(fd) == 0 ? 0 : -errno;
}

int mem_setup(struct server *s, struct hbuf *why) {
  st_volatile = 1;
  if (!s->root) {
    const char *base = getenv("HIPOBJ_SERVER_SHM");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/hipobj-server.XXXXXX",
             base && *base ? base : "/dev/shm");
    if (!mkdtemp(tmpl)) {
      hbuf_printf(why,
                  "--storage memory: cannot create a directory in %s: %s "
                  "(give --root on a tmpfs)",
                  base && *base ? base : "/dev/shm", strerror(errno));
      return -1;
    }
    s->root = strdup(tmpl);
    if (!s->root) {
      rmdir(tmpl);
      hbuf_printf(why, "out of memory");
      return -1;
    }
    s->mem_own_root = 1;
  }
  /* Checked here, before st_startup() makes the root or its folders: a
   * refused root is left as it was found. A root still to be made is
   * made in its parent, whose filesystem decides. */
  struct statfs f;
  int rc = statfs(s->root, &f);
  if (rc != 0 && errno == ENOENT) {
    char *parent = strdup(s->root);
    if (!parent) {
      hbuf_printf(why, "out of memory");
      return -1;
    }
    rc = statfs(dirname(parent), &f);
    free(parent);
  }
  if (rc != 0) {
    hbuf_printf(why, "--storage memory: %s: %s", s->root, strerror(errno));
  } else if (f.f_type != TMPFS_MAGIC && f.f_type != RAMFS_MAGIC) {
    hbuf_printf(why,
                "--storage memory: --root %s is not on tmpfs or ramfs "
                "(filesystem magic 0x%lx): its objects would not be in "
                "memory",
                s->root, (unsigned long)f.f_type);
  } else {
    return 0;
  }
  if (s->mem_own_root) /* HIPOBJ_SERVER_SHM named a disk */
    rmdir(s->root);
  return -1;
}

static int walk_one(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw) {
  (void)path, (void)ftw;
  /* Hard links (a single-part upload's object and its part) count once. */
  if (flag == FTW_F && S_ISREG(st->st_mode))
    g_walk_sum += (uint64_t)st->st_blocks * 512 /
                  (st->st_nlink ? (uint64_t)st->st_nlink : 1);
  return 0;
}

/* After st_startup: the root exists; it must be in RAM. */
int mem_startup(struct server *s, int cap_given, struct hbuf *why) {
  struct statfs f;
  if (statfs(s->root, &f) != 0) {
    hbuf_printf(why, "--storage memory: %s: %s", s->root, strerror(errno));
    return -1;
  }
  if (!cap_given)
    s->mem_cap = (uint64_t)f.f_bavail * (uint64_t)f.f_bsize / 2;
  if (!s->mem_cap) {
    hbuf_printf(why,
                "--storage memory: %s reports no free space to size a "
                "default cap from (ramfs?): give --memory-cap",
                s->root);
    return -1;
  }
  /* Objects left in a given root count against the cap from the start. */
  pthread_mutex_lock(&g_recount);
  g_walk_sum = 0;
  nftw(s->root, walk_one, 32, FTW_PHYS);
  atomic_store(&g_used, g_walk_sum);
  pthread_mutex_unlock(&g_recount);
  if (s->mem_cap && atomic_load(&g_used) > s->mem_cap) {
    hbuf_printf(why,
                "--storage memory: --root %s already holds more than "
                "--memory-cap %llu bytes",
                s->root, (unsigned long long)s->mem_cap);
    return -1;
  }
  return 0;
}

int mem_reserve(const struct server *s, uint64_t n) {
  if (!s->mem_cap)
    return 0;
  uint64_t cur = atomic_load(&g_used);
  while (cur + n <= s->mem_cap)
    if (atomic_compare_exchange_weak(&g_used, &cur, cur + n))
      return 0;
  /* Past the cap by the count: recount what the files hold (deletions
   * and replaced objects lower it), then decide. */
  pthread_mutex_lock(&g_recount);
  g_walk_sum = 0;
  nftw(s->root, walk_one, 32, FTW_PHYS);
  uint64_t used = g_walk_sum;
  int rc = 0;
  if (used + n > s->mem_cap)
    rc = -ENOSPC;
  atomic_store(&g_used, rc ? used : used + n);
  pthread_mutex_unlock(&g_recount);
  return rc;
}

uint64_t mem_used(void) {
  return atomic_load(&g_used);
}

void mem_teardown(struct server *s) {
  if (s->mem_own_root)
    st_rmtree(s->root);
}
