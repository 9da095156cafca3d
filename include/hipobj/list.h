/** @file
 * hipobj/list.h - part of the public API of hipObject: ListObjectsV2, one page
 * per call; ListBuckets; ListMultipartUploads. Include <hipobj.h>, which
 * includes this file where it belongs (after the declarations it uses); the
 * split only keeps each file readable. */
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
/** Initialiser for struct hipobj_list_opts. */
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

/* ------------------------------------------------------------------------ */
/* Buckets                                                                  */
/* ------------------------------------------------------------------------ */

/** The buckets of the account (ListBuckets). */
struct hipobj_bucket_list;

/** ListBuckets: every bucket the credentials own, following the pages of
 *  servers that page the answer. */
HIPOBJ_API int hipobj_s3_list_buckets(struct hipobj_client *client,
                                      struct hipobj_bucket_list **out,
                                      struct hipobj_error *err);
/** Frees a bucket list. NULL is allowed. */
HIPOBJ_API void hipobj_bucket_list_free(struct hipobj_bucket_list *list);
/** Number of buckets in the list. */
HIPOBJ_API size_t
hipobj_bucket_list_count(const struct hipobj_bucket_list *list);
/** Name of bucket i (valid while the list lives); NULL when out of range. */
HIPOBJ_API const char *
hipobj_bucket_list_name(const struct hipobj_bucket_list *list, size_t i);
/** Creation time of bucket i, Unix time; 0 when the server gave none. */
HIPOBJ_API int64_t
hipobj_bucket_list_ctime(const struct hipobj_bucket_list *list, size_t i);

/* ------------------------------------------------------------------------ */
/* Multipart uploads in progress                                            */
/* ------------------------------------------------------------------------ */

/** Options of hipobj_s3_list_uploads(). */
struct hipobj_upload_list_opts {
  size_t struct_size;     /**< sizeof(struct hipobj_upload_list_opts). */
  const char *prefix;     /**< Only uploads of keys starting with this. */
  const char *key_marker; /**< From hipobj_upload_page_next_key_marker(). */
  const char
      *upload_id_marker; /**< From
                            hipobj_upload_page_next_upload_id_marker(). */
  unsigned max_uploads;  /**< Page size; 0: server default (1000). */
};
/** Initialiser for struct hipobj_upload_list_opts. */
#define HIPOBJ_UPLOAD_LIST_OPTS_INIT                                           \
  { .struct_size = sizeof(struct hipobj_upload_list_opts) }

/** One page of a ListMultipartUploads answer. */
struct hipobj_upload_page;

/** ListMultipartUploads: one page of the multipart uploads started and
 *  neither completed nor aborted in a bucket (their parts cost storage).
 *  Abort one with hipobj_mpu_open() and hipobj_mpu_abort(). Follow
 *  hipobj_upload_page_next_key_marker() for more. */
HIPOBJ_API int
hipobj_s3_list_uploads(struct hipobj_client *client, const char *bucket,
                       const struct hipobj_upload_list_opts *opts,
                       struct hipobj_upload_page **out,
                       struct hipobj_error *err);
/** Frees a page. NULL is allowed. */
HIPOBJ_API void hipobj_upload_page_free(struct hipobj_upload_page *page);
/** Number of uploads in the page. */
HIPOBJ_API size_t
hipobj_upload_page_count(const struct hipobj_upload_page *page);
/** Key of upload i (valid while the page lives); NULL when out of range. */
HIPOBJ_API const char *
hipobj_upload_page_key(const struct hipobj_upload_page *page, size_t i);
/** Upload id of upload i; NULL when out of range. */
HIPOBJ_API const char *
hipobj_upload_page_upload_id(const struct hipobj_upload_page *page, size_t i);
/** When upload i was started, Unix time; 0 when the server gave none. */
HIPOBJ_API int64_t
hipobj_upload_page_initiated(const struct hipobj_upload_page *page, size_t i);
/** The key marker of the next page, NULL when this is the last page. */
HIPOBJ_API const char *
hipobj_upload_page_next_key_marker(const struct hipobj_upload_page *page);
/** The upload id marker of the next page ("" when the server sent none),
 *  NULL when this is the last page. */
HIPOBJ_API const char *
hipobj_upload_page_next_upload_id_marker(const struct hipobj_upload_page *page);

#endif /* HIPOBJ_PUBLIC_LIST_H */
