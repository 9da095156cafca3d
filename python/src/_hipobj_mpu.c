/* _hipobj_mpu.c - multipart uploads step by step (include/hipobj/mpu.h):
 * the Mpu type behind hipobj.MultipartUpload. Each call blocks with the
 * GIL released, so parts uploaded from several Python threads run at once
 * (a struct hipobj_mpu allows that; complete, abort and list_parts must
 * not overlap with part uploads, which the Python side documents). */
#include "_hipobj.h"

PyTypeObject *mpu_type;

typedef struct {
  PyObject ob_base;
  client_obj *client; /* strong reference */
  struct hipobj_mpu *m;
} mpu_obj;

static PyObject *mpu_wrap(client_obj *c, struct hipobj_mpu *m) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(mpu_type, Py_tp_alloc);
  mpu_obj *o = (mpu_obj *)alloc(mpu_type, 0);
  if (o == NULL) {
    hipobj_mpu_free(m);
    return NULL;
  }
  o->client = (client_obj *)Py_NewRef((PyObject *)c);
  o->m = m;
  return (PyObject *)o;
}

/* mpu_create(bucket, key, content_type=None) */
PyObject *client_mpu_create(client_obj *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"bucket", "key", "content_type", NULL};
  const char *bucket, *key, *ctype = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|z", names, &bucket, &key,
                                   &ctype)) {
    return NULL;
  }
  if (client_enter(self) < 0) {
    return NULL;
  }
  struct hipobj_mpu *m = NULL;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_mpu_create(self->c, bucket, key, ctype, &m, err);
  Py_END_ALLOW_THREADS;
  client_leave(self);
  PyObject *ret = rc == HIPOBJ_OK ? mpu_wrap(self, m) : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

/* mpu_open(bucket, key, upload_id) */
PyObject *client_mpu_open(client_obj *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"bucket", "key", "upload_id", NULL};
  const char *bucket, *key, *id;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "sss", names, &bucket, &key,
                                   &id)) {
    return NULL;
  }
  if (client_enter(self) < 0) {
    return NULL;
  }
  struct hipobj_mpu *m = NULL;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc = hipobj_mpu_open(self->c, bucket, key, id, &m, err);
  client_leave(self);
  PyObject *ret = rc == HIPOBJ_OK ? mpu_wrap(self, m) : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

static int mpu_enter(mpu_obj *o) {
  if (o->m == NULL) {
    PyErr_SetString(PyExc_ValueError, "multipart upload handle is freed");
    return -1;
  }
  return client_enter(o->client);
}

/* upload_part(number, mem) -> result tuple */
static PyObject *mpu_upload_part(mpu_obj *o, PyObject *args) {
  unsigned number;
  PyObject *spec;
  if (!PyArg_ParseTuple(args, "IO", &number, &spec)) {
    return NULL;
  }
  struct pymem mem;
  if (pymem_from_spec(spec, 0, &mem) < 0) {
    return NULL;
  }
  if (mpu_enter(o) < 0) {
    pymem_release(&mem);
    return NULL;
  }
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = hipobj_mpu_upload_part(o->m, number, &mem.mem, &res, err);
  Py_END_ALLOW_THREADS;
  client_leave(o->client);
  pymem_release(&mem);
  PyObject *ret = rc == HIPOBJ_OK ? result_tuple(&res) : raise_hipobj(rc, err);
  hipobj_error_free(err);
  return ret;
}

/* complete() -> result tuple; abort() -> None; list_parts() -> None */
static PyObject *mpu_step(mpu_obj *o, int op) {
  if (mpu_enter(o) < 0) {
    return NULL;
  }
  struct hipobj_xfer_result res = HIPOBJ_XFER_RESULT_INIT;
  struct hipobj_error *err = NULL;
  hipobj_error_create(&err);
  int rc;
  Py_BEGIN_ALLOW_THREADS;
  rc = op == 0   ? hipobj_mpu_complete(o->m, &res, err)
       : op == 1 ? hipobj_mpu_abort(o->m, err)
                 : hipobj_mpu_list_parts(o->m, err);
  Py_END_ALLOW_THREADS;
  client_leave(o->client);
  PyObject *ret = rc != HIPOBJ_OK ? raise_hipobj(rc, err)
                  : op == 0       ? result_tuple(&res)
                                  : Py_NewRef(Py_None);
  hipobj_error_free(err);
  return ret;
}

static PyObject *mpu_complete(mpu_obj *o, PyObject *unused) {
  (void)unused;
  return mpu_step(o, 0);
}
static PyObject *mpu_abort(mpu_obj *o, PyObject *unused) {
  (void)unused;
  return mpu_step(o, 1);
}
static PyObject *mpu_list_parts(mpu_obj *o, PyObject *unused) {
  (void)unused;
  return mpu_step(o, 2);
}

/* The parts recorded in the handle: [(number, size, etag)]. */
static PyObject *mpu_get_parts(mpu_obj *o, void *closure) {
  (void)closure;
  if (o->m == NULL) {
    return PyList_New(0);
  }
  size_t n = hipobj_mpu_part_count(o->m);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    unsigned number = 0;
    uint64_t size = 0;
    const char *etag = "";
    hipobj_mpu_part(o->m, i, &number, &size, &etag);
    PyObject *t =
        Py_BuildValue("(IKs)", number, (unsigned long long)size, etag);
    if (t == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SetItem(list, (Py_ssize_t)i, t);
  }
  return list;
}

static PyObject *mpu_get_upload_id(mpu_obj *o, void *closure) {
  (void)closure;
  return PyUnicode_FromString(o->m ? hipobj_mpu_upload_id(o->m) : "");
}

static void mpu_dealloc(mpu_obj *o) {
  PyTypeObject *tp = Py_TYPE((PyObject *)o);
  hipobj_mpu_free(o->m); /* touches only the handle, never the client */
  Py_CLEAR(o->client);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static PyMethodDef mpu_methods[] = {
    {"upload_part", (PyCFunction)mpu_upload_part, METH_VARARGS, NULL},
    {"complete", (PyCFunction)mpu_complete, METH_NOARGS, NULL},
    {"abort", (PyCFunction)mpu_abort, METH_NOARGS, NULL},
    {"list_parts", (PyCFunction)mpu_list_parts, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef mpu_getset[] = {
    {"upload_id", (getter)mpu_get_upload_id, NULL, NULL, NULL},
    {"parts", (getter)mpu_get_parts, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot mpu_slots[] = {{Py_tp_dealloc, mpu_dealloc},
                                  {Py_tp_methods, mpu_methods},
                                  {Py_tp_getset, mpu_getset},
                                  {0, NULL}};

static PyType_Spec mpu_spec = {"hipobj._hipobj.Mpu", sizeof(mpu_obj), 0,
                               Py_TPFLAGS_DEFAULT, mpu_slots};

int mpu_type_init(PyObject *module) {
  mpu_type = (PyTypeObject *)PyType_FromSpec(&mpu_spec);
  if (mpu_type == NULL) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "Mpu", (PyObject *)mpu_type);
}
