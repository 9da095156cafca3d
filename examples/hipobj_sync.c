/* hipobj_sync.c - the tree commands: cp/mv --recursive, sync and rm
 * --recursive. Each lists its sides (hipobj_tree.c), keeps what the
 * --exclude/--include filters let through, and hands the items to the
 * many-files engine (hipobj_batch.c).
 *
 * sync copies a file when the destination lacks it, when the sizes
 * differ, or (without --size-only) when the source is newer than the
 * destination: a local file's mtime against the object's LastModified.
 * Downloads date their files with the object's LastModified and an upload
 * is dated when it is made, so a second sync finds nothing to do. With
 * --delete it also deletes what the destination has and the source does
 * not (filters apply there too: an excluded file is left alone). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hipobj_xfer.h"

/* One side of a tree command, listed. */
struct side {
  const struct location *loc;
  char *prefix; /* S3: the key prefix as a "directory" ("" or "p/") */
  struct tree t;
};

static int list_side(struct cli *c, const struct location *loc, struct side *s,
                     int must_exist) {
  memset(s, 0, sizeof *s);
  s->loc = loc;
  if (loc->kind == LOC_S3) {
    if (!(s->prefix = dir_prefix(loc->key)))
      return report_errno(loc->arg, ENOMEM);
    return tree_s3(c, loc->bucket, s->prefix, &s->t);
  }
  struct stat st;
  if (stat(loc->arg, &st) != 0) {
    if (errno == ENOENT && !must_exist)
      return 0; /* a destination made by the copy */
    return report_errno(loc->arg, errno);
  }
  if (!S_ISDIR(st.st_mode))
    return report_msg(loc->arg, "not a directory (--recursive copies trees; "
                                "leave it out to copy one file)");
  return tree_local(c, loc->arg, &s->t);
}

static void side_free(struct side *s) {
  free(s->prefix);
  tree_free(&s->t);
}

/* The name of rel on a side: a path under the directory, or a key. */
static char *name_on(const struct side *s, const char *rel) {
  return s->loc->kind == LOC_S3 ? join_key(s->prefix, rel)
                                : join_path(s->loc->arg, rel);
}

/* Whether src's entry is to be copied over dst's (NULL: absent). */
static int needs_copy(const struct cli *c, const struct entry *src,
                      const struct entry *dst) {
  if (!dst || dst->size != src->size)
    return 1;
  return !c->size_only && src->mtime > dst->mtime;
}

/* Adds the copy of rel from side a to side b; -1 when out of memory. */
static int add_copy(struct batch *batch, enum item_op iop, const struct side *a,
                    const struct side *b, const char *rel, uint64_t size,
                    int move) {
  char *from = name_on(a, rel), *to = name_on(b, rel);
  int rc = !from || !to || batch_add(batch, iop, from, to, size) != 0 ? -1 : 0;
  if (rc == 0)
    batch->items[batch->n - 1].remove_src = move;
  free(from);
  free(to);
  return rc;
}

/* cp/mv --recursive from S3: the keys become items a page at a time, so
 * the first downloads (or copies) run while the next page is listed. The
 * first page is small to start them sooner; S3's order is kept (the
 * result lines come in it, --dryrun's too). */
#define FIRST_PAGE_KEYS 100

struct feed {
  struct cli *c;
  struct lister l;
  struct side *src, *dst;
  enum item_op iop;
  int move;
  struct batch *page; /* while a page is read */
};

static int feed_key(void *ctx, const char *rel, uint64_t size, int64_t mtime) {
  (void)mtime;
  struct feed *f = ctx;
  if (!filters_pass(f->c, rel))
    return 0;
  return add_copy(f->page, f->iop, f->src, f->dst, rel, size, f->move);
}

static int feed_page(void *ctx, struct batch *page, int *done) {
  struct feed *f = ctx;
  f->page = page;
  int rc = lister_page(&f->l, f->l.pages ? 0 : FIRST_PAGE_KEYS, feed_key, f);
  *done = f->l.done;
  return rc;
}

