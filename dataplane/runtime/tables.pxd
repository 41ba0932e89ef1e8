# Cython's view of tables.py on the compiled fast path (common.accel): the
# C function a one-field lpm table's slots are read through (the machine
# words of a bytearray). Python ignores this file.
from cpython.bytearray cimport PyByteArray_AS_STRING
