"""The compiled fast path's lookup for one-field lpm tables: a fixed array
of slots, one per key's hash, each holding a key (as key + 1, 0: empty) in
a machine word and that key's answer in a list beside it.

The reference (``tables.Table._lookup_lpm1``) remembers answers in a
dictionary; a probe here reads one machine word and one list item instead
of a dictionary's index, entry and key object, which a hundred switches'
tables keep cold. Both give the answer of ``_longest_prefix``: a key whose
slot holds another key is looked up again. Compiled only (``Table``
chooses it then): the slots are read through a C pointer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cython


def slots_lookup(n_slots: int, table_levels: list[tuple[int, dict]],
                 longest_prefix: Callable[[list[tuple[int, dict]], int], Any]
                 ) -> tuple[bytearray, list[Any], Callable[[tuple], Any]]:
    """The slots' keys and answers (cleared in place when an entry comes or
    goes; built pipelines read them too, through ``tables.lpm1_lookup``)
    and the lookup over them, as a closure: its objects are cells, not
    attributes read per packet."""
    if n_slots < 1 or n_slots & (n_slots - 1):
        raise ValueError(f"LPM_SLOTS must be a power of two, not {n_slots}")
    slot_keys = bytearray(8 * n_slots)
    slot_found: list[Any] = [None] * n_slots
    keys = cython.declare(bytearray, slot_keys)
    found = cython.declare(list, slot_found)
    levels = cython.declare(list, table_levels)
    n = cython.declare(cython.Py_ssize_t, n_slots)

    @cython.locals(value=cython.ulonglong, i=cython.Py_ssize_t, words=cython.p_ulonglong)
    def lookup_lpm1_slots(key: tuple[int, ...]) -> Any:
        obj = key[0]
        value = obj
        i = lpm1_slot(value, n)  # noqa: F821 (tables.pxd: the pipelines' hash too)
        words = cython.cast(cython.p_ulonglong, PyByteArray_AS_STRING(keys))  # noqa: F821
        if words[i] == value + 1:
            return found[i]
        entry = longest_prefix(levels, obj)
        words[i] = value + 1
        found[i] = entry
        return entry

    return slot_keys, slot_found, lookup_lpm1_slots
