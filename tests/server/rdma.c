/* rdma.c - the RDMA side of hipobj-server in a build without an RDMA
 * engine (see /work/shared/docs/rdma-wire-protocol.md):
 *
 * - The hipobj-rc-v2 control paths (POST /.hipobj-rc/prepare, ready,
 *   cancel) answer 501 with X-Amz-Rdma-Protocol-Status: unsupported and no
 *   body, the explicit marker that lets a client fall back to HTTP (§3.7).
 * - cuObject single-request mode (§7.2): a GET carrying x-amz-rdma-token
 *   gets its data over HTTP plus x-amz-rdma-reply: 501 (declined); a PUT
 *   is refused with 501 NotImplemented and the object is not stored. A
 *   token that is neither a cuObject DC descriptor (§7.1) nor an RC token
 *   (§2) is a malformed request: 400. */
#include <string.h>

#include "server.h"

static int all_hex(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
      return 0;
  return 1;
}

/* addr:size:rkey:lid:dctn:gid_present:gid, fixed widths, 81 characters. */
static int is_dc_descriptor(const char *t, size_t n) {
  static const size_t widths[] = {16, 8, 8, 4, 6, 1, 32};
  if (n != 81)
    return 0;
  const char *p = t;
  for (size_t i = 0; i < 7; i++) {
    if (!all_hex(p, widths[i]))
      return 0;
    p += widths[i];
    if (i < 6 && *p++ != ':')
      return 0;
  }
  return 1;
}

/* 88 hex (44 bytes: transport 01, qpn, gid, ...), optionally followed by
 * the legacy ":<addr hex>:<size hex>" suffix; all zeros is the loopback
 * marker. Otherwise transport must be RC and the GID non-zero (§2.2). */
static int is_rc_token(const char *t, size_t n) {
  if (n < 88 || !all_hex(t, 88))
    return 0;
  if (n > 88) {
    const char *p = t + 88;
    for (int part = 0; part < 2; part++) {
      if (*p++ != ':')
        return 0;
      size_t k = strspn(p, "0123456789abcdefABCDEF");
      if (k < 1 || k > 16)
        return 0;
      p += k;
    }
    if ((size_t)(p - t) != n)
      return 0;
  }
  if (strspn(t, "0") >= 88)
    return 1;
  if (strncmp(t, "01", 2))
    return 0;
  return strspn(t + 10, "0") < 32; /* GID: bytes 5..20 */
}

int rdma_check_token(struct req *r) {
  const char *t = req_header(r, "x-amz-rdma-token");
  while (*t == ' ')
    t++;
  size_t n = strlen(t);
  while (n && t[n - 1] == ' ')
    n--;
  if (!is_dc_descriptor(t, n) && !is_rc_token(t, n))
    return req_fail(r, 400, "InvalidArgument",
                    "x-amz-rdma-token is malformed: expected the 81-character "
                    "cuObject descriptor addr:size:rkey:lid:dctn:gid_present:"
                    "gid or an 88-hex-digit RC token");
  r->rdma_token = 1;
  srv_log(r->srv, SLOG_DEBUG, "%s: RDMA token declined (no RDMA engine)",
          r->id);
  return 0;
}

enum MHD_Result rdma_control(struct req *r) {
  if (strcmp(r->method, "POST"))
    return srv_error(r, 405, "MethodNotAllowed",
                     "RDMA control requests are POSTs.");
  /* Declined whatever the request says: there is no engine to prepare a
   * session with. Content-Length: 0 and no body, as §3.1 requires. */
  r->bytes_out = 0;
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (resp)
    MHD_add_response_header(resp, "X-Amz-Rdma-Protocol-Status", "unsupported");
  return srv_queue(r, 501, resp);
}
