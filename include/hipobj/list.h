/* hipobj/list.h - part of the public API of hipObject: ListObjectsV2, one page
 * per call. Include <hipobj.h>, which includes this file where it belongs
 * (after the declarations it uses); the split only keeps each file readable. */
#ifndef HIPOBJ_PUBLIC_LIST_H
#define HIPOBJ_PUBLIC_LIST_H

#ifndef HIPOBJ_H
#error "include <hipobj.h>, not <hipobj/list.h>"
#endif

/* ------------------------------------------------------------------------ */
/* Listing                                                                  */
/* ------------------------------------------------------------------------ */

/** Options of hipobj_s3_list(). */
struct hipobj_list_opts {
  size_t struct_size;    /**< sizeof(struct hipobj_list_opts). */
  const char *prefix;    /**< Only keys starting with this. */
  const char *delimiter; /**< Group keys into common prefixes (e.g. "/"). */
  const char *continuation_token; /**< From hipobj_list_page_next_token(). */
  const char *start_after;        /**< List keys after this one. */
  unsigned max_keys;              /**< Page size; 0: server default (1000). */
};
#define HIPOBJ_LIST_OPTS_INIT                                                  \
  { .struct_size = sizeof(struct hipobj_list_opts) }

/** One page of a ListObjectsV2 answer. */
struct hipobj_list_page;

/** ListObjectsV2: one page. Follow hipobj_list_page_next_token() for more. */
HIPOBJ_API int hipobj_s3_list(struct hipobj_client *client, const char *bucket,
                              const struct hipobj_list_opts *opts,
                              struct hipobj_list_page **out,
                              struct hipobj_error *err);
/** Frees a page. NULL is allowed. */
HIPOBJ_API void hipobj_list_page_free(struct hipobj_list_page *page);
/** Number of objects in the page. */
HIPOBJ_API size_t hipobj_list_page_count(const struct hipobj_list_page *page);
/** Key of object i (valid while the page lives). */
HIPOBJ_API const char *hipobj_list_page_key(const struct hipobj_list_page *page,
                                            size_t i);
/** Size of object i. */
HIPOBJ_API uint64_t hipobj_list_page_size(const struct hipobj_list_page *page,
                                          size_t i);
/** ETag of object i. */
HIPOBJ_API const char *
hipobj_list_page_etag(const struct hipobj_list_page *page, size_t i);
/** Last-modified of object i, Unix time. */
HIPOBJ_API int64_t hipobj_list_page_mtime(const struct hipobj_list_page *page,
                                          size_t i);
/** Number of common prefixes (with a delimiter). */
HIPOBJ_API size_t
hipobj_list_page_prefix_count(const struct hipobj_list_page *page);
/** Common prefix i. */
HIPOBJ_API const char *
hipobj_list_page_prefix(const struct hipobj_list_page *page, size_t i);
/** Continuation token for the next page, NULL when this is the last page. */
HIPOBJ_API const char *
hipobj_list_page_next_token(const struct hipobj_list_page *page);

#endif /* HIPOBJ_PUBLIC_LIST_H */
