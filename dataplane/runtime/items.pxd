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
