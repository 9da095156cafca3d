/* cks.c - the checksums a GET verifies (cks.h). The rules, and why:
 *
 * - A value describes the bytes of the answer it comes with only when
 *   that answer is the whole object: S3 sends none with an arbitrary
 *   range, and for a composite (multipart CRC32C/CRC32) object it has been
 *   seen to send the composite value without its "-N" on a ranged answer
 *   that happened to cover everything (botocore issue 3346). So a 206 is
 *   trusted only with CRC-64/NVME (always a full-object checksum) or with
 *   x-amz-checksum-type: FULL_OBJECT, and a value marked COMPOSITE, or
 *   ending in "-N", never: it is a checksum of the parts' checksums, which
 *   only the upload's part boundaries could check.
 * - Several values: the first of CRC-64/NVME, CRC32C, CRC32, SHA-256 (the
 *   cheapest to compute first; one is enough).
 * - A GET in parts cannot verify a value that needs the bytes in order in
 *   one pass (SHA-256), nor spend CPU on every algorithm in case: its parts
 *   compute CRC-64/NVME, which joins across parts
 *   (crc64nvme_shift), and the object's value comes from a HEAD. An object
 *   whose only full-object checksum is CRC32C, CRC32 or SHA-256 is
 *   verified when it comes in one answer.
 * - A value that is not the canonical base64 of its algorithm's size is a
 *   protocol error, not "unverified": the server said something wrong. */
#include "cks.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../s3/checksum.h"
#include "../s3/crypto.h"
#include "base/codec.h"
#include "base/crc64nvme.h"
#include "base/error.h"
#include "base/strutil.h"

static const struct {
  enum hipobj_checksum alg;
  const char *header;
  const char *name; /* as S3 writes it */
  size_t bytes;
} algs[] = {
    {HIPOBJ_CHECKSUM_CRC64NVME, "x-amz-checksum-crc64nvme", "CRC64NVME", 8},
    {HIPOBJ_CHECKSUM_CRC32C, "x-amz-checksum-crc32c", "CRC32C", 4},
    {HIPOBJ_CHECKSUM_CRC32, "x-amz-checksum-crc32", "CRC32", 4},
    {HIPOBJ_CHECKSUM_SHA256, "x-amz-checksum-sha256", "SHA256", 32},
};
#define N_ALGS (sizeof algs / sizeof algs[0])

const char *hipobj_checksum_name(enum hipobj_checksum c) {
  switch (c) {
  case HIPOBJ_CHECKSUM_CRC64NVME:
    return "crc64nvme";
  case HIPOBJ_CHECKSUM_CRC32C:
    return "crc32c";
  case HIPOBJ_CHECKSUM_CRC32:
    return "crc32";
  case HIPOBJ_CHECKSUM_SHA256:
    return "sha256";
  default:
    return "none";
  }
}

static size_t index_of(enum hipobj_checksum alg) {
  for (size_t i = 0; i < N_ALGS; i++)
    if (algs[i].alg == alg)
      return i;
  return 0;
}

/* The value's bytes into v (big-endian CRCs, as S3 sends them). */
static int parse(size_t i, const char *b64, struct hcks_value *v) {
  uint8_t b[32];
  if (hb64_decode(b64, strlen(b64), b, algs[i].bytes) != 0)
    return -1;
  memset(v, 0, sizeof *v);
  v->alg = algs[i].alg;
  hstrlcpy(v->b64, b64, sizeof v->b64);
  if (algs[i].bytes == 32) {
    memcpy(v->sha, b, 32);
  } else {
    for (size_t k = 0; k < algs[i].bytes; k++)
      v->crc = v->crc << 8 | b[k];
  }
  return 0;
}

/* A note cut to the caller's buffer: a note is for people, and a value
 * quoted in it may be long. */
