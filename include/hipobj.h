/** @file
 * hipobj.h - public API of hipObject: S3 objects moved between S3-compatible
 * storage and host or GPU memory.
 *
 * Conventions (see docs/threading.md and docs/architecture.md):
 * - Every function returns an int status: HIPOBJ_OK (0) or an enum
 * hipobj_status value. S3 error codes ("NoSuchKey", ...) are data in struct
 * hipobj_error.
 * - Option and result structs (struct hipobj_client_config, _get_opts,
 *   _put_opts, _xfer_opts, _list_opts, _upload_list_opts, _copy_opts,
 *   _xfer_result, _object_info,
 *   _gpu_platform_info, _gpu_device_info) start with `size_t struct_size`,
 *   set by their initialiser: struct hipobj_X is initialised with
 *   HIPOBJ_X_INIT, which zeroes every other field. Zero/NULL fields mean
 *   "default"; a NULL options pointer means all defaults. struct_size lets
 *   a program and a library built from different versions of this header
 *   work together (the rule of the Linux kernel's copy_struct_from_user):
 *   - fields are only ever appended, and zero keeps the behaviour from
 *     before the field existed;
 *   - a smaller struct (an older program), down to sizeof(size_t), is
 *     read only within struct_size, the fields it lacks taking their
 *     defaults, and a result is written only within struct_size;
 *   - a larger struct (a newer program) is accepted when every byte of
 *     options past the library's struct is zero, and refused with
 *     HIPOBJ_E_INVALID_ARGUMENT naming the struct otherwise (the library
 *     would ignore an option it does not know); a result's bytes past the
 *     library's struct are set to zero (fields it cannot fill);
 *   - struct_size 0 (a struct not initialised) or below sizeof(size_t) is
 *     HIPOBJ_E_INVALID_ARGUMENT naming the initialiser.
 * - Strings passed in are borrowed for the duration of the call (the client
 *   copies what it keeps). Objects returned through `**out` are owned by the
 *   caller and released with their _free function.
 * - `err` arguments are optional (NULL allowed); when given they receive the
 *   details of a failure and are cleared on success.
 *
 * Names:
 * - Every public name begins with hipobj_ or HIPOBJ_ (and the libraries
 *   export no other symbol).
 * - A function on an object is `hipobj_<object>_<verb>`: hipobj_client_create,
 *   hipobj_xfer_wait, hipobj_mpu_complete (the step-by-step multipart calls
 *   are all hipobj_mpu_*), hipobj_list_page_key. The S3 requests on objects
 *   and buckets are `hipobj_s3_<request>` (hipobj_s3_get, _put, _head, _list,
 *   _delete, _create_bucket); an asynchronous form adds _start
 *   (hipobj_s3_get_start). Helpers on no object keep a plain name
 *   (hipobj_strerror, hipobj_parse_size, hipobj_free).
 * - What the library creates is released with `hipobj_<object>_free`, which
 *   accepts NULL; no other verb releases.
 * - struct hipobj_X is initialised with HIPOBJ_X_INIT; the constants of enum
 *   hipobj_X are `HIPOBJ_<X, or a short form of it>_*` (HIPOBJ_RDMA_AUTO).
 * - One setting has one name wherever it appears: rdma_policy in the client
 *   configuration and in the GET and PUT options alike.
 */
#ifndef HIPOBJ_H
#define HIPOBJ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HIPOBJ_BUILDING) && defined(__GNUC__)
#define HIPOBJ_API __attribute__((visibility("default")))
#else
#define HIPOBJ_API
#endif

/* HIPOBJ_VERSION_MAJOR, _MINOR, _PATCH, _NUM and _STRING: the version of
 * these headers, generated from the project version in meson.build. */
#include "hipobj/version.h"

/** Returns the version of the loaded library as "MAJOR.MINOR.PATCH". */
HIPOBJ_API const char *hipobj_version(void);

#include "hipobj/error.h"

/* ------------------------------------------------------------------------ */
/* Global state                                                             */
/* ------------------------------------------------------------------------ */

/** Initialises the dependencies' global state (libcurl, libxml2). Call once
 *  before creating clients, while no other thread uses those libraries.
 *  Reference counted: each call must be matched by hipobj_global_cleanup(). */
HIPOBJ_API int hipobj_global_init(void);
/** Releases what hipobj_global_init() set up, on the last matching call. */
HIPOBJ_API void hipobj_global_cleanup(void);

/* ------------------------------------------------------------------------ */
/* Memory descriptors                                                       */
/* ------------------------------------------------------------------------ */

/** Where a buffer lives. */
enum hipobj_mem_kind {
  HIPOBJ_MEM_HOST = 0, /**< Ordinary host memory. */
  HIPOBJ_MEM_HIP = 1,  /**< AMD GPU memory (HIP runtime). */
  HIPOBJ_MEM_CUDA = 2, /**< NVIDIA GPU memory (CUDA runtime). */
  HIPOBJ_MEM_FILE = 3, /**< A byte range of an open file (hipobj_mem_file()). */
};

/** Describes a buffer. The memory is borrowed for the duration of a call.
 *  Build it with hipobj_mem_host(), hipobj_mem_gpu() or hipobj_mem_file()
 *  (they set struct_size); a descriptor whose struct_size stops after `len`
 *  (an older program) describes host or GPU memory. */
