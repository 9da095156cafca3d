/* rc_harness.h - an in-process hipobj-rc-v2 peer pair for the protocol
 * tests: the client engine (rdma/rc_client.h) talks to the server engine
 * (rdma/rc_server.h) through control ops that hand the header lists over
 * directly (no HTTP, no signing), READY on a thread of its own as the real
 * ops do, with an in-memory object store as the server's backend. Hooks
 * let a test tamper with requests and answers, or answer PREPARE itself
 * (route missing, limits). Data moves over real verbs. */
#ifndef HIPOBJ_TESTS_RC_HARNESS_H
#define HIPOBJ_TESTS_RC_HARNESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rdma/rc_client.h"
#include "rdma/rc_server.h"

#define H_MAX_OBJECTS 64
#define H_MAX_PARTS 64

struct h_object {
  char bucket[64], key[256];
  unsigned char *data;
  size_t len;
  char etag[40];
};

struct h_part {
  char upload_id[40];
  unsigned number;
  unsigned char *data;
  size_t len;
};

/* A copy of one request header the tamper hook may rewrite. */
struct h_header {
  char name[48];
  char value[400];
};

struct harness;
typedef void (*h_request_hook)(struct harness *h, const char *path,
                               struct h_header *hdrs, size_t *n);
typedef void (*h_answer_hook)(struct harness *h, const char *path,
                              struct rdma_server_answer *a);
/* Answers PREPARE instead of the server when it returns 1. */
typedef int (*h_prepare_hook)(struct harness *h, struct rdma_server_answer *a);

struct harness {
  struct rdma_server *srv;
  struct rdma_engine *eng;
  struct rdma_control_ops ops;
  const char *principal;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  struct h_object objects[H_MAX_OBJECTS];
  size_t nobjects;
  struct h_part parts[H_MAX_PARTS];
  size_t nparts;
  int threads; /* READY threads still running */
  /* hooks and knobs (set before transfers) */
  h_request_hook on_request;
  h_answer_hook on_answer;
  h_prepare_hook on_prepare;
  unsigned prepare_faults, ready_faults;
  unsigned ready_delay_ms; /* READY reaches the server this late */
  const char *deny_bucket; /* authorize refuses it (403) */
  void *user;
  /* counters */
  atomic_int prepares, readies, cancels;
  atomic_int cancel_status; /* of the last CANCEL */
};

/* Server and engine with these options (NULL: defaults). The test skips
 * (exit 77 is not available inside Criterion: cr_skip) when there is no
 * device. */
void h_start(struct harness *h, const struct rdma_server_opts *so,
             const struct rdma_engine_opts *eo);
/* Waits for READY threads, destroys both ends, checks that no QP and no
 * MR is left. */
void h_stop(struct harness *h);

/* Object store. */
void h_put_object(struct harness *h, const char *bucket, const char *key,
                  const void *data, size_t len);
const struct h_object *h_find(struct harness *h, const char *bucket,
                              const char *key);
/* CompleteMultipartUpload: the parts of upload_id in number order become
 * the object. Returns its length. */
size_t h_complete(struct harness *h, const char *bucket, const char *key,
                  const char *upload_id);

/* Answer editing for hooks. */
void h_answer_set(struct rdma_server_answer *a, const char *name,
                  const char *value);
void h_answer_del(struct rdma_server_answer *a, const char *name);
void h_header_set(struct h_header *hdrs, size_t n, const char *name,
                  const char *value);

/* A request over the whole of buf for bucket/key. */
struct rdma_rc_request h_request(struct harness *h, const char *bucket,
                                 const char *key, void *buf, uint64_t off,
                                 uint64_t size);

void h_fill(unsigned char *p, size_t n, unsigned seed);
unsigned char *h_alloc(size_t n); /* page-aligned, zeroed; free() it */

#endif
