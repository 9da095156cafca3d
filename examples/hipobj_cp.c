/* hipobj_cp.c - `hipobj cp SRC DST` and `hipobj mv SRC DST` for one
 * object, and the file transfers the many-files commands are made of.
 *
 * - file -> S3: the open file is handed to hipobj_s3_put as file memory
 *   (hipobj_mem_file), which the library reads with pread through its
 *   bounded staging pool: memory use does not grow with the file.
 * - S3 -> file: no HEAD of the tool's. One GET of the library into a
 *   temp file in the destination's directory as file memory: its first
 *   ranged part learns the object's size, ETag and Last-Modified (the free
 *   space is then checked), the others come in parallel pinned to that
 *   ETag with If-Match (an object replaced mid-transfer fails the copy
 *   instead of mixing two versions), and a whole object is verified
 *   against its stored checksum. The file is renamed into place only once
 *   complete: a failed download never leaves a partial file under the
 *   final name, and a full disk is an error, not a SIGBUS.
 * - S3 -> S3: a server-side copy (hipobj_s3_copy: CopyObject, or
 *   UploadPartCopy parts above 5 GiB); no byte passes through here.
 * stdin/stdout and --gpu are in hipobj_stream.c; --recursive goes to the
 * many-files engine (hipobj_sync.c, hipobj_batch.c). Interrupted (SIGINT,
 * SIGTERM), a transfer is cancelled through the library (hipobj_wait.c):
 * a multipart upload is aborted (or, with --keep-failed-upload, kept and
 * its id printed), a download's temp file removed, and the exit status
 * is 128 + the signal. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipobj_xfer.h"

void stats_add(struct cp_stats *s, const struct hipobj_xfer_result *r) {
  s->retries += r->retries;
  s->parts += r->parts;
  if (r->path != HIPOBJ_PATH_NONE)
    s->path = r->path;
  if (r->checksum != HIPOBJ_CHECKSUM_NONE)
    snprintf(s->checksum, sizeof s->checksum, "%s",
             hipobj_checksum_name(r->checksum));
  else if (r->checksum_note[0])
    snprintf(s->note, sizeof s->note, "%s", r->checksum_note);
}

/* ---- failures ------------------------------------------------------------ */

static void set_subject(struct xctx *x, const char *subject) {
  snprintf(x->subject, sizeof x->subject, "%s", subject ? subject : "");
}

int xfail_lib(struct xctx *x, const char *subject) {
  x->kind = XF_LIB;
  set_subject(x, subject);
  return exit_status_of(x->err);
}

int xfail_errno(struct xctx *x, const char *subject, int e) {
  x->kind = XF_ERRNO;
  x->e = e;
  set_subject(x, subject);
  return CLI_EXIT_FAIL;
}

int xfail_msg(struct xctx *x, const char *subject, const char *fmt, ...) {
  x->kind = XF_MSG;
  set_subject(x, subject);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->msg, sizeof x->msg, fmt, ap);
  va_end(ap);
  return CLI_EXIT_FAIL;
}

int xctx_report(struct xctx *x) {
  char kept[HIPOBJ_UPLOAD_ID_MAX + 128] = "";
  if (x->kind == XF_PIPE)
    return CLI_EXIT_PIPE;
  if (x->kept_upload[0] && x->abort_failed)
    /* Say so: the parts keep costing storage until aborted. */
    snprintf(kept, sizeof kept,
             "; multipart upload %s could not be aborted ('hipobj mpu "
             "abort')",
             x->kept_upload);
  else if (x->kept_upload[0])
    snprintf(kept, sizeof kept,
             "; multipart upload %s was kept (--keep-failed-upload): "
             "resume or abort it ('hipobj mpu abort')",
             x->kept_upload);
  int interrupted =
      cli_interrupted &&
      (x->kind != XF_LIB || hipobj_error_status(x->err) == HIPOBJ_E_CANCELLED ||
       (x->kind == XF_ERRNO && x->e == EINTR));
  if (interrupted) {
    report_msg(x->subject, "interrupted%s", kept);
    return CLI_EXIT_INTERRUPTED;
  }
  switch (x->kind) {
  case XF_LIB:
    if (kept[0] || hipobj_error_status(x->err) == HIPOBJ_E_PRECONDITION) {
      char cause[1400];
      describe_error(x->c, x->err, cause, sizeof cause);
      return report_msg(x->subject, "%s%s%s", cause,
                        hipobj_error_status(x->err) == HIPOBJ_E_PRECONDITION
                            ? " (the object changed during the copy)"
                            : "",
                        kept);
    }
    return report_lib(x->c, x->subject, x->err);
  case XF_ERRNO:
    return report_errno(x->subject, x->e);
  case XF_MSG:
    return report_msg(x->subject, "%s%s", x->msg, kept);
  default:
    return report_msg(x->subject, "failed");
  }
}

