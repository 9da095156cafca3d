/* _hipobj_mem.c - memory descriptors from Python objects.
 *
 * hipobj/_memory.py decides what an object is (a buffer, a CUDA or HIP
 * array, a DLPack tensor, a file) and hands this file a spec tuple:
 *
 *   ("buffer", obj)                     the buffer protocol: host memory
 *   ("host", ptr, len, owner)           host memory at an address
 *   ("gpu", kind, device, ptr, len, owner)  HIPOBJ_MEM_HIP / _CUDA
 *   ("classify", ptr, len, owner)       ask hipobj_mem_classify()
 *   ("file", fd, offset, len, owner)    hipobj_mem_file()
 *
 * owner is kept referenced until the transfer ends, so that the memory it
 * owns cannot be freed under the library. DLPack capsules are read here
 * (dlpack_info) because a capsule's pointer is only reachable from C. */
#include "_hipobj.h"

#include <string.h>

int pymem_from_spec(PyObject *spec, int writable, struct pymem *m) {
  memset(m, 0, sizeof *m);
  m->mem = hipobj_mem_host(NULL, 0);
  if (!PyTuple_Check(spec) || PyTuple_Size(spec) < 2) {
    PyErr_SetString(PyExc_TypeError, "internal: bad memory spec");
    return -1;
  }
  PyObject *tag = PyTuple_GetItem(spec, 0);
  const char *t = PyUnicode_AsUTF8AndSize(tag, NULL);
  if (t == NULL) {
    return -1;
  }
  if (strcmp(t, "buffer") == 0) {
    PyObject *obj = PyTuple_GetItem(spec, 1);
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &m->view, flags) < 0) {
      return -1;
    }
    m->has_view = 1;
    m->mem = hipobj_mem_host(m->view.buf, (size_t)m->view.len);
    return 0;
  }
  unsigned long long ptr = 0, len = 0, off = 0;
  int kind = 0, device = 0, fd = -1;
  PyObject *owner = NULL;
  if (strcmp(t, "host") == 0 || strcmp(t, "classify") == 0) {
    if (!PyArg_ParseTuple(spec, "sKKO", &t, &ptr, &len, &owner)) {
      return -1;
    }
  } else if (strcmp(t, "gpu") == 0) {
    if (!PyArg_ParseTuple(spec, "siiKKO", &t, &kind, &device, &ptr, &len,
                          &owner)) {
      return -1;
    }
    if (kind != HIPOBJ_MEM_HIP && kind != HIPOBJ_MEM_CUDA) {
      PyErr_SetString(PyExc_ValueError, "internal: bad GPU memory kind");
      return -1;
    }
  } else if (strcmp(t, "file") == 0) {
    if (!PyArg_ParseTuple(spec, "siKKO", &t, &fd, &off, &len, &owner)) {
      return -1;
    }
  } else {
    PyErr_Format(PyExc_TypeError, "internal: memory spec '%s'", t);
    return -1;
  }
  if (len > SIZE_MAX || (ptr == 0 && len != 0 && strcmp(t, "file") != 0)) {
    PyErr_SetString(PyExc_ValueError, "memory: NULL pointer or bad length");
    return -1;
  }
  if (strcmp(t, "host") == 0) {
    m->mem = hipobj_mem_host((void *)(uintptr_t)ptr, (size_t)len);
  } else if (strcmp(t, "gpu") == 0) {
    m->mem = hipobj_mem_gpu((enum hipobj_mem_kind)kind, device,
                            (void *)(uintptr_t)ptr, (size_t)len);
  } else if (strcmp(t, "file") == 0) {
    m->mem = hipobj_mem_file(fd, off, (size_t)len);
  } else {
    struct hipobj_error *err = NULL;
    struct hipobj_mem out = HIPOBJ_MEM_INIT;
    hipobj_error_create(&err);
    int rc =
        hipobj_mem_classify((void *)(uintptr_t)ptr, (size_t)len, &out, err);
    if (rc != HIPOBJ_OK) {
      raise_hipobj(rc, err);
      hipobj_error_free(err);
      return -1;
    }
    hipobj_error_free(err);
    m->mem = out;
  }
  Py_INCREF(owner);
  m->owner = owner;
  return 0;
}

