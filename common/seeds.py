"""One run seed, many independent random streams.

Every stream (a link's losses, a switch's P4 ``random()``, a traffic
schedule) is named; its seed is a hash of the run seed and the name, so
adding a stream never shifts the others and the same seed and
configuration reproduce a run bit for bit.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(run_seed: int, *names: object) -> int:
    text = "/".join([str(run_seed), *map(str, names)]).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def stream(run_seed: int, *names: object) -> random.Random:
    return random.Random(derive_seed(run_seed, *names))
