"""``Switch.ingress_hop`` and ``egress_hop``, the forms the sim target calls
on every packet-hop: a single job, no job (None) or a single packet leaving
in the common case, the public halves' results otherwise, and the same
packets as ``ingress`` and ``egress`` in every case."""

from __future__ import annotations

from pathlib import Path

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import EgressJob, Switch

P4 = Path(__file__).resolve().parents[1] / "p4"
ETH = bytes.fromhex("000000000002" "000000000001")
PAYLOAD = bytes.fromhex("cafef00d")


def clone_switch() -> Switch:
    sw = Switch(compile_file(P4 / "clone.p4"))
    sw.mirroring_add(5, 2)
    sw.mirroring_add(6, 3)
    return sw


def frame(ether_type: int) -> bytes:
    return ETH + ether_type.to_bytes(2, "big") + PAYLOAD


def through_halves(sw: Switch, data: bytes) -> list[tuple[int, bytes]]:
    jobs, again = sw.ingress(0, data)
    assert not again
    out = []
    for job in jobs:
        emitted, clones, recirc = sw.egress(job)
        assert not recirc
        out.extend(emitted)
        for c in clones:
            out.extend(sw.egress(c)[0])
    return out


def through_hops(sw: Switch, data: bytes) -> list[tuple[int, bytes]]:
    r = sw.ingress_hop(0, data, 0, None, None)
    jobs = [] if r is None else [r] if type(r) is EgressJob else r[0]
    out = []
    for job in jobs:
        port = job.port
        e = sw.egress_hop(job, 0, 0, 0, 0, None)
        if type(e) is bytes:
            out.append((port, e))
            continue
        emitted, clones, recirc = e
        assert not recirc
        out.extend(emitted)
        for c in clones:
            out.extend(sw.egress(c)[0])
    return out


def test_a_plain_packet_is_one_job_then_one_packet() -> None:
    sw = clone_switch()
    job = sw.ingress_hop(0, frame(0x0800), 0, None, None)
    assert type(job) is EgressJob and job.port == 1
    packet = sw.egress_hop(job, 0, 0, 0, 0, None)
    assert type(packet) is bytes
    # The tag (instance type 0, metadata 0, port 1, length 18), then the frame.
    assert packet == bytes.fromhex("00000001" "0012") + frame(0x0800)
    assert through_hops(clone_switch(), frame(0x0800)) == [(1, packet)]


def test_clones_take_the_general_form_with_the_same_packets() -> None:
    for ether_type in (0x1111, 0x2222, 0x3333, 0x4444):
        halves = through_halves(clone_switch(), frame(ether_type))
        hops = through_hops(clone_switch(), frame(ether_type))
        assert hops == halves, hex(ether_type)
    sw = clone_switch()
    i2e = sw.ingress_hop(0, frame(0x1111), 0, None, None)
    assert type(i2e) is tuple and [j.port for j in i2e[0]] == [2, 1]
    job = sw.ingress_hop(0, frame(0x3333), 0, None, None)
    e2e = sw.egress_hop(job, 0, 0, 0, 0, None)
    assert type(e2e) is tuple
    assert [p for p, _ in e2e[0]] == [1] and [c.port for c in e2e[1]] == [3]


def test_a_dropped_packet_makes_no_job() -> None:
    sw = Switch(compile_file(P4 / "mark_to_drop.p4"))
    assert sw.ingress_hop(0, bytes.fromhex("0100ccdd"), 0, None, None) is None
    assert sw.ingress(0, bytes.fromhex("0100ccdd")) == ([], ())
    assert sw.stats["dropped"] == 2
