/* rdma_api.c - the public RDMA calls beyond the S3 operations: explicit
 * registration of host buffers (hipobj_buffer_register / _deregister), the
 * token-only API of cuObject single-request mode (hipobj_rdma_token,
 * hipobj_rdma_parse_reply; wire spec §7.2), and the per-client registry
 * that hrdma_transfer() (rdma_glue.c) consults so that a transfer inside a
 * registered buffer reuses its registration instead of registering per
 * transfer.
 *
 * The registry is a short list under its own mutex, created on first
 * registration (under the client's async_lock) and freed with the client.
 * A registration in use by a transfer is referenced; deregistering it
 * unlinks it at once and deregisters the verbs MRs at the last release.
 *
 * A registration for which hipobj_rdma_token() minted a descriptor also
 * owns a DC target (rdma/dc.c: an mlx5 DCT and a second registration with
 * REMOTE_READ), created on the first token and destroyed with the
 * registration. Builds without DC, and devices that are not mlx5, refuse
 * tokens with the cause. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../rdma/dc.h"
#include "../rdma/mr.h"
#include "../rdma/rc_client.h"
#include "../rdma/token.h"
#include "client_int.h"
#include "mem.h"
#include "rdma_glue.h"
#include "rdma_gpu.h"

/* Rights of an explicit registration: the server writes GETs into it
 * (REMOTE_WRITE, which implies LOCAL_WRITE); a PUT's WRITE reads it
 * locally. No REMOTE_READ: hipobj-rc-v2 never pulls (§4.7, §6.4). */
#define HRDMA_REG_ACCESS (RDMA_MR_LOCAL_WRITE | RDMA_MR_REMOTE_WRITE)

struct hrdma_reg {
  uintptr_t addr;
  size_t len;
  struct rdma_mr *mr;
  struct rdma_dc_target *dc; /* set once, by the first token; else NULL */
  unsigned users;            /* transfers and token calls using it now */
  int unlinked;              /* deregistered: free at the last release */
  struct hrdma_reg *next;
};

struct hrdma_regs {
  pthread_mutex_t lock;
  struct hrdma_reg *head;
};

/* The registry; created when `create`, else NULL until the first
 * registration. */
static struct hrdma_regs *regs_of(struct hipobj_client *c, int create) {
  pthread_mutex_lock(&c->async_lock);
  if (!c->rdma_regs && create) {
    struct hrdma_regs *r = calloc(1, sizeof *r);
    if (r) {
      pthread_mutex_init(&r->lock, NULL);
      c->rdma_regs = r;
    }
  }
  struct hrdma_regs *r = c->rdma_regs;
  pthread_mutex_unlock(&c->async_lock);
  return r;
}

static void reg_free(struct hrdma_reg *g) {
  /* The DCT first: after it nothing remote reaches the buffer. A DCT that
   * cannot be destroyed is leaked with what it holds (rdma/dc.c). */
  rdma_dc_target_destroy(g->dc);
  rdma_mr_dereg(g->mr, NULL);
  free(g);
}

const struct rdma_mr *hrdma_reg_acquire(struct hipobj_client *c,
                                        const void *ptr, uint64_t size,
                                        struct hrdma_reg **ref) {
  *ref = NULL;
  struct hrdma_regs *r = regs_of(c, 0);
  if (!r || !ptr || size == 0)
    return NULL;
  uintptr_t a = (uintptr_t)ptr;
  const struct rdma_mr *m = NULL;
  pthread_mutex_lock(&r->lock);
  for (struct hrdma_reg *g = r->head; g; g = g->next) {
    if (a >= g->addr && size <= g->len && a - g->addr <= g->len - size) {
      g->users++;
      *ref = g;
      m = g->mr;
      break;
    }
  }
  pthread_mutex_unlock(&r->lock);
  return m;
}

void hrdma_reg_release(struct hipobj_client *c, struct hrdma_reg *ref) {
  if (!ref)
    return;
  struct hrdma_regs *r = regs_of(c, 0);
  pthread_mutex_lock(&r->lock);
  int last = --ref->users == 0 && ref->unlinked;
  pthread_mutex_unlock(&r->lock);
  if (last)
    reg_free(ref);
}

void hrdma_regs_destroy(struct hipobj_client *c) {
  struct hrdma_regs *r = c->rdma_regs;
  if (!r)
    return;
  /* No transfer runs any more (hipobj_client_free's contract). */
  for (struct hrdma_reg *g = r->head, *next; g; g = next) {
    next = g->next;
    reg_free(g);
  }
  pthread_mutex_destroy(&r->lock);
  free(r);
  c->rdma_regs = NULL;
}

