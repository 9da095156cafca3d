/* storage.c - buckets, metadata files, temp files, locks and startup
 * clean-up for hipobj-server (layout and crash rules in storage.h; the
 * object files themselves are in objfile.c).
 *
 * Concurrency: all writers live in this one process, so in-process locks
 * are enough to keep an object's data file and metadata file consistent
 * for readers: a commit renames both under the object's stripe lock, and a
 * reader opens the data and reads the metadata under the same lock. After
 * that the reader holds an open descriptor, which later renames or unlinks
 * do not disturb. */
#include "storage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/base/codec.h"
#include "src/base/uri.h"

#define N_STRIPES 64

static pthread_mutex_t obj_locks[N_STRIPES];
static pthread_mutex_t upload_locks[N_STRIPES];
static pthread_rwlock_t bucket_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;

static void init_locks(void) {
  for (int i = 0; i < N_STRIPES; i++) {
    pthread_mutex_init(&obj_locks[i], NULL);
    pthread_mutex_init(&upload_locks[i], NULL);
  }
}

static unsigned stripe(const char *a, const char *b) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (const char *p = a; p && *p; p++)
    h = (h ^ (unsigned char)*p) * 16777619u;
  h = (h ^ '/') * 16777619u;
  for (const char *p = b; p && *p; p++)
    h = (h ^ (unsigned char)*p) * 16777619u;
  return h % N_STRIPES;
}

void st_obj_lock(const char *bucket, const char *name) {
  pthread_once(&locks_once, init_locks);
  pthread_mutex_lock(&obj_locks[stripe(bucket, name)]);
}
void st_obj_unlock(const char *bucket, const char *name) {
  pthread_mutex_unlock(&obj_locks[stripe(bucket, name)]);
}
void st_upload_lock(const char *id) {
  pthread_once(&locks_once, init_locks);
  pthread_mutex_lock(&upload_locks[stripe(id, NULL)]);
}
void st_upload_unlock(const char *id) {
  pthread_mutex_unlock(&upload_locks[stripe(id, NULL)]);
}
void st_bucket_rdlock(void) {
  pthread_rwlock_rdlock(&bucket_rw);
}
void st_bucket_wrlock(void) {
  pthread_rwlock_wrlock(&bucket_rw);
}
void st_bucket_unlock(void) {
  pthread_rwlock_unlock(&bucket_rw);
}

