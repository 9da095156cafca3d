/* multipart.c - hipobj-server's multipart uploads: Create, UploadPart,
 * Complete, Abort and ListParts (ListMultipartUploads is in listing.c).
 *
 * State lives on disk so that a restart loses nothing already uploaded:
 * <bucket>/.hipobj/uploads/<id>/info holds the key, content type, user
 * metadata and checksum algorithm (x-amz-checksum-algorithm: CRC32C, CRC32
 * or none); each part is p<NNNNN> (data) + p<NNNNN>.m (metadata: size,
 * ETag, checksum, and the inode check of storage.h). A part becomes visible
 * by rename, like an object; a re-uploaded part replaces data and metadata.
 * The checksum rules (checksums.c): a CRC32C (CRC32) upload takes only
 * parts with x-amz-checksum-crc32c (-crc32), a plain one only parts
 * without, and its Complete must list each part's checksum; the result
 * carries the composite checksum.
 * Complete concatenates the listed parts into a new object (with
 * copy_file_range, or --complete-threads threads: assemble.c; a single part
 * is linked, not copied), commits it, leaves
 * a small "done" record so that a retried Complete gets the same answer,
 * and removes the upload. Every operation on one upload holds that
 * upload's lock.
 *
 * fsync policy: parts are not synced on arrival (body.c); Complete syncs
 * the object once before its commit (writeback of each appended part
 * started while the next is copied), so a committed object is as durable
 * as a PutObject and its bytes reach the disk once. A part lost in a crash
 * no longer matches its size or ETag (load_part): InvalidPart. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handlers.h"
#include "s3/xml_server.h"
#include "src/base/codec.h"

int valid_upload_id(const char *id) {
  if (!id || strlen(id) != 32)
    return 0;
  for (int i = 0; i < 32; i++)
    if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
      return 0;
  return 1;
}

static enum MHD_Result no_such_upload(struct req *r) {
  return srv_error(r, 404, "NoSuchUpload",
                   "The specified upload does not exist. The upload ID may "
                   "be invalid, or the upload may have been aborted or "
                   "completed.");
}

int load_upload(struct req *r, const char *id, struct obj_meta *info) {
  memset(info, 0, sizeof *info);
  if (!valid_upload_id(id))
    return -ENOENT;
  char *p = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/info", id);
  int rc = p ? meta_load(p, info) : -ENOMEM;
  free(p);
  if (rc == 0 && r->key && (!info->key || strcmp(info->key, r->key))) {
    meta_free(info);
    rc = -ENOENT;
  }
  return rc == -ENOMEM ? rc : rc ? -ENOENT : 0;
}

/* A part's metadata, rebuilt from the data when a crash left them out of
 * step (see storage.h), its checksum too when the upload has an algorithm
 * (alg). 0 or -ENOENT. */
static int load_part(struct req *r, const char *id, unsigned n,
                     enum cks_alg alg, struct obj_meta *m) {
  memset(m, 0, sizeof *m);
  char *dp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u", id, n);
  char *mp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u.m", id, n);
  int rc = -ENOMEM;
  struct stat st;
  if (!dp || !mp)
    goto done;
  if (stat(dp, &st) != 0) {
    rc = -ENOENT;
    goto done;
  }
  rc = meta_load(mp, m);
  if (rc != 0 || m->ino != (uint64_t)st.st_ino ||
      m->size != (uint64_t)st.st_size) {
    if (rc == 0)
      meta_free(m);
    memset(m, 0, sizeof *m);
    uint64_t crc = 0;
    int fd = open(dp, O_RDONLY | O_CLOEXEC);
    rc = fd < 0 ? -ENOENT
                : st_file_digests(fd, (uint64_t)st.st_size, m->etag, alg, &crc,
                                  &m->crc64);
    m->has_crc64 = rc == 0;
    if (fd >= 0)
      close(fd);
    if (alg)
      cks_format(alg, crc, m->cksum);
    m->ino = (uint64_t)st.st_ino;
    m->size = (uint64_t)st.st_size;
    m->mtime_ms = (int64_t)st.st_mtime * 1000;
  }
done:
  free(dp);
  free(mp);
  return rc;
}

