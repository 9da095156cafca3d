/* rdma_glue.c - joins the RDMA engine (rdma/) to the client: the control
 * requests of hipobj-rc-v2 sent as signed S3 requests through the HTTP
 * engine (rdma/ never sees curl), the per-client engine created on first
 * use, the data-path policy (auto / off / require) and the GET and PUT
 * attempts that the operations make before (or instead of) HTTP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../rdma/device.h"
#include "../rdma/rc_client.h"
#include "../s3/xml.h"
#include "base/strutil.h"
#include "client_int.h"
#include "gpu.h"
#include "rdma_glue.h"

/* ---- control requests over the HTTP engine ------------------------------ */

struct ctl_req {
  struct hreq r; /* first */
  char lines[20][2][400];
  void (*answered)(void *);
  void *arg;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int done;
};

static void ctl_fill(struct ctl_req *q, struct hipobj_client *c,
                     const char *path, const struct rdma_header *hdrs, size_t n,
                     unsigned timeout_ms) {
  memset(q, 0, sizeof *q);
  const char *name = !strcmp(path, RDMA_PATH_PREPARE) ? "RDMA PREPARE"
                     : !strcmp(path, RDMA_PATH_READY) ? "RDMA READY"
                                                      : "RDMA CANCEL";
  hreq_init(&q->r, c, name, "POST", NULL, NULL);
  q->r.req.path_override = path;
  q->r.send_body = 1; /* Content-Length: 0, signed (wire spec 3.3) */
  q->r.max_attempts = 1;
  q->r.xfer.dedicated_connection = 1;
  q->r.timeout_ms = timeout_ms;
  s3_request_header(&q->r.req, "content-length", "0");
  for (size_t i = 0; i < n && i < 19; i++) {
    hstrlcpy(q->lines[i][0], hdrs[i].name, sizeof q->lines[i][0]);
    hstrlcpy(q->lines[i][1], hdrs[i].value, sizeof q->lines[i][1]);
    s3_request_header(&q->r.req, q->lines[i][0], q->lines[i][1]);
  }
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->cond, NULL);
}

static void ctl_answer(struct ctl_req *q, struct rdma_control_answer *ans) {
  const struct s3_http_resp *resp = &q->r.xfer.resp;
  if (resp->status == 0) {
    ans->http_status = 0;
    ans->transport_status = q->r.status ? q->r.status : HIPOBJ_E_NETWORK;
    hstrlcpy(ans->reason, q->r.err.message, sizeof ans->reason);
    return;
  }
  ans->http_status = (int)resp->status;
  hbuf_append(&ans->headers, hbuf_str(&resp->extra_headers),
              resp->extra_headers.len);
  hstrlcpy(ans->s3_code, q->r.err.s3_code, sizeof ans->s3_code);
  hstrlcpy(ans->s3_message, q->r.err.s3_message, sizeof ans->s3_message);
}

static void ctl_free(struct ctl_req *q) {
  hreq_cleanup(&q->r);
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->lock);
}

static int op_call(void *ctx, const char *path, const struct rdma_header *hdrs,
                   size_t n, unsigned timeout_ms,
                   struct rdma_control_answer *ans) {
  struct ctl_req *q = malloc(sizeof *q);
  if (!q) {
    ans->transport_status = HIPOBJ_E_OUT_OF_MEMORY;
    hstrlcpy(ans->reason, "out of memory", sizeof ans->reason);
    return -1;
  }
  ctl_fill(q, ctx, path, hdrs, n, timeout_ms);
  hreq_run(&q->r, NULL);
  ctl_answer(q, ans);
  ctl_free(q);
  free(q);
  return 0;
}

static void ready_done(struct hreq *r, void *ctx) {
  (void)r;
  struct ctl_req *q = ctx;
  pthread_mutex_lock(&q->lock);
  q->done = 1;
  if (q->answered)
    q->answered(q->arg);
  pthread_cond_broadcast(&q->cond);
  pthread_mutex_unlock(&q->lock);
}

static int op_ready_start(void *ctx, const char *path,
                          const struct rdma_header *hdrs, size_t n,
                          unsigned timeout_ms, void (*answered)(void *),
                          void *arg, void **pending) {
  struct ctl_req *q = malloc(sizeof *q);
  if (!q)
    return -1;
  ctl_fill(q, ctx, path, hdrs, n, timeout_ms);
  q->answered = answered;
  q->arg = arg;
  q->r.done = ready_done;
  q->r.done_ctx = q;
  *pending = q;
  hreq_submit(&q->r); /* a failure to send also completes through done */
  return 0;
}

