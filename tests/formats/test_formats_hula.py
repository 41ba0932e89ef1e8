"""controller/hula.py's probes against p4src/hula.p4's ethernet_t and hula_t:
the EtherType, the struct layout, and probes packed from the P4 widths
parsed (and built) by the controller."""

from __future__ import annotations

import random

from p4headers import program, struct_fields

from controller import hula

P4 = program("hula")
ETH, HULA = P4.header("ethernet_t"), P4.header("hula_t")

COVERS = {(h.file, h.name) for h in (ETH, HULA)}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""


def test_ethertype_and_sizes_are_the_p4_programs() -> None:
    assert P4.const("ETHERTYPE_HULA") == hula.PROBE_ETHERTYPE
    assert hula._HEAD.size == ETH.size + HULA.size
    assert ETH.size + HULA.size <= hula.PROBE_FRAME_BYTES
    assert [m.type for m in P4.members("headers_t")][:2] == ["ethernet_t", "hula_t"]


def test_struct_layout_reads_the_p4_fields() -> None:
    assert struct_fields(hula._HEAD, ETH, HULA) == [
        "ethernet_t.dstAddr", "ethernet_t.srcAddr", "ethernet_t.etherType",
        "hula_t.torId", "hula_t.maxUtil", "hula_t.seq"]


def test_probes_packed_from_the_p4_widths_parse() -> None:
    rng = random.Random(1)
    for _ in range(20):
        eth = ETH.sample(rng, etherType=P4.const("ETHERTYPE_HULA"))
        put = HULA.sample(rng)
        frame = ETH.pack(eth) + HULA.pack(put) + bytes(rng.randrange(0, 40))
        assert hula.is_probe(frame)
        assert hula.parse_probe(frame) == (put["torId"], put["maxUtil"], put["seq"])
    other = ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + HULA.pack()
    assert not hula.is_probe(other) and hula.parse_probe(other) is None


def test_built_probes_unpack_by_the_p4_widths() -> None:
    frame = hula.probe_frame(0xA1B2C3D4, 0x01020304, "02:00:00:00:00:08", "00:00:00:00:00:01",
                             max_util=0x7FFF_FFFF)
    assert len(frame) == hula.PROBE_FRAME_BYTES
    assert ETH.unpack(frame) == {"dstAddr": 0x02_00_00_00_00_08, "srcAddr": 0x01,
                                 "etherType": P4.const("ETHERTYPE_HULA")}
    assert HULA.unpack(frame, ETH.size) == {"torId": 0xA1B2C3D4, "maxUtil": 0x7FFF_FFFF,
                                            "seq": 0x01020304}
