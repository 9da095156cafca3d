/* objfile.c - objects on disk for hipobj-server: commit (two renames
 * under the object's lock), open (data and metadata read under the same
 * lock, rebuilt from the data if a crash left them out of step), delete,
 * and the sorted key list of a bucket. Layout and crash rules: storage.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metacache.h"
#include "src/base/uri.h"
#include "storage.h"

int st_obj_commit(const struct server *s, const char *bucket, const char *key,
                  const char *data_tmp, struct obj_meta *m) {
  char name[ST_NAME_MAX];
  if (st_obj_name(key, name) != 0)
    return -ENOMEM;
  struct stat st;
  if (stat(data_tmp, &st) != 0)
    return -errno;
  m->ino = (uint64_t)st.st_ino;
  m->size = (uint64_t)st.st_size;
  if (!m->mtime_ms)
    m->mtime_ms = st_now_ms();
  struct hbuf text = HBUF_INIT;
  meta_format(m, &text);
  if (text.oom) {
    hbuf_free(&text);
    return -ENOMEM;
  }
  char *meta_tmp = NULL;
  int rc = st_tmp_write(s, bucket, text.data, text.len, &meta_tmp);
  hbuf_free(&text);
  if (rc != 0)
    return rc;
  char *data_path = st_path(s, bucket, "%s", name);
  char *meta_path = st_path(s, bucket, ".hipobj/meta/%s", name);
  char *bucket_dir = st_path(s, bucket, NULL);
  char *meta_dir = st_path(s, bucket, ".hipobj/meta");
  if (!data_path || !meta_path || !bucket_dir || !meta_dir) {
    rc = -ENOMEM;
    goto done;
  }
  st_bucket_rdlock();
  st_obj_lock(bucket, name);
  /* Both renames under the lock, so readers see old or new, never a mix.
   * A crash between them leaves new metadata beside old data (or none):
   * the inode recorded in the metadata tells, and it is rebuilt. */
  if (rename(meta_tmp, meta_path) != 0)
    rc = -errno;
  else if (rename(data_tmp, data_path) != 0)
    rc = -errno;
  st_obj_unlock(bucket, name);
  st_bucket_unlock();
  if (rc == 0) {
    st_fsync_dir(meta_dir);
    st_fsync_dir(bucket_dir);
  }
done:
  if (rc != 0)
    unlink(meta_tmp);
  free(meta_tmp);
  free(data_path);
  free(meta_path);
  free(bucket_dir);
  free(meta_dir);
  return rc;
}

/* The metadata of the data file st: the memory mode's cache (metacache.c)
 * when it holds that file's, else the file's, kept when it describes st. */
static int load_meta(const struct server *s, const char *bucket,
                     const char *name, const struct stat *st,
                     struct obj_meta *m) {
  struct hbuf text = HBUF_INIT;
  int cached = mc_get(s->meta_cache, bucket, name, st, &text, NULL) >= 0;
  int rc = 0;
  if (!cached) {
    char *meta_path = st_path(s, bucket, ".hipobj/meta/%s", name);
    rc = meta_path ? meta_read(meta_path, &text) : -ENOMEM;
    free(meta_path);
  }
  if (rc == 0)
    rc = meta_parse(hbuf_str(&text), text.len, m);
  if (rc == 0 && !cached && m->ino == (uint64_t)st->st_ino &&
      m->size == (uint64_t)st->st_size)
    mc_put(s->meta_cache, bucket, name, st, text.data, text.len);
  hbuf_free(&text);
  return rc;
}