void print_result(const struct cli *c, const char *op, const char *verb,
                  const char *src, const char *dst, const struct cp_stats *s,
                  int data_on_stdout) {
  double secs = now_seconds() - s->start;
  out_lock();
  progress_clear_locked();
  if (c->json) {
    FILE *f = data_on_stdout ? stderr : stdout;
    json_begin(f, op);
    json_str(f, "action", verb);
    json_str(f, "src", src);
    if (dst)
      json_str(f, "dst", dst);
    json_u64(f, "bytes", s->bytes);
    json_double(f, "seconds", secs, 3);
    json_double(f, "MiBps", secs > 0 ? (double)s->bytes / secs / CLI_MIB : 0,
                2);
    json_u64(f, "retries", s->retries);
    json_u64(f, "parts", s->parts);
    json_str(f, "data_path", hipobj_data_path_name(s->path));
    if (s->checksum[0])
      json_str(f, "verified", s->checksum);
    else if (s->note[0])
      json_str(f, "not_verified", s->note);
    if (c->dryrun)
      json_str(f, "dryrun", "true");
    json_end(f);
    if (f == stdout && fflush(stdout) != 0)
      stdout_failed(errno);
  } else if (!c->quiet && !data_on_stdout) {
    if (dst)
      cli_print(stdout, "%s%s: %s to %s\n", c->dryrun ? "(dryrun) " : "", verb,
                src, dst);
    else
      cli_print(stdout, "%s%s: %s\n", c->dryrun ? "(dryrun) " : "", verb, src);
    if (fflush(stdout) != 0)
      stdout_failed(errno);
  }
  progress_redraw_locked();
  out_unlock();
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

/* ---- file upload (file memory) ------------------------------------------ */

int upload_file(struct xctx *x, const char *path, const char *bucket,
                const char *key, struct cp_stats *s) {
  struct cli *c = x->c;
  char *url = s3_url(bucket, key);
  if (!url)
    return xfail_errno(x, path, ENOMEM);
  int rc = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0) {
    rc = xfail_errno(x, path, errno);
    goto out;
  }
  int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (e) {
    rc = xfail_errno(x, path, e);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) { /* a pipe or device: no pread */
    rc = upload_stream(x, fd, path, bucket, key, s);
    goto out;
  }
  uint64_t size = (uint64_t)st.st_size;
  if (size > SIZE_MAX) {
    rc = xfail_errno(x, path, EFBIG);
    goto out;
  }
  if (!x->many)
    progress_set_total(x->p, size);
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  po.content_type =
      c->content_type ? c->content_type : guess_content_type(path);
  po.keep_failed_upload = c->keep_failed_upload;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  /* The library reads the file itself, in staging-pool chunks. */
  struct hipobj_mem mem = hipobj_mem_file(fd, 0, (size_t)size);
  struct hipobj_mem dev = HIPOBJ_MEM_INIT;
  int gst = gpu_buffer(c, (size_t)size, &dev, x->err);
  if (gst == HIPOBJ_OK && c->use_gpu &&
      (gst = gpu_file_move(c, &dev, fd, size, 1, x->err)) < 0) {
    rc = xfail_errno(x, path, errno);
    hipobj_gpu_free(&dev);
    goto out;
  }
  if (gst != HIPOBJ_OK) {
    rc = xfail_lib(x, "--gpu");
    hipobj_gpu_free(&dev);
    goto out;
  }
  if (c->use_gpu)
    mem = dev; /* the upload reads GPU memory */
  int status = xfer_put(c, x->p, bucket, key, &mem, &po, &res, x->err);
  hipobj_gpu_free(&dev);
  stats_add(s, &res);
  if (status != HIPOBJ_OK) {
    snprintf(x->kept_upload, sizeof x->kept_upload, "%s", res.upload_id);
    rc = xfail_lib(x, url);
    goto out;
  }
  s->bytes += size;
out:
  if (fd >= 0)
    close(fd);
  free(url);
  return rc;
}

