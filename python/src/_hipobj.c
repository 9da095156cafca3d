/* _hipobj.c - the module hipobj._hipobj: the client and its blocking calls,
 * errors, results. The Python package (hipobj/__init__.py, _client.py) is
 * the public face; this file only translates between Python objects and
 * include/hipobj.h, releasing the GIL around every call that does I/O.
 * Asynchronous transfers are in _hipobj_xfer.c, multipart handles in
 * _hipobj_mpu.c, memory descriptors in _hipobj_mem.c. */
#include "_hipobj.h"

#include <string.h>
#include <unistd.h>

PyTypeObject *client_type;
static PyObject *error_factory; /* hipobj._errors.from_c, set at import */

PyObject *raise_hipobj(int rc, const struct hipobj_error *err) {
  const char *msg = err ? hipobj_error_message(err) : "";
  if (msg == NULL || msg[0] == '\0') {
    msg = hipobj_strerror(rc);
  }
  if (error_factory == NULL) {
    PyErr_Format(PyExc_RuntimeError, "hipobj: %s", msg);
    return NULL;
  }
  PyObject *exc = PyObject_CallFunction(
      error_factory, "(isiszzzzIii)", rc, hipobj_strerror(rc),
      err ? hipobj_error_http_status(err) : 0,
      err ? hipobj_error_s3_code(err) : "",
      err ? hipobj_error_request_id(err) : "",
      err ? hipobj_error_operation(err) : "", msg,
      err ? hipobj_error_s3_message(err) : "",
      err ? hipobj_error_retries(err) : 0u,
      err ? hipobj_error_sys_errno(err) : 0,
      err ? hipobj_error_rdma_status(err) : -1);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

PyObject *result_tuple(const struct hipobj_xfer_result *r) {
  return Py_BuildValue("(KKKIIsdss)", (unsigned long long)r->bytes,
                       (unsigned long long)r->object_size,
                       (unsigned long long)r->rdma_bytes, r->retries, r->parts,
                       hipobj_data_path_name(r->path), r->seconds, r->etag,
                       r->upload_id);
}

int rdma_policy_from(PyObject *o, enum hipobj_rdma_policy *out) {
  long v = o == NULL || o == Py_None ? 0 : PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred()) {
    return -1;
  }
  if (v < HIPOBJ_RDMA_DEFAULT || v > HIPOBJ_RDMA_REQUIRE) {
    PyErr_SetString(PyExc_ValueError, "rdma policy out of range");
    return -1;
  }
  *out = (enum hipobj_rdma_policy)v;
  return 0;
}

int client_enter(client_obj *self) {
  if (self->pid != getpid()) {
    PyErr_SetString(PyExc_RuntimeError,
                    "hipobj.Client was created in another process (before a "
                    "fork): its threads do not exist here; create a Client "
                    "in this process");
    return -1;
  }
  if (self->c == NULL || self->closing) {
    PyErr_SetString(PyExc_ValueError, "hipobj.Client is closed");
    return -1;
  }
  self->calls++;
  return 0;
}

void client_leave(client_obj *self) {
  self->calls--;
}

/* ---- construction and teardown ---- */

