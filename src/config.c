/* config.c - hcfg_resolve(): turns struct hipobj_client_config plus the AWS
 * environment into the settings a client runs with.
 *
 * Each setting is taken from the first place that has it, as the AWS CLI
 * does: the caller's struct, then environment variables, then the profile in
 * the shared AWS files, then a built-in default. Credentials are taken as a
 * set (key id, secret, token) from one place only, so a token from the
 * environment is never paired with keys from a file. Empty strings count as
 * unset, in the struct and in the environment alike.
 *
 * Error messages name the variables and files that were consulted but never
 * the values of keys, secrets or tokens. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/cpus.h"
#include "base/error.h"
#include "base/strutil.h"
#include "hstruct.h"
#include "plan.h"

#define OP "config"

#define DEF_REGION "us-east-1"
#define DEF_CONNECT_TIMEOUT_MS 10000u
#define DEF_STALL_TIMEOUT_MS 30000u
/* Stall detection: below this rate for stall_timeout_ms an attempt fails.
 * 1 byte/s (libcurl's usual floor) let a server dripping 2 bytes/s hold a
 * transfer forever; no real link to S3 is this slow while healthy. */
#define DEF_LOW_SPEED 1024u
#define MAX_LOW_SPEED (1u << 30)
#define DEF_MAX_ATTEMPTS 4u
#define DEF_RETRY_BASE_MS 100u
#define DEF_MAX_CONNECTIONS 16u
#define DEF_PART_SIZE (8ull << 20)
/* Parts in flight by default: two per I/O thread, at least 8, and beyond 8
 * no more than the connections. A PUT part spends most of its life in the
 * server's hashing and writing, so one client needs more of them in flight
 * to keep a many-core server busy (16-core H200, 8 I/O threads, 1 GiB PUT
 * from a file, 4 alternating runs: median 1.56 s with 8 parts in flight,
 * 1.22 s with 16 and the pool below; aws-c-s3 1.19 s). */
#define DEF_CONCURRENCY_MIN 8u
#define DEF_CONCURRENCY_PER_IO_THREAD 2u
/* The default staging pool: a default part (8 MiB) for each part in
 * flight, 32 MiB to 256 MiB. A signed PUT part is read whole before it is
 * sent (its SHA-256 is in the signature), and a GET part into GPU memory
 * needs a chunk receiving while the previous one is copied (16-core H200,
 * 1 GiB GET into GPU memory, 8 parts in flight: 0.75x host speed with
 * 32 MiB, 0.97x with 64 MiB; the PUT above: 1.32 s with 64 MiB, 1.22 s with
 * 128 MiB). */
#define DEF_STAGING_POOL_MIN ((size_t)32 << 20)
#define DEF_STAGING_POOL_MAX ((size_t)256 << 20)
#define DEF_STAGING_POOL_PER_PART ((size_t)8 << 20)
#define DEF_STAGING_CHUNK ((size_t)4 << 20)
#define MAX_IO_THREADS 64u
/* Polling for an answer before sleeping (s3/http_here.c): long enough for
 * a server on the same host or rack (H200 machine: 38-55 us polled), and
 * no more than a 10% tax on a request that takes a millisecond anyway. */
#define DEF_BUSY_POLL_US 100u
#define MAX_BUSY_POLL_US 1000

/* Half the CPUs move bytes, 1 to 8: one thread tops out near 1-2 GB/s of
 * HTTP, and the other half is left to hashing, file or GPU copies and the
 * application. */
static unsigned default_io_threads(void) {
  unsigned n = hcpu_usable() / 2;
  return n < 1 ? 1u : n > 8 ? 8u : n;
}
#define MIN_STAGING_CHUNK ((size_t)4 << 10)
#define MAX_STAGING_CHUNK ((size_t)1 << 30)

struct resolver {
  hcfg_getenv_fn env;
  struct hipobj_error *err;
  const char *profile;  /* profile name, never NULL */
  char *creds_path;     /* NULL when it cannot be determined (no HOME) */
  char *config_path;    /* idem */
  char *config_section; /* "default" or "profile NAME" */
};

static const char *sys_getenv(const char *name) {
  return getenv(name);
}

static const char *nz(const char *s) {
  return s && *s ? s : NULL;
}