/* Waits for READY's answer; gives up (cancelling it) after timeout_ms. */
static void ready_join(struct ctl_req *q, unsigned timeout_ms, int *timed_out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += timeout_ms / 1000;
  ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&q->lock);
  while (!q->done && pthread_cond_timedwait(&q->cond, &q->lock, &ts) == 0)
    ;
  *timed_out = !q->done;
  /* From here on the engine must not be called back. */
  q->answered = NULL;
  pthread_mutex_unlock(&q->lock);
  if (*timed_out) {
    s3_http_cancel(q->r.client->http, &q->r.xfer);
    pthread_mutex_lock(&q->lock);
    while (!q->done)
      pthread_cond_wait(&q->cond, &q->lock);
    pthread_mutex_unlock(&q->lock);
  }
}

static int op_ready_wait(void *ctx, void *pending, unsigned timeout_ms,
                         struct rdma_control_answer *ans) {
  (void)ctx;
  struct ctl_req *q = pending;
  int timed_out;
  ready_join(q, timeout_ms ? timeout_ms : 60000, &timed_out);
  if (timed_out) {
    ans->http_status = 0;
    ans->transport_status = HIPOBJ_E_TIMEOUT;
    hstrlcpy(ans->reason, "no FINAL answer to READY in time",
             sizeof ans->reason);
  } else {
    ctl_answer(q, ans);
  }
  ctl_free(q);
  free(q);
  return 0;
}

static void op_ready_abort(void *ctx, void *pending) {
  (void)ctx;
  struct ctl_req *q = pending;
  int timed_out;
  ready_join(q, 0, &timed_out);
  ctl_free(q);
  free(q);
}

/* ---- policy and the per-client engine -------------------------------------
 */

int hrdma_policy(const struct hipobj_client *c, int request_policy) {
  if (request_policy != HIPOBJ_RDMA_DEFAULT)
    return request_policy;
  return c->cfg.rdma_policy;
}

/* The engine, created on first use. NULL with *why when RDMA cannot be
 * used from this client. */
static struct rdma_engine *engine(struct hipobj_client *c, const char **why) {
  pthread_mutex_lock(&c->async_lock);
  if (!c->rdma && !c->rdma_why[0]) {
    {
      struct rdma_engine_opts o = RDMA_ENGINE_OPTS_INIT;
      o.device = c->cfg.rdma_device;
      o.gid_index = c->cfg.rdma_gid_index;
      struct hipobj_error e;
      memset(&e, 0, sizeof e);
      if (rdma_engine_create(&o, &c->rdma, &e) != HIPOBJ_OK) {
        hstrlcpy(c->rdma_why, e.message[0] ? e.message : "no RDMA device",
                 sizeof c->rdma_why);
        c->rdma = NULL;
      } else {
        HLOG_INFO(&c->log, "RDMA: %s", rdma_engine_describe(c->rdma));
      }
    }
    if (!c->rdma)
      HLOG_INFO(&c->log, "RDMA not used: %s", c->rdma_why);
  }
  struct rdma_engine *e = c->rdma;
  *why = c->rdma_why;
  pthread_mutex_unlock(&c->async_lock);
  return e;
}

struct rdma_engine *hrdma_engine(struct hipobj_client *c, const char **why) {
  return engine(c, why);
}

/* The engine for memory m: for GPU memory, one on the NIC nearest that GPU
 * over PCIe (created on first use; when that cannot be made, the client's
 * engine); for host memory and files, the client's (NUMA-local) engine. */
