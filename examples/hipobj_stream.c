/* hipobj_stream.c - the transfers of `hipobj cp` that cannot seek, and
 * --gpu.
 *
 * - S3 -> stdout (or a pipe/device): ranged chunks through one buffer, the
 *   first learning the size (no HEAD), every later one pinned to its ETag
 *   with If-Match; with --range only that range.
 * - stdin (or a pipe) -> S3: one PUT when the input fits one chunk, else
 *   the step-by-step multipart API, aborted on any failure.
 * - --gpu: the data passes through the memory of one GPU: downloads land
 *   in GPU memory and are copied out to the file, uploads are copied from
 *   the file into GPU memory first (both through one chunk-sized host
 *   buffer), so the library's GPU paths can be checked end to end with
 *   ordinary files. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj_xfer.h"

#define DEFAULT_CHUNK                                                          \
  ((uint64_t)8 << 20)    /* the library's default part size                    \
                          */
#define MAX_PARTS 10000u /* S3's limit per multipart upload */

uint64_t chunk_size(const struct cli *c) {
  return c->part_size ? c->part_size : DEFAULT_CHUNK;
}

int write_all(int fd, const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR && !cli_interrupted)
        continue;
      return -1;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* ---- --gpu: the data passes through GPU memory -------------------------- */

int gpu_buffer(struct cli *c, size_t n, struct hipobj_mem *dev,
               struct hipobj_error *err) {
  *dev = (struct hipobj_mem)HIPOBJ_MEM_INIT;
  if (!c->use_gpu)
    return HIPOBJ_OK;
  return hipobj_gpu_alloc(c->gpu_kind, c->gpu_device, n, dev, err);
}

int gpu_move(struct cli *c, const struct hipobj_mem *dev, void *host, size_t n,
             int to_gpu, struct hipobj_error *err) {
  (void)c;
  struct hipobj_mem h = hipobj_mem_host(host, n);
  struct hipobj_mem d = *dev;
  d.len = n;
  return to_gpu ? hipobj_gpu_copy(&d, &h, err) : hipobj_gpu_copy(&h, &d, err);
}

int gpu_file_move(struct cli *c, const struct hipobj_mem *dev, int fd,
                  uint64_t size, int to_gpu, struct hipobj_error *err) {
  size_t cap = (size_t)(size < chunk_size(c) ? size : chunk_size(c));
  unsigned char *buf = cap ? malloc(cap) : NULL;
  if (cap && !buf) {
    errno = ENOMEM;
    return -1;
  }
  int rc = 0;
  for (uint64_t off = 0; off < size && rc == 0;) {
    size_t n = (size_t)(size - off < cap ? size - off : cap);
    struct hipobj_mem d = *dev;
    d.ptr = (char *)dev->ptr + off;
    d.len = n;
    if (to_gpu) {
      ssize_t k = pread(fd, buf, n, (off_t)off);
      if (k >= 0 && (size_t)k != n)
        errno = EIO; /* the file shrank under us */
      if (k < 0 || (size_t)k != n)
        rc = -1;
      else
        rc = gpu_move(c, &d, buf, n, 1, err);
    } else {
      rc = gpu_move(c, &d, buf, n, 0, err);
      if (rc == 0 && write_all(fd, buf, n) != 0)
        rc = -1;
    }
    off += n;
  }
  int e = errno;
  free(buf);
  errno = e;
  return rc;
}

int download_gpu(struct xctx *x, const char *bucket, const char *key,
                 const char *src_name, int fd, const char *tmp, int64_t *mtime,
                 struct cp_stats *s) {
  struct cli *c = x->c;
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  if (hipobj_s3_head(c->client, bucket, key, &info, x->err) != HIPOBJ_OK) {
    cli_explain(c, bucket, key, x->err);
    return xfail_lib(x, src_name);
  }
  if (info.size > SIZE_MAX)
    return xfail_errno(x, src_name, EFBIG);
  size_t size = (size_t)info.size;
  if (!x->many)
    progress_set_total(x->p, size);
  int err = size > 0 ? reserve_space(fd, size) : 0;
  if (err != 0)
    return xfail_errno(x, tmp, err);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.if_match = info.etag;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  int st = gpu_buffer(c, size, &dev, x->err);
  if (st == HIPOBJ_OK)
    st = xfer_get(c, x->p, bucket, key, &dev, &go, &res, x->err);
  stats_add(s, &res);
  int rc = 0;
  if (st == HIPOBJ_OK && res.bytes == info.size &&
      (st = gpu_file_move(c, &dev, fd, size, 0, x->err)) < 0)
    rc = xfail_errno(x, tmp, errno);
  hipobj_gpu_free(&dev);
  if (rc != 0)
    return rc;
  if (st != HIPOBJ_OK)
    return xfail_lib(x, src_name);
  if (res.bytes != info.size)
    return xfail_msg(x, src_name,
                     "short read: got %" PRIu64 " of %" PRIu64 " bytes",
                     res.bytes, info.size);
  s->bytes += info.size;
  *mtime = info.last_modified;
  return 0;
}

