/* assemble.c - CompleteMultipartUpload's copy of the parts into the new
 * object, by several threads at once (memory mode, --complete-threads).
 * On tmpfs one file's writes take turns on its inode lock, so the serial
 * copy_file_range of multipart.c moves one part after another (about 0.3
 * CPU s/GiB in one thread: 3 s of a 10 GiB upload, which every client
 * waits for). Here the object is grown to its size first (no page is
 * allocated), then each thread maps a window of it, faults the window's
 * pages in (MADV_POPULATE_WRITE, which returns an error where a fault
 * would raise SIGBUS) and preads the part's bytes into it: the page
 * allocation and the copy of different parts run side by side. A failed
 * fault asks fallocate for the cause (ENOSPC on a full tmpfs). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "storage.h"

/* Mapped at once: bounds what one thread holds in its address space. */
#define WINDOW ((size_t)64 << 20)

struct asm_job {
  int out;
  const char *const *paths;
  const uint64_t *sizes;
  uint64_t *offs;
  size_t n;
  _Atomic size_t next;
  _Atomic int err; /* the first -errno */
};

/* [off, off+len) of out <- in from its offset 0, window by window. */
static int copy_part(int out, int in, uint64_t off, uint64_t len) {
  long pgl = sysconf(_SC_PAGESIZE);
  uint64_t pg = pgl > 0 ? (uint64_t)pgl : 4096, done = 0;
  while (done < len) {
    uint64_t at = off + done, base = at - at % pg;
    size_t lead = (size_t)(at - base);
    size_t k = len - done < WINDOW ? (size_t)(len - done) : WINDOW;
    char *m = mmap(NULL, lead + k, PROT_READ | PROT_WRITE, MAP_SHARED, out,
                   (off_t)base);
    if (m == MAP_FAILED)
      return -errno;
    int rc = 0;
    if (madvise(m, lead + k, MADV_POPULATE_WRITE) != 0 &&
        fallocate(out, 0, (off_t)at, (off_t)k) != 0)
      rc = -errno; /* the cause; pages in place once fallocate succeeds */
    for (size_t got = 0; rc == 0 && got < k;) {
      ssize_t r = pread(in, m + lead + got, k - got, (off_t)(done + got));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        rc = r < 0 ? -errno : -EIO; /* a part shorter than recorded */
      else
        got += (size_t)r;
    }
    munmap(m, lead + k);
    if (rc != 0)
      return rc;
    done += k;
  }
  return 0;
}

static void *worker(void *arg) {
  struct asm_job *j = arg;
  for (;;) {
    size_t i = j->next++;
    if (i >= j->n || j->err)
      break;
    int in = open(j->paths[i], O_RDONLY | O_CLOEXEC);
    int rc = in < 0 ? -errno : copy_part(j->out, in, j->offs[i], j->sizes[i]);
    if (in >= 0)
      close(in);
    int none = 0;
    if (rc != 0)
      atomic_compare_exchange_strong(&j->err, &none, rc);
  }
  return NULL;
}

int st_assemble_parallel(int out, const char *const *paths,
                         const uint64_t *sizes, size_t n, unsigned threads) {
  uint64_t *offs = calloc(n ? n : 1, sizeof *offs), total = 0;
  if (!offs)
    return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    offs[i] = total;
    total += sizes[i];
  }
  if (ftruncate(out, (off_t)total) != 0) {
    int e = -errno;
    free(offs);
    return e;
  }
  struct asm_job j = {
      .out = out, .paths = paths, .sizes = sizes, .offs = offs, .n = n};
  atomic_init(&j.next, 0);
  atomic_init(&j.err, 0);
  if (threads > n)
    threads = (unsigned)n;
  pthread_t th[ST_ASSEMBLE_MAX];
  unsigned started = 0;
  /* This thread is one of them; a thread that cannot start leaves its
   * share to the others. */
  while (started + 1 < threads && started < ST_ASSEMBLE_MAX &&
         pthread_create(&th[started], NULL, worker, &j) == 0)
    started++;
  worker(&j);
  for (unsigned t = 0; t < started; t++)
    pthread_join(th[t], NULL);
  free(offs);
  if (j.err == 0 && lseek(out, (off_t)total, SEEK_SET) < 0)
    return -errno;
  return j.err;
}
