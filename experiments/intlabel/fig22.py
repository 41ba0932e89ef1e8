"""INT-label's Fig. 22: packets and extra bits to trace one flow's path
with INT-label, PINT and INT, vs the path's length.

Packets (a): INT sends one probe that every hop stamps; INT-label's
specific-flow telemetry (section 3.3) samples one packet at the first hop
and sets its INT_num to MAX_hop, so every later hop labels it with
probability f = INT_num / (MAX_hop - 1) >= 1: one labeled packet carries
the whole path. PINT is measured: flows through ``sinks.pint``'s
encoders and decoder at the paper's 16-bit budget (32-bit switch ids, so
two fragments), beside the online decoder's exact expectation. Extra bits
(b): INT = the probe's own headers (Ethernet 14 B, IPv4 20 B, UDP 8 B) +
INT-MD v2.0 shim 4 B + INT-MD header 12 B + a 4-byte node id per hop;
INT-label = its 2-byte INT option + per hop either the 4-byte switch id
(what path tracing needs, as INT's node id) or the paper's whole 32-byte
item (set beside an INT probe carrying 32 bytes a hop too); PINT = packets x 16 digest bits.
"""

from __future__ import annotations

import math
from typing import Any

from common.seeds import derive_seed
from experiments.framework import Context, Experiment, Headline, Param, Result, register
from experiments.pint.figures import LABELS, _schemes_check, measure
from sinks.intlabel.report import ITEM_BYTES
from sinks.pint.pathtrace import MAX_HOPS

PAPER = ("INT-label: Lightweight In-band Network-Wide Telemetry via Distributed Labeling "
         "(Song et al.), section 6, Fig. 22")
BITS_PER_BYTE = 8
PROBE_HEADERS_BYTES = 14 + 20 + 8  # Ethernet, IPv4, UDP of an INT probe packet
INT_MD_SHIM_BYTES = 4  # docs/int_md_format.md: INT v2.0 shim
INT_MD_HEADER_BYTES = 12  # INT-MD v2.0 header
NODE_ID_BYTES = 4  # INT-MD node id; also INT-label's switch id field
OPTION_BYTES = 2  # INT-label's INT option: NH and INT_num (paper Fig. 4)
PAPER_BUDGET = 16  # "the maximum number of bits ... carried by a single packet in PINT"
PAPER_QUOTES = (
    "Both INT and INT-label require only a single packet to complete the path probing task.",
    "PINT requires an increasing number of packets as the number of hops increases.",
    "INT uses an active probing approach by sending probe packets, which introduces "
    "additional overhead in terms of packet headers.",
    "INT-label can accomplish path probing with the minimum number of required INT packets "
    "and extra bits.",
)


def int_bits(hops: int, hop_bytes: int = NODE_ID_BYTES) -> int:
    """One INT probe: its headers, the INT-MD shim and header, ``hop_bytes`` per hop."""
    return BITS_PER_BYTE * (PROBE_HEADERS_BYTES + INT_MD_SHIM_BYTES + INT_MD_HEADER_BYTES
                            + hop_bytes * hops)


def intlabel_bits(hops: int, item_bytes: int) -> int:
    """One labeled packet: the INT option and one item per hop."""
    return BITS_PER_BYTE * (OPTION_BYTES + item_bytes * hops)


def grows(rows: list[dict[str, Any]], sigmas: float = 3.0) -> bool:
    """Each longer path needs at least as many packets, within ``sigmas``
    combined standard errors (a Monte Carlo mean may dip by chance)."""
    rows = sorted(rows, key=lambda r: r["hops"])
    return all(b["pint_packets"] >= a["pint_packets"]
               - sigmas * math.hypot(a["pint_stderr"], b["pint_stderr"])
               for a, b in zip(rows, rows[1:]))


def compute(ctx: Context) -> Result:
    p = ctx.params
    design = max(p["hops"])
    points = [(scheme, PAPER_BUDGET, int(h), design, p["flows"],
               derive_seed(ctx.seed, "intlabel-fig22", scheme, h) & 0xFFFFFFFF)
              for scheme in p["schemes"] for h in p["hops"]]
    rows = []
    for r in ctx.map(measure, points, label="points"):
        k = r["hops"]
        rows.append({
            "scheme": r["scheme"], "hops": k, "flows": r["flows"],
            "pint_packets": r["mean_stored"], "pint_stderr": r["stderr_stored"],
            "pint_packets_online": r["mean_online"], "pint_expected_online": r["expected_online"],
            "pint_undecoded": r["undecoded_stored"], "pint_bits": r["extra_bits_stored"],
            "int_packets": 1, "intlabel_packets": 1,
            "int_bits": int_bits(k), "intlabel_bits": intlabel_bits(k, NODE_ID_BYTES),
            "intlabel_item_bits": intlabel_bits(k, ITEM_BYTES),
            "int_item_bits": int_bits(k, ITEM_BYTES),
        })
    return Result(rows, headlines(rows, p), [f"paper: \"{q}\"" for q in PAPER_QUOTES]
                  + [f"PINT's XOR and hybrid are tuned for {design} hops (the longest swept)"])


