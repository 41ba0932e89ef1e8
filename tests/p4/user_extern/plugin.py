"""Implementations of user_extern.p4's externs, loaded through
INTBED_EXTERN_PLUGINS by the test that runs user_extern.stf."""

from dataplane.runtime.plugins import extern_function, extern_object


@extern_function("mix")
def mix(a: int, b: int) -> int:
    # d = (a << 8 | b) XOR 0x5555
    return ((a << 8) | b) ^ 0x5555


@extern_object("Tally")
class Tally:
    def __init__(self, start: int) -> None:
        self.total = start

    def next(self, add: int) -> int:
        # The running total from the constructor's start; the switch keeps
        # the object, so a second packet sees the first one's sum.
        self.total += add
        return self.total