void owner_xml(struct hbuf *x, const char *el, const struct req *r) {
  xml_open(x, el);
  xml_el(x, "ID", r->cred->access_key);
  xml_el(x, "DisplayName", r->cred->access_key);
  xml_close(x, el);
}

/* ---- CreateMultipartUpload ---------------------------------------------- */

enum MHD_Result h_create_mpu(struct req *r) {
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct obj_meta info;
  memset(&info, 0, sizeof info);
  if (collect_object_headers(r, &info) != 0) {
    meta_free(&info);
    return srv_fail(r);
  }
  info.key = strdup(r->key);
  info.mtime_ms = st_now_ms();
  snprintf(info.checksum_alg, sizeof info.checksum_alg, "%s",
           cks_upload_alg(r));
  char id[33];
  st_random_hex(id, 16);
  struct hbuf text = HBUF_INIT;
  meta_format(&info, &text);
  meta_free(&info);
  char *tmp = NULL;
  char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads/%s", id);
  char *final = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/info", id);
  int rc = text.oom || !dir || !final
               ? -ENOMEM
               : st_tmp_write(r->srv, r->bucket, text.data, text.len, &tmp);
  if (rc == 0 && mkdir(dir, 0755) != 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, final) != 0)
    rc = -errno;
  if (rc == 0)
    st_fsync_dir(dir);
  if (rc != 0 && tmp)
    unlink(tmp);
  hbuf_free(&text);
  free(tmp);
  free(dir);
  free(final);
  if (rc != 0)
    return srv_errno(r, rc, "cannot create the upload");
  snprintf(r->upload_id, sizeof r->upload_id, "%s", id);
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "InitiateMultipartUploadResult");
  xml_el(&x, "Bucket", r->bucket);
  xml_el(&x, "Key", r->key);
  xml_el(&x, "UploadId", id);
  xml_end(&x, "InitiateMultipartUploadResult");
  return srv_xml(r, 200, &x);
}

/* ---- UploadPart --------------------------------------------------------- */

static int parse_part_number(const char *s, unsigned *out) {
  unsigned v = 0;
  if (!s || !*s)
    return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > SRV_MAX_PARTS)
      return -1;
    v = v * 10 + (unsigned)(*s - '0');
  }
  if (v < 1 || v > SRV_MAX_PARTS)
    return -1;
  *out = v;
  return 0;
}

int upload_part_begin(struct req *r) {
  const char *id = req_param(r, "uploadId");
  if (parse_part_number(req_param(r, "partNumber"), &r->part_number) != 0)
    return req_fail(r, 400, "InvalidArgument",
                    "Part number must be an integer between 1 and 10000, "
                    "inclusive");
  if (!id)
    return req_fail(r, 400, "InvalidRequest",
                    "UploadPart needs the uploadId parameter");
  snprintf(r->upload_id, sizeof r->upload_id, "%.32s", id);
  struct obj_meta info;
  if (!st_bucket_exists(r->srv, r->bucket))
    return req_fail(r, 404, "NoSuchBucket",
                    "The specified bucket does not exist");
  if (load_upload(r, id, &info) != 0)
    return req_fail(r, 404, "NoSuchUpload",
                    "The specified upload does not exist. The upload ID may "
                    "be invalid, or the upload may have been aborted or "
                    "completed.");
  int mismatch = cks_part_vs_upload(r, &info);
  meta_free(&info);
  if (mismatch)
    return -1;
  if (!has_body_length(r))
    return req_fail(r, 411, "MissingContentLength",
                    "You must provide the Content-Length HTTP header.");
  if (r->expect_len > r->srv->max_put)
    return too_large(r);
  return body_begin_file(r);
}

/* Commits data_tmp (complete, fsynced) as part r->part_number of upload
 * r->upload_id, with m's ETag and checksum; m gets its size and inode.
 * 0, -ENOENT when the upload is gone, or -errno. Shared by UploadPart and
 * UploadPartCopy (copy.c). */
