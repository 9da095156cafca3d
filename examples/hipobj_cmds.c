/* hipobj_cmds.c - the small commands of the `hipobj` tool: ls (buckets,
 * or the keys under a prefix), rm, mb, rb and stat. Each checks its
 * arguments, connects, makes its call(s) and prints either text (like
 * `aws s3`, through cli_print: a key's control characters are shown as
 * \xNN) or one JSON object per item. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_xfer.h"

/* Parses the single s3:// argument of a command. want_key: 1 = a key is
 * required, 0 = a key is not allowed, -1 = optional. */
static int one_s3_arg(const char *cmd, int argc, char **argv, int want_key,
                      struct location *loc) {
  if (argc != 1)
    return report_usage("%s takes exactly one s3:// argument", cmd);
  if (loc_parse(argv[0], loc) != 0)
    return CLI_EXIT_USAGE;
  if (loc->kind != LOC_S3) {
    loc_free(loc);
    return report_usage("%s: '%s' is not an s3:// URL", cmd, argv[0]);
  }
  if (want_key == 1 && !*loc->key) {
    loc_free(loc);
    return report_usage("%s: '%s' names no key (s3://bucket/key)", cmd,
                        argv[0]);
  }
  if (want_key == 0 && *loc->key) {
    loc_free(loc);
    return report_usage("%s: '%s' must be a bucket only (s3://bucket)", cmd,
                        argv[0]);
  }
  return 0;
}

/* ---- ls ----------------------------------------------------------------- */

/* Without --recursive, names are shown relative to the "directory" of the
 * prefix, as aws s3 ls does: `ls s3://b/dir/` prints "file", not
 * "dir/file". */
static const char *shown_name(const struct cli *c, const char *prefix,
                              size_t dirlen, const char *name) {
  if (c->recursive || dirlen == 0 || strncmp(name, prefix, dirlen) != 0)
    return name;
  return name + dirlen;
}

/* A size as ls shows it: bytes, or with --human-readable "1.5 MiB". */
static void fmt_size(const struct cli *c, uint64_t n, char *buf, size_t len) {
  if (c->human)
    fmt_bytes(n, buf, len);
  else
    snprintf(buf, len, "%" PRIu64, n);
}

struct totals {
  uint64_t objects, bytes;
};

static void print_page(const struct cli *c, const struct hipobj_list_page *pg,
                       const char *prefix, size_t dirlen, struct totals *t) {
  size_t np = hipobj_list_page_prefix_count(pg);
  for (size_t i = 0; i < np; i++) {
    const char *p = hipobj_list_page_prefix(pg, i);
    if (c->json) {
      json_begin(stdout, "ls");
      json_str(stdout, "prefix", p);
      json_end(stdout);
    } else {
      cli_print(stdout, "%30s %s\n", "PRE", shown_name(c, prefix, dirlen, p));
    }
  }
  size_t n = hipobj_list_page_count(pg);
  for (size_t i = 0; i < n; i++) {
    const char *key = hipobj_list_page_key(pg, i);
    uint64_t size = hipobj_list_page_size(pg, i);
    int64_t mtime = hipobj_list_page_mtime(pg, i);
    char when[64], sz[32];
    t->objects++;
    t->bytes += size;
    if (c->json) {
      fmt_iso_time(mtime, when, sizeof when);
      json_begin(stdout, "ls");
      json_str(stdout, "key", key);
      json_u64(stdout, "size", size);
      json_str(stdout, "etag", hipobj_list_page_etag(pg, i));
      json_str(stdout, "last_modified", when);
      json_end(stdout);
    } else {
      fmt_local_time(mtime, when, sizeof when);
      fmt_size(c, size, sz, sizeof sz);
      cli_print(stdout, "%s %10s %s\n", when, sz,
                shown_name(c, prefix, dirlen, key));
    }
  }
}

static void print_summary(const struct cli *c, const struct totals *t) {
  if (!c->summarize)
    return;
  if (c->json) {
    json_begin(stdout, "ls");
    json_str(stdout, "summary", "true");
    json_u64(stdout, "objects", t->objects);
    json_u64(stdout, "bytes", t->bytes);
    json_end(stdout);
    return;
  }
  char sz[32];
  fmt_size(c, t->bytes, sz, sizeof sz);
  printf("\nTotal Objects: %" PRIu64 "\n   Total Size: %s\n", t->objects, sz);
}