int64_t st_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void st_random_hex(char *out, size_t nbytes) {
  uint8_t buf[64];
  if (nbytes > sizeof buf)
    nbytes = sizeof buf;
  size_t got = 0;
  while (got < nbytes) {
    ssize_t n = getrandom(buf + got, nbytes - got, 0);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  hhex_encode(buf, nbytes, out);
}

char *st_path(const struct server *s, const char *bucket, const char *fmt,
              ...) {
  struct hbuf b = HBUF_INIT;
  hbuf_puts(&b, s->root);
  if (bucket) {
    hbuf_putc(&b, '/');
    hbuf_puts(&b, bucket);
  }
  if (fmt) {
    hbuf_putc(&b, '/');
    va_list ap;
    va_start(ap, fmt);
    hbuf_vprintf(&b, fmt, ap);
    va_end(ap);
  }
  if (b.oom) {
    hbuf_free(&b);
    return NULL;
  }
  return hbuf_steal(&b);
}

/* 'k' + the key percent-encoded (nothing but [A-Za-z0-9._~-] and '%' in
 * the name, so no '/', never "." or ".."), or 'h' + SHA-256 of the key
 * when that does not fit in a file name. */
int st_obj_name(const char *key, char name[ST_NAME_MAX]) {
  struct hbuf b = HBUF_INIT;
  hbuf_putc(&b, 'k');
  huri_encode(&b, key, strlen(key), 0);
  if (b.oom) {
    hbuf_free(&b);
    return -1;
  }
  if (b.len < 240) {
    memcpy(name, b.data, b.len + 1);
  } else {
    name[0] = 'h';
    s3_sha256_hex(key, strlen(key), name + 1);
  }
  hbuf_free(&b);
  return 0;
}

int st_fsync_dir(const char *path) {
  if (st_volatile)
    return 0;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = fsync(fd) == 0 ? 0 : -errno;
  close(fd);
  return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void st_rmtree(const char *path) {
  nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int st_discard_tree(const struct server *s, const char *path) {
  char rnd[33];
  st_random_hex(rnd, 16);
  char *trash = st_path(s, ".hipobj-trash", "%s", rnd);
  if (!trash)
    return -ENOMEM;
  int rc = rename(path, trash) == 0 ? 0 : -errno;
  if (rc == 0)
    st_rmtree(trash);
  free(trash);
  return rc;
}

/* ---- metadata ------------------------------------------------------- */

void meta_free(struct obj_meta *m) {
  free(m->key);
  free(m->ctype);
  free(m->parts);
  free(m->part_crc64);
  free(m->part_cksum);
  hbuf_free(&m->hdrs);
  memset(m, 0, sizeof *m);
}

static void put_clean(struct hbuf *b, const char *s) {
  /* Values come from headers, which cannot hold line breaks; be sure. */
  for (; *s; s++)
    hbuf_putc(b, (*s == '\n' || *s == '\r') ? ' ' : *s);
}

void meta_format(const struct obj_meta *m, struct hbuf *b) {
  hbuf_printf(b, "hipobj-meta 1\nino %llu\nsize %llu\nmtime %lld\netag ",
              (unsigned long long)m->ino, (unsigned long long)m->size,
              (long long)m->mtime_ms);
  put_clean(b, m->etag);
  hbuf_putc(b, '\n');
  if (m->key) {
    hbuf_puts(b, "key ");
    huri_encode(b, m->key, strlen(m->key), 0);
    hbuf_putc(b, '\n');
  }
  if (m->ctype) {
    hbuf_puts(b, "ctype ");
    put_clean(b, m->ctype);
    hbuf_putc(b, '\n');
  }
  if (m->cksum[0]) {
    hbuf_puts(b, "cksum ");
    put_clean(b, m->cksum);
    hbuf_putc(b, '\n');
  }
  if (m->checksum_alg[0]) {
    hbuf_puts(b, "checksum ");
    put_clean(b, m->checksum_alg);
    hbuf_putc(b, '\n');
  }
  if (m->has_crc64)
    hbuf_printf(b, "crc64 %016llx\n", (unsigned long long)m->crc64);
  if (m->n_parts) {
    hbuf_puts(b, "parts ");
    for (unsigned i = 0; i < m->n_parts; i++)
      hbuf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)m->parts[i]);
    hbuf_putc(b, '\n');
  }
  if (m->n_parts && m->part_crc64) {
    hbuf_puts(b, "pcrc64 ");
    for (unsigned i = 0; i < m->n_parts; i++)
      hbuf_printf(b, "%s%016llx", i ? "," : "",
                  (unsigned long long)m->part_crc64[i]);
    hbuf_putc(b, '\n');
  }
  if (m->n_parts && m->part_cksum) {
    hbuf_puts(b, "pcksum ");
    for (unsigned i = 0; i < m->n_parts; i++) {
      hbuf_puts(b, i ? "," : "");
      put_clean(b, m->part_cksum[i]);
    }
    hbuf_putc(b, '\n');
  }
  const char *h = hbuf_str(&m->hdrs);
  while (*h) {
    size_t n = strcspn(h, "\n");
    hbuf_puts(b, "h ");
    hbuf_append(b, h, n);
    hbuf_putc(b, '\n');
    h += n + (h[n] == '\n');
  }
}

static int parse_parts(const char *v, size_t n, struct obj_meta *m) {
  unsigned count = 1;
  for (size_t i = 0; i < n; i++)
    count += v[i] == ',';
  if (count > SRV_MAX_PARTS)
    return -1;
  m->parts = calloc(count, sizeof *m->parts);
  if (!m->parts)
    return -1;
  const char *p = v, *end = v + n;
  while (p < end && m->n_parts < count) {
    char *e;
    m->parts[m->n_parts++] = strtoull(p, &e, 10);
    p = e + 1;
  }
  return 0;
}

/* "a,b,c": the number of items, at most SRV_MAX_PARTS; 0 when more. */
static unsigned count_items(const char *v, size_t n) {
  unsigned count = 1;
  for (size_t i = 0; i < n; i++)
    count += v[i] == ',';
  return count <= SRV_MAX_PARTS ? count : 0;
}

/* The per-part checksums: kept only when they are well-formed, one per
 * part (checked at the end of meta_parse, when the part count is known);
 * *count their number. -1 when out of memory. */
static int parse_part_crc64(const char *v, size_t n, struct obj_meta *m,
                            unsigned *count) {
  *count = count_items(v, n);
  if (!*count || !(m->part_crc64 = calloc(*count, sizeof *m->part_crc64)))
    return *count ? -1 : 0;
  const char *p = v, *end = v + n;
  for (unsigned i = 0; i < *count; i++) {
    char *e;
    m->part_crc64[i] = strtoull(p, &e, 16);
    if (e != p + 16 || (e < end && *e != ',')) {
      *count = 0; /* malformed: none kept */
      break;
    }
    p = e + 1;
  }
  return 0;
}

static int parse_part_cksum(const char *v, size_t n, struct obj_meta *m,
                            unsigned *count) {
  *count = count_items(v, n);
  if (!*count || !(m->part_cksum = calloc(*count, sizeof *m->part_cksum)))
    return *count ? -1 : 0;
  const char *p = v, *end = v + n;
  for (unsigned i = 0; i < *count; i++) {
    const char *c = memchr(p, ',', (size_t)(end - p));
    size_t len = (size_t)((c ? c : end) - p);
    if (len >= sizeof m->part_cksum[i]) {
      *count = 0;
      break;
    }
    memcpy(m->part_cksum[i], p, len);
    p += len + 1;
  }
  return 0;
}

int meta_parse(const char *text, size_t len, struct obj_meta *m) {
  memset(m, 0, sizeof *m);
  if (len < 13 || strncmp(text, "hipobj-meta 1", 13) != 0)
    return -EINVAL;
  const char *p = text, *end = text + len;
  unsigned n_crc64 = 0, n_cksum = 0;
  int oom = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *sp = memchr(p, ' ', n);
    if (sp) {
      size_t klen = (size_t)(sp - p), vlen = n - klen - 1;
      const char *v = sp + 1;
      char num[32] = "";
      if (vlen < sizeof num) {
        memcpy(num, v, vlen);
        num[vlen] = '\0';
      }
      if (klen == 3 && !strncmp(p, "ino", 3))
        m->ino = strtoull(num, NULL, 10);
      else if (klen == 4 && !strncmp(p, "size", 4))
        m->size = strtoull(num, NULL, 10);
      else if (klen == 5 && !strncmp(p, "mtime", 5))
        m->mtime_ms = strtoll(num, NULL, 10);
      else if (klen == 4 && !strncmp(p, "etag", 4) && vlen < sizeof m->etag) {
        memcpy(m->etag, v, vlen);
        m->etag[vlen] = '\0';
      } else if (((klen == 5 && !strncmp(p, "cksum", 5)) ||
                  (klen == 6 && !strncmp(p, "crc32c", 6))) &&
                 vlen < sizeof m->cksum) { /* crc32c: before CRC32 came */
        memcpy(m->cksum, v, vlen);
        m->cksum[vlen] = '\0';
      } else if (klen == 8 && !strncmp(p, "checksum", 8) &&
                 vlen < sizeof m->checksum_alg) {
        memcpy(m->checksum_alg, v, vlen);
        m->checksum_alg[vlen] = '\0';
      } else if (klen == 3 && !strncmp(p, "key", 3)) {
        struct hbuf k = HBUF_INIT;
        if (huri_decode(&k, v, vlen) == 0)
          m->key = hbuf_steal(&k);
        hbuf_free(&k);
      } else if (klen == 5 && !strncmp(p, "ctype", 5)) {
        m->ctype = strndup(v, vlen);
      } else if (klen == 5 && !strncmp(p, "crc64", 5) && vlen == 16) {
        char *e;
        m->crc64 = strtoull(num, &e, 16);
        m->has_crc64 = *e == '\0';
      } else if (klen == 6 && !strncmp(p, "pcrc64", 6) && !m->part_crc64) {
        oom |= parse_part_crc64(v, vlen, m, &n_crc64);
      } else if (klen == 6 && !strncmp(p, "pcksum", 6) && !m->part_cksum) {
        oom |= parse_part_cksum(v, vlen, m, &n_cksum);
      } else if (klen == 5 && !strncmp(p, "parts", 5)) {
        if (parse_parts(v, vlen, m) != 0) {
          meta_free(m);
          return -ENOMEM;
        }
      } else if (klen == 1 && p[0] == 'h') {
        hbuf_append(&m->hdrs, v, vlen);
        hbuf_putc(&m->hdrs, '\n');
      }
    }
    p += n + 1;
  }
  if (m->hdrs.oom || oom) {
    meta_free(m);
    return -ENOMEM;
  }
  /* Per-part checksums that do not match the parts are not trusted. */
  if (n_crc64 != m->n_parts) {
    free(m->part_crc64);
    m->part_crc64 = NULL;
  }
  if (n_cksum != m->n_parts) {
    free(m->part_cksum);
    m->part_cksum = NULL;
  }
  return 0;
}