static const char *env_get(const struct resolver *r, const char *name) {
  return nz(r->env(name));
}

static void free_secret(char *s) {
  if (s) {
    explicit_bzero(s, strlen(s));
    free(s);
  }
}

static int oom(struct resolver *r) {
  return herr_set(r->err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
}

/* The path of an AWS file: the variable if set ("~/" expanded), else
 * $HOME/<rel>. *out is NULL when neither is available. */
static int file_path(struct resolver *r, const char *var, const char *rel,
                     char **out) {
  const char *v = env_get(r, var);
  const char *home = env_get(r, "HOME");
  struct hbuf b = HBUF_INIT;
  *out = NULL;
  if (v && v[0] == '~' && (v[1] == '/' || v[1] == '\0') && home)
    hbuf_printf(&b, "%s%s", home, v + 1);
  else if (v)
    hbuf_puts(&b, v);
  else if (home)
    hbuf_printf(&b, "%s/%s", home, rel);
  else
    return 0;
  *out = hbuf_steal(&b);
  return *out ? 0 : oom(r);
}

static const char *show_path(const char *p) {
  return p ? p : "(unknown: HOME is not set)";
}

/* Lookup helpers return 1 (found), 0 (absent) or -1 (error recorded in
 * r->err, always HIPOBJ_E_CONFIG) so that "found" never collides with a
 * status code. */
static int ini_failed(struct resolver *r, const char *path) {
  herr_set(r->err, HIPOBJ_E_CONFIG, OP, "cannot read %s: %s", path,
           strerror(errno));
  return -1;
}

/* Looks key up in the profile's section of the config file. [default] may
 * also be written [profile default]. */
static int config_get(struct resolver *r, const char *key, char **out) {
  int rc = hcfg_ini_lookup(r->config_path, r->config_section, key, out);
  if (rc == 0 && strcmp(r->profile, "default") == 0)
    rc = hcfg_ini_lookup(r->config_path, "profile default", key, out);
  if (rc < 0)
    return ini_failed(r, r->config_path);
  return rc;
}

static int check_profile_exists(struct resolver *r) {
  int rc = hcfg_ini_lookup(r->creds_path, r->profile, NULL, NULL);
  if (rc < 0)
    ini_failed(r, r->creds_path);
  else if (rc == 0)
    rc = config_get(r, NULL, NULL);
  if (rc < 0)
    return HIPOBJ_E_CONFIG;
  if (rc == 0)
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "profile '%s' not found in %s or %s", r->profile,
                    show_path(r->creds_path), show_path(r->config_path));
  return HIPOBJ_OK;
}

/* A string setting: the struct's value, else the first set variable of
 * vars (NULL-terminated), else `key` in the config file's profile. *src says
 * where it came from, for error messages. */
static int resolve_str(struct resolver *r, const char *given,
                       const char *const *vars, const char *key, char **out,
                       const char **src) {
  *out = NULL;
  if (nz(given)) {
    *src = "the client configuration";
    *out = hstrdup(given);
    return *out ? HIPOBJ_OK : oom(r);
  }
  for (; *vars; vars++) {
    const char *v = env_get(r, *vars);
    if (v) {
      *src = *vars;
      *out = hstrdup(v);
      return *out ? HIPOBJ_OK : oom(r);
    }
  }
  int rc = config_get(r, key, out);
  if (rc < 0)
    return HIPOBJ_E_CONFIG;
  if (rc == 1 && !**out) {
    free(*out); /* "key =" with no value means unset */
    *out = NULL;
  }
  *src = r->config_path;
  return HIPOBJ_OK;
}

static int check_region(struct resolver *r, const char *region,
                        const char *src) {
  /* The region goes into host names and the signing scope. */
  for (const char *p = region; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                      "region '%.64s' (from %s) may only contain letters, "
                      "digits, '-', '_' and '.'",
                      region, src);
  }
  return HIPOBJ_OK;
}

/* Validates an endpoint URL in place, dropping trailing slashes so that
 * paths can be appended to it. */
