"""Errors of the P4Runtime client, translated once at the transport boundary.

A transport raises ``RpcError`` (a gRPC status: code, message and the
serialized ``google.rpc.Status`` whose details hold one ``p4.v1.Error`` per
update of a failed Write). The client turns it into ``P4RuntimeError``,
named by gRPC code name and pointing at the first failing update, as
p4runtime-shell reports write failures.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.rpc import code_pb2, status_pb2

from common.errors import IntbedError

ERROR_TYPE_URL = "type.googleapis.com/p4.v1.Error"


def code_name(code: int) -> str:
    """gRPC canonical code name (``NOT_FOUND``) of a numeric code."""
    try:
        return code_pb2.Code.Name(code)
    except ValueError:
        return f"CODE_{code}"


class RpcError(Exception):
    """What a transport raises when the switch refuses a call."""

    def __init__(self, code: int, message: str, details: bytes = b"") -> None:
        super().__init__(f"{code_name(code)}: {message}")
        self.code = code
        self.message = message
        self.details = details  # serialized google.rpc.Status, may be empty


@dataclass(frozen=True, slots=True)
class UpdateError:
    """The outcome of one update of a failed batch."""

    index: int
    code: str
    message: str


class P4RuntimeError(IntbedError):
    """A P4Runtime call failed. ``code`` is the gRPC code name of the failure
    (of the first failing update for a Write), ``index`` that update's
    position in its batch, ``details`` every failing update.

    An ``IntbedError``, so a switch that refuses a request reaches the user as
    one ``error: CODE: message`` line like any other user error."""

    def __init__(
        self,
        code: str,
        message: str,
        details: list[UpdateError] | None = None,
        index: int | None = None,
    ) -> None:
        IntbedError.__init__(self, message)
        self.code = code
        self.details = details or []
        self.index = index

    def __str__(self) -> str:
        where = f" (update {self.index})" if self.index is not None else ""
        return f"{self.code}{where}: {self.message}"

    def line(self) -> str:
        return f"error: {self}"

    @classmethod
    def from_rpc(cls, error: RpcError, error_class: type | None = None) -> P4RuntimeError:
        """Translate a transport error; ``error_class`` is ``p4.v1.Error`` of the
        caller's pool, used to read per-update details."""
        failures: list[UpdateError] = []
        if error.details and error_class is not None:
            status = status_pb2.Status.FromString(error.details)
            for i, packed in enumerate(status.details):
                if packed.type_url != ERROR_TYPE_URL:
                    continue
                item = error_class.FromString(packed.value)
                if item.canonical_code != code_pb2.OK:
                    failures.append(UpdateError(i, code_name(item.canonical_code), item.message))
        if failures:
            first = failures[0]
            return cls(first.code, first.message, failures, first.index)
        return cls(code_name(error.code), error.message)


class UnknownNameError(P4RuntimeError, KeyError):
    """A name the P4Info does not know (caught before anything is sent)."""

    def __init__(self, message: str) -> None:
        P4RuntimeError.__init__(self, "NOT_FOUND", message)

    def __str__(self) -> str:  # KeyError's own __str__ would quote the message
        return f"NOT_FOUND: {self.message}"
