"""Writes that do not wait for the switch: a controller's one-at-a-time
``table_add`` calls at the client's speed rather than one gRPC round trip
each (a unary call costs about a millisecond in Python gRPC here).

``PipelinedTransport.write`` queues the request and returns; one sender
thread sends what is queued in order, every request queued while the
previous Write was in flight merged into the next one (so the first write
goes at once and a burst travels in few Writes). Anything else (a read, a
stream message, the pipeline config) first waits until every queued write
has been answered, so a controller reads its own writes. The switch
applies a Write's updates in order and answers each (CONTINUE_ON_ERROR);
a refused update is reported through ``on_error`` when its Write returns,
not by the call that queued it.
"""

from __future__ import annotations

import atexit
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from controller.p4rt.errors import P4RuntimeError, RpcError
from controller.p4rt.protos import protos

MAX_UPDATES = 1000  # per merged Write


class PipelinedTransport:
    """Wraps a transport; see the module docstring."""

    def __init__(self, inner: Any, on_error: Callable[[P4RuntimeError], None]) -> None:
        self.inner = inner
        self.on_error = on_error
        self.on_refused: list[Callable[[Any], None]] = []
        self._pb = protos().p4runtime_pb2
        self._queue: deque[Any] = deque()
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self.writes_sent = 0
        self._thread = threading.Thread(target=self._send_loop, name="p4utils-writes",
                                        daemon=True)
        self._thread.start()
        atexit.register(self.flush)

    # ----------------------------------------------------------------- writes

    def write(self, request: Any) -> Any:
        with self._cond:
            if self._closed:
                raise RpcError(14, "the connection to the switch is closed")
            self._queue.append(request)
            self._cond.notify_all()
        return self._pb.WriteResponse()

    def _take(self) -> list[Any] | None:
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if not self._queue:
                return None
            batch, count = [], 0
            while self._queue and (not batch or
                                   count + len(self._queue[0].updates) <= MAX_UPDATES):
                request = self._queue.popleft()
                batch.append(request)
                count += len(request.updates)
            self._busy = True
            return batch

    def _send_loop(self) -> None:
        while (batch := self._take()) is not None:
            merged = batch[0]
            if len(batch) > 1:
                merged = self._pb.WriteRequest(device_id=batch[0].device_id)
                merged.election_id.CopyFrom(batch[0].election_id)
                for request in batch:
                    merged.updates.extend(request.updates)
            try:
                self.inner.write(merged)
            except RpcError as exc:
                self._report(P4RuntimeError.from_rpc(exc, self._pb.Error), merged)
            except Exception as exc:  # the channel itself failed: say so, keep going
                self._report(P4RuntimeError("UNAVAILABLE", str(exc)), merged)
            finally:
                with self._cond:
                    self.writes_sent += 1
                    self._busy = False
                    self._cond.notify_all()

    def _report(self, error: P4RuntimeError, request: Any) -> None:
        """Each refused update to ``on_error``, and with the update itself to
        every ``on_refused`` listener (who may undo what they counted on)."""
        for failure in error.details or [None]:  # type: ignore[list-item]
            single = error if failure is None else P4RuntimeError(failure.code, failure.message)
            self.on_error(single)
            if failure is not None and 0 <= failure.index < len(request.updates):
                for listener in list(self.on_refused):
                    listener(request.updates[failure.index])

    def write_now(self, request: Any) -> Any:
        """A Write whose refusal the caller handles itself: after every queued
        write, answered before it returns (raises ``RpcError``)."""
        self.flush()
        return self.inner.write(request)

    def flush(self) -> None:
        """Return once every queued write has been answered."""
        with self._cond:
            while (self._queue or self._busy) and self._thread.is_alive():
                self._cond.wait()

    def close(self) -> None:
        self.flush()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()
        atexit.unregister(self.flush)
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    # ------------------------------------------------- everything else, in order

    def read(self, request: Any) -> Any:
        self.flush()
        return self.inner.read(request)

    def stream(self, request: Any) -> Any:
        self.flush()
        return self.inner.stream(request)

    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        return self.inner.subscribe(callback)

    def get_pipeline_config(self, request: Any) -> Any:
        self.flush()
        return self.inner.get_pipeline_config(request)

    def capabilities(self, request: Any) -> Any:
        return self.inner.capabilities(request)
