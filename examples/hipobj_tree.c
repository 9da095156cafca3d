/* hipobj_tree.c - the two sides of cp/mv/sync --recursive and rm
 * --recursive as sorted lists of (relative path, size, mtime): a local
 * directory walked with openat/fstatat, or the keys under an S3 prefix
 * (ListObjectsV2, every page), and the --exclude/--include filters that
 * decide which of them take part. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hipobj_xfer.h"

void tree_free(struct tree *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->e[i].rel);
  free(t->e);
  memset(t, 0, sizeof *t);
}

static int tree_add(struct tree *t, const char *rel, uint64_t size,
                    int64_t mtime) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    struct entry *e = realloc(t->e, cap * sizeof *e);
    if (!e)
      return -1;
    t->e = e;
    t->cap = cap;
  }
  char *r = strdup(rel);
  if (!r)
    return -1;
  t->e[t->n++] = (struct entry){r, size, mtime};
  return 0;
}

static int by_rel(const void *a, const void *b) {
  return strcmp(((const struct entry *)a)->rel, ((const struct entry *)b)->rel);
}

const struct entry *tree_find(const struct tree *t, const char *rel) {
  struct entry key = {(char *)rel, 0, 0};
  return bsearch(&key, t->e, t->n, sizeof *t->e, by_rel);
}

char *join_path(const char *dir, const char *rel) {
  char *out = NULL;
  return asprintf(&out, "%s%s%s", dir, ends_with_slash(dir) ? "" : "/", rel) < 0
             ? NULL
             : out;
}

char *join_key(const char *prefix, const char *rel) {
  char *out = NULL;
  return asprintf(&out, "%s%s", prefix, rel) < 0 ? NULL : out;
}

char *dir_prefix(const char *key) {
  char *out = NULL;
  if (!*key || ends_with_slash(key))
    return strdup(key);
  return asprintf(&out, "%s/", key) < 0 ? NULL : out;
}

int filters_pass(const struct cli *c, const char *rel) {
  int pass = 1;
  for (size_t i = 0; i < c->n_filters; i++)
    if (fnmatch(c->filters[i].pattern, rel, 0) == 0)
      pass = c->filters[i].include;
  return pass;
}

/* ---- a local directory ----------------------------------------------------
 */

/* Depth-first below dirfd, rel the path so far ("" at the root). Symbolic
 * links are followed to files but not to directories, so that a link
 * cannot make the walk loop. Anything else (sockets, devices, FIFOs) is
 * named and left out. */
static int walk(struct cli *c, int dirfd, const char *shown, const char *rel,
                struct tree *out, int depth) {
  if (depth > 256)
    return report_msg(shown, "directories nested more than 256 deep");
  DIR *d = fdopendir(dirfd);
  if (!d) {
    int e = errno;
    close(dirfd);
    return report_errno(shown, e);
  }
  int rc = 0;
  while (rc == 0) {
    errno = 0;
    struct dirent *de = readdir(d);
    if (!de) {
      if (errno != 0)
        rc = report_errno(shown, errno);
      break;
    }
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    char *sub = NULL;
    if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
      rc = report_errno(shown, ENOMEM);
      break;
    }
    struct stat st, lst;
    if (fstatat(dirfd, de->d_name, &lst, AT_SYMLINK_NOFOLLOW) != 0 ||
        fstatat(dirfd, de->d_name, &st, 0) != 0) {
      char *p = join_path(shown, sub);
      report_errno(p ? p : sub, errno);
      free(p);
      rc = CLI_EXIT_FAIL;
    } else if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode)) {
      int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        char *p = join_path(shown, sub);
        rc = report_errno(p ? p : sub, errno);
        free(p);
      } else {
        rc = walk(c, fd, shown, sub, out, depth + 1);
      }
    } else if (S_ISREG(st.st_mode)) {
      if (tree_add(out, sub, (uint64_t)st.st_size, (int64_t)st.st_mtime) != 0)
        rc = report_errno(shown, ENOMEM);
    } else {
      char *p = join_path(shown, sub);
      report_msg(p ? p : sub, "skipped: %s",
                 S_ISDIR(st.st_mode) ? "a symbolic link to a directory"
                                     : "not a regular file");
      free(p);
    }
    free(sub);
  }
  closedir(d); /* closes dirfd */
  return rc;
}

