/* fake_gpu.c - the test GPU platform (see fake_gpu.h): malloc'ed "device"
 * memory, one worker thread that runs queued copies in order, events, and
 * fault injection. Also checks the library's use of it: async copies should
 * use pinned chunks, no stream or event may be destroyed with work still
 * queued, and each op must name the device that owns what it is given. */
#include "fake_gpu.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/gpu.h"

#define N_DEVICES FAKE_GPU_DEVICES

struct alloc {
  struct alloc *next;
  char *p;
  size_t n;
  int dev;
  int pinned;
  int home;    /* pinned: the device that allocated it */
  uint64_t id; /* buffer id: unique per allocation */
};

struct fstream {
  int dev;
  unsigned long queued, done;
  int error; /* an asynchronous failure not yet reported */
};

struct fevent {
  int dev;
  struct fstream *st;
  int done;
  int failed;
};

enum { OP_COPY, OP_EVENT };

struct op {
  struct op *next;
  int type;
  struct fstream *st;
  void *dst;
  const void *src;
  size_t n;
  int fail;
  struct fevent *ev;
};

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pthread_t worker;
  int started;
  struct op *head, *tail;
  struct alloc *allocs;
  unsigned delay_us;
  unsigned long copies, fail_at;
  enum fake_fault fail_how;
  struct fake_gpu_stats stats;
} F = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
       PTHREAD_COND_INITIALIZER};

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&F.lock);
  for (;;) {
    while (!F.head)
      pthread_cond_wait(&F.work, &F.lock);
    struct op *o = F.head;
    F.head = o->next;
    if (!F.head)
      F.tail = NULL;
    unsigned delay = F.delay_us;
    pthread_mutex_unlock(&F.lock);
    if (o->type == OP_COPY) {
      if (delay)
        usleep(delay);
      if (!o->fail && o->n)
        memcpy(o->dst, o->src, o->n); /* reads the source now, as DMA */
    }
    pthread_mutex_lock(&F.lock);
    if (o->type == OP_COPY && o->fail)
      o->st->error = 1;
    if (o->type == OP_EVENT) {
      o->ev->failed = o->st->error;
      o->st->error = 0;
      o->ev->done = 1;
    }
    o->st->done++;
    pthread_cond_broadcast(&F.done);
    free(o);
  }
  return NULL;
}

static void enqueue(struct op *o) {
  o->next = NULL;
  if (F.tail)
    F.tail->next = o;
  else
    F.head = o;
  F.tail = o;
  o->st->queued++;
  pthread_cond_signal(&F.work);
}

static struct alloc *find(const void *p, size_t n, int pinned) {
  uintptr_t a = (uintptr_t)p;
  for (struct alloc *x = F.allocs; x; x = x->next) {
    uintptr_t b = (uintptr_t)x->p;
    if (x->pinned == pinned && a >= b && a - b <= x->n && n <= x->n - (a - b))
      return x;
  }
  return NULL;
}

static int track(void *p, size_t n, int dev, int pinned) {
  struct alloc *x = calloc(1, sizeof *x);
  if (!x)
    return -1;
  x->p = p;
  x->n = n;
  x->dev = dev;
  x->pinned = pinned;
  x->home = dev;
  pthread_mutex_lock(&F.lock);
  static uint64_t next_id;
  x->id = ++next_id;
  x->next = F.allocs;
  F.allocs = x;
  if (pinned)
    F.stats.pinned_live++;
  else
    F.stats.dev_live++;
  pthread_mutex_unlock(&F.lock);
  return 0;
}

static void untrack(void *p, int pinned) {
  pthread_mutex_lock(&F.lock);
  struct alloc **pp = &F.allocs;
  while (*pp && ((*pp)->p != p || (*pp)->pinned != pinned))
    pp = &(*pp)->next;
  if (*pp) {
    struct alloc *x = *pp;
    *pp = x->next;
    free(x->p);
    free(x);
    if (pinned)
      F.stats.pinned_live--;
    else
      F.stats.dev_live--;
  } else {
    F.stats.violations++;
  }
  pthread_mutex_unlock(&F.lock);
}

/* Counts an op for dev; one naming a device the fake does not have, or
 * another device than `owner` (when owner >= 0), is a violation. */