static int read_all(int fd, struct hbuf *out) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    if (n == 0)
      return out->oom ? -ENOMEM : 0;
    hbuf_append(out, buf, (size_t)n);
    if (out->len > (4u << 20))
      return -EFBIG;
  }
}

int meta_read(const char *path, struct hbuf *text) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  int rc = read_all(fd, text);
  close(fd);
  return rc;
}

int meta_load(const char *path, struct obj_meta *m) {
  memset(m, 0, sizeof *m);
  struct hbuf b = HBUF_INIT;
  int rc = meta_read(path, &b);
  if (rc == 0)
    rc = meta_parse(hbuf_str(&b), b.len, m);
  hbuf_free(&b);
  return rc;
}

int st_file_etag(int fd, uint64_t size, char etag[80], enum cks_alg alg,
                 uint64_t *crc) {
  return st_file_digests(fd, size, etag, alg, crc, NULL);
}

int st_file_digests(int fd, uint64_t size, char etag[80], enum cks_alg alg,
                    uint64_t *crc, uint64_t *crc64) {
  struct s3_md5_ctx *c = s3_md5_begin();
  if (!c)
    return -ENOMEM;
  char *buf = malloc(1 << 20);
  if (!buf) {
    s3_md5_abandon(c);
    return -ENOMEM;
  }
  uint64_t off = 0;
  int rc = 0;
  while (off < size) {
    size_t want = size - off < (1u << 20) ? (size_t)(size - off) : (1u << 20);
    ssize_t n = pread(fd, buf, want, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      rc = n < 0 ? -errno : -EIO;
      break;
    }
    s3_md5_update(c, buf, (size_t)n);
    if (crc && alg != CKS_NONE)
      *crc = cks_crc(alg, *crc, buf, (size_t)n);
    if (crc64)
      *crc64 = cks_crc(CKS_CRC64NVME, *crc64, buf, (size_t)n);
    off += (uint64_t)n;
  }
  free(buf);
  uint8_t d[16];
  char hex[33];
  s3_md5_end(c, d);
  hhex_encode(d, 16, hex);
  snprintf(etag, 80, "\"%s\"", hex);
  return rc;
}