struct hipobj_mem {
  size_t struct_size;        /**< sizeof(struct hipobj_mem). */
  enum hipobj_mem_kind kind; /**< Where the memory lives. */
  int device;                /**< GPU ordinal for HIP/CUDA; else ignored. */
  void *ptr;       /**< First byte of host or GPU memory; NULL for a file.
                        May be NULL only when len is 0. */
  size_t len;      /**< Size in bytes. */
  int fd;          /**< HIPOBJ_MEM_FILE: the open file (borrowed). */
  uint64_t offset; /**< HIPOBJ_MEM_FILE: the file offset of byte 0. */
};

/** Initialiser of a descriptor the library fills (hipobj_mem_classify(),
 *  hipobj_gpu_alloc()). */
#define HIPOBJ_MEM_INIT                                                        \
  { .struct_size = sizeof(struct hipobj_mem), .fd = -1 }

/** A host-memory descriptor over [ptr, ptr+len). */
static inline struct hipobj_mem hipobj_mem_host(void *ptr, size_t len) {
  struct hipobj_mem m = {sizeof m, HIPOBJ_MEM_HOST, 0, ptr, len, -1, 0};
  return m;
}

/** A descriptor of GPU memory [ptr, ptr+len) of `kind` (HIPOBJ_MEM_HIP or
 *  HIPOBJ_MEM_CUDA) on device ordinal `device`. */
static inline struct hipobj_mem
hipobj_mem_gpu(enum hipobj_mem_kind kind, int device, void *ptr, size_t len) {
  struct hipobj_mem m = {sizeof m, kind, device, ptr, len, -1, 0};
  return m;
}

/** The bytes [off, off+len) of m, of the same kind (a file's offset moves,
 *  a pointer advances). The caller keeps the window inside m. */
static inline struct hipobj_mem hipobj_mem_window(const struct hipobj_mem *m,
                                                  uint64_t off, size_t len) {
  struct hipobj_mem w = *m;
  w.struct_size = sizeof w;
  if (m->kind == HIPOBJ_MEM_FILE) {
    w.offset = m->offset + off;
  } else {
    w.ptr = (char *)m->ptr + off;
  }
  w.len = len;
  return w;
}

/** A descriptor of the bytes [offset, offset+len) of the open file fd.
 *
 *  Transfers move file data with pread()/pwrite() through the client's
 *  bounded staging pool (hipobj_client_config.staging_pool_bytes), the way
 *  they stage GPU memory, so the process's memory does not grow with the
 *  object; the file's position is never used or changed. fd is borrowed:
 *  the library neither closes nor duplicates it.
 *
 *  On tmpfs (/dev/shm), in a process allowed 8 or more CPUs (affinity
 *  mask and cgroup CPU quota), each part maps its range of the file
 *  instead (parts of up to 64 MiB whole, larger ones in windows of at most
 *  4 MiB behind the pool): a PUT sends the body from the mapping, a GET
 *  copies it into the mapping, a copy per byte fewer than going through a
 *  chunk, and a GET's parts in flight write in parallel where pwrite makes
 *  one file's writes take turns. A GET maps only where the kernel has
 *  MADV_POPULATE_WRITE (Linux 5.14): the file is grown to cover the range,
 *  then its pages are faulted in by that call, at most 3 writers of a file
 *  at once, so a full tmpfs is an error ("fallocate: No space left on
 *  device", the cause asked of fallocate() once the fault fails), not
 *  SIGBUS; a GET target must be open O_RDWR (O_WRONLY keeps pwrite). A
 *  file that another process shrinks during the transfer, which the rules
 *  below forbid anyway, would raise SIGBUS there. HIPOBJ_FILE_MAP=1 maps
 *  with fewer CPUs too; HIPOBJ_FILE_MAP=0 never maps.
 *
 *  - As a GET destination, fd must be open for writing (O_WRONLY or
 *    O_RDWR); the object's bytes are written at offset.., extending the
 *    file as needed (len is the capacity, as for memory). A failed write
 *    ends the call with HIPOBJ_E_IO naming the cause ("file write failed:
 *    pwrite: No space left on device"), never retried; bytes already
 *    written stay in the file. The file must not shrink during the call.
 *  - As a PUT or UploadPart source, fd must be open for reading and
 *    [offset, offset+len) must lie inside the file
 *    (HIPOBJ_E_INVALID_ARGUMENT otherwise). The file must not shrink during
 *    the call (a short read is HIPOBJ_E_IO).
 *
 *  Pipes, sockets and directories are refused (HIPOBJ_E_INVALID_ARGUMENT),
 *  and so is a GET target opened with O_APPEND (pwrite would ignore the
 *  offset). hipobj_gpu_alloc() and hipobj_gpu_copy() do not take file
 *  memory. Results report HIPOBJ_PATH_HTTP_STAGED, or HIPOBJ_PATH_HTTP
 *  when every part moved through a mapping of the file. */
static inline struct hipobj_mem hipobj_mem_file(int fd, uint64_t offset,
                                                size_t len) {
  struct hipobj_mem m = {sizeof m, HIPOBJ_MEM_FILE, 0, NULL, len, fd, offset};
  return m;
}

/* ------------------------------------------------------------------------ */
/* GPU memory                                                               */
/* ------------------------------------------------------------------------ */

