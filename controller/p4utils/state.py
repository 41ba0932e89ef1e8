"""A switch's runtime state back to its start over P4Runtime (BMv2's
``bm_reset_state``: every entry that is not const, every default action,
the PRE, counters, meters and registers; the program stays)."""

from __future__ import annotations

from controller.p4rt.client import P4RuntimeClient
from controller.p4rt.errors import P4RuntimeError


def reset_switch(client: P4RuntimeClient) -> None:
    with client.batch():
        for name, table in client.tables.items():
            for entry in table.read():
                if not entry["is_const"]:
                    table.delete(entry["match"], entry["priority"] or None)
            if not _const_default(client, name):
                table.default.reset()
    with client.batch():
        for group in client.multicast_groups.read():
            client.multicast_groups.delete(group)
        for session in client.clone_sessions.read():
            client.clone_sessions.delete(session)
        for counter in client.counters.values():
            counter.modify(None)
        for meter in client.meters.values():
            meter.modify(None, None)
    registers = list(client.p4info.registers)
    if not registers:
        return
    request = client._write_request()
    for reg in registers:
        update = request.updates.add(type=client._pb.Update.MODIFY)
        update.entity.register_entry.register_id = reg.preamble.id
        update.entity.register_entry.data.bitstring = b"\x00"
    # Answered here even when writes are pipelined: a refusal is expected.
    write = getattr(client.transport, "write_now", client.transport.write)
    try:
        client._rpc(write, request)
    except P4RuntimeError as exc:
        if exc.code != "UNIMPLEMENTED":
            raise
        # BMv2's P4Runtime server has no register writes: nothing to reset
        # through it, and a freshly started switch's cells are zero already.


def _const_default(client: P4RuntimeClient, table: str) -> bool:
    info = client.tables[table].info
    return bool(info.const_default_action_id) or bool(info.implementation_id)
