/* jobs.h - the plans the public calls start (job_get.c, job_put.c). Each
 * fills a job from checked arguments; the caller starts it on the client's
 * scheduler, waits or is called back, reads the result through
 * j->ops->result and frees it with j->ops->free and hjob_destroy. */
#ifndef HIPOBJ_JOBS_H
#define HIPOBJ_JOBS_H

#include "engine.h"

int hjob_get_init(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *dst,
                  const struct hipobj_get_opts *opts, struct hxctl *ctl,
                  struct hjob *j, struct hipobj_error *err);
int hjob_put_init(struct hipobj_client *c, const char *bucket, const char *key,
                  const struct hipobj_mem *src,
                  const struct hipobj_put_opts *opts, struct hxctl *ctl,
                  struct hjob *j, struct hipobj_error *err);
/* UploadPart `number` of upload m from src (step-by-step API). */
int hjob_upload_part_init(struct hipobj_mpu *m, unsigned number,
                          const struct hipobj_mem *src, struct hxctl *ctl,
                          struct hjob *j, struct hipobj_error *err);

/* Runs j on the client's scheduler to the end, on the calling thread's
 * behalf; fills res (may be NULL) and err; frees the plan. Returns the
 * status. */
int hjob_run(struct hjob *j, struct hipobj_xfer_result *res,
             struct hipobj_error *err);

#endif