/* ---- buckets ------------------------------------------------------------ */

/* S3's rules, relaxed as path-style servers do (upper case and '_' pass):
 * 3..63 characters of [A-Za-z0-9._-], starting and ending alphanumeric.
 * This also keeps every bucket a plain, non-hidden directory name. */
int st_valid_bucket(const char *b) {
  size_t n = b ? strlen(b) : 0;
  if (n < 3 || n > 63)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = b[i];
    int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9');
    if (!alnum && c != '.' && c != '-' && c != '_')
      return 0;
    if ((i == 0 || i == n - 1) && !alnum)
      return 0;
  }
  return strstr(b, "..") == NULL;
}

int st_bucket_exists(const struct server *s, const char *name) {
  char *p = st_path(s, name, NULL);
  struct stat st;
  int ok = p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
  free(p);
  return ok;
}

/* The private sub-directories; also made lazily for buckets created by
 * hand with mkdir. */
static int bucket_prepare(const char *dir) {
  static const char *const subs[] = {".hipobj", ".hipobj/meta", ".hipobj/tmp",
                                     ".hipobj/uploads", ".hipobj/done"};
  char path[4096];
  for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, subs[i]);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      return -errno;
  }
  return 0;
}

int st_bucket_create(const struct server *s, const char *name) {
  char rnd[33];
  st_random_hex(rnd, 16);
  char *stage = st_path(s, ".hipobj-tmp", "b%s", rnd);
  char *final = st_path(s, name, NULL);
  int rc = -ENOMEM;
  if (!stage || !final)
    goto done;
  if (mkdir(stage, 0755) != 0) {
    rc = -errno;
    goto done;
  }
  if ((rc = bucket_prepare(stage)) != 0)
    goto fail;
  char created[4096 + 32];
  snprintf(created, sizeof created, "%s/.hipobj/created", stage);
  FILE *f = fopen(created, "w");
  if (f) {
    fprintf(f, "%lld\n", (long long)st_now_ms());
    fclose(f);
  }
  /* RENAME_NOREPLACE: two concurrent creates, exactly one wins. */
  if (renameat2(AT_FDCWD, stage, AT_FDCWD, final, RENAME_NOREPLACE) != 0) {
    rc = errno == ENOTEMPTY ? -EEXIST : -errno;
    goto fail;
  }
  st_fsync_dir(s->root);
  rc = 0;
  goto done;
fail:
  st_rmtree(stage);
done:
  free(stage);
  free(final);
  return rc;
}