static void note_set(char *note, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_set(char *note, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(note, cap, fmt, ap);
  va_end(ap);
}

/* What an answer lets its bytes be checked against: 1 with *v, 0 with a
 * note (maybe empty), -1 with the reason in note (a malformed value). */
static int from_answer(const struct s3_http_resp *resp, int whole,
                       struct hcks_value *v, char *note, size_t cap) {
  char type[32] = "", val[64];
  s3_http_resp_header(resp, "x-amz-checksum-type", type, sizeof type);
  int composite = !strcasecmp(type, "COMPOSITE");
  int full = !strcasecmp(type, "FULL_OBJECT");
  note[0] = '\0';
  for (size_t i = 0; i < N_ALGS; i++) {
    if (!s3_http_resp_header(resp, algs[i].header, val, sizeof val))
      continue;
    if (strchr(val, '-')) {
      note_set(note, cap,
               "the object's %s is composite (%s: a checksum of its "
               "parts' checksums)",
               algs[i].name, val);
      continue;
    }
    int crc64 = algs[i].alg == HIPOBJ_CHECKSUM_CRC64NVME;
    if (!whole || (!crc64 && (composite || (resp->status == 206 && !full)))) {
      if (whole)
        note_set(note, cap,
                 "%s on a ranged answer not marked FULL_OBJECT: not trusted",
                 algs[i].header);
      continue;
    }
    if (parse(i, val, v) != 0) {
      note_set(note, cap, "%s '%.48s' is not the base64 of %zu bytes",
               algs[i].header, val, algs[i].bytes);
      return -1;
    }
    note[0] = '\0';
    return 1;
  }
  if (!note[0] &&
      s3_http_resp_header(resp, "x-amz-checksum-sha1", val, sizeof val))
    note_set(note, cap, "the object's checksum is SHA-1, which is not checked");
  return 0;
}

/* ---- one part ------------------------------------------------------------ */

static void run_start(struct hcks_part *c, enum hipobj_checksum alg) {
  c->alg = alg;
  c->state = alg == HIPOBJ_CHECKSUM_CRC64NVME ? crc64nvme_init() : 0;
  if (alg == HIPOBJ_CHECKSUM_SHA256 && !(c->sha = s3_sha256_begin())) {
    c->alg = HIPOBJ_CHECKSUM_NONE;
    c->has_want = 0;
    hstrlcpy(c->note, "out of memory for SHA-256", sizeof c->note);
  }
}

static void run_drop(struct hcks_part *c) {
  if (c->sha) {
    uint8_t junk[S3_SHA256_LEN];
    s3_sha256_end(c->sha, junk);
    c->sha = NULL;
  }
  c->alg = HIPOBJ_CHECKSUM_NONE;
}

int hcks_part_begin(struct hcks_part *c, const struct s3_http_resp *resp,
                    int whole) {
  c->begun = 1;
  c->has_want = c->verified = c->has_crc64 = 0;
  c->note[0] = '\0';
  int rc =
      c->ask ? from_answer(resp, whole, &c->want, c->note, sizeof c->note) : 0;
  if (rc < 0)
    return -1;
  c->has_want = rc == 1;
  run_start(c, c->has_want ? c->want.alg
               : c->want64 ? HIPOBJ_CHECKSUM_CRC64NVME
                           : HIPOBJ_CHECKSUM_NONE);
  return 0;
}

void hcks_part_update(struct hcks_part *c, const void *p, size_t n) {
  switch (c->alg) {
  case HIPOBJ_CHECKSUM_CRC64NVME:
    c->state = crc64nvme_update(c->state, p, n);
    break;
  case HIPOBJ_CHECKSUM_CRC32C:
    c->state = s3_crc32c((uint32_t)c->state, p, n);
    break;
  case HIPOBJ_CHECKSUM_CRC32:
    c->state = s3_crc32((uint32_t)c->state, p, n);
    break;
  case HIPOBJ_CHECKSUM_SHA256:
    s3_sha256_update(c->sha, p, n);
    break;
  default:
    break;
  }
}

/* base64 of the CRC's bytes (4 or 8, big-endian) or of the digest. */
static void render(const struct hcks_value *v, char out[48]) {
  size_t i = index_of(v->alg);
  uint8_t b[32];
  if (algs[i].bytes == 32) {
    memcpy(b, v->sha, 32);
  } else {
    for (size_t k = 0; k < algs[i].bytes; k++)
      b[k] = (uint8_t)(v->crc >> (8 * (algs[i].bytes - 1 - k)));
  }
  hb64_encode(b, algs[i].bytes, out);
}

int hcks_part_end(struct hcks_part *c, uint64_t bytes, const char *op,
                  struct hipobj_error *err) {
  if (c->alg == HIPOBJ_CHECKSUM_NONE)
    return HIPOBJ_OK;
  struct hcks_value got;
  memset(&got, 0, sizeof got);
  got.alg = c->alg;
  if (c->alg == HIPOBJ_CHECKSUM_SHA256) {
    s3_sha256_end(c->sha, got.sha);
    c->sha = NULL;
  } else {
    got.crc = c->alg == HIPOBJ_CHECKSUM_CRC64NVME ? crc64nvme_final(c->state)
                                                  : c->state;
  }
  c->alg = HIPOBJ_CHECKSUM_NONE;
  if (got.alg == HIPOBJ_CHECKSUM_CRC64NVME) {
    c->has_crc64 = 1;
    c->crc64 = got.crc;
  }
  if (!c->has_want)
    return HIPOBJ_OK;
  int same = got.alg == HIPOBJ_CHECKSUM_SHA256
                 ? !memcmp(got.sha, c->want.sha, sizeof got.sha)
                 : got.crc == c->want.crc;
  if (same) {
    c->verified = 1;
    return HIPOBJ_OK;
  }
  render(&got, got.b64);
  size_t i = index_of(got.alg);
  return herr_set(err, HIPOBJ_E_INTEGRITY, op,
                  "%s mismatch: the server's %s is %s, the %" PRIu64
                  " bytes received have %s: the object or its transfer is "
                  "damaged",
                  algs[i].name, algs[i].header, c->want.b64, bytes, got.b64);
}

void hcks_part_release(struct hcks_part *c) {
  run_drop(c);
}

void hcks_part_reset(struct hcks_part *c) {
  run_drop(c);
  c->begun = c->has_want = c->verified = c->has_crc64 = c->server_crc = 0;
  c->note[0] = '\0';
}

/* ---- the whole GET ------------------------------------------------------- */

void hcks_job_init(struct hcks_job *j, int verify) {
  memset(j, 0, sizeof *j);
  j->verify = verify;
}

int hcks_job_sized(struct hcks_job *j, uint64_t start, uint64_t end,
                   uint64_t total, int in_parts) {
  j->end = end;
  j->whole = start == 0 && end == total;
  j->ranged = !j->whole;
  return j->verify && j->whole && in_parts && !j->answered && !j->has_full &&
         !j->head;
}

void hcks_job_part(struct hcks_job *j, const struct hcks_part *c, uint64_t off,
                   uint64_t bytes) {
  if (c->verified && !j->answered) {
    j->answered = 1;
    j->answer = c->want;
  }
  if (c->has_crc64 && off + bytes <= j->end) {
    /* CRC(whole) = XOR over parts of CRC(part) * x^(8 * bytes after it). */
    j->acc ^= crc64nvme_shift(c->crc64, j->end - (off + bytes));
    j->acc_bytes += bytes;
    j->server_crc |= c->server_crc;
  } else if (bytes) {
    j->partial = 1;
  }
  if (c->note[0] && !j->note[0])
    hstrlcpy(j->note, c->note, sizeof j->note);
}

void hcks_job_head(struct hcks_job *j, int rc,
                   const struct s3_http_resp *resp) {
  j->head = 1;
  if (!j->verify)
    return;
  if (rc != HIPOBJ_OK) {
    snprintf(j->note, sizeof j->note,
             "the HEAD asking for the object's checksum failed (%s)",
             hipobj_strerror(rc));
    return;
  }
  struct hcks_value v;
  char why[128];
  int got = from_answer(resp, 1, &v, why, sizeof why);
  if (got == 1 && v.alg == HIPOBJ_CHECKSUM_CRC64NVME) {
    j->has_full = 1;
    j->full = v;
  } else if (got == 1) {
    snprintf(j->note, sizeof j->note,
             "the object's checksum is %s, which a GET in parts does not "
             "verify (only CRC-64/NVME joins across parts)",
             algs[index_of(v.alg)].name);
  } else if (why[0]) {
    hstrlcpy(j->note, why, sizeof j->note);
  }
}

int hcks_job_finish(struct hcks_job *j, struct hipobj_error *err) {
  if (j->finished)
    return HIPOBJ_OK;
  j->finished = 1;
  const char *why = NULL;
  if (!j->verify)
    why = "checksum verification is off";
  else if (j->answered)
    return HIPOBJ_OK;
  else if (!j->whole)
    why = "a range of the object: the server's checksums are of the whole "
          "object";
  else if (!j->has_full && !j->note[0])
    why = "the server sent no checksum for the object";
  else if (!j->has_full)
    return HIPOBJ_OK; /* the note says why */
  else if (j->partial || j->acc_bytes != j->end)
    why = "a part came without its CRC-64/NVME";
  if (why) {
    hstrlcpy(j->note, why, sizeof j->note);
    return HIPOBJ_OK;
  }
  if (j->acc != j->full.crc) {
    struct hcks_value got = {.alg = HIPOBJ_CHECKSUM_CRC64NVME, .crc = j->acc};
    render(&got, got.b64);
    return herr_set(err, HIPOBJ_E_INTEGRITY, "GetObject",
                    "CRC64NVME mismatch: the object's "
                    "x-amz-checksum-crc64nvme is %s, the %" PRIu64
                    " bytes %s have %s: the object or its transfer is "
                    "damaged",
                    j->full.b64, j->end,
                    j->server_crc ? "the server sent (by its own CRCs)"
                                  : "received",
                    got.b64);
  }
  if (j->server_crc) {
    /* RDMA into GPU memory: this process never read the bytes. */
    hstrlcpy(j->note,
             "GPU memory written by RDMA is not read back: the CRC-64/NVME "
             "the server computed over the bytes it sent matched the "
             "object's",
             sizeof j->note);
    return HIPOBJ_OK;
  }
  j->answered = 1;
  j->answer = j->full;
  return HIPOBJ_OK;
}

void hcks_job_result(const struct hcks_job *j, struct hipobj_xfer_result *res) {
  if (j->answered) {
    res->checksum = j->answer.alg;
    hstrlcpy(res->checksum_value, j->answer.b64, sizeof res->checksum_value);
  }
  hstrlcpy(res->checksum_note, j->note, sizeof res->checksum_note);
}
