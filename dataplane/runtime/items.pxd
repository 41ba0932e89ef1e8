# A store into item i of a list through the list's item pointers: no type
# or bounds check, inline (Cython's item assignment is an out-of-line call
# with both checks, about 30 instructions). For compiled hot paths whose
# indices are in range by construction: the engine's stores into a packet
# state (every state has its template's length) and the event queue's into
# its slot lists (slot numbers come from its free list). The same store is
# SPUT in generated pipelines (compiler/native.py), whose text is built on
# its own. Declarations only: nothing is imported at run time.
cdef extern from *:
    """
    static inline void intbed_put_item(PyObject *list, Py_ssize_t i, PyObject *v) {
        PyObject *old = PyList_GET_ITEM(list, i);
        Py_INCREF(v);
        PyList_SET_ITEM(list, i, v);
        Py_XDECREF(old);
    }
    """
    void put_item "intbed_put_item" (list values, Py_ssize_t i, object v)


# The last item of a list taken, and an item put back at its end, without
# CPython's list_resize: list.pop() reallocates a list that falls below half
# its capacity, and append() one that is then below half of it again, so a
# pool that one hop empties and the next refills (the engine's finished
# states, one or two deep at the GPINT scale) was reallocated twice a hop.
# The capacity is kept; a list past it grows as append() grows it.
cdef extern from *:
    """
    static inline PyObject *intbed_take_last(PyObject *list) {
        Py_ssize_t n = PyList_GET_SIZE(list) - 1;
        PyObject *item = PyList_GET_ITEM(list, n);
        Py_SET_SIZE(list, n);
        return item;
    }
    static inline int intbed_push_item(PyObject *list, PyObject *v) {
        Py_ssize_t n = PyList_GET_SIZE(list);
        if (n < ((PyListObject *)list)->allocated) {
            Py_INCREF(v);
            PyList_SET_ITEM(list, n, v);
            Py_SET_SIZE(list, n + 1);
            return 0;
        }
        return PyList_Append(list, v);
    }
    """
    # Non-empty lists only; the item's reference passes to the caller.
    object take_last "intbed_take_last" (list values)
    int push_item "intbed_push_item" (list values, object v) except -1


# A finished packet state given its template's values again (the engine's
# reset, switch._reset, whose Python form assigns each run's slice): a C
# loop over the two lists' item pointers that stores only the slots that
# differ, over (lo, hi) runs read as machine words from a bytes object
# (switch._packed_spans). Most of a finished state still holds the
# template's own objects, and a slice assignment (about 1,100 instructions
# a run: its slice object, index conversions and buffer) increfs and
# decrefs every slot whether it changed or not.
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF, Py_XINCREF
from cpython.sequence cimport PySequence_Fast_ITEMS

cdef inline void reset_runs(list s, list template, bytes spans) except *:
    cdef PyObject **d
    cdef PyObject **t
    cdef PyObject *o
    cdef PyObject *n
    cdef Py_ssize_t *runs
    cdef Py_ssize_t r, i, lo, hi
    if len(s) != len(template):
        s[:] = template
        return
    d = PySequence_Fast_ITEMS(s)
    t = PySequence_Fast_ITEMS(template)
    runs = <Py_ssize_t *>PyBytes_AS_STRING(spans)
    for r in range(len(spans) // (2 * sizeof(Py_ssize_t))):
        lo = runs[2 * r]
        hi = runs[2 * r + 1]
        for i in range(lo, hi):
            o = d[i]
            n = t[i]
            if o != n:
                Py_XINCREF(n)
                d[i] = n
                Py_XDECREF(o)
