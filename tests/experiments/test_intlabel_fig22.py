"""INT-label's Fig. 22: INT and INT-label trace a flow on the sim target and
the collector decodes the path from what it receives. Checked against
independent bounds: the true path the taps saw, frame sizes of Scapy-built
packets laid out as the format docs say, the 8-item stack, and a
coupon-collector expectation for a label probability of one per hop."""

from __future__ import annotations

import csv
import json
import math
import struct
from collections.abc import Callable
from typing import Any

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from experiments.framework import ExperimentError, load_all, run_experiment
from orchestration.systems.intlabel.trace import trace_flow

STACK_ITEMS = 8  # docs/intlabel_format.md: "the stack holds 8 items"


def item() -> bytes:
    """One INT-label item per docs/intlabel_format.md: switch id, ports, two
    48-bit times, latency, flags + 24-bit enqueue depth, reserved + 24-bit
    dequeue depth."""
    return (struct.pack("!IHH", 7, 1, 2) + (5).to_bytes(6, "big") + (6).to_bytes(6, "big")
            + struct.pack("!III", 9, 0x80 << 24 | 3, 4))


def expected_packets(p: float, hops: int) -> float:
    """Coupon-collector style: each hop labels a packet with probability p,
    independently; the path is known once every hop has labeled one packet.
    E = sum over m >= 0 of P(some hop still missing after m packets)."""
    if p >= 1.0:
        return 1.0
    return sum(1 - (1 - (1 - p) ** m) ** hops for m in range(10_000))


@pytest.mark.parametrize("hops", [2, 5, 9])
def test_int_traces_from_one_report_and_its_probe_is_a_scapy_probe(hops: int) -> None:
    r = trace_flow("int", hops)
    assert len(r.true_path) == hops and len(set(r.true_path)) == hops
    # 1 only because the first report's node ids are the path the taps saw
    assert r.first_report_traces and r.decoded_paths[0] == r.true_path
    assert r.packets_to_trace == 1 == expected_packets(1.0, hops)
    # Into the last switch the probe carries the node ids of the hops before it.
    shim = bytes([0x10, 0, 3 + hops - 1, 0])  # INT v2.0 shim: type MD, length in words
    probe = Ether() / IP() / UDP() / Raw(shim + bytes(12) + bytes(4 * (hops - 1)))
    assert r.wire_bytes[0] == len(bytes(probe))


@pytest.mark.parametrize("hops", [2, 5, STACK_ITEMS])
def test_intlabel_specific_flow_traces_from_one_report(hops: int) -> None:
    r = trace_flow("intlabel", hops)
    assert r.first_report_traces and r.decoded_paths[0] == r.true_path
    assert r.packets_to_trace == 1
    plain = IP(proto=17) / UDP() / Raw(b"x" * 100)
    labeled = IP(proto=253) / Raw(struct.pack("!BB", 17, 5 + hops - 1) + item() * (hops - 1)) \
        / UDP() / Raw(b"x" * 100)
    assert r.wire_bytes[0] == len(bytes(labeled)) - len(bytes(plain))


def test_intlabel_cannot_trace_past_its_stack() -> None:
    hops = STACK_ITEMS + 1
    r = trace_flow("intlabel", hops, packets=5)
    assert r.packets_to_trace is None and r.sent == 5
    # Every report carries the first eight hops, never the ninth.
    assert r.decoded_paths and all(d == r.true_path[:STACK_ITEMS] for d in r.decoded_paths)


def test_coupon_collector_reference() -> None:
    # one hop, probability p: geometric, mean 1/p; two hops: 2/p - 1/(1-(1-p)^2)
    assert expected_packets(0.25, 1) == pytest.approx(4.0)
    p = 0.3
    assert expected_packets(p, 2) == pytest.approx(2 / p - 1 / (1 - (1 - p) ** 2))


CSV_WORDS = {"": None, "True": True, "False": False}


def _value(text: str) -> Any:
    if text in CSV_WORDS:
        return CSV_WORDS[text]
    try:
        return float(text)
    except ValueError:
        return text


