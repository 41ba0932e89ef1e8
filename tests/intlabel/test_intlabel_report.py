"""Report parsing against bytes built field by field with struct, following
docs/intlabel_format.md ("Telemetry report")."""

from __future__ import annotations

import pytest
from intlabel_frames import item_bytes, report_frame

from sinks.intlabel.report import IntItem, ReportError, item_count, parse_report


def test_three_items_newest_first() -> None:
    items = [item_bytes(9, 2, 1, 0x0001_0000_0005, 0x0001_0000_0009, 4, 7, 6),
             item_bytes(5, 1, 3, 1000, 1010, 10, 0x7FFFF, 0),
             item_bytes(1, 1, 2, 900, 905, 5, 0, 0, bottom=True)]
    frame = report_frame(items)
    assert len(frame) == 74 + 3 * 32
    r = parse_report(frame)
    assert (r.sink_switch, r.int_num, r.max_hop, r.specific) == (9, 3, 5, False)
    assert r.items == [
        IntItem(9, 2, 1, 0x0001_0000_0005, 0x0001_0000_0009, 4, 7, 6, False),
        IntItem(5, 1, 3, 1000, 1010, 10, 0x7FFFF, 0, False),
        IntItem(1, 1, 2, 900, 905, 5, 0, 0, True),
    ]
    assert r.flow == (0x0A000101, 0x0A010202, 17, 1234, 80)
    assert (r.ttl, r.ip_id) == (61, 0x0102)


def test_full_width_fields() -> None:
    top48 = (1 << 48) - 1
    frame = report_frame([item_bytes(0xFFFFFFFF, 511, 510, top48, top48, 0xFFFFFFFF,
                                     0xFFFFFF, 0xFFFFFF, bottom=True)])
    (it,) = parse_report(frame).items
    assert (it.switch_id, it.ingress_port, it.egress_port) == (0xFFFFFFFF, 511, 510)
    assert (it.ingress_ts, it.label_time, it.hop_latency) == (top48, top48, 0xFFFFFFFF)
    assert (it.enq_qdepth, it.deq_qdepth, it.bottom) == (0xFFFFFF, 0xFFFFFF, True)


def test_specific_flow_subtracts_max_hop() -> None:
    """Algorithm 4, lines 3-4: INT_num > MAX_hop means MAX_hop + labels."""
    items = [item_bytes(i, 1, 2, 0, 0, 0, 0, 0, bottom=(i == 2)) for i in range(3)]
    r = parse_report(report_frame(items, int_num=5 + 3, count=3, max_hop=5, flags=1))
    assert r.specific and r.int_num == 8 and len(r.items) == 3
    assert [item_count(n, 5) for n in (0, 4, 5, 6, 10)] == [0, 4, 5, 1, 5]


def test_max_hop_override_applies_algorithm_4() -> None:
    items = [item_bytes(1, 1, 2, 0, 0, 0, 0, 0, bottom=True)]
    # The header's MAX_hop (3) says INT_num 4 is a specific flow with 1 item;
    # with the controller's MAX_hop 5 it would mean 4 items.
    frame = report_frame(items, int_num=4, count=1, max_hop=3)
    assert len(parse_report(frame).items) == 1
    with pytest.raises(ReportError) as info:
        parse_report(frame, max_hop=5)
    assert info.value.kind == "item-count"


def test_no_l4_ports_reads_zero() -> None:
    r = parse_report(report_frame([item_bytes(1, 1, 2, 0, 0, 0, 0, 0, True)], inner_proto=1,
                                  ports=(0, 0)))
    assert r.flow[2:] == (1, 0, 0)


@pytest.mark.parametrize("mutate, kind", [
    (lambda f: f[:73], "short"),
    (lambda f: f[:12] + b"\x86\xdd" + f[14:], "not-ipv4"),
    (lambda f: f[:14] + b"\x46" + f[15:], "ipv4-header"),
    (lambda f: f[:23] + b"\x06" + f[24:], "not-udp"),
    (lambda f: f[:36] + b"\x00\x35" + f[38:], "udp-port"),
    (lambda f: f[:42] + b"\x21" + f[43:], "version"),
    (lambda f: f[:44] + b"\x02" + f[45:], "item-count"),
    (lambda f: f[:-1], "truncated"),
])
def test_malformed_reports_name_their_fault(mutate, kind) -> None:  # type: ignore[no-untyped-def]
    frame = report_frame([item_bytes(1, 1, 2, 0, 0, 0, 0, 0, True)])
    with pytest.raises(ReportError) as info:
        parse_report(mutate(frame))
    assert info.value.kind == kind
    assert str(info.value).startswith("error: ")


def test_other_udp_port_is_configurable() -> None:
    frame = report_frame([item_bytes(1, 1, 2, 0, 0, 0, 0, 0, True)], udp_port=9999)
    assert parse_report(frame, udp_port=9999).items[0].switch_id == 1