/* Checks shared by the calls taking a registered range. */
static int check_range(const char *op, struct hipobj_client *c,
                       const struct hipobj_mem *in, struct hipobj_mem *mem,
                       struct hipobj_error *err) {
  if (!c)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "client is NULL");
  int rc = hmem_import(op, in, mem, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (mem->len == 0)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op, "buffer is empty");
  if (mem->kind == HIPOBJ_MEM_FILE)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "files are not registered with the NIC (their RDMA goes "
                    "through the pinned staging pool)");
  return HIPOBJ_OK;
}

int hipobj_buffer_register(struct hipobj_client *client,
                           const struct hipobj_mem *in,
                           struct hipobj_error *err) {
  static const char op[] = "RegisterBuffer";
  struct hipobj_mem m, *mem = &m;
  int rc = check_range(op, client, in, &m, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (mem->kind != HIPOBJ_MEM_HOST) /* the GPU's own engine and cache */
    return hrdma_gpu_register(client, mem, 1, err);
  const char *why = NULL;
  struct rdma_engine *e = hrdma_engine(client, &why);
  if (!e)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "no RDMA: %s",
                    why && why[0] ? why : "no RDMA device");
  struct hrdma_regs *r = regs_of(client, 1);
  struct hrdma_reg *g = calloc(1, sizeof *g);
  if (!r || !g) {
    free(g);
    return herr_set(err, HIPOBJ_E_OUT_OF_MEMORY, op, "out of memory");
  }
  g->addr = (uintptr_t)mem->ptr;
  g->len = mem->len;
  pthread_mutex_lock(&r->lock);
  for (struct hrdma_reg *o = r->head; o; o = o->next) {
    if (o->addr == g->addr && o->len == g->len) {
      pthread_mutex_unlock(&r->lock);
      free(g);
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "[%p, +%zu) is already registered", mem->ptr, mem->len);
    }
  }
  pthread_mutex_unlock(&r->lock);
  /* Registering pins pages and may take long: outside the lock. */
  rc = rdma_mr_reg(rdma_engine_pd(e), mem->ptr, mem->len, HRDMA_REG_ACCESS, 0,
                   &g->mr, err);
  if (rc != HIPOBJ_OK) {
    free(g);
    return rc;
  }
  pthread_mutex_lock(&r->lock);
  for (struct hrdma_reg *o = r->head; o; o = o->next) {
    if (o->addr == g->addr && o->len == g->len) { /* raced: lost */
      pthread_mutex_unlock(&r->lock);
      reg_free(g);
      return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                      "[%p, +%zu) is already registered", mem->ptr, mem->len);
    }
  }
  g->next = r->head;
  r->head = g;
  pthread_mutex_unlock(&r->lock);
  return HIPOBJ_OK;
}

int hipobj_buffer_deregister(struct hipobj_client *client,
                             const struct hipobj_mem *in,
                             struct hipobj_error *err) {
  static const char op[] = "DeregisterBuffer";
  struct hipobj_mem m, *mem = &m;
  int rc = check_range(op, client, in, &m, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (mem->kind != HIPOBJ_MEM_HOST)
    return hrdma_gpu_register(client, mem, 0, err);
  struct hrdma_regs *r = regs_of(client, 0);
  struct hrdma_reg *g = NULL;
  int busy = 0;
  if (r) {
    pthread_mutex_lock(&r->lock);
    for (struct hrdma_reg **pp = &r->head; *pp; pp = &(*pp)->next) {
      if ((*pp)->addr == (uintptr_t)mem->ptr && (*pp)->len == mem->len) {
        g = *pp;
        *pp = g->next;
        g->unlinked = 1;
        busy = g->users > 0;
        break;
      }
    }
    pthread_mutex_unlock(&r->lock);
  }
  if (!g)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "[%p, +%zu) is not a registered buffer", mem->ptr,
                    mem->len);
  if (!busy) /* else the transfer using it frees it when it returns */
    reg_free(g);
  return HIPOBJ_OK;
}

/* The registration's DC target, created on first use. Created outside the
 * registry lock (it enumerates devices and pins pages); a racing creator
 * that lost destroys its own. g is referenced by the caller, so it cannot
 * be freed meanwhile. */