static void op_on(int dev, int owner) {
  pthread_mutex_lock(&F.lock);
  if (dev < 0 || dev >= N_DEVICES || (owner >= 0 && owner != dev))
    F.stats.violations++;
  else
    F.stats.dev_ops[dev]++;
  pthread_mutex_unlock(&F.lock);
}

/* The device owning device memory at p, or -1. */
static int owner_of(const void *p) {
  pthread_mutex_lock(&F.lock);
  struct alloc *x = find(p, 0, 0);
  int d = x ? x->dev : -1;
  pthread_mutex_unlock(&F.lock);
  return d;
}

/* ---- ops ----------------------------------------------------------------- */

static int f_init(char why[HGPU_WHY]) {
  pthread_mutex_lock(&F.lock);
  int rc = 0;
  if (!F.started) {
    if (pthread_create(&F.worker, NULL, worker, NULL) != 0) {
      hgpu_why(why, "fake GPU: cannot start its worker");
      rc = -1;
    } else {
      pthread_detach(F.worker);
      F.started = 1;
    }
  }
  pthread_mutex_unlock(&F.lock);
  return rc;
}

static void f_version(char *buf, size_t len) {
  snprintf(buf, len, "fake GPU for tests");
}

static int f_device_count(int *n, char why[HGPU_WHY]) {
  (void)why;
  *n = N_DEVICES;
  return 0;
}

static int f_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                         size_t name_len, char why[HGPU_WHY]) {
  if (dev < 0 || dev >= N_DEVICES) {
    hgpu_why(why, "fake GPU %d does not exist", dev);
    return -1;
  }
  snprintf(bus_id, HGPU_BUSID, "0000:%02x:00.0", 0x0f + dev);
  snprintf(name, name_len, "Fake GPU %d", dev);
  return 0;
}

static int f_classify(const void *ptr, struct hgpu_mem_info *info,
                      char why[HGPU_WHY]) {
  (void)why;
  pthread_mutex_lock(&F.lock);
  struct alloc *x = find(ptr, 0, 0);
  if (x) {
    memset(info, 0, sizeof *info);
    info->kind = HIPOBJ_MEM_CUDA;
    info->device = x->dev;
    info->base = x->p;
    info->size = x->n;
    info->buffer_id = x->id;
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "0000:%02x:00.0",
             0x0f + x->dev);
  }
  pthread_mutex_unlock(&F.lock);
  return x ? 1 : 0;
}

static int dmabuf_on; /* fake_gpu_set_dmabuf() */

static int f_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  (void)dev;
  if (__atomic_load_n(&dmabuf_on, __ATOMIC_SEQ_CST))
    return 1;
  hgpu_why(why, "the fake GPU has no dma-buf export");
  return 0;
}

/* The "dma-buf" is an empty memfd: only a registration hook that knows
 * the fake's memory is host memory can use it (see fake_gpu.h). */
static int f_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                           uint64_t *offset, char why[HGPU_WHY]) {
  *fd = -1;
  if (!f_dmabuf_supported(dev, why))
    return -1;
  pthread_mutex_lock(&F.lock);
  struct alloc *a = F.allocs;
  while (a && !(a->dev == dev && !a->pinned && (const char *)ptr >= a->p &&
                (const char *)ptr + len <= a->p + a->n))
    a = a->next;
  if (a)
    F.stats.dmabuf_exports++;
  pthread_mutex_unlock(&F.lock);
  if (!a) {
    hgpu_why(why, "fake GPU: [%p, +%zu) is not device memory", ptr, len);
    return -1;
  }
  *fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
  if (*fd < 0) {
    hgpu_why(why, "memfd_create: %s", strerror(errno));
    return -1;
  }
  *offset = 0;
  return 0;
}

void fake_gpu_set_dmabuf(int on) {
  __atomic_store_n(&dmabuf_on, on, __ATOMIC_SEQ_CST);
}

static int f_host_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  op_on(dev, -1);
  void *p = malloc(len ? len : 1);
  if (!p || track(p, len, dev, 1) != 0) {
    free(p);
    hgpu_why(why, "fake GPU: no host memory");
    return -1;
  }
  *out = p;
  return 0;
}

