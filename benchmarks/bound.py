"""How fast a sim case could run if its P4 pipelines cost nothing.

Every switch's two hop functions (``Switch.ingress_hop`` and
``egress_hop``, the form the sim target calls per packet-hop) are replaced
by a memo of the real pipeline's forwarding decision, one per switch and
flow: the first packet of a flow at a switch runs the real pipeline and
its egress port is kept; later ones are handed to that port at once, their
bytes unchanged. Events, queues, wires, hosts and traffic are the real
ones, so the stubbed run's wall time is what the rest of the simulator
costs, and the ratio of the two runs is the most any work on the pipeline
alone (a typed data path, say) can gain. The stub is cheap but not free
(an interpreted call, a dictionary probe, one small object), so the
figure is a slight underestimate of that ceiling.

The memo is right only for traffic whose forwarding is a function of the
flow (the benchmarks' UDP background: no probes, no clones, no
multicast); the stubbed run must therefore match the real one in packet
hops, events and deliveries, and ``same_run`` says whether it did.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from common.errors import IntbedError

FLOW_BYTES = slice(26, 38)
"""An IPv4 frame's source and destination addresses and transport ports
(the ECMP hash's inputs); with the ingress port and the protocol byte,
a flow's memo key."""


def stub_pipelines(net: Any) -> list[list[int]]:
    """Replace every switch's hop functions in ``net`` by a per-flow memo;
    returns each switch's counter of stubbed packet-hops."""
    counters = []
    for name, sw in net.switches.items():
        counters.append(stub_switch(name, sw))
    return counters


def stub_switch(name: str, sw: Any) -> list[int]:
    """Replace one sim switch's hop functions by a per-flow memo; returns
    its counter of stubbed packet-hops."""
    from dataplane.runtime.switch import EgressJob

    real_ingress, real_egress = sw._ingress_hop, sw._egress_hop
    if real_ingress is None or real_egress is None:
        raise IntbedError(f"switch {name}: its pipeline halves are wrapped (a tap or a "
                          "plug-in), so there is no hop form to stub")
    decided: dict[tuple[int, int, bytes], int] = {}
    count = [0]

    def decide(port: int, data: bytes, instance_type: int, preserved: Any, ts: int) -> int:
        job = real_ingress(port, data, instance_type, preserved, ts)
        if job is None:
            return -1
        if type(job) is not EgressJob:
            raise IntbedError(f"switch {name}: a packet was cloned, resubmitted or "
                              "replicated; the bound needs unicast forwarding")
        out = real_egress(job, ts, 0, 0, 0, ts)
        if type(out) is not bytes:
            raise IntbedError(f"switch {name}: egress did more than send one packet; "
                              "the bound needs unicast forwarding")
        return int(job.port)

    def ingress_hop(port: int, data: bytes, instance_type: int, preserved: Any,
                    ts: int) -> Any:
        count[0] += 1
        key = (port, data[23], data[FLOW_BYTES])
        out_port = decided.get(key)
        if out_port is None:
            out_port = decided[key] = decide(port, data, instance_type, preserved, ts)
        if out_port < 0:
            return None
        return EgressJob(out_port, data, data, len(data))

    def egress_hop(job: Any, enq_ts: int, enq_depth: int, deq_delta: int, deq_depth: int,
                   ts: int) -> bytes:
        return job.state  # type: ignore[no-any-return]

    sw._ingress_hop = ingress_hop
    sw._egress_hop = egress_hop
    return count


def _stubbed_run(case: Callable[..., dict[str, Any]], duration_s: float) -> dict[str, Any]:
    counters: list[list[int]] = []

    def prepare(net: Any) -> None:
        counters.extend(stub_pipelines(net))

    report = case(duration_s=duration_s, prepare=prepare)
    # The engines counted only the packets the memo sent to the real
    # pipeline (a flow's first at each switch): the stubs saw all.
    report["pipeline_runs"] = report["packet_hops"]
    report["packet_hops"] = sum(c[0] for c in counters)
    report["packet_hops_per_s"] = round(report["packet_hops"] / report["wall_s"])
    return report


SAME = ("packet_hops", "events", "background_loss", "packets_delivered")
"""What a stubbed run must share with the real one (those of them a case
reports)."""


def bound(case: str, duration_s: float = 10.0, pairs: int = 3,
          progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``pairs`` alternating runs of ``case``, real pipeline then stubbed;
    the ratio of each pair's wall times, and their median (the host's own
    swing moves both runs of a pair alike)."""
    from benchmarks.sim import CASES

    run = CASES[case]
    rows = []
    for i in range(pairs):
        if progress is not None:
            progress(f"pair {i + 1} of {pairs}: real pipeline")
        real = run(duration_s=duration_s)
        if progress is not None:
            progress(f"pair {i + 1} of {pairs}: stubbed pipeline")
        stub = _stubbed_run(run, duration_s)
        same = all(real[k] == stub[k] for k in SAME if k in real)
        rows.append({"real": real, "stubbed": stub, "same_run": same,
                     "ratio": round(real["wall_s"] / stub["wall_s"], 3)})
    return {
        "case": case, "simulated_s": duration_s, "pairs": rows,
        "same_run": all(r["same_run"] for r in rows),
        "median_ratio": round(statistics.median(r["ratio"] for r in rows), 3),
        "median_realtime_factor": {
            "real": round(statistics.median(r["real"]["realtime_factor"] for r in rows), 2),
            "stubbed": round(statistics.median(r["stubbed"]["realtime_factor"] for r in rows), 2),
        },
    }
