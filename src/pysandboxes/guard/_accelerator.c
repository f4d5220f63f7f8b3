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
 * holds only ``take``, which builds the others (nothing of them is an attribute of the
 * module), and ``compile_program`` (builtin compile of source, below: harmless in any hands).
 * ``take`` hands the others out once per process: the guard takes them when it is armed,
 * before any code of the program runs, and keeps them only in the closures of the hook's own
 * state, which no function the program can reach holds. A second ``take`` -- a program's,
 * after the module is imported again -- raises RuntimeError: the flag is this shared
 * object's static storage, which a new module object shares.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif
#endif
#ifndef _WIN32
#include <limits.h>
#include <sys/param.h>
#include <sys/stat.h>
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

/* The identity key of a frame's globals (object.__hash__, guard/kit.py's identity). */
static Py_hash_t
scope_of(PyFrameObject *frame)
{
    PyObject *globals = PyFrame_GetGlobals(frame);
    Py_hash_t key = PyBaseObject_Type.tp_hash(globals);
    Py_DECREF(globals);
    return key;
}

/* The last frozenset of identities asked about, as a sorted array: the guard passes one set,
 * made at arming, for all its walks (a frozenset cannot change), so a frame's test is a binary
 * search instead of a new int object and a set lookup. Kept alive while it is the one. */
static PyObject *sorted_for = NULL;
static Py_hash_t *sorted_keys = NULL;
static Py_ssize_t sorted_count = 0;

static int
compare_keys(const void *a, const void *b)
{
    Py_hash_t x = *(const Py_hash_t *)a, y = *(const Py_hash_t *)b;
    return (x > y) - (x < y);
}

/* Sorts scopes into the array (its items must be ints); 0, or -1 with an exception set. */
static int
sort_scopes(PyObject *scopes)
{
    Py_ssize_t count = PySet_GET_SIZE(scopes);
    Py_hash_t *keys = PyMem_Malloc(sizeof(Py_hash_t) * (count ? count : 1));
    if (keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *items = PyObject_GetIter(scopes);
    if (items == NULL) {
        PyMem_Free(keys);
        return -1;
    }
    Py_ssize_t i = 0;
    PyObject *item;
    while (i < count && (item = PyIter_Next(items)) != NULL) {
        int exact = PyLong_CheckExact(item);
        Py_ssize_t value = exact ? PyLong_AsSsize_t(item) : -1;
        Py_DECREF(item);
        if (!exact || (value == -1 && PyErr_Occurred())) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "a frozenset of identities (ints) is needed");
            }
            Py_DECREF(items);
            PyMem_Free(keys);
            return -1;
        }
        keys[i++] = (Py_hash_t)value;
    }
    Py_DECREF(items);
    if (PyErr_Occurred()) {
        PyMem_Free(keys);
        return -1;
    }
    qsort(keys, (size_t)i, sizeof(Py_hash_t), compare_keys);
    PyMem_Free(sorted_keys);
    Py_XDECREF(sorted_for);
    Py_INCREF(scopes);
    sorted_for = scopes;
    sorted_keys = keys;
    sorted_count = i;
    return 0;
}

/* Whether key is in the frozenset scopes: 1, 0, -1 on error. */
static int
scope_in(Py_hash_t key, PyObject *scopes)
{
    if (scopes != sorted_for && sort_scopes(scopes) < 0) {
        return -1;
    }
    Py_ssize_t low = 0, high = sorted_count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (sorted_keys[middle] < key) {
            low = middle + 1;
        }
        else {
            high = middle;
        }
    }
    return low < sorted_count && sorted_keys[low] == key;
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
        int found = scope_in(scope_of(frame), scopes);
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

/* A growing NUL-terminated byte string, for path_walk (which runs without the GIL: plain C
 * memory only). */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
} bytes_buf;

static int
buf_put(bytes_buf *buf, const char *text, size_t size)
{
    if (buf->len + size + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 256;
        while (cap < buf->len + size + 1) {
            cap *= 2;
        }
        char *data = realloc(buf->data, cap);
        if (data == NULL) {
            return -1;
        }
        buf->data = data;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, text, size);
    buf->len += size;
    buf->data[buf->len] = '\0';
    return 0;
}