static int check_endpoint(struct resolver *r, char *url, const char *src) {
  size_t skip = 0;
  if (strncasecmp(url, "http://", 7) == 0)
    skip = 7;
  else if (strncasecmp(url, "https://", 8) == 0)
    skip = 8;
  if (!skip)
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "endpoint URL '%.200s' (from %s) must start with http:// "
                    "or https://",
                    url, src);
  for (const char *p = url; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f)
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                      "endpoint URL '%.200s' (from %s) contains whitespace or "
                      "control characters",
                      url, src);
  size_t n = strlen(url);
  while (n > skip && url[n - 1] == '/')
    url[--n] = '\0';
  if (n == skip || url[skip] == '/')
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "endpoint URL '%.200s' (from %s) has no host name", url,
                    src);
  return HIPOBJ_OK;
}

/* Credentials from one section of one file. Returns 1 when found, 0 when the
 * section has none, -1 when the file cannot be read or holds half a key
 * pair. */
static int creds_from_file(struct resolver *r, const char *path,
                           const char *section, struct hcfg *out) {
  char *id = NULL, *secret = NULL, *token = NULL;
  int rc, hid = 0, hsecret = 0;
  if ((hid = hcfg_ini_lookup(path, section, "aws_access_key_id", &id)) < 0 ||
      (hsecret = hcfg_ini_lookup(path, section, "aws_secret_access_key",
                                 &secret)) < 0 ||
      hcfg_ini_lookup(path, section, "aws_session_token", &token) < 0) {
    rc = ini_failed(r, path);
    goto done;
  }
  if (hid && !*id) {
    free(id);
    id = NULL;
  }
  if (hsecret && !*secret) {
    free(secret);
    secret = NULL;
  }
  if (!id && !secret) {
    rc = 0;
    goto done;
  }
  if (!id || !secret) {
    herr_set(r->err, HIPOBJ_E_CONFIG, OP, "[%s] in %s has %s but no %s",
             section, path, id ? "aws_access_key_id" : "aws_secret_access_key",
             id ? "aws_secret_access_key" : "aws_access_key_id");
    rc = -1;
    goto done;
  }
  out->access_key = id;
  out->secret_key = secret;
  out->session_token = token && *token ? token : NULL;
  if (!out->session_token)
    free(token);
  return 1;
done:
  free_secret(id);
  free_secret(secret);
  free_secret(token);
  return rc;
}

/* Profiles that get credentials some other way are common; say why they do
 * not work here instead of only "no credentials". */
static const char *unsupported_source(struct resolver *r) {
  static const char *const keys[] = {"credential_process", "role_arn",
                                     "sso_session", "sso_start_url",
                                     "web_identity_token_file"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    char *v = NULL;
    int rc = hcfg_ini_lookup(r->config_path, r->config_section, keys[i], &v);
    if (rc <= 0)
      rc = hcfg_ini_lookup(r->creds_path, r->profile, keys[i], &v);
    free(v);
    if (rc == 1)
      return keys[i];
  }
  return NULL;
}

static int resolve_creds(struct resolver *r,
                         const struct hipobj_client_config *in,
                         struct hcfg *out) {
  if (in->anonymous) {
    out->creds_source = "anonymous";
    return HIPOBJ_OK;
  }

  const char *id = nz(in->access_key_id), *secret = nz(in->secret_access_key);
  const char *src = "config";
  const char *token = nz(in->session_token);
  if (!id && !secret) {
    id = env_get(r, "AWS_ACCESS_KEY_ID");
    secret = env_get(r, "AWS_SECRET_ACCESS_KEY");
    token = env_get(r, "AWS_SESSION_TOKEN");
    src = "environment";
    if (!!id != !!secret)
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP, "%s is set but %s is not",
                      id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                      id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
  } else if (!id || !secret) {
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "%s is set in the client configuration but %s is not",
                    id ? "access_key_id" : "secret_access_key",
                    id ? "secret_access_key" : "access_key_id");
  }
  if (id) {
    out->access_key = hstrdup(id);
    out->secret_key = hstrdup(secret);
    out->session_token = hstrdup(token);
    if (!out->access_key || !out->secret_key || (token && !out->session_token))
      return oom(r);
    out->creds_source = src;
    return HIPOBJ_OK;
  }

  /* The profile: the credentials file first, then the config file. */
  int rc = creds_from_file(r, r->creds_path, r->profile, out);
  if (rc == 0)
    rc = creds_from_file(r, r->config_path, r->config_section, out);
  if (rc == 0 && strcmp(r->profile, "default") == 0)
    rc = creds_from_file(r, r->config_path, "profile default", out);
  if (rc == 1) {
    out->creds_source = "profile";
    return HIPOBJ_OK;
  }
  if (rc < 0)
    return HIPOBJ_E_CONFIG;

  const char *other = unsupported_source(r);
  if (other)
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "no credentials: profile '%s' uses %s, which hipObject "
                    "does not support; set AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY, or put aws_access_key_id and "
                    "aws_secret_access_key in %s",
                    r->profile, other, show_path(r->creds_path));
  return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                  "no credentials: not in the client configuration, not in "
                  "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, and profile '%s' "
                  "has no aws_access_key_id/aws_secret_access_key in %s or "
                  "%s (set anonymous for unsigned requests)",
                  r->profile, show_path(r->creds_path),
                  show_path(r->config_path));
}