/* ---- file download ------------------------------------------------------- */

/* Creates the directories above path (mkdir -p of its dirname). 0 or an
 * errno. */
static int make_parents(const char *path) {
  char *d = strdup(path);
  if (!d)
    return ENOMEM;
  int rc = 0;
  for (char *s = strchr(d + 1, '/'); s && !rc; s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(d, 0777) != 0 && errno != EEXIST)
      rc = errno;
    *s = '/';
  }
  free(d);
  return rc;
}

/* The file window a download lands in: larger than any object, so that
 * the library learns the size itself from its first ranged part (no HEAD
 * here) and writes only the object's bytes. */
#define ANY_SIZE ((size_t)1 << 50)

/* Fills fd with the object (or with --range that range) in one GET of the
 * library: a first ranged part learns the size, ETag and Last-Modified,
 * the others come in parallel pinned to that ETag, and a whole object is
 * verified against its stored checksum. The free space is checked as
 * soon as the size is known. */
static int fetch_into(struct xctx *x, const char *bucket, const char *key,
                      const char *src_name, int fd, const char *tmp,
                      int64_t *mtime, struct cp_stats *s) {
  struct cli *c = x->c;
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  if (c->has_range) {
    go.has_range = 1;
    go.offset = c->range_off;
    go.length = c->range_len; /* 0: to the end */
  }
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_mem mem = hipobj_mem_file(fd, 0, ANY_SIZE);
  int reserve_err = 0;
  int st = xfer_get_file(c, x->p, bucket, key, &mem, &go, &res, x->err,
                         &reserve_err);
  stats_add(s, &res);
  if (reserve_err)
    return xfail_errno(x, tmp, reserve_err);
  if (st != HIPOBJ_OK) {
    cli_explain(c, bucket, key, x->err);
    return xfail_lib(x, src_name);
  }
  uint64_t want = res.object_size;
  if (c->has_range)
    want = res.object_size > c->range_off ? res.object_size - c->range_off : 0;
  if (c->has_range && c->range_len && c->range_len < want)
    want = c->range_len;
  if (res.bytes != want)
    return xfail_msg(x, src_name,
                     "short read: got %" PRIu64 " of %" PRIu64 " bytes",
                     res.bytes, want);
  s->bytes += res.bytes;
  *mtime = c->has_range ? 0 : res.last_modified;
  return 0;
}

/* Objects the listing says are at most this long come through a buffer. */
#define SMALL_GET_MAX ((uint64_t)256 << 10)
#define TAKE_FILE_PATH (-1) /* fetch_small: not done, no failure recorded */

/* A small object comes into a buffer with the blocking GET, which the
 * library runs on this thread from request to answer, and goes into the
 * file in one write: through file memory and the asynchronous API, a few
 * KiB would cross to the library's HTTP thread, its file thread and back
 * (on the 2-core VM, 2000 x 4 KiB with 16 in flight: 0.44 s and 0.47 CPU
 * s that way, 0.31 s and 0.33 CPU s this way). The main thread stops it
 * through the workers' cancellation token. TAKE_FILE_PATH: the object
 * has grown past the listed size since the listing, or there is no token
 * (nothing written; the caller takes the file path). */