int st_bucket_delete(const struct server *s, const char *name) {
  char *dir = st_path(s, name, NULL);
  if (!dir)
    return -ENOMEM;
  st_bucket_wrlock();
  int rc = 0;
  DIR *d = opendir(dir);
  if (!d) {
    rc = -errno;
  } else {
    struct dirent *e;
    while ((e = readdir(d)))
      if (e->d_name[0] != '.') {
        rc = -ENOTEMPTY;
        break;
      }
    closedir(d);
  }
  if (rc == 0)
    rc = st_discard_tree(s, dir);
  st_bucket_unlock();
  free(dir);
  return rc;
}

static int cmp_bucket(const void *a, const void *b) {
  return strcmp(((const struct st_bucket *)a)->name,
                ((const struct st_bucket *)b)->name);
}

int st_list_buckets(const struct server *s, struct st_bucket **out, size_t *n) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir(s->root);
  if (!d)
    return -errno;
  size_t cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d))) {
    if (!st_valid_bucket(e->d_name) || !st_bucket_exists(s, e->d_name))
      continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      struct st_bucket *nb = realloc(*out, cap * sizeof *nb);
      if (!nb) {
        rc = -ENOMEM;
        break;
      }
      *out = nb;
    }
    struct st_bucket *b = &(*out)[*n];
    b->name = strdup(e->d_name);
    b->created_ms = 0;
    char *cpath = st_path(s, e->d_name, ".hipobj/created");
    FILE *f = cpath ? fopen(cpath, "r") : NULL;
    long long ms = 0;
    if (f && fscanf(f, "%lld", &ms) == 1)
      b->created_ms = ms;
    if (f)
      fclose(f);
    if (!b->created_ms) {
      struct stat st;
      char *dir = st_path(s, e->d_name, NULL);
      if (dir && stat(dir, &st) == 0)
        b->created_ms = (int64_t)st.st_mtime * 1000;
      free(dir);
    }
    free(cpath);
    if (!b->name) {
      rc = -ENOMEM;
      break;
    }
    (*n)++;
  }
  closedir(d);
  if (rc != 0) {
    st_free_buckets(*out, *n);
    *out = NULL;
    *n = 0;
    return rc;
  }
  if (*n)
    qsort(*out, *n, sizeof **out, cmp_bucket);
  return 0;
}

