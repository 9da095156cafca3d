/* _hipobj_xfer.c - transfers: hipobj_s3_get_start / hipobj_s3_put_start,
 * for the asynchronous API (hipobj.Transfer futures) and for the blocking
 * get/put, which wait here with the GIL released and stay interruptible.
 *
 * The library calls on_done on a scheduler worker and on_progress on an I/O
 * thread (docs/threading.md). Neither takes the GIL: they store what
 * happened in the xfer_obj and wake a waiter, either the thread in
 * xfer_run_blocking or the client's dispatcher in client_wait_event. Python
 * code (futures, user callbacks) therefore runs only on Python threads, and
 * an I/O thread is never held up by the interpreter. */
#include "_hipobj.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PyTypeObject *xfer_type;

/* Puts x on its client's event queue (any thread, no GIL). */
static void enqueue(xfer_obj *x) {
  client_obj *c = x->client;
  pthread_mutex_lock(&c->qmu);
  if (!x->queued) {
    x->queued = 1;
    x->qnext = NULL;
    if (c->qtail != NULL) {
      c->qtail->qnext = x;
    } else {
      c->qhead = x;
    }
    c->qtail = x;
    pthread_cond_signal(&c->qcv);
  }
  pthread_mutex_unlock(&c->qmu);
}

static void on_done(struct hipobj_xfer *hx, int status, void *user) {
  (void)hx;
  xfer_obj *x = user;
  pthread_mutex_lock(&x->mu);
  x->done = 1;
  x->status = status;
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  if (x->async) {
    enqueue(x);
  }
}

/* Called often (per chunk of every part): only the first report after the
 * last one Python consumed wakes anyone; the values are read then. */
static void on_progress(void *user, uint64_t done, uint64_t total) {
  xfer_obj *x = user;
  __atomic_store_n(&x->pdone, done, __ATOMIC_RELAXED);
  __atomic_store_n(&x->ptotal, total, __ATOMIC_RELAXED);
  if (__atomic_exchange_n(&x->progress_pending, 1, __ATOMIC_ACQ_REL)) {
    return;
  }
  if (x->async) {
    enqueue(x);
  } else {
    pthread_mutex_lock(&x->mu);
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
  }
}

/* Collects the result of a transfer that has ended (or ends it: cancel and
 * wait) and frees the library's transfer; releases the memory. GIL held.
 * Two threads may get here for one transfer (Client.close and the
 * dispatcher): the first frees it, the other waits until it has. */
static void xfer_finish(xfer_obj *x) {
  /* The transfer may end (and the dispatcher get here) while its start
   * call, which released the GIL, has not yet stored x->x: wait for it. */
  if (x->starting) {
    Py_BEGIN_ALLOW_THREADS;
    pthread_mutex_lock(&x->mu);
    while (x->starting) {
      pthread_cond_wait(&x->cv, &x->mu);
    }
    pthread_mutex_unlock(&x->mu);
    Py_END_ALLOW_THREADS;
  }
  struct hipobj_xfer *hx = x->x;
  x->x = NULL; /* under the GIL: one thread takes it */
  if (hx != NULL) {
    Py_BEGIN_ALLOW_THREADS;
    int status = hipobj_xfer_wait(hx, &x->res, x->err);
    hipobj_xfer_free(hx);
    pthread_mutex_lock(&x->mu);
    x->status = status;
    x->finished = 1;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    Py_END_ALLOW_THREADS;
  } else if (x->started) {
    Py_BEGIN_ALLOW_THREADS;
    pthread_mutex_lock(&x->mu);
    while (!x->finished) {
      pthread_cond_wait(&x->cv, &x->mu);
    }
    pthread_mutex_unlock(&x->mu);
    Py_END_ALLOW_THREADS;
  }
  pymem_release(&x->mem);
}

/* A failed transfer's result rides on its exception as _result: a GET
 * that did not fit its buffer still tells the object's size and ETag
 * (Client.get into a new buffer reads them). */
