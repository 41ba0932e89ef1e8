"""Pro: adaptive labeling (paper section 3.2, Algorithm 3; section 5).

A port whose labels stop reaching the controller (lost on a bad link, or
too rare for the telemetry interval) gets a shorter labeling interval
T / 2^S; a port that is updated again gets it back step by step. S lives in
``MyEgress.port_shift`` and changes by P4Runtime MODIFY (a register would
not do: BMv2's P4Runtime rejects register writes).

Freshness comes from the aging store: every accepted database update sets
the port's key with a TTL of k T, so a live key means "updated within k T".
That is Algorithm 3's test ``now - RT > k T`` with RT taken at the
controller (arrival time): switch clocks and the controller's are not the
same clock on a live network.

Two styles:

- ``shift`` (the paper): Algorithm 3's ``while True`` loop, run every
  ``check_s`` (default T, the finest step labels can change at): for each
  port whose last change (LRT) is at least k T old, raise S one step if
  its key has expired, else lower it one step if above 0. A port whose
  labels stop is raised between k T and k T + T after its last update.
  The steps are S = 0, 1, ..., b - 1 with b = bit length of T in
  microseconds (so T >> S > 0), then 48, the data plane's "label every
  packet" value (intlabel.p4 LABEL_ALL_SHIFT).
- ``flag`` (section 5's implementation, a 1-bit Reg2): when a port's key
  expires, label every packet (S = 48) and arm a restore key of
  ``restore_factor`` x k T; another expiry while flagged re-arms it; when
  it expires, S = 0. The default factor 1 is the text's "deleted after
  k * T ... the controller will modify the value of Reg2 to 0"; the
  authors' repository uses 10 (``PROTOTYPE_RESTORE_FACTOR``).

Watched ports: the ``ports`` given (armed at start as if just updated), or,
without them, every port the database learns of through reports.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from common.clock import Clock
from common.errors import InvalidValueError
from controller.intlabel.config import (
    PAPER_RESTORE_FACTOR,
    PORT_KEY,
    SHIFT_ACTION,
    SHIFT_PARAM,
    SHIFT_TABLE,
)
from controller.p4rt.errors import P4RuntimeError
from sinks.intlabel.aging import EPSILON_S, AgingStore
from sinks.intlabel.database import IntDatabase, IntRecord, Key

# intlabel.p4: S >= 48 (the timestamps' width) labels every packet.
LABEL_ALL_SHIFT = 48


class _ShiftTable(Protocol):
    def modify(self, match: Mapping[str, Any], action: str,
               params: Mapping[str, Any] | None = None, priority: int | None = None) -> Any: ...

    def insert(self, match: Mapping[str, Any], action: str,
               params: Mapping[str, Any] | None = None, priority: int | None = None) -> Any: ...


class ShiftClient(Protocol):
    """What the Pro loop needs of a ``P4RuntimeClient``: the shift table."""

    @property
    def tables(self) -> Mapping[str, _ShiftTable]: ...


class ShiftChange(NamedTuple):
    """S of (switch, port) set at ``time_s`` (controller clock)."""

    time_s: float
    switch: str
    port: int
    shift: int


class ProPass(NamedTuple):
    """One pass of the ``shift`` loop: when it began and ended (controller
    clock; the same instant in virtual time), the ports whose aging key it
    read, and the changes of S it made."""

    start_s: float
    end_s: float
    checked: int
    changes: int


def shift_steps(T_us: int) -> list[int]:
    """The values S takes in the ``shift`` style, lowest first."""
    return list(range(max(T_us.bit_length(), 1))) + [LABEL_ALL_SHIFT]


class _Port:
    __slots__ = ("switch", "port", "key", "restore_key", "step", "lrt", "flagged")

    def __init__(self, switch: str, sid: int, port: int, now: float) -> None:
        self.switch = switch
        self.port = port
        self.key = f"aging:{sid}:{port}"
        self.restore_key = f"restore:{sid}:{port}"
        self.step = 0
        self.lrt = now
        self.flagged = False


class ProLoop:
    """Algorithm 3 over ``clients`` (P4Runtime, by switch name).

    ``switch_ids`` maps switch names to the IDs their items carry (default:
    each client's ``device_id``). ``T_s`` is the configured labeling interval
    in seconds; ``check_s`` the loop period (default T).
    """

    def __init__(self, clients: Mapping[str, ShiftClient], db: IntDatabase, store: AgingStore,
                 clock: Clock, *, T_s: float, k: float,
                 ports: Iterable[tuple[str, int]] | None = None,
                 switch_ids: Mapping[str, int] | None = None, style: str = "shift",
                 restore_factor: float = PAPER_RESTORE_FACTOR,
                 check_s: float | None = None) -> None:
        if style not in ("shift", "flag"):
            raise InvalidValueError(f"Pro style must be 'shift' or 'flag', not {style!r}")
        if not T_s > 0 or not k > 0:
            raise InvalidValueError("T and k must be positive")
        self.clients = clients
        self.db = db
        self.store = store
        self.clock = clock
        self.style = style
        self.timeout_s = k * T_s
        self.restore_s = restore_factor * self.timeout_s
        self.check_s = T_s if check_s is None else check_s
        self.steps = shift_steps(round(T_s * 1_000_000))
        ids = switch_ids if switch_ids is not None else {
            name: c.device_id for name, c in clients.items()}  # type: ignore[attr-defined]
        self._names = {sid: name for name, sid in ids.items() if name in clients}
        self._ids = dict(ids)
        self._explicit = ports is not None
        self._initial_ports = list(ports or ())
        self._ports: dict[Key, _Port] = {}
        self._by_store_key: dict[Hashable, tuple[_Port, bool]] = {}
        self.changes: list[ShiftChange] = []
        self.passes: list[ProPass] = []
        self.write_errors = 0
        self.running = False

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        now = self.clock.now()
        self.db.on_update(self._on_update)
        self.store.on_expire(self._on_expire)
        self.running = True
        for switch, port in self._initial_ports:
            p = self._add((self._ids[switch], port), now)
            self.store.set(p.key, self.timeout_s)
        if self.style == "shift":
            self.clock.call_later(self.check_s, self._tick)

    def stop(self) -> None:
        self.running = False

    def shift(self, switch: str, port: int) -> int:
        p = self._ports.get((self._ids[switch], port))
        return 0 if p is None else self._value(p)

    def watched(self) -> list[tuple[str, int]]:
        return [(p.switch, p.port) for p in self._ports.values()]

    # ------------------------------------------------------------- inputs

    def _add(self, key: Key, now: float) -> _Port:
        p = _Port(self._names[key[0]], key[0], key[1], now)
        self._ports[key] = p
        self._by_store_key[p.key] = (p, False)
        self._by_store_key[p.restore_key] = (p, True)
        return p

    def _on_update(self, key: Key, record: IntRecord) -> None:
        if not self.running:
            return
        p = self._ports.get(key)
        if p is None:
            if self._explicit or key[0] not in self._names:
                return
            p = self._add(key, self.clock.now())
        self.store.set(p.key, self.timeout_s)

    def _tick(self) -> None:
        """One pass of Algorithm 3's loop (lines 4-12) over every port."""
        if not self.running:
            return
        now = self.clock.now()
        due = self.timeout_s - EPSILON_S
        top = len(self.steps) - 1
        exists = self.store.exists
        made = len(self.changes)
        checked = 0
        for p in self._ports.values():
            if now - p.lrt < due:
                continue
            checked += 1
            if not exists(p.key):
                if p.step < top:
                    p.step += 1
                    p.lrt = now
                    self._write(p, now)
            elif p.step > 0:
                p.step -= 1
                p.lrt = now
                self._write(p, now)
        self.passes.append(ProPass(now, self.clock.now(), checked, len(self.changes) - made))
        self.clock.call_later(self.check_s, self._tick)

    def _on_expire(self, key: Hashable) -> None:
        if not self.running or self.style != "flag":
            return
        found = self._by_store_key.get(key)
        if found is None:
            return
        p, is_restore = found
        now = self.clock.now()
        if is_restore:
            p.flagged = False
            p.lrt = now
            self._write(p, now)
            return
        if not p.flagged:
            p.flagged = True
            p.lrt = now
            self._write(p, now)
        self.store.set(p.restore_key, self.restore_s)

    # ------------------------------------------------------------- output

    def _value(self, p: _Port) -> int:
        if self.style == "flag":
            return LABEL_ALL_SHIFT if p.flagged else 0
        return self.steps[p.step]

    def _write(self, p: _Port, now: float) -> None:
        s = self._value(p)
        table = self.clients[p.switch].tables[SHIFT_TABLE]
        match = {PORT_KEY: p.port}
        params = {SHIFT_PARAM: s}
        try:
            table.modify(match, SHIFT_ACTION, params)
        except P4RuntimeError as exc:
            if exc.code != "NOT_FOUND":
                self.write_errors += 1
                return
            # No entry yet (a switch not set up by configure_switch).
            table.insert(match, SHIFT_ACTION, params)
        self.changes.append(ShiftChange(now, p.switch, p.port, s))
