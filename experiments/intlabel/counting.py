"""Probe generators and telemetry bandwidth against fat-tree size (figures 20 and 21).

Two variants, kept apart:

* ``"sheet"``: the INT-label authors' own counting model, term for term, which reproduces
  their spreadsheet (k = 10, 20, 30) and so the published figures.
* ``"corrected"``: the same model with two slips fixed. INT-path's generators follow INT-path's
  own claim for fat-trees (one path when the topology has an even number of basic units,
  k paths otherwise) instead of one per host; Pingmesh's bandwidth gets the x8 (bytes to
  bits) that every other row of the sheet has. Everything else is the sheet's.

A k-ary fat-tree has k^3/4 hosts and k^2/2 edge (ToR) switches; probes or labels run at
100/s. Arithmetic is exact (fractions) so the sheet's decimals come out exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np

from common.errors import InvalidValueError

SCHEMES = ("INT-path", "INT-label", "Pingmesh", "HULA")
SHEET_K = (10, 20, 30)
"""Fat-tree sizes of the authors' sheet and of figures 20 and 21."""

RATE_PER_S = 100
"""Probes (or labels) per second per source in the sheet."""

INT_PATH_PROBE_BYTES = Fraction(433, 2)
"""216.5 B per INT-path probe, as in the sheet."""

INT_LABEL_BYTES = Fraction(321, 2)
"""160.5 B per labeled packet, as in the sheet (five 32 B INT items are 160 B)."""

PINGMESH_PROBE_BYTES = 64
HULA_INTRA_POD_BYTES = 64
HULA_INTER_POD_BYTES = 128
BITS_PER_BYTE = 8
MEGA = 10**6


def _check_k(k: int) -> None:
    if k < 2 or k % 2:
        raise InvalidValueError(f"a k-ary fat-tree needs an even k >= 2, got {k}")


def hosts(k: int) -> int:
    """k^3/4 hosts in a k-ary fat-tree."""
    _check_k(k)
    return k**3 // 4


def tor_switches(k: int) -> int:
    """k^2/2 edge (ToR) switches: k pods of k/2."""
    _check_k(k)
    return k**2 // 2


# -- probe generators (figure 20) -------------------------------------------------------------


def int_path_generators_sheet(k: int) -> int:
    """The sheet's INT-path count: one generator per host, k^3/4."""
    return hosts(k)