/* ---- stream upload (stdin, pipes) --------------------------------------- */

/* Reads the input chunk by chunk. After a full chunk it reads one byte
 * ahead, so the caller knows whether that chunk was the last one: input
 * that fits one chunk becomes a single PUT, and a multipart upload never
 * ends with an empty part. */
struct reader {
  int fd;
  int peeked;
  unsigned char peek;
  int eof;
};

static int read_some(struct reader *r, void *buf, size_t cap, size_t *got) {
  for (;;) {
    ssize_t k = read(r->fd, buf, cap);
    if (k >= 0) {
      *got = (size_t)k;
      return 0;
    }
    if (errno != EINTR || cli_interrupted)
      return -1;
  }
}

static int fill(struct reader *r, unsigned char *buf, size_t cap, size_t *out) {
  size_t n = 0, got;
  if (r->peeked) {
    buf[n++] = r->peek;
    r->peeked = 0;
  }
  while (n < cap) {
    if (read_some(r, buf + n, cap - n, &got) != 0)
      return -1;
    if (got == 0) {
      r->eof = 1;
      *out = n;
      return 0;
    }
    n += got;
  }
  if (read_some(r, &r->peek, 1, &got) != 0)
    return -1;
  if (got == 1)
    r->peeked = 1;
  else
    r->eof = 1;
  *out = n;
  return 0;
}

/* Sends one chunk: the whole object (part 0) or part `part`. */
static int send_chunk(struct xctx *x, const struct hipobj_mem *dev,
                      unsigned char *buf, size_t n, const char *bucket,
                      const char *key, struct hipobj_mpu *mpu, unsigned part,
                      struct cp_stats *s) {
  struct cli *c = x->c;
  struct hipobj_mem mem = hipobj_mem_host(n ? buf : NULL, n);
  if (c->use_gpu) {
    if (gpu_move(c, dev, buf, n, 1, x->err) != HIPOBJ_OK)
      return -1;
    mem = *dev;
    mem.len = n;
  }
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int st;
  if (!mpu) {
    struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
    po.content_type = c->content_type;
    st = hipobj_s3_put(c->client, bucket, key, &mem, &po, &res, x->err);
  } else {
    st = hipobj_mpu_upload_part(mpu, part, &mem, &res, x->err);
  }
  stats_add(s, &res);
  if (st != HIPOBJ_OK)
    return -1;
  s->bytes += n;
  progress_add(x->p, n);
  return 0;
}

int upload_stream(struct xctx *x, int fd, const char *src_arg,
                  const char *bucket, const char *key, struct cp_stats *s) {
  struct cli *c = x->c;
  const char *src_name = strcmp(src_arg, "-") ? src_arg : "stdin";
  char *url = s3_url(bucket, key);
  uint64_t chunk64 = chunk_size(c);
  if (!url)
    return xfail_errno(x, src_name, ENOMEM);
  if (chunk64 > SIZE_MAX / 2) {
    free(url);
    return xfail_msg(x, src_name, "--part-size too large for memory");
  }
  size_t chunk = (size_t)chunk64;
  unsigned char *buf = malloc(chunk);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  int rc = 0;
  if (!buf) {
    rc =
        xfail_msg(x, src_name,
                  "cannot allocate a %zu-byte buffer (see --part-size)", chunk);
    goto out;
  }
  if (gpu_buffer(c, chunk, &dev, x->err) != HIPOBJ_OK) {
    rc = xfail_lib(x, "--gpu");
    goto out;
  }
  /* From here a first Ctrl-C only flags: the loop aborts the upload. */
  signals_set_soft(1);
  struct reader r = {.fd = fd};
  struct hipobj_mpu *mpu = NULL;
  size_t n = 0;
  if (fill(&r, buf, chunk, &n) != 0) {
    rc = xfail_errno(x, src_name, errno);
  } else if (r.eof) {
    if (send_chunk(x, &dev, buf, n, bucket, key, NULL, 0, s) != 0)
      rc = xfail_lib(x, url);
  } else if (hipobj_mpu_create(c->client, bucket, key, c->content_type, &mpu,
                               x->err) != HIPOBJ_OK) {
    rc = xfail_lib(x, url);
  } else {
    for (unsigned part = 1; rc == 0; part++) {
      if (part > MAX_PARTS) {
        char sz[32];
        fmt_bytes(chunk, sz, sizeof sz);
        rc = xfail_msg(x, src_name,
                       "input needs more than %u parts of %s; use a larger "
                       "--part-size",
                       MAX_PARTS, sz);
      } else if (send_chunk(x, &dev, buf, n, bucket, key, mpu, part, s) != 0) {
        rc = xfail_lib(x, url);
      } else if (cli_interrupted) {
        rc = xfail_errno(x, url, EINTR);
      } else if (r.eof) {
        break;
      } else if (fill(&r, buf, chunk, &n) != 0) {
        rc = xfail_errno(x, errno == EINTR ? url : src_name, errno);
      } else if (n == 0) { /* cannot happen after a successful peek */
        break;
      }
    }
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    if (rc == 0 && hipobj_mpu_complete(mpu, &res, x->err) != HIPOBJ_OK)
      rc = xfail_lib(x, url);
    s->retries += res.retries;
    if (res.path != HIPOBJ_PATH_NONE)
      s->path = res.path;
    if (rc != 0 && c->keep_failed_upload)
      snprintf(x->kept_upload, sizeof x->kept_upload, "%s",
               hipobj_mpu_upload_id(mpu));
    else if (rc != 0 && hipobj_mpu_abort(mpu, NULL) != HIPOBJ_OK) {
      snprintf(x->kept_upload, sizeof x->kept_upload, "%s",
               hipobj_mpu_upload_id(mpu));
      x->abort_failed = 1;
    }
    hipobj_mpu_free(mpu);
  }
  signals_set_soft(0);
  if (rc == 0 && s->path == HIPOBJ_PATH_NONE)
    s->path = HIPOBJ_PATH_HTTP;
out:
  hipobj_gpu_free(&dev);
  free(buf);
  free(url);
  return rc;
}

