"""The collector benchmark's reports are what it says they are (parsed back
to the values put in), and its cases run and report positive rates; speed
itself is not asserted."""

from __future__ import annotations

import pytest

from benchmarks.collector import (
    FIRST_SPORT,
    FLOWS,
    HOPS,
    bench_batch,
    bench_live,
    flow_path,
    generate,
    hop_values,
    receive_costs,
    versus_target,
)
from sinks.intcollector.reports import ParsedReport, parse_report
from sinks.intcollector.synthetic import INSTRUCTIONS


def test_generated_reports_parse_to_the_values_put_in() -> None:
    count = 300
    rows, payloads = generate(count)
    assert rows.shape[0] == len(payloads) == count
    assert all(row.tobytes() == p for row, p in zip(rows, payloads))
    values = hop_values(count)
    for i, payload in enumerate(payloads):
        r = parse_report(payload)
        assert isinstance(r, ParsedReport), r
        flow = i % FLOWS
        assert (r.report_version, r.int_version, r.seq) == (2, 2, i)
        assert r.instructions == INSTRUCTIONS and r.hop_ml == 12 and r.hop_count == HOPS
        assert r.flow == (0x0A000001, 0x0A000102, 17, FIRST_SPORT + flow, 5001)
        assert r.node_id == flow_path(flow, 0)
        assert r.hops["node_id"] == tuple(flow_path(flow, h) for h in range(HOPS))
        for name in ("hop_latency", "queue_occupancy", "ingress_ts", "egress_ts",
                     "egress_tx_util", "buffer_occupancy", "l2_egress_port"):
            assert r.hops[name] == tuple(int(v) for v in values[name][i]), name
        assert r.hops["queue_id"] == (1,) * HOPS


def test_batch_case_runs() -> None:
    out = bench_batch(5000, batch=1024, replay_batches=(512, 2048), repeat=1)
    for key in ("parse_rows", "fast_path_batched", "fast_path_one_call", "fast_path"):
        case = out[key]
        assert case["reports"] == 5000
        assert case["reports_per_s_cpu"] > 0 and case["reports_per_s_wall"] > 0
    assert out["fast_path_batched"]["accepted"] == 5000
    assert out["fast_path_batched"]["events"] > 0
    rows = out["fast_path_rows"]
    assert rows.keys() == {"512", "2048"}
    # the same reports give the same events whatever the batch and the input form
    assert {case["events"] for case in rows.values()} == {out["fast_path_batched"]["events"]}
    assert out["fast_path"]["batch"] in (512, 2048)
    table = versus_target(out, None)
    assert table["batch_reports_per_s"]["target"] == 2_000_000
    assert table["batch_reports_per_s"]["measured"] == out["fast_path"]["reports_per_s_cpu"]


def test_live_case_runs() -> None:
    out = bench_live(rates=(20_000,), seconds=0.5, batch=1024)
    run = out["runs"][0]
    assert run["sent"] > 0 and run["received"] > 0 and run["sent_per_s"] > 0
    assert 0 <= run["loss"] <= 1
    assert run["accepted"] == run["received"]
    if run["kernel_drops"] is not None:  # loopback loses only in the receiver's socket
        assert run["counted_exactly"]
    unpaced = out["unpaced"]
    assert unpaced["rate"] == 0 and unpaced["received"] > 0
    assert {"at_100k", "at_500k", "highest_loss_free_rate", "highest_received_per_s",
            "sender_limited"} <= out.keys()
    table = versus_target({"fast_path": {"reports_per_s_cpu": 1}}, out)
    assert table["live_reports_per_s"]["measured"] == out["highest_received_per_s"]
    assert table["loss_at_500k"] == {"measured": None, "target": 0.001, "met": None}


def test_receive_costs_are_measured_per_datagram() -> None:
    costs = receive_costs(rounds=1)
    if not costs["available"]:
        pytest.skip("sendmmsg/recvmmsg are Linux only")
    for name in ("send_us", "recvmmsg_us", "recv_into_us"):
        assert 0 < costs[name] < 1000, (name, costs)
