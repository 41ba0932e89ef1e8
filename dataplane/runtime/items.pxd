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
