/* metacache.h - the memory mode's cache of object metadata text, and of
 * small objects' bytes, pinned to the data file they were read with
 * (metacache.c says why that is safe). */
#ifndef HIPOBJ_SERVER_METACACHE_H
#define HIPOBJ_SERVER_METACACHE_H

#include <stddef.h>
#include <sys/stat.h>

#include "src/base/buf.h"

struct metacache;

struct metacache *mc_create(void);
void mc_free(struct metacache *c);
/* Appends to out the text kept for bucket's object name whose data file
 * is st (fstat of the open data file), and when body is not NULL the
 * object's bytes to body if they are kept too: 1 both, 0 the text only,
 * -1 none (or c NULL, or out of memory). */
int mc_get(struct metacache *c, const char *bucket, const char *name,
           const struct stat *st, struct hbuf *out, struct hbuf *body);
/* Keeps text as the metadata of the data file st (c NULL: nothing). */
void mc_put(struct metacache *c, const char *bucket, const char *name,
            const struct stat *st, const char *text, size_t len);
/* Keeps the bytes of the object whose text is kept for the data file st
 * (read from that file), when there are at most MC_BODY_MAX of them and
 * the budget of all kept bytes has room; else nothing. */
#define MC_BODY_MAX ((size_t)64 * 1024)
void mc_put_body(struct metacache *c, const char *bucket, const char *name,
                 const struct stat *st, const void *data, size_t len);

#endif
