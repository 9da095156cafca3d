/* mem_file.c - files as a memory kind (HIPOBJ_MEM_FILE): a descriptor and
 * an offset, moved through the same bounded staging pool as GPU memory
 * (staging.c) instead of mapping the whole file (a mapping makes resident
 * file pages count against the process and turns a full disk into
 * SIGBUS). Its copy side (copy.h): chunk -> file is pwrite (on tmpfs, with
 * enough CPUs, a copy into a short-lived window of the file: see
 * map_write), file -> chunk is pread, queued per stream and run in order
 * on the client's file threads (struct hfileq: a bounded set shared by
 * every transfer, no thread per stream), so the kernel's copy into or out
 * of the page cache - most of the CPU of a file transfer - runs beside the
 * I/O threads, as a GPU's DMA would (measured on a 2-vCPU VM: a 1 GiB GET
 * into a file 0.55-0.9 s with queued writes, 1.0-1.2 s with writes on the
 * I/O thread). The writers of one file take turns (see file_write). An
 * event is the stream's copy count when it was recorded. After a failed
 * copy ("pwrite: No space left on device") the stream skips the rest, and
 * every event recorded since reports the failure. */
#include "mem_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/strutil.h"
#include "base/workq.h"
#include "copy.h"

static void why_set(char why[HFILE_WHY], const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void why_set(char why[HFILE_WHY], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, HFILE_WHY, fmt, ap);
  va_end(ap);
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* Offsets past what off_t holds cannot be reached. */
static int file_off(uint64_t off, size_t n, off_t *out, char why[HFILE_WHY]) {
  if (off > (uint64_t)INT64_MAX - n) {
    why_set(why, "file offset %" PRIu64 " is out of range", off);
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

/* Writers of one file that fault its pages in at once (populate): the
 * faults of a file meet on its page cache's locks, so past a few of them
 * more only spin. HIPOBJ_FILE_POPULATE overrides the count. */
#define FILL_MAX_DEFAULT 3
struct fill_gate {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int in;
};
static struct fill_gate fill_gate[WRITE_STRIPES];
static int fill_max = FILL_MAX_DEFAULT;

static void write_turn_init(void) {
  for (int i = 0; i < WRITE_STRIPES; i++) {
    pthread_mutex_init(&write_turn[i], NULL);
    pthread_mutex_init(&fill_gate[i].lock, NULL);
    pthread_cond_init(&fill_gate[i].cond, NULL);
  }
  const char *e = getenv("HIPOBJ_FILE_POPULATE");
  long v = e ? strtol(e, NULL, 10) : 0;
  if (v >= 1 && v <= 1024)
    fill_max = (int)v;
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
 * against 0.29 s), so other file systems keep pwrite.
 *
 * But a mapped write also pays for zeroing every page (fallocate, or the
 * fault) before the copy overwrites it, which pwrite of whole pages does
 * not: on a later 16-CPU instance of the H200 machine (Linux 6.18, one
 * compare.sh run, medians of 5 alternating) a 1 GiB GET into /dev/shm
 * through mapped part windows took 1248 MB/s at 1.54 CPU s/GiB against
 * pwrite's 1685 MB/s at 1.13 (aws-c-s3: 1884 MB/s, 1.73). That zeroing
 * was serial: fallocate in the writers' turn. Faulted in by the writers
 * themselves, at most 3 of a file at once (populate), it runs beside the
 * copies: 1 GiB GET, same machine, 5 alternating runs
 * (tests/bench/file-get-sweep.sh): pwrite 2237 MB/s at 1.02 CPU s/GiB,
 * mapped with 1, 2, 4, 16 writers faulting 1917 / 2753 / 3703 / 3355 MB/s
 * at 1.08 / 1.22 / 1.38 / 3.23 (16 spin on the page cache's locks); 4 GiB:
 * pwrite 2026, 4 writers 3905 MB/s; again, 3: 3355 MB/s at 1.29. 4 ran
 * fastest, but in compare.sh at 1.50 CPU s/GiB against aws-c-s3's 1.46;
 * with 3, another instance, 2896 MB/s = 1.52x aws-c-s3 at 1.55 against
 * 1.67. So GETs map too, 3 writers faulting, with 8 or more CPUs, where
 * the kernel can populate (Linux 5.14). Reading through a mapping costs
 * no zeroing and saves pread's copy: a 1 GiB PUT from /dev/shm took 0.85 CPU
 * s/GiB mapped against 1.08 with pread (849 against 999 MB/s; aws-c-s3 815
 * MB/s, 1.08), so PUTs map where the CPUs are (8 or more).
 * HIPOBJ_FILE_MAP=0 or 1 overrides both choices. */
#define MAP_MIN_CPUS 8
/* Mapped at once: bounds the resident pages a writer holds. */
#define MAP_WINDOW ((size_t)4 << 20)

static int map_allowed, map_get_allowed;

/* Whether this kernel has MADV_POPULATE_WRITE (Linux 5.14): asked of one
 * anonymous page. */
static int populate_supported(void) {
  size_t pg = page_size();
  void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED)
    return 0;
  int ok = madvise(p, pg, MADV_POPULATE_WRITE) == 0;
  munmap(p, pg);
  return ok;
}
static pthread_once_t map_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t mapped_bytes, mapped_read_bytes;

uint64_t hfile_mapped_bytes(void) {
  return mapped_bytes;
}

uint64_t hfile_mapped_read_bytes(void) {
  return mapped_read_bytes;
}

static void map_decide(void) {
  const char *e = getenv("HIPOBJ_FILE_MAP");
  if (e && (strcmp(e, "0") == 0 || strcmp(e, "1") == 0)) {
    map_allowed = map_get_allowed = e[0] == '1';
    return;
  }
  map_allowed = hcpu_usable() >= MAP_MIN_CPUS;
  map_get_allowed = map_allowed && populate_supported();
}

/* A regular file on tmpfs (a device node on devtmpfs reports tmpfs too)
 * that may be mapped to be written (GET) or read (PUT). */
static int map_wanted(int fd, enum hmem_dir dir) {
  pthread_once(&map_once, map_decide);
  struct statfs sf;
  struct stat st;
  return (dir == HMEM_WRITE ? map_get_allowed : map_allowed) &&
         fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
         fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Room for a mapped write of n bytes at off. The pages of a tmpfs file are
 * allocated, and zeroed, by whoever asks first. fallocate asks in the
 * writers' turn (it takes the inode lock, whose waiters would spin), so
 * the writers of one file allocate one after another; where the kernel
 * has MADV_POPULATE_WRITE (Linux 5.14), the turn only grows the file to
 * cover the range and each writer then faults its own window's pages in,
 * all at once, with the errors a fault would turn into SIGBUS returned
 * instead (see populate). The file grows by a fallocate of the range's
 * last byte: one page allocated, and a size that only ever grows, where
 * fstat + ftruncate could shrink the file under a writer holding another
 * descriptor of it (another stripe's turn) and make its copy SIGBUS. */
static _Atomic int populate_works = 1;

/* 0, or the errno of the failure (and why says it). */
static int reserve(int fd, pthread_mutex_t *turn, off_t off, size_t n, int lazy,
                   char why[HFILE_WHY]) {
  pthread_mutex_lock(turn);
  int rc = lazy ? fallocate(fd, 0, off + (off_t)n - 1, 1)
                : fallocate(fd, 0, off, (off_t)n);
  int err = errno;
  pthread_mutex_unlock(turn);
  if (rc == 0)
    return 0;
  why_set(why, "fallocate: %s", strerror(err));
  return err;
}

/* Room for a mapped write by the way this kernel allows: *lazy says
 * whether the writer must then populate the window itself. Where growing
 * fails, fallocate of the whole range names the cause. 0 or the errno. */
static int reserve_for_map(int fd, pthread_mutex_t *turn, off_t off, size_t n,
                           int *lazy, char why[HFILE_WHY]) {
  *lazy = populate_works;
  int err = reserve(fd, turn, off, n, *lazy, why);
  if (err && *lazy) {
    *lazy = 0;
    err = reserve(fd, turn, off, n, 0, why);
  }
  return err;
}

/* The pages under a fresh writable mapping m of len bytes (lazy: the file
 * only grown to cover them), faulted in now. A fault that fails (a
 * full file system: EFAULT here, SIGBUS in a copy) sends the range to
 * fallocate, whose error names the cause; a kernel without
 * MADV_POPULATE_WRITE (EINVAL) is remembered and fallocate serves. */
static int populate(int fd, pthread_mutex_t *turn, char *m, size_t len,
                    off_t off, size_t n, char why[HFILE_WHY]) {
  struct fill_gate *g = &fill_gate[(unsigned)fd % WRITE_STRIPES];
  pthread_mutex_lock(&g->lock);
  while (g->in >= fill_max)
    pthread_cond_wait(&g->cond, &g->lock);
  g->in++;
  pthread_mutex_unlock(&g->lock);
  int rc = madvise(m, len, MADV_POPULATE_WRITE);
  int err = errno;
  pthread_mutex_lock(&g->lock);
  g->in--;
  pthread_cond_signal(&g->cond);
  pthread_mutex_unlock(&g->lock);
  if (rc == 0)
    return 0;
  if (err == EINVAL)
    populate_works = 0;
  return reserve(fd, turn, off, n, 0, why) ? -1 : 0;
}

/* Host -> tmpfs file through short-lived mappings, room reserved first
 * (above): a full file system is an error here rather than SIGBUS in the
 * copy; only a file shrunk by someone else during the transfer, which
 * hipobj_mem_file() forbids, can still raise it. Returns 1 when written,
 * 0 when the file cannot be mapped (the caller pwrites), -1 on a
 * failure. */
static int map_write(int fd, pthread_mutex_t *turn, off_t off, const char *src,
                     size_t n, char why[HFILE_WHY]) {
  int lazy;
  int err = reserve_for_map(fd, turn, off, n, &lazy, why);
  if (err)
    return err == EOPNOTSUPP || err == ENOSYS ? 0 : -1;
  size_t pg = page_size();
  while (n > 0) {
    off_t base = off - (off_t)((uint64_t)off % pg);
    size_t lead = (size_t)(off - base);
    size_t k = n < MAP_WINDOW - lead ? n : MAP_WINDOW - lead;
    char *m = mmap(NULL, lead + k, PROT_WRITE,
                   MAP_SHARED | (lazy ? 0 : MAP_POPULATE), fd, base);
    if (m == MAP_FAILED) {
      /* EACCES: open O_WRONLY. The caller pwrites all n bytes, again
       * over any window already copied. */
      return 0;
    }
    if (lazy && populate(fd, turn, m, lead + k, off, k, why) != 0) {
      munmap(m, lead + k);
      return -1;
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

/* ---- a part's window, mapped (tmpfs) ------------------------------------ */

/* Where the mapped choice holds, the HTTP path reads a PUT's body from, or
 * copies a GET's body into, a mapping of the part's whole window instead
 * of a staging chunk: one copy per byte fewer (libcurl's buffer -> chunk ->
 * file becomes libcurl's buffer -> file), and no file thread. */
int hfile_window_wanted(int fd, enum hmem_dir dir) {
  if (!map_wanted(fd, dir))
    return 0;
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0)
    return 0;
  /* A shared writable mapping needs the descriptor open for reading too. */
  return dir == HMEM_WRITE ? (fl & O_ACCMODE) == O_RDWR
                           : (fl & O_ACCMODE) != O_WRONLY;
}

int hfile_window_map(int fd, uint64_t at, size_t n, enum hmem_dir dir,
                     struct hfile_window *w, char why[HFILE_WHY]) {
  memset(w, 0, sizeof *w);
  off_t off;
  if (n == 0 || file_off(at, n, &off, why) != 0) {
    if (n == 0)
      why_set(why, "an empty window cannot be mapped");
    return -1;
  }
  /* Room first (see reserve): a full file system is an error here, not
   * SIGBUS in the copy. */
  pthread_once(&write_turn_once, write_turn_init);
  pthread_mutex_t *turn = &write_turn[(unsigned)fd % WRITE_STRIPES];
  int lazy = 0;
  if (dir == HMEM_WRITE) {
    if (reserve_for_map(fd, turn, off, n, &lazy, why) != 0)
      return -1;
  }
  size_t pg = page_size();
  off_t base = off - (off_t)((uint64_t)off % pg);
  size_t lead = (size_t)(off - base);
  int prot = dir == HMEM_WRITE ? PROT_READ | PROT_WRITE : PROT_READ;
  char *m = mmap(NULL, lead + n, prot, MAP_SHARED | (lazy ? 0 : MAP_POPULATE),
                 fd, base);
  if (m == MAP_FAILED) {
    why_set(why, "mmap of %zu bytes of the file: %s", lead + n,
            strerror(errno));
    return -1;
  }
  if (lazy && populate(fd, turn, m, lead + n, off, n, why) != 0) {
    munmap(m, lead + n);
    return -1;
  }
  w->map = m;
  w->map_len = lead + n;
  w->ptr = m + lead;
  w->len = n;
  w->writable = dir == HMEM_WRITE;
  return 0;
}

void hfile_window_unmap(struct hfile_window *w, uint64_t written) {
  if (!w->map)
    return;
  munmap(w->map, w->map_len);
  if (w->writable)
    mapped_bytes += written;
  else
    mapped_read_bytes += w->len;
  memset(w, 0, sizeof *w);
}

/* Host -> file: all n bytes at the address's offset, in one turn (mapped:
 * only the allocation takes the turn). */
static int file_write(int fd, uint64_t at, const void *src, size_t n,
                      char why[HFILE_WHY]) {
  off_t off;
  if (file_off(at, n, &off, why) != 0)
    return -1;
  pthread_once(&write_turn_once, write_turn_init);
  pthread_mutex_t *turn = &write_turn[(unsigned)fd % WRITE_STRIPES];
  if (n > 0 && map_wanted(fd, HMEM_WRITE)) {
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
      why_set(why, "pwrite: %s", k < 0 ? strerror(errno) : "wrote nothing");
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
static int file_read(int fd, void *dst, uint64_t at, size_t n,
                     char why[HFILE_WHY]) {
  off_t off;
  if (file_off(at, n, &off, why) != 0)
    return -1;
  char *p = dst;
  while (n > 0) {
    ssize_t k = pread(fd, p, n, off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0) {
      why_set(why, "pread: %s", strerror(errno));
      return -1;
    }
    if (k == 0) {
      why_set(why,
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

/* ---- the client's file threads and its streams --------------------------- */

/* Threads shared by every file stream of a client, started as copies
 * arrive (up to max) and kept until the client goes. A stream is a strand:
 * its copies run in order, one at a time, on whichever thread takes it;
 * different streams run at once. */
struct hfileq {
  struct hworkq *q;
};

struct fop {
  struct fop *next;
  int write; /* pwrite (chunk -> file) or pread (file -> chunk) */
  int fd;
  uint64_t at; /* file offset */
  void *buf;
  size_t n;
};

struct fstream {
  struct hworkq_item item; /* first: the queue hands back &s->item */
  struct hfileq *fq;
  pthread_mutex_t lock; /* everything below */
  pthread_cond_t cond;  /* a copy finished, or the strand went idle */
  struct fop *head, *tail;
  int scheduled;         /* on the queue or running: the strand's turn */
  uint64_t queued, done; /* copies queued and finished, ever */
  uint64_t failed_at;    /* 1-based copy number of the first failure, or 0 */
  char why[HFILE_WHY];
};

struct fevent {
  struct fstream *s;
  uint64_t seq; /* copies queued on s when recorded */
};

/* Runs the stream's copies in order until none is left. */
static void run_stream(struct hworkq_item *it) {
  struct fstream *s = (struct fstream *)it;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    struct fop *op = s->head;
    if (!op) {
      /* Idle: the next copy schedules the strand again. Nothing below
       * touches s, which its owner may destroy once it sees this. */
      s->scheduled = 0;
      pthread_cond_broadcast(&s->cond);
      pthread_mutex_unlock(&s->lock);
      return;
    }
    s->head = op->next;
    if (!s->head)
      s->tail = NULL;
    int skip = s->failed_at != 0;
    pthread_mutex_unlock(&s->lock);
    char why[HFILE_WHY];
    int rc = skip        ? 0
             : op->write ? file_write(op->fd, op->at, op->buf, op->n, why)
                         : file_read(op->fd, op->buf, op->at, op->n, why);
    free(op);
    pthread_mutex_lock(&s->lock);
    s->done++;
    if (rc != 0 && !s->failed_at) {
      s->failed_at = s->done;
      hstrlcpy(s->why, why, sizeof s->why);
    }
    pthread_cond_broadcast(&s->cond);
  }
}

struct hfileq *hfileq_create(unsigned max_threads) {
  struct hfileq *fq = calloc(1, sizeof *fq);
  if (!fq)
    return NULL;
  if (!(fq->q = hworkq_create(max_threads, run_stream))) {
    free(fq);
    return NULL;
  }
  return fq;
}

void hfileq_destroy(struct hfileq *fq) {
  if (!fq)
    return;
  hworkq_destroy(fq->q);
  free(fq);
}

static int file_stream_create(const struct hcopy *c, void **out,
                              char why[HFILE_WHY]) {
  struct fstream *s = calloc(1, sizeof *s);
  if (!s) {
    why_set(why, "out of memory");
    return -1;
  }
  s->fq = c->fileq;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  *out = s;
  return 0;
}

/* Waits for the queued copies and for the strand to let go of s. */
static void file_stream_destroy(const struct hcopy *c, void *stream) {
  (void)c;
  struct fstream *s = stream;
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  while (s->scheduled)
    pthread_cond_wait(&s->cond, &s->lock);
  pthread_mutex_unlock(&s->lock);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

/* Only the stream's owner queues copies and records events on it. here:
 * an idle strand runs on this thread rather than on a file thread. */
static int enqueue(const struct hcopy *c, struct fstream *s, int write,
                   uint64_t off, void *buf, size_t n, int here,
                   char why[HFILE_WHY]) {
  off_t check;
  if (off > UINT64_MAX - c->off ||
      file_off(c->off + off, n, &check, why) != 0) {
    if (off > UINT64_MAX - c->off)
      why_set(why, "file offset out of range");
    return -1;
  }
  struct fop *op = calloc(1, sizeof *op);
  if (!op) {
    why_set(why, "out of memory");
    return -1;
  }
  *op = (struct fop){NULL, write, c->fd, c->off + off, buf, n};
  pthread_mutex_lock(&s->lock);
  s->queued++; /* before the strand can run it: done never passes queued */
  if (s->tail)
    s->tail->next = op;
  else
    s->head = op;
  s->tail = op;
  int schedule = !s->scheduled;
  s->scheduled = 1;
  pthread_mutex_unlock(&s->lock);
  /* No thread at all: run the copies here rather than never. */
  if (schedule && (here || hworkq_push(s->fq->q, &s->item) != 0))
    run_stream(&s->item);
  return 0;
}

static int file_to_mem(const struct hcopy *c, void *stream, uint64_t off,
                       const void *src, size_t n, int here,
                       char why[HFILE_WHY]) {
  return enqueue(c, stream, 1, off, (void *)src, n, here, why);
}

static int file_from_mem(const struct hcopy *c, void *stream, void *dst,
                         uint64_t off, size_t n, char why[HFILE_WHY]) {
  return enqueue(c, stream, 0, off, dst, n, 0, why);
}

static int file_event_create(const struct hcopy *c, void **out,
                             char why[HFILE_WHY]) {
  (void)c;
  if (!(*out = calloc(1, sizeof(struct fevent)))) {
    why_set(why, "out of memory");
    return -1;
  }
  return 0;
}

static void file_event_destroy(const struct hcopy *c, void *event) {
  (void)c;
  free(event);
}

static int file_event_record(const struct hcopy *c, void *event, void *stream,
                             char why[HFILE_WHY]) {
  (void)c;
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
static int event_state(const struct fevent *e, char why[HFILE_WHY]) {
  const struct fstream *s = e->s;
  if (s->done < e->seq)
    return 0;
  if (s->failed_at && s->failed_at <= e->seq) {
    hstrlcpy(why, s->why, HFILE_WHY);
    return -1;
  }
  return 1;
}

static int file_event_sync(const struct hcopy *c, void *event,
                           char why[HFILE_WHY]) {
  (void)c;
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

/* Chunks for files are ordinary memory (pread/pwrite take any address),
 * aligned to 2 MiB and offered to transparent huge pages. A new pool's
 * chunks are touched first by the transfer itself, and a PUT part is read
 * whole before it is sent, so a fresh process uploading 64 MiB with 8
 * parts in flight wrote every byte into a page never touched: 16384 page
 * faults, most of `hipobj cp`'s time on a 2-vCPU VM (0.27 s against curl's
 * 0.06 s). In huge pages where the system allows them (THP "madvise" or
 * "always"), a 4 MiB chunk faults twice; elsewhere nothing changes. */
#define CHUNK_ALIGN ((size_t)2 << 20)

static int file_chunk_alloc(const struct hcopy *c, size_t n, void **out,
                            char why[HFILE_WHY]) {
  (void)c;
  size_t align = n >= CHUNK_ALIGN ? CHUNK_ALIGN : page_size();
  if (posix_memalign(out, align, n) != 0) {
    why_set(why, "out of memory");
    return -1;
  }
  if (align == CHUNK_ALIGN) /* advice only: an error leaves small pages */
    (void)madvise(*out, n - n % CHUNK_ALIGN, MADV_HUGEPAGE);
  return 0;
}

static void file_chunk_free(const struct hgpu_ops *gpu, int dev, void *p) {
  (void)gpu;
  (void)dev;
  free(p);
}

int hfile_check(int fd, uint64_t off, uint64_t len, enum hmem_dir dir,
                char why[HFILE_WHY]) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    why_set(why, "file descriptor %d: %s", fd,
            fd < 0 ? "not a descriptor" : strerror(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    why_set(why,
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
    why_set(why, "file descriptor %d: fcntl: %s", fd, strerror(errno));
    return -1;
  }
  int acc = fl & O_ACCMODE;
  if (dir == HMEM_WRITE && acc == O_RDONLY) {
    why_set(why,
            "file descriptor %d is open read-only; a GET target must be "
            "open for writing (O_WRONLY or O_RDWR)",
            fd);
    return -1;
  }
  if (dir == HMEM_WRITE && (fl & O_APPEND)) {
    why_set(why,
            "file descriptor %d is open with O_APPEND, which makes "
            "pwrite ignore the offset",
            fd);
    return -1;
  }
  if (dir == HMEM_READ && acc == O_WRONLY) {
    why_set(why,
            "file descriptor %d is open write-only; a PUT source must be "
            "open for reading",
            fd);
    return -1;
  }
  if (dir == HMEM_READ && S_ISREG(st.st_mode)) {
    uint64_t size = (uint64_t)st.st_size;
    if (off > size || len > size - off) {
      why_set(why,
              "bytes %" PRIu64 "..%" PRIu64 " run past the end of the "
              "%" PRIu64 "-byte file (descriptor %d)",
              off, off + len, size, fd);
      return -1;
    }
  }
  return 0;
}

const struct hcopy_ops hcopy_file_ops = {
    .to_what = "file write",
    .from_what = "file read",
    .chunk_alloc = file_chunk_alloc,
    .chunk_free = file_chunk_free,
    .stream_create = file_stream_create,
    .stream_destroy = file_stream_destroy,
    .event_create = file_event_create,
    .event_destroy = file_event_destroy,
    .to_mem = file_to_mem,
    .from_mem = file_from_mem,
    .event_record = file_event_record,
    .event_sync = file_event_sync,
};
