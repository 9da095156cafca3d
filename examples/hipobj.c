/* hipobj.c - the `hipobj` command-line tool (like `aws s3`): main, option
 * parsing (options anywhere on the line, each valid for the commands it
 * names), "did you mean" for mistyped options, and command dispatch. The
 * commands and their help live in the other hipobj_*.c files; the tool
 * uses only the public API in hipobj.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj_bench.h"
#include "hipobj_cli.h"

enum opt_id {
  OPT_ENDPOINT,
  OPT_REGION,
  OPT_PROFILE,
  OPT_NO_SIGN,
  OPT_PART_SIZE,
  OPT_CONCURRENCY,
  OPT_STAGING_POOL,
  OPT_IO_THREADS,
  OPT_RDMA,
  OPT_CONTENT_TYPE,
  OPT_KEEP_FAILED,
  OPT_NO_VERIFY,
  OPT_UNSIGNED,
  OPT_INTEGRITY,
  OPT_CA_BUNDLE,
  OPT_RECURSIVE,
  OPT_EXCLUDE,
  OPT_INCLUDE,
  OPT_DRYRUN,
  OPT_DELETE,
  OPT_SIZE_ONLY,
  OPT_HUMAN,
  OPT_SUMMARIZE,
  OPT_JOBS,
  OPT_RANGE,
  OPT_EXPIRES_IN,
  OPT_GPU,
  OPT_JSON,
  OPT_QUIET,
  OPT_DEBUG,
  OPT_HELP,
  OPT_VERSION,
};

/* The commands an option is for; ALL: every command. */
#define C(x) (1u << (x))
#define ALL 0u
#define XFER (C(CMD_CP) | C(CMD_SYNC) | C(CMD_MV) | C(CMD_BENCH))
#define TREE (C(CMD_CP) | C(CMD_SYNC) | C(CMD_MV) | C(CMD_RM))