void st_free_buckets(struct st_bucket *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(b[i].name);
  free(b);
}

/* ---- temp files --------------------------------------------------------- */

int st_tmp_create(const struct server *s, const char *bucket, char **path) {
  *path = NULL;
  char rnd[33];
  st_random_hex(rnd, 16);
  char *p = st_path(s, bucket, ".hipobj/tmp/t%s", rnd);
  if (!p)
    return -ENOMEM;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      *path = p;
      return fd;
    }
    int e = errno;
    if (e != ENOENT || attempt || !st_bucket_exists(s, bucket)) {
      free(p);
      return -e;
    }
    char *dir = st_path(s, bucket, NULL);
    int prc = dir ? bucket_prepare(dir) : -ENOMEM;
    free(dir);
    if (prc != 0) {
      free(p);
      return prc;
    }
  }
  free(p);
  return -ENOENT;
}

int st_tmp_write(const struct server *s, const char *bucket, const void *data,
                 size_t len, char **path) {
  int fd = st_tmp_create(s, bucket, path);
  if (fd < 0)
    return fd;
  const char *p = data;
  size_t left = len;
  int rc = 0;
  while (left) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      rc = -errno;
      break;
    }
    p += n;
    left -= (size_t)n;
  }
  if (rc == 0)
    rc = st_sync_fd(fd);
  close(fd);
  if (rc != 0) {
    unlink(*path);
    free(*path);
    *path = NULL;
  }
  return rc;
}

/* ---- startup ------------------------------------------------------------ */

static void clear_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    st_rmtree(path);
  }
  closedir(d);
}

int st_startup(struct server *s, struct hbuf *why) {
  struct stat st;
  if (stat(s->root, &st) != 0 && mkdir(s->root, 0755) != 0) {
    hbuf_printf(why, "cannot create --root %s: %s", s->root, strerror(errno));
    return -1;
  }
  if (stat(s->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
    hbuf_printf(why, "--root %s is not a directory", s->root);
    return -1;
  }
  static const char *const dirs[] = {".hipobj-tmp", ".hipobj-trash"};
  for (size_t i = 0; i < 2; i++) {
    char *p = st_path(s, dirs[i], NULL);
    if (!p || (mkdir(p, 0755) != 0 && errno != EEXIST)) {
      hbuf_printf(why, "cannot create %s: %s", p ? p : dirs[i],
                  strerror(errno));
      free(p);
      return -1;
    }
    /* Leftovers of a crash: unfinished bucket creations and removals. */
    clear_dir(p);
    free(p);
  }
  /* Unfinished uploads (not multipart parts: those survive restarts). */
  struct st_bucket *b;
  size_t n;
  if (st_list_buckets(s, &b, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      char *p = st_path(s, b[i].name, ".hipobj/tmp");
      if (p)
        clear_dir(p);
      free(p);
    }
    st_free_buckets(b, n);
  }
  return 0;
}
