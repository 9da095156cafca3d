/** @file
 * hipobj/helpers.h - part of the public API of hipObject: RDMA information, the
 * token-only API, sizes. Include <hipobj.h>, which includes this file where it
 * belongs (after the declarations it uses); the split only keeps each file
 * readable. */
#ifndef HIPOBJ_PUBLIC_HELPERS_H
#define HIPOBJ_PUBLIC_HELPERS_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/helpers.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/** Text describing the RDMA devices, ports and GIDs (index, type,
 *  address), MTU, and the choice the library would make, like ibv_devinfo;
 *  "no RDMA device" with the reason when there is none. Free the text with
 *  hipobj_free(). */
HIPOBJ_API int hipobj_rdma_info(char **text, struct hipobj_error *err);
/** Frees memory the library handed over (hipobj_rdma_info's text). */
HIPOBJ_API void hipobj_free(void *p);

/** Parses a size such as "5MiB", "8M", "1.5GiB", "5242880" (IEC and SI
 *  suffixes, case-insensitive, B optional). */
HIPOBJ_API int hipobj_parse_size(const char *text, uint64_t *out);

/** Token-only API for applications that send the S3 request with their own
 *  client (cuObject single-request mode, wire spec §7.2): writes the value
 *  of the `x-amz-rdma-token` header (the 81-character cuObject descriptor
 *  plus NUL, so token_size >= 82) for mem, which must lie inside a buffer
 *  registered with hipobj_buffer_register(), at most 4 GiB - 1 bytes. The
 *  request must sign that header and carry an empty body.
 *
 *  The descriptor names a DC target: on first use for a registration the
 *  library creates an mlx5 DCT (DC key 0xffeeddcc) on the client's RDMA
 *  device and registers the buffer again with remote read and write (a PUT
 *  is the server's RDMA READ of it), so any holder of the token and the DC
 *  key can read and write the whole registered buffer until
 *  hipobj_buffer_deregister() or hipobj_client_free() removes both.
 *  The server must have an mlx5 DC initiator. Needs a build with DC
 *  (meson -Ddc) and an mlx5 (ConnectX) device; this path is untested (the
 *  project has no ConnectX hardware).
 *
 *  HIPOBJ_E_UNSUPPORTED names the cause: "built without DC support", no
 *  RDMA device (or RDMA off), or "RDMA device rxe0 is not an mlx5 (ConnectX)
 *  device". HIPOBJ_E_INVALID_ARGUMENT for NULL arguments, a short token
 *  buffer, a range over 4 GiB - 1 or outside every registered buffer.
 *  A failing verbs call is reported by name with its errno text. token is
 *  set to "" on failure. */
HIPOBJ_API int hipobj_rdma_token(struct hipobj_client *client,
                                 const struct hipobj_mem *mem, char *token,
                                 size_t token_size, struct hipobj_error *err);
/** Interprets the `x-amz-rdma-reply` value of a single-request-mode answer
 *  (wire spec §7.2); NULL or "" when the header was absent. *http_status
 *  (may be NULL) gets the code (200, 204, 206, 501; 200 for the legacy
 *  "ok"), 0 otherwise. Returns:
 *  - HIPOBJ_OK: "200", "204", "206", "ok" or "200:<token>": the bytes moved
 *    by RDMA;
 *  - HIPOBJ_E_UNSUPPORTED: "501", the only decline: a GET's body holds the
 *    object, a PUT was not stored (send it again over HTTP without the
 *    token);
 *  - HIPOBJ_E_SERVER_ERROR: the legacy "err" (the transfer failed);
 *  - HIPOBJ_E_PROTOCOL: header absent (RDMA was not used; not a decline: a
 *    PUT may have stored an empty body) or malformed. */
HIPOBJ_API int hipobj_rdma_parse_reply(const char *x_amz_rdma_reply_value,
                                       int *http_status,
                                       struct hipobj_error *err);

#endif /* HIPOBJ_PUBLIC_HELPERS_H */
