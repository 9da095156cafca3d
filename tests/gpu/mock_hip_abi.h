/* mock_hip_abi.h - the part of the HIP runtime's binary interface that the
 * stand-in libamdhip64 (mock_libamdhip64.c) implements, written down from
 * ROCm's hip_runtime_api.h and driver_types.h (5.x and 6.x): status codes,
 * flag values, the pointer attribute struct and the two numberings of
 * hipMemoryType (ROCm 6 renumbered it and added "unregistered"). Own names
 * (MH_*), so that it can sit next to the real headers: mock_hip_abi_check.c
 * compares every value here with them when the build has them. */
#ifndef HIPOBJ_TEST_MOCK_HIP_ABI_H
#define HIPOBJ_TEST_MOCK_HIP_ABI_H

/* hipError_t (an enum: int-sized). */
enum {
  MH_SUCCESS = 0,
  MH_INVALID_VALUE = 1,
  MH_OUT_OF_MEMORY = 2,
  MH_NOT_INITIALIZED = 3,
  MH_INVALID_MEMCPY_DIRECTION = 21,
  MH_NO_DEVICE = 100,
  MH_INVALID_DEVICE = 101,
  MH_INVALID_HANDLE = 400,
  MH_NOT_FOUND = 500,
  MH_NOT_READY = 600,
  MH_ILLEGAL_ADDRESS = 700,
  MH_CONTEXT_IS_DESTROYED = 709,
  MH_NOT_SUPPORTED = 801,
};

/* hipMemcpyKind. */
enum {
  MH_COPY_H2H = 0,
  MH_COPY_H2D = 1,
  MH_COPY_D2H = 2,
  MH_COPY_D2D = 3,
  MH_COPY_DEFAULT = 4,
};

/* hipMemoryType, ROCm 5 (hipMemoryTypeManaged came with 5.3). */
enum {
  MH5_TYPE_HOST = 0,
  MH5_TYPE_DEVICE = 1,
  MH5_TYPE_ARRAY = 2,
  MH5_TYPE_UNIFIED = 3,
};
/* hipMemoryType, ROCm 6. */
enum {
  MH6_TYPE_UNREGISTERED = 0,
  MH6_TYPE_HOST = 1,
  MH6_TYPE_DEVICE = 2,
  MH6_TYPE_MANAGED = 3,
};
/* hipPointerAttribute_t's device for memory HIP does not know (ROCm 6). */
#define MH_INVALID_DEVICE_ID (-2)

/* hipPointerAttribute_t: the first member is `memoryType` in ROCm 5 and
 * `type` in ROCm 6, at the same place. */
struct mh_pointer_attr {
  int type;
  int device;
  void *devicePointer;
  void *hostPointer;
  int isManaged;
  unsigned allocationFlags;
};

/* hipPointer_attribute (hipPointerGetAttribute). */
enum {
  MH_ATTR_MEMORY_TYPE = 2,
  MH_ATTR_BUFFER_ID = 7,
  MH_ATTR_IS_MANAGED = 8,
  MH_ATTR_DEVICE_ORDINAL = 9,
};

/* hipHostMalloc flags. */
#define MH_HOST_PORTABLE 0x1u
#define MH_HOST_MAPPED 0x2u
#define MH_HOST_WRITE_COMBINED 0x4u
#define MH_HOST_NUMA_USER 0x20000000u
#define MH_HOST_COHERENT 0x40000000u
#define MH_HOST_NON_COHERENT 0x80000000u

/* hipStreamCreateWithFlags flags. */
#define MH_STREAM_NON_BLOCKING 0x1u

/* hipEventCreateWithFlags flags. */
#define MH_EVENT_BLOCKING_SYNC 0x1u
#define MH_EVENT_DISABLE_TIMING 0x2u
#define MH_EVENT_INTERPROCESS 0x4u
#define MH_EVENT_DISABLE_SYSTEM_FENCE 0x20000000u
#define MH_EVENT_RELEASE_TO_DEVICE 0x40000000u
#define MH_EVENT_RELEASE_TO_SYSTEM 0x80000000u

/* hipMemRangeHandleType and hipMemRangeFlags
 * (hipMemGetHandleForAddressRange, newer than ROCm 6.2's headers). */
#define MH_RANGE_HANDLE_DMABUF_FD 1u
#define MH_RANGE_FLAG_DMABUF_PCIE 1ull

/* The special stream handles hipStreamLegacy and hipStreamPerThread. */
#define MH_STREAM_LEGACY ((void *)1)
#define MH_STREAM_PER_THREAD ((void *)2)

#endif