/* text as the file system's bytes into buf. 1: this text is not for the compiled walk (it
 * does not encode, or a NUL is in it: the caller's Python walk decides then), 0: done, -1: an
 * exception is set. The answer is made of bytes decoded again: text whose bytes decode to
 * another text ('\udcc3\udca9' is the bytes of 'é') is answered as that text, which is how
 * guard/paths.py's fs_name names it before any walk. */
static int
fs_text(PyObject *text, bytes_buf *buf)
{
    PyObject *raw = PyUnicode_EncodeFSDefault(text);
    if (raw == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
            PyErr_Clear();
            return 1;
        }
        return -1;
    }
    const char *data = PyBytes_AS_STRING(raw);
    Py_ssize_t size = PyBytes_GET_SIZE(raw);
    int verdict = (Py_ssize_t)strlen(data) != size ? 1 : 0;
    if (verdict == 0 && buf_put(buf, data, (size_t)size) < 0) {
        Py_DECREF(raw);
        PyErr_NoMemory();
        return -1;
    }
    Py_DECREF(raw);
    return verdict;
}

#ifndef _WIN32
#ifndef MAXPATHLEN
#define MAXPATHLEN PATH_MAX
#endif
#define WALK_MAX_LINKS 40

/* The walk proper on plain memory, the GIL released: resolved starts as the start directory
 * (no final '/'), pending as the path. 0: done, -1: no memory. look = 0: no component is
 * looked up (every one taken for a name that is not a link): the walk's answer when no
 * component on its way is a link, which walk_without_links has had the kernel check. */
static int
walk_bytes(bytes_buf *resolved, bytes_buf *pending, int look)
{
    size_t at = 0;
    int links = 0;
    char target[MAXPATHLEN + 1];
    struct stat info;
    while (1) {
        while (at < pending->len && pending->data[at] == '/') {
            at++;
        }
        if (at >= pending->len) {
            return 0;
        }
        size_t end = at;
        while (end < pending->len && pending->data[end] != '/') {
            end++;
        }
        const char *part = pending->data + at;
        size_t size = end - at;
        at = end;
        if (size == 1 && part[0] == '.') {
            continue;
        }
        if (size == 2 && part[0] == '.' && part[1] == '.') {
            if (resolved->len == 0) {
                continue;
            }
            size_t cut = resolved->len;
            while (cut > 0 && resolved->data[cut - 1] != '/') {
                cut--;
            }
            /* resolved[: resolved.rfind("/")]: resolved begins with '/' (the start is absolute
             * or empty), the last case only mirrors the Python for a start that is not */
            resolved->len = cut > 0 ? cut - 1 : resolved->len - 1;
            resolved->data[resolved->len] = '\0';
            continue;
        }
        size_t before = resolved->len;
        if (buf_put(resolved, "/", 1) < 0 || buf_put(resolved, part, size) < 0) {
            return -1;
        }
        if (!look || lstat(resolved->data, &info) != 0 || !S_ISLNK(info.st_mode)) {
            continue; /* a name as it is, or kept as written when it cannot be looked up */
        }
        if (++links > WALK_MAX_LINKS) {
            continue;
        }
        ssize_t length = readlink(resolved->data, target, MAXPATHLEN); /* os.readlink's */
        if (length < 0) {
            continue;
        }
        resolved->len = length > 0 && target[0] == '/' ? 0 : before;
        resolved->data[resolved->len] = '\0';
        bytes_buf rest = {NULL, 0, 0}; /* the link's target, then what was left */
        if (buf_put(&rest, target, (size_t)length) < 0 || buf_put(&rest, "/", 1) < 0 ||
            buf_put(&rest, pending->data + at, pending->len - at) < 0) {
            free(rest.data);
            return -1;
        }
        free(pending->data);
        *pending = rest;
        at = 0;
    }
}
#endif