static void attach_result(const struct hipobj_xfer_result *r) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != NULL) {
    PyObject *t = result_tuple(r);
    if (t == NULL || PyObject_SetAttrString(value, "_result", t) < 0) {
      PyErr_Clear(); /* the transfer's own error is the one to raise */
    }
    Py_XDECREF(t);
  }
  PyErr_Restore(type, value, tb);
}

static PyObject *xfer_outcome(xfer_obj *x) {
  if (!x->finished) {
    PyErr_SetString(PyExc_RuntimeError, "internal: transfer not finished");
    return NULL;
  }
  if (x->status == HIPOBJ_OK) {
    return result_tuple(&x->res);
  }
  raise_hipobj(x->status, x->err);
  attach_result(&x->res);
  return NULL;
}

static xfer_obj *xfer_alloc(client_obj *c) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(xfer_type, Py_tp_alloc);
  xfer_obj *x = (xfer_obj *)alloc(xfer_type, 0);
  if (x == NULL) {
    return NULL;
  }
  /* tp_alloc zeroes the object. */
  x->client = (client_obj *)Py_NewRef((PyObject *)c);
  x->res = (struct hipobj_xfer_result)HIPOBJ_XFER_RESULT_INIT;
  x->mem.mem = hipobj_mem_host(NULL, 0);
  pthread_mutex_init(&x->mu, NULL);
  pthread_cond_init(&x->cv, NULL);
  if (hipobj_error_create(&x->err) != HIPOBJ_OK) {
    Py_DECREF(x);
    PyErr_NoMemory();
    return NULL;
  }
  return x;
}

/* The library's blocking call on this thread, the GIL released: a small
 * GET into host memory then runs from request to answer here, where the
 * started form crosses to an HTTP worker, a scheduler worker and back.
 * Returns the result tuple, or NULL with the exception set. */
static PyObject *xfer_direct(client_obj *self, int is_get, const char *bucket,
                             const char *key, xfer_obj *x,
                             const struct hipobj_get_opts *go,
                             const struct hipobj_put_opts *po) {
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = is_get ? hipobj_s3_get(self->c, bucket, key, &x->mem.mem, go, &x->res,
                              x->err)
              : hipobj_s3_put(self->c, bucket, key, &x->mem.mem, po, &x->res,
                              x->err);
  Py_END_ALLOW_THREADS;
  x->status = rc;
  x->done = x->finished = 1;
  pymem_release(&x->mem);
  client_leave(self);
  PyObject *ret = xfer_outcome(x);
  Py_DECREF(x);
  return ret;
}

