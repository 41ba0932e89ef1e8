"""intbed flowcache trace/replay through click's CliRunner: a trace written,
replayed into counts that add up, stored in a private Redis, and bad
options as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from intbed.cli import cli
from orchestration.redis_server import redis_available
from sinks.flowcache.layout import EVENT_BITS


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_trace_then_replay(tmp_path: Path) -> None:
    pcap = str(tmp_path / "t.pcap")
    code, out, _ = run("flowcache", "trace", pcap, "--packets", "5000", "--flows", "300",
                       "--hops", "3", "--instructions", "3")
    assert code == 0 and "5,000 packets" in out
    code, out, _ = run("flowcache", "replay", pcap, "--rows", "16", "--buckets", "4",
                       "--max-hops", "3", "--threshold", "threshold:queue_occupancy=60",
                       "--threshold", "change:hop_latency=100", "--json")
    assert code == 0
    report = json.loads(out)
    c = report["counters"]
    assert report["frames"] == report["taken"] == c["packets"] == 5000
    assert c["hits"] + c["inserts"] == 5000
    # every bucket leaves by collision or at the end: inserted = evicted
    assert sum(report["evictions"].values()) == c["inserts"]
    assert set(report["events"]) == set(EVENT_BITS)
    assert report["events"]["t_queue_occupancy"] > 0 and report["events"]["c_hop_latency"] > 0
    assert report["events"]["t_link_utilization"] == 0  # not among the 3 instructions


def test_replay_into_a_private_redis(tmp_path: Path) -> None:
    if redis_available() is None:
        pytest.skip("redis-server is not installed: install the Debian package redis-server")
    pcap = str(tmp_path / "t.pcap")
    run("flowcache", "trace", pcap, "--packets", "3000", "--flows", "200", "--hops", "2")
    code, out, err = run("flowcache", "replay", pcap, "--rows", "64", "--max-hops", "2",
                         "--redis", "private")
    assert code == 0, err
    assert "3,000 taken" in out and "histograms for" in out


@pytest.mark.parametrize("args, message", [
    (["--threshold", "sometimes:hop_latency=3"], "unknown event class 'sometimes'"),
    (["--threshold", "threshold:hop_latency"], "write CLASS:METRIC=VALUE"),
    (["--threshold", "threshold:hop_latency=lots"], "'lots' is not an integer"),
    (["--redis", "localhost:6379"], "give a redis:// URL or 'private'"),
])
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    pcap = str(tmp_path / "t.pcap")
    run("flowcache", "trace", pcap, "--packets", "100", "--flows", "10")
    code, _, err = run("flowcache", "replay", pcap, "--rows", "4", *args)
    assert code == 1 and message in err and err.count("\n") == 1 and err.startswith("error:")


def test_missing_capture_is_one_line(tmp_path: Path) -> None:
    code, _, err = run("flowcache", "replay", str(tmp_path / "absent.pcap"))
    assert code == 1 and "absent.pcap: cannot read" in err and err.count("\n") == 1