static int check_numbers(struct resolver *r,
                         const struct hipobj_client_config *in) {
  if (in->part_size &&
      (in->part_size < HPLAN_MIN_PART || in->part_size > HPLAN_MAX_PART))
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "part_size %llu is outside S3's limits (5 MiB to 5 GiB)",
                    (unsigned long long)in->part_size);
  if (in->staging_chunk_bytes && (in->staging_chunk_bytes < MIN_STAGING_CHUNK ||
                                  in->staging_chunk_bytes > MAX_STAGING_CHUNK))
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "staging_chunk_bytes %zu is outside 4 KiB..1 GiB",
                    in->staging_chunk_bytes);
  if (in->staging_pool_bytes && in->staging_chunk_bytes &&
      in->staging_pool_bytes < in->staging_chunk_bytes)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "staging_pool_bytes %zu is smaller than one "
                    "staging_chunk_bytes (%zu)",
                    in->staging_pool_bytes, in->staging_chunk_bytes);
  if (in->io_threads > MAX_IO_THREADS)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "io_threads %u is above %u", in->io_threads,
                    MAX_IO_THREADS);
  if (in->busy_poll_us > MAX_BUSY_POLL_US)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "busy_poll_us %d is above %d (negative: never poll)",
                    in->busy_poll_us, MAX_BUSY_POLL_US);
  if (in->low_speed_bytes_per_s > MAX_LOW_SPEED)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "low_speed_bytes_per_s %u is above 1 GiB/s",
                    in->low_speed_bytes_per_s);
  if (in->staging_pool_bytes && in->staging_pool_bytes < MIN_STAGING_CHUNK)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "staging_pool_bytes %zu is below 4 KiB",
                    in->staging_pool_bytes);
  if ((int)in->integrity < HIPOBJ_INTEGRITY_AUTO ||
      (int)in->integrity > HIPOBJ_INTEGRITY_NONE)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "integrity %d is not a valid enum hipobj_integrity",
                    (int)in->integrity);
  if ((int)in->addressing < HIPOBJ_ADDRESSING_AUTO ||
      (int)in->addressing > HIPOBJ_ADDRESSING_VIRTUAL)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "addressing %d is not a valid enum hipobj_addressing",
                    (int)in->addressing);
  return HIPOBJ_OK;
}

static void set_numbers(const struct hipobj_client_config *in,
                        struct hcfg *out) {
  out->anonymous = in->anonymous != 0;
  out->addressing = (int)in->addressing;
  out->tls_skip_verify = in->tls_skip_verify != 0;
  out->integrity = (int)in->integrity;
  out->connect_timeout_ms =
      in->connect_timeout_ms ? in->connect_timeout_ms : DEF_CONNECT_TIMEOUT_MS;
  out->request_timeout_ms = in->request_timeout_ms;
  out->stall_timeout_ms =
      in->stall_timeout_ms ? in->stall_timeout_ms : DEF_STALL_TIMEOUT_MS;
  out->max_attempts = in->max_attempts ? in->max_attempts : DEF_MAX_ATTEMPTS;
  out->retry_base_ms =
      in->retry_base_ms ? in->retry_base_ms : DEF_RETRY_BASE_MS;
  out->max_connections =
      in->max_connections ? in->max_connections : DEF_MAX_CONNECTIONS;
  out->part_size = in->part_size ? in->part_size : DEF_PART_SIZE;
  out->multipart_threshold =
      in->multipart_threshold ? in->multipart_threshold : out->part_size;
  out->io_threads = in->io_threads ? in->io_threads : default_io_threads();
}

