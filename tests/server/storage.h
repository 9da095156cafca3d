/* storage.h - how hipobj-server keeps buckets, objects and metadata on disk.
 *
 * Layout under --root (one server per root):
 *   <bucket>/                       a bucket: any directory whose name is a
 *                                   valid bucket name
 *   <bucket>/k<escaped key>         an object's bytes; the key is
 *                                   percent-encoded into one flat file name
 *   <bucket>/h<sha256 of key>       the same for keys too long for a name
 *   <bucket>/.hipobj/meta/<name>    ETag, size, type, user metadata, key
 *   <bucket>/.hipobj/tmp/           uploads in progress (same filesystem)
 *   <bucket>/.hipobj/uploads/<id>/  a multipart upload: info + parts
 *   <bucket>/.hipobj/done/<id>      result of a completed upload (retries)
 *   .hipobj-tmp/, .hipobj-trash/    bucket creation and removal staging
 *
 * An object becomes visible only by rename() of a complete, fsynced file,
 * so a crash or a failed upload never shows a half object. The metadata
 * file records the inode of the data file it describes; if a crash falls
 * between the two renames the mismatch is detected and the metadata is
 * rebuilt from the data (MD5 recomputed). */
#ifndef HIPOBJ_SERVER_STORAGE_H
#define HIPOBJ_SERVER_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"

#define ST_NAME_MAX 256

struct obj_meta {
  uint64_t ino;
  uint64_t size;
  int64_t mtime_ms;
  char etag[80];    /* quoted */
  char *key;        /* decoded key, NULL when not recorded */
  char *ctype;      /* Content-Type, NULL for the default */
  struct hbuf hdrs; /* "name: value\n" lines: x-amz-meta-*, Cache-Control...*/
  uint64_t *parts;  /* part sizes of a multipart object */
  unsigned n_parts;
  /* A part's x-amz-checksum-<alg> (base64, alg: its upload's); a completed
   * upload's composite "<base64>-N" (its done record). "" when none. */
  char cksum[16];
  /* An upload's x-amz-checksum-algorithm ("CRC32C", "CRC32"; also in the
   * done record), "" when none. An object keeps the checksum its upload
   * was checked with in cksum (a PutObject's CRC32C or CRC32, a completed
   * upload's composite) and its algorithm here, for GET and HEAD. */
  char checksum_alg[12];
  /* The CRC-64/NVME of the data (an object's, or a part's), kept for
   * every upload; has_crc64 0 for data stored before it was kept and for
   * metadata rebuilt from the data (storage.h's crash rule), which cannot
   * vouch for the bytes. */
  int has_crc64;
  uint64_t crc64;
  /* A multipart object, per part (n_parts each, NULL when not known):
   * the part's CRC-64/NVME, and its checksum of the upload's algorithm. */
  uint64_t *part_crc64;
  char (*part_cksum)[16];
};

void meta_free(struct obj_meta *m);
/* Serialises / parses the text form. */
void meta_format(const struct obj_meta *m, struct hbuf *out);
int meta_parse(const char *text, size_t len, struct obj_meta *m);
int meta_load(const char *path, struct obj_meta *m); /* 0 or -errno */
/* Appends the metadata file's text to text: 0 or -errno. */
int meta_read(const char *path, struct hbuf *text);