/* ls without a bucket: the account's buckets. */
static int ls_buckets(struct cli *c) {
  int rc = cli_connect(c);
  if (rc)
    return rc;
  struct hipobj_bucket_list *l = NULL;
  if (hipobj_s3_list_buckets(c->client, &l, c->err) != HIPOBJ_OK)
    return report_lib(c, "ListBuckets", c->err);
  for (size_t i = 0; i < hipobj_bucket_list_count(l); i++) {
    const char *name = hipobj_bucket_list_name(l, i);
    int64_t t = hipobj_bucket_list_ctime(l, i);
    char when[64];
    if (c->json) {
      fmt_iso_time(t, when, sizeof when);
      json_begin(stdout, "ls");
      json_str(stdout, "bucket", name);
      json_str(stdout, "created", t ? when : "");
      json_end(stdout);
    } else {
      fmt_local_time(t, when, sizeof when);
      cli_print(stdout, "%s %s\n", when, name);
    }
  }
  hipobj_bucket_list_free(l);
  return 0;
}

/* The continuation tokens a listing has followed: a server that sends one
 * again would have it list the same pages forever (a token that comes
 * straight back is caught by the library; this catches longer cycles).
 * An open-addressing set of copies, grown at half load: memory in
 * proportion to the pages listed. */
struct token_set {
  char **slot;
  size_t cap, n;
};

static uint64_t token_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* 1 when t was there already, 0 when added, -1 when out of memory. */
static int token_seen(struct token_set *ts, const char *t) {
  if (2 * (ts->n + 1) > ts->cap) {
    size_t cap = ts->cap ? 2 * ts->cap : 64;
    char **slot = calloc(cap, sizeof *slot);
    if (!slot)
      return -1;
    for (size_t i = 0; i < ts->cap; i++) {
      if (!ts->slot[i])
        continue;
      size_t j = token_hash(ts->slot[i]) & (cap - 1);
      while (slot[j])
        j = (j + 1) & (cap - 1);
      slot[j] = ts->slot[i];
    }
    free(ts->slot);
    ts->slot = slot;
    ts->cap = cap;
  }
  size_t j = token_hash(t) & (ts->cap - 1);
  for (; ts->slot[j]; j = (j + 1) & (ts->cap - 1))
    if (!strcmp(ts->slot[j], t))
      return 1;
  if (!(ts->slot[j] = strdup(t)))
    return -1;
  ts->n++;
  return 0;
}

static void token_set_free(struct token_set *ts) {
  for (size_t i = 0; i < ts->cap; i++)
    free(ts->slot[i]);
  free(ts->slot);
}

/* A token for a message: opaque and possibly long, so its two ends. */
static void short_token(const char *t, char out[48]) {
  size_t n = strlen(t);
  if (n <= 40)
    snprintf(out, 48, "%s", t);
  else
    snprintf(out, 48, "%.24s...%s", t, t + n - 12);
}

int cmd_ls(struct cli *c, int argc, char **argv) {
  if (argc == 0 || (argc == 1 && !strcmp(argv[0], "s3://"))) {
    if (c->recursive || c->summarize || c->human)
      return report_usage("--recursive, --summarize and --human-readable "
                          "list the keys of a bucket (ls s3://bucket)");
    return ls_buckets(c);
  }
  struct location loc;
  int rc = one_s3_arg("ls", argc, argv, -1, &loc);
  if (rc)
    return rc;
  rc = cli_connect(c);
  if (rc) {
    loc_free(&loc);
    return rc;
  }
  const char *slash = strrchr(loc.key, '/');
  size_t dirlen = slash ? (size_t)(slash - loc.key) + 1 : 0;

  struct hipobj_list_opts opts = HIPOBJ_LIST_OPTS_INIT;
  opts.prefix = *loc.key ? loc.key : NULL;
  opts.delimiter = c->recursive ? NULL : "/";
  char *token = NULL;
  struct token_set seen = {NULL, 0, 0};
  struct totals totals = {0, 0};
  for (size_t page = 1;; page++) {
    struct hipobj_list_page *pg = NULL;
    opts.continuation_token = token;
    if (hipobj_s3_list(c->client, loc.bucket, &opts, &pg, c->err) !=
        HIPOBJ_OK) {
      rc = report_lib(c, loc.arg, c->err);
      break;
    }
    print_page(c, pg, loc.key, dirlen, &totals);
    const char *next = hipobj_list_page_next_token(pg);
    free(token);
    token = next ? strdup(next) : NULL;
    hipobj_list_page_free(pg);
    int again = token ? token_seen(&seen, token) : 0;
    if ((next && !token) || again < 0) {
      rc = report_errno(loc.arg, ENOMEM);
      break;
    }
    if (again) {
      char shown[48];
      short_token(token, shown);
      rc = report_msg(loc.arg,
                      "the server sent continuation token '%s' again after "
                      "page %zu: the listing would never end",
                      shown, page);
      break;
    }
    /* Stop listing a huge bucket once nobody reads the output. */
    if (fflush(stdout) != 0) {
      rc = report_stdout_error(errno);
      break;
    }
    if (!token)
      break;
  }
  if (rc == 0)
    print_summary(c, &totals);
  free(token);
  token_set_free(&seen);
  loc_free(&loc);
  return rc;
}

