/* rdma_xfer.h - one GET or PUT attempted by RDMA (rdma_xfer.c). */
#ifndef HIPOBJ_RDMA_XFER_H
#define HIPOBJ_RDMA_XFER_H

#include "rdma_glue.h"

/* Tries the transfer by RDMA. HIPOBJ_OK with out->done, or with
 * out->fallback (use HTTP); an error only under the `require` policy or
 * for a failure HTTP would meet again (a GPU copy). Blocks. */
int hrdma_transfer(struct hipobj_client *c, const struct hrdma_job *job,
                   struct hrdma_outcome *out, struct hipobj_error *err);

#endif