/* Every transfer accepts HIP and CUDA device memory in its struct hipobj_mem.
 * The runtimes are loaded at run time (libamdhip64.so, libcuda.so.1) the
 * first time memory of their kind is used, so one build of the library runs
 * on machines with either, both or no GPU runtime; a missing runtime only
 * matters to calls given such memory (HIPOBJ_E_UNSUPPORTED, with the library
 * and the loader's reason in the error detail, logged once). Over HTTP, GPU
 * data is staged through a bounded pool of pinned host chunks (see
 * hipobj_client_config.staging_pool_bytes), overlapping the GPU copies with
 * the network; results then report HIPOBJ_PATH_HTTP_STAGED. A descriptor
 * whose kind is HIPOBJ_MEM_HOST is trusted to be host memory: pass pointers
 * of unknown origin through hipobj_mem_classify() first. A failed GPU
 * runtime call (a copy, say) ends the call with HIPOBJ_E_IO, never retried,
 * its message naming the runtime function and error ("GPU copy failed:
 * cuMemcpyHtoDAsync: CUDA_ERROR_..."). */

/** Builds a descriptor for a bare pointer: asks each GPU runtime that can be
 *  loaded whether it owns ptr, and describes host memory when none does
 *  (missing runtimes are not an error here). Fails with
 *  HIPOBJ_E_INVALID_ARGUMENT when [ptr, ptr+len) runs past the end of the
 *  GPU allocation holding ptr. ptr may be NULL only when len is 0. */
HIPOBJ_API int hipobj_mem_classify(void *ptr, size_t len,
                                   struct hipobj_mem *out,
                                   struct hipobj_error *err);

/** Allocates len bytes of device memory of `kind` on GPU `device`
 *  (cuMemAlloc / hipMalloc), or plain host memory for HIPOBJ_MEM_HOST, and
 *  describes it in *out (len 0 gives a NULL pointer). For programs that must
 *  not include the GPU runtimes' headers, such as the hipobj tool. Free with
 *  hipobj_gpu_free(). */
HIPOBJ_API int hipobj_gpu_alloc(enum hipobj_mem_kind kind, int device,
                                size_t len, struct hipobj_mem *out,
                                struct hipobj_error *err);
/** Frees memory from hipobj_gpu_alloc() and clears mem->ptr and mem->len.
 *  NULL and an empty descriptor are allowed. */
HIPOBJ_API void hipobj_gpu_free(struct hipobj_mem *mem);
/** Copies src->len bytes from src to dst (host to GPU, GPU to host, GPU to
 *  GPU of one kind, host to host) and waits for the copy to finish. Fails
 *  with HIPOBJ_E_BUFFER_TOO_SMALL when dst->len < src->len. */
HIPOBJ_API int hipobj_gpu_copy(const struct hipobj_mem *dst,
                               const struct hipobj_mem *src,
                               struct hipobj_error *err);

/** What hipobj_gpu_platform_info() reports about the platform of one memory
 *  kind. Initialise with HIPOBJ_GPU_PLATFORM_INFO_INIT. */
struct hipobj_gpu_platform_info {
  size_t struct_size; /**< sizeof(struct hipobj_gpu_platform_info). */
  int available;      /**< Non-zero: the runtime loaded and initialised. */
  int device_count;   /**< Devices the runtime sees (0 for host). */
  char name[16];      /**< "host", "hip", "cuda". */
  char library[64];   /**< The runtime library looked for, e.g.
                           "libcuda.so.1". */
  char version[128];  /**< Library loaded and runtime version, "" when not
                           available. */
  char reason[512];   /**< Why it is not available (names the library and
                           the loader's or runtime's error), "" when it is. */
};
/** Initialiser for struct hipobj_gpu_platform_info. */
#define HIPOBJ_GPU_PLATFORM_INFO_INIT                                          \
  { .struct_size = sizeof(struct hipobj_gpu_platform_info) }

/** Whether the runtime for `kind` can be used, and why not. Loads the
 *  runtime if that has not been tried yet. Returns HIPOBJ_OK also when the
 *  platform is unavailable (see out->available). */
HIPOBJ_API int hipobj_gpu_platform_info(enum hipobj_mem_kind kind,
                                        struct hipobj_gpu_platform_info *out,
                                        struct hipobj_error *err);

/** What hipobj_gpu_device_info() reports about one GPU. Initialise with
 *  HIPOBJ_GPU_DEVICE_INFO_INIT. */
struct hipobj_gpu_device_info {
  size_t struct_size;        /**< sizeof(struct hipobj_gpu_device_info). */
  char name[128];            /**< Device name, "" when the runtime has none. */
  char pci_bus_id[32];       /**< PCIe address, e.g. "0000:3b:00.0". */
  int dmabuf;                /**< Non-zero: device memory can be exported as
                                  a dma-buf (for RDMA registration). */
  char dmabuf_reason[512];   /**< Why not, "" when it can. */
  char rdma_nic[96];         /**< The RDMA NIC (and port) transfers of this
                                  GPU's memory use: the nearest over PCIe;
                                  "" when RDMA is unavailable. */
  char rdma_nic_reason[320]; /**< Why that NIC, or why none. */
};
/** Initialiser for struct hipobj_gpu_device_info. */
#define HIPOBJ_GPU_DEVICE_INFO_INIT                                            \
  { .struct_size = sizeof(struct hipobj_gpu_device_info) }

/** Name, PCIe bus id, dma-buf export support and the RDMA NIC paired with
 *  GPU `device` of `kind` (HIPOBJ_MEM_HIP or HIPOBJ_MEM_CUDA). */
HIPOBJ_API int hipobj_gpu_device_info(enum hipobj_mem_kind kind, int device,
                                      struct hipobj_gpu_device_info *out,
                                      struct hipobj_error *err);

