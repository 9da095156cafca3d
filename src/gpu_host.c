/* gpu_host.c - the host memory platform: the ops table every other platform
 * is measured against. Copies are plain memcpy and finish before they return,
 * so streams and events are placeholders that are always complete. */
#include <stdlib.h>
#include <string.h>

#include "base/strutil.h"
#include "gpu.h"

static char placeholder; /* the address stands for every stream and event */

static int host_init(char why[HGPU_WHY]) {
  (void)why;
  return 0;
}

static void host_version(char *buf, size_t len) {
  hstrlcpy(buf, "host memory", len);
}

static int host_device_count(int *n, char why[HGPU_WHY]) {
  (void)why;
  *n = 0;
  return 0;
}

static int host_device_info(int dev, char bus_id[HGPU_BUSID], char *name,
                            size_t name_len, char why[HGPU_WHY]) {
  (void)bus_id;
  (void)name;
  (void)name_len;
  hgpu_why(why, "host memory has no device %d", dev);
  return -1;
}

static int host_classify(const void *ptr, struct hgpu_mem_info *info,
                         char why[HGPU_WHY]) {
  (void)ptr;
  (void)why;
  memset(info, 0, sizeof *info);
  info->kind = HIPOBJ_MEM_HOST;
  info->device = -1;
  return 1;
}

static int host_dmabuf_supported(int dev, char why[HGPU_WHY]) {
  (void)dev;
  hgpu_why(why, "host memory is registered directly, not through dma-buf");
  return 0;
}

static int host_dmabuf_export(int dev, const void *ptr, size_t len, int *fd,
                              uint64_t *offset, char why[HGPU_WHY]) {
  (void)ptr;
  (void)len;
  (void)offset;
  *fd = -1;
  return host_dmabuf_supported(dev, why) ? 0 : -1;
}

static int host_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  (void)dev;
  size_t page = hgpu_page_size();
  if (posix_memalign(out, page, len ? len : 1) != 0) {
    hgpu_why(why, "cannot allocate %zu bytes of host memory", len);
    return -1;
  }
  return 0;
}

static void host_free(int dev, void *p) {
  (void)dev;
  free(p);
}

static int host_dev_alloc(int dev, size_t len, void **out, char why[HGPU_WHY]) {
  return host_alloc(dev, len, out, why);
}

static void host_dev_free(int dev, void *p) {
  (void)dev;
  free(p);
}

static int host_copy(int dev, void *dst, const void *src, size_t n,
                     char why[HGPU_WHY]) {
  (void)dev;
  (void)why;
  if (n)
    memcpy(dst, src, n);
  return 0;
}

static int host_handle_create(int dev, void **out, char why[HGPU_WHY]) {
  (void)dev;
  (void)why;
  *out = &placeholder;
  return 0;
}

static void host_handle_destroy(int dev, void *h) {
  (void)dev;
  (void)h;
}

static int host_copy_async(int dev, void *dst, const void *src, size_t n,
                           void *stream, char why[HGPU_WHY]) {
  (void)stream;
  return host_copy(dev, dst, src, n, why);
}

static int host_event_record(int dev, void *event, void *stream,
                             char why[HGPU_WHY]) {
  (void)dev;
  (void)event;
  (void)stream;
  (void)why;
  return 0;
}

static int host_event_sync(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev;
  (void)event;
  (void)why;
  return 0;
}

static int host_event_query(int dev, void *event, char why[HGPU_WHY]) {
  (void)dev;
  (void)event;
  (void)why;
  return 1;
}

static const char *host_error_string(int code) {
  (void)code;
  return "host memory operation failed";
}

const struct hgpu_ops hgpu_host_ops = {
    .name = "host",
    .library = "",
    .init = host_init,
    .version = host_version,
    .device_count = host_device_count,
    .device_info = host_device_info,
    .classify = host_classify,
    .dmabuf_supported = host_dmabuf_supported,
    .dmabuf_export = host_dmabuf_export,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .dev_alloc = host_dev_alloc,
    .dev_free = host_dev_free,
    .copy = host_copy,
    .stream_create = host_handle_create,
    .stream_destroy = host_handle_destroy,
    .event_create = host_handle_create,
    .event_destroy = host_handle_destroy,
    .h2d_async = host_copy_async,
    .d2h_async = host_copy_async,
    .event_record = host_event_record,
    .event_sync = host_event_sync,
    .event_query = host_event_query,
    .error_string = host_error_string,
};
