"""One run seed, many independent random streams: one scheme in two layers.

Names (``derive_seed``, ``stream``): every stream of a run (a link's
losses, a switch's P4 ``random()``, a host's traffic schedule) is named; its
seed is a hash of the run seed and the name, so adding a stream never
shifts the others and the same seed and configuration reproduce a run bit
for bit.

Numbers (``child_seed``): inside one named stream, numpy code (the
traffic schedules) needs several independent generators, such as the
destinations and the arrival times of one host. The integer that
``derive_seed`` gave becomes numpy state by ``numpy.random.SeedSequence``,
and its numbered children are that sequence with the number appended to
its spawn key. A child of a child appends again, so a path of names and
then numbers always names the same stream.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["child_seed", "derive_seed", "stream"]


def derive_seed(run_seed: int, *names: object) -> int:
    """The 64-bit seed of the stream ``names`` of run ``run_seed``."""
    text = "/".join([str(run_seed), *map(str, names)]).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def stream(run_seed: int, *names: object) -> random.Random:
    """A ``random.Random`` on the stream ``names`` of run ``run_seed``."""
    return random.Random(derive_seed(run_seed, *names))


def child_seed(seed: int | np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Independent numbered stream ``index`` of ``seed``; unlike
    ``SeedSequence.spawn`` it does not change ``seed``, so the same call
    gives the same stream."""
    import numpy as np  # only numpy users pay for importing it

    base = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, index))