#ifdef HAVE_OPENAT2
/* The fewest components for which walk_without_links is tried first: it costs two system
 * calls (three when the final name is missing), the walk one lstat per component, and each
 * of them about as much as the other here (docs/performance.md, "Ninth pass"). */
#define WITHOUT_LINKS_MIN_COMPONENTS 3

/* Set once openat2 failed with ENOSYS or EPERM: the kernel is older than 5.6, or a seccomp
 * filter refuses it (python-sb's own does, providers/seccomp.py: its mode is in memory). */
static int openat2_refused = 0;

/* The components of pending the walk would look up: 0 when one of them is "." or ".." at
 * the end (no plain final name to leave missing), else their number. */
static size_t
plain_components(const bytes_buf *pending, int *last_plain)
{
    size_t count = 0;
    size_t at = 0;
    *last_plain = 0;
    while (at < pending->len) {
        while (at < pending->len && pending->data[at] == '/') {
            at++;
        }
        size_t end = at;
        while (end < pending->len && pending->data[end] != '/') {
            end++;
        }
        if (end > at) {
            size_t size = end - at;
            int dot = (size == 1 && pending->data[at] == '.') ||
                      (size == 2 && pending->data[at] == '.' && pending->data[at + 1] == '.');
            *last_plain = !dot;
            count++;
        }
        at = end;
    }
    return count;
}

/* 0 when the kernel resolves path (NUL-terminated) with no symbolic link on the way, not
 * even a final one (openat2 with RESOLVE_NO_SYMLINKS, which implies no magic link either:
 * /proc/self/fd/N and /proc/self are links for it), else errno. An O_PATH descriptor needs
 * no right on the file itself, only search on the directories, as lstat; it is closed at
 * once. */
static int
open_without_links(const char *path)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0) {
        return errno ? errno : EINVAL;
    }
    close((int)fd);
    return 0;
}

/* The walk's answer in two or three system calls instead of one lstat per component, when
 * the kernel shows that no component the walk would look up is a link: then each lstat would
 * have found a name that is not a link (or none, kept as written), and the answer is the
 * lexical one (walk_bytes with look = 0, the same code). The path is tried whole; when its
 * final name alone is missing (ENOENT, the directory part opened without a link), the walk
 * would keep that name as written: the same lexical answer. Any other failure -- a link
 * (ELOOP), a component missing or not a directory or not searchable, a name too long -- and
 * the walk decides, as without this step. 1: answered in resolved, 0: the walk must decide
 * (resolved and pending unchanged), -1: no memory. */
static int
walk_without_links(bytes_buf *resolved, bytes_buf *pending)
{
    if (openat2_refused) {
        return 0;
    }
    int last_plain;
    if (plain_components(pending, &last_plain) < WITHOUT_LINKS_MIN_COMPONENTS) {
        return 0;
    }
    bytes_buf whole = {NULL, 0, 0};
    int joined = pending->len > 0 && pending->data[0] == '/'; /* the walk skips empty names */
    if (buf_put(&whole, resolved->data, resolved->len) < 0 ||
        (!joined && buf_put(&whole, "/", 1) < 0) ||
        buf_put(&whole, pending->data, pending->len) < 0) {
        free(whole.data);
        return -1;
    }
    int failed = open_without_links(whole.data);
    if (failed == ENOENT && last_plain) {
        size_t cut = whole.len;
        while (cut > 0 && whole.data[cut - 1] == '/') {
            cut--; /* "dir/new/": the final name is "new" */
        }
        while (cut > 0 && whole.data[cut - 1] != '/') {
            cut--;
        }
        whole.data[cut > 0 ? cut : 1] = '\0'; /* the directory part, "/" at least */
        failed = open_without_links(whole.data);
    }
    free(whole.data);
    if (failed == ENOSYS || failed == EPERM) {
        openat2_refused = 1;
    }
    if (failed) {
        return 0;
    }
    size_t start = resolved->len;
    bytes_buf lexical = {NULL, 0, 0};
    if (buf_put(&lexical, pending->data, pending->len) < 0) {
        return -1;
    }
    int done = walk_bytes(resolved, &lexical, 0);
    free(lexical.data);
    if (done < 0) {
        resolved->len = start;
        resolved->data[start] = '\0';
        return -1;
    }
    return 1;
}
#endif