static int fetch_small(struct xctx *x, const char *bucket, const char *key,
                       const char *src_name, int fd, const char *tmp,
                       uint64_t listed, int64_t *mtime, struct cp_stats *s) {
  struct cli *c = x->c;
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.cancel = xfers_token();
  if (!go.cancel)
    return TAKE_FILE_PATH;
  size_t cap = listed ? (size_t)listed : 1;
  unsigned char *buf = malloc(cap);
  if (!buf)
    return xfail_errno(x, tmp, ENOMEM);
  struct hipobj_mem mem = hipobj_mem_host(buf, cap);
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int st = hipobj_s3_get(c->client, bucket, key, &mem, &go, &res, x->err);
  int rc = 0;
  if (st == HIPOBJ_E_BUFFER_TOO_SMALL) {
    rc = TAKE_FILE_PATH;
  } else if (st != HIPOBJ_OK) {
    stats_add(s, &res);
    cli_explain(c, bucket, key, x->err);
    rc = xfail_lib(x, src_name);
  } else {
    stats_add(s, &res);
    if (res.bytes != res.object_size)
      rc = xfail_msg(x, src_name,
                     "short read: got %" PRIu64 " of %" PRIu64 " bytes",
                     res.bytes, res.object_size);
    else if (write_all(fd, buf, (size_t)res.bytes) != 0)
      rc = xfail_errno(x, tmp, errno);
  }
  free(buf);
  if (rc == 0) {
    progress_add(x->p, res.bytes);
    s->bytes += res.bytes;
    *mtime = res.last_modified;
  }
  return rc;
}

int download_file(struct xctx *x, const char *bucket, const char *key,
                  const char *src_name, const char *path, uint64_t size_hint,
                  struct cp_stats *s) {
  struct cli *c = x->c;
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return xfail_errno(x, path, EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    /* A device or FIFO: write into it, no temp file, no rename. */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return xfail_errno(x, path, errno);
    int rc = download_stream(x, bucket, key, src_name, fd, path, 0, s);
    if (close(fd) != 0 && rc == 0)
      rc = xfail_errno(x, path, errno);
    return rc;
  }
  /* The temp file sits next to the destination so rename() is atomic. */
  const char *base = last_component(path);
  char *tmp = NULL;
  if (asprintf(&tmp, "%.*s.%s.hipobj-XXXXXX", (int)(base - path), path, base) <
      0)
    return xfail_errno(x, path, ENOMEM);
  int rc = 0, slot = -1;
  int fd = mkstemp(tmp);
  if (fd < 0 && errno == ENOENT) {
    /* The directories are made only when missing: most files of a tree
     * share theirs, and mkdir of each level would cost every one of them
     * a system call per level. mkstemp leaves the name undefined when it
     * fails: the pattern is put back. */
    int e = make_parents(path);
    if (e) {
      free(tmp);
      return xfail_errno(x, path, e);
    }
    memcpy(tmp + strlen(tmp) - 6, "XXXXXX", 6);
    fd = mkstemp(tmp);
  }
  if (fd < 0) {
    rc = xfail_errno(x, path, errno);
    free(tmp);
    return rc;
  }
  slot = signals_add_temp(tmp);
  /* mkstemp makes 0600; give the file the mode a plain create would (or
   * keep the mode of the file being replaced). */
  mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~umask_value());
  int64_t mtime = 0;
  if (fchmod(fd, mode) != 0)
    rc = xfail_errno(x, tmp, errno);
  else if (c->use_gpu)
    rc = download_gpu(x, bucket, key, src_name, fd, tmp, &mtime, s);
  else {
    rc = TAKE_FILE_PATH;
    if (size_hint <= SMALL_GET_MAX && !c->has_range)
      rc = fetch_small(x, bucket, key, src_name, fd, tmp, size_hint, &mtime, s);
    if (rc == TAKE_FILE_PATH) /* size unknown, large, or grown since */
      rc = fetch_into(x, bucket, key, src_name, fd, tmp, &mtime, s);
  }
  if (rc == 0 && mtime > 0) {
    /* Like aws s3 cp: the file's mtime is the object's, which is also
     * what sync compares. Not fatal. */
    struct timespec times[2] = {{0, UTIME_OMIT}, {mtime, 0}};
    (void)futimens(fd, times);
  }
  if (close(fd) != 0 && rc == 0)
    rc = xfail_errno(x, tmp, errno);
  if (rc == 0 && rename(tmp, path) != 0)
    rc = xfail_errno(x, path, errno);
  if (rc != 0)
    unlink(tmp);
  signals_drop_temp(slot);
  free(tmp);
  return rc;
}