/* ------------------------------------------------------------------------ */
/* Client                                                                   */
/* ------------------------------------------------------------------------ */

/** A connection to one S3 endpoint with one set of credentials. Thread-safe:
 *  any number of threads may run operations on one client at once. */
struct hipobj_client;

/** URL style for bucket names. */
enum hipobj_addressing {
  HIPOBJ_ADDRESSING_AUTO =
      0, /**< Path style for a custom endpoint, virtual-hosted for AWS. */
  HIPOBJ_ADDRESSING_PATH = 1,    /**< http://endpoint/bucket/key */
  HIPOBJ_ADDRESSING_VIRTUAL = 2, /**< http://bucket.endpoint/key */
};

/** Log levels for hipobj_client_config.log_level and HIPOBJ_LOG. */
enum hipobj_log_level {
  HIPOBJ_LOG_DEFAULT =
      0, /**< Use HIPOBJ_LOG from the environment, else WARN. */
  HIPOBJ_LOG_ERROR = 1,
  HIPOBJ_LOG_WARN = 2,
  HIPOBJ_LOG_INFO = 3,
  HIPOBJ_LOG_DEBUG = 4,
  HIPOBJ_LOG_NONE = 5,
};

/** Receives one log line (no trailing newline). May be called from any
 *  thread, concurrently. Never receives secrets. */
typedef void (*hipobj_log_fn)(void *user, enum hipobj_log_level level,
                              const char *line);

/** Data path policy for RDMA (client default and per request). */
enum hipobj_rdma_policy {
  HIPOBJ_RDMA_DEFAULT =
      0, /**< Request: the client's; client: HIPOBJ_RDMA env, else AUTO. */
  HIPOBJ_RDMA_AUTO =
      1, /**< RDMA when a device and a willing server exist, else HTTP. */
  HIPOBJ_RDMA_OFF = 2, /**< Always HTTP. */
  HIPOBJ_RDMA_REQUIRE =
      3, /**< RDMA or a clear HIPOBJ_E_UNSUPPORTED error, never HTTP. */
};

/** How uploaded object data is protected between this process and the
 *  server's disk (client default). */
enum hipobj_integrity {
  /** Uploads carry their CRC32C (x-amz-checksum-crc32c) and are sent as
   *  UNSIGNED-PAYLOAD once the server has shown that it checks CRC32C: a
   *  multipart upload when the answer to its CreateMultipartUpload
   *  confirms the algorithm, a single PUT when an earlier answer of this
   *  client echoed a CRC32C (until then it is signed as well). Otherwise,
   *  and for resumable uploads (keep_failed_upload), the step-by-step
   *  multipart calls and RDMA parts, as SHA256. */
  HIPOBJ_INTEGRITY_AUTO = 0,
  /** The payload's SHA-256 is signed (x-amz-content-sha256): the server
   *  refuses a body changed on the way, even by someone on the path of a
   *  plain-HTTP connection. Costs SHA-256 on both ends. */
  HIPOBJ_INTEGRITY_SHA256 = 1,
  /** UNSIGNED-PAYLOAD and no checksum: integrity rests on TCP/TLS. */
  HIPOBJ_INTEGRITY_NONE = 2,
};

/** Whether a GET asks for the checksums the server keeps with the object
 *  (x-amz-checksum-mode: ENABLED) and verifies the bytes against them
 *  (README "Checksums"). */
enum hipobj_checksum_mode {
  /** GET options: the client's. Client: HIPOBJ_CHECKSUM_MODE (verify or
   *  off), else VERIFY. */
  HIPOBJ_CHECKSUM_MODE_DEFAULT = 0,
  /** Verify what can be verified: a whole object against its full-object
   *  checksum (CRC-64/NVME across parts; CRC32C, CRC32 or SHA-256 when it
   *  comes in one answer). A mismatch fails with HIPOBJ_E_INTEGRITY. */
  HIPOBJ_CHECKSUM_MODE_VERIFY = 1,
  /** Neither ask nor verify. */
  HIPOBJ_CHECKSUM_MODE_OFF = 2,
};

/** Client configuration. Initialise with HIPOBJ_CLIENT_CONFIG_INIT; every
 *  zero/NULL field takes its default. Strings are copied by
 *  hipobj_client_create(). Where a field is NULL the AWS environment is used,
 *  as the AWS CLI does: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION /
 *  AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 *  AWS_SESSION_TOKEN, then AWS_PROFILE (default "default") in
 *  AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
 *  (~/.aws/config). */