/* After io_threads is final (the environment may set it): the defaults
 * that follow from it. */
static void set_parallelism(const struct hipobj_client_config *in,
                            struct hcfg *out) {
  unsigned conc = out->io_threads * DEF_CONCURRENCY_PER_IO_THREAD;
  if (conc > out->max_connections)
    conc = out->max_connections;
  if (conc < DEF_CONCURRENCY_MIN)
    conc = DEF_CONCURRENCY_MIN;
  out->concurrency = in->concurrency ? in->concurrency : conc;
  size_t def = (size_t)out->concurrency * DEF_STAGING_POOL_PER_PART;
  if (def < DEF_STAGING_POOL_MIN)
    def = DEF_STAGING_POOL_MIN;
  if (def > DEF_STAGING_POOL_MAX)
    def = DEF_STAGING_POOL_MAX;
  out->staging_pool_bytes =
      in->staging_pool_bytes ? in->staging_pool_bytes : def;
  out->staging_chunk_bytes = in->staging_chunk_bytes ? in->staging_chunk_bytes
                             : out->staging_pool_bytes < DEF_STAGING_CHUNK
                                 ? out->staging_pool_bytes
                                 : DEF_STAGING_CHUNK;
  /* Whole chunks only: the pool never exceeds what was given. */
  out->staging_pool_bytes -= out->staging_pool_bytes % out->staging_chunk_bytes;
}

/* The RDMA settings: config fields, else HIPOBJ_RDMA (the device and GID
 * variables are read by the RDMA engine itself when these stay unset). */
static int resolve_rdma(struct resolver *r,
                        const struct hipobj_client_config *in,
                        struct hcfg *out) {
  int p = (int)in->rdma_policy;
  if (p < HIPOBJ_RDMA_DEFAULT || p > HIPOBJ_RDMA_REQUIRE)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "rdma_policy %d is not a valid enum hipobj_rdma_policy", p);
  if (p == HIPOBJ_RDMA_DEFAULT) {
    const char *v = env_get(r, "HIPOBJ_RDMA");
    p = HIPOBJ_RDMA_AUTO;
    if (v && !strcasecmp(v, "off"))
      p = HIPOBJ_RDMA_OFF;
    else if (v && !strcasecmp(v, "require"))
      p = HIPOBJ_RDMA_REQUIRE;
    else if (v && *v && strcasecmp(v, "auto"))
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_RDMA='%s' is not auto, off or require", v);
  }
  out->rdma_policy = p;
  out->rdma_gid_index = -1;
  const char *g = nz(in->rdma_gid_index);
  if (g) {
    char *end;
    long v = strtol(g, &end, 10);
    if (*end || v < 0 || v > 65535)
      return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                      "rdma_gid_index '%s' is not a GID index", g);
    out->rdma_gid_index = (int)v;
  }
  if (nz(in->rdma_device) && !(out->rdma_device = strdup(in->rdma_device)))
    return herr_set(r->err, HIPOBJ_E_OUT_OF_MEMORY, OP, "out of memory");
  return HIPOBJ_OK;
}

/* checksum_mode: the field, else HIPOBJ_CHECKSUM_MODE, else verify. */
static int resolve_checksum_mode(struct resolver *r,
                                 const struct hipobj_client_config *in,
                                 struct hcfg *out) {
  int m = (int)in->checksum_mode;
  if (m < HIPOBJ_CHECKSUM_MODE_DEFAULT || m > HIPOBJ_CHECKSUM_MODE_OFF)
    return herr_set(r->err, HIPOBJ_E_INVALID_ARGUMENT, OP,
                    "checksum_mode %d is not a valid enum "
                    "hipobj_checksum_mode",
                    m);
  if (m == HIPOBJ_CHECKSUM_MODE_DEFAULT) {
    const char *v = env_get(r, "HIPOBJ_CHECKSUM_MODE");
    m = HIPOBJ_CHECKSUM_MODE_VERIFY;
    if (v && !strcasecmp(v, "off"))
      m = HIPOBJ_CHECKSUM_MODE_OFF;
    else if (v && *v && strcasecmp(v, "verify"))
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_CHECKSUM_MODE='%s' is not verify or off", v);
  }
  out->checksum_mode = m;
  return HIPOBJ_OK;
}