static int client_init(client_obj *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"endpoint_url",        "region",
                          "access_key_id",       "secret_access_key",
                          "session_token",       "profile",
                          "anonymous",           "addressing",
                          "tls_skip_verify",     "ca_bundle",
                          "connect_timeout_ms",  "request_timeout_ms",
                          "stall_timeout_ms",    "max_attempts",
                          "retry_base_ms",       "max_connections",
                          "concurrency",         "part_size",
                          "multipart_threshold", "integrity",
                          "rdma_policy",         "rdma_device",
                          "rdma_gid_index",      "log_level",
                          "staging_pool_bytes",  "staging_chunk_bytes",
                          "io_threads",          "low_speed_bytes_per_s",
                          "busy_poll_us",        NULL};
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  int anonymous = 0, addressing = 0, skip = 0, integrity = 0, rdma = 0,
      level = 0;
  unsigned long long part = 0, thr = 0, pool = 0, chunk = 0;
  if (self->c != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Client.__init__ called twice");
    return -1;
  }
  if (!PyArg_ParseTupleAndKeywords(
          args, kw, "|$zzzzzzpipzIIIIIIIKKiizziKKIIi", names, &cfg.endpoint_url,
          &cfg.region, &cfg.access_key_id, &cfg.secret_access_key,
          &cfg.session_token, &cfg.profile, &anonymous, &addressing, &skip,
          &cfg.ca_bundle, &cfg.connect_timeout_ms, &cfg.request_timeout_ms,
          &cfg.stall_timeout_ms, &cfg.max_attempts, &cfg.retry_base_ms,
          &cfg.max_connections, &cfg.concurrency, &part, &thr, &integrity,
          &rdma, &cfg.rdma_device, &cfg.rdma_gid_index, &level, &pool, &chunk,
          &cfg.io_threads, &cfg.low_speed_bytes_per_s, &cfg.busy_poll_us)) {
    return -1;
  }
  cfg.anonymous = anonymous;
  cfg.addressing = (enum hipobj_addressing)addressing;
  cfg.tls_skip_verify = skip;
  cfg.part_size = part;
  cfg.multipart_threshold = thr;
  cfg.integrity = (enum hipobj_integrity)integrity;
  cfg.rdma_policy = (enum hipobj_rdma_policy)rdma;
  cfg.log_level = (enum hipobj_log_level)level;
  cfg.staging_pool_bytes = (size_t)pool;
  cfg.staging_chunk_bytes = (size_t)chunk;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  struct hipobj_client *c = NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_client_create(&cfg, &c, err);
  Py_END_ALLOW_THREADS;
  if (rc != HIPOBJ_OK) {
    raise_hipobj(rc, err);
    hipobj_error_free(err);
    return -1;
  }
  hipobj_error_free(err);
  self->c = c;
  self->pid = getpid();
  return 0;
}

static PyObject *client_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args;
  (void)kw;
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  client_obj *self = (client_obj *)alloc(type, 0);
  if (self == NULL) {
    return NULL;
  }
  self->c = NULL;
  self->calls = 0;
  self->qhead = self->qtail = NULL;
  self->inflight = 0;
  self->closing = 0;
  self->inflight_map = PyDict_New();
  if (self->inflight_map == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  pthread_mutex_init(&self->qmu, NULL);
  pthread_cond_init(&self->qcv, NULL);
  return (PyObject *)self;
}

/* Frees the library's client. In a forked child the client is a copy
 * whose threads stayed in the parent: freeing it would wait for them
 * forever, so the copy is left alone (its memory goes with the process). */
static void client_free_c(client_obj *self) {
  struct hipobj_client *c = self->c;
  self->c = NULL;
  if (c == NULL || self->pid != getpid()) {
    return;
  }
  Py_BEGIN_ALLOW_THREADS;
  hipobj_client_free(c);
  Py_END_ALLOW_THREADS;
}

static PyObject *client_close(client_obj *self, PyObject *unused) {
  (void)unused;
  if (self->c == NULL) {
    Py_RETURN_NONE;
  }
  if (self->calls > 0) {
    PyErr_Format(PyExc_RuntimeError,
                 "hipobj.Client.close: %ld call(s) still running on it",
                 self->calls);
    return NULL;
  }
  /* closing first: client_cancel_all releases the GIL while it waits,
   * and no thread may start a transfer on the client meanwhile. The
   * dispatcher still delivers what is in flight: it ends only once
   * inflight is 0. */
  pthread_mutex_lock(&self->qmu);
  self->closing = 1;
  pthread_mutex_unlock(&self->qmu);
  if (self->pid == getpid()) {
    client_cancel_all(self);
  }
  pthread_mutex_lock(&self->qmu);
  pthread_cond_broadcast(&self->qcv);
  pthread_mutex_unlock(&self->qmu);
  client_free_c(self);
  Py_RETURN_NONE;
}