int tree_local(struct cli *c, const char *dir, struct tree *out) {
  memset(out, 0, sizeof *out);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return report_errno(dir, errno);
  int rc = walk(c, fd, dir, "", out, 0);
  if (rc != 0) {
    tree_free(out);
    return rc;
  }
  qsort(out->e, out->n, sizeof *out->e, by_rel);
  return 0;
}

/* ---- an S3 prefix -------------------------------------------------------- */

/* Pages of ListObjectsV2 stop after this many: a server handing out
 * tokens forever would otherwise list forever (the library catches a
 * token that comes straight back). 100 million keys. */
#define MAX_PAGES 100000

void lister_init(struct lister *l, struct cli *c, const char *bucket,
                 const char *prefix) {
  memset(l, 0, sizeof *l);
  l->c = c;
  l->bucket = bucket;
  l->prefix = prefix;
}

void lister_free(struct lister *l) {
  free(l->token);
  l->token = NULL;
}

int lister_page(struct lister *l, unsigned max_keys, lister_fn each,
                void *ctx) {
  struct cli *c = l->c;
  size_t plen = strlen(l->prefix);
  char *url = s3_url(l->bucket, l->prefix);
  const char *shown = url ? url : l->bucket;
  int rc = 0;
  if (l->pages == MAX_PAGES) {
    rc = report_msg(shown,
                    "more than %d pages of keys: the listing would never end",
                    MAX_PAGES);
    free(url);
    return rc;
  }
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.prefix = plen ? l->prefix : NULL;
  lo.continuation_token = l->token;
  lo.max_keys = max_keys;
  struct hipobj_list_page *pg = NULL;
  if (hipobj_s3_list(c->client, l->bucket, &lo, &pg, c->err) != HIPOBJ_OK) {
    rc = report_lib(c, shown, c->err);
    free(url);
    return rc;
  }
  l->pages++;
  for (size_t i = 0; rc == 0 && i < hipobj_list_page_count(pg); i++) {
    const char *key = hipobj_list_page_key(pg, i);
    /* "dir/" markers made by consoles hold no data. */
    if (strncmp(key, l->prefix, plen) != 0 || !key[plen] ||
        ends_with_slash(key))
      continue;
    if (each(ctx, key + plen, hipobj_list_page_size(pg, i),
             hipobj_list_page_mtime(pg, i)) != 0)
      rc = report_errno(l->bucket, ENOMEM);
  }
  const char *next = hipobj_list_page_next_token(pg);
  free(l->token);
  l->token = next ? strdup(next) : NULL;
  if (next && !l->token && rc == 0)
    rc = report_errno(l->bucket, ENOMEM);
  l->done = !next;
  hipobj_list_page_free(pg);
  free(url);
  return rc;
}

static int add_entry(void *ctx, const char *rel, uint64_t size, int64_t mtime) {
  return tree_add(ctx, rel, size, mtime);
}

int tree_s3(struct cli *c, const char *bucket, const char *prefix,
            struct tree *out) {
  memset(out, 0, sizeof *out);
  struct lister l;
  lister_init(&l, c, bucket, prefix);
  int rc = 0;
  while (rc == 0 && !l.done)
    rc = lister_page(&l, 0, add_entry, out);
  lister_free(&l);
  if (rc != 0) {
    tree_free(out);
    return rc;
  }
  /* S3 lists in byte order already; other servers may not. */
  qsort(out->e, out->n, sizeof *out->e, by_rel);
  return 0;
}
