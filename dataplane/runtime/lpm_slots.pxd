# Cython's view of lpm_slots.py (fastpath.loader): the slots' words read
# through the bytearray's buffer, hashed as built pipelines hash them.
from cpython.bytearray cimport PyByteArray_AS_STRING
from dataplane.runtime.tables cimport lpm1_slot
