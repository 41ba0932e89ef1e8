"""P4Runtime table writes/s over gRPC, server and client in one process.

A ``P4RuntimeServer`` runs l3_forward on 127.0.0.1; a ``P4RuntimeClient``
over ``GrpcTransport`` writes ``ecmp_nhop`` entries (two exact 16-bit keys,
4,096 slots), each figure as inserts followed by deletes of the same entries:

- ``client_single``: one entry per Write RPC through the by-name client
  (what a controller installing routes one by one sees);
- ``raw_single``: one update per Write RPC from requests built beforehand
  (the transport and server alone);
- ``raw_batched``: ``batch`` updates per Write RPC, built beforehand.

No network namespaces are needed, so the figures are available wherever the
tests run; ``benchmarks.switch`` measures the same against a live
``intbed-switch`` process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from p4src import program_path

PROGRAM = program_path("l3_forward")
TABLE, ACTION = "ecmp_nhop", "ipv4_forward"
KEYS = ("meta.ecmp_group", "meta.ecmp_select")
TABLE_SIZE = 4096
BATCH = 100


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("inf")


def bench_grpc_writes(n: int = 2000, batch: int = BATCH) -> dict[str, Any]:
    """Writes/s of ``n`` inserts then ``n`` deletes, three ways (module docstring)."""
    from controller.p4rt import P4RuntimeClient
    from controller.p4rt.grpc_transport import GrpcTransport
    from dataplane.control.grpc_server import P4RuntimeServer

    n = max(1, min(n, TABLE_SIZE))
    server = P4RuntimeServer(program=PROGRAM)
    server.start()
    transport = GrpcTransport(server.address, election_id=(0, 1))
    try:
        client = P4RuntimeClient(transport, election_id=(0, 1))
        keys = [(i >> 8, i & 0xFF) for i in range(n)]

        def by_name() -> None:
            for g, s in keys:
                client.tables[TABLE].insert({KEYS[0]: g, KEYS[1]: s}, ACTION,
                                            {"dstAddr": 0x0A0000000001, "port": 1})
            for g, s in keys:
                client.tables[TABLE].delete({KEYS[0]: g, KEYS[1]: s})

        requests = _requests(client, keys, 1)
        batched = _requests(client, keys, batch)

        def raw(reqs: list[Any]) -> Callable[[], None]:
            def run() -> None:
                for request in reqs:
                    transport.write(request)
            return run

        out: dict[str, Any] = {"program": PROGRAM.stem, "table": TABLE, "entries": n,
                               "writes": 2 * n, "batch": batch}
        for name, run in (("client_single", by_name), ("raw_single", raw(requests)),
                          ("raw_batched", raw(batched))):
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            out[f"{name}_writes_per_s"] = _rate(2 * n, elapsed)
        with server.lock:
            left = sum(len(t) for t in server.switch.tables)
        if left:
            raise RuntimeError(f"{left} entries left after the benchmark")
        return out
    finally:
        transport.close()
        server.stop()


def _requests(client: Any, keys: list[tuple[int, int]], batch: int) -> list[Any]:
    """WriteRequests of ``batch`` inserts each, then the same of deletes."""
    pb = client._pb
    table = client.names.table(TABLE)
    fields = [client.names.match_field(table, k).id for k in KEYS]
    action = client.names.action(ACTION).preamble.id
    out = []
    for kind in (pb.Update.INSERT, pb.Update.DELETE):
        for start in range(0, len(keys), batch):
            request = pb.WriteRequest(device_id=client.device_id)
            request.election_id.high, request.election_id.low = client.election_id
            for g, s in keys[start:start + batch]:
                te = request.updates.add(type=kind).entity.table_entry
                te.table_id = table.preamble.id
                te.match.add(field_id=fields[0]).exact.value = g.to_bytes(1 if g < 256 else 2,
                                                                          "big")
                te.match.add(field_id=fields[1]).exact.value = s.to_bytes(1, "big")
                if kind == pb.Update.INSERT:
                    te.action.action.action_id = action
                    te.action.action.params.add(param_id=1, value=b"\x0a\x00\x00\x00\x00\x01")
                    te.action.action.params.add(param_id=2, value=b"\x01")
            out.append(request)
    return out


if __name__ == "__main__":  # pragma: no cover - manual runs
    import json
    import sys

    print(json.dumps(bench_grpc_writes(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))