struct hipobj_client_config {
  size_t struct_size;        /**< sizeof(struct hipobj_client_config). */
  const char *endpoint_url;  /**< e.g. "http://127.0.0.1:9000"; default AWS for
                                the region. */
  const char *region;        /**< Signing region; default "us-east-1". */
  const char *access_key_id; /**< Credentials; NULL: environment/profile. */
  const char *secret_access_key; /**< Never logged. */
  const char *session_token;     /**< Optional, sent as x-amz-security-token. */
  const char *profile; /**< Profile name in the AWS files; NULL: AWS_PROFILE or
                          "default". */
  int anonymous; /**< Non-zero: send unsigned requests, ignore credentials. */
  enum hipobj_addressing addressing; /**< Default: AUTO. */
  int tls_skip_verify;         /**< Non-zero disables TLS verification (default:
                                  verify). */
  const char *ca_bundle;       /**< CA file; NULL: the system store. */
  unsigned connect_timeout_ms; /**< Default 10000. */
  unsigned request_timeout_ms; /**< Deadline of each attempt of a request
                                  (connect to last byte); default 0: none,
                                  so a slow but moving transfer may run
                                  as long as it keeps above
                                  low_speed_bytes_per_s. */
  unsigned stall_timeout_ms;   /**< Stall detection: abort an attempt whose
                                  transfer rate stays below
                                  low_speed_bytes_per_s for this long
                                  (rounded up to whole seconds);
                                  HIPOBJ_E_TIMEOUT, retried. Default
                                  30000. The RDMA data path's control
                                  requests are bounded by the session's
                                  deadline instead: READY moves no bytes
                                  while the data goes by RDMA. */
  unsigned max_attempts; /**< Attempts per request incl. the first; default 4; 1
                            = no retry. */
  unsigned retry_base_ms; /**< First backoff step; default 100 (capped at 20 s,
                             full jitter). */
  unsigned max_connections;     /**< Concurrent connections to the endpoint;
                                   default 16. */
  unsigned concurrency;         /**< Parallel parts per transfer; default two
                                   per I/O thread, at least 8, beyond 8 at
                                   most max_connections. */
  uint64_t part_size;           /**< Multipart part size; default 8 MiB. */
  uint64_t multipart_threshold; /**< PUT switches to multipart above this size;
                                   default part_size. */
  /** How uploads are protected: default AUTO (CRC32C checksums where the
   *  server checks them, else a signed SHA-256 of the payload). */
  enum hipobj_integrity integrity;
  /** RDMA data path policy; default: HIPOBJ_RDMA env (auto|off|require),
   *  else AUTO. */
  enum hipobj_rdma_policy rdma_policy;
  /** RDMA device ("mlx5_0" or "rxe0:1"); NULL: HIPOBJ_RDMA_DEVICE, else
   *  chosen (closest to the memory's GPU or the caller's NUMA node). */
  const char *rdma_device;
  /** GID index as decimal text; NULL: HIPOBJ_RDMA_GID_INDEX, else the
   *  IPv4-mapped RoCEv2 GID. */
  const char *rdma_gid_index;
  enum hipobj_log_level
      log_level;              /**< Default: HIPOBJ_LOG env var, else WARN. */
  hipobj_log_fn log_fn;       /**< Default: lines to stderr. */
  void *log_user;             /**< Passed to log_fn. */
  size_t staging_pool_bytes;  /**< Pinned host memory the client may use to
                                   stage GPU data over HTTP, all transfers
                                   together (per GPU platform); allocated on
                                   first use, kept until the client is
                                   destroyed. Transfers wait for chunks when
                                   it is exhausted. Default 8 MiB per part
                                   in flight (concurrency), 32 to 256 MiB;
                                   at least one chunk. */
  size_t staging_chunk_bytes; /**< Size of one staging chunk (the unit of a
                                   GPU copy); default 4 MiB (or the pool
                                   size, if smaller); at least 4 KiB. */
  /** Threads that move the bytes of HTTP requests (each drives its own
   *  libcurl multi handle and its share of max_connections); requests go to
   *  the least busy. Default: HIPOBJ_IO_THREADS, else half the CPUs the
   *  process may use (its affinity mask, cut by a cgroup CPU quota such as
   *  a container's limit), 1 to 8; at most 64. */
  unsigned io_threads;
  /** Stall detection: an attempt whose transfer rate (either direction)
   *  stays below this many bytes per second for stall_timeout_ms fails with
   *  HIPOBJ_E_TIMEOUT naming the rate and the window. Default:
   *  HIPOBJ_LOW_SPEED (a size such as "1KiB"), else 1024; at most 1 GiB.
   *  CompleteMultipartUpload keeps a floor of 1 byte/s whatever is set:
   *  S3 may think for minutes there, sending only whitespace to keep the
   *  connection alive. (Appended last: struct_size keeps older callers.) */
  unsigned low_speed_bytes_per_s;
  /** Whether GETs verify the object's checksums (default: VERIFY, or
   *  HIPOBJ_CHECKSUM_MODE); each GET may say otherwise. */
  enum hipobj_checksum_mode checksum_mode;
  /** A blocking call's small request runs on the calling thread, which
   *  polls for the answer up to this many microseconds before it sleeps
   *  (a wake-up costs about as long as a nearby server's answer), while
   *  recent answers came in under half of it; at most half the CPUs poll
   *  at once. 0: HIPOBJ_BUSY_POLL_US, else 100; negative: never; at most
   *  1000. */
  int busy_poll_us;
};

/** Initialiser for struct hipobj_client_config. */
#define HIPOBJ_CLIENT_CONFIG_INIT                                              \
  { .struct_size = sizeof(struct hipobj_client_config) }

/** Creates a client. cfg may be NULL (all defaults / environment). Fails with
 *  HIPOBJ_E_CONFIG (and a message naming the missing piece) when the endpoint
 *  or credentials cannot be determined. */
HIPOBJ_API int hipobj_client_create(const struct hipobj_client_config *cfg,
                                    struct hipobj_client **out,
                                    struct hipobj_error *err);
/** Destroys a client. No call on it may be in progress. NULL is allowed. */
HIPOBJ_API void hipobj_client_free(struct hipobj_client *client);
/** The endpoint URL the client resolved (for display). */
HIPOBJ_API const char *
hipobj_client_endpoint(const struct hipobj_client *client);
/** The region the client signs for. */
HIPOBJ_API const char *hipobj_client_region(const struct hipobj_client *client);