static void client_dealloc(client_obj *self) {
  PyTypeObject *tp = Py_TYPE((PyObject *)self);
  /* Asynchronous transfers hold a reference to their client, so none is
   * running here. */
  client_free_c(self);
  Py_CLEAR(self->inflight_map);
  pthread_mutex_destroy(&self->qmu);
  pthread_cond_destroy(&self->qcv);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

static PyObject *client_get_endpoint(client_obj *self, void *closure) {
  (void)closure;
  if (self->c == NULL) {
    Py_RETURN_NONE;
  }
  return PyUnicode_FromString(hipobj_client_endpoint(self->c));
}

static PyObject *client_get_region(client_obj *self, void *closure) {
  (void)closure;
  if (self->c == NULL) {
    Py_RETURN_NONE;
  }
  return PyUnicode_FromString(hipobj_client_region(self->c));
}

static PyObject *client_get_closed(client_obj *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(self->c == NULL);
}

/* ---- blocking calls without a payload ---- */

/* Runs one call on the client with the GIL released. */
#define CALL_RELEASED(self, rc, expr)                                          \
  do {                                                                         \
    if (client_enter(self) < 0)                                                \
      return NULL;                                                             \
    Py_BEGIN_ALLOW_THREADS;                                                    \
    rc = (expr);                                                               \
    Py_END_ALLOW_THREADS;                                                      \
    client_leave(self);                                                        \
  } while (0)

static PyObject *client_head(client_obj *self, PyObject *args) {
  const char *bucket, *key;
  if (!PyArg_ParseTuple(args, "ss", &bucket, &key)) {
    return NULL;
  }
  struct hipobj_object_info info = HIPOBJ_OBJECT_INFO_INIT;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  CALL_RELEASED(self, rc, hipobj_s3_head(self->c, bucket, key, &info, err));
  PyObject *ret = rc == HIPOBJ_OK
                      ? Py_BuildValue("(KLss)", (unsigned long long)info.size,
                                      (long long)info.last_modified, info.etag,
                                      info.content_type)
                      : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

/* delete(bucket, key), create_bucket(bucket), delete_bucket(bucket) */
static PyObject *client_simple(client_obj *self, PyObject *args, int op) {
  const char *bucket, *key = NULL;
  if (!PyArg_ParseTuple(args, op == 0 ? "ss" : "s", &bucket, &key)) {
    return NULL;
  }
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  CALL_RELEASED(self, rc,
                op == 0   ? hipobj_s3_delete(self->c, bucket, key, err)
                : op == 1 ? hipobj_s3_create_bucket(self->c, bucket, err)
                          : hipobj_s3_delete_bucket(self->c, bucket, err));
  PyObject *ret = rc == HIPOBJ_OK ? Py_NewRef(Py_None) : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

static PyObject *client_delete(client_obj *self, PyObject *args) {
  return client_simple(self, args, 0);
}
static PyObject *client_create_bucket(client_obj *self, PyObject *args) {
  return client_simple(self, args, 1);
}
static PyObject *client_delete_bucket(client_obj *self, PyObject *args) {
  return client_simple(self, args, 2);
}

/* list(bucket, prefix, delimiter, token, start_after, max_keys) ->
 * ([(key, size, etag, mtime)], [prefix], next_token or None) */
static PyObject *client_list(client_obj *self, PyObject *args) {
  const char *bucket;
  struct hipobj_list_opts o = HIPOBJ_LIST_OPTS_INIT;
  if (!PyArg_ParseTuple(args, "szzzzI", &bucket, &o.prefix, &o.delimiter,
                        &o.continuation_token, &o.start_after, &o.max_keys)) {
    return NULL;
  }
  struct hipobj_list_page *page = NULL;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  CALL_RELEASED(self, rc, hipobj_s3_list(self->c, bucket, &o, &page, err));
  if (rc != HIPOBJ_OK) {
    raise_hipobj(rc, err);
    hipobj_error_free(err);
    return NULL;
  }
  hipobj_error_free(err);
  PyObject *objs = NULL, *prefixes = NULL, *ret = NULL;
  size_t n = hipobj_list_page_count(page);
  size_t np = hipobj_list_page_prefix_count(page);
  objs = PyList_New((Py_ssize_t)n);
  prefixes = PyList_New((Py_ssize_t)np);
  if (objs == NULL || prefixes == NULL) {
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    PyObject *t =
        Py_BuildValue("(sKsL)", hipobj_list_page_key(page, i),
                      (unsigned long long)hipobj_list_page_size(page, i),
                      hipobj_list_page_etag(page, i),
                      (long long)hipobj_list_page_mtime(page, i));
    if (t == NULL) {
      goto out;
    }
    PyList_SetItem(objs, (Py_ssize_t)i, t);
  }
  for (size_t i = 0; i < np; i++) {
    PyObject *s = PyUnicode_FromString(hipobj_list_page_prefix(page, i));
    if (s == NULL) {
      goto out;
    }
    PyList_SetItem(prefixes, (Py_ssize_t)i, s);
  }
  ret =
      Py_BuildValue("(OOz)", objs, prefixes, hipobj_list_page_next_token(page));
out:
  Py_XDECREF(objs);
  Py_XDECREF(prefixes);
  hipobj_list_page_free(page);
  return ret;
}

/* Whether this is the thread Python runs signal handlers on
 * (threading.main_thread(), asked again in a new process: a fork from
 * another thread makes that one the main thread). -1 with an exception. */
static int on_main_thread(void) {
  static pid_t pid;
  static unsigned long main_ident;
  if (pid != getpid()) {
    PyObject *mod = PyImport_ImportModule("threading");
    PyObject *t = mod ? PyObject_CallMethod(mod, "main_thread", NULL) : NULL;
    PyObject *id = t ? PyObject_GetAttrString(t, "ident") : NULL;
    Py_XDECREF(mod);
    Py_XDECREF(t);
    if (id == NULL) {
      return -1;
    }
    main_ident = PyLong_AsUnsignedLong(id);
    Py_DECREF(id);
    if (PyErr_Occurred()) {
      return -1;
    }
    pid = getpid();
  }
  return PyThread_get_thread_ident() == main_ident;
}

/* get(bucket, key, mem, ...) and put(bucket, key, mem, ...): a transfer
 * run to completion on this thread. On the main thread it is started and
 * waited for (xfer_run_blocking), so that Ctrl-C cancels it and a progress
 * callback runs here; on another thread (no signal reaches Python code
 * there) without a progress callback, it is the library's blocking call,
 * which spares a small GET two hand-offs between threads. */
static PyObject *client_blocking(client_obj *self, int is_get, PyObject *args,
                                 PyObject *kw) {
  PyObject *progress = kw ? PyDict_GetItemString(kw, "progress") : NULL;
  int main = on_main_thread();
  if (main < 0) {
    return NULL;
  }
  if (!main && (progress == NULL || progress == Py_None)) {
    return xfer_start(self, is_get, args, kw, XFER_DIRECT);
  }
  xfer_obj *x = (xfer_obj *)xfer_start(self, is_get, args, kw, XFER_WAITED);
  if (x == NULL) {
    return NULL;
  }
  PyObject *ret = xfer_run_blocking(x, progress);
  Py_DECREF(x);
  return ret;
}

static PyObject *client_get(client_obj *self, PyObject *args, PyObject *kw) {
  return client_blocking(self, 1, args, kw);
}
static PyObject *client_put(client_obj *self, PyObject *args, PyObject *kw) {
  return client_blocking(self, 0, args, kw);
}
static PyObject *client_get_start(client_obj *self, PyObject *args,
                                  PyObject *kw) {
  return xfer_start(self, 1, args, kw, XFER_ASYNC);
}
static PyObject *client_put_start(client_obj *self, PyObject *args,
                                  PyObject *kw) {
  return xfer_start(self, 0, args, kw, XFER_ASYNC);
}

static PyMethodDef client_methods[] = {
    {"close", (PyCFunction)client_close, METH_NOARGS, NULL},
    {"head", (PyCFunction)client_head, METH_VARARGS, NULL},
    {"delete", (PyCFunction)client_delete, METH_VARARGS, NULL},
    {"create_bucket", (PyCFunction)client_create_bucket, METH_VARARGS, NULL},
    {"delete_bucket", (PyCFunction)client_delete_bucket, METH_VARARGS, NULL},
    {"list", (PyCFunction)client_list, METH_VARARGS, NULL},
    {"get", (PyCFunction)(void (*)(void))client_get,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"put", (PyCFunction)(void (*)(void))client_put,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"get_start", (PyCFunction)(void (*)(void))client_get_start,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"put_start", (PyCFunction)(void (*)(void))client_put_start,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"wait_event", (PyCFunction)client_wait_event, METH_NOARGS, NULL},
    {"mpu_create", (PyCFunction)(void (*)(void))client_mpu_create,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {"mpu_open", (PyCFunction)(void (*)(void))client_mpu_open,
     METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef client_getset[] = {
    {"endpoint", (getter)client_get_endpoint, NULL, NULL, NULL},
    {"region", (getter)client_get_region, NULL, NULL, NULL},
    {"closed", (getter)client_get_closed, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot client_slots[] = {
    {Py_tp_new, client_new},         {Py_tp_init, client_init},
    {Py_tp_dealloc, client_dealloc}, {Py_tp_methods, client_methods},
    {Py_tp_getset, client_getset},   {0, NULL}};

static PyType_Spec client_spec = {"hipobj._hipobj.Client", sizeof(client_obj),
                                  0, Py_TPFLAGS_DEFAULT, client_slots};

/* ---- module functions ---- */

static PyObject *mod_set_error_factory(PyObject *self, PyObject *fn) {
  (void)self;
  PyObject *old = error_factory;
  error_factory = Py_NewRef(fn);
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

static PyObject *mod_version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(hipobj_version());
}

static PyObject *mod_strerror(PyObject *self, PyObject *arg) {
  (void)self;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) {
    return NULL;
  }
  return PyUnicode_FromString(hipobj_strerror((int)v));
}

/* gpu_platform(kind) -> (available, device_count, name, library, version,
 * reason) */
static PyObject *mod_gpu_platform(PyObject *self, PyObject *arg) {
  (void)self;
  long kind = PyLong_AsLong(arg);
  if (kind == -1 && PyErr_Occurred()) {
    return NULL;
  }
  struct hipobj_gpu_platform_info info = HIPOBJ_GPU_PLATFORM_INFO_INIT;
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_gpu_platform_info((enum hipobj_mem_kind)kind, &info, NULL);
  Py_END_ALLOW_THREADS;
  if (rc != HIPOBJ_OK) {
    return raise_hipobj(rc, NULL);
  }
  return Py_BuildValue("(iissss)", info.available, info.device_count, info.name,
                       info.library, info.version, info.reason);
}

/* gpu_alloc(kind, device, len) -> ptr; gpu_free(kind, device, ptr, len):
 * for the safetensors loader where no framework allocates device memory. */
static PyObject *mod_gpu_alloc(PyObject *self, PyObject *args) {
  (void)self;
  int kind, device;
  unsigned long long len;
  if (!PyArg_ParseTuple(args, "iiK", &kind, &device, &len)) {
    return NULL;
  }
  struct hipobj_mem m = HIPOBJ_MEM_INIT;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_gpu_alloc((enum hipobj_mem_kind)kind, device, (size_t)len, &m,
                        err);
  Py_END_ALLOW_THREADS;
  PyObject *ret = rc == HIPOBJ_OK
                      ? PyLong_FromUnsignedLongLong((uintptr_t)m.ptr)
                      : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

static PyObject *mod_gpu_free(PyObject *self, PyObject *args) {
  (void)self;
  int kind, device;
  unsigned long long ptr, len;
  if (!PyArg_ParseTuple(args, "iiKK", &kind, &device, &ptr, &len)) {
    return NULL;
  }
  struct hipobj_mem m = hipobj_mem_gpu((enum hipobj_mem_kind)kind, device,
                                       (void *)(uintptr_t)ptr, (size_t)len);
  if (kind == HIPOBJ_MEM_HOST) {
    m = hipobj_mem_host((void *)(uintptr_t)ptr, (size_t)len);
  }
  Py_BEGIN_ALLOW_THREADS;
  hipobj_gpu_free(&m);
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

static PyObject *mod_parse_size(PyObject *self, PyObject *arg) {
  (void)self;
  const char *text = PyUnicode_AsUTF8AndSize(arg, NULL);
  uint64_t v = 0;
  if (text == NULL) {
    return NULL;
  }
  if (hipobj_parse_size(text, &v) != HIPOBJ_OK) {
    return PyErr_Format(PyExc_ValueError,
                        "not a size: '%s' (e.g. 8MiB, 1.5GiB, 4096)", text);
  }
  return PyLong_FromUnsignedLongLong(v);
}

static PyObject *mod_is_retryable(PyObject *self, PyObject *arg) {
  (void)self;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) {
    return NULL;
  }
  return PyBool_FromLong(hipobj_status_is_retryable((int)v));
}

static PyMethodDef module_methods[] = {
    {"parse_size", mod_parse_size, METH_O, NULL},
    {"is_retryable", mod_is_retryable, METH_O, NULL},
    {"set_error_factory", mod_set_error_factory, METH_O, NULL},
    {"version", mod_version, METH_NOARGS, NULL},
    {"strerror", mod_strerror, METH_O, NULL},
    {"dlpack_info", py_dlpack_info, METH_O, NULL},
    {"mem_classify", py_mem_classify, METH_VARARGS, NULL},
    {"gpu_platform", mod_gpu_platform, METH_O, NULL},
    {"gpu_alloc", mod_gpu_alloc, METH_VARARGS, NULL},
    {"gpu_free", mod_gpu_free, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_hipobj",
    "hipObject's C API (the hipobj package is the public face)",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__hipobj(void); /* the one symbol exported */

PyMODINIT_FUNC PyInit__hipobj(void) {
  if (hipobj_global_init() != HIPOBJ_OK) {
    PyErr_SetString(PyExc_ImportError, "hipobj_global_init failed");
    return NULL;
  }
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) {
    return NULL;
  }
  client_type = (PyTypeObject *)PyType_FromSpec(&client_spec);
  if (client_type == NULL ||
      PyModule_AddObjectRef(m, "Client", (PyObject *)client_type) < 0 ||
      xfer_types_init(m) < 0 || mpu_type_init(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  PyModule_AddIntConstant(m, "MEM_HOST", HIPOBJ_MEM_HOST);
  PyModule_AddIntConstant(m, "MEM_HIP", HIPOBJ_MEM_HIP);
  PyModule_AddIntConstant(m, "MEM_CUDA", HIPOBJ_MEM_CUDA);
  PyModule_AddIntConstant(m, "MEM_FILE", HIPOBJ_MEM_FILE);
  PyModule_AddStringConstant(m, "HEADER_VERSION", HIPOBJ_VERSION_STRING);
  return m;
}
