/* hipobj.c - the `hipobj` command-line tool (like `aws s3` / `mc`): main,
 * option parsing and command dispatch. The commands live in hipobj_cp.c and
 * hipobj_cmds.c; the tool uses only the public API in hipobj.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hipobj_bench.h"
#include "hipobj_cli.h"

static const char usage_text[] =
    "usage: hipobj [OPTIONS] COMMAND ARGS...\n"
    "\n"
    "Commands:\n"
    "  cp SRC DST            copy: SRC and DST are s3://bucket/key, a local\n"
    "                        path or - (stdin/stdout); one must be s3://.\n"
    "                        s3://bucket/ (key ending in /) as DST takes the\n"
    "                        key from SRC's file name.\n"
    "  ls s3://bucket[/prefix]\n"
    "                        list objects and common prefixes (PRE)\n"
    "  rm s3://bucket/key    delete an object\n"
    "  mb s3://bucket        make a bucket\n"
    "  rb s3://bucket        remove an (empty) bucket\n"
    "  stat s3://bucket/key  size, ETag, last modified and content type\n"
    "  info                  GPU platforms (runtime found or why not, "
    "devices,\n"
    "                        PCIe bus ids, dma-buf export) and RDMA support\n"
    "  bench [OPTIONS]       benchmark the library against the endpoint;\n"
    "                        its options follow it (hipobj bench --help)\n"
    "\n"
    "Options (anywhere on the line; --opt=VALUE also works):\n"
    "  --endpoint-url URL    S3 endpoint, e.g. http://127.0.0.1:9000\n"
    "  --region R            signing region\n"
    "  --profile P           profile in ~/.aws/credentials and ~/.aws/config\n"
    "  --part-size SIZE      multipart part / download chunk size "
    "(\"8MiB\")\n"
    "  --concurrency N       parallel parts per transfer\n"
    "  --staging-pool SIZE   host memory for staging files and GPU memory\n"
    "                        (default: the library's)\n"
    "  --io-threads N        threads moving HTTP bytes (default: half the\n"
    "                        CPUs, 1 to 8)\n"
    "  --rdma MODE           auto (default: RDMA when possible), off, require\n"
    "  --content-type T      Content-Type of uploaded objects\n"
    "  --keep-failed-upload  cp: a failed or interrupted multipart upload is\n"
    "                        kept, not aborted, and its id printed\n"
    "  --integrity MODE      how uploads are checked: auto (default: CRC32C\n"
    "                        part checksums where the server checks them,\n"
    "                        else signed SHA-256), sha256 (always sign the\n"
    "                        body's SHA-256), none (UNSIGNED-PAYLOAD: only\n"
    "                        TCP/TLS protect the body)\n"
    "  --unsigned-payload    the same as --integrity none\n"
    "  --no-verify-ssl       do not verify TLS certificates\n"
    "  --ca-bundle FILE      CA certificates to verify TLS with\n"
    "  -r, --recursive       ls: list every key under the prefix\n"
    "  --gpu [cuda:|hip:]N   cp: move the data through the memory of GPU N\n"
    "                        (download into GPU memory, then to the file;\n"
    "                        upload from the file staged into GPU memory)\n"
    "  --json                one JSON object per operation on stdout (on\n"
    "                        stderr when stdout carries object data)\n"
    "  -q, --quiet           no progress display, no summary lines\n"
    "  --debug               log the library's requests (level debug)\n"
    "  -h, --help            this text\n"
    "  --version             versions of the tool and the library\n"
    "\n"
    "Credentials, region and endpoint otherwise come from the environment\n"
    "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, "
    "AWS_REGION,\n"
    "AWS_ENDPOINT_URL, AWS_PROFILE) and the AWS config files.\n"
    "Text output shows control characters and bytes that are not UTF-8 as\n"
    "\\xNN (--json for the exact names).\n"
    "Exit status: 0 success, 1 failure, 2 bad usage, 130 (SIGINT) or 143\n"
    "(SIGTERM) when interrupted: cp then cancels the transfer, aborts a\n"
    "multipart upload (see --keep-failed-upload) and removes partial files.\n";

enum opt_id {
  OPT_ENDPOINT,
  OPT_REGION,
  OPT_PROFILE,
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
  OPT_GPU,
  OPT_JSON,
  OPT_QUIET,
  OPT_DEBUG,
  OPT_HELP,
  OPT_VERSION,
};

static const struct option_def {
  const char *name; /* long name without "--" */
  char short_name;  /* 0: none */
  int has_arg;
  enum opt_id id;
} options[] = {
    {"endpoint-url", 0, 1, OPT_ENDPOINT},
    {"region", 0, 1, OPT_REGION},
    {"profile", 0, 1, OPT_PROFILE},
    {"part-size", 0, 1, OPT_PART_SIZE},
    {"concurrency", 0, 1, OPT_CONCURRENCY},
    {"staging-pool", 0, 1, OPT_STAGING_POOL},
    {"io-threads", 0, 1, OPT_IO_THREADS},
    {"rdma", 0, 1, OPT_RDMA},
    {"content-type", 0, 1, OPT_CONTENT_TYPE},
    {"keep-failed-upload", 0, 0, OPT_KEEP_FAILED},
    {"no-verify-ssl", 0, 0, OPT_NO_VERIFY},
    {"unsigned-payload", 0, 0, OPT_UNSIGNED},
    {"integrity", 0, 1, OPT_INTEGRITY},
    {"ca-bundle", 0, 1, OPT_CA_BUNDLE},
    {"recursive", 'r', 0, OPT_RECURSIVE},
    {"gpu", 0, 1, OPT_GPU},
    {"json", 0, 0, OPT_JSON},
    {"quiet", 'q', 0, OPT_QUIET},
    {"debug", 0, 0, OPT_DEBUG},
    {"help", 'h', 0, OPT_HELP},
    {"version", 0, 0, OPT_VERSION},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const struct command {
  const char *name;
  int (*run)(struct cli *c, int argc, char **argv);
} commands[] = {
    {"cp", cmd_cp},     {"ls", cmd_ls},       {"rm", cmd_rm},
    {"mb", cmd_mb},     {"rb", cmd_rb},       {"stat", cmd_stat},
    {"info", cmd_info}, {"bench", cmd_bench},
};

/* Applies one option; returns 0 or an exit status after reporting. Sets
 * *done for --help/--version, which end the run successfully. */
static int apply_option(struct cli *c, const struct option_def *o,
                        const char *value, int *done) {
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
  case OPT_PART_SIZE: {
    uint64_t v = 0;
    if (hipobj_parse_size(value, &v) != HIPOBJ_OK || v == 0)
      return report_usage("--part-size: '%s' is not a size (e.g. 8MiB)", value);
    c->part_size = v;
    break;
  }
  case OPT_STAGING_POOL: {
    uint64_t v = 0;
    if (hipobj_parse_size(value, &v) != HIPOBJ_OK || v == 0 || v > SIZE_MAX)
      return report_usage("--staging-pool: '%s' is not a size (e.g. 64MiB)",
                          value);
    c->staging_pool = (size_t)v;
    break;
  }
  case OPT_CONCURRENCY:
  case OPT_IO_THREADS: {
    const char *name = o->id == OPT_CONCURRENCY ? "concurrency" : "io-threads";
    unsigned long max = o->id == OPT_CONCURRENCY ? 1024 : 64;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(value, &end, 10);
    if (errno || end == value || *end || v == 0 || v > max || value[0] == '-')
      return report_usage("--%s: '%s' is not a number in 1..%lu", name, value,
                          max);
    *(o->id == OPT_CONCURRENCY ? &c->concurrency : &c->io_threads) =
        (unsigned)v;
    break;
  }
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
    fputs(usage_text, stdout);
    *done = 1;
    break;
  case OPT_VERSION:
    printf("hipobj %d.%d.%d (libhipobj %s)\n", HIPOBJ_VERSION_MAJOR,
           HIPOBJ_VERSION_MINOR, HIPOBJ_VERSION_PATCH, hipobj_version());
    *done = 1;
    break;
  }
  return 0;
}