/* cp/mv --recursive (sync: only what differs, and --delete). */
static int tree_cmd(struct cli *c, const struct location *src,
                    const struct location *dst, int move, int sync) {
  const char *op = sync ? "sync" : move ? "mv" : "cp";
  struct side a, b;
  /* Without sync nothing needs the whole source first. */
  int stream = !sync && src->kind == LOC_S3;
  int rc = 0;
  if (stream) {
    memset(&a, 0, sizeof a);
    a.loc = src;
    if (!(a.prefix = dir_prefix(src->key)))
      rc = report_errno(src->arg, ENOMEM);
  } else {
    rc = list_side(c, src, &a, 1);
  }
  if (rc)
    return rc;
  memset(&b, 0, sizeof b);
  b.loc = dst;
  if (sync)
    rc = list_side(c, dst, &b, 0);
  else if (dst->kind == LOC_S3 && !(b.prefix = dir_prefix(dst->key)))
    rc = report_errno(dst->arg, ENOMEM);
  if (rc) {
    side_free(&a);
    return rc;
  }
  enum item_op iop = src->kind == LOC_LOCAL   ? IT_UPLOAD
                     : dst->kind == LOC_LOCAL ? IT_DOWNLOAD
                                              : IT_COPY;
  struct batch batch = {.sb = src->kind == LOC_S3 ? src->bucket : NULL,
                        .db = dst->kind == LOC_S3 ? dst->bucket : NULL};
  for (size_t i = 0; rc == 0 && i < a.t.n; i++) {
    const struct entry *e = &a.t.e[i];
    if (!filters_pass(c, e->rel))
      continue;
    if (sync && !needs_copy(c, e, tree_find(&b.t, e->rel)))
      continue;
    if (add_copy(&batch, iop, &a, &b, e->rel, e->size, move) != 0)
      rc = report_errno(src->arg, ENOMEM);
  }
  /* sync --delete: what only the destination has. */
  for (size_t i = 0; sync && c->delete_extra && rc == 0 && i < b.t.n; i++) {
    const struct entry *e = &b.t.e[i];
    if (!filters_pass(c, e->rel) || tree_find(&a.t, e->rel))
      continue;
    char *victim = name_on(&b, e->rel);
    if (!victim ||
        batch_add(&batch, dst->kind == LOC_S3 ? IT_DELETE_S3 : IT_DELETE_LOCAL,
                  victim, NULL, 0) != 0)
      rc = report_errno(dst->arg, ENOMEM);
    free(victim);
  }
  if (rc == 0 && stream) {
    struct feed f = {.c = c, .src = &a, .dst = &b, .iop = iop, .move = move};
    lister_init(&f.l, c, src->bucket, a.prefix);
    rc = batch_run_fed(c, &batch, op, feed_page, &f);
    lister_free(&f.l);
  } else if (rc == 0) {
    rc = batch_run(c, &batch, op);
  }
  batch_free(&batch);
  side_free(&a);
  side_free(&b);
  return rc;
}

int cp_tree(struct cli *c, const struct location *src,
            const struct location *dst, int move) {
  return tree_cmd(c, src, dst, move, 0);
}

int cmd_sync(struct cli *c, int argc, char **argv) {
  if (argc != 2)
    return report_usage("sync takes two arguments: SRC DST");
  struct location src, dst;
  if (loc_parse(argv[0], &src) != 0)
    return CLI_EXIT_USAGE;
  if (loc_parse(argv[1], &dst) != 0) {
    loc_free(&src);
    return CLI_EXIT_USAGE;
  }
  int rc = 0;
  if (src.kind == LOC_STDIO || dst.kind == LOC_STDIO)
    rc = report_usage("sync works on directories and prefixes, not stdin "
                      "or stdout");
  else if (src.kind != LOC_S3 && dst.kind != LOC_S3)
    rc = report_usage("one of SRC and DST must be an s3:// URL");
  if (rc == 0)
    rc = cli_connect(c);
  if (rc == 0)
    rc = tree_cmd(c, &src, &dst, 0, 1);
  loc_free(&src);
  loc_free(&dst);
  return rc;
}

/* rm --recursive s3://bucket[/prefix]: every key under the prefix that
 * the filters let through. */
int rm_tree(struct cli *c, const struct location *loc) {
  struct side a;
  int rc = list_side(c, loc, &a, 1);
  if (rc)
    return rc;
  struct batch batch = {.db = loc->bucket};
  for (size_t i = 0; rc == 0 && i < a.t.n; i++) {
    if (!filters_pass(c, a.t.e[i].rel))
      continue;
    char *key = name_on(&a, a.t.e[i].rel);
    if (!key || batch_add(&batch, IT_DELETE_S3, key, NULL, 0) != 0)
      rc = report_errno(loc->arg, ENOMEM);
    free(key);
  }
  if (rc == 0)
    rc = batch_run(c, &batch, "rm");
  batch_free(&batch);
  side_free(&a);
  return rc;
}
