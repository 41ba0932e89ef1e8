"""What both p4-utils APIs share: one switch's session, the command
translator that keeps BMv2's handles, and the calls that read the same in
both (default actions, clearing, counters and meters by name)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from controller.bmcli import CommandRunner
from controller.p4rt.client import P4RuntimeClient
from controller.p4utils.errors import UIn_Error, bad_input
from controller.p4utils.state import reset_switch


def rate_words(rates: Any) -> list[str]:
    """``[(cir, cburst), (pir, pburst)]`` (rates per microsecond) as CLI words."""
    ok = isinstance(rates, list | tuple) and len(rates) == 2 and all(
        isinstance(r, list | tuple) and len(r) == 2 for r in rates)
    if not ok:
        raise UIn_Error("rates is not in the specified format [(cir, cburst), (pir, pburst)].")
    return [f"{float(r):.12g}:{int(b)}" for r, b in rates]


class RunnerAPI:
    """A p4-utils API object over one P4Runtime session."""

    catch_all = False  # see errors.bad_input

    def __init__(self, session: P4RuntimeClient) -> None:
        self._session = session
        self.runner = CommandRunner(session)
        # Pipelined writes: a refused insert gives its handle back, applied by
        # the next call (in the script's thread, not the sender's).
        self._refused: deque[Any] = deque()
        listeners = getattr(session.transport, "on_refused", None)
        if listeners is not None:
            listeners.append(self._refused.append)

    def _apply(self, name: str, *words: Any) -> str | None:
        while self._refused:
            self.runner.forget_insert(self._refused.popleft())
        return self.runner.apply(name, [str(w) for w in words])

    def _params(self, values: Any, what: str) -> list[str]:
        """A list argument as strings (each API checks the type its own way)."""
        if isinstance(values, str | bytes) or not isinstance(values, list | tuple):
            raise UIn_Error(f"{what} must be a list of strings, not {values!r}")
        return [str(v) for v in values]

    def _find(self, kinds: Sequence[str], name: str, what: str) -> tuple[str, Any]:
        """(kind, P4Info object) of the one extern ``name`` or a dotted suffix names."""
        p4info = self._session.p4info
        found = [(k, o) for k in kinds for o in getattr(p4info, k)
                 if o.preamble.name == name or o.preamble.name.endswith("." + name)]
        if len(found) != 1:
            raise UIn_Error(f"Invalid {what} name ({name})")
        return found[0]

    @bad_input
    def table_set_default(self, table_name: str, action_name: str,
                          action_params: Sequence[Any] = ()) -> None:
        self._apply("table_set_default", table_name, action_name,
                    *self._params(action_params, "action_params"))

    @bad_input
    def table_reset_default(self, table_name: str) -> None:
        self._apply("table_reset_default", table_name)

    @bad_input
    def table_clear(self, table_name: str) -> None:
        self._apply("table_clear", table_name)

    @bad_input
    def counter_write(self, counter_name: str, index: int, pkts: int = 0, byts: int = 0) -> None:
        self._apply("counter_write", counter_name, index, int(pkts), int(byts))

    @bad_input
    def counter_reset(self, counter_name: str) -> None:
        self._apply("counter_reset", counter_name)

    @bad_input
    def meter_array_set_rates(self, meter_name: str, rates: Any) -> None:
        self._apply("meter_array_set_rates", meter_name, *rate_words(rates))

    @bad_input
    def meter_set_rates(self, meter_name: str, index: int, rates: Any) -> None:
        self._apply("meter_set_rates", meter_name, index, *rate_words(rates))

    @bad_input
    def meter_get_rates(self, meter_name: str, index: int) -> list[tuple[float, int]]:
        """[(cir, cburst), (pir, pburst)], rates per microsecond as BMv2 gives them."""
        _, info = self._find(("meters",), meter_name, "meter")
        config = self._session.meters[info.preamble.name].read(int(index))
        if config is None:
            return []
        cir, cburst, pir, pburst = config
        return [(cir / 1e6, cburst), (pir / 1e6, pburst)]

    def reset_state(self) -> None:
        """BMv2's ``reset_state``: entries, defaults, PRE, counters, meters and
        registers back to their start, the program kept."""
        reset_switch(self._session)
        self.runner = CommandRunner(self._session)
