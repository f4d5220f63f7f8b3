/* The compiled accelerator of the Python layer's audit hook (issue 29, docs/performance.md).
 *
 * Optional: built from this file when the package is installed, used by the guard when it
 * loads, and replaced by pure-Python code of the same meaning when it does not
 * (pysandboxes/guard/accelerator.py, which documents each function and its fallback).
 *
 * Why it exists. Reading ``frame.f_code`` raises the ``object.__getattr__`` audit event, and
 * ``sys._getframe`` the ``sys._getframe`` event: every frame a walk of the guard reads re-enters
 * the audit hook (which ignores it: the thread is marked busy), about a microsecond each. And
 * every audit event of the interpreter runs the hook's Python body, even the events no handler
 * takes. The functions here read the same frames through the C API, which raises no event, and
 * answer an event no handler takes before any Python frame is made.
 *
 * Why it cannot widen what a program may do. These functions read frames without an event:
 * in a program's hands they would be introspection the guard refuses. So the module object
 * holds a single function, ``take``, which builds the others (nothing of them is an attribute
 * of the module) and hands them out once per process: the guard takes them when it is armed,
 * before any code of the program runs, and keeps them only in the closures of the hook's own
 * state, which no function the program can reach holds. A second ``take`` -- a program's,
 * after the module is imported again -- raises RuntimeError: the flag is this shared
 * object's static storage, which a new module object shares.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#ifdef __linux__
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#endif

/* Set by the first take(): one hand-out per process (a forked child inherits it). */
static int handed_out = 0;

/* code_of(frame): frame.f_code, without the object.__getattr__ event. */
static PyObject *
code_of(PyObject *Py_UNUSED(self), PyObject *frame)
{
    if (!PyFrame_Check(frame)) {
        PyErr_SetString(PyExc_TypeError, "code_of() takes a frame");
        return NULL;
    }
    return (PyObject *)PyFrame_GetCode((PyFrameObject *)frame);
}

/* frame_at(depth): sys._getframe(depth) of the calling Python code, without the
 * sys._getframe event; ValueError when the stack is not that deep (as sys._getframe). */
static PyObject *
frame_at(PyObject *Py_UNUSED(self), PyObject *arg)
{
    long depth = PyLong_AsLong(arg);
    if (depth == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
    if (frame == NULL) {
        PyErr_SetString(PyExc_ValueError, "call stack is not deep enough");
        return NULL;
    }
    Py_INCREF(frame);
    while (depth > 0) {
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        if (back == NULL) {
            PyErr_SetString(PyExc_ValueError, "call stack is not deep enough");
            return NULL;
        }
        frame = back;
        depth--;
    }
    return (PyObject *)frame;
}

/* in_chain(frame, scopes): whether frame or one of its callers runs with globals whose
 * object.__hash__ (the guard's identity key, guard/kit.py) is in the frozenset scopes; false
 * for what is not a frame (None; a forged sys._getframe event's object). Reads f_globals and
 * f_back, which raise no event in Python either. */
static PyObject *
in_chain(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "in_chain() takes a frame and a frozenset");
        return NULL;
    }
    PyObject *start = args[0];
    PyObject *scopes = args[1];
    if (!PyFrozenSet_CheckExact(scopes)) {
        PyErr_SetString(PyExc_TypeError, "in_chain() takes a frozenset of identities");
        return NULL;
    }
    if (!PyFrame_Check(start)) {
        Py_RETURN_FALSE;
    }
    PyFrameObject *frame = (PyFrameObject *)start;
    Py_INCREF(frame);
    while (frame != NULL) {
        PyObject *globals = PyFrame_GetGlobals(frame);
        Py_hash_t key = PyBaseObject_Type.tp_hash(globals);
        Py_DECREF(globals);
        PyObject *number = PyLong_FromSsize_t(key);
        if (number == NULL) {
            Py_DECREF(frame);
            return NULL;
        }
        int found = PySet_Contains(scopes, number);
        Py_DECREF(number);
        if (found != 0) {
            Py_DECREF(frame);
            if (found < 0) {
                return NULL;
            }
            Py_RETURN_TRUE;
        }
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    Py_RETURN_FALSE;
}

/* The gate: the audit hook itself, in front of the hook's Python body. Its self is the tuple
 * (names, body, pending, graveyard). An event whose name is not in names (no handler takes
 * it), while pending and graveyard are empty (no signal handler queued, nothing the guard
 * released waits to be freed), is answered here: the body would find no handler, and
 * return at once with nothing to do. Every other event goes to the body. */