/** Registers memory [mem->ptr, mem->ptr+mem->len) with the client's RDMA
 *  device once, so that RDMA transfers of that buffer or of any range
 *  inside it reuse the registration instead of registering (pinning) the
 *  memory for each transfer. Thread-safe. The memory stays registered
 *  until hipobj_buffer_deregister() or hipobj_client_free(); deregister
 *  before freeing it.
 *
 *  GPU memory (HIP, CUDA) is registered through dma-buf on the NIC paired
 *  with its GPU, as the whole allocation holding mem, for GETs and PUTs
 *  alike; deregistering names any range inside it. (Without an explicit
 *  registration the library keeps the dma-buf registrations it makes per
 *  GPU anyway, as long as the runtime tells allocations apart by their
 *  buffer id: an address freed and allocated again is registered anew.)
 *
 *  Returns HIPOBJ_E_UNSUPPORTED with the reason when the client has no
 *  RDMA device (HIPOBJ_RDMA=off included), for files, and for GPU memory
 *  that cannot be exported as a dma-buf; HIPOBJ_E_INVALID_ARGUMENT for an
 *  empty buffer or a host range registered already;
 *  HIPOBJ_E_OUT_OF_MEMORY (or the ibv_reg_mr errno in the detail; ENOMEM
 *  usually means RLIMIT_MEMLOCK) when registering fails. */
HIPOBJ_API int hipobj_buffer_register(struct hipobj_client *client,
                                      const struct hipobj_mem *mem,
                                      struct hipobj_error *err);
/** Deregisters a buffer registered with hipobj_buffer_register(): mem must
 *  name exactly the registered range (HIPOBJ_E_INVALID_ARGUMENT
 *  otherwise). A transfer still using it keeps it until that transfer
 *  returns. Thread-safe. */
HIPOBJ_API int hipobj_buffer_deregister(struct hipobj_client *client,
                                        const struct hipobj_mem *mem,
                                        struct hipobj_error *err);

/* ------------------------------------------------------------------------ */
/* Transfer results                                                         */
/* ------------------------------------------------------------------------ */

/** The path the payload took. */
enum hipobj_data_path {
  HIPOBJ_PATH_NONE = 0, /**< No payload moved. */
  HIPOBJ_PATH_HTTP = 1, /**< HTTP body, host memory. */
  HIPOBJ_PATH_HTTP_STAGED =
      2, /**< HTTP body staged through pinned host memory (GPU). */
  HIPOBJ_PATH_RDMA_DIRECT = 3, /**< RDMA straight into/out of the buffer. */
  HIPOBJ_PATH_RDMA_STAGED = 4, /**< RDMA through pinned host memory (GPU). */
};

/** Name of a data path: "none", "http", "http-staged", "rdma-direct",
 * "rdma-staged". */
HIPOBJ_API const char *hipobj_data_path_name(enum hipobj_data_path path);

/** A checksum a server keeps with an object (x-amz-checksum-*): what a GET
 *  verified the bytes against (struct hipobj_xfer_result.checksum). */
enum hipobj_checksum {
  HIPOBJ_CHECKSUM_NONE = 0,      /**< Nothing was verified. */
  HIPOBJ_CHECKSUM_CRC64NVME = 1, /**< The object's CRC-64/NVME. */
  HIPOBJ_CHECKSUM_CRC32C = 2,    /**< The object's CRC32C (full object). */
  HIPOBJ_CHECKSUM_CRC32 = 3,     /**< The object's CRC32 (full object). */
  HIPOBJ_CHECKSUM_SHA256 = 4,    /**< The object's SHA-256 (full object). */
};

/** Name of a checksum: "none", "crc64nvme", "crc32c", "crc32", "sha256". */
HIPOBJ_API const char *hipobj_checksum_name(enum hipobj_checksum checksum);

#define HIPOBJ_ETAG_MAX 128
#define HIPOBJ_UPLOAD_ID_MAX 1024

/** Filled in by data transfers (GET, PUT, UploadPart). Initialise with
 *  HIPOBJ_XFER_RESULT_INIT; partially filled also on failure. */
struct hipobj_xfer_result {
  size_t struct_size; /**< sizeof(struct hipobj_xfer_result). */
  uint64_t bytes;     /**< Payload bytes moved (GET: written to dst). */
  /** Whole object size when known (GET), else 0; also after
   *  HIPOBJ_E_BUFFER_TOO_SMALL, with etag, when the answer told them, so a
   *  caller can size a buffer and read again pinned to that ETag. */
  uint64_t object_size;
  uint64_t rdma_bytes; /**< Of `bytes`, how many went by RDMA. */
  unsigned retries;    /**< Requests repeated after a retryable failure. */
  unsigned parts;      /**< Multipart parts (0 for a single request). */
  enum hipobj_data_path path; /**< Data path used. */
  double seconds;             /**< Wall time of the call. */
  char etag[HIPOBJ_ETAG_MAX]; /**< ETag of the object / part, quotes kept. */
  char upload_id[HIPOBJ_UPLOAD_ID_MAX]; /**< Multipart upload id kept on failure
                                           (keep_failed_upload). */
  /** GET: the checksum of the whole object that the bytes written were
   *  verified against, by this process (HIPOBJ_CHECKSUM_NONE: none; then
   *  checksum_note says why). A mismatch is HIPOBJ_E_INTEGRITY. */
  enum hipobj_checksum checksum;
  /** GET: that checksum's value as the server sent it (base64). */
  char checksum_value[48];
  /** GET: what was not verified and why, "" when nothing is to say: a
   *  range of the object, no checksum kept by the server, a composite
   *  (per-part) checksum, verification off, GPU memory written by RDMA
   *  (only the server's CRC of what it sent could be checked). */
  char checksum_note[160];
  /** GET: the object's Last-Modified, Unix time (seconds); 0 when the
   *  answer had none (or the data came by RDMA). */
  int64_t last_modified;
};