static const struct option_def {
  const char *name; /* long name without "--" */
  char short_name;  /* 0: none */
  int has_arg;
  enum opt_id id;
  unsigned cmds;
} options[] = {
    {"endpoint-url", 0, 1, OPT_ENDPOINT, ALL},
    {"region", 0, 1, OPT_REGION, ALL},
    {"profile", 0, 1, OPT_PROFILE, ALL},
    {"no-sign-request", 0, 0, OPT_NO_SIGN, ALL},
    {"part-size", 0, 1, OPT_PART_SIZE, XFER},
    {"concurrency", 0, 1, OPT_CONCURRENCY, XFER},
    {"staging-pool", 0, 1, OPT_STAGING_POOL, XFER},
    {"io-threads", 0, 1, OPT_IO_THREADS, ALL},
    {"rdma", 0, 1, OPT_RDMA, XFER},
    {"content-type", 0, 1, OPT_CONTENT_TYPE, XFER},
    {"keep-failed-upload", 0, 0, OPT_KEEP_FAILED, C(CMD_CP) | C(CMD_MV)},
    {"no-verify-ssl", 0, 0, OPT_NO_VERIFY, ALL},
    {"unsigned-payload", 0, 0, OPT_UNSIGNED, XFER},
    {"integrity", 0, 1, OPT_INTEGRITY, XFER},
    {"ca-bundle", 0, 1, OPT_CA_BUNDLE, ALL},
    {"recursive", 'r', 0, OPT_RECURSIVE,
     C(CMD_CP) | C(CMD_MV) | C(CMD_RM) | C(CMD_LS)},
    {"exclude", 0, 1, OPT_EXCLUDE, TREE},
    {"include", 0, 1, OPT_INCLUDE, TREE},
    {"dryrun", 0, 0, OPT_DRYRUN, TREE},
    {"delete", 0, 0, OPT_DELETE, C(CMD_SYNC)},
    {"size-only", 0, 0, OPT_SIZE_ONLY, C(CMD_SYNC)},
    {"human-readable", 0, 0, OPT_HUMAN, C(CMD_LS)},
    {"summarize", 0, 0, OPT_SUMMARIZE, C(CMD_LS)},
    {"jobs", 0, 1, OPT_JOBS, TREE},
    {"range", 0, 1, OPT_RANGE, C(CMD_CP)},
    {"expires-in", 0, 1, OPT_EXPIRES_IN, C(CMD_PRESIGN)},
    {"gpu", 0, 1, OPT_GPU, C(CMD_CP)},
    {"json", 0, 0, OPT_JSON, ALL},
    {"quiet", 'q', 0, OPT_QUIET, ALL},
    {"debug", 0, 0, OPT_DEBUG, ALL},
    {"help", 'h', 0, OPT_HELP, ALL},
    {"version", 0, 0, OPT_VERSION, ALL},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

/* A whole number in lo..hi, or a usage error naming the option. */
static int parse_uint(const char *opt, const char *value, unsigned long lo,
                      unsigned long hi, unsigned *out) {
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(value, &end, 10);
  if (errno || end == value || *end || v < lo || v > hi || value[0] == '-')
    return report_usage("--%s: '%s' is not a number in %lu..%lu", opt, value,
                        lo, hi);
  *out = (unsigned)v;
  return 0;
}

/* --range: "A-B", "A-" or the same after "bytes=". */
static int parse_range(struct cli *c, const char *value) {
  const char *v = strncmp(value, "bytes=", 6) ? value : value + 6;
  uint64_t a = 0, b = 0;
  int n = -1;
  if (sscanf(v, "%" SCNu64 "-%n", &a, &n) == 1 && n > 0 && v[0] != '-' &&
      v[n] == '\0') {
    c->range_len = 0; /* to the end */
  } else if (n = -1, sscanf(v, "%" SCNu64 "-%" SCNu64 "%n", &a, &b, &n) == 2 &&
                         n > 0 && v[n] == '\0' && v[0] != '-' && a <= b &&
                         !strchr(v, '+') && !strchr(v, ' ')) {
    c->range_len = b - a + 1;
  } else {
    return report_usage("--range: '%s' is not A-B or A- (first and last "
                        "byte, from 0)",
                        value);
  }
  c->has_range = 1;
  c->range_off = a;
  return 0;
}

static int add_filter(struct cli *c, const char *pattern, int include) {
  struct filter *f =
      realloc(c->filters, (c->n_filters + 1) * sizeof *c->filters);
  if (!f)
    return report_errno("--exclude", ENOMEM);
  c->filters = f;
  c->filters[c->n_filters++] = (struct filter){pattern, include};
  return 0;
}

/* Applies one option; returns 0 or an exit status after reporting. */
static int apply_option(struct cli *c, const struct option_def *o,
                        const char *value, int *help, int *version) {
  switch (o->id) {
  case OPT_ENDPOINT:
    c->endpoint_url = value;
    break;
  case OPT_REGION:
    c->region = value;
    break;
  case OPT_PROFILE:
    c->profile = value;
    break;
  case OPT_NO_SIGN:
    c->no_sign = 1;
    break;
  case OPT_PART_SIZE:
  case OPT_STAGING_POOL: {
    uint64_t v = 0;
    if (hipobj_parse_size(value, &v) != HIPOBJ_OK || v == 0 || v > SIZE_MAX)
      return report_usage("--%s: '%s' is not a size (e.g. 8MiB)", o->name,
                          value);
    if (o->id == OPT_PART_SIZE)
      c->part_size = v;
    else
      c->staging_pool = (size_t)v;
    break;
  }
  case OPT_CONCURRENCY:
    return parse_uint(o->name, value, 1, 1024, &c->concurrency);
  case OPT_IO_THREADS:
    return parse_uint(o->name, value, 1, 64, &c->io_threads);
  case OPT_JOBS:
    return parse_uint(o->name, value, 1, CLI_MAX_JOBS, &c->jobs);
  case OPT_EXPIRES_IN:
    return parse_uint(o->name, value, 1, 604800, &c->expires_in);
  case OPT_CONTENT_TYPE:
    c->content_type = value;
    break;
  case OPT_RDMA:
    if (!strcmp(value, "auto"))
      c->rdma = HIPOBJ_RDMA_AUTO;
    else if (!strcmp(value, "off"))
      c->rdma = HIPOBJ_RDMA_OFF;
    else if (!strcmp(value, "require"))
      c->rdma = HIPOBJ_RDMA_REQUIRE;
    else
      return report_usage("--rdma: '%s' is not auto, off or require", value);
    break;
  case OPT_KEEP_FAILED:
    c->keep_failed_upload = 1;
    break;
  case OPT_NO_VERIFY:
    c->no_verify_ssl = 1;
    break;
  case OPT_UNSIGNED:
    c->integrity = HIPOBJ_INTEGRITY_NONE;
    break;
  case OPT_INTEGRITY:
    if (!strcmp(value, "auto"))
      c->integrity = HIPOBJ_INTEGRITY_AUTO;
    else if (!strcmp(value, "sha256"))
      c->integrity = HIPOBJ_INTEGRITY_SHA256;
    else if (!strcmp(value, "none"))
      c->integrity = HIPOBJ_INTEGRITY_NONE;
    else
      return report_usage("--integrity: '%s' is not auto, sha256 or none",
                          value);
    break;
  case OPT_CA_BUNDLE:
    c->ca_bundle = value;
    break;
  case OPT_RECURSIVE:
    c->recursive = 1;
    break;
  case OPT_EXCLUDE:
  case OPT_INCLUDE:
    return add_filter(c, value, o->id == OPT_INCLUDE);
  case OPT_DRYRUN:
    c->dryrun = 1;
    break;
  case OPT_DELETE:
    c->delete_extra = 1;
    break;
  case OPT_SIZE_ONLY:
    c->size_only = 1;
    break;
  case OPT_HUMAN:
    c->human = 1;
    break;
  case OPT_SUMMARIZE:
    c->summarize = 1;
    break;
  case OPT_RANGE:
    return parse_range(c, value);
  case OPT_GPU:
    return cli_gpu_parse(c, value);
  case OPT_JSON:
    c->json = 1;
    break;
  case OPT_QUIET:
    c->quiet = 1;
    break;
  case OPT_DEBUG:
    c->debug = 1;
    break;
  case OPT_HELP:
    *help = 1;
    break;
  case OPT_VERSION:
    *version = 1;
    break;
  }
  return 0;
}

static int unknown_option(const char *shown, const char *name, size_t len) {
  const char *names[N_OPTIONS + 1];
  char word[128];
  snprintf(word, sizeof word, "%.*s", (int)len, name);
  for (size_t k = 0; k < N_OPTIONS; k++)
    names[k] = options[k].name;
  names[N_OPTIONS] = NULL;
  const char *near = len ? closest_word(word, names) : NULL;
  if (near)
    return report_usage("unknown option '%s'; did you mean '--%s'?", shown,
                        near);
  return report_usage("unknown option '%s'", shown);
}

/* Splits argv into options (anywhere) and positional arguments, which are
 * collected into pos[]; seen[] marks the options given. "--" ends the
 * options; "-" alone is positional. */
static int parse_args(struct cli *c, int argc, char **argv, char **pos,
                      int *npos, int *help, int *version,
                      const struct option_def **seen, int *nseen) {
  int only_pos = 0;
  *npos = 0;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (only_pos || a[0] != '-' || a[1] == '\0') {
      pos[(*npos)++] = a;
      /* bench parses its own options: the rest of the line is its own. */
      if (*npos == 1 && !only_pos && !strcmp(a, "bench")) {
        while (++i < argc)
          pos[(*npos)++] = argv[i];
        return 0;
      }
      continue;
    }
    if (!strcmp(a, "--")) {
      only_pos = 1;
      continue;
    }
    const struct option_def *o = NULL;
    const char *value = NULL;
    if (a[1] == '-') {
      const char *name = a + 2;
      const char *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      for (size_t k = 0; k < N_OPTIONS && !o; k++)
        if (strlen(options[k].name) == len &&
            !strncmp(options[k].name, name, len))
          o = &options[k];
      if (!o) {
        char shown[160];
        snprintf(shown, sizeof shown, "%.*s", (int)len + 2, a);
        return unknown_option(shown, name, len);
      }
      if (eq && !o->has_arg)
        return report_usage("option '--%s' takes no value", o->name);
      value = eq ? eq + 1 : NULL;
    } else {
      for (size_t k = 0; k < N_OPTIONS && !o && a[2] == '\0'; k++)
        if (options[k].short_name == a[1])
          o = &options[k];
      if (!o)
        return unknown_option(a, "", 0);
    }
    if (o->has_arg && !value) {
      if (i + 1 >= argc)
        return report_usage("option '--%s' needs a value", o->name);
      value = argv[++i];
    }
    int rc = apply_option(c, o, value, help, version);
    if (rc)
      return rc;
    seen[(*nseen)++] = o;
  }
  return 0;
}

