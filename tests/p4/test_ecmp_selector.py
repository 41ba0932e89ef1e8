"""ECMP through an ``action_selector`` in STF: the member a group picks for a
flow is rank ``crc16(5-tuple) % n`` of its members in BMv2 handle order.

``ecmp_selector.stf`` is checked twice: it passes on the engine (in
``test_stf_programs``), and here every expected port in it is derived again
from the CRC-16/ARC below. A generated STF with many random flows runs too.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from dataplane.compiler.pipeline import compile_file
from dataplane.testing.stf import run_stf

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "ecmp_selector.p4"
STF = HERE / "ecmp_selector.stf"


def crc16_arc(data: bytes) -> int:
    """CRC-16/ARC (BMv2's ``crc16``) as polynomial division over the
    bit-reversed message; the remainder bit-reversed."""
    bits = "".join(f"{b:08b}"[::-1] for b in data)
    rem = int(bits, 2) << 16 if bits else 0
    while rem.bit_length() > 16:
        rem ^= 0x18005 << (rem.bit_length() - 17)
    return int(f"{rem:016b}"[::-1], 2)


def selector_input(frame: bytes) -> bytes:
    """src, dst, protocol, source and destination port: the selector keys' bytes."""
    ip = Ether(frame)[IP]
    l4 = ip.payload
    return (bytes(map(int, ip.src.split("."))) + bytes(map(int, ip.dst.split(".")))
            + bytes([ip.proto]) + l4.sport.to_bytes(2, "big") + l4.dport.to_bytes(2, "big"))


def group_ports(stf: str) -> list[int]:
    """Ports of group 0's members in handle order, read from the STF's own
    member and group commands (handles count up from 0 in creation order)."""
    ports = [int(m.group(1)) for m in re.finditer(
        r"^act_prof_create_member ecmp_selector set_nhop \S+ (\d+)", stf, re.M)]
    members = sorted(int(m.group(1)) for m in re.finditer(
        r"^act_prof_add_member_to_group ecmp_selector (\d+) 0", stf, re.M))
    return [ports[h] for h in members]


def test_expected_ports_in_stf_follow_crc16_in_handle_order() -> None:
    text = STF.read_text()
    ports = group_ports(text)
    assert len(ports) == 4
    lines = [ln.split() for ln in text.splitlines() if ln.startswith(("packet", "expect"))]
    checked = 0
    for sent, got in zip(lines[::2], lines[1::2], strict=True):
        frame = bytes.fromhex(sent[2])
        if IP not in Ether(frame):
            continue
        want = ports[crc16_arc(selector_input(frame)) % len(ports)]
        assert int(got[1]) == want
        checked += 1
    assert checked >= 8


def flow_frame(rng: random.Random) -> bytes:
    src = f"192.168.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    dst = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    l4 = (UDP if rng.random() < 0.5 else TCP)(sport=rng.randrange(65536),
                                               dport=rng.randrange(65536))
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IP(src=src, dst=dst) / l4 / b"ecmp")


def test_random_flows_in_a_generated_stf(tmp_path: Path) -> None:
    """Five members (created in shuffled order, so handle order differs from
    port order), 400 flows; each expected output is computed here."""
    rng = random.Random(11)
    ports = [5, 3, 8, 1, 6]
    lines = [f"act_prof_create_member ecmp_selector set_nhop {p} {p}" for p in ports]
    lines.append("act_prof_create_group ecmp_selector")
    order = list(range(len(ports)))
    rng.shuffle(order)
    lines += [f"act_prof_add_member_to_group ecmp_selector {h} 0" for h in order]
    lines.append("table_indirect_add_with_group ecmp 0x0a000000/8 => 0")
    hits = dict.fromkeys(ports, 0)
    for _ in range(400):
        frame = flow_frame(rng)
        port = ports[crc16_arc(selector_input(frame)) % len(ports)]
        hits[port] += 1
        out = port.to_bytes(6, "big") + frame[6:]
        lines += [f"packet 0 {frame.hex()}", f"expect {port} {out.hex()}$"]
    stf = tmp_path / "ecmp_random.stf"
    stf.write_text("\n".join(lines) + "\n")
    result = run_stf(compile_file(PROGRAM), stf)
    assert result.passed, result.diff
    assert min(hits.values()) > 40  # every member carries some flows