int part_store(struct req *r, const char *data_tmp, struct obj_meta *m) {
  const char *id = r->upload_id;
  m->mtime_ms = st_now_ms();
  struct stat st;
  if (stat(data_tmp, &st) != 0)
    return -errno;
  m->ino = (uint64_t)st.st_ino;
  m->size = (uint64_t)st.st_size;
  struct hbuf text = HBUF_INIT;
  meta_format(m, &text);
  char *meta_tmp = NULL;
  int rc = text.oom ? -ENOMEM
                    : st_tmp_write(r->srv, r->bucket, text.data, text.len,
                                   &meta_tmp);
  hbuf_free(&text);
  if (rc != 0)
    return rc;
  char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads/%s", id);
  char *dp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u", id,
                     r->part_number);
  char *mp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u.m", id,
                     r->part_number);
  struct obj_meta info;
  int gone = 0;
  st_upload_lock(id);
  if (load_upload(r, id, &info) != 0)
    gone = 1;
  else if (!dir || !dp || !mp)
    rc = -ENOMEM;
  else if (rename(meta_tmp, mp) != 0 || rename(data_tmp, dp) != 0)
    rc = -errno;
  if (!gone)
    meta_free(&info);
  st_upload_unlock(id);
  if (rc == 0 && !gone)
    st_fsync_dir(dir);
  unlink(meta_tmp); /* no-op when it was renamed */
  free(meta_tmp);
  free(dir);
  free(dp);
  free(mp);
  return gone ? -ENOENT : rc;
}

enum MHD_Result h_upload_part(struct req *r) {
  struct obj_meta m;
  memset(&m, 0, sizeof m);
  body_etag(r, m.etag);
  cks_part_record(r, &m);
  int rc = part_store(r, r->tmp_path, &m);
  if (rc == -ENOENT)
    return no_such_upload(r);
  if (rc != 0)
    return srv_errno(r, rc, "cannot store the part");
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (resp)
    MHD_add_response_header(resp, "ETag", m.etag);
  return srv_queue(r, 200, resp);
}

/* UploadPartCopy's checks before any copying: the part number, the upload
 * (which must have no checksum algorithm: a copied part would need its
 * checksum, which this server does not compute for copies). 0 or -1 after
 * req_fail. */
int upload_part_copy_check(struct req *r) {
  const char *id = req_param(r, "uploadId");
  if (parse_part_number(req_param(r, "partNumber"), &r->part_number) != 0)
    return req_fail(r, 400, "InvalidArgument",
                    "Part number must be an integer between 1 and 10000, "
                    "inclusive");
  if (!id)
    return req_fail(r, 400, "InvalidRequest",
                    "UploadPartCopy needs the uploadId parameter");
  snprintf(r->upload_id, sizeof r->upload_id, "%.32s", id);
  struct obj_meta info;
  if (load_upload(r, id, &info) != 0)
    return req_fail(r, 404, "NoSuchUpload",
                    "The specified upload does not exist. The upload ID may "
                    "be invalid, or the upload may have been aborted or "
                    "completed.");
  int has_alg = info.checksum_alg[0] != '\0';
  meta_free(&info);
  if (has_alg)
    return req_fail(r, 501, "NotImplemented",
                    "hipobj-server does not copy parts into an upload with "
                    "a checksum algorithm.");
  return 0;
}

/* ---- CompleteMultipartUpload -------------------------------------------- */

static int same_etag(const char *a, const char *b) {
  size_t an = strlen(a), bn = strlen(b);
  if (an >= 2 && a[0] == '"' && a[an - 1] == '"') {
    a++;
    an -= 2;
  }
  if (bn >= 2 && b[0] == '"' && b[bn - 1] == '"') {
    b++;
    bn -= 2;
  }
  return an == bn && !strncasecmp(a, b, an);
}

/* Appends the part at path to out, then starts (does not wait for) the
 * writeback of what was appended, so the fsync at the end waits less. */
static int append_file(int out, const char *path, uint64_t size) {
  int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -errno;
  off_t start = lseek(out, 0, SEEK_CUR);
  uint64_t done = 0;
  int rc = 0;
  while (done < size) {
    size_t want = size - done > (1u << 30) ? (1u << 30) : (size_t)(size - done);
    ssize_t n = copy_file_range(in, NULL, out, NULL, want, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
                  errno == EOPNOTSUPP)) {
      /* No in-kernel copy here: plain read/write. */
      char buf[1 << 16];
      ssize_t k = read(in, buf, sizeof buf);
      if (k <= 0 || write(out, buf, (size_t)k) != k) {
        rc = k < 0 ? -errno : -EIO;
        break;
      }
      n = k;
    } else if (n <= 0) {
      rc = n < 0 ? -errno : -EIO;
      break;
    }
    done += (uint64_t)n;
  }
  close(in);
  if (rc == 0 && start >= 0 && size > 0 && !st_volatile)
    (void)sync_file_range(out, start, (off_t)size, SYNC_FILE_RANGE_WRITE);
  return rc;
}