def headlines(rows: list[dict[str, Any]], p: dict[str, Any]) -> list[Headline]:
    longest = max(p["hops"])
    heads = [
        Headline("INT packets to trace a path", 1.0, 1.0, "packets",
                 note="one probe stamped by every hop"),
        Headline("INT-label packets to trace a path", 1.0, 1.0, "packets",
                 note="INT_num starts at MAX_hop, so f >= 1 at every hop (section 3.3)"),
    ]
    for scheme in p["schemes"]:
        mine = [r for r in rows if r["scheme"] == scheme]
        heads.append(Headline(f"PINT {LABELS[scheme]} packets grow with hops",
                              float(grows(mine)), 1.0, "bool"))
        last = next(r for r in mine if r["hops"] == longest)
        heads.append(Headline(f"PINT {LABELS[scheme]} packets, {longest} hops",
                              last["pint_packets"], None, "packets",
                              note="the paper's Fig. 22 gives no numbers in its text"))
        heads.append(Headline(f"PINT {LABELS[scheme]} extra bits, {longest} hops",
                              last["pint_bits"], None, "bits"))
        fewest = all(r["intlabel_bits"] < min(r["pint_bits"], r["int_bits"]) for r in mine)
        heads.append(Headline(f"INT-label (switch ids) fewest extra bits vs {LABELS[scheme]}",
                              float(fewest), 1.0, "bool"))
        beats = [r["hops"] for r in mine if r["intlabel_item_bits"] < r["pint_bits"]]
        heads.append(Headline(
            f"shortest path where INT-label's 32-byte items cost fewer bits than "
            f"{LABELS[scheme]}", float(min(beats)) if beats else None, None, "hops",
            note="the paper's whole item is 256 bits a hop, more than PINT's digests spend "
                 "per hop; '-' means on no path swept"))
    heads.append(Headline("INT-label (32-byte items) fewer extra bits than INT carrying as much",
                          float(all(r["intlabel_item_bits"] < r["int_item_bits"] for r in rows)),
                          1.0, "bool", note="the probe's headers are INT's overhead"))
    heads.append(Headline(f"INT extra bits, {longest} hops", float(int_bits(longest)), None,
                          "bits"))
    heads.append(Headline(f"INT-label extra bits (switch ids), {longest} hops",
                          float(intlabel_bits(longest, NODE_ID_BYTES)), None, "bits"))
    return heads


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    ax_a, ax_b = fig.subplots(1, 2)
    hops = sorted({r["hops"] for r in res.rows})
    first = [r for r in res.rows if r["scheme"] == params["schemes"][0]]
    first.sort(key=lambda r: r["hops"])
    for scheme, marker in zip(params["schemes"], "os^"):
        rows = sorted((r for r in res.rows if r["scheme"] == scheme), key=lambda r: r["hops"])
        ax_a.plot(hops, [r["pint_packets"] for r in rows], f"-{marker}", ms=3,
                  label=f"PINT {LABELS[scheme]}")
        ax_a.plot(hops, [r["pint_expected_online"] for r in rows], "--", lw=0.8, color="gray",
                  label="online decoder's expectation" if marker == "o" else None)
        ax_b.plot(hops, [r["pint_bits"] for r in rows], f"-{marker}", ms=3,
                  label=f"PINT {LABELS[scheme]}")
    ax_a.plot(hops, [1] * len(hops), "-k", label="INT, INT-label")
    ax_b.plot(hops, [r["int_bits"] for r in first], "-k", label="INT (probe)")
    ax_b.plot(hops, [r["intlabel_bits"] for r in first], "-r", label="INT-label (ids)")
    ax_b.plot(hops, [r["intlabel_item_bits"] for r in first], ":r", label="INT-label (32 B)")
    for ax, title, label in ((ax_a, "(a) packets", "packets to trace the path"),
                             (ax_b, "(b) extra bits", "extra bits")):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("hops")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)


def _hops_check(v: Any, p: dict[str, Any]) -> str | None:
    if len(v) < 2 or any(not 1 <= int(h) <= MAX_HOPS for h in v):
        return f"give at least two path lengths between 1 and {MAX_HOPS}"
    return None


register(Experiment(
    "intlabel-fig22", "packets and extra bits to trace a flow's path: INT-label, PINT, INT",
    PAPER,
    [
        Param("hops", [2, 3, 4, 5, 6, 7, 8, 9, 10], "path lengths", quick=[2, 5, 10],
              check=_hops_check),
        Param("schemes", ["hybrid", "reservoir"], "PINT's schemes: hybrid, reservoir, xor",
              check=_schemes_check),
        Param("flows", 1000, "PINT flows per point", quick=200,
              check=lambda v, p: None if 2 <= v <= 100_000 else "give 2 to 100,000 flows"),
    ],
    compute, plot, description=__doc__.split("\n\n")[1].replace("\n", " "),
))