/** Initialiser for struct hipobj_xfer_result. */
#define HIPOBJ_XFER_RESULT_INIT                                                \
  { .struct_size = sizeof(struct hipobj_xfer_result) }

/* ------------------------------------------------------------------------ */
/* Object operations                                                        */
/* ------------------------------------------------------------------------ */

/** A cancellation token (hipobj/cancel.h): a flag that stops the
 *  transfers whose options carry it, the blocking calls included, from any
 *  thread. Once it is set, each such GET or PUT stops as
 *  hipobj_xfer_cancel() stops a transfer (requests in flight end within
 *  about a second, no new part starts, a multipart upload is aborted on
 *  the server) and returns HIPOBJ_E_CANCELLED; one that begins after it was
 *  set returns that at once. A token may serve any number of transfers and
 *  clients at once; it must outlive them, and it stays set. */
struct hipobj_cancel;

/** Options of hipobj_s3_get(). */
struct hipobj_get_opts {
  size_t struct_size; /**< sizeof(struct hipobj_get_opts). */
  int has_range;      /**< Non-zero: read [offset, offset+length). */
  uint64_t offset;    /**< First byte of the range. */
  uint64_t length;    /**< Range length; 0 with has_range means "to the end". */
  /** Fail with HIPOBJ_E_PRECONDITION unless the object's ETag matches. */
  const char *if_match;
  /** Part size of a parallel GET; 0: the client's part size. A read larger
   *  than one part is split into ranged GETs pinned to the first answer's
   *  ETag (If-Match), several in flight, each landing at its offset. */
  uint64_t part_size;
  /** Parts in flight; 0: the client's concurrency; 1: one request. */
  unsigned concurrency;
  /** RDMA policy of this request; default: the client's. */
  enum hipobj_rdma_policy rdma_policy;
  /** Checksum verification of this GET; default: the client's. */
  enum hipobj_checksum_mode checksum_mode;
  /** Stops this GET once set (struct hipobj_cancel); NULL: none. */
  struct hipobj_cancel *cancel;
};
/** Initialiser for struct hipobj_get_opts. */
#define HIPOBJ_GET_OPTS_INIT                                                   \
  { .struct_size = sizeof(struct hipobj_get_opts) }

/** Reads an object, or a byte range of it, into dst. The bytes land directly
 *  in dst->ptr. The call fails with HIPOBJ_E_BUFFER_TOO_SMALL (writing
 *  nothing past dst->len) when the data does not fit; res->bytes is the
 *  number of bytes written and is only complete when HIPOBJ_OK is returned.
 *  Unless checksum_mode is OFF, a whole object is verified against the
 *  checksum the server keeps with it (res->checksum says which, or
 *  res->checksum_note why none): a mismatch fails with HIPOBJ_E_INTEGRITY,
 *  the bytes already written being wrong. */
HIPOBJ_API int hipobj_s3_get(struct hipobj_client *client, const char *bucket,
                             const char *key, const struct hipobj_mem *dst,
                             const struct hipobj_get_opts *opts,
                             struct hipobj_xfer_result *res,
                             struct hipobj_error *err);

/** Object metadata returned by hipobj_s3_head(). */
struct hipobj_object_info {
  size_t struct_size;         /**< sizeof(struct hipobj_object_info). */
  uint64_t size;              /**< Content length in bytes. */
  int64_t last_modified;      /**< Unix time (seconds), 0 when unknown. */
  char etag[HIPOBJ_ETAG_MAX]; /**< Quoted ETag as the server sent it. */
  char content_type[256];     /**< Content-Type, "" when absent. */
};
/** Initialiser for struct hipobj_object_info. */
#define HIPOBJ_OBJECT_INFO_INIT                                                \
  { .struct_size = sizeof(struct hipobj_object_info) }

/** HeadObject: size, ETag, last-modified and content type of an object.
 *  A HEAD answer has no body, so an error has no S3 code
 *  (hipobj_error_s3_code() is ""): for 400, 403 and 404 the message says
 *  what to check instead (region; keys, clock, permissions; key or
 *  bucket). A ranged GET of one byte gets the code when it matters. */
HIPOBJ_API int hipobj_s3_head(struct hipobj_client *client, const char *bucket,
                              const char *key, struct hipobj_object_info *info,
                              struct hipobj_error *err);

/** Options of hipobj_s3_put(). */
struct hipobj_put_opts {
  size_t struct_size;           /**< sizeof(struct hipobj_put_opts). */
  const char *content_type;     /**< Default "application/octet-stream". */
  uint64_t part_size;           /**< 0: the client's part size. */
  uint64_t multipart_threshold; /**< 0: the client's threshold. */
  unsigned concurrency;         /**< 0: the client's concurrency. */
  int keep_failed_upload; /**< Non-zero: do not abort a failed multipart upload;
                               its id is returned in res->upload_id for
                             resuming. */
  /** RDMA policy of this request; default: the client's. */
  enum hipobj_rdma_policy rdma_policy;
  /** Stops this PUT once set (struct hipobj_cancel); NULL: none. */
  struct hipobj_cancel *cancel;
};
/** Initialiser for struct hipobj_put_opts. */
#define HIPOBJ_PUT_OPTS_INIT                                                   \
  { .struct_size = sizeof(struct hipobj_put_opts) }