static int dc_target_of(struct hipobj_client *c, struct hrdma_reg *g,
                        struct rdma_dc_target **out, struct hipobj_error *err) {
  struct hrdma_regs *r = regs_of(c, 0);
  pthread_mutex_lock(&r->lock);
  *out = g->dc;
  pthread_mutex_unlock(&r->lock);
  if (*out)
    return HIPOBJ_OK;
  const char *why = NULL;
  struct rdma_engine *e = hrdma_engine(c, &why);
  if (!e) /* cannot happen with a registration, which needs the engine */
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, "RdmaToken", "no RDMA: %s",
                    why && why[0] ? why : "no RDMA device");
  /* The choice the engine made for its PD (rdma_engine_create). */
  struct rdma_dev_cfg cfg = {.device = c->cfg.rdma_device,
                             .gid_index = c->cfg.rdma_gid_index,
                             .use_environ = 1};
  struct rdma_dc_target *t = NULL;
  int rc = rdma_dc_target_create(rdma_engine_pd(e), &cfg, (void *)g->addr,
                                 g->len, &t, err);
  if (rc != HIPOBJ_OK)
    return rc;
  pthread_mutex_lock(&r->lock);
  if (!g->dc) {
    g->dc = t;
    t = NULL;
  }
  *out = g->dc;
  pthread_mutex_unlock(&r->lock);
  rdma_dc_target_destroy(t); /* lost the race (NULL otherwise) */
  return HIPOBJ_OK;
}

int hipobj_rdma_token(struct hipobj_client *client, const struct hipobj_mem *in,
                      char *token, size_t token_size,
                      struct hipobj_error *err) {
  static const char op[] = "RdmaToken";
  if (token && token_size)
    token[0] = '\0';
  struct hipobj_mem mm, *mem = &mm;
  int rc = check_range(op, client, in, &mm, err);
  if (rc != HIPOBJ_OK)
    return rc;
  if (mem->kind != HIPOBJ_MEM_HOST)
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "tokens describe host memory registered with "
                    "hipobj_buffer_register()");
  if (!token || token_size < RDMA_DC_DESC_LEN + 1)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "token buffer needs %d bytes", RDMA_DC_DESC_LEN + 1);
  /* Causes no registration can cure come first. */
  if (!rdma_dc_built())
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "%s", RDMA_DC_NOT_BUILT);
  if ((uint64_t)mem->len > RDMA_DC_SIZE_MAX)
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "a cuObject descriptor covers at most 4 GiB - 1 bytes "
                    "(%zu asked): mint one per window",
                    mem->len);
  struct hrdma_reg *ref;
  const struct rdma_mr *m = hrdma_reg_acquire(client, mem->ptr, mem->len, &ref);
  if (!m) {
    const char *why = NULL;
    if (!hrdma_engine(client, &why))
      return herr_set(err, HIPOBJ_E_UNSUPPORTED, op, "no RDMA: %s",
                      why && why[0] ? why : "no RDMA device");
    return herr_set(err, HIPOBJ_E_INVALID_ARGUMENT, op,
                    "[%p, +%zu) is not inside a registered buffer", mem->ptr,
                    mem->len);
  }
  struct rdma_dc_target *t = NULL;
  struct rdma_dc_desc d;
  char out[RDMA_DC_DESC_LEN + 1];
  rc = dc_target_of(client, ref, &t, err);
  if (rc == HIPOBJ_OK)
    rc = rdma_dc_target_describe(t, mem->ptr, mem->len, &d, err);
  if (rc == HIPOBJ_OK && rdma_dc_encode(&d, out) != 0)
    rc = herr_set(err, HIPOBJ_E_INTERNAL, op,
                  "cannot encode the DC descriptor (dctn 0x%x)", d.dctn);
  hrdma_reg_release(client, ref);
  if (rc == HIPOBJ_OK)
    memcpy(token, out, sizeof out);
  return rc;
}

int hipobj_rdma_parse_reply(const char *value, int *http_status,
                            struct hipobj_error *err) {
  static const char op[] = "RdmaReply";
  if (http_status)
    *http_status = 0;
  if (!value || !value[strspn(value, " \t")])
    return herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "no x-amz-rdma-reply: the server did not use RDMA (not a "
                    "decline; a PUT may have stored an empty body)");
  struct rdma_reply rep;
  struct hipobj_error why = {0};
  if (rdma_reply_parse(value, strlen(value), &rep, &why) != HIPOBJ_OK)
    return herr_set(err, HIPOBJ_E_PROTOCOL, op,
                    "malformed x-amz-rdma-reply: %s", why.message);
  if (http_status)
    *http_status = rep.code;
  switch (rep.kind) {
  case RDMA_REPLY_SUCCESS:
    return HIPOBJ_OK;
  case RDMA_REPLY_DECLINED:
    return herr_set(err, HIPOBJ_E_UNSUPPORTED, op,
                    "the server declined RDMA (501): a GET's body holds the "
                    "object; a PUT was not stored, send it over HTTP without "
                    "the token");
  case RDMA_REPLY_FAILED:
  default:
    return herr_set(err, HIPOBJ_E_SERVER_ERROR, op,
                    "the server reports the RDMA transfer failed (\"err\")");
  }
}