/* ---- server-side copy ------------------------------------------------------
 */

int copy_object(struct xctx *x, const char *sb, const char *sk, const char *db,
                const char *dk, struct cp_stats *s) {
  struct cli *c = x->c;
  struct hipobj_copy_opts o = HIPOBJ_COPY_OPTS_INIT;
  o.content_type = c->content_type;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  if (hipobj_s3_copy(c->client, sb, sk, db, dk, &o, &res, x->err) !=
      HIPOBJ_OK) {
    /* The copy starts with a HEAD of the source, whose errors have no
     * code: a GET names it (no such bucket, wrong secret, ...). */
    cli_explain(c, sb, sk, x->err);
    char *src = s3_url(sb, sk);
    int rc = xfail_lib(x, src ? src : sk);
    free(src);
    return rc;
  }
  stats_add(s, &res);
  s->bytes += res.bytes;
  progress_add(x->p, res.bytes);
  return 0;
}

/* ---- cp and mv of one object ------------------------------------------------
 */

/* mv: the source goes once its copy is complete. */
static int remove_source(struct xctx *x, const struct location *src) {
  if (src->kind == LOC_LOCAL)
    return unlink(src->arg) == 0 ? 0 : xfail_errno(x, src->arg, errno);
  if (hipobj_s3_delete(x->c->client, src->bucket, src->key, x->err) !=
      HIPOBJ_OK)
    return xfail_lib(x, src->arg);
  return 0;
}

static int check_args(struct cli *c, const struct location *src,
                      const struct location *dst, int move) {
  const char *cmd = move ? "mv" : "cp";
  if (src->kind != LOC_S3 && dst->kind != LOC_S3)
    return report_usage("one of SRC and DST must be an s3:// URL");
  if (move && (src->kind == LOC_STDIO || dst->kind == LOC_STDIO))
    return report_usage("mv moves files and objects, not stdin or stdout");
  if (src->kind == LOC_S3 && dst->kind == LOC_STDIO &&
      (!*src->key || ends_with_slash(src->key)))
    return report_usage("%s is a prefix, not an object: only one object can "
                        "be copied to stdout",
                        src->arg);
  if (c->recursive) {
    if (src->kind == LOC_STDIO || dst->kind == LOC_STDIO)
      return report_usage("--recursive copies trees, not stdin or stdout");
    return 0;
  }
  if (src->kind == LOC_S3 && (!*src->key || ends_with_slash(src->key)))
    return report_usage("%s names no object (s3://bucket/key); %s --recursive "
                        "copies what is under a prefix",
                        src->arg, cmd);
  if (src->kind == LOC_STDIO && (!*dst->key || ends_with_slash(dst->key)))
    return report_usage("%s: a key is needed when copying from stdin",
                        dst->arg);
  if (c->has_range && (src->kind != LOC_S3 || dst->kind == LOC_S3))
    return report_usage("--range reads part of an object: SRC must be "
                        "s3://, DST a file or -");
  if (c->use_gpu && src->kind == LOC_S3 && dst->kind == LOC_S3)
    return report_usage("--gpu moves data through a GPU; a copy from S3 to "
                        "S3 stays in the server");
  return 0;
}

/* The destination name when DST is a "directory": "s3://b/dir/" or an
 * existing directory takes SRC's last name. */
static char *dst_name(const struct location *src, const struct location *dst) {
  const char *name = last_component(src->kind == LOC_S3 ? src->key : src->arg);
  char *out = NULL;
  if (dst->kind == LOC_S3) {
    if (!*dst->key || ends_with_slash(dst->key))
      return asprintf(&out, "%s%s", dst->key, name) < 0 ? NULL : out;
    return strdup(dst->key);
  }
  struct stat st;
  if ((stat(dst->arg, &st) == 0 && S_ISDIR(st.st_mode)) ||
      ends_with_slash(dst->arg))
    return asprintf(&out, "%s%s%s", dst->arg,
                    ends_with_slash(dst->arg) ? "" : "/", name) < 0
               ? NULL
               : out;
  return strdup(dst->arg);
}

