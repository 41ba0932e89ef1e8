"""The little of nanomsg's ``nnpy`` that Thrift controllers use to read
BMv2's learning notifications: a SUB socket on the address
``client.bm_mgmt_get_info().notifications_socket`` gives. Here that address
is an intbed switch API of the same process (``controller.p4utils.learning``)."""

from __future__ import annotations

from typing import Any

import _intbed_import  # noqa: F401 - intbed's packages first

AF_SP = 1
SUB = 33
PAIR = 16
SUB_SUBSCRIBE = 1
SOL_SOCKET = 0
RCVTIMEO = 5


class Socket:
    """A subscriber socket; ``recv`` returns one packed learning message."""

    def __init__(self, domain: int, protocol: int) -> None:
        if protocol != SUB:
            from controller.p4utils.errors import NotHonouredError

            raise NotHonouredError("nnpy.Socket", "only SUB sockets on a switch's "
                                   "notifications socket exist here")
        self._queue: Any = None
        self._timeout_s: float | None = None

    def connect(self, url: str) -> int:
        from controller.p4utils.learning import endpoint

        self._queue = endpoint(url).subscribe()
        return 0

    def setsockopt(self, level: int, option: int, value: Any) -> None:
        if level == SOL_SOCKET and option == RCVTIMEO:
            self._timeout_s = None if int(value) < 0 else int(value) / 1000

    def recv(self, flags: int = 0) -> bytes:
        if self._queue is None:
            raise OSError("socket is not connected")
        return self._queue.get(timeout=self._timeout_s)

    def close(self) -> None:
        self._queue = None
