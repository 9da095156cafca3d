/* hipobj_s3cmds.c - the commands of the `hipobj` tool that only talk to
 * S3: presign (a URL that curl can fetch without credentials), mpu ls /
 * mpu abort (multipart uploads left behind, whose parts cost storage
 * until aborted), and __complete, which the bash completion script calls
 * to complete s3:// words from the server's buckets and keys. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_xfer.h"

/* ---- presign ------------------------------------------------------------ */

#define DEFAULT_EXPIRES 3600

int cmd_presign(struct cli *c, int argc, char **argv) {
  if (argc != 1)
    return report_usage("presign takes one argument: s3://bucket/key");
  struct location loc;
  if (loc_parse(argv[0], &loc) != 0)
    return CLI_EXIT_USAGE;
  int rc = 0;
  if (loc.kind != LOC_S3 || !*loc.key || ends_with_slash(loc.key))
    rc = report_usage("presign: '%s' is not an object (s3://bucket/key)",
                      argv[0]);
  else if (c->no_sign)
    rc = report_usage("presign signs the URL: --no-sign-request leaves "
                      "nothing to sign with");
  if (rc == 0)
    rc = cli_connect(c);
  char *url = NULL;
  unsigned expires = c->expires_in ? c->expires_in : DEFAULT_EXPIRES;
  if (rc == 0 && hipobj_s3_presign(c->client, "GET", loc.bucket, loc.key,
                                   expires, &url, c->err) != HIPOBJ_OK)
    rc = report_lib(c, loc.arg, c->err);
  if (rc == 0) {
    if (c->json) {
      json_begin(stdout, "presign");
      json_str(stdout, "target", loc.arg);
      json_str(stdout, "url", url);
      json_u64(stdout, "expires_in", expires);
      json_end(stdout);
    } else {
      /* The URL is printed exactly (it is ASCII: SigV4 percent-encodes
       * everything else). */
      printf("%s\n", url);
    }
  }
  hipobj_free(url);
  loc_free(&loc);
  return rc;
}

/* ---- mpu ls, mpu abort ----------------------------------------------------
 */

static int mpu_ls(struct cli *c, const struct location *loc) {
  struct hipobj_upload_list_opts o = HIPOBJ_UPLOAD_LIST_OPTS_INIT;
  o.prefix = *loc->key ? loc->key : NULL;
  char km[1100] = "", um[HIPOBJ_UPLOAD_ID_MAX + 8] = "";
  for (unsigned page = 0; page < 100000; page++) {
    struct hipobj_upload_page *pg = NULL;
    o.key_marker = km[0] ? km : NULL;
    o.upload_id_marker = um[0] ? um : NULL;
    if (hipobj_s3_list_uploads(c->client, loc->bucket, &o, &pg, c->err) !=
        HIPOBJ_OK)
      return report_lib(c, loc->arg, c->err);
    for (size_t i = 0; i < hipobj_upload_page_count(pg); i++) {
      const char *key = hipobj_upload_page_key(pg, i);
      const char *id = hipobj_upload_page_upload_id(pg, i);
      int64_t t = hipobj_upload_page_initiated(pg, i);
      char when[64];
      if (c->json) {
        fmt_iso_time(t, when, sizeof when);
        json_begin(stdout, "mpu");
        json_str(stdout, "key", key);
        json_str(stdout, "upload_id", id);
        json_str(stdout, "initiated", t ? when : "");
        json_end(stdout);
      } else {
        fmt_local_time(t, when, sizeof when);
        cli_print(stdout, "%s %s %s\n", when, id, key);
      }
    }
    const char *nk = hipobj_upload_page_next_key_marker(pg);
    const char *nu = hipobj_upload_page_next_upload_id_marker(pg);
    int more = nk != NULL;
    if (more) {
      snprintf(km, sizeof km, "%s", nk);
      snprintf(um, sizeof um, "%s", nu ? nu : "");
    }
    hipobj_upload_page_free(pg);
    if (!more)
      return 0;
  }
  return report_msg(loc->arg, "too many pages of uploads: the listing would "
                              "never end");
}