PyObject *xfer_start(client_obj *self, int is_get, PyObject *args, PyObject *kw,
                     enum xfer_mode mode) {
  int async = mode == XFER_ASYNC;
  static char *get_kw[] = {
      "bucket",   "key",      "mem",       "has_range",   "offset",
      "length",   "if_match", "part_size", "concurrency", "rdma_policy",
      "progress", "user",     NULL};
  static char *put_kw[] = {"bucket",      "key",
                           "mem",         "content_type",
                           "part_size",   "multipart_threshold",
                           "concurrency", "keep_failed_upload",
                           "rdma_policy", "progress",
                           "user",        NULL};
  const char *bucket, *key;
  PyObject *spec, *rdma = NULL, *progress = Py_None, *user = Py_None;
  struct hipobj_get_opts go = HIPOBJ_GET_OPTS_INIT;
  struct hipobj_put_opts po = HIPOBJ_PUT_OPTS_INIT;
  unsigned long long off = 0, len = 0, part = 0, thr = 0;
  int has_range = 0, keep = 0;
  int ok = is_get ? PyArg_ParseTupleAndKeywords(
                        args, kw, "ssO|$pKKzKIOOO", get_kw, &bucket, &key,
                        &spec, &has_range, &off, &len, &go.if_match, &part,
                        &go.concurrency, &rdma, &progress, &user)
                  : PyArg_ParseTupleAndKeywords(
                        args, kw, "ssO|$zKKIpOOO", put_kw, &bucket, &key, &spec,
                        &po.content_type, &part, &thr, &po.concurrency, &keep,
                        &rdma, &progress, &user);
  if (!ok) {
    return NULL;
  }
  if (progress != Py_None && !PyCallable_Check(progress) &&
      progress != Py_True) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
    return NULL;
  }
  go.has_range = has_range;
  go.offset = off;
  go.length = len;
  go.part_size = part;
  po.part_size = part;
  po.multipart_threshold = thr;
  po.keep_failed_upload = keep;
  if (rdma_policy_from(rdma, is_get ? &go.rdma_policy : &po.rdma_policy) < 0) {
    return NULL;
  }
  xfer_obj *x = xfer_alloc(self);
  if (x == NULL) {
    return NULL;
  }
  if (pymem_from_spec(spec, is_get, &x->mem) < 0) {
    Py_DECREF(x);
    return NULL;
  }
  x->async = async;
  /* Set before the start: the dispatcher may see the end of x before
   * xfer_start returns, and finds the future through user. */
  x->user = user == Py_None ? NULL : Py_NewRef(user);
  x->want_progress = progress != Py_None;
  struct hipobj_xfer_opts xo = HIPOBJ_XFER_OPTS_INIT;
  xo.done = on_done;
  xo.progress = x->want_progress ? on_progress : NULL;
  xo.user = x;
  if (client_enter(self) < 0) {
    Py_DECREF(x);
    return NULL;
  }
  if (mode == XFER_DIRECT) {
    return xfer_direct(self, is_get, bucket, key, x, &go, &po);
  }
  if (async) {
    /* The map keeps x alive until the dispatcher has delivered its end. */
    PyObject *id = PyLong_FromVoidPtr(x);
    if (id == NULL || PyDict_SetItem(self->inflight_map, id, (PyObject *)x)) {
      Py_XDECREF(id);
      client_leave(self);
      Py_DECREF(x);
      return NULL;
    }
    Py_DECREF(id);
    pthread_mutex_lock(&self->qmu);
    self->inflight++;
    pthread_mutex_unlock(&self->qmu);
  }
  struct hipobj_xfer *hx = NULL;
  int rc;
  x->starting = 1;
  Py_BEGIN_ALLOW_THREADS;
  rc = is_get ? hipobj_s3_get_start(self->c, bucket, key, &x->mem.mem, &go, &xo,
                                    &hx, x->err)
              : hipobj_s3_put_start(self->c, bucket, key, &x->mem.mem, &po, &xo,
                                    &hx, x->err);
  Py_END_ALLOW_THREADS;
  x->x = hx;
  x->started = hx != NULL;
  pthread_mutex_lock(&x->mu);
  x->starting = 0;
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  if (rc != HIPOBJ_OK) {
    raise_hipobj(rc, x->err);
    if (async) {
      PyObject *et, *ev, *tb;
      PyErr_Fetch(&et, &ev, &tb);
      PyObject *id = PyLong_FromVoidPtr(x);
      if (id == NULL || PyDict_DelItem(self->inflight_map, id) < 0) {
        PyErr_Clear();
      }
      Py_XDECREF(id);
      PyErr_Restore(et, ev, tb);
      pthread_mutex_lock(&self->qmu);
      self->inflight--;
      pthread_mutex_unlock(&self->qmu);
    }
    Py_DECREF(x);
    client_leave(self);
    return NULL;
  }
  if (async) {
    client_leave(self); /* the blocking form leaves in xfer_run_blocking */
  }
  return (PyObject *)x;
}