/* A single part becomes the object's data without a copy: a new link to
 * it in the bucket's temp directory (the part itself stays until the
 * upload is removed), synced since parts are not synced on arrival. */
static int link_part(struct req *r, const char *part, char **tmp) {
  int fd = st_tmp_create(r->srv, r->bucket, tmp);
  if (fd < 0)
    return fd;
  close(fd);
  int rc = 0;
  if (unlink(*tmp) != 0 || link(part, *tmp) != 0)
    rc = -errno;
  if (rc == 0) {
    fd = open(*tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      rc = -errno;
    else
      rc = st_sync_fd(fd);
    if (fd >= 0)
      close(fd);
  }
  return rc;
}

/* The parts copied into fd by --complete-threads threads (assemble.c). */
static int assemble(struct req *r, const char *id, const struct s3_part *want,
                    const struct obj_meta *parts, size_t n, int fd) {
  char **paths = calloc(n, sizeof *paths);
  uint64_t *sizes = calloc(n, sizeof *sizes);
  int rc = paths && sizes ? 0 : -ENOMEM;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    paths[i] = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u", id,
                       want[i].number);
    sizes[i] = parts[i].size;
    if (!paths[i])
      rc = -ENOMEM;
  }
  if (rc == 0)
    rc = st_assemble_parallel(fd, (const char *const *)paths, sizes, n,
                              r->srv->complete_threads);
  for (size_t i = 0; paths && i < n; i++)
    free(paths[i]);
  free(paths);
  free(sizes);
  return rc;
}

/* <ChecksumCRC32C>value</ChecksumCRC32C>, the element of alg. */
static void checksum_el(struct hbuf *x, enum cks_alg alg, const char *value) {
  char el[32];
  snprintf(el, sizeof el, "Checksum%s", cks_alg_name(alg));
  xml_el(x, el, value);
}

/* composite: the composite checksum of an upload with the algorithm alg,
 * "" for none. */
static enum MHD_Result complete_result(struct req *r, const char *etag,
                                       enum cks_alg alg,
                                       const char *composite) {
  struct hbuf x = HBUF_INIT;
  const char *host = req_header(r, "Host");
  xml_begin(&x, "CompleteMultipartUploadResult");
  /* The Host header is the client's text: escaped like any other. */
  struct hbuf loc = HBUF_INIT;
  hbuf_printf(&loc, "http://%s%s", host ? host : "localhost", r->raw_path);
  xml_el(&x, "Location", hbuf_str(&loc));
  hbuf_free(&loc);
  xml_el(&x, "Bucket", r->bucket);
  xml_el(&x, "Key", r->key);
  xml_el(&x, "ETag", etag);
  if (alg && composite[0]) {
    checksum_el(&x, alg, composite);
    xml_el(&x, "ChecksumType", "COMPOSITE");
  }
  xml_end(&x, "CompleteMultipartUploadResult");
  return srv_xml(r, 200, &x);
}

/* A Complete retried after a lost answer finds the done record. */
static int done_record(struct req *r, const char *id, char etag[80],
                       enum cks_alg *alg, char composite[16]) {
  struct obj_meta d;
  char *p = st_path(r->srv, r->bucket, ".hipobj/done/%s", id);
  int rc = p ? meta_load(p, &d) : -ENOMEM;
  free(p);
  if (rc != 0)
    return -1;
  int ok = d.key && !strcmp(d.key, r->key);
  if (ok) {
    memcpy(etag, d.etag, 80);
    memcpy(composite, d.cksum, 16);
    *alg = cks_upload_alg_of(&d);
  }
  meta_free(&d);
  return ok ? 0 : -1;
}