static struct rdma_engine *engine_for(struct hipobj_client *c,
                                      const struct hipobj_mem *m,
                                      const char **why) {
  struct rdma_engine *host = engine(c, why);
  int k = m->kind == HIPOBJ_MEM_HIP ? 0 : m->kind == HIPOBJ_MEM_CUDA ? 1 : -1;
  if (!host || k < 0 || m->device < 0 || m->device >= HRDMA_GPU_ENGINES)
    return host;
  pthread_mutex_lock(&c->async_lock);
  if (!c->rdma_gpu_tried[k][m->device]) {
    c->rdma_gpu_tried[k][m->device] = 1;
    char busid[HGPU_BUSID] = "", name[8], gwhy[HGPU_WHY];
    const struct hgpu_ops *ops = hgpu_platform(m->kind, &c->log, gwhy);
    if (ops &&
        ops->device_info(m->device, busid, name, sizeof name, gwhy) == 0 &&
        busid[0]) {
      struct rdma_engine_opts o = RDMA_ENGINE_OPTS_INIT;
      o.device = c->cfg.rdma_device;
      o.gid_index = c->cfg.rdma_gid_index;
      o.gpu_busid = busid;
      struct hipobj_error e;
      memset(&e, 0, sizeof e);
      if (rdma_engine_create(&o, &c->rdma_gpu[k][m->device], &e) == HIPOBJ_OK)
        HLOG_INFO(&c->log, "RDMA for %s GPU %d (%s): %s", ops->name, m->device,
                  busid, rdma_engine_describe(c->rdma_gpu[k][m->device]));
      else
        HLOG_INFO(&c->log, "RDMA for %s GPU %d: %s; using the client's NIC",
                  ops->name, m->device, e.message);
    }
  }
  struct rdma_engine *e = c->rdma_gpu[k][m->device];
  pthread_mutex_unlock(&c->async_lock);
  return e ? e : host;
}

struct rdma_engine *hrdma_engine_for(struct hipobj_client *c,
                                     const struct hipobj_mem *m,
                                     const char **why) {
  return engine_for(c, m, why);
}

int hrdma_nic_for_gpu(const char *busid, char *nic, size_t nic_len,
                      char *reason, size_t reason_len) {
  struct rdma_env env;
  struct hipobj_error e;
  struct rdma_devlist *l = NULL;
  struct rdma_choice ch;
  memset(&e, 0, sizeof e);
  nic[0] = '\0';
  int rc = rdma_env_from_environ(&env, &e);
  if (rc == HIPOBJ_OK)
    rc = rdma_devlist_get(&l, &e);
  if (rc == HIPOBJ_OK)
    rc = rdma_choose_for_gpu(l, &env, busid, rdma_current_numa_node(), &ch, &e);
  if (rc == HIPOBJ_OK) {
    snprintf(nic, nic_len, "%s port %u", ch.dev->name, ch.port->port_num);
    hstrlcpy(reason, ch.reason, reason_len);
  } else {
    hstrlcpy(reason, e.message, reason_len);
  }
  rdma_devlist_free(l);
  return rc == HIPOBJ_OK ? 0 : -1;
}

void hrdma_client_destroy(struct hipobj_client *c) {
  hrdma_regs_destroy(c); /* their MRs are on the engine's PD */
  if (c->rdma)
    rdma_engine_destroy(c->rdma);
  c->rdma = NULL;
  for (int k = 0; k < 2; k++)
    for (int d = 0; d < HRDMA_GPU_ENGINES; d++) {
      if (c->rdma_gpu[k][d])
        rdma_engine_destroy(c->rdma_gpu[k][d]);
      c->rdma_gpu[k][d] = NULL;
    }
}

/* ---- transfers --------------------------------------------------------------
 */

int hrdma_ready(struct hipobj_client *c, int request_policy,
                const struct hipobj_mem *mem, const char *op,
                struct hipobj_error *err) {
  int policy = hrdma_policy(c, request_policy);
  if (policy == HIPOBJ_RDMA_OFF || mem->len == 0)
    return 0; /* nothing for RDMA to move: HTTP */
  const char *why = NULL;
  /* The engine itself serves https clients too (registration, tokens);
   * only hipobj-rc-v2's control requests must not go over TLS. */
  struct rdma_engine *e =
      strncasecmp(c->cfg.endpoint_url, "http://", 7) != 0
          ? (why = "RDMA control requests are not sent over https (the "
                   "hipobj-rc-v2 peers refuse them)",
             NULL)
          : engine(c, &why);
  if (e)
    return 1;
  if (policy == HIPOBJ_RDMA_REQUIRE)
    return -herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                     "RDMA required but unavailable: %s", why);
  return 0;
}

void hrdma_control_ops_of(struct hipobj_client *c,
                          struct rdma_control_ops *ops) {
  *ops = (struct rdma_control_ops){op_call, op_ready_start, op_ready_wait,
                                   op_ready_abort, c};
}

/* ---- hipobj info ------------------------------------------------------------
 */

int hipobj_rdma_info(char **text, struct hipobj_error *err) {
  if (!text)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, "RdmaInfo", "text is NULL");
  struct hbuf b = HBUF_INIT;
  int rc = rdma_info(&b, err);
  *text = hbuf_steal(&b);
  if (!*text)
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, "RdmaInfo", "out of memory");
  return rc;
}

void hipobj_free(void *p) {
  free(p);
}