/* Splits argv into options (anywhere) and positional arguments, which are
 * collected into pos[]. "--" ends the options; "-" alone is positional.
 * Returns 0, or an exit status (with *done set for --help/--version). */
static int parse_args(struct cli *c, int argc, char **argv, char **pos,
                      int *npos, int *done) {
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
      if (!o)
        return report_usage("unknown option '%.*s'", (int)len + 2, a);
      if (eq && !o->has_arg)
        return report_usage("option '--%s' takes no value", o->name);
      value = eq ? eq + 1 : NULL;
    } else {
      if (a[2] != '\0')
        return report_usage("unknown option '%s'", a);
      for (size_t k = 0; k < N_OPTIONS && !o; k++)
        if (options[k].short_name == a[1])
          o = &options[k];
      if (!o)
        return report_usage("unknown option '%s'", a);
    }
    if (o->has_arg && !value) {
      if (i + 1 >= argc)
        return report_usage("option '--%s' needs a value", o->name);
      value = argv[++i];
    }
    int rc = apply_option(c, o, value, done);
    if (rc || *done)
      return rc;
  }
  return 0;
}

int cli_connect(struct cli *c) {
  if (c->client)
    return 0;
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  cfg.endpoint_url = c->endpoint_url;
  cfg.region = c->region;
  cfg.profile = c->profile;
  cfg.tls_skip_verify = c->no_verify_ssl;
  cfg.integrity = c->integrity;
  cfg.ca_bundle = c->ca_bundle;
  cfg.part_size = c->part_size;
  cfg.concurrency = c->concurrency;
  cfg.staging_pool_bytes = c->staging_pool;
  cfg.io_threads = c->io_threads;
  cfg.rdma_policy = c->rdma;
  /* More parallel parts than connections would only queue. */
  if (c->concurrency > 16)
    cfg.max_connections = c->concurrency;
  cfg.log_level = c->debug ? HIPOBJ_LOG_DEBUG : HIPOBJ_LOG_DEFAULT;
  cfg.log_fn = progress_log_line; /* keeps log lines off the progress line */
  if (hipobj_client_create(&cfg, &c->client, c->err) != HIPOBJ_OK) {
    c->client = NULL;
    return report_lib(c, NULL, c->err);
  }
  return 0;
}

