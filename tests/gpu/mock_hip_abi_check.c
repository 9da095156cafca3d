/* mock_hip_abi_check.c - compiled into the stand-in libamdhip64: checks at
 * build time that the ABI the stand-in speaks (mock_hip_abi.h) is the one
 * of the HIP headers this build has (Debian's are ROCm 5.2: the ROCm 5
 * numbering of hipMemoryType; ROCm 6's values and the dma-buf range API are
 * checked only where the headers have them). Without HIP headers there is
 * nothing to compare and the unit is empty. */
#include "mock_hip_abi.h"

#if HIPOBJ_HAVE_HIP_HEADERS
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <stddef.h>

#define SAME(a, b)                                                             \
  _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

SAME(MH_SUCCESS, hipSuccess);
SAME(MH_INVALID_VALUE, hipErrorInvalidValue);
SAME(MH_OUT_OF_MEMORY, hipErrorOutOfMemory);
SAME(MH_NOT_INITIALIZED, hipErrorNotInitialized);
SAME(MH_INVALID_MEMCPY_DIRECTION, hipErrorInvalidMemcpyDirection);
SAME(MH_NO_DEVICE, hipErrorNoDevice);
SAME(MH_INVALID_DEVICE, hipErrorInvalidDevice);
SAME(MH_INVALID_HANDLE, hipErrorInvalidHandle);
SAME(MH_NOT_FOUND, hipErrorNotFound);
SAME(MH_NOT_READY, hipErrorNotReady);
SAME(MH_ILLEGAL_ADDRESS, hipErrorIllegalAddress);
SAME(MH_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed);
SAME(MH_NOT_SUPPORTED, hipErrorNotSupported);
SAME(sizeof(hipError_t), sizeof(int));

SAME(MH_COPY_H2H, hipMemcpyHostToHost);
SAME(MH_COPY_H2D, hipMemcpyHostToDevice);
SAME(MH_COPY_D2H, hipMemcpyDeviceToHost);
SAME(MH_COPY_D2D, hipMemcpyDeviceToDevice);
SAME(MH_COPY_DEFAULT, hipMemcpyDefault);

#if HIP_VERSION_MAJOR >= 6
SAME(MH6_TYPE_UNREGISTERED, hipMemoryTypeUnregistered);
SAME(MH6_TYPE_HOST, hipMemoryTypeHost);
SAME(MH6_TYPE_DEVICE, hipMemoryTypeDevice);
SAME(MH6_TYPE_MANAGED, hipMemoryTypeManaged);
SAME(MH_INVALID_DEVICE_ID, hipInvalidDeviceId);
#define TYPE_MEMBER type
#else
SAME(MH5_TYPE_HOST, hipMemoryTypeHost);
SAME(MH5_TYPE_DEVICE, hipMemoryTypeDevice);
SAME(MH5_TYPE_ARRAY, hipMemoryTypeArray);
SAME(MH5_TYPE_UNIFIED, hipMemoryTypeUnified);
#define TYPE_MEMBER memoryType
#endif

#define SAME_MEMBER(m, hm)                                                     \
  SAME(offsetof(struct mh_pointer_attr, m), offsetof(hipPointerAttribute_t, hm))
SAME(sizeof(struct mh_pointer_attr), sizeof(hipPointerAttribute_t));
SAME_MEMBER(type, TYPE_MEMBER);
SAME_MEMBER(device, device);
SAME_MEMBER(devicePointer, devicePointer);
SAME_MEMBER(hostPointer, hostPointer);
SAME_MEMBER(isManaged, isManaged);
SAME_MEMBER(allocationFlags, allocationFlags);

SAME(MH_ATTR_MEMORY_TYPE, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE);
SAME(MH_ATTR_BUFFER_ID, HIP_POINTER_ATTRIBUTE_BUFFER_ID);
SAME(MH_ATTR_IS_MANAGED, HIP_POINTER_ATTRIBUTE_IS_MANAGED);
SAME(MH_ATTR_DEVICE_ORDINAL, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL);

SAME(MH_HOST_PORTABLE, hipHostMallocPortable);
SAME(MH_HOST_MAPPED, hipHostMallocMapped);
SAME(MH_HOST_WRITE_COMBINED, hipHostMallocWriteCombined);
SAME(MH_HOST_NUMA_USER, hipHostMallocNumaUser);
SAME(MH_HOST_COHERENT, hipHostMallocCoherent);
SAME(MH_HOST_NON_COHERENT, hipHostMallocNonCoherent);

SAME(MH_STREAM_NON_BLOCKING, hipStreamNonBlocking);
SAME(MH_EVENT_BLOCKING_SYNC, hipEventBlockingSync);
SAME(MH_EVENT_DISABLE_TIMING, hipEventDisableTiming);
SAME(MH_EVENT_INTERPROCESS, hipEventInterprocess);
SAME(MH_EVENT_RELEASE_TO_DEVICE, hipEventReleaseToDevice);
SAME(MH_EVENT_RELEASE_TO_SYSTEM, hipEventReleaseToSystem);
#ifdef hipEventDisableSystemFence
SAME(MH_EVENT_DISABLE_SYSTEM_FENCE, hipEventDisableSystemFence);
#endif
#endif /* HIPOBJ_HAVE_HIP_HEADERS */

/* ISO C wants at least one declaration in a unit. */
typedef int mock_hip_abi_check_unit;
