"""The refusal every P4Runtime entry point raises, with its gRPC status.

It lives apart from the service so the arbitration rules and both transports
(in-process service, gRPC server) raise and translate the same error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2

from common.errors import RuntimeConfigError


class P4RuntimeServiceError(RuntimeConfigError):
    """A request the service refuses, with its gRPC canonical code name.

    ``details`` holds one ``p4.v1.Error`` per update of a failed Write batch.
    ``grpc_code`` and ``status_bytes()`` (a serialized ``google.rpc.Status``,
    as gRPC sends in ``grpc-status-details-bin``) are what transports carry.
    """

    def __init__(self, code: str, message: str, details: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.grpc_code = code_pb2.Code.Value(code)
        self.details = list(details)

    def __str__(self) -> str:
        return f"error: {self.code}: {self.message}"

    def status(self) -> status_pb2.Status:
        status = status_pb2.Status(code=self.grpc_code, message=self.message)
        for error in self.details:
            packed = any_pb2.Any()
            packed.Pack(error)
            status.details.append(packed)
        return status

    def status_bytes(self) -> bytes:
        return self.status().SerializeToString()


def fail(code: str, message: str) -> P4RuntimeServiceError:
    """A refusal with gRPC code ``code`` (a ``google.rpc.Code`` name)."""
    return P4RuntimeServiceError(code, message)