static enum MHD_Result complete_locked(struct req *r, const char *id,
                                       const struct s3_part *want, size_t n) {
  struct obj_meta info, *parts = NULL, m;
  memset(&m, 0, sizeof m);
  char etag[80], composite[16] = "";
  enum cks_alg alg = CKS_NONE;
  if (load_upload(r, id, &info) != 0) {
    if (done_record(r, id, etag, &alg, composite) == 0)
      return complete_result(r, etag, alg, composite);
    return no_such_upload(r);
  }
  enum MHD_Result res;
  char *tmp = NULL;
  int fd = -1;
  size_t loaded = 0;
  alg = cks_upload_alg_of(&info);
  if (cks_complete_request(r, &info, want, n) != 0) {
    res = srv_fail(r);
    goto done;
  }
  parts = calloc(n, sizeof *parts);
  if (!parts) {
    res = srv_error(r, 500, "InternalError", "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (load_part(r, id, want[i].number, alg, &parts[i]) != 0 ||
        !same_etag(parts[i].etag, want[i].etag) ||
        !cks_same_part(alg, &parts[i], &want[i])) {
      res = srv_error(r, 400, "InvalidPart",
                      "One or more of the specified parts could not be "
                      "found. The part may not have been uploaded, or the "
                      "specified entity tag may not match the part's entity "
                      "tag. (part %u)",
                      want[i].number);
      loaded = i + 1;
      goto done;
    }
    loaded = i + 1;
  }
  for (size_t i = 0; i + 1 < n; i++)
    if (parts[i].size < r->srv->min_part_size) {
      res = srv_error(r, 400, "EntityTooSmall",
                      "Your proposed upload is smaller than the minimum "
                      "allowed object size. (part %u has %llu bytes; every "
                      "part but the last needs at least %llu)",
                      want[i].number, (unsigned long long)parts[i].size,
                      (unsigned long long)r->srv->min_part_size);
      goto done;
    }
  /* ETag: MD5 of the parts' binary MD5s, then "-<count>". */
  struct s3_md5_ctx *md5 = s3_md5_begin();
  m.parts = calloc(n, sizeof *m.parts);
  if (!md5 || !m.parts) {
    s3_md5_abandon(md5);
    res = srv_error(r, 500, "InternalError", "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    uint8_t bin[16];
    const char *h = parts[i].etag + (parts[i].etag[0] == '"');
    for (int k = 0; k < 16; k++) {
      unsigned v = 0;
      sscanf(h + 2 * k, "%2x", &v);
      bin[k] = (uint8_t)v;
    }
    s3_md5_update(md5, bin, 16);
    m.parts[i] = parts[i].size;
  }
  uint8_t d[16];
  char hex[33];
  s3_md5_end(md5, d);
  hhex_encode(d, 16, hex);
  m.n_parts = (unsigned)n;
  snprintf(m.etag, sizeof m.etag, "\"%s-%zu\"", hex, n);
  if (alg && cks_composite(alg, parts, n, composite) != 0) {
    res = srv_error(r, 500, "InternalError", "a part's checksum is unreadable");
    goto done;
  }
  m.key = strdup(r->key);
  m.ctype = info.ctype ? strdup(info.ctype) : NULL;
  hbuf_puts(&m.hdrs, hbuf_str(&info.hdrs));
  if (cks_object_of_parts(parts, n, alg, composite, &m) != 0) {
    res = srv_error(r, 500, "InternalError", "out of memory");
    goto done;
  }

  int rc;
  if (n == 1) {
    char *dp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u", id,
                       want[0].number);
    rc = dp ? link_part(r, dp, &tmp) : -ENOMEM;
    free(dp);
    if (rc == 0)
      rc = st_obj_commit(r->srv, r->bucket, r->key, tmp, &m);
    if (rc != 0) {
      res = srv_errno(r, rc, "cannot assemble the object");
      goto done;
    }
    goto committed;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += parts[i].size;
  /* The assembled object is a copy: it counts against a memory cap until
   * the parts go with the upload. */
  rc = mem_reserve(r->srv, total);
  fd = rc ? -1 : st_tmp_create(r->srv, r->bucket, &tmp);
  if (rc == 0 && fd < 0)
    rc = fd;
  if (rc == 0 && r->srv->complete_threads > 1)
    rc = assemble(r, id, want, parts, n, fd);
  else
    for (size_t i = 0; rc == 0 && i < n; i++) {
      char *dp = st_path(r->srv, r->bucket, ".hipobj/uploads/%s/p%05u", id,
                         want[i].number);
      rc = dp ? append_file(fd, dp, parts[i].size) : -ENOMEM;
      free(dp);
    }
  if (rc == 0)
    rc = st_sync_fd(fd);
  if (rc == 0)
    rc = st_obj_commit(r->srv, r->bucket, r->key, tmp, &m);
  if (rc != 0) {
    res = srv_errno(r, rc, "cannot assemble the object");
    goto done;
  }
committed:;
  /* The done record first, then the upload goes: a crash in between
   * leaves an upload whose Complete can simply be repeated. */
  struct obj_meta rec;
  memset(&rec, 0, sizeof rec);
  memcpy(rec.etag, m.etag, sizeof rec.etag);
  memcpy(rec.cksum, composite, sizeof rec.cksum);
  memcpy(rec.checksum_alg, info.checksum_alg, sizeof rec.checksum_alg);
  rec.key = r->key;
  rec.mtime_ms = st_now_ms();
  struct hbuf text = HBUF_INIT;
  meta_format(&rec, &text);
  char *rec_tmp = NULL,
       *rec_path = st_path(r->srv, r->bucket, ".hipobj/done/%s", id);
  if (!text.oom && rec_path &&
      st_tmp_write(r->srv, r->bucket, text.data, text.len, &rec_tmp) == 0 &&
      rename(rec_tmp, rec_path) != 0)
    unlink(rec_tmp);
  hbuf_free(&text);
  free(rec_tmp);
  free(rec_path);
  char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads/%s", id);
  if (dir)
    st_discard_tree(r->srv, dir);
  free(dir);
  res = complete_result(r, m.etag, alg, composite);
done:
  if (fd >= 0)
    close(fd);
  if (tmp) {
    unlink(tmp);
    free(tmp);
  }
  for (size_t i = 0; i < loaded; i++)
    meta_free(&parts[i]);
  free(parts);
  meta_free(&m);
  meta_free(&info);
  return res;
}

enum MHD_Result h_complete_mpu(struct req *r) {
  const char *id = req_param(r, "uploadId");
  snprintf(r->upload_id, sizeof r->upload_id, "%.32s", id ? id : "");
  struct s3_part *want = NULL;
  size_t n = 0;
  struct hipobj_error why = {0};
  if (s3_xml_parse_complete_request(r->mem.data, r->mem.len, &want, &n, &why) !=
      HIPOBJ_OK)
    return srv_error(r, 400, "MalformedXML",
                     "The XML you provided was not well-formed or did not "
                     "validate against our published schema: %s",
                     why.message);
  for (size_t i = 1; i < n; i++)
    if (want[i].number <= want[i - 1].number) {
      free(want);
      return srv_error(r, 400, "InvalidPartOrder",
                       "The list of parts was not in ascending order. The "
                       "parts list must be specified in order by part "
                       "number.");
    }
  if (!valid_upload_id(id)) {
    free(want);
    return no_such_upload(r);
  }
  st_upload_lock(id);
  enum MHD_Result res = complete_locked(r, id, want, n);
  st_upload_unlock(id);
  free(want);
  return res;
}

/* ---- AbortMultipartUpload ----------------------------------------------- */

enum MHD_Result h_abort_mpu(struct req *r) {
  const char *id = req_param(r, "uploadId");
  snprintf(r->upload_id, sizeof r->upload_id, "%.32s", id ? id : "");
  struct obj_meta info;
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  if (!valid_upload_id(id))
    return no_such_upload(r);
  st_upload_lock(id);
  int rc = load_upload(r, id, &info);
  if (rc == 0) {
    meta_free(&info);
    char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads/%s", id);
    rc = dir ? st_discard_tree(r->srv, dir) : -ENOMEM;
    free(dir);
  }
  st_upload_unlock(id);
  if (rc == -ENOENT)
    return no_such_upload(r);
  if (rc != 0)
    return srv_errno(r, rc, "cannot abort the upload");
  return srv_empty(r, 204);
}

/* ---- ListParts ---------------------------------------------------------- */

static int cmp_uint(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

enum MHD_Result h_list_parts(struct req *r) {
  const char *id = req_param(r, "uploadId");
  snprintf(r->upload_id, sizeof r->upload_id, "%.32s", id ? id : "");
  unsigned max = 1000, marker = 0;
  const char *pm = req_param(r, "part-number-marker");
  if (list_limit(r, "max-parts", 1000, &max) != 0)
    return srv_fail(r);
  uint64_t pm_v = 0;
  if (pm && *pm &&
      (rp_parse_u64(pm, strlen(pm), &pm_v) != 0 || pm_v > SRV_MAX_PARTS))
    return srv_error(r, 400, "InvalidArgument",
                     "part-number-marker must be an integer from 0 to "
                     "10000");
  marker = (unsigned)pm_v;
  if (!st_bucket_exists(r->srv, r->bucket))
    return srv_error(r, 404, "NoSuchBucket",
                     "The specified bucket does not exist");
  struct obj_meta info;
  if (load_upload(r, id, &info) != 0)
    return no_such_upload(r);
  enum cks_alg alg = cks_upload_alg_of(&info);
  meta_free(&info);
  char *dir = st_path(r->srv, r->bucket, ".hipobj/uploads/%s", id);
  DIR *d = dir ? opendir(dir) : NULL;
  free(dir);
  if (!d)
    return no_such_upload(r);
  unsigned *nums = malloc(SRV_MAX_PARTS * sizeof *nums);
  size_t n = 0;
  struct dirent *e;
  while (nums && (e = readdir(d))) {
    unsigned v;
    char tail;
    if (e->d_name[0] == 'p' && strlen(e->d_name) == 6 &&
        sscanf(e->d_name + 1, "%5u%c", &v, &tail) == 1 && v >= 1 &&
        v <= SRV_MAX_PARTS && n < SRV_MAX_PARTS)
      nums[n++] = v;
  }
  closedir(d);
  if (!nums)
    return srv_error(r, 500, "InternalError", "out of memory");
  qsort(nums, n, sizeof *nums, cmp_uint);
  struct hbuf x = HBUF_INIT;
  xml_begin(&x, "ListPartsResult");
  xml_el(&x, "Bucket", r->bucket);
  xml_el(&x, "Key", r->key);
  xml_el(&x, "UploadId", id);
  owner_xml(&x, "Initiator", r);
  owner_xml(&x, "Owner", r);
  xml_el(&x, "StorageClass", "STANDARD");
  if (alg)
    xml_el(&x, "ChecksumAlgorithm", cks_alg_name(alg));
  xml_el_u64(&x, "PartNumberMarker", marker);
  struct hbuf items = HBUF_INIT;
  unsigned listed = 0, last = marker;
  int truncated = 0;
  for (size_t i = 0; i < n; i++) {
    if (nums[i] <= marker)
      continue;
    if (listed == max) {
      truncated = 1;
      break;
    }
    struct obj_meta pm_;
    if (load_part(r, id, nums[i], alg, &pm_) != 0)
      continue;
    char when[32];
    srv_iso8601(pm_.mtime_ms, when);
    xml_open(&items, "Part");
    xml_el_u64(&items, "PartNumber", nums[i]);
    xml_el(&items, "LastModified", when);
    xml_el(&items, "ETag", pm_.etag);
    xml_el_u64(&items, "Size", pm_.size);
    if (alg && pm_.cksum[0])
      checksum_el(&items, alg, pm_.cksum);
    xml_close(&items, "Part");
    meta_free(&pm_);
    last = nums[i];
    listed++;
  }
  free(nums);
  /* repeat-token: truncated, and the marker that was sent comes back. */
  int repeat = r->fault.action == FA_REPEAT_TOKEN;
  xml_el_u64(&x, "NextPartNumberMarker", repeat ? marker : last);
  xml_el_u64(&x, "MaxParts", max);
  xml_el(&x, "IsTruncated", truncated || repeat ? "true" : "false");
  hbuf_append(&x, items.data ? items.data : "", items.len);
  hbuf_free(&items);
  xml_end(&x, "ListPartsResult");
  return srv_xml(r, 200, &x);
}
