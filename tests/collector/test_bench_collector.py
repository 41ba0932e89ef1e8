"""The collector benchmark's reports are what it says they are (parsed back
to the values put in), and its cases run and report positive rates; speed
itself is not asserted."""

from __future__ import annotations

from benchmarks.collector import (
    FIRST_SPORT,
    FLOWS,
    HOPS,
    INSTRUCTIONS,
    bench_batch,
    bench_live,
    flow_path,
    generate,
    hop_values,
)
from controller.collector.reports import ParsedReport, parse_report


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
    out = bench_batch(5000, batch=1024)
    for key in ("parse_rows", "fast_path_batched", "fast_path_one_call"):
        case = out[key]
        assert case["reports"] == 5000
        assert case["reports_per_s_cpu"] > 0 and case["reports_per_s_wall"] > 0
    assert out["fast_path_batched"]["accepted"] == 5000
    assert out["fast_path_batched"]["events"] > 0


def test_live_case_runs() -> None:
    out = bench_live(rates=(20_000,), seconds=0.5)
    run = out["runs"][0]
    assert run["sent"] > 0 and run["received"] > 0 and run["sent_per_s"] > 0
    assert 0 <= run["loss"] <= 1
    assert run["accepted"] == run["received"]
    assert {"at_100k", "highest_loss_free_rate", "sender_limited"} <= out.keys()
