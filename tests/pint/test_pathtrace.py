"""Path tracing: the vectorised encoder against a per-packet reference,
the peeling decoder against a reference decoder, every flow's true path
decoded for every scheme and bit budget, conflicts on corrupted digests."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.pint.hashing import GlobalHashes
from sinks.pint.inference import decode_flow
from sinks.pint.pathtrace import PathCoding, participants, trace_paths
from sinks.pint.peeling import peel
from sinks.pint.simulate import flow_packet_ids

CODINGS = {
    "reservoir": lambda bits: PathCoding.reservoir(bits),
    "xor": lambda bits: PathCoding.xor(bits, 0.05),
    "hybrid": lambda bits: PathCoding(bits, 32, 0.5, 0.07),
}


def reference_encode(coding: PathCoding, hashes: GlobalHashes, pid: int, path) -> int:
    """One packet through the switches, written plainly from the paper's rules."""
    one = np.array([pid], dtype=np.uint32)
    is_baseline = int(hashes.packet_word(one, "scheme")[0]) < round(coding.tau * 2**32)
    frag = int(hashes.packet_word(one, "fragment")[0]) * coding.fragments >> 32
    digest = 0
    for hop, switch_id in enumerate(path, start=1):
        piece = (int(switch_id) >> (frag * coding.bits)) & ((1 << coding.bits) - 1)
        g = int(hashes.hop_word(one, "hop", hop)[0])
        if is_baseline and g < round(2**32 / hop):
            digest = piece
        elif not is_baseline and g < round(coding.p * 2**32):
            digest ^= piece
    return digest


@pytest.mark.parametrize("scheme", sorted(CODINGS))
@pytest.mark.parametrize("bits", [8, 16])
def test_encoder_matches_reference(scheme: str, bits: int) -> None:
    coding = CODINGS[scheme](bits)
    hashes = GlobalHashes(3, "path")
    rng = np.random.default_rng(bits)
    path = rng.integers(0, 2**32, size=9, dtype=np.uint64)
    pids = flow_packet_ids(rng, 1, 300).ravel()
    digests = trace_paths(coding, hashes, pids, path)[0]
    assert [int(d) for d in digests] == [
        reference_encode(coding, hashes, int(p), path) for p in pids
    ]


def reference_decode(masks, frags, digests, hops: int, fragments: int):
    """Peeling by repeated sweeps over every packet seen so far."""
    known: dict[tuple[int, int], int] = {}
    seen: list[tuple[int, int, int]] = []
    for t, (m, f, d) in enumerate(zip(masks, frags, digests), start=1):
        seen.append((int(m), int(f), int(d)))
        progress = True
        while progress:
            progress = False
            for mask, frag, value in seen:
                unknown = [h for h in range(hops) if mask >> h & 1 and (frag, h) not in known]
                if len(unknown) == 1:
                    for h in range(hops):
                        if mask >> h & 1 and (frag, h) in known:
                            value ^= known[(frag, h)]
                    known[(frag, unknown[0])] = value
                    progress = True
        if len(known) == hops * fragments:
            return t, known
    return -1, known


@pytest.mark.parametrize("scheme", sorted(CODINGS))
def test_peeling_matches_reference_decoder(scheme: str) -> None:
    coding = CODINGS[scheme](8)
    hashes = GlobalHashes(5, "path")
    rng = np.random.default_rng(6)
    for hops in (1, 3, 8):
        path = rng.integers(0, 2**32, size=hops, dtype=np.uint64)
        pids = flow_packet_ids(rng, 1, 25 * hops + 100).ravel()
        digests = trace_paths(coding, hashes, pids, path)[0]
        masks, frags = participants(coding, hashes, pids, np.full(pids.shape[0], hops))
        done_ref, known_ref = reference_decode(masks, frags, digests, hops, coding.fragments)
        known, values, _, done_at, _, conflicts = peel(
            masks, frags, digests, hops, coding.fragments, -1, False)
        assert done_at == done_ref
        assert conflicts == 0
        for (f, h), value in known_ref.items():
            assert known[f] >> np.uint64(h) & np.uint64(1)
            assert int(values[f, h]) == value


@pytest.mark.parametrize("scheme", sorted(CODINGS))
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_every_flow_decodes_its_true_path(scheme: str, bits: int) -> None:
    coding = CODINGS[scheme](bits)
    hashes = GlobalHashes(bits, "path")
    rng = np.random.default_rng(bits + len(scheme))
    lengths = [1, 2, 5, 17, 36, 59, *rng.integers(1, 60, size=6)]
    packets = 4000 * coding.fragments
    for hops in lengths:
        path = rng.integers(0, 2**32, size=int(hops), dtype=np.uint64)
        pids = flow_packet_ids(rng, 1, packets).ravel()
        result = decode_flow(coding, hashes, pids, int(hops),
                             trace_paths(coding, hashes, pids, path)[0])
        assert result.complete, (scheme, bits, hops)
        assert result.path == tuple(int(s) for s in path)
        assert result.packets_needed <= packets
        assert result.conflicts == 0
        assert result.confidence == 1.0


def test_corrupted_digest_is_a_conflict_and_lowers_nothing_else() -> None:
    coding = PathCoding(16, 32, 0.5, 0.1)
    hashes = GlobalHashes(1, "path")
    rng = np.random.default_rng(1)
    path = rng.integers(0, 2**32, size=10, dtype=np.uint64)
    pids = flow_packet_ids(rng, 1, 3000).ravel()
    digests = trace_paths(coding, hashes, pids, path)[0]
    clean = decode_flow(coding, hashes, pids, 10, digests)
    digests[-1] ^= 0x5A5A
    dirty = decode_flow(coding, hashes, pids, 10, digests)
    assert clean.conflicts == 0 and dirty.conflicts == 1
    assert dirty.path == clean.path
    assert dirty.checks == clean.checks


def test_too_few_packets_leave_hops_unknown() -> None:
    coding = PathCoding.reservoir(32)
    hashes = GlobalHashes(2, "path")
    rng = np.random.default_rng(2)
    path = rng.integers(0, 2**32, size=30, dtype=np.uint64)
    pids = flow_packet_ids(rng, 1, 20).ravel()
    result = decode_flow(coding, hashes, pids, 30, trace_paths(coding, hashes, pids, path)[0])
    assert not result.complete and result.packets_needed is None
    assert None in result.path
    assert all(v is None or v == int(s) for v, s in zip(result.path, path))
    assert result.confidence < 1.0


def test_bad_codings_and_hop_counts() -> None:
    with pytest.raises(InvalidValueError, match="p > 0"):
        PathCoding(8, 32, 0.5, 0.0)
    with pytest.raises(InvalidValueError, match="1 to 32 digest bits"):
        PathCoding(0)
    with pytest.raises(InvalidValueError, match="hop counts must be 1 to 64"):
        participants(PathCoding.reservoir(8), GlobalHashes(1, "p"),
                     np.zeros(2, dtype=np.uint32), np.array([3, 65]))


def test_switch_config_is_the_thresholds_the_encoder_compares_with() -> None:
    coding = PathCoding(8, 32, 0.25, 0.1)
    hashes = GlobalHashes(4, "path")
    config = coding.switch_config(hashes)
    assert config["fragments"] == 4 and config["bits"] == 8
    assert config["baseline_threshold"] == 2**30
    assert config["xor_threshold"] == round(0.1 * 2**32)
    assert config["hop_thresholds"][:3] == [2**32, 2**31, round(2**32 / 3)]
    assert len(config["hop_thresholds"]) == 64
    assert config["salts"]["hop"] == hashes.salt("hop")
