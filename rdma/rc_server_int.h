/* rc_server_int.h - what the two halves of the server engine share:
 * rc_server.c (session table, reaper, lifecycle, PREPARE) and
 * rc_server_ready.c (READY with its data phase, CANCEL). Not for use
 * outside rdma/. */
#ifndef HIPOBJ_RDMA_RC_SERVER_INT_H
#define HIPOBJ_RDMA_RC_SERVER_INT_H

#include <pthread.h>

#include "mr.h"
#include "qp.h"
#include "rc_server.h"

enum sess_state { S_PREPARED, S_TRANSFERRING, S_DONE };

struct session {
  struct session *next;
  char id[RDMA_SESSION_HEX_LEN + 1];
  char *principal, *bucket, *key, *upload_id, *version_id;
  unsigned part_number;
  enum rdma_op op;
  uint64_t offset;
  uint32_t size, client_psn, server_psn, cookie, qpn;
  struct rdma_rc_token peer;
  int loopback, paired;
  unsigned sgid_index;
  uint8_t sgid[16];
  struct rdma_qp *qp;
  void *buf;
  size_t map_len;
  struct rdma_mr *mr;
  uint64_t staged, crc;
  struct rdma_server_object obj;
  enum sess_state state;
  int cancelled, in_table;
  int leak; /* a QP could not be destroyed: keep MR and buffer forever */
  int lost; /* fault injection: the QP went to ERROR at PREPARE */
  unsigned refs;
  double expires;
  int wake_fd; /* CANCEL wakes a READY in its data phase */
};

struct rdma_server {
  struct rdma_dev *dev;
  struct rdma_retired *retired;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pthread_t reaper;
  int reaper_started, stopping;
  struct session *head;
  unsigned max_sessions;
  uint32_t max_size;
  uint64_t max_staging;
  double t_prep, t_exec, interval;
  int clamp;
  struct rdma_server_stats st;
  char describe[400];
};

/* Answers (rc_server.c). */
void rdma_srv_reset(struct rdma_server_answer *a);
void rdma_srv_add(struct rdma_server_answer *a, const char *name,
                  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error of the route, with the protocol echo (so that clients tell it
 * from "no such route", §6.3). Returns http. */
int rdma_srv_error(struct rdma_server_answer *a, int http, const char *code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A backend failure: its answer, or a generic 500 when it set none. */
int rdma_srv_backend_error(struct rdma_server_answer *a, const char *what);
const char *rdma_srv_hdr(const struct rdma_header *h, size_t n,
                         const char *name, size_t *len);

/* Sessions (rc_server.c). The lock protects the table, the counters and
 * every session's state, cancelled, in_table and refs. */
struct session *rdma_srv_find_locked(struct rdma_server *s, const char *id,
                                     size_t n);
/* Drops one reference (and, with unlink, the table's too); the last one
 * destroys the session. */
void rdma_srv_unref(struct rdma_server *s, struct session *x, int unlink);
void rdma_srv_target_of(const struct session *x, struct rdma_server_target *t);

#endif