static int mpu_abort(struct cli *c, const struct location *loc,
                     const char *id) {
  struct hipobj_mpu *m = NULL;
  double start = now_seconds();
  if (hipobj_mpu_open(c->client, loc->bucket, loc->key, id, &m, c->err) !=
          HIPOBJ_OK ||
      hipobj_mpu_abort(m, c->err) != HIPOBJ_OK) {
    hipobj_mpu_free(m);
    return report_lib(c, loc->arg, c->err);
  }
  hipobj_mpu_free(m);
  if (c->json) {
    json_begin(stdout, "mpu");
    json_str(stdout, "action", "abort");
    json_str(stdout, "target", loc->arg);
    json_str(stdout, "upload_id", id);
    json_double(stdout, "seconds", now_seconds() - start, 3);
    json_end(stdout);
  } else if (!c->quiet) {
    cli_print(stdout, "abort: %s %s\n", loc->arg, id);
  }
  return 0;
}

int cmd_mpu(struct cli *c, int argc, char **argv) {
  if (argc < 1)
    return report_usage("mpu needs a subcommand: ls or abort");
  int is_ls = !strcmp(argv[0], "ls"), is_abort = !strcmp(argv[0], "abort");
  if (!is_ls && !is_abort) {
    static const char *const subs[] = {"ls", "abort", NULL};
    const char *near = closest_word(argv[0], subs);
    return report_usage("mpu: unknown subcommand '%s'%s%s%s", argv[0],
                        near ? "; did you mean '" : "", near ? near : "",
                        near ? "'?" : "");
  }
  if ((is_ls && argc != 2) || (is_abort && argc != 3))
    return report_usage(is_ls ? "mpu ls takes one argument: "
                                "s3://bucket[/prefix]"
                              : "mpu abort takes two arguments: "
                                "s3://bucket/key UPLOAD_ID");
  struct location loc;
  if (loc_parse(argv[1], &loc) != 0)
    return CLI_EXIT_USAGE;
  int rc = 0;
  if (loc.kind != LOC_S3)
    rc = report_usage("mpu: '%s' is not an s3:// URL", argv[1]);
  else if (is_abort && !*loc.key)
    rc =
        report_usage("mpu abort: '%s' names no key (s3://bucket/key)", argv[1]);
  if (rc == 0)
    rc = cli_connect(c);
  if (rc == 0)
    rc = is_ls ? mpu_ls(c, &loc) : mpu_abort(c, &loc, argv[2]);
  loc_free(&loc);
  return rc;
}

/* ---- __complete ------------------------------------------------------------
 */

/* Prints the s3:// completions of word, one per line: buckets for
 * "s3://", else the keys and "directories" under the prefix typed. No
 * error output: a completion that fails offers nothing. */
int cmd_complete(struct cli *c, int argc, char **argv) {
  if (argc != 1 || strncmp(argv[0], "s3://", 5) != 0)
    return 0;
  const char *w = argv[0] + 5;
  c->quiet = 1;
  report_setup(0, "__complete");
  FILE *devnull = freopen("/dev/null", "w", stderr);
  (void)devnull;
  if (cli_connect(c) != 0)
    return CLI_EXIT_FAIL;
  const char *slash = strchr(w, '/');
  if (!slash) {
    struct hipobj_bucket_list *l = NULL;
    if (hipobj_s3_list_buckets(c->client, &l, c->err) != HIPOBJ_OK)
      return CLI_EXIT_FAIL;
    for (size_t i = 0; i < hipobj_bucket_list_count(l); i++) {
      const char *b = hipobj_bucket_list_name(l, i);
      if (!strncmp(b, w, strlen(w)))
        printf("s3://%s/\n", b);
    }
    hipobj_bucket_list_free(l);
    return 0;
  }
  char *bucket = strndup(w, (size_t)(slash - w));
  if (!bucket)
    return CLI_EXIT_FAIL;
  struct hipobj_list_opts lo = HIPOBJ_LIST_OPTS_INIT;
  lo.prefix = slash[1] ? slash + 1 : NULL;
  lo.delimiter = "/";
  lo.max_keys = 1000; /* one page is enough to offer */
  struct hipobj_list_page *pg = NULL;
  if (hipobj_s3_list(c->client, bucket, &lo, &pg, c->err) == HIPOBJ_OK) {
    for (size_t i = 0; i < hipobj_list_page_prefix_count(pg); i++)
      printf("s3://%s/%s\n", bucket, hipobj_list_page_prefix(pg, i));
    for (size_t i = 0; i < hipobj_list_page_count(pg); i++)
      printf("s3://%s/%s\n", bucket, hipobj_list_page_key(pg, i));
  }
  hipobj_list_page_free(pg);
  free(bucket);
  return 0;
}