static void f_host_free(int dev, void *p) {
  pthread_mutex_lock(&F.lock);
  struct alloc *x = find(p, 0, 1);
  int home = x ? x->home : -1;
  pthread_mutex_unlock(&F.lock);
  op_on(dev, home);
  untrack(p, 1);
}

static int f_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  op_on(dev, -1);
  void *p = malloc(len ? len : 1);
  if (!p || track(p, len, dev, 0) != 0) {
    free(p);
    hgpu_why(why, "fake GPU: out of device memory");
    return -1;
  }
  *out = p;
  return 0;
}

static void f_dev_free(int dev, void *p) {
  op_on(dev, owner_of(p));
  untrack(p, 0);
}

static int f_copy(int dev, void *dst, const void *src, size_t n,
                  char why[HGPU_WHY]) {
  (void)why;
  int od = owner_of(dst), os = owner_of(src);
  op_on(dev, od >= 0 ? od : os);
  if (od >= 0 && os >= 0 && od != os)
    op_on(dev, -2); /* device to device: not something the library does */
  pthread_mutex_lock(&F.lock);
  F.stats.sync_copies++;
  pthread_mutex_unlock(&F.lock);
  if (n)
    memcpy(dst, src, n);
  return 0;
}

static int f_stream_create(int dev, void **out, char why[HGPU_WHY]) {
  op_on(dev, -1);
  struct fstream *s = calloc(1, sizeof *s);
  if (!s) {
    hgpu_why(why, "fake GPU: no memory for a stream");
    return -1;
  }
  s->dev = dev;
  *out = s;
  return 0;
}

static void f_stream_destroy(int dev, void *stream) {
  struct fstream *s = stream;
  op_on(dev, s->dev);
  pthread_mutex_lock(&F.lock);
  if (s->queued != s->done)
    F.stats.violations++; /* the library must wait for its copies first */
  while (s->queued != s->done)
    pthread_cond_wait(&F.done, &F.lock);
  pthread_mutex_unlock(&F.lock);
  free(s);
}

static int f_event_create(int dev, void **out, char why[HGPU_WHY]) {
  op_on(dev, -1);
  struct fevent *e = calloc(1, sizeof *e);
  if (!e) {
    hgpu_why(why, "fake GPU: no memory for an event");
    return -1;
  }
  e->done = 1; /* never recorded: complete, as in CUDA */
  e->dev = dev;
  *out = e;
  return 0;
}

static void f_event_destroy(int dev, void *event) {
  struct fevent *e = event;
  op_on(dev, e->dev);
  pthread_mutex_lock(&F.lock);
  if (!e->done)
    F.stats.violations++;
  while (!e->done)
    pthread_cond_wait(&F.done, &F.lock);
  pthread_mutex_unlock(&F.lock);
  free(e);
}

static int queue_copy(int d, int to_device, void *dst, const void *src,
                      size_t n, void *stream, char why[HGPU_WHY]) {
  const void *host = to_device ? src : dst;
  const void *dev = to_device ? dst : src;
  struct fstream *st = stream;
  op_on(d, st->dev);
  pthread_mutex_lock(&F.lock);
  unsigned long nth = ++F.copies;
  if (to_device)
    F.stats.h2d++;
  else
    F.stats.d2h++;
  if (!find(host, n, 1))
    F.stats.unpinned++;
  struct alloc *x = find(dev, n, 0);
  if (!x || x->dev != d)
    F.stats.violations++; /* not memory of the device named */
  else if (to_device)
    F.stats.dev_h2d[d]++;
  else
    F.stats.dev_d2h[d]++;
  int fail = F.fail_at && nth == F.fail_at;
  if (fail && F.fail_how == FAKE_FAIL_QUEUE) {
    pthread_mutex_unlock(&F.lock);
    hgpu_why(why, "fake GPU: injected failure of copy #%lu", nth);
    return -1;
  }
  struct op *o = calloc(1, sizeof *o);
  if (!o) {
    pthread_mutex_unlock(&F.lock);
    hgpu_why(why, "fake GPU: no memory");
    return -1;
  }
  o->type = OP_COPY;
  o->st = stream;
  o->dst = dst;
  o->src = src;
  o->n = n;
  o->fail = fail;
  enqueue(o);
  pthread_mutex_unlock(&F.lock);
  return 0;
}