/* ---- rm, mb, rb --------------------------------------------------------- */

static int simple_done(const struct cli *c, const char *op, const char *verb,
                       const char *target, double start) {
  if (c->json) {
    json_begin(stdout, op);
    json_str(stdout, "target", target);
    json_double(stdout, "seconds", now_seconds() - start, 3);
    json_end(stdout);
  } else if (!c->quiet) {
    cli_print(stdout, "%s: %s\n", verb, target);
  }
  return 0;
}

int cmd_rm(struct cli *c, int argc, char **argv) {
  struct location loc;
  int rc = one_s3_arg("rm", argc, argv, c->recursive ? -1 : 1, &loc);
  if (rc)
    return rc;
  if ((rc = cli_connect(c)) != 0) {
    loc_free(&loc);
    return rc;
  }
  if (c->recursive) {
    rc = rm_tree(c, &loc);
    loc_free(&loc);
    return rc;
  }
  double start = now_seconds();
  if (c->dryrun) {
    struct cp_stats s = {.start = start};
    print_result(c, "rm", "delete", loc.arg, NULL, &s, 0);
    loc_free(&loc);
    return 0;
  }
  if (hipobj_s3_delete(c->client, loc.bucket, loc.key, c->err) != HIPOBJ_OK)
    rc = report_lib(c, loc.arg, c->err);
  else
    rc = simple_done(c, "rm", "delete", loc.arg, start);
  loc_free(&loc);
  return rc;
}

static int bucket_cmd(struct cli *c, int argc, char **argv, int create) {
  const char *name = create ? "mb" : "rb";
  struct location loc;
  int rc = one_s3_arg(name, argc, argv, 0, &loc);
  if (rc)
    return rc;
  if ((rc = cli_connect(c)) != 0) {
    loc_free(&loc);
    return rc;
  }
  double start = now_seconds();
  int st = create ? hipobj_s3_create_bucket(c->client, loc.bucket, c->err)
                  : hipobj_s3_delete_bucket(c->client, loc.bucket, c->err);
  if (st != HIPOBJ_OK)
    rc = report_lib(c, loc.arg, c->err);
  else
    rc = simple_done(c, name, create ? "make_bucket" : "remove_bucket", loc.arg,
                     start);
  loc_free(&loc);
  return rc;
}

int cmd_mb(struct cli *c, int argc, char **argv) {
  return bucket_cmd(c, argc, argv, 1);
}

int cmd_rb(struct cli *c, int argc, char **argv) {
  return bucket_cmd(c, argc, argv, 0);
}

/* ---- stat --------------------------------------------------------------- */

int cmd_stat(struct cli *c, int argc, char **argv) {
  struct location loc;
  int rc = one_s3_arg("stat", argc, argv, 1, &loc);
  if (rc)
    return rc;
  if ((rc = cli_connect(c)) != 0) {
    loc_free(&loc);
    return rc;
  }
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  if ((rc = cli_head(c, &loc, &info)) != 0) {
    loc_free(&loc);
    return rc;
  }
  char when[64];
  if (c->json) {
    fmt_iso_time(info.last_modified, when, sizeof when);
    json_begin(stdout, "stat");
    json_str(stdout, "target", loc.arg);
    json_u64(stdout, "size", info.size);
    json_str(stdout, "etag", info.etag);
    json_str(stdout, "last_modified", info.last_modified ? when : "");
    json_str(stdout, "content_type", info.content_type);
    json_end(stdout);
  } else {
    if (info.last_modified)
      fmt_local_time(info.last_modified, when, sizeof when);
    else
      snprintf(when, sizeof when, "%s", "unknown");
    /* One cli_print per line: it escapes every newline but a last. */
    cli_print(stdout, "Name:          %s\n", loc.arg);
    cli_print(stdout, "Size:          %" PRIu64 "\n", info.size);
    cli_print(stdout, "ETag:          %s\n", info.etag);
    cli_print(stdout, "Last modified: %s\n", when);
    cli_print(stdout, "Content type:  %s\n",
              *info.content_type ? info.content_type : "-");
  }
  loc_free(&loc);
  return 0;
}