/* io_threads: the field, else HIPOBJ_IO_THREADS, else half the CPUs. */
static int resolve_io_threads(struct resolver *r,
                              const struct hipobj_client_config *in,
                              struct hcfg *out) {
  if (in->io_threads)
    return HIPOBJ_OK; /* set_numbers took it */
  const char *v = env_get(r, "HIPOBJ_IO_THREADS");
  if (!v)
    return HIPOBJ_OK;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 1 || n > (long)MAX_IO_THREADS)
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "HIPOBJ_IO_THREADS='%s' is not a number in 1..%u", v,
                    MAX_IO_THREADS);
  out->io_threads = (unsigned)n;
  return HIPOBJ_OK;
}

/* low_speed_bytes_per_s: the field, else HIPOBJ_LOW_SPEED, else 1 KiB/s. */
static int resolve_low_speed(struct resolver *r,
                             const struct hipobj_client_config *in,
                             struct hcfg *out) {
  out->low_speed_bytes_per_s = in->low_speed_bytes_per_s;
  if (out->low_speed_bytes_per_s)
    return HIPOBJ_OK;
  out->low_speed_bytes_per_s = DEF_LOW_SPEED;
  const char *v = env_get(r, "HIPOBJ_LOW_SPEED");
  if (!v)
    return HIPOBJ_OK;
  uint64_t n;
  if (hipobj_parse_size(v, &n) != HIPOBJ_OK || n < 1 || n > MAX_LOW_SPEED)
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "HIPOBJ_LOW_SPEED='%.64s' is not a rate of 1 byte to 1 GiB "
                    "per second (bytes, or a size such as 1KiB)",
                    v);
  out->low_speed_bytes_per_s = (unsigned)n;
  return HIPOBJ_OK;
}

/* busy_poll_us: the field (negative: never), else HIPOBJ_BUSY_POLL_US
 * (0 or "off": never), else 100 us. */
static int resolve_busy_poll(struct resolver *r,
                             const struct hipobj_client_config *in,
                             struct hcfg *out) {
  if (in->busy_poll_us) {
    out->busy_poll_us = in->busy_poll_us > 0 ? (unsigned)in->busy_poll_us : 0;
    return HIPOBJ_OK;
  }
  out->busy_poll_us = DEF_BUSY_POLL_US;
  const char *v = env_get(r, "HIPOBJ_BUSY_POLL_US");
  if (!v)
    return HIPOBJ_OK;
  char *end;
  long n = strtol(v, &end, 10);
  if (!strcmp(v, "off")) {
    n = 0;
  } else if (*end || end == v || n < 0 || n > MAX_BUSY_POLL_US) {
    return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                    "HIPOBJ_BUSY_POLL_US='%.64s' is not a number of "
                    "microseconds in 0..%d (or off)",
                    v, MAX_BUSY_POLL_US);
  }
  out->busy_poll_us = (unsigned)n;
  return HIPOBJ_OK;
}

/* The wire path for small GETs (docs/engine.md): on unless
 * HIPOBJ_HTTP_WIRE says 0/off, and off wherever a proxy variable is set
 * (proxies stay with libcurl, which reads the same variables). */
static int resolve_http_wire(struct resolver *r, struct hcfg *out) {
  static const char *const proxy_vars[] = {"http_proxy",  "HTTP_PROXY",
                                           "https_proxy", "HTTPS_PROXY",
                                           "all_proxy",   "ALL_PROXY"};
  out->http_wire = 1;
  const char *v = env_get(r, "HIPOBJ_HTTP_WIRE");
  if (v) {
    if (!strcmp(v, "0") || !strcmp(v, "off"))
      out->http_wire = 0;
    else if (strcmp(v, "1") != 0 && strcmp(v, "on") != 0)
      return herr_set(r->err, HIPOBJ_E_CONFIG, OP,
                      "HIPOBJ_HTTP_WIRE='%.64s' is not 0, 1, off or on", v);
  }
  for (size_t i = 0; i < sizeof proxy_vars / sizeof *proxy_vars; i++)
    if (env_get(r, proxy_vars[i]))
      out->http_wire = 0;
  return HIPOBJ_OK;
}

