/* gpu_file.c - the file memory platform (HIPOBJ_MEM_FILE): an open file seen
 * as a device, so that file transfers reuse the GPU staging pipelines and
 * their bounded pool instead of mapping the whole file (a mapping makes
 * resident file pages count against the process and turns a full disk
 * into SIGBUS).
 *
 * The "device" is the file descriptor, a "device address" a file offset
 * (HGPU_FILE_OFFSET). H2D is pwrite (on tmpfs, with enough CPUs, a copy
 * into a short-lived window of the file: see map_write), D2H is pread,
 * queued on a stream: a thread of the stream's own (started on its first
 * copy) runs them in order, so the kernel's copy into or out of the page
 * cache - most of the CPU of a file transfer - runs beside the engine
 * thread, as a GPU's DMA would (measured on a 2-vCPU VM: a 1 GiB GET into
 * a file 0.55-0.9 s with queued writes, 1.0-1.2 s with writes on the
 * engine thread). The writers of one file take turns (see file_write). An
 * event is the stream's copy count when it was recorded. After a failed
 * copy ("pwrite: No space left on device") the stream skips the rest, and
 * every event recorded since reports the failure. The staging chunks are
 * ordinary page-aligned memory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/strutil.h"
#include "base/workq.h"
#include "gpu.h"

static int file_init(char why[HGPU_WHY]) {
  (void)why;
  return 0;
}

static void file_version(char *buf, size_t len) {
  hstrlcpy(buf, "file descriptors (pread/pwrite)", len);
}

static int file_device_count(int *n, char why[HGPU_WHY]) {
  (void)why;
  *n = 0;
  return 0;
}

static int file_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                            size_t name_len, char why[HGPU_WHY]) {
  (void)bus_id;
  (void)name;
  (void)name_len;
  hgpu_why(why, "file memory has no device %d", dev);
  return -1;
}

static int file_classify(const void *ptr, struct hgpu_mem_info *info,
                         char why[HGPU_WHY]) {
  (void)ptr;
  (void)info;
  (void)why;
  return 0; /* a pointer is never a file */
}

static int file_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  (void)dev;
  hgpu_why(why, "file memory cannot be exported as a dma-buf");
  return 0;
}

static int file_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                              uint64_t *offset, char why[HGPU_WHY]) {
  (void)ptr;
  (void)len;
  (void)offset;
  *fd = -1;
  return file_dmabuf_supported(dev, why) ? 0 : -1;
}

static int file_host_alloc(int dev, size_t len, void **out,
                           char why[HGPU_WHY]) {
  (void)dev;
  /* Page-aligned so the kernel's copies run on whole pages. */
  if (posix_memalign(out, hgpu_page_size(), len ? len : 1) != 0) {
    hgpu_why(why, "cannot allocate %zu bytes of staging memory", len);
    return -1;
  }
  return 0;
}

static void file_host_free(int dev, void *p) {
  (void)dev;
  free(p);
}

static int file_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  (void)dev;
  (void)len;
  *out = NULL;
  hgpu_why(why, "file memory is not allocated: open a file and describe it "
                "with hipobj_mem_file()");
  return -1;
}

static void file_dev_free(int dev, void *p) {
  (void)dev;
  (void)p;
}

/* Offsets past what off_t holds cannot be reached. */
static int file_off(const void *addr, size_t n, off_t *out,
                    char why[HGPU_WHY]) {
  uint64_t off = HGPU_FILE_OFFSET(addr);
  if (off > (uint64_t)INT64_MAX - n) {
    hgpu_why(why, "file offset %" PRIu64 " is out of range", off);
    return -1;
  }
  *out = (off_t)off;
  return 0;
}

/* Largest single pwrite. The kernel sizes page cache folios after the
 * write: a 4 MiB write asks for 2 MiB folios, whose allocation was slow
 * and erratic on a VM (1 GiB GET into a file 0.9-1.5 s, against 0.54-0.58
 * s in 256 KiB writes, measured alternately); small ones cost syscalls. */
#define WRITE_MAX ((size_t)256 << 10)

/* Writers of one file take turns here rather than in the kernel, which
 * serialises buffered writes to a file on its inode lock anyway but lets
 * its waiters spin: on 16 cores, half the CPU of a 1 GiB GET into a tmpfs
 * file went to osq_lock/rwsem_spin_on_owner (1.7 s of system time against
 * 0.7 s with turns, same wall time). A waiter here sleeps. Striped by
 * descriptor: two files that share a stripe only take turns. */
#define WRITE_STRIPES 64
static pthread_mutex_t write_turn[WRITE_STRIPES];
static pthread_once_t write_turn_once = PTHREAD_ONCE_INIT;

static void write_turn_init(void) {
  for (int i = 0; i < WRITE_STRIPES; i++)
    pthread_mutex_init(&write_turn[i], NULL);
}

