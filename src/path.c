/* path.c - which data path moves a part (docs/engine.md, "The data
 * paths"): decided per part from the request's RDMA policy, whether the
 * client has an RDMA engine for this memory, what the endpoint showed, the
 * memory kind and the size. The operations never branch on RDMA
 * themselves. */
#include <strings.h>

#include "endpoint.h"
#include "engine.h"
#include "rdma_glue.h"

const struct hpath *hpath_http_for(const struct hjob *j,
                                   const struct hpart *p) {
  if (j->mem->kind == HIPOBJ_MEM_HOST)
    return &hpath_http;
  /* A file on tmpfs (with the CPUs to repay a mapping): the part's window
   * mapped whole, when its size is known and bounded. Not the GET that
   * learns the object's size: mapping grows the file to the window, and an
   * object smaller than the window would leave the file that long, its
   * tail zeros. */
  if (j->mem->kind == HIPOBJ_MEM_FILE && p->len > 0 &&
      p->len <= HFILE_WINDOW_MAX &&
      (p->is_put || (p->has_range && p->range_len == p->len && !p->sizing)) &&
      hfile_window_wanted(j->mem->fd, p->is_put ? HMEM_READ : HMEM_WRITE))
    return &hpath_http_mapped;
  return &hpath_http_staged;
}

int hpath_rdma_likely(struct hjob *j) {
  if (j->policy == HIPOBJ_RDMA_OFF || j->mem->len == 0)
    return 0;
  if (j->policy == HIPOBJ_RDMA_AUTO && hendpoint_rdma_declined(&j->c->facts))
    return 0;
  return hrdma_ready(j->c, j->policy, j->mem, j->op, NULL) > 0;
}

const struct hpath *hpath_choose(struct hjob *j, struct hpart *p,
                                 struct hipobj_error *err) {
  const struct hpath *http = hpath_http_for(j, p);
  /* Nothing for RDMA to move (sessions carry at least one byte), or a GET
   * whose size is not known yet (PREPARE names it). */
  if (j->policy == HIPOBJ_RDMA_OFF || p->len == 0 ||
      (!p->is_put && (!p->has_range || !p->range_len)))
    return http;
  /* A range larger than the buffer: HTTP learns how much of it exists
   * (S3 clamps at the object's end) and reports a buffer too small. */
  if (!p->is_put && p->range_len > p->len)
    return http;
  if (p->content_type) {
    /* hipobj-rc-v2 has no Content-Type: a typed PUT goes over HTTP. */
    if (j->policy == HIPOBJ_RDMA_REQUIRE) {
      herr_set(err, HIPOBJ_E_UNSUPPORTED, p->name,
               "RDMA required, but an RDMA PUT cannot carry the "
               "Content-Type '%s'",
               p->content_type);
      return NULL;
    }
    return http;
  }
  /* A decline is remembered: no PREPARE until it expires (auto only; under
   * `require` the server is asked, and its answer is the error). */
  if (j->policy == HIPOBJ_RDMA_AUTO && hendpoint_rdma_declined(&j->c->facts))
    return http;
  /* Parts of a multipart upload only to a server that handles them (an
   * unknown server is asked: its PREPARE reply says). */
  if (j->policy == HIPOBJ_RDMA_AUTO && p->nq &&
      hendpoint_rdma_mp(&j->c->facts) == 0)
    return http;
  int ready = hrdma_ready(j->c, j->policy, j->mem, p->name, err);
  if (ready < 0)
    return NULL;
  if (ready == 0)
    return http;
  return j->mem->kind == HIPOBJ_MEM_HOST || hrdma_direct_possible(j->c, j->mem)
             ? &hpath_rdma_direct
             : &hpath_rdma_staged;
}