static int resolve(struct resolver *r, const struct hipobj_client_config *in,
                   struct hcfg *out) {
  int rc = check_numbers(r, in);
  if (rc)
    return rc;
  set_numbers(in, out);
  if ((rc = resolve_rdma(r, in, out)) ||
      (rc = resolve_checksum_mode(r, in, out)) ||
      (rc = resolve_io_threads(r, in, out)) ||
      (rc = resolve_low_speed(r, in, out)) ||
      (rc = resolve_busy_poll(r, in, out)) || (rc = resolve_http_wire(r, out)))
    return rc;
  set_parallelism(in, out);

  int explicit_profile = 1;
  r->profile = nz(in->profile);
  if (!r->profile)
    r->profile = env_get(r, "AWS_PROFILE");
  if (!r->profile) {
    r->profile = "default";
    explicit_profile = 0;
  }
  if ((rc = file_path(r, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials",
                      &r->creds_path)) ||
      (rc = file_path(r, "AWS_CONFIG_FILE", ".aws/config", &r->config_path)))
    return rc;
  struct hbuf sec = HBUF_INIT;
  if (strcmp(r->profile, "default") == 0)
    hbuf_puts(&sec, "default");
  else
    hbuf_printf(&sec, "profile %s", r->profile);
  if (!(r->config_section = hbuf_steal(&sec)))
    return oom(r);
  if (explicit_profile && (rc = check_profile_exists(r)))
    return rc;

  const char *src = NULL;
  static const char *const region_vars[] = {"AWS_REGION", "AWS_DEFAULT_REGION",
                                            NULL};
  if ((rc = resolve_str(r, in->region, region_vars, "region", &out->region,
                        &src)))
    return rc;
  if (!out->region) {
    if (!(out->region = hstrdup(DEF_REGION)))
      return oom(r);
    src = "the default";
  }
  if ((rc = check_region(r, out->region, src)))
    return rc;

  static const char *const endpoint_vars[] = {"AWS_ENDPOINT_URL_S3",
                                              "AWS_ENDPOINT_URL", NULL};
  if ((rc = resolve_str(r, in->endpoint_url, endpoint_vars, "endpoint_url",
                        &out->endpoint_url, &src)))
    return rc;
  if (!out->endpoint_url) {
    /* AWS itself; the China partition has its own domain. */
    struct hbuf b = HBUF_INIT;
    hbuf_printf(&b, "https://s3.%s.amazonaws.com%s", out->region,
                strncmp(out->region, "cn-", 3) == 0 ? ".cn" : "");
    if (!(out->endpoint_url = hbuf_steal(&b)))
      return oom(r);
    src = "the default for the region";
  }
  if ((rc = check_endpoint(r, out->endpoint_url, src)))
    return rc;

  static const char *const ca_vars[] = {"AWS_CA_BUNDLE", NULL};
  if ((rc = resolve_str(r, in->ca_bundle, ca_vars, "ca_bundle", &out->ca_bundle,
                        &src)))
    return rc;

  return resolve_creds(r, in, out);
}

int hcfg_resolve(const struct hipobj_client_config *cfg,
                 hcfg_getenv_fn getenv_fn, struct hcfg *out,
                 struct hipobj_error *err) {
  if (!out)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, OP, "out is NULL");
  memset(out, 0, sizeof *out);
  /* The caller's struct, of whatever version, as a full one: the fields
   * an older struct lacks are zero, their defaults. */
  struct hipobj_client_config in;
  int rc = hstruct_in(OP, cfg, &in, err);
  if (rc != HIPOBJ_OK)
    return rc;
  struct resolver r = {.env = getenv_fn ? getenv_fn : sys_getenv, .err = err};
  rc = resolve(&r, &in, out);
  free(r.creds_path);
  free(r.config_path);
  free(r.config_section);
  if (rc != HIPOBJ_OK) {
    hcfg_free(out);
    return rc;
  }
  if (err)
    hipobj_error_clear(err);
  return HIPOBJ_OK;
}

void hcfg_free(struct hcfg *c) {
  if (!c)
    return;
  free(c->endpoint_url);
  free(c->region);
  free_secret(c->access_key);
  free_secret(c->secret_key);
  free_secret(c->session_token);
  free(c->ca_bundle);
  free(c->rdma_device);
  memset(c, 0, sizeof *c);
}
