"""INT-label's Fig. 22 and PINT's quantile experiment: registered with full
and quick values, quick runs write their results, and what they write
holds against independent models: header sizes from Scapy-built packets,
the coupon collector, brute-force ranks and the KLL bound."""

from __future__ import annotations

import csv
import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from experiments.framework import ExperimentError, load_all, run_experiment
from experiments.intlabel.fig22 import int_bits, intlabel_bits
from experiments.pint.quantiles import chunks, dkw, rank_error

FILES = ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md", "summary.json")


def rows_of(out: Path) -> list[dict[str, Any]]:
    def cell(v: str) -> Any:
        try:
            return float(v)
        except ValueError:
            return v
    with (out / "metrics.csv").open(newline="") as fh:
        return [{k: cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def heads_of(out: Path) -> dict[str, dict[str, Any]]:
    return {h["name"]: h for h in json.loads((out / "summary.json").read_text())["headlines"]}


@pytest.fixture(scope="module")
def fig22(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment("intlabel-fig22", quick=True, out=tmp_path_factory.mktemp("f22") / "r")


@pytest.fixture(scope="module")
def quantiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment("pint-quantiles", quick=True, out=tmp_path_factory.mktemp("pq") / "r")


def test_registered_with_full_and_quick_values() -> None:
    exps = load_all()
    f22, pq = exps["intlabel-fig22"], exps["pint-quantiles"]
    full, quick = f22.resolve({}, False), f22.resolve({}, True)
    assert full["hops"] == list(range(2, 11)) and quick["hops"] == [2, 5, 10]
    assert full["flows"] > quick["flows"] and "hybrid" in full["schemes"]
    full, quick = pq.resolve({}, False), pq.resolve({}, True)
    assert max(full["packets"]) > max(quick["packets"]) and full["k"] == quick["k"] == 200
    with pytest.raises(ExperimentError, match="hops.*at least two path lengths"):
        f22.resolve({"hops": "5"}, True)
    with pytest.raises(ExperimentError, match="unknown scheme bogus"):
        f22.resolve({"schemes": "bogus"}, True)
    with pytest.raises(ExperimentError, match="k=4.*between 8 and 65535"):
        pq.resolve({"k": "4"}, True)


@pytest.mark.parametrize("hops", [1, 5, 59])
def test_int_probe_bits_are_a_scapy_probe(hops: int) -> None:
    shim = bytes([0x10, 0, 3 + hops, 0])  # INT v2.0 shim: type MD, length in words
    md = bytes(12)  # INT-MD v2.0 header
    nodes = b"".join(struct.pack("!I", n) for n in range(hops))
    probe = Ether() / IP() / UDP() / Raw(shim + md + nodes)
    assert int_bits(hops) == 8 * len(bytes(probe))


@pytest.mark.parametrize("hops", [1, 5, 8])
def test_intlabel_bits_are_what_labels_add_to_a_packet(hops: int) -> None:
    # One item per the format: switch id, ports, two 48-bit times, latency,
    # flags + 24-bit enqueue depth, reserved + 24-bit dequeue depth.
    item = (struct.pack("!IHH", 7, 1, 2) + (5).to_bytes(6, "big") + (6).to_bytes(6, "big")
            + struct.pack("!III", 9, 0x80 << 24 | 3, 4))
    plain = IP(proto=17) / UDP() / Raw(b"x" * 100)
    labeled = IP(proto=253) / Raw(struct.pack("!BB", 17, 5 + hops) + item * hops) \
        / UDP() / Raw(b"x" * 100)
    assert intlabel_bits(hops, len(item)) == 8 * (len(bytes(labeled)) - len(bytes(plain)))
    assert intlabel_bits(hops, 4) == 8 * (2 + 4 * hops)


def test_fig22_quick_run(fig22: Path) -> None:
    for f in FILES:
        assert (fig22 / f).stat().st_size > 0, f
    rows = rows_of(fig22)
    assert {r["scheme"] for r in rows} == {"hybrid", "reservoir"}
    for scheme in ("hybrid", "reservoir"):
        mine = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r["hops"])
        assert [r["hops"] for r in mine] == [2, 5, 10]
        for a, b in zip(mine, mine[1:]):  # PINT's packets grow with the path
            assert b["pint_packets"] > a["pint_packets"] - 3 * math.hypot(
                a["pint_stderr"], b["pint_stderr"]), (scheme, a["hops"], b["hops"])
        assert mine[-1]["pint_packets"] > 2 * mine[0]["pint_packets"]
    for r in rows:
        assert r["int_packets"] == r["intlabel_packets"] == 1
        assert r["pint_undecoded"] == 0
        assert r["pint_bits"] == pytest.approx(16 * r["pint_packets"])
        assert r["intlabel_bits"] < r["pint_bits"] and r["intlabel_bits"] < r["int_bits"]
        assert r["intlabel_item_bits"] < r["int_item_bits"]
        # keeping waiting digests only helps: the online expectation bounds the mean
        assert r["pint_packets"] < r["pint_expected_online"] + 4 * r["pint_stderr"]
        if r["scheme"] == "reservoir":  # coupon collector over 2 fragments x k hops
            n = 2 * int(r["hops"])
            assert r["pint_expected_online"] == pytest.approx(n * sum(1 / i for i in
                                                                      range(1, n + 1)))
            assert abs(r["pint_packets_online"] - r["pint_expected_online"]) < 5 * (
                r["pint_stderr"] + 1e-9) + 0.1 * r["pint_expected_online"]


def test_fig22_states_the_papers_claims(fig22: Path) -> None:
    heads = heads_of(fig22)
    for name in ("INT packets to trace a path", "INT-label packets to trace a path"):
        assert heads[name]["ours"] == heads[name]["paper"] == 1.0
    claims = [h for h in heads.values() if h["unit"] == "bool"]
    assert len(claims) == 5 and all(h["ours"] == h["paper"] == 1.0 for h in claims)
    summary = (fig22 / "summary.md").read_text()
    assert "PINT requires an increasing number of packets" in summary


def test_rank_error_against_brute_force() -> None:
    rng = np.random.default_rng(3)
    values = np.sort(rng.integers(0, 20, 300).astype(np.float32))  # many ties
    for low, high, q in ((5.0, 5.0, 0.5), (3.0, 9.0, 0.99), (19.0, 19.0, 0.01), (7.5, 7.5, 0.3)):
        ranks = [(np.sum(values < v) / 300, np.sum(values <= v) / 300)
                 for v in values if low <= v <= high]
        ranks += [(np.sum(values < low) / 300,) * 2]  # nothing in range: the gap's rank
        want = min(max(lo - q, q - hi, 0.0) for lo, hi in ranks)
        assert rank_error(values, low, high, q) == pytest.approx(want, abs=1e-12)


def test_chunks_cover_every_packet_once() -> None:
    spans = chunks([100, 1_000_000])
    assert spans[0] == (0, 100, True) and spans[-1][1:] == (1_000_000, True)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert sum(1 for s in spans if s[2]) == 2


def test_quantile_errors_within_the_kll_bound(quantiles: Path) -> None:
    for f in FILES:
        assert (quantiles / f).stat().st_size > 0, f
    rows = rows_of(quantiles)
    params = json.loads((quantiles / "config.json").read_text())["params"]
    flows, hops = params["flows"], params["hops"]
    # datasketches' single-quantile bound at 99 %: 2.296 / k^0.9723
    bound = 2.296 / params["k"] ** 0.9723
    assert len(rows) == len(params["packets"]) * flows * hops * 2
    for r in rows:
        assert r["kll_bound"] == pytest.approx(bound, rel=1e-3)
        assert r["kll_rank_error"] <= r["kll_bound"], r
        assert r["e2e_bound"] == pytest.approx(bound + dkw(int(r["samples"])))
        assert r["e2e_rank_error"] <= r["e2e_bound"], r
    for n in params["packets"]:
        at = [r for r in rows if r["packets"] == n and r["q"] == 0.5]
        for f in range(flows):  # each packet carries one hop's sample
            assert sum(r["samples"] for r in at if r["flow"] == f) == n
        counts = np.array([r["samples"] for r in at])
        # reservoir sampling: each hop with probability 1/hops (binomial, 5 sigma)
        sd = math.sqrt(n * (1 / hops) * (1 - 1 / hops))
        assert np.all(np.abs(counts - n / hops) <= 5 * sd + 1)
    big = [r for r in rows if r["packets"] == max(params["packets"]) and r["q"] == 0.5]
    # a sketch far beyond its capacity still answers within its bound, and not exactly
    assert any(r["kll_rank_error"] > 0 for r in rows)
    assert all(r["samples"] > 10 * params["k"] for r in big)