static int cp_one(struct cli *c, const struct location *src,
                  const struct location *dst, int move) {
  char *name = dst->kind == LOC_STDIO ? strdup("-") : dst_name(src, dst);
  char *dst_url = name && dst->kind == LOC_S3 ? s3_url(dst->bucket, name)
                                              : (name ? strdup(name) : NULL);
  if (!name || !dst_url) {
    free(name);
    free(dst_url);
    return report_errno(src->arg, ENOMEM);
  }
  const char *verb = move                  ? "move"
                     : src->kind != LOC_S3 ? "upload"
                     : dst->kind == LOC_S3 ? "copy"
                                           : "download";
  const char *src_name = src->kind == LOC_STDIO ? "-" : src->arg;
  int to_stdout = dst->kind == LOC_STDIO;
  struct cp_stats s = {.start = now_seconds()};
  int rc = 0;
  if (c->dryrun) {
    print_result(c, move ? "mv" : "cp", verb, src_name, dst_url, &s, 0);
    goto out;
  }
  struct stat st;
  if (src->kind == LOC_LOCAL && stat(src->arg, &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    rc = report_msg(src->arg, "is a directory (--recursive copies trees)");
    goto out;
  }
  if (to_stdout)
    report_data_on_stdout(1);
  struct progress p;
  progress_begin(&p, c, src->kind == LOC_S3 ? src->arg : dst_url, 0);
  struct xctx x = {.c = c, .p = &p, .err = c->err};
  if (src->kind == LOC_LOCAL)
    rc = upload_file(&x, src->arg, dst->bucket, name, &s);
  else if (src->kind == LOC_STDIO)
    rc = upload_stream(&x, STDIN_FILENO, "-", dst->bucket, name, &s);
  else if (dst->kind == LOC_S3)
    rc = copy_object(&x, src->bucket, src->key, dst->bucket, name, &s);
  else if (to_stdout)
    rc = download_stream(&x, src->bucket, src->key, src->arg, STDOUT_FILENO,
                         "stdout", 1, &s);
  else
    rc = download_file(&x, src->bucket, src->key, src->arg, name, UINT64_MAX,
                       &s);
  if (rc == 0 && move)
    rc = remove_source(&x, src);
  if (rc == 0) {
    if (s.path == HIPOBJ_PATH_NONE && s.bytes > 0 && dst->kind != LOC_S3)
      s.path = HIPOBJ_PATH_HTTP;
    progress_end(&p, 1, s.bytes, now_seconds() - s.start);
    print_result(c, move ? "mv" : "cp", verb, src_name,
                 to_stdout ? "-" : dst_url, &s, to_stdout);
  } else {
    progress_end(&p, 0, 0, 0);
    rc = xctx_report(&x);
  }
out:
  free(name);
  free(dst_url);
  return rc;
}

static int cp_or_mv(struct cli *c, int argc, char **argv, int move) {
  const char *cmd = move ? "mv" : "cp";
  if (argc != 2)
    return report_usage("%s takes two arguments: SRC DST", cmd);
  struct location src, dst;
  if (loc_parse(argv[0], &src) != 0)
    return CLI_EXIT_USAGE;
  if (loc_parse(argv[1], &dst) != 0) {
    loc_free(&src);
    return CLI_EXIT_USAGE;
  }
  int rc = check_args(c, &src, &dst, move);
  /* A dry run of one object needs no server; of a tree, its listing. */
  if (rc == 0 && (!c->dryrun || c->recursive))
    rc = cli_connect(c);
  if (rc == 0 && c->use_gpu)
    rc = cli_gpu_resolve(c);
  if (rc == 0)
    rc = c->recursive ? cp_tree(c, &src, &dst, move)
                      : cp_one(c, &src, &dst, move);
  loc_free(&src);
  loc_free(&dst);
  return rc;
}

int cmd_cp(struct cli *c, int argc, char **argv) {
  return cp_or_mv(c, argc, argv, 0);
}

int cmd_mv(struct cli *c, int argc, char **argv) {
  return cp_or_mv(c, argc, argv, 1);
}