@pytest.fixture(scope="module")
def fig22(tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The quick run's metrics.csv rows and its headlines by name."""
    out = run_experiment("intlabel-fig22", quick=True, out=tmp_path_factory.mktemp("f22") / "r")
    with (out / "metrics.csv").open(newline="") as fh:
        rows = [{k: _value(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    summary = json.loads((out / "summary.json").read_text())
    return rows, {h["name"]: h for h in summary["headlines"]}


def test_registered_with_full_and_quick_values() -> None:
    f22 = load_all()["intlabel-fig22"]
    full, quick = f22.resolve({}, False), f22.resolve({}, True)
    assert full["hops"] == list(range(2, 11)) and quick["hops"] == [2, 5, 10]
    assert full["flows"] > quick["flows"] and "hybrid" in full["schemes"]
    with pytest.raises(ExperimentError, match="hops.*at least two path lengths"):
        f22.resolve({"hops": "5"}, True)
    with pytest.raises(ExperimentError, match="unknown scheme bogus"):
        f22.resolve({"schemes": "bogus"}, True)


def test_fig22_quick_run(fig22: Any) -> None:
    rows, _ = fig22
    assert {r["scheme"] for r in rows} == {"hybrid", "reservoir"}
    for scheme in ("hybrid", "reservoir"):
        mine = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r["hops"])
        assert [r["hops"] for r in mine] == [2, 5, 10]
        for a, b in zip(mine, mine[1:]):  # PINT's packets grow with the path
            assert b["pint_packets"] > a["pint_packets"] - 3 * math.hypot(
                a["pint_stderr"], b["pint_stderr"]), (scheme, a["hops"], b["hops"])
    for r in rows:
        assert r["int_first_report_traces"] and r["int_packets"] == 1
        # the stack bound, not a copied constant: traced iff the path fits in 8 items
        fits = r["hops"] <= STACK_ITEMS
        assert r["intlabel_first_report_traces"] is fits
        assert (r["intlabel_packets"] == 1) if fits else (r["intlabel_packets"] is None)
        assert r["pint_bits"] == pytest.approx(16 * r["pint_packets"])
        # without the mark every run assembles its path within its 2,000 packets, and
        # needs more than the one packet a marked flow needs
        assert r["base_untraced"] == 0 and r["base_packets"] > 1
        # an item is 32 bytes a hop, INT's node id 4: INT-label is cheaper only while
        # INT's 58 bytes of probe headers outweigh 28 bytes a hop
        if fits:
            n = r["hops"] - 1
            assert r["intlabel_bits"] == 8 * (2 + 32 * n)
            assert r["int_bits"] == 8 * (58 + 4 * n)
            assert (r["intlabel_bits"] < r["int_bits"]) is (2 + 32 * n < 58 + 4 * n)


def test_fig22_says_who_wins(fig22: Any) -> None:
    _, heads = fig22
    h = heads["longest path where INT-label costs fewer extra bits than INT"]
    assert h["ours"] == 2  # 2 + 32 < 58 + 4, and 2 + 128 > 58 + 16 at 5 hops
    fewest = heads["INT-label fewest extra bits on every path (vs INT and PINT hybrid)"]
    assert fewest["ours"] == 0.0 and fewest["verdict"] == "not reproduced"
    assert "2: PINT hybrid" in fewest["note"]


def residual_survival(gaps: list[int]) -> Callable[[int], float]:
    """P(a hop's next label is more than m packets away from a random packet),
    for a renewal process with these gaps between labels."""
    total = sum(gaps)

    def survival(m: int) -> float:
        return sum(g - m for g in gaps if g > m) / total
    return survival


def test_base_a_labels_assemble_the_path_as_a_coupon_collector_predicts() -> None:
    """Without the specific-flow mark each hop labels the flow now and then
    (Base A, Poisson cross traffic on every link): the packets needed until
    every hop has labeled one, from every starting packet, against the
    coupon-collector-style expectation with each hop's measured label gaps,
    hops independent; and below the one for independent per-packet labels
    (each hop labels at most once per T, so its labels are more regular)."""
    hops, n = 4, 3000
    r = trace_flow("intlabel-base", hops, packets=n, until_traced=False)
    assert r.packets_to_trace is not None  # assembled from several reports
    by_hop = [sorted(i for i, got in r.labels.items() if sid in got) for sid in r.true_path]
    p = [len(v) / n for v in by_hop]
    assert all(0.01 < x < 0.2 for x in p), p  # now and then, not every packet
    bernoulli = sum(1 - math.prod(1 - (1 - x) ** m for x in p) for m in range(20_000))
    tails = [residual_survival([b - a for a, b in zip(v, v[1:])]) for v in by_hop]
    renewal = sum(1 - math.prod(1 - t(m) for t in tails) for m in range(2_000))
    needed = []
    for start in range(max(v[0] for v in by_hop), n, 7):
        firsts = [next((i for i in v if i >= start), None) for v in by_hop]
        if None in firsts:
            break
        needed.append(max(firsts) - start + 1)  # type: ignore[type-var]
    measured = sum(needed) / len(needed)
    assert len(needed) > 200
    print(f"\npackets to trace {hops} hops: measured {measured:.1f}, renewal model "
          f"{renewal:.1f}, per-packet model {bernoulli:.1f}")
    assert measured == pytest.approx(renewal, rel=0.1)
    assert measured < bernoulli