/* ---- stream download (stdout, pipes, devices) --------------------------- */

int download_stream(struct xctx *x, const char *bucket, const char *key,
                    const char *src_name, int fd, const char *dst_name,
                    int data_on_stdout, struct cp_stats *s) {
  struct cli *c = x->c;
  uint64_t chunk = chunk_size(c);
  if (chunk > SIZE_MAX / 2)
    return xfail_msg(x, src_name, "--part-size too large for memory");
  uint64_t off = c->has_range ? c->range_off : 0;
  uint64_t end = UINT64_MAX; /* learnt from the first answer */
  if (c->has_range && c->range_len)
    end = off + c->range_len;
  if (c->has_range && c->range_len && c->range_len < chunk)
    chunk = c->range_len;
  size_t cap = (size_t)chunk;
  unsigned char *buf = malloc(cap);
  if (!buf)
    return xfail_msg(x, src_name,
                     "cannot allocate a %zu-byte buffer (see --part-size)",
                     cap);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  if (gpu_buffer(c, cap, &dev, x->err) != HIPOBJ_OK) {
    free(buf);
    return xfail_lib(x, "--gpu");
  }
  char etag[HIPOBJ_ETAG_MAX] = "";
  int rc = 0, first = 1;
  unsigned chunks = 0;
  while (rc == 0 && (first || off < end)) {
    size_t n = (size_t)(end - off < cap ? end - off : cap);
    struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
    go.has_range = 1;
    go.offset = off;
    go.length = n;
    go.if_match = first ? NULL : etag;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    struct hipobj_mem mem = hipobj_mem_host(buf, n);
    if (c->use_gpu) {
      mem = dev;
      mem.len = n;
    }
    int st = hipobj_s3_get(c->client, bucket, key, &mem, &go, &res, x->err);
    stats_add(s, &res);
    if (st == HIPOBJ_E_INVALID_RANGE && first && !c->has_range) {
      break; /* 416 to the first range of an empty object: nothing to write */
    }
    if (st == HIPOBJ_OK && c->use_gpu)
      st = gpu_move(c, &dev, buf, (size_t)res.bytes, 0, x->err);
    if (st != HIPOBJ_OK) {
      if (first)
        cli_explain(c, bucket, key, x->err);
      rc = xfail_lib(x, src_name);
      break;
    }
    if (first) {
      snprintf(etag, sizeof etag, "%s", res.etag);
      if (res.object_size < end)
        end = res.object_size;
      if (!x->many)
        progress_set_total(x->p, end > off ? end - off : 0);
      first = 0;
      if (end <= off)
        break;
      n = (size_t)(end - off < n ? end - off : n);
    }
    if (res.bytes != n) {
      rc = xfail_msg(x, src_name,
                     "short read at offset %" PRIu64 ": got %" PRIu64
                     " of %zu bytes",
                     off, res.bytes, n);
      break;
    }
    if (write_all(fd, buf, n) != 0) {
      int e = errno;
      if (data_on_stdout && e == EPIPE) {
        rc = CLI_EXIT_PIPE; /* the reader went away: quietly, as SIGPIPE */
        x->kind = XF_PIPE;
      } else {
        rc = xfail_errno(x, dst_name, e);
      }
      break;
    }
    progress_add(x->p, n);
    off += n;
    s->bytes += n;
    chunks++;
  }
  s->parts += chunks > 1 ? chunks : 0;
  if (s->path == HIPOBJ_PATH_NONE && s->bytes > 0)
    s->path = HIPOBJ_PATH_HTTP;
  hipobj_gpu_free(&dev);
  free(buf);
  return rc;
}
