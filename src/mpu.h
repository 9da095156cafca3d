/* mpu.h - the multipart upload handle shared by the step-by-step calls
 * (mpu.c) and the multipart plan (job_put.c). */
#ifndef HIPOBJ_MPU_H
#define HIPOBJ_MPU_H

#include <stdint.h>

#include "hipobj.h"

/* CreateMultipartUpload; asks for CRC32C part checksums when want_crc32c
 * (used only if the server's answer confirms the algorithm). */
int hmpu_create(struct hipobj_client *c, const char *bucket, const char *key,
                const char *content_type, int want_crc32c,
                struct hipobj_mpu **out, struct hipobj_error *err);
/* Records (or replaces) part `number`; crc32c "" when none. -1: no memory. */
int hmpu_record(struct hipobj_mpu *m, unsigned number, uint64_t size,
                const char *etag, const char *crc32c);
struct hipobj_client *hmpu_client(const struct hipobj_mpu *m);
const char *hmpu_bucket(const struct hipobj_mpu *m);
const char *hmpu_key(const struct hipobj_mpu *m);
const char *hmpu_upload_id(const struct hipobj_mpu *m);
/* The upload's parts carry CRC32C checksums (the server confirmed them). */
int hmpu_crc32c(const struct hipobj_mpu *m);

#endif
