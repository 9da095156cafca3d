/* hipobj_cp.c - `hipobj cp SRC DST`: uploads and downloads between S3 and
 * local files or stdin/stdout.
 *
 * - file -> S3: the open file is handed to hipobj_s3_put as file memory
 *   (hipobj_mem_file), which the library reads with pread through its
 *   bounded staging pool: memory use does not grow with the file, and
 *   nothing is mapped.
 * - S3 -> file: the object is fetched as file memory into a temp file in
 *   the destination's directory (pwrite, parallel ranged GETs), which is
 *   renamed into place only once complete: a failed download never leaves
 *   a partial file under the final name, and a full disk is an error
 *   ("pwrite: No space left on device"), not a SIGBUS.
 * - S3 -> stdout (or a pipe/device): ranged chunks through one buffer.
 * - stdin (or a pipe) -> S3: one PUT when the input fits one chunk, else the
 *   step-by-step multipart API, aborted on any failure.
 * Downloads pin the ETag read by HEAD with If-Match, so an object replaced
 * mid-transfer fails the copy instead of mixing two versions.
 * Interrupted (SIGINT, SIGTERM) during a transfer, cp cancels it through
 * the library (hipobj_wait.c): a multipart upload is aborted (or, with
 * --keep-failed-upload, kept and its id printed), a download's temp file
 * removed, and the exit status is 128 + the signal.
 * With --gpu the data passes through the memory of one GPU: downloads land
 * in GPU memory and are copied out to the file, uploads are copied from the
 * file into GPU memory first (both through one chunk-sized host buffer), so the
 * library's GPU paths can be checked end to end with ordinary files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipobj_cli.h"

#define DEFAULT_CHUNK                                                          \
  ((uint64_t)8 << 20)    /* the library's default part size                    \
                          */
#define MAX_PARTS 10000u /* S3's limit per multipart upload */

/* What one copy did, for the summary and --json. */
struct cp_stats {
  const char *src; /* display names */
  const char *dst;
  uint64_t bytes;
  unsigned retries;
  unsigned parts;
  enum hipobj_data_path path;
  double start;
};

static void stats_add(struct cp_stats *s, const struct hipobj_xfer_result *r) {
  s->retries += r->retries;
  s->parts += r->parts;
  if (r->path != HIPOBJ_PATH_NONE)
    s->path = r->path;
}

static uint64_t chunk_size(const struct cli *c) {
  return c->part_size ? c->part_size : DEFAULT_CHUNK;
}

/* Ends a successful copy: summary on the terminal, JSON or an aws-style
 * "upload: a to b" line. With object data on stdout, JSON goes to stderr
 * and the text line is left out. */
static int cp_done(const struct cli *c, struct progress *p, const char *verb,
                   const struct cp_stats *s, int data_on_stdout) {
  double secs = now_seconds() - s->start;
  progress_end(p, 1, s->bytes, secs);
  if (c->json) {
    FILE *f = data_on_stdout ? stderr : stdout;
    json_begin(f, "cp");
    json_str(f, "src", s->src);
    json_str(f, "dst", s->dst);
    json_u64(f, "bytes", s->bytes);
    json_double(f, "seconds", secs, 3);
    json_double(f, "MBps", secs > 0 ? (double)s->bytes / secs / 1e6 : 0, 2);
    json_u64(f, "retries", s->retries);
    json_u64(f, "parts", s->parts);
    json_str(f, "data_path", hipobj_data_path_name(s->path));
    json_end(f);
  } else if (!c->quiet && !data_on_stdout) {
    cli_print(stdout, "%s: %s to %s\n", verb, s->src, s->dst);
  }
  return 0;
}

/* What to say of a multipart upload kept on failure (upload_id "" when
 * none was kept). */
static void kept_text(const char *upload_id, char *out, size_t cap) {
  out[0] = '\0';
  if (upload_id && *upload_id)
    snprintf(out, cap,
             "; multipart upload %s was kept (--keep-failed-upload): "
             "resume or abort it",
             upload_id);
}

/* Ends a failed copy: erase the display, then the one error line. An
 * interrupted copy says so and ends with 128 + the signal. */
