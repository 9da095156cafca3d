/* _hipobj.h - declarations shared by the files of the CPython extension
 * hipobj._hipobj, a thin layer over the public C API (include/hipobj.h).
 *
 * The extension uses only CPython's limited API of 3.11 (Py_LIMITED_API,
 * set by python/hipobj/meson.build) so that one build, named
 * _hipobj.abi3.so, imports on every CPython from 3.11 on: the GPU machine
 * runs 3.12 where Debian 12 has 3.11. 3.11 is the first version whose
 * limited API has the buffer protocol, which `out=` and `data=` need.
 *
 * Threads (docs/threading.md): the library's completion and progress
 * callbacks never touch Python. They record what happened in the transfer's
 * C fields and wake whoever waits: the thread blocked in a blocking call, or
 * the client's event queue, which a Python dispatcher thread drains
 * (hipobj/_client.py). So a library worker never waits for the GIL, and the
 * GIL is never held while this module waits for the library. */
#ifndef HIPOBJ_PY_H
#define HIPOBJ_PY_H

#include <Python.h>

#include <hipobj.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* A memory descriptor and what keeps its memory alive while the library
 * uses it: a buffer view (bytearray, numpy, memoryview) or the Python
 * object that owns the GPU or file memory (a tensor, a DLPack capsule). */
struct pymem {
  struct hipobj_mem mem;
  Py_buffer view; /* valid when has_view */
  int has_view;
  PyObject *owner; /* strong reference, or NULL */
};

/* Fills m from a Python memory spec (see parse_mem in _hipobj_mem.c);
 * writable: the library will write into it (a GET). Returns 0, or -1 with
 * a Python exception set. */
int pymem_from_spec(PyObject *spec, int writable, struct pymem *m);
/* Releases the view and the owner. Needs the GIL. Idempotent. */
void pymem_release(struct pymem *m);

/* The module's Python-level functions of _hipobj_mem.c. */
PyObject *py_dlpack_info(PyObject *self, PyObject *capsule);
PyObject *py_mem_classify(PyObject *self, PyObject *args);

/* hipobj.Client's C half. */
typedef struct {
  PyObject ob_base;
  struct hipobj_client *c;
  pid_t pid;  /* the process that created c (see client_dealloc) */
  long calls; /* calls running on c (under the GIL) */
  /* The event queue of asynchronous transfers (under qmu). */
  pthread_mutex_t qmu;
  pthread_cond_t qcv;
  struct xfer_obj *qhead, *qtail;
  long inflight; /* asynchronous transfers not yet delivered */
  int closing;
  PyObject *inflight_map; /* id -> xfer_obj of those transfers */
} client_obj;

/* A transfer: asynchronous (get_start/put_start), or the one a blocking
 * call waits for. */
typedef struct xfer_obj {
  PyObject ob_base;
  client_obj *client; /* strong reference */
  struct hipobj_xfer *x;
  struct hipobj_error *err;
  struct pymem mem;
  struct hipobj_xfer_result res; /* final once finished */
  int started;                   /* x was started */
  int starting;   /* the start call runs (GIL released); cv says when not */
  int finished;   /* x freed, res and err final (mu) */
  PyObject *user; /* the Python future, set and cleared by Python */
  /* Written by the library's threads, read by Python (under mu). */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done, status;
  uint64_t pdone, ptotal;
  int want_progress, progress_pending;
  int async;  /* completion goes to the client's queue */
  int queued; /* in the client's queue now */
  int delivered;
  struct xfer_obj *qnext;
} xfer_obj;

extern PyTypeObject *client_type;
extern PyTypeObject *xfer_type;
extern PyTypeObject *mpu_type;

/* Raises the hipobj.Error (subclass) for a failed call: err's details,
 * status rc. Returns NULL. */
PyObject *raise_hipobj(int rc, const struct hipobj_error *err);
/* A result tuple (see hipobj/_client.py: Result). */
PyObject *result_tuple(const struct hipobj_xfer_result *res);
/* enum hipobj_rdma_policy from None/"auto"/"off"/"require" (or 0). */
int rdma_policy_from(PyObject *o, enum hipobj_rdma_policy *out);

/* _hipobj_xfer.c */
/* How xfer_start runs the transfer. */
enum xfer_mode {
  XFER_WAITED, /* started; xfer_run_blocking waits, interruptible */
  XFER_ASYNC,  /* started; the dispatcher delivers its end */
  XFER_DIRECT  /* the library's blocking call on this thread: the result */
};
PyObject *xfer_start(client_obj *self, int is_get, PyObject *args, PyObject *kw,
                     enum xfer_mode mode);
PyObject *client_wait_event(client_obj *self, PyObject *unused);
/* Waits for a blocking call's transfer, calling progress(done, total)
 * when it moves and cancelling on a signal (KeyboardInterrupt). Returns
 * the result tuple or NULL with the exception set. */
PyObject *xfer_run_blocking(xfer_obj *x, PyObject *progress);
/* Cancels every asynchronous transfer of the client and waits for them
 * (GIL released). */
void client_cancel_all(client_obj *self);
int xfer_types_init(PyObject *module);

/* _hipobj_mpu.c */
PyObject *client_mpu_create(client_obj *self, PyObject *args, PyObject *kw);
PyObject *client_mpu_open(client_obj *self, PyObject *args, PyObject *kw);
int mpu_type_init(PyObject *module);

/* Guards every call on a client: refuses a closed client, and one created
 * in another process (a forked child must make its own). */
int client_enter(client_obj *self);
void client_leave(client_obj *self);

#endif /* HIPOBJ_PY_H */
