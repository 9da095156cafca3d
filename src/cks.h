/* cks.h - the checksums a GET verifies (README "Checksums", docs/engine.md):
 * what an answer's x-amz-checksum-* headers let it verify, the digest of a
 * part's bytes computed as they arrive (struct hcks_part, one per part),
 * and the whole object's verdict (struct hcks_job, one per GET): a whole
 * object in one answer is checked against that answer's checksum; a GET
 * in parts joins the parts' CRC-64/NVME in offset order (whatever order
 * they finish in) and checks it against the object's, which a HEAD asked
 * for (ranged answers carry none). Plans and paths call these; nothing
 * here sends a request. */
#ifndef HIPOBJ_CKS_H
#define HIPOBJ_CKS_H

#include <stdint.h>

#include "../s3/http.h"
#include "hipobj.h"

/* A checksum value: a CRC, or a SHA-256, as the server spelt it. */
struct hcks_value {
  enum hipobj_checksum alg;
  uint64_t crc;
  uint8_t sha[32];
  char b64[48];
};

/* One part (or the one answer) of a GET. The plan sets ask and want64;
 * the HTTP path runs begin/update/end around the body; an RDMA part fills
 * has_crc64, crc64 and server_crc from its sessions' FINALs. */
struct hcks_part {
  int ask;    /* send x-amz-checksum-mode: ENABLED */
  int want64; /* compute the bytes' CRC-64/NVME (for the whole object) */
  /* running state of one attempt */
  int begun;
  enum hipobj_checksum alg; /* being computed */
  uint64_t state;           /* CRC register */
  struct s3_sha256_ctx *sha;
  int has_want;
  struct hcks_value want; /* the answer's own checksum of its bytes */
  /* results */
  int verified;  /* the answer's bytes matched want */
  int has_crc64; /* crc64: the CRC-64/NVME of all the part's bytes */
  uint64_t crc64;
  int server_crc; /* ... as the server computed it (RDMA into GPU memory) */
  char note[96];  /* why the answer's own checksum was not verified */
};

/* Before the first byte of an answer (its headers are in resp; whole: it
 * carries the whole object): decides what to compute. -1 when the answer's
 * checksum is malformed (the reason in c->note). */
int hcks_part_begin(struct hcks_part *c, const struct s3_http_resp *resp,
                    int whole);
/* The answer's next body bytes. */
static inline int hcks_part_active(const struct hcks_part *c) {
  return c->alg != HIPOBJ_CHECKSUM_NONE;
}
void hcks_part_update(struct hcks_part *c, const void *p, size_t n);
/* After the last byte: HIPOBJ_OK, or HIPOBJ_E_INTEGRITY with err filled
 * (operation op) when the bytes do not match the answer's checksum. */
int hcks_part_end(struct hcks_part *c, uint64_t bytes, const char *op,
                  struct hipobj_error *err);
/* Before another attempt: forgets the last one (keeps ask and want64). */
void hcks_part_reset(struct hcks_part *c);
/* When the path gives the part back: frees the running state, keeps the
 * results for the plan. */
void hcks_part_release(struct hcks_part *c);

/* The whole GET. */
struct hcks_job {
  int verify;   /* HIPOBJ_CHECKSUM_MODE_VERIFY */
  int whole;    /* the read is known to be the whole object */
  int ranged;   /* ... known not to be */
  uint64_t end; /* one past the last byte read (== the object's size) */
  uint64_t acc; /* XOR of the parts' CRCs shifted to the end */
  uint64_t acc_bytes;
  int partial;    /* a part without a CRC-64/NVME: no join */
  int server_crc; /* a part's CRC came from the server only */
  int head;       /* a HEAD for the object's checksum was answered */
  int has_full;   /* full: the object's checksum (HEAD) */
  struct hcks_value full;
  struct hcks_value answer; /* a whole answer verified against its own */
  int answered;
  char note[160];
  int finished;
};

void hcks_job_init(struct hcks_job *j, int verify);
/* The read's extent, once known: [start, end) of an object of total
 * bytes. Returns 1 when the plan should send a HEAD for the object's
 * checksum (a whole object read in parts whose answers carry none). */
int hcks_job_sized(struct hcks_job *j, uint64_t start, uint64_t end,
                   uint64_t total, int in_parts);
/* A part [off, off+bytes) ended well (after hcks_job_sized). */
void hcks_job_part(struct hcks_job *j, const struct hcks_part *c, uint64_t off,
                   uint64_t bytes);
/* The HEAD's answer (rc its status): the object's checksum if it has one
 * usable for a GET in parts. */
void hcks_job_head(struct hcks_job *j, int rc, const struct s3_http_resp *resp);
/* Every byte is in: HIPOBJ_OK, or HIPOBJ_E_INTEGRITY (err filled) when
 * the parts do not make the object's checksum. Once. */
int hcks_job_finish(struct hcks_job *j, struct hipobj_error *err);
/* The result's checksum, checksum_value and checksum_note. */
void hcks_job_result(const struct hcks_job *j, struct hipobj_xfer_result *res);

#endif
