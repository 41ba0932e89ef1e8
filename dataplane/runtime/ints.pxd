# Integer objects of a packet state, read into machine words and made from
# them in C, for built pipelines (dataplane.compiler.native; a built
# pipeline's key includes this file). Cython's own conversions check a
# list's bounds, take and drop a reference and walk a general conversion
# (some 30 instructions a read); the values here are a state's fields, ints
# of at most 64 bits in slots that exist by construction. Boxing a value
# below 257 returns CPython's shared small integer from a table instead of
# a call, so identity tests against 0 and 1 (STRUE, the state reset) hold.
# Declarations only: nothing is imported at run time.
cdef extern from *:
    """
    static PyObject *intbed_small_ints[257];

    static PyObject *intbed_small_int(unsigned long long v) {
        PyObject *o = intbed_small_ints[v];
        if (o == NULL) {
            o = PyLong_FromUnsignedLongLong(v);
            if (o == NULL)
                return NULL;
            intbed_small_ints[v] = o;  /* the table's reference, kept */
        }
        Py_INCREF(o);
        return o;
    }

    static inline PyObject *intbed_box_u64(unsigned long long v) {
        if (v < 257) {
            PyObject *o = intbed_small_ints[v];
            if (o != NULL) {
                Py_INCREF(o);
                return o;
            }
            return intbed_small_int(v);
        }
        return PyLong_FromUnsignedLongLong(v);
    }

    static inline PyObject *intbed_box_ssize(Py_ssize_t v) {
        if (v >= 0 && v < 257)
            return intbed_box_u64((unsigned long long)v);
        return PyLong_FromSsize_t(v);
    }

    static unsigned long long intbed_index_u64(PyObject *o) {
        unsigned long long r;
        PyObject *x;
        if (PyLong_Check(o))
            return PyLong_AsUnsignedLongLong(o);
        x = PyNumber_Index(o);
        if (x == NULL)
            return (unsigned long long)-1;
        r = PyLong_AsUnsignedLongLong(x);
        Py_DECREF(x);
        return r;
    }

    static inline unsigned long long intbed_get_u64(PyObject *list, Py_ssize_t i) {
        PyObject *o = PyList_GET_ITEM(list, i);
    #if PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        if (Py_IS_TYPE(o, &PyLong_Type)) {
            Py_ssize_t n = Py_SIZE(o);
            const digit *d = ((PyLongObject *)o)->ob_digit;
            if (n == 1)
                return d[0];
            if (n == 0)
                return 0;
            if (n == 2)
                return ((unsigned long long)d[1] << 30) | d[0];
        }
    #endif
        return intbed_index_u64(o);
    }

    static inline Py_ssize_t intbed_get_ssize(PyObject *list, Py_ssize_t i) {
        PyObject *o = PyList_GET_ITEM(list, i);
    #if PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        if (Py_IS_TYPE(o, &PyLong_Type)) {
            Py_ssize_t n = Py_SIZE(o);
            const digit *d = ((PyLongObject *)o)->ob_digit;
            if (n == 1)
                return (Py_ssize_t)d[0];
            if (n == 0)
                return 0;
            if (n == -1)
                return -(Py_ssize_t)d[0];
        }
    #endif
        return PyNumber_AsSsize_t(o, PyExc_OverflowError);
    }
    """
    # A new reference; a table's object for values below 257.
    object box_u64 "intbed_box_u64" (unsigned long long v)
    object box_ssize "intbed_box_ssize" (Py_ssize_t v)
    # Item i of a list (in range: not checked) as a machine word; an item
    # that is not an integer, or one out of the word's range, raises as
    # Cython's conversion would.
    unsigned long long get_u64 "intbed_get_u64" (list values, Py_ssize_t i) except? <unsigned long long>-1
    Py_ssize_t get_ssize "intbed_get_ssize" (list values, Py_ssize_t i) except? -1