/* Paths: malloc'd "<root>/<bucket>[/<rel>]". */
char *st_path(const struct server *s, const char *bucket, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int st_obj_name(const char *key, char name[ST_NAME_MAX]);
void st_random_hex(char *out, size_t nbytes); /* out: 2*nbytes+1 */
int st_fsync_dir(const char *path);
void st_rmtree(const char *path);
/* Moves path into the trash (atomic disappearance) and deletes it. */
int st_discard_tree(const struct server *s, const char *path);
int st_startup(struct server *s, struct hbuf *why);

/* Locks: objects and uploads are striped by name; the bucket lock is taken
 * shared by writers into a bucket and exclusively by DeleteBucket. */
void st_obj_lock(const char *bucket, const char *name);
void st_obj_unlock(const char *bucket, const char *name);
void st_upload_lock(const char *upload_id);
void st_upload_unlock(const char *upload_id);
void st_bucket_rdlock(void);
void st_bucket_wrlock(void);
void st_bucket_unlock(void);

/* Buckets. */
int st_valid_bucket(const char *name);
int st_bucket_exists(const struct server *s, const char *name);
int st_bucket_create(const struct server *s, const char *name);
int st_bucket_delete(const struct server *s, const char *name);
struct st_bucket {
  char *name;
  int64_t created_ms;
};
int st_list_buckets(const struct server *s, struct st_bucket **out, size_t *n);
void st_free_buckets(struct st_bucket *b, size_t n);

/* Temp files inside the bucket: fd, path in *path (malloc'd). -errno:
 * -ENOENT when the bucket does not exist. */
int st_tmp_create(const struct server *s, const char *bucket, char **path);
/* Writes data to a new fsynced temp file; its path in *path. */
int st_tmp_write(const struct server *s, const char *bucket, const void *data,
                 size_t len, char **path);

/* Reads len bytes of fd at off into buf, whole: 0, or -errno (-EIO when
 * the file ends first). */
int st_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Objects. commit: data_tmp is complete and fsynced; m->ino is set from
 * it here. open: *fd positioned anywhere (use pread); -ENOENT when absent. */
int st_obj_commit(const struct server *s, const char *bucket, const char *key,
                  const char *data_tmp, struct obj_meta *m);
int st_obj_open(const struct server *s, const char *bucket, const char *key,
                struct obj_meta *m, int *fd);
/* st_obj_open for a GET's body: in memory mode a small object comes from
 * the cache (metacache.c) as *body, m->size malloc'd bytes, with *fd -1;
 * otherwise *body is NULL and *fd as st_obj_open's. */
int st_obj_open_body(const struct server *s, const char *bucket,
                     const char *key, struct obj_meta *m, int *fd, char **body);
int st_obj_info(const struct server *s, const char *bucket, const char *key,
                struct obj_meta *m);
int st_obj_delete(const struct server *s, const char *bucket, const char *key);
/* All keys of a bucket starting with prefix, sorted bytewise. */
int st_list_keys(const struct server *s, const char *bucket, const char *prefix,
                 char ***keys, size_t *n);
void st_free_keys(char **keys, size_t n);

/* MD5 of a file's bytes, quoted hex ETag form; with crc (alg not
 * CKS_NONE), also the bytes' CRC of alg (same pass). */
int st_file_etag(int fd, uint64_t size, char etag[80], enum cks_alg alg,
                 uint64_t *crc);
/* The same, and with crc64 not NULL the bytes' CRC-64/NVME too. */
int st_file_digests(int fd, uint64_t size, char etag[80], enum cks_alg alg,
                    uint64_t *crc, uint64_t *crc64);
int64_t st_now_ms(void);

/* ---- memstore.c: --storage memory ---------------------------------------
 * The same layout on tmpfs, nothing fsynced, ETags without MD5 (body.c),
 * the bytes stored capped at s->mem_cap. */
extern int st_volatile; /* 1 in memory mode: fsyncs are skipped */
/* fsync(fd), or nothing in memory mode. 0 or -errno. */
int st_sync_fd(int fd);
/* Before st_startup: a fresh root under /dev/shm unless --root was given. */
int mem_setup(struct server *s, struct hbuf *why);
/* After st_startup: the root must be on tmpfs or ramfs; counts what it
 * already holds; without cap_given sets the default cap (half of the
 * tmpfs's free space). */
int mem_startup(struct server *s, int cap_given, struct hbuf *why);
/* Accounts n more bytes against the cap: 0, or -ENOSPC when they would
 * pass it (answered 507 InsufficientStorage). Always 0 without a cap. */
int mem_reserve(const struct server *s, uint64_t n);
uint64_t mem_used(void);
/* At exit: removes the root it created. */
void mem_teardown(struct server *s);

/* ---- assemble.c: Complete's copy by several threads ---------------------- */
#define ST_ASSEMBLE_MAX 16
/* The n parts at paths (sizes as recorded) copied into out, which is
 * empty, in order, by up to threads threads (this one included); out ends
 * at its size and its offset there. 0, or the first -errno (-ENOSPC on a
 * full file system, -EIO for a part shorter than its size). */
int st_assemble_parallel(int out, const char *const *paths,
                         const uint64_t *sizes, size_t n, unsigned threads);

#endif