/* ---- mapped writes (tmpfs) ---------------------------------------------- */

/* On tmpfs a buffered write is a copy into page cache that the inode lock
 * makes serial, so the writers of one file (a stream per part in flight)
 * queue behind each other; through a mapping they copy in parallel. The
 * price is a page fault per page and a TLB flush per window, which only
 * several CPUs repay (H200 machine, 1 GiB GET into /dev/shm, medians of
 * alternating runs, mapped vs pwrite: 16 CPUs 0.35 vs 0.49 s, 8 CPUs 0.35
 * vs 0.47 s, 4 CPUs 0.46 vs 0.47 s; on a 2-vCPU VM 0.91 vs 0.79 s). On ext4 a
 * mapped write costs several times a pwrite (1 GiB on a 2-vCPU VM: 1.5 s
 * against 0.29 s), so other file systems keep pwrite. HIPOBJ_FILE_MAP=0
 * or 1 overrides the choice. */
#define MAP_MIN_CPUS 8
/* Mapped at once: bounds the resident pages a writer holds. */
#define MAP_WINDOW ((size_t)4 << 20)

static int map_allowed;
static pthread_once_t map_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t mapped_bytes;

uint64_t hgpu_file_mapped_bytes(void) {
  return mapped_bytes;
}

static void map_decide(void) {
  const char *e = getenv("HIPOBJ_FILE_MAP");
  if (e && (strcmp(e, "0") == 0 || strcmp(e, "1") == 0)) {
    map_allowed = e[0] == '1';
    return;
  }
  map_allowed = hcpu_usable() >= MAP_MIN_CPUS;
}

/* A regular file on tmpfs: a device node on devtmpfs reports tmpfs too. */
static int map_wanted(int fd) {
  pthread_once(&map_once, map_decide);
  struct statfs sf;
  struct stat st;
  return map_allowed && fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
         fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Host -> tmpfs file through short-lived mappings. The range is allocated
 * first, in the writers' turn (fallocate takes the inode lock, whose
 * waiters would spin), so a full file system is an error here rather than
 * SIGBUS in the copy; only a file shrunk by someone else during the
 * transfer, which hipobj_mem_file() forbids, can still raise it. Returns 1
 * when written, 0 when the file cannot be mapped (the caller pwrites), -1
 * on a failure. */
static int map_write(int fd, pthread_mutex_t *turn, off_t off, const char *src,
                     size_t n, char why[HGPU_WHY]) {
  pthread_mutex_lock(turn);
  int rc = fallocate(fd, 0, off, (off_t)n);
  int err = errno;
  pthread_mutex_unlock(turn);
  if (rc != 0) {
    if (err == EOPNOTSUPP || err == ENOSYS)
      return 0;
    hgpu_why(why, "fallocate: %s", strerror(err));
    return -1;
  }
  size_t pg = hgpu_page_size();
  while (n > 0) {
    off_t base = off - (off_t)((uint64_t)off % pg);
    size_t lead = (size_t)(off - base);
    size_t k = n < MAP_WINDOW - lead ? n : MAP_WINDOW - lead;
    char *m = mmap(NULL, lead + k, PROT_WRITE, MAP_SHARED, fd, base);
    if (m == MAP_FAILED) {
      /* EACCES: open O_WRONLY. The caller pwrites all n bytes, again
       * over any window already copied. */
      return 0;
    }
    memcpy(m + lead, src, k);
    munmap(m, lead + k);
    mapped_bytes += k;
    src += k;
    off += (off_t)k;
    n -= k;
  }
  return 1;
}

/* Host -> file: all n bytes at the address's offset, in one turn (mapped:
 * only the allocation takes the turn). */
static int file_write(int fd, void *dst, const void *src, size_t n,
                      char why[HGPU_WHY]) {
  off_t off;
  if (file_off(dst, n, &off, why) != 0)
    return -1;
  pthread_once(&write_turn_once, write_turn_init);
  pthread_mutex_t *turn = &write_turn[(unsigned)fd % WRITE_STRIPES];
  if (n > 0 && map_wanted(fd)) {
    int m = map_write(fd, turn, off, src, n, why);
    if (m != 0)
      return m < 0 ? -1 : 0;
  }
  int rc = 0;
  pthread_mutex_lock(turn);
  const char *p = src;
  while (n > 0) {
    ssize_t k = pwrite(fd, p, n < WRITE_MAX ? n : WRITE_MAX, off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      /* 0 for n > 0 should not happen on a file; do not spin on it. */
      hgpu_why(why, "pwrite: %s", k < 0 ? strerror(errno) : "wrote nothing");
      rc = -1;
      break;
    }
    p += k;
    off += k;
    n -= (size_t)k;
  }
  pthread_mutex_unlock(turn);
  return rc;
}