/* path_walk(path, start[, quick]): guard/paths.py's walk(path, start) -- one lstat per
 * component, a link's target walked in its place (40 at most), a name that cannot be looked up
 * kept as written, ".." applied to what is resolved so far -- on the file system's bytes,
 * without a Python object per component and without the GIL. None when the Python walk must
 * answer (fs_text), and off POSIX. With quick true, only walk_without_links answers (None when
 * it cannot): for a deep path, whose walk costs more than the kernel's resolution of its
 * directory (guard/paths.py's kernel_resolve, tried then). */
static PyObject *
path_walk(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if ((nargs != 2 && nargs != 3) || !PyUnicode_CheckExact(args[0]) ||
        !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "path_walk() takes two str and a flag");
        return NULL;
    }
    int quick = 0;
    if (nargs == 3 && (quick = PyObject_IsTrue(args[2])) < 0) {
        return NULL;
    }
#ifndef _WIN32
    bytes_buf pending = {NULL, 0, 0};
    bytes_buf resolved = {NULL, 0, 0};
    PyObject *result = NULL;
    int verdict = fs_text(args[0], &pending);
    if (verdict == 0) {
        verdict = fs_text(args[1], &resolved);
    }
    if (verdict == 0 && (buf_put(&pending, "", 0) < 0 || buf_put(&resolved, "", 0) < 0)) {
        PyErr_NoMemory();
        verdict = -1;
    }
    if (verdict == 0) {
        while (resolved.len > 0 && resolved.data[resolved.len - 1] == '/') {
            resolved.data[--resolved.len] = '\0'; /* start.rstrip("/") */
        }
        int done = 0;
        Py_BEGIN_ALLOW_THREADS
#ifdef HAVE_OPENAT2
        done = walk_without_links(&resolved, &pending);
#endif
        if (done == 0 && !quick) {
            done = walk_bytes(&resolved, &pending, 1);
        }
        Py_END_ALLOW_THREADS
        if (done < 0) {
            PyErr_NoMemory();
        }
        else if (done == 0) { /* quick, and the kernel's answer was not certain */
            result = Py_NewRef(Py_None);
        }
        else if (resolved.len == 0) {
            result = PyUnicode_FromString("/");
        }
        else {
            result = PyUnicode_DecodeFSDefaultAndSize(resolved.data, (Py_ssize_t)resolved.len);
        }
    }
    else if (verdict == 1) {
        result = Py_NewRef(Py_None);
    }
    free(pending.data);
    free(resolved.data);
    return result;
#else
    Py_RETURN_NONE;
#endif
}

/* The walk's state, a tuple made once by guard/frames.py's make_frames (WALK_STATE there). */
enum {
    W_GUARD_GLOBALS, /* frozenset of identities */
    W_GUARD_PREFIX,  /* str: the guard's directory + "/guard/" */
    W_HOOK_SCOPE,    /* int: the hook body's globals' identity, 0: none */
    W_IMPORT_DEPUTIES,
    W_NAME_DEPUTIES,
    W_NOT_A_FILE, /* str: what a co_filename that is not an exact str is taken to be */
    W_IS_LIBRARY_FILE,
    W_IS_DEPUTY_FILE,
    W_LIBRARY_CACHE, /* dict: is_library_file's answers */
    W_DEPUTY_CACHE,  /* dict: is_deputy_file's answers, by (file, identity of the list) */
    W_SIZE
};

/* below_hook (frames.py): where a walk from frame may start. Takes and returns a reference. */
static PyFrameObject *
below_hook(PyFrameObject *frame, PyObject *scopes, Py_hash_t hook_scope, int *error)
{
    if (!hook_scope) {
        return frame;
    }
    PyFrameObject *probe = frame;
    Py_XINCREF(probe);
    while (probe != NULL) {
        Py_hash_t scope = scope_of(probe);
        if (scope == hook_scope) {
            PyFrameObject *back = PyFrame_GetBack(probe);
            Py_DECREF(probe);
            Py_DECREF(frame);
            return back;
        }
        int guard = scope_in(scope, scopes);
        if (guard <= 0) {
            Py_DECREF(probe);
            if (guard < 0) {
                *error = 1;
            }
            return frame;
        }
        PyFrameObject *back = PyFrame_GetBack(probe);
        Py_DECREF(probe);
        probe = back;
    }
    return frame;
}

