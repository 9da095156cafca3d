/* copy_gpu.c - the copy side of staged transfers for GPU memory (copy.h):
 * the platform's pinned host memory for chunks, its streams and events,
 * and its asynchronous copies to and from the device addresses of the
 * staged range (gpu.h). */
#include "copy.h"
#include "gpu.h"

static int gpu_chunk_alloc(const struct hcopy *c, size_t n, void **out,
                           char why[HCOPY_WHY]) {
  return c->gpu->host_alloc(c->dev, n, out, why);
}

static void gpu_chunk_free(const struct hgpu_ops *gpu, int dev, void *p) {
  gpu->host_free(dev, p);
}

static int gpu_stream_create(const struct hcopy *c, void **out,
                             char why[HCOPY_WHY]) {
  return c->gpu->stream_create(c->dev, out, why);
}

static void gpu_stream_destroy(const struct hcopy *c, void *stream) {
  c->gpu->stream_destroy(c->dev, stream);
}

static int gpu_event_create(const struct hcopy *c, void **out,
                            char why[HCOPY_WHY]) {
  return c->gpu->event_create(c->dev, out, why);
}

static void gpu_event_destroy(const struct hcopy *c, void *event) {
  c->gpu->event_destroy(c->dev, event);
}

static int gpu_to_mem(const struct hcopy *c, void *stream, uint64_t off,
                      const void *src, size_t n, int here,
                      char why[HCOPY_WHY]) {
  (void)here; /* the DMA engine copies either way */
  return c->gpu->h2d_async(c->dev, c->base + off, src, n, stream, why);
}

static int gpu_from_mem(const struct hcopy *c, void *stream, void *dst,
                        uint64_t off, size_t n, char why[HCOPY_WHY]) {
  return c->gpu->d2h_async(c->dev, dst, c->base + off, n, stream, why);
}

static int gpu_event_record(const struct hcopy *c, void *event, void *stream,
                            char why[HCOPY_WHY]) {
  return c->gpu->event_record(c->dev, event, stream, why);
}

static int gpu_event_sync(const struct hcopy *c, void *event,
                          char why[HCOPY_WHY]) {
  return c->gpu->event_sync(c->dev, event, why);
}

const struct hcopy_ops hcopy_gpu_ops = {
    .to_what = "GPU copy",
    .from_what = "GPU copy",
    .chunk_alloc = gpu_chunk_alloc,
    .chunk_free = gpu_chunk_free,
    .stream_create = gpu_stream_create,
    .stream_destroy = gpu_stream_destroy,
    .event_create = gpu_event_create,
    .event_destroy = gpu_event_destroy,
    .to_mem = gpu_to_mem,
    .from_mem = gpu_from_mem,
    .event_record = gpu_event_record,
    .event_sync = gpu_event_sync,
};