/* File -> host: all n bytes, or a failure when the file ends first. */
static int file_read(int fd, void *dst, const void *src, size_t n,
                     char why[HGPU_WHY]) {
  off_t off;
  if (file_off(src, n, &off, why) != 0)
    return -1;
  char *p = dst;
  while (n > 0) {
    ssize_t k = pread(fd, p, n, off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0) {
      hgpu_why(why, "pread: %s", strerror(errno));
      return -1;
    }
    if (k == 0) {
      hgpu_why(why,
               "pread: the file ends at offset %jd, %zu bytes short "
               "(truncated during the transfer?)",
               (intmax_t)off, n);
      return -1;
    }
    p += k;
    off += k;
    n -= (size_t)k;
  }
  return 0;
}

/* A synchronous copy between host memory and the file cannot tell the
 * direction from two addresses; the staged paths use the async ops. */
static int file_copy(int dev, void *dst, const void *src, size_t n,
                     char why[HGPU_WHY]) {
  (void)dev;
  (void)dst;
  (void)src;
  (void)n;
  hgpu_why(why, "file memory is read and written with pread/pwrite, not "
                "copied");
  return -1;
}

/* ---- streams: one worker thread each, copies in order ------------------ */

struct fstream;

struct fop {
  struct hworkq_item item; /* first: the queue hands back &op->item */
  struct fstream *s;
  int write; /* pwrite (H2D) or pread (D2H) */
  int fd;
  void *addr; /* file offset */
  void *buf;
  size_t n;
};

/* A work queue of one thread keeps the copies in order. */
struct fstream {
  struct hworkq *q;      /* NULL until the first copy */
  pthread_mutex_t lock;  /* the counters below */
  pthread_cond_t cond;   /* a copy finished */
  uint64_t queued, done; /* copies queued and finished, ever */
  uint64_t failed_at;    /* 1-based copy number of the first failure, or 0 */
  char why[HGPU_WHY];
};

struct fevent {
  struct fstream *s;
  uint64_t seq; /* copies queued on s when recorded */
};