/* A cached answer of one of frames.py's file predicates, or the predicate called: 1, 0, -1. */
static int
answer(PyObject *cache, PyObject *key, PyObject *predicate, PyObject *const *args, size_t nargs)
{
    PyObject *known = PyDict_GetItemWithError(cache, key); /* borrowed */
    if (known == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        PyObject *result = PyObject_Vectorcall(predicate, args, nargs, NULL);
        if (result == NULL) {
            return -1;
        }
        int truth = PyObject_IsTrue(result);
        Py_DECREF(result);
        return truth;
    }
    return PyObject_IsTrue(known);
}

/* is_deputy_file(filename, deputies) (frames.py), through its cache. */
static int
deputy_answer(PyObject *filename, PyObject *deputies, PyObject *state)
{
    PyObject *which = PyLong_FromSsize_t(PyBaseObject_Type.tp_hash(deputies));
    if (which == NULL) {
        return -1;
    }
    PyObject *key = PyTuple_Pack(2, filename, which);
    Py_DECREF(which);
    if (key == NULL) {
        return -1;
    }
    PyObject *args[2] = {filename, deputies};
    int deputy = answer(PyTuple_GET_ITEM(state, W_DEPUTY_CACHE), key,
                        PyTuple_GET_ITEM(state, W_IS_DEPUTY_FILE), args, 2);
    Py_DECREF(key);
    return deputy;
}

/* acts_for_another (frames.py): whether a frame outside the guard (code, its filename) is a
 * deputy's; inner: the file of the deputy frame met before it (NULL: none). 1, 0, -1. */
static int
acts_for_another(PyObject *code, PyObject *filename, PyObject *inner, PyObject *deputies,
                 PyObject *state)
{
    PyObject *name = ((PyCodeObject *)code)->co_name;
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "<module>") == 0) {
        return 0;
    }
    PyObject *library_args[1] = {filename};
    int library = answer(PyTuple_GET_ITEM(state, W_LIBRARY_CACHE), filename,
                         PyTuple_GET_ITEM(state, W_IS_LIBRARY_FILE), library_args, 1);
    if (library <= 0) {
        return library;
    }
    int deputy = deputy_answer(filename, deputies, state);
    if (deputy != 0) {
        return deputy;
    }
    if (deputies != PyTuple_GET_ITEM(state, W_IMPORT_DEPUTIES) || inner == NULL) {
        return 0;
    }
    PyObject *suffix = PyUnicode_FromString("/importlib/__init__.py");
    if (suffix == NULL) {
        return -1;
    }
    Py_ssize_t tail = PyUnicode_Tailmatch(inner, suffix, 0, PY_SSIZE_T_MAX, 1);
    Py_DECREF(suffix);
    if (tail <= 0) {
        return (int)tail;
    }
    return deputy_answer(filename, PyTuple_GET_ITEM(state, W_NAME_DEPUTIES), state);
}

/* walk(count, deputies, enough, state): frames.py's walk, from the frame two callers above
 * the calling Python function (its getframe(2)). Returns (first, caller, caller's code). */