def int_path_generators_claimed(k: int) -> int:
    """INT-path's own fat-tree claim: 1 path with an even number of basic units, else k.

    We read the unit count as k/2: in the switch graph edge switches have degree k/2 and
    aggregation and core switches degree k, so an Euler circuit (one path) exists exactly
    when k/2 is even.
    """
    _check_k(k)
    return 1 if (k // 2) % 2 == 0 else k


def intlabel_generators(k: int) -> int:
    """INT-label labels user packets: no probe generator at all."""
    _check_k(k)
    return 0


def pingmesh_generators(k: int) -> int:
    """Pingmesh: every host and every ToR switch sends probes, k^3/4 + k^2/2."""
    return hosts(k) + tor_switches(k)


def hula_generators(k: int) -> int:
    """HULA: every ToR switch originates probes, k^2/2."""
    return tor_switches(k)


# -- bandwidth (figure 21), exact, in Mb/s ----------------------------------------------------


def _mbps(bits_per_s: Fraction | int) -> Fraction:
    return Fraction(bits_per_s) / MEGA


def int_path_bandwidth(k: int) -> Fraction:
    """k^3/4 probes of 216.5 B at 100/s (the sheet's INT-path row)."""
    return _mbps(hosts(k) * INT_PATH_PROBE_BYTES * BITS_PER_BYTE * RATE_PER_S)


def intlabel_bandwidth(k: int) -> Fraction:
    """k^3/4 labeled packets of 160.5 B of INT data at 100/s (the sheet's INT-label row)."""
    return _mbps(hosts(k) * INT_LABEL_BYTES * BITS_PER_BYTE * RATE_PER_S)


def _pingmesh_probes(k: int) -> int:
    """Ping pairs: within each ToR (k/2 hosts, k/2 - 1 peers each) and between ToRs."""
    tors, half = tor_switches(k), k // 2
    return tors * half * (half - 1) + tors * (tors - 1)


def pingmesh_bandwidth_sheet(k: int) -> Fraction:
    """The sheet's Pingmesh row: 64 B pings at 100/s, without the x8 (bytes, not bits)."""
    return _mbps(_pingmesh_probes(k) * PINGMESH_PROBE_BYTES * RATE_PER_S)


def pingmesh_bandwidth(k: int) -> Fraction:
    """Pingmesh in bits: the sheet's row times 8."""
    return pingmesh_bandwidth_sheet(k) * BITS_PER_BYTE


def hula_bandwidth(k: int) -> Fraction:
    """The sheet's HULA row: every ToR floods, 64 B copies in its pod, 128 B beyond it.

    Per origin (k/2 - 1)(k/2)^2 intra-pod copies and (k/2)^3 (k - 1) inter-pod copies, times
    (k/2) k origins at 100/s.
    """
    _check_k(k)
    half = k // 2
    per_origin = ((half - 1) * half**2 * HULA_INTRA_POD_BYTES
                  + half**3 * (k - 1) * HULA_INTER_POD_BYTES)
    return _mbps(per_origin * half * k * RATE_PER_S * BITS_PER_BYTE)


# -- the two variants -------------------------------------------------------------------------

GENERATORS: dict[str, dict[str, Callable[[int], int]]] = {
    "sheet": {
        "INT-path": int_path_generators_sheet,
        "INT-label": intlabel_generators,
        "Pingmesh": pingmesh_generators,
        "HULA": hula_generators,
    },
    "corrected": {
        "INT-path": int_path_generators_claimed,
        "INT-label": intlabel_generators,
        "Pingmesh": pingmesh_generators,
        "HULA": hula_generators,
    },
}

BANDWIDTH: dict[str, dict[str, Callable[[int], Fraction]]] = {
    "sheet": {
        "INT-path": int_path_bandwidth,
        "INT-label": intlabel_bandwidth,
        "Pingmesh": pingmesh_bandwidth_sheet,
        "HULA": hula_bandwidth,
    },
    "corrected": {
        "INT-path": int_path_bandwidth,
        "INT-label": intlabel_bandwidth,
        "Pingmesh": pingmesh_bandwidth,
        "HULA": hula_bandwidth,
    },
}


def probe_generators(k: int, variant: str = "sheet") -> dict[str, int]:
    """Probe generators per scheme for one fat-tree size."""
    return {name: fn(k) for name, fn in GENERATORS[variant].items()}


def bandwidth_mbps(k: int, variant: str = "sheet") -> dict[str, float]:
    """Network-wide telemetry bandwidth per scheme, Mb/s, for one fat-tree size."""
    return {name: float(fn(k)) for name, fn in BANDWIDTH[variant].items()}


def figure20(ks: Sequence[int] = SHEET_K, variant: str = "sheet") -> dict[str, np.ndarray]:
    """Figure 20's series: ``k`` and probe generators per scheme."""
    rows = [probe_generators(k, variant) for k in ks]
    return {"k": np.asarray(ks), **{s: np.array([r[s] for r in rows]) for s in SCHEMES}}


def figure21(ks: Sequence[int] = SHEET_K, variant: str = "sheet") -> dict[str, np.ndarray]:
    """Figure 21's series: ``k`` and bandwidth in Mb/s per scheme."""
    rows = [bandwidth_mbps(k, variant) for k in ks]
    return {"k": np.asarray(ks), **{s: np.array([r[s] for r in rows]) for s in SCHEMES}}
