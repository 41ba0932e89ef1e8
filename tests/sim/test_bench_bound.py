"""``intbed bench sim --bound``: the same case with every switch's pipeline
replaced by a per-flow memo of its forwarding, which must leave the run
itself (hops, events, deliveries) as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from benchmarks.bound import bound, stub_switch
from common.errors import IntbedError
from dataplane.runtime.switch import EgressJob
from intbed.cli import cli


def test_the_stubbed_fabric_run_is_the_real_run_with_few_pipeline_runs() -> None:
    report = bound("fabric", 0.5, pairs=1)
    row = report["pairs"][0]
    real, stub = row["real"], row["stubbed"]
    assert row["same_run"] and report["same_run"]
    assert real["packet_hops"] > 1000
    assert stub["packet_hops"] == real["packet_hops"]
    assert stub["packets_delivered"] == real["packets_delivered"]
    assert stub["events"] == real["events"]
    # Only each flow's first packet at each switch ran the real pipeline.
    assert 0 < stub["pipeline_runs"] < real["packet_hops"] / 5
    assert row["ratio"] == round(real["wall_s"] / stub["wall_s"], 3)


class _Switch:
    def __init__(self, ingress: Any, egress: Any) -> None:
        self._ingress_hop = ingress
        self._egress_hop = egress


FRAME = bytes(14) + bytes([0x45]) + bytes(19) + bytes(range(8)) + bytes(30)


def test_a_flow_is_decided_once_and_its_bytes_pass_unchanged() -> None:
    calls = []

    def ingress(port: int, data: bytes, *_: Any) -> EgressJob:
        calls.append(data)
        return EgressJob(7, [0], b"", len(data))

    sw = _Switch(ingress, lambda job, *_: b"out")
    count = stub_switch("s1", sw)
    for seq in range(3):
        frame = FRAME[:18] + bytes([seq]) + FRAME[19:]  # the IP id differs, the flow not
        job = sw._ingress_hop(1, frame, 0, None, 0)
        assert (job.port, job.state, job.length) == (7, frame, len(frame))
        assert sw._egress_hop(job, 0, 0, 0, 0, 0) == frame
    assert len(calls) == 1 and count == [3]
    other = FRAME[:30] + b"\x09" + FRAME[31:]  # another destination address
    sw._ingress_hop(1, other, 0, None, 0)
    assert len(calls) == 2


@pytest.mark.parametrize(("ingress", "egress", "what"), [
    (lambda *_: ([], [(1, b"", 1, None)]), lambda *_: b"", "cloned, resubmitted"),
    (lambda *_: EgressJob(2, [0], b"", 1), lambda *_: ([], [], []), "more than send one"),
])
def test_what_a_memo_cannot_stand_for_is_refused(ingress: Any, egress: Any, what: str) -> None:
    sw = _Switch(ingress, egress)
    stub_switch("s1", sw)
    with pytest.raises(IntbedError, match=what):
        sw._ingress_hop(1, FRAME, 0, None, 0)


def test_a_switch_without_hop_functions_is_refused() -> None:
    with pytest.raises(IntbedError, match="s9: its pipeline halves are wrapped"):
        stub_switch("s9", _Switch(None, None))


def test_the_command_prints_one_json_object() -> None:
    result = CliRunner().invoke(cli, ["bench", "sim", "--bound", "fabric", "--seconds", "0.2",
                                      "--pairs", "1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["case"] == "fabric" and len(report["pairs"]) == 1
    assert report["same_run"] is True


def test_bound_is_one_of_the_exclusive_modes() -> None:
    result = CliRunner().invoke(cli, ["bench", "sim", "--bound", "fabric", "--profile", "gpint"])
    assert result.exit_code == 2
    assert "give one of --profile, --sample, --instructions and --bound" in result.output