static PyObject *
walk(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyLong_CheckExact(args[0]) || !PyTuple_CheckExact(args[3]) ||
        PyTuple_GET_SIZE(args[3]) != W_SIZE) {
        PyErr_SetString(PyExc_TypeError, "walk() takes a count, deputies, enough and a state");
        return NULL;
    }
    Py_ssize_t count = PyLong_AsSsize_t(args[0]);
    if (count == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *deputies = args[1];
    PyObject *enough = args[2];
    PyObject *state = args[3];
    PyObject *scopes = PyTuple_GET_ITEM(state, W_GUARD_GLOBALS);
    PyObject *prefix = PyTuple_GET_ITEM(state, W_GUARD_PREFIX);
    PyObject *not_a_file = PyTuple_GET_ITEM(state, W_NOT_A_FILE);
    Py_hash_t hook_scope = PyLong_AsSsize_t(PyTuple_GET_ITEM(state, W_HOOK_SCOPE));
    if (hook_scope == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int has_deputies = PyObject_IsTrue(deputies);
    if (has_deputies < 0) {
        return NULL;
    }
    PyObject *found = PyList_New(0);
    if (found == NULL) {
        return NULL;
    }
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed: the calling function's */
    Py_XINCREF(frame);
    for (int step = 0; step < 2 && frame != NULL; step++) {
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    if (frame == NULL) {
        Py_DECREF(found);
        PyErr_SetString(PyExc_ValueError, "call stack is not deep enough");
        return NULL;
    }
    int error = 0;
    frame = below_hook(frame, scopes, hook_scope, &error);
    PyObject *inner = NULL; /* borrowed from a code object we hold: the previous deputy's file */
    PyObject *inner_code = NULL;
    PyFrameObject *caller = NULL;
    PyObject *caller_code = NULL;
    while (!error && frame != NULL) {
        PyObject *code = (PyObject *)PyFrame_GetCode(frame);
        PyObject *filename = ((PyCodeObject *)code)->co_filename;
        if (!PyUnicode_CheckExact(filename)) {
            filename = not_a_file;
        }
        int guard = scope_in(scope_of(frame), scopes);
        if (guard > 0) {
            guard = (int)PyUnicode_Tailmatch(filename, prefix, 0, PY_SSIZE_T_MAX, -1);
        }
        if (guard < 0) {
            Py_DECREF(code);
            error = 1;
            break;
        }
        if (guard) {
            Py_DECREF(code);
            PyFrameObject *back = PyFrame_GetBack(frame);
            Py_DECREF(frame);
            frame = back;
            continue;
        }
        if (PyList_GET_SIZE(found) < count) {
            PyObject *item = PyTuple_Pack(2, filename, ((PyCodeObject *)code)->co_name);
            if (item == NULL || PyList_Append(found, item) < 0) {
                Py_XDECREF(item);
                Py_DECREF(code);
                error = 1;
                break;
            }
            Py_DECREF(item);
            if (PyList_GET_SIZE(found) == count && enough != Py_None) {
                PyObject *decided = PyObject_CallOneArg(enough, found);
                int truth = decided == NULL ? -1 : PyObject_IsTrue(decided);
                Py_XDECREF(decided);
                if (truth != 0) {
                    Py_DECREF(code);
                    error = truth < 0;
                    if (!error) {
                        Py_DECREF(frame);
                        Py_XDECREF(inner_code);
                        PyObject *result = PyTuple_Pack(3, found, Py_None, Py_None);
                        Py_DECREF(found);
                        return result;
                    }
                    break;
                }
            }
        }
        if (caller == NULL) {
            int deputy = 0;
            if (has_deputies) {
                deputy = acts_for_another(code, filename, inner, deputies, state);
            }
            if (deputy < 0) {
                Py_DECREF(code);
                error = 1;
                break;
            }
            if (deputy) {
                Py_XDECREF(inner_code);
                inner_code = code; /* keeps filename alive */
                Py_INCREF(inner_code);
                inner = filename;
            }
            else {
                caller = frame;
                Py_INCREF(caller);
                caller_code = code;
                Py_INCREF(caller_code);
            }
        }
        Py_DECREF(code);
        if (caller != NULL && PyList_GET_SIZE(found) >= count) {
            break;
        }
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    Py_XDECREF(frame);
    Py_XDECREF(inner_code);
    if (error) {
        Py_DECREF(found);
        Py_XDECREF(caller);
        Py_XDECREF(caller_code);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(3, found, caller ? (PyObject *)caller : Py_None,
                                    caller_code ? caller_code : Py_None);
    Py_DECREF(found);
    Py_XDECREF(caller);
    Py_XDECREF(caller_code);
    return result;
}

static PyMethodDef walk_def = {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL, NULL};
static PyMethodDef dir_path_def = {"dir_path", dir_path, METH_O, NULL};
static PyMethodDef path_walk_def = {"path_walk", (PyCFunction)(void (*)(void))path_walk,
                                     METH_FASTCALL, NULL};
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

/* take(): (code_of, frame_at, in_chain, make_gate, dir_path, path_walk, walk), once per process. */
static PyObject *
take(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(ignored))
{
    if (handed_out) {
        PyErr_SetString(PyExc_RuntimeError,
                        "python-sb: the accelerator was already handed out in this process");
        return NULL;
    }
    enum { N_PARTS = 7 };
    PyObject *parts[N_PARTS] = {
        PyCFunction_New(&code_of_def, NULL),   PyCFunction_New(&frame_at_def, NULL),
        PyCFunction_New(&in_chain_def, NULL),  PyCFunction_New(&make_gate_def, NULL),
        PyCFunction_New(&dir_path_def, NULL),  PyCFunction_New(&path_walk_def, NULL),
        PyCFunction_New(&walk_def, NULL),
    };
    PyObject *result = NULL;
    int made = 1;
    for (int i = 0; i < N_PARTS; i++) {
        made = made && parts[i] != NULL;
    }
    if (made) {
        result = PyTuple_New(N_PARTS);
    }
    for (int i = 0; i < N_PARTS; i++) {
        if (result != NULL) {
            PyTuple_SET_ITEM(result, i, parts[i]); /* steals the reference */
        }
        else {
            Py_XDECREF(parts[i]);
        }
    }
    if (result != NULL) {
        handed_out = 1;
    }
    return result;
}

/* compile_program(source, filename): compile(source, filename, "exec", dont_inherit=True)
 * for the program's own code (launch/child.py, Program.load), or None for source holding a NUL
 * (the caller's builtin compile then raises CPython's own error).
 *
 * Why: builtin compile first asks whether its source is an ast object (PyAST_Check), and the
 * first such question of an interpreter builds the ast module's hundred-odd classes: 9 million
 * instructions, a tenth of a python-sb child's start (callgrind, docs/performance.md), which
 * plain python3 never pays for its script. Py_CompileStringObject is what builtin compile calls
 * next, with the same flags (the source's UTF-8, a str's coding cookie ignored, the
 * interpreter's optimization level), and it raises the same "compile" audit event (CPython's
 * parser raises it): in a program's hands this is builtin compile without ast input, nothing
 * more, and the module may keep it. */
static PyObject *
compile_program(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "compile_program(source, filename: str)");
        return NULL;
    }
    PyCompilerFlags flags;
    memset(&flags, 0, sizeof(flags));
    flags.cf_flags = PyCF_SOURCE_IS_UTF8;
    flags.cf_feature_version = PY_MINOR_VERSION;
    const char *text;
    Py_ssize_t size;
    if (PyUnicode_Check(args[0])) {
        text = PyUnicode_AsUTF8AndSize(args[0], &size);
        if (text == NULL) {
            return NULL;
        }
        flags.cf_flags |= PyCF_IGNORE_COOKIE;
    }
    else if (PyBytes_Check(args[0])) {
        text = PyBytes_AS_STRING(args[0]);
        size = PyBytes_GET_SIZE(args[0]);
    }
    else {
        PyErr_SetString(PyExc_TypeError, "compile_program: the source is str or bytes");
        return NULL;
    }
    if (strlen(text) != (size_t)size) {
        Py_RETURN_NONE;
    }
    return Py_CompileStringObject(text, args[1], Py_file_input, &flags, -1);
}

static PyMethodDef module_methods[] = {
    {"take", take, METH_NOARGS,
     "take()\n--\n\nThe accelerator's functions, once per process (the guard's, at arming)."},
    {"compile_program", (PyCFunction)(void (*)(void))compile_program, METH_FASTCALL,
     "compile_program(source, filename)\n--\n\n"
     "compile(source, filename, 'exec', dont_inherit=True) without the ast check; None for"
     " source holding a NUL."},
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
