/** @file
 * hipobj/cancel.h - part of the public API of hipObject: cancellation
 * tokens, which stop blocking transfers from another thread. Include
 * <hipobj.h>, which includes this file where it belongs (after the
 * declarations it uses); the split only keeps each file readable. */
#ifndef HIPOBJ_PUBLIC_CANCEL_H
#define HIPOBJ_PUBLIC_CANCEL_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/cancel.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Cancellation tokens                                                      */
/* ------------------------------------------------------------------------ */

/* Tokens are made, set and freed here; the options of hipobj_s3_get()
 * and hipobj_s3_put() (and their _start forms) carry them. */
/** Creates a token, not set. HIPOBJ_E_OUT_OF_MEMORY, or
 *  HIPOBJ_E_INVALID_ARGUMENT when out is NULL. */
HIPOBJ_API int hipobj_cancel_create(struct hipobj_cancel **out);
/** Sets the token. One atomic store: async-signal-safe, so a signal
 *  handler may call it. NULL is ignored. */
HIPOBJ_API void hipobj_cancel_set(struct hipobj_cancel *token);
/** Non-zero once the token is set (0 for NULL). */
HIPOBJ_API int hipobj_cancel_is_set(const struct hipobj_cancel *token);
/** Frees a token that no transfer uses any more. NULL is allowed. */
HIPOBJ_API void hipobj_cancel_free(struct hipobj_cancel *token);

#endif
