"""The helper itself: header fields as the front end resolves them, packing
by P4 widths against Scapy's IPv4, and the layout comparisons refusing
what does not line up."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from p4headers import declared_headers, describe_bits, dtype_fields, program, struct_fields
from scapy.layers.inet import IP

P4 = program("int_md")
IP4 = P4.header("ipv4_t")
REQ = program("gpint").header("gpint_req_t")


def test_fields_offsets_and_sizes() -> None:
    assert IP4.layout[:4] == (("version", 4), ("ihl", 4), ("dscp", 6), ("ecn", 2))
    assert [f.offset for f in IP4.fields[:5]] == [0, 4, 8, 14, 16]
    assert (IP4.bits, IP4.size, IP4.offset("srcAddr"), IP4.offset("dstAddr")) == (160, 20, 12, 16)
    with pytest.raises(AssertionError, match="not on a byte"):
        IP4.offset("ihl")
    assert IP4.file == "include/int_md_headers.p4" and IP4.line > 0
    assert program("l3_forward").header("ipv4_t").file == "l3_forward.p4"
    # constants come folded, macros included (-D defaults)
    assert P4.const("INT_DSCP") == 0x17 and program("gpint").const("IPPROTO_GPINT") == 254
    assert P4.member("headers_t", "int_words").stack == 252
    assert len(declared_headers()) >= 50


def test_packing_by_p4_widths_is_scapys_ipv4() -> None:
    rng = random.Random(0)
    for _ in range(50):
        v = IP4.sample(rng, version=4, ihl=5)
        pkt = IP(IP4.pack(v))
        assert (pkt.version, pkt.ihl, pkt.tos, pkt.len, pkt.id, pkt.flags.value, pkt.frag,
                pkt.ttl, pkt.proto, pkt.chksum) == (
            v["version"], v["ihl"], v["dscp"] << 2 | v["ecn"], v["totalLen"], v["identification"],
            v["flags"], v["fragOffset"], v["ttl"], v["protocol"], v["hdrChecksum"])
        assert int.from_bytes(bytes(map(int, pkt.src.split("."))), "big") == v["srcAddr"]
        assert IP4.unpack(IP4.pack(v)) == v
    with pytest.raises(ValueError, match="does not fit 4 bits"):
        IP4.pack(version=16)
    with pytest.raises(KeyError):
        IP4.pack(diffserv=0)


def test_layout_comparisons() -> None:
    assert struct_fields("!H", REQ) == ["request_id+request_type"]
    assert struct_fields(struct.Struct("!2x"), REQ) == ["-request_id+request_type"]
    with pytest.raises(AssertionError, match="cut across"):
        struct_fields("!BB", REQ)  # the second byte holds request_id's end and request_type
    with pytest.raises(AssertionError, match="reads 2 bytes, gpint_req_t.gpint_req_t are 4"):
        struct_fields("!H", REQ, REQ)
    with pytest.raises(AssertionError, match="run past the end"):
        struct_fields("!IH", REQ, REQ)
    assert struct_fields("!H", REQ, REQ, exact=False) == [
        "gpint_req_t.request_id+gpint_req_t.request_type"]
    with pytest.raises(AssertionError, match="not big-endian"):
        struct_fields("<H", REQ)
    assert describe_bits(0, 8, [REQ]) == "request_id[14:7]"
    assert describe_bits(8, 8, [REQ], parts=True) == "request_id[6:0]+request_type"
    assert describe_bits(0, 16, [REQ, REQ]) == "gpint_req_t.request_id+gpint_req_t.request_type"
    assert dtype_fields(np.dtype([("r", ">u2")]), REQ) == {"r": "request_id+request_type"}
    with pytest.raises(AssertionError, match="not big-endian"):
        dtype_fields(np.dtype([("r", "<u2")]), REQ)
    with pytest.raises(AssertionError, match="dtype of 2 bytes, gpint_req_t.gpint_req_t are 4"):
        dtype_fields(np.dtype([("r", ">u2")]), REQ, REQ)