int cli_head(struct cli *c, const struct location *loc,
             struct hipobj_object_info *info) {
  if (hipobj_s3_head(c->client, loc->bucket, loc->key, info, c->err) ==
      HIPOBJ_OK)
    return 0;
  if (hipobj_error_status(c->err) != HIPOBJ_E_NOT_FOUND ||
      *hipobj_error_s3_code(c->err))
    return report_lib(c, loc->arg, c->err);
  struct hipobj_error *probe = NULL;
  if (hipobj_error_create(&probe) != HIPOBJ_OK)
    return report_lib(c, loc->arg, c->err);
  unsigned char byte;
  struct hipobj_mem mem = hipobj_mem_host(&byte, 1);
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  go.has_range = 1;
  go.length = 1;
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  int st =
      hipobj_s3_get(c->client, loc->bucket, loc->key, &mem, &go, &res, probe);
  /* Only a coded answer improves on the HEAD error. */
  int rc = st != HIPOBJ_OK && *hipobj_error_s3_code(probe)
               ? report_lib(c, loc->arg, probe)
               : report_lib(c, loc->arg, c->err);
  hipobj_error_free(probe);
  return rc;
}

static int run(struct cli *c, int argc, char **argv) {
  char **pos = calloc((size_t)argc + 1, sizeof *pos);
  if (!pos) {
    fprintf(stderr, "hipobj: %s\n", strerror(ENOMEM));
    return CLI_EXIT_FAIL;
  }
  int npos = 0, done = 0;
  int rc = parse_args(c, argc, argv, pos, &npos, &done);
  if (rc || done)
    goto out;
  if (npos == 0) {
    rc = report_usage("no command given");
    goto out;
  }
  const struct command *cmd = NULL;
  for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
    if (!strcmp(commands[k].name, pos[0]))
      cmd = &commands[k];
  if (!cmd) {
    rc = report_usage("unknown command '%s'", pos[0]);
    goto out;
  }
  if (c->recursive && cmd->run != cmd_ls) {
    rc = report_usage("--recursive is only supported by ls");
    goto out;
  }
  if (c->use_gpu && cmd->run != cmd_cp) {
    rc = report_usage("--gpu is only supported by cp");
    goto out;
  }
  rc = cmd->run(c, npos - 1, pos + 1);
out:
  free(pos);
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

  int rc = run(&c, argc, argv);

  hipobj_client_free(c.client);
  hipobj_error_free(c.err);
  hipobj_global_cleanup();

  /* Output that stdio still buffers can fail only now (full disk, closed
   * pipe); a run that otherwise succeeded must not exit 0 then. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    int e = errno;
    if (rc == 0)
      rc = report_stdout_error(e ? e : EIO);
  }
  return rc;
}