/* Names the commands an option is for: "sync" or "cp, mv, rm". */
static void commands_of(unsigned mask, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  for (int id = 0; id < CMD_COUNT && at < cap; id++) {
    const struct cli_command *cmd = cli_command_by_id((enum cli_cmd)id);
    if ((mask & C(id)) && cmd)
      at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? ", " : "",
                             cmd->name);
  }
}

int cli_connect(struct cli *c) {
  if (c->client)
    return 0;
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = c->endpoint_url;
  cfg.region = c->region;
  cfg.profile = c->profile;
  cfg.anonymous = c->no_sign;
  cfg.tls_skip_verify = c->no_verify_ssl;
  cfg.integrity = c->integrity;
  cfg.ca_bundle = c->ca_bundle;
  cfg.part_size = c->part_size;
  cfg.concurrency = c->concurrency;
  cfg.staging_pool_bytes = c->staging_pool;
  cfg.io_threads = c->io_threads;
  cfg.rdma_policy = c->rdma;
  /* More parallel parts (or files) than connections would only queue. */
  unsigned want = c->concurrency > 16 ? c->concurrency : 16;
  if (c->recursive || c->cmd == CMD_SYNC)
    want = (c->jobs ? c->jobs : CLI_DEFAULT_JOBS) * 4 > want
               ? (c->jobs ? c->jobs : CLI_DEFAULT_JOBS) * 4
               : want;
  if (want > 16)
    cfg.max_connections = want;
  cfg.log_level = c->debug ? HIPOBJ_LOG_DEBUG : HIPOBJ_LOG_DEFAULT;
  cfg.log_fn = progress_log_line; /* keeps log lines off the progress line */
  if (hipobj_client_create(&cfg, &c->client, c->err) != HIPOBJ_OK) {
    c->client = NULL;
    return report_lib(c, NULL, c->err);
  }
  return 0;
}

