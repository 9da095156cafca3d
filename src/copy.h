/* copy.h - the memory side of a staged transfer (staging.c): how the
 * chunks of host memory that carry a GET's body or a PUT's source reach
 * the memory the transfer names, and back, in order, with events to wait
 * for. GPU memory does it with its platform's streams and events (gpu.h);
 * files with ordered pwrite/pread on the client's file threads
 * (mem_file.c). Offsets are relative to the start of the staged range.
 * Every op that can fail returns 0 or -1 with a one-line reason in why. */
#ifndef HIPOBJ_COPY_H
#define HIPOBJ_COPY_H

#include <stddef.h>
#include <stdint.h>

#define HCOPY_WHY 512

struct hgpu_ops;
struct hfileq;

/* One staged range of one memory. */
struct hcopy {
  const struct hcopy_ops *ops;
  /* GPU memory */
  const struct hgpu_ops *gpu;
  int dev;
  char *base; /* device address of byte 0 of the range */
  /* files */
  int fd;
  uint64_t off;         /* file offset of byte 0 of the range */
  struct hfileq *fileq; /* the client's file threads */
};

struct hcopy_ops {
  const char *to_what, *from_what; /* "GPU copy"; "file write", "file read" */
  /* Host memory for chunks, freed by chunk_free(dev, p): pinned by the
   * GPU's platform, or page-aligned for files. */
  int (*chunk_alloc)(const struct hcopy *c, size_t n, void **out,
                     char why[HCOPY_WHY]);
  void (*chunk_free)(const struct hgpu_ops *gpu, int dev, void *p);
  int (*stream_create)(const struct hcopy *c, void **out, char why[HCOPY_WHY]);
  void (*stream_destroy)(const struct hcopy *c, void *stream);
  int (*event_create)(const struct hcopy *c, void **out, char why[HCOPY_WHY]);
  void (*event_destroy)(const struct hcopy *c, void *event);
  /* Queued on the stream, in order: chunk -> memory, memory -> chunk.
   * here: the caller waits for this copy next, so a copy that needs no
   * device may run on the calling thread instead (when the stream has
   * nothing else queued): handing it to another thread would only add two
   * wake-ups to the wait. */
  int (*to_mem)(const struct hcopy *c, void *stream, uint64_t off,
                const void *src, size_t n, int here, char why[HCOPY_WHY]);
  int (*from_mem)(const struct hcopy *c, void *stream, void *dst, uint64_t off,
                  size_t n, char why[HCOPY_WHY]);
  int (*event_record)(const struct hcopy *c, void *event, void *stream,
                      char why[HCOPY_WHY]);
  /* Waits until the copies recorded before the event are over; -1 when one
   * of them failed. */
  int (*event_sync)(const struct hcopy *c, void *event, char why[HCOPY_WHY]);
};

extern const struct hcopy_ops hcopy_gpu_ops;  /* staging.c */
extern const struct hcopy_ops hcopy_file_ops; /* mem_file.c */

#endif
