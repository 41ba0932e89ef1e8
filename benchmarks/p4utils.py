"""``table_add`` through the p4-utils API, as a controller script calls it:
one call per route, from a process of its own, over gRPC to the switch.

Two rates per switch: calls/s while the script calls (the API queues each
write and returns, ``controller.p4utils.pipeline``) and table_add/s to the
last answer (every write applied and acknowledged). Beside them the same
routes written one synchronous Write each by the by-name client, the
rate a controller had before the writes were pipelined. The sim case is
a sim switch's in-process service behind the gRPC bridge a controller run
serves it with; the intbed-switch case is run by ``intbed bench switch``.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.engine import L3_PROGRAM, ROUTES, l3_routes
from common.paths import child_env

TABLE, ACTION = "ipv4_lpm", "ipv4_forward"


def _client_run(addr: str, device_id: int, routes: int) -> dict[str, Any]:
    """The child's side: reset the switch, then table_add every route."""
    from controller.p4rt.client import P4RuntimeClient
    from controller.p4rt.grpc_transport import GrpcTransport
    from controller.p4utils.connect import CONTROLLER_ELECTION_ID, SwitchAddress, open_client
    from controller.p4utils.thrift_api import SimpleSwitchThriftAPI

    words = [(f"{ipaddress.IPv4Address(net)}/24", f"0x{mac:012x}", str(port))
             for net, mac, port in l3_routes(routes, 0)]
    client = open_client(SwitchAddress("s1", addr, device_id, 9090, 9559))
    api = SimpleSwitchThriftAPI(9090, p4rt=client)
    api.reset_state()
    start = time.perf_counter()
    for ip, mac, port in words:
        api.table_add(TABLE, ACTION, [ip], [mac, port])
    called = time.perf_counter() - start
    client.transport.flush()
    answered = time.perf_counter() - start
    installed = len(client.tables[api.runner.table_info(TABLE).preamble.name].read())
    writes = client.transport.writes_sent
    api.reset_state()
    client.transport.close()
    # The same routes, one synchronous Write per route (no pipelining).
    sync = P4RuntimeClient(GrpcTransport(addr, device_id, CONTROLLER_ELECTION_ID),
                           device_id=device_id, election_id=CONTROLLER_ELECTION_ID)
    plain = SimpleSwitchThriftAPI(9090, p4rt=sync)
    start = time.perf_counter()
    for ip, mac, port in words:
        plain.table_add(TABLE, ACTION, [ip], [mac, port])
    unpipelined = time.perf_counter() - start
    plain.reset_state()
    return {"routes": routes, "installed": installed, "writes": writes,
            "api_calls_per_s": round(routes / called, 1),
            "api_table_add_per_s": round(routes / answered, 1),
            "api_unpipelined_table_add_per_s": round(routes / unpipelined, 1)}


def measure_api_writes(addr: str, device_id: int = 0, routes: int = ROUTES) -> dict[str, Any]:
    """Run the client side in a child process against the switch at ``addr``."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.p4utils", "client", addr,
                           str(device_id), str(routes)], env=child_env(), text=True,
                          capture_output=True, timeout=600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_sim_api(routes: int = ROUTES) -> dict[str, Any]:
    """A sim switch's service (l3_forward) behind the controller run's gRPC bridge."""
    from dataplane.compiler.pipeline import compile_file
    from dataplane.control.service import RuntimeService
    from dataplane.control.service_bridge import ServiceBridge
    from dataplane.runtime.switch import Switch

    service = RuntimeService(Switch(compile_file(L3_PROGRAM)))
    with ServiceBridge(service) as bridge:
        return measure_api_writes(bridge.address, service.device_id, routes)


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 4 and argv[0] == "client":
        print(json.dumps(_client_run(argv[1], int(argv[2]), int(argv[3]))))
        return 0
    print(json.dumps(bench_sim_api()))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