static int f_h2d_async(int dev, void *dst, const void *src, size_t n,
                       void *stream, char why[HGPU_WHY]) {
  return queue_copy(dev, 1, dst, src, n, stream, why);
}

static int f_d2h_async(int dev, void *dst, const void *src, size_t n,
                       void *stream, char why[HGPU_WHY]) {
  return queue_copy(dev, 0, dst, src, n, stream, why);
}

static int f_event_record(int dev, void *event, void *stream,
                          char why[HGPU_WHY]) {
  struct fevent *e = event;
  op_on(dev, e->dev);
  op_on(dev, ((struct fstream *)stream)->dev);
  struct op *o = calloc(1, sizeof *o);
  if (!o) {
    hgpu_why(why, "fake GPU: no memory");
    return -1;
  }
  pthread_mutex_lock(&F.lock);
  if (!e->done)
    F.stats.violations++; /* re-recorded while pending: legal but unused */
  e->st = stream;
  e->done = 0;
  e->failed = 0;
  o->type = OP_EVENT;
  o->st = stream;
  o->ev = e;
  enqueue(o);
  pthread_mutex_unlock(&F.lock);
  return 0;
}

static int f_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  struct fevent *e = event;
  op_on(dev, e->dev);
  pthread_mutex_lock(&F.lock);
  while (!e->done)
    pthread_cond_wait(&F.done, &F.lock);
  int failed = e->failed;
  pthread_mutex_unlock(&F.lock);
  if (failed) {
    hgpu_why(why, "fake GPU: injected asynchronous copy failure");
    return -1;
  }
  return 0;
}

static int f_event_query(int dev, void *event, char why[HGPU_WHY]) {
  struct fevent *e = event;
  op_on(dev, e->dev);
  pthread_mutex_lock(&F.lock);
  int done = e->done, failed = e->failed;
  pthread_mutex_unlock(&F.lock);
  if (done && failed) {
    hgpu_why(why, "fake GPU: injected asynchronous copy failure");
    return -1;
  }
  return done;
}

static const char *f_error_string(int code) {
  (void)code;
  return "fake GPU error";
}

static const struct hgpu_ops fake_ops = {
    .name = "fake-cuda",
    .library = "(fake GPU for tests)",
    .init = f_init,
    .version = f_version,
    .device_count = f_device_count,
    .device_info = f_device_info,
    .classify = f_classify,
    .dmabuf_supported = f_dmabuf_supported,
    .dmabuf_export = f_dmabuf_export,
    .host_alloc = f_host_alloc,
    .host_free = f_host_free,
    .dev_alloc = f_dev_alloc,
    .dev_free = f_dev_free,
    .copy = f_copy,
    .stream_create = f_stream_create,
    .stream_destroy = f_stream_destroy,
    .event_create = f_event_create,
    .event_destroy = f_event_destroy,
    .h2d_async = f_h2d_async,
    .d2h_async = f_d2h_async,
    .event_record = f_event_record,
    .event_sync = f_event_sync,
    .event_query = f_event_query,
    .error_string = f_error_string,
};

void hgpu_register_fake_for_tests(void) {
  hgpu_register_ops(HIPOBJ_MEM_CUDA, &fake_ops);
}

void hgpu_unregister_fake_for_tests(void) {
  hgpu_register_ops(HIPOBJ_MEM_CUDA, NULL);
}

void fake_gpu_set_delay_us(unsigned us) {
  pthread_mutex_lock(&F.lock);
  F.delay_us = us;
  pthread_mutex_unlock(&F.lock);
}

void fake_gpu_fail_copy(unsigned nth, enum fake_fault how) {
  pthread_mutex_lock(&F.lock);
  F.fail_at = nth ? F.copies + nth : 0;
  F.fail_how = how;
  pthread_mutex_unlock(&F.lock);
}

void fake_gpu_stats(struct fake_gpu_stats *out) {
  pthread_mutex_lock(&F.lock);
  *out = F.stats;
  pthread_mutex_unlock(&F.lock);
}
