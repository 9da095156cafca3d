/* hipobj_xfer.h - the transfers of one object that cp, mv and sync are
 * made of (hipobj_cp.c, hipobj_stream.c), and the many-files engine that
 * runs them several at a time (hipobj_batch.c) over the lists that
 * hipobj_tree.c builds. Internal to the tool. */
#ifndef HIPOBJ_XFER_H
#define HIPOBJ_XFER_H

#include "hipobj_cli.h"

/* What one transfer did, for the summary and --json. */
struct cp_stats {
  uint64_t bytes;
  unsigned retries;
  unsigned parts;
  enum hipobj_data_path path;
  double start;
  /* GET: the checksum of the whole object the bytes were verified
   * against, "" when none (then note may say why). */
  char checksum[16];
  char note[160];
};
void stats_add(struct cp_stats *s, const struct hipobj_xfer_result *r);

/* How a transfer failed, recorded by the xfail_* helpers (the transfer's
 * own code does not print: one cp ends its display first, the engine
 * prints between other lines) and reported by xctx_report(). */
enum xfail_kind {
  XF_NONE,
  XF_LIB,
  XF_ERRNO,
  XF_MSG,
  XF_PIPE, /* the reader of stdout went away: exit 141, no message */
};

/* One transfer's context: the client, the display it feeds (shared by
 * the files of a batch; may be disabled), and this thread's error. */
struct xctx {
  struct cli *c;
  struct progress *p;
  struct hipobj_error *err;
  int many; /* one of many files: sizes come from the listing */
  /* the failure */
  enum xfail_kind kind;
  int e;
  char subject[1024];
  char msg[1400];
  char kept_upload[HIPOBJ_UPLOAD_ID_MAX]; /* --keep-failed-upload */
  int abort_failed; /* kept_upload: not kept on purpose, the abort failed */
};
/* Record a failure; each returns CLI_EXIT_FAIL (xfail_lib: the status
 * exit_status_of(x->err) gives). */