static int open_by_name(const struct server *s, const char *bucket,
                        const char *name, const char *key, struct obj_meta *m,
                        int *fdp) {
  char *data_path = st_path(s, bucket, "%s", name);
  int rc = 0;
  if (!data_path) {
    rc = -ENOMEM;
    goto done;
  }
  st_obj_lock(bucket, name);
  /* Metadata only (HEAD, a listing's every key): a stat of the data file
   * names it for the metadata; it is opened only to be read. */
  int fd = -1, found = 0;
  struct stat st;
  if (fdp) {
    fd = open(data_path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0)
      found = 1;
    else if (fd >= 0) {
      int e = errno;
      close(fd);
      fd = -1;
      errno = e;
    }
  } else {
    found = stat(data_path, &st) == 0;
  }
  int mrc = -ENOENT;
  if (found)
    mrc = load_meta(s, bucket, name, &st, m);
  else
    rc = -errno;
  st_obj_unlock(bucket, name);
  if (!found)
    goto done;
  if (mrc != 0 || m->ino != (uint64_t)st.st_ino ||
      m->size != (uint64_t)st.st_size) {
    /* A crash between the renames of a commit (or a file put there by
     * hand): rebuild what the data can tell. */
    if (mrc == 0)
      meta_free(m);
    memset(m, 0, sizeof *m);
    /* Opened now when only stat'ed: what is read is what it describes. */
    int efd = fd >= 0 ? fd : open(data_path, O_RDONLY | O_CLOEXEC);
    if (efd < 0 || (efd != fd && fstat(efd, &st) != 0)) {
      rc = -errno;
      if (efd >= 0)
        close(efd);
      goto done;
    }
    m->ino = (uint64_t)st.st_ino;
    m->size = (uint64_t)st.st_size;
    m->mtime_ms = (int64_t)st.st_mtime * 1000;
    m->key = key ? strdup(key) : NULL;
    if (!key && name[0] == 'k') {
      struct hbuf k = HBUF_INIT;
      if (huri_decode(&k, name + 1, strlen(name + 1)) == 0)
        m->key = hbuf_steal(&k);
      hbuf_free(&k);
    }
    rc = st_file_etag(efd, m->size, m->etag, CKS_NONE, NULL);
    if (efd != fd)
      close(efd);
    if (rc != 0) {
      if (fd >= 0)
        close(fd);
      meta_free(m);
      goto done;
    }
  }
  if (fdp)
    *fdp = fd;
done:
  free(data_path);
  return rc;
}

int st_obj_open(const struct server *s, const char *bucket, const char *key,
                struct obj_meta *m, int *fd) {
  char name[ST_NAME_MAX];
  memset(m, 0, sizeof *m);
  if (st_obj_name(key, name) != 0)
    return -ENOMEM;
  return open_by_name(s, bucket, name, key, m, fd);
}

/* A small object whose bytes the memory mode's cache holds, found by a
 * stat(2) of its data file: 0 (m and *body set), 1 when the cache cannot
 * answer, or -errno (absent: -ENOENT or -ENOTDIR). No object lock: the
 * text and the bytes are both pinned to the file stat names, so they are
 * of one version, the one linked when stat ran. */
static int cached_body(const struct server *s, const char *bucket,
                       const char *name, struct obj_meta *m, char **body) {
  char *data_path = st_path(s, bucket, "%s", name);
  if (!data_path)
    return -ENOMEM;
  struct stat st;
  int found = stat(data_path, &st) == 0, e = errno;
  free(data_path);
  if (!found)
    return e == ENOENT || e == ENOTDIR ? -e : 1;
  struct hbuf text = HBUF_INIT, data = HBUF_INIT;
  int rc = 1;
  if (mc_get(s->meta_cache, bucket, name, &st, &text, &data) == 1 &&
      meta_parse(hbuf_str(&text), text.len, m) == 0) {
    if (m->ino == (uint64_t)st.st_ino && m->size == (uint64_t)st.st_size &&
        data.len == m->size && (*body = hbuf_steal(&data)) != NULL) {
      rc = 0; /* *body is not NULL, even for no bytes */
    } else {
      meta_free(m);
      memset(m, 0, sizeof *m);
    }
  }
  hbuf_free(&text);
  hbuf_free(&data);
  return rc;
}

int st_pread_full(int fd, void *buf, size_t len, uint64_t off) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? -errno : -EIO;
    got += (size_t)n;
  }
  return 0;
}

/* Reads the object open as fd into the cache when it is small; the bytes
 * read become *body and fd is closed, or nothing changes. */