void pymem_release(struct pymem *m) {
  if (m->has_view) {
    PyBuffer_Release(&m->view);
    m->has_view = 0;
  }
  Py_CLEAR(m->owner);
}

/* hipobj_mem_classify(ptr, len) -> (kind, device): what the GPU runtimes
 * say about an address (kind 0 = host). */
PyObject *py_mem_classify(PyObject *self, PyObject *args) {
  (void)self;
  unsigned long long ptr, len;
  if (!PyArg_ParseTuple(args, "KK", &ptr, &len)) {
    return NULL;
  }
  struct hipobj_error *err = NULL;
  struct hipobj_mem out = HIPOBJ_MEM_INIT;
  hipobj_error_create(&err);
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_mem_classify((void *)(uintptr_t)ptr, (size_t)len, &out, err);
  Py_END_ALLOW_THREADS;
  PyObject *ret = rc == HIPOBJ_OK
                      ? Py_BuildValue("(ii)", (int)out.kind, out.device)
                      : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

/* ---- DLPack (https://dmlc.github.io/dlpack/latest/c_api.html) ---- */

/* The ABI of dlpack.h, declared here: it has been stable since 0.x for
 * the legacy "dltensor" capsule, and 1.0 added the versioned one. */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} dl_device;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} dl_dtype;
typedef struct {
  void *data;
  dl_device device;
  int32_t ndim;
  dl_dtype dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} dl_tensor;
typedef struct dl_managed {
  dl_tensor t;
  void *manager_ctx;
  void (*deleter)(struct dl_managed *);
} dl_managed;
typedef struct dl_managed_v {
  uint32_t major, minor;
  void *manager_ctx;
  void (*deleter)(struct dl_managed_v *);
  uint64_t flags;
  dl_tensor t;
} dl_managed_v;
#define DL_FLAG_READ_ONLY 1u

/* dlpack_info(capsule) -> (device_type, device_id, ptr, nbytes,
 * contiguous, readonly). The capsule is only read: it stays the
 * producer's, and its destructor frees the tensor when the caller drops
 * it (after the transfer). */
PyObject *py_dlpack_info(PyObject *self, PyObject *capsule) {
  (void)self;
  const dl_tensor *t = NULL;
  int readonly = 0;
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    dl_managed *mt = PyCapsule_GetPointer(capsule, "dltensor");
    t = mt ? &mt->t : NULL;
  } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    dl_managed_v *mt = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (mt != NULL) {
      if (mt->major != 1) {
        return PyErr_Format(PyExc_TypeError,
                            "DLPack version %u.%u: only 1.x is understood",
                            mt->major, mt->minor);
      }
      t = &mt->t;
      readonly = (mt->flags & DL_FLAG_READ_ONLY) != 0;
    }
  } else {
    PyErr_SetString(PyExc_TypeError,
                    "__dlpack__() did not return a DLPack capsule (or it "
                    "was consumed already)");
  }
  if (t == NULL) {
    return NULL;
  }
  uint64_t elem_bits = (uint64_t)t->dtype.bits * t->dtype.lanes;
  uint64_t n = 1;
  int contiguous = 1;
  int64_t expect = 1; /* stride of a C-contiguous layout, in elements */
  for (int i = t->ndim - 1; i >= 0; i--) {
    int64_t d = t->shape[i];
    if (d < 0) {
      PyErr_SetString(PyExc_ValueError, "DLPack: negative dimension");
      return NULL;
    }
    if (t->strides != NULL && d > 1 && t->strides[i] != expect) {
      contiguous = 0;
    }
    expect *= d;
    if (d != 0 && n > UINT64_MAX / (uint64_t)d) {
      PyErr_SetString(PyExc_OverflowError, "DLPack: tensor too large");
      return NULL;
    }
    n *= (uint64_t)d;
  }
  if (elem_bits % 8 != 0) {
    PyErr_Format(PyExc_TypeError,
                 "DLPack: elements of %u bits are not whole bytes",
                 (unsigned)elem_bits);
    return NULL;
  }
  uint64_t nbytes = n * (elem_bits / 8);
  uintptr_t ptr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  return Py_BuildValue("(iiKKii)", (int)t->device.device_type,
                       (int)t->device.device_id, (unsigned long long)ptr,
                       (unsigned long long)nbytes, contiguous, readonly);
}