/** Writes src as an object. Objects larger than the multipart threshold are
 *  uploaded in parts (CreateMultipartUpload, UploadPart..., Complete); a
 *  failed multipart upload is aborted unless keep_failed_upload is set. */
HIPOBJ_API int hipobj_s3_put(struct hipobj_client *client, const char *bucket,
                             const char *key, const struct hipobj_mem *src,
                             const struct hipobj_put_opts *opts,
                             struct hipobj_xfer_result *res,
                             struct hipobj_error *err);

/** DeleteObject. Deleting a missing key succeeds, as in S3. */
HIPOBJ_API int hipobj_s3_delete(struct hipobj_client *client,
                                const char *bucket, const char *key,
                                struct hipobj_error *err);

/** CreateBucket (in the client's region). The name must follow S3's rules
 *  for new buckets (3 to 63 lower-case letters, digits, dots and dashes,
 *  starting and ending with a letter or digit, no "..", not an IP address):
 *  HIPOBJ_E_INVALID_ARGUMENT naming the rule otherwise. Other calls accept
 *  the older, relaxed names (upper case, '_') that servers may still have. */
HIPOBJ_API int hipobj_s3_create_bucket(struct hipobj_client *client,
                                       const char *bucket,
                                       struct hipobj_error *err);

/** DeleteBucket (the bucket must be empty). */
HIPOBJ_API int hipobj_s3_delete_bucket(struct hipobj_client *client,
                                       const char *bucket,
                                       struct hipobj_error *err);

/* ------------------------------------------------------------------------ */
/* Asynchronous transfers                                                   */
/* ------------------------------------------------------------------------ */

/** A GET or PUT running in the background. hipobj_s3_get() and
 *  hipobj_s3_put() are this API run to completion on the calling thread. */
struct hipobj_xfer;

/** Progress of a transfer: payload bytes moved so far (monotonic, counted
 *  once even when a part is retried) and the total (0 while unknown). Runs
 *  on one of the client's I/O threads, one call at a time per transfer:
 *  return quickly, call no hipobj function that waits. */
typedef void (*hipobj_progress_fn)(void *user, uint64_t bytes_done,
                                   uint64_t bytes_total);

/** Completion of an asynchronous transfer, with its final status. Runs once,
 *  on one of the client's transfer threads, after the result is final: it
 *  may read it with hipobj_xfer_wait() (which then returns at once). It must
 *  not free the transfer. */
typedef void (*hipobj_xfer_done_fn)(struct hipobj_xfer *xfer, int status,
                                    void *user);

/** Callbacks of one asynchronous transfer (all optional). */
struct hipobj_xfer_opts {
  size_t struct_size;          /**< sizeof(struct hipobj_xfer_opts). */
  hipobj_xfer_done_fn done;    /**< Completion callback. */
  hipobj_progress_fn progress; /**< Progress callback. */
  void *user;                  /**< Passed to both. */
};
/** Initialiser for struct hipobj_xfer_opts. */
#define HIPOBJ_XFER_OPTS_INIT                                                  \
  { .struct_size = sizeof(struct hipobj_xfer_opts) }

/** Starts hipobj_s3_get() in the background. Strings and options are
 *  copied; dst must stay valid until the transfer has finished. */
HIPOBJ_API int hipobj_s3_get_start(struct hipobj_client *client,
                                   const char *bucket, const char *key,
                                   const struct hipobj_mem *dst,
                                   const struct hipobj_get_opts *opts,
                                   const struct hipobj_xfer_opts *xopts,
                                   struct hipobj_xfer **out,
                                   struct hipobj_error *err);
/** Starts hipobj_s3_put() in the background (src must stay valid until the
 *  transfer has finished). */
HIPOBJ_API int hipobj_s3_put_start(struct hipobj_client *client,
                                   const char *bucket, const char *key,
                                   const struct hipobj_mem *src,
                                   const struct hipobj_put_opts *opts,
                                   const struct hipobj_xfer_opts *xopts,
                                   struct hipobj_xfer **out,
                                   struct hipobj_error *err);
/** Waits for the transfer to finish; returns its status and fills res and
 *  err (both optional). May be called any number of times. */
HIPOBJ_API int hipobj_xfer_wait(struct hipobj_xfer *xfer,
                                struct hipobj_xfer_result *res,
                                struct hipobj_error *err);
/** Non-zero once the transfer has finished and its callback has returned. */
HIPOBJ_API int hipobj_xfer_done(struct hipobj_xfer *xfer);
/** Asks the transfer to stop: requests in flight are aborted, no new part
 *  starts, a multipart upload is aborted on the server, and the transfer
 *  finishes with HIPOBJ_E_CANCELLED (unless it had already finished). Any
 *  thread; harmless after the end. */
HIPOBJ_API void hipobj_xfer_cancel(struct hipobj_xfer *xfer);
/** Frees a transfer; a running one is cancelled and waited for first. Not
 *  from its own callbacks. NULL is allowed. */
HIPOBJ_API void hipobj_xfer_free(struct hipobj_xfer *xfer);

#include "hipobj/cancel.h"
#include "hipobj/copy.h"
#include "hipobj/helpers.h"
#include "hipobj/list.h"
#include "hipobj/mpu.h"

#ifdef __cplusplus
}
#endif

#endif /* HIPOBJ_H */
