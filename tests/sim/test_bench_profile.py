"""``intbed bench sim --profile``: the profiler sees the simulated run
alone, so its parts add up to the run and compilation is not among them."""

from __future__ import annotations

from benchmarks.sim import profile_case


def test_the_profile_covers_the_run_and_not_the_start_up() -> None:
    prof = profile_case("fabric", 0.5, top=200)
    hops = prof["run"]["packet_hops"]
    assert hops > 1000
    functions = {row["function"]: row for row in prof["top"]}
    assert not any("compile" in name or "exec" in name for name in functions)
    ingress = [row for name, row in functions.items() if name.startswith("switch.py")
               and name.endswith("(ingress_hop)")]
    # Once per packet-hop, in the form the sim target calls.
    assert [row["calls"] for row in ingress] == [hops]
    assert prof["parts"]["pipeline (generated)"] > 0
    # What was profiled is the run: no more than the profiled wall time.
    assert prof["profiled_s"] <= prof["run"]["wall_s"] * 1.05 + 0.01