void cli_explain(struct cli *c, const char *bucket, const char *key,
                 struct hipobj_error *err) {
  int hs = hipobj_error_http_status(err);
  if (*hipobj_error_s3_code(err) || (hs != 400 && hs != 403 && hs != 404))
    return;
  unsigned char byte;
  struct hipobj_mem mem = hipobj_mem_host(&byte, 1);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.length = 1;
  struct hipobj_error *probe = NULL;
  if (hipobj_error_create(&probe) != HIPOBJ_OK)
    return;
  int st = hipobj_s3_get(c->client, bucket, key, &mem, &go, NULL, probe);
  /* Only a coded answer improves on the HEAD's error: then the same GET
   * once more, into err (errors cannot be copied through the API). */
  if (st != HIPOBJ_OK && *hipobj_error_s3_code(probe))
    hipobj_s3_get(c->client, bucket, key, &mem, &go, NULL, err);
  hipobj_error_free(probe);
}

int cli_head(struct cli *c, const struct location *loc,
             struct hipobj_object_info *info) {
  if (hipobj_s3_head(c->client, loc->bucket, loc->key, info, c->err) ==
      HIPOBJ_OK)
    return 0;
  cli_explain(c, loc->bucket, loc->key, c->err);
  return report_lib(c, loc->arg, c->err);
}

