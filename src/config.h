/* config.h - resolves struct hipobj_client_config plus the AWS environment
 * (variables, ~/.aws/credentials, ~/.aws/config) into one immutable
 * configuration. Environment access goes through a getenv function so tests
 * can inject one. */
#ifndef HIPOBJ_CONFIG_H
#define HIPOBJ_CONFIG_H

#include "hipobj.h"

typedef const char *(*hcfg_getenv_fn)(const char *name);

struct hcfg {
  char *endpoint_url;
  char *region;
  char *access_key;
  char *secret_key;
  char *session_token;
  int anonymous;
  int addressing;
  int tls_skip_verify;
  char *ca_bundle;
  unsigned connect_timeout_ms;
  unsigned request_timeout_ms;
  unsigned stall_timeout_ms;
  unsigned low_speed_bytes_per_s; /* resolved (>= 1) */
  unsigned max_attempts;
  unsigned retry_base_ms;
  unsigned max_connections;
  unsigned concurrency;
  uint64_t part_size;
  uint64_t multipart_threshold;
  int integrity;              /* HIPOBJ_INTEGRITY_* */
  int rdma_policy;            /* HIPOBJ_RDMA_AUTO/OFF/REQUIRE, resolved */
  int checksum_mode;          /* HIPOBJ_CHECKSUM_MODE_VERIFY/OFF, resolved */
  char *rdma_device;          /* NULL: choose */
  int rdma_gid_index;         /* -1: choose */
  size_t staging_pool_bytes;  /* pinned staging memory for GPU data */
  size_t staging_chunk_bytes; /* one staging chunk */
  unsigned io_threads;        /* HTTP engine workers, resolved (>= 1) */
  unsigned busy_poll_us;      /* resolved; 0: never poll */
  int http_wire; /* small GETs by the wire path (s3/http_wire.c), resolved */
  const char
      *creds_source; /* static text: "config", "environment", "profile" */
};

/* Fills out from cfg (may be NULL), then the environment and AWS files.
 * getenv_fn NULL means getenv(3). Fails with HIPOBJ_E_CONFIG naming what
 * is missing or wrong (never printing secret values). */
int hcfg_resolve(const struct hipobj_client_config *cfg,
                 hcfg_getenv_fn getenv_fn, struct hcfg *out,
                 struct hipobj_error *err);
void hcfg_free(struct hcfg *c);

/* Looks `key` up in section `section` of an INI file as the AWS tools write
 * them (# and ; comments, whitespace around '=', case-sensitive names).
 * Returns 1 and a malloc'd value when found, 0 when absent (also when the file
 * does not exist), -1 on an I/O error other than ENOENT. With key NULL it
 * only reports whether the section exists (value may then be NULL). */
int hcfg_ini_lookup(const char *path, const char *section, const char *key,
                    char **value);

#endif
