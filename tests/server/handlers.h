/* handlers.h - the S3 operations of hipobj-server, one function each,
 * called by http.c once the request is authenticated and its body (if any)
 * received and checked. `*_begin` functions run before the body arrives
 * and set up where it goes. */
#ifndef HIPOBJ_SERVER_HANDLERS_H
#define HIPOBJ_SERVER_HANDLERS_H

#include "storage.h"

/* objects.c */
int put_object_begin(struct req *r);
enum MHD_Result h_put_object(struct req *r);
enum MHD_Result h_get_object(struct req *r); /* GET and HEAD */
enum MHD_Result h_delete_object(struct req *r);
enum MHD_Result h_delete_objects(struct req *r);
enum MHD_Result h_create_bucket(struct req *r);
enum MHD_Result h_delete_bucket(struct req *r);
enum MHD_Result h_head_bucket(struct req *r);
enum MHD_Result h_get_location(struct req *r);
enum MHD_Result h_get_versioning(struct req *r);
/* A body of known length: Content-Length, or HTTP chunked (SDKs send
 * aws-chunked bodies so, with x-amz-decoded-content-length). */
int has_body_length(const struct req *r);
/* 400 EntityTooLarge: above --max-put-size (5 GiB), declared or streamed. */
int too_large(struct req *r);
/* Content-Type, x-amz-meta-* and the other headers kept with an object. */
int collect_object_headers(struct req *r, struct obj_meta *m);
void add_object_headers(struct MHD_Response *resp, const struct obj_meta *m);

/* multipart.c */
int upload_part_begin(struct req *r);
enum MHD_Result h_create_mpu(struct req *r);
enum MHD_Result h_upload_part(struct req *r);
enum MHD_Result h_complete_mpu(struct req *r);
enum MHD_Result h_abort_mpu(struct req *r);
enum MHD_Result h_list_parts(struct req *r);
/* Commits a complete part file as part r->part_number of r->upload_id:
 * 0, -ENOENT (no such upload) or -errno. */
int part_store(struct req *r, const char *data_tmp, struct obj_meta *m);
/* UploadPartCopy's part number and upload: 0, or -1 after req_fail. */
int upload_part_copy_check(struct req *r);

/* copy.c */
enum MHD_Result h_copy_object(struct req *r);
enum MHD_Result h_upload_part_copy(struct req *r);

/* Upload ids are 32 lower-case hex digits. */
int valid_upload_id(const char *id);
/* Loads an upload's info; checks it belongs to r->key (when set). 0,
 * -ENOENT or -ENOMEM. */
int load_upload(struct req *r, const char *id, struct obj_meta *info);
/* <el><ID/><DisplayName/></el> of the request's credential. */
void owner_xml(struct hbuf *x, const char *el, const struct req *r);

/* listing.c */
enum MHD_Result h_list_buckets(struct req *r);
enum MHD_Result h_list_objects(struct req *r); /* ListObjects v1 and v2 */
enum MHD_Result h_list_uploads(struct req *r);
/* max-keys style parameter: default when absent, capped at `cap`. */
int list_limit(struct req *r, const char *name, unsigned cap, unsigned *out);

#endif