static void run_op(struct hworkq_item *it) {
  struct fop *op = (struct fop *)it;
  struct fstream *s = op->s;
  pthread_mutex_lock(&s->lock);
  int skip = s->failed_at != 0;
  pthread_mutex_unlock(&s->lock);
  char why[HGPU_WHY];
  int rc = skip        ? 0
           : op->write ? file_write(op->fd, op->addr, op->buf, op->n, why)
                       : file_read(op->fd, op->buf, op->addr, op->n, why);
  free(op);
  pthread_mutex_lock(&s->lock);
  s->done++;
  if (rc != 0 && !s->failed_at) {
    s->failed_at = s->done;
    hstrlcpy(s->why, why, sizeof s->why);
  }
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static int file_stream_create(int dev, void **out, char why[HGPU_WHY]) {
  (void)dev;
  struct fstream *s = calloc(1, sizeof *s);
  if (!s) {
    hgpu_why(why, "out of memory");
    return -1;
  }
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  *out = s;
  return 0;
}

/* Waits for the queued copies (staging waits for its events first). */
static void file_stream_destroy(int dev, void *stream) {
  (void)dev;
  struct fstream *s = stream;
  if (!s)
    return;
  hworkq_destroy(s->q);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

/* Only the stream's owner queues copies and records events on it. */
static int enqueue(struct fstream *s, int write, int fd, void *addr, void *buf,
                   size_t n, char why[HGPU_WHY]) {
  off_t off;
  if (file_off(addr, n, &off, why) != 0)
    return -1;
  if (!s->q && !(s->q = hworkq_create(1, run_op))) {
    hgpu_why(why, "out of memory");
    return -1;
  }
  struct fop *op = calloc(1, sizeof *op);
  if (!op) {
    hgpu_why(why, "out of memory");
    return -1;
  }
  *op = (struct fop){{NULL}, s, write, fd, addr, buf, n};
  pthread_mutex_lock(&s->lock);
  s->queued++; /* before the push: done never passes queued */
  pthread_mutex_unlock(&s->lock);
  if (hworkq_push(s->q, &op->item) != 0) {
    pthread_mutex_lock(&s->lock);
    s->queued--;
    pthread_mutex_unlock(&s->lock);
    free(op);
    hgpu_why(why, "cannot start the file stream's thread");
    return -1;
  }
  return 0;
}

static int file_h2d(int dev, void *dst, const void *src, size_t n, void *stream,
                    char why[HGPU_WHY]) {
  return enqueue(stream, 1, dev, dst, (void *)src, n, why);
}

static int file_d2h(int dev, void *dst, const void *src, size_t n, void *stream,
                    char why[HGPU_WHY]) {
  return enqueue(stream, 0, dev, (void *)src, dst, n, why);
}

static int file_event_create(int dev, void **out, char why[HGPU_WHY]) {
  (void)dev;
  if (!(*out = calloc(1, sizeof(struct fevent)))) {
    hgpu_why(why, "out of memory");
    return -1;
  }
  return 0;
}

static void file_event_destroy(int dev, void *event) {
  (void)dev;
  free(event);
}

static int file_event_record(int dev, void *event, void *stream,
                             char why[HGPU_WHY]) {
  (void)dev;
  (void)why;
  struct fevent *e = event;
  struct fstream *s = stream;
  e->s = s;
  pthread_mutex_lock(&s->lock);
  e->seq = s->queued;
  pthread_mutex_unlock(&s->lock);
  return 0;
}

/* 1 done, 0 running, -1 failed; s->lock held. */
static int event_state(const struct fevent *e, char why[HGPU_WHY]) {
  const struct fstream *s = e->s;
  if (s->done < e->seq)
    return 0;
  if (s->failed_at && s->failed_at <= e->seq) {
    hstrlcpy(why, s->why, HGPU_WHY);
    return -1;
  }
  return 1;
}

static int file_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev;
  struct fevent *e = event;
  if (!e->s)
    return 0; /* never recorded */
  pthread_mutex_lock(&e->s->lock);
  int st;
  while ((st = event_state(e, why)) == 0)
    pthread_cond_wait(&e->s->cond, &e->s->lock);
  pthread_mutex_unlock(&e->s->lock);
  return st < 0 ? -1 : 0;
}

static int file_event_query(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev;
  struct fevent *e = event;
  if (!e->s)
    return 1;
  pthread_mutex_lock(&e->s->lock);
  int st = event_state(e, why);
  pthread_mutex_unlock(&e->s->lock);
  return st;
}

static const char *file_error_string(int code) {
  return strerror(code);
}

int hgpu_file_check(int fd, uint64_t off, uint64_t len, enum hgpu_dir dir,
                    char why[HGPU_WHY]) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    hgpu_why(why, "file descriptor %d: %s", fd,
             fd < 0 ? "not a descriptor" : strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    hgpu_why(why,
             "file descriptor %d is a %s; file memory needs a regular file "
             "or block device (pread/pwrite)",
             fd,
             S_ISDIR(st.st_mode)    ? "directory"
             : S_ISFIFO(st.st_mode) ? "pipe"
             : S_ISSOCK(st.st_mode) ? "socket"
                                    : "character device");
    return -1;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0) {
    hgpu_why(why, "file descriptor %d: fcntl: %s", fd, strerror(errno));
    return -1;
  }
  int acc = fl & O_ACCMODE;
  if (dir == HGPU_WRITE && acc == O_RDONLY) {
    hgpu_why(why,
             "file descriptor %d is open read-only; a GET target must be "
             "open for writing (O_WRONLY or O_RDWR)",
             fd);
    return -1;
  }
  if (dir == HGPU_WRITE && (fl & O_APPEND)) {
    hgpu_why(why,
             "file descriptor %d is open with O_APPEND, which makes "
             "pwrite ignore the offset",
             fd);
    return -1;
  }
  if (dir == HGPU_READ && acc == O_WRONLY) {
    hgpu_why(why,
             "file descriptor %d is open write-only; a PUT source must be "
             "open for reading",
             fd);
    return -1;
  }
  if (dir == HGPU_READ && S_ISREG(st.st_mode)) {
    uint64_t size = (uint64_t)st.st_size;
    if (off > size || len > size - off) {
      hgpu_why(why,
               "bytes %" PRIu64 "..%" PRIu64 " run past the end of the "
               "%" PRIu64 "-byte file (descriptor %d)",
               off, off + len, size, fd);
      return -1;
    }
  }
  return 0;
}

const struct hgpu_ops hgpu_file_ops = {
    .name = "file",
    .library = "",
    .init = file_init,
    .version = file_version,
    .device_count = file_device_count,
    .device_info = file_device_info,
    .classify = file_classify,
    .dmabuf_supported = file_dmabuf_supported,
    .dmabuf_export = file_dmabuf_export,
    .host_alloc = file_host_alloc,
    .host_free = file_host_free,
    .dev_alloc = file_dev_alloc,
    .dev_free = file_dev_free,
    .copy = file_copy,
    .stream_create = file_stream_create,
    .stream_destroy = file_stream_destroy,
    .event_create = file_event_create,
    .event_destroy = file_event_destroy,
    .h2d_async = file_h2d,
    .d2h_async = file_d2h,
    .event_record = file_event_record,
    .event_sync = file_event_sync,
    .event_query = file_event_query,
    .error_string = file_error_string,
};