static int cp_fail_lib(const struct cli *c, struct progress *p,
                       const char *subject, const char *upload_id) {
  progress_end(p, 0, 0, 0);
  char cause[1400], kept[200];
  kept_text(upload_id, kept, sizeof kept);
  if (cli_interrupted) {
    report_msg(subject, "interrupted%s", kept);
    return CLI_EXIT_INTERRUPTED;
  }
  describe_error(c, c->err, cause, sizeof cause);
  if (hipobj_error_status(c->err) == HIPOBJ_E_PRECONDITION)
    return report_msg(subject, "%s (the object changed during the copy)%s",
                      cause, kept);
  return report_msg(subject, "%s%s", cause, kept);
}

static int cp_fail_errno(struct progress *p, const char *subject, int e) {
  progress_end(p, 0, 0, 0);
  if (e == EINTR && cli_interrupted) {
    report_msg(subject, "interrupted");
    return CLI_EXIT_INTERRUPTED;
  }
  return report_errno(subject, e);
}

/* The last path component ("c" of "a/b/c"); "" when path ends in '/'. */
static const char *last_component(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int ends_with_slash(const char *s) {
  size_t n = strlen(s);
  return n > 0 && s[n - 1] == '/';
}

/* A Content-Type from the file name for the common cases, so that objects
 * served over HTTP render; NULL leaves the library's default. */
static const char *guess_content_type(const char *path) {
  static const struct {
    const char *ext, *type;
  } types[] = {
      {"txt", "text/plain"},        {"log", "text/plain"},
      {"md", "text/markdown"},      {"csv", "text/csv"},
      {"html", "text/html"},        {"htm", "text/html"},
      {"css", "text/css"},          {"js", "text/javascript"},
      {"json", "application/json"}, {"xml", "application/xml"},
      {"pdf", "application/pdf"},   {"zip", "application/zip"},
      {"gz", "application/gzip"},   {"tar", "application/x-tar"},
      {"png", "image/png"},         {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},       {"gif", "image/gif"},
      {"svg", "image/svg+xml"},     {"webp", "image/webp"},
      {"mp4", "video/mp4"},         {"wav", "audio/wav"},
  };
  const char *dot = strrchr(last_component(path), '.');
  if (!dot)
    return NULL;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (!strcasecmp(dot + 1, types[i].ext))
      return types[i].type;
  return NULL;
}

static int write_all(int fd, const unsigned char *p, size_t n) {
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

/* n bytes on the --gpu device (none without --gpu). Returns 0 or a status
 * with the cause in c->err. */
static int gpu_buffer(struct cli *c, size_t n, struct hipobj_mem *dev) {
  *dev = (struct hipobj_mem)HIPOBJ_MEM_INIT;
  if (!c->use_gpu)
    return HIPOBJ_OK;
  return hipobj_gpu_alloc(c->gpu_kind, c->gpu_device, n, dev, c->err);
}

/* Copies n bytes between host memory and the start of a GPU buffer. */
static int gpu_move(struct cli *c, const struct hipobj_mem *dev, void *host,
                    size_t n, int to_gpu) {
  struct hipobj_mem h = hipobj_mem_host(host, n);
  struct hipobj_mem d = *dev;
  d.len = n;
  return to_gpu ? hipobj_gpu_copy(&d, &h, c->err)
                : hipobj_gpu_copy(&h, &d, c->err);
}

/* Moves size bytes between the file fd (from offset 0) and the start of a
 * GPU buffer through one host buffer of at most a chunk. Returns 0, or a
 * status with the cause in c->err, or -1 with errno for the file. */
static int gpu_file_move(struct cli *c, const struct hipobj_mem *dev, int fd,
                         uint64_t size, int to_gpu) {
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
        rc = gpu_move(c, &d, buf, n, 1);
    } else {
      rc = gpu_move(c, &d, buf, n, 0);
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

static int upload_stream(struct cli *c, int fd, const char *src_arg,
                         const char *bucket, const char *key, const char *url) {
  const char *src_name = strcmp(src_arg, "-") ? src_arg : "stdin";
  uint64_t chunk64 = chunk_size(c);
  if (chunk64 > SIZE_MAX / 2)
    return report_msg(src_name, "--part-size too large for memory");
  size_t chunk = (size_t)chunk64;
  unsigned char *buf = malloc(chunk);
  if (!buf)
    return report_msg(src_name,
                      "cannot allocate a %zu-byte buffer "
                      "(see --part-size)",
                      chunk);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  if (gpu_buffer(c, chunk, &dev) != HIPOBJ_OK) {
    free(buf);
    return report_lib(c, "--gpu", c->err);
  }

  struct cp_stats s = {.src = src_arg, .dst = url, .start = now_seconds()};
  struct progress p;
  progress_begin(&p, c, url, 0);
  /* From here a first Ctrl-C only flags: the loop aborts the upload. */
  signals_set_soft(1);

  struct reader r = {.fd = fd};
  struct hipobj_mpu *mpu = NULL;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem mem = HIPOBJ_MEM_INIT;
  char cause[1400] = "";
  const char *subject = url;
  int rc = CLI_EXIT_FAIL;
  size_t n = 0;

  if (fill(&r, buf, chunk, &n) != 0)
    goto read_failed;
  if (r.eof) {
    struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
    po.content_type = c->content_type;
    mem = hipobj_mem_host(n ? buf : NULL, n);
    if (c->use_gpu) {
      if (gpu_move(c, &dev, buf, n, 1) != HIPOBJ_OK)
        goto lib_failed;
      mem = dev;
      mem.len = n;
    }
    int st = hipobj_s3_put(c->client, bucket, key, &mem, &po, &res, c->err);
    stats_add(&s, &res);
    if (st != HIPOBJ_OK)
      goto lib_failed;
    s.bytes = n;
    goto done;
  }

  if (hipobj_mpu_create(c->client, bucket, key, c->content_type, &mpu,
                        c->err) != HIPOBJ_OK)
    goto lib_failed;
  for (unsigned part = 1;; part++) {
    if (part > MAX_PARTS) {
      char sz[32];
      fmt_bytes(chunk, sz, sizeof sz);
      snprintf(cause, sizeof cause,
               "input needs more than %u parts of %s; use a larger "
               "--part-size",
               MAX_PARTS, sz);
      subject = src_name;
      goto failed;
    }
    res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
    mem = hipobj_mem_host(buf, n);
    if (c->use_gpu) {
      if (gpu_move(c, &dev, buf, n, 1) != HIPOBJ_OK)
        goto lib_failed;
      mem = dev;
      mem.len = n;
    }
    int st = hipobj_mpu_upload_part(mpu, part, &mem, &res, c->err);
    stats_add(&s, &res);
    if (st != HIPOBJ_OK)
      goto lib_failed;
    s.bytes += n;
    s.parts = part;
    progress_add(&p, n);
    if (cli_interrupted) {
      errno = EINTR;
      goto read_failed;
    }
    if (r.eof)
      break;
    if (fill(&r, buf, chunk, &n) != 0)
      goto read_failed;
    if (n == 0) /* cannot happen after a successful peek; be safe */
      break;
  }
  res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  if (hipobj_mpu_complete(mpu, &res, c->err) != HIPOBJ_OK)
    goto lib_failed;
  s.retries += res.retries;
  if (res.path != HIPOBJ_PATH_NONE)
    s.path = res.path;
  if (s.path == HIPOBJ_PATH_NONE)
    s.path = HIPOBJ_PATH_HTTP;

done:
  signals_set_soft(0);
  hipobj_mpu_free(mpu);
  hipobj_gpu_free(&dev);
  free(buf);
  return cp_done(c, &p, "upload", &s, 0);

read_failed:
  if (errno == EINTR && cli_interrupted) {
    snprintf(cause, sizeof cause, "interrupted");
    rc = CLI_EXIT_INTERRUPTED;
  } else {
    snprintf(cause, sizeof cause, "%s", strerror(errno));
    subject = src_name;
  }
  goto failed;
lib_failed:
  describe_error(c, c->err, cause, sizeof cause);
failed:
  signals_set_soft(0);
  progress_end(&p, 0, 0, 0);
  char kept[200];
  kept_text(mpu && c->keep_failed_upload ? hipobj_mpu_upload_id(mpu) : NULL,
            kept, sizeof kept);
  if (kept[0]) {
    report_msg(subject, "%s%s", cause, kept);
  } else if (mpu && hipobj_mpu_abort(mpu, NULL) != HIPOBJ_OK) {
    /* Say so: the parts keep costing storage until aborted. */
    report_msg(subject, "%s; multipart upload %s could not be aborted", cause,
               hipobj_mpu_upload_id(mpu));
  } else {
    report_msg(subject, "%s", cause);
  }
  hipobj_mpu_free(mpu);
  hipobj_gpu_free(&dev);
  free(buf);
  return rc;
}

/* ---- file upload (file memory) ------------------------------------------ */

static int upload_file(struct cli *c, const struct location *src,
                       const struct location *dst) {
  int fd = open(src->arg, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return report_errno(src->arg, errno);
  struct stat st;
  int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (e) {
    close(fd);
    return report_errno(src->arg, e);
  }
  /* "s3://b/" or "s3://b/dir/": the key takes the file's name. */
  char *key = NULL;
  if (!*dst->key || ends_with_slash(dst->key)) {
    if (asprintf(&key, "%s%s", dst->key, last_component(src->arg)) < 0)
      key = NULL;
  } else {
    key = strdup(dst->key);
  }
  char *url = key ? s3_url(dst->bucket, key) : NULL;
  int rc;
  if (!key || !url) {
    rc = report_errno(src->arg, ENOMEM);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) { /* a pipe or device: no pread */
    rc = upload_stream(c, fd, src->arg, dst->bucket, key, url);
    goto out;
  }

  uint64_t size = (uint64_t)st.st_size;
  if (size > SIZE_MAX) {
    rc = report_errno(src->arg, EFBIG);
    goto out;
  }
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type =
      c->content_type ? c->content_type : guess_content_type(src->arg);
  po.keep_failed_upload = c->keep_failed_upload;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* The library reads the file itself, in staging-pool chunks. */
  struct hipobj_mem mem = hipobj_mem_file(fd, 0, (size_t)size);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  int gst = gpu_buffer(c, (size_t)size, &dev);
  if (gst == HIPOBJ_OK && c->use_gpu &&
      (gst = gpu_file_move(c, &dev, fd, size, 1)) < 0) {
    rc = report_errno(src->arg, errno);
    hipobj_gpu_free(&dev);
    goto out;
  }
  if (gst != HIPOBJ_OK) {
    rc = report_lib(c, src->arg, c->err);
    hipobj_gpu_free(&dev);
    goto out;
  }
  if (c->use_gpu)
    mem = dev; /* the upload reads GPU memory */
  struct cp_stats s = {.src = src->arg, .dst = url, .start = now_seconds()};
  struct progress p;
  progress_begin(&p, c, url, size);
  int status = xfer_put(c, &p, dst->bucket, key, &mem, &po, &res);
  hipobj_gpu_free(&dev);
  stats_add(&s, &res);
  if (status != HIPOBJ_OK) {
    rc = cp_fail_lib(c, &p, url, res.upload_id);
    goto out;
  }
  s.bytes = size;
  rc = cp_done(c, &p, "upload", &s, 0);
out:
  free(url);
  free(key);
  close(fd);
  return rc;
}

/* ---- stream download (stdout, pipes, devices) --------------------------- */

static int download_stream(struct cli *c, const struct location *src, int fd,
                           const char *dst_name, int data_on_stdout) {
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  int rc = cli_head(c, src, &info);
  if (rc)
    return rc;
  uint64_t chunk = chunk_size(c);
  if (chunk > SIZE_MAX / 2)
    return report_msg(src->arg, "--part-size too large for memory");
  size_t cap = (size_t)(info.size < chunk ? info.size : chunk);
  unsigned char *buf = NULL;
  if (cap > 0 && !(buf = malloc(cap)))
    return report_msg(src->arg,
                      "cannot allocate a %zu-byte buffer "
                      "(see --part-size)",
                      cap);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  if (gpu_buffer(c, cap, &dev) != HIPOBJ_OK) {
    free(buf);
    return report_lib(c, "--gpu", c->err);
  }

  struct cp_stats s = {.src = src->arg,
                       .dst = data_on_stdout ? "-" : dst_name,
                       .start = now_seconds()};
  struct progress p;
  progress_begin(&p, c, src->arg, info.size);
  rc = 0;
  unsigned chunks = 0;
  for (uint64_t off = 0; off < info.size;) {
    size_t n = (size_t)(info.size - off < cap ? info.size - off : cap);
    struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
    go.has_range = 1;
    go.offset = off;
    go.length = n;
    go.if_match = info.etag;
    struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
    struct hipobj_mem mem = hipobj_mem_host(buf, n);
    if (c->use_gpu) {
      mem = dev;
      mem.len = n;
    }
    int st = hipobj_s3_get(c->client, src->bucket, src->key, &mem, &go, &res,
                           c->err);
    stats_add(&s, &res);
    if (st == HIPOBJ_OK && c->use_gpu)
      st = gpu_move(c, &dev, buf, (size_t)res.bytes, 0);
    if (st != HIPOBJ_OK) {
      rc = cp_fail_lib(c, &p, src->arg, NULL);
      goto out;
    }
    if (res.bytes != n) {
      progress_end(&p, 0, 0, 0);
      rc = report_msg(src->arg,
                      "short read at offset %" PRIu64 ": got %" PRIu64
                      " of %zu bytes",
                      off, res.bytes, n);
      goto out;
    }
    if (write_all(fd, buf, n) != 0) {
      int e = errno;
      if (data_on_stdout && e == EPIPE) {
        progress_end(&p, 0, 0, 0);
        rc = report_stdout_error(e);
      } else {
        rc = cp_fail_errno(&p, dst_name, e);
      }
      goto out;
    }
    progress_add(&p, n);
    off += n;
    chunks++;
  }
  s.bytes = info.size;
  s.parts = chunks > 1 ? chunks : 0;
  if (s.path == HIPOBJ_PATH_NONE && info.size > 0)
    s.path = HIPOBJ_PATH_HTTP;
  rc = cp_done(c, &p, "download", &s, data_on_stdout);
out:
  hipobj_gpu_free(&dev);
  free(buf);
  return rc;
}

/* ---- file download (file memory into a temp file, rename) --------------- */

/* Fills the temp file with the object (file memory: the library pwrites
 * it). Returns 0 or an exit status after reporting (which also ends the
 * display). */
static int fetch_into(struct cli *c, const struct location *src, int fd,
                      const struct hipobj_object_info *info, const char *tmp,
                      struct progress *p, struct cp_stats *s) {
  size_t size = (size_t)info->size;
  int err = size > 0 ? reserve_space(fd, size) : 0;
  if (err != 0)
    return cp_fail_errno(p, tmp, err);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.if_match = info->etag;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem mem = hipobj_mem_file(fd, 0, size);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  int st = gpu_buffer(c, size, &dev);
  if (c->use_gpu)
    mem = dev; /* the download lands in GPU memory */
  if (st == HIPOBJ_OK)
    st = xfer_get(c, p, src->bucket, src->key, &mem, &go, &res);
  stats_add(s, &res);
  int rc = 0;
  if (st == HIPOBJ_OK && c->use_gpu && res.bytes == info->size &&
      (st = gpu_file_move(c, &dev, fd, size, 0)) < 0)
    rc = cp_fail_errno(p, tmp, errno);
  hipobj_gpu_free(&dev);
  if (rc != 0) {
    /* the file write after --gpu failed: reported */
  } else if (st != HIPOBJ_OK) {
    rc = cp_fail_lib(c, p, src->arg, NULL);
  } else if (res.bytes != info->size) {
    progress_end(p, 0, 0, 0);
    rc =
        report_msg(src->arg, "short read: got %" PRIu64 " of %" PRIu64 " bytes",
                   res.bytes, info->size);
  }
  if (rc == 0)
    s->bytes = info->size;
  return rc;
}

static int download_file(struct cli *c, const struct location *src,
                         const char *dst_arg) {
  struct stat st;
  int exists = stat(dst_arg, &st) == 0;
  char *path = NULL;
  /* An existing directory or a trailing '/' takes the key's last part. */
  if ((exists && S_ISDIR(st.st_mode)) || ends_with_slash(dst_arg)) {
    if (asprintf(&path, "%s%s%s", dst_arg, ends_with_slash(dst_arg) ? "" : "/",
                 last_component(src->key)) < 0)
      path = NULL;
    exists = path && stat(path, &st) == 0;
  } else {
    path = strdup(dst_arg);
  }
  if (!path)
    return report_errno(dst_arg, ENOMEM);
  int rc;
  if (exists && S_ISDIR(st.st_mode)) {
    rc = report_errno(path, EISDIR);
    free(path);
    return rc;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    /* A device or FIFO: write into it, no temp file, no rename. */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    rc = fd < 0 ? report_errno(path, errno)
                : download_stream(c, src, fd, path, 0);
    if (fd >= 0 && close(fd) != 0 && rc == 0)
      rc = report_errno(path, errno);
    free(path);
    return rc;
  }

  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  if ((rc = cli_head(c, src, &info)) != 0) {
    free(path);
    return rc;
  }
  if (info.size > SIZE_MAX) {
    rc = report_errno(src->arg, EFBIG);
    free(path);
    return rc;
  }

  /* The temp file sits next to the destination so rename() is atomic. */
  const char *base = last_component(path);
  char *tmp = NULL;
  if (asprintf(&tmp, "%.*s.%s.hipobj-XXXXXX", (int)(base - path), path, base) <
      0) {
    free(path);
    return report_errno(dst_arg, ENOMEM);
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc = report_errno(path, errno);
    goto out;
  }
  signals_set_temp(tmp);
  /* mkstemp makes 0600; give the file the mode a plain create would (or
   * keep the mode of the file being replaced). */
  mode_t mask = umask(0);
  umask(mask);
  mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~mask);
  if (fchmod(fd, mode) != 0) {
    rc = report_errno(tmp, errno);
    goto fail;
  }

  struct cp_stats s = {.src = src->arg, .dst = path, .start = now_seconds()};
  struct progress p;
  progress_begin(&p, c, src->arg, info.size);
  rc = fetch_into(c, src, fd, &info, tmp, &p, &s);
  if (rc)
    goto fail;
  if (info.last_modified > 0) {
    /* Like aws s3 cp: the file's mtime is the object's. Not fatal. */
    struct timespec times[2] = {{0, UTIME_OMIT}, {info.last_modified, 0}};
    (void)futimens(fd, times);
  }
  int cerr = close(fd);
  fd = -1;
  if (cerr != 0) {
    rc = cp_fail_errno(&p, tmp, errno);
    goto fail;
  }
  if (rename(tmp, path) != 0) {
    rc = cp_fail_errno(&p, path, errno);
    goto fail;
  }
  signals_set_temp(NULL);
  rc = cp_done(c, &p, "download", &s, 0);
  goto out;
fail:
  if (fd >= 0)
    close(fd);
  unlink(tmp);
  signals_set_temp(NULL);
out:
  free(tmp);
  free(path);
  return rc;
}

/* ---- cp ----------------------------------------------------------------- */

int cmd_cp(struct cli *c, int argc, char **argv) {
  if (argc != 2)
    return report_usage("cp takes two arguments: SRC DST");
  struct location src, dst;
  if (loc_parse(argv[0], &src) != 0)
    return CLI_EXIT_USAGE;
  if (loc_parse(argv[1], &dst) != 0) {
    loc_free(&src);
    return CLI_EXIT_USAGE;
  }
  int rc;
  if (src.kind == LOC_S3 && dst.kind == LOC_S3)
    rc = report_usage("copying from S3 to S3 is not supported");
  else if (src.kind != LOC_S3 && dst.kind != LOC_S3)
    rc = report_usage("one of SRC and DST must be an s3:// URL");
  else if (src.kind == LOC_S3 && (!*src.key || ends_with_slash(src.key)))
    rc = report_usage("%s names no object (s3://bucket/key)", src.arg);
  else if (src.kind == LOC_STDIO && (!*dst.key || ends_with_slash(dst.key)))
    rc = report_usage("%s: a key is needed when copying from stdin", dst.arg);
  else if ((rc = cli_connect(c)) != 0)
    ;
  else if (c->use_gpu && (rc = cli_gpu_resolve(c)) != 0)
    ;
  else if (src.kind == LOC_LOCAL)
    rc = upload_file(c, &src, &dst);
  else if (src.kind == LOC_STDIO)
    rc = upload_stream(c, STDIN_FILENO, "-", dst.bucket, dst.key, dst.arg);
  else if (dst.kind == LOC_LOCAL)
    rc = download_file(c, &src, dst.arg);
  else
    rc = download_stream(c, &src, STDOUT_FILENO, "stdout", 1);
  loc_free(&src);
  loc_free(&dst);
  return rc;
}