PyObject *xfer_run_blocking(xfer_obj *x, PyObject *progress) {
  client_obj *c = x->client;
  PyObject *failed = NULL; /* set when Python interrupted the wait */
  for (;;) {
    int done;
    Py_BEGIN_ALLOW_THREADS;
    pthread_mutex_lock(&x->mu);
    if (!x->done && !__atomic_load_n(&x->progress_pending, __ATOMIC_ACQUIRE)) {
      /* Wakes at least every 100 ms to let signal handlers run. */
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 100 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&x->cv, &x->mu, &ts);
    }
    done = x->done;
    pthread_mutex_unlock(&x->mu);
    Py_END_ALLOW_THREADS;
    if (x->want_progress &&
        __atomic_exchange_n(&x->progress_pending, 0, __ATOMIC_ACQ_REL)) {
      PyObject *r = PyObject_CallFunction(
          progress, "KK",
          (unsigned long long)__atomic_load_n(&x->pdone, __ATOMIC_RELAXED),
          (unsigned long long)__atomic_load_n(&x->ptotal, __ATOMIC_RELAXED));
      if (r == NULL) {
        failed = Py_True;
        break;
      }
      Py_DECREF(r);
    }
    if (done) {
      break;
    }
    if (PyErr_CheckSignals() < 0) {
      failed = Py_True;
      break;
    }
  }
  if (failed != NULL) {
    /* KeyboardInterrupt or the progress callback raised: stop the
     * transfer (a multipart upload is aborted) and report that instead. */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    hipobj_xfer_cancel(x->x); /* NULL-safe, never blocks */
    xfer_finish(x);
    client_leave(c);
    PyErr_Restore(et, ev, tb);
    return NULL;
  }
  xfer_finish(x);
  client_leave(c);
  return xfer_outcome(x);
}

/* Waits for events of asynchronous transfers: a list of (xfer, finished,
 * bytes_done, bytes_total, progressed); None once the client is closed and
 * every transfer has been delivered. For the dispatcher thread only. */
PyObject *client_wait_event(client_obj *self, PyObject *unused) {
  (void)unused;
  xfer_obj **items = NULL;
  size_t n = 0;
  int nomem = 0;
  Py_BEGIN_ALLOW_THREADS;
  pthread_mutex_lock(&self->qmu);
  while (self->qhead == NULL && !(self->closing && self->inflight == 0)) {
    pthread_cond_wait(&self->qcv, &self->qmu);
  }
  for (xfer_obj *x = self->qhead; x != NULL; x = x->qnext) {
    n++;
  }
  if (n > 0) {
    items = malloc(n * sizeof *items);
    if (items == NULL) {
      nomem = 1;
    } else {
      size_t i = 0;
      for (xfer_obj *x = self->qhead; x != NULL; x = x->qnext) {
        items[i++] = x;
        x->queued = 0;
      }
      self->qhead = self->qtail = NULL;
    }
  }
  pthread_mutex_unlock(&self->qmu);
  Py_END_ALLOW_THREADS;
  if (nomem) {
    return PyErr_NoMemory();
  }
  if (n == 0) {
    Py_RETURN_NONE; /* closed, nothing left */
  }
  PyObject *list = PyList_New(0);
  for (size_t i = 0; list != NULL && i < n; i++) {
    xfer_obj *x = items[i];
    pthread_mutex_lock(&x->mu);
    int done = x->done;
    pthread_mutex_unlock(&x->mu);
    int progressed =
        __atomic_exchange_n(&x->progress_pending, 0, __ATOMIC_ACQ_REL);
    if (x->delivered) {
      continue;
    }
    PyObject *ev = Py_BuildValue(
        "(OiKKi)", (PyObject *)x, done,
        (unsigned long long)__atomic_load_n(&x->pdone, __ATOMIC_RELAXED),
        (unsigned long long)__atomic_load_n(&x->ptotal, __ATOMIC_RELAXED),
        progressed);
    if (ev == NULL || PyList_Append(list, ev) < 0) {
      Py_XDECREF(ev);
      Py_CLEAR(list);
      break;
    }
    Py_DECREF(ev);
    if (done) {
      x->delivered = 1;
      /* After this no callback of x runs any more (hipobj_xfer_free waits
       * for them), but on_done may have queued x again after this round
       * took it: unlink it, or the queue would outlive x. */
      xfer_finish(x);
      pthread_mutex_lock(&self->qmu);
      if (x->queued) {
        xfer_obj **pp = &self->qhead, *prev = NULL;
        while (*pp != NULL && *pp != x) {
          prev = *pp;
          pp = &(*pp)->qnext;
        }
        if (*pp == x) {
          *pp = x->qnext;
          if (self->qtail == x) {
            self->qtail = prev;
          }
        }
        x->queued = 0;
      }
      self->inflight--;
      pthread_mutex_unlock(&self->qmu);
      PyObject *id = PyLong_FromVoidPtr(x);
      if (id != NULL) {
        PyDict_DelItem(self->inflight_map, id); /* ev holds x */
        Py_DECREF(id);
      }
    }
  }
  free(items);
  return list;
}