int xfail_lib(struct xctx *x, const char *subject);
int xfail_errno(struct xctx *x, const char *subject, int e);
int xfail_msg(struct xctx *x, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports the recorded failure (an interrupted transfer says so) and
 * returns its exit status. */
int xctx_report(struct xctx *x);

/* The transfers; each returns 0 or an exit status with the failure
 * recorded in x. A download writes a temp file next to path and renames
 * it into place only when complete, dated with the object's
 * Last-Modified; its size comes from the first ranged GET (size_hint:
 * the listing's, or UINT64_MAX unknown), never from a HEAD. */
int upload_file(struct xctx *x, const char *path, const char *bucket,
                const char *key, struct cp_stats *s);
int download_file(struct xctx *x, const char *bucket, const char *key,
                  const char *src_name, const char *path, uint64_t size_hint,
                  struct cp_stats *s);
int copy_object(struct xctx *x, const char *sb, const char *sk, const char *db,
                const char *dk, struct cp_stats *s);
/* hipobj_stream.c: stdin or a pipe to S3; S3 to stdout, a pipe or a
 * device (with --range, only that range). */
int upload_stream(struct xctx *x, int fd, const char *src_name,
                  const char *bucket, const char *key, struct cp_stats *s);
int download_stream(struct xctx *x, const char *bucket, const char *key,
                    const char *src_name, int fd, const char *dst_name,
                    int data_on_stdout, struct cp_stats *s);

/* --gpu download into the temp file fd: a HEAD learns the size, the
 * object lands in GPU memory and is copied out to the file. */
int download_gpu(struct xctx *x, const char *bucket, const char *key,
                 const char *src_name, int fd, const char *tmp, int64_t *mtime,
                 struct cp_stats *s);

/* --gpu: a buffer of n bytes on the GPU (none without --gpu), copies of
 * host memory to and from its start, and of a file's first size bytes
 * through one chunk-sized host buffer (0, a library status with the
 * cause in err, or -1 with errno for the file). */
int gpu_buffer(struct cli *c, size_t n, struct hipobj_mem *dev,
               struct hipobj_error *err);
int gpu_move(struct cli *c, const struct hipobj_mem *dev, void *host, size_t n,
             int to_gpu, struct hipobj_error *err);
int gpu_file_move(struct cli *c, const struct hipobj_mem *dev, int fd,
                  uint64_t size, int to_gpu, struct hipobj_error *err);
uint64_t chunk_size(const struct cli *c);
int write_all(int fd, const unsigned char *p, size_t n);

/* Prints the result of one transfer: "upload: a to s3://b/a" (not with
 * --quiet) or its JSON object (to stderr when stdout carries data). */
void print_result(const struct cli *c, const char *op, const char *verb,
                  const char *src, const char *dst, const struct cp_stats *s,
                  int data_on_stdout);

/* ---- many files ------------------------------------------------------------
 */

enum item_op { IT_UPLOAD, IT_DOWNLOAD, IT_COPY, IT_DELETE_S3, IT_DELETE_LOCAL };

/* One file of a batch: a local path or bucket/key on each side. */
struct item {
  enum item_op op;
  char *src; /* local path, or key in sb */
  char *dst; /* local path, or key in db (NULL for deletes) */
  uint64_t size;
  int remove_src; /* mv: delete the source once copied */
};

struct batch {
  struct item *items;
  size_t n, cap;
  const char *sb, *db; /* source and destination buckets (or NULL) */
};
int batch_add(struct batch *b, enum item_op op, const char *src,
              const char *dst, uint64_t size);
void batch_free(struct batch *b);
/* Runs the items, --jobs at a time, each printing its result or failure
 * line; with --dryrun only prints what it would do. Returns 0, the exit
 * status of the failures (CLI_EXIT_FAIL when any item failed), or 128 +
 * the signal after an interruption (transfers cancelled, the rest not
 * started). op names the command for --json. */
int batch_run(struct cli *c, struct batch *b, const char *op);
/* Adds the next items of a running batch to page (batch_add), setting
 * *done after the last; 0, or an exit status after reporting. */
typedef int (*batch_feed_fn)(void *ctx, struct batch *page, int *done);
/* batch_run, with feed called on this thread (until done, a failure or an
 * interruption) for more items while the workers run those it added;
 * a feed's failure is the exit status once the items added have run. */
int batch_run_fed(struct cli *c, struct batch *b, const char *op,
                  batch_feed_fn feed, void *ctx);

/* The tree commands (hipobj_sync.c): cp/mv --recursive, rm --recursive;
 * 0 or an exit status after reporting. */
int cp_tree(struct cli *c, const struct location *src,
            const struct location *dst, int move);
int rm_tree(struct cli *c, const struct location *loc);

/* ---- trees (hipobj_tree.c) -------------------------------------------------
 */

/* One entry of a tree: its path relative to the root ('/'-separated),
 * its size and modification time. */
struct entry {
  char *rel;
  uint64_t size;
  int64_t mtime;
};
struct tree {
  struct entry *e;
  size_t n, cap;
};
void tree_free(struct tree *t);
/* Every regular file under dir (symbolic links followed to files, not to
 * directories), sorted by rel. 0, or an exit status after reporting. */
int tree_local(struct cli *c, const char *dir, struct tree *out);
/* Every object under bucket/prefix (rel: the key without the prefix;
 * "directory marker" keys ending in '/' left out), sorted. 0, or an exit
 * status after reporting. */
int tree_s3(struct cli *c, const char *bucket, const char *prefix,
            struct tree *out);
/* The keys under bucket/prefix a page at a time (what tree_s3 reads in
 * one go), for a command that starts on the first page while the next is
 * listed. */
struct lister {
  struct cli *c;
  const char *bucket, *prefix;
  char *token; /* the next page's continuation token */
  unsigned pages;
  int done; /* the last page has been read */
};
/* Called for each key of a page (rel: without the prefix; directory
 * markers left out); non-zero: out of memory. */
typedef int (*lister_fn)(void *ctx, const char *rel, uint64_t size,
                         int64_t mtime);
void lister_init(struct lister *l, struct cli *c, const char *bucket,
                 const char *prefix);
/* The next page of at most max_keys keys (0: the server's 1000), in the
 * server's order; sets done after the last. 0, or an exit status after
 * reporting. */
int lister_page(struct lister *l, unsigned max_keys, lister_fn each, void *ctx);
void lister_free(struct lister *l);
/* The entry rel, NULL when absent (t sorted). */
const struct entry *tree_find(const struct tree *t, const char *rel);
/* Whether the --exclude/--include filters let rel through. */
int filters_pass(const struct cli *c, const char *rel);
/* "dir" + "/" + rel, or prefix + rel for a key ("" prefix allowed);
 * malloc'd, NULL when out of memory. */
char *join_path(const char *dir, const char *rel);
char *join_key(const char *prefix, const char *rel);
/* A key prefix as a "directory": "" stays "", else ends in '/'. */
char *dir_prefix(const char *key);

#endif