static PyObject *
gate_call(PyObject *state, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "the gate takes an event and its arguments");
        return NULL;
    }
    PyObject *names = PyTuple_GET_ITEM(state, 0);
    PyObject *body = PyTuple_GET_ITEM(state, 1);
    PyObject *pending = PyTuple_GET_ITEM(state, 2);
    PyObject *graveyard = PyTuple_GET_ITEM(state, 3);
    PyObject *event = args[0];
    if (PyUnicode_CheckExact(event) && PyList_GET_SIZE(pending) == 0 &&
        PyList_GET_SIZE(graveyard) == 0) {
        int handled = PySet_Contains(names, event);
        if (handled < 0) {
            return NULL;
        }
        if (!handled) {
            Py_RETURN_NONE;
        }
    }
    return PyObject_Vectorcall(body, args, 2, NULL);
}

/* dir_path(raw): the kernel's name of the directory raw (exact bytes) names: opened O_PATH |
 * O_DIRECTORY | O_CLOEXEC, its /proc/self/fd entry read, closed; None when any step fails
 * (the caller's walk decides then, guard/paths.py's kernel_resolve) and off Linux. What the
 * resolver's hidden posix.open does, without its open event (which the hook would only mark
 * as its own), and without the descriptor ever reaching Python. The GIL is held from the open
 * to the close: no Python thread can close the descriptor and open another under its number
 * in between (the caller's inode check stays, for the code that does not hold it). */
static PyObject *
dir_path(PyObject *Py_UNUSED(self), PyObject *raw)
{
    if (!PyBytes_CheckExact(raw)) {
        PyErr_SetString(PyExc_TypeError, "dir_path() takes bytes");
        return NULL;
    }
#if defined(__linux__) && defined(O_PATH)
    const char *path = PyBytes_AS_STRING(raw);
    if ((Py_ssize_t)strlen(path) != PyBytes_GET_SIZE(raw)) {
        Py_RETURN_NONE; /* a NUL byte in it */
    }
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        Py_RETURN_NONE;
    }
    char link[48];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    char target[PATH_MAX + 1];
    ssize_t size = readlink(link, target, sizeof target);
    close(fd);
    if (size <= 0 || size >= (ssize_t)sizeof target) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeFSDefaultAndSize(target, size);
#else
    Py_RETURN_NONE;
#endif
}

static PyMethodDef dir_path_def = {"dir_path", dir_path, METH_O, NULL};
static PyMethodDef code_of_def = {"code_of", code_of, METH_O, NULL};
static PyMethodDef frame_at_def = {"frame_at", frame_at, METH_O, NULL};
static PyMethodDef in_chain_def = {"in_chain", (PyCFunction)(void (*)(void))in_chain,
                                   METH_FASTCALL, NULL};
static PyMethodDef gate_def = {"gate", (PyCFunction)(void (*)(void))gate_call, METH_FASTCALL,
                               NULL};

/* make_gate(names, body, pending, graveyard): the gate over those four (see gate_call). */
static PyObject *
make_gate(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyFrozenSet_CheckExact(args[0]) || !PyCallable_Check(args[1]) ||
        !PyList_CheckExact(args[2]) || !PyList_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "make_gate() takes a frozenset, a callable and two lists");
        return NULL;
    }
    PyObject *state = PyTuple_Pack(4, args[0], args[1], args[2], args[3]);
    if (state == NULL) {
        return NULL;
    }
    PyObject *gate = PyCFunction_New(&gate_def, state);
    Py_DECREF(state);
    return gate;
}

static PyMethodDef make_gate_def = {"make_gate", (PyCFunction)(void (*)(void))make_gate,
                                    METH_FASTCALL, NULL};

/* take(): (code_of, frame_at, in_chain, make_gate, dir_path), once per process. */
static PyObject *
take(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    if (handed_out) {
        PyErr_SetString(PyExc_RuntimeError,
                        "python-sb: the accelerator was already handed out in this process");
        return NULL;
    }
    PyObject *parts[5] = {
        PyCFunction_New(&code_of_def, NULL),  PyCFunction_New(&frame_at_def, NULL),
        PyCFunction_New(&in_chain_def, NULL), PyCFunction_New(&make_gate_def, NULL),
        PyCFunction_New(&dir_path_def, NULL),
    };
    PyObject *result = NULL;
    if (parts[0] && parts[1] && parts[2] && parts[3] && parts[4]) {
        result = PyTuple_Pack(5, parts[0], parts[1], parts[2], parts[3], parts[4]);
    }
    for (int i = 0; i < 5; i++) {
        Py_XDECREF(parts[i]);
    }
    if (result != NULL) {
        handed_out = 1;
    }
    return result;
}

static PyMethodDef module_methods[] = {
    {"take", take, METH_NOARGS,
     "take()\n--\n\nThe accelerator's functions, once per process (the guard's, at arming)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "pysandboxes.guard._accelerator",
    "The compiled accelerator of python-sb's audit hook (see pysandboxes/guard/accelerator.py).",
    -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__accelerator(void)
{
    return PyModule_Create(&module_def);
}