static void keep_body(const struct server *s, const char *bucket,
                      const char *name, const struct obj_meta *m, int *fd,
                      char **body) {
  struct stat st;
  if (m->size > MC_BODY_MAX || fstat(*fd, &st) != 0 ||
      (uint64_t)st.st_size != m->size)
    return;
  char *buf = malloc(m->size ? m->size : 1);
  if (!buf || st_pread_full(*fd, buf, m->size, 0) != 0) {
    free(buf);
    return;
  }
  mc_put_body(s->meta_cache, bucket, name, &st, buf, m->size);
  close(*fd);
  *fd = -1;
  *body = buf;
}

int st_obj_open_body(const struct server *s, const char *bucket,
                     const char *key, struct obj_meta *m, int *fd,
                     char **body) {
  char name[ST_NAME_MAX];
  memset(m, 0, sizeof *m);
  *fd = -1;
  *body = NULL;
  if (st_obj_name(key, name) != 0)
    return -ENOMEM;
  if (s->meta_cache) {
    int rc = cached_body(s, bucket, name, m, body);
    if (rc != 1)
      return rc;
  }
  int rc = open_by_name(s, bucket, name, key, m, fd);
  if (rc == 0 && s->meta_cache)
    keep_body(s, bucket, name, m, fd, body);
  return rc;
}

int st_obj_info(const struct server *s, const char *bucket, const char *key,
                struct obj_meta *m) {
  return st_obj_open(s, bucket, key, m, NULL);
}

int st_obj_delete(const struct server *s, const char *bucket, const char *key) {
  char name[ST_NAME_MAX];
  if (st_obj_name(key, name) != 0)
    return -ENOMEM;
  char *data_path = st_path(s, bucket, "%s", name);
  char *meta_path = st_path(s, bucket, ".hipobj/meta/%s", name);
  int rc = 0;
  if (!data_path || !meta_path) {
    rc = -ENOMEM;
  } else {
    st_obj_lock(bucket, name);
    if (unlink(data_path) != 0 && errno != ENOENT)
      rc = -errno;
    if (rc == 0)
      unlink(meta_path);
    st_obj_unlock(bucket, name);
  }
  free(data_path);
  free(meta_path);
  return rc;
}

static int cmp_key(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int st_list_keys(const struct server *s, const char *bucket, const char *prefix,
                 char ***keys, size_t *n) {
  *keys = NULL;
  *n = 0;
  char *dir = st_path(s, bucket, NULL);
  if (!dir)
    return -ENOMEM;
  DIR *d = opendir(dir);
  free(dir);
  if (!d)
    return -errno;
  size_t cap = 0, plen = prefix ? strlen(prefix) : 0;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char *key = NULL;
    if (e->d_name[0] == 'k') {
      struct hbuf k = HBUF_INIT;
      if (huri_decode(&k, e->d_name + 1, strlen(e->d_name + 1)) == 0)
        key = hbuf_steal(&k);
      hbuf_free(&k);
    } else if (e->d_name[0] == 'h') {
      struct obj_meta m;
      char *mp = st_path(s, bucket, ".hipobj/meta/%s", e->d_name);
      if (mp && meta_load(mp, &m) == 0) {
        key = m.key;
        m.key = NULL;
        meta_free(&m);
      }
      free(mp);
    }
    if (!key)
      continue;
    if (plen && strncmp(key, prefix, plen) != 0) {
      free(key);
      continue;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nk = realloc(*keys, cap * sizeof *nk);
      if (!nk) {
        free(key);
        rc = -ENOMEM;
        break;
      }
      *keys = nk;
    }
    (*keys)[(*n)++] = key;
  }
  closedir(d);
  if (rc != 0) {
    st_free_keys(*keys, *n);
    *keys = NULL;
    *n = 0;
    return rc;
  }
  /* strcmp compares as unsigned char: S3's UTF-8 byte order. */
  if (*n)
    qsort(*keys, *n, sizeof **keys, cmp_key);
  return 0;
}

void st_free_keys(char **keys, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(keys[i]);
  free(keys);
}