static int run(struct cli *c, int argc, char **argv) {
  char **pos = calloc((size_t)argc + 1, sizeof *pos);
  const struct option_def **seen = calloc((size_t)argc + 1, sizeof *seen);
  if (!pos || !seen) {
    free(pos);
    free(seen);
    fprintf(stderr, "hipobj: %s\n", strerror(ENOMEM));
    return CLI_EXIT_FAIL;
  }
  /* --json decides how even the first usage error is reported. */
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--json"))
      c->json = 1;
  report_setup(c->json, "hipobj");
  int npos = 0, nseen = 0, help = 0, version = 0;
  int rc = parse_args(c, argc, argv, pos, &npos, &help, &version, seen, &nseen);
  const struct cli_command *cmd = NULL;
  char hint[64] = "";
  if (rc == 0 && npos > 0 &&
      !(cmd = cli_find_command(pos[0], hint, sizeof hint)))
    rc = report_usage("unknown command '%s'%s", pos[0], hint);
  if (rc)
    goto out;
  if (version) {
    printf("hipobj %d.%d.%d (libhipobj %s)\n", HIPOBJ_VERSION_MAJOR,
           HIPOBJ_VERSION_MINOR, HIPOBJ_VERSION_PATCH, hipobj_version());
    goto out;
  }
  if (help || !cmd) {
    if (cmd && cmd->help)
      print_command_help(stdout, cmd);
    else if (help)
      print_usage(stdout);
    else
      rc = report_usage("no command given");
    goto out;
  }
  c->cmd = cmd->id;
  report_setup(c->json, cmd->name);
  for (int i = 0; i < nseen && cmd->id != CMD_COMPLETE; i++) {
    if (seen[i]->cmds && !(seen[i]->cmds & C(cmd->id))) {
      char names[128];
      commands_of(seen[i]->cmds & ~C(CMD_BENCH), names, sizeof names);
      rc = report_usage("--%s is not an option of %s (it is one of: %s)",
                        seen[i]->name, cmd->name, names);
      goto out;
    }
  }
  if (c->recursive && c->has_range) {
    rc = report_usage("--range reads part of one object, not of a tree");
    goto out;
  }
  if (c->use_gpu && c->recursive) {
    rc = report_usage("--gpu copies one object at a time (no --recursive)");
    goto out;
  }
  if (c->n_filters && !c->recursive && cmd->id != CMD_SYNC) {
    rc = report_usage("--exclude and --include choose files of a tree: "
                      "they need --recursive");
    goto out;
  }
  rc = cmd->run(c, npos - 1, pos + 1);
out:
  free(pos);
  free(seen);
  return rc;
}

int main(int argc, char **argv) {
  struct cli c;
  memset(&c, 0, sizeof c);
  c.stderr_tty = isatty(STDERR_FILENO);

  int st = hipobj_global_init();
  if (st != HIPOBJ_OK) {
    fprintf(stderr, "hipobj: cannot initialise the library: %s\n",
            hipobj_strerror(st));
    return CLI_EXIT_FAIL;
  }
  st = hipobj_error_create(&c.err);
  if (st != HIPOBJ_OK) {
    fprintf(stderr, "hipobj: %s\n", hipobj_strerror(st));
    hipobj_global_cleanup();
    return CLI_EXIT_FAIL;
  }
  signals_install();
  umask_read();
  xfers_init();

  int rc = run(&c, argc, argv);

  hipobj_client_free(c.client);
  xfers_cleanup();
  hipobj_error_free(c.err);
  free(c.filters);
  hipobj_global_cleanup();

  /* Output that stdio still buffers can fail only now (full disk, closed
   * pipe); a run that otherwise succeeded must not exit 0 then. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    int e = stdout_first_errno() ? stdout_first_errno() : errno;
    if (rc == 0)
      rc = report_stdout_error(e ? e : EIO);
  }
  return rc;
}