void client_cancel_all(client_obj *self) {
  PyObject *vals = PyDict_Values(self->inflight_map);
  if (vals == NULL) {
    PyErr_Clear();
    return;
  }
  Py_ssize_t n = PyList_Size(vals);
  for (Py_ssize_t i = 0; i < n; i++) {
    hipobj_xfer_cancel(((xfer_obj *)PyList_GetItem(vals, i))->x);
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    xfer_finish((xfer_obj *)PyList_GetItem(vals, i));
  }
  Py_DECREF(vals);
}

/* ---- the Xfer type ---- */

/* hipobj_xfer_cancel only raises a flag and wakes the library's threads,
 * so it runs with the GIL held: x->x is taken and freed by xfer_finish
 * under the GIL, so it cannot be freed while this reads and uses it. */
static PyObject *xfer_cancel(xfer_obj *x, PyObject *unused) {
  (void)unused;
  hipobj_xfer_cancel(x->x);
  Py_RETURN_NONE;
}

/* The outcome of a delivered transfer: the result tuple, or raises. */
static PyObject *xfer_result(xfer_obj *x, PyObject *unused) {
  (void)unused;
  return xfer_outcome(x);
}

static PyObject *xfer_get_done(xfer_obj *x, void *closure) {
  (void)closure;
  pthread_mutex_lock(&x->mu);
  int done = x->done;
  pthread_mutex_unlock(&x->mu);
  return PyBool_FromLong(done);
}

static PyObject *xfer_get_progress(xfer_obj *x, void *closure) {
  (void)closure;
  return Py_BuildValue(
      "(KK)", (unsigned long long)__atomic_load_n(&x->pdone, __ATOMIC_RELAXED),
      (unsigned long long)__atomic_load_n(&x->ptotal, __ATOMIC_RELAXED));
}

static PyObject *xfer_get_user(xfer_obj *x, void *closure) {
  (void)closure;
  return Py_NewRef(x->user ? x->user : Py_None);
}

static int xfer_set_user(xfer_obj *x, PyObject *v, void *closure) {
  (void)closure;
  PyObject *old = x->user;
  x->user = v == NULL || v == Py_None ? NULL : Py_NewRef(v);
  Py_XDECREF(old);
  return 0;
}

static void xfer_dealloc(xfer_obj *x) {
  PyTypeObject *tp = Py_TYPE((PyObject *)x);
  xfer_finish(x); /* a transfer still running is cancelled and waited for */
  hipobj_error_free(x->err);
  pthread_mutex_destroy(&x->mu);
  pthread_cond_destroy(&x->cv);
  Py_CLEAR(x->user);
  Py_CLEAR(x->client);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(x);
  Py_DECREF(tp);
}

static PyMethodDef xfer_methods[] = {
    {"cancel", (PyCFunction)xfer_cancel, METH_NOARGS, NULL},
    {"result", (PyCFunction)xfer_result, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef xfer_getset[] = {
    {"done", (getter)xfer_get_done, NULL, NULL, NULL},
    {"progress", (getter)xfer_get_progress, NULL, NULL, NULL},
    {"user", (getter)xfer_get_user, (setter)xfer_set_user, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot xfer_slots[] = {{Py_tp_dealloc, xfer_dealloc},
                                   {Py_tp_methods, xfer_methods},
                                   {Py_tp_getset, xfer_getset},
                                   {0, NULL}};

static PyType_Spec xfer_spec = {"hipobj._hipobj.Xfer", sizeof(xfer_obj), 0,
                                Py_TPFLAGS_DEFAULT, xfer_slots};

int xfer_types_init(PyObject *module) {
  xfer_type = (PyTypeObject *)PyType_FromSpec(&xfer_spec);
  if (xfer_type == NULL) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "Xfer", (PyObject *)xfer_type);
}
